//! `pi_session.validate(paths)`: the validator (`pi_session_validate::validate`) over the
//! session files of `paths`, the report the library's `ValidateReport` serialises — the JSON
//! `pi-session validate --format json` prints, `tool` naming this module — as Python objects.
//! Files are checked against pi's format unless `dialect="omp"`: oh-my-pi's title slot,
//! header members and entry types known, its image references looked up in `blobs` (default:
//! omp's own store when it exists), as `validate --dialect omp`.

use crate::convert::from_json;
use crate::error::Failure;
use crate::paths::{dialect as dialect_of, paths_of, pi_version, targets, warn};
use pi_session_format::omp::Blobs;
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::discover::{Target, Walk};
use pi_session_validate::{FileReport, Tool, ValidateReport, VerdictMode};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stack of the threads that validate: the JSON Schema check of a line nested 120 levels
/// deep wants more than the 2 MiB a thread gets by default (the command line's choice too).
const STACK: usize = 16 << 20;

/// What the files are checked against: the dialect, and omp's blob store.
#[derive(Clone, Copy)]
struct Rules<'a> {
    dialect: Dialect,
    blobs: Option<&'a Blobs>,
}

/// Every target's report, in order, checked on a few threads.
fn all(
    targets: &[Target],
    pi: PiVersion,
    mode: VerdictMode,
    rules: Rules<'_>,
) -> Result<Vec<FileReport>, Failure> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(targets.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<FileReport>>> = Mutex::new(vec![None; targets.len()]);
    std::thread::scope(|scope| -> Result<(), Failure> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(scope, || {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(target) = targets.get(i) else { break };
                            let report = FileReport::of_target_in(
                                target,
                                pi,
                                mode,
                                rules.dialect,
                                rules.blobs,
                            );
                            if let Ok(mut done) = done.lock() {
                                done[i] = Some(report);
                            }
                        }
                    })
                    .map_err(|e| Failure::new("io", format!("cannot start a thread: {e}")))
            })
            .collect::<Result<_, _>>()?;
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Ok(())
    })?;
    let done = done
        .into_inner()
        .map_err(|_| Failure::new("internal", "a validating thread failed"))?;
    done.into_iter()
        .map(|r| r.ok_or_else(|| Failure::new("internal", "a file was not validated")))
        .collect()
}

/// `pi_session.validate`.
#[pyfunction]
#[pyo3(signature = (
    paths = None,
    *,
    pi = "1.5",
    strict = false,
    schema_only = false,
    follow = false,
    include_archived = false,
    dialect = "pi",
    blobs = None,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate<'py>(
    py: Python<'py>,
    paths: Option<&Bound<'py, PyAny>>,
    pi: &str,
    strict: bool,
    schema_only: bool,
    follow: bool,
    include_archived: bool,
    dialect: &str,
    blobs: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let pi = pi_version(pi)?;
    let dialect = dialect_of(dialect)?;
    let paths = paths_of(paths)?;
    let mode = if schema_only {
        VerdictMode::SchemaOnly
    } else if strict {
        VerdictMode::Strict
    } else {
        VerdictMode::PiLoadable
    };
    let walk = Walk {
        follow,
        include_archived,
    };
    let (text, notes) = py.detach(|| -> Result<(Vec<u8>, Vec<String>), Failure> {
        let (targets, notes) = targets(paths, walk)?;
        // omp's store only for omp's checks (pi's never look blobs up).
        let blobs = (dialect == Dialect::Omp)
            .then(|| crate::paths::blobs(blobs))
            .flatten();
        let rules = Rules {
            dialect,
            blobs: blobs.as_ref(),
        };
        let files = all(&targets, pi, mode, rules)?;
        let tool = Tool {
            name: "pi_session (Python)".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        };
        let text =
            serde_json::to_vec(&ValidateReport::new(tool, pi, mode, files).with_dialect(dialect))
                .map_err(|e| Failure::new("internal", e.to_string()))?;
        Ok((text, notes))
    })?;
    warn(py, &notes)?;
    from_json(py, text)
}
