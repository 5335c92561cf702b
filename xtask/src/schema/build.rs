//! From schemars' output to the files of `schemas/`.
//!
//! schemars generates one schema with every type in `$defs`. This module gives each type its
//! own file and rewrites what schemars cannot say the way pi needs it (each rule is listed in
//! `schemas/README.md`):
//!
//! - **one file per type**, `$ref`s between files relative to the shared base URI;
//! - **tagged unions** (`Entry`, `AgentMessage`, `ContentBlock`) become a dispatch on the tag
//!   (`allOf` of `if`/`then`, one `$ref` per known tag), so that a validator reports the
//!   errors of the one matching shape instead of every failed `anyOf` branch; any other tag
//!   is accepted as an unknown object, as pi does;
//! - **variant files** (`entry-message`, `message-user`, `content-text`, ...) hold the tag
//!   (`"type": "message"`) next to the fields, so each validates a complete JSON object;
//! - `session-line` dispatches on `"type": "session"`: header or entry;
//! - the header's `version` is required and equal to 3 (the typed model also reads the
//!   headers of version-1 and version-2 files, which have their own schemas);
//! - a nullable reference (`anyOf: [{$ref}, {type: null}]`) becomes `if: {type: null}, else:
//!   {$ref}`, so that errors inside the object are reported as such;
//! - rustdoc links in descriptions become code spans and soft line breaks become spaces;
//! - schemars' integer `format`s (`uint64`, `int64`, ...) are dropped: they are not standard,
//!   strict validators (ajv) reject unknown formats, and `minimum: 0` keeps the sign rule.

use super::context::SessionContext;
use pi_session_format::types::{CURRENT_VERSION, FileEntry};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Tagged unions: Rust type, file stem, stem prefix of its variants.
const UNIONS: &[(&str, &str, &str)] = &[
    ("Entry", "entry", "entry-"),
    ("AgentMessage", "message", "message-"),
    ("ContentBlock", "content-block", "content-"),
];

/// Types whose file is not named after the type.
const NAMED: &[(&str, &str)] = &[
    ("FileEntry", "session-line"),
    ("SessionHeader", "session-header"),
    ("Content", "content"),
    ("SessionContext", "context"),
];

/// Types that are inlined where they are used instead of getting a file.
const INLINE: &[&str] = &["SessionHeaderType"];

/// One generated schema: its Rust type and its JSON (without `$schema`/`$id`/`$comment`).
pub(super) struct TypeSchema {
    /// The Rust type it was generated from (its `title`).
    pub rust_type: String,
    /// The schema.
    pub schema: Value,
}

/// A known tag of a tagged union.
struct Variant {
    value: String,
    def: String,
    description: Option<String>,
}

/// A tagged union as schemars generates it: `anyOf` of `{tag: const, $ref}` plus the unknown
/// variant (`not` any known tag).
struct Union {
    tag: String,
    variants: Vec<Variant>,
}

