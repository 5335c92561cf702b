//! The append journal: what makes an append of many lines all or nothing even when the
//! process is killed (`SIGKILL`) in the middle of its write.
//!
//! Before the write, `Journal::begin` saves the lines to append and the file's length in a
//! small file next to it, `.pi-session-append-DEV-INO` (named after the file's identity, so
//! that any name of it finds it, whatever the name's length). After the write it is removed.
//! A writer that takes the file's lock and finds a journal for it (`recover`) looks at what
//! the interrupted append left: the whole lines are kept; a part of them is cut away again
//! when nothing follows it; a part that other lines follow (a live pi appended after it) is
//! left where it is and said, because cutting it away would take theirs too.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The first line of a journal: this, the offset the append started at, and its length.
const MAGIC: &str = "pi-session append journal 1";

/// Where the bytes of a failed write landed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Landed {
    /// Nothing was written.
    Nothing,
    /// `len` bytes at offset `at`, contiguous.
    At {
        /// The offset of the first byte.
        at: u64,
        /// How many bytes.
        len: u64,
    },
    /// Bytes were written but another writer's came between them: we no longer know which.
    Unknown,
}

/// What a recovery found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recovery {
    /// Nothing of the append is in the file (or there was no append to recover).
    Nothing,
    /// The whole append is in the file: kept.
    Completed,
    /// Part of it was, with nothing after it: cut away, the file is as it was.
    TakenBack,
    /// `len` bytes of it are at `at` and other bytes follow: left in place.
    Left {
        /// Where the part starts.
        at: u64,
        /// How long it is.
        len: u64,
    },
}

/// A journal on disk for the append under way.
pub(crate) struct Journal {
    path: PathBuf,
}

/// The journal's path for the file `file` at `path`.
fn journal_path(path: &Path, file: &File) -> io::Result<PathBuf> {
    let meta = file.metadata()?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // The directory of the file itself, not of a symlink to it.
    let dir = fs::canonicalize(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| dir.to_path_buf());
    Ok(dir.join(format!(".pi-session-append-{}-{}", meta.dev(), meta.ino())))
}

impl Journal {
    /// Saves `parts` (the bytes about to be appended at `start`) next to `file`.
    pub(crate) fn begin(
        file: &File,
        path: &Path,
        start: u64,
        parts: &[&[u8]],
        sync: bool,
    ) -> io::Result<Journal> {
        let journal = journal_path(path, file)?;
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let written = (|| {
            let mut out = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&journal)?;
            out.write_all(format!("{MAGIC} {start} {len}\n").as_bytes())?;
            for part in parts {
                out.write_all(part)?;
            }
            if sync {
                out.sync_all()?;
                if let Some(dir) = journal.parent() {
                    File::open(dir)?.sync_all()?;
                }
            }
            Ok(())
        })();
        match written {
            Ok(()) => Ok(Journal { path: journal }),
            Err(e) => {
                let _ = fs::remove_file(&journal);
                Err(e)
            }
        }
    }

    /// The append is over (done, or taken back): the journal goes.
    pub(crate) fn finish(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// After a failed write of ours: cuts away what it wrote (`landed`) when nothing follows.
pub(crate) fn take_back(file: &File, landed: Landed) -> io::Result<Recovery> {
    match landed {
        Landed::Nothing | Landed::At { len: 0, .. } => Ok(Recovery::Nothing),
        Landed::At { at, len } => {
            if file.metadata()?.len() == at + len {
                file.set_len(at)?;
                Ok(Recovery::TakenBack)
            } else {
                Ok(Recovery::Left { at, len })
            }
        }
        Landed::Unknown => Ok(Recovery::Left { at: 0, len: 0 }),
    }
}

/// Looks for the journal an interrupted append to `file` (locked by us) left, and mends what
/// that append left in the file; the sentence says what was done, `None` when nothing was.
pub(crate) fn recover(file: &File, path: &Path) -> io::Result<Option<String>> {
    let journal = journal_path(path, file)?;
    let saved = match fs::read(&journal) {
        Ok(saved) => saved,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let recovery = recover_from(file, &saved)?;
    let _ = fs::remove_file(&journal);
    Ok(match recovery {
        Recovery::Nothing | Recovery::Completed => None,
        Recovery::TakenBack => Some(
            "an append a killed pi-session left unfinished was taken back; the file is as it was before it"
                .to_owned(),
        ),
        Recovery::Left { at, len } => Some(format!(
            "an append a killed pi-session left unfinished ({len} bytes at byte {at}) is followed by \
             lines another program appended, so it stays; `pi-session repair` mends the file"
        )),
    })
}

/// [`recover`] given the journal's bytes.
fn recover_from(file: &File, saved: &[u8]) -> io::Result<Recovery> {
    let Some(newline) = saved.iter().position(|&b| b == b'\n') else {
        return Ok(Recovery::Nothing);
    };
    let head = String::from_utf8_lossy(&saved[..newline]);
    let mut words = head.strip_prefix(MAGIC).unwrap_or("").split_whitespace();
    let (Some(Ok(start)), Some(Ok(len))) = (
        words.next().map(str::parse::<u64>),
        words.next().map(str::parse::<usize>),
    ) else {
        return Ok(Recovery::Nothing);
    };
    let content = &saved[newline + 1..];
    if content.len() != len {
        // The journal itself was cut short: the write had not begun.
        return Ok(Recovery::Nothing);
    }
    let size = file.metadata()?.len();
    if size <= start || content.is_empty() {
        return Ok(Recovery::Nothing);
    }
    // Where the append landed: at `start`, unless another writer appended in between; then
    // its first line (unique: it holds a new id) is looked for after `start`.
    let window = (size - start).min(content.len() as u64 + (1 << 20));
    let mut tail = vec![0u8; window as usize];
    file.read_exact_at(&mut tail, start)?;
    // The fence that ends a torn line before the append is not a probe.
    let fence = content.iter().take_while(|&&b| b == b'\n').count();
    let body = &content[fence..];
    let first_line = match body.iter().position(|&b| b == b'\n') {
        Some(n) => &body[..=n],
        None => body,
    };
    let probe = &first_line[..first_line.len().min(256)];
    let offset = if common_prefix(&tail, content) > 0 {
        0
    } else {
        match memchr::memmem::find(&tail, probe) {
            Some(found) if !probe.is_empty() && found >= fence => found - fence,
            _ => return Ok(Recovery::Nothing),
        }
    };
    let at = start + offset as u64;
    let written = common_prefix(&tail[offset..], content) as u64;
    if written == content.len() as u64 {
        Ok(Recovery::Completed)
    } else if at + written == size {
        file.set_len(at)?;
        Ok(Recovery::TakenBack)
    } else {
        Ok(Recovery::Left { at, len: written })
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
