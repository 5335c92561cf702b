//! `cargo xtask conformance …`: check the corpus against the reference, fuzz the
//! reference against `pi-session`, and compare how two pi versions read the corpus; the writing half of `check-reference` is
//! `cargo xtask bless cases` ([`crate::bless`]).

use crate::cases_dir;
use crate::reference::{self, Request, Response};
use crate::root;
use pi_session_conformance::corpus::{self, Case, Op};
use pi_session_conformance::protocol::{self, Outcome};
use pi_session_conformance::run;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        ["check-reference", rest @ ..] => bless(&only(rest)?, false),
        ["fuzz-reference", rest @ ..] => fuzz_reference(rest),
        ["same-reading", a, b] => same_reading(a, b),
        ["check-writers"] => crate::writers::run(false),
        ["check-repair"] => crate::repair_corpus::run(false),
        ["check-stats"] => crate::stats_corpus::run(false),
        ["check-list"] => crate::list_corpus::run(false),
        ["check-export"] => crate::export_corpus::run(),
        ["check-redact"] => crate::redact_check::run(),
        _ => Err(format!("unknown conformance command\n{}", crate::USAGE)),
    }
}

pub(crate) fn only(args: &[&str]) -> Result<Vec<String>, String> {
    let mut globs = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match *arg {
            "--only" => globs.push(it.next().ok_or("--only needs a glob")?.to_string()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(globs)
}

/// Builds `pi-session` and returns the protocol command line for it.
fn our_implementation() -> Result<String, String> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "pi-session"])
        .current_dir(root())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("cargo build -p pi-session failed".into());
    }
    Ok(format!(
        "'{}' conformance impl",
        root().join("target/debug/pi-session").display()
    ))
}

/// The absolute path of each case's session file (the reference runs in its own directory).
fn session_paths(cases: &[&Case]) -> Vec<PathBuf> {
    cases
        .iter()
        .map(|c| {
            c.session_path()
                .canonicalize()
                .unwrap_or_else(|_| c.session_path())
        })
        .collect()
}

/// The reference request for `op` of `case` (its session at `path`) with pi `pi`'s rules.
fn request<'a>(case: &'a Case, path: &'a Path, op: Op, pi: &'a str) -> Request<'a> {
    Request {
        op: if op == Op::Llm { "context" } else { op.name() },
        file: path,
        leaf: if matches!(op, Op::Context | Op::Llm) {
            case.meta.leaf.as_deref()
        } else {
            None
        },
        llm: op == Op::Llm,
        pi,
        dialect: case.dialect(),
        blobs: matches!(op, Op::Context | Op::Llm)
            .then(|| case.blobs_dir())
            .flatten(),
    }
}

/// What the expected file of one operation should hold.
enum Expectation {
    Output(Vec<u8>),
    Error(String),
}

