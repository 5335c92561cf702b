// Types of the npm package `pi-session` (index.js). Checked by `npm run typecheck`
// (tsc --noEmit over test/types-example.ts).

/**
 * A pinned pi whose rules to follow: `"0.73"` (`@mariozechner/pi-coding-agent` 0.73.1),
 * `"0.87"` (`@earendil-works/pi-coding-agent` 0.87.1) or `"1.5"` (1.5.2, current pi, the
 * default), or the full release.
 */
export type PiVersion = "0.73" | "0.87" | "1.5" | "0.73.1" | "0.87.1" | "1.5.2";

/**
 * The dialect a session file is in: pi's own, or oh-my-pi's (`omp`: a title slot on the first
 * line, its own entry types, images in a blob store; docs/dialects.md).
 */
export type Dialect = "pi" | "omp";

/** Any JSON value, as `JSON.parse` makes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The code of every Error the package throws (`error.code`): the library's codes, the same as
 * the Python module's (a validator diagnostic code where the catalogue names the failure, a
 * kind otherwise), and `ERR_…` for the binding's own conditions.
 */
export type ErrorCode =
	// The file system (`io` also for a file that shrank while it was read; `unsupported` also
	// for a writer operation the profile's pi lacks).
	| "not-found"
	| "permission-denied"
	| "is-a-directory"
	| "not-a-directory"
	| "already-exists"
	| "invalid-filename"
	| "file-too-large"
	| "read-only-filesystem"
	| "storage-full"
	| "would-block"
	| "interrupted"
	| "out-of-memory"
	| "unsupported"
	| "io"
	// Reading: no session header (PS0101), a first value that is not one (PS0102), a parent
	// cycle where pi loops forever (PS0213; PS0214 an entry that is its own parent), an entry
	// the typed model does not read, what pi throws a TypeError on, an oh-my-pi (omp) file read
	// with `dialect: "pi"`, what omp does that is not reproduced yet (`llm()` of an omp session,
	// provider replay data, context notes), an omp tree omp never finishes writing.
	| "PS0101"
	| "PS0102"
	| "PS0213"
	| "PS0214"
	| "entry-not-typed"
	| "type-error"
	| "wrong-dialect"
	| "omp-unsupported"
	| "omp-tree-cycle"
	| "omp-tree-too-large"
	// Writing (the writer is unchanged after each).
	| "entry-not-found"
	| "not-on-branch"
	| "not-editable"
	| "bad-replacement"
	| "bad-message"
	| "bad-entry"
	| "invalid-session-id"
	| "missing-argument"
	| "not-a-session"
	| "old-version"
	| "locked"
	| "not-a-file"
	| "read-only"
	| "file-replaced"
	| "partial-write"
	| "refused"
	// The binding's own: arguments, and a constructor called directly.
	| "ERR_INVALID_ARG_TYPE"
	| "ERR_INVALID_ARG_VALUE"
	| "ERR_ILLEGAL_CONSTRUCTOR"
	// An answer longer than the longest string V8 holds (512 MiB of JSON text).
	| "ERR_STRING_TOO_LONG"
	// A bug of the toolkit (a Rust panic, caught before it could abort the process).
	| "ERR_PANIC";

/** What the package throws: an `Error` (a `TypeError` for bad arguments) with a stable code. */
export interface PiSessionError extends Error {
	code: ErrorCode;
}

/** A message of a context: any role pi knows (`user`, `assistant`, `toolResult`, `custom`, …). */
export interface Message {
	role: string;
	content?: Json;
	timestamp?: number | null;
	[member: string]: Json | undefined;
}

/** What pi's `buildSessionContext` returns (as JSON carries it). */
export interface Context {
	messages: Message[];
	thinkingLevel: Json;
	model: { provider?: Json; modelId?: Json } | null;
}

