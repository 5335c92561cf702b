#!/usr/bin/env node
// gen-sessions.mjs — random pi session files produced by driving the REAL pi 0.73.1 SessionManager.
//
//   node scripts/diff/gen-sessions.mjs --seed S --count N --out DIR [--no-hang] [--variant-rate R]
//
// Writes, for i = 0 … N-1:
//   DIR/<seed>-<i>.jsonl      the session file
//   DIR/<seed>-<i>.args.json  {"leaf": "<id>"} for a fraction of files (else {})
//   DIR/<seed>-<i>.meta.json  {"variants": [...hand edits applied...], "ops": <api calls>, ...}
//
// How a file is made:
//   1. SessionManager.create(cwd, workDir) (or newSession() on the previous manager, sometimes with a
//      custom id / parentSession), then a random mix of the public append/branch API calls
//      (appendMessage with every role and content-block shape, appendThinkingLevelChange,
//      appendModelChange, appendCompaction, branch, branchWithSummary, resetLeaf, appendLabelChange,
//      appendSessionInfo, appendCustomEntry, appendCustomMessageEntry). pi only writes the file once an
//      assistant message exists, so one is forced at the end if none was appended; the file's
//      existence is checked.
//   2. For a fraction of files (chosen by the PRNG), hand edits that pi's writer never produces:
//      CRLF, BOM, blank/whitespace lines, malformed interior lines, trailing partial line, missing
//      final newline, duplicate JSON keys, 1e400 / 12345678901234567890 / -0 / … numbers, lone
//      surrogate escapes, depth-1000 nesting in details, odd timestamps (no Z, date-only, invalid,
//      non-string), integer-like keys in details, v1-shaped files (no ids, firstKeptEntryIndex
//      counting the header as 0), v2 files (version 2 + hookMessage role), odd header versions,
//      non-object lines, and (unless --no-hang) rare parent cycles / null messages on which pi
//      itself hangs or throws.
//
// Determinism: everything is driven by a seeded mulberry32 PRNG (no Math.random). Inside this
// process Date is replaced by a fake clock, and crypto.randomUUID / crypto.getRandomValues by
// PRNG-backed versions, so a given (seed, count) always produces byte-identical files.

import { createRequire, syncBuiltinESMExports } from "node:module";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { hashString, mulberry32, randomContent, seededRandom } from "../../conformance/reference/shared.mjs";

// ---------------------------------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------------------------------
// One stream per generated file (reseed), plus one for the patched globals (globalsRng).
const random = seededRandom();
const { chance, int, pick, weighted, hex, base64 } = random;

// ---------------------------------------------------------------------------------------------------
// Patched globals (before pi is imported)
// ---------------------------------------------------------------------------------------------------
// Ids: pi's generateId() is randomUUID().slice(0, 8); session ids are uuid v7 (getRandomValues+Date.now).
const globalsRng = { r: mulberry32(7) };
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
nodeCrypto.randomUUID = function prngRandomUUID() {
	const r = globalsRng.r;
	let s = "";
	for (let i = 0; i < 32; i++) s += "0123456789abcdef"[Math.floor(r() * 16)];
	return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
};
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = function prngGetRandomValues(arr) {
	const r = globalsRng.r;
	const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
	for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256);
	return arr;
};

// Fake clock: `new Date()` / Date.now() return `clock`, which only moves when tick() is called.
const RealDate = Date;
let clock = RealDate.UTC(2026, 0, 1);
class FakeDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(clock);
		else super(...args);
	}
	static now() {
		return clock;
	}
}
globalThis.Date = FakeDate;
function tick() {
	// ~15% of steps are 0 ms so that siblings sometimes share a timestamp (tests stable sorting).
	clock += chance(0.15) ? 0 : int(1, 4000);
}

// ---------------------------------------------------------------------------------------------------
// pi (0.73.1) import, by path
// ---------------------------------------------------------------------------------------------------
const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const PI_CORE = join(REPO, "conformance", "reference", "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
if (!existsSync(join(PI_CORE, "session-manager.js"))) {
	process.stderr.write(
		`gen-sessions: pi 0.73.1 not installed (${PI_CORE}).\nRun: (cd conformance/reference && npm ci)\n`,
	);
	process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(PI_CORE, "session-manager.js")).href);

