//! `session-line-v1` and `session-line-v2`: the lines of version-1 and version-2 files,
//! derived from the version-3 schemas by the differences the migrations undo (rules M1–M6 of
//! `conformance/RULES.md`).
//!
//! - v2 → v3 only renames the `hookMessage` role to `custom`, and the typed model accepts
//!   both roles, so a v2 line is a v3 entry or a header with `version: 2`.
//! - v1 → v2 gives every entry a fresh `id` and the previous entry as `parentId`
//!   (overwriting any value already there), and turns a compaction's numeric
//!   `firstKeptEntryIndex` into `firstKeptEntryId`. So a v1 entry is a v3 entry without
//!   `id`/`parentId`, and a v1 compaction has `firstKeptEntryIndex` (a non-negative integer,
//!   any `firstKeptEntryId` beside it being overwritten) or else `firstKeptEntryId`. The v1
//!   header has no `version` (pi also reads `1`).
//!
//! What a schema cannot check: that `firstKeptEntryIndex` names an earlier line (a forward or
//! out-of-range index leaves the migrated compaction without a `firstKeptEntryId`).

use super::build::{TypeSchema, require_version};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// `session-line-v2`.
pub(super) fn v2(files: &BTreeMap<String, TypeSchema>) -> Value {
    let mut header = files["session-header"].schema.clone();
    require_version(&mut header, 2, true);
    header["title"] = json!("SessionHeader (version 2)");
    json!({
        "description": "One line of a version-2 session file (pi 0.31.0 to 0.34.x): the header \
            with `version: 2`, or an entry of the version-3 shape (`entry.schema.json`). The only \
            difference from version 3 is the `hookMessage` role, which the v2→v3 migration \
            renames to `custom`; both roles are accepted in both versions. pi migrates a v2 file \
            to version 3 when it opens it, and rewrites the file.",
        "type": "object",
        "if": { "properties": { "type": { "const": "session" } }, "required": ["type"] },
        "then": { "$ref": "#/$defs/SessionHeaderV2" },
        "else": { "$ref": "entry.schema.json" },
        "$defs": { "SessionHeaderV2": header },
    })
}

/// `session-line-v1`.
pub(super) fn v1(files: &BTreeMap<String, TypeSchema>) -> Result<Value, String> {
    let mut defs = Map::new();

    let mut header = files["session-header"].schema.clone();
    require_version(&mut header, 1, false);
    header["title"] = json!("SessionHeader (version 1)");
    header["properties"]["version"]["description"] =
        json!("Absent in the files pi wrote before 0.31.0 (pi reads a missing version as 1).");
    defs.insert("SessionHeaderV1".into(), header);

    // The entry dispatch, pointing at local v1 copies of each entry shape.
    let mut entry = files["entry"].schema.clone();
    let branches = entry["allOf"]
        .as_array_mut()
        .ok_or("entry.schema.json has no dispatch")?;
    for branch in branches {
        let target = branch["then"]["$ref"]
            .as_str()
            .and_then(|r| r.strip_suffix(".schema.json"))
            .ok_or("entry dispatch without a file $ref")?
            .to_string();
        let file = &files[&target];
        let name = format!("{}V1", file.rust_type);
        branch["then"]["$ref"] = Value::String(format!("#/$defs/{name}"));
        defs.insert(name, v1_entry(file)?);
    }
    entry["title"] = json!("Entry (version 1)");
    defs.insert("EntryV1".into(), entry);

    Ok(json!({
        "description": "One line of a version-1 session file (pi before 0.31.0): the header \
            without `version`, or an entry without `id`/`parentId` (the file is a linear list; \
            the v1→v2 migration numbers the entries and chains them), where a compaction names \
            its first kept entry by `firstKeptEntryIndex`, the index of that line in the file \
            (the header is 0). pi migrates a v1 file to version 3 when it opens it, and \
            rewrites the file. A schema cannot check that `firstKeptEntryIndex` names an \
            earlier line.",
        "type": "object",
        "if": { "properties": { "type": { "const": "session" } }, "required": ["type"] },
        "then": { "$ref": "#/$defs/SessionHeaderV1" },
        "else": { "$ref": "#/$defs/EntryV1" },
        "$defs": defs,
    }))
}

/// A v3 entry schema as its v1 shape: no `id`/`parentId`; a compaction's
/// `firstKeptEntryIndex` instead of `firstKeptEntryId`.
fn v1_entry(file: &TypeSchema) -> Result<Value, String> {
    let mut schema = file.schema.clone();
    schema["title"] = Value::String(format!("{} (version 1)", file.rust_type));
    let properties = schema["properties"]
        .as_object_mut()
        .ok_or_else(|| format!("{} has no properties", file.rust_type))?;
    for key in ["id", "parentId"] {
        properties
            .remove(key)
            .ok_or_else(|| format!("{} has no {key}", file.rust_type))?;
    }
    let first_kept = if file.rust_type == "CompactionEntry" {
        let first_kept = properties
            .remove("firstKeptEntryId")
            .ok_or("CompactionEntry has no firstKeptEntryId")?;
        if !properties.contains_key("firstKeptEntryIndex") {
            return Err("CompactionEntry has no firstKeptEntryIndex".into());
        }
        Some(first_kept)
    } else {
        None
    };
    let required = schema["required"]
        .as_array_mut()
        .ok_or_else(|| format!("{} has no required list", file.rust_type))?;
    required.retain(|k| k != "id" && k != "parentId" && k != "firstKeptEntryId");
    let description = schema["description"].as_str().unwrap_or("").to_string();
    let mut note = String::from(
        "In a version-1 file the entry has no `id`/`parentId`: the v1→v2 migration assigns \
         them, overwriting any value already there.",
    );
    if let Some(first_kept) = first_kept {
        note.push_str(
            " A compaction has `firstKeptEntryIndex` (any `firstKeptEntryId` beside it is \
             overwritten by the migration), or else a string `firstKeptEntryId`.",
        );
        schema["if"] = json!({ "required": ["firstKeptEntryIndex"] });
        schema["else"] = json!({
            "properties": { "firstKeptEntryId": first_kept },
            "required": ["firstKeptEntryId"],
        });
    }
    schema["description"] = Value::String(format!("{description}\n\n{note}"));
    Ok(schema)
}
