//! The catalogue of diagnostics: one stable code per problem, with its severity, a short
//! name, what pi does with such a file and how to fix it.
//!
//! Codes never change meaning and are never reused. They are grouped by where the problem
//! lives: `PS00xx` the bytes and lines of the file, `PS01xx` the header and version,
//! `PS02xx` entries and the tree they form, `PS03xx` the file as a whole and its place on
//! disk. `docs/diagnostics.md` documents each one with a minimal example, generated from this
//! table and the cases of `conformance/cases/validate/` (`cargo xtask diagnostics`).

use serde::Serialize;
use std::fmt;

/// How serious a diagnostic is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the file follows the format.
    Info,
    /// Legal but likely a mistake, or something pi handles in a surprising way.
    Warning,
    /// The file does not follow the format: the strict verdict fails.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What pi does because of the problem, from harmless to destructive.
///
/// The *pi-loadable* verdict fails on [`PiEffect::Dropped`] and everything after it: pi would
/// lose, rewrite or refuse part of the file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PiEffect {
    /// pi reads the file as written.
    None,
    /// pi keeps the data but ignores it (an unknown entry type, a second header, …).
    Ignored,
    /// pi keeps the file but what it builds from it differs from what the writer meant
    /// (replacement characters, a shorter context, `null` timestamps, …).
    Altered,
    /// pi loads the entry but never shows it: its tree (`/tree`) and every context leave it
    /// out (the earlier of two different entries that share an id).
    Hidden,
    /// pi drops the line when loading; the next rewrite of the file loses it for good.
    Dropped,
    /// pi migrates the file and rewrites it in place (no backup, not atomic).
    Rewritten,
    /// pi overwrites the whole file with a new, empty session.
    Truncated,
    /// pi throws while loading or building the context.
    Crash,
    /// pi loops forever while building the context.
    Hang,
    /// pi cannot read the file at all.
    Unreadable,
}

impl PiEffect {
    /// Whether pi hides, loses, rewrites or refuses data because of this: whether the file is
    /// no longer *pi-loadable* (pi does not read everything in it).
    pub fn breaks_loading(self) -> bool {
        self >= PiEffect::Hidden
    }
}

/// Declares [`Code`] and its catalogue entries.
macro_rules! catalogue {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident = $code:literal, $name:literal, $severity:ident, $effect:ident,
            title: $title:literal,
            help: $help:literal;
    )+) => {
        /// A diagnostic code (`PS0001`, …). See the module docs for the numbering.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The catalogue entry of the code.
            pub fn info(self) -> &'static CodeInfo {
                match self {
                    $(Code::$variant => &CodeInfo {
                        code: $code,
                        name: $name,
                        severity: Severity::$severity,
                        pi: PiEffect::$effect,
                        title: $title,
                        help: $help,
                        description: concat!($($doc, "\n"),+),
                    },)+
                }
            }
        }
    };
}

/// What the catalogue says about a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// `PS0001`, …
    pub code: &'static str,
    /// A short kebab-case name (`invalid-json`).
    pub name: &'static str,
    /// The usual severity (a diagnostic may differ where the context makes it milder).
    pub severity: Severity,
    /// What pi usually does (a diagnostic says what it does in the file at hand).
    pub pi: PiEffect,
    /// One line: what is wrong.
    pub title: &'static str,
    /// How to fix it.
    pub help: &'static str,
    /// The longer explanation (the doc comment of the variant).
    pub description: &'static str,
}

impl Code {
    /// The code as written in reports (`PS0001`).
    pub fn as_str(self) -> &'static str {
        self.info().code
    }

    /// The code for `PS0001`-style text.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        schemars::json_schema!({
            "description": "A diagnostic code of the catalogue (docs/diagnostics.md).",
            "type": "string",
            "enum": codes,
        })
    }
}

