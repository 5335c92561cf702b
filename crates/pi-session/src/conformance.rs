//! `pi-session conformance`: run the corpus against any implementation (`run`), and be an
//! implementation of the protocol (`impl`), so `pi-session` checks itself the same way; the
//! same for session writers (`writer`, `write`: [`writer`]).

mod writer;

use crate::ops::{self, Rejected, Settings};
use clap::{Subcommand, ValueEnum};
use pi_session_conformance::corpus;
use pi_session_conformance::embedded::{self, Manifest};
use pi_session_conformance::level::Level;
use pi_session_conformance::run::{self, Report, RunOptions};
use pi_session_format::omp::rewrite::OnOpen;
use pi_session_format::{Dialect, PiVersion};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run an implementation over the corpus and print a pass/fail summary.
    ///
    /// Each operation runs in its own process group, killed as a whole on the timeout, when
    /// an output goes past twice the expected output plus 1 MiB, and after the
    /// implementation exits (nothing it started outlives its operation).
    ///
    /// Each output is judged at three levels: exact (pi's bytes), equivalent (the same JSON
    /// values: key order, number spelling, whitespace and string escapes aside) and, for
    /// `migrate` and `tree`, structural (equivalent with the ids renamed consistently, for
    /// implementations whose migration ids are random); --level says which counts as a pass.
    /// A failure shows the first differences as JSON paths, the expected file, the rules the
    /// case covers and the command that runs it again.
    ///
    /// An implementation that does not do an operation exits with status 3: the operation is
    /// reported as unsupported and not scored.
    ///
    /// The cases of `divergence/` pin pi-session's own safety behaviour where it differs from
    /// pi on purpose (pi hangs, crashes or loses data there); they run only with
    /// --divergences.
    ///
    /// Exit status: 0 when every selected operation passed or was unsupported, and one
    /// passed; 1 when one failed, none passed, or --only/--skip selected no case; 2 for a
    /// usage error, or a --corpus that cannot be read or holds no case.
    Run {
        /// The implementation's command line; it is called as `IMPL OP [ARGS…]` with the
        /// session on stdin (see conformance/README.md).
        #[arg(long = "impl", value_name = "COMMAND")]
        implementation: String,
        /// Another corpus than the one built into pi-session: a directory as `conformance
        /// corpus --extract` writes it, or a cases directory (`<area>/<case>/case.json`).
        #[arg(long, value_name = "DIR")]
        corpus: Option<PathBuf>,
        /// Run only the cases whose id (`area/name`) matches this glob (repeatable).
        #[arg(long, value_name = "GLOB")]
        only: Vec<String>,
        /// Skip the cases whose id matches this glob (repeatable).
        #[arg(long, value_name = "GLOB")]
        skip: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Seconds an implementation may take for one operation (more than 0).
        #[arg(long, default_value = "10", value_parser = parse_timeout)]
        timeout: Duration,
        /// The level an operation must reach to pass.
        #[arg(long, value_enum, default_value_t = ReaderLevel::Exact)]
        level: ReaderLevel,
        /// Also run the cases of `divergence/`: pi-session's documented choices where pi
        /// hangs, crashes or loses data, not pi's behaviour.
        #[arg(long)]
        divergences: bool,
        /// The dialect whose cases to run: `pi` (every area but `omp/`), or `omp` (the
        /// cases of `omp/`, computed by oh-my-pi; the implementation is given `--dialect
        /// omp`).
        #[arg(long, value_name = "DIALECT", default_value = "pi")]
        dialect: Dialect,
    },
    /// Judge a session writer over the writer corpus (conformance/writers/).
    ///
    /// For each scenario and pi version it lists, WRITER is called as `WRITER --pi P OUT`
    /// with the scenario's script (NDJSON operations, conformance/writers/SCRIPT.md) on
    /// stdin, and must write the session file to OUT, or nothing where pi writes nothing.
    /// Each file is judged at four levels, reported separately: exact (byte for byte pi's
    /// file), renamed (exact up to ids and times: the script's ids renamed consistently and
    /// its clock times free, for writers without id and clock hooks), equivalent (the same
    /// lines as JSON values) and loadable (strict-valid, pi-loadable, the same context as
    /// pi's file).
    /// A writer that does not do an operation of a script exits with status 3: that run is
    /// reported as unsupported and not scored.
    ///
    /// Exit status: 0 when every run passed at --level or was unsupported, and one passed; 1
    /// when one failed or none passed; 2 for a usage
    /// error or a corpus that cannot be read.
    Writer {
        /// The writer's command line.
        #[arg(long = "impl", value_name = "WRITER")]
        implementation: String,
        /// Another corpus than the one built into pi-session: a directory as `conformance
        /// corpus --extract` writes it, or a writers directory (`<scenario>/script.ndjson`).
        #[arg(long, value_name = "DIR")]
        corpus: Option<PathBuf>,
        /// The level that decides the exit status.
        #[arg(long, value_enum, default_value_t = writer::LevelArg::Exact)]
        level: writer::LevelArg,
        /// Run only the scenarios whose name matches this glob (repeatable).
        #[arg(long = "scenario", visible_alias = "only", value_name = "GLOB")]
        scenarios: Vec<String>,
        /// Run only these pi versions' profiles (repeatable; each scenario lists its own).
        #[arg(long = "profile", value_name = "PI", value_parser = crate::pi::parser())]
        profiles: Vec<PiVersion>,
        /// Leave out the scenarios whose script holds input only JavaScript strings can hold
        /// (a lone surrogate; `javascriptOnly` in case.json), for a driver whose JSON parser
        /// needs valid Unicode.
        #[arg(long)]
        no_javascript_only: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Seconds a writer may take for one scenario (more than 0).
        #[arg(long, default_value = "20", value_parser = parse_timeout)]
        timeout: Duration,
        /// The writer is pi-session's own: where a scenario's case.json lists a deliberate
        /// divergence from pi for a version (`divergences`), judge that run by strict validity
        /// and pi-loadability only (pi loses entries there, so bytes and context differ).
        #[arg(long)]
        allow_divergences: bool,
    },
    /// The corpus built into pi-session: its version and contents, or a copy of it on disk.
    ///
    /// `run` and `writer` use it unless given --corpus (extracted once per version into the
    /// cache directory, $XDG_CACHE_HOME/pi-session or ~/.cache/pi-session, where the paths
    /// they print stay valid).
    Corpus {
        /// Write the corpus into DIR (new or empty): cases/, writers/, RULES.md, FORMAT.md
        /// and MANIFEST.json.
        #[arg(long, value_name = "DIR")]
        extract: Option<PathBuf>,
        /// Output format (json: the manifest).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Act as a session writer for `conformance writer`: run the script on stdin through
    /// pi-session's own writer and write the file to OUT.
    Write {
        /// Which pi's writing rules to follow.
        #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
        pi: PiVersion,
        /// Ignore the script's ids and times: draw random ids and read the system clock, as a
        /// writer without id and clock hooks does (judged at the renamed level).
        #[arg(long)]
        no_hooks: bool,
        /// Where the session file goes.
        out: PathBuf,
    },
    /// Act as an implementation of the protocol: read the session on stdin, print the
    /// result of OP.
    Impl {
        /// The operation.
        #[arg(value_enum)]
        op: ProtocolOp,
        /// Leaf id for `context` and `llm`.
        #[arg(long, value_name = "ID")]
        leaf: Option<String>,
        /// Which pi to follow (the corpus runners always say: a case's default is 0.73).
        #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
        pi: PiVersion,
        /// File modification time for `info` (ms since 1970).
        #[arg(long, value_name = "MS", default_value_t = 0)]
        mtime: i64,
        /// The session's dialect (the corpus runner passes the case's, `pi` by default).
        #[arg(long, value_name = "DIALECT", default_value = "pi")]
        dialect: Dialect,
        /// omp cases: the blob store their images' references name (the case's `blobs/`).
        #[arg(long, value_name = "DIR")]
        blobs: Option<std::path::PathBuf>,
    },
}

