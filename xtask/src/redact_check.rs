//! `cargo xtask conformance check-redact`: redacted sessions still load and resume in pi.
//!
//! Every session of the corpus (`conformance/cases/*/*/session.jsonl`, redacted with
//! `--aggressive --strip-signatures --strip-images` so that strings change) and the planted
//! sessions (a secret for every rule, in every place a session keeps text:
//! `pi_session_testkit::planted`) are redacted with a fixed key; each one that changed is given
//! to its reader beside its original — every pinned pi (`pi-ref.mjs batch`), or omp 18.3.4 for
//! an omp session (`omp-ref.ts batch`; its title slot rewritten at its width) — and must read
//! the same: the same tree of ids and entry types (`getTree()`; labels may be redacted), the
//! same context shape (as many messages, the same roles, thinking level and model), or the same
//! refusal. The validator must give the redacted file the same verdicts as the original.

use crate::reference::{self, Request};
use crate::root;
use pi_session_format::{Dialect, PiVersion};
use pi_session_redact::{Key, Options, Redactor};
use pi_session_testkit::planted::{self, Place, Spelling};
use serde_json::Value;
use std::path::PathBuf;

/// The pinned pis.
const PIS: [&str; 3] = ["0.73", "0.87", "1.5"];

/// Runs the check; see the module docs.
pub(crate) fn run() -> Result<(), String> {
    let out = root().join("target/redact-check");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let key = Key::from_bytes(b"cargo xtask conformance check-redact").map_err(|e| e.0)?;
    let harsh = Redactor::new(
        Options {
            aggressive: true,
            strip_signatures: true,
            strip_images: true,
            ..Options::default()
        },
        key.clone(),
    );
    let plain = Redactor::new(Options::default(), key);
    let mut pairs: Vec<(String, PathBuf, PathBuf, Dialect)> = Vec::new();
    let mut redact = |name: String, bytes: &[u8], redactor: &Redactor| -> Result<(), String> {
        let dialect = Dialect::given_or_detected(None, bytes);
        let mut redacted = Vec::new();
        let report = redactor
            .redact(bytes, &mut redacted)
            .map_err(|e| e.to_string())?;
        if report.lines_changed == 0 {
            return Ok(());
        }
        let flat = name.replace('/', "__");
        let original = out.join(format!("{flat}.original.jsonl"));
        let changed = out.join(format!("{flat}.redacted.jsonl"));
        std::fs::write(&original, bytes).map_err(|e| e.to_string())?;
        std::fs::write(&changed, &redacted).map_err(|e| e.to_string())?;
        same_verdicts(&name, bytes, &redacted, dialect)?;
        pairs.push((name, original, changed, dialect));
        Ok(())
    };
    let cases = root().join("conformance/cases");
    let mut sessions = Vec::new();
    for area in read_dir(&cases)? {
        for case in read_dir(&area)? {
            let session = case.join("session.jsonl");
            if session.is_file() {
                sessions.push(session);
            }
        }
    }
    sessions.sort();
    for session in &sessions {
        let bytes = std::fs::read(session).map_err(|e| format!("{}: {e}", session.display()))?;
        let name = session
            .strip_prefix(&cases)
            .unwrap_or(session)
            .parent()
            .map_or_else(String::new, |p| p.display().to_string());
        redact(name, &bytes, &harsh)?;
    }
    let (secrets, _) = planted::secrets(1);
    for place in Place::ALL {
        for spelling in [Spelling::Plain, Spelling::Split] {
            let bytes = planted::session(&secrets, place, spelling, "/home/user/project");
            redact(format!("planted/{place:?}-{spelling:?}"), &bytes, &plain)?;
        }
    }
    let mut requests = Vec::new();
    for (_, original, redacted, dialect) in &pairs {
        // omp reads as omp: one reader.
        let (pis, reader): (&[&str], &str) = match dialect {
            Dialect::Omp => (&["1.5"], "omp"),
            _ => (&PIS, "pi"),
        };
        for &pi in pis {
            for op in ["tree", "context"] {
                for file in [original, redacted] {
                    requests.push(Request {
                        op,
                        file,
                        leaf: None,
                        llm: false,
                        pi,
                        dialect: reader,
                        blobs: None,
                    });
                }
            }
        }
    }
    let responses = reference::batch(&requests)?;
    let mut failures = Vec::new();
    for (pair, answers) in requests.chunks(2).zip(responses.chunks(2)) {
        let name = pairs
            .iter()
            .find(|(_, o, _, _)| o == pair[0].file)
            .map_or("?", |(n, _, _, _)| n.as_str());
        let reader = match pair[0].dialect {
            "omp" => "omp".to_owned(),
            _ => format!("pi {}", pair[0].pi),
        };
        let what = format!("{name}: {reader} {}", pair[0].op);
        match (&answers[0], &answers[1]) {
            (Ok(a), Ok(b)) => {
                let same = if pair[0].op == "tree" {
                    tree_shape(a, &what)? == tree_shape(b, &what)?
                } else {
                    context_shape(&parse(a, &what)?) == context_shape(&parse(b, &what)?)
                };
                if !same {
                    failures.push(format!("{what}: the redacted file reads differently"));
                }
            }
            (Err(_), Err(_)) => {}
            (a, b) => failures.push(format!(
                "{what}: original {}, redacted {}",
                if a.is_ok() { "read" } else { "refused" },
                if b.is_ok() { "read" } else { "refused" }
            )),
        }
    }
    let omp = pairs.iter().filter(|p| p.3 == Dialect::Omp).count();
    println!(
        "check-redact: {} redacted pi sessions, each read by pi {} as its original, and {omp} \
         omp sessions by omp ({} requests)",
        pairs.len() - omp,
        PIS.join(", "),
        requests.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn read_dir(dir: &std::path::Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

fn parse(bytes: &[u8], what: &str) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("{what}: the reference's output: {e}"))
}

/// The tree without its labels: each node's id, type and depth, in order (walked with a
/// stack: a chain of entries nests as deep as it is long, past `serde_json`'s limit).
fn tree_shape(bytes: &[u8], what: &str) -> Result<Vec<(String, String, usize)>, String> {
    use pi_session_format::json::{self, JsValue};
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{what}: {e}"))?;
    let tree = json::parse(text).map_err(|e| format!("{what}: {}", e.message()))?;
    let mut shape = Vec::new();
    let mut stack: Vec<(&JsValue, usize)> = vec![(&tree, 0)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            JsValue::Array(nodes) => stack.extend(nodes.0.iter().rev().map(|n| (n, depth))),
            JsValue::Object(node) => {
                let field = |k| node.get(k).map(json::to_string).unwrap_or_default();
                shape.push((field("id"), field("type"), depth));
                if let Some(children) = node.get("children") {
                    stack.push((children, depth + 1));
                }
            }
            _ => {}
        }
    }
    Ok(shape)
}

/// The context without its texts: the roles of its messages, the thinking level and model.
fn context_shape(context: &Value) -> Value {
    let roles: Vec<Value> = context["messages"]
        .as_array()
        .map(|m| m.iter().map(|m| m["role"].clone()).collect())
        .unwrap_or_default();
    serde_json::json!({
        "roles": roles,
        "thinkingLevel": context.get("thinkingLevel"),
        "model": context.get("model"),
    })
}

/// The validator's verdicts (each pinned pi's rules, in the file's dialect) of the redacted
/// file are the original's.
fn same_verdicts(
    name: &str,
    original: &[u8],
    redacted: &[u8],
    dialect: Dialect,
) -> Result<(), String> {
    for pi in [PiVersion::V0_73, PiVersion::V0_87, PiVersion::V1_5] {
        let options = pi_session_validate::Options {
            pi,
            dialect,
            ..Default::default()
        };
        let before = pi_session_validate::validate(original, &options).verdict;
        let after = pi_session_validate::validate(redacted, &options).verdict;
        if before != after {
            return Err(format!(
                "{name}: validate ({pi:?}) says {before:?} of the original, {after:?} of the \
                 redacted file"
            ));
        }
    }
    Ok(())
}
