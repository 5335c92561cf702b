//! Whether oh-my-pi rewrites a session file when it opens it (`SessionManager.open` then
//! `ensureOnDisk`), and why: `conformance/reference/omp/REWRITE.md` §0–1, checked against
//! `omp-ref.ts migrate`.
//!
//! omp rewrites a file it opens only when
//! - its version makes `migrateToCurrentVersion` migrate (`(version ?? 1) >= 3` is false, as
//!   JavaScript compares: a version of `"abc"` too);
//! - its JSONL parser skipped text that is not blank (a malformed record: a line no value can
//!   be read from, or text after a value on its line);
//! - an assistant message of GitHub Copilot carries an OpenAI Responses replay payload, which
//!   omp strips (`sanitizeRehydratedOpenAIResponsesAssistantMessage`).
//!
//! Any other file, a v3 file without a title slot, with CRLF line ends, a BOM, blank lines or
//! large inline images included, omp leaves byte for byte as it is.

use super::context::{is_copilot_replay, is_js_whitespace, may_name};
use crate::session::Session;
use std::fmt;

/// The size from which omp reads a file as a stream (`STREAM_LOAD_THRESHOLD_BYTES`), where a
/// skipped record counts as malformed when it holds any byte but a space, tab or CR.
const STREAM_LOAD_BYTES: usize = 8 * 1024 * 1024;

/// Why omp rewrites a file it opens (the first reason found).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RewriteReason {
    /// The header's version is below 3 (or not a number): omp migrates the entries.
    Migration,
    /// omp's parser skipped text that is not blank, starting on this line.
    Malformed {
        /// 1-based line number.
        line: usize,
    },
    /// The assistant message on this line has a GitHub Copilot replay payload omp strips.
    CopilotReplay {
        /// 1-based line number.
        line: usize,
    },
}

impl fmt::Display for RewriteReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteReason::Migration => {
                f.write_str("its version is below 3, and omp migrates it to version 3")
            }
            RewriteReason::Malformed { line } => write!(
                f,
                "line {line} holds text omp's JSONL parser skips, which omp's rewrite deletes"
            ),
            RewriteReason::CopilotReplay { line } => write!(
                f,
                "the GitHub Copilot message on line {line} carries an OpenAI Responses replay \
                 payload, which omp strips"
            ),
        }
    }
}

/// Why omp rewrites `session` (loaded in omp's dialect) when it opens it, or `None` when it
/// leaves the file as it is.
pub fn rewrite_reason(session: &Session<'_>) -> Option<RewriteReason> {
    if session.version.rewrite {
        return Some(RewriteReason::Migration);
    }
    let streamed = session.source.len() >= STREAM_LOAD_BYTES;
    let malformed = session.dropped.iter().find(|d| {
        let text = session.dropped_bytes(d);
        if streamed {
            text.iter().any(|b| !matches!(b, b'\t' | b'\r' | b' '))
        } else {
            !String::from_utf8_lossy(text)
                .trim_matches(is_js_whitespace)
                .is_empty()
        }
    });
    if let Some(d) = malformed {
        return Some(RewriteReason::Malformed { line: d.line });
    }
    session.entries.iter().find_map(|&i| {
        let record = &session.records[i];
        // Only a text that may name the payload's type is parsed.
        (record.entry_type() == Some("message")
            && may_name(record.text(), "openaiResponsesHistory")
            && is_copilot_replay(&record.value()))
        .then_some(RewriteReason::CopilotReplay { line: record.line })
    })
}

/// Whether omp's rewrite of `bytes` fails (`SessionWriteConflictError`, the file left as it
/// is): below 8 MiB omp expects the file to be as long as the text it decoded, which a BOM
/// (dropped) or invalid UTF-8 whose replacement characters are longer or shorter belies
/// (REWRITE.md §5.1).
pub fn rewrite_conflicts(bytes: &[u8]) -> bool {
    bytes.len() < STREAM_LOAD_BYTES
        && (bytes.starts_with(b"\xEF\xBB\xBF")
            || String::from_utf8_lossy(bytes).len() != bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, PiVersion};

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;
    const USER: &str = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

    fn reason(text: &str) -> Option<RewriteReason> {
        let session = Session::loader(PiVersion::V0_87)
            .dialect(Dialect::Omp)
            .load(text.as_bytes())
            .unwrap();
        rewrite_reason(&session)
    }

    #[test]
    fn a_v3_file_is_left_as_it_is_whatever_its_form() {
        assert_eq!(reason(&format!("{HEADER}\n{USER}\n")), None);
        assert_eq!(reason(&format!("{HEADER}\r\n\r\n  \n{USER}\r\n")), None);
        // A line of Unicode spaces is skipped, not malformed (JavaScript's trim).
        assert_eq!(reason(&format!("{HEADER}\n\u{a0}\u{2028}\n{USER}\n")), None);
        // A value over two lines is one entry.
        let split = USER.replacen(",\"message\"", ",\n\"message\"", 1);
        assert_eq!(reason(&format!("{HEADER}\n{split}\n")), None);
    }

    #[test]
    fn a_migration_a_malformed_record_or_a_copilot_payload_rewrites_it() {
        let v2 = HEADER.replace("\"version\":3", "\"version\":2");
        assert_eq!(
            reason(&format!("{v2}\n{USER}\n")),
            Some(RewriteReason::Migration)
        );
        let abc = HEADER.replace("\"version\":3", "\"version\":\"abc\"");
        assert_eq!(
            reason(&format!("{abc}\n{USER}\n")),
            Some(RewriteReason::Migration)
        );
        assert_eq!(
            reason(&format!("{HEADER}\ngarbage\n{USER}\n")),
            Some(RewriteReason::Malformed { line: 2 })
        );
        // Text after a value on its line: a second value, or a stray word (a Unicode space
        // alone is skipped but not malformed).
        for (tail, malformed) in [(" {\"x\":1}", true), ("  x", true), ("\u{a0}", false)] {
            assert_eq!(
                reason(&format!("{HEADER}\n{USER}{tail}\n")),
                malformed.then_some(RewriteReason::Malformed { line: 2 }),
                "{tail:?}"
            );
        }
        // A value over lines whose last line goes on after it.
        let split = USER.replacen(",\"message\"", ",\n\"message\"", 1);
        assert_eq!(
            reason(&format!("{HEADER}\n{split} x\n")),
            Some(RewriteReason::Malformed { line: 3 })
        );
        let copilot = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","provider":"github-copilot","content":[],"providerPayload":{"type":"openaiResponsesHistory","items":[]}}}"#;
        assert_eq!(
            reason(&format!("{HEADER}\n{USER}\n{copilot}\n")),
            Some(RewriteReason::CopilotReplay { line: 3 })
        );
        assert!(rewrite_conflicts(format!("\u{feff}{HEADER}\n").as_bytes()));
        assert!(rewrite_conflicts(b"{\"a\":\"\xff\"}\n"));
        // A cut 4-byte sequence is one replacement character, as long: no conflict.
        assert!(!rewrite_conflicts(b"{\"a\":\"\xf0\x9f\x98\"}\n"));
        assert!(!rewrite_conflicts(HEADER.as_bytes()));
        let other = copilot.replace("github-copilot", "openai");
        assert_eq!(reason(&format!("{HEADER}\n{USER}\n{other}\n")), None);
    }
}