// ---------------------------------------------------------------------------------------------------
// Content generators
// ---------------------------------------------------------------------------------------------------
const WORDS = [
	"the", "file", "session", "compaction", "branch", "tree", "fix", "bug", "test", "read", "write", "edit",
	"please", "why", "does", "this", "fail", "ok", "done", "refactor", "parser", "JSON", "Rust", "node",
	"summary", "context", "model", "token", "error", "retry",
];
const SPECIALS = [
	'"', "\\", "\n", "\t", "\r", "\u0000", "\u0001", "\u001f", "\u007f", "\u0080", "é", "ß", "日本語", "😀", "👩‍💻",
	"\u2028", "\u2029", "/", "</summary>", "<summary>", "`", "```", "\ufeff", "\u00a0", "e\u0301", "𝄞", "{}", "[]",
	"${x}", "%s", "\b", "\f", "\u000b",
];
// text(maxWords), textBlock(), anyValue(depth): a JSON-ish random value (for details/data/arguments),
// usage(): see randomContent in shared.mjs.
const piContent = randomContent(random, {
	words: WORDS,
	specials: SPECIALS,
	specialRate: 0.12,
	blanks: ["", " ", "x"],
	keys: ["a", "b", "path", "count", "nested", "x_y", "Z", "é"],
});
const { text, textBlock, anyValue } = piContent;
function imageBlock() {
	return { type: "image", data: base64(int(4, 40)), mimeType: pick(["image/png", "image/jpeg", "image/webp", "image/gif"]) };
}
const PROVIDERS = [
	["anthropic", ["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"], "anthropic-messages"],
	["openai", ["gpt-5", "gpt-4.1", "o3"], "openai-responses"],
	["google", ["gemini-2.5-pro", "gemini-2.5-flash"], "google-generative-ai"],
	["openrouter", ["z-ai/glm-4.6", "x-ai/grok-4"], "openai-completions"],
];
function usage() {
	const u = piContent.usage();
	if (chance(0.08)) delete u.totalTokens; // pre-2025-12 files
	return u;
}

// State shared by the message generators for one session.
let pendingToolCalls = [];

