#!/usr/bin/env node
// check-export-html.mjs: `pi-session export --format html` in a real browser.
//
// Exports sessions to HTML and opens each page in the system's headless Chromium
// (/usr/bin/chromium, Debian's `chromium` package) through playwright-core, twice: as written
// (its content security policy on) and with the policy bypassed, so that the escaping is
// checked on its own. For every page it checks that
//   - nothing from the session ran: no dialog, no page error, `window.__pwned` unset (every
//     payload of the hostile fixture sets it), the title is the escaped session name;
//   - nothing was fetched: every request is a file: or data: URL (others are aborted and
//     reported);
//   - it renders: one <article class="entry"> per entry of the branch (counted from the
//     JSONL export of the same branch, labels aside), every <img> decoded (naturalWidth > 0),
//     tool calls, thinking and tool output in <details> that open on a click and close
//     again, the hostile text shown literally;
// and it saves a screenshot of each page under target/browser/.
//
// Usage: node scripts/browser/check-export-html.mjs [--bin target/debug/pi-session] [SESSION…]
// (default sessions: the hostile fixture and the real sessions of the conformance corpus).
// Needs `npm ci` in scripts/browser and the chromium package; exits 1 on any failure.

import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
let bin = join(root, "target/debug/pi-session");
const sessions = [];
for (let i = 0; i < args.length; i++) {
	if (args[i] === "--bin") bin = resolve(args[++i]);
	else sessions.push(resolve(args[i]));
}
const hostile = join(root, "crates/pi-session/tests/fixtures/export/hostile.jsonl");
if (sessions.length === 0) {
	sessions.push(hostile);
	const real = join(root, "conformance/cases/real");
	for (const name of readdirSync(real).sort()) {
		const file = join(real, name, "session.jsonl");
		if (existsSync(file)) sessions.push(file);
	}
}
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(executablePath)) {
	console.error(`no Chromium at ${executablePath}: install Debian's chromium package (apt-get install chromium), or set CHROMIUM`);
	process.exit(1);
}
if (!existsSync(bin)) {
	console.error(`no pi-session at ${bin}: run cargo build first, or pass --bin`);
	process.exit(1);
}

const out = join(root, "target/browser");
mkdirSync(out, { recursive: true });
const failures = [];
const fail = (page, message) => failures.push(`${page}: ${message}`);

// The entries of the branch the export shows: the JSONL export's lines, header and labels aside.
function branchEntries(file, leaf) {
	const jsonl = execFileSync(bin, ["export", "--format", "jsonl", file, ...(leaf ? ["--leaf", leaf] : [])], {
		maxBuffer: 1 << 30,
	}).toString();
	return jsonl
		.split("\n")
		.filter((l) => l.length > 0)
		.slice(1)
		.filter((l) => JSON.parse(l).type !== "label").length;
}

const jobs = [];
for (const file of sessions) {
	const name = file === hostile ? "hostile" : basename(dirname(file));
	jobs.push({ file, name, leaf: null });
	if (file === hostile) jobs.push({ file, name: "hostile-leaf-a3", leaf: "a3" });
}

const browser = await chromium.launch({
	executablePath,
	headless: true,
	args: [
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
	],
});
try {
	for (const job of jobs) {
		const html = join(out, `${job.name}.html`);
		execFileSync(bin, [
			"export",
			"--format",
			"html",
			job.file,
			"-o",
			html,
			"--force",
			...(job.leaf ? ["--leaf", job.leaf] : []),
		]);
		const expected = branchEntries(job.file, job.leaf);
		for (const bypassCSP of [false, true]) {
			const label = `${job.name}${bypassCSP ? " (CSP bypassed)" : ""}`;
			try {
				await checkPage(label, html, expected, bypassCSP, job.file === hostile, job.leaf);
			} catch (error) {
				fail(label, `the check could not finish (did the page navigate away?): ${error.message.split("\n")[0]}`);
			}
		}
	}
} finally {
	await browser.close();
}

