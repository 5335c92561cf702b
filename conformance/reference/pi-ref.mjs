#!/usr/bin/env node
// pi-ref.mjs — compute outputs with the REAL pi SessionManager (the reference implementation).
//
// Usage:
//   node pi-ref.mjs context FILE [--leaf ID] [--llm] [--pi 0.73|0.87|1.5]
//   node pi-ref.mjs migrate FILE [--pi 0.73|0.87|1.5]
//   node pi-ref.mjs tree FILE [--pi ...]
//   node pi-ref.mjs info FILE [--pi ...] [--mtime MS]
//   node pi-ref.mjs labels FILE [--pi ...]
//   node pi-ref.mjs hidden FILE [--pi ...]
//   node pi-ref.mjs stats FILE [--pi ...]
//   node pi-ref.mjs list DIR [--pi ...]
//   node pi-ref.mjs export FILE [--leaf ID] [--pi 0.87|1.5]
//   node pi-ref.mjs batch            (NDJSON requests on stdin, one NDJSON response per line)
//
// Batch request:  {"op":"context","file":"...","leaf":null,"llm":false,"pi":"0.73","id":7}
//                 (op: context | migrate | tree | info | labels | hidden | stats | list | export; "llm" only for
//                 context, "leaf" for context and export;
//                 optional "mtime" (ms) for info; "id" is optional, any JSON value, and echoed as
//                 the first key of the response)
// Batch response: {"ok":true,"output":"<exactly what the single mode prints>",
//                  "rewritten":<bool: pi modified the (copied) file while opening it>,
//                  "invalidHeader":<bool: pi's loadEntriesFromFile returned [] for an existing file,
//                                   i.e. 0.73.1 replaced the file with a fresh header / 0.87.1 threw>}
//              or {"ok":false,"error":"..."}
//
// Versions (pinned in package-lock.json):
//   --pi 0.73 (default) → @mariozechner/pi-coding-agent@0.73.1
//   --pi 0.87           → @earendil-works/pi-coding-agent@0.87.1
//   --pi 1.5            → @earendil-works/pi-coding-agent@1.5.2 (current pi; not installable with
//                         npm: fetched into vendor/ by fetch-pi-1.5.mjs, see there)
// Both are imported by file path (dist/core/session-manager.js and dist/core/messages.js) so that
// the agent's index (0.87.1 needs Node >= 22.19 for it) and the rest of the agent are never loaded.
//
// The input FILE is never touched: SessionManager.open() rewrites the file it opens (migration,
// invalid header; 0.87.1 also appends a "\n" after a trailing partial line), so every request copies
// FILE into a private temp directory (same basename) and opens the copy.
//
// Output details:
//   context: JSON.stringify({messages, thinkingLevel, model}) + "\n". 0.73.1 returns exactly those
//            keys. 0.87.1's SessionManager.buildSessionContext()/buildSessionContext() also return only
//            those three (the provenance-carrying `entries` lives in buildSessionProjection(), which we
//            do not call); we still pick the three keys explicitly, in that order, so any extra key a
//            future version adds is dropped. With --leaf ID: buildSessionContext(sm.getEntries(), ID,
//            sm.byId) — `byId` is a TypeScript-private but ordinary public JS class field.
//            With --llm: JSON.stringify(convertToLlm(result.messages)) + "\n".
//   migrate: the bytes of the copied file after SessionManager.open() returned. If pi migrated (or
//            reset an invalid header) this is pi's rewrite; if nothing needed migrating pi leaves the
//            file as it was, so this is the original file (0.87.1: plus a "\n" if the last line was
//            unterminated). Migration ids are deterministic, see below.
//   tree:    JSON of getTree() as [{id, type, label?, children:[...]}], built and serialised
//            iteratively (no recursion limit) by treeJson in shared.mjs (omp/omp-ref.ts uses it too).
//            Keys whose value is undefined are omitted, exactly as JSON.stringify would (id-less
//            entries have no "id" key).
//   info:    buildSessionInfo(): the listing entry `pi --resume` shows, JSON.stringify'd without
//            `path`: {id, cwd, name?, parentSessionPath?, created, modified, messageCount,
//            firstMessage, allMessagesText}, or null when pi leaves the file out of the list. The
//            file is not opened (listing reads it as is); the copy's mtime (pi's last fallback for
//            `modified`) is --mtime / "mtime", default 2000-01-01T00:00:00.000Z. See opInfo.
//   labels:  (the former `info`) {"name": getSessionName() ?? null, "labels": [[targetId, label], ...]
//            (labelsById in Map order), "leafId": getLeafId()} after open() — leafId key omitted
//            when pi's leaf is `undefined` (trailing non-object line), null when null.
//   hidden:  {"entries": N, "hidden": [line, ...]} after open(): N = getEntries().length, and the
//            1-based file lines of the entries that getTree() (what /tree shows) does not hold — an
//            entry counts as held when a tree node's entry serialises to the same JSON text, so a
//            byte-identical repeat hides nothing. Lines are found by matching each entry's
//            JSON.stringify against the file's lines in order (exact for files pi wrote; `null`
//            when no line matches). getTree() can loop forever (duplicate ids forming a node
//            cycle): run it with a timeout.
//   stats:   AgentSession.prototype.getSessionStats() of the pinned pi, called unchanged on a
//            stand-in `this` holding what the method reads — 0.73.1: state.messages =
//            buildSessionContext().messages of the opened copy; 0.87.1: the opened SessionManager —
//            so that no agent, model or API key is needed. Printed without sessionFile, sessionId
//            and contextUsage: {userMessages, assistantMessages, toolCalls, toolResults,
//            totalMessages, tokens: {input, output, cacheRead, cacheWrite, total}, cost}.
//            1.5.2's agent-session.js cannot be imported here (its @earendil-works/pi-mcp is not
//            published); its getSessionStats, createUsageTotals and addUsageToTotals are checked
//            to be the same text as 0.87.1's, and 0.87.1's method then runs on 1.5.2's SessionManager.
//   list:    pi's session list of the directory DIR (`file` in a batch request): 0.73.1
//            SessionManager.list("", DIR), 0.87.1 and 1.5.2 SessionManager.listAll(DIR) (one
//            directory, no cwd filter), read in place (listing writes nothing), as a JSON array of
//            {path: the file's name, id, cwd, name?, parentSessionPath?, created, modified,
//            messageCount, firstMessage} (allMessagesText left out).
//
// Deterministic ids — findings from reading dist/core/session-manager.js of BOTH 0.73.1 and 0.87.1
// (identical code for these parts):
//   * `import { randomUUID } from "crypto"`; generateId(byId) = loop up to 100 times:
//       id = randomUUID().slice(0, 8); if (!byId.has(id)) return id;   then fallback randomUUID().
//     So YES it loops with `.has` — but migrateV1ToV2 passes a fresh `new Set()` that is never filled,
//     so during migration every entry consumes exactly ONE randomUUID() call, in file order, and
//     collisions are never detected. (Appends pass sm.byId, so there a colliding id would consume
//     more calls; that never happens with the counter below since it never repeats.)
//   * We replace require("node:crypto").randomUUID by a counter returning
//       `${n.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`, n = 1, 2, 3, …
//     and call module.syncBuiltinESMExports() BEFORE importing pi (dynamic import), so pi's ESM
//     named import sees it. Migrated v1 ids therefore come out as 00000001, 00000002, … in
//     assignment (= file) order; the counter is reset before every request.
//   * Header/session-id creation does NOT consume randomUUID: 0.73.1 createSessionId() is
//     uuid@14 v7 (`crypto.getRandomValues` + Date.now()), 0.87.1 uses pi-ai's own uuidv7()
//     (globalThis.crypto.getRandomValues + Date.now()). A header lacking an id never reaches that
//     path on open anyway (loadEntriesFromFile rejects it); only the invalid-header reset path
//     (0.73.1) creates a fresh header, whose uuid v7 id and timestamp are random/now — such
//     `migrate` output is not deterministic (and our implementation refuses those files anyway).
//   * Nothing in open/migration calls Math.random.
//
// Time zones: offset-less timestamps are parsed in the local zone by V8; callers should set TZ
// (run-diff.mjs uses TZ=UTC for both sides).
//
// Temp copies go under $PI_REF_TMPDIR (default: the OS temp dir) and are removed on exit; a process
// killed after a timeout leaves its directory behind, so run-diff.mjs points PI_REF_TMPDIR at a
// directory it deletes itself.
//
// Hangs: pi loops forever on parent cycles (buildSessionContext, getTree with duplicate ids). Nothing
// here guards against that; the caller must use a timeout (and restart the batch process).

