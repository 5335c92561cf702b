// pi-session: read, check and write the JSONL session files of the pi coding agent, as pi does.
//
// The API of the npm package. The work is the native addon's (pi-session.node, built from
// src/ by `npm run build`), which calls the Rust library crates of pi-session-format; this file
// checks arguments, reads options, and turns the addon's JSON answers into values with
// JSON.parse (faster than building them through N-API: README.md, "Measurements").
"use strict";

const native = require("./pi-session.node");

/** An Error with a stable `code` (Node's convention). */
function coded(ErrorType, code, message) {
	const error = new ErrorType(message);
	error.code = code;
	return error;
}

function invalidType(name, expected, value) {
	const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
	return coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" argument must be ${expected}; got ${got}`);
}

function checkString(name, value) {
	if (typeof value !== "string") throw invalidType(name, "a string", value);
	return value;
}

function optionalString(name, value) {
	return value === undefined ? undefined : checkString(name, value);
}

function optionalBoolean(name, value) {
	if (value === undefined) return undefined;
	if (typeof value !== "boolean") throw invalidType(name, "a boolean", value);
	return value;
}

function optionsObject(options) {
	if (options === undefined || options === null) return {};
	if (typeof options !== "object") throw invalidType("options", "an object", options);
	return options;
}

/** `options.pi` as the addon takes it: a string, or undefined for current pi. */
function piOption(options) {
	const { pi } = options;
	if (pi === undefined) return undefined;
	if (typeof pi !== "string") throw invalidType("options.pi", 'a string ("0.73", "0.87" or "1.5")', pi);
	return pi;
}

/** `options.dialect`: "pi", "omp", "auto" (the file's own), or undefined (the function's default). */
function dialectOption(options) {
	const { dialect } = options;
	if (dialect === undefined) return undefined;
	if (typeof dialect !== "string") throw invalidType("options.dialect", 'a string ("pi", "omp" or "auto")', dialect);
	return dialect;
}

const NATIVE = Symbol("native");

/** A session file loaded with one pi's rules. Made by `open`. */
/**
 * What building an answer skipped or left in place (`LINE: warning: …`, as the command line
 * prints it), each as a process warning of type `PiSessionWarning` (`process.on("warning")`;
 * printed on stderr unless Node runs with `--no-warnings`).
 */
function warn(warnings) {
	for (const message of warnings) process.emitWarning(message, { type: "PiSessionWarning", code: "PI_SESSION_CONTEXT" });
}

class Session {
	/** @internal */
	constructor(token, handle) {
		if (token !== NATIVE) throw coded(TypeError, "ERR_ILLEGAL_CONSTRUCTOR", "use open(pathOrBuffer) to load a session");
		this[NATIVE] = handle;
	}

	/** The release of the pi whose rules the session was loaded with ("1.5.2"). */
	get pi() {
		return this[NATIVE].pi;
	}

	/** The dialect the session was read in: "pi", or "omp" (oh-my-pi's, docs/dialects.md). */
	get dialect() {
		return this[NATIVE].dialect;
	}

	/** The header's value (migrated for a v1/v2 file). */
	get header() {
		return JSON.parse(this[NATIVE].headerJson());
	}

	/** The leaf id pi has after opening the file (`null` without entries). */
	get leafId() {
		const text = this[NATIVE].leafIdJson();
		return text === null || text === undefined ? undefined : JSON.parse(text);
	}

	/** The file's `version` as pi reads it (`null` when not a number) and whether pi migrates it. */
	get version() {
		return JSON.parse(this[NATIVE].versionJson());
	}

	/** The lines that are not JSON, which pi drops: `{ line, column, error }`. */
	get dropped() {
		return JSON.parse(this[NATIVE].droppedJson());
	}

	/**
	 * pi's `buildSessionContext` for `leaf` (default: pi's leaf after opening the file); for
	 * an omp session, omp's, with its images put back from the blob store.
	 */
	context(options) {
		const leaf = optionalString("options.leaf", optionsObject(options).leaf);
		const { context, warnings } = JSON.parse(this[NATIVE].contextJson(leaf));
		warn(warnings);
		return context;
	}

	/**
	 * The messages pi sends to the model (`convertToLlm` of the context's messages); refused
	 * for an omp session (`omp-unsupported`).
	 */
	llm(options) {
		const leaf = optionalString("options.leaf", optionsObject(options).leaf);
		return JSON.parse(this[NATIVE].llmJson(leaf));
	}

	/** pi's `getTree()`: `[{ id, type, label?, children }]`. */
	tree() {
		return JSON.parse(this[NATIVE].treeJson());
	}

	/** The listing entry pi shows (`buildSessionInfo`), or `null` when pi leaves the file out. */
	info(options) {
		return JSON.parse(this[NATIVE].infoJson(mtimeOption(optionsObject(options))));
	}