/// `bless` writes the expectations; otherwise (`check-reference`) compares them.
pub(crate) fn bless(only: &[String], write: bool) -> Result<(), String> {
    let cases = corpus::load_cases(&cases_dir()).map_err(|e| e.to_string())?;
    let selected = run::select(&cases, only, &[])?;
    let (ours, theirs): (Vec<&Case>, Vec<&Case>) = selected
        .into_iter()
        .partition(|c| c.meta.divergence.is_some());
    let mut expectations: Vec<(&Case, Op, Expectation)> = Vec::new();
    // Reference cases: every expectation comes from pi.
    let paths = session_paths(&theirs);
    let mut requests = Vec::new();
    let mut owners = Vec::new();
    for (case, path) in theirs.iter().zip(&paths) {
        for op in case.ops() {
            requests.push(request(case, path, op, case.pi()));
            owners.push((*case, op));
        }
    }
    let responses: Vec<Response> = if requests.is_empty() {
        Vec::new()
    } else {
        reference::batch(&requests)?
    };
    // The reference's message names the session by its path: written relative to the
    // workspace, so that the expectation is the same in every checkout.
    let workspace = format!(
        "{}/",
        crate::root()
            .canonicalize()
            .unwrap_or_else(|_| crate::root())
            .display()
    );
    for ((case, op), response) in owners.into_iter().zip(responses) {
        let expectation = match response {
            Ok(bytes) => Expectation::Output(bytes),
            Err(error) => Expectation::Error(format!(
                "{}: {}",
                case.dialect(),
                error.replace(&workspace, "")
            )),
        };
        expectations.push((case, op, expectation));
    }
    // Divergence cases: the expectation is what we deliberately do.
    if !ours.is_empty() {
        let implementation = our_implementation()?;
        for case in ours {
            let session = std::fs::read(case.session_path()).map_err(|e| e.to_string())?;
            for op in case.ops() {
                let mut args = vec![op.name().to_string()];
                args.extend(case.args(op));
                let expectation = match protocol::run(
                    &implementation,
                    &args,
                    &session,
                    Duration::from_secs(30),
                ) {
                    Outcome::Output(bytes) => Expectation::Output(bytes),
                    Outcome::Rejected(stderr) => Expectation::Error(
                        stderr.trim().lines().next().unwrap_or_default().to_string(),
                    ),
                    other => {
                        return Err(format!(
                            "{} [{op}]: pi-session did not answer: {other:?}",
                            case.id
                        ));
                    }
                };
                expectations.push((case, op, expectation));
            }
        }
    }
    let mut differences = Vec::new();
    for (case, op, expectation) in &expectations {
        if write {
            write_expectation(case, *op, expectation)?;
        } else if case.meta.divergence.is_none()
            && let Some(d) = compare(case, *op, expectation)
        {
            differences.push(d);
        }
    }
    if write {
        println!(
            "blessed {} operations of {} cases",
            expectations.len(),
            cases.len().min(expectations.len())
        );
        return Ok(());
    }
    if differences.is_empty() {
        println!(
            "check-reference: {} operations agree with the reference",
            expectations.len()
        );
        Ok(())
    } else {
        Err(format!(
            "{} expected outputs differ from what the reference computes now:\n{}\nregenerate with `cargo xtask bless cases` and review the diff",
            differences.len(),
            differences.join("\n")
        ))
    }
}

fn write_expectation(case: &Case, op: Op, expectation: &Expectation) -> Result<(), String> {
    let dir = case.dir.join("expected");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (keep, drop, contents) = match expectation {
        Expectation::Output(bytes) => (
            dir.join(op.expected_file()),
            dir.join(op.error_file()),
            bytes.clone(),
        ),
        Expectation::Error(reason) => (
            dir.join(op.error_file()),
            dir.join(op.expected_file()),
            format!("{reason}\n").into_bytes(),
        ),
    };
    let _ = std::fs::remove_file(drop);
    std::fs::write(&keep, contents).map_err(|e| format!("{}: {e}", keep.display()))
}

fn compare(case: &Case, op: Op, expectation: &Expectation) -> Option<String> {
    let current = case.expected(op).ok().flatten();
    match (expectation, current) {
        (Expectation::Output(now), Some(corpus::Expected::Output(stored))) => {
            pi_session_conformance::diff::describe(&stored, now)
                .map(|d| format!("{} [{op}]: {d}", case.id))
        }
        (Expectation::Error(_), Some(corpus::Expected::Error(_))) => None,
        (Expectation::Output(_), _) => {
            Some(format!("{} [{op}]: the reference now succeeds", case.id))
        }
        (Expectation::Error(e), _) => {
            Some(format!("{} [{op}]: the reference now fails: {e}", case.id))
        }
    }
}

