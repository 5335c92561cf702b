//! Reading the few members a reader wants from a large JSON value in one pass: a [`Cursor`]
//! walks the value once, hands each member or element to the reader, and skips (validating,
//! building nothing) whatever the reader leaves; strings without escapes are borrowed from
//! the text instead of copied. For the tables export, which takes the texts of every message
//! of every session and nothing else of most of it.

use super::{Buffers, Scanner};
use crate::parse::{ParseError, ParseErrorKind, Parser};
use crate::value::JsValue;
use std::borrow::Cow;

/// A position in the text of one JSON value (see the module documentation).
#[derive(Debug)]
pub struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    b: Buffers,
}

impl<'a> Cursor<'a> {
    /// A cursor at the value `text` holds.
    pub fn new(text: &'a str) -> Cursor<'a> {
        let mut cursor = Cursor {
            text,
            pos: 0,
            b: Buffers::default(),
        };
        cursor.skip_ws();
        cursor
    }

    /// Runs `f` on a scanner at the cursor, and moves the cursor to where it stopped.
    fn scan<R>(&mut self, f: impl FnOnce(&mut Scanner<'a, '_>) -> R) -> R {
        let mut s = Scanner {
            p: Parser {
                bytes: self.text.as_bytes(),
                pos: self.pos,
            },
            canonical: true,
            b: &mut self.b,
        };
        let result = f(&mut s);
        self.pos = s.p.pos;
        result
    }

    fn parser(&self) -> Parser<'a> {
        Parser {
            bytes: self.text.as_bytes(),
            pos: self.pos,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        let mut p = self.parser();
        p.skip_ws();
        self.pos = p.pos;
    }

    /// Where the cursor is: a byte offset in the text.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Skips the value at the cursor, validating it.
    pub fn skip(&mut self) -> Result<(), ParseError> {
        self.scan(|s| s.skip_value::<false>())
    }

    /// The text of the value at the cursor, which is skipped.
    pub fn raw(&mut self) -> Result<&'a str, ParseError> {
        let start = self.pos;
        self.skip()?;
        Ok(&self.text[start..self.pos])
    }

    /// The value at the cursor, built.
    pub fn value(&mut self) -> Result<JsValue, ParseError> {
        let mut p = self.parser();
        let value = p.parse_any();
        self.pos = p.pos;
        value
    }

