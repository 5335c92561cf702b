#!/usr/bin/env node
// The measurements of README.md, on a large session (default: /tmp/pi-session-bench-128MB.jsonl,
// made by `target/debug/pi-session gen --size 128MB --seed 1` when missing: the size of the
// session pi takes 10 s to open in pi#8843), with the release addon (`npm run build:release`
// first):
//
// 1. Open the session and build its context, ours (`open(file, { pi: "0.73" }).context()`)
//    against pi 0.73.1's `SessionManager.open(file).buildSessionContext()`: each run in a child
//    process of its own (time of the call, and the child's peak RSS from
//    process.resourceUsage().maxRSS), median of --runs (5).
// 2. The two ways of handing an answer to JavaScript, in one process: one JSON string read by
//    JSON.parse (what the package does) against the values built one by one through N-API
//    (the hidden __contextObjectsForBench / __entriesObjectsForBench), for the context (small)
//    and for every entry (the whole file), median of --runs.
//
// 3. The drop-in loadEntriesFromFile against pi 0.73.1's own, in one process (median).
// 4. validate() of the conformance corpus (conformance/cases, conformance/validate) from Node,
//    beside `pi-session validate --format json` of the same files (the optimised binary given
//    with --cli, default target/release/pi-session, else target/ci-release/pi-session), each
//    median of --runs.
//
//   node bench/bench.mjs [--file FILE] [--runs N] [--cli BINARY]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const root = dirname(dirname(here));
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const option = (name, fallback) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : fallback;
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (kb) => `${(kb / 1024).toFixed(0)} MiB`;

// ---- a child: one way of handing an answer over, timed `runs` times after a warm-up -----------
if (args[0] === "--transfer") {
	const [, what, how, file, count] = args;
	const piSession = require(here);
	const session = piSession.open(file, { pi: "0.73" });
	const handle = session[Object.getOwnPropertySymbols(session)[0]];
	const run = {
		"context json": () => JSON.parse(handle.contextJson()),
		"context objects": () => handle.__contextObjectsForBench(),
		"entries json": () => JSON.parse(handle.entriesJson()),
		"entries objects": () => handle.__entriesObjectsForBench(),
	}[`${what} ${how}`];
	let result = run();
	const times = [];
	for (let i = 0; i < Number(count); i++) {
		result = null;
		const start = process.hrtime.bigint();
		result = run();
		times.push(Number(process.hrtime.bigint() - start) / 1e6);
	}
	process.stdout.write(`${JSON.stringify({ ms: median(times), size: handle[`${what}Json`]().length, n: result.length ?? result.messages.length })}\n`);
	process.exit(0);
}

// ---- a child: one side, one run ---------------------------------------------------------------
if (args[0] === "--child") {
	const [, side, file] = args;
	let load;
	if (side === "ours") {
		const piSession = require(here);
		load = () => piSession.open(file, { pi: "0.73" }).context();
	} else if (side === "pi") {
		const core = join(root, "conformance", "reference", "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
		const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);
		load = () => SessionManager.open(file).buildSessionContext();
	} else {
		// The process alone: what Node takes before any work.
		load = () => ({ messages: [] });
	}
	const start = process.hrtime.bigint();
	const context = load();
	const ms = Number(process.hrtime.bigint() - start) / 1e6;
	process.stdout.write(`${JSON.stringify({ ms, maxRssKb: process.resourceUsage().maxRSS, messages: context.messages.length })}\n`);
	process.exit(0);
}

// ---- the orchestrator ---------------------------------------------------------------------------
const runs = Number(option("--runs", "5"));
const file = option("--file", "/tmp/pi-session-bench-128MB.jsonl");
if (!existsSync(file)) {
	const cli = join(root, "target", "debug", "pi-session");
	console.error(`bench: writing ${file} (${cli} gen --size 128MB --seed 1)`);
	execFileSync(cli, ["gen", "--size", "128MB", "--seed", "1", "--out", file], { stdio: "inherit" });
}
const native = require(join(here, "pi-session.node"));
if (native.__profile() !== "release") {
	console.error("bench: pi-session.node is a debug build; run `npm run build:release` first");
	process.exit(1);
}
const mtime = statSync(file).mtimeMs;
console.log(`${file}: ${(statSync(file).size / 1e6).toFixed(1)} MB, ${runs} runs each, Node ${process.version}\n`);

function child(side) {
	const results = [];
	for (let i = 0; i < runs; i++) {
		const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", side, file], { encoding: "utf8", maxBuffer: 1 << 20 });
		if (run.status !== 0) throw new Error(`${side}: ${run.stderr}`);
		results.push(JSON.parse(run.stdout));
	}
	return { ms: median(results.map((r) => r.ms)), maxRssKb: median(results.map((r) => r.maxRssKb)), messages: results[0].messages };
}

