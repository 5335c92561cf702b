#!/usr/bin/env node
// run-diff.mjs — differential test: our `pi-session` binary vs the real pi SessionManager, or
// (--dialect omp) vs oh-my-pi (omp) 18.3.4's own session code.
//
//   node scripts/diff/run-diff.mjs --seed S --count N [--bin PATH] [--keep DIR] [options]
//   node scripts/diff/run-diff.mjs --dialect omp --seed S --count N [--bin PATH] [--keep DIR] [options]
//
// --dialect pi (the default):
// 1. Generates N sessions with gen-sessions.mjs (seeded; driven by the real pi 0.73.1 API, plus
//    hand-edited variants) into DIR (--keep) or a temp dir.
// 2. For every file runs, on both sides:
//      context:  ref `context FILE [--leaf ID]`        ours `BIN context FILE [--leaf ID] --pi V`
//      llm:      ref `context FILE [--leaf ID] --llm`  ours `BIN context FILE [--leaf ID] --llm --pi V`
//      migrate:  ref `migrate FILE`                    ours `BIN migrate FILE --stdout --pi V`
//      tree:     ref `tree FILE`                       ours `BIN tree FILE --pi V`
//      info:     ref `info FILE --mtime T`             ours `BIN info FILE --mtime T --pi V`
//                (buildSessionInfo; T = 946684800000, the mtime fallback of `modified`)
//    (V = --pi, the same version the reference runs.)
//    The reference runs in one long-lived `pi-ref.mjs batch` process (restarted after a timeout,
//    since pi hangs on parent cycles). Ours runs with PI_SESSION_DETERMINISTIC_IDS=1 (migration ids
//    00000001, 00000002, … in assignment order, like the patched reference). Both sides get TZ=UTC.
// 3. Compares stdout byte for byte and prints each mismatch with the first differing position.
//
// Outcome of one comparison:
//   match        both succeeded with identical stdout
//   both-error   the reference threw and ours exited non-zero (messages are not compared)
//   expected     a documented deliberate divergence (see ARCHITECTURE "differences from pi"):
//                  - invalid-header: pi's loader rejected the header (0.73.1 then truncates the file
//                    to a fresh header and "succeeds"); ours refuses with exit 1
//                  - pi-hangs: the reference timed out (parent cycle); ours exited non-zero
//                  - null-message: pi threw "Cannot read properties of null (reading 'role')" (a
//                    message entry without a message object on the path); ours skipped it and succeeded
//                  - keeps-unparseable-lines: migrate outputs are equal once the lines pi drops
//                    (blank or not JSON) are removed from ours
//                Counted separately; they fail the run only with --strict.
//   mismatch     anything else → exit 1
//
// --dialect omp (fetch omp and Bun first: node conformance/reference/omp/fetch-omp.mjs):
// 1. Generates N sessions with conformance/reference/omp/omp-gen.ts (seeded; written by omp's own
//    SessionManager under the pinned Bun, conformance/reference/vendor/omp/bun/bin/bun).
// 2. For every file, ops context, tree, stats, info and migrate (--ops to choose):
//      ref:   omp-ref.ts batch  {"op":"context","file":F[,"leaf":ID]}  (open → interrupted-turn
//             recovery as sdk.ts does it → buildSessionContext, JSON.stringify'd); "tree" (getTree);
//             "stats" (getSessionStats of the resumed session, without the context-size estimate);
//             {"op":"info","file":F,"mtime":T} (scanSessionFile, the listing entry);
//             {"op":"migrate","file":F} (the file after open + ensureOnDisk)
//      ours:  BIN context --dialect omp F [--leaf ID]; BIN tree --dialect omp F;
//             BIN stats --dialect omp --format json F, of which the session's `omp` numbers;
//             BIN info --dialect omp --mtime T F; BIN migrate --stdout --dialect omp F --blobs D
//             (a scratch store: the images omp's rewrite moves out go there)
//    The reference runs in one long-lived `omp-ref.ts batch` process under Bun (restarted after a
//    timeout: omp hangs on duplicate-id cycles and ignores SIGTERM, so it gets SIGKILL, as pi does).
// 3. As for pi; a mismatch's report also names the JSON path of the first difference
//    (e.g. .messages[3].content[1]), and with --keep every mismatching file is copied with both
//    outputs to DIR/mismatch/<name>.{jsonl,ref.out,ours.out,diff.txt}. The summary adds the time
//    spent generating, in the reference and in ours, how many files had --leaf and on how many omp
//    appended its interrupted-turn message.
//   Outcomes: match and both-error as for pi; expected = ours refused with "omp's context of it is
//   not reproduced yet" (omp-unsupported; omp-gen.ts does not generate those features); anything
//   else is a mismatch.
//
// Options:
//   --dialect D       pi (default) or omp
//   --bin PATH        our binary (default: <repo>/target/debug/pi-session). `--bin ref:0.87` (or
//                     ref:0.73) compares against the reference itself instead — a self-test of this
//                     script and a way to see how the two pi versions differ (pi only).
//   --pi V            reference version: 0.73 (default), 0.87 or 1.5 (fetch-pi-1.5.mjs first; pi only)
//   --keep DIR        generate into DIR and keep it (default: temp dir, kept only on mismatch); a kept
//                     directory gets failing.txt, the names of the failing sessions one per line
//   --input DIR       skip generation; use DIR/*.jsonl (with optional DIR/<name>.args.json)
//   --ops LIST        comma list of context,llm,migrate,tree,info (default: context,llm,migrate;
//                     omp: context,tree,stats,info,migrate, all of them)
//   --no-leaf         ignore the --leaf choices of the .args.json files (each file's own leaf only)
//   --timeout-ms MS   per-invocation timeout (default 5000; omp: +10 s for the first request of a
//                     batch process, which loads omp's ~525 modules)
//   --no-hang         tell the generator not to produce cycle / null-message files (pi only)
//   --strict          count expected divergences as failures
//   --max-report N    print details of at most N mismatches (default 30)
//   --quiet           only the summary

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, basename } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const REF_DIR = join(REPO, "conformance", "reference");
const PI_REF = join(REF_DIR, "pi-ref.mjs");
const GEN = join(HERE, "gen-sessions.mjs");
const BUN = join(REF_DIR, "vendor", "omp", "bun", "bin", process.platform === "win32" ? "bun.exe" : "bun");
const OMP_REF = join(REF_DIR, "omp", "omp-ref.ts");
const OMP_GEN = join(REF_DIR, "omp", "omp-gen.ts");
const ALL_OPS = ["context", "llm", "migrate", "tree", "info", "stats"];
// `info` (buildSessionInfo) falls back to the file's mtime for `modified`: both sides get this one
// (2000-01-01T00:00:00.000Z, as in the conformance corpus).
const INFO_MTIME_MS = 946_684_800_000;
const CHILD_ENV = { ...process.env, TZ: "UTC", PI_SESSION_DETERMINISTIC_IDS: "1" };
// pi-ref.mjs puts its temp copies here, omp-ref.ts its private HOME / agent dir / temp copies;
// removed at exit (a batch process killed on timeout cannot clean up after itself).
const REF_TMP = mkdtempSync(join(tmpdir(), "pi-ref-root-"));
CHILD_ENV.PI_REF_TMPDIR = REF_TMP;
CHILD_ENV.OMP_REF_TMPDIR = REF_TMP;
process.on("exit", () => rmSync(REF_TMP, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------------
// args
// ---------------------------------------------------------------------------------------------------
function parseArgs(argv) {
	const a = {
		dialect: "pi", seed: "1", count: 20, bin: join(REPO, "target", "debug", "pi-session"), keep: null, input: null, pi: "0.73",
		piGiven: false, ops: null, leaf: true, timeoutMs: 5000, noHang: false, strict: false, maxReport: 30, quiet: false,
	};
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const val = () => {
			if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
			return argv[++i];
		};
		switch (k) {
			case "--dialect": a.dialect = val(); break;
			case "--seed": a.seed = val(); break;
			case "--count": a.count = Number.parseInt(val(), 10); break;
			case "--bin": a.bin = val(); break;
			case "--keep": a.keep = val(); break;
			case "--input": a.input = val(); break;
			case "--pi": a.pi = val(); a.piGiven = true; break;
			case "--ops": a.ops = val().split(",").map((s) => s.trim()).filter(Boolean); break;
			case "--no-leaf": a.leaf = false; break;
			case "--timeout-ms": a.timeoutMs = Number.parseInt(val(), 10); break;
			case "--no-hang": a.noHang = true; break;
			case "--strict": a.strict = true; break;
			case "--max-report": a.maxReport = Number.parseInt(val(), 10); break;
			case "--quiet": a.quiet = true; break;
			case "-h": case "--help": throw new Error("help");
			default: throw new Error(`unknown argument: ${k}`);
		}
	}
	const dialect = DIALECTS[a.dialect];
	if (!dialect) throw new Error(`unknown --dialect: ${a.dialect} (use pi or omp)`);
	a.ops ??= dialect.defaultOps;
	for (const op of a.ops) if (!ALL_OPS.includes(op)) throw new Error(`unknown op in --ops: ${op}`);
	for (const op of a.ops) if (!dialect.ops.includes(op)) throw new Error(`--dialect ${a.dialect} compares ${dialect.ops.join(",")} only, not ${op}`);
	if (a.dialect === "omp") {
		if (a.piGiven) throw new Error("--pi is for --dialect pi");
		if (a.bin.startsWith("ref:")) throw new Error("--bin ref:V is for --dialect pi");
		if (a.noHang) throw new Error("--no-hang is for --dialect pi");
	}
	a.pi = a.pi.replace(/^(0\.73|0\.87)\.1$/, "$1").replace(/^1\.5\.2$/, "1.5");
	if (!["0.73", "0.87", "1.5"].includes(a.pi)) throw new Error(`unknown --pi version: ${a.pi} (use 0.73, 0.87 or 1.5)`);
	if (!Number.isInteger(a.count) || a.count < 0) throw new Error("--count must be a non-negative integer");
	return a;
}

// ---------------------------------------------------------------------------------------------------
// Reference: long-lived batch process with per-request timeout
// ---------------------------------------------------------------------------------------------------
class RefBatch {
	// Every request carries a sequence number that pi-ref.mjs (omp-ref.ts) echoes back as "id"; a
	// response is only accepted by the waiter of the same process with the same id. Without this, a
	// killed process (timeout) whose "exit" event fired after the next request had been sent rejected
	// THAT request, and the restarted process's answer to it was then handed to the request after —
	// every response from there on was paired with the previous request (all later files "mismatched").
	/**
	 * @param {number} timeoutMs per request
	 * @param {{name: string, command: string, args: string[], cwd?: string, firstRequestExtraMs: number}} ref
	 *   the batch process (name: for messages); firstRequestExtraMs: added to the timeout of each
	 *   process's first request (omp loads its ~525 modules then)
	 */
	constructor(timeoutMs, ref) {
		this.timeoutMs = timeoutMs;
		this.ref = ref;
		this.cur = null; // { proc, waiter, stderr, requests }
		this.seq = 0;
		this.restarts = 0;
		this.crashes = 0;
	}
	start() {
		const proc = spawn(this.ref.command, this.ref.args, { cwd: this.ref.cwd, env: CHILD_ENV, stdio: ["pipe", "pipe", "pipe"] });
		const state = { proc, waiter: null, stderr: "", requests: 0 };
		this.cur = state;
		proc.stderr.on("data", (d) => {
			state.stderr = (state.stderr + d.toString()).slice(-4000);
		});
		const rl = createInterface({ input: proc.stdout, crlfDelay: Infinity });
		rl.on("line", (line) => {
			const w = state.waiter;
			if (!w) return; // late output of a request that already timed out
			let msg;
			try {
				msg = JSON.parse(line);
			} catch {
				return; // not a response line
			}
			if (msg === null || typeof msg !== "object" || msg.id !== w.id) return; // stale response
			state.waiter = null;
			w.resolve(msg);
		});
		proc.on("exit", (code, signal) => {
			if (this.cur === state) this.cur = null;
			const w = state.waiter;
			state.waiter = null;
			if (w) w.reject(new Error(`${this.ref.name} batch process exited (code ${code}, signal ${signal}): ${state.stderr.trim()}`));
		});
		proc.stdin.on("error", () => {});
		return state;
	}
	kill() {
		const state = this.cur;
		this.cur = null;
		if (!state) return;
		state.waiter = null;
		// SIGKILL: omp's postmortem handler swallows SIGTERM while a request spins.
		if (state.proc.exitCode === null && state.proc.signalCode === null) state.proc.kill("SIGKILL");
	}
	/** Returns {ok, output, error, rewritten, invalidHeader} or {ok: false, timeout|crashed: true, error}. */
	async request(req) {
		const state = this.cur ?? this.start();
		const id = ++this.seq;
		const line = new Promise((resolve, reject) => {
			state.waiter = { id, resolve, reject };
		});
		let timer;
		const extraMs = state.requests++ === 0 ? this.ref.firstRequestExtraMs : 0;
		const timeout = new Promise((resolve) => {
			timer = setTimeout(() => resolve(null), this.timeoutMs + extraMs);
		});
		state.proc.stdin.write(`${JSON.stringify({ ...req, id })}\n`);
		let result;
		try {
			result = await Promise.race([line, timeout]);
		} catch (e) {
			clearTimeout(timer);
			this.crashes++;
			return { ok: false, error: e.message, crashed: true };
		}
		clearTimeout(timer);
		if (result === null) {
			if (this.cur === state) this.kill();
			else state.waiter = null;
			this.restarts++;
			return { ok: false, timeout: true, error: `timed out after ${this.timeoutMs} ms` };
		}
		const { id: _id, ...resp } = result;
		return resp;
	}
	close() {
		const state = this.cur;
		this.cur = null;
		if (state) state.proc.stdin.end();
	}
}

// ---------------------------------------------------------------------------------------------------
// Ours, and what the reference is asked
// ---------------------------------------------------------------------------------------------------
function oursArgs(op, file, leaf, pi) {
	const leafArgs = leaf !== undefined && leaf !== null ? ["--leaf", leaf] : [];
	// Our binary follows the same pi version as the reference (every subcommand takes --pi).
	const piArgs = ["--pi", pi];
	if (op === "context") return ["context", file, ...leafArgs, ...piArgs];
	if (op === "llm") return ["context", file, ...leafArgs, "--llm", ...piArgs];
	if (op === "migrate") return ["migrate", file, "--stdout", ...piArgs];
	if (op === "info") return ["info", file, "--mtime", String(INFO_MTIME_MS), ...piArgs];
	return [op, file, ...piArgs]; // tree
}
function refRequest(op, file, leaf, pi) {
	if (op === "info") return { op, file, pi, mtime: INFO_MTIME_MS };
	if (op !== "context" && op !== "llm") return { op, file, pi };
	return { op: "context", file, leaf: leaf ?? null, llm: op === "llm", pi };
}
function ompOursArgs(op, file, leaf) {
	if (op === "stats") return ["stats", "--dialect", "omp", "--format", "json", file];
	if (op === "tree") return ["tree", "--dialect", "omp", file];
	if (op === "info") return ["info", "--dialect", "omp", "--mtime", String(INFO_MTIME_MS), file];
	// A scratch blob store: images omp's rewrite moves out go there, never into a real store.
	if (op === "migrate")
		return ["migrate", "--stdout", "--dialect", "omp", "--sequential-ids", "--blobs", join(REF_TMP, "ours-blobs"), file];
	return [op, "--dialect", "omp", file, ...(leaf !== null ? ["--leaf", leaf] : [])];
}
/** What omp's getSessionStats gives, out of our stats report: the session's `omp` numbers
 *  (JSON.stringify of them, as omp-ref.ts prints them). */
function ompOursOutput(op, output) {
	if (op !== "stats") return output;
	const group = JSON.parse(output.toString("utf8")).groups[0];
	if (group?.omp === undefined) throw new Error(`no omp numbers in the report: ${output.toString("utf8").slice(0, 300)}`);
	return Buffer.from(`${JSON.stringify(group.omp)}\n`);
}
function ompRefRequest(op, file, leaf) {
	if (op === "info") return { op, file, mtime: INFO_MTIME_MS };
	if (op === "migrate") return { op, file };
	return { op, file, leaf };
}
function runOurs(bin, args, timeoutMs) {
	const r = spawnSync(bin, args, { env: CHILD_ENV, timeout: timeoutMs, maxBuffer: 1 << 30 });
	if (r.error && r.error.code === "ETIMEDOUT") return { ok: false, timeout: true, error: `timed out after ${timeoutMs} ms` };
	if (r.error) return { ok: false, error: String(r.error.message) };
	if (r.status !== 0) {
		return { ok: false, status: r.status, signal: r.signal, error: r.stderr.toString().trim() || `exit ${r.status ?? r.signal}` };
	}
	return { ok: true, output: r.stdout };
}

// ---------------------------------------------------------------------------------------------------
// Comparison and reporting
// ---------------------------------------------------------------------------------------------------
function firstDiff(a, b) {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
	return a.length === b.length ? -1 : n;
}
/** Escape a snippet for one-line display. */
function show(buf) {
	return JSON.stringify(buf.toString("utf8")).slice(1, -1);
}
function lineInfo(buf, offset) {
	let line = 1;
	let start = 0;
	for (let i = 0; i < offset && i < buf.length; i++) {
		if (buf[i] === 0x0a) {
			line++;
			start = i + 1;
		}
	}
	return { line, col: offset - start + 1, start };
}
function lineAt(buf, start) {
	let end = buf.indexOf(0x0a, start);
	if (end < 0) end = buf.length;
	return buf.subarray(start, end);
}
/** withJsonPath: also name where the parsed outputs first differ (see jsonPathNote). */
function diffReport(ref, ours, withJsonPath = false) {
	const at = firstDiff(ref, ours);
	const { line, col, start } = lineInfo(ref, at);
	const note = withJsonPath ? jsonPathNote(ref, ours) : "";
	const out = [`  first difference at byte ${at} (line ${line}, column ${col}); ref ${ref.length} bytes, ours ${ours.length} bytes${note}`];
	const W = 90;
	const refLine = lineAt(ref, start);
	const oursLine = lineAt(ours, start);
	const lo = Math.max(0, col - 1 - W);
	const cut = (l) => {
		const s = l.subarray(lo, col - 1 + W);
		return `${lo > 0 ? "…" : ""}${show(s)}${col - 1 + W < l.length ? "…" : ""}`;
	};
	if (line > 1) {
		// one line of common context
		const prevStart = ref.lastIndexOf(0x0a, start - 2) + 1;
		const prev = ref.subarray(prevStart, start - 1);
		out.push(`    ${show(prev.subarray(0, 2 * W))}${prev.length > 2 * W ? "…" : ""}`);
	}
	out.push(`  - ${cut(refLine)}`);
	out.push(`  + ${cut(oursLine)}`);
	const tail = (b) => (at >= b.length ? "(end of output)" : `"${show(b.subarray(at, at + 40))}"${at + 40 < b.length ? "…" : ""}`);
	out.push(`  from the difference on: ref ${tail(ref)} | ours ${tail(ours)}`);
	return out.join("\n");
}
/** Where the two parsed outputs first differ (e.g. messages[3].content[1]), when both parse. */
function jsonPathNote(ref, ours) {
	let a;
	let b;
	try {
		a = JSON.parse(ref.toString("utf8"));
		b = JSON.parse(ours.toString("utf8"));
	} catch {
		return "";
	}
	const p = firstJsonDiff(a, b, "");
	return p === null ? " (same JSON value: formatting/order differs)" : ` (at ${p || "<root>"})`;
}
function firstJsonDiff(a, b, at) {
	if (a === b) return null;
	if (typeof a !== typeof b || a === null || b === null || typeof a !== "object" || Array.isArray(a) !== Array.isArray(b)) {
		return Object.is(a, b) ? null : at;
	}
	if (Array.isArray(a)) {
		for (let i = 0; i < Math.max(a.length, b.length); i++) {
			const d = firstJsonDiff(a[i], b[i], `${at}[${i}]`);
			if (d !== null) return d;
		}
		return null;
	}
	const ka = Object.keys(a);
	const kb = Object.keys(b);
	for (const k of new Set([...ka, ...kb])) {
		const d = firstJsonDiff(a[k], b[k], `${at}.${k}`);
		if (d !== null) return d;
	}
	if (ka.join("\u0000") !== kb.join("\u0000")) return `${at} (key order: ref ${ka.join(",")} | ours ${kb.join(",")})`;
	return null;
}
/** Lines pi's parser drops: blank after JS trim, or not JSON. */
function piKeepsLine(line) {
	if (line.trim() === "") return false;
	try {
		JSON.parse(line);
		return true;
	} catch {
		return false;
	}
}
/** The reference's exact output bytes: output_b64 when the batch sends it (invalid UTF-8 survives). */
function refBytes(resp) {
	return typeof resp.output_b64 === "string" ? Buffer.from(resp.output_b64, "base64") : Buffer.from(resp.output, "utf8");
}
function classify(op, ref, ours, dialect) {
	if (ref.ok && ours.ok) {
		const refBuf = refBytes(ref);
		if (refBuf.equals(ours.output)) return { kind: "match" };
		if (op === "migrate") {
			const kept = ours.output
				.toString("utf8")
				.split("\n")
				.filter((l, i, arr) => !(i === arr.length - 1 && l === "") && piKeepsLine(l))
				.map((l) => `${l}\n`)
				.join("");
			if (kept.length > 0 && Buffer.from(kept, "utf8").equals(refBuf)) return { kind: "expected", reason: "keeps-unparseable-lines" };
		}
		return { kind: "mismatch", reason: "output differs", detail: diffReport(refBuf, ours.output, dialect.jsonPathInReport) };
	}
	if (!ref.ok && !ours.ok) {
		if (dialect.refHangs && (ref.timeout || ref.crashed)) return { kind: "expected", reason: dialect.refHangs };
		return { kind: "both-error" };
	}
	if (ref.ok && !ours.ok) {
		const expected = dialect.oursRefuses(ref, ours);
		if (expected) return { kind: "expected", ...expected };
		return { kind: "mismatch", reason: "ours failed, reference succeeded", detail: `  ours: ${ours.error}` };
	}
	const expected = ref.timeout ? null : dialect.refThrows(ref);
	if (expected) return { kind: "expected", ...expected };
	// reference failed (threw or hung), ours succeeded
	return {
		kind: "mismatch",
		reason: ref.timeout ? "reference hung, ours succeeded" : "reference threw, ours succeeded",
		detail: `  ref: ${ref.error}\n  ours stdout: ${show(ours.output.subarray(0, 200))}${ours.output.length > 200 ? "…" : ""}`,
	};
}

// ---------------------------------------------------------------------------------------------------
// Dialects: what differs between the pi and the omp comparison
// ---------------------------------------------------------------------------------------------------
const OMP_VERSION = JSON.parse(readFileSync(join(REF_DIR, "omp", "packages.json"), "utf8")).packages.find(
	(p) => p.name === "@oh-my-pi/pi-coding-agent",
).version;
const DIALECTS = {
	pi: {
		ops: ["context", "llm", "migrate", "tree", "info"],
		defaultOps: ["context", "llm", "migrate"],
		ref: { name: "reference", command: process.execPath, args: [PI_REF, "batch"], firstRequestExtraMs: 0 },
		refLabel: (args) => `pi ${args.pi}`,
		notInstalled: () =>
			existsSync(join(REF_DIR, "node_modules")) ? null : "reference not installed; run: (cd conformance/reference && npm ci)",
		binHint: "; --bin ref:0.87 compares the two references",
		generator: (args, dir) => ({
			name: "gen-sessions",
			command: process.execPath,
			args: [GEN, "--seed", args.seed, "--count", String(args.count), "--out", dir, ...(args.noHang ? ["--no-hang"] : [])],
			options: { stdio: ["ignore", "inherit", "inherit"] },
		}),
		refRequest: (op, file, leaf, args) => refRequest(op, file, leaf, args.pi),
		oursArgs: (op, file, leaf, args) => oursArgs(op, file, leaf, args.pi),
		// Expected divergences (see the top of this file).
		// A hung pi grows memory on cycles; if the batch process died instead of timing out, same thing.
		refHangs: "pi-hangs",
		oursRefuses: (ref) => (ref.invalidHeader ? { reason: "invalid-header" } : null),
		// A `message` entry whose message is null/missing on the path: pi throws a TypeError reading
		// .role; we skip the entry with a diagnostic.
		refThrows: (ref) =>
			/Cannot read properties of (null|undefined) \(reading 'role'\)/.test(ref.error ?? "") ? { reason: "null-message" } : null,
		jsonPathInReport: false,
		keepOutputs: false,
		timing: (t) => `${t.total}s`,
		summaryNote: null,
	},
	omp: {
		ops: ["context", "tree", "stats", "info", "migrate"],
		defaultOps: ["context", "tree", "stats", "info", "migrate"],
		ref: { name: "omp-ref", command: BUN, args: [OMP_REF, "batch"], cwd: REF_DIR, firstRequestExtraMs: 10_000 },
		refLabel: () => `omp ${OMP_VERSION}`,
		notInstalled: () =>
			existsSync(BUN) && existsSync(join(REF_DIR, "vendor", "omp", "node_modules", "@oh-my-pi", "pi-coding-agent"))
				? null
				: "omp reference not fetched; run: node conformance/reference/omp/fetch-omp.mjs",
		binHint: "",
		generator: (args, dir) => ({
			name: "omp-gen.ts",
			command: BUN,
			args: [OMP_GEN, "--seed", args.seed, "--count", String(args.count), "--out", dir],
			options: { cwd: REF_DIR, env: CHILD_ENV, stdio: ["ignore", "inherit", "inherit"] },
		}),
		refRequest: ompRefRequest,
		oursArgs: ompOursArgs,
		oursOutput: ompOursOutput,
		refHangs: null,
		// omp features our binary does not reproduce yet (omp-gen.ts does not generate them).
		oursRefuses: (ref, ours) =>
			/omp-unsupported|is not reproduced yet/.test(ours.error ?? "") ? { reason: "omp-unsupported", detail: `  ours: ${ours.error}` } : null,
		refThrows: () => null,
		jsonPathInReport: true,
		keepOutputs: true,
		timing: (t) => `${t.gen !== null ? `gen ${t.gen}s, ` : ""}omp-ref batch ${t.ref}s, ours ${t.ours}s`,
		summaryNote: (n) => `${n.withLeaf} with --leaf; omp appended its interrupted-turn message on ${n.recovered}`,
	},
};

// ---------------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------------
async function main() {
	let args;
	try {
		args = parseArgs(process.argv.slice(2));
	} catch (e) {
		if (e.message !== "help") process.stderr.write(`run-diff: ${e.message}\n`);
		process.stderr.write(
			"usage: node scripts/diff/run-diff.mjs --seed S --count N [--bin PATH|ref:0.87] [--keep DIR] [--input DIR]\n" +
				"       [--pi 0.73|0.87] [--ops context,llm,migrate,tree,info] [--timeout-ms MS] [--no-hang] [--strict] [--max-report N] [--quiet]\n" +
				"       [--dialect pi|omp] [--no-leaf]   (--dialect omp: --ops context,tree,stats,info,migrate; no --pi, ref:V or --no-hang)\n",
		);
		process.exit(2);
	}
	const dialect = DIALECTS[args.dialect];
	const notInstalled = dialect.notInstalled();
	if (notInstalled) {
		process.stderr.write(`run-diff: ${notInstalled}\n`);
		process.exit(2);
	}

	// Ours: a binary, or the reference itself ("ref:0.87").
	let oursRef = null;
	if (args.bin.startsWith("ref:")) {
		oursRef = { pi: args.bin.slice(4), batch: new RefBatch(args.timeoutMs, dialect.ref) };
	} else {
		args.bin = resolve(args.bin);
		if (!existsSync(args.bin)) {
			process.stderr.write(
				`run-diff: binary not found: ${args.bin}\n` +
					`  build it (cargo build -p pi-session) or pass --bin PATH${dialect.binHint}.\n`,
			);
			process.exit(2);
		}
	}

	// Sessions.
	let dir;
	let tempDir = null;
	let genSecs = null;
	if (args.input) {
		dir = resolve(args.input);
		if (!existsSync(dir)) {
			process.stderr.write(`run-diff: --input directory not found: ${dir}\n`);
			process.exit(2);
		}
	} else {
		if (args.keep) {
			dir = resolve(args.keep);
			mkdirSync(dir, { recursive: true });
		} else {
			tempDir = mkdtempSync(join(tmpdir(), `${args.dialect}-diff-`));
			dir = tempDir;
		}
		const gen = dialect.generator(args, dir);
		const tg = Date.now();
		const g = spawnSync(gen.command, gen.args, gen.options);
		genSecs = ((Date.now() - tg) / 1000).toFixed(1);
		if (g.status !== 0) {
			process.stderr.write(`run-diff: ${gen.name} failed (exit ${g.status ?? g.signal})\n`);
			process.exit(2);
		}
	}
	const files = readdirSync(dir)
		.filter((f) => f.endsWith(".jsonl"))
		.filter((f) => args.input || f.startsWith(`${args.seed}-`))
		.sort((a, b) => a.localeCompare(b, "en", { numeric: true }));

	if (files.length === 0) process.stderr.write(`run-diff: warning: no .jsonl files in ${dir}\n`);

	// --keep DIR, omp: every mismatching file with both outputs in DIR/mismatch/.
	const outputsDir = args.keep && dialect.keepOutputs ? join(resolve(args.keep), "mismatch") : null;
	if (outputsDir) rmSync(outputsDir, { recursive: true, force: true });

	const ref = new RefBatch(args.timeoutMs, dialect.ref);
	const counts = { match: 0, "both-error": 0, expected: 0, mismatch: 0 };
	const perOp = {};
	const expectedReasons = {};
	const mismatches = [];
	const notes = { withLeaf: 0, recovered: 0 };
	const t0 = Date.now();
	let refMs = 0;
	let oursMs = 0;

	for (const f of files) {
		const file = join(dir, f);
		const argsFile = file.replace(/\.jsonl$/, ".args.json");
		let leaf = null;
		if (args.leaf && existsSync(argsFile)) {
			try {
				const j = JSON.parse(readFileSync(argsFile, "utf8"));
				if (typeof j.leaf === "string") leaf = j.leaf;
			} catch {}
		}
		if (leaf !== null) notes.withLeaf++;
		for (const op of args.ops) {
			const tr = Date.now();
			const refRes = await ref.request(dialect.refRequest(op, file, leaf, args));
			const to = Date.now();
			refMs += to - tr;
			if (refRes.ok && refRes.recovered === true) notes.recovered++;
			let oursRes;
			if (oursRef) {
				const r = await oursRef.batch.request(refRequest(op, file, leaf, oursRef.pi));
				oursRes = r.ok ? { ok: true, output: refBytes(r) } : r;
			} else {
				oursRes = runOurs(args.bin, dialect.oursArgs(op, file, leaf, args), args.timeoutMs);
				if (oursRes.ok && dialect.oursOutput) {
					try {
						oursRes = { ok: true, output: dialect.oursOutput(op, oursRes.output) };
					} catch (e) {
						oursRes = { ok: false, error: e.message };
					}
				}
			}
			oursMs += Date.now() - to;
			const c = classify(op, refRes, oursRes, dialect);
			counts[c.kind]++;
			perOp[op] ??= { match: 0, "both-error": 0, expected: 0, mismatch: 0 };
			perOp[op][c.kind]++;
			if (c.kind === "expected") expectedReasons[c.reason] = (expectedReasons[c.reason] ?? 0) + 1;
			if (c.kind === "mismatch" || (args.strict && c.kind === "expected")) {
				const cmd = oursRef ? `ref:${oursRef.pi}` : basename(args.bin);
				const oursPi = { ...args, pi: oursRef ? oursRef.pi : args.pi };
				const invocation = `${cmd} ${dialect.oursArgs(op, file, leaf, oursPi).join(" ")}`;
				mismatches.push({ f, op, c, invocation });
				if (!args.quiet && mismatches.length <= args.maxReport) {
					process.stdout.write(`MISMATCH ${f} [${op}${leaf !== null && (op === "context" || op === "llm") ? ` --leaf ${leaf}` : ""}] ${c.reason}\n  $ ${invocation}\n${c.detail ?? ""}\n\n`);
				}
				if (outputsDir) {
					mkdirSync(outputsDir, { recursive: true });
					const stem = join(outputsDir, `${f.replace(/\.jsonl$/, "")}${args.ops.length > 1 ? `.${op}` : ""}`);
					writeFileSync(`${stem}.jsonl`, readFileSync(file));
					writeFileSync(`${stem}.ref.out`, refRes.ok ? refBytes(refRes) : `ERROR: ${refRes.error}\n`);
					writeFileSync(`${stem}.ours.out`, oursRes.ok ? oursRes.output : `ERROR: ${oursRes.error}\n`);
					writeFileSync(`${stem}.diff.txt`, `${c.reason}\n$ ${invocation}\n${c.detail ?? ""}\n`);
				}
			}
		}
	}
	ref.close();
	oursRef?.batch.close();

	const timing = dialect.timing({
		total: ((Date.now() - t0) / 1000).toFixed(1),
		gen: genSecs,
		ref: (refMs / 1000).toFixed(1),
		ours: (oursMs / 1000).toFixed(1),
	});
	const fmt = (o) => `${o.match} match, ${o["both-error"]} both-error, ${o.expected} expected, ${o.mismatch} mismatch`;
	process.stdout.write(`\n== run-diff summary (${args.input ? args.input : `seed ${args.seed}`}, ${files.length} files, ref ${dialect.refLabel(args)} vs ${oursRef ? `ref:${oursRef.pi}` : args.bin}, ${timing})\n`);
	for (const [op, o] of Object.entries(perOp)) process.stdout.write(`  ${op.padEnd(8)} ${fmt(o)}\n`);
	if (Object.keys(expectedReasons).length) {
		process.stdout.write(`  expected divergences: ${Object.entries(expectedReasons).map(([k, v]) => `${k} ×${v}`).join(", ")}\n`);
	}
	if (dialect.summaryNote) process.stdout.write(`  ${dialect.summaryNote(notes)}\n`);
	if (ref.restarts) process.stdout.write(`  reference timeouts (batch restarted): ${ref.restarts}\n`);
	if (ref.crashes) process.stdout.write(`  reference batch process died: ${ref.crashes}\n`);
	if (mismatches.length > args.maxReport && !args.quiet) process.stdout.write(`  (${mismatches.length - args.maxReport} more mismatches not shown)\n`);
	const failed = mismatches.length > 0;
	const byFile = [...new Set(mismatches.map((m) => m.f))];
	if (failed) process.stdout.write(`  failing files (${byFile.length}): ${byFile.slice(0, 40).join(" ")}${byFile.length > 40 ? " …" : ""}\n`);
	// failing.txt: the failing session names, one per line, next to generated sessions that are kept
	// (`cargo xtask conformance fuzz-reference --save` turns them into regression cases).
	if (!args.input && (failed || !tempDir)) writeFileSync(join(dir, "failing.txt"), byFile.map((f) => `${f}\n`).join(""));
	if (outputsDir && failed) process.stdout.write(`  mismatching files with both outputs in ${outputsDir}\n`);
	if (tempDir) {
		if (failed) process.stdout.write(`  sessions kept in ${tempDir}\n`);
		else rmSync(tempDir, { recursive: true, force: true });
	} else if (!args.input) process.stdout.write(`  sessions in ${dir}\n`);
	process.stdout.write(`${counts.match + counts["both-error"] + (args.strict ? 0 : counts.expected)} passed, ${mismatches.length} failed\n`);
	process.exitCode = failed ? 1 : 0;
}

await main();
