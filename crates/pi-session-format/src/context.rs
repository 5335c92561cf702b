//! `buildSessionContext`: what pi sends to the model for a leaf (rules C1–C11).
//!
//! Only the entries on the path are looked at, and a stored message that is already in
//! `JSON.stringify` form (as pi writes it) is never parsed: its text is copied to the output
//! ([`Message::Raw`]). pi 0.73.1 and 0.87.1 share the leaf, path, settings and compaction
//! rules; 0.87.1 also applies `context_edit` entries, emits a compaction's `systemMessage`,
//! drops `system` messages from the kept window and fills in missing `content`
//! ([`PiVersion`] selects the rules).

use crate::PiVersion;
use crate::date;
use crate::json::{self, Content, JsArray, JsObject, JsValue, MessageScan, Role};
use crate::session::{Key, Record, Session};
use crate::tree::{CycleError, Index, Leaf};
use std::cell::OnceCell;
use std::collections::HashMap;
use std::io::{self, Write};

/// One message of a context.
#[derive(Debug, Clone)]
pub enum Message<'s> {
    /// A stored message whose text is exactly what `JSON.stringify` writes for it.
    Raw {
        /// The message's JSON text.
        text: &'s str,
        /// Its `role`, when that is a string.
        role: Option<&'s str>,
    },
    /// A message built or parsed in memory.
    Value(JsValue),
}

impl Message<'_> {
    /// The message's `role`, when that is a string.
    pub fn role(&self) -> Option<&str> {
        match self {
            Message::Raw { role, .. } => *role,
            Message::Value(v) => v.get("role").and_then(JsValue::as_str),
        }
    }

    /// The message as a value (parsing raw text).
    pub fn into_value(self) -> JsValue {
        match self {
            // The text was validated while loading, so it parses.
            Message::Raw { text, .. } => json::parse(text).unwrap_or_default(),
            Message::Value(v) => v,
        }
    }

    /// Writes the message's `JSON.stringify` text.
    pub fn write<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        match self {
            Message::Raw { text, .. } => out.write_all(text.as_bytes()),
            Message::Value(v) => {
                let mut bytes = Vec::new();
                json::write_value(&mut bytes, v);
                out.write_all(&bytes)
            }
        }
    }
}

/// The result of [`build_context`]: `{messages, thinkingLevel, model}`.
#[derive(Debug, Clone)]
pub struct Context<'s> {
    /// The messages, in order.
    pub messages: Vec<Message<'s>>,
    /// The thinking level; `None` when the latest change had no `thinkingLevel` (pi's
    /// `undefined`, absent from the JSON).
    pub thinking_level: Option<JsValue>,
    /// `{provider, modelId}` from the latest model change or assistant message; `None` is
    /// `null`.
    pub model: Option<JsValue>,
    /// Lines of path entries skipped because pi would throw on them (`message` missing or
    /// `null`).
    pub skipped_lines: Vec<usize>,
}

impl<'s> Context<'s> {
    fn empty() -> Context<'s> {
        Context {
            messages: Vec::new(),
            thinking_level: Some(JsValue::string("off")),
            model: None,
            skipped_lines: Vec::new(),
        }
    }

    /// Writes the context as pi's `JSON.stringify(context)` shows it, streaming the
    /// messages (nothing the size of the output is held in memory).
    pub fn write_json<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(b"{\"messages\":")?;
        write_messages(&self.messages, out)?;
        let mut tail = Vec::new();
        if let Some(level) = &self.thinking_level {
            tail.extend_from_slice(b",\"thinkingLevel\":");
            json::write_value(&mut tail, level);
        }
        tail.extend_from_slice(b",\"model\":");
        json::write_value(&mut tail, self.model.as_ref().unwrap_or(&JsValue::Null));
        tail.push(b'}');
        out.write_all(&tail)
    }

    /// The context as a value.
    pub fn to_json(&self) -> JsValue {
        let mut o = JsObject::new();
        let messages = self
            .messages
            .iter()
            .cloned()
            .map(Message::into_value)
            .collect();
        o.set("messages", JsValue::Array(JsArray(messages)));
        if let Some(level) = &self.thinking_level {
            o.set("thinkingLevel", level.clone());
        }
        o.set("model", self.model.clone().unwrap_or(JsValue::Null));
        JsValue::Object(o)
    }

    /// The messages as values (parsing raw ones).
    pub fn message_values(&self) -> Vec<JsValue> {
        self.messages
            .iter()
            .cloned()
            .map(Message::into_value)
            .collect()
    }
}

