//! Running an implementation over the corpus and summarising the result.

use crate::corpus::{Case, Expected, Op};
use crate::diff;
use crate::protocol::{self, Outcome};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;
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
}

/// The result of one operation of one case.
#[derive(Debug, Clone, Serialize)]
pub struct OpResult {
    /// The case id (`area/name`).
    pub case: String,
    /// The operation.
    pub op: &'static str,
    /// Whether it matched.
    pub passed: bool,
    /// What went wrong, for humans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
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

/// Runs one operation of `case` and compares it with the expectation (see
/// [`protocol::run_limited`] for how the implementation is bounded).
pub fn check(case: &Case, op: Op, implementation: &str, timeout: Duration) -> OpResult {
    let verdict = (|| {
        let expected = case
            .expected(op)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("no expected output for `{op}`"))?;
        let session = std::fs::read(case.session_path()).map_err(|e| e.to_string())?;
        let mut args = vec![op.name().to_string()];
        args.extend(case.args(op));
        let limits = limits(&expected, timeout);
        match (
            protocol::run_limited(implementation, &args, &session, &limits),
            expected,
        ) {
            (Outcome::Output(actual), Expected::Output(expected)) => {
                match diff::describe(&expected, &actual) {
                    None => Ok(()),
                    Some(d) => Err(d),
                }
            }
            (Outcome::Rejected(_), Expected::Error(_)) => Ok(()),
            (Outcome::Output(_), Expected::Error(reason)) => Err(format!(
                "expected the input to be rejected (exit status 1): {reason}"
            )),
            (Outcome::Rejected(stderr), Expected::Output(_)) => {
                Err(format!("rejected the input: {}", stderr.trim()))
            }
            (Outcome::Crashed(e), _) => Err(format!("crashed: {}", e.trim())),
            (Outcome::TimedOut, _) => Err(format!(
                "no answer within {timeout:?} (its process group was killed)"
            )),
            (Outcome::TooLarge { stream, limit }, expected) => Err(format!(
                "output too large: more than {limit} bytes on {stream}{}; stopped it",
                match expected {
                    Expected::Output(bytes) if stream == "stdout" => {
                        format!(" (the expected output is {} bytes)", bytes.len())
                    }
                    _ => String::new(),
                }
            )),
        }
    })();
    OpResult {
        case: case.id.clone(),
        op: op.name(),
        passed: verdict.is_ok(),
        detail: verdict.err(),
    }
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
                        done.push((
                            i,
                            check(case, *op, &options.implementation, options.timeout),
                        ));
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
    Report {
        implementation: options.implementation.clone(),
        failed: results.len() - passed,
        passed,
        cases: cases.len(),
        results,
    }
}
