//! The JSON value model: what `JSON.parse` returns, with JavaScript's string and key rules.

use std::fmt;

/// A JavaScript string stored as WTF-8: UTF-8 that may also hold lone surrogates.
///
/// Well-formed strings (the overwhelming majority) are plain UTF-8 and [`JsString::as_str`]
/// returns them without copying.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsString(Box<[u8]>);

impl JsString {
    /// Builds a string from WTF-8 bytes (the caller guarantees the encoding).
    pub(crate) fn from_wtf8(bytes: Vec<u8>) -> Self {
        JsString(bytes.into_boxed_slice())
    }

    /// The WTF-8 bytes of the string, owned.
    pub fn into_wtf8(self) -> Box<[u8]> {
        self.0
    }

    /// The WTF-8 bytes of the string.
    pub fn as_wtf8(&self) -> &[u8] {
        &self.0
    }

    /// The string as `&str`, or `None` when it holds a lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The string with every lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// [`Self::to_string_lossy`], without a copy when the string holds no lone surrogate.
    pub fn into_string_lossy(self) -> String {
        match String::from_utf8(self.0.into_vec()) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    }

    /// Whether the string is empty (JavaScript's falsy string).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Concatenates strings the way JavaScript's `+` does: a high surrogate at the end of one
    /// part and a low surrogate at the start of the next form one code point.
    pub fn concat(parts: &[&[u8]]) -> Self {
        let mut out: Vec<u8> = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        for part in parts {
            if let (Some(high), Some(low)) =
                (trailing_high_surrogate(&out), leading_low_surrogate(part))
            {
                out.truncate(out.len() - 3);
                push_code_point(&mut out, combine_surrogates(high, low));
                out.extend_from_slice(&part[3..]);
            } else {
                out.extend_from_slice(part);
            }
        }
        JsString(out.into_boxed_slice())
    }
}

impl From<&str> for JsString {
    fn from(s: &str) -> Self {
        JsString(s.as_bytes().into())
    }
}

impl From<String> for JsString {
    fn from(s: String) -> Self {
        JsString(s.into_bytes().into_boxed_slice())
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string_lossy(), f)
    }
}

/// Decodes the surrogate code unit encoded (WTF-8, 3 bytes) at `bytes[0..3]`, if any.
fn surrogate_at(bytes: &[u8]) -> Option<u16> {
    match bytes {
        [0xED, b1 @ 0xA0..=0xBF, b2, ..] => {
            Some(0xD000 | (u16::from(b1 & 0x3F) << 6) | u16::from(b2 & 0x3F))
        }
        _ => None,
    }
}

fn trailing_high_surrogate(bytes: &[u8]) -> Option<u16> {
    let tail = bytes.len().checked_sub(3).map(|i| &bytes[i..])?;
    surrogate_at(tail).filter(|u| (0xD800..0xDC00).contains(u))
}

fn leading_low_surrogate(bytes: &[u8]) -> Option<u16> {
    surrogate_at(bytes).filter(|u| (0xDC00..0xE000).contains(u))
}

fn combine_surrogates(high: u16, low: u16) -> u32 {
    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
}

/// Appends a UTF-16 code unit to a WTF-8 buffer, pairing it with a preceding high surrogate.
pub(crate) fn push_code_unit(buf: &mut Vec<u8>, unit: u16) {
    if (0xDC00..0xE000).contains(&unit)
        && let Some(high) = trailing_high_surrogate(buf)
    {
        buf.truncate(buf.len() - 3);
        push_code_point(buf, combine_surrogates(high, unit));
        return;
    }
    push_code_point(buf, u32::from(unit));
}

