//! Totals over many sessions, grouped (by session, project, model, provider, day or month),
//! with history copied into forked and branched sessions counted once.
//!
//! pi copies entries into a new file when it forks (`forkFrom`: every entry) or branches
//! (`createBranchedSession`: the path to the leaf), keeping their `id` and `timestamp`; a
//! usage report that adds up files counts that history, and its cost, again. Here an entry is
//! identified by its type, id and timestamp, and belongs to the first session (by creation
//! time, then path) that holds it; later copies are left out of the groups and added up
//! apart ([`Report::copies`]).
//!
//! Every entry of a file counts, on every branch, as pi 0.87.1 and later count for `/session`
//! ([`crate::Session::stats`]): abandoned branches were paid for too. A usage number that is
//! missing counts as 0 ([`Usage::missing_as_zero`]; pi's own sum becomes NaN).
//!
//! An oh-my-pi file ([`Dialect::Omp`]) counts what omp's `/session` adds up
//! ([`crate::omp::stats`]): its `model_usage` entries (calls beside the conversation) as
//! `usage` entries, the usage of the subagent a `task` tool result ran (`details.usage`)
//! instead of a tool result's own `usage`, and assistant messages without a usage as
//! readable.

use super::{SessionStats, Usage};
use crate::json::{self, JsValue, LineScanner, MessageScan, Role as ScanRole, Span};
use crate::omp::stats::{OmpStats, read_usage};
use crate::{Dialect, date};
use crate::{Record, Session};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// What the entries are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// The session file.
    #[default]
    Session,
    /// The header's `cwd`.
    Project,
    /// `provider/model` of assistant messages (`responseModel` when the provider said which
    /// model answered) and `usage` entries; other entries in `-`.
    Model,
    /// The provider of assistant messages and `usage` entries; other entries in `-`.
    Provider,
    /// The entry's day (UTC), `YYYY-MM-DD`.
    Day,
    /// The entry's month (UTC), `YYYY-MM`.
    Month,
}

/// What one group adds up to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Sessions with at least one entry in the group (for [`GroupBy::Session`], the session).
    /// In [`Report::total`], the sessions of the report: every one read, or with a time range
    /// those with an entry in it.
    pub sessions: u64,
    /// Messages with role `user`.
    pub user_messages: u64,
    /// Messages with role `assistant`.
    pub assistant_messages: u64,
    /// `toolCall` blocks of assistant messages.
    pub tool_calls: u64,
    /// Messages with role `toolResult`.
    pub tool_results: u64,
    /// Every `message` entry.
    pub messages: u64,
    /// Compaction entries.
    pub compactions: u64,
    /// Branch summary entries.
    pub branch_summaries: u64,
    /// `usage` entries (cache warming and other calls outside the conversation).
    pub usage_entries: u64,
    /// Usage of assistant messages and of tool results that carry one.
    pub message_usage: Usage,
    /// Usage of compactions and branch summaries (the model calls that wrote them).
    pub summary_usage: Usage,
    /// Usage of `usage` entries.
    pub usage_entry_usage: Usage,
    /// Entries whose usage pi cannot add ([`SessionStats::unreadable`]); left out.
    pub unreadable: u64,
}

impl Tally {
    /// Everything: messages, summaries and `usage` entries (pi 0.87.1's totals).
    pub fn usage(&self) -> Usage {
        let mut all = self.message_usage;
        all.add(&self.summary_usage);
        all.add(&self.usage_entry_usage);
        all
    }

    fn add(&mut self, fact: &Fact) {
        if fact.unreadable {
            self.unreadable += 1;
        }
        let usage = fact.counted_usage();
        let usage = usage.as_ref();
        match fact.kind {
            Kind::Message(role) => {
                self.messages += 1;
                match role {
                    Role::User => self.user_messages += 1,
                    Role::Assistant => self.assistant_messages += 1,
                    Role::ToolResult => self.tool_results += 1,
                    Role::Other => {}
                }
                self.tool_calls += u64::from(fact.tool_calls);
                if let Some(u) = usage {
                    self.message_usage.add(u);
                }
            }
            Kind::Compaction | Kind::BranchSummary => {
                if fact.kind == Kind::Compaction {
                    self.compactions += 1;
                } else {
                    self.branch_summaries += 1;
                }
                if let Some(u) = usage {
                    self.summary_usage.add(u);
                }
            }
            Kind::UsageEntry => {
                self.usage_entries += 1;
                if let Some(u) = usage {
                    self.usage_entry_usage.add(u);
                }
            }
        }
    }

