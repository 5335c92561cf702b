//! Replacing a session file with new content (`migrate --in-place`, `repair --in-place`, with
//! `--backup` and `--force`) without ever losing data.
//!
//! [`prepare`] opens the file and makes every refusal before anything is written; then
//! [`Prepared::commit`] streams the new content into a temporary file in the same directory
//! (`temp`: unnamed, so that a killed process leaves nothing), gives it the old file's
//! owner, group, extended attributes and mode (`metadata`), syncs it, makes the backup if
//! asked (a complete, synced copy linked into place without replacing anything), checks
//! that the file did not change since it was read, renames the temporary over it and syncs
//! the directory. A reader sees the old file or the new one, never a mix.
//!
//! Refused without `--force`: a file with other names (hard links: replacing it would split
//! this name from the others, which keep the old content), a read-only file, an existing
//! backup name. With `--force` the first two are replaced anyway and the backup goes to the
//! first free name `FILE.bak.1`, `FILE.bak.2`, …: a backup never overwrites anything.
//! Never overridden: a file that changed while it was read (a live pi appending to it).
//! A symlink is followed: its target is replaced (and backed up next to it), the link stays.

use crate::temp::{self, Temp};
use crate::{metadata, sys};
use std::fmt;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What the user asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep the old file as `FILE.bak`.
    pub backup: bool,
    /// Replace a hard-linked or read-only file, and back up to `FILE.bak.N` when `FILE.bak`
    /// exists, instead of refusing; keep going when owner, group or an extended attribute
    /// cannot be copied (each said in a warning).
    pub force: bool,
    /// The command replacing the file, for messages.
    pub job: Job,
}

/// The command that replaces the file, as its messages name it.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// `migrate`.
    pub verb: &'static str,
    /// `migrated`.
    pub done: &'static str,
    /// What writes the result elsewhere instead: `--stdout`.
    pub elsewhere: &'static str,
}

impl Job {
    /// `pi-session migrate --in-place`.
    pub const MIGRATE: Job = Job {
        verb: "migrate",
        done: "migrated",
        elsewhere: "--stdout",
    };
    /// `pi-session repair --in-place`.
    pub const REPAIR: Job = Job {
        verb: "repair",
        done: "repaired",
        elsewhere: "-o OUT",
    };
    /// `pi-session redact --in-place`.
    pub const REDACT: Job = Job {
        verb: "redact",
        done: "redacted",
        elsewhere: "-o OUT",
    };
}

impl Default for Job {
    fn default() -> Job {
        Job::MIGRATE
    }
}

