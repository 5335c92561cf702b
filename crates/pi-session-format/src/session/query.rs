//! The one-call answers of a loaded session: what pi sends to the model
//! ([`Session::context`], [`Session::to_llm`]), the tree ([`Session::tree`]), the listing
//! entry ([`Session::info`]) and the entries as typed values ([`Session::entries`]).
//!
//! Each answer uses the rules the session was loaded with ([`Session::pi`]) and the index
//! built on first use ([`Session::index`]), so that asking several questions of one session
//! links its entries once.

use super::Session;
use super::record::Record;
use crate::context::{Context, Message, build_context};
use crate::info::{mtime_ms, write_session_info};
use crate::json::{self, JsValue};
use crate::omp::{OmpContext, OmpContextError};
use crate::tree::{CycleError, Index, Leaf, Tree};
use crate::{Dialect, llm, types};
use std::fmt;
use std::io::{self, Write};
use std::time::SystemTime;

impl<'a> Session<'a> {
    /// `byId`, the leaf and the parent links ([`Index`]), built the first time they are
    /// needed and kept: every later question reuses them.
    ///
    /// The index describes the records as they were loaded; after changing the public
    /// fields, build a new one with [`Index::build`].
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| Index::build(self))
    }

    /// What pi's `buildSessionContext` returns for `leaf` ([`Leaf::Current`]: the leaf pi
    /// has after opening the file), with the rules of [`Session::pi`].
    ///
    /// Fails only on a parent cycle on the path, where pi loops forever.
    ///
    /// ```
    /// use pi_session_format::{Leaf, PiVersion, Session};
    ///
    /// let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
    /// {"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
    /// "#;
    /// let session = Session::from_bytes(file, PiVersion::V0_73)?;
    /// let context = session.context(Leaf::Current)?;
    /// assert_eq!(context.messages.len(), 1);
    /// assert_eq!(context.messages[0].role(), Some("user"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn context(&self, leaf: Leaf) -> Result<Context<'_>, CycleError> {
        build_context(self, self.index(), &leaf, self.pi)
    }

    /// What omp's `buildSessionContext` returns for `leaf` ([`Leaf::Current`]: the leaf omp
    /// has after opening the file), whatever the session's [`Session::dialect`]: read a file
    /// as omp's ([`crate::session::Loader::dialect`]) so that its title slot is not taken
    /// for its header. See [`crate::omp::context`] for what differs from pi's.
    ///
    /// Fails where the path holds what is not reproduced yet
    /// ([`OmpContextError::Unsupported`]).
    ///
    /// The images omp keeps in its blob store come back from `blobs` (a
    /// [`crate::omp::Blobs`] at omp's store, `pi_session_fs::omp_store`, or any directory);
    /// without one, or where it lacks a blob, the `blob:sha256:` reference stays, as omp
    /// leaves it ([`OmpContext::missing_blobs`]).
    pub fn omp_context(
        &self,
        leaf: Leaf,
        blobs: Option<&crate::omp::Blobs>,
    ) -> Result<OmpContext, OmpContextError> {
        crate::omp::context::build(self, &leaf, blobs)
    }

    /// What omp's `getSessionStats()` (`/session`) gives for the session omp resumes: the
    /// messages of [`Session::omp_context`], `task` subagents' usage and the `model_usage`
    /// entries of the active window ([`crate::omp::stats`] says where it differs from pi's).
    /// Fails where the context does.
    pub fn omp_stats(&self) -> Result<crate::omp::OmpStats, OmpContextError> {
        crate::omp::stats::stats(self)
    }

    /// omp's `getTree()` of the session as JSON (`[{"id","type","label"?,"children"}]`), written
    /// to `out` ([`crate::omp::tree`] says where it differs from pi's); a tree omp would never
    /// finish writing is refused ([`crate::omp::OmpTreeError`]).
    pub fn write_omp_tree(&self, out: &mut dyn Write) -> Result<(), crate::omp::OmpTreeError> {
        crate::omp::tree::write_json(self, out)
    }

    /// omp's `getTree()` of the session as a view to draw ([`crate::tree::Tree::write_text`]):
    /// omp's roots and children, in its order; refused where [`Session::write_omp_tree`] is.
    pub fn omp_tree(&self) -> Result<crate::tree::Tree, crate::omp::OmpTreeError> {
        crate::omp::tree::view(self)
    }

    /// The messages pi sends to the model for `leaf`: `convertToLlm` of the context's
    /// messages ([`llm::to_llm`]).
    pub fn to_llm(&self, leaf: Leaf) -> Result<Vec<Message<'_>>, CycleError> {
        Ok(llm::to_llm(self.context(leaf)?.messages, self.pi))
    }

    /// The tree pi's `getTree()` builds (children sorted, labels attached);
    /// [`Tree::write_json`] writes it as pi's `JSON.stringify` shows it.
    pub fn tree(&self) -> Tree {
        Tree::build(self, self.index())
    }

    /// The context the session resumes with, in its dialect ([`Session::dialect`]), written
    /// as `JSON.stringify` writes it (no newline): pi's [`Session::context`] for `leaf`, or
    /// omp's ([`Session::omp_context`], images from `blobs`). The notes say what was skipped
    /// or left in place on the way.
    pub fn write_resumed_context(
        &self,
        leaf: Leaf,
        blobs: Option<&crate::omp::Blobs>,
        out: &mut dyn Write,
    ) -> Result<ContextNotes, ResumeError> {
        if self.dialect == Dialect::Omp {
            let context = self.omp_context(leaf, blobs).map_err(ResumeError::Omp)?;
            context.write_json(out).map_err(ResumeError::Io)?;
            return Ok(ContextNotes {
                skipped_lines: Vec::new(),
                missing_blobs: context.missing_blobs,
            });
        }
        let context = self.context(leaf).map_err(ResumeError::Cycle)?;
        context.write_json(out).map_err(ResumeError::Io)?;
        Ok(ContextNotes {
            skipped_lines: context.skipped_lines,
            missing_blobs: Vec::new(),
        })
    }

    /// The tree in the session's dialect as JSON (`[{"id","type","label"?,"children"}]`, no
    /// newline): pi's ([`Session::tree_json`]) or omp's ([`Session::write_omp_tree`], which
    /// refuses a tree omp would never finish).
    pub fn write_tree_json(&self, out: &mut dyn Write) -> Result<(), crate::omp::OmpTreeError> {
        match self.dialect {
            Dialect::Omp => self.write_omp_tree(out),
            Dialect::Pi => Ok(out.write_all(&self.tree_json())?),
        }
    }

    /// [`Session::tree`] written as pi's `JSON.stringify(getTree())` shows it.
    pub fn tree_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.tree().write_json(self, self.index(), &mut out);
        out
    }

    /// The listing entry pi shows for the file (`SessionManager.list()`, `pi --resume`):
    /// `{id, cwd, name?, parentSessionPath?, created, modified, messageCount, firstMessage,
    /// allMessagesText}`, or `None` when pi leaves the file out of lists; for a session read
    /// in omp's dialect, omp's entry ([`crate::omp::info`]).
    ///
    /// pi's last fallback for `modified` is the file's modification time: the one
    /// [`Session::open`] read, or the one given to [`Session::with_mtime`], else the Unix
    /// epoch.
    pub fn info(&self) -> Option<JsValue> {
        let mut out = Vec::new();
        // Writing into a vector cannot fail.
        let _ = self.write_info(&mut out);
        // The entry is `JSON.stringify` output, or `null`.
        json::parse(std::str::from_utf8(&out).ok()?)
            .ok()
            .filter(|v| !matches!(v, JsValue::Null))
    }

    /// [`Session::info`] written as `JSON.stringify` shows it (`null` when pi leaves the
    /// file out of lists), streamed: memory holds pieces of the file, not its texts. A
    /// session read in omp's dialect gets omp's listing entry ([`crate::omp::info`]).
    pub fn write_info(&self, out: &mut dyn Write) -> io::Result<()> {
        self.write_info_at(self.mtime_ms.unwrap_or(0.0), out)
    }

    /// [`Session::write_info`] with `mtime_ms` as the file's modification time.
    pub fn write_info_at(&self, mtime_ms: f64, out: &mut dyn Write) -> io::Result<()> {
        match self.dialect {
            Dialect::Omp => crate::omp::info::write_info(self.source, None, mtime_ms, out),
            Dialect::Pi => write_session_info(self.source, None, mtime_ms, self.pi, out),
        }
    }

    /// The session with `mtime` as the file's modification time ([`Session::info`]).
    pub fn with_mtime(mut self, mtime: SystemTime) -> Session<'a> {
        self.mtime_ms = Some(mtime_ms(mtime));
        self
    }

    /// The entries in file order as typed values ([`types::Entry`]: unknown fields and
    /// unknown entry types are kept, so serializing one loses nothing of its value), each
    /// with its [`Record`] for what the typed model does not say (its line, its exact
    /// text). A file pi migrated yields the migrated entries.
    ///
    /// An entry whose known `type` does not have the fields pi's types declare is an
    /// [`EntryError`]: pi itself reads such lines without checking them, and so do the
    /// other methods of [`Session`]. Strings are Rust strings: a lone surrogate (which a
    /// JavaScript string may hold) becomes U+FFFD in the typed value, and duplicate keys keep
    /// the last value, as `JSON.parse` does; the record keeps the exact text.
    ///
    /// ```
    /// use pi_session_format::{PiVersion, Session, types::Entry};
    ///
    /// let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
    /// {"type":"session_info","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"demo","mood":"kept"}
    /// "#;
    /// let session = Session::from_bytes(file, PiVersion::V0_73)?;
    /// let entry = session.entries().next().unwrap()?;
    /// let Entry::SessionInfo(info) = &entry.entry else { panic!("a session_info entry") };
    /// assert_eq!(info.name.as_deref(), Some("demo"));
    /// assert_eq!(info.extra["mood"], "kept");
    /// assert_eq!(entry.record.line, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn entries(
        &self,
    ) -> impl ExactSizeIterator<Item = Result<TypedEntry<'_, 'a>, EntryError>> + '_ {
        self.entry_records().map(TypedEntry::of)
    }
}

