//! `pi-session stats`: every session's own numbers against pi's `getSessionStats()` on the
//! corpus (`conformance/stats/pi.json`, recorded from the pinned pis), forked and branched
//! history counted once (forks made with pi's own rules, by `pi-session fork`), the groupings,
//! the date range, the three formats and the exit codes.

use crate::adversarial::common::*;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

fn stats_json(args: &[&str]) -> (Value, Run) {
    let mut all = vec!["stats", "--format", "json"];
    all.extend_from_slice(args);
    let r = run(&all, T);
    let value = serde_json::from_slice(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "stats --format json printed no JSON ({e}); stderr:\n{}",
            r.stderr
        )
    });
    (value, r)
}

/// The corpus sessions `conformance/stats/<program>.json` records, with their files.
fn recorded(program: &str) -> Vec<(String, Value, String)> {
    let recorded: Value = serde_json::from_str(
        &fs::read_to_string(root().join(format!("conformance/stats/{program}.json"))).unwrap(),
    )
    .unwrap();
    recorded
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, per_version)| {
            let file = root()
                .join("conformance/cases")
                .join(id)
                .join("session.jsonl")
                .to_string_lossy()
                .into_owned();
            (id.clone(), per_version.clone(), file)
        })
        .collect()
}

/// The files a `stats --format json` report says it skipped.
fn skipped_paths(report: &Value) -> Vec<&str> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect()
}

#[test]
fn each_session_s_own_numbers_are_pi_s() {
    let cases = recorded("pi");
    assert!(cases.len() > 200, "the whole corpus: {}", cases.len());
    let mut compared = 0;
    for pi in ["0.73", "0.87", "1.5"] {
        let mut args = vec!["--pi", pi];
        args.extend(cases.iter().map(|(_, _, file)| file.as_str()));
        let (report, _) = stats_json(&args);
        let groups = report["groups"].as_array().unwrap();
        let skipped = skipped_paths(&report);
        for (id, per_pi, file) in &cases {
            let expected = &per_pi[pi];
            let group = groups.iter().find(|g| g["name"] == file.as_str());
            if expected.get("error").is_some() {
                // pi throws: we skip the file, or say that pi cannot add its numbers.
                assert!(
                    skipped.contains(&file.as_str())
                        || group.is_some_and(|g| g["piUnreadable"].as_u64() > Some(0)),
                    "{id} (pi {pi}): pi fails ({}), we neither skip the file nor flag its entries",
                    expected["error"]
                );
                continue;
            }
            if skipped.contains(&file.as_str()) && expected["totalMessages"] == 0 {
                // No header: pi 0.73.1 overwrites the file with an empty session (counted
                // zero); we refuse to read it (a deliberate divergence).
                continue;
            }
            let group = group.unwrap_or_else(|| panic!("{id} (pi {pi}): not counted"));
            assert_eq!(group["dialect"], "pi", "{id}");
            assert_eq!(
                group["pi"], *expected,
                "{id} (pi {pi}): our getSessionStats differs from pi's"
            );
            assert_eq!(group["piUnreadable"], 0, "{id} (pi {pi})");
            compared += 1;
        }
    }
    assert!(compared > 800, "{compared} comparisons");
}

#[test]
fn each_omp_session_s_own_numbers_are_omp_s() {
    let cases = recorded("omp");
    assert!(cases.len() > 30, "the omp corpus: {}", cases.len());
    // The dialect given, and detected from each file (a file without omp's title slot,
    // header members or entry types is pi's unless told).
    for dialect in [Some("omp"), None] {
        let mut args: Vec<&str> = dialect.map_or(vec![], |d| vec!["--dialect", d]);
        args.extend(cases.iter().map(|(_, _, file)| file.as_str()));
        let (report, r) = stats_json(&args);
        let skipped = skipped_paths(&report);
        // Files omp refuses to resume (no valid header, O18) are skipped and said: exit 1.
        let refused = |per_version: &Value| {
            per_version["18.3"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("Cannot resume session"))
        };
        let refusals = cases.iter().filter(|(_, v, _)| refused(v)).count();
        assert!(refusals >= 3, "{refusals}");
        // (Detected, those without omp's signs are pi's, which reads some of them.)
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        if dialect.is_some() {
            assert_eq!(skipped.len(), refusals, "{}", r.stderr);
        }
        let groups = report["groups"].as_array().unwrap();
        let mut detected = 0;
        for (id, per_version, file) in &cases {
            if refused(per_version) {
                assert!(
                    skipped.contains(&file.as_str()) || dialect.is_none(),
                    "{id}: not skipped"
                );
                continue;
            }
            let group = groups
                .iter()
                .find(|g| g["name"] == file.as_str())
                .unwrap_or_else(|| panic!("{id}: not counted"));
            if dialect.is_none() && group["dialect"] == "pi" {
                continue;
            }
            detected += 1;
            assert_eq!(group["dialect"], "omp", "{id} ({dialect:?})");
            if per_version["18.3"].get("error").is_some() {
                // omp throws: we say that it cannot add the numbers.
                assert!(group["ompUnreadable"].as_u64() > Some(0), "{id}");
                continue;
            }
            assert_eq!(
                group["omp"], per_version["18.3"],
                "{id}: our getSessionStats differs from omp's"
            );
            assert_eq!(group["ompUnreadable"], 0, "{id}");
            assert!(
                group.get("pi").is_none(),
                "{id}: an omp file has no pi numbers"
            );
        }
        assert!(detected > 20, "{detected} omp files ({dialect:?})");
    }
}

