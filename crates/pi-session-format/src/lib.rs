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
//! - [`search`]: the texts a search looks at, each with its line, entry, role and branch;
//! - [`stats`]: tokens, cost and message counts: pi's `getSessionStats`, and totals over many
//!   sessions with forked history counted once;
//! - [`write`](mod@write): [`SessionWriter`], pi's `SessionManager`: the bytes pi writes, safely;
//! - [`types`]: the typed serde model of every entry and message (JSON Schema derives behind
//!   the `schema` feature, `Arbitrary` behind `arbitrary`).
//!
//! The validator and the JSON Schemas are the `pi-session-validate` crate; the session
//! generator and the fuzzing checks are `pi-session-testkit`.
//!
//! # The front door
//!
//! Load a session once ([`Session::open`] for a file, [`Session::from_bytes`] for bytes you
//! hold) with the rules of one pi ([`PiVersion`]); then ask it what pi would compute, one
//! call each: [`Session::context`] (`buildSessionContext`), [`Session::to_llm`]
//! (`convertToLlm`), [`Session::tree`] (`getTree`), [`Session::info`] (the listing entry),
//! and [`Session::entries`] for the entries as typed values ([`types::Entry`]). The
//! entries are linked once, on the first question ([`Session::index`]).
//!
//! ```
//! use pi_session_format::{Leaf, PiVersion, Session};
//!
//! let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}
//! {"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Fix the build","timestamp":1}}
//! {"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"custom","customType":"note","content":"kept out","display":false,"timestamp":2}}
//! "#;
//! let session = Session::from_bytes(file, PiVersion::V0_73)?;
//! assert_eq!(session.context(Leaf::Current)?.messages.len(), 2);
//! // convertToLlm turns the custom message into a user message.
//! let llm = session.to_llm(Leaf::Current)?;
//! assert_eq!(llm[1].role(), Some("user"));
//! assert_eq!(session.tree().roots().len(), 1);
//! let info = session.info().expect("listed");
//! assert_eq!(info.get("firstMessage").and_then(|m| m.as_str()), Some("Fix the build"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod context;
pub mod date;
pub mod export;
pub mod info;
pub use pi_session_json as json;
pub mod llm;
pub mod migrate;
pub mod read;
pub mod search;
pub mod session;
pub mod stats;
pub mod tree;
pub mod types;
pub mod write;

pub use context::{Context, Message};
pub use session::{EntryError, LoadError, OpenError, OwnedSession, Record, Session, TypedEntry};
pub use tree::{CycleError, Index, Leaf, Tree};
pub use write::{SessionWriter, WriteError, WriteProfile, WriterConfig};

/// Which pi's rules to follow where versions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PiVersion {
    /// `@mariozechner/pi-coding-agent` 0.73.1: the documented v3 format (default).
    #[default]
    V0_73,
    /// `@earendil-works/pi-coding-agent` 0.87.1: current pi.
    V0_87,
}

impl PiVersion {
    /// The release whose rules these are, as npm names it (`"0.73.1"`).
    pub fn release(self) -> &'static str {
        match self {
            PiVersion::V0_73 => "0.73.1",
            PiVersion::V0_87 => "0.87.1",
        }
    }
}

/// The example of the crate's README (and of the workspace's), compiled with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
