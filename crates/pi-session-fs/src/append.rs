//! Appending to a session file: [`Appender`] appends whole lines with `O_APPEND` under an
//! advisory lock (`flock`, the lock `replace` takes too), all or nothing.
//!
//! - **The lock is on the file that has the name.** A writer that opened the file just before
//!   a rewriter (`migrate`/`repair --in-place`) renamed a new file over it would append to a
//!   file nobody reads any more; after taking the lock the name is looked up again and, when
//!   it names another file now, the new one is opened instead.
//! - **All or nothing.** Lines longer than a page in all go through the [`journal`]: the
//!   lines are saved next to the file first, and the next writer (or this one, after a failed
//!   write) cuts a partial append away again, or keeps it when it is whole. The stop signals
//!   (`SIGINT`, `SIGTERM`, `SIGHUP`, `SIGQUIT`) wait while the write runs, so Ctrl-C never
//!   tears one; `SIGKILL` can, and the next writer mends it.
//! - **Only our bytes.** What is cut away after a failed write is what this process wrote,
//!   and only when nothing follows it: lines another program (a live pi, which appends
//!   without a lock) wrote meanwhile stay.
//! - A torn last line (a pi killed mid-write) is ended with a newline before the first
//!   append, so that the new line is not glued to it.
//! - A read-only file is not written (root could): someone protected it.
//!
//! [`journal`]: crate::journal

