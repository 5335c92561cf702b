//! `stats` and `ls` on hostile ground: a FIFO, odd file names, links, deep and huge lines,
//! output to a full disk and to a closed pipe, a 10,000-file tree (the long cases are
//! `#[ignore]`d; `.ci/run` runs them). Both write nothing but their report, so there is no file for a SIGKILL or a
//! full disk to damage; a file shrinking or growing while read is in `input.rs`.

use super::common::*;
use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(120);

fn assistant(id: &str, parent: &str, cost: f64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":2}}}}"#
    )
}

fn session(cost: f64) -> String {
    format!("{HEADER}{}\n", assistant("a1", "null", cost))
}

#[test]
fn stats_reads_a_fifo() {
    let dir = scratch("stats-fifo");
    let fifo = dir.join("live.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(&fifo, session(0.5)).unwrap())
    };
    let r = run(&["stats", "--format", "json", s(&fifo)], T);
    writer.join().unwrap();
    r.assert_code(0);
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["total"]["usage"]["cost"], 0.5);
}

#[test]
fn odd_file_names_are_shown_escaped() {
    let dir = scratch("stats-names");
    write(&dir, "new\nline \u{1b}[31m.jsonl", session(1.0));
    let r = run(&["stats", s(&dir)], T);
    r.assert_code(0);
    let out = r.stdout_text();
    assert!(out.contains("new\\nline \\x1b[31m.jsonl"), "{out}");
    assert!(
        !out.contains('\u{1b}'),
        "no escape byte reaches the terminal"
    );
}

#[test]
fn deep_and_huge_lines_are_counted() {
    let dir = scratch("stats-deep");
    // 100,000 nested arrays in a tool result's details, and a 20 MB text.
    let deep = format!(
        r#"{{"type":"message","id":"d1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"x","content":[{{"type":"text","text":"{}"}}],"details":{}{},"isError":false,"timestamp":3}}}}"#,
        "y".repeat(20 << 20),
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let file = write(&dir, "deep.jsonl", format!("{}{deep}\n", session(0.25)));
    let r = run(&["stats", "--format", "json", s(&file)], T);
    r.assert_code(0);
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["total"]["toolResults"], 1);
    assert_eq!(report["total"]["usage"]["cost"], 0.25);
}

#[test]
fn a_full_disk_and_a_closed_pipe_end_the_run_cleanly() {
    let dir = scratch("stats-output");
    let file = write(&dir, "s.jsonl", session(1.0));
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = bin()
        .args(["stats", s(&file)])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stderr).contains("cannot write"));
    // A reader that stops at once (`| head -0`): no panic, no noise.
    let mut child = bin()
        .args(["stats", "--format", "csv", s(&file)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.code().is_some(), "not killed by a signal");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 16's target is 10,000 sessions totalling about 1 GB summarised in under 2 s on 2
/// cores; docs/PERFORMANCE.md has the measured figures. This guards against a gross
/// regression only (three times the target in a release build, a debug build ten), so that
/// a busy machine does not fail it.
#[test]
#[ignore = "writes a 1 GB tree of 10,000 files; run with --ignored (.ci/run does)"]
fn stats_of_10_000_sessions_of_1gb_is_quick() {
    let dir = scratch("stats-10k");
    let tree = dir.join("sessions");
    let r = run_limited(
        {
            let mut c = bin();
            c.args([
                "gen",
                "--tree",
                s(&tree),
                "--files",
                "10000",
                "--size",
                "1GB",
                "--seed",
                "1",
            ]);
            c
        },
        None,
        Duration::from_secs(1200),
    );
    r.assert_code(0);
    let start = Instant::now();
    // By month: the report by session (10,000 groups) is more than the test keeps of stdout.
    let r = run(
        &["stats", "--format", "json", "--by", "month", s(&tree)],
        Duration::from_secs(600),
    );
    let elapsed = start.elapsed();
    r.assert_code(0);
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["total"]["sessions"], 10_000);
    assert_eq!(report["forkedSessions"], 1_000);
    assert!(
        report["copies"]["messages"].as_u64() > Some(0),
        "forks counted once"
    );
    eprintln!(
        "stats of 10,000 sessions: {elapsed:?}, peak RSS {} MiB",
        r.max_rss_kib / 1024
    );
    let bound = if cfg!(debug_assertions) { 20.0 } else { 6.0 };
    assert!(elapsed.as_secs_f64() < bound, "{elapsed:?}");

    // A status line's run: `--since today` from the cache the run above wrote answers from
    // its index and the files' stamps alone (none of these sessions is of today), as a full
    // read does. docs/PERFORMANCE.md has the figures (35 ms on 2 cores); the bound is for
    // a gross regression only.
    let since = ["stats", "--format", "json", "--since", "today", s(&tree)];
    let full = run(
        &[&since[..], &["--no-cache"]].concat(),
        Duration::from_secs(600),
    );
    full.assert_code(0);
    run(&since, Duration::from_secs(600)).assert_code(0);
    let start = Instant::now();
    let cached = run(&since, Duration::from_secs(600));
    let elapsed = start.elapsed();
    cached.assert_code(0);
    assert_eq!(cached.stdout, full.stdout);
    eprintln!(
        "cached stats --since today of 10,000 sessions: {elapsed:?}, peak RSS {} MiB",
        cached.max_rss_kib / 1024
    );
    let bound = if cfg!(debug_assertions) { 3.0 } else { 0.5 };
    assert!(elapsed.as_secs_f64() < bound, "{elapsed:?}");
}

