//! The writer's file: [`Appender`] appends whole lines with `O_APPEND` (one `write` per
//! line, optionally synced) under an advisory lock, fences a torn last line, and cuts a
//! partial line off again when a write fails; [`replace`] writes a whole file atomically
//! (temporary file, sync, rename, sync of the directory).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, IoSlice, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why a file could not be written.
#[derive(Debug)]
pub enum FileError {
    /// Another writer (ours) holds the file's lock.
    Locked(PathBuf),
    /// The path is not a regular file (a directory, FIFO, device, …).
    NotAFile(PathBuf),
    /// An I/O error, with what was being done.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed ("append to", "create", …).
        doing: &'static str,
        /// The error.
        source: io::Error,
    },
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Locked(path) => write!(
                f,
                "{}: another writer holds this session (its lock is taken); close it first, or write to a fork (`pi-session fork`)",
                path.display()
            ),
            FileError::NotAFile(path) => write!(
                f,
                "{}: not a regular file; sessions are written to regular files only",
                path.display()
            ),
            FileError::Io {
                path,
                doing,
                source,
            } => {
                write!(f, "{}: cannot {doing} the file: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io_error<'p>(path: &'p Path, doing: &'static str) -> impl FnOnce(io::Error) -> FileError + 'p {
    move |source| FileError::Io {
        path: path.to_owned(),
        doing,
        source,
    }
}

/// A session file open for appending, locked for as long as it is held.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
    /// The file's length after the last complete write.
    len: u64,
    /// Whether the file ends without a newline (a torn last line): the next append starts
    /// with one.
    needs_fence: bool,
    fsync: bool,
}

fn lock(file: &File, path: &Path) -> Result<(), FileError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(FileError::Locked(path.to_owned())),
        Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
        Err(TryLockError::Error(e)) => Err(io_error(path, "lock")(e)),
    }
}

impl Appender {
    /// Creates `path` (which must not exist) holding `content`: the first write of a new
    /// session. On failure the half-written file is removed again.
    pub fn create_new(path: &Path, content: &[u8], fsync: bool) -> Result<Appender, FileError> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(io_error(path, "create"))?;
        let written = lock(&file, path).and_then(|()| {
            let mut appender = Appender {
                file,
                path: path.to_owned(),
                len: 0,
                needs_fence: false,
                fsync,
            };
            appender.write_whole(&[content])?;
            Ok(appender)
        });
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// Opens an existing session file for appending and takes its lock.
    pub fn open_existing(path: &Path, fsync: bool) -> Result<Appender, FileError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(io_error(path, "open"))?;
        let meta = file.metadata().map_err(io_error(path, "open"))?;
        if !meta.is_file() {
            return Err(FileError::NotAFile(path.to_owned()));
        }
        lock(&file, path)?;
        let len = meta.len();
        let needs_fence = len > 0 && {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(io_error(path, "read"))?;
            last[0] != b'\n'
        };
        Ok(Appender {
            file,
            path: path.to_owned(),
            len,
            needs_fence,
            fsync,
        })
    }

    /// Appends `lines` (complete lines, each ending in a newline) in one write, after a
    /// newline when the file ended in a torn line. When the write fails the file is cut back
    /// to its previous length, so that no partial line stays behind.
    pub fn append(&mut self, lines: &[u8]) -> Result<(), FileError> {
        self.append_parts(lines, b"")
    }

    /// Appends one line, given without its newline: [`Appender::append`] of `line` and a
    /// newline, still in one write (`writev`), without copying the line.
    pub fn append_line(&mut self, line: &[u8]) -> Result<(), FileError> {
        self.append_parts(line, b"\n")
    }

    fn append_parts(&mut self, content: &[u8], end: &[u8]) -> Result<(), FileError> {
        let fence: &[u8] = if self.needs_fence { b"\n" } else { b"" };
        self.write_whole(&[fence, content, end])?;
        self.needs_fence = false;
        Ok(())
    }

    fn write_whole(&mut self, parts: &[&[u8]]) -> Result<(), FileError> {
        let written = write_all_vectored(&mut self.file, parts).and_then(|()| {
            if self.fsync {
                self.file.sync_data()
            } else {
                Ok(())
            }
        });
        match written {
            Ok(()) => {
                self.len += parts.iter().map(|p| p.len() as u64).sum::<u64>();
                Ok(())
            }
            Err(e) => {
                // Cut a partial line off; if even that fails, the next append is fenced.
                if self.file.set_len(self.len).is_err() {
                    self.needs_fence = true;
                }
                Err(io_error(&self.path, "append to")(e))
            }
        }
    }
}

/// `write_all` of the concatenation of `parts` (at most three), with as few `writev` calls as
/// the kernel allows (one, for a regular file).
fn write_all_vectored(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices = [IoSlice::new(&[]), IoSlice::new(&[]), IoSlice::new(&[])];
    let mut count = 0;
    for part in parts.iter().filter(|p| !p.is_empty()) {
        let slot = slices
            .get_mut(count)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "more than three parts"))?;
        *slot = IoSlice::new(part);
        count += 1;
    }
    let mut rest = &mut slices[..count];
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes a new file `path` holding `content`, atomically, never replacing anything: the
/// content goes to a temporary file in the same directory, synced, then linked to `path`
/// (which fails when `path` exists) and the temporary name removed.
pub fn publish_new(path: &Path, content: &[u8]) -> Result<(), FileError> {
    let (temp_path, mut temp) = temporary(path)?;
    let written = temp
        .write_all(content)
        .and_then(|()| temp.sync_all())
        .and_then(|()| std::fs::hard_link(&temp_path, path));
    let _ = std::fs::remove_file(&temp_path);
    written.map_err(io_error(path, "create"))?;
    sync_parent(path);
    Ok(())
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn sync_parent(path: &Path) {
    if let Ok(d) = File::open(parent_dir(path)) {
        let _ = d.sync_all();
    }
}

/// A new temporary file next to `path`: `.NAME.tmp-PID-N`.
fn temporary(path: &Path) -> Result<(PathBuf, File), FileError> {
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempt = 0u32;
    loop {
        let candidate = dir.join(format!(".{name}.tmp-{}-{attempt}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(e) => return Err(io_error(path, "create a temporary file next to")(e)),
        }
    }
}

/// Writes `content` to `path` atomically: into a new temporary file in the same directory,
/// synced, renamed over `path`, and the directory synced. A reader sees the old file or the
/// new one, never a mix; a crash leaves at most a `.NAME.tmp-…` file behind.
pub fn replace(path: &Path, content: &[u8]) -> Result<(), FileError> {
    let (temp_path, mut temp) = temporary(path)?;
    let written = temp
        .write_all(content)
        .and_then(|()| temp.sync_all())
        .and_then(|()| std::fs::rename(&temp_path, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp_path);
        return Err(io_error(path, "replace")(e));
    }
    sync_parent(path);
    Ok(())
}
