//! A walker over JSON text that is already known to be valid (the line scanner validated
//! it exactly as `JSON.parse` would): it finds members and elements by their byte ranges
//! and builds nothing. Strings, which hold most of the bytes, are skipped with `memchr2`.
//!
//! Every function here assumes valid JSON; on anything else it still returns (ranges stay
//! inside the text), it just may not mean much.

use crate::json::{self, JsValue};
use std::borrow::Cow;

/// A byte range `start..end` of a JSON value (or key, quotes included) in the text.
pub(super) type Span = (usize, usize);

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the string starting (with its quote) at `i`.
pub(super) fn skip_string(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    // Most strings are short: a plain loop first, `memchr2` for the long ones.
    let near = b.len().min(j + 32);
    while j < near {
        match b[j] {
            b'"' => return j + 1,
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    while let Some(k) = memchr::memchr2(b'"', b'\\', b.get(j..).unwrap_or_default()) {
        if b[j + k] == b'\\' {
            j += k + 2;
        } else {
            return j + k + 1;
        }
    }
    b.len()
}

/// The end of the value starting at `i`.
pub(super) fn skip_value(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        Some(_) => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
        None => i,
    }
}

/// The members of the object whose `{` is at `start`, as (key, value) ranges in text order.
/// A value starting at `hint.0` is taken to end at `hint.1` without being read again.
pub(super) struct Members<'a> {
    b: &'a [u8],
    i: usize,
    hint: Option<Span>,
    /// Set once the `}` is passed: the end of the object.
    end: Option<usize>,
}

impl<'a> Members<'a> {
    pub(super) fn new(b: &'a [u8], start: usize, hint: Option<Span>) -> Self {
        // A line may start with whitespace.
        let start = skip_ws(b, start);
        let i = if b.get(start) == Some(&b'{') {
            start + 1
        } else {
            b.len()
        };
        Members {
            b,
            i,
            hint,
            end: None,
        }
    }

    /// After the last member: the end of the object (past its `}`).
    pub(super) fn end(&self) -> usize {
        self.end.unwrap_or(self.b.len())
    }
}

impl Members<'_> {
    /// The next key and where its value starts; the caller reads the value and says where
    /// it ends with [`Members::value_end`] before asking for the next key.
    pub(super) fn key(&mut self) -> Option<(Span, usize)> {
        if self.end.is_some() {
            return None;
        }
        let b = self.b;
        let i = skip_ws(b, self.i);
        if b.get(i) != Some(&b'"') {
            // `{}` (or not an object)
            self.end = Some((i + 1).min(b.len()));
            return None;
        }
        let key_end = skip_string(b, i);
        let colon = skip_ws(b, key_end);
        let value_start = skip_ws(b, colon + 1);
        self.i = value_start;
        Some(((i, key_end), value_start))
    }

    /// The value whose start [`Members::key`] gave ends at `end`.
    pub(super) fn value_end(&mut self, end: usize) {
        let b = self.b;
        let next = skip_ws(b, end);
        // Past the `,` (or the `}`, the end).
        self.i = next + 1;
        if b.get(next) != Some(&b',') {
            self.end = Some(self.i.min(b.len()));
        }
    }
}

impl Iterator for Members<'_> {
    type Item = (Span, Span);

    fn next(&mut self) -> Option<(Span, Span)> {
        let (key, value_start) = self.key()?;
        let value_end = match self.hint {
            Some((s, e)) if s == value_start => e,
            _ => skip_value(self.b, value_start),
        };
        self.value_end(value_end);
        Some((key, (value_start, value_end)))
    }
}

/// The elements of the array whose `[` is at `start`, as ranges in order.
pub(super) struct Elements<'a> {
    b: &'a [u8],
    i: usize,
    /// Set once the `]` is passed: the end of the array.
    end: Option<usize>,
}

impl<'a> Elements<'a> {
    pub(super) fn new(b: &'a [u8], start: usize) -> Self {
        let start = skip_ws(b, start);
        let i = if b.get(start) == Some(&b'[') {
            start + 1
        } else {
            b.len()
        };
        Elements { b, i, end: None }
    }

    /// After the last element: the end of the array (past its `]`).
    pub(super) fn end(&self) -> usize {
        self.end.unwrap_or(self.b.len())
    }
}

impl Elements<'_> {
    /// Where the next element starts; the caller reads it and says where it ends with
    /// [`Elements::value_end`] before asking for the next one.
    pub(super) fn start(&mut self) -> Option<usize> {
        if self.end.is_some() {
            return None;
        }
        let b = self.b;
        let start = skip_ws(b, self.i);
        if start >= b.len() || b[start] == b']' {
            self.end = Some((start + 1).min(b.len()));
            return None;
        }
        Some(start)
    }

    /// The element whose start [`Elements::start`] gave ends at `end`.
    pub(super) fn value_end(&mut self, end: usize) {
        let b = self.b;
        let next = skip_ws(b, end);
        self.i = next + 1;
        if b.get(next) != Some(&b',') {
            self.end = Some(self.i.min(b.len()));
        }
    }
}

