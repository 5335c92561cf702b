// pi-write.mjs — runs a writer scenario through pi's own SessionManager and keeps the file pi
// wrote: the reference for writing sessions (the writer half of the conformance suite).
//
//   node pi-write.mjs [--pi 0.73|0.87|1.5] SCRIPT.ndjson OUT.jsonl
//   node pi-write.mjs [--pi 0.73|0.87|1.5] OUT.jsonl < SCRIPT.ndjson
//
// The second form is the writer protocol of `pi-session conformance writer --impl
// "node conformance/reference/pi-write.mjs"` (pi itself as a writer under test).
//
// SCRIPT is NDJSON, one operation per line: the format (every operation and field, the ids and
// clock it gives, the output rules, the profiles) is documented in ../writers/SCRIPT.md, with a
// JSON Schema of a line in ../writers/script.schema.json.
//
// OUT receives the last export when the script has one, else the file of the session it ends in, exactly as pi left it in its
// session directory (a temporary one); when pi never wrote it (no conversation yet), OUT is not
// created. Standard output
// gets one JSON line: {"written": bool, "returned": [what each append returned: its id, or for
// appendUsage the entry], "leaf": id|null}.
// A failing operation prints {"error": "...", "line": N} and exits 1.
//
// Each operation calls pi's public SessionManager method of the same name with the given
// arguments, in the given order; nothing of pi's is changed but the two sources of variation,
// replaced before pi runs: `crypto.randomUUID` (from the queue of given ids) and the global
// `Date` (a clock set per operation).
import { readFileSync, writeFileSync } from "node:fs";
import { normalizePi } from "./pi-versions.mjs";
import { loadPi, runScript } from "./write-driver.mjs";

async function main() {
	const argv = process.argv.slice(2);
	let pi = "1.5";
	const files = [];
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--pi") pi = argv[++i];
		else files.push(argv[i]);
	}
	if (files.length !== 1 && files.length !== 2) {
		process.stderr.write("usage: node pi-write.mjs [--pi 0.73|0.87|1.5] [SCRIPT.ndjson] OUT.jsonl\n");
		process.exit(2);
	}
	// One file: the script comes on stdin (file descriptor 0).
	const [scriptPath, outPath] = files.length === 2 ? files : [0, files[0]];
	const v = normalizePi(pi, "1.5");
	const result = runScript(await loadPi(v), v, readFileSync(scriptPath, "utf8"));
	if (result.error !== undefined) {
		process.stdout.write(`${JSON.stringify(result)}\n`);
		process.exitCode = 1;
		return;
	}
	if (result.file) writeFileSync(outPath, result.file);
	process.stdout.write(`${JSON.stringify({ written: result.file !== null, returned: result.returned, leaf: result.leaf })}\n`);
}

await main();
