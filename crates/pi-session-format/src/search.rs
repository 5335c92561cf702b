//! The texts of a session a search looks at ([`texts`]): every message's text and thinking,
//! every tool call (its name and arguments as JSON) and tool result, custom messages, branch
//! and compaction summaries — each with its line, entry id, role, and whether it is on the
//! branch pi resumes. The matching itself is the caller's (the CLI uses the `regex` crate).

use crate::json::{self, JsValue};
use crate::session::{Key, Session};
use crate::tree::Leaf;

/// Whose text it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A user message.
    User,
    /// An assistant message: its text, thinking and tool calls.
    Assistant,
    /// A tool result, or a bash execution's output.
    Tool,
    /// Anything else: custom messages, summaries.
    Other,
}

impl Role {
    /// `user`, `assistant`, `tool` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other => "other",
        }
    }
}

/// One text to search.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// The line of the entry (1-based).
    pub line: usize,
    /// The entry's id, when it is a string.
    pub id: Option<String>,
    /// Whose text it is.
    pub role: Role,
    /// What part of the entry: `text`, `thinking`, `toolCall`, `toolResult`, `command`,
    /// `output`, `summary`.
    pub field: &'static str,
    /// Whether the entry is on the branch pi resumes (the path to its leaf).
    pub on_path: bool,
    /// The text.
    pub text: String,
}

