//! [`FileAppend`]: entries appended to a session file that is never held in memory — what
//! `pi-session append` does, for any program that adds entries to a session on disk.
//!
//! 1. [`FileAppend::lock`] takes the writers' lock of the file (an interrupted append of
//!    another process is mended first: [`FileAppend::notes`]).
//! 2. The caller loads the file as it is now (any [`Session`]: read, or mapped and
//!    released) and [`FileAppend::plan`]s the entries on it: each is completed (`id`,
//!    `parentId`, `timestamp`, pi's key order) against the session's ids and leaf, under the
//!    lock, so two appends never attach to the same old leaf. The plan also holds a small
//!    document to validate the new lines in ([`Plan::check_document`]): the header, the
//!    few existing entries the checks of the new lines look at, and the new lines, so that
//!    the validator sees their context without the file's text.
//! 3. [`FileAppend::commit`] appends the lines in one all-or-nothing write, unless the file
//!    changed since it was loaded (a pi without a lock appended): then [`Commit::Changed`],
//!    and the caller loads and plans again.
//!
//! A v1 or v2 file is refused: pi rewrites such a file when it opens it, and a rewrite is
//! `migrate --in-place`'s job, with its safeguards.

use super::append::complete_entry;
use super::check_document::{NewLines, check_document};
use super::{LeafId, WriteError, ids, string_key};
use crate::date;
use crate::json::JsValue;
use crate::session::{Key, Session};
use crate::write::{Clock, IdSource, RandomIds, SystemClock};
use pi_session_fs::Appender;
use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};

/// A session file locked for appending.
pub struct FileAppend {
    path: PathBuf,
    file: Appender,
}

/// Entries completed against the file as it was loaded, ready to be appended.
pub struct Plan {
    /// The lines to append, each ending in a newline.
    lines: Vec<u8>,
    /// Each entry's id, in order.
    pub ids: Vec<String>,
    /// The file's length when it was loaded.
    size: u64,
    /// The header, the existing entries the new lines' checks look at, and the new lines.
    check_document: Vec<u8>,
    /// How many lines of `check_document` come before the new ones.
    context_lines: usize,
}

impl Plan {
    /// The lines to append.
    pub fn lines(&self) -> &[u8] {
        &self.lines
    }

    /// A session to validate the new lines in: the file's header, the existing entries the
    /// validator's checks of the new lines look at (each linked to its nearest kept
    /// ancestor), then the new lines. The validator finds the errors and warnings on the new lines that it
    /// finds on them in the whole file after the append (the `append` fuzz check compares
    /// the two; the format notes a whole file folds into one, such as `id-format`, aside),
    /// though the document holds a few lines however long the branches are.
    /// Diagnostics on the first [`Plan::context_lines`] lines are about the skeleton, not
    /// about the entries.
    pub fn check_document(&self) -> &[u8] {
        &self.check_document
    }

    /// How many lines of [`Plan::check_document`] come before the new ones.
    pub fn context_lines(&self) -> usize {
        self.context_lines
    }
}

/// What [`FileAppend::commit`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Commit {
    /// The lines are in the file.
    Appended,
    /// The file changed since it was loaded; nothing was written: load and plan again.
    Changed,
}

/// Where a plan's entry failed: its position among the entries, and why.
#[derive(Debug)]
pub struct EntryError {
    /// The entry's index in what was given to [`FileAppend::plan`].
    pub index: usize,
    /// Why it cannot be appended.
    pub error: WriteError,
}

impl FileAppend {
    /// Takes the lock of the session file at `path` (it must exist).
    pub fn lock(path: &Path, fsync: bool) -> Result<FileAppend, WriteError> {
        let file = Appender::open_existing(path, fsync)?;
        Ok(FileAppend {
            path: path.to_owned(),
            file,
        })
    }

    /// What taking the lock mended, one sentence each (an append a killed process left).
    pub fn notes(&self) -> &[String] {
        self.file.notes()
    }

    /// The file's length now.
    pub fn len(&self) -> Result<u64, WriteError> {
        Ok(self.file.len()?)
    }

    /// Whether the file is empty now.
    pub fn is_empty(&self) -> Result<bool, WriteError> {
        Ok(self.file.is_empty()?)
    }

    /// Completes `entries` against `session` (the file as loaded now, `size` bytes) with
    /// ids drawn at random unless given, times from the system clock.
    pub fn plan(
        &self,
        session: &Session<'_>,
        size: u64,
        entries: &[JsValue],
    ) -> Result<Plan, EntryError> {
        self.plan_with(
            session,
            size,
            entries,
            &mut RandomIds::new(),
            &mut SystemClock,
        )
    }

    /// [`FileAppend::plan`] with the ids and the clock given.
    pub fn plan_with(
        &self,
        session: &Session<'_>,
        size: u64,
        entries: &[JsValue],
        id_source: &mut dyn IdSource,
        clock: &mut dyn Clock,
    ) -> Result<Plan, EntryError> {
        let refuse = |error| EntryError { index: 0, error };
        if session.version.rewrite {
            return Err(refuse(WriteError::OldVersion {
                path: self.path.clone(),
                version: session.version.effective,
            }));
        }
        // pi's index: every entry by id (the last of a repeated id), the leaf the last entry.
        let by_id = session.index();
        let old = |key: &Key| by_id.get(session, key).is_some();
        let mut leaf = LeafId::named(match session.entries.last() {
            Some(&i) => session.records[i].value().get("id").cloned(),
            None => Some(JsValue::Null),
        });
        let mut new_ids: FxHashSet<Key> = FxHashSet::default();
        let mut lines = Vec::new();
        let mut ids_out = Vec::with_capacity(entries.len());
        // The existing entries the new ones attach to or name.
        let mut named: Vec<usize> = Vec::new();
        let mut planned = NewLines::default();
        for (index, entry) in entries.iter().enumerate() {
            let exists = |key: &Key| old(key) || new_ids.contains(key);
            let (line, _) = complete_entry(
                entry.clone(),
                &exists,
                &leaf,
                &mut || date::to_iso_string(clock.now_ms() as f64),
                &mut || {
                    ids::entry_id(id_source, |id| {
                        let key = string_key(id);
                        old(&key) || new_ids.contains(&key)
                    })
                },
            )
            .map_err(|error| EntryError { index, error })?;
            let value = line.value();
            // Any truthy value: the default parent is the leaf's id, whatever its type.
            for member in ["parentId", "targetId", "firstKeptEntryId", "fromId"] {
                if let Some(v) = value.get(member).filter(|v| v.is_truthy()) {
                    let key = Key::of(Some(v), 0);
                    if let Some(i) = by_id.get(session, &key) {
                        named.push(i);
                    }
                }
            }
            planned.add(&value);
            new_ids.insert(string_key(&line.id));
            leaf = LeafId::named(Some(JsValue::string(line.id.as_str())));
            ids_out.push(line.id.clone());
            lines.extend_from_slice(line.json());
            lines.push(b'\n');
        }
        let (check_document, context_lines) =
            check_document(session, &named, planned.calls(), &new_ids, &lines);
        Ok(Plan {
            lines,
            ids: ids_out,
            size,
            check_document,
            context_lines,
        })
    }

    /// Appends the plan's lines (all or nothing), unless the file changed since the plan's
    /// session was loaded.
    pub fn commit(&mut self, plan: &Plan) -> Result<Commit, WriteError> {
        if self.file.len()? != plan.size {
            return Ok(Commit::Changed);
        }
        self.file.append(&plan.lines)?;
        Ok(Commit::Appended)
    }
}
