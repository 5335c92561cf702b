//! omp's title slot: the first physical line of a file omp writes, a fixed-width JSON line of
//! exactly 256 UTF-8 bytes with its newline (`session-title-slot.ts`):
//! `{"type":"title","v":1,"title":"…","source":"auto"|"user"?,"updatedAt":"…","pad":"   …"}`.
//!
//! It is not an entry: omp peels it off before parsing and copies its title and source into
//! the header's `title` and `titleSource`. A first line counts as a slot only when it is
//! such an object (`parseTitleSlotObject`); anything else is left to be the header.

use crate::json::{self, JsObject, JsString, JsValue};

/// The size of a slot line, newline included (`SESSION_TITLE_SLOT_BYTES`).
pub const SLOT_BYTES: usize = 256;

/// The longest first line taken for a slot (omp writes 256 bytes; a line longer than this
/// is not looked at, so that telling a file's dialect never parses a huge first line).
pub const SLOT_MAX: usize = 64 << 10;

/// A parsed title slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleSlot {
    /// The title; empty when the session has none yet.
    pub title: String,
    /// Who set it: `"auto"` or `"user"`, or `None`.
    pub source: Option<String>,
    /// When it was set, as stored.
    pub updated_at: String,
    /// The length of the slot's line in bytes, newline included (256 when omp wrote it).
    pub len: usize,
}

/// Why a line is not omp's title slot ([`TitleSlot::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFault {
    /// It is not valid UTF-8 JSON.
    NotJson,
    /// It is not an object whose `type` is `"title"`.
    NotTitle,
    /// Its `v` is not 1.
    Version,
    /// This member is not a string.
    NotAString(&'static str),
    /// Its `source` is neither `"auto"` nor `"user"`.
    Source,
}

impl std::fmt::Display for SlotFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SlotFault::NotJson => write!(f, "it is not valid JSON"),
            SlotFault::NotTitle => write!(f, "its `type` is not \"title\""),
            SlotFault::Version => write!(f, "its `v` is not 1"),
            SlotFault::NotAString(key) => write!(f, "its `{key}` is not a string"),
            SlotFault::Source => write!(f, "its `source` is neither \"auto\" nor \"user\""),
        }
    }
}

impl TitleSlot {
    /// The slot on `line` (the bytes of the first line, without its newline), as omp's
    /// `parseTitleSlotLine` reads it: `JSON.parse` of the line must give an object with
    /// `type: "title"`, `v: 1`, string `title`, `updatedAt` and `pad`, and a `source` that is
    /// absent or `"auto"`/`"user"`.
    pub fn parse(line: &[u8]) -> Option<TitleSlot> {
        TitleSlot::read(line).ok()
    }

    /// [`TitleSlot::parse`], saying why the line is not a slot when it is not.
    pub fn read(line: &[u8]) -> Result<TitleSlot, SlotFault> {
        let text = std::str::from_utf8(line).map_err(|_| SlotFault::NotJson)?;
        let value = json::parse(text).map_err(|_| SlotFault::NotJson)?;
        let string = |key: &str| value.get(key).and_then(JsValue::as_str);
        if string("type") != Some("title") {
            return Err(SlotFault::NotTitle);
        }
        if !matches!(value.get("v"), Some(JsValue::Number(v)) if *v == 1.0) {
            return Err(SlotFault::Version);
        }
        let member = |key: &'static str| string(key).ok_or(SlotFault::NotAString(key));
        let (title, updated_at) = (member("title")?, member("updatedAt")?);
        member("pad")?;
        let source = match value.get("source") {
            None => None,
            Some(JsValue::String(s)) if matches!(s.as_str(), Some("auto" | "user")) => {
                s.as_str().map(str::to_owned)
            }
            Some(_) => return Err(SlotFault::Source),
        };
        Ok(TitleSlot {
            title: title.to_owned(),
            source,
            updated_at: updated_at.to_owned(),
            len: line.len() + 1,
        })
    }

    /// The slot at the start of `bytes`, if the file has one (its first line must end with a
    /// newline, as omp's `parseTitleSlotFromContent` requires, within [`SLOT_MAX`] bytes).
    pub fn of_file(bytes: &[u8]) -> Option<TitleSlot> {
        // omp reads the file as text, which drops a leading BOM.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let end = memchr::memchr(b'\n', &bytes[..bytes.len().min(SLOT_MAX + 1)])?;
        TitleSlot::parse(&bytes[..end])
    }
}

