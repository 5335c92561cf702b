//! `pi-session export --format parquet`: the options, the messages and the exit status of an
//! export of sessions as tables (`pi_session_tables::Export`, which does the two passes and
//! keeps it all or nothing).
//!
//! Ctrl-C, `SIGTERM` and `SIGHUP` remove what the export wrote before the process dies
//! (`pi_session_fs::process::on_stop_signal` and `Run::abandon`); an export that was killed is
//! cleaned up by the next export into the directory. A file that is not a session is reported
//! and skipped, the others still exported, and the exit code says so.

use crate::display;
use crate::validate::targets;
use clap::{Args, ValueEnum};
use pi_session_format::PiVersion;
use pi_session_format::stats::report::TimeRange;
use pi_session_fs::process;
use pi_session_tables::{Codec, Compression, Export, Options, PartitionBy, run};
use std::path::PathBuf;
use std::process::ExitCode;

/// The options of `export --format parquet`.
#[derive(Args)]
pub(crate) struct TablesArgs {
    /// With `--format parquet`: also take, in directories, the archives real deployments
    /// leave beside sessions (`*.jsonl.reset.<time>`, `*.jsonl.deleted.<time>`,
    /// `*.jsonl.bak-<n>-ms`).
    #[arg(long)]
    include_archived: bool,
    /// With `--format parquet`: write every copy of history that forked and branched
    /// sessions copied (flagged `is_copy`), instead of only the first session's.
    #[arg(long)]
    no_dedupe: bool,
    /// With `--format parquet`: Hive-style partition directories
    /// (`messages/month=2026-11/part-….parquet`).
    #[arg(long, value_enum, value_name = "BY")]
    partition_by: Option<By>,
    /// With `--format parquet`: only entries written on or after this day (`YYYY-MM-DD`,
    /// `today` or `yesterday`, UTC) or time (ISO 8601), added as new part files beside an
    /// earlier export's.
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// With `--format parquet`: follow symbolic links to directories while walking a
    /// directory.
    #[arg(long)]
    follow: bool,
    /// With `--format parquet`: also validate every session (as `pi-session validate`
    /// does) and fill the `sessions` table's verdict columns (`strict`, `pi_loadable`,
    /// `pi_resumes`, `validate_errors`, `validate_warnings`, `validate_codes`), which are
    /// null without it. Costs about as much time again as the export.
    #[arg(long)]
    validate: bool,
    /// With `--format parquet`: how the column chunks are compressed (default zstd; lz4 is
    /// Parquet's LZ4_RAW).
    #[arg(long, value_enum, value_name = "CODEC")]
    compression: Option<CodecArg>,
    /// With `--format parquet`: zstd's level, 1 (the default, fastest) to 22 (smallest), or
    /// -7 to -1 (faster still, larger files); the other codecs take none.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    compression_level: Option<i32>,
}

