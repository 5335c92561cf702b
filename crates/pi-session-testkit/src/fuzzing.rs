//! The invariants behind the cargo-fuzz targets of `fuzz/` (feature `arbitrary`).
//!
//! Each public check takes the fuzzer's input and panics, with a message naming the
//! invariant, when it does not hold. The targets in `fuzz/fuzz_targets/` are one-line shims
//! over these functions, and `tests/it/fuzz_*.rs` run the same functions on stable over the
//! conformance corpus and seeded random inputs, so `cargo test` exercises them too.
//!
//! Long file: the checks of the `parse_bytes`, `roundtrip`, `migrate`, `context`, `to_llm`
//! and `validate` targets, each a few short functions over the shared helpers at the bottom;
//! the longer models already live in `fuzzing/` (`model.rs`, `spec.rs`, `tree.rs`,
//! `info.rs`, `redact.rs`). Splitting the rest per target would scatter those helpers.
//!
//! | check | invariant |
//! |---|---|
//! | [`parse_bytes`] | any bytes load or are refused without a panic; every non-blank line is exactly one record, diagnostic (dropped line) or skipped value, at its place, and every other byte is an LF or whitespace; `scan_skeleton` agrees with `parse` |
//! | [`roundtrip`] | `JSON.stringify` then `JSON.parse` gives the same value and text again; a loaded session written and loaded again gives the same records, diagnostics and bytes; unknown fields survive a rewrite |
//! | [`streaming_eq_whole`] | the lines of an input fed in chunks of any sizes ([`model::ChunkedLines`]) are those of [`pi_session_format::read`] over the whole input |
//! | [`migrate()`] | loading (v1→v3 at once) equals the migration functions, and equals writing the v2 file and loading that; a v3 file and a migrated file load unchanged; records, their order and every member but the ids survive; v1 ids are unique and chained |
//! | [`context`] | on generated sessions ([`spec::SessionSpec`]): the context terminates, reports exactly the parent cycles there are, and equals the rules' model ([`model::context`]): every message from an entry on the path, compaction window, settings |
//! | [`to_llm`] | on generated messages ([`spec::LlmSpec`]): `convertToLlm` equals the rules' templates ([`model::to_llm`]) |
//! | [`tree()`] | `getTree()` terminates, writes JSON bounded by the input's size, each reachable node once when not pi's form, and exactly pi's output (a literal model of `getTree()`) when it says so |
//! | [`info()`] | the streamed listing entry, read in pieces of any size, equals the former whole-file implementation ([`pi_session_format::info::oracle`]) on any bytes and on generated sessions, and is bounded by the input's size |
//! | [`append()`] | random batches (valid and invalid) appended with `FileAppend` to random sessions: a refused batch is refused at its first bad entry and changes nothing; an accepted one passes the validator in the plan's check document and leaves the old bytes, a fence after a torn line, then exactly the model's lines (ids, parents, times) |
//! | [`writer()`] | arbitrary operations on a `SessionWriter` never panic, a refused one changes nothing, and the file is strict-valid, loads whole and holds exactly the entries appended, in order |
//! | [`export()`] | any loadable bytes export to Markdown and HTML without a panic, and every tag of the HTML, and of the Markdown rendered by pulldown-cmark, is one the exporter writes, with no event handler, no `javascript:` URL and images only as `data:` URLs (none in the Markdown) |
//! | [`search()`] | a match is found iff the pattern matches the decoded text: `search::find`, raw-line prefilter and all, equals the pattern over every text `search::texts` decodes, snippets included; `search::any` agrees; `search::in_bytes`, which reads only the header of a file the pattern cannot match raw, fails when loading fails and finds the same |
//! | [`redact()`] | any bytes redact into as many lines; a JSON line stays JSON with the same keys, numbers and literals, its strings equal unless they held a secret; a secret planted for any rule, in any place and spelling, is gone from the bytes and every decoded string |
//! | [`validate`] | the validator never panics, its report is consistent (counts, verdicts, locations inside the file), a file without errors loads without dropping or skipping a line and builds its context, and a pi-loadable file also loads without a rewrite |

mod append;
mod export;
mod info;
pub mod model;
mod redact;
mod repair;
mod search;
pub mod spec;
mod tree;
mod writer;

pub use append::append;
pub use export::export;
pub use info::{check_info, info};
pub use redact::{check_gone, check_line, redact};
pub use repair::repair;
pub use search::search;
pub use spec::{LlmSpec, SessionSpec};
pub use tree::tree;
pub use writer::writer;

use arbitrary::{Arbitrary, Unstructured};
use model::{Expected, ModelContext, ModelLine, is, keys, text, text_without, truthy};
use pi_session_format::context::{Message, build_context};
use pi_session_format::json::{self, JsValue, to_string};
use pi_session_format::migrate::{self, SequentialIds};
use pi_session_format::read;
use pi_session_format::session::whole_file;
use pi_session_format::session::{Key, Kind, LoadError, Session};
use pi_session_format::tree::{Index, Leaf};
use pi_session_format::{Dialect, PiVersion};
use std::collections::HashSet;

/// The two sets of reading rules the library follows (1.5.2 reads as 0.87.1).
const PIS: [PiVersion; 2] = [PiVersion::V0_73, PiVersion::V0_87];

/// The header prepended by [`migrate()`] to inputs that have none: a v1 header.
pub const V1_HEADER: &str =
    r#"{"type":"session","id":"fuzz","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

fn load(bytes: &[u8], pi: PiVersion) -> Result<Session<'_>, LoadError> {
    Session::loader(pi)
        .ids(&mut SequentialIds::default())
        .load(bytes)
}

// =============================================================================================
// parse_bytes
// =============================================================================================

/// Loads `data` with both pi versions' rules and checks that every byte is accounted for.
pub fn parse_bytes(data: &[u8]) {
    for pi in PIS {
        check_load(data, pi);
    }
}

/// What pi keeps of a parsed value: everything for 0.73.1, truthy values for 0.87.1 (E2).
fn kept(value: &JsValue, pi: PiVersion) -> bool {
    !pi.reads_like_0_87() || truthy(Some(value))
}

