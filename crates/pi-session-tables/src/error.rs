//! What can go wrong while writing the tables; every path shown as `pi_session_fs::display`
//! shows names from outside.

use pi_session_fs::display;
use std::fmt;
use std::path::PathBuf;

/// An error writing the tables; every one names the file or directory it is about.
#[derive(Debug)]
pub enum Error {
    /// A file system operation failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The Parquet writer failed.
    Parquet {
        /// The file being written.
        path: PathBuf,
        /// What failed.
        source: parquet::errors::ParquetError,
    },
    /// The file to write already exists: nothing is ever overwritten.
    Exists(PathBuf),
    /// The export was interrupted (a signal) before this file was written.
    Interrupted(PathBuf),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }

    pub(crate) fn parquet(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(parquet::errors::ParquetError) -> Error {
        let path = path.into();
        move |source| Error::Parquet { path, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", display::path(path)),
            Error::Parquet { path, source } => write!(f, "{}: {source}", display::path(path)),
            Error::Exists(path) => write!(
                f,
                "{}: already exists (nothing is overwritten)",
                display::path(path)
            ),
            Error::Interrupted(path) => write!(
                f,
                "{}: not written: the export was interrupted",
                display::path(path)
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Parquet { source, .. } => Some(source),
            Error::Exists(_) | Error::Interrupted(_) => None,
        }
    }
}
