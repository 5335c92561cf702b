//! Repair: the file pi broke, mended without losing anything, with a plan that says what
//! changed and why.
//!
//! [`repair`] runs the repairs in order, each on the lines the one before left, each tied to
//! the `validate` code it fixes:
//!
//! 1. glued lines split, other lines that are not JSON moved to the rejects, a torn last line
//!    ended (`repair/text.rs`: PS0001, PS0002);
//! 2. lines that repeat an earlier header or entry byte for byte removed (PS0104, PS0210);
//! 3. a missing header rebuilt from the file's name and directory (`repair/header.rs`: PS0101);
//! 4. version 1 and 2 files migrated as pi migrates them (PS0105, PS0108);
//! 5. ids two entries share told apart, references relinked by file order (`repair/ids.rs`:
//!    PS0210);
//! 6. opt-in ([`RepairOptions::reattach`]): entries whose parent is missing, themselves or on
//!    a cycle reattached to the entry before them (PS0212, PS0214, PS0213);
//! 7. opt-in ([`RepairOptions::tool_calls`]): tool calls with `arguments: null` given `{}`
//!    (`repair/tool_calls.rs`: PS0204);
//! 8. opt-in ([`RepairOptions::tool_results`]): tool results without their call moved to the
//!    rejects, their children reattached to their parent (`repair/context.rs`: PS0219);
//! 9. lines without an id after the last entry, on which pi resumes an empty conversation,
//!    moved to the rejects (`repair/context.rs`: PS0226).
//!
//! Nothing is lost: a byte leaves the file only as a repeat of a line that stays, or into the
//! rejects ([`Repaired::rejects`]), which the caller keeps beside the file. A repaired file
//! repairs to itself. [`fixability`] says, per code, what repair does about it.

mod context;
mod diff;
mod header;
mod ids;
mod lines;
mod migrate;
mod output;
mod text;
mod tool_calls;

use lines::{Behind, Line};
use output::join;

use crate::{Code, Options, Report, validate};
use pi_session_format::PiVersion;
use std::borrow::Cow;
use std::path::Path;

/// What [`repair`] may do.
#[derive(Debug, Clone, Default)]
pub struct RepairOptions<'p> {
    /// Whose reading rules the verdicts follow, and how a migration is done.
    pub pi: PiVersion,
    /// Where the file is: its name and directory rebuild a missing header.
    pub path: Option<&'p Path>,
    /// Only the repairs of these codes (all when `None`).
    pub only: Option<Vec<Code>>,
    /// Reattach entries whose parent is missing, themselves or on a cycle (it changes the
    /// tree, so it is asked for).
    pub reattach: bool,
    /// The working directory for a rebuilt header, instead of the one the directory name
    /// suggests.
    pub cwd: Option<String>,
    /// Give tool calls whose `arguments` is `null` an empty object (it changes what the model
    /// is sent, so it is asked for).
    pub tool_calls: bool,
    /// Take tool results whose call is on no assistant message before them out of the tree,
    /// into the rejects (it changes the tree and what the model is sent, so it is asked for).
    pub tool_results: bool,
    /// Called with each byte range of the input repair is done reading for now, as
    /// [`crate::Options::release`] is.
    pub release: Option<crate::Release<'p>>,
    /// Positioned reads of the file, as [`crate::Options::read_at`] takes them.
    pub read_at: Option<crate::Reading<'p>>,
}

/// What a repair did to one place of the file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    /// The `validate` code of the problem.
    pub code: Code,
    /// The line of the input it was on (1-based; 0 for a line the repair adds).
    pub line: usize,
    /// What was done.
    pub action: FixAction,
    /// What and why, in a sentence.
    pub message: String,
}

impl Fix {
    fn new(code: Code, line: usize, action: FixAction, message: impl Into<String>) -> Fix {
        Fix {
            code,
            line,
            action,
            message: message.into(),
        }
    }
}

/// The kinds of [`Fix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixAction {
    /// Glued entries split into lines of their own.
    Split,
    /// A line moved to the rejects: not JSON, a line without an id pi would end on (PS0226),
    /// or (opt-in) a tool result without its call (PS0219).
    Rejected,
    /// Bytes before the line's JSON (a byte order mark) taken off, into the rejects.
    Trimmed,
    /// A newline added after the last line.
    Terminated,
    /// A line that repeats an earlier one byte for byte removed.
    RemovedRepeat,
    /// A header put first.
    RebuiltHeader,
    /// The file migrated to version 3.
    Migrated,
    /// An entry given a fresh id.
    NewId,
    /// A reference pointed at the entry it meant.
    Relinked,
    /// An entry's `parentId` set to the entry before it.
    Reattached,
    /// A value pi cannot handle replaced by the one it expects (`arguments: null` → `{}`).
    Normalized,
}

