//! `pi-session new`, `append` and `fork`: sessions written with the library's
//! `SessionWriter` (pi's bytes, atomic creation, `O_APPEND` under a lock). This module parses
//! arguments and input and reports; the format logic is the library's.

use crate::Rejected;
use crate::display;
use clap::Args;
use pi_session_format::PiVersion;
use pi_session_format::json;
use pi_session_format::session::Session;
use pi_session_format::write::{
    Commit, FileAppend, FileError, Plan, SessionWriter, WriteError, WriterConfig,
};
use pi_session_validate::{Options, Severity, validate};
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

/// `pi-session new`.
#[derive(Args)]
pub(crate) struct NewArgs {
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
    /// Which pi's writing rules to follow.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
}

/// `pi-session append`.
#[derive(Args)]
pub(crate) struct AppendArgs {
    /// The session file to append to (it must exist: `pi-session new` makes one).
    file: PathBuf,
    /// Which pi's writing rules to follow.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// Sync the file's data after appending.
    #[arg(long)]
    fsync: bool,
    /// The most bytes of entries read from standard input (`KB`, `MB`, `GB` suffixes).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = pi_session_fs::size::parse_size)]
    max_input_size: u64,
}

/// `pi-session fork`.
#[derive(Args)]
pub(crate) struct ForkArgs {
    /// The session file to take the branch from (it is only read).
    file: PathBuf,
    /// The last entry of the branch.
    #[arg(long, value_name = "ID")]
    leaf: String,
    /// The new file (it must not exist); default: pi's file name next to FILE.
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: Option<PathBuf>,
    /// Which pi's writing rules to follow.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
}

fn rejected(e: impl std::fmt::Display) -> Rejected {
    Rejected(e.to_string())
}

/// Refuses to start when standard output is closed: the path printed is the point.
fn require_stdout(verb: &str) -> Result<(), Rejected> {
    if pi_session_fs::stdout_is_open() {
        Ok(())
    } else {
        Err(Rejected(format!(
            "standard output is closed: {verb} prints the path of the session it writes; nothing was written"
        )))
    }
}

/// Prints the path of the session just written; failing to is an error that says the file
/// is there.
fn print_path(path: &std::path::Path) -> Result<(), Rejected> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", path.display())
        .and_then(|()| out.flush())
        .map_err(|e| {
            Rejected(format!(
                "{}: the session was written, but its path could not be printed: {e}",
                display::path(path)
            ))
        })
}

/// Creates the session file now (pi waits for the first message) and prints its path.
pub(crate) fn new(args: NewArgs) -> Result<(), Rejected> {
    require_stdout("new")?;
    let mut config = WriterConfig::default().profile(args.pi.write_profile());
    if let Some(id) = args.id {
        config = config.session_id(id);
    }
    let mut writer =
        SessionWriter::create(&args.cwd, args.session_dir.as_deref(), config).map_err(rejected)?;
    writer.write_now().map_err(rejected)?;
    match writer.path() {
        Some(path) => print_path(path),
        None => Err(Rejected("no file was written".into())),
    }
}

/// One entry of standard input.
struct Input {
    line: usize,
    value: json::JsValue,
}

