// redact and redactBytes: secrets gone, structure kept, the report the command line's, the
// arguments checked.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { existsSync } from "node:fs";
import { codeOf, piSession, root } from "./helpers.mjs";

const cli = join(root, "target", "debug", process.platform === "win32" ? "pi-session.exe" : "pi-session");

const GITHUB_PAT = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u";
const NAMED = "correct-horse-battery-staple";
const KEY = Buffer.from("the node binding's test key");

function session() {
	const lines = [
		{ type: "session", version: 3, id: "0f8fad5b-d9cb-469f-a165-70867728950e", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" },
		{ type: "message", id: "a1b2c3d4", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `token ${GITHUB_PAT} pw ${NAMED}`, timestamp: 1 } },
		{ type: "message", id: "b1b2c3d4", parentId: "a1b2c3d4", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "user", content: "nothing here", timestamp: 2 } },
	];
	return Buffer.from(lines.map((l) => JSON.stringify(l) + "\n").join(""));
}

test("redactBytes removes the secrets and keeps the structure", () => {
	const data = session();
	const { data: out, report } = piSession.redactBytes(data, { secrets: [NAMED], key: KEY });
	const text = out.toString();
	assert.ok(!text.includes(GITHUB_PAT) && !text.includes(NAMED));
	assert.equal(report.redacted, 2);
	assert.deepEqual(report.rules["github-pat"], { redacted: 1, candidates: 0 });
	assert.ok(!JSON.stringify(report).includes(NAMED));
	const ids = (b) => b.toString().trim().split("\n").map((l) => { const v = JSON.parse(l); return [v.type, v.id, v.parentId]; });
	assert.deepEqual(ids(out), ids(data));
	assert.equal(text.split("\n")[2], data.toString().split("\n")[2]);
	assert.deepEqual(piSession.redactBytes(data, { secrets: [NAMED], key: KEY }).data, out);
});

test("redact writes out, never over a file, and is the command line's report", () => {
	const dir = mkdtempSync(join(tmpdir(), "pi-session-redact-"));
	const source = join(dir, "s.jsonl");
	writeFileSync(source, session());
	const out = join(dir, "out.jsonl");
	const report = piSession.redact(source, { out, key: KEY });
	assert.equal(report.redacted, 1);
	assert.ok(!readFileSync(out, "utf8").includes(GITHUB_PAT));
	assert.equal(codeOf(() => piSession.redact(source, { out, key: KEY })), "already-exists");
	piSession.redact(source, { out, key: KEY, force: true });
	if (existsSync(cli)) {
		const keyFile = join(dir, "key");
		writeFileSync(keyFile, KEY);
		const ran = spawnSync(cli, ["redact", "--dry-run", "--format", "json", "--key-file", keyFile, source]);
		assert.equal(ran.status, 1, ran.stderr.toString());
		const file = JSON.parse(ran.stdout.toString()).files[0];
		delete file.path;
		delete file.written;
		delete file.backup;
		assert.deepEqual(piSession.redact(source, { key: KEY }), file);
	}
});

test("bad arguments are refused", () => {
	assert.equal(codeOf(() => piSession.redactBytes(session(), { secrets: ["abc"] })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.redactBytes(session(), { key: "short" })), "ERR_INVALID_ARG_VALUE");
	assert.equal(codeOf(() => piSession.redactBytes("not bytes")), "ERR_INVALID_ARG_TYPE");
	assert.equal(codeOf(() => piSession.redact(join(tmpdir(), "no-such-session.jsonl"))), "not-found");
});
