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

/// Copies the sessions of `conformance/cases/<area>/<case>/session.jsonl`, in name order, as
/// `<case>.jsonl` into the directory `place(i)` gives the i-th, modified at the time it gives.
fn copy_cases(area: &str, place: impl Fn(usize) -> (PathBuf, SystemTime)) -> Result<(), String> {
    let from = root().join("conformance/cases").join(area);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&from)
        .map_err(|e| format!("{}: {e}", from.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("session.jsonl").is_file())
        .collect();
    cases.sort();
    for (i, case) in cases.iter().enumerate() {
        let (dir, mtime) = place(i);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let name = case.file_name().unwrap_or_default().to_string_lossy();
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

/// Writes `value` to `path` (`write`), or checks that `path` holds it; `who` lists it.
fn record(path: &Path, value: Value, write: bool, who: &str) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())? + "\n";
    if write {
        std::fs::create_dir_all(path.parent().unwrap_or(path)).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    } else if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
        return Err(format!(
            "{} differs from what {who} lists now: run `cargo xtask bless list` and review the diff",
            path.display()
        ));
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

/// The ids pinned in omp's list (`session-pins.json`).
const OMP_PINS: [&str; 1] = ["0199a6b2-7c1e-7000-8000-000000000003"];

/// The omp corpus sessions in `root`: in name order, the i-th case as `<case>.jsonl` in the
/// project directory `-proj-a` (i even) or `-proj-b` (i odd), modified at 2000-01-01T00:00Z
/// plus `i % 3` minutes, so that file times tie and the next keys decide.
/// `crates/pi-session/tests/it/ls_cli.rs` builds the same directories.
fn build_omp(sessions: &Path) -> Result<(), String> {
    copy_cases("omp", |i| {
        let project = if i % 2 == 0 { "-proj-a" } else { "-proj-b" };
        let minutes = i as u64 % 3;
        let mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(946_684_800 + minutes * 60);
        (sessions.join(project), mtime)
    })
}

/// omp's list of `dir` (`--all`: of every project directory under it), `OMP_PINS` pinned.
fn omp_list(dir: &Path, all: bool) -> Result<Value, String> {
    let mut command = std::process::Command::new(crate::reference::ensure_omp_installed()?);
    command
        .arg(crate::root().join("conformance/reference/omp/omp-ref.ts"))
        .arg("list")
        .arg(dir)
        .args(["--pins", &OMP_PINS.join(",")])
        .env("TZ", "UTC");
    if all {
        command.arg("--all");
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run omp: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "omp cannot list {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())
}

/// Blesses (`write`) or checks `conformance/list/omp.json`; see the module docs.
fn run_omp(write: bool) -> Result<(), String> {
    let work = std::env::temp_dir().join(format!("xtask-omp-list-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    build_omp(&work)?;
    let listed = (
        omp_list(&work.join("-proj-a"), false),
        omp_list(&work, true),
    );
    let _ = std::fs::remove_dir_all(&work);
    let mut out = Map::new();
    out.insert(
        "pins".into(),
        OMP_PINS.iter().map(|p| Value::from(*p)).collect(),
    );
    out.insert("project".into(), listed.0?);
    out.insert("all".into(), listed.1?);
    let path = root().join("conformance/list/omp.json");
    record(&path, Value::Object(out), write, "omp")?;
    eprintln!(
        "conformance/list: omp 18.3.4 lists the omp sessions {}",
        if write { "(written)" } else { "as recorded" }
    );
    Ok(())
}

/// Blesses (`write`) or checks `conformance/list/pi.json`; see the module docs.
pub(crate) fn run(write: bool) -> Result<(), String> {
    let work = std::env::temp_dir().join(format!("xtask-list-{}", std::process::id()));
    let now = SystemTime::now();
    let (a, b) = (work.join("a"), work.join("b"));
    copy_cases("real", |_| (a.clone(), now))?;
    let day_before = now - Duration::from_secs(86_400);
    copy_cases("real", |_| (b.clone(), day_before))?;
    let (first, second) = (list(&a)?, list(&b)?);
    let _ = std::fs::remove_dir_all(&work);
    if first != second {
        return Err(
            "pi lists the sessions differently when their modification times change: the list would depend on the checkout"
                .into(),
        );
    }
    let path = root().join("conformance/list/pi.json");
    record(&path, Value::Object(first), write, "pi")?;
    eprintln!(
        "conformance/list: pi {} list the real sessions {}",
        PIS.join(", "),
        if write { "(written)" } else { "as recorded" }
    );
    run_omp(write)
}
