// Hostile inputs: each gives an Error with a code (or the answer pi gives), never a crash or a
// hang; a panic in the native code surfaces as an Error (ERR_PANIC) and the process goes on.
// Reads that could block (a FIFO) run in a child process with a timeout, so that a hang fails
// the test instead of stopping the suite.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { codeOf, packageDir, piSession, temporaryDirectory } from "./helpers.mjs";

const dir = temporaryDirectory();
const HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}';
const message = (id, parentId, text) =>
	JSON.stringify({
		type: "message",
		id,
		parentId,
		timestamp: "2026-01-01T00:00:01.000Z",
		message: { role: "user", content: text, timestamp: 1 },
	});

function file(name, content) {
	const path = join(dir, name);
	writeFileSync(path, content);
	return path;
}

test("a missing file", () => {
	const missing = join(dir, "missing.jsonl");
	assert.equal(codeOf(() => piSession.open(missing)), "ENOENT");
	assert.equal(codeOf(() => piSession.info(missing)), "ENOENT");
	// pi's loadEntriesFromFile: `if (!existsSync(filePath)) return [];`
	assert.deepStrictEqual(piSession.loadEntriesFromFile(missing), []);
	const report = piSession.validate(missing);
	assert.equal(report.files[0].valid, false);
	assert.match(report.files[0].readError, /No such file/);
	assert.equal(codeOf(() => piSession.SessionWriter.forkFrom(missing, "/w", { sessionDir: dir })), "ERR_NOT_A_SESSION");
});

test("a directory", () => {
	const sub = join(dir, "a-directory.jsonl");
	mkdirSync(sub);
	assert.equal(codeOf(() => piSession.open(sub)), "EISDIR");
	assert.equal(codeOf(() => piSession.info(sub)), "EISDIR");
	assert.equal(codeOf(() => piSession.loadEntriesFromFile(sub)), "EISDIR");
	assert.equal(codeOf(() => piSession.SessionWriter.open(sub)), "ERR_NOT_A_FILE");
});

test("a 0-byte file and empty bytes", () => {
	const empty = file("empty.jsonl", "");
	assert.equal(codeOf(() => piSession.open(empty)), "ERR_EMPTY_SESSION");
	assert.equal(codeOf(() => piSession.open(Buffer.alloc(0))), "ERR_EMPTY_SESSION");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(empty), []);
	assert.equal(piSession.info(empty), null);
	assert.equal(piSession.validate(empty).files[0].valid, false);
});

test("invalid UTF-8", () => {
	// Nothing but bytes that are not UTF-8: no JSON line, no header.
	const garbage = file("garbage.jsonl", Buffer.from([0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a]));
	assert.equal(codeOf(() => piSession.open(garbage)), "ERR_EMPTY_SESSION");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(garbage), []);
	// Inside a string: pi reads U+FFFD, and so do we.
	const bytes = Buffer.from(`${HEADER}\n${message("a", null, "ab")}\n`);
	bytes[bytes.indexOf("ab") + 1] = 0xff;
	const lossy = file("lossy.jsonl", bytes);
	assert.equal(piSession.open(lossy).context().messages[0].content, "a\ufffd");
	assert.equal(piSession.loadEntriesFromFile(lossy)[1].message.content, "a\ufffd");
});

test("a parent cycle: ERR_PARENT_CYCLE where pi loops forever", () => {
	const cycle = file("cycle.jsonl", `${HEADER}\n${message("a", "b", "one")}\n${message("b", "a", "two")}\n`);
	const session = piSession.open(cycle);
	assert.equal(codeOf(() => session.context()), "ERR_PARENT_CYCLE");
	assert.equal(codeOf(() => session.llm()), "ERR_PARENT_CYCLE");
	assert.ok(Array.isArray(session.tree()), "the tree is bounded");
	const entries = piSession.loadEntriesFromFile(cycle);
	assert.equal(codeOf(() => piSession.buildSessionContext(entries.slice(1), "b")), "ERR_PARENT_CYCLE");
	assert.equal(piSession.validate(cycle).files[0].verdict.piLoadable, false);
});

test("a value nested a million levels deep", () => {
	const depth = 1_000_000;
	const deep = `${"[".repeat(depth)}${"]".repeat(depth)}`;
	const line = `{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":${deep},"timestamp":1}}`;
	const path = file("deep.jsonl", `${HEADER}\n${line}\n`);
	const session = piSession.open(path);
	assert.equal(session.context().messages.length, 1);
	assert.equal(session.entries().length, 1);
	assert.equal(piSession.loadEntriesFromFile(path).length, 2);
	assert.ok(piSession.validate(path).files[0].diagnostics.some((d) => d.code === "PS0010"));
});

