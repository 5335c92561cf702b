//! The other way of handing an answer to JavaScript, kept for the measurement that chose
//! between them (README.md, "Measurements"): the JavaScript values built one by one through
//! N-API from the library's `JsValue`, instead of one JSON string read by `JSON.parse`. Not
//! part of the API (`__contextObjectsForBench`).
//!
//! The values are built with an explicit stack, so that a deeply nested message does not
//! overflow the native stack.

use crate::error::{self, Result};
use napi::bindgen_prelude::{JsObjectValue, Null, Object, ToNapiValue};
use napi::{Env, Unknown};
use pi_session_format::json::JsValue;

fn napi_error(e: napi::Error) -> error::Error {
    error::failure("ERR_NAPI", e.reason.clone())
}

/// A container being filled: its JavaScript value and its members left to convert.
enum Open<'v, 'env> {
    Array {
        array: napi::bindgen_prelude::Array<'env>,
        items: std::slice::Iter<'v, JsValue>,
        index: u32,
    },
    Object {
        object: Object<'env>,
        members:
            Box<dyn Iterator<Item = (&'v pi_session_format::json::JsString, &'v JsValue)> + 'v>,
        key: Option<Unknown<'env>>,
    },
}

/// A string's UTF-16 code units (lone surrogates kept).
fn utf16(wtf8: &[u8]) -> Vec<u16> {
    // WTF-8 decodes as UTF-8 does, surrogates included.
    let mut out = Vec::with_capacity(wtf8.len());
    let mut i = 0;
    while i < wtf8.len() {
        let b = wtf8[i];
        let (cp, len) = if b < 0x80 {
            (u32::from(b), 1)
        } else if b < 0xE0 {
            (
                (u32::from(b & 0x1F) << 6) | u32::from(wtf8[i + 1] & 0x3F),
                2,
            )
        } else if b < 0xF0 {
            (
                (u32::from(b & 0x0F) << 12)
                    | (u32::from(wtf8[i + 1] & 0x3F) << 6)
                    | u32::from(wtf8[i + 2] & 0x3F),
                3,
            )
        } else {
            (
                (u32::from(b & 0x07) << 18)
                    | (u32::from(wtf8[i + 1] & 0x3F) << 12)
                    | (u32::from(wtf8[i + 2] & 0x3F) << 6)
                    | u32::from(wtf8[i + 3] & 0x3F),
                4,
            )
        };
        if cp >= 0x10000 {
            let c = cp - 0x10000;
            out.push(0xD800 | (c >> 10) as u16);
            out.push(0xDC00 | (c & 0x3FF) as u16);
        } else {
            out.push(cp as u16);
        }
        i += len;
    }
    out
}

/// A scalar as a JavaScript value; `None` for an array or object.
fn scalar<'env>(env: &'env Env, value: &JsValue) -> Result<Option<Unknown<'env>>> {
    let made = match value {
        JsValue::Null => Null.into_unknown(env),
        JsValue::Bool(b) => b.into_unknown(env),
        JsValue::Number(n) => n.into_unknown(env),
        JsValue::String(s) => match s.as_str() {
            Some(text) => env.create_string(text).and_then(|s| s.into_unknown(env)),
            None => env
                .create_string_utf16(utf16(s.as_wtf8()))
                .and_then(|s| s.into_unknown(env)),
        },
        JsValue::Array(_) | JsValue::Object(_) => return Ok(None),
    };
    made.map(Some).map_err(napi_error)
}

/// Opens a container for `value` (an array or object).
fn open<'v, 'env>(env: &'env Env, value: &'v JsValue) -> Result<Open<'v, 'env>> {
    Ok(match value {
        JsValue::Array(items) => Open::Array {
            array: env
                .create_array(u32::try_from(items.0.len()).unwrap_or(u32::MAX))
                .map_err(napi_error)?,
            items: items.0.iter(),
            index: 0,
        },
        JsValue::Object(object) => Open::Object {
            object: Object::new(env).map_err(napi_error)?,
            members: Box::new(object.iter()),
            key: None,
        },
        _ => unreachable!("only containers are opened"),
    })
}

/// `value` as a JavaScript value, built through N-API.
pub(crate) fn build<'env>(env: &'env Env, value: &JsValue) -> Result<Unknown<'env>> {
    if let Some(made) = scalar(env, value)? {
        return Ok(made);
    }
    let mut stack = vec![open(env, value)?];
    loop {
        // The next member of the innermost container, or the container itself when full.
        let next: Option<&JsValue> = match stack.last_mut() {
            None => unreachable!("the stack holds the root until it is returned"),
            Some(Open::Array { items, .. }) => items.next(),
            Some(Open::Object { members, key, .. }) => match members.next() {
                Some((name, member)) => {
                    *key = Some(
                        match name.as_str() {
                            Some(text) => env.create_string(text),
                            None => env.create_string_utf16(utf16(name.as_wtf8())),
                        }
                        .and_then(|s| s.into_unknown(env))
                        .map_err(napi_error)?,
                    );
                    Some(member)
                }
                None => None,
            },
        };
        let made = match next {
            Some(member) => match scalar(env, member)? {
                Some(made) => made,
                None => {
                    stack.push(open(env, member)?);
                    continue;
                }
            },
            None => {
                let done = stack.pop().expect("a container");
                let made = match done {
                    Open::Array { array, .. } => array.into_unknown(env),
                    Open::Object { object, .. } => object.into_unknown(env),
                }
                .map_err(napi_error)?;
                if stack.is_empty() {
                    return Ok(made);
                }
                made
            }
        };
        match stack.last_mut() {
            Some(Open::Array { array, index, .. }) => {
                array.set(*index, made).map_err(napi_error)?;
                *index += 1;
            }
            Some(Open::Object { object, key, .. }) => {
                let key = key.take().expect("the member's key");
                object.set_property(key, made).map_err(napi_error)?;
            }
            None => unreachable!("checked above"),
        }
    }
}

/// An array of `values`, each built as [`build`] builds it, one at a time (the next value is
/// made only once the previous one is in the array).
pub(crate) fn build_each<'env, V: std::ops::Deref<Target = JsValue>>(
    env: &'env Env,
    values: impl ExactSizeIterator<Item = V>,
) -> Result<Unknown<'env>> {
    let mut array = env
        .create_array(u32::try_from(values.len()).unwrap_or(u32::MAX))
        .map_err(napi_error)?;
    for (i, value) in values.enumerate() {
        let made = build(env, &value)?;
        array
            .set(u32::try_from(i).unwrap_or(u32::MAX), made)
            .map_err(napi_error)?;
    }
    array.into_unknown(env).map_err(napi_error)
}
