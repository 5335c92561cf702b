//! The file as pi leaves it after loading, written one line at a time (rules M1–M6, P9).
//!
//! pi migrates a v1/v2 file by parsing every line, running `migrateV1ToV2` /
//! `migrateV2ToV3` over the whole array and writing every value back with `JSON.stringify`.
//! The only state those functions carry from one entry to the next is the ids handed out
//! (each entry's `parentId` is the previous entry's id, and a compaction's
//! `firstKeptEntryIndex` names an entry by its position), so a [`Plan`] assigns the ids on
//! the loader's skeleton (no value built) and every line is then migrated on its own:
//! parsed, changed, written, dropped. Lines are rendered in parallel in batches of about
//! 1 MiB and written in file order, so memory holds the skeleton, the ids and a few batches,
//! never the file's values.
//!
//! A line already in `JSON.stringify` form (pi wrote it) is not parsed at all: its output is
//! its text, with the new `id` and `parentId` spliced in for v1 (appended, or in place of the
//! old values, exactly where `JSON.stringify` puts them).
//!
//! What `JSON.parse`/`JSON.stringify` lose on the way (invalid UTF-8, inexact numbers,
//! duplicate keys, blank lines) is reported as [`Change`]s; the output is pi's regardless.

use super::{Key, KeyBytes, Kind, Records, Session};
use crate::json::{self, JsString, JsValue, LineScanner, Role, is_str};
use crate::migrate::lossy::{self, LossyKind};
use crate::migrate::{FirstKept, IdGenerator, element_index, first_kept_index, v1_entry, v2_entry};
use rayon::prelude::*;
use std::collections::HashSet;
use std::io::{self, Write};
use std::ops::Range;

/// Records per batch at most.
const BATCH_RECORDS: usize = 16 << 10;
/// Bytes of input per batch, about.
const BATCH_BYTES: usize = 1 << 20;
/// Batches rendered at a time, at most.
const WINDOW_MAX: usize = 32;

/// What the migration does to each record: the versions it migrates from and the ids v1→v2
/// assigns (one per object that is not a header, in file order).
#[derive(Debug)]
pub(crate) struct Plan {
    v1: bool,
    v2: bool,
    /// Per record: the id v1→v2 gives it (empty unless `v1`).
    ids: Vec<Option<KeyBytes>>,
}

impl Plan {
    /// The plan of a file written back without migration (a version that is not a number).
    pub(crate) fn identity() -> Plan {
        Plan {
            v1: false,
            v2: false,
            ids: Vec::new(),
        }
    }

    /// Assigns the ids of v1→v2 (when `v1`), in file order, as pi does.
    pub(crate) fn new(
        records: &Records<'_>,
        v1: bool,
        v2: bool,
        ids_from: &mut dyn IdGenerator,
    ) -> Plan {
        let mut ids = Vec::new();
        if v1 {
            ids.reserve_exact(records.len());
            let mut taken: HashSet<KeyBytes> = HashSet::new();
            for r in records {
                if !matches!(r.kind, Kind::Entry { .. }) {
                    ids.push(None);
                    continue;
                }
                let id = ids_from.next_id(&|id| taken.contains(&KeyBytes::from(id.as_bytes())));
                let key = KeyBytes::from(id.as_bytes());
                taken.insert(key.clone());
                ids.push(Some(key));
            }
        }
        Plan { v1, v2, ids }
    }

    /// The id v1→v2 gives record `i`, as a key.
    pub(crate) fn key(&self, i: usize) -> Option<&KeyBytes> {
        self.ids.get(i)?.as_ref()
    }

    /// The id v1→v2 gives record `i`.
    pub(crate) fn id(&self, i: usize) -> Option<&str> {
        self.ids
            .get(i)?
            .as_ref()
            .and_then(|k| std::str::from_utf8(k).ok())
    }