    fn merge(&mut self, other: &Tally) {
        self.sessions += other.sessions;
        self.user_messages += other.user_messages;
        self.assistant_messages += other.assistant_messages;
        self.tool_calls += other.tool_calls;
        self.tool_results += other.tool_results;
        self.messages += other.messages;
        self.compactions += other.compactions;
        self.branch_summaries += other.branch_summaries;
        self.usage_entries += other.usage_entries;
        self.message_usage.add(&other.message_usage);
        self.summary_usage.add(&other.summary_usage);
        self.usage_entry_usage.add(&other.usage_entry_usage);
        self.unreadable += other.unreadable;
    }
}

/// A message's role, as the tally counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// Any other role (custom messages, bash executions, summaries), or none.
    Other,
}

/// What kind of entry a [`Fact`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `message` entry.
    Message(Role),
    /// A `compaction` entry.
    Compaction,
    /// A `branch_summary` entry.
    BranchSummary,
    /// A `usage` entry (an omp `model_usage` entry).
    UsageEntry,
}

/// One entry's part in the totals ([`fact_of_record`]).
#[derive(Debug, Clone)]
pub struct Fact {
    /// Its identity across files: type, id and timestamp hashed (`None` without an id);
    /// see [`identity`].
    pub key: Option<u64>,
    /// What it is.
    pub kind: Kind,
    /// `toolCall` blocks of an assistant message.
    pub tool_calls: u32,
    /// Its usage as read (a missing number NaN); `None` without one.
    pub usage: Option<Usage>,
    /// Usage pi cannot add ([`SessionStats::unreadable`]): left out of the totals.
    pub unreadable: bool,
    /// The provider of an assistant message or `usage` entry (shared: a session's facts
    /// name a few providers many times, and a cache reading them back makes each name once).
    pub provider: Option<Arc<str>>,
    /// The model (`responseModel ?? model` for an assistant message; shared as the provider).
    pub model: Option<Arc<str>>,
    /// When it was written: the entry's `timestamp`, else the message's (ms; NaN unknown).
    pub time_ms: f64,
}

/// What one session file contributes: its identity and the facts of its entries.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    /// Where the file is (the group name of [`GroupBy::Session`]).
    pub path: String,
    /// The header's `id`.
    pub id: String,
    /// The header's `cwd` (the group name of [`GroupBy::Project`]).
    pub cwd: String,
    /// The header's `timestamp` (ms since the epoch; NaN when it is not a date).
    pub created_ms: f64,
    /// The header's `parentSession`, when the session was forked or branched from another.
    pub parent_session: Option<String>,
    /// The facts of its entries that count, in file order ([`fact_of_record`]); a cache may
    /// keep them, and add those of lines appended since.
    pub facts: Vec<Fact>,
}

/// The first session (by header creation time, a header without a date last, then path)
/// owns an entry that several hold: the order [`report`] takes sessions in.
pub fn session_order(a: (f64, &str), b: (f64, &str)) -> std::cmp::Ordering {
    let created = |ms: f64| if ms.is_nan() { f64::INFINITY } else { ms };
    created(a.0)
        .total_cmp(&created(b.0))
        .then_with(|| a.1.cmp(b.1))
}

/// The provider and model names of one session's facts, each kept once: a session names a
/// few of them in many facts. [`SessionFacts::of`] shares them among its facts, and a cache
/// reading facts back makes each once ([`Names::of_bytes`]).
#[derive(Debug, Default)]
pub struct Names(Vec<Arc<str>>);

impl Names {
    /// The most names kept: past them (a session of many models), a name is not shared, so
    /// that finding one never costs more than this many comparisons.
    pub const KEPT: usize = 16;

