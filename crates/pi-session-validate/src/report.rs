//! What validation finds: diagnostics, the two verdicts, and the report of one file.
//!
//! These types are the library's answer and, serialised, the `pi-session validate --format
//! json` report (its schema, `schemas/validate-report.schema.json`, is generated from them).

use super::catalogue::{Code, PiEffect, Severity};
use serde::Serialize;

/// Where a diagnostic points in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Location {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (Unicode scalar values) of the decoded line.
    pub column: usize,
    /// Byte offset in the file of the first byte pointed at.
    pub offset: usize,
    /// Number of bytes pointed at (at least 1 when the line is not empty).
    pub length: usize,
}

/// One problem found in a file.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// The stable code (`PS0001`, …), documented in `docs/diagnostics.md`.
    pub code: Code,
    /// How serious it is.
    pub severity: Severity,
    /// What pi does because of it, in this file.
    pub pi: PiEffect,
    /// Where it is; `null` for problems of the whole file (its size, its name).
    pub location: Option<Location>,
    /// The JSON pointer of the offending value inside the line (`/message/content/0/text`),
    /// when the problem is a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub pointer: Option<String>,
    /// The `id` of the entry the problem belongs to, when it has a string id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub entry_id: Option<String>,
    /// What is wrong, specific to this occurrence.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// Set only on a summary of occurrences that are not listed one by one (a file lists
    /// the first 100 diagnostics of each code): how many there are. They all have this
    /// diagnostic's code, severity and `pi` effect; `location` is the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub omitted: Option<usize>,
}

/// The longest message a diagnostic keeps; longer ones (quoting a value of the file) are cut.
pub(crate) const MESSAGE_MAX: usize = 1000;
/// The longest entry id a diagnostic keeps whole.
pub(crate) const ENTRY_ID_MAX: usize = 200;

/// `text` with control characters escaped (`\u{1b}`) and cut after `max` bytes with a count
/// of what was left out (`…(+N bytes)`): text of a file must never flood or drive a terminal.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    let clean = !text.chars().any(char::is_control);
    if clean && text.len() <= max {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len().min(max) + 16);
    for (i, c) in text.char_indices() {
        if out.len() >= max {
            out.push_str(&format!("…(+{} bytes)", text.len() - i));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl Diagnostic {
    /// A diagnostic with the catalogue's severity, pi effect and help.
    pub fn new(code: Code, location: Option<Location>, message: impl Into<String>) -> Diagnostic {
        let info = code.info();
        Diagnostic {
            code,
            severity: info.severity,
            pi: info.pi,
            location,
            pointer: None,
            entry_id: None,
            message: bounded(&message.into(), MESSAGE_MAX),
            help: info.help.to_string(),
            omitted: None,
        }
    }

    /// How many occurrences this diagnostic stands for: 1, or [`Diagnostic::omitted`] for a
    /// summary.
    pub fn occurrences(&self) -> usize {
        self.omitted.unwrap_or(1)
    }

    /// Sets the JSON pointer inside the line.
    pub fn at_pointer(mut self, pointer: impl Into<String>) -> Diagnostic {
        self.pointer = Some(pointer.into());
        self
    }

    /// Sets the entry id (cut, with a count, beyond `ENTRY_ID_MAX` (200) bytes; control
    /// characters escaped).
    pub fn for_entry(mut self, id: Option<&str>) -> Diagnostic {
        self.entry_id = id.map(|id| bounded(id, ENTRY_ID_MAX));
        self
    }

    /// Overrides what pi does (where this occurrence differs from the catalogue).
    pub fn with_pi(mut self, pi: PiEffect) -> Diagnostic {
        self.pi = pi;
        self
    }

    /// Overrides the severity.
    pub fn with_severity(mut self, severity: Severity) -> Diagnostic {
        self.severity = severity;
        self
    }
}

/// The two verdicts on a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// The file follows the format: no diagnostic of severity `error`.
    pub strict: bool,
    /// pi reads everything in the file: it opens the file without hiding an entry from its
    /// tree, dropping lines, rewriting, truncating or refusing it, and without crashing or
    /// hanging on it: no diagnostic whose `pi` effect is `hidden` or worse.
    pub pi_loadable: bool,
    /// pi resumes the conversation the file holds: it opens the file (no truncation, crash,
    /// hang or refusal) and the context it builds is the one of the file's last entry with an
    /// id (no `conversation-not-resumed`, PS0226).
    pub pi_resumes: bool,
}

/// Counts that describe the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Size of the file in bytes.
    pub bytes: usize,
    /// Physical lines (LF-separated; a final line without LF counts).
    pub lines: usize,
    /// Entries (JSON values after the header that pi keeps).
    pub entries: usize,
    /// The header's `version` as pi's comparisons read it (a string `"3"` is 3), written as an
    /// integer when it is one; `null` when there is no valid header or the version is not a
    /// number (`NaN`).
    #[serde(serialize_with = "js_number")]
    #[schemars(with = "Option<f64>")]
    pub version: Option<f64>,
    /// Diagnostics of severity `error` (counting those only summarised).
    pub errors: usize,
    /// Diagnostics of severity `warning`.
    pub warnings: usize,
    /// Diagnostics of severity `info`.
    pub infos: usize,
}

/// The result of validating one file.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Both verdicts.
    pub verdict: Verdict,
    /// Counts.
    pub stats: Stats,
    /// Every problem, ordered by position (file-level problems first), then the summaries
    /// of the occurrences that are only counted ([`Diagnostic::omitted`]).
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Builds the report: sorts the diagnostics, computes verdicts and counts (a summary
    /// counts all the occurrences it stands for).
    pub fn new(mut diagnostics: Vec<Diagnostic>, mut stats: Stats) -> Report {
        diagnostics.sort_by(|a, b| {
            let key =
                |d: &Diagnostic| (d.omitted.is_some(), d.location.map(|l| (l.line, l.column)));
            key(a).cmp(&key(b)).then(a.code.cmp(&b.code))
        });
        let count = |s| {
            diagnostics
                .iter()
                .filter(|d| d.severity == s)
                .map(Diagnostic::occurrences)
                .sum()
        };
        stats.errors = count(Severity::Error);
        stats.warnings = count(Severity::Warning);
        stats.infos = count(Severity::Info);
        let verdict = Verdict {
            strict: stats.errors == 0,
            pi_loadable: !diagnostics.iter().any(|d| d.pi.breaks_loading()),
            pi_resumes: !diagnostics
                .iter()
                .any(|d| d.code == Code::ConversationNotResumed || d.pi >= PiEffect::Truncated),
        };
        Report {
            verdict,
            stats,
            diagnostics,
        }
    }

    /// The diagnostics that make the file not pi-loadable: what pi would drop, rewrite, …
    pub fn pi_breaking(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.pi.breaks_loading())
    }
}

/// Writes a number as JavaScript would: `3`, not `3.0`; `NaN` as `null`.
fn js_number<S: serde::Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 => {
            serializer.serialize_i64(*v as i64)
        }
        Some(v) if v.is_finite() => serializer.serialize_f64(*v),
        _ => serializer.serialize_none(),
    }
}
