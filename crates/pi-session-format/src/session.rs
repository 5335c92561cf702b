//! Loading a session file the way pi's `SessionManager.open` does (rules P6–P9, V1–V4, L1–L4).
//!
//! [`Session::load`] splits the bytes into lines ([`crate::read`]), validates every line as
//! JSON but builds only a skeleton of it (`type`, `id`, `parentId` and where the line is),
//! checks the header, detects the version and, when the version is below 3, runs the
//! migrations ([`crate::migrate`]) on fully parsed values. Entries of a current file stay as
//! borrowed line text until something (the context builder, say) asks for their value.
//!
//! Unparseable lines are not entries; they are kept in [`Session::dropped`] so that nothing
//! is lost silently (pi drops them without a word).

use crate::PiVersion;
use crate::json::{self, JsValue, LineScanner, MessageScan, ParseError, Span};
use crate::migrate::{self, IdGenerator};
use crate::read::{self, Line};
use rayon::prelude::*;
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};

pub(crate) mod rewrite;

use rewrite::Plan;
pub use rewrite::{Change, ChangeKind, Changes, whole_file};

/// A value compared the way JavaScript compares `id`/`parentId` values (`===`, and `Map`
/// keys, which agree for everything JSON can hold).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// The member is missing (`undefined`).
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, by its bits (`-0` normalised to `0`).
    Number(u64),
    /// A string (WTF-8 bytes).
    String(KeyBytes),
    /// An object or array: equal only to itself. The payload identifies the record and member.
    Unique(u64),
}

impl Key {
    /// The key of a member value; `unique` identifies it when it is an object or array.
    pub fn of(value: Option<&JsValue>, unique: u64) -> Key {
        match value {
            None => Key::Undefined,
            Some(JsValue::Null) => Key::Null,
            Some(JsValue::Bool(b)) => Key::Bool(*b),
            Some(JsValue::Number(n)) => Key::Number((n + 0.0).to_bits()),
            Some(JsValue::String(s)) => Key::String(s.as_wtf8().into()),
            Some(JsValue::Array(_) | JsValue::Object(_)) => Key::Unique(unique),
        }
    }

    /// Like [`Key::of`], taking the value (no copy of a string).
    pub fn from_value(value: Option<JsValue>, unique: u64) -> Key {
        match value {
            Some(JsValue::String(s)) => Key::String(s.into_wtf8().into()),
            other => Key::of(other.as_ref(), unique),
        }
    }

    /// A string key.
    pub fn string(s: &str) -> Key {
        Key::String(s.as_bytes().into())
    }

    /// JavaScript truthiness of the value.
    pub fn is_truthy(&self) -> bool {
        match self {
            Key::Undefined | Key::Null => false,
            Key::Bool(b) => *b,
            Key::Number(bits) => {
                let n = f64::from_bits(*bits);
                n != 0.0 && !n.is_nan()
            }
            Key::String(s) => !s.is_empty(),
            Key::Unique(_) => true,
        }
    }

    /// The key as text for messages (`"abc"`, `null`, `undefined`, …).
    pub fn display(&self) -> String {
        match self {
            Key::Undefined => "undefined".into(),
            Key::Null => "null".into(),
            Key::Bool(b) => b.to_string(),
            Key::Number(bits) => {
                let mut out = Vec::new();
                json::write_value(&mut out, &JsValue::Number(f64::from_bits(*bits)));
                String::from_utf8_lossy(&out).into_owned()
            }
            Key::String(s) => quoted(&String::from_utf8_lossy(s)),
            Key::Unique(_) => "(object)".into(),
        }
    }
}

/// The longest text of a file quoted whole in a message; longer texts are cut.
pub const QUOTE_MAX: usize = 64;

/// `text` quoted for a message: control characters escaped (`{:?}`), and cut after
/// [`QUOTE_MAX`] characters with a count of what was left out, so that text from a file
/// (a 10 MB id, an escape sequence) never floods or drives a terminal.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTE_MAX) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…(+{} bytes)", &text[..cut], text.len() - cut),
    }
}

/// Bytes longer than this go to the heap; shorter ones (pi's ids are 8 bytes) are stored
/// inline, so most keys cost no allocation.
const INLINE_KEY: usize = 22;

/// The bytes of a string [`Key`]: inline when short, boxed otherwise. Dereferences to the
/// bytes; equality and hashing are those of the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyBytes(KeyRepr);

/// Bytes of at most [`INLINE_KEY`] bytes are always inline (zero-padded), longer ones always
/// boxed, so equal bytes have equal representations and the derived equality is the bytes'.
#[derive(Clone, PartialEq, Eq)]
enum KeyRepr {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

impl Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            KeyRepr::Inline(len, bytes) => &bytes[..usize::from(*len)],
            KeyRepr::Heap(bytes) => bytes,
        }
    }
}

impl From<&[u8]> for KeyBytes {
    fn from(bytes: &[u8]) -> KeyBytes {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE_KEY => {
                let mut inline = [0; INLINE_KEY];
                inline[..bytes.len()].copy_from_slice(bytes);
                KeyBytes(KeyRepr::Inline(len, inline))
            }
            _ => KeyBytes(KeyRepr::Heap(bytes.into())),
        }
    }
}

impl From<Box<[u8]>> for KeyBytes {
    fn from(bytes: Box<[u8]>) -> KeyBytes {
        if bytes.len() <= INLINE_KEY {
            KeyBytes::from(&*bytes)
        } else {
            KeyBytes(KeyRepr::Heap(bytes))
        }
    }
}

impl Hash for KeyBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            // Whole words of the zero-padded array: three word writes for any short key.
            KeyRepr::Inline(len, bytes) => {
                let word = |at: usize| {
                    let mut w = [0; 8];
                    let end = (at + 8).min(INLINE_KEY);
                    w[..end - at].copy_from_slice(&bytes[at..end]);
                    u64::from_le_bytes(w)
                };
                state.write_u64(word(0));
                state.write_u64(word(8));
                state.write_u64(word(16));
                state.write_u8(*len);
            }
            KeyRepr::Heap(bytes) => bytes.hash(state),
        }
    }
}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// What a parsed line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// An object whose `type` is the string `"session"`: a header line.
    Header,
    /// Any other object; `type` is its `type` member when that is a string.
    Entry {
        /// The `type` member, when it is a string (pi's own types are shared, not
        /// allocated per line).
        type_: Option<Cow<'static, str>>,
    },
    /// JSON `null` (pi 0.73.1 throws on these).
    Null,
    /// `false`, `0` or `""`: id-less entries for pi 0.73.1 (ignored by 0.87.1).
    Falsy,
    /// A number, string, boolean or array (pi keeps them as id-less entries).
    Other,
}

