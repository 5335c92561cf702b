//! pi coding-agent sessions as Parquet tables: `sessions`, `entries`, `messages`,
//! `tool_calls`, `compactions` and `usage_entries` (the columns: [`tables`], and
//! `docs/tables.md`), written by `pi-session export --format parquet`, or handed over in
//! memory as Arrow record batches (`pi_session.tables()` of the Python binding).
//!
//! History that pi copied into forked and branched sessions is counted once, exactly as
//! `pi-session stats` counts it ([`ownership`]). An export ([`Export::write`]) is two passes
//! over the sessions, each on every core: the keys of every entry ([`SessionKeys`]) give the
//! [`Ownership`]; then each session's rows ([`rows::write_session`]) go to a [`RowSink`], one
//! per thread. For the Parquet files it is a writer's part files ([`Sink`]), one row group per
//! bounded batch, compressed as [`Export::compression`] says (zstd level 1 by default), each file put in place atomically and never over an
//! existing one, all of them removed when the export stops ([`run`]). Nothing here prints or
//! handles signals: the caller reports ([`Exported`], [`Stopped`]) and, for Ctrl-C, abandons
//! the [`Run`] (`pi_session_fs::process::on_stop_signal`).
//!
//! [`Export::batches`] runs the same two passes with a [`Collector`] per thread instead: each
//! table's [`RecordBatch`](arrow_array::RecordBatch)es in memory ([`Batches`]), the rows,
//! columns and schemas of the Parquet files read back, without a file ([`batches`]).
//!
//! ```no_run
//! use pi_session_fs::discover::Target;
//! use pi_session_tables::Export;
//!
//! let export = Export::new("tables");
//! export.check_output().map_err(|e| e.to_string())?;
//! let exported = export
//!     .write(&[Target::File("session.jsonl".into())])
//!     .map_err(|stopped| stopped.error.to_string())?;
//! println!("{} part files, {} entries", exported.files.len(), exported.written.entries);
//! # Ok::<(), String>(())
//! ```
//!
//! ```no_run
//! use pi_session_fs::discover::Target;
//! use pi_session_tables::{Export, Table};
//!
//! // The directory is not used: nothing is written.
//! let batches = Export::new("").batches(&[Target::File("session.jsonl".into())]);
//! for batch in batches.table(Table::Messages) {
//!     println!("{} messages", batch.num_rows());
//! }
//! ```

pub mod batches;
pub mod column;
pub mod compression;
pub mod error;
pub mod export;
pub mod ownership;
pub mod part;
pub mod partition;
pub mod rows;
pub mod run;
pub mod sink;
pub mod tables;
pub mod text;

pub use batches::{Batches, Collector};
pub use compression::{Codec, Compression, CompressionError};
pub use error::Error;
pub use export::{Export, Exported, Refusal, Stopped};
pub use ownership::{Ownership, SessionKeys};
pub use part::Stamp;
pub use partition::PartitionBy;
pub use rows::{Options, RowSink, Source, Verdicts, Written, write_session};
pub use run::{Contents, Removed, Run};
pub use sink::{Layout, Sink, write_empty_tables};
pub use tables::Table;

/// The version of the tables' schemas, written in every file's key-value metadata under
/// [`SCHEMA_VERSION_KEY`]. It changes when a column is removed, renamed or changes type or
/// meaning; new columns at the end keep it. Version 2 removed `tool_calls.result_text` (the
/// result's text is its row in `messages`, joined by `result_entry_id`).
pub const SCHEMA_VERSION: u32 = 2;

/// The Parquet key-value metadata key of [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "pi_session_tables.schema_version";
