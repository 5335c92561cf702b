//! `pi-session export --format parquet`: sessions as tables (`pi_session_tables`).
//!
//! Two passes over the files, each on every core: the keys of every entry (who owns
//! forked history), then the rows, each thread writing its own part files. A file that is
//! not a session is reported and skipped, the others still exported, and the exit code
//! says so. Standard input and FIFOs are read once and kept for the second pass.
//!
//! All or nothing: an export that stops (a write error; Ctrl-C, `SIGTERM`, `SIGHUP`:
//! [`signals`]) removes the files it wrote, and one that was killed is cleaned up by the next
//! export into the directory (`pi_session_tables::run`).

use super::signals;
use crate::display;
use crate::input::Input;
use crate::validate::targets::{self, Target};
use clap::{Args, ValueEnum};
use pi_session_format::{PiVersion, Session};
use pi_session_tables::{
    Layout, Options, Ownership, PartitionBy, Run, SessionKeys, Sink, Stamp, Verdicts, Written, run,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
    /// UTC) or time (ISO 8601), added as new part files beside an earlier export's.
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

/// Files from this size on have their pages let go while they are loaded for the rows.
const LARGE: usize = 64 << 20;

/// One file after the first pass.
struct First {
    keys: SessionKeys,
    /// The bytes of a stream (standard input, a FIFO), which cannot be read again.
    kept: Option<Input>,
}

fn open(target: &Target) -> Result<Input, String> {
    match target {
        Target::Stdin => Input::open("-".as_ref()),
        Target::File(path) => Input::open(path),
    }
    .map_err(|e| e.to_string())
}

/// Loads a session for its keys, letting go of the pages of a mapped file as the loader is
/// done with them (so that a large session does not stay resident as a whole).
fn load_releasing(input: &Input, pi: PiVersion) -> Result<Session<'_>, String> {
    Session::loader(pi)
        .releasing(&|range| input.release(range))
        .load(input.bytes())
        .map_err(|e| e.to_string())
}

/// The first pass over one file: its keys.
fn first(target: &Target, source: usize, pi: PiVersion) -> Result<First, String> {
    let input = open(target)?;
    let keys = {
        let session = load_releasing(&input, pi)?;
        SessionKeys::of(&session, &target.display(), source)
    };
    input.verify().map_err(|e| e.to_string())?;
    let is_stream = input.is_stdin();
    Ok(First {
        keys,
        kept: is_stream.then_some(input),
    })
}

