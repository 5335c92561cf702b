// fetch-pi-1.5.mjs — puts pi 1.5.2 (current pi) where pi-ref.mjs loads it from.
//
//   node conformance/reference/fetch-pi-1.5.mjs
//
// `npm install @earendil-works/pi-coding-agent@1.5.2` fails (its dependencies
// @earendil-works/pi-codemode and pi-schema are not published), but the session manager needs
// none of them. So this fetches the tarballs of pi-coding-agent@1.5.2 and pi-ai@1.5.2 with
// `npm pack`, refuses them unless their sha512 equals the one pinned in pi-1.5/packages.json,
// and unpacks them to vendor/<dir>/package/ (git-ignored). Nothing of pi's is edited: pi-ref.mjs
// imports dist/core/session-manager.js from there, and pi-1.5/hooks.mjs points its one import of
// @earendil-works/pi-ai at the two pi-ai files it uses (pi-1.5/pi-ai.mjs), since pi-ai's index
// would load every provider SDK. Its other dependency, cross-spawn, comes from node_modules/.
//
// Does nothing when vendor/ already holds the pinned versions (a marker file records the hash).
// The fetch itself (npm pack, integrity check, untar, marker) is fetchPinned in shared.mjs.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fetchPinned } from "./shared.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const { packages } = JSON.parse(readFileSync(join(HERE, "pi-1.5", "packages.json"), "utf8"));
const VENDOR = join(HERE, "vendor");

for (const pkg of packages) {
	await fetchPinned(pkg, join(VENDOR, pkg.dir), { label: "fetch-pi-1.5" });
}
