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
mod env;
mod line;
mod placeholder;
pub mod rules;
mod slot;

pub use env::env_values;
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

/// A value given to redact by name that is shorter than [`MIN_NAMED_LEN`]: it would redact
/// ordinary text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooShort {
    /// Its length in bytes.
    pub len: usize,
}

impl std::fmt::Display for TooShort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a value of {} bytes would redact ordinary text; give at least {MIN_NAMED_LEN}",
            self.len
        )
    }
}

impl std::error::Error for TooShort {}

impl Options {
    /// Adds a value to redact wherever it is (`--secret`); one shorter than
    /// [`MIN_NAMED_LEN`] is refused.
    pub fn add_secret(&mut self, value: &[u8]) -> Result<(), TooShort> {
        if value.len() < MIN_NAMED_LEN {
            return Err(TooShort { len: value.len() });
        }
        self.named.push(value.to_vec());
        Ok(())
    }

    /// Adds the values of a `.env` file's text (`--secrets-from`, [`env_values`]); returns how
    /// many were left out as shorter than [`MIN_NAMED_LEN`].
    pub fn add_env_file(&mut self, text: &[u8]) -> usize {
        let (values, short) = env_values(text);
        self.named.extend(values);
        short
    }
}

/// Finds and replaces secrets, the same way for every file of a run.
#[derive(Debug)]
pub struct Redactor {
    detector: detect::Detector,
    key: Key,
    options: Options,
}

/// One secret (or candidate, or stripped value) found; serialised as the report's JSON has it
/// (`line`, `entryId`, `path`, `rule`, `candidate`, `redacted`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
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

/// The report as `pi-session redact --format json` and the bindings give it for a file:
/// `{"lines","linesChanged","redacted","candidatesLeft","rules":{RULE:{"redacted",
/// "candidates"}},"findings":[…]}`. Never a secret: rules, places and counts.
impl serde::Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        #[derive(serde::Serialize)]
        struct Count {
            redacted: usize,
            candidates: usize,
        }
        let rules: BTreeMap<&str, Count> = self
            .by_rule()
            .into_iter()
            .map(|(rule, (redacted, candidates))| {
                (
                    rule,
                    Count {
                        redacted,
                        candidates,
                    },
                )
            })
            .collect();
        let mut s = serializer.serialize_struct("Report", 6)?;
        s.serialize_field("lines", &self.lines)?;
        s.serialize_field("linesChanged", &self.lines_changed)?;
        s.serialize_field("redacted", &self.redacted())?;
        s.serialize_field("candidatesLeft", &self.candidates_left())?;
        s.serialize_field("rules", &rules)?;
        s.serialize_field("findings", &self.findings)?;
        s.end()
    }
}

/// Bytes of lines handed to the threads at a time: the memory a run holds, whatever the
/// file's size.
const BATCH_BYTES: usize = 32 << 20;
/// Bytes of lines one thread takes at a time from a batch.
const PIECE_BYTES: usize = 256 << 10;

/// What one thread made of a piece of lines.
struct Piece {
    output: Vec<u8>,
    findings: Vec<Finding>,
    lines: usize,
    lines_changed: usize,
}

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
        // An oh-my-pi file's first line, its fixed-width title slot, is written again at its
        // width (`omp::slot`).
        if let Some(slot) = slot::redact(self, input, &mut report) {
            out.write_all(&slot.line)?;
            start = slot.len;
        }
        while start < input.len() {
            let end = piece_end(input, start, BATCH_BYTES);
            // The batch in pieces of whole lines, each redacted by one thread into its own
            // output; written in order.
            let mut pieces = Vec::new();
            let mut at = start;
            while at < end {
                let to = piece_end(&input[..end], at, PIECE_BYTES);
                pieces.push(at..to);
                at = to;
            }
            let done: Vec<Piece> = pieces
                .into_par_iter()
                .map_init(detect::Scratch::default, |scratch, range| {
                    self.redact_piece(&input[range], scratch)
                })
                .collect();
            for piece in done {
                out.write_all(&piece.output)?;
                let first_line = report.lines + 1;
                report
                    .findings
                    .extend(piece.findings.into_iter().map(|mut f| {
                        f.line += first_line - 1;
                        f
                    }));
                report.lines += piece.lines;
                report.lines_changed += piece.lines_changed;
            }
            release(start..end);
            start = end;
        }
        Ok(report)
    }

    /// One piece of whole lines redacted: its output, and its findings numbered from its
    /// first line (1).
    fn redact_piece(&self, piece: &[u8], scratch: &mut detect::Scratch) -> Piece {
        let mut done = Piece {
            output: Vec::with_capacity(piece.len()),
            findings: Vec::new(),
            lines: 0,
            lines_changed: 0,
        };
        let mut line_out = Vec::new();
        for line in lines(piece) {
            done.lines += 1;
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if self.redact_line(body, done.lines, &mut line_out, &mut done.findings, scratch) {
                done.output.extend_from_slice(&line_out);
                if line.ends_with(b"\n") {
                    done.output.push(b'\n');
                }
                done.lines_changed += 1;
            } else {
                done.output.extend_from_slice(line);
            }
        }
        done
    }

    /// Redacts one string (a title, a file name, text that is not a session): its secrets
    /// replaced, and what was found (line 1, no path).
    pub fn redact_text(&self, text: &str) -> (String, Vec<Finding>) {
        let mut out = Vec::new();
        let mut findings = Vec::new();
        let mut scratch = detect::Scratch::default();
        self.detector.find(text.as_bytes(), true, &mut scratch);
        self.replace_hits(
            text.as_bytes(),
            scratch.hits,
            |hit| {
                let redact = self.takes(hit);
                findings.push(self.finding(hit, 1, String::new(), redact));
                redact
            },
            &mut out,
        );
        (String::from_utf8_lossy(&out).into_owned(), findings)
    }
}

/// The lines of `piece`, each with its `\n` (the last one may have none).
fn lines(piece: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', piece).chain(std::iter::once(piece.len()));
    ends.filter_map(move |end| {
        let line = &piece[start..(end + 1).min(piece.len())];
        start = end + 1;
        (!line.is_empty()).then_some(line)
    })
}

/// The end of the piece of `size` bytes starting at `start`: just after the first line end at
/// or after `start + size`, or the end of the input.
fn piece_end(input: &[u8], start: usize, size: usize) -> usize {
    let target = (start + size).min(input.len());
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
    /// Named values: a short one refused with what to do, a `.env` file's short ones counted.
    #[test]
    fn named_values_are_long_enough() {
        let mut options = Options::default();
        let e = options.add_secret(b"abc").expect_err("too short");
        assert_eq!(
            e.to_string(),
            "a value of 3 bytes would redact ordinary text; give at least 4"
        );
        options.add_secret(b"abcd").expect("long enough");
        let short = options.add_env_file(b"A=xy\nexport B=\"s3cr3t-value\"\n# C=commented\n");
        assert_eq!(short, 1);
        assert_eq!(options.named, [b"abcd".to_vec(), b"s3cr3t-value".to_vec()]);
    }
}
