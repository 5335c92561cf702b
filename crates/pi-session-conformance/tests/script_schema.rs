//! `conformance/writers/script.schema.json`, the JSON Schema of one line of a writer script
//! (`conformance/writers/SCRIPT.md`):
//! - every line of every scenario's `script.ndjson` is valid, and readable by a strict JSON
//!   parser (serde_json) unless the scenario is marked `javascriptOnly`;
//! - its operations are exactly those both drivers accept: the ones `script.rs` and
//!   `write-driver.mjs` dispatch on (read from their sources), and, run through
//!   `pi_session_conformance::script`, a minimal line of each works under exactly the
//!   profiles the schema's `x-profiles` lists, while an unknown operation is refused;
//! - a line missing a required field is rejected, by the schema and by our driver alike.

use jsonschema::Validator;
use pi_session_conformance::script;
use pi_session_format::json::{self as js, JsValue};
use pi_session_format::write::WriteProfile;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn schema() -> Value {
    serde_json::from_str(&read(
        &root().join("conformance/writers/script.schema.json"),
    ))
    .expect("script.schema.json is JSON")
}

fn validator(schema: &Value) -> Validator {
    assert!(
        jsonschema::meta::is_valid(schema),
        "script.schema.json is not a valid JSON Schema"
    );
    jsonschema::validator_for(schema).expect("script.schema.json compiles")
}

/// The schema's errors for `line`, one string each (empty: valid).
fn errors(validator: &Validator, line: &Value) -> Vec<String> {
    validator
        .iter_errors(line)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The operations the schema has: the `enum` of `op`.
fn schema_ops(schema: &Value) -> BTreeSet<String> {
    schema["properties"]["op"]["enum"]
        .as_array()
        .expect("properties.op.enum")
        .iter()
        .map(|op| op.as_str().expect("op names are strings").to_owned())
        .collect()
}

/// A JavaScript value as a serde_json one. Lone surrogates (JavaScript-only) become U+FFFD,
/// and a number serde_json cannot hold (an infinity, from `1e400`) `null`: neither is in a
/// field the schema constrains.
fn to_serde(value: &JsValue) -> Value {
    match value {
        JsValue::Null => Value::Null,
        JsValue::Bool(b) => Value::Bool(*b),
        JsValue::Number(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
        JsValue::String(s) => Value::String(s.to_string_lossy()),
        JsValue::Array(a) => Value::Array(a.0.iter().map(to_serde).collect()),
        JsValue::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.to_string_lossy(), to_serde(v)))
                .collect(),
        ),
    }
}

/// One scenario: its name, whether it is marked `javascriptOnly`, its script.
struct Scenario {
    name: String,
    javascript_only: bool,
    script: String,
}

