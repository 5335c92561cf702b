"""The pi session toolkit: read, validate, write and query pi's JSONL session files (and
oh-my-pi's, docs/dialects.md)."""

from datetime import date, datetime
from os import PathLike
from pathlib import Path
from typing import Any, Dict, Iterable, List, Literal, Optional, Union, final

import pyarrow  # type: ignore[import-untyped]
from typing_extensions import NotRequired, TypedDict

__version__: str

StrPath = Union[str, "PathLike[str]"]
"""A path: a string or an `os.PathLike`."""

Paths = Union[StrPath, Iterable[StrPath]]
"""One path or several; a directory stands for every `*.jsonl` file under it."""

Pi = Literal["0.73", "0.87", "1.5", "0.73.1", "0.87.1", "1.5.2"]
"""Whose rules to follow: pi 0.73.1, 0.87.1 or 1.5.2 (current pi, the default)."""

Dialect = Literal["pi", "omp"]
"""Whose format a file is in: pi's, or oh-my-pi's (`omp`, the fork of pi; docs/dialects.md)."""

DialectOrAuto = Literal["pi", "omp", "auto"]
"""A dialect, or `"auto"`: the file's own."""

JSON = Any
"""A JSON value as `json.loads` makes it."""

class PiSessionError(Exception):
    """A session that cannot be read or written as asked."""

    code: str
    """Why: the validator's diagnostic code where the catalogue names the failure
    (`PS0101` no header, `PS0102` not a session header, `PS0213` a parent cycle, `PS0214` an
    entry that is its own parent), otherwise the kind of error (`not-found`, `not-a-file`,
    `is-a-directory`, `permission-denied`, `io`, `entry-not-typed`, `wrong-dialect` (an oh-my-pi
    file with its title slot, read with `dialect="pi"`), `omp-unsupported` (what is not
    reproduced of omp's behaviour yet: `llm()` of an omp session, some compactions),
    `omp-tree-cycle`, `omp-tree-too-large` (an omp tree omp would never finish), `locked`,
    `read-only`, `bad-entry`, `bad-message`, `entry-not-found`, …)."""

class PiSessionWarning(UserWarning):
    """What `validate()` and `tables()` say as they go: a file a directory walk left (a FIFO
    named `*.jsonl`, an archive), a directory without session files, a file `tables()`
    skipped (not a session, or unreadable; the others are exported)."""

class Context(TypedDict):
    """pi's `buildSessionContext`: what pi sends to the model; for an omp session, omp's, with
    `models` by role instead of `model` and omp's own settings."""

    messages: List[Dict[str, JSON]]
    thinkingLevel: NotRequired[JSON]
    model: NotRequired[Optional[Dict[str, JSON]]]
    """pi's; not in omp's context."""
    models: NotRequired[Dict[str, str]]
    """omp's: `provider/model` by role (`default`, …)."""
    configuredThinkingLevel: NotRequired[str]
    serviceTier: NotRequired[JSON]
    injectedTtsrRules: NotRequired[List[str]]
    mode: NotRequired[str]
    modeData: NotRequired[JSON]

class TreeNode(TypedDict):
    """A node of pi's `getTree()` (or omp's, where an entry without an id is a node without
    one)."""

    id: NotRequired[JSON]
    type: str
    label: NotRequired[str]
    children: List["TreeNode"]

class SessionInfo(TypedDict):
    """The listing entry pi shows for a session (`buildSessionInfo`), or omp's for an omp
    session (`scanSessionFile`: `title`, `assistantTurns`, `size` and `status`, no `name`)."""

    id: str
    cwd: str
    name: NotRequired[str]
    title: NotRequired[str]
    parentSessionPath: NotRequired[str]
    created: str
    modified: str
    messageCount: int
    assistantTurns: NotRequired[int]
    size: NotRequired[int]
    firstMessage: str
    allMessagesText: str
    status: NotRequired[str]

Mtime = Union[int, float, datetime]
"""A file's modification time: seconds since the epoch (as `os.stat().st_mtime`) or an aware
`datetime`."""

class Verdict(TypedDict):
    strict: bool
    piLoadable: bool
    piResumes: bool

