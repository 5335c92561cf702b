//! A whole export (`pi-session export --format parquet`): [`Export::write`] takes the session
//! files and writes the tables; [`Export::batches`] makes the same tables as record batches
//! in memory and writes nothing.
//!
//! Two passes over the files, each on every core: the keys of every entry (who owns forked
//! history: [`Ownership`]), then the rows ([`rows::write_session`]), each thread writing its
//! own part files ([`Sink`]) or collecting its own batches ([`Collector`]). A file that is not
//! a session is skipped and said ([`Exported::skipped`]), the others still exported. Standard
//! input and FIFOs are read once and kept for the second pass.
//!
//! All or nothing: an export that stops on a write error removes the files it wrote
//! ([`Stopped`]); one stopped by a signal is removed by the caller's signal thread
//! ([`Export::run`], [`Run::abandon`](crate::Run::abandon)); one that was killed is removed by
//! the next export into the directory ([`Export::remove_dead_runs`]). Nothing here prints or
//! handles signals: both are the caller's.

use crate::PartitionBy;
use crate::batches::{Batches, Collector};
use crate::compression::Compression;
use crate::error::Error;
use crate::ownership::{Ownership, SessionKeys};
use crate::part::Stamp;
use crate::rows::{self, Options, RowSink, Source, Verdicts, Written};
use crate::run::{self, Contents, Removed, Run};
use crate::sink::{self, Layout, Sink};
use crate::tables::Table;
use pi_session_format::{PiVersion, Session};
use pi_session_fs::discover::Target;
use pi_session_fs::display;
use pi_session_fs::input::Input;
use pi_session_fs::process;
use rayon::prelude::*;
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Files from this size on have their pages let go while they are loaded for the rows.
const LARGE: usize = 64 << 20;

/// One export into a directory: what to write and how.
#[derive(Debug, Clone)]
pub struct Export {
    /// The output directory (created when missing).
    pub dir: PathBuf,
    /// What makes this run's file names unique: `<ms since epoch>-<pid>` ([`Export::new`]).
    pub run_id: String,
    /// Which pi's reading rules load the sessions.
    pub pi: PiVersion,
    /// Dedupe, partitions, `since`.
    pub options: Options,
    /// `options.since_ms` as the user wrote it, for each file's metadata.
    pub since: Option<String>,
    /// Also validate every session (as `pi-session validate` does) and fill the `sessions`
    /// table's verdict columns, null without it; about as much time again as the export.
    pub validate: bool,
    /// Redact every session before its rows are made (`export --redact`): the tables hold
    /// the placeholders, never the secrets. Ids, types and timestamps do not change, so the
    /// first pass (keys) reads the files as they are.
    pub redact: Option<std::sync::Arc<pi_session_redact::Redactor>>,
    /// How the part files' column chunks are compressed (zstd level 1 by default; not used by
    /// [`Export::batches`]).
    pub compression: Compression,
}

/// What an export wrote.
#[derive(Debug, Default)]
pub struct Exported {
    /// Every part file written, empty tables' included.
    pub files: Vec<PathBuf>,
    /// Sessions exported.
    pub sessions: usize,
    /// Rows of `entries` and copies of forked history left out.
    pub written: Written,
    /// The files skipped, in the order given: the file as it is shown, and why.
    pub skipped: Vec<(String, String)>,
    /// The run's marker could not be removed (the tables are complete; the next export into
    /// the directory removes it).
    pub marker_left: Option<Error>,
}

/// An export that stopped on a write error: what it wrote is removed (or the removal failed).
#[derive(Debug)]
pub struct Stopped {
    /// What stopped it.
    pub error: Error,
    /// What was removed of the files it had written, or why not all; `None` when it wrote
    /// none (it stopped before its first file), or when a signal stopped it (the signal
    /// thread removes them: [`run::abandoned`]).
    pub cleanup: Option<Result<Removed, Error>>,
    /// The files skipped before it stopped, as in [`Exported::skipped`].
    pub skipped: Vec<(String, String)>,
}

