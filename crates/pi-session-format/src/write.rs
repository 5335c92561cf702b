//! The writer half: [`SessionWriter`], pi's `SessionManager` for Rust, writing the bytes pi
//! writes for the same operations, ids and times, with the file handling pi lacks.
//!
//! A writer follows one pi's rules ([`WriteProfile`], default current pi 1.5.2): the key order
//! of every entry, which optional members are written, how names and context edits are
//! normalised, and when the file is first created (the header and the first entries wait in
//! memory until the first user message in 1.5.2, the first assistant message before). Its ids
//! and clock are injectable ([`WriterConfig`]), so tests and third parties get deterministic
//! bytes; `conformance/writers/` holds what pi itself wrote for scripted operations.
//!
//! Where pi can lose data, the writer does not, and says so in its errors:
//! - appends are one `write` of a whole line to a file opened with `O_APPEND`, under an
//!   advisory lock (a second writer of ours fails with [`FileError::Locked`]); `fsync` on
//!   request ([`WriterConfig::fsync`]);
//! - a torn last line (a crash mid-append) is ended with a newline before the next append;
//! - a failed append cuts its partial line off (only when nothing follows it) and leaves the
//!   writer as it was; a batch is all or nothing even when the process is killed (the
//!   journal of [`pi_session_fs::append`]);
//! - the migration of a v1/v2 file on open goes through [`pi_session_fs::replace`], as
//!   `migrate --in-place` does: atomic, under the lock, keeping mode, owner and extended
//!   attributes, and refusing a hard-linked or read-only file; a branched session is
//!   published atomically; a file whose header cannot be read is refused, never overwritten;
//! - a file reopened before its first assistant message is appended to, never given a second
//!   header (pi 0.73.1 re-appends everything).
//!
//! ```
//! use pi_session_format::json::{self, JsValue};
//! use pi_session_format::write::{ManualClock, SequentialIds, SessionWriter, WriterConfig};
//!
//! let clock = ManualClock::at(1_775_030_400_000);
//! let config = WriterConfig::default().ids(SequentialIds::new()).clock(clock.clone());
//! let mut writer = SessionWriter::in_memory("/work", config)?;
//! let user = json::parse(r#"{"role":"user","content":"hi","timestamp":1775030400000}"#)?;
//! let id = writer.append_message_value(&user)?;
//! assert_eq!(id, "00000001");
//! clock.advance(1000);
//! writer.append_session_info("  first\nsession ")?;
//! let text = String::from_utf8(writer.to_jsonl())?;
//! assert!(text.ends_with(r#""parentId":"00000001","timestamp":"2026-04-01T08:00:01.000Z","name":"first session"}
//! "#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod append;
mod batch;
mod branched;
mod build;
mod check_document;
mod extend;
mod ids;
mod labels;
mod open;
mod paths;
mod profile;
mod system;

pub use append::{BranchSummary, Compaction};
pub use extend::{Commit, EntryError, FileAppend, Plan};
pub use ids::{Clock, IdSource, ManualClock, RandomIds, SequentialIds, SystemClock};
pub use paths::{
    agent_dir, default_session_dir, is_valid_session_id, resolve_path, session_dir_name,
    session_file_name,
};
pub use pi_session_fs::FileError;
pub use profile::{UnknownProfile, WriteProfile};
pub use system::TypeError;

use crate::date;
use crate::json::{self, JsString, JsValue, Role};
use crate::session::{Key, Kind, LoadError, OwnedSession, Record, Session};
use labels::Labels;
use pi_session_fs::Appender;
use pi_session_fs::input::Input;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a writer is set up: the pi it writes like, where its ids and times come from,
/// whether it syncs, and the id of the session it creates.
pub struct WriterConfig {
    profile: WriteProfile,
    ids: Box<dyn IdSource>,
    clock: Box<dyn Clock>,
    fsync: bool,
    session_id: Option<String>,
}

impl Default for WriterConfig {
    /// Current pi's rules, random ids, the system clock, no `fsync`.
    fn default() -> Self {
        WriterConfig {
            profile: WriteProfile::default(),
            ids: Box::new(RandomIds::new()),
            clock: Box::new(SystemClock),
            fsync: false,
            session_id: None,
        }
    }
}

