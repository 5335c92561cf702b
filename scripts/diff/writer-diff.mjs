#!/usr/bin/env node
// writer-diff.mjs — differential test of the writer: random operation scripts run through pi's
// own SessionManager (conformance/reference/write-driver.mjs, in this process) and through our
// SessionWriter (`pi-session conformance write`), with the same ids and clock; the files must be
// byte-identical, or both sides must refuse the same operation.
//
//   node scripts/diff/writer-diff.mjs --seed S --count N [--pi 0.73|0.87|1.5|all] [--bin PATH] [--keep DIR]
//                                     [--context-every K]
//
// Every K-th file written (default 5) is also opened by all three pi versions: each must load
// it, and its buildSessionContext() must equal `pi-session context --pi V` (files of one pi
// read by every pi).
//
// Scripts are generated from a seeded mulberry32 PRNG: every entry type the profile has, every
// optional argument present and absent, messages of every role, unicode and escapes (control
// characters, U+2028, lone surrogates in payloads: arguments the Rust API takes as `&str` get
// every other string), numbers JavaScript spells oddly, branches, resets,
// branch summaries, compactions with kept windows and defaults, labels set, emptied and moved,
// context edits (strings, arrays, null), and now and then an operation pi refuses (a label or
// branch on a missing entry, a context edit off the branch). Exit 1 on any mismatch; the
// script is printed (and kept with --keep).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { mulberry32 } from "../../conformance/reference/shared.mjs";
import { loadPi, runScript } from "../../conformance/reference/write-driver.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function generator(seed) {
	const R = mulberry32(seed);
	const int = (n) => Math.floor(R() * n);
	const pick = (xs) => xs[int(xs.length)];
	const chance = (p) => R() < p;
	const STRINGS = [
		"", "hi", "fix the build", "  padded  ", "line\nbreak", "tab\there", "quote \" and \\ backslash",
		"\u0000\u0001\u001f", "\u2028\u2029", "é ü 中文 🎉", "\ud800", "x\udc00y", "\ud83d\ude00", "</script>",
		"a".repeat(300),
	];
	const NUMBERS = [0, -0, 1, -1.5, 0.1, 0.30000000000000004, 1e21, 1e-7, 5e-324, 1.7976931348623157e308,
		9007199254740993, 123456789012345678901234567890, 42];
	const KEYS = ["a", "b", "1", "0", "10", "__proto__", "a b", "é", "type", "id"];
	const str = () => pick(STRINGS);
	// Arguments the Rust API takes as `&str` (names, labels, summaries, types): any string but a
	// lone surrogate, which a Rust string cannot hold (payloads — JSON values — can).
	const text = () => pick(STRINGS.filter((x) => x.isWellFormed()));
	const num = () => pick(NUMBERS);
	function value(depth) {
		const k = depth > 2 ? int(4) : int(6);
		if (k === 0) return null;
		if (k === 1) return chance(0.5);
		if (k === 2) return num();
		if (k === 3) return str();
		if (k === 4) return Array.from({ length: int(4) }, () => value(depth + 1));
		const o = {};
		for (let i = int(4); i > 0; i--) o[pick(KEYS)] = value(depth + 1);
		return o;
	}
	const usage = () => ({
		input: int(1000), output: int(1000), cacheRead: 0, cacheWrite: int(3),
		totalTokens: int(2000), cost: { input: num(), output: 0.001, cacheRead: 0, cacheWrite: 0, total: 0.5 },
	});
	return { R, int, pick, chance, str, text, num, value, usage };
}

const ROLES = ["user", "assistant", "toolResult", "system", "custom", "bashExecution"];

