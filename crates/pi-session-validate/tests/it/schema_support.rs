//! Shared by the `schema_*` tests: the committed `schemas/` loaded into the `jsonschema`
//! crate, the corpus, and the typed model's verdict on a line ("the oracle").
//!
//! The oracle says what the typed serde model (`types::FileEntry`) says about a line, with the
//! rules the schemas state on top of it (each listed in `schemas/README.md`):
//!
//! - version 3 (`session-line`) and 2 (`session-line-v2`): the model accepts the line, and a
//!   header has `"version"` 3 (resp. 2); the model itself reads headers of every version;
//! - version 1 (`session-line-v1`): a header is accepted by the model and has no `version` (or
//!   1); an entry is accepted by the model after the part of the v1→v2 migration that a
//!   single line determines: `id`/`parentId` set (pi overwrites them), a non-negative integer
//!   `firstKeptEntryIndex` replaced by a `firstKeptEntryId`.

use jsonschema::{Registry, Validator};
use pi_session_format::types::FileEntry;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every committed `schemas/*.schema.json`, by file name.
pub(crate) fn schema_files() -> BTreeMap<String, Value> {
    let dir = root().join("schemas");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("schemas/ exists") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.ends_with(".schema.json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let value: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
            files.insert(name, value);
        }
    }
    assert!(!files.is_empty(), "no schemas in {}", dir.display());
    files
}

/// The schemas, compiled on demand, every file reachable by its `$id`.
pub(crate) struct Schemas {
    files: BTreeMap<String, Value>,
    registry: Registry<'static>,
}

impl Schemas {
    pub(crate) fn load() -> Schemas {
        let files = schema_files();
        let mut builder = Registry::new();
        for schema in files.values() {
            let id = schema["$id"].as_str().expect("every schema has an $id");
            builder = builder.add(id, schema.clone()).expect("valid $id");
        }
        let registry = builder.prepare().expect("the schemas form a registry");
        Schemas { files, registry }
    }

    /// The validator of `name` (`session-line`, ...).
    pub(crate) fn validator(&self, name: &str) -> Validator {
        let schema = self
            .files
            .get(&format!("{name}.schema.json"))
            .unwrap_or_else(|| panic!("no schema {name}"));
        jsonschema::options()
            .with_registry(&self.registry)
            .build(schema)
            .unwrap_or_else(|e| panic!("{name} does not compile: {e}"))
    }
}

/// The three line schemas.
pub(crate) struct LineValidators {
    pub v1: Validator,
    pub v2: Validator,
    pub v3: Validator,
}

impl LineValidators {
    pub(crate) fn new(schemas: &Schemas) -> LineValidators {
        LineValidators {
            v1: schemas.validator("session-line-v1"),
            v2: schemas.validator("session-line-v2"),
            v3: schemas.validator("session-line"),
        }
    }

    pub(crate) fn get(&self, version: u32) -> &Validator {
        match version {
            1 => &self.v1,
            2 => &self.v2,
            _ => &self.v3,
        }
    }
}

pub(crate) fn is_header(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("session")
}

/// The typed model's verdict on one line of a version-`version` file (see the module docs).
pub(crate) fn oracle(value: &Value, version: u32) -> Result<(), String> {
    if is_header(value) {
        serde_json::from_value::<FileEntry>(value.clone()).map_err(|e| e.to_string())?;
        let v = value.get("version");
        let ok = match version {
            1 => v.is_none() || v.and_then(Value::as_u64) == Some(1),
            n => v.and_then(Value::as_u64) == Some(u64::from(n)),
        };
        return if ok {
            Ok(())
        } else {
            Err(format!(
                "a version-{version} header has another version: {v:?}"
            ))
        };
    }
    let mut value = value.clone();
    if version == 1
        && let Some(object) = value.as_object_mut()
    {
        object.insert("id".into(), json!("00000001"));
        object.insert("parentId".into(), Value::Null);
        let index = object.get("firstKeptEntryIndex").is_some_and(Value::is_u64);
        if object.get("type") == Some(&json!("compaction")) && index {
            object.remove("firstKeptEntryIndex");
            object.insert("firstKeptEntryId".into(), json!("00000001"));
        }
    }
    serde_json::from_value::<FileEntry>(value)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// One case of the conformance corpus.
pub(crate) struct Case {
    /// `area/name`.
    pub name: String,
    pub dir: PathBuf,
    /// The lines of `session.jsonl`: 1-based number and the parsed value, or `None` when
    /// `serde_json` cannot parse the line (torn lines, lone surrogates, BOMs, ...).
    pub lines: Vec<(usize, Option<Value>)>,
}

impl Case {
    /// The version of the file by its first line: `version` of a header (absent: 1).
    pub(crate) fn version(&self) -> Option<u32> {
        let (_, first) = self.lines.first()?;
        let first = first.as_ref()?;
        if !is_header(first) {
            return None;
        }
        match first.get("version") {
            None => Some(1),
            Some(v) => v.as_u64().and_then(|v| u32::try_from(v).ok()),
        }
    }
}

/// Every case of `conformance/cases/`, sorted by name. Lines are split at `\n` and trimmed,
/// blank lines skipped (pi's splitting, without its JavaScript-specific whitespace rules).
pub(crate) fn corpus() -> Vec<Case> {
    let cases_dir = root().join("conformance/cases");
    let mut cases = Vec::new();
    for area in std::fs::read_dir(&cases_dir).unwrap() {
        let area = area.unwrap().path();
        if !area.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&area).unwrap() {
            let dir = case.unwrap().path();
            let Ok(bytes) = std::fs::read(dir.join("session.jsonl")) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let lines = text
                .split('\n')
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| (i + 1, serde_json::from_str(line.trim()).ok()))
                .collect();
            let name = format!(
                "{}/{}",
                area.file_name().unwrap().to_str().unwrap(),
                dir.file_name().unwrap().to_str().unwrap()
            );
            cases.push(Case { name, dir, lines });
        }
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(cases.len() > 100, "the corpus is missing");
    cases
}

/// The schema's errors on `value`, one line each (`/path: message`).
pub(crate) fn errors(validator: &Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}
