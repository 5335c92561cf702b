//! `PiSessionError`, the one exception of the module, with a `code`: the validator's diagnostic
//! code where the failure is one the catalogue names (`PS0101`: no header, `PS0102`: not a
//! header, `PS0213`/`PS0214`: a parent cycle), the kind of error otherwise (`not-found`,
//! `not-a-file`, `locked`, …). Arguments of the wrong kind are Python's own `TypeError` and
//! `ValueError`.

use pi_session_format::session::{EntryError, LoadError, OpenError};
use pi_session_format::{CycleError, WriteError};
use pi_session_fs::FileError;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::io;

pyo3::create_exception!(
    pi_session,
    PiSessionError,
    PyException,
    "A session that cannot be read or written as asked; `code` says why (a diagnostic code such as `PS0102`, or an error kind such as `not-found`)."
);

pyo3::create_exception!(
    pi_session,
    PiSessionWarning,
    pyo3::exceptions::PyUserWarning,
    "A file skipped by `tables()` (it is not a session, or could not be read)."
);

/// A failure with its code, turned into a `PiSessionError` at the boundary.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: String,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        Python::attach(|py| {
            let err = PiSessionError::new_err(f.message);
            // Setting an attribute on a fresh exception instance does not fail.
            let _ = err.value(py).setattr("code", f.code);
            err
        })
    }
}

/// The kind of an I/O error.
pub(crate) fn io_code(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::NotFound => "not-found",
        io::ErrorKind::PermissionDenied => "permission-denied",
        io::ErrorKind::IsADirectory => "is-a-directory",
        io::ErrorKind::OutOfMemory => "too-large",
        _ => "io",
    }
}

/// The diagnostic code of a file that is not a session.
fn load_code(e: &LoadError) -> &'static str {
    match e {
        LoadError::Empty { .. } => "PS0101",
        LoadError::InvalidHeader { .. } => "PS0102",
        _ => "not-a-session",
    }
}

impl From<OpenError> for Failure {
    fn from(e: OpenError) -> Failure {
        let code = match &e {
            OpenError::Io { source, .. } => io_code(source),
            OpenError::Load { source, .. } => load_code(source),
            _ => "io",
        };
        Failure::new(code, e.to_string())
    }
}

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Failure {
        Failure::new(load_code(&e), e.to_string())
    }
}

impl From<CycleError> for Failure {
    fn from(e: CycleError) -> Failure {
        // One entry that is its own parent is a self-parent; more, a parent cycle.
        let code = if e.cycle.len() == 1 {
            "PS0214"
        } else {
            "PS0213"
        };
        Failure::new(code, e.to_string())
    }
}

impl From<EntryError> for Failure {
    fn from(e: EntryError) -> Failure {
        Failure::new("entry-not-typed", e.to_string())
    }
}

impl From<WriteError> for Failure {
    fn from(e: WriteError) -> Failure {
        let code = match &e {
            WriteError::NotFound(_) => "entry-not-found",
            WriteError::NotOnBranch(_) => "not-on-branch",
            WriteError::NotEditable(_) => "not-editable",
            WriteError::BadReplacement | WriteError::BadReplacementContent(_) => "bad-replacement",
            WriteError::BadMessage(_) => "bad-message",
            WriteError::BadEntry(_) => "bad-entry",
            WriteError::InvalidSessionId(_) => "invalid-session-id",
            WriteError::Unsupported { .. } => "unsupported",
            WriteError::MissingArgument { .. } => "missing-argument",
            WriteError::Cycle(_) => "PS0213",
            WriteError::Type(_) => "type-error",
            WriteError::NotASession { .. } => "not-a-session",
            WriteError::File(f) => file_code(f),
            WriteError::OldVersion { .. } => "old-version",
            _ => "write",
        };
        Failure::new(code, e.to_string())
    }
}

fn file_code(e: &FileError) -> &'static str {
    match e {
        FileError::Locked(_) => "locked",
        FileError::NotAFile(_) => "not-a-file",
        FileError::ReadOnly { .. } => "read-only",
        FileError::Partial { .. } => "partial-write",
        FileError::Refused(..) => "refused",
        FileError::Io { source, .. } => io_code(source),
        _ => "io",
    }
}