/// The identity and state of the file when it was opened for reading: what must still be
/// true when it is replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Snapshot {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Snapshot {
    /// The snapshot of a file's metadata (`fs::metadata` of the path, which follows
    /// symlinks, taken before the file is opened for reading).
    pub fn of(m: &Metadata) -> Snapshot {
        Snapshot {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// How `now` differs from this snapshot, `None` when it does not.
    fn change(&self, now: &Snapshot) -> Option<String> {
        if self == now {
            None
        } else if (self.dev, self.ino) != (now.dev, now.ino) {
            Some("it was replaced by another file".into())
        } else if self.size != now.size {
            Some(format!("{} bytes when read, {} now", self.size, now.size))
        } else if self.mtime != now.mtime {
            Some("it was modified".into())
        } else {
            Some("its metadata changed".into())
        }
    }
}

/// Why the file was not replaced (or, for the last steps, what happened): a sentence that
/// names the path that failed when it is not the file itself, and what to do.
#[derive(Debug)]
pub struct ReplaceError(pub String);

impl fmt::Display for ReplaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplaceError {}

/// What a replacement did besides replacing.
#[derive(Debug, Default)]
pub struct Done {
    /// Where the old file was kept.
    pub backup: Option<PathBuf>,
    /// What the user should know (with `--force`: what could not be kept).
    pub warnings: Vec<String>,
}

/// A replacement checked and ready to commit.
pub struct Prepared {
    /// The file replaced (a symlink's target).
    target: PathBuf,
    /// Its directory.
    dir: PathBuf,
    /// How messages name it besides the path the user gave: "" or " (the symlink's target …)".
    aka: String,
    /// The file as opened now; still open after the rename, to see late writers.
    source: File,
    meta: Metadata,
    snapshot: Snapshot,
    options: Options,
    warnings: Vec<String>,
}

fn refuse(message: String) -> ReplaceError {
    ReplaceError(message)
}

/// Opens `path` (following a symlink to its target) and makes every refusal that does not
/// need the new content: changed since `snapshot`, not a regular file, hard-linked or
/// read-only (without `--force`), backup name taken (without `--force`). Removes the
/// temporary files killed runs left in its directory.
pub fn prepare(
    path: &Path,
    snapshot: Snapshot,
    options: Options,
) -> Result<Prepared, ReplaceError> {
    let link = fs::symlink_metadata(path)
        .map_err(|e| refuse(format!("cannot inspect it: {e}; nothing was written")))?;
    let (target, aka) = if link.file_type().is_symlink() {
        let target = fs::canonicalize(path).map_err(|e| {
            refuse(format!(
                "is a symlink that cannot be followed: {e}; nothing was written"
            ))
        })?;
        let aka = format!(" (the symlink's target {})", crate::display::path(&target));
        (target, aka)
    } else {
        (path.to_path_buf(), String::new())
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let source = File::open(&target)
        .map_err(|e| refuse(format!("cannot open{aka}: {e}; nothing was written")))?;
    let meta = source
        .metadata()
        .map_err(|e| refuse(format!("cannot inspect{aka}: {e}; nothing was written")))?;
    if !meta.is_file() {
        return Err(refuse(format!(
            "is not a regular file{aka}: --in-place replaces a file; use {}",
            options.job.elsewhere
        )));
    }
    // The writers' lock, held until the replacement is done: an `append` of ours waits
    // for it (it is refused), and one that opened the file before finds the new file after.
    match crate::append::try_lock(&source) {
        Ok(true) => {}
        Ok(false) => {
            return Err(refuse(format!(
                "another pi-session is writing it{aka} (its lock is taken): nothing was \
                 written; {} it again when that is done",
                options.job.verb
            )));
        }
        Err(e) => {
            return Err(refuse(format!(
                "cannot lock{aka}: {e}; nothing was written"
            )));
        }
    }
    if let Some(note) = mend_interrupted_append(&target) {
        return Err(refuse(format!(
            "{note}{aka}. Nothing else was written; {} it again",
            options.job.verb
        )));
    }
    if let Some(change) = snapshot.change(&Snapshot::of(&meta)) {
        return Err(changed(&aka, &change, options.job));
    }
    if meta.nlink() > 1 && !options.force {
        return Err(refuse(format!(
            "has {} names (hard links){aka}: replacing it would give this name a new file and \
             leave the other names with the old content; nothing was written. \
             Pass --force to replace this name anyway",
            meta.nlink()
        )));
    }
    if (meta.mode() & 0o222 == 0 || !sys::may_write(&target)) && !options.force {
        return Err(refuse(format!(
            "is read-only (mode {:o}){aka}: someone protected it, so it is not replaced; \
             nothing was written. Pass --force to replace it anyway (the mode is kept)",
            meta.mode() & 0o7777
        )));
    }
    if options.backup && !options.force {
        let bak = with_suffix(&target, ".bak");
        if fs::symlink_metadata(&bak).is_ok() {
            return Err(refuse(format!(
                "the backup {} already exists: it is never overwritten; nothing was written. \
                 Move it away, or pass --force to keep this backup as {}.N instead",
                crate::display::path(&bak),
                crate::display::path(&bak)
            )));
        }
    }
    let warnings = temp::remove_stale(&dir)
        .into_iter()
        .map(|p| {
            format!(
                "removed {}, a temporary file left by a killed pi-session",
                crate::display::path(&p)
            )
        })
        .collect();
    Ok(Prepared {
        target,
        dir,
        aka,
        source,
        meta,
        snapshot,
        options,
        warnings,
    })
}

/// Mends what an interrupted `append` left in `target` (whose lock the caller holds); the
/// sentence says what was done.
fn mend_interrupted_append(target: &Path) -> Option<String> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(target)
        .ok()?;
    crate::journal::recover(&file, target).ok().flatten()
}

fn changed(aka: &str, change: &str, job: Job) -> ReplaceError {
    let Job { verb, done, .. } = job;
    refuse(format!(
        "changed while it was being {done}{aka} ({change}): another program, probably a \
         running pi, is writing it. Nothing was written; {verb} it again once that program \
         is done with it"
    ))
}

/// `path` with `suffix` added to its name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

impl Prepared {
    /// Writes the new content with `write` (streamed into the temporary file), then
    /// replaces the file, as the module documentation says.
    pub fn commit(
        mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<Done, ReplaceError> {
        let aka = self.aka.clone();
        let unchanged = format!("the file{aka} is unchanged");
        let mut temp = Temp::create(&self.dir).map_err(|e| {
            refuse(format!(
                "cannot create a temporary file in {}: {e}; {unchanged}",
                crate::display::path(&self.dir)
            ))
        })?;
        let described = temp.describe();
        let written = {
            let mut out = Labelled {
                inner: BufWriter::with_capacity(1 << 20, temp::Writeback::new(temp.file())),
                what: &described,
            };
            write(&mut out).and_then(|()| out.flush())
        };
        written.map_err(|e| refuse(format!("{e}; {unchanged}")))?;
        let new_file = format!("the {} file", self.options.job.done);
        self.give_metadata(temp.get(), &new_file, &unchanged)?;
        temp.get()
            .sync_all()
            .map_err(|e| refuse(format!("cannot sync {}: {e}; {unchanged}", temp.describe())))?;
        self.check_unchanged()?;
        let backup = if self.options.backup {
            Some(self.save_copy(".bak", "backup", &unchanged, self.options.force)?)
        } else {
            None
        };
        // The last check. What is left is the window between this fstat and the rename (a
        // few microseconds): bytes another program appends in it go to the old file, which
        // we still hold open and look at again after the rename ([`Prepared::after`]). A
        // program that keeps the old file open and writes to it after that is writing to a
        // file that no longer has this name; nothing short of a lock pi does not take can
        // prevent it.
        if let Err(e) = self.check_unchanged() {
            if let Some(bak) = &backup {
                // Ours, made a moment ago: nothing is written when we refuse.
                let _ = fs::remove_file(bak);
            }
            return Err(e);
        }
        temp.persist_over(&self.target).map_err(|e| {
            if let Some(bak) = &backup {
                let _ = fs::remove_file(bak);
            }
            refuse(format!(
                "cannot rename {described} over the file{aka}: {e}; {unchanged}"
            ))
        })?;
        let mut warnings = std::mem::take(&mut self.warnings);
        if let Err(e) = sync_dir(&self.dir) {
            warnings.push(format!(
                "the file was replaced but its directory {} could not be synced ({e}): a \
                 system crash now could bring the old file back",
                crate::display::path(&self.dir)
            ));
        }
        self.after(&mut warnings)?;
        Ok(Done { backup, warnings })
    }

    /// Fails when the file changed since the snapshot, or another file took its name.
    fn check_unchanged(&self) -> Result<(), ReplaceError> {
        let now = self.source.metadata().map_err(|e| {
            refuse(format!(
                "cannot inspect{}: {e}; nothing was written",
                self.aka
            ))
        })?;
        let change = self.snapshot.change(&Snapshot::of(&now)).or_else(|| {
            match fs::metadata(&self.target) {
                Ok(m) if (m.dev(), m.ino()) == (self.snapshot.dev, self.snapshot.ino) => None,
                Ok(_) => Some("another file took its name".into()),
                Err(e) => Some(format!("its name cannot be found any more: {e}")),
            }
        });
        match change {
            Some(change) => Err(changed(&self.aka, &change, self.options.job)),
            None => Ok(()),
        }
    }

    /// Gives `file` the old file's owner, group, extended attributes and mode; what cannot
    /// be given is a refusal, or a warning with `--force`.
    fn give_metadata(
        &mut self,
        file: &File,
        what: &str,
        unchanged: &str,
    ) -> Result<(), ReplaceError> {
        let lost = metadata::copy(&self.source, &self.meta, file)
            .map_err(|e| refuse(format!("cannot inspect {what}: {e}; {unchanged}")))?;
        if lost.0.is_empty() {
            return Ok(());
        }
        let list = lost.0.join("; ");
        if self.options.force {
            self.warnings.push(format!(
                "warning: {what} could not be given the old file's {list} (--force: going on without)"
            ));
            Ok(())
        } else {
            Err(refuse(format!(
                "{what} could not be given the old file's {list}; {unchanged}. Run as the \
                 file's owner or as root, or pass --force to replace it without them"
            )))
        }
    }

    /// Copies the old file as it was read into a new file `TARGET{suffix}` (or
    /// `TARGET{suffix}.N` with `--force` when taken): complete and synced before it gets its
    /// name, which never replaces anything and never follows a symlink. `numbered`: take
    /// the first free `.N` name instead of refusing when the name is taken.
    fn save_copy(
        &mut self,
        suffix: &str,
        what: &str,
        unchanged: &str,
        numbered: bool,
    ) -> Result<PathBuf, ReplaceError> {
        let first = with_suffix(&self.target, suffix);
        let mut temp = Temp::create(&self.dir).map_err(|e| {
            refuse(format!(
                "cannot create the {what} {}: {e}; {unchanged}",
                crate::display::path(&first)
            ))
        })?;
        let copied = copy_prefix(&self.source, temp.file(), self.snapshot.size);
        copied.map_err(|e| {
            refuse(format!(
                "cannot write the {what} {} ({}): {e}; {unchanged}",
                crate::display::path(&first),
                temp.describe()
            ))
        })?;
        self.give_metadata(temp.get(), &format!("the {what}"), unchanged)?;
        temp.get().sync_all().map_err(|e| {
            refuse(format!(
                "cannot sync the {what} {}: {e}; {unchanged}",
                crate::display::path(&first)
            ))
        })?;
        // Claim the first free name; the data is already safe, so this is the only step.
        let mut n = 0u32;
        loop {
            let name = if n == 0 {
                first.clone()
            } else {
                with_suffix(&first, &format!(".{n}"))
            };
            match temp.persist_new(&name) {
                Ok(()) => {
                    let _ = sync_dir(&self.dir);
                    return Ok(name);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && numbered && n < 1000 => {
                    n += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(refuse(format!(
                        "the {what} {} already exists: it is never overwritten; {unchanged}. \
                         Move it away, or pass --force to use {}.N instead",
                        crate::display::path(&name),
                        crate::display::path(&first)
                    )));
                }
                Err(e) => {
                    return Err(refuse(format!(
                        "cannot name the {what} {}: {e}; {unchanged}",
                        crate::display::path(&name)
                    )));
                }
            }
        }
    }

    /// After the rename: bytes another program appended to the old file in the last window
    /// are moved to the end of the new one; any other late change is saved next to it.
    fn after(&mut self, warnings: &mut Vec<String>) -> Result<(), ReplaceError> {
        let Ok(now) = self.source.metadata() else {
            return Ok(());
        };
        let now = Snapshot::of(&now);
        // The rename itself changed the old file's ctime (one name less): only the content
        // counts here.
        if (now.size, now.mtime) == (self.snapshot.size, self.snapshot.mtime) {
            return Ok(());
        }
        let aka = self.aka.clone();
        if now.size > self.snapshot.size {
            let mut late = vec![0u8; (now.size - self.snapshot.size) as usize];
            let moved = self
                .source
                .read_exact_at(&mut late, self.snapshot.size)
                .and_then(|()| {
                    let mut out = OpenOptions::new().append(true).open(&self.target)?;
                    out.write_all(&late)?;
                    out.sync_all()
                });
            if moved.is_ok() {
                warnings.push(format!(
                    "warning: another program appended {} bytes to the file{aka} while it was \
                     being replaced; they were added at the end of the {} file",
                    late.len(),
                    self.options.job.done
                ));
                return Ok(());
            }
        }
        // Rewritten in the window: keep what it holds now.
        self.snapshot = now;
        match self.save_copy(".changed", "copy", "the file was replaced", true) {
            Ok(saved) => Err(refuse(format!(
                "another program rewrote the file{aka} while it was being replaced; what it \
                 wrote is saved in {}: compare it with the {} file",
                crate::display::path(&saved),
                self.options.job.done
            ))),
            Err(e) => Err(refuse(format!(
                "another program rewrote the file{aka} while it was being replaced, and what \
                 it wrote could not be saved: {e}"
            ))),
        }
    }
}

/// A writer whose errors name what it writes to: `cannot write WHAT: error` (the kind is
/// kept, so that a closed pipe is still recognised).
pub struct Labelled<'a, W> {
    /// Where the bytes go.
    pub inner: W,
    /// How errors name it ("standard output", "the temporary file …").
    pub what: &'a str,
}

impl<W: Write> Labelled<'_, W> {
    fn label(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("cannot write {}: {e}", self.what))
    }
}

impl<W: Write> Write for Labelled<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.label(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.label(e))
    }
}

/// Copies the first `size` bytes of `from` into `to` (`copy_file_range` where the kernel
/// can: no copy through our memory).
fn copy_prefix(from: &File, to: &mut File, size: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut from = from;
    from.seek(SeekFrom::Start(0))?;
    let copied = io::copy(&mut from.take(size), to)?;
    if copied < size {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the file shrank to {copied} bytes while it was copied"),
        ));
    }
    Ok(())
}

pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