impl fmt::Debug for WriterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriterConfig")
            .field("profile", &self.profile)
            .field("fsync", &self.fsync)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl WriterConfig {
    /// Writes like `profile`.
    pub fn profile(mut self, profile: WriteProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Draws ids from `ids`.
    pub fn ids(mut self, ids: impl IdSource + 'static) -> Self {
        self.ids = Box::new(ids);
        self
    }

    /// Reads the time from `clock`.
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Syncs the file's data after every write (`fdatasync`).
    pub fn fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Gives a created session this id instead of a new UUID v7 (pi's `{ id }` option).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }
}

/// Why a writer operation failed. The writer is unchanged after any of them.
#[derive(Debug)]
#[non_exhaustive]
pub enum WriteError {
    /// No entry has this id (`branch`, `label`, `context_edit`, `create_branched_session`).
    NotFound(String),
    /// A context edit's target is not on the active branch.
    NotOnBranch(String),
    /// A context edit's target holds no model content (only user, assistant and tool result
    /// messages and custom messages do).
    NotEditable(String),
    /// A context edit's replacement is neither `null` nor `{content: string | array}`.
    BadReplacement,
    /// A context edit replacement whose content pi would write but the format does not allow
    /// (array items that are not content blocks): the file would not be strict-valid, and the
    /// model would be sent the items as they are.
    BadReplacementContent(String),
    /// A message that is not a JSON object.
    BadMessage(String),
    /// An entry given whole ([`SessionWriter::append_entry`]) that cannot be appended.
    BadEntry(String),
    /// A session id pi would refuse (it must match `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`).
    InvalidSessionId(String),
    /// The profile has no such entry (`usage` and `context_edit` are 0.87.1+).
    Unsupported {
        /// What was asked for.
        what: &'static str,
        /// The profile.
        profile: WriteProfile,
    },
    /// An argument the profile's pi requires was not given.
    MissingArgument {
        /// Which, and what to do.
        what: &'static str,
        /// The profile.
        profile: WriteProfile,
    },
    /// The parent links of the active branch form a cycle (pi loops forever on it).
    Cycle(String),
    /// pi throws a `TypeError` on this input; the writer refuses it instead.
    Type(TypeError),
    /// The file is not a pi session (its first line is not a header); nothing was written.
    NotASession {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file could not be read or written.
    File(FileError),
    /// A v1 or v2 file, which pi migrates and rewrites when it opens it: appending to it is
    /// refused; `migrate --in-place` rewrites it first, with its safeguards.
    OldVersion {
        /// The file.
        path: PathBuf,
        /// Its `version` as pi reads it.
        version: f64,
    },
}

impl WriteError {
    /// A stable name for the error, the same in every binding: `entry-not-found`,
    /// `not-on-branch`, `not-editable`, `bad-replacement`, `bad-message`, `bad-entry`,
    /// `invalid-session-id`, `unsupported`, `missing-argument`, `PS0213` (a parent cycle, the
    /// validator's code), `type-error` (where pi throws a `TypeError`), `not-a-session`,
    /// `old-version`, or the file's ([`FileError::code`](pi_session_fs::FileError::code)).
    pub fn code(&self) -> &'static str {
        match self {
            WriteError::NotFound(_) => "entry-not-found",
            WriteError::NotOnBranch(_) => "not-on-branch",
            WriteError::NotEditable(_) => "not-editable",
            WriteError::BadReplacement | WriteError::BadReplacementContent(_) => "bad-replacement",
            WriteError::BadMessage(_) => "bad-message",
            WriteError::BadEntry(_) => "bad-entry",
            WriteError::InvalidSessionId(_) => "invalid-session-id",
            WriteError::Unsupported { .. } => "unsupported",
            WriteError::MissingArgument { .. } => "missing-argument",
            WriteError::Cycle(_) => "PS0213",
            WriteError::Type(_) => "type-error",
            WriteError::NotASession { .. } => "not-a-session",
            WriteError::File(file) => file.code(),
            WriteError::OldVersion { .. } => "old-version",
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::NotFound(id) => write!(f, "Entry {id} not found"),
            WriteError::NotOnBranch(id) => write!(f, "Entry {id} is not on the active branch"),
            WriteError::NotEditable(id) => {
                write!(f, "Entry {id} does not contribute editable model content")
            }
            WriteError::BadReplacement => {
                f.write_str("Context edit replacement must be null or contain string/array content")
            }
            WriteError::BadReplacementContent(why) => write!(
                f,
                "context edit replacement content must be a string or an array of content blocks ({{\"type\":\"text\",\"text\":…}}, …): {why}"
            ),
            WriteError::BadMessage(why) => write!(f, "not a message: {why}"),
            WriteError::BadEntry(why) => write!(f, "cannot append this entry: {why}"),
            WriteError::InvalidSessionId(id) => write!(
                f,
                "session id {id:?}: must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
            ),
            WriteError::Unsupported { what, profile } => {
                write!(f, "pi {profile} has no {what}; write with pi 0.87 or later")
            }
            WriteError::MissingArgument { what, profile } => {
                write!(f, "pi {profile} needs {what}")
            }
            WriteError::Cycle(id) => write!(
                f,
                "the parent links from entry {id} form a cycle; repair the file first"
            ),
            WriteError::Type(e) => write!(f, "pi throws a TypeError here: {}", e.0),
            WriteError::NotASession { path, reason } => write!(
                f,
                "{}: not a pi session ({reason}); nothing was written",
                path.display()
            ),
            WriteError::File(e) => e.fmt(f),
            WriteError::OldVersion { path, version } => write!(
                f,
                "{}: a version {version} session; pi migrates and rewrites such a file when it opens it, so nothing is appended to it as it is. Run `pi-session migrate --in-place {}` first (it keeps the file's mode, owner and extended attributes, and refuses what it cannot keep), then append",
                pi_session_fs::display::path(path),
                pi_session_fs::display::path(path)
            ),
        }
    }
}

impl WriteError {
    /// Whether the file is as it was before the failed operation (only a write that failed
    /// half-way, with other lines after its part, leaves something: [`FileError::Partial`]).
    pub fn wrote_nothing(&self) -> bool {
        match self {
            WriteError::File(e) => e.wrote_nothing(),
            _ => true,
        }
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WriteError::File(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FileError> for WriteError {
    fn from(e: FileError) -> Self {
        WriteError::File(e)
    }
}

/// Where a line's text is.
#[derive(Clone)]
enum Text {
    /// Built by the writer, or copied.
    Owned(Box<[u8]>),
    /// A line of the file the writer read, by its place in the file's bytes: mapped when the
    /// file is large, its pages let go once it is loaded, so that a session of gigabytes is
    /// not copied into memory (a line's pages come back when its text is asked for).
    Read(Arc<Input>, Range<usize>),
}

impl Text {
    fn bytes(&self) -> &[u8] {
        match self {
            Text::Owned(bytes) => bytes,
            Text::Read(input, range) => input.bytes().get(range.clone()).unwrap_or_default(),
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::Owned(Box::default())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Text::Owned(bytes) => write!(f, "Owned({} bytes)", bytes.len()),
            Text::Read(_, range) => write!(f, "Read({range:?})"),
        }
    }
}

/// One line of the session: its `JSON.stringify` text and what the writer needs of it.
#[derive(Debug, Clone)]
struct Line {
    /// The line's text: `JSON.stringify`'s when `canonical`, else as read from a file.
    json: Text,
    /// Whether `json` is known to be `JSON.stringify`'s text of the value.
    canonical: bool,
    /// The `id` member as a key ([`Key::Undefined`]: absent); an object or array id is a
    /// key of its own ([`line_key`]), its value read from the text when asked
    /// ([`Line::id_value`]).
    id: Key,
    /// The `parentId` member, likewise.
    parent: Key,
    /// Whether the line is a header (`type: "session"`).
    header: bool,
    /// The `type` member, when a string (pi's own types shared, not allocated per line).
    entry_type: Option<Cow<'static, str>>,
    /// The message's `role`, for `message` entries (pi's roles shared).
    role: Option<Cow<'static, str>>,
}

impl Line {
    /// The line as `JSON.stringify` writes its value (what pi writes when it rewrites a file).
    fn stringified(&self) -> std::borrow::Cow<'_, [u8]> {
        let text = self.text();
        if self.canonical {
            return std::borrow::Cow::Borrowed(text);
        }
        match std::str::from_utf8(text).ok().map(json::parse) {
            Some(Ok(value)) => std::borrow::Cow::Owned(json::to_string(&value).into_bytes()),
            _ => std::borrow::Cow::Borrowed(text),
        }
    }

    /// The line's text, without its newline.
    fn text(&self) -> &[u8] {
        self.json.bytes()
    }

    /// Calls `f` with the line's text, without bringing its part of the file into memory: a
    /// line kept by its place in the file ([`Text::Read`]) is read with a positioned read,
    /// not through the mapping, where a file held in large page-cache folios maps megabytes
    /// around each line read (the labels read when a session of gigabytes is opened mapped
    /// 190 MiB of it).
    fn with_text<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        if let Text::Read(input, range) = &self.json {
            let mut text = vec![0; range.len()];
            if input.read_at(&mut text, range.start) {
                return f(&text);
            }
        }
        f(self.text())
    }

    fn is_message(&self, role: &str) -> bool {
        self.entry_type.as_deref() == Some("message") && self.role.as_deref() == Some(role)
    }

    /// The `id` member's value (`None`: absent), read from the text for an object or array.
    fn id_value(&self) -> Option<JsValue> {
        match &self.id {
            Key::Unique(_) => build::parse_line(self).get("id").cloned(),
            key => key_value(key),
        }
    }
}

/// The key of a line's `id` or `parentId` value: an object or array is given a key equal to
/// no other (JavaScript compares them by identity), from one counter for every line.
fn line_key(value: Option<&JsValue>) -> Key {
    static UNIQUE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = match value {
        Some(JsValue::Array(_) | JsValue::Object(_)) => {
            UNIQUE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        }
        _ => 0,
    };
    Key::of(value, unique)
}

/// pi's `leafId` (`value` `None`: `undefined`; `Some(Null)`: `null`) and the key of the
/// `parentId` an entry appended under it gets: a leaf taken from a line has that line's id
/// key, so that an object id (which JavaScript compares by identity) leads back to its line
/// from the next entry, as it does within one pi process.
#[derive(Debug, Clone)]
struct LeafId {
    value: Option<JsValue>,
    key: Key,
}

impl LeafId {
    /// A leaf named by `value` (a string or `null` given by a caller), not taken from a line.
    fn named(value: Option<JsValue>) -> LeafId {
        let key = line_key(value.as_ref());
        LeafId { value, key }
    }

    /// The leaf `line` makes: its id.
    fn of_line(line: &Line) -> LeafId {
        LeafId {
            value: line.id_value(),
            key: line.id.clone(),
        }
    }
}

/// A message role, shared when it is one of pi's.
fn shared_role(role: &str) -> Cow<'static, str> {
    match Role::named(role).as_str() {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(role.to_owned()),
    }
}

/// pi's `SessionManager` for Rust: creates, opens and appends to session files with the bytes
/// pi writes (see the [module](self) docs).
pub struct SessionWriter {
    profile: WriteProfile,
    ids: Box<dyn IdSource>,
    clock: Box<dyn Clock>,
    fsync: bool,
    cwd: String,
    /// Where new sessions (branched ones) go; `None` in memory.
    session_dir: Option<PathBuf>,
    /// The session file; `None` in memory.
    path: Option<PathBuf>,
    session_id: String,
    /// pi's `fileEntries`: every line, the header first.
    lines: Vec<Line>,
    /// pi's `byId`: the last line with each id.
    by_id: FxHashMap<Key, usize>,
    labels: Labels,
    /// pi's `leafId`.
    leaf: LeafId,
    /// Whether the file holds every line (pi's `flushed`).
    flushed: bool,
    file: Option<Appender>,
    /// Lines held back for the current [`SessionWriter::batch`].
    pending: Option<Vec<u8>>,
    /// The last batch's buffer, emptied, for the next one.
    spare_buffer: Vec<u8>,
    /// The file a [`SessionWriter::load`]ed session was read from (a branched session's
    /// `parentSession`); never written.
    origin: Option<PathBuf>,
    /// The bytes of the file the lines were read from, and its path (lines keep their place
    /// in it: [`Text::Read`]).
    source: Option<(Arc<Input>, PathBuf)>,
    user_messages: usize,
    assistant_messages: usize,
}

impl fmt::Debug for SessionWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionWriter")
            .field("profile", &self.profile)
            .field("path", &self.path)
            .field("session_id", &self.session_id)
            .field("entries", &self.lines.len())
            .field("flushed", &self.flushed)
            .finish_non_exhaustive()
    }
}

