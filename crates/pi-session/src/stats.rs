//! `pi-session stats`: tokens, cost and message counts of many sessions, grouped, with history
//! copied into forked and branched sessions counted once (`pi_session_format::stats`).
//!
//! Files are read on every core; a file that is not a session is reported and skipped, the
//! others still counted, and the exit code says so. What each file gave is kept in a cache
//! (`stats/cache.rs`), so that a later run reads only the files that changed, and only the
//! lines appended to a file that grew.

mod cache;
mod ledger_cache;

use crate::display;
use crate::validate::targets;
use clap::{Args, ValueEnum};
use pi_session_format::stats::ledger::{GroupBy, Options, Tally};
use pi_session_format::stats::report::{Counted, OwnStats, RangeError, StatsReport, TimeRange};
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::discover::Target;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// `pi-session stats`.
#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct StatsArgs {
    /// Session files or directories (every `*.jsonl` under them); default: pi's session
    /// directory (`$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions`), or with
    /// `--dialect omp` omp's (`~/.omp/agent/sessions` and the places omp moves it to).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// What a row adds up.
    #[arg(long, value_enum, default_value_t = By::Session)]
    by: By,
    /// Only entries written on or after this day (`YYYY-MM-DD`, `today` or `yesterday`, UTC)
    /// or time (ISO 8601). With `--since` or `--until`, a session with no entry in the range
    /// is left out of the report (its rows and its count).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only entries written on or before this day (`YYYY-MM-DD`, `today` or `yesterday`, UTC,
    /// the whole day) or before this time (ISO 8601).
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
    /// Read every file as `pi`'s or `omp`'s (oh-my-pi); default: each file's own, told by
    /// omp's title slot, header members and entry types (see docs/dialects.md). An omp
    /// file's own numbers (`omp` in the JSON report) are what omp's `/session` shows.
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<Dialect>,
    /// Follow symbolic links to directories while walking a directory.
    #[arg(long)]
    follow: bool,
    /// Also take, in directories, the archives real deployments leave beside sessions
    /// (`*.jsonl.reset.<time>`, `*.jsonl.deleted.<time>`, `*.jsonl.bak-<n>-ms`).
    #[arg(long)]
    include_archived: bool,
    /// Read every file whole, and neither read nor write the stats cache
    /// (`$XDG_CACHE_HOME/pi-session/`).
    #[arg(long)]
    no_cache: bool,
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

What each file gave is kept in $XDG_CACHE_HOME/pi-session/ (~/.cache/pi-session/) with its \
device, inode, size and times: a later run reads only the files that changed, and of a file \
that only grew (its counted bytes unchanged), only the new lines; the totals of the sessions \
unchanged for ten minutes are kept as they stood after them, and a later run adds up only the \
sessions after them. The report is the same byte for byte; --no-cache reads everything.

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

