//! `cargo xtask conformance check-export`: `pi-session export --format jsonl` against pi's own
//! JSONL export (`serializeSessionBranch`, behind `/export FILE.jsonl`) of pi 0.87.1 and
//! 1.5.2, live, for every session of `conformance/cases/` that pi reads without hanging (the
//! `divergence/` cases are left out) and the export fixture's two branches.
//!
//! The header's `timestamp` is the time of the export and is not compared. A file pi migrates
//! (v1, v2) gets new entry ids, random in `pi-session` and counted up in the reference, so
//! those exports are compared with each id named by the order it first appears in.
//!
//! pi reads every file as its own, so `pi-session` is run with `--dialect pi`: an oh-my-pi
//! file pi can export (one whose title slot a BOM hides from pi 0.87.1) is exported as pi
//! exports it, where its own dialect would be refused (`--format jsonl` is pi's export).

use crate::cases_dir;
use crate::reference::{self, Request};
use crate::root;
use pi_session_conformance::corpus;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

/// The pi versions that have a JSONL export in their session manager.
const PIS: [&str; 2] = ["0.87", "1.5"];

/// Runs the check; see the module docs.
pub(crate) fn run() -> Result<(), String> {
    let cases = corpus::load_cases(&cases_dir()).map_err(|e| e.to_string())?;
    let mut sessions: Vec<(String, PathBuf, Option<&str>)> = cases
        .iter()
        .filter(|c| c.meta.divergence.is_none())
        .map(|c| (c.id.clone(), c.session_path(), None))
        .collect();
    let fixture = root().join("crates/pi-session/tests/fixtures/export/hostile.jsonl");
    sessions.push(("fixture hostile".into(), fixture.clone(), None));
    sessions.push(("fixture hostile --leaf a3".into(), fixture, Some("a3")));
    let requests: Vec<Request<'_>> = sessions
        .iter()
        .flat_map(|(_, path, leaf)| {
            PIS.iter().map(move |pi| Request {
                dialect: "pi",
                blobs: None,
                op: "export",
                file: path,
                leaf: *leaf,
                llm: false,
                pi,
            })
        })
        .collect();
    let responses = reference::batch(&requests)?;
    let bin = root().join("target/debug/pi-session");
    let mut mismatches = Vec::new();
    let (mut same, mut refused) = (0, 0);
    for (request, (expected, name)) in requests.iter().zip(
        responses
            .iter()
            .zip(sessions.iter().flat_map(|s| PIS.map(|_| &s.0))),
    ) {
        let mut command = Command::new(&bin);
        command
            .args([
                "export",
                "--format",
                "jsonl",
                "--dialect",
                "pi",
                "--pi",
                request.pi,
            ])
            .arg(request.file);
        if let Some(leaf) = request.leaf {
            command.args(["--leaf", leaf]);
        }
        let ours = command
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let ours = if ours.status.success() {
            Ok(ours.stdout)
        } else {
            Err(String::from_utf8_lossy(&ours.stderr).into_owned())
        };
        match (expected, &ours) {
            (Ok(pi), Ok(ours)) if alike(pi, ours, migrated(request.file)) => same += 1,
            (Err(_), Err(_)) => refused += 1,
            (pi, ours) => mismatches.push(format!(
                "{name} (pi {}):\n  pi:   {}\n  ours: {}",
                request.pi,
                shown(pi),
                shown(ours)
            )),
        }
    }
    eprintln!(
        "check-export: {} exports ({} sessions × pi {}): {same} alike, {refused} refused by both, {} different",
        requests.len(),
        sessions.len(),
        PIS.join(", "),
        mismatches.len()
    );
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(mismatches.join("\n"))
    }
}

fn shown(output: &Result<Vec<u8>, String>) -> String {
    match output {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            let cut: String = text.chars().take(300).collect();
            format!("{cut}…")
        }
        Err(error) => format!("error: {}", error.trim()),
    }
}

/// Whether pi migrates the file: its first line is not a version 3 header.
fn migrated(file: &std::path::Path) -> bool {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let header: Option<Value> = text
        .lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok());
    header.as_ref().and_then(|h| h.get("version")) != Some(&Value::from(3))
}

/// The same export: the header alike but for its timestamp, the entries byte for byte; for
/// a `migrated` file, the entries compared with their ids named by the order they first
/// appear in.
fn alike(pi: &[u8], ours: &[u8], migrated: bool) -> bool {
    let split = |bytes: &[u8]| -> Option<(Value, Vec<u8>)> {
        let end = bytes.iter().position(|&b| b == b'\n')?;
        let mut header: Value = serde_json::from_slice(&bytes[..end]).ok()?;
        header.as_object_mut()?.remove("timestamp");
        Some((header, bytes[end..].to_vec()))
    };
    let (Some((pi_header, pi_entries)), Some((our_header, our_entries))) = (split(pi), split(ours))
    else {
        return pi == ours;
    };
    if pi_header != our_header {
        return false;
    }
    pi_entries == our_entries
        || (migrated
            && entries(&pi_entries)
                .is_some_and(|pi| Some(renamed(&pi)) == entries(&our_entries).map(|o| renamed(&o))))
}

/// The entry lines as values.
fn entries(bytes: &[u8]) -> Option<Vec<Value>> {
    std::str::from_utf8(bytes)
        .ok()?
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every id (and reference to one) replaced by the order of its first appearance.
fn renamed(values: &[Value]) -> Vec<Value> {
    let mut names: HashMap<String, String> = HashMap::new();
    values
        .iter()
        .map(|value| {
            let mut value = value.clone();
            if let Some(object) = value.as_object_mut() {
                for key in ["id", "parentId", "targetId", "firstKeptEntryId", "fromId"] {
                    if let Some(Value::String(id)) = object.get_mut(key) {
                        let next = format!("#{}", names.len());
                        *id = names.entry(id.clone()).or_insert(next).clone();
                    }
                }
            }
            value
        })
        .collect()
}
