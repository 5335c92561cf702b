//! The files pi itself writes for the writer corpus's scenarios (`conformance/writers/*/expected/`,
//! written by `cargo xtask bless writers` from pi's own `SessionManager`) are what the validator
//! and the reader call well-formed: not one diagnostic with the rules of the pi that wrote them
//! (but the note that a second root is normal after branching at the first message), and loaded with every line an entry, nothing dropped or skipped, nothing to
//! rewrite — except where a scenario's `case.json` lists a deliberate divergence of our writer
//! (pi 0.73.1's branched sessions orphan entries, pi#5669): there the validator must report
//! exactly those orphans (PS0212, PS0216).

use pi_session_format::{PiVersion, Session};
use pi_session_validate::{Options, validate};
use std::path::Path;

#[test]
fn files_pi_writes_are_strict_valid_and_load_whole() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/writers");
    let mut checked = 0;
    for scenario in std::fs::read_dir(&corpus).unwrap().flatten() {
        let Ok(files) = std::fs::read_dir(scenario.path().join("expected")) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(profile) = name
                .strip_prefix("pi-")
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            let pi: PiVersion = profile.parse().expect("a pi version");
            let bytes = std::fs::read(file.path()).unwrap();
            let where_ = file.path().display().to_string();
            let report = validate(
                &bytes,
                &Options {
                    pi,
                    ..Options::default()
                },
            );
            // Where pi writes a broken file, the scenario says so (`divergences`: our writer
            // differs there on purpose): the validator must see exactly the orphans pi leaves.
            let case = std::fs::read_to_string(scenario.path().join("case.json")).unwrap();
            let case: serde_json::Value = serde_json::from_str(&case).unwrap();
            if case["divergences"][profile].is_string() {
                let codes: Vec<String> = report
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == pi_session_validate::Severity::Error)
                    .map(|d| d.code.to_string())
                    .collect();
                assert!(!codes.is_empty(), "{where_}: pi's orphans are not reported");
                assert!(
                    codes.iter().all(|c| c == "PS0212" || c == "PS0216"),
                    "{where_}: {codes:?}"
                );
                checked += 1;
                continue;
            }
            // No error and no warning: one on what pi itself writes (PS0218 on 0.87.1's
            // fromId was one) is a false one. The only note allowed is the one that says the
            // file is normal: a second root after branching at the first message (PS0215).
            let unexpected: Vec<_> = report
                .diagnostics
                .iter()
                .filter(|d| d.code != pi_session_validate::Code::ExtraRoot)
                .collect();
            assert!(unexpected.is_empty(), "{where_}: {unexpected:?}");
            assert!(report.verdict.strict && report.verdict.pi_loadable);
            let session = Session::from_bytes(&bytes, pi).unwrap();
            let lines = bytes.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(session.entries.len() + 1, lines, "{where_}");
            assert!(
                session.dropped.is_empty() && session.skipped.is_empty(),
                "{where_}"
            );
            assert!(!session.version.rewrite, "{where_}");
            assert!(
                session.entries().all(|e| e.is_ok()),
                "{where_}: typed entries"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} files");
}
