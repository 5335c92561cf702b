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

use pi_session_format::session::ReadAt;
use pi_session_format::{Dialect, PiVersion, read};
use pi_session_fs::input::Input;
use rayon::prelude::*;
use std::io;
use std::ops::Range;
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
    /// Called with each byte range of the input the validator is done reading for now (from
    /// any thread), as `Loader::releasing` of pi-session-format is: a caller that maps a file
    /// can let its pages go, so that validating a file of gigabytes does not hold it. The
    /// bytes stay borrowed (a later check may read some again).
    pub release: Option<Release<'p>>,
    /// Positioned reads of the file the bytes map (`read_at(buf, at)` fills `buf` with the
    /// bytes at `at`, `false` when it cannot), for the session the validator loads to see
    /// what pi resumes: it then reads small copies instead of bringing the mapped pages in
    /// (`Loader::reading` of pi-session-format). [`validate_input`] sets it.
    pub read_at: Option<Reading<'p>>,
}

/// A caller's way to let go of the input's bytes the validator is done reading for now
/// (the `release` of [`Options`]): called with each such byte range, from any thread.
#[derive(Clone, Copy)]
pub struct Release<'p>(pub &'p (dyn Fn(Range<usize>) + Sync));

/// A caller's positioned reads of the file the validator's bytes map (the `read_at` of
/// [`Options`]).
#[derive(Clone, Copy)]
pub struct Reading<'p>(pub &'p ReadAt<'p>);

impl std::fmt::Debug for Reading<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reading(..)")
    }
}

impl std::fmt::Debug for Release<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Release(..)")
    }
}

impl Options<'_> {
    /// Lets go of `range` of the input, when the caller asked ([`Options::release`]).
    pub(crate) fn let_go(&self, range: Range<usize>) {
        if let Some(Release(release)) = self.release {
            release(range);
        }
    }
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
            release: None,
            read_at: None,
        }
    }
}

/// Validates a session file's bytes.
///
/// The report lists at most [`LISTED_PER_CODE`] diagnostics of each code; further
/// occurrences are summarised (see [`Diagnostic::omitted`]), so that memory stays bounded
/// whatever the file.
pub fn validate(bytes: &[u8], options: &Options<'_>) -> Report {
    let measured = Measured::of(bytes, options);
    let mut stats = report::Stats {
        bytes: bytes.len(),
        lines: measured.lines,
        ..Default::default()
    };
    let mut first = Vec::new();
    if !options.schema_only {
        first.extend(measured.too_large(options.max_text_units));
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

/// Validates the file `input` holds, its pages let go as the validator is done with them
/// (`options.release` is set here), then checks the file did not shrink meanwhile: a file
/// that did is an error (what a torn read gave is not a report of the file).
pub fn validate_input(input: &Input, options: &Options<'_>) -> io::Result<Report> {
    let release = |range| input.release(range);
    let options = Options {
        release: Some(Release(&release)),
        read_at: Some(Reading(input)),
        ..options.clone()
    };
    let report = validate(input.bytes(), &options);
    input.verify().map(|()| report)
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

/// What one pass over the whole file measures: its lines, and (for a file that may be too
/// large for pi) its length in UTF-16 units.
struct Measured {
    lines: usize,
    /// `None` for a file no longer than the limit in bytes: every byte decodes to at most one
    /// UTF-16 unit, so only larger files need counting.
    units: Option<usize>,
}

impl Measured {
    /// Measures `bytes` in pieces on every core, each let go once measured. A piece ends
    /// after a newline: no character, and no invalid sequence, spans one.
    fn of(bytes: &[u8], options: &Options<'_>) -> Measured {
        let pieces = read::cut_after_newlines(bytes, 0..bytes.len(), 16 << 20);
        let count_units = bytes.len() > options.max_text_units;
        let (newlines, units) = pieces
            .into_par_iter()
            .map(|piece| {
                let text = &bytes[piece.clone()];
                let newlines = memchr::memchr_iter(b'\n', text).count();
                let units = if count_units { utf16_len(text) } else { 0 };
                options.let_go(piece);
                (newlines, units)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        Measured {
            lines: newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n')),
            units: count_units.then_some(units),
        }
    }

    /// [`Code::FileTooLarge`]: the decoded text is longer than Node can hold in a string.
    fn too_large(&self, max_units: usize) -> Option<Diagnostic> {
        let units = self.units.filter(|&units| units > max_units)?;
        Some(Diagnostic::new(
            Code::FileTooLarge,
            None,
            format!(
                "the file decodes to {units} UTF-16 units, more than the {max_units} pi can read: pi cannot open it"
            ),
        ))
    }
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
        let too_large = |bytes: &[u8], max_text_units| {
            let options = Options {
                max_text_units,
                ..Options::default()
            };
            Measured::of(bytes, &options).too_large(max_text_units)
        };
        assert!(too_large(b"12345", 5).is_none());
        let d = too_large(b"123456", 5).unwrap();
        assert_eq!(d.code, Code::FileTooLarge);
        assert_eq!(d.pi, PiEffect::Unreadable);
        // Multi-byte characters count once.
        assert!(too_large("ééé".as_bytes(), 5).is_none());
    }

    /// Measured in pieces that end after a newline, a file over several pieces counts as it
    /// does whole, whatever characters and invalid bytes sit at the pieces' edges, and each
    /// byte is let go once.
    #[test]
    fn a_file_is_measured_in_pieces_as_whole() {
        let mut bytes = Vec::new();
        let mut n = 0u32;
        while bytes.len() < 40 << 20 {
            n += 1;
            bytes.extend_from_slice(match n % 4 {
                0 => "é😀\n".as_bytes(),
                1 => b"a\xFF\xC3\n",
                2 => "\u{2028}x\n".as_bytes(),
                _ => b"plain text line\n",
            });
        }
        let released = std::sync::Mutex::new(Vec::new());
        let release = |range: Range<usize>| released.lock().unwrap().push(range);
        let options = Options {
            max_text_units: 1000,
            release: Some(Release(&release)),
            ..Options::default()
        };
        let measured = Measured::of(&bytes, &options);
        assert_eq!(measured.units, Some(utf16_len(&bytes)));
        assert_eq!(measured.lines, n as usize);
        let d = measured.too_large(1000).unwrap();
        assert!(
            d.message
                .contains(&format!("{} UTF-16 units", utf16_len(&bytes)))
        );
        let mut released = released.into_inner().unwrap();
        released.sort_by_key(|r| r.start);
        assert!(released.len() >= 2, "{released:?}");
        assert_eq!(released.first().unwrap().start, 0);
        assert_eq!(released.last().unwrap().end, bytes.len());
        assert!(released.windows(2).all(|w| w[0].end == w[1].start));
    }
}
