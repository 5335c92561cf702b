//! oh-my-pi's reading of the lines `JSON.parse` refuses. omp does not parse a session line by
//! line: it hands the whole text to Bun's JSONL parser (`parseJsonlLenient`), in which values
//! are separated by JSON whitespace holding a newline and a value may span lines. Where a line
//! parses on its own, both read the same value; where it does not (a dropped line), omp
//! - keeps the first value of a line that holds more after it (`{"a":1}{"b":2}` gives
//!   `{"a":1}`; a value followed by a non-JSON space gives the value), skipping the rest of
//!   the line;
//! - keeps a value that goes on over the following lines (`{"a":` then `1}`), those lines
//!   included (a line that would parse on its own is then part of the value, not an entry),
//!   skipping the rest of its last line;
//! - skips the line where no value can be read (only that line: the next one is read anew).
//!
//! [`recover`] turns the dropped lines into what omp reads of them. A dropped line holding
//! invalid UTF-8 stays dropped (omp reads its replacement characters; rare enough to leave).

use super::{DroppedLine, scan};
use crate::json::{Cursor, LineScanner, ParseError, ParseErrorKind};
use crate::read::Line;
use crate::session::record::{Kind, Record, Text};
use std::borrow::Cow;

/// The first window a value is looked for in; doubled while the value goes on.
const WINDOW: usize = 1 << 16;

/// Replaces the dropped lines of `chunks` (records in file order, cut into chunks) by the
/// values omp reads from them ([module docs](self)); `dropped` keeps the lines omp skips too.
/// A `null` value is left out, as the loader leaves omp's `null` lines out.
pub(super) fn recover<'a>(
    bytes: &'a [u8],
    chunks: &mut [Vec<Record<'a>>],
    dropped: &mut Vec<DroppedLine>,
) {
    if dropped.is_empty() {
        return;
    }
    dropped.sort_by_key(|d| d.offset);
    let mut scanner = LineScanner::default();
    let mut found: Vec<Record<'a>> = Vec::new();
    // Byte ranges a recovered value took (from its line's start to its last line's end).
    let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
    let mut kept = Vec::with_capacity(dropped.len());
    let mut skip_to = 0;
    for d in dropped.drain(..) {
        if d.offset < skip_to {
            continue; // part of a value recovered from an earlier line
        }
        let Some((start, end)) = first_value(bytes, d.offset) else {
            kept.push(d);
            continue;
        };
        let Ok(text) = std::str::from_utf8(&bytes[start..end]) else {
            kept.push(d);
            continue;
        };
        let line = Line {
            number: d.line,
            offset: start,
            text: Cow::Borrowed(text),
            len: end - start,
            lossy: false,
        };
        let Ok(record) = scan(&mut scanner, line, Text::new) else {
            kept.push(d);
            continue;
        };
        let last_line_end = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i);
        skip_to = last_line_end;
        taken.push(d.offset..last_line_end);
        // What follows the value on its last line, unless spaces, tabs and CRs, omp skips:
        // kept as a dropped piece of that line (a malformed record when it is not blank).
        let tail = &bytes[end..last_line_end];
        if tail.iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
            kept.push(tail_piece(bytes, &d, end, tail));
        }
        if matches!(record.kind, Kind::Null) {
            continue;
        }
        found.push(record);
    }
    *dropped = kept;
    if taken.is_empty() {
        return;
    }
    // The lines a value took are no longer records of their own.
    let inside = |offset: usize| {
        let i = taken.partition_point(|r| r.start <= offset);
        i > 0 && taken[i - 1].contains(&offset)
    };
    for chunk in chunks.iter_mut() {
        chunk.retain(|r| !inside(r.offset));
    }
    // Each value goes where its line is, in file order.
    for record in found {
        let at = chunks
            .iter()
            .position(|c| c.last().is_some_and(|last| last.offset > record.offset))
            .or_else(|| chunks.len().checked_sub(1));
        match at {
            Some(i) => {
                let chunk = &mut chunks[i];
                let j = chunk.partition_point(|r| r.offset < record.offset);
                chunk.insert(j, record);
            }
            None => return, // no chunk at all: the caller has none to put it in
        }
    }
}

/// The text after a value recovered from the line of `d`, at `end` up to its line's end, as
/// a dropped piece of that line: its line and column, and why omp skips it.
fn tail_piece(bytes: &[u8], d: &DroppedLine, end: usize, tail: &[u8]) -> DroppedLine {
    let before = &bytes[d.offset..end];
    let newlines = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(d.offset, |i| d.offset + i + 1);
    let column = String::from_utf8_lossy(&bytes[line_start..end])
        .chars()
        .count()
        + 1;
    DroppedLine {
        line: d.line + newlines,
        offset: end,
        column,
        error: ParseError {
            offset: 0,
            kind: ParseErrorKind::TrailingText,
            found: String::from_utf8_lossy(tail).chars().next(),
        },
        len: tail.len(),
    }
}

/// Where the first value Bun reads from the line starting at `at` begins and ends: after
/// spaces, tabs and CRs, one JSON value, which may go on over the next lines; `None` when
/// none can be read.
fn first_value(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let start = at
        + bytes[at..]
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r'))
            .count();
    let mut size = WINDOW;
    loop {
        let cut = (start + size).min(bytes.len());
        let window_end = memchr::memchr(b'\n', &bytes[cut..]).map_or(bytes.len(), |i| cut + i);
        let (text, whole) = match std::str::from_utf8(&bytes[start..window_end]) {
            Ok(text) => (text, window_end == bytes.len()),
            Err(e) => {
                // Read up to the invalid byte; past it the value cannot be followed.
                let valid = &bytes[start..start + e.valid_up_to()];
                (std::str::from_utf8(valid).ok()?, true)
            }
        };
        let mut cursor = Cursor::new(text);
        match cursor.value() {
            Ok(_) => return Some((start, start + cursor.position())),
            // The value goes on past the window: look further.
            Err(e) if e.offset >= text.len() && !whole => size = size.saturating_mul(2),
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_value;

    #[test]
    fn the_first_value_of_a_line_and_values_over_lines() {
        let text = b"{\"a\":1}{\"b\":2}\n";
        assert_eq!(first_value(text, 0), Some((0, 7)));
        let text = b" \t{\"a\":\n1}\n{}";
        assert_eq!(first_value(text, 0), Some((2, 10)));
        assert_eq!(
            first_value(b"{\"a\":1\n{}\n", 0),
            None,
            "an object cut by a value"
        );
        assert_eq!(
            first_value(b"{\"a\":[1,\n", 0),
            None,
            "cut by the end of the text"
        );
        assert_eq!(first_value(b"x{}", 0), None);
        assert_eq!(first_value("{}\u{a0}".as_bytes(), 0), Some((0, 2)));
    }

    #[test]
    fn a_long_value_is_followed_past_the_first_window() {
        let mut text = String::from("[\n");
        for i in 0..40_000 {
            text.push_str(&format!("{i},\n"));
        }
        text.push_str("0]x\n{}\n");
        let end = text.find("]x").unwrap() + 1;
        assert_eq!(first_value(text.as_bytes(), 0), Some((0, end)));
    }
}
