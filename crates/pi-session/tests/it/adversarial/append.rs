//! `append` never loses or tears data (issue 25, items 1–5, 9 and 12): a rewrite running
//! beside it, old (v1/v2) files behind symlinks and modes, concurrent appends (ours, and a
//! lock-less pi-style writer), a killed or interrupted batch, read-only files, endless input,
//! and a large session it must not hold in memory.

use super::common::*;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

/// A v3 session of two linked entries.
fn v3_session(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(
        &path,
        format!(
            "{HEADER}{}\n{}\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"again","timestamp":2}}"#,
        ),
    )
    .unwrap();
    path
}

fn user(text: &str) -> String {
    format!(r#"{{"type":"message","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#)
}

fn append(path: &Path, input: &str) -> Run {
    let mut command = bin();
    command.arg("append").arg(path);
    run_limited(command, Some(input.as_bytes()), T)
}

/// Every line parses, and each entry's parent is the entry before it (one chain, no fork).
fn assert_one_chain(path: &Path) -> usize {
    let text = fs::read_to_string(path).unwrap();
    let mut previous: Option<String> = None;
    let mut entries = 0;
    for (n, line) in text.lines().enumerate().skip(1) {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}: {line}", n + 1));
        let parent = value["parentId"].as_str().map(str::to_owned);
        assert_eq!(parent, previous, "line {} forks the session", n + 1);
        previous = value["id"].as_str().map(str::to_owned);
        entries += 1;
    }
    assert!(text.ends_with('\n'));
    entries
}