function message(g, role, ts) {
	switch (role) {
		case "user":
			return g.chance(0.5)
				? { role, content: g.str(), timestamp: ts }
				: { role, content: [{ type: "text", text: g.str() }, ...(g.chance(0.3) ? [{ type: "image", data: "AA==", mimeType: "image/png" }] : [])], timestamp: ts };
		case "assistant":
			return {
				role, content: [
					...(g.chance(0.3) ? [{ type: "thinking", thinking: g.str() }] : []),
					{ type: "text", text: g.str() },
					...(g.chance(0.3) ? [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: g.str() } }] : []),
				],
				api: "anthropic-messages", provider: g.pick(["anthropic", "openai"]), model: g.pick(["m1", "m2"]),
				usage: g.usage(), stopReason: g.pick(["stop", "toolUse", "length"]), timestamp: ts,
			};
		case "toolResult":
			return { role, toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: g.str() }], isError: g.chance(0.2), timestamp: ts };
		case "system": {
			const m = { role, content: g.chance(0.7) ? g.str() : [{ type: "text", text: g.str() }, { type: "image", data: "AA==", mimeType: "image/png" }] };
			if (g.chance(0.5)) m.sections = { [g.pick(["tools", "style", "1", "2"])]: g.chance(0.3) ? null : g.str() };
			if (g.chance(0.5)) m.toolsAdded = [{ name: g.pick(["read", "bash", "grep"]), description: g.str(), parameters: { type: "object" } }];
			if (g.chance(0.3)) m.toolsRemoved = [{ name: g.pick(["read", "bash", "grep"]) }];
			if (g.chance(0.8)) m.timestamp = ts;
			return m;
		}
		case "custom":
			return { role, customType: "ext", content: g.str(), display: g.chance(0.5), timestamp: ts };
		default:
			return { role, command: g.str(), output: g.str(), exitCode: g.pick([0, 1, null]), cancelled: false, truncated: false, timestamp: ts };
	}
}

/**
 * One random script for `profile`: its NDJSON text, and `divergesAt`, the number of lines
 * before the first createBranchedSession where pi 0.73.1 orphans entries (pi#5669) and ours
 * re-chains them (null when none does). The script follows our tree from there on.
 */