fn string_key(id: &str) -> Key {
    Key::string(id)
}

/// The id as the text pi shows in its messages (`Entry ${id} not found`).
fn id_text(id: Option<&JsValue>) -> String {
    match id {
        None => "undefined".into(),
        Some(JsValue::String(s)) => s.to_string_lossy(),
        Some(v) => json::to_string(v),
    }
}

impl SessionWriter {
    fn empty(cwd: String, session_dir: Option<PathBuf>, config: WriterConfig) -> SessionWriter {
        SessionWriter {
            profile: config.profile,
            ids: config.ids,
            clock: config.clock,
            fsync: config.fsync,
            cwd,
            session_dir,
            path: None,
            session_id: String::new(),
            lines: Vec::new(),
            by_id: FxHashMap::default(),
            labels: Labels::default(),
            leaf: LeafId::named(Some(JsValue::Null)),
            flushed: false,
            file: None,
            origin: None,
            source: None,
            pending: None,
            spare_buffer: Vec::new(),
            user_messages: 0,
            assistant_messages: 0,
        }
    }

    fn cwd_of(profile: WriteProfile, cwd: &str) -> String {
        if profile.resolves_paths() {
            resolve_path(cwd)
        } else {
            cwd.to_owned()
        }
    }

    /// pi's `newSession`: a fresh header in memory, and the file name it will have.
    fn new_session(
        &mut self,
        id: Option<String>,
        parent_session: Option<String>,
    ) -> Result<(), WriteError> {
        if let Some(id) = &id
            && self.profile.resolves_paths()
            && !is_valid_session_id(id)
        {
            return Err(WriteError::InvalidSessionId(id.clone()));
        }
        let now = self.clock.now_ms();
        let session_id = match id {
            Some(id) => id,
            None => self.ids.session_id(now),
        };
        let timestamp = date::to_iso_string(now as f64);
        let header = build::header(
            &session_id,
            &timestamp,
            &self.cwd,
            parent_session.as_deref(),
        );
        self.reset_lines(vec![header]);
        self.session_id = session_id;
        self.flushed = false;
        self.file = None;
        if let Some(dir) = &self.session_dir {
            self.path = Some(dir.join(session_file_name(&timestamp, &self.session_id)));
        }
        Ok(())
    }