/// Writes `[m1,m2,…]`.
pub fn write_messages<W: Write + ?Sized>(messages: &[Message<'_>], out: &mut W) -> io::Result<()> {
    out.write_all(b"[")?;
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        m.write(out)?;
    }
    out.write_all(b"]")
}

/// Builds the context for `leaf` as pi's `buildSessionContext(getEntries(), leaf, byId)`.
///
/// Fails only on a parent cycle on the path (pi loops forever).
pub fn build_context<'s>(
    session: &'s Session<'_>,
    index: &Index,
    leaf: &Leaf,
    pi: PiVersion,
) -> Result<Context<'s>, CycleError> {
    let Some(leaf) = index.leaf_record(session, leaf) else {
        return Ok(Context::empty());
    };
    Ok(context_of_path(session, &index.path(session, leaf)?, pi))
}

/// The context of the entries on `path` (indices of `session`'s records, the root first), as
/// pi's `buildSessionContext` builds it once it has walked from the leaf to the root.
pub(crate) fn context_of_path<'s>(
    session: &'s Session<'_>,
    path: &[usize],
    pi: PiVersion,
) -> Context<'s> {
    let mut skipped_lines = Vec::new();
    let path: Vec<PathEntry<'s>> = path
        .iter()
        .filter_map(|&i| {
            let entry = PathEntry::new(&session.records[i]);
            // pi throws a TypeError reading `message.role` of a missing or null message.
            if entry.type_is("message") && entry.message_is_missing_or_null() {
                skipped_lines.push(entry.record.line);
                return None;
            }
            Some(entry)
        })
        .collect();
    let mut context = Context {
        skipped_lines,
        ..Context::empty()
    };
    // The settings come from the last entry of each kind on the path; only those are read.
    let (mut compaction, mut thinking, mut model_at) = (None, None, None);
    for (i, entry) in path.iter().enumerate() {
        match entry.record.entry_type() {
            Some("thinking_level_change") => thinking = Some(i),
            Some("model_change") => model_at = Some(i),
            Some("message") if entry.role() == Some("assistant") => model_at = Some(i),
            Some("compaction") => compaction = Some(i),
            _ => {}
        }
    }
    if let Some(i) = thinking {
        context.thinking_level = path[i].value().get("thinkingLevel").cloned();
    }
    if let Some(i) = model_at {
        context.model = Some(path[i].model());
    }
    context.messages = if pi.reads_like_0_87() {
        messages_0_87(&path, compaction)
    } else {
        messages_0_73(&path, compaction)
    };
    context
}

/// An entry on the path: its record and, unless it is a `message` entry described by its
/// skeleton, its value, parsed when first needed.
struct PathEntry<'s> {
    record: &'s Record<'s>,
    /// The skeleton of a `message` entry read from the file whose role the scanner knows:
    /// such an entry is never parsed as a whole.
    skeleton: Option<&'s MessageScan>,
    value: OnceCell<JsValue>,
}