/// `conformance run --level`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ReaderLevel {
    /// pi's bytes.
    Exact,
    /// The same JSON values.
    Equivalent,
    /// The same shape with the ids renamed (`migrate`, `tree`; the others need equivalent).
    Structural,
}

impl From<ReaderLevel> for Level {
    fn from(level: ReaderLevel) -> Level {
        match level {
            ReaderLevel::Exact => Level::Exact,
            ReaderLevel::Equivalent => Level::Equivalent,
            ReaderLevel::Structural => Level::Structural,
        }
    }
}

/// Report formats.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// A line per failure with its diff, then a summary.
    Human,
    /// The whole report as JSON.
    Json,
    /// JUnit XML (one test per operation of a case; `conformance run` only).
    Junit,
}

/// The protocol's operations.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ProtocolOp {
    /// `buildSessionContext()`.
    Context,
    /// `convertToLlm(context.messages)`.
    Llm,
    /// The file after opening.
    Migrate,
    /// `getTree()`.
    Tree,
    /// `buildSessionInfo`.
    Info,
}

impl ProtocolOp {
    /// The operation's name on the command line.
    fn name(self) -> &'static str {
        match self {
            ProtocolOp::Context => "context",
            ProtocolOp::Llm => "llm",
            ProtocolOp::Migrate => "migrate",
            ProtocolOp::Tree => "tree",
            ProtocolOp::Info => "info",
        }
    }
}