    /// The index of the last record before `i` that gets an id (the parent of the next one),
    /// continuing from `from` (the answer for an earlier `i`, or `None`).
    fn last_id_before(&self, from: (usize, Option<usize>), i: usize) -> Option<usize> {
        let (start, mut last) = from;
        for j in start..i.min(self.ids.len()) {
            if self.ids[j].is_some() {
                last = Some(j);
            }
        }
        last
    }

    /// `entries[index]`'s `id` as v1→v2 sees it from record `i`.
    fn first_kept(&self, records: &Records<'_>, i: usize, index: f64) -> FirstKept {
        let Some(t) = element_index(index, records.len()) else {
            return FirstKept::NoTarget;
        };
        let Some(target) = records.get(t) else {
            return FirstKept::NoTarget;
        };
        match target.kind {
            Kind::Null | Kind::Falsy | Kind::Header => FirstKept::NoTarget,
            // A truthy number, string, boolean or array: `.id` is undefined.
            Kind::Other => FirstKept::Target(None),
            // Entries up to this one have their new ids already.
            Kind::Entry { .. } if t <= i => FirstKept::Target(self.id(t).map(JsValue::string)),
            Kind::Entry { .. } => FirstKept::Target(match &target.id {
                Key::Undefined => None,
                Key::Null => Some(JsValue::Null),
                Key::Bool(b) => Some(JsValue::Bool(*b)),
                Key::Number(bits) => Some(JsValue::Number(f64::from_bits(*bits))),
                Key::String(s) => Some(JsValue::String(JsString::concat(&[s]))),
                Key::Unique(_) => target.value().get("id").cloned(),
            }),
        }
    }

    /// Migrates the value of record `i`, whose previous id-bearing record is `parent`.
    pub(crate) fn apply(
        &self,
        records: &Records<'_>,
        i: usize,
        parent: Option<&str>,
        value: &mut JsValue,
    ) {
        let Some(entry) = value.as_object_mut() else {
            return;
        };
        if is_str(entry.get("type"), "session") {
            if self.v1 {
                entry.set("version", JsValue::Number(2.0));
            }
            if self.v2 {
                entry.set("version", JsValue::Number(3.0));
            }
            return;
        }
        if self.v1
            && let Some(id) = self.id(i)
        {
            let first_kept = match first_kept_index(entry) {
                None => FirstKept::Untouched,
                Some(index) => self.first_kept(records, i, index),
            };
            v1_entry(entry, id, parent, first_kept);
        }
        if self.v2 {
            v2_entry(entry);
        }
    }

    /// Whether the migration of record `i` is no more than v1's new `id` and `parentId`
    /// (nothing for v2): its text, with those, is its migrated value. When the text is in
    /// `JSON.stringify` form, it is written without parsing it.
    pub(crate) fn keeps_text(&self, records: &Records<'_>, i: usize) -> bool {
        let Some(r) = records.get(i) else {
            return false;
        };
        match &r.kind {
            Kind::Header => !(self.v1 || self.v2),
            Kind::Entry { .. } => {
                let t = r.entry_type();
                let resolves_index = self.v1 && t == Some("compaction");
                let may_rename = self.v2
                    && t == Some("message")
                    && r.message.as_ref().is_some_and(|m| m.role == Role::Other);
                !resolves_index && !may_rename
            }
            Kind::Null | Kind::Falsy | Kind::Other => true,
        }
    }
}

/// Something pi's rewrite changes besides the migration itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters of the decoded line).
    pub column: usize,
    /// What changes.
    pub kind: ChangeKind,
}

/// The kinds of [`Change`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// Bytes that are not UTF-8 are written as U+FFFD (the original bytes are lost).
    InvalidUtf8 {
        /// The first invalid byte.
        byte: u8,
    },
    /// Lines holding nothing but whitespace are left out.
    BlankLines {
        /// How many, from `line` on.
        count: usize,
    },
    /// A number is written with another value: `null` out of a double's range, rounded when
    /// it has more digits than a double holds.
    NumberNotExact {
        /// The number as written in the file (cut when long).
        written: String,
        /// What is written instead.
        becomes: String,
    },
    /// A key occurs twice in an object: only the last value is kept.
    DuplicateKey {
        /// The key (cut when long).
        key: String,
    },
}

