#!/usr/bin/env node
// bench-ref.mjs — the reference side of `cargo xtask bench compare`: what pi does to resume a
// session, timed as a whole process by the caller.
//
// Usage: node bench-ref.mjs FILE [--pi 0.73|0.87|1.5]
//
//   SessionManager.open(FILE) + buildSessionContext(), then
//   JSON.stringify({messages, thinkingLevel, model}) + "\n" written to standard output
//   (the caller sends it to /dev/null; the bytes are the same as `pi-ref.mjs context FILE`
//   and `pi-session context FILE` print).
//
// FILE is opened in place: pi rewrites a file it migrates (v1/v2) or whose header is invalid,
// so pass a COPY (the caller copies outside the timed run). Version-3 files are not rewritten.
//
// Like pi-ref.mjs, the pinned pi (conformance/reference/package-lock.json, or vendor/ for
// 1.5.2: pi-versions.mjs) is imported by file path (dist/core/session-manager.js) so that the
// rest of the agent is never loaded: the timed work is the module import, reading, parsing,
// indexing and context building.

import { writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { normalizePi, piCore } from "./pi-versions.mjs";

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
let core;
try {
	if (file === null) throw new Error("no FILE");
	core = piCore(normalizePi(pi, "0.73"));
} catch (e) {
	console.error(`bench-ref.mjs: ${e.message}\nusage: node bench-ref.mjs FILE [--pi 0.73|0.87|1.5]`);
	process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);

const sm = SessionManager.open(file);
const result = sm.buildSessionContext();
const out = `${JSON.stringify({ messages: result.messages, thinkingLevel: result.thinkingLevel, model: result.model })}\n`;
// writeSync in a loop: process.stdout.write may be asynchronous for pipes and files. A pipe
// may be non-blocking (pi 1.5.2's module hooks run a loader thread, after which Node leaves
// standard output so): EAGAIN waits a millisecond and writes again.
const buf = Buffer.from(out);
const pause = new Int32Array(new SharedArrayBuffer(4));
let off = 0;
while (off < buf.length) {
	try {
		off += writeSync(1, buf, off, buf.length - off);
	} catch (e) {
		if (e.code !== "EAGAIN") throw e;
		Atomics.wait(pause, 0, 0, 1);
	}
}
