// shared.mjs — code the pi and oh-my-pi (omp) reference harnesses have in common, kept in one copy:
//
//   treeJson(roots)  the tree serialiser of `pi-ref.mjs tree` and `omp/omp-ref.ts tree`
//   fetchPinned(...) the "npm pack, check the pinned sha512, unpack" step of fetch-pi-1.5.mjs and
//                    omp/fetch-omp.mjs
//   mulberry32, hashString, seededRandom, randomContent
//                    the seeded PRNG and random session content of the generators
//                    (scripts/diff/gen-sessions.mjs for pi, omp/omp-gen.ts for omp;
//                    scripts/diff/writer-diff.mjs uses the PRNG)
//
// Plain ESM JavaScript, loaded by Node (pi-ref.mjs, the fetch scripts, the generators) and by Bun
// (omp-ref.ts, omp-gen.ts).
// This module imports nothing at load time: omp-ref.ts imports it before omp-runtime.ts's
// setupOmp() has patched node:os (an ESM namespace of a builtin snapshots its exports when first
// created, so an early `import … from "node:os"` here would pin the real os.homedir()). What
// fetchPinned needs is imported when it runs.

/**
 * Serialise the roots of a SessionManager's getTree() as JSON
 * `[{"id":…,"type":…,"label":…,"children":[…]}, …]`, iteratively (no recursion limit however deep
 * the tree). `id` and `type` come from the node's `entry` (absent when the entry is not an object),
 * `label` from the node; like JSON.stringify, a key whose value is undefined (or a function or
 * symbol) is omitted — id-less entries have no "id" key. Values are written with JSON.stringify.
 *
 * @param {Array<{entry: unknown, label?: unknown, children: any[]}>} roots getTree()'s result
 * @returns {string} the JSON text, without a trailing newline
 */
export function treeJson(roots) {
	const parts = [];
	// Stack of work items: either a string to emit or a node to open.
	const stack = [];
	const pushList = (nodes) => {
		stack.push("]");
		for (let i = nodes.length - 1; i >= 0; i--) {
			stack.push(nodes[i]);
			if (i > 0) stack.push(",");
		}
		stack.push("[");
	};
	const field = (key, value, first) => {
		if (value === undefined || typeof value === "function" || typeof value === "symbol") return null;
		return `${first ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(value)}`;
	};
	pushList(roots);
	while (stack.length > 0) {
		const item = stack.pop();
		if (typeof item === "string") {
			parts.push(item);
			continue;
		}
		const entry = item.entry;
		const isObj = entry !== null && typeof entry === "object";
		let s = "{";
		let first = true;
		for (const [k, v] of [
			["id", isObj ? entry.id : undefined],
			["type", isObj ? entry.type : undefined],
			["label", item.label],
		]) {
			const f = field(k, v, first);
			if (f !== null) {
				s += f;
				first = false;
			}
		}
		s += `${first ? "" : ","}"children":`;
		parts.push(s);
		stack.push("}");
		pushList(item.children);
	}
	return parts.join("");
}

/**
 * Put one pinned npm package into `targetDir`: `npm pack NAME@VERSION` into a temp directory,
 * refuse the tarball (throw, leaving `targetDir` as it was) unless its sha512 is `integrity`, then
 * empty `targetDir`, untar into it and write the integrity to the marker file in it. Does nothing
 * when the marker already holds `integrity`. Prints `LABEL: NAME@VERSION → PATH (integrity
 * checked)` to stderr after a fetch, PATH being where the package's files are, relative to this
 * directory (conformance/reference).
 *
 * @param {{name: string, version: string, integrity: string}} pkg the pin; integrity is `sha512-<base64>`
 * @param {string} targetDir the directory to unpack into (replaced on a fetch)
 * @param {{label: string, strip?: boolean, marker?: string}} options
 *   label: the script's name, for messages and the temp directory's prefix;
 *   strip: drop the tarball's top directory (`package/`), so the files land in targetDir itself
 *   (default false: they land in targetDir/package);
 *   marker: the marker file's name in targetDir (default ".integrity")
 * @returns {Promise<boolean>} whether it fetched (false: already there)
 */
