//! The generator writes what pi writes: `JSON.stringify` form, pi's key orders, a valid tree,
//! compactions that point at real cut points; and the same bytes for the same options.
//! (That pi itself reads the files exactly like this crate does is checked against the
//! pinned reference by `cargo xtask bench check-gen`.)

use super::*;
use pi_session_format::PiVersion;
use pi_session_format::context::build_context;
use pi_session_format::json::{self, JsValue};
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::Session;
use pi_session_format::tree::{Index, Leaf};
use std::collections::HashMap;

fn opts(seed: u64, version: FileVersion, limit: Limit) -> Options {
    Options {
        seed,
        version,
        limit,
        linear: false,
    }
}

const ALL: [FileVersion; 3] = [FileVersion::V1, FileVersion::V2, FileVersion::V3];

fn lines(bytes: &[u8]) -> Vec<&str> {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    assert!(text.ends_with('\n'));
    text[..text.len() - 1].split('\n').collect()
}

fn keys(v: &JsValue) -> Vec<String> {
    v.as_object()
        .expect("object")
        .iter()
        .map(|(k, _)| k.to_string_lossy())
        .collect()
}

fn str_of<'v>(v: &'v JsValue, key: &str) -> Option<&'v str> {
    v.get(key).and_then(JsValue::as_str)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn same_options_same_bytes_other_seed_other_bytes() {
    for version in ALL {
        let o = opts(7, version, Limit::Bytes(200_000));
        let (a, sa) = generate_to_vec(&o);
        let (b, sb) = generate_to_vec(&o);
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        let (c, _) = generate_to_vec(&Options { seed: 8, ..o });
        assert_ne!(a, c);
    }
}

/// The output is pinned: if this fails, the generator's output changed, so bump
/// [`REVISION`] (cached benchmark files are keyed by it) and update the hashes.
#[test]
fn output_is_pinned() {
    let got: Vec<u64> = ALL
        .iter()
        .map(|&v| fnv1a(&generate_to_vec(&opts(1, v, Limit::Bytes(300_000))).0))
        .collect();
    assert_eq!(REVISION, 1);
    assert_eq!(
        got, PINNED,
        "generator output changed: bump REVISION, update PINNED"
    );
}

const PINNED: [u64; 3] = [
    9946778708348075868,
    7278043571031197617,
    3823765079709273942,
];

#[test]
fn size_is_reached_then_generation_stops() {
    for version in ALL {
        let (bytes, stats) = generate_to_vec(&opts(3, version, Limit::Bytes(500_000)));
        assert_eq!(stats.bytes, bytes.len() as u64);
        assert!(stats.bytes >= 500_000);
        assert!(stats.bytes < 500_000 + stats.max_line + 1);
        assert_eq!(stats.entries + 1, lines(&bytes).len() as u64);
        let (_, stats) = generate_to_vec(&opts(3, version, Limit::Entries(777)));
        assert_eq!(stats.entries, 777);
    }
    let (bytes, stats) = generate_to_vec(&opts(3, FileVersion::V3, Limit::Entries(0)));
    assert_eq!(lines(&bytes).len(), 1);
    assert_eq!(stats.entries, 0);
}

/// Every line is exactly `JSON.stringify(JSON.parse(line))`: compact, JavaScript's string
/// escapes and number formatting (our `json` module implements both and keeps key order).
#[test]
fn lines_are_json_stringify_output() {
    for version in ALL {
        for seed in 1..4 {
            let (bytes, _) = generate_to_vec(&opts(seed, version, Limit::Bytes(400_000)));
            for (n, line) in lines(&bytes).into_iter().enumerate() {
                let value = json::parse(line).unwrap_or_else(|e| panic!("line {n}: {e:?}"));
                assert_eq!(json::to_string(&value), line, "line {n}");
            }
        }
    }
}