    /// The name kept equal to `bytes`, else `bytes` as a new one (kept while there is room);
    /// `None` when they are not UTF-8.
    pub fn of_bytes(&mut self, bytes: &[u8]) -> Option<Arc<str>> {
        if let Some(name) = self.find(bytes) {
            return Some(name);
        }
        let name: Arc<str> = Arc::from(std::str::from_utf8(bytes).ok()?);
        self.keep(&name);
        Some(name)
    }

    /// Makes `name` the one kept equal to it (keeping it while there is room).
    pub fn share(&mut self, name: &mut Option<Arc<str>>) {
        let Some(this) = name else {
            return;
        };
        match self.find(this.as_bytes()) {
            Some(kept) => *this = kept,
            None => self.keep(this),
        }
    }

    fn find(&self, bytes: &[u8]) -> Option<Arc<str>> {
        self.0
            .iter()
            .find(|name| name.as_bytes() == bytes)
            .map(Arc::clone)
    }

    fn keep(&mut self, name: &Arc<str>) {
        if self.0.len() < Self::KEPT {
            self.0.push(Arc::clone(name));
        }
    }
}

fn string_of(value: Option<&JsValue>) -> Option<Arc<str>> {
    value.and_then(JsValue::as_str).map(Arc::from)
}

/// An entry's identity across files: its type, id and timestamp as JSON text (`None` without
/// an id, written `null`).
pub fn identity(entry_type: &str, id: &str, timestamp: &str) -> Option<u64> {
    if id == "null" {
        return None;
    }
    let mut h = rustc_hash::FxHasher::default();
    entry_type.hash(&mut h);
    id.hash(&mut h);
    timestamp.hash(&mut h);
    Some(h.finish())
}

/// [`identity`] of an entry read from its line: the raw text of its `id` and `timestamp`
/// values (`""` when missing), written as `JSON.stringify` writes them, so that an id spelled
/// with escapes (`"\u0061"`) or a number spelled otherwise (`1.50`) is the entry that a copy
/// writing it plainly holds.
fn identity_of_raw(entry_type: &str, id: &str, timestamp: &str) -> Option<u64> {
    identity(entry_type, &stringified(id), &stringified(timestamp))
}

/// The raw JSON value `raw` as `JSON.stringify` writes it: itself when it is a string without
/// escapes (the common case, nothing to do), else parsed and written again.
fn stringified(raw: &str) -> Cow<'_, str> {
    if raw.is_empty() || (raw.starts_with('"') && memchr::memchr(b'\\', raw.as_bytes()).is_none()) {
        return Cow::Borrowed(raw);
    }
    match json::parse(raw) {
        Ok(value) => Cow::Owned(json::to_string(&value)),
        Err(_) => Cow::Borrowed(raw),
    }
}

fn role_of(message: &JsValue) -> Role {
    match message.get("role").and_then(JsValue::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("toolResult") => Role::ToolResult,
        _ => Role::Other,
    }
}

impl Fact {
    /// The usage the totals add: none when unreadable, a missing number as 0.
    pub fn counted_usage(&self) -> Option<Usage> {
        self.usage
            .filter(|_| !self.unreadable)
            .map(Usage::missing_as_zero)
    }

    fn new(kind: Kind, key: Option<u64>, time_ms: f64) -> Fact {
        Fact {
            key,
            kind,
            tool_calls: 0,
            usage: None,
            unreadable: false,
            provider: None,
            model: None,
            time_ms,
        }
    }

    /// Fills in what a message (its value) says, by `dialect`'s rules: role, tool calls,
    /// usage, model.
    fn message(&mut self, message: &JsValue, dialect: Dialect) {
        let (tool_calls, usage) = match dialect {
            Dialect::Pi => {
                let mut one = SessionStats::default();
                self.unreadable = !one.count_message(message, true);
                (one.tool_calls, one.usage)
            }
            Dialect::Omp => {
                let mut one = OmpStats::default();
                self.unreadable = !one.count_message(message);
                (one.tool_calls, one.usage.counts())
            }
        };
        let role = role_of(message);
        self.kind = Kind::Message(role);
        self.tool_calls = u32::try_from(tool_calls).unwrap_or(u32::MAX);
        if usage != Usage::default() {
            self.usage = Some(usage);
        }
        if role == Role::Assistant {
            self.provider = string_of(message.get("provider"));
            self.model = string_of(
                message
                    .get("responseModel")
                    .filter(|m| !matches!(m, JsValue::Null))
                    .or_else(|| message.get("model")),
            );
        }
        if self.time_ms.is_nan()
            && let Some(JsValue::Number(ms)) = message.get("timestamp")
        {
            self.time_ms = *ms;
        }
    }