fn scenarios() -> Vec<Scenario> {
    let corpus = root().join("conformance/writers");
    let mut out: Vec<Scenario> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|dir| dir.join("script.ndjson").is_file())
        .map(|dir| {
            let case: Value = serde_json::from_str(&read(&dir.join("case.json")))
                .unwrap_or_else(|e| panic!("{}/case.json: {e}", dir.display()));
            let javascript_only = match &case["javascriptOnly"] {
                Value::Null => false,
                Value::String(why) if !why.trim().is_empty() => true,
                other => panic!(
                    "{}/case.json: javascriptOnly is a non-empty string saying why, not {other}",
                    dir.display()
                ),
            };
            Scenario {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                javascript_only,
                script: read(&dir.join("script.ndjson")),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn every_line_of_every_script_is_valid() {
    let schema = schema();
    let validator = validator(&schema);
    let mut failures = Vec::new();
    let mut lines = 0;
    let scenarios = scenarios();
    assert!(scenarios.len() >= 9, "only {} scenarios", scenarios.len());
    for scenario in &scenarios {
        let mut strict_rejected = 0;
        for (i, text) in scenario.script.split('\n').enumerate() {
            if text.trim().is_empty() {
                continue;
            }
            let at = format!("{} line {}", scenario.name, i + 1);
            lines += 1;
            // serde_json refuses a lone surrogate escape (`\ud800`): "lone leading surrogate
            // in hex escape". Such lines belong in scenarios marked `javascriptOnly`, whose
            // lines are read, when serde_json cannot, with pi-session's JavaScript-like parser
            // (what `JSON.parse` reads) and validated with each lone surrogate as U+FFFD.
            let line = match serde_json::from_str::<Value>(text) {
                Ok(line) => line,
                Err(_) if scenario.javascript_only => {
                    strict_rejected += 1;
                    match js::parse(text) {
                        Ok(value) => to_serde(&value),
                        Err(e) => {
                            failures.push(format!("{at}: not JSON: {}", e.message()));
                            continue;
                        }
                    }
                }
                Err(strict) => {
                    failures.push(format!(
                        "{at}: a strict JSON parser (serde_json) cannot read it ({strict}); \
                         move such input to a scenario of its own marked \"javascriptOnly\""
                    ));
                    continue;
                }
            };
            for error in errors(&validator, &line) {
                failures.push(format!("{at}: {error}"));
            }
        }
        if scenario.javascript_only && strict_rejected == 0 {
            failures.push(format!(
                "{}: marked javascriptOnly, but a strict JSON parser reads every line",
                scenario.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(lines >= 80, "only {lines} script lines checked");
}

#[test]
fn the_examples_of_the_schema_are_valid() {
    let schema = schema();
    let validator = validator(&schema);
    let mut examples: Vec<(String, &Value)> = Vec::new();
    for example in schema["examples"].as_array().expect("top-level examples") {
        examples.push(("examples".into(), example));
    }
    for op in schema_ops(&schema) {
        let def = &schema["$defs"][&op];
        let listed = def["examples"].as_array();
        assert!(
            listed.is_some_and(|l| !l.is_empty()),
            "$defs/{op} has no examples"
        );
        for example in listed.into_iter().flatten() {
            examples.push((format!("$defs/{op}/examples"), example));
        }
    }
    let mut failures = Vec::new();
    for (at, example) in examples {
        for error in errors(&validator, example) {
            failures.push(format!("{at}: {example}: {error}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The operations `script.rs` dispatches on: the string patterns of its `match` arms, one per
/// line as rustfmt writes them (`("create", Some(_)) =>`, `"message" => {`).
fn rust_driver_ops() -> BTreeSet<String> {
    let source = read(&root().join("crates/pi-session-conformance/src/script.rs"));
    let mut ops = BTreeSet::new();
    for line in source.lines().map(str::trim) {
        let name = if let Some(rest) = line.strip_prefix("(\"") {
            rest.split_once("\",").map(|(name, _)| name)
        } else if let Some(rest) = line.strip_prefix('"') {
            rest.split_once("\" =>").map(|(name, _)| name)
        } else {
            None
        };
        if let Some(name) = name.filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_')) {
            ops.insert(name.to_owned());
        }
    }
    ops
}

/// The operations `write-driver.mjs` (pi itself) dispatches on: the keys of `APPENDS`
/// (`message: (sm, op) =>`) and the names compared with `op.op === "…"`.
fn node_driver_ops() -> BTreeSet<String> {
    let source = read(&root().join("conformance/reference/write-driver.mjs"));
    let mut ops = BTreeSet::new();
    for line in source.lines().map(str::trim) {
        if let Some((name, _)) = line.split_once(": (sm, op) =>") {
            ops.insert(name.to_owned());
        }
        let mut rest = line;
        while let Some(at) = rest.find("op.op === \"") {
            rest = &rest[at + "op.op === \"".len()..];
            if let Some((name, after)) = rest.split_once('"') {
                ops.insert(name.to_owned());
                rest = after;
            }
        }
    }
    ops
}

/// What every minimal line below runs after: a session pi has written (under every profile,
/// an assistant message writes the file) with entries `00000001` and `00000002`.
const PRELUDE: &str = r#"{"op":"create","cwd":"/work/schema","id":"0195f3a4-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z"}
{"op":"message","id":"00000001","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}
{"op":"message","id":"00000002","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767225602000}}
"#;

/// A minimal line of every operation: only its required fields. `create` is a script of its
/// own; the others run after [`PRELUDE`].
const MINIMAL: &[(&str, &str)] = &[
    (
        "create",
        r#"{"op":"create","cwd":"/work/schema","id":"0195f3a4-0000-7000-8000-000000000001"}"#,
    ),
    (
        "message",
        r#"{"op":"message","id":"00000003","message":{"role":"user","content":"more"}}"#,
    ),
    (
        "thinking_level_change",
        r#"{"op":"thinking_level_change","id":"00000003","thinkingLevel":"high"}"#,
    ),
    (
        "model_change",
        r#"{"op":"model_change","id":"00000003","provider":"p","modelId":"m"}"#,
    ),
    (
        "compaction",
        r#"{"op":"compaction","id":"00000003","summary":"s","firstKeptEntryId":"00000001","tokensBefore":1}"#,
    ),
    (
        "custom",
        r#"{"op":"custom","id":"00000003","customType":"k"}"#,
    ),
    (
        "custom_message",
        r#"{"op":"custom_message","id":"00000003","customType":"k","content":"c","display":false}"#,
    ),
    (
        "session_info",
        r#"{"op":"session_info","id":"00000003","name":"n"}"#,
    ),
    (
        "label",
        r#"{"op":"label","id":"00000003","targetId":"00000001"}"#,
    ),
    (
        "usage",
        r#"{"op":"usage","id":"00000003","kind":"other","provider":"p","model":"m","usage":{"input":1,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":1,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}"#,
    ),
    (
        "context_edit",
        r#"{"op":"context_edit","id":"00000003","targetId":"00000001","replacement":null}"#,
    ),
    ("branch", r#"{"op":"branch","from":"00000001"}"#),
    ("reset_leaf", r#"{"op":"reset_leaf"}"#),
    (
        "branch_with_summary",
        r#"{"op":"branch_with_summary","id":"00000003","from":"00000001","summary":"s"}"#,
    ),
    (
        "create_branched_session",
        r#"{"op":"create_branched_session","leaf":"00000002","sessionId":"0195f3a4-0000-7000-8000-000000000002"}"#,
    ),
    (
        "fork",
        r#"{"op":"fork","cwd":"/work/fork","sessionId":"0195f3a4-0000-7000-8000-000000000002"}"#,
    ),
    ("reopen", r#"{"op":"reopen"}"#),
    ("export", r#"{"op":"export"}"#),
];

/// Runs `line` through our driver (after [`PRELUDE`] unless it is a `create`).
fn run(op: &str, line: &str, profile: WriteProfile) -> Result<(), script::ScriptError> {
    let text = if op == "create" {
        format!("{line}\n")
    } else {
        format!("{PRELUDE}{line}\n")
    };
    script::run(&text, profile, &script::scratch()).map(|_| ())
}

#[test]
fn the_schema_covers_exactly_the_operations_of_both_drivers() {
    let schema = schema();
    let validator = validator(&schema);
    let ops = schema_ops(&schema);
    assert_eq!(ops.len(), 18, "{ops:?}");

    // Each operation: a discriminating if/then, a definition whose `op` is its name, its
    // profiles.
    let branches = schema["allOf"].as_array().expect("allOf");
    for op in &ops {
        let def = &schema["$defs"][op];
        assert_eq!(def["properties"]["op"]["const"], **op, "$defs/{op}");
        assert!(
            branches
                .iter()
                .any(|b| b["if"]["properties"]["op"]["const"] == **op
                    && b["then"]["$ref"] == format!("#/$defs/{op}")),
            "no if/then for {op}"
        );
        assert!(def["x-profiles"].is_array(), "$defs/{op} has no x-profiles");
    }
    assert_eq!(branches.len(), ops.len());

    // The drivers' own lists, from their sources.
    assert_eq!(rust_driver_ops(), ops, "script.rs vs script.schema.json");
    assert_eq!(
        node_driver_ops(),
        ops,
        "write-driver.mjs vs script.schema.json"
    );

    // And by running: a minimal line of each operation is valid, and our driver runs it
    // under exactly the profiles the schema lists (the others have no such operation).
    let minimal: BTreeSet<String> = MINIMAL.iter().map(|(op, _)| (*op).to_owned()).collect();
    assert_eq!(minimal, ops, "the minimal lines of this test");
    let mut failures = Vec::new();
    for (op, line) in MINIMAL {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["op"], *op, "{line}");
        for error in errors(&validator, &value) {
            failures.push(format!("{op}: the minimal line is not valid: {error}"));
        }
        let profiles = schema["$defs"][op]["x-profiles"].as_array().unwrap();
        for profile in WriteProfile::ALL {
            let listed = profiles.iter().any(|p| p == profile.short_name());
            match (run(op, line, profile), listed) {
                (Ok(()), true) => {}
                (Err(e), false) if e.message.contains("has no") => {}
                (Err(e), true) => failures.push(format!("{op} (pi {profile}): {e}")),
                (Ok(()), false) => failures.push(format!(
                    "{op} runs under pi {profile}, which its x-profiles does not list"
                )),
                (Err(e), false) => failures.push(format!(
                    "{op} (pi {profile}): fails, but not as an operation pi {profile} lacks: {e}"
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // An operation neither the schema nor the driver knows.
    let unknown = r#"{"op":"no_such_op","id":"00000003"}"#;
    assert!(!validator.is_valid(&serde_json::from_str(unknown).unwrap()));
    let refused = run("no_such_op", unknown, WriteProfile::V1_5).unwrap_err();
    assert!(refused.message.contains("unknown op"), "{refused}");
}

#[test]
fn lines_missing_a_required_field_are_rejected() {
    let schema = schema();
    let validator = validator(&schema);
    let mut failures = Vec::new();
    let mut checked = 0;
    for (op, line) in MINIMAL {
        let required = schema["$defs"][op]["required"].as_array().unwrap();
        for field in required.iter().filter_map(Value::as_str) {
            if field == "op" {
                continue;
            }
            let mut value: Value = serde_json::from_str(line).unwrap();
            value.as_object_mut().unwrap().remove(field);
            checked += 1;
            let errors = errors(&validator, &value);
            if !errors
                .iter()
                .any(|e| e.contains(&format!("\"{field}\" is a required property")))
            {
                failures.push(format!(
                    "{op} without {field}: the schema does not say it is missing: {errors:?}"
                ));
            }
            // Our driver refuses it too (under the newest profile, which has every operation).
            if run(op, &value.to_string(), WriteProfile::V1_5).is_ok() {
                failures.push(format!("{op} without {field}: our driver runs it"));
            }
        }
    }
    assert!(checked >= 30, "only {checked} required fields checked");

    // Beyond required fields: what the drivers ignore or fail on, the schema rejects.
    let invalid = [
        // Not an operation.
        r#"{"id":"00000003","message":{"role":"user","content":"x"}}"#,
        // An entry id is 8 characters.
        r#"{"op":"message","id":"0000003","message":{"role":"user","content":"x"}}"#,
        // `fromHook` is passed only after `details` (pi's trailing optional parameters).
        r#"{"op":"compaction","id":"00000003","summary":"s","firstKeptEntryId":"00000001","tokensBefore":1,"fromHook":true}"#,
        // An operation that draws no entry id gets none.
        r#"{"op":"branch","from":"00000001","id":"00000003"}"#,
        // Only new sessions draw session ids.
        r#"{"op":"reopen","sessionId":"0195f3a4-0000-7000-8000-000000000002"}"#,
        // A relative cwd.
        r#"{"op":"fork","cwd":"work","sessionId":"0195f3a4-0000-7000-8000-000000000002"}"#,
        // A time that is not ISO 8601.
        r#"{"op":"reset_leaf","timestamp":"yesterday"}"#,
    ];
    for line in invalid {
        if validator.is_valid(&serde_json::from_str(line).unwrap()) {
            failures.push(format!("the schema accepts {line}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
