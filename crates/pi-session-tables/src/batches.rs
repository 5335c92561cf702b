//! The tables in memory: the rows [`write_session`](crate::write_session) makes, collected
//! into each table's Arrow [`RecordBatch`]es ([`Collector`], the [`RowSink`] that writes no
//! file), and what [`Export::batches`](crate::Export::batches) gives for a set of session
//! files ([`Batches`]): the rows, columns and schemas of an export's Parquet files as
//! `pyarrow.parquet.read_table` (or the parquet crate's Arrow reader) reads them back from an
//! export without partitions, without the files.
//!
//! Partitions are directories of part files, not columns: collected rows are not partitioned
//! (a [`RowSink`]'s `partition` argument is ignored) and have no partition column.

use crate::part::ROW_GROUP_BYTES;
use crate::rows::{RowSink, Written};
use crate::tables::{
    Builder, CompactionRow, CompactionsBuilder, EntriesBuilder, EntryRow, MessageRow,
    MessagesBuilder, SessionRow, SessionsBuilder, Table, ToolCallRow, ToolCallsBuilder,
    UsageEntriesBuilder, UsageEntryRow,
};
use arrow_array::RecordBatch;
use std::convert::Infallible;

/// Rows are made a record batch once they take about this many bytes in memory: the size of
/// an export's row groups ([`ROW_GROUP_BYTES`]).
pub const BATCH_BYTES: usize = ROW_GROUP_BYTES;

/// One table's rows: the batches made so far and the rows collected since.
#[derive(Default)]
struct Collecting<B: Builder> {
    builder: B,
    batches: Vec<RecordBatch>,
}

impl<B: Builder> Collecting<B> {
    fn push(&mut self, row: &B::Row<'_>) {
        self.builder.push(row);
        if self.builder.bytes() >= BATCH_BYTES {
            self.batches.push(self.builder.finish());
        }
    }

    fn finish(mut self) -> Vec<RecordBatch> {
        if !self.builder.is_empty() {
            self.batches.push(self.builder.finish());
        }
        self.batches
    }
}

/// A [`RowSink`] that keeps the rows in memory, as each table's record batches (with the
/// table's schema, [`Table::schema`]), a batch per [`BATCH_BYTES`] of rows. Taking a row
/// never fails.
#[derive(Default)]
pub struct Collector {
    sessions: Collecting<SessionsBuilder>,
    entries: Collecting<EntriesBuilder>,
    messages: Collecting<MessagesBuilder>,
    tool_calls: Collecting<ToolCallsBuilder>,
    compactions: Collecting<CompactionsBuilder>,
    usage_entries: Collecting<UsageEntriesBuilder>,
}

impl Collector {
    /// An empty collector.
    pub fn new() -> Collector {
        Collector::default()
    }

    /// Every table's batches, in the order of [`Table::ALL`], the rows in the order they
    /// were taken; a table without rows has no batch.
    pub fn finish(self) -> [(Table, Vec<RecordBatch>); 6] {
        [
            (Table::Sessions, self.sessions.finish()),
            (Table::Entries, self.entries.finish()),
            (Table::Messages, self.messages.finish()),
            (Table::ToolCalls, self.tool_calls.finish()),
            (Table::Compactions, self.compactions.finish()),
            (Table::UsageEntries, self.usage_entries.finish()),
        ]
    }
}

impl RowSink for Collector {
    type Error = Infallible;

    fn session(&mut self, _: &str, row: &SessionRow<'_>) -> Result<(), Infallible> {
        self.sessions.push(row);
        Ok(())
    }

    fn entry(&mut self, _: &str, row: &EntryRow<'_>) -> Result<(), Infallible> {
        self.entries.push(row);
        Ok(())
    }

    fn message(&mut self, _: &str, row: &MessageRow<'_>) -> Result<(), Infallible> {
        self.messages.push(row);
        Ok(())
    }

    fn tool_call(&mut self, _: &str, row: &ToolCallRow<'_>) -> Result<(), Infallible> {
        self.tool_calls.push(row);
        Ok(())
    }

    fn compaction(&mut self, _: &str, row: &CompactionRow<'_>) -> Result<(), Infallible> {
        self.compactions.push(row);
        Ok(())
    }

    fn usage_entry(&mut self, _: &str, row: &UsageEntryRow<'_>) -> Result<(), Infallible> {
        self.usage_entries.push(row);
        Ok(())
    }
}

/// The tables of a set of session files in memory ([`Export::batches`](crate::Export::batches)).
#[derive(Debug, Default)]
pub struct Batches {
    /// Every table, in the order of [`Table::ALL`], with its record batches, each of the
    /// table's schema ([`Table::schema`]); a table without rows has no batch. A session's
    /// rows are together, the sessions in no particular order (the threads took them in
    /// turn), as in an export's part files.
    pub tables: Vec<(Table, Vec<RecordBatch>)>,
    /// Sessions whose rows are there.
    pub sessions: usize,
    /// Rows of `entries` and copies of forked history left out.
    pub written: Written,
    /// The files skipped, in the order given: the file as it is shown, and why.
    pub skipped: Vec<(String, String)>,
}

impl Batches {
    /// The record batches of `table` (none when it has no row).
    pub fn table(&self, table: Table) -> &[RecordBatch] {
        self.tables
            .iter()
            .find(|(t, _)| *t == table)
            .map_or(&[], |(_, batches)| batches.as_slice())
    }

    /// The rows of `table`.
    pub fn rows(&self, table: Table) -> usize {
        self.table(table).iter().map(RecordBatch::num_rows).sum()
    }
}