    /// Fills in what an assistant message says, from its text: only `usage` and the names are
    /// built, the content's blocks are only looked at for their `type` (the texts, thinking
    /// and arguments are skipped). `false` (nothing filled in) when the text is not one valid
    /// object; the caller then parses it.
    fn assistant(&mut self, body: &str) -> bool {
        // One pass over the body: its members are handed over in order, and each block of
        // `content` is looked at where it is (only its `type` is read); everything else is
        // skipped.
        let (mut usage, mut provider, mut model, mut response_model, mut time) =
            (None, None, None, None, None);
        let mut calls = 0u32;
        let mut null_block = false;
        let mut cursor = json::Cursor::new(body);
        let scanned = cursor.object(|c, key| {
            match key {
                b"content" => {
                    // The last `content` is the one `JSON.parse` keeps.
                    (calls, null_block) = (0, false);
                    c.array(|c| {
                        let at = c.position();
                        let mut is_call = false;
                        let is_object = c.object(|c, key| {
                            if key == b"type" {
                                is_call = c.exact_string()?.as_deref() == Some("toolCall");
                            }
                            Ok(())
                        })?;
                        if !is_object && body.get(at..c.position()) == Some("null") {
                            null_block = true;
                        }
                        calls += u32::from(is_call);
                        Ok(())
                    })?;
                }
                b"usage" => usage = Some(c.raw()?),
                b"provider" => provider = Some(c.raw()?),
                b"model" => model = Some(c.raw()?),
                b"responseModel" => response_model = Some(c.raw()?),
                b"timestamp" => time = Some(c.raw()?),
                _ => {}
            }
            Ok(())
        });
        if !matches!(scanned, Ok(true)) || cursor.end().is_err() {
            return false;
        }
        let parse = |s: Option<&str>| s.and_then(|s| json::parse(s).ok());
        let string = |s| parse(s).as_ref().and_then(|v: &JsValue| string_of(Some(v)));
        self.kind = Kind::Message(Role::Assistant);
        // `c.type` throws on a null block; `usage.input` on a missing usage.
        if !null_block {
            self.tool_calls = calls;
        }
        let read = (!null_block)
            .then(|| Usage::of(parse(usage).as_ref()))
            .flatten();
        self.unreadable = read.is_none();
        self.usage = read.filter(|u| *u != Usage::default());
        self.provider = string(provider);
        // `responseModel ?? model`.
        self.model = match parse(response_model) {
            Some(m) if !matches!(m, JsValue::Null) => string_of(Some(&m)),
            _ => string(model),
        };
        if self.time_ms.is_nan()
            && let Some(JsValue::Number(ms)) = parse(time)
        {
            self.time_ms = ms;
        }
        true
    }

    /// Fills in what an entry other than a message says (its value), by `dialect`'s rules
    /// (omp adds the usage of no compaction or branch summary).
    fn entry(&mut self, value: &JsValue, dialect: Dialect) {
        let usage = value.get("usage");
        match self.kind {
            Kind::UsageEntry => {
                self.usage = match dialect {
                    Dialect::Pi => Usage::of(usage),
                    Dialect::Omp => read_usage(usage).map(|(u, _)| u.counts()),
                };
                self.unreadable = self.usage.is_none();
                self.provider = string_of(value.get("provider"));
                self.model = string_of(value.get("model"));
            }
            _ => {
                if dialect == Dialect::Pi && usage.is_some_and(JsValue::is_truthy) {
                    self.usage = Usage::of(usage);
                    self.unreadable = self.usage.is_none();
                }
            }
        }
    }
}

