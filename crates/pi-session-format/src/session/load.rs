//! The loader: the file cut into pieces scanned in parallel (borrowed, or read through small
//! buffers), the header checked, the version read, v1/v2 migrated (rules P6–P9, V1–V4).

use super::key::{Key, KeyBytes, quoted};
use super::record::{Kind, Record, Text};
use super::records::Records;
use super::rewrite::Plan;
use super::{Migration, Session};
use crate::json::{self, JsValue, LineScanner, ParseError, Span};
use crate::migrate::IdGenerator;
use crate::omp::TitleSlot;
use crate::read::{self, Line};
use crate::{Dialect, PiVersion};
use rayon::prelude::*;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::OnceLock;

/// A line that is not JSON (pi drops it silently).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedLine {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line in the file.
    pub offset: usize,
    /// 1-based column (in characters) where parsing failed.
    pub column: usize,
    /// Why it is not JSON (`error.offset` is within the line).
    pub error: ParseError,
    /// Length of the line in bytes.
    pub len: usize,
}

/// Why a file cannot be loaded as a session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The file has no parseable line at all (pi 0.73.1 rewrites it to a fresh header; pi
    /// 0.87.1 does so only for an empty file and refuses any other; omp starts a new session
    /// in a file of blank lines and refuses any other).
    Empty {
        /// Whose rules the file was loaded with.
        pi: PiVersion,
        /// Whether the program takes the file for a new session: pi when it has no bytes at
        /// all, omp when it has nothing but blank lines (and its title slot).
        blank: bool,
        /// The dialect the file was read in.
        dialect: Dialect,
    },
    /// The first parseable value is not an object with `type: "session"` and a string `id`
    /// (pi 0.73.1 truncates the file to a fresh header, pi 0.87.1 refuses to open it; we
    /// refuse and leave it untouched).
    InvalidHeader {
        /// Line of the first parseable value (the value starts at its first column).
        line: usize,
        /// What is wrong with it.
        reason: HeaderProblem,
        /// Whose rules the file was loaded with.
        pi: PiVersion,
        /// The dialect the file was read in.
        dialect: Dialect,
    },
    /// The file is in another dialect than the one it was read as, and that is why it does
    /// not load: an oh-my-pi file whose first line is omp's title slot, read as pi's.
    OtherDialect {
        /// The line that shows it.
        line: usize,
        /// The file's dialect.
        dialect: Dialect,
        /// How it shows ("line 1 is omp's title slot").
        sign: String,
    },
}

impl LoadError {
    /// A stable name for the error, the same in every binding: the validator's diagnostic
    /// code (`PS0101`: no session header, the file has no JSON line; `PS0102`: the first
    /// value is not a session header).
    pub fn code(&self) -> &'static str {
        match self {
            LoadError::Empty { .. } => "PS0101",
            LoadError::InvalidHeader { .. } => "PS0102",
            LoadError::OtherDialect { .. } => "wrong-dialect",
        }
    }
}

/// What is wrong with the first value of a file that is not a session header
/// ([`LoadError::InvalidHeader`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderProblem {
    /// `type` is `"session"` but `id` is not a string: `found` is the `id` as JSON
    /// (`undefined` when absent).
    IdNotString {
        /// The `id` member as written, shortened.
        found: String,
    },
    /// `type` is a string other than `"session"`.
    NotSession {
        /// The `type` member as a quoted JSON string, shortened.
        found: String,
    },
    /// An object without a string `type`.
    NoType,
    /// The value is `null` (pi throws a `TypeError` reading its `type`).
    Null,
    /// The value is not an object.
    NotAnObject,
}

