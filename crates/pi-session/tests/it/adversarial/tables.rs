//! `export --format parquet` stopped part way (issue 25, item 3): Ctrl-C, `SIGTERM` and
//! `SIGKILL` mid-export, a retry into the same directory, the empty table directories an
//! early failure leaves, and what a refusal says the directory holds. The signal cases
//! generate and export a few hundred megabytes and are `#[ignore]`d (`.ci/run` runs them in
//! release).

use super::common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(600);

/// Every file below `dir`, hidden ones included.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn named(files: &[PathBuf], end: &str) -> usize {
    files
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(end))
        .count()
}

/// A generated tree of sessions big enough for an export to be caught part way.
fn tree(dir: &Path) -> PathBuf {
    let tree = dir.join("sessions");
    let mut command = bin();
    command.args([
        "gen",
        "--tree",
        s(&tree),
        "--files",
        "200",
        "--size",
        "400MB",
        "--seed",
        "1",
    ]);
    run_limited(command, None, T).assert_code(0);
    tree
}

/// Starts `export --format parquet -o out tree`.
fn start_export(tree: &Path, out: &Path) -> Child {
    let mut command = bin();
    command
        .args(["export", "--format", "parquet", "-o", s(out), s(tree)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.spawn().expect("pi-session starts")
}

/// Waits until the export has a temporary part file open (it is writing), or fails.
fn wait_for_a_temporary(out: &Path, child: &mut Child) {
    let start = Instant::now();
    loop {
        if named(&files(out), ".tmp") > 0 {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the export ended ({status}) before it was caught writing");
        }
        assert!(start.elapsed() < T, "no temporary part file appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[allow(unsafe_code)]
fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: a signal to our own child, which has not been waited for.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(r, 0);
}

/// The report line of a finished export: "DIR: N part files: M sessions, E entries (…)",
/// without the directory and the count of files.
fn exported(run: &Run) -> String {
    let text = run.stdout_text();
    let at = text.find("sessions").expect("a report");
    let start = text[..at].rfind(": ").expect("a report") + 2;
    text[start..].trim_end().to_owned()
}

/// Issue 25, item 3: SIGTERM (and so Ctrl-C, SIGHUP) mid-export left 23–56 MB of hidden
/// `.part-*.tmp` files that nothing removed, beside a partial set of parts. The export now
/// removes everything it wrote, says so, dies of the signal, and a retry into the same
/// directory exports everything.
#[test]
#[ignore = "generates and exports 400 MB; run with --ignored in a release build"]
fn sigterm_mid_export_removes_what_it_wrote_and_a_retry_succeeds() {
    let dir = scratch("tables-sigterm");
    let tree = tree(&dir);
    let reference = dir.join("reference");
    let mut command = bin();
    command.args([
        "export",
        "--format",
        "parquet",
        "-o",
        s(&reference),
        s(&tree),
    ]);
    let whole = run_limited(command, None, T);
    whole.assert_code(0);

    let out = dir.join("out");
    let mut child = start_export(&tree, &out);
    wait_for_a_temporary(&out, &mut child);
    signal(&child, libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(output.status.signal(), Some(libc::SIGTERM), "{stderr}");
    assert!(
        stderr.contains("the export was interrupted (SIGTERM): removed the ")
            && stderr.contains("temporar"),
        "{stderr}"
    );
    assert_eq!(files(&out), Vec::<PathBuf>::new(), "{stderr}");

    let mut command = bin();
    command.args(["export", "--format", "parquet", "-o", s(&out), s(&tree)]);
    let retry = run_limited(command, None, T);
    retry.assert_code(0);
    assert_eq!(exported(&retry), exported(&whole));
    assert_eq!(named(&files(&out), ".tmp"), 0);
    assert_eq!(named(&files(&out), ".unfinished"), 0);
}

/// Issue 25, item 3: a killed export (SIGKILL: nothing of it runs) left its temporaries and
/// a partial set of parts for good, and a retry failed "not empty". The next export into
/// the directory removes what the dead run left (its marker says it did not finish), says
/// so, and exports everything.
#[test]
#[ignore = "generates and exports 400 MB; run with --ignored in a release build"]
fn sigkill_mid_export_is_cleaned_up_by_the_retry() {
    let dir = scratch("tables-sigkill");
    let tree = tree(&dir);
    let reference = dir.join("reference");
    let mut command = bin();
    command.args([
        "export",
        "--format",
        "parquet",
        "-o",
        s(&reference),
        s(&tree),
    ]);
    let whole = run_limited(command, None, T);
    whole.assert_code(0);

    let out = dir.join("out");
    let mut child = start_export(&tree, &out);
    wait_for_a_temporary(&out, &mut child);
    signal(&child, libc::SIGKILL);
    let _ = child.wait();
    let left = files(&out);
    assert!(named(&left, ".tmp") > 0, "{left:?}");
    assert_eq!(named(&left, ".unfinished"), 1, "{left:?}");

    let mut command = bin();
    command.args(["export", "--format", "parquet", "-o", s(&out), s(&tree)]);
    let retry = run_limited(command, None, T);
    retry.assert_code(0);
    assert!(
        retry
            .stderr
            .contains("left by an export that did not finish"),
        "{}",
        retry.stderr
    );
    assert_eq!(exported(&retry), exported(&whole));
    let now = files(&out);
    assert_eq!(named(&now, ".tmp"), 0, "{now:?}");
    assert_eq!(named(&now, ".unfinished"), 0, "{now:?}");
    assert_eq!(
        named(&now, ".parquet"),
        named(&files(&reference), ".parquet"),
        "{now:?}"
    );
}

/// Issue 25, item 3: after a full disk, the empty table directories the failed export made
/// made the retry fail with "not empty". Directories holding only directories count as
/// empty (and are made again as needed).
#[test]
fn empty_table_directories_do_not_make_the_output_not_empty() {
    let dir = scratch("tables-empty-dirs");
    let session = write(&dir, "s.jsonl", HEADER);
    let out = dir.join("out");
    fs::create_dir_all(out.join("entries")).unwrap();
    fs::create_dir_all(out.join("messages/month=2026-01")).unwrap();
    let run = run(
        &["export", "--format", "parquet", "-o", s(&out), s(&session)],
        T,
    );
    run.assert_code(0);
    let made = files(&out);
    // Every table has its (empty) part file, `entries` and `messages` included.
    assert_eq!(named(&made, ".parquet"), 6, "{made:?}");
    assert!(
        made.iter().any(
            |p| p.starts_with(out.join("entries")) && p.to_string_lossy().ends_with(".parquet")
        )
    );
}

/// Issue 25, item 3: a refused output directory is said with what it holds (it said "not
/// empty" only), and a write error that stops the export says what it removed (it spoke of
/// "the part files it completed" when there were none) and leaves the directory as it was.
#[test]
fn refusals_and_write_errors_say_what_there_is() {
    let dir = scratch("tables-messages");
    let session = write(&dir, "s.jsonl", HEADER);
    let out = dir.join("out");
    fs::create_dir_all(out.join("entries")).unwrap();
    fs::write(out.join("entries/part-1-2-000-00001.parquet"), b"").unwrap();
    fs::write(out.join("entries/.part-1-2-000-00002.parquet.tmp"), b"").unwrap();
    fs::write(out.join("notes.txt"), b"mine").unwrap();
    let refused = run(
        &["export", "--format", "parquet", "-o", s(&out), s(&session)],
        T,
    );
    refused.assert_code(2);
    // The temporary of process 2, which is not an export, is not taken for a dead one's
    // when process 2 runs; either way the part file and the notes stay.
    assert!(
        refused
            .stderr
            .contains("the directory is not empty (it holds 1 part file")
            && refused.stderr.contains("1 other entry"),
        "{}",
        refused.stderr
    );
    assert!(
        out.join("notes.txt").exists() && out.join("entries/part-1-2-000-00001.parquet").exists()
    );

    // `entries` cannot be made a directory: a file is in the way, and the export stops.
    let session = write(
        &dir,
        "m.jsonl",
        format!(
            "{HEADER}{}\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#
        ),
    );
    let out = dir.join("out2");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("entries"), "in the way").unwrap();
    let failed = run(
        &[
            "export",
            "--format",
            "parquet",
            "--since",
            "2000-01-01",
            "-o",
            s(&out),
            s(&session),
        ],
        T,
    );
    failed.assert_code(1);
    assert!(
        failed
            .stderr
            .contains("the export stopped and removed the ")
            && failed.stderr.contains("holds what it held before"),
        "{}",
        failed.stderr
    );
    assert!(!failed.stderr.contains("completed"), "{}", failed.stderr);
    assert_eq!(files(&out), [out.join("entries")]);
}
