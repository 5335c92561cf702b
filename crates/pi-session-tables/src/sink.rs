//! Where one writer's rows go: a part file per table and partition, named uniquely for the
//! run and the writer (`part-<run>-<writer>-<n>.parquet`), with bounds on the memory the
//! collected rows take and on the files open at once (a part closed early is followed by a
//! new one). It is the [`RowSink`] of a Parquet export; [`Collector`](crate::Collector) is
//! the one that keeps the batches in memory.

use crate::compression::Compression;
use crate::error::Error;
use crate::part::{Part, Stamp};
use crate::partition::PartitionBy;
use crate::rows::RowSink;
use crate::tables::{
    Builder, CompactionRow, CompactionsBuilder, EntriesBuilder, EntryRow, MessageRow,
    MessagesBuilder, SessionRow, SessionsBuilder, ToolCallRow, ToolCallsBuilder,
    UsageEntriesBuilder, UsageEntryRow,
};
use rustc_hash::FxHashMap;
use std::path::PathBuf;

/// Rows collected by one writer, over all its parts, before every part writes a row group.
pub const WRITER_BYTES: usize = 96 << 20;

/// Part files open at once per writer per table (more partitions close the least recently
/// used part).
pub const OPEN_PARTS: usize = 16;

/// The parts of one table.
struct Parts<B: Builder> {
    open: FxHashMap<String, (Part<B>, u64)>,
}

impl<B: Builder> Default for Parts<B> {
    fn default() -> Self {
        Parts {
            open: FxHashMap::default(),
        }
    }
}

/// Where part files go and how they are named.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The output directory.
    pub dir: PathBuf,
    /// What makes this run's names unique (`<ms since epoch>-<pid>`).
    pub run: String,
    /// What each file says in its metadata.
    pub stamp: Stamp,
    /// How every column chunk is compressed.
    pub compression: Compression,
}

/// One writer's part files, all tables.
pub struct Sink {
    layout: Layout,
    writer: usize,
    next: u64,
    clock: u64,
    sessions: Parts<SessionsBuilder>,
    entries: Parts<EntriesBuilder>,
    messages: Parts<MessagesBuilder>,
    tool_calls: Parts<ToolCallsBuilder>,
    compactions: Parts<CompactionsBuilder>,
    usage_entries: Parts<UsageEntriesBuilder>,
    written: Vec<PathBuf>,
}

/// A method of [`RowSink`]: the row goes to its table's part of the partition, opened when
/// missing (closing the least recently used part when [`OPEN_PARTS`] are open).
macro_rules! push_fn {
    ($name:ident, $field:ident, $row:ident) => {
        fn $name(&mut self, partition: &str, row: &$row<'_>) -> Result<(), Error> {
            self.clock += 1;
            let clock = self.clock;
            if !self.$field.open.contains_key(partition) {
                if self.$field.open.len() >= OPEN_PARTS {
                    let oldest = self
                        .$field
                        .open
                        .iter()
                        .min_by_key(|(_, (_, used))| *used)
                        .map(|(k, _)| k.clone());
                    if let Some((part, _)) = oldest.and_then(|k| self.$field.open.remove(&k)) {
                        self.written.extend(part.finish(false)?);
                    }
                }
                let path = self.part_path(stringify!($field), partition);
                self.$field.open.insert(
                    partition.to_owned(),
                    (
                        Part::new(path, self.layout.stamp.clone(), self.layout.compression),
                        clock,
                    ),
                );
            }
            let (part, used) = self.$field.open.get_mut(partition).expect("just inserted");
            *used = clock;
            part.push(row)
        }
    };
}

impl Sink {
    /// The sink of writer number `writer` (unique among the run's writers).
    pub fn new(layout: Layout, writer: usize) -> Sink {
        Sink {
            layout,
            writer,
            next: 0,
            clock: 0,
            sessions: Parts::default(),
            entries: Parts::default(),
            messages: Parts::default(),
            tool_calls: Parts::default(),
            compactions: Parts::default(),
            usage_entries: Parts::default(),
            written: Vec::new(),
        }
    }

