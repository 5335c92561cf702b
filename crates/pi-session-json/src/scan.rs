//! The skeleton scanner: validates a line exactly as [`super::parse()`] does, but builds only
//! what indexing and context building need, and tells whether the `message` member is
//! already in `JSON.stringify` form so it can be copied to the output byte for byte.
//!
//! Most bytes of a session are inside strings. A string's first eight bytes are looked at as
//! one word (most strings are short keys and values); longer strings are skipped 64 bytes at
//! a time with the bit masks of [`crate::simd`]; the strings that leaves (`\u` escapes,
//! errors) are scanned exactly, still 32 bytes at a time (a loop the compiler turns into
//! vector compares), then eight bytes at a time (SWAR) near the bytes that need attention:
//! `"`, `\` or a control character.
//!
//! The loader uses [`LineScanner`], which keeps its buffers from line to line and records
//! where the members are instead of building them; [`scan_skeleton`] builds the members from
//! those ranges.

use super::parse::{ParseError, ParseErrorKind, Parser};
use super::simd::portable::any_special;
use super::simd::simple_string;
use super::simd::word::special as special_bytes;
mod cursor;
mod members;

use super::value::JsValue;
use super::write::write_number;
pub use cursor::Cursor;
pub use members::{array_elements, object_members};
use std::borrow::Cow;

/// The members of a line that indexing needs, from a full validation of the line.
#[derive(Debug, Default)]
pub struct Skeleton {
    /// `Some` when the line is an object; `None` for any other JSON value.
    pub object: Option<SkeletonMembers>,
    /// For non-object lines: whether the value is `null` (pi 0.73.1 crashes on those).
    pub is_null: bool,
    /// For non-object lines: whether the value is falsy (`null`, `false`, `0`, `""`),
    /// which pi 0.87.1 ignores.
    pub is_falsy: bool,
}

/// The top-level members of an object line that the index and the context need (the last
/// occurrence of a key wins, as in `JSON.parse`).
#[derive(Debug, Default)]
pub struct SkeletonMembers {
    /// `type`, when present.
    pub type_: Option<JsValue>,
    /// `id`, when present.
    pub id: Option<JsValue>,
    /// `parentId`, when present.
    pub parent_id: Option<JsValue>,
    /// The `message` member, when present.
    pub message: Option<MessageScan>,
}

/// What the scanner learnt about a `message` member.
#[derive(Debug, Clone, Default)]
pub struct MessageScan {
    /// Byte range of the member's value in the line.
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
    /// Whether `text[start..end]` is known to be exactly what `JSON.stringify` writes for
    /// its value, so that it can be copied instead of parsed and written again.
    /// [`scan_skeleton`] always checks; the session loader does not (it leaves `false`, and
    /// `Record::canonical_message_text` checks the messages that are asked for), because the
    /// check costs a third of the scan and a context copies few of a session's messages.
    pub canonical: bool,
    /// Whether the value is an object (anything else is passed through as is).
    pub is_object: bool,
    /// Whether the value is `null`.
    pub is_null: bool,
    /// `role`, when the message is an object.
    pub role: Role,
    /// Whether and how `content` is present.
    pub content: Content,
}

/// The `role` of a scanned message: one of pi's roles when it is spelled as a plain string
/// (no escapes), [`Role::Other`] for any other value (parse the message to know it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Role {
    /// No `role` key (or the message is not an object).
    #[default]
    Missing,
    /// `"user"`.
    User,
    /// `"assistant"`.
    Assistant,
    /// `"toolResult"`.
    ToolResult,
    /// `"bashExecution"`.
    BashExecution,
    /// `"custom"`.
    Custom,
    /// `"branchSummary"`.
    BranchSummary,
    /// `"compactionSummary"`.
    CompactionSummary,
    /// `"system"`.
    System,
    /// Any other value, or a role string with escapes.
    Other,
}

