//! [`SessionWriter::batch`]: several operations whose lines reach the file in one `write`,
//! all or nothing — for importers and `pi-session append`, and for throughput (one system
//! call for many entries instead of one each).

use super::labels::Labels;
use super::{SessionWriter, WriteError};

/// What a batch restores when it fails.
struct Mark {
    lines: usize,
    leaf: super::LeafId,
    labels: Labels,
    flushed: bool,
    user_messages: usize,
    assistant_messages: usize,
}

/// A batch buffer grown past this is not kept for the next batch.
const SPARE_LIMIT: usize = 16 << 20;

impl SessionWriter {
    /// Runs `operations`, holding back the lines they append, then writes them to the file in
    /// one `write`. If an operation fails, or the write does, nothing of the batch stays: not
    /// in the file (a partial write is cut off, a file the batch created is removed) and not
    /// in the writer. A batch inside a batch is part of it.
    ///
    /// ```
    /// # use pi_session_format::json;
    /// # use pi_session_format::write::{SessionWriter, WriterConfig};
    /// let mut writer = SessionWriter::in_memory("/work", WriterConfig::default())?;
    /// let user = json::parse(r#"{"role":"user","content":"hi","timestamp":1}"#)?;
    /// let failed = writer.batch(|w| {
    ///     w.append_message_value(&user)?;
    ///     w.branch("no-such-entry")
    /// });
    /// assert!(failed.is_err());
    /// assert_eq!(writer.entry_count(), 0, "the message went with the batch");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn batch<R>(
        &mut self,
        operations: impl FnOnce(&mut SessionWriter) -> Result<R, WriteError>,
    ) -> Result<R, WriteError> {
        if self.pending.is_some() {
            return operations(self);
        }
        let mark = Mark {
            lines: self.lines.len(),
            leaf: self.leaf.clone(),
            labels: self.labels.clone(),
            flushed: self.flushed,
            user_messages: self.user_messages,
            assistant_messages: self.assistant_messages,
        };
        self.pending = Some(std::mem::take(&mut self.spare_buffer));
        let result = operations(self);
        let mut pending = self.pending.take().unwrap_or_default();
        let result = result.and_then(|r| self.write_pending(&pending).map(|()| r));
        pending.clear();
        if pending.capacity() <= SPARE_LIMIT {
            self.spare_buffer = pending;
        }
        if result.is_err() {
            self.restore(mark);
        }
        result
    }

    fn write_pending(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if bytes.is_empty() {
            return Ok(());
        }
        match (&self.path, self.file.is_none()) {
            (Some(path), true) => {
                self.file = Some(pi_session_fs::Appender::open_existing(path, self.fsync)?);
            }
            (None, _) => return Ok(()),
            _ => {}
        }
        match self.file.as_mut() {
            Some(file) => Ok(file.append(bytes)?),
            None => Ok(()),
        }
    }

    fn restore(&mut self, mark: Mark) {
        let removed: Vec<_> = self.lines.drain(mark.lines..).collect();
        for line in &removed {
            self.by_id.remove(&line.id);
        }
        self.leaf = mark.leaf;
        self.labels = mark.labels;
        self.user_messages = mark.user_messages;
        self.assistant_messages = mark.assistant_messages;
        if !mark.flushed && self.flushed {
            // The batch created the file (create_new: nobody else's); it goes with the batch.
            self.file = None;
            self.flushed = false;
            if let Some(path) = &self.path {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Holds `line` back for the batch's write; `false` outside a batch.
    pub(super) fn hold_back(&mut self, line: &[u8]) -> bool {
        match self.pending.as_mut() {
            Some(pending) => {
                pending.extend_from_slice(line);
                pending.push(b'\n');
                true
            }
            None => false,
        }
    }
}