/// Why an output directory is not written to ([`Export::check_output`]).
#[derive(Debug)]
pub enum Refusal {
    /// It cannot be read.
    Unreadable(Error),
    /// An export still running writes into it.
    Running(PathBuf, Contents),
    /// It holds files, and the export does not add to an earlier one (`since` unset).
    NotEmpty(PathBuf, Contents),
    /// The export it holds, which `since` would add to, has another schema version than
    /// [`crate::SCHEMA_VERSION`]: a part file, and the version it has (`None`: none read).
    OtherSchema(PathBuf, Option<String>),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unreadable(e) => write!(f, "{e}"),
            Refusal::Running(dir, contents) => write!(
                f,
                "{}: another export is writing into this directory (it holds {contents}); wait for it to finish, or choose another directory",
                display::path(dir)
            ),
            Refusal::OtherSchema(part, version) => write!(
                f,
                "{}: written with the tables' schema version {}, not {}: nothing is added to it; export into an empty or new directory",
                display::path(part),
                version.as_deref().unwrap_or("(none read)"),
                crate::SCHEMA_VERSION
            ),
            Refusal::NotEmpty(dir, contents) => write!(
                f,
                "{}: the directory is not empty (it holds {contents}): nothing is overwritten; choose an empty or new directory, or add entries to an earlier export with --since",
                display::path(dir)
            ),
        }
    }
}

impl Export {
    /// An export into `dir` under current pi's rules, with the default options and a new run
    /// id.
    pub fn new(dir: impl Into<PathBuf>) -> Export {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Export {
            dir: dir.into(),
            run_id: format!("{ms}-{}", std::process::id()),
            pi: PiVersion::default(),
            options: Options::default(),
            since: None,
            validate: false,
            redact: None,
            compression: Compression::default(),
        }
    }

    /// The run's files in the directory: what a signal thread abandons.
    pub fn run(&self) -> Run {
        Run {
            dir: self.dir.clone(),
            id: self.run_id.clone(),
        }
    }

    /// Removes what exports into the directory that were killed left behind (their marker or
    /// temporaries name a process that no longer runs): each such run and what was removed.
    pub fn remove_dead_runs(&self) -> Result<Vec<(Run, Removed)>, Error> {
        run::remove_dead(&self.dir, &process::alive)
    }

    /// Whether the directory may be written to: not while another export writes into it, and
    /// only when empty unless the export adds to an earlier one (`since`) of the same schema
    /// version. Table directories
    /// holding nothing but directories (what an export that failed early leaves) count as
    /// empty.
    pub fn check_output(&self) -> Result<(), Refusal> {
        if let Err(e) = std::fs::read_dir(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(Refusal::Unreadable(Error::Io {
                path: self.dir.clone(),
                source: e,
            }));
        }
        match run::contents(&self.dir, &process::alive) {
            Ok(contents) if !contents.running.is_empty() => {
                Err(Refusal::Running(self.dir.clone(), contents))
            }
            Ok(contents) if !contents.is_empty() && self.since.is_none() => {
                Err(Refusal::NotEmpty(self.dir.clone(), contents))
            }
            Ok(contents) if contents.parts > 0 => match run::other_schema(&self.dir) {
                Ok(None) => Ok(()),
                Ok(Some((part, version))) => Err(Refusal::OtherSchema(part, version)),
                Err(e) => Err(Refusal::Unreadable(e)),
            },
            Ok(_) => Ok(()),
            Err(e) => Err(Refusal::Unreadable(e)),
        }
    }

    /// Writes the tables of `targets` (see the module's documentation). `Err` when a part file
    /// could not be written (or the run was abandoned by a signal: then
    /// [`run::abandoned`] is true and the caller's signal thread removes the files).
    pub fn write(&self, targets: &[Target]) -> Result<Exported, Box<Stopped>> {
        // Pass 1: the keys of every entry, for the ownership of forked history.
        let Keys {
            ownership,
            kept,
            mut skipped,
        } = self.keys(targets);

        // Pass 2: the rows, each thread into its own part files.
        let run = match run::begin(&self.dir, &self.run_id) {
            Ok(run) => run,
            Err(error) => {
                return Err(Box::new(Stopped {
                    error,
                    cleanup: None,
                    skipped: said(targets, skipped),
                }));
            }
        };
        let layout = Layout {
            dir: self.dir.clone(),
            run: self.run_id.clone(),
            stamp: Stamp {
                dedupe: !self.options.no_dedupe,
                since: self.since.clone(),
            },
            compression: self.compression,
        };
        // The sessions in ownership order, or, partitioned by project, one project after
        // another (which session owns an entry is settled already).
        let mut order: Vec<u32> = (0..ownership.files().len() as u32).collect();
        if self.options.partition_by == Some(PartitionBy::Project) {
            order.sort_by(|&a, &b| ownership.cwd(a).cmp(ownership.cwd(b)).then(a.cmp(&b)));
        }
        let work = Work::new(self, &self.options, targets, &kept, &ownership, &order);
        let results = work.on_every_thread(|w| -> Result<(Vec<PathBuf>, Written), Error> {
            let mut sink = Sink::new(layout.clone(), w);
            let written = work.run(&mut sink)?;
            Ok((sink.finish()?, written))
        });
        let mut second = work.file_errors.into_inner().unwrap_or_default();
        let sessions = ownership.files().len() - second.len();
        skipped.append(&mut second);
        skipped.sort();
        let skipped = said(targets, skipped);

        let mut exported = Exported {
            sessions,
            ..Exported::default()
        };
        let mut fatal = None;
        for result in results {
            match result {
                Ok((files, written)) => {
                    exported.files.extend(files);
                    exported.written.entries += written.entries;
                    exported.written.copies += written.copies;
                }
                Err(e) => fatal = Some(e),
            }
        }
        if fatal.is_none() {
            match sink::write_empty_tables(&layout, self.options.partition_by) {
                Ok(empty) => exported.files.extend(empty),
                Err(e) => fatal = Some(e),
            }
        }
        if let Some(error) = fatal {
            // All or nothing: the part files written so far are removed, so that the export
            // can be run again as it was (an added `since` export would count twice). After
            // a signal, the signal thread removes them.
            let cleanup = (!run::abandoned()).then(|| run.remove());
            return Err(Box::new(Stopped {
                error,
                cleanup,
                skipped,
            }));
        }
        exported.marker_left = run.finish().err();
        exported.skipped = skipped;
        Ok(exported)
    }

