#!/usr/bin/env node
// record-sessions.mjs — realistic session files recorded by driving the REAL pi 0.73.1 SessionManager.
//
//   node conformance/reference/record-sessions.mjs --out conformance/cases/real [--only NAME]
//
// Writes one case directory per scenario, `<out>/recorded-<scenario>/` with `session.jsonl` (the file
// exactly as pi's SessionManager wrote it) and `case.json` (description, rules, ops). The expected
// outputs are not written here: `cargo xtask bless cases` computes them with the reference.
//
// How a session is recorded: SessionManager.create(cwd, tmpdir), then the public API pi's agent
// session itself calls — appendModelChange, appendThinkingLevelChange, appendMessage (user,
// assistant, toolResult, bashExecution messages shaped like pi-ai / pi-agent-core build them:
// key order, usage and cost computed with pi-ai's own model table and calculateCost, signatures,
// tool call and response ids in each provider's format), appendCompaction, branch,
// branchWithSummary, appendLabelChange, appendSessionInfo, appendCustomEntry,
// appendCustomMessageEntry — scripted like a real coding session (a user asks, the model calls
// read/edit/bash/…, tool results come back, the model answers). pi writes the file itself.
//
// Two fixtures have historical shapes that pi 0.73.1 no longer writes; they are made by transforming
// a recorded session the way older pi versions laid it out:
//   recorded-v1-shape  (from recorded-compaction) no header version, legacy header fields
//                      provider/modelId/thinkingLevel, entries without id/parentId, compactions with a
//                      header-counted firstKeptEntryIndex and no details/fromHook.
//   recorded-v2-shape  (from recorded-extension-entries) version 2, extension messages stored as
//                      `message` entries with role "hookMessage".
//
// Determinism: inside this process Date is a fake clock that only moves when a scenario says so,
// and crypto.randomUUID (entry ids) / crypto.getRandomValues (uuid v7 session ids) are driven by a
// seeded PRNG, reseeded per scenario; all content choices use a per-scenario PRNG. Scenarios start at
// increasing dates and run in a fixed order, so re-running gives byte-identical files.

import { createRequire, syncBuiltinESMExports } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { hashString, mulberry32 } from "./shared.mjs";

// ---------------------------------------------------------------------------------------------------
// PRNG (shared.mjs: mulberry32, hashString)
// ---------------------------------------------------------------------------------------------------
let R = mulberry32(1);
const rnd = () => R();
const chance = (p) => rnd() < p;
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)); // inclusive
const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
const HEX = "0123456789abcdef";
const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
function fromAlphabet(alphabet, n) {
	let s = "";
	for (let i = 0; i < n; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
	return s;
}
const hex = (n) => fromAlphabet(HEX, n);
const b62 = (n) => fromAlphabet(B62, n);
function randomBytes(n) {
	const b = Buffer.alloc(n);
	for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
	return b;
}
const b64 = (nBytes) => randomBytes(nBytes).toString("base64");
const b64url = (nBytes) => randomBytes(nBytes).toString("base64url");

// ---------------------------------------------------------------------------------------------------
// Patched globals (before pi is imported)
// ---------------------------------------------------------------------------------------------------
// pi's generateId() is randomUUID().slice(0, 8); session ids are uuid v7 (crypto.getRandomValues +
// Date.now()). Both draw from `globalsRng.r`, reseeded for every scenario.
const globalsRng = { r: mulberry32(7) };
const require = createRequire(import.meta.url);
const nodeCrypto = require("node:crypto");
nodeCrypto.randomUUID = function prngRandomUUID() {
	const r = globalsRng.r;
	let s = "";
	for (let i = 0; i < 32; i++) s += HEX[Math.floor(r() * 16)];
	return `${s.slice(0, 8)}-${s.slice(8, 12)}-4${s.slice(13, 16)}-a${s.slice(17, 20)}-${s.slice(20, 32)}`;
};
syncBuiltinESMExports();
globalThis.crypto.getRandomValues = function prngGetRandomValues(arr) {
	const r = globalsRng.r;
	const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
	for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256);
	return arr;
};

// Fake clock: `new Date()` / Date.now() return `clock`, which only moves when a scenario waits.
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

// ---------------------------------------------------------------------------------------------------
// pi (0.73.1) import, by path
// ---------------------------------------------------------------------------------------------------
const HERE = dirname(fileURLToPath(import.meta.url));
const MODULES = join(HERE, "node_modules", "@mariozechner");
const PI_CORE = join(MODULES, "pi-coding-agent", "dist", "core");
const PI_AI = join(MODULES, "pi-ai", "dist");
if (!existsSync(join(PI_CORE, "session-manager.js")) || !existsSync(join(PI_AI, "models.js"))) {
	process.stderr.write(`record-sessions: pi 0.73.1 not installed (${PI_CORE}).\nRun: (cd conformance/reference && npm ci)\n`);
	process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(PI_CORE, "session-manager.js")).href);
// pi-ai's model table and cost arithmetic, so usage.cost is computed exactly as pi computes it.
const { getModel, calculateCost } = await import(pathToFileURL(join(PI_AI, "models.js")).href);

// ---------------------------------------------------------------------------------------------------
// Small images, built byte by byte (stored deflate blocks: no zlib, identical on every Node version)
// ---------------------------------------------------------------------------------------------------
const CRC_TABLE = (() => {
	const t = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		t[n] = c >>> 0;
	}
	return t;
})();
function crc32(buf) {
	let c = 0xffffffff;
	for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}
function adler32(buf) {
	let a = 1;
	let b = 0;
	for (const x of buf) {
		a = (a + x) % 65521;
		b = (b + a) % 65521;
	}
	return ((b << 16) | a) >>> 0;
}
function u32(n) {
	const b = Buffer.alloc(4);
	b.writeUInt32BE(n >>> 0);
	return b;
}
function pngChunk(type, data) {
	const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
	return Buffer.concat([u32(data.length), td, u32(crc32(td))]);
}
/** An RGB PNG of w×h pixels; pixel(x, y) → [r, g, b]. Base64. */
function png(w, h, pixel) {
	const raw = [];
	for (let y = 0; y < h; y++) {
		raw.push(0); // filter: none
		for (let x = 0; x < w; x++) raw.push(...pixel(x, y));
	}
	const data = Buffer.from(raw);
	const blocks = [];
	for (let off = 0; off < data.length || off === 0; off += 65535) {
		const part = data.subarray(off, off + 65535);
		const last = off + 65535 >= data.length ? 1 : 0;
		const len = Buffer.alloc(4);
		len.writeUInt16LE(part.length, 0);
		len.writeUInt16LE(~part.length & 0xffff, 2);
		blocks.push(Buffer.from([last]), len, part);
		if (last) break;
	}
	const zlib = Buffer.concat([Buffer.from([0x78, 0x01]), ...blocks, u32(adler32(data))]);
	const ihdr = Buffer.concat([u32(w), u32(h), Buffer.from([8, 2, 0, 0, 0])]);
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		pngChunk("IHDR", ihdr),
		pngChunk("IDAT", zlib),
		pngChunk("IEND", Buffer.alloc(0)),
	]).toString("base64");
}
// A "mobile screenshot": header bar, a button shifted to the right, a footer.
const SCREENSHOT_BEFORE = png(12, 20, (x, y) => {
	if (y < 3) return [32, 33, 36];
	if (y >= 14 && y < 17 && x >= 5 && x < 12) return [0, 122, 255];
	if (y >= 18) return [230, 230, 230];
	return [255, 255, 255];
});
const SCREENSHOT_AFTER = png(12, 20, (x, y) => {
	if (y < 3) return [32, 33, 36];
	if (y >= 14 && y < 17 && x >= 2 && x < 10) return [0, 122, 255];
	if (y >= 18) return [230, 230, 230];
	return [255, 255, 255];
});
const CART_ICON = png(8, 8, (x, y) => ((x === 1 || x === 6) && y === 7) || (y === 5 && x > 0 && x < 7) || (y === 1 && x < 3) || (x === 1 && y > 0 && y < 6) ? [20, 20, 20] : [255, 255, 255]);
const CHART = png(10, 6, (x, y) => (y >= 6 - ((x * 7) % 6) - 1 ? [46, 160, 67] : [250, 250, 250]));
// A 1×1 GIF (the classic spacer) — what a "spinner.gif" placeholder in a repo often is.
const SPACER_GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

