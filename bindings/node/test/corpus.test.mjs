// The Session API against the corpus's expected outputs (conformance/cases/*/*/expected/):
// context, llm, tree and info of every case, with the case's pi and leaf, compared as parsed
// JSON; an expected `.error` must be an Error with a code; a buffer of the file loads the same
// entries as its path.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { codeOf, corpus, piSession } from "./helpers.mjs";

/** The mtime the corpus's info outputs were made with (conformance/FORMAT.md). */
const MTIME = Date.parse("2000-01-01T00:00:00.000Z");

const cases = corpus();

test("the corpus is there", () => {
	assert.ok(cases.length > 300, `${cases.length} cases`);
});

for (const c of cases) {
	test(c.name, () => {
		let session;
		const openCode = codeOf(() => {
			// v1 ids numbered as the corpus's reference numbers them (00000001, …).
			session = piSession.open(c.file, { pi: c.pi, ids: "sequential" });
		});
		if (openCode === null) {
			// The same bytes handed over as a buffer load the same session, v1 ids included.
			const fromBytes = piSession.open(readFileSync(c.file), { pi: c.pi, ids: "sequential" });
			assert.deepStrictEqual(fromBytes.entries(), session.entries(), "open(buffer)");
		}
		const answers = {
			context: () => session.context({ leaf: c.leaf }),
			llm: () => session.llm({ leaf: c.leaf }),
			tree: () => session.tree(),
			// The listing reads the file as it is, also when pi cannot open it.
			info: () => piSession.info(c.file, { pi: c.pi, mtime: MTIME }),
		};
		let checked = 0;
		for (const op of Object.keys(answers)) {
			if (!c.ops.includes(op)) continue;
			const expected = c.expected(op);
			if (expected === null) continue;
			checked += 1;
			if (op === "info") {
				assert.deepStrictEqual(answers.info(), expected.json, op);
				// A session that opens says the same.
				if (openCode === null) assert.deepStrictEqual(session.info({ mtime: MTIME }), expected.json, op);
				continue;
			}
			if (expected.error !== undefined) {
				const code = openCode ?? codeOf(answers[op]);
				assert.ok(code, `${op}: expected an error (${expected.error}), got a result`);
				continue;
			}
			assert.equal(openCode, null, `${op}: open failed with ${openCode}`);
			assert.deepStrictEqual(answers[op](), expected.json, op);
		}
		assert.ok(checked > 0 || c.ops.every((op) => op === "migrate"), "no operation checked");
	});
}
