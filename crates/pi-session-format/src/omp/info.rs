//! omp's listing entry of a session (`scanSessionFile` in omp 18.3.4's `session-listing.ts`,
//! rule O15): what `omp --resume` and `SessionManager.list()` show for a file, written as
//! `JSON.stringify` shows it without `path`: `{id, cwd, title?, parentSessionPath?, created,
//! modified, messageCount, assistantTurns, size, firstMessage, allMessagesText, status}`, or
//! `null` when omp leaves the file out.
//!
//! Where it differs from pi's listing ([`crate::info`], which reads every line of the file):
//!
//! - omp reads two windows of the raw file, never the session: the first 4096 bytes and the
//!   last 32,768, each decoded on its own (`TextDecoder`: a leading BOM dropped, a character
//!   cut by the window's edge a U+FFFD). Only the values complete in the first window count;
//!   whatever lies between the windows is never read, except by one line-by-line scan for an
//!   assistant message when neither window shows one (`hasAssistantTurn`).
//! - The first window is parsed with Bun's JSONL parser (`parseJsonlLenient`: values separated
//!   by whitespace holding a newline, a value may span lines, a line that is not JSON skipped
//!   up to the next newline after the last value, a value cut by the window's end left out).
//! - The header is the first value, or the second after a title slot (any first value of type
//!   `title`: the slot's title, when not blank, replaces the header's; a blank one hides it);
//!   failing that, the first line that is not a slot is searched as text for `"type"`, `"id"`,
//!   `"cwd"`, … (`extractStringProperty`). No header: `null`.
//! - `title` is the header's, else the `shortSummary` of the last compaction in the window;
//!   there is no `session_info` name.
//! - `messageCount` and `assistantTurns` are the larger of the parsed count and a count of
//!   `"type":"message"` / `"role":"assistant"` markers in the text of the windows (which counts
//!   a cut entry, and strings that merely look like markers).
//! - `firstMessage` is the first user text of the parsed entries, else the first `"content"` or
//!   `"text"` string found after a `"role"` marker in the first window; `allMessagesText` only
//!   the texts of the first window's user and assistant messages (`textContent`).
//! - `modified` is the file's modification time, `size` its length, `status` the role and stop
//!   reason of the last message line in the last window (`deriveSessionStatus`).
//! - `null` where omp throws: a `null` value in the first window, a user or assistant message
//!   whose content is neither a string nor an array, a `null` content block, a block `text`
//!   that cannot be made a string (an object with its own `toString` member).
//!
//! Bun's JSON parser, `TextDecoder`, `String.prototype.trim` and `JSON.parse` of string
//! fragments are reproduced on UTF-8 text: every character the heuristics search for is ASCII,
//! so byte offsets stand for UTF-16 indices; strings decoded from escapes keep lone surrogates
//! (WTF-8, [`JsString`]).

use crate::date;
use crate::info::lines::Source;
use crate::info::oracle::{iso_or_null, text_content};
use crate::json::{self, Cursor, JsString, JsValue, LineScanner, Role, is_str};
use crate::read;
use crate::session::ReadAt;
use rayon::prelude::*;
use std::io::{self, Write};

/// The first window (`SESSION_LIST_PREFIX_BYTES`).
const PREFIX_BYTES: usize = 4096;

/// The last window (`SESSION_LIST_SUFFIX_BYTES`).
const SUFFIX_BYTES: usize = 32_768;

/// The pieces the whole-file scan for an assistant message reads as one task.
const PIECE: usize = 1 << 20;

/// Writes omp's listing entry of a session file (see the module documentation), or `null`;
/// no newline follows. `bytes` is the whole file (its length is the entry's `size`),
/// `mtime_ms` its modification time (`modified`).
///
/// With `read_at` (positioned reads of the file, as [`crate::info::write_session_info`] takes
/// them) only the two windows are read, and the whole file only by the scan for an assistant
/// message when neither window has one, through small buffers; `bytes` is then touched only
/// where a read fails.
pub fn write_info(
    bytes: &[u8],
    read_at: Option<&ReadAt<'_>>,
    mtime_ms: f64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let source = Source {
        bytes,
        read_at,
        region: 0..bytes.len(),
        cr_ends_lines: true,
    };
    out.write_all(&entry(&source, mtime_ms))
}

