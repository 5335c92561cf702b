#!/usr/bin/env bun
// omp-gen.ts — random session files written by oh-my-pi (omp) 18.3.4's OWN SessionManager (the
// omp counterpart of scripts/diff/gen-sessions.mjs; nothing is written by hand).
//
//   cd conformance/reference
//   TZ=UTC vendor/omp/bun/bin/bun omp/omp-gen.ts --seed S --count N --out DIR
//
// Writes, for i = 0 … N-1:
//   DIR/<seed>-<i>.jsonl       the session file, as omp left it after ensureOnDisk() + flush() + close()
//   DIR/<seed>-<i>.args.json   {"leaf": "<id>"} for a fraction of files (else {})
//   DIR/<seed>-<i>.meta.json   {"ops": <api calls>, "calls": {<api>: <count>, …}}
//
// How a file is made: SessionManager.create(cwd, DIR/.sessions), then a random mix of omp's public
// API: appendMessage (user / developer / assistant with every stopReason, with and without tool
// calls, thinking blocks with and without signatures, redactedThinking, retryRecovery, empty error
// turns; toolResult; bashExecution / pythonExecution / fileMention / custom / hookMessage),
// appendMessageToBranch, appendCustomMessageEntry (customType incl. "interrupted-thinking" right
// after an aborted turn, "prewalk-plan", "vibe-mode-context", missing/empty; display; details;
// attribution; explicit timestamp), appendCustomEntry (session_exit with kind
// normal/signal/fatal/process_exit and pending tool calls, tool_execution_start, others),
// appendModelChange (roles, resolvedModelIsFallback), appendThinkingLevelChange (with configured),
// appendServiceTierChange, appendModeChange (plan with data), appendTtsrInjection,
// appendModelUsage, setSessionName (title slot; user/auto), appendLabelChange, branch,
// branchWithSummary, resetLeaf, appendCompaction (shortSummary, tokensAfter, method,
// providerReplayThroughEntryId, details, fromExtension; `warning` set the way omp's
// session-maintenance does it: mutate the latest compaction entry, then rewriteEntries()),
// appendResetBoundary (/clear), appendSessionInit, appendCredentialPin, discardEntryDurably.
//
// Left out on purpose (the Rust side refuses them, or they are a later step): compaction
// preserveData (snapcompact / anthropic / openaiRemoteCompaction), `experimental_context_notes`
// custom entries, compaction details.kind "experimental-context-rollover", images of ≥ 1024 base64
// characters (omp externalizes those to blobs), hand-edited / v1 / v2 files.
//
// Determinism: all choices come from a seeded mulberry32 PRNG (one per file, from seed and index);
// ids come from omp-runtime.ts's counters (restarted per file: entry ids 00000001, 00000002, …,
// session id 00000000-0000-7000-8000-000000000001), and the clock is frozen with setSystemTime and
// moved only by tick(). A given (seed, count) gives byte-identical files.
import { setSystemTime } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { hashString, randomContent, seededRandom } from "../shared.mjs";
import { loadOmp, resetIds, setupOmp, takeLogs } from "./omp-runtime.ts";

// ---- args ------------------------------------------------------------------------------------------
function usage(code: number): never {
	process.stderr.write("usage: bun omp/omp-gen.ts --seed S --count N --out DIR [--leaf-rate R]\n");
	process.exit(code);
}
const argv = process.argv.slice(2);
let seedArg = "1";
let count = 20;
let outArg: string | null = null;
let leafRate = 0.1;
for (let i = 0; i < argv.length; i++) {
	const k = argv[i];
	const val = () => {
		if (i + 1 >= argv.length) usage(2);
		return argv[++i]!;
	};
	if (k === "--seed") seedArg = val();
	else if (k === "--count") count = Number.parseInt(val(), 10);
	else if (k === "--out") outArg = val();
	else if (k === "--leaf-rate") leafRate = Number(val());
	else if (k === "-h" || k === "--help") usage(0);
	else {
		process.stderr.write(`omp-gen: unknown argument ${k}\n`);
		usage(2);
	}
}
if (!outArg || !Number.isFinite(count) || count < 0) usage(2);
const OUT = path.resolve(outArg);
fs.mkdirSync(OUT, { recursive: true });

