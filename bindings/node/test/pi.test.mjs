// Against pi itself, live, on every corpus case and with every pinned pi (0.73.1, 0.87.1,
// 1.5.2; conformance/reference/): the drop-in `loadEntriesFromFile` and `buildSessionContext`
// give what pi's own functions give, and the Session answers what pi's SessionManager does;
// the same on random sessions pi itself wrote, hand-edited (scripts/diff/gen-sessions.mjs).
//
// pi reads a private copy of each file (it writes the files it opens). pi loops forever on a
// parent cycle: where ours reports one (PS0213, PS0214), pi's context is not asked for.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { asJson, codeOf, copyOf, corpus, loadPi, piInstalled, piSession, root, temporaryDirectory, VERSIONS } from "./helpers.mjs";

const cases = corpus();

/**
 * Random sessions, written by driving pi 0.73.1's own SessionManager and then hand-edited as
 * pi's writer never would (scripts/diff/gen-sessions.mjs, a fixed seed; without the parent
 * cycles and null messages pi hangs or throws on): each with the leaf the generator chose.
 */
function randomSessions() {
	if (!piInstalled("0.73")) return [];
	const dir = temporaryDirectory("pi-session-node-random-");
	execFileSync(process.execPath, [join(root, "scripts", "diff", "gen-sessions.mjs"), "--seed", "28", "--count", "60", "--out", dir, "--no-hang"], {
		stdio: ["ignore", "ignore", "inherit"],
	});
	return readdirSync(dir)
		.filter((name) => name.endsWith(".jsonl"))
		.sort()
		.map((name) => {
			const args = join(dir, name.replace(/\.jsonl$/, ".args.json"));
			const leaf = existsSync(args) ? JSON.parse(readFileSync(args, "utf8")).leaf : undefined;
			return { name: `random/${name}`, file: join(dir, name), leaf };
		});
}
const random = randomSessions();

test("random sessions were made", { skip: piInstalled("0.73") ? false : "pi 0.73.1 is not installed" }, () => {
	assert.ok(random.length >= 60, `${random.length} sessions`);
});

/** What `run` returns, or the class of what it throws: `{ value }` or `{ threw }`. */
function outcome(run) {
	try {
		return { value: run() };
	} catch (error) {
		return { threw: error?.constructor?.name ?? String(error), error };
	}
}

