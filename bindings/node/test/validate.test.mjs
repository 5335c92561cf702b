// validate(): the validator's corpus (conformance/validate/<case>/expected.json, the library's
// report of each file) and, when the command-line tool is built, the very report
// `pi-session validate --format json` prints (but for the name of the program that wrote it).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { piSession, root, temporaryDirectory } from "./helpers.mjs";

const base = join(root, "conformance", "validate");
const cases = readdirSync(base, { withFileTypes: true })
	.filter((d) => d.isDirectory())
	.map((d) => ({ name: d.name, dir: join(base, d.name), spec: JSON.parse(readFileSync(join(base, d.name, "case.json"), "utf8")) }));

test("the validator's corpus is there", () => {
	assert.ok(cases.length > 50, `${cases.length} cases`);
});

for (const c of cases) {
	// `path` (checks of the file's name and place) and `maxTextUnits` (a lowered size limit)
	// are options of the library the package does not offer.
	const skip = c.spec.path ? "validated as if at another path" : c.spec.maxTextUnits ? "a lowered size limit" : false;
	test(`validate/${c.name}`, { skip }, () => {
		const blobs = join(c.dir, "blobs");
		const report = piSession.validate(join(c.dir, "session.jsonl"), {
			pi: c.spec.pi ?? "0.73",
			schemaOnly: c.spec.schemaOnly ?? false,
			// oh-my-pi's rules, the case's blob store.
			dialect: c.spec.dialect,
			blobs: c.spec.dialect && existsSync(blobs) ? blobs : undefined,
		});
		assert.equal(report.dialect, c.spec.dialect === "omp" ? "omp" : undefined);
		const expected = JSON.parse(readFileSync(join(c.dir, "expected.json"), "utf8"));
		const [file] = report.files;
		assert.deepStrictEqual({ verdict: file.verdict, stats: file.stats, diagnostics: file.diagnostics }, expected);
		assert.deepStrictEqual([...new Set(file.diagnostics.map((d) => d.code))].sort(), [...c.spec.codes].sort());
	});
}

const cli = join(root, "target", "debug", process.platform === "win32" ? "pi-session.exe" : "pi-session");

test("the same report as `pi-session validate --format json`", { skip: existsSync(cli) ? false : "target/debug/pi-session is not built" }, () => {
	const files = cases.slice(0, 20).map((c) => join(c.dir, "session.jsonl"));
	for (const [args, options] of [
		[[], {}],
		[["--strict", "--pi", "0.87"], { strict: true, pi: "0.87" }],
		[["--schema-only"], { schemaOnly: true }],
	]) {
		let text;
		try {
			text = execFileSync(cli, ["validate", "--format", "json", ...args, ...files], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
		} catch (error) {
			text = error.stdout; // exit 1: some files are invalid
		}
		const theirs = JSON.parse(text);
		const ours = piSession.validate(files, options);
		assert.deepStrictEqual(ours.tool, { name: "pi-session-node", version: piSession.version });
		assert.deepStrictEqual({ ...ours, tool: theirs.tool }, theirs);
	}
});

test("a directory is walked for *.jsonl; [] is pi's session directory", () => {
	const agent = temporaryDirectory();
	const project = join(agent, "sessions", "--work--");
	mkdirSync(project, { recursive: true });
	const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}\n';
	writeFileSync(join(project, "2026-01-01T00-00-00-000Z_s.jsonl"), header);
	writeFileSync(join(project, "notes.txt"), "not a session");
	const walked = piSession.validate(join(agent, "sessions"));
	assert.equal(walked.files.length, 1);
	const before = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = agent;
	try {
		const report = piSession.validate([]);
		assert.deepStrictEqual(
			report.files.map((f) => f.path),
			walked.files.map((f) => f.path),
		);
	} finally {
		if (before === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = before;
	}
});
