//! The typed serde model of every line of a pi session file.
//!
//! This module is the *typed view* of the format: one Rust type per header, entry type,
//! message role and content block that pi (the TypeScript reference implementation) writes,
//! with `///` docs that say what pi writes, since when, and which legacy shapes exist. It is
//! used to **validate** lines and to **generate a JSON Schema** of the format
//! (`schemars::schema_for!(FileEntry)`); every doc comment becomes a schema `description`.
//!
//! The loader, the migrations and the context builder do **not** go through these types: they
//! work on raw JSON values, because pi itself never validates a line (any JSON value is
//! accepted, missing fields become `undefined`, odd values are coerced by JavaScript) and
//! because a rewritten file must keep pi's key order and number formatting. These types are
//! therefore a *description* of what a well-formed line looks like, not the reader:
//!
//! - **Lossless.** Every struct has a `#[serde(flatten)] extra` map that keeps the fields this
//!   model does not know (later pi versions, the oh-my-pi fork, third-party writers), and each
//!   tagged union ([`Entry`], [`AgentMessage`], [`ContentBlock`]) has an `Unknown` variant
//!   holding the raw object of an unknown `type` / `role`. Deserializing a line and serializing
//!   it again gives the same JSON value (key order aside: `serde_json::Map` sorts keys).
//!   Explicit `null`s survive too: a field that pi may write as `null` is typed so that `null`
//!   and "absent" stay distinct (see [`BashExecutionMessage::exit_code`]).
//! - **Strict where pi's types are.** A field that pi's TypeScript types declare required is
//!   required here; an optional field (`foo?: T`) may be absent but, when present, must have
//!   type `T` (an explicit `null` is rejected unless the TypeScript type allows it). A known
//!   `type`/`role` whose fields do not match is an error, not an `Unknown` value.
//! - **Required but nullable.** `parentId` (and [`ContextEditEntry::replacement`],
//!   [`BranchSummaryMessage::from_id`]) must be present and may be `null`. Serde's derive
//!   treats a missing `Option` field as `None`, so these fields are declared with
//!   `#[serde(with = "nullable")]`, which turns a missing key into a "missing field" error
//!   while still accepting `null`.
//! - **Version.** The model describes version-3 files ([`CURRENT_VERSION`]). Lines of v1 files
//!   (no `id`/`parentId` on entries) only validate after the v1→v2→v3 migration; legacy fields
//!   that survive migration (header `provider`, compaction `firstKeptEntryIndex`, ...) are
//!   modelled as optional fields.
//!
//! Numbers: token counts and millisecond timestamps are JSON integers in every file pi writes
//! and are typed `u64`; costs are arbitrary JSON numbers and are kept as
//! [`serde_json::Number`] so that `0` and `0.0` round-trip unchanged.
//!
//! Sources: pi-mono v0.58.3 and `@mariozechner/pi-coding-agent@0.73.1` (`session-manager.ts`,
//! `messages.ts`, pi-ai `types.ts`), and `@earendil-works/pi-coding-agent@0.87.1` /
//! `@earendil-works/pi-ai@0.87.1` (`dist/**/*.d.ts`, `docs/session-format.md`,
//! `docs/message-types.md`) for the fields added after 0.73.1.
//!
//! Long file: it is the specification's typed half, one type per entry, message and block
//! with the docs that become the JSON Schemas' descriptions, read top to bottom like the
//! format documentation (header, entries, messages, content, then the serde helpers); the
//! `Arbitrary` helpers are in `types/arb.rs`.

use std::collections::BTreeMap;

#[cfg(feature = "schema")]
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

#[cfg(feature = "arbitrary")]
pub mod arb;

/// The session format version pi writes in the header (`CURRENT_SESSION_VERSION`); unchanged
/// from pi 0.58.3 through 0.87.1. Files without a `version` are v1 (linear, no entry ids);
/// v2 (pi 0.31.0, 2026-01-02) introduced the `id`/`parentId` tree; v3 (pi 0.35.0, 2026-01-05)
/// renamed the `hookMessage` role to `custom`. Later additions (entry types, fields, roles)
/// did not bump it.
pub const CURRENT_VERSION: u32 = 3;

// =============================================================================================
// Serde and schema helpers
// =============================================================================================

/// Optional fields:
/// `#[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]`.
///
/// An absent key takes the default `None`; a present key is `Some(T)`. `null` is accepted only
/// if `T` accepts it (`Value`, `Option<_>`), so an explicit `null` is never silently turned
/// into "absent". The schema comes from `#[schemars(with = "T")]`: optional, not nullable.
mod optional {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer, T: Serialize>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    pub(super) fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        T::deserialize(deserializer).map(Some)
    }
}

/// Required-but-nullable fields: `#[serde(with = "nullable")]` on an `Option<T>` without
/// `default`, plus `#[schemars(schema_with = "nullable::schema::<T>")]`.
///
/// Serde's derive treats a missing `Option` field as `None`; any `with`/`deserialize_with`
/// disables that rule, so a missing key is a "missing field" error while `null` still
/// deserializes to `None` (and `None` serializes as `null`).
mod nullable {
    #[cfg(feature = "schema")]
    use schemars::{JsonSchema, Schema, SchemaGenerator};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer, T: Serialize>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    pub(super) fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(deserializer)
    }

    /// Schema: `T` or `null`, and listed in `required`.
    #[cfg(feature = "schema")]
    pub(super) fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<Option<T>>()
    }
}

/// (De)serializes [`CompactionEntry::system_message`]: a [`SystemMessage`] whose JSON object
/// also has `"role":"system"` (it is a complete `role: "system"` message in pi).
mod system_role {
    #[cfg(feature = "schema")]
    use schemars::JsonSchema;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::SystemMessage;

    /// Serialization view: adds the `role` key.
    #[derive(Serialize)]
    #[serde(tag = "role")]
    enum Borrowed<'a> {
        #[serde(rename = "system")]
        System(&'a SystemMessage),
    }

    /// Deserialization view and schema: requires and removes the `role` key.
    #[derive(Deserialize)]
    #[cfg_attr(feature = "schema", derive(JsonSchema))]
    #[serde(tag = "role")]
    #[cfg_attr(feature = "schema", schemars(inline))]
    pub(super) enum WithRole {
        /// A `role: "system"` message.
        #[serde(rename = "system")]
        System(SystemMessage),
    }

    pub(super) fn serialize<S: Serializer>(
        value: &Option<SystemMessage>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(message) => Borrowed::System(message).serialize(serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SystemMessage>, D::Error> {
        let WithRole::System(message) = WithRole::deserialize(deserializer)?;
        Ok(Some(message))
    }
}

/// A union discriminated by one string field (`type` or `role`) with an `Unknown` fallback.
trait TaggedUnion {
    /// The discriminating key (read by the schema of `Unknown`).
    #[cfg_attr(not(feature = "schema"), allow(dead_code))]
    const TAG: &'static str;
    /// The tag values that have a typed variant.
    const KNOWN_TAGS: &'static [&'static str];
}

/// Schema of an `Unknown` variant: any object whose tag is not one of the known values (a
/// missing or non-string tag included). It excludes the known tags so that a malformed known
/// entry does not validate as "unknown", which keeps the variants mutually exclusive.
#[cfg(feature = "schema")]
fn unknown_variant_schema<U: TaggedUnion>(_: &mut SchemaGenerator) -> Schema {
    let tag = U::TAG;
    schemars::json_schema!({
        "type": "object",
        "not": { "required": [tag], "properties": { tag: { "enum": U::KNOWN_TAGS } } }
    })
}

/// Declares a union discriminated by `$tag`: one newtype variant per known tag value, plus
/// `Unknown(Map)` for any other object.
///
/// Serialization is serde's internally tagged representation (the tag first, then the
/// struct's fields); `Unknown` serializes its map unchanged. Deserialization is hand-written:
/// serde's derive would fall back to an untagged variant on *any* error, hiding a malformed
/// known entry in `Unknown`; here the tag decides, and a known tag with bad fields is an error.
macro_rules! tagged_union {
    (
        $(#[$meta:meta])*
        pub enum $name:ident (
            tag = $tag:literal,
            unknown = $unknown_doc:literal,
            unknown_schema = $unknown_schema:literal $(,)?
        ) {
            $(
                $(#[$variant_meta:meta])*
                $value:literal => $variant:ident($ty:ty),
            )+
        }
    ) => {
        $(#[$meta])*
        // Variants differ in size (an assistant message is several hundred bytes); they are
        // kept unboxed so that they can be matched and destructured directly.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[cfg_attr(feature = "schema", derive(JsonSchema))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        #[serde(tag = $tag)]
        // pi adds entry types, roles and blocks between releases.
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$variant_meta])*
                #[serde(rename = $value)]
                $variant($ty),
            )+
            #[doc = $unknown_doc]
            #[serde(untagged)]
            #[cfg_attr(feature = "schema", schemars(schema_with = $unknown_schema))]
            Unknown(
                #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
                Map<String, Value>,
            ),
        }

        impl TaggedUnion for $name {
            const TAG: &'static str = $tag;
            const KNOWN_TAGS: &'static [&'static str] = &[$($value),+];
        }

