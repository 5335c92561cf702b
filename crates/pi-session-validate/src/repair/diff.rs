//! The repaired file's unified diff, made from what the repairs know of each line (the input
//! line it came from, and whether it is still that line's bytes), not by diffing two texts:
//! a repair of a file of gigabytes that mends one line reads the input again only around
//! that line, and holds neither text whole.
//!
//! An output line is *the same* as the input line it came from when it is that line's bytes
//! (borrowed from the same place, or equal); the lines kept are the longest run of such lines
//! in input order (a line moved earlier, as a header put first, is one deletion and one
//! insertion, not a rewrite of everything between). Hunks are grouped with one line of
//! context and rendered as GNU `diff -u` renders them (with `similar`'s grouping and hunk
//! headers). It changes no more lines than a text diff of the two files would, but of two
//! equal lines it names the one repair took out (a text diff may name the other).

use super::lines::Line;
use similar::{DiffOp, group_diff_ops, udiff::UnifiedHunkHeader};
use std::ops::Range;

/// The input's lines, as the diff reads them.
pub(super) struct InputLines<'a> {
    pub(super) bytes: &'a [u8],
    /// Each line's place, without its newline.
    pub(super) spans: Vec<Range<usize>>,
    /// Whether the last line ends in a newline.
    pub(super) final_newline: bool,
}

impl InputLines<'_> {
    /// Whether `line` is the bytes of input line `origin` with its newline (an output line
    /// always has one).
    fn same(&self, line: &Line<'_>) -> bool {
        let Some(span) = line.origin.checked_sub(1).and_then(|k| self.spans.get(k)) else {
            return false;
        };
        if line.origin == self.spans.len() && !self.final_newline {
            return false;
        }
        let text: &[u8] = &line.text;
        let at = (text.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        text.len() == span.len() && (at == span.start || text == &self.bytes[span.clone()])
    }
}

/// The changes from the input to `lines`.
pub(super) fn ops(input: &InputLines<'_>, lines: &[Line<'_>]) -> Vec<DiffOp> {
    // (output index, input index) of every line that is the same as its input line.
    let same: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| input.same(line))
        .map(|(i, line)| (i, line.origin - 1))
        .collect();
    let kept = longest_increasing(&same);
    let mut ops = Vec::new();
    let (mut old, mut new) = (0, 0);
    for (i, k) in kept {
        gap(&mut ops, input, lines, old..k, new..i);
        push(
            &mut ops,
            DiffOp::Equal {
                old_index: k,
                new_index: i,
                len: 1,
            },
        );
        (old, new) = (k + 1, i + 1);
    }
    gap(
        &mut ops,
        input,
        lines,
        old..input.spans.len(),
        new..lines.len(),
    );
    ops
}

/// The changes between two kept lines: input lines `old` and output lines `new`, diffed as
/// texts when both are short (a line a repair took out may equal one it made), else all
/// deleted and inserted.
fn gap(
    ops: &mut Vec<DiffOp>,
    input: &InputLines<'_>,
    lines: &[Line<'_>],
    old: Range<usize>,
    new: Range<usize>,
) {
    const SHORT: usize = 1000;
    if old.is_empty() || new.is_empty() || old.len() > SHORT || new.len() > SHORT {
        push_changes(ops, old, new);
        return;
    }
    // A line is its bytes and whether it ends in a newline.
    let last = input.spans.len() - 1;
    let old_lines: Vec<(&[u8], bool)> = old
        .clone()
        .map(|k| {
            let newline = k != last || input.final_newline;
            (&input.bytes[input.spans[k].clone()], newline)
        })
        .collect();
    let new_lines: Vec<(&[u8], bool)> = lines[new.clone()]
        .iter()
        .map(|l| (&*l.text, true))
        .collect();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old_lines, &new_lines) {
        let (o, n) = (op.old_range(), op.new_range());
        let (o, n) = (
            old.start + o.start..old.start + o.end,
            new.start + n.start..new.start + n.end,
        );
        match op {
            DiffOp::Equal { len, .. } => push(
                ops,
                DiffOp::Equal {
                    old_index: o.start,
                    new_index: n.start,
                    len,
                },
            ),
            _ => push_changes(ops, o, n),
        }
    }
}

/// Input lines `old` deleted and output lines `new` inserted.
fn push_changes(ops: &mut Vec<DiffOp>, old: Range<usize>, new: Range<usize>) {
    if !old.is_empty() {
        push(
            ops,
            DiffOp::Delete {
                old_index: old.start,
                old_len: old.len(),
                new_index: new.start,
            },
        );
    }
    if !new.is_empty() {
        push(
            ops,
            DiffOp::Insert {
                old_index: old.end,
                new_index: new.start,
                new_len: new.len(),
            },
        );
    }
}

/// Adds `op`, one with the op before when both keep lines (hunks are cut at long runs of
/// kept lines, so a run must be one op).
fn push(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) = (ops.last_mut(), op)
    {
        *len += more;
        return;
    }
    ops.push(op);
}

/// The longest subsequence of `pairs` (in order) whose second members increase.
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // `ends[n]`: the pair ending the best subsequence of length n + 1 found so far, by index.
    let mut ends: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = Vec::with_capacity(pairs.len());
    for (at, &(_, k)) in pairs.iter().enumerate() {
        let n = ends.partition_point(|&e| pairs[e].1 < k);
        before.push(n.checked_sub(1).map(|n| ends[n]));
        if n == ends.len() {
            ends.push(at);
        } else {
            ends[n] = at;
        }
    }
    let mut kept = Vec::with_capacity(ends.len());
    let mut at = ends.last().copied();
    while let Some(i) = at {
        kept.push(pairs[i]);
        at = before[i];
    }
    kept.reverse();
    kept
}

/// The unified diff (one line of context) of `ops`, headed `--- name` / `+++ name (repaired)`;
/// empty when nothing changed.
pub(super) fn unified(
    name: &str,
    ops: Vec<DiffOp>,
    input: &InputLines<'_>,
    lines: &[Line<'_>],
) -> String {
    let mut out = String::new();
    let groups = group_diff_ops(ops, 1);
    if groups
        .iter()
        .flatten()
        .all(|op| matches!(op, DiffOp::Equal { .. }))
    {
        return out;
    }
    out.push_str(&format!("--- {name}\n+++ {name} (repaired)\n"));
    let old = |out: &mut String, tag: char, k: usize| {
        out.push(tag);
        out.push_str(&String::from_utf8_lossy(
            &input.bytes[input.spans[k].clone()],
        ));
        out.push('\n');
        if k + 1 == input.spans.len() && !input.final_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    };
    for group in groups {
        out.push_str(&format!("{}\n", UnifiedHunkHeader::new(&group)));
        for op in group {
            let (deleted, inserted) = match op {
                DiffOp::Equal { old_index, len, .. } => {
                    (old_index..old_index + len).for_each(|k| old(&mut out, ' ', k));
                    continue;
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => (old_index..old_index + old_len, 0..0),
                DiffOp::Insert {
                    new_index, new_len, ..
                } => (0..0, new_index..new_index + new_len),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => (
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                ),
            };
            deleted.for_each(|k| old(&mut out, '-', k));
            for line in &lines[inserted] {
                out.push('+');
                out.push_str(&String::from_utf8_lossy(&line.text));
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_increasing_run_is_kept() {
        let pairs = [(0, 5), (1, 0), (2, 1), (3, 6), (4, 2), (5, 3)];
        assert_eq!(longest_increasing(&pairs), [(1, 0), (2, 1), (4, 2), (5, 3)]);
        assert!(longest_increasing(&[]).is_empty());
    }
}