class FileReport(TypedDict):
    """What the validator says of one file."""

    path: str
    valid: bool
    readError: NotRequired[str]
    verdict: NotRequired[Verdict]
    stats: NotRequired[Dict[str, JSON]]
    diagnostics: List[Dict[str, JSON]]

class Summary(TypedDict):
    files: int
    valid: int
    invalid: int
    unreadable: int
    errors: int
    warnings: int
    infos: int

class ValidateReport(TypedDict):
    """The report of `pi-session validate --format json` (schemas/validate-report.schema.json)."""

    formatVersion: int
    tool: Dict[str, str]
    pi: str
    dialect: NotRequired[Dialect]
    """`"omp"` when the files were checked against omp's format (absent for pi's)."""
    verdict: Literal["pi-loadable", "strict", "schema-only"]
    files: List[FileReport]
    summary: Summary

@final
class Session:
    """A session file loaded with one pi's rules (`open`), in its dialect."""

    @property
    def pi(self) -> str:
        """Whose rules it was loaded with: `"0.73"`, `"0.87"` or `"1.5"`."""
    @property
    def dialect(self) -> Dialect:
        """The dialect it was read in: `"pi"`, or `"omp"` (its answers are then omp's)."""
    @property
    def path(self) -> Optional[Path]:
        """The file (`None` for a session loaded from bytes by `loads`)."""
    def context(self, leaf: Optional[str] = None) -> Context:
        """pi's `buildSessionContext` for `leaf` (default: the leaf pi resumes); omp's for an
        omp session, its images put back from the blob store. What it skips or leaves in place
        (a `message` entry without a message, an image whose blob is missing) is a
        `PiSessionWarning` (`LINE: warning: …`, as `pi-session context` says it)."""
    def llm(self, leaf: Optional[str] = None) -> List[Dict[str, JSON]]:
        """The messages pi sends to the model (`convertToLlm` of the context's). An omp
        session raises `PiSessionError` (`omp-unsupported`): omp's is not reproduced yet."""
    def tree(self) -> List[TreeNode]:
        """pi's `getTree()` (omp's for an omp session)."""
    def info(self, *, mtime: Optional[Mtime] = None) -> Optional[SessionInfo]:
        """The listing entry (omp's for an omp session), or `None` when the program leaves
        the file out of its lists; `mtime`: the modification time to list (default: the
        file's; the epoch for bytes)."""
    def entries(self) -> List[Dict[str, JSON]]:
        """The entries in file order as the typed model reads them (migrated when pi would
        migrate the file)."""

def open(
    path: StrPath,
    pi: Pi = "1.5",
    *,
    sequential_ids: bool = False,
    dialect: Optional[DialectOrAuto] = None,
    blobs: Optional[StrPath] = None,
) -> Session:
    """Reads and loads a session file. Raises `PiSessionError`. `sequential_ids`: a v1
    file's entries get the ids `00000001`, `00000002`, … instead of random ones. `dialect`:
    `"pi"` (`None`, the default: a file with omp's title slot is `wrong-dialect`), `"omp"`, or
    `"auto"` for the file's own (omp's title slot, header members or entry types, or a path
    in omp's store). `blobs`: omp's blob store, where an
    omp session's image references are looked up (default: omp's own when it exists)."""

def loads(
    data: bytes,
    pi: Pi = "1.5",
    *,
    sequential_ids: bool = False,
    dialect: Optional[DialectOrAuto] = None,
    blobs: Optional[StrPath] = None,
) -> Session:
    """Loads a session from bytes, as `open` loads a file's. Raises `PiSessionError`."""

def info(
    path: StrPath,
    pi: Pi = "1.5",
    *,
    mtime: Optional[Mtime] = None,
    dialect: Optional[DialectOrAuto] = None,
) -> Optional[SessionInfo]:
    """The listing entry pi shows for a file, read as pi's session list reads it (a file
    `open` refuses may still be listed), or `None` when pi leaves it out; omp's
    (`scanSessionFile`) with `dialect="omp"`, or `"auto"` for a file in omp's dialect (told by
    its first lines, as `pi-session info` tells it); pi's by default. `mtime`: the modification time to list (default: the
    file's)."""

