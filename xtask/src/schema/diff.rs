//! A small line diff for `cargo xtask schema --check` (unified format, 3 lines of context).

/// One line of the edit script.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// A unified diff from `old` to `new`, labelled with `old_name` and `new_name`; empty when
/// the texts are equal.
pub fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = edit_script(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = (0..ops.len())
        .filter(|&i| !matches!(ops[i], Op::Same(..)))
        .collect();
    let mut i = 0;
    while i < changed.len() {
        // Group changes whose context windows touch into one hunk.
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = (changed[i] + CONTEXT + 1).min(ops.len());
        while i + 1 < changed.len() && changed[i + 1] <= end + CONTEXT {
            i += 1;
            end = (changed[i] + CONTEXT + 1).min(ops.len());
        }
        i += 1;
        let hunk = &ops[start..end];
        let old_start = hunk
            .iter()
            .find_map(|op| match op {
                Op::Same(x, _) | Op::Delete(x) => Some(*x),
                Op::Insert(_) => None,
            })
            .unwrap_or(0);
        let new_start = hunk
            .iter()
            .find_map(|op| match op {
                Op::Same(_, y) | Op::Insert(y) => Some(*y),
                Op::Delete(_) => None,
            })
            .unwrap_or(0);
        let old_len = hunk
            .iter()
            .filter(|op| !matches!(op, Op::Insert(_)))
            .count();
        let new_len = hunk
            .iter()
            .filter(|op| !matches!(op, Op::Delete(_)))
            .count();
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            old_start + 1,
            new_start + 1
        ));
        for op in hunk {
            match *op {
                Op::Same(x, _) => out.push_str(&format!(" {}\n", a[x])),
                Op::Delete(x) => out.push_str(&format!("-{}\n", a[x])),
                Op::Insert(y) => out.push_str(&format!("+{}\n", b[y])),
            }
        }
    }
    out
}

/// Longest-common-subsequence edit script; the common prefix and suffix are matched first so
/// that the quadratic part only covers the changed region (schema files are small).
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    if ma.len().saturating_mul(mb.len()) <= 4_000_000 {
        // lcs[i][j] = LCS length of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                ops.push(Op::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if i < ma.len() && (j == mb.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
            {
                ops.push(Op::Delete(prefix + i));
                i += 1;
            } else {
                ops.push(Op::Insert(prefix + j));
                j += 1;
            }
        }
    } else {
        ops.extend((0..ma.len()).map(|i| Op::Delete(prefix + i)));
        ops.extend((0..mb.len()).map(|j| Op::Insert(prefix + j)));
    }
    ops.extend((0..suffix).map(|k| Op::Same(a.len() - suffix + k, b.len() - suffix + k)));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a", "b", "x\ny\n", "x\ny\n"), "");
    }

    #[test]
    fn changed_lines_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\nten\n";
        assert_eq!(
            unified("old", "new", old, new),
            "--- old\n+++ new\n@@ -2,8 +2,9 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n+ten\n"
        );
        // Changes more than 6 lines apart get their own hunks.
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .filter(|&i| i != 19)
            .map(|i| {
                if i == 2 {
                    "two\n".into()
                } else {
                    format!("{i}\n")
                }
            })
            .collect();
        assert_eq!(
            unified("old", "new", &old, &new),
            "--- old\n+++ new\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,4 @@\n 16\n 17\n 18\n-19\n 20\n"
        );
    }

    #[test]
    fn from_and_to_empty() {
        assert_eq!(
            unified("old", "new", "", "a\n"),
            "--- old\n+++ new\n@@ -1,0 +1,1 @@\n+a\n"
        );
        assert_eq!(
            unified("old", "new", "a\n", ""),
            "--- old\n+++ new\n@@ -1,1 +1,0 @@\n-a\n"
        );
    }
}
