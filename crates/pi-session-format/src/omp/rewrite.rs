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
//!
//! [`on_open`] answers the whole question: the file stays, omp rewrites it (and into what:
//! a fresh title slot, then every value it parsed, migrated, with the slot's title on the
//! header, through [`super::persist::prepare_entry`], REWRITE.md §2–4), or opening it fails
//! (omp throws, or takes the file for changed meanwhile) and the file stays as it is.

use super::blobs::{Blobs, Resolved};
use super::context::{is_copilot_replay, is_js_whitespace, may_name, strip_copilot_replay};
use super::persist::{NewBlob, PersistError, TRUNCATION_NOTICE, prepare_entry};
use super::slot;
use crate::json::{self, JsValue, is_str};
use crate::session::{Kind, Session};
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

/// What omp does to a session file when it opens it (`SessionManager.open`, then
/// `ensureOnDisk`).
#[derive(Debug)]
#[non_exhaustive]
pub enum OnOpen {
    /// It leaves the file byte for byte as it is.
    Unchanged,
    /// It rewrites the file, for `reason`.
    Rewrites {
        /// Why.
        reason: RewriteReason,
        /// What it writes.
        rewritten: Rewritten,
    },
    /// Opening it fails, or its rewrite does: omp throws and the file stays as it is.
    Fails(OpenFailure),
    /// omp rewrites it in a way not reproduced here (`what`).
    Unsupported {
        /// Why omp rewrites it.
        reason: RewriteReason,
        /// What is not reproduced.
        what: String,
    },
}

/// A file as omp rewrites it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// The new file: the title slot, the header, every entry, one line each.
    pub bytes: Vec<u8>,
    /// Images omp moves into its blob store on the way, which the new file names: they must
    /// be in the store before the file is.
    pub blobs: Vec<NewBlob>,
    /// Hashes of blob references whose blob the store lacks (left in place, as omp leaves
    /// them, logging "Blob not found").
    pub missing_blobs: Vec<String>,
}

/// Why omp fails to open a file or to rewrite it; the file stays as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFailure {
    /// The 1-based line of the value omp throws on, when there is one.
    pub line: Option<usize>,
    /// What omp does.
    pub why: String,
}

impl fmt::Display for OpenFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.why),
            None => f.write_str(&self.why),
        }
    }
}

/// [`OnOpen`] for `session`, loaded in omp's dialect; blob references resolve from `blobs`
/// (none: every reference is missing, and stays).
pub fn on_open(session: &Session<'_>, blobs: Option<&Blobs>) -> OnOpen {
    if let Err(open) = open_throws(session) {
        return open;
    }
    let Some(reason) = rewrite_reason(session) else {
        return OnOpen::Unchanged;
    };
    if rewrite_conflicts(session.source) {
        return OnOpen::Fails(OpenFailure {
            line: None,
            why: format!(
                "omp rewrites this file when it opens it ({reason}), and fails to: its BOM or \
                 invalid UTF-8 makes the text it decoded shorter or longer than the file, which \
                 omp takes for a change made meanwhile (SessionWriteConflictError)"
            ),
        });
    }
    if session.source.len() >= STREAM_LOAD_BYTES && std::str::from_utf8(session.source).is_err() {
        return OnOpen::Unsupported {
            reason,
            what: "omp's reading of a file of 8 MiB or more with invalid UTF-8 (its offsets \
                   slip after a replacement character, REWRITE.md §5.3)"
                .into(),
        };
    }
    match rewrite(session, blobs) {
        Ok(rewritten) => OnOpen::Rewrites { reason, rewritten },
        Err(Stop::Fails(failure)) => OnOpen::Fails(failure),
        Err(Stop::Unsupported(what)) => OnOpen::Unsupported { reason, what },
    }
}

/// Why the rewrite stops.
enum Stop {
    Fails(OpenFailure),
    Unsupported(String),
}

fn throws(line: usize, why: impl Into<String>) -> OnOpen {
    OnOpen::Fails(OpenFailure {
        line: Some(line),
        why: format!("omp fails to open the file: {}", why.into()),
    })
}

