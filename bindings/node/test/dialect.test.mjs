// The dialect option: a file is read as pi's unless `dialect` says omp's or `"auto"` (its own,
// docs/dialects.md); what the package does not reproduce for omp is refused with a code,
// never answered by pi's rules; images come back from the blob store given, and a missing blob
// leaves its reference in place, as omp leaves it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { codeOf, piSession, root, temporaryDirectory } from "./helpers.mjs";

const omp = (name) => join(root, "conformance", "cases", "omp", name);
function getMessage(run) {
	try {
		run();
	} catch (error) {
		return error.message;
	}
	return "";
}

const piCase = join(root, "conformance", "cases", "real", "recorded-tool-use", "session.jsonl");

test("a file is read as pi's, as omp's, or in its own dialect", () => {
	const file = join(omp("title-slot-is-not-an-entry"), "session.jsonl");
	assert.equal(piSession.open(file, { dialect: "auto" }).dialect, "omp");
	assert.equal(piSession.open(readFileSync(file), { dialect: "auto" }).dialect, "omp");
	assert.equal(piSession.open(piCase, { dialect: "auto" }).dialect, "pi");
	assert.equal(piSession.open(piCase).dialect, "pi");
	assert.equal(piSession.open(piCase, { dialect: "omp" }).dialect, "omp");
	// Read as pi's (the default), omp's title slot is not a session header: one error that
	// names the dialect.
	assert.equal(codeOf(() => piSession.open(file)), "wrong-dialect");
	assert.match(getMessage(() => piSession.open(file)), /omp/);
	assert.equal(codeOf(() => piSession.open(file, { dialect: "pi" })), "wrong-dialect");
	assert.equal(codeOf(() => piSession.open(file, { dialect: "pie" })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.open(file, { dialect: 1 })), "ERR_INVALID_ARG_TYPE");
});

test("an omp session answers as omp: context, tree, info; llm() is refused", () => {
	const dir = omp("reset-boundary-restarts-context");
	const session = piSession.open(join(dir, "session.jsonl"), { dialect: "omp" });
	const expected = (op) => JSON.parse(readFileSync(join(dir, "expected", `${op}.json`), "utf8"));
	assert.deepStrictEqual(session.context(), expected("context"));
	assert.deepStrictEqual(session.tree(), expected("tree"));
	const mtime = Date.parse("2000-01-01T00:00:00.000Z");
	assert.deepStrictEqual(session.info({ mtime }), expected("info"));
	assert.deepStrictEqual(piSession.info(join(dir, "session.jsonl"), { mtime, dialect: "omp" }), expected("info"));
	assert.deepStrictEqual(piSession.info(join(dir, "session.jsonl"), { mtime, dialect: "auto" }), expected("info"));
	assert.ok("assistantTurns" in session.info({ mtime }), "omp's listing entry");
	assert.equal(codeOf(() => session.llm()), "omp-unsupported");
	// pi's listing of the same file, when asked for.
	const asPi = piSession.info(join(dir, "session.jsonl"), { mtime, dialect: "pi" });
	assert.ok(asPi === null || !("assistantTurns" in asPi));
});

test("images come from the blob store given; a missing blob leaves its reference", () => {
	const dir = omp("image-blob-restored");
	const file = join(dir, "session.jsonl");
	const withStore = piSession.open(file, { dialect: "omp", blobs: join(dir, "blobs") }).context();
	assert.deepStrictEqual(withStore, JSON.parse(readFileSync(join(dir, "expected", "context.json"), "utf8")));
	assert.ok(!JSON.stringify(withStore).includes("blob:sha256:"));
	const empty = temporaryDirectory();
	const without = piSession.open(file, { dialect: "omp", blobs: empty }).context();
	assert.ok(JSON.stringify(without).includes("blob:sha256:"), "the reference stays");
});

test("stats and validate take the dialect", () => {
	const dir = omp("stats-model-usage-window-after-compaction");
	const detected = piSession.stats(join(dir, "session.jsonl"));
	assert.equal(detected.groups[0].dialect, "omp");
	// Read as pi's: not a session, one error that names the dialect (the CLI's message).
	const asPi = piSession.stats(join(dir, "session.jsonl"), { dialect: "pi" });
	assert.equal(asPi.groups.length, 0);
	assert.match(asPi.errors[0].error, /oh-my-pi \(omp\) session file/);
	assert.equal(piSession.stats(join(dir, "session.jsonl"), { dialect: "auto" }).groups[0].dialect, "omp");
	assert.equal(codeOf(() => piSession.stats(dir, { dialect: "nope" })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.validate(dir, { dialect: "auto" })), "ERR_INVALID_ARG_VALUE");
	// validate: pi's rules by default (one diagnostic naming the dialect), omp's when asked.
	const byPi = piSession.validate(join(dir, "session.jsonl"));
	assert.equal(byPi.dialect, undefined);
	assert.ok(byPi.files[0].diagnostics.some((d) => d.code === "PS0111"), "PS0111: an omp file");
	const byOmp = piSession.validate(join(dir, "session.jsonl"), { dialect: "omp" });
	assert.equal(byOmp.dialect, "omp");
	assert.ok(!byOmp.files[0].diagnostics.some((d) => d.code === "PS0111"));
});

/** The PiSessionWarnings `run` emits (they come on the next tick), and its result. */
async function warningsOf(run) {
	const seen = [];
	const listener = (warning) => {
		if (warning.name === "PiSessionWarning") seen.push(warning.message);
	};
	process.on("warning", listener);
	try {
		const result = run();
		await new Promise((resolve) => setImmediate(resolve));
		return { result, seen };
	} finally {
		process.off("warning", listener);
	}
}

test("what the context skips or leaves in place is a PiSessionWarning, as the command line says it", async () => {
	// An image whose blob is not in the store: its reference stays, and that is said.
	const empty = temporaryDirectory("blobs-empty");
	const missing = join(omp("image-blob-missing-stays"), "session.jsonl");
	const { result, seen } = await warningsOf(() => piSession.open(missing, { dialect: "omp", blobs: empty }).context());
	assert.deepStrictEqual(result, JSON.parse(readFileSync(join(omp("image-blob-missing-stays"), "expected", "context.json"), "utf8")));
	// (Earlier tests' warnings may still come in: only those about this store count.)
	const about = seen.filter((w) => w.includes(empty));
	assert.equal(about.length, 1, seen.join("\n"));
	assert.match(about[0], /^\d+: warning: blob sha256:[0-9a-f]{64} is not in the blob store .*; its reference is left in place, as omp leaves it$/);
	// A `message` entry without a message on pi's path is skipped, and that is said.
	const nullMessage = join(root, "conformance", "cases", "divergence", "message-null-on-path", "session.jsonl");
	const skipped = await warningsOf(() => piSession.open(nullMessage).context());
	assert.ok(skipped.seen.some((w) => w.includes("`message` is missing or null; entry skipped")), skipped.seen.join("\n"));
	// Nothing to say: no warning.
	// (By now every earlier warning has come.)
	const quiet = await warningsOf(() => piSession.open(piCase).context());
	assert.deepStrictEqual(quiet.seen, []);
});