function userMessage() {
	let content;
	if (chance(0.5)) content = text(20);
	else {
		content = [];
		for (let i = int(0, 3); i > 0; i--) content.push(chance(0.75) ? { type: "text", text: text() } : imageBlock());
	}
	return { role: "user", content, timestamp: clock - int(0, 50) };
}
function assistantMessage() {
	const [provider, models, api] = pick(PROVIDERS);
	const content = [];
	const nBlocks = chance(0.07) ? 0 : int(1, 4);
	for (let i = 0; i < nBlocks; i++) {
		const kind = weighted([["text", 5], ["thinking", 3], ["redacted", 1], ["toolCall", 3]]);
		if (kind === "text") content.push(textBlock());
		else if (kind === "thinking") {
			const b = { type: "thinking", thinking: text(15) };
			if (chance(0.8)) b.thinkingSignature = base64(int(8, 60));
			content.push(b);
		} else if (kind === "redacted") {
			content.push({ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: base64(int(20, 80)), redacted: true });
		} else {
			const id = `${pick(["toolu_", "call_", "fc_"])}${hex(int(8, 20))}`;
			const name = pick(["bash", "read", "edit", "write", "grep", "ls"]);
			const args = name === "bash" ? { command: text(4), timeout: chance(0.5) ? int(1, 600) : undefined } : { path: pick(["src/main.rs", "./a b.txt", "/etc/hosts", "日本/語.md"]), extra: anyValue() };
			const b = { type: "toolCall", id, name, arguments: args };
			if (chance(0.08)) b.partialJson = `{"${pick(["command", "path"])}":"${pick(["ls", "src/ma", ""])}`;
			if (chance(0.08)) b.thoughtSignature = base64(24);
			content.push(b);
			pendingToolCalls.push({ id, name });
		}
	}
	const stopReason = weighted([["stop", 8], ["toolUse", 4], ["length", 1], ["error", 1], ["aborted", 1]]);
	const m = { role: "assistant", content };
	if (!chance(0.04)) m.api = api;
	if (!chance(0.04)) m.provider = provider;
	if (!chance(0.04)) m.model = pick(models);
	m.usage = usage();
	m.stopReason = stopReason;
	m.timestamp = clock - int(0, 3000);
	if ((stopReason === "error" || stopReason === "aborted") && chance(0.85)) {
		m.errorMessage = stopReason === "aborted" ? "Request was aborted" : pick(["500 Internal Server Error", "overloaded_error: Overloaded", "terminated", text(6)]);
	}
	if (chance(0.4)) m.responseId = `msg_${hex(24)}`;
	if (chance(0.05)) m.responseModel = `${m.model ?? "x"}-20250101`;
	return m;
}
function toolResultMessage() {
	const call = pendingToolCalls.length > 0 && chance(0.85) ? pendingToolCalls.shift() : { id: `toolu_${hex(10)}`, name: "bash" };
	const content = [];
	for (let i = chance(0.1) ? 0 : int(1, 2); i > 0; i--) content.push(chance(0.85) ? { type: "text", text: text(25) } : imageBlock());
	const m = { role: "toolResult", toolCallId: call.id, toolName: call.name, content };
	if (chance(0.35)) m.details = chance(0.5) ? { diff: text(8), firstChangedLine: int(1, 500) } : anyValue();
	m.isError = chance(0.15);
	m.timestamp = clock;
	return m;
}
function bashExecutionMessage() {
	const m = { role: "bashExecution", command: pick(["ls -la", "cargo test", "echo \"hi\" && false", "cat `x`", text(3)]) };
	m.output = chance(0.3) ? "" : text(20);
	const exit = weighted([["0", 4], ["1", 3], ["null", 2], ["absent", 2], ["127", 1]]);
	if (exit === "0") m.exitCode = 0;
	else if (exit === "1") m.exitCode = 1;
	else if (exit === "127") m.exitCode = 127;
	else if (exit === "null") m.exitCode = null;
	m.cancelled = chance(0.2);
	m.truncated = chance(0.3);
	if (chance(0.5)) m.fullOutputPath = `/tmp/pi-bash-${hex(8)}.log`;
	m.timestamp = clock;
	if (chance(0.25)) m.excludeFromContext = chance(0.8);
	return m;
}
function customRoleMessage() {
	const m = { role: "custom", customType: pick(["ext-note", "todo", "git-status"]) };
	m.content = chance(0.5) ? text(10) : [chance(0.8) ? { type: "text", text: text() } : imageBlock()];
	m.display = chance(0.5);
	if (chance(0.4)) m.details = anyValue();
	m.timestamp = clock;
	return m;
}
function oddRoleMessage() {
	return pick([
		() => ({ role: "hookMessage", customType: "legacy-hook", content: text(5), display: true, timestamp: clock }),
		() => ({ role: "system", content: text(5), timestamp: clock }),
		() => ({ role: "mystery", payload: anyValue(), timestamp: clock }),
		() => ({ role: "branchSummary", summary: text(5), fromId: "root", timestamp: clock }),
		() => ({ role: "compactionSummary", summary: text(5), tokensBefore: 10, timestamp: clock }),
		() => ({ role: "user", content: text(3), timestamp: clock, extra: "kept" }),
	])();
}
const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const NAMES = ["My session", "  padded name  ", "", "   ", "\tTabbed\n", "naïve 日本 😀", "refactor parser", "a\u2028b"];

// ---------------------------------------------------------------------------------------------------
// Driving the SessionManager
// ---------------------------------------------------------------------------------------------------
const CWDS = ["/home/user/proj", "/Users/a/b", "C:\\Users\\x\\repo", "/tmp/with space/é", "/"];

let prevManager = null;

function hasAssistant(sm) {
	return sm.getEntries().some((e) => e.type === "message" && e.message?.role === "assistant");
}

