//! `pi-session stats`: tokens, cost and message counts of many sessions, grouped, with history
//! copied into forked and branched sessions counted once (`pi_session_format::stats`).
//!
//! Files are read on every core; a file that is not a session is reported and skipped, the
//! others still counted, and the exit code says so.

use crate::display;
use crate::validate::targets::{self, Target};
use clap::{Args, ValueEnum};
use pi_session_format::date;
use pi_session_format::stats::ledger::{self, GroupBy, Options, Report, SessionFacts, Tally};
use pi_session_format::stats::{SessionStats, Usage};
use pi_session_format::{PiVersion, Session};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// `pi-session stats`.
#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct StatsArgs {
    /// Session files or directories (every `*.jsonl` under them); default: pi's session
    /// directory (`$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions`).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// What a row adds up.
    #[arg(long, value_enum, default_value_t = By::Session)]
    by: By,
    /// Only entries written on or after this day (`YYYY-MM-DD`, UTC) or time (ISO 8601).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only entries written on or before this day (`YYYY-MM-DD`, UTC, the whole day) or
    /// before this time (ISO 8601).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Count every copy of an entry: forked and branched sessions then count the history
    /// they copied again (raw sums).
    #[arg(long)]
    no_dedupe: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Whose rules give each session's own numbers (`pi` in the JSON report): 0.73.1 counts
    /// the current branch, 0.87.1 and later every entry.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// Follow symbolic links to directories while walking a directory.
    #[arg(long)]
    follow: bool,
    /// Also take, in directories, the archives real deployments leave beside sessions
    /// (`*.jsonl.reset.<time>`, `*.jsonl.deleted.<time>`, `*.jsonl.bak-<n>-ms`).
    #[arg(long)]
    include_archived: bool,
}

const AFTER_HELP: &str = "\
Every entry of a file counts, on every branch (abandoned branches were paid for too), as pi \
0.87.1 and later count for /session: user, assistant and tool-result messages, tool calls, \
and the usage of assistant messages, of tool results that carry one, of compactions and \
branch summaries (the calls that wrote them) and of `usage` entries (cache warming), the last \
two also shown apart.

Counted once: an entry (type, id, timestamp) that a forked or branched session copied belongs \
to the first session that holds it, by creation time; the report says how much it left out. \
--no-dedupe counts every copy.

Exit codes: 0 every file counted; 1 a file could not be read or is not a session (said on \
stderr, the others still counted); 2 usage error.";

/// `--by`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum By {
    /// One row per session file.
    Session,
    /// One row per working directory (the header's `cwd`).
    Project,
    /// One row per `provider/model` that answered; user messages, tool results and summaries
    /// in `-`.
    Model,
    /// One row per provider; user messages, tool results and summaries in `-`.
    Provider,
    /// One row per day (UTC) the entries were written.
    Day,
    /// One row per month (UTC).
    Month,
}

impl By {
    fn group_by(self) -> GroupBy {
        match self {
            By::Session => GroupBy::Session,
            By::Project => GroupBy::Project,
            By::Model => GroupBy::Model,
            By::Provider => GroupBy::Provider,
            By::Day => GroupBy::Day,
            By::Month => GroupBy::Month,
        }
    }

    fn name(self) -> &'static str {
        match self {
            By::Session => "session",
            By::Project => "project",
            By::Model => "model",
            By::Provider => "provider",
            By::Day => "day",
            By::Month => "month",
        }
    }
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A table sized to the terminal.
    Table,
    /// One JSON object: `{"formatVersion":1,"groups":[…],"total":…,"copies":…}`.
    Json,
    /// One row per group, with a header row.
    Csv,
}

/// What the JSON report says of one session beside its totals.
struct Own {
    id: String,
    cwd: String,
    created_ms: f64,
    pi: SessionStats,
}

/// One file read.
struct Read {
    facts: SessionFacts,
    pi: SessionStats,
}

