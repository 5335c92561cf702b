//! The repair corpus, `conformance/repair/`: one case per repair, each a file pi broke
//! (`input.jsonl`, placed at `case.json`'s `path` when the repair needs pi's file name) with
//! the repair's `options`. `cargo xtask bless repair` writes what `pi_session_validate::repair`
//! makes of it (`expected.jsonl`, `plan.json`: each fix's code, line and action, the rejected
//! bytes, what was left) and what each pinned pi builds from the repaired file
//! (`context-pi-<version>.json`, `buildSessionContext()`); `cargo xtask conformance
//! check-repair` recomputes the contexts with pi and fails on any difference. The test suite
//! (`crates/pi-session/tests/it/repair_cli.rs`) checks that `pi-session repair` gives the
//! expected file and plan and that `pi-session context` reads it as pi does.

use crate::reference::{self, Request};
use crate::root;
use pi_session_format::PiVersion;
use pi_session_validate::repair::{RepairOptions, repair};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The pi versions whose context of each repaired file is recorded.
const PIS: [&str; 3] = ["0.73", "0.87", "1.5"];

fn cases() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("conformance/repair");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.jsonl").is_file())
        .collect();
    out.sort();
    Ok(out)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The plan as the corpus records it: what was done where, not the wording.
fn plan_json(r: &pi_session_validate::repair::Repaired) -> Value {
    json!({
        "fixes": r.fixes.iter().map(|f| json!({"code": f.code, "line": f.line, "action": f.action})).collect::<Vec<_>>(),
        "rejects": r.rejects.iter().map(|j| json!({"line": j.line, "bytes": j.text.len()})).collect::<Vec<_>>(),
        "unrepaired": r.unrepaired.iter().map(|u| json!({"code": u.code, "line": u.line})).collect::<Vec<_>>(),
    })
}

/// Blesses (`write`) or checks the corpus; see the module docs.
pub(crate) fn run(write: bool) -> Result<(), String> {
    let work = std::env::temp_dir().join(format!("xtask-repair-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut requests_for = Vec::new();
    for case in cases()? {
        let meta = read_json(&case.join("case.json"))?;
        let name = case
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta["description"].as_str().is_none_or(str::is_empty) {
            return Err(format!("{}: case.json needs a description", case.display()));
        }
        let input = std::fs::read(case.join("input.jsonl")).map_err(|e| e.to_string())?;
        let placed = work
            .join(&name)
            .join(meta["path"].as_str().unwrap_or("input.jsonl"));
        if let Some(dir) = placed.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        // The corpus's repairs follow 0.73.1's reading rules (`--pi 0.73` in its test).
        let options = RepairOptions {
            pi: PiVersion::V0_73,
            path: Some(&placed),
            reattach: meta["options"]["reattach"].as_bool().unwrap_or(false),
            tool_calls: meta["options"]["toolCalls"].as_bool().unwrap_or(false),
            tool_results: meta["options"]["toolResults"].as_bool().unwrap_or(false),
            cwd: meta["options"]["cwd"].as_str().map(str::to_owned),
            ..RepairOptions::default()
        };
        let repaired = repair(&input, &options);
        if write {
            std::fs::write(case.join("expected.jsonl"), repaired.output())
                .map_err(|e| e.to_string())?;
            let plan =
                serde_json::to_string_pretty(&plan_json(&repaired)).map_err(|e| e.to_string())?;
            std::fs::write(case.join("plan.json"), plan + "\n").map_err(|e| e.to_string())?;
        }
        // pi reads the repaired file as the corpus has it.
        let expected = std::fs::read(case.join("expected.jsonl"))
            .map_err(|e| format!("{name}: {e} (run `cargo xtask bless repair`)"))?;
        std::fs::write(&placed, &expected).map_err(|e| e.to_string())?;
        requests_for.push((case.clone(), name, placed));
    }
    let requests: Vec<Request<'_>> = requests_for
        .iter()
        .flat_map(|(_, _, placed)| {
            PIS.iter().map(move |pi| Request {
                dialect: "pi",
                blobs: None,
                op: "context",
                file: placed,
                leaf: None,
                llm: false,
                pi,
            })
        })
        .collect();
    let responses = reference::batch(&requests)?;
    for ((case, name, _), answers) in requests_for.iter().zip(responses.chunks(PIS.len())) {
        for (pi, answer) in PIS.iter().zip(answers) {
            let got = answer
                .as_ref()
                .map_err(|e| format!("{name}: pi {pi} cannot read the repaired file: {e}"))?;
            let path = case.join(format!("context-pi-{pi}.json"));
            if write {
                std::fs::write(&path, got).map_err(|e| e.to_string())?;
            } else if std::fs::read(&path).ok().as_deref() != Some(got.as_slice()) {
                failures.push(format!(
                    "{name}: pi {pi}'s context of expected.jsonl differs from {}",
                    path.display()
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    eprintln!(
        "conformance/repair: {} cases, pi {} read every repaired file {}",
        requests_for.len(),
        PIS.join(", "),
        if write { "(written)" } else { "as recorded" }
    );
    Ok(())
}
