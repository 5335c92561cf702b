//! The stats report as one document: every session counted ([`Counted`]), the totals of
//! [`ledger::report`], each session's own numbers as pi's `/session` shows them, and the
//! files that could not be counted. [`StatsReport::to_json`] is what `pi-session stats
//! --format json` prints and what the Node and Python bindings return; the command line's
//! table and CSV read the same [`StatsReport`]. [`TimeRange`] reads the `--since`/`--until`
//! bounds, and [`GroupBy`] its names.

use super::SessionStats;
use super::ledger::{self, Checkpoint, GroupBy, Ledger, Options, Report, SessionFacts, Tally};
use crate::date;
use crate::json::{self, JsonWriter};
use crate::omp::{OmpContextError, OmpStats};
use crate::session::LoadError;
use crate::stats::Usage;
use crate::tree::CycleError;
use crate::{Dialect, PiVersion, Session};
use pi_session_fs::discover::Target;
use std::collections::HashMap;

/// A session's own numbers, as the program that wrote it shows them for `/session`.
#[derive(Debug, Clone)]
pub enum OwnStats {
    /// pi's `getSessionStats()`, with the session's pi rules: 0.73.1 counts its current
    /// branch ([`Session::stats`]), 0.87.1 and later every entry (the facts,
    /// [`SessionFacts::pi_stats`]).
    Pi(SessionStats),
    /// omp's `getSessionStats()` of an oh-my-pi file ([`Session::omp_stats`]), or why it is
    /// not reproduced for this file (its entries still count in the totals).
    Omp(Result<OmpStats, OmpContextError>),
}

/// One session as the report counts it: the facts of its entries, and the numbers its own
/// program gives for it alone.
#[derive(Debug, Clone)]
pub struct Counted {
    /// The facts the totals add up.
    pub facts: SessionFacts,
    /// What `/session` shows for the file.
    pub own: OwnStats,
}

impl Counted {
    /// Counts `session`, named `path` in the report, by the rules of its dialect
    /// ([`Session::dialect`]). Fails only where pi 0.73.1's numbers need the context and the
    /// parents form a cycle.
    pub fn of(session: &Session<'_>, path: &str) -> Result<Counted, CycleError> {
        let facts = SessionFacts::of(session, path);
        let own = match session.dialect {
            Dialect::Omp => OwnStats::Omp(session.omp_stats()),
            Dialect::Pi if session.pi.reads_like_0_87() => OwnStats::Pi(facts.pi_stats()),
            Dialect::Pi => OwnStats::Pi(session.stats()?),
        };
        Ok(Counted { facts, own })
    }

    /// Loads the session of `bytes` with `pi`'s rules in `dialect` (`None`: the file's own,
    /// [`crate::session::Loader::detect_dialect`]) and counts it; a file that is not a
    /// session (or whose parents form a cycle, for pi 0.73.1) is [`Skipped`] with the reason.
    pub fn read(
        bytes: &[u8],
        pi: PiVersion,
        dialect: Option<Dialect>,
        path: &str,
    ) -> Result<Counted, Skipped> {
        Counted::of_loaded(Session::loader(pi).with_dialect(dialect).load(bytes), path)
    }

    /// Counts a session as loaded, or names why it could not be loaded ([`Skipped`]).
    fn of_loaded(loaded: Result<Session<'_>, LoadError>, path: &str) -> Result<Counted, Skipped> {
        let session = loaded.map_err(|e| Skipped::new(path, e))?;
        Counted::of(&session, path).map_err(|e| Skipped::new(path, e))
    }

    /// Reads `target` (as the command line reads it) and counts it ([`Counted::read`]); a
    /// file that cannot be read, or that shrank while it was read, is [`Skipped`]. A large
    /// file is loaded in pieces ([`crate::session::Loader::load_input`]) and each line
    /// counted is read again alone, so that counting a session of gigabytes holds little of
    /// it in memory.
    pub fn read_target(
        target: &Target,
        pi: PiVersion,
        dialect: Option<Dialect>,
    ) -> Result<Counted, Skipped> {
        let path = target.display();
        target
            .read_with(|input| {
                let loader = Session::loader(pi).with_dialect(dialect);
                Counted::of_loaded(loader.load_input(input), &path)
            })
            .unwrap_or_else(|e| Err(Skipped::new(&path, e)))
    }
}