/// Reads one session; `Err` with what to say when it cannot be counted.
fn read(target: &Target, pi: PiVersion) -> Result<Read, String> {
    let input = target.open().map_err(|e| e.to_string())?;
    let session = Session::from_bytes(input.bytes(), pi).map_err(|e| e.to_string())?;
    let name = target.display();
    let facts = SessionFacts::of(&session, &name);
    // pi's own numbers: 0.73.1 counts its context, later pis every entry (the facts).
    let stats = if pi.reads_like_0_87() {
        facts.pi_stats()
    } else {
        session.stats().map_err(|e| e.to_string())?
    };
    input.verify().map_err(|e| e.to_string())?;
    Ok(Read { facts, pi: stats })
}

/// A `--since`/`--until` value: the start of the day for `YYYY-MM-DD` (and, for `--until`,
/// the start of the next), the time itself otherwise.
pub(crate) fn time_of(text: &str, end_of_day: bool) -> Result<f64, String> {
    let t = date::parse_date(text);
    if t.is_nan() {
        return Err(format!(
            "{text:?} is not a date: write YYYY-MM-DD (UTC) or an ISO 8601 time"
        ));
    }
    let date_only = text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-';
    Ok(if end_of_day && date_only {
        t + 86_400_000.0
    } else {
        t
    })
}

