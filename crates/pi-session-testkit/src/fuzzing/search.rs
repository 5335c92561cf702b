//! The `search` target: a match is found iff the pattern matches the decoded text. With
//! both pi versions' rules, `search::find` (which skips unparsed the lines its raw-line
//! prefilter rules out) gives exactly the matches of the pattern over every text
//! `search::texts` decodes, in order, each with the snippet counted from the start of its
//! text; `search::any` says whether there is one; and `search::in_bytes` (which reads only
//! the header of a file the pattern cannot match raw) fails exactly when loading fails and
//! finds what `find` finds on the loaded session.
//!
//! Input: a mode byte (bit 0: without regard to case; bits 1–2: no role filter, `user`,
//! `assistant`, `tool`), the pattern up to the first LF (at most [`MAX_PATTERN`] bytes of
//! UTF-8, else the input is skipped), then the session's bytes.

use pi_session_format::PiVersion;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::search::{self, CONTEXT_CHARS, Match, Pattern, Role, Wanted};
use pi_session_format::session::Session;
use regex::RegexBuilder;

/// The longest pattern tried: longer ones only make the regular expression slower to build.
pub(super) const MAX_PATTERN: usize = 64;

/// Checks the invariant of the module docs on `data`.
pub fn search(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (pattern, bytes) = match rest.iter().position(|&b| b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    if pattern.len() > MAX_PATTERN {
        return;
    }
    let Ok(pattern) = std::str::from_utf8(pattern) else {
        return;
    };
    let ignore_case = mode & 1 == 1;
    let role = match (mode >> 1) & 3 {
        0 => None,
        1 => Some(Role::User),
        2 => Some(Role::Assistant),
        _ => Some(Role::Tool),
    };
    let Ok(compiled) = Pattern::new(pattern, ignore_case) else {
        return;
    };
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(ignore_case)
        .build()
        .expect("a pattern the library compiles");
    for pi in [PiVersion::V0_73, PiVersion::V0_87] {
        // The search of a file's bytes, which reads only the header of a file the pattern
        // cannot match raw, fails as loading does and finds what `find` finds.
        // A v1 file's ids are made up: the same ones on each load.
        let fast = |wanted| {
            let mut ids = SequentialIds::default();
            let loader = Session::loader(pi).ids(&mut ids).detect_dialect();
            search::in_bytes(loader, bytes, &compiled, role, wanted)
        };
        let mut ids = SequentialIds::default();
        let loaded = Session::loader(pi)
            .ids(&mut ids)
            .detect_dialect()
            .load(bytes);
        let (all, first) = (fast(Wanted::All), fast(Wanted::First));
        let Ok(session) = loaded else {
            assert!(
                all.is_err() && first.is_err(),
                "search::in_bytes {pattern:?} found a session where loading fails"
            );
            continue;
        };
        let all = all.expect("search::in_bytes of a session that loads");
        assert_eq!(
            all,
            search::find(&session, &compiled, role),
            "search::in_bytes {pattern:?} (may occur: {})",
            compiled.may_occur_in(bytes)
        );
        assert_eq!(
            first.expect("search::in_bytes of a session that loads"),
            all.first().cloned().into_iter().collect::<Vec<_>>(),
            "search::in_bytes {pattern:?}, the first match"
        );
        let Ok(session) = Session::from_bytes(bytes, pi) else {
            continue;
        };
        let expected: Vec<Match> = search::texts(&session)
            .into_iter()
            .filter(|t| role.is_none_or(|r| r == t.role))
            .flat_map(|t| {
                regex
                    .find_iter(&t.text)
                    .map(|m| {
                        let head = &t.text[..m.start()];
                        let n = head.chars().count();
                        Match {
                            line: t.line,
                            id: t.id.clone(),
                            role: t.role,
                            field: t.field,
                            on_path: t.on_path,
                            before: head.chars().skip(n.saturating_sub(CONTEXT_CHARS)).collect(),
                            matched: m.as_str().to_owned(),
                            after: t.text[m.end()..].chars().take(CONTEXT_CHARS).collect(),
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let found = search::find(&session, &compiled, role);
        assert_eq!(
            found,
            expected,
            "search {pattern:?} (prefilter {}) differs from the pattern over the decoded texts",
            compiled.uses_raw_prefilter()
        );
        assert_eq!(
            search::any(&session, &compiled, role),
            !expected.is_empty(),
            "search::any {pattern:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"say \"hi\"\nthen caf\u00e9 and back\\slash in src\/main.rs","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command": "ls", "n": 1.50, "2": 0}}],"timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"FAIL \u001b[31mred"}],"isError":true,"timestamp":3}}
"#;

    /// The check of `pattern` over `session` in each mode.
    fn every_mode(pattern: &str, session: &[u8]) {
        for mode in 0..8u8 {
            let mut input = vec![mode];
            input.extend_from_slice(pattern.as_bytes());
            input.push(b'\n');
            input.extend_from_slice(session);
            search(&input);
        }
    }

    /// The check holds on patterns the prefilter takes and those it must not, with each
    /// mode; it would fail if `find` lost a match the decoded text has.
    #[test]
    fn the_check_runs_on_a_few_inputs() {
        for pattern in [
            "hi",
            r#""hi""#,
            r"hi.\nthen",
            "café",
            r"back\\slash",
            "^say",
            r"\bthen",
            "src/main",
            r"bash \{",
            r"1\.5\}",
            r#"\{"2":0,"command""#,
            "x",
            "",
            "(?i)FAIL",
            r"\x1b",
            "1.5",
            "ull",
            "bash ",
            "ls|command",
            "(?i)THINKING|hmm",
        ] {
            every_mode(pattern, SESSION.as_bytes());
        }
        // The same session with no escape at all: each file-level shortcut is taken.
        let plain = SESSION
            .lines()
            .filter(|l| !l.contains('\\'))
            .chain([
                r#"{"type":"message","id":"a4","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"d","name":"edit","arguments":{"big":1e999,"n":1.50,"list":[ 1, 2 ]}}],"timestamp":4}}"#,
                r#"{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"two\nlines, \"quoted\" from İzmir","timestamp":5}}"#,
            ])
            .collect::<Vec<_>>()
            .join("\n");
        for pattern in [
            "hmm",
            "1.5,",
            "ull",
            "edit \\{",
            "1, 2",
            "2]",
            "null",
            "zz",
            "(?i)EDIT",
            "^zz",
            r"\bhmm\b",
            "(?m)^hmm$",
            "^two",
            r"two\nlines",
            r"o\nl",
            "\"quoted",
            "(?i)İzmir",
            "(?i)izmir",
            "İ|i̇",
        ] {
            every_mode(pattern, plain.as_bytes());
        }
        // Bytes that are not UTF-8 read as U+FFFD, which a pattern can match.
        let mut broken = plain.clone().into_bytes();
        let at = broken
            .windows(3)
            .position(|w| w == b"hmm")
            .expect("a thinking text");
        broken.insert(at + 1, 0xff);
        for pattern in ["\u{FFFD}", "h.m", "zz", "h\u{FFFD}?m"] {
            every_mode(pattern, &broken);
        }
        for odd in [
            &b""[..],
            b"\x01",
            b"\x00(\n",
            b"\x00a\nnot a session",
            b"\x00zz\nnot a session",
            b"\x00zz\n{\"type\":\"message\",\"id\":\"m\"}\n",
            b"\x00zz\n{\"type\":\"session\",\"id\":\"s\",\"version\":2}\n",
        ] {
            search(odd);
        }
    }
}
