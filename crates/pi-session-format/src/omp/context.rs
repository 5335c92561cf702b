//! omp's `buildSessionContext` (`session-context.ts`, the model context, not the display
//! transcript): what omp sends to the model when it resumes a session.
//!
//! Where it differs from pi's ([`crate::context`]):
//!
//! - the settings are more: `models` by role (`model_change` is `{model, role}`; an assistant
//!   message sets `models.default` until an explicit default is recorded),
//!   `configuredThinkingLevel`, `serviceTier`, `injectedTtsrRules`, `mode`/`modeData`;
//! - a `reset_boundary` (`/clear`) after the latest compaction restarts the context after it;
//! - assistant turns marked `retryRecovery` and empty error turns are not emitted; custom
//!   messages are normalised as omp restores them; the prewalk-plan and vibe-mode messages
//!   are left out;
//! - `toolCall` blocks without a `toolResult` among the messages are stripped (the turn's
//!   `redactedThinking` dropped and thinking signatures cleared with them; a turn left empty
//!   goes);
//! - assistant turns that ended `aborted` or `error` go, with their tool results;
//! - a parent cycle ends the path at the first repeated id instead of hanging.
//!
//! omp appends a synthetic aborted assistant message when it resumes after a process died
//! mid-turn (`createInterruptedTurnAbortMessage`); that message is dropped again by the last
//! rule and sets no model the path has not set, so the context is the same with or without
//! it (the corpus case `omp/resume-after-interrupted-turn` pins this).
//!
//! What is not reproduced yet fails with [`OmpContextError::Unsupported`] instead of giving
//! a different answer: a compaction carrying provider replay data (`preserveData` with a
//! snapcompact archive, an Anthropic payload or an OpenAI remote-compaction history), a
//! context-rollover compaction, and context notes.

use crate::context::object;
use crate::date;
use crate::json::Role;
use crate::json::{self, JsArray, JsObject, JsValue};
use crate::llm::to_js_string;
use crate::omp::blobs::{Blobs, Resolved};
use crate::session::{Key, Record, Session};
use crate::tree::{Index, Leaf};
use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::io::{self, Write};

/// What omp's `buildSessionContext` returns.
#[derive(Debug, Clone)]
pub struct OmpContext {
    /// The messages, in order.
    pub messages: Vec<JsValue>,
    /// `thinkingLevel` (`"off"` unless a change set it).
    pub thinking_level: JsValue,
    /// `configuredThinkingLevel`, absent when no change set it.
    pub configured_thinking_level: Option<JsValue>,
    /// `serviceTier` by provider family, absent when none applies.
    pub service_tier: Option<JsValue>,
    /// Model by role (`{"default":"provider/id", …}`), an object.
    pub models: JsValue,
    /// Names of the TTSR rules injected, first injection first.
    pub injected_ttsr_rules: Vec<JsValue>,
    /// The mode (`"none"` unless a `mode_change` set it; absent if it set none).
    pub mode: Option<JsValue>,
    /// `modeData` of the latest `mode_change`.
    pub mode_data: Option<JsValue>,
    /// Blob references the store did not have, as `(line, sha256)`: left in place, as omp
    /// leaves them (it logs a warning). Not part of the JSON.
    pub missing_blobs: Vec<(usize, String)>,
}

/// Why omp's context of a session cannot be given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OmpContextError {
    /// The path holds something omp builds with code not reproduced here yet.
    Unsupported {
        /// The line of the entry.
        line: usize,
        /// What it is.
        feature: &'static str,
    },
}

impl OmpContextError {
    /// A stable name for the error, the same in every binding.
    pub fn code(&self) -> &'static str {
        match self {
            OmpContextError::Unsupported { .. } => "omp-unsupported",
        }
    }
}

impl fmt::Display for OmpContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OmpContextError::Unsupported { line, feature } => write!(
                f,
                "line {line}: {feature}: omp's context of it is not reproduced yet (see docs/dialects.md)"
            ),
        }
    }
}

impl std::error::Error for OmpContextError {}

