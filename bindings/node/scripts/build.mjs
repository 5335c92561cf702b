#!/usr/bin/env node
// Builds the addon and puts it beside index.js as pi-session.node.
//
//   node scripts/build.mjs            the debug profile (npm run build)
//   node scripts/build.mjs --release  the release profile (npm run build:release)
//
// cargo is run directly, for the workspace's own target directory: `napi build` always passes
// `--target <host triple>`, which puts every artifact under target/<triple>/ and so shares
// nothing with the workspace's `cargo build` (CI's debug artifacts). The result is the file
// `napi build` makes (`npm run build:napi`), the shared library renamed.
import { spawnSync } from "node:child_process";
import { copyFileSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const release = process.argv.includes("--release");
const args = ["build", "-p", "pi-session-node", "--message-format=json-render-diagnostics"];
if (release) args.push("--release");
const cargo = process.env.CARGO || "cargo";
const run = spawnSync(cargo, args, {
	cwd: here,
	stdio: ["ignore", "pipe", "inherit"],
	maxBuffer: 1 << 28,
	encoding: "utf8",
});
if (run.error) throw run.error;
if (run.status !== 0) process.exit(run.status ?? 1);
let library = null;
for (const line of run.stdout.split("\n")) {
	if (!line.startsWith("{")) continue;
	const message = JSON.parse(line);
	if (message.reason !== "compiler-artifact" || message.target?.name !== "pi_session_node") continue;
	library = message.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) ?? library;
}
if (!library) {
	console.error("build.mjs: cargo built no pi_session_node library");
	process.exit(1);
}
const out = join(here, "pi-session.node");
const temporary = `${out}.${process.pid}.tmp`;
copyFileSync(library, temporary);
// A rename, not a copy over the file: a process that has the old addon loaded keeps it.
renameSync(temporary, out);
console.error(`build.mjs: ${library} -> pi-session.node (${release ? "release" : "debug"})`);
