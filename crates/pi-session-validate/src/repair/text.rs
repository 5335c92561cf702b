//! Repairs of the file's lines as text: glued lines split (`{…}{…}` after a torn append),
//! other lines that are not JSON moved to the rejects (pi drops them), a torn last line ended
//! with a newline and kept, and lines that repeat an earlier line byte for byte (pi 0.73.1's
//! re-flush of a reopened session) removed.

use super::{Fix, FixAction, Line, Reject, Repairs};
use crate::Code;
use pi_session_format::json::{self, LineScanner, ParseErrorKind};
use rustc_hash::FxHashMap;

/// How many places a glued line is tried at for the start of a complete entry after a torn
/// one (each try parses the rest of the line, so this bounds the work per line).
const SPLIT_TRIES: usize = 64;

/// What a line that is not JSON is made of: complete JSON objects, with a torn fragment before
/// them (the entry a crash cut short) or after them.
struct Glued<'t> {
    fragment_before: Option<&'t str>,
    parts: Vec<&'t str>,
    fragment_after: Option<&'t str>,
}

/// The complete objects `text` is a concatenation of (whitespace between them allowed), and
/// what follows them when that is not one (a fragment).
fn objects(text: &str) -> (Vec<&str>, Option<&str>) {
    let mut parts = Vec::new();
    let mut rest = text.trim_start_matches([' ', '\t', '\r']);
    while !rest.is_empty() {
        if !rest.starts_with('{') {
            return (parts, Some(rest));
        }
        match json::parse(rest) {
            Ok(_) => {
                parts.push(rest.trim_end_matches([' ', '\t', '\r']));
                return (parts, None);
            }
            Err(e) if e.kind == ParseErrorKind::TrailingText && e.offset > 0 => {
                let (head, tail) = rest.split_at(e.offset);
                parts.push(head.trim_end_matches([' ', '\t', '\r']));
                rest = tail.trim_start_matches([' ', '\t', '\r']);
            }
            Err(_) => return (parts, Some(rest)),
        }
    }
    (parts, None)
}

