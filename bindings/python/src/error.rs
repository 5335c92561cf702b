//! `PiSessionError`, the one exception of the module, with a `code`: the validator's diagnostic
//! code where the failure is one the catalogue names (`PS0101`: no header, `PS0102`: not a
//! header, `PS0213`/`PS0214`: a parent cycle), the kind of error otherwise (`not-found`,
//! `not-a-file`, `locked`, …): the library's own codes (`code()` of its errors, shared with the
//! Node binding). Arguments of the wrong kind are Python's own `TypeError` and
//! `ValueError`.

use pi_session_format::session::{EntryError, LoadError, OpenError};
use pi_session_format::{CycleError, WriteError};
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

/// The kind of an I/O error (`pi_session_fs::io_code`).
pub(crate) fn io_code(e: &io::Error) -> &'static str {
    pi_session_fs::io_code(e)
}

impl From<OpenError> for Failure {
    fn from(e: OpenError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}

impl From<CycleError> for Failure {
    fn from(e: CycleError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}

impl From<EntryError> for Failure {
    fn from(e: EntryError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}

impl From<WriteError> for Failure {
    fn from(e: WriteError) -> Failure {
        Failure::new(e.code(), e.to_string())
    }
}