/// Every schema file of the current format, by file stem (`entry-message`, ...).
pub(super) fn build() -> Result<BTreeMap<String, TypeSchema>, String> {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    generator.subschema_for::<FileEntry>();
    generator.subschema_for::<SessionContext>();
    let defs = generator.take_definitions(true);

    // Unions and the files of their variants.
    let mut unions = BTreeMap::new();
    let mut variant_of = BTreeMap::new(); // struct → (tag key, tag value, description)
    for (name, schema) in &defs {
        let Some(union) = as_union(schema) else {
            continue;
        };
        if !UNIONS.iter().any(|(n, ..)| n == name) {
            return Err(format!(
                "{name} is a tagged union without a file name in xtask/src/schema/build.rs UNIONS"
            ));
        }
        for v in &union.variants {
            let previous = variant_of.insert(
                v.def.clone(),
                (union.tag.clone(), v.value.clone(), v.description.clone()),
            );
            if previous.is_some() {
                return Err(format!("{} is a variant of two unions", v.def));
            }
        }
        unions.insert(name.clone(), union);
    }
    for (name, ..) in UNIONS {
        if !unions.contains_key(*name) {
            return Err(format!("{name} is no longer a tagged union; update UNIONS"));
        }
    }

    let mut stems = BTreeMap::new();
    for name in defs.keys() {
        if INLINE.contains(&name.as_str()) {
            continue;
        }
        let stem = if let Some((_, stem, _)) = UNIONS.iter().find(|(n, ..)| n == name) {
            stem.to_string()
        } else if let Some((_, stem)) = NAMED.iter().find(|(n, _)| n == name) {
            stem.to_string()
        } else if let Some((_, value, _)) = variant_of.get(name) {
            let union = unions
                .iter()
                .find(|(_, u)| u.variants.iter().any(|v| &v.def == name))
                .map(|(n, _)| n.as_str())
                .expect("variant of a known union");
            let (_, _, prefix) = UNIONS.iter().find(|(n, ..)| *n == union).expect("known");
            format!("{prefix}{}", kebab(value))
        } else {
            kebab(name)
        };
        if let Some(other) = stems.values().position(|s: &String| *s == stem) {
            let other = stems.keys().nth(other).expect("exists");
            return Err(format!(
                "{name} and {other} would both be {stem}.schema.json"
            ));
        }
        stems.insert(name.clone(), stem);
    }

    let rewriter = Rewriter {
        defs: &defs,
        stems: &stems,
        variant_of: &variant_of,
    };
    let mut files = BTreeMap::new();
    for (name, stem) in &stems {
        let raw = &defs[name];
        let schema = if let Some(union) = unions.get(name) {
            union_file(raw, union, &stems)
        } else if name == "FileEntry" {
            session_line_file(raw)
        } else {
            let mut schema = rewriter.rewrite(raw)?;
            if let Some((tag, value, description)) = variant_of.get(name) {
                add_tag(&mut schema, tag, value, description.as_deref());
            }
            if name == "SessionHeader" {
                require_version(&mut schema, CURRENT_VERSION, true);
            }
            schema
        };
        files.insert(
            stem.clone(),
            TypeSchema {
                rust_type: name.clone(),
                schema,
            },
        );
    }
    Ok(files)
}

/// Recognises a tagged union generated by `tagged_union!`.
fn as_union(schema: &Value) -> Option<Union> {
    let items = schema.get("anyOf")?.as_array()?;
    let (unknown, known) = items.split_last()?;
    unknown.get("not")?;
    let mut tag = None;
    let mut variants = Vec::new();
    for item in known {
        let def = item.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
        let properties = item.get("properties")?.as_object()?;
        if properties.len() != 1 {
            return None;
        }
        let (key, property) = properties.iter().next()?;
        let value = property.get("const")?.as_str()?;
        if item.get("required")? != &json!([key]) || tag.get_or_insert(key.clone()) != key {
            return None;
        }
        variants.push(Variant {
            value: value.to_string(),
            def: def.to_string(),
            description: item
                .get("description")
                .and_then(Value::as_str)
                .map(clean_description),
        });
    }
    Some(Union {
        tag: tag?,
        variants,
    })
}

struct Rewriter<'a> {
    defs: &'a Map<String, Value>,
    stems: &'a BTreeMap<String, String>,
    variant_of: &'a BTreeMap<String, (String, String, Option<String>)>,
}

