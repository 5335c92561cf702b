//! `pi-session`: the command-line tool for pi session files.
//!
//! Thin by design: argument parsing, reading files, printing. Everything about the format
//! lives in the `pi-session-format` library; [`ops`] turns its results into output bytes.
//!
//! Exit codes: 0 success, 1 the input is invalid or the operation failed on it, 2 usage.

mod cache;
mod conformance;
mod export;
mod generate;
mod ls;
mod migrate;
mod ops;
mod pi;
mod redact;
mod repair;
mod schema;
mod search;
mod stats;
mod validate;
mod write;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ops::{Rejected, Settings};
use pi_session_format::omp::Blobs;
use pi_session_format::tree;
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::input::Input;
pub(crate) use pi_session_fs::{display, input, replace};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "pi-session",
    version,
    about = "Read, migrate and check pi coding-agent session files",
    after_help = "--pi: every command follows current pi, @earendil-works/pi-coding-agent 1.5.2 \
                  (--pi 1.5), unless --pi 0.73 or --pi 0.87 names an older one.\n\n\
                  Environment: PI_SESSION_MAX_INPUT_SIZE (default 4GiB): the most bytes read from \
                  standard input, a pipe, a FIFO or a device (held in memory as a whole), e.g. \
                  500MB, 16GiB; regular files are not capped."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print what pi sends to the model: `{"messages":[…],"thinkingLevel":…,"model":…}`
    /// exactly as `SessionManager.open(FILE).buildSessionContext()`.
    Context {
        #[command(flatten)]
        file: FileArgs,
        /// Build from this entry id instead of the last entry (`buildSessionContext(entries, ID, byId)`).
        #[arg(long, value_name = "ID")]
        leaf: Option<String>,
        /// Print `convertToLlm(messages)` instead of the context.
        #[arg(long)]
        llm: bool,
        /// omp files: the blob store the images' `blob:sha256:` references name (default:
        /// omp's own, `~/.omp/agent/blobs` or `$XDG_DATA_HOME/omp/blobs`, by its rules).
        #[arg(long, value_name = "DIR")]
        blobs: Option<PathBuf>,
    },
    /// Print or write the file migrated to version 3, as pi leaves it after opening it.
    Migrate(migrate::MigrateArgs),
    /// Print the entry tree as pi's `getTree()` orders it: `[{"id","type","label"?,"children"}]`;
    /// `--format text` draws it (one line per entry, branches, labels, compactions, the leaf).
    Tree {
        #[command(flatten)]
        file: FileArgs,
        /// `json`: pi's `getTree()`; `text`: a drawing for the terminal.
        #[arg(long, value_enum, default_value_t = TreeFormat::Json)]
        format: TreeFormat,
        /// With `--format text`, draw every entry of long straight runs.
        #[arg(long)]
        no_collapse: bool,
    },
    /// Print the session's listing entry as pi's `buildSessionInfo` makes it: `{"id","cwd",
    /// "name"?,"parentSessionPath"?,"created","modified","messageCount","firstMessage",
    /// "allMessagesText"}`, or `null` when pi leaves the file out of session lists; for an omp
    /// file (`--dialect omp`, or detected), omp's `scanSessionFile`: `{"id","cwd","title"?,
    /// "parentSessionPath"?,"created","modified","messageCount","assistantTurns","size",
    /// "firstMessage","allMessagesText","status"}` or `null`.
    Info {
        #[command(flatten)]
        file: FileArgs,
        /// The file modification time to use (milliseconds since 1970), pi's last fallback
        /// for `modified` (omp's `modified`); default: the file's own (0 for standard input).
        #[arg(long, value_name = "MS")]
        mtime: Option<i64>,
    },
    /// Run the conformance corpus against an implementation, or act as one.
    Conformance {
        #[command(subcommand)]
        command: conformance::Command,
    },
    /// Write a deterministic, realistic session (benchmarks, scaling tests): `gen --size 100MB
    /// --seed 1 [--version 1|2|3] [--out FILE]`, or `gen --entries N --linear`.
    Gen(generate::GenArgs),
    /// Print a JSON Schema of the format (generated from the library's types, see
    /// schemas/README.md); without NAME, list the schema names.
    Schema {
        /// The schema, e.g. `session-line`, `session-line-v1`, `entry-message`, `context`.
        name: Option<String>,
    },
    /// Check session files: every problem with its code (PS0001, …), what pi does about it,
    /// and three verdicts per file: strict (follows the format), pi-loadable (pi reads everything
    /// in it) and pi-resumes (pi resumes the conversation it holds). Without PATH, checks pi's
    /// own session directory.
    Validate(validate::ValidateArgs),
    /// Mend what pi breaks (glued and torn lines, repeated headers and entries, a lost
    /// header, shared ids, v1/v2 files; with --reattach, orphans and cycles), losing nothing:
    /// a dry run (the plan and a diff) unless -o OUT or --in-place is given.
    Repair(repair::RepairArgs),
    /// Replace the secrets of sessions (API keys, tokens, passwords, private keys, values you
    /// name) by stable placeholders `[REDACTED:rule:h8]`; the result is still a session pi
    /// loads and resumes. Reports by rule and place, never the secret.
    Redact(redact::RedactArgs),
    /// Tokens, cost and message counts of sessions (default: pi's session directory), by
    /// session, project, model, provider, day or month, with the history a forked or
    /// branched session copied counted once.
    Stats(stats::StatsArgs),
    /// List sessions as pi's `/resume` does (`SessionManager.list`, `--all`: `listAll`): name
    /// or first message, last activity, message count, size, newest first.
    Ls(ls::LsArgs),
    /// Find a regular expression in the texts of sessions (messages, thinking, tool calls,
    /// tool results, summaries): one line per match with file, line, entry, role and a
    /// snippet; exit 0 on a match, 1 on none, 2 on an error.
    Search(search::SearchArgs),
    /// Export a conversation (the active or a given branch) as Markdown, a self-contained HTML
    /// page or pi's JSONL export; or many sessions as Parquet tables for DuckDB, Polars, Spark.
    Export(export::ExportArgs),
    /// Create a new session file (its header, written now) and print its path.
    New(write::NewArgs),
    /// Append entries to a session: NDJSON on stdin, one entry per line; `id`, `parentId` (the
    /// leaf) and `timestamp` (now) are filled in when absent. Every entry is checked first;
    /// one bad entry and nothing is written.
    Append(write::AppendArgs),
    /// Write the branch ending at --leaf as a session of its own (pi's
    /// `createBranchedSession`), and print its path; FILE is only read.
    Fork(write::ForkArgs),
}

