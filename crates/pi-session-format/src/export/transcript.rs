//! [`Transcript`]: the entries of one branch, reduced to what a reader sees.

use crate::Session;
use crate::json::JsValue;
use crate::session::{Key, ValueRef};
use crate::stats::Usage;
use crate::tree::{CycleError, Label, Leaf};
use crate::types::{AgentMessage, Content, ContentBlock, Entry};
use std::collections::HashMap;
use std::fmt;

/// The conversation of one branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The header's `id`.
    pub session_id: String,
    /// The header's `cwd`.
    pub cwd: String,
    /// The header's `timestamp`.
    pub created: String,
    /// The session name (`getSessionName`).
    pub name: Option<String>,
    /// The id of the entry the branch ends at (`None` for a session without entries).
    pub leaf: Option<String>,
    /// The entries from the root to the leaf.
    pub items: Vec<Item>,
}

/// One entry of the branch.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The entry's `id` (its JSON text when it is not a string).
    pub id: String,
    /// Its line in the file (1-based).
    pub line: usize,
    /// The entry's `timestamp` (ISO 8601 as pi writes it; empty when missing).
    pub timestamp: String,
    /// The label the user set on it (`/label`), if any.
    pub label: Option<String>,
    /// What it says.
    pub body: Body,
}

/// What an entry says.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Body {
    /// A prompt.
    User {
        /// Text and images.
        blocks: Vec<Block>,
    },
    /// A model response.
    Assistant {
        /// Text, thinking and tool calls in output order.
        blocks: Vec<Block>,
        /// `provider/model` (the model that answered when the provider said).
        model: String,
        /// Why generation stopped.
        stop_reason: String,
        /// The error of a failed or aborted request.
        error: Option<String>,
        /// Tokens and cost.
        usage: Option<Usage>,
    },
    /// The result of a tool call.
    ToolResult {
        /// The tool.
        tool_name: String,
        /// The call it answers.
        call_id: String,
        /// Whether the tool failed.
        is_error: bool,
        /// Text and images.
        blocks: Vec<Block>,
    },
    /// A shell command the user ran (`!`, `!!`).
    Bash {
        /// The command line.
        command: String,
        /// Its output.
        output: String,
        /// Its exit code, when it reported one.
        exit_code: Option<i64>,
        /// Whether the user cancelled it.
        cancelled: bool,
        /// Whether the output was cut.
        truncated: bool,
    },
    /// An extension's message (`custom_message` entries, `custom` and `hookMessage` roles).
    Custom {
        /// The extension's type name.
        custom_type: String,
        /// Text and images.
        blocks: Vec<Block>,
    },
    /// The system prompt or a change of it (pi 0.86.0+).
    System {
        /// Its text.
        blocks: Vec<Block>,
    },
    /// A compaction: what came before it was replaced by the summary.
    Compaction {
        /// The summary.
        summary: String,
        /// The context size it replaced, in tokens.
        tokens_before: u64,
    },
    /// A summary of an abandoned branch.
    BranchSummary {
        /// The summary.
        summary: String,
    },
    /// The user switched models.
    ModelChange {
        /// `provider/model`.
        model: String,
    },
    /// The user changed the reasoning level.
    ThinkingLevel {
        /// The new level.
        level: String,
    },
    /// The session was named.
    SessionName {
        /// The name.
        name: String,
    },
    /// Anything else (extension state, usage and context-edit entries, unknown types,
    /// entries the typed model cannot read): its type and JSON.
    Other {
        /// The entry's `type` (or role), as written.
        kind: String,
        /// The entry as JSON (pretty-printed).
        json: String,
    },
}

/// A piece of message content.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Block {
    /// Text (Markdown, as models write it).
    Text(String),
    /// Model reasoning.
    Thinking {
        /// The reasoning text.
        text: String,
        /// Whether the provider redacted it.
        redacted: bool,
    },
    /// An image.
    Image {
        /// Its media type as written.
        mime_type: String,
        /// Base64 bytes as written.
        data: String,
    },
    /// A tool call.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments as pretty-printed JSON.
        arguments: String,
        /// The first string argument, cut to 80 characters on one line (a path, a
        /// command): what a reader scans for.
        preview: String,
    },
    /// A block of another type, as JSON.
    Other(String),
}