/// What makes omp's `open` throw before it decides anything (REWRITE.md §6): a `null`
/// value; a value that is not an object in a file it migrates from version 1; a `message`
/// entry without a message; usage without `cost` where omp adds it up; a GitHub Copilot
/// replay message whose content is not a list of blocks.
fn open_throws(session: &Session<'_>) -> Result<(), OnOpen> {
    for r in session.records.iter().skip(1) {
        match &r.kind {
            Kind::Null => {
                return Err(throws(
                    r.line,
                    "a null value (TypeError: null is not an object (evaluating 'entry.type'))",
                ));
            }
            Kind::Falsy | Kind::Other if session.migrates_v1() => {
                if r.text().trim_start().starts_with('[') {
                    return Err(OnOpen::Unsupported {
                        reason: RewriteReason::Migration,
                        what: format!(
                            "line {}: an array among the entries of a version 1 file (omp's \
                             migration gives it an id that no line shows)",
                            r.line
                        ),
                    });
                }
                return Err(throws(
                    r.line,
                    "a value that is not an object in a version 1 file (TypeError: Attempted \
                     to assign to readonly property)",
                ));
            }
            Kind::Entry { .. } => {}
            _ => continue,
        }
        let text = r.text();
        let type_ = r.entry_type();
        let looked_at = match type_ {
            Some("message") => {
                r.message.is_none()
                    || may_name(text, "usage")
                    || may_name(text, "openaiResponsesHistory")
            }
            Some("model_usage") => true,
            _ => false,
        };
        if !looked_at {
            continue;
        }
        let value = r.value();
        if let Some(why) = throws_on(&value, type_) {
            return Err(throws(r.line, why));
        }
    }
    Ok(())
}

/// Why omp's open throws on this entry, if it does.
fn throws_on(entry: &JsValue, type_: Option<&str>) -> Option<&'static str> {
    let usage = match type_ {
        Some("model_usage") => entry.get("usage"),
        _ => {
            let message = match entry.get("message") {
                None | Some(JsValue::Null) => {
                    return Some("a message entry without a message (TypeError)");
                }
                Some(m) => m,
            };
            if is_copilot_replay(entry) {
                match message.get("content") {
                    Some(JsValue::Array(blocks))
                        if !blocks.0.iter().any(|b| matches!(b, JsValue::Null)) => {}
                    _ => {
                        return Some(
                            "a GitHub Copilot replay message whose content is not a list of \
                             blocks (TypeError)",
                        );
                    }
                }
            }
            if is_str(message.get("role"), "assistant") {
                message.get("usage")
            } else if is_str(message.get("role"), "toolResult")
                && is_str(message.get("toolName"), "task")
            {
                message
                    .get("details")
                    .and_then(|d| d.get("usage"))
                    .filter(|u| matches!(u, JsValue::Object(_) | JsValue::Array(_)))
            } else {
                None
            }
        }
    };
    let usage = usage.filter(|u| u.is_truthy())?;
    matches!(usage.get("cost"), None | Some(JsValue::Null))
        .then_some("usage without a cost (TypeError: usage.cost is undefined)")
}

