//! pi's session list of a directory of corpus sessions, `conformance/list/pi.json`: the
//! sessions of `conformance/cases/real/` copied into one directory as `<case>.jsonl`, listed by
//! each pinned pi (`pi-ref.mjs list`: 0.73.1 `SessionManager.list`, 0.87.1 and 1.5.2
//! `listAll(DIR)`). The files are listed twice, with modification times a day apart, and must
//! list the same: the recorded list does not depend on when the corpus was checked out.
//! `cargo xtask bless list` writes it; `cargo xtask conformance check-list` recomputes it with
//! pi; `crates/pi-session/tests/it/ls_cli.rs` builds the same directory and checks that
//! `pi-session ls --format json` lists it as each pi does.

use crate::reference::{self, Request};
use crate::root;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The pi versions whose list is recorded.
const PIS: [&str; 3] = ["0.73", "0.87", "1.5"];

/// Copies the real corpus sessions into `dir` as `<case>.jsonl`, with modification time `mtime`.
fn build(dir: &Path, mtime: SystemTime) -> Result<(), String> {
    let real = root().join("conformance/cases/real");
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&real)
        .map_err(|e| format!("{}: {e}", real.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("session.jsonl").is_file())
        .collect();
    cases.sort();
    for case in cases {
        let name = case
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let to = dir.join(format!("{name}.jsonl"));
        std::fs::copy(case.join("session.jsonl"), &to).map_err(|e| e.to_string())?;
        std::fs::File::options()
            .write(true)
            .open(&to)
            .and_then(|f| f.set_modified(mtime))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn list(dir: &Path) -> Result<Map<String, Value>, String> {
    let requests: Vec<Request<'_>> = PIS
        .iter()
        .map(|pi| Request {
            dialect: "pi",
            blobs: None,
            op: "list",
            file: dir,
            leaf: None,
            llm: false,
            pi,
        })
        .collect();
    let mut out = Map::new();
    for (pi, answer) in PIS.iter().zip(reference::batch(&requests)?) {
        let bytes = answer.map_err(|e| format!("pi {pi} cannot list: {e}"))?;
        let value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        out.insert((*pi).to_owned(), value);
    }
    Ok(out)
}

/// Blesses (`write`) or checks `conformance/list/pi.json`; see the module docs.
pub(crate) fn run(write: bool) -> Result<(), String> {
    let work = std::env::temp_dir().join(format!("xtask-list-{}", std::process::id()));
    let now = SystemTime::now();
    let (a, b) = (work.join("a"), work.join("b"));
    build(&a, now)?;
    build(&b, now - Duration::from_secs(86_400))?;
    let (first, second) = (list(&a)?, list(&b)?);
    let _ = std::fs::remove_dir_all(&work);
    if first != second {
        return Err(
            "pi lists the sessions differently when their modification times change: the list would depend on the checkout"
                .into(),
        );
    }
    let text =
        serde_json::to_string_pretty(&Value::Object(first)).map_err(|e| e.to_string())? + "\n";
    let path = root().join("conformance/list/pi.json");
    if write {
        std::fs::create_dir_all(path.parent().unwrap_or(&path)).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        return Err(format!(
            "{} differs from what pi lists now: run `cargo xtask bless list` and review the diff",
            path.display()
        ));
    }
    eprintln!(
        "conformance/list: pi {} list the real sessions {}",
        PIS.join(", "),
        if write { "(written)" } else { "as recorded" }
    );
    Ok(())
}