        impl $name {
            /// The tag values that have a typed variant; any other value is `Unknown`.
            pub const KNOWN_TAGS: &'static [&'static str] = <Self as TaggedUnion>::KNOWN_TAGS;
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let mut object = Map::<String, Value>::deserialize(deserializer)?;
                let tag = match object.get($tag) {
                    Some(Value::String(tag)) => tag.clone(),
                    _ => return Ok(Self::Unknown(object)),
                };
                match tag.as_str() {
                    $(
                        $value => {
                            object.remove($tag);
                            <$ty>::deserialize(Value::Object(object))
                                .map(Self::$variant)
                                .map_err(|e| {
                                    D::Error::custom(format_args!(
                                        "invalid {} {:?}: {}", $tag, $value, e
                                    ))
                                })
                        }
                    )+
                    _ => Ok(Self::Unknown(object)),
                }
            }
        }
    };
}

// =============================================================================================
// File lines and the header
// =============================================================================================

/// Any line of a session file: the `session` header or an entry.
///
/// pi writes exactly one header as the first line, but a file can contain further
/// `type: "session"` lines (pi's `_persist` can append a duplicate header); those are headers
/// too. Any object whose `type` is not `"session"` is an [`Entry`].
#[allow(clippy::large_enum_variant)] // kept unboxed for direct matching, like `Entry`
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(untagged)]
pub enum FileEntry {
    /// A `{"type":"session", ...}` line.
    Header(SessionHeader),
    /// Any other line.
    #[cfg_attr(feature = "schema", schemars(schema_with = "non_header_entry_schema"))]
    Entry(Entry),
}

/// Schema of [`FileEntry::Entry`]: an [`Entry`] whose `type` is not `"session"` (such a line is
/// always read as a header, so a malformed header must not validate as an unknown entry).
#[cfg(feature = "schema")]
fn non_header_entry_schema(generator: &mut SchemaGenerator) -> Schema {
    let entry = generator.subschema_for::<Entry>();
    schemars::json_schema!({
        "allOf": [
            entry,
            { "not": { "required": ["type"], "properties": { "type": { "const": "session" } } } }
        ]
    })
}

impl<'de> Deserialize<'de> for FileEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("type").and_then(Value::as_str) == Some("session") {
            SessionHeader::deserialize(value)
                .map(FileEntry::Header)
                .map_err(|e| D::Error::custom(format_args!("invalid session header: {e}")))
        } else {
            Entry::deserialize(value)
                .map(FileEntry::Entry)
                .map_err(D::Error::custom)
        }
    }
}

/// The constant `type` of a header line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum SessionHeaderType {
    /// `"session"`.
    #[default]
    #[serde(rename = "session")]
    Session,
}

/// The first line of a session file: `{"type":"session","version":3,"id":..,"timestamp":..,
/// "cwd":..,"parentSession"?:..}` (pi's key order). Metadata only, not part of the entry tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Always `"session"`.
    pub r#type: SessionHeaderType,
    /// Format version; pi writes `3` ([`CURRENT_VERSION`]). Absent in v1 files (pi before
    /// 0.31.0, 2026-01-02), which pi migrates on load. pi compares it with JS
    /// semantics (`"3"` counts as 3, `null` as 1); this model accepts only integers.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u32"))]
    pub version: Option<u32>,
    /// Session id, also the suffix of the file name: a UUID v4 up to pi 0.66, a UUID v7 since
    /// 0.67.1, or any caller-chosen string (`newSession({id})`, `--session-id` since 0.76.0;
    /// pi 0.87.1 restricts new ids to `[A-Za-z0-9._-]`).
    pub id: String,
    /// Creation time, `new Date().toISOString()` (`YYYY-MM-DDTHH:mm:ss.sssZ`); the same value
    /// appears, with `:` and `.` replaced by `-`, in the file name. Not validated by pi.
    pub timestamp: String,
    /// Working directory the session was started in, as given (no normalisation). pi 0.73.1
    /// refuses to resume a session whose header lacks it (`MissingSessionCwdError`).
    pub cwd: String,
    /// Path of the session this one was forked/cloned from (`/fork`, `/clone`,
    /// `newSession({parentSession})`, `forkFrom`), exactly as given. Omitted when there is
    /// none. The oh-my-pi fork writes the parent's session *id* here instead.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub parent_session: Option<String>,
    /// Legacy (v1 headers, November–December 2025): provider of the model the session started
    /// with. Ignored by v3 readers; kept untouched by migration.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub provider: Option<String>,
    /// Legacy (v1 headers, November–December 2025): id of the model the session started with.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub model_id: Option<String>,
    /// Legacy (v1 headers): thinking level the session started with. v1 pi restored it from
    /// the header; v3 `buildSessionContext` ignores it.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub thinking_level: Option<String>,
    /// Legacy (v1 headers): path of the session this one was branched from (the predecessor of
    /// `parentSession`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub branched_from: Option<String>,
    /// Legacy (headers written before 2025-11-13): the model as one `"provider/id"` string.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub model: Option<String>,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `title`, `titleSource`,
    /// `additionalDirectories`, `previousSessionFiles`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

// =============================================================================================
// Entries
// =============================================================================================

tagged_union! {
    /// One entry line (every line after the header), discriminated by `type`.
    ///
    /// Every entry has `id` (usually 8 lowercase hex characters), `parentId` (the parent
    /// entry's id, `null` for a root; several roots are normal) and `timestamp` (ISO-8601
    /// string). Entries form a tree; the current leaf is not stored (it is the last entry of
    /// the file). An object whose `type` is none of the known values (pre-2025-11-12
    /// `event` lines, oh-my-pi's `model_usage`, `title_change`, ..., a `session` line read as
    /// an entry) is kept as [`Entry::Unknown`].
    pub enum Entry (
        tag = "type",
        unknown = "Any other object (unknown or missing `type`), kept verbatim including its `type`.",
        unknown_schema = "unknown_variant_schema::<Entry>",
    ) {
        /// `message`: one [`AgentMessage`] of the conversation (`appendMessage`).
        "message" => Message(MessageEntry),
        /// `thinking_level_change`: the user changed the reasoning level.
        "thinking_level_change" => ThinkingLevelChange(ThinkingLevelChangeEntry),
        /// `model_change`: the user switched models.
        "model_change" => ModelChange(ModelChangeEntry),
        /// `usage` (pi 0.86.0+): model usage outside assistant messages, e.g. cache warming.
        "usage" => Usage(UsageEntry),
        /// `compaction`: a summary that replaces the entries before `firstKeptEntryId`.
        "compaction" => Compaction(CompactionEntry),
        /// `branch_summary`: a summary of an abandoned branch (`/tree` navigation).
        "branch_summary" => BranchSummary(BranchSummaryEntry),
        /// `custom`: extension state; never part of the model context.
        "custom" => Custom(CustomEntry),
        /// `custom_message`: an extension message that is part of the model context.
        "custom_message" => CustomMessage(CustomMessageEntry),
        /// `context_edit` (pi 0.87.0+): replaces or hides an earlier entry's context content.
        "context_edit" => ContextEdit(ContextEditEntry),
        /// `label`: a user bookmark on another entry.
        "label" => Label(LabelEntry),
        /// `session_info`: session metadata (the display name).
        "session_info" => SessionInfo(SessionInfoEntry),
    }
}

/// `{"type":"message","id","parentId","timestamp","message"}`: one message of the
/// conversation. Every role is pushed into the model context verbatim by
/// `buildSessionContext` (and filtered later by `convertToLlm`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    /// Entry id: 8 lowercase hex characters from pi (collision-checked, falling back to a full
    /// UUID); v1→v2 migration assigns the first 8 hex characters of a random UUID.
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required: pi always writes the key.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended, `new Date().toISOString()`.
    pub timestamp: String,
    /// The message; its `role` selects the shape.
    pub message: AgentMessage,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"thinking_level_change","id","parentId","timestamp","thinkingLevel"}`
/// (`appendThinkingLevelChange`). The latest one on the path sets the session's level; pi
/// appends one on resume when the branch has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// The new level: `off`, `minimal`, `low`, `medium`, `high`, `xhigh` (pi-ai 0.87 adds
    /// `max`). Not validated by pi.
    pub thinking_level: String,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `configured`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"model_change","id","parentId","timestamp","provider","modelId"}`
/// (`appendModelChange`). The latest one on the path (or the latest assistant message) sets
/// the session's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// Provider id, e.g. `anthropic`, `openai-codex`, `fireworks`.
    pub provider: String,
    /// Model id within the provider, e.g. `claude-sonnet-4-5`.
    pub model_id: String,
    /// Legacy (before 2025-11-13): the model as one `"provider/id"` string, written instead of
    /// `provider`/`modelId`. The oh-my-pi fork still writes only this field.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub model: Option<String>,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `role`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"usage","id","parentId","timestamp","kind","provider","model","usage","note"?}`
/// (pi 0.86.0+, `appendUsage`): model usage that is not an assistant message, e.g. prompt
/// cache warming. Counted in session totals; not part of the model context and hidden from
/// the tree view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct UsageEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// Free-form usage category, e.g. `"cache_warm"`; readers should accept any value.
    pub kind: String,
    /// Provider that was billed.
    pub provider: String,
    /// Model that was used.
    pub model: String,
    /// The tokens and cost.
    pub usage: Usage,
    /// Human-readable qualifier for usage notices; omitted when empty.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub note: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"compaction","id","parentId","timestamp","summary","firstKeptEntryId",