/// Why a transcript cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscriptError {
    /// `--leaf` names no entry.
    NoSuchEntry(String),
    /// The path to the leaf has a parent cycle.
    Cycle(CycleError),
}

impl fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TranscriptError::NoSuchEntry(id) => write!(f, "no entry has the id {id:?}"),
            TranscriptError::Cycle(cycle) => cycle.fmt(f),
        }
    }
}

impl std::error::Error for TranscriptError {}

impl Transcript {
    /// Puts back the images of an oh-my-pi session that its blob store holds (`data` that is
    /// a `blob:sha256:` reference, [`crate::omp::Blobs`]), as omp does when it opens the file;
    /// returns the hashes of the blobs the store lacks, whose references stay.
    pub fn resolve_blobs(&mut self, blobs: &crate::omp::Blobs) -> Vec<String> {
        resolve_blobs(&mut self.items, blobs)
    }

    /// The branch of `session` ending at `leaf`, as pi's `getBranch` walks it.
    pub fn of(session: &Session<'_>, leaf: &Leaf) -> Result<Transcript, TranscriptError> {
        Ok(super::Branch::of(session, leaf)?.into_transcript())
    }

    /// The transcript's facts of `session` with no items: what a page says before its entries.
    pub(super) fn head(session: &Session<'_>, leaf: Option<&crate::Record<'_>>) -> Transcript {
        let header = session.header().value();
        let header_string = |key: &str| {
            header
                .get(key)
                .and_then(JsValue::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Transcript {
            session_id: header_string("id"),
            cwd: header_string("cwd"),
            created: header_string("timestamp"),
            name: crate::tree::session_name(session),
            leaf: leaf.map(|record| id_text(&record.id)),
            items: Vec::new(),
        }
    }
}

/// Puts back the images of `items` that `blobs` holds (see [`Transcript::resolve_blobs`]);
/// returns the hashes of the blobs it lacks.
pub(super) fn resolve_blobs(items: &mut [Item], blobs: &crate::omp::Blobs) -> Vec<String> {
    let mut missing = Vec::new();
    for item in items {
        let blocks = match &mut item.body {
            Body::User { blocks, .. }
            | Body::Assistant { blocks, .. }
            | Body::ToolResult { blocks, .. }
            | Body::Custom { blocks, .. }
            | Body::System { blocks, .. } => blocks,
            _ => continue,
        };
        for block in blocks {
            if let Block::Image { data, .. } = block {
                match blobs.image_base64(data) {
                    Some(Ok(image)) => *data = image,
                    Some(Err(hash)) => missing.push(hash),
                    None => {}
                }
            }
        }
    }
    missing
}

/// The item of the entry `record`, labelled from `labels`. Its line is read for this call
/// alone (a record loaded through a buffer does not keep it), so that making the items of a
/// branch a batch at a time holds one batch's lines, not the file's.
pub(super) fn item_of(record: &crate::Record<'_>, labels: &HashMap<Key, Label>) -> Item {
    let label = labels.get(&record.id).map(|l| match &l.label {
        JsValue::String(s) => s.to_string_lossy(),
        other => crate::json::to_string(other),
    });
    let item = |members: &Members<'_>| Item {
        id: id_text(&record.id),
        line: record.line,
        timestamp: members
            .get(Member::Timestamp)
            .as_ref()
            .and_then(JsValue::as_str)
            .unwrap_or_default()
            .to_owned(),
        label,
        body: body_of(record, members),
    };
    if record.is_rewritten() {
        record.with_value(|value| item(&Members::Value(ValueRef::Borrowed(value))))
    } else {
        record.with_text(|text| item(&Members::Text(text, Spans::of(text))))
    }
}

/// An id as text: a string as it is, anything else as pi would print it; empty when absent.
fn id_text(id: &Key) -> String {
    match id {
        Key::Undefined | Key::Null => String::new(),
        Key::String(s) => String::from_utf8_lossy(s).into_owned(),
        other => other.display(),
    }
}

/// The members of an entry that a transcript shows as JavaScript reads them, found in the
/// line's text without building its whole value: a line of 800,000 tiny content blocks takes
/// 40 times its bytes as a value. Only what is shown as JSON is built, one block at a time.
enum Members<'r> {
    /// A record whose value differs from its text (a migrated file): its value.
    Value(crate::session::ValueRef<'r>),
    /// Any other record: its text and where the members are in it.
    Text(&'r str, Spans),
}

/// The members a transcript reads of an entry (see [`Members`]).
#[derive(Debug, Clone, Copy)]
enum Member {
    /// `timestamp`.
    Timestamp,
    /// `message.usage`.
    Usage,
    /// `message.content`.
    MessageContent,
    /// `content` (a custom message's).
    Content,
}

impl Member {
    /// The keys leading to it from the entry.
    fn path(self) -> &'static [&'static str] {
        match self {
            Member::Timestamp => &["timestamp"],
            Member::Usage => &["message", "usage"],
            Member::MessageContent => &["message", "content"],
            Member::Content => &["content"],
        }
    }
}

/// Where each [`Member`] is in a line: found by walking the line's members once, and the
/// message's once (the last of a repeated key, as `JSON.parse` keeps it).
#[derive(Debug, Default)]
struct Spans {
    timestamp: Option<Span>,
    usage: Option<Span>,
    message_content: Option<Span>,
    content: Option<Span>,
}

type Span = (usize, usize);

impl Spans {
    fn of(text: &str) -> Spans {
        let mut spans = Spans::default();
        let mut message = None;
        // The line was validated as a JSON object when it was loaded.
        let _ = crate::json::object_members(text.as_bytes(), |key, span| match key {
            b"timestamp" => spans.timestamp = Some(span),
            b"message" => message = Some(span),
            b"content" => spans.content = Some(span),
            _ => {}
        });
        if let Some((start, end)) = message {
            // Not an object (a string, `null`): it has no members.
            let _ =
                crate::json::object_members(
                    &text.as_bytes()[start..end],
                    |key, (s, e)| match key {
                        b"usage" => spans.usage = Some((start + s, start + e)),
                        b"content" => spans.message_content = Some((start + s, start + e)),
                        _ => {}
                    },
                );
        }
        spans
    }