impl ChangeKind {
    /// The number of kinds.
    pub const COUNT: usize = 4;

    /// A number per kind, `0..COUNT`.
    pub fn index(&self) -> usize {
        match self {
            ChangeKind::InvalidUtf8 { .. } => 0,
            ChangeKind::BlankLines { .. } => 1,
            ChangeKind::NumberNotExact { .. } => 2,
            ChangeKind::DuplicateKey { .. } => 3,
        }
    }
}

/// The changes of a rewrite, bounded: the first `limit` of each kind, in file order, and how
/// many there are of each.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    limit: usize,
    /// The first changes of each kind, in file order.
    pub shown: Vec<Change>,
    /// How many changes of each kind there are ([`ChangeKind::index`]); for blank lines,
    /// the number of lines.
    pub counts: [usize; ChangeKind::COUNT],
    shown_counts: [usize; ChangeKind::COUNT],
}

impl Changes {
    /// Keeps the first `limit` changes of each kind.
    pub fn new(limit: usize) -> Changes {
        Changes {
            limit,
            ..Changes::default()
        }
    }

    fn push(&mut self, change: Change) {
        let k = change.kind.index();
        self.counts[k] += match change.kind {
            ChangeKind::BlankLines { count } => count,
            _ => 1,
        };
        if self.shown_counts[k] < self.limit {
            self.shown_counts[k] += 1;
            self.shown.push(change);
        }
    }

    /// Counts `n` more changes of a kind that are not shown.
    fn count_more(&mut self, k: usize, n: usize) {
        self.counts[k] += n;
    }

    fn append(&mut self, other: Changes) {
        let mut shown_of = [0; ChangeKind::COUNT];
        for change in other.shown {
            let k = change.kind.index();
            shown_of[k] += match change.kind {
                ChangeKind::BlankLines { count } => count,
                _ => 1,
            };
            self.push(change);
        }
        for ((count, other), shown) in self.counts.iter_mut().zip(other.counts).zip(shown_of) {
            *count += other - shown;
        }
    }

    /// The changes of a kind beyond those shown (for blank lines: lines).
    pub fn hidden(&self, k: usize) -> usize {
        let shown: usize = self
            .shown
            .iter()
            .filter(|c| c.kind.index() == k)
            .map(|c| match c.kind {
                ChangeKind::BlankLines { count } => count,
                _ => 1,
            })
            .sum();
        self.counts[k] - shown
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }
}

/// `text` cut after `max` characters, with the number of bytes left out.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…(+{} bytes)", &text[..at], text.len() - at),
    }
}

/// A line that is not a record but is written back as it was (not JSON; pi 0.87.1's falsy
/// values).
#[derive(Debug, Clone, Copy)]
struct Verbatim {
    line: usize,
    offset: usize,
    len: usize,
}

/// What rendering a batch gave.
struct Rendered {
    bytes: Vec<u8>,
    changes: Changes,
    /// The first and last line written, and the offset of the last.
    first_line: Option<usize>,
    last_line: usize,
    last_offset: usize,
}