/// What to say of bounds that cannot be read, with the options' names.
pub(crate) fn range_error(error: &RangeError) -> String {
    match error {
        RangeError::NotADate { edge, .. } => format!("--{}: {error}", edge.name()),
        RangeError::Empty { since, until } => format!(
            "--since {} is not before --until {}: no entry is in between",
            display::text(since, 100),
            display::text(until, 100)
        ),
    }
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
    let range = match TimeRange::parse(args.since.as_deref(), args.until.as_deref()) {
        Ok(range) => range,
        Err(error) => return usage(&range_error(&error)),
    };
    let paths = match (&args.paths[..], args.dialect) {
        ([], Some(Dialect::Omp)) => match omp_sessions_dir() {
            Ok(dir) => vec![dir],
            Err(message) => return usage(&message),
        },
        _ => args.paths.clone(),
    };
    let (pi, dialect) = (args.pi, args.dialect);
    let walk = targets::Walk {
        follow: args.follow,
        include_archived: args.include_archived,
    };
    // The cache is read while the directories are walked.
    let (collected, cache) = rayon::join(
        || targets::collect_said(&paths, walk),
        || cache::StatsCache::open(pi, dialect, !args.no_cache, &paths),
    );
    let collected = match collected {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let options = Options {
        by: args.by.group_by(),
        since_ms: range.since_ms,
        until_ms: range.until_ms,
        no_dedupe: args.no_dedupe,
    };
    let report = counted_report(&collected.targets, cache, pi, dialect, options);
    let text = match args.format {
        Format::Table => table(&report, terminal_width()),
        Format::Json => {
            let mut text = report.to_json();
            text.push('\n');
            text
        }
        Format::Csv => csv(&report),
    };
    if let Err(code) = crate::print_report(&text) {
        return code;
    }
    let code = if report.skipped.is_empty() && collected.empty.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    // The process ends here: freeing the facts one by one would only cost time.
    std::mem::forget(report);
    code
}

/// Counts `targets` with `pi`'s rules in `dialect` from `cache` (each file from what it kept
/// where it can, [`cache::StatsCache::read`]) and adds them up with `options`, going on from
/// the ledger kept of the sessions that have settled where it still holds
/// ([`ledger_cache::LedgerCache`]); keeps what changed for the next run. Files that cannot
/// be counted are said on standard error as they are found, and are the report's
/// [`StatsReport::skipped`].
fn counted_report(
    targets: &[Target],
    mut cache: cache::StatsCache,
    pi: PiVersion,
    dialect: Option<Dialect>,
    options: Options,
) -> StatsReport {
    let range = options.since_ms..options.until_ms;
    let mut ledger = ledger_cache::LedgerCache::open(cache.file(), &options);
    // Reads every target (or those `only` names), on every core.
    let count = |cache: &cache::StatsCache, ledger: &ledger_cache::LedgerCache, only: &[bool]| {
        let progress = crate::validate::progress_bar(targets.len(), "reading");
        let reads: Vec<Option<cache::Read>> = targets
            .par_iter()
            .enumerate()
            .map(|(i, target)| {
                let read = (only.get(i).is_none_or(|&o| o))
                    .then(|| cache.read(target, pi, dialect, range.clone(), ledger));
                if let Some(bar) = &progress {
                    bar.inc(1);
                }
                read
            })
            .collect();
        if let Some(bar) = progress {
            bar.finish_and_clear();
        }
        reads
    };
    let mut reads = count(&cache, &ledger, &[]);
    if !cache.intact() {
        // Another program truncated the cache file while it was read: count every file again
        // without it (the next run, finding the file does not check out, makes a new one).
        cache = cache::StatsCache::none();
        ledger = ledger_cache::LedgerCache::none();
        reads = count(&cache, &ledger, &[]);
    }
    let in_ledger: Vec<usize> = reads.iter().flatten().filter_map(|r| r.in_ledger).collect();
    let counted_so_far: Vec<&Counted> = (reads.iter().flatten())
        .filter_map(|r| r.result.as_ref()?.as_ref().ok())
        .collect();
    let earlier = ledger.take(&in_ledger, &counted_so_far);
    if earlier.is_none() && !in_ledger.is_empty() {
        // The kept ledger cannot be gone on from: the files it holds are counted after all.
        let again: Vec<bool> = (reads.iter())
            .map(|r| r.as_ref().is_some_and(|r| r.in_ledger.is_some()))
            .collect();
        let none = ledger_cache::LedgerCache::none();
        for (read, again) in reads.iter_mut().zip(count(&cache, &none, &again)) {
            if again.is_some() {
                *read = again;
            }
        }
    }
    let resumed = earlier.is_some();
    let mut kept = Vec::with_capacity(reads.len());
    // The sessions counted, by name, with their files where the ledger may keep them.
    let mut files: HashMap<String, Option<ledger_cache::KeptFile>> = HashMap::default();
    let mut skipped = Vec::new();
    let mut counted = Vec::new();
    for (read, target) in reads.into_iter().zip(targets) {
        let Some(read) = read else { continue };
        kept.push(read.keep);
        // A file left out (`None`) has nothing in the range, or is in the kept ledger.
        match read.result {
            Some(Ok(c)) => {
                // A session the ledger may keep: its file stamped and settled, pi's (its
                // numbers kept), named once.
                let file = (read.file.map(|file| *file))
                    .zip(target.path())
                    .filter(|((_, stamp), _)| stamp.settled())
                    .filter(|_| matches!(c.own, OwnStats::Pi(_)))
                    .map(|((key, stamp), given)| ledger_cache::KeptFile {
                        key,
                        stamp,
                        given: given.as_os_str().as_bytes().to_vec(),
                        shown: c.facts.path.clone(),
                        created_ms: c.facts.created_ms,
                    });
                files
                    .entry(c.facts.path.clone())
                    .and_modify(|twice| *twice = None)
                    .or_insert(file);
                counted.push(c);
            }
            Some(Err(s)) => {
                eprintln!(
                    "pi-session: {}: skipped: {}",
                    s.path,
                    display::text(&s.error, 300)
                );
                skipped.push(s);
            }
            None => {}
        }
    }
    cache.save(kept);
    let (report, added) = StatsReport::after(earlier, counted, skipped, options, |path| {
        files.get(path).is_some_and(Option::is_some)
    });
    let files: HashMap<&str, ledger_cache::KeptFile> = (files.iter())
        .filter_map(|(path, file)| Some((path.as_str(), file.clone()?)))
        .collect();
    ledger.save(resumed, added, &files, &report.sessions);
    report
}

/// omp's directory of sessions, found by omp's rules (`pi_session_fs::omp_store`); an error
/// that says what to pass when it does not exist.
fn omp_sessions_dir() -> Result<PathBuf, String> {
    let dir = pi_session_fs::omp_store::OmpStore::from_env()
        .map_err(|e| e.to_string())?
        .sessions_dir();
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "no path given and omp's session directory {} does not exist (pass files or directories)",
            display::path(&dir)
        ))
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
    // An integer (a count, a number of tokens) is written as one without float formatting.
    let digits = if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        (n.abs() as u64).to_string()
    } else {
        format!("{:.0}", n.abs())
    };
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