impl Iterator for Elements<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        let start = self.start()?;
        let end = skip_value(self.b, start);
        self.value_end(end);
        Some((start, end))
    }
}

/// The last value of `key` among the members of the object at `start` (`JSON.parse` keeps
/// the last of duplicate keys); `hint` as for [`Members`].
pub(super) fn member(text: &str, start: usize, key: &str, hint: Option<Span>) -> Option<Span> {
    Members::new(text.as_bytes(), start, hint)
        .filter(|&(k, _)| key_is(text, k, key))
        .last()
        .map(|(_, v)| v)
}

/// Whether the key at `span` (quotes included) is `name`.
pub(super) fn key_is(text: &str, span: Span, name: &str) -> bool {
    *key(text, span) == *name.as_bytes()
}

/// The key at `span` (quotes included), escapes resolved (WTF-8).
pub(super) fn key(text: &str, span: Span) -> Cow<'_, [u8]> {
    let raw = &text.as_bytes()[span.0..span.1];
    let inner = &raw[1.min(raw.len())..raw.len().saturating_sub(1).max(1)];
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    string_wtf8(text, span).unwrap_or_default()
}

/// The WTF-8 text of the string value at `span`, `None` when the value is not a string.
pub(super) fn string_wtf8(text: &str, span: Span) -> Option<Cow<'_, [u8]>> {
    let raw = &text.as_bytes()[span.0..span.1];
    if raw.first() != Some(&b'"') || raw.len() < 2 {
        return None;
    }
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains(&b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    match value(text, span) {
        JsValue::String(s) => Some(Cow::Owned(s.into_wtf8().into_vec())),
        _ => None,
    }
}

/// Whether the value at `span` is the string `s` (escapes resolved).
pub(super) fn is_string(text: &str, span: Option<Span>, s: &str) -> bool {
    span.and_then(|span| string_wtf8(text, span))
        .is_some_and(|v| *v == *s.as_bytes())
}

/// The value at `span`, parsed (it is valid JSON; `null` should it not be).
pub(super) fn value(text: &str, span: Span) -> JsValue {
    text.get(span.0..span.1)
        .and_then(|t| json::parse(t).ok())
        .unwrap_or(JsValue::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_elements_skip_nested_values_and_strings() {
        let text = r#"{"a" : [1, {"x":"]}\"}"}] , "b\u0063":"v","n":-1.5e3,"c":{}}"#;
        let members: Vec<_> = Members::new(text.as_bytes(), 0, None)
            .map(|(k, v)| (&text[k.0..k.1], &text[v.0..v.1]))
            .collect();
        assert_eq!(
            members,
            [
                (r#""a""#, r#"[1, {"x":"]}\"}"}]"#),
                (r#""b\u0063""#, r#""v""#),
                (r#""n""#, "-1.5e3"),
                (r#""c""#, "{}")
            ]
        );
        let (s, e) = member(text, 0, "bc", None).unwrap();
        assert_eq!(&text[s..e], r#""v""#);
        let array = r#"[ null ,"a",[] ]"#;
        let elements: Vec<_> = Elements::new(array.as_bytes(), 0)
            .map(|s| &array[s.0..s.1])
            .collect();
        assert_eq!(elements, ["null", r#""a""#, "[]"]);
        let mut e = Elements::new(b"[[1] ,2 ] x", 0);
        assert_eq!(e.by_ref().count(), 2);
        assert_eq!(e.end(), 9);
        let mut e = Elements::new(b"[ ] x", 0);
        assert_eq!(e.by_ref().count(), 0);
        assert_eq!(e.end(), 3);
        assert_eq!(Elements::new(b"[ ]", 0).count(), 0);
        assert_eq!(Members::new(b"{ }", 0, None).count(), 0);
        let mut m = Members::new(b"{\"a\":1 } x", 0, None);
        assert_eq!(m.by_ref().count(), 1);
        assert_eq!(m.end(), 8);
        let mut m = Members::new(b"{ } x", 0, None);
        assert_eq!(m.by_ref().count(), 0);
        assert_eq!(m.end(), 3);
    }

    #[test]
    fn strings_resolve_escapes() {
        let text = r#""t\u0065xt""#;
        assert!(is_string(text, Some((0, text.len())), "text"));
        assert!(!is_string("1", Some((0, 1)), "1"));
    }
}