/// `ls` on the same ground: a FIFO named like a session is not opened (pi would wait on it
/// forever), a link to a session is listed, an odd name is shown escaped.
#[test]
fn ls_skips_fifos_and_lists_links_and_odd_names() {
    let dir = scratch("ls-hostile");
    write(&dir, "real.jsonl", session(1.0));
    std::os::unix::fs::symlink(dir.join("real.jsonl"), dir.join("link.jsonl")).unwrap();
    write(&dir, "odd\nname.jsonl", session(2.0));
    mkfifo(&dir.join("live.jsonl"));
    let r = run(&["ls", s(&dir), "--format", "json"], T);
    r.assert_code(0);
    let rows: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let paths: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert!(
        paths.iter().any(|p| p.ends_with("odd\\nname.jsonl")),
        "{paths:?}"
    );
    assert!(paths.iter().any(|p| p.ends_with("link.jsonl")), "{paths:?}");
}

/// `stats FILE` of one large session holds little of it: the loader reads the file in pieces,
/// each counted line is read again alone, and the cache's hash of the file is read in pieces
/// too (the mapping was held whole: 1.1 GiB for a 1 GB file). Without the cache, with it (the
/// first run hashes the file) and after an append (the cached run hashes the part counted and
/// counts the new tail), each run gives what a full read gives.
#[test]
#[ignore = "long: generates a 100 MB session"]
fn stats_of_one_large_session_holds_little_of_it() {
    let dir = scratch("stats-one-100mb");
    let path = generated(&dir, "big.jsonl", &["--size", "100MB", "--seed", "3"]);
    let cache = dir.join("cache");
    let stats = |extra: &[&str]| {
        let size = fs::metadata(&path).unwrap().len();
        let mut command = bin();
        command
            .env("XDG_CACHE_HOME", &cache)
            .arg("stats")
            .args(extra)
            .arg(&path);
        let run = run_limited(command, None, T);
        run.assert_code(0);
        assert!(
            run.max_rss_kib << 10 < size / 2,
            "stats {extra:?}: peak {} MiB for a {} MiB file",
            run.max_rss_kib >> 10,
            size >> 20
        );
        run.stdout_text()
    };
    let full = stats(&["--no-cache"]);
    assert!(full.contains("$"), "{full}");
    assert_eq!(stats(&[]), full);
    assert_eq!(stats(&[]), full);
    let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
    let line = assistant("grown-1", "\"nowhere\"", 1234.5) + "\n";
    std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
    drop(file);
    let grown = stats(&["--no-cache"]);
    assert_ne!(grown, full);
    assert_eq!(stats(&[]), grown);
}
