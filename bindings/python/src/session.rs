//! `pi_session.open(path, pi="1.5")` (or `loads(data)`) and the `Session` it returns: the front door of
//! `pi_session_format` (`Session::open` and the answers of its `session/query.rs`), each
//! answer as the JSON the library writes, made Python objects.

use crate::convert::from_json;
use crate::error::{Failure, io_code};
use crate::paths::{checked, pi_version};
use pi_session_format::context::write_messages;
use pi_session_format::info::write_session_info;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::Loader;
use pi_session_format::{Leaf, OwnedSession, PiVersion, Session as Loaded};
use pi_session_fs::input::Input;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A session file loaded with one pi's rules.
#[pyclass(module = "pi_session", frozen)]
pub(crate) struct Session {
    inner: OwnedSession,
    /// The file it was read from; `None` for bytes (`loads`).
    path: Option<PathBuf>,
}

/// Calls `load` with a loader of `pi`'s rules: a v1 file's ids `00000001`, `00000002`, …
/// when `sequential_ids`, random ones (as pi's) otherwise.
fn with_loader<T>(
    pi: PiVersion,
    sequential_ids: bool,
    load: impl FnOnce(Loader<'_, '_>) -> T,
) -> T {
    let mut sequential = SequentialIds::default();
    let loader = Loaded::loader(pi);
    if sequential_ids {
        load(loader.ids(&mut sequential))
    } else {
        load(loader)
    }
}

/// `pi_session.open`: reads and loads the file. `sequential_ids`: the ids a v1 file's
/// entries get are `00000001`, `00000002`, … (as the conformance corpus numbers them), not
/// random ones as pi's.
#[pyfunction]
#[pyo3(signature = (path, pi = "1.5", *, sequential_ids = false))]
pub(crate) fn open(
    py: Python<'_>,
    path: PathBuf,
    pi: &str,
    sequential_ids: bool,
) -> PyResult<Session> {
    let pi = pi_version(pi)?;
    let path = checked(&path)?;
    let inner = py.detach(|| {
        with_loader(pi, sequential_ids, |loader| {
            loader.open(&path).map_err(Failure::from)
        })
    })?;
    Ok(Session {
        inner,
        path: Some(path),
    })
}

/// `pi_session.loads`: loads a session from bytes (copied), as `open` loads a file's; the
/// listing entry's modification time is then the Unix epoch.
#[pyfunction]
#[pyo3(signature = (data, pi = "1.5", *, sequential_ids = false))]
pub(crate) fn loads(
    py: Python<'_>,
    data: Vec<u8>,
    pi: &str,
    sequential_ids: bool,
) -> PyResult<Session> {
    let pi = pi_version(pi)?;
    let inner = py.detach(|| {
        with_loader(pi, sequential_ids, |loader| {
            loader.load_owned(data).map_err(Failure::from)
        })
    })?;
    Ok(Session { inner, path: None })
}

/// `pi_session.info`: the listing entry pi shows for the file, read as pi's session list
/// reads it (which does not load the file as a session: a file `open` refuses may be
/// listed), or `None` when pi leaves it out of lists.
#[pyfunction]
#[pyo3(signature = (path, pi = "1.5"))]
pub(crate) fn info<'py>(py: Python<'py>, path: PathBuf, pi: &str) -> PyResult<Bound<'py, PyAny>> {
    let pi = pi_version(pi)?;
    let path = checked(&path)?;
    let text = py.detach(|| -> Result<Vec<u8>, Failure> {
        let failed = |e: std::io::Error| {
            Failure::new(
                io_code(&e),
                format!("{}: {e}", pi_session_fs::display::path(&path)),
            )
        };
        let input = Input::open(&path).map_err(failed)?;
        let mut out = Vec::new();
        write_session_info(input.bytes(), None, input.modified_ms(), pi, &mut out)
            .map_err(failed)?;
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
    /// file): `{"messages": [...], "thinkingLevel": ..., "model": ...}`.
    #[pyo3(signature = (leaf = None))]
    fn context<'py>(&self, py: Python<'py>, leaf: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            let mut out = Vec::new();
            s.context(self::leaf(leaf))?
                .write_json(&mut out)
                .map_err(|e| Failure::new("io", e.to_string()))?;
            Ok(out)
        })
    }

    /// The messages pi sends to the model for `leaf`: `convertToLlm` of the context's.
    #[pyo3(signature = (leaf = None))]
    fn llm<'py>(&self, py: Python<'py>, leaf: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            let mut out = Vec::new();
            write_messages(&s.to_llm(self::leaf(leaf))?, &mut out)
                .map_err(|e| Failure::new("io", e.to_string()))?;
            Ok(out)
        })
    }

    /// pi's `getTree()`: `[{"id", "type", "label"?, "children": [...]}, ...]`.
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| Ok(s.tree_json()))
    }

    /// The listing entry pi shows for the file, or `None` when pi leaves it out of lists.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.answer(py, |s| {
            let mut out = Vec::new();
            s.write_info(&mut out)
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

    /// The file's path (`None` for a session loaded from bytes).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        match &self.path {
            Some(path) => format!(
                "pi_session.Session({:?}, pi={:?})",
                path.display().to_string(),
                self.pi()
            ),
            None => format!(
                "pi_session.Session(<{} bytes>, pi={:?})",
                self.inner.bytes().len(),
                self.pi()
            ),
        }
    }
}