/// Bytes taken out of the file that are not a repeat of a line that stays: kept aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// The input line they were on.
    pub line: usize,
    /// The bytes.
    pub text: Vec<u8>,
    /// Why they were taken out.
    pub reason: String,
}

/// A problem repair found and left, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unrepaired {
    /// The `validate` code.
    pub code: Code,
    /// The input line.
    pub line: usize,
    /// Why it was left.
    pub message: String,
}

/// The outcome of [`repair`].
pub struct Repaired<'a> {
    /// What was done, in the order it was done.
    pub fixes: Vec<Fix>,
    /// What was found and left, with why.
    pub unrepaired: Vec<Unrepaired>,
    /// Bytes taken out that the caller must keep (`FILE.repair-rejects.jsonl`).
    pub rejects: Vec<Reject>,
    /// `validate` of the input.
    pub before: Report,
    /// `validate` of the output.
    pub after: Report,
    /// The output's last line (1-based) when it is a line that is not JSON, kept on purpose:
    /// a torn last line (pi ignores it; nothing can complete it).
    pub kept_torn_line: Option<usize>,
    /// The input's lines.
    input: diff::InputLines<'a>,
    /// The output's lines (none when nothing was fixed: the output is the input).
    lines: Vec<Line<'a>>,
    /// How to let go of the input's pages behind a walk.
    release: Option<crate::Release<'a>>,
}

impl std::fmt::Debug for Repaired<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repaired")
            .field("fixes", &self.fixes)
            .field("unrepaired", &self.unrepaired)
            .field("rejects", &self.rejects)
            .field("before", &self.before)
            .field("after", &self.after)
            .field("kept_torn_line", &self.kept_torn_line)
            .finish_non_exhaustive()
    }
}

impl<'a> Repaired<'a> {
    /// Whether the output differs from the input.
    pub fn changed(&self) -> bool {
        !self.fixes.is_empty()
    }

    /// Whether the repair is complete: nothing was left unrepaired, and pi loses nothing of
    /// the output but the torn last line kept on purpose.
    pub fn is_complete(&self) -> bool {
        self.unrepaired.is_empty()
            && self.after.pi_breaking().all(|d| {
                d.code == Code::InvalidJson && d.location.map(|l| l.line) == self.kept_torn_line
            })
    }

    /// The repaired file, whole: the input itself when nothing was fixed, else joined in
    /// memory. [`Repaired::write_output`] writes it without holding it.
    pub fn output(&self) -> Cow<'a, [u8]> {
        if self.changed() {
            Cow::Owned(output::join(&self.lines))
        } else {
            Cow::Borrowed(self.input.bytes)
        }
    }

    /// Writes the repaired file to `out` a line at a time (the input in 16 MiB pieces when
    /// nothing was fixed), letting go of the input's pages behind (with
    /// [`RepairOptions::release`]). The lines a repair left as they were are read from the
    /// input now: a caller reading a file that may change checks it afterwards.
    pub fn write_output(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.changed() {
            output::write_lines(&self.lines, self.behind(), out)
        } else {
            output::write_input(self.input.bytes, self.release, out)
        }
    }

    /// The unified diff from the input to the output (one line of context, headed
    /// `--- name` / `+++ name (repaired)`), made from where each output line came from, not
    /// by diffing the two texts; empty when nothing changed.
    pub fn diff(&self, name: &str) -> String {
        if !self.changed() {
            return String::new();
        }
        diff::unified(
            name,
            diff::ops(&self.input, &self.lines, self.behind()),
            &self.input,
            &self.lines,
        )
    }

    fn behind(&self) -> Behind<'a> {
        Behind::new(self.input.bytes, self.release)
    }

    /// The rejects as a JSON Lines file: one object per reject,
    /// `{"line", "reason", "text"}` (`"hex"` instead of `"text"` for bytes that are not UTF-8).
    pub fn rejects_jsonl(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for r in &self.rejects {
            let mut w = pi_session_format::json::JsonWriter::with_buffer(out);
            w.begin_object();
            w.key("line").uint(r.line as u64);
            w.key("reason").string(&r.reason);
            match std::str::from_utf8(&r.text) {
                Ok(text) => w.key("text").string(text),
                Err(_) => {
                    let hex: String = r.text.iter().map(|b| format!("{b:02x}")).collect();
                    w.key("hex").string(&hex)
                }
            };
            w.end_object();
            out = w.into_bytes();
            out.push(b'\n');
        }
        out
    }
}

