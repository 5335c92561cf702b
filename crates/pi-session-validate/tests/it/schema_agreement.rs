//! The JSON Schemas of `schemas/` against the typed model and the corpus.
//!
//! **Which corpus lines must validate.** The typed model (`types.rs`) is this project's
//! definition of a well-formed line, so the test is an agreement test in both directions: for
//! *every* line of *every* case in `conformance/cases/` that `serde_json` parses, and for each
//! of the three line schemas (`session-line`, `-v2`, `-v1`), the schema accepts the line
//! exactly when the typed model does (`schema_support::oracle` states the few rules the
//! schemas add on top of the model). The corpus deliberately holds malformed lines (missing
//! fields, wrong types, `null` lines), which must be rejected just as the model rejects them,
//! for the same reason where the model names one (a missing field).
//!
//! **Valid cases.** A case is *valid* when every line of its file parses and validates
//! against the schema of its version. For valid cases the expected outputs computed by pi
//! must validate too: `expected/context.json` against `context.schema.json`, and
//! `expected/migrate.jsonl` (pi's rewrite of a v1/v2 file) against `session-line`, which
//! checks the v1/v2 schemas against pi's real migrations. The sessions written by pi itself
//! (`PI_WRITTEN`, `real/recorded-*`) must be valid.

use crate::schema_support::{
    LineValidators, Schemas, corpus, errors, is_header, oracle, schema_files,
};
use serde_json::{Value, json};

/// Corpus sessions that pi itself wrote, which must be valid: these, and every
/// `real/recorded-*` case (recorded through pi's own `SessionManager` API by
/// `conformance/reference/record-sessions.mjs`, including its v1 and v2 shapes).
const PI_WRITTEN: &[&str] = &[
    // pi 0.73.1 (R1, conformance/RULES.md)
    "real/mattpocock-sandcastle-resumed-session",
    // v1 sessions from the pi-mono repository, written by pi before 0.31.0
    "real/badlogic-pi-mono-before-compaction",
    "real/badlogic-pi-mono-large-session",
];

/// Valid v1 cases whose migration by pi is not a valid v3 file, because the v1 schema cannot
/// express the rule that breaks it (each is listed in `schemas/README.md`).
const MIGRATION_EXCEPTIONS: &[(&str, &str)] = &[
    (
        "migrate/v1-first-kept-index-names-later-session-line",
        "firstKeptEntryIndex names a later session line",
    ),
    (
        "migrate/v1-first-kept-index-out-of-range",
        "firstKeptEntryIndex is past the end of the file",
    ),
    (
        "migrate/v1-first-kept-index-zero-names-header",
        "firstKeptEntryIndex 0 names the header",
    ),
    (
        "migrate/v1-forward-first-kept-index-gives-no-id",
        "firstKeptEntryIndex names a later entry, which has no id yet",
    ),
];

#[test]
fn corpus_lines_agree_with_the_typed_model() {
    let schemas = Schemas::load();
    let validators = LineValidators::new(&schemas);
    let mut mismatches = Vec::new();
    let mut wrong_reason = Vec::new();
    let (mut lines, mut accepted) = (0, [0; 3]);
    for case in corpus() {
        for (number, value) in &case.lines {
            let Some(value) = value else { continue };
            lines += 1;
            for version in [1, 2, 3] {
                let validator = validators.get(version);
                let expected = oracle(value, version);
                let found = errors(validator, value);
                if expected.is_ok() {
                    accepted[version as usize - 1] += 1;
                }
                match (&expected, found.is_empty()) {
                    (Ok(()), true) => {}
                    (Err(reason), false) => {
                        // A missing field must be reported as that missing field.
                        if let Some(field) = missing_field(reason) {
                            let wanted = format!("\"{field}\" is a required property");
                            if !found.iter().any(|e| e.contains(&wanted)) {
                                wrong_reason.push(format!(
                                    "{}:{number} (v{version}): model: {reason}; schema: {found:?}",
                                    case.name
                                ));
                            }
                        }
                    }
                    _ => mismatches.push(format!(
                        "{}:{number} (v{version}): model: {expected:?}; schema: {found:?}\n    {}",
                        case.name,
                        truncate(&value.to_string())
                    )),
                }
            }
        }
    }
    eprintln!(
        "{lines} corpus lines; accepted by v1/v2/v3: {}/{}/{}",
        accepted[0], accepted[1], accepted[2]
    );
    assert!(
        mismatches.is_empty(),
        "{} disagreements between the schemas and the typed model:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(
        wrong_reason.is_empty(),
        "rejected for another reason than the model's:\n{}",
        wrong_reason.join("\n")
    );
    // Both verdicts occur in quantity, for every version.
    assert!(lines > 2000 && accepted.iter().all(|&n| n > 300 && n < lines));
}