/// An entry as a typed value, with the record it was read from.
#[derive(Debug)]
pub struct TypedEntry<'s, 'a> {
    /// The typed value.
    pub entry: types::Entry,
    /// The line it was read from: its number, its text, its value as JavaScript sees it.
    pub record: &'s Record<'a>,
}

impl<'s, 'a> TypedEntry<'s, 'a> {
    pub(crate) fn of(record: &'s Record<'a>) -> Result<TypedEntry<'s, 'a>, EntryError> {
        let parsed = if record.is_rewritten() {
            typed_from_text(&json::to_string(&record.value()))
        } else {
            typed_from_text(record.text())
        };
        match parsed {
            Ok(entry) => Ok(TypedEntry { entry, record }),
            Err(e) => Err(EntryError {
                line: record.line,
                column: if record.is_rewritten() {
                    1
                } else {
                    e.column().max(1)
                },
                message: e.to_string(),
            }),
        }
    }
}

/// The typed value of `text` (one JSON value). A lone surrogate (which JavaScript strings may
/// hold, and pi writes as `\udXXX`) has no Rust `String`: the typed value gets U+FFFD
/// instead (the record keeps the exact text).
pub(crate) fn typed_from_text<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, serde_json::Error> {
    serde_json::from_str(text).or_else(|first| {
        let Ok(value) = json::parse(text) else {
            return Err(first);
        };
        serde_json::from_str(&without_lone_surrogates(&json::to_string(&value))).map_err(|_| first)
    })
}

