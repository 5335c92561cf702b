//! Running an implementation over the corpus and summarising the result: each operation's
//! level ([`Level`]: exact, equivalent, structural), what to run to see a failure again, and
//! the counts per area and operation.

use crate::corpus::{Case, Expected, Op};
use crate::diff;
use crate::level::{self, Difference, Level};
use crate::protocol::{self, Outcome};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Which cases to run and how.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The implementation's command line.
    pub implementation: String,
    /// Only cases whose id matches one of these globs (all when empty).
    pub only: Vec<String>,
    /// Skip cases whose id matches one of these globs.
    pub skip: Vec<String>,
    /// Per-operation timeout.
    pub timeout: Duration,
    /// The level an operation must reach to pass.
    pub level: Level,
}

/// The result of one operation of one case.
#[derive(Debug, Clone, Serialize)]
pub struct OpResult {
    /// The case id (`area/name`).
    pub case: String,
    /// The operation.
    pub op: &'static str,
    /// Whether it reached the level asked for.
    pub passed: bool,
    /// The implementation does not do this operation (exit status
    /// [`protocol::UNSUPPORTED`]): neither passed nor failed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unsupported: bool,
    /// The strictest level it reached (`None`: none; an expected rejection that came is
    /// exact).
    pub level: Option<Level>,
    /// Below exact: what differed besides the values (`key order`, `number spelling`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differed: Vec<&'static str>,
    /// Below the level asked for: the first differences of the values, as JSON paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// What went wrong otherwise (a crash, a timeout, a rejection, output that is not JSON),
    /// for humans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The shell command that runs the operation again, as the runner ran it.
    pub rerun: String,
    /// The file with the expected output (or the expected rejection).
    pub expected_file: String,
    /// The rules of `RULES.md` the case covers.
    pub rules: Vec<String>,
}

/// How many operations of an area and operation reached each level.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    /// Operations run.
    pub ops: usize,
    /// Reached exact.
    pub exact: usize,
    /// Reached equivalent, not exact.
    pub equivalent: usize,
    /// Reached structural, not equivalent.
    pub structural: usize,
    /// Reached no level.
    pub failed: usize,
    /// Not done by the implementation.
    pub unsupported: usize,
}

/// The results of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The implementation that was run.
    pub implementation: String,
    /// Every operation run.
    pub results: Vec<OpResult>,
    /// Number of cases run.
    pub cases: usize,
    /// Operations that passed.
    pub passed: usize,
    /// Operations that failed.
    pub failed: usize,
    /// Operations the implementation does not do ([`protocol::UNSUPPORTED`]).
    pub unsupported: usize,
    /// The level that counted as a pass.
    pub level: Level,
    /// The levels reached, per area, then per operation.
    pub areas: BTreeMap<String, BTreeMap<&'static str, Counts>>,
    /// The corpus's version ([`crate::embedded::Manifest::version`]), when it has a manifest.
    pub corpus: Option<String>,
    /// The tiers run: `spec` (pi's behaviour), `divergence` (pi-session's documented
    /// choices, `divergence/`), as the runner selected them.
    pub tiers: Vec<&'static str>,
}

fn globs(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        builder.add(Glob::new(p).map_err(|e| format!("bad pattern {p:?}: {e}"))?);
    }
    builder.build().map_err(|e| e.to_string())
}

/// The cases selected by `--only` / `--skip`.
pub fn select<'c>(
    cases: &'c [Case],
    only: &[String],
    skip: &[String],
) -> Result<Vec<&'c Case>, String> {
    let (only_set, skip_set) = (globs(only)?, globs(skip)?);
    Ok(cases
        .iter()
        .filter(|c| only.is_empty() || only_set.is_match(&c.id))
        .filter(|c| !skip_set.is_match(&c.id))
        .collect())
}

/// Output allowed beyond the expected output (and for an expected rejection): 1 MiB.
pub const OUTPUT_SLACK: usize = 1 << 20;

/// The bounds of one operation: stdout may be twice the expected output plus
/// [`OUTPUT_SLACK`], stderr [`OUTPUT_SLACK`] plus the same; anything more is a failure,
/// so a runaway implementation costs little memory whatever the number of threads.
fn limits(expected: &Expected, timeout: Duration) -> protocol::Limits {
    let expected_len = match expected {
        Expected::Output(bytes) => bytes.len(),
        Expected::Error(_) => 0,
    };
    let max = expected_len.saturating_mul(2).saturating_add(OUTPUT_SLACK);
    protocol::Limits {
        timeout,
        max_stdout: max,
        max_stderr: max,
    }
}

/// The shell command that runs `op` of `case` as the runner does: the implementation, the
/// operation and its arguments, the session on standard input.
pub fn rerun(case: &Case, op: Op, implementation: &str) -> String {
    let mut line = implementation.to_owned();
    line.push(' ');
    line.push_str(op.name());
    for arg in case.args(op) {
        line.push(' ');
        line.push_str(&shell_quoted(&arg));
    }
    line.push_str(" < ");
    line.push_str(&shell_quoted(&case.session_path().to_string_lossy()));
    line
}