impl Role {
    /// The role string, for the known roles.
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::Custom => "custom",
            Role::BranchSummary => "branchSummary",
            Role::CompactionSummary => "compactionSummary",
            Role::System => "system",
            Role::Missing | Role::Other => return None,
        })
    }

    /// The role a (decoded) role string names: [`Role::Other`] for any but pi's.
    pub fn named(role: &str) -> Role {
        Role::of_name(role.as_bytes())
    }

    fn of_name(name: &[u8]) -> Role {
        match name {
            b"user" => Role::User,
            b"assistant" => Role::Assistant,
            b"toolResult" => Role::ToolResult,
            b"bashExecution" => Role::BashExecution,
            b"custom" => Role::Custom,
            b"branchSummary" => Role::BranchSummary,
            b"compactionSummary" => Role::CompactionSummary,
            b"system" => Role::System,
            _ => Role::Other,
        }
    }

    /// The role of the raw JSON value `raw` (a member value as it appears in the text): a
    /// role string spelled with escapes is [`Role::Other`].
    fn of_raw(raw: &[u8]) -> Role {
        match raw {
            [b'"', name @ .., b'"'] => Role::of_name(name),
            _ => Role::Other,
        }
    }
}

/// Presence of a message's `content` member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Content {
    /// No `content` key.
    #[default]
    Missing,
    /// `content: null`.
    Null,
    /// Any other value.
    Present,
}

/// A byte range `start..end` of a member's raw value in the line.
pub type Span = (usize, usize);

/// The loader's skeleton: like [`Skeleton`], with the members as ranges of the line.
#[derive(Debug, Default)]
pub struct RawSkeleton {
    /// Whether the line is an object (the members below are only set for objects).
    pub object: bool,
    /// For non-object lines: whether the value is `null`.
    pub is_null: bool,
    /// For non-object lines: whether the value is falsy.
    pub is_falsy: bool,
    /// The raw `type` value.
    pub type_: Option<Span>,
    /// The raw `id` value.
    pub id: Option<Span>,
    /// The raw `parentId` value.
    pub parent_id: Option<Span>,
    /// The raw `timestamp` value.
    pub timestamp: Option<Span>,
    /// The `message` member.
    pub message: Option<MessageScan>,
}

/// Validates `text` exactly as [`super::parse()`] does but builds only the skeleton.
pub fn scan_skeleton(text: &str) -> Result<Skeleton, ParseError> {
    let bytes = text.as_bytes();
    let raw = LineScanner {
        track_canonical: true,
        ..LineScanner::default()
    }
    .scan(bytes)?;
    // The ranges hold validated JSON values, so they parse.
    let value = |span: Option<Span>| {
        span.map(|(start, end)| {
            Parser::new(&bytes[start..end])
                .parse_any()
                .unwrap_or_default()
        })
    };
    Ok(Skeleton {
        object: raw.object.then(|| SkeletonMembers {
            type_: value(raw.type_),
            id: value(raw.id),
            parent_id: value(raw.parent_id),
            message: raw.message,
        }),
        is_null: raw.is_null,
        is_falsy: raw.is_falsy,
    })
}

/// Whether `value` (one JSON value, validated) is exactly what `JSON.stringify` writes for
/// it: the check [`scan_skeleton`] makes of a `message` member, for a member found without it.
pub fn is_canonical(value: &[u8]) -> bool {
    let mut buffers = Buffers::default();
    let mut s = Scanner {
        p: Parser::new(value),
        canonical: true,
        b: &mut buffers,
    };
    s.message::<true>()
        .is_ok_and(|m| m.canonical && m.end == value.len())
}

/// A skeleton scanner whose buffers are kept from one line to the next.
#[derive(Debug, Default)]
pub struct LineScanner {
    buffers: Buffers,
    /// Whether to check the `message` member's canonical form (the loader does not: it
    /// checks, with [`is_canonical`], only the messages it copies to an output).
    track_canonical: bool,
}

#[derive(Debug, Default)]
struct Buffers {
    /// Key ranges of the objects open while tracking, for duplicate detection.
    key_ranges: Vec<(usize, usize)>,
    /// Where each open tracked object's keys start in `key_ranges`.
    key_frames: Vec<usize>,
    /// Open containers of `skip_value` (true = object).
    stack: Vec<bool>,
    /// A number as ECMAScript writes it, to compare with its spelling.
    number: Vec<u8>,
}

