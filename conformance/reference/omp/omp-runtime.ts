// omp-runtime.ts — prepares a Bun process to run oh-my-pi (omp) 18.3.4's own session code from
// ../vendor/omp (see fetch-omp.mjs), and loads it. Shared by omp-ref.ts and omp-gen.ts.
//
// Call setupOmp() BEFORE anything of omp's is imported (it is imported dynamically by loadOmp()):
//
//   * Isolation. omp resolves its directories from the environment when pi-utils/dirs.ts is first
//     loaded: HOME (→ ~/.omp), PI_CONFIG_DIR, PI_PROFILE/OMP_PROFILE, XDG_*_HOME (→ $XDG_DATA_HOME/omp)
//     and PI_CODING_AGENT_DIR (the agent dir: blobs/, sessions/, terminal-sessions/ breadcrumbs,
//     session index). setupOmp() points HOME (and os.homedir()) at a private temp directory, PI_CODING_AGENT_DIR at a
//     private temp agent dir, and removes the others, so the machine's ~/.omp is never read or
//     written. With `agentDir` (--agent-dir DIR / $PI_CODING_AGENT_DIR), every file of DIR/blobs/ is
//     symlinked into the private agent dir's blobs/ (omp reads `blob:sha256:` refs from
//     <agentDir>/blobs); nothing else of DIR is read, and nothing is written to DIR.
//   * Deterministic ids (replacing only the generators, none of omp's code):
//       - entry ids: session-migrations.ts generateId() = `crypto.randomUUID().slice(-8)` with a
//         collision check against the caller's id set (migration passes a fresh, never-filled Set,
//         so each migrated entry takes exactly one call; appends pass the session's ids). The global
//         `crypto.randomUUID` is replaced by a counter returning
//         `00000000-0000-4000-8000-<n as 12 hex digits>`, so ids come out as 00000001, 00000002, …
//         node:crypto's randomUUID (used only for temp-file names of pins/maintenance) is left alone.
//       - session ids: session-manager.ts mintSessionId() = `Bun.randomUUIDv7()`, replaced by a
//         counter returning `00000000-0000-7000-8000-<n as 12 hex digits>` (own counter).
//       - time: omp stamps new entries, headers, title slots and the interrupted-turn message with
//         `new Date()` / `Date.now()`. bun:test's setSystemTime() freezes the clock at `now`
//         (default 2000-01-01T00:00:00.000Z, pass null to keep the real clock).
//     resetIds() restarts both counters (omp-ref calls it before every request).
//   * Shims (see ../README.md, "oh-my-pi"): a Bun.plugin onLoad hook serves
//     shims/pi-natives-loader.js in place of @oh-my-pi/pi-natives/native/loader-state.js (the
//     native addon is not published for 18.2.10); the missing `@oh-my-pi/pi-utils/fs-open` is mapped
//     to shims/fs-open.ts by ../vendor/omp/tsconfig.json (Bun 1.4's runtime onResolve hooks never
//     fire for bare specifiers, oven-sh/bun#40579, so that one goes through tsconfig paths).
//   * omp's logger writes to ~/.omp/logs by default; its file transport is switched off
//     (logger.setTransports({file:false})) and warnings/errors are collected through its own
//     registerLogSink() so callers can report them (takeLogs()).
import { plugin } from "bun";
import { setSystemTime } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";

export const HERE = import.meta.dir;
export const VENDOR = path.join(HERE, "..", "vendor", "omp");
export const AGENT_PKG = path.join(VENDOR, "node_modules", "@oh-my-pi", "pi-coding-agent");
export const AGENT_SRC = path.join(AGENT_PKG, "src");
export const SHIMS = path.join(HERE, "shims");

/** Default frozen clock: 2000-01-01T00:00:00.000Z (the mtime pi-ref.mjs and FORMAT.md use too). */
export const DEFAULT_NOW_MS = 946_684_800_000;