/// What the report says of one session beside its totals (the groups of
/// [`GroupBy::Session`]).
#[derive(Debug, Clone)]
pub struct SessionSummary {
    /// The header's `id`.
    pub id: String,
    /// The header's `cwd`.
    pub cwd: String,
    /// The header's `timestamp` (ms since the epoch; NaN when it is not a date).
    pub created_ms: f64,
    /// The numbers `/session` shows for the file ([`Counted::own`]).
    pub own: OwnStats,
}

/// Sessions added up before (a cache keeps them): where the ledger stood after them, and
/// what the report says of each beside its totals, by path ([`StatsReport::after`]).
#[derive(Debug, Clone, Default)]
pub struct Earlier {
    /// Where the ledger stood after them.
    pub checkpoint: Checkpoint,
    /// Their summaries, by path (needed by [`GroupBy::Session`] only).
    pub sessions: Vec<(String, SessionSummary)>,
}

/// A file that could not be counted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file as the report names it.
    pub path: String,
    /// What went wrong.
    pub error: String,
}

impl Skipped {
    /// `path` skipped because of `error`.
    pub fn new(path: &str, error: impl std::fmt::Display) -> Skipped {
        Skipped {
            path: path.to_owned(),
            error: error.to_string(),
        }
    }
}

/// The version of [`StatsReport::to_json`]'s document (`formatVersion`).
pub const FORMAT_VERSION: u64 = 1;

/// The whole report.
#[derive(Debug, Clone)]
pub struct StatsReport {
    /// What was added up, and how.
    pub options: Options,
    /// The groups and the totals.
    pub report: Report,
    /// Each session's header and pi's numbers, by path.
    pub sessions: HashMap<String, SessionSummary>,
    /// The files that could not be counted (the others still were).
    pub skipped: Vec<Skipped>,
}

impl StatsReport {
    /// Adds up `counted` (in any order) with `options`; `skipped` are reported as they are.
    pub fn new(counted: Vec<Counted>, skipped: Vec<Skipped>, options: Options) -> StatsReport {
        StatsReport::after(None, counted, skipped, options, |_| false).0
    }

    /// Adds up `counted` (in any order) after the sessions `earlier` added up (every session
    /// of `counted` comes after them in [`ledger::session_order`]; `None`: there are none),
    /// with `options` (those of `earlier`); `skipped` are reported as they are. Also gives
    /// where the ledger stands after the longest run of sessions of `counted`, in order, that
    /// are `settled` (by path), with their paths: what a cache keeps for the next run
    /// ([`Earlier`]); `None` when no session of `counted` begins such a run.
    pub fn after(
        earlier: Option<Earlier>,
        counted: Vec<Counted>,
        skipped: Vec<Skipped>,
        options: Options,
        settled: impl Fn(&str) -> bool,
    ) -> (StatsReport, Option<(Checkpoint, Vec<String>)>) {
        let (checkpoint, earlier_sessions) = match earlier {
            Some(e) => (e.checkpoint, e.sessions),
            None => (Checkpoint::default(), Vec::new()),
        };
        let mut sessions = HashMap::with_capacity(counted.len() + earlier_sessions.len());
        sessions.extend(earlier_sessions);
        let mut facts = Vec::with_capacity(counted.len());
        for Counted { facts: f, own } in counted {
            sessions.insert(
                f.path.clone(),
                SessionSummary {
                    id: f.id.clone(),
                    cwd: f.cwd.clone(),
                    created_ms: f.created_ms,
                    own,
                },
            );
            facts.push(f);
        }
        facts.sort_by(|a, b| {
            ledger::session_order((a.created_ms, &a.path), (b.created_ms, &b.path))
        });
        let count: usize = facts.iter().map(|s| s.facts.len()).sum();
        let mut ledger = Ledger::resume(&options, checkpoint, count);
        let run = facts.iter().take_while(|s| settled(&s.path)).count();
        let mut kept = None;
        for (i, session) in facts.iter().enumerate() {
            ledger.add(session);
            if i + 1 == run {
                let paths = facts[..run].iter().map(|s| s.path.clone()).collect();
                kept = Some((ledger.checkpoint(), paths));
            }
        }
        let report = StatsReport {
            options,
            report: ledger.finish(),
            sessions,
            skipped,
        };
        (report, kept)
    }

