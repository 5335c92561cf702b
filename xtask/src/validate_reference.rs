//! `cargo xtask conformance validate-reference [--check]`: what the pinned pi does with each
//! case of `conformance/validate/` — drops lines, rewrites or overwrites the file, throws or
//! hangs — recorded in the case's `pi.json` by `conformance/reference/pi-load.mjs`; for the
//! cases checked by oh-my-pi's rules (`"dialect": "omp"`), whether oh-my-pi resumes the file,
//! in its `omp.json` (`omp-ref.ts context`).
//!
//! The validator's pi-loadable verdict is tested against these files
//! (`crates/pi-session-validate/tests/it/validate_corpus.rs`); `--check` recomputes them and fails
//! on any difference, so the evidence stays that of the pinned reference.

use crate::{reference, root};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the command: writes every `pi.json`, or with `--check` compares.
pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    let write = match args {
        [] => true,
        ["--check"] => false,
        _ => return Err("usage: cargo xtask conformance validate-reference [--check]".into()),
    };
    reference::ensure_installed()?;
    let mut by_pi: Vec<(String, Vec<PathBuf>)> = Vec::new();
    let mut omp = Vec::new();
    for dir in cases()? {
        let meta: Value = read_json(&dir.join("case.json"))?;
        // The lowered size limit and --schema-only are not pi's behaviour.
        if meta.get("schemaOnly").is_some() || meta.get("maxTextUnits").is_some() {
            continue;
        }
        // Checked by oh-my-pi's rules: what oh-my-pi does with the file.
        if meta.get("dialect").and_then(Value::as_str) == Some("omp") {
            omp.push(dir);
            continue;
        }
        let pi = meta
            .get("pi")
            .and_then(Value::as_str)
            .unwrap_or("0.73")
            .to_string();
        match by_pi.iter_mut().find(|(p, _)| *p == pi) {
            Some((_, dirs)) => dirs.push(dir),
            None => by_pi.push((pi, vec![dir])),
        }
    }
    let mut stale = Vec::new();
    let mut count = 0;
    for (pi, dirs) in &by_pi {
        let files: Vec<PathBuf> = dirs.iter().map(|d| d.join("session.jsonl")).collect();
        let output = Command::new("node")
            .arg(root().join("conformance/reference/pi-load.mjs"))
            .args(["--pi", pi])
            .args(&files)
            .output()
            .map_err(|e| format!("node pi-load.mjs: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "pi-load.mjs failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        if lines.len() != dirs.len() {
            return Err(format!(
                "pi-load.mjs answered {} of {} files",
                lines.len(),
                dirs.len()
            ));
        }
        for (dir, line) in dirs.iter().zip(lines) {
            let mut observed: Value =
                serde_json::from_str(line).map_err(|e| format!("pi-load.mjs output: {e}"))?;
            if let Some(object) = observed.as_object_mut() {
                object.remove("file");
                object.insert("pi".into(), Value::String(pi.clone()));
            }
            let text = serde_json::to_string_pretty(&observed).map_err(|e| e.to_string())? + "\n";
            let path = dir.join("pi.json");
            if write {
                std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(&text) {
                stale.push(format!("{}: pi now says {}", path.display(), text.trim()));
            }
            count += 1;
        }
    }
    count += record_omp(&omp, write, &mut stale)?;
    if !stale.is_empty() {
        return Err(format!(
            "{} pi.json files differ from the reference:\n{}\nregenerate with `cargo xtask conformance validate-reference` and review",
            stale.len(),
            stale.join("\n")
        ));
    }
    eprintln!(
        "xtask: {count} cases, pi.json {}",
        if write {
            "written"
        } else {
            "agree with the reference"
        }
    );
    Ok(())
}

/// What oh-my-pi does with each `--dialect omp` case, in its `omp.json`: whether it resumes
/// the file (`omp-ref.ts context`: opens it and builds the context, with the case's `blobs/`
/// as its blob store) or the error it throws, and whether it rewrites it on open
/// (`omp-ref.ts migrate` differs from the file: not loadable, as a file pi rewrites). Returns how many cases it recorded or checked.
fn record_omp(dirs: &[PathBuf], write: bool, stale: &mut Vec<String>) -> Result<usize, String> {
    let files: Vec<PathBuf> = dirs.iter().map(|d| d.join("session.jsonl")).collect();
    // Per case: the context omp builds, then the file as omp leaves it after opening it.
    let requests: Vec<reference::Request<'_>> = dirs
        .iter()
        .zip(&files)
        .flat_map(|(dir, file)| {
            ["context", "migrate"].map(|op| reference::Request {
                op,
                file,
                leaf: None,
                llm: false,
                pi: "0.87",
                dialect: "omp",
                blobs: Some(dir.join("blobs")).filter(|b| b.is_dir()),
            })
        })
        .collect();
    let mut answers = reference::batch(&requests)?.into_iter();
    let root_text = root().display().to_string();
    for (dir, file) in dirs.iter().zip(&files) {
        let (Some(answer), Some(left)) = (answers.next(), answers.next()) else {
            return Err("the reference answered fewer requests than it was given".into());
        };
        let input = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let rewritten = matches!(&left, Ok(bytes) if *bytes != input);
        let observed = match answer {
            // omp rewrites it on open: what its parser skipped is gone, as pi's dropped lines.
            Ok(_) if rewritten => serde_json::json!({
                "loadable": false,
                "resumes": true,
                "what": ["oh-my-pi opened the file, built the context of its last entry and rewrote the file"],
            }),
            // oh-my-pi resumes at the file's last entry: a file it opens is resumed.
            Ok(_) => serde_json::json!({
                "loadable": true,
                "resumes": true,
                "what": ["oh-my-pi opened the file and built the context of its last entry"],
            }),
            Err(e) => serde_json::json!({
                "loadable": false,
                "resumes": false,
                "what": [e.replace(&root_text, ".")],
            }),
        };
        let text = serde_json::to_string_pretty(&observed).map_err(|e| e.to_string())? + "\n";
        let path = dir.join("omp.json");
        if write {
            std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(&text) {
            stale.push(format!("{}: omp now says {}", path.display(), text.trim()));
        }
    }
    Ok(dirs.len())
}

/// The case directories of `conformance/validate/`, sorted.
pub(crate) fn cases() -> Result<Vec<PathBuf>, String> {
    let dir = root().join("conformance/validate");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("case.json").is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// A JSON file.
pub(crate) fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