// ---------------------------------------------------------------------------------------------------
// The recorder: a scripted pi session on top of the real SessionManager
// ---------------------------------------------------------------------------------------------------
const tokensOf = (s) => Math.max(1, Math.ceil(String(s).length / 3.6));
function contentTokens(content) {
	if (typeof content === "string") return tokensOf(content);
	let n = 0;
	for (const b of content) {
		if (b.type === "text") n += tokensOf(b.text);
		else if (b.type === "image") n += 1100 + Math.floor(b.data.length / 40);
		else if (b.type === "thinking") n += tokensOf(b.thinking) + 20;
		else if (b.type === "toolCall") n += tokensOf(JSON.stringify(b.arguments)) + 30;
	}
	return n;
}
const ZERO_USAGE = () => ({
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

class Recorder {
	constructor(cwd, workDir, start) {
		clock = RealDate.parse(start);
		this.sm = SessionManager.create(cwd, workDir);
		this.cwd = cwd;
		this.model = null;
		this.ctx = int(3200, 4400); // system prompt + tool definitions
		this.cached = 0;
		this.googleCalls = 0;
		// The fixtures keep tool output short; real reads are much longer. Tool results count this
		// many times their size in the token bookkeeping (usage, tokensBefore).
		this.toolResultWeight = 1;
		this.readFiles = new Set();
		this.modifiedFiles = new Set();
	}
	wait(ms) {
		clock += Math.max(0, Math.round(ms));
	}
	/** The user reading, thinking and typing before the next prompt. */
	think(minS = 8, maxS = 90) {
		this.wait(int(minS * 1000, maxS * 1000));
	}
	entries() {
		return this.sm.getEntries();
	}
	// --- settings -------------------------------------------------------------------------------
	useModel(provider, id) {
		const m = getModel(provider, id);
		if (!m) throw new Error(`pi-ai knows no model ${provider}/${id}`);
		this.model = m;
		this.cached = 0;
	}
	modelChange(provider, id) {
		this.useModel(provider, id);
		this.wait(int(0, 3));
		return this.sm.appendModelChange(provider, id);
	}
	thinkingLevel(level) {
		this.wait(int(0, 3));
		return this.sm.appendThinkingLevelChange(level);
	}
	/** What pi writes when a session starts: the model and the thinking level, same millisecond. */
	start(provider, id, level) {
		this.useModel(provider, id);
		this.wait(int(6, 14));
		const a = this.sm.appendModelChange(provider, id);
		const b = this.sm.appendThinkingLevelChange(level);
		return [a, b];
	}
	// --- ids in each provider's format ----------------------------------------------------------
	toolCallId(name) {
		const api = this.model.api;
		if (api === "anthropic-messages") return `toolu_01${b62(22)}`;
		if (api === "google-generative-ai") return `${name}_${clock}_${++this.googleCalls}`;
		return `call_${b62(24)}|fc_${hex(50)}`;
	}
	responseId() {
		const api = this.model.api;
		if (api === "anthropic-messages") return `msg_01${b62(22)}`;
		if (api === "google-generative-ai") return b64url(15);
		return `resp_${hex(50)}`;
	}
	// --- content blocks -------------------------------------------------------------------------
	text(text, phase = "final_answer") {
		const b = { type: "text", text };
		const api = this.model.api;
		if (api === "openai-responses") b.textSignature = JSON.stringify({ v: 1, id: `msg_${hex(50)}` });
		else if (api === "openai-codex-responses") b.textSignature = JSON.stringify({ v: 1, id: `msg_${hex(50)}`, phase });
		return b;
	}
	thinking(thinking) {
		const api = this.model.api;
		if (api === "anthropic-messages" || api === "google-generative-ai") {
			return { type: "thinking", thinking, thinkingSignature: b64(int(140, 420)) };
		}
		// OpenAI Responses: the whole reasoning item, encrypted content included, is the signature.
		const item = {
			id: `rs_${hex(50)}`,
			type: "reasoning",
			summary: thinking ? [{ type: "summary_text", text: thinking }] : [],
			encrypted_content: `gAAAAAB${b64url(int(300, 700))}`,
		};
		return { type: "thinking", thinking, thinkingSignature: JSON.stringify(item) };
	}
	redacted() {
		return { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: b64(int(300, 600)), redacted: true };
	}
	toolCall(name, args) {
		const b = { type: "toolCall", id: this.toolCallId(name), name, arguments: args };
		if (this.model.api === "google-generative-ai" && chance(0.5)) b.thoughtSignature = b64(int(60, 160));
		return b;
	}
	// --- messages -------------------------------------------------------------------------------
	usage(outputTokens) {
		const u = ZERO_USAGE();
		if (this.model.api === "anthropic-messages") {
			u.input = int(1, 9);
			u.cacheRead = this.cached;
			u.cacheWrite = Math.max(0, this.ctx - this.cached - u.input);
		} else {
			u.cacheRead = Math.min(this.ctx, Math.floor(this.cached / 128) * 128);
			u.input = this.ctx - u.cacheRead;
		}
		u.output = outputTokens;
		u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
		calculateCost(this.model, u);
		this.cached = this.ctx;
		return u;
	}
	user(content, { raw = false } = {}) {
		const ts = clock;
		this.wait(int(1, 4));
		const c = raw || typeof content !== "string" ? content : [{ type: "text", text: content }];
		this.ctx += contentTokens(c);
		return this.sm.appendMessage({ role: "user", content: c, timestamp: ts });
	}
	/**
	 * An assistant message: `timestamp` is when the request started, the entry is written when the
	 * stream ends. opts: stopReason, errorMessage, usage ("zero" | object), responseId (false to omit),
	 * durationMs, outputTokens.
	 */
	assistant(content, opts = {}) {
		const hasCalls = content.some((b) => b.type === "toolCall");
		const stopReason = opts.stopReason ?? (hasCalls ? "toolUse" : "stop");
		const ts = clock;
		const out = opts.outputTokens ?? contentTokens(content) + int(0, 40);
		this.wait(opts.durationMs ?? int(700, 2200) + out * int(9, 22));
		const msg = {
			role: "assistant",
			content,
			api: this.model.api,
			provider: this.model.provider,
			model: this.model.id,
			usage: opts.usage === "zero" ? ZERO_USAGE() : (opts.usage ?? this.usage(out)),
			stopReason,
			timestamp: ts,
		};
		if (opts.responseId !== false) msg.responseId = this.responseId();
		if (opts.errorMessage !== undefined) msg.errorMessage = opts.errorMessage;
		this.ctx += out;
		this.wait(int(1, 3));
		return this.sm.appendMessage(msg);
	}
	toolResult(call, r) {
		this.wait(r.durationMs ?? int(15, 600));
		const content = r.content ?? [{ type: "text", text: r.text }];
		const msg = { role: "toolResult", toolCallId: call.id, toolName: call.name, content };
		if (r.details !== undefined) msg.details = r.details;
		else if (r.isError) msg.details = {}; // pi-agent-core's createErrorToolResult
		msg.isError = !!r.isError;
		msg.timestamp = clock;
		this.ctx += contentTokens(content) * this.toolResultWeight;
		if (call.name === "read" && call.arguments.path) this.readFiles.add(call.arguments.path);
		if ((call.name === "edit" || call.name === "write") && !r.isError) this.modifiedFiles.add(call.arguments.path);
		this.wait(int(0, 2));
		return this.sm.appendMessage(msg);
	}
	/**
	 * One user prompt and the agent loop that follows. steps: [{think, text, redacted, calls:[{name,
	 * args, text|content, details, isError, durationMs}], stopReason, errorMessage, usage, ...}].
	 * Returns {user, assistants, results} (entry ids).
	 */
	turn(prompt, steps, { raw = false, think = [6, 80] } = {}) {
		if (prompt !== null) this.think(...think);
		const ids = { user: prompt === null ? null : this.user(prompt, { raw }), assistants: [], results: [] };
		for (const step of steps) {
			let content = step.content;
			const calls = [];
			if (!content) {
				content = [];
				if (step.redacted) content.push(this.redacted());
				if (step.think !== undefined) content.push(this.thinking(step.think));
				if (step.text) content.push(this.text(step.text, step.calls ? "commentary" : "final_answer"));
				for (const c of step.calls ?? []) {
					const b = this.toolCall(c.name, c.args);
					calls.push([b, c]);
					content.push(b);
				}
			}
			ids.assistants.push(this.assistant(content, step));
			for (const [b, c] of calls) ids.results.push(this.toolResult(b, c));
		}
		ids.last = this.sm.getLeafId();
		return ids;
	}
	/** A `!command` (or `!!command`, excluded from context) run by the user, as recordBashResult writes it. */
	bash(command, output, o = {}) {
		this.think(3, 40);
		this.wait(o.durationMs ?? int(40, 4000));
		const msg = { role: "bashExecution", command, output };
		if ("exitCode" in o) msg.exitCode = o.exitCode;
		else if (!o.cancelled) msg.exitCode = 0;
		msg.cancelled = !!o.cancelled;
		msg.truncated = !!o.truncated;
		if (o.fullOutputPath !== undefined) msg.fullOutputPath = o.fullOutputPath;
		msg.timestamp = clock;
		if (o.exclude !== undefined) msg.excludeFromContext = o.exclude;
		if (!o.exclude) this.ctx += tokensOf(output) + 20;
		this.wait(int(0, 2));
		return this.sm.appendMessage(msg);
	}
	/** A compaction as pi's compact() produces it (structured summary + file lists, fromHook false). */
	compact(summaryBody, firstKeptEntryId) {
		this.wait(int(18000, 55000)); // the summarisation request
		const readFiles = [...this.readFiles].filter((f) => !this.modifiedFiles.has(f)).sort();
		const modifiedFiles = [...this.modifiedFiles].sort();
		const sections = [];
		if (readFiles.length) sections.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
		if (modifiedFiles.length) sections.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
		const summary = summaryBody + (sections.length ? `\n\n${sections.join("\n\n")}` : "");
		const tokensBefore = this.ctx;
		const id = this.sm.appendCompaction(summary, firstKeptEntryId, tokensBefore, { readFiles, modifiedFiles }, false);
		// What remains in context: the summary plus the kept messages (roughly).
		this.ctx = tokensOf(summary) + int(9000, 16000);
		this.cached = 0;
		return id;
	}
	/** /tree navigation with a summary of the abandoned branch, as pi's navigateTree writes it. */
	branchSummary(targetId, body, files = { readFiles: [], modifiedFiles: [] }) {
		this.think(3, 20);
		this.wait(int(6000, 20000)); // the summarisation request
		let summary = `The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n${body}`;
		const sections = [];
		if (files.readFiles.length) sections.push(`<read-files>\n${files.readFiles.join("\n")}\n</read-files>`);
		if (files.modifiedFiles.length) sections.push(`<modified-files>\n${files.modifiedFiles.join("\n")}\n</modified-files>`);
		if (sections.length) summary += `\n\n${sections.join("\n\n")}`;
		return this.sm.branchWithSummary(targetId, summary, files, false);
	}
	branch(id) {
		this.think(2, 15);
		this.sm.branch(id);
	}
	label(targetId, label) {
		this.think(1, 10);
		return this.sm.appendLabelChange(targetId, label);
	}
	name(name) {
		this.think(1, 10);
		return this.sm.appendSessionInfo(name);
	}
	custom(customType, data) {
		this.wait(int(1, 30));
		return this.sm.appendCustomEntry(customType, data);
	}
	customMessage(customType, content, display, details) {
		this.wait(int(1, 30));
		const id = this.sm.appendCustomMessageEntry(customType, content, display, details);
		this.ctx += contentTokens(content);
		return id;
	}
	finish() {
		const file = this.sm.getSessionFile();
		if (!existsSync(file)) throw new Error(`pi did not write ${file}`);
		return readFileSync(file, "utf8");
	}
}

/** A unified diff as pi's edit tool reports it in details.diff. */
function diff(startLine, before, removed, added, after = []) {
	const w = String(startLine + before.length + Math.max(removed.length, added.length) + after.length).length;
	const lines = [];
	let n = startLine;
	for (const l of before) lines.push(`  ${String(n++).padStart(w)} ${l}`);
	let m = n;
	for (const l of removed) lines.push(`-${String(m++).padStart(w + 1)} ${l}`);
	let k = n;
	for (const l of added) lines.push(`+${String(k++).padStart(w + 1)} ${l}`);
	for (const l of after) lines.push(`  ${String(k++).padStart(w)} ${l}`);
	return { diff: lines.join("\n"), firstChangedLine: n };
}
const edited = (path, n = 1) => `Successfully replaced ${n} block(s) in ${path}.`;
const wrote = (path, content) => `Successfully wrote ${content.length} bytes to ${path}`;

// ---------------------------------------------------------------------------------------------------
// Scenario 1: multi-turn tool use
// ---------------------------------------------------------------------------------------------------
const COUNT_RS = `use std::io::BufRead;

pub struct Summary {
    pub lines: usize,
    pub words: usize,
    pub longest: usize,
    pub average: Option<f64>,
}

pub fn summarize<R: BufRead>(input: R) -> std::io::Result<Summary> {
    let lines: Vec<String> = input.lines().collect::<Result<_, _>>()?;
    let words = lines.iter().map(|l| l.split_whitespace().count()).sum();
    let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    let first = lines[0].len();
    let average = Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64);
    let _ = first;
    Ok(Summary { lines: lines.len(), words, longest, average })
}
`;
const MAIN_RS = `use clap::{Parser, Subcommand};
use std::fs::File;
use std::io::BufReader;

mod count;

#[derive(Parser)]
#[command(name = "tally", version, about = "Count things in text files")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print line, word and length statistics
    Count { path: std::path::PathBuf },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Count { path } => {
            let summary = count::summarize(BufReader::new(File::open(&path)?))?;
            println!("lines: {}\\nwords: {}\\nlongest: {}", summary.lines, summary.words, summary.longest);
            if let Some(avg) = summary.average {
                println!("average: {avg:.1}");
            }
        }
    }
    Ok(())
}
`;
function scenarioToolUse(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	r.turn("`tally count` panics with \"index out of bounds: the len is 0 but the index is 0\" when the input file is empty. Can you find the bug and fix it?", [
		{
			text: "I'll look at the project layout and the count command first.",
			calls: [{ name: "bash", args: { command: "ls -la && cat Cargo.toml" }, durationMs: 48, text: "total 40\ndrwxr-xr-x  6 dev dev 4096 Mar  2 09:12 .\ndrwxr-xr-x 14 dev dev 4096 Feb 27 18:40 ..\ndrwxr-xr-x  8 dev dev 4096 Mar  2 09:12 .git\n-rw-r--r--  1 dev dev    8 Feb 27 18:40 .gitignore\n-rw-r--r--  1 dev dev 9214 Mar  1 21:03 Cargo.lock\n-rw-r--r--  1 dev dev  236 Mar  1 21:03 Cargo.toml\ndrwxr-xr-x  2 dev dev 4096 Mar  1 21:03 src\ndrwxr-xr-x  2 dev dev 4096 Mar  1 20:55 tests\n[package]\nname = \"tally\"\nversion = \"0.3.1\"\nedition = \"2021\"\n\n[dependencies]\nanyhow = \"1\"\nclap = { version = \"4\", features = [\"derive\"] }\n\n[dev-dependencies]\nassert_cmd = \"2\"\ntempfile = \"3\"\n" }],
		},
		{
			calls: [
				{ name: "read", args: { path: "src/main.rs" }, text: MAIN_RS },
				{ name: "read", args: { path: "src/count.rs" }, text: COUNT_RS },
			],
		},
		{
			text: "Let me check whether anything else indexes into `lines` directly.",
			calls: [{ name: "grep", args: { pattern: "lines\\[", path: "src" }, text: "count.rs:14:    let first = lines[0].len();" }],
		},
		{
			text: "Found it: `summarize` reads `lines[0]` unconditionally (a leftover that isn't even used), and the average divides by `lines.len()`, which would be NaN for an empty file. I'll remove the dead line and only compute the average when there is at least one line.",
			calls: [
				{
					name: "edit",
					args: {
						path: "src/count.rs",
						edits: [{
							oldText: "    let first = lines[0].len();\n    let average = Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64);\n    let _ = first;\n",
							newText: "    let average = if lines.is_empty() {\n        None\n    } else {\n        Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64)\n    };\n",
						}],
					},
					text: edited("src/count.rs"),
					details: diff(12, ["    let words = lines.iter().map(|l| l.split_whitespace().count()).sum();", "    let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);"], ["    let first = lines[0].len();", "    let average = Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64);", "    let _ = first;"], ["    let average = if lines.is_empty() {", "        None", "    } else {", "        Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64)", "    };"], ["    Ok(Summary { lines: lines.len(), words, longest, average })"]),
				},
			],
		},
		{
			calls: [{ name: "bash", args: { command: "cargo test 2>&1 | tail -25", timeout: 300 }, durationMs: 41250, isError: true, text: "   Compiling tally v0.3.1 (/home/dev/src/tally)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 38.12s\n     Running unittests src/main.rs (target/debug/deps/tally-1f0c2d7be4a9e3c2)\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n     Running tests/cli.rs (target/debug/deps/cli-94be0e1c58a1d7f0)\n\nrunning 6 tests\ntest count_reports_lines ... ok\ntest count_reports_words ... ok\ntest count_missing_file_fails ... ok\ntest count_average_one_decimal ... ok\ntest count_single_line ... ok\ntest count_prints_average ... FAILED\n\nfailures:\n\n---- count_prints_average stdout ----\nthread 'count_prints_average' panicked at tests/cli.rs:58:10:\nUnexpected stdout, failed var.contains(average: 4.0)\n\nfailures:\n    count_prints_average\n\ntest result: FAILED. 5 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.21s\n\nerror: test failed, to rerun pass `--test cli`\n\n\nCommand exited with code 101" }],
		},
		{
			text: "One CLI test fails. Let me look at what it feeds in.",
			calls: [{ name: "read", args: { path: "tests/cli.rs", offset: 45, limit: 20 }, text: "#[test]\nfn count_prints_average() {\n    let dir = tempfile::tempdir().unwrap();\n    let file = dir.path().join(\"in.txt\");\n    std::fs::write(&file, \"abcd\\nefgh\\n\\n\").unwrap();\n    Command::cargo_bin(\"tally\")\n        .unwrap()\n        .args([\"count\", file.to_str().unwrap()])\n        .assert()\n        .success()\n        .stdout(predicates::str::contains(\"average: 4.0\"));\n}\n\n[12 more lines in file. Use offset=65 to continue.]" }],
		},
		{
			text: "The test expects blank lines to be ignored for the average (`abcd`, `efgh` → 4.0), which the old code never did either — it was already failing before my change? Let me confirm on the previous commit.",
			calls: [{ name: "bash", args: { command: "git stash && cargo test --test cli count_prints_average 2>&1 | tail -5; git stash pop" }, durationMs: 9120, text: "Saved working directory and index state WIP on main: 7d1e0aa Add --json flag\n\ntest count_prints_average ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 5 filtered out; finished in 0.05s\nOn branch main\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n\tmodified:   src/count.rs\n\nno changes added to commit (use \"git add <file>...\" and/or \"git commit -a\")\nDropped refs/heads/stash@{0} (3b0e3c1f9f7f8e1e0a2d4b7c9e6f5a4b3c2d1e0f)" }],
		},
		{
			text: "Confirmed: that test was already failing on `main`, independent of the panic. The intended behaviour is clearly to skip blank lines when averaging, so I'll do that too.",
			calls: [
				{
					name: "edit",
					args: { path: "src/count.rs", edits: [{ oldText: "    let average = if lines.is_empty() {\n        None\n    } else {\n        Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64)\n    };\n", newText: "    let non_blank: Vec<usize> = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len()).collect();\n    let average = if non_blank.is_empty() {\n        None\n    } else {\n        Some(non_blank.iter().sum::<usize>() as f64 / non_blank.len() as f64)\n    };\n" }] },
					text: edited("src/count.rs"),
					details: diff(13, ["    let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);"], ["    let average = if lines.is_empty() {", "        None", "    } else {", "        Some(lines.iter().map(|l| l.len()).sum::<usize>() as f64 / lines.len() as f64)", "    };"], ["    let non_blank: Vec<usize> = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len()).collect();", "    let average = if non_blank.is_empty() {", "        None", "    } else {", "        Some(non_blank.iter().sum::<usize>() as f64 / non_blank.len() as f64)", "    };"]),
				},
			],
		},
		{
			calls: [{ name: "bash", args: { command: "cargo test 2>&1 | grep -E '^test |test result'", timeout: 300 }, durationMs: 6840, text: "test count_reports_lines ... ok\ntest count_reports_words ... ok\ntest count_missing_file_fails ... ok\ntest count_average_one_decimal ... ok\ntest count_single_line ... ok\ntest count_prints_average ... ok\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\ntest result: ok. 6 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.19s" }],
		},
		{ text: "Fixed. Summary of the changes in `src/count.rs`:\n\n1. **The panic**: `summarize` did `let first = lines[0].len();` — dead code that indexed into an empty `Vec` for empty files. Removed.\n2. **Average of an empty file**: it divided by `lines.len()` (0 → `NaN`). It is now `None` when there are no non-blank lines, so `tally count` simply doesn't print an `average:` line.\n3. **Blank lines**: the average now ignores blank lines, which is what `count_prints_average` expected (that test was already failing on `main`).\n\nAll 6 tests pass." },
	]);
	r.turn("Nice. Add a regression test for the empty file so it doesn't come back.", [
		{
			calls: [{
				name: "write",
				args: { path: "tests/empty_input.rs", content: "use assert_cmd::Command;\n\n#[test]\nfn count_empty_file_does_not_panic() {\n    let dir = tempfile::tempdir().unwrap();\n    let file = dir.path().join(\"empty.txt\");\n    std::fs::write(&file, \"\").unwrap();\n    Command::cargo_bin(\"tally\")\n        .unwrap()\n        .args([\"count\", file.to_str().unwrap()])\n        .assert()\n        .success()\n        .stdout(\"lines: 0\\nwords: 0\\nlongest: 0\\n\");\n}\n" },
				text: wrote("tests/empty_input.rs", "use assert_cmd::Command;\n\n#[test]\nfn count_empty_file_does_not_panic() {\n    let dir = tempfile::tempdir().unwrap();\n    let file = dir.path().join(\"empty.txt\");\n    std::fs::write(&file, \"\").unwrap();\n    Command::cargo_bin(\"tally\")\n        .unwrap()\n        .args([\"count\", file.to_str().unwrap()])\n        .assert()\n        .success()\n        .stdout(\"lines: 0\\nwords: 0\\nlongest: 0\\n\");\n}\n"),
			}],
		},
		{ calls: [{ name: "bash", args: { command: "cargo test --test empty_input 2>&1 | tail -4" }, durationMs: 5210, text: "running 1 test\ntest count_empty_file_does_not_panic ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s\n" }] },
		{ text: "Added `tests/empty_input.rs`: it runs `tally count` on an empty file and checks that it succeeds and prints zero counts with no `average:` line. It passes." },
	]);
	// A prompt sent through pi's SDK/RPC: plain string content.
	r.turn("commit it with a sensible message", [
		{ calls: [{ name: "bash", args: { command: "git status --short && git diff --stat" }, text: " M src/count.rs\n?? tests/empty_input.rs\n src/count.rs | 10 +++++++---\n 1 file changed, 7 insertions(+), 3 deletions(-)\n" }] },
		{ calls: [{ name: "bash", args: { command: "git add src/count.rs tests/empty_input.rs && git commit -m \"Fix panic on empty input in tally count\n\nsummarize() indexed lines[0] unconditionally. Also skip blank lines\nwhen averaging and report no average for files without text.\"" }, text: "[main 4f2a9c1] Fix panic on empty input in tally count\n 2 files changed, 21 insertions(+), 3 deletions(-)\n create mode 100644 tests/empty_input.rs\n" }] },
		{ text: "Committed as `4f2a9c1` — \"Fix panic on empty input in tally count\"." },
	], { raw: true });
}

// ---------------------------------------------------------------------------------------------------
// Scenario 2: thinking blocks with signatures, a redacted block, an OpenAI reasoning item
// ---------------------------------------------------------------------------------------------------
const WORKER_TS = `import { db } from "../db";
import { fetchLedgerPage } from "./remote";

export async function syncAccount(accountId: string): Promise<number> {
	const cursor = await db.syncCursor.findUnique({ where: { accountId } });
	let next = cursor?.position ?? null;
	let written = 0;
	do {
		const page = await fetchLedgerPage(accountId, next);
		for (const row of page.rows) {
			await db.ledgerRow.create({ data: { accountId, externalId: row.id, amount: row.amount, postedAt: row.postedAt } });
			written++;
		}
		next = page.next;
		await db.syncCursor.upsert({ where: { accountId }, create: { accountId, position: next }, update: { position: next } });
	} while (next);
	return written;
}
`;
function scenarioThinking(r) {
	r.start("anthropic", "claude-opus-4-5", "high");
	r.turn("Why does the sync job sometimes write duplicate ledger rows? Start with src/sync/worker.ts.", [
		{
			think: "The user says duplicates appear *sometimes*, which points at concurrency or at retries rather than a deterministic bug. Let me read the worker before guessing.",
			text: "Let me read the worker.",
			calls: [{ name: "read", args: { path: "src/sync/worker.ts" }, text: WORKER_TS }],
		},
		{
			think: "Two things stand out.\n\n1. Rows are inserted one by one and the cursor is only advanced after the whole page. If the process dies (deploy, OOM) after inserting some rows but before the upsert, the next run re-fetches the same page and inserts those rows again.\n2. Nothing prevents two workers from running syncAccount for the same account at once: the scheduler enqueues every 5 minutes and a slow run can overlap the next one. Both read the same cursor and insert the same page.\n\nThere is no unique constraint on (accountId, externalId), so the database doesn't stop either case. The fix should make the insert idempotent: a unique index plus createMany with skipDuplicates, or an upsert keyed on externalId, and write the cursor in the same transaction as the rows.",
			text: "There are two ways to get duplicates, and the code allows both:\n\n1. **Crash between insert and cursor update.** Rows are inserted one by one, but the cursor only moves after the whole page. A crash or deploy in between means the next run fetches the same page and inserts those rows again.\n2. **Overlapping runs.** Nothing stops two workers from syncing the same account at the same time (a slow run overlapping the next scheduled one). Both read the same cursor and insert the same page.\n\nIn both cases the database accepts the duplicates because there is no unique constraint on `(accountId, externalId)`. The robust fix is to make the write idempotent — a unique index, inserts that skip existing rows, and the cursor updated in the same transaction as the rows.",
		},
	]);
	r.turn("Can you fix it without adding a lock table?", [
		{
			redacted: true,
			think: "Idempotent writes don't need a lock at all: with a unique index, concurrent runs inserting the same row just skip it. Wrap each page in a transaction so rows and cursor move together.",
			text: "Yes — with idempotent writes no lock is needed. I'll make each page a single transaction that skips rows already present and moves the cursor with them.",
			calls: [{
				name: "edit",
				args: { path: "src/sync/worker.ts", edits: [{ oldText: "\t\tfor (const row of page.rows) {\n\t\t\tawait db.ledgerRow.create({ data: { accountId, externalId: row.id, amount: row.amount, postedAt: row.postedAt } });\n\t\t\twritten++;\n\t\t}\n\t\tnext = page.next;\n\t\tawait db.syncCursor.upsert({ where: { accountId }, create: { accountId, position: next }, update: { position: next } });\n", newText: "\t\tconst position = page.next;\n\t\tconst result = await db.$transaction(async (tx) => {\n\t\t\tconst inserted = await tx.ledgerRow.createMany({\n\t\t\t\tdata: page.rows.map((row) => ({ accountId, externalId: row.id, amount: row.amount, postedAt: row.postedAt })),\n\t\t\t\tskipDuplicates: true,\n\t\t\t});\n\t\t\tawait tx.syncCursor.upsert({ where: { accountId }, create: { accountId, position }, update: { position } });\n\t\t\treturn inserted.count;\n\t\t});\n\t\twritten += result;\n\t\tnext = position;\n" }] },
				text: edited("src/sync/worker.ts"),
				details: diff(9, ["\t\tconst page = await fetchLedgerPage(accountId, next);"], ["\t\tfor (const row of page.rows) {", "\t\t\tawait db.ledgerRow.create({ data: { accountId, externalId: row.id, amount: row.amount, postedAt: row.postedAt } });", "\t\t\twritten++;", "\t\t}", "\t\tnext = page.next;", "\t\tawait db.syncCursor.upsert({ where: { accountId }, create: { accountId, position: next }, update: { position: next } });"], ["\t\tconst position = page.next;", "\t\tconst result = await db.$transaction(async (tx) => {", "\t\t\tconst inserted = await tx.ledgerRow.createMany({", "\t\t\t\tdata: page.rows.map((row) => ({ accountId, externalId: row.id, amount: row.amount, postedAt: row.postedAt })),", "\t\t\t\tskipDuplicates: true,", "\t\t\t});", "\t\t\tawait tx.syncCursor.upsert({ where: { accountId }, create: { accountId, position }, update: { position } });", "\t\t\treturn inserted.count;", "\t\t});", "\t\twritten += result;", "\t\tnext = position;"], ["\t} while (next);"]),
			}],
		},
		{
			think: "skipDuplicates only works with a unique constraint, so the schema needs @@unique([accountId, externalId]) and a migration that first deletes existing duplicates, otherwise creating the index fails on production data.",
			calls: [{
				name: "edit",
				args: { path: "prisma/schema.prisma", edits: [{ oldText: "  postedAt   DateTime\n\n  @@index([accountId])\n}", newText: "  postedAt   DateTime\n\n  @@index([accountId])\n  @@unique([accountId, externalId])\n}" }] },
				text: edited("prisma/schema.prisma"),
				details: diff(41, ["  postedAt   DateTime", "", "  @@index([accountId])"], [], ["  @@unique([accountId, externalId])"], ["}"]),
			}],
		},
		{
			think: "Now the migration. Deduplicate keeping the lowest id, then create the index.",
			calls: [{
				name: "write",
				args: { path: "prisma/migrations/20260303_ledger_row_unique/migration.sql", content: "-- Remove duplicates left by overlapping sync runs (keep the oldest row).\nDELETE FROM \"LedgerRow\" a\n  USING \"LedgerRow\" b\n  WHERE a.\"accountId\" = b.\"accountId\"\n    AND a.\"externalId\" = b.\"externalId\"\n    AND a.id > b.id;\n\nCREATE UNIQUE INDEX \"LedgerRow_accountId_externalId_key\" ON \"LedgerRow\"(\"accountId\", \"externalId\");\n" },
				text: "Successfully wrote 348 bytes to prisma/migrations/20260303_ledger_row_unique/migration.sql",
			}],
		},
		{
			think: "Summarise; mention that the migration deletes rows and should be reviewed.",
			text: "Done, without a lock table:\n\n- `src/sync/worker.ts`: each page is written in one transaction — `createMany({ skipDuplicates: true })` plus the cursor upsert — so rows and cursor always move together, and a concurrent run inserting the same page just skips the rows that exist.\n- `prisma/schema.prisma`: `@@unique([accountId, externalId])`, which is what makes `skipDuplicates` work.\n- A migration that **deletes existing duplicates** (keeping the oldest row) before creating the unique index. Please review it before running it against production.",
		},
	]);
	r.think(20, 60);
	r.thinkingLevel("medium");
	r.modelChange("openai", "gpt-5.1-codex");
	r.turn("Double-check the migration: is the DELETE safe if the table is large?", [
		{
			think: "**Assessing DELETE performance**\n\nThe self-join DELETE uses (accountId, externalId) equality; without an index on those columns it becomes a hash join over the whole table, which is fine for millions of rows but holds row locks for the whole statement. Let me check the table size in the seed/staging notes first.",
			calls: [{ name: "bash", args: { command: "grep -rn \"LedgerRow\" docs/ops/*.md | head -5" }, text: "docs/ops/capacity.md:12:| LedgerRow | 48M rows | 19 GB | grows ~400k/day |\n" }],
		},
		{
			think: "**Recommending a batched approach**\n\n48M rows: a single DELETE with a self-join will lock a lot and bloat WAL. Better to build the index CONCURRENTLY after deduplicating in batches.",
			text: "At 48M rows the single `DELETE … USING` is risky: it runs as one long transaction, holds row locks until it commits, and writes a large burst of WAL. I'd change the migration to:\n\n1. Deduplicate in batches (e.g. 50k ids per statement) from a script, not inside the migration.\n2. `CREATE UNIQUE INDEX CONCURRENTLY` in its own migration (Prisma needs it in a separate file, since it can't run inside a transaction).\n\nWant me to write the batch script?",
		},
	]);
	r.thinkingLevel("low");
	r.turn("no, leave it for now. thanks", [
		// A reasoning item without a summary: the thinking text is empty, the signature is not.
		{ think: "", text: "Understood — I'll leave the migration as it is. Remember to run the deduplication before deploying the unique index." },
	], { think: [30, 120] });
}

// ---------------------------------------------------------------------------------------------------
// Scenario 3: images in user messages and tool results
// ---------------------------------------------------------------------------------------------------
function scenarioImages(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	r.turn([
		{ type: "text", text: "The checkout button is shifted to the right on mobile (screenshot from an iPhone 13). Can you fix it?" },
		{ type: "image", data: SCREENSHOT_BEFORE, mimeType: "image/png" },
	], [
		{
			text: "The button's right edge runs off the card. Let me look at the checkout styles.",
			calls: [{ name: "grep", args: { pattern: "checkout-button", path: "src/styles" }, text: "checkout.css:31:.checkout-button {\ncheckout.css:44:@media (max-width: 480px) { .checkout-button { margin-left: 40%; } }" }],
		},
		{
			calls: [{ name: "read", args: { path: "src/styles/checkout.css", offset: 28, limit: 20 }, text: ".checkout-actions {\n  display: flex;\n}\n.checkout-button {\n  flex: 0 0 auto;\n  width: 60%;\n  padding: 12px 16px;\n  border-radius: 8px;\n  background: var(--accent);\n  color: white;\n}\n\n/* TODO(jan): remove once the new cart drawer ships */\n@media (max-width: 480px) { .checkout-button { margin-left: 40%; } }\n\n[37 more lines in file. Use offset=48 to continue.]" }],
		},
		{
			text: "A leftover `margin-left: 40%` for small screens, combined with `width: 60%` plus padding, pushes the button past the card. I'll center it instead.",
			calls: [{
				name: "edit",
				args: { path: "src/styles/checkout.css", edits: [{ oldText: "/* TODO(jan): remove once the new cart drawer ships */\n@media (max-width: 480px) { .checkout-button { margin-left: 40%; } }", newText: "@media (max-width: 480px) {\n  .checkout-actions { justify-content: center; }\n  .checkout-button { width: 100%; max-width: 320px; box-sizing: border-box; }\n}" }] },
				text: edited("src/styles/checkout.css"),
				details: diff(39, [""], ["/* TODO(jan): remove once the new cart drawer ships */", "@media (max-width: 480px) { .checkout-button { margin-left: 40%; } }"], ["@media (max-width: 480px) {", "  .checkout-actions { justify-content: center; }", "  .checkout-button { width: 100%; max-width: 320px; box-sizing: border-box; }", "}"]),
			}],
		},
		{ text: "Removed the stale mobile override and replaced it with a centered, full-width (max 320px) button with `box-sizing: border-box`, so padding no longer adds to the width." },
	]);
	r.turn([
		{ type: "text", text: "Better, but here's before/after on Safari — the icon on the button looks blurry now:" },
		{ type: "image", data: SCREENSHOT_BEFORE, mimeType: "image/png" },
		{ type: "image", data: SCREENSHOT_AFTER, mimeType: "image/png" },
	], [
		{
			text: "The layout is fixed in the second screenshot. Let me look at the icon asset itself.",
			calls: [{ name: "read", args: { path: "public/img/cart-icon.png" }, content: [{ type: "text", text: "Read image file [image/png]" }, { type: "image", data: CART_ICON, mimeType: "image/png" }] }],
		},
		{
			calls: [{ name: "bash", args: { command: "file public/img/cart-icon*.png && grep -n cart-icon src/components/CheckoutButton.tsx" }, text: "public/img/cart-icon.png:    PNG image data, 8 x 8, 8-bit/color RGB, non-interlaced\npublic/img/cart-icon@2x.png: PNG image data, 16 x 16, 8-bit/color RGB, non-interlaced\n14:      <img src=\"/img/cart-icon.png\" width={16} height={16} alt=\"\" />" }],
		},
		{
			text: "The icon is an 8×8 bitmap drawn at 16×16 CSS pixels, so on a 3× display it is scaled up 6×. There is a `@2x` variant that isn't used; I'll add a `srcSet`.",
			calls: [{
				name: "edit",
				args: { path: "src/components/CheckoutButton.tsx", edits: [{ oldText: "<img src=\"/img/cart-icon.png\" width={16} height={16} alt=\"\" />", newText: "<img src=\"/img/cart-icon.png\" srcSet=\"/img/cart-icon.png 1x, /img/cart-icon@2x.png 2x\" width={16} height={16} alt=\"\" />" }] },
				text: edited("src/components/CheckoutButton.tsx"),
				details: diff(13, ["    <button className=\"checkout-button\" onClick={onCheckout}>"], ["      <img src=\"/img/cart-icon.png\" width={16} height={16} alt=\"\" />"], ["      <img src=\"/img/cart-icon.png\" srcSet=\"/img/cart-icon.png 1x, /img/cart-icon@2x.png 2x\" width={16} height={16} alt=\"\" />"], ["      Checkout"]),
			}],
		},
		{ text: "Added a `srcSet` so high-DPI screens get the 16×16 `@2x` asset. For 3× phones it is still upscaled; an SVG icon would be the real fix if you have one from design." },
	]);
	// An image-only prompt (pasted from the clipboard) followed by a text question.
	r.turn([{ type: "image", data: SPACER_GIF, mimeType: "image/gif" }], [
		{ text: "That image is a 1×1 pixel GIF — it looks like a transparent spacer rather than a picture. Did you mean to paste something else?" },
	]);
	r.turn([
		{ type: "text", text: "oops, wrong clipboard. this is the conversion chart from analytics after the fix:" },
		{ type: "image", data: CHART, mimeType: "image/png" },
	], [
		{ text: "The chart shows the mobile checkout conversion rising over the last few bars, which fits the button fix shipping. If you want a firmer read, compare the same weekdays before and after the deploy, since checkout traffic is weekly-seasonal." },
	]);
}

// ---------------------------------------------------------------------------------------------------
// Scenario 4: an aborted turn (partialJson left behind), error turns, retries
// ---------------------------------------------------------------------------------------------------
function scenarioAbortedAndErrors(r) {
	r.start("anthropic", "claude-sonnet-4-5", "medium");
	// The user hits Escape before the first token arrives: empty content, zero usage, no response id.
	r.think(2, 5);
	r.user("/model");
	r.assistant([], { stopReason: "aborted", errorMessage: "Request was aborted", usage: "zero", responseId: false, durationMs: 820 });
	r.turn("Rename the `vpc_cidr` variable to `vpc_cidr_block` across all modules.", [
		{
			think: "Find every file referencing vpc_cidr first.",
			text: "Let me find every reference first.",
			calls: [{ name: "bash", args: { command: "grep -rn 'vpc_cidr\\b' --include='*.tf' ." }, text: "./modules/network/variables.tf:1:variable \"vpc_cidr\" {\n./modules/network/main.tf:3:  cidr_block = var.vpc_cidr\n./modules/network/main.tf:19:  cidr_block = cidrsubnet(var.vpc_cidr, 4, count.index)\n./envs/prod/main.tf:8:  vpc_cidr = \"10.20.0.0/16\"\n./envs/staging/main.tf:8:  vpc_cidr = \"10.30.0.0/16\"\n" }],
		},
		// Aborted while the edit call's arguments were streaming: pi (before 0.73) kept the scratch
		// buffer `partialJson` next to the partially parsed arguments.
		{
			content: [
				r.thinking("Five references in four files. Start with the variable declaration."),
				r.text("Five references in four files. I'll start with the declaration in `modules/network/variables.tf`."),
				{
					type: "toolCall",
					id: r.toolCallId("edit"),
					name: "edit",
					arguments: { path: "modules/network/variables.tf", edits: [{}] },
					partialJson: "{\"path\": \"modules/network/variables.tf\", \"edits\": [{\"oldText\": \"variable \\\"vpc_cidr\\\" {",
				},
			],
			stopReason: "aborted",
			errorMessage: "Request was aborted",
			outputTokens: 96,
		},
	]);
	// Overloaded before any content: error, zero usage, no response id; pi retries automatically.
	r.turn("wait — keep the old name working as a deprecated alias for one release, then continue", [
		{
			content: [],
			stopReason: "error",
			errorMessage: `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CV${b62(18)}"}`,
			usage: "zero",
			responseId: false,
			durationMs: 1240,
		},
	]);
	r.wait(2000); // auto-retry delay
	r.turn(null, [
		{
			think: "Terraform variables can't alias each other. Keep `vpc_cidr` with a null default and a deprecation note, add `vpc_cidr_block`, and use coalesce in a local.",
			text: "Terraform has no variable aliases, so I'll add `vpc_cidr_block`, keep `vpc_cidr` as an optional deprecated input, and resolve both in a local.",
			calls: [{
				name: "edit",
				args: { path: "modules/network/variables.tf", edits: [{ oldText: "variable \"vpc_cidr\" {\n  type = string\n}", newText: "variable \"vpc_cidr_block\" {\n  type    = string\n  default = null\n}\n\n# Deprecated: use vpc_cidr_block. Removed in v3.0.\nvariable \"vpc_cidr\" {\n  type    = string\n  default = null\n}" }] },
				text: edited("modules/network/variables.tf"),
				details: diff(1, [], ["variable \"vpc_cidr\" {", "  type = string", "}"], ["variable \"vpc_cidr_block\" {", "  type    = string", "  default = null", "}", "", "# Deprecated: use vpc_cidr_block. Removed in v3.0.", "variable \"vpc_cidr\" {", "  type    = string", "  default = null", "}"]),
			}],
		},
		{
			calls: [{
				name: "edit",
				args: { path: "modules/network/main.tf", edits: [{ oldText: "  cidr_block = var.vpc_cidr\n", newText: "  cidr_block = local.vpc_cidr_block\n" }, { oldText: "cidrsubnet(var.vpc_cidr, 4, count.index)", newText: "cidrsubnet(local.vpc_cidr_block, 4, count.index)" }] },
				text: edited("modules/network/main.tf", 2),
				details: diff(2, ["resource \"aws_vpc\" \"this\" {"], ["  cidr_block = var.vpc_cidr"], ["  cidr_block = local.vpc_cidr_block"], ["}"]),
			}],
		},
		{
			calls: [{
				name: "write",
				args: { path: "modules/network/locals.tf", content: "locals {\n  vpc_cidr_block = coalesce(var.vpc_cidr_block, var.vpc_cidr)\n}\n" },
				text: wrote("modules/network/locals.tf", "locals {\n  vpc_cidr_block = coalesce(var.vpc_cidr_block, var.vpc_cidr)\n}\n"),
			}],
		},
		{
			calls: [
				{ name: "edit", args: { path: "envs/prod/main.tf", edits: [{ oldText: "  vpc_cidr = \"10.20.0.0/16\"", newText: "  vpc_cidr_block = \"10.20.0.0/16\"" }] }, text: edited("envs/prod/main.tf"), details: diff(7, ["  source   = \"../../modules/network\""], ["  vpc_cidr = \"10.20.0.0/16\""], ["  vpc_cidr_block = \"10.20.0.0/16\""]) },
				{ name: "edit", args: { path: "envs/staging/main.tf", edits: [{ oldText: "  vpc_cidr = \"10.30.0.0/16\"", newText: "  vpc_cidr_block = \"10.30.0.0/16\"" }] }, text: edited("envs/staging/main.tf"), details: diff(7, ["  source   = \"../../modules/network\""], ["  vpc_cidr = \"10.30.0.0/16\""], ["  vpc_cidr_block = \"10.30.0.0/16\""]) },
			],
		},
		{ text: "Done. `vpc_cidr_block` is the new input; `vpc_cidr` still works (marked deprecated, removed in v3.0) and `local.vpc_cidr_block` picks whichever is set. Both environments now use the new name." },
	]);
	// The connection drops mid-answer: an error with partial text, usage from message_start only.
	r.turn("run terraform validate on both envs", [
		{
			calls: [{ name: "bash", args: { command: "for e in prod staging; do (cd envs/$e && terraform init -backend=false -input=false >/dev/null && terraform validate -no-color); done" }, durationMs: 14800, text: "Success! The configuration is valid.\n\nSuccess! The configuration is valid.\n\n" }],
		},
		{
			content: [r.text("Both environments validate: `prod` and `stag")],
			stopReason: "error",
			errorMessage: "terminated",
			outputTokens: 11,
		},
	]);
	r.turn("continue", [
		{ text: "Both environments validate (`prod` and `staging`). Note that `coalesce` fails at plan time if neither variable is set, which is the behaviour you want for a required input." },
	], { think: [4, 12] });
	// A tool that fails (missing binary).
	r.turn("also run tflint", [
		{ calls: [{ name: "bash", args: { command: "tflint --recursive" }, isError: true, text: "/bin/bash: line 1: tflint: command not found\n\n\nCommand exited with code 127" }] },
		{ text: "`tflint` isn't installed here. You can install it with `brew install tflint` or run it in CI; the configuration itself validates." },
	]);
}

// ---------------------------------------------------------------------------------------------------
// Scenario 5: a compaction in the middle, more turns, a second compaction
// ---------------------------------------------------------------------------------------------------
const MDQ_FILES = ["src/lib.rs", "src/query.rs", "src/select.rs", "src/render.rs", "src/main.rs", "tests/cli.rs", "README.md"];
function mdqTurn(r, prompt, file, change, answer) {
	return r.turn(prompt, [
		{ text: `Let me look at \`${file}\`.`, calls: [{ name: "read", args: { path: file }, text: `// ${file}\n${change.context}\n` }] },
		{
			calls: [{
				name: "edit",
				args: { path: file, edits: [{ oldText: change.old, newText: change.new }] },
				text: edited(file),
				details: diff(change.line, [change.context.split("\n")[0]], change.old.split("\n"), change.new.split("\n")),
			}],
		},
		{ calls: [{ name: "bash", args: { command: "cargo test -q 2>&1 | tail -3" }, durationMs: int(3000, 9000), text: `\ntest result: ok. ${int(20, 60)} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.${int(10, 99)}s\n` }] },
		{ text: answer },
	]);
}
function scenarioCompaction(r) {
	r.start("anthropic", "claude-sonnet-4-5", "low");
	r.toolResultWeight = 90;
	const turns = [];
	const T = [
		["`mdq` should support selecting headings by level, like `mdq 'h2'`. Where would that go?", "src/query.rs", { context: "pub enum Selector {\n    Heading(Option<String>),\n    Code(Option<String>),\n}", old: "    Heading(Option<String>),", new: "    Heading { level: Option<u8>, text: Option<String> },", line: 12 }, "Added a `level` to `Selector::Heading`; the parser now accepts `h1`…`h6` as well as `#`."],
		["Now wire it into the selector matching.", "src/select.rs", { context: "fn matches(sel: &Selector, node: &Node) -> bool {\n    match (sel, node) {", old: "        (Selector::Heading(text), Node::Heading { text: t, .. }) => text.as_ref().map_or(true, |x| t.contains(x)),", new: "        (Selector::Heading { level, text }, Node::Heading { depth, text: t }) => {\n            level.map_or(true, |l| l == *depth) && text.as_ref().map_or(true, |x| t.contains(x))\n        }", line: 41 }, "Selector matching now checks the heading depth when a level is given."],
		["The output for code blocks loses the language tag. Can you keep it?", "src/render.rs", { context: "pub fn render(node: &Node, out: &mut String) {\n    match node {", old: "        Node::Code { body, .. } => { out.push_str(\"```\\n\"); out.push_str(body); out.push_str(\"```\\n\"); }", new: "        Node::Code { lang, body } => {\n            out.push_str(\"```\");\n            out.push_str(lang.as_deref().unwrap_or(\"\"));\n            out.push('\\n');\n            out.push_str(body);\n            out.push_str(\"```\\n\");\n        }", line: 27 }, "Code blocks are rendered with their info string again (`rust`, `sh`, …)."],
		["Add `--json` output.", "src/main.rs", { context: "#[derive(Parser)]\nstruct Cli {", old: "    query: String,", new: "    query: String,\n    /// Print matches as JSON\n    #[arg(long)]\n    json: bool,", line: 9 }, "Added `--json`: each match becomes `{\"kind\",\"text\",\"line\"}` in a JSON array."],
		["Make the JSON include the heading level too.", "src/render.rs", { context: "fn to_json(node: &Node) -> serde_json::Value {", old: "        Node::Heading { text, .. } => json!({\"kind\": \"heading\", \"text\": text}),", new: "        Node::Heading { depth, text } => json!({\"kind\": \"heading\", \"level\": depth, \"text\": text}),", line: 58 }, "Headings in `--json` output now carry `level`."],
		["Selecting `h2 > code` should give code blocks under a level-2 heading. Does the parser support `>`?", "src/query.rs", { context: "pub fn parse(q: &str) -> Result<Query, ParseError> {", old: "    let parts: Vec<&str> = q.split_whitespace().collect();", new: "    let parts: Vec<&str> = q.split('>').map(str::trim).filter(|p| !p.is_empty()).collect();", line: 30 }, "`>` now separates a parent selector from a child selector; `h2 > code` works."],
		["What happens with `h2 > h3 > code`?", "src/select.rs", { context: "pub fn select<'a>(doc: &'a Doc, q: &Query) -> Vec<&'a Node> {", old: "    let scope = doc.sections_under(&q.parts[0]);", new: "    let mut scope: Vec<&Section> = doc.sections().collect();\n    for part in &q.parts[..q.parts.len() - 1] {\n        scope = scope.into_iter().flat_map(|s| s.children_matching(part)).collect();\n    }", line: 66 }, "Chains of any length work now: each `>` narrows the scope to matching child sections."],
		["Update the README with the new selectors.", "README.md", { context: "## Selectors\n", old: "- `#` any heading", new: "- `#` or `h1`…`h6` headings (any or a given level)\n- `code`, `code:rust` code blocks\n- `a > b` b inside a section matched by a", line: 18 }, "README documents `h1`…`h6`, `code:lang` and `>` chains."],
	];
	for (const [prompt, file, change, answer] of T) turns.push(mdqTurn(r, prompt, file, change, answer));
	// Settings change before the compaction point: they must still apply after it (C6).
	r.think(10, 30);
	r.thinkingLevel("high");
	const more = mdqTurn(r, "There's a bug: `h2 > code` also matches code under h3 sections nested in the h2. Is that intended?", "src/select.rs", { context: "fn children_matching(&self, sel: &Selector) -> Vec<&Section> {", old: "        self.descendants().filter(|s| s.heading_matches(sel)).collect()", new: "        self.children.iter().filter(|s| s.heading_matches(sel)).collect()", line: 88 }, "Not intended: `>` means direct child. It used `descendants()`; now it uses `children`, matching CSS semantics.");
	turns.push(more);
	// pi's auto-compaction keeps the recent turns: the first kept entry is a user message.
	r.think(5, 15);
	r.compact(`## Goal
Extend \`mdq\` (a Markdown query CLI in Rust) with richer selectors and output options.

## Constraints & Preferences
- Keep selector syntax close to CSS (\`>\` means direct child)
- Tests must pass after every change (\`cargo test -q\`)

## Progress
### Done
- [x] \`h1\`…\`h6\` heading-level selectors (\`Selector::Heading { level, text }\`)
- [x] Code blocks keep their language tag when rendered
- [x] \`--json\` output, headings include \`level\`
- [x] \`a > b\` selector chains of any length

### In Progress
- [ ] README update for the new selectors

### Blocked
- (none)

## Key Decisions
- **\`>\` is direct child**: matches CSS, fixed \`children_matching\` to use \`children\`

## Next Steps
1. Finish README
2. Consider \`code:lang\` filtering

## Critical Context
- Selector parsing: \`src/query.rs\`; matching: \`src/select.rs\`; rendering: \`src/render.rs\``, turns[6].user);
	const after1 = [];
	after1.push(mdqTurn(r, "Add `code:rust` style filtering by language.", "src/query.rs", { context: "fn parse_atom(s: &str) -> Result<Selector, ParseError> {", old: "        \"code\" => Ok(Selector::Code(None)),", new: "        \"code\" => Ok(Selector::Code(None)),\n        s if s.starts_with(\"code:\") => Ok(Selector::Code(Some(s[5..].to_string()))),", line: 51 }, "`code:rust` (or any language) now filters code blocks by info string."));
	r.think(20, 60);
	r.modelChange("anthropic", "claude-opus-4-5");
	after1.push(mdqTurn(r, "Language matching should be case-insensitive (`Rust` vs `rust`).", "src/select.rs", { context: "        (Selector::Code(lang), Node::Code { lang: l, .. }) => {", old: "            lang.as_ref().map_or(true, |x| l.as_deref() == Some(x.as_str()))", new: "            lang.as_ref().map_or(true, |x| l.as_deref().is_some_and(|l| l.eq_ignore_ascii_case(x)))", line: 47 }, "Language filters now compare case-insensitively."));
	after1.push(mdqTurn(r, "Add a test for `h2 > code:rust`.", "tests/cli.rs", { context: "use assert_cmd::Command;", old: "// selector tests", new: "// selector tests\n#[test]\nfn child_code_by_language() {\n    mdq(\"h2 > code:rust\", FIXTURE).stdout(\"```rust\\nfn main() {}\\n```\\n\");\n}", line: 20 }, "Added `child_code_by_language`; all tests pass."));
	r.think(5, 15);
	r.compact(`## Goal
Extend \`mdq\` (a Markdown query CLI in Rust) with richer selectors and output options.

## Constraints & Preferences
- Keep selector syntax close to CSS (\`>\` means direct child)
- Tests must pass after every change (\`cargo test -q\`)

## Progress
### Done
- [x] \`h1\`…\`h6\` heading-level selectors
- [x] Code blocks keep their language tag; \`--json\` output with heading \`level\`
- [x] \`a > b\` chains, direct-child semantics
- [x] README documents the selectors
- [x] \`code:lang\` filtering, case-insensitive, with a CLI test

### In Progress
- (none)

### Blocked
- (none)

## Key Decisions
- **\`>\` is direct child**: matches CSS
- **Language match ignores ASCII case**: \`Rust\` and \`rust\` are the same fence

## Next Steps
1. Release 0.4.0

## Critical Context
- Model switched to claude-opus-4-5 for the remaining work`, after1[1].user);
	r.turn("Bump the version to 0.4.0 and write a changelog entry.", [
		{ calls: [{ name: "edit", args: { path: "Cargo.toml", edits: [{ oldText: "version = \"0.3.2\"", newText: "version = \"0.4.0\"" }] }, text: edited("Cargo.toml"), details: diff(2, ["name = \"mdq\""], ["version = \"0.3.2\""], ["version = \"0.4.0\""]) }] },
		{ calls: [{ name: "edit", args: { path: "CHANGELOG.md", edits: [{ oldText: "# Changelog\n", newText: "# Changelog\n\n## 0.4.0\n\n- Heading level selectors `h1`…`h6`\n- `a > b` selector chains (direct child)\n- `code:lang` filters (case-insensitive)\n- `--json` output\n" }] }, text: edited("CHANGELOG.md"), details: diff(1, [], ["# Changelog"], ["# Changelog", "", "## 0.4.0", "", "- Heading level selectors `h1`…`h6`", "- `a > b` selector chains (direct child)", "- `code:lang` filters (case-insensitive)", "- `--json` output"]) }] },
		{ text: "Version bumped to 0.4.0 with a changelog entry listing the new selectors and `--json`." },
	]);
	r.turn("thanks, that's all", [{ text: "You're welcome — happy releasing!" }], { think: [10, 40] });
}

// ---------------------------------------------------------------------------------------------------
// Scenario 6: branches with summaries
// ---------------------------------------------------------------------------------------------------
function scenarioBranches(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	const t1 = r.turn("Add a `--units` flag (metric|imperial) to the `forecast` command.", [
		{ calls: [{ name: "read", args: { path: "src/commands/forecast.ts" }, text: "import { Command } from \"commander\";\nimport { getForecast } from \"../api\";\nimport { formatDay } from \"../format\";\n\nexport const forecast = new Command(\"forecast\")\n\t.argument(\"<city>\")\n\t.option(\"-d, --days <n>\", \"number of days\", \"3\")\n\t.action(async (city, opts) => {\n\t\tconst days = await getForecast(city, Number(opts.days));\n\t\tfor (const d of days) console.log(formatDay(d));\n\t});\n" }] },
		{
			calls: [{
				name: "edit",
				args: { path: "src/commands/forecast.ts", edits: [{ oldText: "\t.option(\"-d, --days <n>\", \"number of days\", \"3\")\n", newText: "\t.option(\"-d, --days <n>\", \"number of days\", \"3\")\n\t.addOption(new Option(\"-u, --units <units>\", \"unit system\").choices([\"metric\", \"imperial\"]).default(\"metric\"))\n" }, { oldText: "console.log(formatDay(d))", newText: "console.log(formatDay(d, opts.units))" }] },
				text: edited("src/commands/forecast.ts", 2),
				details: diff(7, ["\t.argument(\"<city>\")"], [], ["\t.addOption(new Option(\"-u, --units <units>\", \"unit system\").choices([\"metric\", \"imperial\"]).default(\"metric\"))"], ["\t.action(async (city, opts) => {"]),
			}],
		},
		{
			calls: [{
				name: "edit",
				args: { path: "src/format.ts", edits: [{ oldText: "export function formatDay(d: Day): string {\n\treturn `${d.date}  ${d.tempC.toFixed(0)}°C  ${d.summary}`;", newText: "export function formatDay(d: Day, units: \"metric\" | \"imperial\" = \"metric\"): string {\n\tconst temp = units === \"imperial\" ? `${(d.tempC * 9 / 5 + 32).toFixed(0)}°F` : `${d.tempC.toFixed(0)}°C`;\n\treturn `${d.date}  ${temp}  ${d.summary}`;" }] },
				text: edited("src/format.ts"),
				details: diff(3, [""], ["export function formatDay(d: Day): string {", "\treturn `${d.date}  ${d.tempC.toFixed(0)}°C  ${d.summary}`;"], ["export function formatDay(d: Day, units: \"metric\" | \"imperial\" = \"metric\"): string {", "\tconst temp = units === \"imperial\" ? `${(d.tempC * 9 / 5 + 32).toFixed(0)}°F` : `${d.tempC.toFixed(0)}°C`;", "\treturn `${d.date}  ${temp}  ${d.summary}`;"]),
			}],
		},
		{ text: "Added `-u, --units <metric|imperial>` (default `metric`) to `forecast`; `formatDay` converts to °F for imperial." },
	]);
	// The abandoned line of work: make imperial the default, with a config file.
	const t2 = r.turn("Now make imperial the default, and let users override it in ~/.weatherrc.", [
		{ calls: [{ name: "bash", args: { command: "ls src && cat package.json | grep -A3 '\"dependencies\"'" }, text: "api.ts\ncommands\nformat.ts\nindex.ts\n  \"dependencies\": {\n    \"commander\": \"^12.1.0\"\n  },\n" }] },
		{
			calls: [{ name: "write", args: { path: "src/config.ts", content: "import { readFileSync } from \"node:fs\";\nimport { homedir } from \"node:os\";\nimport { join } from \"node:path\";\n\nexport function defaultUnits(): \"metric\" | \"imperial\" {\n\ttry {\n\t\tconst rc = JSON.parse(readFileSync(join(homedir(), \".weatherrc\"), \"utf8\"));\n\t\treturn rc.units === \"metric\" ? \"metric\" : \"imperial\";\n\t} catch {\n\t\treturn \"imperial\";\n\t}\n}\n" }, text: "Successfully wrote 346 bytes to src/config.ts" }],
		},
		{ text: "Imperial is now the default; `~/.weatherrc` (`{\"units\": \"metric\"}`) overrides it. `src/config.ts` reads it." },
	]);
	// /tree: back to the second prompt, summarising the abandoned branch. The summary hangs where
	// the user navigated to: the parent of that prompt, i.e. the end of the first turn.
	const target = r.sm.getEntry(t2.user).parentId;
	r.branchSummary(target, `## Goal
Make imperial units the default for \`weather forecast\`, overridable in \`~/.weatherrc\`.

## Progress
### Done
- [x] Added \`src/config.ts\` with \`defaultUnits()\` reading \`~/.weatherrc\` (JSON, key \`units\`), falling back to imperial

## Key Decisions
- **Config file over env var**: chosen at the time, later abandoned by the user`, { readFiles: ["package.json"], modifiedFiles: ["src/config.ts"] });
	const t3 = r.turn("Actually, read the default from a WEATHER_UNITS environment variable instead, keep metric as the fallback.", [
		{
			calls: [{
				name: "edit",
				args: { path: "src/commands/forecast.ts", edits: [{ oldText: ".default(\"metric\"))", newText: ".default(process.env.WEATHER_UNITS === \"imperial\" ? \"imperial\" : \"metric\"))" }] },
				text: edited("src/commands/forecast.ts"),
				details: diff(7, ["\t.option(\"-d, --days <n>\", \"number of days\", \"3\")"], ["\t.addOption(new Option(\"-u, --units <units>\", \"unit system\").choices([\"metric\", \"imperial\"]).default(\"metric\"))"], ["\t.addOption(new Option(\"-u, --units <units>\", \"unit system\").choices([\"metric\", \"imperial\"]).default(process.env.WEATHER_UNITS === \"imperial\" ? \"imperial\" : \"metric\"))"]),
			}],
		},
		{ text: "`--units` now defaults to `imperial` when `WEATHER_UNITS=imperial`, otherwise `metric`. No config file involved." },
		]);
	// Plain /tree navigation (no summary) to the assistant message that made the env var change,
	// then a different follow-up from there.
	const t4 = r.turn("Also mention WEATHER_UNITS in --help.", [
		{ calls: [{ name: "edit", args: { path: "src/commands/forecast.ts", edits: [{ oldText: "\"unit system\"", newText: "\"unit system (default: $WEATHER_UNITS or metric)\"" }] }, text: edited("src/commands/forecast.ts"), details: diff(8, [], ["\t.addOption(new Option(\"-u, --units <units>\", \"unit system\")"], ["\t.addOption(new Option(\"-u, --units <units>\", \"unit system (default: $WEATHER_UNITS or metric)\")"]) }] },
		{ text: "The help text now says `unit system (default: $WEATHER_UNITS or metric)`." },
	]);
	void t4;
	r.branch(t3.assistants[t3.assistants.length - 1]);
	r.turn("Hmm, before the help text: does the invalid-value case error out nicely? e.g. WEATHER_UNITS=kelvin", [
		{ calls: [{ name: "bash", args: { command: "WEATHER_UNITS=kelvin npx tsx src/index.ts forecast Oslo -d 1" }, durationMs: 2100, text: "2026-03-06  -2°C  Light snow\n" }] },
		{ text: "It doesn't error: an unknown `WEATHER_UNITS` silently falls back to metric (`-2°C`). That matches \"metric as the fallback\", but if you'd rather fail loudly I can validate it against the `choices` list." },
	]);
	// Second summarised navigation: back to the first turn's answer, summarising the env-var branch.
	r.branchSummary(t1.assistants[t1.assistants.length - 1], `## Goal
Let \`WEATHER_UNITS\` choose the default unit system for \`weather forecast\`.

## Progress
### Done
- [x] \`--units\` default reads \`process.env.WEATHER_UNITS\` (imperial if set to \`imperial\`, else metric)
- [x] Checked that invalid values fall back to metric silently

## Next Steps
1. Possibly validate \`WEATHER_UNITS\` against the allowed choices`, { readFiles: [], modifiedFiles: ["src/commands/forecast.ts"] });
	r.turn("Let's keep the flag only, no env var. Add a test for the imperial conversion.", [
		{
			calls: [{ name: "write", args: { path: "test/format.test.ts", content: "import { expect, test } from \"vitest\";\nimport { formatDay } from \"../src/format\";\n\ntest(\"imperial converts to Fahrenheit\", () => {\n\texpect(formatDay({ date: \"2026-03-06\", tempC: 20, summary: \"Sunny\" }, \"imperial\")).toBe(\"2026-03-06  68°F  Sunny\");\n});\n" }, text: "Successfully wrote 279 bytes to test/format.test.ts" }],
		},
		{ calls: [{ name: "bash", args: { command: "npx vitest run 2>&1 | tail -6" }, durationMs: 3900, text: " ✓ test/format.test.ts (1 test) 3ms\n\n Test Files  1 passed (1)\n      Tests  1 passed (1)\n   Start at  10:42:17\n   Duration  412ms (transform 61ms, setup 0ms, collect 58ms, tests 3ms, environment 0ms, prepare 88ms)\n" }] },
		{ text: "Added `test/format.test.ts` (20 °C → 68 °F); it passes. The flag stays the only way to pick units." },
	]);
}

// ---------------------------------------------------------------------------------------------------
// Scenario 7: labels and the session name
// ---------------------------------------------------------------------------------------------------
function scenarioLabelsAndNames(r) {
	r.start("anthropic", "claude-haiku-4-5", "off");
	const t1 = r.turn("Draft an outline for a blog post about structured logging in Go.", [
		{ text: "**Structured logging in Go: from Printf to slog**\n\n1. Why structured logs (grep vs. query)\n2. The standard library's `log/slog`\n3. Handlers: text, JSON, and custom\n4. Context: request ids and `slog.With`\n5. Performance and allocation\n6. Migrating an existing codebase\n7. Conclusion" },
	]);
	r.name("structured logging post");
	r.label(t1.assistants[0], "outline v1");
	const t2 = r.turn("Make section 3 the centerpiece, with a custom handler example that redacts secrets.", [
		{ text: "Revised outline:\n\n1. Why structured logs\n2. `log/slog` in five minutes\n3. **Writing a handler: redacting secrets** — wrapping `slog.Handler`, `ReplaceAttr` vs. a custom `Handle`, tests\n4. Request context with `slog.With`\n5. Performance notes\n6. Conclusion" },
	]);
	r.name("Blog: structured logging in Go");
	r.label(t1.assistants[0], "outline v1 (superseded)");
	r.label(t2.assistants[0], "outline v2");
	const t3 = r.turn("Write the intro paragraph.", [
		{ text: "Every production incident starts with a question: *what happened?* Plain-text logs answer it with `grep` and luck. Structured logs turn the same question into a query — every line a record with typed fields you can filter, group and graph. Since Go 1.21, the standard library ships `log/slog`, so there's no excuse left to keep `Printf`-ing into the void." },
	]);
	r.label(t3.assistants[0], "intro draft");
	// Clearing: the TUI passes undefined (no `label` key at all); an empty string clears too.
	r.label(t1.assistants[0], undefined);
	r.label(t3.assistants[0], "");
	r.name("");
	// Back to the first outline (via /tree, no summary): a different direction on a new branch.
	r.branch(t1.assistants[0]);
	const t4 = r.turn("Let's write about OpenTelemetry logs instead, using the same structure.", [
		{ text: "**Logs in OpenTelemetry: correlating logs with traces in Go**\n\n1. Why correlate logs and traces\n2. The OTel log data model\n3. Bridging `slog` to OTel (`otelslog`)\n4. Trace and span ids in every record\n5. Exporting with OTLP\n6. Conclusion" },
	]);
	r.name("Blog: OTel logs");
	r.label(t4.assistants[0], "otel outline");
	// A label on an entry of the abandoned branch still counts.
	r.label(t2.assistants[0], "slog version — keep");
	// Back to the slog branch: the OTel branch (with its session_info) is abandoned, yet its name stays.
	r.branch(t3.assistants[0]);
	const t5 = r.turn("OK, back to slog. Tighten the intro to three sentences.", [
		{ text: "Plain-text logs answer *what happened?* with `grep` and luck. Structured logs make it a query over typed fields you can filter, group and graph. Since Go 1.21 `log/slog` is in the standard library, so there's no reason left to `Printf` into the void." },
	]);
	r.label(t5.assistants[0], "intro final");
	r.label(t5.user, "  pinned  ");
}

// ---------------------------------------------------------------------------------------------------
// Scenario 8: extension entries (custom, custom_message)
// ---------------------------------------------------------------------------------------------------
function scenarioExtensions(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	// Extensions restoring their state and injecting context at session start.
	r.custom("plan-mode", { enabled: false });
	r.custom("session-start");
	r.customMessage("project-rules", "Project rules (from AGENTS.md):\n- Use pnpm, never npm\n- Run `pnpm lint` before finishing\n- Public handlers live in src/routes/", false, { source: "AGENTS.md", bytes: 112 });
	// The user types /plan: the extension saves its state and tells the model.
	r.think(5, 20);
	r.custom("plan-mode", { enabled: true, enteredAt: clock });
	r.customMessage("plan-mode", "Plan mode enabled. You may read files but must not edit them until the user approves the plan.", true);
	r.turn("Plan how to add rate limiting to the public API.", [
		{ calls: [{ name: "bash", args: { command: "ls src/routes src/middleware && grep -rn \"app.use\" src/server.ts" }, text: "src/routes:\nhealth.ts\norders.ts\nproducts.ts\nusers.ts\n\nsrc/middleware:\nauth.ts\nerrors.ts\n17:app.use(requestId());\n18:app.use(auth());\n19:app.use(\"/v1\", routes);\n20:app.use(errors());\n" }] },
		{ text: "Plan:\n\n1. Add `src/middleware/rate-limit.ts`: a token bucket per API key (fallback: client IP), 100 req/min, burst 20, backed by Redis so it works across instances.\n2. Mount it after `auth()` (so the key is known) and before the routes.\n3. Return `429` with `Retry-After` and `RateLimit-*` headers.\n4. Exempt `/v1/health`.\n5. Tests with a fake clock.\n\nApprove to proceed?" },
	]);
	r.custom("plan-mode", { enabled: false, todos: [
		{ id: 1, text: "rate-limit middleware (token bucket, Redis)", done: false },
		{ id: 2, text: "mount after auth(), before routes", done: false },
		{ id: 3, text: "429 + Retry-After + RateLimit-* headers", done: false },
		{ id: 4, text: "exempt /v1/health", done: false },
		{ id: 5, text: "tests with fake clock", done: false },
	] });
	r.turn("approved, go ahead", [
		{
			calls: [{ name: "write", args: { path: "src/middleware/rate-limit.ts", content: "import type { MiddlewareHandler } from \"hono\";\nimport { redis } from \"../redis\";\n\nconst RATE = 100 / 60_000; // tokens per ms\nconst BURST = 20;\n\nexport function rateLimit(): MiddlewareHandler {\n\treturn async (c, next) => {\n\t\tif (c.req.path === \"/v1/health\") return next();\n\t\tconst key = `rl:${c.get(\"apiKey\") ?? c.req.header(\"x-forwarded-for\") ?? \"anon\"}`;\n\t\tconst [tokens, retryMs] = await redis.tokenBucket(key, RATE, BURST, Date.now());\n\t\tc.header(\"RateLimit-Limit\", \"100\");\n\t\tc.header(\"RateLimit-Remaining\", String(Math.max(0, Math.floor(tokens))));\n\t\tif (tokens < 1) {\n\t\t\tc.header(\"Retry-After\", String(Math.ceil(retryMs / 1000)));\n\t\t\treturn c.json({ error: \"rate_limited\" }, 429);\n\t\t}\n\t\treturn next();\n\t};\n}\n" }, text: "Successfully wrote 781 bytes to src/middleware/rate-limit.ts" }],
		},
		{
			calls: [{ name: "edit", args: { path: "src/server.ts", edits: [{ oldText: "app.use(auth());\n", newText: "app.use(auth());\napp.use(rateLimit());\n" }] }, text: edited("src/server.ts"), details: diff(17, ["app.use(requestId());", "app.use(auth());"], [], ["app.use(rateLimit());"], ["app.use(\"/v1\", routes);"]) }],
		},
		{ text: "Added the middleware and mounted it after `auth()`. Tests next." },
	]);
	// The todo extension reminds the model of open items: a hidden custom message with details.
	r.customMessage("todo-reminder", [{ type: "text", text: "Open todos: 3 of 5 done. Remaining: exempt /v1/health (check), tests with fake clock." }], false, { open: [4, 5], done: [1, 2, 3] });
	r.custom("plan-mode", { enabled: false, todos: [
		{ id: 1, text: "rate-limit middleware (token bucket, Redis)", done: true },
		{ id: 2, text: "mount after auth(), before routes", done: true },
		{ id: 3, text: "429 + Retry-After + RateLimit-* headers", done: true },
		{ id: 4, text: "exempt /v1/health", done: true },
		{ id: 5, text: "tests with fake clock", done: false },
	] });
	r.turn(null, [
		{
			calls: [{ name: "write", args: { path: "test/rate-limit.test.ts", content: "import { describe, expect, it, vi } from \"vitest\";\nimport { app } from \"../src/server\";\n\ndescribe(\"rate limit\", () => {\n\tit(\"returns 429 after the burst\", async () => {\n\t\tvi.useFakeTimers();\n\t\tfor (let i = 0; i < 20; i++) expect((await app.request(\"/v1/products\", { headers: { \"x-api-key\": \"k\" } })).status).toBe(200);\n\t\tconst res = await app.request(\"/v1/products\", { headers: { \"x-api-key\": \"k\" } });\n\t\texpect(res.status).toBe(429);\n\t\texpect(res.headers.get(\"Retry-After\")).toBe(\"1\");\n\t});\n});\n" }, text: "Successfully wrote 512 bytes to test/rate-limit.test.ts" }],
		},
		{ calls: [{ name: "bash", args: { command: "pnpm vitest run test/rate-limit.test.ts 2>&1 | tail -4 && pnpm lint" }, durationMs: 6400, text: " ✓ test/rate-limit.test.ts (1 test) 18ms\n\n Test Files  1 passed (1)\n      Tests  1 passed (1)\n\n> api-gateway@2.4.0 lint /home/ro/work/api-gateway\n> biome check src test\n\nChecked 41 files in 23ms. No fixes applied.\n" }] },
		{ text: "All five todos are done: the middleware, its mounting, headers, the health exemption and a fake-clock test. Lint passes." },
	]);
	r.custom("plan-mode", { enabled: false, todos: [] });
	// A visible extension message with an image (a rendered graph) and no details.
	r.customMessage("bench-report", [
		{ type: "text", text: "Load test (k6, 2 min, 300 VUs): p95 41 ms, 429 rate 12.4%." },
		{ type: "image", data: CHART, mimeType: "image/png" },
	], true);
	r.turn("Is 12% 429s expected in that load test?", [
		{ text: "Yes, for that test: 300 virtual users sharing a handful of API keys exceed 100 req/min per key, so about one request in eight being limited is the limiter doing its job. With one key per simulated client you'd expect close to 0%." },
	]);
	// A custom message whose content is a plain string and that is displayed.
	r.customMessage("session-cost", "Session cost so far: $0.41 (sonnet-4-5).", true, { usd: 0.41 });
}

// ---------------------------------------------------------------------------------------------------
// Scenario 9: bashExecution messages (user `!` / `!!` commands) with every flag combination
// ---------------------------------------------------------------------------------------------------
function scenarioBash(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	// Every combination of cancelled × truncated × fullOutputPath × excludeFromContext, each with a
	// plausible exit code; then every exit-code shape (0, 1, 2, 101, 127, 130, null, absent).
	const tmp = () => `/tmp/pi-bash-${hex(16)}.log`;
	const bigLog = (n) => Array.from({ length: n }, (_, i) => `   Compiling crate-${i} v0.${i % 7}.${i % 3}`).join("\n");
	r.bash("git status --short", " M src/count.rs\n?? notes.txt\n");
	r.bash("cargo build --release 2>&1", `${bigLog(30)}\n...\n    Finished \`release\` profile [optimized] target(s) in 1m 02s`, { truncated: true, fullOutputPath: tmp(), durationMs: 62000 });
	r.bash("cat notes.txt", "", { exitCode: 0 }); // no output
	r.turn("I just ran a release build and checked git status — anything I should commit before tagging?", [
		{ text: "From the `git status` output: `src/count.rs` is modified and `notes.txt` is untracked (and empty). Commit `src/count.rs`; `notes.txt` can probably be deleted or added to `.gitignore`." },
	]);
	r.bash("cargo test 2>&1 | tail -3", "test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s\n\nerror: test failed, to rerun pass `--test cli`", { exitCode: 101, durationMs: 12500 });
	r.bash("grep -rn TODO src", "", { exitCode: 1 });
	r.bash("tally count /nonexistent", "Error: No such file or directory (os error 2)\n", { exitCode: 2 });
	r.bash("rg --version", "/bin/bash: line 1: rg: command not found\n", { exitCode: 127, exclude: true });
	// Cancelled (Escape while running): exitCode absent, partial output.
	r.bash("cargo bench", "   Compiling tally v0.3.1 (/home/dev/src/tally)\n    Finished `bench` profile [optimized] target(s) in 14.02s\n     Running benches/count.rs\ncount/small             time:   [2.1032 µs 2.1101 µs 2.1188 µs]", { cancelled: true, durationMs: 31000 });
	r.bash("find / -name '*.rs' 2>/dev/null", "", { cancelled: true, durationMs: 8000 });
	r.bash("yes | head -c 200000", `${"y\n".repeat(40)}...`, { cancelled: true, truncated: true, fullOutputPath: tmp() });
	r.bash("journalctl -u tally-web --since today", `${"Mar 09 08:00:01 web1 tally-web[812]: GET /health 200\n".repeat(12)}`, { cancelled: true, truncated: true, exclude: true });
	r.turn("The tests fail and cargo bench hangs. Ideas?", [
		{ text: "Two separate things:\n\n1. **Tests**: one CLI test fails (`--test cli`); run `cargo test --test cli -- --nocapture` to see which one and its output.\n2. **`cargo bench`** didn't hang — you cancelled it after the first benchmark; Criterion runs each benchmark for several seconds. Use `cargo bench -- count/small` to run just one." },
	]);
	// The remaining combinations (cancelled × truncated × fullOutputPath × excludeFromContext).
	r.bash("cat target/criterion/report/index.html", "<!DOCTYPE html>\n<html>\n<head><title>Index - Criterion.rs</title></head>\n", { truncated: true, exclude: true, fullOutputPath: tmp() });
	r.bash("cargo tree", `tally v0.3.1 (/home/dev/src/tally)\n${bigLog(8)}`, { fullOutputPath: tmp() }); // full output saved, not truncated
	r.bash("cargo tree -d", "", { exclude: true, fullOutputPath: tmp() });
	r.bash("ls ~/.cargo/registry/src", "index.crates.io-6f17d22bba15001f\n", { exclude: true });
	r.bash("dmesg | tail", "dmesg: read kernel buffer failed: Operation not permitted\n", { exitCode: 1, truncated: true }); // truncated without a saved path
	r.bash("cargo clippy 2>&1", "warning: unused variable: `first`\n", { cancelled: true, fullOutputPath: tmp() });
	r.bash("top -b -n 1", "top - 09:31:02 up 3 days,  2:11,  1 user,  load average: 0.42, 0.38, 0.40\n", { cancelled: true, exclude: true });
	r.bash("sleep 100", "", { cancelled: true, exclude: true, fullOutputPath: tmp() });
	r.bash("cargo doc 2>&1", `${bigLog(20)}\n ...`, { cancelled: true, truncated: true, exclude: true, fullOutputPath: tmp() });
	r.bash("cargo metadata --format-version 1", `{"packages":[{"name":"tally","version":"0.3.1","id":"path+file:///home/dev/src/tally#0.3.1","license":null,"dependencies":[${"{\"name\":\"anyhow\",\"req\":\"^1\"},".repeat(6)}`, { truncated: true, exclude: true }); // truncated, no saved path, excluded
	r.bash("cargo test -- --nocapture", `${"running 12 tests\ntest count_reports_lines ... ok\n".repeat(6)}`, { cancelled: true, truncated: true }); // cancelled and truncated, no saved path
	r.bash("docker compose logs -f web", "web-1  | listening on :8080\nweb-1  | GET /health 200 0.4ms\n", { cancelled: true, exitCode: 137 }); // cancelled wins over the exit code
	r.bash("cargo audit", `${"Crate:     time\nVersion:   0.1.45\nWarning:   unsound\n".repeat(5)}`, { truncated: true, exitCode: 1, fullOutputPath: tmp() });
	// Killed by a signal and older files: exitCode null; excludeFromContext written as false.
	r.bash("timeout -s KILL 1 cargo run -- count big.txt", "", { exitCode: null });
	r.bash("cargo run -- count README.md", "lines: 84\nwords: 512\nlongest: 97\naverage: 38.2\n", { exclude: false });
	r.bash("kill -INT $$", "", { exitCode: 130 });
	r.turn("Summarize what failed in the commands I ran.", [
		{ text: "Failures in what you ran:\n\n- `cargo test`: exit 101, one failing test in `--test cli`.\n- `grep -rn TODO src`: exit 1 — just means no TODOs.\n- `tally count /nonexistent`: exit 2, file not found (expected).\n- `dmesg`: exit 1, needs root.\n- `cargo audit`: exit 1 — `time 0.1.45` is flagged unsound; the full report is in the saved log.\n- `timeout -s KILL …`: killed, no exit code.\n- `kill -INT $$`: exit 130.\n\n`cargo bench`, `find`, `yes`, `cargo clippy`, `cargo doc`, `cargo test -- --nocapture` and `docker compose logs` were cancelled by you. Commands run with `!!` were not shared with me." },
	]);
}

// ---------------------------------------------------------------------------------------------------
// Scenario 10: a long session (~300 entries) mixing everything
// ---------------------------------------------------------------------------------------------------
const LONG_FILES = ["src/index.ts", "src/store.ts", "src/notes.ts", "src/search.ts", "src/tags.ts", "src/export/markdown.ts", "src/export/html.ts", "src/cli.ts", "src/sync.ts", "test/store.test.ts", "test/search.test.ts", "README.md"];
const LONG_TASKS = [
	["Add a `--tag` filter to `notes list`.", "src/cli.ts"],
	["Search should be case-insensitive.", "src/search.ts"],
	["Tags with spaces break the index — fix it.", "src/tags.ts"],
	["Export to HTML should escape `<` in note titles.", "src/export/html.ts"],
	["Add `notes rename <old> <new>`.", "src/notes.ts"],
	["The store writes the whole file on every change; make writes atomic.", "src/store.ts"],
	["Markdown export drops front matter.", "src/export/markdown.ts"],
	["Sync should retry on 503 with backoff.", "src/sync.ts"],
	["Add a test for tag renames.", "test/store.test.ts"],
	["Search results should be sorted by updated time.", "src/search.ts"],
	["`notes list` is slow with 10k notes; profile it.", "src/store.ts"],
	["Support `#nested/tags`.", "src/tags.ts"],
	["Document the CLI in the README.", "README.md"],
	["Add `--limit` to search.", "src/cli.ts"],
	["Deleting a note should also remove it from the search index.", "src/search.ts"],
	["Add a test for search ranking.", "test/search.test.ts"],
];
const SNIPPETS = [
	"export function normalizeTag(tag: string): string {\n\treturn tag.trim().toLowerCase().replace(/\\s+/g, \"-\");\n}",
	"export async function writeAtomic(path: string, data: string): Promise<void> {\n\tconst tmp = `${path}.${process.pid}.tmp`;\n\tawait writeFile(tmp, data);\n\tawait rename(tmp, path);\n}",
	"const results = index.search(query).sort((a, b) => b.updatedAt - a.updatedAt);",
	"for (let attempt = 0; attempt < 5; attempt++) {\n\tconst res = await fetch(url, init);\n\tif (res.status !== 503) return res;\n\tawait sleep(2 ** attempt * 250);\n}",
	"export const escapeHtml = (s: string) => s.replace(/[&<>\"']/g, (c) => `&#${c.charCodeAt(0)};`);",
	".option(\"--tag <tag>\", \"only notes with this tag\")\n.option(\"--limit <n>\", \"maximum results\", \"20\")",
];
function longTurn(r, task, file) {
	const steps = [];
	const thinks = r.thinkingOn;
	const s0 = { calls: [{ name: "read", args: { path: file }, text: `${pick(SNIPPETS)}\n\n${pick(SNIPPETS)}\n` }] };
	if (thinks) s0.think = `The user wants: ${task.replace(/`/g, "")} Start by reading ${file}.`;
	if (chance(0.5)) s0.text = `Let me look at \`${file}\` first.`;
	steps.push(s0);
	if (chance(0.4)) steps.push({ calls: [{ name: "grep", args: { pattern: pick(["normalizeTag", "writeFile", "search(", "fetch(", "escapeHtml", "option("]), path: "src" }, text: `${pick(LONG_FILES)}:${int(3, 200)}:${pick(SNIPPETS).split("\n")[0]}` }] });
	const old = pick(SNIPPETS).split("\n")[0];
	const neu = `${old} // ${pick(["fixed", "updated", "handles edge cases", "see test"])}`;
	const failFirst = chance(0.2);
	steps.push({ calls: [{ name: "edit", args: { path: file, edits: [{ oldText: old, newText: neu }] }, text: edited(file), details: diff(int(3, 180), [""], [old], [neu]) }] });
	if (failFirst) {
		steps.push({ calls: [{ name: "bash", args: { command: "pnpm test --silent 2>&1 | tail -8" }, durationMs: int(3000, 12000), isError: true, text: ` FAIL  ${pick(["test/store.test.ts", "test/search.test.ts"])} > ${pick(["renames tags", "ranks by recency", "writes atomically"])}\nAssertionError: expected [ 'b', 'a' ] to deeply equal [ 'a', 'b' ]\n\n Test Files  1 failed | ${int(3, 9)} passed (${int(4, 10)})\n\n\nCommand exited with code 1` }] });
		const s = { text: "One assertion depends on the old order; updating the expectation.", calls: [{ name: "edit", args: { path: "test/store.test.ts", edits: [{ oldText: "toEqual([\"b\", \"a\"])", newText: "toEqual([\"a\", \"b\"])" }] }, text: edited("test/store.test.ts"), details: diff(int(10, 90), [], ["\texpect(names).toEqual([\"b\", \"a\"]);"], ["\texpect(names).toEqual([\"a\", \"b\"]);"]) }] };
		if (thinks) s.think = "The failing assertion encoded the previous, buggy order. The new order is the intended one.";
		steps.push(s);
	}
	steps.push({ calls: [{ name: "bash", args: { command: "pnpm test --silent 2>&1 | tail -4" }, durationMs: int(3000, 12000), text: ` Test Files  ${int(4, 10)} passed (${int(4, 10)})\n      Tests  ${int(30, 90)} passed (${int(30, 90)})\n   Duration  ${int(800, 3000)}ms\n` }] });
	const fin = { text: `Done: ${task.replace(/\.$/, "").replace(/^./, (c) => c.toLowerCase())} — changed \`${file}\`${failFirst ? " and updated one test expectation" : ""}; tests pass.` };
	if (thinks) fin.think = "Summarise briefly.";
	steps.push(fin);
	return r.turn(task, steps);
}
const file21 = (turns) => turns[20].file;
function scenarioLong(r) {
	r.start("anthropic", "claude-sonnet-4-5", "off");
	r.toolResultWeight = 60;
	r.thinkingOn = false;
	r.custom("git-checkpoint", { head: "a41c09e", dirty: false });
	r.customMessage("project-rules", "Project rules (from AGENTS.md):\n- TypeScript strict, no `any`\n- `pnpm test` must pass", false, { source: "AGENTS.md" });
	const turns = [];
	let compactions = 0;
	let branched = 0;
	let taskIndex = 0;
	let named = false;
	while (r.entries().length < 290) {
		const n = r.entries().length;
		const [task, file] = LONG_TASKS[taskIndex++ % LONG_TASKS.length];
		const t = longTurn(r, task, file);
		t.file = file;
		turns.push(t);
		if (!named && turns.length === 2) {
			r.name("notes-cli: tags & search");
			named = true;
		}
		// Interleave the other entry kinds at fixed points of the session.
		if (turns.length === 3) {
			r.bash("git log --oneline -3", "a41c09e Add export command\n3f2d1b0 Initial store\n0c9e8a7 Scaffold\n");
			r.bash("pnpm outdated", "Package     Current  Wanted  Latest\nvitest      1.6.0    1.6.0   2.1.4\n", { exitCode: 1, exclude: true });
		}
		if (turns.length === 4) {
			r.thinkingLevel("medium");
			r.thinkingOn = true;
			r.label(t.assistants[t.assistants.length - 1], "before refactor");
		}
		if (turns.length === 5) {
			// An aborted answer (Escape mid-stream), then the user rephrases.
			r.think(5, 20);
			r.user("Refactor the store into a class with an in-memory cache");
			r.assistant([r.thinking("A class with a Map cache, invalidated on write. Start with"), r.text("I'll start by")], { stopReason: "aborted", errorMessage: "Request was aborted", outputTokens: 31 });
		}
		if (turns.length === 7) {
			r.modelChange("openai", "gpt-5.1-codex");
			r.custom("git-checkpoint", { head: "9be2c41", dirty: true });
		}
		if (turns.length === 9) {
			// A turn that errors (rate limit), retried automatically.
			r.think(5, 20);
			r.user("Why is `notes sync` slow on first run?");
			r.assistant([], { stopReason: "error", errorMessage: "429 Rate limit reached for gpt-5.1-codex in organization org-" + b62(24) + " on tokens per min (TPM): Limit 800000, Used 791123, Requested 24211. Please try again in 1.1s.", usage: "zero", responseId: false, durationMs: 640 });
			r.wait(2000);
			r.turn(null, [{ think: "First sync downloads every note; there's no pagination.", text: "The first sync downloads every note in one request with no pagination, then rebuilds the search index from scratch. Paging the download (e.g. 500 notes per request) and indexing incrementally would fix both." }]);
		}
		if (turns.length === 10 && compactions === 0) {
			compactions++;
			r.compact(`## Goal
Improve the \`notes\` CLI (TypeScript): tags, search, export, sync.

## Constraints & Preferences
- TypeScript strict, no \`any\`; \`pnpm test\` must pass

## Progress
### Done
${turns.slice(0, 7).map((x, i) => `- [x] ${LONG_TASKS[i][0]}`).join("\n")}

### In Progress
- [ ] ${LONG_TASKS[9 % LONG_TASKS.length][0]}

### Blocked
- (none)

## Key Decisions
- **Atomic writes** via temp file + rename

## Next Steps
1. Continue with the task list

## Critical Context
- Model switched to gpt-5.1-codex`, turns[7].user);
			r.customMessage("compaction-note", "Context was compacted; earlier tool output is summarised.", true);
		}
		if (turns.length === 12) {
			r.bash("pnpm bench", "", { cancelled: true });
			r.bash("pnpm build 2>&1", `${"dist/chunk.js  12.4 kB\n".repeat(30)}`, { truncated: true, fullOutputPath: `/tmp/pi-bash-${hex(16)}.log` });
			r.label(t.user, "perf work starts");
		}
		if (turns.length === 13 && branched === 0) {
			branched++;
			// The user abandons the last two turns and goes back with a summary.
			const back = turns[11].assistants[turns[11].assistants.length - 1];
			r.label(t.assistants[0], "abandoned approach");
			r.branchSummary(back, "## Goal\nSpeed up `notes list` with a persistent index.\n\n## Progress\n### Done\n- [x] Tried a SQLite-backed index; too heavy for a CLI\n\n## Key Decisions\n- **Abandoned**: stay with the JSON store", { readFiles: ["src/store.ts"], modifiedFiles: ["src/index.ts"] });
		}
		if (turns.length === 15) {
			r.thinkingLevel("high");
			r.modelChange("anthropic", "claude-opus-4-5");
			r.name("notes-cli: tags, search, perf");
		}
		if (turns.length === 17) {
			r.customMessage("todo-reminder", [{ type: "text", text: "Open todos: README, --limit." }], false, { open: ["README", "--limit"] });
			r.custom("todo", { items: [{ text: "README", done: false }, { text: "--limit", done: true }] });
		}
		if (turns.length === 18 && compactions === 1) {
			compactions++;
			r.compact(`## Goal
Improve the \`notes\` CLI (TypeScript): tags, search, export, sync, performance.

## Constraints & Preferences
- TypeScript strict, no \`any\`; \`pnpm test\` must pass

## Progress
### Done
- [x] Tag, search, export and sync fixes (see git log)
- [x] Persistent SQLite index tried and abandoned

### In Progress
- [ ] README

## Key Decisions
- **JSON store stays**; performance via in-memory caching only

## Next Steps
1. README and remaining tests`, turns[16].user);
		}
		if (turns.length === 20) {
			// A summarised navigation back to the very first prompt: a new root (fromId "root").
			r.branchSummary(null, "## Goal\nA long series of improvements to the notes CLI; the user restarted from scratch to try a different architecture.", { readFiles: [], modifiedFiles: [] });
			r.thinkingLevel("low");
		}
		if (turns.length === 21) {
			// The restart is abandoned too: back to the end of the main line, with a summary.
			r.label(t.assistants[0], "new architecture");
			r.name("notes-cli v2");
			const main = turns[19].assistants[turns[19].assistants.length - 1];
			r.branchSummary(main, "## Goal\nRestart the notes CLI with an event-sourced store.\n\n## Progress\n### Done\n- [x] Sketched the event log format\n\n## Key Decisions\n- **Abandoned**: too large a rewrite; back to the incremental work", { readFiles: [file21(turns)], modifiedFiles: [] });
			r.thinkingLevel("medium");
			r.name("notes-cli: tags, search, perf");
		}
		if (r.entries().length === n) throw new Error("no progress");
	}
	r.bash("git diff --stat", " src/store.ts | 40 ++++++++++++++++++----------\n 1 file changed, 25 insertions(+), 15 deletions(-)\n");
	r.turn("Great, let's stop here for today.", [{ text: "Sounds good. Everything is committed except the working-tree change to `src/store.ts` shown by `git diff --stat`." }]);
}

