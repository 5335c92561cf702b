//! Walking one object's members or one array's elements as byte ranges, validating as
//! `JSON.parse` does but building nothing: for readers that need a few members of a large
//! value (an assistant message's `usage`, the `type` of its content blocks).

use super::{Buffers, Scanner, Span};
use crate::parse::{ParseError, ParseErrorKind, Parser};

/// Calls `member` with the key (unescaped) and the byte range of the value of every member
/// of the object `text`, in order, skipping the values without building them (a key that
/// repeats is given each time: the last is the one `JSON.parse` keeps). `Err` when `text` is
/// not one valid JSON object.
pub fn object_members(text: &[u8], mut member: impl FnMut(&[u8], Span)) -> Result<(), ParseError> {
    let mut b = Buffers::default();
    let mut s = Scanner {
        p: Parser::new(text),
        canonical: true,
        b: &mut b,
    };
    s.p.skip_ws();
    if s.p.peek() != Some(b'{') {
        return Err(s.p.error_at(s.p.pos, ParseErrorKind::Expected('{')));
    }
    s.p.pos += 1;
    s.members(|s, key| {
        let start = s.p.pos;
        s.skip_value::<false>()?;
        member(key, (start, s.p.pos));
        Ok(())
    })?;
    s.p.expect_end()
}

/// Calls `element` with the byte range of every element of the array `text`, in order,
/// skipping the values without building them. `Err` when `text` is not one valid JSON array.
pub fn array_elements(text: &[u8], mut element: impl FnMut(Span)) -> Result<(), ParseError> {
    let mut b = Buffers::default();
    let mut s = Scanner {
        p: Parser::new(text),
        canonical: true,
        b: &mut b,
    };
    s.p.skip_ws();
    if s.p.peek() != Some(b'[') {
        return Err(s.p.error_at(s.p.pos, ParseErrorKind::Expected('[')));
    }
    s.p.pos += 1;
    s.p.skip_ws();
    if s.p.peek() == Some(b']') {
        s.p.pos += 1;
        return s.p.expect_end();
    }
    loop {
        s.p.skip_ws();
        let start = s.p.pos;
        s.skip_value::<false>()?;
        element((start, s.p.pos));
        s.p.skip_ws();
        match s.p.next_byte() {
            Some(b',') => continue,
            Some(b']') => break,
            _ => return Err(s.p.error_before(ParseErrorKind::ExpectedArraySeparator)),
        }
    }
    s.p.expect_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_elements_are_found_without_building_them() {
        let text = br#" {"a":[1,{"b":2}], "k\u0065y" : "v", "a": null } "#;
        let mut seen = Vec::new();
        object_members(text, |key, (start, end)| {
            seen.push((key.to_vec(), text[start..end].to_vec()));
        })
        .expect("an object");
        let seen: Vec<(&[u8], &[u8])> = seen.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        assert_eq!(
            seen,
            [
                (&b"a"[..], &br#"[1,{"b":2}]"#[..]),
                (b"key", br#""v""#),
                (b"a", b"null")
            ]
        );
        let mut elements = Vec::new();
        array_elements(br#"[ 1 , {"b":[2]} ,"x"]"#, |(s, e)| elements.push((s, e)))
            .expect("an array");
        assert_eq!(elements, [(2, 3), (6, 15), (17, 20)]);
        assert!(object_members(b"[1]", |_, _| {}).is_err());
        assert!(object_members(br#"{"a":1"#, |_, _| {}).is_err());
        assert!(array_elements(b"[1,]", |_| {}).is_err());
        assert!(array_elements(b"[]", |_| panic!("no element")).is_ok());
    }
}