/** What omp's `buildSessionContext` returns for an omp session (as JSON carries it). */
export interface OmpContext {
	messages: Message[];
	thinkingLevel: Json;
	configuredThinkingLevel?: Json;
	serviceTier?: Json;
	/** The model of each role (`{ default: "provider/id", … }`). */
	models: { [role: string]: Json };
	injectedTtsrRules: Json[];
	mode?: Json;
	modeData?: Json;
}

/** A node of pi's `getTree()`. */
export interface TreeNode {
	id?: Json;
	type?: Json;
	label?: Json;
	children: TreeNode[];
}

/** The listing entry pi shows for a session (`buildSessionInfo`). */
export interface SessionInfo {
	id: string;
	cwd: string;
	name?: string;
	parentSessionPath?: string;
	created: string;
	modified: string;
	messageCount: number;
	firstMessage: string;
	allMessagesText: string;
}

/** The listing entry omp shows for a session (`scanSessionFile`). */
export interface OmpSessionInfo {
	id: string;
	cwd: string;
	title?: string;
	parentSessionPath?: string;
	created: string | null;
	modified: string;
	messageCount: number;
	assistantTurns: number;
	size: number;
	firstMessage: string;
	allMessagesText: string;
	status: "complete" | "interrupted" | "aborted" | "error" | "pending" | "unknown";
}

/** The session header (the file's first value). */
export interface Header {
	type: "session";
	id: string;
	version?: Json;
	timestamp?: Json;
	cwd?: Json;
	parentSession?: Json;
	[member: string]: Json | undefined;
}

/** An entry as pi holds it: any value of the file but the header (normally an object). */
export type Entry = Json;

/** A line that is not JSON (pi drops it without a word). */
export interface DroppedLine {
	line: number;
	column: number;
	error: string;
}

export interface OpenOptions {
	/** Whose rules (default: current pi, 1.5). */
	pi?: PiVersion;
	/**
	 * Where the entries of a v1 file get their ids: `"random"` (as pi, the default) or
	 * `"sequential"` (`00000001`, `00000002`, …).
	 */
	ids?: "random" | "sequential";
	/**
	 * The file's dialect: pi's (the default), omp's, or `"auto"`: the file's own, told by its
	 * first lines and entry types (then check `session.dialect`).
	 */
	dialect?: Dialect | "auto";
	/** omp's blob store, where an omp session's images are (default: omp's own, if any). */
	blobs?: string;
}

export interface LeafOptions {
	/** The entry to build from (default: the leaf pi has after opening the file). */
	leaf?: string;
}

export interface InfoOptions {
	/** Whose rules (`info()` only; a Session uses its own). */
	pi?: PiVersion;
	/** The file's modification time (pi's last fallback for `modified`): ms or a Date. */
	mtime?: number | Date;
	/** The file's dialect (`info()` only): pi's (the default), omp's, or `"auto"` (its own). */
	dialect?: Dialect | "auto";
}

/** What a loaded session holds in either dialect. */
export interface LoadedSession {
	/** The release of the pi whose rules the session was loaded with (`"1.5.2"`). */
	readonly pi: string;
	/** The header's value (migrated for a v1/v2 file; omp's title slot is not it). */
	readonly header: Header;
	/** The leaf id after opening the file (`null` without entries, `undefined` without an id). */
	readonly leafId: Json | undefined;
	/** The file's `version` as read (`null` when not a number) and whether it is migrated. */
	readonly version: { version: number | null; migrated: boolean };
	/** The lines that are not JSON, which pi (and omp) drop. */
	readonly dropped: DroppedLine[];
	/**
	 * The entries in file order as held after opening the file (pi's `getEntries()`); with
	 * `typed: true`, as the format's typed model reads them (`entry-not-typed` for an entry
	 * that does not fit).
	 */
	entries(options?: { typed?: boolean }): Entry[];
}

