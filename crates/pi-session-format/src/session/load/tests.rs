//! Loading: headers, versions, line rules of pi 0.73.1 and 0.87.1, reading through buffers,
//! lazy v1 migration.

use super::*;
use crate::migrate::{self, SequentialIds};
use crate::session::Changes;

fn load(text: &str) -> Result<Session<'_>, LoadError> {
    Session::load_with(
        text.as_bytes(),
        LoadOptions {
            ids: &mut SequentialIds::default(),
            pi: PiVersion::V0_73,
            dialect: crate::Dialect::Pi,
        },
    )
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

/// A v1 file is migrated without building the values that need nothing from other
/// records: those records keep their text and take their new ids as keys, and their
/// values, the file written back and the streamed migration are all pi's model's.
#[test]
fn v1_entries_keep_their_text_and_get_their_ids_as_keys() {
    let text = [
        r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
        // Not in `JSON.stringify` form, with an old id and parentId to overwrite.
        r#"{ "parentId": 7, "type":"message", "id": "old", "message":{"role":"hookMessage"}}"#,
        r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":4,"tokensBefore":1}"#,
        r#"{"type":"custom","customType":"x","id":"later"}"#,
        "not json",
        r#"{"type":"message","message":{"role":"assistant","content":[]}}"#,
    ]
    .join("\n");
    let session = load(&text).unwrap();
    // Only the header, the message whose role v2→v3 may rename and the compaction (which
    // names an entry by position) are built.
    let built: Vec<usize> = session
        .records
        .iter()
        .filter(|r| r.value.is_some())
        .map(|r| r.line)
        .collect();
    assert_eq!(built, [1, 3, 4]);
    let keys: Vec<(Key, Key)> = session
        .entry_records()
        .map(|r| (r.id.clone(), r.parent_id.clone()))
        .collect();
    let id = |n: u32| Key::string(&format!("{n:08x}"));
    assert_eq!(
        keys,
        [
            (id(1), Key::Null),
            (id(2), id(1)),
            (id(3), id(2)),
            (id(4), id(3)),
            (id(5), id(4)),
        ]
    );
    assert!(session.entry_records().all(Record::is_rewritten));

    // pi's model: every value parsed, then `migrateV1ToV2` and `migrateV2ToV3`.
    let mut values: Vec<JsValue> = session
        .records
        .iter()
        .map(|r| json::parse(r.text()).unwrap())
        .collect();
    migrate::v1_to_v2(&mut values, &mut SequentialIds::default());
    migrate::v2_to_v3(&mut values);
    let ours: Vec<String> = session
        .records
        .iter()
        .map(|r| json::to_string(&r.value()))
        .collect();
    let model: Vec<String> = values.iter().map(json::to_string).collect();
    assert_eq!(ours, model);
    // A later entry is named by the id it had before the migration.
    assert!(
        model[3].contains(r#""firstKeptEntryId":"later""#),
        "{}",
        model[3]
    );

    let mut expected = model.join("\n").into_bytes();
    expected.push(b'\n');
    let expected = String::from_utf8(expected).unwrap().replacen(
        &model[4],
        &format!("{}\nnot json", model[4]),
        1,
    );
    assert_eq!(String::from_utf8(session.to_jsonl()).unwrap(), expected);
    let migration = Session::load_for_migration(
        text.as_bytes(),
        LoadOptions {
            ids: &mut SequentialIds::default(),
            pi: PiVersion::V0_73,
            dialect: crate::Dialect::Pi,
        },
        &|_| {},
    )
    .unwrap();
    let mut streamed = Vec::new();
    migration
        .write(&mut streamed, &mut Changes::new(10), &|_| {})
        .unwrap();
    assert_eq!(String::from_utf8(streamed).unwrap(), expected);
}

#[test]
fn header_is_the_first_parseable_value() {
    let text =
        format!("garbage\n{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}}\n");
    let s = load(&text).unwrap();
    assert_eq!(s.dropped.len(), 1);
    assert_eq!(s.dropped[0].line, 1);
    assert_eq!(s.entries.len(), 1);
}

#[test]
fn invalid_headers_are_refused() {
    assert!(matches!(
        load(""),
        Err(LoadError::Empty { blank: true, .. })
    ));
    assert!(matches!(
        load("not json"),
        Err(LoadError::Empty { blank: false, .. })
    ));
    for text in [
        r#"{"type":"session","id":1}"#,
        r#"{"type":"message","id":"a"}"#,
        "null",
        "[1]",
        r#"{"id":"a"}"#,
    ] {
        assert!(
            matches!(load(text), Err(LoadError::InvalidHeader { line: 1, .. })),
            "{text}"
        );
    }
}

#[test]
fn later_session_lines_are_not_entries() {
    let text = format!("{HEADER}\n{HEADER}\n{{\"type\":\"label\",\"id\":\"a\"}}\n");
    let s = load(&text).unwrap();
    assert_eq!(s.entries, [2]);
}

#[test]
fn v3_version_coercion() {
    for (version, v1, v2) in [
        ("3", false, false),
        ("4", false, false),
        ("\"3\"", false, false),
        ("\"2\"", false, true),
        ("2.5", false, true),
        ("0", true, true),
        ("true", true, true),
        ("null", true, true),
        ("\"abc\"", false, false),
        ("\" 0x3 \"", false, false),
    ] {
        let text = format!(r#"{{"type":"session","version":{version},"id":"s"}}"#);
        let s = load(&text).unwrap();
        assert_eq!(
            (s.version.migrated_v1, s.version.migrated_v2),
            (v1, v2),
            "{version}"
        );
    }
    let s = load(r#"{"type":"session","version":"abc","id":"s"}"#).unwrap();
    assert!(s.version.rewrite);
}

#[test]
fn null_lines_are_skipped_not_fatal() {
    let text = format!("{HEADER}\nnull\n{{\"type\":\"message\",\"id\":\"a\"}}\n42\n");
    let s = load(&text).unwrap();
    assert_eq!(s.skipped.len(), 1);
    assert_eq!(s.entries.len(), 2);
}

#[test]
fn p5_lines_are_parsed_untrimmed_so_crlf_passes_and_inner_bom_fails() {
    let text = format!(
        "{HEADER}\r\n{{\"type\":\"a\"}}\r\n\u{feff}{{\"type\":\"b\"}}\n\u{a0}{{\"type\":\"c\"}}\n{{\"type\":\"d\"}}"
    );
    let s = load(&text).unwrap();
    let types: Vec<_> = s
        .entry_records()
        .map(|r| r.entry_type().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["a", "d"]);
    assert_eq!(s.dropped.iter().map(|d| d.line).collect::<Vec<_>>(), [3, 4]);
}

#[test]
fn p6_any_json_value_is_an_entry() {
    let text = format!("{HEADER}\n42\n\"x\"\n[1]\ntrue\nfalse\n");
    let s = load(&text).unwrap();
    assert_eq!(s.entries.len(), 5);
    assert!(s.entry_records().all(|r| r.id == Key::Undefined));
}

#[test]
fn p7_lines_with_trailing_garbage_or_two_values_are_dropped() {
    let text = format!("{HEADER}\n{{}}{{}}\n{{\"type\":\"a\"}} x\n");
    let s = load(&text).unwrap();
    assert!(s.entries.is_empty());
    assert_eq!(s.dropped.len(), 2);
}

#[test]
fn p8_deep_nesting_huge_numbers_and_lone_surrogates_are_accepted() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let text = format!(
        "{HEADER}\n{{\"type\":\"custom\",\"data\":{deep},\"n\":1e400,\"s\":\"\\ud83d\"}}\n"
    );
    let s = load(&text).unwrap();
    assert_eq!(s.entries.len(), 1);
    assert!(s.dropped.is_empty());
}

#[test]
fn pi_0_87_ignores_falsy_lines_and_does_not_trim_the_whole_text() {
    let load87 = |text: &str| {
        Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: PiVersion::V0_87,
                dialect: crate::Dialect::Pi,
            },
        )
        .map(|s| (s.entries.len(), s.skipped.len()))
    };
    assert_eq!(
        load87(&format!("null\n{HEADER}\nnull\n0\nfalse\n\"\"\n42\n")).unwrap(),
        (1, 5)
    );
    assert!(load87(&format!("\u{feff}{HEADER}\n")).is_err());
    assert!(load(&format!("\u{feff}{HEADER}\n")).is_ok());
}