pub(crate) fn main(command: Command) -> ExitCode {
    match command {
        Command::Run {
            implementation,
            corpus,
            only,
            skip,
            format,
            timeout,
            level,
            divergences,
            dialect,
        } => {
            let mut skip = skip;
            if !divergences {
                skip.push(DIVERGENCE_TIER.to_owned());
            }

            let (corpus, manifest) = match corpus_part(corpus.as_deref(), "cases") {
                Ok(found) => found,
                Err(e) => {
                    eprintln!("pi-session: {e}");
                    return ExitCode::from(2);
                }
            };
            run_corpus(
                RunOptions {
                    implementation,
                    only,
                    skip,
                    timeout,
                    level: level.into(),
                },
                &corpus,
                manifest,
                format,
                divergences,
                dialect,
            )
        }
        Command::Corpus { extract, format } => corpus_command(extract.as_deref(), format),
        Command::Writer {
            format: Format::Junit,
            ..
        } => {
            eprintln!(
                "pi-session: error: --format junit is for `conformance run`; the writer judge reports as human or json"
            );
            ExitCode::from(2)
        }
        Command::Writer {
            implementation,
            corpus,
            level,
            scenarios,
            profiles,
            no_javascript_only,
            format,
            timeout,
            allow_divergences,
        } => {
            let (corpus, manifest) = match corpus_part(corpus.as_deref(), "writers") {
                Ok(found) => found,
                Err(e) => {
                    eprintln!("pi-session: {e}");
                    return ExitCode::from(2);
                }
            };
            writer::run(&writer::WriterRun {
                implementation: &implementation,
                corpus: &corpus,
                corpus_version: manifest.map(|m| m.version),
                level: level.into(),
                scenarios: &scenarios,
                profiles: &profiles
                    .iter()
                    .map(|p| p.write_profile())
                    .collect::<Vec<_>>(),
                javascript_only: !no_javascript_only,
                json: matches!(format, Format::Json),
                timeout,
                allow_divergences,
            })
        }
        Command::Write { pi, out, no_hooks } => writer::write(
            pi.write_profile(),
            &out,
            if no_hooks {
                pi_session_conformance::script::Hooks::None
            } else {
                pi_session_conformance::script::Hooks::Script
            },
        ),
        Command::Impl {
            op: ProtocolOp::Migrate,
            dialect: Dialect::Omp,
            pi,
            blobs,
            ..
        } => omp_migrate(pi, blobs.map(pi_session_format::omp::Blobs::new)),
        Command::Impl { op, dialect, .. }
            if dialect == Dialect::Omp
                && !matches!(
                    op,
                    ProtocolOp::Context | ProtocolOp::Tree | ProtocolOp::Info
                ) =>
        {
            // The protocol's "not supported" status: not scored, not a failure.
            eprintln!(
                "pi-session: {}: not supported for omp sessions yet (`context`, `tree`, `info` and `migrate` are)",
                op.name()
            );
            ExitCode::from(3)
        }
        Command::Impl {
            op,
            leaf,
            pi,
            mtime,
            dialect,
            blobs,
        } => match implement(op, leaf.as_deref(), pi, dialect, blobs, mtime) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Rejected(message)) => {
                eprintln!("pi-session: {message}");
                ExitCode::FAILURE
            }
        },
    }
}

