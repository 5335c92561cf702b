// write-driver.mjs — runs writer scripts through pi's own SessionManager: the deterministic
// ids and clock, pi's loading, and `runScript`. Used by pi-write.mjs (one script) and
// scripts/diff/writer-diff.mjs (thousands of random ones in one process). The script format
// is documented in conformance/writers/SCRIPT.md (schema: conformance/writers/script.schema.json).
import { createRequire, register, syncBuiltinESMExports } from "node:module";
import { normalizePi, piCore } from "./pi-versions.mjs";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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

// Session ids (UUID v7, drawn by createBranchedSession, forkFrom and new sessions) come from
// the script too: see write-hooks.mjs.
register("./write-hooks.mjs", import.meta.url);
const queuedSessionIds = [];
globalThis.__piWriteSessionIds = queuedSessionIds;

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
/** pi `v`'s SessionManager, and (0.87.1+) its serializeSessionBranch (the JSONL export). */
export async function loadPi(v) {
	const core = piCore(v);
	const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);
	const serializeSessionBranch =
		v === "0.73" ? undefined : (await import(pathToFileURL(join(core, "session-export.js")).href)).serializeSessionBranch;
	return { SessionManager, serializeSessionBranch };
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

export const APPENDS = {
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

/**
 * Runs the script `text` through pi `v`'s SessionManager (`pi`: `await loadPi(v)`),
 * in a fresh temporary session directory. Returns {file: Buffer|null, returned, leaf} or
 * {error, line} when an operation throws.
 */
export function runScript(pi, v, text) {
	const { SessionManager, serializeSessionBranch } = pi;
	let exported;
	const lines = text.split("\n");
	// A fixed session directory when the script gives one (the paths of session files are
	// written in the headers of branched and forked sessions): emptied first, removed after.
	let fixedDir;
	try {
		fixedDir = JSON.parse(lines.find((l) => l.trim() !== "") ?? "{}").sessionDir;
	} catch {}
	if (fixedDir !== undefined) {
		if (!isAbsolute(String(fixedDir))) return { error: "the sessionDir must be an absolute path", line: 1 };
		rmSync(fixedDir, { recursive: true, force: true });
		mkdirSync(fixedDir, { recursive: true });
	}
	const sessionDir = fixedDir ?? mkdtempSync(join(tmpdir(), "pi-write-"));
	let sm = null;
	const ids = [];
	let lineNo = 0;
	queuedIds.length = 0;
	queuedSessionIds.length = 0;
	try {
		for (const line of lines) {
			lineNo += 1;
			if (line.trim() === "") continue;
			const op = JSON.parse(line);
			if (op.timestamp !== undefined) {
				const t = RealDate.parse(op.timestamp);
				if (Number.isNaN(t)) throw new Error(`bad timestamp ${JSON.stringify(op.timestamp)}`);
				clock = t;
			}
			if (op.sessionId !== undefined) queuedSessionIds.push(String(op.sessionId));
			for (const id of op.labelIds ?? []) queuedIds.push(id);
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
			} else if (op.op === "create_branched_session") {
				sm.createBranchedSession(op.leaf);
			} else if (op.op === "fork") {
				if (!isAbsolute(String(op.cwd))) throw new Error("the cwd must be an absolute path");
				const source = sm.getSessionFile();
				const forkDir = join(sessionDir, "forks");
				sm = SessionManager.forkFrom(source, op.cwd, forkDir);
			} else if (op.op === "export") {
				if (!serializeSessionBranch) throw new Error(`pi ${v} has no session export`);
				exported = serializeSessionBranch(sm);
			} else if (op.op === "reopen") {
				// Reopening a session pi has not written yet would start an unrelated one.
				if (!existsSync(sm.getSessionFile())) throw new Error("reopen: the session has no file yet");
				sm = SessionManager.open(sm.getSessionFile(), sm.getSessionDir());
			} else if (APPENDS[op.op]) {
				ids.push(APPENDS[op.op](sm, op));
			} else {
				throw new Error(`unknown op ${JSON.stringify(op.op)}`);
			}
			if (queuedIds.length > 0) throw new Error(`pi did not draw the id ${queuedIds[0]}`);
			if (queuedSessionIds.length > 0) throw new Error(`pi did not draw the session id ${queuedSessionIds[0]}`);
		}
		// The file of the session the script ends in (a branched session or a fork has its
		// own), when pi wrote it.
		const current = sm ? sm.getSessionFile() : undefined;
		const file =
			exported !== undefined
				? Buffer.from(exported)
				: current && existsSync(current)
					? readFileSync(current)
					: null;
		return { file, returned: ids, leaf: sm ? sm.getLeafId() : null };
	} catch (error) {
		return { error: String(error?.message ?? error), line: lineNo };
	} finally {
		queuedIds.length = 0;
		rmSync(sessionDir, { recursive: true, force: true });
	}
}
