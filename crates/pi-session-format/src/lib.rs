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
//! - [`dialect`](mod@dialect): pi's format or oh-my-pi's ([`Dialect`]), told apart from the
//!   file;
//! - [`omp`]: what oh-my-pi (`omp`) does differently: its title slot and its context;
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
//! let session = Session::from_bytes(file, PiVersion::V1_5)?;
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
pub mod dialect;
pub mod export;
pub mod info;
pub use pi_session_json as json;
pub mod llm;
pub mod migrate;
pub mod omp;
pub mod read;
pub mod search;
pub mod session;
pub mod stats;
pub mod tree;
pub mod types;
pub mod write;

pub use context::{Context, Message};
pub use dialect::Dialect;
pub use session::{
    ContextNotes, EntryError, LoadError, OpenError, OwnedSession, Record, ResumeError, Session,
    TypedEntry,
};
pub use tree::{CycleError, Index, Leaf, Tree};
pub use write::{SessionWriter, WriteError, WriteProfile, WriterConfig};

/// Which pi's rules to follow where versions differ.
///
/// The default is current pi, [`PiVersion::V1_5`]. Where the library decides by version, it
/// asks [`PiVersion::reads_like_0_87`] (reading) or [`PiVersion::write_profile`] (writing),
/// so that a new pi is one variant and one edit to each of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum PiVersion {
    /// `@mariozechner/pi-coding-agent` 0.73.1: the documented v3 format.
    V0_73,
    /// `@earendil-works/pi-coding-agent` 0.87.1, the first `@earendil-works` release pinned
    /// (the rules of `conformance/RULES.md` section E).
    V0_87,
    /// `@earendil-works/pi-coding-agent` 1.5.2, current pi (the default): it reads every file
    /// as 0.87.1 does (the whole corpus and the differential runs agree) and writes a session
    /// at its first user message already ([`WriteProfile::V1_5`]).
    #[default]
    V1_5,
}

impl PiVersion {
    /// Every version, oldest first.
    pub const ALL: [PiVersion; 3] = [PiVersion::V0_73, PiVersion::V0_87, PiVersion::V1_5];

    /// The release whose rules these are, as npm names it (`"1.5.2"`).
    pub fn release(self) -> &'static str {
        match self {
            PiVersion::V0_73 => "0.73.1",
            PiVersion::V0_87 => "0.87.1",
            PiVersion::V1_5 => "1.5.2",
        }
    }

    /// The short name the command line and the conformance corpus use (`"0.73"`, `"0.87"`,
    /// `"1.5"`).
    pub fn short_name(self) -> &'static str {
        match self {
            PiVersion::V0_73 => "0.73",
            PiVersion::V0_87 => "0.87",
            PiVersion::V1_5 => "1.5",
        }
    }

    /// Whether this pi reads files by 0.87.1's rules (0.87.1 and 1.5.2) rather than 0.73.1's:
    /// the one question every reading rule that differs between versions asks.
    pub fn reads_like_0_87(self) -> bool {
        match self {
            PiVersion::V0_73 => false,
            PiVersion::V0_87 | PiVersion::V1_5 => true,
        }
    }

    /// The writing rules of the same pi.
    pub fn write_profile(self) -> WriteProfile {
        match self {
            PiVersion::V0_73 => WriteProfile::V0_73,
            PiVersion::V0_87 => WriteProfile::V0_87,
            PiVersion::V1_5 => WriteProfile::V1_5,
        }
    }
}

impl std::fmt::Display for PiVersion {
    /// The release (`1.5.2`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.release())
    }
}

impl std::str::FromStr for PiVersion {
    type Err = write::UnknownProfile;

    /// `"0.73"`, `"0.87"`, `"1.5"`, or the full release (`"1.5.2"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PiVersion::ALL
            .into_iter()
            .find(|p| p.short_name() == s || p.release() == s)
            .ok_or_else(|| write::UnknownProfile(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session on which 0.73.1 and 0.87.1 read differently in many places: a `null` and a
    /// `false` line, a `system` message, a `context_edit`, a `usage` entry, a custom message
    /// without content, and no final newline.
    const FILE: &[u8] = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n\
null\n\
{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"system\",\"content\":\"S\",\"timestamp\":1}}\n\
{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"long question\",\"timestamp\":2}}\n\
{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"b\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"provider\":\"p\",\"model\":\"m\",\"api\":\"x\",\"usage\":{\"input\":3,\"output\":2,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":5,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0.5}},\"stopReason\":\"stop\",\"timestamp\":3}}\n\
false\n\
{\"type\":\"context_edit\",\"id\":\"d\",\"parentId\":\"c\",\"timestamp\":\"2026-01-01T00:00:04.000Z\",\"targetId\":\"b\",\"replacement\":{\"content\":\"short\"}}\n\
{\"type\":\"usage\",\"id\":\"e\",\"parentId\":\"d\",\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"usage\":{\"input\":7,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":8,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0.25}}}\n\
{\"type\":\"message\",\"id\":\"f\",\"parentId\":\"e\",\"timestamp\":\"2026-01-01T00:00:06.000Z\",\"message\":{\"role\":\"custom\",\"customType\":\"note\",\"display\":true,\"timestamp\":6}}";

    /// Everything the library answers about `FILE` with `pi`'s rules.
    fn read(pi: PiVersion) -> Vec<String> {
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8");
        let version = format!("{:?}", Session::read_version(FILE, pi).map(|v| v.rewrite));
        let session = match Session::from_bytes(FILE, pi) {
            Ok(session) => session,
            Err(e) => return vec![version, e.to_string()],
        };
        let mut context = Vec::new();
        let mut llm = Vec::new();
        match (
            session.context(Leaf::Current),
            session.to_llm(Leaf::Current),
        ) {
            (Ok(c), Ok(l)) => {
                c.write_json(&mut context).expect("writes");
                context::write_messages(&l, &mut llm).expect("writes");
            }
            (c, _) => context = format!("{:?}", c.err()).into_bytes(),
        }
        let mut info = Vec::new();
        session.write_info(&mut info).expect("writes");
        vec![
            version,
            text(context),
            text(llm),
            text(session.tree_json()),
            text(info),
            text(session.to_jsonl()),
            format!("{:?}", session.stats()),
            text(info::session_info_json(FILE, 0.0, pi)),
        ]
    }

    #[test]
    fn pi_1_5_reads_as_0_87_does() {
        let current = read(PiVersion::V1_5);
        assert_eq!(current, read(PiVersion::V0_87));
        // The case tells the versions apart: 0.73.1 reads it otherwise.
        assert_ne!(current, read(PiVersion::V0_73));
        assert!(current[1].contains(r#""role":"system""#), "{}", current[1]);
        assert!(current[1].contains("short"), "the context edit applies");
    }

    #[test]
    fn the_default_is_current_pi_and_each_writes_as_it_reads() {
        assert_eq!(PiVersion::default(), PiVersion::V1_5);
        assert_eq!(
            WriteProfile::default(),
            PiVersion::default().write_profile()
        );
        for pi in PiVersion::ALL {
            assert_eq!(pi.write_profile().reading(), pi);
            assert_eq!(pi.write_profile().release(), pi.release());
            assert_eq!(pi.short_name().parse::<PiVersion>(), Ok(pi));
            assert_eq!(pi.release().parse::<PiVersion>(), Ok(pi));
            assert_eq!(pi.to_string(), pi.release());
        }
        assert!("1.5.1".parse::<PiVersion>().is_err());
        assert!(!PiVersion::V0_73.reads_like_0_87());
    }
}

/// The example of the crate's README (and of the workspace's), compiled with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