    /// The string at the cursor, borrowed from the text when it has no escape; a lone
    /// surrogate escape (which UTF-8 cannot hold) reads as U+FFFD replacement characters, one
    /// per byte of its WTF-8 form. `None`, the value skipped, when it is not a string.
    pub fn string(&mut self) -> Result<Option<Cow<'a, str>>, ParseError> {
        self.string_with(true)
    }

    /// [`Self::string`] for names and ids, which a replacement would confuse with others:
    /// `None` (the value read) when the string holds a lone surrogate.
    pub fn exact_string(&mut self) -> Result<Option<Cow<'a, str>>, ParseError> {
        self.string_with(false)
    }

    fn string_with(&mut self, lossy: bool) -> Result<Option<Cow<'a, str>>, ParseError> {
        if self.peek() != Some(b'"') {
            self.skip()?;
            return Ok(None);
        }
        let start = self.pos + 1;
        let escaped = self.scan(|s| s.string(false))?;
        if !escaped {
            return Ok(Some(Cow::Borrowed(&self.text[start..self.pos - 1])));
        }
        let mut p = Parser {
            bytes: self.text.as_bytes(),
            pos: start - 1,
        };
        let value = p.parse_string_value()?;
        Ok(if lossy {
            Some(Cow::Owned(value.into_string_lossy()))
        } else {
            String::from_utf8(value.into_wtf8().into_vec())
                .ok()
                .map(Cow::Owned)
        })
    }

    /// Whether the value at the cursor is a string.
    pub fn at_string(&self) -> bool {
        self.peek() == Some(b'"')
    }

    /// The number at the cursor; `None`, the value skipped, when it is not a number.
    pub fn number(&mut self) -> Result<Option<f64>, ParseError> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => match self.value()? {
                JsValue::Number(n) => Ok(Some(n)),
                _ => Ok(None),
            },
            _ => self.skip().map(|()| None),
        }
    }

    /// The boolean at the cursor; `None`, the value skipped, when it is not a boolean.
    pub fn boolean(&mut self) -> Result<Option<bool>, ParseError> {
        match self.peek() {
            Some(b't' | b'f') => match self.value()? {
                JsValue::Bool(b) => Ok(Some(b)),
                _ => Ok(None),
            },
            _ => self.skip().map(|()| None),
        }
    }

    /// Calls `member` with the cursor at each member's value and its key (unescaped), in
    /// order; a value `member` does not read is skipped. A key that repeats is given each
    /// time (the last is the one `JSON.parse` keeps). `Ok(false)`, the value skipped, when
    /// it is not an object.
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Cursor<'a>, &[u8]) -> Result<(), ParseError>,
    ) -> Result<bool, ParseError> {
        self.items(b'{', b'}', ParseErrorKind::ExpectedMemberSeparator, |c| {
            let key = c.scan(|s| s.key())?;
            let mut p = c.parser();
            p.skip_ws();
            p.expect(b':')?;
            p.skip_ws();
            c.pos = p.pos;
            c.read_or_skip(|c| member(c, &key))
        })
    }

    /// Calls `element` with the cursor at each element of the array, in order; an element
    /// `element` does not read is skipped. `Ok(false)`, the value skipped, when it is not an
    /// array.
    pub fn array(
        &mut self,
        mut element: impl FnMut(&mut Cursor<'a>) -> Result<(), ParseError>,
    ) -> Result<bool, ParseError> {
        self.items(b'[', b']', ParseErrorKind::ExpectedArraySeparator, |c| {
            c.read_or_skip(&mut element)
        })
    }

    /// The items of the container that `open` starts and `close` ends, each read by `item`
    /// from its first byte; `Ok(false)`, the value skipped, when the value is not one.
    fn items(
        &mut self,
        open: u8,
        close: u8,
        separator: ParseErrorKind,
        mut item: impl FnMut(&mut Cursor<'a>) -> Result<(), ParseError>,
    ) -> Result<bool, ParseError> {
        if self.peek() != Some(open) {
            self.skip()?;
            return Ok(false);
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(true);
        }
        loop {
            self.skip_ws();
            item(self)?;
            let mut p = self.parser();
            p.skip_ws();
            match p.next_byte() {
                Some(b',') => self.pos = p.pos,
                Some(b) if b == close => {
                    self.pos = p.pos;
                    return Ok(true);
                }
                _ => return Err(p.error_before(separator)),
            }
        }
    }

    /// Runs `read` at a value, and skips the value when `read` left it unread.
    fn read_or_skip(
        &mut self,
        read: impl FnOnce(&mut Cursor<'a>) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let at = self.pos;
        read(self)?;
        if self.pos == at {
            self.skip()?;
        }
        Ok(())
    }

    /// The value at the cursor, read through [`Self::object`], [`Self::array`] and the
    /// scalar readers and built again: what [`Self::value`] builds. For checking the cursor
    /// against the parser (the tests and the fuzz targets).
    pub fn rebuild(&mut self) -> Result<JsValue, ParseError> {
        match self.peek() {
            Some(b'{') => {
                let mut object = crate::JsObject::new();
                self.object(|c, key| {
                    let key = crate::JsString::from_wtf8(key.to_vec());
                    object.set(key, c.rebuild()?);
                    Ok(())
                })?;
                Ok(JsValue::Object(object))
            }
            Some(b'[') => {
                let mut items = Vec::new();
                self.array(|c| {
                    items.push(c.rebuild()?);
                    Ok(())
                })?;
                Ok(JsValue::Array(crate::JsArray(items)))
            }
            Some(b'"') => {
                let start = self.pos;
                self.skip()?;
                let mut p = Parser {
                    bytes: self.text.as_bytes(),
                    pos: start,
                };
                Ok(JsValue::String(p.parse_string_value()?))
            }
            Some(b't' | b'f') => Ok(JsValue::Bool(self.boolean()?.unwrap_or_default())),
            Some(b'-' | b'0'..=b'9') => Ok(JsValue::Number(self.number()?.unwrap_or_default())),
            _ => self.value(),
        }
    }

    /// Checks that nothing but whitespace follows the value read.
    pub fn end(&mut self) -> Result<(), ParseError> {
        let mut p = self.parser();
        p.expect_end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn a_value_read_through_the_cursor_is_what_parse_builds() {
        for text in [
            r#" {"a" : [1, {"b":"x\ny"}, [], {}], "a\u0062":"q\"", "a":null, "t":true} "#,
            r#"[1.5e3, "plain", "esc\\aped", "\ud83d\ude00", false, null, -0]"#,
            r#""just a string""#,
            "{}",
            "[]",
        ] {
            let mut c = Cursor::new(text);
            let rebuilt = c.rebuild().unwrap();
            c.end().unwrap();
            assert_eq!(
                crate::to_string(&rebuilt),
                crate::to_string(&parse(text).unwrap()),
                "{text}"
            );
        }
    }

    #[test]
    fn members_left_unread_are_skipped_and_strings_without_escapes_borrowed() {
        let text = r#"{"skip":{"deep":[1,[2,{"x":"y"}]]},"take":"plain","esc":"a\tb","n":3}"#;
        let mut c = Cursor::new(text);
        let mut seen = Vec::new();
        let is_object = c
            .object(|c, key| {
                match key {
                    b"take" | b"esc" => seen.push(c.string()?.unwrap()),
                    b"n" => assert_eq!(c.number()?, Some(3.0)),
                    _ => {}
                }
                Ok(())
            })
            .unwrap();
        assert!(is_object);
        c.end().unwrap();
        assert!(matches!(seen[0], Cow::Borrowed("plain")));
        assert_eq!(seen[1], "a\tb");
        assert_eq!(Cursor::new("[1]").object(|_, _| Ok(())), Ok(false));
        assert_eq!(Cursor::new(r#""s""#).number(), Ok(None));
        assert_eq!(Cursor::new("7").string(), Ok(None));
        assert_eq!(Cursor::new(r#""a\ud800""#).exact_string(), Ok(None));
        assert_eq!(
            Cursor::new(r#""a\ud83d\ude00""#).exact_string(),
            Ok(Some(Cow::Owned("a\u{1F600}".to_owned())))
        );
        assert_eq!(
            Cursor::new(r#""a\ud800""#).string(),
            Ok(Some(Cow::Owned("a\u{FFFD}\u{FFFD}\u{FFFD}".to_owned())))
        );
        assert_eq!(Cursor::new("null").boolean(), Ok(None));
        assert_eq!(Cursor::new(r#"{"a":[1,2]}"#).raw(), Ok(r#"{"a":[1,2]}"#));
    }

    #[test]
    fn invalid_values_are_errors() {
        for text in [
            r#"{"a":1"#,
            r#"{"a" 1}"#,
            "[1,]",
            "[1 2]",
            r#"{"a":"\q"}"#,
            "{,}",
        ] {
            let mut c = Cursor::new(text);
            assert!(c.rebuild().and_then(|_| c.end()).is_err(), "{text}");
        }
    }
}