    /// Reads and counts `targets` on every core ([`Counted::read_target`]) and adds them up
    /// with `options`: the files that cannot be counted are [`StatsReport::skipped`], in the
    /// order of `targets`.
    pub fn of_targets(
        targets: &[Target],
        pi: PiVersion,
        dialect: Option<Dialect>,
        options: Options,
    ) -> StatsReport {
        use rayon::prelude::*;
        let (counted, skipped): (Vec<Counted>, Vec<Skipped>) = targets
            .par_iter()
            .map(|target| Counted::read_target(target, pi, dialect))
            .partition_map(|read| match read {
                Ok(c) => rayon::iter::Either::Left(c),
                Err(s) => rayon::iter::Either::Right(s),
            });
        StatsReport::new(counted, skipped, options)
    }

    /// The report as one JSON object:
    /// `{"formatVersion":1,"by","dedupe","groups":[…],"total","copies","forkedSessions",
    /// "errors"}`. A group of [`GroupBy::Session`] also has the session's `id`, `cwd`,
    /// `created` and `dialect`, and what its program's `/session` shows for the file (every
    /// copy included): `pi` with `piUnreadable`, or for an oh-my-pi file `omp` with
    /// `ompUnreadable` (`ompError` instead where it is not reproduced); a number that is not
    /// finite is `null`, as `JSON.stringify` writes it.
    pub fn to_json(&self) -> String {
        let mut w = JsonWriter::new();
        w.begin_object();
        w.key("formatVersion").uint(FORMAT_VERSION);
        w.key("by").string(self.options.by.name());
        w.key("dedupe").bool(!self.options.no_dedupe);
        w.key("groups").begin_array();
        for (name, tally) in &self.report.groups {
            w.begin_object();
            w.key("name").string(name);
            let session = self
                .sessions
                .get(name)
                .filter(|_| self.options.by == GroupBy::Session);
            if let Some(s) = session {
                w.key("id").string(&s.id);
                w.key("cwd").string(&s.cwd);
                if s.created_ms.is_finite() {
                    w.key("created").string(&date::to_iso_string(s.created_ms));
                }
            }
            write_tally(&mut w, tally);
            if let Some(s) = session {
                match &s.own {
                    OwnStats::Pi(pi) => {
                        w.key("dialect").string(Dialect::Pi.name());
                        w.key("pi")
                            .value(&json::parse(&pi.to_json()).unwrap_or_default());
                        // Entries of the file on which pi's getSessionStats throws (then `pi`
                        // is ours).
                        w.key("piUnreadable").uint(pi.unreadable);
                    }
                    OwnStats::Omp(Ok(omp)) => {
                        w.key("dialect").string(Dialect::Omp.name());
                        w.key("omp").value(&omp.to_json());
                        w.key("ompUnreadable").uint(omp.unreadable);
                    }
                    OwnStats::Omp(Err(e)) => {
                        w.key("dialect").string(Dialect::Omp.name());
                        w.key("ompError").string(&e.to_string());
                    }
                }
            }
            w.end_object();
        }
        w.end_array();
        w.key("total").begin_object();
        write_tally(&mut w, &self.report.total);
        w.end_object();
        w.key("copies").begin_object();
        write_tally(&mut w, &self.report.copies);
        w.end_object();
        w.key("forkedSessions").uint(self.report.forked_sessions);
        w.key("errors").begin_array();
        for skipped in &self.skipped {
            w.begin_object();
            w.key("path").string(&skipped.path);
            w.key("error").string(&skipped.error);
            w.end_object();
        }
        w.end_array();
        w.end_object();
        w.as_str().to_owned()
    }
}

fn write_usage(w: &mut JsonWriter, u: &Usage) {
    w.begin_object();
    w.key("input").number(u.input);
    w.key("output").number(u.output);
    w.key("cacheRead").number(u.cache_read);
    w.key("cacheWrite").number(u.cache_write);
    w.key("totalTokens").number(u.total_tokens());
    w.key("cost").number(u.cost);
    w.end_object();
}