    fn get(&self, member: Member) -> Option<Span> {
        match member {
            Member::Timestamp => self.timestamp,
            Member::Usage => self.usage,
            Member::MessageContent => self.message_content,
            Member::Content => self.content,
        }
    }
}

impl Members<'_> {
    /// The value of `member`, as `JSON.parse` reads it.
    fn get(&self, member: Member) -> Option<JsValue> {
        match self {
            Members::Value(value) => {
                let mut at: &JsValue = value;
                for key in member.path() {
                    at = at.get(key)?;
                }
                Some(at.clone())
            }
            Members::Text(text, spans) => {
                let (start, end) = spans.get(member)?;
                crate::json::parse(&text[start..end]).ok()
            }
        }
    }

    /// The elements of the array `member`, one at a time, each built only when asked for.
    fn elements(&self, member: Member) -> Elements<'_> {
        match self {
            Members::Value(value) => {
                let mut at: Option<&JsValue> = Some(value);
                for key in member.path() {
                    at = at.and_then(|v| v.get(key));
                }
                match at {
                    Some(JsValue::Array(items)) => Elements::Values(&items.0),
                    _ => Elements::None,
                }
            }
            Members::Text(text, spans) => {
                let Some(array @ (start, end)) = spans.get(member) else {
                    return Elements::None;
                };
                let mut elements = Vec::new();
                match crate::json::array_elements(&text.as_bytes()[start..end], |(s, e)| {
                    elements.push((start + s, start + e));
                }) {
                    Ok(()) => Elements::Spans {
                        text,
                        array,
                        elements,
                    },
                    Err(_) => Elements::None,
                }
            }
        }
    }

    /// The whole value (an entry shown as JSON).
    fn value(&self) -> JsValue {
        match self {
            Members::Value(value) => JsValue::clone(value),
            // The text parsed once already while loading, so this cannot fail.
            Members::Text(text, _) => crate::json::parse(text).unwrap_or_default(),
        }
    }
}

/// The elements of a content array (see [`Members::elements`]).
enum Elements<'m> {
    /// No array there.
    None,
    /// The elements of a value.
    Values(&'m [JsValue]),
    /// Where the array and its elements are in a line's text.
    Spans {
        text: &'m str,
        array: Span,
        elements: Vec<Span>,
    },
}

