#!/usr/bin/env bun
// omp-ref.ts — compute outputs with oh-my-pi (omp) 18.3.4's REAL session code (SessionManager &
// co., TypeScript run by Bun from ../vendor/omp; fetch it with `node omp/fetch-omp.mjs`).
// The omp counterpart of ../pi-ref.mjs, same CLI shape.
//
// Usage (from conformance/reference; BUN=vendor/omp/bun/bin/bun):
//   TZ=UTC $BUN omp/omp-ref.ts context FILE [--leaf ID] [--no-recovery]
//   TZ=UTC $BUN omp/omp-ref.ts migrate FILE [--resume]
//   TZ=UTC $BUN omp/omp-ref.ts tree FILE
//   TZ=UTC $BUN omp/omp-ref.ts info FILE [--mtime MS]
//   TZ=UTC $BUN omp/omp-ref.ts batch            (NDJSON requests on stdin, one NDJSON response per line)
// Per request: --blobs DIR / "blobs": the files of DIR (named by their sha256) are in omp's blob
// store for that request only (how a corpus case brings the blobs its image references name).
// Process-wide options (before or after the op): --agent-dir DIR (blobs are read from DIR/blobs;
// default $PI_CODING_AGENT_DIR, else none), --now MS|real (frozen clock, default 946684800000 =
// 2000-01-01T00:00:00.000Z; "real" keeps the real clock).
//
// Batch request:  {"op":"context","file":"...","id":7, "leaf":null, "recovery":true, "resume":false, "mtime":null}
// Batch response: {"id":7,"ok":true,"output":"<exactly what the single mode prints>","output_b64":"<its bytes>",
//                  "rewritten":<bool: omp modified the (copied) file>,
//                  "recovered":<bool: the interrupted-turn message was appended (context / migrate --resume)>,
//                  "warnings":[{"level","message"}]  (omp's logger warn/error during the request; key omitted when none)}
//              or {"id":7,"ok":false,"error":"<Error name>: <message>"}
//
// The input FILE is never touched: omp rewrites (and appends to) the file it opens, so every request
// copies FILE into a private temp directory (same basename) and opens the copy.
//
// Ops — what omp code runs:
//   context: what omp resumes. The call path of `omp --resume FILE` / `omp --session FILE`:
//            main.ts → SessionManager.open(FILE) [→ session-loader.ts loadSessionFile() →
//            #setSessionFile(): migrateToCurrentVersion(), resolveBlobRefsInEntries(), #applyEntries()]
//            then sdk.ts createAgentSession():
//              existingBranch = sessionManager.getBranch();
//              interruptedTurnAbort = createInterruptedTurnAbortMessage(existingBranch);   // exit-diagnostics.ts
//              if (interruptedTurnAbort) sessionManager.appendMessage(interruptedTurnAbort);
//              existingSession = deobfuscateSessionContext(sessionManager.buildSessionContext(), obfuscator);
//            This runs exactly those calls. Output: JSON.stringify(sessionManager.buildSessionContext()) + "\n",
//            i.e. every field omp's SessionContext holds (messages, thinkingLevel, configuredThinkingLevel,
//            serviceTier, models, injectedTtsrRules, mode, modeData; undefined ones omitted by
//            JSON.stringify), with the recovery message (if omp adds one) already appended to the session
//            and so the last element of `messages`, as in sdk.ts. ("recovered" in batch responses says
//            whether it was.) deobfuscateSessionContext is the identity unless the `secrets.enabled`
//            setting is on (default false) — not applied. NOT reproduced: sdk.ts's second recovery pass,
//            which calls createInterruptedTurnAbortMessage(branch, <the model startup selected>) when the
//            tail is a first-turn user message with no assistant to copy api/provider/model from; that
//            depends on model selection, not on the file.
//            --no-recovery / "recovery":false: plain buildSessionContext() after open().
//            --leaf ID / "leaf": sessionManager.branch(ID) then buildSessionContext() (no recovery).
//   migrate: the bytes of the copied file after SessionManager.open() and sessionManager.ensureOnDisk()
//            (+ close()). omp migrates in memory only; the file is rewritten in full on the next write
//            when #rewriteRequired (set by migration, malformed lines, or stripped OpenAI replay
//            metadata) — ensureOnDisk() performs exactly that rewrite and nothing else (no entry is
//            appended). Files that need no rewrite come out unchanged. An empty or missing-content file
//            gets a fresh header (deterministic id/time, see omp-runtime.ts).
//            --resume / "resume":true: first apply sdk.ts's recovery append (as in `context`), i.e. the
//            file omp leaves behind after resuming without sending anything.
//   tree:    JSON of getTree() as [{id, type, label?, children:[...]}], serialised iteratively by
//            treeJson in ../shared.mjs, as pi-ref.mjs does (keys whose value is undefined omitted).
//   info:    omp's session listing entry for the file — session-listing.ts scanSessionFile(), reached
//            through SessionManager.list(dir, dir) (→ listSessions(): the unfiltered list `omp --resume`
//            builds its picker from) on a directory holding only a copy named session.jsonl whose mtime
//            is --mtime / "mtime" (default 946684800000). JSON.stringify of the entry without `path`:
//            {id, cwd, title?, parentSessionPath?, created, modified, messageCount, assistantTurns, size,
//            firstMessage, allMessagesText, status}, or null when omp leaves the file out. Listing only
//            reads the file.
//   list:    omp's session list of the directory DIR (`file`), read in place: SessionManager.list(DIR, DIR)
//            (listSessions → scanSessionFile of every `*.jsonl` Bun.Glob matches, newest file mtime first,
//            then created, then path; pinned sessions first), or with --all / "all":true SessionManager.listAll()'s
//            listAllSessions(storage, DIR) (`*/*.jsonl`) and the same pin partition. --pins ID,ID / "pins":[…]:
//            the ids in omp's `session-pins.json` (default none). A JSON array of the entries without
//            `allMessagesText`, `path` relative to DIR. DIR must hold no `*.bak` (omp would rename them).
//
// Determinism, isolation and shims: see omp-runtime.ts. Ids are deterministic (counters replace
// crypto.randomUUID and Bun.randomUUIDv7, restarted before every request), the clock is frozen,
// HOME and the agent dir are private temp directories. Offset-less timestamps are parsed in the
// local time zone: set TZ=UTC.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { treeJson } from "../shared.mjs";
import { DEFAULT_NOW_MS, loadOmp, resetIds, setupOmp, takeLogs, tmpRootDir, type Omp } from "./omp-runtime.ts";