/// Writes `session` as pi leaves it, migrating with `plan` what has not been materialised
/// yet; `release` is told which ranges of the input are done with.
pub(super) fn write_lines(
    session: &Session<'_>,
    plan: &Plan,
    out: &mut dyn Write,
    changes: &mut Changes,
    release: &(dyn Fn(Range<usize>) + Sync),
) -> io::Result<()> {
    let source = session.source;
    if !session.version.rewrite {
        // The input as it is, a piece at a time, each piece let go once written.
        let mut at = 0;
        for piece in source.chunks(8 << 20) {
            out.write_all(piece)?;
            release(at..at + piece.len());
            at += piece.len();
        }
        if session.pi.reads_like_0_87() && source.last().is_some_and(|&b| b != b'\n') {
            out.write_all(b"\n")?;
        }
        return Ok(());
    }
    let mut verbatim: Vec<Verbatim> = session
        .dropped
        .iter()
        .map(|d| Verbatim {
            line: d.line,
            offset: d.offset,
            len: d.len,
        })
        .chain(session.skipped.iter().filter_map(|s| {
            let (offset, len) = s.verbatim?;
            Some(Verbatim {
                line: s.line,
                offset,
                len,
            })
        }))
        .collect();
    verbatim.sort_by_key(|v| v.line);
    let records = &session.records;
    let n = records.len();
    // Batches in flight: enough to keep every core busy, bounded so that memory does not
    // grow with the number of cores.
    let window = (rayon::current_num_threads() * 4).clamp(4, WINDOW_MAX);
    let offset = |i: usize| records.get(i).map_or(source.len(), |r| r.offset);
    let line = |i: usize| records.get(i).map_or(usize::MAX, |r| r.line);
    let (mut start, mut v_at) = (0, 0);
    let mut parent_scan: (usize, Option<usize>) = (0, None);
    let mut last_line = 0;
    let mut last_offset = 0;
    let mut released = 0;
    let limit = changes.limit;
    let mut first = true;
    while start < n || first {
        first = false;
        // Cut a window of batches: records, the verbatim lines before the next batch, and
        // the parent of the first record.
        let mut batches = Vec::with_capacity(window);
        while batches.len() < window && (start < n || batches.is_empty()) {
            let base = offset(start);
            let mut end = (start + 1).min(n);
            while end < n && end - start < BATCH_RECORDS && offset(end) - base < BATCH_BYTES {
                end += 1;
            }
            let next_line = line(end);
            let v_end = v_at + verbatim[v_at..].partition_point(|v| v.line < next_line);
            let parent = plan.last_id_before(parent_scan, start);
            parent_scan = (start, parent);
            batches.push((start..end, v_at..v_end, parent));
            start = end;
            v_at = v_end;
        }
        let rendered: Vec<Rendered> = batches
            .into_par_iter()
            .map(|(range, v_range, parent)| {
                render_batch(session, plan, range, &verbatim[v_range], parent, limit)
            })
            .collect();
        for batch in rendered {
            if let Some(first_line) = batch.first_line {
                if first_line > last_line + 1 {
                    changes.push(Change {
                        line: last_line + 1,
                        column: 1,
                        kind: ChangeKind::BlankLines {
                            count: first_line - last_line - 1,
                        },
                    });
                }
                last_line = batch.last_line;
                last_offset = batch.last_offset;
            }
            changes.append(batch.changes);
            out.write_all(&batch.bytes)?;
        }
        let done = offset(start).min(source.len());
        if done > released {
            release(released..done);
            released = done;
        }
    }
    // Whitespace-only lines after the last record.
    let tail = source.get(last_offset..).unwrap_or_default();
    let newlines = memchr::memchr_iter(b'\n', tail).count();
    let after = if newlines == 0 || tail.ends_with(b"\n") {
        newlines.saturating_sub(1)
    } else {
        newlines
    };
    if after > 0 && last_line > 0 {
        changes.push(Change {
            line: last_line + 1,
            column: 1,
            kind: ChangeKind::BlankLines { count: after },
        });
    }
    Ok(())
}