/// What the repairs collect as they go.
struct Repairs<'r> {
    only: Option<Vec<Code>>,
    fixes: Vec<Fix>,
    unrepaired: Vec<Unrepaired>,
    rejects: Vec<Reject>,
    /// Whether the last line is one that is not JSON and was kept.
    kept_torn_line: bool,
    /// The input, and how to let go of what the repairs have read of it.
    input: &'r [u8],
    release: Option<crate::Release<'r>>,
}

impl<'r> Repairs<'r> {
    /// A walk over the lines in file order that lets go of the input behind it.
    fn behind(&self) -> Behind<'r> {
        Behind::new(self.input, self.release)
    }

    fn wants(&self, code: Code) -> bool {
        self.only.as_ref().is_none_or(|only| only.contains(&code))
    }

    fn fix(&mut self, fix: Fix) {
        self.fixes.push(fix);
    }

    fn unrepaired(&mut self, code: Code, line: usize, message: &str) {
        self.unrepaired.push(Unrepaired {
            code,
            line,
            message: message.to_owned(),
        });
    }

    fn reject(&mut self, reject: Reject) {
        self.rejects.push(reject);
    }
}

/// Repairs a session file's bytes (see the [module](self) docs). Never fails: what cannot be
/// repaired is listed in [`Repaired::unrepaired`] and left as it is.
pub fn repair<'a>(bytes: &'a [u8], options: &RepairOptions<'a>) -> Repaired<'a> {
    let before = validate(
        bytes,
        &Options {
            pi: options.pi,
            path: options.path,
            release: options.release,
            read_at: options.read_at,
            ..Options::default()
        },
    );
    let mut out = Repairs {
        only: options.only.clone(),
        fixes: Vec::new(),
        unrepaired: Vec::new(),
        rejects: Vec::new(),
        kept_torn_line: false,
        input: bytes,
        release: options.release,
    };
    let final_newline = bytes.last().is_none_or(|&b| b == b'\n');
    let mut behind = out.behind();
    let mut spans = Vec::new();
    let mut lines: Vec<Line> = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, text)| {
            behind.passed(text);
            let start = text.as_ptr() as usize - bytes.as_ptr() as usize;
            spans.push(start..start + text.len());
            Line::new(text, i + 1)
        })
        .collect();
    drop(behind);
    if final_newline {
        lines.pop();
        spans.pop();
    }
    let lines = text::split_glued(lines, final_newline, &mut out);
    let lines = text::remove_repeats(lines, &mut out);
    let lines = header::rebuild(lines, options.path, options.cwd.as_deref(), &mut out);
    let lines = migrate::to_v3(lines, options.pi, &mut out);
    // pi's rewrite can make two lines that differed in spelling byte-identical.
    let lines = if out.fixes.iter().any(|f| f.action == FixAction::Migrated) {
        text::remove_repeats(lines, &mut out)
    } else {
        lines
    };
    let lines = ids::tell_apart(lines, &mut out);
    let lines = if options.reattach {
        ids::reattach(lines, &mut out)
    } else {
        lines
    };
    let lines = if options.tool_calls {
        tool_calls::null_arguments(lines, &mut out)
    } else {
        lines
    };
    let lines = if options.tool_results {
        context::orphan_results(lines, options.pi, &mut out)
    } else {
        lines
    };
    let lines = context::trailing_without_id(lines, options.pi, &mut out);
    let kept_torn_line = out.kept_torn_line.then_some(lines.len());
    // Nothing fixed: the output is the input, and so is its report.
    let (lines, after) = if out.fixes.is_empty() {
        (Vec::new(), before.clone())
    } else {
        let options = Options {
            pi: options.pi,
            path: options.path,
            ..Options::default()
        };
        let after = output::validate(&lines, out.behind(), &options);
        (lines, after)
    };
    if !options.reattach {
        // What only --reattach mends, said once per code.
        for code in [Code::ParentCycle, Code::SelfParent] {
            if let Some(d) = after.diagnostics.iter().find(|d| d.code == code) {
                out.unrepaired(
                    code,
                    d.location.map_or(0, |l| l.line),
                    "pi loops forever on this file; --reattach attaches the entry to the one before it",
                );
            }
        }
    }
    Repaired {
        fixes: out.fixes,
        unrepaired: out.unrepaired,
        rejects: out.rejects,
        before,
        after,
        kept_torn_line,
        input: diff::InputLines {
            bytes,
            spans,
            final_newline,
        },
        lines,
        release: options.release,
    }
}

