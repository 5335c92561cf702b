//! `pi-session export --format parquet`: sessions as tables (`pi_session_tables`).

use crate::Pi;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// The options of `export --format parquet`.
#[derive(Args)]
pub struct TablesArgs {}

/// Runs `pi-session export --format parquet`.
pub fn main(paths: Vec<PathBuf>, output: Option<PathBuf>, pi: Pi, args: TablesArgs) -> ExitCode {
    let _ = (paths, output, pi, args);
    eprintln!("pi-session: export --format parquet: not built yet");
    ExitCode::FAILURE
}