/** A session file loaded with one pi's rules. Made by `open`. */
export declare class Session {
	private constructor();
	/** The dialect the session was read in. */
	readonly dialect: "pi";
	/**
	 * pi's `buildSessionContext` (throws PS0213 or PS0214 where pi loops forever). A `message`
	 * entry without a message, which it skips, is a process warning of type `PiSessionWarning`.
	 */
	context(options?: LeafOptions): Context;
	/** The messages pi sends to the model: `convertToLlm` of the context's messages. */
	llm(options?: LeafOptions): Message[];
	/** pi's `getTree()`. */
	tree(): TreeNode[];
	/** The listing entry (`null` when pi leaves the file out of lists). */
	info(options?: Omit<InfoOptions, "pi" | "dialect">): SessionInfo | null;
}
export interface Session extends LoadedSession {}

/**
 * An oh-my-pi (omp) session file, read as omp reads it (docs/dialects.md). At run time a
 * `Session` whose `dialect` is `"omp"`.
 */
export interface OmpSession extends LoadedSession {
	readonly dialect: "omp";
	/**
	 * omp's `buildSessionContext` on resume, images put back from the blob store
	 * (`omp-unsupported` where omp's code is not reproduced yet). An image whose blob is not in
	 * the store keeps its reference, and that is a process warning of type `PiSessionWarning`.
	 */
	context(options?: LeafOptions): OmpContext;
	/** omp's `convertToLlm` is not reproduced yet: throws `omp-unsupported`. */
	llm(options?: LeafOptions): never;
	/** omp's `getTree()` (`omp-tree-cycle`, `omp-tree-too-large` where omp never finishes). */
	tree(): TreeNode[];
	/** omp's listing entry (`null` when omp leaves the file out of lists). */
	info(options?: Omit<InfoOptions, "pi" | "dialect">): OmpSessionInfo | null;
}

/** Loads a session from a path (never changed) or from its bytes, in pi's dialect. */
export declare function open(
	pathOrBuffer: string | Uint8Array,
	options?: OpenOptions & { dialect?: "pi" },
): Session;
/** Loads an oh-my-pi session (`dialect: "omp"`). */
export declare function open(pathOrBuffer: string | Uint8Array, options: OpenOptions & { dialect: "omp" }): OmpSession;
/** Loads a session in its own dialect (`dialect: "auto"`): narrow it by `dialect`. */
export declare function open(pathOrBuffer: string | Uint8Array, options: OpenOptions): Session | OmpSession;

/** The listing entry of a file, read as it is (also when pi cannot open it): `null` when pi leaves it out. */
export declare function info(
	pathOrBuffer: string | Uint8Array,
	options?: InfoOptions & { dialect?: "pi" },
): SessionInfo | null;
/** omp's listing entry of a file (`dialect: "omp"`): `null` when omp leaves it out. */
export declare function info(
	pathOrBuffer: string | Uint8Array,
	options: InfoOptions & { dialect: "omp" },
): OmpSessionInfo | null;
/** The listing entry in the file's own dialect (`dialect: "auto"`). */
export declare function info(pathOrBuffer: string | Uint8Array, options: InfoOptions): SessionInfo | OmpSessionInfo | null;

// ---- validate ----------------------------------------------------------------------------------

export interface ValidateOptions {
	/** Whose behaviour the pi effects and the pi-loadable verdict describe (default 1.5). */
	pi?: PiVersion;
	/** A file is valid when it has no error (default: when pi loads it whole). */
	strict?: boolean;
	/** Only the JSON Schemas. */
	schemaOnly?: boolean;
	/** Follow symbolic links to directories while walking one. */
	follow?: boolean;
	/** Also take the archives deployments keep beside sessions (`*.jsonl.reset.<time>`, …). */
	includeArchived?: boolean;
	/** `"omp"`: omp's checks too (its title slot, entry types, blobs); default pi's rules. */
	dialect?: Dialect;
	/** With `dialect: "omp"`: the blob store image references must be in (default omp's own). */
	blobs?: string;
}

export type DiagnosticCode = `PS${number}`;
export type Severity = "info" | "warning" | "error";
export type PiEffect =
	| "none"
	| "ignored"
	| "altered"
	| "hidden"
	| "dropped"
	| "rewritten"
	| "truncated"
	| "crash"
	| "hang"
	| "unreadable";