#[test]
fn omp_model_usage_and_subagents_count_in_the_totals() {
    let area = scratch("stats-omp-totals");
    let file = area.join("omp.jsonl");
    let usage = |input: u32, cost: f64| {
        format!(
            r#"{{"input":{input},"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"total":{cost}}}}}"#,
            input + 1
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","title":"t"}"#.to_owned(),
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"go","timestamp":1}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c1","name":"task","arguments":{{}}}}],"provider":"p","model":"m","usage":{},"stopReason":"toolUse","timestamp":2}}}}"#,
            usage(10, 0.5)
        ),
        format!(
            r#"{{"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"task","content":[],"details":{{"usage":{}}},"isError":false,"timestamp":3}}}}"#,
            usage(100, 2.0)
        ),
        format!(
            r#"{{"type":"model_usage","id":"m1","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z","purpose":"title","api":"a","provider":"p","model":"small","usage":{},"stopReason":"stop"}}"#,
            usage(1000, 4.0)
        ),
    ];
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let (report, r) = stats_json(&[&path]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let total = &report["total"];
    assert_eq!(total["usageEntries"], 1);
    assert_eq!(total["usageEntryUsage"]["input"], 1000.0);
    assert_eq!(total["messageUsage"]["input"], 110.0);
    assert_eq!(total["usage"]["cost"], 6.5);
    let group = &report["groups"][0];
    assert_eq!(group["dialect"], "omp");
    assert_eq!(group["omp"]["tokens"]["input"], 1110.0);
    assert_eq!(group["omp"]["tokens"]["total"], 1113.0);
    assert_eq!(group["omp"]["cost"], 6.5);
    // Read as pi's, the same file counts neither (pi knows no `model_usage`, and counts a
    // tool result's own `usage`, not its subagent's).
    let (report, r) = stats_json(&["--dialect", "pi", &path]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(report["total"]["usageEntries"], 0);
    assert_eq!(report["total"]["usage"]["cost"], 0.5);
    assert_eq!(report["groups"][0]["dialect"], "pi");
}

/// A deliberate divergence (docs/divergences.md): omp cannot open a file whose usage has no
/// cost (`SessionManager.open` throws adding it up); we count the entry as unreadable.
#[test]
fn omp_usage_without_cost_is_unreadable() {
    let area = scratch("stats-omp-costless");
    let file = area.join("omp.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","titleSource":"auto"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"go","timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":2}}"#,
    ];
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let (report, r) = stats_json(&[&path]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let group = &report["groups"][0];
    assert_eq!(group["dialect"], "omp");
    assert_eq!(group["ompUnreadable"], 1);
    assert_eq!(group["omp"]["assistantMessages"], 1);
    assert_eq!(report["total"]["unreadable"], 1);
    // The context omp would build without the throw.
    let r = run(&["context", &path], T);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn an_omp_file_read_as_pi_s_is_skipped_with_its_dialect_named() {
    let file = root().join("conformance/cases/omp/title-slot-is-not-an-entry/session.jsonl");
    let path = file.to_string_lossy().into_owned();
    let (report, r) = stats_json(&["--dialect", "pi", &path]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("oh-my-pi"), "{}", r.stderr);
    assert_eq!(report["errors"][0]["path"], path.as_str());
}

/// A recorded session with branches, and a fork of one of its branches made as pi makes it.
pub(crate) fn session_and_fork(dir: &Path) -> (PathBuf, PathBuf) {
    let source = root().join("conformance/cases/real/recorded-branches/session.jsonl");
    let original = dir.join("original.jsonl");
    fs::copy(&source, &original).unwrap();
    // The leaf of its first branch: the last entry whose parent is the first branch point.
    let text = fs::read_to_string(&original).unwrap();
    let leaf = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "message" && v["message"]["role"] == "assistant")
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .nth(2)
        .unwrap();
    let fork = dir.join("fork.jsonl");
    run(&["fork", s(&original), "--leaf", &leaf, "-o", s(&fork)], T).assert_code(0);
    (original, fork)
}