impl TablesArgs {
    /// The first option given that only `--format parquet` takes, if any.
    pub(crate) fn parquet_only_option(&self) -> Option<&'static str> {
        [
            (self.include_archived, "--include-archived"),
            (self.no_dedupe, "--no-dedupe"),
            (self.partition_by.is_some(), "--partition-by"),
            (self.since.is_some(), "--since"),
            (self.follow, "--follow"),
            (self.validate, "--validate"),
            (self.compression.is_some(), "--compression"),
            (self.compression_level.is_some(), "--compression-level"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// `--partition-by`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum By {
    /// `project=<cwd>` (escaped as Hive escapes a path).
    Project,
    /// `month=YYYY-MM` (UTC) of each row's timestamp.
    Month,
}

/// `--compression` (`pi_session_tables::Codec`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CodecArg {
    /// Zstandard (the default).
    Zstd,
    /// LZ4 (Parquet's LZ4_RAW).
    Lz4,
    /// Snappy.
    Snappy,
    /// No compression.
    None,
}

impl From<CodecArg> for Codec {
    fn from(codec: CodecArg) -> Codec {
        match codec {
            CodecArg::Zstd => Codec::Zstd,
            CodecArg::Lz4 => Codec::Lz4,
            CodecArg::Snappy => Codec::Snappy,
            CodecArg::None => Codec::None,
        }
    }
}

/// Removes what exports into the directory that were killed left behind, saying so on
/// stderr.
fn remove_dead_runs(export: &Export) -> Result<(), String> {
    let removed = export.remove_dead_runs().map_err(|e| {
        format!("{e}: cannot remove what an interrupted export left; remove it by hand")
    })?;
    for (run, removed) in removed {
        if !removed.is_empty() {
            eprintln!(
                "pi-session: {}: removed {removed} left by an export that did not finish (run {})",
                display::path(&run.dir),
                run.id
            );
        }
    }
    Ok(())
}

/// Runs `pi-session export --format parquet`.
pub(crate) fn main(
    paths: Vec<PathBuf>,
    output: Option<PathBuf>,
    pi: PiVersion,
    args: TablesArgs,
    redactor: Option<pi_session_redact::Redactor>,
) -> ExitCode {
    let usage = |message: &str| {
        eprintln!("pi-session: error: {message}");
        ExitCode::from(2)
    };
    let Some(out) = output else {
        return usage("--format parquet writes a directory of tables: give it with -o DIR");
    };
    if let Err(targets::Usage(message)) = targets::check_usage(&paths) {
        return usage(&message);
    }
    let since_ms = match TimeRange::parse(args.since.as_deref(), None) {
        Ok(range) => range.since_ms,
        Err(error) => return usage(&crate::stats::range_error(&error)),
    };
    let compression = match Compression::new(
        args.compression.map_or(Codec::default(), Codec::from),
        args.compression_level,
    ) {
        Ok(compression) => compression,
        Err(error) => return usage(&format!("--compression: {error}")),
    };
    let mut export = Export::new(out);
    export.compression = compression;
    export.pi = pi;
    export.since = args.since.clone();
    export.validate = args.validate;
    export.redact = redactor.map(std::sync::Arc::new);
    export.options = Options {
        no_dedupe: args.no_dedupe,
        partition_by: args.partition_by.map(|b| match b {
            By::Project => PartitionBy::Project,
            By::Month => PartitionBy::Month,
        }),
        since_ms,
    };
    // Before any thread is started: the signal mask is inherited.
    let run = export.run();
    process::on_stop_signal(move |signal| {
        let said = match run.abandon() {
            Ok(removed) => format!("removed the {removed} it had written"),
            Err(e) => format!(
                "could not remove all it had written ({e}): remove part-{}-* and .part-{}-*.tmp",
                run.id, run.id
            ),
        };
        eprintln!(
            "pi-session: {}: the export was interrupted ({signal}): {said}",
            display::path(&run.dir)
        );
    });
    if let Err(message) = remove_dead_runs(&export) {
        eprintln!("pi-session: error: {message}");
        return ExitCode::FAILURE;
    }
    if let Err(refusal) = export.check_output() {
        return usage(&refusal.to_string());
    }
    let collected = match targets::collect_said(
        &paths,
        targets::Walk {
            follow: args.follow,
            include_archived: args.include_archived,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let say_skipped = |skipped: &[(String, String)]| {
        for (path, error) in skipped {
            eprintln!("pi-session: {path}: skipped: {}", display::text(error, 300));
        }
    };
    let exported = match export.write(&collected.targets) {
        Ok(exported) => exported,
        Err(stopped) => {
            say_skipped(&stopped.skipped);
            if run::abandoned() {
                // A signal: its thread removes the files, says so and ends the process.
                wait_for_the_end();
            }
            let said = match stopped.cleanup {
                None => "nothing was exported".to_owned(),
                Some(Ok(removed)) => format!(
                    "the export stopped and removed the {removed} it had written; {} holds what it held before",
                    display::path(&export.dir)
                ),
                Some(Err(cleanup)) => format!(
                    "the export stopped and could not remove what it had written ({cleanup}): remove part-{}-* and .part-{}-*.tmp",
                    export.run_id, export.run_id
                ),
            };
            eprintln!("pi-session: error: {}; {said}", stopped.error);
            return ExitCode::FAILURE;
        }
    };
    say_skipped(&exported.skipped);
    if let Some(e) = &exported.marker_left {
        eprintln!("pi-session: warning: {e}");
    }
    let text = format!(
        "{}: {} part files: {} sessions, {} entries{}\n",
        display::path(&export.dir),
        exported.files.len(),
        exported.sessions,
        exported.written.entries,
        if args.no_dedupe {
            " (every copy of forked history, flagged is_copy)".to_owned()
        } else {
            format!(
                " ({} copies of forked history counted once)",
                exported.written.copies
            )
        }
    );
    if let Err(code) = crate::print_report(&text) {
        return code;
    }
    if exported.skipped.is_empty() && collected.empty.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Waits for the signal thread to end the process.
fn wait_for_the_end() -> ! {
    loop {
        std::thread::park();
    }
}