/// Whether a message may have a `usage` member, which only parsing it tells for sure: its
/// text names `"usage"`, or spells a key with `\u` escapes (such as `"\u0075sage"`) and one
/// of its members is `usage` once unescaped.
fn names_usage(body: &str) -> bool {
    let bytes = body.as_bytes();
    if memchr::memmem::find(bytes, b"\"usage\"").is_some() {
        return true;
    }
    if memchr::memmem::find(bytes, b"\\u").is_none() {
        return false;
    }
    let mut found = false;
    let read = json::Cursor::new(body).object(|_, key| {
        found |= key == b"usage";
        Ok(())
    });
    found || read.is_err()
}

/// The fact of an entry read from its value (migrated records, and entries other than
/// messages).
fn fact_of_value(kind: Kind, entry_type: &str, value: &JsValue, dialect: Dialect) -> Fact {
    let text = |key: &str| value.get(key).map(json::to_string).unwrap_or_default();
    let key = value
        .get("id")
        .and_then(|_| identity(entry_type, &text("id"), &text("timestamp")));
    let mut fact = Fact::new(kind, key, date::date_parse(value.get("timestamp")));
    match kind {
        Kind::Message(_) => match value.get("message") {
            Some(message) if !matches!(message, JsValue::Null) => fact.message(message, dialect),
            _ => fact.unreadable = true,
        },
        _ => fact.entry(value, dialect),
    }
    fact
}

/// The fact of a message entry as it is in the file: its id, timestamp and role from the line
/// scanner, and only the messages that can carry usage (an assistant's, a tool result that
/// names `usage`) parsed. `None` when the line needs the slow path.
fn fact_of_message_text(scanner: &mut LineScanner, text: &str, dialect: Dialect) -> Option<Fact> {
    let raw = scanner.scan(text.as_bytes()).ok()?;
    fact_of_message_parts(text, raw.id, raw.timestamp, raw.message.as_ref(), dialect)
}

/// [`fact_of_record`] of a message entry line `text` that was not rewritten, for a reader
/// that already knows where the line's members are: the ranges of its raw `id` and
/// `timestamp` values and the scan of its `message` (the loader's, [`Record::message`]), the
/// last of each as `JSON.parse` keeps it; `dialect` says whose rules count it. `None` when
/// the line needs the slow path.
pub fn fact_of_message_parts(
    text: &str,
    id: Option<Span>,
    timestamp: Option<Span>,
    message: Option<&MessageScan>,
    dialect: Dialect,
) -> Option<Fact> {
    let span = |s: Option<Span>| s.and_then(|(a, b)| text.get(a..b)).unwrap_or("");
    let key = id.and_then(|_| identity_of_raw("message", span(id), span(timestamp)));
    let time_ms = match timestamp {
        Some(_) => date::date_parse(json::parse(span(timestamp)).ok().as_ref()),
        None => f64::NAN,
    };
    let mut fact = Fact::new(Kind::Message(Role::Other), key, time_ms);
    let Some(m) = message else {
        fact.unreadable = true;
        return Some(fact);
    };
    if m.is_null {
        fact.unreadable = true;
        return Some(fact);
    }
    if !m.is_object {
        return Some(fact);
    }
    let body = text.get(m.start..m.end)?;
    // The text-only reading of an assistant message knows pi's rules only.
    if m.role == ScanRole::Assistant && dialect == Dialect::Pi && fact.assistant(body) {
        return Some(fact);
    }
    let parse = match m.role {
        ScanRole::Assistant | ScanRole::Other => true,
        ScanRole::ToolResult => names_usage(body),
        _ => false,
    };
    if parse {
        fact.message(&json::parse(body).ok()?, dialect);
    } else {
        fact.kind = Kind::Message(match m.role {
            ScanRole::User => Role::User,
            ScanRole::ToolResult => Role::ToolResult,
            _ => Role::Other,
        });
        if fact.time_ms.is_nan() {
            fact.time_ms = json::parse(body)
                .ok()
                .and_then(|v| match v.get("timestamp") {
                    Some(JsValue::Number(ms)) => Some(*ms),
                    _ => None,
                })
                .unwrap_or(f64::NAN);
        }
    }
    Some(fact)
}