interface Request {
	op: string;
	file: string;
	id?: unknown;
	leaf?: string | null;
	/** A directory of blobs (`<sha256>` files) omp's blob store holds for this request only. */
	blobs?: string | null;
	recovery?: boolean;
	resume?: boolean;
	mtime?: number | null;
	/** `list`: every project directory (listAll). */
	all?: boolean;
	/** `list`: the pinned session ids. */
	pins?: string[] | null;
}
interface Result {
	output: string | Buffer;
	rewritten: boolean;
	recovered?: boolean;
}

// ---- temp copies ---------------------------------------------------------------------------------
let tmpSeq = 0;
function freshCopy(file: string, name = basename(file)): { dir: string; copy: string } {
	if (!existsSync(file)) throw new Error(`no such file: ${file}`);
	const dir = join(tmpRootDir(), "req", String(++tmpSeq));
	mkdirSync(dir, { recursive: true });
	const copy = join(dir, name);
	copyFileSync(file, copy);
	return { dir, copy };
}
function cleanup(dir: string): void {
	try {
		rmSync(dir, { recursive: true, force: true });
	} catch {}
}
function withCallerPath(e: unknown, copy: string, file: string): unknown {
	if (e instanceof Error && typeof e.message === "string") e.message = e.message.split(copy).join(file);
	return e;
}