impl fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderProblem::IdNotString { found } => {
                write!(f, "`id` must be a string, found {found}")
            }
            HeaderProblem::NotSession { found } => {
                write!(f, "`type` is {found}, expected \"session\"")
            }
            HeaderProblem::NoType => f.write_str("the first JSON line has no string `type`"),
            HeaderProblem::Null => {
                f.write_str("the first JSON line is `null` (pi throws a TypeError)")
            }
            HeaderProblem::NotAnObject => f.write_str("the first JSON line is not an object"),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REFUSED: &str = "pi 0.87.1 refuses to open it: \"not a valid pi session\"";
        const OMP_REFUSES: &str =
            "omp refuses to resume it: \"the session header is missing or malformed\"";
        match self {
            LoadError::Empty {
                dialect: Dialect::Omp,
                blank,
                ..
            } => {
                if *blank {
                    f.write_str(
                        "no session header: the file holds no entry (omp would start a new \
                         session in it, rewriting the file)",
                    )
                } else {
                    write!(
                        f,
                        "no session header: the file has no JSON line ({OMP_REFUSES})"
                    )
                }
            }
            LoadError::Empty { pi, blank, .. } => {
                let effect = if pi.reads_like_0_87() && !blank {
                    REFUSED
                } else {
                    "pi would overwrite it with a new, empty session"
                };
                write!(f, "no session header: the file has no JSON line ({effect})")
            }
            LoadError::InvalidHeader {
                line,
                reason,
                dialect: Dialect::Omp,
                ..
            } => {
                // omp does not throw on a `null` header: `entry?.type` is `undefined`.
                let reason = match reason {
                    HeaderProblem::Null => "the first JSON line is `null`".to_owned(),
                    reason => reason.to_string(),
                };
                write!(
                    f,
                    "line {line}: not a valid session header: {reason} ({OMP_REFUSES})"
                )
            }
            LoadError::InvalidHeader {
                line, reason, pi, ..
            } => {
                let effect = if pi.reads_like_0_87() {
                    REFUSED
                } else {
                    "pi would truncate the file to a new, empty session"
                };
                write!(
                    f,
                    "line {line}: not a valid session header: {reason} ({effect})"
                )
            }
            LoadError::OtherDialect {
                line,
                dialect,
                sign,
            } => write!(
                f,
                "line {line}: this is an {} session file, not pi's ({sign}): read it with `--dialect {}`",
                dialect.program(),
                dialect.name()
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// A `null` line or a non-object line that pi would crash on, skipped by us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedValue {
    /// 1-based line number.
    pub line: usize,
    /// Why pi cannot handle it.
    pub reason: &'static str,
    /// Where the line is, when it is not among the records (pi 0.87.1's falsy lines), so
    /// that a rewrite can keep it byte for byte: byte offset and length.
    pub verbatim: Option<(usize, usize)>,
}

/// How the version of the file was read and what loading did about it.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionInfo {
    /// `header.version` converted as JavaScript's comparisons do (`NaN` when not numeric).
    pub effective: f64,
    /// Whether v1→v2 ran.
    pub migrated_v1: bool,
    /// Whether v2→v3 ran.
    pub migrated_v2: bool,
    /// Whether pi would rewrite the file after loading (any version below 3, or not a number).
    pub rewrite: bool,
}

impl VersionInfo {
    /// What loading does with a file whose `header.version` converts to `effective`.
    pub fn of(effective: f64) -> VersionInfo {
        VersionInfo {
            effective,
            migrated_v1: effective < 2.0,
            migrated_v2: effective < 3.0,
            // `!(version >= 3)`: NaN versions are rewritten too.
            rewrite: effective.partial_cmp(&3.0).is_none_or(|o| o.is_lt()),
        }
    }
}

/// Options for the loader (what [`Session::loader`] gathers).
pub(crate) struct LoadOptions<'g> {
    /// Generates ids for the v1→v2 migration.
    pub ids: &'g mut dyn IdGenerator,
    /// Whose loading rules to follow.
    pub pi: PiVersion,
    /// The file's dialect: omp's files may start with a title slot, which is not a record.
    pub dialect: Dialect,
}

