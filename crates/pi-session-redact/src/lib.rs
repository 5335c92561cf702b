//! Secrets found in pi session files and replaced, so that a session can be shared and still
//! resumes.
//!
//! A redacted session has the same lines in the same order, the same ids, parents, types,
//! timestamps and usage: only string values change. Every string value of every line is
//! decoded and searched (JSON held inside a string as JSON), for:
//!
//! - known formats: gitleaks' rules (v8.30.0, MIT, Copyright (c) 2019 Zachary Rice; its
//!   licence and provenance are in this crate's `rules/`) and this project's own
//!   ([`rules`]), each with an id;
//! - values the user names ([`Options::named`]);
//! - an entropy tier: long random-looking tokens no rule names, reported as candidates and
//!   replaced only with [`Options::aggressive`].
//!
//! Each secret becomes `[REDACTED:rule:h8]`, `h8` a keyed hash of it ([`Key`]): the same
//! secret gives the same placeholder across a session and across files.
//!
//! ```
//! use pi_session_redact::{Key, Options, Redactor};
//!
//! let redactor = Redactor::new(Options::default(), Key::from_bytes(b"a key of 16 bytes+").unwrap());
//! let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"my token is ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12"}}"#;
//! let mut out = Vec::new();
//! let report = redactor.redact(line, &mut out).unwrap();
//! assert_eq!(report.redacted(), 1);
//! assert!(!out.windows(4).any(|w| w == b"ghp_"));
//! ```
//!
//! The library does no printing and touches no file: [`Redactor::redact`] reads bytes and
//! writes to any `Write`; the command line puts the result where it belongs.

mod detect;
mod entropy;
mod line;
mod placeholder;
pub mod rules;

pub use placeholder::{Key, KeyError, MIN_KEY_BYTES};

use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Write;

/// What to find and what to do with it (its `Debug` shows how many named values, not them).
#[derive(Clone, Default)]
pub struct Options {
    /// Values to redact wherever they are (`--secret`, `--secrets-from`).
    pub named: Vec<Vec<u8>>,
    /// Redact the entropy tier's candidates too.
    pub aggressive: bool,
    /// Empty `thinkingSignature`, `textSignature` and `thoughtSignature` values.
    pub strip_signatures: bool,
    /// Replace images' data by a 1×1 PNG.
    pub strip_images: bool,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("named", &format_args!("{} value(s)", self.named.len()))
            .field("aggressive", &self.aggressive)
            .field("strip_signatures", &self.strip_signatures)
            .field("strip_images", &self.strip_images)
            .finish()
    }
}

/// The shortest value [`Options::named`] takes: shorter ones would redact ordinary words.
pub const MIN_NAMED_LEN: usize = 4;

/// Finds and replaces secrets, the same way for every file of a run.
#[derive(Debug)]
pub struct Redactor {
    detector: detect::Detector,
    key: Key,
    options: Options,
}

/// One secret (or candidate, or stripped value) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The line, from 1.
    pub line: usize,
    /// The id of the line's entry, when it has one.
    pub entry_id: Option<String>,
    /// Where in the line: `message.content[0].text`; `→` steps into JSON held in a string;
    /// empty for a line that is not JSON.
    pub path: String,
    /// The rule's id, `named-secret`, `high-entropy`, `signature` or `image`.
    pub rule: String,
    /// Found by the entropy tier only.
    pub candidate: bool,
    /// Replaced in the output.
    pub redacted: bool,
}

/// What one file held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Every finding, in line order.
    pub findings: Vec<Finding>,
    /// Lines read.
    pub lines: usize,
    /// Lines written differently.
    pub lines_changed: usize,
}

impl Report {
    /// How many findings were replaced.
    pub fn redacted(&self) -> usize {
        self.findings.iter().filter(|f| f.redacted).count()
    }

    /// How many candidates were left in place.
    pub fn candidates_left(&self) -> usize {
        self.findings.iter().filter(|f| !f.redacted).count()
    }

