//! The repaired file's unified diff, made from what the repairs know of each line (the input
//! line it came from, and whether it is still that line's bytes), not by diffing two texts
//! held whole: a repair of a file of gigabytes that mends one line reads again only the input
//! lines that could equal a line it changed, and lets them go behind it.
//!
//! An output line is *the same* as the input line it came from when it is that line's bytes
//! (borrowed from the same place, or equal). The lines the diff keeps are a longest common
//! subsequence of the two files' lines, so it changes no more lines than a text diff; and of
//! the longest, one that keeps the most lines where repair left them: of two equal lines it
//! names the one repair took out (a text diff may name the other). The pairs of equal lines
//! are found without reading the lines a repair left alone but for those that share their
//! length with another input line (the only ones that can equal a line other than the one
//! they are), by their XXH3-128 hashes (so that finding a line's equal does not read another
//! line, which would bring pages the walk let go back into memory; the pairs the diff keeps
//! are compared byte for byte). The longest run through them is Hunt and Szymanski's: an
//! increasing chain of pairs, here the heaviest, found with a Fenwick tree of prefix maxima.
//! A file with so many equal lines that their pairs pass [`PAIRS`] (thousands of lines alike)
//! is diffed as two texts instead (`similar`'s Myers, within [`TEXT_DIFF_TIME`]). Hunks are
//! grouped with one line of context and rendered as GNU `diff -u` renders them (with
//! `similar`'s grouping and hunk headers).

use super::lines::{Behind, Line};
use rustc_hash::{FxHashMap, FxHashSet};
use similar::{DiffOp, group_diff_ops, udiff::UnifiedHunkHeader};
use std::ops::Range;
use std::time::{Duration, Instant};
use twox_hash::XxHash3_128;

/// The most pairs of equal lines the diff chains (24 bytes each); past it, the two files are
/// diffed as texts.
const PAIRS: usize = 1 << 21;

/// How long the text diff of a file of many equal lines may look for the fewest changes
/// before it settles for more (a diff of many changes, still one that makes the output).
const TEXT_DIFF_TIME: Duration = Duration::from_secs(20);

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
        let Some(k) = line.origin.checked_sub(1) else {
            return false;
        };
        let Some(span) = self.spans.get(k) else {
            return false;
        };
        if !self.terminated(k) {
            return false;
        }
        let text: &[u8] = &line.text;
        let at = (text.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        text.len() == span.len() && (at == span.start || text == self.text(k))
    }

    /// Whether input line `k` (0-based) ends in a newline: only such a line can equal an
    /// output line, which always does.
    fn terminated(&self, k: usize) -> bool {
        k + 1 < self.spans.len() || self.final_newline
    }

    /// Input line `k`'s bytes, without its newline.
    fn text(&self, k: usize) -> &[u8] {
        &self.bytes[self.spans[k].clone()]
    }
}

/// The changes from the input to `lines`.
pub(super) fn ops(input: &InputLines<'_>, lines: &[Line<'_>], behind: Behind<'_>) -> Vec<DiffOp> {
    let Some(pairs) = equal_pairs(input, lines, behind) else {
        return text_diff(input, lines);
    };
    let mut ops = Vec::new();
    let (mut old, mut new) = (0, 0);
    for Pair {
        output, input: k, ..
    } in heaviest_chain(&pairs, input.spans.len())
    {
        push_changes(&mut ops, old..k, new..output);
        push(
            &mut ops,
            DiffOp::Equal {
                old_index: k,
                new_index: output,
                len: 1,
            },
        );
        (old, new) = (k + 1, output + 1);
    }
    push_changes(&mut ops, old..input.spans.len(), new..lines.len());
    ops
}

/// An output line and an input line with the same bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pair {
    /// The output line (0-based).
    output: usize,
    /// The input line (0-based).
    input: usize,
    /// Whether this is the input line the output line came from, and it is still its bytes.
    kept: bool,
}

/// Every pair of an output line and an input line with equal bytes (or hashes alike), by
/// output line and, for one output line, from its last input line to its first; `None` past
/// [`PAIRS`].
///
/// Only lines of a length worth a look are read: those of a line that is not the same as the
/// line it came from (an output line repair made or edited, an input line no output line is
/// the same as), and those that two input lines share. Any other output line is the same as
/// its input line and equals no other input line (that one would share its length); any
/// other input line equals only the output line that is the same as it.
fn equal_pairs(
    input: &InputLines<'_>,
    lines: &[Line<'_>],
    mut behind: Behind<'_>,
) -> Option<Vec<Pair>> {
    let same: Vec<bool> = lines.iter().map(|line| input.same(line)).collect();
    let lengths = lengths_worth_reading(input, lines, &same);
    let groups = EqualLines::of(input, &lengths, &mut behind)?;
    let mut pairs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let origin = line.origin.wrapping_sub(1);
        let group = if same[i] {
            match groups.of_input(origin) {
                None => {
                    pairs.push(Pair {
                        output: i,
                        input: origin,
                        kept: true,
                    });
                    continue;
                }
                Some(g) => g,
            }
        } else {
            let found = groups.find(&line.text);
            behind.passed(&line.text);
            match found {
                Some(g) => g,
                None => continue,
            }
        };
        pairs.extend(groups.members(group).iter().rev().map(|&k| Pair {
            output: i,
            input: k,
            kept: same[i] && k == origin,
        }));
        if pairs.len() > PAIRS {
            return None;
        }
    }
    Some(pairs)
}

