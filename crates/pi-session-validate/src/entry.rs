//! The checks one line allows on its own, beyond its JSON Schema: entry type and role, id
//! form, timestamps, usage arithmetic, and leftovers of older format versions. It also
//! extracts the facts the tree checks need ([`Facts`]).

use super::catalogue::{Code, PiEffect};
use super::schema::{LineSchema, escape, json_type};
use pi_session_format::date;
use pi_session_format::dialect::OMP_ENTRY_TYPES;
use pi_session_format::session::{Key, quoted};
use pi_session_format::{Dialect, PiVersion};
use serde_json::{Map, Value};

/// What one line found: a code, where (a JSON pointer) and what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finding {
    /// The code.
    pub code: Code,
    /// JSON pointer of the value in the line.
    pub pointer: String,
    /// The message.
    pub message: String,
    /// What pi does, when it differs from the catalogue.
    pub pi: Option<PiEffect>,
}

impl Finding {
    fn new(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Finding {
        Finding {
            code,
            pointer: pointer.into(),
            message: message.into(),
            pi: None,
        }
    }
}

/// What a line is, for the tree checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// A `type: "session"` line.
    Header,
    /// An object entry.
    Entry,
    /// A value that is not an object: pi keeps it as an entry without id (unless skipped).
    NonObject {
        /// Whether pi skips it rather than keeping it (`null` in 0.73.1 crashes, falsy
        /// values in 0.87.1 are skipped).
        skipped: bool,
    },
}

/// The facts of one line that the tree checks use.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: usize,
    /// Length of the line in bytes.
    pub len: usize,
    /// What the line is.
    pub kind: LineKind,
    /// `id` (JavaScript identity).
    pub id: Key,
    /// `parentId`.
    pub parent: Key,
    /// `type`, when a string.
    pub type_: Option<Box<str>>,
    /// `firstKeptEntryId` of a compaction.
    pub first_kept: Option<Key>,
    /// `targetId` of a label.
    pub target_id: Option<Key>,
    /// `fromId` of a branch summary.
    pub from_id: Option<Key>,
    /// The tool call ids of an assistant message.
    pub tool_calls: Vec<Box<str>>,
    /// The `toolCallId` of a tool result.
    pub tool_result: Option<Box<str>>,
}

impl Facts {
    /// Facts of a line with nothing but a position.
    pub(crate) fn new(line: usize, offset: usize, len: usize, kind: LineKind) -> Facts {
        Facts {
            line,
            offset,
            len,
            kind,
            id: Key::Undefined,
            parent: Key::Undefined,
            type_: None,
            first_kept: None,
            target_id: None,
            from_id: None,
            tool_calls: Vec::new(),
            tool_result: None,
        }
    }

    /// Whether pi keeps the line as an entry.
    pub(crate) fn is_entry(&self) -> bool {
        matches!(
            self.kind,
            LineKind::Entry | LineKind::NonObject { skipped: false }
        )
    }

    /// The id when it is a string.
    pub(crate) fn id_str(&self) -> Option<&str> {
        match &self.id {
            Key::String(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }
}

/// The key of a JSON member, as JavaScript compares it; `unique` identifies objects.
pub(crate) fn key_of(value: Option<&Value>, unique: u64) -> Key {
    match value {
        None => Key::Undefined,
        Some(Value::Null) => Key::Null,
        Some(Value::Bool(b)) => Key::Bool(*b),
        Some(Value::Number(n)) => Key::Number((n.as_f64().unwrap_or(f64::NAN) + 0.0).to_bits()),
        Some(Value::String(s)) => Key::string(s),
        Some(Value::Array(_) | Value::Object(_)) => Key::Unique(unique),
    }
}

/// Entry types of pi 0.73.1.
const TYPES_073: &[&str] = &[
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];
/// Entry types added by pi 0.87.1.
const TYPES_087: &[&str] = &["usage", "context_edit"];
/// Message roles of pi 0.73.1 (`hookMessage` is checked on its own).
const ROLES_073: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
];
/// Roles added by pi 0.87.1.
const ROLES_087: &[&str] = &["system"];
/// Header fields of the version-1 format.
const LEGACY_HEADER_FIELDS: &[&str] = &[
    "provider",
    "modelId",
    "thinkingLevel",
    "branchedFrom",
    "model",
];

/// Checks of the header line.
pub(crate) fn check_header(header: &Map<String, Value>, schema: LineSchema) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(Value::String(t)) = header.get("timestamp") {
        out.extend(timestamp(t, "/timestamp"));
    }
    if schema == LineSchema::V3 {
        for field in LEGACY_HEADER_FIELDS {
            if header.contains_key(*field) {
                out.push(Finding::new(
                    Code::LegacyField,
                    format!("/{field}"),
                    format!("`{field}` is a version-1 header field; version-3 sessions record it in entries (model_change, thinking_level_change)"),
                ));
            }
        }
    }
    out
}