/// `prewalk-plan` and `vibe-mode-context` custom messages stay out of the model context.
const HIDDEN_CUSTOM_TYPES: [&str; 2] = ["prewalk-plan", "vibe-mode-context"];
/// The hidden continuity message that keeps an interrupted turn in the context.
const INTERRUPTED_THINKING: &str = "interrupted-thinking";
/// omp's `DEFAULT_CUSTOM_MESSAGE_TYPE`.
const DEFAULT_CUSTOM_TYPE: &str = "custom-message";
/// omp's `CONTEXT_NOTES_ENTRY_TYPE`.
pub(crate) const CONTEXT_NOTES: &str = "experimental_context_notes";

/// An entry on the path: its record, and its value, parsed when first needed (the settings
/// walk looks at the skeleton's types; only the entries that matter are parsed).
pub(super) struct PathEntry<'s, 'b> {
    record: &'s Record<'s>,
    value: OnceCell<JsValue>,
    /// The blob store, and the references it did not have.
    blobs: Option<&'b Blobs>,
    missing: &'b RefCell<Vec<(usize, String)>>,
}

impl<'s, 'b> PathEntry<'s, 'b> {
    fn line(&self) -> usize {
        self.record.line
    }

    pub(super) fn id(&self) -> &Key {
        &self.record.id
    }

    pub(super) fn type_is(&self, t: &str) -> bool {
        self.record.entry_type() == Some(t)
    }

    /// The entry as omp holds it after opening the file: its blobs put back, Copilot replay
    /// data stripped.
    fn value(&self) -> &JsValue {
        self.value.get_or_init(|| {
            let mut value = self.record.value().into_owned();
            if let Some(blobs) = self.blobs {
                let mut resolved = Resolved::default();
                blobs.resolve(&mut value, &mut resolved);
                let line = self.record.line;
                self.missing
                    .borrow_mut()
                    .extend(resolved.missing.into_iter().map(|hash| (line, hash)));
            }
            strip_copilot_replay(&mut value);
            value
        })
    }

    pub(super) fn get(&self, key: &str) -> Option<&JsValue> {
        self.value().get(key)
    }

    /// Whether it is a `message` entry of an assistant message (from the skeleton when it
    /// knows the role).
    fn is_assistant_message(&self) -> bool {
        if !self.type_is("message") {
            return false;
        }
        match &self.record.message {
            Some(scan) if scan.role != Role::Other => scan.role == Role::Assistant,
            _ => json::is_str(message_member(self, "role"), "assistant"),
        }
    }
}

/// Builds omp's context of `session` for `leaf` ([`Leaf::Current`]: the leaf omp has after
/// opening the file, its last entry), with the images of `blobs` put back (without a store,
/// the references stay, as omp leaves those it cannot find).
pub fn build(
    session: &Session<'_>,
    leaf: &Leaf,
    blobs: Option<&Blobs>,
) -> Result<OmpContext, OmpContextError> {
    let index = session.index();
    let Some(leaf) = index.leaf_record(session, leaf) else {
        return Ok(OmpContext::empty());
    };
    let missing = RefCell::new(Vec::new());
    let path = path(session, index, leaf, blobs, &missing);
    let mut context = OmpContext::empty();
    let compaction = context.read_settings(&path);
    check_supported(&path, compaction)?;

    let reset = path.iter().rposition(|e| e.type_is("reset_boundary"));
    let compaction_at = compaction.and_then(|c| {
        let id = path[c].id();
        path.iter()
            .position(|e| e.type_is("compaction") && same(e.id(), id))
    });
    let mut messages = Vec::new();
    if let Some(reset) = reset.filter(|&r| compaction_at.is_none_or(|c| r > c)) {
        for entry in &path[reset + 1..] {
            append_message(&mut messages, entry);
        }
    } else if let (Some(c), Some(at)) = (compaction, compaction_at) {
        let compaction = &path[c];
        messages.push(compaction_summary(compaction));
        let first_kept = compaction
            .get("firstKeptEntryId")
            .map(|k| Key::of(Some(k), u64::MAX));
        // Ids on the path are unique (the walk stops at a repeated one): the entry found
        // from the compaction back is omp's first from the root, and it is near.
        let kept = first_kept.and_then(|k| path[..at].iter().rposition(|e| same(e.id(), &k)));
        if let Some(kept) = kept {
            for entry in &path[kept..at] {
                append_message(&mut messages, entry);
            }
        }
        for entry in &path[at + 1..] {
            append_message(&mut messages, entry);
        }
    } else {
        for entry in &path {
            append_message(&mut messages, entry);
        }
    }
    strip_dangling_tool_calls(&mut messages);
    drop_failed_turns(&mut messages);
    context.messages = messages;
    drop(path);
    context.missing_blobs = missing.into_inner();
    Ok(context)
}

