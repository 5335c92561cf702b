//! Opt-in repairs of tool calls: a call whose `arguments` is `null` (pi's `/tree` crashes on
//! it, pi#8386) gets `{}`. It changes what the model is sent, so it is asked for
//! ([`super::RepairOptions::tool_calls`]).

use super::{Fix, FixAction, Line, Repairs};
use crate::Code;
use pi_session_format::json::{self, JsObject, JsValue};

/// `{}` for every `arguments: null` of an assistant message's tool calls.
pub(super) fn null_arguments<'a>(mut lines: Vec<Line<'a>>, out: &mut Repairs) -> Vec<Line<'a>> {
    if !out.wants(Code::WrongType) {
        return lines;
    }
    for line in &mut lines {
        // A line that neither names `"arguments"` nor has a `\u` escape (which could spell
        // it) has none.
        if memchr::memmem::find(&line.text, b"\"arguments\"").is_none()
            && memchr::memmem::find(&line.text, b"\\u").is_none()
        {
            continue;
        }
        let Some(mut value) = super::value_of(&line.text) else {
            continue;
        };
        let mut fixed = 0;
        if let Some(JsValue::Object(message)) =
            value.as_object_mut().and_then(|o| o.get_mut("message"))
            && message.get("role").and_then(JsValue::as_str) == Some("assistant")
            && let Some(JsValue::Array(content)) = message.get_mut("content")
        {
            for block in content.0.iter_mut() {
                if let JsValue::Object(block) = block
                    && block.get("type").and_then(JsValue::as_str) == Some("toolCall")
                    && matches!(block.get("arguments"), Some(JsValue::Null))
                {
                    block.set("arguments", JsValue::Object(JsObject::new()));
                    fixed += 1;
                }
            }
        }
        if fixed > 0 {
            line.edit(json::to_string(&value).into_bytes());
            out.fix(Fix::new(
                Code::WrongType,
                line.origin,
                FixAction::Normalized,
                format!(
                    "{fixed} tool call{} with `arguments: null` (pi's /tree crashes on it, pi#8386): now `{{}}`",
                    if fixed == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    lines
}