impl<'a> Session<'a> {
    /// Loads a session from its bytes with `pi`'s rules, as pi's `SessionManager.open`
    /// does (a v1/v2 file is migrated in memory, its new ids random). The session remembers
    /// the rules: its answers ([`Session::context`], [`Session::info`], ...) follow them.
    ///
    /// `Session::loader(pi).load(bytes)`, the simplest [`Session::loader`];
    /// [`Session::open`] reads a file into a session that owns its bytes.
    pub fn from_bytes(bytes: &'a [u8], pi: PiVersion) -> Result<Session<'a>, LoadError> {
        Session::loader(pi).load(bytes)
    }

    /// Loads a session from its bytes (the crate's tests; users have [`Session::loader`]).
    #[cfg(test)]
    pub(crate) fn load_with(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
    ) -> Result<Session<'a>, LoadError> {
        Self::load_releasing(bytes, options, &|_| {})
    }

    /// Like [`Session::load_with`], calling `release(range)` for each byte range of the
    /// input the loader is done with, as soon as it is done with it (from any thread, in no
    /// particular order). The records still borrow those bytes: a caller that maps a file
    /// can drop the pages of the range from memory (they are read again if a record's text
    /// is needed later), so that loading a file never holds much more of it than a few
    /// megabytes at a time.
    #[cfg(test)]
    pub(crate) fn load_releasing(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        release: &(dyn Fn(Range<usize>) + Sync),
    ) -> Result<Session<'a>, LoadError> {
        Self::load_from(bytes, options, Pieces::Borrowed(release))
    }

    /// Like [`Session::load_with`], but the loader does not read `bytes` itself: it has
    /// `read_at(buf, at)` fill small per-thread buffers with `bytes[at..at + buf.len()]`
    /// (say with a positioned read of the file `bytes` maps) and scans those, validating the
    /// text as UTF-8 as it goes. The records still borrow `bytes`, but only the records whose
    /// text is asked for later (the entries on the context's path, say) touch them, so a
    /// caller that maps a file never has most of its pages brought into memory: a record's
    /// text is read again with `read_at` the first time it is asked for. `read_at` returns
    /// `false` when it could not read; the loader then copies from `bytes`.
    #[cfg(test)]
    pub(crate) fn load_reading(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        read_at: &'a ReadAt<'a>,
    ) -> Result<Session<'a>, LoadError> {
        Self::load_from(bytes, options, Pieces::Read(read_at))
    }

    pub(super) fn load_from(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        pieces: Pieces<'_, 'a>,
    ) -> Result<Session<'a>, LoadError> {
        let mut session = Self::load_unmigrated(bytes, options.pi, options.dialect, pieces)?;
        let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
        if v1 || v2 {
            session.migrate(v1, v2, options.ids);
        }
        Ok(session)
    }

    /// Loads for rewriting (`pi-session migrate`): like [`Session::load_releasing`], but a
    /// v1/v2 file is not migrated in memory. [`Migration::write`] migrates it line by line
    /// into a writer, so memory holds the skeleton and the ids, not the file's values.
    #[cfg(test)]
    pub(crate) fn load_for_migration(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        release: &(dyn Fn(Range<usize>) + Sync),
    ) -> Result<Migration<'a>, LoadError> {
        Self::load_for_migration_from(bytes, options, Pieces::Borrowed(release))
    }

    pub(super) fn load_for_migration_from(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        pieces: Pieces<'_, 'a>,
    ) -> Result<Migration<'a>, LoadError> {
        let session = Self::load_unmigrated(bytes, options.pi, options.dialect, pieces)?;
        let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
        let plan = Plan::new(&session.records, v1, v2, options.ids);
        Ok(Migration { session, plan })
    }

    /// The version of the file, from its header alone (the first line that parses, as pi
    /// reads it): whether loading it migrates and rewrites it. The same error as loading
    /// when there is no valid header.
    pub fn read_version(bytes: &[u8], pi: PiVersion) -> Result<VersionInfo, LoadError> {
        let mut scanner = LineScanner::default();
        for line in read::lines_with(bytes, read::Edges::of(pi, Dialect::Pi)) {
            let Ok(record) = scan(&mut scanner, line, Text::new) else {
                continue;
            };
            if pi.reads_like_0_87() && matches!(record.kind, Kind::Null | Kind::Falsy) {
                continue;
            }
            check_header(&record, pi, Dialect::Pi)?;
            return Ok(VersionInfo::of(version_number(
                record.value().get("version"),
            )));
        }
        Err(LoadError::Empty {
            pi,
            blank: bytes.is_empty(),
            dialect: Dialect::Pi,
        })
    }

    /// Loads without running the migrations: records are as read.
    pub(super) fn load_unmigrated(
        bytes: &'a [u8],
        pi: PiVersion,
        dialect: Dialect,
        pieces: Pieces<'_, 'a>,
    ) -> Result<Session<'a>, LoadError> {
        let current = pi.reads_like_0_87();
        let edges = read::Edges::of(pi, dialect);
        // The text is cut into pieces and each piece is split and scanned on its own core;
        // results come back in file order. Pieces are small so that the part of the input
        // being read at any time stays small too.
        let threads = rayon::current_num_threads();
        let step = (bytes.len() / (threads * 8).max(1)).clamp(1 << 16, PIECE_MAX);
        let (first_line, scanned) = match pieces {
            Pieces::Borrowed(release) => {
                // Cut at line boundaries.
                let (first_line, pieces) = read::split_relative(bytes, edges, step);
                let scanned: Vec<Piece<'a>> = pieces
                    .into_par_iter()
                    .map(|mut lines| {
                        let range = lines.range();
                        let mut scanner = LineScanner::default();
                        let mut piece = Piece::default();
                        for line in lines.by_ref() {
                            match scan(&mut scanner, line, Text::new) {
                                Ok(record) => piece.records.push(record),
                                Err(d) => piece.dropped.push(d),
                            }
                        }
                        piece.newlines = lines.newlines();
                        release(range);
                        piece
                    })
                    .collect();
                (first_line, scanned)
            }
            Pieces::Read(read_at) => {
                // Cut anywhere: a piece reads the lines that start in it.
                let (region, first_line) = read::region(bytes, edges);
                let starts: Vec<usize> = region.clone().step_by(step).collect();
                let scanned: Vec<Piece<'a>> = starts
                    .into_par_iter()
                    .map_init(
                        || (LineScanner::default(), Vec::new()),
                        |(scanner, buf), start| {
                            let reader = Reader {
                                source: bytes,
                                read_at,
                                region: region.clone(),
                            };
                            reader.piece(start..(start + step).min(region.end), scanner, buf)
                        },
                    )
                    .collect();
                (first_line, scanned)
            }
        };
        // Each piece numbered its lines from 0: shift them by the lines of the pieces
        // before, on every core (this touches every record once; the records themselves stay
        // where the workers wrote them).
        let mut base = first_line;
        let mut scanned: Vec<(usize, Piece<'a>)> = scanned
            .into_iter()
            .map(|piece| {
                let start = base;
                base += piece.newlines;
                (start, piece)
            })
            .collect();
        scanned.par_iter_mut().for_each(|(base, piece)| {
            for record in &mut piece.records {
                record.line += *base;
            }
            for d in &mut piece.dropped {
                d.line += *base;
            }
            // pi 0.87.1 keeps only truthy values (`if (entry) entries.push(entry)`); omp keeps
            // every value, and throws on a `null` one (`entry.type`): left out, and said.
            let (omp, leaves_out) = (dialect == Dialect::Omp, current || dialect == Dialect::Omp);
            if leaves_out {
                piece.records.retain(|record| {
                    let left_out = match record.kind {
                        Kind::Null => true,
                        Kind::Falsy => !omp,
                        _ => false,
                    };
                    if left_out {
                        // A falsy value's text is ASCII (`null`, `false`, `0`, `""` and
                        // JSON whitespace), so its decoded length is its length in the file.
                        piece.skipped.push(SkippedValue {
                            line: record.line,
                            reason: if omp {
                                "a null JSON value (omp throws a TypeError on it)"
                            } else {
                                "a falsy JSON value (pi 0.87.1 ignores it)"
                            },
                            verbatim: Some((record.offset, record.text().len())),
                        });
                    }
                    !left_out
                });
            }
        });
        // omp peels its title slot off the first line before parsing: it is not a record.
        let title_slot = match dialect {
            Dialect::Omp => TitleSlot::of_file(bytes),
            Dialect::Pi => None,
        };
        // (It starts the file, after the BOM omp's reading drops.)
        let slot_offset = if bytes.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        if title_slot.is_some()
            && let Some((_, first)) = scanned.iter_mut().find(|(_, p)| !p.records.is_empty())
            && first.records[0].offset == slot_offset
        {
            first.records.remove(0);
        }
        let mut dropped = Vec::new();
        let mut skipped = Vec::new();
        let mut chunks = Vec::with_capacity(scanned.len());
        for (_, piece) in scanned {
            dropped.extend(piece.dropped);
            skipped.extend(piece.skipped);
            chunks.push(piece.records);
        }
        // omp reads what `JSON.parse` refuses with Bun's JSONL parser.
        if dialect == Dialect::Omp {
            bun_lines::recover(bytes, &mut chunks, &mut dropped);
        }
        let records = Records::from_chunks(chunks);
        // omp's first value is its header even when it is `null` (left out of the records).
        if dialect == Dialect::Omp
            && let Some(null) = skipped
                .iter()
                .map(|s| s.line)
                .filter(|line| records.first().is_none_or(|h| *line < h.line))
                .min()
        {
            return Err(LoadError::InvalidHeader {
                line: null,
                reason: HeaderProblem::Null,
                pi,
                dialect,
            });
        }
        let header = records.first().ok_or(LoadError::Empty {
            pi,
            // omp starts a new session where it finds no value and no malformed line.
            blank: match dialect {
                Dialect::Pi => bytes.is_empty(),
                Dialect::Omp => dropped.is_empty(),
            },
            dialect,
        })?;
        if let Err(e) = check_header(header, pi, dialect) {
            // A file omp wrote starts with its title slot: when that slot is what pi read
            // first, say so, not that the header is bad (pi 0.87 drops a slot behind a byte
            // order mark, and then the header it reads is what is wrong).
            return Err(match (dialect, TitleSlot::of_file(bytes)) {
                (Dialect::Pi, Some(_)) if header.line == 1 => LoadError::OtherDialect {
                    line: 1,
                    dialect: Dialect::Omp,
                    sign: "line 1 is omp's title slot".into(),
                },
                _ => e,
            });
        }
        let header_value = header.value();
        let effective = version_number(header_value.get("version"));
        drop(header_value);
        let version = VersionInfo::of(effective);
        let migrate_v1 = version.migrated_v1;
        let mut session = Session {
            source: bytes,
            pi,
            records,
            entries: Vec::new(),
            dropped,
            skipped,
            version,
            plan: Plan::identity(),
            index: OnceLock::new(),
            mtime_ms: None,
            dialect,
            title_slot,
        };
        for (i, r) in session.records.iter().enumerate() {
            let reason = match r.kind {
                // omp keeps a later `session` line as an entry (only the first is the header).
                Kind::Header if i == 0 || dialect == Dialect::Pi => continue,
                Kind::Null => "a `null` line (pi throws a TypeError on it)",
                Kind::Other | Kind::Falsy if migrate_v1 => {
                    "a non-object line in a v1 file (pi's migration throws a TypeError on it)"
                }
                _ => {
                    session.entries.push(i);
                    continue;
                }
            };
            session.skipped.push(SkippedValue {
                line: r.line,
                reason,
                verbatim: None,
            });
        }
        Ok(session)
    }

    /// Runs v1→v2 and v2→v3 on the records without building most values: pi migrates its
    /// array of every parsed value (header included), and the only state it carries from one
    /// entry to the next is the ids handed out, which [`Plan`] assigns on the skeleton. An
    /// entry whose migration is no more than its fresh `id` and `parentId` keeps its text and
    /// takes them as its keys; [`Record::value`] sets them when it parses the text. The
    /// others (the header, a v1 compaction whose `firstKeptEntryIndex` names an entry by its
    /// position, a v2 message whose role may be renamed) are migrated now, every one before
    /// any record changes: a compaction may name a later entry by its original id.
    fn migrate(&mut self, v1: bool, v2: bool, ids: &mut dyn IdGenerator) {
        let plan = Plan::new(&self.records, v1, v2, ids);
        let mut parent: Option<usize> = None;
        let mut materialised: Vec<(usize, JsValue)> = Vec::new();
        for (i, r) in self.records.iter().enumerate() {
            if matches!(r.kind, Kind::Header | Kind::Entry { .. })
                && !plan.keeps_text(&self.records, i)
            {
                let mut value = r.value().into_owned();
                plan.apply(
                    &self.records,
                    i,
                    parent.and_then(|p| plan.id(p)),
                    &mut value,
                );
                materialised.push((i, value));
            }
            if plan.id(i).is_some() {
                parent = Some(i);
            }
        }
        let mut materialised = materialised.into_iter().peekable();
        let mut parent: Option<&KeyBytes> = None;
        for (i, record) in self.records.iter_mut().enumerate() {
            if let Some((_, value)) = materialised.next_if(|(m, _)| *m == i) {
                record.set_value(value);
            } else if let Some(id) = plan.key(i) {
                record.id = Key::String(id.clone());
                record.parent_id = parent.map_or(Key::Null, |p| Key::String(p.clone()));
                record.fresh_ids = true;
            }
            if let Some(id) = plan.key(i) {
                parent = Some(id);
            }
        }
        self.plan = plan;
    }
}

