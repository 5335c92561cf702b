//! `pi_session.SessionWriter`: `pi_session_format::SessionWriter` (pi's `SessionManager`):
//! the lines pi writes for the same operations, appended safely. Entries and messages are
//! given as dicts (`json.dumps`, then JavaScript's `JSON.parse`: key order kept).

use crate::convert::to_js;
use crate::error::Failure;
use crate::paths::{checked, pi_version};
use pi_session_format::write::{SessionWriter as Writer, WriterConfig};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// A session being written.
#[pyclass(module = "pi_session", frozen)]
pub(crate) struct SessionWriter {
    inner: Mutex<Writer>,
}

fn config(pi: &str, session_id: Option<String>, fsync: bool) -> PyResult<WriterConfig> {
    let mut config = WriterConfig::default()
        .profile(pi_version(pi)?.write_profile())
        .fsync(fsync);
    if let Some(id) = session_id {
        config = config.session_id(id);
    }
    Ok(config)
}

impl SessionWriter {
    fn new(writer: Writer) -> SessionWriter {
        SessionWriter {
            inner: Mutex::new(writer),
        }
    }

    /// The writer; an error when an earlier operation panicked half-way.
    fn lock(&self) -> Result<MutexGuard<'_, Writer>, Failure> {
        self.inner.lock().map_err(|_| {
            Failure::new(
                "writer-broken",
                "an earlier operation of this writer failed half-way; open the file again",
            )
        })
    }

    /// Runs `f` on the writer without the GIL.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Writer) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        Ok(py.detach(|| f(&mut *self.lock()?))?)
    }
}

#[pymethods]
impl SessionWriter {
    /// A new session for `cwd` in `session_dir` (default: pi's directory for `cwd`), written
    /// at its first message that starts a conversation (pi's `SessionManager.create`).
    #[staticmethod]
    #[pyo3(signature = (cwd, session_dir = None, *, pi = "1.5", session_id = None, fsync = false))]
    fn create(
        py: Python<'_>,
        cwd: &str,
        session_dir: Option<PathBuf>,
        pi: &str,
        session_id: Option<String>,
        fsync: bool,
    ) -> PyResult<SessionWriter> {
        let config = config(pi, session_id, fsync)?;
        let writer = py.detach(|| {
            Writer::create(cwd, session_dir.as_deref(), config).map_err(Failure::from)
        })?;
        Ok(SessionWriter::new(writer))
    }

    /// A session that is never written to disk (pi's `SessionManager.inMemory`).
    #[staticmethod]
    #[pyo3(signature = (cwd, *, pi = "1.5", session_id = None))]
    fn in_memory(cwd: &str, pi: &str, session_id: Option<String>) -> PyResult<SessionWriter> {
        let config = config(pi, session_id, false)?;
        Ok(SessionWriter::new(
            Writer::in_memory(cwd, config).map_err(Failure::from)?,
        ))
    }

    /// Opens a session file to append to, taking its lock (pi's `SessionManager.open`): a
    /// missing file becomes a new session written there; a v1 or v2 file is migrated and
    /// rewritten atomically; a file that is not a session is refused.
    #[staticmethod]
    #[pyo3(signature = (path, *, pi = "1.5", fsync = false))]
    fn open(py: Python<'_>, path: PathBuf, pi: &str, fsync: bool) -> PyResult<SessionWriter> {
        let config = config(pi, None, fsync)?;
        let path = checked(&path)?;
        let writer = py.detach(|| Writer::open(&path, config).map_err(Failure::from))?;
        Ok(SessionWriter::new(writer))
    }

    /// Copies the session at `source` into a new session of `cwd` in `session_dir`
    /// (default: pi's directory for `cwd`) whose header names `source` as its parent, and
    /// opens it (pi's `SessionManager.forkFrom`).
    #[staticmethod]
    #[pyo3(signature = (source, cwd, session_dir = None, *, pi = "1.5", session_id = None, fsync = false))]
    fn fork(
        py: Python<'_>,
        source: PathBuf,
        cwd: &str,
        session_dir: Option<PathBuf>,
        pi: &str,
        session_id: Option<String>,
        fsync: bool,
    ) -> PyResult<SessionWriter> {
        let config = config(pi, session_id, fsync)?;
        let source = checked(&source)?;
        let writer = py.detach(|| {
            Writer::fork_from(&source, cwd, session_dir.as_deref(), config).map_err(Failure::from)
        })?;
        Ok(SessionWriter::new(writer))
    }