    /// The tables of `targets` in memory: each table's record batches, with exactly the rows,
    /// columns and schema that [`Export::write`] writes (the same two passes on every core,
    /// the same rows from [`rows::write_session`], handed to a [`Collector`] per thread
    /// instead of part files), and nothing written anywhere. The rows are not partitioned:
    /// `options.partition_by` is ignored, as are `dir`, `run_id` and `since` (the text; the
    /// rows are those of `options.since_ms`). A file that is not a session is skipped and
    /// said ([`Batches::skipped`]), as by [`Export::write`]; nothing else can fail.
    ///
    /// The batches are kept in memory: about as many bytes as the rows' texts and values
    /// (more than the compressed Parquet files).
    pub fn batches(&self, targets: &[Target]) -> Batches {
        let Keys {
            ownership,
            kept,
            mut skipped,
        } = self.keys(targets);
        let options = Options {
            partition_by: None,
            ..self.options.clone()
        };
        let order: Vec<u32> = (0..ownership.files().len() as u32).collect();
        let work = Work::new(self, &options, targets, &kept, &ownership, &order);
        let results = work.on_every_thread(|_| {
            let mut collector = Collector::new();
            let Ok(written) = work.run(&mut collector);
            (collector.finish(), written)
        });
        let mut second = work.file_errors.into_inner().unwrap_or_default();
        let sessions = ownership.files().len() - second.len();
        skipped.append(&mut second);
        skipped.sort();

        let mut batches = Batches {
            tables: Table::ALL.into_iter().map(|t| (t, Vec::new())).collect(),
            sessions,
            written: Written::default(),
            skipped: said(targets, skipped),
        };
        for (tables, written) in results {
            batches.written.entries += written.entries;
            batches.written.copies += written.copies;
            for ((_, all), (_, more)) in batches.tables.iter_mut().zip(tables) {
                all.extend(more);
            }
        }
        batches
    }

    /// Pass 1 over `targets`: the keys of every entry, for the ownership of forked history.
    fn keys(&self, targets: &[Target]) -> Keys {
        let firsts: Vec<Result<First, String>> = targets
            .par_iter()
            .enumerate()
            .map(|(i, target)| first(target, i, self.pi))
            .collect();
        let mut keys = Vec::new();
        let mut kept: Vec<Option<Input>> = (0..targets.len()).map(|_| None).collect();
        let mut skipped = Vec::new();
        for (i, result) in firsts.into_iter().enumerate() {
            match result {
                Ok(f) => {
                    kept[i] = f.kept;
                    keys.push(f.keys);
                }
                Err(error) => skipped.push((i, error)),
            }
        }
        Keys {
            ownership: Ownership::new(keys),
            kept: kept.into_iter().map(Mutex::new).collect(),
            skipped,
        }
    }
}

/// What the first pass found.
struct Keys {
    /// Who owns each entry.
    ownership: Ownership,
    /// The bytes of each stream (by the index of its target), which cannot be read again.
    kept: Vec<Mutex<Option<Input>>>,
    /// The files that are not sessions: (the index of the target, why).
    skipped: Vec<(usize, String)>,
}

/// Skipped files as they are said: the file as it is shown, and why.
fn said(targets: &[Target], skipped: Vec<(usize, String)>) -> Vec<(String, String)> {
    skipped
        .into_iter()
        .map(|(i, e)| (targets[i].display(), e))
        .collect()
}

/// One file after the first pass.
struct First {
    keys: SessionKeys,
    /// The bytes of a stream (standard input, a FIFO), which cannot be read again.
    kept: Option<Input>,
}

