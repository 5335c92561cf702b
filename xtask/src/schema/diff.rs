//! The unified diff that `cargo xtask schema --check` prints for a stale schema file (3 lines
//! of context), computed and formatted by the `similar` crate.

use similar::TextDiff;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// A unified diff from `old` to `new`, labelled with `old_name` and `new_name`; empty when
/// the texts are equal. A text that does not end with a newline gets `\ No newline at end of
/// file` after its last line, as `diff -u` writes it.
pub(super) fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(old_name, new_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a", "b", "x\ny\n", "x\ny\n"), "");
        assert_eq!(unified("a", "b", "", ""), "");
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
        // As `diff -u` numbers an empty range: the line before it.
        assert_eq!(
            unified("/dev/null", "b/x", "", "a\nb\n"),
            "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
        assert_eq!(
            unified("a/x", "/dev/null", "a\n", ""),
            "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
        );
    }

    #[test]
    fn a_missing_final_newline_is_shown() {
        assert_eq!(
            unified("old", "new", "a\nb", "a\nb\n"),
            "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }
}