    /// Appends a whole entry (a dict): `id`, `parentId` (the leaf) and `timestamp` (now)
    /// are filled in when absent; the rest is written as given. Returns the entry's id.
    fn append(&self, py: Python<'_>, entry: &Bound<'_, PyDict>) -> PyResult<String> {
        let entry = to_js(py, entry.as_any())?;
        self.with(py, |w| Ok(w.append_entry(entry)?))
    }

    /// Appends a message (a dict, written exactly as given) as a `message` entry (pi's
    /// `appendMessage`). Returns the entry's id.
    fn append_message(&self, py: Python<'_>, message: &Bound<'_, PyDict>) -> PyResult<String> {
        let message = to_js(py, message.as_any())?;
        self.with(py, |w| Ok(w.append_message_value(&message)?))
    }

    /// Moves the leaf to `entry_id`: the next entry continues from there (pi's `branch`).
    fn branch(&self, py: Python<'_>, entry_id: &str) -> PyResult<()> {
        self.with(py, |w| Ok(w.branch(entry_id)?))
    }

    /// Starts a new session holding only the path from the root to `leaf_id` (pi's
    /// `createBranchedSession`), written to `path` when given (which must not exist),
    /// else next to this one; the writer continues in it. Returns the new file's path
    /// (`None` in memory).
    #[pyo3(signature = (leaf_id, path = None))]
    fn branched_session(
        &self,
        py: Python<'_>,
        leaf_id: &str,
        path: Option<PathBuf>,
    ) -> PyResult<Option<PathBuf>> {
        self.with(py, |w| match path {
            Some(path) => Ok(Some(w.create_branched_session_at(leaf_id, &path)?)),
            None => Ok(w.create_branched_session(leaf_id)?),
        })
    }

    /// Writes the file now, even before the conversation starts (pi waits for it).
    fn write_now(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |w| Ok(w.write_now()?))
    }

    /// The session as pi would write it: its JSONL bytes.
    fn to_jsonl<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(py, |w| Ok(w.to_jsonl()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The session file (`None` in memory).
    #[getter]
    fn path(&self) -> PyResult<Option<PathBuf>> {
        Ok(self.lock()?.path().map(PathBuf::from))
    }

    /// The session's id.
    #[getter]
    fn session_id(&self) -> PyResult<String> {
        Ok(self.lock()?.session_id().to_owned())
    }

    /// The session's working directory.
    #[getter]
    fn cwd(&self) -> PyResult<String> {
        Ok(self.lock()?.cwd().to_owned())
    }

    /// The id of the entry the next one continues from (`None` before the first).
    #[getter]
    fn leaf_id(&self) -> PyResult<Option<String>> {
        Ok(self.lock()?.leaf_id())
    }

    /// The number of entries.
    #[getter]
    fn entry_count(&self) -> PyResult<usize> {
        Ok(self.lock()?.entry_count())
    }

    /// Whether the file has been written (pi writes it at the first conversation).
    #[getter]
    fn is_written(&self) -> PyResult<bool> {
        Ok(self.lock()?.is_written())
    }

    /// Whose rules the writer follows (`"0.73"`, `"0.87"`, `"1.5"`).
    #[getter]
    fn pi(&self) -> PyResult<&'static str> {
        Ok(self.lock()?.profile().short_name())
    }

    fn __repr__(&self) -> PyResult<String> {
        let w = self.lock()?;
        Ok(format!(
            "pi_session.SessionWriter(session_id={:?}, path={:?})",
            w.session_id(),
            w.path().map(|p| p.display().to_string())
        ))
    }
}