/// The walk from `leaf` to its root, stopping at the first repeated id (omp's `pathTo`),
/// root first.
pub(super) fn path<'s, 'b>(
    session: &'s Session<'_>,
    index: &Index,
    leaf: usize,
    blobs: Option<&'b Blobs>,
    missing: &'b RefCell<Vec<(usize, String)>>,
) -> Vec<PathEntry<'s, 'b>> {
    // One flag per record: every record on the path is the one `byId` gives for its id (the
    // last with that id), so a repeated record is omp's repeated id.
    let mut seen = vec![false; session.records.len()];
    let mut path = Vec::new();
    let mut current = Some(leaf);
    while let Some(i) = current {
        if std::mem::replace(&mut seen[i], true) {
            break;
        }
        let record = &session.records[i];
        path.push(PathEntry {
            record,
            value: OnceCell::new(),
            blobs,
            missing,
        });
        current = index.parent(i);
    }
    path.reverse();
    path
}

/// Whether the JSON text of an entry may hold the string `name` (written as it is, or with a
/// `\u` escape): when not, no member of it is `name`, and it need not be parsed.
pub(crate) fn may_name(text: &str, name: &str) -> bool {
    let text = text.as_bytes();
    memchr::memmem::find(text, name.as_bytes()).is_some()
        || memchr::memmem::find(text, b"\\u").is_some()
}

/// Whether `entry` is a `message` entry of an assistant message of GitHub Copilot with an
/// OpenAI Responses replay payload, which omp strips when it opens the file.
pub(super) fn is_copilot_replay(entry: &JsValue) -> bool {
    let Some(message) = json::is_str(entry.get("type"), "message")
        .then(|| entry.get("message"))
        .flatten()
    else {
        return false;
    };
    message
        .get("providerPayload")
        .is_some_and(|p| json::is_str(p.get("type"), "openaiResponsesHistory"))
        && json::is_str(message.get("role"), "assistant")
        && json::is_str(message.get("provider"), "github-copilot")
}

/// What omp does to every loaded assistant message of GitHub Copilot that carries an OpenAI
/// Responses replay payload (`sanitizeRehydratedOpenAIResponsesAssistantMessage`, run by
/// `SessionManager.open`): the payload goes, and so do the signatures of its thinking blocks
/// (a present signature, even `""` or `null`). Before the context is built, so a turn left
/// empty by it counts as an empty error turn.
pub(super) fn strip_copilot_replay(entry: &mut JsValue) {
    if !is_copilot_replay(entry) {
        return;
    }
    let Some(message) = entry
        .as_object_mut()
        .and_then(|o| o.get_mut("message"))
        .and_then(JsValue::as_object_mut)
    else {
        return;
    };
    if let Some(JsValue::Array(blocks)) = message.get_mut("content") {
        for block in &mut blocks.0 {
            if block_is(block, "thinking")
                && let Some(o) = block.as_object_mut()
            {
                o.remove("thinkingSignature");
            }
        }
    }
    message.remove("providerPayload");
}

/// `===` between two ids: objects and arrays are never equal (each is its own value).
pub(super) fn same(a: &Key, b: &Key) -> bool {
    !matches!(a, Key::Unique(_)) && a == b
}