/// The largest piece of input scanned as one task (see [`Session::load_releasing`]). Small
/// enough that the cores finish together (a 100 MB session is 100 tasks; with 4 MiB pieces
/// the last one kept one core busy alone for about 2 ms of a 47 ms run).
const PIECE_MAX: usize = 1 << 20;

pub use super::record::{PositionedRead, ReadAt};

/// How the loader gets at the bytes it scans.
pub(super) enum Pieces<'r, 'a> {
    /// Scans the input itself, telling `release` which ranges it is done with.
    Borrowed(&'r (dyn Fn(Range<usize>) + Sync)),
    /// Reads the input through per-thread buffers (see [`Session::load_reading`]).
    Read(&'a ReadAt<'a>),
}

/// The size of the reads of [`Session::load_reading`]: small enough that what is read is
/// still in the core's cache when it is scanned.
const CHUNK: usize = 128 << 10;

/// Reads pieces of the input through a buffer.
struct Reader<'a> {
    source: &'a [u8],
    read_at: &'a ReadAt<'a>,
    /// The part of the input whose lines are parsed.
    region: Range<usize>,
}

impl<'a> Reader<'a> {
    /// Scans the lines that start in `piece` (a line starts at the start of the region
    /// or after an LF), reading on past its end for the last one.
    fn piece(
        &self,
        piece: Range<usize>,
        scanner: &mut LineScanner,
        buf: &mut Vec<u8>,
    ) -> Piece<'a> {
        let mut out = Piece::default();
        let region = &self.region;
        // `buf[lo..hi]` holds the input from `at` on.
        let (mut lo, mut hi) = (0, 0);
        // Before the first line: the LF before it is searched from the byte before the piece.
        let mut seeking = piece.start > region.start;
        let mut line_start = if seeking {
            piece.start - 1
        } else {
            piece.start
        };
        let mut at = line_start;
        let mut search = line_start;
        loop {
            if line_start >= piece.end {
                break;
            }
            let found = memchr::memchr(b'\n', &buf[lo + (search - at)..hi]);
            if let Some(i) = found {
                let lf = search + i;
                if seeking {
                    seeking = false;
                } else {
                    let raw = &buf[lo + (line_start - at)..lo + (lf - at)];
                    self.line(raw, line_start, out.newlines, scanner, &mut out);
                    out.newlines += 1;
                }
                line_start = lf + 1;
                search = line_start;
                continue;
            }
            let end = at + (hi - lo);
            if end >= region.end || (seeking && end >= piece.end) {
                if !seeking && line_start < end {
                    let raw = &buf[lo + (line_start - at)..hi];
                    self.line(raw, line_start, out.newlines, scanner, &mut out);
                }
                break;
            }
            // Keep the line being read (nothing while seeking) and read the next chunk.
            search = end;
            let keep = if seeking { end } else { line_start };
            lo += keep - at;
            at = keep;
            if lo > 0 {
                buf.copy_within(lo..hi, 0);
                hi -= lo;
                lo = 0;
            }
            let n = CHUNK.min(region.end - end);
            if buf.len() < hi + n {
                buf.resize(hi + n, 0);
            }
            let dest = &mut buf[hi..hi + n];
            if !self.read_at.read_at(dest, end) {
                dest.copy_from_slice(&self.source[end..end + n]);
            }
            hi += n;
        }
        out
    }

    /// Scans one raw line read from `offset`, numbered `number` within its piece.
    fn line(
        &self,
        raw: &[u8],
        offset: usize,
        number: usize,
        scanner: &mut LineScanner,
        out: &mut Piece<'a>,
    ) {
        let Some((text, lossy)) = read::decode(raw) else {
            return;
        };
        let len = raw.len();
        let line = Line {
            number,
            offset,
            text,
            len,
            lossy,
        };
        let (source, read_at) = (self.source, self.read_at);
        let result = scan(scanner, line, |text| match text {
            Cow::Borrowed(_) => Text::Read {
                read_at,
                source: &source[offset..offset + len],
                offset,
                text: std::sync::OnceLock::new(),
            },
            Cow::Owned(s) => Text::Owned(s.into_boxed_str()),
        });
        match result {
            Ok(record) => out.records.push(record),
            Err(d) => out.dropped.push(d),
        }
    }
}