/// "tokensBefore","details"?,"usage"?,"fromHook"?,"systemMessage"?}` (`appendCompaction`).
///
/// In the context the latest compaction on the path becomes a `compactionSummary` message
/// (preceded by `systemMessage` when present), followed by the entries from
/// `firstKeptEntryId` up to the compaction and everything after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// The LLM- (or extension-) written summary of the compacted history (Markdown).
    pub summary: String,
    /// Id of the first entry kept verbatim before this compaction. A retain-none compaction
    /// stores its own id (pi 0.87.1). It may name an entry that is not on the path (pi then keeps
    /// nothing before the compaction). v1→v2 migration derives it from `firstKeptEntryIndex`
    /// and leaves it absent for forward references, so such migrated lines do not validate.
    pub first_kept_entry_id: String,
    /// Estimated context tokens before compaction.
    pub tokens_before: u64,
    /// Implementation data, not sent to the model: pi writes
    /// `{"readFiles":[..],"modifiedFiles":[..]}`; extensions write anything (even `null`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// Usage of the LLM call(s) that produced the summary (pi 0.81.0+); counted in totals.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Usage"))]
    pub usage: Option<Usage>,
    /// `true` when an extension produced the compaction; `false` or absent when pi did
    /// (legacy name from when extensions were hooks; oh-my-pi writes `fromExtension`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub from_hook: Option<bool>,
    /// pi 0.86.0+: the replayed system prompt and tool declarations at this boundary (a
    /// `role:"system"` message whose `timestamp` is this entry's time). It becomes the leading
    /// system message of the compacted context; system messages among the kept entries are
    /// dropped in its favour. Absent on older entries and when there is no system state.
    /// In JSON the object carries `"role":"system"`; in Rust that key is implied by the type.
    #[serde(default, with = "system_role", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "system_role::WithRole"))]
    pub system_message: Option<SystemMessage>,
    /// Legacy (v1 compactions): index of the first kept line, counting the header as 0. The
    /// v1→v2 migration replaces a numeric value by `firstKeptEntryId` and deletes it; a
    /// non-numeric value is left in place.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub first_kept_entry_index: Option<u64>,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `shortSummary`, `tokensAfter`,
    /// `preserveData`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"branch_summary","id","parentId","timestamp","fromId","summary","details"?,
/// "usage"?,"fromHook"?}` (`branchWithSummary`): the summary of a branch the user navigated
/// away from. In the context it becomes a `branchSummary` message when `summary` is non-empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// The entry the new branch continues from, or `null` when the summary starts a new root.
    /// Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// pi 0.84.3+: the abandoned leaf whose path was summarised (`"root"` when there was
    /// none). Up to 0.84.2 pi wrote the navigation target instead, i.e. the same value as
    /// `parentId` (or `"root"`); readers must accept both.
    pub from_id: String,
    /// The summary text; an empty summary contributes nothing to the context.
    pub summary: String,
    /// Implementation data, not sent to the model (pi: `{"readFiles","modifiedFiles"}`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// Usage of the LLM call that produced the summary (pi 0.81.0+).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Usage"))]
    pub usage: Option<Usage>,
    /// `true` when an extension produced the summary (legacy name).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub from_hook: Option<bool>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"custom","customType","data"?,"id","parentId","timestamp"}` (`appendCustomEntry`;
/// note pi writes the base fields *last*): extension state persisted in the session. Never
/// part of the model context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// Identifies the extension that owns the entry (e.g. `pi.bug-report`).
    pub custom_type: String,
    /// Extension data, any JSON value (even `null`); absent when the extension passed none.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub data: Option<Value>,
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"custom_message","customType","content","display","details"?,"id","parentId",
/// "timestamp"}` (`appendCustomMessageEntry`, since 2025-12-26; base fields last): an extension
/// message that *is* part of the model context, as a `custom` role message (sent as user
/// content).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    /// Identifies the extension that owns the message.
    pub custom_type: String,
    /// The message content: a string or text/image blocks (like a user message).
    pub content: Content,
    /// `true`: shown in the TUI with distinct styling; `false`: hidden.
    pub display: bool,
    /// Extension metadata, not sent to the model.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `attribution`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"context_edit","id","parentId","timestamp","targetId","replacement"}` (pi 0.87.0+,
/// `appendContextEdit`): an append-only change to one earlier entry's contribution to the
/// model context. The latest edit of a target on the active path wins; raw history, UI and
/// usage totals are unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ContextEditEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// The edited entry: a `user`, `assistant` or `toolResult` message entry or a
    /// `custom_message` entry on the same branch.
    pub target_id: String,
    /// `null` omits the target from the model context; otherwise its content is replaced
    /// (role and metadata kept). Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<ContextEditReplacement>")
    )]
    pub replacement: Option<ContextEditReplacement>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// The non-null `replacement` of a [`ContextEditEntry`]: `{"content": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ContextEditReplacement {
    /// The new content. pi normalises a string replacement of an `assistant`/`toolResult`
    /// target to one text block before writing, since those roles require arrays.
    pub content: Content,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"label","id","parentId","timestamp","targetId","label"?}` (`appendLabelChange`):
/// sets or clears the user label of another entry. Labels apply in file order; labels are
/// part of the path (appending one advances the leaf).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601); pi 0.65+ shows it as the label's time.
    pub timestamp: String,
    /// The labelled entry (need not exist).
    pub target_id: String,
    /// The label; absent (written for `undefined`) or empty clears the target's label.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub label: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"session_info","id","parentId","timestamp","name"}` (`appendSessionInfo`, `/name`):
/// session metadata. The latest entry in the file sets the display name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoEntry {
    /// Entry id (8 hex characters from pi).
    pub id: String,
    /// Id of the parent entry, or `null` for a root entry. Required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO-8601).
    pub timestamp: String,
    /// Display name, trimmed (line breaks become spaces) by pi before writing. Since pi 0.59.0
    /// an empty or whitespace-only name clears the name.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

// =============================================================================================
// Messages
// =============================================================================================

tagged_union! {
    /// A message (`message.message` of a `message` entry), discriminated by `role`.
    ///
    /// pi-ai defines `system`, `user`, `assistant`, `toolResult`; the coding agent adds
    /// `bashExecution`, `custom`, `branchSummary`, `compactionSummary`. `hookMessage` exists
    /// only in un-migrated v2 files. Extensions can add roles by declaration merging; those
    /// (and oh-my-pi's `developer`, `fileMention`, ...) are kept as [`AgentMessage::Unknown`].
    pub enum AgentMessage (
        tag = "role",
        unknown = "Any other object (unknown or missing `role`), kept verbatim including its `role`.",
        unknown_schema = "unknown_variant_schema::<AgentMessage>",
    ) {
        /// `user`: a prompt.
        "user" => User(UserMessage),
        /// `assistant`: a model response.
        "assistant" => Assistant(AssistantMessage),
        /// `toolResult`: the result of one tool call.
        "toolResult" => ToolResult(ToolResultMessage),
        /// `bashExecution`: a `!`/`!!` shell command run by the user.
        "bashExecution" => BashExecution(BashExecutionMessage),
        /// `custom`: an extension message (v3; migrated from `hookMessage`).
        "custom" => Custom(CustomMessage),
        /// `hookMessage`: the v2 name of `custom`.
        "hookMessage" => HookMessage(HookMessage),
        /// `branchSummary`: built from a `branch_summary` entry; pi does not store it.
        "branchSummary" => BranchSummary(BranchSummaryMessage),
        /// `compactionSummary`: built from a `compaction` entry; pi does not store it.
        "compactionSummary" => CompactionSummary(CompactionSummaryMessage),
        /// `system` (pi 0.86.0+): system prompt and tool declarations.
        "system" => System(SystemMessage),
    }
}

/// `{"role":"user","content","timestamp"}`: a user prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// The prompt: a plain string or text/image blocks. pi's own prompts are block arrays;
    /// strings come from the SDK/RPC and third-party writers.
    pub content: Content,
    /// Creation time in Unix milliseconds (`Date.now()`).
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"assistant","content","api","provider","model","usage","stopReason","timestamp",
/// ...}`: a model response as pi-ai produced it (key order is pi-ai's; later-added keys such as
/// `errorMessage` and `responseId` come after `timestamp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in output order; `[]` for an aborted or failed
    /// request.
    pub content: Vec<ContentBlock>,
    /// Wire API used, e.g. `anthropic-messages`, `openai-responses`,
    /// `openai-codex-responses`, `openai-completions`, `google-generative-ai`.
    pub api: String,
    /// Provider id, e.g. `anthropic`, `openai`, `fireworks`.
    pub provider: String,
    /// Requested model id.
    pub model: String,
    /// pi-ai ≤0.73.1 (not in 0.58.3): the model the provider reports having used, when it
    /// differs.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub response_model: Option<String>,
    /// pi-ai ≤0.73.1 (not in 0.58.3): provider response id (Anthropic message id, OpenAI
    /// response id, ...).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub response_id: Option<String>,
    /// pi-ai after 0.73.1 (present in 0.87.1): exact provider-native effort level used;
    /// absent for legacy or unmanaged responses.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub provider_thinking_level: Option<String>,
    /// pi-ai ≤0.73.1 (not in 0.58.3): runtime diagnostics recorded while producing the
    /// response (e.g. transport fallbacks, provider errors).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<AssistantMessageDiagnostic>"))]
    pub diagnostics: Option<Vec<AssistantMessageDiagnostic>>,
    /// Tokens and cost of the request.
    pub usage: Usage,
    /// Why generation stopped: `stop`, `length`, `toolUse`, `error`, `aborted`; pi-ai 0.84+
    /// also `deferred` (and `pending` while streaming, never persisted).
    pub stop_reason: String,
    /// pi-ai 0.84+: handle to fetch a `deferred` response later.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "DeferredHandle"))]
    pub deferred: Option<DeferredHandle>,
    /// Error text for `error`/`aborted` (e.g. `"Request was aborted."`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub error_message: Option<String>,
    /// pi-ai after 0.73.1 (present in 0.87.1): the provider's own stop reason before
    /// mapping.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub raw_stop_reason: Option<String>,
    /// pi-ai 0.84.2+: whether the provider reported that the model explicitly ended its turn
    /// (OpenAI Codex `end_turn`); diagnostic only.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub end_turn: Option<bool>,
    /// Completion time in Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim (e.g. oh-my-pi's `providerPayload`).
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// One entry of [`AssistantMessage::diagnostics`] (pi-ai `AssistantMessageDiagnostic`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessageDiagnostic {
    /// Diagnostic kind (free-form string).
    #[serde(rename = "type")]
    pub kind: String,
    /// When it was recorded, Unix milliseconds.
    pub timestamp: u64,
    /// The error, when the diagnostic is about one.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "DiagnosticErrorInfo"))]
    pub error: Option<DiagnosticErrorInfo>,
    /// Extra JSON data.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Map<String, Value>"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_map))]
    pub details: Option<Map<String, Value>>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// An error captured in an [`AssistantMessageDiagnostic`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticErrorInfo {
    /// Error class name.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
    /// Error message.
    pub message: String,
    /// Stack trace.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub stack: Option<String>,
    /// Error code: a string or a number.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub code: Option<Value>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// pi-ai 0.84+ `DeferredHandle`: what is needed to retrieve a response the provider finishes