/// Context of an entry check.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryContext {
    /// The line schema (by the header's version).
    pub schema: LineSchema,
    /// Whose types and roles are known.
    pub pi: PiVersion,
    /// Whose format the entry is checked against (oh-my-pi's adds its own checks).
    pub dialect: Dialect,
}

/// Checks of an entry line; fills `facts`.
pub(crate) fn check_entry(
    entry: &Map<String, Value>,
    cx: EntryContext,
    facts: &mut Facts,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let unique = (facts.line as u64) << 2;
    let type_ = entry.get("type");
    let v1 = cx.schema == LineSchema::V1;
    facts.type_ = type_.and_then(Value::as_str).map(Box::from);
    facts.id = key_of(entry.get("id"), unique);
    facts.parent = key_of(entry.get("parentId"), unique + 1);
    if !v1 {
        ids(entry, &mut out);
    }
    match type_ {
        None => out.push(Finding::new(
            Code::EntryTypeMissing,
            "",
            "the entry has no `type`; pi keeps it but ignores it",
        )),
        Some(Value::String(_)) => {}
        Some(other) => out.push(Finding::new(
            Code::EntryTypeMissing,
            "/type",
            format!(
                "`type` must be a string, found {}; pi keeps the entry but ignores it",
                json_type(other)
            ),
        )),
    }
    if let Some(Value::String(t)) = entry.get("timestamp") {
        out.extend(timestamp(t, "/timestamp"));
    }
    let Some(type_) = type_.and_then(Value::as_str) else {
        return out;
    };
    match type_ {
        "message" => message(entry, cx, facts, &mut out),
        "compaction" => {
            facts.first_kept = Some(key_of(entry.get("firstKeptEntryId"), unique + 2));
            if !v1 && entry.contains_key("firstKeptEntryIndex") {
                out.push(Finding::new(
                    Code::LegacyField,
                    "/firstKeptEntryIndex",
                    "`firstKeptEntryIndex` is the version-1 form of `firstKeptEntryId`; pi ignores it in a version-3 file",
                ));
            }
            usage(entry.get("usage"), "/usage", &mut out);
        }
        "branch_summary" => {
            facts.from_id = Some(key_of(entry.get("fromId"), unique + 2));
            usage(entry.get("usage"), "/usage", &mut out);
        }
        "label" => facts.target_id = Some(key_of(entry.get("targetId"), unique + 2)),
        "usage" => usage(entry.get("usage"), "/usage", &mut out),
        "model_change" if cx.dialect == Dialect::Omp => omp_model_change(entry, &mut out),
        "model_change" if !v1 && entry.contains_key("model") && !entry.contains_key("provider") => {
            out.push(Finding::new(
                Code::LegacyField,
                "/model",
                "`model` (\"provider/id\") is the version-1 form of `provider` and `modelId`; pi reads the model as empty",
            ));
        }
        "event" if !v1 => out.push(Finding::new(
            Code::LegacyField,
            "/type",
            "`event` entries come from pi before November 2025; pi ignores them",
        )),
        _ => {}
    }
    let known = TYPES_073.contains(&type_)
        || (TYPES_087.contains(&type_) && cx.pi.reads_like_0_87())
        || (type_ == "event" && !v1)
        // oh-my-pi's: known under its rules; under pi's, one diagnostic counts them all
        // (`dialect.rs`).
        || OMP_ENTRY_TYPES.contains(&type_);
    if !known {
        let message = if TYPES_087.contains(&type_) {
            format!(
                "`{type_}` entries are pi 0.87's; pi 0.73.1 keeps them in the tree and ignores them"
            )
        } else {
            format!("unknown entry type `{type_}`; pi keeps it in the tree and ignores it")
        };
        out.push(Finding::new(Code::UnknownEntryType, "/type", message));
    }
    out
}

