//! Bytes to lines, exactly as pi splits a session file (rules P1–P5).
//!
//! pi does `readFileSync(path, "utf8").trim().split("\n")`, skips lines whose `trim()` is
//! empty and hands each remaining line, untrimmed, to `JSON.parse`. So:
//!
//! - invalid UTF-8 becomes U+FFFD (per maximal subpart, like [`String::from_utf8_lossy`]);
//! - ECMAScript whitespace (which includes a BOM, NBSP, U+2028…) is trimmed from the start
//!   and the end of the *whole text*, not of each line;
//! - only LF separates lines; a CR stays at the end of its line (JSON allows it there);
//! - lines made only of ECMAScript whitespace are skipped.
//!
//! Lines borrow from the input; only lines with invalid UTF-8 are copied.

use std::borrow::Cow;
use std::ops::Range;

/// One non-blank line of a session file.
#[derive(Debug, Clone)]
pub struct Line<'a> {
    /// 1-based physical line number in the file.
    pub number: usize,
    /// Byte offset in the file of the first byte of `text`.
    pub offset: usize,
    /// The line as pi's `JSON.parse` sees it (decoded, without the LF).
    pub text: Cow<'a, str>,
    /// Length of the raw line in bytes (without the LF).
    pub len: usize,
    /// Whether the raw bytes were not valid UTF-8 (replacement characters were inserted).
    pub lossy: bool,
}

/// What is dropped from the edges of the whole text before it is split into lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edges {
    /// ECMAScript whitespace, from both ends (pi 0.73.1's `trim()` of the whole text).
    Trimmed,
    /// Nothing: pi 0.87.1 and later read the file in chunks and no longer trim the whole
    /// text (so a leading BOM makes the first line unparseable).
    Kept,
    /// A leading BOM only: oh-my-pi reads the file with Bun's `text()`, which decodes it as
    /// `TextDecoder` does.
    Bom,
}

impl Edges {
    /// The edges `pi`'s rules drop, or omp's for [`Dialect::Omp`](crate::Dialect::Omp).
    pub fn of(pi: crate::PiVersion, dialect: crate::Dialect) -> Edges {
        match dialect {
            crate::Dialect::Omp => Edges::Bom,
            _ if pi.reads_like_0_87() => Edges::Kept,
            _ => Edges::Trimmed,
        }
    }
}

/// Splits a whole session file into the lines pi parses.
pub fn lines(bytes: &[u8]) -> Lines<'_> {
    lines_with(bytes, Edges::Trimmed)
}

/// Like [`lines`], with `edges` dropped from the whole text ([`Edges::of`]).
pub fn lines_with(bytes: &[u8], edges: Edges) -> Lines<'_> {
    let (start, end) = match edges {
        Edges::Trimmed => {
            let start = trim_start(bytes);
            (start, start + trim_end(&bytes[start..]))
        }
        Edges::Kept => (0, bytes.len()),
        Edges::Bom if bytes.starts_with(b"\xEF\xBB\xBF") => (3, bytes.len()),
        Edges::Bom => (0, bytes.len()),
    };
    let number = 1 + bytes[..start].iter().filter(|&&b| b == b'\n').count();
    Lines {
        bytes,
        pos: start,
        end,
        number,
        done: start >= end,
    }
}

/// [`lines_with`], cut into about `pieces` consecutive iterators at line boundaries, so
/// that the lines can be processed in parallel; concatenated, they yield exactly the lines
/// of [`lines_with`].
pub fn split_lines(bytes: &[u8], edges: Edges, pieces: usize) -> Vec<Lines<'_>> {
    split_lines_releasing(bytes, edges, pieces, &|_| {})
}

/// [`split_lines`], whose pieces' lines are counted (to number them) on every core, each
/// piece's bytes then passed to `release`: a caller that maps the file can let their pages go
/// (they are read again as the lines are iterated), so that splitting a file of gigabytes does
/// not bring all of it into memory at once.
pub fn split_lines_releasing<'b>(
    bytes: &'b [u8],
    edges: Edges,
    pieces: usize,
    release: &(dyn Fn(Range<usize>) + Sync),
) -> Vec<Lines<'b>> {
    use rayon::prelude::*;
    let whole = lines_with(bytes, edges);
    let step = ((whole.end - whole.pos) / pieces.max(1)).max(1 << 16);
    let (first, mut out) = split_relative(bytes, edges, step);
    let counts: Vec<usize> = out
        .par_iter()
        .map(|lines| {
            let count = memchr::memchr_iter(b'\n', &bytes[lines.pos..lines.end]).count();
            release(lines.pos..lines.end);
            count
        })
        .collect();
    let mut number = first;
    for (lines, count) in out.iter_mut().zip(counts) {
        lines.number = number;
        number += count;
    }
    out
}