/// asynchronously (`stopReason: "deferred"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct DeferredHandle {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model_id: String,
    /// Wire API.
    pub api: String,
    /// Provider token, e.g. a response id or batch id plus row id.
    pub id: String,
    /// When the handle expires, Unix milliseconds.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub expires_at: Option<u64>,
    /// Suggested polling delay in milliseconds.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub poll_after_ms: Option<u64>,
    /// Provider conversion data needed to rebuild the final message (any JSON value).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub data: Option<Value>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"toolResult","toolCallId","toolName","content","details"?,"usage"?,"isError",
/// "timestamp"}`: the result of one [`ToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The `id` of the tool call this answers.
    pub tool_call_id: String,
    /// The tool's name, e.g. `read`, `bash`, `edit`.
    pub tool_name: String,
    /// Text/image blocks sent back to the model (always an array).
    pub content: Vec<ContentBlock>,
    /// Tool-specific data for the UI, not sent to the model (e.g. `{"diff": ..}` for `edit`).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// pi 0.81.0+: usage of nested model work done by the tool; counted in session totals,
    /// not in context accounting.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Usage"))]
    pub usage: Option<Usage>,
    /// Whether the tool failed.
    pub is_error: bool,
    /// Completion time, Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"bashExecution","command","output","exitCode","cancelled","truncated",
/// "fullOutputPath"?,"timestamp","excludeFromContext"?}`: a shell command the user ran with
/// `!` (or `!!`, excluded from the context). Sent to the model as user text. Has no `content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command line.
    pub command: String,
    /// Captured output (possibly truncated).
    pub output: String,
    /// Exit code. TypeScript `number | undefined`: absent when the process did not report one
    /// (cancelled), and `null` in files where Node reported a `null` code (killed by a
    /// signal). `None` = absent, `Some(None)` = `null`, so both round-trip.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i64>"))]
    pub exit_code: Option<Option<i64>>,
    /// Whether the user cancelled the command.
    pub cancelled: bool,
    /// Whether `output` was truncated.
    pub truncated: bool,
    /// Temp file holding the full output when truncated.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub full_output_path: Option<String>,
    /// When the command finished, Unix milliseconds.
    pub timestamp: u64,
    /// `true` for `!!` commands: shown to the user but not sent to the model.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub exclude_from_context: Option<bool>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"custom","customType","content","display","details"?,"timestamp"}`: an extension
/// message (`sendMessage`). New ones are stored as `custom_message` *entries*; this role
/// appears in `message` entries migrated from v2 `hookMessage`, and in memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// Identifies the extension.
    pub custom_type: String,
    /// String or text/image blocks; sent to the model as user content.
    pub content: Content,
    /// Whether the TUI shows it.
    pub display: bool,
    /// Extension metadata, not sent to the model.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// Creation time, Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"hookMessage",...}`: v2 name of [`CustomMessage`] (same fields). The v2→v3
/// migration renames the role to `custom`; in an un-migrated file pi passes it through the
/// context builder and `convertToLlm` drops it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct HookMessage {
    /// Identifies the hook.
    pub custom_type: String,
    /// String or text/image blocks.
    pub content: Content,
    /// Whether the TUI shows it.
    pub display: bool,
    /// Hook metadata.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub details: Option<Value>,
    /// Creation time, Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"branchSummary","summary","fromId","timestamp"}`: built by `buildSessionContext`
/// from a `branch_summary` entry (timestamp = the entry's ISO time in milliseconds); pi never
/// stores it, but extensions and third-party files may.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// The entry's `fromId`. pi 0.87 types it `string | null`; required.
    #[serde(with = "nullable")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "nullable::schema::<String>")
    )]
    pub from_id: Option<String>,
    /// Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"compactionSummary","summary","tokensBefore","timestamp"}`: built from a
/// `compaction` entry; pi never stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary text.
    pub summary: String,
    /// The entry's `tokensBefore`.
    pub tokens_before: u64,
    /// Unix milliseconds.
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"role":"system","content","sections"?,"toolsAdded"?,"toolsRemoved"?,"timestamp"}`
/// (pi 0.86.0+): the system prompt and tool set, stored in the transcript. The first request
/// of a session persists one with every section and tool; later changes persist as patches.
/// Replaying all system messages in order yields the current prompt and tools; it is also the
/// shape of [`CompactionEntry::system_message`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Instruction text (`string | TextContent[]`): on the leading message the base prompt,
    /// later additional instructions; pi writes `""` for pure section/tool patches.
    pub content: Content,
    /// Named prompt sections rendered after `content`; a later message replaces sections by
    /// name and `null` removes one.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "BTreeMap<String, Option<String>>")
    )]
    pub sections: Option<BTreeMap<String, Option<String>>>,
    /// Complete definitions of tools that become available at this point.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<Tool>"))]
    pub tools_added: Option<Vec<Tool>>,
    /// Tools that stop being available at this point.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<ToolReference>"))]
    pub tools_removed: Option<Vec<ToolReference>>,
    /// Documented in pi 0.87.1's `docs/message-types.md` (discard the earlier state and start a
    /// new baseline) but absent from its TypeScript types and code; pi does not write it.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub replace: Option<bool>,
    /// Unix milliseconds (for a compaction checkpoint: the compaction entry's time).
    pub timestamp: u64,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// A tool declaration in [`SystemMessage::tools_added`] (pi-ai `Tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Tool name, e.g. `read`.
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the arguments (a TypeBox schema, serialized).
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_value))]
    pub parameters: Value,
    /// Provider-side constrained sampling: `false`, `{"type":"json_schema","strict":..}` or
    /// `{"type":"grammar","variants":{..}}`.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::opt_json_value))]
    pub constrained_sampling: Option<Value>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// A tool named in [`SystemMessage::tools_removed`] (pi-ai `ToolReference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ToolReference {
    /// Tool name.
    pub name: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

// =============================================================================================
// Content
// =============================================================================================

/// Content that may be a plain string or an array of blocks (user, custom and system
/// messages, `custom_message` entries, context-edit replacements).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(untagged)]
pub enum Content {
    /// A plain string, equivalent to one text block.
    Text(String),
    /// Content blocks. pi allows text and image blocks here (only text for system messages).
    Blocks(Vec<ContentBlock>),
}

tagged_union! {
    /// One content block, discriminated by `type`. Assistant messages hold text, thinking and
    /// tool-call blocks; user, tool-result and custom content holds text and image blocks.
    /// Unknown block types (e.g. oh-my-pi's `redactedThinking`) are kept as
    /// [`ContentBlock::Unknown`].
    pub enum ContentBlock (
        tag = "type",
        unknown = "Any other object (unknown or missing `type`), kept verbatim including its `type`.",
        unknown_schema = "unknown_variant_schema::<ContentBlock>",
    ) {
        /// `text`.
        "text" => Text(TextContent),
        /// `thinking`: model reasoning.
        "thinking" => Thinking(ThinkingContent),
        /// `image`: base64 image data.
        "image" => Image(ImageContent),
        /// `toolCall`: a tool invocation requested by the model.
        "toolCall" => ToolCall(ToolCall),
    }
}

/// `{"type":"text","text","textSignature"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Opaque provider metadata. OpenAI Responses: a legacy item-id string or a JSON string
    /// `{"v":1,"id":..,"phase"?:"commentary"|"final_answer"}` (`TextSignatureV1`); Google: a
    /// signature.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub text_signature: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"thinking","thinking","thinkingSignature"?,"redacted"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text (placeholder text when `redacted`).
    pub thinking: String,
    /// Opaque replay data: Anthropic's signature, OpenAI Responses' `JSON.stringify` of the
    /// reasoning item (with encrypted content), or the redacted payload. May be `""` on an
    /// aborted stream.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub thinking_signature: Option<String>,
    /// `true` for Anthropic `redacted_thinking` (pi-ai, 2026-02-27): the encrypted payload is
    /// in `thinkingSignature`.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub redacted: Option<bool>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"image","data","mimeType"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes (oh-my-pi may store a `blob:sha256:..` reference instead).
    pub data: String,
    /// Media type, e.g. `image/png`.
    pub mime_type: String,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// `{"type":"toolCall","id","name","arguments","thoughtSignature"?,"namespace"?,
