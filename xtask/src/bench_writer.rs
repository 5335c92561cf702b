//! `cargo xtask bench writer`: our `SessionWriter` against pi's `SessionManager` in the same
//! run — appending N messages (ours one `write` per entry, ours in batches of 1000, pi's
//! `appendFileSync` per entry) and opening a generated session for appending. Each side times
//! itself inside its process (`crates/pi-session-bench/examples/writer_bench.rs`,
//! `conformance/reference/bench-write.mjs`), runs alternate, and medians are reported.

use crate::bench::median;
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str =
    "usage: cargo xtask bench writer [--messages 100000] [--size 100MB] [--runs 5] [--pi 1.5]";

fn seconds(output: std::process::Output, what: &str) -> Result<f64, String> {
    if !output.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let value: serde_json::Value =
        serde_json::from_str(text.trim()).map_err(|e| format!("{what}: {e}: {text}"))?;
    value["seconds"]
        .as_f64()
        .ok_or_else(|| format!("{what}: no seconds in {text}"))
}

fn fresh_dir(name: &str) -> Result<PathBuf, String> {
    let dir =
        std::env::temp_dir().join(format!("xtask-bench-writer-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn build() -> Result<(PathBuf, PathBuf), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for args in [
        &[
            "build",
            "--release",
            "-p",
            "pi-session-bench",
            "--example",
            "writer_bench",
        ][..],
        &["build", "--release", "-p", "pi-session"][..],
    ] {
        let status = Command::new(&cargo)
            .current_dir(crate::root())
            .args(args)
            .status()
            .map_err(|e| format!("cargo: {e}"))?;
        if !status.success() {
            return Err(format!("cargo {} failed", args.join(" ")));
        }
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| crate::root().join("target"), PathBuf::from)
        .join("release");
    Ok((
        target.join("examples/writer_bench"),
        target.join("pi-session"),
    ))
}

/// `cargo xtask bench writer …`.
pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    let (mut messages, mut size, mut runs, mut pi) =
        (100_000u64, "100MB".to_owned(), 5usize, "1.5".to_owned());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let mut value = || {
            rest.next()
                .copied()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match *arg {
            "--messages" => messages = value()?.parse().map_err(|_| USAGE.to_owned())?,
            "--size" => size = value()?.to_owned(),
            "--runs" => runs = value()?.parse().map_err(|_| USAGE.to_owned())?,
            "--pi" => pi = value()?.to_owned(),
            _ => return Err(USAGE.into()),
        }
    }
    let (ours, pi_session) = build()?;
    let reference = crate::root().join("conformance/reference/bench-write.mjs");
    let run_ours = |args: &[&str]| -> Result<f64, String> {
        seconds(
            Command::new(&ours)
                .args(args)
                .output()
                .map_err(|e| e.to_string())?,
            "writer_bench",
        )
    };
    let run_pi = |args: &[&str]| -> Result<f64, String> {
        seconds(
            Command::new("node")
                .arg(&reference)
                .args(args)
                .args(["--pi", &pi])
                .output()
                .map_err(|e| e.to_string())?,
            "bench-write.mjs",
        )
    };
    let n = messages.to_string();
    let (mut a_ours, mut a_batch, mut a_pi, mut o_ours, mut o_pi) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut s_ours, mut s_pi, mut w_ours) = (vec![], vec![], vec![]);
    let data = fresh_dir("data")?;
    let session = data.join("session.jsonl");
    let status = Command::new(&pi_session)
        .args(["gen", "--size", &size, "--seed", "1", "--out"])
        .arg(&session)
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("pi-session gen failed".into());
    }
    let copy = |to: &Path| {
        std::fs::copy(&session, to)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    for run in 0..runs {
        eprintln!("run {}/{runs}", run + 1);
        let dir = fresh_dir("ours")?;
        a_ours.push(run_ours(&["append", &n, dir.to_str().unwrap_or_default()])?);
        let dir = fresh_dir("batch")?;
        a_batch.push(run_ours(&[
            "append-batch",
            &n,
            dir.to_str().unwrap_or_default(),
        ])?);
        let dir = fresh_dir("pi")?;
        a_pi.push(run_pi(&["append", &n, dir.to_str().unwrap_or_default()])?);
        s_ours.push(run_ours(&["serialize", &n])?);
        s_pi.push(run_pi(&["serialize", &n])?);
        let dir = fresh_dir("floor")?;
        w_ours.push(run_ours(&["write", &n, dir.to_str().unwrap_or_default()])?);
        let file = data.join("ours.jsonl");
        copy(&file)?;
        o_ours.push(run_ours(&["open", file.to_str().unwrap_or_default()])?);
        let file = data.join("pi.jsonl");
        copy(&file)?;
        o_pi.push(run_pi(&["open", file.to_str().unwrap_or_default()])?);
    }
    for name in ["data", "ours", "batch", "pi", "floor"] {
        let _ = std::fs::remove_dir_all(
            std::env::temp_dir().join(format!("xtask-bench-writer-{}-{name}", std::process::id())),
        );
    }
    let (ao, ab, ap, oo, op) = (
        median(a_ours),
        median(a_batch),
        median(a_pi),
        median(o_ours),
        median(o_pi),
    );
    let per = |s: f64| s / messages as f64 * 1e6;
    println!(
        "writer, medians of {runs} runs (pi {pi}'s SessionManager vs SessionWriter; each side timed in its process)\n"
    );
    println!("| operation | pi | ours | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| append {messages} messages, one write each | {ap:.3} s ({:.1} µs/entry) | {ao:.3} s ({:.1} µs/entry) | {:.1}× |",
        per(ap),
        per(ao),
        ap / ao
    );
    println!(
        "| append {messages} messages, batches of 1000 (`SessionWriter::batch`) | {ap:.3} s | {ab:.3} s ({:.2} µs/entry) | {:.1}× |",
        per(ab),
        ap / ab
    );
    println!(
        "| open a {size} session and append one message | {op:.3} s | {oo:.3} s | {:.1}× |",
        op / oo
    );
    let (so, sp, wo) = (median(s_ours), median(s_pi), median(w_ours));
    println!(
        "| floor: serialize the entry {messages} times, nothing else | {sp:.3} s ({:.2} µs/entry) | {so:.3} s ({:.2} µs/entry) | {:.1}× |",
        per(sp),
        per(so),
        sp / so
    );
    println!(
        "| floor: {messages} writes of the serialized line (ours: the system call alone) | | {wo:.3} s ({:.2} µs/entry) | |",
        per(wo)
    );
    Ok(())
}
