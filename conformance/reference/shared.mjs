// shared.mjs — code the pi and oh-my-pi (omp) reference harnesses have in common, kept in one copy:
//
//   treeJson(roots)  the tree serialiser of `pi-ref.mjs tree` and `omp/omp-ref.ts tree`
//   fetchPinned(...) the "npm pack, check the pinned sha512, unpack" step of fetch-pi-1.5.mjs and
//                    omp/fetch-omp.mjs
//
// Plain ESM JavaScript, loaded by Node (pi-ref.mjs, the fetch scripts) and by Bun (omp-ref.ts).
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