/// oh-my-pi's `model_change`: `{model: "provider/id", role?}`.
fn omp_model_change(entry: &Map<String, Value>, out: &mut Vec<Finding>) {
    if matches!(entry.get("model"), Some(Value::String(m)) if !m.is_empty()) {
        return;
    }
    let pi_form = entry.contains_key("provider") || entry.contains_key("modelId");
    let what = match entry.get("model") {
        None if pi_form => "the entry has pi's `provider`/`modelId` but no `model`".to_owned(),
        None => "the entry has no `model`".to_owned(),
        Some(other) => format!(
            "`model` is {}, not a \"provider/id\" string",
            json_type(other)
        ),
    };
    out.push(Finding::new(
        Code::OmpModelChangeWithoutModel,
        if entry.contains_key("model") { "/model" } else { "" },
        format!("{what}: oh-my-pi ignores the change, so its role's model stays as it was when the session resumes"),
    ));
}

/// The usages oh-my-pi adds up when it opens the file (`entryUsage` in its session manager):
/// one without `cost` makes it throw, so it cannot resume the file.
pub(crate) fn omp_usage(entry: &Map<String, Value>, out: &mut Vec<Finding>) {
    let message = entry.get("message");
    let role = message.and_then(|m| m.get("role")).and_then(Value::as_str);
    let (usage, pointer) = match entry.get("type").and_then(Value::as_str) {
        Some("model_usage") => (entry.get("usage"), "/usage"),
        Some("message") if role == Some("assistant") => {
            (message.and_then(|m| m.get("usage")), "/message/usage")
        }
        Some("message")
            if role == Some("toolResult")
                && message
                    .and_then(|m| m.get("toolName"))
                    .and_then(Value::as_str)
                    == Some("task") =>
        {
            // `taskUsageFrom`: only an object counts.
            let usage = message
                .and_then(|m| m.get("details"))
                .and_then(|d| d.get("usage"))
                .filter(|u| u.is_object());
            (usage, "/message/details/usage")
        }
        _ => return,
    };
    let truthy = match usage {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    };
    let has_cost = usage
        .and_then(|u| u.get("cost"))
        .is_some_and(|c| !c.is_null());
    if truthy && !has_cost {
        out.push(Finding::new(
            Code::OmpUsageWithoutCost,
            pointer,
            "the usage has no `cost`: oh-my-pi throws while opening the file (adding up `usage.cost.total`) and cannot resume it",
        ));
    }
}

/// `id` and `parentId` of a version-2 or -3 entry.
fn ids(entry: &Map<String, Value>, out: &mut Vec<Finding>) {
    match entry.get("id") {
        Some(Value::String(id)) => {
            if !(id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))) {
                out.push(Finding::new(
                    Code::IdFormat,
                    "/id",
                    format!("id {} is not 8 lowercase hex characters", quoted(id)),
                ));
            }
        }
        None => out.push(Finding::new(Code::IdMissing, "", "the entry has no `id`")),
        Some(other) => out.push(Finding::new(
            Code::IdMissing,
            "/id",
            format!("`id` must be a string, found {}", json_type(other)),
        )),
    }
    match entry.get("parentId") {
        Some(Value::String(_) | Value::Null) => {}
        None => out.push(Finding::new(
            Code::ParentIdMissing,
            "",
            "the entry has no `parentId`; pi treats it as a root",
        )),
        Some(other) => out.push(Finding::new(
            Code::ParentIdMissing,
            "/parentId",
            format!(
                "`parentId` must be a string or null, found {}",
                json_type(other)
            ),
        )),
    }
}

