//! The output of `pi-session context`, as types for the schema generator.
//!
//! The library builds the context as raw JSON (`context::Context::to_json`), exactly as pi
//! does, so there is no serde type for it; these types describe that JSON for
//! `context.schema.json`. Only their schema is used.

// The fields are read by the schema derive only.
#![allow(dead_code)]

use pi_session_format::types::AgentMessage;
use schemars::{JsonSchema, Schema, SchemaGenerator};

/// What `pi-session context FILE` prints: `SessionManager.buildSessionContext()`, i.e. the
/// messages pi sends to the model for the current leaf (or `--leaf ID`), with the thinking
/// level and model in effect there.
///
/// The messages are the `message` entries on the path, verbatim, plus the messages pi builds:
/// a `compactionSummary` for the latest compaction (preceded by its `systemMessage` with
/// `--pi 0.87`), a `branchSummary` for each `branch_summary` entry with a summary, and a
/// `custom` message for each `custom_message` entry. Lines that are not well-formed pass
/// through as they are, so the context of a file that does not validate need not validate.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SessionContext {
    /// The messages, in order.
    messages: Vec<AgentMessage>,
    /// The `thinkingLevel` of the latest `thinking_level_change` on the path, `"off"` when
    /// there is none. Absent when that entry has no `thinkingLevel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    thinking_level: Option<String>,
    /// The model of the latest `model_change` entry or assistant message on the path
    /// (whichever comes last), `null` when there is none.
    #[schemars(schema_with = "nullable_model")]
    model: Option<ContextModel>,
}

/// `ContextModel` or `null`, required (a `schema_with` field is required unless defaulted).
fn nullable_model(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<Option<ContextModel>>()
}

/// `{provider, modelId}`: from a `model_change` entry's `provider`/`modelId`, or an assistant
/// message's `provider`/`model`; a member the source lacks is left out (`{}` for a legacy
/// `model_change` that has only `model`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(inline)]
struct ContextModel {
    /// Provider id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    provider: Option<String>,
    /// Model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    model_id: Option<String>,
}