export interface Location {
	line: number;
	column: number;
	offset: number;
	length: number;
}

export interface Diagnostic {
	code: DiagnosticCode;
	severity: Severity;
	pi: PiEffect;
	location: Location | null;
	message: string;
	help: string;
	entryId?: string;
	omitted?: number;
	pointer?: string;
}

export interface Verdict {
	strict: boolean;
	piLoadable: boolean;
	piResumes: boolean;
}

export interface FileStats {
	bytes: number;
	lines: number;
	entries: number;
	version: number | null;
	errors: number;
	warnings: number;
	infos: number;
}

export interface FileReport {
	path: string;
	valid: boolean;
	readError?: string;
	verdict?: Verdict;
	stats?: FileStats;
	diagnostics: Diagnostic[];
}

export interface Summary {
	files: number;
	valid: number;
	invalid: number;
	unreadable: number;
	errors: number;
	warnings: number;
	infos: number;
}

/** The report `pi-session validate --format json` prints (schemas/validate-report.schema.json). */
export interface ValidateReport {
	formatVersion: 1;
	tool: { name: string; version: string };
	pi: string;
	verdict: "pi-loadable" | "strict" | "schema-only";
	/** `"omp"` when the files were checked by omp's rules too (absent for pi's). */
	dialect?: Dialect;
	files: FileReport[];
	summary: Summary;
}

/**
 * Validates files and directories (walked for `*.jsonl`; pi's session directory for `[]`). A
 * file that cannot be read is in the report (`readError`), not thrown.
 */
export declare function validate(paths: string | string[], options?: ValidateOptions): ValidateReport;

// ---- stats -------------------------------------------------------------------------------------

export type GroupBy = "session" | "project" | "model" | "provider" | "day" | "month";

export interface StatsOptions {
	/** What a group adds up (default `"session"`). */
	by?: GroupBy;
	/** Only entries written at or after this day (`YYYY-MM-DD`, `today` or `yesterday`, UTC) or time (ISO 8601, or a Date). */
	since?: string | Date;
	/** Only entries written before this time; a `YYYY-MM-DD` day (or `today`, `yesterday`: UTC) counts whole. */
	until?: string | Date;
	/** Count history copied into forked and branched sessions once (default true). */
	dedupe?: boolean;
	/** Whose rules give each session's own numbers (`pi` of a session group; default 1.5). */
	pi?: PiVersion;
	/** Follow symbolic links to directories while walking one. */
	follow?: boolean;
	/** Also take the archives deployments keep beside sessions (`*.jsonl.reset.<time>`, …). */
	includeArchived?: boolean;
	/** Read every file as this dialect's (default, or `"auto"`: each file's own). */
	dialect?: Dialect | "auto";
}

/** Tokens and cost (`null` for a sum that is not a number). */
export interface StatsUsage {
	input: number | null;
	output: number | null;
	cacheRead: number | null;
	cacheWrite: number | null;
	totalTokens: number | null;
	cost: number | null;
}

/** What a group (or the total, or the copies left out) adds up to. */
export interface Tally {
	/** Sessions with an entry in the group; in `total`, every session read, or with `since`/`until` those with an entry in the range. */
	sessions: number;
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	toolResults: number;
	messages: number;
	compactions: number;
	branchSummaries: number;
	usageEntries: number;
	/** Everything: messages, summaries and `usage` entries. */
	usage: StatsUsage;
	messageUsage: StatsUsage;
	summaryUsage: StatsUsage;
	usageEntryUsage: StatsUsage;
	/** Entries whose usage pi cannot add: left out. */
	unreadable: number;
}

/** What pi's `/session` (`getSessionStats()`) shows for one file, every copy included. */
export interface PiSessionStats {
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	toolResults: number;
	totalMessages: number;
	tokens: { input: number | null; output: number | null; cacheRead: number | null; cacheWrite: number | null; total: number | null };
	cost: number | null;
}

