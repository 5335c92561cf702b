//! `pi-session export`: a conversation to read or share (Markdown, a self-contained HTML
//! page, or pi's JSONL export of one branch), or many sessions as Parquet tables
//! ([`tables`]).
//!
//! The format work is the library's (`pi_session_format::export`); this module picks the
//! input, the output and reports errors.

#[cfg(feature = "parquet")]
#[cfg(feature = "parquet")]
pub(crate) mod tables;

use crate::display;
use crate::input::Input;
use clap::{Args, ValueEnum};
use pi_session_format::export::{Branch, html, markdown};
use pi_session_format::omp::Blobs;
use pi_session_format::{Dialect, Leaf, PiVersion, Session, SessionWriter, WriterConfig};
use pi_session_fs::omp_store::OmpStore;
use pi_session_redact::Redactor;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `pi-session export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
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
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// The file's dialect, `pi` or `omp` (oh-my-pi); default: the file's own (see
    /// docs/dialects.md). `--format parquet` reads each file in its own.
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<Dialect>,
    /// oh-my-pi's blob store, where an omp session's `blob:sha256:` images are found
    /// (default: omp's own, when it exists).
    #[arg(long, value_name = "DIR")]
    blobs: Option<PathBuf>,
    /// Replace OUT when it exists (atomically); without it an existing OUT is left alone.
    #[arg(long)]
    force: bool,
    /// Pass the session through `pi-session redact` first: the export holds placeholders
    /// (`[REDACTED:rule:h8]`), never the secrets (every format; the options below as
    /// `redact` has them).
    #[arg(long)]
    redact: bool,
    #[command(flatten)]
    redaction: crate::redact::RedactionArgs,
    #[cfg(feature = "parquet")]
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
pub(crate) fn main(args: ExportArgs) -> ExitCode {
    if !args.redact && args.redaction.given() {
        return usage("the redaction options (--secret, --key-file, …) go with --redact");
    }
    let redactor = match args.redact.then(|| args.redaction.redactor()).transpose() {
        Ok(redactor) => redactor,
        Err(message) => return usage(&message),
    };
    #[cfg(feature = "parquet")]
    {
        if args.format == Format::Parquet {
            return tables::main(args.paths, args.output, args.pi, args.tables, redactor);
        }
        if let Some(option) = args.tables.parquet_only_option() {
            return usage(&format!("{option} is an option of --format parquet"));
        }
    }
    #[cfg(not(feature = "parquet"))]
    if args.format == Format::Parquet {
        return usage(
            "this pi-session was built without its `parquet` feature (`--no-default-features`); \
             build it with the default features for --format parquet",
        );
    }
    let file = match args.paths.as_slice() {
        [file] => file.clone(),
        [] => return usage("give the session file to export"),
        [_, _, ..] => {
            return usage("--format markdown, html and jsonl export one session file; give one");
        }
    };
    let name = display::path(&file);
    match export_one(&args, &file, redactor.as_ref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // The writer's errors name the file already.
            if message.starts_with(&format!("{}:", file.display())) {
                eprintln!("pi-session: {message}");
            } else {
                eprintln!("pi-session: {name}: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("pi-session: export: {message}");
    ExitCode::from(2)
}

/// The export of one session, written to `-o` or standard output; with a redactor, made
/// from the redacted session (the JSONL export: the export redacted, the same thing line by
/// line).
fn export_one(args: &ExportArgs, file: &Path, redactor: Option<&Redactor>) -> Result<(), String> {
    match (args.format, redactor) {
        (Format::Jsonl, None) => {
            // Line by line: a branch of gigabytes is never held.
            let mut writer = branch_writer(args, file)?;
            let lines = writer.export_branch_lines().map_err(|e| e.to_string())?;
            write_out(args, |out| {
                for line in lines {
                    out.write_all(&line.map_err(std::io::Error::other)?)?;
                }
                Ok(())
            })
        }
        (Format::Jsonl, Some(redactor)) => {
            let exported = redacted(redactor, &jsonl(args, file)?)?;
            write_out(args, |out| out.write_all(&exported))
        }
        (Format::Markdown | Format::Html, _) => page(args, file, redactor),
        (Format::Parquet, _) => unreachable!("dispatched in main"),
    }
}

/// The Markdown or HTML page of the branch, made and written a batch of entries at a time:
/// the file is read in pieces (its lines read again per batch, not kept), so a session of
/// gigabytes is never held; redacted, the redacted copy is.
fn page(args: &ExportArgs, file: &Path, redactor: Option<&Redactor>) -> Result<(), String> {
    let input = Input::open(file).map_err(|e| e.to_string())?;
    let redacted_input = match redactor {
        Some(redactor) => Some(redacted(redactor, input.bytes())?),
        None => None,
    };
    let loader = Session::loader(args.pi).with_dialect(args.dialect);
    let session = match &redacted_input {
        Some(bytes) => loader.load(bytes),
        None => loader.load_input(&input),
    }
    .map_err(|e| e.to_string())?;
    // The file changed while it was read: what was made from it may be a mix. Checked once
    // the branch is found (its head read), and again for each batch of entries, whose lines
    // are read again.
    let unchanged = || input.verify();
    let leaf = args.leaf.clone().map_or(Leaf::Current, Leaf::Id);
    // An oh-my-pi session's images come back from its blob store, as omp puts them back.
    let blobs = (session.dialect == Dialect::Omp)
        .then(|| args.blobs.clone().or_else(OmpStore::existing_blobs_dir))
        .flatten()
        .map(Blobs::new);
    let mut branch = Branch::of(&session, &leaf)
        .map_err(|e| e.to_string())?
        .checking(&unchanged);
    unchanged().map_err(|e| e.to_string())?;
    if let Some(blobs) = &blobs {
        branch = branch.resolving_blobs(blobs);
    }
    let written = write_out(args, |out| {
        if args.format == Format::Html {
            html::write(&branch, out)
        } else {
            markdown::write(&branch, out)
        }
    });
    if let Some(blobs) = &blobs {
        for hash in branch.missing_blobs() {
            eprintln!(
                "pi-session: {}: warning: blob sha256:{hash} is not in the blob store {}; the image is left as its reference",
                display::path(file),
                display::path(blobs.dir())
            );
        }
    }
    written
}

/// Writes what `write` writes to `-o` (a new file, atomically: nothing is published when it
/// fails) or to standard output (streamed: a failure says that what came out is incomplete).
fn write_out(
    args: &ExportArgs,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), String> {
    match &args.output {
        Some(path) => pi_session_fs::write_new_with(path, args.force, write),
        None => crate::with_stdout(|out| Ok(write(out)?)).map_err(|e| {
            format!(
                "{}; the export written to standard output so far is incomplete",
                e.0
            )
        }),
    }
}

/// `bytes` redacted, in memory.
fn redacted(redactor: &Redactor, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(bytes.len());
    redactor
        .redact(bytes, &mut out)
        .map_err(|e| format!("redacting: {e}"))?;
    Ok(out)
}

/// pi's `/export FILE.jsonl`: the branch as a linear session (the writer's `export_branch`).
fn jsonl(args: &ExportArgs, file: &Path) -> Result<Vec<u8>, String> {
    branch_writer(args, file)?
        .export_branch()
        .map_err(|e| e.to_string())
}

/// The writer pi's JSONL export of `file` is made by: the file loaded (its lines' places
/// kept, not their text), at `--leaf` when given.
fn branch_writer(args: &ExportArgs, file: &Path) -> Result<SessionWriter, String> {
    if file == Path::new("-") {
        return Err("--format jsonl reads a file, not standard input".to_owned());
    }
    let input = Input::open(file).map_err(|e| e.to_string())?;
    let dialect = Dialect::given_or_detected(args.dialect, input.bytes());
    drop(input);
    if dialect == Dialect::Omp {
        return Err(
            "--format jsonl is pi's `/export FILE.jsonl`; for an oh-my-pi session it is not \
             reproduced yet (use --format markdown or html)"
                .to_owned(),
        );
    }
    if args.pi == PiVersion::V0_73 {
        return Err("pi 0.73.1's session manager has no JSONL export \
             (serializeSessionBranch came with 0.87.1); use --pi 0.87 or 1.5"
            .to_owned());
    }
    let profile = args.pi.write_profile();
    let mut writer = SessionWriter::load(file, WriterConfig::default().profile(profile))
        .map_err(|e| e.to_string())?;
    if let Some(leaf) = &args.leaf {
        writer.branch(leaf).map_err(|e| e.to_string())?;
    }
    Ok(writer)
}
