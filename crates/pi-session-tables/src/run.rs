//! One export run's files in the output directory, so that an export that does not finish
//! leaves nothing behind: a hidden marker (`.pi-session-export-<run>.unfinished`) written
//! before the first part file and removed at the end ([`begin`], [`Run::finish`]); the
//! removal of everything a run wrote — part files, temporaries, the marker, table
//! directories left empty — when it stops on an error or a signal ([`Run::remove`],
//! [`Run::abandon`]), or at the next export when it was killed ([`remove_dead`]: the marker or
//! the temporaries of a process that no longer runs); and what a directory holds
//! ([`contents`]), where table directories with nothing but directories in them count as
//! empty.
//!
//! [`Run::abandon`] (from a signal) and the part files' creation and placing (`guard`) take
//! one lock: once a run is abandoned no temporary is created and no part put in place, so
//! that nothing appears after the removal.

use crate::error::Error;
use crate::tables::Table;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Whether the run of this process was abandoned; held while a temporary is created or a
/// part put in place.
static ABANDONED: Mutex<bool> = Mutex::new(false);

/// How deep part files lie below the output directory: `table/partition/file`.
const DEPTH: usize = 3;

/// The lock under which a part file's temporary is created or the part put in place; an
/// error once the run was abandoned (`path`: the file that was to be written).
pub(crate) fn guard(path: &Path) -> Result<MutexGuard<'static, bool>, Error> {
    let guard = ABANDONED.lock().unwrap_or_else(|e| e.into_inner());
    if *guard {
        return Err(Error::Interrupted(path.to_owned()));
    }
    Ok(guard)
}

/// Whether this process's run was abandoned ([`Run::abandon`]).
pub fn abandoned() -> bool {
    *ABANDONED.lock().unwrap_or_else(|e| e.into_inner())
}

/// One export run: its output directory and its id (`<ms since epoch>-<pid>`, the `<run>` of
/// its file names).
#[derive(Debug, Clone)]
pub struct Run {
    /// The output directory.
    pub dir: PathBuf,
    /// The run's id.
    pub id: String,
}

/// What was removed of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Part files (`part-<run>-….parquet`).
    pub parts: usize,
    /// Temporaries (`.part-<run>-….parquet.tmp`).
    pub temporaries: usize,
}

impl Removed {
    /// Whether nothing was removed.
    pub fn is_empty(&self) -> bool {
        self.parts == 0 && self.temporaries == 0
    }
}

impl std::fmt::Display for Removed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} part file{} and {} temporar{}",
            self.parts,
            if self.parts == 1 { "" } else { "s" },
            self.temporaries,
            if self.temporaries == 1 { "y" } else { "ies" }
        )
    }
}

/// Starts run `id` in `dir`: makes the directory and the marker that says the run is not
/// finished.
pub fn begin(dir: &Path, id: &str) -> Result<Run, Error> {
    fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let run = Run {
        dir: dir.to_owned(),
        id: id.to_owned(),
    };
    let marker = run.marker();
    fs::write(&marker, b"").map_err(Error::io(&marker))?;
    Ok(run)
}

impl Run {
    /// The marker of the unfinished run.
    pub fn marker(&self) -> PathBuf {
        self.dir
            .join(format!(".pi-session-export-{}.unfinished", self.id))
    }

    /// The run finished: its marker goes.
    pub fn finish(&self) -> Result<(), Error> {
        let marker = self.marker();
        match fs::remove_file(&marker) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(&marker)(e)),
            _ => Ok(()),
        }
    }

    /// Removes every file of the run (part files, temporaries, the marker) and the table
    /// directories it left empty.
    pub fn remove(&self) -> Result<Removed, Error> {
        let mut removed = Removed::default();
        let parts = format!("part-{}-", self.id);
        let temporaries = format!(".part-{}-", self.id);
        walk(&self.dir, 0, &mut |path, name| {
            if name.starts_with(&parts) && name.ends_with(".parquet") {
                fs::remove_file(path).map_err(Error::io(path))?;
                removed.parts += 1;
            } else if name.starts_with(&temporaries) && name.ends_with(".tmp") {
                remove_if_there(path)?;
                removed.temporaries += 1;
            }
            Ok(())
        })?;
        remove_empty_tables(&self.dir);
        remove_if_there(&self.marker())?;
        Ok(removed)
    }

    /// Abandons the run (a signal): no temporary is created and no part put in place from
    /// now on, and everything the run wrote is removed.
    pub fn abandon(&self) -> Result<Removed, Error> {
        let mut guard = ABANDONED.lock().unwrap_or_else(|e| e.into_inner());
        *guard = true;
        self.remove()
    }
}