/** What oh-my-pi's `/session` (`getSessionStats()`) shows for an omp file (its resumed context,
 *  subagents' usage and the `model_usage` entries of the active window). */
export interface OmpSessionStats {
	userMessages: number;
	assistantMessages: number;
	toolCalls: number;
	toolResults: number;
	totalMessages: number;
	tokens: {
		input: number | null;
		output: number | null;
		reasoning: number | null;
		cacheRead: number | null;
		cacheWrite: number | null;
		total: number | null;
	};
	cost: number | null;
	premiumRequests: number | null;
	credits?: { cost: number | null; committedCost: number | null; acuCost: number | null };
	routedModels?: Record<string, number>;
}

export interface StatsGroup extends Tally {
	/** The group: a path, a cwd, `provider/model`, a provider, a day or a month (`-`: none). */
	name: string;
	/** With `by: "session"`: the header's id, cwd and creation time, the file's dialect, and
	 *  its program's own numbers: pi's (`pi`), or oh-my-pi's (`omp`; `ompError` where they are
	 *  not reproduced for the file). */
	id?: string;
	cwd?: string;
	created?: string;
	dialect?: "pi" | "omp";
	pi?: PiSessionStats;
	piUnreadable?: number;
	omp?: OmpSessionStats;
	ompUnreadable?: number;
	ompError?: string;
}

/** The report `pi-session stats --format json` prints. */
export interface StatsReport {
	formatVersion: 1;
	by: GroupBy;
	dedupe: boolean;
	groups: StatsGroup[];
	total: Tally;
	/** The copies left out (entries an earlier session already held). */
	copies: Tally;
	forkedSessions: number;
	/** Files that could not be counted (the others were). */
	errors: { path: string; error: string }[];
}

/**
 * Adds up files and directories (walked for `*.jsonl`; pi's session directory for `[]`). A
 * file that is not a session is in `errors`, not thrown.
 */
export declare function stats(paths: string | string[], options?: StatsOptions): StatsReport;

// ---- redact ------------------------------------------------------------------------------------

/** What to find and how to replace it (`pi-session redact`'s options). */
export interface RedactionOptions {
	/** Values to redact wherever they are (at least 4 bytes each). */
	secrets?: string[];
	/** `.env` files (`KEY=VALUE` lines): their values are redacted, never their names. */
	secretsFrom?: string[];
	/** The key placeholders are made with (at least 16 bytes); default: random per call. */
	key?: Uint8Array | string;
	/** Also redact the entropy tier's candidates (long random-looking tokens). */
	aggressive?: boolean;
	/** Empty `thinkingSignature`, `textSignature` and `thoughtSignature`. */
	stripSignatures?: boolean;
	/** Replace every image by a 1×1 PNG. */
	stripImages?: boolean;
}

export interface RedactOptions extends RedactionOptions {
	/** Where the redacted session goes (a new file, unless `force`); without it nothing is written. */
	out?: string;
	force?: boolean;
}

/** One secret found: where, never what. */
export interface RedactFinding {
	line: number;
	entryId: string | null;
	/** `message.content[0].text`; `→` steps into JSON held in a string. */
	path: string;
	/** The rule's id, `named-secret`, `high-entropy`, `signature` or `image`. */
	rule: string;
	candidate: boolean;
	redacted: boolean;
}

/** What a file held: `pi-session redact --format json`'s report of a file. */
export interface RedactReport {
	lines: number;
	linesChanged: number;
	redacted: number;
	candidatesLeft: number;
	rules: Record<string, { redacted: number; candidates: number }>;
	findings: RedactFinding[];
}

/** The session's secrets replaced by `[REDACTED:rule:h8]`; the result still a session pi resumes. */
export declare function redact(path: string, options?: RedactOptions): RedactReport;

/** `redact` of a session's bytes, in memory (`data` is a `Buffer`). */
export declare function redactBytes(
	data: Uint8Array,
	options?: RedactionOptions,
): { data: Uint8Array; report: RedactReport };

