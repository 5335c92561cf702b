//! [`SessionWriter::create_branched_session`]: a new session holding one path of this one,
//! its labels re-added at the end (pi's `createBranchedSession`).

use super::build;
use super::{
    LeafId, Line, SessionWriter, Text, WriteError, WriteProfile, ids, line_key, session_file_name,
    string_key,
};
use crate::json::JsValue;
use crate::session::Key;
use pi_session_fs::input::ReleaseBehind;
use pi_session_fs::{Appender, FileError};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

impl SessionWriter {
    /// Starts a new session holding only the path from the root to `leaf_id`, its labels
    /// re-added at the end (pi's `createBranchedSession`, with 0.87.1's re-chaining past the
    /// labels in every profile); the writer continues in it.
    /// Returns the new file's path (`None` in memory). The file is written now if the path
    /// already holds a conversation, otherwise at its first one; it is written atomically.
    pub fn create_branched_session(
        &mut self,
        leaf_id: &str,
    ) -> Result<Option<PathBuf>, WriteError> {
        self.branched(leaf_id, None)
    }

    /// [`SessionWriter::create_branched_session`] into the file `out`, which must not exist:
    /// written now (conversation or not), atomically, and the writer continues in it.
    ///
    /// (A writer made by [`SessionWriter::load`] does the same without `out`: its branched
    /// session is written now, with pi's file name, next to the file it was read from.)
    pub fn create_branched_session_at(
        &mut self,
        leaf_id: &str,
        out: &Path,
    ) -> Result<PathBuf, WriteError> {
        let out = super::paths::absolute(out);
        self.branched(leaf_id, Some(&out))?;
        Ok(out)
    }

    /// The active branch as a session of its own, in JSONL (pi 0.87.1+'s
    /// `serializeSessionBranch`, behind `/export`): a header with this session's id and cwd
    /// and the time now, then every entry from the root to the leaf, labels included, each
    /// the child of the one before. Nothing is written.
    pub fn export_branch(&mut self) -> Result<Vec<u8>, WriteError> {
        let mut out = Vec::new();
        for line in self.export_branch_lines()? {
            out.extend_from_slice(&line?);
        }
        Ok(out)
    }

