//! What the tables take from a message's value: its text, thinking and tool calls.

use pi_session_format::json::{self, JsValue};

/// The parts of a message's `content` the tables keep.
#[derive(Debug, Default)]
pub struct Content {
    /// The text: a string content, or the `text` blocks joined by a newline.
    pub text: Option<String>,
    /// The `thinking` blocks joined by a newline.
    pub thinking: Option<String>,
    /// The `toolCall` blocks: id, name and arguments as JSON text.
    pub calls: Vec<Call>,
}

/// One `toolCall` block.
#[derive(Debug, Clone, Default)]
pub struct Call {
    /// `id`, when a string.
    pub id: Option<String>,
    /// `name`, when a string.
    pub name: Option<String>,
    /// `arguments` as JSON text.
    pub arguments: Option<String>,
}

fn join(into: &mut Option<String>, text: &str) {
    match into {
        Some(s) => {
            s.push('\n');
            s.push_str(text);
        }
        None => *into = Some(text.to_owned()),
    }
}

/// A string member of a value.
pub fn string(value: &JsValue, key: &str) -> Option<String> {
    value.get(key).and_then(JsValue::as_str).map(str::to_owned)
}

/// The parts of `content` (a string or an array of blocks).
pub fn content(content: Option<&JsValue>) -> Content {
    let mut out = Content::default();
    match content {
        Some(JsValue::String(s)) => out.text = Some(s.to_string_lossy()),
        Some(JsValue::Array(blocks)) => {
            for b in &blocks.0 {
                match b.get("type").and_then(JsValue::as_str) {
                    Some("text") => {
                        if let Some(t) = b.get("text").and_then(JsValue::as_str) {
                            join(&mut out.text, t);
                        }
                    }
                    Some("thinking") => {
                        if let Some(t) = b.get("thinking").and_then(JsValue::as_str) {
                            join(&mut out.thinking, t);
                        }
                    }
                    Some("toolCall") => out.calls.push(Call {
                        id: string(b, "id"),
                        name: string(b, "name"),
                        arguments: b.get("arguments").map(json::to_string),
                    }),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

/// The text of a message (see the `messages.text` column), with its thinking and calls.
pub fn message(message: &JsValue) -> Content {
    match message.get("role").and_then(JsValue::as_str) {
        Some("bashExecution") => {
            let mut text = None;
            for key in ["command", "output"] {
                if let Some(t) = message.get(key).and_then(JsValue::as_str) {
                    join(&mut text, t);
                }
            }
            Content {
                text,
                ..Content::default()
            }
        }
        Some("branchSummary" | "compactionSummary") => Content {
            text: string(message, "summary"),
            ..Content::default()
        },
        _ => content(message.get("content")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_joined_and_calls_kept() {
        let m = json::parse(
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"toolCall","id":"c","name":"ls","arguments":{"p":"."}}]}"#,
        )
        .unwrap();
        let c = message(&m);
        assert_eq!(c.text.as_deref(), Some("a\nb"));
        assert_eq!(c.thinking.as_deref(), Some("hmm"));
        assert_eq!(c.calls[0].arguments.as_deref(), Some(r#"{"p":"."}"#));
        let bash = json::parse(r#"{"role":"bashExecution","command":"ls","output":"x"}"#).unwrap();
        assert_eq!(message(&bash).text.as_deref(), Some("ls\nx"));
    }
}
