// write-driver.mjs — runs writer scripts through pi's own SessionManager: the deterministic
// ids and clock, pi's loading, and `runScript`. Used by pi-write.mjs (one script) and
// scripts/diff/writer-diff.mjs (thousands of random ones in one process). The script format
// is documented at the top of pi-write.mjs.
import { createRequire, syncBuiltinESMExports } from "node:module";
import { normalizePi, piCore } from "./pi-versions.mjs";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
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
export async function loadPi(v) {
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
 * Runs the script `text` through pi `v`'s SessionManager (its class: `await loadPi(v)`),
 * in a fresh temporary session directory. Returns {file: Buffer|null, returned, leaf} or
 * {error, line} when an operation throws.
 */
export function runScript(SessionManager, v, text) {
	const lines = text.split("\n");
	const sessionDir = mkdtempSync(join(tmpdir(), "pi-write-"));
	let sm = null;
	const ids = [];
	let lineNo = 0;
	queuedIds.length = 0;
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
		const file = written.length === 1 ? readFileSync(join(sessionDir, written[0])) : null;
		return { file, returned: ids, leaf: sm ? sm.getLeafId() : null };
	} catch (error) {
		return { error: String(error?.message ?? error), line: lineNo };
	} finally {
		queuedIds.length = 0;
		rmSync(sessionDir, { recursive: true, force: true });
	}
}