/// The lengths of the lines worth reading ([`equal_pairs`]): those of an output line that is
/// not the same as its input line (`same`, by output line), of an input line no output line is
/// the same as, and those two input lines share.
fn lengths_worth_reading(
    input: &InputLines<'_>,
    lines: &[Line<'_>],
    same: &[bool],
) -> FxHashSet<usize> {
    let mut origin_of_same = vec![false; input.spans.len()];
    for (line, _) in lines.iter().zip(same).filter(|(_, same)| **same) {
        origin_of_same[line.origin - 1] = true;
    }
    let mut lengths: FxHashSet<usize> = lines
        .iter()
        .zip(same)
        .filter(|(_, same)| !**same)
        .map(|(line, _)| line.text.len())
        .collect();
    let mut seen = FxHashSet::default();
    for k in (0..input.spans.len()).filter(|&k| input.terminated(k)) {
        let len = input.spans[k].len();
        if !seen.insert(len) || !origin_of_same[k] {
            lengths.insert(len);
        }
    }
    lengths
}

/// The input lines of some lengths, grouped by their bytes' hash (XXH3-128): each line's
/// group, and each group's lines in order, kept flat (`members[starts[g]..starts[g + 1]]`).
struct EqualLines {
    by_hash: FxHashMap<u128, u32>,
    /// Each input line's group ([`EqualLines::NONE`]: not of those lengths).
    group_of: Vec<u32>,
    starts: Vec<usize>,
    members: Vec<usize>,
}

impl EqualLines {
    const NONE: u32 = u32::MAX;

    /// The groups of the terminated input lines whose length is one of `lengths`, each read
    /// once, in order, and let go behind (`behind`); `None` past `u32::MAX` groups.
    fn of(
        input: &InputLines<'_>,
        lengths: &FxHashSet<usize>,
        behind: &mut Behind<'_>,
    ) -> Option<EqualLines> {
        let n = input.spans.len();
        let mut by_hash: FxHashMap<u128, u32> = FxHashMap::default();
        let mut group_of = vec![Self::NONE; n];
        for k in (0..n).filter(|&k| input.terminated(k) && lengths.contains(&input.spans[k].len()))
        {
            let text = input.text(k);
            let next = u32::try_from(by_hash.len())
                .ok()
                .filter(|&g| g != Self::NONE)?;
            group_of[k] = *by_hash.entry(XxHash3_128::oneshot(text)).or_insert(next);
            behind.passed(text);
        }
        let mut starts = vec![0; by_hash.len() + 1];
        for &g in group_of.iter().filter(|&&g| g != Self::NONE) {
            starts[g as usize + 1] += 1;
        }
        for g in 1..starts.len() {
            starts[g] += starts[g - 1];
        }
        let mut members = vec![0; starts[by_hash.len()]];
        let mut next = starts.clone();
        for (k, &g) in group_of
            .iter()
            .enumerate()
            .filter(|(_, g)| **g != Self::NONE)
        {
            members[next[g as usize]] = k;
            next[g as usize] += 1;
        }
        Some(EqualLines {
            by_hash,
            group_of,
            starts,
            members,
        })
    }

    /// The group of input line `k` (0-based), if it was grouped.
    fn of_input(&self, k: usize) -> Option<usize> {
        let g = *self.group_of.get(k)?;
        (g != Self::NONE).then_some(g as usize)
    }

    /// The group of the input lines whose bytes hash as `text`'s do.
    fn find(&self, text: &[u8]) -> Option<usize> {
        let g = *self.by_hash.get(&XxHash3_128::oneshot(text))?;
        Some(g as usize)
    }

    /// The input lines of group `g`, in order.
    fn members(&self, g: usize) -> &[usize] {
        &self.members[self.starts[g]..self.starts[g + 1]]
    }
}

/// Of `pairs` (by output line, and for one output line from the last input line to the
/// first), a longest chain whose input lines increase, and of those one with the most pairs
/// repair kept: Hunt and Szymanski's longest common subsequence, weighted. A Fenwick tree over
/// the input lines holds, for each prefix, the heaviest chain ending in it.
fn heaviest_chain(pairs: &[Pair], inputs: usize) -> Vec<Pair> {
    /// A chain's weight (its length, then how many of its pairs repair kept) and its last
    /// pair (its index + 1; 0 for the empty chain).
    type Best = (u64, usize);
    let mut tree: Vec<Best> = vec![(0, 0); inputs + 1];
    // Each pair's predecessor in its heaviest chain (its index + 1; 0 for none).
    let mut before = Vec::with_capacity(pairs.len());
    let mut heaviest: Best = (0, 0);
    for (at, pair) in pairs.iter().enumerate() {
        let mut best: Best = (0, 0);
        let mut j = pair.input;
        while j > 0 {
            best = best.max(tree[j]);
            j &= j - 1;
        }
        before.push(best.1);
        let mine = (best.0 + (1 << 32) + u64::from(pair.kept), at + 1);
        heaviest = heaviest.max(mine);
        let mut j = pair.input + 1;
        while j <= inputs {
            if tree[j].0 < mine.0 {
                tree[j] = mine;
            }
            j += j & j.wrapping_neg();
        }
    }
    let mut chain = Vec::with_capacity((heaviest.0 >> 32) as usize);
    let mut at = heaviest.1;
    while at > 0 {
        chain.push(pairs[at - 1]);
        at = before[at - 1];
    }
    chain.reverse();
    chain
}

/// The two files diffed as texts (Myers, within [`TEXT_DIFF_TIME`]): for a file of so many
/// equal lines that their pairs do not fit.
fn text_diff(input: &InputLines<'_>, lines: &[Line<'_>]) -> Vec<DiffOp> {
    // A line is its bytes and whether it ends in a newline.
    let old: Vec<(&[u8], bool)> = (0..input.spans.len())
        .map(|k| (input.text(k), input.terminated(k)))
        .collect();
    let new: Vec<(&[u8], bool)> = lines.iter().map(|l| (&*l.text, true)).collect();
    let deadline = Instant::now() + TEXT_DIFF_TIME;
    let mut ops = Vec::new();
    for op in
        similar::capture_diff_slices_deadline(similar::Algorithm::Myers, &old, &new, Some(deadline))
    {
        match op {
            DiffOp::Equal { .. } => push(&mut ops, op),
            _ => push_changes(&mut ops, op.old_range(), op.new_range()),
        }
    }
    ops
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

    /// An input of `lines` (each ending in a newline) and its lines' places.
    fn input_of(text: &[u8]) -> InputLines<'_> {
        let mut spans = Vec::new();
        let mut start = 0;
        for (at, _) in text.iter().enumerate().filter(|(_, b)| **b == b'\n') {
            spans.push(start..at);
            start = at + 1;
        }
        let final_newline = start == text.len();
        if !final_newline {
            spans.push(start..text.len());
        }
        InputLines {
            bytes: text,
            spans,
            final_newline,
        }
    }

    /// Output lines: `(text, origin)`, borrowed from the input when they are its line's
    /// bytes (as a repair leaves them), else owned.
    fn output_of<'a>(input: &InputLines<'a>, lines: &[(&str, usize)]) -> Vec<Line<'a>> {
        lines
            .iter()
            .map(|&(text, origin)| {
                let k = origin.wrapping_sub(1);
                let bytes: &'a [u8] = input.bytes;
                match input.spans.get(k) {
                    Some(span) if &bytes[span.clone()] == text.as_bytes() => {
                        Line::new(&bytes[span.clone()], origin)
                    }
                    _ => Line::new(text.as_bytes().to_vec(), origin),
                }
            })
            .collect()
    }

    /// The number of lines `ops` deletes and inserts, after checking that they make `lines`
    /// from the input (a kept line is equal on both sides).
    fn changed(input: &InputLines<'_>, lines: &[Line<'_>], ops: &[DiffOp]) -> usize {
        let (mut old, mut new) = (0, 0);
        let mut changed = 0;
        for op in ops {
            assert_eq!(
                (op.old_range().start, op.new_range().start),
                (old, new),
                "{ops:?}"
            );
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                for d in 0..len {
                    assert!(input.terminated(old_index + d));
                    assert_eq!(input.text(old_index + d), &*lines[new_index + d].text);
                }
            } else {
                changed += op.old_range().len() + op.new_range().len();
            }
            (old, new) = (op.old_range().end, op.new_range().end);
        }
        assert_eq!((old, new), (input.spans.len(), lines.len()));
        changed
    }

    /// The number of lines a text diff of the two files changes.
    fn text_changed(input: &[u8], lines: &[Line<'_>]) -> usize {
        let output: Vec<u8> = lines
            .iter()
            .flat_map(|l| [&*l.text, b"\n"].concat())
            .collect();
        let (input, output) = (
            std::str::from_utf8(input).unwrap(),
            String::from_utf8(output).unwrap(),
        );
        similar::TextDiff::from_lines(input, &output)
            .ops()
            .iter()
            .filter(|op| !matches!(op, DiffOp::Equal { .. }))
            .map(|op| op.old_range().len() + op.new_range().len())
            .sum()
    }

    fn diff(input: &InputLines<'_>, lines: &[Line<'_>]) -> Vec<DiffOp> {
        ops(input, lines, Behind::new(input.bytes, None))
    }

    #[test]
    fn a_line_edited_to_equal_a_later_one_repair_took_out_is_no_anchor() {
        // The repair fuzzer's find: line 2 relinked becomes line 4, which repair takes out as
        // a repeat, as it does line 5 (line 3's repeat). Keeping line 3 where it is (the line
        // repair kept) changes four lines; keeping lines 4 and 5 changes two, as a text diff.
        let text = b"H\nX parent?\nE\nX parent\nE\n";
        let input = input_of(text);
        let lines = output_of(&input, &[("H", 1), ("X parent", 2), ("E", 3)]);
        let ops = diff(&input, &lines);
        assert_eq!(changed(&input, &lines, &ops), 2);
        assert_eq!(
            ops,
            [
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 1
                },
                DiffOp::Delete {
                    old_index: 1,
                    old_len: 2,
                    new_index: 1
                },
                DiffOp::Equal {
                    old_index: 3,
                    new_index: 1,
                    len: 2
                },
            ]
        );
    }

    #[test]
    fn of_two_equal_lines_the_one_repair_took_out_is_named() {
        let text = b"H\nA\nB\nA\nC\n";
        let input = input_of(text);
        // The second A is a repeat repair took out; a text diff could as well keep it.
        let lines = output_of(&input, &[("H", 1), ("A", 2), ("B", 3), ("C", 5)]);
        assert_eq!(
            diff(&input, &lines),
            [
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 3
                },
                DiffOp::Delete {
                    old_index: 3,
                    old_len: 1,
                    new_index: 3
                },
                DiffOp::Equal {
                    old_index: 4,
                    new_index: 3,
                    len: 1
                },
            ]
        );
        // A header put first: one line moved, not every line between rewritten.
        let text = b"A\nB\nC\nH\n";
        let input = input_of(text);
        let lines = output_of(&input, &[("H", 4), ("A", 1), ("B", 2), ("C", 3)]);
        let ops = diff(&input, &lines);
        assert_eq!(changed(&input, &lines, &ops), 2);
    }

    #[test]
    fn the_unterminated_last_line_equals_no_output_line() {
        let text = b"H\nA";
        let input = input_of(text);
        let lines = output_of(&input, &[("H", 1), ("A", 2)]);
        assert!(!input.same(&lines[1]));
        let ops = diff(&input, &lines);
        assert_eq!(changed(&input, &lines, &ops), 2);
    }

    #[test]
    fn the_diff_changes_no_more_lines_than_a_text_diff() {
        // Small files of a few distinct lines, each output line kept from its input line (in
        // order, or moved), edited into another line's text, or new.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        };
        let alphabet = ["a", "b", "c", "d", "ab", "ba", "x"];
        for _ in 0..3000 {
            let n = next(9);
            let text: Vec<u8> = (0..n)
                .flat_map(|_| [alphabet[next(alphabet.len())].as_bytes(), b"\n"].concat())
                .collect();
            let input = input_of(&text);
            let mut planned = Vec::new();
            for k in 0..n {
                match next(4) {
                    0 => {}
                    1 => planned.push((alphabet[next(alphabet.len())], k + 1)),
                    2 => planned.push((alphabet[next(alphabet.len())], 0)),
                    _ => planned.push((std::str::from_utf8(input.text(k)).unwrap(), k + 1)),
                }
            }
            if next(5) == 0 && planned.len() > 1 {
                let last = planned.pop().unwrap();
                planned.insert(0, last);
            }
            let lines = output_of(&input, &planned);
            let ops = diff(&input, &lines);
            assert_eq!(
                changed(&input, &lines, &ops),
                text_changed(&text, &lines),
                "{:?} -> {planned:?}: {ops:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn a_file_of_many_equal_lines_is_diffed_as_texts() {
        // 1,500 equal lines kept, one added in the middle: 2.25 million pairs, past PAIRS.
        let text = "{}\n".repeat(1500);
        let input = input_of(text.as_bytes());
        let mut planned: Vec<(&str, usize)> = (1..=1500).map(|k| ("{}", k)).collect();
        planned.insert(750, ("new", 0));
        let lines = output_of(&input, &planned);
        assert!(equal_pairs(&input, &lines, Behind::new(input.bytes, None)).is_none());
        let ops = diff(&input, &lines);
        assert_eq!(changed(&input, &lines, &ops), 1);
    }
}