#[derive(Args)]
struct FileArgs {
    /// The session file (`-` reads standard input).
    file: PathBuf,
    /// Which pi to follow where versions differ.
    #[arg(long, value_parser = pi::parser(), default_value = pi::DEFAULT)]
    pi: PiVersion,
    /// The file's dialect, `pi` or `omp` (oh-my-pi); default: the file's own, told by
    /// omp's title slot, header members and entry types (see docs/dialects.md).
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<Dialect>,
}

/// `tree --format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TreeFormat {
    /// pi's `getTree()` as JSON.
    Json,
    /// A drawing for the terminal.
    Text,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Conformance { command } => conformance::main(command),
        Command::Schema { name } => schema::main(name.as_deref()),
        Command::Gen(args) => generate::main(args),
        Command::Validate(args) => validate::main(args),
        Command::Migrate(args) => migrate::main(args),
        Command::Repair(args) => repair::main(args),
        Command::Redact(args) => redact::main(args),
        Command::Stats(args) => stats::main(args),
        Command::Ls(args) => ls::main(args),
        Command::Search(args) => search::main(args),
        Command::Export(args) => export::main(args),
        Command::New(args) => exit_with(write::new(args)),
        Command::Append(args) => exit_with(write::append(args)),
        Command::Fork(args) => exit_with(write::fork(args)),
        command => run_file_command(command),
    }
}

/// Writes a command's report to standard output; a reader that went away (`| head`) is not
/// an error, anything else is (exit 1, said on stderr).
pub(crate) fn print_report(text: &str) -> Result<(), ExitCode> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("pi-session: error: cannot write to standard output: {e}");
            Err(ExitCode::FAILURE)
        }
        _ => Ok(()),
    }
}