/// One parsed line: where it is, what it is, its `id`/`parentId`, and its value.
#[derive(Debug)]
pub struct Record<'a> {
    /// 1-based line number in the file.
    pub line: usize,
    /// Byte offset of the line in the file.
    pub offset: usize,
    /// What the line holds.
    pub kind: Kind,
    /// The `id` member.
    pub id: Key,
    /// The `parentId` member.
    pub parent_id: Key,
    /// The skeleton of the `message` member, for entries read from the file (`None` once a
    /// migration rewrote the value, which may change the message).
    pub message: Option<MessageScan>,
    /// Whether the line held invalid UTF-8 (its text has replacement characters).
    pub lossy: bool,
    /// Whether `id` and `parent_id` are the ones v1→v2 gave the entry, which its value gets
    /// when it is parsed from the text (see [`Session::load_with`]).
    fresh_ids: bool,
    text: Text<'a>,
    value: Option<Box<JsValue>>,
}

/// Where a record's line text is.
enum Text<'a> {
    /// In the input, validated as UTF-8 there.
    Str(&'a str),
    /// In the input, which was read through a buffer ([`Session::load_reading`]): read
    /// again, the same way, the first time the text is asked for, so that records of lines
    /// nobody asks about never bring their part of the input into memory, and those that
    /// are asked about cost their own length (not the pages around them).
    Read {
        read_at: &'a ReadAt<'a>,
        /// The line's bytes in the input (copied from when `read_at` fails).
        source: &'a [u8],
        offset: usize,
        text: std::sync::OnceLock<Box<str>>,
    },
    /// The decoded text of a line with invalid UTF-8.
    Owned(Box<str>),
}

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Text::Read { offset, source, .. } => {
                write!(f, "Read({offset}..{})", offset + source.len())
            }
            _ => fmt::Debug::fmt(self.as_str(), f),
        }
    }
}

impl<'a> Text<'a> {
    fn new(text: Cow<'a, str>) -> Text<'a> {
        match text {
            Cow::Borrowed(s) => Text::Str(s),
            Cow::Owned(s) => Text::Owned(s.into_boxed_str()),
        }
    }

    /// The text of `range` (which must fall on character boundaries).
    fn get(&self, range: Range<usize>) -> Option<&str> {
        match self {
            Text::Str(s) => s.get(range),
            Text::Read { .. } => self.as_str().get(range),
            Text::Owned(s) => s.get(range),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Text::Str(s) => s,
            Text::Read {
                read_at,
                source,
                offset,
                text,
            } => text.get_or_init(|| {
                let mut buf = vec![0; source.len()];
                if !read_at(&mut buf, *offset) {
                    buf.copy_from_slice(source);
                }
                // It was valid UTF-8 when first read; only a file changed since then can
                // make it invalid.
                match String::from_utf8(buf) {
                    Ok(s) => s.into_boxed_str(),
                    Err(e) => String::from_utf8_lossy(e.as_bytes()).into(),
                }
            }),
            Text::Owned(s) => s,
        }
    }
}

/// A value that is either borrowed from a record or freshly parsed from its line.
pub enum ValueRef<'r> {
    /// The record's materialised (for example migrated) value.
    Borrowed(&'r JsValue),
    /// Parsed from the line text on demand.
    Owned(JsValue),
}

impl Deref for ValueRef<'_> {
    type Target = JsValue;
    fn deref(&self) -> &JsValue {
        match self {
            ValueRef::Borrowed(v) => v,
            ValueRef::Owned(v) => v,
        }
    }
}

impl ValueRef<'_> {
    /// The value, owned (cloning only when it was borrowed).
    pub fn into_owned(self) -> JsValue {
        match self {
            ValueRef::Borrowed(v) => v.clone(),
            ValueRef::Owned(v) => v,
        }
    }
}

impl<'a> Record<'a> {
    /// Whether the record is the value of a `type: "session"` line.
    pub fn is_header(&self) -> bool {
        self.kind == Kind::Header
    }

    /// The `type` member when it is a string.
    pub fn entry_type(&self) -> Option<&str> {
        match &self.kind {
            Kind::Entry { type_ } => type_.as_deref(),
            Kind::Header => Some("session"),
            _ => None,
        }
    }

    /// The value of the line, migrated when the file was: parsed from the text (and given
    /// its v1→v2 ids) unless the migration materialised it.
    pub fn value(&self) -> ValueRef<'_> {
        match &self.value {
            Some(v) => ValueRef::Borrowed(v),
            None => {
                // The text parsed once already while loading, so this cannot fail.
                let mut value = json::parse(self.text.as_str()).unwrap_or_default();
                if self.fresh_ids {
                    self.give_fresh_ids(&mut value);
                }
                ValueRef::Owned(value)
            }
        }
    }

    /// v1→v2 on the value parsed from the text: the `id` and `parentId` of the keys.
    fn give_fresh_ids(&self, value: &mut JsValue) {
        fn as_str(key: &Key) -> Option<&str> {
            match key {
                Key::String(bytes) => std::str::from_utf8(bytes).ok(),
                _ => None,
            }
        }
        if let (Some(entry), Some(id)) = (value.as_object_mut(), as_str(&self.id)) {
            migrate::v1_entry(
                entry,
                id,
                as_str(&self.parent_id),
                migrate::FirstKept::Untouched,
            );
        }
    }

    /// The line text as it was read (decoded: invalid UTF-8 became U+FFFD).
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// The text of the `message` member when it is already in `JSON.stringify` form and the
    /// record was not rewritten: it can be copied to the output as is. (The loader does not
    /// check the form of every message; this checks the one asked for.)
    pub fn canonical_message_text(&self) -> Option<&str> {
        let m = self.message.as_ref().filter(|_| self.value.is_none())?;
        let text = self.text.get(m.start..m.end)?;
        (m.canonical || json::is_canonical(text.as_bytes())).then_some(text)
    }

    /// The value of the `message` member, parsed from its text alone (or taken from the
    /// rewritten value); `None` when the record has no `message` member.
    pub fn message_value(&self) -> Option<JsValue> {
        match (&self.value, self.message.as_ref()) {
            (Some(v), _) => v.get("message").cloned(),
            (None, Some(m)) => self
                .text
                .get(m.start..m.end)
                .and_then(|t| json::parse(t).ok()),
            (None, None) => None,
        }
    }

    /// Whether the value differs from the text (a migration changed it).
    pub fn is_rewritten(&self) -> bool {
        self.value.is_some() || self.fresh_ids
    }

    /// Replaces the value (after a migration) and refreshes the skeleton fields.
    fn set_value(&mut self, value: JsValue) {
        let unique = (self.offset as u64) << 1;
        self.id = Key::of(value.get("id"), unique);
        self.parent_id = Key::of(value.get("parentId"), unique | 1);
        // The skeleton describes the text, not the rewritten value.
        self.message = None;
        self.fresh_ids = false;
        self.value = Some(Box::new(value));
    }
}

