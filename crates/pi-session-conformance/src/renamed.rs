//! The writer level **renamed**: exact up to ids and times, for writers without id and clock
//! hooks.
//!
//! pi draws entry ids and session ids at random and reads the clock; the corpus fixes both
//! through the script (`id`, `sessionId`, `timestamp`), so pi's file holds the script's values.
//! A writer that cannot take them draws its own. This level compares its file with pi's byte
//! for byte, except where pi's file holds one of the script's ids or clock times:
//! - an **id** (a string that is one of the script's `id`, `sessionId` or `labelIds` values,
//!   or such a value inside a file path, as in `parentSession`) may be any other string, as
//!   long as the renaming is consistent: one script id always becomes the same id, and two
//!   never become one;
//! - a **time** (a string that is one of the script's `timestamp`s, the same time in a file
//!   name's spelling, `2026-03-01T00-00-00-000Z`, or a number that is the same time in
//!   milliseconds) may be any time of the same spelling, each on its own (a writer reading
//!   a real clock reads it more than once).
//!
//! Everything else, key order, number spelling and every other value, must be pi's bytes.
//! A number in the data that happens to equal one of the script's times in milliseconds (a
//! message's own `timestamp` set to the operation's time) is taken as a time too: the level is
//! that much more lenient.

use crate::diff::describe;
use pi_session_format::date;
use pi_session_format::json::{self, JsValue};
use std::collections::HashMap;

/// What the script fixes that a writer without hooks draws or reads itself.
#[derive(Debug, Default, Clone)]
pub struct ScriptValues {
    ids: Vec<String>,
    /// ISO 8601 (`2026-03-01T00:00:00.000Z`).
    times: Vec<String>,
}

impl ScriptValues {
    /// The ids and times of a script (NDJSON operations; lines that are not JSON objects are
    /// skipped: the writer run reports those).
    pub fn of(script: &str) -> ScriptValues {
        let mut values = ScriptValues::default();
        for line in script.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(JsValue::Object(op)) = json::parse(line.trim()) else {
                continue;
            };
            for key in ["id", "sessionId"] {
                if let Some(JsValue::String(id)) = op.get(key)
                    && let Some(id) = id.as_str()
                {
                    values.ids.push(id.to_owned());
                }
            }
            if let Some(JsValue::Array(ids)) = op.get("labelIds") {
                for id in &ids.0 {
                    if let JsValue::String(id) = id
                        && let Some(id) = id.as_str()
                    {
                        values.ids.push(id.to_owned());
                    }
                }
            }
            if let Some(JsValue::String(t)) = op.get("timestamp")
                && let Some(t) = t.as_str()
            {
                values.times.push(t.to_owned());
            }
        }
        values.ids.retain(|id| !id.is_empty());
        values.ids.sort();
        values.ids.dedup();
        values.times.sort();
        values.times.dedup();
        values
    }

    fn slot_of_string(&self, content: &str) -> Option<Slot> {
        if self.ids.iter().any(|id| id == content) {
            return Some(Slot::Id(content.to_owned()));
        }
        if self.times.iter().any(|t| t == content) {
            return Some(Slot::IsoTime);
        }
        None
    }

    fn milliseconds(&self) -> Vec<String> {
        self.times
            .iter()
            .map(|t| date::parse_date(t))
            .filter(|ms| ms.is_finite())
            .map(|ms| format!("{ms}"))
            .collect()
    }
}

/// A place in pi's file that holds a value the script fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    /// This script id.
    Id(String),
    /// An ISO 8601 time.
    IsoTime,
    /// A time as pi spells it in a file name (`:` and `.` as `-`).
    FileNameTime,
    /// A time in milliseconds (a JSON number).
    Milliseconds,
}

