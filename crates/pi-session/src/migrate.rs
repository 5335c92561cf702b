//! `pi-session migrate`: the file as pi leaves it after opening it, printed (`--stdout`) or
//! written back (`--in-place`, through [`crate::replace`], which never loses data).

use crate::input::Input;
use crate::ops::{self, Settings};
use crate::replace::{self, Labelled, Options, Snapshot};
use crate::{FileArgs, print_warnings, with_stdout};
use clap::{Args, CommandFactory};
use pi_session_format::Dialect;
use pi_session_format::omp::Blobs;
use pi_session_format::omp::rewrite::OnOpen;
use pi_session_fs::omp_store::OmpStore;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const AFTER_HELP: &str = "\
--in-place writes the migrated file to an unnamed temporary file in the same directory, gives
it the file's owner, group, mode and extended attributes, syncs it and renames it over the
file: readers see the old file or the new one, and a killed run leaves nothing behind. A
symlink is followed (its target is replaced and backed up next to it; the link stays).

It refuses, writing nothing (exit 1):
  - a file that changed while it was migrated (a running pi appending to it): run it again
    once pi is done with the session; --force does not override this;
  - a file with other names (hard links), which would keep the old content  (--force: replace)
  - a read-only file                                                         (--force: replace)
  - owner, group or an extended attribute that cannot be kept  (--force: replace, with a warning)
  - with --backup, an existing FILE.bak: a backup never overwrites anything (--force: FILE.bak.N)
The backup is a complete, synced copy before it gets its name.";

/// The arguments of `pi-session migrate`.
#[derive(Args)]
#[command(after_long_help = AFTER_HELP)]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    file: FileArgs,
    /// Print the migrated file on stdout.
    #[arg(
        long,
        conflicts_with_all = ["in_place", "backup", "force"],
        required_unless_present = "in_place"
    )]
    stdout: bool,
    /// Replace the file atomically and safely (see below); refuses a file being written.
    #[arg(long)]
    in_place: bool,
    /// With --in-place: keep the original as FILE.bak (never overwritten: refused when it
    /// exists, FILE.bak.1, .2, … with --force).
    #[arg(long, requires = "in_place")]
    backup: bool,
    /// With --in-place: replace a hard-linked or read-only file too, back up to FILE.bak.N
    /// when FILE.bak exists, and go on when owner, group or extended attributes cannot be
    /// kept (each said in a warning). Never overrides the check that the file did not change.
    #[arg(long, requires = "in_place")]
    force: bool,
    /// Number new ids 00000001, 00000002, … instead of random ids (also set by the
    /// environment variable PI_SESSION_DETERMINISTIC_IDS=1).
    #[arg(long)]
    sequential_ids: bool,
    /// omp files: the blob store their `blob:sha256:` references name, and where the images
    /// omp's rewrite moves out of the file go (default: omp's own, `~/.omp/agent/blobs` or
    /// `$XDG_DATA_HOME/omp/blobs`, by its rules).
    #[arg(long, value_name = "DIR")]
    blobs: Option<PathBuf>,
}

/// Runs the command; prints `pi-session: FILE: message` for each warning and error.
pub(crate) fn main(args: MigrateArgs) -> ExitCode {
    if args.in_place && args.file.file.as_os_str() == "-" {
        crate::Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--in-place needs a file to replace, not `-` (standard input); use --stdout",
            )
            .exit();
    }
    let name = crate::display::path(&args.file.file);
    match run(&args, &name) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pi-session: {name}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &MigrateArgs, name: &str) -> Result<(), String> {
    let path = &args.file.file;
    let settings = Settings {
        exits_after: true,
        ..Settings::new(args.file.pi, args.sequential_ids)
    };
    // For --in-place: the file's identity and state before it is read, and every refusal
    // that does not need its content, before reading it.
    let prepared = if args.in_place {
        let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
        if !metadata.is_file() {
            return Err(if metadata.is_dir() {
                "is a directory, not a session file".into()
            } else {
                "is not a regular file (a pipe, FIFO or device): --in-place replaces a file; \
                 use --stdout"
                    .into()
            });
        }
        let options = Options {
            backup: args.backup,
            force: args.force,
            job: replace::Job::MIGRATE,
        };
        Some(replace::prepare(path, Snapshot::of(&metadata), options).map_err(|e| e.0)?)
    } else {
        None
    };
    let input = Input::open(path).map_err(|e| e.to_string())?;
    if Dialect::given_or_detected(args.file.dialect, input.bytes()) == Dialect::Omp {
        return omp(path, &input, prepared, settings, args.blobs.clone(), name);
    }
    let release = |range| input.release(range);
    let Some(prepared) = prepared else {
        let migrated = with_stdout(|out| {
            let mut out = Labelled {
                inner: out,
                what: "standard output",
            };
            let migrated = ops::migrate_releasing(input.bytes(), &release, settings, &mut out)?;
            out.flush()?;
            Ok(migrated)
        })
        .map_err(|e| e.0)?;
        print_warnings(name, &migrated.warnings);
        // Streamed as it was made: a file that shrank meanwhile makes it wrong.
        return input.verify().map_err(|e| e.to_string());
    };
    if input.is_stdin() {
        // Checked above; a file swapped for a FIFO meanwhile is read as a stream.
        return Err("is not a regular file any more: --in-place replaces a file".into());
    }
    if !ops::needs_migration(input.bytes(), settings).map_err(|e| e.0)? {
        eprintln!("pi-session: {name}: already version 3; nothing to migrate, file unchanged");
        return Ok(());
    }
    // The migration streams into the temporary file; its own failure (not the disk's) is
    // kept aside to be reported as what it is.
    let mut failed = None;
    let mut migrated = None;
    let done = prepared.commit(|out| {
        let result = ops::migrate_releasing(input.bytes(), &release, settings, out)
            .and_then(|m| Ok(input.verify().map(|()| m)?));
        match result {
            // Decided from the header already; should the full load disagree, nothing is
            // replaced.
            Ok(m) if !m.changed => {
                migrated = Some(m);
                Err(std::io::Error::other("nothing to migrate"))
            }
            Ok(m) => {
                migrated = Some(m);
                Ok(())
            }
            Err(rejected) => {
                failed = Some(rejected.0);
                Err(std::io::Error::other("the migration failed"))
            }
        }
    });
    if let Some(migrated) = &migrated {
        print_warnings(name, &migrated.warnings);
    }
    let done = match (done, failed) {
        (Err(_), Some(failed)) => return Err(format!("{failed}; the file is unchanged")),
        (Err(_), None) if migrated.as_ref().is_some_and(|m| !m.changed) => {
            eprintln!("pi-session: {name}: already version 3; nothing to migrate, file unchanged");
            return Ok(());
        }
        (done, _) => done.map_err(|e| e.0)?,
    };
    report_done(name, path, done);
    Ok(())
}

