//! The lines of a piece of the file, read in order through one small buffer.
//!
//! The region of the file pi reads (after the whole-text trim for pi 0.73.1) is cut into
//! pieces of fixed size; a line belongs to the piece it starts in (a line starts at the
//! start of the region or after a separator). A piece is read with positioned reads of
//! [`CHUNK`] bytes (or copied from the bytes when there is no reader), so memory holds a
//! chunk and the longest line, never the file.

use crate::session::ReadAt;
use std::ops::Range;

/// The size of one read.
const CHUNK: usize = 128 << 10;

/// Where the bytes come from.
#[derive(Clone)]
pub(crate) struct Source<'a> {
    /// The whole input (read only when `read_at` fails or is absent).
    pub bytes: &'a [u8],
    /// Positioned reads of the input, when it is a file.
    pub read_at: Option<&'a ReadAt<'a>>,
    /// The part of the input whose lines pi parses.
    pub region: Range<usize>,
    /// Whether a CR ends a line too (pi 0.87.1's `readline`, where LF, CRLF and a lone CR
    /// end a line: cutting at every CR and every LF gives the same lines and empty ones).
    pub cr_ends_lines: bool,
}

impl Source<'_> {
    /// Fills `dest` with the input's bytes from `at`.
    pub(crate) fn read(&self, dest: &mut [u8], at: usize) {
        if !self
            .read_at
            .is_some_and(|read_at| read_at.read_at(dest, at))
        {
            let end = (at + dest.len()).min(self.bytes.len());
            let from = self.bytes.get(at..end).unwrap_or_default();
            dest[..from.len()].copy_from_slice(from);
            dest[from.len()..].fill(b' ');
        }
    }

    fn separator(&self, bytes: &[u8]) -> Option<usize> {
        if self.cr_ends_lines {
            memchr::memchr2(b'\n', b'\r', bytes)
        } else {
            memchr::memchr(b'\n', bytes)
        }
    }

    /// Calls `f(offset, raw)` for each line that starts in `piece` (a range of the region),
    /// in order; `raw` is the line without its separator. `buf` is the reading buffer.
    pub(crate) fn lines(
        &self,
        piece: Range<usize>,
        buf: &mut Vec<u8>,
        f: &mut dyn FnMut(usize, &[u8]),
    ) {
        let region = &self.region;
        // Before the first line: the separator before it is searched from the byte before
        // the piece.
        let mut seeking = piece.start > region.start;
        let mut line_start = if seeking {
            piece.start - 1
        } else {
            piece.start
        };
        // `buf[..hi]` holds the input from `at` on; separators are searched from `search`.
        let (mut at, mut hi) = (line_start, 0);
        let mut search = line_start;
        loop {
            if !seeking && line_start >= piece.end {
                return;
            }
            if let Some(i) = self.separator(&buf[search - at..hi]) {
                let sep = search + i;
                if seeking {
                    seeking = false;
                } else {
                    f(line_start, &buf[line_start - at..sep - at]);
                }
                line_start = sep + 1;
                search = line_start;
                continue;
            }
            let end = at + hi;
            if end >= region.end {
                if !seeking && line_start < end {
                    f(line_start, &buf[line_start - at..hi]);
                }
                return;
            }
            if seeking && end >= piece.end {
                return; // no line starts in this piece
            }
            // Keep the line being read (nothing while seeking) and read the next chunk.
            let keep = if seeking { end } else { line_start };
            buf.copy_within(keep - at..hi, 0);
            hi -= keep - at;
            at = keep;
            search = end;
            // While seeking, no further than the piece's end.
            let limit = if seeking { piece.end } else { region.end };
            let n = CHUNK.min(limit - end);
            if buf.len() < hi + n {
                buf.resize(hi + n, 0);
            }
            self.read(&mut buf[hi..hi + n], end);
            hi += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_lines(bytes: &[u8], piece: usize, cr: bool) -> Vec<(usize, Vec<u8>)> {
        let source = Source {
            bytes,
            read_at: None,
            region: 0..bytes.len(),
            cr_ends_lines: cr,
        };
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let mut start = 0;
        while start < bytes.len() {
            let end = (start + piece).min(bytes.len());
            source.lines(start..end, &mut buf, &mut |at, raw| {
                out.push((at, raw.to_vec()))
            });
            start = end;
        }
        out
    }

    #[test]
    fn every_line_is_read_once_whatever_the_piece_size() {
        let text = b"ab\ncd\r\n\nefg\rh\n";
        for piece in 1..=text.len() + 1 {
            let lf: Vec<_> = all_lines(text, piece, false);
            assert_eq!(
                lf,
                [
                    (0, b"ab".to_vec()),
                    (3, b"cd\r".to_vec()),
                    (7, vec![]),
                    (8, b"efg\rh".to_vec())
                ],
                "{piece}"
            );
            let cr: Vec<_> = all_lines(text, piece, true);
            let texts: Vec<_> = cr.iter().map(|(_, l)| l.as_slice()).collect();
            assert_eq!(
                texts,
                [&b"ab"[..], b"cd", b"", b"", b"efg", b"h"],
                "{piece}"
            );
        }
    }
}
