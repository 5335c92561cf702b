//! The previous, whole-file implementation of the listing entry, kept as the reference the
//! streaming one ([`super::write_session_info`]) is tested against (unit tests, the `info`
//! fuzz target): every line parsed into a value, the texts joined in memory. It needs
//! several times the file's size in memory; use it on small inputs only.

use crate::PiVersion;
use crate::date;
use crate::json::{self, JsObject, JsString, JsValue, is_str};
use crate::llm::{to_js_string, to_js_string_throws};
use crate::read;

/// Builds the listing entry of a session file, or `None` when pi leaves it out of lists
/// (whole file in memory: the reference for [`super::write_session_info`]).
/// `mtime_ms` is the file's modification time, pi's last fallback for `modified`.
///
/// The result is `{id, cwd, name?, parentSessionPath?, created, modified, messageCount,
/// firstMessage, allMessagesText}` as `JSON.stringify` shows it (pi's `path` is left out).
pub fn session_info(bytes: &[u8], mtime_ms: f64, pi: PiVersion) -> Option<JsValue> {
    let values = listing_values(bytes, pi);
    let header = values.first()?;
    if !is_str(header.get("type"), "session") {
        return None;
    }
    let mut message_count: u64 = 0;
    let mut first_message: Option<Vec<u8>> = None;
    let mut all_messages: Vec<Vec<u8>> = Vec::new();
    let mut name: Option<JsValue> = None;
    let mut last_activity: Option<f64> = None;
    // 0.73.1 walks every value, header included; 0.87.1 skips the header it took.
    let skip = usize::from(pi.reads_like_0_87());
    for entry in &values[skip..] {
        if matches!(entry, JsValue::Null) {
            return None; // `entry.type` of null throws
        }
        if is_str(entry.get("type"), "session_info") {
            name = match entry.get("name") {
                None | Some(JsValue::Null) => None,
                Some(JsValue::String(s)) => {
                    // On the WTF-8 text: `trim` keeps lone surrogates.
                    let bytes = s.as_wtf8();
                    let start = read::trim_start(bytes);
                    let end = start + read::trim_end(&bytes[start..]);
                    (end > start)
                        .then(|| JsValue::String(json::JsString::concat(&[&bytes[start..end]])))
                }
                Some(_) => return None, // `name.trim` is not a function
            };
        }
        if !is_str(entry.get("type"), "message") {
            continue;
        }
        message_count += 1;
        let message = entry.get("message");
        let role = match message {
            None | Some(JsValue::Null) => return None, // `message.role` of null/undefined throws
            Some(m) => m.get("role"),
        };
        let message = message.expect("checked above");
        let with_content =
            matches!(role, Some(JsValue::String(_))) && message.get("content").is_some();
        let user_or_assistant = is_str(role, "user") || is_str(role, "assistant");
        if with_content && user_or_assistant {
            let activity = match message.get("timestamp") {
                Some(JsValue::Number(n)) => Some(*n),
                _ => {
                    let timestamp = entry.get("timestamp");
                    let string_only = !pi.reads_like_0_87();
                    if string_only && !matches!(timestamp, Some(JsValue::String(_))) {
                        None
                    } else {
                        Some(date::new_date_time(timestamp)).filter(|t| !t.is_nan())
                    }
                }
            };
            if let Some(t) = activity {
                last_activity = Some(js_max(last_activity.unwrap_or(0.0), t));
            }
        }
        if !with_content || !user_or_assistant {
            continue;
        }
        let text = text_content(message.get("content"))?.as_wtf8().to_vec();
        if text.is_empty() {
            continue;
        }
        if first_message.is_none() && is_str(role, "user") {
            first_message = Some(text.clone());
        }
        all_messages.push(text);
    }
    let header_time = match header.get("timestamp") {
        Some(JsValue::String(_)) => date::new_date_time(header.get("timestamp")),
        _ => f64::NAN,
    };
    let modified = match last_activity {
        Some(t) if t > 0.0 => date::time_clip(t),
        _ if !header_time.is_nan() => header_time,
        _ => mtime_ms,
    };
    let mut o = JsObject::new();
    if let Some(id) = header.get("id") {
        o.set("id", id.clone());
    }
    let cwd = match header.get("cwd") {
        Some(JsValue::String(s)) => JsValue::String(s.clone()),
        _ => JsValue::string(""),
    };
    o.set("cwd", cwd);
    if let Some(name) = name {
        o.set("name", name);
    }
    if let Some(parent) = header.get("parentSession") {
        o.set("parentSessionPath", parent.clone());
    }
    o.set(
        "created",
        iso_or_null(date::new_date_time(header.get("timestamp"))),
    );
    o.set("modified", iso_or_null(modified));
    o.set("messageCount", JsValue::Number(message_count as f64));
    let first = first_message.unwrap_or_else(|| b"(no messages)".to_vec());
    o.set(
        "firstMessage",
        JsValue::String(json::JsString::concat(&[&first])),
    );
    let joined = all_messages.join(&b' ');
    o.set(
        "allMessagesText",
        JsValue::String(json::JsString::concat(&[&joined])),
    );
    Some(JsValue::Object(o))
}

