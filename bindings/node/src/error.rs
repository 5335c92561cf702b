//! Errors as JavaScript sees them: every failure is an `Error` whose `code` says what kind of
//! failure it is, stably: the library's own codes for what the library reports (`code()` of
//! its errors, the same as the Python binding's: a validator diagnostic code such as `PS0102`
//! where the catalogue names the failure, a kind such as `not-found` or `locked` otherwise),
//! and Node-style `ERR_…` codes for the binding's own conditions (an argument, an answer too
//! long for a V8 string, a panic: caught before it reaches the N-API boundary, where it would
//! abort the process). index.d.ts lists them all.

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

/// The longest string V8 makes (`v8::String::kMaxLength` on 64-bit platforms), in UTF-16
/// code units.
pub(crate) const V8_MAX_STRING: usize = (1 << 29) - 24;

/// [`guard`] for an answer that crosses as one string: an answer longer than V8's longest
/// string is an `ERR_STRING_TOO_LONG` that names `what` and its size, rather than N-API's
/// bare `GenericFailure` ("Failed to convert rust `String` into napi `string`").
pub(crate) fn guard_text(what: &str, body: impl FnOnce() -> Result<String>) -> Result<String> {
    let text = guard(body)?;
    // UTF-16 is never longer than UTF-8 in units: count only when the bytes are over.
    if text.len() > V8_MAX_STRING && text.encode_utf16().count() > V8_MAX_STRING {
        return Err(failure(
            "ERR_STRING_TOO_LONG",
            format!(
                "{what} is {} MB of JSON text, more than the longest string V8 can hold (512 MiB): \
                 ask for less (a branch's context, `llm()` of a compacted session) or use the \
                 command line (`pi-session context FILE > out.json`), which streams it",
                text.len() / 1_000_000
            ),
        ));
    }
    Ok(text)
}

/// The library's name for an I/O error (`pi_session_fs::io_code`: `not-found`,
/// `is-a-directory`, …; `io` for the rest, such as a file that shrank while it was read).
pub(crate) fn io_code(e: &io::Error) -> &'static str {
    pi_session_fs::io_code(e)
}

/// An I/O error about `what` (a path, already shown).
pub(crate) fn io_error(e: &io::Error, what: &str) -> Error {
    failure(io_code(e), format!("{what}: {e}"))
}

/// A load error (of bytes without a path): `PS0101`, `PS0102`.
pub(crate) fn load_error(e: &LoadError) -> Error {
    failure(e.code(), e.to_string())
}

/// Why a path could not be opened as a session.
pub(crate) fn open_error(e: &OpenError) -> Error {
    failure(e.code(), e.to_string())
}

/// A parent cycle on the path (pi loops forever there): `PS0213`, `PS0214`.
pub(crate) fn cycle_error(e: &CycleError) -> Error {
    failure(e.code(), e.to_string())
}

/// An entry that does not fit the typed model: `entry-not-typed`.
pub(crate) fn entry_error(e: &EntryError) -> Error {
    failure(e.code(), e.to_string())
}

/// Why the writer refused or failed; the writer is unchanged.
pub(crate) fn write_error(e: &WriteError) -> Error {
    failure(e.code(), e.to_string())
}