/// Removes, in `dir`, what exports that were killed left: every file of a run whose marker
/// names a process that is not `alive`, the temporaries of such processes (from exports
/// without markers), and table directories holding only directories. The runs cleaned up and what was removed of each.
pub fn remove_dead(dir: &Path, alive: &dyn Fn(u32) -> bool) -> Result<Vec<(Run, Removed)>, Error> {
    let mut runs: Vec<String> = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory =>
        {
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::io(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(Error::io(dir))?;
        let name = entry.file_name();
        if let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix(".pi-session-export-"))
            .and_then(|n| n.strip_suffix(".unfinished"))
            && pid_of(id).is_some_and(|pid| !alive(pid))
        {
            runs.push(id.to_owned());
        }
    }
    walk(dir, 0, &mut |_, name| {
        if let Some(rest) = name.strip_prefix(".part-")
            && name.ends_with(".tmp")
        {
            let mut fields = rest.splitn(3, '-');
            if let (Some(ms), Some(pid)) = (fields.next(), fields.next()) {
                let id = format!("{ms}-{pid}");
                if pid_of(&id).is_some_and(|pid| !alive(pid)) && !runs.contains(&id) {
                    runs.push(id);
                }
            }
        }
        Ok(())
    })?;
    // Table directories left empty (by an export that failed before markers) go too, so
    // that the empty tables are written again.
    remove_empty_tables(dir);
    runs.into_iter()
        .map(|id| {
            let run = Run {
                dir: dir.to_owned(),
                id,
            };
            // A run without a marker (an export before markers) may have finished: only
            // its temporaries are garbage for sure.
            let removed = if run.marker().exists() {
                run.remove()?
            } else {
                run.remove_temporaries()?
            };
            Ok((run, removed))
        })
        .collect()
}

impl Run {
    /// Removes the run's temporaries only.
    fn remove_temporaries(&self) -> Result<Removed, Error> {
        let mut removed = Removed::default();
        let temporaries = format!(".part-{}-", self.id);
        walk(&self.dir, 0, &mut |path, name| {
            if name.starts_with(&temporaries) && name.ends_with(".tmp") {
                remove_if_there(path)?;
                removed.temporaries += 1;
            }
            Ok(())
        })?;
        remove_empty_tables(&self.dir);
        Ok(removed)
    }
}

/// The process id in a run id `<ms>-<pid>`.
fn pid_of(id: &str) -> Option<u32> {
    let (ms, pid) = id.split_once('-')?;
    (!ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// What an output directory holds, table directories holding only directories not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contents {
    /// Part files (`*.parquet`).
    pub parts: usize,
    /// Temporaries of part files (`.part-….tmp`).
    pub temporaries: usize,
    /// The processes of unfinished runs (a marker whose process still runs).
    pub running: Vec<u32>,
    /// Anything else: files, links, directories that are not tables.
    pub others: usize,
}

impl Contents {
    /// Whether the directory counts as empty.
    pub fn is_empty(&self) -> bool {
        self.parts == 0 && self.temporaries == 0 && self.running.is_empty() && self.others == 0
    }
}

impl std::fmt::Display for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut said = Vec::new();
        if self.parts > 0 {
            said.push(plural(self.parts, "part file", "part files"));
        }
        if self.temporaries > 0 {
            said.push(plural(
                self.temporaries,
                "temporary part file",
                "temporary part files",
            ));
        }
        if !self.running.is_empty() {
            let pids: Vec<String> = self.running.iter().map(u32::to_string).collect();
            said.push(format!(
                "the marker of an export still running (process {})",
                pids.join(", ")
            ));
        }
        if self.others > 0 {
            said.push(plural(self.others, "other entry", "other entries"));
        }
        if said.is_empty() {
            return f.write_str("nothing");
        }
        f.write_str(&said.join(", "))
    }
}

/// What `dir` holds (nothing when it does not exist).
pub fn contents(dir: &Path, alive: &dyn Fn(u32) -> bool) -> Result<Contents, Error> {
    let mut contents = Contents::default();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(contents),
        Err(e) => return Err(Error::io(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(Error::io(dir))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if let Some(id) = name
            .strip_prefix(".pi-session-export-")
            .and_then(|n| n.strip_suffix(".unfinished"))
            && let Some(pid) = pid_of(id)
        {
            if alive(pid) {
                contents.running.push(pid);
            } else {
                contents.others += 1;
            }
        } else if is_dir && Table::ALL.iter().any(|t| t.name() == name) {
            walk(&entry.path(), 1, &mut |_, name| {
                if name.starts_with(".part-") && name.ends_with(".tmp") {
                    contents.temporaries += 1;
                } else if name.ends_with(".parquet") {
                    contents.parts += 1;
                } else {
                    contents.others += 1;
                }
                Ok(())
            })?;
        } else {
            contents.others += 1;
        }
    }
    Ok(contents)
}

/// A part file of the export in `dir` whose schema version (its
/// `pi_session_tables.schema_version` metadata) is not [`crate::SCHEMA_VERSION`], with the
/// version it has (`None`: it has none, or its footer cannot be read).
///
/// Every part is read, in name order, so the answer does not hang on the order the
/// directory lists its files in: one part of another version is enough to make the tables
/// read as two schemas. Only the footer of each part is read.
pub fn other_schema(dir: &Path) -> Result<Option<(PathBuf, Option<String>)>, Error> {
    let ours = crate::SCHEMA_VERSION.to_string();
    for table in Table::ALL {
        let mut parts = Vec::new();
        walk(&dir.join(table.name()), 1, &mut |path, name| {
            if name.ends_with(".parquet") && !name.starts_with(".part-") {
                parts.push(path.to_owned());
            }
            Ok(())
        })?;
        parts.sort();
        for part in parts {
            let version = schema_version_of(&part);
            if version.as_deref() != Some(ours.as_str()) {
                return Ok(Some((part, version)));
            }
        }
    }
    Ok(None)
}

/// The schema version a part file's footer names, if it can be read and names one.
fn schema_version_of(part: &Path) -> Option<String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(fs::File::open(part).ok()?).ok()?;
    reader
        .metadata()
        .file_metadata()
        .key_value_metadata()?
        .iter()
        .find(|kv| kv.key == crate::SCHEMA_VERSION_KEY)?
        .value
        .clone()
}

