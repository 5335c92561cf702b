// The Session API against the corpus's expected outputs (conformance/cases/*/*/expected/):
// context, llm, tree and info of every case, with the case's pi and leaf, compared as parsed
// JSON; an expected `.error` must be an Error with a code; a buffer of the file loads the same
// entries as its path. The omp cases (conformance/cases/omp/, omp 18.3.4's outputs) are read
// with `dialect: "omp"` and their blob stores, and each is told apart as omp's when not said.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { codeOf, corpus, piSession } from "./helpers.mjs";

/** The mtime the corpus's info outputs were made with (conformance/FORMAT.md). */
const MTIME = Date.parse("2000-01-01T00:00:00.000Z");

const cases = [...corpus("pi"), ...corpus("omp")];

test("the corpus is there", () => {
	assert.ok(cases.length > 300, `${cases.length} cases`);
	assert.ok(cases.filter((c) => c.dialect === "omp").length > 40, "omp cases");
});

for (const c of cases) {
	test(c.name, () => {
		let session;
		const options = { pi: c.pi, ids: "sequential", dialect: c.dialect, blobs: c.blobs };
		const openCode = codeOf(() => {
			// v1 ids numbered as the corpus's reference numbers them (00000001, …).
			session = piSession.open(c.file, options);
		});
		if (openCode === null) {
			assert.equal(session.dialect, c.dialect);
			// The same bytes handed over as a buffer load the same session, v1 ids included.
			const fromBytes = piSession.open(readFileSync(c.file), options);
			assert.deepStrictEqual(fromBytes.entries(), session.entries(), "open(buffer)");
		}
		const answers = {
			context: () => session.context({ leaf: c.leaf }),
			llm: () => session.llm({ leaf: c.leaf }),
			tree: () => session.tree(),
			// The listing reads the file as it is, also when pi cannot open it.
			info: () => piSession.info(c.file, { pi: c.pi, mtime: MTIME, dialect: c.dialect }),
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
