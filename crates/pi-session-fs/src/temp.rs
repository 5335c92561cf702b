//! Temporary files in the target's directory that leave nothing behind.
//!
//! Where the file system allows it (Linux `O_TMPFILE`, with `/proc` mounted), a temporary
//! file has no name at all until it is complete: a process killed while writing it (even by
//! `SIGKILL`) leaves nothing, the kernel frees its blocks. Elsewhere it is a named file
//! `.pi-session-PID-N.tmp`, short whatever the target's name (a 255-byte file name leaves
//! no room for a suffix), removed on failure; one left by a killed process is recognised by
//! its name and removed by the next `migrate --in-place` in that directory once no process
//! with that PID is alive (`remove_stale`).

use crate::sys;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The prefix and suffix of a named temporary file: `.pi-session-PID-N.tmp`.
const PREFIX: &str = ".pi-session-";
const SUFFIX: &str = ".tmp";

/// A temporary file being written.
pub struct Temp {
    file: File,
    /// Its directory.
    dir: PathBuf,
    /// Its name while it has one (removed on drop).
    name: Option<PathBuf>,
}

impl Temp {
    /// Creates an empty temporary file in `dir`, readable and writable by us only (the
    /// target's mode is given to it once written).
    pub fn create(dir: &Path) -> io::Result<Temp> {
        if Path::new("/proc/self/fd").is_dir() {
            match OpenOptions::new()
                .read(true)
                .write(true)
                .mode(0o600)
                .custom_flags(libc::O_TMPFILE)
                .open(dir)
            {
                Ok(file) => {
                    return Ok(Temp {
                        file,
                        dir: dir.to_path_buf(),
                        name: None,
                    });
                }
                // Not supported by this kernel or file system: a named file instead.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        let (name, file) = create_named(dir, |path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
        })?;
        Ok(Temp {
            file,
            dir: dir.to_path_buf(),
            name: Some(name),
        })
    }

    /// Creates an empty temporary file named `path` (which must not exist), with the mode a
    /// new file gets (the umask's): for a caller whose temporaries must be found by their
    /// names (the Parquet export removes those of a run it abandons, and those a killed run
    /// left). Removed when dropped before it is persisted.
    pub fn create_at(path: &Path) -> io::Result<Temp> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(Temp {
            file,
            dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            name: Some(path.to_path_buf()),
        })
    }

    /// The open file.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// The open file.
    pub fn get(&self) -> &File {
        &self.file
    }

    /// How an error message names it.
    pub fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("the temporary file {}", crate::display::path(name)),
            None => format!(
                "the temporary file (unnamed, in {})",
                crate::display::path(&self.dir)
            ),
        }
    }

    /// Gives the (complete, synced) file the name `to`, which must not exist: nothing is
    /// ever replaced, and a symlink at `to` is not followed (`AlreadyExists`). On failure
    /// the temporary is left as it was, to try another name.
    pub fn persist_new(&mut self, to: &Path) -> io::Result<()> {
        let Some(name) = &self.name else {
            return sys::link_open_file(&self.file, to);
        };
        match fs::hard_link(name, to) {
            Ok(()) => {
                let _ = fs::remove_file(name);
            }
            // A file system without hard links.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP)) => {
                sys::rename_noreplace(name, to)?;
            }
            Err(e) => return Err(e),
        }
        self.name = None;
        Ok(())
    }

    /// Replaces `to` by the (complete, synced) file: `rename`, atomic. An unnamed file is
    /// first linked to a fresh temporary name (the only moment it has one).
    pub fn persist_over(mut self, to: &Path) -> io::Result<()> {
        if self.name.is_none() {
            let file = &self.file;
            let (name, ()) = create_named(&self.dir, |path| sys::link_open_file(file, path))?;
            self.name = Some(name);
        }
        let name = self.name.as_ref().expect("named above");
        fs::rename(name, to)?;
        self.name = None;
        Ok(())
    }
}

/// A writer into a file that starts writing each 8 MiB to disk as soon as it is written, so
/// that disk and migration work at the same time (measured on a 1 GB v1 session: the final
/// `fsync` alone took 1.7 s; with this, `--in-place` costs 0.3 s more than `--stdout` to a
/// file, instead of 2.6 s).
pub(crate) struct Writeback<'a> {
    file: &'a mut File,
    written: u64,
    started: u64,
}

impl<'a> Writeback<'a> {
    /// How much is written before writeback starts.
    const STEP: u64 = 8 << 20;

    /// Writes into `file` from its current position (its start).
    pub(crate) fn new(file: &'a mut File) -> Self {
        Writeback {
            file,
            written: 0,
            started: 0,
        }
    }
}

impl io::Write for Writeback<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= Self::STEP {
            sys::start_writeback(self.file, self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = fs::remove_file(name);
        }
    }
}

/// Makes a fresh `.pi-session-PID-N.tmp` in `dir` with `make` (which must fail with
/// `AlreadyExists` when the name is taken).
fn create_named<T>(
    dir: &Path,
    mut make: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(PathBuf, T)> {
    let pid = std::process::id();
    for n in 0u32..1000 {
        let path = dir.join(format!("{PREFIX}{pid}-{n}{SUFFIX}"));
        match make(&path) {
            Ok(made) => return Ok((path, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "1000 temporary names {PREFIX}{pid}-N{SUFFIX} are taken in {}",
            crate::display::path(dir)
        ),
    ))
}

/// Removes the named temporary files that a killed `pi-session` left in `dir`: regular
/// files named `.pi-session-PID-N.tmp`, owned by us, whose process is gone. Returns what
/// was removed. Errors are ignored (a leftover is harmless; this is housekeeping).
///
/// A process in another PID namespace sharing the directory could be taken for dead; its
/// rename would then fail with "no such file" and it would report it, losing nothing.
pub(crate) fn remove_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let us = std::process::id();
    let euid = sys::euid();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.strip_suffix(SUFFIX))
            .and_then(|n| n.split_once('-'))
            .filter(|(_, n)| n.parse::<u32>().is_ok())
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let Ok(metadata) = fs::symlink_metadata(&path) else {
            continue;
        };
        if pid == us || !metadata.is_file() || metadata.uid() != euid || sys::process_alive(pid) {
            continue;
        }
        if fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}