/// What scanning one piece of the input gave.
#[derive(Default)]
struct Piece<'a> {
    records: Vec<Record<'a>>,
    dropped: Vec<DroppedLine>,
    /// pi 0.87.1's falsy values, taken out of `records` once lines are numbered.
    skipped: Vec<SkippedValue>,
    /// LFs in the piece (its lines are numbered from 0 until the pieces are joined).
    newlines: usize,
}

/// pi's entry types, shared by every record that has one.
const ENTRY_TYPES: [&str; 11] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "session",
];

/// The contents of a raw JSON string value when it has no escapes (then the raw text is the
/// value).
fn plain_string(raw: &str) -> Option<&str> {
    raw.strip_prefix('"')?
        .strip_suffix('"')
        .filter(|s| !s.contains('\\'))
}

/// A member's raw value, parsed (it was validated by the scan).
fn member_value(raw: &str) -> JsValue {
    json::parse(raw).unwrap_or_default()
}

/// The `type` member as a string, from its raw text.
fn type_name(raw: &str) -> Option<Cow<'static, str>> {
    if let Some(s) = plain_string(raw) {
        return Some(shared_type(s));
    }
    member_value(raw).as_str().map(|s| Cow::Owned(s.to_owned()))
}

/// An entry type, shared when it is one of pi's (not allocated per line).
pub(crate) fn shared_type(type_: &str) -> Cow<'static, str> {
    match ENTRY_TYPES.iter().find(|t| **t == type_) {
        Some(t) => Cow::Borrowed(t),
        None => Cow::Owned(type_.to_owned()),
    }
}