/// Whether the file's first line (ended by a newline) is omp's title slot: an object with
/// `type` "title", `v` 1, string `title`, `updatedAt` and `pad`, and `source` absent, "auto"
/// or "user" (omp's `parseTitleSlotObject`), after a BOM (which omp's reading drops).
fn is_title_slot(data: &[u8]) -> bool {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let Some(end) = data.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let Some(value) = std::str::from_utf8(&data[..end])
        .ok()
        .and_then(|line| json::parse(line).ok())
    else {
        return false;
    };
    let string = |key| matches!(value.get(key), Some(JsValue::String(_)));
    is(value.get("type"), "title")
        && matches!(value.get("v"), Some(JsValue::Number(v)) if *v == 1.0)
        && string("title")
        && string("updatedAt")
        && string("pad")
        && match value.get("source") {
            None => true,
            Some(source) => is(Some(source), "auto") || is(Some(source), "user"),
        }
}

fn is_header(value: &JsValue) -> bool {
    is(value.get("type"), "session") && value.as_object().is_some()
}

fn expected_kind(value: &JsValue) -> Kind {
    match value {
        JsValue::Object(_) if is_header(value) => Kind::Header,
        JsValue::Object(_) => Kind::Entry {
            type_: value
                .get("type")
                .and_then(JsValue::as_str)
                .map(|t| t.to_owned().into()),
        },
        JsValue::Null => Kind::Null,
        JsValue::Array(_) => Kind::Other,
        v if !truthy(Some(v)) => Kind::Falsy,
        _ => Kind::Other,
    }
}

fn check_load(data: &[u8], pi: PiVersion) {
    let lines = model::lines(data, !pi.reads_like_0_87());
    let parsed: Vec<Result<JsValue, json::ParseError>> =
        lines.iter().map(|l| json::parse(&l.text)).collect();
    for (line, value) in lines.iter().zip(&parsed) {
        check_skeleton(line, value);
        check_cursor(line, value);
    }
    let keeps = |i: usize| parsed[i].as_ref().is_ok_and(|v| kept(v, pi));
    let first = (0..lines.len()).find(|&i| keeps(i));
    let session = match load(data, pi) {
        Err(LoadError::Empty { .. }) => {
            assert!(
                first.is_none(),
                "{pi:?}: refused as empty, but line {} holds a value",
                first.map_or(0, |i| lines[i].number)
            );
            return;
        }
        Err(LoadError::InvalidHeader { line, reason, .. }) => {
            let i = first.expect("refused for its header, but no line holds a value");
            assert_eq!(line, lines[i].number, "{pi:?}: the refused header's line");
            let value = parsed[i].as_ref().expect("kept values parse");
            assert!(
                !(is_header(value) && matches!(value.get("id"), Some(JsValue::String(_)))),
                "{pi:?}: a valid header was refused: {reason}"
            );
            return;
        }
        Err(LoadError::OtherDialect { line, .. }) => {
            // Read as pi's, a file whose first line is omp's title slot: the header check
            // failed (the slot is the first value) and the message names omp instead.
            assert_eq!(line, 1);
            assert!(
                is_title_slot(data),
                "{pi:?}: called omp's without a title slot"
            );
            let i = first.expect("refused for its header, but no line holds a value");
            let value = parsed[i].as_ref().expect("kept values parse");
            assert!(
                !is_header(value),
                "{pi:?}: a valid header was refused as omp's"
            );
            return;
        }
        Err(e) => panic!("{pi:?}: refused for a reason the model does not know: {e}"),
        Ok(session) => session,
    };
    let first = first.expect("loaded without any value");
    let header = parsed[first].as_ref().expect("kept values parse");
    assert!(
        is_header(header) && matches!(header.get("id"), Some(JsValue::String(_))),
        "{pi:?}: loaded with an invalid header on line {}",
        lines[first].number
    );

    // Every non-blank line is exactly one record, dropped line or skipped value, in order.
    let skipped: Vec<usize> = session.skipped.iter().map(|s| s.line).collect();
    let skipped_set: HashSet<usize> = skipped.iter().copied().collect();
    assert_eq!(
        skipped.len(),
        skipped_set.len(),
        "{pi:?}: a line skipped twice"
    );
    let mut records = session.records.iter();
    let mut dropped = session.dropped.iter();
    for (line, value) in lines.iter().zip(&parsed) {
        let raw = &data[line.offset..line.offset + line.len];
        match value {
            Err(error) => {
                let d = dropped.next().unwrap_or_else(|| {
                    panic!("{pi:?}: unparseable line {} has no diagnostic", line.number)
                });
                assert_eq!(
                    (d.line, d.offset, d.len),
                    (line.number, line.offset, line.len),
                    "{pi:?}: the diagnostic's place"
                );
                assert_eq!(session.dropped_bytes(d), raw, "{pi:?}: dropped bytes");
                let column = 1 + line
                    .text
                    .get(..error.offset)
                    .map_or(error.offset, |s| s.chars().count());
                assert_eq!(
                    d.column, column,
                    "{pi:?}: diagnostic column, line {}",
                    d.line
                );
            }
            Ok(value) if !kept(value, pi) => assert!(
                skipped_set.contains(&line.number),
                "{pi:?}: ignored value on line {} is not reported as skipped",
                line.number
            ),
            Ok(value) => {
                let r = records.next().unwrap_or_else(|| {
                    panic!("{pi:?}: line {} parses but has no record", line.number)
                });
                assert_eq!(
                    (r.line, r.offset),
                    (line.number, line.offset),
                    "{pi:?}: the record's place"
                );
                assert_eq!(r.text(), line.text, "{pi:?}: record text, line {}", r.line);
                assert_eq!(
                    r.kind,
                    expected_kind(value),
                    "{pi:?}: kind, line {}",
                    r.line
                );
                if !matches!(value, JsValue::Object(_) | JsValue::Array(_)) {
                    assert_eq!(r.id, Key::Undefined, "{pi:?}: id of a non-object");
                } else if !r.is_rewritten() {
                    for (key, member) in [
                        (&r.id, value.get("id")),
                        (&r.parent_id, value.get("parentId")),
                    ] {
                        if !matches!(member, Some(JsValue::Object(_) | JsValue::Array(_))) {
                            assert_eq!(
                                *key,
                                Key::of(member, 0),
                                "{pi:?}: skeleton key, line {}",
                                r.line
                            );
                        }
                    }
                }
                if !r.is_rewritten() {
                    assert_eq!(
                        to_string(&r.value()),
                        to_string(value),
                        "{pi:?}: record value, line {}",
                        r.line
                    );
                }
            }
        }
    }
    assert!(records.next().is_none(), "{pi:?}: a record for no line");
    assert!(dropped.next().is_none(), "{pi:?}: a diagnostic for no line");

    // Every byte outside those lines is an LF or whitespace (blank lines, trimmed edges).
    let mut covered = vec![false; data.len()];
    for line in &lines {
        covered[line.offset..line.offset + line.len].fill(true);
    }
    for run in data
        .iter()
        .zip(&covered)
        .collect::<Vec<_>>()
        .split(|(_, c)| **c)
    {
        let bytes: Vec<u8> = run.iter().map(|(b, _)| **b).collect();
        assert!(
            String::from_utf8_lossy(&bytes)
                .chars()
                .all(model::is_js_whitespace),
            "{pi:?}: bytes {bytes:?} are in no line but are not whitespace"
        );
    }

    // Entries: every non-header record, in order, unless skipped.
    assert!(
        session.records[0].is_header(),
        "{pi:?}: records[0] is the header"
    );
    assert!(
        session.entries.windows(2).all(|w| w[0] < w[1]),
        "{pi:?}: entries out of order"
    );
    let entries: HashSet<usize> = session.entries.iter().copied().collect();
    for (i, r) in session.records.iter().enumerate() {
        // The loader's fast path copies a message that this calls canonical.
        if let Some(text) = r.canonical_message_text() {
            let value = r.message_value().expect("a record with a message text");
            assert_eq!(
                text,
                to_string(&value),
                "{pi:?}: line {}: a canonical message is not JSON.stringify's",
                r.line
            );
        }
        match (
            r.is_header(),
            entries.contains(&i),
            skipped_set.contains(&r.line),
        ) {
            (true, false, false) | (false, true, false) | (false, false, true) => {}
            other => panic!(
                "{pi:?}: line {} (header, entry, skipped) = {other:?}",
                r.line
            ),
        }
    }
    let line_numbers: HashSet<usize> = lines.iter().map(|l| l.number).collect();
    assert!(
        skipped.iter().all(|l| line_numbers.contains(l)),
        "{pi:?}: a skipped value on a line that does not exist"
    );
    if !session.version.rewrite {
        let mut expected = data.to_vec();
        if pi.reads_like_0_87() && expected.last().is_some_and(|&b| b != b'\n') {
            expected.push(b'\n');
        }
        assert!(
            session.to_jsonl() == expected,
            "{pi:?}: a v3 file was changed"
        );
    }
}