/// `JSON.stringify` output with every `\udXXX` escape (a lone surrogate: `JSON.stringify` writes
/// paired ones as the character itself) replaced by `\ufffd`.
pub(crate) fn without_lone_surrogates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let b = text.as_bytes();
        let lone = b.get(at + 1) == Some(&b'u')
            && b.get(at + 2).is_some_and(|d| d.eq_ignore_ascii_case(&b'd'))
            && b.get(at + 3)
                .is_some_and(|h| matches!(h.to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f'))
            && b.get(at + 4..at + 6)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        if lone {
            out.push_str("\\ufffd");
            for _ in 0..5 {
                chars.next();
            }
        } else {
            // Any other escape: the backslash and the character it escapes, as they are.
            out.push(c);
            if let Some((_, escaped)) = chars.next() {
                out.push(escaped);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_lone_surrogates;

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        assert_eq!(without_lone_surrogates(r#""a\ud800b""#), r#""a\ufffdb""#);
        assert_eq!(
            without_lone_surrogates(r#""\uDFFF\u0041""#),
            r#""\ufffd\u0041""#
        );
        // An escaped backslash followed by "ud800" is text, not an escape.
        assert_eq!(without_lone_surrogates(r#""\\ud800""#), r#""\\ud800""#);
        assert_eq!(without_lone_surrogates("\"é\\"), "\"é\\");
        assert_eq!(without_lone_surrogates(r#""\ud8""#), r#""\ud8""#);
    }
}

/// What [`Session::write_resumed_context`] skipped or left in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextNotes {
    /// pi: the lines of `message` entries without a message, skipped (pi would throw).
    pub skipped_lines: Vec<usize>,
    /// omp: the line and sha256 of each image reference whose blob is not in the store; the
    /// reference is left in place, as omp leaves it.
    pub missing_blobs: Vec<(usize, String)>,
}

impl ContextNotes {
    /// The notes as `LINE: warning: …` lines, the text `pi-session context` prints on
    /// standard error and the bindings give as warnings; `blobs` is the store the image
    /// references were looked up in.
    pub fn warnings(&self, blobs: Option<&crate::omp::Blobs>) -> Vec<String> {
        let store = blobs.map_or_else(String::new, |b| b.dir().display().to_string());
        let skipped = self.skipped_lines.iter().map(|&line| skipped_warning(line));
        let missing = self.missing_blobs.iter().map(|(line, hash)| {
            format!(
                "{line}: warning: blob sha256:{hash} is not in the blob store {store}; its \
                 reference is left in place, as omp leaves it"
            )
        });
        skipped.chain(missing).collect()
    }
}

/// The warning for the `message` entry on `line` without a message, which pi's context
/// skips (pi would throw).
pub fn skipped_warning(line: usize) -> String {
    format!(
        "{line}: warning: `message` is missing or null; entry skipped (pi would throw a TypeError)"
    )
}

/// Why [`Session::write_resumed_context`] wrote no context.
#[derive(Debug)]
#[non_exhaustive]
pub enum ResumeError {
    /// A parent cycle on pi's path (pi loops forever there).
    Cycle(CycleError),
    /// omp's path holds what is not reproduced yet.
    Omp(OmpContextError),
    /// Writing failed.
    Io(io::Error),
}

impl ResumeError {
    /// A stable name for the error, the same in every binding.
    pub fn code(&self) -> &'static str {
        match self {
            ResumeError::Cycle(e) => e.code(),
            ResumeError::Omp(e) => e.code(),
            ResumeError::Io(e) => pi_session_fs::io_code(e),
        }
    }
}

impl fmt::Display for ResumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeError::Cycle(e) => e.fmt(f),
            ResumeError::Omp(e) => e.fmt(f),
            ResumeError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ResumeError {}

/// An entry that does not fit the typed model ([`Session::entries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column where the typed model stopped, when serde knows it; otherwise 1 (the
    /// whole value: a field of a known entry type, or a migrated entry, whose text is not
    /// the file's).
    pub column: usize,
    /// What does not fit (serde's message).
    pub message: String,
}

impl EntryError {
    /// A stable name for the error, the same in every binding: `entry-not-typed`.
    pub fn code(&self) -> &'static str {
        "entry-not-typed"
    }
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: the entry does not fit the typed model: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for EntryError {}
