//! `convertToLlm`: context messages to the messages sent to the model (section 9).
//!
//! `user`, `assistant` and `toolResult` messages pass through unchanged (and `system`
//! with pi 0.87.1); `bashExecution`, `custom`, `branchSummary` and `compactionSummary`
//! become user messages with byte-exact text templates; everything else is dropped.

use crate::PiVersion;
use crate::context::Message;
use crate::json::{JsArray, JsObject, JsString, JsValue, write_value};

/// Prefix of a compaction summary sent to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Suffix of a compaction summary sent to the model.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Prefix of a branch summary sent to the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Suffix of a branch summary sent to the model (no newline before the tag).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// Converts context messages as pi's `convertToLlm(messages)`. Messages that pass through
/// unchanged stay as they are (raw text is not parsed).
pub fn to_llm<'s>(messages: Vec<Message<'s>>, pi: PiVersion) -> Vec<Message<'s>> {
    messages
        .into_iter()
        .filter_map(|m| match m.role() {
            Some("user" | "assistant" | "toolResult") => Some(m),
            Some("system") if pi.reads_like_0_87() => Some(m),
            None => None,
            Some(_) => convert(m.into_value(), pi).map(Message::Value),
        })
        .collect()
}

/// [`to_llm`] over plain values.
pub fn to_llm_values(messages: Vec<JsValue>, pi: PiVersion) -> Vec<JsValue> {
    messages
        .into_iter()
        .filter_map(|m| convert(m, pi))
        .collect()
}

fn convert(message: JsValue, pi: PiVersion) -> Option<JsValue> {
    let role = message
        .get("role")
        .and_then(JsValue::as_str)
        .map(str::to_owned);
    match role.as_deref()? {
        "user" | "assistant" | "toolResult" => Some(message),
        "system" if pi.reads_like_0_87() => Some(message),
        "bashExecution" => {
            if message
                .get("excludeFromContext")
                .is_some_and(JsValue::is_truthy)
            {
                return None;
            }
            Some(user_text(bash_execution_text(&message), &message))
        }
        "custom" => {
            let content = match message.get("content") {
                Some(JsValue::String(text)) => Some(text_blocks(text.clone())),
                other => other.cloned(),
            };
            Some(user(content, &message))
        }
        "branchSummary" => Some(user_text(
            template(
                BRANCH_SUMMARY_PREFIX,
                message.get("summary"),
                BRANCH_SUMMARY_SUFFIX,
            ),
            &message,
        )),
        "compactionSummary" => Some(user_text(
            template(
                COMPACTION_SUMMARY_PREFIX,
                message.get("summary"),
                COMPACTION_SUMMARY_SUFFIX,
            ),
            &message,
        )),
        _ => None,
    }
}

fn template(prefix: &str, value: Option<&JsValue>, suffix: &str) -> JsString {
    JsString::concat(&[
        prefix.as_bytes(),
        to_js_string(value).as_wtf8(),
        suffix.as_bytes(),
    ])
}

/// `bashExecutionToText(msg)`.
fn bash_execution_text(m: &JsValue) -> JsString {
    let truthy = |key| m.get(key).is_some_and(JsValue::is_truthy);
    let command = to_js_string(m.get("command"));
    let output = to_js_string(m.get("output"));
    let mut parts: Vec<&[u8]> = vec![b"Ran `", command.as_wtf8(), b"`\n"];
    if truthy("output") {
        parts.extend([b"```\n".as_slice(), output.as_wtf8(), b"\n```"]);
    } else {
        parts.push(b"(no output)");
    }
    let exit_code = to_js_string(m.get("exitCode"));
    if truthy("cancelled") {
        parts.push(b"\n\n(command cancelled)");
    } else if !matches!(m.get("exitCode"), None | Some(JsValue::Null))
        && !is_zero(m.get("exitCode"))
    {
        parts.extend([
            b"\n\nCommand exited with code ".as_slice(),
            exit_code.as_wtf8(),
        ]);
    }
    let full_output_path = to_js_string(m.get("fullOutputPath"));
    if truthy("truncated") && truthy("fullOutputPath") {
        parts.extend([
            b"\n\n[Output truncated. Full output: ".as_slice(),
            full_output_path.as_wtf8(),
            b"]",
        ]);
    }
    JsString::concat(&parts)
}

/// `value !== 0` is false only for the number zero.
fn is_zero(value: Option<&JsValue>) -> bool {
    matches!(value, Some(JsValue::Number(n)) if *n == 0.0)
}

fn text_blocks(text: JsString) -> JsValue {
    let mut block = JsObject::new();
    block.set("type", JsValue::string("text"));
    block.set("text", JsValue::String(text));
    JsValue::Array(JsArray(vec![JsValue::Object(block)]))
}

fn user_text(text: JsString, source: &JsValue) -> JsValue {
    user(Some(text_blocks(text)), source)
}

/// `{role: "user", content, timestamp}` with undefined members left out.
fn user(content: Option<JsValue>, source: &JsValue) -> JsValue {
    let mut o = JsObject::new();
    o.set("role", JsValue::string("user"));
    if let Some(content) = content {
        o.set("content", content);
    }
    if let Some(timestamp) = source.get("timestamp") {
        o.set("timestamp", timestamp.clone());
    }
    JsValue::Object(o)
}

/// JavaScript `String(value)` for JSON values (`undefined` for a missing one).
pub fn to_js_string(value: Option<&JsValue>) -> JsString {
    let mut out = Vec::new();
    append_js_string(&mut out, value);
    JsString::concat(&[&out])
}