	/**
	 * The entries in file order as pi holds them after opening the file (its `getEntries()`);
	 * with `{ typed: true }`, as the format's typed model reads them (which fails on an entry
	 * that does not fit it: `entry-not-typed`).
	 */
	entries(options) {
		const typed = optionalBoolean("options.typed", optionsObject(options).typed);
		return JSON.parse(typed ? this[NATIVE].typedEntriesJson() : this[NATIVE].entriesJson());
	}
}

/**
 * Loads a session: a path (read as pi reads it: the file is never changed) or the bytes of one,
 * in pi's dialect, omp's (`dialect: "omp"`) or its own (`"auto"`); `blobs`: omp's blob store
 * (default: omp's own, when there is one).
 * @param {string | Uint8Array} pathOrBuffer
 * @param {{ pi?: string, ids?: string, dialect?: string, blobs?: string }} [options]
 */
function open(pathOrBuffer, options) {
	const o = optionsObject(options);
	const pi = piOption(o);
	const ids = optionalString("options.ids", o.ids);
	const dialect = dialectOption(o);
	const blobs = optionalString("options.blobs", o.blobs);
	if (typeof pathOrBuffer === "string") {
		return new Session(NATIVE, native.openPath(pathOrBuffer, pi, ids, dialect, blobs));
	}
	return new Session(NATIVE, native.openBuffer(bufferOf(pathOrBuffer), pi, ids, dialect, blobs));
}

/** A Buffer over the bytes of a Uint8Array (no copy). */
function bufferOf(bytes) {
	if (Buffer.isBuffer(bytes)) return bytes;
	if (bytes instanceof Uint8Array) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	throw invalidType("pathOrBuffer", "a string or a Buffer/Uint8Array", bytes);
}

/** `options.mtime` in milliseconds (a number or a Date), or undefined. */
function mtimeOption(options) {
	let { mtime } = options;
	if (mtime instanceof Date) mtime = mtime.getTime();
	if (mtime !== undefined && typeof mtime !== "number") throw invalidType("options.mtime", "a number or a Date", mtime);
	return mtime;
}

/**
 * The listing entry pi shows for a session file (`buildSessionInfo`), read as it is, also
 * when pi cannot open it: `null` when pi leaves the file out of its lists.
 */
function info(pathOrBuffer, options) {
	const o = optionsObject(options);
	const pi = piOption(o);
	const mtime = mtimeOption(o);
	const dialect = dialectOption(o);
	if (typeof pathOrBuffer === "string") return JSON.parse(native.infoPath(pathOrBuffer, pi, mtime, dialect));
	return JSON.parse(native.infoBuffer(bufferOf(pathOrBuffer), pi, mtime, dialect));
}

/**
 * The validator's report of files and directories (walked for *.jsonl; pi's session
 * directory when `paths` is an empty array): what `pi-session validate --format json` prints.
 */
function validate(paths, options) {
	const list = pathList(paths);
	const o = optionsObject(options);
	const report = native.validateJson(
		list,
		piOption(o),
		optionalBoolean("options.strict", o.strict),
		optionalBoolean("options.schemaOnly", o.schemaOnly),
		optionalBoolean("options.follow", o.follow),
		optionalBoolean("options.includeArchived", o.includeArchived),
		dialectOption(o),
		optionalString("options.blobs", o.blobs),
	);
	return JSON.parse(report);
}

/** `paths` as a list of path strings; standard input ("-") is refused. */
function pathList(paths) {
	const list = typeof paths === "string" ? [paths] : paths;
	if (!Array.isArray(list)) throw invalidType("paths", "a string or an array of strings", paths);
	list.forEach((p, i) => {
		checkString(`paths[${i}]`, p);
		if (p === "-") throw coded(TypeError, "ERR_INVALID_ARG_VALUE", 'standard input ("-") is not read from Node: give a path');
	});
	return list;
}

/** A date option as the addon takes it: `YYYY-MM-DD`, an ISO 8601 time, or a Date. */
function dateOption(name, value) {
	if (value === undefined) return undefined;
	if (value instanceof Date) {
		if (Number.isNaN(value.getTime())) throw coded(RangeError, "ERR_INVALID_ARG_VALUE", `${name} is an invalid Date`);
		return value.toISOString();
	}
	return checkString(name, value);
}

/**
 * Tokens, cost and message counts of files and directories (walked for *.jsonl; pi's session
 * directory when `paths` is an empty array), grouped, history copied into forked and branched
 * sessions counted once: what `pi-session stats --format json` prints.
 */