/// [`write_info`] into a vector, from the bytes alone (the conformance protocol, tests).
pub fn info_json(bytes: &[u8], mtime_ms: f64) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a vector cannot fail.
    let _ = write_info(bytes, None, mtime_ms, &mut out);
    out
}

/// The entry as `JSON.stringify` writes it, or `null`.
fn entry(source: &Source<'_>, mtime_ms: f64) -> Vec<u8> {
    let size = source.bytes.len();
    let window = |at: usize, len: usize| {
        let mut raw = vec![0; len];
        source.read(&mut raw, at);
        decode(&raw)
    };
    let content = window(0, size.min(PREFIX_BYTES));
    let tail_len = size.min(SUFFIX_BYTES);
    let suffix = window(size - tail_len, tail_len);
    match Listing::of(&content, &suffix, || has_assistant_turn(source)) {
        Some(listing) => listing.to_json(size, mtime_ms),
        None => b"null".to_vec(),
    }
}

/// `new TextDecoder("utf-8").decode(bytes)`: a leading BOM dropped, invalid UTF-8 replaced
/// (maximal subparts, as `String::from_utf8_lossy` does).
fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// What `scanSessionFile` computes, before it is written.
#[derive(Debug)]
struct Listing {
    header: Header,
    title: Option<JsString>,
    message_count: usize,
    assistant_turns: usize,
    first_message: JsString,
    all_messages_text: JsString,
    status: &'static str,
}

impl Listing {
    /// The listing of the windows `content` (the first) and `suffix` (the last), `None` where
    /// omp returns `undefined`; `has_assistant_turn` scans the whole file, asked only when
    /// neither window shows an assistant message.
    fn of(
        content: &str,
        suffix: &str,
        has_assistant_turn: impl FnOnce() -> bool,
    ) -> Option<Listing> {
        let entries = parse_jsonl_lenient(content);
        let header = parse_header(content, &entries)?;
        let mut parsed_messages = 0;
        let mut assistant_turns = 0;
        let mut first_message: Option<JsString> = None;
        let mut all_messages: Vec<JsString> = Vec::new();
        let mut short_summary = None;
        for entry in entries.iter().skip(1) {
            // `entry.type` of `null` throws; other values that are not objects have no members.
            if matches!(entry, JsValue::Null) {
                return None;
            }
            if is_str(entry.get("type"), "compaction")
                && let Some(JsValue::String(s)) = entry.get("shortSummary")
            {
                short_summary = Some(s.clone());
            }
            let message = match entry.get("message") {
                Some(m) if is_str(entry.get("type"), "message") && m.is_truthy() => m,
                _ => continue,
            };
            parsed_messages += 1;
            let role = message.get("role");
            let user = is_str(role, "user");
            if is_str(role, "assistant") {
                assistant_turns += 1;
            } else if !user {
                continue;
            }
            let text = text_content(message.get("content"))?;
            if !text.is_empty() {
                if user && first_message.is_none() {
                    first_message = Some(text.clone());
                }
                all_messages.push(text);
            }
        }
        let first_message = first_message
            .or_else(|| first_display_message(content))
            .unwrap_or_default();
        let message_count = parsed_messages.max(count_markers(content, Marker::Message));
        let mut assistant_turns = assistant_turns
            .max(count_markers(content, Marker::Assistant))
            .max(count_markers(suffix, Marker::Assistant));
        if assistant_turns == 0 && has_assistant_turn() {
            assistant_turns = 1;
        }
        let all_messages_text = if all_messages.is_empty() {
            first_message.clone()
        } else {
            let parts: Vec<&[u8]> = all_messages.iter().map(JsString::as_wtf8).collect();
            JsString::concat(&[&parts.join(&b' ')])
        };
        Some(Listing {
            title: header.title.clone().or(short_summary),
            header,
            message_count,
            assistant_turns,
            first_message,
            all_messages_text,
            status: session_status(suffix),
        })
    }