/// pi's file cut into bytes that must be equal and slots that may differ.
enum Piece<'a> {
    Literal(&'a [u8]),
    Slot(Slot, &'a [u8]),
}

/// Cuts `expected` into literals and slots: JSON strings that are a script id or time, ids and
/// file-name times inside strings holding a path (`/`), numbers that are a script time.
fn pieces<'a>(expected: &'a [u8], values: &ScriptValues) -> Vec<Piece<'a>> {
    let milliseconds = values.milliseconds();
    let file_name_times: Vec<String> = values
        .times
        .iter()
        .map(|t| t.replace([':', '.'], "-"))
        .collect();
    let mut out = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    let mut push_slot = |out: &mut Vec<Piece<'a>>, start: usize, end: usize, slot: Slot| {
        out.push(Piece::Literal(&expected[literal_start..start]));
        out.push(Piece::Slot(slot, &expected[start..end]));
        literal_start = end;
    };
    while i < expected.len() {
        match expected[i] {
            b'"' => {
                let start = i + 1;
                let mut end = start;
                while end < expected.len() && expected[end] != b'"' {
                    end += if expected[end] == b'\\' { 2 } else { 1 };
                }
                let end = end.min(expected.len());
                if let Ok(content) = std::str::from_utf8(&expected[start..end]) {
                    if let Some(slot) = values.slot_of_string(content) {
                        push_slot(&mut out, start, end, slot);
                    } else if content.contains('/') {
                        for (at, len, slot) in slots_in_path(content, values, &file_name_times) {
                            push_slot(&mut out, start + at, start + at + len, slot);
                        }
                    }
                }
                i = end + 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < expected.len()
                    && matches!(expected[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let token = &expected[start..i];
                if milliseconds.iter().any(|ms| ms.as_bytes() == token) {
                    push_slot(&mut out, start, i, Slot::Milliseconds);
                }
            }
            _ => i += 1,
        }
    }
    out.push(Piece::Literal(&expected[literal_start..]));
    out
}

/// The script ids and file-name times inside a path, as (offset, length, slot), in order,
/// each delimited by characters that cannot continue it.
fn slots_in_path(
    content: &str,
    values: &ScriptValues,
    file_name_times: &[String],
) -> Vec<(usize, usize, Slot)> {
    let bytes = content.as_bytes();
    let delimited = |at: usize, len: usize| {
        let before = at.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(at + len).copied();
        let free = |c: Option<u8>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != b'-');
        free(before) && free(after)
    };
    let mut found: Vec<(usize, usize, Slot)> = Vec::new();
    let candidates = values
        .ids
        .iter()
        .map(|id| (id.as_str(), Slot::Id(id.clone())))
        .chain(
            file_name_times
                .iter()
                .map(|t| (t.as_str(), Slot::FileNameTime)),
        );
    for (token, slot) in candidates {
        for (at, _) in content.match_indices(token) {
            if delimited(at, token.len()) {
                found.push((at, token.len(), slot.clone()));
            }
        }
    }
    found.sort_by_key(|(at, _, _)| *at);
    // Overlaps cannot be told apart: keep the first.
    let mut end = 0;
    found.retain(|(at, len, _)| {
        let keep = *at >= end;
        if keep {
            end = at + len;
        }
        keep
    });
    found
}

/// Whether `text` is a time in the slot's spelling.
fn is_time(slot: &Slot, text: &str) -> bool {
    match slot {
        Slot::IsoTime => date::parse_date(text).is_finite(),
        Slot::FileNameTime => {
            let iso = file_name_time_as_iso(text);
            iso.is_some_and(|t| date::parse_date(&t).is_finite())
        }
        Slot::Milliseconds => !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()),
        Slot::Id(_) => false,
    }
}