def validate(
    paths: Optional[Paths] = None,
    *,
    pi: Pi = "1.5",
    strict: bool = False,
    schema_only: bool = False,
    follow: bool = False,
    include_archived: bool = False,
    dialect: Dialect = "pi",
    blobs: Optional[StrPath] = None,
) -> ValidateReport:
    """Validates session files (`None`: pi's session directory); a file that cannot be read
    is in the report with its `readError`. `dialect="omp"`: checked against omp's format
    (its title slot, header members and entry types known, what omp trips on checked), image
    references looked up in `blobs` (default: omp's own store when it exists)."""

GroupBy = Literal["session", "project", "model", "provider", "day", "month"]
"""What a group of `stats` adds up."""

class StatsUsage(TypedDict):
    """Tokens and cost (`None` for a sum that is not a number)."""

    input: Optional[float]
    output: Optional[float]
    cacheRead: Optional[float]
    cacheWrite: Optional[float]
    totalTokens: Optional[float]
    cost: Optional[float]

class Tally(TypedDict):
    """What a group (or the total, or the copies left out) adds up to."""

    sessions: int
    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    messages: int
    compactions: int
    branchSummaries: int
    usageEntries: int
    usage: StatsUsage
    messageUsage: StatsUsage
    summaryUsage: StatsUsage
    usageEntryUsage: StatsUsage
    unreadable: int

class PiSessionStats(TypedDict):
    """What pi's `/session` (`getSessionStats()`) shows for one file, every copy included."""

    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    totalMessages: int
    tokens: Dict[str, Optional[float]]
    cost: Optional[float]

class OmpSessionStats(TypedDict):
    """What oh-my-pi's `/session` (`getSessionStats()`) shows for an omp file: its resumed
    context, subagents' usage and the `model_usage` entries of the active window."""

    userMessages: int
    assistantMessages: int
    toolCalls: int
    toolResults: int
    totalMessages: int
    tokens: Dict[str, Optional[float]]
    cost: Optional[float]
    premiumRequests: Optional[float]
    credits: NotRequired[Dict[str, Optional[float]]]
    routedModels: NotRequired[Dict[str, int]]

class StatsGroup(Tally):
    """One group: a path, a cwd, `provider/model`, a provider, a day or a month (`-`: none);
    with `by="session"` also the header's `id`, `cwd`, `created`, the file's `dialect` and its
    program's own numbers: pi's (`pi`), or oh-my-pi's (`omp`; `ompError` where they are not
    reproduced for the file)."""

    name: str
    id: NotRequired[str]
    cwd: NotRequired[str]
    created: NotRequired[str]
    dialect: NotRequired[str]
    pi: NotRequired[PiSessionStats]
    piUnreadable: NotRequired[int]
    omp: NotRequired[OmpSessionStats]
    ompUnreadable: NotRequired[int]
    ompError: NotRequired[str]

class StatsError(TypedDict):
    path: str
    error: str

class StatsReport(TypedDict):
    """The report of `pi-session stats --format json`."""

    formatVersion: int
    by: GroupBy
    dedupe: bool
    groups: List[StatsGroup]
    total: Tally
    copies: Tally
    forkedSessions: int
    errors: List[StatsError]

def stats(
    paths: Optional[Paths] = None,
    by: GroupBy = "session",
    *,
    since: Union[str, date, datetime, None] = None,
    until: Union[str, date, datetime, None] = None,
    dedupe: bool = True,
    pi: Pi = "1.5",
    follow: bool = False,
    include_archived: bool = False,
    dialect: Optional[DialectOrAuto] = None,
) -> StatsReport:
    """Tokens, cost and message counts of session files (`None`: pi's session directory, or
    omp's with `dialect="omp"`), each read in its own dialect (`None`, `"auto"`; `"pi"` or
    `"omp"`: all as that one's), with its program's own numbers (`pi`, or `omp`),
    grouped `by`, history copied into forked and branched sessions counted once (unless
    `dedupe=False`); `since`/`until`: a `YYYY-MM-DD` day, `"today"` or `"yesterday"` (UTC;
    `until` counts it whole), an ISO 8601 time, a `date` or an aware `datetime`. A file that
    is not a session is in `errors` (and a `PiSessionWarning`). `pandas.json_normalize(report["groups"])` is a frame
    of the rows."""

class RedactRuleCount(TypedDict):
    redacted: int
    candidates: int

class RedactFinding(TypedDict):
    """One secret found: where (never what)."""

    line: int
    entryId: Optional[str]
    path: str
    rule: str
    candidate: bool
    redacted: bool

