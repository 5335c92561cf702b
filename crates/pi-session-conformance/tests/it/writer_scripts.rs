//! Our `SessionWriter`, run over every scenario of the writer corpus (`conformance/writers/`)
//! by the script runner, writes exactly the bytes pi wrote, for every profile the scenario
//! lists — and no file where pi wrote none.

use pi_session_conformance::script::{self, Hooks};
use pi_session_conformance::writers::{self, Expected};
use pi_session_format::write::WriteProfile;
use std::path::Path;

#[test]
fn our_writer_writes_what_pi_wrote_for_every_scenario() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/writers");
    let mut checked = 0;
    let mut failures = Vec::new();
    for scenario in std::fs::read_dir(&corpus).unwrap().flatten() {
        let dir = scenario.path();
        let Ok(script_text) = std::fs::read_to_string(dir.join("script.ndjson")) else {
            continue;
        };
        for profile in WriteProfile::ALL {
            let expected = dir.join(format!("expected/pi-{}.jsonl", profile.short_name()));
            let nothing = dir.join(format!("expected/pi-{}.none", profile.short_name()));
            if !expected.is_file() && !nothing.is_file() {
                continue;
            }
            let name = format!("{} (pi {profile})", dir.display());
            let outcome = match script::run(&script_text, profile, &script::scratch()) {
                Ok(outcome) => outcome,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            match (outcome.file, expected.is_file()) {
                (Some(file), true) => {
                    let want = std::fs::read(&expected).unwrap();
                    let diff = pi_session_conformance::diff::describe(&want, &file);
                    let divergent = std::fs::read_to_string(dir.join("case.json"))
                        .unwrap()
                        .contains(&format!("\"{}\":", profile.short_name()))
                        && writers::load_scenarios(&corpus)
                            .unwrap()
                            .iter()
                            .any(|s| s.dir == dir && s.divergence(profile).is_some());
                    match (diff, divergent) {
                        (None, false) => {}
                        (Some(diff), false) => failures.push(format!("{name}:\n{diff}")),
                        (None, true) => failures.push(format!(
                            "{name}: listed as a deliberate divergence, but writes pi's bytes"
                        )),
                        (Some(_), true) => {
                            let judged = writers::judge(
                                &Expected::File(want),
                                Some(&file),
                                profile,
                                &script_text,
                            );
                            if let Err(why) = judged.valid {
                                failures
                                    .push(format!("{name}: a divergence that is not valid: {why}"));
                            }
                        }
                    }
                }
                (None, false) => {}
                (Some(_), false) => failures.push(format!("{name}: wrote a file, pi wrote none")),
                (None, true) => failures.push(format!("{name}: wrote no file, pi wrote one")),
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 14, "only {checked} scenario profiles checked");
}

/// Our writer without the script's ids and times (random ids, the system clock), a writer
/// without hooks: not pi's bytes, but pi's bytes up to ids and times, for every scenario and
/// profile but the deliberate divergences.
#[test]
fn a_writer_without_hooks_passes_the_renamed_level() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/writers");
    let mut checked = 0;
    let mut failures = Vec::new();
    for scenario in writers::load_scenarios(&corpus).unwrap() {
        for &profile in &scenario.profiles {
            if scenario.divergence(profile).is_some() {
                continue;
            }
            let name = format!("{} (pi {profile})", scenario.name);
            let expected = scenario.expected(profile).unwrap();
            let outcome =
                script::run_with(&scenario.script, profile, &script::scratch(), Hooks::None)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            let judged = writers::judge(
                &expected,
                outcome.file.as_deref(),
                profile,
                &scenario.script,
            );
            if let Err(why) = &judged.renamed {
                failures.push(format!("{name}: {why}"));
            }
            if matches!(expected, Expected::File(_)) {
                assert!(judged.exact.is_err(), "{name}: random ids, yet pi's bytes");
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 12, "only {checked} scenario profiles checked");
}
