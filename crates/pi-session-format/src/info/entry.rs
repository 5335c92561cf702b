//! What one line contributes to the listing entry (the body of `buildSessionInfo`'s loop and
//! of `getLastActivityTime` / `getMessageActivityTime`, for one parsed value), and the text a
//! message adds to `allMessagesText` (`extractTextContent`), written as `JSON.stringify`
//! escapes it, straight from the line's text.

use super::walk::{self, Elements, Members, Span};
use crate::PiVersion;
use crate::date;
use crate::json::{Content, JsValue, LineScanner, MessageScan, Role, write_string};
use crate::llm::{to_js_string, to_js_string_throws};

/// What a parsed value does to the listing.
#[derive(Debug, Default, Clone)]
pub(super) struct Facts {
    /// pi throws on it (`entry.type` of `null`, `message.role` of a missing message, content
    /// that is neither a string nor an array, a `null` block, a name without `trim`): the
    /// session is left out of lists.
    pub throws: bool,
    /// `type === "session"`.
    pub session: bool,
    /// `type === "session_info"`: the name is taken from this line.
    pub session_info: bool,
    /// `type === "message"`: counted.
    pub message: bool,
    /// The message's activity time (`getMessageActivityTime`), before `Math.max`.
    pub activity: Option<f64>,
    /// The message adds a non-empty text to `allMessagesText`.
    pub text: Option<Text>,
}

/// A non-empty text a message contributes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Text {
    /// The role is `user` (a candidate for `firstMessage`).
    pub user: bool,
    /// The `content` value in the line.
    pub content: Span,
}

/// The facts of one line, `None` when pi does not take the line as a value (not JSON, or a
/// falsy value, which pi 0.87.1 skips).
pub(super) fn classify(text: &str, scanner: &mut LineScanner, pi: PiVersion) -> Option<Facts> {
    let skeleton = scanner.scan(text.as_bytes()).ok()?;
    if !skeleton.object {
        if pi.reads_like_0_87() && skeleton.is_falsy {
            return None;
        }
        // 0.73.1: `entry.type` of `null` throws.
        return Some(Facts {
            throws: skeleton.is_null,
            ..Facts::default()
        });
    }
    let mut facts = Facts::default();
    let type_ = skeleton.type_;
    let kind = match type_.map(|(s, e)| &text.as_bytes()[s..e]) {
        Some(b"\"message\"") => Kind::Message,
        Some(b"\"session_info\"") => Kind::SessionInfo,
        Some(b"\"session\"") => Kind::Session,
        Some(raw) if raw.contains(&b'\\') => {
            if walk::is_string(text, type_, "message") {
                Kind::Message
            } else if walk::is_string(text, type_, "session_info") {
                Kind::SessionInfo
            } else if walk::is_string(text, type_, "session") {
                Kind::Session
            } else {
                Kind::Other
            }
        }
        _ => Kind::Other,
    };
    match kind {
        Kind::Other => {}
        Kind::Session => facts.session = true,
        Kind::SessionInfo => {
            facts.session_info = true;
            // `name?.trim()`: undefined, null and strings only.
            let name = walk::member(text, 0, "name", None);
            facts.throws = name.is_some_and(|(s, _)| !matches!(text.as_bytes()[s], b'"' | b'n'));
        }
        Kind::Message => {
            facts.message = true;
            message(text, skeleton.message.as_ref(), pi, &mut facts);
        }
    }
    Some(facts)
}

enum Kind {
    Message,
    SessionInfo,
    Session,
    Other,
}

