//! Reference models the checks compare the library with, written from the rules of
//! `conformance/RULES.md` rather than from the library's code: line splitting (P1–P5, E1),
//! including a streaming splitter that is fed arbitrary chunks; the path and message
//! selection of `buildSessionContext` (C1–C9, E4–E8); and `convertToLlm`'s templates
//! (S1–S10). They favour obviousness over speed.

use pi_session_format::PiVersion;
use pi_session_format::json::{JsArray, JsObject, JsString, JsValue, parse, to_string};
use pi_session_format::session::{Key, Session};
use pi_session_format::tree::Leaf;

// =============================================================================================
// Lines
// =============================================================================================

/// What `String.prototype.trim` removes: ECMAScript `WhiteSpace` and `LineTerminator`. That is
/// Unicode `White_Space` without U+0085, plus U+FEFF.
pub fn is_js_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// One line as pi parses it (the model's counterpart of [`pi_session_format::read::Line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLine {
    /// 1-based physical line number.
    pub number: usize,
    /// Byte offset of the first byte of the line's text.
    pub offset: usize,
    /// Length of the raw text in bytes.
    pub len: usize,
    /// The decoded text (U+FFFD for invalid UTF-8).
    pub text: String,
    /// Whether the raw bytes were not valid UTF-8.
    pub lossy: bool,
}

impl ModelLine {
    /// The model of a library line.
    pub fn of(line: &pi_session_format::read::Line<'_>) -> ModelLine {
        ModelLine {
            number: line.number,
            offset: line.offset,
            len: line.len,
            text: line.text.to_string(),
            lossy: line.lossy,
        }
    }
}

/// A push-based line splitter: bytes arrive in chunks of any size and complete lines come out
/// as soon as they are known to be final. It holds the bytes of the current line (a line is
/// decoded only once complete, like Node's `StringDecoder`, so a UTF-8 sequence split across
/// chunks decodes as in the whole text; LF is never inside a sequence) and, when the whole
/// text is trimmed (pi 0.73.1, P2), the last non-blank line until the next one shows that it
/// is not the last (only the last line loses its trailing whitespace).
#[derive(Debug)]
pub struct ChunkedLines {
    trim_whole_text: bool,
    /// Bytes of the line being read.
    current: Vec<u8>,
    /// Offset of `current[0]` in the input.
    current_offset: usize,
    /// Number of the line being read.
    number: usize,
    /// pi 0.73.1: the latest non-blank line, not yet emitted.
    held: Option<(usize, usize, Vec<u8>)>,
    /// Whether a non-blank line has been seen (the first one loses its leading whitespace).
    seen_text: bool,
    out: Vec<ModelLine>,
}

impl ChunkedLines {
    /// A splitter; `trim_whole_text` is pi 0.73.1's P2 (false for 0.87.1, E1).
    pub fn new(trim_whole_text: bool) -> ChunkedLines {
        ChunkedLines {
            trim_whole_text,
            current: Vec::new(),
            current_offset: 0,
            number: 1,
            held: None,
            seen_text: false,
            out: Vec::new(),
        }
    }

    /// Feeds the next chunk; returns the lines completed by it.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<ModelLine> {
        let mut rest = chunk;
        while let Some(lf) = rest.iter().position(|&b| b == b'\n') {
            self.current.extend_from_slice(&rest[..lf]);
            rest = &rest[lf + 1..];
            let raw = std::mem::take(&mut self.current);
            let (number, offset) = (self.number, self.current_offset);
            self.current_offset += raw.len() + 1;
            self.number += 1;
            self.complete(number, offset, raw);
        }
        self.current.extend_from_slice(rest);
        std::mem::take(&mut self.out)
    }

    /// Ends the input; returns the remaining lines.
    pub fn finish(mut self) -> Vec<ModelLine> {
        let raw = std::mem::take(&mut self.current);
        self.complete(self.number, self.current_offset, raw);
        if let Some((number, offset, raw)) = self.held.take() {
            // The last non-blank line: the whole-text trim cuts its trailing whitespace.
            let text = String::from_utf8_lossy(&raw);
            let kept = text.trim_end_matches(is_js_whitespace).len();
            let cut = text.len() - kept;
            self.emit(number, offset, &raw[..raw.len() - cut]);
        }
        self.out
    }

    fn complete(&mut self, number: usize, offset: usize, raw: Vec<u8>) {
        let text = String::from_utf8_lossy(&raw);
        if text.chars().all(is_js_whitespace) {
            return;
        }
        if !self.trim_whole_text {
            self.emit(number, offset, &raw);
            return;
        }
        let (offset, raw) = if self.seen_text {
            (offset, raw)
        } else {
            // The first non-blank line: the whole-text trim cuts its leading whitespace.
            // Whitespace is valid UTF-8, so decoded and raw lengths agree.
            let cut = text.len() - text.trim_start_matches(is_js_whitespace).len();
            (offset + cut, raw[cut..].to_vec())
        };
        self.seen_text = true;
        if let Some((number, offset, raw)) = self.held.replace((number, offset, raw)) {
            self.emit(number, offset, &raw);
        }
    }

    fn emit(&mut self, number: usize, offset: usize, raw: &[u8]) {
        self.out.push(ModelLine {
            number,
            offset,
            len: raw.len(),
            text: String::from_utf8_lossy(raw).into_owned(),
            lossy: std::str::from_utf8(raw).is_err(),
        });
    }
}