fn push_blocks(content: Option<&JsValue>, role: Role, out: &mut Vec<(Role, &'static str, String)>) {
    match content {
        Some(JsValue::String(s)) => out.push((role, "text", s.to_string_lossy())),
        Some(JsValue::Array(blocks)) => {
            for b in &blocks.0 {
                match b.get("type").and_then(JsValue::as_str) {
                    Some("text") => {
                        if let Some(t) = b.get("text").and_then(JsValue::as_str) {
                            out.push((role, "text", t.to_owned()));
                        }
                    }
                    Some("thinking") => {
                        if let Some(t) = b.get("thinking").and_then(JsValue::as_str) {
                            out.push((role, "thinking", t.to_owned()));
                        }
                    }
                    Some("toolCall") => {
                        let name = b.get("name").and_then(JsValue::as_str).unwrap_or_default();
                        out.push((role, "toolCall", tool_call_text(name, b.get("arguments"))));
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The texts of one entry's value.
fn entry_texts(value: &JsValue) -> Vec<(Role, &'static str, String)> {
    let mut out = Vec::new();
    let string = |key: &str| value.get(key).and_then(JsValue::as_str).map(str::to_owned);
    match value.get("type").and_then(JsValue::as_str) {
        Some("message") => {
            let Some(m) = value.get("message") else {
                return out;
            };
            let text = |key: &str| m.get(key).and_then(JsValue::as_str).map(str::to_owned);
            match m.get("role").and_then(JsValue::as_str) {
                Some("user") => push_blocks(m.get("content"), Role::User, &mut out),
                Some("assistant") => push_blocks(m.get("content"), Role::Assistant, &mut out),
                Some("toolResult") => {
                    let mut blocks = Vec::new();
                    push_blocks(m.get("content"), Role::Tool, &mut blocks);
                    out.extend(blocks.into_iter().map(|(r, _, t)| (r, "toolResult", t)));
                }
                Some("bashExecution") => {
                    out.extend(text("command").map(|t| (Role::Tool, "command", t)));
                    out.extend(text("output").map(|t| (Role::Tool, "output", t)));
                }
                Some("branchSummary" | "compactionSummary") => {
                    out.extend(text("summary").map(|t| (Role::Other, "summary", t)));
                }
                _ => push_blocks(m.get("content"), Role::Other, &mut out),
            }
        }
        Some("custom_message") => push_blocks(value.get("content"), Role::Other, &mut out),
        Some("compaction" | "branch_summary") => {
            out.extend(string("summary").map(|t| (Role::Other, "summary", t)));
        }
        _ => {}
    }
    out
}

/// The text a search looks at for a tool call: its name, a space, its arguments as
/// `JSON.stringify` writes them (nothing when there are none).
fn tool_call_text(name: &str, arguments: Option<&JsValue>) -> String {
    let args = arguments.map(json::to_string).unwrap_or_default();
    format!("{name} {args}")
}

/// The texts a search makes up for the tool calls of an entry line (`name arguments`, the
/// arguments written again), read without parsing the rest of the line: every `toolCall`
/// block of its `message.content` or `content`, possibly more (a caller uses them to decide
/// whether to parse the line, so more is only slower). `None` when the line is not read this
/// way (not an object, or its values are not as expected): parse it to know.
pub fn tool_call_texts(line: &str) -> Option<Vec<String>> {
    let mut texts = Vec::new();
    let mut cursor = json::Cursor::new(line);
    let read = cursor.object(|c, key| match key {
        b"message" => {
            c.object(|c, key| match key {
                b"content" => blocks(c, &mut texts),
                _ => Ok(()),
            })?;
            Ok(())
        }
        b"content" => blocks(c, &mut texts),
        _ => Ok(()),
    });
    matches!(read, Ok(true)).then_some(texts)
}

/// The texts ([`tool_call_text`]) of the `toolCall` blocks of the array at `c` (anything
/// else skipped).
fn blocks(c: &mut json::Cursor<'_>, texts: &mut Vec<String>) -> Result<(), json::ParseError> {
    c.array(|c| {
        let (mut is_call, mut name, mut arguments) = (false, None, None);
        c.object(|c, key| {
            match key {
                b"type" => is_call |= c.exact_string()?.as_deref() == Some("toolCall"),
                b"name" => name = c.exact_string()?,
                b"arguments" => arguments = Some(c.value()?),
                _ => {}
            }
            Ok(())
        })?;
        if is_call {
            texts.push(tool_call_text(
                name.as_deref().unwrap_or_default(),
                arguments.as_ref(),
            ));
        }
        Ok(())
    })?;
    Ok(())
}

/// Every text of `session` a search looks at, in file order (see the [module](self) docs).
pub fn texts(session: &Session<'_>) -> Vec<Text> {
    texts_where(session, &|_| true)
}

/// [`texts`] of the entries whose line `keep` accepts (given the line's JSON text, as read):
/// a caller whose pattern cannot match across JSON's escapes can skip, unparsed, the lines in
/// which the pattern does not even occur raw.
pub fn texts_where(session: &Session<'_>, keep: &dyn Fn(&str) -> bool) -> Vec<Text> {
    let index = session.index();
    let mut on_path = vec![false; session.records.len()];
    if let Some(leaf) = index.leaf_record(session, &Leaf::Current)
        && let Ok(path) = index.path(session, leaf)
    {
        for i in path {
            if let Some(slot) = on_path.get_mut(i) {
                *slot = true;
            }
        }
    }
    let mut out = Vec::new();
    for (i, record) in session.records.iter().enumerate() {
        if !matches!(
            record.entry_type(),
            Some("message" | "custom_message" | "compaction" | "branch_summary")
        ) {
            continue;
        }
        if !record.is_rewritten() && !keep(record.text()) {
            continue;
        }
        let id = match &record.id {
            Key::String(s) => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        };
        for (role, field, text) in entry_texts(&record.value()) {
            out.push(Text {
                line: record.line,
                id: id.clone(),
                role,
                field,
                on_path: on_path[i],
                text,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PiVersion;

    /// The made-up texts of tool calls read from the line are those the parsed entry gives.
    #[test]
    fn tool_call_texts_are_the_entry_texts() {
        let lines = [
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command": "ls", "n": 1.50, "2": 0}},{"type":"toolCall","name":"x"}]}}"#,
            r#"{"type":"custom_message","content":[{"type":"toolCall","name":"n","arguments":[1, 2]}]}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"toolCall","name":"t","arguments":"s"}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":"toolCall"}}"#,
        ];
        for line in lines {
            let from_value: Vec<String> = entry_texts(&json::parse(line).unwrap())
                .into_iter()
                .filter(|(_, field, text)| {
                    *field == "toolCall" || (*field == "toolResult" && text.starts_with("t "))
                })
                .map(|(_, _, text)| text)
                .collect();
            assert_eq!(tool_call_texts(line), Some(from_value), "{line}");
        }
        assert_eq!(tool_call_texts("[1]"), None);
        assert_eq!(tool_call_texts(r#"{"content":[}"#), None);
    }

    #[test]
    fn every_kind_of_text_with_its_place() {
        let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"find the bug","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Looking"},{"type":"toolCall","id":"c","name":"grep","arguments":{"q":"bug"}}],"timestamp":2}}
{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"grep","content":[{"type":"text","text":"bug.rs:1"}],"isError":false,"timestamp":3}}
"#;
        let s = Session::from_bytes(file, PiVersion::V0_73).expect("loads");
        let t = texts(&s);
        let got: Vec<(usize, &str, &str, bool, &str)> = t
            .iter()
            .map(|t| (t.line, t.role.as_str(), t.field, t.on_path, t.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (2, "user", "text", true, "find the bug"),
                (3, "assistant", "thinking", false, "hmm"),
                (3, "assistant", "text", false, "Looking"),
                (3, "assistant", "toolCall", false, r#"grep {"q":"bug"}"#),
                (4, "tool", "toolResult", true, "bug.rs:1"),
            ]
        );
    }
}