/// `2026-03-01T00-00-00-000Z` as `2026-03-01T00:00:00.000Z`.
fn file_name_time_as_iso(text: &str) -> Option<String> {
    let (day, time) = text.split_once('T')?;
    let mut parts = time.splitn(4, '-');
    let (h, m, s, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some(format!("{day}T{h}:{m}:{s}.{rest}"))
}

/// Judges `actual` against pi's `expected` at the renamed level: `Ok` with the number of ids
/// renamed, or why not.
pub fn judge(expected: &[u8], actual: &[u8], values: &ScriptValues) -> Result<usize, String> {
    let pieces = pieces(expected, values);
    // The actual file with each slot's value put back to pi's, as far as it matched: the
    // first difference then shows as in the exact level.
    let mut restored = Vec::with_capacity(actual.len());
    let mut renaming: HashMap<&str, &[u8]> = HashMap::new();
    let mut renamed_from: HashMap<&[u8], &str> = HashMap::new();
    let mut at = 0;
    for (n, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(bytes) => {
                if !actual[at..].starts_with(bytes) {
                    restored.extend_from_slice(&actual[at..]);
                    return Err(difference(expected, &restored));
                }
                restored.extend_from_slice(bytes);
                at += bytes.len();
            }
            Piece::Slot(slot, pis) => {
                // The slot runs to where the next literal starts (its first byte).
                let stop = match pieces.get(n + 1) {
                    Some(Piece::Literal(next)) if !next.is_empty() => Some(next[0]),
                    _ => None,
                };
                let len = match slot {
                    Slot::Milliseconds => actual[at..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count(),
                    _ => actual[at..]
                        .iter()
                        .take_while(|&&b| Some(b) != stop && b != b'"' && b != b'\n')
                        .count(),
                };
                let value = &actual[at..at + len];
                let text = String::from_utf8_lossy(value);
                match slot {
                    Slot::Id(id) => {
                        if value.is_empty() {
                            restored.extend_from_slice(&actual[at..]);
                            return Err(difference(expected, &restored));
                        }
                        if let Some(before) = renaming.insert(id, value)
                            && before != value
                        {
                            return Err(format!(
                                "pi's id {id} is written as {:?} in one place and {text:?} in another (byte {at} of the file): ids must be renamed consistently",
                                String::from_utf8_lossy(before)
                            ));
                        }
                        if let Some(other) = renamed_from.insert(value, id)
                            && other != id
                        {
                            return Err(format!(
                                "pi's ids {other} and {id} are both written as {text:?} (byte {at} of the file): two ids cannot become one"
                            ));
                        }
                    }
                    time if !is_time(time, &text) => {
                        restored.extend_from_slice(&actual[at..]);
                        return Err(format!(
                            "{text:?} where pi writes the time {:?}, not a time in that spelling\n{}",
                            String::from_utf8_lossy(pis),
                            difference(expected, &restored)
                        ));
                    }
                    _ => {}
                }
                restored.extend_from_slice(pis);
                at += len;
            }
        }
    }
    if at != actual.len() {
        restored.extend_from_slice(&actual[at..]);
        return Err(difference(expected, &restored));
    }
    Ok(renaming.len())
}

fn difference(expected: &[u8], restored: &[u8]) -> String {
    describe(expected, restored).unwrap_or_else(|| "the files differ".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = concat!(
        r#"{"op":"create","cwd":"/w","id":"0195f3a4-0000-7000-8000-000000000001","timestamp":"2026-03-01T00:00:00.000Z"}"#,
        "\n",
        r#"{"op":"message","id":"000000a1","timestamp":"2026-03-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        "\n",
        r#"{"op":"message","id":"000000a2","timestamp":"2026-03-01T00:00:02.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        "\n",
    );

    fn pi_file() -> String {
        [
            r#"{"type":"session","version":3,"id":"0195f3a4-0000-7000-8000-000000000001","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/w","parentSession":"/s/2026-02-01T00-00-00-000Z_0195f3a4-0000-7000-8000-000000000001.jsonl"}"#,
            r#"{"type":"message","id":"000000a1","parentId":null,"timestamp":"2026-03-01T00:00:01.000Z","message":{"n":1772323201000}}"#,
            r#"{"type":"message","id":"000000a2","parentId":"000000a1","timestamp":"2026-03-01T00:00:02.000Z","message":{"n":2}}"#,
            "",
        ]
        .join("\n")
    }

    fn values() -> ScriptValues {
        let mut v = ScriptValues::of(SCRIPT);
        v.times.push("2026-02-01T00:00:00.000Z".into());
        v
    }

    #[test]
    fn the_same_file_passes() {
        assert_eq!(
            judge(pi_file().as_bytes(), pi_file().as_bytes(), &values()),
            Ok(3)
        );
    }

    #[test]
    fn ids_and_times_renamed_consistently_pass() {
        let mine = pi_file()
            .replace("0195f3a4-0000-7000-8000-000000000001", "my-session")
            .replace("000000a1", "x1")
            .replace("000000a2", "y22")
            .replace("2026-03-01T00:00:01.000Z", "2031-12-31T23:59:59.999Z")
            .replace("2026-02-01T00-00-00-000Z", "2030-01-01T10-11-12-131Z")
            .replace("1772323201000", "1");
        assert_eq!(
            judge(pi_file().as_bytes(), mine.as_bytes(), &values()),
            Ok(3)
        );
    }

    #[test]
    fn inconsistent_or_merged_ids_fail() {
        let inconsistent = pi_file().replacen("000000a1", "x1", 1);
        let err = judge(pi_file().as_bytes(), inconsistent.as_bytes(), &values()).unwrap_err();
        assert!(err.contains("renamed consistently"), "{err}");
        let merged = pi_file().replace("000000a2", "000000a1");
        let err = judge(pi_file().as_bytes(), merged.as_bytes(), &values()).unwrap_err();
        assert!(err.contains("cannot become one"), "{err}");
    }

    #[test]
    fn a_time_that_is_not_a_time_fails() {
        let mine = pi_file().replace("2026-03-01T00:00:02.000Z", "yesterday");
        let err = judge(pi_file().as_bytes(), mine.as_bytes(), &values()).unwrap_err();
        assert!(err.contains("not a time"), "{err}");
    }

    #[test]
    fn anything_else_must_be_pi_bytes() {
        for other in [
            pi_file().replace(r#""n":2"#, r#""n":2.0"#),
            pi_file().replace(r#""cwd":"/w""#, r#""cwd":"/v""#),
            pi_file().replace(r#""version":3,"id""#, r#""id""#),
            pi_file() + "\n",
        ] {
            let err = judge(pi_file().as_bytes(), other.as_bytes(), &values()).unwrap_err();
            assert!(err.contains("line"), "{err}");
        }
    }
}
