//! [`Loader`]: the one way to load a session. Every way in — the CLI, the benches, the
//! bindings, [`Session::from_bytes`] and [`Session::open`] — is a `Loader` with some of its
//! options set:
//!
//! - whose rules ([`PiVersion`]);
//! - where a v1 file's new ids come from ([`Loader::ids`]: random, as pi, by default);
//! - how the loader gets at the bytes: it scans them itself, telling the caller which ranges
//!   it is done with ([`Loader::releasing`]: a caller that maps a file lets their pages go),
//!   or it reads copies through a function ([`Loader::reading`]: the pages of a mapped file
//!   are never brought in);
//! - what it makes: a [`Session`] ([`Loader::load`]), a [`Migration`] that rewrites a v1/v2
//!   file line by line without migrating it in memory ([`Loader::load_for_rewrite`]), or an
//!   [`OwnedSession`] read from a path ([`Loader::open`]).
//!
//! ```
//! use pi_session_format::{PiVersion, Session};
//! use pi_session_format::migrate::SequentialIds;
//!
//! let v1 = br#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
//! {"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
//! "#;
//! let mut ids = SequentialIds::default();
//! let released = std::sync::Mutex::new(0);
//! let session = Session::loader(PiVersion::V0_87)
//!     .ids(&mut ids)
//!     .releasing(&|range| *released.lock().unwrap() += range.len())
//!     .load(v1)?;
//! assert!(session.version.migrated_v1);
//! assert_eq!(session.entry_records().next().unwrap().id.display(), "\"00000001\"");
//! assert_eq!(*released.lock().unwrap(), v1.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::load::{LoadError, LoadOptions, Pieces, ReadAt, VersionInfo};
use super::open::{OpenError, OwnedSession};
use super::{Migration, Session};
use crate::dialect::omp_entry_type;
use crate::migrate::{IdGenerator, RandomIds};
use crate::{Dialect, PiVersion};
use pi_session_fs::input::Input;
use std::ops::Range;
use std::path::Path;

/// How to load a session (see the [module](self) docs). Made by [`Session::loader`].
#[must_use = "a Loader does nothing until `load`, `load_for_rewrite` or `open`"]
pub struct Loader<'a, 'r> {
    pi: PiVersion,
    /// The dialect; `None`: detected from the bytes ([`Loader::detect_dialect`]).
    dialect: Option<Dialect>,
    ids: Option<&'r mut dyn IdGenerator>,
    pieces: Pieces<'r, 'a>,
}

/// What [`Loader::releasing`] calls when nothing was asked for.
const KEEP: &(dyn Fn(Range<usize>) + Sync) = &|_| {};

impl<'a, 'r> Loader<'a, 'r> {
    /// A loader with `pi`'s rules, random ids for a v1 file (as pi), scanning the bytes.
    pub(super) fn new(pi: PiVersion) -> Loader<'a, 'r> {
        Loader {
            pi,
            dialect: Some(Dialect::Pi),
            ids: None,
            pieces: Pieces::Borrowed(KEEP),
        }
    }

    /// Where the ids a v1 file's entries get come from (random by default, as pi's;
    /// [`crate::migrate::SequentialIds`] for output that is the same every time).
    pub fn ids(mut self, ids: &'r mut dyn IdGenerator) -> Self {
        self.ids = Some(ids);
        self
    }

    /// The file's dialect (pi's by default). Read as omp's ([`Dialect::Omp`]), a title slot
    /// on the first line is not a record but [`Session::title_slot`], and the session's
    /// answers are omp's where it has its own ([`Session::omp_context`]). The other rules
    /// of loading are those of `pi` ([`Session::loader`]), which omp shares.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// The dialect is the file's own: found by [`Dialect::detect`] from its first lines, or
    /// (for [`Loader::open`]) from its path when that is in omp's store; a file loaded as pi's
    /// is then omp's if an entry has a type only omp writes ([`omp_entry_type`]).
    pub fn detect_dialect(mut self) -> Self {
        self.dialect = None;
        self
    }

    /// [`Loader::dialect`] when `Some`, [`Loader::detect_dialect`] when `None` (a command's
    /// `--dialect`, given or not).
    pub fn with_dialect(mut self, dialect: Option<Dialect>) -> Self {
        self.dialect = dialect;
        self
    }

    /// Calls `release(range)` for each byte range of the input the loader is done with, as
    /// soon as it is done with it (from any thread, in no particular order). The records
    /// still borrow those bytes: a caller that maps a file can drop the pages of the range
    /// from memory (they are read again if a record's text is needed later), so that loading
    /// a file never holds much more of it than a few megabytes at a time.
    pub fn releasing(mut self, release: &'r (dyn Fn(Range<usize>) + Sync)) -> Self {
        self.pieces = Pieces::Borrowed(release);
        self
    }

    /// The loader does not read the bytes itself: `read_at(buf, at)` fills small per-thread
    /// buffers with `bytes[at..at + buf.len()]` (say with a positioned read of the file the
    /// bytes map), and it scans those, validating the text as UTF-8 as it goes. Only the
    /// records whose text is asked for later touch the bytes (read again with `read_at`), so
    /// most of a mapped file's pages are never brought into memory. `read_at` returns
    /// `false` when it could not read; the loader then copies from the bytes.
    pub fn reading(mut self, read_at: &'a ReadAt<'a>) -> Self {
        self.pieces = Pieces::Read(read_at);
        self
    }