#[test]
fn a_fork_counts_only_what_it_added() {
    let dir = scratch("stats-fork");
    let (original, fork) = session_and_fork(&dir);
    let (alone, r) = stats_json(&[s(&original)]);
    r.assert_code(0);
    let (both, r) = stats_json(&[s(&fork), s(&original)]);
    r.assert_code(0);
    // The fork holds only copies: the totals are the original's.
    assert_eq!(both["total"]["usage"], alone["total"]["usage"]);
    assert_eq!(both["total"]["messages"], alone["total"]["messages"]);
    assert_eq!(both["forkedSessions"], 1);
    let copies = both["copies"]["messages"].as_u64().unwrap();
    assert!(copies > 0, "the fork's copies are said: {both}");
    // Sessions come by creation time: the original first, whatever the order given.
    assert_eq!(both["groups"][0]["name"], s(&original));
    assert_eq!(both["groups"][1]["messages"], 0);
    // pi's own numbers for the fork count its copies, as /session does.
    assert_eq!(both["groups"][1]["pi"]["totalMessages"], copies);
    // --no-dedupe: raw sums.
    let (raw, _) = stats_json(&["--no-dedupe", s(&fork), s(&original)]);
    assert_eq!(
        raw["total"]["messages"].as_u64().unwrap(),
        alone["total"]["messages"].as_u64().unwrap() + copies
    );
    assert_eq!(raw["copies"]["messages"], 0);
    // The table says what it left out.
    let table = run(&["stats", s(&fork), s(&original)], T);
    table.assert_code(0);
    assert!(
        table.stdout_text().contains("counted once:"),
        "{}",
        table.stdout_text()
    );
}

#[test]
fn a_session_reached_twice_counts_once() {
    // A symlink and a hard link to one session: the same entries, counted once.
    let dir = scratch("stats-links");
    let (original, _) = session_and_fork(&dir);
    fs::remove_file(dir.join("fork.jsonl")).unwrap();
    std::os::unix::fs::symlink(&original, dir.join("link.jsonl")).unwrap();
    fs::hard_link(&original, dir.join("hard.jsonl")).unwrap();
    let (alone, _) = stats_json(&[s(&original)]);
    let (all, r) = stats_json(&[s(&dir)]);
    r.assert_code(0);
    assert_eq!(all["total"]["sessions"], 3);
    assert_eq!(all["total"]["usage"], alone["total"]["usage"]);
}

#[test]
fn groupings_and_dates() {
    let dir = scratch("stats-groups");
    let (original, fork) = session_and_fork(&dir);
    let (by_session, _) = stats_json(&[s(&dir)]);
    for by in ["project", "model", "provider", "day", "month"] {
        let (report, r) = stats_json(&["--by", by, s(&original), s(&fork)]);
        r.assert_code(0);
        assert_eq!(report["by"], by);
        // Grouping moves the numbers around, never changes the total.
        assert_eq!(
            report["total"]["usage"], by_session["total"]["usage"],
            "--by {by}"
        );
        let sum: u64 = report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["messages"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, by_session["total"]["messages"].as_u64().unwrap());
    }
    let (days, _) = stats_json(&["--by", "day", s(&original)]);
    let first_day = days["groups"][0]["name"].as_str().unwrap().to_owned();
    // --since after the last day and --until before the first: nothing.
    let (none, r) = stats_json(&["--until", "2000-01-01", s(&original)]);
    r.assert_code(0);
    assert_eq!(none["total"]["messages"], 0);
    let (same, _) = stats_json(&[
        "--since",
        &first_day,
        "--until",
        &first_day,
        "--by",
        "day",
        s(&original),
    ]);
    assert_eq!(same["groups"][0], days["groups"][0]);
    let bad = run(&["stats", "--since", "someday", s(&original)], T);
    bad.assert_code(2);
    assert!(bad.stderr.contains("--since"), "{}", bad.stderr);
    // --since after --until is a usage error naming both (it counted nothing, exit 0).
    let reversed = run(
        &[
            "stats",
            "--since",
            "2026-02-02",
            "--until",
            "2026-02-01",
            s(&original),
        ],
        T,
    );
    reversed.assert_code(2);
    assert!(
        reversed
            .stderr
            .contains("--since 2026-02-02 is not before --until 2026-02-01"),
        "{}",
        reversed.stderr
    );
}