class RedactReport(TypedDict):
    """What `redact()` found in a file, as `pi-session redact --format json` reports it."""

    lines: int
    linesChanged: int
    redacted: int
    candidatesLeft: int
    rules: Dict[str, RedactRuleCount]
    findings: List[RedactFinding]

def redact(
    path: StrPath,
    out: Optional[StrPath] = None,
    *,
    force: bool = False,
    secrets: Iterable[str] = (),
    secrets_from: Iterable[StrPath] = (),
    key: Optional[bytes] = None,
    aggressive: bool = False,
    strip_signatures: bool = False,
    strip_images: bool = False,
) -> RedactReport:
    """The session's secrets (gitleaks' rules and ours, `secrets`, the values of the `.env`
    files `secrets_from`; with `aggressive`, random-looking tokens) replaced by
    `[REDACTED:rule:h8]`, `h8` keyed by `key` (at least 16 bytes; default: random): the
    result still a session pi loads and resumes. Written to `out` (atomically, never over a
    file unless `force`); without `out` nothing is written. The report never holds a secret."""

def redact_bytes(
    data: bytes,
    *,
    secrets: Iterable[str] = (),
    secrets_from: Iterable[StrPath] = (),
    key: Optional[bytes] = None,
    aggressive: bool = False,
    strip_signatures: bool = False,
    strip_images: bool = False,
) -> "tuple[bytes, RedactReport]":
    """`redact()` of a session's bytes, in memory: the redacted bytes and the report."""

def tables(
    paths: Optional[Paths] = None,
    dedupe: bool = True,
    *,
    pi: Pi = "1.5",
    validate: bool = False,
    follow: bool = False,
    include_archived: bool = False,
) -> Dict[str, pyarrow.Table]:
    """The six tables of `pi-session export --format parquet` (`sessions`, `entries`,
    `messages`, `tool_calls`, `compactions`, `usage_entries`) as `pyarrow.Table`s; files that
    are not sessions are skipped with a `PiSessionWarning`."""

@final
class SessionWriter:
    """pi's `SessionManager`: the lines pi writes, appended safely."""

    @staticmethod
    def create(
        cwd: str,
        session_dir: Optional[StrPath] = None,
        *,
        pi: Pi = "1.5",
        session_id: Optional[str] = None,
        fsync: bool = False,
    ) -> SessionWriter:
        """A new session of `cwd`, written at its first conversation."""
    @staticmethod
    def in_memory(cwd: str, *, pi: Pi = "1.5", session_id: Optional[str] = None) -> SessionWriter:
        """A session never written to disk."""
    @staticmethod
    def open(path: StrPath, *, pi: Pi = "1.5", fsync: bool = False) -> SessionWriter:
        """Opens a session file to append to (a missing file becomes a new session)."""
    @staticmethod
    def fork(
        source: StrPath,
        cwd: str,
        session_dir: Optional[StrPath] = None,
        *,
        pi: Pi = "1.5",
        session_id: Optional[str] = None,
        fsync: bool = False,
    ) -> SessionWriter:
        """Copies the session at `source` into a new session of `cwd` (pi's `forkFrom`)."""
    def append(self, entry: Dict[str, JSON]) -> str:
        """Appends a whole entry (`id`, `parentId`, `timestamp` filled in when absent); its id."""
    def append_message(self, message: Dict[str, JSON]) -> str:
        """Appends a message as a `message` entry; its id."""
    def branch(self, entry_id: str) -> None:
        """Continues from `entry_id`."""
    def branched_session(self, leaf_id: str, path: Optional[StrPath] = None) -> Optional[Path]:
        """A new session holding the path to `leaf_id`; the writer continues in it."""
    def write_now(self) -> None:
        """Writes the file now, before the conversation starts."""
    def to_jsonl(self) -> bytes:
        """The session's bytes as pi writes them."""
    @property
    def path(self) -> Optional[Path]: ...
    @property
    def session_id(self) -> str: ...
    @property
    def cwd(self) -> str: ...
    @property
    def leaf_id(self) -> Optional[str]: ...
    @property
    def entry_count(self) -> int: ...
    @property
    def is_written(self) -> bool: ...
    @property
    def pi(self) -> str: ...