    /// [`SessionWriter::export_branch`] line by line (each ending in a newline), for a branch
    /// too long to hold at once. The branch is found first (its errors come here); the one
    /// error among the lines is the last item: the file the lines were read from shrank
    /// while they were read. A line read (in part) past the end of a file truncated since
    /// reads as zeros, which no entry is: the file is checked then, every 16 MiB of lines and
    /// at the end, so no line read from beyond the file's new end comes out (lines wholly
    /// before it still do, up to the check that finds it).
    pub fn export_branch_lines(
        &mut self,
    ) -> Result<impl Iterator<Item = Result<Vec<u8>, WriteError>> + '_, WriteError> {
        if !self.profile.has_usage_entries() {
            return Err(WriteError::Unsupported {
                what: "session export",
                profile: self.profile,
            });
        }
        let path = self.branch_path(None)?;
        let (_, timestamp) = self.now();
        let header = build::header(&self.session_id, &timestamp, &self.cwd, None);
        let mut first = header.text().to_vec();
        first.push(b'\n');
        let this = &*self;
        let mut parent = JsValue::Null;
        // The loaded lines' pages are let go behind the walk (they are read once each).
        let source = this.source.as_ref().map(|(input, _)| Arc::clone(input));
        let mut behind = ReleaseBehind::new(move |range| {
            if let Some(input) = &source {
                input.release(range);
            }
        });
        // Set once a check failed: its error is the last item.
        let shrank = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&shrank);
        let entries = path.into_iter().map_while(move |i| {
            if stopped.load(Ordering::Relaxed) {
                return None;
            }
            let line = &this.lines[i];
            let mut value = build::parse_line(line);
            // An entry was an object when it was loaded: one that no longer reads as one was
            // read (in part) past the end of a file truncated since, as zeros. So the file is
            // checked then, and every 16 MiB of lines read, and at the end.
            let released = match &line.json {
                Text::Read(_, range) => behind.passed(range.clone()),
                Text::Owned(_) => false,
            };
            if (released || !matches!(value, JsValue::Object(_)))
                && let Err(e) = this.check_source()
            {
                stopped.store(true, Ordering::Relaxed);
                return Some(Err(e));
            }
            if let JsValue::Object(o) = &mut value {
                o.set("parentId", std::mem::replace(&mut parent, JsValue::Null));
            }
            parent = line.id_value().unwrap_or(JsValue::Null);
            let mut out = crate::json::to_string(&value).into_bytes();
            out.push(b'\n');
            Some(Ok(out))
        });
        let at_the_end = std::iter::once_with(move || {
            if shrank.load(Ordering::Relaxed) {
                Ok(())
            } else {
                this.check_source()
            }
        })
        .filter_map(Result::err)
        .map(Err);
        Ok(std::iter::once(Ok(first)).chain(entries).chain(at_the_end))
    }

    fn branched(
        &mut self,
        leaf_id: &str,
        out: Option<&Path>,
    ) -> Result<Option<PathBuf>, WriteError> {
        let path = self.branch_path(Some(&JsValue::string(leaf_id)))?;
        if path.is_empty() {
            return Err(WriteError::NotFound(leaf_id.to_owned()));
        }
        // Entries that followed a label are re-chained past it, and a compaction kept from a
        // label keeps from the next entry, as 0.87.1+ do. pi 0.73.1 leaves them pointing at the
        // dropped labels (orphans, pi#5669); every profile here re-chains (docs/divergences.md).
        let mut kept: Vec<Line> = Vec::with_capacity(path.len() + 1);
        let mut replacement: HashMap<Key, JsValue> = HashMap::new();
        let mut pending: Vec<Key> = Vec::new();
        let mut parent = JsValue::Null;
        // Keys as the writer's lines have them: an object or array (which JavaScript compares
        // by identity) gets a key of its own from one counter, equal to no other.
        for &i in &path {
            let line = &self.lines[i];
            if line.entry_type.as_deref() == Some("label") {
                pending.push(line.id.clone());
                continue;
            }
            let id = line.id_value().unwrap_or(JsValue::Null);
            for label in pending.drain(..) {
                replacement.insert(label, id.clone());
            }
            let mut value = build::parse_line(line);
            if let JsValue::Object(o) = &mut value {
                o.set("parentId", parent.clone());
                if line.entry_type.as_deref() == Some("compaction") {
                    let first_kept = o.get("firstKeptEntryId").cloned();
                    let own =
                        first_kept.as_ref().map(|k| line_key(Some(k))) == Some(line.id.clone());
                    let new = if own {
                        id.clone()
                    } else {
                        first_kept
                            .as_ref()
                            .and_then(|k| replacement.get(&line_key(Some(k))).cloned())
                            .or(first_kept)
                            .unwrap_or(JsValue::Null)
                    };
                    o.set("firstKeptEntryId", new);
                }
            }
            kept.push(build::line_of_value(&value));
            parent = id;
        }
        let (now, timestamp) = self.now();
        let session_id = self.ids.session_id(now);
        let previous_path = self
            .path
            .as_ref()
            .or(self.origin.as_ref())
            .map(|p| p.to_string_lossy().into_owned());
        let header = build::header(&session_id, &timestamp, &self.cwd, previous_path.as_deref());
        let mut path_ids: HashSet<Key> = kept.iter().map(|l| l.id.clone()).collect();
        let mut last = kept
            .last()
            .and_then(Line::id_value)
            .filter(JsValue::is_truthy);
        let mut label_lines = Vec::new();
        for (target_key, target, label, label_time) in self.labels.in_order() {
            if !path_ids.contains(target_key) {
                continue;
            }
            let id = ids::entry_id(self.ids.as_mut(), |id| path_ids.contains(&string_key(id)));
            path_ids.insert(string_key(&id));
            let mut e = build::Entry::bare("label");
            let parent = LeafId::named(Some(last.take().unwrap_or(JsValue::Null)));
            e.tail(&id, &parent, label_time.as_ref());
            e.value("targetId", Some(target))
                .value("label", Some(label));
            label_lines.push(e.finish(&id).into_line());
            last = Some(JsValue::string(id));
        }
        let mut lines = Vec::with_capacity(kept.len() + label_lines.len() + 1);
        lines.push(header);
        lines.extend(kept);
        lines.extend(label_lines);
        // A loaded (detached) session's branch goes next to the file it was read from.
        let detached_dir = match (&self.path, &self.origin) {
            (None, Some(origin)) => origin.parent().map(Path::to_owned),
            _ => None,
        };
        let name = session_file_name(&timestamp, &session_id);
        let new_path = match (out, &detached_dir) {
            (Some(out), _) => Some(out.to_owned()),
            (None, Some(dir)) => Some(dir.join(&name)),
            (None, None) => self
                .session_dir
                .as_ref()
                .filter(|_| self.path.is_some())
                .map(|dir| dir.join(&name)),
        };
        let write_now = out.is_some() || detached_dir.is_some();
        // Write first: a failure leaves the writer in its session.
        let mut next = SessionWriterState::new(lines, self.profile);
        let file = match &new_path {
            Some(p) if next.conversation_started || write_now => {
                let content = next.whole_file();
                self.check_source()?;
                pi_session_fs::publish(p, &content, false).map_err(|source| FileError::Io {
                    path: p.clone(),
                    doing: "create",
                    source,
                })?;
                Some(Appender::open_existing(p, self.fsync)?)
            }
            _ => None,
        };
        self.flushed = file.is_some();
        self.file = file;
        self.reset_lines(std::mem::take(&mut next.lines));
        self.session_id = session_id;
        if new_path.is_some() {
            self.path = new_path.clone();
        }
        Ok(new_path)
    }
}

/// A branched session's lines before the writer moves into it.
struct SessionWriterState {
    lines: Vec<Line>,
    conversation_started: bool,
}

impl SessionWriterState {
    fn new(lines: Vec<Line>, profile: WriteProfile) -> Self {
        let assistant = lines.iter().any(|l| l.is_message("assistant"));
        let user = lines.iter().any(|l| l.is_message("user"));
        SessionWriterState {
            conversation_started: assistant || (profile.user_message_starts_file() && user),
            lines,
        }
    }

    fn whole_file(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for line in &self.lines {
            out.extend_from_slice(&line.stringified());
            out.push(b'\n');
        }
        out
    }
}
