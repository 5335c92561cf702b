//! The listing entry of a session (`buildSessionInfo`, rules I1–I6, section 13 of the notes):
//! what `pi --resume` and `SessionManager.list()` show for a file.
//!
//! Listing reads the file on its own terms, not through the loader: it needs only
//! `entries[0].type === "session"` (no id check), and any exception on the way (a `null`
//! entry, a `null` message, non-array content, a non-string name) drops the session from the
//! list, which is written as `null`.
//!
//! The entry is streamed in two passes over the file, each in bounded memory:
//!
//! 1. every line is validated and classified (the line scanner, then a walk of the message
//!    members, `info/entry.rs`), pieces of the file on every core; each piece keeps a few numbers
//!    and the positions of the lines that matter (the first value, the last `session_info`,
//!    the first user text) and of its texts (at most 16,384 per piece and
//!    2,097,152 in all, 20 bytes each). Only when no line throws is the entry written;
//! 2. the texts are read again from those positions (a piece with too many is scanned
//!    again) and written to the output in file order, escaped straight from the line's
//!    text, so that `allMessagesText`, which can be as big as the file, is never held whole.
//!
//! [`oracle`] is the former whole-file implementation, the reference the tests compare with.

mod entry;
pub(crate) mod lines;
pub mod list;
pub mod oracle;
mod walk;

use crate::date;
use crate::json::{self, JsValue, LineScanner, is_str};
use crate::read;
use crate::session::ReadAt;
use crate::{Dialect, PiVersion};
use entry::Facts;
use lines::Source;
use oracle::{iso_or_null, js_max};
use rayon::prelude::*;
use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The size of the pieces read as one task.
const PIECE: usize = 1 << 20;

/// Writes the listing entry of a session file as `JSON.stringify` shows it (`{id, cwd,
/// name?, parentSessionPath?, created, modified, messageCount, firstMessage,
/// allMessagesText}`, pi's `path` left out), or `null` when pi leaves the file out of lists.
/// No newline follows. `mtime_ms` is the file's modification time, pi's last fallback for
/// `modified`.
///
/// `bytes` is the whole input; with `read_at` (see
/// [`crate::session::Loader::reading`]) the lines are read through small buffers with
/// it and `bytes` is only touched where a read fails. Memory holds a few pieces of about a
/// megabyte and the longest line, whatever the size of the file.
pub fn write_session_info(
    bytes: &[u8],
    read_at: Option<&ReadAt<'_>>,
    mtime_ms: f64,
    pi: PiVersion,
    out: &mut dyn Write,
) -> io::Result<()> {
    Info::of(bytes, read_at, pi, PIECE, MAX_EMITS).write(mtime_ms, out)
}

/// The listing entry of `bytes` in `dialect` (the file's own when `None`,
/// [`Dialect::given_or_detected`]): pi's ([`write_session_info`]), or omp's
/// (`scanSessionFile`, [`crate::omp::info::write_info`]). The one way in for the command line
/// and the bindings; `read_at` and the rest as for [`write_session_info`].
pub fn write_entry(
    bytes: &[u8],
    read_at: Option<&ReadAt<'_>>,
    mtime_ms: f64,
    pi: PiVersion,
    dialect: Option<Dialect>,
    out: &mut dyn Write,
) -> io::Result<()> {
    match Dialect::given_or_detected(dialect, bytes) {
        Dialect::Omp => crate::omp::info::write_info(bytes, read_at, mtime_ms, out),
        _ => write_session_info(bytes, read_at, mtime_ms, pi, out),
    }
}

/// The entry a list shows for `bytes` in `dialect`: pi's with `allMessagesText` empty
/// ([`session_info_json_without_texts`]), or omp's, which has no texts.
pub fn listed_entry_json(bytes: &[u8], mtime_ms: f64, pi: PiVersion, dialect: Dialect) -> Vec<u8> {
    match dialect {
        Dialect::Omp => crate::omp::info::info_json(bytes, mtime_ms),
        _ => session_info_json_without_texts(bytes, mtime_ms, pi),
    }
}

pub use pi_session_fs::mtime_ms;

/// [`write_session_info`] into a vector (small inputs; the conformance protocol, tests).
pub fn session_info_json(bytes: &[u8], mtime_ms: f64, pi: PiVersion) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a vector cannot fail.
    let _ = write_session_info(bytes, None, mtime_ms, pi, &mut out);
    out
}

