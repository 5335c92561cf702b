//! The schema-level invalid cases of the validator's corpus (`conformance/validate/`, codes
//! PS0203 missing field, PS0204 wrong type, PS0205 invalid value, and PS0103 header field) fail
//! the committed JSON Schema files for the right reason: the line the case's report points at
//! is rejected by `session-line.schema.json`, with an error at the pointer the report gives,
//! and the typed serde model rejects it too. The clean `valid-*` cases pass both.

use crate::schema_support::{LineValidators, Schemas, oracle, root};
use serde_json::Value;

const SCHEMA_CODES: &[&str] = &["PS0103", "PS0203", "PS0204", "PS0205"];

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn schema_level_invalid_cases_fail_for_the_right_reason() {
    let schemas = Schemas::load();
    let validators = LineValidators::new(&schemas);
    let dir = root().join("conformance/validate");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in cases {
        let Ok(bytes) = std::fs::read(case.join("session.jsonl")) else {
            continue;
        };
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let meta = read_json(&case.join("case.json"));
        // The committed schemas are pi's format; oh-my-pi's cases are checked by its rules.
        if meta.get("dialect").and_then(Value::as_str) == Some("omp") {
            continue;
        }
        let expected = read_json(&case.join("expected.json"));
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split('\n').collect();
        let version = expected["stats"]["version"]
            .as_f64()
            .map_or(3, |v| v as u32);
        let validator = validators.get(version);
        if name.starts_with("valid-") && meta.get("pi").is_none() {
            for (i, line) in lines
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let value: Value = serde_json::from_str(line).unwrap();
                if !validator.is_valid(&value) || oracle(&value, version).is_err() {
                    failures.push(format!("{name}:{}: a valid case's line fails", i + 1));
                }
            }
            continue;
        }
        for d in expected["diagnostics"].as_array().unwrap() {
            let code = d["code"].as_str().unwrap();
            if !SCHEMA_CODES.contains(&code) {
                continue;
            }
            let line = d["location"]["line"].as_u64().unwrap() as usize;
            let value: Value = serde_json::from_str(lines[line - 1]).unwrap();
            let pointer = d["pointer"].as_str().unwrap_or_default();
            // A missing field is reported at the field's own pointer; the schema error is at
            // the object that lacks it.
            let object =
                if code == "PS0203" || (code == "PS0103" && value.pointer(pointer).is_none()) {
                    pointer.rsplit_once('/').map_or("", |(parent, _)| parent)
                } else {
                    pointer
                };
            let at: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.instance_path().as_str().to_string())
                .collect();
            if !at.iter().any(|p| p == object) {
                failures.push(format!(
                    "{name}:{line}: {code} at {pointer:?}, but the schema's errors are at {at:?}"
                ));
            }
            if oracle(&value, version).is_ok() {
                failures.push(format!(
                    "{name}:{line}: {code}, but the typed model accepts the line"
                ));
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 4,
        "only {checked} schema-level diagnostics checked"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