/// The lines of a whole input, by the model.
pub fn lines(bytes: &[u8], trim_whole_text: bool) -> Vec<ModelLine> {
    let mut splitter = ChunkedLines::new(trim_whole_text);
    let mut out = splitter.feed(bytes);
    out.extend(splitter.finish());
    out
}

/// The lines of an input fed in chunks whose sizes cycle through `sizes` (each at least 1).
pub fn lines_chunked(bytes: &[u8], trim_whole_text: bool, sizes: &[usize]) -> Vec<ModelLine> {
    let mut splitter = ChunkedLines::new(trim_whole_text);
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes
            .get(i % sizes.len().max(1))
            .copied()
            .unwrap_or(usize::MAX);
        let (chunk, tail) = rest.split_at(size.clamp(1, rest.len()));
        out.extend(splitter.feed(chunk));
        rest = tail;
        i += 1;
    }
    out.extend(splitter.finish());
    out
}

// =============================================================================================
// Values
// =============================================================================================

/// JavaScript truthiness.
pub fn truthy(v: Option<&JsValue>) -> bool {
    match v {
        None | Some(JsValue::Null) => false,
        Some(JsValue::Bool(b)) => *b,
        Some(JsValue::Number(n)) => *n != 0.0 && !n.is_nan(),
        Some(JsValue::String(s)) => !s.is_empty(),
        Some(JsValue::Array(_) | JsValue::Object(_)) => true,
    }
}

/// `a === b` for members of two different parsed values (`undefined` for absent ones):
/// objects and arrays are never the same object.
pub fn strict_eq(a: Option<&JsValue>, b: Option<&JsValue>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(JsValue::Null), Some(JsValue::Null)) => true,
        (Some(JsValue::Bool(x)), Some(JsValue::Bool(y))) => x == y,
        (Some(JsValue::Number(x)), Some(JsValue::Number(y))) => x == y,
        (Some(JsValue::String(x)), Some(JsValue::String(y))) => x == y,
        _ => false,
    }
}

/// Whether `v` is the string `s`.
pub fn is(v: Option<&JsValue>, s: &str) -> bool {
    v.and_then(JsValue::as_str) == Some(s)
}

/// The JSON text of a member, `undefined` when absent (for comparisons and messages).
pub fn text(v: Option<&JsValue>) -> String {
    v.map_or_else(|| "undefined".to_owned(), to_string)
}

/// `v` without its member `key` (a copy), as JSON text.
pub fn text_without(v: &JsValue, key: &str) -> String {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove(key);
    }
    to_string(&v)
}

/// The keys of an object, in order.
pub fn keys(v: &JsValue) -> Vec<String> {
    v.as_object()
        .map(|o| o.iter().map(|(k, _)| k.to_string_lossy()).collect())
        .unwrap_or_default()
}

// =============================================================================================
// Context
// =============================================================================================

