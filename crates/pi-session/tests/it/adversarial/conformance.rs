//! Adversarial cases: `conformance run` against hostile implementations (item 15: children
//! holding stdout, process trees left behind, endless output) and runs that check nothing
//! (item 17: no case selected, a wrong `--corpus`).

use super::common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A corpus of one case (`t/one`, operation `tree`, expected output `[]`) under `dir/cases`.
fn tiny_corpus(dir: &Path) -> PathBuf {
    let case = dir.join("cases/t/one");
    std::fs::create_dir_all(case.join("expected")).unwrap();
    write(
        &case,
        "case.json",
        r#"{"description":"d","rules":["X"],"ops":["tree"]}"#,
    );
    write(&case, "session.jsonl", HEADER);
    write(&case.join("expected"), "tree.json", "[]\n");
    dir.join("cases")
}

/// `conformance run --impl 'sh SCRIPT' --corpus CORPUS --timeout SECONDS`, bounded by `limit`.
fn run_impl(dir: &Path, script: &str, timeout: &str, limit: Duration) -> Run {
    let corpus = tiny_corpus(dir);
    let script_path = write(dir, "impl.sh", script);
    let implementation = format!("sh '{}'", s(&script_path));
    run(
        &[
            "conformance",
            "run",
            "--impl",
            &implementation,
            "--corpus",
            s(&corpus),
            "--timeout",
            timeout,
        ],
        limit,
    )
}

/// The pids the implementation wrote to `dir/pids`, one a line.
fn pids(dir: &Path) -> Vec<libc::pid_t> {
    let text = std::fs::read_to_string(dir.join("pids")).expect("the implementation ran");
    text.lines().map(|l| l.trim().parse().unwrap()).collect()
}