for (const v of VERSIONS) {
	const installed = piInstalled(v);
	test(`pi ${v}`, { skip: installed ? false : `pi ${v} is not installed (conformance/reference/README.md)` }, async (t) => {
		const pi = await loadPi(v);
		for (const c of [...cases, ...random]) {
			await t.test(c.name, () => {
				// loadEntriesFromFile: the same values, or the same exception.
				const theirs = outcome(() => pi.loadEntriesFromFile(copyOf(c.file)));
				const ours = outcome(() => piSession.loadEntriesFromFile(c.file, { pi: v }));
				if (theirs.threw) {
					assert.equal(ours.threw, theirs.threw, `pi threw ${theirs.error?.message}`);
					assert.ok(codeOf(() => piSession.loadEntriesFromFile(c.file, { pi: v })));
				} else {
					assert.equal(ours.threw, undefined, `ours threw ${ours.error?.code}: ${ours.error?.message}`);
					assert.deepStrictEqual(ours.value, theirs.value, "loadEntriesFromFile");
				}

				// The corpus's divergence cases are where we differ from pi by design
				// (docs/divergences.md); the corpus test checks what we do there.
				if (c.name.startsWith("divergence/")) return;

				// buildSessionContext over the entries pi's SessionManager holds (getEntries()),
				// for the case's leaf (or none: the last entry), `null`, falsy values, the first ids
				// of the file (a number among them where the case has one) and an object.
				let sm;
				try {
					sm = pi.SessionManager.open(copyOf(c.file));
				} catch {
					return; // pi cannot open the file (0.87.1: an invalid header): no entries.
				}
				const entries = sm.getEntries();
				const ids = [...new Set(entries.map((e) => e?.id))].filter((id) => id !== undefined && typeof id !== "object");
				const numbers = ids.filter((id) => typeof id === "number").slice(0, 1);
				for (const leaf of [c.leaf, null, 0, "", false, ...ids.slice(0, 2), ...numbers, {}, NaN]) {
					const mine = outcome(() => piSession.buildSessionContext(entries, leaf, { pi: v }));
					if (/^PS021[34]$/.test(mine.error?.code)) continue; // pi would loop forever
					assert.equal(mine.threw, undefined, `ours threw ${mine.error?.code}: ${mine.error?.message}`);
					const expected = outcome(() => pi.buildSessionContext(entries, leaf));
					if (expected.threw) {
						// pi throws on a path entry it cannot read (a `message: null` left by a
						// v1 migration); the library reads past it (docs/divergences.md,
						// message-null-on-path).
						assert.equal(expected.threw, "TypeError", expected.error?.message);
						continue;
					}
					// Compared as JSON carries them: pi's objects may hold members set to
					// `undefined` (an absent `details`, `fromId`, `thinkingLevel`) and NaN (an
					// absent custom message timestamp), which JSON and the library do not.
					assert.deepStrictEqual(mine.value, asJson(expected.value), `buildSessionContext(entries, ${JSON.stringify(leaf)})`);
				}

				// The Session: pi's SessionManager.open(file).buildSessionContext() and
				// getEntries(), for this pi (the corpus holds the case's own pi's only).
				const opened = outcome(() => piSession.open(c.file, { pi: v }));
				if (opened.threw) {
					// A deliberate difference (docs/divergences.md): pi opens a file it then
					// rewrites (an empty file, an invalid header in 0.73.1); we refuse it.
					assert.ok(codeOf(() => piSession.open(c.file, { pi: v })));
					return;
				}
				const session = opened.value;
				const context = outcome(() => session.context());
				const theirContext = /^PS021[34]$/.test(context.error?.code) ? null : outcome(() => sm.buildSessionContext());
				if (theirContext && !theirContext.threw) {
					assert.equal(context.threw, undefined, `ours threw ${context.error?.code}: ${context.error?.message}`);
					const { messages, thinkingLevel, model } = theirContext.value;
					assert.deepStrictEqual(context.value, asJson({ messages, thinkingLevel, model }), "Session.context()");
					assert.deepStrictEqual(session.llm(), asJson(pi.convertToLlm(messages)), "Session.llm()");
				}
				// The ids a migration gives are random, on both sides.
				if (session.version.migrated) return;
				assert.deepStrictEqual(session.leafId, sm.getLeafId(), "Session.leafId");
				assert.deepStrictEqual(session.entries(), entries, "Session.entries()");
				assert.deepStrictEqual(session.header, sm.getHeader(), "Session.header");
			});
		}
	});
}

/** A message entry with any `id` and `parentId` (pi keeps whatever JSON held). */
const entry = (id, parentId, text) => ({
	type: "message",
	id,
	parentId,
	timestamp: "2026-01-01T00:00:00.000Z",
	message: { role: "user", content: text, timestamp: 1 },
});

for (const v of VERSIONS) {
	test(`pi ${v}: leafId of every type, and ids that are not strings`, { skip: piInstalled(v) ? false : `pi ${v} is not installed` }, async () => {
		const pi = await loadPi(v);
		// Numeric ids (a number and the string of it are different Map keys), a boolean id, and
		// a branch under each.
		const entries = [entry(1, null, "one"), entry(2, 1, "two"), entry("1", null, "string one"), entry(true, 2, "yes"), entry("x", 1, "x")];
		for (const leaf of [undefined, null, 1, 2, "1", "2", true, false, 0, -0, "", "x", 1.5, {}, [], NaN, Infinity]) {
			const mine = piSession.buildSessionContext(entries, leaf, { pi: v });
			assert.deepStrictEqual(mine, asJson(pi.buildSessionContext(entries, leaf)), `leafId ${String(leaf)} (${typeof leaf})`);
		}
	});
}
