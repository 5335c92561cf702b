//! The sessions a reading command takes: the files and directories on its command line, or
//! pi's own session directory when there are none, found by `pi_session_fs::discover` (which
//! says what a walk takes and leaves). Here: the usage rule (standard input once) and saying
//! the walk's notes on stderr.

use crate::display;
pub(crate) use pi_session_fs::discover::{Collected, Target, Walk};
use std::path::PathBuf;

/// Why the command line cannot be run: a usage error (exit code 2).
#[derive(Debug)]
pub(crate) struct Usage(pub String);

/// Checks the paths before anything is read: standard input can be read only once.
pub(crate) fn check_usage(paths: &[PathBuf]) -> Result<(), Usage> {
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Usage(
            "`-` (standard input) can be given only once: it can be read only once".into(),
        ));
    }
    Ok(())
}

/// [`pi_session_fs::discover::collect`] for a command: each note, and each directory without
/// session files, said on stderr; the exit code (2) when there is nothing to read at all.
pub(crate) fn collect_said(
    paths: &[PathBuf],
    how: Walk,
) -> Result<Collected, std::process::ExitCode> {
    let collected = pi_session_fs::discover::collect(paths, how).map_err(|e| {
        eprintln!("pi-session: {e}");
        std::process::ExitCode::from(2)
    })?;
    for note in &collected.notes {
        eprintln!("pi-session: {note}");
    }
    for dir in &collected.empty {
        eprintln!(
            "pi-session: error: {}: no session files (*.jsonl) in this directory",
            display::path(dir)
        );
    }
    Ok(collected)
}
