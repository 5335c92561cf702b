//! One parsed line of a session file: what it is ([`Kind`]), where it is, its skeleton keys,
//! and its text, from which its value is parsed (and migrated) when asked for.

use super::key::Key;
use crate::json::{self, JsValue, MessageScan};
use crate::migrate;
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, Range};

/// Reads an input's bytes again (see [`super::Loader::reading`]): a file as the command line
/// reads it ([`pi_session_fs::input::Input`]), or any function `|buf, at| -> bool`.
pub trait PositionedRead: Sync {
    /// Fills `buf` with the input's bytes from `at`; `false` when it could not (the loader
    /// then copies from the bytes it was given).
    fn read_at(&self, buf: &mut [u8], at: usize) -> bool;
}

impl<F: Fn(&mut [u8], usize) -> bool + Sync> PositionedRead for F {
    fn read_at(&self, buf: &mut [u8], at: usize) -> bool {
        self(buf, at)
    }
}

impl PositionedRead for pi_session_fs::input::Input {
    fn read_at(&self, buf: &mut [u8], at: usize) -> bool {
        pi_session_fs::input::Input::read_at(self, buf, at)
    }
}

/// What the loader reads an input's bytes again with.
pub type ReadAt<'f> = dyn PositionedRead + 'f;

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
    /// when it is parsed from the text (see [`super::Loader::load`]).
    pub(super) fresh_ids: bool,
    /// For a `custom` entry: whether its text may name oh-my-pi's context-notes type
    /// ([`crate::omp::context::may_name`]), noted while the line was in hand, so that omp's
    /// context need not read the text of every `custom` entry on its path again.
    pub(crate) may_name_context_notes: bool,
    pub(super) text: Text<'a>,
    pub(super) value: Option<Box<JsValue>>,
}

/// Where a record's line text is.
pub(super) enum Text<'a> {
    /// In the input, validated as UTF-8 there.
    Str(&'a str),
    /// In the input, which was read through a buffer ([`super::Loader::reading`]): read
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
    pub(super) fn new(text: Cow<'a, str>) -> Text<'a> {
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
            } => text.get_or_init(|| read_again(*read_at, source, *offset)),
            Text::Owned(s) => s,
        }
    }

    /// Calls `f` with the text, without keeping a text read again for it: it is read into a
    /// buffer kept from one call to the next on the thread (a walk over many lines allocates
    /// none of them; a call made inside `f` reads into a buffer of its own).
    fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        match self {
            Text::Read {
                read_at,
                source,
                offset,
                text,
            } if text.get().is_none() => {
                let mut buf = LINE_BUFFER.take();
                read_line_into(&mut buf, *read_at, source, *offset);
                // Valid UTF-8 when first read; only a file changed since can make it invalid.
                let result = match std::str::from_utf8(&buf) {
                    Ok(text) => f(text),
                    Err(_) => f(&String::from_utf8_lossy(&buf)),
                };
                if buf.capacity() <= LINE_BUFFER_LIMIT {
                    LINE_BUFFER.set(buf);
                }
                result
            }
            _ => f(self.as_str()),
        }
    }
}

thread_local! {
    /// The buffer [`Text::with_str`] reads a line into.
    static LINE_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A buffer grown past this (by a huge line) is not kept.
const LINE_BUFFER_LIMIT: usize = 1 << 20;

/// Fills `buf` (emptied first) with a line's bytes read again with `read_at` from `offset`,
/// copied from `source` (the bytes first read) when that fails.
fn read_line_into(buf: &mut Vec<u8>, read_at: &ReadAt<'_>, source: &[u8], offset: usize) {
    buf.clear();
    buf.resize(source.len(), 0);
    if !read_at.read_at(buf, offset) {
        buf.copy_from_slice(source);
    }
}

/// The text of a line read through a buffer, read again with `read_at` (copied from `source`
/// when that fails).
fn read_again(read_at: &ReadAt<'_>, source: &[u8], offset: usize) -> Box<str> {
    let mut buf = Vec::new();
    read_line_into(&mut buf, read_at, source, offset);
    // It was valid UTF-8 when first read; only a file changed since then can make it
    // invalid.
    match String::from_utf8(buf) {
        Ok(s) => s.into_boxed_str(),
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into(),
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
    /// its v1→v2 ids) unless the migration materialised it. A record loaded through a buffer
    /// ([`super::Loader::reading`]) reads its line again for this and does not keep the text.
    pub fn value(&self) -> ValueRef<'_> {
        match &self.value {
            Some(v) => ValueRef::Borrowed(v),
            None => ValueRef::Owned(self.text.with_str(|text| self.parsed(text))),
        }
    }

    /// The value parsed from `text` (the record's text), given its v1→v2 ids.
    fn parsed(&self, text: &str) -> JsValue {
        // The text parsed once already while loading, so this cannot fail.
        let mut value = json::parse(text).unwrap_or_default();
        if self.fresh_ids {
            self.give_fresh_ids(&mut value);
        }
        value
    }

    /// Calls `f` with [`Record::value`] without keeping the line's text: a record loaded
    /// through a buffer ([`super::Loader::reading`]) whose value is parsed from its text reads
    /// the line again for this call alone (see [`Record::with_text`]).
    pub(crate) fn with_value<R>(&self, f: impl FnOnce(&JsValue) -> R) -> R {
        match &self.value {
            Some(v) => f(v),
            None => f(&self.text.with_str(|text| self.parsed(text))),
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

    /// Where [`Record::text`] is in `bytes` (the input the record was loaded from), when it is
    /// those bytes as they are (`None` for a text decoded from invalid UTF-8).
    pub(crate) fn place_in(&self, bytes: &[u8]) -> Option<Range<usize>> {
        let (text, len) = match &self.text {
            _ if self.lossy => return None,
            Text::Str(s) => (s.as_ptr(), s.len()),
            Text::Read { source, .. } => (source.as_ptr(), source.len()),
            Text::Owned(_) => return None,
        };
        let start = (text as usize).wrapping_sub(bytes.as_ptr() as usize);
        (start < bytes.len() && len <= bytes.len() - start).then(|| start..start + len)
    }

    /// Calls `f` with [`Record::text`] without keeping it: a record loaded through a buffer
    /// ([`super::Loader::reading`]) reads its line again for this call alone, so that a walk
    /// that looks once at each of many lines holds one of them at a time.
    pub(crate) fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        self.text.with_str(f)
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
    /// rewritten value); `None` when the record has no `message` member. Like
    /// [`Record::value`], it does not keep a text read again.
    pub fn message_value(&self) -> Option<JsValue> {
        match (&self.value, self.message.as_ref()) {
            (Some(v), _) => v.get("message").cloned(),
            (None, Some(m)) => self
                .text
                .with_str(|text| text.get(m.start..m.end).and_then(|t| json::parse(t).ok())),
            (None, None) => None,
        }
    }

    /// Whether the value differs from the text (a migration changed it).
    pub fn is_rewritten(&self) -> bool {
        self.value.is_some() || self.fresh_ids
    }

    /// Replaces the value (after a migration) and refreshes the skeleton fields.
    pub(super) fn set_value(&mut self, value: JsValue) {
        let unique = (self.offset as u64) << 1;
        self.id = Key::of(value.get("id"), unique);
        self.parent_id = Key::of(value.get("parentId"), unique | 1);
        // The skeleton describes the text, not the rewritten value.
        self.message = None;
        self.fresh_ids = false;
        self.value = Some(Box::new(value));
    }
}
