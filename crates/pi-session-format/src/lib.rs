//! Reader, migrator, tree and context builder for the session files of the pi coding agent.
//!
//! pi (the TypeScript reference implementation) stores a conversation as JSONL: a `session`
//! header line, then entries linked into a tree by `id`/`parentId`. This crate reproduces what
//! pi does with such a file, rule by rule (the rule ids in the docs, such as `P5` or `C7`, are
//! those of the project's specification, `conformance/RULES.md`):
//!
//! - [`read`]: bytes to lines, exactly as pi splits and trims them;
//! - [`json`]: `JSON.parse` / `JSON.stringify` semantics;
//! - [`session`]: loading: header, version, skeleton index of every entry;
//! - [`migrate`]: the v1→v2→v3 migrations;
//! - [`tree`]: path walk, children, labels, session name, tree view;
//! - [`context`]: `buildSessionContext` and `convertToLlm`;
//! - [`info`]: the session listing entry (`SessionInfo`), streamed;
//! - [`llm`]: the messages sent to the model (`convertToLlm`);
//! - [`date`]: JavaScript's `Date` parsing and formatting;
//! - [`types`]: the typed serde model of every entry and message (JSON Schema derives behind
//!   the `schema` feature, `Arbitrary` behind `arbitrary`).
//!
//! The validator and the JSON Schemas are the `pi-session-validate` crate; the session
//! generator and the fuzzing checks are `pi-session-testkit`.

pub mod date;
pub use pi_session_json as json;
pub mod migrate;
pub mod read;
pub mod session;
pub mod tree;

/// Which pi's rules to follow where versions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PiVersion {
    /// `@mariozechner/pi-coding-agent` 0.73.1: the documented v3 format (default).
    #[default]
    V0_73,
    /// `@earendil-works/pi-coding-agent` 0.87.1: current pi.
    V0_87,
}

pub mod context;
pub mod info;
pub mod llm;
pub mod types;