function script(seed, index, profile) {
	const g = generator(seed * 100003 + index);
	const newer = profile !== "0.73";
	let ms = Date.UTC(2026, 0, 1) + g.int(1e9);
	const lines = [];
	let parent = new Map(); // id -> parentId (for the active branch)
	let kind = new Map(); // id -> editable (context_edit target)
	const type = new Map(); // id -> entry type
	const firstKept = new Map(); // compaction id -> its firstKeptEntryId
	let divergesAt = null;
	let labels = new Map(); // targetId -> label (pi's labelsById, in Map order)
	let starts = new Set(); // messages that make pi write the file (the profile's first-write rule)
	const written = () => starts.size > 0;
	let leaf = null;
	let nextId = 1;
	const newId = () => (seed * 7919 + index * 131 + nextId++).toString(16).padStart(8, "0").slice(-8);
	const time = () => {
		ms += g.pick([0, 1, 999, 1000, 60000]);
		return new Date(ms).toISOString();
	};
	const ids = () => [...parent.keys()];
	const branch = () => {
		const path = [];
		for (let at = leaf; at !== null && at !== undefined; at = parent.get(at)) path.push(at);
		return path;
	};
	const op = (o) => lines.push(JSON.stringify(o));
	const append = (o, editable = false) => {
		const id = newId();
		op({ ...o, id, timestamp: time() });
		parent.set(id, o.op === "branch_with_summary" ? o.from : leaf);
		kind.set(id, editable);
		type.set(id, o.op);
		leaf = id;
		return id;
	};
	let sessions = 0;
	const sessionId = () => `0195f3a4-0000-7000-8000-${String(index * 100 + ++sessions).padStart(12, "0")}`;
	op({
		op: "create",
		cwd: g.pick(["/home/u/project", "/tmp/ü dir", "/w"]),
		id: sessionId(),
		timestamp: time(),
		sessionDir: join(tmpdir(), `pi-writer-diff-${process.pid}`),
	});
	const steps = 3 + g.int(30);
	for (let s = 0; s < steps; s++) {
		const roll = g.int(100);
		if (roll < 40) {
			const role = g.pick(ROLES);
			const id = append({ op: "message", message: message(g, role, ms) }, ["user", "assistant", "toolResult"].includes(role));
			if (role === "assistant" || (role === "user" && profile === "1.5")) starts.add(id);
		} else if (roll < 44) append({ op: "thinking_level_change", thinkingLevel: g.pick(["off", "low", "high"]) });
		else if (roll < 48) append({ op: "model_change", provider: g.pick(["anthropic", "openai"]), modelId: g.text() });
		else if (roll < 53 && ids().length > 0) {
			const o = { op: "compaction", summary: g.text() };
			o.firstKeptEntryId = newer && g.chance(0.3) ? null : g.pick(ids());
			o.tokensBefore = g.pick([0, 1234, 1e21, 0.5]);
			if (g.chance(0.6)) {
				o.details = g.value(0);
				if (g.chance(0.6)) {
					o.fromHook = g.chance(0.5);
					if (newer && g.chance(0.6)) o.usage = g.usage();
				}
			}
			firstKept.set(append(o), o.firstKeptEntryId);
		} else if (roll < 57) {
			const o = { op: "custom", customType: g.pick(["ext", "state", "é"]) };
			if (g.chance(0.7)) o.data = g.value(0);
			append(o);
		} else if (roll < 61) {
			const o = { op: "custom_message", customType: "note", content: g.chance(0.5) ? g.str() : [{ type: "text", text: g.str() }], display: g.chance(0.5) };
			if (g.chance(0.5)) o.details = g.value(0);
			append(o, true);
		} else if (roll < 64) append({ op: "session_info", name: g.pick(["  name  ", "a\nb", "a\r\n\r\nb", "", "\u00a0x\ufeff", g.text()]) });
		else if (roll < 70 && ids().length > 0) {
			const o = { op: "label", targetId: g.chance(0.05) ? "missing0" : g.pick(ids()) };
			if (g.chance(0.8)) o.label = g.pick(["", "start", "checkpoint", g.text()]);
			if (o.targetId === "missing0") {
				op({ ...o, id: newId(), timestamp: time() });
				break; // pi refuses: the script ends with the refusal
			}
			append(o);
			if (o.label) labels.set(o.targetId, o.label);
			else labels.delete(o.targetId);
		} else if (roll < 74 && newer) {
			const o = { op: "usage", kind: g.pick(["compaction", "cache-warm"]), provider: "p", model: "m", usage: g.usage() };
			if (g.chance(0.5)) o.note = g.pick(["", "a note", g.text()]);
			append(o);
		} else if (roll < 79 && newer) {
			const onBranch = branch().filter((id) => kind.get(id));
			if (onBranch.length === 0) continue;
			const target = g.chance(0.05) ? g.pick(ids()) : g.pick(onBranch);
			const replacement = g.pick([null, { content: g.str() }, { content: [{ type: "text", text: g.str() }] }]);
			if (!onBranch.includes(target) || !kind.get(target)) {
				op({ op: "context_edit", targetId: target, replacement, id: newId(), timestamp: time() });
				break; // pi refuses
			}
			append({ op: "context_edit", targetId: target, replacement });
		} else if (roll < 87 && ids().length > 0) {
			if (g.chance(0.03)) {
				op({ op: "branch", from: "missing1" });
				break;
			}
			leaf = g.pick(ids());
			op({ op: "branch", from: leaf });
		} else if (roll < 89) {
			leaf = null;
			op({ op: "reset_leaf" });
		} else if (roll < 91 && ids().length > 0) {
			// createBranchedSession: the path without its labels, re-chained (as 0.87.1+ and
			// ours in every profile do), then a label entry per label of the path's entries, in
			// Map order.
			const target = g.pick(ids());
			const path = [];
			for (let at = target; at !== null && at !== undefined && parent.has(at); at = parent.get(at)) path.unshift(at);
			const kept = path.filter((id) => type.get(id) !== "label");
			const keptSet = new Set(kept);
			const moved = [...labels].filter(([t]) => keptSet.has(t));
			const labelIds = moved.map(() => newId());
			// pi 0.73.1 leaves an entry that followed a dropped label, or a compaction kept from
			// one, pointing at it: from here on pi's file and ours differ by design.
			const onPath = new Set(path);
			const orphaning = kept.some(
				(id, n) => (parent.get(id) ?? null) !== (n === 0 ? null : kept[n - 1]) ||
					(onPath.has(firstKept.get(id)) && type.get(firstKept.get(id)) === "label"),
			);
			if (!newer && orphaning && divergesAt === null) divergesAt = lines.length;
			op({ op: "create_branched_session", leaf: target, timestamp: time(), sessionId: sessionId(), labelIds });
			const nextParent = new Map();
			const nextKind = new Map();
			let previous = null;
			for (const id of kept) {
				nextParent.set(id, previous);
				nextKind.set(id, kind.get(id));
				previous = id;
			}
			labelIds.forEach((id, n) => {
				nextParent.set(id, previous);
				nextKind.set(id, false);
				type.set(id, "label");
				previous = id;
			});
			parent = nextParent;
			kind = nextKind;
			starts = new Set(kept.filter((id) => starts.has(id)));
			labels = new Map(moved);
			leaf = previous;
		} else if (roll < 92 && (written() || g.chance(0.1))) {
			op({ op: "reopen" });
		} else if (roll < 93 && (written() || g.chance(0.1))) {
			op({ op: "fork", cwd: g.pick(["/home/u/other", "/srv/ü"]), timestamp: time(), sessionId: sessionId() });
		} else if (ids().length > 0) {
			const o = { op: "branch_with_summary", from: g.chance(0.15) ? null : g.pick(ids()), summary: g.text() };
			if (g.chance(0.5)) {
				o.details = g.value(0);
				if (g.chance(0.6)) {
					o.fromHook = g.chance(0.5);
					if (newer && g.chance(0.5)) o.usage = g.usage();
				}
			}
			append(o);
		}
	}
	// Now and then the output is the export of the active branch (0.87.1+) instead of the file.
	if (newer && g.chance(0.15)) op({ op: "export", timestamp: time() });
	return { text: `${lines.join("\n")}\n`, divergesAt };
}

