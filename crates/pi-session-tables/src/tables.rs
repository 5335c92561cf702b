//! The six tables: for each, its row (what one line of the table holds) and the builder
//! that collects rows into Arrow record batches, declared once (by a `table!` macro) so that the
//! row, the schema and the documented column list ([`Table::columns`]) cannot drift apart.

use crate::column::{Bool, Column, Float, Int, MaybeTexts, Text, Texts, Time};
use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};
use std::sync::{Arc, OnceLock};

/// One documented column: its name, type and meaning.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDoc {
    /// The column's name.
    pub name: &'static str,
    /// Its type, as `docs/tables.md` names it.
    pub doc_type: &'static str,
    /// What it holds.
    pub doc: &'static str,
}

/// Collects rows of one table into record batches.
pub trait Builder: Default + Send {
    /// The row (borrowing its texts for `'a`).
    type Row<'a>;
    /// Which table.
    const TABLE: Table;
    /// Adds a row.
    fn push(&mut self, row: &Self::Row<'_>);
    /// Rows collected since the last [`Builder::finish`].
    fn len(&self) -> usize;
    /// Whether no row was collected since the last [`Builder::finish`].
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// About how many bytes the collected rows take.
    fn bytes(&self) -> usize;
    /// The rows collected as one batch; the builder starts again empty.
    fn finish(&mut self) -> RecordBatch;
}

macro_rules! table {
    (
        $(#[$meta:meta])*
        $variant:ident, $name:literal, $row:ident, $builder:ident {
            $( $field:ident : $kind:ident = $doc:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default)]
        pub struct $row<'a> {
            $( #[doc = $doc] pub $field: <$kind as Column>::Value<'a>, )*
        }

        #[doc = concat!("Collects [`", stringify!($row), "`]s.")]
        #[derive(Default)]
        pub struct $builder {
            rows: usize,
            bytes: usize,
            $( $field: $kind, )*
        }

        impl $builder {
            /// The table's columns, in order.
            pub const COLUMNS: &'static [ColumnDoc] = &[
                $( ColumnDoc { name: stringify!($field), doc_type: "", doc: $doc }, )*
            ];

            /// The Arrow schema (without metadata).
            pub fn schema() -> SchemaRef {
                static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
                SCHEMA
                    .get_or_init(|| {
                        Arc::new(Schema::new(vec![
                            $( Field::new(stringify!($field), <$kind as Column>::data_type(), true), )*
                        ]))
                    })
                    .clone()
            }

            fn doc_types() -> Vec<&'static str> {
                vec![$( <$kind as Column>::doc_type(), )*]
            }
        }

        impl Builder for $builder {
            type Row<'a> = $row<'a>;
            const TABLE: Table = Table::$variant;

            fn push(&mut self, row: &$row<'_>) {
                self.rows += 1;
                $(
                    self.bytes += <$kind as Column>::size(&row.$field);
                    self.$field.push(&row.$field);
                )*
            }

            fn len(&self) -> usize {
                self.rows
            }

            fn bytes(&self) -> usize {
                self.bytes
            }

            fn finish(&mut self) -> RecordBatch {
                self.rows = 0;
                self.bytes = 0;
                let columns = vec![$( self.$field.finish(), )*];
                // The arrays are built from the same declaration as the schema.
                RecordBatch::try_new(Self::schema(), columns).expect("columns match the schema")
            }
        }
    };
}

/// Which table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// One row per session file.
    Sessions,
    /// One row per entry.
    Entries,
    /// One row per `message` entry.
    Messages,
    /// One row per `toolCall` block of an assistant message, with its result's entry id
    /// (its text is that entry's row in `messages`).
    ToolCalls,
    /// One row per `compaction` or `branch_summary` entry.
    Compactions,
    /// One row per `usage` entry.
    UsageEntries,
}

impl Table {
    /// Every table.
    pub const ALL: [Table; 6] = [
        Table::Sessions,
        Table::Entries,
        Table::Messages,
        Table::ToolCalls,
        Table::Compactions,
        Table::UsageEntries,
    ];