/** SessionManager.open() on a temp copy of `file`. */
async function openCopy(omp: Omp, file: string) {
	const { dir, copy } = freshCopy(file);
	const before = readFileSync(copy);
	resetIds();
	let sm;
	try {
		sm = await omp.SessionManager.open(copy);
	} catch (e) {
		cleanup(dir);
		throw withCallerPath(e, copy, file);
	}
	return { sm, dir, copy, before };
}

/** sdk.ts's resume step: append createInterruptedTurnAbortMessage(getBranch()) if omp makes one. */
function applyRecovery(omp: Omp, sm: any): boolean {
	const branch = sm.getBranch();
	const abort = omp.createInterruptedTurnAbortMessage(branch);
	if (!abort) return false;
	sm.appendMessage(abort);
	return true;
}

async function closeQuietly(sm: any): Promise<void> {
	try {
		await sm.close();
	} catch {}
}

// ---- operations ----------------------------------------------------------------------------------
async function opContext(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const o = await openCopy(omp, req.file);
	try {
		let recovered = false;
		let ctx;
		if (req.leaf !== undefined && req.leaf !== null) {
			o.sm.branch(req.leaf);
			ctx = o.sm.buildSessionContext();
		} else {
			if (req.recovery !== false) recovered = applyRecovery(omp, o.sm);
			ctx = o.sm.buildSessionContext();
		}
		const output = `${JSON.stringify(ctx)}\n`;
		await o.sm.flush();
		const rewritten = !o.before.equals(readFileSync(o.copy));
		return { output, rewritten, recovered };
	} catch (e) {
		throw withCallerPath(e, o.copy, req.file);
	} finally {
		await closeQuietly(o.sm);
		cleanup(o.dir);
	}
}

async function opMigrate(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const o = await openCopy(omp, req.file);
	try {
		const recovered = req.resume === true ? applyRecovery(omp, o.sm) : false;
		await o.sm.ensureOnDisk();
		await o.sm.flush();
		await o.sm.close();
		const after = readFileSync(o.copy);
		return { output: after, rewritten: !o.before.equals(after), recovered };
	} catch (e) {
		throw withCallerPath(e, o.copy, req.file);
	} finally {
		await closeQuietly(o.sm);
		cleanup(o.dir);
	}
}

async function opTree(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const o = await openCopy(omp, req.file);
	try {
		const output = `${treeJson(o.sm.getTree())}\n`;
		return { output, rewritten: !o.before.equals(readFileSync(o.copy)) };
	} catch (e) {
		throw withCallerPath(e, o.copy, req.file);
	} finally {
		await closeQuietly(o.sm);
		cleanup(o.dir);
	}
}

/** `AgentSession.getSessionStats()` of the resumed session: omp's own SessionStatsTracker on a
 *  host holding what sdk.ts gives a resumed agent (`agent.replaceMessages(context.messages)`, the
 *  session manager); its context-usage estimate (a tokenizer and a model) is left out. */
async function opStats(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const o = await openCopy(omp, req.file);
	try {
		const recovered = req.recovery !== false ? applyRecovery(omp, o.sm) : false;
		const messages = o.sm.buildSessionContext().messages;
		const host = {
			agent: { state: { messages } },
			sessionManager: o.sm,
			sessionId: () => o.sm.getSessionId(),
			model: () => undefined,
			modelRegistry: undefined,
			session: {},
		};
		const tracker = new omp.SessionStatsTracker(host);
		// The one method replaced: the estimate of the context's size needs a tokenizer and a model.
		tracker.getContextUsage = () => undefined;
		const { sessionFile: _file, sessionId: _id, contextUsage: _usage, ...stats } = tracker.getSessionStats();
		return { output: `${JSON.stringify(stats)}\n`, rewritten: false, recovered };
	} catch (e) {
		throw withCallerPath(e, o.copy, req.file);
	} finally {
		await closeQuietly(o.sm);
		cleanup(o.dir);
	}
}