#[test]
fn append_to_an_old_file_is_refused_and_leaves_it_and_its_link_as_they_were() {
    let dir = scratch("append-old");
    let v1 = dir.join("v1.jsonl");
    fs::write(
        &v1,
        "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n\
         {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )
    .unwrap();
    fs::set_permissions(&v1, fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&v1, &link).unwrap();
    let before = fs::read(&v1).unwrap();
    for path in [&v1, &link] {
        let run = append(path, &user("x"));
        run.assert_code(1);
        assert!(
            run.stderr.contains("a version 1 session")
                && run.stderr.contains("pi-session migrate --in-place")
                && run.stderr.contains("nothing is appended"),
            "{}",
            run.stderr
        );
        assert_eq!(fs::read(&v1).unwrap(), before);
        assert_eq!(fs::metadata(&v1).unwrap().mode() & 0o7777, 0o640);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // Migrated first, as the message says, it takes the entry.
    run(&["migrate", s(&v1), "--in-place"], T).assert_code(0);
    append(&v1, &user("x")).assert_code(0);
    assert_eq!(fs::metadata(&v1).unwrap().mode() & 0o7777, 0o640);
    assert!(fs::read_to_string(&v1).unwrap().lines().count() == 3);
}

#[test]
fn concurrent_appends_never_fork_the_session() {
    let dir = scratch("append-concurrent");
    let path = v3_session(&dir, "s.jsonl");
    // 6 workers × 25 single appends, each retried while the lock is taken.
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    loop {
                        let run = append(&path, &user(&format!("w{w} e{i}")));
                        if run.code == Some(0) {
                            break;
                        }
                        assert!(
                            run.stderr.contains("lock is taken"),
                            "only the lock may refuse: {}",
                            run.stderr
                        );
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(assert_one_chain(&path), 2 + 6 * 25);
}

#[test]
fn an_append_after_a_lock_less_writer_attaches_to_its_line() {
    // pi appends without a lock: the entry we append after it continues from its line.
    let dir = scratch("append-pi-writer");
    let path = v3_session(&dir, "s.jsonl");
    let pi_line = r#"{"type":"message","id":"pi1","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"from pi","timestamp":3}}"#;
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(format!("{pi_line}\n").as_bytes())
        .unwrap();
    append(&path, &user("ours")).assert_code(0);
    assert_eq!(assert_one_chain(&path), 4);
}

/// Appends `lines` to `path` the way a process killed in the middle of its write leaves
/// them: the journal saved, `cut` bytes of the lines in the file.
fn killed_append(path: &Path, lines: &[u8], cut: usize) {
    let meta = fs::metadata(path).unwrap();
    let journal = path.parent().unwrap().canonicalize().unwrap().join(format!(
        ".pi-session-append-{}-{}",
        meta.dev(),
        meta.ino()
    ));
    let mut saved = format!(
        "pi-session append journal 1 {} {}\n",
        meta.len(),
        lines.len()
    )
    .into_bytes();
    saved.extend_from_slice(lines);
    fs::write(journal, saved).unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(&lines[..cut])
        .unwrap();
}

fn batch(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut parent = "a2".to_owned();
    for i in 0..n {
        let id = format!("k{i:07}");
        out.extend_from_slice(
            format!(
                r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:04.000Z","message":{{"role":"user","content":"{}","timestamp":4}}}}"#,
                "x".repeat(50)
            )
            .as_bytes(),
        );
        out.push(b'\n');
        parent = id;
    }
    out
}

#[test]
fn a_killed_batch_is_taken_back_or_kept_whole_by_the_next_writer() {
    let dir = scratch("append-killed");
    let lines = batch(200);
    // Cut mid-line: taken back, the file is as it was, then the new entry.
    let path = v3_session(&dir, "cut.jsonl");
    let before = fs::read(&path).unwrap();
    killed_append(&path, &lines, 5_000);
    let run = append(&path, &user("next"));
    run.assert_code(0);
    assert!(run.stderr.contains("was taken back"), "{}", run.stderr);
    let after = fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(assert_one_chain(&path), 3);
    // Whole: kept, and the next entry follows it.
    let path = v3_session(&dir, "whole.jsonl");
    killed_append(&path, &lines, lines.len());
    append(&path, &user("next")).assert_code(0);
    assert_eq!(assert_one_chain(&path), 2 + 200 + 1);
    // Cut, then a lock-less writer appended after it: left in place and said.
    let path = v3_session(&dir, "followed.jsonl");
    killed_append(&path, &lines, 5_000);
    let foreign = b"{\"type\":\"custom\",\"customType\":\"pi\",\"id\":\"f1\",\"parentId\":\"a2\",\"timestamp\":\"2025-01-01T00:00:05.000Z\"}\n";
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(foreign)
        .unwrap();
    let before = fs::read(&path).unwrap();
    let run = append(&path, &user("next"));
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("followed by lines another program appended"),
        "{}",
        run.stderr
    );
    assert!(
        fs::read(&path).unwrap().starts_with(&before),
        "nothing of theirs was cut"
    );
    // A rewrite refuses to start over a journal it has just mended, and says so.
    let path = v3_session(&dir, "repair.jsonl");
    killed_append(&path, &lines, 5_000);
    let repaired = super::common::run(&["repair", s(&path), "--in-place"], T);
    // (Where repair prints its refusal, stdout or stderr, is another test's business.)
    let said = format!("{}{}", repaired.stdout_text(), repaired.stderr);
    assert!(said.contains("was taken back"), "{said}");
    assert_ne!(repaired.code, Some(0), "{said}");
    assert_eq!(assert_one_chain(&path), 2);
}

#[test]
fn a_terminated_batch_is_whole_or_absent() {
    let dir = scratch("append-sigterm");
    let path = v3_session(&dir, "s.jsonl");
    let before = fs::read(&path).unwrap();
    let mut input = String::new();
    for i in 0..20_000 {
        input.push_str(&user(&format!("entry {i} {}", "y".repeat(100))));
        input.push('\n');
    }
    for delay_ms in [50u64, 300, 800, 1500] {
        let mut child = bin()
            .arg("append")
            .arg(&path)
            .stdin(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        unsafe_kill(child.id(), libc::SIGTERM);
        child.wait().unwrap();
        let now = fs::read(&path).unwrap();
        let entries = assert_one_chain(&path);
        assert!(now.starts_with(&before));
        assert!(
            (entries - 2).is_multiple_of(20_000),
            "after SIGTERM at {delay_ms} ms: {entries} entries, a part of a batch"
        );
    }
}

fn unsafe_kill(pid: u32, signal: i32) {
    std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
}

#[test]
fn append_refuses_a_read_only_file_even_as_root() {
    let dir = scratch("append-read-only");
    let path = v3_session(&dir, "s.jsonl");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    let before = fs::read(&path).unwrap();
    let run = append(&path, &user("x"));
    run.assert_code(1);
    assert!(
        run.stderr.contains("is read-only (mode 444)"),
        "{}",
        run.stderr
    );
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn append_of_nothing_still_needs_a_session_file() {
    let dir = scratch("append-nothing");
    let missing = dir.join("missing.jsonl");
    let run = append(&missing, "");
    run.assert_code(1);
    assert!(run.stderr.contains("no such file"), "{}", run.stderr);
    let run = append(&dir, "");
    run.assert_code(1);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
}

#[test]
fn endless_input_is_refused_at_the_cap() {
    let dir = scratch("append-endless");
    let path = v3_session(&dir, "s.jsonl");
    let before = fs::read(&path).unwrap();
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("exec \"$0\" append \"$1\" --max-input-size 10MB < /dev/zero")
        .arg(env!("CARGO_BIN_EXE_pi-session"))
        .arg(&path);
    let run = run_limited(command, None, T);
    run.assert_code(1);
    assert!(run.stderr.contains("--max-input-size"), "{}", run.stderr);
    assert!(run.max_rss_kib < 200 * 1024, "{} KiB", run.max_rss_kib);
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
#[ignore = "a 300 MB session; release build"]
fn entries_onto_a_large_session_hold_little_of_it() {
    let dir = scratch("append-large");
    let path = generated(&dir, "big.jsonl", &["--size", "300MB", "--seed", "3"]);
    let first_call = first_call_on_the_last_branch(&path);
    let tool_result = |call: &str| {
        format!(
            r#"{{"type":"message","message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":1}}}}"#
        )
    };
    // One message; a tool result whose call is looked for up the whole branch (its first
    // call); one whose call was never made, which is refused after the same walk.
    for (input, code) in [
        (user("one more"), 0),
        (tool_result(&first_call), 0),
        (tool_result("never-made"), 1),
    ] {
        let before = fs::metadata(&path).unwrap().len();
        let run = append(&path, &input);
        run.assert_code(code);
        if code == 1 {
            assert!(run.stderr.contains("PS0219"), "{}", run.stderr);
            assert_eq!(fs::metadata(&path).unwrap().len(), before);
        }
        // The records of the file's 115,000 lines, not their text: 40 MiB when measured.
        assert!(
            run.max_rss_kib < 96 * 1024,
            "appending {input} to 300 MB took {} MiB",
            run.max_rss_kib / 1024
        );
        assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
    }
}

/// The first tool call made on the branch of the file's last entry.
fn first_call_on_the_last_branch(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut parents = std::collections::HashMap::new();
    let mut calls = std::collections::HashMap::new();
    let mut last = None;
    for line in text.lines().skip(1) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = value["id"].as_str().unwrap().to_owned();
        parents.insert(id.clone(), value["parentId"].as_str().map(str::to_owned));
        if let Some(blocks) = value["message"]["content"].as_array() {
            let made: Vec<String> = blocks
                .iter()
                .filter(|b| b["type"] == "toolCall")
                .filter_map(|b| b["id"].as_str().map(str::to_owned))
                .collect();
            if let Some(first) = made.first() {
                calls.insert(id.clone(), first.clone());
            }
        }
        last = Some(id);
    }
    let mut at = last;
    let mut first = None;
    while let Some(id) = at {
        if let Some(call) = calls.get(&id) {
            first = Some(call.clone());
        }
        at = parents.get(&id).cloned().flatten();
    }
    first.expect("the generated session makes tool calls")
}

#[test]
#[ignore = "a 100 MB session migrated while appends run; release build"]
fn appends_during_an_in_place_rewrite_are_never_lost() {
    let dir = scratch("append-during-rewrite");
    let path = generated(
        &dir,
        "v2.jsonl",
        &["--size", "100MB", "--seed", "4", "--version", "2"],
    );
    let migrate = || {
        bin()
            .args(["migrate", s(&path), "--in-place"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut rewrite = migrate();
    let mut refusals = 0;
    let mut appended = Vec::new();
    let mut i = 0;
    loop {
        let done = match rewrite.try_wait().unwrap() {
            Some(status) if status.success() => true,
            // The rewrite found the writers' lock taken by one of the appends (which take it
            // to look at the file, and refuse a v2 one): it wrote nothing and says to run it
            // again, which is what a user does.
            Some(_) => {
                let mut stderr = String::new();
                std::io::Read::read_to_string(&mut rewrite.stderr.take().unwrap(), &mut stderr)
                    .unwrap();
                assert!(stderr.contains("its lock is taken"), "{stderr}");
                refusals += 1;
                assert!(refusals < 50, "the rewrite never got the lock");
                rewrite = migrate();
                false
            }
            None => false,
        };
        let text = format!("during-{i}");
        if append(&path, &user(&text)).code == Some(0) {
            appended.push(text);
        }
        i += 1;
        if done {
            break;
        }
    }
    // One more once the rewrite is over: it must succeed.
    assert_eq!(append(&path, &user("after")).code, Some(0));
    let text = fs::read_to_string(&path).unwrap();
    for t in appended.iter().chain([&"after".to_owned()]) {
        assert!(
            text.contains(&format!("\"{t}\"")),
            "{t} was reported appended but is gone"
        );
    }
}
