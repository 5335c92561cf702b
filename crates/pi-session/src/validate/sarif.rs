//! `--format sarif`: a SARIF 2.1.0 log (one run) for code-scanning tools such as GitHub's.
//!
//! The driver's rules are the whole catalogue (`Code::ALL`), so a result's `ruleIndex` is the
//! code's position in it. Columns are Unicode code points (`columnKind`), as the library counts
//! them; regions also carry the byte offset and length. Problems of a whole file have no region.
//! Files that could not be read are tool execution notifications.

use pi_session_format::validate::{Code, Diagnostic, FileReport, Severity};
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

/// A file's path as a relative URI reference: `/` separators, relative to the current
/// directory when it is under it, and percent-encoded outside the unreserved characters.
pub fn uri(path: &str) -> String {
    let mut path = path.replace('\\', "/");
    if let Ok(cwd) = std::env::current_dir()
        && let Some(cwd) = cwd.to_str()
    {
        let cwd = format!("{}/", cwd.replace('\\', "/").trim_end_matches('/'));
        if let Some(rest) = path.strip_prefix(&cwd) {
            path = rest.to_string();
        }
    }
    let path = path.strip_prefix("./").unwrap_or(&path);
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One result; `end_column` is the column just after the span, when it is known.
fn result(uri: &str, d: &Diagnostic, end_column: Option<usize>) -> Value {
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

/// The SARIF log of `files`; `end_columns[i][j]` is the end column of diagnostic `j` of file
/// `i`, when known.
pub fn log(files: &[FileReport], end_columns: &[Vec<Option<usize>>], version: &str) -> Value {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for (file, ends) in files.iter().zip(end_columns) {
        let uri = uri(&file.path);
        if let Some(error) = &file.read_error {
            notifications.push(json!({
                "level": "error",
                "message": {"text": format!("cannot read {}: {error}", file.path)},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            }));
        }
        for (j, d) in file.diagnostics.iter().enumerate() {
            results.push(result(&uri, d, ends.get(j).copied().flatten()));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "pi-session",
                "version": version,
                "semanticVersion": version,
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules(),
            }},
            "invocations": [{
                "executionSuccessful": notifications.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// The column just after the span of `d` (characters of the span decoded with replacement
/// characters, as the library counts columns); `None` for file-level diagnostics.
pub fn end_column(bytes: &[u8], d: &Diagnostic) -> Option<usize> {
    let l = d.location?;
    let start = l.offset.min(bytes.len());
    let end = l.offset.saturating_add(l.length).min(bytes.len());
    let span = &bytes[start..end];
    // A span that runs past the end of its line ends at the line's end.
    let span = &span[..span.iter().position(|&b| b == b'\n').unwrap_or(span.len())];
    Some(l.column + String::from_utf8_lossy(span).chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_and_encoded() {
        assert_eq!(uri("a b/c%.jsonl"), "a%20b/c%25.jsonl");
        assert_eq!(uri("./x.jsonl"), "x.jsonl");
        let cwd = std::env::current_dir().unwrap();
        let inside = cwd.join("s.jsonl");
        assert_eq!(uri(inside.to_str().unwrap()), "s.jsonl");
    }
}