impl LineScanner {
    /// Validates `bytes` (one line) exactly as [`super::parse()`] does and finds where the
    /// members the loader needs are.
    pub fn scan(&mut self, bytes: &[u8]) -> Result<RawSkeleton, ParseError> {
        let (skeleton, mut p) = self.scan_value(bytes)?;
        p.expect_end()?;
        Ok(skeleton)
    }

    /// Validates the JSON value `bytes` start with (blanks before it allowed) as
    /// [`super::parse()`] would, and says where it ends; what follows it is not looked at.
    /// The work is the value's, however long the text after it is (`repair` takes glued
    /// lines apart with it).
    pub fn scan_first(&mut self, bytes: &[u8]) -> Result<(RawSkeleton, usize), ParseError> {
        let (skeleton, p) = self.scan_value(bytes)?;
        Ok((skeleton, p.pos))
    }

    fn scan_value<'a>(&mut self, bytes: &'a [u8]) -> Result<(RawSkeleton, Parser<'a>), ParseError> {
        let track = self.track_canonical;
        let b = &mut self.buffers;
        b.key_ranges.clear();
        b.key_frames.clear();
        b.stack.clear();
        let mut s = Scanner {
            p: Parser::new(bytes),
            canonical: true,
            b,
        };
        s.p.skip_ws();
        let mut skeleton = RawSkeleton::default();
        match s.p.peek() {
            Some(b'{') => {
                s.p.pos += 1;
                skeleton.object = true;
                s.members(|s, key| {
                    let start = s.p.pos;
                    match key {
                        b"type" | b"id" | b"parentId" | b"timestamp" => {
                            s.skip_value::<false>()?;
                            let span = Some((start, s.p.pos));
                            match key {
                                b"type" => skeleton.type_ = span,
                                b"id" => skeleton.id = span,
                                b"parentId" => skeleton.parent_id = span,
                                _ => skeleton.timestamp = span,
                            }
                        }
                        b"message" => {
                            skeleton.message = Some(if track {
                                s.message::<true>()?
                            } else {
                                s.message::<false>()?
                            });
                        }
                        _ => s.skip_value::<false>()?,
                    }
                    Ok(())
                })?;
            }
            Some(b'[') => s.skip_value::<false>()?,
            _ => {
                let value = s.p.parse_scalar()?;
                skeleton.is_null = matches!(value, JsValue::Null);
                skeleton.is_falsy = !value.is_truthy();
            }
        }
        Ok((skeleton, s.p))
    }
}

/// Objects with more keys than this are not checked for duplicates; they count as not
/// canonical (the slow path handles them exactly).
const MAX_TRACKED_KEYS: usize = 32;

struct Scanner<'a, 'b> {
    p: Parser<'a>,
    /// Whether everything scanned with tracking on was canonical.
    canonical: bool,
    b: &'b mut Buffers,
}