const baseline = child("node");
const ours = child("ours");
const pi = child("pi");
if (statSync(file).mtimeMs !== mtime) throw new Error("pi changed the file");
if (ours.messages !== pi.messages) throw new Error(`not the same context: ${ours.messages} vs ${pi.messages} messages`);
console.log("1. open + context, each run in its own process (median)");
console.log(`   node alone:                        peak RSS ${mib(baseline.maxRssKb)}`);
console.log(`   pi-session (addon):  ${ours.ms.toFixed(0).padStart(6)} ms, peak RSS ${mib(ours.maxRssKb)}`);
console.log(`   pi 0.73.1:           ${pi.ms.toFixed(0).padStart(6)} ms, peak RSS ${mib(pi.maxRssKb)}`);
console.log(
	`   ratio: ${(pi.ms / ours.ms).toFixed(1)}x faster, ${(ours.maxRssKb / pi.maxRssKb).toFixed(2)}x the peak memory ` +
		`(${((ours.maxRssKb - baseline.maxRssKb) / (pi.maxRssKb - baseline.maxRssKb)).toFixed(2)}x above Node's own)`,
);
console.log(`   (${ours.messages} messages in the context)\n`);

// 2. JSON string vs N-API objects, each in a process of its own (so that one's garbage does not
// slow the other), median of `runs` after a warm-up.
const piSession = require(here);
function time(run) {
	const times = [];
	let result;
	for (let i = 0; i < runs; i++) {
		const start = process.hrtime.bigint();
		result = run();
		times.push(Number(process.hrtime.bigint() - start) / 1e6);
	}
	return { ms: median(times), result };
}
function transfer(what, how) {
	const run = spawnSync(process.execPath, ["--max-old-space-size=8192", fileURLToPath(import.meta.url), "--transfer", what, how, file, String(runs)], {
		encoding: "utf8",
	});
	if (run.status !== 0) throw new Error(`${what} ${how}: ${run.stderr}`);
	return JSON.parse(run.stdout);
}
console.log("2. handing the answer to JavaScript (median, each way in its own process)");
for (const what of ["context", "entries"]) {
	const viaJson = transfer(what, "json");
	const viaObjects = transfer(what, "objects");
	if (viaJson.n !== viaObjects.n) throw new Error(`${what}: not the same answer`);
	console.log(
		`   ${what} (${(viaJson.size / 1e6).toFixed(1)} MB of JSON): JSON string + JSON.parse ${viaJson.ms.toFixed(1)} ms, ` +
			`N-API objects ${viaObjects.ms.toFixed(1)} ms (${(viaObjects.ms / viaJson.ms).toFixed(2)}x)`,
	);
}

// 3. The drop-in reader against pi's, in this process.
const core = join(root, "conformance", "reference", "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
const piModule = await import(pathToFileURL(join(core, "session-manager.js")).href);
const oursLoad = time(() => piSession.loadEntriesFromFile(file, { pi: "0.73" }));
const piLoad = time(() => piModule.loadEntriesFromFile(file));
if (oursLoad.result.length !== piLoad.result.length) throw new Error("not the same entries");
console.log("\n3. loadEntriesFromFile (median, one process)");
console.log(`   pi-session: ${oursLoad.ms.toFixed(0)} ms; pi 0.73.1: ${piLoad.ms.toFixed(0)} ms (${(piLoad.ms / oursLoad.ms).toFixed(1)}x)`);

// 4. validate() of the corpus from Node, beside the command line on the same files.
const corpusDirs = [join(root, "conformance", "cases"), join(root, "conformance", "validate")];
const validated = time(() => piSession.validate(corpusDirs, { pi: "0.73" }));
const cli = option("--cli", ["release", "ci-release"].map((p) => join(root, "target", p, "pi-session")).find(existsSync));
console.log(`\n4. validate of the corpus (${validated.result.summary.files} files; median)`);
console.log(`   validate() from Node: ${validated.ms.toFixed(0)} ms`);
if (cli) {
	const cliRun = time(() => spawnSync(cli, ["validate", "--format", "json", "--pi", "0.73", ...corpusDirs], { maxBuffer: 1 << 30 }));
	const report = JSON.parse(cliRun.result.stdout);
	if (report.summary.files !== validated.result.summary.files) throw new Error("not the same files");
	console.log(`   ${cli} validate --format json (a process): ${cliRun.ms.toFixed(0)} ms (${(cliRun.ms / validated.ms).toFixed(2)}x the addon's time)`);
}