function stats(paths, options) {
	const list = pathList(paths);
	const o = optionsObject(options);
	const report = native.statsJson(
		list,
		piOption(o),
		optionalString("options.by", o.by),
		dateOption("options.since", o.since),
		dateOption("options.until", o.until),
		optionalBoolean("options.dedupe", o.dedupe),
		optionalBoolean("options.follow", o.follow),
		optionalBoolean("options.includeArchived", o.includeArchived),
		dialectOption(o),
	);
	return JSON.parse(report);
}

/** The options `redact` and `redactBytes` share, checked, in the addon's order. */
function redactionOptions(o) {
	const strings = (name, value) => {
		if (value === undefined) return [];
		if (!Array.isArray(value)) throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `${name} must be an array of strings`);
		return value.map((v, i) => checkString(`${name}[${i}]`, v));
	};
	let key;
	if (o.key !== undefined) {
		if (typeof o.key === "string") key = Buffer.from(o.key, "utf8");
		else if (o.key instanceof Uint8Array) key = Buffer.from(o.key);
		else throw coded(TypeError, "ERR_INVALID_ARG_TYPE", "options.key must be a Buffer, a Uint8Array or a string");
	}
	return [
		strings("options.secrets", o.secrets),
		strings("options.secretsFrom", o.secretsFrom),
		key,
		[
			optionalBoolean("options.aggressive", o.aggressive) ?? false,
			optionalBoolean("options.stripSignatures", o.stripSignatures) ?? false,
			optionalBoolean("options.stripImages", o.stripImages) ?? false,
		],
	];
}

/**
 * The session's secrets replaced by `[REDACTED:rule:h8]`, the result still a session pi loads
 * and resumes: written to `options.out` (atomically, never over a file unless `options.force`),
 * or, without it, only reported. The report is `pi-session redact --format json`'s for a file.
 */
function redact(path, options) {
	const o = optionsObject(options);
	const [secrets, secretsFrom, key, flags] = redactionOptions(o);
	return JSON.parse(
		native.redactJson(
			checkString("path", path),
			optionalString("options.out", o.out),
			optionalBoolean("options.force", o.force),
			secrets,
			secretsFrom,
			key,
			flags,
		),
	);
}

/** `redact` of a session's bytes, in memory: `{ data, report }`. */
function redactBytes(data, options) {
	if (!(data instanceof Uint8Array)) throw coded(TypeError, "ERR_INVALID_ARG_TYPE", "data must be a Buffer or a Uint8Array");
	const o = optionsObject(options);
	const [secrets, secretsFrom, key, flags] = redactionOptions(o);
	const [out, report] = native.redactBytes(Buffer.from(data.buffer, data.byteOffset, data.byteLength), secrets, secretsFrom, key, flags);
	return { data: out, report: JSON.parse(report) };
}

/** A session being written as pi writes it (pi's SessionManager), safely. */
class SessionWriter {
	/** @internal */
	constructor(token, handle) {
		if (token !== NATIVE) {
			throw coded(TypeError, "ERR_ILLEGAL_CONSTRUCTOR", "use SessionWriter.create, open, inMemory or forkFrom");
		}
		this[NATIVE] = handle;
	}

	/** A new session of `cwd` (pi's `SessionManager.create`), written at its first conversation. */
	static create(cwd, options) {
		const o = optionsObject(options);
		return new SessionWriter(
			NATIVE,
			native.writerCreate(
				checkString("cwd", cwd),
				optionalString("options.sessionDir", o.sessionDir),
				piOption(o),
				optionalString("options.id", o.id),
				optionalBoolean("options.fsync", o.fsync),
			),
		);
	}

	/** Appends to the session at `path` (pi's `SessionManager.open`). */
	static open(path, options) {
		const o = optionsObject(options);
		return new SessionWriter(
			NATIVE,
			native.writerOpen(checkString("path", path), piOption(o), optionalBoolean("options.fsync", o.fsync)),
		);
	}

	/** A session that is never written (pi's `SessionManager.inMemory`). */
	static inMemory(cwd, options) {
		const o = optionsObject(options);
		return new SessionWriter(
			NATIVE,
			native.writerInMemory(checkString("cwd", cwd ?? process.cwd()), piOption(o), optionalString("options.id", o.id)),
		);
	}

	/** A copy of the session at `source` as a new session of `cwd` (pi's `SessionManager.forkFrom`). */
	static forkFrom(source, cwd, options) {
		const o = optionsObject(options);
		return new SessionWriter(
			NATIVE,
			native.writerForkFrom(
				checkString("source", source),
				checkString("cwd", cwd),
				optionalString("options.sessionDir", o.sessionDir),
				piOption(o),
				optionalString("options.id", o.id),
				optionalBoolean("options.fsync", o.fsync),
			),
		);
	}