/** Create one session with the real SessionManager; returns { text, ops }. */
function driveSession(workDir) {
	pendingToolCalls = [];
	tick();
	let sm;
	if (prevManager && chance(0.25)) {
		sm = prevManager;
		const opts = weighted([
			[undefined, 4],
			[{ id: `custom-session-${int(1, 999)}` }, 1],
			[{ parentSession: `/home/user/.pi/agent/sessions/--home-user-proj--/parent-${hex(6)}.jsonl` }, 1],
		]);
		sm.newSession(opts);
	} else {
		sm = SessionManager.create(pick(CWDS), workDir);
	}
	prevManager = sm;
	let ops = 0;
	const call = (fn) => {
		tick();
		ops++;
		return fn();
	};
	if (chance(0.7)) {
		call(() => sm.appendModelChange(...(([p, ms]) => [p, pick(ms)])(pick(PROVIDERS))));
		call(() => sm.appendThinkingLevelChange(pick(LEVELS)));
	}
	const n = chance(0.1) ? int(60, 200) : int(3, 45);
	for (let k = 0; k < n; k++) {
		const op = weighted([
			["user", 18], ["assistant", 18], ["toolResult", 8], ["bash", 6], ["customRole", 3], ["oddRole", 1],
			["thinking", 4], ["model", 3], ["compaction", 4], ["branch", 5], ["branchSummary", 3], ["resetLeaf", 1],
			["label", 4], ["sessionInfo", 3], ["custom", 3], ["customMessage", 4],
		]);
		const entries = sm.getEntries();
		const ids = entries.map((e) => e.id);
		switch (op) {
			case "user": call(() => sm.appendMessage(userMessage())); break;
			case "assistant": call(() => sm.appendMessage(assistantMessage())); break;
			case "toolResult": call(() => sm.appendMessage(toolResultMessage())); break;
			case "bash": call(() => sm.appendMessage(bashExecutionMessage())); break;
			case "customRole": call(() => sm.appendMessage(customRoleMessage())); break;
			case "oddRole": call(() => sm.appendMessage(oddRoleMessage())); break;
			case "thinking": call(() => sm.appendThinkingLevelChange(chance(0.95) ? pick(LEVELS) : pick(["", "ultra"]))); break;
			case "model": {
				const [p, ms] = pick(PROVIDERS);
				call(() => sm.appendModelChange(p, pick(ms)));
				break;
			}
			case "compaction": {
				const path = sm.getBranch();
				const onPath = path.map((e) => e.id);
				const offPath = ids.filter((id) => !onPath.includes(id));
				const kind = weighted([["path", 14], ["pathMessage", 6], ["other", 2], ["missing", 2]]);
				let first;
				if (kind === "path" && onPath.length) first = pick(onPath);
				else if (kind === "pathMessage" && path.some((e) => e.type === "message")) first = pick(path.filter((e) => e.type === "message")).id;
				else if (kind === "other" && offPath.length) first = pick(offPath);
				else first = pick(["nonexistent", hex(8), ""]);
				const details = weighted([
					[undefined, 3],
					[{ readFiles: ["src/a.rs", "b.md"].slice(0, int(0, 2)), modifiedFiles: ["src/a.rs"].slice(0, int(0, 1)) }, 4],
					[anyValue(), 1],
				]);
				const fromHook = weighted([[undefined, 5], [true, 1], [false, 1]]);
				call(() => sm.appendCompaction(text(20), first, chance(0.9) ? int(0, 200000) : pick([0, 1.5, -1]), details, fromHook));
				break;
			}
			case "branch":
				if (ids.length) call(() => sm.branch(pick(ids)));
				break;
			case "branchSummary": {
				const target = ids.length && chance(0.85) ? pick(ids) : null;
				const summary = chance(0.2) ? "" : text(15);
				const details = chance(0.5) ? { readFiles: ["x"], modifiedFiles: [] } : undefined;
				call(() => sm.branchWithSummary(target, summary, details, weighted([[undefined, 5], [true, 1], [false, 1]])));
				break;
			}
			case "resetLeaf":
				call(() => sm.resetLeaf());
				break;
			case "label":
				if (ids.length) {
					const label = weighted([["name", 5], [undefined, 2], ["", 1]]);
					call(() => sm.appendLabelChange(pick(ids), label === "name" ? pick(["checkpoint", "good state", "🏷️ tag", " spaced "]) : label));
				}
				break;
			case "sessionInfo": call(() => sm.appendSessionInfo(pick(NAMES))); break;
			case "custom": {
				const data = weighted([[undefined, 2], [anyValue(), 4], [{ state: { step: int(1, 9) } }, 2]]);
				call(() => sm.appendCustomEntry(pick(["ext-state", "plan", "todo"]), data));
				break;
			}
			case "customMessage": {
				const content = chance(0.5) ? text(10) : [{ type: "text", text: text() }, ...(chance(0.3) ? [imageBlock()] : [])];
				const details = chance(0.5) ? anyValue() : undefined;
				call(() => sm.appendCustomMessageEntry(pick(["ext-note", "reminder"]), content, chance(0.6), details));
				break;
			}
		}
	}
	if (!hasAssistant(sm)) call(() => sm.appendMessage(assistantMessage()));
	const file = sm.getSessionFile();
	if (!existsSync(file)) throw new Error(`pi did not write ${file} although an assistant message exists`);
	return { text: readFileSync(file, "utf8"), ops };
}