/// A line that is not JSON (pi drops it silently).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedLine {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line in the file.
    pub offset: usize,
    /// 1-based column (in characters) where parsing failed.
    pub column: usize,
    /// Why it is not JSON.
    pub error: String,
    /// Length of the line in bytes.
    pub len: usize,
}

/// Why a file cannot be loaded as a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The file has no parseable line at all (pi 0.73.1 rewrites it to a fresh header; pi
    /// 0.87.1 does so only for an empty file and refuses any other).
    Empty {
        /// Whose rules the file was loaded with.
        pi: PiVersion,
        /// Whether the file has no bytes at all.
        blank: bool,
    },
    /// The first parseable value is not an object with `type: "session"` and a string `id`
    /// (pi 0.73.1 truncates the file to a fresh header, pi 0.87.1 refuses to open it; we
    /// refuse and leave it untouched).
    InvalidHeader {
        /// Line of the first parseable value.
        line: usize,
        /// What is wrong with it.
        reason: String,
        /// Whose rules the file was loaded with.
        pi: PiVersion,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const REFUSED: &str = "pi 0.87.1 refuses to open it: \"not a valid pi session\"";
        match self {
            LoadError::Empty { pi, blank } => {
                let effect = match (pi, blank) {
                    (PiVersion::V0_87, false) => REFUSED,
                    _ => "pi would overwrite it with a new, empty session",
                };
                write!(f, "no session header: the file has no JSON line ({effect})")
            }
            LoadError::InvalidHeader { line, reason, pi } => {
                let effect = match pi {
                    PiVersion::V0_87 => REFUSED,
                    PiVersion::V0_73 => "pi would truncate the file to a new, empty session",
                };
                write!(
                    f,
                    "line {line}: not a valid session header: {reason} ({effect})"
                )
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A `null` line or a non-object line that pi would crash on, skipped by us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedValue {
    /// 1-based line number.
    pub line: usize,
    /// Why pi cannot handle it.
    pub reason: &'static str,
    /// Where the line is, when it is not among the records (pi 0.87.1's falsy lines), so
    /// that a rewrite can keep it byte for byte: byte offset and length.
    pub verbatim: Option<(usize, usize)>,
}

/// How the version of the file was read and what loading did about it.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionInfo {
    /// `header.version` converted as JavaScript's comparisons do (`NaN` when not numeric).
    pub effective: f64,
    /// Whether v1→v2 ran.
    pub migrated_v1: bool,
    /// Whether v2→v3 ran.
    pub migrated_v2: bool,
    /// Whether pi would rewrite the file after loading (any version below 3, or not a number).
    pub rewrite: bool,
}

impl VersionInfo {
    /// What loading does with a file whose `header.version` converts to `effective`.
    pub fn of(effective: f64) -> VersionInfo {
        VersionInfo {
            effective,
            migrated_v1: effective < 2.0,
            migrated_v2: effective < 3.0,
            // `!(version >= 3)`: NaN versions are rewritten too.
            rewrite: effective.partial_cmp(&3.0).is_none_or(|o| o.is_lt()),
        }
    }
}

/// A session loaded for rewriting ([`Session::load_for_migration`]): read, its migration
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
    /// byte ranges of the input are done with (see [`Session::load_releasing`]).
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
    /// The migration the records went through (the ids v1→v2 gave them).
    plan: Plan,
}

/// The records of a session in file order, indexed like a slice. They are stored as the
/// loader's pieces came back from the worker threads: joining them into one vector would
/// copy every record again, into memory the kernel has to supply page by page.
#[derive(Debug, Default)]
pub struct Records<'a> {
    chunks: Vec<Vec<Record<'a>>>,
    /// The index of the first record of each chunk (strictly ascending: no chunk is empty).
    starts: Vec<usize>,
    len: usize,
}

impl<'a> Records<'a> {
    fn from_chunks(chunks: Vec<Vec<Record<'a>>>) -> Records<'a> {
        let chunks: Vec<Vec<Record<'a>>> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let mut starts = Vec::with_capacity(chunks.len());
        let mut len = 0;
        for chunk in &chunks {
            starts.push(len);
            len += chunk.len();
        }
        Records {
            chunks,
            starts,
            len,
        }
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The record at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&Record<'a>> {
        if index >= self.len {
            return None;
        }
        // Pieces cover equal byte ranges, so records spread about evenly over the chunks:
        // try the proportional chunk first, then search.
        let guess = index
            .checked_mul(self.starts.len())
            .map_or(0, |scaled| scaled / self.len);
        let fits = |c: usize| {
            self.starts[c] <= index && self.starts.get(c + 1).is_none_or(|&next| index < next)
        };
        let chunk = if fits(guess) {
            guess
        } else {
            self.starts.partition_point(|&start| start <= index) - 1
        };
        self.chunks[chunk].get(index - self.starts[chunk])
    }

    /// The first record (the header, in a loaded session).
    pub fn first(&self) -> Option<&Record<'a>> {
        self.get(0)
    }

    /// The records in file order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Record<'a>> {
        self.chunks.iter().flatten()
    }

    /// The records in file order, mutably.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Record<'a>> {
        self.chunks.iter_mut().flatten()
    }
}

impl<'a> std::ops::Index<usize> for Records<'a> {
    type Output = Record<'a>;

    /// The record at `index`; panics when out of bounds, like a slice.
    fn index(&self, index: usize) -> &Record<'a> {
        match self.get(index) {
            Some(record) => record,
            None => panic!("record index {index} out of bounds ({} records)", self.len),
        }
    }
}

impl<'r, 'a> IntoIterator for &'r Records<'a> {
    type Item = &'r Record<'a>;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'r, Vec<Record<'a>>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.iter().flatten()
    }
}

/// Options for [`Session::load_with`].
pub struct LoadOptions<'g> {
    /// Generates ids for the v1→v2 migration.
    pub ids: &'g mut dyn IdGenerator,
    /// Whose loading rules to follow.
    pub pi: PiVersion,
}

impl<'a> Session<'a> {
    /// Loads a session from its bytes with random migration ids.
    pub fn load(bytes: &'a [u8]) -> Result<Session<'a>, LoadError> {
        let mut ids = migrate::RandomIds;
        Self::load_with(
            bytes,
            LoadOptions {
                ids: &mut ids,
                pi: PiVersion::default(),
            },
        )
    }

    /// Loads a session from its bytes.
    pub fn load_with(bytes: &'a [u8], options: LoadOptions<'_>) -> Result<Session<'a>, LoadError> {
        Self::load_releasing(bytes, options, &|_| {})
    }