/// The parsed values pi's listing sees.
fn listing_values(bytes: &[u8], pi: PiVersion) -> Vec<JsValue> {
    if !pi.reads_like_0_87() {
        read::lines(bytes)
            .filter_map(|l| json::parse(&l.text).ok())
            .collect()
    } else {
        // readline: LF, CRLF and a lone CR end a line; no trim of the whole text; falsy
        // values are skipped.
        split_readline(bytes)
            .filter(|raw| read::trim_start(raw) < raw.len())
            .filter_map(|raw| json::parse(&String::from_utf8_lossy(raw)).ok())
            .filter(JsValue::is_truthy)
            .collect()
    }
}

fn split_readline(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            Some(_) => 1,
            None => usize::from(end < rest.len()),
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// `Math.max(a, b)` (NaN wins, as in JavaScript).
pub(super) fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The text of a message's `content` as pi's `extractTextContent` and omp's `textContent(content,
/// " ")` make it: a string as is, else the `text` of the text blocks joined with spaces (a
/// missing or `null` text empty, anything else made a string as `join` makes it); `None`
/// where they throw (content neither a string nor an array, a `null` block, a text that
/// cannot be made a string: [`to_js_string_throws`]).
pub(crate) fn text_content(content: Option<&JsValue>) -> Option<JsString> {
    match content? {
        JsValue::String(s) => Some(s.clone()),
        JsValue::Array(blocks) => {
            let mut texts: Vec<Vec<u8>> = Vec::new();
            for block in &blocks.0 {
                if matches!(block, JsValue::Null) {
                    return None;
                }
                if is_str(block.get("type"), "text") {
                    texts.push(match block.get("text") {
                        None | Some(JsValue::Null) => Vec::new(),
                        Some(text) if to_js_string_throws(text) => return None,
                        text => to_js_string(text).as_wtf8().to_vec(),
                    });
                }
            }
            Some(JsString::concat(&[&texts.join(&b' ')]))
        }
        _ => None,
    }
}

/// `Date.prototype.toJSON`: the ISO string, or `null` for an invalid date.
pub(crate) fn iso_or_null(t: f64) -> JsValue {
    if t.is_nan() {
        JsValue::Null
    } else {
        JsValue::string(date::to_iso_string(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(text: &str) -> String {
        session_info(text.as_bytes(), 946_684_800_000.0, PiVersion::V0_73)
            .map_or("null".into(), |v| json::to_string(&v))
    }

    #[test]
    fn i1_counts_every_message_and_takes_the_first_user_text() {
        let text = concat!(
            r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"toolResult","content":[]}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"timestamp":1735689605000}}"#,
            "\n",
            r#"{"type":"message","message":{"role":"assistant","content":"c"}}"#,
            "\n",
            r#"{"type":"session_info","name":"  n  "}"#
        );
        assert_eq!(
            info(text),
            r#"{"id":"s","cwd":"/p","name":"n","created":"2025-01-01T00:00:00.000Z","modified":"2025-01-01T00:00:05.000Z","messageCount":3,"firstMessage":"a b","allMessagesText":"a b c"}"#
        );
    }

    #[test]
    fn i2_errors_drop_the_session() {
        let header = r#"{"type":"session","id":"s","timestamp":"x"}"#;
        assert_eq!(info(&format!("{header}\nnull")), "null");
        assert_eq!(
            info(&format!(
                "{header}\n{{\"type\":\"message\",\"message\":null}}"
            )),
            "null"
        );
        assert_eq!(
            info(&format!(
                "{header}\n{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":{{}}}}}}"
            )),
            "null"
        );
        assert_eq!(info(r#"{"type":"label"}"#), "null");
    }

    #[test]
    fn i3_modified_falls_back_to_header_then_mtime() {
        assert!(
            info(r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z"}"#)
                .contains(r#""modified":"2025-01-01T00:00:00.000Z""#)
        );
        let out = info(r#"{"type":"session","timestamp":"bad"}"#);
        assert_eq!(
            out,
            r#"{"cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":0,"firstMessage":"(no messages)","allMessagesText":""}"#
        );
    }

    #[test]
    fn readline_splits_on_cr_too() {
        let lines: Vec<_> = split_readline(b"a\r\nb\rc\n\nd").collect();
        assert_eq!(lines, [&b"a"[..], b"b", b"c", b"", b"d"]);
    }
}
