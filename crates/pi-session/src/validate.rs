//! `pi-session validate [PATH…]`: checks session files with the library's validator
//! (`pi_session_validate`) and prints what it finds.
//!
//! - [`targets`]: the files to check (files, directories walked for `*.jsonl`, `-`, or pi's
//!   session directory);
//! - this module: the options, checking each file (with a progress bar on a terminal), the
//!   exit code;
//! - [`stream`]: checking files in parallel while writing each one's output as soon as it
//!   and those before it are done, in the order of the targets, so that memory holds a few
//!   files' reports, never all of them (the library caps each report: the first 100
//!   diagnostics of a code, then a count);
//! - [`human`], [`sarif`], [`github`]: the output formats (`json` is the library's
//!   [`ValidateReport`](pi_session_validate::ValidateReport) serialised).
//!
//! Exit codes: 0 every file is valid under the chosen verdict, 1 a file is not (or cannot be
//! read, or shrank while read), or a directory holds no session file; 2 usage errors (`-`
//! twice), including no path with no pi session directory to fall back on.

mod github;
mod human;
mod sarif;
mod stream;
pub(crate) mod targets;

use crate::display;
use anstream::ColorChoice;
use clap::{Args, ValueEnum};
use pi_session_format::omp::Blobs;
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::omp_store::OmpStore;
use pi_session_validate::{
    FileReport, Options, PI_MAX_TEXT_UNITS, Summary, Tool, VerdictMode, validate_input,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use targets::Target;

/// Files from this many on get a progress bar (on a terminal).
const PROGRESS_FROM: usize = 20;

/// The arguments of `pi-session validate`.
#[derive(Args)]
#[command(after_long_help = AFTER_HELP)]
pub(crate) struct ValidateArgs {
    /// Session files and directories (walked for `*.jsonl`); `-` reads standard input.
    /// Default: pi's session directory, `$PI_CODING_AGENT_DIR/sessions` or
    /// `~/.pi/agent/sessions`.
    paths: Vec<PathBuf>,
    /// Which pi's behaviour the pi-loadable verdict and the `pi` effects describe.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// Whose format to check the files against: `pi` (does pi read them? a file of
    /// oh-my-pi's gets one diagnostic that says so) or `omp` (oh-my-pi's title slot, header
    /// members and entry types are known; every other check is pi's).
    #[arg(long, value_name = "DIALECT", default_value = "pi")]
    dialect: Dialect,
    /// With `--dialect omp`: the blob store in which the files' `blob:sha256:` image
    /// references must be found (default: oh-my-pi's own, `~/.omp/agent/blobs` or where omp's
    /// environment puts it, when it exists; else references are not checked).
    #[arg(long, value_name = "DIR")]
    blobs: Option<PathBuf>,
    /// A file is valid only if it follows the format (no error), not merely if pi loads it
    /// without losing anything (the default verdict, pi-loadable).
    #[arg(long, conflicts_with = "schema_only")]
    strict: bool,
    /// Check only that every line is JSON and matches the JSON Schema of its version; a file
    /// is valid when no line violates them.
    #[arg(long)]
    schema_only: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// With the human format: one line per problem, `FILE:LINE:COL: CODE severity: message`
    /// (the summary goes to stderr).
    #[arg(long, short)]
    quiet: bool,
    /// Colour the human format. `auto` decides as `anstream` does: never with NO_COLOR,
    /// always with CLICOLOR_FORCE, never with CLICOLOR=0, otherwise on a terminal (whose
    /// TERM is not `dumb`). `always` and `never` override the environment.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Follow symbolic links to directories while walking a directory (by default they are
    /// not followed, so that a link to `..` does not check files outside the directory; a
    /// link back to an ancestor is never followed).
    #[arg(long)]
    follow: bool,
    /// Also take, in directories, the archives real deployments leave beside sessions:
    /// `*.jsonl.reset.<time>`, `*.jsonl.deleted.<time>`, `*.jsonl.bak-<n>-ms` (each said
    /// on stderr with what it is; `*.checkpoint.<uuid>.jsonl` files are always checked, as pi
    /// lists them).
    #[arg(long)]
    include_archived: bool,
    /// Testing only: the text length (UTF-16 units) above which pi cannot read a file
    /// (PS0301), instead of Node's 536870888, so that tests need no 512 MiB file.
    #[arg(long, value_name = "N", hide_short_help = true)]
    pi_max_text_units: Option<usize>,
}

const AFTER_HELP: &str = "\
Verdicts: pi-loadable (default) = pi opens the file without dropping, rewriting, truncating \
or refusing anything; --strict = no diagnostic of severity error; --schema-only = every line \
is JSON and matches its JSON Schema.

Formats: human (snippets and per-file verdicts), json (schemas/validate-report.schema.json), \
sarif (SARIF 2.1.0), github (workflow commands for GitHub Actions annotations).

Exit codes: 0 every file valid, 1 a file invalid or unreadable, or a directory without session \
files, 2 usage error (also: `-` given twice, no path given and no pi session directory).

Directories: only regular *.jsonl files (and links to them) are checked; FIFOs, sockets and \
devices are skipped with a note, links to directories are followed only with --follow.";

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Snippets in rustc's style, each file's verdicts and a summary.
    Human,
    /// The versioned report of `schemas/validate-report.schema.json`.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…`).
    Github,
}