/// A tally's members, into the open object.
fn write_tally(w: &mut JsonWriter, t: &Tally) {
    w.key("sessions").uint(t.sessions);
    w.key("userMessages").uint(t.user_messages);
    w.key("assistantMessages").uint(t.assistant_messages);
    w.key("toolCalls").uint(t.tool_calls);
    w.key("toolResults").uint(t.tool_results);
    w.key("messages").uint(t.messages);
    w.key("compactions").uint(t.compactions);
    w.key("branchSummaries").uint(t.branch_summaries);
    w.key("usageEntries").uint(t.usage_entries);
    w.key("usage");
    write_usage(w, &t.usage());
    w.key("messageUsage");
    write_usage(w, &t.message_usage);
    w.key("summaryUsage");
    write_usage(w, &t.summary_usage);
    w.key("usageEntryUsage");
    write_usage(w, &t.usage_entry_usage);
    w.key("unreadable").uint(t.unreadable);
}

impl GroupBy {
    /// Every grouping, in the order the command line lists them.
    pub const ALL: [GroupBy; 6] = [
        GroupBy::Session,
        GroupBy::Project,
        GroupBy::Model,
        GroupBy::Provider,
        GroupBy::Day,
        GroupBy::Month,
    ];

    /// The grouping's name: `session`, `project`, `model`, `provider`, `day` or `month` (the
    /// `by` of the JSON report, the first column's header).
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Session => "session",
            GroupBy::Project => "project",
            GroupBy::Model => "model",
            GroupBy::Provider => "provider",
            GroupBy::Day => "day",
            GroupBy::Month => "month",
        }
    }
}

/// A name that is not a [`GroupBy`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownGroupBy(pub String);

impl std::fmt::Display for UnknownGroupBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot group by {:?}: use one of ", self.0)?;
        for (i, by) in GroupBy::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(by.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownGroupBy {}

impl std::str::FromStr for GroupBy {
    type Err = UnknownGroupBy;

    /// The grouping of [`GroupBy::name`].
    fn from_str(name: &str) -> Result<GroupBy, UnknownGroupBy> {
        GroupBy::ALL
            .into_iter()
            .find(|by| by.name() == name)
            .ok_or_else(|| UnknownGroupBy(name.to_owned()))
    }
}

/// Which end of a [`TimeRange`] a text gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The first moment counted: a day's start.
    Since,
    /// The first moment not counted: for a day, the start of the next (the whole day counts).
    Until,
}

impl Edge {
    /// `since` or `until`.
    pub fn name(self) -> &'static str {
        match self {
            Edge::Since => "since",
            Edge::Until => "until",
        }
    }
}

/// A bound that cannot be read, or bounds with nothing between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeError {
    /// The text is not a date.
    NotADate {
        /// Which bound.
        edge: Edge,
        /// The text given.
        text: String,
    },
    /// `since` is not before `until`.
    Empty {
        /// The `since` text.
        since: String,
        /// The `until` text.
        until: String,
    },
}

impl RangeError {
    /// Which bound to name in front of the message (`since` for an empty range).
    pub fn edge(&self) -> Edge {
        match self {
            RangeError::NotADate { edge, .. } => *edge,
            RangeError::Empty { .. } => Edge::Since,
        }
    }
}

impl std::fmt::Display for RangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RangeError::NotADate { text, .. } => write!(
                f,
                "{text:?} is not a date: write YYYY-MM-DD (UTC), today, yesterday or an ISO 8601 \
                 time"
            ),
            RangeError::Empty { since, until } => write!(
                f,
                "since {since:?} is not before until {until:?}: no entry is in between"
            ),
        }
    }
}

impl std::error::Error for RangeError {}

/// The times entries are counted between: `since` (inclusive) to `until` (exclusive), ms
/// since the epoch.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeRange {
    /// The first moment counted.
    pub since_ms: Option<f64>,
    /// The first moment not counted.
    pub until_ms: Option<f64>,
}

impl TimeRange {
    /// The range of two texts, each a day (`YYYY-MM-DD`, or `today` or `yesterday` by the
    /// system clock; UTC: from its start, `until` to its end) or an ISO 8601 time, as
    /// JavaScript's `Date.parse` reads it.
    pub fn parse(since: Option<&str>, until: Option<&str>) -> Result<TimeRange, RangeError> {
        use crate::write::{Clock, SystemClock};
        TimeRange::parse_at(since, until, SystemClock.now_ms())
    }