/// Renders records `range` with the verbatim lines among and after them.
fn render_batch(
    session: &Session<'_>,
    plan: &Plan,
    range: Range<usize>,
    verbatim: &[Verbatim],
    mut parent: Option<usize>,
    limit: usize,
) -> Rendered {
    let source = session.source;
    let records = &session.records;
    let mut out = Rendered {
        bytes: Vec::with_capacity(BATCH_BYTES + (BATCH_BYTES >> 3)),
        changes: Changes::new(limit),
        first_line: None,
        last_line: 0,
        last_offset: 0,
    };
    let mut scanner = LineScanner::default();
    let mut verbatim = verbatim.iter().peekable();
    let account = |out: &mut Rendered, line: usize, offset: usize| {
        match out.first_line {
            None => out.first_line = Some(line),
            Some(_) if line > out.last_line + 1 => out.changes.push(Change {
                line: out.last_line + 1,
                column: 1,
                kind: ChangeKind::BlankLines {
                    count: line - out.last_line - 1,
                },
            }),
            Some(_) => {}
        }
        out.last_line = line;
        out.last_offset = offset;
    };
    let write_verbatim = |out: &mut Rendered, v: &Verbatim| {
        account(out, v.line, v.offset);
        out.bytes
            .extend_from_slice(source.get(v.offset..v.offset + v.len).unwrap_or_default());
        out.bytes.push(b'\n');
    };
    for i in range {
        let Some(r) = records.get(i) else {
            break;
        };
        while let Some(v) = verbatim.next_if(|v| v.line < r.line) {
            write_verbatim(&mut out, v);
        }
        account(&mut out, r.line, r.offset);
        render_record(session, plan, i, parent, &mut scanner, &mut out);
        if plan.ids.get(i).is_some_and(Option::is_some) {
            parent = Some(i);
        }
    }
    for v in verbatim {
        write_verbatim(&mut out, v);
    }
    out
}

/// Writes record `i` migrated, and notes what `JSON.stringify` changes in it.
fn render_record(
    session: &Session<'_>,
    plan: &Plan,
    i: usize,
    parent: Option<usize>,
    scanner: &mut LineScanner,
    out: &mut Rendered,
) {
    let records = &session.records;
    let Some(r) = records.get(i) else {
        return;
    };
    let text = r.text();
    if r.lossy {
        let raw = session.source.get(r.offset..).unwrap_or_default();
        let raw = &raw[..memchr::memchr(b'\n', raw).unwrap_or(raw.len())];
        let valid = std::str::from_utf8(raw)
            .err()
            .map_or(0, |e| e.valid_up_to());
        out.changes.push(Change {
            line: r.line,
            column: String::from_utf8_lossy(&raw[..valid]).chars().count() + 1,
            kind: ChangeKind::InvalidUtf8 {
                byte: raw.get(valid).copied().unwrap_or(0),
            },
        });
    }
    let parent = parent.and_then(|p| plan.id(p));
    let bytes = &mut out.bytes;
    if let Some(value) = &r.value {
        // Materialised already (a loaded session's migrated values).
        json::write_value(bytes, value);
        bytes.push(b'\n');
        return;
    }
    let canonical = json::is_canonical(text.as_bytes());
    if canonical && plan.keeps_text(records, i) {
        let spliced = match plan.id(i) {
            Some(id) if plan.v1 => splice(text, id, parent, scanner, bytes),
            _ => {
                bytes.extend_from_slice(text.as_bytes());
                true
            }
        };
        if spliced {
            bytes.push(b'\n');
            return;
        }
    }
    if !canonical {
        let (found, counts) = lossy::find(text, out.changes.limit);
        let column = |offset: usize| text.get(..offset).map_or(1, |s| s.chars().count() + 1);
        let mut shown = [0; 2];
        for l in &found {
            let token = text.get(l.offset..l.offset + l.len).unwrap_or_default();
            let kind = match &l.kind {
                LossyKind::NumberNotExact { becomes } => {
                    shown[0] += 1;
                    ChangeKind::NumberNotExact {
                        written: cut(token, 40),
                        becomes: cut(becomes, 40),
                    }
                }
                LossyKind::DuplicateKey { key } => {
                    shown[1] += 1;
                    ChangeKind::DuplicateKey { key: cut(key, 40) }
                }
            };
            out.changes.push(Change {
                line: r.line,
                column: column(l.offset),
                kind,
            });
        }
        // Beyond the limit: counted, not kept.
        out.changes.count_more(2, counts[0] - shown[0]);
        out.changes.count_more(3, counts[1] - shown[1]);
    }
    // A loaded session's record parsed with its fresh ids already (`Record::value`) has
    // them set again, in place: no change.
    let mut value = r.value().into_owned();
    plan.apply(records, i, parent, &mut value);
    json::write_value(bytes, &value);
    bytes.push(b'\n');
}

