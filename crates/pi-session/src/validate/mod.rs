//! `pi-session validate [PATH…]`: checks session files with the library's validator
//! (`pi_session_format::validate`) and prints what it finds.
//!
//! - [`targets`]: the files to check (files, directories walked for `*.jsonl`, `-`, or pi's
//!   session directory);
//! - this module: the options, checking the files in parallel (rayon) with a progress bar on
//!   a terminal, the order of the output (the order of the targets), the exit code;
//! - [`human`], [`sarif`], [`github`]: the output formats (`json` is the library's
//!   [`ValidateReport`] serialised).
//!
//! Exit codes: 0 every file is valid under the chosen verdict, 1 a file is not (or cannot be
//! read), 2 usage errors, including no path with no pi session directory to fall back on.

mod github;
mod human;
mod sarif;
mod targets;

use crate::Pi;
use crate::input::Input;
use clap::{Args, ValueEnum};
use pi_session_format::PiVersion;
use pi_session_format::validate::{
    FileReport, Options, PI_MAX_TEXT_UNITS, Tool, ValidateReport, VerdictMode, validate,
};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use targets::Target;

/// Files from this many on get a progress bar (on a terminal).
const PROGRESS_FROM: usize = 20;

/// The arguments of `pi-session validate`.
#[derive(Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct ValidateArgs {
    /// Session files and directories (walked for `*.jsonl`); `-` reads standard input.
    /// Default: pi's session directory, `$PI_CODING_AGENT_DIR/sessions` or
    /// `~/.pi/agent/sessions`.
    paths: Vec<PathBuf>,
    /// Which pi's behaviour the pi-loadable verdict and the `pi` effects describe.
    #[arg(long, value_enum, default_value_t = Pi::V0_73)]
    pi: Pi,
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
    /// Colour the human format: `auto` on a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
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

Exit codes: 0 every file valid, 1 a file invalid or unreadable, 2 usage error (also: no path \
given and no pi session directory).";

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
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always (even with NO_COLOR).
    Always,
    /// Never.
    Never,
}

impl Color {
    fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// The outcome for one target.
struct Checked {
    report: FileReport,
    /// The output of the file in the human, quiet or github format.
    text: String,
    /// For SARIF and github: the end column of each diagnostic.
    end_columns: Vec<Option<usize>>,
}

/// How every file is checked and shown.
struct Run {
    pi: PiVersion,
    mode: VerdictMode,
    schema_only: bool,
    max_text_units: usize,
    format: Format,
    quiet: bool,
    color: bool,
}

impl Run {
    fn check(&self, target: &Target) -> Checked {
        let name = target.display();
        let input = match target {
            Target::Stdin => Input::open("-".as_ref()),
            Target::File(path) => Input::open(path),
            Target::Broken(_, error) => Err(std::io::Error::other(error.clone())),
        };
        let input = match input {
            Ok(input) => input,
            Err(e) => return self.unreadable(name, &e.to_string()),
        };
        let absolute = match target {
            Target::File(path) => std::path::absolute(path).ok(),
            _ => None,
        };
        let options = Options {
            pi: self.pi,
            path: absolute.as_deref(),
            schema_only: self.schema_only,
            max_text_units: self.max_text_units,
        };
        let bytes = input.bytes();
        let report = FileReport::validated(name, validate(bytes, &options), self.mode);
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
            Format::Human => human::file(&report.path, bytes, &report, self.color),
            Format::Github => github::file(&report, &end_columns),
            Format::Json | Format::Sarif => String::new(),
        };
        Checked {
            report,
            text,
            end_columns,
        }
    }

    fn unreadable(&self, name: String, error: &str) -> Checked {
        let report = FileReport::unreadable(name, error);
        let text = match self.format {
            Format::Human if self.quiet => human::quiet(&report.path, &report),
            Format::Human => human::unreadable(&report.path, error, self.color),
            Format::Github => github::file(&report, &[]),
            Format::Json | Format::Sarif => String::new(),
        };
        Checked {
            report,
            text,
            end_columns: Vec::new(),
        }
    }
}

/// Runs `pi-session validate`.
pub fn main(args: ValidateArgs) -> ExitCode {
    let targets = match targets::collect(&args.paths) {
        Ok(targets) => targets,
        Err(targets::NoSessions(message)) => {
            eprintln!("pi-session: {message}");
            return ExitCode::from(2);
        }
    };
    let mode = if args.schema_only {
        VerdictMode::SchemaOnly
    } else if args.strict {
        VerdictMode::Strict
    } else {
        VerdictMode::PiLoadable
    };
    let run = Run {
        pi: args.pi.into(),
        mode,
        schema_only: args.schema_only,
        max_text_units: args.pi_max_text_units.unwrap_or(PI_MAX_TEXT_UNITS),
        format: args.format,
        quiet: args.quiet,
        color: args.format == Format::Human && !args.quiet && args.color.enabled(),
    };
    let progress = progress_bar(targets.len());
    let checked: Vec<Checked> = targets
        .par_iter()
        .map(|target| {
            let checked = run.check(target);
            if let Some(bar) = &progress {
                bar.inc(1);
            }
            checked
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let mut texts = Vec::with_capacity(checked.len());
    let mut files = Vec::with_capacity(checked.len());
    let mut end_columns = Vec::with_capacity(checked.len());
    for c in checked {
        texts.push(c.text);
        files.push(c.report);
        end_columns.push(c.end_columns);
    }
    let all_valid = files.iter().all(|f| f.valid);
    let version = env!("CARGO_PKG_VERSION");
    let report = ValidateReport::new(
        Tool {
            name: "pi-session".into(),
            version: version.into(),
        },
        run.pi,
        mode,
        files,
    );
    let mut out = String::new();
    let summary = human::summary(&report.summary, mode, run.color);
    match run.format {
        Format::Human => {
            texts.iter().for_each(|t| out.push_str(t));
            if !run.quiet {
                out.push_str(&summary);
                out.push('\n');
            }
        }
        Format::Json => {
            out = serde_json::to_string_pretty(&report).expect("the report serialises");
            out.push('\n');
        }
        Format::Sarif => {
            let log = sarif::log(&report.files, &end_columns, version);
            out = serde_json::to_string_pretty(&log).expect("the log serialises");
            out.push('\n');
        }
        Format::Github => texts.iter().for_each(|t| out.push_str(t)),
    }
    if let Err(crate::ops::Rejected(message)) = crate::write_stdout(out.as_bytes()) {
        eprintln!("pi-session: {message}");
        return ExitCode::FAILURE;
    }
    // Machine formats and --quiet keep stdout to themselves: the summary goes to stderr.
    if run.format != Format::Human || run.quiet {
        eprintln!("{summary}");
    }
    if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A progress bar on stderr when it is a terminal and there are many files.
fn progress_bar(files: usize) -> Option<indicatif::ProgressBar> {
    if files < PROGRESS_FROM || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} validating {pos}/{len} files {wide_bar} {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}