/// How a line that `JSON.parse` refuses comes apart, if it is glued entries: at least one
/// complete object, and more than one piece.
fn glued(text: &str) -> Option<Glued<'_>> {
    let (parts, after) = objects(text);
    if !parts.is_empty() {
        return (parts.len() > 1 || after.is_some()).then_some(Glued {
            fragment_before: None,
            parts,
            fragment_after: after,
        });
    }
    // A torn entry first: the next entry starts where `{"type":` starts a run of complete
    // objects. The run that reaches the end of the line wins (the append after the torn one
    // wrote a whole line); a content block of the torn entry (`{"type":"text",…}`) is complete
    // too, but what follows it is the rest of the torn entry.
    let mut first = None;
    for (at, _) in text.match_indices("{\"type\":").skip(1).take(SPLIT_TRIES) {
        let (parts, after) = objects(&text[at..]);
        if parts.is_empty() {
            continue;
        }
        let glued = Glued {
            fragment_before: Some(&text[..at]),
            parts,
            fragment_after: after,
        };
        if glued.fragment_after.is_none() {
            return Some(glued);
        }
        first.get_or_insert(glued);
    }
    first
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits glued lines, moves other lines that are not JSON to the rejects (a byte order mark
/// alone is taken off), and ends a torn last line; see the module docs.
pub(super) fn split_glued(lines: Vec<Line>, final_newline: bool, out: &mut Repairs) -> Vec<Line> {
    let count = lines.len();
    let mut kept = Vec::with_capacity(count);
    // Validates as `JSON.parse` does, building nothing.
    let mut scanner = LineScanner::default();
    for (n, line) in lines.into_iter().enumerate() {
        let last = n + 1 == count;
        if scanner.scan(&line.text).is_ok() || line.text.iter().all(u8::is_ascii_whitespace) {
            if last && !final_newline {
                out.fix(Fix::new(
                    Code::TornLastLine,
                    line.origin,
                    FixAction::Terminated,
                    "the last line is complete but has no newline: one is added, so that the next append starts a line of its own",
                ));
            }
            kept.push(line);
            continue;
        }
        let fixing = out.wants(Code::InvalidJson);
        if !fixing && !last {
            kept.push(line);
            continue;
        }
        if fixing
            && let Some(rest) = line.text.strip_prefix(BOM)
            && scanner.scan(rest).is_ok()
        {
            out.reject(Reject {
                line: line.origin,
                text: BOM.to_vec(),
                reason: "a byte order mark before the line's JSON".into(),
            });
            out.fix(Fix::new(
                Code::InvalidJson,
                line.origin,
                FixAction::Trimmed,
                "a byte order mark (U+FEFF) before the JSON, which makes pi drop the line: removed (kept in the rejects)",
            ));
            kept.push(Line::new(rest.to_vec(), line.origin));
            continue;
        }
        let pieces = fixing
            .then(|| std::str::from_utf8(&line.text).ok().and_then(glued))
            .flatten();
        let Some(pieces) = pieces else {
            if last {
                // A torn last line: kept, as pi keeps it (and ignores it).
                out.kept_torn_line = true;
                if !final_newline && out.wants(Code::TornLastLine) {
                    out.fix(Fix::new(
                        Code::TornLastLine,
                        line.origin,
                        FixAction::Terminated,
                        "the last line is cut off (an interrupted write): kept, and ended with a newline so that the next append is not glued onto it (pi ignores the line)",
                    ));
                }
                kept.push(line);
                continue;
            }
            if !fixing {
                kept.push(line);
                continue;
            }
            out.reject(Reject {
                line: line.origin,
                text: line.text,
                reason: "not JSON".into(),
            });
            out.fix(Fix::new(
                Code::InvalidJson,
                line.origin,
                FixAction::Rejected,
                "not JSON, so pi drops it (and loses it for good at its next rewrite): moved to the rejects",
            ));
            continue;
        };
        let origin = line.origin;
        for (fragment, place) in [
            (pieces.fragment_before, "before"),
            (pieces.fragment_after, "after"),
        ] {
            if let Some(fragment) = fragment {
                out.reject(Reject {
                    line: origin,
                    text: fragment.as_bytes().to_vec(),
                    reason: format!(
                        "a torn entry (an interrupted write) glued {place} complete ones"
                    ),
                });
            }
        }
        out.fix(Fix::new(
            Code::InvalidJson,
            origin,
            FixAction::Split,
            format!(
                "glued entries (a write that followed a torn one): split into {} line{}{}",
                pieces.parts.len(),
                if pieces.parts.len() == 1 { "" } else { "s" },
                match (pieces.fragment_before, pieces.fragment_after) {
                    (None, None) => String::new(),
                    (before, after) => format!(
                        "; the torn fragment ({} bytes) goes to the rejects",
                        before.map_or(0, str::len) + after.map_or(0, str::len)
                    ),
                }
            ),
        ));
        kept.extend(
            pieces
                .parts
                .into_iter()
                .map(|p| Line::new(p.as_bytes().to_vec(), origin)),
        );
    }
    kept
}

/// Whether a line is one whose repetition is a re-flush: a header or an entry with an id.
fn repeatable(text: &[u8]) -> Option<bool> {
    let value = super::value_of(text)?;
    let header = value.get("type").and_then(|t| t.as_str()) == Some("session");
    let entry = value.get("id").is_some_and(|id| id.as_str().is_some());
    (header || entry).then_some(header)
}

/// Removes every header or entry line that repeats an earlier line byte for byte.
pub(super) fn remove_repeats(lines: Vec<Line>, out: &mut Repairs) -> Vec<Line> {
    let mut seen: FxHashMap<&[u8], usize> = FxHashMap::default();
    let mut drop = vec![false; lines.len()];
    let mut fixes = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match seen.get(line.text.as_slice()) {
            Some(&first) => {
                let Some(header) = repeatable(&line.text) else {
                    continue;
                };
                let code = if header {
                    Code::DuplicateHeader
                } else {
                    Code::DuplicateId
                };
                if out.wants(code) {
                    drop[i] = true;
                    fixes.push(Fix::new(
                        code,
                        line.origin,
                        FixAction::RemovedRepeat,
                        format!(
                            "repeats line {} byte for byte ({}): removed",
                            lines[first].origin,
                            if header {
                                "a second header, as pi 0.73.1 writes when it flushes a reopened session again"
                            } else {
                                "an entry written twice, as pi 0.73.1's re-flush does"
                            }
                        ),
                    ));
                }
            }
            None => {
                seen.insert(&line.text, i);
            }
        }
    }
    for fix in fixes {
        out.fix(fix);
    }
    lines
        .into_iter()
        .zip(drop)
        .filter_map(|(line, dropped)| (!dropped).then_some(line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glued_lines_come_apart() {
        let g = glued(r#"{"a":1}{"b":2}"#).expect("glued");
        assert_eq!(g.parts, [r#"{"a":1}"#, r#"{"b":2}"#]);
        assert!(g.fragment_before.is_none() && g.fragment_after.is_none());

        let g = glued(r#"{"type":"mess{"type":"message","id":"x"}"#).expect("torn first");
        assert_eq!(g.fragment_before, Some(r#"{"type":"mess"#));
        assert_eq!(g.parts, [r#"{"type":"message","id":"x"}"#]);

        let g = glued(r#"{"a":1}{"type":"mes"#).expect("torn after");
        assert_eq!(g.parts, [r#"{"a":1}"#]);
        assert_eq!(g.fragment_after, Some(r#"{"type":"mes"#));

        // A content block of the torn entry is complete too; the entry after it is the split.
        let torn = r#"{"type":"message","message":{"content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"c"#;
        let next = r#"{"type":"message","id":"y"}"#;
        let line = format!("{torn}{next}");
        let g = glued(&line).expect("torn first, with blocks");
        assert_eq!(g.fragment_before, Some(torn));
        assert_eq!(g.parts, [next]);
        assert!(g.fragment_after.is_none());

        assert!(glued(r#"{"type":"mess"#).is_none(), "a torn line alone");
        assert!(glued("1 2").is_none(), "only objects are split");
        assert!(glued("garbage").is_none());
    }
}