/// The key of an `id`/`parentId` member, from its raw text.
fn key_of(raw: Option<&str>, unique: u64) -> Key {
    match raw {
        None => Key::Undefined,
        Some("null") => Key::Null,
        Some(raw) => match plain_string(raw) {
            Some(s) => Key::String(s.as_bytes().into()),
            None => Key::from_value(Some(member_value(raw)), unique),
        },
    }
}

/// Scans one line into a record; `text` turns the line's text into the record's.
fn scan<'a, 'l>(
    scanner: &mut LineScanner,
    line: Line<'l>,
    to_text: impl FnOnce(Cow<'l, str>) -> Text<'a>,
) -> Result<Record<'a>, DroppedLine> {
    match scanner.scan(line.text.as_bytes()) {
        Ok(skeleton) => {
            // Objects and arrays as ids are equal only to themselves: the line's offset
            // (unique in the file) tells them apart.
            let unique = (line.offset as u64) << 1;
            let text: &str = &line.text;
            // Spans are on ASCII delimiters of the validated text.
            let raw = |span: Option<Span>| span.and_then(|(start, end)| text.get(start..end));
            let (kind, id, parent_id) = if skeleton.object {
                let type_ = raw(skeleton.type_).and_then(type_name);
                let kind = if type_.as_deref() == Some("session") {
                    Kind::Header
                } else {
                    Kind::Entry { type_ }
                };
                (
                    kind,
                    key_of(raw(skeleton.id), unique),
                    key_of(raw(skeleton.parent_id), unique + 1),
                )
            } else if skeleton.is_null {
                (Kind::Null, Key::Undefined, Key::Undefined)
            } else if skeleton.is_falsy {
                (Kind::Falsy, Key::Undefined, Key::Undefined)
            } else {
                (Kind::Other, Key::Undefined, Key::Undefined)
            };
            let may_name_context_notes =
                matches!(
                    &kind,
                    Kind::Entry { type_: Some(t) } if t.as_ref() == "custom"
                ) && crate::omp::context::may_name(text, crate::omp::context::CONTEXT_NOTES);
            Ok(Record {
                line: line.number,
                offset: line.offset,
                kind,
                may_name_context_notes,
                id,
                parent_id,
                message: skeleton.message,
                lossy: line.lossy,
                text: to_text(line.text),
                fresh_ids: false,
                value: None,
            })
        }
        Err(e @ ParseError { offset, .. }) => Err(DroppedLine {
            line: line.number,
            offset: line.offset,
            column: 1 + line
                .text
                .get(..offset)
                .map_or(offset, |s| s.chars().count()),
            error: e,
            len: line.len,
        }),
    }
}

