//! An iterative parser with `JSON.parse`'s grammar and semantics.
//!
//! Input is UTF-8 text (callers replace invalid bytes with U+FFFD first, as Node's decoder
//! does). Whitespace is JSON's own (space, tab, CR, LF). Any value is accepted at the top.

use super::simd::simple_string;
use super::simd::word::{equal, special as special_bytes};
use super::value::{JsArray, JsObject, JsString, JsValue, array_index, push_code_unit};
use std::collections::HashMap;
use std::fmt;

/// Why a line is not JSON, and where (a byte offset into the parsed text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset of the offending character within the parsed text.
    pub offset: usize,
    /// What was expected or wrong there.
    pub kind: ParseErrorKind,
    /// The character at `offset`; `None` at the end of the line.
    pub found: Option<char>,
}

/// What [`ParseError`] found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A specific character was expected (`:` after a key, say).
    Expected(char),
    /// Something follows the value.
    TrailingText,
    /// `null`, `true` or `false` misspelled.
    InvalidLiteral,
    /// No value starts here.
    ExpectedValue,
    /// A number without its digits.
    ExpectedDigit,
    /// A number with a `.` but no digit after it.
    ExpectedFractionDigit,
    /// A number with an exponent but no digit in it.
    ExpectedExponentDigit,
    /// A `\u` escape cut short.
    IncompleteUnicodeEscape,
    /// A `\u` escape with a character that is not a hex digit.
    InvalidHexDigit,
    /// An object key that is not a string.
    ExpectedString,
    /// A raw control character (U+0000–U+001F) inside a string.
    ControlCharacter,
    /// A string without its closing quote.
    UnterminatedString,
    /// A backslash followed by a character JSON does not escape.
    InvalidEscape,
    /// An array element followed by something other than `,` or `]`.
    ExpectedArraySeparator,
    /// An object member followed by something other than `,` or `}`.
    ExpectedObjectSeparator,
    /// The same, as the skeleton scanner words it.
    ExpectedMemberSeparator,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ParseErrorKind::Expected(c) => return write!(f, "expected '{c}'"),
            ParseErrorKind::TrailingText => "unexpected text after the JSON value",
            ParseErrorKind::InvalidLiteral => "invalid literal",
            ParseErrorKind::ExpectedValue => "expected a JSON value",
            ParseErrorKind::ExpectedDigit => "expected a digit",
            ParseErrorKind::ExpectedFractionDigit => "expected a digit after the decimal point",
            ParseErrorKind::ExpectedExponentDigit => "expected a digit in the exponent",
            ParseErrorKind::IncompleteUnicodeEscape => "incomplete \\u escape",
            ParseErrorKind::InvalidHexDigit => "invalid hex digit in \\u escape",
            ParseErrorKind::ExpectedString => "expected a string",
            ParseErrorKind::ControlCharacter => "control character in string",
            ParseErrorKind::UnterminatedString => "unterminated string",
            ParseErrorKind::InvalidEscape => "invalid escape in string",
            ParseErrorKind::ExpectedArraySeparator => "expected ',' or ']' in array",
            ParseErrorKind::ExpectedObjectSeparator => "expected ',' or '}' in object",
            ParseErrorKind::ExpectedMemberSeparator => "expected ',' or '}' after an object member",
        };
        f.write_str(text)
    }
}

impl ParseError {
    /// What was expected and what was found, without the position:
    /// `expected ':', found 'x'` (`found end of line` at the end).
    pub fn message(&self) -> String {
        match self.found {
            Some(c) => format!("{}, found {c:?}", self.kind),
            None => format!("{}, found end of line", self.kind),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message(), self.offset)
    }
}

impl std::error::Error for ParseError {}

/// Parses `text` like `JSON.parse(text)`.
pub fn parse(text: &str) -> Result<JsValue, ParseError> {
    let mut p = Parser::new(text.as_bytes());
    p.skip_ws();
    let value = p.parse_any()?;
    p.expect_end()?;
    Ok(value)
}

/// A container being built.
enum Frame {
    Array(Vec<JsValue>),
    Object(ObjectBuilder),
}

/// Collects object members with JSON.parse's duplicate-key rule.
struct ObjectBuilder {
    members: Vec<(JsString, JsValue)>,
    pending_key: Option<JsString>,
    index: Option<HashMap<JsString, usize>>,
    has_index_keys: bool,
}