/// Reads the entries of `input` (NDJSON, blank lines skipped), at most `max` bytes.
fn read_entries(input: &mut dyn BufRead, max: u64) -> Result<Vec<Input>, Rejected> {
    let mut out = Vec::new();
    let mut line = Vec::new();
    let mut read = 0u64;
    for n in 1.. {
        line.clear();
        let got = input
            .take(max.saturating_sub(read) + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| {
                Rejected(format!(
                    "cannot read the entries on stdin: {e}; nothing was written"
                ))
            })?;
        if got == 0 {
            break;
        }
        read += got as u64;
        if read > max {
            return Err(Rejected(format!(
                "<stdin>: more than {max} bytes of entries (--max-input-size); nothing was written. \
                 Append them in several runs, or raise --max-input-size"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        if text.trim().is_empty() {
            continue;
        }
        let value = json::parse(text).map_err(|e| {
            let column = text[..e.offset.min(text.len())].chars().count() + 1;
            Rejected(format!(
                "<stdin>:{n}:{column}: {}; each line of the input is one entry as a JSON object; nothing was written",
                e.message()
            ))
        })?;
        out.push(Input { line: n, value });
    }
    Ok(out)
}

/// Appends the entries of standard input (NDJSON): under the file's lock, each completed
/// against the file as it is then (ids, parents, times) and checked with the validator in
/// the context of the branch it joins; any problem, a message naming the input line, and
/// nothing is written. The file is never held in memory: it is read in small pieces, and
/// the lines the check looks at are read again.
pub(crate) fn append(args: AppendArgs) -> Result<(), Rejected> {
    let name = display::path(&args.file);
    let inputs = read_entries(&mut std::io::stdin().lock(), args.max_input_size)?;
    let mut target = FileAppend::lock(&args.file, args.fsync).map_err(|e| {
        Rejected(match e {
            WriteError::File(FileError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                format!("{name}: no such file; `pi-session new` makes a session to append to; nothing was written")
            }
            e => format!("{e}; nothing was written"),
        })
    })?;
    for note in target.notes() {
        eprintln!("pi-session: warning: {name}: {note}");
    }
    if inputs.is_empty() {
        return Ok(());
    }
    let values: Vec<json::JsValue> = inputs.iter().map(|i| i.value.clone()).collect();
    for _ in 0..8 {
        let input = crate::input::Input::open(&args.file)
            .map_err(|e| Rejected(format!("{name}: cannot read it: {e}; nothing was written")))?;
        let bytes = input.bytes();
        let session = Session::loader(args.pi).load_input(&input).map_err(|e| {
            Rejected(format!(
                "{name}: not a pi session ({e}); nothing was written"
            ))
        })?;
        let plan = target
            .plan(&session, bytes.len() as u64, &values)
            .map_err(|e| {
                let line = inputs.get(e.index).map_or(0, |i| i.line);
                match e.error {
                    e @ WriteError::OldVersion { .. } => Rejected(format!("{e}")),
                    e => Rejected(format!(
                        "<stdin>:{line}: {e} (appending to {name}); nothing was written"
                    )),
                }
            })?;
        drop(session);
        check(&plan, &inputs, args.pi)?;
        match target.commit(&plan).map_err(|e| {
            Rejected(if e.wrote_nothing() {
                format!("{e}; nothing was written")
            } else {
                e.to_string()
            })
        })? {
            Commit::Appended => return Ok(()),
            // A writer without a lock (a live pi) appended since the file was read: the
            // entries are completed again against what is there now.
            Commit::Changed => continue,
        }
    }
    Err(Rejected(format!(
        "{name}: another program keeps appending to it (a live pi?); nothing was written. Try again when it is done"
    )))
}

/// The validator's errors on the new lines of `plan`, as `<stdin>:LINE:` messages.
fn check(plan: &Plan, inputs: &[Input], pi: PiVersion) -> Result<(), Rejected> {
    let report = validate(
        plan.check_document(),
        &Options {
            pi,
            ..Options::default()
        },
    );
    let problems: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter_map(|d| {
            let at = d.location.as_ref()?;
            let input = inputs.get(at.line.checked_sub(plan.context_lines() + 1)?)?;
            Some(format!(
                "<stdin>:{}: {} {} ({})",
                input.line, d.code, d.message, d.help
            ))
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Rejected(format!(
            "{}\nnothing was written",
            problems.join("\n")
        )))
    }
}

/// Writes the branch ending at `--leaf` as a session of its own and prints its path.
pub(crate) fn fork(args: ForkArgs) -> Result<(), Rejected> {
    if args.file.as_os_str() == "-" {
        return Err(Rejected(
            "fork reads a session file, not standard input (`-`): give its path; nothing was written".into(),
        ));
    }
    if args.out.as_ref().is_some_and(|o| o.as_os_str() == "-") {
        return Err(Rejected(
            "fork writes a new session file, not standard output (`-o -`): give a path, or leave -o out for pi's name next to FILE; nothing was written".into(),
        ));
    }
    require_stdout("fork")?;
    let config = WriterConfig::default().profile(args.pi.write_profile());
    let mut writer = SessionWriter::load(&args.file, config).map_err(rejected)?;
    // The writer's file errors name their file; the others ("Entry X not found") get FILE's.
    let name = display::path(&args.file);
    let named = |e: WriteError| match e {
        e @ (WriteError::File(_) | WriteError::NotASession { .. }) => Rejected(e.to_string()),
        e => Rejected(format!("{name}: {e}; nothing was written")),
    };
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
                .map_err(named)?
        }
        None => writer
            .create_branched_session(&args.leaf)
            .map_err(named)?
            .ok_or_else(|| Rejected("no file was written".into()))?,
    };
    print_path(&path)
}