/// `text` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
fn shell_quoted(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Runs one operation of `case` and judges it against the expectation (see
/// [`protocol::run_limited`] for how the implementation is bounded, [`level`] for the
/// levels).
pub fn check(case: &Case, op: Op, options: &RunOptions) -> OpResult {
    let mut result = OpResult {
        case: case.id.clone(),
        op: op.name(),
        passed: false,
        unsupported: false,
        level: None,
        differed: Vec::new(),
        differences: Vec::new(),
        detail: None,
        rerun: rerun(case, op, &options.implementation),
        expected_file: String::new(),
        rules: case.meta.rules.clone(),
    };
    let expected = match case.expected(op) {
        Ok(Some(expected)) => expected,
        Ok(None) => {
            result.detail = Some(format!("no expected output for `{op}`"));
            return result;
        }
        Err(e) => {
            result.detail = Some(e.to_string());
            return result;
        }
    };
    result.expected_file = case
        .dir
        .join("expected")
        .join(match &expected {
            Expected::Output(_) => op.expected_file().to_owned(),
            Expected::Error(_) => op.error_file(),
        })
        .to_string_lossy()
        .into_owned();
    let session = match std::fs::read(case.session_path()) {
        Ok(session) => session,
        Err(e) => {
            result.detail = Some(format!("{}: {e}", case.session_path().display()));
            return result;
        }
    };
    let mut args = vec![op.name().to_string()];
    args.extend(case.args(op));
    let limits = limits(&expected, options.timeout);
    let timeout = options.timeout;
    match (
        protocol::run_limited(&options.implementation, &args, &session, &limits),
        expected,
    ) {
        (Outcome::Output(actual), Expected::Output(expected)) => {
            let judgement = level::judge(
                &expected,
                &actual,
                op == Op::Migrate,
                matches!(op, Op::Migrate | Op::Tree),
            );
            result.level = judgement.level;
            result.differed = judgement.differed;
            if judgement.level.is_none_or(|l| l < options.level) {
                result.differences = judgement.differences;
                if let Some(why) = judgement.not_json {
                    result.detail = Some(format!(
                        "{why}\n{}",
                        diff::describe(&expected, &actual).unwrap_or_default()
                    ));
                }
            }
        }
        (Outcome::Rejected(_), Expected::Error(_)) => result.level = Some(Level::Exact),
        (Outcome::Output(_), Expected::Error(reason)) => {
            result.detail = Some(format!(
                "expected the input to be rejected (exit status 1): {reason}"
            ));
        }
        (Outcome::Rejected(stderr), Expected::Output(_)) => {
            result.detail = Some(format!("rejected the input: {}", stderr.trim()));
        }
        (Outcome::Unsupported(stderr), _) => {
            result.unsupported = true;
            result.detail = Some(format!("unsupported: {}", stderr.trim()));
        }
        (Outcome::Crashed(e), _) => result.detail = Some(format!("crashed: {}", e.trim())),
        (Outcome::TimedOut, _) => {
            result.detail = Some(format!(
                "no answer within {timeout:?} (its process group was killed)"
            ));
        }
        (Outcome::TooLarge { stream, limit }, expected) => {
            result.detail = Some(format!(
                "output too large: more than {limit} bytes on {stream}{}; stopped it",
                match expected {
                    Expected::Output(bytes) if stream == "stdout" => {
                        format!(" (the expected output is {} bytes)", bytes.len())
                    }
                    _ => String::new(),
                }
            ));
        }
    }
    result.passed = result.level.is_some_and(|l| l >= options.level);
    result
}

/// A failed operation explained for a human: the level it reached and what differed, its first
/// differences as JSON paths (or what else went wrong), the expected file, the rules the case
/// covers and the command that runs it again.
pub fn explain(result: &OpResult) -> String {
    let mut text = String::new();
    match result.level {
        Some(level) => {
            text.push_str(&format!("reached {level}"));
            if !result.differed.is_empty() {
                text.push_str(&format!(" ({} differ)", result.differed.join(", ")));
            }
            text.push('\n');
        }
        None if !result.differences.is_empty() => text.push_str("reached no level\n"),
        None => {}
    }
    for difference in &result.differences {
        text.push_str(&format!("  {difference}\n"));
    }
    if let Some(detail) = &result.detail {
        for line in detail.trim_end().lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    if !result.expected_file.is_empty() {
        text.push_str(&format!("  expected: {}\n", result.expected_file));
    }
    if !result.rules.is_empty() {
        text.push_str(&format!(
            "  rules:    {} (conformance/RULES.md)\n",
            result.rules.join(", ")
        ));
    }
    text.push_str(&format!("  rerun:    {}", result.rerun));
    text
}

/// Runs every selected case (all its operations), on as many threads as there are cores;
/// results come back in corpus order.
pub fn run(cases: &[&Case], options: &RunOptions) -> Report {
    let jobs: Vec<(&Case, Op)> = cases
        .iter()
        .flat_map(|c| c.ops().into_iter().map(move |op| (*c, op)))
        .collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    let mut results: Vec<(usize, OpResult)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((case, op)) = jobs.get(i) else { break };
                        done.push((i, check(case, *op, options)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<OpResult> = results.into_iter().map(|(_, r)| r).collect();
    let passed = results.iter().filter(|r| r.passed).count();
    let unsupported = results.iter().filter(|r| r.unsupported).count();
    let mut areas: BTreeMap<String, BTreeMap<&'static str, Counts>> = BTreeMap::new();
    for r in &results {
        let area = r.case.split('/').next().unwrap_or_default().to_owned();
        let counts = areas.entry(area).or_default().entry(r.op).or_default();
        counts.ops += 1;
        match r.level {
            _ if r.unsupported => counts.unsupported += 1,
            Some(Level::Exact) => counts.exact += 1,
            Some(Level::Equivalent) => counts.equivalent += 1,
            Some(Level::Structural) => counts.structural += 1,
            None => counts.failed += 1,
        }
    }
    Report {
        implementation: options.implementation.clone(),
        failed: results.len() - passed - unsupported,
        passed,
        unsupported,
        cases: cases.len(),
        level: options.level,
        areas,
        results,
        corpus: None,
        tiers: Vec::new(),
    }
}