impl Rewriter<'_> {
    /// `schema` with refs pointing at files, inline types inlined, descriptions cleaned,
    /// integer formats dropped and single-branch `oneOf`/`anyOf` collapsed.
    fn rewrite(&self, schema: &Value) -> Result<Value, String> {
        let Value::Object(map) = schema else {
            return match schema {
                Value::Array(items) => Ok(Value::Array(
                    items
                        .iter()
                        .map(|v| self.rewrite(v))
                        .collect::<Result<_, _>>()?,
                )),
                other => Ok(other.clone()),
            };
        };
        let mut out = Map::new();
        for (key, value) in map {
            let value = match key.as_str() {
                // Instance data and names, not schemas.
                "const" | "enum" | "default" | "examples" | "required" => value.clone(),
                "description" => Value::String(clean_description(value.as_str().unwrap_or(""))),
                "format" if is_integer_format(value) => continue,
                // Maps from names to schemas: the names are not keywords.
                "properties" | "patternProperties" | "$defs" => {
                    let mut schemas = Map::new();
                    for (name, schema) in value.as_object().into_iter().flatten() {
                        schemas.insert(name.clone(), self.rewrite(schema)?);
                    }
                    Value::Object(schemas)
                }
                _ => self.rewrite(value)?,
            };
            out.insert(key.clone(), value);
        }
        // `{description, oneOf: [X]}` → X with that description.
        for keyword in ["oneOf", "anyOf"] {
            let single = matches!(out.get(keyword), Some(Value::Array(items)) if items.len() == 1);
            let only_annotations = out
                .keys()
                .all(|k| k == keyword || k == "description" || k == "title");
            if single && only_annotations {
                let Some(Value::Array(mut items)) = out.remove(keyword) else {
                    unreachable!()
                };
                let Value::Object(mut inner) = items.remove(0) else {
                    return Err(format!("non-object {keyword} branch"));
                };
                for (k, v) in out {
                    inner.insert(k, v); // the outer description wins
                }
                out = inner;
            }
        }
        // `anyOf: [{$ref}, {type: null}]` → `if null, else $ref`: a validator then reports the
        // errors inside the object instead of "not valid under any of the schemas".
        if let Some(Value::Array(items)) = out.get("anyOf")
            && let [reference, null] = items.as_slice()
        {
            let is_ref = reference
                .as_object()
                .is_some_and(|r| r.len() == 1 && r.get("$ref").and_then(Value::as_str).is_some());
            if is_ref && null == &json!({"type": "null"}) && !out.contains_key("if") {
                let reference = reference.clone();
                out.remove("anyOf");
                out.insert("if".into(), json!({"type": "null"}));
                out.insert("else".into(), reference);
            }
        }
        // The wrapper schemars puts around a variant (`{tag: const, $ref}`) is the variant
        // file, which contains the tag.
        if let Some(def) = self.variant_wrapper(&out) {
            let mut wrapped = Map::new();
            if let Some(d) = out.get("description") {
                wrapped.insert("description".into(), d.clone());
            }
            wrapped.insert("$ref".into(), Value::String(self.file_ref(&def)?));
            return Ok(Value::Object(wrapped));
        }
        // (A `$ref` without `#/$defs/` points at a file already: a collapsed wrapper.)
        if let Some(def) = out
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .map(str::to_string)
        {
            let def = def.as_str();
            if INLINE.contains(&def) {
                out.remove("$ref");
                let inlined = self.rewrite(&self.defs[def])?;
                let Value::Object(inlined) = inlined else {
                    return Err(format!("{def} is not an object schema"));
                };
                for (k, v) in inlined {
                    out.entry(k).or_insert(v); // the local description wins
                }
            } else if self.variant_of.contains_key(def) {
                return Err(format!(
                    "{def} is used without its tag; its file would require the tag"
                ));
            } else {
                out.insert("$ref".into(), Value::String(self.file_ref(def)?));
            }
        }
        Ok(Value::Object(out))
    }

    /// The variant struct named by a `{type?, properties: {tag: {const}}, required: [tag],
    /// $ref}` wrapper.
    fn variant_wrapper(&self, schema: &Map<String, Value>) -> Option<String> {
        let def = schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
        let (tag, value, _) = self.variant_of.get(def)?;
        let allowed = ["description", "type", "properties", "required", "$ref"];
        if !schema.keys().all(|k| allowed.contains(&k.as_str())) {
            return None;
        }
        let properties = schema.get("properties")?.as_object()?;
        let tag_schema = properties.get(tag)?;
        (properties.len() == 1
            && tag_schema.get("const")?.as_str()? == value
            && schema.get("required")? == &json!([tag]))
            .then(|| def.to_string())
    }

    fn file_ref(&self, def: &str) -> Result<String, String> {
        self.stems
            .get(def)
            .map(|stem| format!("{stem}.schema.json"))
            .ok_or_else(|| format!("no file for {def}"))
    }
}

/// The file of a tagged union: a dispatch on the tag, one `$ref` per known value.
fn union_file(raw: &Value, union: &Union, stems: &BTreeMap<String, String>) -> Value {
    let tag = &union.tag;
    let branches: Vec<Value> = union
        .variants
        .iter()
        .map(|v| {
            json!({
                "if": { "properties": { tag: { "const": v.value } }, "required": [tag] },
                "then": { "$ref": format!("{}.schema.json", stems[&v.def]) },
            })
        })
        .collect();
    let mut schema = Map::new();
    if let Some(d) = raw.get("description").and_then(Value::as_str) {
        let known: Vec<String> = union
            .variants
            .iter()
            .map(|v| format!("`{}`", v.value))
            .collect();
        schema.insert(
            "description".into(),
            Value::String(format!(
                "{}\n\nDispatch on `{tag}`: an object whose `{tag}` is {} must match that \
                 shape; any other object (unknown or missing `{tag}`) is accepted as it is.",
                clean_description(d),
                known.join(", ")
            )),
        );
    }
    schema.insert("type".into(), json!("object"));
    schema.insert("allOf".into(), Value::Array(branches));
    Value::Object(schema)
}