test("a header that is not one", () => {
	const path = file("not-header.jsonl", `${message("a", null, "x")}\n`);
	assert.equal(codeOf(() => piSession.open(path)), "ERR_INVALID_HEADER");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(path), []);
	// pi 0.73.1 throws a TypeError on a `null` first value.
	const nullFirst = file("null-first.jsonl", `null\n${HEADER}\n`);
	assert.throws(() => piSession.loadEntriesFromFile(nullFirst, { pi: "0.73" }), TypeError);
	assert.equal(codeOf(() => piSession.loadEntriesFromFile(nullFirst, { pi: "0.73" })), "ERR_PI_TYPE_ERROR");
});

test("bad arguments are TypeErrors with Node's codes", () => {
	assert.equal(codeOf(() => piSession.open(42)), "ERR_INVALID_ARG_TYPE");
	assert.throws(() => piSession.open(42), TypeError);
	assert.equal(codeOf(() => piSession.open(Buffer.from(HEADER), { pi: "2.0" })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.open(Buffer.from(HEADER), { pi: 73 })), "ERR_INVALID_ARG_TYPE");
	assert.equal(codeOf(() => piSession.open(Buffer.from(HEADER), { ids: "counting" })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.validate(["-"])), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.buildSessionContext("x")), "ERR_INVALID_ARG_TYPE");
	assert.equal(codeOf(() => new piSession.Session()), "ERR_ILLEGAL_CONSTRUCTOR");
	assert.equal(codeOf(() => piSession.open(Buffer.from(HEADER)).context({ leaf: 5 })), "ERR_INVALID_ARG_TYPE");
});

test("a panic surfaces as an Error, and the process goes on", () => {
	assert.equal(codeOf(() => piSession.__panicForTest()), "ERR_PANIC");
	assert.equal(codeOf(() => piSession.__panicForTest()), "ERR_PANIC");
	assert.equal(piSession.open(Buffer.from(`${HEADER}\n${message("a", null, "x")}\n`)).context().messages.length, 1);
});

/** Runs `script` in a child Node (the package as `p`, `fifo` its path), at most `ms`. */
function child(script, fifo, ms = 20_000) {
	const run = spawnSync(process.execPath, ["-e", `const p = require(${JSON.stringify(packageDir)}); const fifo = ${JSON.stringify(fifo)};\n${script}`], {
		timeout: ms,
		encoding: "utf8",
	});
	assert.equal(run.signal, null, `the child hung (killed after ${ms} ms): ${run.stderr}`);
	assert.equal(run.status, 0, run.stderr);
	return JSON.parse(run.stdout);
}

/** The child's code: a writer process writes `content` into the FIFO, then the child opens it. */
const WRITE_THEN = (content) => `
const { spawn } = require("node:child_process");
spawn("sh", ["-c", 'printf "%s" "$0" > "$1"', ${JSON.stringify(content)}, fifo], { stdio: "ignore" });
`;

test("a FIFO is read as a stream to its end, in a child with a timeout", { skip: process.platform === "win32" }, () => {
	const fifo = join(dir, "fifo.jsonl");
	execFileSync("mkfifo", [fifo]);
	// A writer that writes nothing: an empty session.
	assert.deepStrictEqual(
		child(`${WRITE_THEN("")}
try { p.open(fifo); console.log(JSON.stringify({ ok: true })) } catch (e) { console.log(JSON.stringify({ code: e.code })) }`, fifo),
		{ code: "ERR_EMPTY_SESSION" },
	);
	// A writer of garbage.
	assert.deepStrictEqual(
		child(`${WRITE_THEN("not json\n[1,2]\n")}
try { p.open(fifo); console.log(JSON.stringify({ ok: true })) } catch (e) { console.log(JSON.stringify({ code: e.code })) }`, fifo),
		{ code: "ERR_INVALID_HEADER" },
	);
	// A writer of a session: read whole.
	assert.deepStrictEqual(
		child(`${WRITE_THEN(`${HEADER}\n${message("a", null, "through a pipe")}\n`)}
console.log(JSON.stringify(p.open(fifo).context().messages.map((m) => m.content)))`, fifo),
		["through a pipe"],
	);
	// The drop-in and the validator read it too.
	assert.deepStrictEqual(
		child(`${WRITE_THEN(`${HEADER}\n`)}
console.log(JSON.stringify(p.loadEntriesFromFile(fifo).length))`, fifo),
		1,
	);
});
