// bench-write.mjs — the reference side of `cargo xtask bench writer`: pi's own SessionManager
// writing, timed inside the process (module loading excluded), printed as {"seconds": S}.
//
//   node bench-write.mjs append N DIR [--pi 0.73|0.87|1.5]
//       SessionManager.create("/work", DIR), a user and an assistant message (the file is
//       created), then N messages more (user and assistant in turn): pi's appendMessage, one
//       appendFileSync per entry. Timed: the N appends.
//   node bench-write.mjs open FILE [--pi 0.73|0.87|1.5]
//       SessionManager.open(FILE), then one appended message. Timed: both. FILE must be a
//       version-3 session (pi rewrites older ones); the appended line stays in it.
//   node bench-write.mjs serialize N
//       The floor: JSON.stringify of the message entry (built once) N times, nothing else.
//
// The messages are those of crates/pi-session-bench/benches/write.rs (a prompt and a ~1 KB
// answer), so both sides write the same bytes per entry.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { normalizePi, piCore } from "./pi-versions.mjs";

const answer = "The build fails because the linker cannot find `libssl`; install it and retry. ".repeat(12);
const USER = { role: "user", content: "Why does the build fail?", timestamp: 1775030400000 };
const ASSISTANT = {
	role: "assistant",
	content: [{ type: "text", text: answer }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet",
	usage: { input: 1200, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 1500, cost: { input: 0.0036, output: 0.0045, cacheRead: 0, cacheWrite: 0, total: 0.0081 } },
	stopReason: "stop",
	timestamp: 1775030401000,
};

const argv = process.argv.slice(2);
let pi = "1.5";
const rest = [];
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === "--pi") pi = argv[++i];
	else rest.push(argv[i]);
}
const v = normalizePi(pi, "1.5");
const { SessionManager } = await import(pathToFileURL(join(piCore(v), "session-manager.js")).href);
const [mode, a, b] = rest;
let seconds;
if (mode === "append") {
	const n = Number(a);
	const sm = SessionManager.create("/work", b);
	sm.appendMessage(USER);
	sm.appendMessage(ASSISTANT);
	const start = process.hrtime.bigint();
	for (let i = 0; i < n; i++) sm.appendMessage(i % 2 === 0 ? USER : ASSISTANT);
	seconds = Number(process.hrtime.bigint() - start) / 1e9;
} else if (mode === "open") {
	const start = process.hrtime.bigint();
	const sm = SessionManager.open(a);
	sm.appendMessage(USER);
	seconds = Number(process.hrtime.bigint() - start) / 1e9;
} else if (mode === "serialize") {
	// The floor: the message entry pi builds, serialized N times (JSON.stringify), nothing else.
	const n = Number(a);
	const entries = [USER, ASSISTANT].map((message) => ({
		type: "message",
		id: "a1b2c3d4",
		parentId: "0f1e2d3c",
		timestamp: "2026-04-01T08:00:00.000Z",
		message,
	}));
	let bytes = 0;
	const start = process.hrtime.bigint();
	for (let i = 0; i < n; i++) bytes += JSON.stringify(entries[i % 2]).length;
	seconds = Number(process.hrtime.bigint() - start) / 1e9;
	if (bytes < 0) process.exit(1);
} else {
	process.stderr.write("usage: node bench-write.mjs append N DIR | open FILE | serialize N [--pi 0.73|0.87|1.5]\n");
	process.exit(2);
}
process.stdout.write(`${JSON.stringify({ seconds })}\n`);
