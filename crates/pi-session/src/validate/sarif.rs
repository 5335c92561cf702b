//! `--format sarif`: a SARIF 2.1.0 log (one run) for code-scanning tools such as GitHub's.
//!
//! The driver's rules are the whole catalogue (`Code::ALL`), so a result's `ruleIndex` is the
//! code's position in it. Columns are Unicode code points (`columnKind`), as the library counts
//! them; regions also carry the byte offset and length. Problems of a whole file have no region.
//! Files that could not be read are tool execution notifications. URIs keep the raw bytes of
//! file names, percent-encoded (`crate::display::uri`). Summaries of diagnostics that are
//! only counted carry `omitted` in their properties.

#[cfg(test)]
use pi_session_validate::FileReport;
use pi_session_validate::{Code, Diagnostic, Severity};
use serde_json::{Value, json};

/// The SARIF level of a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// One rule per code of the catalogue.
fn rules() -> Vec<Value> {
    Code::ALL
        .iter()
        .map(|code| {
            let info = code.info();
            json!({
                "id": info.code,
                "name": info.name,
                "shortDescription": {"text": info.title},
                "fullDescription": {"text": info.description.trim_end()},
                "help": {"text": info.help},
                "defaultConfiguration": {"level": level(info.severity)},
                "properties": {"pi": info.pi},
            })
        })
        .collect()
}

/// One result; `end_column` is the column just after the span, when it is known.
pub(super) fn result(uri: &str, d: &Diagnostic, end_column: Option<usize>) -> Value {
    let index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
    let mut location = json!({"artifactLocation": {"uri": uri}});
    if let Some(l) = d.location {
        let mut region = json!({
            "startLine": l.line,
            "startColumn": l.column,
            "byteOffset": l.offset,
            "byteLength": l.length,
        });
        if let Some(end) = end_column {
            region["endColumn"] = json!(end);
        }
        location["region"] = region;
    }
    let mut properties = json!({"pi": d.pi});
    if let Some(omitted) = d.omitted {
        properties["omitted"] = json!(omitted);
    }
    if let Some(pointer) = &d.pointer {
        properties["pointer"] = json!(pointer);
    }
    if let Some(id) = &d.entry_id {
        properties["entryId"] = json!(id);
    }
    json!({
        "ruleId": d.code.as_str(),
        "ruleIndex": index,
        "level": level(d.severity),
        "message": {"text": d.message},
        "locations": [{"physicalLocation": location}],
        "properties": properties,
    })
}

/// The `$schema` of the log.
pub(super) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The run's `tool`: pi-session and every rule of the catalogue.
pub(super) fn tool(version: &str) -> Value {
    json!({"driver": {
        "name": "pi-session",
        "version": version,
        "semanticVersion": version,
        "informationUri": env!("CARGO_PKG_REPOSITORY"),
        "rules": rules(),
    }})
}

/// The tool execution notification of a file that could not be read.
pub(super) fn notification(uri: &str, path: &str, error: &str) -> Value {
    json!({
        "level": "error",
        "message": {"text": format!("cannot read {path}: {error}")},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
    })
}

/// The run's `invocations`: successful when every file could be read.
pub(super) fn invocations(notifications: Vec<Value>) -> Value {
    json!([{
        "executionSuccessful": notifications.is_empty(),
        "toolExecutionNotifications": notifications,
    }])
}

/// The SARIF log of `files` at once (the output is streamed; this is its reference);
/// `uris[i]` is the URI of file `i`, `end_columns[i][j]` the end column of its diagnostic
/// `j`, when known.
#[cfg(test)]
pub(super) fn log(
    files: &[FileReport],
    uris: &[String],
    end_columns: &[Vec<Option<usize>>],
    version: &str,
) -> Value {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for ((file, ends), uri) in files.iter().zip(end_columns).zip(uris) {
        if let Some(error) = &file.read_error {
            notifications.push(notification(uri, &file.path, error));
        }
        for (j, d) in file.diagnostics.iter().enumerate() {
            results.push(result(uri, d, ends.get(j).copied().flatten()));
        }
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": tool(version),
            "invocations": invocations(notifications),
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// The column just after the span of `d` (characters of the span decoded with replacement
/// characters, as the library counts columns); `None` for file-level diagnostics.
pub(super) fn end_column(bytes: &[u8], d: &Diagnostic) -> Option<usize> {
    let l = d.location?;
    let start = l.offset.min(bytes.len());
    let end = l.offset.saturating_add(l.length).min(bytes.len());
    let span = &bytes[start..end];
    // A span that runs past the end of its line ends at the line's end.
    let span = &span[..span.iter().position(|&b| b == b'\n').unwrap_or(span.len())];
    Some(l.column + String::from_utf8_lossy(span).chars().count())
}
