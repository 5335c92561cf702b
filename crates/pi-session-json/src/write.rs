//! `JSON.stringify` for [`JsValue`], byte for byte, without recursion.

use super::value::{JsObject, JsString, JsValue};

/// Serialises `value` exactly as `JSON.stringify(value)` would.
pub fn to_string(value: &JsValue) -> String {
    let mut out = Vec::new();
    write_value(&mut out, value);
    // Only valid UTF-8 is ever written: lone surrogates become `\uXXXX` escapes.
    String::from_utf8(out).unwrap_or_default()
}

enum Pending<'a> {
    Value(&'a JsValue),
    Member(&'a JsString, &'a JsValue, bool),
    Raw(&'static [u8]),
}

/// Appends the `JSON.stringify` text of `value` to `out`.
pub fn write_value(out: &mut Vec<u8>, value: &JsValue) {
    let mut stack = vec![Pending::Value(value)];
    while let Some(item) = stack.pop() {
        let value = match item {
            Pending::Raw(bytes) => {
                out.extend_from_slice(bytes);
                continue;
            }
            Pending::Member(key, value, first) => {
                if !first {
                    out.push(b',');
                }
                write_string(out, key.as_wtf8());
                out.push(b':');
                value
            }
            Pending::Value(value) => value,
        };
        match value {
            JsValue::Null => out.extend_from_slice(b"null"),
            JsValue::Bool(true) => out.extend_from_slice(b"true"),
            JsValue::Bool(false) => out.extend_from_slice(b"false"),
            JsValue::Number(n) => write_number(out, *n),
            JsValue::String(s) => write_string(out, s.as_wtf8()),
            JsValue::Array(items) => {
                out.push(b'[');
                stack.push(Pending::Raw(b"]"));
                for (i, item) in items.0.iter().enumerate().rev() {
                    stack.push(Pending::Value(item));
                    if i > 0 {
                        stack.push(Pending::Raw(b","));
                    }
                }
            }
            JsValue::Object(object) => push_object(out, &mut stack, object),
        }
    }
}

fn push_object<'a>(out: &mut Vec<u8>, stack: &mut Vec<Pending<'a>>, object: &'a JsObject) {
    out.push(b'{');
    stack.push(Pending::Raw(b"}"));
    let members: Vec<_> = object.iter().collect();
    for (i, (k, v)) in members.into_iter().enumerate().rev() {
        stack.push(Pending::Member(k, v, i == 0));
    }
}

/// ECMAScript `Number::toString`; non-finite numbers are `null` in JSON.
pub fn write_number(out: &mut Vec<u8>, n: f64) {
    if !n.is_finite() {
        out.extend_from_slice(b"null");
    } else if n == 0.0 {
        out.push(b'0');
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.extend_from_slice(buffer.format_finite(n).as_bytes());
    }
}

/// Writes a WTF-8 string with `JSON.stringify`'s escapes (`QuoteJSONString`).
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    use crate::simd::word;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        // Eight bytes at a time while none needs escaping (`"`, `\`, a control character, or
        // 0xED, which may start a lone surrogate): the common case of prose and code.
        if let Some(chunk) = s.get(i..i + 8) {
            let w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            if word::special(w) | word::equal(w, 0xED) == 0 {
                i += 8;
                continue;
            }
        }
        let b = s[i];
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0C => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            _ => None,
        };
        if let Some(escape) = escape {
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(escape);
            i += 1;
            start = i;
        } else if b < 0x20 {
            out.extend_from_slice(&s[start..i]);
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
            i += 1;
            start = i;
        } else if b == 0xED && s.get(i + 1).is_some_and(|&b1| b1 >= 0xA0) {
            // A lone surrogate in WTF-8 (paired ones are stored as 4-byte sequences).
            out.extend_from_slice(&s[start..i]);
            let unit = 0xD000
                | (u16::from(s[i + 1] & 0x3F) << 6)
                | u16::from(s.get(i + 2).copied().unwrap_or(0x80) & 0x3F);
            out.extend_from_slice(b"\\u");
            for shift in [12, 8, 4, 0] {
                out.push(HEX[usize::from((unit >> shift) & 0xF)]);
            }
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_like_json_stringify() {
        let mut out = Vec::new();
        write_string(
            &mut out,
            "a\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/\u{2028}é".as_bytes(),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}/\u{2028}é\""
        );
    }

    #[test]
    fn numbers_format_like_ecmascript() {
        let cases = [
            (2.0, "2"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (-0.0, "0"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5, "-1.5"),
            (123456789012345680000.0, "123456789012345680000"),
        ];
        for (n, text) in cases {
            let mut out = Vec::new();
            write_number(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), text, "{n}");
        }
    }
}