    /// The table's name: its directory under the output directory.
    pub fn name(self) -> &'static str {
        match self {
            Table::Sessions => "sessions",
            Table::Entries => "entries",
            Table::Messages => "messages",
            Table::ToolCalls => "tool_calls",
            Table::Compactions => "compactions",
            Table::UsageEntries => "usage_entries",
        }
    }

    /// The table's Arrow schema (without metadata).
    pub fn schema(self) -> SchemaRef {
        match self {
            Table::Sessions => SessionsBuilder::schema(),
            Table::Entries => EntriesBuilder::schema(),
            Table::Messages => MessagesBuilder::schema(),
            Table::ToolCalls => ToolCallsBuilder::schema(),
            Table::Compactions => CompactionsBuilder::schema(),
            Table::UsageEntries => UsageEntriesBuilder::schema(),
        }
    }

    /// The table's columns, in order, with their types and meaning.
    pub fn columns(self) -> Vec<ColumnDoc> {
        let (columns, types) = match self {
            Table::Sessions => (SessionsBuilder::COLUMNS, SessionsBuilder::doc_types()),
            Table::Entries => (EntriesBuilder::COLUMNS, EntriesBuilder::doc_types()),
            Table::Messages => (MessagesBuilder::COLUMNS, MessagesBuilder::doc_types()),
            Table::ToolCalls => (ToolCallsBuilder::COLUMNS, ToolCallsBuilder::doc_types()),
            Table::Compactions => (CompactionsBuilder::COLUMNS, CompactionsBuilder::doc_types()),
            Table::UsageEntries => (
                UsageEntriesBuilder::COLUMNS,
                UsageEntriesBuilder::doc_types(),
            ),
        };
        columns
            .iter()
            .zip(types)
            .map(|(c, doc_type)| ColumnDoc { doc_type, ..*c })
            .collect()
    }
}

table! {
    /// A row of `sessions`: one session file.
    Sessions, "sessions", SessionRow, SessionsBuilder {
        file: Text = "The session file's path, as given or found under a given directory (`-` for standard input; a name that is not printable UTF-8 escaped as `pi-session` shows it, `odd\\nname.jsonl`).",
        session_id: Text = "The header's `id`.",
        cwd: Text = "The header's `cwd`: the project.",
        name: Text = "The session's name: the last `session_info` entry's `name` (pi's rule); for an oh-my-pi file its title (the title slot's, else the header's); else null.",
        parent_session: Text = "The header's `parentSession` (the file it was forked or branched from), else null.",
        created: Time = "The header's `timestamp`.",
        modified: Time = "The latest `timestamp` of its entries (else `created`).",
        version: Int = "The header's `version` (null for version 1 files, which have none).",
        dialect: Text = "The file's dialect: `pi`, or `omp` for an oh-my-pi file (told by its title slot, header members or entry types: `docs/dialects.md`); an omp file's facts are counted by omp's rules, as `stats` counts them.",
        entries: Int = "Entry lines in the file (every line but the header that is a JSON value pi keeps).",
        dropped_lines: Int = "Lines that are not JSON (pi drops them).",
        copied_entries: Int = "Entries that an earlier session already holds (forked or branched history).",
        strict: Bool = "`pi-session validate`'s strict verdict: the file follows the format (no diagnostic of severity error). Only with `--validate`; else null.",
        pi_loadable: Bool = "`validate`'s pi-loadable verdict: pi reads everything in the file (no entry hidden, line dropped, rewrite, refusal, crash or hang). Only with `--validate`.",
        pi_resumes: Bool = "`validate`'s pi-resumes verdict: pi resumes the conversation of the file's last entry. Only with `--validate`.",
        validate_errors: Int = "Diagnostics of severity error `validate` found (summarised ones counted). Only with `--validate`.",
        validate_warnings: Int = "Diagnostics of severity warning. Only with `--validate`.",
        validate_codes: MaybeTexts = "The codes of every diagnostic (`PS0101`, …; `docs/diagnostics.md`), each once, in order. Only with `--validate`; else null.",
    }
}

table! {
    /// A row of `entries`: one entry.
    Entries, "entries", EntryRow, EntriesBuilder {
        file: Text = "The session file (`sessions.file`).",
        session_id: Text = "The header's `id`.",
        entry_id: Text = "The entry's `id` (null when it is not a string).",
        parent_id: Text = "The entry's `parentId` (null when pi takes it for a root: missing, null or empty; and when it is not a string).",
        entry_type: Text = "The entry's `type`.",
        timestamp: Time = "The entry's `timestamp`.",
        line: Int = "The entry's line in the file (1-based).",
        on_active_path: Bool = "Whether the entry is on the branch pi resumes (the path from the root to the last entry).",
        depth: Int = "Entries above it on its path (0 for a root); null when its path meets a parent cycle.",
        parent_found: Bool = "False when `parentId` names an entry the file does not hold (a dangling parent).",
        is_copy: Bool = "Whether an earlier session holds the same entry (type, id, timestamp): only with `--no-dedupe`.",
        owner_file: Text = "For a copy, the file of the first session that holds the entry; else null.",
        copied_in: Texts = "The other session files that hold a copy of the entry (later sessions, or with `--no-dedupe` all others).",
    }
}

