//! Validation: every problem of a session file, with a stable code, and three verdicts, each
//! the answer to a user's question — *strict* (does the file follow the format?),
//! *pi-loadable* (does pi read everything in it: no entry hidden from its tree, no line
//! dropped, no rewrite, no refusal, crash or hang?) and *pi-resumes* (does pi resume the conversation the file holds: is the context pi
//! builds on opening it that of the file's last entry? `resume.rs`, PS0226). Both pi verdicts
//! are measured against the pinned pi on the corpus (`conformance/validate/*/pi.json`).
//!
//! [`validate`] reads the file the way pi does ([`pi_session_format::read`]) and works in three passes:
//!
//! 1. the header: the first JSON value, its fields and version (`validate/header.rs`);
//! 2. every line, in parallel: JSON, encoding and line endings, the line's JSON Schema
//!    ([`schema`]) and the checks one entry allows on its own (`validate/entry.rs`); each line leaves a
//!    few facts (`id`, `parentId`, tool call ids, …) for
//! 3. the tree: duplicate ids, dangling parents, cycles, compaction windows, labels and tool
//!    results on their path (`validate/tree.rs`), and the file's name and directory (`validate/layout.rs`).
//!
//! The catalogue of codes is [`Code`]; `docs/diagnostics.md` documents each one.

mod aggregate;
mod catalogue;
mod entry;
mod header;
mod layout;
mod lines;
mod locate;
mod output;
mod parsed;
pub mod repair;
mod report;
mod resume;
pub mod schema;
pub mod schemas;
mod tree;

pub use aggregate::LISTED_PER_CODE;
pub use catalogue::{Code, CodeInfo, PiEffect, Severity};
pub use output::{FORMAT_VERSION, FileReport, Summary, Tool, ValidateReport, VerdictMode};
pub use report::{Diagnostic, Location, Report, Stats, Verdict};

use pi_session_format::{Dialect, PiVersion};
use std::path::Path;

/// The longest string Node can make (`0x1fffffe8` UTF-16 units): pi's `readFileSync` throws on
/// a file whose text is longer.
pub const PI_MAX_TEXT_UNITS: usize = 0x1fff_ffe8;

/// Options of [`validate`].
#[derive(Debug, Clone)]
pub struct Options<'p> {
    /// Whose behaviour the pi-loadable verdict describes.
    pub pi: PiVersion,
    /// Where the file is, for the checks of its name and directory (none without it).
    pub path: Option<&'p Path>,
    /// Only the JSON Schemas: report lines that are not JSON and schema violations, nothing
    /// else (the `--schema-only` verdict).
    pub schema_only: bool,
    /// The text length (in UTF-16 units) above which pi cannot read the file; always
    /// [`PI_MAX_TEXT_UNITS`] except in tests, which cannot hold a 512 MiB file.
    pub max_text_units: usize,
    /// Whose format the file is checked against: [`Dialect::Pi`] (the default: does pi read
    /// it?) or [`Dialect::Omp`], where oh-my-pi's title slot, header members and entry types
    /// are known and every other check is pi's. Read as pi's, a file recognisably oh-my-pi's
    /// gets one diagnostic that says so (PS0111 or PS0112), not one per oh-my-pi entry.
    pub dialect: Dialect,
    /// With [`Dialect::Omp`]: the blob store the file's `blob:sha256:` image references are
    /// looked up in (each one it lacks is [`Code::OmpBlobMissing`]); `None`: not checked.
    pub blobs: Option<&'p pi_session_format::omp::Blobs>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            pi: PiVersion::default(),
            path: None,
            schema_only: false,
            max_text_units: PI_MAX_TEXT_UNITS,
            dialect: Dialect::Pi,
            blobs: None,
        }
    }
}