impl<'s> PathEntry<'s> {
    fn new(record: &'s Record<'s>) -> PathEntry<'s> {
        // A record migrated in memory has no skeleton; one given fresh ids only keeps its
        // message as read.
        let skeleton = record
            .message
            .as_ref()
            .filter(|m| m.role != Role::Other && record.entry_type() == Some("message"));
        PathEntry {
            record,
            skeleton,
            value: OnceCell::new(),
        }
    }

    fn id(&self) -> &Key {
        &self.record.id
    }

    fn type_is(&self, t: &str) -> bool {
        self.record.entry_type() == Some(t)
    }

    /// The parsed entry (`null` for skeleton-described messages, which never need it).
    fn value(&self) -> &JsValue {
        static NULL: JsValue = JsValue::Null;
        if self.skeleton.is_some() {
            return &NULL;
        }
        self.value.get_or_init(|| self.record.value().into_owned())
    }

    /// The stored `message` member of a parsed entry.
    fn message_member(&self, key: &str) -> Option<&JsValue> {
        self.value().get("message").and_then(|m| m.get(key))
    }

    fn message_is_missing_or_null(&self) -> bool {
        match self.skeleton {
            Some(m) => m.is_null,
            None => matches!(self.value().get("message"), None | Some(JsValue::Null)),
        }
    }

    /// The stored message's `role`, when it is a string.
    fn role(&self) -> Option<&str> {
        match self.skeleton {
            Some(m) => m.role.as_str(),
            None => self.message_member("role").and_then(JsValue::as_str),
        }
    }

    /// `{provider, modelId}` of a `model_change` entry, or of an assistant message's
    /// `provider` and `model`.
    fn model(&self) -> JsValue {
        if self.type_is("model_change") {
            let v = self.value();
            return model(v.get("provider"), v.get("modelId"));
        }
        match self.skeleton {
            Some(_) => {
                let m = self.record.message_value().unwrap_or_default();
                model(m.get("provider"), m.get("model"))
            }
            None => model(
                self.message_member("provider"),
                self.message_member("model"),
            ),
        }
    }

    /// Whether the stored message's `content` is missing or `null`.
    fn message_content_missing(&self) -> bool {
        match self.skeleton {
            Some(m) => m.content != Content::Present,
            None => matches!(self.message_member("content"), None | Some(JsValue::Null)),
        }
    }

    fn is_system_message(&self) -> bool {
        self.type_is("message") && self.role() == Some("system")
    }

    /// The stored message: its text when it can be copied, its value otherwise.
    fn stored_message(&self) -> Option<Message<'s>> {
        match self.skeleton {
            Some(m) => match self.record.canonical_message_text() {
                Some(text) => Some(Message::Raw {
                    text,
                    role: m.role.as_str(),
                }),
                None => self.record.message_value().map(Message::Value),
            },
            None => self.value().get("message").cloned().map(Message::Value),
        }
    }
}

/// `{provider, modelId}` with missing members left out, as `JSON.stringify` does.
fn model(provider: Option<&JsValue>, model_id: Option<&JsValue>) -> JsValue {
    object(&[
        ("provider", provider.cloned()),
        ("modelId", model_id.cloned()),
    ])
}

/// An object of the given members in order, skipping `None` (undefined) ones.
pub(crate) fn object(members: &[(&str, Option<JsValue>)]) -> JsValue {
    let mut o = JsObject::new();
    for (key, value) in members {
        if let Some(value) = value {
            o.set(*key, value.clone());
        }
    }
    JsValue::Object(o)
}

fn time_of(entry: &JsValue) -> Option<JsValue> {
    Some(date::time_to_json(date::new_date_time(
        entry.get("timestamp"),
    )))
}

/// `createCompactionSummaryMessage(summary, tokensBefore, timestamp)`.
fn compaction_summary(entry: &JsValue) -> JsValue {
    object(&[
        ("role", Some(JsValue::string("compactionSummary"))),
        ("summary", entry.get("summary").cloned()),
        ("tokensBefore", entry.get("tokensBefore").cloned()),
        ("timestamp", time_of(entry)),
    ])
}

/// `createBranchSummaryMessage(summary, fromId, timestamp)`.
fn branch_summary(entry: &JsValue) -> JsValue {
    object(&[
        ("role", Some(JsValue::string("branchSummary"))),
        ("summary", entry.get("summary").cloned()),
        ("fromId", entry.get("fromId").cloned()),
        ("timestamp", time_of(entry)),
    ])
}

/// `createCustomMessage(customType, content, display, details, timestamp)`.
fn custom_message(entry: &JsValue, content: Option<JsValue>) -> JsValue {
    object(&[
        ("role", Some(JsValue::string("custom"))),
        ("customType", entry.get("customType").cloned()),
        ("content", content),
        ("display", entry.get("display").cloned()),
        ("details", entry.get("details").cloned()),
        ("timestamp", time_of(entry)),
    ])
}

