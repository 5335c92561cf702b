// pi-write.mjs — runs a writer scenario through pi's own SessionManager and keeps the file pi
// wrote: the reference for writing sessions (the writer half of the conformance suite).
//
//   node pi-write.mjs [--pi 0.73|0.87|1.5] SCRIPT.ndjson OUT.jsonl
//   node pi-write.mjs [--pi 0.73|0.87|1.5] OUT.jsonl < SCRIPT.ndjson
//
// The second form is the writer protocol of `pi-session conformance writer --impl
// "node conformance/reference/pi-write.mjs"` (pi itself as a writer under test).
//
// SCRIPT is NDJSON, one operation per line. Every operation may carry "timestamp" (ISO 8601):
// pi's clock reads that time during the operation (`new Date()`, `Date.now()`); appends carry
// "id" (8 characters): the entry id pi's generateId draws (`randomUUID().slice(0, 8)`).
//
//   {"op":"create","cwd":"/work","id":"0195f3a4-...","timestamp":"2026-01-01T00:00:00.000Z"}
//   {"op":"message","id":"a1b2c3d4","timestamp":"…","message":{"role":"user","content":"hi","timestamp":1}}
//   {"op":"thinking_level_change","id":"…","thinkingLevel":"high"}
//   {"op":"model_change","id":"…","provider":"anthropic","modelId":"claude-x"}
//   {"op":"compaction","id":"…","summary":"…","firstKeptEntryId":"…","tokensBefore":123,
//    "details":…,"fromHook":…,"usage":…}                       (absent keys are not passed)
//   {"op":"custom","id":"…","customType":"k","data":…}
//   {"op":"custom_message","id":"…","customType":"k","content":…,"display":true,"details":…}
//   {"op":"session_info","id":"…","name":"…"}
//   {"op":"label","id":"…","targetId":"…","label":"…"}
//   {"op":"usage","id":"…","kind":"…","provider":"…","model":"…","usage":{…},"note":"…"}   (0.87, 1.5)
//   {"op":"context_edit","id":"…","targetId":"…","replacement":…}                         (0.87, 1.5)
//   {"op":"branch","from":"…"}   {"op":"reset_leaf"}
//   {"op":"branch_with_summary","id":"…","from":"…","summary":"…","details":…,"fromHook":…,"usage":…}
//
// OUT receives the session file exactly as pi left it in its session directory (a temporary
// one); when pi never wrote the file (no conversation yet), OUT is not created. Standard output
// gets one JSON line: {"written": bool, "returned": [what each append returned: its id, or for
// appendUsage the entry], "leaf": id|null}.
// A failing operation prints {"error": "...", "line": N} and exits 1.
//
// Each operation calls pi's public SessionManager method of the same name with the given
// arguments, in the given order; nothing of pi's is changed but the two sources of variation,
// replaced before pi runs: `crypto.randomUUID` (from the queue of given ids) and the global
// `Date` (a clock set per operation).
import { createRequire, syncBuiltinESMExports } from "node:module";
import { normalizePi, piCore } from "./pi-versions.mjs";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";

// ---- deterministic ids and clock (before pi is imported) ----------------------------------------
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
const queuedIds = [];
nodeCrypto.randomUUID = function givenRandomUUID() {
	const id = queuedIds.shift();
	if (id === undefined) throw new Error("pi drew an entry id the script did not give");
	return `${id}-0000-4000-8000-000000000000`;
};
syncBuiltinESMExports();

const RealDate = Date;
let clock = RealDate.parse("2026-01-01T00:00:00.000Z");
class ScriptDate extends RealDate {
	constructor(...args) {
		if (args.length === 0) super(clock);
		else super(...args);
	}
	static now() {
		return clock;
	}
}
globalThis.Date = ScriptDate;

// ---- pi ------------------------------------------------------------------------------------------
async function loadPi(v) {
	return import(pathToFileURL(join(piCore(v), "session-manager.js")).href);
}

/** The arguments of `op` present in the operation, in order, stopping at the first absent one
 *  (pi's optional parameters are trailing). */