    /// Replaces every line and rebuilds the index (pi's `_buildIndex`).
    fn reset_lines(&mut self, lines: Vec<Line>) {
        self.lines = lines;
        self.by_id.clear();
        self.labels = Labels::default();
        self.leaf = LeafId::named(Some(JsValue::Null));
        self.user_messages = 0;
        self.assistant_messages = 0;
        for i in 0..self.lines.len() {
            self.index_line(i);
            if self.lines[i].entry_type.as_deref() == Some("label") {
                self.index_label(i);
            }
        }
    }

    /// A label entry's change to the labels (pi's `_buildIndex`: a truthy `label` sets it,
    /// anything else clears it).
    fn index_label(&mut self, i: usize) {
        let value = build::parse_line(&self.lines[i]);
        let target = value.get("targetId");
        // An object or array target names no entry (JavaScript compares them by identity).
        let key = line_key(target);
        match value.get("label").filter(|l| l.is_truthy()) {
            Some(label) => self.labels.set(
                key,
                target.cloned().unwrap_or_default(),
                label.clone(),
                value.get("timestamp").cloned(),
            ),
            None => self.labels.delete(&key),
        }
    }

    /// Counts line `i`, indexes its id and makes it the leaf; returns what it replaced (the
    /// line that had its id, the previous leaf), for undoing it.
    fn index_line(&mut self, i: usize) -> (Option<usize>, LeafId) {
        let line = &self.lines[i];
        if line.header {
            return (None, self.leaf.clone());
        }
        self.user_messages += usize::from(line.is_message("user"));
        self.assistant_messages += usize::from(line.is_message("assistant"));
        let replaced = self.by_id.insert(line.id.clone(), i);
        let previous_leaf = std::mem::replace(&mut self.leaf, LeafId::of_line(line));
        (replaced, previous_leaf)
    }

