//! `pi-session search PATTERN [PATH…]`: a regular expression over the texts of sessions
//! (`pi_session_format::search`, which matches: message text and thinking, tool calls, tool
//! results, summaries), files on every core. ripgrep's conventions: one line per match with the file, line, entry id
//! and role, the match highlighted in a snippet, `-l` for file names only, `-i`, `--color`,
//! exit 0 when something matched, 1 when nothing did, 2 on an error.

use crate::display;
use crate::validate::targets::{self, Target};
use clap::{Args, ValueEnum};
use pi_session_format::search::{self, Pattern, Role, Wanted};
use pi_session_format::{Dialect, PiVersion, Session};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// `pi-session search`.
#[derive(Args)]
pub(crate) struct SearchArgs {
    /// A regular expression (Rust's `regex` syntax).
    pattern: String,
    /// Session files or directories (every `*.jsonl` under them); default: pi's session
    /// directory.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Only the texts of this role.
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// Match without regard to case.
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Print only the names of files with a match.
    #[arg(short = 'l', long)]
    files_with_matches: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// When to color the output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// Whose reading rules decide the branch pi resumes (`*` in the output).
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// Read every file as `pi`'s or `omp`'s (oh-my-pi); default: each file's own (an omp
    /// file's title slot is not a session line; see docs/dialects.md).
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<Dialect>,
    /// Follow symbolic links to directories while walking a directory.
    #[arg(long)]
    follow: bool,
}

/// `--role`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RoleArg {
    /// User messages.
    User,
    /// Assistant messages: text, thinking, tool calls.
    Assistant,
    /// Tool results and bash executions.
    Tool,
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// `FILE:LINE:ID:ROLE: snippet`, one match per line (`*` after the role: on the branch
    /// pi resumes).
    Human,
    /// One JSON object per match (JSON Lines).
    Json,
}

/// `--color`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Color {
    /// When standard output is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// One line of `s`, control characters escaped.
fn clean(s: &str) -> String {
    display::text(&s.replace(['\n', '\r', '\t'], " "), usize::MAX)
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Role {
        match role {
            RoleArg::User => Role::User,
            RoleArg::Assistant => Role::Assistant,
            RoleArg::Tool => Role::Tool,
        }
    }
}

/// Runs `pi-session search`.
pub(crate) fn main(args: SearchArgs) -> ExitCode {
    let pattern = match Pattern::new(&args.pattern, args.ignore_case) {
        Ok(pattern) => pattern,
        Err(e) => {
            eprintln!("pi-session: error: the pattern is not a regular expression: {e}");
            return ExitCode::from(2);
        }
    };
    let collected = match targets::collect_said(
        &args.paths,
        targets::Walk {
            follow: args.follow,
            include_archived: false,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let pi = args.pi;
    let results: Vec<(&Target, Result<Vec<search::Match>, String>)> = collected
        .targets
        .par_iter()
        .map(|target| {
            let found = (|| {
                let input = target.open().map_err(|e| e.to_string())?;
                let loader = Session::loader(pi).with_dialect(args.dialect);
                // `-l` needs one match of a file, not all of them.
                let wanted = if args.files_with_matches {
                    Wanted::First
                } else {
                    Wanted::All
                };
                let role = args.role.map(Role::from);
                let hits = search::in_bytes(loader, input.bytes(), &pattern, role, wanted)
                    .map_err(|e| e.to_string())?;
                input.verify().map_err(|e| e.to_string())?;
                Ok(hits)
            })();
            (target, found)
        })
        .collect();
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal(),
    };
    let paint = |style: anstyle::Style, s: &str| {
        if color {
            format!("{}{s}{}", style.render(), style.render_reset())
        } else {
            s.to_owned()
        }
    };
    let file_style = anstyle::AnsiColor::Magenta.on_default();
    let match_style = anstyle::AnsiColor::Red.on_default().bold();
    let (mut matched, mut failed) = (false, false);
    let mut out = String::new();
    for (target, result) in results {
        let name = target.display();
        let hits = match result {
            Ok(hits) => hits,
            Err(error) => {
                eprintln!("pi-session: {name}: {}", display::text(&error, 300));
                failed = true;
                continue;
            }
        };
        if hits.is_empty() {
            continue;
        }
        if args.files_with_matches {
            matched = true;
            out.push_str(&paint(file_style, &name));
            out.push('\n');
            continue;
        }
        matched = true;
        for h in hits {
            let id = h.id.as_deref().map_or_else(|| "-".to_owned(), clean);
            match args.format {
                Format::Human => out.push_str(&format!(
                    "{}:{}:{id}:{}{}: {}{}{}\n",
                    paint(file_style, &name),
                    h.line,
                    h.role.as_str(),
                    if h.on_path { "*" } else { "" },
                    clean(&h.before),
                    paint(match_style, &clean(&h.matched)),
                    clean(&h.after)
                )),
                Format::Json => {
                    let mut w = pi_session_format::json::JsonWriter::new();
                    w.begin_object();
                    w.key("path").string(&name);
                    w.key("line").uint(h.line as u64);
                    match &h.id {
                        Some(id) => w.key("id").string(id),
                        None => w.key("id").null(),
                    };
                    w.key("role").string(h.role.as_str());
                    w.key("field").string(h.field);
                    w.key("onPath").bool(h.on_path);
                    w.key("before").string(&clean(&h.before));
                    w.key("match").string(&clean(&h.matched));
                    w.key("after").string(&clean(&h.after));
                    w.end_object();
                    out.push_str(w.as_str());
                    out.push('\n');
                }
            }
        }
    }
    if let Err(code) = crate::print_report(&out) {
        return code;
    }
    if failed || !collected.empty.is_empty() {
        ExitCode::from(2)
    } else if matched {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