/// 0.73.1 `appendMessage(entry)`.
fn append_0_73<'s>(entry: &PathEntry<'s>, out: &mut Vec<Message<'s>>) {
    match entry.record.entry_type() {
        Some("message") => out.extend(entry.stored_message()),
        Some("custom_message") => {
            let v = entry.value();
            out.push(Message::Value(custom_message(v, v.get("content").cloned())))
        }
        Some("branch_summary") if entry.value().get("summary").is_some_and(JsValue::is_truthy) => {
            out.push(Message::Value(branch_summary(entry.value())))
        }
        _ => {}
    }
}

/// The index of the compaction `K` as `path.findIndex(...)` finds it: the first entry with
/// K's id (0.73.1 also requires `type === "compaction"`).
///
/// A truthy id is on the path once at most: every entry but the leaf was found as
/// `byId.get(id)`, the leaf is `byId.get` of its own id too (or the last entry, which is),
/// and the walk stops at a repeated record. Only falsy ids (missing, `null`, `""`, …) can
/// repeat, so only they need the search.
fn compaction_index(path: &[PathEntry<'_>], k: usize, require_type: bool) -> usize {
    if path[k].id().is_truthy() {
        return k;
    }
    path.iter()
        .position(|e| e.id() == path[k].id() && (!require_type || e.type_is("compaction")))
        .unwrap_or(k)
}

/// Indices of the kept window `[firstKeptEntryId, compaction)`: from the first entry before
/// the compaction with that id. A truthy id is on the path once at most (see
/// [`compaction_index`]), so it is searched from the compaction back, which stops after the
/// kept window instead of walking the whole path.
fn kept_window<'p>(
    path: &'p [PathEntry<'_>],
    k: usize,
    compaction_at: usize,
) -> impl Iterator<Item = usize> + 'p {
    let first_kept = Key::of(path[k].value().get("firstKeptEntryId"), u64::MAX);
    let before = &path[..compaction_at];
    let start = if first_kept.is_truthy() {
        before.iter().rposition(|e| *e.id() == first_kept)
    } else {
        before.iter().position(|e| *e.id() == first_kept)
    };
    start.unwrap_or(compaction_at)..compaction_at
}

fn messages_0_73<'s>(path: &[PathEntry<'s>], compaction: Option<usize>) -> Vec<Message<'s>> {
    let mut out = Vec::new();
    let Some(k) = compaction else {
        path.iter().for_each(|e| append_0_73(e, &mut out));
        return out;
    };
    out.push(Message::Value(compaction_summary(path[k].value())));
    let at = compaction_index(path, k, true);
    for i in kept_window(path, k, at) {
        append_0_73(&path[i], &mut out);
    }
    path[at + 1..].iter().for_each(|e| append_0_73(e, &mut out));
    out
}

fn messages_0_87<'s>(path: &[PathEntry<'s>], compaction: Option<usize>) -> Vec<Message<'s>> {
    // buildContextEntries
    let entries: Vec<&PathEntry<'s>> = match compaction {
        None => path.iter().collect(),
        Some(k) => {
            let at = compaction_index(path, k, false);
            std::iter::once(&path[k])
                .chain(
                    kept_window(path, k, at)
                        .map(|i| &path[i])
                        .filter(|e| !e.is_system_message()),
                )
                .chain(&path[at + 1..])
                .collect()
        }
    };
    // The last `context_edit` per target, in context order.
    let mut edits: HashMap<Key, &JsValue> = HashMap::new();
    for e in entries.iter().filter(|e| e.type_is("context_edit")) {
        edits.insert(Key::of(e.value().get("targetId"), u64::MAX), e.value());
    }
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 && entry.type_is("compaction") {
            continue;
        }
        let messages = entry_messages_0_87(entry);
        match edits.get(entry.id()) {
            None => out.extend(messages),
            Some(edit) => match edit.get("replacement") {
                Some(JsValue::Null) => {}
                // A missing replacement makes pi throw when it reads `.content`; we ignore
                // the edit instead.
                None => out.extend(messages),
                Some(replacement) => out.extend(
                    messages
                        .into_iter()
                        .map(|m| Message::Value(apply_edit(m.into_value(), replacement))),
                ),
            },
        }
    }
    out
}