/// What a replacement said: its warnings, and where the backup went when that is not the
/// usual `FILE.bak`.
fn report_done(name: &str, path: &std::path::Path, done: replace::Done) {
    for warning in &done.warnings {
        eprintln!("pi-session: {name}: {warning}");
    }
    if let Some(backup) = done.backup {
        let mut usual = path.as_os_str().to_os_string();
        usual.push(".bak");
        if backup.as_os_str() != usual {
            eprintln!(
                "pi-session: {name}: the original is kept as {}",
                crate::display::path(&backup)
            );
        }
    }
}

/// An oh-my-pi file: as omp leaves it after opening it (`pi_session_format::omp::rewrite`).
/// omp rewrites only a file it migrates, one with text its parser skips, or one with a
/// Copilot replay payload; any other it leaves byte for byte, and so does this. When omp
/// moves images out of the file into its blob store, they are written there first (each
/// atomically), then the file.
fn omp(
    path: &std::path::Path,
    input: &Input,
    prepared: Option<replace::Prepared>,
    settings: Settings,
    blobs: Option<PathBuf>,
    name: &str,
) -> Result<(), String> {
    let blobs = blobs
        .or_else(|| OmpStore::from_env().ok().map(|s| s.blobs_dir()))
        .map(Blobs::new);
    let resolve_from = blobs.as_ref().filter(|b| b.dir().is_dir());
    let (on_open, warnings) =
        ops::omp_on_open(input.bytes(), settings, resolve_from).map_err(|e| e.0)?;
    print_warnings(name, &warnings);
    let (reason, rewritten) = match on_open {
        OnOpen::Unchanged => {
            if prepared.is_some() {
                eprintln!(
                    "pi-session: {name}: omp leaves this file as it is; nothing to migrate, \
                     file unchanged"
                );
                return Ok(());
            }
            with_stdout(|out| Ok(out.write_all(input.bytes())?)).map_err(|e| e.0)?;
            return input.verify().map_err(|e| e.to_string());
        }
        OnOpen::Fails(failure) => {
            return Err(format!("{failure}; nothing written, as omp leaves it"));
        }
        OnOpen::Unsupported { reason, what } => {
            return Err(format!(
                "omp rewrites this file when it opens it ({reason}); {what} is not reproduced, \
                 nothing written"
            ));
        }
        OnOpen::Rewrites { reason, rewritten } => (reason, rewritten),
        _ => return Err("omp's handling of this file is not known; nothing written".into()),
    };
    input.verify().map_err(|e| e.to_string())?;
    if !rewritten.blobs.is_empty() {
        let Some(store) = &blobs else {
            return Err(
                "omp's rewrite moves images into its blob store, and there is none: pass \
                 --blobs DIR; nothing written"
                    .into(),
            );
        };
        for blob in &rewritten.blobs {
            OmpStore::put_blob(
                store.dir(),
                &blob.hash,
                &blob.bytes,
                blob.extension.as_deref(),
            )
            .map_err(|e| {
                format!(
                    "writing blob {} into {}: {e}; the session file is unchanged",
                    blob.hash,
                    crate::display::path(store.dir())
                )
            })?;
        }
        eprintln!(
            "pi-session: {name}: {} image(s) moved into the blob store {}, as omp does",
            rewritten.blobs.len(),
            crate::display::path(store.dir())
        );
    }
    let Some(prepared) = prepared else {
        return with_stdout(|out| Ok(out.write_all(&rewritten.bytes)?)).map_err(|e| e.0);
    };
    let done = prepared
        .commit(|out| out.write_all(&rewritten.bytes))
        .map_err(|e| e.0)?;
    eprintln!("pi-session: {name}: rewritten as omp rewrites it when it opens it ({reason})");
    report_done(name, path, done);
    Ok(())
}
