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

/// `JSON.stringify(value, null, 2)`: each member and element on its own line, indented by
/// two spaces a level, `": "` between a key and its value, `{}` and `[]` when empty. Written
/// without recursion, so that however deep the value, the stack is not; the text grows with
/// the square of the depth (the indentation), so a caller printing untrusted values bounds
/// the depth it prints this way.
pub fn to_string_pretty(value: &JsValue) -> String {
    enum Item<'a> {
        Value(&'a JsValue, usize),
        Key(&'a JsString),
        Raw(&'static [u8]),
        Newline(usize),
    }
    let mut out = Vec::new();
    let mut stack = vec![Item::Value(value, 0)];
    while let Some(item) = stack.pop() {
        let (value, depth) = match item {
            Item::Raw(bytes) => {
                out.extend_from_slice(bytes);
                continue;
            }
            Item::Newline(depth) => {
                out.push(b'\n');
                out.resize(out.len() + 2 * depth, b' ');
                continue;
            }
            Item::Key(key) => {
                write_string(&mut out, key.as_wtf8());
                out.extend_from_slice(b": ");
                continue;
            }
            Item::Value(value, depth) => (value, depth),
        };
        match value {
            JsValue::Array(items) if !items.0.is_empty() => {
                out.push(b'[');
                stack.push(Item::Raw(b"]"));
                stack.push(Item::Newline(depth));
                for (i, item) in items.0.iter().enumerate().rev() {
                    stack.push(Item::Value(item, depth + 1));
                    stack.push(Item::Newline(depth + 1));
                    if i > 0 {
                        stack.push(Item::Raw(b","));
                    }
                }
            }
            JsValue::Object(object) if object.iter().next().is_some() => {
                out.push(b'{');
                stack.push(Item::Raw(b"}"));
                stack.push(Item::Newline(depth));
                let members: Vec<_> = object.iter().collect();
                for (i, (key, value)) in members.into_iter().enumerate().rev() {
                    stack.push(Item::Value(value, depth + 1));
                    stack.push(Item::Key(key));
                    stack.push(Item::Newline(depth + 1));
                    if i > 0 {
                        stack.push(Item::Raw(b","));
                    }
                }
            }
            other => write_value(&mut out, other),
        }
    }
    // Only valid UTF-8 is ever written: lone surrogates become `\uXXXX` escapes.
    String::from_utf8(out).unwrap_or_default()
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

    /// Inputs and what Node 20's `JSON.stringify(JSON.parse(input), null, 2)` printed for
    /// them (integer keys first, the last of a repeated key, numbers as JavaScript has them).
    const PRETTY: &str = r#"[["{\"z\":1.0,\"command\":\"ls\",\"n\":9007199254740993,\"2\":[],\"1\":{},\"a\":[1,[2,{\"b\":null}],\"x\\u2028\\ud800\"],\"z\":-0,\"e\":1e21}", "{\n  \"1\": {},\n  \"2\": [],\n  \"z\": 0,\n  \"command\": \"ls\",\n  \"n\": 9007199254740992,\n  \"a\": [\n    1,\n    [\n      2,\n      {\n        \"b\": null\n      }\n    ],\n    \"x\u2028\\ud800\"\n  ],\n  \"e\": 1e+21\n}"], ["[]", "[]"], ["{}", "{}"], ["\"s\"", "\"s\""], ["[[],{}]", "[\n  [],\n  {}\n]"], ["1.50", "1.5"]]"#;

    #[test]
    fn pretty_is_json_stringify_with_two_spaces() {
        let JsValue::Array(cases) = crate::parse(PRETTY).unwrap() else {
            panic!("an array");
        };
        assert_eq!(cases.0.len(), 6);
        for case in &cases.0 {
            let JsValue::Array(pair) = case else {
                panic!("a pair");
            };
            let (Some(input), Some(expected)) = (pair.0[0].as_str(), pair.0[1].as_str()) else {
                panic!("two strings");
            };
            let value = crate::parse(input).unwrap();
            assert_eq!(to_string_pretty(&value), expected, "{input}");
        }
        // Deep values do not overflow the stack (the output grows with the square of the
        // depth, as JavaScript's does: callers bound the depth they print this way).
        let deep = format!("{}{}", "[".repeat(3_000), "]".repeat(3_000));
        let pretty = to_string_pretty(&crate::parse(&deep).unwrap());
        assert_eq!(pretty.lines().count(), 2 * 3_000 - 1);
    }

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