    /// `JSON.stringify` of the entry without `path`.
    fn to_json(&self, size: usize, mtime_ms: f64) -> Vec<u8> {
        let mut o = Vec::new();
        let member = |o: &mut Vec<u8>, key: &str| {
            o.push(if o.is_empty() { b'{' } else { b',' });
            json::write_string(o, key.as_bytes());
            o.push(b':');
        };
        let h = &self.header;
        member(&mut o, "id");
        json::write_string(&mut o, h.id.as_wtf8());
        member(&mut o, "cwd");
        json::write_string(&mut o, h.cwd.as_ref().map_or(&b""[..], JsString::as_wtf8));
        if let Some(title) = &self.title {
            member(&mut o, "title");
            json::write_string(&mut o, title.as_wtf8());
        }
        if let Some(parent) = &h.parent_session {
            member(&mut o, "parentSessionPath");
            json::write_string(&mut o, parent.as_wtf8());
        }
        // `new Date(header.timestamp ?? "")`.
        let created = h.timestamp.as_ref().map_or(f64::NAN, |t| {
            date::new_date_time(Some(&JsValue::String(t.clone())))
        });
        member(&mut o, "created");
        json::write_value(&mut o, &iso_or_null(created));
        member(&mut o, "modified");
        json::write_value(&mut o, &iso_or_null(date::time_clip(mtime_ms)));
        member(&mut o, "messageCount");
        json::write_number(&mut o, self.message_count as f64);
        member(&mut o, "assistantTurns");
        json::write_number(&mut o, self.assistant_turns as f64);
        member(&mut o, "size");
        json::write_number(&mut o, size as f64);
        member(&mut o, "firstMessage");
        if self.first_message.is_empty() {
            json::write_string(&mut o, b"(no messages)");
        } else {
            json::write_string(&mut o, self.first_message.as_wtf8());
        }
        member(&mut o, "allMessagesText");
        json::write_string(&mut o, self.all_messages_text.as_wtf8());
        member(&mut o, "status");
        json::write_string(&mut o, self.status.as_bytes());
        o.push(b'}');
        o
    }
}

// ---------------------------------------------------------------------------------------
// Bun's JSONL parser

/// How [`parse_chunk`] stopped (`Bun.JSONL.parseChunk`'s `done` and `error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkEnd {
    /// Every value was read (`done: true`).
    Done,
    /// The text ends inside a value (`done: false`, no error).
    Incomplete,
    /// A value is not JSON, or two values share a line (`error`).
    Error,
}

/// `Bun.JSONL.parseChunk(text)` (JavaScriptCore's streaming JSON parse): the values, where
/// the last one ends (`read`), and how it stopped. Values are separated by JSON whitespace
/// that holds a newline; a value may span lines.
fn parse_chunk(text: &str) -> (Vec<JsValue>, usize, ChunkEnd) {
    let b = text.as_bytes();
    let (mut values, mut pos, mut read) = (Vec::new(), 0, 0);
    loop {
        let mut newline = false;
        while let Some(&c) = b
            .get(pos)
            .filter(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        {
            newline |= c == b'\n';
            pos += 1;
        }
        if pos == b.len() {
            return (values, read, ChunkEnd::Done);
        }
        if !values.is_empty() && !newline {
            return (values, read, ChunkEnd::Error);
        }
        let rest = &text[pos..];
        let mut cursor = Cursor::new(rest);
        match cursor.value() {
            Ok(value) => {
                values.push(value);
                pos += cursor.position();
                read = pos;
            }
            Err(e) if e.offset >= rest.len() => return (values, read, ChunkEnd::Incomplete),
            Err(_) => return (values, read, ChunkEnd::Error),
        }
    }
}

/// `parseJsonlLenient(text)` of pi-utils: [`parse_chunk`] again after each error, from the
/// line after the last value read (or after the error's line when none was).
fn parse_jsonl_lenient(text: &str) -> Vec<JsValue> {
    let mut entries = Vec::new();
    let mut buffer = text;
    while !buffer.is_empty() {
        let (values, read, end) = parse_chunk(buffer);
        entries.extend(values);
        if end == ChunkEnd::Error {
            match memchr::memchr(b'\n', &buffer.as_bytes()[read..]) {
                Some(i) => buffer = &buffer[read + i + 1..],
                None => break,
            }
            continue;
        }
        if read == 0 {
            break;
        }
        buffer = &buffer[read..];
        if end == ChunkEnd::Done {
            break;
        }
    }
    entries
}

// ---------------------------------------------------------------------------------------
// The header

/// `SessionListHeader`.
#[derive(Debug)]
struct Header {
    id: JsString,
    cwd: Option<JsString>,
    title: Option<JsString>,
    parent_session: Option<JsString>,
    timestamp: Option<JsString>,
}

/// A title slot's say on the title (`titleOverride`): `None` no slot (the header's own title),
/// `Some(None)` a blank one (no title), `Some(Some(t))` its title.
type TitleOverride = Option<Option<JsString>>;

/// `normalizeTitleOverride`: a title whose `trim()` is empty hides the header's.
fn normalize_title(title: Option<JsString>) -> TitleOverride {
    title.map(|t| (!trim(t.as_wtf8()).is_empty()).then_some(t))
}

/// `String.prototype.trim` of a string's WTF-8 bytes (a lone surrogate is no whitespace).
fn trim(s: &[u8]) -> &[u8] {
    let start = read::trim_start(s);
    &s[start..start + read::trim_end(&s[start..])]
}

/// `parseSessionListHeader(content, entries)`.
fn parse_header(content: &str, entries: &[JsValue]) -> Option<Header> {
    let first = entries.first();
    let slot = first.is_some_and(|f| is_str(f.get("type"), "title"));
    let slot_title = normalize_title(match first.and_then(|f| f.get("title")) {
        Some(JsValue::String(t)) if slot => Some(t.clone()),
        _ => None,
    });
    if let Some(header) = header_of_record(entries.get(usize::from(slot)), &slot_title) {
        return Some(header);
    }
    let mut slot_title = None;
    let mut first_line = true;
    for raw in content.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let line = trim(raw.as_bytes());
        if line.is_empty() {
            continue;
        }
        // Trimming removed whole characters only: the rest is still UTF-8.
        let line = std::str::from_utf8(line).unwrap_or_default();
        if first_line && string_property(line, "type", 0).is_some_and(|t| t.as_wtf8() == b"title") {
            slot_title = normalize_title(string_property(line, "title", 0));
            first_line = false;
            continue;
        }
        return header_of_line(line, &slot_title);
    }
    None
}