    /// [`TimeRange::parse`] with `today` the UTC day of `now_ms` (ms since the epoch).
    pub fn parse_at(
        since: Option<&str>,
        until: Option<&str>,
        now_ms: i64,
    ) -> Result<TimeRange, RangeError> {
        let bound = |text: &str, edge| match day_named(text, now_ms) {
            Some(day) => Ok(bound_of_day(day, edge)),
            None => bound(text, edge),
        };
        let range = TimeRange {
            since_ms: since.map(|t| bound(t, Edge::Since)).transpose()?,
            until_ms: until.map(|t| bound(t, Edge::Until)).transpose()?,
        };
        if let (Some(s), Some(u), Some(since), Some(until)) =
            (range.since_ms, range.until_ms, since, until)
            && s >= u
        {
            return Err(RangeError::Empty {
                since: since.to_owned(),
                until: until.to_owned(),
            });
        }
        Ok(range)
    }
}

/// One bound: the start of the day for `YYYY-MM-DD` (and, for [`Edge::Until`], the start of
/// the next), the time itself otherwise. (Days by name are read by [`TimeRange::parse_at`],
/// the one way in.)
fn bound(text: &str, edge: Edge) -> Result<f64, RangeError> {
    let t = date::parse_date(text);
    if t.is_nan() {
        return Err(RangeError::NotADate {
            edge,
            text: text.to_owned(),
        });
    }
    let date_only = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    Ok(if date_only { bound_of_day(t, edge) } else { t })
}

const DAY_MS: i64 = 86_400_000;

/// The start (ms) of the UTC day `text` names by its name (`today`, `yesterday`; any case)
/// when `now_ms` is the time.
fn day_named(text: &str, now_ms: i64) -> Option<f64> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    match text.to_ascii_lowercase().as_str() {
        "today" => Some(today as f64),
        "yesterday" => Some((today - DAY_MS) as f64),
        _ => None,
    }
}