/// Objects larger than this get a hash index for duplicate-key detection.
const LINEAR_LOOKUP_LIMIT: usize = 16;

impl ObjectBuilder {
    pub(super) fn new() -> Self {
        ObjectBuilder {
            members: Vec::new(),
            pending_key: None,
            index: None,
            has_index_keys: false,
        }
    }

    fn insert(&mut self, value: JsValue) {
        let key = self.pending_key.take().unwrap_or_default();
        let existing = match &self.index {
            Some(index) => index.get(&key).copied(),
            None => self.members.iter().position(|(k, _)| *k == key),
        };
        if let Some(at) = existing {
            self.members[at].1 = value;
            return;
        }
        self.has_index_keys |= array_index(key.as_wtf8()).is_some();
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.members.len());
        } else if self.members.len() == LINEAR_LOOKUP_LIMIT {
            let mut index: HashMap<JsString, usize> = self
                .members
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect();
            index.insert(key.clone(), self.members.len());
            self.index = Some(index);
        }
        self.members.push((key, value));
    }

    fn finish(self) -> JsObject {
        let mut members = self.members;
        if self.has_index_keys {
            // Stable: index keys ascending first, the rest keep insertion order.
            members.sort_by_key(|(k, _)| match array_index(k.as_wtf8()) {
                Some(i) => (0, i),
                None => (1, 0),
            });
        }
        JsObject::from_ordered_members(members)
    }
}