#[test]
fn csv_and_table() {
    let dir = scratch("stats-formats");
    let (original, fork) = session_and_fork(&dir);
    let csv = run(
        &[
            "stats",
            "--format",
            "csv",
            "--by",
            "model",
            s(&original),
            s(&fork),
        ],
        T,
    );
    csv.assert_code(0);
    let text = csv.stdout_text();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("group,sessions,user_messages")
    );
    let (json, _) = stats_json(&["--by", "model", s(&original), s(&fork)]);
    assert_eq!(lines.count(), json["groups"].as_array().unwrap().len());
    let table = run(&["stats", s(&original)], T);
    table.assert_code(0);
    let out = table.stdout_text();
    assert!(out.starts_with("session "), "{out}");
    assert!(out.contains("\ntotal "), "{out}");
}

#[test]
fn a_file_that_is_not_a_session_is_skipped_and_said() {
    let dir = scratch("stats-bad");
    let (original, _) = session_and_fork(&dir);
    fs::remove_file(dir.join("fork.jsonl")).unwrap();
    write(&dir, "notes.jsonl", "this is not JSON\n");
    write(&dir, "empty.jsonl", "");
    let (alone, _) = stats_json(&[s(&original)]);
    let (report, r) = stats_json(&[s(&dir)]);
    r.assert_code(1);
    assert_eq!(report["total"]["usage"], alone["total"]["usage"]);
    assert_eq!(report["errors"].as_array().unwrap().len(), 2);
    assert!(r.stderr.contains("notes.jsonl: skipped"), "{}", r.stderr);
    let missing = run(&["stats", s(&dir.join("missing.jsonl"))], T);
    missing.assert_code(1);
    assert!(
        missing.stderr.contains("missing.jsonl"),
        "{}",
        missing.stderr
    );
}

/// An assistant message line (with its newline) that costs `cost`, answered by `model`.
/// `--since today` counts what was written since the start of the UTC day, by the clock:
/// an assistant message written now, not one from 2020 (nor, with `--until yesterday`, the
/// other way round).
#[test]
fn since_today_counts_what_was_written_today() {
    let dir = scratch("stats-since-today");
    let file = dir.join("s.jsonl");
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    // Within 10 s of midnight (UTC), wait for the new day: the runs below must see the day the
    // entry was written in.
    const DAY_MS: u64 = 86_400_000;
    if now_ms() % DAY_MS > DAY_MS - 10_000 {
        std::thread::sleep(Duration::from_millis(DAY_MS - now_ms() % DAY_MS + 100));
    }
    let now = pi_session_format::date::to_iso_string(now_ms() as f64);
    let reply = |id: &str, parent: &str, at: &str, cost: f64| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{at}","message":{{"role":"assistant","content":[],"provider":"p","model":"m","usage":{{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":2}}}}"#
        )
    };
    let lines = [
        HEADER.trim_end().to_owned(),
        reply("old", "null", "2020-01-01T00:00:00.000Z", 1.0),
        reply("new", "\"old\"", &now, 2.0),
    ];
    fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    for (args, cost) in [
        (["--since", "today"], 2.0),
        (["--until", "yesterday"], 1.0),
        (["--since", "TODAY"], 2.0),
    ] {
        let mut all = args.to_vec();
        all.extend(["--no-cache", path.as_str()]);
        let (report, r) = stats_json(&all);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert_eq!(report["total"]["usage"]["cost"], cost, "{args:?}: {report}");
    }
    // A session with nothing of today is left out of `--since today` (as `@ccusage/pi` lists
    // sessions), in every format; without a range it is listed.
    let old_only = dir.join("old.jsonl");
    fs::write(&old_only, lines[..2].join("\n") + "\n").unwrap();
    let old_path = old_only.to_string_lossy().into_owned();
    let (all, _) = stats_json(&["--no-cache", &path, &old_path]);
    assert_eq!(all["total"]["sessions"], 2, "{all}");
    assert_eq!(all["groups"].as_array().unwrap().len(), 2, "{all}");
    let (today, r) = stats_json(&["--since", "today", "--no-cache", &path, &old_path]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(today["total"]["sessions"], 1, "{today}");
    let groups = today["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{today}");
    assert_eq!(groups[0]["name"], path.as_str());
    for format in ["table", "csv"] {
        let out = run(
            &[
                "stats",
                "--since",
                "today",
                "--no-cache",
                "--format",
                format,
                &path,
                &old_path,
            ],
            T,
        );
        out.assert_code(0);
        assert!(
            out.stdout_text().contains("s.jsonl"),
            "{format}: {}",
            out.stdout_text()
        );
        assert!(
            !out.stdout_text().contains("old.jsonl"),
            "{format}: {}",
            out.stdout_text()
        );
    }
}