/// Lines with more containers than this are only checked for validity by [`check_cursor`]:
/// its rebuild of a value recurses.
const CURSOR_CONTAINERS: usize = 256;

/// The cursor reads a line as the parser does: the same value, or an error for both; and an
/// object line's string members read with `string` (borrowed when they can be) are the parsed
/// strings, replacement characters for lone surrogates.
fn check_cursor(line: &ModelLine, parsed: &Result<JsValue, json::ParseError>) {
    let text = &line.text;
    let containers = text.bytes().filter(|&b| b == b'[' || b == b'{').count();
    if containers > CURSOR_CONTAINERS {
        let mut cursor = json::Cursor::new(text);
        let valid = cursor.skip().and_then(|()| cursor.end()).is_ok();
        assert_eq!(
            valid,
            parsed.is_ok(),
            "cursor validity, line {}",
            line.number
        );
        return;
    }
    let mut cursor = json::Cursor::new(text);
    let read = cursor.rebuild().and_then(|v| cursor.end().map(|()| v));
    match (parsed, read) {
        (Ok(a), Ok(b)) => {
            assert_eq!(to_string(a), to_string(&b), "cursor, line {}", line.number);
            // Pretty-printed, the value reads back as the same value.
            let pretty = json::parse(&json::to_string_pretty(a)).map(|v| to_string(&v));
            assert_eq!(
                pretty.as_ref(),
                Ok(&to_string(a)),
                "pretty, line {}",
                line.number
            );
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "cursor and parser disagree on line {}: {:?} / {:?}",
            line.number,
            a.is_ok(),
            b.is_ok()
        ),
    }
    let Ok(value @ JsValue::Object(_)) = parsed else {
        return;
    };
    // The last of a repeated key is the one JSON.parse keeps.
    let mut strings: std::collections::HashMap<Vec<u8>, Option<String>> = Default::default();
    json::Cursor::new(text)
        .object(|c, key| {
            let read = if c.at_string() {
                c.string()?.map(|s| s.into_owned())
            } else {
                None
            };
            strings.insert(key.to_vec(), read);
            Ok(())
        })
        .expect("a valid object");
    for (key, read) in strings {
        let Ok(key) = std::str::from_utf8(&key) else {
            continue;
        };
        let expected = match value.get(key) {
            Some(JsValue::String(s)) => Some(s.to_string_lossy()),
            _ => None,
        };
        assert_eq!(
            read, expected,
            "cursor string {key:?}, line {}",
            line.number
        );
    }
}

/// `scan_skeleton` validates exactly like `parse` and finds the same members.
fn check_skeleton(line: &ModelLine, parsed: &Result<JsValue, json::ParseError>) {
    let skeleton = json::scan_skeleton(&line.text);
    match (parsed, &skeleton) {
        (Ok(value), Ok(skeleton)) => match (&skeleton.object, value) {
            (Some(members), JsValue::Object(_)) => {
                for (name, member) in [
                    ("type", &members.type_),
                    ("id", &members.id),
                    ("parentId", &members.parent_id),
                ] {
                    assert_eq!(
                        member.as_ref().map(to_string),
                        value.get(name).map(to_string),
                        "skeleton member {name:?} of line {}",
                        line.number
                    );
                }
                check_message_scan(line, members.message.as_ref(), value.get("message"));
            }
            (None, JsValue::Object(_)) | (Some(_), _) => {
                panic!(
                    "skeleton and value disagree on objectness, line {}",
                    line.number
                )
            }
            (None, value) => {
                assert_eq!(skeleton.is_null, matches!(value, JsValue::Null), "is_null");
                assert_eq!(
                    skeleton.is_falsy,
                    !truthy(Some(value)) && !matches!(value, JsValue::Array(_)),
                    "is_falsy, line {}",
                    line.number
                );
            }
        },
        (Err(a), Err(b)) => assert_eq!(
            a.offset, b.offset,
            "parse and scan_skeleton fail at different places on line {}: {a} / {b}",
            line.number
        ),
        (a, b) => panic!(
            "parse and scan_skeleton disagree on line {}: {:?} / {:?}",
            line.number,
            a.as_ref().map(to_string),
            b.as_ref().map(|_| "ok")
        ),
    }
}