const INFO_MTIME_MS = 946_684_800_000;

async function opInfo(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const { dir, copy } = freshCopy(req.file, "session.jsonl");
	try {
		const mtimeMs = req.mtime === undefined || req.mtime === null ? INFO_MTIME_MS : Number(req.mtime);
		if (!Number.isFinite(mtimeMs)) throw new Error(`bad mtime: ${req.mtime}`);
		const when = new Date(mtimeMs);
		utimesSync(copy, when, when);
		const list = await omp.SessionManager.list(dir, dir);
		if (list.length > 1) throw new Error(`listing returned ${list.length} sessions for one file`);
		let output = "null\n";
		if (list.length === 1) {
			const { path: _path, ...info } = list[0];
			output = `${JSON.stringify(info)}\n`;
		}
		return { output, rewritten: false };
	} finally {
		cleanup(dir);
	}
}

async function opList(req: Request): Promise<Result> {
	const omp = await loadOmp();
	const dir = resolve(req.file);
	if (readdirSync(dir, { recursive: true }).some((n) => String(n).endsWith(".bak"))) {
		throw new Error(`${dir} holds *.bak files, which omp's listing would rename`);
	}
	const storage = new omp.FileSessionStorage();
	const found = req.all ? await omp.listAllSessions(storage, dir) : await omp.listSessions(dir, storage);
	const list = omp.sortPinnedFirst(found, new Set(req.pins ?? []));
	const rows = list.map(({ path, allMessagesText: _all, ...info }: any) => ({
		path: path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : path,
		...info,
	}));
	return { output: `${JSON.stringify(rows)}\n`, rewritten: false };
}

const OPS: Record<string, (req: Request) => Promise<Result>> = {
	context: opContext,
	migrate: opMigrate,
	tree: opTree,
	info: opInfo,
	stats: opStats,
	list: opList,
};

export async function run(req: Request): Promise<Result> {
	const fn = OPS[req.op];
	if (!fn) throw new Error(`unknown op: ${req.op}`);
	if (typeof req.file !== "string") throw new Error("request needs a string 'file'");
	const linked = linkBlobs(req.blobs);
	try {
		return await fn(req);
	} finally {
		for (const link of linked) rmSync(link, { force: true });
	}
}

/** Links each file of `dir` into omp's blob store (`$PI_CODING_AGENT_DIR/blobs`, the private
 *  agent dir of omp-runtime.ts) for one request; returns the links to remove after it. A blob
 *  already there (from --agent-dir) is left as it is. */
function linkBlobs(dir: string | null | undefined): string[] {
	if (!dir) return [];
	const store = join(process.env.PI_CODING_AGENT_DIR!, "blobs");
	mkdirSync(store, { recursive: true });
	const linked: string[] = [];
	for (const name of readdirSync(dir)) {
		const link = join(store, name);
		if (existsSync(link)) continue;
		symlinkSync(join(resolve(dir), name), link);
		linked.push(link);
	}
	return linked;
}

function errorText(e: unknown): string {
	if (e instanceof Error) return `${e.name}: ${e.message}`;
	return String(e);
}

// ---- CLI -----------------------------------------------------------------------------------------
function usage(): void {
	process.stderr.write(
		"usage (TZ=UTC; BUN=conformance/reference/vendor/omp/bun/bin/bun):\n" +
			"  $BUN omp-ref.ts context FILE [--leaf ID] [--no-recovery]\n" +
			"  $BUN omp-ref.ts migrate FILE [--resume]\n" +
			"  $BUN omp-ref.ts tree FILE\n" +
			"  $BUN omp-ref.ts info FILE [--mtime MS]\n" +
			"  $BUN omp-ref.ts list DIR [--all] [--pins ID,ID]\n" +
			"  $BUN omp-ref.ts batch   (NDJSON requests on stdin)\n" +
			"options for all: --agent-dir DIR (read blobs from DIR/blobs)  --now MS|real (default 946684800000)\n",
	);
	process.exitCode = 2;
}

