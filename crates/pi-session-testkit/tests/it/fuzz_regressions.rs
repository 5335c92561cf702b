//! Replays every input the fuzzers ever found: `fuzz/regressions/<target>/<name>` through the
//! target's check (the function `fuzz/fuzz_targets/<target>.rs` calls).
//!
//! Each input has a note, `<name>.md`, on its root cause. A note whose first line is
//! `status: open` records a library bug not fixed yet: its input must still fail, and the test
//! says so once it no longer does (then set `status: fixed`). Every other input must pass.

use pi_session_testkit::fuzzing;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

fn check(target: &str) -> fn(&[u8]) {
    match target {
        "parse_bytes" => fuzzing::parse_bytes,
        "roundtrip" => fuzzing::roundtrip,
        "streaming_eq_whole" => fuzzing::streaming_eq_whole,
        "migrate" => fuzzing::migrate,
        "context" => fuzzing::context,
        "to_llm" => fuzzing::to_llm,
        "info" => fuzzing::info,
        "validate" => fuzzing::validate,
        "tree" => fuzzing::tree,
        "writer" => fuzzing::writer,
        "repair" => fuzzing::repair,
        "export" => fuzzing::export,
        "search" => fuzzing::search,
        "append" => fuzzing::append,
        "redact" => fuzzing::redact,
        other => panic!("fuzz/regressions/{other}: no such target"),
    }
}

#[test]
fn every_saved_crash_is_replayed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let mut failures = Vec::new();
    let mut count = 0;
    let mut targets: Vec<_> = std::fs::read_dir(&dir)
        .expect("fuzz/regressions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    targets.sort();
    for target_dir in targets {
        let target = target_dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let check = check(&target);
        let mut inputs: Vec<_> = std::fs::read_dir(&target_dir)
            .expect("target directory")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_none_or(|e| e != "md"))
            .collect();
        inputs.sort();
        for input in inputs {
            let name = format!(
                "{target}/{}",
                input.file_name().unwrap_or_default().to_string_lossy()
            );
            let note = input.with_file_name(format!(
                "{}.md",
                input.file_name().unwrap_or_default().to_string_lossy()
            ));
            let note = std::fs::read_to_string(&note)
                .unwrap_or_else(|_| panic!("{name}: no note {}", note.display()));
            let open = note
                .lines()
                .next()
                .is_some_and(|l| l.trim() == "status: open");
            let bytes = std::fs::read(&input).expect("input");
            let failed = catch_unwind(AssertUnwindSafe(|| check(&bytes))).is_err();
            count += 1;
            match (open, failed) {
                (false, true) => failures.push(format!("{name}: fails again")),
                (true, false) => failures.push(format!(
                    "{name}: passes now; set `status: fixed` in its note"
                )),
                _ => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{count} inputs replayed:\n{}",
        failures.join("\n")
    );
}