impl<'a> Scanner<'a, '_> {
    /// Skips whitespace; with `track`, any whitespace makes the value non-canonical.
    fn ws(&mut self, track: bool) {
        let before = self.p.pos;
        self.p.skip_ws();
        if track && self.p.pos != before {
            self.canonical = false;
        }
    }

    /// Scans the members of an object whose `{` was consumed, calling `member` with each
    /// key (raw bytes between the quotes) positioned at its value.
    fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &[u8]) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.pos += 1;
            return Ok(());
        }
        loop {
            self.p.skip_ws();
            let key = self.key()?;
            self.p.skip_ws();
            self.p.expect(b':')?;
            self.p.skip_ws();
            member(self, &key)?;
            self.p.skip_ws();
            match self.p.next_byte() {
                Some(b',') => continue,
                Some(b'}') => return Ok(()),
                _ => {
                    return Err(self.p.error_before(ParseErrorKind::ExpectedMemberSeparator));
                }
            }
        }
    }

    /// Scans a `message` member's value, reading `role` and whether `content` is there;
    /// with `TRACK`, also whether it is in canonical form (`MessageScan::canonical`).
    fn message<const TRACK: bool>(&mut self) -> Result<MessageScan, ParseError> {
        let start = self.p.pos;
        let saved = std::mem::replace(&mut self.canonical, true);
        let mut scan = MessageScan {
            start,
            ..MessageScan::default()
        };
        match self.p.peek() {
            Some(b'{') => {
                scan.is_object = true;
                self.p.pos += 1;
                if TRACK {
                    self.open_tracked_object();
                }
                let mut first = true;
                self.ws(TRACK);
                if self.p.peek() == Some(b'}') {
                    self.p.pos += 1;
                } else {
                    loop {
                        if !first {
                            self.ws(TRACK);
                        }
                        first = false;
                        let key = if TRACK {
                            self.tracked_key()?
                        } else {
                            self.key()?
                        };
                        self.ws(TRACK);
                        self.p.expect(b':')?;
                        self.ws(TRACK);
                        let value_start = self.p.pos;
                        match &*key {
                            b"role" => {
                                self.skip_value::<TRACK>()?;
                                scan.role = Role::of_raw(&self.p.bytes[value_start..self.p.pos]);
                            }
                            b"content" => {
                                scan.content = if self.p.bytes[value_start..].starts_with(b"null") {
                                    Content::Null
                                } else {
                                    Content::Present
                                };
                                self.skip_value::<TRACK>()?;
                            }
                            _ => self.skip_value::<TRACK>()?,
                        }
                        self.ws(TRACK);
                        match self.p.next_byte() {
                            Some(b',') => continue,
                            Some(b'}') => break,
                            _ => {
                                return Err(self
                                    .p
                                    .error_before(ParseErrorKind::ExpectedObjectSeparator));
                            }
                        }
                    }
                }
                if TRACK {
                    self.close_tracked_object();
                }
            }
            Some(b'n') => {
                scan.is_null = true;
                self.skip_value::<TRACK>()?;
            }
            _ => self.skip_value::<TRACK>()?,
        }
        scan.end = self.p.pos;
        scan.canonical = TRACK && self.canonical;
        self.canonical = saved;
        Ok(scan)
    }

    /// Reads a key at `"`: its raw range, and its decoded bytes (borrowed when it has no
    /// escapes, which is almost always).
    fn key_with_range(&mut self) -> Result<(usize, usize, Cow<'a, [u8]>), ParseError> {
        if self.p.peek() != Some(b'"') {
            return Err(self.p.error_at(self.p.pos, ParseErrorKind::ExpectedString));
        }
        let start = self.p.pos + 1;
        let escaped = self.string(false)?;
        let end = self.p.pos - 1;
        let bytes: &'a [u8] = self.p.bytes;
        let raw = &bytes[start..end];
        let key = if !escaped {
            Cow::Borrowed(raw)
        } else {
            let mut sub = Parser::new(&bytes[start - 1..end + 1]);
            Cow::Owned(sub.parse_string_value()?.as_wtf8().to_vec())
        };
        Ok((start, end, key))
    }

    fn key(&mut self) -> Result<Cow<'a, [u8]>, ParseError> {
        self.key_with_range().map(|(_, _, key)| key)
    }

    /// Opens a tracked object (for duplicate-key detection).
    fn open_tracked_object(&mut self) {
        self.b.key_frames.push(self.b.key_ranges.len());
    }

    fn close_tracked_object(&mut self) {
        let start = self.b.key_frames.pop().unwrap_or(0);
        self.b.key_ranges.truncate(start);
    }

    /// Reads an object key while tracking; marks the object non-canonical for escapes,
    /// array-index keys, duplicates or too many keys.
    fn tracked_key(&mut self) -> Result<Cow<'a, [u8]>, ParseError> {
        let (start, end, key) = self.key_with_range()?;
        let bytes: &'a [u8] = self.p.bytes;
        let raw = &bytes[start..end];
        if matches!(key, Cow::Owned(_)) || (!raw.is_empty() && raw.iter().all(u8::is_ascii_digit)) {
            self.canonical = false;
        }
        let first = self
            .b
            .key_frames
            .last()
            .copied()
            .unwrap_or(self.b.key_ranges.len());
        let siblings = &self.b.key_ranges[first..];
        if siblings.len() >= MAX_TRACKED_KEYS {
            self.canonical = false;
        } else {
            if siblings.iter().any(|&(s, e)| &bytes[s..e] == raw) {
                self.canonical = false;
            }
            self.b.key_ranges.push((start, end));
        }
        Ok(key)
    }

    /// Validates any value without building it; with `TRACK`, also checks canonical form
    /// (a const parameter, so the untracked scan pays nothing for it).
    fn skip_value<const TRACK: bool>(&mut self) -> Result<(), ParseError> {
        // true = object, false = array; `skip_value` does not nest, so the stack is free.
        self.b.stack.clear();
        loop {
            match self.p.peek() {
                Some(b'[') => {
                    self.p.pos += 1;
                    self.ws(TRACK);
                    if self.p.peek() == Some(b']') {
                        self.p.pos += 1;
                    } else {
                        self.b.stack.push(false);
                        continue;
                    }
                }
                Some(b'{') => {
                    self.p.pos += 1;
                    self.ws(TRACK);
                    if self.p.peek() == Some(b'}') {
                        self.p.pos += 1;
                    } else {
                        if TRACK {
                            self.open_tracked_object();
                        }
                        self.member_key::<TRACK>()?;
                        self.b.stack.push(true);
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string(TRACK)?;
                }
                Some(b'-' | b'0'..=b'9') => self.number(TRACK)?,
                _ => {
                    self.p.parse_scalar()?;
                }
            }
            loop {
                let Some(&is_object) = self.b.stack.last() else {
                    return Ok(());
                };
                self.ws(TRACK);
                match (self.p.next_byte(), is_object) {
                    (Some(b','), true) => {
                        self.ws(TRACK);
                        self.member_key::<TRACK>()?;
                        break;
                    }
                    (Some(b','), false) => {
                        self.ws(TRACK);
                        break;
                    }
                    (Some(b'}'), true) => {
                        self.b.stack.pop();
                        if TRACK {
                            self.close_tracked_object();
                        }
                    }
                    (Some(b']'), false) => {
                        self.b.stack.pop();
                    }
                    (_, true) => {
                        return Err(self.p.error_before(ParseErrorKind::ExpectedObjectSeparator));
                    }
                    (_, false) => {
                        return Err(self.p.error_before(ParseErrorKind::ExpectedArraySeparator));
                    }
                }
            }
        }
    }

    /// An object key and its `:`, at `"`.
    fn member_key<const TRACK: bool>(&mut self) -> Result<(), ParseError> {
        if TRACK {
            self.tracked_key()?;
        } else {
            if self.p.peek() != Some(b'"') {
                return Err(self.p.error_at(self.p.pos, ParseErrorKind::ExpectedString));
            }
            self.string(false)?;
        }
        self.ws(TRACK);
        self.p.expect(b':')?;
        self.ws(TRACK);
        Ok(())
    }

    /// Validates a string at `"` and tells whether it has escapes; with `track`, escapes
    /// other than `JSON.stringify`'s own (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
    /// `\u00xx` for other control characters) make it non-canonical.
    fn string(&mut self, track: bool) -> Result<bool, ParseError> {
        // Most strings are short keys and values: when the first eight bytes hold the closing
        // quote and nothing else that needs attention, that is the end.
        let start = self.p.pos + 1;
        if let Some(word) = self.p.bytes.get(start..).and_then(<[u8]>::first_chunk::<8>) {
            let special = special_bytes(u64::from_le_bytes(*word));
            let first = (special.trailing_zeros() / 8) as usize;
            if special != 0 && word[first] == b'"' {
                self.p.pos = start + first + 1;
                return Ok(false);
            }
        }
        match simple_string(self.p.bytes, start) {
            Some(found) => {
                self.p.pos = found.end;
                if track && found.slash {
                    self.canonical = false;
                }
                Ok(found.escaped)
            }
            None => self.string_exact(track),
        }
    }

    /// [`Self::string`] byte by byte: every string [`simple_string`] leaves, with the
    /// parser's error for invalid ones.
    fn string_exact(&mut self, track: bool) -> Result<bool, ParseError> {
        let bytes = self.p.bytes;
        let mut i = self.p.pos + 1;
        let mut escaped = false;
        loop {
            // Find the next `"`, `\` or control byte: eight bytes at a time, and after a
            // word without any, 32 at a time (long runs of plain text, base64 data).
            let b = loop {
                match bytes.get(i..i + 8) {
                    Some(word) => {
                        let word = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
                        let special = special_bytes(word);
                        if special != 0 {
                            i += (special.trailing_zeros() / 8) as usize;
                            break bytes[i];
                        }
                        i += 8;
                        while let Some(block) = bytes.get(i..i + 32) {
                            if any_special(block.try_into().unwrap_or(&[0; 32])) {
                                break;
                            }
                            i += 32;
                        }
                    }
                    None => match bytes[i.min(bytes.len())..]
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                    {
                        Some(at) => {
                            i += at;
                            break bytes[i];
                        }
                        None => {
                            let end = bytes.len();
                            self.p.pos = end;
                            return Err(self.p.error_at(end, ParseErrorKind::UnterminatedString));
                        }
                    },
                }
            };
            match b {
                b'"' => {
                    self.p.pos = i + 1;
                    return Ok(escaped);
                }
                b'\\' => {
                    escaped = true;
                    match bytes.get(i + 1) {
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                        Some(b'/') => {
                            if track {
                                self.canonical = false;
                            }
                            i += 2;
                        }
                        Some(b'u') => {
                            let unit = self.p.hex4(i + 2)?;
                            if track {
                                let hex = &bytes[i + 2..i + 6];
                                let is_stringify_escape = unit < 0x20
                                    && !matches!(unit, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D)
                                    && hex.iter().all(|h| !h.is_ascii_uppercase());
                                if !is_stringify_escape {
                                    self.canonical = false;
                                }
                            }
                            i += 6;
                        }
                        _ => {
                            // Like the parser: the byte after the backslash, or the backslash
                            // itself when the line ends there.
                            let at = if i + 1 < bytes.len() { i + 1 } else { i };
                            self.p.pos = at;
                            return Err(self.p.error_at(at, ParseErrorKind::InvalidEscape));
                        }
                    }
                }
                _ => return Err(self.p.error_at(i, ParseErrorKind::ControlCharacter)),
            }
        }
    }

    /// Validates a number; with `track`, checks that ECMAScript would write it the same way.
    fn number(&mut self, track: bool) -> Result<(), ParseError> {
        let start = self.p.pos;
        let end = self.p.number_end()?;
        self.p.pos = end;
        if track {
            let lexeme = &self.p.bytes[start..end];
            let digits = lexeme.strip_prefix(b"-").unwrap_or(lexeme);
            let plain_integer =
                digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) && lexeme != b"-0";
            if !plain_integer && !is_short_plain_decimal(digits) {
                let value: f64 = std::str::from_utf8(lexeme)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(f64::NAN);
                self.b.number.clear();
                write_number(&mut self.b.number, value);
                if self.b.number != lexeme {
                    self.canonical = false;
                }
            }
        }
        Ok(())
    }
}

