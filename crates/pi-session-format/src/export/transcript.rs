//! [`Transcript`]: the entries of one branch, reduced to what a reader sees.

use crate::Session;
use crate::json::JsValue;
use crate::session::Key;
use crate::stats::Usage;
use crate::tree::{CycleError, Leaf};
use crate::types::{AgentMessage, Content, ContentBlock, Entry};
use rayon::prelude::*;
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
    /// The branch of `session` ending at `leaf`, as pi's `getBranch` walks it.
    pub fn of(session: &Session<'_>, leaf: &Leaf) -> Result<Transcript, TranscriptError> {
        let index = session.index();
        if let Leaf::Id(id) = leaf
            && index.get(session, &Key::string(id)).is_none()
        {
            return Err(TranscriptError::NoSuchEntry(id.clone()));
        }
        let path = match index.leaf_record(session, leaf) {
            Some(record) => index
                .path(session, record)
                .map_err(TranscriptError::Cycle)?,
            None => Vec::new(),
        };
        let labels = index.labels(session);
        let header = session.header().value();
        let header_string = |key: &str| {
            header
                .get(key)
                .and_then(JsValue::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        // Each entry is read on its own (typed parsing is most of the work): on every core.
        let items = path
            .par_iter()
            .map(|&i| &session.records[i])
            .filter(|record| record.entry_type() != Some("label"))
            .map(|record| {
                let value = record.value();
                let label = labels.get(&record.id).map(|l| match &l.label {
                    JsValue::String(s) => s.to_string_lossy(),
                    other => crate::json::to_string(other),
                });
                Item {
                    id: id_text(&record.id),
                    line: record.line,
                    timestamp: value
                        .get("timestamp")
                        .and_then(JsValue::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    label,
                    body: body_of(record, &value),
                }
            })
            .collect();
        Ok(Transcript {
            session_id: header_string("id"),
            cwd: header_string("cwd"),
            created: header_string("timestamp"),
            name: crate::tree::session_name(session),
            leaf: path.last().map(|&i| id_text(&session.records[i].id)),
            items,
        })
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

/// The body of one entry: typed when the typed model reads it, else its JSON. `value` is the
/// record's value (as JavaScript reads it: what is shown as JSON comes from it, since typed
/// values lose the key order and how JavaScript reads numbers).
fn body_of(record: &crate::Record<'_>, value: &JsValue) -> Body {
    let other = |kind: &str| Body::Other {
        kind: kind.to_owned(),
        json: pretty(value),
    };
    let kind = record.entry_type().unwrap_or("(no type)").to_owned();
    let Ok(typed) = crate::TypedEntry::of(record) else {
        return other(&kind);
    };
    let raw = blocks_of(value.get("message").and_then(|m| m.get("content")));
    match typed.entry {
        Entry::Message(m) => {
            let usage = value.get("message").and_then(|m| Usage::of(m.get("usage")));
            message_body(m.message, usage, raw).unwrap_or_else(|| other(&kind))
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
            blocks: content_blocks(c.content, blocks_of(value.get("content"))),
        },
        _ => other(&kind),
    }
}

/// The elements of `content` when it is an array.
fn blocks_of(content: Option<&JsValue>) -> Option<&[JsValue]> {
    match content {
        Some(JsValue::Array(items)) => Some(&items.0),
        _ => None,
    }
}

/// A message's body; `None` for roles without a typed model.
fn message_body(
    message: AgentMessage,
    usage: Option<Usage>,
    raw: Option<&[JsValue]>,
) -> Option<Body> {
    Some(match message {
        AgentMessage::User(u) => Body::User {
            blocks: content_blocks(u.content, raw),
        },
        AgentMessage::Assistant(a) => Body::Assistant {
            blocks: blocks(a.content, raw),
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
            blocks: blocks(t.content, raw),
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
            blocks: content_blocks(c.content, raw),
        },
        AgentMessage::HookMessage(h) => Body::Custom {
            custom_type: h.custom_type,
            blocks: content_blocks(h.content, raw),
        },
        AgentMessage::BranchSummary(b) => Body::BranchSummary { summary: b.summary },
        AgentMessage::CompactionSummary(c) => Body::Compaction {
            summary: c.summary,
            tokens_before: c.tokens_before,
        },
        AgentMessage::System(s) => Body::System {
            blocks: content_blocks(s.content, raw),
        },
        _ => return None,
    })
}

fn content_blocks(content: Content, raw: Option<&[JsValue]>) -> Vec<Block> {
    match content {
        Content::Text(text) => vec![Block::Text(text)],
        Content::Blocks(list) => blocks(list, raw),
    }
}

/// The blocks, each with its value in `raw` (the same array as JavaScript reads it).
fn blocks(list: Vec<ContentBlock>, raw: Option<&[JsValue]>) -> Vec<Block> {
    list.into_iter()
        .enumerate()
        .map(|(i, b)| block(b, raw.and_then(|r| r.get(i))))
        .collect()
}

/// One block; `raw`, its value as JavaScript reads it, gives what is shown as JSON (typed
/// values lose the key order and how JavaScript reads numbers).
fn block(block: ContentBlock, raw: Option<&JsValue>) -> Block {
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
            let arguments = raw.and_then(|b| b.get("arguments"));
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
        other => Block::Other(match raw {
            Some(value) => pretty(value),
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