use crate::journal::{self, Landed, Recovery};
use crate::sys;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, IoSlice, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why a file could not be written.
#[derive(Debug)]
pub enum FileError {
    /// Another writer (ours) holds the file's lock.
    Locked(PathBuf),
    /// The path is not a regular file (a directory, FIFO, device, …).
    NotAFile(PathBuf),
    /// The file is read-only (no write bit): someone protected it.
    ReadOnly {
        /// The file.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// Another file kept taking the name while we opened it.
    KeptReplaced(PathBuf),
    /// A write failed after part of it was in the file, and other lines follow that part, so
    /// it stays there (cutting it away would take theirs too).
    Partial {
        /// The file.
        path: PathBuf,
        /// Where the part starts.
        at: u64,
        /// How long it is.
        len: u64,
        /// The error.
        source: io::Error,
    },
    /// A replacement refused (see [`crate::replace`]): the whole sentence.
    Refused(PathBuf, String),
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

impl FileError {
    /// A stable name for the error, the same in every binding: `locked`, `not-a-file`,
    /// `read-only`, `file-replaced`, `partial-write`, `refused`, or the I/O error's
    /// ([`crate::io_code`]).
    pub fn code(&self) -> &'static str {
        match self {
            FileError::Locked(_) => "locked",
            FileError::NotAFile(_) => "not-a-file",
            FileError::ReadOnly { .. } => "read-only",
            FileError::KeptReplaced(_) => "file-replaced",
            FileError::Partial { .. } => "partial-write",
            FileError::Refused(..) => "refused",
            FileError::Io { source, .. } => crate::io_code(source),
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |p: &Path| crate::display::path(p);
        match self {
            FileError::Locked(path) => write!(
                f,
                "{}: another pi-session is writing this session (its lock is taken); try again when it is done, or write to a fork (`pi-session fork`)",
                name(path)
            ),
            FileError::NotAFile(path) => write!(
                f,
                "{}: not a regular file; sessions are written to regular files only",
                name(path)
            ),
            FileError::ReadOnly { path, mode } => write!(
                f,
                "{}: is read-only (mode {:o}): someone protected it, so it is not written; make it writable (chmod u+w) if you mean to",
                name(path),
                mode & 0o7777
            ),
            FileError::KeptReplaced(path) => write!(
                f,
                "{}: another program keeps replacing this file; try again when it is done",
                name(path)
            ),
            FileError::Refused(path, why) => write!(f, "{}: {why}", name(path)),
            FileError::Partial {
                path,
                at,
                len,
                source,
            } => write!(
                f,
                "{}: cannot append to the file: {source}; {len} bytes of the lines were written at byte {at} and other lines follow them, so they stay: `pi-session repair` mends the file",
                name(path)
            ),
            FileError::Io {
                path,
                doing,
                source,
            } => write!(f, "{}: cannot {doing} the file: {source}", name(path)),
        }
    }
}

impl FileError {
    /// Whether the file is as it was before the failed operation: `false` only when part of a
    /// write stayed in it ([`FileError::Partial`]).
    pub fn wrote_nothing(&self) -> bool {
        !matches!(self, FileError::Partial { .. })
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FileError::Io { source, .. } | FileError::Partial { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub(crate) fn io_error<'p>(
    path: &'p Path,
    doing: &'static str,
) -> impl FnOnce(io::Error) -> FileError + 'p {
    move |source| FileError::Io {
        path: path.to_owned(),
        doing,
        source,
    }
}

/// Takes the advisory lock of `file` without waiting. `Ok(false)`: another open file
/// description holds it. A file system without locks counts as locked by us.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => Ok(true),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Writes larger than this go through the journal; smaller ones are one `write` of at most
/// a page, which a signal does not cut.
const JOURNAL_ABOVE: usize = 4096;

/// A session file open for appending, locked for as long as it is held.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
    /// Whether the file ends without a newline (a torn last line): the next append starts
    /// with one.
    needs_fence: bool,
    fsync: bool,
    /// What opening mended (an interrupted append), for the caller to tell.
    notes: Vec<String>,
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
        let locked = try_lock(&file).map_err(io_error(path, "lock"));
        let written = locked.and_then(|locked| {
            if !locked {
                return Err(FileError::Locked(path.to_owned()));
            }
            let mut appender = Appender {
                file,
                path: path.to_owned(),
                needs_fence: false,
                fsync,
                notes: Vec::new(),
            };
            appender.write_whole(&[content])?;
            Ok(appender)
        });
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// Opens an existing session file for appending and takes its lock: refused when it is
    /// not a regular file, read-only, or locked by another writer; an append that was
    /// interrupted is made whole or taken back first ([`Appender::notes`] says which).
    pub fn open_existing(path: &Path, fsync: bool) -> Result<Appender, FileError> {
        for _ in 0..16 {
            let (file, meta) = open_locked(path)?;
            // The name may have been given to another file (a rewrite) while we waited.
            match std::fs::metadata(path) {
                Ok(now) if (now.dev(), now.ino()) == (meta.dev(), meta.ino()) => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_error(path, "open")(e)),
            }
            let mut appender = Appender {
                file,
                path: path.to_owned(),
                needs_fence: false,
                fsync,
                notes: Vec::new(),
            };
            appender.mend()?;
            appender.needs_fence = appender.ends_torn()?;
            return Ok(appender);
        }
        Err(FileError::KeptReplaced(path.to_owned()))
    }

    /// What opening found and mended (an append a killed process left), one sentence each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The open, locked file (for reading what is there before appending).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file's length now.
    pub fn len(&self) -> Result<u64, FileError> {
        Ok(self
            .file
            .metadata()
            .map_err(io_error(&self.path, "inspect"))?
            .len())
    }

    /// Whether the file is empty now.
    pub fn is_empty(&self) -> Result<bool, FileError> {
        Ok(self.len()? == 0)
    }

    /// Appends `lines` (complete lines, each ending in a newline) in one write, after a
    /// newline when the file ended in a torn line: all of them or none (see the module
    /// documentation).
    pub fn append(&mut self, lines: &[u8]) -> Result<(), FileError> {
        self.append_parts(lines, b"")
    }

    /// Appends one line, given without its newline: [`Appender::append`] of `line` and a
    /// newline, still in one write (`writev`), without copying the line.
    pub fn append_line(&mut self, line: &[u8]) -> Result<(), FileError> {
        self.append_parts(line, b"\n")
    }

    fn append_parts(&mut self, content: &[u8], end: &[u8]) -> Result<(), FileError> {
        // The torn line may have been ended by someone else since we looked.
        if self.needs_fence {
            self.needs_fence = self.ends_torn()?;
        }
        let fence: &[u8] = if self.needs_fence { b"\n" } else { b"" };
        self.write_whole(&[fence, content, end])?;
        self.needs_fence = false;
        Ok(())
    }

    fn write_whole(&mut self, parts: &[&[u8]]) -> Result<(), FileError> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total == 0 {
            return Ok(());
        }
        let _signals = sys::hold_stop_signals();
        let journal = if total > JOURNAL_ABOVE {
            let start = self.len()?;
            Some(
                journal::Journal::begin(&self.file, &self.path, start, parts, self.fsync).map_err(
                    io_error(&self.path, "save the lines to append (the journal) of"),
                )?,
            )
        } else {
            None
        };
        match write_all_vectored(&mut self.file, parts) {
            Ok(()) => {
                if let Some(journal) = journal {
                    journal.finish();
                }
                if self.fsync {
                    // Whole in the file: nothing is taken back when only the sync fails.
                    self.file.sync_data().map_err(io_error(
                        &self.path,
                        "sync (the lines are appended but may not be on disk yet)",
                    ))?;
                }
                Ok(())
            }
            Err((landed, e)) => {
                let recovery = journal::take_back(&self.file, landed);
                if let Some(j) = journal {
                    j.finish();
                }
                if !matches!(recovery, Ok(Recovery::Nothing | Recovery::TakenBack)) {
                    // A partial line stays (something follows it): end it before the next.
                    self.needs_fence = true;
                }
                let error = match recovery {
                    Ok(Recovery::Left { at, len }) => FileError::Partial {
                        path: self.path.clone(),
                        at,
                        len,
                        source: e,
                    },
                    _ => io_error(&self.path, "append to")(e),
                };
                Err(error)
            }
        }
    }