    // ---- what the writer holds -------------------------------------------------------------

    /// The profile the writer follows.
    pub fn profile(&self) -> WriteProfile {
        self.profile
    }

    /// The session id (the header's `id`).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The session file (`None` in memory). It exists once [`SessionWriter::is_written`].
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether the file holds every line (pi's `flushed`): before the first conversation,
    /// a new session lives in memory only.
    pub fn is_written(&self) -> bool {
        self.flushed
    }

    /// The current leaf's id (`None` before the first entry or after
    /// [`SessionWriter::reset_leaf`]).
    pub fn leaf_id(&self) -> Option<String> {
        match &self.leaf.value {
            Some(JsValue::String(s)) => Some(s.to_string_lossy()),
            _ => None,
        }
    }

    /// Number of entries (lines other than the header).
    pub fn entry_count(&self) -> usize {
        self.lines.iter().filter(|l| !l.header).count()
    }

    /// Checks that the file the writer read its lines from did not shrink since (another
    /// program truncated it): the lines are read from it when they are written out, so what
    /// was made from them is then not trusted.
    fn check_source(&self) -> Result<(), WriteError> {
        match &self.source {
            Some((input, path)) => input.verify().map_err(|source| {
                WriteError::File(FileError::Io {
                    path: path.clone(),
                    doing: "read",
                    source,
                })
            }),
            None => Ok(()),
        }
    }

    /// Every line the writer holds, each ending in a newline: the lines it built (as pi
    /// writes them), and those it loaded as they were read. For a written session, what the
    /// file holds (after a torn last line, which is not an entry). The loaded lines are read
    /// from the file now: if another program truncated it since, they read as zeros past its
    /// end (what [`SessionWriter::build_context`] and the branch exports check and refuse).
    pub fn to_jsonl(&self) -> Vec<u8> {
        self.whole_file()
    }

    fn whole_file(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.lines.iter().map(|l| l.text().len() + 1).sum());
        for line in &self.lines {
            out.extend_from_slice(line.text());
            out.push(b'\n');
        }
        out
    }