/// `session-line`: a header when `type` is `"session"`, otherwise an entry.
fn session_line_file(raw: &Value) -> Value {
    let description = raw
        .get("description")
        .and_then(Value::as_str)
        .map(clean_description)
        .unwrap_or_default();
    json!({
        "description": format!(
            "{description}\n\nValidates one line of a version-3 session file (pi writes version 3 \
             since 0.35.0); version-1 and version-2 files have their own schemas \
             (`session-line-v1`, `session-line-v2`)."
        ),
        "type": "object",
        "if": { "properties": { "type": { "const": "session" } }, "required": ["type"] },
        "then": { "$ref": "session-header.schema.json" },
        "else": { "$ref": "entry.schema.json" },
    })
}

/// Puts the tag (`"type": "message"`) first among the properties of a variant file.
fn add_tag(schema: &mut Value, tag: &str, value: &str, description: Option<&str>) {
    let mut tag_schema = Map::new();
    if let Some(d) = description {
        tag_schema.insert("description".into(), Value::String(d.to_string()));
    }
    tag_schema.insert("const".into(), Value::String(value.to_string()));
    schema["properties"][tag] = Value::Object(tag_schema);
    let required = schema["required"].as_array_mut().expect("struct schema");
    required.insert(0, Value::String(tag.to_string()));
}

/// Makes the header's `version` the constant `version`, required (or optional) and placed
/// after `type`.
pub(super) fn require_version(header: &mut Value, version: u32, required: bool) {
    let description = header["properties"]["version"]["description"].clone();
    header["properties"]["version"] = json!({ "description": description, "const": version });
    let list = header["required"].as_array_mut().expect("struct schema");
    list.retain(|v| v != "version");
    if required {
        list.insert(1, json!("version"));
    }
}

/// `format`s schemars adds to Rust integer types.
pub(super) fn is_integer_format(format: &Value) -> bool {
    format.as_str().is_some_and(|f| {
        let digits = f.trim_start_matches("uint").trim_start_matches("int");
        digits.len() < f.len() && digits.chars().all(|c| c.is_ascii_digit())
    })
}

/// A doc comment as a schema description: rustdoc links (`` [`Entry`] ``) become code spans
/// and soft line breaks inside a paragraph become spaces.
pub(super) fn clean_description(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("[`") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after[1..].find("`]") {
            Some(end) if !after[1..end + 1].contains('[') => {
                let span = &after[..end + 2]; // `X`
                let tail = &after[end + 3..];
                if tail.starts_with('(') || tail.starts_with('[') {
                    out.push('[');
                    out.push_str(span);
                    out.push(']');
                } else {
                    out.push_str(span);
                }
                rest = tail;
            }
            _ => {
                out.push_str("[`");
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    let lines: Vec<&str> = out.split('\n').collect();
    let mut joined = String::with_capacity(out.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            let prev_blank = lines[i - 1].trim().is_empty();
            let blank = line.trim().is_empty();
            let block = line.starts_with("- ") || line.starts_with("* ") || line.starts_with('|');
            joined.push(if prev_blank || blank || block {
                '\n'
            } else {
                ' '
            });
        }
        joined.push_str(line);
    }
    joined
}

/// `thinking_level_change` → `thinking-level-change`, `toolResult` → `tool-result`,
/// `AssistantMessageDiagnostic` → `assistant-message-diagnostic`.
pub(super) fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            out.push('-');
        } else if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_lose_rustdoc_links_and_soft_breaks() {
        assert_eq!(
            clean_description("One [`AgentMessage`] of\nthe [`Entry::Unknown`] kind.\n\nNext."),
            "One `AgentMessage` of the `Entry::Unknown` kind.\n\nNext."
        );
        assert_eq!(
            clean_description("a [`link`](https://x) and [`ref`][r] and [not code]"),
            "a [`link`](https://x) and [`ref`][r] and [not code]"
        );
        assert_eq!(clean_description("list:\n- a\n- b"), "list:\n- a\n- b");
    }

    #[test]
    fn file_names() {
        assert_eq!(kebab("thinking_level_change"), "thinking-level-change");
        assert_eq!(kebab("toolResult"), "tool-result");
        assert_eq!(
            kebab("AssistantMessageDiagnostic"),
            "assistant-message-diagnostic"
        );
        assert!(is_integer_format(&json!("uint64")) && is_integer_format(&json!("int32")));
        assert!(is_integer_format(&json!("uint")));
        assert!(!is_integer_format(&json!("date-time")) && !is_integer_format(&json!("integer")));
    }
}
