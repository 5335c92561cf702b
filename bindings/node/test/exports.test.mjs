// index.d.ts declares every export of index.js, and nothing else.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { packageDir, piSession } from "./helpers.mjs";

test("index.d.ts declares every export", () => {
	const types = readFileSync(join(packageDir, "index.d.ts"), "utf8");
	// A function declared with overloads (`open`, `info`) is one export.
	const names = [...types.matchAll(/^export declare (?:function|class|const) (\w+)/gm)].map((m) => m[1]);
	const declared = [...new Set(names)].sort();
	assert.deepStrictEqual(declared, Object.keys(piSession).sort());
});
