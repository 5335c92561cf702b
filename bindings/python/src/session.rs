//! `pi_session.open(path, pi="1.5")` (or `loads(data)`) and the `Session` it returns: the front door of
//! `pi_session_format` (`Session::open` and the answers of its `session/query.rs`), each
//! answer as the JSON the library writes, made Python objects.
//!
//! A file is read in pi's dialect, or oh-my-pi's (`dialect="omp"`), or its own
//! (`dialect="auto"`: `Loader::detect_dialect`, as the command line reads it without
//! `--dialect`), as the Node binding's (docs/dialects.md); an omp session answers with omp's
//! context, tree and listing entry.

use crate::convert::from_json;
use crate::error::{Failure, io_code};
use crate::paths::{checked, dialect_or_detect, pi_version, warn};
use pi_session_format::context::write_messages;
use pi_session_format::info::write_entry;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::omp::Blobs;
use pi_session_format::session::Loader;
use pi_session_format::{Dialect, Leaf, OwnedSession, PiVersion, Session as Loaded};
use pi_session_fs::input::Input;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;

/// A session file loaded with one pi's rules, in its dialect.
#[pyclass(module = "pi_session", frozen)]
pub(crate) struct Session {
    inner: OwnedSession,
    /// The file it was read from; `None` for bytes (`loads`).
    path: Option<PathBuf>,
    /// omp's blob store, where an omp session's `blob:sha256:` image references are looked
    /// up by `context()`: the one given, else omp's own when it exists.
    blobs: Option<Blobs>,
}

impl Session {
    /// The session `inner` loaded from `path`, with the blob store of `blobs=`: the one
    /// given, else (for an omp session) omp's own when it exists.
    fn new(inner: OwnedSession, path: Option<PathBuf>, blobs: Option<PathBuf>) -> Session {
        let blobs = match blobs {
            Some(dir) => Some(Blobs::new(dir)),
            None if inner.session().dialect == Dialect::Omp => crate::paths::blobs(None),
            None => None,
        };
        Session { inner, path, blobs }
    }
}

/// Calls `load` with a loader of `pi`'s rules in `dialect` (`None`: the file's own): a v1
/// file's ids `00000001`, `00000002`, … when `sequential_ids`, random ones (as pi's)
/// otherwise.
fn with_loader<T>(
    pi: PiVersion,
    dialect: Option<Dialect>,
    sequential_ids: bool,
    load: impl FnOnce(Loader<'_, '_>) -> T,
) -> T {
    let mut sequential = SequentialIds::default();
    let loader = Loaded::loader(pi).with_dialect(dialect);
    if sequential_ids {
        load(loader.ids(&mut sequential))
    } else {
        load(loader)
    }
}

/// `pi_session.open`: reads and loads the file. `sequential_ids`: the ids a v1 file's
/// entries get are `00000001`, `00000002`, … (as the conformance corpus numbers them), not
/// random ones as pi's. `dialect`: `"pi"` (the default), `"omp"`, or `"auto"` (the file's own:
/// omp's title slot, header members or entry types, or a path in omp's store). `blobs`: omp's blob store
/// (default: omp's own when it exists).
#[pyfunction]
#[pyo3(signature = (path, pi = "1.5", *, sequential_ids = false, dialect = None, blobs = None))]
pub(crate) fn open(
    py: Python<'_>,
    path: PathBuf,
    pi: &str,
    sequential_ids: bool,
    dialect: Option<&str>,
    blobs: Option<PathBuf>,
) -> PyResult<Session> {
    let pi = pi_version(pi)?;
    let dialect = dialect_or_detect(dialect, Some(Dialect::Pi))?;
    let path = checked(&path)?;
    let session = py.detach(|| -> Result<Session, Failure> {
        let inner = with_loader(pi, dialect, sequential_ids, |loader| {
            loader.open(&path).map_err(Failure::from)
        })?;
        Ok(Session::new(inner, Some(path), blobs))
    })?;
    Ok(session)
}