/// 0.87.1 `sessionEntryToContextMessages(entry)`.
fn entry_messages_0_87<'s>(entry: &PathEntry<'s>) -> Vec<Message<'s>> {
    match entry.record.entry_type() {
        Some("message") => {
            let filler = match entry.role() {
                Some("system") if entry.message_content_missing() => Some(JsValue::string("")),
                Some("user" | "assistant" | "toolResult") if entry.message_content_missing() => {
                    Some(JsValue::Array(JsArray::default()))
                }
                _ => None,
            };
            let Some(message) = entry.stored_message() else {
                return Vec::new();
            };
            match filler {
                None => vec![message],
                Some(filler) => {
                    let mut value = message.into_value();
                    if let Some(o) = value.as_object_mut() {
                        o.set("content", filler);
                    }
                    vec![Message::Value(value)]
                }
            }
        }
        Some("custom_message") => {
            let v = entry.value();
            let content = match v.get("content") {
                None | Some(JsValue::Null) => JsValue::Array(JsArray::default()),
                Some(c) => c.clone(),
            };
            vec![Message::Value(custom_message(v, Some(content)))]
        }
        Some("branch_summary") if entry.value().get("summary").is_some_and(JsValue::is_truthy) => {
            vec![Message::Value(branch_summary(entry.value()))]
        }
        Some("compaction") => {
            let v = entry.value();
            let summary = Message::Value(compaction_summary(v));
            match v.get("systemMessage") {
                Some(system) if system.is_truthy() => vec![Message::Value(system.clone()), summary],
                _ => vec![summary],
            }
        }
        _ => Vec::new(),
    }
}