/// What one context message must be, and the record it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// The `message` of a `message` entry (C8), as is; with pi 0.87.1 its `content` may be
    /// filled in (E7) or edited (E4), so only the other members must match.
    Message {
        /// Record index of the entry.
        record: usize,
        /// Whether `content` may differ.
        content_may_change: bool,
    },
    /// `{role:"custom", …}` from a `custom_message` entry (C8.1, E8).
    Custom {
        /// Record index of the entry.
        record: usize,
        /// Whether a context edit applies to it (its `content` may differ).
        edited: bool,
    },
    /// `{role:"branchSummary", …}` from a `branch_summary` entry (C8.2).
    BranchSummary {
        /// Record index of the entry.
        record: usize,
    },
    /// `{role:"compactionSummary", …}` from the compaction that counts (C7.1).
    CompactionSummary {
        /// Record index of the compaction.
        record: usize,
    },
    /// A compaction's `systemMessage` (E6), as is (`content` may be edited).
    SystemMessage {
        /// Record index of the compaction.
        record: usize,
        /// Whether a context edit applies to it.
        edited: bool,
    },
}

/// The model's context: the path, the messages it must produce, and the settings.
#[derive(Debug)]
pub enum ModelContext {
    /// No leaf: `{"messages":[],"thinkingLevel":"off","model":null}`.
    Empty,
    /// A parent cycle on the path (D1): the records of the walk up to the repeat.
    Cycle(Vec<usize>),
    /// The context.
    Context {
        /// Record indices of the path, root first.
        path: Vec<usize>,
        /// The messages, in order.
        messages: Vec<Expected>,
        /// `thinkingLevel` as JSON text, `None` when absent.
        thinking_level: Option<String>,
        /// `model` as JSON text.
        model: String,
    },
}

/// `byId.get(key)`: the last entry whose `id` is `key` (C1).
fn by_id(
    session: &Session<'_>,
    values: &[Option<JsValue>],
    key: Option<&JsValue>,
) -> Option<usize> {
    session
        .entries
        .iter()
        .rev()
        .copied()
        .find(|&i| strict_eq(values[i].as_ref().and_then(|v| v.get("id")), key))
}

