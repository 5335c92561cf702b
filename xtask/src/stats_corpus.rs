//! pi's own usage numbers for the corpus, `conformance/stats/pi.json`: for every session of
//! `conformance/cases/` that pi reads without hanging (the `divergence/` cases are left out),
//! what `AgentSession.getSessionStats()` gives with each pinned pi (`pi-ref.mjs stats`), or
//! the error it throws. `cargo xtask bless stats` writes it; `cargo xtask conformance
//! check-stats` recomputes it with pi and fails on any difference. The test suite
//! (`crates/pi-session/tests/it/stats_cli.rs`) checks that `pi-session stats` reports the same
//! numbers for each session and pi.

use crate::cases_dir;
use crate::reference::{self, Request};
use crate::root;
use pi_session_conformance::corpus;
use serde_json::{Map, Value};

/// The pi versions whose numbers are recorded.
const PIS: [&str; 3] = ["0.73", "0.87", "1.5"];

/// Blesses (`write`) or checks `conformance/stats/pi.json`; see the module docs.
pub(crate) fn run(write: bool) -> Result<(), String> {
    let cases = corpus::load_cases(&cases_dir()).map_err(|e| e.to_string())?;
    let cases: Vec<_> = cases
        .iter()
        .filter(|c| c.meta.divergence.is_none())
        .collect();
    let paths: Vec<_> = cases.iter().map(|c| c.session_path()).collect();
    let requests: Vec<Request<'_>> = paths
        .iter()
        .flat_map(|path| {
            PIS.iter().map(move |pi| Request {
                dialect: "pi",
                blobs: None,
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
    for (case, answers) in cases.iter().zip(responses.chunks(PIS.len())) {
        let mut per_pi = Map::new();
        for (pi, answer) in PIS.iter().zip(answers) {
            let value = match answer {
                Ok(bytes) => serde_json::from_slice(bytes)
                    .map_err(|e| format!("{}: pi {pi}: {e}", case.id))?,
                // Paths in pi's messages are the checkout's: recorded from the root on.
                Err(error) => serde_json::json!({ "error": error.replace(&root_text, ".") }),
            };
            per_pi.insert((*pi).to_owned(), value);
        }
        recorded.insert(case.id.clone(), Value::Object(per_pi));
    }
    let text =
        serde_json::to_string_pretty(&Value::Object(recorded)).map_err(|e| e.to_string())? + "\n";
    let path = root().join("conformance/stats/pi.json");
    if write {
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        return Err(format!(
            "{} differs from what pi computes now: run `cargo xtask bless stats` and review the diff",
            path.display()
        ));
    }
    eprintln!(
        "conformance/stats: {} sessions, pi {} {}",
        cases.len(),
        PIS.join(", "),
        if write { "(written)" } else { "as recorded" }
    );
    Ok(())
}
