//! The planted-secret corpus: a secret for every rule, in every place a session keeps text,
//! spelled raw, escaped and split by an escape, and inside JSON held in a string. None may
//! survive redaction, in the bytes or in the decoded strings, and everything else must stay
//! as it was.

use pi_session_redact::{Key, Options, Redactor};
use pi_session_testkit::fuzzing;
use pi_session_testkit::planted::{self, Place, Planted, Spelling};

/// Rules no sample could be made for from their regex within the tries (their secrets are
/// checked by hand-written cases in `pi-session-redact`'s tests instead). A rule that starts
/// or stops being sampled fails the test, so the list stays true.
const NOT_SAMPLED: &[&str] = &[];

fn redactor() -> Redactor {
    Redactor::new(
        Options::default(),
        Key::from_bytes(b"the planted corpus key").unwrap(),
    )
}

/// Checks one redacted session against its original: nothing planted left, as many lines,
/// every line the same but for the strings that held a secret.
fn check(original: &[u8], planted: &[Planted], what: &str) {
    let mut out = Vec::new();
    let report = redactor().redact(original, &mut out).unwrap();
    let secrets: Vec<&str> = planted.iter().map(|p| p.secret.as_str()).collect();
    let lines = original.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(
        lines,
        out.iter().filter(|&&b| b == b'\n').count(),
        "{what}: line count"
    );
    fuzzing::check_gone(&out, planted, lines);
    let text = std::str::from_utf8(&out).unwrap();
    for (n, (b, a)) in std::str::from_utf8(original)
        .unwrap()
        .lines()
        .zip(text.lines())
        .enumerate()
    {
        let b = pi_session_json::parse(b).unwrap_or_else(|e| panic!("{what}:{}: {e:?}", n + 1));
        let a = pi_session_json::parse(a)
            .unwrap_or_else(|e| panic!("{what}:{}: the redacted line is not JSON: {e:?}", n + 1));
        fuzzing::check_line(&b, &a, &secrets, &format!("{what}:{}", n + 1));
    }
    assert!(
        report.redacted() >= planted.len(),
        "{what}: {} redacted",
        report.redacted()
    );
}

#[test]
fn every_rule_gets_a_planted_secret() {
    let (planted, missed) = planted::secrets(1);
    assert_eq!(missed, NOT_SAMPLED, "rules without a sample");
    assert!(planted.len() > 200);
}

#[test]
fn no_planted_secret_survives_in_any_place_or_spelling() {
    let (planted, _) = planted::secrets(1);
    for place in Place::ALL {
        for spelling in [Spelling::Plain, Spelling::EscapedFirst, Spelling::Split] {
            let session = planted::session(&planted, place, spelling, "/home/user/project");
            check(&session, &planted, &format!("{place:?}/{spelling:?}"));
        }
    }
}

#[test]
fn other_seeds_too() {
    for seed in 2..5 {
        let (planted, _) = planted::secrets(seed);
        let session = planted::session(&planted, Place::ToolResult, Spelling::Plain, "/p");
        check(&session, &planted, &format!("seed {seed}"));
    }
}

#[test]
fn the_same_secret_gets_the_same_placeholder_in_forked_files() {
    let (planted, _) = planted::secrets(1);
    let a = planted::session(&planted[..20], Place::UserText, Spelling::Plain, "/p");
    let b = planted::session(
        &planted[..20],
        Place::ToolResult,
        Spelling::EscapedFirst,
        "/p",
    );
    let redactor = redactor();
    let placeholders = |bytes: &[u8]| {
        let mut out = Vec::new();
        redactor.redact(bytes, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut found: Vec<String> = text
            .match_indices("[REDACTED:")
            .map(|(i, _)| text[i..i + text[i..].find(']').unwrap() + 1].to_owned())
            .collect();
        found.sort();
        found
    };
    assert_eq!(placeholders(&a), placeholders(&b));
}
