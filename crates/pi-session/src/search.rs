//! `pi-session search PATTERN [PATH…]`: a regular expression (the `regex` crate) over the texts
//! of sessions (`pi_session_format::search`): message text and thinking, tool calls, tool
//! results, summaries. ripgrep's conventions: one line per match with the file, line, entry id
//! and role, the match highlighted in a snippet, `-l` for file names only, `-i`, `--color`,
//! exit 0 when something matched, 1 when nothing did, 2 on an error.

use crate::input::Input;
use crate::validate::targets::{self, Target};
use crate::{Pi, display};
use clap::{Args, ValueEnum};
use pi_session_format::search::{self, Role, texts_where};
use pi_session_format::{PiVersion, Session};
use rayon::prelude::*;
use regex::{Regex, RegexBuilder};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// `pi-session search`.
#[derive(Args)]
pub struct SearchArgs {
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
    #[arg(long, value_enum, default_value_t = Pi::V1_5)]
    pi: Pi,
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

/// One match.
struct Hit {
    line: usize,
    id: Option<String>,
    role: Role,
    field: &'static str,
    on_path: bool,
    before: String,
    matched: String,
    after: String,
}

/// Up to `n` characters of `s`, one line, control characters escaped.
fn clean(s: &str) -> String {
    display::text(&s.replace(['\n', '\r', '\t'], " "), usize::MAX)
}

/// Whether a line in which `pattern` does not occur raw cannot hold a match once decoded: no
/// look-around (`^`, `$`, `\b` see the JSON around and inside escapes differently) and nothing
/// that matches a character JSON escapes (`"`, `\`, control characters). The lines that
/// [`must_decode`] names are always decoded.
fn raw_prefilter_is_sound(pattern: &str, ignore_case: bool) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .build()
        .parse(pattern)
    else {
        return false;
    };
    let escaped = |c: u32| c < 0x20 || c == u32::from('"') || c == u32::from('\\');
    // Whether the range `start..=end` holds a character JSON escapes.
    let covers = |start: u32, end: u32| {
        start < 0x20
            || [u32::from('"'), u32::from('\\')]
                .iter()
                .any(|&c| start <= c && c <= end)
    };
    let mut stack = vec![&hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Look(_) => return false,
            HirKind::Class(Class::Unicode(class)) => {
                if class
                    .ranges()
                    .iter()
                    .any(|r| covers(u32::from(r.start()), u32::from(r.end())))
                {
                    return false;
                }
            }
            HirKind::Class(Class::Bytes(class)) => {
                if class
                    .ranges()
                    .iter()
                    .any(|r| covers(u32::from(r.start()), u32::from(r.end())))
                {
                    return false;
                }
            }
            HirKind::Literal(lit) => {
                if lit.0.iter().any(|&b| escaped(u32::from(b))) {
                    return false;
                }
            }
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs.iter()),
            HirKind::Empty => {}
        }
    }
    true
}

/// Whether a line's texts can read otherwise than its raw text even for a pattern the raw
/// prefilter suits: a `\u` escape (any character) or a `\/` (a slash, which `JSON.stringify`
/// never escapes). A tool call's searched text is made up too (`name arguments`, the
/// arguments written again: other spacing, numbers and key order than the line's): those
/// are read on their own ([`search::tool_call_texts`]) when the line does not match raw.
fn must_decode(line: &str) -> bool {
    line.contains("\\u") || line.contains("\\/")
}

fn hits_in(
    session: &Session<'_>,
    regex: &Regex,
    prefilter: bool,
    role: Option<RoleArg>,
) -> Vec<Hit> {
    let wanted = |r: Role| match role {
        None => true,
        Some(RoleArg::User) => r == Role::User,
        Some(RoleArg::Assistant) => r == Role::Assistant,
        Some(RoleArg::Tool) => r == Role::Tool,
    };
    let mut hits = Vec::new();
    let keep = |line: &str| {
        !prefilter
            || must_decode(line)
            || regex.is_match(line)
            || (line.contains("\"toolCall\"")
                && search::tool_call_texts(line)
                    .is_none_or(|t| t.iter().any(|t| regex.is_match(t))))
    };
    for t in texts_where(session, &keep)
        .into_iter()
        .filter(|t| wanted(t.role))
    {
        for m in regex.find_iter(&t.text) {
            let before: String = {
                let head = &t.text[..m.start()];
                let n = head.chars().count();
                head.chars().skip(n.saturating_sub(40)).collect()
            };
            let after: String = t.text[m.end()..].chars().take(40).collect();
            hits.push(Hit {
                line: t.line,
                id: t.id.clone(),
                role: t.role,
                field: t.field,
                on_path: t.on_path,
                before: clean(&before),
                matched: clean(m.as_str()),
                after: clean(&after),
            });
        }
    }
    hits
}

/// Runs `pi-session search`.
pub fn main(args: SearchArgs) -> ExitCode {
    let regex = match RegexBuilder::new(&args.pattern)
        .case_insensitive(args.ignore_case)
        .build()
    {
        Ok(regex) => regex,
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
    let pi: PiVersion = args.pi.into();
    let prefilter = raw_prefilter_is_sound(&args.pattern, args.ignore_case);
    let results: Vec<(&Target, Result<Vec<Hit>, String>)> = collected
        .targets
        .par_iter()
        .map(|target| {
            let found = (|| {
                let input = match target {
                    Target::Stdin => Input::open("-".as_ref()),
                    Target::File(path) => Input::open(path),
                }
                .map_err(|e| e.to_string())?;
                let session = Session::from_bytes(input.bytes(), pi).map_err(|e| e.to_string())?;
                let hits = hits_in(&session, &regex, prefilter, args.role);
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
        matched = true;
        if args.files_with_matches {
            out.push_str(&paint(file_style, &name));
            out.push('\n');
            continue;
        }
        for h in hits {
            let id = h.id.as_deref().map_or_else(|| "-".to_owned(), clean);
            match args.format {
                Format::Human => out.push_str(&format!(
                    "{}:{}:{id}:{}{}: {}{}{}\n",
                    paint(file_style, &name),
                    h.line,
                    h.role.as_str(),
                    if h.on_path { "*" } else { "" },
                    h.before,
                    paint(match_style, &h.matched),
                    h.after
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
                    w.key("before").string(&h.before);
                    w.key("match").string(&h.matched);
                    w.key("after").string(&h.after);
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
