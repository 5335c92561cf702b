//! What reading a line with `JSON.parse` and writing it back with `JSON.stringify` loses,
//! beyond its spelling (whitespace, escapes, `1.0` for `1`): numbers that a double cannot
//! hold as written (`1E400` becomes `null`, a 30-digit integer is rounded) and duplicate
//! keys (the last value is kept at the first key's place). pi does this to every line of a
//! v1 or v2 file when it migrates it; the migration says so, and `validate` reports it.
//!
//! A line already in `JSON.stringify` form has neither, so callers look only at the others.
//! The scan is iterative (any depth) and expects a line that parses; on anything else it
//! reports what it found so far and never panics.

use crate::json::{self, JsValue};
use std::borrow::Cow;
use std::collections::HashSet;

/// One change found in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lossy {
    /// Byte offset of the number or key in the line.
    pub offset: usize,
    /// Its length in bytes.
    pub len: usize,
    /// What changes.
    pub kind: LossyKind,
}

/// The kinds of [`Lossy`] changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LossyKind {
    /// A number `JSON.stringify` does not write back with the same value: out of a double's
    /// range (written `null`), or with more digits than a double holds (rounded).
    NumberNotExact {
        /// What `JSON.stringify` writes for it.
        becomes: String,
    },
    /// A key that occurs again in the same object: `JSON.parse` keeps the last value, at the
    /// place of the first occurrence, and the earlier values are lost.
    DuplicateKey {
        /// The key (decoded; lone surrogates as U+FFFD).
        key: String,
    },
}

/// Whether `text` (one line that parses) is already exactly what `JSON.stringify` writes for
/// its value: then [`find`] finds nothing in it.
pub fn is_canonical(text: &str) -> bool {
    json::is_canonical(text.as_bytes())
}

/// An open object: the keys seen, and whether a key comes next.
type Frame<'a> = (HashSet<Cow<'a, [u8]>>, bool);

/// The changes in `text`, in order, at most `limit` of each kind; the second value counts
/// them all: inexact numbers, then duplicate keys.
pub fn find(text: &str, limit: usize) -> (Vec<Lossy>, [usize; 2]) {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut counts = [0; 2];
    let mut push = |lossy: Lossy| {
        let k = usize::from(matches!(lossy.kind, LossyKind::DuplicateKey { .. }));
        counts[k] += 1;
        if counts[k] <= limit {
            found.push(lossy);
        }
    };
    // Open containers: `Some(keys seen, expecting a key)` for objects, `None` for arrays.
    let mut stack: Vec<Option<Frame<'_>>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' => {
                stack.push(Some((HashSet::new(), true)));
                i += 1;
            }
            b'[' => {
                stack.push(None);
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                i += 1;
            }
            b',' => {
                if let Some(Some((_, expect_key))) = stack.last_mut() {
                    *expect_key = true;
                }
                i += 1;
            }
            b'"' => {
                let start = i;
                let mut j = i + 1;
                let mut escaped = false;
                while j < b.len() {
                    match b[j] {
                        b'\\' => {
                            escaped = true;
                            j += 2;
                        }
                        b'"' => break,
                        _ => j += 1,
                    }
                }
                let end = (j + 1).min(b.len());
                if let Some(Some((keys, expect_key))) = stack.last_mut()
                    && *expect_key
                {
                    *expect_key = false;
                    let raw = &b[start..end];
                    let key: Cow<'_, [u8]> = if escaped {
                        match text.get(start..end).map(json::parse) {
                            Some(Ok(JsValue::String(s))) => Cow::Owned(s.into_wtf8().into_vec()),
                            _ => Cow::Borrowed(raw),
                        }
                    } else {
                        Cow::Borrowed(&raw[1..raw.len().saturating_sub(1).max(1)])
                    };
                    if keys.contains(&key) {
                        push(Lossy {
                            offset: start,
                            len: end - start,
                            kind: LossyKind::DuplicateKey {
                                key: String::from_utf8_lossy(&key).into_owned(),
                            },
                        });
                    } else {
                        keys.insert(key);
                    }
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let token = &text[start..i];
                if let Some(becomes) = inexact(token) {
                    push(Lossy {
                        offset: start,
                        len: i - start,
                        kind: LossyKind::NumberNotExact { becomes },
                    });
                }
            }
            _ => i += 1,
        }
    }
    (found, counts)
}