/** "match", "both-refuse" (at the same script line) or "mismatch". */
function judge(ref, got) {
	if (ref.error !== undefined || got.error !== undefined) {
		return ref.error !== undefined && got.error !== undefined && ref.line === got.line ? "both-refuse" : "mismatch";
	}
	if (ref.file === null || got.file === null) return ref.file === got.file ? "match" : "mismatch";
	return Buffer.compare(ref.file, got.file) === 0 ? "match" : "mismatch";
}

/** The file has an entry whose parentId names no entry (PS0212: pi takes it for a root). */
function danglingParent(bin, file, work) {
	const path = join(work, "dangling.jsonl");
	writeFileSync(path, file);
	return /PS0212/.test(String(spawnSync(bin, ["validate", "--quiet", "--pi", "0.73", path]).stdout));
}

function ours(bin, profile, text, work) {
	const out = join(work, "ours.jsonl");
	rmSync(out, { force: true });
	const r = spawnSync(bin, ["conformance", "write", "--pi", profile, out], { input: text, env: { ...process.env, TZ: "UTC" } });
	if (r.status === 0) {
		let file = null;
		try {
			file = readFileSync(out);
		} catch {}
		return { file };
	}
	const m = /script line (\d+)/.exec(String(r.stderr));
	return { error: String(r.stderr).trim(), line: m ? Number(m[1]) : -1 };
}