    /// Loads a file as the command line reads it: a mapped one (a large file) in pieces
    /// read with positioned reads ([`Loader::reading`] the `input`), so that its pages stay out
    /// of memory and each line whose text is asked for later is read again alone; one read
    /// into memory (a small file, or one that cannot be mapped) as it is, where reading
    /// copies of it would only cost time.
    pub fn load_input(self, input: &'a Input) -> Result<Session<'a>, LoadError> {
        match input.is_mapped() {
            true => self.reading(input).load(input.bytes()),
            false => self.load(input.bytes()),
        }
    }

    /// The version of a file that loads as pi's (its dialect given, or detected from
    /// `bytes`), decided by reading its header alone: `Some` only when [`Loader::load`]
    /// succeeds (its first value is a valid header); `None` when the header is not valid or
    /// the file is read as omp's, whose header rules need more of the file (`load` says
    /// why). A reader that needs nothing but that verdict from a file can skip loading it.
    pub fn header_of_pi_file(&self, bytes: &[u8]) -> Option<VersionInfo> {
        if Dialect::given_or_detected(self.dialect, bytes) != Dialect::Pi {
            return None;
        }
        Session::read_version(bytes, self.pi).ok()
    }

    /// Loads `bytes` as pi's `SessionManager.open` does: a v1/v2 file is migrated in memory.
    pub fn load(self, bytes: &'a [u8]) -> Result<Session<'a>, LoadError> {
        let (pi, pieces, detect) = (self.pi, self.pieces, self.dialect.is_none());
        let dialect = Dialect::given_or_detected(self.dialect, bytes);
        let mut session = with_ids(self.ids, |ids| {
            Session::load_from(bytes, LoadOptions { ids, pi, dialect }, pieces)
        })?;
        if detect
            && session.dialect == Dialect::Pi
            && omp_entry_type(session.entry_records()).is_some()
        {
            session.dialect = Dialect::Omp;
        }
        Ok(session)
    }

    /// Loads `bytes` for rewriting them (`pi-session migrate`): a v1/v2 file is not migrated
    /// in memory; [`Migration::write`] migrates it line by line into a writer, so memory
    /// holds the skeleton and the ids, not the file's values.
    pub fn load_for_rewrite(self, bytes: &'a [u8]) -> Result<Migration<'a>, LoadError> {
        let (pi, pieces) = (self.pi, self.pieces);
        let dialect = Dialect::given_or_detected(self.dialect, bytes);
        with_ids(self.ids, |ids| {
            Session::load_for_migration_from(bytes, LoadOptions { ids, pi, dialect }, pieces)
        })
    }

    /// Loads `bytes` into a session that owns them (an [`OwnedSession`], which can outlive
    /// the caller's borrow: what a binding keeps for its host language). The release and
    /// read options of this loader are its own.
    pub fn load_owned(self, bytes: Vec<u8>) -> Result<OwnedSession, LoadError> {
        let (pi, dialect, ids) = (self.pi, self.dialect, self.ids);
        with_ids(ids, |ids| OwnedSession::load(bytes, pi, dialect, ids))
    }

    /// Reads the file at `path` and loads it into a session that owns its bytes; its
    /// modification time is kept for [`Session::info`]. The file is not changed, even when
    /// pi would rewrite it (a v1/v2 file is migrated in memory only).
    ///
    /// The file is read through `pi_session_fs::input`, as the CLI reads it: a large regular
    /// file is memory-mapped and its pages let go as the loader is done with them (a
    /// `SIGBUS` handler, installed once, turns a read past the end of a file another program
    /// truncates meanwhile into [`OpenError::Io`] instead of a crash); a small one is read;
    /// `-`, a pipe or a FIFO is read as a stream, up to a cap (4 GiB or
    /// `PI_SESSION_MAX_INPUT_SIZE`). The release and read options of this loader are its own.
    pub fn open(self, path: impl AsRef<Path>) -> Result<OwnedSession, OpenError> {
        let (pi, ids) = (self.pi, self.ids);
        let path = path.as_ref();
        let dialect = self.dialect.or_else(|| Dialect::of_store_path(path));
        with_ids(ids, |ids| OwnedSession::open(path, pi, dialect, ids))
    }
}

/// Calls `f` with the ids asked for, or random ones.
fn with_ids<T>(ids: Option<&mut dyn IdGenerator>, f: impl FnOnce(&mut dyn IdGenerator) -> T) -> T {
    match ids {
        Some(ids) => f(ids),
        None => f(&mut RandomIds),
    }
}

impl<'a> Session<'a> {
    /// The one way to load a session: a [`Loader`] with `pi`'s rules, to which options are
    /// added (see the [module](super::loader) docs).
    pub fn loader<'r>(pi: PiVersion) -> Loader<'a, 'r> {
        Loader::new(pi)
    }
}