table! {
    /// A row of `messages`: one `message` entry.
    Messages, "messages", MessageRow, MessagesBuilder {
        file: Text = "The session file.",
        session_id: Text = "The header's `id`.",
        entry_id: Text = "The entry's `id`.",
        line: Int = "The entry's line.",
        timestamp: Time = "The entry's `timestamp`, else the message's.",
        message_timestamp: Time = "`message.timestamp` (ms).",
        role: Text = "`message.role`: user, assistant, toolResult, bashExecution, custom, branchSummary, compactionSummary, ….",
        text: Text = "The text: `content` when a string, else its `text` blocks joined by a newline; a bash execution's command and output; a summary message's summary.",
        thinking: Text = "The assistant's `thinking` blocks, joined by a newline.",
        provider: Text = "`message.provider` (assistant messages).",
        model: Text = "`message.responseModel`, else `message.model` (assistant messages), as `stats --by model` names it.",
        stop_reason: Text = "`message.stopReason`.",
        error_message: Text = "`message.errorMessage`.",
        tool_call_count: Int = "`toolCall` blocks in the content (as `stats` counts them).",
        tool_call_id: Text = "`message.toolCallId` (tool results).",
        tool_name: Text = "`message.toolName` (tool results).",
        is_error: Bool = "`message.isError` (tool results).",
        call_found: Bool = "For a tool result: whether a `toolCall` with its `toolCallId` comes earlier in the file; else null.",
        input: Float = "`usage.input` (null without a usage pi can add; a missing number 0, as `stats` counts it).",
        output: Float = "`usage.output`.",
        cache_read: Float = "`usage.cacheRead`.",
        cache_write: Float = "`usage.cacheWrite`.",
        total_tokens: Float = "input + output + cacheRead + cacheWrite (pi's `tokens.total`).",
        cost_total: Float = "`usage.cost.total` (dollars).",
        usage_unreadable: Bool = "Whether the message has a usage pi cannot add (left out of the numbers, as `stats` does).",
        on_active_path: Bool = "Whether the entry is on the branch pi resumes.",
        is_copy: Bool = "Whether an earlier session holds the same entry (only with `--no-dedupe`).",
    }
}

table! {
    /// A row of `tool_calls`: one `toolCall` block with its result.
    ToolCalls, "tool_calls", ToolCallRow, ToolCallsBuilder {
        file: Text = "The session file.",
        session_id: Text = "The header's `id`.",
        call_id: Text = "The block's `id`.",
        name: Text = "The block's `name`: the tool.",
        arguments: Text = "The block's `arguments` as JSON text.",
        call_entry_id: Text = "The id of the assistant message entry holding the call.",
        timestamp: Time = "The timestamp of that entry.",
        result_entry_id: Text = "The id of the first later tool result entry whose `toolCallId` is `call_id`; null when there is none.",
        is_error: Bool = "That result's `isError`.",
        result_timestamp: Time = "That result entry's timestamp.",
        is_copy: Bool = "Whether an earlier session holds the call's entry (only with `--no-dedupe`).",
    }
}

table! {
    /// A row of `compactions`: one `compaction` or `branch_summary` entry.
    Compactions, "compactions", CompactionRow, CompactionsBuilder {
        file: Text = "The session file.",
        session_id: Text = "The header's `id`.",
        entry_id: Text = "The entry's `id`.",
        entry_type: Text = "`compaction` or `branch_summary`.",
        timestamp: Time = "The entry's `timestamp`.",
        summary: Text = "`summary`.",
        first_kept_entry_id: Text = "`firstKeptEntryId` (compactions).",
        tokens_before: Float = "`tokensBefore` (compactions).",
        from_id: Text = "`fromId` (branch summaries).",
        input: Float = "`usage.input` of the call that wrote the summary (null without a usage pi can add).",
        output: Float = "`usage.output`.",
        cache_read: Float = "`usage.cacheRead`.",
        cache_write: Float = "`usage.cacheWrite`.",
        total_tokens: Float = "input + output + cacheRead + cacheWrite.",
        cost_total: Float = "`usage.cost.total`.",
        usage_unreadable: Bool = "Whether the entry has a usage pi cannot add.",
        is_copy: Bool = "Whether an earlier session holds the same entry (only with `--no-dedupe`).",
    }
}

table! {
    /// A row of `usage_entries`: one `usage` entry (cache warming and other model calls
    /// outside the conversation).
    UsageEntries, "usage_entries", UsageEntryRow, UsageEntriesBuilder {
        file: Text = "The session file.",
        session_id: Text = "The header's `id`.",
        entry_id: Text = "The entry's `id`.",
        timestamp: Time = "The entry's `timestamp`.",
        kind: Text = "`kind`: what the call was for.",
        provider: Text = "`provider`.",
        model: Text = "`model`.",
        input: Float = "`usage.input` (null when pi cannot add the usage).",
        output: Float = "`usage.output`.",
        cache_read: Float = "`usage.cacheRead`.",
        cache_write: Float = "`usage.cacheWrite`.",
        total_tokens: Float = "input + output + cacheRead + cacheWrite.",
        cost_total: Float = "`usage.cost.total`.",
        usage_unreadable: Bool = "Whether pi cannot add the usage.",
        is_copy: Bool = "Whether an earlier session holds the same entry (only with `--no-dedupe`).",
    }
}