/// What the scanner says of a line's `message` member is true of the parsed member.
fn check_message_scan(
    line: &ModelLine,
    scan: Option<&json::MessageScan>,
    message: Option<&JsValue>,
) {
    let n = line.number;
    let (Some(scan), Some(message)) = (scan, message) else {
        assert_eq!(
            scan.is_some(),
            message.is_some(),
            "message scanned iff present, line {n}"
        );
        return;
    };
    let slice = line.text.get(scan.start..scan.end).unwrap_or_else(|| {
        panic!(
            "message range {}..{} is not text, line {n}",
            scan.start, scan.end
        )
    });
    let reparsed = json::parse(slice)
        .unwrap_or_else(|e| panic!("message range does not parse, line {n}: {e}: {slice}"));
    assert_eq!(
        to_string(&reparsed),
        to_string(message),
        "message range value, line {n}"
    );
    if scan.canonical {
        assert_eq!(
            slice,
            to_string(message),
            "a `canonical` message is not JSON.stringify's, line {n}"
        );
    }
    assert_eq!(
        scan.is_object,
        message.as_object().is_some(),
        "message is_object, line {n}"
    );
    assert_eq!(
        scan.is_null,
        matches!(message, JsValue::Null),
        "message is_null, line {n}"
    );
    if message.as_object().is_some() {
        let role = message.get("role");
        match scan.role.as_str() {
            Some(known) => assert!(
                json::is_str(role, known),
                "message role {known:?} is {:?}, line {n}",
                role.map(to_string)
            ),
            None if scan.role == json::Role::Missing => {
                assert!(role.is_none(), "message role missing, line {n}")
            }
            None => assert!(role.is_some(), "message role present, line {n}"),
        }
        let content = match message.get("content") {
            None => json::Content::Missing,
            Some(JsValue::Null) => json::Content::Null,
            Some(_) => json::Content::Present,
        };
        assert_eq!(scan.content, content, "message content presence, line {n}");
    }
}

// =============================================================================================
// roundtrip
// =============================================================================================

/// Every line of `data` survives `JSON.stringify`/`JSON.parse`; a loaded session survives
/// being written and loaded again; unknown fields survive a rewrite.
pub fn roundtrip(data: &[u8]) {
    for line in read::lines(data) {
        check_value_roundtrip(&line.text);
    }
    for pi in PIS {
        check_session_roundtrip(data, pi);
    }
}

/// Whether `b` is what `JSON.parse(JSON.stringify(a))` must be: the same, except that
/// non-finite numbers become `null` (and `-0` becomes `0`, which `==` does not see).
pub fn same_after_stringify(a: &JsValue, b: &JsValue) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (JsValue::Number(x), JsValue::Null) if !x.is_finite() => {}
            (JsValue::Number(x), JsValue::Number(y)) if x == y => {}
            (JsValue::Null, JsValue::Null) => {}
            (JsValue::Bool(x), JsValue::Bool(y)) if x == y => {}
            (JsValue::String(x), JsValue::String(y)) if x == y => {}
            (JsValue::Array(x), JsValue::Array(y)) if x.0.len() == y.0.len() => {
                stack.extend(x.0.iter().zip(&y.0));
            }
            (JsValue::Object(x), JsValue::Object(y)) if x.len() == y.len() => {
                for ((kx, vx), (ky, vy)) in x.iter().zip(y.iter()) {
                    if kx != ky {
                        return false;
                    }
                    stack.push((vx, vy));
                }
            }
            _ => return false,
        }
    }
    true
}

fn check_value_roundtrip(text: &str) {
    let Ok(value) = json::parse(text) else {
        return;
    };
    let written = to_string(&value);
    let again = json::parse(&written)
        .unwrap_or_else(|e| panic!("JSON.stringify output does not parse: {e}: {written}"));
    assert!(
        same_after_stringify(&value, &again),
        "parse(stringify(v)) != v for {text:?}"
    );
    assert_eq!(to_string(&again), written, "stringify is not a fixpoint");
}

/// Whether a line's value is a top-level non-finite number (`1e400`): `JSON.stringify` writes
/// it as `null`, which is a different line (pi 0.73.1 throws on it, 0.87.1 ignores it). pi does
/// the same when it rewrites a file, so this is the format's loss, not the library's.
fn is_non_finite(value: &JsValue) -> bool {
    matches!(value, JsValue::Number(n) if !n.is_finite())
}

fn check_session_roundtrip(data: &[u8], pi: PiVersion) {
    let Ok(first) = load(data, pi) else {
        return;
    };
    let out = first.to_jsonl();
    let second = load(&out, pi)
        .unwrap_or_else(|e| panic!("{pi:?}: the file as written after loading does not load: {e}"));
    // What the records must be after writing and reading back.
    let expected: Vec<(Kind, String)> = first
        .records
        .iter()
        .filter_map(|r| {
            let value = r.value();
            if first.version.rewrite && is_non_finite(&value) {
                return (!pi.reads_like_0_87()).then(|| (Kind::Null, "null".to_owned()));
            }
            Some((r.kind.clone(), to_string(&value)))
        })
        .collect();
    let got: Vec<(Kind, String)> = second
        .records
        .iter()
        .map(|r| (r.kind.clone(), to_string(&r.value())))
        .collect();
    assert_eq!(
        got, expected,
        "{pi:?}: records after writing and loading again"
    );
    assert_eq!(
        first.dropped.len(),
        second.dropped.len(),
        "{pi:?}: dropped lines"
    );
    for (a, b) in first.dropped.iter().zip(&second.dropped) {
        assert_eq!(
            first.dropped_bytes(a),
            second.dropped_bytes(b),
            "{pi:?}: unparseable line {} not kept byte for byte",
            a.line
        );
    }
    let out2 = second.to_jsonl();
    if expected.len() == first.records.len() {
        assert!(out2 == out, "{pi:?}: writing is not a fixpoint");
    } else {
        let third = load(&out2, pi).expect("the file written twice loads");
        assert!(
            third.to_jsonl() == out2,
            "{pi:?}: writing is not a fixpoint"
        );
    }
    if first.version.rewrite {
        for r in &first.records {
            let original = json::parse(r.text()).expect("a record's text parses");
            check_preserved(r.line, &original, &r.value(), &first);
        }
    }
}