/// Writes `text` (an object in `JSON.stringify` form) with `id` and `parentId` set as
/// `JSON.stringify` would write them after `entry.id = id; entry.parentId = parent`: in
/// place when the keys exist, appended otherwise. `false` (nothing written) when the text is
/// not such an object.
fn splice(
    text: &str,
    id: &str,
    parent: Option<&str>,
    scanner: &mut LineScanner,
    out: &mut Vec<u8>,
) -> bool {
    let Ok(skeleton) = scanner.scan(text.as_bytes()) else {
        return false;
    };
    if !skeleton.object || !text.ends_with('}') {
        return false;
    }
    let mut id_json = Vec::new();
    json::write_value(&mut id_json, &JsValue::string(id));
    let mut parent_json = Vec::new();
    json::write_value(
        &mut parent_json,
        &parent.map_or(JsValue::Null, JsValue::string),
    );
    let mut replace: Vec<((usize, usize), &[u8])> = Vec::with_capacity(2);
    let mut append: Vec<(&str, &[u8])> = Vec::with_capacity(2);
    match skeleton.id {
        Some(span) => replace.push((span, &id_json)),
        None => append.push(("id", &id_json)),
    }
    match skeleton.parent_id {
        Some(span) => replace.push((span, &parent_json)),
        None => append.push(("parentId", &parent_json)),
    }
    replace.sort_by_key(|((start, _), _)| *start);
    let body_end = text.len() - 1;
    let bytes = text.as_bytes();
    let mut at = 0;
    for ((start, end), with) in replace {
        out.extend_from_slice(&bytes[at..start]);
        out.extend_from_slice(with);
        at = end;
    }
    out.extend_from_slice(&bytes[at..body_end]);
    let mut empty = text.len() == 2;
    for (key, value) in append {
        if !empty {
            out.push(b',');
        }
        empty = false;
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value);
    }
    out.push(b'}');
    true
}

impl Session<'_> {
    /// Record `i`'s value as the migration leaves it (pi's and omp's migrated array), for
    /// records visited in file order: `parent` carries the last id v1→v2 gave, from one call
    /// to the next (start with `None`).
    pub(crate) fn migrated_value<'s>(&'s self, i: usize, parent: &mut Option<&'s str>) -> JsValue {
        let mut value = self.records[i].value().into_owned();
        self.plan.apply(&self.records, i, *parent, &mut value);
        if let Some(id) = self.plan.id(i) {
            *parent = Some(id);
        }
        value
    }

    /// Whether the v1→v2 migration runs on this file (it gives every entry a new id).
    pub(crate) fn migrates_v1(&self) -> bool {
        self.plan.v1
    }
}

