//! Loading a session file the way pi's `SessionManager.open` does (rules P6–P9, V1–V4, L1–L4).
//!
//! Every way in is a [`Loader`] ([`Session::loader`]; [`Session::from_bytes`] and
//! [`Session::open`] are its shortest forms). Loading splits the bytes into lines ([`crate::read`]), validates every line as
//! JSON but builds only a skeleton of it (`type`, `id`, `parentId` and where the line is),
//! checks the header, detects the version and, when the version is below 3, runs the
//! migrations ([`crate::migrate`]) on fully parsed values. Entries of a current file stay as
//! borrowed line text until something (the context builder, say) asks for their value.
//!
//! Unparseable lines are not entries; they are kept in [`Session::dropped`] so that nothing
//! is lost silently (pi drops them without a word).

//!
//! The module is cut by what each part holds: [`key`] (`id`/`parentId` values compared as
//! JavaScript compares them), [`record`] (one parsed line), [`records`] (all of them, in file
//! order), [`loader`] (the one way in), `load.rs` (the parallel loader, the header and version rules), `rewrite.rs`
//! (the file as pi leaves it after loading, streamed), `query.rs` (the one-call answers:
//! context, `convertToLlm`, tree, listing, typed entries) and `open.rs` (a session that owns
//! its bytes, read from a path).

use crate::omp::TitleSlot;
use crate::{Dialect, PiVersion};
use std::ops::Range;
use std::sync::OnceLock;

pub mod index;
pub mod key;
mod load;
pub(crate) use load::shared_type;
pub mod loader;
mod open;
mod query;
pub(crate) use query::{typed_from_text, without_lone_surrogates};
pub mod record;
pub mod records;
pub(crate) mod rewrite;

pub use index::Index;
pub use key::{Key, KeyBytes, QUOTE_MAX, quoted};
#[cfg(test)]
pub(crate) use load::LoadOptions;
pub use load::{
    DroppedLine, HeaderProblem, LoadError, PositionedRead, ReadAt, SkippedValue, VersionInfo,
    version_number,
};
pub use loader::Loader;
pub use open::{OpenError, OwnedSession};
pub use query::{ContextNotes, EntryError, ResumeError, TypedEntry, skipped_warning};
pub use record::{Kind, Record, ValueRef};
pub use records::Records;
use rewrite::Plan;
pub use rewrite::{Change, ChangeKind, Changes, whole_file};

/// A session loaded for rewriting ([`Loader::load_for_rewrite`]): read, its migration
/// ids assigned, its values not migrated yet.
#[derive(Debug)]
pub struct Migration<'a> {
    session: Session<'a>,
    plan: Plan,
}

impl<'a> Migration<'a> {
    /// The session as read: the records hold the file's own values and ids, not the
    /// migrated ones (`version`, `dropped` and `skipped` are those of a normal load).
    pub fn session(&self) -> &Session<'a> {
        &self.session
    }

    /// Whether pi rewrites the file (any version below 3, or not a number).
    pub fn changed(&self) -> bool {
        self.session.version.rewrite
    }

    /// Writes the file as pi leaves it after loading (exactly [`Session::to_jsonl`] of the
    /// same file loaded with the same ids), migrating one line at a time, and collects in
    /// `changes` what `JSON.parse`/`JSON.stringify` lose on the way. `release` is told which
    /// byte ranges of the input are done with (see [`Loader::releasing`]).
    pub fn write(
        &self,
        out: &mut dyn std::io::Write,
        changes: &mut Changes,
        release: &(dyn Fn(Range<usize>) + Sync),
    ) -> std::io::Result<()> {
        rewrite::write_lines(&self.session, &self.plan, out, changes, release)
    }
}

/// A loaded session file.
#[derive(Debug)]
pub struct Session<'a> {
    /// The bytes the session was loaded from.
    pub source: &'a [u8],
    /// Every parsed value in file order; `records[0]` is the header.
    pub records: Records<'a>,
    /// Indices into `records` of the entries: every value except `type: "session"` lines.
    pub entries: Vec<usize>,
    /// Lines that are not JSON.
    pub dropped: Vec<DroppedLine>,
    /// Values pi cannot process (`null` anywhere; non-objects in a file it migrates),
    /// skipped instead of crashing. They are not in `entries`.
    pub skipped: Vec<SkippedValue>,
    /// Version detection and migration.
    pub version: VersionInfo,
    /// Whose loading rules were followed.
    pub pi: PiVersion,
    /// The file's dialect ([`Loader::dialect`]): pi's, or oh-my-pi's.
    pub dialect: Dialect,
    /// omp's title slot, when the file is read as omp's and starts with one: its line is
    /// not a record (`records[0]` is still the header).
    pub title_slot: Option<TitleSlot>,
    /// The migration the records went through (the ids v1→v2 gave them).
    plan: Plan,
    /// `byId`, the leaf and the links, built the first time something needs them
    /// ([`Session::index`]). They describe the records as loaded: code that changes the
    /// public fields afterwards builds its own with [`Index::build`].
    index: OnceLock<Index>,
    /// The file's modification time in milliseconds since the Unix epoch, pi's last
    /// fallback for the listing's `modified` ([`Session::info`]); set by
    /// [`Session::open`] or [`Session::with_mtime`].
    mtime_ms: Option<f64>,
}

impl<'a> Session<'a> {
    /// The header record.
    pub fn header(&self) -> &Record<'a> {
        &self.records[0]
    }

    /// The entries (non-header values) in file order.
    pub fn entry_records(&self) -> impl ExactSizeIterator<Item = &Record<'a>> {
        self.entries.iter().map(|&i| &self.records[i])
    }

    /// The file as pi leaves it after loading. When pi migrates (any version below 3), it
    /// rewrites every value with `JSON.stringify`, one per line; unlike pi, lines that are
    /// not JSON are kept, byte for byte, at their place. Otherwise the file is unchanged,
    /// except that pi 0.87.1 ends an unterminated last line with a newline.
    ///
    /// The whole output in memory: [`Session::write_jsonl`] streams it, and
    /// [`Loader::load_for_rewrite`] does not even build the migrated values.
    pub fn to_jsonl(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.source.len());
        // Writing into a vector cannot fail.
        let _ = self.write_jsonl(&mut out);
        out
    }

    /// [`Session::to_jsonl`], written to `out` a batch of lines at a time.
    pub fn write_jsonl(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        rewrite::write_lines(self, &self.plan, out, &mut Changes::new(0), &|_| {})
    }

    /// The original bytes of a line that is not JSON.
    pub fn dropped_bytes(&self, d: &DroppedLine) -> &'a [u8] {
        self.source
            .get(d.offset..d.offset + d.len)
            .unwrap_or_default()
    }
}
