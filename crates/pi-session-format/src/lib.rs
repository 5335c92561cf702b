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
//! - [`atomic`]: crash-safe file replacement.

pub mod date;
pub mod json;
pub mod migrate;
pub mod read;
pub mod session;