/// [`lines_with`] cut at line boundaries into pieces of about `step` bytes (at least one
/// line each), numbering the lines of every piece from 0 so that nothing has to count the
/// lines of the earlier pieces first. Returns the number of the first line of the file (to
/// add to the first piece's numbers) and the pieces; after a piece is exhausted,
/// [`Lines::newlines`] tells how many lines it spanned, to add to the next piece's numbers.
pub(crate) fn split_relative(bytes: &[u8], edges: Edges, step: usize) -> (usize, Vec<Lines<'_>>) {
    let whole = lines_with(bytes, edges);
    let (start, end, first) = (whole.pos, whole.end, whole.number);
    if whole.done {
        return (first, vec![Lines { number: 0, ..whole }]);
    }
    let pieces = cut_after_newlines(bytes, start..end, step)
        .into_iter()
        .map(|piece| Lines {
            bytes,
            pos: piece.start,
            end: piece.end,
            number: 0,
            done: false,
        })
        .collect();
    (first, pieces)
}

/// `bytes[range]` cut into pieces of whole lines: each piece but the last ends after the
/// first newline at least `step` bytes past its start, the last at `range.end`. No character
/// (and no invalid sequence) spans two pieces. None for an empty range.
pub fn cut_after_newlines(bytes: &[u8], range: Range<usize>, step: usize) -> Vec<Range<usize>> {
    let step = step.max(1);
    let mut pieces = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let end = match bytes
            .get(at.saturating_add(step)..range.end)
            .and_then(|rest| memchr::memchr(b'\n', rest))
        {
            Some(i) => at + step + i + 1,
            None => range.end,
        };
        pieces.push(at..end);
        at = end;
    }
    pieces
}

/// Iterator over the non-blank lines of a file; see [`lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    number: usize,
    done: bool,
}

impl Lines<'_> {
    /// The byte range of the file still to be read (all of the piece before iterating).
    pub fn range(&self) -> Range<usize> {
        self.pos..self.end
    }

    /// The number the next line would have: after the last line, the number of the first
    /// line plus the number of LFs passed.
    pub(crate) fn newlines(&self) -> usize {
        self.number
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        while !self.done {
            let rest = &self.bytes[self.pos..self.end];
            let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let raw = &rest[..len];
            let (offset, number) = (self.pos, self.number);
            if self.pos + len >= self.end {
                self.done = true;
            } else {
                self.pos += len + 1;
                self.number += 1;
            }
            let Some((text, lossy)) = decode(raw) else {
                continue;
            };
            return Some(Line {
                number,
                offset,
                text,
                len,
                lossy,
            });
        }
        None
    }
}

/// The text of a raw line as pi's `JSON.parse` sees it and whether it had invalid UTF-8;
/// `None` for a line made only of ECMAScript whitespace (pi skips those).
pub(crate) fn decode(raw: &[u8]) -> Option<(Cow<'_, str>, bool)> {
    if trim_start(raw) == raw.len() {
        return None;
    }
    // SIMD validation (the common case: valid); the standard library decodes the rest.
    Some(match simdutf8::basic::from_utf8(raw) {
        Ok(s) => (Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(raw), true),
    })
}

/// The part of `bytes` whose lines pi parses (without `edges`) and the number of its first
/// line.
pub(crate) fn region(bytes: &[u8], edges: Edges) -> (Range<usize>, usize) {
    let whole = lines_with(bytes, edges);
    (whole.pos..whole.end.max(whole.pos), whole.number)
}

/// Length of the ECMAScript whitespace character encoded at the start of `bytes`, if any.
fn whitespace_len(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [0x09..=0x0D | 0x20, ..] => Some(1),
        [0xC2, 0xA0, ..] => Some(2),       // NBSP
        [0xE1, 0x9A, 0x80, ..] => Some(3), // OGHAM SPACE MARK
        [0xE2, 0x80, 0x80..=0x8A | 0xA8 | 0xA9 | 0xAF, ..] => Some(3), // U+2000–200A, LS, PS, NNBSP
        [0xE2, 0x81, 0x9F, ..] => Some(3), // MEDIUM MATHEMATICAL SPACE
        [0xE3, 0x80, 0x80, ..] => Some(3), // IDEOGRAPHIC SPACE
        [0xEF, 0xBB, 0xBF, ..] => Some(3), // BOM (ZWNBSP)
        _ => None,
    }
}

/// Number of leading bytes of `bytes` that are ECMAScript whitespace.
pub fn trim_start(bytes: &[u8]) -> usize {
    let mut i = 0;
    while let Some(n) = whitespace_len(&bytes[i..]) {
        i += n;
    }
    i
}