/// `--color`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Color {
    /// As the environment and standard output say (`anstream`'s rules).
    Auto,
    /// Always (even with NO_COLOR or CLICOLOR=0).
    Always,
    /// Never (even with CLICOLOR_FORCE).
    Never,
}

impl Color {
    /// Whether standard output gets colour: the flag first, then, for `auto`, what
    /// [`anstream::AutoStream::choice`] makes of NO_COLOR, CLICOLOR_FORCE, CLICOLOR, TERM
    /// and whether standard output is a terminal.
    fn enabled(self) -> bool {
        self.enabled_on(&std::io::stdout())
    }

    /// [`Color::enabled`] for another stream (stderr).
    fn enabled_on(self, stream: &impl anstream::stream::RawStream) -> bool {
        let choice = match self {
            Color::Always => ColorChoice::Always,
            Color::Never => ColorChoice::Never,
            Color::Auto => anstream::AutoStream::choice(stream),
        };
        choice != ColorChoice::Never
    }
}

/// The outcome for one target.
struct Checked {
    report: FileReport,
    /// The output of the file in the human, quiet or github format.
    text: String,
    /// Why the file could not be read, for stderr (the report on stdout holds it too, in
    /// the machine formats).
    error: Option<String>,
    /// For SARIF and github: the end column of each diagnostic.
    end_columns: Vec<Option<usize>>,
    /// For SARIF: the file's URI.
    uri: String,
}

/// How every file is checked and shown.
struct Run {
    pi: PiVersion,
    dialect: Dialect,
    /// Where `blob:sha256:` references are looked up (`--dialect omp`).
    blobs: Option<Blobs>,
    mode: VerdictMode,
    schema_only: bool,
    max_text_units: usize,
    format: Format,
    quiet: bool,
    color: bool,
    /// Whether errors on stderr get colour.
    color_stderr: bool,
}

impl Run {
    fn check(&self, target: &Target) -> Checked {
        let name = target.display();
        let uri = target.path().map_or_else(|| "-".to_string(), display::uri);
        let input = match target.open() {
            Ok(input) => input,
            Err(e) => return self.unreadable(name, uri, &e.to_string()),
        };
        let absolute = target.absolute();
        let options = Options {
            pi: self.pi,
            path: absolute.as_deref(),
            schema_only: self.schema_only,
            max_text_units: self.max_text_units,
            dialect: self.dialect,
            blobs: self.blobs.as_ref(),
            // What lets the file's pages go: `validate_input`'s.
            ..Options::default()
        };
        // A file that shrank while it was read (its tail then read as zeros): what was
        // computed from it is not shown.
        let report = match validate_input(&input, &options) {
            Ok(report) => FileReport::validated(name, report, self.mode),
            Err(e) => return self.unreadable(name, uri, &e.to_string()),
        };
        let bytes = input.bytes();
        let end_columns = match self.format {
            Format::Sarif | Format::Github => report
                .diagnostics
                .iter()
                .map(|d| sarif::end_column(bytes, d))
                .collect(),
            Format::Human | Format::Json => Vec::new(),
        };
        let text = match self.format {
            Format::Human if self.quiet => human::quiet(&report.path, &report),
            Format::Human => human::file(&report.path, bytes, &report, self.color, self.dialect),
            Format::Github => github::file(&report, &end_columns),
            Format::Json | Format::Sarif => String::new(),
        };
        Checked {
            report,
            text,
            error: None,
            end_columns,
            uri,
        }
    }