/// Why the output directory cannot be written to; `None` when it can. Table directories
/// holding nothing but directories (what an export that failed early leaves) count as empty.
fn refuse_output(out: &Path, adding: bool) -> Option<String> {
    if let Err(e) = std::fs::read_dir(out)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Some(format!("{}: {e}", display::path(out)));
    }
    match run::contents(out, &signals::alive) {
        Ok(contents) if !contents.running.is_empty() => Some(format!(
            "{}: another export is writing into this directory (it holds {contents}); wait for it to finish, or choose another directory",
            display::path(out)
        )),
        Ok(contents) if !contents.is_empty() && !adding => Some(format!(
            "{}: the directory is not empty (it holds {contents}): nothing is overwritten; choose an empty or new directory, or add entries to an earlier export with --since",
            display::path(out)
        )),
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Removes what exports into `out` that were killed left behind (their marker or
/// temporaries name a process that no longer runs), saying so on stderr.
fn remove_dead_runs(out: &Path) -> Result<(), String> {
    let removed = run::remove_dead(out, &signals::alive).map_err(|e| {
        format!("{e}: cannot remove what an interrupted export left; remove it by hand")
    })?;
    for (run, removed) in removed {
        if !removed.is_empty() {
            eprintln!(
                "pi-session: {}: removed {removed} left by an export that did not finish (run {})",
                display::path(out),
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
    let since_ms = match args
        .since
        .as_deref()
        .map(|s| crate::stats::time_of(s, false))
    {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(message)) => return usage(&format!("--since: {message}")),
    };
    // Before any thread is started: the signal mask is inherited.
    let run_id = run_id();
    {
        let run = Run {
            dir: out.clone(),
            id: run_id.clone(),
        };
        signals::on_signal(move |signal| {
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
    }
    if let Err(message) = remove_dead_runs(&out) {
        eprintln!("pi-session: error: {message}");
        return ExitCode::FAILURE;
    }
    if let Some(message) = refuse_output(&out, args.since.is_some()) {
        return usage(&message);
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
    let targets = &collected.targets;
    let mut errors: Vec<(String, String)> = Vec::new();

    // Pass 1: the keys of every entry, for the ownership of forked history.
    let firsts: Vec<Result<First, String>> = targets
        .par_iter()
        .enumerate()
        .map(|(i, target)| first(target, i, pi))
        .collect();
    let mut keys = Vec::new();
    let mut kept: Vec<Option<Input>> = (0..targets.len()).map(|_| None).collect();
    for (i, result) in firsts.into_iter().enumerate() {
        match result {
            Ok(f) => {
                kept[i] = f.kept;
                keys.push(f.keys);
            }
            Err(error) => errors.push((targets[i].display(), error)),
        }
    }
    let ownership = Ownership::new(keys);
    let kept: Vec<Mutex<Option<Input>>> = kept.into_iter().map(Mutex::new).collect();

    // Pass 2: the rows, each thread into its own part files.
    let options = Options {
        no_dedupe: args.no_dedupe,
        partition_by: args.partition_by.map(|b| match b {
            By::Project => PartitionBy::Project,
            By::Month => PartitionBy::Month,
        }),
        since_ms,
    };
    let run = match run::begin(&out, &run_id) {
        Ok(run) => run,
        Err(e) => {
            eprintln!("pi-session: error: {e}; nothing was exported");
            return ExitCode::FAILURE;
        }
    };
    let layout = Layout {
        dir: out.clone(),
        run: run_id,
        stamp: Stamp {
            dedupe: !args.no_dedupe,
            since: args.since.clone(),
        },
    };
    // The sessions in ownership order, or, partitioned by project, one project after
    // another (which session owns an entry is settled already).
    let mut order: Vec<u32> = (0..ownership.files().len() as u32).collect();
    if options.partition_by == Some(PartitionBy::Project) {
        order.sort_by(|&a, &b| ownership.cwd(a).cmp(ownership.cwd(b)).then(a.cmp(&b)));
    }
    let work = Work {
        targets,
        kept: &kept,
        ownership: &ownership,
        options: &options,
        order: &order,
        pi,
        validate: args.validate,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        file_errors: Mutex::new(Vec::new()),
    };
    let threads = rayon::current_num_threads().max(1);
    let results: Vec<Result<(Vec<PathBuf>, Written), pi_session_tables::Error>> =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|w| {
                    let (work, layout) = (&work, layout.clone());
                    scope.spawn(move || work.run(Sink::new(layout, w)))
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("an export thread panicked"))
                .collect()
        });
    let file_errors = work.file_errors;
    let mut second_errors = file_errors.into_inner().unwrap_or_default();
    second_errors.sort();
    let sessions = ownership.files().len() - second_errors.len();
    errors.extend(
        second_errors
            .into_iter()
            .map(|(source, e)| (targets[source].display(), e)),
    );
    let mut files = Vec::new();
    let mut total = Written::default();
    let mut fatal = None;
    for result in results {
        match result {
            Ok((written, w)) => {
                files.extend(written);
                total.entries += w.entries;
                total.copies += w.copies;
            }
            Err(e) => fatal = Some(e),
        }
    }
    if fatal.is_none() {
        match pi_session_tables::write_empty_tables(&layout, options.partition_by) {
            Ok(empty) => files.extend(empty),
            Err(e) => fatal = Some(e),
        }
    }
    for (path, error) in &errors {
        eprintln!("pi-session: {path}: skipped: {}", display::text(error, 300));
    }
    if let Some(e) = fatal {
        if run::abandoned() {
            // A signal: its thread removes the files, says so and ends the process.
            wait_for_the_end();
        }
        // All or nothing: the part files written so far are removed, so that the export
        // can be run again as it was (an added `--since` export would count twice).
        let said = match run.remove() {
            Ok(removed) => format!(
                "removed the {removed} it had written; {} holds what it held before",
                display::path(&out)
            ),
            Err(cleanup) => format!(
                "could not remove what it had written ({cleanup}): remove part-{}-* and .part-{}-*.tmp",
                layout.run, layout.run
            ),
        };
        eprintln!("pi-session: error: {e}; the export stopped and {said}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = run.finish() {
        eprintln!("pi-session: warning: {e}");
    }
    let text = format!(
        "{}: {} part files: {} sessions, {} entries{}\n",
        display::path(&out),
        files.len(),
        sessions,
        total.entries,
        if args.no_dedupe {
            " (every copy of forked history, flagged is_copy)".to_owned()
        } else {
            format!(" ({} copies of forked history counted once)", total.copies)
        }
    );
    if let Err(code) = crate::print_report(&text) {
        return code;
    }
    if errors.is_empty() && collected.empty.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The rows pass, shared by its threads: each takes the next session in `order` until
/// there is none, or until a thread failed to write.
struct Work<'a> {
    targets: &'a [Target],
    kept: &'a [Mutex<Option<Input>>],
    ownership: &'a Ownership,
    options: &'a Options,
    order: &'a [u32],
    pi: PiVersion,
    /// `--validate`.
    validate: bool,
    next: AtomicUsize,
    failed: AtomicBool,
    /// Files that could not be read: (source, error).
    file_errors: Mutex<Vec<(usize, String)>>,
}

/// Why one session's rows are not all there.
enum Failure {
    /// The file could not be read (said, skipped).
    File(String),
    /// The output could not be written (the export stops).
    Output(pi_session_tables::Error),
}

impl Work<'_> {
    /// One thread's loop; its part files and what it wrote.
    fn run(&self, mut sink: Sink) -> Result<(Vec<PathBuf>, Written), pi_session_tables::Error> {
        let mut total = Written::default();
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            if n >= self.order.len() || self.failed.load(Ordering::Relaxed) {
                break;
            }
            let i = self.order[n];
            let source = self.ownership.sources()[i as usize];
            match self.one(i, source, &mut sink) {
                Ok(w) => {
                    total.entries += w.entries;
                    total.copies += w.copies;
                }
                Err(Failure::File(e)) => {
                    if let Ok(mut errors) = self.file_errors.lock() {
                        errors.push((source, e));
                    }
                }
                Err(Failure::Output(e)) => {
                    self.failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        sink.finish().map(|files| (files, total))
    }

    /// The rows of session `i` (the caller's `source`).
    fn one(&self, i: u32, source: usize, sink: &mut Sink) -> Result<Written, Failure> {
        let kept = self.kept[source].lock().ok().and_then(|mut k| k.take());
        let input = match kept {
            Some(input) => input,
            None => open(&self.targets[source]).map_err(Failure::File)?,
        };
        // Every record's text is read again for the rows, and `write_session` lets the pages
        // go behind it; a large file's are let go while loading too, at the price of reading
        // them twice.
        let session = if input.bytes().len() >= LARGE {
            load_releasing(&input, self.pi)
        } else {
            Session::from_bytes(input.bytes(), self.pi).map_err(|e| e.to_string())
        }
        .map_err(Failure::File)?;
        let verdicts = self
            .validate
            .then(|| verdicts(&input, &self.targets[source], self.pi));
        let written = pi_session_tables::write_session(
            &session,
            &pi_session_tables::Source {
                path: self.ownership.file(i),
                holder: i,
                verdicts: verdicts.as_ref(),
            },
            self.ownership,
            self.options,
            sink,
            &|range| input.release(range),
        )
        .map_err(Failure::Output)?;
        drop(session);
        input.verify().map_err(|e| {
            Failure::File(format!("{e} (the rows read before it changed are written)"))
        })?;
        Ok(written)
    }
}

/// What `pi-session validate` says of the file (`--validate`), with the same options: the
/// file's absolute path for the checks of its name and directory.
fn verdicts(input: &Input, target: &Target, pi: PiVersion) -> Verdicts {
    let absolute = target.absolute();
    let options = pi_session_validate::Options {
        pi,
        path: absolute.as_deref(),
        ..pi_session_validate::Options::default()
    };
    let report = pi_session_validate::validate(input.bytes(), &options);
    // A large file's pages, all read by the validator, are let go (a no-op for small ones).
    input.release(0..input.bytes().len());
    let mut codes: Vec<String> = Vec::new();
    for d in &report.diagnostics {
        let code = d.code.as_str();
        if !codes.iter().any(|c| c == code) {
            codes.push(code.to_owned());
        }
    }
    Verdicts {
        strict: report.verdict.strict,
        pi_loadable: report.verdict.pi_loadable,
        pi_resumes: report.verdict.pi_resumes,
        errors: report.stats.errors as u64,
        warnings: report.stats.warnings as u64,
        codes,
    }
}

/// Waits for the signal thread to end the process.
fn wait_for_the_end() -> ! {
    loop {
        std::thread::park();
    }
}

/// What makes this run's part file names unique: the time in ms and the process id.
fn run_id() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{ms}-{}", std::process::id())
}
