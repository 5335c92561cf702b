//! Adversarial cases: validate — hostile directories (FIFOs, dangling links, unreadable
//! directories, links to the parent), hostile names (not UTF-8, newlines), hostile text (ESC
//! in a role, a 10 MB id), deep nesting, and files of a million broken lines.

use super::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SHORT: Duration = Duration::from_secs(60);
const LONG: Duration = Duration::from_secs(600);

/// A valid entry line (with its newline) with `id` and `parent`.
fn entry(id: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}}}\n"
    )
}

fn good_session() -> String {
    format!("{HEADER}{}", entry("a1b2c3d4", None))
}

/// Runs `validate ARGS` with a timeout.
fn validate(args: &[&str]) -> Run {
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    run(&all, SHORT)
}

fn json(run: &Run) -> Value {
    serde_json::from_slice(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            run.stdout_text(),
            run.stderr
        )
    })
}

fn paths_of(report: &Value) -> Vec<String> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn codes_of(report: &Value) -> Vec<String> {
    report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Item 14: a FIFO named `*.jsonl` in a directory made `validate DIR` wait forever for a
/// writer. Now it is skipped with a note, and the real session is checked.
#[test]
fn validate_dir_holding_a_fifo_named_jsonl_skips_it_with_a_note() {
    let dir = scratch("validate-fifo-in-dir");
    write(&dir, "a.jsonl", good_session());
    mkfifo(&dir.join("b.jsonl"));
    let run = validate(&["--format", "json", s(&dir)]);
    run.assert_code(0);
    assert!(run.stderr.contains("b.jsonl") && run.stderr.contains("not a regular file"));
    let report = json(&run);
    assert_eq!(paths_of(&report), [s(&dir.join("a.jsonl"))]);
}

/// Item 14: a FIFO given explicitly is read as a stream (not refused, not read as empty).
#[test]
fn validate_fifo_named_explicitly_reads_it_as_a_stream() {
    let dir = scratch("validate-fifo-explicit");
    let fifo = dir.join("s.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, good_session()))
    };
    let run = validate(&["--strict", s(&fifo)]);
    let _ = writer.join();
    run.assert_code(0);
}

/// Item 18: a dangling `README.md` link counted as an invalid session (rc 1). Only
/// `*.jsonl` files are sessions.
#[test]
fn validate_dir_with_a_dangling_readme_symlink_is_valid() {
    let dir = scratch("validate-dangling-readme");
    write(&dir, "a.jsonl", good_session());
    std::os::unix::fs::symlink(dir.join("nowhere.md"), dir.join("README.md")).unwrap();
    let run = validate(&[s(&dir)]);
    run.assert_code(0);
    assert!(
        run.stdout_text().contains("1 file: 1 valid"),
        "{}",
        run.stdout_text()
    );
}

/// Item 18: a dangling link *named* `*.jsonl` is noted, not an invalid session.
#[test]
fn validate_dir_with_a_dangling_jsonl_symlink_notes_it() {
    let dir = scratch("validate-dangling-jsonl");
    write(&dir, "a.jsonl", good_session());
    std::os::unix::fs::symlink(dir.join("gone.jsonl"), dir.join("b.jsonl")).unwrap();
    let run = validate(&[s(&dir)]);
    run.assert_code(0);
    assert!(run.stderr.contains("b.jsonl"), "{}", run.stderr);
}

/// Item 18: an unreadable sub-directory counted as an invalid session. Now: a warning on
/// stderr, and the verdict is that of the sessions that could be listed. (Root reads every
/// directory, so the case cannot be built as root.)
#[test]
fn validate_dir_with_an_unreadable_subdirectory_warns_and_stays_valid() {
    if is_root() {
        eprintln!("skipped: root can read a directory of mode 000");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("validate-unreadable-dir");
    write(&dir, "a.jsonl", good_session());
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    write(&locked, "hidden.jsonl", good_session());
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = validate(&[s(&dir)]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    run.assert_code(0);
    assert!(
        run.stderr.contains("warning: cannot read the directory") && run.stderr.contains("locked"),
        "{}",
        run.stderr
    );
}

/// Item 18: a link to the root's parent made `validate DIR` check files outside the root,
/// and the root's own files twice. Links to directories are not followed by default; with
/// `--follow` the loop back to the root is noted and every file is checked once.
#[test]
fn validate_dir_with_a_symlink_to_its_parent_checks_each_file_once() {
    let outer = scratch("validate-link-to-parent");
    write(&outer, "outside.jsonl", good_session());
    let root = outer.join("root");
    std::fs::create_dir(&root).unwrap();
    write(&root, "a.jsonl", good_session());
    std::os::unix::fs::symlink("..", root.join("up")).unwrap();

    let run = validate(&["--format", "json", s(&root)]);
    run.assert_code(0);
    assert_eq!(paths_of(&json(&run)), [s(&root.join("a.jsonl"))]);

    let run = validate(&["--follow", "--format", "json", s(&root)]);
    run.assert_code(0);
    let paths = paths_of(&json(&run));
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), paths.len(), "checked twice: {paths:?}");
    assert!(
        paths.iter().any(|p| p.ends_with("outside.jsonl")),
        "{paths:?}"
    );
    assert!(run.stderr.contains("not followed"), "{}", run.stderr);
}

/// Item 18: a link named `*.jsonl` to a regular session file is checked (under its name).
#[test]
fn validate_dir_checks_a_symlink_to_a_regular_session_file() {
    let dir = scratch("validate-file-link");
    let target = write(&dir, "real.txt", good_session());
    std::os::unix::fs::symlink(&target, dir.join("linked.jsonl")).unwrap();
    let run = validate(&["--format", "json", s(&dir)]);
    run.assert_code(0);
    assert_eq!(paths_of(&json(&run)), [s(&dir.join("linked.jsonl"))]);
}

/// Item 17: a directory with no session file was rc 0 — nothing was checked.
#[test]
fn validate_empty_dir_exits_1_with_a_message() {
    let dir = scratch("validate-empty-dir");
    write(&dir, "notes.txt", "x");
    let run = validate(&[s(&dir)]);
    run.assert_code(1);
    assert!(run.stderr.contains("no session files"), "{}", run.stderr);
    let run = validate(&["--format", "json", s(&dir)]);
    run.assert_code(1);
    assert_eq!(json(&run)["summary"]["files"], 0);
}

/// Item 17: `validate - -` read standard input for the first `-` and found it empty for the
/// second. Standard input can be read once: a usage error, before reading anything.
#[test]
fn validate_stdin_twice_is_a_usage_error_before_reading() {
    let mut command = bin();
    command.args(["validate", "-", "-"]);
    // Standard input never ends: reading it would hang until the timeout.
    command.stdin(std::process::Stdio::piped());
    let child_run = {
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        drop(stdin);
        (status, child.wait_with_output().unwrap())
    };
    let (status, output) = child_run;
    let status = status.expect("`validate - -` waited for standard input");
    assert_eq!(status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("only once"));
}

/// A line whose `content` holds a value nested `depth` levels deep, with a schema
/// violation near the top (`text` is a number).
fn deep_line(depth: usize) -> String {
    format!(
        "{{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"timestamp\":1,\"content\":[{{\"type\":\"text\",\"text\":5,\"deep\":{}1{}}}]}}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// Item 16: a line nested deeper than serde_json's limit skipped every schema check, so a
/// file with a wrong field passed `--strict`. Now the line is checked above the limit (the
/// wrong `text` is found) and the nesting itself is an error (PS0010): never a false pass.
#[test]
fn validate_line_nested_200_and_10000_levels_deep_is_checked_and_never_passes_strict() {
    let dir = scratch("validate-deep");
    for depth in [200, 10_000] {
        let path = write(
            &dir,
            &format!("deep-{depth}.jsonl"),
            format!("{HEADER}{}", deep_line(depth)),
        );
        let run = validate(&["--strict", "--format", "json", s(&path)]);
        run.assert_code(1);
        let report = json(&run);
        let codes = codes_of(&report);
        assert!(codes.contains(&"PS0010".to_string()), "{depth}: {codes:?}");
        let pointers: Vec<&str> = report["files"][0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["pointer"].as_str())
            .collect();
        assert!(
            pointers.iter().any(|p| p.starts_with("/message/content")),
            "{depth}: the wrong field above the limit is not reported: {pointers:?}"
        );
        // --schema-only cannot vouch for it either.
        validate(&["--schema-only", s(&path)]).assert_code(1);
    }
}

/// Item 22: a role holding an ESC byte (`\u001b` in the JSON) reached the terminal raw in
/// `-q` and `github` output. Every format escapes it.
#[test]
fn validate_role_with_an_escape_byte_never_prints_it_raw() {
    let dir = scratch("validate-esc-role");
    let line = entry("a1b2c3d4", None).replace("\"role\":\"user\"", "\"role\":\"us\\u001b[31mer\"");
    let path = write(&dir, "s.jsonl", format!("{HEADER}{line}"));
    for args in [
        vec!["-q"],
        vec!["--format", "github"],
        vec!["--format", "human"],
        vec!["--format", "json"],
        vec!["--format", "sarif"],
    ] {
        let mut all = args.clone();
        all.push(s(&path));
        let run = validate(&all);
        assert!(
            !run.stdout.contains(&0x1b),
            "{args:?}: {}",
            run.stdout_text()
        );
        assert!(
            !run.stderr.as_bytes().contains(&0x1b),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stdout_text().contains("PS0206"),
            "{args:?}: {}",
            run.stdout_text()
        );
    }
}

/// Item 22: a 10 MB id was printed whole (in messages and `entryId`). Now every format's
/// output stays small.
#[test]
fn validate_entry_with_a_10_mb_id_prints_it_cut_with_a_count() {
    let dir = scratch("validate-10mb-id");
    let id = "x".repeat(10 << 20);
    let path = write(&dir, "s.jsonl", format!("{HEADER}{}", entry(&id, None)));
    for args in [
        vec!["-q"],
        vec!["--format", "github"],
        vec!["--format", "human"],
        vec!["--format", "json"],
        vec!["--format", "sarif"],
    ] {
        let mut all = args.clone();
        all.push(s(&path));
        let run = validate(&all);
        assert!(
            run.stdout_len < 64 << 10,
            "{args:?}: {} bytes of output",
            run.stdout_len
        );
        assert!(
            run.stdout_text().contains("bytes)"),
            "{args:?}: no count of what was cut"
        );
    }
}

/// A session of `n` lines of `line` after the header.
fn repeated(dir: &Path, name: &str, line: &str, n: usize) -> PathBuf {
    let mut text = String::with_capacity(HEADER.len() + line.len() * n);
    text.push_str(HEADER);
    for _ in 0..n {
        text.push_str(line);
    }
    write(dir, name, text)
}

/// Items 4 and 22: `n` broken lines in every format: bounded output and memory, the counts
/// honest (the summary counts every line), rc 1.
fn many_broken_lines(test: &str, line: &str, n: usize, max_rss_mib: u64) {
    let dir = scratch(test);
    let path = repeated(&dir, "s.jsonl", line, n);
    for args in [
        vec!["--format", "human"],
        vec!["-q"],
        vec!["--format", "github"],
        vec!["--format", "json"],
        vec!["--format", "sarif"],
    ] {
        let mut all = vec!["validate"];
        all.extend_from_slice(&args);
        all.push(s(&path));
        let run = run(&all, LONG);
        run.assert_code(1);
        assert!(
            run.stdout_len < 1 << 20,
            "{args:?}: {} bytes of output for {n} lines",
            run.stdout_len
        );
        assert!(
            run.max_rss_kib < max_rss_mib << 10,
            "{args:?}: {} MiB resident for {n} lines",
            run.max_rss_kib >> 10
        );
        if args == ["--format", "json"] {
            let report = json(&run);
            let summary = &report["summary"];
            let total = summary["errors"].as_u64().unwrap()
                + summary["warnings"].as_u64().unwrap()
                + summary["infos"].as_u64().unwrap();
            assert!(total >= n as u64, "{args:?}: only {total} problems counted");
            let omitted: u64 = report["files"][0]["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|d| d["omitted"].as_u64())
                .sum();
            assert!(omitted > 0, "no summary of the omitted diagnostics");
        }
        eprintln!(
            "{test} {args:?}: {:.2} s, {} MiB, {} bytes",
            run.elapsed.as_secs_f64(),
            run.max_rss_kib >> 10,
            run.stdout_len
        );
    }
}

/// Item 4: 20,000 invalid lines (the default run; a million in the ignored one).
#[test]
fn validate_20000_invalid_lines_keeps_output_and_memory_bounded_in_every_format() {
    many_broken_lines("validate-20k-invalid", "{x\n", 20_000, 200);
}

/// Item 22: 20,000 `null` lines (a million made 93 MB of warnings).
#[test]
fn validate_20000_null_lines_keeps_output_bounded() {
    many_broken_lines("validate-20k-null", "null\n", 20_000, 200);
}

/// Item 4: `--format sarif` on 1,000,000 invalid lines took 11 GB and 47 s.
#[test]
#[ignore = "long: a million lines in every format"]
fn validate_1000000_invalid_lines_keeps_output_and_memory_bounded_in_every_format() {
    many_broken_lines("validate-1m-invalid", "{x\n", 1_000_000, 200);
}

/// Item 22: 1,000,000 `null` lines made 93 MB of warnings.
#[test]
#[ignore = "long: a million lines in every format"]
fn validate_1000000_null_lines_keeps_output_bounded() {
    many_broken_lines("validate-1m-null", "null\n", 1_000_000, 400);
}

/// Item 23: names that are not UTF-8 were shown as `bad�name` (SARIF `%EF%BF%BD`), and a
/// newline in a name broke `-q`'s one line per problem.
#[test]
fn validate_files_named_with_invalid_utf8_and_newlines_shows_them_escaped() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("validate-hostile-names");
    let broken = format!("{HEADER}{{x\n");
    let bad = dir.join(OsStr::from_bytes(b"bad\xffname.jsonl"));
    std::fs::write(&bad, &broken).unwrap();
    let newline = dir.join("a\nb.jsonl");
    std::fs::write(&newline, &broken).unwrap();

    let run = validate(&["-q", s(&dir)]);
    run.assert_code(1);
    let text = run.stdout_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one line per problem: {text:?}");
    assert!(
        lines.iter().any(|l| l.contains("a\\nb.jsonl:2:")),
        "{text:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("bad\\xffname.jsonl:2:")),
        "{text:?}"
    );
    assert!(!text.contains('\u{FFFD}'), "{text:?}");

    let mut command = bin();
    command
        .current_dir(&dir)
        .args(["validate", "--format", "sarif", "."]);
    let run = run_limited(command, None, SHORT);
    let sarif: Value = serde_json::from_slice(&run.stdout).unwrap();
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains(&"bad%FFname.jsonl"), "{uris:?}");
    assert!(uris.contains(&"a%0Ab.jsonl"), "{uris:?}");
}

/// Item 24: on a line with invalid UTF-8, the other diagnostics pointed at column 1 and
/// covered the whole line. Now they point at their value.
#[test]
fn validate_line_with_invalid_utf8_points_other_diagnostics_at_their_column() {
    let dir = scratch("validate-utf8-column");
    // The \xff makes the line lossy; the id is not pi's format (PS0202-like), after it.
    let line = b"{\"type\":\"message\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"\xff\",\"timestamp\":1},\"id\":\"NOT-HEX\"}\n";
    let mut bytes = HEADER.as_bytes().to_vec();
    bytes.extend_from_slice(line);
    let path = write(&dir, "s.jsonl", &bytes);
    let run = validate(&["--format", "json", s(&path)]);
    let report = json(&run);
    let diagnostics = report["files"][0]["diagnostics"].as_array().unwrap();
    let id = diagnostics
        .iter()
        .find(|d| d["pointer"] == "/id")
        .unwrap_or_else(|| panic!("no diagnostic at /id: {diagnostics:?}"));
    let raw_at = HEADER.len() + line.windows(9).position(|w| w == b"\"NOT-HEX\"").unwrap();
    let text = String::from_utf8_lossy(line);
    let column = text[..text.find("\"NOT-HEX\"").unwrap()].chars().count() + 1;
    assert_eq!(id["location"]["offset"], raw_at);
    assert_eq!(id["location"]["length"], 9);
    assert_eq!(id["location"]["column"], column);
}

/// Issue 25, item 2: a 22 MB line of 800,000 tiny content blocks took 662 MB to validate
/// (48 times the line: a `serde_json::Value` takes about 770 bytes for such a block). A long
/// line's content is checked a piece at a time: peak memory within 10 times the line, and the
/// broken blocks in later pieces still found at their own index.
#[test]
#[ignore = "a 22 MB line of 800,000 blocks; run with --ignored in a release build"]
fn validate_a_line_of_800000_tiny_blocks_within_10_times_its_size() {
    let dir = scratch("validate-tiny-blocks");
    let line = tiny_blocks_line(800_000, Some(700_001));
    let file = write(&dir, "s.jsonl", format!("{HEADER}{line}\n"));
    let run = run(&["validate", "--format", "json", s(&file)], LONG);
    // Pi-loadable (the default verdict), with one error.
    run.assert_code(0);
    let report = run.stdout_text();
    assert!(
        report.contains("\"pointer\": \"/message/content/700001/text\"")
            && report.contains("\"errors\": 1,"),
        "{}",
        &report[..report.len().min(2000)]
    );
    let bound_kib = (10 * line.len() as u64) >> 10;
    assert!(
        run.max_rss_kib < bound_kib,
        "{} KiB for a {}-byte line",
        run.max_rss_kib,
        line.len()
    );
}
