//! Property test: the schemas and the typed serde model agree on accept/reject for random
//! entry-like values.
//!
//! Values come from an `arbitrary::Unstructured` over seeded pseudo-random bytes (so every run
//! checks the same values, and a failure names the seed that reproduces it):
//!
//! - *mutants*: a well-formed corpus line (or one of the shapes below that the corpus lacks)
//!   with one to four random edits: a key removed, a value replaced by a random value or by a
//!   subtree of another line (a valid object in the wrong place), a known key added, a
//!   `type`/`role` tag switched to another known tag;
//! - *generated* objects: a known or unknown `type`, a random subset of the fields of every
//!   entry type, random values.
//!
//! Each value is checked against the three line schemas and `schema_support::oracle`.
//! Numbers are generated within JavaScript's safe-integer range, fractional numbers are never
//! integral and the corpus lines' integral floats (`0.0` costs) are made integers, since JSON
//! Schema cannot tell `2.0` from `2` or see the bounds of `u64` (pi, writing JavaScript
//! numbers, produces neither; see `schemas/README.md`).

use crate::schema_support::{LineValidators, Schemas, corpus, oracle};
use arbitrary::Unstructured;
use serde_json::{Map, Value, json};

/// Values checked per run.
const RUNS: u64 = 3000;

const ENTRY_TYPES: &[&str] = &[
    "session",
    "message",
    "thinking_level_change",
    "model_change",
    "usage",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "context_edit",
    "label",
    "session_info",
    "event",
];
const ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "hookMessage",
    "branchSummary",
    "compactionSummary",
    "system",
    "developer",
];
const BLOCK_TYPES: &[&str] = &["text", "thinking", "image", "toolCall", "redactedThinking"];
/// Field names of every shape (so that additions hit typed fields).
const KEYS: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "version",
    "cwd",
    "parentSession",
    "provider",
    "modelId",
    "model",
    "thinkingLevel",
    "message",
    "role",
    "content",
    "api",
    "usage",
    "stopReason",
    "errorMessage",
    "responseId",
    "diagnostics",
    "deferred",
    "toolCallId",
    "toolName",
    "isError",
    "details",
    "command",
    "output",
    "exitCode",
    "cancelled",
    "truncated",
    "excludeFromContext",
    "customType",
    "display",
    "summary",
    "fromId",
    "tokensBefore",
    "firstKeptEntryId",
    "firstKeptEntryIndex",
    "fromHook",
    "systemMessage",
    "sections",
    "toolsAdded",
    "toolsRemoved",
    "targetId",
    "replacement",
    "label",
    "name",
    "kind",
    "note",
    "data",
    "text",
    "thinking",
    "thinkingSignature",
    "redacted",
    "mimeType",
    "arguments",
    "partialJson",
    "input",
    "cacheRead",
    "cacheWrite",
    "totalTokens",
    "cost",
    "total",
    "reasoning",
];
const STRINGS: &[&str] = &[
    "",
    "x",
    "a1",
    "2026-01-01T00:00:00.000Z",
    "root",
    "session",
    "user",
];