/// `sessionListHeaderFromRecord(record, titleOverride)`.
fn header_of_record(record: Option<&JsValue>, slot_title: &TitleOverride) -> Option<Header> {
    let record = record?;
    let string = |key: &str| match record.get(key) {
        Some(JsValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    if !is_str(record.get("type"), "session") {
        return None;
    }
    Some(Header {
        id: string("id")?,
        cwd: string("cwd"),
        title: match slot_title {
            Some(title) => title.clone(),
            None => string("title"),
        },
        parent_session: string("parentSession"),
        timestamp: string("timestamp"),
    })
}

/// `parseSessionListHeaderLine(line, titleOverride)`: the header's members found as text.
fn header_of_line(line: &str, slot_title: &TitleOverride) -> Option<Header> {
    if string_property(line, "type", 0)?.as_wtf8() != b"session" {
        return None;
    }
    let id = string_property(line, "id", 0).filter(|id| !id.is_empty())?;
    Some(Header {
        id,
        cwd: string_property(line, "cwd", 0),
        title: match slot_title {
            Some(title) => title.clone(),
            None => string_property(line, "title", 0),
        },
        parent_session: string_property(line, "parentSession", 0),
        timestamp: string_property(line, "timestamp", 0),
    })
}

// ---------------------------------------------------------------------------------------
// Text heuristics

/// `source.indexOf(pattern, from)` on bytes.
fn index_of(source: &[u8], pattern: &[u8], from: usize) -> Option<usize> {
    let from = from.min(source.len());
    memchr::memmem::find(&source[from..], pattern).map(|i| from + i)
}

/// `extractStringProperty(source, name, start)`: the string after the first `"name"` from
/// `start` and the next `:`, up to its closing quote or the end of `source`, decoded.
fn string_property(source: &str, name: &str, start: usize) -> Option<JsString> {
    let b = source.as_bytes();
    let key = format!("\"{name}\"");
    let at = index_of(b, key.as_bytes(), start)?;
    let colon = index_of(b, b":", at + name.len() + 2)?;
    let mut value = colon + 1;
    while b
        .get(value)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        value += 1;
    }
    if b.get(value) != Some(&b'"') {
        return None;
    }
    let start = value + 1;
    let mut escaped = false;
    for (i, &c) in b.iter().enumerate().skip(start) {
        if escaped {
            escaped = false;
        } else if c == b'\\' {
            escaped = true;
        } else if c == b'"' {
            return Some(decode_fragment(&source[start..i]));
        }
    }
    Some(decode_fragment(&source[start..]))
}

/// `decodeJsonStringFragment(value)`: one trailing backslash dropped, then `JSON.parse` of the
/// fragment in quotes, or, where that throws, five escapes replaced one after the other.
fn decode_fragment(value: &str) -> JsString {
    let safe = value.strip_suffix('\\').unwrap_or(value);
    if let Ok(JsValue::String(s)) = json::parse(&format!("\"{safe}\"")) {
        return s;
    }
    JsString::from(
        safe.replace("\\n", "\n")
            .replace("\\r", "\r")
            .replace("\\t", "\t")
            .replace("\\\"", "\"")
            .replace("\\\\", "\\"),
    )
}

/// What [`count_markers`] counts.
#[derive(Debug, Clone, Copy)]
enum Marker {
    /// `"type"` markers whose value is `message`.
    Message,
    /// `"role"` markers whose value is `assistant`.
    Assistant,
}

/// `countRoleMarkers(content, role)`.
fn count_markers(content: &str, marker: Marker) -> usize {
    let (name, want): (&str, &[u8]) = match marker {
        Marker::Message => ("type", b"message"),
        Marker::Assistant => ("role", b"assistant"),
    };
    let key = format!("\"{name}\"");
    let b = content.as_bytes();
    let (mut count, mut index) = (0, 0);
    while index < b.len() {
        let Some(at) = index_of(b, key.as_bytes(), index) else {
            break;
        };
        let Some(colon) = index_of(b, b":", at + key.len()) else {
            break;
        };
        if string_property(content, name, at).is_some_and(|v| v.as_wtf8() == want) {
            count += 1;
        }
        index = colon + 1;
    }
    count
}

/// `extractFirstDisplayMessageFromPrefix(content)`: after each `"role"` marker, the first
/// `"content"` (else `"text"`) string; the first for a user role, else the first for a
/// developer or assistant role.
fn first_display_message(content: &str) -> Option<JsString> {
    let b = content.as_bytes();
    let mut fallback = None;
    let mut index = index_of(b, b"\"role\"", 0);
    while let Some(at) = index {
        let role = string_property(content, "role", at);
        let text = string_property(content, "content", at)
            .or_else(|| string_property(content, "text", at));
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            let role = role.as_ref().map(JsString::as_wtf8);
            if role == Some(b"user") {
                return Some(text);
            }
            if fallback.is_none() && matches!(role, Some(b"developer" | b"assistant")) {
                fallback = Some(text);
            }
        }
        index = index_of(b, b"\"role\"", at + 6);
    }
    fallback
}

