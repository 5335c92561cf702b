//! The validator's corpus, `conformance/validate/`: one case per diagnostic code (and clean
//! files that must produce nothing), each with the report the validator must give
//! (`expected.json`) and what pi itself did with the file (`pi.json`, recorded by
//! `cargo xtask conformance validate-reference`).
//!
//! Checks: every report equals its `expected.json`; a case produces exactly the codes its
//! `case.json` lists; every code of the catalogue has a case; `valid-*` cases produce nothing;
//! the pi-loadable verdict agrees with what pi did.
//!
//! After a deliberate change, `cargo xtask bless validate` rewrites the `expected.json` files
//! (it runs this test with `PI_SESSION_BLESS` set); review the diff.

use pi_session_format::Dialect;
use pi_session_format::omp::Blobs;
use pi_session_validate::{Code, Options, PI_MAX_TEXT_UNITS, validate};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CaseMeta {
    description: String,
    codes: Vec<String>,
    #[serde(default)]
    pi: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    max_text_units: Option<usize>,
    #[serde(default)]
    schema_only: bool,
    /// `"omp"`: checked by oh-my-pi's rules (`--dialect omp`), with the case's `blobs/`
    /// directory, when it has one, as the blob store. Default: pi's.
    #[serde(default)]
    dialect: Option<String>,
}

impl CaseMeta {
    fn dialect(&self) -> Dialect {
        match self.dialect.as_deref() {
            None | Some("pi") => Dialect::Pi,
            Some("omp") => Dialect::Omp,
            Some(other) => panic!("unknown dialect {other}"),
        }
    }
}

/// What pi did with the file (`pi.json`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PiObserved {
    /// pi opened the file, built the context, and neither rewrote nor truncated the file,
    /// dropped a line, threw or hung.
    loadable: bool,
    /// What happened, in words.
    what: Vec<String>,
    /// pi resumed the conversation the file holds: its context is that of the file's last
    /// entry with a string id.
    resumes: bool,
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/validate")
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("conformance/validate exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn meta(dir: &Path) -> CaseMeta {
    let text = std::fs::read_to_string(dir.join("case.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: case.json: {e}", dir.display()))
}

fn run(dir: &Path, meta: &CaseMeta) -> pi_session_validate::Report {
    let bytes = std::fs::read(dir.join("session.jsonl")).unwrap();
    let path = meta.path.as_deref().map(Path::new);
    let blobs = Some(dir.join("blobs"))
        .filter(|d| meta.dialect() == Dialect::Omp && d.is_dir())
        .map(Blobs::new);
    let options = Options {
        // The corpus's default is 0.73.1, the documented format (not the tools' current pi).
        pi: meta
            .pi
            .as_deref()
            .unwrap_or("0.73")
            .parse()
            .expect("a pi version"),
        path,
        schema_only: meta.schema_only,
        max_text_units: meta.max_text_units.unwrap_or(PI_MAX_TEXT_UNITS),
        // What pi makes of each file, or for the `omp-*` cases oh-my-pi.
        dialect: meta.dialect(),
        blobs: blobs.as_ref(),
        release: None,
        read_at: None,
    };
    validate(&bytes, &options)
}

#[test]
fn reports_match_their_expected_files() {
    let bless = std::env::var_os("PI_SESSION_BLESS").is_some();
    let mut failures = Vec::new();
    for dir in cases() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let meta = meta(&dir);
        assert!(!meta.description.is_empty(), "{name}: empty description");
        let report = run(&dir, &meta);
        let actual = serde_json::to_string_pretty(&report).unwrap() + "\n";
        let expected_path = dir.join("expected.json");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{name}: report differs\n{}",
                diff(&expected, &actual)
            )),
            Err(_) => failures.push(format!("{name}: expected.json is missing")),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nAfter a deliberate change: `cargo xtask bless validate`, and review the diff.",
        failures.join("\n\n")
    );
}

#[test]
fn each_case_produces_exactly_its_codes() {
    let mut failures = Vec::new();
    for dir in cases() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let meta = meta(&dir);
        let declared: BTreeSet<String> = meta.codes.iter().cloned().collect();
        for code in &declared {
            assert!(Code::parse(code).is_some(), "{name}: unknown code {code}");
        }
        let produced: BTreeSet<String> = run(&dir, &meta)
            .diagnostics
            .iter()
            .map(|d| d.code.to_string())
            .collect();
        if declared != produced {
            failures.push(format!(
                "{name}: declares {declared:?}, produces {produced:?}"
            ));
        }
        if name.starts_with("valid-") && !declared.is_empty() {
            failures.push(format!("{name}: a valid-* case must declare no codes"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_code_has_a_case() {
    let covered: BTreeSet<String> = cases().iter().flat_map(|d| meta(d).codes).collect();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !covered.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a case in conformance/validate/: {missing:?}"
    );
}

#[test]
fn the_pi_loadable_verdict_agrees_with_pi() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in cases() {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let meta = meta(&dir);
        // The verdict of --schema-only and the lowered size limit are not pi's.
        if meta.schema_only || meta.max_text_units.is_some() {
            continue;
        }
        // Under oh-my-pi's rules the verdict says whether oh-my-pi resumes the file.
        let observed_by = if meta.dialect() == Dialect::Omp {
            "omp.json"
        } else {
            "pi.json"
        };
        let Ok(text) = std::fs::read_to_string(dir.join(observed_by)) else {
            failures.push(format!(
                "{name}: {observed_by} is missing (cargo xtask conformance validate-reference)"
            ));
            continue;
        };
        let observed: PiObserved = serde_json::from_str(&text).unwrap();
        let report = run(&dir, &meta);
        if report.verdict.pi_resumes != observed.resumes {
            failures.push(format!(
                "{name}: piResumes {} but pi {} the conversation the file holds",
                report.verdict.pi_resumes,
                if observed.resumes {
                    "resumed"
                } else {
                    "did not resume"
                }
            ));
        }
        if report.verdict.pi_loadable != observed.loadable {
            let ours: Vec<String> = report
                .pi_breaking()
                .map(|d| format!("{} ({:?})", d.code, d.pi))
                .collect();
            failures.push(format!(
                "{name}: pi-loadable {} but pi {}: {:?}; our breaking diagnostics: {ours:?}",
                report.verdict.pi_loadable,
                if observed.loadable {
                    "loaded it fine"
                } else {
                    "did not"
                },
                observed.what
            ));
        }
        checked += 1;
    }
    assert!(checked > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => {}
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("-{x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+{y}\n"));
                }
            }
        }
    }
    out
}