/// A day's bound: its start for [`Edge::Since`], the start of the next for [`Edge::Until`]
/// (the whole day counts).
fn bound_of_day(start_ms: f64, edge: Edge) -> f64 {
    match edge {
        Edge::Since => start_ms,
        Edge::Until => start_ms + DAY_MS as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::stats::ledger::tests::{REPLY as ASSISTANT, USER, session};

    fn counted(bytes: &[u8], path: &str, pi: PiVersion) -> Counted {
        let session = Session::from_bytes(bytes, pi).unwrap();
        Counted::of(&session, path).unwrap()
    }

    fn report(by: GroupBy, no_dedupe: bool) -> json::JsValue {
        let a = session("a", "2026-01-01T00:00:00.000Z", None, &[USER, ASSISTANT]);
        let b = session(
            "b",
            "2026-01-03T00:00:00.000Z",
            Some("a.jsonl"),
            &[USER, ASSISTANT],
        );
        let counted = vec![
            counted(&b, "b.jsonl", PiVersion::default()),
            counted(&a, "a.jsonl", PiVersion::default()),
        ];
        let skipped = vec![Skipped {
            path: "c.jsonl".into(),
            error: "not a session".into(),
        }];
        let options = Options {
            by,
            no_dedupe,
            ..Options::default()
        };
        json::parse(&StatsReport::new(counted, skipped, options).to_json()).unwrap()
    }

    fn number(value: &json::JsValue, path: &[&str]) -> f64 {
        let mut v = value;
        for key in path {
            v = v.get(key).unwrap_or_else(|| panic!("no {key} in {path:?}"));
        }
        match v {
            json::JsValue::Number(n) => *n,
            other => panic!("{path:?} is {other:?}"),
        }
    }

    #[test]
    fn copied_history_counts_once_and_each_session_keeps_pi_numbers() {
        let r = report(GroupBy::Session, false);
        assert_eq!(r.get("by").and_then(json::JsValue::as_str), Some("session"));
        let json::JsValue::Array(groups) = r.get("groups").unwrap() else {
            panic!("groups")
        };
        assert_eq!(groups.0.len(), 2);
        // Sessions by creation time: a first, it owns the copied entries.
        assert_eq!(
            groups.0[0].get("name").and_then(json::JsValue::as_str),
            Some("a.jsonl")
        );
        assert_eq!(
            groups.0[0].get("id").and_then(json::JsValue::as_str),
            Some("a")
        );
        assert_eq!(number(&groups.0[0], &["messages"]), 2.0);
        assert_eq!(number(&groups.0[1], &["messages"]), 0.0);
        // pi's own numbers count every copy.
        assert_eq!(number(&groups.0[1], &["pi", "totalMessages"]), 2.0);
        assert_eq!(number(&groups.0[1], &["pi", "cost"]), 0.5);
        assert_eq!(number(&r, &["total", "usage", "cost"]), 0.5);
        assert_eq!(number(&r, &["copies", "messages"]), 2.0);
        assert_eq!(number(&r, &["forkedSessions"]), 1.0);
        assert_eq!(
            r.get("errors").map(json::to_string).as_deref(),
            Some(r#"[{"path":"c.jsonl","error":"not a session"}]"#)
        );
    }

    #[test]
    fn without_dedupe_every_copy_counts_and_other_groups_have_no_session_members() {
        let r = report(GroupBy::Model, true);
        assert!(matches!(r.get("dedupe"), Some(json::JsValue::Bool(false))));
        assert_eq!(number(&r, &["total", "usage", "cost"]), 1.0);
        assert_eq!(number(&r, &["total", "toolCalls"]), 2.0);
        let json::JsValue::Array(groups) = r.get("groups").unwrap() else {
            panic!("groups")
        };
        let names: Vec<_> = groups
            .0
            .iter()
            .map(|g| g.get("name").and_then(json::JsValue::as_str).unwrap())
            .collect();
        assert_eq!(names, ["-", "anthropic/claude"]);
        assert!(groups.0.iter().all(|g| g.get("pi").is_none()));
    }

    #[test]
    fn pi_0_73_counts_the_branch() {
        let a = session("a", "2026-01-01T00:00:00.000Z", None, &[USER, ASSISTANT]);
        let c = counted(&a, "a.jsonl", PiVersion::V0_73);
        let OwnStats::Pi(pi) = c.own else {
            panic!("a pi file gets pi's numbers")
        };
        assert_eq!(pi.total_messages, 2);
        assert_eq!(pi.tool_calls, 1);
    }

    #[test]
    fn group_by_names_round_trip() {
        for by in GroupBy::ALL {
            assert_eq!(by.name().parse::<GroupBy>(), Ok(by));
        }
        let e = "week".parse::<GroupBy>().unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"cannot group by "week": use one of session, project, model, provider, day, month"#
        );
    }

    #[test]
    fn a_day_until_is_the_whole_day_and_bounds_must_leave_room() {
        let r = TimeRange::parse(Some("2026-02-01"), Some("2026-02-01")).unwrap();
        assert_eq!(r.until_ms.unwrap() - r.since_ms.unwrap(), 86_400_000.0);
        let t = TimeRange::parse(None, Some("2026-02-01T12:00:00Z")).unwrap();
        assert_eq!(t.until_ms, Some(date::parse_date("2026-02-01T12:00:00Z")));
        let e = TimeRange::parse(Some("2026-02-02"), Some("2026-02-01")).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"since "2026-02-02" is not before until "2026-02-01": no entry is in between"#
        );
        let e = TimeRange::parse(None, Some("tomorrow")).unwrap_err();
        assert_eq!(e.edge(), Edge::Until);
        assert!(e.to_string().starts_with("\"tomorrow\" is not a date"));
    }

    #[test]
    fn today_and_yesterday_are_utc_days_of_the_clock() {
        let day = |d: &str| date::parse_date(d);
        // 2026-02-01T23:59:59.999Z, then the first moment of the next day.
        let late = day("2026-02-01T23:59:59.999Z") as i64;
        let r = TimeRange::parse_at(Some("yesterday"), Some("Today"), late).unwrap();
        assert_eq!(r.since_ms, Some(day("2026-01-31")));
        assert_eq!(r.until_ms, Some(day("2026-02-02")));
        let r = TimeRange::parse_at(Some("today"), None, late + 1).unwrap();
        assert_eq!(r.since_ms, Some(day("2026-02-02")));
        // Before 1970 the day still starts at its midnight.
        let r = TimeRange::parse_at(Some("today"), None, -1).unwrap();
        assert_eq!(r.since_ms, Some(day("1969-12-31")));
        let e = TimeRange::parse_at(Some("today"), Some("yesterday"), late).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"since "today" is not before until "yesterday": no entry is in between"#
        );
        // The system clock's today holds now.
        let now = TimeRange::parse(Some("today"), Some("today")).unwrap();
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as f64;
        assert!(now.since_ms.unwrap() <= ms && ms < now.until_ms.unwrap() + 1000.0);
    }
}