/// Calls `file` for every entry that is not a directory below `dir` (which is at `depth`),
/// down to [`DEPTH`]; links are not followed.
fn walk(
    dir: &Path,
    depth: usize,
    file: &mut dyn FnMut(&Path, &str) -> Result<(), Error>,
) -> Result<(), Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(Error::io(dir))?;
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if depth + 1 < DEPTH {
                walk(&path, depth + 1, file)?;
            }
        } else {
            file(&path, &entry.file_name().to_string_lossy())?;
        }
    }
    Ok(())
}

/// Removes the table directories of `dir` that hold only (empty) directories.
fn remove_empty_tables(dir: &Path) {
    fn remove_empty(dir: &Path, depth: usize) {
        if depth < DEPTH
            && let Ok(entries) = fs::read_dir(dir)
        {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    remove_empty(&entry.path(), depth + 1);
                }
            }
        }
        // Fails, as it should, on a directory that is not empty.
        let _ = fs::remove_dir(dir);
    }
    for table in Table::ALL {
        remove_empty(&dir.join(table.name()), 1);
    }
}

/// Removes a file; one already gone is fine (a part's own clean-up may have been first).
fn remove_if_there(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(path)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pi-session-tables-run-{name}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn empty_table_directories_count_as_empty() {
        let dir = scratch("empty-tables");
        fs::create_dir_all(dir.join("messages/month=2026-01")).unwrap();
        fs::create_dir_all(dir.join("entries")).unwrap();
        let none = contents(&dir, &|_| false).unwrap();
        assert!(none.is_empty(), "{none:?}");
        assert_eq!(none.to_string(), "nothing");
        fs::write(dir.join("entries/part-1-2-000-00001.parquet"), b"").unwrap();
        fs::write(dir.join("entries/.part-1-2-000-00002.parquet.tmp"), b"").unwrap();
        fs::create_dir_all(dir.join("notes")).unwrap();
        let some = contents(&dir, &|_| false).unwrap();
        assert_eq!(
            some.to_string(),
            "1 part file, 1 temporary part file, 1 other entry"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dead_runs_files_are_removed_and_a_live_ones_kept() {
        let dir = scratch("dead");
        let dead = begin(&dir, "10-7").unwrap();
        let live = begin(&dir, "11-8").unwrap();
        for run in ["10-7", "11-8"] {
            fs::create_dir_all(dir.join("messages/month=2026-01")).unwrap();
            fs::write(
                dir.join(format!(
                    "messages/month=2026-01/part-{run}-000-00001.parquet"
                )),
                b"",
            )
            .unwrap();
            fs::write(
                dir.join(format!("messages/.part-{run}-000-00002.parquet.tmp")),
                b"",
            )
            .unwrap();
        }
        // A finished export without a marker, and the stray temporary of another.
        fs::write(dir.join("messages/part-9-6-000-00001.parquet"), b"").unwrap();
        fs::write(dir.join("messages/.part-9-5-000-00001.parquet.tmp"), b"").unwrap();
        let alive = |pid: u32| pid == 8;
        let cleaned = remove_dead(&dir, &alive).unwrap();
        let mut said: Vec<(String, Removed)> =
            cleaned.into_iter().map(|(r, n)| (r.id, n)).collect();
        said.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            said,
            [
                (
                    "10-7".to_owned(),
                    Removed {
                        parts: 1,
                        temporaries: 1
                    }
                ),
                (
                    "9-5".to_owned(),
                    Removed {
                        parts: 0,
                        temporaries: 1
                    }
                ),
            ]
        );
        assert!(!dead.marker().exists() && live.marker().exists());
        let left = contents(&dir, &alive).unwrap();
        assert_eq!(
            left.to_string(),
            "2 part files, 1 temporary part file, the marker of an export still running (process 8)"
        );
        fs::remove_file(dir.join("messages/part-9-6-000-00001.parquet")).unwrap();
        let removed = live.remove().unwrap();
        assert_eq!(removed.to_string(), "1 part file and 1 temporary");
        live.finish().unwrap();
        assert!(contents(&dir, &alive).unwrap().is_empty());
        // The table directories left empty are gone.
        assert!(!dir.join("messages").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