// ---- PRNG ------------------------------------------------------------------------------------------
// One stream per generated file (reseed); the helpers and randomContent are in ../shared.mjs.
const random = seededRandom();
const { chance, int, pick, weighted, hex, base64 } = random;

// ---- omp -------------------------------------------------------------------------------------------
const START = Date.UTC(2026, 0, 1);
setupOmp({ now: START });
const omp = await loadOmp();

let clock = START;
function tick(): void {
	// ~15% of steps are 0 ms so that neighbours sometimes share a timestamp.
	clock += chance(0.15) ? 0 : int(1, 4000);
	setSystemTime(new Date(clock));
}
const iso = () => new Date(clock).toISOString();

// ---- content ---------------------------------------------------------------------------------------
const WORDS = [
	"the", "file", "session", "compaction", "branch", "tree", "fix", "bug", "test", "read", "write", "edit",
	"please", "why", "does", "this", "fail", "ok", "done", "refactor", "parser", "JSON", "Rust", "bun",
	"summary", "context", "model", "token", "error", "retry", "plan", "omp",
];
const SPECIALS = [
	'"', "\\", "\n", "\t", "\r", "\u0000", "\u0001", "\u001f", "\u007f", "\u0080", "é", "ß", "日本語", "😀", "👩‍💻",
	"\u2028", "\u2029", "/", "</summary>", "`", "```", "\ufeff", "\u00a0", "e\u0301", "𝄞", "{}", "[]", "${x}", "%s",
	"\b", "\f", "\u000b", "\ud800", "\udfff",
];
// text(maxWords), textBlock(), anyValue(depth), tokenUsage(): see randomContent in ../shared.mjs.
const { text, textBlock, anyValue, usage: tokenUsage } = randomContent(random, {
	words: WORDS,
	specials: SPECIALS,
	specialRate: 0.1,
	blanks: ["", " ", "x", "\n"],
	keys: ["a", "b", "path", "count", "nested", "x_y", "Z", "é", "2", "10"],
});
function nonEmptyText(maxWords = 12): string {
	const t = text(maxWords);
	return t.trim() ? t : `${pick(WORDS)} ${t}`;
}
/** Small images only: omp externalizes base64 of ≥ 1024 characters to blobs (a later step). */
function imageBlock() {
	const b: Record<string, unknown> = {
		type: "image",
		data: base64(int(4, 200)),
		mimeType: pick(["image/png", "image/jpeg", "image/webp", "image/gif"]),
	};
	if (chance(0.1)) b.detail = pick(["auto", "low", "high"]);
	return b;
}
const PROVIDERS: [string, string[], string][] = [
	["anthropic", ["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"], "anthropic-messages"],
	["openai", ["gpt-5", "gpt-5-mini", "o3"], "openai-responses"],
	["openai-codex", ["gpt-5-codex"], "openai-codex-responses"],
	["google", ["gemini-2.5-pro", "gemini-2.5-flash"], "google-generative-ai"],
	["openrouter", ["z-ai/glm-4.6", "x-ai/grok-4"], "openai-completions"],
	["github-copilot", ["gpt-5", "claude-sonnet-4.5"], "openai-responses"],
];

// ---- per-session state -----------------------------------------------------------------------------
let pending: { id: string; name: string; args: Record<string, unknown> }[] = [];
let lastAbortedThinking: { provider: string; model: string; blockCount: number } | null = null;