/// The activity time and text of a `message` entry.
fn message(text: &str, scan: Option<&MessageScan>, pi: PiVersion, facts: &mut Facts) {
    let Some(scan) = scan else {
        facts.throws = true; // `message.role` of undefined
        return;
    };
    if scan.is_null {
        facts.throws = true; // `message.role` of null
        return;
    }
    // `typeof message.role === "string" && "content" in message`, then the role check.
    if !scan.is_object
        || scan.content == Content::Missing
        || !matches!(scan.role, Role::User | Role::Assistant | Role::Other)
    {
        return;
    }
    let (mut role, mut content, mut timestamp) = (None, None, None);
    let b = text.as_bytes();
    // One walk over the message; the content is read as it is passed.
    let mut members = Members::new(b, scan.start, None);
    while let Some((key, start)) = members.key() {
        let end = match &*walk::key(text, key) {
            b"content" => {
                let (end, verdict) = content_text(text, start);
                content = Some(((start, end), verdict));
                end
            }
            b"role" => {
                let end = walk::skip_value(b, start);
                role = Some((start, end));
                end
            }
            b"timestamp" => {
                let end = walk::skip_value(b, start);
                timestamp = Some((start, end));
                end
            }
            _ => walk::skip_value(b, start),
        };
        members.value_end(end);
    }
    let user = match scan.role {
        Role::User => true,
        Role::Assistant => false,
        _ if walk::is_string(text, role, "user") => true,
        _ if walk::is_string(text, role, "assistant") => false,
        _ => return,
    };
    let Some((content, verdict)) = content else {
        return;
    };
    facts.activity = match timestamp {
        Some(span) if matches!(b[span.0], b'-' | b'0'..=b'9') => match walk::value(text, span) {
            JsValue::Number(n) => Some(n),
            _ => None,
        },
        _ => {
            let hint = Some((scan.start, scan.end));
            let entry_time = walk::member(text, 0, "timestamp", hint);
            // 0.73.1: `typeof entry.timestamp === "string"` first.
            if !pi.reads_like_0_87() && entry_time.is_none_or(|(s, _)| b[s] != b'"') {
                None
            } else {
                let value = entry_time.map(|span| walk::value(text, span));
                Some(date::new_date_time(value.as_ref())).filter(|t| !t.is_nan())
            }
        }
    };
    match verdict {
        Err(Throws) => facts.throws = true,
        Ok(false) => {}
        Ok(true) => facts.text = Some(Text { user, content }),
    }
}

/// pi throws.
struct Throws;

/// The end of the `content` value starting at `start`, and whether `extractTextContent`
/// gives a non-empty text for it (`Err` where it throws).
fn content_text(text: &str, start: usize) -> (usize, Result<bool, Throws>) {
    let b = text.as_bytes();
    match b[start] {
        b'"' => {
            let end = walk::skip_string(b, start);
            (end, Ok(end - start > 2))
        }
        b'[' => {
            // The texts of the text blocks joined with " ": empty only for no text block
            // or a single empty one.
            let (mut texts, mut non_empty, mut throws) = (0, false, false);
            let mut blocks = Elements::new(b, start);
            while let Some(at) = blocks.start() {
                let end = match b[at] {
                    b'{' => {
                        let (end, block) = text_block(text, at);
                        if let Some(t) = block {
                            texts += 1;
                            non_empty |= t.is_some_and(|t| !text_is_empty(text, t));
                            // `join` of a text that cannot be made a string
                            throws |= t.is_some_and(|t| {
                                matches!(b[t.0], b'{' | b'[')
                                    && to_js_string_throws(&walk::value(text, t))
                            });
                        }
                        end
                    }
                    b'n' => {
                        throws = true; // `block.type` of null
                        walk::skip_value(b, at)
                    }
                    _ => walk::skip_value(b, at),
                };
                blocks.value_end(end);
            }
            let verdict = if throws {
                Err(Throws)
            } else {
                Ok(texts > 1 || non_empty)
            };
            (blocks.end(), verdict)
        }
        // `content.filter` is not a function
        _ => (walk::skip_value(b, start), Err(Throws)),
    }
}

/// The end of the block object starting at `start` and, for a block with `type: "text"`,
/// `Some(its text member)`.
fn text_block(text: &str, start: usize) -> (usize, Option<Option<Span>>) {
    let b = text.as_bytes();
    let (mut type_, mut value) = (None, None);
    let mut members = Members::new(b, start, None);
    while let Some((key, at)) = members.key() {
        let end = walk::skip_value(b, at);
        match &*walk::key(text, key) {
            b"type" => type_ = Some((at, end)),
            b"text" => value = Some((at, end)),
            _ => {}
        }
        members.value_end(end);
    }
    let block = walk::is_string(text, type_, "text").then_some(value);
    (members.end(), block)
}

