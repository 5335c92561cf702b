//! The caches of `pi-session stats`: the stats cache (what each file gave, kept by its stamp)
//! and the ledger kept of settled sessions, each checked against a full read (`--no-cache`)
//! after every kind of change to the files and to the caches themselves.

use crate::adversarial::common::*;
use crate::stats_cli::session_and_fork;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

fn assistant_line(id: &str, parent: &str, day: &str, model: &str, cost: f64) -> String {
    format!(
        concat!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"{day}T12:00:00.000Z","#,
            r#""message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}},"#,
            r#"{{"type":"toolCall","id":"c{id}","name":"ls","arguments":{{}}}}],"provider":"prov","#,
            r#""model":"{model}","usage":{{"input":7,"output":3,"cacheRead":1,"cacheWrite":2,"#,
            r#""totalTokens":13,"cost":{{"total":{cost}}}}},"stopReason":"toolUse","timestamp":1}}}}"#,
            "\n"
        ),
        id = id,
        parent = parent,
        day = day,
        model = model,
        cost = cost
    )
}

/// The `id` of the last entry of the session at `path`.
fn last_id(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let last = text.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    serde_json::from_str::<Value>(last).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The stats cache: after any change to the files (appends, a torn last line completed
/// later, an append to a fork, a file replaced by one of the same size, rewritten in place,
/// shrunk, deleted), a run from the cache prints byte for byte what a full read
/// (`--no-cache`) prints, for every grouping and format; a cache file that is corrupt,
/// truncated, a symlink or in a place that cannot be written changes nothing either.
#[test]
fn the_cache_counts_what_a_full_read_counts() {
    let area = scratch("stats-cache");
    let dir = area.join("sessions");
    fs::create_dir_all(&dir).unwrap();
    let (original, fork) = session_and_fork(&dir);
    for (case, name) in [
        ("real/recorded-compaction", "compaction.jsonl"),
        ("real/iml1s-resume-skills-corrupt-interior", "corrupt.jsonl"),
        ("omp/blob-positions", "omp.jsonl"),
    ] {
        fs::copy(
            root()
                .join("conformance/cases")
                .join(case)
                .join("session.jsonl"),
            dir.join(name),
        )
        .unwrap();
    }
    let torn = dir.join("compaction.jsonl");
    let cache_home = area.join("cache");
    let stats = |home: &Path, extra: &[&str]| {
        let out = bin()
            .arg("stats")
            .args(extra)
            .arg(&dir)
            .env("XDG_CACHE_HOME", home)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let cache_file = cache_home.join("pi-session/stats-v2-1.5.2-auto.bin");
    // Every grouping and format, and a date range, from the cache against a full read; the
    // cached run goes first (it writes the cache), then again (it reads it).
    let same = |stage: &str| {
        let mut runs: Vec<Vec<&str>> = Vec::new();
        for by in ["session", "project", "model", "provider", "day", "month"] {
            for format in ["json", "csv", "table"] {
                runs.push(vec!["--by", by, "--format", format]);
            }
        }
        runs.push(vec!["--since", "2026-03-06", "--format", "json"]);
        runs.push(vec!["--until", "2026-03-07", "--by", "day"]);
        runs.push(vec!["--no-dedupe", "--format", "json"]);
        for args in runs {
            let full = stats(&cache_home, &[&args[..], &["--no-cache"]].concat());
            assert!(full.0.is_some(), "{stage}: {args:?} crashed: {}", full.2);
            for pass in ["writing", "reading"] {
                assert_eq!(
                    stats(&cache_home, &args),
                    full,
                    "{stage} ({pass} the cache): stats {args:?} differs from --no-cache"
                );
            }
        }
    };
    let settle = || std::thread::sleep(Duration::from_millis(2100));
    // Files modified in the last two seconds are not kept.
    let first = stats(&cache_home, &["--format", "json"]);
    assert_eq!(
        first,
        stats(&cache_home, &["--format", "json", "--no-cache"])
    );
    assert!(!cache_file.exists(), "recently modified files were cached");
    // The cache of the format before (v1: one hash over the whole file) goes when the new one
    // is written.
    let earlier = cache_home.join("pi-session/stats-v1-1.5.2-auto.bin");
    fs::create_dir_all(earlier.parent().unwrap()).unwrap();
    fs::write(&earlier, "an earlier cache").unwrap();
    settle();
    same("unchanged");
    assert!(cache_file.exists(), "nothing was cached");
    assert!(
        !earlier.exists(),
        "the earlier format's cache is left behind"
    );
    assert_eq!(
        fs::metadata(&cache_file).unwrap().permissions().mode() & 0o777,
        0o600,
        "a cache of paths, ids and costs is its owner's only"
    );

    // Appends: a whole line to the original; a copy of one of the original's entries and a
    // line of its own to the fork (the copy still counted once); half a line to another.
    append(
        &original,
        &assistant_line("app1", &last_id(&original), "2026-03-07", "m1", 0.25),
    );
    let copied = fs::read_to_string(&original)
        .unwrap()
        .lines()
        .nth(5)
        .unwrap()
        .to_owned();
    append(&fork, &format!("{copied}\n"));
    append(
        &fork,
        &assistant_line("fork1", &last_id(&fork), "2026-03-08", "m2", 1.5),
    );
    let half = assistant_line("torn1", &last_id(&torn), "2026-03-09", "m3", 2.0);
    let (head, rest) = half.split_at(half.len() / 2);
    append(&torn, head);
    settle();
    same("appended, one last line torn");
    // The torn line completed, and more appended after.
    append(&torn, rest);
    append(
        &torn,
        &assistant_line("torn2", "torn1", "2026-03-09", "m3", 4.0),
    );
    settle();
    same("torn line completed");

    // Replaced by a file of the same size (a new inode): a cost changed.
    let text = fs::read_to_string(&original).unwrap();
    let changed = text.replacen("\"total\":0.25", "\"total\":0.75", 1);
    assert_eq!(changed.len(), text.len());
    let next = dir.join("next.tmp");
    fs::write(&next, &changed).unwrap();
    fs::rename(&next, &original).unwrap();
    settle();
    same("replaced, same size");
    // Rewritten in place (same inode) and grown: its first bytes differ from those counted.
    let text = fs::read_to_string(&fork).unwrap();
    let changed = text.replacen("\"total\":1.5", "\"total\":9.5", 1)
        + &assistant_line("fork2", "fork1", "2026-03-08", "m2", 0.5);
    fs::write(&fork, &changed).unwrap();
    settle();
    same("rewritten in place and grown");
    // Rewritten in place, same size.
    let text = fs::read_to_string(&fork).unwrap();
    fs::write(&fork, text.replacen("\"total\":9.5", "\"total\":8.5", 1)).unwrap();
    settle();
    same("rewritten in place, same size");
    // Shrunk to its first lines; deleted.
    let text = fs::read_to_string(&torn).unwrap();
    let keep: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    fs::write(&torn, keep).unwrap();
    fs::remove_file(dir.join("corrupt.jsonl")).unwrap();
    settle();
    same("shrunk, deleted");
    let kept = fs::read(&cache_file).unwrap();
    assert!(
        !kept.windows(12).any(|w| w == b"corrupt.json"),
        "a deleted file stays in the cache"
    );

    // A corrupt cache, a truncated one, garbage: ignored (and replaced).
    let good = fs::read(&cache_file).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x20;
    for (what, bytes) in [
        ("corrupt", flipped),
        ("truncated", good[..good.len() / 3].to_vec()),
        ("garbage", b"pi-session stats garbage".to_vec()),
        ("empty", Vec::new()),
    ] {
        fs::write(&cache_file, &bytes).unwrap();
        same(what);
    }
    // A symlink where the cache file goes is replaced by the new cache, never written through.
    let elsewhere = area.join("elsewhere.txt");
    fs::write(&elsewhere, "not the cache").unwrap();
    fs::remove_file(&cache_file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &cache_file).unwrap();
    let full = stats(&cache_home, &["--format", "json", "--no-cache"]);
    assert_eq!(stats(&cache_home, &["--format", "json"]), full);
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "not the cache");
    assert!(
        !fs::symlink_metadata(&cache_file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(stats(&cache_home, &["--format", "json"]), full);
    // A FIFO or a device where the cache file goes is not read (it would block, or never
    // end): the same report, and the cache written again in its place.
    fs::remove_file(&cache_file).unwrap();
    mkfifo(&cache_file);
    assert_eq!(stats(&cache_home, &["--format", "json"]), full);
    fs::remove_file(&cache_file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &cache_file).unwrap();
    assert_eq!(stats(&cache_home, &["--format", "json"]), full);
    // A cache directory that cannot be made, or written: no error, the same report.
    let blocked = area.join("blocked");
    fs::write(&blocked, "a file where the cache directory would be").unwrap();
    assert_eq!(stats(&blocked, &["--format", "json"]), full);
    let read_only = area.join("read-only");
    fs::create_dir_all(read_only.join("pi-session")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        read_only.join("pi-session"),
        fs::Permissions::from_mode(0o555),
    )
    .unwrap();
    assert_eq!(stats(&read_only, &["--format", "json"]), full);
    assert_eq!(stats(&read_only, &["--format", "json"]), full);
    fs::set_permissions(
        read_only.join("pi-session"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
}

/// The files `paths` made to look last modified an hour ago (settled: the stats cache may
/// keep their sessions added up in its ledger), then past the racy window.
fn age(paths: &[PathBuf]) {
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for path in paths {
        let file = fs::OpenOptions::new().append(true).open(path).unwrap();
        file.set_modified(hour_ago).unwrap();
    }
    std::thread::sleep(Duration::from_millis(2100));
}

/// The regular files under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(files_under(&entry.path()));
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    out
}

/// The ledger the stats cache keeps of settled sessions (the additions up to them, taken
/// again by a later run that adds up only the sessions after them): whatever changes, a
/// cached run prints byte for byte what a full read prints, for every grouping, format and
/// range, and the ledger is taken again only where it still holds. Checked: nothing changed
/// (the ledger taken, not written again), the newest session appended to (taken, the new
/// lines added after it), an old session appended to, a session created before the others
/// added, a kept session deleted, the sessions named by another path, and a ledger file
/// corrupt or swapped for another grouping's.
#[test]
fn the_kept_ledger_counts_what_a_full_read_counts() {
    let area = scratch("stats-ledger");
    let dir = area.join("sessions");
    run(
        &[
            "gen",
            "--tree",
            s(&dir),
            "--files",
            "40",
            "--size",
            "400KB",
            "--seed",
            "5",
        ],
        T,
    )
    .assert_code(0);
    let (original, _fork) = session_and_fork(&dir);
    fs::copy(
        root().join("conformance/cases/omp/blob-positions/session.jsonl"),
        dir.join("omp.jsonl"),
    )
    .unwrap();
    let cache_home = area.join("cache");
    let stats_in = |at: &Path, extra: &[&str]| {
        let out = bin()
            .arg("stats")
            .args(extra)
            .arg(at)
            .env("XDG_CACHE_HOME", &cache_home)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let stats = |extra: &[&str]| stats_in(&dir, extra);
    let runs: Vec<Vec<&str>> = {
        let mut runs = Vec::new();
        for by in ["session", "project", "model", "provider", "day", "month"] {
            runs.push(vec!["--by", by, "--format", "json"]);
        }
        runs.push(vec!["--format", "table"]);
        runs.push(vec!["--by", "day", "--format", "csv"]);
        runs.push(vec!["--since", "2026-03-06", "--format", "json"]);
        runs.push(vec![
            "--until",
            "2026-03-07",
            "--by",
            "model",
            "--format",
            "json",
        ]);
        runs.push(vec!["--no-dedupe", "--by", "day", "--format", "json"]);
        runs
    };
    let same = |stage: &str| {
        for args in &runs {
            let full = stats(&[&args[..], &["--no-cache"]].concat());
            assert_eq!(full.0, Some(0), "{stage}: {args:?}: {}", full.2);
            for pass in ["first", "second"] {
                assert_eq!(
                    stats(args),
                    full,
                    "{stage} ({pass} cached run): stats {args:?} differs from --no-cache"
                );
            }
        }
    };
    let ledger = cache_home.join("pi-session/stats-v2-1.5.2-auto-ledger-session-dedupe-all.bin");
    let identity = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(p).unwrap();
        (m.ino(), m.len())
    };
    // Fresh files are not kept in a ledger.
    same("fresh");
    assert!(!ledger.exists(), "sessions modified just now were kept");
    age(&files_under(&dir));
    same("settled");
    for by in ["session", "project", "model", "provider", "day", "month"] {
        let kept = ledger.with_file_name(format!("stats-v2-1.5.2-auto-ledger-{by}-dedupe-all.bin"));
        assert!(kept.exists(), "no ledger kept by {by}");
    }
    assert!(
        ledger
            .with_file_name("stats-v2-1.5.2-auto-ledger-model-dedupe-range.bin")
            .exists()
    );
    assert!(
        ledger
            .with_file_name("stats-v2-1.5.2-auto-ledger-day-raw-all.bin")
            .exists()
    );
    // Nothing changed: the ledger is taken as it is, not written again.
    let before = identity(&ledger);
    same("unchanged");
    assert_eq!(
        identity(&ledger),
        before,
        "an unchanged ledger was written again"
    );

    // The newest session appended to (the one pi is writing): the ledger held it (it had
    // settled), so this run counts everything and keeps the ledger before it; from then on,
    // while it is written to, the ledger is taken and its new lines counted after it, the
    // ledger not written again.
    let newest = files_under(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| !p.ends_with("omp.jsonl"))
        .max_by_key(|p| {
            let text = fs::read_to_string(p).unwrap();
            let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            header["timestamp"].as_str().unwrap().to_owned()
        })
        .unwrap();
    append(
        &newest,
        &assistant_line("new1", &last_id(&newest), "2026-12-07", "m9", 0.3),
    );
    std::thread::sleep(Duration::from_millis(2100));
    same("the newest session appended to");
    let before = identity(&ledger);
    append(
        &newest,
        &assistant_line("new2", "new1", "2026-12-07", "m9", 0.4),
    );
    std::thread::sleep(Duration::from_millis(2100));
    same("the newest session appended to again");
    assert_eq!(
        identity(&ledger),
        before,
        "the ledger was not taken when only the newest session changed"
    );

    // An old session appended to: the ledger no longer holds; counted again, and kept anew
    // once settled.
    append(
        &original,
        &assistant_line("old1", &last_id(&original), "2026-03-07", "m1", 0.1),
    );
    std::thread::sleep(Duration::from_millis(2100));
    same("an old session appended to");
    age(&files_under(&dir));
    same("settled again");

    // A session created before every other one.
    let first = dir.join("first.jsonl");
    fs::write(
        &first,
        format!(
            "{}\n{}",
            r#"{"type":"session","version":3,"id":"first","timestamp":"2001-01-01T00:00:00.000Z","cwd":"/w"}"#,
            assistant_line("f1", "null", "2001-01-01", "m1", 0.2).replace("\"parentId\":\"null\"", "\"parentId\":null")
        ),
    )
    .unwrap();
    // Only it made to look settled: the kept ledger's files are as they were.
    age(std::slice::from_ref(&first));
    same("a session created before the others");
    // A kept session deleted.
    fs::remove_file(&original).unwrap();
    same("a kept session deleted");
    age(&files_under(&dir));
    same("settled after the deletion");
    // The same sessions named by another path: their names differ, the ledger does not hold.
    let other = dir.join(".");
    for args in &runs[..2] {
        let full = stats_in(&other, &[&args[..], &["--no-cache"]].concat());
        assert_eq!(stats_in(&other, args), full, "named as {other:?}: {args:?}");
        assert_eq!(
            stats_in(&other, args),
            full,
            "named as {other:?}, again: {args:?}"
        );
    }
    same("named as before again");
    // A ledger file corrupt, or another grouping's in its place: ignored, and replaced.
    let mut bytes = fs::read(&ledger).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs::write(&ledger, &bytes).unwrap();
    same("a corrupt ledger");
    fs::copy(
        ledger.with_file_name("stats-v2-1.5.2-auto-ledger-day-dedupe-all.bin"),
        &ledger,
    )
    .unwrap();
    same("another grouping's ledger");
    // A FIFO, or a symlink to a device, where the ledger goes: not read (it would block, or
    // never end), and replaced; a symlink elsewhere is replaced, never written through.
    fs::remove_file(&ledger).unwrap();
    mkfifo(&ledger);
    same("a FIFO where the ledger goes");
    assert!(fs::metadata(&ledger).unwrap().is_file());
    fs::remove_file(&ledger).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &ledger).unwrap();
    same("a symlink to /dev/zero where the ledger goes");
    let elsewhere = area.join("elsewhere.bin");
    fs::write(&elsewhere, "not a ledger").unwrap();
    fs::remove_file(&ledger).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &ledger).unwrap();
    same("a symlink where the ledger goes");
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "not a ledger");
}