/// Whether making `value` a string throws in JavaScript (where [`to_js_string`] has an
/// answer JavaScript does not give): an object with its own `toString` member (a JSON value,
/// never a function) has no way to become a primitive, and an array joins its elements.
pub fn to_js_string_throws(value: &JsValue) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            JsValue::Object(o) if o.get("toString").is_some() => return true,
            JsValue::Array(items) => stack.extend(&items.0),
            _ => {}
        }
    }
    false
}

fn append_js_string(out: &mut Vec<u8>, value: Option<&JsValue>) {
    match value {
        None => out.extend_from_slice(b"undefined"),
        Some(JsValue::Null) => out.extend_from_slice(b"null"),
        Some(JsValue::Bool(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Some(JsValue::Number(n)) if n.is_infinite() => {
            out.extend_from_slice(if *n > 0.0 { b"Infinity" } else { b"-Infinity" })
        }
        Some(number @ JsValue::Number(_)) => write_value(out, number),
        Some(JsValue::String(s)) => out.extend_from_slice(s.as_wtf8()),
        Some(JsValue::Object(_)) => out.extend_from_slice(b"[object Object]"),
        Some(JsValue::Array(items)) => {
            // Array.prototype.join(","): null and undefined elements are empty. Nested
            // arrays are joined the same way, so flatten iteratively.
            let mut stack: Vec<(&[JsValue], usize)> = vec![(&items.0, 0)];
            while let Some((list, i)) = stack.pop() {
                if i >= list.len() {
                    continue;
                }
                if i > 0 {
                    out.push(b',');
                }
                stack.push((list, i + 1));
                match &list[i] {
                    JsValue::Null => {}
                    JsValue::Array(inner) => stack.push((&inner.0, 0)),
                    other => append_js_string(out, Some(other)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    fn llm(message: &str, pi: PiVersion) -> String {
        to_string(&JsValue::Array(JsArray(to_llm_values(
            vec![parse(message).unwrap()],
            pi,
        ))))
    }

    fn text(message: &str) -> String {
        let out = to_llm_values(vec![parse(message).unwrap()], PiVersion::V0_73);
        out[0].get("content").unwrap().as_array_first_text()
    }

    trait FirstText {
        fn as_array_first_text(&self) -> String;
    }

    impl FirstText for JsValue {
        fn as_array_first_text(&self) -> String {
            match self {
                JsValue::Array(a) => a.0[0]
                    .get("text")
                    .and_then(JsValue::as_str)
                    .unwrap()
                    .to_owned(),
                _ => panic!("not an array"),
            }
        }
    }

    #[test]
    fn bash_execution_templates() {
        assert_eq!(
            text(
                r#"{"role":"bashExecution","command":"ls","output":"","exitCode":2,"truncated":true,"fullOutputPath":"/tmp/o"}"#
            ),
            "Ran `ls`\n(no output)\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o]"
        );
        assert_eq!(
            text(
                r#"{"role":"bashExecution","command":"x","output":"o","exitCode":1,"cancelled":true}"#
            ),
            "Ran `x`\n```\no\n```\n\n(command cancelled)"
        );
        assert_eq!(
            text(r#"{"role":"bashExecution","command":"x","output":"o","exitCode":0}"#),
            "Ran `x`\n```\no\n```"
        );
        assert_eq!(
            text(r#"{"role":"bashExecution","output":"o","exitCode":"0"}"#),
            "Ran `undefined`\n```\no\n```\n\nCommand exited with code 0"
        );
        assert_eq!(
            llm(
                r#"{"role":"bashExecution","excludeFromContext":true}"#,
                PiVersion::V0_73
            ),
            "[]"
        );
    }

    #[test]
    fn summaries_and_custom() {
        assert_eq!(
            text(r#"{"role":"branchSummary","summary":"B"}"#),
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>"
        );
        assert_eq!(
            text(r#"{"role":"compactionSummary","summary":"C"}"#),
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\nC\n</summary>"
        );
        assert_eq!(
            llm(
                r#"{"role":"custom","content":[{"type":"image","data":"AA","mimeType":"image/png"}],"timestamp":4,"display":false}"#,
                PiVersion::V0_73
            ),
            r#"[{"role":"user","content":[{"type":"image","data":"AA","mimeType":"image/png"}],"timestamp":4}]"#
        );
        assert_eq!(
            llm(r#"{"role":"custom","content":"hi"}"#, PiVersion::V0_73),
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}]}]"#
        );
    }

    #[test]
    fn pass_through_and_drops() {
        assert_eq!(
            llm(r#"{"role":"user","extra":"kept"}"#, PiVersion::V0_73),
            r#"[{"role":"user","extra":"kept"}]"#
        );
        assert_eq!(llm(r#"{"role":"hookMessage"}"#, PiVersion::V0_73), "[]");
        assert_eq!(llm(r#"{"role":"weird"}"#, PiVersion::V0_87), "[]");
        assert_eq!(
            llm(r#"{"role":"system","content":"S"}"#, PiVersion::V0_73),
            "[]"
        );
        assert_eq!(
            llm(r#"{"role":"system","content":"S"}"#, PiVersion::V0_87),
            r#"[{"role":"system","content":"S"}]"#
        );
        assert_eq!(llm("42", PiVersion::V0_73), "[]");
    }

    #[test]
    fn js_string_conversion() {
        let s = |t: &str| to_js_string(Some(&parse(t).unwrap())).to_string_lossy();
        assert_eq!(s("[1,[2,null],\"a\"]"), "1,2,,a");
        assert_eq!(s("1e400"), "Infinity");
        assert_eq!(s("{}"), "[object Object]");
        assert_eq!(s("1.5"), "1.5");
    }
}
