//! The file layer of pi-session: every file the project writes goes through here, so that
//! each guarantee is made once.
//!
//! - [`replace`]: replacing a file atomically, keeping its mode, owner, group and extended
//!   attributes (or refusing what cannot be kept), under the writers' lock;
//! - [`publish`](mod@publish): a new file, complete and synced before it gets its name;
//! - [`append`]: [`Appender`], locked appends that are all or nothing (the [`journal`]
//!   covers a killed process);
//! - [`input`]: reading a session, mapped or read, a stream up to a cap ([`size`] reads
//!   the sizes people write), a file that shrinks under the map caught, not a crash;
//! - [`discover`]: where pi's sessions are (its agent directory, as pi finds it) and which
//!   files of a directory are sessions;
//! - [`display`]: names and values from outside shown safely in messages;
//! - [`process`]: whether a process still runs, a child's process group killed, the stop
//!   signals turned into ordinary code (an export's clean-up).
//!
//! The system calls `std` does not offer are in `sys`; it and [`input`] (the mapping, and
//! its `SIGBUS` guard) are the only modules of the project with `unsafe` code, but for the
//! SIMD intrinsics of `pi-session-json`'s scanner (and `xtask bench`'s `wait4`, a tool of ours).
//! Temporary files that leave nothing behind are [`temp`] (the Parquet export's part files
//! too); copying metadata is `metadata`.

pub mod append;
pub mod discover;
pub mod display;
pub mod input;
pub mod journal;
mod metadata;
pub mod omp_store;
pub mod process;
pub mod publish;
pub mod replace;
pub mod size;
mod sys;
pub mod temp;

pub use append::{Appender, FileError};
pub use publish::{publish, publish_private, publish_with, write_new, write_new_with};
pub use replace::{Done, Job, Options, Prepared, ReplaceError, Snapshot, prepare};

/// A stable name for an I/O error's kind, the same in every binding's errors: `not-found`,
/// `permission-denied`, `is-a-directory`, `not-a-directory`, `already-exists`,
/// `invalid-filename`, `file-too-large`, `read-only-filesystem`, `storage-full`,
/// `would-block`, `interrupted`, `out-of-memory`, `unsupported`; `io` for the rest (such as
/// a file that shrank while it was read).
pub fn io_code(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => "not-found",
        K::PermissionDenied => "permission-denied",
        K::IsADirectory => "is-a-directory",
        K::NotADirectory => "not-a-directory",
        K::AlreadyExists => "already-exists",
        K::InvalidFilename => "invalid-filename",
        K::FileTooLarge => "file-too-large",
        K::ReadOnlyFilesystem => "read-only-filesystem",
        K::StorageFull => "storage-full",
        K::WouldBlock => "would-block",
        K::Interrupted => "interrupted",
        K::OutOfMemory => "out-of-memory",
        K::Unsupported => "unsupported",
        _ => "io",
    }
}

/// Whether standard output is open: with it closed (`>&-`), Rust's `std` drops what is
/// written there without an error, so a command whose output is the point (a path) asks first.
pub fn stdout_is_open() -> bool {
    sys::fd_is_open(1)
}

/// The effective user id of this process (tests and messages about permissions).
pub fn euid() -> u32 {
    sys::euid()
}

/// A modification time as JavaScript's `Date` counts it: milliseconds since 1970 (negative
/// before), as pi's `stat().mtime.getTime()`.
pub fn mtime_ms(mtime: std::time::SystemTime) -> f64 {
    match mtime.duration_since(std::time::UNIX_EPOCH) {
        Ok(after) => after.as_millis() as f64,
        Err(before) => -(before.duration().as_millis() as f64),
    }
}