/// Appends a code point (surrogates allowed) to a WTF-8 buffer.
fn push_code_point(buf: &mut Vec<u8>, cp: u32) {
    // Truncating casts below are the encoding itself: each byte takes 6 bits.
    if cp < 0x80 {
        buf.push(cp as u8);
    } else if cp < 0x800 {
        buf.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x10000 {
        buf.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        buf.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

/// A JSON value as `JSON.parse` produces it.
///
/// Cloning, dropping, writing and parsing are all iterative: any depth is safe.
#[derive(Debug, Default)]
pub enum JsValue {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: always an IEEE double, possibly infinite after parsing `1e400`.
    Number(f64),
    /// A string.
    String(JsString),
    /// An array.
    Array(JsArray),
    /// An object with JavaScript's own-property order.
    Object(JsObject),
}

impl JsValue {
    /// The member `key` of an object; `None` for other values or a missing key.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        match self {
            JsValue::Object(o) => o.get(key),
            _ => None,
        }
    }

    /// The value as `&str` when it is a well-formed string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsValue::String(s) => s.as_str(),
            _ => None,
        }
    }

    /// The value as an object.
    pub fn as_object(&self) -> Option<&JsObject> {
        match self {
            JsValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value as a mutable object.
    pub fn as_object_mut(&mut self) -> Option<&mut JsObject> {
        match self {
            JsValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// JavaScript truthiness (`!!value`).
    pub fn is_truthy(&self) -> bool {
        match self {
            JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Number(n) => *n != 0.0 && !n.is_nan(),
            JsValue::String(s) => !s.is_empty(),
            JsValue::Array(_) | JsValue::Object(_) => true,
        }
    }

    /// Builds a string value.
    pub fn string(s: impl Into<JsString>) -> Self {
        JsValue::String(s.into())
    }
}

impl Clone for JsValue {
    fn clone(&self) -> Self {
        enum Frame<'a> {
            Array(std::slice::Iter<'a, JsValue>, Vec<JsValue>),
            Object(
                std::slice::Iter<'a, (JsString, JsValue)>,
                Vec<(JsString, JsValue)>,
                Option<JsString>,
            ),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next = Some(self);
        loop {
            let mut done = match next.take() {
                Some(JsValue::Array(a)) => {
                    stack.push(Frame::Array(a.0.iter(), Vec::with_capacity(a.0.len())));
                    None
                }
                Some(JsValue::Object(o)) => {
                    stack.push(Frame::Object(
                        o.members.iter(),
                        Vec::with_capacity(o.len()),
                        None,
                    ));
                    None
                }
                Some(JsValue::Null) => Some(JsValue::Null),
                Some(JsValue::Bool(b)) => Some(JsValue::Bool(*b)),
                Some(JsValue::Number(n)) => Some(JsValue::Number(*n)),
                Some(JsValue::String(s)) => Some(JsValue::String(s.clone())),
                None => None,
            };
            loop {
                let Some(frame) = stack.last_mut() else {
                    return done.unwrap_or_default();
                };
                match frame {
                    Frame::Array(children, out) => {
                        out.extend(done.take());
                        if let Some(child) = children.next() {
                            next = Some(child);
                            break;
                        }
                    }
                    Frame::Object(children, out, key) => {
                        if let Some(value) = done.take() {
                            out.push((key.take().unwrap_or_default(), value));
                        }
                        if let Some((k, child)) = children.next() {
                            *key = Some(k.clone());
                            next = Some(child);
                            break;
                        }
                    }
                }
                done = Some(match stack.pop() {
                    Some(Frame::Array(_, out)) => JsValue::Array(JsArray(out)),
                    Some(Frame::Object(_, out, _)) => JsValue::Object(JsObject { members: out }),
                    None => unreachable!("the stack had a frame above"),
                });
            }
        }
    }
}

/// Whether a possibly missing member is the string `s` (JavaScript `value === s`).
pub fn is_str(value: Option<&JsValue>, s: &str) -> bool {
    matches!(value, Some(JsValue::String(v)) if v.as_wtf8() == s.as_bytes())
}

/// Truthiness of a possibly missing member (`undefined` is falsy).
pub fn truthy(value: Option<&JsValue>) -> bool {
    value.is_some_and(JsValue::is_truthy)
}

/// A JSON array. Dropping it is iterative, so arbitrarily deep values never overflow the stack.
#[derive(Debug, Default)]
pub struct JsArray(pub Vec<JsValue>);

/// A JSON object: members in JavaScript's own-property order (array-index keys first,
/// ascending, then insertion order), keys unique.
#[derive(Debug, Default)]
pub struct JsObject {
    members: Vec<(JsString, JsValue)>,
}

impl JsObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The members in property order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsString, &JsValue)> {
        self.members.iter().map(|(k, v)| (k, v))
    }

    /// The members in property order, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&JsString, &mut JsValue)> {
        self.members.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        self.members
            .iter()
            .find(|(k, _)| k.as_wtf8() == key.as_bytes())
            .map(|(_, v)| v)
    }

    /// The mutable value of `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut JsValue> {
        self.members
            .iter_mut()
            .find(|(k, _)| k.as_wtf8() == key.as_bytes())
            .map(|(_, v)| v)
    }

    /// JavaScript assignment `obj[key] = value`: replaces in place when the key exists,
    /// otherwise appends (or, for an array-index key, inserts in index order).
    pub fn set(&mut self, key: impl Into<JsString>, value: JsValue) {
        let key = key.into();
        if let Some(slot) = self.members.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        match array_index(key.as_wtf8()) {
            Some(index) => {
                let at = self
                    .members
                    .iter()
                    .position(|(k, _)| array_index(k.as_wtf8()).is_none_or(|i| i > index))
                    .unwrap_or(self.members.len());
                self.members.insert(at, (key, value));
            }
            None => self.members.push((key, value)),
        }
    }

    /// JavaScript `delete obj[key]`; returns the removed value.
    pub fn remove(&mut self, key: &str) -> Option<JsValue> {
        let at = self
            .members
            .iter()
            .position(|(k, _)| k.as_wtf8() == key.as_bytes())?;
        Some(self.members.remove(at).1)
    }

    /// Builds an object from members already unique and in property order (parser use).
    pub(crate) fn from_ordered_members(members: Vec<(JsString, JsValue)>) -> Self {
        JsObject { members }
    }

    pub(crate) fn take_members(&mut self) -> Vec<(JsString, JsValue)> {
        std::mem::take(&mut self.members)
    }
}