/// The `message` of a `message` entry.
fn message(
    entry: &Map<String, Value>,
    cx: EntryContext,
    facts: &mut Facts,
    out: &mut Vec<Finding>,
) {
    let message = match entry.get("message") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => {
            let what = if entry.contains_key("message") {
                "is null"
            } else {
                "is missing"
            };
            out.push(Finding::new(
                Code::MessageMissing,
                if entry.contains_key("message") { "/message" } else { "" },
                format!("`message` {what}: pi throws a TypeError when it builds a context through this entry, and leaves the session out of its lists"),
            ));
            return;
        }
        // The schema reports the wrong type.
        Some(_) => return,
    };
    let role = match message.get("role") {
        Some(Value::String(role)) => role.as_str(),
        None => {
            out.push(Finding::new(
                Code::MissingField,
                "/message/role",
                "the message has no `role`; pi drops it before it reaches the model",
            ));
            return;
        }
        Some(other) => {
            out.push(Finding::new(
                Code::WrongType,
                "/message/role",
                format!("`role` must be a string, found {}; pi drops the message before it reaches the model", json_type(other)),
            ));
            return;
        }
    };
    match role {
        "assistant" => {
            if let Some(Value::Array(blocks)) = message.get("content") {
                facts.tool_calls = tool_call_ids(blocks).collect();
            }
            usage(message.get("usage"), "/message/usage", out);
        }
        "toolResult" => {
            facts.tool_result = message.get("toolCallId").and_then(Value::as_str).map(Box::from);
            usage(message.get("usage"), "/message/usage", out);
        }
        "hookMessage" if cx.schema == LineSchema::V3 => out.push(Finding::new(
            Code::HookMessageInV3,
            "/message/role",
            "`hookMessage` is the version-2 name of the `custom` role; in a version-3 file pi does not rename it, and drops the message before it reaches the model",
        )),
        "hookMessage" => {}
        _ if ROLES_073.contains(&role) => {}
        _ if ROLES_087.contains(&role) && cx.pi.reads_like_0_87() => {}
        _ if ROLES_087.contains(&role) => out.push(Finding::new(
            Code::UnknownRole,
            "/message/role",
            format!("`{role}` messages are pi 0.87's; pi 0.73.1 drops them before they reach the model"),
        )),
        _ => out.push(Finding::new(
            Code::UnknownRole,
            "/message/role",
            format!("unknown role {}; pi keeps the message in the context and drops it before it reaches the model", quoted(role)),
        )),
    }
}

/// The ids of the tool calls among an assistant message's content `blocks`, in order.
pub(crate) fn tool_call_ids(blocks: &[Value]) -> impl Iterator<Item = Box<str>> + '_ {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
        .map(Box::from)
}

/// Whether `entry` is a `message` entry whose message is an assistant's (the one whose
/// content's tool calls are facts).
pub(crate) fn is_assistant_message(entry: &Map<String, Value>) -> bool {
    entry.get("type").and_then(Value::as_str) == Some("message")
        && entry
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            == Some("assistant")
}

/// A timestamp string: parseable, and in `toISOString` form.
pub(crate) fn timestamp(text: &str, pointer: &str) -> Option<Finding> {
    let t = date::parse_date(text);
    if t.is_nan() {
        return Some(Finding::new(
            Code::TimestampInvalid,
            pointer,
            format!(
                "timestamp {} is not a date: pi reads it as an invalid date (`null` in the context it builds)",
                quoted(text)
            ),
        ));
    }
    let iso = date::to_iso_string(t);
    if iso == text {
        return None;
    }
    let how = if date::is_local_time(text) {
        "it has no time zone, so pi reads it in the machine's local time zone".to_string()
    } else {
        format!("pi reads it as {iso}")
    };
    Some(Finding::new(
        Code::TimestampNotIso,
        pointer,
        format!(
            "timestamp {} is not in JavaScript's ISO form: {how}",
            quoted(text)
        ),
    ))
}