function userMessage() {
	const m: Record<string, unknown> = { role: "user" };
	if (chance(0.5)) m.content = text(20);
	else {
		const content: unknown[] = [];
		for (let i = int(0, 3); i > 0; i--) content.push(chance(0.8) ? { type: "text", text: text() } : imageBlock());
		m.content = content;
	}
	if (chance(0.1)) m.attribution = pick(["user", "agent"]);
	if (chance(0.08)) m.synthetic = true;
	if (chance(0.05)) m.steering = true;
	m.timestamp = clock - int(0, 50);
	return m;
}
function developerMessage() {
	return {
		role: "developer",
		content: chance(0.5) ? text(10) : [{ type: "text", text: text() }],
		...(chance(0.5) ? { attribution: pick(["user", "agent"]) } : {}),
		...(chance(0.3) ? { synthetic: true } : {}),
		timestamp: clock,
	};
}
function toolCallBlock() {
	const id = `${pick(["toolu_", "call_", "fc_"])}${hex(int(8, 20))}`;
	const name = pick(["bash", "read", "edit", "write", "grep", "find", "task"]);
	const args: Record<string, unknown> =
		name === "bash"
			? { command: text(4), ...(chance(0.5) ? { timeout: int(1, 600) } : {}) }
			: { path: pick(["src/main.rs", "./a b.txt", "/etc/hosts", "日本/語.md"]), extra: anyValue() };
	const b: Record<string, unknown> = { type: "toolCall", id, name, arguments: args };
	if (chance(0.08)) b.thoughtSignature = base64(24);
	if (chance(0.08)) b.intent = text(4);
	pending.push({ id, name, args });
	return b;
}
function thinkingBlock(signed: boolean) {
	const b: Record<string, unknown> = { type: "thinking", thinking: chance(0.08) ? pick(["", "  "]) : text(15) };
	if (signed) b.thinkingSignature = chance(0.8) ? base64(int(8, 60)) : pick(["", " "]);
	if (chance(0.05)) b.itemId = `rs_${hex(12)}`;
	return b;
}
function assistantMessage(forced?: { stopReason?: string; emptyError?: boolean }) {
	const [provider, models, api] = pick(PROVIDERS);
	const model = pick(models);
	const stopReason =
		forced?.stopReason ??
		weighted([
			["stop", 8],
			["toolUse", 5],
			["length", 1],
			["error", 2],
			["aborted", 2],
		] as const);
	const content: Record<string, unknown>[] = [];
	const emptyError = forced?.emptyError ?? (stopReason === "error" && chance(0.25));
	if (emptyError) {
		// an empty error turn: nothing, or only blank text / blank unsigned thinking
		for (let i = int(0, 2); i > 0; i--) {
			content.push(
				weighted([
					[{ type: "text", text: pick(["", " ", "\n"]) }, 3],
					[{ type: "thinking", thinking: pick(["", " "]) }, 1],
				] as const) as Record<string, unknown>,
			);
		}
	} else {
		const nBlocks = chance(0.06) ? 0 : int(1, 4);
		for (let i = 0; i < nBlocks; i++) {
			const kind = weighted([
				["text", 5],
				["thinking", 3],
				["redacted", 1],
				["toolCall", stopReason === "toolUse" ? 5 : 2],
			] as const);
			if (kind === "text") content.push(textBlock());
			else if (kind === "thinking") content.push(thinkingBlock(chance(0.7)));
			else if (kind === "redacted") content.push({ type: "redactedThinking", data: chance(0.95) ? base64(int(20, 80)) : "" });
			else content.push(toolCallBlock());
		}
		// An interrupted turn: trailing unsigned thinking (omp demotes it into an
		// "interrupted-thinking" custom message).
		if (stopReason === "aborted" && chance(0.4)) {
			const k = int(1, 2);
			for (let i = 0; i < k; i++) content.push({ type: "thinking", thinking: nonEmptyText(8) });
			lastAbortedThinking = { provider, model, blockCount: k };
		}
	}
	const m: Record<string, unknown> = { role: "assistant", content, api, provider, model, usage: ompUsage(), stopReason };
	if ((stopReason === "error" || stopReason === "aborted") && chance(0.85)) {
		m.errorMessage =
			stopReason === "aborted"
				? "Request was aborted"
				: pick(["500 Internal Server Error", "overloaded_error: Overloaded", "terminated", text(6)]);
		if (stopReason === "error" && chance(0.3)) m.errorStatus = pick([429, 500, 529]);
	}
	if (chance(0.1)) {
		m.retryRecovery = chance(0.6)
			? {
					kind: "auto-retry",
					status: "recovered",
					attempt: int(1, 3),
					recoveredAt: iso(),
					recovery: pick(["credential", "model", "wait", "plain"]),
					note: text(5),
				}
			: { kind: "auto-retry", status: "superseded", attempt: int(1, 3), recovery: pick(["wait", "plain"]) };
	}
	if (chance(0.4)) m.responseId = `resp_${hex(24)}`;
	if (chance(0.05)) m.upstreamModel = `${model}-20250101`;
	if (provider === "github-copilot" && chance(0.6)) {
		m.providerPayload = {
			type: "openaiResponsesHistory",
			provider,
			items: [{ type: "reasoning", id: `rs_${hex(8)}`, encrypted_content: base64(20) }],
		};
	}
	if (chance(0.3)) m.duration = int(100, 90000);
	if (chance(0.3)) m.ttft = int(10, 5000);
	m.timestamp = clock - int(0, 3000);
	if (stopReason !== "aborted") lastAbortedThinking = null;
	return m;
}
/** A usage with omp's extra members now and then (reasoning, premium requests, credits). */
function ompUsage(): Record<string, unknown> {
	const u: Record<string, unknown> = tokenUsage();
	if (chance(0.2)) u.reasoningTokens = int(0, 4000);
	if (chance(0.1)) u.premiumRequests = int(0, 3);
	if (chance(0.1)) u.credits = { cost: int(0, 100) / 100, ...(chance(0.5) ? { committedCost: int(0, 100) / 100 } : {}), ...(chance(0.3) ? { acuCost: int(0, 9) / 10 } : {}) };
	return u;
}
function toolResultMessage() {
	const call =
		pending.length > 0 && chance(0.9)
			? pending.splice(chance(0.8) ? 0 : int(0, pending.length - 1), 1)[0]!
			: { id: `toolu_${hex(10)}`, name: "bash" };
	const content: unknown[] = [];
	for (let i = chance(0.1) ? 0 : int(1, 2); i > 0; i--) content.push(chance(0.9) ? { type: "text", text: text(25) } : imageBlock());
	const m: Record<string, unknown> = { role: "toolResult", toolCallId: call.id, toolName: call.name, content };
	if (call.name === "task" && chance(0.7)) {
		// A subagent's run: omp's /session adds its usage (complete or not).
		m.details = { usage: chance(0.85) ? ompUsage() : { ...tokenUsage(), totalTokens: chance(0.5) ? "12" : undefined } };
	} else if (chance(0.35)) m.details = chance(0.5) ? { diff: text(8), firstChangedLine: int(1, 500) } : anyValue();
	m.isError = chance(0.15);
	if (chance(0.05)) m.prunedAt = clock;
	m.timestamp = clock;
	return m;
}
function otherRoleMessage() {
	return weighted<() => Record<string, unknown>>([
		[
			() => ({
				role: "bashExecution",
				command: pick(["ls -la", "cargo test", 'echo "hi" && false', text(3)]),
				output: chance(0.3) ? "" : text(20),
				exitCode: pick([0, 1, 127, undefined]),
				cancelled: chance(0.2),
				truncated: chance(0.3),
				timestamp: clock,
				...(chance(0.3) ? { excludeFromContext: chance(0.8) } : {}),
			}),
			3,
		],
		[
			() => ({
				role: "pythonExecution",
				code: pick(["print(1)", "import os\nos.getcwd()", text(3)]),
				output: text(10),
				exitCode: pick([0, 1, undefined]),
				cancelled: chance(0.1),
				truncated: chance(0.2),
				timestamp: clock,
				...(chance(0.3) ? { excludeFromContext: chance(0.8) } : {}),
			}),
			1,
		],
		[
			() => ({
				role: "fileMention",
				files: [{ path: pick(["src/a.ts", "README.md"]), content: text(10), ...(chance(0.5) ? { lineCount: int(1, 90) } : {}) }],
				timestamp: clock,
			}),
			1,
		],
		[
			() => ({
				role: "custom",
				customType: pick(["ext-note", "todo", "skill-prompt"]),
				content: chance(0.5) ? text(10) : [{ type: "text", text: text() }],
				display: chance(0.5),
				...(chance(0.4) ? { details: anyValue() } : {}),
				...(chance(0.5) ? { attribution: pick(["user", "agent"]) } : {}),
				timestamp: clock,
			}),
			2,
		],
		[
			() => ({
				role: "hookMessage",
				customType: "legacy-hook",
				content: text(5),
				display: chance(0.5),
				timestamp: clock,
			}),
			1,
		],
	])();
}

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
const TIERS = ["auto", "default", "flex", "scale", "priority"];
function serviceTier(): unknown {
	return weighted<() => unknown>([
		[() => null, 2],
		[() => pick(["priority", "openai-only", "claude-only", "auto", "default", "flex", "scale"]), 3],
		[
			() => {
				const o: Record<string, unknown> = {};
				for (const fam of ["google", "openai", "anthropic", "xai"]) if (chance(0.5)) o[fam] = chance(0.85) ? pick(TIERS) : "turbo";
				return o;
			},
			3,
		],
		[() => pick(["bogus", ""]), 1],
	])();
}
const TITLES = ["My session", "  padded title  ", "Fix the parser", "naïve 日本 😀", "a\nb", "x".repeat(90)];
const CWDS = ["/home/user/proj", "/Users/a/b", "/tmp/with space/é", "/"];

