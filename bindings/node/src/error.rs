//! Errors as JavaScript sees them: every failure is an `Error` whose `code` says what kind of
//! failure it is, stably (Node's errno names for the file system, `ERR_…` for the rest), and a
//! panic is caught before it reaches the N-API boundary (where it would abort the process) and
//! thrown as an `Error` with the code `ERR_PANIC`.
//!
//! The codes are the binding's names for the library's error kinds; index.d.ts lists them.

use pi_session_format::write::FileError;
use pi_session_format::{CycleError, EntryError, LoadError, OpenError, WriteError};
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// An error thrown into JavaScript: `Error(reason)` with `code` = the status string.
pub(crate) type Error = napi::Error<String>;

/// What every export returns.
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// An `Error` with this code and message.
pub(crate) fn failure(code: &str, message: impl Into<String>) -> Error {
    napi::Error::new(code.to_owned(), message.into())
}

/// Runs `body`, turning a panic into an `Error` with the code `ERR_PANIC`: a panic must never
/// unwind into N-API (Rust aborts the process there). Panics of the library's worker threads
/// reach this thread through rayon, and are caught here too.
pub(crate) fn guard<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".to_owned());
            Err(failure(
                "ERR_PANIC",
                format!("pi-session: internal error (a bug: please report it): {what}"),
            ))
        }
    }
}

/// Node's name for an I/O error (`ENOENT`, `EISDIR`, …), by its kind; `EIO` for the rest
/// (such as a file that shrank while it was read).
pub(crate) fn io_code(e: &io::Error) -> &'static str {
    use io::ErrorKind as K;
    match e.kind() {
        K::NotFound => "ENOENT",
        K::PermissionDenied => "EACCES",
        K::IsADirectory => "EISDIR",
        K::NotADirectory => "ENOTDIR",
        K::AlreadyExists => "EEXIST",
        K::InvalidFilename => "ENAMETOOLONG",
        K::FileTooLarge => "EFBIG",
        K::ReadOnlyFilesystem => "EROFS",
        K::StorageFull => "ENOSPC",
        K::WouldBlock => "EAGAIN",
        K::Interrupted => "EINTR",
        K::OutOfMemory => "ENOMEM",
        K::Unsupported => "ENOTSUP",
        _ => "EIO",
    }
}

/// An I/O error about `what` (a path, already shown).
pub(crate) fn io_error(e: &io::Error, what: &str) -> Error {
    failure(io_code(e), format!("{what}: {e}"))
}

/// The code of a load error: the file is not a session pi can open.
pub(crate) fn load_code(e: &LoadError) -> &'static str {
    match e {
        LoadError::Empty { .. } => "ERR_EMPTY_SESSION",
        LoadError::InvalidHeader { .. } => "ERR_INVALID_HEADER",
        _ => "ERR_NOT_A_SESSION",
    }
}

/// A load error (of bytes without a path).
pub(crate) fn load_error(e: &LoadError) -> Error {
    failure(load_code(e), e.to_string())
}

/// Why a path could not be opened as a session.
pub(crate) fn open_error(e: &OpenError) -> Error {
    match e {
        OpenError::Io { source, .. } => failure(io_code(source), e.to_string()),
        OpenError::Load { source, .. } => failure(load_code(source), e.to_string()),
        _ => failure("EIO", e.to_string()),
    }
}

/// A parent cycle on the path (pi loops forever there).
pub(crate) fn cycle_error(e: &CycleError) -> Error {
    failure("ERR_PARENT_CYCLE", e.to_string())
}

/// An entry that does not fit the typed model.
pub(crate) fn entry_error(e: &EntryError) -> Error {
    failure("ERR_ENTRY_SHAPE", e.to_string())
}

/// Why the writer refused or failed; the writer is unchanged.
pub(crate) fn write_error(e: &WriteError) -> Error {
    let code = match e {
        WriteError::NotFound(_) => "ERR_ENTRY_NOT_FOUND",
        WriteError::NotOnBranch(_) => "ERR_NOT_ON_BRANCH",
        WriteError::NotEditable(_) => "ERR_NOT_EDITABLE",
        WriteError::BadReplacement | WriteError::BadReplacementContent(_) => "ERR_BAD_REPLACEMENT",
        WriteError::BadMessage(_) => "ERR_BAD_MESSAGE",
        WriteError::BadEntry(_) => "ERR_BAD_ENTRY",
        WriteError::InvalidSessionId(_) => "ERR_INVALID_SESSION_ID",
        WriteError::Unsupported { .. } => "ERR_UNSUPPORTED",
        WriteError::MissingArgument { .. } => "ERR_MISSING_ARGUMENT",
        WriteError::Cycle(_) => "ERR_PARENT_CYCLE",
        WriteError::Type(_) => "ERR_PI_TYPE_ERROR",
        WriteError::NotASession { .. } => "ERR_NOT_A_SESSION",
        WriteError::OldVersion { .. } => "ERR_OLD_VERSION",
        WriteError::File(file) => file_code(file),
        _ => "ERR_WRITE",
    };
    failure(code, e.to_string())
}

/// The code of a file error of the writer.
fn file_code(e: &FileError) -> &'static str {
    match e {
        FileError::Locked(_) => "ERR_LOCKED",
        FileError::NotAFile(_) => "ERR_NOT_A_FILE",
        FileError::ReadOnly { .. } => "ERR_READ_ONLY",
        FileError::KeptReplaced(_) => "ERR_FILE_REPLACED",
        FileError::Partial { .. } => "ERR_PARTIAL_WRITE",
        FileError::Refused(..) => "ERR_REFUSED",
        FileError::Io { source, .. } => io_code(source),
    }
}
