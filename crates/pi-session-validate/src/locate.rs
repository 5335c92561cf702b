//! Finds where a JSON pointer's value sits in the text of a line, so that diagnostics can
//! point at the offending value rather than at the whole line.
//!
//! The line is known to be valid JSON when this runs. The walk is iterative (any depth),
//! and follows `JSON.parse`'s rule for duplicate keys: the last occurrence is the value.

use std::ops::Range;

/// The byte range of the value at `pointer` (RFC 6901) in `text`; for a pointer to a
/// missing member, the range of its parent. `None` when even the parent is not there.
pub(crate) fn locate(text: &str, pointer: &str) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    let mut range = at..value_end(bytes, at)?;
    if pointer.is_empty() {
        return Some(range);
    }
    for segment in pointer.strip_prefix('/')?.split('/') {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let found = match bytes.get(at)? {
            b'{' => member(bytes, at, &segment),
            b'[' => element(bytes, at, segment.parse().ok()?),
            _ => None,
        };
        match found {
            Some(start) => {
                at = start;
                range = at..value_end(bytes, at)?;
            }
            // A missing member: point at the object that lacks it.
            None => return Some(range),
        }
    }
    Some(range)
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        at += 1;
    }
    at
}

/// Start of the value of the last member `key` of the object at `at`.
fn member(bytes: &[u8], at: usize, key: &str) -> Option<usize> {
    let mut found = None;
    let mut pos = skip_ws(bytes, at + 1);
    while bytes.get(pos) == Some(&b'"') {
        let key_end = string_end(bytes, pos)?;
        let matches = decode_key(&bytes[pos + 1..key_end - 1]).as_deref() == Some(key);
        pos = skip_ws(bytes, key_end);
        pos = skip_ws(bytes, pos + 1); // ':'
        if matches {
            found = Some(pos);
        }
        pos = skip_ws(bytes, value_end(bytes, pos)?);
        if bytes.get(pos) == Some(&b',') {
            pos = skip_ws(bytes, pos + 1);
        }
    }
    found
}

/// Start of element `index` of the array at `at`.
fn element(bytes: &[u8], at: usize, index: usize) -> Option<usize> {
    let mut pos = skip_ws(bytes, at + 1);
    for _ in 0..index {
        if bytes.get(pos) == Some(&b']') {
            return None;
        }
        pos = skip_ws(bytes, value_end(bytes, pos)?);
        pos = skip_ws(bytes, pos + 1); // ','
    }
    (bytes.get(pos) != Some(&b']')).then_some(pos)
}

/// The end (exclusive) of the string starting at `at` (which holds `"`).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut pos = at + 1;
    loop {
        match bytes.get(pos)? {
            b'"' => return Some(pos + 1),
            b'\\' => pos += 2,
            _ => pos += 1,
        }
    }
}

/// The end (exclusive) of the value starting at `at`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut pos = at;
    loop {
        match bytes.get(pos)? {
            b'"' => pos = string_end(bytes, pos)?,
            b'{' | b'[' => {
                depth += 1;
                pos += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                pos += 1;
            }
            _ if depth == 0 => {
                // A scalar at the top: runs to the next delimiter.
                let len = bytes[pos..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                    .unwrap_or(bytes.len() - pos);
                return Some(pos + len);
            }
            _ => pos += 1,
        }
        if depth == 0 {
            return Some(pos);
        }
    }
}

/// Decodes the escapes of a key (enough to compare it with a pointer segment).
fn decode_key(raw: &[u8]) -> Option<String> {
    if !raw.contains(&b'\\') {
        return std::str::from_utf8(raw).ok().map(str::to_owned);
    }
    let text = format!("\"{}\"", std::str::from_utf8(raw).ok()?);
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'t>(text: &'t str, pointer: &str) -> &'t str {
        &text[locate(text, pointer).unwrap()]
    }

    #[test]
    fn finds_nested_values() {
        let line =
            r#"{"a":1,"message":{"content":[{"x":"}"},{"type":"text","text":"hi"}]},"a":"last"}"#;
        assert_eq!(at(line, "/message/content/1/text"), r#""hi""#);
        assert_eq!(at(line, "/message/content/0"), r#"{"x":"}"}"#);
        assert_eq!(at(line, "/a"), r#""last""#);
        assert_eq!(at(line, ""), line);
    }

    #[test]
    fn missing_members_point_at_their_parent() {
        let line = r#"{"message":{"role":"user"}}"#;
        assert_eq!(at(line, "/message/content"), r#"{"role":"user"}"#);
        assert_eq!(at(line, "/nope/deeper"), line);
    }

    #[test]
    fn escaped_keys_and_scalars() {
        let line = r#" {"a\/b" : 12 , "c~d":[true, null]} "#;
        assert_eq!(at(line, "/a~1b"), "12");
        assert_eq!(at(line, "/c~0d/1"), "null");
        assert_eq!(locate(line, "/c~0d/5"), locate(line, "/c~0d"));
    }
}