impl Elements<'_> {
    /// Element `i`, as `JSON.parse` reads it.
    fn get(&self, i: usize) -> Option<JsValue> {
        match self {
            Elements::None => None,
            Elements::Values(values) => values.get(i).cloned(),
            Elements::Spans { text, elements, .. } => {
                let &(start, end) = elements.get(i)?;
                crate::json::parse(&text[start..end]).ok()
            }
        }
    }
}

/// The body of one entry: typed when the typed model reads it, else its JSON. What is shown
/// as JSON comes from the value as JavaScript reads it (typed values lose the key order and
/// how JavaScript reads numbers).
fn body_of(record: &crate::Record<'_>, members: &Members<'_>) -> Body {
    let other = |kind: &str| Body::Other {
        kind: kind.to_owned(),
        json: pretty(&members.value()),
    };
    let kind = record.entry_type().unwrap_or("(no type)").to_owned();
    // Where the entry types with content have it (no other entry is read a block at a time).
    let content = match record.entry_type() {
        Some("message") => Some(Member::MessageContent),
        Some("custom_message") => Some(Member::Content),
        _ => None,
    };
    let Some((entry, content)) = typed(members, content) else {
        return other(&kind);
    };
    match entry {
        Entry::Message(m) => {
            let usage = Usage::of(members.get(Member::Usage).as_ref());
            message_body(m.message, usage, content).unwrap_or_else(|| other(&kind))
        }
        Entry::Compaction(c) => Body::Compaction {
            summary: c.summary,
            tokens_before: c.tokens_before,
        },
        Entry::BranchSummary(b) => Body::BranchSummary { summary: b.summary },
        Entry::ModelChange(m) => Body::ModelChange {
            model: format!("{}/{}", m.provider, m.model_id),
        },
        Entry::ThinkingLevelChange(t) => Body::ThinkingLevel {
            level: t.thinking_level,
        },
        Entry::SessionInfo(s) => match s.name {
            Some(name) => Body::SessionName { name },
            None => other(&kind),
        },
        Entry::CustomMessage(c) => Body::Custom {
            custom_type: c.custom_type,
            blocks: content.blocks(c.content),
        },
        _ => other(&kind),
    }
}

/// The typed entry of `record` and its content's blocks (the array `content`);
/// `None` when the typed model does not read it.
///
/// Read whole, a line of 800,000 tiny blocks takes 40 times its bytes (serde holds the
/// entry's value while it types it). A line's array is read a block at a time instead: the
/// entry is typed with an empty array in its place, then each block on its own, each turned
/// into a [`Block`] at once. The typed model reads the line exactly when it reads both.
fn typed<'m>(
    members: &'m Members<'_>,
    content: Option<Member>,
) -> Option<(Entry, BlockSource<'m>)> {
    let elements = content.map_or(Elements::None, |member| members.elements(member));
    let Elements::Spans {
        text,
        array: (start, end),
        elements,
    } = elements
    else {
        let entry = match members {
            Members::Text(text, _) => crate::session::typed_from_text(text).ok()?,
            // As `TypedEntry::of` types a rewritten record, from the value in hand.
            Members::Value(value) => {
                crate::session::typed_from_text(&crate::json::to_string(value)).ok()?
            }
        };
        return Some((entry, BlockSource::Typed(elements)));
    };
    let without = [&text[..start], "[]", &text[end..]].concat();
    let entry = crate::session::typed_from_text(&without).ok()?;
    let mut blocks = Vec::with_capacity(elements.len());
    for &(start, end) in &elements {
        let element = &text[start..end];
        let typed: ContentBlock = crate::session::typed_from_text(element).ok()?;
        blocks.push(block(typed, || crate::json::parse(element).ok()));
    }
    Some((entry, BlockSource::Read(blocks)))
}

/// Where a content's [`Block`]s come from.
enum BlockSource<'m> {
    /// The typed content, with its elements as JavaScript reads them.
    Typed(Elements<'m>),
    /// Read already, a block at a time (the typed content is the empty array put in place).
    Read(Vec<Block>),
}

impl BlockSource<'_> {
    /// The blocks of `content` (its typed value).
    fn blocks(self, content: Content) -> Vec<Block> {
        match content {
            Content::Text(text) => vec![Block::Text(text)],
            Content::Blocks(list) => self.list(list),
        }
    }

    /// The blocks of a content that is always an array.
    fn list(self, list: Vec<ContentBlock>) -> Vec<Block> {
        match self {
            BlockSource::Typed(raw) => list
                .into_iter()
                .enumerate()
                .map(|(i, b)| block(b, || raw.get(i)))
                .collect(),
            BlockSource::Read(blocks) => blocks,
        }
    }
}