function present(op, keys) {
	const args = [];
	for (const k of keys) {
		if (!(k in op)) break;
		args.push(op[k]);
	}
	return args;
}

const APPENDS = {
	message: (sm, op) => sm.appendMessage(op.message),
	thinking_level_change: (sm, op) => sm.appendThinkingLevelChange(op.thinkingLevel),
	model_change: (sm, op) => sm.appendModelChange(op.provider, op.modelId),
	compaction: (sm, op) =>
		sm.appendCompaction(...present(op, ["summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook", "usage"])),
	custom: (sm, op) => sm.appendCustomEntry(...present(op, ["customType", "data"])),
	custom_message: (sm, op) => sm.appendCustomMessageEntry(...present(op, ["customType", "content", "display", "details"])),
	session_info: (sm, op) => sm.appendSessionInfo(op.name),
	label: (sm, op) => sm.appendLabelChange(...present(op, ["targetId", "label"])),
	usage: (sm, op) => sm.appendUsage(...present(op, ["kind", "provider", "model", "usage", "note"])),
	context_edit: (sm, op) => sm.appendContextEdit(op.targetId, op.replacement),
	branch_with_summary: (sm, op) =>
		sm.branchWithSummary(...present(op, ["from", "summary", "details", "fromHook", "usage"])),
};

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
	const { SessionManager } = await loadPi(v);
	const lines = readFileSync(scriptPath, "utf8").split("\n");
	const sessionDir = mkdtempSync(join(tmpdir(), "pi-write-"));
	let sm = null;
	const ids = [];
	let lineNo = 0;
	try {
		for (const text of lines) {
			lineNo += 1;
			if (text.trim() === "") continue;
			const op = JSON.parse(text);
			if (op.timestamp !== undefined) {
				const t = RealDate.parse(op.timestamp);
				if (Number.isNaN(t)) throw new Error(`bad timestamp ${JSON.stringify(op.timestamp)}`);
				clock = t;
			}
			if (op.id !== undefined && op.op !== "create") {
				if (typeof op.id !== "string" || op.id.length !== 8) throw new Error("an entry id has 8 characters");
				queuedIds.push(op.id);
			}
			if (op.op === "create") {
				if (sm) throw new Error("create twice");
				// 0.87.1+ resolve the cwd against the process's directory: only an absolute one is
				// the same on every machine.
				if (!isAbsolute(String(op.cwd))) throw new Error("the cwd must be an absolute path");
				if (v === "0.73") {
					// 0.73.1's create takes no options; its newSession takes the id.
					sm = SessionManager.create(op.cwd, sessionDir);
					sm.newSession({ id: op.id });
				} else {
					sm = SessionManager.create(op.cwd, sessionDir, { id: op.id });
				}
			} else if (!sm) {
				throw new Error("the script must start with create");
			} else if (op.op === "branch") {
				sm.branch(op.from);
			} else if (op.op === "reset_leaf") {
				sm.resetLeaf();
			} else if (APPENDS[op.op]) {
				ids.push(APPENDS[op.op](sm, op));
			} else {
				throw new Error(`unknown op ${JSON.stringify(op.op)}`);
			}
			if (queuedIds.length > 0) throw new Error(`pi did not draw the id ${queuedIds[0]}`);
		}
		const written = readdirSync(sessionDir).filter((f) => f.endsWith(".jsonl"));
		if (written.length > 1) throw new Error(`pi wrote ${written.length} files`);
		if (written.length === 1) copyFileSync(join(sessionDir, written[0]), outPath);
		process.stdout.write(`${JSON.stringify({ written: written.length === 1, returned: ids, leaf: sm ? sm.getLeafId() : null })}\n`);
	} catch (error) {
		process.stdout.write(`${JSON.stringify({ error: String(error?.message ?? error), line: lineNo })}\n`);
		process.exitCode = 1;
	} finally {
		rmSync(sessionDir, { recursive: true, force: true });
	}
}

await main();