/// `migrate` of an omp session on standard input: the file as omp leaves it after opening
/// it (itself, or what omp rewrites it into); an error (exit 1) where omp fails, the
/// protocol's "not supported" (exit 3) where omp's rewrite is not reproduced. Images the
/// rewrite moves into the blob store are not written anywhere: the protocol's answer is the
/// file, which names them by their hash.
fn omp_migrate(pi: PiVersion, blobs: Option<pi_session_format::omp::Blobs>) -> ExitCode {
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut bytes) {
        eprintln!("pi-session: standard input: {e}");
        return ExitCode::FAILURE;
    }
    let settings = Settings {
        pi,
        dialect: Some(Dialect::Omp),
        sequential_ids: true,
        exits_after: false,
    };
    let written = match ops::omp_on_open(&bytes, settings, blobs.as_ref()) {
        Ok((OnOpen::Unchanged, _)) => crate::write_stdout(&bytes),
        Ok((OnOpen::Rewrites { rewritten, .. }, _)) => crate::write_stdout(&rewritten.bytes),
        Ok((OnOpen::Fails(failure), _)) => Err(Rejected(format!("migrate: {failure}"))),
        Ok((OnOpen::Unsupported { reason, what }, _)) => {
            eprintln!(
                "pi-session: migrate: omp rewrites this file when it opens it ({reason}); {what} is not reproduced"
            );
            return ExitCode::from(3);
        }
        Ok(_) => Err(Rejected(
            "migrate: omp's handling of this file is not known".into(),
        )),
        Err(rejected) => Err(rejected),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(Rejected(message)) => {
            eprintln!("pi-session: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--timeout`: positive, finite seconds (a fraction is allowed).
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!("{text:?}: the timeout must be more than 0 seconds"));
    }
    // Anything beyond what a `Duration` holds is as good as no limit.
    Ok(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
}

fn implement(
    op: ProtocolOp,
    leaf: Option<&str>,
    pi: PiVersion,
    dialect: Dialect,
    blobs: Option<std::path::PathBuf>,
    mtime: i64,
) -> Result<(), Rejected> {
    let blobs = blobs.map(pi_session_format::omp::Blobs::new);
    let mut bytes = Vec::new();
    std::io::stdin().lock().read_to_end(&mut bytes)?;
    // Migration ids are numbered in the protocol so outputs are comparable.
    let settings = Settings {
        pi,
        dialect: Some(dialect),
        sequential_ids: true,
        exits_after: false,
    };
    let output = match op {
        ProtocolOp::Context | ProtocolOp::Llm => {
            let llm = matches!(op, ProtocolOp::Llm);
            crate::with_stdout(|out| {
                ops::context(
                    &bytes,
                    // Through positioned reads, as `pi-session context` reads a large (mapped)
                    // file: the corpus's small files would not take that path otherwise.
                    ops::Access::ReadAt(&|buf: &mut [u8], at: usize| {
                        buf.copy_from_slice(&bytes[at..at + buf.len()]);
                        true
                    }),
                    leaf,
                    llm,
                    settings,
                    blobs.as_ref(),
                    out,
                )
            })?;
            return Ok(());
        }
        ProtocolOp::Migrate => {
            crate::with_stdout(|out| ops::migrate(&bytes, settings, out).map(|_| ()))?;
            return Ok(());
        }
        ProtocolOp::Tree => ops::tree(&bytes, ops::Access::Release(&|_| {}), settings, None)?,
        ProtocolOp::Info => ops::info(&bytes, mtime as f64, settings),
    };
    crate::write_stdout(&output.bytes)
}

/// The cases of pi-session's deliberate divergences from pi, run only with `--divergences`.
const DIVERGENCE_TIER: &str = "divergence/*";

/// The part (`cases`, `writers`) of the corpus a command runs, and its manifest: `--corpus`
/// (a directory as `conformance corpus --extract` writes it, or the part itself), else the
/// corpus built into pi-session, extracted into the cache.
fn corpus_part(given: Option<&Path>, part: &str) -> Result<(PathBuf, Option<Manifest>), String> {
    let Some(dir) = given else {
        let root = embedded::cached()
            .map_err(|e| format!("cannot extract the built-in corpus: {e}; give one with --corpus DIR (`pi-session conformance corpus --extract DIR` writes it)"))?;
        let manifest = Manifest::of_dir(&root);
        return Ok((root.join(part), manifest));
    };
    if !dir.is_dir() {
        let cwd = std::env::current_dir()
            .map(|d| crate::display::path(&d))
            .unwrap_or_default();
        let what = if dir.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(format!(
            "--corpus {}: {what} (looked for from {cwd}); --corpus takes a corpus \
             as `pi-session conformance corpus --extract DIR` writes it, or its {part}/ \
             directory; without --corpus the corpus built into pi-session runs",
            crate::display::path(dir)
        ));
    }
    if dir.join(part).is_dir() {
        return Ok((dir.join(part), Manifest::of_dir(dir)));
    }
    let manifest = dir.parent().and_then(Manifest::of_dir);
    Ok((dir.to_owned(), manifest))
}

/// `conformance corpus`: the built-in corpus's manifest, or a copy of it on disk.
fn corpus_command(extract: Option<&Path>, format: Format) -> ExitCode {
    let manifest = Manifest::embedded();
    if let Some(dir) = extract {
        if let Err(e) = embedded::extract(dir) {
            eprintln!("pi-session: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!(
            "pi-session: the conformance corpus {} is in {}; run it with `pi-session \
             conformance run --impl COMMAND --corpus {}`",
            manifest.version,
            crate::display::path(dir),
            crate::display::path(dir)
        );
        return ExitCode::SUCCESS;
    }
    match format {
        Format::Json => print!("{}", manifest.to_json()),
        Format::Human | Format::Junit => {
            let cases: usize = manifest.readers.values().map(|a| a.cases).sum();
            let operations: usize = manifest.readers.values().map(|a| a.operations).sum();
            println!("{} {}", manifest.corpus, manifest.version);
            println!("pi releases: {}", manifest.pi.join(", "));
            println!("reader cases: {cases} ({operations} operations)");
            for (area, count) in &manifest.readers {
                println!(
                    "  {area:<14} {:>4} cases {:>5} operations{}",
                    count.cases,
                    count.operations,
                    if count.tier == "spec" {
                        String::new()
                    } else {
                        format!("  ({} tier)", count.tier)
                    }
                );
            }
            let runs: Vec<String> = manifest
                .writers
                .runs
                .iter()
                .map(|(pi, n)| format!("{n} with pi {pi}"))
                .collect();
            println!(
                "writer scenarios: {} ({}; {} JavaScript-only)",
                manifest.writers.scenarios,
                runs.join(", "),
                manifest.writers.javascript_only
            );
        }
    }
    ExitCode::SUCCESS
}

fn run_corpus(
    options: RunOptions,
    corpus_dir: &std::path::Path,
    manifest: Option<Manifest>,
    format: Format,
    divergences: bool,
    dialect: Dialect,
) -> ExitCode {
    let cases = match corpus::load_cases(corpus_dir) {
        Ok(cases) if cases.is_empty() => {
            eprintln!(
                "pi-session: {}: no case in this directory (a corpus holds \
                 AREA/CASE/case.json); give a corpus with --corpus, or none for the built-in one",
                corpus_dir.display()
            );
            return ExitCode::from(2);
        }
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("pi-session: {e}");
            return ExitCode::from(2);
        }
    };
    let selected = match run::select(&cases, &options.only, &options.skip) {
        // Each run is of one dialect's cases (`case.json`'s `dialect`).
        Ok(selected) => selected
            .into_iter()
            .filter(|c| c.dialect() == dialect.name())
            .collect::<Vec<_>>(),
        Err(e) => {
            eprintln!("pi-session: {e}");
            return ExitCode::from(2);
        }
    };
    if selected.is_empty() {
        eprintln!(
            "pi-session: {}: no case selected by --only/--skip among {} cases; case ids are \
             AREA/CASE, e.g. {}",
            corpus_dir.display(),
            cases.len(),
            cases.first().map_or("", |c| c.id.as_str())
        );
        return ExitCode::FAILURE;
    }
    let mut report = run::run(&selected, &options);
    report.corpus = manifest.map(|m| m.version);
    report.tiers = if divergences {
        vec!["spec", "divergence"]
    } else {
        vec!["spec"]
    };
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        Format::Junit => print!("{}", pi_session_conformance::junit::junit(&report)),
        Format::Human => {
            println!(
                "corpus {}{} ({} cases run; tiers: spec{}); each case's --pi (0.73 unless its case.json says); pass at {}",
                report
                    .corpus
                    .as_deref()
                    .map_or_else(String::new, |v| format!("{v} at ")),
                crate::display::path(corpus_dir),
                report.cases,
                if divergences {
                    ", divergence"
                } else {
                    "; divergence/ left out, see --divergences"
                },
                report.level
            );
            for r in report
                .results
                .iter()
                .filter(|r| !r.passed && !r.unsupported)
            {
                println!("\nFAIL {} [{}]: {}", r.case, r.op, run::explain(r));
            }
            let unsupported: std::collections::BTreeSet<&str> = report
                .results
                .iter()
                .filter(|r| r.unsupported)
                .map(|r| r.op)
                .collect();
            if !unsupported.is_empty() {
                println!(
                    "\nunsupported (exit status {}), not scored: {} operations ({})",
                    pi_session_conformance::protocol::UNSUPPORTED,
                    report.unsupported,
                    unsupported.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
            println!();
            print!("{}", summary_table(&report));
            println!(
                "{} cases, {} operations: {} passed, {} failed at {}{} ({})",
                report.cases,
                report.results.len(),
                report.passed,
                report.failed,
                report.level,
                if report.unsupported > 0 {
                    format!(", {} unsupported", report.unsupported)
                } else {
                    String::new()
                },
                options.implementation
            );
        }
    }
    // Partial credit: what the implementation does not do is not held against it, but a run
    // in which it did nothing passes nothing.
    if report.failed == 0 && report.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The levels reached per area and operation, one row each.
fn summary_table(report: &Report) -> String {
    let mut text = format!(
        "{:<28} {:>5} {:>6} {:>10} {:>10} {:>6} {:>11}\n",
        "area/op", "ops", "exact", "equivalent", "structural", "none", "unsupported"
    );
    for (area, ops) in &report.areas {
        for (op, c) in ops {
            text.push_str(&format!(
                "{:<28} {:>5} {:>6} {:>10} {:>10} {:>6} {:>11}\n",
                format!("{area}/{op}"),
                c.ops,
                c.exact,
                c.equivalent,
                c.structural,
                c.failed,
                c.unsupported
            ));
        }
    }
    text
}
