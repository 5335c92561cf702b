//! `pi-session`: the command-line tool for pi session files.
//!
//! Thin by design: argument parsing, reading files, printing. Everything about the format
//! lives in the `pi-session-format` library.
//!
//! Exit codes: 0 success, 1 the input is invalid or the operation failed on it, 2 usage.

mod input;

use clap::{Args, Parser, Subcommand, ValueEnum};
use input::Input;
use pi_session_format::context::build_context;
use pi_session_format::json::{self, JsArray, JsValue};
use pi_session_format::migrate::{IdGenerator, RandomIds, SequentialIds};
use pi_session_format::session::{LoadOptions, Session};
use pi_session_format::tree::{self, Index, Leaf};
use pi_session_format::{PiVersion, atomic, llm};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "pi-session",
    version,
    about = "Read, migrate and check pi coding-agent session files"
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
    },
    /// Print or write the file migrated to version 3, as pi would rewrite it on open.
    Migrate {
        #[command(flatten)]
        file: FileArgs,
        /// Print the migrated file on stdout.
        #[arg(
            long,
            conflicts_with = "in_place",
            required_unless_present = "in_place"
        )]
        stdout: bool,
        /// Replace the file atomically (temporary file, fsync, rename).
        #[arg(long)]
        in_place: bool,
        /// With --in-place: keep the original as FILE.bak.
        #[arg(long, requires = "in_place")]
        backup: bool,
        /// Number new ids 00000001, 00000002, … instead of random ids (also set by the
        /// environment variable PI_SESSION_DETERMINISTIC_IDS=1).
        #[arg(long)]
        sequential_ids: bool,
    },
    /// Print the entry tree as pi's `getTree()` orders it: `[{"id","type","label"?,"children"}]`.
    Tree {
        #[command(flatten)]
        file: FileArgs,
    },
    /// Print the session's listing entry as pi's `buildSessionInfo` makes it: `{"id","cwd",
    /// "name"?,"parentSessionPath"?,"created","modified","messageCount","firstMessage",
    /// "allMessagesText"}`, or `null` when pi leaves the file out of session lists.
    Info {
        #[command(flatten)]
        file: FileArgs,
        /// The file modification time to use (milliseconds since 1970), pi's last fallback
        /// for `modified`; default: the file's own (0 for standard input).
        #[arg(long, value_name = "MS")]
        mtime: Option<i64>,
    },
}

#[derive(Args)]
struct FileArgs {
    /// The session file (`-` reads standard input).
    file: PathBuf,
    /// Which pi to follow where versions differ.
    #[arg(long, value_enum, default_value_t = Pi::V0_73)]
    pi: Pi,
}

#[derive(Clone, Copy, ValueEnum)]
enum Pi {
    /// @mariozechner/pi-coding-agent 0.73.1, the documented v3 format.
    #[value(name = "0.73")]
    V0_73,
    /// @earendil-works/pi-coding-agent 0.87.1, current pi.
    #[value(name = "0.87")]
    V0_87,
}

impl From<Pi> for PiVersion {
    fn from(pi: Pi) -> PiVersion {
        match pi {
            Pi::V0_73 => PiVersion::V0_73,
            Pi::V0_87 => PiVersion::V0_87,
        }
    }
}

/// A failure on the input: printed as `pi-session: FILE: message`, exit 1.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let file = match &cli.command {
        Command::Context { file, .. }
        | Command::Migrate { file, .. }
        | Command::Tree { file }
        | Command::Info { file, .. } => file.file.display().to_string(),
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("pi-session: {file}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Context { file, leaf, llm } => {
            let input = Input::open(&file.file)?;
            let pi = file.pi.into();
            let session = load(&input, &file, false)?;
            let index = Index::build(&session);
            let leaf = leaf.map_or(Leaf::Current, Leaf::Id);
            let context = build_context(&session, &index, &leaf, pi)?;
            for line in &context.skipped_lines {
                eprintln!(
                    "pi-session: {}:{line}: warning: `message` is missing or null; skipped (pi would throw a TypeError)",
                    file.file.display()
                );
            }
            let output = if llm {
                JsValue::Array(JsArray(llm::to_llm(context.messages, pi)))
            } else {
                context.to_json()
            };
            print_json(&output)
        }
        Command::Migrate {
            file,
            stdout,
            in_place: _,
            backup,
            sequential_ids,
        } => {
            let input = Input::open(&file.file)?;
            let session = load(&input, &file, sequential_ids)?;
            for d in &session.dropped {
                eprintln!(
                    "pi-session: {}:{}:{}: warning: not JSON ({}); kept verbatim (pi would delete this line)",
                    file.file.display(),
                    d.line,
                    d.column,
                    d.error
                );
            }
            let output = session.to_jsonl();
            if stdout {
                return write_stdout(&output);
            }
            if input.is_stdin() {
                return Err(Failure(
                    "--in-place needs a file, not standard input".into(),
                ));
            }
            if !session.version.rewrite {
                eprintln!(
                    "pi-session: {}: already version 3; nothing to migrate, file unchanged",
                    file.file.display()
                );
                return Ok(());
            }
            drop(session);
            drop(input);
            atomic::replace_file(&file.file, &output, backup)?;
            Ok(())
        }
        Command::Tree { file } => {
            let input = Input::open(&file.file)?;
            let session = load(&input, &file, false)?;
            let index = Index::build(&session);
            let roots = tree::tree(&session, &index);
            print_json(&tree::tree_to_json(&session, &roots))
        }
        Command::Info { file, mtime } => {
            let input = Input::open(&file.file)?;
            let mtime = match mtime {
                Some(ms) => ms as f64,
                None => input.modified_ms(),
            };
            let info = pi_session_format::info::session_info(input.bytes(), mtime, file.pi.into());
            print_json(&info.unwrap_or(JsValue::Null))
        }
    }
}

/// Loads a session; migration ids are sequential with `sequential_ids` or when the
/// environment sets `PI_SESSION_DETERMINISTIC_IDS=1`, random otherwise.
fn load<'a>(
    input: &'a Input,
    file: &FileArgs,
    sequential_ids: bool,
) -> Result<Session<'a>, Failure> {
    let deterministic = sequential_ids
        || std::env::var_os("PI_SESSION_DETERMINISTIC_IDS").is_some_and(|v| v == "1");
    let mut ids: Box<dyn IdGenerator> = if deterministic {
        Box::new(SequentialIds::default())
    } else {
        Box::new(RandomIds)
    };
    let session = Session::load_with(
        input.bytes(),
        LoadOptions {
            ids: ids.as_mut(),
            pi: file.pi.into(),
        },
    )?;
    for s in &session.skipped {
        eprintln!(
            "pi-session: {}:{}: warning: skipped {}",
            file.file.display(),
            s.line,
            s.reason
        );
    }
    Ok(session)
}

fn print_json(value: &JsValue) -> Result<(), Failure> {
    let mut bytes = Vec::new();
    json::write_value(&mut bytes, value);
    bytes.push(b'\n');
    write_stdout(&bytes)
}

/// Writes to stdout; a closed pipe (`pi-session … | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
