//! The arguments every function shares: `pi="1.5"` and the paths, which are checked before
//! anything is opened so that nothing blocks the interpreter: a FIFO, socket or device is
//! refused (`not-a-file`) where the command line would read it as a stream and wait for a
//! writer, and `-` is a file named `-`, not standard input.

use crate::error::Failure;
use pi_session_format::omp::Blobs;
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::discover::{self, Target, Walk};
use pi_session_fs::omp_store::OmpStore;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::{Path, PathBuf};

/// `"0.73"`, `"0.87"`, `"1.5"` or a full release (`"1.5.2"`).
pub(crate) fn pi_version(pi: &str) -> PyResult<PiVersion> {
    pi.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "pi={pi:?}: expected one of \"0.73\", \"0.87\", \"1.5\" (or a full release such as \"1.5.2\")"
        ))
    })
}

/// `"pi"` or `"omp"`: the dialect a file is read in (`dialect=`).
pub(crate) fn dialect(dialect: &str) -> PyResult<Dialect> {
    dialect.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "dialect={dialect:?}: expected \"pi\" or \"omp\" (oh-my-pi)"
        ))
    })
}

/// `dialect=`: `"pi"`, `"omp"`, or `"auto"` for the file's own (`None`, detected as the
/// command line detects it when no `--dialect` is given); not given, `default`. As the Node
/// binding's option.
pub(crate) fn dialect_or_detect(
    dialect: Option<&str>,
    default: Option<Dialect>,
) -> PyResult<Option<Dialect>> {
    match dialect {
        None => Ok(default),
        Some(name) => Dialect::choice(name).map_err(|_| {
            PyValueError::new_err(format!(
                "dialect={name:?}: expected \"pi\", \"omp\" (oh-my-pi) or \"auto\" (the file's own)"
            ))
        }),
    }
}

/// omp's blob store for `blobs=`: the directory given, else omp's own when it exists
/// (`~/.omp/agent/blobs`, or where omp's environment puts it), as the command line's
/// `--blobs` defaults.
pub(crate) fn blobs(given: Option<PathBuf>) -> Option<Blobs> {
    given.or_else(OmpStore::existing_blobs_dir).map(Blobs::new)
}

/// `-` as the file of that name (the command line's standard input is not the binding's).
fn literal(path: &Path) -> PathBuf {
    if path.as_os_str() == "-" {
        Path::new(".").join("-")
    } else {
        path.to_owned()
    }
}

/// A path that is a regular file, a directory, or nothing yet (reading it reports the
/// error); anything else is refused.
pub(crate) fn checked(path: &Path) -> Result<PathBuf, Failure> {
    let path = literal(path);
    if let Ok(meta) = std::fs::metadata(&path)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return Err(Failure::new(
            "not-a-file",
            format!(
                "{}: not a regular file (a FIFO, socket or device): not read, as reading it could block",
                pi_session_fs::display::path(&path)
            ),
        ));
    }
    Ok(path)
}

/// `paths`: one path (`str` or `os.PathLike`) or an iterable of them, each [`checked`];
/// `None` for pi's session directory (the command line's default).
pub(crate) fn paths_of(paths: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<PathBuf>>> {
    let Some(paths) = paths else {
        return Ok(None);
    };
    let wrong =
        || PyTypeError::new_err("paths: expected a path (str or os.PathLike) or a list of them");
    let one = |p: &Bound<'_, PyAny>| -> PyResult<PathBuf> {
        let path: PathBuf = p.extract().map_err(|_| wrong())?;
        Ok(checked(&path)?)
    };
    if paths.is_instance_of::<PyString>() || paths.hasattr("__fspath__")? {
        return Ok(Some(vec![one(paths)?]));
    }
    let mut out = Vec::new();
    for p in paths.try_iter().map_err(|_| wrong())? {
        out.push(one(&p?)?);
    }
    Ok(Some(out))
}

/// The session files of `paths` ([`paths_of`]): directories walked for `*.jsonl` files as
/// the command line walks them (`pi_session_fs::discover`); no paths, no files. With them,
/// what the walk says (files it left, directories without sessions), for [`warn`].
pub(crate) fn targets(
    paths: Option<Vec<PathBuf>>,
    walk: Walk,
) -> Result<(Vec<Target>, Vec<String>), Failure> {
    match paths {
        Some(paths) if paths.is_empty() => Ok((Vec::new(), Vec::new())),
        paths => {
            let collected = discover::collect(&paths.unwrap_or_default(), walk)
                .map_err(|e| Failure::new(crate::error::io_code(&e), e.to_string()))?;
            let mut notes = collected.notes;
            notes.extend(collected.empty.iter().map(|dir| {
                format!(
                    "{}: no session files (*.jsonl) in this directory",
                    pi_session_fs::display::path(dir)
                )
            }));
            Ok((collected.targets, notes))
        }
    }
}

/// Each note as a `PiSessionWarning`.
pub(crate) fn warn(py: Python<'_>, notes: &[String]) -> PyResult<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let warnings = py.import("warnings")?;
    for note in notes {
        warnings.call_method1(
            "warn",
            (note, py.get_type::<crate::error::PiSessionWarning>(), 2),
        )?;
    }
    Ok(())
}
