//! The `search` target: a match is found iff the pattern matches the decoded text. With
//! both pi versions' rules, `search::find` (which skips unparsed the lines its raw-line
//! prefilter rules out) gives exactly the matches of the pattern over every text
//! `search::texts` decodes, in order, each with the snippet counted from the start of its
//! text; `search::any` says whether there is one.
//!
//! Input: a mode byte (bit 0: without regard to case; bits 1–2: no role filter, `user`,
//! `assistant`, `tool`), the pattern up to the first LF (at most [`MAX_PATTERN`] bytes of
//! UTF-8, else the input is skipped), then the session's bytes.

use pi_session_format::PiVersion;
use pi_session_format::search::{self, CONTEXT_CHARS, Match, Pattern, Role};
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
        ] {
            for mode in 0..8u8 {
                let mut input = vec![mode];
                input.extend_from_slice(pattern.as_bytes());
                input.push(b'\n');
                input.extend_from_slice(SESSION.as_bytes());
                search(&input);
            }
        }
        for odd in [&b""[..], b"\x01", b"\x00(\n", b"\x00a\nnot a session"] {
            search(odd);
        }
    }
}