/// Length of `bytes` without its trailing ECMAScript whitespace.
pub fn trim_end(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    'outer: while end > 0 {
        for n in 1..=3.min(end) {
            if whitespace_len(&bytes[end - n..end]) == Some(n) {
                end -= n;
                continue 'outer;
            }
        }
        break;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(bytes: &[u8]) -> Vec<(usize, String)> {
        lines(bytes)
            .map(|l| (l.number, l.text.into_owned()))
            .collect()
    }

    #[test]
    fn p1_invalid_utf8_becomes_replacement_characters() {
        let got = texts(b"\"\xFF\xC3(\xE2\x82\"");
        assert_eq!(got, [(1, "\"\u{FFFD}\u{FFFD}(\u{FFFD}\"".to_string())]);
    }

    #[test]
    fn p2_whole_text_trim_removes_bom_and_edges_only() {
        let got =
            texts("\u{FEFF}\n \u{A0}{\"a\":1}\u{A0}\n\u{A0}{\"b\":2}\u{3000}\r\n\n".as_bytes());
        assert_eq!(
            got,
            [
                (2, "{\"a\":1}\u{A0}".to_string()),
                (3, "\u{A0}{\"b\":2}".to_string())
            ]
        );
    }

    #[test]
    fn each_reader_drops_its_own_edges() {
        let text = "\u{FEFF}{\"a\":1}\n\u{A0}\n";
        let first = |edges| {
            lines_with(text.as_bytes(), edges)
                .next()
                .map(|l| l.text.into_owned())
        };
        assert_eq!(first(Edges::Trimmed).as_deref(), Some("{\"a\":1}"));
        assert_eq!(first(Edges::Kept).as_deref(), Some("\u{FEFF}{\"a\":1}"));
        assert_eq!(first(Edges::Bom).as_deref(), Some("{\"a\":1}"));
        // Only one BOM, and only at the start.
        let two = "\u{FEFF}\u{FEFF}{}".as_bytes();
        let line = lines_with(two, Edges::Bom).next().unwrap();
        assert_eq!((line.offset, &*line.text), (3, "\u{FEFF}{}"));
        assert_eq!(
            Edges::of(crate::PiVersion::V0_73, crate::Dialect::Omp),
            Edges::Bom
        );
        assert_eq!(
            Edges::of(crate::PiVersion::V0_87, crate::Dialect::Pi),
            Edges::Kept
        );
    }

    #[test]
    fn p3_only_lf_splits() {
        let got = texts(b"{}\r{}\r\n[1]\xE2\x80\xA8[2]\n3");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].1, "{}\r{}\r");
        assert_eq!(got[1].1, "[1]\u{2028}[2]");
        assert_eq!(got[2].1, "3");
    }

    #[test]
    fn p4_whitespace_only_lines_are_skipped() {
        let got = texts("1\n\u{A0}\n \t\r\n\u{2028}\n2".as_bytes());
        assert_eq!(got, [(1, "1".to_string()), (5, "2".to_string())]);
    }

    #[test]
    fn empty_and_blank_files_have_no_lines() {
        assert!(texts(b"").is_empty());
        assert!(texts(" \n\u{FEFF}\r\n".as_bytes()).is_empty());
    }

    #[test]
    fn split_lines_yields_the_same_lines() {
        let mut text = String::new();
        for i in 0..50_000 {
            text.push_str(&format!("{{\"n\":{i}}}\n"));
            if i % 7 == 0 {
                text.push_str(" \n");
            }
        }
        let whole: Vec<_> = lines(text.as_bytes())
            .map(|l| (l.number, l.offset, l.text.into_owned()))
            .collect();
        let pieces = split_lines(text.as_bytes(), Edges::Trimmed, 8);
        assert!(pieces.len() > 1);
        let split: Vec<_> = pieces
            .into_iter()
            .flatten()
            .map(|l| (l.number, l.offset, l.text.into_owned()))
            .collect();
        assert_eq!(whole, split);
    }

    #[test]
    fn pieces_end_after_a_newline_past_the_step() {
        let bytes = b"ab\ncdef\ng\nhi";
        assert_eq!(
            cut_after_newlines(bytes, 0..bytes.len(), 2),
            [0..3, 3..8, 8..12]
        );
        assert_eq!(cut_after_newlines(bytes, 3..11, 1), [3..8, 8..10, 10..11]);
        assert_eq!(
            cut_after_newlines(bytes, 0..bytes.len(), 100),
            std::slice::from_ref(&(0..12))
        );
        assert!(cut_after_newlines(bytes, 4..4, 2).is_empty());
    }

    #[test]
    fn offsets_point_at_line_starts() {
        let bytes = b"\n {\"a\":1}\n[2]";
        let got: Vec<_> = lines(bytes).map(|l| l.offset).collect();
        assert_eq!(got, [2, 10]);
    }
}