fn open(target: &Target) -> Result<Input, String> {
    target.open().map_err(|e| e.to_string())
}

/// Loads a session in its own dialect (pi's or oh-my-pi's, detected), letting go of the
/// pages of a mapped file as the loader is done with them (so that a large session does not
/// stay resident as a whole).
fn load_releasing(input: &Input, pi: PiVersion) -> Result<Session<'_>, String> {
    Session::loader(pi)
        .detect_dialect()
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

/// The rows pass, shared by its threads: each takes the next session in `order` until
/// there is none, or until a thread failed to write.
struct Work<'a> {
    export: &'a Export,
    /// The export's options, or those of rows in memory (no partitions).
    options: &'a Options,
    targets: &'a [Target],
    kept: &'a [Mutex<Option<Input>>],
    ownership: &'a Ownership,
    order: &'a [u32],
    next: AtomicUsize,
    failed: AtomicBool,
    /// Files that could not be read: (source, error).
    file_errors: Mutex<Vec<(usize, String)>>,
}

/// Why one session's rows are not all there.
enum Failure<E> {
    /// The file could not be read (said, skipped).
    File(String),
    /// The rows could not be taken (the export stops).
    Output(E),
}

impl<'a> Work<'a> {
    /// The second pass over `targets`, in `order`, nothing taken yet.
    fn new(
        export: &'a Export,
        options: &'a Options,
        targets: &'a [Target],
        kept: &'a [Mutex<Option<Input>>],
        ownership: &'a Ownership,
        order: &'a [u32],
    ) -> Work<'a> {
        Work {
            export,
            options,
            targets,
            kept,
            ownership,
            order,
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            file_errors: Mutex::new(Vec::new()),
        }
    }

    /// Runs `thread` on as many threads as rayon has (`rayon::current_num_threads`), each
    /// given its number; what each returned, in the order of their numbers.
    fn on_every_thread<T: Send>(&self, thread: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let threads = rayon::current_num_threads().max(1);
        let thread = &thread;
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|w| scope.spawn(move || thread(w)))
                .collect();
            workers
                .into_iter()
                .map(|w| match w.join() {
                    Ok(result) => result,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    }

    /// One thread's loop, its rows into `sink`: what it wrote, or the sink's error.
    fn run<S: RowSink>(&self, sink: &mut S) -> Result<Written, S::Error> {
        let mut total = Written::default();
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            if n >= self.order.len() || self.failed.load(Ordering::Relaxed) {
                break;
            }
            let i = self.order[n];
            let source = self.ownership.sources()[i as usize];
            match self.one(i, source, sink) {
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
        Ok(total)
    }

    /// The rows of session `i` (the caller's `source`).
    fn one<S: RowSink>(
        &self,
        i: u32,
        source: usize,
        sink: &mut S,
    ) -> Result<Written, Failure<S::Error>> {
        let pi = self.export.pi;
        let kept = self.kept[source].lock().ok().and_then(|mut k| k.take());
        let input = match kept {
            Some(input) => input,
            None => open(&self.targets[source]).map_err(Failure::File)?,
        };
        // Every record's text is read again for the rows, and `write_session` lets the pages
        // go behind it; a large file's are let go while loading too, at the price of reading
        // them twice. A redacted session is made in memory first.
        let redacted = match &self.export.redact {
            Some(redactor) => {
                let mut out = Vec::with_capacity(input.bytes().len());
                redactor
                    .redact(input.bytes(), &mut out)
                    .map_err(|e| Failure::File(e.to_string()))?;
                Some(out)
            }
            None => None,
        };
        let session = match &redacted {
            Some(bytes) => Session::loader(pi)
                .detect_dialect()
                .load(bytes)
                .map_err(|e| e.to_string()),
            None if input.bytes().len() >= LARGE => load_releasing(&input, pi),
            None => Session::loader(pi)
                .detect_dialect()
                .load(input.bytes())
                .map_err(|e| e.to_string()),
        }
        .map_err(Failure::File)?;
        // The verdicts are `pi-session validate`'s: whether pi reads the file (an oh-my-pi
        // file is said to be one, PS0111/PS0112).
        let verdicts = self
            .export
            .validate
            .then(|| verdicts(&input, &self.targets[source], pi));
        let written = rows::write_session(
            &session,
            &Source {
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

/// What `pi-session validate` says of the file, with the same options: the file's absolute
/// path for the checks of its name and directory.
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
    Verdicts::of(&report)
}

impl Verdicts {
    /// The verdict columns of a validator's report: its verdicts, its counts, and the codes
    /// of its diagnostics, each once, in order.
    pub fn of(report: &pi_session_validate::Report) -> Verdicts {
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
}
