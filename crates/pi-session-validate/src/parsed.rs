//! A line's JSON as the validator reads it: [`parse`] (like `JSON.parse`, into `serde_json`'s
//! `Value` for the schema checks), JavaScript's [`truthy`], and the [`location`] of a byte range
//! of a line. Shared by the header pass and the line pass.

use super::report::Location;
use pi_session_format::json::{self, JsValue, ParseError};
use serde_json::{Map, Number, Value};
use std::ops::Range;

/// Nesting depth beyond which a line is not checked against its schema (`serde_json`'s own
/// limit is 128; the validator's walkers stay well within any stack). A deeper line is cut
/// at this depth, checked above it, and reported ([`Code::DeepNesting`], an error: what is
/// below was not checked).
pub(crate) const MAX_DEPTH: usize = 120;

/// A parsed line.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The value (nested parts beyond [`MAX_DEPTH`] emptied).
    pub value: Value,
    /// Whether the value was deeper than [`MAX_DEPTH`].
    pub deep: bool,
}

/// Parses a line like `JSON.parse`: `serde_json` for speed, the crate's own parser for what
/// `serde_json` refuses but JavaScript accepts (lone surrogates, `1e400`, deep nesting).
pub(crate) fn parse(text: &str) -> Result<Parsed, ParseError> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(Parsed { value, deep: false });
    }
    let js = json::parse(text)?;
    let mut deep = false;
    let value = convert(&js, &mut deep);
    Ok(Parsed { value, deep })
}

/// Converts a [`JsValue`] (iteratively bounded: containers below [`MAX_DEPTH`] are emptied).
fn convert(js: &JsValue, deep: &mut bool) -> Value {
    fn go(js: &JsValue, depth: usize, deep: &mut bool) -> Value {
        match js {
            JsValue::Null => Value::Null,
            JsValue::Bool(b) => Value::Bool(*b),
            // `1e400` is Infinity in JavaScript; the closest number keeps its type.
            JsValue::Number(n) => Value::Number(
                Number::from_f64(*n)
                    .or_else(|| Number::from_f64(f64::MAX.copysign(*n)))
                    .unwrap_or_else(|| Number::from(0)),
            ),
            JsValue::String(s) => Value::String(s.to_string_lossy()),
            JsValue::Array(_) | JsValue::Object(_) if depth >= MAX_DEPTH => {
                *deep = true;
                match js {
                    JsValue::Array(_) => Value::Array(Vec::new()),
                    _ => Value::Object(Map::new()),
                }
            }
            JsValue::Array(a) => Value::Array(a.0.iter().map(|v| go(v, depth + 1, deep)).collect()),
            JsValue::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_string_lossy(), go(v, depth + 1, deep)))
                    .collect(),
            ),
        }
    }
    go(js, 0, deep)
}

/// The location of `range` (byte range in the decoded `text` of a line).
pub(crate) fn location(
    bytes: &[u8],
    line: usize,
    offset: usize,
    text: &str,
    range: Range<usize>,
) -> Location {
    let mut start = floor_char(text, range.start.min(text.len()));
    // An error at the very end ("unexpected end of input") points at the last character.
    if start == text.len() && start > 0 {
        start = floor_char(text, start - 1);
    }
    let end = floor_char(text, range.end.min(text.len())).max(start);
    // A value over several lines (oh-my-pi reads those, O17) is valid UTF-8 and stands as
    // written; its later lines count from their own start.
    let over_lines = text.contains('\n');
    let raw_len = if over_lines {
        text.len()
    } else {
        line_len(bytes, offset)
    };
    let raw = &bytes[offset..offset + raw_len];
    // Offsets in the decoded text equal raw offsets unless the line had invalid UTF-8; then
    // each replacement character stands for the raw bytes it replaced.
    let (raw_start, raw_end) = if text.len() == raw_len {
        (start, end)
    } else {
        (raw_offset(raw, start), raw_offset(raw, end))
    };
    let before = &text[..start];
    let (line, column) = match before.rfind('\n').filter(|_| over_lines) {
        Some(newline) => (
            line + before.matches('\n').count(),
            before[newline + 1..].chars().count() + 1,
        ),
        None => (line, before.chars().count() + 1),
    };
    Location {
        line,
        column,
        offset: offset + raw_start,
        length: (raw_end - raw_start).max(usize::from(raw_len > raw_start)),
    }
}

/// The raw offset in `raw` of byte `decoded` of `String::from_utf8_lossy(raw)` (a position
/// inside a replacement character maps to the start of the bytes it replaced).
fn raw_offset(raw: &[u8], decoded: usize) -> usize {
    let (mut d, mut r) = (0, 0);
    for chunk in raw.utf8_chunks() {
        let valid = chunk.valid().len();
        if decoded < d + valid {
            return r + (decoded - d);
        }
        d += valid;
        r += valid;
        let invalid = chunk.invalid().len();
        if invalid > 0 {
            if decoded < d + 3 {
                return r;
            }
            d += 3;
            r += invalid;
        }
    }
    r.min(raw.len())
}

pub(crate) fn line_len(bytes: &[u8], offset: usize) -> usize {
    memchr::memchr(b'\n', &bytes[offset..]).unwrap_or(bytes.len() - offset)
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// JavaScript truthiness of a JSON value (pi 0.87.1 keeps only truthy lines).
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_offsets_through_replacement_characters() {
        let raw = b"a\xe2\x82b\xffc";
        // Decoded: a, U+FFFD (for the 2-byte truncated sequence), b, U+FFFD, c.
        assert_eq!(raw_offset(raw, 0), 0);
        assert_eq!(raw_offset(raw, 1), 1);
        assert_eq!(raw_offset(raw, 4), 3);
        assert_eq!(raw_offset(raw, 5), 4);
        assert_eq!(raw_offset(raw, 8), 5);
        assert_eq!(raw_offset(raw, 9), 6);
    }
}