/// Exit status 0, or 1 with the message on stderr.
fn exit_with(result: Result<(), Rejected>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Rejected(message)) => {
            eprintln!("pi-session: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_file_command(command: Command) -> ExitCode {
    let file = match &command {
        Command::Context { file, .. } | Command::Tree { file, .. } | Command::Info { file, .. } => {
            file.file.clone()
        }
        Command::Conformance { .. }
        | Command::Gen(_)
        | Command::Validate(_)
        | Command::Migrate(_)
        | Command::Repair(_)
        | Command::Redact(_)
        | Command::Stats(_)
        | Command::Ls(_)
        | Command::Search(_)
        | Command::Export(_)
        | Command::New(_)
        | Command::Append(_)
        | Command::Fork(_) => unreachable!("dispatched in main"),
        Command::Schema { .. } => unreachable!("dispatched in main"),
    };
    let name = crate::display::path(&file);
    let result = Input::open(&file)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::IsADirectory => Rejected(format!(
                "{e} (`pi-session validate DIR` checks the sessions in a directory)"
            )),
            _ => Rejected::from(e),
        })
        .and_then(|input| run(command, &input, &name));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Rejected(message)) => {
            eprintln!("pi-session: {name}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command, input: &Input, name: &str) -> Result<(), Rejected> {
    let output = match command {
        Command::Context {
            file,
            leaf,
            llm,
            blobs,
        } => {
            let settings = Settings {
                exits_after: true,
                dialect: file.dialect,
                ..Settings::new(file.pi, false)
            };
            let warnings = with_stdout(|out| {
                let release = |range| input.release(range);
                let access = if std::env::var_os("PI_SESSION_MMAP").is_some() {
                    ops::Access::Release(&release)
                } else {
                    ops::Access::Input(input)
                };
                let blobs = blobs
                    .or_else(pi_session_fs::omp_store::OmpStore::existing_blobs_dir)
                    .map(Blobs::new);
                ops::context(
                    input.bytes(),
                    access,
                    leaf.as_deref(),
                    llm,
                    settings,
                    blobs.as_ref(),
                    out,
                )
            })?;
            print_warnings(name, &warnings);
            // The context was streamed as it was built: a file that shrank meanwhile makes
            // what was printed wrong, which the exit status says.
            return Ok(input.verify()?);
        }
        Command::Tree {
            file,
            format,
            no_collapse,
        } => {
            // Like `context`: a large file in pieces read into small buffers, so that it is
            // never brought into memory (a 1,000,000-entry chain held 784 MiB of its mapping).
            let settings = Settings {
                exits_after: true,
                dialect: file.dialect,
                ..Settings::new(file.pi, false)
            };
            let text = (format == TreeFormat::Text).then(|| tree::TextOptions {
                collapse: if no_collapse {
                    usize::MAX
                } else {
                    tree::TextOptions::default().collapse
                },
                ..tree::TextOptions::default()
            });
            ops::tree(input.bytes(), ops::Access::Input(input), settings, text)?
        }
        Command::Info { file, mtime } => {
            let mtime = mtime.map_or_else(|| input.modified_ms(), |ms| ms as f64);
            let settings = Settings {
                dialect: file.dialect,
                ..Settings::new(file.pi, false)
            };
            with_stdout(|out| ops::info_to(input.bytes(), Some(input), mtime, settings, out))?;
            // Streamed in two passes: a file that shrank meanwhile makes what was printed
            // wrong, which the exit status says.
            return Ok(input.verify()?);
        }
        Command::Conformance { .. }
        | Command::Gen(_)
        | Command::Validate(_)
        | Command::Migrate(_)
        | Command::Repair(_)
        | Command::Redact(_)
        | Command::Stats(_)
        | Command::Ls(_)
        | Command::Search(_)
        | Command::Export(_)
        | Command::New(_)
        | Command::Append(_)
        | Command::Fork(_) => unreachable!("dispatched in main"),
        Command::Schema { .. } => unreachable!("dispatched in main"),
    };
    input.verify()?;
    print_warnings(name, &output.warnings);
    write_stdout(&output.bytes)
}

fn print_warnings(name: &str, warnings: &[String]) {
    for w in warnings {
        eprintln!("pi-session: {name}:{w}");
    }
}

/// Runs `write` on a buffered stdout; a closed pipe (`pi-session … | head`) is not an error.
pub fn with_stdout<T: Default>(
    write: impl FnOnce(&mut dyn Write) -> Result<T, Rejected>,
) -> Result<T, Rejected> {
    let mut out = PipeAware {
        inner: std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock()),
        closed: false,
    };
    let result = write(&mut out).and_then(|value| {
        out.flush()?;
        Ok(value)
    });
    if out.closed { Ok(T::default()) } else { result }
}

/// A writer that remembers whether the reader went away.
struct PipeAware<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> PipeAware<W> {
    fn note<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if result
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            self.closed = true;
        }
        result
    }
}

impl<W: Write> Write for PipeAware<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

/// Writes to stdout; a closed pipe (`pi-session … | head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Rejected> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