impl OmpContext {
    fn empty() -> OmpContext {
        OmpContext {
            messages: Vec::new(),
            thinking_level: JsValue::string("off"),
            configured_thinking_level: None,
            service_tier: None,
            models: JsValue::Object(JsObject::new()),
            injected_ttsr_rules: Vec::new(),
            mode: Some(JsValue::string("none")),
            mode_data: None,
            missing_blobs: Vec::new(),
        }
    }

    /// The settings loop of `buildSessionContext`: the latest of each kind of change.
    /// Returns the index on the path of the latest compaction.
    fn read_settings(&mut self, path: &[PathEntry<'_, '_>]) -> Option<usize> {
        let mut compaction = None;
        let mut explicit_default = false;
        let mut models = JsObject::new();
        let mut rules: Vec<(Key, JsValue)> = Vec::new();
        // The assistant message that names the default model, read once at the end: its
        // place in `models` is kept by a placeholder set at the first one.
        let mut default_from: Option<&PathEntry<'_, '_>> = None;
        let (mut last_thinking, mut last_tier, mut last_mode) = (None, None, None);
        for (i, entry) in path.iter().enumerate() {
            let Some(type_) = entry.record.entry_type() else {
                continue;
            };
            match type_ {
                // The last of each of these sets its settings whole: only it is read.
                "thinking_level_change" => last_thinking = Some(entry),
                "service_tier_change" => last_tier = Some(entry),
                "mode_change" => last_mode = Some(entry),
                "model_change" => {
                    if let Some(model) = entry.get("model").filter(|m| m.is_truthy()) {
                        let role = match entry.get("role").filter(|r| !is_nullish(r)) {
                            Some(role) => to_js_string(Some(role)),
                            None => "default".into(),
                        };
                        if role.as_str() == Some("default") {
                            explicit_default = true;
                            default_from = None;
                        }
                        models.set(role, model.clone());
                    }
                }
                // An assistant message names the default model until one is recorded.
                "message" if !explicit_default && entry.is_assistant_message() => {
                    if default_from.is_none() {
                        models.set("default", JsValue::Null);
                    }
                    default_from = Some(entry);
                }
                "compaction" => compaction = Some(i),
                "ttsr_injection" => {
                    if let Some(JsValue::Array(names)) = entry.get("injectedRules") {
                        for (n, name) in names.0.iter().enumerate() {
                            let key = Key::of(Some(name), (i as u64) << 32 | n as u64);
                            if !rules.iter().any(|(k, _)| same(k, &key)) {
                                rules.push((key, name.clone()));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(entry) = last_thinking {
            let level = entry.get("thinkingLevel").filter(|v| !is_nullish(v));
            self.thinking_level = level.cloned().unwrap_or(JsValue::string("off"));
            self.configured_thinking_level = entry
                .get("configured")
                .filter(|v| !is_nullish(v))
                .or(level)
                .cloned();
        }
        if let Some(entry) = last_tier {
            self.service_tier = service_tier(entry.get("serviceTier"));
        }
        if let Some(entry) = last_mode {
            self.mode = entry.get("mode").cloned();
            self.mode_data = entry.get("data").cloned();
        }
        if let Some(entry) = default_from {
            let model = json::JsString::concat(&[
                to_js_string(message_member(entry, "provider")).as_wtf8(),
                b"/",
                to_js_string(message_member(entry, "model")).as_wtf8(),
            ]);
            models.set("default", JsValue::String(model));
        }
        self.models = JsValue::Object(models);
        self.injected_ttsr_rules = rules.into_iter().map(|(_, name)| name).collect();
        compaction
    }

    /// Writes the context as omp's `JSON.stringify(context)` shows it.
    pub fn write_json<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        let mut bytes = Vec::new();
        json::write_value(&mut bytes, &self.to_json());
        out.write_all(&bytes)
    }

    /// The context as a value, members in omp's order.
    pub fn to_json(&self) -> JsValue {
        let mut o = JsObject::new();
        o.set("messages", JsValue::Array(JsArray(self.messages.clone())));
        o.set("thinkingLevel", self.thinking_level.clone());
        let optional = [
            ("configuredThinkingLevel", &self.configured_thinking_level),
            ("serviceTier", &self.service_tier),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                o.set(key, value.clone());
            }
        }
        o.set("models", self.models.clone());
        o.set(
            "injectedTtsrRules",
            JsValue::Array(JsArray(self.injected_ttsr_rules.clone())),
        );
        if let Some(mode) = &self.mode {
            o.set("mode", mode.clone());
        }
        if let Some(data) = &self.mode_data {
            o.set("modeData", data.clone());
        }
        JsValue::Object(o)
    }
}

/// `value === null || value === undefined` for a present member (`??`).
fn is_nullish(value: &JsValue) -> bool {
    matches!(value, JsValue::Null)
}

fn message_member<'e>(entry: &'e PathEntry<'_, '_>, key: &str) -> Option<&'e JsValue> {
    entry.get("message").and_then(|m| m.get(key))
}

/// omp's `coerceServiceTierByFamily`.
fn service_tier(value: Option<&JsValue>) -> Option<JsValue> {
    const TIERS: [&str; 5] = ["auto", "default", "flex", "scale", "priority"];
    let family = |pairs: &[(&str, &str)]| {
        let mut o = JsObject::new();
        for (k, v) in pairs {
            o.set(*k, JsValue::string(*v));
        }
        Some(JsValue::Object(o))
    };
    match value? {
        JsValue::Null => None,
        JsValue::Object(src) => {
            let mut out = JsObject::new();
            for key in ["openai", "anthropic", "google"] {
                if let Some(tier) = src.get(key).and_then(JsValue::as_str)
                    && TIERS.contains(&tier)
                {
                    out.set(key, JsValue::string(tier));
                }
            }
            (!out.is_empty()).then_some(JsValue::Object(out))
        }
        JsValue::Array(_) => None,
        other => match other.as_str()? {
            "priority" => family(&[
                ("openai", "priority"),
                ("anthropic", "priority"),
                ("google", "priority"),
            ]),
            "openai-only" => family(&[("openai", "priority")]),
            "claude-only" => family(&[("anthropic", "priority")]),
            tier @ ("auto" | "default" | "flex" | "scale") => family(&[("openai", tier)]),
            _ => None,
        },
    }
}

/// Refuses what this builder does not reproduce (see the module docs).
fn check_supported(
    path: &[PathEntry<'_, '_>],
    compaction: Option<usize>,
) -> Result<(), OmpContextError> {
    let unsupported = |entry: &PathEntry<'_, '_>, feature| {
        Err(OmpContextError::Unsupported {
            line: entry.line(),
            feature,
        })
    };
    if let Some(c) = compaction {
        let entry = &path[c];
        if let Some(JsValue::Object(preserve)) = entry.get("preserveData") {
            for (key, feature) in [
                (
                    "snapcompact",
                    "a snapcompact archive in a compaction's preserveData",
                ),
                (
                    "openaiRemoteCompaction",
                    "an OpenAI remote compaction in preserveData",
                ),
                (
                    "anthropicCompaction",
                    "an Anthropic compaction payload in preserveData",
                ),
                (
                    "anthropic",
                    "an Anthropic compaction payload in preserveData",
                ),
            ] {
                if preserve.get(key).is_some_and(|v| !is_nullish(v)) {
                    return unsupported(entry, feature);
                }
            }
        }
        if entry
            .get("details")
            .and_then(|d| d.get("kind"))
            .is_some_and(|k| json::is_str(Some(k), "experimental-context-rollover"))
        {
            return unsupported(entry, "a context-rollover compaction");
        }
    }
    for entry in path.iter().rev() {
        if entry.type_is("reset_boundary") {
            break;
        }
        if entry.type_is("custom")
            && entry.record.may_name_context_notes
            && json::is_str(entry.get("customType"), CONTEXT_NOTES)
        {
            return unsupported(entry, "context notes");
        }
    }
    Ok(())
}

/// `appendMessage` of the model context: the message an entry contributes, if any.
fn append_message(messages: &mut Vec<JsValue>, entry: &PathEntry<'_, '_>) {
    let Some(type_) = entry.get("type").and_then(JsValue::as_str) else {
        return;
    };
    match type_ {
        "message" => {
            let Some(message) = entry.get("message") else {
                return;
            };
            let assistant = json::is_str(message.get("role"), "assistant");
            if assistant
                && (message.get("retryRecovery").is_some_and(JsValue::is_truthy)
                    || is_empty_error_turn(message))
            {
                return;
            }
            messages.push(message.clone());
        }
        "custom_message" => {
            if entry
                .get("customType")
                .and_then(JsValue::as_str)
                .is_some_and(|t| HIDDEN_CUSTOM_TYPES.contains(&t))
            {
                return;
            }
            if let Some(message) = custom_message(entry) {
                messages.push(message);
            }
        }
        "branch_summary" => {
            if let Some(summary) = entry.get("summary").filter(|s| s.is_truthy()) {
                messages.push(object(&[
                    ("role", Some(JsValue::string("branchSummary"))),
                    ("summary", Some(summary.clone())),
                    ("fromId", entry.get("fromId").cloned()),
                    ("timestamp", Some(time(entry))),
                ]));
            }
        }
        _ => {}
    }
}

/// `new Date(entry.timestamp).getTime()` as `JSON.stringify` shows it.
fn time(entry: &PathEntry<'_, '_>) -> JsValue {
    date::time_to_json(date::new_date_time(entry.get("timestamp")))
}

/// `customMessageEntryMessage`: the custom message omp restores from a `custom_message`
/// entry, `None` when its content is neither a string nor an array.
fn custom_message(entry: &PathEntry<'_, '_>) -> Option<JsValue> {
    let content = entry
        .get("content")
        .filter(|c| matches!(c, JsValue::String(_) | JsValue::Array(_)))?;
    let custom_type = match entry.get("customType") {
        Some(JsValue::String(s)) if !s.is_empty() => JsValue::String(s.clone()),
        _ => JsValue::string(DEFAULT_CUSTOM_TYPE),
    };
    let display = matches!(entry.get("display"), Some(JsValue::Bool(true)));
    let attribution = entry.get("attribution").map(|a| {
        JsValue::string(if json::is_str(Some(a), "user") {
            "user"
        } else {
            "agent"
        })
    });
    Some(object(&[
        ("role", Some(JsValue::string("custom"))),
        ("customType", Some(custom_type)),
        ("content", Some(content.clone())),
        ("display", Some(JsValue::Bool(display))),
        ("details", entry.get("details").cloned()),
        ("attribution", attribution),
        ("timestamp", Some(time(entry))),
    ]))
}

/// `createCompactionSummaryMessage` for a compaction without provider replay data.
fn compaction_summary(entry: &PathEntry<'_, '_>) -> JsValue {
    let get = |key: &str| entry.get(key).cloned();
    object(&[
        ("role", Some(JsValue::string("compactionSummary"))),
        ("summary", get("summary")),
        ("shortSummary", get("shortSummary")),
        ("tokensBefore", get("tokensBefore")),
        ("tokensAfter", get("tokensAfter")),
        ("method", get("method")),
        ("warning", get("warning")),
        ("timestamp", Some(time(entry))),
    ])
}

/// The blocks of a message's `content`, when it is an array.
fn blocks(message: &JsValue) -> &[JsValue] {
    match message.get("content") {
        Some(JsValue::Array(items)) => &items.0,
        _ => &[],
    }
}

fn block_is(block: &JsValue, t: &str) -> bool {
    json::is_str(block.get("type"), t)
}

/// Whether a string member, trimmed as JavaScript trims, is non-empty.
fn has_text(value: Option<&JsValue>) -> bool {
    value
        .and_then(JsValue::as_str)
        .is_some_and(|s| !s.trim_matches(is_js_whitespace).is_empty())
}

/// The characters `String.prototype.trim` removes.
pub(super) fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// `isEmptyErrorTurn`: an `error` turn with no text, thinking, redacted thinking or tool
/// call (unknown blocks count as content).
fn is_empty_error_turn(message: &JsValue) -> bool {
    if !json::is_str(message.get("stopReason"), "error") {
        return false;
    }
    !blocks(message)
        .iter()
        .any(|block| match block.get("type").and_then(JsValue::as_str) {
            Some("text") => has_text(block.get("text")),
            Some("thinking") => {
                has_text(block.get("thinking")) || has_text(block.get("thinkingSignature"))
            }
            Some("redactedThinking") => has_text(block.get("data")),
            Some("toolCall") => true,
            Some("fallback") => false,
            _ => true,
        })
}

/// A message's `toolCallId` / a block's `id` as a `Set` compares it.
fn id_key(value: Option<&JsValue>, unique: u64) -> Key {
    Key::of(value, unique)
}

/// Strips `toolCall` blocks that have no `toolResult` among the messages.
fn strip_dangling_tool_calls(messages: &mut Vec<JsValue>) {
    let paired: Vec<Key> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| json::is_str(m.get("role"), "toolResult"))
        .map(|(i, m)| id_key(m.get("toolCallId"), i as u64))
        .collect();
    let is_paired = |block: &JsValue| {
        let id = id_key(block.get("id"), u64::MAX);
        paired.iter().any(|p| same(p, &id))
    };
    each_assistant_from_last(messages, |messages, i| {
        let message = &messages[i];
        let dangling = blocks(message)
            .iter()
            .filter(|b| block_is(b, "toolCall") && !is_paired(b))
            .count();
        if dangling == 0 {
            return;
        }
        let normalized: Vec<JsValue> = blocks(message)
            .iter()
            .filter(|b| {
                (is_paired(b) || !block_is(b, "toolCall")) && !block_is(b, "redactedThinking")
            })
            .map(|b| {
                let signed = block_is(b, "thinking")
                    && b.get("thinkingSignature").is_some_and(JsValue::is_truthy);
                let mut b = b.clone();
                if signed && let Some(o) = b.as_object_mut() {
                    // `{ ...block, thinkingSignature: undefined }`: JSON leaves it out.
                    o.remove("thinkingSignature");
                }
                b
            })
            .collect();
        if normalized.is_empty() {
            messages.remove(i);
        } else if let Some(content) = messages[i]
            .as_object_mut()
            .and_then(|o| o.get_mut("content"))
        {
            *content = JsValue::Array(JsArray(normalized));
        }
    });
}

/// Calls `f(messages, i)` for each assistant message, last first; `f` may remove messages
/// at `i` and after.
fn each_assistant_from_last(
    messages: &mut Vec<JsValue>,
    mut f: impl FnMut(&mut Vec<JsValue>, usize),
) {
    let mut i = messages.len();
    while i > 0 {
        i -= 1;
        if json::is_str(messages[i].get("role"), "assistant") {
            f(messages, i);
        }
    }
}

/// Drops assistant turns that ended `aborted` or `error` (unless the interrupted-thinking
/// message follows), with the tool results of their calls.
fn drop_failed_turns(messages: &mut Vec<JsValue>) {
    each_assistant_from_last(messages, |messages, i| {
        let message = &messages[i];
        let stop = message.get("stopReason");
        if !json::is_str(stop, "aborted") && !json::is_str(stop, "error") {
            return;
        }
        let next = messages.get(i + 1);
        if next.is_some_and(|n| {
            json::is_str(n.get("role"), "custom")
                && json::is_str(n.get("customType"), INTERRUPTED_THINKING)
        }) {
            return;
        }
        let dropped: Vec<Key> = blocks(message)
            .iter()
            .enumerate()
            .filter(|(_, b)| block_is(b, "toolCall"))
            .map(|(n, b)| id_key(b.get("id"), n as u64))
            .collect();
        messages.remove(i);
        if dropped.is_empty() {
            return;
        }
        let mut j = messages.len();
        while j > i {
            j -= 1;
            let m = &messages[j];
            if json::is_str(m.get("role"), "toolResult") {
                let id = id_key(m.get("toolCallId"), u64::MAX - 1);
                if dropped.iter().any(|d| same(d, &id)) {
                    messages.remove(j);
                }
            }
        }
    });
}