import { createRequire, syncBuiltinESMExports } from "node:module";
import { normalizePi as normalizeVersion, piCore } from "./pi-versions.mjs";
import { treeJson } from "./shared.mjs";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, mkdirSync, existsSync, utimesSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, basename } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

// ---- deterministic randomUUID (must run before pi is imported) ----------------------------------
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
let idCounter = 0;
nodeCrypto.randomUUID = function deterministicRandomUUID() {
	idCounter += 1;
	return `${idCounter.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
};
syncBuiltinESMExports();
function resetIds() {
	idCounter = 0;
}

// ---- pi module loading ---------------------------------------------------------------------------
function normalizePi(v) {
	return normalizeVersion(v, "0.73");
}
const moduleCache = new Map();
async function loadPi(version) {
	const v = normalizePi(version);
	if (!moduleCache.has(v)) {
		const core = piCore(v);
		const sm = await import(pathToFileURL(join(core, "session-manager.js")).href);
		const msgs = await import(pathToFileURL(join(core, "messages.js")).href);
		moduleCache.set(v, { ...sm, convertToLlm: msgs.convertToLlm });
	}
	return moduleCache.get(v);
}

// ---- temp copies ---------------------------------------------------------------------------------
let tmpRoot = null;
let tmpSeq = 0;
function freshCopy(file, name = basename(file)) {
	if (!existsSync(file)) throw new Error(`no such file: ${file}`);
	if (!tmpRoot) {
		tmpRoot = mkdtempSync(join(process.env.PI_REF_TMPDIR || tmpdir(), "pi-ref-"));
		process.on("exit", () => {
			try {
				rmSync(tmpRoot, { recursive: true, force: true });
			} catch {}
		});
	}
	const dir = join(tmpRoot, String(++tmpSeq));
	mkdirSync(dir);
	const copy = join(dir, name);
	copyFileSync(file, copy);
	return { dir, copy };
}
function cleanup(dir) {
	try {
		rmSync(dir, { recursive: true, force: true });
	} catch {}
}

// ---- operations ----------------------------------------------------------------------------------
// Every op returns { output: string|Buffer, rewritten, invalidHeader }.

/** Open a temp copy of `file` with pi. Returns the manager plus facts about what open() did. */
function openCopy(pi, file) {
	const { dir, copy } = freshCopy(file);
	const before = readFileSync(copy);
	// Probe whether pi considers the header valid, on a second copy (0.87.1's loader can append a
	// newline to the file it reads).
	let invalidHeader = false;
	try {
		const probe = join(dir, "probe.jsonl");
		copyFileSync(file, probe);
		invalidHeader = pi.loadEntriesFromFile(probe).length === 0;
		rmSync(probe, { force: true });
	} catch {
		// e.g. first parseable value is JSON null → TypeError; open() below throws the same way.
	}
	resetIds();
	let sm;
	try {
		sm = pi.SessionManager.open(copy);
	} catch (e) {
		cleanup(dir);
		// Report the caller's path, not the temp copy's.
		if (e instanceof Error && typeof e.message === "string") e.message = e.message.split(copy).join(file);
		throw e;
	}
	const after = readFileSync(copy);
	return { sm, dir, copy, after, rewritten: !before.equals(after), invalidHeader };
}

function pickContext(result) {
	// Keep only the three documented keys, in this order (see header comment).
	return { messages: result.messages, thinkingLevel: result.thinkingLevel, model: result.model };
}

async function opContext(req) {
	const pi = await loadPi(req.pi);
	const o = openCopy(pi, req.file);
	try {
		let result;
		if (req.leaf !== undefined && req.leaf !== null) {
			result = pi.buildSessionContext(o.sm.getEntries(), req.leaf, o.sm.byId);
		} else {
			result = o.sm.buildSessionContext();
		}
		const ctx = pickContext(result);
		const output = req.llm ? `${JSON.stringify(pi.convertToLlm(ctx.messages))}\n` : `${JSON.stringify(ctx)}\n`;
		return { output, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

async function opMigrate(req) {
	const pi = await loadPi(req.pi);
	const o = openCopy(pi, req.file);
	cleanup(o.dir);
	return { output: o.after, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
}

async function opTree(req) {
	const pi = await loadPi(req.pi);
	const o = openCopy(pi, req.file);
	try {
		return { output: `${treeJson(o.sm.getTree())}\n`, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

// The fixed modification time `info` gives the file unless the request says otherwise
// (2000-01-01T00:00:00.000Z, as conformance/FORMAT.md and the conformance crate use).
const INFO_MTIME_MS = 946_684_800_000;

/**
 * buildSessionInfo(file) — the session's listing entry, what `pi --resume` shows. The function is
 * module-private in both versions, so it is reached through the public listing API on a directory
 * holding only a copy of the file (named session.jsonl: listing only reads *.jsonl), whose mtime is
 * set to `mtime` (pi's last fallback for `modified`):
 *   0.73.1: SessionManager.list(cwd, dir) → listSessionsFromDir(dir) (no cwd filter)
 *   0.87.1: SessionManager.listAll(dir)   → listSessionsFromDir(dir) (list() would filter by cwd)
 * Listing never opens the session (no migration, no rewrite). Output: JSON.stringify of the entry
 * without `path` — {id, cwd, name?, parentSessionPath?, created, modified, messageCount,
 * firstMessage, allMessagesText} (Dates via toJSON: ISO string, null when invalid) — or `null` when
 * pi leaves the file out of the list (buildSessionInfo returned null / threw).
 */
async function opInfo(req) {
	const pi = await loadPi(req.pi);
	const v = normalizePi(req.pi);
	const { dir } = freshCopy(req.file, "session.jsonl");
	try {
		const copy = join(dir, "session.jsonl");
		const mtimeMs = req.mtime === undefined || req.mtime === null ? INFO_MTIME_MS : Number(req.mtime);
		if (!Number.isFinite(mtimeMs)) throw new Error(`bad mtime: ${req.mtime}`);
		const when = new Date(mtimeMs);
		utimesSync(copy, when, when);
		const list = v === "0.73" ? await pi.SessionManager.list(dir, dir) : await pi.SessionManager.listAll(dir);
		if (list.length > 1) throw new Error(`listing returned ${list.length} sessions for one file`);
		let output = "null\n";
		if (list.length === 1) {
			const { path: _path, ...info } = list[0];
			output = `${JSON.stringify(info)}\n`;
		}
		return { output, rewritten: false, invalidHeader: false };
	} finally {
		cleanup(dir);
	}
}

/** The old `info`: {name, labels:[[target,label]], leafId} after SessionManager.open(). */
async function opLabels(req) {
	const pi = await loadPi(req.pi);
	const o = openCopy(pi, req.file);
	try {
		const info = {
			name: o.sm.getSessionName() ?? null,
			labels: [...o.sm.labelsById.entries()],
			leafId: o.sm.getLeafId(),
		};
		return { output: `${JSON.stringify(info)}\n`, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

/** How many values pi's `loadEntriesFromFile` keeps from a copy of `file` (header included). */
export async function loadEntriesCount(file, version) {
	const pi = await loadPi(version);
	const { dir, copy } = freshCopy(file);
	try {
		return pi.loadEntriesFromFile(copy).length;
	} finally {
		cleanup(dir);
	}
}

/** Which entries pi's own tree (getTree, what /tree shows) does not hold. See the header. */
async function opHidden(req) {
	const pi = await loadPi(req.pi);
	const text = readFileSync(req.file, "utf8");
	const o = openCopy(pi, req.file);
	try {
		const entries = o.sm.getEntries();
		const shown = new Set();
		const stack = [...o.sm.getTree()];
		const seen = new Set();
		while (stack.length > 0) {
			const node = stack.pop();
			if (seen.has(node)) continue;
			seen.add(node);
			shown.add(JSON.stringify(node.entry));
			stack.push(...node.children);
		}
		// Each entry's line: the first line after the previous entry's whose JSON text is the
		// entry's (every line parsed once).
		const lineOf = new Map();
		text.split("\n").forEach((line, i) => {
			let json;
			try {
				json = JSON.stringify(JSON.parse(line));
			} catch {
				return;
			}
			if (!lineOf.has(json)) lineOf.set(json, []);
			lineOf.get(json).push(i + 1);
		});
		const hidden = [];
		let previous = 0;
		for (const entry of entries) {
			const json = JSON.stringify(entry);
			const line = (lineOf.get(json) ?? []).find((n) => n > previous) ?? null;
			if (line !== null) previous = line;
			if (!shown.has(json)) hidden.push(line);
		}
		const output = `${JSON.stringify({ entries: entries.length, hidden })}\n`;
		return { output, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

/** The text of `getSessionStats() { … }` in an agent-session.js (up to the method's closing brace). */
function statsMethodText(file) {
	const text = readFileSync(file, "utf8");
	const start = text.indexOf("\n    getSessionStats() {");
	const end = text.indexOf("\n    }\n", start);
	if (start < 0 || end < 0) throw new Error(`no getSessionStats in ${file}`);
	return text.slice(start, end);
}

const agentCache = new Map();
/** AgentSession of pinned pi `v` ("0.73" or "0.87"; "1.5" runs 0.87.1's, once shown to be the same code). */
async function agentSession(v) {
	if (v === "1.5") {
		const same = (a, b) => a.replace(/\s+/g, " ") === b.replace(/\s+/g, " ");
		const core87 = piCore("0.87");
		const core15 = piCore("1.5");
		if (!same(statsMethodText(join(core87, "agent-session.js")), statsMethodText(join(core15, "agent-session.js")))) {
			throw new Error("pi 1.5.2's getSessionStats differs from 0.87.1's: it cannot be run here");
		}
		for (const fn of ["createUsageTotals", "addUsageToTotals"]) {
			const text = (core) => {
				const t = readFileSync(join(core, "usage-totals.js"), "utf8");
				const start = t.indexOf(`export function ${fn}(`);
				return start < 0 ? "" : t.slice(start, t.indexOf("\n}\n", start));
			};
			if (text(core87) === "" || !same(text(core87), text(core15))) {
				throw new Error(`pi 1.5.2's ${fn} differs from 0.87.1's: it cannot be run here`);
			}
		}
		v = "0.87";
	}
	if (!agentCache.has(v)) {
		const mod = await import(pathToFileURL(join(piCore(v), "agent-session.js")).href);
		agentCache.set(v, mod.AgentSession);
	}
	return agentCache.get(v);
}

/** pi's getSessionStats() for the file. See the header. */
async function opStats(req) {
	const v = normalizePi(req.pi);
	const AgentSession = await agentSession(v);
	const pi = await loadPi(req.pi);
	const o = openCopy(pi, req.file);
	try {
		const self =
			v === "0.73"
				? { state: { messages: o.sm.buildSessionContext().messages }, getContextUsage: () => undefined }
				: { sessionManager: o.sm, getContextUsage: () => undefined };
		const s = AgentSession.prototype.getSessionStats.call(self);
		const picked = {
			userMessages: s.userMessages,
			assistantMessages: s.assistantMessages,
			toolCalls: s.toolCalls,
			toolResults: s.toolResults,
			totalMessages: s.totalMessages,
			tokens: s.tokens,
			cost: s.cost,
		};
		return { output: `${JSON.stringify(picked)}\n`, rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

/** pi's session list of a directory. See the header. */
async function opList(req) {
	const pi = await loadPi(req.pi);
	const v = normalizePi(req.pi);
	const sessions = v === "0.73" ? await pi.SessionManager.list("", req.file) : await pi.SessionManager.listAll(req.file);
	const rows = sessions.map((s) => ({
		path: basename(s.path),
		id: s.id,
		cwd: s.cwd,
		name: s.name,
		parentSessionPath: s.parentSessionPath,
		created: s.created,
		modified: s.modified,
		messageCount: s.messageCount,
		firstMessage: s.firstMessage,
	}));
	return { output: `${JSON.stringify(rows)}\n`, rewritten: false, invalidHeader: false };
}

/** pi's JSONL export (`/export FILE.jsonl`): serializeSessionBranch of the opened copy, after
 *  branch(leaf) when a leaf is given. 0.87.1 and 1.5.2 only (0.73.1 has it in AgentSession,
 *  which needs an agent). The header's timestamp is the time of the export. */
async function opExport(req) {
	const v = normalizePi(req.pi);
	if (v === "0.73") throw new Error("pi 0.73.1's session manager has no serializeSessionBranch");
	const pi = await loadPi(v);
	const { serializeSessionBranch } = await import(pathToFileURL(join(piCore(v), "session-export.js")).href);
	const o = openCopy(pi, req.file);
	try {
		if (req.leaf !== undefined && req.leaf !== null) o.sm.branch(req.leaf);
		return { output: serializeSessionBranch(o.sm), rewritten: o.rewritten, invalidHeader: o.invalidHeader };
	} finally {
		cleanup(o.dir);
	}
}

const OPS = { context: opContext, migrate: opMigrate, tree: opTree, info: opInfo, labels: opLabels, hidden: opHidden, stats: opStats, list: opList, export: opExport };

export async function run(req) {
	const fn = OPS[req.op];
	if (!fn) throw new Error(`unknown op: ${req.op}`);
	if (typeof req.file !== "string") throw new Error("request needs a string 'file'");
	return fn(req);
}

function errorText(e) {
	if (e instanceof Error) return `${e.name}: ${e.message}`;
	return String(e);
}

// ---- CLI -----------------------------------------------------------------------------------------
function usage() {
	process.stderr.write(
		"usage:\n" +
			"  node pi-ref.mjs context FILE [--leaf ID] [--llm] [--pi 0.73|0.87|1.5]\n" +
			"  node pi-ref.mjs migrate FILE [--pi 0.73|0.87|1.5]\n" +
			"  node pi-ref.mjs tree FILE [--pi ...]\n" +
			"  node pi-ref.mjs info FILE [--pi ...] [--mtime MS]\n" +
			"  node pi-ref.mjs labels FILE [--pi ...]\n" +
			"  node pi-ref.mjs hidden FILE [--pi ...]\n" +
			"  node pi-ref.mjs stats FILE [--pi ...]\n" +
			"  node pi-ref.mjs list DIR [--pi ...]\n" +
			"  node pi-ref.mjs export FILE [--leaf ID] [--pi 0.87|1.5]\n" +
			"  node pi-ref.mjs batch   (NDJSON requests on stdin)\n",
	);
	process.exitCode = 2;
}

function parseArgs(argv) {
	const req = { op: argv[0], file: undefined, leaf: null, llm: false, pi: "0.73" };
	for (let i = 1; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--leaf") {
			if (i + 1 >= argv.length) throw new Error("--leaf needs a value");
			req.leaf = argv[++i];
		} else if (a === "--mtime") {
			if (i + 1 >= argv.length) throw new Error("--mtime needs a value");
			req.mtime = Number(argv[++i]);
		} else if (a === "--llm") req.llm = true;
		else if (a === "--pi") {
			if (i + 1 >= argv.length) throw new Error("--pi needs a value");
			req.pi = argv[++i];
		} else if (a.startsWith("--")) throw new Error(`unknown option: ${a}`);
		else if (req.file === undefined) req.file = a;
		else throw new Error(`unexpected argument: ${a}`);
	}
	return req;
}

async function batch() {
	const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
	for await (const line of rl) {
		if (!line.trim()) continue;
		let resp;
		let id;
		try {
			const req = JSON.parse(line);
			id = req?.id;
			const r = await run(req);
			const output = Buffer.isBuffer(r.output) ? r.output.toString("utf8") : r.output;
			// output_b64: the exact bytes (the file text of `migrate` may hold invalid UTF-8).
			const bytes = Buffer.isBuffer(r.output) ? r.output : Buffer.from(r.output, "utf8");
			resp = { ok: true, output, output_b64: bytes.toString("base64"), rewritten: r.rewritten, invalidHeader: r.invalidHeader };
		} catch (e) {
			resp = { ok: false, error: errorText(e) };
		}
		// Echo the request's "id" (if any) so the caller can pair responses with requests.
		if (id !== undefined) resp = { id, ...resp };
		process.stdout.write(`${JSON.stringify(resp)}\n`);
	}
}

async function main() {
	const argv = process.argv.slice(2);
	if (argv.length === 0 || argv[0] === "-h" || argv[0] === "--help") return usage();
	if (argv[0] === "batch") return batch();
	let req;
	try {
		req = parseArgs(argv);
		if (!OPS[req.op] || req.file === undefined) return usage();
		normalizePi(req.pi);
	} catch (e) {
		process.stderr.write(`pi-ref: ${e.message}\n`);
		process.exitCode = 2;
		return;
	}
	try {
		const r = await run(req);
		process.stdout.write(r.output);
	} catch (e) {
		process.stderr.write(`pi-ref: pi threw: ${errorText(e)}\n`);
		process.exitCode = 1;
	}
}

// Run as a command unless imported (adapter.mjs imports `run`).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) await main();