/// Shapes the corpus lacks or has rarely, so that mutations reach their fields.
const EXTRA_SEEDS: &[&str] = &[
    r#"{"type":"usage","id":"u1","parentId":null,"timestamp":"t","kind":"cache_warm","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":5,"cacheWrite":0,"cacheWrite1h":0,"totalTokens":5,"cost":{"input":0,"output":0,"cacheRead":0.5,"cacheWrite":0,"total":0.5}},"note":"idle"}"#,
    r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"t","summary":"s","firstKeptEntryId":"a1","tokensBefore":9,"details":null,"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"fromHook":false,"systemMessage":{"role":"system","content":"","sections":{"a":"b","c":null},"toolsAdded":[{"name":"read","description":"d","parameters":{},"constrainedSampling":false}],"toolsRemoved":[{"name":"w"}],"timestamp":1}}"#,
    r#"{"type":"context_edit","id":"e1","parentId":"c1","timestamp":"t","targetId":"a1","replacement":{"content":[{"type":"text","text":"x"}]}}"#,
    r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"","thinkingSignature":"s","redacted":true},{"type":"toolCall","id":"c","name":"n","arguments":{},"thoughtSignature":"g","namespace":"ns","partialJson":"{"}],"api":"a","provider":"p","model":"m","responseModel":"r","providerThinkingLevel":"high","diagnostics":[{"type":"fallback","timestamp":1,"error":{"name":"E","message":"m","stack":"s","code":429},"details":{}}],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"reasoning":1,"cost":{"input":1e-6,"output":0,"cacheRead":0,"cacheWrite":0,"total":1e-6}},"stopReason":"deferred","deferred":{"provider":"p","modelId":"m","api":"a","id":"h","expiresAt":1,"pollAfterMs":2,"data":[]},"rawStopReason":"end","endTurn":true,"timestamp":2}}"#,
    r#"{"type":"message","id":"b1","parentId":"a2","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"","exitCode":null,"cancelled":true,"truncated":false,"fullOutputPath":"/tmp/x","timestamp":3,"excludeFromContext":true}}"#,
    r#"{"type":"message","id":"t1","parentId":"b1","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"n","content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"details":{"k":1},"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"isError":true,"timestamp":4}}"#,
    r#"{"type":"message","id":"h1","parentId":"t1","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"c","display":false,"details":null,"timestamp":5}}"#,
    r#"{"type":"message","id":"s1","parentId":"h1","timestamp":"t","message":{"role":"branchSummary","summary":"s","fromId":null,"timestamp":6}}"#,
    r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/","parentSession":"/p","provider":"p","modelId":"m","thinkingLevel":"off","branchedFrom":"/b","model":"p/m"}"#,
    r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":1,"tokensBefore":9}"#,
];

/// Deterministic bytes for `Unstructured` (xorshift64*).
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

fn number(u: &mut Unstructured) -> Value {
    const SAFE: i64 = (1 << 53) - 1;
    match u.int_in_range(0..=4u8).unwrap_or(0) {
        0 => json!(u.int_in_range(0..=3i64).unwrap_or(0)),
        1 => json!(-u.int_in_range(1..=1000i64).unwrap_or(1)),
        2 => json!(u.int_in_range(-SAFE..=SAFE).unwrap_or(0)),
        3 => json!(u.int_in_range(0..=1000i64).unwrap_or(0) as f64 + 0.5),
        _ => json!(1.5e-7),
    }
}

/// A random JSON value, nested at most `depth` deep.
fn value(u: &mut Unstructured, depth: u32) -> Value {
    let kinds = if depth == 0 { 5 } else { 7 };
    match u.int_in_range(0..=kinds).unwrap_or(0) {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary().unwrap_or(false)),
        2 | 3 => number(u),
        4 | 5 => {
            let pool = [STRINGS, ENTRY_TYPES, ROLES, BLOCK_TYPES];
            let list = u.choose(&pool).copied().unwrap_or(STRINGS);
            json!(u.choose(list).copied().unwrap_or(""))
        }
        6 => Value::Array(
            (0..u.int_in_range(0..=2).unwrap_or(0))
                .map(|_| value(u, depth - 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3).unwrap_or(0) {
                let key = u.choose(KEYS).copied().unwrap_or("x");
                map.insert(key.into(), value(u, depth - 1));
            }
            Value::Object(map)
        }
    }
}

/// Every path (keys and indexes) to a node of `value`, the root included.
fn paths(value: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                prefix.push(json!(k));
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                prefix.push(json!(i));
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn node<'a>(value: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match step {
        Value::String(k) => &mut v[k.as_str()],
        Value::Number(i) => &mut v[i.as_u64().unwrap() as usize],
        _ => unreachable!(),
    })
}