let entryCounter = 0;
let sessionCounter = 0;
export function resetIds(): void {
	entryCounter = 0;
	sessionCounter = 0;
}

let tmpRoot: string | null = null;
/** The process's private temp directory (removed on exit). */
export function tmpRootDir(): string {
	if (!tmpRoot) throw new Error("setupOmp() has not run");
	return tmpRoot;
}

export interface SetupOptions {
	/** Directory whose blobs/ omp may read (`--agent-dir`); default: none (empty blob store). */
	agentDir?: string | null;
	/** Writers (omp-examples.ts / omp-gen.ts): use `agentDir` itself as omp's agent dir, so the
	 *  blobs omp externalizes land in agentDir/blobs (its breadcrumbs and index land there too). */
	writeAgentDir?: boolean;
	/** Frozen clock in ms since the epoch; null = real clock. */
	now?: number | null;
}

let done = false;
export function setupOmp(options: SetupOptions = {}): void {
	if (done) throw new Error("setupOmp() runs once per process");
	done = true;
	if (!fs.existsSync(path.join(AGENT_PKG, "package.json")) || !fs.existsSync(path.join(VENDOR, "tsconfig.json"))) {
		throw new Error(`omp is not fetched: run \`node ${path.relative(process.cwd(), path.join(HERE, "fetch-omp.mjs"))}\``);
	}

	// ---- isolation ----
	// node:os is only ever loaded through require() here, and patched before any ESM import of it
	// (an ESM namespace of a builtin snapshots its exports when first created).
	const os = require("node:os") as typeof import("node:os");
	tmpRoot = fs.mkdtempSync(path.join(process.env.OMP_REF_TMPDIR || process.env.PI_REF_TMPDIR || os.tmpdir(), "omp-ref-"));
	const root = tmpRoot;
	process.on("exit", () => {
		try {
			fs.rmSync(root, { recursive: true, force: true });
		} catch {}
	});
	const home = path.join(root, "home");
	const agent = options.writeAgentDir && options.agentDir ? path.resolve(options.agentDir) : path.join(root, "agent");
	fs.mkdirSync(home, { recursive: true });
	fs.mkdirSync(path.join(agent, "blobs"), { recursive: true });
	if (options.agentDir && !options.writeAgentDir) {
		const src = path.join(path.resolve(options.agentDir), "blobs");
		if (fs.existsSync(src)) {
			for (const name of fs.readdirSync(src)) {
				fs.symlinkSync(path.join(src, name), path.join(agent, "blobs", name));
			}
		}
	}
	process.env.HOME = home;
	process.env.USERPROFILE = home;
	process.env.PI_CODING_AGENT_DIR = agent;
	for (const name of ["PI_CONFIG_DIR", "PI_PROFILE", "OMP_PROFILE", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"]) {
		delete process.env[name];
	}
	// Bun reads HOME once at start-up; os.homedir() is replaced so every omp module (imported later,
	// `import * as os` or `{ homedir }`) sees the private home.
	os.homedir = () => home;

	// ---- determinism ----
	globalThis.crypto.randomUUID = function deterministicRandomUUID() {
		entryCounter += 1;
		return `00000000-0000-4000-8000-${entryCounter.toString(16).padStart(12, "0")}` as `${string}-${string}-${string}-${string}-${string}`;
	};
	(Bun as { randomUUIDv7: () => string }).randomUUIDv7 = function deterministicRandomUUIDv7() {
		sessionCounter += 1;
		return `00000000-0000-7000-8000-${sessionCounter.toString(16).padStart(12, "0")}`;
	};
	const now = options.now === undefined ? DEFAULT_NOW_MS : options.now;
	if (now !== null) setSystemTime(new Date(now));

	// ---- shims ----
	const nativesLoader = path.join(SHIMS, "pi-natives-loader.js");
	const authStorageTail = path.join(SHIMS, "auth-storage-tail.ts");
	plugin({
		name: "omp-ref-shims",
		setup(build) {
			build.onLoad({ filter: /[\\/]@oh-my-pi[\\/]pi-natives[\\/]native[\\/]loader-state\.js$/ }, () => ({
				contents: fs.readFileSync(nativesLoader, "utf8"),
				loader: "js",
			}));
			// pi-ai 18.2.x predates the constant 18.3.4's settings registry (session/settings.ts,
			// which session-stats.ts imports for its context-size estimate) reads as a default.
			build.onLoad({ filter: /[\\/]@oh-my-pi[\\/]pi-ai[\\/]src[\\/]auth-storage\.ts$/ }, (args) => ({
				contents: `${fs.readFileSync(args.path, "utf8")}\n${fs.readFileSync(authStorageTail, "utf8")}`,
				loader: "ts",
			}));
		},
	});
}

export interface Omp {
	SessionManager: any;
	loadSessionFile: (file: string, ...rest: unknown[]) => Promise<any>;
	createInterruptedTurnAbortMessage: (entries: readonly unknown[], fallback?: unknown) => any;
	buildSessionContext: (...args: unknown[]) => any;
	listSessions: (dir: string, storage: unknown) => Promise<any[]>;
	listAllSessions: (storage: unknown, root: string) => Promise<any[]>;
	sortPinnedFirst: (sessions: any[], pinned: ReadonlySet<string>) => any[];
	FileSessionStorage: any;
	SessionStatsTracker: any;
	logger: any;
}

let omp: Omp | null = null;
const logs: { level: string; message: string }[] = [];
/** Warnings and errors omp logged since the last call. */
export function takeLogs(): { level: string; message: string }[] {
	return logs.splice(0, logs.length);
}

/** Import omp's session modules (by file path, from the vendored agent package). */
export async function loadOmp(): Promise<Omp> {
	if (omp) return omp;
	if (!done) throw new Error("setupOmp() must run before loadOmp()");
	const esmOs = await import("node:os");
	if (esmOs.homedir() !== process.env.HOME) throw new Error(`os.homedir() is not the private home (${esmOs.homedir()})`);
	const src = (p: string) => import(path.join(AGENT_SRC, p));
	const sm = await src("session/session-manager.ts");
	const loader = await src("session/session-loader.ts");
	const exit = await src("session/exit-diagnostics.ts");
	const ctx = await src("session/session-context.ts");
	const listing = await src("session/session-listing.ts");
	const storage = await src("session/session-storage.ts");
	const stats = await src("session/session-stats.ts");
	const { logger } = await import(path.join(VENDOR, "node_modules", "@oh-my-pi", "pi-utils", "src", "index.ts"));
	logger.setTransports({ file: false, console: false });
	logger.registerLogSink((e: { level: string; message: string; context?: unknown }) => {
		if (e.level === "warn" || e.level === "error") {
			let message = e.message;
			if (e.context !== undefined) {
				try {
					message += ` ${JSON.stringify(e.context)}`;
				} catch {}
			}
			logs.push({ level: e.level, message });
		}
	});
	omp = {
		SessionManager: sm.SessionManager,
		loadSessionFile: loader.loadSessionFile,
		createInterruptedTurnAbortMessage: exit.createInterruptedTurnAbortMessage,
		buildSessionContext: ctx.buildSessionContext,
		listSessions: listing.listSessions,
		listAllSessions: listing.listAllSessions,
		sortPinnedFirst: (await src("session/session-pins.ts")).sortPinnedFirst,
		FileSessionStorage: storage.FileSessionStorage,
		SessionStatsTracker: stats.SessionStatsTracker,
		logger,
	};
	return omp;
}

/** The vendored modules a loaded process uses from outside vendor/omp (should be only shims/). */
export function modulesOutsideVendor(): string[] {
	const req = (globalThis as { require?: { cache: Record<string, unknown> } }).require ?? require;
	return Object.keys(req.cache).filter((k) => !k.startsWith(VENDOR + path.sep));
}