/// Every member of `original` survives in `migrated` with its value and relative order,
/// except those the migrations set (M1–M6); nothing else is added.
fn check_preserved(line: usize, original: &JsValue, migrated: &JsValue, session: &Session<'_>) {
    let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
    if original.as_object().is_none() {
        assert_eq!(
            to_string(original),
            to_string(migrated),
            "non-object line {line} changed"
        );
        return;
    }
    let header = is_header(original);
    let type_ = |t| is(original.get("type"), t);
    let compaction_v1 = v1
        && type_("compaction")
        && matches!(
            original.get("firstKeptEntryIndex"),
            Some(JsValue::Number(_))
        );
    let touched = |key: &str| match key {
        "version" => header && (v1 || v2),
        "id" | "parentId" => v1 && !header,
        "firstKeptEntryIndex" | "firstKeptEntryId" => compaction_v1,
        _ => false,
    };
    let mut original = original.clone();
    if v2
        && type_("message")
        && let Some(message) = original
            .as_object_mut()
            .and_then(|o| o.get_mut("message"))
            .and_then(JsValue::as_object_mut)
        && is(message.get("role"), "hookMessage")
    {
        message.set("role", JsValue::string("custom"));
    }
    let members = |v: &JsValue| -> Vec<(String, String)> {
        v.as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.to_string_lossy(), to_string(v)))
                    .filter(|(k, _)| !touched(k))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        members(&original),
        members(migrated),
        "line {line}: members changed by loading (v1: {v1}, v2: {v2})"
    );
}

// =============================================================================================
// streaming_eq_whole
// =============================================================================================

/// Splits `data` into chunk sizes and a payload: the first byte gives the number (0–7) of
/// size bytes that follow, each a chunk size of 1–256 bytes.
pub fn split_chunk_sizes(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let n = data.first().map_or(0, |b| usize::from(b % 8));
    let end = (1 + n).min(data.len());
    let sizes = data.get(1..end).unwrap_or_default();
    (
        sizes.iter().map(|&b| usize::from(b) + 1).collect(),
        data.get(end..).unwrap_or_default(),
    )
}

/// The lines of the payload fed in chunks (fuzzed sizes, and 1, 2, 3, 7, 4096 bytes) equal
/// the lines [`pi_session_format::read`] finds in the whole payload, for both pi versions' rules.
pub fn streaming_eq_whole(data: &[u8]) {
    let (fuzzed, payload) = split_chunk_sizes(data);
    for trim in [true, false] {
        let edges = if trim {
            read::Edges::Trimmed
        } else {
            read::Edges::Kept
        };
        let whole: Vec<ModelLine> = read::lines_with(payload, edges)
            .map(|l| ModelLine::of(&l))
            .collect();
        assert_eq!(
            model::lines(payload, trim),
            whole,
            "trim {trim}: one chunk differs from read::lines"
        );
        for sizes in [&fuzzed[..], &[1], &[2], &[3], &[7], &[4096]] {
            if sizes.is_empty() {
                continue;
            }
            assert_eq!(
                model::lines_chunked(payload, trim, sizes),
                whole,
                "trim {trim}: chunks of {sizes:?} differ from the whole"
            );
        }
    }
}

// =============================================================================================
// migrate
// =============================================================================================

/// Loads `data` (behind a v1 header when it has no valid header of its own) and checks the
/// migrations (see the module docs).
pub fn migrate(data: &[u8]) {
    for pi in PIS {
        let prefixed;
        let bytes = if load(data, pi).is_ok() {
            data
        } else {
            prefixed = [V1_HEADER.as_bytes(), b"\n", data].concat();
            &prefixed[..]
        };
        check_migrate(bytes, pi);
    }
}

fn check_migrate(data: &[u8], pi: PiVersion) {
    let Ok(session) = load(data, pi) else {
        return;
    };
    let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
    let originals: Vec<JsValue> = session
        .records
        .iter()
        .map(|r| json::parse(r.text()).expect("a record's text parses"))
        .collect();

    // Loading migrates exactly as the migration functions do over the same values.
    let mut values = originals.clone();
    if v1 {
        migrate::v1_to_v2(&mut values, &mut SequentialIds::default());
    }
    if v2 {
        migrate::v2_to_v3(&mut values);
    }
    for ((r, value), original) in session.records.iter().zip(&values).zip(&originals) {
        assert_eq!(
            to_string(&r.value()),
            to_string(value),
            "{pi:?}: line {} differs from migrate::v1_to_v2/v2_to_v3",
            r.line
        );
        check_preserved(r.line, original, &r.value(), &session);
    }
    check_streamed(data, &session, &values, pi);
    if v2 {
        let mut again = values.clone();
        migrate::v2_to_v3(&mut again);
        for (a, b) in values.iter().zip(&again) {
            assert_eq!(
                to_string(a),
                to_string(b),
                "{pi:?}: v2→v3 is not idempotent"
            );
        }
    }

    if v1 {
        check_v1_ids(&session, &originals, pi);
    }
    // A top-level `1e400` is written as `null`, which pi 0.87.1 then ignores: the v2 file
    // loses the line, by the format's rules (see `is_non_finite`).
    let lossy = pi.reads_like_0_87() && originals.iter().any(is_non_finite);
    if v1 && !lossy {
        // v1→v3 at once equals writing the v2 file and loading it (v2→v3).
        let mut v2_values = originals.clone();
        migrate::v1_to_v2(&mut v2_values, &mut SequentialIds::default());
        // pi 0.87.1's falsy lines are kept verbatim like unparseable ones (D6).
        let v2_file = whole_file(&session, &v2_values);
        let from_v2 = load(&v2_file, pi).expect("the v2 file loads");
        assert!(
            !from_v2.version.migrated_v1 && from_v2.version.migrated_v2,
            "{pi:?}: the v2 file is not read as v2"
        );
        assert!(
            from_v2.to_jsonl() == session.to_jsonl(),
            "{pi:?}: v1→v3 differs from v1→v2→v3"
        );
    }

    // The migrated file is v3 and loads unchanged; so does any v3 file.
    let out = session.to_jsonl();
    let reloaded = load(&out, pi).expect("the migrated file loads");
    if v2 {
        assert!(
            !reloaded.version.rewrite,
            "{pi:?}: the migrated file is not v3"
        );
    }
    let again = reloaded.to_jsonl();
    if lossy && session.version.rewrite && reloaded.version.rewrite {
        // The `null` written for `1e400` goes on the next rewrite; after that, nothing changes.
        let third = load(&again, pi).expect("the file rewritten twice loads");
        assert!(
            third.to_jsonl() == again,
            "{pi:?}: the migrated file changes on loading"
        );
    } else {
        assert!(again == out, "{pi:?}: the migrated file changes on loading");
    }
    if !session.version.rewrite {
        let mut expected = data.to_vec();
        if pi.reads_like_0_87() && expected.last().is_some_and(|&b| b != b'\n') {
            expected.push(b'\n');
        }
        assert!(out == expected, "{pi:?}: a v3 file was changed");
    }
}

