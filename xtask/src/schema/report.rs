//! `validate-report.schema.json`: the report of `pi-session validate --format json`, from the
//! types of `pi_session_validate` (`validate/output.rs` and `validate/report.rs`).
//!
//! Unlike the line schemas it is one self-contained file: its types are kept in its own
//! `$defs`. The same clean-ups apply (descriptions without rustdoc links or soft breaks, no
//! integer `format`s), and `formatVersion` is the constant `FORMAT_VERSION`.

use super::build::{clean_description, is_integer_format};
use pi_session_validate::{FORMAT_VERSION, ValidateReport};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The file stem.
pub(super) const STEM: &str = "validate-report";

/// The Rust type the file is generated from (its `title`).
pub(super) const RUST_TYPE: &str = "ValidateReport";

/// The schema (without `$schema`/`$id`/`$comment`/`title`, which `finish` adds).
pub(super) fn build() -> Result<Value, String> {
    // The report is only ever written: describe what serialisation produces (members skipped
    // when absent are optional, `Option`s written as `null` are required).
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let schema = generator.into_root_schema_for::<ValidateReport>();
    let mut schema = clean(&schema.to_value());
    let version = schema
        .pointer_mut("/properties/formatVersion")
        .and_then(Value::as_object_mut)
        .ok_or("ValidateReport has no formatVersion property")?;
    version.remove("type");
    version.remove("minimum");
    version.insert("const".into(), json!(FORMAT_VERSION));
    let map = schema.as_object_mut().ok_or("non-object schema")?;
    map.remove("$schema");
    map.remove("title");
    Ok(schema)
}

/// `format`s schemars adds to Rust float types (not standard formats either).
fn is_float_format(format: &Value) -> bool {
    matches!(format.as_str(), Some("double" | "float"))
}

/// Descriptions cleaned and integer formats dropped, everywhere.
fn clean(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let value = match key.as_str() {
                    "const" | "enum" | "default" | "examples" | "required" => value.clone(),
                    "description" => Value::String(clean_description(value.as_str().unwrap_or(""))),
                    "format" if is_integer_format(value) || is_float_format(value) => continue,
                    "properties" | "$defs" => Value::Object(
                        value
                            .as_object()
                            .into_iter()
                            .flatten()
                            .map(|(k, v)| (k.clone(), clean(v)))
                            .collect(),
                    ),
                    _ => clean(value),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
        other => other.clone(),
    }
}