/// The numeric value of `key` when it is a canonical array index (`"0"`, `"17"`, …, up to
/// 2^32 − 2), the keys JavaScript orders first.
pub(crate) fn array_index(key: &[u8]) -> Option<u32> {
    match key {
        [b'0'] => Some(0),
        [b'1'..=b'9', rest @ ..] if rest.len() < 10 && rest.iter().all(u8::is_ascii_digit) => {
            let n: u64 = key.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0'));
            u32::try_from(n).ok().filter(|&n| n != u32::MAX)
        }
        _ => None,
    }
}

/// Moves the children of a container out so they can be dropped without recursion.
fn drain_children(value: &mut JsValue, stack: &mut Vec<JsValue>) {
    match value {
        JsValue::Array(a) => stack.append(&mut a.0),
        JsValue::Object(o) => stack.extend(o.take_members().into_iter().map(|(_, v)| v)),
        _ => {}
    }
}

fn drop_iteratively(mut stack: Vec<JsValue>) {
    while let Some(mut value) = stack.pop() {
        drain_children(&mut value, &mut stack);
    }
}

impl Drop for JsArray {
    fn drop(&mut self) {
        if self
            .0
            .iter()
            .any(|v| matches!(v, JsValue::Array(_) | JsValue::Object(_)))
        {
            drop_iteratively(std::mem::take(&mut self.0));
        }
    }
}

impl Drop for JsObject {
    fn drop(&mut self) {
        if self
            .members
            .iter()
            .any(|(_, v)| matches!(v, JsValue::Array(_) | JsValue::Object(_)))
        {
            drop_iteratively(self.take_members().into_iter().map(|(_, v)| v).collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_keys_are_canonical_u32_below_max() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"4294967294"), Some(4_294_967_294));
        assert_eq!(array_index(b"4294967295"), None);
        assert_eq!(array_index(b"01"), None);
        assert_eq!(array_index(b"-1"), None);
        assert_eq!(array_index(b"1.0"), None);
    }

    #[test]
    fn set_orders_index_keys_first() {
        let mut o = JsObject::new();
        o.set("b", JsValue::Null);
        o.set("2", JsValue::Null);
        o.set("a", JsValue::Null);
        o.set("1", JsValue::Null);
        o.set("b", JsValue::Bool(true));
        let keys: Vec<_> = o.iter().map(|(k, _)| k.to_string_lossy()).collect();
        assert_eq!(keys, ["1", "2", "b", "a"]);
        assert!(matches!(o.get("b"), Some(JsValue::Bool(true))));
    }

    #[test]
    fn concat_pairs_split_surrogates() {
        let mut high = Vec::new();
        push_code_unit(&mut high, 0xD83D);
        let mut low = Vec::new();
        push_code_unit(&mut low, 0xDE00);
        let joined = JsString::concat(&[b"a", &high, &low, b"b"]);
        assert_eq!(joined.as_str(), Some("a\u{1F600}b"));
    }

    #[test]
    fn clone_is_deep_and_iterative() {
        let text = r#"{"a":[1,{"b":null,"c":[]},"x"],"d":{},"e":1e400}"#;
        let v = crate::parse(text).unwrap();
        assert_eq!(crate::to_string(&v.clone()), crate::to_string(&v));
        let mut deep = JsValue::Null;
        for _ in 0..300_000 {
            let mut o = JsObject::new();
            o.set("k", deep);
            deep = JsValue::Array(JsArray(vec![JsValue::Object(o)]));
        }
        let copy = deep.clone();
        assert_eq!(crate::to_string(&copy).len(), crate::to_string(&deep).len());
    }

    #[test]
    fn deep_values_drop_without_overflow() {
        let mut v = JsValue::Null;
        for _ in 0..1_000_000 {
            v = JsValue::Array(JsArray(vec![v]));
        }
        drop(v);
    }
}