/// The listing entry as [`session_info_json`] gives it, but with `allMessagesText` empty: one
/// pass over the file instead of two (what a list shows; the search text is not needed).
pub fn session_info_json_without_texts(bytes: &[u8], mtime_ms: f64, pi: PiVersion) -> Vec<u8> {
    let info = Info::of(bytes, None, pi, PIECE, 0);
    let pieces = info.pieces();
    let whole = info
        .summarise(&pieces)
        .into_iter()
        .map(|(summary, _)| summary)
        .fold(Summary::default(), Summary::then);
    match info.head(&whole, mtime_ms) {
        None => b"null".to_vec(),
        Some(mut head) => {
            head.extend_from_slice(b"\"}");
            head
        }
    }
}

/// [`write_session_info`] into a vector, with pieces of `piece` bytes (the fuzz target
/// checks every size, and so do the tests).
pub fn write_with_piece(bytes: &[u8], piece: usize, mtime_ms: f64, pi: PiVersion) -> Vec<u8> {
    // Odd sizes also make pieces of more than one text be scanned again.
    let info = Info::of(
        bytes,
        None,
        pi,
        piece,
        if piece % 2 == 1 { 1 } else { MAX_EMITS },
    );
    let mut out = Vec::new();
    // Writing into a vector cannot fail.
    let _ = info.write(mtime_ms, &mut out);
    out
}

impl<'a> Info<'a> {
    /// The listing of `bytes` (through `read_at` when given) with pi `pi`'s reading rules,
    /// pieces of `piece` bytes, at most `max_emits` texts remembered per piece.
    fn of(
        bytes: &'a [u8],
        read_at: Option<&'a ReadAt<'a>>,
        pi: PiVersion,
        piece: usize,
        max_emits: usize,
    ) -> Self {
        let (region, _) = read::region(bytes, read::Edges::of(pi, crate::Dialect::Pi));
        Info {
            source: Source {
                bytes,
                read_at,
                region,
                cr_ends_lines: pi.reads_like_0_87(),
            },
            pi,
            piece,
            max_emits,
        }
    }

    fn write(&self, mtime_ms: f64, out: &mut dyn Write) -> io::Result<()> {
        let info = self;
        let pieces = info.pieces();
        let (summaries, emits): (Vec<Summary>, Vec<Option<Vec<Emit>>>) =
            info.summarise(&pieces).into_iter().unzip();
        let whole = summaries
            .iter()
            .cloned()
            .fold(Summary::default(), Summary::then);
        match info.head(&whole, mtime_ms) {
            None => out.write_all(b"null"),
            Some(head) => {
                out.write_all(&head)?;
                let with_texts: Vec<(Range<usize>, Option<Vec<Emit>>)> = pieces
                    .into_iter()
                    .zip(emits)
                    .zip(&summaries)
                    .filter(|(_, s)| s.texts)
                    .map(|(p, _)| p)
                    .collect();
                info.write_texts(&with_texts, out)?;
                out.write_all(b"\"}")
            }
        }
    }
}

/// The most texts a piece remembers for pass 2 (20 bytes each; a 1 MiB piece of short
/// messages has a few thousand); a piece with more is scanned again.
const MAX_EMITS: usize = 16 << 10;

/// The most texts all pieces remember together (40 MB): beyond, pieces are scanned again.
const EMIT_BUDGET: usize = 2 << 20;

/// A message text found in pass 1, which pass 2 writes without scanning its line again.
#[derive(Debug, Clone, Copy)]
struct Emit {
    /// The line's offset from the start of its piece.
    line: u32,
    /// The length of its raw bytes.
    len: u32,
    /// The `content` value in the decoded line.
    content: (u32, u32),
    /// Whether the line has invalid UTF-8 (decoded with replacement characters).
    lossy: bool,
}

/// Where a line is: its raw bytes in the input.
#[derive(Debug, Clone, Copy)]
struct Loc {
    offset: usize,
    len: usize,
}

/// What the lines of a piece (or of consecutive pieces) add up to.
#[derive(Debug, Default, Clone)]
struct Summary {
    /// The first value (pi's header candidate).
    first: Option<Loc>,
    /// Some line throws.
    throws: bool,
    /// `type: "message"` values.
    messages: u64,
    /// The last `session_info` value.
    name: Option<Loc>,
    /// `Math.max(0, …)` of the activity times, if any.
    activity: Option<f64>,
    /// The first user message with a non-empty text.
    first_user: Option<Loc>,
    /// Some message adds a text to `allMessagesText`.
    texts: bool,
}

impl Summary {
    /// Adds the facts of the next line.
    fn add(&mut self, loc: Loc, facts: &Facts) {
        self.first.get_or_insert(loc);
        self.throws |= facts.throws;
        self.messages += u64::from(facts.message);
        if facts.session_info {
            self.name = Some(loc);
        }
        if let Some(t) = facts.activity {
            self.activity = Some(js_max(self.activity.unwrap_or(0.0), t));
        }
        if let Some(text) = &facts.text {
            self.texts = true;
            if text.user && self.first_user.is_none() {
                self.first_user = Some(loc);
            }
        }
    }