    /// Like [`Session::load_with`], calling `release(range)` for each byte range of the
    /// input the loader is done with, as soon as it is done with it (from any thread, in no
    /// particular order). The records still borrow those bytes: a caller that maps a file
    /// can drop the pages of the range from memory (they are read again if a record's text
    /// is needed later), so that loading a file never holds much more of it than a few
    /// megabytes at a time.
    pub fn load_releasing(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        release: &(dyn Fn(Range<usize>) + Sync),
    ) -> Result<Session<'a>, LoadError> {
        Self::load_from(bytes, options, Pieces::Borrowed(release))
    }

    /// Like [`Session::load_with`], but the loader does not read `bytes` itself: it has
    /// `read_at(buf, at)` fill small per-thread buffers with `bytes[at..at + buf.len()]`
    /// (say with a positioned read of the file `bytes` maps) and scans those, validating the
    /// text as UTF-8 as it goes. The records still borrow `bytes`, but only the records whose
    /// text is asked for later (the entries on the context's path, say) touch them, so a
    /// caller that maps a file never has most of its pages brought into memory: a record's
    /// text is read again with `read_at` the first time it is asked for. `read_at` returns
    /// `false` when it could not read; the loader then copies from `bytes`.
    pub fn load_reading(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        read_at: &'a ReadAt<'a>,
    ) -> Result<Session<'a>, LoadError> {
        Self::load_from(bytes, options, Pieces::Read(read_at))
    }

    fn load_from(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        pieces: Pieces<'_, 'a>,
    ) -> Result<Session<'a>, LoadError> {
        let mut session = Self::load_unmigrated(bytes, options.pi, pieces)?;
        let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
        if v1 || v2 {
            session.migrate(v1, v2, options.ids);
        }
        Ok(session)
    }

    /// Loads for rewriting (`pi-session migrate`): like [`Session::load_releasing`], but a
    /// v1/v2 file is not migrated in memory. [`Migration::write`] migrates it line by line
    /// into a writer, so memory holds the skeleton and the ids, not the file's values.
    pub fn load_for_migration(
        bytes: &'a [u8],
        options: LoadOptions<'_>,
        release: &(dyn Fn(Range<usize>) + Sync),
    ) -> Result<Migration<'a>, LoadError> {
        let session = Self::load_unmigrated(bytes, options.pi, Pieces::Borrowed(release))?;
        let (v1, v2) = (session.version.migrated_v1, session.version.migrated_v2);
        let plan = Plan::new(&session.records, v1, v2, options.ids);
        Ok(Migration { session, plan })
    }

    /// The version of the file, from its header alone (the first line that parses, as pi
    /// reads it): whether loading it migrates and rewrites it. The same error as loading
    /// when there is no valid header.
    pub fn read_version(bytes: &[u8], pi: PiVersion) -> Result<VersionInfo, LoadError> {
        let mut scanner = LineScanner::default();
        for line in read::lines_with(bytes, pi != PiVersion::V0_87) {
            let Ok(record) = scan(&mut scanner, line, Text::new) else {
                continue;
            };
            if pi == PiVersion::V0_87 && matches!(record.kind, Kind::Null | Kind::Falsy) {
                continue;
            }
            check_header(&record, pi)?;
            return Ok(VersionInfo::of(version_number(
                record.value().get("version"),
            )));
        }
        Err(LoadError::Empty {
            pi,
            blank: bytes.is_empty(),
        })
    }

    /// Loads without running the migrations: records are as read.
    fn load_unmigrated(
        bytes: &'a [u8],
        pi: PiVersion,
        pieces: Pieces<'_, 'a>,
    ) -> Result<Session<'a>, LoadError> {
        let current = pi == PiVersion::V0_87;
        // The text is cut into pieces and each piece is split and scanned on its own core;
        // results come back in file order. Pieces are small so that the part of the input
        // being read at any time stays small too.
        let threads = rayon::current_num_threads();
        let step = (bytes.len() / (threads * 8).max(1)).clamp(1 << 16, PIECE_MAX);
        let (first_line, scanned) = match pieces {
            Pieces::Borrowed(release) => {
                // Cut at line boundaries.
                let (first_line, pieces) = read::split_relative(bytes, !current, step);
                let scanned: Vec<Piece<'a>> = pieces
                    .into_par_iter()
                    .map(|mut lines| {
                        let range = lines.range();
                        let mut scanner = LineScanner::default();
                        let mut piece = Piece::default();
                        for line in lines.by_ref() {
                            match scan(&mut scanner, line, Text::new) {
                                Ok(record) => piece.records.push(record),
                                Err(d) => piece.dropped.push(d),
                            }
                        }
                        piece.newlines = lines.newlines();
                        release(range);
                        piece
                    })
                    .collect();
                (first_line, scanned)
            }
            Pieces::Read(read_at) => {
                // Cut anywhere: a piece reads the lines that start in it.
                let (region, first_line) = read::region(bytes, !current);
                let starts: Vec<usize> = region.clone().step_by(step).collect();
                let scanned: Vec<Piece<'a>> = starts
                    .into_par_iter()
                    .map_init(
                        || (LineScanner::default(), Vec::new()),
                        |(scanner, buf), start| {
                            let reader = Reader {
                                source: bytes,
                                read_at,
                                region: region.clone(),
                            };
                            reader.piece(start..(start + step).min(region.end), scanner, buf)
                        },
                    )
                    .collect();
                (first_line, scanned)
            }
        };
        // Each piece numbered its lines from 0: shift them by the lines of the pieces
        // before, on every core (this touches every record once; the records themselves stay
        // where the workers wrote them).
        let mut base = first_line;
        let mut scanned: Vec<(usize, Piece<'a>)> = scanned
            .into_iter()
            .map(|piece| {
                let start = base;
                base += piece.newlines;
                (start, piece)
            })
            .collect();
        scanned.par_iter_mut().for_each(|(base, piece)| {
            for record in &mut piece.records {
                record.line += *base;
            }
            for d in &mut piece.dropped {
                d.line += *base;
            }
            // pi 0.87.1 keeps only truthy values (`if (entry) entries.push(entry)`).
            if current {
                piece.records.retain(|record| {
                    let falsy = matches!(record.kind, Kind::Null | Kind::Falsy);
                    if falsy {
                        // A falsy value's text is ASCII (`null`, `false`, `0`, `""` and
                        // JSON whitespace), so its decoded length is its length in the file.
                        piece.skipped.push(SkippedValue {
                            line: record.line,
                            reason: "a falsy JSON value (pi 0.87.1 ignores it)",
                            verbatim: Some((record.offset, record.text().len())),
                        });
                    }
                    !falsy
                });
            }
        });
        let mut dropped = Vec::new();
        let mut skipped = Vec::new();
        let mut chunks = Vec::with_capacity(scanned.len());
        for (_, piece) in scanned {
            dropped.extend(piece.dropped);
            skipped.extend(piece.skipped);
            chunks.push(piece.records);
        }
        let records = Records::from_chunks(chunks);
        let header = records.first().ok_or(LoadError::Empty {
            pi,
            blank: bytes.is_empty(),
        })?;
        check_header(header, pi)?;
        let header_value = header.value();
        let effective = version_number(header_value.get("version"));
        drop(header_value);
        let version = VersionInfo::of(effective);
        let migrate_v1 = version.migrated_v1;
        let mut session = Session {
            source: bytes,
            pi,
            records,
            entries: Vec::new(),
            dropped,
            skipped,
            version,
            plan: Plan::identity(),
        };
        for (i, r) in session.records.iter().enumerate() {
            let reason = match r.kind {
                Kind::Header => continue,
                Kind::Null => "a `null` line (pi throws a TypeError on it)",
                Kind::Other | Kind::Falsy if migrate_v1 => {
                    "a non-object line in a v1 file (pi's migration throws a TypeError on it)"
                }
                _ => {
                    session.entries.push(i);
                    continue;
                }
            };
            session.skipped.push(SkippedValue {
                line: r.line,
                reason,
                verbatim: None,
            });
        }
        Ok(session)
    }

    /// Runs v1→v2 and v2→v3 on the records without building most values: pi migrates its
    /// array of every parsed value (header included), and the only state it carries from one
    /// entry to the next is the ids handed out, which [`Plan`] assigns on the skeleton. An
    /// entry whose migration is no more than its fresh `id` and `parentId` keeps its text and
    /// takes them as its keys; [`Record::value`] sets them when it parses the text. The
    /// others (the header, a v1 compaction whose `firstKeptEntryIndex` names an entry by its
    /// position, a v2 message whose role may be renamed) are migrated now, every one before
    /// any record changes: a compaction may name a later entry by its original id.
    fn migrate(&mut self, v1: bool, v2: bool, ids: &mut dyn IdGenerator) {
        let plan = Plan::new(&self.records, v1, v2, ids);
        let mut parent: Option<usize> = None;
        let mut materialised: Vec<(usize, JsValue)> = Vec::new();
        for (i, r) in self.records.iter().enumerate() {
            if matches!(r.kind, Kind::Header | Kind::Entry { .. })
                && !plan.keeps_text(&self.records, i)
            {
                let mut value = r.value().into_owned();
                plan.apply(
                    &self.records,
                    i,
                    parent.and_then(|p| plan.id(p)),
                    &mut value,
                );
                materialised.push((i, value));
            }
            if plan.id(i).is_some() {
                parent = Some(i);
            }
        }
        let mut materialised = materialised.into_iter().peekable();
        let mut parent: Option<&KeyBytes> = None;
        for (i, record) in self.records.iter_mut().enumerate() {
            if let Some((_, value)) = materialised.next_if(|(m, _)| *m == i) {
                record.set_value(value);
            } else if let Some(id) = plan.key(i) {
                record.id = Key::String(id.clone());
                record.parent_id = parent.map_or(Key::Null, |p| Key::String(p.clone()));
                record.fresh_ids = true;
            }
            if let Some(id) = plan.key(i) {
                parent = Some(id);
            }
        }
        self.plan = plan;
    }

    /// The header record.
    pub fn header(&self) -> &Record<'a> {
        &self.records[0]
    }

    /// The entries (non-header values) in file order.
    pub fn entry_records(&self) -> impl Iterator<Item = &Record<'a>> {
        self.entries.iter().map(|&i| &self.records[i])
    }

    /// The file as pi leaves it after loading. When pi migrates (any version below 3), it
    /// rewrites every value with `JSON.stringify`, one per line; unlike pi, lines that are
    /// not JSON are kept, byte for byte, at their place. Otherwise the file is unchanged,
    /// except that pi 0.87.1 ends an unterminated last line with a newline.
    ///
    /// The whole output in memory: [`Session::write_jsonl`] streams it, and
    /// [`Session::load_for_migration`] does not even build the migrated values.
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