fn check_header(first: &Record<'_>, pi: PiVersion, dialect: Dialect) -> Result<(), LoadError> {
    let reason = match (&first.kind, &first.id) {
        (Kind::Header, Key::String(_)) => return Ok(()),
        (Kind::Header, id) => HeaderProblem::IdNotString {
            found: id.display(),
        },
        (Kind::Entry { type_: Some(t) }, _) => HeaderProblem::NotSession { found: quoted(t) },
        (Kind::Entry { type_: None }, _) => HeaderProblem::NoType,
        (Kind::Null, _) => HeaderProblem::Null,
        (Kind::Other | Kind::Falsy, _) => HeaderProblem::NotAnObject,
    };
    Err(LoadError::InvalidHeader {
        line: first.line,
        reason,
        pi,
        dialect,
    })
}

/// `header.version ?? 1`, converted to a number the way `version >= 3` and `version < 2`
/// convert it (rule V2/V3): strings are parsed, booleans are 0/1, anything else is `NaN`.
pub fn version_number(version: Option<&JsValue>) -> f64 {
    match version {
        None | Some(JsValue::Null) => 1.0,
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::String(s)) => string_to_number(&s.to_string_lossy()),
        Some(JsValue::Array(a)) => match a.0.as_slice() {
            [] => 0.0,
            [JsValue::Number(n)] => *n,
            [JsValue::String(s)] => string_to_number(&s.to_string_lossy()),
            _ => f64::NAN,
        },
        Some(JsValue::Object(_)) => f64::NAN,
    }
}

/// ECMAScript `StringToNumber`.
fn string_to_number(s: &str) -> f64 {
    let bytes = s.as_bytes();
    let start = read::trim_start(bytes);
    let end = start + read::trim_end(&bytes[start..]);
    let t = &s[start..end];
    if t.is_empty() {
        return 0.0;
    }
    let radix = |prefix: &[&str], radix: u32| {
        prefix.iter().find_map(|p| t.strip_prefix(p)).map(|digits| {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                f64::NAN
            } else {
                digits.chars().fold(0.0, |n, c| {
                    n * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
                })
            }
        })
    };
    if let Some(n) = radix(&["0x", "0X"], 16)
        .or_else(|| radix(&["0o", "0O"], 8))
        .or_else(|| radix(&["0b", "0B"], 2))
    {
        return n;
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let decimal = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && unsigned.bytes().any(|b| b.is_ascii_digit());
    if decimal {
        t.parse().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

mod bun_lines;
#[cfg(test)]
mod tests;
