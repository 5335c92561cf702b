//! The streaming listing entry against the whole-file one ([`super::oracle`]), with pieces of
//! every size so that lines cross piece boundaries.

use super::*;

const MTIME: f64 = 946_684_800_000.0;

fn streamed(bytes: &[u8], pi: PiVersion, piece: usize) -> String {
    String::from_utf8(write_with_piece(bytes, piece, MTIME, pi)).unwrap()
}

fn expected(bytes: &[u8], pi: PiVersion) -> String {
    oracle::session_info(bytes, MTIME, pi).map_or("null".into(), |v| json::to_string(&v))
}

fn check(text: &str) {
    for pi in [PiVersion::V0_73, PiVersion::V0_87] {
        let want = expected(text.as_bytes(), pi);
        for piece in [1, 2, 3, 5, 7, 16, 64, PIECE - 1, PIECE] {
            assert_eq!(
                streamed(text.as_bytes(), pi, piece),
                want,
                "{pi:?} piece {piece}: {text:?}"
            );
        }
    }
}

const HEADER: &str =
    r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

#[test]
fn i1_streamed_equals_whole_file() {
    let lines = [
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"toolResult","content":[]}}"#,
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"timestamp":1735689605000}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"c\"\u0001\ud800 \ud83d\ude00 é"}}"#,
        r#"{"type":"session_info","name":"  n  "}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"us\u0065r","content":[{"type":"t\u0065xt","text":[1,[2,null],{}]},{"type":"text"},{"type":"text","text":null},{"type":"text","text":""}]}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":""}]}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":""}}"#,
        r#"{"type":"message","timestamp":5,"message":{"role":"assistant","content":[],"timestamp":"x"}}"#,
        r#"{"type":"message","message":{"role":1,"content":"x"}}"#,
        r#"{"type":"message","message":{"content":"x"}}"#,
        r#"{"type":"message","message":{"role":"user"}}"#,
        r#"{"type":"message","message":"text"}"#,
        r#"{"type":"session_info","name":null}"#,
        r#"{"type":"session_info","name":" \ud800 "}"#,
        r#"{"type":"mes\u0073age","message":{"role":"assistant","content":"z","content":"zz","timestamp":1e400}}"#,
        r#"not json"#,
        r#"false"#,
        r#"0"#,
        r#"[null]"#,
        "\u{FEFF}{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bom\"}}",
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"cr\"}}\r{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"after cr\"}}",
    ];
    let body = lines.join("\n");
    check(&format!("{HEADER}\n{body}\n"));
    check(&format!("\n  {HEADER}\r\n{body}\r\n\n"));
    check(&format!("\u{FEFF}{HEADER}\n{body}"));
    check(&format!("null\n{HEADER}\n{body}"));
    check(&format!("false\n{HEADER}\n{body}"));
    // Found by the fuzzer: a line starting with whitespace, whose message has no
    // timestamp (the entry's counts) and a session_info name after a tab.
    check(&format!(
        "{HEADER}\n\t{}\t\n \t{}",
        r#"{"type":"message","timestamp":"2025-11-20T09:14:12.129Z","message":{"role":"assistant","content":"x","timestaqp":1}}"#,
        r#"{"type":"session_info","name":"tabbed"}"#
    ));
    for line in lines {
        check(&format!("{HEADER}\n{line}"));
        check(&format!("{HEADER}\r{line}\r"));
        check(line);
    }
}

#[test]
fn i2_every_throw_drops_the_session() {
    for bad in [
        "null",
        r#"{"type":"message"}"#,
        r#"{"type":"message","message":null}"#,
        r#"{"type":"message","message":{"role":"user","content":{}}}"#,
        r#"{"type":"message","message":{"role":"user","content":null}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text"},null]}}"#,
        r#"{"type":"session_info","name":1}"#,
        r#"{"type":"session_info","name":{}}"#,
        // `join` of a text that cannot be made a string (I7)
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":{"toString":1}}]}}"#,
        r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":[[{"toString":{}}]]}]}}"#,
    ] {
        check(&format!("{HEADER}\n{bad}\n{HEADER}"));
        check(&format!(
            "{HEADER}\n{}\n{bad}",
            r#"{"type":"message","message":{"role":"user","content":"x"}}"#
        ));
    }
    check(r#"{"type":"label"}"#);
    // ... but one with `valueOf` alone, or `toString` deeper in an object, can.
    for fine in [
        r#"{"valueOf":1}"#,
        r#"{"a":{"toString":1}}"#,
        r#"[1,null,{"x":2}]"#,
    ] {
        let line = format!(
            r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"text","text":{fine}}}]}}}}"#
        );
        check(&format!("{HEADER}\n{line}"));
        assert_ne!(
            expected(format!("{HEADER}\n{line}").as_bytes(), PiVersion::V0_73),
            "null"
        );
    }
    check("");
    check(" \n\u{A0}\n");
    check(r#"{"type":"session","timestamp":"bad"}"#);
}

#[test]
fn invalid_utf8_and_long_lines_cross_pieces() {
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(
        b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\xFF\xC3(\"}}\n",
    );
    let long = "y".repeat(300_000);
    bytes.extend_from_slice(
        format!("{{\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":\"{long}\"}}}}\n")
            .as_bytes(),
    );
    for pi in [PiVersion::V0_73, PiVersion::V0_87] {
        let want = expected(&bytes, pi);
        for piece in [1, 100, 4096, PIECE - 1, PIECE] {
            assert_eq!(streamed(&bytes, pi, piece), want);
        }
    }
}

/// [`write_entry`] is pi's entry for a pi file and omp's for an omp file (told by its title
/// slot when no dialect is given); a dialect given wins; the list's entry is the same without
/// pi's texts.
#[test]
fn the_entry_is_the_dialects() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
    let user = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}"#;
    let line =
        r#"{"type":"title","v":1,"title":"Fix","updatedAt":"2026-01-01T00:00:00.000Z","pad":""#;
    let slot = format!("{line}{}\"}}", " ".repeat(255 - line.len() - 2));
    let omp_file = format!("{slot}\n{header}\n{user}\n");
    let pi_file = format!("{header}\n{user}\n");
    let entry = |bytes: &str, dialect| {
        let mut out = Vec::new();
        write_entry(
            bytes.as_bytes(),
            None,
            5.0,
            PiVersion::V1_5,
            dialect,
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    };
    let omp = String::from_utf8(crate::omp::info::info_json(omp_file.as_bytes(), 5.0)).unwrap();
    let pi =
        String::from_utf8(session_info_json(pi_file.as_bytes(), 5.0, PiVersion::V1_5)).unwrap();
    assert!(omp.contains(r#""title":"Fix""#), "{omp}");
    assert_eq!(entry(&omp_file, None), omp);
    assert_eq!(entry(&omp_file, Some(Dialect::Omp)), omp);
    assert_eq!(entry(&pi_file, None), pi);
    assert_eq!(entry(&pi_file, Some(Dialect::Pi)), pi);
    assert_ne!(entry(&omp_file, Some(Dialect::Pi)), omp);
    let listed = |bytes: &str, dialect| {
        String::from_utf8(listed_entry_json(
            bytes.as_bytes(),
            5.0,
            PiVersion::V1_5,
            dialect,
        ))
        .unwrap()
    };
    assert_eq!(listed(&omp_file, Dialect::Omp), omp);
    assert_eq!(
        listed(&pi_file, Dialect::Pi),
        pi.replace(r#""allMessagesText":"hi""#, r#""allMessagesText":"""#)
    );
}
