//! Repairs of the file's lines as text: glued lines split (`{…}{…}` after a torn append),
//! other lines that are not JSON moved to the rejects (pi drops them), a torn last line ended
//! with a newline and kept, and lines that repeat an earlier line byte for byte (pi 0.73.1's
//! re-flush of a reopened session) removed.

use super::{Fix, FixAction, Line, Reject, Repairs};
use crate::Code;
use pi_session_format::json::LineScanner;
use rustc_hash::FxHashMap;
use std::hash::BuildHasher;

/// How many places a glued line is tried at, in all, for the start of a complete entry that
/// turns out not to be one (each try may read the rest of the line, so this bounds the work
/// per line; tries that find entries cost only the entries' bytes).
const SPLIT_TRIES: usize = 64;

/// One piece of a glued line.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'t> {
    /// A complete JSON object, with the blanks after it (a line of its own).
    Part(&'t [u8]),
    /// A torn fragment (an entry a crash cut short) or other bytes that are not an object.
    Fragment(&'t [u8]),
}

/// The bytes of the JSON blanks (`JSON.parse`'s whitespace; a CR left by CRLF among them).
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn skip_blanks(text: &[u8], mut at: usize) -> usize {
    while text.get(at).copied().is_some_and(is_blank) {
        at += 1;
    }
    at
}

/// The run of complete objects `text` starts with (blanks before, between and after them
/// allowed), each with the blanks that follow it (the first also with those before it), and
/// whether the first looks like an entry: a `type` string and a `timestamp`, which every
/// header and entry pi writes has and no content block has. Only the objects' bytes are read.
fn objects<'t>(scanner: &mut LineScanner, text: &'t [u8]) -> (Vec<&'t [u8]>, bool) {
    let mut parts = Vec::new();
    let mut entry_like = false;
    let mut start = 0;
    let mut at = skip_blanks(text, 0);
    while text.get(at) == Some(&b'{') {
        let Ok((raw, len)) = scanner.scan_first(&text[at..]) else {
            break;
        };
        if parts.is_empty() {
            entry_like = raw
                .type_
                .is_some_and(|(s, _)| text.get(at + s) == Some(&b'"'))
                && raw.timestamp.is_some();
        }
        let end = skip_blanks(text, at + len);
        parts.push(&text[start..end]);
        start = end;
        at = end;
    }
    (parts, entry_like)
}

/// How a line that `JSON.parse` refuses comes apart, if it is glued entries: complete objects
/// and torn fragments, at least one object and more than one piece. The pieces are the line,
/// byte for byte, in order. Bytes that are not UTF-8 are taken as pi takes them (U+FFFD, a
/// character like any other in a string).
///
/// Objects are taken from the start of the line; after a fragment, the next object is where
/// a `{"type":` starts a run of complete objects whose first looks like an entry (a content
/// block of the torn entry, `{"type":"text",…}`, is complete too, but has no `timestamp`).
fn glued<'t>(scanner: &mut LineScanner, text: &'t [u8]) -> Option<Vec<Piece<'t>>> {
    let finder = memchr::memmem::Finder::new(b"{\"type\":");
    let mut pieces = Vec::new();
    let mut tries = 0;
    // Where the piece being looked at starts.
    let mut at = 0;
    let (parts, _) = objects(scanner, text);
    for part in parts {
        at += part.len();
        pieces.push(Piece::Part(part));
    }
    'fragments: while at < text.len() {
        // A fragment starts at `at`: it ends where the next entry starts, or at the end.
        let mut from = at + 1;
        while let Some(found) = finder.find(&text[from.min(text.len())..]) {
            let next = from + found;
            from = next + 1;
            if tries == SPLIT_TRIES {
                break;
            }
            let (parts, entry_like) = objects(scanner, &text[next..]);
            if parts.is_empty() || !entry_like {
                tries += 1;
                continue;
            }
            pieces.push(Piece::Fragment(&text[at..next]));
            at = next;
            for part in parts {
                at += part.len();
                pieces.push(Piece::Part(part));
            }
            continue 'fragments;
        }
        pieces.push(Piece::Fragment(&text[at..]));
        break;
    }
    let parts = pieces
        .iter()
        .filter(|p| matches!(p, Piece::Part(_)))
        .count();
    (parts > 0 && pieces.len() > 1).then_some(pieces)
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits glued lines, moves other lines that are not JSON to the rejects (a byte order mark
/// alone is taken off), and ends a torn last line; see the module docs.
pub(super) fn split_glued<'a>(
    lines: Vec<Line<'a>>,
    final_newline: bool,
    out: &mut Repairs,
) -> Vec<Line<'a>> {
    let count = lines.len();
    let mut kept = Vec::with_capacity(count);
    // Validates as `JSON.parse` does, building nothing.
    let mut scanner = LineScanner::default();
    let mut behind = out.behind();
    for (n, line) in lines.into_iter().enumerate() {
        let last = n + 1 == count;
        behind.passed(&line.text);
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
        let pieces = fixing.then(|| glued(&mut scanner, &line.text)).flatten();
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
                text: line.text.into_owned(),
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
        let mut parts = 0;
        let (mut fragments, mut torn) = (0, 0);
        for piece in &pieces {
            match piece {
                Piece::Part(_) => parts += 1,
                Piece::Fragment(fragment) => {
                    fragments += 1;
                    torn += fragment.len();
                    out.reject(Reject {
                        line: origin,
                        text: fragment.to_vec(),
                        reason: format!(
                            "a torn entry (an interrupted write) glued {} complete ones",
                            if parts == 0 { "before" } else { "after" }
                        ),
                    });
                }
            }
        }
        out.fix(Fix::new(
            Code::InvalidJson,
            origin,
            FixAction::Split,
            format!(
                "glued entries (a write that followed a torn one): split into {parts} line{}{}",
                if parts == 1 { "" } else { "s" },
                match fragments {
                    0 => String::new(),
                    1 => format!("; the torn fragment ({torn} bytes) goes to the rejects"),
                    n => format!("; the {n} torn fragments ({torn} bytes) go to the rejects"),
                }
            ),
        ));
        kept.extend(pieces.into_iter().filter_map(|p| match p {
            Piece::Part(p) => Some(Line::new(p.to_vec(), origin)),
            Piece::Fragment(_) => None,
        }));
    }
    kept
}