/// Whether `String(block.text)` as `join` writes it is empty.
fn text_is_empty(text: &str, span: Span) -> bool {
    match text.as_bytes()[span.0] {
        b'"' => span.1 - span.0 <= 2,
        b'n' => true,
        b'[' => to_js_string(Some(&walk::value(text, span))).is_empty(),
        _ => false,
    }
}

/// Appends the text of `content` (`extractTextContent`) to `out` as the inside of a
/// `JSON.stringify` string (escaped, without quotes).
pub(super) fn write_text(text: &str, content: Span, out: &mut Vec<u8>) {
    let b = text.as_bytes();
    match b[content.0] {
        b'"' => write_string_value(text, content, out),
        b'[' => {
            let mut first = true;
            let mut blocks = Elements::new(b, content.0);
            while let Some(at) = blocks.start() {
                if b[at] != b'{' {
                    blocks.value_end(walk::skip_value(b, at));
                    continue;
                }
                let (end, block) = text_block(text, at);
                blocks.value_end(end);
                let Some(value) = block else {
                    continue;
                };
                if !first {
                    out.push(b' ');
                }
                first = false;
                match value {
                    None => {}
                    Some(span) => match b[span.0] {
                        b'"' => write_string_value(text, span, out),
                        b'n' => {}
                        _ => {
                            let s = to_js_string(Some(&walk::value(text, span)));
                            write_escaped(s.as_wtf8(), out);
                        }
                    },
                }
            }
        }
        _ => {}
    }
}

/// A JSON string value as the inside of the string `JSON.stringify` writes for it: its raw
/// text when its only escapes are those `JSON.stringify` writes (valid JSON has no raw quote,
/// backslash or control character, and valid UTF-8 no lone surrogate), else decoded and
/// escaped again.
fn write_string_value(text: &str, span: Span, out: &mut Vec<u8>) {
    let raw = &text.as_bytes()[span.0 + 1..span.1 - 1];
    if stringify_escapes_only(raw) {
        out.extend_from_slice(raw);
    } else if let Some(s) = walk::string_wtf8(text, span) {
        write_escaped(&s, out);
    }
}

/// Whether the inside of a valid JSON string has only the escapes `JSON.stringify` writes
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx` for the other control
/// characters and `\udxxx` for lone surrogates, lowercase): then it is its own output.
fn stringify_escapes_only(raw: &[u8]) -> bool {
    let hex = |at: usize| -> Option<u16> {
        let digits = raw.get(at..at + 4)?;
        if digits.iter().any(u8::is_ascii_uppercase) {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'\\', &raw[i..]) {
        let at = i + k;
        i = at + 2;
        match raw.get(at + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => {}
            Some(b'u') => {
                i = at + 6;
                match hex(at + 2) {
                    Some(0x08 | 0x09 | 0x0A | 0x0C | 0x0D) | None => return false,
                    Some(0..0x20 | 0xDC00..0xE000) => {}
                    // A high surrogate is lone unless a low one follows.
                    Some(0xD800..0xDC00) => {
                        let low = raw.get(i..i + 2) == Some(b"\\u")
                            && hex(i + 2).is_some_and(|u| (0xDC00..0xE000).contains(&u));
                        if low {
                            return false;
                        }
                    }
                    Some(_) => return false,
                }
            }
            _ => return false,
        }
    }
    true
}

/// `s` (WTF-8) escaped as `JSON.stringify` does, without the quotes.
pub(super) fn write_escaped(s: &[u8], out: &mut Vec<u8>) {
    let at = out.len();
    write_string(out, s);
    out.pop();
    out.copy_within(at + 1.., at);
    out.pop();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_stringify_escapes_are_copied() {
        for canonical in [
            r#"a\"b\\c\n\t\r\b\f"#,
            r"\u0000\u001f\u000b",
            r"\ud800x\udc00",
            r"\ud83d",
        ] {
            assert!(stringify_escapes_only(canonical.as_bytes()), "{canonical}");
        }
        for other in [
            r"\/",
            r"\u0041",
            r"\u000a",
            r"\u001F",
            r"\ud83d\ude00",
            r"\uD800",
            r"\u00e9",
        ] {
            assert!(!stringify_escapes_only(other.as_bytes()), "{other}");
        }
    }
}