// ---------------------------------------------------------------------------------------
// Status and the whole-file scan

/// `deriveSessionStatus(suffix)`: the last line of the window that starts with `{`, is JSON,
/// and is a message entry decides.
fn session_status(suffix: &str) -> &'static str {
    for line in suffix.rsplit('\n') {
        if !line.starts_with('{') {
            continue;
        }
        let Ok(entry) = json::parse(line) else {
            continue;
        };
        match entry.get("message") {
            Some(message) if is_str(entry.get("type"), "message") && message.is_truthy() => {
                return message_status(message);
            }
            _ => {}
        }
    }
    "unknown"
}

/// `statusFromTailMessage(message)`.
fn message_status(message: &JsValue) -> &'static str {
    let role = message.get("role");
    if is_str(role, "assistant") {
        let stop = message.get("stopReason");
        if is_str(stop, "error") {
            "error"
        } else if is_str(stop, "aborted") {
            "aborted"
        } else if is_str(stop, "length") {
            "interrupted"
        } else {
            match message.get("content") {
                Some(JsValue::Array(blocks))
                    if blocks.0.iter().any(|b| {
                        matches!(b, JsValue::Object(_)) && is_str(b.get("type"), "toolCall")
                    }) =>
                {
                    "interrupted"
                }
                _ => "complete",
            }
        }
    } else if is_str(role, "toolResult") {
        "interrupted"
    } else if is_str(role, "user") {
        "pending"
    } else {
        "unknown"
    }
}