/// Usage arithmetic: totals add up, nothing is negative.
fn usage(value: Option<&Value>, pointer: &str, out: &mut Vec<Finding>) {
    let Some(Value::Object(usage)) = value else {
        return;
    };
    let number = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_f64);
    let parts = ["input", "output", "cacheRead", "cacheWrite"];
    let negative = |m: &Map<String, Value>, base: &str, out: &mut Vec<Finding>| {
        for (k, v) in m {
            if v.as_f64().is_some_and(|n| n < 0.0) {
                out.push(Finding::new(
                    Code::UsageNegative,
                    format!("{base}/{}", escape(k)),
                    format!("`{k}` is negative ({v})"),
                ));
            }
        }
    };
    negative(usage, pointer, out);
    let sum = |m: &Map<String, Value>| parts.iter().map(|k| number(m, k)).sum::<Option<f64>>();
    if let (Some(total), Some(sum)) = (number(usage, "totalTokens"), sum(usage))
        && total != sum
    {
        out.push(Finding::new(
            Code::UsageMismatch,
            format!("{pointer}/totalTokens"),
            format!("totalTokens is {total} but input + output + cacheRead + cacheWrite = {sum}"),
        ));
    }
    if let Some(Value::Object(cost)) = usage.get("cost") {
        let base = format!("{pointer}/cost");
        negative(cost, &base, out);
        if let (Some(total), Some(sum)) = (number(cost, "total"), sum(cost))
            && (total - sum).abs() > 1e-9 * total.abs().max(sum.abs()).max(1.0)
        {
            out.push(Finding::new(
                Code::UsageMismatch,
                format!("{base}/total"),
                format!("cost.total is {total} but the costs add up to {sum}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(value: Value) -> (Vec<Code>, Facts) {
        let mut facts = Facts::new(1, 0, 0, LineKind::Entry);
        let cx = EntryContext {
            schema: LineSchema::V3,
            pi: PiVersion::V0_73,
            dialect: Dialect::Pi,
        };
        let found = check_entry(value.as_object().unwrap(), cx, &mut facts);
        (found.into_iter().map(|f| f.code).collect(), facts)
    }

    #[test]
    fn a_well_formed_assistant_message_has_no_findings() {
        let (codes, facts) = entry(json!({"type":"message","id":"a1b2c3d4","parentId":null,
            "timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[
            {"type":"toolCall","id":"call_1","name":"ls","arguments":{}}],
            "usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,
            "cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.30000000000000004}}}}));
        assert_eq!(codes, vec![]);
        assert_eq!(facts.tool_calls, vec![Box::from("call_1")]);
    }

    #[test]
    fn usage_problems() {
        let (codes, _) = entry(json!({"type":"message","id":"a1b2c3d4","parentId":null,
            "message":{"role":"assistant","usage":{"input":-1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":5}}}));
        assert_eq!(codes, vec![Code::UsageNegative, Code::UsageMismatch]);
    }

    #[test]
    fn timestamps() {
        assert!(timestamp("2026-01-01T00:00:00.000Z", "").is_none());
        assert_eq!(
            timestamp("2026-01-01T00:00:00Z", "").unwrap().code,
            Code::TimestampNotIso
        );
        assert!(
            timestamp("2026-01-01T00:00:00", "")
                .unwrap()
                .message
                .contains("local time")
        );
        assert_eq!(
            timestamp("yesterday", "").unwrap().code,
            Code::TimestampInvalid
        );
    }

    #[test]
    fn ids_and_types() {
        let (codes, _) = entry(json!({"type":7,"id":"NOT-HEX","parentId":5}));
        assert_eq!(
            codes,
            vec![
                Code::IdFormat,
                Code::ParentIdMissing,
                Code::EntryTypeMissing
            ]
        );
        let (codes, _) = entry(json!({"type":"usage","id":"a1b2c3d4","parentId":null}));
        assert_eq!(codes, vec![Code::UnknownEntryType]);
    }
}
