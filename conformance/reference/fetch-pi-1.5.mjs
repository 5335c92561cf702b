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
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const { packages } = JSON.parse(readFileSync(join(HERE, "pi-1.5", "packages.json"), "utf8"));
const VENDOR = join(HERE, "vendor");

for (const pkg of packages) {
	const target = join(VENDOR, pkg.dir);
	const marker = join(target, ".integrity");
	if (existsSync(marker) && readFileSync(marker, "utf8") === pkg.integrity) continue;
	const tmp = mkdtempSync(join(tmpdir(), "pi-1.5-"));
	try {
		const out = execFileSync("npm", ["pack", `${pkg.name}@${pkg.version}`, "--pack-destination", tmp, "--json"], {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "inherit"],
		});
		const [{ filename }] = JSON.parse(out);
		const tarball = join(tmp, filename);
		const integrity = "sha512-" + createHash("sha512").update(readFileSync(tarball)).digest("base64");
		if (integrity !== pkg.integrity) {
			throw new Error(`${pkg.name}@${pkg.version}: the registry's tarball has ${integrity}, pinned ${pkg.integrity}; refusing it`);
		}
		rmSync(target, { recursive: true, force: true });
		mkdirSync(target, { recursive: true });
		execFileSync("tar", ["-xzf", tarball, "-C", target]);
		writeFileSync(marker, pkg.integrity);
		console.error(`fetch-pi-1.5: ${pkg.name}@${pkg.version} → vendor/${pkg.dir}/package (integrity checked)`);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}