catalogue! {
    // ---------------------------------------------------------------- lines (PS00xx)
    /// The line is not valid JSON. pi parses every line with `JSON.parse` and silently drops
    /// the lines that fail; when it next rewrites the file (after a migration) they are gone.
    InvalidJson = "PS0001", "invalid-json", Error, Dropped,
        title: "line is not valid JSON",
        help: "write exactly one JSON value per line, serialised with a JSON library (JSON.stringify, serde_json)";
    /// The last line is cut off: it is not valid JSON and the file does not end with a
    /// newline, the mark of an interrupted write. pi drops the line, and its next append is
    /// glued onto it, so that the following record is lost too.
    TornLastLine = "PS0002", "torn-last-line", Error, Dropped,
        title: "the last line is truncated (an interrupted write)",
        help: "remove the partial record, or restore it from the writer, and end the file with a newline";
    /// A line holds valid JSON that is not an object (an array, a string, a number or a
    /// boolean). pi keeps it as an entry without an id; as the last line it leaves pi without
    /// a leaf (an empty context), and in a version-1 file pi's migration throws on it.
    NonObjectLine = "PS0003", "non-object-line", Error, Ignored,
        title: "line is JSON but not an object",
        help: "every line must be a JSON object: the header or an entry with a `type`";
    /// A line is JSON `null`. pi 0.73.1 throws a TypeError on it when it loads the file;
    /// pi 0.87.1 skips it.
    NullLine = "PS0004", "null-line", Error, Crash,
        title: "line is `null`",
        help: "remove the line";
    /// The file starts with a UTF-8 byte order mark. pi 0.73.1 strips it while loading, but
    /// `pi -c` reads the first line raw and does not recognise the header, so it never picks
    /// this session; pi 0.87.1 cannot parse the header line at all.
    ///
    /// The severity and effect depend on the pi version: with `--pi 0.73` this is a warning
    /// (pi effect `none`); with `--pi 0.87` or `--pi 1.5` (the default) it is an **error**
    /// whose pi effect is `dropped` (pi 0.87.1 and later do not read the header line, so the
    /// file is not pi-loadable). The table gives the 0.73.1 values; each diagnostic in a
    /// report carries its own.
    ByteOrderMark = "PS0005", "byte-order-mark", Warning, None,
        title: "the file starts with a byte order mark",
        help: "write UTF-8 without a BOM";
    /// The line ends with CR LF. pi parses it (CR is JSON whitespace), but rewrites the file
    /// with LF when it migrates it.
    CrlfLineEnding = "PS0006", "crlf-line-ending", Warning, None,
        title: "line ends with CR LF",
        help: "end lines with LF (`\\n`) only";
    /// A carriage return separates records inside a line. pi splits lines only on LF, so the
    /// records joined by the CR form one line that is not JSON, and pi drops all of them.
    LoneCarriageReturn = "PS0007", "lone-carriage-return", Error, Dropped,
        title: "records separated by a lone CR",
        help: "separate records with LF (`\\n`)";
    /// The line is not valid UTF-8. pi decodes the file with replacement characters (U+FFFD),
    /// so the text it sees, sends to the model and writes back differs from the file.
    InvalidUtf8 = "PS0008", "invalid-utf8", Error, Altered,
        title: "line is not valid UTF-8",
        help: "encode the file as UTF-8; escape binary data (base64) instead of writing raw bytes";
    /// A line between records is empty or only whitespace. pi skips it.
    BlankLine = "PS0009", "blank-line", Warning, Ignored,
        title: "blank line",
        help: "remove blank lines; write one record per line";
    /// A value is nested deeper than the validator's structural checks go (120 levels). pi
    /// reads it; the line is checked above that depth, but the parts below it are not, so the
    /// validator cannot vouch for the line: an error, so that `--strict` and `--schema-only`
    /// never pass a file they could not fully check. pi-loadable is not affected.
    DeepNesting = "PS0010", "deep-nesting", Error, None,
        title: "value nested too deeply to check",
        help: "nothing to fix for pi; flatten the value if other tools must read it";
    /// A number that `JSON.stringify` does not write back with the value written: beyond a
    /// double's range (`1E400` reads as Infinity and is written `null`) or with more digits
    /// than a double holds (a 30-digit integer is rounded). pi reads the changed value, and
    /// writes it when it migrates a v1/v2 file; `pi-session migrate` says so.
    NumberNotExact = "PS0011", "number-not-exact", Warning, Altered,
        title: "number cannot be read exactly",
        help: "write large integers as strings, and only numbers a double holds";
    /// A key occurs twice in one object. `JSON.parse` keeps the last value, at the place of
    /// the first key, and the earlier values are lost (for good when pi rewrites a v1/v2
    /// file; `pi-session migrate` says so).
    DuplicateKey = "PS0012", "duplicate-key", Warning, Altered,
        title: "duplicate key in an object",
        help: "write each key once per object (a JSON library does)";
    /// `--dialect omp`: text after the JSON value on a line (a second value, a stray word).
    /// oh-my-pi's JSONL parser keeps the value and skips the rest of the line; as it skipped
    /// text that is not blank, it rewrites the file when it opens it, and the text is gone.
    /// (pi drops the whole line: [`Code::InvalidJson`].)
    OmpTextAfterValue = "PS0013", "omp-text-after-value", Error, Dropped,
        title: "text after the JSON value on the line",
        help: "put each value on a line of its own, or remove the text after it";
    /// `--dialect omp`: a JSON value written over several lines. oh-my-pi's JSONL parser
    /// reads it as one entry (JSON whitespace may hold newlines), but oh-my-pi writes one
    /// value per line, and pi (and every line-by-line reader) drops each of its lines.
    OmpValueOverLines = "PS0014", "omp-value-over-lines", Warning, None,
        title: "a JSON value written over several lines",
        help: "write each value on one line (JSON.stringify without indentation)";

    // ---------------------------------------------------------------- header (PS01xx)
    /// The file holds no JSON line at all (it is empty or blank). pi treats it as a corrupt
    /// session and overwrites it with a fresh header.
    NoHeader = "PS0101", "no-header", Error, Truncated,
        title: "the file has no header (no JSON line at all)",
        help: "start the file with a header line: {\"type\":\"session\",\"version\":3,\"id\":…,\"timestamp\":…,\"cwd\":…}";
    /// The first JSON value of the file is not a session header: not an object, `type` is not
    /// `"session"`, or `id` is not a string. pi discards the whole file and overwrites it with
    /// a fresh header.
    InvalidHeader = "PS0102", "invalid-header", Error, Truncated,
        title: "the first line is not a valid session header",
        help: "make the first line {\"type\":\"session\",\"version\":3,\"id\":\"<uuid>\",\"timestamp\":\"<ISO date>\",\"cwd\":\"<dir>\"}";
    /// A header field is missing or has the wrong type (`timestamp` and `cwd` strings,
    /// `parentSession` a string when present). pi loads the file, but listings show an empty
    /// working directory or an invalid date.
    HeaderField = "PS0103", "header-field", Error, Altered,
        title: "header field missing or of the wrong type",
        help: "write the header fields pi writes: type, version, id, timestamp, cwd and optionally parentSession";
    /// A second `type: "session"` line, typically written by pi's duplicate-header bug
    /// (resuming a session that has no assistant message yet). pi keeps the line but skips it.
    DuplicateHeader = "PS0104", "duplicate-header", Error, Ignored,
        title: "more than one header line",
        help: "keep only the first header line; a session file has exactly one";
    /// The header has no `version` (or `null`) although the entries have ids, as in versions 2
    /// and 3. pi reads the file as version 1: it overwrites every entry's `id` and `parentId`
    /// with a fresh linear chain, losing the tree, and rewrites the file. (A real version-1
    /// file, without ids, is [`Code::VersionLegacy`].)
    VersionMissing = "PS0105", "version-missing", Error, Rewritten,
        title: "the header has no version, but the entries have ids",
        help: "write \"version\":3 in the header";
    /// The header's `version` is not an integer number (a string, a fraction, a boolean, …).
    /// pi compares it with JavaScript's coercions; what it then does is in the message.
    VersionNotInteger = "PS0106", "version-not-integer", Error, None,
        title: "the version is not an integer number",
        help: "write \"version\":3 (a number) in the header";
    /// The header's `version` is above 3. pi does not check it and reads the file as
    /// version 3.
    VersionFuture = "PS0107", "version-future", Error, None,
        title: "the version is newer than any pi knows",
        help: "write \"version\":3; no pi release writes a higher version";
    /// The file is version 1 (no `version`, no entry ids) or 2. pi migrates it to version 3 on
    /// open and rewrites the whole file in place, without a backup (`pi-session migrate` does
    /// the same safely).
    VersionLegacy = "PS0108", "version-legacy", Warning, Rewritten,
        title: "legacy version: pi will migrate and rewrite the file",
        help: "run `pi-session migrate --in-place --backup FILE` to migrate it first";
    /// The header line is longer than 512 bytes. `pi -c` (continue the most recent session)
    /// reads only the first 512 bytes of each file and does not recognise this one.
    HeaderTooLong = "PS0109", "header-too-long", Warning, None,
        title: "header line longer than 512 bytes",
        help: "shorten the header (a long `cwd` or `parentSession`) so that `pi -c` finds the session";
    /// The header is not on the first physical line (blank or unparseable lines come first).
    /// pi opens the file, but `pi -c` does not recognise it.
    HeaderNotFirst = "PS0110", "header-not-first", Warning, None,
        title: "the header is not the first line",
        help: "put the header on the first line of the file";
    /// The first line is oh-my-pi's title slot (`{"type":"title",…}`): the file is in
    /// oh-my-pi's dialect of the format. pi does not know it and overwrites the file with a
    /// fresh header.
    OhMyPiTitle = "PS0111", "oh-my-pi-title", Error, Truncated,
        title: "oh-my-pi title line: this is oh-my-pi's dialect, not pi's format",
        help: "check it by oh-my-pi's rules with `pi-session validate --dialect omp`, open it with oh-my-pi, or remove the title line to make it a pi session";
    /// The file is oh-my-pi's without its title slot: its header has a member only oh-my-pi
    /// writes (`title`, `additionalDirectories`, …) or entries have types only oh-my-pi writes
    /// (`mode_change`, `reset_boundary`, `model_usage`, …). pi ignores those header members,
    /// and keeps those entries in the tree but ignores them, so the conversation it resumes
    /// can differ from oh-my-pi's (a `reset_boundary` does not restart pi's context). One
    /// diagnostic per file names the sign and counts the entries of each oh-my-pi type, instead
    /// of one `unknown-entry-type` per entry (a file that starts with the title slot has
    /// [`Code::OhMyPiTitle`] instead, which counts them the same way); `pi-session validate
    /// --dialect omp` checks the file by oh-my-pi's rules.
    OhMyPiDialect = "PS0112", "oh-my-pi-dialect", Warning, Ignored,
        title: "oh-my-pi file: header members or entry types only oh-my-pi writes",
        help: "check it by oh-my-pi's rules with `pi-session validate --dialect omp`, or open it with oh-my-pi";
    /// `--dialect omp`: the first line is a `title` object that oh-my-pi does not take for its
    /// title slot (`v` is not 1, `title`, `updatedAt` or `pad` is not a string, `source` is
    /// neither `auto` nor `user`, or the line is not valid JSON). oh-my-pi then reads it as the
    /// header, which it is not, and refuses to resume the session ("the session header is
    /// missing or malformed").
    OmpTitleSlotUnread = "PS0113", "omp-title-slot-unread", Error, Unreadable,
        title: "oh-my-pi does not read this title line as its title slot",
        help: "write the slot as oh-my-pi does: `{\"type\":\"title\",\"v\":1,\"title\":…,\"updatedAt\":…,\"pad\":…}`, space-padded to 256 bytes with its newline, or remove the line";
    /// `--dialect omp`: the title slot is not 256 bytes long with its newline. oh-my-pi reads
    /// it, but changes a title by overwriting the file's first 256 bytes in place: a shorter
    /// slot then loses the start of the header (oh-my-pi can no longer resume the file), a
    /// longer one leaves the rest of the old slot on the header's line.
    OmpTitleSlotWidth = "PS0114", "omp-title-slot-width", Warning, Altered,
        title: "oh-my-pi title slot not 256 bytes long",
        help: "pad the slot's `pad` member with spaces so that the line is exactly 255 bytes plus its newline";

    // ---------------------------------------------------------------- entries (PS02xx)
    /// The entry's `type` is not one pi knows. pi keeps the entry in the tree and ignores it
    /// everywhere else.
    UnknownEntryType = "PS0201", "unknown-entry-type", Warning, Ignored,
        title: "unknown entry type",
        help: "use one of pi's entry types, or a `custom` entry for data of your own";
    /// The entry has no `type`, or it is not a string. pi keeps the entry and ignores it.
    EntryTypeMissing = "PS0202", "entry-type-missing", Error, Ignored,
        title: "entry without a string `type`",
        help: "give every entry a `type` (message, model_change, compaction, …)";
    /// A required field is missing (checked against the JSON Schema of the entry type, the
    /// message role or the content block).
    MissingField = "PS0203", "missing-field", Error, None,
        title: "required field missing",
        help: "add the field; `pi-session schema` prints the shape of every entry, role and block";
    /// A field has the wrong JSON type (checked against the JSON Schema).
    WrongType = "PS0204", "wrong-type", Error, None,
        title: "field of the wrong type",
        help: "write the field with the type the schema gives (`pi-session schema`)";
    /// A field has a value the schema does not allow (an unknown enum value, a negative count,
    /// a fraction where an integer belongs, …).
    InvalidValue = "PS0205", "invalid-value", Error, None,
        title: "field with a value the format does not allow",
        help: "use one of the values the schema lists (`pi-session schema`)";
    /// The message's `role` is not one pi knows. pi keeps the message in the context it
    /// builds, and drops it when it converts the context for the model.
    UnknownRole = "PS0206", "unknown-role", Warning, Ignored,
        title: "unknown message role",
        help: "use one of pi's roles (user, assistant, toolResult, bashExecution, custom, …)";
    /// A `message` entry whose `message` is missing or `null`. pi throws a TypeError when the
    /// entry is on the path it builds the context from, and leaves the session out of
    /// listings.
    MessageMissing = "PS0207", "message-missing", Error, Crash,
        title: "message entry without a message",
        help: "give the entry a `message` object with a `role`, or remove the entry";
    /// The entry `id` is not 8 lowercase hexadecimal characters, the form pi generates. pi
    /// accepts any string.
    IdFormat = "PS0208", "id-format", Warning, None,
        title: "id is not 8 lowercase hex characters",
        help: "generate ids like pi: the first 8 hex characters of a random UUID";
    /// The entry has no `id`, or it is not a string. pi cannot link to the entry; as the last
    /// line it leaves pi without a leaf.
    IdMissing = "PS0209", "id-missing", Error, Altered,
        title: "entry without a string id",
        help: "give every entry a unique string `id`";
    /// Two entries share an `id`. pi's index keeps the last one: children of the first attach
    /// to the second, the first is hidden from `/tree` and every context (unless both lines are
    /// byte-identical), and `/tree` can show entries twice or loop forever.
    DuplicateId = "PS0210", "duplicate-id", Error, Hidden,
        title: "duplicate entry id",
        help: "give every entry a unique id";
    /// The entry has no `parentId` key, or it is neither a string nor `null`. pi treats the
    /// entry as a root.
    ParentIdMissing = "PS0211", "parent-id-missing", Error, Altered,
        title: "entry without a parentId (string or null)",
        help: "write \"parentId\":null for a root, or the id of the parent entry";
    /// `parentId` names no entry of the file. pi treats the entry as a root: a context built
    /// through it starts there and loses everything before.
    DanglingParent = "PS0212", "dangling-parent", Error, Altered,
        title: "parentId points to no entry",
        help: "point parentId at an existing entry, or write null for a root";
    /// Entries form a parent cycle (a → b → a). pi loops forever when it builds a context
    /// through them, and `/tree` does not show them.
    ParentCycle = "PS0213", "parent-cycle", Error, Hang,
        title: "parent cycle",
        help: "break the cycle: one of the entries must have a parent outside it, or null";
    /// The entry is its own parent. pi loops forever when it builds a context through it.
    SelfParent = "PS0214", "self-parent", Error, Hang,
        title: "entry is its own parent",
        help: "point parentId at the previous entry, or write null for a root";
    /// More than one entry has no parent. This is normal in pi (a branch summary at the root,
    /// editing the first message), so it is only worth knowing.
    ExtraRoot = "PS0215", "extra-root", Info, None,
        title: "another root entry",
        help: "nothing to fix if the session was branched at its first message";
    /// A compaction's `firstKeptEntryId` is not on the path before the compaction (another
    /// branch, a later entry, no entry). pi then keeps no message from before the compaction:
    /// the context is the summary and what follows it. The compaction's own id is how pi
    /// 0.87.1 and later write "keep nothing" (`firstKeptEntryId ?? id`): not reported under
    /// their rules.
    FirstKeptNotOnPath = "PS0216", "first-kept-not-on-path", Warning, Altered,
        title: "firstKeptEntryId is not on the path before the compaction",
        help: "point firstKeptEntryId at the first entry to keep, an ancestor of the compaction";
    /// A label's `targetId` names no entry. pi stores the label but it labels nothing; pi's
    /// own writer refuses to write such a label.
    LabelTargetMissing = "PS0217", "label-target-missing", Error, Ignored,
        title: "label target does not exist",
        help: "point targetId at an existing entry, or remove the label";
    /// A branch summary's `fromId` is not what pi writes there. pi 0.73.1 writes the
    /// summary's `parentId` (the entry branched to), or `"root"` for a summary with no
    /// parent; pi 0.87.1 and later (1.5.2 too) write the leaf the branch was made from, an
    /// entry written before the summary, or `"root"` when there was none. pi ignores `fromId`
    /// when it builds the context.
    BranchSummaryFromId = "PS0218", "branch-summary-from-id", Warning, None,
        title: "branch_summary.fromId is not what pi writes there",
        help: "write the leaf the branch was made from (an entry before the summary) or \"root\"; for pi 0.73.1, the summary's parentId, or \"root\" when parentId is null";
    /// A tool result whose `toolCallId` matches no tool call of an assistant message before it
    /// on its path. Model APIs reject such a context.
    OrphanToolResult = "PS0219", "orphan-tool-result", Error, None,
        title: "tool result without a matching tool call on its path",
        help: "make the tool result a descendant of the assistant message that made the call, with the same id";
    /// A timestamp string is not in the form JavaScript's `toISOString` writes
    /// (`2026-01-01T10:00:00.000Z`). pi parses it with `new Date`, which can depend on the time
    /// zone of the machine (a date-time without an offset is local time).
    TimestampNotIso = "PS0220", "timestamp-not-iso", Warning, None,
        title: "timestamp is not in JavaScript's ISO form",
        help: "write timestamps with new Date().toISOString(): YYYY-MM-DDTHH:mm:ss.sssZ";
    /// A timestamp string cannot be parsed as a date. pi writes `null` for the timestamp of
    /// summaries and custom messages built from it, and sorts `/tree` erratically.
    TimestampInvalid = "PS0221", "timestamp-invalid", Error, Altered,
        title: "timestamp is not a date",
        help: "write timestamps with new Date().toISOString(): YYYY-MM-DDTHH:mm:ss.sssZ";
    /// Usage numbers do not add up: `totalTokens` is not the sum of `input`, `output`,
    /// `cacheRead` and `cacheWrite`, or `cost.total` is not the sum of the costs.
    UsageMismatch = "PS0222", "usage-mismatch", Warning, None,
        title: "usage totals do not add up",
        help: "write totalTokens = input + output + cacheRead + cacheWrite and cost.total = the sum of the costs";
    /// A usage count or cost is negative.
    UsageNegative = "PS0223", "usage-negative", Error, None,
        title: "negative usage count or cost",
        help: "token counts and costs are never negative";
    /// A `hookMessage` message in a version-3 file. The role was renamed `custom` in version 3;
    /// pi only renames it when it migrates a version-2 file, so here it passes through the
    /// context and is dropped before it reaches the model.
    HookMessageInV3 = "PS0224", "hook-message-in-v3", Error, Altered,
        title: "hookMessage role in a version-3 file",
        help: "write role \"custom\" (or a custom_message entry) instead";
    /// A field of the version-1 format in a version-3 file (`firstKeptEntryIndex`, a
    /// `model_change` with only `model`, legacy header fields, an `event` entry). pi ignores it.
    LegacyField = "PS0225", "legacy-field", Warning, Ignored,
        title: "version-1 field in a version-3 file",
        help: "write the version-3 form (firstKeptEntryId, provider + modelId, model_change entries)";
    /// pi opens the file but does not resume the conversation it holds: the context it builds
    /// from its leaf (the last entry) differs from the one of the file's last entry with an id
    /// (what its writer appended last) — an entry without an id at the end leaves pi with an
    /// empty context, shared ids or broken parents send it down another path. Found by building
    /// both contexts with pi's rules; the file's `piResumes` verdict is then `false`.
    ConversationNotResumed = "PS0226", "conversation-not-resumed", Error, Altered,
        title: "pi does not resume the conversation the file holds",
        help: "end the file with the entry the conversation ends with (an entry with a unique id whose parents lead to the root): `pi-session repair` moves lines without an id at the end to a rejects file, mends shared ids and, with --reattach, broken parents";
    /// `--dialect omp`: a `model_change` entry without a `model` string (`"provider/id"`),
    /// such as pi's `{provider, modelId}` form. oh-my-pi keeps it but ignores it: the model of
    /// its role does not change when the session resumes. (Without a `role`, the change is the
    /// default role's, as oh-my-pi reads it.)
    OmpModelChangeWithoutModel = "PS0227", "omp-model-change-without-model", Warning, Ignored,
        title: "oh-my-pi model change without a model",
        help: "write oh-my-pi's form: `\"model\":\"<provider>/<model id>\"` (and `\"role\"`, default `default`)";
    /// `--dialect omp`: a usage oh-my-pi adds up when it opens the file (an assistant
    /// message's `usage`, a `model_usage` entry's, a `task` tool result's `details.usage`) has
    /// no `cost`. oh-my-pi throws while opening the file (`usage.cost.total`) and cannot
    /// resume it.
    OmpUsageWithoutCost = "PS0228", "omp-usage-without-cost", Error, Crash,
        title: "oh-my-pi usage without cost",
        help: "give the usage a `cost` object (`{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}` when unknown)";
    /// `--dialect omp` with a blob store (`--blobs DIR`, or oh-my-pi's own): an image's
    /// `blob:sha256:<hex>` reference names a blob the store does not hold. oh-my-pi leaves the
    /// reference in place of the image's data (and logs a warning), so the model is sent a
    /// string that is not an image.
    OmpBlobMissing = "PS0229", "omp-blob-missing", Warning, Altered,
        title: "oh-my-pi image blob missing from the blob store",
        help: "copy the blob (a file named by its sha256) into the store's directory, or point `--blobs` at the store that has it";

    // ---------------------------------------------------------------- file (PS03xx)
    /// The file is larger than pi can read: Node's `readFileSync` cannot make a string of more
    /// than 2^29 − 24 UTF-16 units (about 512 MiB), so pi throws when it opens the file and
    /// leaves it out of listings.
    FileTooLarge = "PS0301", "file-too-large", Error, Unreadable,
        title: "file too large for pi to open",
        help: "start a new session (or compact and fork this one) to keep files well under 512 MiB";
    /// The file name does not follow pi's `<timestamp>_<session id>.jsonl` layout (the header
    /// timestamp with `:` and `.` replaced by `-`, and the header id). pi opens any path it is
    /// given, but its listings only look at `*.jsonl` files.
    FileNameLayout = "PS0302", "file-name-layout", Info, None,
        title: "file name does not follow pi's layout",
        help: "name the file <timestamp>_<session id>.jsonl, as pi does";
    /// The directory does not follow pi's `sessions/--<encoded cwd>--/` layout, or does not
    /// match the header's `cwd`. `pi -r` lists the sessions of a project from that directory.
    DirectoryLayout = "PS0303", "directory-layout", Info, None,
        title: "directory does not follow pi's layout",
        help: "store the file under <agent dir>/sessions/--<cwd with / replaced by ->--/";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_sorted_and_well_formed() {
        let mut previous = "";
        let mut names = std::collections::HashSet::new();
        for code in Code::ALL {
            let info = code.info();
            assert!(info.code > previous, "{} out of order", info.code);
            previous = info.code;
            assert!(info.code.len() == 6 && info.code.starts_with("PS"));
            assert!(names.insert(info.name), "duplicate name {}", info.name);
            assert_eq!(Code::parse(info.code), Some(*code));
            assert!(!info.help.is_empty() && !info.title.is_empty());
        }
    }
}
