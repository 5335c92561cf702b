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
//! - [`types`]: the typed serde model of every entry and message;
//! - [`validate`]: diagnostics with stable codes, and the strict and pi-loadable verdicts;
//! - [`schemas`]: the JSON Schemas generated from [`types`];

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