    fn part_path(&mut self, table: &str, partition: &str) -> PathBuf {
        self.next += 1;
        let mut path = self.layout.dir.join(table);
        if !partition.is_empty() {
            path.push(partition);
        }
        path.push(format!(
            "part-{}-{:03}-{:05}.parquet",
            self.layout.run, self.writer, self.next
        ));
        path
    }

    /// Bytes collected and not written yet, over every part.
    pub fn buffered(&self) -> usize {
        fn sum<B: Builder>(p: &Parts<B>) -> usize {
            p.open.values().map(|(part, _)| part.buffered()).sum()
        }
        sum(&self.sessions)
            + sum(&self.entries)
            + sum(&self.messages)
            + sum(&self.tool_calls)
            + sum(&self.compactions)
            + sum(&self.usage_entries)
    }

    /// Finishes every part; the part files written, in no particular order.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, Error> {
        fn close<B: Builder>(p: Parts<B>, out: &mut Vec<PathBuf>) -> Result<(), Error> {
            for (_, (part, _)) in p.open {
                out.extend(part.finish(false)?);
            }
            Ok(())
        }
        let mut out = std::mem::take(&mut self.written);
        close(self.sessions, &mut out)?;
        close(self.entries, &mut out)?;
        close(self.messages, &mut out)?;
        close(self.tool_calls, &mut out)?;
        close(self.compactions, &mut out)?;
        close(self.usage_entries, &mut out)?;
        Ok(out)
    }
}

impl RowSink for Sink {
    type Error = Error;

    push_fn!(session, sessions, SessionRow);
    push_fn!(entry, entries, EntryRow);
    push_fn!(message, messages, MessageRow);
    push_fn!(tool_call, tool_calls, ToolCallRow);
    push_fn!(compaction, compactions, CompactionRow);
    push_fn!(usage_entry, usage_entries, UsageEntryRow);

    /// Writes a row group in every part when the rows collected take more than
    /// [`WRITER_BYTES`]; call it between sessions.
    fn relieve(&mut self) -> Result<(), Error> {
        if self.buffered() < WRITER_BYTES {
            return Ok(());
        }
        fn flush<B: Builder>(p: &mut Parts<B>) -> Result<(), Error> {
            p.open.values_mut().try_for_each(|(part, _)| part.flush())
        }
        flush(&mut self.sessions)?;
        flush(&mut self.entries)?;
        flush(&mut self.messages)?;
        flush(&mut self.tool_calls)?;
        flush(&mut self.compactions)?;
        flush(&mut self.usage_entries)
    }
}

/// Writes an empty part file (the schema, no row) for each table whose directory does not
/// exist, so that readers find every table even when nothing filled it; partitioned, in the
/// partition of rows without a value (`month=__HIVE_DEFAULT_PARTITION__`).
pub fn write_empty_tables(
    layout: &Layout,
    partition_by: Option<PartitionBy>,
) -> Result<Vec<PathBuf>, Error> {
    fn one<B: Builder>(
        layout: &Layout,
        partition_by: Option<PartitionBy>,
    ) -> Result<Option<PathBuf>, Error> {
        let mut dir = layout.dir.join(B::TABLE.name());
        if dir.exists() {
            return Ok(None);
        }
        if let Some(by) = partition_by {
            dir.push(format!(
                "{}={}",
                by.column(),
                crate::partition::NULL_PARTITION
            ));
        }
        let path = dir.join(format!("part-{}-empty.parquet", layout.run));
        Part::<B>::new(path, layout.stamp.clone(), layout.compression).finish(true)
    }
    let mut out = Vec::new();
    out.extend(one::<SessionsBuilder>(layout, partition_by)?);
    out.extend(one::<EntriesBuilder>(layout, partition_by)?);
    out.extend(one::<MessagesBuilder>(layout, partition_by)?);
    out.extend(one::<ToolCallsBuilder>(layout, partition_by)?);
    out.extend(one::<CompactionsBuilder>(layout, partition_by)?);
    out.extend(one::<UsageEntriesBuilder>(layout, partition_by)?);
    Ok(out)
}