	/** Appends a whole entry; `id`, `parentId` and `timestamp` are filled in when absent. Returns its id. */
	append(entry) {
		if (entry === null || typeof entry !== "object" || Array.isArray(entry)) throw invalidType("entry", "an object", entry);
		return this[NATIVE].appendJson(JSON.stringify(entry));
	}

	/** Appends a message entry (pi's `appendMessage`). Returns its id. */
	appendMessage(message) {
		if (message === null || typeof message !== "object" || Array.isArray(message)) {
			throw invalidType("message", "an object", message);
		}
		return this[NATIVE].appendMessageJson(JSON.stringify(message));
	}

	/**
	 * The path to `leafId` as a session of its own (pi's `createBranchedSession`); the writer
	 * continues in it. Returns its path (`null` in memory, or until it is written).
	 */
	fork(leafId, options) {
		const o = optionsObject(options);
		return this[NATIVE].fork(checkString("leafId", leafId), optionalString("options.out", o.out)) ?? null;
	}

	/** Makes `id` the leaf: the next entry is its child. */
	branch(id) {
		this[NATIVE].branch(checkString("id", id));
	}

	/** Clears the leaf: the next entry is a new root. */
	resetLeaf() {
		this[NATIVE].resetLeaf();
	}

	/** Writes the file now (pi waits for the first conversation). */
	writeNow() {
		this[NATIVE].writeNow();
	}

	/** Every line the writer holds, as the file holds them. */
	toJsonl() {
		return this[NATIVE].toJsonl().toString("utf8");
	}

	/** The messages pi would send to the model for the current leaf. */
	context() {
		return JSON.parse(this[NATIVE].contextJson());
	}

	/** The session read back with the reader of the same pi. */
	session() {
		return new Session(NATIVE, this[NATIVE].read());
	}

	get sessionId() {
		return this[NATIVE].sessionId;
	}

	get cwd() {
		return this[NATIVE].cwd;
	}

	get path() {
		return this[NATIVE].path ?? null;
	}

	get leafId() {
		return this[NATIVE].leafId ?? null;
	}

	get isWritten() {
		return this[NATIVE].isWritten;
	}

	get entryCount() {
		return this[NATIVE].entryCount;
	}

	get pi() {
		return this[NATIVE].pi;
	}
}

// ---- the drop-in for pi's reader (session-manager.js) ----------------------------------------

/** pi's TypeError, from the addon's `type-error`. */
function piTypeErrors(run) {
	try {
		return run();
	} catch (error) {
		if (error && error.code === "type-error") throw coded(TypeError, error.code, error.message);
		throw error;
	}
}

/**
 * pi's `loadEntriesFromFile(path)`: every value of the file, header first (`[]` for a missing
 * or empty file and for one without a session header), not migrated.
 */
function loadEntriesFromFile(filePath, options) {
	const pi = piOption(optionsObject(options));
	return piTypeErrors(() => JSON.parse(native.loadEntriesJson(checkString("filePath", filePath), pi)));
}

/** The header the entries of `buildSessionContext` are loaded under: version 3, no migration. */
const CONTEXT_HEADER = JSON.stringify({
	type: "session",
	version: 3,
	id: "pi-session-node",
	timestamp: "1970-01-01T00:00:00.000Z",
	cwd: "",
});

/**
 * pi's `buildSessionContext(entries, leafId)`: `{ messages, thinkingLevel, model }` for the
 * path to `leafId` (`undefined` or not found: the last entry; `null`: no entry).
 */
function buildSessionContext(entries, leafId, options) {
	if (!Array.isArray(entries)) throw invalidType("entries", "an array", entries);
	const pi = piOption(optionsObject(options));
	const lines = [CONTEXT_HEADER];
	for (const entry of entries) lines.push(JSON.stringify(entry));
	// pi: `null` is no path; any other falsy leafId is the last entry; a truthy one is looked
	// up in byId, by Map key. It crosses as JSON text: an object, array or any other value
	// JSON cannot name is equal to no id (as in pi, but for the very object an entry holds).
	let leaf;
	if (leafId === undefined) leaf = undefined;
	else if (leafId === null || typeof leafId === "string" || typeof leafId === "boolean") leaf = JSON.stringify(leafId);
	else if (typeof leafId === "number") leaf = Number.isFinite(leafId) ? JSON.stringify(leafId) : "0";
	else leaf = "{}";
	return piTypeErrors(() => JSON.parse(native.buildContextJson(lines.join("\n"), leaf, pi)));
}

module.exports = {
	open,
	info,
	validate,
	stats,
	redact,
	redactBytes,
	Session,
	SessionWriter,
	loadEntriesFromFile,
	buildSessionContext,
	piVersions: native.piVersions(),
	version: native.toolkitVersion(),
	__panicForTest: native.__panicForTest,
};