/// Whether `pid` is gone (or a zombie waiting for init), waiting up to 5 s for it to go.
#[allow(unsafe_code)]
fn is_dead(pid: libc::pid_t) -> bool {
    for _ in 0..500 {
        // SAFETY: `kill` with signal 0 only checks that the process exists.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        if !exists || zombie {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Kills what a failed test left behind, so that a failure does not leave sleepers.
#[allow(unsafe_code)]
fn cleanup(pids: &[libc::pid_t]) {
    for &pid in pids {
        // SAFETY: `kill` takes plain integers; these are sleepers this test started.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

#[test]
fn conformance_run_impl_forking_a_sleeper_that_holds_stdout_finishes_and_kills_the_sleeper() {
    let dir = scratch("conformance-sleeper-holds-stdout");
    let script = format!(
        "sleep 1000 &\necho $! >> '{0}/pids'\nsh -c 'sleep 1000' &\necho $! >> '{0}/pids'\n\
         cat >/dev/null\nprintf '[]\\n'\n",
        s(&dir)
    );
    let run = run_impl(&dir, &script, "10", Duration::from_secs(60));
    let pids = pids(&dir);
    let dead: Vec<bool> = pids.iter().map(|&p| is_dead(p)).collect();
    cleanup(&pids);
    run.assert_code(0);
    assert!(
        run.elapsed < Duration::from_secs(8),
        "took {:?}",
        run.elapsed
    );
    assert!(
        run.stdout_text().contains("1 passed, 0 failed"),
        "{}",
        run.stdout_text()
    );
    assert_eq!(dead, vec![true, true], "the sleepers outlived the run");
}

#[test]
fn conformance_run_timeout_2_on_a_hanging_impl_kills_its_whole_process_tree_on_time() {
    let dir = scratch("conformance-timeout-kills-tree");
    let script = format!(
        "sleep 1000 &\necho $! >> '{0}/pids'\nsh -c 'sleep 1000 & echo $! >> {0}/pids; wait' &\n\
         echo $! >> '{0}/pids'\nwait\n",
        s(&dir)
    );
    let run = run_impl(&dir, &script, "2", Duration::from_secs(60));
    let pids = pids(&dir);
    let dead: Vec<bool> = pids.iter().map(|&p| is_dead(p)).collect();
    cleanup(&pids);
    run.assert_code(1);
    assert!(
        run.elapsed < Duration::from_secs(6),
        "took {:?}",
        run.elapsed
    );
    assert!(
        run.stdout_text().contains("no answer within"),
        "{}",
        run.stdout_text()
    );
    assert!(
        dead.iter().all(|d| *d),
        "{pids:?} outlived the run: {dead:?}"
    );
}

#[test]
fn conformance_run_impl_yes_with_endless_output_is_stopped_with_bounded_memory() {
    let dir = scratch("conformance-endless-output");
    let run = run_impl(&dir, "exec yes\n", "20", Duration::from_secs(60));
    run.assert_code(1);
    assert!(
        run.elapsed < Duration::from_secs(15),
        "took {:?}",
        run.elapsed
    );
    assert!(
        run.stdout_text().contains("output too large"),
        "{}",
        run.stdout_text()
    );
    assert!(
        run.max_rss_kib < 128 << 10,
        "peak memory {} KiB",
        run.max_rss_kib
    );
}

#[test]
fn conformance_run_impl_with_endless_stderr_is_stopped() {
    let dir = scratch("conformance-endless-stderr");
    let run = run_impl(&dir, "exec yes >&2\n", "20", Duration::from_secs(60));
    run.assert_code(1);
    assert!(
        run.elapsed < Duration::from_secs(15),
        "took {:?}",
        run.elapsed
    );
    assert!(
        run.stdout_text().contains("output too large") && run.stdout_text().contains("stderr"),
        "{}",
        run.stdout_text()
    );
}

#[test]
fn conformance_run_only_nomatch_selecting_no_case_exits_1() {
    let dir = scratch("conformance-no-case-selected");
    let corpus = tiny_corpus(&dir);
    let run = run(
        &[
            "conformance",
            "run",
            "--impl",
            "cat",
            "--corpus",
            s(&corpus),
            "--only",
            "nomatch/*",
        ],
        Duration::from_secs(30),
    );
    run.assert_code(1);
    assert!(run.stderr.contains("no case selected"), "{}", run.stderr);
    assert!(run.stderr.contains("t/one"), "{}", run.stderr);
}

#[test]
fn conformance_run_skip_everything_exits_1() {
    let dir = scratch("conformance-skip-everything");
    let corpus = tiny_corpus(&dir);
    let run = run(
        &[
            "conformance",
            "run",
            "--impl",
            "cat",
            "--corpus",
            s(&corpus),
            "--skip",
            "*",
        ],
        Duration::from_secs(30),
    );
    run.assert_code(1);
    assert!(run.stderr.contains("no case selected"), "{}", run.stderr);
}

#[test]
fn conformance_run_with_a_wrong_corpus_exits_2() {
    let dir = scratch("conformance-wrong-corpus");
    tiny_corpus(&dir);
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let file = write(&dir, "file.txt", "x");
    let missing = dir.join("missing");
    let area = dir.join("cases/t");
    for (corpus, says) in [
        (&empty, "no case in this directory"),
        (&missing, "no such directory"),
        (&file, "not a directory"),
        // The area, one level too deep: its cases are taken for areas.
        (&area, "cases directory"),
        // (One level higher, a directory holding cases/, is a corpus as `conformance corpus
        // --extract` writes one: it runs.)
    ] {
        let run = run(
            &["conformance", "run", "--impl", "cat", "--corpus", s(corpus)],
            Duration::from_secs(30),
        );
        run.assert_code(2);
        assert!(
            run.stderr.contains(says),
            "{}: {}",
            corpus.display(),
            run.stderr
        );
    }
}

#[test]
fn conformance_run_timeout_negative_nan_or_zero_is_a_usage_error_not_a_panic() {
    let dir = scratch("conformance-bad-timeout");
    let corpus = tiny_corpus(&dir);
    for timeout in [
        "--timeout=-1",
        "--timeout=nan",
        "--timeout=0",
        "--timeout=x",
    ] {
        let run = run(
            &[
                "conformance",
                "run",
                "--impl",
                "cat",
                "--corpus",
                s(&corpus),
                timeout,
            ],
            Duration::from_secs(30),
        );
        run.assert_code(2);
        assert!(run.stderr.contains("timeout"), "{timeout}: {}", run.stderr);
    }
}

#[test]
fn conformance_run_timeout_1e300_does_not_overflow() {
    let dir = scratch("conformance-huge-timeout");
    let run = run_impl(
        &dir,
        "cat >/dev/null; printf '[]\\n'\n",
        "1e300",
        Duration::from_secs(60),
    );
    run.assert_code(0);
}