/// Everything a record or dropped line says, for comparing two loads.
fn summary(s: &Session<'_>) -> Vec<String> {
    let records = s.records.iter().map(|r| {
        format!(
            "{} {} {:?} {:?} {:?} {:?} {} {:?}",
            r.line,
            r.offset,
            r.kind,
            r.id,
            r.parent_id,
            r.message.as_ref().map(|m| (m.start, m.end, m.canonical)),
            r.lossy,
            r.text()
        )
    });
    let dropped = s.dropped.iter().map(|d| format!("{d:?}"));
    let skipped = s.skipped.iter().map(|d| format!("{d:?}"));
    records.chain(dropped).chain(skipped).collect()
}

#[test]
fn reading_through_buffers_loads_exactly_like_borrowing() {
    let mut text = Vec::new();
    text.extend_from_slice("\u{feff} \n".as_bytes());
    text.extend_from_slice(HEADER.as_bytes());
    text.extend_from_slice(b"\r\n");
    let huge = "x".repeat(300_000);
    for i in 0..6000 {
        let line = match i % 11 {
            0 => format!(
                "{{\"type\":\"message\",\"id\":\"{i}\",\"message\":{{\"role\":\"user\",\"content\":\"caf\u{e9}\"}}}}\r\n"
            ),
            1 => "\u{a0}\u{3000}\n\n \t\n".to_string(),
            2 => format!("{{\"type\":\"custom\",\"id\":\"{i}\"}}\r{{\"lone\":1}}\n"),
            3 => format!("{{\"type\":\"label\",\"id\":\"{i}\",\"s\":\"\u{fffd}"),
            4 if i % 2000 == 4 => {
                format!("{{\"type\":\"custom\",\"id\":\"h{i}\",\"data\":\"{huge}\"}}\n")
            }
            5 => "null\n0\n\"\"\nnot json\n".to_string(),
            _ => format!(
                "{{\"type\":\"message\",\"id\":\"{i}\",\"parentId\":\"{}\",\"message\":{{\"role\":\"assistant\",\"content\":[]}}}}\n",
                i - 1
            ),
        };
        text.extend_from_slice(line.as_bytes());
        if i % 11 == 3 {
            // Invalid UTF-8 inside a string, then the end of the line.
            text.extend_from_slice(b"\xff\xc3(\"}\n");
        }
    }
    text.extend_from_slice(b"{\"type\":\"label\",\"id\":\"last\"}\n\xe2\x80\xa8 ");
    for end in [text.len(), text.len() - 5, 70_000, 200_000, 1_000_000] {
        let bytes = &text[..end.min(text.len())];
        for pi in [PiVersion::V0_73, PiVersion::V0_87] {
            let load = |read: Option<&ReadAt<'_>>| {
                let options = LoadOptions {
                    ids: &mut SequentialIds::default(),
                    pi,
                    dialect: crate::Dialect::Pi,
                };
                let session = match read {
                    None => Session::load_with(bytes, options),
                    Some(read) => Session::load_reading(bytes, options, read),
                };
                session.map(|s| summary(&s)).map_err(|e| e.to_string())
            };
            let copy = |buf: &mut [u8], at: usize| {
                buf.copy_from_slice(&bytes[at..at + buf.len()]);
                true
            };
            let expected = load(None);
            assert_eq!(load(Some(&copy)), expected, "{pi:?} {end}");
            assert_eq!(
                load(Some(&|_: &mut [u8], _| false)),
                expected,
                "{pi:?} {end}"
            );
        }
    }
}

