//! `Arbitrary` support for the typed model (feature `arbitrary`): a generator of JSON *text*
//! with the values real files and fuzzers find interesting (huge and negative-zero numbers,
//! lone surrogates, escapes, repeated and integer-like keys, nesting), and the
//! `#[arbitrary(with = …)]` helpers for the `serde_json` fields of [`super`].
//!
//! `serde_json::Value`, `Map` and `Number` have no `Arbitrary` impl. The helpers build them
//! from the JSON text generator, so the typed model gets the same interesting values as the raw
//! lines the fuzzing checks of `pi-session-testkit` generate with it. Unknown-field maps use
//! keys that no type models (`x-…`), so a serialised value never repeats a known key.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Member names the generators (and the fuzzing dictionary) use.
pub const KEYS: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "message",
    "role",
    "content",
    "text",
    "summary",
    "firstKeptEntryId",
    "firstKeptEntryIndex",
    "tokensBefore",
    "fromId",
    "targetId",
    "label",
    "customType",
    "display",
    "details",
    "replacement",
    "systemMessage",
    "provider",
    "modelId",
    "model",
    "thinkingLevel",
    "version",
    "0",
    "1",
    "__proto__",
    "x-extra",
];

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "0.5",
    "1e400",
    "-1e400",
    "12345678901234567890",
    "1e21",
    "1e-7",
    "5e-324",
    "1.7976931348623157e308",
    "4294967295",
    "4294967296",
];

const STRINGS: &[&str] = &[
    r#""""#,
    r#""x""#,
    r#"" ""#,
    r#""\ud800""#,
    r#""a\udc00""#,
    r#""\ud83d\ude00""#,
    r#""\u2028\u2029""#,
    r#""é€😀""#,
    r#""line\nbreak\r\t""#,
    r#""quote\"back\\slash""#,
    r#""0""#,
    r#""session""#,
    r#""message""#,
    r#""2025-01-01T00:00:00.000Z""#,
    r#""\u0000""#,
    r#""\ufeff""#,
];

/// Appends `s` as a JSON string literal.
pub fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::new();
    push_json_string(&mut out, s);
    out
}

/// Appends a JSON string: an interesting literal or arbitrary text.
pub fn string_text(u: &mut Unstructured<'_>, out: &mut String) -> Result<()> {
    if u.ratio(1, 2)? {
        out.push_str(u.choose(STRINGS)?);
    } else {
        let len = u.int_in_range(0..=12)?;
        let mut s = String::new();
        for _ in 0..len {
            s.push(u.arbitrary::<char>()?);
        }
        push_json_string(out, &s);
    }
    Ok(())
}

/// Appends a JSON number: an interesting literal or an arbitrary integer or double.
pub fn number_text(u: &mut Unstructured<'_>, out: &mut String) -> Result<()> {
    match u.int_in_range(0u8..=2)? {
        0 => out.push_str(u.choose(NUMBERS)?),
        1 => out.push_str(&u.arbitrary::<i32>()?.to_string()),
        _ => {
            let f = u.arbitrary::<f64>()?;
            out.push_str(&if f.is_finite() {
                format!("{f:e}")
            } else {
                "1e400".into()
            });
        }
    }
    Ok(())
}

/// Appends any JSON value, nested at most `depth` levels; objects use [`KEYS`] and may repeat
/// a key.
pub fn json_text(u: &mut Unstructured<'_>, depth: u32, out: &mut String) -> Result<()> {
    let max = if depth == 0 { 3 } else { 5 };
    match u.int_in_range(0u8..=max)? {
        0 => out.push_str(u.choose(&["null", "true", "false"])?),
        1 => number_text(u, out)?,
        2 | 3 => string_text(u, out)?,
        4 => {
            out.push('[');
            for i in 0..u.int_in_range(0..=3)? {
                if i > 0 {
                    out.push(',');
                }
                json_text(u, depth - 1, out)?;
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..u.int_in_range(0..=3)? {
                if i > 0 {
                    out.push(',');
                }
                push_json_string(out, u.choose(KEYS)?);
                out.push(':');
                json_text(u, depth - 1, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A JSON value as text.
pub fn json(u: &mut Unstructured<'_>, depth: u32) -> Result<String> {
    let mut out = String::new();
    json_text(u, depth, &mut out)?;
    Ok(out)
}

/// Any JSON value (depth ≤ 2); values `serde_json` cannot hold (`1e400`, lone surrogates)
/// become `null`.
pub fn json_value(u: &mut Unstructured<'_>) -> Result<Value> {
    let mut text = String::new();
    json_text(u, 2, &mut text)?;
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// An optional [`json_value`].
pub fn opt_json_value(u: &mut Unstructured<'_>) -> Result<Option<Value>> {
    Ok(if u.ratio(1, 3)? {
        Some(json_value(u)?)
    } else {
        None
    })
}

/// A map of unknown fields: zero to two `x-…` keys (mostly none).
pub fn json_map(u: &mut Unstructured<'_>) -> Result<Map<String, Value>> {
    let mut map = Map::new();
    if u.ratio(1, 4)? {
        for _ in 0..u.int_in_range(1..=2)? {
            let key = format!("x-{}", u.int_in_range(0u8..=9)?);
            map.insert(key, json_value(u)?);
        }
    }
    Ok(map)
}

/// An optional [`json_map`].
pub fn opt_json_map(u: &mut Unstructured<'_>) -> Result<Option<Map<String, Value>>> {
    Ok(if u.ratio(1, 3)? {
        Some(json_map(u)?)
    } else {
        None
    })
}

/// A JSON number: an integer, or a finite double.
pub fn json_number(u: &mut Unstructured<'_>) -> Result<Number> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 => Number::from(u.arbitrary::<u32>()?),
        1 => Number::from(u.arbitrary::<i64>()?),
        2 => Number::from_f64(f64::from(u.arbitrary::<u16>()?) / 1000.0).unwrap_or(Number::from(0)),
        _ => Number::from_f64(u.arbitrary::<f64>()?).unwrap_or(Number::from(0)),
    })
}