// ---------------------------------------------------------------------------------------------------
// Hand-edited variants
// ---------------------------------------------------------------------------------------------------
// A file is handled as a list of records { obj, raw }: obj = parsed entry (re-serialised with
// JSON.stringify unless raw is set), raw = exact line text for lines we build by hand.

function lastId(recs) {
	for (let i = recs.length - 1; i >= 0; i--) {
		const o = recs[i].obj;
		if (o && typeof o === "object" && o.type !== "session" && typeof o.id === "string") return o.id;
	}
	return null;
}
function freshId() {
	return hex(8);
}
function iso() {
	return new RealDate(clock).toISOString();
}
/** Append a hand-written raw entry line on the current leaf (so it is on the context path). */
function appendRaw(recs, fields, body) {
	const id = freshId();
	const parent = lastId(recs);
	const raw = `{${fields.replace("@ID", JSON.stringify(id)).replace("@PARENT", JSON.stringify(parent)).replace("@TS", JSON.stringify(iso()))}${body}}`;
	recs.push({ raw, obj: { id, type: "raw" } });
}
const BASE = '"type":"message","id":@ID,"parentId":@PARENT,"timestamp":@TS';
const DEEP = 1000;

const VARIANTS = {
	// --- structural (operate on objects; applied first) ---
	v1(recs, meta) {
		const objs = recs.map((r) => r.obj);
		const indexOf = new Map();
		objs.forEach((o, i) => {
			if (o && typeof o === "object" && typeof o.id === "string" && o.type !== "session") indexOf.set(o.id, i);
		});
		for (const r of recs) {
			const o = r.obj;
			if (o.type === "session") {
				delete o.version;
				if (chance(0.5)) Object.assign(o, { provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" });
				if (chance(0.2)) o.branchedFrom = "/home/user/.pi/agent/old.jsonl";
				continue;
			}
			if (o.type === "compaction") {
				let idx = indexOf.get(o.firstKeptEntryId);
				if (idx === undefined || chance(0.15)) idx = pick([0, -1, objs.length + 5, 2.5, "1", objs.length - 1]);
				delete o.firstKeptEntryId;
				// v1 compaction key order: type, timestamp, summary, firstKeptEntryIndex, tokensBefore
				const { type, timestamp, summary, tokensBefore, ...rest } = o;
				delete rest.id;
				delete rest.parentId;
				r.obj = { type, timestamp, summary, firstKeptEntryIndex: idx, tokensBefore, ...rest };
				continue;
			}
			if (o.type === "model_change" && chance(0.3)) {
				r.obj = { type: "model_change", timestamp: o.timestamp, model: `${o.provider}/${o.modelId}` };
				continue;
			}
			delete o.id;
			delete o.parentId;
		}
		meta.v1 = true;
	},
	v2(recs) {
		recs[0].obj.version = 2;
		for (const r of recs) {
			if (r.obj.type === "custom_message" && chance(0.5)) {
				const o = r.obj;
				r.obj = {
					type: "message", id: o.id, parentId: o.parentId, timestamp: o.timestamp,
					message: { role: "hookMessage", customType: o.customType, content: o.content, display: o.display, ...(o.details !== undefined ? { details: o.details } : {}), timestamp: RealDate.parse(o.timestamp) },
				};
			}
		}
		const msg = { role: "hookMessage", customType: "hook", content: chance(0.5) ? text(5) : [{ type: "text", text: text(3) }], display: chance(0.5), timestamp: clock };
		recs.push({ obj: { type: "message", id: freshId(), parentId: lastId(recs), timestamp: iso(), message: msg } });
	},
	oddVersion(recs) {
		recs[0].obj.version = pick(["3", 4, 2.5, "2", null, 0, true, "abc"]);
		if (chance(0.5)) recs.push({ obj: { type: "message", id: freshId(), parentId: lastId(recs), timestamp: iso(), message: { role: "hookMessage", customType: "h", content: "hook text", display: true, timestamp: clock } } });
	},
	timestamps(recs) {
		const ODD = [
			"2025-01-01T00:00:00", "2025-01-01", "2025-01-01 12:34:56", "invalid", "", "2025-01-01T00:00:00.123456Z",
			"2025-01-01T00:00:00+05:30", "2025-13-45T00:00:00Z", "2025-06-01T10:00:00.5Z", "+002025-01-01T00:00:00.000Z",
			null, 12345, true,
		];
		const candidates = recs.filter((r) => r.obj.type && r.obj.type !== "session");
		// Prefer entries whose timestamp reaches the context output.
		const ctx = candidates.filter((r) => ["custom_message", "branch_summary", "compaction"].includes(r.obj.type));
		for (let k = int(1, 4); k > 0; k--) {
			const pool = ctx.length && chance(0.7) ? ctx : candidates;
			if (pool.length) pick(pool).obj.timestamp = pick(ODD);
		}
	},
	cycle(recs, meta) {
		// pi loops forever on these (buildSessionContext walks parentIds without cycle detection).
		const es = recs.filter((r) => typeof r.obj.id === "string" && r.obj.type !== "session");
		if (es.length === 0) return;
		const last = es[es.length - 1].obj;
		// Ancestors of the leaf (the last entry), so the cycle is on the path pi walks.
		const byId = new Map(es.map((r) => [r.obj.id, r.obj]));
		const ancestors = [];
		for (let p = byId.get(last.parentId); p && ancestors.length < es.length && p !== last; p = byId.get(p.parentId)) ancestors.push(p);
		if (chance(0.4) || ancestors.length === 0) last.parentId = last.id;
		else pick(ancestors).parentId = last.id; // last → … → ancestor → last
		meta.hang = true;
	},
	nullMessage(recs) {
		const ms = recs.filter((r) => r.obj.type === "message");
		if (ms.length) pick(ms).obj.message = null; // pi throws TypeError reading .role
	},
	// --- raw-text additions (appended entries on the leaf path) ---
	dupKeys(recs) {
		appendRaw(recs, '"type":"message","id":"shadowed-id","parentId":@PARENT,"id":@ID,"timestamp":@TS',
			',"message":{"content":"first","role":"user","content":"second wins","timestamp":1,"timestamp":2,"x":{"z":1},"x":{"a":2,"z":3}}');
		appendRaw(recs, '"type":"custom_message","customType":"dup","content":"c1","display":false,"display":true,"details":{"k":1,"j":2,"k":3},"id":@ID,"parentId":@PARENT,"timestamp":@TS', "");
	},
	bigNumbers(recs) {
		appendRaw(recs, BASE,
			',"message":{"role":"user","content":[{"type":"text","text":"numbers"}],"timestamp":1e400,"nums":[1e400,-1e400,12345678901234567890,-0,0.0,1.0,1E21,1e21,1e20,123e-20,5e-7,0.000001,0.0000001,1.7976931348623157e308,4.9e-324,2e-324,9007199254740993,100,1.5e300,-1.25E-5,0.1e1,1e-400,18446744073709551616]}');
		appendRaw(recs, BASE,
			',"message":{"role":"bashExecution","command":"big","output":"x","exitCode":12345678901234567890,"cancelled":false,"truncated":false,"timestamp":1e21}');
	},
	surrogates(recs) {
		appendRaw(recs, BASE,
			',"message":{"role":"user","content":"lone high \\ud83d, lone low \\udc00, pair \\ud83d\\ude00, reversed \\ude00\\ud83d, ctl \\u0000\\u001f\\u007f\\u2028\\u2029 \\/ \\u00e9 \\uFEFF end \\ud800","timestamp":1}');
		appendRaw(recs, '"type":"custom_message","customType":"sur","content":[{"type":"text","text":"\\udbff\\udfff and \\udfff\\udbff"}],"display":true,"details":{"k\\ud83d":"v\\udc00"},"id":@ID,"parentId":@PARENT,"timestamp":@TS', "");
	},
	deepNesting(recs) {
		const obj = `${'{"d":'.repeat(DEEP)}1${"}".repeat(DEEP)}`;
		const arr = `${"[".repeat(DEEP)}"bottom"${"]".repeat(DEEP)}`;
		appendRaw(recs, `"type":"custom_message","customType":"deep","content":"deep details","display":true,"details":{"obj":${obj},"arr":${arr}},"id":@ID,"parentId":@PARENT,"timestamp":@TS`, "");
		appendRaw(recs, BASE, `,"message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"deep"}],"details":${arr},"isError":false,"timestamp":2}`);
	},
	intKeys(recs) {
		const details = '{"b":1,"1":"one","0":"zero","a":2,"10":"ten","01":"oh-one","-1":"neg","4294967294":"max-index","4294967295":"not-index","1.5":"frac","2":"two"," 3":"sp"}';
		appendRaw(recs, `"type":"custom_message","customType":"ints","content":"int keys","display":true,"details":${details},"id":@ID,"parentId":@PARENT,"timestamp":@TS`, "");
		appendRaw(recs, BASE, `,"message":{"role":"user","content":"int keys in message","timestamp":3,"2":"b","1":"a","meta":${details}}`);
	},
	nonObjectLines(recs) {
		// Parsed by pi and pushed as entries; a trailing one makes leafId undefined (empty context).
		const at = int(1, recs.length);
		recs.splice(at, 0, { raw: pick(["42", '"a string"', "[1,2]", "true", "{}", '{"type":"message"}']), obj: {} });
	},
	// --- line-level junk (applied after the above) ---
	blankLines(recs) {
		for (let k = int(1, 4); k > 0; k--) recs.splice(int(1, recs.length), 0, { raw: pick(["", " ", "\t", "   \t ", "\u00a0", "\u3000", "\u2028", "\r", "\f\v"]), obj: {} });
	},
	malformed(recs) {
		for (let k = int(1, 3); k > 0; k--) {
			recs.splice(int(1, recs.length - 1), 0, {
				raw: pick(["not json", '{"type":"message","id":"trunc', '{"a":1}{"b":2}', "[1,2", "}", '{"type":"message",}', "\ufeff{}", "{'single':1}", "NaN", '{"x":01}']),
				obj: {},
			});
		}
	},
};
// Encoding-level edits, applied when assembling the text.
const ENCODINGS = ["crlf", "bom", "partial", "noFinalNewline"];

function applyVariants(textIn, variants, meta) {
	const recs = textIn
		.split("\n")
		.filter((l) => l !== "")
		.map((l) => ({ obj: JSON.parse(l) }));
	const order = [
		"v1", "v2", "oddVersion", "timestamps", "cycle", "nullMessage",
		"dupKeys", "bigNumbers", "surrogates", "deepNesting", "intKeys", "nonObjectLines",
		"blankLines", "malformed",
	];
	for (const v of order) if (variants.includes(v)) VARIANTS[v](recs, meta);
	const lines = recs.map((r) => (r.raw !== undefined ? r.raw : JSON.stringify(r.obj)));
	const nl = variants.includes("crlf") ? "\r\n" : "\n";
	let out = lines.join(nl);
	if (variants.includes("partial")) out += `${nl}{"type":"message","id":"partial","parentId":"${lastId(recs) ?? ""}","timestamp":"2026-01-01T00:00`;
	else if (!variants.includes("noFinalNewline")) out += nl;
	if (variants.includes("bom")) out = `\ufeff${out}`;
	return out;
}

function chooseVariants(noHang) {
	const table = [
		["crlf", 3], ["bom", 2], ["blankLines", 3], ["malformed", 3], ["partial", 2], ["noFinalNewline", 1],
		["dupKeys", 3], ["bigNumbers", 3], ["surrogates", 3], ["deepNesting", 2], ["timestamps", 4], ["intKeys", 3],
		["v1", 4], ["v2", 3], ["oddVersion", 1], ["nonObjectLines", 1],
	];
	if (!noHang) table.push(["cycle", 0.5], ["nullMessage", 0.5]);
	const chosen = new Set();
	for (let k = weighted([[1, 6], [2, 3], [3, 1]]); k > 0; k--) chosen.add(weighted(table));
	// v1 and v2 are exclusive (v1 wins); a cycle on a v1 file is erased by migration anyway.
	if (chosen.has("v1")) {
		chosen.delete("v2");
		chosen.delete("oddVersion");
		chosen.delete("cycle");
		chosen.delete("nonObjectLines"); // pi's v1 migration crashes on non-objects: keep v1 files useful
	}
	return [...chosen];
}

// ---------------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------------
function parseArgs(argv) {
	const a = { seed: "1", count: 20, out: null, noHang: false, variantRate: 0.4 };
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const val = () => {
			if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
			return argv[++i];
		};
		if (k === "--seed") a.seed = val();
		else if (k === "--count") a.count = Number.parseInt(val(), 10);
		else if (k === "--out") a.out = val();
		else if (k === "--no-hang") a.noHang = true;
		else if (k === "--variant-rate") a.variantRate = Number(val());
		else throw new Error(`unknown argument: ${k}`);
	}
	if (!a.out) throw new Error("--out DIR is required");
	if (!Number.isInteger(a.count) || a.count < 0) throw new Error("--count must be a non-negative integer");
	return a;
}

function main() {
	let args;
	try {
		args = parseArgs(process.argv.slice(2));
	} catch (e) {
		process.stderr.write(`gen-sessions: ${e.message}\nusage: node gen-sessions.mjs --seed S --count N --out DIR [--no-hang] [--variant-rate R]\n`);
		process.exit(2);
	}
	const out = resolve(args.out);
	mkdirSync(out, { recursive: true });
	const workDir = mkdtempSync(join(tmpdir(), "pi-gen-"));
	globalsRng.r = mulberry32(hashString(`globals:${args.seed}`));
	clock = RealDate.UTC(2025, 5, 1) + (hashString(`clock:${args.seed}`) % (300 * 86400)) * 1000;
	const summary = { files: 0, variants: 0, leafArgs: 0 };
	try {
		for (let i = 0; i < args.count; i++) {
			random.reseed(hashString(`${args.seed}:${i}`));
			const { text: original, ops } = driveSession(workDir);
			const meta = { seed: args.seed, index: i, ops, variants: [] };
			let textOut = original;
			if (chance(args.variantRate)) {
				meta.variants = chooseVariants(args.noHang);
				textOut = applyVariants(original, meta.variants, meta);
				summary.variants++;
			}
			const base = join(out, `${args.seed}-${i}`);
			writeFileSync(`${base}.jsonl`, textOut);
			// --leaf for ~30% of files (not for v1: its ids are assigned by migration).
			const leafArgs = {};
			if (!meta.v1 && !meta.hang && chance(0.3)) {
				const ids = [];
				for (const line of textOut.split("\n")) {
					try {
						const o = JSON.parse(line);
						if (o && typeof o === "object" && o.type !== "session" && typeof o.id === "string") ids.push(o.id);
					} catch {}
				}
				leafArgs.leaf = ids.length && chance(0.9) ? pick(ids) : pick(["nonexistent-leaf", "deadbeef"]);
				summary.leafArgs++;
			}
			writeFileSync(`${base}.args.json`, `${JSON.stringify(leafArgs)}\n`);
			writeFileSync(`${base}.meta.json`, `${JSON.stringify(meta)}\n`);
			summary.files++;
		}
	} finally {
		rmSync(workDir, { recursive: true, force: true });
	}
	process.stderr.write(`gen-sessions: wrote ${summary.files} sessions to ${out} (${summary.variants} hand-edited, ${summary.leafArgs} with --leaf)\n`);
}

main();