#[test]
fn valid_cases_and_what_pi_computes_from_them() {
    let schemas = Schemas::load();
    let validators = LineValidators::new(&schemas);
    let context = schemas.validator("context");
    let mut valid = Vec::new();
    let mut failures = Vec::new();
    for case in corpus() {
        let Some(version) = case.version() else {
            continue;
        };
        let is_valid = case.lines.iter().all(|(_, v)| {
            v.as_ref()
                .is_some_and(|v| validators.get(version).is_valid(v))
        });
        if !is_valid {
            continue;
        }
        valid.push(case.name.clone());
        // An omp case's context is omp's (`OmpContext`), not pi's: not this schema's.
        let omp = std::fs::read_to_string(case.dir.join("case.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|meta| meta["dialect"] == "omp");
        if !omp && let Ok(text) = std::fs::read_to_string(case.dir.join("expected/context.json")) {
            let output: Value = serde_json::from_str(&text).unwrap();
            let found = errors(&context, &output);
            if !found.is_empty() {
                failures.push(format!("{}: context.json: {found:?}", case.name));
            }
        }
        if version < 3 {
            let Ok(text) = std::fs::read_to_string(case.dir.join("expected/migrate.jsonl")) else {
                continue;
            };
            let exception = MIGRATION_EXCEPTIONS.iter().any(|(n, _)| *n == case.name);
            let mut migrated_valid = true;
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
                let value: Value = serde_json::from_str(line).unwrap();
                let found = errors(&validators.v3, &value);
                if !found.is_empty() {
                    migrated_valid = false;
                    if !exception {
                        failures.push(format!("{}: migrate.jsonl:{}: {found:?}", case.name, i + 1));
                    }
                }
            }
            if exception && migrated_valid {
                failures.push(format!(
                    "{}: listed in MIGRATION_EXCEPTIONS but its migration validates",
                    case.name
                ));
            }
        }
    }
    let recorded: Vec<String> = corpus()
        .into_iter()
        .map(|case| case.name)
        .filter(|name| name.starts_with("real/recorded-"))
        .collect();
    for name in PI_WRITTEN
        .iter()
        .copied()
        .chain(recorded.iter().map(String::as_str))
    {
        if !valid.iter().any(|v| v == name) {
            failures.push(format!("{name}: written by pi, but not valid"));
        }
    }
    eprintln!("{} valid cases:\n  {}", valid.len(), valid.join("\n  "));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(valid.len() > 100, "only {} valid cases", valid.len());
}

/// Hand-made malformed lines: each is rejected with the error a reader needs (the instance
/// path and message given), and with few errors, thanks to the dispatch on `type`/`role`.
#[test]
fn malformed_lines_fail_for_the_right_reason() {
    let schemas = Schemas::load();
    let v = LineValidators::new(&schemas);
    let user = json!({"role": "user", "content": "hi", "timestamp": 1});
    let entry = |message: Value| json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "t", "message": message});
    let header = json!({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"});
    assert!(v.v3.is_valid(&entry(user.clone())) && v.v3.is_valid(&header));

    let mut no_parent = entry(user.clone());
    no_parent.as_object_mut().unwrap().remove("parentId");
    let mut v2_header = header.clone();
    v2_header["version"] = json!(2);
    let mut no_cwd = header.clone();
    no_cwd.as_object_mut().unwrap().remove("cwd");
    let assistant = json!({
        "role": "assistant", "content": [{"type": "text"}], "api": "a", "provider": "p",
        "model": "m", "stopReason": "stop", "timestamp": 1,
        "usage": {"input": -1, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
    });
    let compaction = json!({
        "type": "compaction", "id": "c", "parentId": "a1", "timestamp": "t", "summary": "s",
        "firstKeptEntryId": "a1", "tokensBefore": 1,
        "systemMessage": {"role": "user", "content": "", "timestamp": 1},
    });
    let v1_compaction = json!({
        "type": "compaction", "timestamp": "t", "summary": "s", "tokensBefore": 1,
        "firstKeptEntryIndex": "2",
    });
    let cases: Vec<(&str, &jsonschema::Validator, Value, &str, &str)> = vec![
        (
            "missing parentId",
            &v.v3,
            no_parent,
            "",
            "\"parentId\" is a required property",
        ),
        (
            "v2 header in a v3 file",
            &v.v3,
            v2_header.clone(),
            "/version",
            "3 was expected",
        ),
        (
            "v3 header in a v2 file",
            &v.v2,
            header.clone(),
            "/version",
            "2 was expected",
        ),
        (
            "header without cwd",
            &v.v3,
            no_cwd,
            "",
            "\"cwd\" is a required property",
        ),
        (
            "null line",
            &v.v3,
            Value::Null,
            "",
            "null is not of type \"object\"",
        ),
        (
            "user content not a string or blocks",
            &v.v3,
            entry(json!({"role": "user", "content": 5, "timestamp": 1})),
            "/message/content",
            "",
        ),
        (
            "text block without text",
            &v.v3,
            entry(assistant.clone()),
            "/message/content/0",
            "\"text\" is a required property",
        ),
        (
            "negative token count",
            &v.v3,
            entry(assistant),
            "/message/usage/input",
            "-1 is less than the minimum of 0",
        ),
        (
            "compaction systemMessage with another role",
            &v.v3,
            compaction,
            "/systemMessage/role",
            "\"system\" was expected",
        ),
        (
            "v1 compaction with a string index",
            &v.v1,
            v1_compaction,
            "/firstKeptEntryIndex",
            "is not of type \"integer\"",
        ),
    ];
    for (what, validator, value, path, message) in cases {
        let found: Vec<(String, String)> = validator
            .iter_errors(&value)
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect();
        assert!(
            found.iter().any(|(p, m)| p == path && m.contains(message)),
            "{what}: expected {path:?} {message:?}, got {found:?}"
        );
        assert!(
            found.len() <= 3,
            "{what}: {} errors is not readable: {found:?}",
            found.len()
        );
    }
}

/// Every file is a valid Draft 2020-12 schema whose `$id` ends with its file name.
#[test]
fn schema_files_are_valid_schemas_with_their_ids() {
    for (name, schema) in schema_files() {
        assert!(
            jsonschema::meta::is_valid(&schema),
            "{name} is not a valid schema"
        );
        let id = schema["$id"].as_str().unwrap();
        assert!(id.ends_with(&format!("/{name}")), "{name}: $id {id}");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(
            schema["$comment"]
                .as_str()
                .unwrap()
                .contains("cargo xtask schema")
        );
    }
}

/// `schemas/README.md` documents every file.
#[test]
fn the_readme_lists_every_schema() {
    let readme = std::fs::read_to_string(crate::schema_support::root().join("schemas/README.md"))
        .expect("schemas/README.md");
    for name in schema_files().keys() {
        assert!(
            readme.contains(name.as_str()),
            "schemas/README.md does not mention {name}"
        );
    }
}

/// Header lines are headers for every version, entries are entries.
#[test]
fn the_line_schemas_dispatch_on_type() {
    let schemas = Schemas::load();
    let v = LineValidators::new(&schemas);
    let unknown = json!({"type": "event", "timestamp": "t"});
    let v1_entry =
        json!({"type": "thinking_level_change", "timestamp": "t", "thinkingLevel": "off"});
    let v1_header = json!({"type": "session", "id": "s", "timestamp": "t", "cwd": "/"});
    assert!(is_header(&v1_header));
    for validator in [&v.v1, &v.v2, &v.v3] {
        assert!(
            validator.is_valid(&unknown),
            "unknown entry types are accepted"
        );
        assert!(!validator.is_valid(&json!([])) && !validator.is_valid(&json!("x")));
    }
    assert!(v.v1.is_valid(&v1_entry) && !v.v2.is_valid(&v1_entry) && !v.v3.is_valid(&v1_entry));
    assert!(v.v1.is_valid(&v1_header) && !v.v2.is_valid(&v1_header) && !v.v3.is_valid(&v1_header));
}

fn missing_field(reason: &str) -> Option<&str> {
    let start = reason.find("missing field `")? + "missing field `".len();
    let end = reason[start..].find('`')?;
    Some(&reason[start..start + end])
}

fn truncate(text: &str) -> String {
    if text.len() <= 300 {
        return text.to_string();
    }
    let mut end = 300;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
