//! Pretty-printing of the schema files with a stable, readable key order.
//!
//! `serde_json::Map` sorts its keys (the workspace does not enable `preserve_order`, and must
//! not: feature unification would change the library's maps too), so the printer decides the
//! order itself: schema keywords in a conventional order (`$schema`, `$id`, `$comment`,
//! `title`, `description`, `type`, ...), the properties of an object schema in the order of its
//! `required` list (which is the declaration order of the Rust fields, i.e. pi's key order)
//! followed by the optional ones alphabetically, everything else alphabetically.

use serde_json::{Map, Value};

/// The order of schema keywords; unknown keys follow, alphabetically.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "if",
    "then",
    "else",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
];

/// What a JSON value is, which decides how its keys are ordered.
#[derive(Clone, Copy)]
enum Kind<'a> {
    /// A schema object.
    Schema,
    /// The `properties` of a schema, ordered by its sibling `required` list.
    Properties(Option<&'a Vec<Value>>),
    /// A map from names to schemas (`$defs`, `patternProperties`).
    SchemaMap,
    /// Instance data (`const`, `enum`, `default`, `required`): alphabetical.
    Data,
}

/// `value` pretty-printed (two-space indent) with a final newline.
pub(super) fn to_pretty(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value, 0, Kind::Schema);
    out.push('\n');
    out
}

/// Lines up to this width keep a small object or array on one line.
const WIDTH: usize = 100;

fn write(out: &mut String, value: &Value, indent: usize, kind: Kind<'_>) {
    // Small values stay on one line when the line (indent, key and value) fits.
    let line_so_far = out.len() - out.rfind('\n').map_or(0, |i| i + 1);
    if value.is_object() || value.is_array() {
        let mut compact = String::new();
        write_compact(&mut compact, value, kind);
        if line_so_far + compact.len() < WIDTH {
            out.push_str(&compact);
            return;
        }
    }
    match value {
        Value::Object(map) => write_object(out, map, indent, kind),
        Value::Array(items) => {
            let item_kind = item_kind(kind);
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent + 1);
                write(out, item, indent + 1, item_kind);
            }
            newline(out, indent);
            out.push(']');
        }
        other => out.push_str(&scalar(other)),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>, indent: usize, kind: Kind<'_>) {
    if map.is_empty() {
        out.push_str("{}");
        return;
    }
    let keys = ordered_keys(map, kind);
    out.push('{');
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, indent + 1);
        out.push_str(&scalar(&Value::String((*key).clone())));
        out.push_str(": ");
        write(out, &map[*key], indent + 1, child_kind(kind, map, key));
    }
    newline(out, indent);
    out.push('}');
}

fn item_kind(kind: Kind<'_>) -> Kind<'static> {
    match kind {
        Kind::Schema => Kind::Schema,
        _ => Kind::Data,
    }
}

fn child_kind<'m>(kind: Kind<'_>, map: &'m Map<String, Value>, key: &str) -> Kind<'m> {
    match kind {
        Kind::Schema => match key {
            "properties" => Kind::Properties(map.get("required").and_then(Value::as_array)),
            "$defs" | "patternProperties" | "dependentSchemas" => Kind::SchemaMap,
            "const" | "enum" | "default" | "examples" | "required" => Kind::Data,
            _ => Kind::Schema,
        },
        Kind::Properties(_) | Kind::SchemaMap => Kind::Schema,
        Kind::Data => Kind::Data,
    }
}

/// `value` on one line (`{"a": 1, "b": [2, 3]}`), keys in the same order as [`to_pretty`].
fn write_compact(out: &mut String, value: &Value, kind: Kind<'_>) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, key) in ordered_keys(map, kind).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&scalar(&Value::String(key.clone())));
                out.push_str(": ");
                write_compact(out, &map[key], child_kind(kind, map, key));
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_compact(out, item, item_kind(kind));
            }
            out.push(']');
        }
        other => out.push_str(&scalar(other)),
    }
}

fn ordered_keys<'m>(map: &'m Map<String, Value>, kind: Kind<'_>) -> Vec<&'m String> {
    let mut keys: Vec<&String> = map.keys().collect();
    match kind {
        Kind::Schema => keys.sort_by_key(|k| {
            let rank = KEYWORDS
                .iter()
                .position(|w| w == k)
                .unwrap_or(KEYWORDS.len());
            (rank, (*k).clone())
        }),
        Kind::Properties(required) => {
            let required: Vec<&str> = required
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            keys.sort_by_key(|k| {
                let rank = required
                    .iter()
                    .position(|r| r == k)
                    .unwrap_or(required.len());
                (rank, (*k).clone())
            });
        }
        Kind::SchemaMap | Kind::Data => {}
    }
    keys
}

fn scalar(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON value serializes")
}

fn newline(out: &mut String, indent: usize) {
    out.push('\n');
    for _ in 0..indent {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keywords_first_and_properties_in_required_order() {
        let schema = json!({
            "type": "object",
            "$id": "x",
            "required": ["b", "a"],
            "properties": {"a": {"type": "string"}, "b": {}, "c": {"const": {"z": 1, "y": 2}}},
        });
        assert_eq!(
            to_pretty(&schema),
            r#"{
  "$id": "x",
  "type": "object",
  "properties": {"b": {}, "a": {"type": "string"}, "c": {"const": {"y": 2, "z": 1}}},
  "required": ["b", "a"]
}
"#
        );
        let long = json!({"description": "d".repeat(90), "type": "string"});
        assert_eq!(
            to_pretty(&long),
            format!(
                "{{\n  \"description\": \"{}\",\n  \"type\": \"string\"\n}}\n",
                "d".repeat(90)
            )
        );
        // Printing is lossless.
        let back: Value = serde_json::from_str(&to_pretty(&schema)).unwrap();
        assert_eq!(back, schema);
    }
}
