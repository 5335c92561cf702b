//! `pi-session new`, `append` and `fork`: sessions written with the library's
//! `SessionWriter` (pi's bytes, atomic creation, `O_APPEND` under a lock). This module parses
//! arguments and input and reports; the format logic is the library's.

use crate::Rejected;
use clap::Args;
use pi_session_format::json;
use pi_session_format::write::{SessionWriter, WriteProfile, WriterConfig};
use pi_session_validate::{Options, Severity, validate};
use std::io::Read;
use std::path::PathBuf;

/// `pi-session new`.
#[derive(Args)]
pub struct NewArgs {
    /// The session's working directory (the header's `cwd`).
    #[arg(long, value_name = "DIR")]
    cwd: String,
    /// Where the file goes; default: pi's directory for the cwd
    /// (`~/.pi/agent/sessions/--<cwd>--/`, or under `$PI_CODING_AGENT_DIR`).
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// The session id; default: a new UUID v7.
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Which pi's writing rules to follow: 0.73, 0.87 or 1.5 (current pi).
    #[arg(long, default_value = "1.5")]
    pi: WriteProfile,
}

/// `pi-session append`.
#[derive(Args)]
pub struct AppendArgs {
    /// The session file to append to (it must exist: `pi-session new` makes one).
    file: PathBuf,
    /// Which pi's writing rules to follow: 0.73, 0.87 or 1.5 (current pi).
    #[arg(long, default_value = "1.5")]
    pi: WriteProfile,
    /// Sync the file's data after every entry.
    #[arg(long)]
    fsync: bool,
}

/// `pi-session fork`.
#[derive(Args)]
pub struct ForkArgs {
    /// The session file to take the branch from (it is only read).
    file: PathBuf,
    /// The last entry of the branch.
    #[arg(long, value_name = "ID")]
    leaf: String,
    /// The new file (it must not exist); default: pi's file name next to FILE.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: Option<PathBuf>,
    /// Which pi's writing rules to follow: 0.73, 0.87 or 1.5 (current pi).
    #[arg(long, default_value = "1.5")]
    pi: WriteProfile,
}

fn rejected(e: impl std::fmt::Display) -> Rejected {
    Rejected(e.to_string())
}

/// Creates the session file now (pi waits for the first message) and prints its path.
pub fn new(args: NewArgs) -> Result<(), Rejected> {
    let mut config = WriterConfig::default().profile(args.pi);
    if let Some(id) = args.id {
        config = config.session_id(id);
    }
    let mut writer =
        SessionWriter::create(&args.cwd, args.session_dir.as_deref(), config).map_err(rejected)?;
    writer.write_now().map_err(rejected)?;
    let path = writer
        .path()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    crate::write_stdout(format!("{path}\n").as_bytes())
}

/// One entry of standard input.
struct Input {
    line: usize,
    value: json::JsValue,
}

fn read_entries(text: &str) -> Result<Vec<Input>, Rejected> {
    let mut out = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = json::parse(line).map_err(|e| {
            let column = line[..e.offset.min(line.len())].chars().count() + 1;
            Rejected(format!(
                "<stdin>:{}:{column}: {}; each line of the input is one entry as a JSON object; nothing was written",
                n + 1,
                e.message()
            ))
        })?;
        out.push(Input { line: n + 1, value });
    }
    Ok(out)
}

/// Appends the entries of standard input (NDJSON), each checked first: in a copy of the
/// session in memory (ids, parents and times filled in), then the whole result with the
/// validator. Any problem: a message naming the input line, and nothing is written.
pub fn append(args: AppendArgs) -> Result<(), Rejected> {
    let mut text = String::new();
    std::io::stdin()
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| Rejected(format!("cannot read the entries on stdin: {e}")))?;
    let inputs = read_entries(&text)?;
    if inputs.is_empty() {
        return Ok(());
    }
    let config = || WriterConfig::default().profile(args.pi).fsync(args.fsync);
    // The dry run: the entries completed in memory, the file untouched.
    let mut dry = SessionWriter::load(&args.file, config()).map_err(rejected)?;
    let before = dry.to_jsonl();
    let lines_before = before.iter().filter(|&&b| b == b'\n').count();
    for input in &inputs {
        dry.append_entry(input.value.clone())
            .map_err(|e| Rejected(format!("<stdin>:{}: {e}; nothing was written", input.line)))?;
    }
    let after = dry.to_jsonl();
    let report = validate(
        &after,
        &Options {
            pi: args.pi.reading(),
            ..Options::default()
        },
    );
    let problems: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter_map(|d| {
            let at = d.location.as_ref()?;
            let input = inputs.get(at.line.checked_sub(lines_before + 1)?)?;
            Some(format!(
                "<stdin>:{}: {} {} ({})",
                input.line, d.code, d.message, d.help
            ))
        })
        .collect();
    if !problems.is_empty() {
        return Err(Rejected(format!(
            "{}\nnothing was written",
            problems.join("\n")
        )));
    }
    // The entries as completed, appended for real.
    let completed: Vec<json::JsValue> = String::from_utf8_lossy(&after[before.len()..])
        .lines()
        .filter_map(|l| json::parse(l).ok())
        .collect();
    let mut writer = SessionWriter::open(&args.file, config()).map_err(rejected)?;
    // One write for all the entries: all of them or, on any failure, none.
    writer
        .batch(|w| {
            for entry in completed {
                w.append_entry(entry)?;
            }
            Ok(())
        })
        .map_err(|e| Rejected(format!("{e}; nothing was written")))
}

/// Writes the branch ending at `--leaf` as a session of its own and prints its path.
pub fn fork(args: ForkArgs) -> Result<(), Rejected> {
    let config = WriterConfig::default().profile(args.pi);
    let mut writer = SessionWriter::load(&args.file, config).map_err(rejected)?;
    let path = match &args.out {
        Some(out) => {
            if out.exists() || out.is_symlink() {
                return Err(Rejected(format!(
                    "{}: exists; fork writes a new file, give another -o",
                    out.display()
                )));
            }
            writer
                .create_branched_session_at(&args.leaf, out)
                .map_err(rejected)?
        }
        None => writer
            .create_branched_session(&args.leaf)
            .map_err(rejected)?
            .ok_or_else(|| Rejected("no file was written".into()))?,
    };
    crate::write_stdout(format!("{}\n", path.display()).as_bytes())
}
