// stats(): each session's own numbers are pi's (conformance/stats/pi.json, recorded from the
// pinned pis), history copied into a fork counted once, the options checked, and the very
// report `pi-session stats --format json` prints when the command-line tool is built.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { VERSIONS, piSession, root, temporaryDirectory } from "./helpers.mjs";

const recorded = JSON.parse(readFileSync(join(root, "conformance", "stats", "pi.json"), "utf8"));
const files = Object.keys(recorded).map((id) => ({ id, file: join(root, "conformance", "cases", id, "session.jsonl") }));

test("each session's own numbers are pi's, for every pi", () => {
	assert.ok(files.length > 200, `${files.length} sessions`);
	let compared = 0;
	for (const pi of VERSIONS) {
		const report = piSession.stats(files.map((f) => f.file), { pi });
		assert.equal(report.by, "session");
		const skipped = new Set(report.errors.map((e) => e.path));
		const byName = new Map(report.groups.map((g) => [g.name, g]));
		for (const { id, file } of files) {
			const expected = recorded[id][pi];
			const group = byName.get(file);
			if (expected.error !== undefined) {
				assert.ok(skipped.has(file) || group?.piUnreadable > 0, `${id} (pi ${pi}): pi fails, we neither skip nor flag`);
				continue;
			}
			// No header: pi 0.73.1 counts an empty session, we refuse the file (a listed divergence).
			if (skipped.has(file) && expected.totalMessages === 0) continue;
			assert.ok(group, `${id} (pi ${pi}): not counted`);
			assert.deepStrictEqual(group.pi, expected, `${id} (pi ${pi})`);
			compared++;
		}
	}
	assert.ok(compared > 800, `${compared} comparisons`);
});

// oh-my-pi's own numbers (conformance/stats/omp.json, recorded from omp 18.3.4) for the omp
// corpus sessions the file tells apart as omp's (title slot, header members, entry types).
test("an omp file's own numbers are omp's", () => {
	const omp = JSON.parse(readFileSync(join(root, "conformance", "stats", "omp.json"), "utf8"));
	const ompFiles = Object.keys(omp).map((id) => ({ id, file: join(root, "conformance", "cases", id, "session.jsonl") }));
	const report = piSession.stats(ompFiles.map((f) => f.file));
	const byName = new Map(report.groups.map((g) => [g.name, g]));
	const skipped = new Set(report.errors.map((e) => e.path));
	let compared = 0;
	for (const { id, file } of ompFiles) {
		const group = byName.get(file);
		// omp refuses a file without a valid header (O18); read as pi's, pi may too.
		if (omp[id]["18.3"].error !== undefined && skipped.has(file)) continue;
		assert.ok(group, `${id}: not counted`);
		if (group.dialect !== "omp") continue;
		assert.equal(group.pi, undefined, id);
		assert.deepStrictEqual(group.omp, omp[id]["18.3"], id);
		assert.equal(group.ompUnreadable, 0, id);
		compared++;
	}
	assert.ok(compared > 20, `${compared} omp sessions`);
});

const user = (id, parent, t) => ({ type: "message", id, parentId: parent, timestamp: t, message: { role: "user", content: "hi", timestamp: 0 } });
const assistant = (id, parent, t, cost) => ({
	type: "message",
	id,
	parentId: parent,
	timestamp: t,
	message: {
		role: "assistant",
		provider: "anthropic",
		model: "claude",
		content: [{ type: "toolCall", id: "c", name: "read", arguments: {} }],
		usage: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 110, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost } },
		stopReason: "toolUse",
		timestamp: 0,
	},
});