/// The largest piece of input scanned as one task (see [`Session::load_releasing`]). Small
/// enough that the cores finish together (a 100 MB session is 100 tasks; with 4 MiB pieces
/// the last one kept one core busy alone for about 2 ms of a 47 ms run).
const PIECE_MAX: usize = 1 << 20;

/// `read_at(buf, at)` fills `buf` with the input's bytes from `at` (see
/// [`Session::load_reading`]).
pub type ReadAt<'f> = dyn Fn(&mut [u8], usize) -> bool + Sync + 'f;

/// How the loader gets at the bytes it scans.
enum Pieces<'r, 'a> {
    /// Scans the input itself, telling `release` which ranges it is done with.
    Borrowed(&'r (dyn Fn(Range<usize>) + Sync)),
    /// Reads the input through per-thread buffers (see [`Session::load_reading`]).
    Read(&'a ReadAt<'a>),
}

/// The size of the reads of [`Session::load_reading`]: small enough that what is read is
/// still in the core's cache when it is scanned.
const CHUNK: usize = 128 << 10;

/// Reads pieces of the input through a buffer.
struct Reader<'a> {
    source: &'a [u8],
    read_at: &'a ReadAt<'a>,
    /// The part of the input whose lines are parsed.
    region: Range<usize>,
}

impl<'a> Reader<'a> {
    /// Scans the lines that start in `piece` (a line starts at the start of the region
    /// or after an LF), reading on past its end for the last one.
    fn piece(
        &self,
        piece: Range<usize>,
        scanner: &mut LineScanner,
        buf: &mut Vec<u8>,
    ) -> Piece<'a> {
        let mut out = Piece::default();
        let region = &self.region;
        // `buf[lo..hi]` holds the input from `at` on.
        let (mut lo, mut hi) = (0, 0);
        // Before the first line: the LF before it is searched from the byte before the piece.
        let mut seeking = piece.start > region.start;
        let mut line_start = if seeking {
            piece.start - 1
        } else {
            piece.start
        };
        let mut at = line_start;
        let mut search = line_start;
        loop {
            if line_start >= piece.end {
                break;
            }
            let found = memchr::memchr(b'\n', &buf[lo + (search - at)..hi]);
            if let Some(i) = found {
                let lf = search + i;
                if seeking {
                    seeking = false;
                } else {
                    let raw = &buf[lo + (line_start - at)..lo + (lf - at)];
                    self.line(raw, line_start, out.newlines, scanner, &mut out);
                    out.newlines += 1;
                }
                line_start = lf + 1;
                search = line_start;
                continue;
            }
            let end = at + (hi - lo);
            if end >= region.end || (seeking && end >= piece.end) {
                if !seeking && line_start < end {
                    let raw = &buf[lo + (line_start - at)..hi];
                    self.line(raw, line_start, out.newlines, scanner, &mut out);
                }
                break;
            }
            // Keep the line being read (nothing while seeking) and read the next chunk.
            search = end;
            let keep = if seeking { end } else { line_start };
            lo += keep - at;
            at = keep;
            if lo > 0 {
                buf.copy_within(lo..hi, 0);
                hi -= lo;
                lo = 0;
            }
            let n = CHUNK.min(region.end - end);
            if buf.len() < hi + n {
                buf.resize(hi + n, 0);
            }
            let dest = &mut buf[hi..hi + n];
            if !(self.read_at)(dest, end) {
                dest.copy_from_slice(&self.source[end..end + n]);
            }
            hi += n;
        }
        out
    }

    /// Scans one raw line read from `offset`, numbered `number` within its piece.
    fn line(
        &self,
        raw: &[u8],
        offset: usize,
        number: usize,
        scanner: &mut LineScanner,
        out: &mut Piece<'a>,
    ) {
        let Some((text, lossy)) = read::decode(raw) else {
            return;
        };
        let len = raw.len();
        let line = Line {
            number,
            offset,
            text,
            len,
            lossy,
        };
        let (source, read_at) = (self.source, self.read_at);
        let result = scan(scanner, line, |text| match text {
            Cow::Borrowed(_) => Text::Read {
                read_at,
                source: &source[offset..offset + len],
                offset,
                text: std::sync::OnceLock::new(),
            },
            Cow::Owned(s) => Text::Owned(s.into_boxed_str()),
        });
        match result {
            Ok(record) => out.records.push(record),
            Err(d) => out.dropped.push(d),
        }
    }
}