/// The rewritten file, [`Session::to_jsonl`] and the streaming migration
/// ([`Loader::load_for_rewrite`](pi_session_format::session::Loader::load_for_rewrite)) are exactly pi's whole-array result `values` written one
/// per line, with the lines that are not records kept verbatim at their place.
fn check_streamed(data: &[u8], session: &Session<'_>, values: &[JsValue], pi: PiVersion) {
    if !session.version.rewrite {
        return;
    }
    let expected = whole_file(session, values);
    assert!(
        session.to_jsonl() == expected,
        "{pi:?}: to_jsonl differs from the whole-array migration"
    );
    let migration = Session::loader(pi)
        .ids(&mut SequentialIds::default())
        .load_for_rewrite(data)
        .expect("loads for a rewrite as for reading");
    let mut streamed = Vec::new();
    let mut changes = pi_session_format::session::Changes::new(3);
    migration
        .write(&mut streamed, &mut changes, &|_| {})
        .expect("writing to a vector");
    assert!(
        streamed == expected,
        "{pi:?}: the streaming migration differs from the whole-array migration"
    );
}

/// M1–M5: v1 entries get unique ids chained in file order; `firstKeptEntryIndex` becomes the
/// id of the value at that index.
fn check_v1_ids(session: &Session<'_>, originals: &[JsValue], pi: PiVersion) {
    let values: Vec<JsValue> = session
        .records
        .iter()
        .map(|r| r.value().into_owned())
        .collect();
    let mut seen = HashSet::new();
    let mut previous = JsValue::Null;
    for (i, value) in values.iter().enumerate() {
        if value.as_object().is_none() || is_header(value) {
            continue;
        }
        let id = value
            .get("id")
            .and_then(JsValue::as_str)
            .unwrap_or_else(|| {
                panic!(
                    "{pi:?}: v1 entry on line {} got no string id",
                    session.records[i].line
                )
            });
        assert!(
            seen.insert(id.to_owned()),
            "{pi:?}: duplicate migration id {id}"
        );
        assert_eq!(
            text(value.get("parentId")),
            to_string(&previous),
            "{pi:?}: v1 entry on line {} is not chained to the previous one",
            session.records[i].line
        );
        previous = JsValue::string(id);
        let Some(&JsValue::Number(index)) = originals[i].get("firstKeptEntryIndex") else {
            continue;
        };
        if !is(value.get("type"), "compaction") {
            continue;
        }
        assert!(
            value.get("firstKeptEntryIndex").is_none(),
            "{pi:?}: index kept"
        );
        // The target is `entries[index]` when that is a truthy value other than a header.
        // Values up to the compaction itself have their new ids by then; later ones still
        // have their old ones (M5: a forward index copies a stale id).
        let target = (index.fract() == 0.0 && index >= 0.0 && index < values.len() as f64)
            .then_some(index as usize)
            .map(|t| if t <= i { &values[t] } else { &originals[t] })
            .filter(|t| truthy(Some(t)) && !is_header(t));
        match target {
            Some(target) => assert_eq!(
                text(value.get("firstKeptEntryId")),
                text(target.get("id")),
                "{pi:?}: firstKeptEntryId is not the id of entry {index}"
            ),
            // No target (out of range, falsy, a header): pi leaves firstKeptEntryId alone.
            None => assert_eq!(
                text(value.get("firstKeptEntryId")),
                text(originals[i].get("firstKeptEntryId")),
                "{pi:?}: firstKeptEntryId changed for index {index}, which names no entry"
            ),
        }
    }
}

// =============================================================================================
// context
// =============================================================================================

/// Builds a [`SessionSpec`] the way `fuzz_target!(|spec: SessionSpec| …)` does and checks it.
pub fn context(data: &[u8]) {
    if let Ok(spec) = SessionSpec::arbitrary_take_rest(Unstructured::new(data)) {
        check_context(&spec);
    }
}

/// [`check_session_context`] on a generated session.
pub fn check_context(spec: &SessionSpec) {
    check_session_context(spec.to_jsonl().as_bytes(), &spec.leaves);
}

