//! The lines a writer writes, member by member in pi's key order: [`Entry`] builds an entry
//! with [`JsonWriter`], [`header`] a session header; [`line_of_value`] and
//! [`stringify_record`] turn loaded values into lines as `JSON.stringify` writes them.

use super::{LeafId, Line, Text, line_key, shared_role};
use crate::json::{self, JsArray, JsObject, JsString, JsValue, JsonWriter};
use crate::read;
use crate::session::Record;
use crate::session::{Key, shared_type};
use std::borrow::Cow;

/// A built entry line and its id.
#[derive(Debug)]
pub(super) struct EntryLine {
    pub id: String,
    line: Line,
}

impl EntryLine {
    /// A line built elsewhere, with its id.
    pub(super) fn new(id: String, line: Line) -> EntryLine {
        EntryLine { id, line }
    }

    pub(super) fn into_line(self) -> Line {
        self.line
    }

    /// The line's text, without its newline.
    pub(super) fn json(&self) -> &[u8] {
        self.line.text()
    }

    /// The line's value.
    pub(super) fn value(&self) -> JsValue {
        parse_line(&self.line)
    }
}

/// An entry being written: members are added in the order they are called.
pub(super) struct Entry {
    w: JsonWriter,
    entry_type: &'static str,
    parent: Key,
    role: Option<Cow<'static, str>>,
}

impl Entry {
    /// `{type, id, parentId, timestamp, …`: the order of most entries.
    pub(super) fn start(
        entry_type: &'static str,
        id: &str,
        parent: &LeafId,
        timestamp: &str,
    ) -> Entry {
        let mut e = Entry::bare(entry_type);
        e.tail(id, parent, Some(&JsValue::string(timestamp)));
        e
    }

    /// `{type, …`: custom entries put their id, parent and time last ([`Entry::tail`]).
    pub(super) fn bare(entry_type: &'static str) -> Entry {
        let mut buffer = SCRATCH.take();
        buffer.clear();
        let mut w = JsonWriter::with_buffer(buffer);
        w.begin_object();
        w.key("type").string(entry_type);
        Entry {
            w,
            entry_type,
            parent: Key::Undefined,
            role: None,
        }
    }

    /// `id, parentId, timestamp` (absent members — `undefined` in pi — are not written); the
    /// parent is a leaf, whose key the line keeps.
    pub(super) fn tail(
        &mut self,
        id: &str,
        parent: &LeafId,
        timestamp: Option<&JsValue>,
    ) -> &mut Self {
        self.string("id", id);
        self.value("parentId", parent.value.as_ref());
        self.value("timestamp", timestamp);
        self.parent = parent.key.clone();
        self
    }

    /// A string member.
    pub(super) fn string(&mut self, key: &str, value: &str) -> &mut Self {
        self.w.key(key).string(value);
        self
    }

    /// A member, left out when `None` (`undefined`).
    pub(super) fn value(&mut self, key: &str, value: Option<&JsValue>) -> &mut Self {
        if let Some(v) = value {
            self.w.key(key).value(v);
        }
        self
    }

    /// The line, its id `id`.
    pub(super) fn finish(mut self, id: &str) -> EntryLine {
        self.w.end_object();
        let buffer = self.w.into_bytes();
        let json = Text::Owned(Box::from(buffer.as_slice()));
        if buffer.capacity() <= SCRATCH_LIMIT {
            SCRATCH.set(buffer);
        }
        EntryLine {
            id: id.to_owned(),
            line: Line {
                json,
                canonical: true,
                id: Key::string(id),
                parent: self.parent,
                header: false,
                entry_type: Some(Cow::Borrowed(self.entry_type)),
                role: self.role,
            },
        }
    }
}

thread_local! {
    /// The buffer lines are built in, kept from one line to the next so that building one
    /// does not grow a new buffer step by step (each line is then copied out at its size).
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A buffer grown past this (by a huge line) is not kept.
const SCRATCH_LIMIT: usize = 1 << 20;

/// `{type: "message", id, parentId, timestamp, message}`.
pub(super) fn message(id: &str, parent: &LeafId, timestamp: &str, message: &JsValue) -> EntryLine {
    let mut e = Entry::start("message", id, parent, timestamp);
    e.value("message", Some(message));
    e.role = message
        .get("role")
        .and_then(JsValue::as_str)
        .map(shared_role);
    e.finish(id)
}

/// `{type: "session", version: 3, id, timestamp, cwd, parentSession?}`.
pub(super) fn header(id: &str, timestamp: &str, cwd: &str, parent_session: Option<&str>) -> Line {
    let mut w = JsonWriter::new();
    w.begin_object();
    w.key("type").string("session");
    w.key("version").uint(3);
    w.key("id").string(id);
    w.key("timestamp").string(timestamp);
    w.key("cwd").string(cwd);
    if let Some(parent) = parent_session {
        w.key("parentSession").string(parent);
    }
    w.end_object();
    Line {
        json: Text::Owned(w.into_bytes().into_boxed_slice()),
        canonical: true,
        id: Key::string(id),
        parent: Key::Undefined,
        header: true,
        entry_type: Some(Cow::Borrowed("session")),
        role: None,
    }
}

/// The line of a value, as `JSON.stringify` writes it.
pub(super) fn line_of_value(value: &JsValue) -> Line {
    let entry_type = value.get("type").and_then(JsValue::as_str);
    Line {
        json: Text::Owned(json::to_string(value).into_bytes().into_boxed_slice()),
        canonical: true,
        id: line_key(value.get("id")),
        parent: line_key(value.get("parentId")),
        header: entry_type == Some("session"),
        entry_type: entry_type.map(shared_type),
        role: value
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str)
            .map(shared_role),
    }
}