// ---------------------------------------------------------------------------------------------------
// Historical shapes, made from recorded sessions
// ---------------------------------------------------------------------------------------------------
function parseLines(text) {
	return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}
const toText = (values) => `${values.map((v) => JSON.stringify(v)).join("\n")}\n`;

/** v1: no version, legacy header fields, no ids, compactions point at a header-counted index. */
function toV1(text) {
	const values = parseLines(text);
	const index = new Map();
	values.forEach((v, i) => {
		if (v.type !== "session") index.set(v.id, i);
	});
	const header = values[0];
	const firstModel = values.find((v) => v.type === "model_change");
	const firstLevel = values.find((v) => v.type === "thinking_level_change");
	const out = [{ type: "session", id: header.id, timestamp: header.timestamp, cwd: header.cwd, provider: firstModel.provider, modelId: firstModel.modelId, thinkingLevel: firstLevel.thinkingLevel }];
	for (const v of values.slice(1)) {
		if (v.type === "compaction") {
			out.push({ type: "compaction", timestamp: v.timestamp, summary: v.summary, firstKeptEntryIndex: index.get(v.firstKeptEntryId), tokensBefore: v.tokensBefore });
			continue;
		}
		const { id, parentId, ...rest } = v;
		void id;
		void parentId;
		out.push(rest);
	}
	return toText(out);
}
/** v2: version 2, extension messages as `message` entries with role "hookMessage". */
function toV2(text) {
	const values = parseLines(text);
	const out = values.map((v) => {
		if (v.type === "session") return { ...v, version: 2 };
		if (v.type !== "custom_message") return v;
		const message = { role: "hookMessage", customType: v.customType, content: v.content, display: v.display };
		if (v.details !== undefined) message.details = v.details;
		message.timestamp = RealDate.parse(v.timestamp);
		return { type: "message", id: v.id, parentId: v.parentId, timestamp: v.timestamp, message };
	});
	return toText(out);
}

