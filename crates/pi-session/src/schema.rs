//! `pi-session schema [NAME]`: print one of the JSON Schemas of `schemas/`, or list them.
//!
//! The schemas are generated from the library's types by `cargo xtask schema` and embedded
//! here at build time, so the binary prints exactly the committed files.

use std::process::ExitCode;

/// Embeds `schemas/<name>.schema.json` for each name.
macro_rules! schemas {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../../schemas/", $name, ".schema.json")))),*]
    };
}

/// Every schema: name (the file name without `.schema.json`) and contents. A unit test checks
/// that this is exactly the set of files in `schemas/`.
pub const SCHEMAS: &[(&str, &str)] = schemas![
    "assistant-message-diagnostic",
    "content",
    "content-block",
    "content-image",
    "content-text",
    "content-thinking",
    "content-tool-call",
    "context",
    "context-edit-replacement",
    "deferred-handle",
    "diagnostic-error-info",
    "entry",
    "entry-branch-summary",
    "entry-compaction",
    "entry-context-edit",
    "entry-custom",
    "entry-custom-message",
    "entry-label",
    "entry-message",
    "entry-model-change",
    "entry-session-info",
    "entry-thinking-level-change",
    "entry-usage",
    "message",
    "message-assistant",
    "message-bash-execution",
    "message-branch-summary",
    "message-compaction-summary",
    "message-custom",
    "message-hook-message",
    "message-system",
    "message-tool-result",
    "message-user",
    "session-header",
    "session-line",
    "session-line-v1",
    "session-line-v2",
    "tool",
    "tool-reference",
    "usage",
    "usage-cost",
];

/// The schema called `name` (`session-line` or `session-line.schema.json`).
pub fn find(name: &str) -> Option<&'static str> {
    let name = name.strip_suffix(".schema.json").unwrap_or(name);
    SCHEMAS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// With a name, prints that schema; without, lists the names, one per line.
pub fn main(name: Option<&str>) -> ExitCode {
    let output = match name {
        None => SCHEMAS.iter().map(|(n, _)| format!("{n}\n")).collect(),
        Some(name) => match find(name) {
            Some(text) => text.to_string(),
            None => {
                eprintln!("pi-session: unknown schema {name:?}; `pi-session schema` lists them");
                return ExitCode::from(2);
            }
        },
    };
    match crate::write_stdout(output.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(crate::Rejected(message)) => {
            eprintln!("pi-session: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_schemas_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".schema.json").map(str::to_string)
            })
            .collect();
        on_disk.sort();
        let embedded: Vec<&str> = SCHEMAS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            embedded, on_disk,
            "update SCHEMAS in crates/pi-session/src/schema.rs"
        );
    }

    #[test]
    fn names_resolve_with_or_without_the_suffix() {
        let line = find("session-line").unwrap();
        assert_eq!(find("session-line.schema.json"), Some(line));
        assert!(line.contains(
            r#""$id": "https://pi-session-format.dev/schemas/v3/session-line.schema.json""#
        ));
        assert_eq!(find("nope"), None);
    }
}