/// Builds the context of `bytes` for the current leaf and for `leaves`, with both pi
/// versions' rules, and compares it with [`model::context`]; then checks `convertToLlm` on it.
pub fn check_session_context(bytes: &[u8], leaves: &[String]) {
    for pi in PIS {
        let Ok(session) = load(bytes, pi) else {
            continue;
        };
        let index = Index::build(&session);
        let leaves = std::iter::once(Leaf::Current).chain(leaves.iter().cloned().map(Leaf::Id));
        for leaf in leaves {
            let got = build_context(&session, &index, &leaf, pi);
            let want = model::context(&session, &leaf, pi);
            let context = match (got, want) {
                (Ok(c), ModelContext::Empty) => {
                    assert!(
                        c.messages.is_empty()
                            && c.model.is_none()
                            && c.thinking_level.as_ref().and_then(JsValue::as_str) == Some("off"),
                        "{pi:?} {leaf:?}: expected the empty context"
                    );
                    c
                }
                (Err(_), ModelContext::Cycle(_)) => continue,
                (Err(e), _) => panic!("{pi:?} {leaf:?}: a cycle where there is none: {e}"),
                (Ok(_), ModelContext::Cycle(walk)) => {
                    panic!(
                        "{pi:?} {leaf:?}: the parent cycle through records {walk:?} is not reported"
                    )
                }
                (
                    Ok(c),
                    ModelContext::Context {
                        path,
                        messages,
                        thinking_level,
                        model,
                    },
                ) => {
                    let lines: Vec<usize> = path.iter().map(|&i| session.records[i].line).collect();
                    assert_eq!(
                        c.messages.len(),
                        messages.len(),
                        "{pi:?} {leaf:?}: message count (path: lines {lines:?}; expected {messages:?})"
                    );
                    for (message, expected) in c.messages.iter().zip(&messages) {
                        check_message(&session, &message_value(message), expected, pi);
                    }
                    assert_eq!(
                        c.thinking_level.as_ref().map(to_string),
                        thinking_level,
                        "{pi:?} {leaf:?}: thinkingLevel (C4)"
                    );
                    assert_eq!(
                        c.model
                            .as_ref()
                            .map_or_else(|| "null".to_owned(), to_string),
                        model,
                        "{pi:?} {leaf:?}: model (C5)"
                    );
                    c
                }
            };
            check_llm(context.messages, pi);
        }
    }
    check_omp_context(bytes, leaves);
}

/// omp's context of `bytes` read as an omp file, for the current leaf and for `leaves`:
/// it never panics and never hangs (a parent cycle ends the path), its JSON parses back, and
/// what omp's rules promise holds: no assistant turn that ended `aborted` or `error` unless the
/// `interrupted-thinking` message follows it, and no `toolCall` without a `toolResult` among
/// the messages.
pub fn check_omp_context(bytes: &[u8], leaves: &[String]) {
    let Ok(session) = Session::loader(PiVersion::V1_5)
        .dialect(Dialect::Omp)
        .ids(&mut SequentialIds::default())
        .load(bytes)
    else {
        return;
    };
    let leaves = std::iter::once(Leaf::Current).chain(leaves.iter().cloned().map(Leaf::Id));
    for leaf in leaves {
        let Ok(context) = session.omp_context(leaf.clone(), None) else {
            continue;
        };
        let mut text = Vec::new();
        context.write_json(&mut text).expect("writes to memory");
        let text = String::from_utf8(text).expect("JSON.stringify output is UTF-8");
        let value = json::parse(&text).unwrap_or_else(|e| panic!("omp {leaf:?}: {e}: {text}"));
        let Some(JsValue::Array(messages)) = value.get("messages") else {
            panic!("omp {leaf:?}: no messages array: {text}");
        };
        let role = |m: &JsValue| m.get("role").and_then(JsValue::as_str).map(str::to_owned);
        let results: Vec<Key> = messages
            .0
            .iter()
            .filter(|m| role(m).as_deref() == Some("toolResult"))
            .map(|m| Key::of(m.get("toolCallId"), u64::MAX))
            .collect();
        for (i, m) in messages.0.iter().enumerate() {
            if role(m).as_deref() != Some("assistant") {
                continue;
            }
            let stop = m.get("stopReason").and_then(JsValue::as_str);
            let next_is_continuity = messages.0.get(i + 1).is_some_and(|n| {
                role(n).as_deref() == Some("custom")
                    && n.get("customType").and_then(JsValue::as_str) == Some("interrupted-thinking")
            });
            assert!(
                !matches!(stop, Some("aborted" | "error")) || next_is_continuity,
                "omp {leaf:?}: a failed turn stayed: {text}"
            );
            if let Some(JsValue::Array(blocks)) = m.get("content") {
                for block in &blocks.0 {
                    if block.get("type").and_then(JsValue::as_str) == Some("toolCall") {
                        let id = Key::of(block.get("id"), u64::MAX - 1);
                        assert!(
                            !matches!(id, Key::Unique(_)) && results.contains(&id),
                            "omp {leaf:?}: a tool call without its result stayed: {text}"
                        );
                    }
                }
            }
        }
    }
}

/// One context message against what the model says it must be.
fn check_message(session: &Session<'_>, message: &JsValue, expected: &Expected, pi: PiVersion) {
    let entry = |record: usize| session.records[record].value().into_owned();
    let line = |record: usize| session.records[record].line;
    let built = |record: usize, role: &str, members: &[&str], free: &[&str]| {
        let e = entry(record);
        let mut want = vec!["role".to_owned()];
        want.extend(
            members
                .iter()
                .filter(|k| e.get(k).is_some() || **k == "content" || **k == "timestamp")
                .map(|k| (*k).to_owned()),
        );
        let got = keys(message);
        let strip = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .filter(|k| !free.contains(&k.as_str()))
                .collect()
        };
        assert_eq!(
            strip(got),
            strip(want),
            "{pi:?}: members of the {role} message of line {}",
            line(record)
        );
        assert!(is(message.get("role"), role), "{pi:?}: role");
        for k in members
            .iter()
            .filter(|k| !matches!(**k, "content" | "timestamp"))
        {
            assert_eq!(
                text(message.get(k)),
                text(e.get(k)),
                "{pi:?}: {k} of the {role} message of line {}",
                line(record)
            );
        }
        assert!(
            matches!(
                message.get("timestamp"),
                Some(JsValue::Number(_) | JsValue::Null)
            ),
            "{pi:?}: timestamp of a built message (C10)"
        );
        e
    };
    match *expected {
        Expected::Message {
            record,
            content_may_change,
        } => {
            let e = entry(record);
            let source = e.get("message").unwrap_or(&JsValue::Null);
            if content_may_change {
                assert_eq!(
                    text_without(message, "content"),
                    text_without(source, "content"),
                    "{pi:?}: message of line {} (C8)",
                    line(record)
                );
            } else {
                assert_eq!(
                    to_string(message),
                    to_string(source),
                    "{pi:?}: message of line {} (C8)",
                    line(record)
                );
            }
        }
        Expected::Custom { record, edited } => {
            let members = ["customType", "content", "display", "details", "timestamp"];
            let e = built(record, "custom", &members, &["content"]);
            if !edited {
                let want = match (pi.reads_like_0_87(), e.get("content")) {
                    (true, None | Some(JsValue::Null)) => Some("[]".to_owned()),
                    (_, c) => c.map(to_string),
                };
                assert_eq!(
                    message.get("content").map(to_string),
                    want,
                    "{pi:?}: content of the custom message of line {} (C8.1, E8)",
                    line(record)
                );
            }
        }
        Expected::BranchSummary { record } => {
            built(
                record,
                "branchSummary",
                &["summary", "fromId", "timestamp"],
                &[],
            );
        }
        Expected::CompactionSummary { record } => {
            built(
                record,
                "compactionSummary",
                &["summary", "tokensBefore", "timestamp"],
                &[],
            );
        }
        Expected::SystemMessage { record, edited } => {
            let e = entry(record);
            let source = e.get("systemMessage").unwrap_or(&JsValue::Null);
            let (a, b) = if edited {
                (
                    text_without(message, "content"),
                    text_without(source, "content"),
                )
            } else {
                (to_string(message), to_string(source))
            };
            assert_eq!(a, b, "{pi:?}: systemMessage of line {} (E6)", line(record));
        }
    }
}

