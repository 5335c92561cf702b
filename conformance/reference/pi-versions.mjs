// pi-versions.mjs — the pinned pi versions and where their session manager is, shared by
// pi-ref.mjs (reading) and pi-write.mjs (writing). Importing this module loads no pi code.
import { existsSync } from "node:fs";
import { register } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/** "0.73", "0.87" or "1.5" for any spelling of a pinned version (`fallback` when absent). */
export function normalizePi(v, fallback) {
	const s = String(v ?? fallback);
	if (s === "0.73" || s === "0.73.1") return "0.73";
	if (s === "0.87" || s === "0.87.1") return "0.87";
	if (s === "1.5" || s === "1.5.2") return "1.5";
	throw new Error(`unknown --pi version: ${s} (use 0.73, 0.87 or 1.5)`);
}

/** dist/core of pinned pi `v` (normalized): npm's node_modules, or vendor/ for 1.5.2 (see
 *  fetch-pi-1.5.mjs), whose one import of @earendil-works/pi-ai is then pointed at pi-ai
 *  1.5.2's own files (pi-1.5/hooks.mjs) rather than node_modules' 0.87.1. */
export function piCore(v) {
	if (v === "0.73") return join(HERE, "node_modules", "@mariozechner/pi-coding-agent", "dist", "core");
	if (v === "0.87") return join(HERE, "node_modules", "@earendil-works/pi-coding-agent", "dist", "core");
	const core = join(HERE, "vendor", "pi-coding-agent-1.5.2", "package", "dist", "core");
	if (!existsSync(join(core, "session-manager.js"))) {
		throw new Error("pi 1.5.2 is not fetched: run `node conformance/reference/fetch-pi-1.5.mjs`");
	}
	register("./pi-1.5/hooks.mjs", import.meta.url);
	return core;
}