// ---- driving the SessionManager ------------------------------------------------------------------
async function driveSession(workDir: string, calls: Record<string, number>): Promise<{ sm: any; ops: number }> {
	pending = [];
	lastAbortedThinking = null;
	const sm = omp.SessionManager.create(pick(CWDS), workDir);
	let ops = 0;
	const call = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
		tick();
		ops++;
		calls[name] = (calls[name] ?? 0) + 1;
		return await fn();
	};
	if (chance(0.7)) {
		const [p, ms] = pick(PROVIDERS);
		await call("appendModelChange", () => sm.appendModelChange(`${p}/${pick(ms)}`));
		await call("appendThinkingLevelChange", () => sm.appendThinkingLevelChange(pick(LEVELS), chance(0.5) ? pick([...LEVELS, "auto"]) : undefined));
	}
	const n = chance(0.1) ? int(50, 150) : int(3, 40);
	for (let k = 0; k < n; k++) {
		const op = weighted([
			["user", 16], ["assistant", 18], ["toolResult", 9], ["otherRole", 3], ["developer", 1],
			["customMessage", 5], ["interruptedThinking", 2], ["custom", 3], ["sessionExit", 2],
			["model", 3], ["thinking", 3], ["serviceTier", 2], ["mode", 2], ["ttsr", 2], ["modelUsage", 2],
			["title", 2], ["label", 3], ["branch", 4], ["branchSummary", 2], ["resetLeaf", 0.4],
			["compaction", 4], ["reset", 2], ["toBranch", 1], ["sessionInit", 0.5], ["credentialPin", 0.5],
			["discard", 0.5],
		] as const);
		const entries: any[] = sm.getEntries();
		const ids: string[] = entries.map((e) => e.id);
		switch (op) {
			case "user":
				await call("appendMessage:user", () => sm.appendMessage(userMessage()));
				break;
			case "developer":
				await call("appendMessage:developer", () => sm.appendMessage(developerMessage()));
				break;
			case "assistant": {
				const m = assistantMessage();
				await call(`appendMessage:assistant:${m.stopReason}`, () => sm.appendMessage(m));
				break;
			}
			case "toolResult":
				await call("appendMessage:toolResult", () => sm.appendMessage(toolResultMessage()));
				break;
			case "otherRole": {
				const m = otherRoleMessage();
				await call(`appendMessage:${m.role}`, () => sm.appendMessage(m));
				break;
			}
			case "customMessage": {
				const customType = weighted([
					["ext-note", 4], ["reminder", 2], ["prewalk-plan", 2], ["vibe-mode-context", 1], ["skill-prompt", 1],
					["interrupted-thinking", 1], [undefined, 1], ["", 1],
				] as const);
				const content = weighted<() => unknown>([
					[() => text(10), 4],
					[() => [{ type: "text", text: text() }, ...(chance(0.3) ? [imageBlock()] : [])], 4],
					[() => undefined, 1],
				])();
				const display = weighted([[true, 4], [false, 4], [undefined, 1]] as const);
				const details = chance(0.4) ? anyValue() : undefined;
				const attribution = weighted([["agent", 3], ["user", 2], [undefined, 2]] as const);
				const ts = chance(0.2) ? clock - int(0, 5000) : undefined;
				await call(`appendCustomMessageEntry:${customType}`, () =>
					sm.appendCustomMessageEntry(customType, content, display, details, attribution, ts),
				);
				break;
			}
			case "interruptedThinking": {
				// what agent-session does on a user interrupt: an aborted assistant turn with a trailing
				// unsigned thinking run, then the hidden continuity note (sometimes after an error turn)
				const m = assistantMessage({ stopReason: chance(0.8) ? "aborted" : "error" });
				await call(`appendMessage:assistant:${m.stopReason}`, () => sm.appendMessage(m));
				if (chance(0.85)) {
					const info = lastAbortedThinking ?? { provider: String(m.provider), model: String(m.model), blockCount: 0 };
					await call("appendCustomMessageEntry:interrupted-thinking", () =>
						sm.appendCustomMessageEntry(
							"interrupted-thinking",
							`The previous turn was interrupted while thinking:\n${text(8)}`,
							false,
							{ interruptedAt: clock, provider: info.provider, model: info.model, blockCount: info.blockCount },
							"agent",
						),
					);
				}
				break;
			}
			case "custom": {
				const t = weighted([["tool_execution_start", 2], ["ext-state", 2], ["plan", 1], ["todo", 1]] as const);
				let data: unknown;
				if (t === "tool_execution_start" && pending.length) {
					const p = pick(pending);
					data = { toolCallId: p.id, toolName: p.name, args: p.args, startedAt: iso() };
				} else data = weighted<() => unknown>([[() => undefined, 2], [() => anyValue(), 4], [() => ({ state: { step: int(1, 9) } }), 2]])();
				await call(`appendCustomEntry:${t}`, () => sm.appendCustomEntry(t, data));
				break;
			}
			case "sessionExit": {
				const kind = weighted([["normal", 3], ["signal", 3], ["fatal", 2], ["process_exit", 1], ["bogus", 0.5]] as const);
				const data: Record<string, unknown> = {
					reason: kind === "signal" ? pick(["SIGTERM", "SIGINT", "SIGHUP"]) : kind === "fatal" ? "uncaughtException" : "exit",
					kind,
					recordedAt: chance(0.95) ? iso() : "not a date",
				};
				if (pending.length && chance(0.7)) {
					data.pendingToolCalls = pending.map((p) => ({ toolCallId: p.id, toolName: p.name, args: p.args }));
				} else if (chance(0.1)) data.pendingToolCalls = [];
				if (kind === "fatal" && chance(0.5)) data.error = { message: text(4) };
				await call(`appendCustomEntry:session_exit:${kind}`, () => sm.appendCustomEntry("session_exit", data));
				break;
			}
			case "model": {
				const [p, ms] = pick(PROVIDERS);
				const role = weighted([[undefined, 4], ["default", 2], ["smol", 1], ["slow", 1], ["plan", 1], ["fallback", 1], ["commit", 0.5]] as const);
				await call(`appendModelChange:${role ?? "-"}`, () => sm.appendModelChange(`${p}/${pick(ms)}`, role, chance(0.1)));
				break;
			}
			case "thinking": {
				const level = chance(0.9) ? pick(LEVELS) : undefined;
				const configured = weighted([[undefined, 3], ["auto", 2], ["same", 2], ["other", 1]] as const);
				const conf = configured === "same" ? level : configured === "other" ? pick(LEVELS) : configured;
				await call("appendThinkingLevelChange", () => sm.appendThinkingLevelChange(level, conf));
				break;
			}
			case "serviceTier":
				await call("appendServiceTierChange", () => sm.appendServiceTierChange(serviceTier()));
				break;
			case "mode": {
				const mode = weighted([["plan", 4], ["none", 2], ["vibe", 1], ["agent", 1]] as const);
				const data =
					mode === "plan"
						? weighted<() => unknown>([[() => ({ planFile: pick(["PLAN.md", "docs/plan 2.md"]) }), 3], [() => undefined, 1], [() => ({ planFile: "P.md", step: int(1, 5), nested: anyValue() }), 1]])()
						: chance(0.3)
							? { reason: text(3) }
							: undefined;
				await call(`appendModeChange:${mode}`, () => sm.appendModeChange(mode, data));
				break;
			}
			case "ttsr": {
				const rules: string[] = [];
				for (let i = int(0, 3); i > 0; i--) rules.push(pick(["no-console-log", "prefer-const", "tests-first", "日本-rule", ""]));
				await call("appendTtsrInjection", () => sm.appendTtsrInjection(rules));
				break;
			}
			case "modelUsage": {
				const [p, ms, api] = pick(PROVIDERS);
				const parentId = ids.length && chance(0.8) ? (chance(0.5) ? sm.getLeafId() : pick(ids)) : null;
				const u: Record<string, unknown> = {
					purpose: pick(["title", "memory", "commit", "advisor"]),
					role: pick(["smol", "default", "slow"]),
					api,
					provider: p,
					model: pick(ms),
					usage: ompUsage(),
					stopReason: pick(["stop", "error"]),
				};
				if (u.stopReason === "error") u.errorMessage = text(3);
				await call("appendModelUsage", () => sm.appendModelUsage(u, { sessionId: sm.getSessionId(), parentId }));
				break;
			}
			case "title":
				await call("setSessionName", () => sm.setSessionName(pick(TITLES), chance(0.5) ? "user" : "auto", chance(0.5) ? pick(["rename", "auto-title"]) : undefined));
				break;
			case "label":
				if (ids.length) {
					const label = weighted([["name", 5], [undefined, 2], ["", 1]] as const);
					await call("appendLabelChange", () => sm.appendLabelChange(pick(ids), label === "name" ? pick(["checkpoint", "good state", "🏷️ tag", " spaced "]) : label));
				}
				break;
			case "branch":
				if (ids.length) await call("branch", () => sm.branch(pick(ids)));
				break;
			case "branchSummary": {
				const target = ids.length && chance(0.85) ? pick(ids) : null;
				const summary = chance(0.15) ? "" : text(15);
				const details = chance(0.5) ? { readFiles: ["x"], modifiedFiles: [] } : undefined;
				await call("branchWithSummary", () => sm.branchWithSummary(target, summary, details, weighted([[undefined, 5], [true, 1], [false, 1]] as const)));
				break;
			}
			case "resetLeaf":
				await call("resetLeaf", () => sm.resetLeaf());
				break;
			case "compaction": {
				const branch: any[] = sm.getBranch();
				if (branch.length === 0) break;
				const first = chance(0.6) ? pick(branch.filter((e) => e.type === "message").concat(branch.slice(-1))).id : pick(branch).id;
				const options: Record<string, unknown> = {};
				if (chance(0.5)) options.tokensAfter = int(0, 40000);
				if (chance(0.5)) options.method = pick(["soft", "handoff", "shake", "remote", "snapcompact"]);
				if (chance(0.4)) options.details = chance(0.6) ? { readFiles: ["src/a.rs", "b.md"].slice(0, int(0, 2)), modifiedFiles: ["src/a.rs"].slice(0, int(0, 1)) } : anyValue();
				if (chance(0.2)) options.fromExtension = chance(0.5);
				if (chance(0.1)) options.providerReplayThroughEntryId = pick(branch).id;
				const shortSummary = chance(0.6) ? text(5) : undefined;
				const id = await call("appendCompaction", () =>
					sm.appendCompaction(text(20), shortSummary, first, chance(0.9) ? int(0, 200000) : pick([0, 1.5]), options),
				);
				if (chance(0.2)) {
					// session-maintenance.ts's dead-end warning: mutate the latest compaction, rewrite
					await call("compactionWarning", async () => {
						const entry = sm.getEntry(id);
						entry.warning = "Compaction freed too little context to make progress — pausing automatic maintenance.";
						await sm.rewriteEntries();
					});
				}
				break;
			}
			case "reset":
				await call("appendResetBoundary", () => sm.appendResetBoundary());
				break;
			case "toBranch": {
				if (!ids.length) break;
				const parent = chance(0.9) ? pick(ids) : null;
				const m = chance(0.5) ? userMessage() : assistantMessage({ stopReason: "stop" });
				await call("appendMessageToBranch", () => sm.appendMessageToBranch(m, parent));
				break;
			}
			case "sessionInit":
				await call("appendSessionInit", () =>
					sm.appendSessionInit({ systemPrompt: text(8), task: text(8), tools: ["read", "bash"].slice(0, int(0, 2)), ...(chance(0.5) ? { agent: "explore" } : {}) }),
				);
				break;
			case "credentialPin":
				await call("appendCredentialPin", () => sm.appendCredentialPin(pick(["anthropic", "openai"]), hex(16)));
				break;
			case "discard": {
				const leaf = sm.getLeafId();
				if (leaf) await call("discardEntryDurably", () => sm.discardEntryDurably(leaf));
				break;
			}
		}
	}
	if (chance(0.15)) {
		// end like a process that died mid-turn: user tail or tool-call tail, then session_exit
		const kind = pick(["signal", "fatal", "normal"]);
		if (chance(0.5)) await call("appendMessage:user", () => sm.appendMessage(userMessage()));
		else {
			const m = assistantMessage({ stopReason: "toolUse" });
			if (!(m.content as unknown[]).some((b: any) => b.type === "toolCall")) (m.content as unknown[]).push(toolCallBlock());
			await call("appendMessage:assistant:toolUse", () => sm.appendMessage(m));
		}
		await call(`appendCustomEntry:session_exit:${kind}`, () =>
			sm.appendCustomEntry("session_exit", {
				reason: kind === "signal" ? "SIGTERM" : "exit",
				kind,
				recordedAt: iso(),
				...(pending.length ? { pendingToolCalls: pending.map((p) => ({ toolCallId: p.id, toolName: p.name, args: p.args })) } : {}),
			}),
		);
	}
	return { sm, ops };
}