fn table(stats: &StatsReport, width: usize) -> String {
    let report = &stats.report;
    let by = stats.options.by;
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
        .max(by.name().len())
        .min(width.saturating_sub(numbers).max(12));
    let mut out = String::new();
    let line = |out: &mut String, name: &str, cells: &[String]| {
        use std::fmt::Write;
        let _ = write!(out, "{:<first$}", fit(name, first));
        for (cell, w) in cells.iter().zip(&widths) {
            let _ = write!(out, "  {cell:>w$}");
        }
        out.push('\n');
    };
    let heads: Vec<String> = COLUMNS.iter().map(|(h, _)| (*h).to_owned()).collect();
    line(&mut out, by.name(), &heads);
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
    if stats.options.no_dedupe {
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

fn csv(stats: &StatsReport) -> String {
    let report = &stats.report;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts are grouped by thousands; integers, fractions and numbers too large for an
    /// integer are rounded as `{:.0}` rounds them.
    #[test]
    fn counts_read_as_rounded_grouped_numbers() {
        for (n, shown) in [
            (0.0, "0"),
            (999.0, "999"),
            (1_234_567.0, "1,234,567"),
            (-1234.0, "-1,234"),
            (1.5, "2"),
            (2.5, "2"),
            (1e20, "100,000,000,000,000,000,000"),
            (9_007_199_254_740_993.0, "9,007,199,254,740,992"),
            (f64::NAN, "-"),
        ] {
            assert_eq!(count(n), shown, "{n}");
            if n.is_finite() {
                let digits = format!("{:.0}", n.abs());
                assert_eq!(count(n).replace([',', '-'], ""), digits, "{n}");
            }
        }
    }
}