/// `same-reading A B`: every operation of every case the reference answers (all but
/// `divergence/`, where pi hangs or crashes), run by pi `A` and by pi `B` on the same file;
/// fails unless both give the same bytes, or both fail. The evidence behind an alias such as
/// `--pi 1.5` (pi 1.5.2 reads as 0.87.1).
fn same_reading(a: &str, b: &str) -> Result<(), String> {
    let cases = corpus::load_cases(&cases_dir()).map_err(|e| e.to_string())?;
    let cases: Vec<&Case> = cases
        .iter()
        .filter(|c| c.meta.divergence.is_none())
        .collect();
    let paths = session_paths(&cases);
    let mut requests = Vec::new();
    let mut owners = Vec::new();
    for (case, path) in cases.iter().zip(&paths) {
        for op in Op::ALL {
            for pi in [a, b] {
                requests.push(request(case, path, op, pi));
            }
            owners.push((*case, op));
        }
    }
    let responses = reference::batch(&requests)?;
    let mut differences = Vec::new();
    for ((case, op), pair) in owners.iter().zip(responses.chunks(2)) {
        let same = match (&pair[0], &pair[1]) {
            (Ok(x), Ok(y)) => x == y,
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !same {
            let show = |r: &Response| match r {
                Ok(bytes) => String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned(),
                Err(e) => format!("error: {e}"),
            };
            differences.push(format!(
                "{} [{op}]:\n  pi {a}: {}\n  pi {b}: {}",
                case.id,
                show(&pair[0]),
                show(&pair[1])
            ));
        }
    }
    if differences.is_empty() {
        eprintln!(
            "pi {a} and pi {b} read the corpus alike: {} operations on {} cases",
            owners.len(),
            cases.len()
        );
        Ok(())
    } else {
        Err(format!(
            "pi {a} and pi {b} differ on {} of {} operations:\n{}",
            differences.len(),
            owners.len(),
            differences.join("\n")
        ))
    }
}

/// Random sessions written by pi's own SessionManager, reference against `pi-session`
/// (`scripts/diff/run-diff.mjs`); `--save` keeps every mismatching session as a new case in
/// `conformance/cases/regressions/`.
fn fuzz_reference(args: &[&str]) -> Result<(), String> {
    reference::ensure_installed()?;
    let mut seed = None;
    let mut count = None;
    let mut pi = "0.73";
    let mut save = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match *arg {
            "--seed" => seed = Some(it.next().ok_or("--seed needs a value")?.to_string()),
            "--count" => count = Some(it.next().ok_or("--count needs a value")?.to_string()),
            "--pi" => pi = it.next().ok_or("--pi needs a value")?,
            "--save" => save = true,
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let (seed, count) = (
        seed.ok_or("--seed is required")?,
        count.ok_or("--count is required")?,
    );
    our_implementation()?;
    let keep =
        std::env::temp_dir().join(format!("pi-fuzz-reference-{seed}-{}", std::process::id()));
    let output = Command::new("node")
        .arg(root().join("scripts/diff/run-diff.mjs"))
        .args(["--seed", &seed, "--count", &count, "--pi", pi, "--keep"])
        .arg(&keep)
        .args([
            "--bin",
            &root().join("target/debug/pi-session").to_string_lossy(),
        ])
        .env("TZ", "UTC")
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if output.success() {
        let _ = std::fs::remove_dir_all(&keep);
        return Ok(());
    }
    if save {
        let saved = save_mismatches(&keep, &seed, pi)?;
        println!(
            "saved {saved} mismatching sessions as cases under conformance/cases/regressions/; bless them with `cargo xtask bless cases --only 'regressions/*'`"
        );
    } else {
        println!(
            "sessions kept in {}; rerun with --save to turn mismatches into cases",
            keep.display()
        );
    }
    Err("the reference and pi-session disagree".into())
}

/// Copies the sessions run-diff listed as failing (`failing.txt` in the kept directory).
fn save_mismatches(kept: &Path, seed: &str, pi: &str) -> Result<usize, String> {
    let list = std::fs::read_to_string(kept.join("failing.txt"))
        .map_err(|e| format!("{}: {e}", kept.display()))?;
    let mut saved = 0;
    for name in list.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let stem = name.trim_end_matches(".jsonl");
        let dir = cases_dir()
            .join("regressions")
            .join(format!("fuzz-{stem}-pi-{}", pi.replace('.', "")));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::copy(kept.join(name), dir.join("session.jsonl")).map_err(|e| e.to_string())?;
        let mut meta = format!(
            "{{\n  \"description\": \"A random session (seed {seed}, file {name}) on which pi-session and the reference disagreed.\",\n  \"rules\": [\"R1\"]"
        );
        if let Ok(args) = std::fs::read_to_string(kept.join(format!("{stem}.args.json")))
            && let Some(leaf) = serde_json::from_str::<serde_json::Value>(&args)
                .ok()
                .and_then(|v| v["leaf"].as_str().map(String::from))
        {
            meta.push_str(&format!(
                ",\n  \"leaf\": {}",
                serde_json::Value::String(leaf)
            ));
        }
        if pi != "0.73" {
            meta.push_str(&format!(",\n  \"pi\": \"{pi}\""));
        }
        meta.push_str(",\n  \"ops\": [\"context\", \"llm\", \"migrate\"]\n}\n");
        std::fs::write(dir.join("case.json"), meta).map_err(|e| e.to_string())?;
        saved += 1;
    }
    Ok(saved)
}