/// A message's body; `None` for roles without a typed model.
fn message_body(
    message: AgentMessage,
    usage: Option<Usage>,
    content: BlockSource<'_>,
) -> Option<Body> {
    Some(match message {
        AgentMessage::User(u) => Body::User {
            blocks: content.blocks(u.content),
        },
        AgentMessage::Assistant(a) => Body::Assistant {
            blocks: content.list(a.content),
            model: format!(
                "{}/{}",
                a.provider,
                a.response_model.as_deref().unwrap_or(&a.model)
            ),
            stop_reason: a.stop_reason,
            error: a.error_message,
            usage,
        },
        AgentMessage::ToolResult(t) => Body::ToolResult {
            tool_name: t.tool_name,
            call_id: t.tool_call_id,
            is_error: t.is_error,
            blocks: content.list(t.content),
        },
        AgentMessage::BashExecution(b) => Body::Bash {
            command: b.command,
            output: b.output,
            exit_code: b.exit_code.flatten(),
            cancelled: b.cancelled,
            truncated: b.truncated,
        },
        AgentMessage::Custom(c) => Body::Custom {
            custom_type: c.custom_type,
            blocks: content.blocks(c.content),
        },
        AgentMessage::HookMessage(h) => Body::Custom {
            custom_type: h.custom_type,
            blocks: content.blocks(h.content),
        },
        AgentMessage::BranchSummary(b) => Body::BranchSummary { summary: b.summary },
        AgentMessage::CompactionSummary(c) => Body::Compaction {
            summary: c.summary,
            tokens_before: c.tokens_before,
        },
        AgentMessage::System(s) => Body::System {
            blocks: content.blocks(s.content),
        },
        _ => return None,
    })
}

/// One block; `raw` gives its value as JavaScript reads it, for what is shown as JSON (typed
/// values lose the key order and how JavaScript reads numbers). Text, thinking and images
/// need none.
fn block(block: ContentBlock, raw: impl FnOnce() -> Option<JsValue>) -> Block {
    match block {
        ContentBlock::Text(t) => Block::Text(t.text),
        ContentBlock::Thinking(t) => Block::Thinking {
            text: t.thinking,
            redacted: t.redacted == Some(true),
        },
        ContentBlock::Image(i) => Block::Image {
            mime_type: i.mime_type,
            data: i.data,
        },
        ContentBlock::ToolCall(c) => {
            let raw = raw();
            let arguments = raw.as_ref().and_then(|b| b.get("arguments"));
            Block::ToolCall {
                preview: match arguments.and_then(JsValue::as_object) {
                    Some(object) => object.iter().find_map(|(_, v)| v.as_str()),
                    None => c.arguments.values().find_map(|v| v.as_str()),
                }
                .map(|s| preview(s, 80))
                .unwrap_or_default(),
                arguments: match arguments {
                    Some(value) => pretty(value),
                    None => serde_json::to_string_pretty(&c.arguments).unwrap_or_default(),
                },
                id: c.id,
                name: c.name,
            }
        }
        other => Block::Other(match raw() {
            Some(value) => pretty(&value),
            None => serde_json::to_string_pretty(&other).unwrap_or_default(),
        }),
    }
}

/// What the renderers say of a shell command besides its output: `exit code 1, cancelled,
/// output truncated` (empty when there is nothing to say).
pub(crate) fn bash_notes(exit_code: Option<i64>, cancelled: bool, truncated: bool) -> String {
    let mut notes = Vec::new();
    if let Some(code) = exit_code {
        notes.push(format!("exit code {code}"));
    }
    if cancelled {
        notes.push("cancelled".to_owned());
    }
    if truncated {
        notes.push("output truncated".to_owned());
    }
    notes.join(", ")
}

/// An answer's tokens and cost, in one line.
pub(crate) fn usage_line(u: &Usage) -> String {
    format!(
        "Tokens: {} in, {} out, {} cache read, {} cache write; cost ${:.4}",
        u.input, u.output, u.cache_read, u.cache_write, u.cost
    )
}