const work = path.join(OUT, ".sessions");
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const baseSeed = hashString(String(seedArg));
const t0 = performance.now();
let totalOps = 0;
for (let i = 0; i < count; i++) {
	random.reseed(hashString(`${seedArg}:${i}`) ^ baseSeed);
	resetIds();
	clock = START + i * 1000;
	setSystemTime(new Date(clock));
	const calls: Record<string, number> = {};
	const { sm, ops } = await driveSession(work, calls);
	totalOps += ops;
	await sm.ensureOnDisk();
	await sm.flush();
	const entries: any[] = sm.getEntries();
	await sm.close();
	const file = sm.getSessionFile();
	if (!file || !fs.existsSync(file)) throw new Error(`omp did not write a session file (${file})`);
	const name = `${seedArg}-${i}`;
	fs.copyFileSync(file, path.join(OUT, `${name}.jsonl`));
	fs.rmSync(file);
	const args: Record<string, unknown> = {};
	if (entries.length && chance(leafRate)) args.leaf = pick(entries).id;
	fs.writeFileSync(path.join(OUT, `${name}.args.json`), `${JSON.stringify(args)}\n`);
	const logs = takeLogs();
	fs.writeFileSync(
		path.join(OUT, `${name}.meta.json`),
		`${JSON.stringify({ ops, entries: entries.length, calls, ...(logs.length ? { warnings: logs } : {}) })}\n`,
	);
}
fs.rmSync(work, { recursive: true, force: true });
process.stderr.write(`omp-gen: ${count} sessions (${totalOps} API calls) in ${((performance.now() - t0) / 1000).toFixed(1)}s → ${OUT}\n`);