/// Whether an unsigned JSON number lexeme with a fraction and no exponent is exactly what
/// ECMAScript writes for its value, judged without converting it: at most 15 digits (so it
/// is the only decimal of at most 15 significant digits that rounds to its double, hence
/// the shortest round-trip form), no trailing zero in the fraction, and a value of at least
/// 1e-6 (at most five zeros after `0.`), which `Number::toString` writes without exponent.
/// `false` means "not known": the caller then formats the number and compares.
fn is_short_plain_decimal(digits: &[u8]) -> bool {
    let Some(dot) = digits.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (int, frac) = (&digits[..dot], &digits[dot + 1..]);
    if frac.is_empty()
        || frac.last() == Some(&b'0')
        || !frac.iter().all(u8::is_ascii_digit)
        || !int.iter().all(u8::is_ascii_digit)
        || int.len() + frac.len() > 15
    {
        return false;
    }
    if int == b"0" {
        frac.iter().take_while(|&&b| b == b'0').count() <= 5
    } else {
        !int.is_empty() && int[0] != b'0'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{parse, to_string};

    #[test]
    fn scan_first_says_where_the_first_value_ends() {
        let mut scanner = LineScanner::default();
        let (raw, end) = scanner
            .scan_first(br#" {"type":"a","timestamp":1} {"type":"#)
            .expect("a value first");
        assert_eq!(end, 27);
        assert!(raw.object && raw.type_.is_some() && raw.timestamp.is_some());
        // Bytes that are not UTF-8 in a string are as pi's U+FFFD: the value is whole.
        let (_, end) = scanner
            .scan_first(b"{\"a\":\"\xFF\"}\xFF")
            .expect("a value first");
        assert_eq!(end, 9);
        assert!(scanner.scan_first(br#"{"a":"#).is_err());
        assert!(
            scanner.scan(br#"{"a":1}{"b":2}"#).is_err(),
            "scan wants one value"
        );
    }

    fn message(line: &str) -> MessageScan {
        scan_skeleton(line)
            .unwrap()
            .object
            .unwrap()
            .message
            .unwrap()
    }

    /// The invariant the fast path rests on: canonical means parse + stringify is identity.
    fn check(member: &str, canonical: bool) {
        let line = format!(r#"{{"type":"message","message":{member}}}"#);
        let m = message(&line);
        assert_eq!(&line[m.start..m.end], member);
        assert_eq!(m.canonical, canonical, "{member}");
        if m.canonical {
            assert_eq!(to_string(&parse(member).unwrap()), member);
        } else {
            assert_ne!(
                to_string(&parse(member).unwrap()),
                member,
                "{member} is canonical after all"
            );
        }
    }

    #[test]
    fn canonical_messages_are_recognised() {
        check(
            r#"{"role":"user","content":"hi","timestamp":1763630049626}"#,
            true,
        );
        check(
            r#"{"role":"assistant","content":[],"usage":{"cost":{"input":0.00552,"total":0}},"x":-1.5e-7}"#,
            true,
        );
        check(
            &format!(
                r#"{{"a":"\"\\\b\f\n\r\t\u0001\u001f é {}{}"}}"#,
                '\u{2028}', '\u{7f}'
            ),
            true,
        );
        check(r#"{"a":[[],{},null,true,false,"",1e+21]}"#, true);
    }

    #[test]
    fn non_canonical_messages_are_recognised() {
        check(r#"{"role": "user"}"#, false);
        check(r#"{"a":1.0}"#, false);
        check(r#"{"a":1e21}"#, false);
        check(r#"{"a":12345678901234567890}"#, false);
        check(r#"{"a":-0}"#, false);
        check(r#"{"a":"\/"}"#, false);
        check(r#"{"a":"\u00e9"}"#, false);
        check(r#"{"a":"\u001F"}"#, false);
        check(r#"{"a":"\u000a"}"#, false);
        check(r#"{"a":1,"a":2}"#, false);
        check(r#"{"b":1,"1":2}"#, false);
        check(r#"{"a":{"x":1,"x":1}}"#, false);
        check(r#"[1, 2]"#, false);
    }

    #[test]
    fn escaped_surrogates_are_not_canonical_but_still_read() {
        let m = message(r#"{"message":{"a":"\ud83d"}}"#);
        assert!(!m.canonical);
    }

    #[test]
    fn message_members_are_read() {
        let m = message(
            r#"{"message":{"role":"assistant","provider":"p","model":"m","content":null}}"#,
        );
        assert_eq!(m.role, Role::Assistant);
        assert_eq!(m.content, Content::Null);
        let m = message(r#"{"message":null}"#);
        assert!(m.is_null && !m.is_object);
        let m = message(r#"{"message":{"role":"user"},"message":{"role":"x","content":1}}"#);
        assert_eq!(m.role, Role::Other);
        let m = message(r#"{"message":{"role":"x","role":"user"}}"#);
        assert_eq!(m.role.as_str(), Some("user"));
        let m = message(r#"{"message":{"role":"\u0075ser"}}"#);
        assert_eq!(m.role, Role::Other);
        let m = message(r#"{"message":{"content":[]}}"#);
        assert_eq!(m.role, Role::Missing);
        assert_eq!(m.content, Content::Present);
    }

    #[test]
    fn skeleton_reads_top_level_members_only() {
        let s = scan_skeleton(
            r#"{"type":"message","x":{"id":"inner"},"id":"a","parentId":null,"id":"b"}"#,
        )
        .unwrap();
        let m = s.object.unwrap();
        assert_eq!(m.type_.unwrap().as_str(), Some("message"));
        assert_eq!(m.id.unwrap().as_str(), Some("b"));
        assert!(matches!(m.parent_id, Some(JsValue::Null)));
        assert!(scan_skeleton("null").unwrap().is_null);
        assert!(scan_skeleton("[1]").unwrap().object.is_none());
    }

    #[test]
    fn strings_of_every_length_and_position_scan_like_the_parser() {
        for len in 0..80 {
            for at in 0..len {
                for special in [b'"', b'\\', b'\t', 0x01] {
                    let mut body = vec![b'x'; len];
                    body[at] = special;
                    let line = [b"{\"message\":\"".as_slice(), &body, b"\"}"].concat();
                    let text = String::from_utf8(line).unwrap();
                    match (scan_skeleton(&text), parse(&text)) {
                        (Ok(_), Ok(_)) => {}
                        (Err(a), Err(b)) => assert_eq!(a.offset, b.offset, "{text:?}"),
                        (a, b) => panic!("{text:?}: {:?} / {:?}", a.is_ok(), b.is_ok()),
                    }
                }
            }
        }
    }

    #[test]
    fn short_plain_decimals_are_what_ecmascript_writes() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut checked = 0;
        for _ in 0..200_000 {
            let mut lexeme = String::new();
            match next(3) {
                0 => lexeme.push('0'),
                _ => {
                    lexeme.push(char::from(b'1' + next(9) as u8));
                    for _ in 0..next(8) {
                        lexeme.push(char::from(b'0' + next(10) as u8));
                    }
                }
            }
            lexeme.push('.');
            if next(2) == 0 {
                for _ in 0..next(9) {
                    lexeme.push('0');
                }
            }
            for _ in 0..1 + next(16) {
                lexeme.push(char::from(b'0' + next(10) as u8));
            }
            let value: f64 = lexeme.parse().unwrap();
            let mut written = Vec::new();
            write_number(&mut written, value);
            if is_short_plain_decimal(lexeme.as_bytes()) {
                checked += 1;
                assert_eq!(String::from_utf8(written).unwrap(), lexeme);
            }
        }
        assert!(checked > 10_000, "{checked}");
        for (lexeme, short) in [
            ("0.5", true),
            ("0.000001", true),
            ("0.0000001", false),
            ("0.50", false),
            ("123456789012345.6", false),
            ("12345678901234.5", true),
            ("0.007455000000000001", false),
            ("1.5e3", false),
            ("01.5", false),
        ] {
            assert_eq!(is_short_plain_decimal(lexeme.as_bytes()), short, "{lexeme}");
        }
    }

    #[test]
    fn invalid_lines_fail_like_the_parser() {
        for text in [
            "{\"message\":{\"a\":\"x\\",
            "{\"message\":{\"a\":}}",
            "{\"message\":\"\t\"}",
            "{\"message\":[1,]}",
            "{\"message\":{\"a\":\"\\x\"}}",
            "{\"message\":1.}",
        ] {
            let (scanned, parsed) = (scan_skeleton(text).unwrap_err(), parse(text).unwrap_err());
            assert_eq!(scanned, parsed, "{text}");
        }
    }
}
