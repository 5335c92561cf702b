#!/usr/bin/env node
// adapter.mjs — the real pi as an implementation of the conformance protocol
// (conformance/README.md): `node adapter.mjs OP [--leaf ID] [--pi 0.73|0.87] [--mtime MS]`,
// the session on stdin, the output on stdout; exit status 1 when pi throws.
//
// It writes stdin to a temporary file and runs the same code as `pi-ref.mjs` (`run`), so the
// corpus's expected outputs and this adapter cannot drift apart. pi hangs on parent cycles and
// rewrites files without a valid header: those are the `divergence/` cases, which pi fails.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "./pi-ref.mjs";

function parse(argv) {
	const [op, ...rest] = argv;
	const req = { op: op === "llm" ? "context" : op, llm: op === "llm", leaf: null, pi: "0.73" };
	for (let i = 0; i < rest.length; i++) {
		const value = rest[i + 1];
		if (value === undefined) throw new Error(`${rest[i]} needs a value`);
		if (rest[i] === "--leaf") req.leaf = value;
		else if (rest[i] === "--pi") req.pi = value;
		else if (rest[i] === "--mtime") req.mtime = Number(value);
		else throw new Error(`unknown option ${rest[i]}`);
		i++;
	}
	return req;
}

async function readStdin() {
	const chunks = [];
	for await (const chunk of process.stdin) chunks.push(chunk);
	return Buffer.concat(chunks);
}

const dir = mkdtempSync(join(tmpdir(), "pi-adapter-"));
try {
	const req = parse(process.argv.slice(2));
	if (!["context", "migrate", "tree", "info"].includes(req.op)) throw new Error(`unknown operation ${process.argv[2]}`);
	req.file = join(dir, "session.jsonl");
	writeFileSync(req.file, await readStdin());
	const result = await run(req);
	process.stdout.write(result.output);
} catch (e) {
	process.stderr.write(`adapter: ${e instanceof Error ? e.message : String(e)}\n`);
	process.exitCode = 1;
} finally {
	rmSync(dir, { recursive: true, force: true });
}