/// Validates a session file's bytes.
///
/// The report lists at most [`LISTED_PER_CODE`] diagnostics of each code; further
/// occurrences are summarised (see [`Diagnostic::omitted`]), so that memory stays bounded
/// whatever the file.
pub fn validate(bytes: &[u8], options: &Options<'_>) -> Report {
    let mut stats = report::Stats {
        bytes: bytes.len(),
        lines: memchr::memchr_iter(b'\n', bytes).count()
            + usize::from(bytes.last().is_some_and(|&b| b != b'\n')),
        ..Default::default()
    };
    let mut first = Vec::new();
    if !options.schema_only {
        first.extend(too_large(bytes, options.max_text_units));
    }
    let header = header::find(bytes, options);
    stats.version = header.version();
    let scanned = lines::scan(bytes, &header, options);
    stats.entries = scanned.facts.iter().filter(|f| f.is_entry()).count();
    let mut diagnostics = aggregate::Sink::default();
    diagnostics.extend(first);
    diagnostics.absorb(scanned.diagnostics);
    if !options.schema_only {
        let mut of_header = header::check(bytes, &header, &scanned.facts, options);
        if options.dialect == Dialect::Pi {
            header::omp_file(bytes, &header, &scanned.facts, &mut of_header);
        }
        diagnostics.extend(of_header);
        // Without a header pi discards the file: its tree does not matter.
        if header.valid().is_some() {
            tree::check(bytes, &scanned.facts, &header, options, &mut diagnostics);
        }
        if let Some(path) = options.path {
            diagnostics.extend(layout::check(path, &header));
        }
    }
    let mut diagnostics = diagnostics.finish();
    if let Some(last) = scanned.facts.iter().rev().find(|f| f.is_entry()) {
        no_leaf(last, &mut diagnostics);
    }
    if !options.schema_only
        && let Some(d) = resume::check(bytes, options, &diagnostics)
    {
        diagnostics.push(d);
    }
    Report::new(diagnostics, stats)
}

/// A non-object last entry leaves pi without a leaf: its diagnostic says so.
fn no_leaf(last: &entry::Facts, diagnostics: &mut [Diagnostic]) {
    let on_last = |d: &&mut Diagnostic| {
        d.code == Code::NonObjectLine && d.location.is_some_and(|l| l.line == last.line)
    };
    if let Some(d) = diagnostics.iter_mut().find(on_last)
        && d.pi < PiEffect::Altered
    {
        d.pi = PiEffect::Altered;
        d.message.push_str(
            "; as the last entry it leaves pi without a leaf, so the session's context is empty",
        );
    }
}

/// [`Code::FileTooLarge`]: the decoded text is longer than Node can hold in a string.
fn too_large(bytes: &[u8], max_units: usize) -> Option<Diagnostic> {
    // Every byte decodes to at most one UTF-16 unit, so only large files need counting.
    if bytes.len() <= max_units {
        return None;
    }
    let units = utf16_len(bytes);
    (units > max_units).then(|| {
        Diagnostic::new(
            Code::FileTooLarge,
            None,
            format!(
                "the file decodes to {units} UTF-16 units, more than the {max_units} pi can read: pi cannot open it"
            ),
        )
    })
}

/// The length in UTF-16 units of the bytes decoded as UTF-8 with replacement characters.
fn utf16_len(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|chunk| {
            let valid = chunk.valid();
            // A 4-byte sequence is two units; every other character one.
            let chars = valid.len() - valid.bytes().filter(|b| (b & 0xC0) == 0x80).count();
            let astral = valid.bytes().filter(|&b| b >= 0xF0).count();
            chars + astral + usize::from(!chunk.invalid().is_empty())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_length_counts_like_javascript() {
        assert_eq!(utf16_len(b"abc"), 3);
        assert_eq!(utf16_len("é😀".as_bytes()), 3);
        assert_eq!(utf16_len(b"a\xFF\xC3(b"), 5); // a, U+FFFD, U+FFFD, (, b
    }

    #[test]
    fn too_large_is_reported_above_the_limit_only() {
        assert!(too_large(b"12345", 5).is_none());
        let d = too_large(b"123456", 5).unwrap();
        assert_eq!(d.code, Code::FileTooLarge);
        assert_eq!(d.pi, PiEffect::Unreadable);
        // Multi-byte characters count once.
        assert!(too_large("ééé".as_bytes(), 5).is_none());
    }
}