    /// Reads the session back with the reader (pi's rules of the same version): for
    /// [`Session::context`], [`Session::entries`], [`Session::tree`].
    pub fn read(&self) -> Result<OwnedSession, LoadError> {
        OwnedSession::new(self.whole_file(), self.profile.reading())
    }

    /// The context pi would send to the model for the current leaf
    /// (`buildSessionContext`), as its messages' JSON values.
    pub fn build_context(&self) -> Result<Vec<JsValue>, WriteError> {
        self.context_messages()
    }

    /// The path is walked as pi walks it, by the writer's keys (an object id leads to its
    /// line, as within one pi process); the entries on it are read back with the reader.
    fn context_messages(&self) -> Result<Vec<JsValue>, WriteError> {
        // pi: a `null` leaf has no context; a leaf that is not set or names no entry is
        // the last entry.
        let leaf = match &self.leaf.value {
            Some(JsValue::Null) => return Ok(Vec::new()),
            Some(id) if id.is_truthy() => self.by_id.get(&self.leaf.key).copied(),
            _ => None,
        };
        let last_entry = (self.lines.len() > 1).then(|| self.lines.len() - 1);
        let path = self.path_to(leaf.or(last_entry))?;
        let bytes = self.whole_file();
        self.check_source()?;
        let session = Session::from_bytes(&bytes, self.profile.reading())
            .map_err(|e| WriteError::Type(TypeError(e.to_string())))?;
        // `whole_file` puts the writer's line `i` on line `i + 1`.
        let mut record_of_line = vec![None; self.lines.len()];
        for (r, record) in session.records.iter().enumerate() {
            if let Some(slot) = record_of_line.get_mut(record.line - 1) {
                *slot = Some(r);
            }
        }
        let records: Vec<usize> = path.iter().filter_map(|&i| record_of_line[i]).collect();
        Ok(
            crate::context::context_of_path(&session, &records, self.profile.reading())
                .message_values(),
        )
    }