pub(super) struct Parser<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Parser { bytes, pos: 0 }
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    pub(super) fn next_byte(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    /// An error at `offset` (kept out of line: errors are rare, and the scanners' hot
    /// paths stay small).
    #[cold]
    #[inline(never)]
    pub(super) fn error_at(&self, offset: usize, kind: ParseErrorKind) -> ParseError {
        // The character there, when the rest of the text is valid UTF-8 (it always is for
        // text; the scanner's bytes are validated separately).
        let found = self
            .bytes
            .get(offset..)
            .and_then(|rest| std::str::from_utf8(rest).ok())
            .and_then(|rest| rest.chars().next());
        ParseError {
            offset,
            kind,
            found,
        }
    }

    /// An error about the byte just consumed.
    pub(super) fn error_before(&self, kind: ParseErrorKind) -> ParseError {
        self.error_at(self.pos.saturating_sub(1), kind)
    }

    #[inline]
    pub(super) fn expect(&mut self, byte: u8) -> Result<(), ParseError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(byte))
        }
    }

    #[cold]
    #[inline(never)]
    fn expected(&self, byte: u8) -> ParseError {
        self.error_at(self.pos, ParseErrorKind::Expected(byte as char))
    }

    pub(super) fn expect_end(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error_at(self.pos, ParseErrorKind::TrailingText))
        }
    }

    #[inline]
    pub(super) fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_literal(&mut self, literal: &[u8]) -> Result<(), ParseError> {
        let end = self.pos + literal.len();
        if self.bytes.get(self.pos..end) == Some(literal) {
            self.pos = end;
            Ok(())
        } else {
            let bad = (0..literal.len())
                .find(|&i| self.bytes.get(self.pos + i) != Some(&literal[i]))
                .unwrap_or(0);
            Err(self.error_at(self.pos + bad, ParseErrorKind::InvalidLiteral))
        }
    }

    /// Parses a scalar (everything but containers) starting at the current byte.
    pub(super) fn parse_scalar(&mut self) -> Result<JsValue, ParseError> {
        match self.peek() {
            Some(b'"') => Ok(JsValue::String(self.parse_string_value()?)),
            Some(b'n') => self.expect_literal(b"null").map(|()| JsValue::Null),
            Some(b't') => self.expect_literal(b"true").map(|()| JsValue::Bool(true)),
            Some(b'f') => self.expect_literal(b"false").map(|()| JsValue::Bool(false)),
            Some(b'-' | b'0'..=b'9') => self.parse_number(),
            _ => Err(self.error_at(self.pos, ParseErrorKind::ExpectedValue)),
        }
    }

    pub(super) fn number_end(&self) -> Result<usize, ParseError> {
        let b = self.bytes;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(self.error_at(i, ParseErrorKind::ExpectedDigit)),
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(self.error_at(i, ParseErrorKind::ExpectedFractionDigit));
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(self.error_at(i, ParseErrorKind::ExpectedExponentDigit));
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        Ok(i)
    }

    fn parse_number(&mut self) -> Result<JsValue, ParseError> {
        let end = self.number_end()?;
        // The lexeme is ASCII by construction, and Rust's float parsing is correctly rounded
        // with overflow to infinity, as ECMAScript's StringToNumber.
        let lexeme = std::str::from_utf8(&self.bytes[self.pos..end]).unwrap_or("0");
        let n: f64 = lexeme.parse().unwrap_or(f64::NAN);
        self.pos = end;
        Ok(JsValue::Number(n))
    }

    pub(super) fn hex4(&self, at: usize) -> Result<u16, ParseError> {
        let digits = self
            .bytes
            .get(at..at + 4)
            .ok_or_else(|| self.error_at(at, ParseErrorKind::IncompleteUnicodeEscape))?;
        let mut unit = 0u16;
        for (i, d) in digits.iter().enumerate() {
            let v = (*d as char)
                .to_digit(16)
                .ok_or_else(|| self.error_at(at + i, ParseErrorKind::InvalidHexDigit))?;
            unit = unit * 16 + v as u16;
        }
        Ok(unit)
    }

    /// Parses a string at the current `"` into WTF-8.
    ///
    /// Most strings end within their first eight bytes (keys, ids) or have only the short
    /// escapes (`\n`, `\"`, …): those are found with the scanner's word and block tricks
    /// ([`simple_string`]) and copied a run at a time; the others (`\u` escapes, errors) are
    /// read byte by byte.
    pub(super) fn parse_string_value(&mut self) -> Result<JsString, ParseError> {
        if self.peek() != Some(b'"') {
            return Err(self.error_at(self.pos, ParseErrorKind::ExpectedString));
        }
        let start = self.pos + 1;
        if let Some(word) = self.bytes.get(start..).and_then(<[u8]>::first_chunk::<8>) {
            let special = special_bytes(u64::from_le_bytes(*word));
            let first = (special.trailing_zeros() / 8) as usize;
            if special != 0 && word[first] == b'"' {
                self.pos = start + first + 1;
                return Ok(JsString::from_wtf8(word[..first].to_vec()));
            }
        }
        if let Some(found) = simple_string(self.bytes, start) {
            let body = &self.bytes[start..found.end - 1];
            self.pos = found.end;
            if !found.escaped {
                return Ok(JsString::from_wtf8(body.to_vec()));
            }
            return Ok(JsString::from_wtf8(unescape_short(body)));
        }
        self.string_exact()
    }

    /// [`Self::parse_string_value`] byte by byte: the strings the fast paths leave, with the
    /// errors of invalid ones.
    fn string_exact(&mut self) -> Result<JsString, ParseError> {
        self.pos += 1;
        let mut buf = Vec::new();
        loop {
            match self.next_byte() {
                None => return Err(self.error_at(self.pos, ParseErrorKind::UnterminatedString)),
                Some(b'"') => return Ok(JsString::from_wtf8(buf)),
                Some(b'\\') => {
                    let escape = self.next_byte();
                    match escape {
                        Some(b'"') => buf.push(b'"'),
                        Some(b'\\') => buf.push(b'\\'),
                        Some(b'/') => buf.push(b'/'),
                        Some(b'b') => buf.push(0x08),
                        Some(b'f') => buf.push(0x0C),
                        Some(b'n') => buf.push(b'\n'),
                        Some(b'r') => buf.push(b'\r'),
                        Some(b't') => buf.push(b'\t'),
                        Some(b'u') => {
                            let unit = self.hex4(self.pos)?;
                            self.pos += 4;
                            push_code_unit(&mut buf, unit);
                        }
                        _ => return Err(self.error_before(ParseErrorKind::InvalidEscape)),
                    }
                }
                Some(0x00..=0x1F) => {
                    return Err(self.error_before(ParseErrorKind::ControlCharacter));
                }
                Some(b) => buf.push(b),
            }
        }
    }

    /// Parses any value, containers included, without recursion.
    pub(super) fn parse_any(&mut self) -> Result<JsValue, ParseError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Parse one value (or open a container).
            let mut value = match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        JsValue::Array(JsArray(Vec::new()))
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        JsValue::Object(JsObject::new())
                    } else {
                        let mut builder = ObjectBuilder::new();
                        builder.pending_key = Some(self.parse_string_value()?);
                        self.skip_ws();
                        self.expect(b':')?;
                        self.skip_ws();
                        stack.push(Frame::Object(builder));
                        continue;
                    }
                }
                _ => self.parse_scalar()?,
            };
            // Attach the value to its parent, closing every container that ends here.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                self.skip_ws();
                match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        match self.next_byte() {
                            Some(b',') => {
                                self.skip_ws();
                                break;
                            }
                            Some(b']') => {
                                let Some(Frame::Array(items)) = stack.pop() else {
                                    unreachable!()
                                };
                                value = JsValue::Array(JsArray(items));
                            }
                            _ => {
                                return Err(
                                    self.error_before(ParseErrorKind::ExpectedArraySeparator)
                                );
                            }
                        }
                    }
                    Frame::Object(builder) => {
                        builder.insert(value);
                        match self.next_byte() {
                            Some(b',') => {
                                self.skip_ws();
                                builder.pending_key = Some(self.parse_string_value()?);
                                self.skip_ws();
                                self.expect(b':')?;
                                self.skip_ws();
                                break;
                            }
                            Some(b'}') => {
                                let Some(Frame::Object(builder)) = stack.pop() else {
                                    unreachable!()
                                };
                                value = JsValue::Object(builder.finish());
                            }
                            _ => {
                                return Err(
                                    self.error_before(ParseErrorKind::ExpectedObjectSeparator)
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The contents of a string whose escapes are all short ones (`\"`, `\\`, `\/`, `\b`, `\f`,
/// `\n`, `\r`, `\t`; as [`simple_string`] found them), unescaped: the runs between
/// backslashes are copied whole, found eight bytes at a time.
fn unescape_short(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let next = next_backslash(body, i);
        out.extend_from_slice(&body[i..next]);
        let Some(&escape) = body.get(next + 1) else {
            break;
        };
        out.push(match escape {
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            other => other,
        });
        i = next + 2;
    }
    out
}

/// The index of the first `\` in `bytes` from `from`, or `bytes.len()`.
fn next_backslash(bytes: &[u8], mut from: usize) -> usize {
    while let Some(word) = bytes.get(from..).and_then(<[u8]>::first_chunk::<8>) {
        let found = equal(u64::from_le_bytes(*word), b'\\');
        if found != 0 {
            return from + (found.trailing_zeros() / 8) as usize;
        }
        from += 8;
    }
    bytes[from..]
        .iter()
        .position(|&b| b == b'\\')
        .map_or(bytes.len(), |at| from + at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::to_string;

    /// Both ways of reading a string at the start of `text`: the fast paths and the byte
    /// loop.
    fn both_ways(text: &[u8]) -> [(Result<JsString, ParseError>, usize); 2] {
        let mut fast = Parser::new(text);
        let mut exact = Parser::new(text);
        let a = fast.parse_string_value();
        let b = exact.string_exact();
        [(a, fast.pos), (b, exact.pos)]
    }

    #[test]
    fn strings_read_fast_are_read_as_byte_by_byte() {
        let pieces: [&[u8]; 14] = [
            b"x",
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\t",
            b"\\b\\f\\r",
            b"\\u0041",
            b"\\ud83d\\ude00",
            b"\\udc00",
            "\u{e9}\u{1F600}".as_bytes(),
            b"\\",
            b"\x01",
            b"\\q",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..20_000 {
            let len = next(if round % 10 == 0 { 200 } else { 24 });
            let mut text = b"\"".to_vec();
            for _ in 0..len {
                text.extend_from_slice(if next(3) == 0 {
                    pieces[next(pieces.len())]
                } else {
                    b"y"
                });
            }
            // Terminated, unterminated, and followed by more JSON or by nothing.
            match next(3) {
                0 => {}
                1 => text.push(b'"'),
                _ => text.extend_from_slice(b"\",\"k\":1}"),
            }
            let [(fast, fast_end), (exact, exact_end)] = both_ways(&text);
            let shown = String::from_utf8_lossy(&text);
            match (fast, exact) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{shown}");
                    assert_eq!(fast_end, exact_end, "{shown}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{shown}"),
                (a, b) => panic!("{shown}: {a:?} / {b:?}"),
            }
        }
    }

    #[test]
    fn errors_say_what_was_expected_what_was_found_and_where() {
        let cases: &[(&str, usize, ParseErrorKind, Option<char>, &str)] = &[
            (
                r#"{"a" 1}"#,
                5,
                ParseErrorKind::Expected(':'),
                Some('1'),
                "expected ':', found '1'",
            ),
            (
                "[1,",
                3,
                ParseErrorKind::ExpectedValue,
                None,
                "expected a JSON value, found end of line",
            ),
            (
                "[1 2]",
                3,
                ParseErrorKind::ExpectedArraySeparator,
                Some('2'),
                "expected ',' or ']' in array, found '2'",
            ),
            (
                "nul",
                3,
                ParseErrorKind::InvalidLiteral,
                None,
                "invalid literal, found end of line",
            ),
            (
                r#""\x""#,
                2,
                ParseErrorKind::InvalidEscape,
                Some('x'),
                "invalid escape in string, found 'x'",
            ),
            (
                r#""\u12"#,
                3,
                ParseErrorKind::IncompleteUnicodeEscape,
                Some('1'),
                r"incomplete \u escape, found '1'",
            ),
            (
                "1 é",
                2,
                ParseErrorKind::TrailingText,
                Some('é'),
                "unexpected text after the JSON value, found 'é'",
            ),
        ];
        for &(text, offset, kind, found, message) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(
                error,
                ParseError {
                    offset,
                    kind,
                    found
                },
                "{text}"
            );
            assert_eq!(error.message(), message, "{text}");
            assert_eq!(error.to_string(), format!("{message} at byte {offset}"));
        }
    }

    fn roundtrip(text: &str) -> String {
        to_string(&parse(text).unwrap())
    }

    #[test]
    fn any_value_is_accepted() {
        for text in ["null", "42", "\"x\"", "[1]", "true", " {} "] {
            assert!(parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn duplicate_keys_last_wins_at_first_position() {
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn integer_like_keys_come_first() {
        assert_eq!(
            roundtrip(r#"{"b":1,"1":2,"a":3,"0":4}"#),
            r#"{"0":4,"1":2,"b":1,"a":3}"#
        );
    }

    #[test]
    fn lone_surrogates_survive() {
        assert_eq!(roundtrip(r#""a\ud83db""#), r#""a\ud83db""#);
        assert_eq!(roundtrip(r#""\ud83d\ude00""#), "\"\u{1F600}\"");
        assert_eq!(roundtrip(r#""\udE00\uD83D""#), r#""\ude00\ud83d""#);
    }

    #[test]
    fn numbers_are_doubles() {
        assert_eq!(roundtrip("12345678901234567890"), "12345678901234567000");
        assert_eq!(roundtrip("1e400"), "null");
        assert_eq!(roundtrip("-0"), "0");
        assert_eq!(
            roundtrip("[1.5e-7,0.000001,1e21,100]"),
            "[1.5e-7,0.000001,1e+21,100]"
        );
    }

    #[test]
    fn invalid_json_is_rejected_with_offset() {
        let cases = [
            ("{\"a\":1}{\"b\":2}", 7),
            ("[1,]", 3),
            ("01", 1),
            ("\"\t\"", 1),
            ("{\"a\" 1}", 5),
            ("\u{feff}{}", 0),
            ("1.", 2),
            ("\"\\x\"", 2),
            ("tru", 3),
            ("", 0),
        ];
        for (text, offset) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!(err.offset, offset, "{text:?}: {err}");
            let skel = crate::scan_skeleton(text).unwrap_err();
            assert_eq!(skel.offset, offset, "skeleton {text:?}: {skel}");
        }
    }

    #[test]
    fn deep_nesting_is_fine() {
        let depth = 200_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let value = parse(&text).unwrap();
        assert_eq!(to_string(&value), text);
        assert!(crate::scan_skeleton(&text).is_ok());
        let obj = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert_eq!(to_string(&parse(&obj).unwrap()), obj);
    }

    #[test]
    fn large_objects_dedupe_through_the_index() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k3\":\"last\"}");
        let v = parse(&text).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.len(), 40);
        assert_eq!(o.get("k3").and_then(JsValue::as_str), Some("last"));
    }
}
