//! The rows of one session: every entry, message, tool call, compaction and `usage` entry,
//! with its place in the tree (active path, depth, dangling parent) and its ownership
//! (copies of forked history skipped, or flagged with `--no-dedupe`), handed to a
//! [`RowSink`] as they are made so that a session of any size takes little memory: a
//! writer's Parquet part files ([`Sink`](crate::Sink)) or record batches in memory
//! ([`Collector`](crate::Collector)), from the one row-building path here.

use crate::ownership::{Ownership, SessionIndex};
use crate::partition::{self, PartitionBy};
use crate::tables::{CompactionRow, EntryRow, MessageRow, SessionRow, ToolCallRow, UsageEntryRow};
use crate::text::{self, Text};
use pi_session_format::json::{self, JsValue, LineScanner};
use pi_session_format::session::Key;
use pi_session_format::stats::Usage;
use pi_session_format::stats::ledger::{self, Fact};
use pi_session_format::tree::Leaf;
use pi_session_format::{Dialect, Index, Session, date};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

/// Where [`write_session`] hands the rows it makes, each with the partition it belongs in:
/// a writer's Parquet part files ([`Sink`](crate::Sink)), or each table's record batches in
/// memory ([`Collector`](crate::Collector)).
pub trait RowSink {
    /// Why a row could not be taken: a write error ([`Error`](crate::Error) for the part
    /// files; [`std::convert::Infallible`] in memory).
    type Error;
    /// Takes a row of `sessions`. `partition` is the row's partition directory
    /// (`month=2026-11`), `""` without partitioning ([`crate::partition::directory`]).
    fn session(&mut self, partition: &str, row: &SessionRow<'_>) -> Result<(), Self::Error>;
    /// Takes a row of `entries` (`partition` as for [`RowSink::session`]).
    fn entry(&mut self, partition: &str, row: &EntryRow<'_>) -> Result<(), Self::Error>;
    /// Takes a row of `messages` (`partition` as for [`RowSink::session`]).
    fn message(&mut self, partition: &str, row: &MessageRow<'_>) -> Result<(), Self::Error>;
    /// Takes a row of `tool_calls` (`partition` as for [`RowSink::session`]).
    fn tool_call(&mut self, partition: &str, row: &ToolCallRow<'_>) -> Result<(), Self::Error>;
    /// Takes a row of `compactions` (`partition` as for [`RowSink::session`]).
    fn compaction(&mut self, partition: &str, row: &CompactionRow<'_>) -> Result<(), Self::Error>;
    /// Takes a row of `usage_entries` (`partition` as for [`RowSink::session`]).
    fn usage_entry(&mut self, partition: &str, row: &UsageEntryRow<'_>) -> Result<(), Self::Error>;
    /// Called by [`write_session`] after each session's rows: where a sink writes out what
    /// it collected when that takes too much memory. Does nothing unless implemented.
    fn relieve(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Write every copy of forked history (flagged `is_copy`), not only the first session's.
    pub no_dedupe: bool,
    /// Hive-style partition directories.
    pub partition_by: Option<PartitionBy>,
    /// Only entries written at or after this time (ms since the epoch).
    pub since_ms: Option<f64>,
}

/// What `pi-session validate` said of a session file (the `sessions` table's verdict
/// columns).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// The strict verdict.
    pub strict: bool,
    /// The pi-loadable verdict.
    pub pi_loadable: bool,
    /// The pi-resumes verdict.
    pub pi_resumes: bool,
    /// Diagnostics of severity error.
    pub errors: u64,
    /// Diagnostics of severity warning.
    pub warnings: u64,
    /// The codes of the diagnostics, each once, in order.
    pub codes: Vec<String>,
}

/// One session to write: its file, its place in the ownership order and, when it was
/// validated, the verdicts.
#[derive(Debug, Clone, Copy)]
pub struct Source<'s> {
    /// The file's path (the tables' `file`).
    pub path: &'s str,
    /// Its index in the ownership order.
    pub holder: SessionIndex,
    /// What `validate` said of it (`--validate`), else `None`.
    pub verdicts: Option<&'s Verdicts>,
}

/// What one session contributed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Rows of `entries`.
    pub entries: u64,
    /// Entries left out as copies of an earlier session's (dedupe on).
    pub copies: u64,
}

/// A time in ms as the tables store it (`None` for NaN).
fn time(ms: f64) -> Option<i64> {
    ms.is_finite().then(|| ms.round() as i64)
}

fn key_text(key: &Key) -> Text<'_> {
    match key {
        Key::String(bytes) => Some(String::from_utf8_lossy(bytes)),
        _ => None,
    }
}

fn as_f64(value: &JsValue) -> Option<f64> {
    match value {
        JsValue::Number(n) => Some(*n),
        _ => None,
    }
}

const UNKNOWN: u32 = u32::MAX;
const VISITING: u32 = u32::MAX - 1;
const CYCLE: u32 = u32::MAX - 2;

/// The depth of every record (entries above it on its path), `None` where the path meets a
/// parent cycle.
fn depths(session: &Session<'_>, index: &Index) -> Vec<Option<u32>> {
    let n = session.records.len();
    let mut depth = vec![UNKNOWN; n];
    let mut chain = Vec::new();
    for start in 0..n {
        if depth[start] != UNKNOWN {
            continue;
        }
        chain.clear();
        let mut current = start;
        // The depth of the record above the chain's top, plus one.
        let base = loop {
            match depth[current] {
                UNKNOWN => {
                    depth[current] = VISITING;
                    chain.push(current);
                    match index.parent(current) {
                        Some(p) => current = p,
                        None => break 0,
                    }
                }
                VISITING | CYCLE => break CYCLE,
                d => break d + 1,
            }
        };
        for (k, &i) in chain.iter().rev().enumerate() {
            depth[i] = if base == CYCLE {
                CYCLE
            } else {
                base + k as u32
            };
        }
    }
    depth
        .into_iter()
        .map(|d| (d < CYCLE).then_some(d))
        .collect()
}

/// Which records are on the branch pi resumes.
fn active_path(session: &Session<'_>, index: &Index) -> Vec<bool> {
    let mut on_path = vec![false; session.records.len()];
    if let Some(leaf) = index.leaf_record(session, &Leaf::Current)
        && let Ok(path) = index.path(session, leaf)
    {
        for i in path {
            if let Some(slot) = on_path.get_mut(i) {
                *slot = true;
            }
        }
    }
    on_path
}

/// The usage columns: input, output, cacheRead, cacheWrite, total tokens, cost.
type UsageColumns = [Option<f64>; 6];

fn usage_columns(fact: Option<&Fact>) -> (UsageColumns, bool) {
    let unreadable = fact.is_some_and(|f| f.unreadable);
    let u: Option<Usage> = fact.and_then(Fact::counted_usage);
    let columns = match u {
        Some(u) => [
            Some(u.input),
            Some(u.output),
            Some(u.cache_read),
            Some(u.cache_write),
            Some(u.total_tokens()),
            Some(u.cost),
        ],
        None => [None; 6],
    };
    (columns, unreadable)
}

/// A tool call waiting for its result.
struct Pending<'a> {
    row: ToolCallRow<'a>,
    partition: String,
}

/// The bytes of the input read between two calls of the `release` function of
/// [`write_session`].
const RELEASE_EVERY: usize = 8 << 20;

/// Writes the rows of `session`, read from `source`, to `sink` (the first error of the
/// sink stops it and is returned). `release` is told, as the
/// records are read in file order, which ranges of the session's bytes are done with (a
/// memory-mapped file's pages can then be let go, see `Loader::releasing` of pi-session-format); `&|_| {}`
/// when they are in memory anyway.
pub fn write_session<S: RowSink + ?Sized>(
    session: &Session<'_>,
    source: &Source<'_>,
    ownership: &Ownership,
    options: &Options,
    sink: &mut S,
    release: &dyn Fn(std::ops::Range<usize>),
) -> Result<Written, S::Error> {
    let (path, holder) = (source.path, source.holder);
    let header = session.header().value();
    let session_id_text = header
        .get("id")
        .and_then(JsValue::as_str)
        .map(str::to_owned);
    let session_id: Text<'_> = session_id_text.as_deref().map(Cow::Borrowed);
    let cwd = header
        .get("cwd")
        .and_then(JsValue::as_str)
        .unwrap_or_default()
        .to_owned();
    let created = date::date_parse(header.get("timestamp"));
    let index = session.index();
    let on_path = active_path(session, index);
    let depth = depths(session, index);
    let by = options.partition_by;
    let part_of = |t: Option<i64>| partition::directory(by, &cwd, t);
    let file: Text<'_> = Some(Cow::Borrowed(path));
    // The lines of records a migration rewrote, written out again (the rows borrow from
    // them as from the file's own lines).
    let rewritten: Vec<Option<String>> = session
        .entries
        .iter()
        .map(|&i| {
            let record = &session.records[i];
            record
                .is_rewritten()
                .then(|| json::to_string(&record.value()))
        })
        .collect();

    let mut scanner = LineScanner::default();
    let mut here: FxHashSet<u64> = FxHashSet::default();
    let mut pending: FxHashMap<Cow<'_, str>, Vec<Pending<'_>>> = FxHashMap::default();
    let mut call_ids: FxHashSet<Cow<'_, str>> = FxHashSet::default();
    let mut written = Written::default();
    let mut copies = 0u64;
    let mut latest = f64::NAN;
    let mut active = options.since_ms.is_none();

    let mut released = 0;
    for (&i, rewritten) in session.entries.iter().zip(&rewritten) {
        let record = &session.records[i];
        if record.offset >= released + RELEASE_EVERY {
            release(released..record.offset);
            released = record.offset;
        }
        let entry_type = record.entry_type();
        // Entry lines parsed when the session was loaded; a line that is not an object (pi
        // keeps those too) has no members.
        let read = text::line(rewritten.as_deref().unwrap_or_else(|| record.text()));
        let read_whole = read.is_ok();
        let line = read.unwrap_or_default();
        // A message line as it is in the file: its fact from the members just found and the
        // loader's scan of its message, without scanning the line again.
        let fact = (entry_type == Some("message") && rewritten.is_none() && read_whole)
            .then(|| {
                ledger::fact_of_message_parts(
                    record.text(),
                    line.id_span,
                    line.timestamp_span,
                    record.message.as_ref(),
                    session.dialect,
                )
            })
            .flatten()
            .or_else(|| ledger::fact_of_record(record, session.dialect, &mut scanner));
        let key = match &fact {
            Some(f) => f.key,
            None => ledger::record_identity(record, &mut scanner),
        };
        let entry_ms = date::date_parse(line.timestamp.as_ref());
        let time_ms = fact.as_ref().map_or(entry_ms, |f| f.time_ms);
        if entry_ms.is_finite() && (latest.is_nan() || entry_ms > latest) {
            latest = entry_ms;
        }
        let place = ownership.of(key, holder);
        let first_here = key.is_none_or(|k| here.insert(k));
        let is_copy = place.owner != holder || !first_here;
        copies += u64::from(is_copy);
        let in_range = options.since_ms.is_none_or(|t| time_ms >= t);
        active |= in_range;
        let emit = in_range && (options.no_dedupe || !is_copy);
        let is_message = entry_type == Some("message");
        if !emit && !is_message {
            continue;
        }
        let entry_id = key_text(&record.id);
        let timestamp = time(time_ms);
        let partition = part_of(time(entry_ms).or(timestamp));
        if emit {
            written.entries += 1;
            sink.entry(
                &partition,
                &EntryRow {
                    file: file.clone(),
                    session_id: session_id.clone(),
                    entry_id: entry_id.clone(),
                    parent_id: key_text(&record.parent_id).filter(|_| record.parent_id.is_truthy()),
                    entry_type: entry_type.map(Cow::Borrowed),
                    timestamp: time(entry_ms),
                    line: Some(record.line as i64),
                    on_active_path: Some(on_path[i]),
                    depth: depth[i].map(i64::from),
                    parent_found: Some(!record.parent_id.is_truthy() || index.parent(i).is_some()),
                    is_copy: Some(is_copy),
                    owner_file: is_copy.then(|| Cow::Borrowed(ownership.file(place.owner))),
                    copied_in: place.others(ownership, holder),
                },
            )?;
        }
        let (usage, unreadable) = usage_columns(fact.as_ref());
        let [
            input,
            output,
            cache_read,
            cache_write,
            total_tokens,
            cost_total,
        ] = usage;
        match entry_type {
            Some("message") => {
                let Some(message) = line.message else {
                    if emit {
                        sink.message(
                            &partition,
                            &MessageRow {
                                file: file.clone(),
                                session_id: session_id.clone(),
                                entry_id,
                                line: Some(record.line as i64),
                                timestamp,
                                usage_unreadable: Some(unreadable),
                                on_active_path: Some(on_path[i]),
                                is_copy: Some(is_copy),
                                ..MessageRow::default()
                            },
                        )?;
                    }
                    continue;
                };
                let text = message.text();
                for call in &message.calls {
                    let Some(id) = &call.id else { continue };
                    call_ids.insert(id.clone());
                    if emit {
                        pending.entry(id.clone()).or_default().push(Pending {
                            row: ToolCallRow {
                                file: file.clone(),
                                session_id: session_id.clone(),
                                call_id: Some(id.clone()),
                                name: call.name.clone(),
                                arguments: call.arguments.clone(),
                                call_entry_id: entry_id.clone(),
                                timestamp,
                                is_copy: Some(is_copy),
                                ..ToolCallRow::default()
                            },
                            partition: partition.clone(),
                        });
                    }
                }
                let is_result = message.role.as_deref() == Some("toolResult");
                let call_id = message.tool_call_id.filter(|_| is_result);
                let is_error = message.is_error.filter(|_| is_result);
                if let Some(id) = &call_id
                    && let Some(calls) = pending.remove(id)
                {
                    for mut p in calls {
                        p.row.result_entry_id = entry_id.clone();
                        p.row.is_error = is_error;
                        p.row.result_timestamp = timestamp;
                        sink.tool_call(&p.partition, &p.row)?;
                    }
                }
                if !emit {
                    continue;
                }
                let is_assistant = message.role.as_deref() == Some("assistant");
                sink.message(
                    &partition,
                    &MessageRow {
                        file: file.clone(),
                        session_id: session_id.clone(),
                        entry_id,
                        line: Some(record.line as i64),
                        timestamp,
                        message_timestamp: message.timestamp.and_then(time),
                        call_found: is_result
                            .then(|| call_id.as_ref().is_some_and(|id| call_ids.contains(id))),
                        tool_call_id: call_id,
                        tool_name: message.tool_name.filter(|_| is_result),
                        is_error,
                        role: message.role,
                        text,
                        thinking: message.thinking,
                        provider: fact
                            .as_ref()
                            .and_then(|f| f.provider.as_deref().map(|p| Cow::Owned(p.to_owned()))),
                        model: fact
                            .as_ref()
                            .and_then(|f| f.model.as_deref().map(|m| Cow::Owned(m.to_owned()))),
                        stop_reason: message.stop_reason.filter(|_| is_assistant),
                        error_message: message.error_message,
                        tool_call_count: fact.as_ref().map(|f| i64::from(f.tool_calls)),
                        input,
                        output,
                        cache_read,
                        cache_write,
                        total_tokens,
                        cost_total,
                        usage_unreadable: Some(unreadable),
                        on_active_path: Some(on_path[i]),
                        is_copy: Some(is_copy),
                    },
                )?;
            }
            Some(kind @ ("compaction" | "branch_summary")) => sink.compaction(
                &partition,
                &CompactionRow {
                    file: file.clone(),
                    session_id: session_id.clone(),
                    entry_id,
                    entry_type: Some(Cow::Borrowed(kind)),
                    timestamp,
                    summary: line.summary,
                    first_kept_entry_id: line.first_kept_entry_id,
                    tokens_before: line.tokens_before,
                    from_id: line.from_id,
                    input,
                    output,
                    cache_read,
                    cache_write,
                    total_tokens,
                    cost_total,
                    usage_unreadable: Some(unreadable),
                    is_copy: Some(is_copy),
                },
            )?,
            // omp's `model_usage` entries are its `usage` entries (counted as `stats` counts
            // them).
            Some(type_ @ ("usage" | "model_usage"))
                if fact
                    .as_ref()
                    .is_some_and(|f| f.kind == ledger::Kind::UsageEntry) =>
            {
                sink.usage_entry(
                    &partition,
                    &UsageEntryRow {
                        file: file.clone(),
                        session_id: session_id.clone(),
                        entry_id,
                        timestamp,
                        kind: if type_ == "model_usage" {
                            line.purpose
                        } else {
                            line.kind
                        },
                        provider: line.provider,
                        model: line.model,
                        input,
                        output,
                        cache_read,
                        cache_write,
                        total_tokens,
                        cost_total,
                        usage_unreadable: Some(unreadable),
                        is_copy: Some(is_copy),
                    },
                )?
            }
            _ => {}
        }
    }
    for p in pending.into_values().flatten() {
        sink.tool_call(&p.partition, &p.row)?;
    }
    if !options.no_dedupe {
        written.copies = copies;
    }
    if active {
        sink.session(
            &part_of(time(created)),
            &SessionRow {
                file,
                session_id,
                cwd: Some(Cow::Borrowed(&cwd)),
                name: session_name(session).map(Cow::Owned),
                parent_session: header
                    .get("parentSession")
                    .and_then(JsValue::as_str)
                    .map(Cow::Borrowed),
                created: time(created),
                modified: time(if latest.is_finite() { latest } else { created }),
                version: header.get("version").and_then(as_f64).and_then(time),
                dialect: Some(Cow::Borrowed(session.dialect.name())),
                entries: Some(session.entries.len() as i64),
                dropped_lines: Some(session.dropped.len() as i64),
                copied_entries: Some(copies as i64),
                strict: source.verdicts.map(|v| v.strict),
                pi_loadable: source.verdicts.map(|v| v.pi_loadable),
                pi_resumes: source.verdicts.map(|v| v.pi_resumes),
                validate_errors: source.verdicts.map(|v| v.errors as i64),
                validate_warnings: source.verdicts.map(|v| v.warnings as i64),
                validate_codes: source
                    .verdicts
                    .map(|v| v.codes.iter().map(String::as_str).collect()),
            },
        )?;
    }
    sink.relieve()?;
    Ok(written)
}

/// The session's name: pi's (the last `session_info` name), or an oh-my-pi file's title (its
/// title slot's when not empty, else the header's `title`).
fn session_name(session: &Session<'_>) -> Option<String> {
    if session.dialect != Dialect::Omp {
        return pi_session_format::tree::session_name(session);
    }
    let slot = session.title_slot.as_ref().map(|slot| slot.title.clone());
    slot.filter(|title| !title.is_empty()).or_else(|| {
        session
            .header()
            .value()
            .get("title")
            .and_then(JsValue::as_str)
            .map(str::to_owned)
    })
}
