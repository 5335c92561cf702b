// Hostile inputs: each gives an Error with a code (or the answer pi gives), never a crash or a
// hang; a panic in the native code surfaces as an Error (ERR_PANIC) and the process goes on.
// Reads that could block (a FIFO) run in a child process with a timeout, so that a hang fails
// the test instead of stopping the suite.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
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
	assert.equal(codeOf(() => piSession.open(missing)), "not-found");
	assert.equal(codeOf(() => piSession.info(missing)), "not-found");
	// pi's loadEntriesFromFile: `if (!existsSync(filePath)) return [];`
	assert.deepStrictEqual(piSession.loadEntriesFromFile(missing), []);
	const report = piSession.validate(missing);
	assert.equal(report.files[0].valid, false);
	assert.match(report.files[0].readError, /No such file/);
	assert.equal(codeOf(() => piSession.SessionWriter.forkFrom(missing, "/w", { sessionDir: dir })), "not-a-session");
});

test("a directory", () => {
	const sub = join(dir, "a-directory.jsonl");
	mkdirSync(sub);
	assert.equal(codeOf(() => piSession.open(sub)), "is-a-directory");
	assert.equal(codeOf(() => piSession.info(sub)), "is-a-directory");
	assert.equal(codeOf(() => piSession.loadEntriesFromFile(sub)), "is-a-directory");
	assert.equal(codeOf(() => piSession.SessionWriter.open(sub)), "not-a-file");
});

test("a 0-byte file and empty bytes", () => {
	const empty = file("empty.jsonl", "");
	assert.equal(codeOf(() => piSession.open(empty)), "PS0101");
	assert.equal(codeOf(() => piSession.open(Buffer.alloc(0))), "PS0101");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(empty), []);
	assert.equal(piSession.info(empty), null);
	assert.equal(piSession.validate(empty).files[0].valid, false);
});

test("invalid UTF-8", () => {
	// Nothing but bytes that are not UTF-8: no JSON line, no header.
	const garbage = file("garbage.jsonl", Buffer.from([0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a]));
	assert.equal(codeOf(() => piSession.open(garbage)), "PS0101");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(garbage), []);
	// Inside a string: pi reads U+FFFD, and so do we.
	const bytes = Buffer.from(`${HEADER}\n${message("a", null, "ab")}\n`);
	bytes[bytes.indexOf("ab") + 1] = 0xff;
	const lossy = file("lossy.jsonl", bytes);
	assert.equal(piSession.open(lossy).context().messages[0].content, "a\ufffd");
	assert.equal(piSession.loadEntriesFromFile(lossy)[1].message.content, "a\ufffd");
});

test("a parent cycle: PS0213 where pi loops forever", () => {
	const cycle = file("cycle.jsonl", `${HEADER}\n${message("a", "b", "one")}\n${message("b", "a", "two")}\n`);
	const session = piSession.open(cycle);
	assert.equal(codeOf(() => session.context()), "PS0213");
	assert.equal(codeOf(() => session.llm()), "PS0213");
	assert.ok(Array.isArray(session.tree()), "the tree is bounded");
	const entries = piSession.loadEntriesFromFile(cycle);
	assert.equal(codeOf(() => piSession.buildSessionContext(entries.slice(1), "b")), "PS0213");
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
	assert.equal(codeOf(() => piSession.open(path)), "PS0102");
	assert.deepStrictEqual(piSession.loadEntriesFromFile(path), []);
	// pi 0.73.1 throws a TypeError on a `null` first value.
	const nullFirst = file("null-first.jsonl", `null\n${HEADER}\n`);
	assert.throws(() => piSession.loadEntriesFromFile(nullFirst, { pi: "0.73" }), TypeError);
	assert.equal(codeOf(() => piSession.loadEntriesFromFile(nullFirst, { pi: "0.73" })), "type-error");
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
		{ code: "PS0101" },
	);
	// A writer of garbage.
	assert.deepStrictEqual(
		child(`${WRITE_THEN("not json\n[1,2]\n")}
try { p.open(fifo); console.log(JSON.stringify({ ok: true })) } catch (e) { console.log(JSON.stringify({ code: e.code })) }`, fifo),
		{ code: "PS0102" },
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

test("a file truncated while it is read: an answer or EIO, never a signal", { skip: process.platform === "win32" }, () => {
	// 40 MB: mapped, and long enough to be cut while the loader is in it.
	const lines = [HEADER];
	let parent = null;
	for (let i = 0; lines.length < 20_000; i++) {
		const id = `m${i}`;
		lines.push(message(id, parent, "x".repeat(2000)));
		parent = id;
	}
	const source = file("large.jsonl", `${lines.join("\n")}\n`);
	for (const delay of [0, 2, 5, 10, 20, 40, 80]) {
		const path = join(dir, `shrinking-${delay}.jsonl`);
		writeFileSync(path, readFileSync(source));
		// The child starts loading; a shell cuts the file to 4 KiB `delay` ms later.
		const outcome = child(
			`const { spawn } = require("node:child_process");
spawn("sh", ["-c", 'sleep "$0"; truncate -s 4096 "$1"', String(${delay} / 1000), fifo], { stdio: "ignore" });
const out = {};
for (const [name, run] of [["open", () => p.open(fifo).context().messages.length], ["validate", () => p.validate(fifo).files[0].readError ?? "ok"], ["stats", () => p.stats(fifo).errors.length]]) {
	try { out[name] = run(); } catch (e) { out[name] = e.code; }
}
console.log(JSON.stringify(out));`,
			path,
			60_000,
		);
		// Loaded whole before the cut, or after it (the 4 KiB left hold one message), or the
		// shrink reported as EIO; never what a read past the new end would give.
		assert.ok([lines.length - 1, 1, "io"].includes(outcome.open), JSON.stringify(outcome));
		assert.ok(["ok", "io"].includes(outcome.validate) || /shr|changed/.test(outcome.validate), JSON.stringify(outcome));
		assert.ok([0, 1].includes(outcome.stats), JSON.stringify(outcome));
	}
});

test("an answer longer than V8's longest string is ERR_STRING_TOO_LONG, and the process goes on", { timeout: 300_000 }, () => {
	// One user message of 540 MiB: its context is more JSON text than one V8 string holds.
	const path = join(dir, "huge-message.jsonl");
	const fd = openSync(path, "w");
	writeSync(fd, `${HEADER}\n{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"`);
	const chunk = Buffer.alloc(1 << 20, "a");
	for (let i = 0; i < 540; i++) writeSync(fd, chunk);
	writeSync(fd, `","timestamp":1}}\n`);
	closeSync(fd);
	const outcome = child(
		`const out = {};
const s = p.open(fifo);
for (const [name, run] of [["context", () => s.context()], ["entries", () => s.entries()], ["llm", () => s.llm()]]) {
	try { run(); out[name] = "ok"; } catch (e) { out[name] = e.code; out.message = e.message; }
}
out.tree = s.tree().length;
console.log(JSON.stringify(out));`,
		path,
		240_000,
	);
	rmSync(path);
	assert.equal(outcome.context, "ERR_STRING_TOO_LONG", JSON.stringify(outcome));
	assert.equal(outcome.entries, "ERR_STRING_TOO_LONG");
	assert.equal(outcome.llm, "ERR_STRING_TOO_LONG");
	assert.match(outcome.message, /the messages is 566 MB of JSON text, more than the longest string V8 can hold/);
	assert.equal(outcome.tree, 1);
});
