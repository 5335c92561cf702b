// fetch-ccusage.mjs — puts @ccusage/pi 18.0.11, the peer of `cargo xtask bench stats`, in DIR.
//
//   node scripts/bench/fetch-ccusage.mjs DIR
//
// @ccusage/pi is the usage report people run on pi's sessions (in status lines too); its
// tarball bundles everything it runs (no dependencies), so `npm pack` of the pinned version,
// refused unless its sha512 is the one pinned here, unpacked to DIR/package/, is all it needs:
// `node DIR/package/dist/index.js daily --json --piPath TREE`. It reads prices offline.
// Does nothing when DIR already holds it (a marker file records the hash). The fetch itself
// (npm pack, integrity check, untar, marker) is fetchPinned in conformance/reference/shared.mjs.
import { resolve } from "node:path";
import { fetchPinned } from "../../conformance/reference/shared.mjs";

export const CCUSAGE_PI = {
	name: "@ccusage/pi",
	version: "18.0.11",
	integrity: "sha512-hcOrYegnrwFV2FNBRxW4MCnMQqd/wLlKC6ggCnQhtu5djpGByU90vDNYl30BG8TA5eKB0f4UHH2Szl5uTXAXOQ==",
};

const dir = process.argv[2];
if (!dir) {
	console.error("usage: node scripts/bench/fetch-ccusage.mjs DIR");
	process.exit(2);
}
await fetchPinned(CCUSAGE_PI, resolve(dir), { label: "fetch-ccusage" });