    fn unreadable(&self, name: String, uri: String, error: &str) -> Checked {
        let report = FileReport::unreadable(name, error);
        // An error, not a diagnostic of the file: on stderr. GitHub's workflow commands are
        // read from stdout, and the machine formats report it too.
        let text = match self.format {
            Format::Github => github::file(&report, &[]),
            Format::Human | Format::Json | Format::Sarif => String::new(),
        };
        let error = Some(match self.format {
            Format::Human if !self.quiet => {
                human::unreadable(&report.path, error, self.color_stderr)
            }
            _ => human::quiet(&report.path, &report),
        });
        Checked {
            report,
            text,
            error,
            end_columns: Vec::new(),
            uri,
        }
    }
}

/// Runs `pi-session validate`.
pub(crate) fn main(args: ValidateArgs) -> ExitCode {
    if let Err(targets::Usage(message)) = targets::check_usage(&args.paths) {
        eprintln!("pi-session: error: {message}");
        return ExitCode::from(2);
    }
    let collected = match targets::collect_said(
        &args.paths,
        targets::Walk {
            follow: args.follow,
            include_archived: args.include_archived,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let targets = collected.targets;
    let mode = if args.schema_only {
        VerdictMode::SchemaOnly
    } else if args.strict {
        VerdictMode::Strict
    } else {
        VerdictMode::PiLoadable
    };
    let blobs = (args.dialect == Dialect::Omp)
        .then(|| args.blobs.clone().or_else(OmpStore::existing_blobs_dir))
        .flatten()
        .map(Blobs::new);
    let run = Run {
        pi: args.pi,
        dialect: args.dialect,
        blobs,
        mode,
        schema_only: args.schema_only,
        max_text_units: args.pi_max_text_units.unwrap_or(PI_MAX_TEXT_UNITS),
        format: args.format,
        quiet: args.quiet,
        color: args.format == Format::Human && !args.quiet && args.color.enabled(),
        color_stderr: args.format == Format::Human
            && !args.quiet
            && args.color.enabled_on(&std::io::stderr()),
    };
    let version = env!("CARGO_PKG_VERSION");
    let tool = Tool {
        name: "pi-session".into(),
        version: version.into(),
    };
    let mut writer = match run.format {
        Format::Human | Format::Github => stream::Writer::Text,
        Format::Json => stream::Writer::json(tool, run.pi, run.dialect, mode),
        Format::Sarif => stream::Writer::sarif(version),
    };
    let mut out = stream::Stdout::default();
    let mut summary = Summary::default();
    let progress = progress_bar(targets.len(), "validating");
    stream::in_order(
        &targets,
        |target| run.check(target),
        |checked| {
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            summary.add(&checked.report);
            writer.file(&mut out, &checked);
            if let Some(error) = &checked.error {
                eprint!("{error}");
            }
        },
    );
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let summary_line = human::summary(&summary, mode, run.color);
    writer.finish(&mut out, &summary);
    if run.format == Format::Human && !run.quiet {
        out.write(summary_line.as_bytes());
        out.write(b"\n");
    }
    if let Err(message) = out.flush() {
        eprintln!("pi-session: error: cannot write to standard output: {message}");
        return ExitCode::FAILURE;
    }
    // Machine formats and --quiet keep stdout to themselves: the summary goes to stderr.
    if run.format != Format::Human || run.quiet {
        eprintln!("{summary_line}");
    }
    if summary.invalid == 0 && collected.empty.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A progress bar on stderr when it is a terminal and there are many files: `{doing} 3/40
/// files`.
pub(crate) fn progress_bar(files: usize, doing: &str) -> Option<indicatif::ProgressBar> {
    if files < PROGRESS_FROM || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} {doing} {{pos}}/{{len}} files {{wide_bar}} {{eta}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}
