// Every export of the package, used as its types say (`npm run typecheck`: tsc --noEmit).
import {
	buildSessionContext,
	info,
	loadEntriesFromFile,
	open,
	piVersions,
	SessionWriter,
	stats,
	validate,
	version,
	type Context,
	type ErrorCode,
	type Json,
	type Message,
	type OmpContext,
	type OmpSession,
	type OmpSessionInfo,
	type PiSessionError,
	type Session,
	type SessionInfo,
	type StatsReport,
	type TreeNode,
	type ValidateReport,
} from "../index.js";

declare function log(...values: unknown[]): void;

// Read a session as pi 0.87.1 reads it, and ask it what pi would compute.
const session: Session = open("session.jsonl", { pi: "0.87" });
const context: Context = session.context();
const onBranch: Context = session.context({ leaf: "a1b2c3d4" });
const llm: Message[] = session.llm();
const tree: TreeNode[] = session.tree();
const listing: SessionInfo | null = session.info({ mtime: new Date(0) });
const entries: Json[] = session.entries();
const typed: Json[] = session.entries({ typed: true });
const header = session.header;
const leaf: Json | undefined = session.leafId;
log(context.messages.length, onBranch.thinkingLevel, llm[0]?.role, tree.length, listing?.firstMessage);
log(entries.length, typed.length, header.id, leaf, session.pi, session.version.migrated, session.dropped.length);

// Bytes instead of a path; v1 ids numbered; the listing of a file pi cannot open.
const fromBytes = open(new TextEncoder().encode("{}"), { pi: "1.5" });
const numbered = open("old-v1.jsonl", { ids: "sequential" });
const entry: SessionInfo | null = info("session.jsonl", { pi: "0.73", mtime: 946684800000 });
log(fromBytes.leafId, numbered.header.version, entry?.modified);

// An oh-my-pi session, read as omp reads it (its images from a blob store); or any file in its
// own dialect, narrowed by `dialect`.
const ompSession: OmpSession = open("omp.jsonl", { dialect: "omp", blobs: "/home/me/.omp/agent/blobs" });
const ompContext: OmpContext = ompSession.context();
const ompListing: OmpSessionInfo | null = info("omp.jsonl", { dialect: "omp" });
const either = open("any.jsonl", { dialect: "auto" });
if (either.dialect === "omp") log(either.context().models.default);
else log(either.context().model);
log(ompContext.models, ompListing?.status, ompSession.tree().length, validate("omp.jsonl", { dialect: "omp" }).dialect);
log(stats(["sessions/"], { dialect: "auto" }).groups[0]?.dialect);

// The validator's report, as `pi-session validate --format json` prints it.
const report: ValidateReport = validate(["session.jsonl", "sessions/"], { pi: "0.73", strict: true });
for (const file of report.files) {
	for (const d of file.diagnostics) log(file.path, d.code, d.severity, d.pi, d.location?.line, d.message);
	log(file.verdict?.piLoadable, file.stats?.entries, file.readError);
}
log(report.summary.invalid, validate("one.jsonl").verdict);

// Tokens and cost per model for March, copied history counted once.
const usage: StatsReport = stats(["sessions/"], { by: "model", since: "2026-03-01", until: new Date("2026-04-01") });
for (const group of usage.groups) log(group.name, group.messages, group.usage.totalTokens, group.usage.cost);
log(usage.total.usage.cost, usage.copies.messages, usage.errors.map((e) => e.path), stats("one.jsonl").groups[0]?.pi?.cost);

// Writing as pi writes.
const writer = SessionWriter.create("/work/project", { sessionDir: "/tmp/sessions", pi: "1.5" });
const user = writer.appendMessage({ role: "user", content: "Fix the build", timestamp: Date.now() });
writer.append({ type: "session_info", name: "build fix" });
const forked: string | null = writer.fork(user, { out: "/tmp/fork.jsonl" });
writer.branch(user);
writer.resetLeaf();
writer.writeNow();
const text: string = writer.toJsonl();
const messages: Message[] = writer.context();
log(forked, text.length, messages.length, writer.session().tree().length);
log(writer.sessionId, writer.cwd, writer.path, writer.leafId, writer.isWritten, writer.entryCount, writer.pi);
const reopened = SessionWriter.open("/tmp/sessions/x.jsonl", { fsync: true });
const memory = SessionWriter.inMemory("/work", { id: "s1" });
const copy = SessionWriter.forkFrom("/tmp/sessions/x.jsonl", "/elsewhere", { sessionDir: "/tmp/other" });
log(reopened.entryCount, memory.path, copy.path);

// The drop-in for pi's reader.
const values: Json[] = loadEntriesFromFile("session.jsonl", { pi: "0.73" });
const rebuilt: Context = buildSessionContext(values.slice(1), undefined, { pi: "0.73" });
const none: Context = buildSessionContext(values, null);
log(rebuilt.model?.provider, none.messages.length, piVersions, version);

// Errors carry a stable code.
try {
	open("missing.jsonl");
} catch (error) {
	const code: ErrorCode = (error as PiSessionError).code;
	if (code === "not-found" || code === "PS0102") log("not a session");
}

// What the types refuse.
// @ts-expect-error a path or bytes, not a number
open(42);
// @ts-expect-error no such pi
open("session.jsonl", { pi: "2.0" });
// @ts-expect-error the leaf is an id
session.context({ leaf: 5 });
// @ts-expect-error a message has a role
writer.appendMessage({ content: "no role" });