// ---------------------------------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------------------------------
const ALL_OPS = ["context", "llm", "migrate", "tree", "info"];
const SCENARIOS = [
	{
		name: "tool-use",
		start: "2026-03-02T09:14:07.412Z",
		cwd: "/home/dev/src/tally",
		run: scenarioToolUse,
		description: "A multi-turn coding session recorded with pi 0.73.1's SessionManager: read, grep, edit, write and bash tool calls with their results, a failing tool result, a string-content prompt.",
		rules: ["R1", "C5", "C8", "C11", "S1", "I2", "I3", "I4", "T5"],
	},
	{
		name: "thinking",
		start: "2026-03-03T14:02:51.090Z",
		cwd: "/Users/mira/work/ledger-sync",
		run: scenarioThinking,
		description: "A recorded session with signed Anthropic thinking blocks, a redacted thinking block, OpenAI reasoning items as signatures, and thinking level and model changes.",
		rules: ["R1", "C4", "C5", "C8", "S1", "I3"],
	},
	{
		name: "images",
		start: "2026-03-04T11:37:20.655Z",
		cwd: "/home/sam/apps/storefront",
		run: scenarioImages,
		description: "A recorded session with base64 images in user prompts (with text, several, image only) and in a read tool result.",
		rules: ["R1", "C8", "S1", "I3", "I4"],
	},
	{
		name: "aborted-and-errors",
		start: "2026-03-05T16:48:02.301Z",
		cwd: "/home/kai/infra/terraform-modules",
		run: scenarioAbortedAndErrors,
		description: "A recorded session with aborted turns (empty, and one leaving a partialJson tool call), error turns (overloaded before output, terminated mid-answer), a retry and a failing tool.",
		rules: ["R1", "C5", "C8", "S1", "I2", "I3", "I4"],
	},
	{
		name: "compaction",
		start: "2026-03-06T08:21:45.873Z",
		cwd: "/home/dev/src/mdq",
		run: scenarioCompaction,
		description: "A recorded linear session compacted twice, each compaction keeping from a real earlier user prompt, with a thinking level and a model change made before the compaction points.",
		rules: ["R1", "C6", "C7", "C7.1", "C7.2", "C4", "C5", "S8"],
	},
	{
		name: "branches",
		start: "2026-03-06T10:05:12.448Z",
		cwd: "/home/lee/projects/weather-cli",
		run: scenarioBranches,
		description: "A recorded session navigated with /tree: two summarised branch points (branch_summary with fromId), a plain branch, the leaf on the newest branch.",
		rules: ["R1", "C3", "C8.2", "S7", "L4", "T3", "T5", "I5"],
	},
	{
		name: "labels-and-names",
		start: "2026-03-07T19:40:33.019Z",
		cwd: "/home/ana/code/blog",
		run: scenarioLabelsAndNames,
		description: "A recorded session whose name is set, changed, cleared and set again on a branch that is then abandoned, with labels set, changed and cleared (absent and empty), one on an abandoned branch.",
		rules: ["R1", "N1", "N2", "N3", "N4", "N5", "N6", "T1"],
	},
	{
		name: "extension-entries",
		start: "2026-03-08T13:12:09.774Z",
		cwd: "/home/ro/work/api-gateway",
		run: scenarioExtensions,
		description: "A recorded session with extension entries: custom entries with and without data and custom_message entries with string and array content (an image included), displayed or hidden, with and without details.",
		rules: ["R1", "C8.1", "C9", "S6", "I2", "T1"],
	},
	{
		name: "bash-executions",
		start: "2026-03-09T09:02:40.126Z",
		cwd: "/home/dev/src/tally",
		run: scenarioBash,
		description: "A recorded session of user ! and !! commands: bashExecution messages with every combination of cancelled, truncated, fullOutputPath and excludeFromContext, and exit codes 0, 1, 2, 101, 127, 130, 137 (cancelled), null and absent.",
		rules: ["R1", "S2", "S3", "S4", "S5", "S10", "I6"],
	},
	{
		name: "long-session",
		start: "2026-03-10T08:30:00.517Z",
		cwd: "/home/dev/src/notes-cli",
		run: scenarioLong,
		description: "A long recorded session (about 300 entries) mixing tool use, thinking, model and thinking level changes, bash executions, extension entries, labels, names, an aborted and an error turn, two compactions and two summarised branches, one to a new root.",
		rules: ["R1", "C4", "C5", "C7", "C8", "C8.1", "C8.2", "S2", "S6", "S8", "N1", "N5", "T2", "T4", "T5", "I2"],
	},
];
const DERIVED = [
	{
		name: "v1-shape",
		from: "compaction",
		transform: toV1,
		description: "The recorded compaction session in pi's v1 shape: no header version, legacy header fields, entries without ids, compactions with a header-counted firstKeptEntryIndex.",
		rules: ["V2", "M1", "M2", "M3", "M4", "M5", "L1", "C6", "C7"],
	},
	{
		name: "v2-shape",
		from: "extension-entries",
		transform: toV2,
		description: "The recorded extension session in pi's v2 shape: version 2, extension messages stored as message entries with role hookMessage.",
		rules: ["V3", "M1", "M7", "M8", "S6"],
	},
];