/// What `JSON.stringify(JSON.parse(token))` writes for a JSON number `token`, when its value
/// differs from the one written (the sign of zero does not count).
pub fn inexact(token: &str) -> Option<String> {
    let n: f64 = token.parse().ok()?;
    let mut written = Vec::new();
    json::write_value(&mut written, &JsValue::Number(n));
    let written = String::from_utf8(written).ok()?;
    if !n.is_finite() {
        return Some(written);
    }
    (decimal(token) != decimal(&written)).then_some(written)
}

/// The value of a decimal number text as (negative, significant digits, exponent) with
/// value `0.DIGITS × 10^exponent`: equal values give equal triples. Zero is `(false, "", 0)`.
fn decimal(text: &str) -> (bool, Vec<u8>, i64) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(e) => (&rest[..e], &rest[e + 1..]),
        None => (rest, ""),
    };
    let exponent: i64 = {
        let (sign, digits) = match exponent.as_bytes().first() {
            Some(b'-') => (-1, &exponent[1..]),
            Some(b'+') => (1, &exponent[1..]),
            _ => (1, exponent),
        };
        digits
            .bytes()
            .fold(0i64, |n, d| {
                n.saturating_mul(10)
                    .saturating_add(i64::from(d.wrapping_sub(b'0')))
            })
            .saturating_mul(sign)
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let mut point = (int.len() as i64).saturating_add(exponent);
    let leading = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..leading);
    point = point.saturating_sub(leading as i64);
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return (false, Vec::new(), 0);
    }
    (negative, digits, point)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<LossyKind> {
        find(text, usize::MAX)
            .0
            .into_iter()
            .map(|l| l.kind)
            .collect()
    }

    #[test]
    fn numbers_that_keep_their_value_are_exact() {
        for n in [
            "0",
            "-0",
            "1",
            "1.0",
            "1e2",
            "100",
            "0.1",
            "1.5E-7",
            "123456789012345678",
            "12345678901234567000",
            "9007199254740993e0",
            "1e21",
            "-2.50",
            "0.000001",
            "5e-324",
            "1.7976931348623157e308",
        ] {
            let expect_exact = n != "123456789012345678" && n != "9007199254740993e0";
            assert_eq!(inexact(n).is_none(), expect_exact, "{n}");
        }
    }

    #[test]
    fn out_of_range_and_too_many_digits_are_not_exact() {
        assert_eq!(inexact("1E400").as_deref(), Some("null"));
        assert_eq!(inexact("-1e309").as_deref(), Some("null"));
        assert_eq!(inexact("1e-400").as_deref(), Some("0"));
        assert_eq!(
            inexact("123456789012345678901234567890").as_deref(),
            Some("1.2345678901234568e+29")
        );
        assert_eq!(
            inexact("0.1000000000000000000000001").as_deref(),
            Some("0.1")
        );
    }

    #[test]
    fn duplicate_keys_are_found_per_object_with_escapes_decoded() {
        assert_eq!(
            kinds(r#"{"a":1,"b":{"a":2,"c":[{"a":3}]},"\u0061":4,"b":5}"#),
            [
                LossyKind::DuplicateKey { key: "a".into() },
                LossyKind::DuplicateKey { key: "b".into() },
            ]
        );
        // Strings that are values are not keys.
        assert!(kinds(r#"{"a":"a","b":["a","a"]}"#).is_empty());
    }

    #[test]
    fn offsets_point_at_the_token_and_limit_caps_the_list() {
        let text = r#"{"n": 1E400, "m": [1e999, 2e999]}"#;
        let (found, counts) = find(text, 2);
        assert_eq!(counts, [3, 0]);
        assert_eq!(found.len(), 2);
        assert_eq!(
            &text[found[0].offset..found[0].offset + found[0].len],
            "1E400"
        );
        // Digits inside strings are not numbers.
        assert!(kinds(r#"{"s":"1e400","t":"12345678901234567890123"}"#).is_empty());
    }

    #[test]
    fn deep_nesting_and_garbage_do_not_panic() {
        let deep = format!("{}{}", "[{\"a\":".repeat(100_000), "1}]".repeat(100_000));
        assert!(kinds(&deep).is_empty());
        for junk in ["\"", "{\"", "{\"\\", "-", "1e", "{,\"a\"", "}}]]"] {
            let _ = find(junk, 10);
        }
    }
}