/// What repair does about a code: `yes` (always), `opt-in` (asked for, it changes the tree or
/// the context) or `no`, with a word on how.
pub fn fixability(code: Code) -> (&'static str, &'static str) {
    match code {
        Code::InvalidJson => (
            "yes",
            "glued entries are split (a torn fragment goes to the rejects file), a byte order mark is taken off, any other line moves to the rejects; a torn last line is kept",
        ),
        Code::TornLastLine => ("yes", "ended with a newline and kept (pi ignores it)"),
        Code::DuplicateHeader => (
            "yes",
            "removed when it repeats the first header byte for byte; otherwise left",
        ),
        Code::NoHeader => (
            "yes",
            "rebuilt from pi's file name and directory (--cwd to set the directory)",
        ),
        Code::VersionMissing | Code::VersionLegacy => ("yes", "migrated to version 3 as pi does"),
        Code::DuplicateId => (
            "yes",
            "byte-identical repeats removed; later entries get fresh ids, references follow file order",
        ),
        Code::DanglingParent | Code::SelfParent | Code::ParentCycle => (
            "opt-in",
            "--reattach: the entry is attached to the entry before it in the file",
        ),
        Code::WrongType => (
            "opt-in",
            "--tool-calls: a tool call's `arguments: null` becomes `{}`; other wrong types are left",
        ),
        Code::OrphanToolResult => (
            "opt-in",
            "--tool-results: the result moves to the rejects file, its children hang from its parent; left when another entry names it",
        ),
        Code::ConversationNotResumed => (
            "yes",
            "lines without an id after the last entry move to the rejects file; shared ids and broken parents are mended as their codes say",
        ),
        _ => ("no", ""),
    }
}

/// A line's value as pi reads it: its bytes decoded as UTF-8, U+FFFD for what is not (as
/// pi's `readFileSync(…, "utf8")` does), then `JSON.parse`d; `None` when it is not JSON.
///
/// A whole line's value can take 40 times the line's bytes (a line of tiny content blocks);
/// the repairs that only ask what kind of line it is use [`shape_of`] instead.
fn value_of(text: &[u8]) -> Option<pi_session_format::json::JsValue> {
    pi_session_format::json::parse(&String::from_utf8_lossy(text)).ok()
}

/// What kind of line a line is, read as pi reads it (see [`value_of`]), without building the
/// rest of its value.
struct Shape {
    /// Whether the line is an object.
    object: bool,
    /// Its `type`, when it is an object that has one.
    type_: Option<pi_session_format::json::JsValue>,
    /// Its `id`, when it is an object that has one.
    id: Option<pi_session_format::json::JsValue>,
}

impl Shape {
    /// Whether the line is a header (an object whose `type` is `"session"`).
    fn is_header(&self) -> bool {
        self.type_.as_ref().and_then(|t| t.as_str()) == Some("session")
    }
}

