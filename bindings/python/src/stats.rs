//! `pi_session.stats(paths, by="session", …)`: tokens, cost and message counts of many
//! sessions, grouped, history copied into forked and branched sessions counted once — the
//! library's `StatsReport` (`pi_session_format::stats::report`), the JSON `pi-session stats
//! --format json` prints, as Python objects. Files are read and counted on every core; a
//! file that is not a session is in the report's `errors` (and a `PiSessionWarning`), the
//! others still counted. Each file is read in its own dialect (pi's or oh-my-pi's, with its
//! program's own numbers) unless `dialect="pi"` or `"omp"` says which; with no paths and
//! `dialect="omp"`, omp's session directory is read (as `stats --dialect omp`).

use crate::convert::from_json;
use crate::error::Failure;
use crate::paths::{dialect_or_detect, paths_of, pi_version, targets, warn};
use pi_session_format::Dialect;
use pi_session_format::stats::ledger::{GroupBy, Options};
use pi_session_format::stats::report::{StatsReport, TimeRange};
use pi_session_fs::discover::Walk;
use pi_session_fs::omp_store::OmpStore;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A `since`/`until` argument as text: a `str`, a `datetime.date` (a whole UTC day) or an
/// aware `datetime.datetime` (its `isoformat()`); a naive datetime is refused as ambiguous.
fn date_text(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    if let Ok(text) = value.extract::<String>() {
        return Ok(Some(text));
    }
    let datetime = value.py().import("datetime")?;
    if value.is_instance(&datetime.getattr("datetime")?)? {
        if value.getattr("tzinfo")?.is_none() {
            return Err(PyValueError::new_err(format!(
                "{name}: a datetime without a time zone is ambiguous: give tzinfo (e.g. datetime.timezone.utc)"
            )));
        }
        return Ok(Some(value.call_method0("isoformat")?.extract()?));
    }
    if value.is_instance(&datetime.getattr("date")?)? {
        return Ok(Some(value.call_method0("isoformat")?.extract()?));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{name}: expected a str (YYYY-MM-DD or ISO 8601), a datetime.date or an aware datetime.datetime"
    )))
}

/// omp's session directory (`~/.omp/agent/sessions`, or where omp's environment puts it),
/// which `stats(dialect="omp")` reads when given no paths.
fn omp_sessions_dir() -> Result<PathBuf, Failure> {
    let dir = OmpStore::from_env()
        .map_err(|e| Failure::new(crate::error::io_code(&e), e.to_string()))?
        .sessions_dir();
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(Failure::new(
            "not-found",
            format!(
                "no path given and omp's session directory {} does not exist (pass files or directories)",
                pi_session_fs::display::path(&dir)
            ),
        ))
    }
}

/// `pi_session.stats`.
#[pyfunction]
#[pyo3(signature = (
    paths = None,
    by = "session",
    *,
    since = None,
    until = None,
    dedupe = true,
    pi = "1.5",
    follow = false,
    include_archived = false,
    dialect = None,
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn stats<'py>(
    py: Python<'py>,
    paths: Option<&Bound<'py, PyAny>>,
    by: &str,
    since: Option<&Bound<'py, PyAny>>,
    until: Option<&Bound<'py, PyAny>>,
    dedupe: bool,
    pi: &str,
    follow: bool,
    include_archived: bool,
    dialect: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let pi = pi_version(pi)?;
    let dialect = dialect_or_detect(dialect, None)?;
    let by: GroupBy = by
        .parse()
        .map_err(|e| PyValueError::new_err(format!("by: {e}")))?;
    let since = date_text("since", since)?;
    let until = date_text("until", until)?;
    let range = TimeRange::parse(since.as_deref(), until.as_deref())
        .map_err(|e| PyValueError::new_err(format!("{}: {e}", e.edge().name())))?;
    let paths = paths_of(paths)?;
    let walk = Walk {
        follow,
        include_archived,
    };
    let (text, notes) = py.detach(|| -> Result<(Vec<u8>, Vec<String>), Failure> {
        let paths = match (paths, dialect) {
            (None, Some(Dialect::Omp)) => Some(vec![omp_sessions_dir()?]),
            (paths, _) => paths,
        };
        let (targets, mut notes) = targets(paths, walk)?;
        let options = Options {
            by,
            since_ms: range.since_ms,
            until_ms: range.until_ms,
            no_dedupe: !dedupe,
        };
        let report = StatsReport::of_targets(&targets, pi, dialect, options);
        notes.extend(
            report
                .skipped
                .iter()
                .map(|s| format!("{}: skipped: {}", s.path, s.error)),
        );
        Ok((report.to_json().into_bytes(), notes))
    })?;
    warn(py, &notes)?;
    from_json(py, text)
}
