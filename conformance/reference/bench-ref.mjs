#!/usr/bin/env node
// bench-ref.mjs — the reference side of `cargo xtask bench compare`: what pi does to resume a
// session, timed as a whole process by the caller.
//
// Usage: node bench-ref.mjs FILE [--pi 0.73|0.87]
//
//   SessionManager.open(FILE) + buildSessionContext(), then
//   JSON.stringify({messages, thinkingLevel, model}) + "\n" written to standard output
//   (the caller sends it to /dev/null; the bytes are the same as `pi-ref.mjs context FILE`
//   and `pi-session context FILE` print).
//
// FILE is opened in place: pi rewrites a file it migrates (v1/v2) or whose header is invalid,
// so pass a COPY (the caller copies outside the timed run). Version-3 files are not rewritten.
//
// Like pi-ref.mjs, the pinned pi (conformance/reference/package-lock.json) is imported by file
// path (dist/core/session-manager.js) so that the rest of the agent is never loaded: the
// timed work is the module import, reading, parsing, indexing and context building.

import { writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const PI_PACKAGES = {
	"0.73": "@mariozechner/pi-coding-agent", // 0.73.1
	"0.87": "@earendil-works/pi-coding-agent", // 0.87.1
};

const args = process.argv.slice(2);
let file = null;
let pi = "0.73";
for (let i = 0; i < args.length; i++) {
	if (args[i] === "--pi") pi = args[++i];
	else if (file === null) file = args[i];
	else {
		console.error(`bench-ref.mjs: unexpected argument ${args[i]}`);
		process.exit(2);
	}
}
if (file === null || !(pi in PI_PACKAGES)) {
	console.error("usage: node bench-ref.mjs FILE [--pi 0.73|0.87]");
	process.exit(2);
}

const here = dirname(fileURLToPath(import.meta.url));
const core = join(here, "node_modules", PI_PACKAGES[pi], "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);

const sm = SessionManager.open(file);
const result = sm.buildSessionContext();
const out = `${JSON.stringify({ messages: result.messages, thinkingLevel: result.thinkingLevel, model: result.model })}\n`;
// writeSync in a loop: process.stdout.write may be asynchronous for pipes and files.
const buf = Buffer.from(out);
let off = 0;
while (off < buf.length) off += writeSync(1, buf, off, buf.length - off);
