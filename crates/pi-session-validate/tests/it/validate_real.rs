//! Every real session of the corpus (`conformance/cases/real/`) validates without errors,
//! except for the problems the files really have, listed here with the reason.

use pi_session_format::PiVersion;
use pi_session_validate::{Code, Options, Severity, validate};
use std::path::Path;

/// Real files with real problems: (case, the error codes it must report).
/// The sessions pi itself wrote (`recorded-*`, `badlogic-*`) must have none; the others are
/// hand-written fixtures of other projects, and some leave out fields pi always writes.
const KNOWN_PROBLEMS: &[(&str, &[Code])] = &[
    // Fixtures without `timestamp` on user messages and with a string `content` in a
    // toolResult (pi writes an array).
    (
        "dicklesworthstone-cross-agent-session-resumer-pi-agent",
        &[Code::MissingField, Code::WrongType],
    ),
    // Line 10 is deliberately broken JSON; assistant messages lack `api` and part of `usage`;
    // the compaction has only the v1 `firstKeptEntryIndex`.
    (
        "kenn-io-agentsview-session",
        &[Code::InvalidJson, Code::MissingField],
    ),
    // A deliberately corrupt line between valid ones.
    ("iml1s-resume-skills-corrupt-interior", &[Code::InvalidJson]),
    // Assistant messages without `api`, `stopReason` or `timestamp`.
    ("specstoryai-getspecstory-branching", &[Code::MissingField]),
    (
        "specstoryai-getspecstory-compaction-missing",
        &[Code::MissingField],
    ),
    (
        "specstoryai-getspecstory-full-format",
        &[Code::MissingField],
    ),
    (
        "specstoryai-getspecstory-multi-compaction",
        &[Code::MissingField],
    ),
    ("specstoryai-getspecstory-v1-legacy", &[Code::MissingField]),
];

#[test]
fn real_sessions_have_no_errors_but_their_known_problems() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases/real");
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in std::fs::read_dir(&dir).unwrap() {
        let case = case.unwrap().path();
        let file = case.join("session.jsonl");
        if !file.exists() {
            continue;
        }
        let name = case.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(&file).unwrap();
        // With the rules of both pi versions.
        let mut errors: Vec<Code> = [PiVersion::V0_73, PiVersion::V0_87]
            .into_iter()
            .flat_map(|pi| {
                let options = Options {
                    pi,
                    ..Options::default()
                };
                validate(&bytes, &options).diagnostics
            })
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.code)
            .collect();
        errors.sort();
        errors.dedup();
        let expected = KNOWN_PROBLEMS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[][..], |(_, codes)| codes);
        let mut expected = expected.to_vec();
        expected.sort();
        if errors != expected {
            failures.push(format!("{name}: errors {errors:?}, expected {expected:?}"));
        }
        checked += 1;
    }
    assert!(checked >= 29, "only {checked} real sessions found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