/// `serializeTitleSlot`: the slot line omp writes (newline included, exactly [`SLOT_BYTES`]
/// bytes) for a title (WTF-8), a source (written when truthy) and an `updatedAt` (left out
/// when `None`, as `JSON.stringify` leaves out `undefined`). The title is cut to the longest
/// prefix of whole code points that fits; `None` when even an empty title does not fit
/// (omp throws "Session title slot metadata exceeds fixed slot size").
pub fn serialize(
    title: &[u8],
    source: Option<&JsValue>,
    updated_at: Option<&JsValue>,
) -> Option<Vec<u8>> {
    let line = |title: &[u8], pad: usize| {
        let mut slot = JsObject::new();
        slot.set("type", JsValue::string("title"));
        slot.set("v", JsValue::Number(1.0));
        slot.set("title", JsValue::String(JsString::concat(&[title])));
        if let Some(source) = source.filter(|s| s.is_truthy()) {
            slot.set("source", source.clone());
        }
        if let Some(updated_at) = updated_at {
            slot.set("updatedAt", updated_at.clone());
        }
        slot.set("pad", JsValue::string(" ".repeat(pad)));
        let mut out = Vec::with_capacity(SLOT_BYTES);
        json::write_value(&mut out, &JsValue::Object(slot));
        out.push(b'\n');
        out
    };
    // Code point boundaries (a lone surrogate is a code point of its own, as `[...title]`
    // splits it).
    let ends: Vec<usize> = (1..=title.len())
        .filter(|&i| i == title.len() || !matches!(title[i], 0x80..=0xBF))
        .collect();
    let fits =
        |n: usize| line(&title[..if n == 0 { 0 } else { ends[n - 1] }], 0).len() <= SLOT_BYTES;
    // The largest prefix that fits, by bisection as omp does (the length grows with it).
    let (mut low, mut high, mut best) = (0usize, ends.len(), None);
    while low <= high {
        let mid = (low + high) / 2;
        if fits(mid) {
            best = Some(mid);
            low = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            high = mid - 1;
        }
    }
    let cut = &title[..match best? {
        0 => 0,
        n => ends[n - 1],
    }];
    let unpadded = line(cut, 0).len();
    Some(line(cut, SLOT_BYTES - unpadded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_omp_s_slot_object_is_a_slot() {
        let ok =
            br#"{"type":"title","v":1,"title":"T","source":"user","updatedAt":"u","pad":"  "}"#;
        let slot = TitleSlot::parse(ok).expect("a slot");
        assert_eq!(
            (slot.title.as_str(), slot.source.as_deref(), slot.len),
            ("T", Some("user"), ok.len() + 1)
        );
        for not in [
            &br#"{"type":"title","v":2,"title":"T","updatedAt":"u","pad":""}"#[..],
            br#"{"type":"title","v":1,"title":"T","source":"bot","updatedAt":"u","pad":""}"#,
            br#"{"type":"title","v":1,"title":"T","updatedAt":"u"}"#,
            br#"{"type":"title","v":1,"title":1,"updatedAt":"u","pad":""}"#,
            br#"{"type":"session","id":"s"}"#,
            b"not json",
        ] {
            assert_eq!(
                TitleSlot::parse(not),
                None,
                "{}",
                String::from_utf8_lossy(not)
            );
        }
        assert_eq!(TitleSlot::of_file(ok), None, "no newline: not a slot");
        // Why each is not a slot.
        let fault = |line: &[u8]| TitleSlot::read(line).err().map(|f| f.to_string());
        assert_eq!(
            fault(br#"{"type":"title","v":2,"title":"T","updatedAt":"u","pad":""}"#).as_deref(),
            Some("its `v` is not 1")
        );
        assert_eq!(
            fault(br#"{"type":"title","v":1,"title":"T","updatedAt":"u"}"#).as_deref(),
            Some("its `pad` is not a string")
        );
        assert_eq!(
            TitleSlot::read(
                br#"{"type":"title","v":1,"title":"T","source":"bot","updatedAt":"u","pad":""}"#
            ),
            Err(SlotFault::Source)
        );
        assert_eq!(TitleSlot::read(b"not json"), Err(SlotFault::NotJson));
    }

    #[test]
    fn slots_are_256_bytes_and_titles_cut_by_code_point() {
        let at = JsValue::string("2024-01-01T00:00:00.000Z");
        let empty = serialize(b"", None, Some(&at)).unwrap();
        assert_eq!(empty.len(), SLOT_BYTES);
        // REWRITE.md §3.2: an empty title and a 24-character timestamp leave 174 spaces.
        assert!(empty.ends_with(format!("\"pad\":\"{}\"}}\n", " ".repeat(174)).as_bytes()));
        let slot = TitleSlot::parse(&empty[..SLOT_BYTES - 1]).unwrap();
        assert_eq!((slot.title.as_str(), slot.source), ("", None));
        let title = "Ünïcödé 日本語 😀 ".repeat(20);
        let line = serialize(title.as_bytes(), Some(&JsValue::string("user")), Some(&at)).unwrap();
        assert_eq!(line.len(), SLOT_BYTES);
        let slot = TitleSlot::parse(&line[..SLOT_BYTES - 1]).unwrap();
        assert!(title.starts_with(&slot.title) && slot.title.len() < title.len());
        assert_eq!(slot.source.as_deref(), Some("user"));
        // A falsy source is left out; no `updatedAt` leaves the key out.
        let line = serialize(b"T", Some(&JsValue::string("")), None).unwrap();
        assert!(
            !String::from_utf8_lossy(&line).contains("source")
                && !String::from_utf8_lossy(&line).contains("updatedAt")
        );
        // Escapes count as written: a quote costs two bytes.
        let quotes = serialize(&[b'"'; 200], None, Some(&at)).unwrap();
        assert_eq!(quotes.len(), SLOT_BYTES);
        assert!(serialize(b"", None, Some(&JsValue::string("x".repeat(250)))).is_none());
        assert_eq!(
            TitleSlot::read(br#"{"type":"session"}"#),
            Err(SlotFault::NotTitle)
        );
    }
}