/// The file omp writes (REWRITE.md §3): the slot, then every value, through
/// `prepareEntryForPersistence`.
fn rewrite(session: &Session<'_>, store: Option<&Blobs>) -> Result<Rewritten, Stop> {
    let mut blobs = Vec::new();
    let mut resolved = Resolved::default();
    // Values in file order (line, then the record's index or the verbatim line's place):
    // records, and the lines kept verbatim beside them.
    type Place = (usize, Option<usize>, Option<(usize, usize)>);
    let mut order: Vec<Place> = session
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.line, Some(i), None))
        .chain(
            session
                .skipped
                .iter()
                .filter_map(|s| Some((s.line, None, Some(s.verbatim?)))),
        )
        .collect();
    order.sort_by_key(|&(line, _, _)| line);
    let mut parent = None;
    let mut values = Vec::with_capacity(order.len());
    for (line, record, verbatim) in order {
        let mut value = match (record, verbatim) {
            (Some(i), _) => session.migrated_value(i, &mut parent),
            (None, Some((offset, len))) => {
                let text = session.source.get(offset..offset + len).unwrap_or_default();
                json::parse(&String::from_utf8_lossy(text)).unwrap_or_default()
            }
            (None, None) => continue,
        };
        if record != Some(0) {
            repair_snapcompact_frames(&value, line)?;
            Blobs::resolve_in(store, &mut value, &mut resolved);
            strip_copilot_replay(&mut value);
        }
        values.push((line, value));
    }
    let Some((header_line, header)) = values.first_mut() else {
        return Err(Stop::Fails(OpenFailure {
            line: None,
            why: "the file has no header".into(),
        }));
    };
    let header_line = *header_line;
    let slot_line = title_slot(session, header).map_err(|why| {
        Stop::Fails(OpenFailure {
            line: Some(header_line),
            why: format!("omp's rewrite fails: {why}"),
        })
    })?;
    let mut bytes = slot_line;
    for (line, value) in &mut values {
        prepare_entry(value, &mut blobs).map_err(|e| match e {
            PersistError::OmpThrows(why) => Stop::Fails(OpenFailure {
                line: Some(*line),
                why: format!("omp's rewrite fails: {why}"),
            }),
            other => Stop::Unsupported(format!("line {line}: {other}")),
        })?;
        json::write_value(&mut bytes, value);
        bytes.push(b'\n');
    }
    let mut missing_blobs = resolved.missing;
    missing_blobs.dedup();
    Ok(Rewritten {
        bytes,
        blobs,
        missing_blobs,
    })
}

/// The title slot omp writes first (`#titleSlotLine`), after putting the slot's title and
/// source on `header` (`applyTitleSlot`): the header's title (any value), its
/// `titleSource`, and the slot's `updatedAt` if it had a non-empty one, else the header's
/// `timestamp`.
fn title_slot(session: &Session<'_>, header: &mut JsValue) -> Result<Vec<u8>, String> {
    let Some(h) = header.as_object_mut() else {
        return Err("the header is not an object".into());
    };
    let mut updated_at = h.get("timestamp").cloned();
    if let Some(slot) = &session.title_slot {
        if slot.title.is_empty() {
            h.remove("title");
        } else {
            h.set("title", JsValue::string(slot.title.as_str()));
        }
        match &slot.source {
            Some(source) => h.set("titleSource", JsValue::string(source.as_str())),
            None => {
                h.remove("titleSource");
            }
        }
        if !slot.updated_at.is_empty() {
            updated_at = Some(JsValue::string(slot.updated_at.as_str()));
        }
    }
    let title: &[u8] = match h.get("title") {
        None | Some(JsValue::Null) => b"",
        Some(JsValue::String(t)) => t.as_wtf8(),
        Some(JsValue::Array(_)) => {
            return Err("a header title that is a list (not reproduced)".into());
        }
        Some(_) => {
            return Err(
                "the header's title is not a string (TypeError: Spread syntax requires \
                        an iterable)"
                    .into(),
            );
        }
    };
    slot::serialize(title, h.get("titleSource"), updated_at.as_ref()).ok_or_else(|| {
        "the title slot's source and updatedAt do not fit in 256 bytes (Session title slot \
         metadata exceeds fixed slot size)"
            .to_owned()
    })
}

/// `repairTruncatedSnapcompactFrames` changes a compaction whose snapcompact frames an older
/// omp cut (their `data` ends with the truncation notice): not reproduced.
fn repair_snapcompact_frames(entry: &JsValue, line: usize) -> Result<(), Stop> {
    if !is_str(entry.get("type"), "compaction") {
        return Ok(());
    }
    let frames = entry
        .get("preserveData")
        .and_then(|p| p.get("snapcompact"))
        .and_then(|s| s.get("frames"));
    let cut = matches!(frames, Some(JsValue::Array(frames)) if frames.0.iter().any(|f| {
        f.get("data")
            .and_then(JsValue::as_str)
            .is_some_and(|d| d.ends_with(TRUNCATION_NOTICE))
    }));
    if cut {
        return Err(Stop::Unsupported(format!(
            "line {line}: snapcompact frames an older omp cut (repairTruncatedSnapcompactFrames)"
        )));
    }
    Ok(())
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
