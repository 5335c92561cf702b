//! `id` and `parentId` values as keys, compared the way JavaScript compares them (`===` and
//! `Map` keys), with short strings stored inline; and [`quoted`], how messages show a value.

use crate::json::{self, JsValue};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// A value compared the way JavaScript compares `id`/`parentId` values (`===`, and `Map`
/// keys, which agree for everything JSON can hold).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// The member is missing (`undefined`).
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, by its bits (`-0` normalised to `0`).
    Number(u64),
    /// A string (WTF-8 bytes).
    String(KeyBytes),
    /// An object or array: equal only to itself. The payload identifies the record and member.
    Unique(u64),
}

impl Key {
    /// The key of a member value; `unique` identifies it when it is an object or array.
    pub fn of(value: Option<&JsValue>, unique: u64) -> Key {
        match value {
            None => Key::Undefined,
            Some(JsValue::Null) => Key::Null,
            Some(JsValue::Bool(b)) => Key::Bool(*b),
            Some(JsValue::Number(n)) => Key::Number((n + 0.0).to_bits()),
            Some(JsValue::String(s)) => Key::String(s.as_wtf8().into()),
            Some(JsValue::Array(_) | JsValue::Object(_)) => Key::Unique(unique),
        }
    }

    /// Like [`Key::of`], taking the value (no copy of a string).
    pub fn from_value(value: Option<JsValue>, unique: u64) -> Key {
        match value {
            Some(JsValue::String(s)) => Key::String(s.into_wtf8().into()),
            other => Key::of(other.as_ref(), unique),
        }
    }

    /// A string key.
    pub fn string(s: &str) -> Key {
        Key::String(s.as_bytes().into())
    }

    /// JavaScript truthiness of the value.
    pub fn is_truthy(&self) -> bool {
        match self {
            Key::Undefined | Key::Null => false,
            Key::Bool(b) => *b,
            Key::Number(bits) => {
                let n = f64::from_bits(*bits);
                n != 0.0 && !n.is_nan()
            }
            Key::String(s) => !s.is_empty(),
            Key::Unique(_) => true,
        }
    }

    /// The value as JSON text, as `JSON.stringify` writes it; `None` for `undefined` and for
    /// an object or array, whose value the key does not keep.
    pub fn to_json(&self) -> Option<String> {
        let mut out = Vec::new();
        match self {
            Key::Undefined | Key::Unique(_) => return None,
            Key::Null => out.extend_from_slice(b"null"),
            Key::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Key::Number(bits) => json::write_number(&mut out, f64::from_bits(*bits)),
            Key::String(s) => json::write_string(&mut out, s),
        }
        // The writer escapes what is not UTF-8 (lone surrogates), so the text is UTF-8.
        Some(String::from_utf8_lossy(&out).into_owned())
    }

    /// The key as text for messages (`"abc"`, `null`, `undefined`, …).
    pub fn display(&self) -> String {
        match self {
            Key::Undefined => "undefined".into(),
            Key::Null => "null".into(),
            Key::Bool(b) => b.to_string(),
            Key::Number(bits) => {
                let mut out = Vec::new();
                json::write_value(&mut out, &JsValue::Number(f64::from_bits(*bits)));
                String::from_utf8_lossy(&out).into_owned()
            }
            Key::String(s) => quoted(&String::from_utf8_lossy(s)),
            Key::Unique(_) => "(object)".into(),
        }
    }
}

/// The longest text of a file quoted whole in a message; longer texts are cut.
pub const QUOTE_MAX: usize = 64;

/// `text` quoted for a message: control characters escaped (`{:?}`), and cut after
/// [`QUOTE_MAX`] characters with a count of what was left out, so that text from a file
/// (a 10 MB id, an escape sequence) never floods or drives a terminal.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTE_MAX) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…(+{} bytes)", &text[..cut], text.len() - cut),
    }
}

/// Bytes longer than this go to the heap; shorter ones (pi's ids are 8 bytes) are stored
/// inline, so most keys cost no allocation.
const INLINE_KEY: usize = 22;

/// The bytes of a string [`Key`]: inline when short, boxed otherwise. Dereferences to the
/// bytes; equality and hashing are those of the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyBytes(KeyRepr);

/// Bytes of at most [`INLINE_KEY`] bytes are always inline (zero-padded), longer ones always
/// boxed, so equal bytes have equal representations and the derived equality is the bytes'.
#[derive(Clone, PartialEq, Eq)]
enum KeyRepr {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

impl Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            KeyRepr::Inline(len, bytes) => &bytes[..usize::from(*len)],
            KeyRepr::Heap(bytes) => bytes,
        }
    }
}

impl From<&[u8]> for KeyBytes {
    fn from(bytes: &[u8]) -> KeyBytes {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE_KEY => {
                let mut inline = [0; INLINE_KEY];
                inline[..bytes.len()].copy_from_slice(bytes);
                KeyBytes(KeyRepr::Inline(len, inline))
            }
            _ => KeyBytes(KeyRepr::Heap(bytes.into())),
        }
    }
}

impl From<Box<[u8]>> for KeyBytes {
    fn from(bytes: Box<[u8]>) -> KeyBytes {
        if bytes.len() <= INLINE_KEY {
            KeyBytes::from(&*bytes)
        } else {
            KeyBytes(KeyRepr::Heap(bytes))
        }
    }
}

impl Hash for KeyBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            // Whole words of the zero-padded array: three word writes for any short key.
            KeyRepr::Inline(len, bytes) => {
                let word = |at: usize| {
                    let mut w = [0; 8];
                    let end = (at + 8).min(INLINE_KEY);
                    w[..end - at].copy_from_slice(&bytes[at..end]);
                    u64::from_le_bytes(w)
                };
                state.write_u64(word(0));
                state.write_u64(word(8));
                state.write_u64(word(16));
                state.write_u8(*len);
            }
            KeyRepr::Heap(bytes) => bytes.hash(state),
        }
    }
}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_written_back_as_json_stringify_writes_its_value() {
        let of = |text: &str| Key::of(Some(&json::parse(text).unwrap()), 7).to_json();
        assert_eq!(of(r#""a\u0062""#).as_deref(), Some(r#""ab""#));
        assert_eq!(of(r#""\ud800""#).as_deref(), Some(r#""\ud800""#));
        assert_eq!(of("-0").as_deref(), Some("0"));
        assert_eq!(of("1e21").as_deref(), Some("1e+21"));
        assert_eq!(of("null").as_deref(), Some("null"));
        assert_eq!(of("false").as_deref(), Some("false"));
        assert_eq!(of("{}"), None);
        assert_eq!(Key::Undefined.to_json(), None);
    }
}
