//! Structural checks: each line against the JSON Schema of its format version.
//!
//! The schemas are generated from [`pi_session_format::types`], so these checks say exactly what the typed
//! model requires of every entry type, message role and content block, and cannot drift from
//! it. Schema errors become [`Code::MissingField`], [`Code::WrongType`] and
//! [`Code::InvalidValue`] diagnostics with the JSON pointer of the offending value; a few
//! pointers have codes of their own (`id`, `parentId`, `message`).

use super::catalogue::Code;
use crate::schemas::SCHEMAS;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Registry, Validator};
use serde_json::Value;
use std::sync::LazyLock;

/// Which line schema applies: by the header's version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSchema {
    /// `session-line-v1` (no version, or below 2).
    V1,
    /// `session-line-v2`.
    V2,
    /// `session-line` (version 3 and the fields later pi added).
    V3,
}

struct Validators {
    v1: Validator,
    v2: Validator,
    v3: Validator,
}

static VALIDATORS: LazyLock<Validators> = LazyLock::new(|| {
    let files: Vec<Value> = SCHEMAS
        .iter()
        .map(|(name, text)| {
            serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("embedded schema {name} is not JSON: {e}"))
        })
        .collect();
    let mut registry = Registry::new();
    for schema in &files {
        if let Some(id) = schema.get("$id").and_then(Value::as_str) {
            registry = registry
                .add(id, schema.clone())
                .expect("embedded schema $id is a valid URI");
        }
    }
    let registry = registry
        .prepare()
        .expect("the embedded schemas form a registry");
    let build = |name: &str| {
        let (_, text) = SCHEMAS
            .iter()
            .find(|(n, _)| *n == name)
            .expect("line schema embedded");
        let schema: Value = serde_json::from_str(text).expect("embedded schema is JSON");
        jsonschema::options()
            .with_registry(&registry)
            .build(&schema)
            .unwrap_or_else(|e| panic!("embedded schema {name} does not compile: {e}"))
    };
    Validators {
        v1: build("session-line-v1"),
        v2: build("session-line-v2"),
        v3: build("session-line"),
    }
});

/// One schema violation, mapped to a diagnostic code.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The code.
    pub code: Code,
    /// JSON pointer of the value concerned (for a missing field: the field's own pointer).
    pub pointer: String,
    /// What is wrong, in words.
    pub message: String,
}

/// Checks a line's value; returns nothing when it is valid.
pub fn check(schema: LineSchema, value: &Value) -> Vec<Violation> {
    let validators = &*VALIDATORS;
    let validator = match schema {
        LineSchema::V1 => &validators.v1,
        LineSchema::V2 => &validators.v2,
        LineSchema::V3 => &validators.v3,
    };
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut out: Vec<Violation> = validator
        .iter_errors(value)
        .filter_map(|error| violation(value, error.instance_path().as_str(), error.kind()))
        .collect();
    out.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.code.cmp(&b.code)));
    out.dedup_by(|a, b| a.pointer == b.pointer && a.code == b.code && a.message == b.message);
    out
}

fn violation(root: &Value, pointer: &str, kind: &ValidationErrorKind) -> Option<Violation> {
    let what = describe(root, pointer);
    let (code, pointer, message) = match kind {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            (
                Code::MissingField,
                format!("{pointer}/{}", escape(name)),
                format!("{what} has no `{name}`"),
            )
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.as_str().to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let found = root.pointer(pointer).map_or("nothing", json_type);
            (
                Code::WrongType,
                pointer.to_string(),
                format!(
                    "{what} must be {} {expected}, found {found}",
                    article(&expected)
                ),
            )
        }
        // The dispatch schemas reject known tags in their "unknown" branch; the branch of the
        // tag itself reports the real problem.
        ValidationErrorKind::Not { .. } => return None,
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            let found = root.pointer(pointer).map_or("nothing", json_type);
            (
                Code::WrongType,
                pointer.to_string(),
                format!("{what} has none of the allowed shapes (found {found})"),
            )
        }
        other => (
            Code::InvalidValue,
            pointer.to_string(),
            format!("{what}: {}", short_reason(other)),
        ),
    };
    Some(Violation {
        code,
        pointer,
        message,
    })
}

/// A reason for keyword errors that does not repeat the (possibly huge) value.
fn short_reason(kind: &ValidationErrorKind) -> String {
    match kind {
        ValidationErrorKind::Enum { options } => format!("must be one of {options}"),
        ValidationErrorKind::Constant { expected_value } => format!("must be {expected_value}"),
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be more than {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("must be a multiple of {multiple_of}")
        }
        ValidationErrorKind::MinItems { limit } => format!("must have at least {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("must have at most {limit} items"),
        ValidationErrorKind::MinLength { limit } => format!("must be at least {limit} characters"),
        ValidationErrorKind::MaxLength { limit } => format!("must be at most {limit} characters"),
        ValidationErrorKind::Pattern { pattern } => format!("must match {pattern}"),
        ValidationErrorKind::Format { format } => format!("must be a valid {format}"),
        other => format!("fails the `{}` rule of the schema", other.keyword()),
    }
}

/// "the `compaction` entry", "`/message` (an `assistant` message)", …
fn describe(root: &Value, pointer: &str) -> String {
    let value = root.pointer(pointer);
    let tag = |key| value.and_then(|v| v.get(key)).and_then(Value::as_str);
    let place = if pointer.is_empty() {
        String::new()
    } else {
        format!("`{pointer}` ")
    };
    match (tag("type"), tag("role")) {
        (_, Some(role)) if pointer.ends_with("message") || pointer.is_empty() => {
            format!("{place}({} `{role}` message)", article(role))
        }
        (Some("session"), _) if pointer.is_empty() => "the header".to_string(),
        (Some(t), _) if pointer.is_empty() => format!("the `{t}` entry"),
        (Some(t), _) => format!("{place}({} `{t}` block)", article(t)),
        _ if pointer.is_empty() => "the line".to_string(),
        _ => format!("`{pointer}`"),
    }
}

fn article(expected: &str) -> &'static str {
    // "an array", "an object", "an integer", "an assistant", but "a user", "a usage".
    if expected.starts_with(['a', 'e', 'i', 'o']) {
        "an"
    } else {
        "a"
    }
}

/// The JSON type of a value, in words.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Escapes a key for a JSON pointer (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_and_wrong_fields_have_pointers() {
        let line = json!({"type":"compaction","id":"a1b2c3d4","parentId":null,
            "timestamp":"2026-01-01T00:00:00.000Z","summary":"s","tokensBefore":"many"});
        let found = check(LineSchema::V3, &line);
        assert!(found.iter().any(|v| v.code == Code::MissingField
            && v.pointer == "/firstKeptEntryId"
            && v.message == "the `compaction` entry has no `firstKeptEntryId`"));
        assert!(found.iter().any(|v| v.code == Code::WrongType
            && v.pointer == "/tokensBefore"
            && v.message.contains("found a string")));
    }

    #[test]
    fn valid_lines_have_no_violations() {
        let header = json!({"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"});
        assert!(check(LineSchema::V3, &header).is_empty());
        let unknown = json!({"type":"event","id":"a1b2c3d4","parentId":null});
        assert!(check(LineSchema::V3, &unknown).is_empty());
    }
}
