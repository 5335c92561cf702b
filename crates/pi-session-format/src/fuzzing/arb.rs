//! `#[arbitrary(with = …)]` helpers for the `serde_json` fields of [`crate::types`].
//!
//! `serde_json::Value`, `Map` and `Number` have no `Arbitrary` impl. These build them from the
//! JSON text generator of [`super::spec`], so the typed model gets the same interesting values
//! (huge and negative-zero numbers, escapes, nesting) as the raw lines. Unknown-field maps use
//! keys that no type models (`x-…`), so a serialised value never repeats a known key.

use super::spec;
use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Any JSON value (depth ≤ 2); values `serde_json` cannot hold (`1e400`, lone surrogates)
/// become `null`.
pub fn json_value(u: &mut Unstructured<'_>) -> Result<Value> {
    let mut text = String::new();
    spec::json_text(u, 2, &mut text)?;
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
