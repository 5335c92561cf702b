//! The human formats of `pi-session validate`: rustc-style snippets (`annotate-snippets`)
//! with each file's two verdicts, or with `--quiet` one line per problem
//! (`FILE:LINE:COL: CODE severity: message`).
//!
//! Lines of a session can be megabytes long, so a snippet shows a window of at most
//! [`CONTEXT_CHARS`] characters on each side of the span and [`SPAN_CHARS`] of the span itself;
//! control characters are shown as their Unicode pictures (`␍` for CR).
//!
//! Colour (`anstyle` styles, through `annotate-snippets`' styled renderer for the snippets)
//! only where the caller says so: `--color` is decided once, in the parent module.

use crate::display;
use annotate_snippets::{AnnotationKind, Level, Origin, Renderer, Snippet};
use anstyle::{AnsiColor, Effects, Style};
use pi_session_format::Dialect;
use pi_session_validate::{
    Diagnostic, FileReport, Location, PiEffect, Severity, Summary, VerdictMode,
};
use std::fmt::Write;
use std::ops::Range;

/// Characters shown on each side of a span.
pub(super) const CONTEXT_CHARS: usize = 80;
/// Characters of the span shown at most.
pub(super) const SPAN_CHARS: usize = 120;

/// What pi does, as the `= pi:` note says it.
pub(super) fn effect_note(effect: PiEffect) -> &'static str {
    match effect {
        PiEffect::None => "reads this as written",
        PiEffect::Ignored => "keeps this but ignores it",
        PiEffect::Altered => {
            "loads the file, but what it builds from it differs from what was written"
        }
        PiEffect::Hidden => {
            "hides the earlier entry of this id: /tree and every context leave it out"
        }
        PiEffect::Dropped => {
            "drops this line when loading; its next rewrite of the file loses it for good"
        }
        PiEffect::Rewritten => {
            "migrates the file and rewrites it in place when it opens it (no backup)"
        }
        PiEffect::Truncated => "overwrites the whole file with a new, empty session",
        PiEffect::Crash => "throws while loading the file or building its context",
        PiEffect::Hang => "loops forever while building the context",
        PiEffect::Unreadable => "cannot read the file at all",
    }
}

/// Renders one file: a snippet per diagnostic, then the verdict line (and a blank line after
/// a file with diagnostics); the notes and the verdict say what `dialect`'s program (pi, or
/// omp for a file checked by its rules) does.
pub(super) fn file(
    path: &str,
    bytes: &[u8],
    report: &FileReport,
    color: bool,
    dialect: Dialect,
) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for d in &report.diagnostics {
        out.push_str(&render(&renderer, path, bytes, d, dialect.name()));
        out.push_str("\n\n");
    }
    out.push_str(&verdict_line(path, report, color, dialect.name()));
    out.push('\n');
    if !report.diagnostics.is_empty() {
        out.push('\n');
    }
    out
}

/// A file that could not be read.
pub(super) fn unreadable(path: &str, error: &str, color: bool) -> String {
    format!(
        "{}: cannot read {path}: {}\n\n",
        paint("error", ERROR, color),
        one_line(error)
    )
}

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// One diagnostic, rendered.
fn render(
    renderer: &Renderer,
    path: &str,
    bytes: &[u8],
    d: &Diagnostic,
    program: &'static str,
) -> String {
    let message = one_line(&d.message);
    let title = level(d.severity)
        .primary_title(message.as_str())
        .id(d.code.as_str());
    let notes = [
        Level::HELP.message(d.help.as_str()),
        Level::NOTE
            .with_name(program)
            .message(effect_note(d.pi).to_string()),
    ];
    let Some(location) = d.location else {
        return renderer.render(&[title.element(Origin::path(path)).elements(notes)]);
    };
    let (text, span) = window(bytes, &location);
    let shown_column = text[..span.start].chars().count() + 1;
    let group = title
        .element(
            Snippet::source(text.as_str())
                .line_start(location.line)
                .path(path)
                .annotation(AnnotationKind::Primary.span(span)),
        )
        .elements(notes);
    let rendered = renderer.render(&[group]);
    // The snippet's `--> PATH:LINE:COL` counts the column in the window; where the window
    // does not start at the line's start, put the column of the line.
    if shown_column == location.column {
        return rendered;
    }
    let shown = format!("{path}:{}:{shown_column}", location.line);
    let real = format!("{path}:{}:{}", location.line, location.column);
    rendered.replacen(&shown, &real, 1)
}