// =============================================================================================
// to_llm
// =============================================================================================

/// Builds an [`LlmSpec`] the way `fuzz_target!(|spec: LlmSpec| …)` does and checks it.
pub fn to_llm(data: &[u8]) {
    if let Ok(spec) = LlmSpec::arbitrary_take_rest(Unstructured::new(data)) {
        check_to_llm(&spec);
    }
}

/// `convertToLlm` over the spec's messages equals the model's, whether the messages are given
/// as values or, when their text is `JSON.stringify`'s, as raw text.
pub fn check_to_llm(spec: &LlmSpec) {
    let pi = if spec.pi_0_87 {
        PiVersion::V0_87
    } else {
        PiVersion::V0_73
    };
    let values: Vec<JsValue> = spec
        .messages
        .iter()
        .filter_map(|m| json::parse(m).ok())
        .collect();
    let texts: Vec<String> = values.iter().map(to_string).collect();
    check_llm(values.iter().cloned().map(Message::Value).collect(), pi);
    let raw = texts
        .iter()
        .zip(&values)
        .map(|(text, value)| Message::Raw {
            text,
            role: value.get("role").and_then(JsValue::as_str),
        })
        .collect();
    check_llm(raw, pi);
}

/// A context message as a value, checking that its text is `JSON.stringify`'s and its role
/// the value's.
fn message_value(message: &Message<'_>) -> JsValue {
    let mut out = Vec::new();
    message
        .write(&mut out)
        .expect("writing to a Vec cannot fail");
    let text = String::from_utf8(out).expect("a message is written as UTF-8");
    let value = json::parse(&text)
        .unwrap_or_else(|e| panic!("a message is written as invalid JSON: {e}: {text}"));
    assert_eq!(
        to_string(&value),
        text,
        "a message's text is not JSON.stringify's"
    );
    assert_eq!(
        message.role(),
        value.get("role").and_then(JsValue::as_str),
        "a message's role"
    );
    value
}

fn check_llm(messages: Vec<Message<'_>>, pi: PiVersion) {
    // The model reads the values themselves (`1e400` is `Infinity` to `String()`), not
    // their JSON text.
    let values: Vec<JsValue> = messages
        .iter()
        .inspect(|m| {
            message_value(m);
        })
        .map(|m| m.clone().into_value())
        .collect();
    let got = pi_session_format::llm::to_llm(messages, pi);
    let want = model::to_llm(&values, pi);
    assert_eq!(
        got.len(),
        want.len(),
        "{pi:?}: convertToLlm keeps the wrong messages"
    );
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            to_string(&message_value(g)),
            to_string(w),
            "{pi:?}: convertToLlm output (S1–S10)"
        );
    }
}

// =============================================================================================
// validate
// =============================================================================================

/// Validates `data` with both pi versions' rules: no panic, a consistent report, and the
/// verdicts keep their promises — a file without errors loads without losing a line, and a
/// pi-loadable file also loads without a rewrite and builds its context.
pub fn validate(data: &[u8]) {
    use pi_session_validate::{Options, Severity, validate};
    for pi in PIS {
        let options = Options {
            pi,
            ..Options::default()
        };
        let report = validate(data, &options);
        // The report is consistent with its diagnostics.
        let errors = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.occurrences())
            .sum::<usize>();
        assert_eq!(report.stats.errors, errors, "{pi:?}: error count");
        assert_eq!(report.verdict.strict, errors == 0, "{pi:?}: strict verdict");
        assert_eq!(
            report.verdict.pi_loadable,
            !report.diagnostics.iter().any(|d| d.pi.breaks_loading()),
            "{pi:?}: pi-loadable verdict"
        );
        for d in &report.diagnostics {
            if let Some(l) = d.location {
                assert!(
                    l.offset + l.length <= data.len().max(1) && l.line >= 1 && l.column >= 1,
                    "{pi:?}: {} points outside the file: {l:?}",
                    d.code
                );
            }
        }
        if !(report.verdict.strict || report.verdict.pi_loadable) {
            continue;
        }
        // A file without errors, or pi-loadable, loads without dropping or skipping a line.
        let mut ids = SequentialIds::default();
        let session = Session::loader(pi).ids(&mut ids).load(data);
        let session = match session {
            Ok(s) => s,
            Err(e) => panic!("{pi:?}: the validator accepts a file the loader refuses: {e}"),
        };
        assert!(
            session.dropped.is_empty() && session.skipped.is_empty(),
            "{pi:?}: the validator accepts a file of which the loader drops lines {:?} or skips values {:?}",
            session.dropped,
            session.skipped
        );
        let index = Index::build(&session);
        assert!(
            build_context(&session, &index, &Leaf::Current, pi).is_ok(),
            "{pi:?}: the validator accepts a file whose context cannot be built (a cycle)"
        );
        if report.verdict.pi_loadable {
            assert!(
                !session.version.rewrite,
                "{pi:?}: pi-loadable, but the loader would rewrite the file"
            );
        }
    }
}