// ---- writing -----------------------------------------------------------------------------------

export interface WriterOptions {
	/** Whose writing rules (default 1.5). */
	pi?: PiVersion;
	/** The session id of a new session (default: a UUID v7). */
	id?: string;
	/** Sync the file's data after every write. */
	fsync?: boolean;
}

export interface CreateOptions extends WriterOptions {
	/** Where the file goes (default: pi's session directory for the cwd). */
	sessionDir?: string;
}

/** A session being written as pi's `SessionManager` writes it, safely (locked, all-or-nothing appends). */
export declare class SessionWriter {
	private constructor();
	/** A new session of `cwd` (pi's `SessionManager.create`), written at its first conversation. */
	static create(cwd: string, options?: CreateOptions): SessionWriter;
	/** Appends to the session at `path` (pi's `SessionManager.open`; a new one when it does not exist). */
	static open(path: string, options?: Omit<WriterOptions, "id">): SessionWriter;
	/** A session that is never written (pi's `SessionManager.inMemory`). */
	static inMemory(cwd?: string, options?: Omit<WriterOptions, "fsync">): SessionWriter;
	/** A copy of the session at `source` as a new session of `cwd` (pi's `SessionManager.forkFrom`). */
	static forkFrom(source: string, cwd: string, options?: CreateOptions): SessionWriter;
	/** Appends a whole entry; `id`, `parentId` and `timestamp` are filled in when absent. Returns its id. */
	append(entry: { type: string; [member: string]: unknown }): string;
	/** Appends a message entry (pi's `appendMessage`). Returns its id. */
	appendMessage(message: { role: string; [member: string]: unknown }): string;
	/**
	 * The path to `leafId` as a session of its own (pi's `createBranchedSession`), in
	 * `options.out` (which must not exist) or under pi's name beside this one; the writer
	 * continues in it. Returns its path (`null` in memory, or until it is written).
	 */
	fork(leafId: string, options?: { out?: string }): string | null;
	/** Makes `id` the leaf: the next entry is its child. */
	branch(id: string): void;
	/** Clears the leaf: the next entry is a new root. */
	resetLeaf(): void;
	/** Writes the file now (pi waits for the first conversation). */
	writeNow(): void;
	/** Every line the writer holds, as the file holds them. */
	toJsonl(): string;
	/** The messages pi would send to the model for the current leaf. */
	context(): Message[];
	/** The session read back with the reader of the same pi. */
	session(): Session;
	readonly sessionId: string;
	readonly cwd: string;
	/** The session file (`null` in memory). */
	readonly path: string | null;
	/** The current leaf (`null` before the first entry or after `resetLeaf`). */
	readonly leafId: string | null;
	/** Whether the file holds every line. */
	readonly isWritten: boolean;
	readonly entryCount: number;
	/** The release of the pi whose writing rules the writer follows. */
	readonly pi: string;
}

// ---- the drop-in for pi's reader ---------------------------------------------------------------

/**
 * pi's `loadEntriesFromFile(filePath)`: every value of the file, header first, not migrated
 * (`[]` for a missing or empty file, or one without a session header). Deep-equal to pi's.
 */
export declare function loadEntriesFromFile(filePath: string, options?: { pi?: PiVersion }): Json[];

/**
 * pi's `buildSessionContext(entries, leafId)`: the context of the path to `leafId`, looked up
 * as pi's `Map` does (not given, falsy or not found: the last entry; `null`: no entry). Deep-equal to pi's as JSON carries it.
 */
export declare function buildSessionContext(
	entries: readonly unknown[],
	leafId?: Json,
	options?: { pi?: PiVersion },
): Context;

/** The pi releases whose rules the toolkit knows, oldest first. */
export declare const piVersions: string[];
/** The toolkit's version. */
export declare const version: string;

/** @internal Panics in the native code, for the test that a panic is thrown as an Error (ERR_PANIC). */
export declare function __panicForTest(): never;
