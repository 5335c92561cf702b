// fetch-omp.mjs — puts oh-my-pi (omp) 18.3.4's session code and a pinned Bun where omp-ref.ts
// loads them from.
//
//   node conformance/reference/omp/fetch-omp.mjs
//
// `npm install @oh-my-pi/pi-coding-agent@18.3.4` fails: its @oh-my-pi siblings were never published
// at 18.3.x. omp ships TypeScript sources (package/src) and runs on Bun, so this fetches, with
// `npm pack`, every tarball listed in packages.json — the agent, the newest published siblings, the
// one third-party package the session modules load (@opentelemetry/api), and Bun's platform package
// for this machine — refuses each unless its sha512 equals the pinned one, and unpacks it to
// ../vendor/omp/<dest> (git-ignored). The @oh-my-pi packages land in vendor/omp/node_modules/ so
// that Bun resolves their `@oh-my-pi/*` imports of each other; Bun lands in vendor/omp/bun/
// (the binary is vendor/omp/bun/bin/bun).
//
// Nothing of omp's is edited. The two stand-ins (shims/, see the README) are wired in by Bun's own
// resolution: vendor/omp/tsconfig.json (copied here from vendor-tsconfig.json on every run) maps
// the one missing module `@oh-my-pi/pi-utils/fs-open` to shims/fs-open.ts, and omp-runtime.ts
// registers a Bun.plugin onLoad that serves shims/pi-natives-loader.js for pi-natives'
// native/loader-state.js.
//
// Idempotent: a package whose directory holds a marker with the pinned integrity is skipped, so CI
// can run this every time. Needs only npm registry access. The fetch itself (npm pack, integrity
// check, untar, marker) is fetchPinned in ../shared.mjs.
import { chmodSync, copyFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fetchPinned } from "../shared.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const pinned = JSON.parse(readFileSync(join(HERE, "packages.json"), "utf8"));
const VENDOR = join(HERE, "..", "vendor", "omp");
const MARKER = ".omp-ref-integrity";

/** The Bun platform key for this machine (x64 Linux without AVX2 needs Bun's baseline build). */
function bunPlatform() {
	const arch = process.arch === "arm64" ? "arm64" : process.arch;
	let key = `${process.platform}-${arch}`;
	if (key === "linux-x64") {
		try {
			if (!/\bavx2\b/.test(readFileSync("/proc/cpuinfo", "utf8"))) key = "linux-x64-baseline";
		} catch {}
	}
	return key;
}

const wanted = pinned.packages.map((p) => ({ ...p }));
{
	const key = bunPlatform();
	const bun = pinned.bun.platforms[key];
	if (!bun) throw new Error(`fetch-omp: no Bun package pinned for ${key} (packages.json "bun.platforms")`);
	wanted.push({ name: bun.name, version: pinned.bun.version, dest: pinned.bun.dest, integrity: bun.integrity });
}

for (const pkg of wanted) {
	await fetchPinned(pkg, join(VENDOR, pkg.dest), { label: "fetch-omp", strip: true, marker: MARKER });
}

// Bun's binary (npm pack keeps the mode, but make sure).
const bunBin = join(VENDOR, pinned.bun.dest, "bin", process.platform === "win32" ? "bun.exe" : "bun");
if (existsSync(bunBin)) chmodSync(bunBin, 0o755);
// Bun applies the nearest tsconfig.json's "paths" to the vendored sources too.
copyFileSync(join(HERE, "vendor-tsconfig.json"), join(VENDOR, "tsconfig.json"));