/// `pi_session.loads`: loads a session from bytes (copied), as `open` loads a file's; the
/// listing entry's modification time is then the Unix epoch.
#[pyfunction]
#[pyo3(signature = (data, pi = "1.5", *, sequential_ids = false, dialect = None, blobs = None))]
pub(crate) fn loads(
    py: Python<'_>,
    data: Vec<u8>,
    pi: &str,
    sequential_ids: bool,
    dialect: Option<&str>,
    blobs: Option<PathBuf>,
) -> PyResult<Session> {
    let pi = pi_version(pi)?;
    let dialect = dialect_or_detect(dialect, Some(Dialect::Pi))?;
    let session = py.detach(|| -> Result<Session, Failure> {
        let inner = with_loader(pi, dialect, sequential_ids, |loader| {
            loader.load_owned(data).map_err(Failure::from)
        })?;
        Ok(Session::new(inner, None, blobs))
    })?;
    Ok(session)
}

/// An `mtime=` argument in milliseconds: seconds since the epoch (`int` or `float`, as
/// `os.stat().st_mtime`) or an aware `datetime.datetime`; `None` when not given.
fn mtime_ms(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let datetime = value.py().import("datetime")?.getattr("datetime")?;
    let seconds: f64 = if value.is_instance(&datetime)? {
        if value.getattr("tzinfo")?.is_none() {
            return Err(PyValueError::new_err(
                "mtime: a datetime without a time zone is ambiguous: give tzinfo (e.g. datetime.timezone.utc)",
            ));
        }
        value.call_method0("timestamp")?.extract()?
    } else if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "mtime: expected seconds since the epoch (int or float) or an aware datetime.datetime",
        ));
    } else {
        value.extract().map_err(|_| {
            PyTypeError::new_err(
                "mtime: expected seconds since the epoch (int or float) or an aware datetime.datetime",
            )
        })?
    };
    if !seconds.is_finite() {
        return Err(PyValueError::new_err("mtime: not a finite number"));
    }
    Ok(Some(seconds * 1000.0))
}

/// `pi_session.info`: the listing entry the file's program shows for it: pi's, read as pi's
/// session list reads it (which does not load the file as a session: a file `open` refuses
/// may be listed), or omp's (`scanSessionFile`) for a file in omp's dialect (`dialect="omp"`,
/// or `"auto"`: the file's own, told by its first lines, as `pi-session info` tells it); `None` when the
/// program leaves it out of lists. `mtime`: the file's modification time to list (default:
/// the file's).
#[pyfunction]
#[pyo3(signature = (path, pi = "1.5", *, mtime = None, dialect = None))]
pub(crate) fn info<'py>(
    py: Python<'py>,
    path: PathBuf,
    pi: &str,
    mtime: Option<&Bound<'py, PyAny>>,
    dialect: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let pi = pi_version(pi)?;
    let dialect = dialect_or_detect(dialect, Some(Dialect::Pi))?;
    let mtime = mtime_ms(mtime)?;
    let path = checked(&path)?;
    let text = py.detach(|| -> Result<Vec<u8>, Failure> {
        let failed = |e: std::io::Error| {
            Failure::new(
                io_code(&e),
                format!("{}: {e}", pi_session_fs::display::path(&path)),
            )
        };
        let input = Input::open(&path).map_err(failed)?;
        let bytes = input.bytes();
        let mtime = mtime.unwrap_or_else(|| input.modified_ms());
        let mut out = Vec::new();
        write_entry(bytes, None, mtime, pi, dialect, &mut out).map_err(failed)?;
        input.verify().map_err(failed)?;
        Ok(out)
    })?;
    from_json(py, text)
}

fn leaf(id: Option<String>) -> Leaf {
    id.map_or(Leaf::Current, Leaf::Id)
}

impl Session {
    /// Runs `answer` on the loaded session without the GIL; its JSON text made Python
    /// objects.
    fn answer<'py>(
        &self,
        py: Python<'py>,
        answer: impl FnOnce(&Loaded<'_>) -> Result<Vec<u8>, Failure> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let text = py.detach(|| answer(self.inner.session()))?;
        from_json(py, text)
    }
}