/// pi's writer key orders (reference notes §3, §6, §7).
#[test]
fn key_orders_are_pis() {
    let base = ["type", "id", "parentId", "timestamp"];
    let with_base =
        |rest: &[&str]| -> Vec<String> { base.iter().chain(rest).map(|s| s.to_string()).collect() };
    let base_last = |front: &[&str]| -> Vec<String> {
        front
            .iter()
            .chain(&base[1..])
            .map(|s| s.to_string())
            .collect()
    };
    for version in [FileVersion::V2, FileVersion::V3] {
        let (bytes, _) = generate_to_vec(&opts(11, version, Limit::Bytes(4_000_000)));
        let mut seen = HashMap::new();
        for (n, line) in lines(&bytes).into_iter().enumerate() {
            let v = json::parse(line).unwrap();
            let ty = str_of(&v, "type").unwrap().to_string();
            let k = keys(&v);
            let ok = match ty.as_str() {
                "session" => k == ["type", "version", "id", "timestamp", "cwd"].map(String::from),
                "message" => k == with_base(&["message"]),
                "model_change" => k == with_base(&["provider", "modelId"]),
                "thinking_level_change" => k == with_base(&["thinkingLevel"]),
                "compaction" if version == FileVersion::V3 => {
                    k == with_base(&["summary", "firstKeptEntryId", "tokensBefore", "details"])
                }
                "compaction" => k == with_base(&["summary", "firstKeptEntryId", "tokensBefore"]),
                "branch_summary" if version == FileVersion::V3 => {
                    k == with_base(&["fromId", "summary", "details"])
                }
                "branch_summary" => k == with_base(&["fromId", "summary"]),
                "custom" => k == base_last(&["type", "customType", "data"]),
                "custom_message" => {
                    k == base_last(&["type", "customType", "content", "display"])
                        || k == base_last(&["type", "customType", "content", "display", "details"])
                }
                "label" => k == with_base(&["targetId", "label"]) || k == with_base(&["targetId"]),
                "session_info" => k == with_base(&["name"]),
                other => panic!("line {n}: unexpected type {other}"),
            };
            assert!(ok, "line {n}: {ty} keys {k:?}");
            if ty == "message" {
                let m = v.get("message").unwrap();
                let role = str_of(m, "role").unwrap().to_string();
                let mk = keys(m);
                let prefix: &[&str] = match role.as_str() {
                    "user" => &["role", "content", "timestamp"],
                    "assistant" => &[
                        "role",
                        "content",
                        "api",
                        "provider",
                        "model",
                        "usage",
                        "stopReason",
                        "timestamp",
                    ],
                    "toolResult" => &["role", "toolCallId", "toolName", "content"],
                    "bashExecution" => &["role", "command", "output"],
                    "hookMessage" => &["role", "customType", "content", "display"],
                    other => panic!("line {n}: unexpected role {other}"),
                };
                assert_eq!(&mk[..prefix.len()], prefix, "line {n}");
                if role == "assistant" {
                    let usage = m.get("usage").unwrap();
                    assert_eq!(
                        keys(usage),
                        [
                            "input",
                            "output",
                            "cacheRead",
                            "cacheWrite",
                            "totalTokens",
                            "cost"
                        ]
                    );
                    assert_eq!(
                        keys(usage.get("cost").unwrap()),
                        ["input", "output", "cacheRead", "cacheWrite", "total"]
                    );
                }
                *seen.entry(role).or_insert(0) += 1;
            }
            *seen.entry(ty).or_insert(0) += 1;
        }
        // The mix is there.
        for kind in [
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "compaction",
            "branch_summary",
            "label",
            "custom",
            "model_change",
            "thinking_level_change",
        ] {
            assert!(
                seen.get(kind).copied().unwrap_or(0) > 0,
                "{version:?}: no {kind}: {seen:?}"
            );
        }
        let extension = if version == FileVersion::V3 {
            "custom_message"
        } else {
            "hookMessage"
        };
        assert!(seen.contains_key(extension), "{version:?}: {seen:?}");
    }
}