/// 0.87.1 `projectContextEntry` for a non-null replacement: user and custom messages take
/// `replacement.content` as is; assistant and tool results get a string wrapped in a text
/// block; other roles are unchanged.
fn apply_edit(mut message: JsValue, replacement: &JsValue) -> JsValue {
    let role = message
        .get("role")
        .and_then(JsValue::as_str)
        .map(str::to_owned);
    let Some(o) = message.as_object_mut() else {
        return message;
    };
    let content = replacement.get("content");
    let new_content = match (role.as_deref(), content) {
        (Some("assistant" | "toolResult"), Some(JsValue::String(text))) => {
            let block = object(&[
                ("type", Some(JsValue::string("text"))),
                ("text", Some(JsValue::String(text.clone()))),
            ]);
            Some(JsValue::Array(JsArray(vec![block])))
        }
        (Some("user" | "assistant" | "toolResult" | "custom"), content) => content.cloned(),
        _ => return message,
    };
    match new_content {
        Some(content) => o.set("content", content),
        // `content: undefined` is absent from the JSON.
        None => {
            o.remove("content");
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_string;
    use crate::migrate::SequentialIds;
    use crate::session::LoadOptions;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn context(lines: &[&str], leaf: Leaf, pi: PiVersion) -> String {
        let text = std::iter::once(HEADER)
            .chain(lines.iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        let s = Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi,
                dialect: crate::Dialect::Pi,
            },
        )
        .unwrap();
        let index = Index::build(&s);
        to_string(&build_context(&s, &index, &leaf, pi).unwrap().to_json())
    }

    fn ctx(lines: &[&str]) -> String {
        context(lines, Leaf::Current, PiVersion::V0_73)
    }

    const U1: &str = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"a","timestamp":1}}"#;
    const A1: &str = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2}}"#;

    #[test]
    fn c2_empty_session_and_null_leaf() {
        assert_eq!(
            ctx(&[]),
            r#"{"messages":[],"thinkingLevel":"off","model":null}"#
        );
        assert_eq!(
            ctx(&[U1, r#"{"type":"custom","id":null}"#]),
            r#"{"messages":[],"thinkingLevel":"off","model":null}"#
        );
    }

    #[test]
    fn c4_settings_from_whole_path() {
        let out = ctx(&[
            U1,
            r#"{"type":"thinking_level_change","id":"t","parentId":"u1","thinkingLevel":"high"}"#,
            r#"{"type":"model_change","id":"m","parentId":"t","provider":"x","modelId":"y"}"#,
        ]);
        assert_eq!(
            out,
            r#"{"messages":[{"role":"user","content":"a","timestamp":1}],"thinkingLevel":"high","model":{"provider":"x","modelId":"y"}}"#
        );
        let out = ctx(&[
            U1,
            r#"{"type":"thinking_level_change","id":"t","parentId":"u1"}"#,
            r#"{"type":"message","id":"a","parentId":"t","message":{"role":"assistant"}}"#,
        ]);
        assert_eq!(
            out,
            r#"{"messages":[{"role":"user","content":"a","timestamp":1},{"role":"assistant"}],"model":{}}"#
        );
    }

    #[test]
    fn c7_nearest_compaction_and_kept_window() {
        let out = ctx(&[
            U1,
            A1,
            r#"{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2025-01-01T00:00:02Z","summary":"S1","firstKeptEntryId":"u1","tokensBefore":5}"#,
            r#"{"type":"compaction","id":"c2","parentId":"c1","timestamp":"2025-01-01T00:00:03Z","summary":"S2","firstKeptEntryId":"a1","tokensBefore":7}"#,
            r#"{"type":"branch_summary","id":"b","parentId":"c2","timestamp":"2025-01-01T00:00:04Z","fromId":"c2","summary":""}"#,
            r#"{"type":"custom_message","customType":"k","content":"hi","display":false,"id":"cm","parentId":"b","timestamp":"2025-01-01T00:00:05Z"}"#,
        ]);
        assert_eq!(
            out,
            concat!(
                r#"{"messages":[{"role":"compactionSummary","summary":"S2","tokensBefore":7,"timestamp":1735689603000},"#,
                r#"{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":2},"#,
                r#"{"role":"custom","customType":"k","content":"hi","display":false,"timestamp":1735689605000}],"#,
                r#""thinkingLevel":"off","model":{"provider":"p","modelId":"m"}}"#
            )
        );
    }

    #[test]
    fn a_message_member_on_other_entries_is_only_data() {
        let out = ctx(&[
            U1,
            r#"{"type":"thinking_level_change","id":"t","parentId":"u1","thinkingLevel":"high","message":{"role":"assistant"}}"#,
            r#"{"type":"custom_message","customType":"k","content":"hi","display":true,"id":"c","parentId":"t","timestamp":"2025-01-01T00:00:05Z","message":null}"#,
        ]);
        assert_eq!(
            out,
            r#"{"messages":[{"role":"user","content":"a","timestamp":1},{"role":"custom","customType":"k","content":"hi","display":true,"timestamp":1735689605000}],"thinkingLevel":"high","model":null}"#
        );
    }

    #[test]
    fn roles_spelled_with_escapes_are_read() {
        let out = ctx(&[
            U1,
            r#"{"type":"message","id":"a","parentId":"u1","message":{"role":"\u0061ssistant","provider":"p","model":"m"}}"#,
        ]);
        assert_eq!(
            out,
            r#"{"messages":[{"role":"user","content":"a","timestamp":1},{"role":"assistant","provider":"p","model":"m"}],"thinkingLevel":"off","model":{"provider":"p","modelId":"m"}}"#
        );
    }

    #[test]
    fn message_null_is_skipped() {
        let out = ctx(&[
            U1,
            r#"{"type":"message","id":"n","parentId":"u1","message":null}"#,
        ]);
        assert_eq!(
            out,
            r#"{"messages":[{"role":"user","content":"a","timestamp":1}],"thinkingLevel":"off","model":null}"#
        );
    }

    #[test]
    fn pi_0_87_context_edits_and_system_messages() {
        let lines = [
            U1,
            A1,
            r#"{"type":"context_edit","id":"e1","parentId":"a1","targetId":"a1","replacement":{"content":"new"}}"#,
            r#"{"type":"context_edit","id":"e2","parentId":"e1","targetId":"u1","replacement":null}"#,
            r#"{"type":"message","id":"s","parentId":"e2","message":{"role":"system","timestamp":3}}"#,
        ];
        assert_eq!(
            context(&lines, Leaf::Current, PiVersion::V0_87),
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"new"}],"provider":"p","model":"m","timestamp":2},{"role":"system","timestamp":3,"content":""}],"thinkingLevel":"off","model":{"provider":"p","modelId":"m"}}"#
        );
        assert!(context(&lines, Leaf::Current, PiVersion::V0_73).contains(r#""content":"a""#));
    }
}