/// "partialJson"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider call id, matched by [`ToolResultMessage::tool_call_id`].
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments (a JSON object; `{}` or partial when the stream was cut).
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub arguments: Map<String, Value>,
    /// Google thought signature.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub thought_signature: Option<String>,
    /// pi-ai after 0.73.1 (present in 0.87.1): OpenAI Responses namespace of a dynamically
    /// loaded or namespaced tool.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub namespace: Option<String>,
    /// Streaming scratch buffer (the raw argument JSON received so far). pi-ai deletes it when
    /// the block completes, so it is left behind only by streams that ended early (aborted
    /// or failed calls; common in files before 0.73.1).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub partial_json: Option<String>,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

// =============================================================================================
// Usage
// =============================================================================================

/// Token counts and cost of one model request (pi-ai `Usage`): in assistant messages, `usage`
/// entries, and (pi 0.81.0+) compaction, branch-summary and tool-result usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens (including `reasoning`).
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// pi-ai after 0.73.1 (present in 0.87.1): the part of `cacheWrite` written with 1-hour
    /// retention (Anthropic only).
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub cache_write_1h: Option<u64>,
    /// Reasoning tokens when the provider reports them; already included in `output`.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub reasoning: Option<u64>,
    /// Total tokens as computed by pi-ai. Added 2025-12-06: absent in older files.
    #[serde(default, with = "optional", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64"))]
    pub total_tokens: Option<u64>,
    /// Cost in US dollars.
    pub cost: UsageCost,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

/// Cost breakdown of a [`Usage`], in US dollars. Numbers are kept as written (`0` vs `0.0`,
/// `9e-6`), so they round-trip exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    /// Cost of `input` tokens.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_number))]
    pub input: Number,
    /// Cost of `output` tokens.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_number))]
    pub output: Number,
    /// Cost of `cacheRead` tokens.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_number))]
    pub cache_read: Number,
    /// Cost of `cacheWrite` tokens.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_number))]
    pub cache_write: Number,
    /// Sum of the above.
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_number))]
    pub total: Number,
    /// Fields not modelled here, kept verbatim.
    #[serde(flatten)]
    #[cfg_attr(feature = "arbitrary", arbitrary(with = crate::types::arb::json_map))]
    pub extra: Map<String, Value>,
}

// =============================================================================================
// Tests
// =============================================================================================

#[cfg(test)]
mod tests {
    use super::*;