export async function fetchPinned(pkg, targetDir, { label, strip = false, marker = ".integrity" }) {
	const { execFileSync } = await import("node:child_process");
	const { createHash } = await import("node:crypto");
	const { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = await import("node:fs");
	const { tmpdir } = await import("node:os");
	const { dirname, join, relative, sep } = await import("node:path");
	const { fileURLToPath } = await import("node:url");

	const markerFile = join(targetDir, marker);
	if (existsSync(markerFile) && readFileSync(markerFile, "utf8") === pkg.integrity) return false;
	const tmp = mkdtempSync(join(tmpdir(), `${label}-`));
	try {
		const out = execFileSync("npm", ["pack", `${pkg.name}@${pkg.version}`, "--pack-destination", tmp, "--json"], {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "inherit"],
			maxBuffer: 64 * 1024 * 1024,
		});
		const [{ filename }] = JSON.parse(out);
		const tarball = join(tmp, filename);
		const integrity = "sha512-" + createHash("sha512").update(readFileSync(tarball)).digest("base64");
		if (integrity !== pkg.integrity) {
			throw new Error(`${pkg.name}@${pkg.version}: the registry's tarball has ${integrity}, pinned ${pkg.integrity}; refusing it`);
		}
		rmSync(targetDir, { recursive: true, force: true });
		mkdirSync(targetDir, { recursive: true });
		execFileSync("tar", ["-xzf", tarball, "-C", targetDir, ...(strip ? ["--strip-components=1"] : [])]);
		writeFileSync(markerFile, pkg.integrity);
		const here = dirname(fileURLToPath(import.meta.url));
		const shown = relative(here, strip ? targetDir : join(targetDir, "package")).split(sep).join("/");
		console.error(`${label}: ${pkg.name}@${pkg.version} → ${shown} (integrity checked)`);
		return true;
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------------------------------
// Seeded randomness of the session generators
// ---------------------------------------------------------------------------------------------------
// The generated files must stay byte-identical for a given seed: every helper below draws a fixed
// number of values in a fixed order, and changing one changes every file generated after it.

/**
 * The mulberry32 PRNG.
 *
 * @param {number} a the seed (any number; used as a 32-bit integer)
 * @returns {() => number} the next float in [0, 1) at each call
 */
export function mulberry32(a) {
	return function next() {
		a |= 0;
		a = (a + 0x6d2b79f5) | 0;
		let t = Math.imul(a ^ (a >>> 15), 1 | a);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/**
 * FNV-1a 32-bit hash of a string's UTF-16 code units: a seed made from a string.
 *
 * @param {string} s
 * @returns {number} an unsigned 32-bit integer
 */
export function hashString(s) {
	let h = 0x811c9dc5;
	for (let i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i);
		h = Math.imul(h, 0x01000193);
	}
	return h >>> 0;
}

/**
 * Random choices drawn from one mulberry32 stream, which reseed() replaces (the generators start a
 * new stream for every file).
 *
 * @param {number} [seed] the first stream's seed (default 1)
 * @returns the helpers: reseed(seed); rnd() a float in [0, 1); chance(p) true with probability p;
 *   int(lo, hi) an integer in [lo, hi] (both inclusive); pick(arr) one element; weighted(table) the
 *   value of one `[value, weight]` row, with probability weight / total; hex(n), base64(n) n random
 *   characters of that alphabet (base64: then "", "=" or "==")
 */
export function seededRandom(seed = 1) {
	let next = mulberry32(seed);
	const rnd = () => next();
	const chance = (p) => rnd() < p;
	const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
	const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
	function weighted(table) {
		let total = 0;
		for (const [, w] of table) total += w;
		let x = rnd() * total;
		for (const [v, w] of table) {
			x -= w;
			if (x < 0) return v;
		}
		return table[table.length - 1][0];
	}
	function hex(n) {
		let s = "";
		for (let i = 0; i < n; i++) s += "0123456789abcdef"[int(0, 15)];
		return s;
	}
	function base64(n) {
		const A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		let s = "";
		for (let i = 0; i < n; i++) s += A[int(0, 63)];
		return s + pick(["", "=", "=="]);
	}
	return {
		reseed(seed) {
			next = mulberry32(seed);
		},
		rnd,
		chance,
		int,
		pick,
		weighted,
		hex,
		base64,
	};
}

/**
 * Random session content drawn from `random`, in the generator's own vocabulary.
 *
 * @param {ReturnType<typeof seededRandom>} random
 * @param {{words: string[], specials: string[], specialRate: number, blanks: string[], keys: string[]}} vocabulary
 *   words / specials: what texts are made of, a special in place of a word with probability
 *   specialRate; blanks: what a text of no words is, half the time (else ""); keys: the object keys
 *   of anyValue()
 * @returns text(maxWords = 12) 0 to maxWords words joined by a space (or, 1 time in 10, a
 *   newline); textBlock() a text content block, sometimes with a textSignature; anyValue(depth = 0)
 *   a JSON value of any type (arrays and objects nested up to 3 deep); usage() an assistant
 *   message's usage with its cost computed from per-million prices
 */
export function randomContent(random, { words, specials, specialRate, blanks, keys }) {
	const { chance, int, pick, hex } = random;
	function text(maxWords = 12) {
		const n = int(0, maxWords);
		const parts = [];
		for (let i = 0; i < n; i++) parts.push(chance(specialRate) ? pick(specials) : pick(words));
		if (n === 0 && chance(0.5)) return pick(blanks);
		return parts.join(chance(0.9) ? " " : "\n");
	}
	function textBlock() {
		const b = { type: "text", text: text() };
		if (chance(0.1)) {
			b.textSignature = chance(0.5)
				? `msg_${hex(16)}`
				: JSON.stringify({ v: 1, id: `msg_${hex(12)}`, phase: pick(["commentary", "final_answer"]) });
		}
		return b;
	}
	function anyValue(depth = 0) {
		const k = depth > 2 ? int(0, 4) : int(0, 6);
		switch (k) {
			case 0:
				return text(3);
			case 1:
				return pick([0, 1, -1, 42, 3.5, 0.1 + 0.2, 1e21, 1e-7, 123456789012, -0.000001, 2 ** 53]);
			case 2:
				return chance(0.5);
			case 3:
				return null;
			case 4:
				return pick(["", "a", "päth/to/file.ts"]);
			case 5: {
				const arr = [];
				for (let i = int(0, 3); i > 0; i--) arr.push(anyValue(depth + 1));
				return arr;
			}
			default: {
				const o = {};
				for (let i = int(0, 4); i > 0; i--) o[pick(keys)] = anyValue(depth + 1);
				return o;
			}
		}
	}
	function usage() {
		const input = int(0, 50000);
		const output = int(0, 8000);
		const cacheRead = chance(0.5) ? int(0, 100000) : 0;
		const cacheWrite = chance(0.3) ? int(0, 20000) : 0;
		// Real float arithmetic gives long shortest-round-trip decimals (0.30000000000000004-style).
		const pIn = pick([3, 15, 0.25, 1.25, 0.075]);
		const pOut = pick([15, 75, 1.25, 10, 0.3]);
		const cost = {
			input: (input * pIn) / 1e6,
			output: (output * pOut) / 1e6,
			cacheRead: (cacheRead * pIn * 0.1) / 1e6,
			cacheWrite: (cacheWrite * pIn * 1.25) / 1e6,
			total: 0,
		};
		cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
		return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
	}
	return { text, textBlock, anyValue, usage };
}