/// `buildSessionContext` by the rules (C1–C9, E4–E8).
pub fn context(session: &Session<'_>, leaf: &Leaf, pi: PiVersion) -> ModelContext {
    let mut values: Vec<Option<JsValue>> = vec![None; session.records.len()];
    for &i in &session.entries {
        values[i] = Some(session.records[i].value().into_owned());
    }
    let value = |i: usize| values[i].as_ref().unwrap_or(&JsValue::Null);
    // C2 / L4: the leaf.
    let Some(&last) = session.entries.last() else {
        return ModelContext::Empty;
    };
    let leaf_key = match leaf {
        Leaf::Current => value(last).get("id").cloned(),
        Leaf::Id(id) => Some(JsValue::string(id.as_str())),
        // An object or array: equal to no id.
        Leaf::Key(Key::Unique(_)) => Some(JsValue::Object(JsObject::new())),
        Leaf::Key(key) => key.to_json().and_then(|text| parse(&text).ok()),
    };
    if matches!(leaf_key, Some(JsValue::Null)) {
        return ModelContext::Empty;
    }
    let start = if truthy(leaf_key.as_ref()) {
        by_id(session, &values, leaf_key.as_ref()).unwrap_or(last)
    } else {
        last
    };
    // C3: walk up through truthy parents that exist; a repeat is a cycle (D1).
    let mut walk = vec![start];
    loop {
        let current = *walk.last().unwrap_or(&start);
        let parent = value(current).get("parentId");
        if !truthy(parent) {
            break;
        }
        let Some(next) = by_id(session, &values, parent) else {
            break;
        };
        if walk.contains(&next) {
            return ModelContext::Cycle(walk);
        }
        walk.push(next);
    }
    walk.reverse();
    // pi throws on a `message` entry without a message; such entries are left out.
    let path: Vec<usize> = walk
        .into_iter()
        .filter(|&i| {
            let v = value(i);
            !(is(v.get("type"), "message")
                && matches!(v.get("message"), None | Some(JsValue::Null)))
        })
        .collect();
    let type_of = |i: usize| value(i).get("type").and_then(JsValue::as_str);
    // C4–C6, E9: settings from the whole path.
    let mut thinking_level = Some("\"off\"".to_owned());
    let mut model = "null".to_owned();
    for &i in &path {
        let v = value(i);
        match type_of(i) {
            Some("thinking_level_change") => thinking_level = v.get("thinkingLevel").map(to_string),
            Some("model_change") => model = model_json(v.get("provider"), v.get("modelId")),
            Some("message") => {
                let m = v.get("message");
                if is(m.and_then(|m| m.get("role")), "assistant") {
                    let m = m.unwrap_or(&JsValue::Null);
                    model = model_json(m.get("provider"), m.get("model"));
                }
            }
            _ => {}
        }
    }
    // C7: the compaction closest to the leaf, its kept range and what follows it.
    let compaction = path.iter().rposition(|&i| type_of(i) == Some("compaction"));
    let selected: Vec<usize> = match compaction {
        None => path.clone(),
        Some(k) => {
            let first_kept = value(path[k]).get("firstKeptEntryId");
            let start = path[..k]
                .iter()
                .position(|&i| strict_eq(value(i).get("id"), first_kept))
                .unwrap_or(k);
            let is_system = |i: usize| {
                type_of(i) == Some("message")
                    && is(
                        value(i).get("message").and_then(|m| m.get("role")),
                        "system",
                    )
            };
            std::iter::once(path[k])
                .chain(
                    path[start..k]
                        .iter()
                        .copied()
                        .filter(|&i| !pi.reads_like_0_87() || !is_system(i)),
                )
                .chain(path[k + 1..].iter().copied())
                .collect()
        }
    };
    let mut messages = Vec::new();
    match pi.reads_like_0_87() {
        false => {
            // The compaction's summary first (C7.1); other compactions yield nothing (C7.4).
            for (n, &i) in selected.iter().enumerate() {
                let v = value(i);
                match type_of(i) {
                    Some("compaction") if n == 0 && compaction.is_some() => {
                        messages.push(Expected::CompactionSummary { record: i })
                    }
                    Some("message") => messages.push(Expected::Message {
                        record: i,
                        content_may_change: false,
                    }),
                    Some("custom_message") => messages.push(Expected::Custom {
                        record: i,
                        edited: false,
                    }),
                    Some("branch_summary") if truthy(v.get("summary")) => {
                        messages.push(Expected::BranchSummary { record: i })
                    }
                    _ => {}
                }
            }
        }
        // 0.87.1 and later.
        true => {
            // E4: the last edit per target among the selected entries.
            let edit_for = |i: usize| {
                selected
                    .iter()
                    .rev()
                    .copied()
                    .filter(|&e| type_of(e) == Some("context_edit"))
                    .find(|&e| strict_eq(value(e).get("targetId"), value(i).get("id")))
            };
            for (n, &i) in selected.iter().enumerate() {
                let v = value(i);
                let edit = edit_for(i).map(value);
                let replacement = edit.and_then(|e| e.get("replacement"));
                if matches!(replacement, Some(JsValue::Null)) {
                    continue;
                }
                // A missing replacement is ignored (D7).
                let edited = replacement.is_some();
                match type_of(i) {
                    Some("compaction") if n == 0 => {
                        if truthy(v.get("systemMessage")) {
                            messages.push(Expected::SystemMessage { record: i, edited });
                        }
                        messages.push(Expected::CompactionSummary { record: i });
                    }
                    Some("message") => messages.push(Expected::Message {
                        record: i,
                        content_may_change: true,
                    }),
                    Some("custom_message") => messages.push(Expected::Custom { record: i, edited }),
                    Some("branch_summary") if truthy(v.get("summary")) => {
                        messages.push(Expected::BranchSummary { record: i })
                    }
                    _ => {}
                }
            }
        }
    }
    ModelContext::Context {
        path,
        messages,
        thinking_level,
        model,
    }
}

fn model_json(provider: Option<&JsValue>, model_id: Option<&JsValue>) -> String {
    let mut o = JsObject::new();
    if let Some(p) = provider {
        o.set("provider", p.clone());
    }
    if let Some(m) = model_id {
        o.set("modelId", m.clone());
    }
    to_string(&JsValue::Object(o))
}

// =============================================================================================
// convertToLlm
// =============================================================================================

