//! A session that owns its bytes: [`Session::open`] reads a file, [`OwnedSession::new`]
//! takes a buffer, and [`OwnedSession::session`] lends the loaded [`Session`] that borrows
//! them (the pair is one self-referential value, built with `self_cell`).
//!
//! The file is read into memory whole: simple and safe (a file another process truncates
//! while it is read cannot fault). For sessions of gigabytes, map the file and load it
//! with [`Session::load_reading`], as the `pi-session` CLI does.

use super::Session;
use super::load::LoadError;
use crate::PiVersion;
use crate::info::mtime_ms;
use self_cell::self_cell;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

self_cell!(
    struct Cell {
        owner: Vec<u8>,
        #[covariant]
        dependent: Session,
    }

    impl {Debug}
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
#[derive(Debug)]
pub struct OwnedSession {
    cell: Cell,
}

impl OwnedSession {
    /// Loads `bytes` with `pi`'s rules ([`Session::from_bytes`]), keeping them.
    pub fn new(bytes: Vec<u8>, pi: PiVersion) -> Result<OwnedSession, LoadError> {
        Self::load(bytes, pi, None)
    }

    /// [`OwnedSession::new`] with the file's modification time.
    fn load(bytes: Vec<u8>, pi: PiVersion, mtime_ms: Option<f64>) -> Result<Self, LoadError> {
        let cell = Cell::try_new(bytes, |bytes| {
            let mut session = Session::from_bytes(bytes, pi)?;
            session.mtime_ms = mtime_ms;
            Ok(session)
        })?;
        Ok(OwnedSession { cell })
    }

    /// The loaded session.
    pub fn session(&self) -> &Session<'_> {
        self.cell.borrow_dependent()
    }

    /// The bytes it was loaded from.
    pub fn bytes(&self) -> &[u8] {
        self.cell.borrow_owner()
    }
}

impl Session<'_> {
    /// Reads the file at `path` and loads it with `pi`'s rules ([`Session::from_bytes`]);
    /// its modification time is kept for [`Session::info`]. The file is not changed, even
    /// when pi would rewrite it (a v1/v2 file is migrated in memory only).
    pub fn open(path: impl AsRef<Path>, pi: PiVersion) -> Result<OwnedSession, OpenError> {
        let path = path.as_ref();
        let io_error = |source| OpenError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io_error)?;
        let metadata = file.metadata().map_err(io_error)?;
        if metadata.is_dir() {
            return Err(io_error(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a directory, not a session file",
            )));
        }
        // The size is a hint (a FIFO or procfs says 0, a sparse file can claim terabytes): a
        // reservation that cannot be had is an error, not an abort.
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(usize::try_from(metadata.len()).unwrap_or(usize::MAX))
            .map_err(|e| io_error(io::Error::new(io::ErrorKind::OutOfMemory, e)))?;
        io::Read::read_to_end(&mut &file, &mut bytes).map_err(io_error)?;
        let mtime = metadata.modified().ok().map(mtime_ms);
        OwnedSession::load(bytes, pi, mtime).map_err(|source| OpenError::Load {
            path: path.to_owned(),
            source,
        })
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