/// Runs `pi-session stats`.
pub(crate) fn main(args: StatsArgs) -> ExitCode {
    let usage = |message: &str| {
        eprintln!("pi-session: error: {message}");
        ExitCode::from(2)
    };
    if let Err(targets::Usage(message)) = targets::check_usage(&args.paths) {
        return usage(&message);
    }
    let since_ms = match args.since.as_deref().map(|s| time_of(s, false)).transpose() {
        Ok(t) => t,
        Err(message) => return usage(&format!("--since: {message}")),
    };
    let until_ms = match args.until.as_deref().map(|s| time_of(s, true)).transpose() {
        Ok(t) => t,
        Err(message) => return usage(&format!("--until: {message}")),
    };
    if let (Some(since), Some(until), Some(a), Some(b)) = (
        since_ms,
        until_ms,
        args.since.as_deref(),
        args.until.as_deref(),
    ) && since >= until
    {
        return usage(&format!(
            "--since {} is not before --until {}: no entry is in between",
            display::text(a, 100),
            display::text(b, 100)
        ));
    }
    let collected = match targets::collect_said(
        &args.paths,
        targets::Walk {
            follow: args.follow,
            include_archived: args.include_archived,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let pi = args.pi;
    let progress = crate::validate::progress_bar(collected.targets.len(), "reading");
    let results: Vec<(&Target, Result<Read, String>)> = collected
        .targets
        .par_iter()
        .map(|target| {
            let read = read(target, pi);
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            (target, read)
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut errors = Vec::new();
    let mut sessions = Vec::new();
    // Each session's header and pi's own numbers, by path (the groups of `--by session`).
    let mut own: HashMap<String, Own> = HashMap::new();
    for (target, result) in results {
        match result {
            Ok(read) => {
                let f = &read.facts;
                own.insert(
                    f.path.clone(),
                    Own {
                        id: f.id.clone(),
                        cwd: f.cwd.clone(),
                        created_ms: f.created_ms,
                        pi: read.pi,
                    },
                );
                sessions.push(read.facts);
            }
            Err(error) => {
                eprintln!(
                    "pi-session: {}: skipped: {}",
                    target.display(),
                    display::text(&error, 300)
                );
                errors.push((target.display(), error));
            }
        }
    }
    let options = Options {
        by: args.by.group_by(),
        since_ms,
        until_ms,
        no_dedupe: args.no_dedupe,
    };
    let report = ledger::report(sessions, &options);
    let text = match args.format {
        Format::Table => table(&report, &args, terminal_width()),
        Format::Json => json(&report, &args, &errors, &own),
        Format::Csv => csv(&report),
    };
    if let Err(code) = crate::print_report(&text) {
        return code;
    }
    if errors.is_empty() && collected.empty.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn terminal_width() -> usize {
    if !std::io::stdout().is_terminal() {
        return usize::MAX;
    }
    terminal_size::terminal_size().map_or(120, |(w, _)| usize::from(w.0))
}

/// A count with thousands separators (`1,234,567`); `-` for NaN (a missing number).
fn count(n: f64) -> String {
    if !n.is_finite() {
        return "-".to_owned();
    }
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0.0 {
        out.insert(0, '-');
    }
    out
}

fn dollars(n: f64) -> String {
    if n.is_finite() {
        format!("${n:.4}")
    } else {
        "-".to_owned()
    }
}

/// The columns of the table: header and cell of a group.
type Column = (&'static str, fn(&Tally) -> String);

const COLUMNS: [Column; 9] = [
    ("sessions", |t| count(t.sessions as f64)),
    ("messages", |t| count(t.messages as f64)),
    ("tool calls", |t| count(t.tool_calls as f64)),
    ("input", |t| count(t.usage().input)),
    ("output", |t| count(t.usage().output)),
    ("cache read", |t| count(t.usage().cache_read)),
    ("cache write", |t| count(t.usage().cache_write)),
    ("tokens", |t| count(t.usage().total_tokens())),
    ("cost", |t| dollars(t.usage().cost)),
];

/// `s` cut to `width` characters, keeping its end (a path's file name) behind `…`.
fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_owned();
    }
    let keep: String = s.chars().skip(n - width.saturating_sub(1)).collect();
    format!("…{keep}")
}

fn table(report: &Report, args: &StatsArgs, width: usize) -> String {
    let rows: Vec<(String, Vec<String>)> = report
        .groups
        .iter()
        .map(|(name, t)| {
            (
                display::text(name, 4096),
                COLUMNS.iter().map(|(_, cell)| cell(t)).collect(),
            )
        })
        .chain(std::iter::once((
            "total".to_owned(),
            COLUMNS
                .iter()
                .map(|(_, cell)| cell(&report.total))
                .collect(),
        )))
        .collect();
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (head, _))| {
            rows.iter()
                .map(|(_, cells)| cells[i].chars().count())
                .max()
                .unwrap_or(0)
                .max(head.len())
        })
        .collect();
    let numbers: usize = widths.iter().map(|w| w + 2).sum();
    let longest = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let first = longest
        .max(args.by.name().len())
        .min(width.saturating_sub(numbers).max(12));
    let mut out = String::new();
    let line = |out: &mut String, name: &str, cells: &[String]| {
        out.push_str(&format!("{:<first$}", fit(name, first)));
        for (cell, w) in cells.iter().zip(&widths) {
            out.push_str(&format!("  {cell:>w$}"));
        }
        out.push('\n');
    };
    let heads: Vec<String> = COLUMNS.iter().map(|(h, _)| (*h).to_owned()).collect();
    line(&mut out, args.by.name(), &heads);
    for (name, cells) in &rows {
        if name == "total" && std::ptr::eq(name, &rows[rows.len() - 1].0) {
            out.push_str(&"-".repeat(first + numbers));
            out.push('\n');
        }
        line(&mut out, name, cells);
    }
    let t = &report.total;
    out.push_str(&format!(
        "\n{} user and {} assistant messages, {} tool results; {} compactions and {} branch summaries cost {}, {} usage entries (cache warming) {}\n",
        count(t.user_messages as f64),
        count(t.assistant_messages as f64),
        count(t.tool_results as f64),
        count(t.compactions as f64),
        count(t.branch_summaries as f64),
        dollars(t.summary_usage.cost),
        count(t.usage_entries as f64),
        dollars(t.usage_entry_usage.cost),
    ));
    let c = &report.copies;
    if args.no_dedupe {
        out.push_str("every copy counted (--no-dedupe): forked history is counted in each session that holds it\n");
    } else if c.messages + c.compactions + c.branch_summaries + c.usage_entries > 0 {
        out.push_str(&format!(
            "counted once: {} entries that {} forked or branched session{} copied were left out ({} tokens, {}); --no-dedupe counts them\n",
            count((c.messages + c.compactions + c.branch_summaries + c.usage_entries) as f64),
            count(c.sessions as f64),
            if c.sessions == 1 { "" } else { "s" },
            count(c.usage().total_tokens()),
            dollars(c.usage().cost),
        ));
    }
    if t.unreadable > 0 {
        out.push_str(&format!(
            "{} entries have usage pi cannot add (pi's /session fails on their files): their numbers are left out\n",
            count(t.unreadable as f64)
        ));
    }
    out
}

fn usage_json(w: &mut pi_session_format::json::JsonWriter, u: &Usage) {
    w.begin_object();
    w.key("input").number(u.input);
    w.key("output").number(u.output);
    w.key("cacheRead").number(u.cache_read);
    w.key("cacheWrite").number(u.cache_write);
    w.key("totalTokens").number(u.total_tokens());
    w.key("cost").number(u.cost);
    w.end_object();
}

fn tally_json(w: &mut pi_session_format::json::JsonWriter, t: &Tally) {
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
    usage_json(w, &t.usage());
    w.key("messageUsage");
    usage_json(w, &t.message_usage);
    w.key("summaryUsage");
    usage_json(w, &t.summary_usage);
    w.key("usageEntryUsage");
    usage_json(w, &t.usage_entry_usage);
    w.key("unreadable").uint(t.unreadable);
}

fn json(
    report: &Report,
    args: &StatsArgs,
    errors: &[(String, String)],
    own: &HashMap<String, Own>,
) -> String {
    let mut w = pi_session_format::json::JsonWriter::new();
    w.begin_object();
    w.key("formatVersion").uint(1);
    w.key("by").string(args.by.name());
    w.key("dedupe").bool(!args.no_dedupe);
    w.key("groups").begin_array();
    for (name, t) in &report.groups {
        w.begin_object();
        w.key("name").string(name);
        let session = own.get(name).filter(|_| args.by == By::Session);
        if let Some(s) = session {
            w.key("id").string(&s.id);
            w.key("cwd").string(&s.cwd);
            if s.created_ms.is_finite() {
                w.key("created").string(&date::to_iso_string(s.created_ms));
            }
        }
        tally_json(&mut w, t);
        if let Some(Own { pi: stats, .. }) = session {
            // What pi's /session shows for the file (every copy included).
            w.key("pi")
                .value(&pi_session_format::json::parse(&stats.to_json()).unwrap_or_default());
            // Entries of the file on which pi's getSessionStats throws (then `pi` is ours).
            w.key("piUnreadable").uint(stats.unreadable);
        }
        w.end_object();
    }
    w.end_array();
    w.key("total").begin_object();
    tally_json(&mut w, &report.total);
    w.end_object();
    w.key("copies").begin_object();
    tally_json(&mut w, &report.copies);
    w.end_object();
    w.key("forkedSessions").uint(report.forked_sessions);
    w.key("errors").begin_array();
    for (path, error) in errors {
        w.begin_object();
        w.key("path").string(path);
        w.key("error").string(error);
        w.end_object();
    }
    w.end_array();
    w.end_object();
    let mut text = w.as_str().to_owned();
    text.push('\n');
    text
}

fn csv(report: &Report) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let number = |n: f64| {
        if n.is_finite() {
            let mut out = Vec::new();
            pi_session_format::json::write_number(&mut out, n);
            String::from_utf8(out).unwrap_or_default()
        } else {
            String::new()
        }
    };
    let _ = w.write_record([
        "group",
        "sessions",
        "user_messages",
        "assistant_messages",
        "tool_calls",
        "tool_results",
        "messages",
        "compactions",
        "branch_summaries",
        "usage_entries",
        "input",
        "output",
        "cache_read",
        "cache_write",
        "total_tokens",
        "cost",
        "summary_cost",
        "usage_entry_cost",
        "unreadable",
    ]);
    for (name, t) in &report.groups {
        let u = t.usage();
        let _ = w.write_record([
            name.clone(),
            t.sessions.to_string(),
            t.user_messages.to_string(),
            t.assistant_messages.to_string(),
            t.tool_calls.to_string(),
            t.tool_results.to_string(),
            t.messages.to_string(),
            t.compactions.to_string(),
            t.branch_summaries.to_string(),
            t.usage_entries.to_string(),
            number(u.input),
            number(u.output),
            number(u.cache_read),
            number(u.cache_write),
            number(u.total_tokens()),
            number(u.cost),
            number(t.summary_usage.cost),
            number(t.usage_entry_usage.cost),
            t.unreadable.to_string(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