function sessionFile(dir, name, id, created, entries, parent) {
	const header = { type: "session", version: 3, id, timestamp: created, cwd: "/work", ...(parent ? { parentSession: parent } : {}) };
	const path = join(dir, name);
	writeFileSync(path, [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n");
	return path;
}

test("history copied into a fork counts once; dedupe: false counts every copy", () => {
	const dir = temporaryDirectory();
	const history = [user("u1", null, "2026-03-01T10:00:00.000Z"), assistant("a1", "u1", "2026-03-01T10:00:01.000Z", 0.25)];
	const original = sessionFile(dir, "a.jsonl", "s-a", "2026-03-01T10:00:00.000Z", history);
	sessionFile(dir, "b.jsonl", "s-b", "2026-03-02T10:00:00.000Z", [...history, user("u2", "a1", "2026-03-02T10:00:00.000Z")], original);
	const once = piSession.stats(dir);
	assert.equal(once.dedupe, true);
	assert.equal(once.total.messages, 3);
	assert.equal(once.total.usage.cost, 0.25);
	assert.equal(once.copies.messages, 2);
	assert.equal(once.forkedSessions, 1);
	// Every copy is in pi's own numbers of the fork.
	assert.equal(once.groups[1].pi.totalMessages, 3);
	assert.equal(once.groups[1].id, "s-b");
	const every = piSession.stats([dir], { dedupe: false });
	assert.equal(every.total.messages, 5);
	assert.equal(every.total.usage.cost, 0.5);
	const byModel = piSession.stats(dir, { by: "model" });
	assert.deepStrictEqual(byModel.groups.map((g) => [g.name, g.messages]), [["-", 2], ["anthropic/claude", 1]]);
	const byDay = piSession.stats(dir, { by: "day", since: "2026-03-02" });
	assert.deepStrictEqual(byDay.groups.map((g) => [g.name, g.messages]), [["2026-03-02", 1]]);
	const until = piSession.stats(dir, { by: "month", until: new Date("2026-03-02T00:00:00Z") });
	assert.equal(until.total.messages, 2);
	const wholeDay = piSession.stats(dir, { until: "2026-03-01" });
	assert.equal(wholeDay.total.messages, 2, "a YYYY-MM-DD until counts the whole day");
});

test("a file that is not a session is in errors, the others still counted", () => {
	const dir = temporaryDirectory();
	sessionFile(dir, "good.jsonl", "s", "2026-03-01T10:00:00.000Z", [user("u1", null, "2026-03-01T10:00:00.000Z")]);
	writeFileSync(join(dir, "bad.jsonl"), "not json\n");
	const report = piSession.stats(dir);
	assert.equal(report.total.sessions, 1);
	assert.equal(report.errors.length, 1);
	assert.match(report.errors[0].path, /bad\.jsonl$/);
});

test("options are checked: a wrong grouping, a date that is not one, an empty range", () => {
	const file = files[0].file;
	const code = (fn) => {
		try {
			fn();
		} catch (e) {
			return [e.code, e.message];
		}
		assert.fail("no error");
	};
	const [c1, m1] = code(() => piSession.stats(file, { by: "week" }));
	assert.equal(c1, "ERR_INVALID_ARG_VALUE");
	assert.match(m1, /cannot group by "week": use one of session, project, model, provider, day, month/);
	const [c2, m2] = code(() => piSession.stats(file, { since: "someday" }));
	assert.equal(c2, "ERR_INVALID_ARG_VALUE");
	assert.match(m2, /options\.since: "someday" is not a date/);
	const [c3, m3] = code(() => piSession.stats(file, { since: "2026-02-02", until: "2026-02-01" }));
	assert.equal(c3, "ERR_INVALID_ARG_VALUE");
	assert.match(m3, /is not before/);
	assert.equal(code(() => piSession.stats(file, { dedupe: "yes" }))[0], "ERR_INVALID_ARG_TYPE");
	assert.equal(code(() => piSession.stats(file, { since: new Date(NaN) }))[0], "ERR_INVALID_ARG_VALUE");
	assert.equal(code(() => piSession.stats("-"))[0], "ERR_INVALID_ARG_VALUE");
	assert.equal(code(() => piSession.stats(42))[0], "ERR_INVALID_ARG_TYPE");
});

const cli = join(root, "target", "debug", process.platform === "win32" ? "pi-session.exe" : "pi-session");

test("the same report as `pi-session stats --format json`", { skip: existsSync(cli) ? false : "target/debug/pi-session is not built" }, () => {
	const dir = temporaryDirectory();
	const some = files.slice(0, 40).map((f, i) => {
		const copy = join(dir, `${String(i).padStart(3, "0")}.jsonl`);
		copyFileSync(f.file, copy);
		return copy;
	});
	for (const [args, options] of [
		[[], {}],
		[["--by", "model", "--pi", "0.73"], { by: "model", pi: "0.73" }],
		[["--by", "day", "--no-dedupe", "--since", "2025-01-01"], { by: "day", dedupe: false, since: "2025-01-01" }],
	]) {
		let text;
		try {
			text = execFileSync(cli, ["stats", "--format", "json", ...args, ...some], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
		} catch (error) {
			text = error.stdout; // exit 1: a file could not be counted
		}
		assert.deepStrictEqual(piSession.stats(some, options), JSON.parse(text), args.join(" "));
	}
});