    /// This summary followed by `later`'s.
    fn then(self, later: Summary) -> Summary {
        Summary {
            first: self.first.or(later.first),
            throws: self.throws || later.throws,
            messages: self.messages + later.messages,
            name: later.name.or(self.name),
            activity: match (self.activity, later.activity) {
                (Some(a), Some(b)) => Some(js_max(a, b)),
                (a, b) => a.or(b),
            },
            first_user: self.first_user.or(later.first_user),
            texts: self.texts || later.texts,
        }
    }
}

/// A thread's reusable state.
#[derive(Default)]
struct Scratch {
    scanner: LineScanner,
    buf: Vec<u8>,
}

struct Info<'a> {
    source: Source<'a>,
    pi: PiVersion,
    /// The size of the pieces ([`PIECE`]; smaller in tests).
    piece: usize,
    /// The most texts a piece remembers ([`MAX_EMITS`]; fewer in tests).
    max_emits: usize,
}

impl Info<'_> {
    fn pieces(&self) -> Vec<Range<usize>> {
        let region = &self.source.region;
        (region.start..region.end)
            .step_by(self.piece.max(1))
            .map(|start| start..(start + self.piece.max(1)).min(region.end))
            .collect()
    }

    /// Calls `f` with each value of `piece`: where it is, its text and its facts.
    /// Calls `f` with each value of `piece`: where it is, its text, whether that was decoded
    /// with replacement characters, and its facts.
    fn values(
        &self,
        piece: Range<usize>,
        s: &mut Scratch,
        f: &mut dyn FnMut(Loc, &str, bool, Facts),
    ) {
        let Scratch { scanner, buf } = s;
        let pi = self.pi;
        self.source.lines(piece, buf, &mut |offset, raw| {
            let Some((text, lossy)) = read::decode(raw) else {
                return;
            };
            if let Some(facts) = entry::classify(&text, scanner, pi) {
                let loc = Loc {
                    offset,
                    len: raw.len(),
                };
                f(loc, &text, lossy, facts);
            }
        });
    }

    /// Pass 1: the summary of every piece, in order, and where its texts are (`None`: too
    /// many, scan the piece again).
    fn summarise(&self, pieces: &[Range<usize>]) -> Vec<(Summary, Option<Vec<Emit>>)> {
        // Once a line throws, the result is `null`: the other pieces need not be read.
        let thrown = AtomicBool::new(false);
        let remembered = AtomicUsize::new(0);
        pieces
            .par_iter()
            .map_init(Scratch::default, |s, piece| {
                let mut summary = Summary::default();
                let mut emits = Some(Vec::new());
                if thrown.load(Ordering::Relaxed) {
                    summary.throws = true;
                    return (summary, emits);
                }
                self.values(piece.clone(), s, &mut |loc, _, lossy, facts| {
                    summary.add(loc, &facts);
                    let (Some(text), Some(list)) = (&facts.text, &mut emits) else {
                        return;
                    };
                    let emit = (|| {
                        Some(Emit {
                            line: u32::try_from(loc.offset - piece.start).ok()?,
                            len: u32::try_from(loc.len).ok()?,
                            content: (
                                u32::try_from(text.content.0).ok()?,
                                u32::try_from(text.content.1).ok()?,
                            ),
                            lossy,
                        })
                    })();
                    match emit {
                        Some(emit) if list.len() < self.max_emits => list.push(emit),
                        _ => emits = None,
                    }
                });
                if summary.throws {
                    thrown.store(true, Ordering::Relaxed);
                }
                let count = emits.as_ref().map_or(0, Vec::len);
                if remembered.fetch_add(count, Ordering::Relaxed) + count > EMIT_BUDGET {
                    emits = None;
                }
                (summary, emits)
            })
            .collect()
    }

    /// The raw bytes of the line at `loc`, decoded.
    fn line(&self, loc: Loc) -> String {
        let mut raw = vec![0; loc.len];
        self.source.read(&mut raw, loc.offset);
        match read::decode(&raw) {
            Some((text, _)) => text.into_owned(),
            None => String::new(),
        }
    }

    /// Everything of the entry up to the opening quote of `allMessagesText`'s value, or
    /// `None` for `null`.
    fn head(&self, whole: &Summary, mtime_ms: f64) -> Option<Vec<u8>> {
        if whole.throws {
            return None;
        }
        let header = json::parse(&self.line(whole.first?)).ok()?;
        if !is_str(header.get("type"), "session") {
            return None;
        }
        let name = match whole.name {
            None => None,
            Some(loc) => {
                let line = json::parse(&self.line(loc)).unwrap_or(JsValue::Null);
                match line.get("name") {
                    Some(JsValue::String(s)) => {
                        let bytes = s.as_wtf8();
                        let start = read::trim_start(bytes);
                        let end = start + read::trim_end(&bytes[start..]);
                        (end > start).then(|| bytes[start..end].to_vec())
                    }
                    _ => None,
                }
            }
        };
        let mut first_message = Vec::new();
        if let Some(loc) = whole.first_user {
            let text = self.line(loc);
            let facts = entry::classify(&text, &mut LineScanner::default(), self.pi);
            if let Some(t) = facts.and_then(|f| f.text) {
                entry::write_text(&text, t.content, &mut first_message);
            }
        }
        if first_message.is_empty() {
            first_message.extend_from_slice(b"(no messages)");
        }
        let header_time = match header.get("timestamp") {
            Some(JsValue::String(_)) => date::new_date_time(header.get("timestamp")),
            _ => f64::NAN,
        };
        let modified = match whole.activity {
            Some(t) if t > 0.0 => date::time_clip(t),
            _ if !header_time.is_nan() => header_time,
            _ => mtime_ms,
        };
        let mut o = Vec::new();
        let member = |o: &mut Vec<u8>, key: &str| {
            o.push(if o.is_empty() { b'{' } else { b',' });
            o.push(b'"');
            o.extend_from_slice(key.as_bytes());
            o.extend_from_slice(b"\":");
        };
        if let Some(id) = header.get("id") {
            member(&mut o, "id");
            json::write_value(&mut o, id);
        }
        member(&mut o, "cwd");
        match header.get("cwd") {
            Some(cwd @ JsValue::String(_)) => json::write_value(&mut o, cwd),
            _ => o.extend_from_slice(b"\"\""),
        }
        if let Some(name) = name {
            member(&mut o, "name");
            json::write_string(&mut o, &name);
        }
        if let Some(parent) = header.get("parentSession") {
            member(&mut o, "parentSessionPath");
            json::write_value(&mut o, parent);
        }
        member(&mut o, "created");
        let created = date::new_date_time(header.get("timestamp"));
        json::write_value(&mut o, &iso_or_null(created));
        member(&mut o, "modified");
        json::write_value(&mut o, &iso_or_null(modified));
        member(&mut o, "messageCount");
        json::write_number(&mut o, whole.messages as f64);
        member(&mut o, "firstMessage");
        o.push(b'"');
        o.extend_from_slice(&first_message);
        o.push(b'"');
        member(&mut o, "allMessagesText");
        o.push(b'"');
        Some(o)
    }

    /// Pass 2: the texts of the messages of `pieces`, joined with spaces, escaped, in file
    /// order; a few pieces at a time on every core.
    fn write_texts(
        &self,
        pieces: &[(Range<usize>, Option<Vec<Emit>>)],
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let batch = 2 * rayon::current_num_threads().max(1);
        let mut first = true;
        for pieces in pieces.chunks(batch) {
            let texts: Vec<Vec<u8>> = pieces
                .par_iter()
                .map_init(Scratch::default, |s, (piece, emits)| {
                    let mut texts = Vec::new();
                    match emits {
                        Some(emits) => self.write_emits(piece.start, emits, s, &mut texts),
                        None => self.values(piece.clone(), s, &mut |_, text, _, facts| {
                            if let Some(t) = facts.text {
                                texts.push(b' ');
                                entry::write_text(text, t.content, &mut texts);
                            }
                        }),
                    }
                    texts
                })
                .collect();
            for texts in texts.iter().filter(|t| !t.is_empty()) {
                // Every text is preceded by a space; the first one is not.
                out.write_all(&texts[usize::from(first)..])?;
                first = false;
            }
        }
        Ok(())
    }
}

impl Info<'_> {
    /// The texts of `emits` (lines of the piece starting at `start`), each after a space:
    /// one read from the first line to the end of the last, then each content copied.
    fn write_emits(&self, start: usize, emits: &[Emit], s: &mut Scratch, out: &mut Vec<u8>) {
        let (Some(first), Some(last)) = (emits.first(), emits.last()) else {
            return;
        };
        let from = start + first.line as usize;
        let to = start + last.line as usize + last.len as usize;
        s.buf.resize(to - from, 0);
        self.source.read(&mut s.buf, from);
        for e in emits {
            let at = (e.line - first.line) as usize;
            let raw = &s.buf[at..at + e.len as usize];
            let content = (e.content.0 as usize, e.content.1 as usize);
            out.push(b' ');
            if e.lossy {
                entry::write_text(&String::from_utf8_lossy(raw), content, out);
            } else if let Some(text) = raw
                .get(content.0..content.1)
                .and_then(|c| simdutf8::basic::from_utf8(c).ok())
            {
                entry::write_text(text, (0, text.len()), out);
            }
        }
    }
}

#[cfg(test)]
mod tests;
