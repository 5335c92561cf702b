//! `--format github`: GitHub Actions workflow commands, which the runner turns into
//! annotations on the files of a pull request:
//! `::error file=F,line=L,col=C,endColumn=E,title=PS0001::message`.
//!
//! Severities map to `::error`, `::warning` and `::notice`. As GitHub requires, the message
//! escapes `%`, CR and LF (`%25`, `%0D`, `%0A`), and property values also `:` and `,`
//! (`%3A`, `%2C`). The message is the diagnostic's, then the help on a second line.

use pi_session_validate::{Diagnostic, FileReport, Severity};
use std::fmt::Write;

/// Escapes the message of a workflow command.
pub(super) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
pub(super) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// The workflow commands of one file; `end_columns[j]` is the end column of diagnostic `j`.
pub(super) fn file(report: &FileReport, end_columns: &[Option<usize>]) -> String {
    let path = escape_property(&report.path);
    let mut out = String::new();
    if let Some(error) = &report.read_error {
        let _ = writeln!(
            out,
            "::error file={path},title={}::{}",
            escape_property("cannot read"),
            escape_data(&crate::display::text(error, super::human::MESSAGE_MAX))
        );
    }
    for (j, d) in report.diagnostics.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}",
            annotation(&path, d, end_columns.get(j).copied().flatten())
        );
    }
    out
}

fn annotation(path: &str, d: &Diagnostic, end_column: Option<usize>) -> String {
    let mut properties = format!("file={path}");
    if let Some(l) = d.location {
        let _ = write!(properties, ",line={},col={}", l.line, l.column);
        if let Some(end) = end_column {
            let _ = write!(properties, ",endColumn={end}");
        }
    }
    let _ = write!(properties, ",title={}", escape_property(d.code.as_str()));
    format!(
        "::{} {properties}::{}",
        command(d.severity),
        escape_data(&format!(
            "{}\nhelp: {}",
            crate::display::text(&d.message, super::human::MESSAGE_MAX),
            d.help
        ))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_github() {
        assert_eq!(escape_data("50%\r\nx: a, b"), "50%25%0D%0Ax: a, b");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
