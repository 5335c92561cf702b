//! pi-ai's `getCurrentSystemMessage` (0.87.1+): the `system` messages of a context replayed
//! into one (content joined, sections patched by name, tools added and removed by name),
//! which a compaction stores as its `systemMessage`.

use crate::json::{self, JsArray, JsObject, JsString, JsValue};
use crate::session::Key;

/// Where pi throws a `TypeError` (a shape its code does not expect), with what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError(pub String);

/// JavaScript's `String(value)` for the values `Array.prototype.join` meets.
fn js_to_string(value: &JsValue, out: &mut Vec<u8>) {
    match value {
        JsValue::Null => {}
        JsValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        JsValue::Number(n) => json::write_number(out, *n),
        JsValue::String(s) => out.extend_from_slice(s.as_wtf8()),
        JsValue::Array(a) => {
            for (i, v) in a.0.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                js_to_string(v, out);
            }
        }
        JsValue::Object(_) => out.extend_from_slice(b"[object Object]"),
    }
}

/// pi-ai's `contentText(content)`: a string as is; an array's text blocks' `text` joined
/// with newlines.
fn content_text(content: Option<&JsValue>) -> Result<Vec<u8>, TypeError> {
    match content {
        Some(JsValue::String(s)) => Ok(s.as_wtf8().to_vec()),
        Some(JsValue::Array(blocks)) => {
            let mut out = Vec::new();
            let mut first = true;
            for block in &blocks.0 {
                if matches!(block, JsValue::Null) {
                    return Err(TypeError("a system message's content holds null".into()));
                }
                if !json::is_str(block.get("type"), "text") {
                    continue;
                }
                if !first {
                    out.push(b'\n');
                }
                first = false;
                if let Some(text) = block.get("text") {
                    js_to_string(text, &mut out);
                }
            }
            Ok(out)
        }
        Some(_) | None => Err(TypeError(
            "a system message's content is neither a string nor an array".into(),
        )),
    }
}

/// `for (const x of value ?? [])`: the items of an array, the code points of a string.
fn iterate(value: Option<&JsValue>) -> Result<Vec<JsValue>, TypeError> {
    match value {
        None | Some(JsValue::Null) => Ok(Vec::new()),
        Some(JsValue::Array(items)) => Ok(items.0.clone()),
        Some(JsValue::String(s)) => Ok(s
            .to_string_lossy()
            .chars()
            .map(|c| JsValue::string(c.to_string()))
            .collect()),
        Some(_) => Err(TypeError(
            "a system message's tool list is not iterable".into(),
        )),
    }
}

/// `tool.name`: the key a tool is added and removed by.
fn tool_key(tool: &JsValue, unique: u64) -> Result<Key, TypeError> {
    match tool {
        JsValue::Null => Err(TypeError("a system message lists a null tool".into())),
        JsValue::Object(o) => Ok(Key::of(o.get("name"), unique)),
        _ => Ok(Key::Undefined),
    }
}

/// A `Map` in insertion order: `set` keeps an existing key's place, `delete` removes it.
struct OrderedMap<K, V>(Vec<(K, V)>);

impl<K: PartialEq, V> OrderedMap<K, V> {
    fn set(&mut self, key: K, value: V) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    fn delete(&mut self, key: &K) {
        self.0.retain(|(k, _)| k != key);
    }
}

/// The compaction's `systemMessage` for the context `messages`, stamped `timestamp_ms`, or
/// `None` when no message is a `system` message with a timestamp or tools.
pub(super) fn current_system_message(
    messages: &[JsValue],
    timestamp_ms: i64,
) -> Result<Option<JsValue>, TypeError> {
    let mut content: Vec<Vec<u8>> = Vec::new();
    let mut sections: OrderedMap<JsString, JsValue> = OrderedMap(Vec::new());
    let mut tools: OrderedMap<Key, JsValue> = OrderedMap(Vec::new());
    let mut has_timestamp = false;
    let mut unique = 0u64;
    for message in messages {
        if !json::is_str(message.get("role"), "system") {
            continue;
        }
        has_timestamp |= !matches!(message.get("timestamp"), None | Some(JsValue::Null));
        let text = content_text(message.get("content"))?;
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(JsValue::Object(patch)) = message.get("sections") {
            for (name, value) in patch.iter() {
                match value {
                    JsValue::Null => sections.delete(name),
                    v => sections.set(name.clone(), v.clone()),
                }
            }
        }
        for tool in iterate(message.get("toolsRemoved"))? {
            unique += 1;
            tools.delete(&tool_key(&tool, unique)?);
        }
        for tool in iterate(message.get("toolsAdded"))? {
            unique += 1;
            let key = tool_key(&tool, unique)?;
            tools.set(key, tool);
        }
    }
    if !has_timestamp && tools.0.is_empty() {
        return Ok(None);
    }
    let mut out = JsObject::new();
    out.set("role", JsValue::string("system"));
    let joined: Vec<u8> = content.join(&b"\n\n"[..]);
    out.set("content", JsValue::String(JsString::concat(&[&joined])));
    if !sections.0.is_empty() {
        let mut object = JsObject::new();
        for (name, value) in sections.0 {
            object.set(name, value);
        }
        out.set("sections", JsValue::Object(object));
    }
    if !tools.0.is_empty() {
        let list = tools.0.into_iter().map(|(_, tool)| tool).collect();
        out.set("toolsAdded", JsValue::Array(JsArray(list)));
    }
    out.set("timestamp", JsValue::Number(timestamp_ms as f64));
    Ok(Some(JsValue::Object(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Vec<JsValue> {
        match json::parse(s).unwrap() {
            JsValue::Array(a) => a.0.clone(),
            _ => panic!("an array"),
        }
    }

    #[test]
    fn replays_content_sections_and_tools() {
        let messages = parse(
            r#"[{"role":"user","content":"hi"},
                {"role":"system","content":"base","sections":{"b":"1","a":"2"},"toolsAdded":[{"name":"t1"},{"name":"t2"}],"timestamp":5},
                {"role":"system","content":[{"type":"text","text":"more"},{"type":"image"}],"sections":{"b":null,"c":"3","1":"x"},"toolsRemoved":[{"name":"t1"}],"toolsAdded":[{"name":"t2","v":2}]}]"#,
        );
        let message = current_system_message(&messages, 99).unwrap().unwrap();
        assert_eq!(
            json::to_string(&message),
            r#"{"role":"system","content":"base\n\nmore","sections":{"1":"x","a":"2","c":"3"},"toolsAdded":[{"name":"t2","v":2}],"timestamp":99}"#
        );
    }

    #[test]
    fn none_without_a_timestamp_or_tools() {
        let messages = parse(r#"[{"role":"system","content":"x"},{"role":"user","content":"y"}]"#);
        assert!(current_system_message(&messages, 1).unwrap().is_none());
        assert!(current_system_message(&[], 1).unwrap().is_none());
    }

    #[test]
    fn shapes_pi_throws_on_are_errors() {
        let messages = parse(r#"[{"role":"system","content":{"a":1},"timestamp":1}]"#);
        assert!(current_system_message(&messages, 1).is_err());
        let messages = parse(r#"[{"role":"system","content":"","toolsAdded":[null]}]"#);
        assert!(current_system_message(&messages, 1).is_err());
    }
}
