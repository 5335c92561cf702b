//! The writing commands besides `append` (issue 25, items 9 and 15): `gen --out` never
//! overwrites or writes through a symlink without `--force`; `new` and `fork` do not report
//! success when the path they print cannot be printed, and never take `-` for a file name.

use super::common::*;
use std::fs;
use std::process::Command;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

fn sh(script: &str, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn gen_out_refuses_an_existing_file_and_a_symlink_without_force() {
    let dir = scratch("gen-out");
    let existing = dir.join("mine.jsonl");
    fs::write(&existing, "precious\n").unwrap();
    let target = dir.join("target.txt");
    fs::write(&target, "also precious\n").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for path in [&existing, &link] {
        let run = run(&["gen", "--entries", "5", "--out", s(path)], T);
        run.assert_code(1);
        assert!(
            run.stderr.contains("exists: pass --force"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(fs::read_to_string(&existing).unwrap(), "precious\n");
    assert_eq!(fs::read_to_string(&target).unwrap(), "also precious\n");
    // --force replaces the name: the link itself, never its target.
    run(&["gen", "--entries", "5", "--out", s(&link), "--force"], T).assert_code(0);
    assert!(
        !fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "also precious\n");
    assert!(
        fs::read_to_string(&link)
            .unwrap()
            .starts_with("{\"type\":\"session\"")
    );
    // A new name is written whole.
    let new = dir.join("new.jsonl");
    run(&["gen", "--entries", "5", "--out", s(&new)], T).assert_code(0);
    assert!(fs::read_to_string(&new).unwrap().ends_with('\n'));
}

#[test]
fn new_with_standard_output_closed_or_gone_does_not_report_success() {
    let dir = scratch("new-stdout");
    let sessions = dir.join("sessions");
    // Closed: refused before anything is written.
    let out = sh(
        "exec \"$0\" new --cwd /x --session-dir \"$1\" >&-",
        &[s(&sessions)],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("standard output is closed"), "{err}");
    assert_eq!(fs::read_dir(&sessions).map_or(0, |d| d.count()), 0);
    // A reader that went away: the file is there, and the message says so.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["new", "--cwd", "/x", "--session-dir", s(&sessions)])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the session was written, but its path could not be printed"),
        "{err}"
    );
    // Redirected to /dev/null on purpose: fine.
    let out = sh(
        "exec \"$0\" new --cwd /x --session-dir \"$1\" >/dev/null",
        &[s(&sessions)],
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn fork_never_takes_a_dash_for_a_file_name() {
    let dir = scratch("fork-dash");
    let session = dir.join("s.jsonl");
    fs::write(
        &session,
        format!("{HEADER}{}\n", r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#),
    )
    .unwrap();
    let mut command = bin();
    command
        .current_dir(&dir)
        .args(["fork", "s.jsonl", "--leaf", "a1", "-o", "-"]);
    let run1 = run_limited(command, None, T);
    run1.assert_code(1);
    assert!(
        run1.stderr.contains("not standard output"),
        "{}",
        run1.stderr
    );
    let mut command = bin();
    command
        .current_dir(&dir)
        .args(["fork", "-", "--leaf", "a1"]);
    let run2 = run_limited(command, Some(b""), T);
    run2.assert_code(1);
    assert!(
        run2.stderr.contains("not standard input"),
        "{}",
        run2.stderr
    );
    assert!(!dir.join("-").exists(), "a file named - was created");
    // A missing leaf: the message names the file it is missing from.
    let mut command = bin();
    command
        .current_dir(&dir)
        .args(["fork", "s.jsonl", "--leaf", "nope"]);
    let run3 = run_limited(command, None, T);
    run3.assert_code(1);
    assert!(
        run3.stderr.contains("s.jsonl: Entry nope not found"),
        "{}",
        run3.stderr
    );
}

/// The Markdown and HTML pages of a whole 300 MB branch are made and written a batch of
/// entries at a time from a file read in pieces: what either holds is the file's lines'
/// places and a batch (48 and 57 MiB when measured), not the file, its transcript or the page
/// (165 and 210 MB; 0.7 GB held before).
#[test]
#[ignore = "a 300 MB session; release build"]
fn markdown_and_html_exports_of_a_large_session_hold_a_batch_not_the_session() {
    let dir = scratch("pages-large");
    let path = generated(&dir, "big.jsonl", &["--size", "300MB", "--seed", "5"]);
    let mut entries = Vec::new();
    for format in ["markdown", "html"] {
        let out = dir.join(format!("page.{format}"));
        let mut command = bin();
        command.args(["export", s(&path), "--format", format, "-o", s(&out)]);
        let run = run_limited(command, None, Duration::from_secs(120));
        run.assert_code(0);
        assert!(
            run.max_rss_kib < 128 * 1024,
            "the {format} export took {} MiB",
            run.max_rss_kib / 1024
        );
        let page = fs::read_to_string(&out).unwrap();
        assert!(page.len() > 100 << 20, "{format}: {} bytes", page.len());
        let said = page.split(" entries, ending at").next().unwrap();
        let digits = said.len() - said.bytes().rev().take_while(u8::is_ascii_digit).count();
        let said: usize = said[digits..].parse().unwrap();
        if format == "html" {
            // Every entry the page says the branch shows is on it, each an article.
            assert_eq!(page.matches("<article").count(), said);
        }
        entries.push(said);
    }
    assert_eq!(entries[0], entries[1]);
    assert!(entries[0] > 100_000, "{entries:?}");
    // 640 MB of session and pages: not left behind.
}

#[test]
#[ignore = "a 300 MB session; release build"]
fn fork_and_jsonl_export_of_a_large_session_hold_its_places_not_its_text_or_output() {
    let dir = scratch("fork-large");
    let path = generated(&dir, "big.jsonl", &["--size", "300MB", "--seed", "5"]);
    let text = fs::read_to_string(&path).unwrap();
    let second = text.lines().nth(1).unwrap();
    let first_id = serde_json::from_str::<serde_json::Value>(second).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The same session written with one `write`: the page cache holds it in large folios,
    // which the kernel maps whole around any byte read through a mapping (the labels read
    // through it when the session was loaded took 689 MiB of a 1 GB one).
    let one_write = dir.join("one-write.jsonl");
    fs::write(&one_write, &text).unwrap();
    drop(text);
    // The branch to the first entry is one line: what either holds is the file's lines'
    // places (their records and index, 75 MiB when measured), not a copy of its 300 MB.
    let out = dir.join("fork.jsonl");
    for args in [
        vec!["fork", s(&path), "--leaf", &first_id, "-o", s(&out)],
        vec!["export", s(&path), "--format", "jsonl", "--leaf", &first_id],
        vec![
            "export",
            s(&one_write),
            "--format",
            "jsonl",
            "--leaf",
            &first_id,
        ],
    ] {
        let mut command = bin();
        command.args(&args);
        let run = run_limited(command, None, Duration::from_secs(120));
        run.assert_code(0);
        assert!(
            run.max_rss_kib < 128 * 1024,
            "{args:?} took {} MiB",
            run.max_rss_kib / 1024
        );
    }
    assert_eq!(fs::read_to_string(&out).unwrap().lines().count(), 2);
    // The whole branch, exported line by line: the output is never held either.
    let whole = dir.join("whole.jsonl");
    let mut command = bin();
    command.args(["export", s(&path), "--format", "jsonl", "-o", s(&whole)]);
    let run = run_limited(command, None, Duration::from_secs(120));
    run.assert_code(0);
    assert!(fs::metadata(&whole).unwrap().len() > 200 << 20);
    assert!(
        run.max_rss_kib < 128 * 1024,
        "the export of the whole branch took {} MiB",
        run.max_rss_kib / 1024
    );
}