/// The text shown for the line of `location` and the span in it (byte range of the text).
pub(super) fn window(bytes: &[u8], location: &Location) -> (String, Range<usize>) {
    let offset = location.offset.min(bytes.len());
    let line_start = memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let line_end = bytes[offset..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| offset + i);
    let span_end = offset.saturating_add(location.length).min(line_end);
    // Four bytes per character at most, one more for a character cut in two.
    let reach = |chars: usize| chars * 4 + 4;

    let before_from = line_start.max(offset.saturating_sub(reach(CONTEXT_CHARS)));
    let before = String::from_utf8_lossy(&bytes[before_from..offset]);
    let before_chars = before.chars().count();
    let skip = before_chars.saturating_sub(CONTEXT_CHARS);
    let mut text = String::new();
    if skip > 0 || before_from > line_start {
        text.push('…');
    }
    push_visible(&mut text, before.chars().skip(skip));

    let span_to = span_end.min(offset.saturating_add(reach(SPAN_CHARS)));
    let span_text = String::from_utf8_lossy(&bytes[offset..span_to]);
    let start = text.len();
    push_visible(&mut text, span_text.chars().take(SPAN_CHARS));
    if span_text.chars().nth(SPAN_CHARS).is_some() || span_to < span_end {
        text.push('…');
    }
    let span = start..text.len();

    let after_to = line_end.min(span_end.saturating_add(reach(CONTEXT_CHARS)));
    let after = String::from_utf8_lossy(&bytes[span_end..after_to]);
    push_visible(&mut text, after.chars().take(CONTEXT_CHARS));
    if after.chars().nth(CONTEXT_CHARS).is_some() || after_to < line_end {
        text.push('…');
    }
    (text, span)
}

/// Appends `chars`, control characters as their Unicode pictures (so that a CR or a NUL
/// is seen, and takes one column).
fn push_visible(out: &mut String, chars: impl Iterator<Item = char>) {
    for c in chars {
        out.push(match c {
            '\t' => '\t',
            '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('�'),
            '\x7f' => '␡',
            c => c,
        });
    }
}

fn memrchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().rposition(|&b| b == needle)
}

/// `PATH: strict: yes, pi-loadable: no — pi would drop line 3, …` (`program`: who would).
pub(super) fn verdict_line(path: &str, report: &FileReport, color: bool, program: &str) -> String {
    let Some(verdict) = report.verdict else {
        return format!("{path}: {}", paint("unreadable", ERROR, color));
    };
    let yes_no = |ok: bool| {
        if ok {
            paint("yes", OK, color)
        } else {
            paint("no", ERROR, color)
        }
    };
    let mut line = format!(
        "{}: strict: {}, pi-loadable: {}",
        paint(path, BOLD, color),
        yes_no(verdict.strict),
        yes_no(verdict.pi_loadable)
    );
    if !verdict.pi_loadable {
        let consequences = consequences(&report.diagnostics);
        if !consequences.is_empty() {
            let _ = write!(line, " — {program} would {}", consequences.join(", "));
        }
    }
    if verdict.pi_loadable && !verdict.pi_resumes {
        let _ = write!(
            line,
            " — but {program} does not resume the conversation the file holds (PS0226)"
        );
    }
    line
}

/// What pi would do to the file, from its diagnostics that break loading.
fn consequences(diagnostics: &[Diagnostic]) -> Vec<String> {
    // The lines of the listed diagnostics, and how many more the summaries count.
    let lines_of = |effect: PiEffect| -> (Vec<usize>, usize) {
        let mut lines: Vec<usize> = diagnostics
            .iter()
            .filter(|d| d.pi == effect && d.omitted.is_none())
            .filter_map(|d| d.location.map(|l| l.line))
            .collect();
        lines.dedup();
        let omitted = diagnostics
            .iter()
            .filter(|d| d.pi == effect)
            .filter_map(|d| d.omitted)
            .sum();
        (lines, omitted)
    };
    let has = |effect: PiEffect| diagnostics.iter().any(|d| d.pi == effect);
    let mut out = Vec::new();
    if has(PiEffect::Unreadable) {
        out.push("not open the file".to_string());
    }
    if has(PiEffect::Truncated) {
        out.push("overwrite the file with an empty session".to_string());
    }
    for (effect, verb) in [
        (PiEffect::Crash, "crash on"),
        (PiEffect::Hang, "hang on"),
        (PiEffect::Dropped, "drop"),
        (
            PiEffect::Hidden,
            "hide the earlier entry of the id reused on",
        ),
    ] {
        if has(effect) {
            let (lines, omitted) = lines_of(effect);
            out.push(format!("{verb} {}", line_list(&lines, omitted)));
        }
    }
    if has(PiEffect::Rewritten) {
        out.push("rewrite the file".to_string());
    }
    out
}

