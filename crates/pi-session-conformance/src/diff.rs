//! Where two outputs differ, shown so a human sees it at once: the first differing line and,
//! inside it, the first differing byte with some context on both sides.

/// Bytes of context shown on each side of the first difference.
const CONTEXT: usize = 120;

/// A readable description of how `actual` differs from `expected` (`None` when equal).
pub fn describe(expected: &[u8], actual: &[u8]) -> Option<String> {
    if expected == actual {
        return None;
    }
    let expected_lines: Vec<&[u8]> = expected.split(|&b| b == b'\n').collect();
    let actual_lines: Vec<&[u8]> = actual.split(|&b| b == b'\n').collect();
    let line = expected_lines
        .iter()
        .zip(&actual_lines)
        .position(|(e, a)| e != a)
        .unwrap_or(expected_lines.len().min(actual_lines.len()));
    let empty: &[u8] = b"";
    let e = expected_lines.get(line).copied().unwrap_or(empty);
    let a = actual_lines.get(line).copied().unwrap_or(empty);
    let column = e
        .iter()
        .zip(a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let excerpt = |bytes: &[u8]| {
        let start = column.saturating_sub(CONTEXT);
        let end = (column + CONTEXT).min(bytes.len());
        let prefix = if start > 0 { "…" } else { "" };
        let suffix = if end < bytes.len() { "…" } else { "" };
        format!(
            "{prefix}{}{suffix}",
            String::from_utf8_lossy(&bytes[start.min(bytes.len())..end])
        )
    };
    let mut out = format!(
        "first difference at line {}, byte {} (expected {} lines, got {}):\n",
        line + 1,
        column + 1,
        expected_lines.len(),
        actual_lines.len()
    );
    out.push_str(&format!("  expected: {}\n", excerpt(e)));
    out.push_str(&format!("  actual:   {}\n", excerpt(a)));
    let caret = column.min(CONTEXT) + usize::from(column > CONTEXT) + "  expected: ".len();
    out.push_str(&format!("{}^\n", " ".repeat(caret)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_outputs_have_no_diff() {
        assert_eq!(describe(b"a\nb", b"a\nb"), None);
    }

    #[test]
    fn points_at_the_first_difference() {
        let d = describe(b"{\"a\":1}\n{\"b\":2}\n", b"{\"a\":1}\n{\"b\":3}\n").unwrap();
        assert!(d.starts_with("first difference at line 2, byte 6"), "{d}");
        assert!(
            d.contains("expected: {\"b\":2}") && d.contains("actual:   {\"b\":3}"),
            "{d}"
        );
    }

    #[test]
    fn missing_lines_are_reported() {
        let d = describe(b"x\ny\n", b"x\n").unwrap();
        assert!(d.contains("expected 3 lines, got 2"), "{d}");
    }
}