/// What scanning one piece of the input gave.
#[derive(Default)]
struct Piece<'a> {
    records: Vec<Record<'a>>,
    dropped: Vec<DroppedLine>,
    /// pi 0.87.1's falsy values, taken out of `records` once lines are numbered.
    skipped: Vec<SkippedValue>,
    /// LFs in the piece (its lines are numbered from 0 until the pieces are joined).
    newlines: usize,
}

/// pi's entry types, shared by every record that has one.
const ENTRY_TYPES: [&str; 11] = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "session",
];

/// The contents of a raw JSON string value when it has no escapes (then the raw text is the
/// value).
fn plain_string(raw: &str) -> Option<&str> {
    raw.strip_prefix('"')?
        .strip_suffix('"')
        .filter(|s| !s.contains('\\'))
}

/// A member's raw value, parsed (it was validated by the scan).
fn member_value(raw: &str) -> JsValue {
    json::parse(raw).unwrap_or_default()
}

/// The `type` member as a string, from its raw text.
fn type_name(raw: &str) -> Option<Cow<'static, str>> {
    if let Some(s) = plain_string(raw) {
        return Some(match ENTRY_TYPES.iter().find(|t| **t == s) {
            Some(t) => Cow::Borrowed(t),
            None => Cow::Owned(s.to_owned()),
        });
    }
    member_value(raw).as_str().map(|s| Cow::Owned(s.to_owned()))
}

/// The key of an `id`/`parentId` member, from its raw text.
fn key_of(raw: Option<&str>, unique: u64) -> Key {
    match raw {
        None => Key::Undefined,
        Some("null") => Key::Null,
        Some(raw) => match plain_string(raw) {
            Some(s) => Key::String(s.as_bytes().into()),
            None => Key::from_value(Some(member_value(raw)), unique),
        },
    }
}

/// Scans one line into a record; `text` turns the line's text into the record's.
fn scan<'a, 'l>(
    scanner: &mut LineScanner,
    line: Line<'l>,
    to_text: impl FnOnce(Cow<'l, str>) -> Text<'a>,
) -> Result<Record<'a>, DroppedLine> {
    match scanner.scan(line.text.as_bytes()) {
        Ok(skeleton) => {
            // Objects and arrays as ids are equal only to themselves: the line's offset
            // (unique in the file) tells them apart.
            let unique = (line.offset as u64) << 1;
            let text: &str = &line.text;
            // Spans are on ASCII delimiters of the validated text.
            let raw = |span: Option<Span>| span.and_then(|(start, end)| text.get(start..end));
            let (kind, id, parent_id) = if skeleton.object {
                let type_ = raw(skeleton.type_).and_then(type_name);
                let kind = if type_.as_deref() == Some("session") {
                    Kind::Header
                } else {
                    Kind::Entry { type_ }
                };
                (
                    kind,
                    key_of(raw(skeleton.id), unique),
                    key_of(raw(skeleton.parent_id), unique + 1),
                )
            } else if skeleton.is_null {
                (Kind::Null, Key::Undefined, Key::Undefined)
            } else if skeleton.is_falsy {
                (Kind::Falsy, Key::Undefined, Key::Undefined)
            } else {
                (Kind::Other, Key::Undefined, Key::Undefined)
            };
            Ok(Record {
                line: line.number,
                offset: line.offset,
                kind,
                id,
                parent_id,
                message: skeleton.message,
                lossy: line.lossy,
                text: to_text(line.text),
                fresh_ids: false,
                value: None,
            })
        }
        Err(ParseError { offset, message }) => Err(DroppedLine {
            line: line.number,
            offset: line.offset,
            column: 1 + line
                .text
                .get(..offset)
                .map_or(offset, |s| s.chars().count()),
            error: message,
            len: line.len,
        }),
    }
}

fn check_header(first: &Record<'_>, pi: PiVersion) -> Result<(), LoadError> {
    let reason = match (&first.kind, &first.id) {
        (Kind::Header, Key::String(_)) => return Ok(()),
        (Kind::Header, id) => format!("`id` must be a string, found {}", id.display()),
        (Kind::Entry { type_: Some(t) }, _) => {
            format!("`type` is {}, expected \"session\"", quoted(t))
        }
        (Kind::Entry { type_: None }, _) => "the first JSON line has no string `type`".into(),
        (Kind::Null, _) => "the first JSON line is `null` (pi throws a TypeError)".into(),
        (Kind::Other | Kind::Falsy, _) => "the first JSON line is not an object".into(),
    };
    Err(LoadError::InvalidHeader {
        line: first.line,
        reason,
        pi,
    })
}

/// `header.version ?? 1`, converted to a number the way `version >= 3` and `version < 2`
/// convert it (rule V2/V3): strings are parsed, booleans are 0/1, anything else is `NaN`.
pub fn version_number(version: Option<&JsValue>) -> f64 {
    match version {
        None | Some(JsValue::Null) => 1.0,
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::String(s)) => string_to_number(&s.to_string_lossy()),
        Some(JsValue::Array(a)) => match a.0.as_slice() {
            [] => 0.0,
            [JsValue::Number(n)] => *n,
            [JsValue::String(s)] => string_to_number(&s.to_string_lossy()),
            _ => f64::NAN,
        },
        Some(JsValue::Object(_)) => f64::NAN,
    }
}

