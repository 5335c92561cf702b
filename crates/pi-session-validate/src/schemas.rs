//! The JSON Schemas of the crate's `schemas/` folder, embedded: the validator checks lines against them and
//! `pi-session schema` prints them.
//!
//! The schemas are generated from [`pi_session_format::types`] by `cargo xtask schema` (which also checks
//! that the committed files are current), so embedding the files embeds exactly the types.

/// Embeds `schemas/<name>.schema.json` for each name.
macro_rules! schemas {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../schemas/", $name, ".schema.json")))),*]
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
    "validate-report",
];

/// The schema called `name` (`session-line` or `session-line.schema.json`).
pub fn find(name: &str) -> Option<&'static str> {
    let name = name.strip_suffix(".schema.json").unwrap_or(name);
    SCHEMAS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_schemas_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
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
            "update SCHEMAS in crates/pi-session-format/src/schemas.rs"
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