    /// Finds and mends what an interrupted append of another process left.
    fn mend(&mut self) -> Result<(), FileError> {
        let note = journal::recover(&self.file, &self.path)
            .map_err(io_error(&self.path, "mend an interrupted append to"))?;
        self.notes.extend(note);
        Ok(())
    }

    fn ends_torn(&mut self) -> Result<bool, FileError> {
        let len = self.len()?;
        if len == 0 {
            return Ok(false);
        }
        let mut last = [0u8; 1];
        self.file
            .seek(SeekFrom::Start(len - 1))
            .and_then(|_| self.file.read_exact(&mut last))
            .map_err(io_error(&self.path, "read"))?;
        Ok(last[0] != b'\n')
    }
}

/// Opens `path` for reading and appending, checks that it is a writable regular file, and
/// takes its lock.
fn open_locked(path: &Path) -> Result<(File, std::fs::Metadata), FileError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EISDIR) => FileError::NotAFile(path.to_owned()),
            _ => io_error(path, "open")(e),
        })?;
    let meta = file.metadata().map_err(io_error(path, "open"))?;
    if !meta.is_file() {
        return Err(FileError::NotAFile(path.to_owned()));
    }
    if meta.mode() & 0o222 == 0 {
        return Err(FileError::ReadOnly {
            path: path.to_owned(),
            mode: meta.mode(),
        });
    }
    if !try_lock(&file).map_err(io_error(path, "lock"))? {
        return Err(FileError::Locked(path.to_owned()));
    }
    Ok((file, meta))
}

/// `write_all` of the concatenation of `parts` (at most three), with as few `writev` calls as
/// the kernel allows (one, for a regular file). On failure, where the bytes written so far
/// landed.
fn write_all_vectored(file: &mut File, parts: &[&[u8]]) -> Result<(), (Landed, io::Error)> {
    let mut slices = [IoSlice::new(&[]), IoSlice::new(&[]), IoSlice::new(&[])];
    let mut count = 0;
    for part in parts.iter().filter(|p| !p.is_empty()) {
        let Some(slot) = slices.get_mut(count) else {
            return Err((
                Landed::Nothing,
                io::Error::new(io::ErrorKind::InvalidInput, "more than three parts"),
            ));
        };
        *slot = IoSlice::new(part);
        count += 1;
    }
    let mut rest = &mut slices[..count];
    let mut left: usize = rest.iter().map(|s| s.len()).sum();
    // Where our bytes are (with `O_APPEND`, the file offset after a write is its end).
    let mut landed = Landed::Nothing;
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err((landed, io::ErrorKind::WriteZero.into())),
            // The rest written: where it landed matters only for a failure, so the offset is
            // not asked (a system call per append saved in the usual case of one write).
            Ok(n) if n == left => return Ok(()),
            Ok(n) => {
                left -= n;
                let n = n as u64;
                let end = file.stream_position().ok();
                landed = match (landed, end) {
                    (Landed::Nothing, Some(end)) => Landed::At {
                        at: end - n,
                        len: n,
                    },
                    (Landed::At { at, len }, Some(end)) if at + len + n == end => {
                        Landed::At { at, len: len + n }
                    }
                    _ => Landed::Unknown,
                };
                IoSlice::advance_slices(&mut rest, n as usize);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((landed, e)),
        }
    }
    Ok(())
}