/// `FileSessionStorage.hasAssistantTurn(path)`: whether a line of the file (split as
/// `readLines()` splits, at LF, CRLF and lone CR) is a message entry with an assistant role;
/// pieces of the file on every core, each read through a small buffer.
fn has_assistant_turn(source: &Source<'_>) -> bool {
    let len = source.bytes.len();
    (0..len)
        .step_by(PIECE)
        .collect::<Vec<_>>()
        .into_par_iter()
        .any(|start| {
            let (mut buf, mut scanner, mut found) = (Vec::new(), LineScanner::default(), false);
            source.lines(start..(start + PIECE).min(len), &mut buf, &mut |_, raw| {
                found = found || is_assistant_line(raw, &mut scanner);
            });
            found
        })
}

/// `isAssistantMessageLine(line)`: it starts with `{`, is JSON, has `type: "message"` and a
/// message whose `role` is `"assistant"`.
fn is_assistant_line(raw: &[u8], scanner: &mut LineScanner) -> bool {
    if raw.first() != Some(&b'{') {
        return false;
    }
    let Some((text, _)) = read::decode(raw) else {
        return false;
    };
    let Ok(skeleton) = scanner.scan(text.as_bytes()) else {
        return false;
    };
    let value = |(start, end): (usize, usize)| json::parse(&text[start..end]).ok();
    let is_message = skeleton.type_.is_some_and(|span| {
        &text.as_bytes()[span.0..span.1] == b"\"message\""
            || value(span).is_some_and(|t| is_str(Some(&t), "message"))
    });
    let Some(message) = skeleton.message.filter(|_| is_message && skeleton.object) else {
        return false;
    };
    match message.role {
        Role::Assistant => true,
        Role::Other => {
            value((message.start, message.end)).is_some_and(|m| is_str(m.get("role"), "assistant"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    //! Every expected output here is omp's (`omp-ref.ts info FILE`, or for the JSONL parser
    //! `parseJsonlLenient` of pi-utils run by the pinned Bun), never written by hand.

    use super::*;

    /// The `--mtime` of the corpus and of `omp-ref.ts` (2000-01-01).
    const MTIME: f64 = 946_684_800_000.0;

    fn check(bytes: &[u8], expected: &str) {
        let got = info_json(bytes, MTIME);
        assert_eq!(String::from_utf8_lossy(&got), expected);
    }

    #[test]
    fn jsonl_is_parsed_as_bun_parses_it() {
        let cases: [(&str, &str); 9] = [
            ("{\"a\":1}\n{bad}\n{\"c\":3}\n", r#"[{"a":1},{"c":3}]"#),
            ("{\"a\":1} x {\"d\":4}\n{\"c\":3}\n", r#"[{"a":1},{"c":3}]"#),
            ("{\"a\":\n1}\n{\"c\":3}\n", r#"[{"a":1},{"c":3}]"#),
            ("{\"a\":1}\r{\"c\":3}\n{\"e\":5}", r#"[{"a":1},{"e":5}]"#),
            (
                "false\n1\n\"s\"\nnull\n{\"c\":3}",
                r#"[false,1,"s",null,{"c":3}]"#,
            ),
            ("{\"a\":1}\n{\"b\":", r#"[{"a":1}]"#),
            ("{\"a\":1}{\"b\":2}\n{\"c\":3}", r#"[{"a":1},{"c":3}]"#),
            (
                " {\"a\":1}\n\t{\"b\":2}\r\n\n{\"c\":\"\\ud800\"}",
                r#"[{"a":1},{"b":2},{"c":"\ud800"}]"#,
            ),
            ("\u{a0}{\"a\":1}\n{\"b\":2}", r#"[{"b":2}]"#),
        ];
        for (text, expected) in cases {
            let values = JsValue::Array(json::JsArray(parse_jsonl_lenient(text)));
            assert_eq!(json::to_string(&values), expected, "{text:?}");
        }
    }

    #[test]
    fn a_file_that_is_only_a_title_slot_is_left_out() {
        check(
            b"{\"type\":\"title\",\"v\":1,\"title\":\"T\",\"updatedAt\":\"u\",\"pad\":\"  \"}\n",
            r#"null"#,
        );
    }

    #[test]
    fn a_header_that_is_not_json_is_read_as_text() {
        check(
            b"{\"type\":\"session\",\"id\":\"a\\\\\",\"cwd\":\"c\\\\\\\"d\\u00e9\",\"parentSession\":\"/p\",\"timestamp\":\"2026-01-01T00:00:00Z\",}\n",
            r#"{"id":"a\\","cwd":"c\\\"dé","parentSessionPath":"/p","created":"2026-01-01T00:00:00.000Z","modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":0,"size":108,"firstMessage":"(no messages)","allMessagesText":"","status":"unknown"}"#,
        );
    }

    #[test]
    fn a_null_block_leaves_the_file_out() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[\"a\",null]}}\n",
            r#"null"#,
        );
    }

    #[test]
    fn a_null_value_leaves_the_file_out() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\nnull\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
            r#"null"#,
        );
    }

    #[test]
    fn an_empty_file_is_left_out() {
        check(b"", r#"null"#);
    }

    #[test]
    fn an_empty_id_in_a_text_header_is_no_header() {
        check(
            b"{\"type\":\"session\",\"id\":\"\",\"cwd\":\"/w\",}\n",
            r#"null"#,
        );
    }

    #[test]
    fn blank_slot_hides_header_title_short_summary_is_the_title() {
        check(
            b"{\"type\":\"title\",\"v\":1,\"title\":\"  \",\"updatedAt\":\"u\",\"pad\":\"\"}\n{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/w\",\"title\":\"HT\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n{\"type\":\"compaction\",\"shortSummary\":\"first\"}\n{\"type\":\"compaction\",\"shortSummary\":\"last\"}\n{\"type\":\"compaction\",\"shortSummary\":5}\n",
            r#"{"id":"s","cwd":"/w","title":"last","created":"2026-01-01T00:00:00.000Z","modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":0,"size":276,"firstMessage":"(no messages)","allMessagesText":"","status":"unknown"}"#,
        );
    }

    #[test]
    fn content_that_is_not_iterable_leaves_the_file_out() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":{\"text\":\"x\"}}}\n",
            r#"null"#,
        );
    }

    #[test]
    fn cr_separated_values_are_one_bad_line() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\r{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\r{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"b\"}}",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":2,"assistantTurns":1,"size":150,"firstMessage":"a","allMessagesText":"a","status":"unknown"}"#,
        );
    }

    #[test]
    fn escaped_markers_in_strings_do_not_count() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"custom\",\"data\":\"\\\"role\\\":\\\"assistant\\\" \\\"type\\\":\\\"message\\\" \\\"role\\\": \\\"user\\\", \\\"content\\\": \\\"fake\\\"\"}\n{\"type\":\"custom\",\"data\":\"x \\\"type\\\" : \\\"message\\\" \\\"role\\\":\\\"developer\\\",\\\"content\\\":\\\"dev\\\"\"}\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":0,"size":236,"firstMessage":"(no messages)","allMessagesText":"","status":"unknown"}"#,
        );
    }

    #[test]
    fn lines_that_are_not_json_are_skipped_but_their_markers_count() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"one\"}} {\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":\"two\"}}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"three\"}}\n{\"type\":\"message\",\n\"message\":{\"role\":\"user\",\"content\":\"spans lines\"}}\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":4,"assistantTurns":1,"size":288,"firstMessage":"one","allMessagesText":"one three spans lines","status":"pending"}"#,
        );
    }

    #[test]
    fn lone_surrogates_survive() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\\ud83d\",\"cwd\":\"\\udc00\",\"title\":\"\\ud800\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\\ud83d!\"}}\n",
            r#"{"id":"s\ud83d","cwd":"\udc00","title":"\ud800","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":0,"size":131,"firstMessage":"\ud83d!","allMessagesText":"\ud83d!","status":"pending"}"#,
        );
    }

    #[test]
    fn markers_outside_strings_count_and_give_the_first_message() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"custom\",\"data\":{\"role\":\"assistant\",\"content\":\"from custom\",\"type\":\"message\"}}\n{\"type\":\"custom\",\"data\":\"\\\"role\\\":\\\"assistant\\\" \\\"type\\\":\\\"message\\\"\"}\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":1,"size":186,"firstMessage":"from custom","allMessagesText":"from custom","status":"unknown"}"#,
        );
    }

    #[test]
    fn slot_title_replaces_the_header_s_and_a_bom_is_dropped() {
        check(
            b"\xef\xbb\xbf{\"type\":\"title\",\"title\":\"Slot\",\"pad\":\" \"}\n{\"type\":\"session\",\"id\":\"s\",\"title\":\"HT\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
            r#"{"id":"s","cwd":"","title":"Slot","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":0,"size":146,"firstMessage":"hi","allMessagesText":"hi","status":"pending"}"#,
        );
    }

    #[test]
    fn status_of_a_length_stop() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"stopReason\":\"length\",\"content\":\"a\"}}\r\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":1,"size":115,"firstMessage":"a","allMessagesText":"a","status":"interrupted"}"#,
        );
    }

    #[test]
    fn status_of_a_tool_result_tail() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\"}]}}\n{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"content\":\"r\"}}\n{\"type\":\"label\"}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"stopReason\":\"length\",\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":3,"assistantTurns":2,"size":263,"firstMessage":"(no messages)","allMessagesText":"","status":"interrupted"}"#,
        );
    }

    #[test]
    fn text_blocks_are_joined_and_made_strings() {
        check(
            b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":5},{\"type\":\"text\"},{\"type\":\"text\",\"text\":{\"k\":1}},{\"type\":\"text\",\"text\":[1,[2,null]]},\"s\",7,{\"type\":\"image\",\"text\":\"no\"}]}}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\"}]}}\n{\"type\":\"message\",\"message\":\"truthy\"}\n",
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":3,"assistantTurns":1,"size":381,"firstMessage":"a","allMessagesText":"a 5  [object Object] 1,2,","status":"unknown"}"#,
        );
    }

    #[test]
    fn a_text_that_cannot_become_a_string_leaves_the_file_out() {
        check(
            br#"{"type":"session","id":"s"}
{"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": [1, [{"toString": "x"}]]}]}}
"#,
            "null",
        );
        check(
            br#"{"type":"session","id":"s"}
{"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": {"__proto__": {"toString": 1}}}]}}
"#,
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":0,"size":148,"firstMessage":"[object Object]","allMessagesText":"[object Object]","status":"pending"}"#,
        );
    }

    #[test]
    fn a_character_cut_by_the_first_window_is_a_replacement() {
        let mut bytes = br#"{"type":"session","id":"s"}
{"type":"message","message":{"role":"user","content":""#
            .to_vec();
        bytes.extend("x".repeat(4001).bytes());
        bytes.extend("é".repeat(50).bytes());
        bytes.extend(b"\"}}\n");
        let first = format!("{}{}\u{fffd}", "x".repeat(4001), "é".repeat(6));
        check(
            &bytes,
            &format!(
                r#"{{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":1,"assistantTurns":0,"size":4187,"firstMessage":"{first}","allMessagesText":"{first}","status":"pending"}}"#
            ),
        );
    }

    /// 40 lines of 1031 bytes each, ended by `end`.
    fn filler(end: &[u8]) -> Vec<u8> {
        let mut line = br#"{"type":"custom","data":""#.to_vec();
        line.extend([b'f'; 1000]);
        line.extend(b"\"}");
        line.extend(end);
        line.repeat(40)
    }

    #[test]
    fn an_assistant_line_between_the_windows_is_found_by_the_scan() {
        let mut bytes = b"{\"type\":\"session\",\"id\":\"s\"}\r".to_vec();
        bytes.extend(filler(b"\r"));
        bytes.extend(br#"{"type":"message","message":{"role":"\u0061ssistant","content":"mid"}}"#);
        bytes.push(b'\r');
        bytes.extend(filler(b"\r"));
        bytes.extend(
            b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"tail\"}}\r",
        );
        check(
            &bytes,
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":1,"size":82401,"firstMessage":"(no messages)","allMessagesText":"","status":"unknown"}"#,
        );
        // The scan reads the file through `read_at` in small pieces, not from the bytes.
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read_at = |buf: &mut [u8], at: usize| {
            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            true
        };
        let mut out = Vec::new();
        write_info(&[0; 82401], Some(&read_at), MTIME, &mut out).unwrap();
        assert_eq!(out, info_json(&bytes, MTIME));
        assert!(reads.load(std::sync::atomic::Ordering::Relaxed) >= 3);
    }

    #[test]
    fn no_assistant_anywhere() {
        let mut bytes = b"{\"type\":\"session\",\"id\":\"s\"}\n".to_vec();
        bytes.extend(filler(b"\n"));
        bytes.extend(
            b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"tail\"}}\n",
        );
        check(
            &bytes,
            r#"{"id":"s","cwd":"","created":null,"modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":0,"size":41210,"firstMessage":"(no messages)","allMessagesText":"","status":"pending"}"#,
        );
    }
}