/// The file `values` make (one per record, written with `JSON.stringify`), with the lines
/// that are not records (unparseable lines, pi 0.87.1's falsy lines) kept verbatim at their
/// place: pi's whole-array rewrite, the reference the streaming writer is checked against.
pub fn whole_file(session: &Session<'_>, values: &[JsValue]) -> Vec<u8> {
    let mut items: Vec<(usize, Vec<u8>)> = session
        .records
        .iter()
        .zip(values)
        .map(|(r, v)| (r.line, json::to_string(v).into_bytes()))
        .chain(
            session
                .dropped
                .iter()
                .map(|d| (d.line, session.dropped_bytes(d).to_vec())),
        )
        .chain(session.skipped.iter().filter_map(|s| {
            let (offset, len) = s.verbatim?;
            Some((s.line, session.source.get(offset..offset + len)?.to_vec()))
        }))
        .collect();
    items.sort_by_key(|(line, _)| *line);
    items
        .into_iter()
        .flat_map(|(_, mut bytes)| {
            bytes.push(b'\n');
            bytes
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PiVersion;
    use crate::migrate::{SequentialIds, v1_to_v2, v2_to_v3};
    use crate::session::LoadOptions;

    /// pi's result: every value migrated by the whole-array functions, one per line, with
    /// the lines that are not records kept at their place.
    fn whole_array(bytes: &[u8], pi: PiVersion) -> Vec<u8> {
        let session = Session::load_unmigrated(
            bytes,
            pi,
            crate::Dialect::Pi,
            super::super::load::Pieces::Borrowed(&|_| {}),
        )
        .unwrap();
        let mut values: Vec<JsValue> = session
            .records
            .iter()
            .map(|r| r.value().into_owned())
            .collect();
        if session.version.migrated_v1 {
            v1_to_v2(&mut values, &mut SequentialIds::default());
        }
        if session.version.migrated_v2 {
            v2_to_v3(&mut values);
        }
        whole_file(&session, &values)
    }

    fn streamed(bytes: &[u8], pi: PiVersion, limit: usize) -> (Vec<u8>, Changes) {
        let migration = Session::load_for_migration(
            bytes,
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi,
                dialect: crate::Dialect::Pi,
            },
            &|_| {},
        )
        .unwrap();
        let mut out = Vec::new();
        let mut changes = Changes::new(limit);
        migration.write(&mut out, &mut changes, &|_| {}).unwrap();
        (out, changes)
    }

    fn same_as_pi(text: &str) {
        for pi in [PiVersion::V0_73, PiVersion::V0_87] {
            let expected = whole_array(text.as_bytes(), pi);
            let (out, _) = streamed(text.as_bytes(), pi, 0);
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&expected),
                "{pi:?}"
            );
            // A loaded session writes the same.
            let session = Session::load_with(
                text.as_bytes(),
                LoadOptions {
                    ids: &mut SequentialIds::default(),
                    pi,
                    dialect: crate::Dialect::Pi,
                },
            )
            .unwrap();
            assert_eq!(session.to_jsonl(), expected, "{pi:?}");
        }
    }

    #[test]
    fn m1_to_m5_spliced_lines_equal_parse_then_stringify() {
        same_as_pi(concat!(
            r#"{"type":"session","id":"s","timestamp":"t"}"#,
            "\n{}\n",
            r#"{"type":"message","id":"old","x":{"id":1,"parentId":2}}"#,
            "\n",
            r#"{"type":"m","parentId":"p","z":[1,{"id":"q"}]}"#,
            "\n",
            r#"{"parentId":"p","id":"q"}"#,
            "\n",
            r#"{"type":"m","a":"\"id\":\"x\"","id":null}"#,
            "\n",
            r#"{ "type" : "spaced" , "id":"w" }"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":9}"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":2}"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":10}"#,
            "\n",
            r#"{"type":"x","id":{"o":1}}"#,
            "\n",
            r#"{"type":"x","id":7}"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":13}"#,
            "\n",
            r#"{"type":"m","id":"\u0041"}"#,
            "\n",
            "not json\n42\n\"s\"\n[1]\nnull\n0\n",
            r#"{"type":"compaction","firstKeptEntryIndex":16}"#,
            "\n",
            r#"{"type":"compaction","firstKeptEntryIndex":19}"#,
            "\n",
            r#"{"type":"session","id":"again"}"#,
        ));
    }

    #[test]
    fn v2_hook_messages_and_non_canonical_lines_equal_parse_then_stringify() {
        same_as_pi(concat!(
            r#"{"type":"session","version":2,"id":"s"}"#,
            "\n",
            r#"{"type":"message","id":"a","message":{"role":"hookMessage","content":"x"}}"#,
            "\n",
            r#"{"type":"message","id":"b","message":{"role":"hook\u004dessage"}}"#,
            "\n",
            r#"{"type":"message","id":"c","message":{"role":"user","content":1.0}}"#,
            "\r\n",
            r#"{"type":"custom","n":1E400,"m":123456789012345678901234567890,"k":1,"k":2}"#,
            "\n\n  \n",
            r#"{"type":"message","message":"text"}"#,
        ));
    }

    #[test]
    fn parents_chain_across_batches() {
        let mut text = String::from(r#"{"type":"session","id":"s"}"#);
        text.push('\n');
        let pad = "x".repeat(200);
        for i in 0..40_000 {
            if i % 5000 == 0 {
                text.push_str("42\nnot json\n");
            }
            text.push_str(&format!(r#"{{"type":"message","n":{i},"pad":"{pad}"}}"#));
            text.push('\n');
        }
        text.push_str(r#"{"type":"compaction","firstKeptEntryIndex":39000}"#);
        same_as_pi(&text);
    }

    #[test]
    fn lossy_changes_are_reported_with_their_place() {
        let mut bytes = b"\n \n{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        bytes.extend_from_slice(b"{\"type\":\"m\",\"s\":\"a\xff\"}\n");
        bytes.extend_from_slice(b"\n\n");
        bytes.extend_from_slice(b"{\"type\":\"m\",\"n\":1E400,\"k\":1,\"k\":2}\n");
        bytes.extend_from_slice(b"{\"type\":\"m\",\"big\":123456789012345678901234567890}\n\n");
        let (out, changes) = streamed(&bytes, PiVersion::V0_87, 10);
        assert_eq!(out, whole_array(&bytes, PiVersion::V0_87));
        let summary: Vec<String> = changes
            .shown
            .iter()
            .map(|c| format!("{}:{} {:?}", c.line, c.column, c.kind))
            .collect();
        assert_eq!(
            summary,
            [
                "1:1 BlankLines { count: 2 }",
                "4:19 InvalidUtf8 { byte: 255 }",
                "5:1 BlankLines { count: 2 }",
                "7:17 NumberNotExact { written: \"1E400\", becomes: \"null\" }",
                "7:29 DuplicateKey { key: \"k\" }",
                "8:19 NumberNotExact { written: \"123456789012345678901234567890\", becomes: \"1.2345678901234568e+29\" }",
                "9:1 BlankLines { count: 1 }",
            ]
        );
        assert_eq!(changes.counts, [1, 5, 2, 1]);
        // A v3 file is not rewritten: nothing changes.
        let v3 = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n\n{\"n\":1E400}\n";
        let (out, changes) = streamed(v3, PiVersion::V0_73, 10);
        assert_eq!(out, v3);
        assert!(changes.is_empty());
    }

    #[test]
    fn changes_beyond_the_limit_are_counted() {
        let mut text = String::from("{\"type\":\"session\",\"id\":\"s\"}\n");
        for _ in 0..50 {
            text.push_str("{\"a\":1,\"a\":2,\"a\":3,\"n\":1e999}\n\n");
        }
        let (_, changes) = streamed(text.as_bytes(), PiVersion::V0_73, 3);
        assert_eq!(changes.counts, [0, 50, 50, 100]);
        assert_eq!(changes.shown.len(), 9);
        assert_eq!(
            (
                changes.hidden(0),
                changes.hidden(1),
                changes.hidden(2),
                changes.hidden(3)
            ),
            (0, 47, 47, 97)
        );
    }

    #[test]
    fn read_version_agrees_with_loading() {
        for text in [
            "",
            "x\n{\"type\":\"session\",\"id\":\"s\"}",
            "null\n{\"type\":\"session\",\"id\":\"s\",\"version\":3}",
            "{\"type\":\"session\",\"id\":\"s\",\"version\":\"2\"}",
            "{\"type\":\"session\",\"id\":\"s\",\"version\":\"abc\"}",
            "{\"type\":\"message\",\"id\":\"s\"}",
            "\u{feff}{\"type\":\"session\",\"id\":\"s\"}",
        ] {
            for pi in [PiVersion::V0_73, PiVersion::V0_87] {
                let loaded = Session::load_with(
                    text.as_bytes(),
                    LoadOptions {
                        ids: &mut SequentialIds::default(),
                        pi,
                        dialect: crate::Dialect::Pi,
                    },
                )
                .map(|s| format!("{:?}", s.version));
                let read = Session::read_version(text.as_bytes(), pi).map(|v| format!("{v:?}"));
                assert_eq!(read, loaded, "{pi:?} {text:?}");
            }
        }
    }
}