/// Ids are 8 lowercase hex digits and unique, parents come earlier, timestamps are ISO with
/// milliseconds and `Z` and never go backwards, and every compaction's `firstKeptEntryId` is a
/// cut point (not a tool result) among its ancestors.
#[test]
fn the_tree_is_valid() {
    for version in [FileVersion::V2, FileVersion::V3] {
        let (mut compactions, mut branches) = (0, 0);
        for seed in [1, 2, 3] {
            let (bytes, stats) = generate_to_vec(&opts(seed, version, Limit::Bytes(3_000_000)));
            compactions += stats.compactions;
            branches += stats.branch_summaries;
            let mut parent: HashMap<String, Option<String>> = HashMap::new();
            let mut role: HashMap<String, String> = HashMap::new();
            let mut last_ts = String::new();
            for (n, line) in lines(&bytes).into_iter().enumerate().skip(1) {
                let v = json::parse(line).unwrap();
                let id = str_of(&v, "id").unwrap().to_string();
                assert!(
                    id.len() == 8
                        && id
                            .bytes()
                            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                    "line {n}: id {id}"
                );
                let p = match v.get("parentId").unwrap() {
                    JsValue::Null => None,
                    p => Some(p.as_str().unwrap().to_string()),
                };
                if let Some(p) = &p {
                    assert!(parent.contains_key(p), "line {n}: parent {p} not earlier");
                }
                let ts = str_of(&v, "timestamp").unwrap().to_string();
                assert!(
                    ts.len() == 24 && ts.ends_with('Z') && &ts[19..20] == ".",
                    "{ts}"
                );
                assert!(ts >= last_ts, "line {n}: time went back");
                last_ts = ts;
                if str_of(&v, "type") == Some("compaction") {
                    let fk = str_of(&v, "firstKeptEntryId").unwrap();
                    let mut cur = p.clone();
                    let mut found = false;
                    while let Some(c) = cur {
                        if c == fk {
                            found = true;
                            break;
                        }
                        cur = parent[&c].clone();
                    }
                    assert!(found, "line {n}: firstKeptEntryId {fk} is not an ancestor");
                    assert_ne!(role.get(fk).map(String::as_str), Some("toolResult"));
                }
                if let Some(m) = v.get("message") {
                    role.insert(id.clone(), str_of(m, "role").unwrap().to_string());
                }
                assert!(parent.insert(id, p).is_none(), "line {n}: duplicate id");
            }
        }
        assert!(
            compactions > 3 && branches > 0,
            "{version:?}: too few to test"
        );
    }
}

#[test]
fn v1_is_linear_and_counts_the_header() {
    let (bytes, stats) = generate_to_vec(&opts(5, FileVersion::V1, Limit::Bytes(3_000_000)));
    assert!(stats.compactions > 0);
    let values: Vec<JsValue> = lines(&bytes)
        .into_iter()
        .map(|l| json::parse(l).unwrap())
        .collect();
    assert_eq!(
        keys(&values[0]),
        [
            "type",
            "id",
            "timestamp",
            "cwd",
            "provider",
            "modelId",
            "thinkingLevel"
        ]
    );
    for (i, v) in values.iter().enumerate().skip(1) {
        let k = keys(v);
        assert!(!k.contains(&"id".to_string()) && !k.contains(&"parentId".to_string()));
        assert_eq!(k[..2], ["type", "timestamp"]);
        if let Some(m) = v.get("message")
            && str_of(m, "role") == Some("assistant")
        {
            assert!(m.get("usage").unwrap().get("totalTokens").is_none());
        }
        if str_of(v, "type") == Some("compaction") {
            assert_eq!(
                k,
                [
                    "type",
                    "timestamp",
                    "summary",
                    "firstKeptEntryIndex",
                    "tokensBefore"
                ]
            );
            let JsValue::Number(fk) = v.get("firstKeptEntryIndex").unwrap() else {
                panic!("number expected");
            };
            let fk = *fk as usize;
            assert!(fk > 0 && fk < i, "line {i}: index {fk}");
            let target = &values[fk];
            let kept_role = target.get("message").and_then(|m| str_of(m, "role"));
            assert!(matches!(
                kept_role,
                Some("user" | "assistant" | "bashExecution")
            ));
        }
    }
}

/// The strict typed model accepts every v3 line as a known entry type.
#[test]
fn v3_lines_validate_against_the_typed_model() {
    use pi_session_format::types::{Entry, FileEntry};
    let (bytes, _) = generate_to_vec(&opts(2, FileVersion::V3, Limit::Bytes(1_000_000)));
    for (n, line) in lines(&bytes).into_iter().enumerate() {
        let entry: FileEntry =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {n}: {e}\n{line}"));
        assert!(
            !matches!(entry, FileEntry::Entry(Entry::Unknown(_))),
            "line {n}: unknown entry"
        );
    }
}