    /// Deserializes `line` as `T`, serializes it back and checks the JSON value is unchanged.
    fn round_trip<T>(line: &str) -> T
    where
        T: for<'de> Deserialize<'de> + Serialize,
    {
        let original: Value = serde_json::from_str(line).expect("test line is JSON");
        let typed: T = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("does not deserialize: {e}\n{line}"));
        let back = serde_json::to_value(&typed).expect("serializes");
        assert_eq!(back, original, "round trip changed the value of\n{line}");
        typed
    }

    fn entry(line: &str) -> Entry {
        round_trip::<Entry>(line)
    }

    fn message(line: &str) -> AgentMessage {
        match entry(line) {
            Entry::Message(m) => m.message,
            other => panic!("not a message entry: {other:?}"),
        }
    }

    // ---- representative lines (from real pi files and pi's docs; long strings shortened) ----

    /// pi 0.73.1 header (mattpocock/sandcastle resumed-session.jsonl).
    const HEADER_V3: &str = r#"{"type":"session","version":3,"id":"019e742e-9d84-7578-90d7-674f47fc7c07","timestamp":"2026-05-29T14:41:12.581Z","cwd":"/home/mattpocock/repos/ai/sandcastle"}"#;
    /// Forked session header.
    const HEADER_FORK: &str = r#"{"type":"session","version":3,"id":"full-format-uuid","timestamp":"2026-07-09T10:00:00.000Z","cwd":"/test/proj","parentSession":"/orig/session.jsonl"}"#;
    /// v1 header with legacy fields (pi-mono test fixture before-compaction.jsonl).
    const HEADER_V1: &str = r#"{"type":"session","id":"ffae836b-9420-4060-ac13-7745215f90ff","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/Users/badlogic/workspaces/pi-mono","provider":"anthropic","modelId":"claude-opus-4-5","thinkingLevel":"off","branchedFrom":"/Users/badlogic/.pi/agent/sessions/--Users-badlogic-workspaces-pi-mono--/2025-12-09T00-52-54-397Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl"}"#;
    /// Pre-2025-11-13 header with the `"provider/id"` model string.
    const HEADER_OLDEST: &str = r#"{"type":"session","id":"0b5e0c62-4d1f-4b8e-9c39-6f7d0c5e1a2b","timestamp":"2025-11-10T09:00:00.000Z","cwd":"/home/u/proj","model":"anthropic/claude-sonnet-4-5","thinkingLevel":"off"}"#;

    const MODEL_CHANGE: &str = r#"{"type":"model_change","id":"09a9934c","parentId":null,"timestamp":"2026-05-29T14:41:12.591Z","provider":"openai-codex","modelId":"gpt-5.5"}"#;
    const THINKING_LEVEL_CHANGE: &str = r#"{"type":"thinking_level_change","id":"d1342e8f","parentId":"09a9934c","timestamp":"2026-05-29T14:41:12.591Z","thinkingLevel":"medium"}"#;
    const USER_BLOCKS: &str = r#"{"type":"message","id":"69461162","parentId":"d1342e8f","timestamp":"2026-05-29T14:41:12.596Z","message":{"role":"user","content":[{"type":"text","text":"remember the number 42"}],"timestamp":1780065672595}}"#;
    const USER_STRING_AND_IMAGE: &str = r#"{"type":"message","id":"u1b","parentId":"u1","timestamp":"2026-07-09T10:00:01.500Z","message":{"role":"user","content":[{"type":"text","text":"hello as array"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1783600001500}}"#;
    /// OpenAI Codex response with a `TextSignatureV1` and float costs (sandcastle).
    const ASSISTANT_CODEX: &str = r#"{"type":"message","id":"a07999e9","parentId":"69461162","timestamp":"2026-05-29T14:41:13.861Z","message":{"role":"assistant","content":[{"type":"text","text":"Got it — 42.","textSignature":"{\"v\":1,\"id\":\"msg_0889f00b54d3b305016a19a588b4cc81919aa9165f8c31b3e2\",\"phase\":\"final_answer\"}"}],"api":"openai-codex-responses","provider":"openai-codex","model":"gpt-5.5","usage":{"input":1491,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":1501,"cost":{"input":0.007455000000000001,"output":0.00030000000000000003,"cacheRead":0,"cacheWrite":0,"total":0.007755000000000001}},"stopReason":"stop","timestamp":1780065672598,"responseId":"resp_0889f00b54d3b305016a19a5881b0c8191aff24d9ea6b1fec6"}}"#;
    /// Thinking + two tool calls, `reasoning` usage, `responseModel` (getspecstory real_world).
    const ASSISTANT_TOOLS: &str = r#"{"type":"message","id":"a38e1b57","parentId":"98e5e6ae","timestamp":"2026-07-09T21:28:01.344Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Let me read both files.","thinkingSignature":"reasoning_content"},{"type":"toolCall","id":"chatcmpl-tool-a9feabf97b73ab10","name":"read","arguments":{"path":"README.md"}},{"type":"toolCall","id":"chatcmpl-tool-98ce2a0a927d46e3","name":"read","arguments":{"path":"NOTES.md"}}],"api":"openai-completions","provider":"fireworks","model":"accounts/fireworks/routers/glm-5p2-fast","usage":{"input":16570,"output":29,"cacheRead":0,"cacheWrite":0,"reasoning":0,"totalTokens":16599,"cost":{"input":0.034797,"output":0.0001914,"cacheRead":0,"cacheWrite":0,"total":0.0349884}},"stopReason":"toolUse","timestamp":1783632479777,"responseId":"chatcmpl-8839da5652374b7d911a3e585caa7774","responseModel":"accounts/fireworks/models/glm-5p2"}}"#;
    /// Failed request: empty content and `errorMessage` after `timestamp`.
    const ASSISTANT_ERROR: &str = r#"{"type":"message","id":"59c6b470","parentId":"c936ce3a","timestamp":"2026-07-09T21:30:54.842Z","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"fireworks","model":"accounts/fireworks/routers/kimi-k2p6-fast","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"error","timestamp":1783632654293,"errorMessage":"400 {\"error\":{\"type\":\"invalid_request_error\"}}"}}"#;
    const TOOL_RESULT: &str = r#"{"type":"message","id":"tr1","parentId":"a1","timestamp":"2026-07-09T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"call-1","toolName":"bash","content":[{"type":"text","text":"file1\nfile2"}],"details":{"exitCode":0},"isError":false,"timestamp":1783600003000}}"#;
    const BASH_EXCLUDED: &str = r#"{"type":"message","id":"82b67245","parentId":"4841084c","timestamp":"2026-07-09T21:28:33.621Z","message":{"role":"bashExecution","command":"ls -la","output":"total 24\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1783632513621,"excludeFromContext":true}}"#;
    const COMPACTION: &str = r###"{"type":"compaction","id":"9a57961b","parentId":"59c6b470","timestamp":"2026-07-09T21:31:20.135Z","summary":"## Goal\n- Understand the purpose of the project","firstKeptEntryId":"59c6b470","tokensBefore":325177,"details":{"readFiles":["NOTES.md","README.md"],"modifiedFiles":[]},"fromHook":false}"###;
    const BRANCH_SUMMARY: &str = r#"{"type":"branch_summary","id":"brs1","parentId":"a2","timestamp":"2026-07-09T10:00:09.000Z","fromId":"a1","summary":"branch explored approach B","details":{"readFiles":["a.go"],"modifiedFiles":["b.go"]},"fromHook":true}"#;
    const CUSTOM: &str = r#"{"type":"custom","customType":"my-extension","data":{"count":42},"id":"cu1","parentId":"lb1","timestamp":"2026-07-09T10:00:00.500Z"}"#;
    const CUSTOM_MESSAGE: &str = r#"{"type":"custom_message","customType":"injected","content":"Injected context from extension","display":true,"id":"cm1","parentId":"cu1","timestamp":"2026-07-09T10:00:00.600Z"}"#;
    const LABEL: &str = r#"{"type":"label","id":"lb1","parentId":"si1","timestamp":"2026-07-09T10:00:00.400Z","targetId":"u1","label":"checkpoint-1"}"#;
    const LABEL_CLEARED: &str = r#"{"type":"label","id":"lb2","parentId":"lb1","timestamp":"2026-07-09T10:00:00.450Z","targetId":"u1"}"#;
    const SESSION_INFO: &str = r#"{"type":"session_info","id":"si1","parentId":"tl1","timestamp":"2026-07-09T10:00:00.300Z","name":"My test session"}"#;
    const ROLE_CUSTOM: &str = r#"{"type":"message","id":"cm2","parentId":"be1","timestamp":"2026-07-09T10:00:06.000Z","message":{"role":"custom","customType":"ext-msg","content":"extension content","display":true,"timestamp":1783600006000}}"#;
    const ROLE_HOOK: &str = r#"{"type":"message","id":"hm1","parentId":"cm2","timestamp":"2025-12-20T10:00:00.000Z","message":{"role":"hookMessage","customType":"plan-mode","content":[{"type":"text","text":"Plan mode is on"}],"display":false,"details":null,"timestamp":1766224800000}}"#;
    const ROLE_BRANCH_SUMMARY: &str = r#"{"type":"message","id":"bs1","parentId":"cm2","timestamp":"2026-07-09T10:00:07.000Z","message":{"role":"branchSummary","summary":"explored approach A","fromId":"a1","timestamp":1783600007000}}"#;
    const ROLE_COMPACTION_SUMMARY: &str = r#"{"type":"message","id":"cs1","parentId":"bs1","timestamp":"2026-07-09T10:00:08.000Z","message":{"role":"compactionSummary","summary":"compacted earlier","tokensBefore":5000,"timestamp":1783600008000}}"#;
    /// pi 0.87.1 docs: leading system message with sections and tools.
    const ROLE_SYSTEM: &str = r#"{"type":"message","id":"a0b1c2d3","parentId":null,"timestamp":"2024-12-03T14:00:00.000Z","message":{"role":"system","content":"","sections":{"preamble":"You are an expert coding assistant...","tools":"<tools>\n- read: ...\n</tools>","cwd":"/project"},"toolsAdded":[{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],"timestamp":1733234400000}}"#;
    /// pi 0.87.1: a later system patch removing a section and a tool.
    const ROLE_SYSTEM_PATCH: &str = r#"{"type":"message","id":"d4e5f6a7","parentId":"c3d4e5f6","timestamp":"2024-12-03T14:04:00.000Z","message":{"role":"system","content":"","sections":{"skills":"<skills>...</skills>","cwd":null},"toolsRemoved":[{"name":"write"}],"timestamp":1733234640000}}"#;
    /// pi 0.87.1 `usage` entry (cache warming).
    const USAGE_ENTRY: &str = r#"{"type":"usage","id":"f6a7b8c9","parentId":"e5f6a7b8","timestamp":"2024-12-03T14:08:00.000Z","kind":"cache_warm","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":50000,"cacheWrite":0,"cacheWrite1h":0,"totalTokens":50000,"cost":{"input":0,"output":0,"cacheRead":0.015,"cacheWrite":0,"total":0.015}},"note":"idle"}"#;
    /// pi 0.87.1 compaction with summary usage and a system checkpoint.
    const COMPACTION_087: &str = r#"{"type":"compaction","id":"f6a7b8c0","parentId":"e5f6a7b8","timestamp":"2024-12-03T14:10:00.000Z","summary":"User discussed X, Y, Z...","firstKeptEntryId":"c3d4e5f6","tokensBefore":50000,"details":{"readFiles":[],"modifiedFiles":["src/a.ts"]},"usage":{"input":48000,"output":900,"cacheRead":0,"cacheWrite":0,"totalTokens":48900,"cost":{"input":0.144,"output":0.0135,"cacheRead":0,"cacheWrite":0,"total":0.1575}},"systemMessage":{"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":1733235000000}}"#;
    const CONTEXT_EDIT_OMIT: &str = r#"{"type":"context_edit","id":"a6b7c8d9","parentId":"f6a7b8c0","timestamp":"2024-12-03T14:11:00.000Z","targetId":"c3d4e5f6","replacement":null}"#;
    const CONTEXT_EDIT_REPLACE: &str = r#"{"type":"context_edit","id":"b6b7c8d9","parentId":"a6b7c8d9","timestamp":"2024-12-03T14:12:00.000Z","targetId":"d4e5f6a7","replacement":{"content":[{"type":"text","text":"[output elided]"}]}}"#;
    /// Unknown entry type (kenn-io/agentsview test data).
    const UNKNOWN_ENTRY: &str = r#"{"type":"unknown_future_entry_type","id":"entry-9","parentId":"entry-8","timestamp":"2025-01-01T10:00:09Z"}"#;

    /// v1 message objects (pi-mono large-session.jsonl): no `totalTokens`, a `partialJson`
    /// left by an aborted stream, a `bashExecution` with `fullOutputPath`.
    const V1_ASSISTANT_PARTIAL_JSON: &str = r####"{"role":"assistant","content":[{"type":"toolCall","id":"toolu_01HouTyCHYS3XgNt8KVbob9P","name":"edit","arguments":{"path":"packages/coding-agent/docs/theme.md","oldText":"### Syntax Highlighting","newText":"### Thinking Level Borders"},"partialJson":"{\"path\": \"packages/coding-agent/docs/theme.md\", \"oldText\": \"###"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":5,"output":24,"cacheRead":68979,"cacheWrite":964,"cost":{"input":1.5e-05,"output":0.00036,"cacheRead":0.0206937,"cacheWrite":0.003615,"total":0.0246837}},"stopReason":"aborted","timestamp":1763684128245,"errorMessage":"Request was aborted."}"####;
    const V1_BASH_FULL_OUTPUT: &str = r#"{"role":"bashExecution","command":"find .","output":"./.git/objects/2d\n","exitCode":0,"cancelled":false,"truncated":true,"fullOutputPath":"/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-a4c.log","timestamp":1765240979633}"#;

    // ---- round trips ----

    #[test]
    fn headers_round_trip() {
        let h = round_trip::<SessionHeader>(HEADER_V3);
        assert_eq!(h.version, Some(CURRENT_VERSION));
        assert_eq!(h.id, "019e742e-9d84-7578-90d7-674f47fc7c07");
        assert!(h.parent_session.is_none() && h.extra.is_empty());

        let h = round_trip::<SessionHeader>(HEADER_FORK);
        assert_eq!(h.parent_session.as_deref(), Some("/orig/session.jsonl"));

        let h = round_trip::<SessionHeader>(HEADER_V1);
        assert_eq!(h.version, None);
        assert_eq!(h.provider.as_deref(), Some("anthropic"));
        assert_eq!(h.model_id.as_deref(), Some("claude-opus-4-5"));
        assert_eq!(h.thinking_level.as_deref(), Some("off"));
        assert!(h.branched_from.as_deref().unwrap().ends_with(".jsonl"));
        assert!(h.extra.is_empty());

        let h = round_trip::<SessionHeader>(HEADER_OLDEST);
        assert_eq!(h.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));

        // A header is not accepted with another type.
        let wrong = HEADER_V3.replace(r#""type":"session""#, r#""type":"message""#);
        assert!(serde_json::from_str::<SessionHeader>(&wrong).is_err());
    }

    #[test]
    fn every_entry_type_round_trips() {
        let cases: &[(&str, &str)] = &[
            (MODEL_CHANGE, "model_change"),
            (THINKING_LEVEL_CHANGE, "thinking_level_change"),
            (USER_BLOCKS, "message"),
            (COMPACTION, "compaction"),
            (COMPACTION_087, "compaction"),
            (BRANCH_SUMMARY, "branch_summary"),
            (CUSTOM, "custom"),
            (CUSTOM_MESSAGE, "custom_message"),
            (LABEL, "label"),
            (LABEL_CLEARED, "label"),
            (SESSION_INFO, "session_info"),
            (USAGE_ENTRY, "usage"),
            (CONTEXT_EDIT_OMIT, "context_edit"),
            (CONTEXT_EDIT_REPLACE, "context_edit"),
        ];
        for (line, tag) in cases {
            let e = entry(line);
            let got = match &e {
                Entry::Message(_) => "message",
                Entry::ThinkingLevelChange(_) => "thinking_level_change",
                Entry::ModelChange(_) => "model_change",
                Entry::Usage(_) => "usage",
                Entry::Compaction(_) => "compaction",
                Entry::BranchSummary(_) => "branch_summary",
                Entry::Custom(_) => "custom",
                Entry::CustomMessage(_) => "custom_message",
                Entry::ContextEdit(_) => "context_edit",
                Entry::Label(_) => "label",
                Entry::SessionInfo(_) => "session_info",
                Entry::Unknown(_) => "unknown",
            };
            assert_eq!(got, *tag, "{line}");
        }
        assert_eq!(
            Entry::KNOWN_TAGS.len(),
            cases
                .iter()
                .map(|c| c.1)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }

    #[test]
    fn entry_fields_are_typed() {
        let Entry::ModelChange(m) = entry(MODEL_CHANGE) else {
            panic!()
        };
        assert_eq!(
            (m.parent_id, m.provider.as_str(), m.model_id.as_str()),
            (None, "openai-codex", "gpt-5.5")
        );

        let Entry::Compaction(c) = entry(COMPACTION) else {
            panic!()
        };
        assert_eq!(c.first_kept_entry_id, "59c6b470");
        assert_eq!(c.tokens_before, 325_177);
        assert_eq!(c.from_hook, Some(false));
        assert!(c.system_message.is_none() && c.usage.is_none());

        let Entry::Compaction(c) = entry(COMPACTION_087) else {
            panic!()
        };
        let system = c.system_message.expect("systemMessage");
        assert_eq!(
            system.content,
            Content::Text("You are a coding assistant.".into())
        );
        assert_eq!(system.tools_added, Some(vec![]));
        assert_eq!(c.usage.expect("usage").total_tokens, Some(48_900));

        let Entry::Custom(c) = entry(CUSTOM) else {
            panic!()
        };
        assert_eq!(c.data, Some(serde_json::json!({"count": 42})));

        let Entry::CustomMessage(c) = entry(CUSTOM_MESSAGE) else {
            panic!()
        };
        assert_eq!(
            c.content,
            Content::Text("Injected context from extension".into())
        );
        assert!(c.display && c.details.is_none());

        let Entry::Label(l) = entry(LABEL_CLEARED) else {
            panic!()
        };
        assert_eq!(l.label, None);

        let Entry::Usage(u) = entry(USAGE_ENTRY) else {
            panic!()
        };
        assert_eq!(
            (u.kind.as_str(), u.usage.cache_read, u.usage.cache_write_1h),
            ("cache_warm", 50_000, Some(0))
        );
        assert_eq!(u.note.as_deref(), Some("idle"));

        let Entry::ContextEdit(e) = entry(CONTEXT_EDIT_OMIT) else {
            panic!()
        };
        assert_eq!(e.replacement, None);
        let Entry::ContextEdit(e) = entry(CONTEXT_EDIT_REPLACE) else {
            panic!()
        };
        let Some(ContextEditReplacement {
            content: Content::Blocks(blocks),
            ..
        }) = e.replacement
        else {
            panic!()
        };
        assert!(matches!(&blocks[..], [ContentBlock::Text(t)] if t.text == "[output elided]"));
    }

    #[test]
    fn every_role_round_trips() {
        let AgentMessage::User(u) = message(USER_BLOCKS) else {
            panic!()
        };
        assert_eq!(u.timestamp, 1_780_065_672_595);
        let AgentMessage::User(u) = message(USER_STRING_AND_IMAGE) else {
            panic!()
        };
        let Content::Blocks(blocks) = u.content else {
            panic!()
        };
        assert!(matches!(&blocks[1], ContentBlock::Image(i) if i.mime_type == "image/png"));
        let AgentMessage::User(u) = round_trip::<AgentMessage>(
            r#"{"role":"user","content":"hello as a plain string","timestamp":1783600001000}"#,
        ) else {
            panic!()
        };
        assert_eq!(u.content, Content::Text("hello as a plain string".into()));

        let AgentMessage::Assistant(a) = message(ASSISTANT_CODEX) else {
            panic!()
        };
        assert!(
            matches!(&a.content[0], ContentBlock::Text(t) if t.text_signature.as_deref().unwrap().starts_with("{\"v\":1"))
        );
        assert_eq!(
            a.response_id.as_deref(),
            Some("resp_0889f00b54d3b305016a19a5881b0c8191aff24d9ea6b1fec6")
        );
        assert_eq!(a.usage.total_tokens, Some(1501));

        let AgentMessage::Assistant(a) = message(ASSISTANT_TOOLS) else {
            panic!()
        };
        assert_eq!(a.content.len(), 3);
        assert!(
            matches!(&a.content[0], ContentBlock::Thinking(t) if t.thinking_signature.as_deref() == Some("reasoning_content"))
        );
        assert!(
            matches!(&a.content[1], ContentBlock::ToolCall(c) if c.name == "read" && c.arguments["path"] == "README.md")
        );
        assert_eq!(
            (a.stop_reason.as_str(), a.usage.reasoning),
            ("toolUse", Some(0))
        );
        assert_eq!(
            a.response_model.as_deref(),
            Some("accounts/fireworks/models/glm-5p2")
        );

        let AgentMessage::Assistant(a) = message(ASSISTANT_ERROR) else {
            panic!()
        };
        assert!(a.content.is_empty());
        assert_eq!(a.stop_reason, "error");
        assert!(a.error_message.unwrap().starts_with("400"));

        let AgentMessage::ToolResult(t) = message(TOOL_RESULT) else {
            panic!()
        };
        assert_eq!((t.tool_call_id.as_str(), t.is_error), ("call-1", false));
        assert_eq!(t.details, Some(serde_json::json!({"exitCode": 0})));

        let AgentMessage::BashExecution(b) = message(BASH_EXCLUDED) else {
            panic!()
        };
        assert_eq!(
            (b.exit_code, b.exclude_from_context),
            (Some(Some(0)), Some(true))
        );

        assert!(
            matches!(message(ROLE_CUSTOM), AgentMessage::Custom(c) if c.custom_type == "ext-msg")
        );
        let AgentMessage::HookMessage(h) = message(ROLE_HOOK) else {
            panic!()
        };
        assert_eq!(
            h.details,
            Some(Value::Null),
            "an explicit null details is kept"
        );
        assert!(
            matches!(message(ROLE_BRANCH_SUMMARY), AgentMessage::BranchSummary(b) if b.from_id.as_deref() == Some("a1"))
        );
        assert!(
            matches!(message(ROLE_COMPACTION_SUMMARY), AgentMessage::CompactionSummary(c) if c.tokens_before == 5000)
        );

        let AgentMessage::System(s) = message(ROLE_SYSTEM) else {
            panic!()
        };
        assert_eq!(s.sections.unwrap()["cwd"].as_deref(), Some("/project"));
        assert_eq!(s.tools_added.unwrap()[0].name, "read");
        let AgentMessage::System(s) = message(ROLE_SYSTEM_PATCH) else {
            panic!()
        };
        assert_eq!(s.sections.unwrap()["cwd"], None, "null removes a section");
        assert_eq!(s.tools_removed.unwrap()[0].name, "write");
    }

    #[test]
    fn legacy_messages_round_trip() {
        let AgentMessage::Assistant(a) = round_trip::<AgentMessage>(V1_ASSISTANT_PARTIAL_JSON)
        else {
            panic!()
        };
        assert_eq!(
            a.usage.total_tokens, None,
            "totalTokens is absent before 2025-12-06"
        );
        assert!(matches!(&a.content[0], ContentBlock::ToolCall(c) if c.partial_json.is_some()));
        // `9e-6`-style costs and integer-valued costs keep their representation.
        assert_eq!(a.usage.cost.input.as_f64(), Some(1.5e-5));
        assert!(a.usage.cost.input.is_f64());

        let AgentMessage::BashExecution(b) = round_trip::<AgentMessage>(V1_BASH_FULL_OUTPUT) else {
            panic!()
        };
        assert!(b.truncated && b.full_output_path.is_some());

        // exitCode: absent, null and a number are three different values.
        let killed = r#"{"role":"bashExecution","command":"sleep 9","output":"","exitCode":null,"cancelled":true,"truncated":false,"timestamp":1}"#;
        let AgentMessage::BashExecution(b) = round_trip::<AgentMessage>(killed) else {
            panic!()
        };
        assert_eq!(b.exit_code, Some(None));
        let absent = r#"{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":false,"timestamp":1}"#;
        let AgentMessage::BashExecution(b) = round_trip::<AgentMessage>(absent) else {
            panic!()
        };
        assert_eq!(b.exit_code, None);

        let redacted = r#"{"type":"thinking","thinking":"","thinkingSignature":"redacted-sig-xyz","redacted":true}"#;
        assert!(
            matches!(round_trip::<ContentBlock>(redacted), ContentBlock::Thinking(t) if t.redacted == Some(true))
        );
        let google = r#"{"type":"toolCall","id":"c1","name":"bash","arguments":{},"thoughtSignature":"CiQB0e2Kb8","namespace":"mcp"}"#;
        assert!(
            matches!(round_trip::<ContentBlock>(google), ContentBlock::ToolCall(c) if c.namespace.as_deref() == Some("mcp"))
        );
    }

    #[test]
    fn compaction_system_message_requires_its_role() {
        let mut value: Value = serde_json::from_str(COMPACTION_087).unwrap();
        value["systemMessage"]["role"] = "user".into();
        assert!(serde_json::from_value::<Entry>(value.clone()).is_err());
        value["systemMessage"]
            .as_object_mut()
            .unwrap()
            .remove("role");
        assert!(serde_json::from_value::<Entry>(value).is_err());
    }

    #[test]
    fn file_entries_dispatch_on_session_type() {
        for line in [HEADER_V3, HEADER_V1] {
            assert!(matches!(
                round_trip::<FileEntry>(line),
                FileEntry::Header(_)
            ));
        }
        assert!(matches!(
            round_trip::<FileEntry>(USER_BLOCKS),
            FileEntry::Entry(Entry::Message(_))
        ));
        assert!(matches!(
            round_trip::<FileEntry>(UNKNOWN_ENTRY),
            FileEntry::Entry(Entry::Unknown(_))
        ));
        // A bad header is an error, not an unknown entry.
        assert!(serde_json::from_str::<FileEntry>(r#"{"type":"session","id":"x"}"#).is_err());
    }

    // ---- losslessness ----

    #[test]
    fn unknown_fields_survive_at_every_level() {
        let line = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","entryExtra":[1,2],"message":{"role":"assistant","content":[{"type":"text","text":"x","blockExtra":true},{"type":"toolCall","id":"c","name":"n","arguments":{"a":null},"callExtra":{"k":"v"}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"usageExtra":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"costExtra":0.5}},"stopReason":"stop","timestamp":5,"providerPayload":{"raw":"..."}}}"#;
        let Entry::Message(m) = entry(line) else {
            panic!()
        };
        assert_eq!(m.extra["entryExtra"], serde_json::json!([1, 2]));
        let AgentMessage::Assistant(a) = m.message else {
            panic!()
        };
        assert!(a.extra.contains_key("providerPayload"));
        assert!(matches!(&a.content[0], ContentBlock::Text(t) if t.extra["blockExtra"] == true));
        assert!(
            matches!(&a.content[1], ContentBlock::ToolCall(c) if c.extra.contains_key("callExtra"))
        );
        assert_eq!(a.usage.extra["usageExtra"], 7);
        assert_eq!(a.usage.cost.extra["costExtra"], 0.5);

        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/","title":"omp title","additionalDirectories":["/x"]}"#;
        let h = round_trip::<SessionHeader>(header);
        assert_eq!(h.extra["title"], "omp title");
    }

    #[test]
    fn unknown_entry_types_roles_and_blocks_survive() {
        let Entry::Unknown(raw) = entry(UNKNOWN_ENTRY) else {
            panic!()
        };
        assert_eq!(raw["type"], "unknown_future_entry_type");

        // Pre-2025-11-12 `event` lines, objects without a type, a non-string type.
        for line in [
            r#"{"type":"event","timestamp":"2025-11-01T00:00:00.000Z","event":{"type":"agent_start"}}"#,
            r#"{"id":"x","parentId":null}"#,
            r#"{"type":42,"id":"x"}"#,
        ] {
            assert!(matches!(entry(line), Entry::Unknown(_)), "{line}");
        }

        let line = r#"{"type":"message","id":"d1","parentId":"c1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"developer","content":"be brief","timestamp":1}}"#;
        let AgentMessage::Unknown(raw) = message(line) else {
            panic!()
        };
        assert_eq!(raw["role"], "developer");

        let line = r#"{"role":"assistant","content":[{"type":"redactedThinking","data":"opaque"},{"type":"text","text":"ok"}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}"#;
        let AgentMessage::Assistant(a) = round_trip::<AgentMessage>(line) else {
            panic!()
        };
        assert!(
            matches!(&a.content[0], ContentBlock::Unknown(raw) if raw["type"] == "redactedThinking")
        );
    }

    #[test]
    fn explicit_nulls_are_kept_or_rejected_never_dropped() {
        // `details`/`data` are `any`: null is a value.
        let line = r#"{"type":"custom","customType":"x","data":null,"id":"c","parentId":null,"timestamp":"t"}"#;
        let Entry::Custom(c) = entry(line) else {
            panic!()
        };
        assert_eq!(c.data, Some(Value::Null));
        // `textSignature?: string`: null is not a string.
        let bad = r#"{"type":"text","text":"x","textSignature":null}"#;
        assert!(serde_json::from_str::<ContentBlock>(bad).is_err());
    }

    // ---- required fields ----

    #[test]
    fn parent_id_is_required_but_nullable() {
        let missing =
            r#"{"type":"model_change","id":"a","timestamp":"t","provider":"p","modelId":"m"}"#;
        let err = serde_json::from_str::<ModelChangeEntry>(missing).unwrap_err();
        assert!(
            err.to_string().contains("missing field `parentId`"),
            "{err}"
        );
        // Through the enum too: a malformed known entry is an error, not `Unknown`.
        let err = serde_json::from_str::<Entry>(missing).unwrap_err();
        assert!(err.to_string().contains("parentId"), "{err}");
        for (line, field) in [
            (USER_BLOCKS, "parentId"),
            (CUSTOM, "parentId"),
            (CONTEXT_EDIT_OMIT, "replacement"),
        ] {
            let mut value: Value = serde_json::from_str(line).unwrap();
            value.as_object_mut().unwrap().remove(field);
            assert!(
                serde_json::from_value::<Entry>(value).is_err(),
                "{line} without {field}"
            );
        }

        let null = r#"{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#;
        let m = round_trip::<ModelChangeEntry>(null);
        assert_eq!(m.parent_id, None);
        let Entry::ModelChange(m) = entry(&null.replace("null", r#""p1""#)) else {
            panic!()
        };
        assert_eq!(m.parent_id.as_deref(), Some("p1"));

        // Serializing `None` writes `"parentId":null`, never omits the key.
        assert_eq!(serde_json::to_value(&m).unwrap()["parentId"], "p1");
        let Entry::ModelChange(root) = entry(null) else {
            panic!()
        };
        assert_eq!(
            serde_json::to_value(&root).unwrap()["parentId"],
            Value::Null
        );
    }

    #[test]
    fn missing_required_fields_are_errors() {
        // v1 entries (no id/parentId) only validate after migration.
        let v1 = r#"{"type":"message","timestamp":"2025-11-20T23:33:01.550Z","message":{"role":"user","content":[{"type":"text","text":"/mode"}],"timestamp":1763681581544}}"#;
        assert!(serde_json::from_str::<Entry>(v1).is_err());
        // Unknown role inside a message entry is fine; a known role with bad fields is not.
        let bad_role = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","timestamp":1}}"#;
        let err = serde_json::from_str::<Entry>(bad_role).unwrap_err();
        assert!(err.to_string().contains("content"), "{err}");
        // A string where blocks are required.
        let bad_content = r#"{"role":"toolResult","toolCallId":"c","toolName":"t","content":"x","isError":false,"timestamp":1}"#;
        assert!(serde_json::from_str::<AgentMessage>(bad_content).is_err());
    }

    // ---- schema ----

    #[cfg(feature = "schema")]
    fn def<'a>(root: &'a Value, name: &str) -> &'a Value {
        &root["$defs"][name]
    }

    #[test]
    #[cfg(feature = "schema")]
    fn json_schema_is_generated() {
        let schema = serde_json::to_value(schemars::schema_for!(Entry)).unwrap();
        let variants = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .expect("oneOf/anyOf");
        assert_eq!(
            variants.as_array().unwrap().len(),
            Entry::KNOWN_TAGS.len() + 1
        );
        assert!(schema["description"].as_str().unwrap().contains("entry"));

        let message = def(&schema, "MessageEntry");
        let required: Vec<&str> = message["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(required.contains(&"parentId") && required.contains(&"message"));
        assert_eq!(
            message["properties"]["parentId"]["type"],
            serde_json::json!(["string", "null"])
        );
        assert!(message["properties"]["id"]["description"].is_string());

        // Optional fields are not required and not nullable unless pi allows null.
        let compaction = def(&schema, "CompactionEntry");
        let required = compaction["required"].as_array().unwrap();
        assert!(
            !required.contains(&Value::from("details"))
                && !required.contains(&Value::from("systemMessage"))
        );
        assert_eq!(
            def(&schema, "TextContent")["properties"]["textSignature"]["type"],
            "string"
        );

        // The unknown variant excludes the known tags.
        let unknown = variants.as_array().unwrap().last().unwrap();
        assert_eq!(
            unknown["not"]["properties"]["type"]["enum"]
                .as_array()
                .unwrap()
                .len(),
            Entry::KNOWN_TAGS.len()
        );

        let role = &compaction["properties"]["systemMessage"];
        assert!(role.to_string().contains(r#""const":"system""#), "{role}");

        // A file line is a header or an entry whose type is not "session".
        let file = serde_json::to_value(schemars::schema_for!(FileEntry)).unwrap();
        assert_eq!(file["anyOf"].as_array().unwrap().len(), 2);
        assert!(
            file["anyOf"][1]
                .to_string()
                .contains(r#""const":"session""#)
        );

        for schema in [
            file,
            serde_json::to_value(schemars::schema_for!(SessionHeader)).unwrap(),
            serde_json::to_value(schemars::schema_for!(AgentMessage)).unwrap(),
        ] {
            assert!(schema.is_object() && schema["description"].is_string());
        }
    }
}
