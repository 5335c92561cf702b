#!/usr/bin/env node
// pi-load.mjs — what the REAL pi does when it opens a session file: the evidence behind the
// validator's "pi-loadable" verdict (conformance/validate/*/pi.json).
//
// Usage: node pi-load.mjs [--pi 0.73|0.87] FILE...
// Prints one JSON line per FILE: {"file":…,"loadable":bool,"what":[…]} where `what` lists, in
// words, everything pi did that loses, rewrites or refuses data:
//   - "dropped N line(s)": lines pi's loader did not keep (not JSON; 0.87.1: falsy values),
//     counted as the non-blank lines of pi's own split minus the values `loadEntriesFromFile`
//     returned;
//   - "rewrote the file" / "overwrote the file with a new session": SessionManager.open() changed
//     the (copied) file (0.87.1 ending an unterminated last line with "\n" is not counted);
//   - "threw on open: …" / "threw building the context: …";
//   - "hung building the context": buildSessionContext() did not return within the timeout
//     (run in a child process: `node pi-ref.mjs context`, which works on its own copy);
//   - "hid N entr(y|ies) from its tree (line …)": entries pi loaded that its tree (getTree, what
//     /tree shows and navigates) does not hold, neither the entry nor a byte-identical copy —
//     the earlier of two entries sharing an id, entries in a parent cycle (`node pi-ref.mjs
//     hidden`, in a child);
//   - "hung building its tree": getTree() did not return within the timeout.
// `loadable` is true when `what` is empty: pi reads everything in the file. `resumes` says whether pi resumes the conversation
// the file holds: it opened the file and built its context (no overwrite, throw or hang), and
// that context equals `buildSessionContext(entries, ID, byId)` for the file's last entry with a
// string id (what its writer appended last; true when there is none). The FILE itself is never
// modified.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadEntriesCount, run } from "./pi-ref.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const TIMEOUT_MS = 10_000;

/** pi's line split: 0.73.1 trims the whole text; both skip lines whose trim() is empty. */
function nonBlankLines(text, pi) {
	const body = pi === "0.73" ? text.trim() : text;
	return body.split("\n").filter((line) => line.trim() !== "").length;
}

/** `node pi-ref.mjs context FILE [--leaf ID]` in a child, with the timeout (cycles hang pi). */
function context(file, pi, leaf) {
	const args = [join(HERE, "pi-ref.mjs"), "context", file, "--pi", pi];
	if (leaf !== null) args.push("--leaf", leaf);
	return spawnSync(process.execPath, args, { timeout: TIMEOUT_MS, encoding: "utf8", maxBuffer: 1 << 30 });
}

/** `node pi-ref.mjs hidden FILE` in a child, with the timeout (getTree can loop forever). */
function hidden(file, pi) {
	const args = [join(HERE, "pi-ref.mjs"), "hidden", file, "--pi", pi];
	return spawnSync(process.execPath, args, { timeout: TIMEOUT_MS, encoding: "utf8", maxBuffer: 1 << 30 });
}

/** The id of the file's last entry (a non-header object line) whose id is a string. */
function lastEntryId(text) {
	let id = null;
	for (const line of text.split("\n")) {
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			continue;
		}
		if (value && typeof value === "object" && !Array.isArray(value) && value.type !== "session" && typeof value.id === "string") {
			id = value.id;
		}
	}
	return id;
}

async function observe(file, pi) {
	const what = [];
	const text = readFileSync(file, "utf8");
	let values = null;
	let migrated = null;
	try {
		migrated = await run({ op: "migrate", file, pi });
	} catch (e) {
		// The message names the file: keep only its base name, so that pi.json does not depend
		// on where the repository is.
		const message = (e instanceof Error ? e.message : String(e)).split(file).join(basename(file));
		what.push(`threw on open: ${message}`);
	}
	if (migrated) {
		const original = readFileSync(file);
		const output = Buffer.isBuffer(migrated.output) ? migrated.output : Buffer.from(migrated.output, "utf8");
		const onlyNewline = output.length === original.length + 1 && output.subarray(0, original.length).equals(original);
		if (migrated.invalidHeader) what.push("overwrote the file with a new session");
		else if (migrated.rewritten && !onlyNewline) what.push("rewrote the file");
		// Values pi's loader kept (header included), on a fresh copy.
		values = await loadEntriesCount(file, pi).catch(() => null);
	}
	if (values !== null && !migrated.invalidHeader) {
		const dropped = nonBlankLines(text, pi) - values;
		if (dropped > 0) what.push(`dropped ${dropped} line${dropped === 1 ? "" : "s"}`);
	}
	let resumes = false;
	if (migrated && !migrated.invalidHeader) {
		const child = context(file, pi, null);
		if (child.error?.code === "ETIMEDOUT" || child.signal) what.push("hung building the context");
		else if (child.status !== 0) {
			const message = child.stderr.trim().replace(/^pi-ref: pi threw: /, "").split(file).join(basename(file));
			what.push(`threw building the context: ${message}`);
		} else {
			const own = lastEntryId(text);
			const meant = own === null ? child : context(file, pi, own);
			resumes = meant.status === 0 && !meant.signal && meant.stdout === child.stdout;
		}
		const tree = hidden(file, pi);
		if (tree.error?.code === "ETIMEDOUT" || tree.signal) what.push("hung building its tree");
		else if (tree.status === 0) {
			const lines = JSON.parse(tree.stdout).hidden;
			if (lines.length > 0) {
				const n = lines.length;
				what.push(`hid ${n} entr${n === 1 ? "y" : "ies"} from its tree (line${n === 1 ? "" : "s"} ${lines.join(", ")})`);
			}
		}
	}
	return { file, loadable: what.length === 0, what, resumes };
}

async function main() {
	const argv = process.argv.slice(2);
	let pi = "0.73";
	const files = [];
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--pi") pi = argv[++i];
		else files.push(argv[i]);
	}
	if (files.length === 0) {
		process.stderr.write("usage: node pi-load.mjs [--pi 0.73|0.87] FILE...\n");
		process.exitCode = 2;
		return;
	}
	for (const file of files) process.stdout.write(`${JSON.stringify(await observe(file, pi))}\n`);
}

await main();