/// The library loads every version, walks the whole leaf path and builds the context.
#[test]
fn sessions_load_and_build_context() {
    for version in ALL {
        let (bytes, stats) = generate_to_vec(&opts(9, version, Limit::Bytes(1_500_000)));
        let mut ids = SequentialIds::default();
        let session = Session::loader(PiVersion::V0_73)
            .ids(&mut ids)
            .load(&bytes)
            .unwrap();
        assert!(session.dropped.is_empty() && session.skipped.is_empty());
        assert_eq!(session.entries.len() as u64, stats.entries);
        let index = Index::build(&session);
        let leaf = index.leaf_record(&session, &Leaf::Current).unwrap();
        assert_eq!(
            index.path(&session, leaf).unwrap().len() as u64,
            stats.path_entries
        );
        let context = build_context(&session, &index, &Leaf::Current, PiVersion::V0_73).unwrap();
        assert!(context.messages.len() > 10);
        if stats.compactions > 0 {
            let json = json::to_string(&context.to_json());
            assert!(
                json.starts_with("{\"messages\":[{\"role\":\"compactionSummary\","),
                "{version:?}"
            );
        }
    }
}

#[test]
fn linear_chains() {
    for version in ALL {
        let o = Options {
            seed: 1,
            version,
            limit: Limit::Entries(5_000),
            linear: true,
        };
        let (bytes, stats) = generate_to_vec(&o);
        assert_eq!(stats.entries, 5_000);
        assert_eq!(stats.path_entries, 5_000);
        let session = Session::from_bytes(&bytes, PiVersion::V0_73).unwrap();
        let index = Index::build(&session);
        let context = build_context(&session, &index, &Leaf::Current, PiVersion::V0_73).unwrap();
        let settings = if version == FileVersion::V1 { 0 } else { 2 };
        assert_eq!(context.messages.len(), 5_000 - settings);
        if version != FileVersion::V1 {
            let mut prev: Option<String> = None;
            for line in lines(&bytes).into_iter().skip(1) {
                let v = json::parse(line).unwrap();
                let p = v.get("parentId").unwrap().as_str().map(String::from);
                assert_eq!(p, prev);
                prev = str_of(&v, "id").map(String::from);
            }
        }
    }
}

#[test]
fn sizes() {
    assert_eq!(size_label(100_000_000), "100MB");
    assert_eq!(size_label(1 << 30), "1GiB");
    assert_eq!(size_label(1234), "1234B");
    let o = Options {
        seed: 42,
        version: FileVersion::V3,
        limit: Limit::Bytes(100_000_000),
        linear: false,
    };
    assert_eq!(file_name(&o), "gen-r1-v3-s42-100MB.jsonl");
}

#[test]
fn generated_sessions_pass_the_validator() {
    use pi_session_validate::{Code, Options as ValidateOptions, Severity, validate};
    for version in [FileVersion::V1, FileVersion::V2, FileVersion::V3] {
        for seed in 1..=4 {
            let (bytes, _) = generate_to_vec(&opts(seed, version, Limit::Bytes(200_000)));
            let report = validate(&bytes, &ValidateOptions::default());
            let unexpected: Vec<String> = report
                .diagnostics
                .iter()
                // Version 1 and 2 files are legacy by definition; branches make extra roots.
                .filter(|d| !matches!(d.code, Code::VersionLegacy | Code::ExtraRoot))
                .map(|d| format!("{} {:?} {}", d.code, d.location.map(|l| l.line), d.message))
                .collect();
            assert!(
                unexpected.is_empty(),
                "v{} seed {seed}: {unexpected:#?}",
                version.number()
            );
            assert!(
                report
                    .diagnostics
                    .iter()
                    .all(|d| d.severity != Severity::Error)
            );
        }
    }
}

#[test]
fn iso_dates() {
    assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso(1_780_065_672_595), "2026-05-29T14:41:12.595Z");
    assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
    assert_eq!(iso(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
}