/// JavaScript `String(value)` (`"undefined"` for an absent value), as WTF-8 bytes.
pub fn js_string(value: Option<&JsValue>) -> Vec<u8> {
    let Some(v) = value else {
        return b"undefined".to_vec();
    };
    let mut out = Vec::new();
    // Work list of values still to print; `None` stands for a "," between array elements.
    let mut stack: Vec<Option<&JsValue>> = vec![Some(v)];
    let mut top = true;
    while let Some(item) = stack.pop() {
        let Some(v) = item else {
            out.push(b',');
            continue;
        };
        match v {
            // `null` prints as "null" on its own but as "" inside an array (join).
            JsValue::Null if top => out.extend_from_slice(b"null"),
            JsValue::Null => {}
            JsValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            JsValue::Number(n) if n.is_infinite() => {
                out.extend_from_slice(if *n > 0.0 { b"Infinity" } else { b"-Infinity" })
            }
            JsValue::Number(_) => out.extend_from_slice(to_string(v).as_bytes()),
            JsValue::String(s) => out.extend_from_slice(s.as_wtf8()),
            JsValue::Object(_) => out.extend_from_slice(b"[object Object]"),
            JsValue::Array(items) => {
                for (i, item) in items.0.iter().enumerate().rev() {
                    stack.push(Some(item));
                    if i > 0 {
                        stack.push(None);
                    }
                }
            }
        }
        top = false;
    }
    out
}

fn text_content(text: Vec<u8>) -> JsValue {
    let mut block = JsObject::new();
    block.set("type", JsValue::string("text"));
    block.set("text", JsValue::String(JsString::concat(&[&text])));
    JsValue::Array(JsArray(vec![JsValue::Object(block)]))
}

fn user(content: Option<JsValue>, source: &JsValue) -> JsValue {
    let mut o = JsObject::new();
    o.set("role", JsValue::string("user"));
    if let Some(c) = content {
        o.set("content", c);
    }
    if let Some(t) = source.get("timestamp") {
        o.set("timestamp", t.clone());
    }
    JsValue::Object(o)
}

/// S7: the text before a branch summary.
const BRANCH_PREFIX: &[u8] =
    b"The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// S8: the text before a compaction summary.
const COMPACTION_PREFIX: &[u8] = b"The conversation history before this point was compacted into the following summary:\n\n<summary>\n";

/// `convertToLlm(messages)` by the rules (S1–S10).
pub fn to_llm(messages: &[JsValue], pi: PiVersion) -> Vec<JsValue> {
    let mut out = Vec::new();
    for m in messages {
        let truthy_member = |k: &str| truthy(m.get(k));
        match m.get("role").and_then(JsValue::as_str) {
            Some("user" | "assistant" | "toolResult") => out.push(m.clone()),
            Some("system") if pi.reads_like_0_87() => out.push(m.clone()),
            Some("bashExecution") if !truthy_member("excludeFromContext") => {
                let mut t = b"Ran `".to_vec();
                t.extend(js_string(m.get("command")));
                t.extend_from_slice(b"`\n");
                if truthy_member("output") {
                    t.extend_from_slice(b"```\n");
                    t.extend(js_string(m.get("output")));
                    t.extend_from_slice(b"\n```");
                } else {
                    t.extend_from_slice(b"(no output)");
                }
                let exit = m.get("exitCode");
                if truthy_member("cancelled") {
                    t.extend_from_slice(b"\n\n(command cancelled)");
                } else if !matches!(exit, None | Some(JsValue::Null))
                    && !matches!(exit, Some(JsValue::Number(n)) if *n == 0.0)
                {
                    t.extend_from_slice(b"\n\nCommand exited with code ");
                    t.extend(js_string(exit));
                }
                if truthy_member("truncated") && truthy_member("fullOutputPath") {
                    t.extend_from_slice(b"\n\n[Output truncated. Full output: ");
                    t.extend(js_string(m.get("fullOutputPath")));
                    t.extend_from_slice(b"]");
                }
                out.push(user(Some(text_content(t)), m));
            }
            Some("custom") => {
                let content = match m.get("content") {
                    Some(JsValue::String(s)) => Some(text_content(s.as_wtf8().to_vec())),
                    other => other.cloned(),
                };
                out.push(user(content, m));
            }
            Some("branchSummary") => {
                let mut t = BRANCH_PREFIX.to_vec();
                t.extend(js_string(m.get("summary")));
                t.extend_from_slice(b"</summary>");
                out.push(user(Some(text_content(t)), m));
            }
            Some("compactionSummary") => {
                let mut t = COMPACTION_PREFIX.to_vec();
                t.extend(js_string(m.get("summary")));
                t.extend_from_slice(b"\n</summary>");
                out.push(user(Some(text_content(t)), m));
            }
            _ => {}
        }
    }
    out
}