/// Whether a line is one whose repetition is a re-flush: a header or an entry with an id.
fn repeatable(text: &[u8]) -> Option<bool> {
    let shape = super::shape_of(text)?;
    let header = shape.is_header();
    let entry = shape.id.as_ref().is_some_and(|id| id.as_str().is_some());
    (header || entry).then_some(header)
}

/// The lines seen so far by the hash of their text: a line's bytes are compared with an earlier
/// one's only when their hashes are equal, so that looking for repeats does not read the
/// earlier lines again (a map keyed by the text compares the bytes of any two lines whose
/// hashes merely share a few bits, bringing their pages back into memory).
#[derive(Default)]
struct Seen {
    /// The first line of each hash.
    first: FxHashMap<u64, usize>,
    /// The later lines of a hash whose text differs from the first's (a collision).
    more: FxHashMap<u64, Vec<usize>>,
}

impl Seen {
    /// The earlier line whose text is that of line `i`, or `None` (line `i` is then seen).
    fn first(&mut self, lines: &[Line<'_>], i: usize) -> Option<usize> {
        let hash = rustc_hash::FxBuildHasher.hash_one(&*lines[i].text);
        self.first_of_hash(lines, i, hash)
    }

    /// [`Seen::first`], line `i`'s text hashing to `hash`.
    fn first_of_hash(&mut self, lines: &[Line<'_>], i: usize, hash: u64) -> Option<usize> {
        let text: &[u8] = &lines[i].text;
        let first = *self.first.entry(hash).or_insert(i);
        if first == i {
            return None;
        }
        if *lines[first].text == *text {
            return Some(first);
        }
        let more = self.more.entry(hash).or_default();
        let found = more.iter().copied().find(|&j| *lines[j].text == *text);
        if found.is_none() {
            more.push(i);
        }
        found
    }
}

/// Removes every header or entry line that repeats an earlier line byte for byte.
pub(super) fn remove_repeats<'a>(lines: Vec<Line<'a>>, out: &mut Repairs) -> Vec<Line<'a>> {
    let mut seen = Seen::default();
    // Per line: the line it repeats, when it goes.
    let mut drop: Vec<Option<usize>> = vec![None; lines.len()];
    let mut fixes = Vec::new();
    let mut behind = out.behind();
    for (i, line) in lines.iter().enumerate() {
        behind.passed(&line.text);
        if line.text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(first) = seen.first(&lines, i) {
            let Some(header) = repeatable(&line.text) else {
                continue;
            };
            let code = if header {
                Code::DuplicateHeader
            } else {
                Code::DuplicateId
            };
            if out.wants(code) {
                drop[i] = Some(first);
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
    }
    for fix in fixes {
        out.fix(fix);
    }
    // A line that became a repeat on the way (two spellings pi's migration writes alike) was
    // not one in the input: its bytes go to the rejects.
    for (i, first) in drop.iter().enumerate() {
        if let Some(first) = *first
            && lines[i].original() != lines[first].original()
        {
            out.reject(Reject {
                line: lines[i].origin,
                text: lines[i].original().to_vec(),
                reason: format!(
                    "the same entry as line {} once migrated, spelled otherwise",
                    lines[first].origin
                ),
            });
        }
    }
    lines
        .into_iter()
        .zip(drop)
        .filter_map(|(line, dropped)| dropped.is_none().then_some(line))
        .collect()
}

#[cfg(test)]
mod tests {
    /// Lines whose hashes collide are told apart by their bytes: each is a repeat of its own
    /// earlier copy only.
    #[test]
    fn lines_of_one_hash_are_told_apart_by_their_text() {
        let texts: [&[u8]; 5] = [b"a", b"b", b"a", b"c", b"b"];
        let lines: Vec<Line<'_>> = texts.iter().map(|&t| Line::new(t, 1)).collect();
        let mut seen = Seen::default();
        let firsts: Vec<Option<usize>> = (0..lines.len())
            .map(|i| seen.first_of_hash(&lines, i, 7))
            .collect();
        assert_eq!(firsts, [None, None, Some(0), None, Some(1)]);
    }

    use super::*;
    use Piece::{Fragment, Part};

    fn pieces(text: &[u8]) -> Option<Vec<Piece<'_>>> {
        let pieces = glued(&mut LineScanner::default(), text)?;
        let whole: Vec<u8> = pieces
            .iter()
            .flat_map(|p| match p {
                Part(b) | Fragment(b) => b.iter().copied(),
            })
            .collect();
        assert_eq!(whole, text, "the pieces are the line, byte for byte");
        Some(pieces)
    }

    const NEXT: &[u8] = br#"{"type":"message","id":"y","timestamp":"t"}"#;

    #[test]
    fn glued_lines_come_apart() {
        let g = pieces(br#"{"a":1}{"b":2}"#).expect("glued");
        assert_eq!(g, [Part(br#"{"a":1}"#), Part(br#"{"b":2}"#)]);

        let line = [br#"{"type":"mess"#.as_slice(), NEXT].concat();
        let g = pieces(&line).expect("torn first");
        assert_eq!(g, [Fragment(br#"{"type":"mess"#), Part(NEXT)]);

        let g = pieces(br#"{"a":1}{"type":"mes"#).expect("torn after");
        assert_eq!(g, [Part(br#"{"a":1}"#), Fragment(br#"{"type":"mes"#)]);

        // A content block of the torn entry is complete too; the entry after it is the split.
        let torn = br#"{"type":"message","message":{"content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"c"#;
        let line = [torn.as_slice(), NEXT].concat();
        let g = pieces(&line).expect("torn first, with blocks");
        assert_eq!(g, [Fragment(torn), Part(NEXT)]);

        assert!(pieces(br#"{"type":"mess"#).is_none(), "a torn line alone");
        assert!(pieces(b"1 2").is_none(), "only objects are split");
        assert!(pieces(b"garbage").is_none());
    }

    /// A torn fragment that holds no `{"type":` of its own (`{"ty`, `{`, `{"type"`) before a
    /// complete entry: the entry was skipped as if it were the torn one's own start.
    #[test]
    fn a_short_fragment_before_an_entry_is_the_only_reject() {
        for torn in [
            &b"{\"ty"[..],
            b"{",
            b"{\"",
            b"{\"type\"",
            b"{\"type\":",
            b"x",
        ] {
            let line = [torn, NEXT].concat();
            let g = pieces(&line).expect("glued");
            assert_eq!(g, [Fragment(torn), Part(NEXT)], "{}", line.escape_ascii());
        }
    }

    /// Torn appends on both sides of a complete entry, and two in a row: every complete
    /// entry is kept.
    #[test]
    fn fragments_between_entries_come_apart() {
        let line = [&b"{\"ty"[..], NEXT, b"{\"type\":\"mes", NEXT].concat();
        let g = pieces(&line).expect("glued");
        assert_eq!(
            g,
            [
                Fragment(b"{\"ty"),
                Part(NEXT),
                Fragment(b"{\"type\":\"mes"),
                Part(NEXT)
            ]
        );
    }

    /// The blanks between glued objects (a CR of a CRLF file) stay with the object before.
    #[test]
    fn blanks_between_objects_are_kept() {
        let g = pieces(b" {\"a\":1} \t{\"b\":2}\r").expect("glued");
        assert_eq!(g, [Part(b" {\"a\":1} \t"), Part(b"{\"b\":2}\r")]);
    }

    /// A byte that is not UTF-8 in a string is a character to pi (U+FFFD): the line still
    /// comes apart, and the byte stays where it was.
    #[test]
    fn glued_lines_with_bytes_not_utf8_come_apart() {
        let first = b"{\"type\":\"message\",\"id\":\"x\xFF\",\"timestamp\":\"t\"}";
        let line = [&first[..], NEXT].concat();
        assert_eq!(pieces(&line).expect("glued"), [Part(first), Part(NEXT)]);
        let line = [&b"{\"type\":\"mes\xFF"[..], NEXT].concat();
        assert_eq!(
            pieces(&line).expect("glued"),
            [Fragment(b"{\"type\":\"mes\xFF"), Part(NEXT)]
        );
    }

    /// A line `JSON.parse` refuses for a value (`NaN`) inside a whole entry is not glued
    /// entries: its content blocks are not split out of it.
    #[test]
    fn a_content_block_is_not_split_out_of_a_line_that_is_not_json() {
        let line = br#"{"type":"message","id":"x","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"c","name":"n","arguments":{}}],"usage":NaN}}"#;
        assert_eq!(pieces(line), None);
        // Nor out of a torn last line that ends with one.
        let line = br#"{"type":"message","id":"x","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hi"}"#;
        assert_eq!(pieces(line), None);
    }
}
