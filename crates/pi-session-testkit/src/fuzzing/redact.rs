//! The `redact` target: redaction never changes a session's structure and never leaves a
//! planted secret. Any bytes redact without a panic into as many lines; a line that is JSON
//! stays JSON with the same keys, numbers and literals (ids, parents, types, timestamps),
//! each string equal unless it held a secret; and a secret planted (one per rule,
//! [`crate::planted`]) in a place and spelling the input picks is gone from the bytes and
//! from every decoded string, nested JSON included.
//!
//! Input: three bytes choosing the planted secret, its place and its spelling, then any
//! bytes, appended to the session as more lines.

use crate::planted::{self, Place, Planted, Spelling};
use pi_session_json::JsValue;
use pi_session_redact::{Key, Options, Redactor};
use std::sync::OnceLock;

fn redactor() -> &'static Redactor {
    static REDACTOR: OnceLock<Redactor> = OnceLock::new();
    REDACTOR.get_or_init(|| {
        Redactor::new(
            Options::default(),
            Key::from_bytes(b"the redact fuzz target's key").expect("a long key"),
        )
    })
}

fn planted_secrets() -> &'static [Planted] {
    static PLANTED: OnceLock<Vec<Planted>> = OnceLock::new();
    PLANTED.get_or_init(|| planted::secrets(1).0)
}

/// Checks the invariant of the module docs on `data`.
pub fn redact(data: &[u8]) {
    let [which, place, spelling, rest @ ..] = data else {
        return;
    };
    let all = planted_secrets();
    let p = &all[usize::from(*which) % all.len()];
    let place = Place::ALL[usize::from(*place) % Place::ALL.len()];
    let spelling =
        [Spelling::Plain, Spelling::EscapedFirst, Spelling::Split][usize::from(*spelling) % 3];
    let mut session = planted::session(std::slice::from_ref(p), place, spelling, "/p");
    let planted_lines = session.iter().filter(|&&b| b == b'\n').count();
    session.extend_from_slice(rest);
    let mut out = Vec::new();
    redactor()
        .redact(&session, &mut out)
        .expect("writing to memory never fails");
    let before: Vec<&[u8]> = session.split(|&b| b == b'\n').collect();
    let after: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    assert_eq!(before.len(), after.len(), "the line count changed");
    for (n, (b, a)) in before.iter().zip(&after).enumerate() {
        let Some(b) = std::str::from_utf8(b)
            .ok()
            .and_then(|b| pi_session_json::parse(b).ok())
        else {
            continue;
        };
        let a = std::str::from_utf8(a)
            .ok()
            .and_then(|a| pi_session_json::parse(a).ok())
            .unwrap_or_else(|| panic!("line {}: JSON redacted into what is not JSON", n + 1));
        let secrets: &[&str] = if n < planted_lines {
            &[p.secret.as_str()]
        } else {
            &[]
        };
        check_line(&b, &a, secrets, &format!("line {}", n + 1));
    }
    check_gone(&out[..], std::slice::from_ref(p), planted_lines);
}

/// No planted secret left in the first `lines` lines of `out`, in their bytes, their
/// decoded strings or JSON held in those.
pub fn check_gone(out: &[u8], planted: &[Planted], lines: usize) {
    for (n, line) in out.split(|&b| b == b'\n').take(lines).enumerate() {
        let text = String::from_utf8_lossy(line);
        for p in planted {
            assert!(
                !text.contains(&p.secret),
                "line {}: the secret of {} survives in the bytes",
                n + 1,
                p.rule
            );
        }
        let Ok(value) = pi_session_json::parse(&text) else {
            continue;
        };
        let mut decoded = Vec::new();
        strings(&value, &mut decoded);
        for s in &decoded {
            for p in planted {
                assert!(
                    !s.contains(&p.secret),
                    "line {}: {} survives decoded",
                    n + 1,
                    p.rule
                );
            }
            if let Ok(inner) = pi_session_json::parse(s) {
                let mut nested = Vec::new();
                strings(&inner, &mut nested);
                for p in planted {
                    assert!(
                        !nested.iter().any(|x| x.contains(&p.secret)),
                        "line {}: {} survives in nested JSON",
                        n + 1,
                        p.rule
                    );
                }
            }
        }
    }
}

