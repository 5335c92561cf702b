//! A long line's `message.content` checked a piece at a time. A `serde_json::Value` takes
//! about 770 bytes for a content block as small as `{"type":"text","text":"a"}` (27 bytes:
//! an object is a B-tree node of 11 slots, every key and string its own allocation), so a
//! 22 MB line of 800,000 such blocks took 662 MB to check. Past [`MIN_LINE`] bytes, the line
//! is checked as several lines that each hold a run of the blocks (about [`PIECE`] bytes of
//! them) and everything else the line holds; what they say is put back together: the blocks'
//! pointers renumbered, the rest said once.

use pi_session_format::json::{array_elements, object_members};
use std::ops::Range;

/// Lines shorter than this are checked whole.
pub(super) const MIN_LINE: usize = 1 << 20;

/// The bytes of blocks in one piece, at least: a piece also holds the rest of the line, so
/// a piece takes at least as many bytes of blocks as the rest has (the work stays within
/// twice the line's).
pub(super) const PIECE: usize = 256 << 10;

/// A line whose `message.content` is an array, cut into pieces.
pub(super) struct Pieces<'t> {
    text: &'t str,
    /// The content array's elements (byte ranges in `text`), in order.
    elements: Vec<Range<usize>>,
    /// The range of the content array in `text`, brackets included.
    array: Range<usize>,
    /// Each piece as a range of element indices.
    pieces: Vec<Range<usize>>,
}

impl<'t> Pieces<'t> {
    /// The pieces of `text` when it is at least [`MIN_LINE`] long, one valid JSON object
    /// whose last `message` is an object whose last `content` is an array of more than one
    /// piece's worth of elements; `None` otherwise (the line is checked whole).
    pub(super) fn of(text: &'t str) -> Option<Pieces<'t>> {
        if text.len() < MIN_LINE {
            return None;
        }
        let bytes = text.as_bytes();
        let message = last_member(bytes, 0..bytes.len(), b"message")?;
        let content = last_member(bytes, message, b"content")?;
        let slice = &bytes[content.clone()];
        if slice.first() != Some(&b'[') {
            return None;
        }
        let mut elements = Vec::new();
        array_elements(slice, |(start, end)| {
            elements.push(content.start + start..content.start + end);
        })
        .ok()?;
        let rest = text.len() - content.len();
        let per_piece = PIECE.max(rest);
        let mut pieces = Vec::new();
        let mut first = 0;
        for (i, element) in elements.iter().enumerate() {
            if element.end - elements[first].start >= per_piece {
                pieces.push(first..i + 1);
                first = i + 1;
            }
        }
        if first < elements.len() {
            pieces.push(first..elements.len());
        }
        (pieces.len() > 1).then_some(Pieces {
            text,
            elements,
            array: content,
            pieces,
        })
    }

    /// How many pieces.
    pub(super) fn len(&self) -> usize {
        self.pieces.len()
    }

    /// The index of piece `i`'s first element in the whole array.
    pub(super) fn first_element(&self, i: usize) -> usize {
        self.pieces[i].start
    }

    /// Piece `i` as a line: the line with only the piece's elements in its content array.
    pub(super) fn line(&self, i: usize) -> String {
        let piece = &self.pieces[i];
        let elements = self.elements[piece.start].start..self.elements[piece.end - 1].end;
        let mut line =
            String::with_capacity(self.text.len() - self.array.len() + elements.len() + 2);
        line.push_str(&self.text[..self.array.start]);
        line.push('[');
        line.push_str(&self.text[elements]);
        line.push(']');
        line.push_str(&self.text[self.array.end..]);
        line
    }
}

/// The byte range of the last member `key` of the object at `range` of `bytes`.
fn last_member(bytes: &[u8], range: Range<usize>, key: &[u8]) -> Option<Range<usize>> {
    let base = range.start;
    let mut found = None;
    object_members(&bytes[range], |k, (start, end)| {
        if k == key {
            found = Some(base + start..base + end);
        }
    })
    .ok()?;
    found
}

/// A violation's `pointer` and `message` with the index of a content element shifted by
/// `by`, when it points into the content array (`/message/content/5/text` →
/// `/message/content/{5 + by}/text`, and so where the message quotes it); `false` when it
/// points elsewhere (nothing changed).
pub(super) fn shift(pointer: &mut String, message: &mut String, by: usize) -> bool {
    const CONTENT: &str = "/message/content/";
    let Some(rest) = pointer.strip_prefix(CONTENT) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &rest[digits..];
    let Ok(index) = rest[..digits].parse::<usize>() else {
        return false;
    };
    if !(tail.is_empty() || tail.starts_with('/')) {
        return false;
    }
    let new = index + by;
    *pointer = format!("{CONTENT}{new}{tail}");
    for end in ['`', '/'] {
        *message = message.replace(
            &format!("`{CONTENT}{index}{end}"),
            &format!("`{CONTENT}{new}{end}"),
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(blocks: usize, block: &str) -> String {
        let content: Vec<&str> = vec![block; blocks];
        format!(
            r#"{{"type":"message","id":"a","message":{{"role":"user","content":[{}],"timestamp":1}},"parentId":null}}"#,
            content.join(",")
        )
    }

    #[test]
    fn a_long_content_array_is_cut_into_pieces_that_hold_the_rest_of_the_line() {
        let block = r#"{"type":"text","text":"a"}"#;
        let text = line(100_000, block);
        let pieces = Pieces::of(&text).expect("long enough");
        assert!(pieces.len() > 1);
        let mut total = 0;
        for i in 0..pieces.len() {
            let piece = pieces.line(i);
            let value: serde_json::Value = serde_json::from_str(&piece).expect("a line");
            assert_eq!(value["parentId"], serde_json::Value::Null);
            assert_eq!(pieces.first_element(i), total);
            total += value["message"]["content"].as_array().unwrap().len();
        }
        assert_eq!(total, 100_000);
        // Short lines, and lines without a content array, are checked whole.
        assert!(Pieces::of(&line(10, block)).is_none());
        let text = text.replace(r#""content":["#, r#""content":"x","other":["#);
        assert!(Pieces::of(&text).is_none());
    }

    #[test]
    fn pointers_into_the_content_are_shifted() {
        let shifted = |pointer: &str, message: &str, by| {
            let (mut pointer, mut message) = (pointer.to_owned(), message.to_owned());
            let changed = shift(&mut pointer, &mut message, by);
            (changed, pointer, message)
        };
        assert_eq!(
            shifted(
                "/message/content/5/text",
                "`/message/content/5` (a `text` block) has no `text`",
                10
            ),
            (
                true,
                "/message/content/15/text".to_owned(),
                "`/message/content/15` (a `text` block) has no `text`".to_owned()
            )
        );
        assert_eq!(
            shifted("/message/content/0", "`/message/content/0/x`", 3),
            (
                true,
                "/message/content/3".to_owned(),
                "`/message/content/3/x`".to_owned()
            )
        );
        assert!(!shifted("/message/role", "", 3).0);
        assert!(!shifted("/message/content", "", 3).0);
        assert!(!shifted("/message/content/1x", "", 3).0);
    }
}
