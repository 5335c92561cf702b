#!/usr/bin/env bun
// omp-examples.ts — writes a few small session files with omp 18.3.4's own SessionManager API
// (nothing hand-written), for trying omp-ref.ts and as seeds for tests.
//
//   TZ=UTC vendor/omp/bun/bin/bun omp/omp-examples.ts OUT_DIR
//
// Writes OUT_DIR/<name>.jsonl and OUT_DIR/agent/blobs/<sha256> (the agent dir omp wrote blobs to;
// pass `--agent-dir OUT_DIR/agent` to omp-ref.ts). Ids are deterministic (omp-runtime.ts); the
// clock starts at 2026-01-01T00:00:00Z and advances one second per call to omp.
import { setSystemTime } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadOmp, resetIds, setupOmp } from "./omp-runtime.ts";

const out = process.argv[2];
if (!out) {
	process.stderr.write("usage: bun omp-examples.ts OUT_DIR\n");
	process.exit(2);
}
const OUT = path.resolve(out);
const AGENT = path.join(OUT, "agent");
fs.mkdirSync(AGENT, { recursive: true });
const START = Date.UTC(2026, 0, 1);
setupOmp({ agentDir: AGENT, writeAgentDir: true, now: START });
const omp = await loadOmp();

let clock = START;
function tick(): number {
	clock += 1000;
	setSystemTime(new Date(clock));
	return clock;
}
const CWD = "/work/example-project";
const MODEL = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" };
const usage = (input: number, output: number) => ({
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: input + output,
	cost: { input: input / 1e6, output: (output * 5) / 1e6, cacheRead: 0, cacheWrite: 0, total: (input + output * 5) / 1e6 },
});
const user = (text: string, extra: unknown[] = []) => ({ role: "user", content: [{ type: "text", text }, ...extra], timestamp: tick() });
const assistant = (content: unknown[], stopReason = "stop", extra: Record<string, unknown> = {}) => ({
	role: "assistant",
	content,
	...MODEL,
	usage: usage(100, 20),
	stopReason,
	timestamp: tick(),
	...extra,
});
const toolCall = (id: string, name: string, args: Record<string, unknown>) => ({ type: "toolCall", id, name, arguments: args });
const toolResult = (toolCallId: string, toolName: string, text: string) => ({
	role: "toolResult",
	toolCallId,
	toolName,
	content: [{ type: "text", text }],
	isError: false,
	timestamp: tick(),
});

async function session(name: string, build: (sm: any) => Promise<void> | void): Promise<string> {
	resetIds();
	clock = START;
	setSystemTime(new Date(clock));
	const dir = path.join(OUT, ".sessions");
	const sm = omp.SessionManager.create(CWD, dir);
	await build(sm);
	await sm.ensureOnDisk();
	await sm.flush();
	await sm.close();
	const file = sm.getSessionFile();
	const target = path.join(OUT, `${name}.jsonl`);
	fs.copyFileSync(file, target);
	fs.rmSync(file);
	return target;
}

const written: string[] = [];

// 1. title slot + user title, model/thinking changes, a tool round trip, model_usage, a label.
written.push(
	await session("basic-title-tools", async (sm) => {
		tick();
		sm.appendModelChange("anthropic/claude-sonnet-4-5");
		tick();
		sm.appendThinkingLevelChange("high", "high");
		const u = sm.appendMessage(user("List the files, please."));
		sm.appendMessage(assistant([{ type: "text", text: "Listing." }, toolCall("call_1", "bash", { command: "ls" })], "toolUse"));
		sm.appendMessage(toolResult("call_1", "bash", "README.md\nsrc\n"));
		const a = sm.appendMessage(assistant([{ type: "text", text: "Two entries: README.md and src." }]));
		tick();
		sm.appendModelUsage(
			{ purpose: "title", role: "smol", ...MODEL, model: "claude-haiku-4-5", usage: usage(50, 5), stopReason: "stop" },
			{ sessionId: sm.getSessionId(), parentId: u },
		);
		tick();
		await sm.setSessionName("List project files", "user", "rename");
		tick();
		sm.appendLabelChange(a, "answer");
	}),
);

// 2. /clear: a reset_boundary between two exchanges, plus plan mode and a second model role.
written.push(
	await session("reset-boundary-mode", async (sm) => {
		sm.appendMessage(user("First question, before /clear."));
		sm.appendMessage(assistant([{ type: "text", text: "First answer." }]));
		tick();
		sm.appendResetBoundary();
		tick();
		sm.appendModeChange("plan", { planFile: "PLAN.md" });
		tick();
		sm.appendModelChange("openai/gpt-5", "slow");
		sm.appendMessage(user("Second question, after /clear."));
		sm.appendMessage(assistant([{ type: "text", text: "Second answer." }]));
		tick();
		await sm.setSessionName("After clear", "auto");
	}),
);

// 3. An aborted assistant turn, then a turn whose tool call never got a result, then the process
//    died (session_exit kind "signal" with the pending call): on resume omp appends its
//    "Previous OMP process exited before completing the turn." message.
written.push(
	await session("aborted-dangling-exit", async (sm) => {
		sm.appendMessage(user("Start something long."));
		sm.appendMessage(assistant([{ type: "text", text: "Starting…" }], "aborted", { errorMessage: "Request was aborted" }));
		sm.appendMessage(user("Try again: read the config."));
		sm.appendMessage(
			assistant([{ type: "text", text: "Reading it." }, toolCall("call_9", "read", { path: "config.toml" })], "toolUse"),
		);
		tick();
		sm.appendCustomEntry("tool_execution_start", {
			toolCallId: "call_9",
			toolName: "read",
			args: { path: "config.toml" },
			startedAt: new Date(clock).toISOString(),
		});
		tick();
		sm.appendCustomEntry("session_exit", {
			reason: "SIGTERM",
			kind: "signal",
			recordedAt: new Date(clock).toISOString(),
			pendingToolCalls: [{ toolCallId: "call_9", toolName: "read", args: { path: "config.toml" } }],
		});
	}),
);

// 4. An image of >= 1024 base64 characters: omp externalizes it to agent/blobs/<sha256> and stores
//    `blob:sha256:<hex>` in the file.
written.push(
	await session("image-blob", async (sm) => {
		const bytes = new Uint8Array(2048);
		for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + 3) & 0xff;
		const data = Buffer.from(bytes).toString("base64");
		sm.appendMessage(user("What is in this image?", [{ type: "image", data, mimeType: "image/png" }]));
		sm.appendMessage(assistant([{ type: "text", text: "Noise." }]));
	}),
);

// 5. A branch (leaf moved back, new child) and a compaction on the new branch.
written.push(
	await session("branch-compaction", async (sm) => {
		const u1 = sm.appendMessage(user("Question one."));
		const a1 = sm.appendMessage(assistant([{ type: "text", text: "Answer one." }]));
		sm.appendMessage(user("Question two (abandoned branch)."));
		sm.appendMessage(assistant([{ type: "text", text: "Answer two." }]));
		tick();
		sm.branch(a1);
		const u3 = sm.appendMessage(user("Question two, rephrased."));
		sm.appendMessage(assistant([{ type: "text", text: "Answer two, rephrased." }]));
		tick();
		sm.appendCompaction("The user asked two questions; both were answered.", "Two questions answered", u3, 1234, {
			tokensAfter: 120,
		});
		sm.appendMessage(user("Question three."));
		sm.appendMessage(assistant([{ type: "text", text: "Answer three." }]));
		void u1;
	}),
);

fs.rmSync(path.join(OUT, ".sessions"), { recursive: true, force: true });
for (const f of written) process.stdout.write(`${f}\n`);