function parseArgs(argv) {
	const a = { out: null, only: null };
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const val = () => {
			if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
			return argv[++i];
		};
		if (k === "--out") a.out = val();
		else if (k === "--only") a.only = val();
		else throw new Error(`unknown argument: ${k}`);
	}
	if (!a.out) throw new Error("--out DIR is required");
	return a;
}

function writeCase(out, name, text, meta) {
	const dir = join(out, `recorded-${name}`);
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, "session.jsonl"), text);
	const c = { description: meta.description, rules: meta.rules, ops: ALL_OPS };
	writeFileSync(join(dir, "case.json"), `${JSON.stringify(c, null, 2)}\n`);
	return dir;
}

function main() {
	let args;
	try {
		args = parseArgs(process.argv.slice(2));
	} catch (e) {
		process.stderr.write(`record-sessions: ${e.message}\nusage: node record-sessions.mjs --out DIR [--only NAME]\n`);
		process.exit(2);
	}
	const out = resolve(args.out);
	mkdirSync(out, { recursive: true });
	const workDir = mkdtempSync(join(tmpdir(), "pi-record-"));
	const texts = new Map();
	try {
		let previousStart = -Infinity;
		// Every scenario is recorded (in order, so uuid v7 state is the same on every run); --only
		// only restricts which cases are written.
		for (const s of SCENARIOS) {
			const start = RealDate.parse(s.start);
			if (!(start > previousStart)) throw new Error(`scenario ${s.name} must start after the previous one`);
			previousStart = start;
			R = mulberry32(hashString(`record:${s.name}`));
			globalsRng.r = mulberry32(hashString(`ids:${s.name}`));
			const r = new Recorder(s.cwd, workDir, s.start);
			s.run(r);
			const text = r.finish();
			texts.set(s.name, text);
			if (!args.only || args.only === s.name) {
				writeCase(out, s.name, text, s);
				process.stderr.write(`record-sessions: recorded-${s.name}: ${text.split("\n").length - 1} lines\n`);
			}
		}
		for (const d of DERIVED) {
			if (args.only && args.only !== d.name) continue;
			const text = d.transform(texts.get(d.from));
			writeCase(out, d.name, text, d);
			process.stderr.write(`record-sessions: recorded-${d.name}: ${text.split("\n").length - 1} lines (from recorded-${d.from})\n`);
		}
	} finally {
		rmSync(workDir, { recursive: true, force: true });
	}
}

main();