#[pymethods]
impl Session {
    /// pi's `buildSessionContext` for `leaf` (default: the leaf pi has after opening the
    /// file): `{"messages": [...], "thinkingLevel": ..., "model": ...}`; omp's
    /// `buildSessionContext` for an omp session (its images put back from the blob store).
    /// What it skips or leaves in place (a `message` entry without a message, an image whose
    /// blob is not in the store) is a `PiSessionWarning`, worded as `pi-session context` says it.
    #[pyo3(signature = (leaf = None))]
    fn context<'py>(&self, py: Python<'py>, leaf: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let mut warnings = Vec::new();
        let context = self.answer(py, |s| {
            let mut out = Vec::new();
            let notes = s
                .write_resumed_context(self::leaf(leaf), self.blobs.as_ref(), &mut out)
                .map_err(|e| Failure::new(e.code(), e.to_string()))?;
            warnings = notes.warnings(self.blobs.as_ref());
            Ok(out)
        })?;
        warn(py, &warnings)?;
        Ok(context)
    }

    /// The messages pi sends to the model for `leaf`: `convertToLlm` of the context's. Not
    /// for an omp session (`omp-unsupported`): omp's `convertToLlm` is not reproduced yet.
    #[pyo3(signature = (leaf = None))]
    fn llm<'py>(&self, py: Python<'py>, leaf: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            if s.dialect == Dialect::Omp {
                return Err(Failure::new(
                    "omp-unsupported",
                    "llm(): omp's convertToLlm is not reproduced yet (context() gives omp's context)",
                ));
            }
            let mut out = Vec::new();
            write_messages(&s.to_llm(self::leaf(leaf))?, &mut out)
                .map_err(|e| Failure::new("io", e.to_string()))?;
            Ok(out)
        })
    }

    /// pi's `getTree()`: `[{"id", "type", "label"?, "children": [...]}, ...]`; omp's for an
    /// omp session (which refuses a tree omp would never finish: `omp-tree-cycle`,
    /// `omp-tree-too-large`).
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            let mut out = Vec::new();
            s.write_tree_json(&mut out)
                .map_err(|e| Failure::new(e.code(), e.to_string()))?;
            Ok(out)
        })
    }

    /// The listing entry the session's program shows for the file (pi's, or omp's for an omp
    /// session), or `None` when it leaves the file out of lists. `mtime`: the modification
    /// time to list (default: the file's; the Unix epoch for bytes).
    #[pyo3(signature = (*, mtime = None))]
    fn info<'py>(
        &self,
        py: Python<'py>,
        mtime: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mtime = mtime_ms(mtime)?;
        self.answer(py, |s| {
            let mut out = Vec::new();
            match mtime {
                Some(mtime) => s.write_info_at(mtime, &mut out),
                None => s.write_info(&mut out),
            }
            .map_err(|e| Failure::new("io", e.to_string()))?;
            Ok(out)
        })
    }

    /// The entries in file order as the typed model reads them (a file pi migrates gives
    /// the migrated entries); an entry that does not fit the model raises
    /// `PiSessionError` (`entry-not-typed`).
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            let mut out = vec![b'['];
            for (i, entry) in s.entries().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut out, &entry?.entry)
                    .map_err(|e| Failure::new("internal", e.to_string()))?;
            }
            out.push(b']');
            Ok(out)
        })
    }

    /// Whose rules the session was loaded with (`"0.73"`, `"0.87"`, `"1.5"`).
    #[getter]
    fn pi(&self) -> &'static str {
        self.inner.session().pi.short_name()
    }

    /// The dialect the session was read in: `"pi"` or `"omp"` (oh-my-pi).
    #[getter]
    fn dialect(&self) -> &'static str {
        self.inner.session().dialect.name()
    }

    /// The file's path (`None` for a session loaded from bytes).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        let source = match &self.path {
            Some(path) => format!("{:?}", path.display().to_string()),
            None => format!("<{} bytes>", self.inner.bytes().len()),
        };
        format!(
            "pi_session.Session({source}, pi={:?}, dialect={:?})",
            self.pi(),
            self.dialect()
        )
    }
}