#[test]
fn records_are_indexed_across_uneven_chunks() {
    // Lines of very different lengths, so that the loader's pieces hold very different
    // numbers of records and the proportional guess of `Records::get` often misses.
    let mut text = String::from(r#"{"type":"session","version":3,"id":"s"}"#);
    text.push('\n');
    for i in 0..3000 {
        let pad = if i % 500 < 5 { 70_000 } else { 0 };
        text.push_str(&format!(
            r#"{{"type":"message","id":"{i:08x}","pad":"{}"}}"#,
            "x".repeat(pad)
        ));
        text.push('\n');
    }
    let s = load(&text).unwrap();
    assert!(
        s.records.chunks.len() > 1,
        "one chunk only: {}",
        s.records.chunks.len()
    );
    assert_eq!(s.records.len(), 3001);
    assert!(s.records.get(3001).is_none() && s.records.get(usize::MAX).is_none());
    for (i, r) in s.records.iter().enumerate() {
        assert!(std::ptr::eq(&s.records[i], r));
        assert_eq!(r.line, i + 1);
    }
    assert_eq!(s.records.iter().rev().count(), 3001);
    assert_eq!(Records::default().first().map(|r| r.line), None);
}

#[test]
fn dropped_lines_report_their_column() {
    let text = format!("{HEADER}\n{{\"a\":é,}}\n");
    let s = load(&text).unwrap();
    assert_eq!(s.dropped[0].column, 6);
    assert_eq!(s.dropped[0].line, 2);
}

/// Read as omp's (rule O17): a BOM is dropped, what `JSON.parse` refuses is read as Bun's
/// JSONL parser reads it, falsy values are entries, and a `null` (on which omp throws) is left
/// out with a reason.
#[test]
fn omp_reads_the_text_with_bun_s_rules() {
    let text = [
        &format!("\u{feff}{HEADER}"),
        r#"{"type":"custom","id":"a","parentId":null}{"x":1}"#,
        "false",
        "null",
        r#"{"type":"custom","id":"b","#,
        r#""parentId":"a"}"#,
        "not json",
        r#"{"type":"custom","id":"c","parentId":"b"}"#,
    ]
    .join("\n");
    let session = Session::load_with(
        text.as_bytes(),
        LoadOptions {
            ids: &mut SequentialIds::default(),
            pi: PiVersion::V0_87,
            dialect: crate::Dialect::Omp,
        },
    )
    .unwrap();
    let lines: Vec<usize> = session.records.iter().map(|r| r.line).collect();
    assert_eq!(
        lines,
        [1, 2, 3, 5, 8],
        "header, a, false, b (over two lines), c"
    );
    assert_eq!(
        session.records.get(3).unwrap().text(),
        "{\"type\":\"custom\",\"id\":\"b\",\n\"parentId\":\"a\"}"
    );
    // What omp skips: the second value on line 2 (from where it starts), and line 7 (where
    // parsing failed).
    assert_eq!(
        session
            .dropped
            .iter()
            .map(|d| (d.line, d.column))
            .collect::<Vec<_>>(),
        [(2, 43), (7, 2)]
    );
    assert_eq!(session.dropped_bytes(&session.dropped[0]), br#"{"x":1}"#);
    assert_eq!(session.skipped.len(), 1);
    assert_eq!(session.skipped[0].line, 4);
    assert!(session.skipped[0].reason.contains("omp throws"));
    // pi 0.87.1 reads none of it past the BOM.
    let pi = Session::load_with(
        text.as_bytes(),
        LoadOptions {
            ids: &mut SequentialIds::default(),
            pi: PiVersion::V0_87,
            dialect: crate::Dialect::Pi,
        },
    );
    assert!(pi.is_err());
}

/// Rule O18: omp's header is its first value, a `null` one too; a file with no value and no
/// malformed line is one omp would start a new session in (`blank`), any other is refused; the
/// messages name omp, not pi.
#[test]
fn omp_headers_are_omp_s() {
    let load_omp = |text: &str| {
        Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: PiVersion::V0_87,
                dialect: crate::Dialect::Omp,
            },
        )
        .map(|_| ())
    };
    let line =
        r#"{"type":"title","v":1,"title":"Fix","updatedAt":"2026-01-01T00:00:00.000Z","pad":""#;
    let slot = format!("{line}{}\"}}\n", " ".repeat(255 - line.len() - 2));
    for blank in ["", "\n \n\t\n", "\u{feff}\n", slot.as_str()] {
        let e = load_omp(blank).unwrap_err();
        assert!(
            matches!(e, LoadError::Empty { blank: true, .. }),
            "{blank:?}"
        );
        assert!(
            e.to_string().contains("omp would start a new session"),
            "{e}"
        );
    }
    let e = load_omp("garbage\n").unwrap_err();
    assert!(matches!(e, LoadError::Empty { blank: false, .. }));
    assert!(e.to_string().contains("omp refuses to resume it"), "{e}");
    for (text, line) in [
        (format!("null\n{HEADER}\n"), 1),
        (format!("\n\nnull\n{HEADER}\n"), 3),
        ("null\n".to_owned(), 1),
    ] {
        let e = load_omp(&text).unwrap_err();
        assert!(
            matches!(e, LoadError::InvalidHeader { line: l, reason: HeaderProblem::Null, .. } if l == line),
            "{text:?}: {e:?}"
        );
        assert!(!e.to_string().contains("pi throws"), "{e}");
    }
    let e = load_omp(&format!("0\n{HEADER}\n")).unwrap_err();
    assert!(
        matches!(e, LoadError::InvalidHeader { line: 1, .. }),
        "{e:?}"
    );
    // A `null` after the header is left out, as before.
    assert!(load_omp(&format!("{HEADER}\nnull\n")).is_ok());
}
