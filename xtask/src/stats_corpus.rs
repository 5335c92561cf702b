//! The usage numbers of the corpus as pi and omp give them: `conformance/stats/pi.json`, for
//! every pi session of `conformance/cases/` that pi reads without hanging (the `divergence/`
//! cases are left out), what `AgentSession.getSessionStats()` gives with each pinned pi
//! (`pi-ref.mjs stats`), or the error it throws; `conformance/stats/omp.json`, the same of
//! omp 18.3.4 for every oh-my-pi session (`omp/`, `omp-ref.ts stats`). `cargo xtask bless
//! stats` writes them; `cargo xtask conformance check-stats` recomputes them with pi and omp
//! and fails on any difference. The test suite (`crates/pi-session/tests/it/stats_cli.rs`)
//! checks that `pi-session stats` reports the same numbers for each session and program.

use crate::cases_dir;
use crate::reference::{self, Request};
use crate::root;
use pi_session_conformance::corpus::{self, Case};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The pi versions whose numbers are recorded.
const PIS: [&str; 3] = ["0.73", "0.87", "1.5"];

/// Blesses (`write`) or checks `conformance/stats/pi.json` and `omp.json`; see the module
/// docs.
pub(crate) fn run(write: bool) -> Result<(), String> {
    let cases = corpus::load_cases(&cases_dir()).map_err(|e| e.to_string())?;
    let cases: Vec<&Case> = cases
        .iter()
        .filter(|c| c.meta.divergence.is_none())
        .collect();
    let (omp, pi): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| c.dialect() == "omp");
    record(&pi, "pi", &PIS, write)?;
    record(&omp, "omp", &["18.3"], write)?;
    Ok(())
}

/// The stats of `cases` from `dialect`'s reference, once per version of `versions`, written
/// to or checked against `conformance/stats/<dialect>.json`.
fn record(cases: &[&Case], dialect: &str, versions: &[&str], write: bool) -> Result<(), String> {
    let paths: Vec<PathBuf> = cases.iter().map(|c| c.session_path()).collect();
    let requests: Vec<Request<'_>> = cases
        .iter()
        .zip(&paths)
        .flat_map(|(case, path)| {
            versions.iter().map(move |pi| Request {
                dialect,
                blobs: case.blobs_dir(),
                op: "stats",
                file: path,
                leaf: None,
                llm: false,
                pi,
            })
        })
        .collect();
    let responses = reference::batch(&requests)?;
    let root_text = root().display().to_string();
    let mut recorded = Map::new();
    for (case, answers) in cases.iter().zip(responses.chunks(versions.len())) {
        let mut per_version = Map::new();
        for (version, answer) in versions.iter().zip(answers) {
            let value = match answer {
                Ok(bytes) => serde_json::from_slice(bytes)
                    .map_err(|e| format!("{}: {dialect} {version}: {e}", case.id))?,
                // Paths in the messages are the checkout's: recorded from the root on.
                Err(error) => serde_json::json!({ "error": error.replace(&root_text, ".") }),
            };
            per_version.insert((*version).to_owned(), value);
        }
        recorded.insert(case.id.clone(), Value::Object(per_version));
    }
    let text =
        serde_json::to_string_pretty(&Value::Object(recorded)).map_err(|e| e.to_string())? + "\n";
    let path = root().join(format!("conformance/stats/{dialect}.json"));
    if write {
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        return Err(format!(
            "{} differs from what {dialect} computes now: run `cargo xtask bless stats` and review the diff",
            path.display()
        ));
    }
    eprintln!(
        "conformance/stats: {} sessions, {dialect} {} {}",
        cases.len(),
        versions.join(", "),
        if write { "(written)" } else { "as recorded" }
    );
    Ok(())
}