/// The [`Shape`] of a line; `None` when it is not JSON. The line scanner validates the line
/// as `JSON.parse` does (bytes that are not UTF-8 in a string read as U+FFFD) and only the
/// two members are built.
fn shape_of(text: &[u8]) -> Option<Shape> {
    let raw = pi_session_format::json::LineScanner::default()
        .scan(text)
        .ok()?;
    let member = |span: Option<(usize, usize)>| {
        let (start, end) = span?;
        value_of(&text[start..end])
    };
    Some(Shape {
        object: raw.object,
        type_: member(raw.type_),
        id: member(raw.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"0195f3a4-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn entry(id: &str, parent: Option<&str>, text: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("{p:?}"));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    }

    fn file(lines: &[String]) -> Vec<u8> {
        let mut out = lines.join("\n").into_bytes();
        out.push(b'\n');
        out
    }

    fn fixed<'a>(input: &'a [u8], options: &RepairOptions<'a>) -> Repaired<'a> {
        let r = repair(input, options);
        let output = r.output();
        let again = repair(&output, options);
        assert!(
            again.fixes.is_empty(),
            "a repaired file repairs to itself: {:?}",
            again.fixes
        );
        r
    }

    /// The diff is made from where each line came from: the line repair took out as a
    /// repeat is the one it names (a text diff may name the other of two equal lines), the
    /// glued line is replaced by its pieces, a torn last line ended says so.
    #[test]
    fn the_diff_names_the_lines_repair_changed() {
        let (e1, e2, e3) = (
            entry("e1", None, "a"),
            entry("e2", Some("e1"), "b"),
            entry("e3", Some("e2"), "c"),
        );
        let input = format!("{HEADER}\n{e1}\n{e1}\n{e2}{e3}\n{{\"type\":\"mess");
        let r = repair(input.as_bytes(), &RepairOptions::default());
        let mut written = Vec::new();
        r.write_output(&mut written).unwrap();
        assert_eq!(written, *r.output());
        assert_eq!(
            r.diff("s.jsonl"),
            format!(
                "--- s.jsonl\n+++ s.jsonl (repaired)\n@@ -2,4 +2,4 @@\n {e1}\n-{e1}\n-{e2}{e3}\n-{{\"type\":\"mess\n\\ No newline at end of file\n+{e2}\n+{e3}\n+{{\"type\":\"mess\n"
            )
        );
        let unchanged = file(&[HEADER.to_owned(), e1]);
        let r = repair(&unchanged, &RepairOptions::default());
        assert!(r.diff("s.jsonl").is_empty());
        let mut written = Vec::new();
        r.write_output(&mut written).unwrap();
        assert_eq!(written, unchanged);
    }

    /// Bytes that are not UTF-8 do not make a line something else than pi reads (pi decodes
    /// them as U+FFFD): a header stays the header, a tool call's `null` arguments are fixed,
    /// an id-less line at the end is still one.
    #[test]
    fn lines_with_bytes_not_utf8_are_what_pi_reads() {
        let with_ff = |line: &str, at: &str| {
            let mut bytes = line.as_bytes().to_vec();
            let i = line.find(at).expect("marker") + at.len();
            bytes.insert(i, 0xFF);
            bytes
        };
        let join = |lines: &[Vec<u8>]| {
            let mut out = lines.join(&b'\n');
            out.push(b'\n');
            out
        };
        // A header whose cwd has a 0xFF byte, in a file at pi's place for it: no header is
        // added in front of it.
        let header = with_ff(HEADER, r#""cwd":"/w"#);
        let input = join(&[header, entry("aaaaaaa1", None, "a").into_bytes()]);
        let path = std::path::Path::new(
            "/s/--w--/2026-01-01T00-00-00-000Z_0195f3a4-0000-7000-8000-000000000001.jsonl",
        );
        let r = repair(
            &input,
            &RepairOptions {
                path: Some(path),
                ..RepairOptions::default()
            },
        );
        assert!(
            r.fixes.iter().all(|f| f.code != Code::NoHeader),
            "{:?}",
            r.fixes
        );
        // A tool call with null arguments on a line with a 0xFF byte in a text.
        let call = r#"{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"bash","arguments":null}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#;
        let input = join(&[
            HEADER.as_bytes().to_vec(),
            entry("aaaaaaa1", None, "a").into_bytes(),
            with_ff(call, r#""text":"x"#),
        ]);
        let r = repair(
            &input,
            &RepairOptions {
                tool_calls: true,
                ..RepairOptions::default()
            },
        );
        let codes: Vec<_> = r.fixes.iter().map(|f| f.code).collect();
        assert_eq!(codes, [Code::WrongType], "{:?}", r.fixes);
        let output = r.output();
        let output = String::from_utf8_lossy(&output);
        assert!(output.contains(r#""arguments":{}"#), "{output}");
        assert!(output.contains("\"text\":\"x\u{FFFD}\""), "{output}");
        // An id-less value at the end, with a 0xFF byte: pi takes it for an entry (its leaf
        // then has no id), so it goes to the rejects as the same line without the byte does.
        let leaf = r#"{"type":"leaf","note":"n"}"#;
        let outcome = |last: Vec<u8>| {
            let input = join(&[
                HEADER.as_bytes().to_vec(),
                entry("aaaaaaa1", None, "a").into_bytes(),
                last,
            ]);
            let r = repair(&input, &RepairOptions::default());
            (r.fixes.len(), r.rejects.len())
        };
        assert_eq!(
            outcome(with_ff(leaf, r#""note":"n"#)),
            outcome(leaf.as_bytes().to_vec())
        );
        assert_ne!(outcome(leaf.as_bytes().to_vec()), (0, 0));
    }

    #[test]
    fn a_torn_append_glued_to_the_next_is_split() {
        let torn = &entry("aaaaaaa2", Some("aaaaaaa1"), "lost")[..40];
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            format!("{torn}{}", entry("aaaaaaa3", Some("aaaaaaa1"), "b")),
        ]);
        let r = fixed(&input, &RepairOptions::default());
        assert_eq!(r.fixes.len(), 1);
        assert_eq!(
            (r.fixes[0].code, r.fixes[0].action),
            (Code::InvalidJson, FixAction::Split)
        );
        assert_eq!(r.rejects.len(), 1);
        assert_eq!(r.rejects[0].text, torn.as_bytes());
        assert_eq!(
            r.output(),
            file(&[
                HEADER.into(),
                entry("aaaaaaa1", None, "a"),
                entry("aaaaaaa3", Some("aaaaaaa1"), "b")
            ])
        );
        assert!(r.after.verdict.strict, "{:?}", r.after.diagnostics);
    }

    #[test]
    fn repeats_go_and_shared_ids_are_told_apart() {
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
            entry("aaaaaaa2", Some("aaaaaaa2"), "c"),
            entry("aaaaaaa3", Some("aaaaaaa2"), "d"),
        ]);
        let r = fixed(&input, &RepairOptions::default());
        let actions: Vec<_> = r.fixes.iter().map(|f| (f.code, f.action, f.line)).collect();
        assert_eq!(
            actions,
            [
                (Code::DuplicateHeader, FixAction::RemovedRepeat, 3),
                (Code::DuplicateId, FixAction::RemovedRepeat, 4),
                (Code::DuplicateId, FixAction::NewId, 6),
                (Code::DuplicateId, FixAction::Relinked, 7),
            ]
        );
        assert!(r.rejects.is_empty(), "repeats are not rejects");
        assert!(
            r.after.verdict.pi_loadable && r.after.verdict.strict,
            "{:?}",
            r.after.diagnostics
        );
        let text = String::from_utf8(r.output().into_owned()).unwrap_or_default();
        assert_eq!(text.lines().count(), 5);
    }

    #[test]
    fn cycles_and_dangling_parents_are_reattached_on_request() {
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            entry("aaaaaaa2", Some("aaaaaaa3"), "b"),
            entry("aaaaaaa3", Some("aaaaaaa2"), "c"),
            entry("aaaaaaa4", Some("gone0000"), "d"),
        ]);
        let left = repair(&input, &RepairOptions::default());
        assert!(left.fixes.is_empty());
        assert!(left.unrepaired.iter().any(|u| u.code == Code::ParentCycle));
        let r = fixed(
            &input,
            &RepairOptions {
                reattach: true,
                ..RepairOptions::default()
            },
        );
        let actions: Vec<_> = r.fixes.iter().map(|f| (f.code, f.line)).collect();
        assert_eq!(actions, [(Code::ParentCycle, 3), (Code::DanglingParent, 5)]);
        assert!(r.after.verdict.strict, "{:?}", r.after.diagnostics);
    }

    #[test]
    fn null_tool_call_arguments_become_an_object_on_request() {
        let call = r#"{"type":"message","id":"aaaaaaa2","parentId":"aaaaaaa1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":null}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#;
        // The key spelled with an escape is the same key once parsed (the line is written
        // again as `JSON.stringify` writes it).
        for spelled in [
            call.to_owned(),
            call.replace("\"arguments\"", r#""\u0061rguments""#),
        ] {
            let input = file(&[HEADER.into(), entry("aaaaaaa1", None, "a"), spelled]);
            assert!(
                repair(&input, &RepairOptions::default()).fixes.is_empty(),
                "opt-in"
            );
            let r = fixed(
                &input,
                &RepairOptions {
                    tool_calls: true,
                    ..RepairOptions::default()
                },
            );
            assert_eq!(r.fixes.len(), 1);
            assert_eq!(
                (r.fixes[0].code, r.fixes[0].action),
                (Code::WrongType, FixAction::Normalized)
            );
            assert_eq!(
                r.output(),
                file(&[
                    HEADER.into(),
                    entry("aaaaaaa1", None, "a"),
                    call.replace("null}", "{}}")
                ])
            );
            assert!(r.after.verdict.strict, "{:?}", r.after.diagnostics);
        }
    }

    #[test]
    fn lines_without_an_id_at_the_end_go_to_the_rejects() {
        let leaf = r#"{"type":"leaf","targetId":"aaaaaaa2"}"#;
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
            leaf.into(),
            "42".into(),
        ]);
        let before = repair(&input, &RepairOptions::default());
        assert!(!before.before.verdict.pi_resumes, "pi resumes nothing");
        let r = fixed(&input, &RepairOptions::default());
        let actions: Vec<_> = r.fixes.iter().map(|f| (f.code, f.action, f.line)).collect();
        assert_eq!(
            actions,
            [
                (Code::ConversationNotResumed, FixAction::Rejected, 4),
                (Code::ConversationNotResumed, FixAction::Rejected, 5),
            ]
        );
        let rejected: Vec<_> = r.rejects.iter().map(|j| (j.line, j.text.clone())).collect();
        assert_eq!(
            rejected,
            [(4, leaf.as_bytes().to_vec()), (5, b"42".to_vec())]
        );
        assert_eq!(
            r.output(),
            file(&[
                HEADER.into(),
                entry("aaaaaaa1", None, "a"),
                entry("aaaaaaa2", Some("aaaaaaa1"), "b")
            ])
        );
        assert!(r.after.verdict.pi_resumes, "{:?}", r.after.diagnostics);
    }

    #[test]
    fn a_line_without_an_id_that_loses_nothing_stays() {
        // In the middle of the file it is not pi's leaf: nothing to mend there.
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            r#"{"type":"leaf","targetId":"aaaaaaa1"}"#.into(),
            entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
        ]);
        let r = repair(&input, &RepairOptions::default());
        assert!(
            r.fixes
                .iter()
                .all(|f| f.code != Code::ConversationNotResumed),
            "{:?}",
            r.fixes
        );
    }

    fn tool_result(id: &str, parent: &str, call: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":3}}}}"#
        )
    }

    #[test]
    fn tool_results_without_a_call_go_to_the_rejects_on_request() {
        let orphan = tool_result("aaaaaaa2", "aaaaaaa1", "gone");
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            orphan.clone(),
            entry("aaaaaaa3", Some("aaaaaaa2"), "b"),
            entry("aaaaaaa4", Some("aaaaaaa3"), "c"),
        ]);
        let left = repair(&input, &RepairOptions::default());
        assert!(left.fixes.is_empty(), "opt-in: {:?}", left.fixes);
        let options = RepairOptions {
            tool_results: true,
            ..RepairOptions::default()
        };
        let r = fixed(&input, &options);
        let actions: Vec<_> = r.fixes.iter().map(|f| (f.code, f.action, f.line)).collect();
        assert_eq!(
            actions,
            [
                (Code::OrphanToolResult, FixAction::Rejected, 3),
                (Code::OrphanToolResult, FixAction::Relinked, 4),
            ]
        );
        assert_eq!(r.rejects.len(), 1);
        assert_eq!(r.rejects[0].text, orphan.as_bytes());
        assert_eq!(
            r.output(),
            file(&[
                HEADER.into(),
                entry("aaaaaaa1", None, "a"),
                entry("aaaaaaa3", Some("aaaaaaa1"), "b"),
                entry("aaaaaaa4", Some("aaaaaaa3"), "c"),
            ])
        );
        assert!(r.after.verdict.strict, "{:?}", r.after.diagnostics);
    }

    #[test]
    fn a_tool_result_another_entry_names_is_left() {
        let input = file(&[
            HEADER.into(),
            entry("aaaaaaa1", None, "a"),
            tool_result("aaaaaaa2", "aaaaaaa1", "gone"),
            r#"{"type":"label","id":"aaaaaaa3","parentId":"aaaaaaa2","timestamp":"2026-01-01T00:00:04.000Z","targetId":"aaaaaaa2","label":"here"}"#.into(),
        ]);
        let r = repair(
            &input,
            &RepairOptions {
                tool_results: true,
                ..RepairOptions::default()
            },
        );
        assert!(r.fixes.is_empty(), "{:?}", r.fixes);
        assert_eq!(r.unrepaired.len(), 1);
        assert!(r.unrepaired[0].message.contains("targetId of line 4"));
    }

    const V1_HEADER: &str = r#"{"type":"session","id":"0195f3a4-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn v1_entry(role: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"{role}","content":"x"{extra},"timestamp":1}}}}"#
        )
    }

    /// A migrated file keeps the bytes pi's rewrite drops: the CR of a last line that is not
    /// JSON (the whole text's trim), and blank lines.
    #[test]
    fn a_migrated_file_keeps_its_last_cr_and_blank_lines() {
        let input = format!(
            "{V1_HEADER}\n{}\n \t\n{}\n{{\"type\":\"mess\r\n",
            v1_entry("user", ""),
            v1_entry("user", "")
        );
        let r = fixed(input.as_bytes(), &RepairOptions::default());
        assert!(r.fixes.iter().any(|f| f.action == FixAction::Migrated));
        let output = r.output();
        let output = String::from_utf8_lossy(&output);
        assert!(output.ends_with("\n{\"type\":\"mess\r\n"), "{output:?}");
        assert!(output.contains("\n \t\n"), "{output:?}");
        assert_eq!(r.kept_torn_line, Some(5));
    }

    /// What a later repair takes out of a migrated file goes to the rejects as it was in the
    /// input, not as the migration wrote it.
    #[test]
    fn rejects_of_a_migrated_file_are_its_own_bytes() {
        let orphan = v1_entry("toolResult", r#","toolCallId":"gone","toolName":"bash""#);
        let input = format!(
            "{V1_HEADER}\n{}\n{orphan}\n{}\n",
            v1_entry("user", ""),
            v1_entry("user", "")
        );
        let options = RepairOptions {
            tool_results: true,
            ..RepairOptions::default()
        };
        let r = fixed(input.as_bytes(), &options);
        let rejected: Vec<_> = r.rejects.iter().map(|j| (j.line, j.text.clone())).collect();
        assert_eq!(rejected, [(3, orphan.into_bytes())]);

        let v2 = V1_HEADER.replace(r#""session","#, r#""session","version":2,"#);
        let input = format!(
            "{v2}\n{}\n{{\"type\": \"leaf\"}}\n",
            entry("aaaaaaa1", None, "a")
        );
        let r = fixed(input.as_bytes(), &RepairOptions::default());
        let rejected: Vec<_> = r.rejects.iter().map(|j| (j.line, j.text.clone())).collect();
        assert_eq!(rejected, [(3, br#"{"type": "leaf"}"#.to_vec())]);
    }

    /// Two spellings of one entry that the migration writes alike: the second is not a
    /// repeat of the first in the input, so its bytes go to the rejects.
    #[test]
    fn a_repeat_made_by_the_migration_is_kept_in_the_rejects() {
        let v2 = V1_HEADER.replace(r#""session","#, r#""session","version":2,"#);
        let first = entry("aaaaaaa1", None, "a");
        let second = first.replace(r#""type":"message","#, r#""type": "message","#);
        let input = file(&[v2, first, second.clone()]);
        let r = fixed(&input, &RepairOptions::default());
        assert!(
            r.fixes.iter().any(|f| f.action == FixAction::RemovedRepeat),
            "{:?}",
            r.fixes
        );
        let rejected: Vec<_> = r.rejects.iter().map(|j| (j.line, j.text.clone())).collect();
        assert_eq!(rejected, [(3, second.into_bytes())]);
    }

    /// A short torn fragment glued before a complete entry (on the line before it, or on
    /// its line): only the fragment goes, and the entry's child keeps its parent.
    #[test]
    fn a_short_fragment_before_an_entry_is_all_that_goes() {
        for torn in ["{\"ty", "{", "{\"", "{\"type\""] {
            for glue in ["", "\n"] {
                let input = file(&[
                    HEADER.into(),
                    entry("aaaaaaa1", None, "a"),
                    format!("{torn}{glue}{}", entry("aaaaaaa2", Some("aaaaaaa1"), "b")),
                    entry("aaaaaaa3", Some("aaaaaaa2"), "c"),
                ]);
                let r = fixed(&input, &RepairOptions::default());
                let rejected: Vec<_> = r.rejects.iter().map(|j| j.text.clone()).collect();
                assert_eq!(rejected, [torn.as_bytes().to_vec()], "{torn:?} {glue:?}");
                assert_eq!(
                    r.output(),
                    file(&[
                        HEADER.into(),
                        entry("aaaaaaa1", None, "a"),
                        entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
                        entry("aaaaaaa3", Some("aaaaaaa2"), "c"),
                    ])
                );
                assert!(
                    r.is_complete() && r.after.verdict.strict,
                    "{:?}",
                    r.after.diagnostics
                );
            }
        }
    }

    #[test]
    fn a_clean_file_is_left_byte_for_byte() {
        let input = file(&[HEADER.into(), entry("aaaaaaa1", None, "a")]);
        let r = repair(&input, &RepairOptions::default());
        assert!(!r.changed());
        assert_eq!(r.output(), input);
    }
}
