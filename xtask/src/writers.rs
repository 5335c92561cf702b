//! The writer corpus, `conformance/writers/`: each scenario's expected files are what pi's own
//! `SessionManager` writes when `conformance/reference/pi-write.mjs` runs the scenario's script,
//! once per profile (pi version) the scenario lists. `cargo xtask bless writers` writes them;
//! `cargo xtask conformance check-writers` recomputes them and fails on any difference.
//!
//! A scenario is a directory with `script.ndjson` (the operations, with the ids and times to use)
//! and `case.json` (`description`, `profiles`); `expected/pi-<profile>.jsonl` is the file pi
//! wrote, or `expected/pi-<profile>.none` when pi wrote none (no conversation yet).

use crate::reference;
use crate::root;
use pi_session_conformance::diff::describe;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What pi did with a scenario for one profile.
#[derive(PartialEq, Eq)]
enum Written {
    File(Vec<u8>),
    Nothing,
}

const NOTHING: &[u8] = b"pi writes no file for this scenario\n";

fn scenarios() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("conformance/writers");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("script.ndjson").is_file())
        .collect();
    out.sort();
    Ok(out)
}

fn profiles(scenario: &Path) -> Result<Vec<String>, String> {
    let path = scenario.join("case.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let meta: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let described = meta["description"].as_str().is_some_and(|d| !d.is_empty());
    let profiles: Option<Vec<String>> = meta["profiles"].as_array().map(|a| {
        a.iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect()
    });
    match (described, profiles) {
        (true, Some(p)) if !p.is_empty() => Ok(p),
        _ => Err(format!(
            "{}: needs a description and a non-empty list of profiles",
            path.display()
        )),
    }
}

/// Runs the scenario through pi `profile`.
fn run_pi(scenario: &Path, profile: &str) -> Result<Written, String> {
    let out = std::env::temp_dir().join(format!("xtask-writers-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let result = Command::new("node")
        .arg(root().join("conformance/reference/pi-write.mjs"))
        .args(["--pi", profile])
        .arg(scenario.join("script.ndjson"))
        .arg(&out)
        .env("TZ", "UTC")
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    let written = if !result.status.success() {
        Err(format!(
            "{} (pi {profile}): {}{}",
            scenario.display(),
            String::from_utf8_lossy(&result.stdout).trim(),
            String::from_utf8_lossy(&result.stderr).trim()
        ))
    } else if out.is_file() {
        std::fs::read(&out)
            .map(Written::File)
            .map_err(|e| e.to_string())
    } else {
        Ok(Written::Nothing)
    };
    let _ = std::fs::remove_file(&out);
    written
}

fn expected_path(scenario: &Path, profile: &str, written: &Written) -> PathBuf {
    let ext = match written {
        Written::File(_) => "jsonl",
        Written::Nothing => "none",
    };
    scenario
        .join("expected")
        .join(format!("pi-{profile}.{ext}"))
}

fn read_expected(scenario: &Path, profile: &str) -> Option<Written> {
    let dir = scenario.join("expected");
    if let Ok(bytes) = std::fs::read(dir.join(format!("pi-{profile}.jsonl"))) {
        return Some(Written::File(bytes));
    }
    dir.join(format!("pi-{profile}.none"))
        .is_file()
        .then_some(Written::Nothing)
}

/// `bless writers` (`write`) or `check-writers`.
pub(crate) fn run(write: bool) -> Result<(), String> {
    reference::ensure_installed()?;
    let mut problems = Vec::new();
    let mut checked = 0;
    for scenario in scenarios()? {
        let name = scenario
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let profiles = profiles(&scenario)?;
        if write {
            let _ = std::fs::remove_dir_all(scenario.join("expected"));
            std::fs::create_dir_all(scenario.join("expected")).map_err(|e| e.to_string())?;
        }
        for profile in &profiles {
            let written = run_pi(&scenario, profile)?;
            checked += 1;
            if write {
                let bytes = match &written {
                    Written::File(bytes) => &bytes[..],
                    Written::Nothing => NOTHING,
                };
                std::fs::write(expected_path(&scenario, profile, &written), bytes)
                    .map_err(|e| e.to_string())?;
            } else {
                let bytes = |w: &Written| match w {
                    Written::File(bytes) => bytes.clone(),
                    Written::Nothing => NOTHING.to_vec(),
                };
                let expected = read_expected(&scenario, profile);
                let how = match &expected {
                    None => Some("no expected file".to_string()),
                    Some(e) => describe(&bytes(e), &bytes(&written)),
                };
                if let Some(how) = how {
                    problems.push(format!(
                        "{name} (pi {profile}): expected/ differs from what pi writes now: {how}"
                    ));
                }
            }
        }
        // Every expected file belongs to a listed profile.
        for entry in std::fs::read_dir(scenario.join("expected"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let file = entry.file_name().to_string_lossy().into_owned();
            let known = profiles
                .iter()
                .any(|p| file == format!("pi-{p}.jsonl") || file == format!("pi-{p}.none"));
            if !known {
                problems.push(format!(
                    "{name}: expected/{file} belongs to no listed profile"
                ));
            }
        }
    }
    if problems.is_empty() {
        let verb = if write { "wrote" } else { "checked" };
        eprintln!("writer corpus: {verb} {checked} expected files");
        Ok(())
    } else {
        Err(format!(
            "{}\nregenerate with `cargo xtask bless writers` and review the diff",
            problems.join("\n")
        ))
    }
}