/// What the renderers say above a compaction's summary.
pub(crate) fn compaction_note(tokens_before: u64) -> String {
    format!("The conversation above was replaced by this summary ({tokens_before} tokens before).")
}

/// The first `max` characters of `text` on one line (whitespace runs as one space), `…`
/// when cut.
pub(crate) fn preview(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, word) in text.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() > max {
            let cut: String = out.chars().take(max).collect();
            return cut + "…";
        }
    }
    out
}

/// Values nested deeper than this are shown on one line: pretty-printed, the indentation of
/// a hostile value would grow with the square of its depth.
const PRETTY_DEPTH: usize = 32;

/// `value` as `JSON.stringify(value, null, 2)` writes it, or on one line when it is nested
/// deeper than [`PRETTY_DEPTH`].
fn pretty(value: &JsValue) -> String {
    let mut stack = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        if depth > PRETTY_DEPTH {
            return crate::json::to_string(value);
        }
        match v {
            JsValue::Array(items) => stack.extend(items.0.iter().map(|i| (i, depth + 1))),
            JsValue::Object(object) => stack.extend(object.iter().map(|(_, i)| (i, depth + 1))),
            _ => {}
        }
    }
    crate::json::to_string_pretty(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PiVersion;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    /// The items of a one-entry session whose entry is `entry`.
    fn body(entry: &str) -> Body {
        let file = format!("{HEADER}\n{entry}\n");
        let session = Session::from_bytes(file.as_bytes(), PiVersion::V0_87).unwrap();
        let mut transcript = Transcript::of(&session, &Leaf::Current).unwrap();
        assert_eq!(transcript.items.len(), 1);
        transcript.items.remove(0).body
    }

    fn assistant(content: &str) -> String {
        format!(
            r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"assistant","content":{content},"provider":"p","model":"m","api":"x","usage":{{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}}},"stopReason":"stop","timestamp":1}}}}"#
        )
    }

    /// A line's content is read a block at a time: what is shown as JSON keeps the key order
    /// and the numbers as JavaScript reads them, a lone surrogate reads as U+FFFD, and the
    /// last of two `content` members is the one read.
    #[test]
    fn blocks_read_one_at_a_time_are_shown_as_javascript_reads_them() {
        let content = r#"[{"type":"text","text":"a\ud800"},{"type":"toolCall","id":"c","name":"read","arguments":{"z":1.50,"path":"/a b"}},{"type":"later","b":2,"a":1e2}]"#;
        let Body::Assistant { blocks, usage, .. } = body(&assistant(content)) else {
            panic!("an assistant message")
        };
        assert_eq!(usage.map(|u| (u.input, u.output)), Some((3.0, 4.0)));
        assert_eq!(
            blocks,
            [
                Block::Text("a\u{fffd}".to_owned()),
                Block::ToolCall {
                    id: "c".to_owned(),
                    name: "read".to_owned(),
                    arguments: "{\n  \"z\": 1.5,\n  \"path\": \"/a b\"\n}".to_owned(),
                    preview: "/a b".to_owned(),
                },
                Block::Other("{\n  \"type\": \"later\",\n  \"b\": 2,\n  \"a\": 100\n}".to_owned()),
            ]
        );
        let twice = assistant(r#"[7],"content":[{"type":"text","text":"kept"}]"#);
        let Body::Assistant { blocks, .. } = body(&twice) else {
            panic!("the last content is read: {twice}")
        };
        assert_eq!(blocks, [Block::Text("kept".to_owned())]);
    }

    /// A block the typed model does not read makes the whole entry JSON, as when it was read
    /// whole.
    #[test]
    fn a_block_the_typed_model_does_not_read_shows_the_entry_as_json() {
        let Body::Other { kind, json } = body(&assistant(
            r#"[{"type":"text","text":"a"},{"type":"text"}]"#,
        )) else {
            panic!("shown as JSON")
        };
        assert_eq!(kind, "message");
        assert!(json.starts_with("{\n  \"type\": \"message\""), "{json}");
        // A custom message's content, read the same way.
        let custom = r#"{"type":"custom_message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"x","content":[{"type":"text","text":"hi"}],"display":true}"#;
        let Body::Custom { blocks, .. } = body(custom) else {
            panic!("a custom message")
        };
        assert_eq!(blocks, [Block::Text("hi".to_owned())]);
    }
}