fn strings(value: &JsValue, out: &mut Vec<String>) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            JsValue::String(s) => out.push(s.to_string_lossy()),
            JsValue::Array(a) => stack.extend(a.0.iter()),
            JsValue::Object(o) => stack.extend(o.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Compares an original line with its redaction: the same shape, the same keys, numbers and
/// literals; a string (or key) either the same or the original with spans replaced by
/// placeholders (JSON held in a string compared the same way, inside), and one that held a
/// planted secret changed.
pub fn check_line(before: &JsValue, after: &JsValue, secrets: &[&str], at: &str) {
    check_value(before, after, secrets, at, 0);
}

/// Values nested deeper than this are compared as their `JSON.stringify` text (the check
/// recurses; fuzzed values nest thousands deep).
const DEEP: usize = 128;

fn check_value(before: &JsValue, after: &JsValue, secrets: &[&str], at: &str, depth: usize) {
    if depth > DEEP {
        let (b, a) = (
            pi_session_json::to_string(before),
            pi_session_json::to_string(after),
        );
        if b != a {
            check_text(&b, &a, &[], &format!("{at}…"), depth);
        }
        return;
    }
    match (before, after) {
        (JsValue::String(b), JsValue::String(a)) => {
            let (b, a) = (b.to_string_lossy(), a.to_string_lossy());
            if secrets.iter().any(|s| b.contains(s)) {
                assert_ne!(b, a, "{at}: a string with a planted secret kept");
            }
            check_text(&b, &a, secrets, at, depth);
        }
        (JsValue::Array(b), JsValue::Array(a)) => {
            assert_eq!(b.0.len(), a.0.len(), "{at}: array length");
            for (i, (b, a)) in b.0.iter().zip(a.0.iter()).enumerate() {
                check_value(b, a, secrets, &format!("{at}[{i}]"), depth + 1);
            }
        }
        (JsValue::Object(b), JsValue::Object(a)) => {
            assert_eq!(b.len(), a.len(), "{at}: member count");
            for ((bk, b), (ak, a)) in b.iter().zip(a.iter()) {
                let (bk, ak) = (bk.to_string_lossy(), ak.to_string_lossy());
                check_text(&bk, &ak, secrets, &format!("{at} (key {bk:?})"), depth);
                check_value(b, a, secrets, &format!("{at}.{bk}"), depth + 1);
            }
        }
        (b, a) => assert_eq!(
            pi_session_json::to_string(b),
            pi_session_json::to_string(a),
            "{at}: a value that is not a string changed"
        ),
    }
}

/// `after` is `before`, or `before` with spans replaced by placeholders: what is left between
/// the placeholders appears in `before`, in order. JSON held in the string is compared as
/// JSON (its strings written again may spell their escapes differently).
fn check_text(before: &str, after: &str, secrets: &[&str], at: &str, depth: usize) {
    if before == after {
        return;
    }
    if depth <= DEEP
        && let (Ok(b), Ok(a)) = (
            pi_session_json::parse(before),
            pi_session_json::parse(after),
        )
        && matches!(b, JsValue::Object(_) | JsValue::Array(_))
    {
        check_value(&b, &a, secrets, &format!("{at}→"), depth + 1);
        return;
    }
    assert!(
        after.contains("[REDACTED:"),
        "{at}: changed without a placeholder: {after:?}"
    );
    let mut rest = before;
    for piece in after.split("[REDACTED:") {
        // The placeholder's own `rule:h8]`, then text of the original.
        let piece = match piece.find(']') {
            Some(end) if piece.as_ptr() != after.as_ptr() => &piece[end + 1..],
            _ => piece,
        };
        match rest.find(piece) {
            Some(found) => rest = &rest[found + piece.len()..],
            None => panic!("{at}: {piece:?} is not what the original held there: {after:?}"),
        }
    }
}