/// A loaded record as `JSON.stringify` writes it: its text when that is already the case.
pub(super) fn stringify_record(record: &Record<'_>) -> Box<[u8]> {
    let text = record.text();
    if !record.is_rewritten() && !record.lossy && json::is_canonical(text.as_bytes()) {
        text.as_bytes().into()
    } else {
        json::to_string(&record.value())
            .into_bytes()
            .into_boxed_slice()
    }
}

/// A line's text parsed back (writer lines are `JSON.stringify` output: valid UTF-8).
pub(super) fn parse_line(line: &Line) -> JsValue {
    line.with_text(|text| {
        std::str::from_utf8(text)
            .ok()
            .and_then(|t| json::parse(t).ok())
            .unwrap_or_default()
    })
}

/// A session name as pi stores it: runs of `\r`/`\n` as one space (0.87.1+), then trimmed
/// of ECMAScript whitespace.
pub(super) fn session_name(name: &str, lose_newlines: bool) -> String {
    let mut text = String::with_capacity(name.len());
    if lose_newlines {
        let mut in_run = false;
        for c in name.chars() {
            if matches!(c, '\r' | '\n') {
                if !in_run {
                    text.push(' ');
                }
                in_run = true;
            } else {
                text.push(c);
                in_run = false;
            }
        }
    } else {
        text.push_str(name);
    }
    let bytes = text.as_bytes();
    let start = read::trim_start(bytes);
    let end = start + read::trim_end(&bytes[start..]);
    text[start..end].to_owned()
}

/// `{content: [{type: "text", text}]}`: a string replacement of an assistant or tool result.
pub(super) fn text_block_replacement(text: &JsString) -> JsValue {
    let mut block = JsObject::new();
    block.set("type", JsValue::string("text"));
    block.set("text", JsValue::String(text.clone()));
    let mut replacement = JsObject::new();
    replacement.set(
        "content",
        JsValue::Array(JsArray(vec![JsValue::Object(block)])),
    );
    JsValue::Object(replacement)
}

/// A serializable value (a typed message) as the JSON value `JSON.parse` gives for it.
///
/// An integer field beyond JavaScript's safe integers (±(2^53 − 1)) is refused: pi would
/// hold, write and read back another number, and the typed reader could refuse it.
pub(super) fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, String> {
    let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
    // Such an integer has at least 16 digits: only then is the value walked.
    if has_digit_run(text.as_bytes(), 16) {
        let tree = serde_json::to_value(value).map_err(|e| e.to_string())?;
        if let Some((pointer, n)) = unsafe_integer(&tree, &mut String::new()) {
            return Err(format!(
                "{pointer}: {n} is beyond the integers a JavaScript number holds exactly \
                 (2^53 - 1): pi would write {}",
                json::to_string(&JsValue::Number(n.as_f64().unwrap_or(f64::NAN)))
            ));
        }
    }
    json::parse(&text).map_err(|e| e.message())
}

/// Whether `text` has `n` ASCII digits in a row.
fn has_digit_run(text: &[u8], n: usize) -> bool {
    let mut run = 0;
    text.iter().any(|b| {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        run >= n
    })
}

/// The first integer (not float) of `value` beyond ±(2^53 − 1), with its JSON pointer.
fn unsafe_integer(
    value: &serde_json::Value,
    pointer: &mut String,
) -> Option<(String, serde_json::Number)> {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    match value {
        serde_json::Value::Number(n) => {
            let unsafe_int = n.as_u64().is_some_and(|u| u > MAX_SAFE)
                || n.as_i64().is_some_and(|i| i.unsigned_abs() > MAX_SAFE);
            unsafe_int.then(|| (pointer.clone(), n.clone()))
        }
        serde_json::Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = pointer.len();
            pointer.push_str(&format!("/{i}"));
            let found = unsafe_integer(item, pointer);
            pointer.truncate(len);
            found
        }),
        serde_json::Value::Object(map) => map.iter().find_map(|(key, item)| {
            let len = pointer.len();
            pointer.push('/');
            pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            let found = unsafe_integer(item, pointer);
            pointer.truncate(len);
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_integers_are_refused() {
        #[derive(serde::Serialize)]
        struct Message {
            timestamp: u64,
            cost: f64,
            deltas: Vec<i64>,
        }
        let ok = Message {
            timestamp: (1 << 53) - 1,
            cost: 1e21,
            deltas: vec![-((1 << 53) - 1)],
        };
        assert!(
            to_js(&ok).is_ok(),
            "the largest safe integers and any float pass"
        );
        let too_big = Message {
            timestamp: u64::MAX,
            ..ok
        };
        let e = to_js(&too_big).unwrap_err();
        assert!(
            e.starts_with("/timestamp: 18446744073709551615 is beyond"),
            "{e}"
        );
        assert!(e.ends_with("pi would write 18446744073709552000"), "{e}");
        let too_small = Message {
            timestamp: 1,
            cost: 0.0,
            deltas: vec![0, -(1 << 53)],
        };
        let e = to_js(&too_small).unwrap_err();
        assert!(
            e.starts_with("/deltas/1: -9007199254740992 is beyond"),
            "{e}"
        );
    }

    #[test]
    fn session_names() {
        assert_eq!(session_name("  build\nfix  ", true), "build fix");
        assert_eq!(session_name("  build\nfix  ", false), "build\nfix");
        assert_eq!(session_name("a\r\n\r\nb\u{feff}", true), "a b");
        assert_eq!(session_name("\u{85}x\u{85}", true), "\u{85}x\u{85}");
    }
}
