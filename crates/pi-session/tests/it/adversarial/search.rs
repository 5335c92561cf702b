//! `search` on hostile ground: one huge text with a match every few dozen bytes (each match
//! once counted the characters from the start of its text, so the time grew with the square
//! of the text; `-l` did the same work). The long case is `#[ignore]`d; `.ci/run` runs it.

use super::common::*;
use std::time::Duration;

/// A session whose one tool result is `matches` times `needle` and 73 more bytes of text
/// (80 bytes each): 16 MB for 200,000 matches.
fn one_huge_text(dir: &std::path::Path, matches: usize) -> std::path::PathBuf {
    let piece = format!("needle {}é ", "x".repeat(70));
    let text = piece.repeat(matches);
    let line = format!(
        r#"{{"type":"message","id":"r1","parentId":null,"timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"x","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":3}}}}"#
    );
    write(dir, "huge.jsonl", format!("{HEADER}{line}\n"))
}

/// 200,000 matches in one 16 MB text: seconds, not minutes (the quadratic code took over
/// 100 s for 15.7 MB), and every match is reported; `-l` stops at the first.
#[test]
#[ignore = "a 16 MB text; run in release by .ci/run"]
fn search_200k_matches_in_one_16mb_text() {
    let dir = scratch("search-huge-text");
    let file = one_huge_text(&dir, 200_000);
    let limit = Duration::from_secs(10);
    let r = run(&["search", "needle", s(&file), "--color", "never"], limit);
    r.assert_code(0);
    // Every line but the first shows 40 characters on each side: `xxx…é ` (41 bytes) before,
    // ` xxx…` (40 bytes) after.
    let prefix = format!("{}:2:r1:tool*: ", s(&file)).len() as u64;
    let first = prefix + 6 + 40 + 1;
    let other = prefix + 41 + 6 + 40 + 1;
    assert_eq!(r.stdout_len, first + 199_999 * other);
    assert!(
        r.stdout_text()
            .starts_with(&format!("{}:2:r1:tool*: needle xxx", s(&file)))
    );
    let l = run(&["search", "-l", "needle", s(&file)], limit);
    l.assert_code(0);
    assert_eq!(l.stdout_text(), format!("{}\n", s(&file)));
}