async function main() {
	const a = { seed: 1, count: 100, pi: "all", bin: join(ROOT, "target/debug/pi-session"), keep: null };
	const argv = process.argv.slice(2);
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i].replace(/^--/, "");
		a[k] = argv[++i];
	}
	const profiles = a.pi === "all" ? ["0.73", "0.87", "1.5"] : [a.pi];
	const work = mkdtempSync(join(tmpdir(), "writer-diff-"));
	// Every `contextEvery`-th file written is also opened by all three pi versions: each must
	// load it, and its buildSessionContext() must equal `pi-session context --pi V`.
	const contextEvery = Number(a["context-every"] ?? 5);
	const readers = {};
	for (const v of ["0.73", "0.87", "1.5"]) readers[v] = (await loadPi(v)).SessionManager;
	let contextChecks = 0;
	const contextMismatches = [];
	const checkContext = (file, name) => {
		for (const [v, SessionManager] of Object.entries(readers)) {
			const copy = join(work, `context-${v}.jsonl`);
			writeFileSync(copy, file);
			let expected;
			try {
				const ctx = SessionManager.open(copy, work).buildSessionContext();
				expected = `${JSON.stringify(ctx)}\n`;
			} catch (e) {
				contextMismatches.push(`${name}: pi ${v} cannot open the file: ${e?.message ?? e}`);
				continue;
			}
			writeFileSync(copy, file);
			const r = spawnSync(a.bin, ["context", copy, "--pi", v], { env: { ...process.env, TZ: "UTC" } });
			if (r.status !== 0 || String(r.stdout) !== expected) {
				contextMismatches.push(`${name}: pi ${v}'s context differs from pi-session context --pi ${v}`);
			}
			contextChecks += 1;
		}
	};
	const counts = {};
	let mismatches = 0;
	for (const profile of profiles) {
		const pi = await loadPi(profile);
		const c = (counts[profile] = { match: 0, "both-refuse": 0, mismatch: 0, files: 0, bytes: 0, deliberate: 0 });
		for (let i = 0; i < Number(a.count); i++) {
			const { text, divergesAt } = script(Number(a.seed), i, profile);
			const ref = runScript(pi, profile, text);
			const got = ours(a.bin, profile, text, work);
			let verdict = judge(ref, got);
			if (ref.file && got.file) {
				c.files += 1;
				c.bytes += ref.file.length;
				if (verdict === "match" && contextEvery > 0 && c.files % contextEvery === 0) {
					checkContext(got.file, `${a.seed}-${i}-pi${profile}`);
				}
			}
			// pi 0.73.1's createBranchedSession orphans the entries that followed a label (pi#5669);
			// ours re-chains them (docs/divergences.md). A difference is deliberate when the script
			// up to that branched session gives byte-identical files, and ours runs to the end
			// and writes a file where every parentId names an entry.
			if (verdict === "mismatch" && divergesAt !== null && got.error === undefined) {
				const prefix = `${text.split("\n").slice(0, divergesAt).join("\n")}\n`;
				const before = judge(runScript(pi, profile, prefix), ours(a.bin, profile, prefix, work));
				if (before === "match" && (got.file === null || !danglingParent(a.bin, got.file, work))) verdict = "deliberate";
			}
			c[verdict] += 1;
			if (verdict === "mismatch") {
				mismatches += 1;
				const name = `${a.seed}-${i}-pi${profile}`;
				process.stdout.write(`MISMATCH ${name}\n  pi:   ${ref.error ?? (ref.file === null ? "no file" : `${ref.file.length} bytes`)}\n  ours: ${got.error ?? (got.file === null ? "no file" : `${got.file.length} bytes`)}\n`);
				if (ref.file && got.file) {
					const [x, y] = [ref.file.toString().split("\n"), got.file.toString().split("\n")];
					const n = x.findIndex((l, j) => l !== y[j]);
					process.stdout.write(`  first different line ${n + 1}:\n    pi:   ${x[n]?.slice(0, 300)}\n    ours: ${y[n]?.slice(0, 300)}\n`);
				}
				if (a.keep) {
					mkdirSync(a.keep, { recursive: true });
					writeFileSync(join(a.keep, `${name}.ndjson`), text);
					if (ref.file) writeFileSync(join(a.keep, `${name}.pi.jsonl`), ref.file);
					if (got.file) writeFileSync(join(a.keep, `${name}.ours.jsonl`), got.file);
				}
			}
		}
	}
	rmSync(work, { recursive: true, force: true });
	for (const [p, c] of Object.entries(counts)) {
		process.stdout.write(
			`pi ${p}: ${c.match} alike (${c.files} files written, ${c.bytes} bytes compared; the rest no file on both sides), ${c["both-refuse"]} refused alike, ${c.deliberate} deliberate differences (branched sessions: pi orphans, we re-chain), ${c.mismatch} mismatches (seed ${a.seed}, ${a.count} scripts)\n`,
		);
	}
	for (const m of contextMismatches) process.stdout.write(`CONTEXT MISMATCH ${m}\n`);
	process.stdout.write(`context: ${contextChecks} openings of our files by pi 0.73.1, 0.87.1 and 1.5.2, ${contextMismatches.length} differing from pi-session context\n`);
	process.exitCode = mismatches === 0 && contextMismatches.length === 0 ? 0 : 1;
}

await main();
