//! Adversarial cases: messages a person can act on — what the file commands say about
//! headers, missing leaves and hostile text (items 21, 22 and 25 of the reliability issue).

use super::common::*;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

/// Item 21: with `--pi 0.87`, an invalid header said "pi would truncate the file"; pi
/// 0.87.1 refuses to open such a file instead.
#[test]
fn pi_087_invalid_or_bom_header_says_pi_refuses_the_file_not_that_it_truncates_it() {
    let dir = scratch("header-087");
    let invalid = write(
        &dir,
        "invalid.jsonl",
        "{\"type\":\"message\",\"id\":\"a\"}\n",
    );
    let bom = write(
        &dir,
        "bom.jsonl",
        format!("\u{feff}{HEADER}{{\"type\":\"label\",\"id\":\"a\"}}\n"),
    );
    let garbage = write(&dir, "garbage.jsonl", "not json\n");
    for file in [&invalid, &bom, &garbage] {
        let run87 = run(&["context", s(file), "--pi", "0.87"], T);
        run87.assert_code(1);
        assert!(
            run87.stderr.contains("pi 0.87.1 refuses to open it"),
            "{}",
            run87.stderr
        );
        assert!(!run87.stderr.contains("truncate"), "{}", run87.stderr);
        assert!(!run87.stderr.contains("overwrite"), "{}", run87.stderr);
        let run73 = run(&["context", s(file), "--pi", "0.73"], T);
        // pi 0.73.1 reads the BOM file's second line as its header…
        if file != &bom {
            run73.assert_code(1);
            assert!(run73.stderr.contains("pi would"), "{}", run73.stderr);
        }
    }
    // An empty file is a new session for both.
    let empty = write(&dir, "empty.jsonl", "");
    let run87 = run(&["context", s(&empty), "--pi", "0.87"], T);
    assert!(
        run87.stderr.contains("new, empty session"),
        "{}",
        run87.stderr
    );
}

/// Item 22: a 10 MB `type` in the first line was echoed whole in the header error; an
/// escape character in it reached the terminal raw.
#[test]
fn a_huge_or_escape_laden_header_type_is_quoted_short_and_escaped() {
    let dir = scratch("huge-type");
    let huge = format!("\u{1b}[31m{}", "x".repeat(10 << 20));
    let file = write(
        &dir,
        "s.jsonl",
        format!(
            "{{\"type\":\"{}\",\"id\":\"a\"}}\n",
            huge.replace('\u{1b}', "\\u001b")
        ),
    );
    let run = run(&["context", s(&file)], T);
    run.assert_code(1);
    assert!(
        run.stderr.len() < 1000,
        "{} bytes of stderr",
        run.stderr.len()
    );
    assert!(
        !run.stderr.contains('\u{1b}'),
        "raw ESC in {:?}",
        run.stderr
    );
    assert!(run.stderr.contains("(+"), "{}", run.stderr);
}

/// Item 22: a parent cycle through 200,000 entries printed a 2.6 MB one-line error.
#[test]
fn a_cycle_through_every_entry_is_reported_in_one_short_line() {
    let dir = scratch("long-cycle");
    let n = 200_000;
    let mut text = String::from(HEADER);
    for i in 0..n {
        // Each entry's parent is the next one; the last one's parent is the first.
        let parent = (i + 1) % n;
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"e{i:07}\",\"parentId\":\"e{parent:07}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"m\",\"timestamp\":1}}}}\n"
        ));
    }
    let file = write(&dir, "s.jsonl", text);
    let run = run(&["context", s(&file)], T);
    run.assert_code(1);
    assert!(run.stderr.contains("parent cycle"), "{}", run.stderr);
    assert!(run.stderr.contains("more entries"), "{}", run.stderr);
    assert!(
        run.stderr.len() < 2000,
        "{} bytes of stderr",
        run.stderr.len()
    );
}

/// Item 25: `context --leaf MISSING` silently used the last entry (as pi does): the output
/// stays pi's, and stderr says what happened.
#[test]
fn context_with_a_missing_leaf_keeps_pis_output_and_warns() {
    let dir = scratch("missing-leaf");
    let file = write(
        &dir,
        "s.jsonl",
        format!(
            "{HEADER}{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}}}\n"
        ),
    );
    let plain = run(&["context", s(&file)], T);
    plain.assert_code(0);
    assert!(plain.stderr.is_empty(), "{}", plain.stderr);
    let missing = run(&["context", s(&file), "--leaf", "nope"], T);
    missing.assert_code(0);
    assert_eq!(missing.stdout, plain.stdout);
    assert!(
        missing
            .stderr
            .contains("--leaf \"nope\": no entry has this id"),
        "{}",
        missing.stderr
    );
    let found = run(&["context", s(&file), "--leaf", "a"], T);
    found.assert_code(0);
    assert!(found.stderr.is_empty(), "{}", found.stderr);
}