fn mutate(u: &mut Unstructured, value: &mut Value, seeds: &[Value]) {
    let mut all = Vec::new();
    paths(value, &mut Vec::new(), &mut all);
    let path = u.choose(&all).cloned().unwrap_or_default();
    let target = node(value, &path);
    match u.int_in_range(0..=5u8).unwrap_or(0) {
        0 => {
            if let Some(map) = target.as_object_mut() {
                let keys: Vec<String> = map.keys().cloned().collect();
                if let Ok(key) = u.choose(&keys) {
                    map.remove(key);
                }
            }
        }
        1 => *target = value_at_depth(u),
        2 => {
            // A subtree of another line: a valid object in the wrong place.
            let seed = u.choose(seeds).cloned().unwrap_or(Value::Null);
            let mut inner = Vec::new();
            paths(&seed, &mut Vec::new(), &mut inner);
            let inner_path = u.choose(&inner).cloned().unwrap_or_default();
            let mut seed = seed;
            *target = node(&mut seed, &inner_path).take();
        }
        3 | 4 => {
            if let Some(map) = target.as_object_mut() {
                let key = u.choose(KEYS).copied().unwrap_or("id");
                map.insert(key.into(), value_at_depth(u));
            }
        }
        _ => {
            if let Some(map) = target.as_object_mut() {
                let (key, tags) = if map.contains_key("role") {
                    ("role", ROLES)
                } else if map.contains_key("text") || map.contains_key("arguments") {
                    ("type", BLOCK_TYPES)
                } else {
                    ("type", ENTRY_TYPES)
                };
                map.insert(key.into(), json!(u.choose(tags).copied().unwrap_or("x")));
            }
        }
    }
}

fn value_at_depth(u: &mut Unstructured) -> Value {
    let depth = u.int_in_range(0..=2).unwrap_or(0);
    value(u, depth)
}

/// `0.0` → `0` everywhere (costs are written either way), so that a subtree moved into an
/// integer field cannot bring an integral float there (see the module docs).
fn integral_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.5);
            if f.fract() == 0.0 && f.abs() < 9e15 {
                *value = json!(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(integral_floats_to_integers),
        _ => {}
    }
}

/// An entry-like object: a tag and a random subset of the known fields.
fn generated(u: &mut Unstructured) -> Value {
    let mut map = Map::new();
    map.insert(
        "type".into(),
        json!(u.choose(ENTRY_TYPES).copied().unwrap_or("message")),
    );
    for key in ["id", "parentId", "timestamp", "version", "cwd"] {
        if u.ratio(3u8, 4u8).unwrap_or(true) {
            let v = match key {
                "version" => json!(u.int_in_range(1..=3).unwrap_or(3)),
                "parentId" if u.arbitrary().unwrap_or(false) => Value::Null,
                _ => json!("x"),
            };
            map.insert(key.into(), v);
        }
    }
    for _ in 0..u.int_in_range(0..=6).unwrap_or(0) {
        let key = u.choose(KEYS).copied().unwrap_or("x");
        map.insert(key.into(), value_at_depth(u));
    }
    Value::Object(map)
}

#[test]
fn serde_and_the_schemas_agree_on_random_lines() {
    let schemas = Schemas::load();
    let validators = LineValidators::new(&schemas);
    let mut seeds: Vec<Value> = corpus()
        .iter()
        .flat_map(|case| case.lines.iter().filter_map(|(_, v)| v.clone()))
        .filter(|v| oracle(v, 3).is_ok() || oracle(v, 1).is_ok())
        .collect();
    seeds.iter_mut().for_each(integral_floats_to_integers);
    seeds.sort_by_cached_key(Value::to_string);
    seeds.dedup();
    seeds.extend(EXTRA_SEEDS.iter().map(|s| serde_json::from_str(s).unwrap()));

    let mut disagreements = Vec::new();
    let mut accepted = [0u32; 3];
    for seed in 0..RUNS {
        let data = bytes(seed, 512);
        let mut u = Unstructured::new(&data);
        let value = if u.ratio(1u8, 5u8).unwrap_or(false) {
            generated(&mut u)
        } else {
            let mut value = u.choose(&seeds).cloned().unwrap();
            for _ in 0..u.int_in_range(1..=4).unwrap_or(1) {
                mutate(&mut u, &mut value, &seeds);
            }
            value
        };
        for version in [1u32, 2, 3] {
            let expected = oracle(&value, version);
            let valid = validators.get(version).is_valid(&value);
            if expected.is_ok() {
                accepted[version as usize - 1] += 1;
            }
            if expected.is_ok() != valid {
                disagreements.push(format!(
                    "seed {seed}, v{version}: model {expected:?}, schema valid: {valid}\n    {value}"
                ));
            }
        }
    }
    eprintln!(
        "{RUNS} random lines; accepted by v1/v2/v3: {}/{}/{}",
        accepted[0], accepted[1], accepted[2]
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The values exercise both verdicts.
    for n in accepted {
        assert!(
            n as u64 > RUNS / 10 && (n as u64) < RUNS * 9 / 10,
            "{accepted:?}"
        );
    }
}
