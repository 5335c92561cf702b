//! A session that owns its bytes: [`Session::open`] (or [`super::Loader::open`]) reads a
//! file, [`OwnedSession::new`] takes a buffer, and [`OwnedSession::session`] lends the loaded
//! [`Session`] that borrows them (the pair is one self-referential value, built with
//! `self_cell`).
//!
//! A file is read as the CLI reads it (`pi_session_fs::input`): mapped when it is large, its
//! pages let go as the loader is done with them, so that a session of gigabytes does not take
//! its size in memory; a file that shrinks while it is read is an error, not a crash.

use super::Session;
use super::load::LoadError;
use crate::migrate::IdGenerator;
use crate::{Dialect, PiVersion};
use pi_session_fs::input::Input;
use self_cell::self_cell;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

self_cell!(
    struct Cell {
        owner: Input,
        #[covariant]
        dependent: Session,
    }
);

/// A loaded session together with the bytes it was loaded from.
///
/// ```no_run
/// use pi_session_format::{Leaf, PiVersion, Session};
///
/// let file = Session::open("session.jsonl", PiVersion::V0_73)?;
/// let session = file.session();
/// for message in session.to_llm(Leaf::Current)? {
///     println!("{:?}", message.role());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OwnedSession {
    cell: Cell,
}

impl fmt::Debug for OwnedSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSession")
            .field("bytes", &self.bytes().len())
            .field("session", self.session())
            .finish()
    }
}

impl OwnedSession {
    /// Loads `bytes` with `pi`'s rules ([`Session::from_bytes`]), keeping them.
    pub fn new(bytes: Vec<u8>, pi: PiVersion) -> Result<OwnedSession, LoadError> {
        Session::loader(pi).load_owned(bytes)
    }

    /// Loads `bytes` with `pi`'s rules and `ids` for a v1 file's entries (see
    /// [`super::Loader::load_owned`]).
    pub(super) fn load(
        bytes: Vec<u8>,
        pi: PiVersion,
        dialect: Option<Dialect>,
        ids: &mut dyn IdGenerator,
    ) -> Result<OwnedSession, LoadError> {
        let cell = Cell::try_new(Input::Owned(bytes, None), |input| {
            Session::loader(pi)
                .with_dialect(dialect)
                .ids(ids)
                .load(input.bytes())
        })?;
        Ok(OwnedSession { cell })
    }

    /// Reads `path` and loads it (see [`super::Loader::open`]).
    pub(super) fn open(
        path: &Path,
        pi: PiVersion,
        dialect: Option<Dialect>,
        ids: &mut dyn IdGenerator,
    ) -> Result<OwnedSession, OpenError> {
        let io_error = |source| OpenError::Io {
            path: path.to_owned(),
            source,
        };
        let input = Input::open(path).map_err(io_error)?;
        let mtime = (!input.is_stdin()).then(|| input.modified_ms());
        let cell = Cell::try_new(input, |input| {
            let mut session = Session::loader(pi)
                .with_dialect(dialect)
                .ids(ids)
                .releasing(&|range| input.release(range))
                .load(input.bytes())?;
            session.mtime_ms = mtime;
            Ok(session)
        })
        .map_err(|source| OpenError::Load {
            path: path.to_owned(),
            source,
        })?;
        // A file another program truncated while it was read: what was loaded is not it.
        cell.borrow_owner().verify().map_err(io_error)?;
        Ok(OwnedSession { cell })
    }

    /// The loaded session.
    pub fn session(&self) -> &Session<'_> {
        self.cell.borrow_dependent()
    }

    /// The bytes it was loaded from.
    pub fn bytes(&self) -> &[u8] {
        self.cell.borrow_owner().bytes()
    }
}

impl Session<'_> {
    /// Reads the file at `path` and loads it with `pi`'s rules: `Session::loader(pi).open(path)`
    /// ([`super::Loader::open`] says how the file is read). Its modification time is kept for
    /// [`Session::info`]. The file is not changed, even when pi would rewrite it (a v1/v2 file
    /// is migrated in memory only).
    pub fn open(path: impl AsRef<Path>, pi: PiVersion) -> Result<OwnedSession, OpenError> {
        Session::loader(pi).open(path)
    }
}

/// Why [`Session::open`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be read.
    Io {
        /// The path given.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The file was read but is not a session pi can open.
    Load {
        /// The path given.
        path: PathBuf,
        /// Why.
        source: LoadError,
    },
}

impl OpenError {
    /// A stable name for the error, the same in every binding: the I/O error's
    /// (`pi_session_fs::io_code`: `not-found`, `is-a-directory`, …, `io`) or the load
    /// error's ([`LoadError::code`]).
    pub fn code(&self) -> &'static str {
        match self {
            OpenError::Io { source, .. } => pi_session_fs::io_code(source),
            OpenError::Load { source, .. } => source.code(),
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            OpenError::Load { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Io { source, .. } => Some(source),
            OpenError::Load { source, .. } => Some(source),
        }
    }
}