/// The fact of one entry record of a file in `dialect`, as the totals count it: `None` for
/// entries that do not count (anything but messages, compactions, branch summaries and
/// `usage` entries, omp's `model_usage` entries in its dialect). `scanner` is reused from
/// entry to entry.
pub fn fact_of_record(
    record: &Record<'_>,
    dialect: Dialect,
    scanner: &mut LineScanner,
) -> Option<Fact> {
    let kind = match (record.entry_type(), dialect) {
        (Some("message"), _) => Kind::Message(Role::Other),
        (Some("compaction"), _) => Kind::Compaction,
        (Some("branch_summary"), _) => Kind::BranchSummary,
        (Some("usage"), Dialect::Pi) | (Some("model_usage"), Dialect::Omp) => Kind::UsageEntry,
        _ => return None,
    };
    let fast = (matches!(kind, Kind::Message(_)) && !record.is_rewritten())
        .then(|| record.with_text(|text| fact_of_message_text(scanner, text, dialect)))
        .flatten();
    Some(fast.unwrap_or_else(|| {
        record.with_value(|value| {
            fact_of_value(
                kind,
                record.entry_type().unwrap_or_default(),
                value,
                dialect,
            )
        })
    }))
}

/// The identity of any entry record ([`identity`] of its type, id and timestamp as JSON
/// text), for the entries that do not count too: the key [`fact_of_record`] gives the ones
/// that do, found without reading the rest of the entry (a message's id and timestamp from
/// the line scanner, as the facts take them).
pub fn record_identity(record: &Record<'_>, scanner: &mut LineScanner) -> Option<u64> {
    let entry_type = record.entry_type().unwrap_or_default();
    if entry_type == "message" && !record.is_rewritten() {
        let from_text = record.with_text(|text| {
            let raw = scanner.scan(text.as_bytes()).ok()?;
            let span = |s: Option<(usize, usize)>| s.map_or("", |(a, b)| &text[a..b]);
            Some(
                raw.id
                    .and_then(|_| identity_of_raw("message", span(raw.id), span(raw.timestamp))),
            )
        });
        if let Some(identity) = from_text {
            return identity;
        }
    }
    record.with_value(|value| {
        let text = |key: &str| value.get(key).map(json::to_string).unwrap_or_default();
        value.get("id")?;
        identity(entry_type, &text("id"), &text("timestamp"))
    })
}

impl SessionFacts {
    /// The facts of every entry of `session` that counts (messages, compactions, branch
    /// summaries, `usage` entries), in file order; `path` names it.
    pub fn of(session: &Session<'_>, path: &str) -> SessionFacts {
        let header = session.header().value();
        let mut scanner = LineScanner::default();
        let mut names = Names::default();
        let facts = session
            .entry_records()
            .filter_map(|record| fact_of_record(record, session.dialect, &mut scanner))
            .map(|mut fact| {
                names.share(&mut fact.provider);
                names.share(&mut fact.model);
                fact
            })
            .collect();
        SessionFacts {
            path: path.to_owned(),
            id: header
                .get("id")
                .and_then(JsValue::as_str)
                .unwrap_or_default()
                .to_owned(),
            cwd: header
                .get("cwd")
                .and_then(JsValue::as_str)
                .unwrap_or_default()
                .to_owned(),
            created_ms: date::date_parse(header.get("timestamp")),
            parent_session: header
                .get("parentSession")
                .and_then(JsValue::as_str)
                .map(str::to_owned),
            facts,
        }
    }

    /// What pi 0.87.1 and later's `getSessionStats()` gives for the session (every entry,
    /// every copy): [`Session::stats`] with those rules, from the facts.
    pub fn pi_stats(&self) -> SessionStats {
        let mut stats = SessionStats::default();
        for fact in &self.facts {
            if fact.unreadable {
                stats.unreadable += 1;
            }
            if let Kind::Message(role) = fact.kind {
                stats.total_messages += 1;
                match role {
                    Role::User => stats.user_messages += 1,
                    Role::Assistant => stats.assistant_messages += 1,
                    Role::ToolResult => stats.tool_results += 1,
                    Role::Other => {}
                }
                stats.tool_calls += u64::from(fact.tool_calls);
            }
            if !fact.unreadable
                && let Some(u) = &fact.usage
            {
                stats.usage.add(u);
            }
        }
        stats
    }
}

mod adding;
pub use adding::{Checkpoint, Ledger, Options, Report, report};

#[cfg(test)]
pub(crate) mod tests;