/// ECMAScript `StringToNumber`.
fn string_to_number(s: &str) -> f64 {
    let bytes = s.as_bytes();
    let start = read::trim_start(bytes);
    let end = start + read::trim_end(&bytes[start..]);
    let t = &s[start..end];
    if t.is_empty() {
        return 0.0;
    }
    let radix = |prefix: &[&str], radix: u32| {
        prefix.iter().find_map(|p| t.strip_prefix(p)).map(|digits| {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                f64::NAN
            } else {
                digits.chars().fold(0.0, |n, c| {
                    n * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
                })
            }
        })
    };
    if let Some(n) = radix(&["0x", "0X"], 16)
        .or_else(|| radix(&["0o", "0O"], 8))
        .or_else(|| radix(&["0b", "0B"], 2))
    {
        return n;
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let decimal = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && unsigned.bytes().any(|b| b.is_ascii_digit());
    if decimal {
        t.parse().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::SequentialIds;

    fn load(text: &str) -> Result<Session<'_>, LoadError> {
        Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: PiVersion::V0_73,
            },
        )
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    /// A v1 file is migrated without building the values that need nothing from other
    /// records: those records keep their text and take their new ids as keys, and their
    /// values, the file written back and the streamed migration are all pi's model's.
    #[test]
    fn v1_entries_keep_their_text_and_get_their_ids_as_keys() {
        let text = [
            r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
            r#"{"type":"message","message":{"role":"user","content":"hi"}}"#,
            // Not in `JSON.stringify` form, with an old id and parentId to overwrite.
            r#"{ "parentId": 7, "type":"message", "id": "old", "message":{"role":"hookMessage"}}"#,
            r#"{"type":"compaction","summary":"s","firstKeptEntryIndex":4,"tokensBefore":1}"#,
            r#"{"type":"custom","customType":"x","id":"later"}"#,
            "not json",
            r#"{"type":"message","message":{"role":"assistant","content":[]}}"#,
        ]
        .join("\n");
        let session = load(&text).unwrap();
        // Only the header, the message whose role v2→v3 may rename and the compaction (which
        // names an entry by position) are built.
        let built: Vec<usize> = session
            .records
            .iter()
            .filter(|r| r.value.is_some())
            .map(|r| r.line)
            .collect();
        assert_eq!(built, [1, 3, 4]);
        let keys: Vec<(Key, Key)> = session
            .entry_records()
            .map(|r| (r.id.clone(), r.parent_id.clone()))
            .collect();
        let id = |n: u32| Key::string(&format!("{n:08x}"));
        assert_eq!(
            keys,
            [
                (id(1), Key::Null),
                (id(2), id(1)),
                (id(3), id(2)),
                (id(4), id(3)),
                (id(5), id(4)),
            ]
        );
        assert!(session.entry_records().all(Record::is_rewritten));

        // pi's model: every value parsed, then `migrateV1ToV2` and `migrateV2ToV3`.
        let mut values: Vec<JsValue> = session
            .records
            .iter()
            .map(|r| json::parse(r.text()).unwrap())
            .collect();
        migrate::v1_to_v2(&mut values, &mut SequentialIds::default());
        migrate::v2_to_v3(&mut values);
        let ours: Vec<String> = session
            .records
            .iter()
            .map(|r| json::to_string(&r.value()))
            .collect();
        let model: Vec<String> = values.iter().map(json::to_string).collect();
        assert_eq!(ours, model);
        // A later entry is named by the id it had before the migration.
        assert!(
            model[3].contains(r#""firstKeptEntryId":"later""#),
            "{}",
            model[3]
        );

        let mut expected = model.join("\n").into_bytes();
        expected.push(b'\n');
        let expected = String::from_utf8(expected).unwrap().replacen(
            &model[4],
            &format!("{}\nnot json", model[4]),
            1,
        );
        assert_eq!(String::from_utf8(session.to_jsonl()).unwrap(), expected);
        let migration = Session::load_for_migration(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: PiVersion::V0_73,
            },
            &|_| {},
        )
        .unwrap();
        let mut streamed = Vec::new();
        migration
            .write(&mut streamed, &mut Changes::new(10), &|_| {})
            .unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), expected);
    }

    #[test]
    fn header_is_the_first_parseable_value() {
        let text =
            format!("garbage\n{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}}\n");
        let s = load(&text).unwrap();
        assert_eq!(s.dropped.len(), 1);
        assert_eq!(s.dropped[0].line, 1);
        assert_eq!(s.entries.len(), 1);
    }

    #[test]
    fn invalid_headers_are_refused() {
        assert!(matches!(
            load(""),
            Err(LoadError::Empty { blank: true, .. })
        ));
        assert!(matches!(
            load("not json"),
            Err(LoadError::Empty { blank: false, .. })
        ));
        for text in [
            r#"{"type":"session","id":1}"#,
            r#"{"type":"message","id":"a"}"#,
            "null",
            "[1]",
            r#"{"id":"a"}"#,
        ] {
            assert!(
                matches!(load(text), Err(LoadError::InvalidHeader { line: 1, .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn later_session_lines_are_not_entries() {
        let text = format!("{HEADER}\n{HEADER}\n{{\"type\":\"label\",\"id\":\"a\"}}\n");
        let s = load(&text).unwrap();
        assert_eq!(s.entries, [2]);
    }

    #[test]
    fn v3_version_coercion() {
        for (version, v1, v2) in [
            ("3", false, false),
            ("4", false, false),
            ("\"3\"", false, false),
            ("\"2\"", false, true),
            ("2.5", false, true),
            ("0", true, true),
            ("true", true, true),
            ("null", true, true),
            ("\"abc\"", false, false),
            ("\" 0x3 \"", false, false),
        ] {
            let text = format!(r#"{{"type":"session","version":{version},"id":"s"}}"#);
            let s = load(&text).unwrap();
            assert_eq!(
                (s.version.migrated_v1, s.version.migrated_v2),
                (v1, v2),
                "{version}"
            );
        }
        let s = load(r#"{"type":"session","version":"abc","id":"s"}"#).unwrap();
        assert!(s.version.rewrite);
    }

    #[test]
    fn null_lines_are_skipped_not_fatal() {
        let text = format!("{HEADER}\nnull\n{{\"type\":\"message\",\"id\":\"a\"}}\n42\n");
        let s = load(&text).unwrap();
        assert_eq!(s.skipped.len(), 1);
        assert_eq!(s.entries.len(), 2);
    }

    #[test]
    fn p5_lines_are_parsed_untrimmed_so_crlf_passes_and_inner_bom_fails() {
        let text = format!(
            "{HEADER}\r\n{{\"type\":\"a\"}}\r\n\u{feff}{{\"type\":\"b\"}}\n\u{a0}{{\"type\":\"c\"}}\n{{\"type\":\"d\"}}"
        );
        let s = load(&text).unwrap();
        let types: Vec<_> = s
            .entry_records()
            .map(|r| r.entry_type().unwrap().to_owned())
            .collect();
        assert_eq!(types, ["a", "d"]);
        assert_eq!(s.dropped.iter().map(|d| d.line).collect::<Vec<_>>(), [3, 4]);
    }

    #[test]
    fn p6_any_json_value_is_an_entry() {
        let text = format!("{HEADER}\n42\n\"x\"\n[1]\ntrue\nfalse\n");
        let s = load(&text).unwrap();
        assert_eq!(s.entries.len(), 5);
        assert!(s.entry_records().all(|r| r.id == Key::Undefined));
    }

    #[test]
    fn p7_lines_with_trailing_garbage_or_two_values_are_dropped() {
        let text = format!("{HEADER}\n{{}}{{}}\n{{\"type\":\"a\"}} x\n");
        let s = load(&text).unwrap();
        assert!(s.entries.is_empty());
        assert_eq!(s.dropped.len(), 2);
    }

    #[test]
    fn p8_deep_nesting_huge_numbers_and_lone_surrogates_are_accepted() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let text = format!(
            "{HEADER}\n{{\"type\":\"custom\",\"data\":{deep},\"n\":1e400,\"s\":\"\\ud83d\"}}\n"
        );
        let s = load(&text).unwrap();
        assert_eq!(s.entries.len(), 1);
        assert!(s.dropped.is_empty());
    }

    #[test]
    fn pi_0_87_ignores_falsy_lines_and_does_not_trim_the_whole_text() {
        let load87 = |text: &str| {
            Session::load_with(
                text.as_bytes(),
                LoadOptions {
                    ids: &mut SequentialIds::default(),
                    pi: PiVersion::V0_87,
                },
            )
            .map(|s| (s.entries.len(), s.skipped.len()))
        };
        assert_eq!(
            load87(&format!("null\n{HEADER}\nnull\n0\nfalse\n\"\"\n42\n")).unwrap(),
            (1, 5)
        );
        assert!(load87(&format!("\u{feff}{HEADER}\n")).is_err());
        assert!(load(&format!("\u{feff}{HEADER}\n")).is_ok());
    }

    /// Everything a record or dropped line says, for comparing two loads.
    fn summary(s: &Session<'_>) -> Vec<String> {
        let records = s.records.iter().map(|r| {
            format!(
                "{} {} {:?} {:?} {:?} {:?} {} {:?}",
                r.line,
                r.offset,
                r.kind,
                r.id,
                r.parent_id,
                r.message.as_ref().map(|m| (m.start, m.end, m.canonical)),
                r.lossy,
                r.text()
            )
        });
        let dropped = s.dropped.iter().map(|d| format!("{d:?}"));
        let skipped = s.skipped.iter().map(|d| format!("{d:?}"));
        records.chain(dropped).chain(skipped).collect()
    }

    #[test]
    fn reading_through_buffers_loads_exactly_like_borrowing() {
        let mut text = Vec::new();
        text.extend_from_slice("\u{feff} \n".as_bytes());
        text.extend_from_slice(HEADER.as_bytes());
        text.extend_from_slice(b"\r\n");
        let huge = "x".repeat(300_000);
        for i in 0..6000 {
            let line = match i % 11 {
                0 => format!(
                    "{{\"type\":\"message\",\"id\":\"{i}\",\"message\":{{\"role\":\"user\",\"content\":\"caf\u{e9}\"}}}}\r\n"
                ),
                1 => "\u{a0}\u{3000}\n\n \t\n".to_string(),
                2 => format!("{{\"type\":\"custom\",\"id\":\"{i}\"}}\r{{\"lone\":1}}\n"),
                3 => format!("{{\"type\":\"label\",\"id\":\"{i}\",\"s\":\"\u{fffd}"),
                4 if i % 2000 == 4 => {
                    format!("{{\"type\":\"custom\",\"id\":\"h{i}\",\"data\":\"{huge}\"}}\n")
                }
                5 => "null\n0\n\"\"\nnot json\n".to_string(),
                _ => format!(
                    "{{\"type\":\"message\",\"id\":\"{i}\",\"parentId\":\"{}\",\"message\":{{\"role\":\"assistant\",\"content\":[]}}}}\n",
                    i - 1
                ),
            };
            text.extend_from_slice(line.as_bytes());
            if i % 11 == 3 {
                // Invalid UTF-8 inside a string, then the end of the line.
                text.extend_from_slice(b"\xff\xc3(\"}\n");
            }
        }
        text.extend_from_slice(b"{\"type\":\"label\",\"id\":\"last\"}\n\xe2\x80\xa8 ");
        for end in [text.len(), text.len() - 5, 70_000, 200_000, 1_000_000] {
            let bytes = &text[..end.min(text.len())];
            for pi in [PiVersion::V0_73, PiVersion::V0_87] {
                let load = |read: Option<&ReadAt<'_>>| {
                    let options = LoadOptions {
                        ids: &mut SequentialIds::default(),
                        pi,
                    };
                    let session = match read {
                        None => Session::load_with(bytes, options),
                        Some(read) => Session::load_reading(bytes, options, read),
                    };
                    session.map(|s| summary(&s)).map_err(|e| e.to_string())
                };
                let copy = |buf: &mut [u8], at: usize| {
                    buf.copy_from_slice(&bytes[at..at + buf.len()]);
                    true
                };
                let expected = load(None);
                assert_eq!(load(Some(&copy)), expected, "{pi:?} {end}");
                assert_eq!(
                    load(Some(&|_: &mut [u8], _| false)),
                    expected,
                    "{pi:?} {end}"
                );
            }
        }
    }

    #[test]
    fn records_are_indexed_across_uneven_chunks() {
        // Lines of very different lengths, so that the loader's pieces hold very different
        // numbers of records and the proportional guess of `Records::get` often misses.
        let mut text = String::from(r#"{"type":"session","version":3,"id":"s"}"#);
        text.push('\n');
        for i in 0..3000 {
            let pad = if i % 500 < 5 { 70_000 } else { 0 };
            text.push_str(&format!(
                r#"{{"type":"message","id":"{i:08x}","pad":"{}"}}"#,
                "x".repeat(pad)
            ));
            text.push('\n');
        }
        let s = load(&text).unwrap();
        assert!(
            s.records.chunks.len() > 1,
            "one chunk only: {}",
            s.records.chunks.len()
        );
        assert_eq!(s.records.len(), 3001);
        assert!(s.records.get(3001).is_none() && s.records.get(usize::MAX).is_none());
        for (i, r) in s.records.iter().enumerate() {
            assert!(std::ptr::eq(&s.records[i], r));
            assert_eq!(r.line, i + 1);
        }
        assert_eq!(s.records.iter().rev().count(), 3001);
        assert_eq!(Records::default().first().map(|r| r.line), None);
    }

    #[test]
    fn dropped_lines_report_their_column() {
        let text = format!("{HEADER}\n{{\"a\":é,}}\n");
        let s = load(&text).unwrap();
        assert_eq!(s.dropped[0].column, 6);
        assert_eq!(s.dropped[0].line, 2);
    }
}