/// `line 3`, `lines 3 and 5`, `lines 3, 5, 7 and 4 more`; `omitted` lines (of diagnostics
/// only counted) count among the more.
fn line_list(lines: &[usize], omitted: usize) -> String {
    const SHOWN: usize = 5;
    let more = lines.len().saturating_sub(SHOWN) + omitted;
    match lines {
        [] if omitted > 0 => format!("{omitted} lines"),
        [] => "the file".to_string(),
        [one] if more == 0 => format!("line {one}"),
        _ => {
            let shown: Vec<String> = lines.iter().take(SHOWN).map(usize::to_string).collect();
            if more > 0 {
                format!("lines {} and {more} more", shown.join(", "))
            } else {
                let (last, rest) = shown.split_last().expect("two or more");
                format!("lines {} and {last}", rest.join(", "))
            }
        }
    }
}

/// `--quiet`: `FILE:LINE:COL: CODE severity: message`, one line per diagnostic.
pub(super) fn quiet(path: &str, report: &FileReport) -> String {
    let mut out = String::new();
    if let Some(error) = &report.read_error {
        let _ = writeln!(out, "{path}: error: cannot read: {}", one_line(error));
    }
    for d in &report.diagnostics {
        let _ = match d.location {
            Some(l) => write!(out, "{path}:{}:{}: ", l.line, l.column),
            None => write!(out, "{path}: "),
        };
        let _ = writeln!(out, "{} {}: {}", d.code, d.severity, one_line(&d.message));
    }
    out
}

/// A message on one line: control characters escaped, at most [`MESSAGE_MAX`] bytes.
fn one_line(text: &str) -> String {
    display::text(text, MESSAGE_MAX)
}

/// The longest message shown (the library already cuts messages that quote a file's text).
pub(super) const MESSAGE_MAX: usize = 2000;

/// The last line: `N files: V valid, I invalid (verdict); E errors, W warnings`.
pub(super) fn summary(summary: &Summary, mode: VerdictMode, color: bool) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mode = match mode {
        VerdictMode::PiLoadable => "pi-loadable",
        VerdictMode::Strict => "strict",
        VerdictMode::SchemaOnly => "schema-only",
    };
    let invalid = format!("{} invalid", summary.invalid);
    let mut line = format!(
        "{}: {} valid, {} ({mode})",
        plural(summary.files, "file"),
        summary.valid,
        if summary.invalid > 0 {
            paint(&invalid, ERROR, color)
        } else {
            invalid
        },
    );
    if summary.unreadable > 0 {
        let _ = write!(line, ", {} unreadable", summary.unreadable);
    }
    let _ = write!(
        line,
        "; {}, {}",
        plural(summary.errors, "error"),
        plural(summary.warnings, "warning")
    );
    if summary.infos > 0 {
        let _ = write!(line, ", {}", plural(summary.infos, "info"));
    }
    line
}

const ERROR: Style = AnsiColor::BrightRed.on_default().effects(Effects::BOLD);
const OK: Style = AnsiColor::BrightGreen.on_default().effects(Effects::BOLD);
const BOLD: Style = Style::new().effects(Effects::BOLD);

fn paint(text: &str, style: Style, color: bool) -> String {
    if color {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(bytes: &[u8], offset: usize, length: usize) -> (String, String) {
        let location = Location {
            line: 1,
            column: 1,
            offset,
            length,
        };
        let (text, span) = window(bytes, &location);
        (text.clone(), text[span].to_string())
    }

    #[test]
    fn windows_of_short_lines_are_whole() {
        let bytes = "ab\n{\"é\":x}\nzz".as_bytes();
        let (text, span) = shown(bytes, 3 + 6, 1);
        assert_eq!(text, "{\"é\":x}");
        assert_eq!(span, "x");
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let mut line = "a".repeat(1000);
        line.push('X');
        line.push_str(&"b".repeat(1000));
        let (text, span) = shown(line.as_bytes(), 1000, 1);
        assert_eq!(span, "X");
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert_eq!(text.chars().count(), CONTEXT_CHARS * 2 + 3);
        let (_, span) = shown(line.as_bytes(), 0, 2001);
        assert_eq!(span.chars().count(), SPAN_CHARS + 1);
    }

    #[test]
    fn control_characters_are_visible() {
        let (text, span) = shown(b"{}\r\n", 2, 1);
        assert_eq!((text.as_str(), span.as_str()), ("{}␍", "␍"));
    }

    #[test]
    fn line_lists() {
        assert_eq!(line_list(&[3], 0), "line 3");
        assert_eq!(line_list(&[3, 5], 0), "lines 3 and 5");
        assert_eq!(
            line_list(&[1, 2, 3, 4, 5, 6, 7], 0),
            "lines 1, 2, 3, 4, 5 and 2 more"
        );
        assert_eq!(line_list(&[3], 10), "lines 3 and 10 more");
        assert_eq!(
            line_list(&[1, 2, 3, 4, 5, 6, 7], 993),
            "lines 1, 2, 3, 4, 5 and 995 more"
        );
    }
}