    /// Replaced findings by rule, and candidates left by rule.
    pub fn by_rule(&self) -> BTreeMap<&str, (usize, usize)> {
        let mut counts = BTreeMap::new();
        for f in &self.findings {
            let entry: &mut (usize, usize) = counts.entry(f.rule.as_str()).or_default();
            if f.redacted {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
        counts
    }
}

/// Bytes of lines handed to the threads at a time: the memory a run holds, whatever the
/// file's size.
const BATCH_BYTES: usize = 32 << 20;

impl Redactor {
    /// A redactor with these options and placeholders keyed by `key`; named values shorter
    /// than [`MIN_NAMED_LEN`] bytes are ignored (the caller says so).
    pub fn new(mut options: Options, key: Key) -> Redactor {
        options.named.retain(|v| v.len() >= MIN_NAMED_LEN);
        options.named.sort();
        options.named.dedup();
        Redactor {
            detector: detect::Detector::new(rules::RuleSet::builtin(), &options.named),
            key,
            options,
        }
    }

    /// Redacts a whole file's bytes into `out`, line by line (lines split at `\n`, each kept
    /// with its ending; the lines of a batch on every core), and reports what it found.
    pub fn redact(&self, input: &[u8], out: &mut dyn Write) -> std::io::Result<Report> {
        self.redact_releasing(input, out, &|_| {})
    }

    /// [`Redactor::redact`], telling `release` each byte range of `input` it is done with
    /// (a caller with the file mapped drops those pages: memory stays flat in the file's
    /// size).
    pub fn redact_releasing(
        &self,
        input: &[u8],
        out: &mut dyn Write,
        release: &dyn Fn(std::ops::Range<usize>),
    ) -> std::io::Result<Report> {
        let mut report = Report::default();
        let mut start = 0;
        let mut first_line = 1;
        while start < input.len() {
            let end = batch_end(input, start);
            let batch = &input[start..end];
            let lines = lines(batch);
            let done: Vec<(Option<Vec<u8>>, Vec<Finding>)> = lines
                .par_iter()
                .enumerate()
                .map_init(detect::Scratch::default, |scratch, (i, line)| {
                    let body = line.strip_suffix(b"\n").unwrap_or(line);
                    let mut out = Vec::new();
                    let mut findings = Vec::new();
                    let changed =
                        self.redact_line(body, first_line + i, &mut out, &mut findings, scratch);
                    (changed.then_some(out), findings)
                })
                .collect();
            for (line, (changed, findings)) in lines.iter().zip(done) {
                match changed {
                    Some(new) => {
                        out.write_all(&new)?;
                        if line.ends_with(b"\n") {
                            out.write_all(b"\n")?;
                        }
                        report.lines_changed += 1;
                    }
                    None => out.write_all(line)?,
                }
                report.findings.extend(findings);
            }
            report.lines += lines.len();
            first_line += lines.len();
            release(start..end);
            start = end;
        }
        Ok(report)
    }

    /// Redacts one string (a title, a file name, text that is not a session): its secrets
    /// replaced, and what was found (line 1, no path).
    pub fn redact_text(&self, text: &str) -> (String, Vec<Finding>) {
        let mut out = Vec::new();
        let mut findings = Vec::new();
        let mut scratch = detect::Scratch::default();
        self.detector.find(text.as_bytes(), true, &mut scratch);
        let mut copied = 0;
        for hit in &scratch.hits {
            let redact = hit.finder != detect::Finder::Entropy || self.options.aggressive;
            findings.push(Finding {
                line: 1,
                entry_id: None,
                path: String::new(),
                rule: self.rule_id(hit.finder).to_owned(),
                candidate: hit.finder == detect::Finder::Entropy,
                redacted: redact,
            });
            if redact {
                out.extend_from_slice(&text.as_bytes()[copied..hit.span.start]);
                out.extend_from_slice(
                    self.key
                        .placeholder(self.rule_id(hit.finder), &text.as_bytes()[hit.span.clone()])
                        .as_bytes(),
                );
                copied = hit.span.end;
            }
        }
        out.extend_from_slice(&text.as_bytes()[copied..]);
        (String::from_utf8_lossy(&out).into_owned(), findings)
    }
}

/// The lines of `batch`, each with its `\n` (the last one may have none).
fn lines(batch: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::with_capacity(batch.len() / 512 + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', batch) {
        lines.push(&batch[start..=end]);
        start = end + 1;
    }
    if start < batch.len() {
        lines.push(&batch[start..]);
    }
    lines
}

/// The end of the batch starting at `start`: the first line end at or after
/// [`BATCH_BYTES`], or the end of the input.
fn batch_end(input: &[u8], start: usize) -> usize {
    let target = (start + BATCH_BYTES).min(input.len());
    match memchr::memchr(b'\n', &input[target..]) {
        Some(i) if target < input.len() => target + i + 1,
        _ => input.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_named_value() {
        let options = Options {
            named: vec![b"hunter2hunter2".to_vec()],
            ..Options::default()
        };
        let redactor = Redactor::new(
            options.clone(),
            Key::from_bytes(b"0123456789abcdef").unwrap(),
        );
        for shown in [format!("{options:?}"), format!("{redactor:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
    }
}