    // ---- moving the leaf -------------------------------------------------------------------

    /// Makes `from` the leaf: the next entry is its child (pi's `branch`).
    pub fn branch(&mut self, from: &str) -> Result<(), WriteError> {
        if !self.by_id.contains_key(&string_key(from)) {
            return Err(WriteError::NotFound(from.to_owned()));
        }
        self.leaf = LeafId::named(Some(JsValue::string(from)));
        Ok(())
    }

    /// Clears the leaf: the next entry is a new root (pi's `resetLeaf`).
    pub fn reset_leaf(&mut self) {
        self.leaf = LeafId::named(Some(JsValue::Null));
    }

    /// The entries from the root to `from` (default: the leaf, found by its key: an object
    /// id leads to its line, as in pi), pi's `getBranch`.
    fn branch_path(&self, from: Option<&JsValue>) -> Result<Vec<usize>, WriteError> {
        let start = match from {
            Some(id) => id.is_truthy().then(|| line_key(Some(id))),
            None => self
                .leaf
                .value
                .as_ref()
                .is_some_and(JsValue::is_truthy)
                .then(|| self.leaf.key.clone()),
        };
        self.path_to(start.and_then(|key| self.by_id.get(&key).copied()))
    }

    /// The lines from the root to line `leaf` (none for `None`), following each line's
    /// `parentId` key through `by_id`.
    fn path_to(&self, leaf: Option<usize>) -> Result<Vec<usize>, WriteError> {
        let mut path = Vec::new();
        let mut current = leaf;
        let mut seen = std::collections::HashSet::new();
        while let Some(i) = current {
            if !seen.insert(i) {
                return Err(WriteError::Cycle(id_text(
                    self.lines[i].id_value().as_ref(),
                )));
            }
            path.push(i);
            // An object or array parent's key is its own: it names no entry, as in pi.
            let parent = &self.lines[i].parent;
            current = parent
                .is_truthy()
                .then(|| self.by_id.get(parent).copied())
                .flatten();
        }
        path.reverse();
        Ok(path)
    }
}

fn not_a_session(path: &Path, e: &LoadError) -> WriteError {
    WriteError::NotASession {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// The writer's line for a loaded record: its text as read, and what the writer needs of it
/// from the loader's skeleton (the value is parsed only for labels, migrated records, ids that
/// are objects and roles the skeleton does not name). `text` gives where the record's text
/// is kept: its place in the input, or a copy.
fn line_of_record(record: &Record<'_>, text: impl FnOnce() -> Text) -> Line {
    let role = record.message.as_ref().map(|m| m.role);
    let needs_value = record.is_rewritten()
        || matches!(record.id, Key::Unique(_))
        || matches!(record.parent_id, Key::Unique(_))
        || role == Some(Role::Other)
        || !matches!(record.kind, Kind::Header | Kind::Entry { .. });
    if needs_value {
        let value = record.value();
        let mut line = build::line_of_value(&value);
        if !record.is_rewritten() {
            line.json = text();
            line.canonical = false;
        }
        return line;
    }
    Line {
        json: text(),
        canonical: false,
        id: record.id.clone(),
        parent: record.parent_id.clone(),
        header: record.is_header(),
        entry_type: record.entry_type().map(crate::session::shared_type),
        role: role.and_then(Role::as_str).map(Cow::Borrowed),
    }
}

/// The value a key was read from (`None`: the member was absent). Not for `Key::Unique`.
fn key_value(key: &Key) -> Option<JsValue> {
    match key {
        Key::Undefined | Key::Unique(_) => None,
        Key::Null => Some(JsValue::Null),
        Key::Bool(b) => Some(JsValue::Bool(*b)),
        Key::Number(bits) => Some(JsValue::Number(f64::from_bits(*bits))),
        Key::String(bytes) => Some(JsValue::String(JsString::concat(&[bytes]))),
    }
}