interface Cli {
	req: Request;
	agentDir: string | null;
	now: number | null;
}
function parseArgs(argv: string[]): Cli {
	const req: Request = { op: argv[0]!, file: undefined as unknown as string, leaf: null };
	let agentDir: string | null = process.env.PI_CODING_AGENT_DIR || null;
	let now: number | null = DEFAULT_NOW_MS;
	const value = (i: number, name: string) => {
		if (i + 1 >= argv.length) throw new Error(`${name} needs a value`);
		return argv[i + 1]!;
	};
	for (let i = 1; i < argv.length; i++) {
		const a = argv[i]!;
		if (a === "--leaf") req.leaf = value(i++, a);
		else if (a === "--mtime") req.mtime = Number(value(i++, a));
		else if (a === "--no-recovery") req.recovery = false;
		else if (a === "--all") req.all = true;
		else if (a === "--pins") req.pins = value(i++, a).split(",").filter(Boolean);
		else if (a === "--resume") req.resume = true;
		else if (a === "--agent-dir") agentDir = value(i++, a);
		else if (a === "--blobs") req.blobs = value(i++, a);
		else if (a === "--now") {
			const v = value(i++, a);
			now = v === "real" ? null : Number(v);
			if (now !== null && !Number.isFinite(now)) throw new Error(`bad --now: ${v}`);
		} else if (a.startsWith("--")) throw new Error(`unknown option: ${a}`);
		else if (req.file === undefined) req.file = a;
		else throw new Error(`unexpected argument: ${a}`);
	}
	return { req, agentDir, now };
}

function respond(id: unknown, body: Record<string, unknown>): void {
	const resp = id !== undefined ? { id, ...body } : body;
	process.stdout.write(`${JSON.stringify(resp)}\n`);
}

async function batch(): Promise<void> {
	await loadOmp();
	const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
	for await (const line of rl) {
		if (!line.trim()) continue;
		let id: unknown;
		takeLogs();
		try {
			const req = JSON.parse(line) as Request;
			id = req?.id;
			const r = await run(req);
			const bytes = Buffer.isBuffer(r.output) ? r.output : Buffer.from(r.output, "utf8");
			const body: Record<string, unknown> = {
				ok: true,
				output: bytes.toString("utf8"),
				output_b64: bytes.toString("base64"),
				rewritten: r.rewritten,
			};
			if (r.recovered !== undefined) body.recovered = r.recovered;
			const warnings = takeLogs();
			if (warnings.length > 0) body.warnings = warnings;
			respond(id, body);
		} catch (e) {
			respond(id, { ok: false, error: errorText(e) });
		}
	}
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	if (argv.length === 0 || argv[0] === "-h" || argv[0] === "--help") return usage();
	let cli: Cli;
	try {
		cli = parseArgs(argv);
		if (cli.req.op !== "batch" && (!OPS[cli.req.op] || cli.req.file === undefined)) return usage();
	} catch (e) {
		process.stderr.write(`omp-ref: ${(e as Error).message}\n`);
		process.exitCode = 2;
		return;
	}
	setupOmp({ agentDir: cli.agentDir, now: cli.now });
	if (cli.req.op === "batch") return batch();
	try {
		const r = await run(cli.req);
		process.stdout.write(r.output);
		for (const w of takeLogs()) process.stderr.write(`omp-ref: omp logged ${w.level}: ${w.message}\n`);
	} catch (e) {
		process.stderr.write(`omp-ref: omp threw: ${errorText(e)}\n`);
		process.exitCode = 1;
	}
}

if (import.meta.main) await main();
