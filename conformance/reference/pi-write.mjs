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
//        (optional "sessionDir": an absolute directory to write in, emptied first, instead of a
//        temporary one: the paths of session files are written in the headers of branched
//        sessions and forks, so scenarios with those use a fixed one)
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
//   {"op":"create_branched_session","leaf":"…","sessionId":"…","labelIds":["…",…]}
//        the session continues in the new one (labels re-added with the given 8-character ids)
//   {"op":"fork","cwd":"/other","sessionId":"…"}     SessionManager.forkFrom(current file, cwd)
//   {"op":"reopen"}                                 SessionManager.open(current file)
//   {"op":"export"}      serializeSessionBranch (0.87, 1.5): the JSONL export of the active
//                        branch, which becomes the output instead of the session file
//   ("sessionId" on any operation: the UUID v7 pi draws next for a new session.)
//
// OUT receives the last export when the script has one, else the file of the session it ends in, exactly as pi left it in its
// session directory (a temporary one); when pi never wrote it (no conversation yet), OUT is not
// created. Standard output
// gets one JSON line: {"written": bool, "returned": [what each append returned: its id, or for
// appendUsage the entry], "leaf": id|null}.
// A failing operation prints {"error": "...", "line": N} and exits 1.
//
// Each operation calls pi's public SessionManager method of the same name with the given
// arguments, in the given order; nothing of pi's is changed but the two sources of variation,
// replaced before pi runs: `crypto.randomUUID` (from the queue of given ids) and the global
// `Date` (a clock set per operation).
import { readFileSync, writeFileSync } from "node:fs";
import { normalizePi } from "./pi-versions.mjs";
import { loadPi, runScript } from "./write-driver.mjs";

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
	const result = runScript(await loadPi(v), v, readFileSync(scriptPath, "utf8"));
	if (result.error !== undefined) {
		process.stdout.write(`${JSON.stringify(result)}\n`);
		process.exitCode = 1;
		return;
	}
	if (result.file) writeFileSync(outPath, result.file);
	process.stdout.write(`${JSON.stringify({ written: result.file !== null, returned: result.returned, leaf: result.leaf })}\n`);
}

await main();
