//! `pi-session export`: a conversation to read or share (Markdown, a self-contained HTML
//! page, or pi's JSONL export of one branch), or many sessions as Parquet tables
//! ([`tables`]).
//!
//! The format work is the library's (`pi_session_format::export`); this module picks the
//! input, the output and reports errors.

pub mod tables;

use crate::Pi;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// `pi-session export`.
#[derive(Args)]
pub struct ExportArgs {
    /// The session file (`-` reads standard input); with `--format parquet`, session files
    /// or directories (every `*.jsonl` under them), default: pi's session directory.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// What to write.
    #[arg(long, value_enum)]
    format: Format,
    /// Where: a file (default: standard output); with `--format parquet`, a directory
    /// (required).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Export the branch ending at this entry instead of the session's leaf (its last entry).
    #[arg(long, value_name = "ID")]
    leaf: Option<String>,
    /// Which pi to follow where versions differ.
    #[arg(long, value_enum, default_value_t = Pi::V1_5)]
    pi: Pi,
    #[command(flatten)]
    tables: tables::TablesArgs,
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The conversation of the branch as Markdown.
    Markdown,
    /// The conversation of the branch as one self-contained HTML page (no network, no script
    /// from the session).
    Html,
    /// The branch as a session of its own, linear, as pi's `/export FILE.jsonl` writes it.
    Jsonl,
    /// Many sessions as Parquet tables (sessions, entries, messages, tool calls, compactions,
    /// usage entries) in the directory given by `-o`.
    Parquet,
}

/// Runs `pi-session export`.
pub fn main(args: ExportArgs) -> ExitCode {
    match args.format {
        Format::Parquet => tables::main(args.paths, args.output, args.pi, args.tables),
        Format::Markdown | Format::Html | Format::Jsonl => {
            eprintln!("pi-session: export: --format markdown|html|jsonl: not built yet");
            ExitCode::FAILURE
        }
    }
}
