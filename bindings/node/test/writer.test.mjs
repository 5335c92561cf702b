// SessionWriter: the library's writer from Node. Files are written where pi writes them, read
// back with our reader and, when it is installed, with pi's own SessionManager.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { asJson, codeOf, copyOf, loadPi, piInstalled, piSession, temporaryDirectory } from "./helpers.mjs";

const { SessionWriter } = piSession;
const dir = temporaryDirectory();

const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1767225600000 });
const assistant = (text) => ({
	role: "assistant",
	content: [{ type: "text", text }],
	api: "anthropic-messages",
	provider: "anthropic",
	model: "claude-sonnet-4-5",
	usage: {
		input: 10,
		output: 5,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 15,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	},
	stopReason: "stop",
	timestamp: 1767225601000,
});

test("create, append, read back", () => {
	const sessions = join(dir, "create");
	const writer = SessionWriter.create("/work/project", { sessionDir: sessions, pi: "1.5", id: "0001-test" });
	assert.equal(writer.sessionId, "0001-test");
	assert.equal(writer.cwd, "/work/project");
	assert.equal(writer.pi, "1.5.2");
	assert.equal(writer.isWritten, false, "pi writes nothing before the first conversation");
	assert.equal(writer.leafId, null);
	const first = writer.appendMessage(user("Fix the build"));
	assert.equal(writer.isWritten, true, "1.5.2 writes at the first user message");
	assert.ok(existsSync(writer.path));
	const second = writer.appendMessage(assistant("Done."));
	assert.equal(writer.leafId, second);
	const named = writer.append({ type: "session_info", name: "build fix" });
	assert.equal(writer.entryCount, 3);
	const lines = readFileSync(writer.path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
	assert.equal(lines.length, 4);
	assert.deepStrictEqual(lines[1].message, user("Fix the build"));
	assert.equal(lines[2].parentId, first);
	assert.equal(lines[3].id, named);
	assert.equal(writer.toJsonl(), readFileSync(writer.path, "utf8"));
	// Read back.
	const session = piSession.open(writer.path);
	assert.deepStrictEqual(
		session.context().messages.map((m) => m.role),
		["user", "assistant"],
	);
	assert.deepStrictEqual(writer.context(), session.context().messages);
	assert.deepStrictEqual(writer.session().context(), session.context());
	assert.equal(piSession.info(writer.path).name, "build fix");
	assert.equal(piSession.validate(writer.path, { strict: true }).files[0].valid, true);
});

test("open an existing session and append; branch; reset the leaf", () => {
	const path = join(dir, "existing.jsonl");
	writeFileSync(
		path,
		'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n' +
			'{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n',
	);
	const writer = SessionWriter.open(path, { pi: "0.87" });
	assert.equal(writer.leafId, "a");
	const b = writer.appendMessage(assistant("hello"));
	writer.branch("a");
	const c = writer.appendMessage(user("again"));
	const file = readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
	assert.deepStrictEqual(
		file.map((e) => [e.id, e.parentId]),
		[["s", undefined], ["a", null], [b, "a"], [c, "a"]],
	);
	writer.resetLeaf();
	assert.equal(writer.leafId, null);
	const root = writer.append({ type: "custom", customType: "note", data: { x: 1 } });
	assert.equal(JSON.parse(readFileSync(path, "utf8").trimEnd().split("\n").at(-1)).parentId, null);
	assert.equal(writer.leafId, root);
});

test("fork: one branch as a session of its own", () => {
	const writer = SessionWriter.create("/w", { sessionDir: join(dir, "fork"), pi: "0.87" });
	const a = writer.appendMessage(user("one"));
	writer.appendMessage(assistant("two"));
	writer.branch(a);
	writer.appendMessage(assistant("other"));
	const out = join(dir, "forked.jsonl");
	assert.equal(writer.fork(a, { out }), out);
	const forked = piSession.open(out, { pi: "0.87" });
	assert.deepStrictEqual(
		forked.context().messages.map((m) => m.content),
		[[{ type: "text", text: "one" }]],
	);
	assert.equal(codeOf(() => writer.fork("nope", { out: join(dir, "nope.jsonl") })), "entry-not-found");
	assert.equal(codeOf(() => writer.fork(a, { out })), "already-exists");
	// forkFrom: a copy under a new session id, for another cwd.
	const copy = SessionWriter.forkFrom(out, "/elsewhere", { sessionDir: join(dir, "fork-from"), pi: "0.87" });
	assert.equal(copy.cwd, "/elsewhere");
	assert.equal(readdirSync(join(dir, "fork-from")).length, 1);
	assert.equal(piSession.open(copy.path).header.parentSession, out);
});

test("in memory; refusals leave the writer as it was", () => {
	const writer = SessionWriter.inMemory("/w", { pi: "0.73" });
	assert.equal(writer.path, null);
	const a = writer.appendMessage(user("x"));
	assert.equal(codeOf(() => writer.append({ type: "message", parentId: "missing", message: user("y") })), "entry-not-found");
	assert.equal(codeOf(() => writer.append({ type: "message", id: a, message: user("y") })), "bad-entry");
	assert.equal(codeOf(() => writer.branch("missing")), "entry-not-found");
	assert.equal(codeOf(() => writer.appendMessage("text")), "ERR_INVALID_ARG_TYPE");
	assert.equal(codeOf(() => SessionWriter.create("/w", { sessionDir: dir, id: "../x" })), "invalid-session-id");
	assert.equal(writer.entryCount, 1);
	assert.equal(writer.leafId, a);
});

test("pi reads what the writer wrote", { skip: piInstalled("0.87") ? false : "pi 0.87.1 is not installed" }, async () => {
	const pi = await loadPi("0.87");
	const writer = SessionWriter.create("/w", { sessionDir: join(dir, "pi"), pi: "0.87" });
	writer.appendMessage(user("question"));
	writer.appendMessage(assistant("answer"));
	writer.append({ type: "thinking_level_change", thinkingLevel: "high" });
	const sm = pi.SessionManager.open(copyOf(writer.path));
	const { messages, thinkingLevel, model } = sm.buildSessionContext();
	assert.deepStrictEqual(asJson({ messages, thinkingLevel, model }), piSession.open(writer.path, { pi: "0.87" }).context());
	assert.equal(thinkingLevel, "high");
});