async function checkPage(label, html, expected, bypassCSP, isHostile, leaf) {
	const context = await browser.newContext({ bypassCSP, viewport: { width: 1000, height: 1400 } });
	const page = await context.newPage();
	await context.route("**/*", (route) => {
		const url = route.request().url();
		if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
		fail(label, `fetched ${url}`);
		return route.abort();
	});
	page.on("dialog", (dialog) => {
		fail(label, `a dialog opened: ${dialog.message()}`);
		dialog.dismiss().catch(() => {});
	});
	page.on("pageerror", (error) => fail(label, `page error: ${error.message}`));
	page.on("console", (message) => {
		if (message.type() === "error") fail(label, `console error: ${message.text()}`);
	});
	const url = pathToFileURL(html).href;
	page.on("framenavigated", (frame) => {
		if (frame === page.mainFrame() && frame.url() !== url) fail(label, `the page navigated to ${frame.url()}`);
	});
	await page.goto(url, { waitUntil: "load" });
	await page.waitForTimeout(200); // time for a refresh or a late handler to act

	const state = await page.evaluate(() => ({
		pwned: window.__pwned,
		title: document.title,
		scripts: document.querySelectorAll("script").length,
		iframes: document.querySelectorAll("iframe, object, embed, meta[http-equiv=refresh]").length,
		handlers: [...document.querySelectorAll("*")].flatMap((el) =>
			[...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName} ${a.name}`),
		),
		javascriptLinks: [...document.querySelectorAll("a[href]")].filter((a) => !/^(https?:|mailto:|#|[^:]*$)/i.test(a.getAttribute("href"))).length,
		entries: document.querySelectorAll("article.entry").length,
		images: [...document.images].map((img) => ({ ok: img.complete && img.naturalWidth > 0, src: img.src.slice(0, 40) })),
		text: document.body.innerText,
		bodyVisible: getComputedStyle(document.body).display !== "none",
	}));
	if (state.pwned !== undefined) fail(label, `a script from the session ran (window.__pwned = ${state.pwned})`);
	if (state.scripts !== 0) fail(label, `${state.scripts} <script> elements in the page`);
	if (state.iframes !== 0) fail(label, `${state.iframes} frames, objects or refreshes in the page`);
	if (state.handlers.length !== 0) fail(label, `event handler attributes: ${state.handlers.slice(0, 5).join(", ")}`);
	if (state.javascriptLinks !== 0) fail(label, `${state.javascriptLinks} links with an unsafe scheme`);
	if (!state.bodyVisible) fail(label, "the page body is hidden (a style from the session applied)");
	if (state.entries !== expected) fail(label, `${state.entries} entries shown, the branch has ${expected}`);
	for (const image of state.images) if (!image.ok) fail(label, `an image did not render: ${image.src}…`);

	if (isHostile) {
		if (!state.title.startsWith("<script>")) fail(label, `title ${JSON.stringify(state.title)}: expected the session name as text`);
		const literals = ["Hello <script>window.__pwned=4</script>", "onerror="];
		if (!leaf) literals.push("<svg onload=", "Summary <script>window.__pwned=21</script>");
		for (const literal of literals) {
			if (!state.text.includes(literal)) fail(label, `the text ${JSON.stringify(literal)} is not shown literally`);
		}
		const wantImages = leaf ? 1 : 2;
		if (state.images.length !== wantImages) fail(label, `${state.images.length} images, expected ${wantImages} (the two PNGs; the text/html one and the broken one named only)`);
	}

	// Collapsible without a script: a click on a summary opens its details, another closes it.
	for (const selector of ["details.tool-call", "details.thinking", "details.tool-output"]) {
		const details = page.locator(selector).first();
		if ((await details.count()) === 0) continue;
		const open = () => details.evaluate((d) => d.open);
		if (await open()) fail(label, `${selector} is open before a click`);
		await details.locator("summary").click();
		if (!(await open())) fail(label, `${selector} did not open on a click`);
		const inner = details.locator("pre, .text").first();
		if ((await inner.count()) > 0 && !(await inner.isVisible())) fail(label, `${selector}: its content is not visible when open`);
		await details.locator("summary").click();
		if (await open()) fail(label, `${selector} did not close on a second click`);
	}
	if (isHostile && (await page.locator("details.tool-call").count()) === 0 && !leaf) fail(label, "no tool call in the hostile page");

	if (!bypassCSP) await page.screenshot({ path: html.replace(/\.html$/, ".png"), fullPage: false });
	console.log(`ok   ${label}: ${state.entries} entries, ${state.images.length} images`);
	await context.close();
}

if (failures.length > 0) {
	console.error(`\n${failures.length} failure(s):`);
	for (const f of failures) console.error(`  ${f}`);
	process.exit(1);
}
console.log(`\nall ${jobs.length} exports passed in Chromium (${executablePath})`);
