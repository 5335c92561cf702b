// Shared by the tests: the package, the corpus, temporary directories, and the pinned pi of
// conformance/reference/ (loaded as pi-ref.mjs loads it: session-manager.js and messages.js by
// file path).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
export const here = dirname(fileURLToPath(import.meta.url));
export const packageDir = dirname(here);
export const root = dirname(dirname(packageDir));
export const piSession = require(packageDir);

export const VERSIONS = ["0.73", "0.87", "1.5"];

/** Every case of conformance/cases/ in `dialect` (default pi's; the `omp/` cases are omp's,
 *  `"dialect": "omp"`): { name, dir, file, pi, leaf, ops, dialect, blobs, expected(op) }
 *  (`blobs`: the case's blob store, or undefined). */
export function corpus(dialect = "pi") {
	const base = join(root, "conformance", "cases");
	const cases = [];
	for (const area of readdirSync(base, { withFileTypes: true })) {
		if (!area.isDirectory()) continue;
		for (const name of readdirSync(join(base, area.name)).sort()) {
			const dir = join(base, area.name, name);
			if (!existsSync(join(dir, "case.json"))) continue;
			const spec = JSON.parse(readFileSync(join(dir, "case.json"), "utf8"));
			if ((spec.dialect ?? "pi") !== dialect) continue;
			cases.push({
				dialect,
				blobs: existsSync(join(dir, "blobs")) ? join(dir, "blobs") : undefined,
				name: `${area.name}/${name}`,
				dir,
				file: join(dir, "session.jsonl"),
				pi: spec.pi ?? "0.73",
				leaf: spec.leaf,
				ops: spec.ops ?? ["context", "llm", "migrate", "tree", "info"],
				/** The expected output of `op`: { json } or { error }, or null when absent. */
				expected(op) {
					const json = join(dir, "expected", `${op}.json`);
					if (existsSync(json)) return { json: JSON.parse(readFileSync(json, "utf8")) };
					const error = join(dir, "expected", `${op}.error`);
					if (existsSync(error)) return { error: readFileSync(error, "utf8").trim() };
					return null;
				},
			});
		}
	}
	return cases;
}

/** A temporary directory removed when the process exits. */
export function temporaryDirectory(prefix = "pi-session-node-") {
	const dir = mkdtempSync(join(process.env.PI_SESSION_TEST_TMPDIR || tmpdir(), prefix));
	process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
	return dir;
}

/** The codes index.d.ts declares (`ErrorCode`). */
export const ERROR_CODES = (() => {
	const types = readFileSync(join(packageDir, "index.d.ts"), "utf8");
	const start = types.indexOf("export type ErrorCode =");
	const union = types.slice(start, types.indexOf('";', start) + 1);
	return new Set([...union.matchAll(/\| "([^"]+)"/g)].map((m) => m[1]));
})();

/** Asserts that `run` throws an Error with a declared code (what every failure of the package is). */
export function codeOf(run) {
	try {
		run();
	} catch (error) {
		if (!(error instanceof Error)) throw new Error(`threw a non-Error: ${String(error)}`);
		if (typeof error.code !== "string" || !ERROR_CODES.has(error.code)) {
			throw new Error(`an Error without a stable code: ${error.code}: ${error.message}`);
		}
		return error.code;
	}
	return null;
}

// ---- the pinned pi ------------------------------------------------------------------------------

const reference = join(root, "conformance", "reference");
const modules = new Map();

/** Whether pi `v` is installed (npm ci in conformance/reference, fetch-pi-1.5.mjs for 1.5). */
export function piInstalled(v) {
	if (v === "0.73") return existsSync(join(reference, "node_modules", "@mariozechner", "pi-coding-agent"));
	if (v === "0.87") return existsSync(join(reference, "node_modules", "@earendil-works", "pi-coding-agent"));
	return existsSync(join(reference, "vendor", "pi-coding-agent-1.5.2", "package", "dist", "core", "session-manager.js"));
}

/** pi `v`'s session-manager.js exports plus `convertToLlm`. */
export async function loadPi(v) {
	if (!modules.has(v)) {
		const { piCore } = await import(pathToFileURL(join(reference, "pi-versions.mjs")).href);
		const core = piCore(v);
		const sm = await import(pathToFileURL(join(core, "session-manager.js")).href);
		const messages = await import(pathToFileURL(join(core, "messages.js")).href);
		modules.set(v, { ...sm, convertToLlm: messages.convertToLlm });
	}
	return modules.get(v);
}

let copies = null;
let copyNumber = 0;

/** A private copy of `file` (pi writes the files it reads: migration, a missing last newline). */
export function copyOf(file) {
	copies ??= temporaryDirectory("pi-session-node-copies-");
	const copy = join(copies, `${++copyNumber}.jsonl`);
	copyFileSync(file, copy);
	return copy;
}

/** `value` as JSON carries it: what JSON.stringify keeps of it, read back. */
export function asJson(value) {
	return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
