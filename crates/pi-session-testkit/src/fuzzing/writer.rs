//! The `writer` check: arbitrary operation sequences on a [`SessionWriter`] (every append,
//! branches, resets, branch summaries, branched sessions, refusals) never panic; a refused
//! operation changes nothing; the file is strict-valid for the profile's pi but for what the
//! caller's payloads (messages, data, details) break themselves, loads whole (nothing dropped
//! or skipped, every entry typed) and holds exactly the entries appended.

use arbitrary::{Arbitrary, Result, Unstructured};
use pi_session_format::json::{self, JsValue};
use pi_session_format::types::AgentMessage;
use pi_session_format::write::{
    BranchSummary, Compaction, ManualClock, SequentialIds, SessionWriter, WriteProfile,
    WriterConfig,
};
use pi_session_format::{PiVersion, Session};
use pi_session_validate::{Options, Severity, validate};

use super::spec::json as json_text;

/// A short string (names, labels, summaries).
fn text(u: &mut Unstructured<'_>) -> Result<String> {
    let mut s = String::arbitrary(u)?;
    s.truncate(s.char_indices().nth(40).map_or(s.len(), |(i, _)| i));
    Ok(s)
}

fn payload(u: &mut Unstructured<'_>) -> Result<JsValue> {
    let text = json_text(u, 2)?;
    Ok(json::parse(&text).unwrap_or_default())
}

/// A well-formed `Usage`: token counts and non-negative costs.
fn usage(u: &mut Unstructured<'_>) -> Result<JsValue> {
    let tokens: [u32; 4] = Arbitrary::arbitrary(u)?;
    let costs: [u16; 4] = Arbitrary::arbitrary(u)?;
    let total: u64 = tokens.iter().map(|&t| u64::from(t)).sum();
    let cost = |c: u16| f64::from(c) / 1000.0;
    let text = format!(
        r#"{{"input":{},"output":{},"cacheRead":{},"cacheWrite":{},"totalTokens":{total},"cost":{{"input":{},"output":{},"cacheRead":{},"cacheWrite":{},"total":{}}}}}"#,
        tokens[0],
        tokens[1],
        tokens[2],
        tokens[3],
        cost(costs[0]),
        cost(costs[1]),
        cost(costs[2]),
        cost(costs[3]),
        costs.iter().map(|&c| cost(c)).sum::<f64>()
    );
    Ok(json::parse(&text).unwrap_or_default())
}

fn optional_usage(u: &mut Unstructured<'_>) -> Result<Option<JsValue>> {
    Ok(if bool::arbitrary(u)? {
        Some(usage(u)?)
    } else {
        None
    })
}

fn optional(u: &mut Unstructured<'_>) -> Result<Option<JsValue>> {
    Ok(if bool::arbitrary(u)? {
        Some(payload(u)?)
    } else {
        None
    })
}

/// A message of the typed model: never its `Unknown` variant, and no tool result (which is
/// only valid after the call it answers, a rule of the conversation, not of the writer).
/// Integers beyond JavaScript's safe range are left in: the writer must refuse them.
fn typed_message(u: &mut Unstructured<'_>) -> Result<AgentMessage> {
    Ok(match AgentMessage::arbitrary(u)? {
        AgentMessage::Unknown(_) | AgentMessage::ToolResult(_) | AgentMessage::HookMessage(_) => {
            serde_json::from_str(r#"{"role":"user","content":"fallback","timestamp":1}"#)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?
        }
        known => known,
    })
}

/// Checks the writer on the operations `data` describes.
pub fn writer(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
}

fn pick<'a>(u: &mut Unstructured<'_>, ids: &'a [String]) -> Result<Option<&'a str>> {
    if ids.is_empty() || u.ratio(1, 20)? {
        return Ok(None);
    }
    Ok(Some(ids[u.choose_index(ids.len())?].as_str()))
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let profile = *u.choose(&WriteProfile::ALL)?;
    let clock = ManualClock::at(1_775_030_400_000);
    let config = WriterConfig::default()
        .profile(profile)
        .ids(SequentialIds::new())
        .clock(clock.clone());
    let Ok(mut w) = SessionWriter::in_memory("/work", config) else {
        panic!("an in-memory writer cannot fail to start");
    };
    let mut ids: Vec<String> = Vec::new();
    for _ in 0..u.int_in_range(0..=40)? {
        clock.advance(u.int_in_range(0..=5000)?);
        let before = w.to_jsonl();
        let entries_before = w.entry_count();
        let missing = "no-such-entry";
        let result = match u.int_in_range(0u8..=15)? {
            0..=3 => w.append_message(&typed_message(u)?),
            4 => w.append_thinking_level_change(&text(u)?),
            5 => w.append_model_change(&text(u)?, &text(u)?),
            6 => {
                let summary = text(u)?;
                let details = optional(u)?;
                let usage = optional_usage(u)?;
                w.append_compaction(&Compaction {
                    summary: &summary,
                    first_kept_entry_id: pick(u, &ids)?,
                    tokens_before: f64::from(u32::arbitrary(u)?),
                    details: details.as_ref(),
                    from_hook: Option::<bool>::arbitrary(u)?,
                    usage: usage.as_ref(),
                })
            }
            7 => w.append_custom_entry(&text(u)?, optional(u)?.as_ref()),
            8 => w.append_custom_message_entry(
                &text(u)?,
                &JsValue::string(text(u)?),
                bool::arbitrary(u)?,
                optional(u)?.as_ref(),
            ),
            9 => w.append_session_info(&text(u)?),
            10 => {
                let label = if bool::arbitrary(u)? {
                    Some(text(u)?)
                } else {
                    None
                };
                let target = pick(u, &ids)?.unwrap_or(missing).to_owned();
                w.append_label_change(&target, label.as_deref())
            }
            11 => {
                let usage = usage(u)?;
                let note = if bool::arbitrary(u)? {
                    Some(text(u)?)
                } else {
                    None
                };
                w.append_usage(&text(u)?, &text(u)?, &text(u)?, &usage, note.as_deref())
            }
            12 => {
                let target = pick(u, &ids)?.unwrap_or(missing).to_owned();
                let replacement = match u.int_in_range(0u8..=2)? {
                    0 => JsValue::Null,
                    1 => json::parse(&format!(
                        r#"{{"content":{}}}"#,
                        super::spec::json_string(&text(u)?)
                    ))
                    .unwrap_or_default(),
                    _ => payload(u)?,
                };
                w.append_context_edit(&target, &replacement)
            }
            13 => {
                let target = pick(u, &ids)?.unwrap_or(missing).to_owned();
                w.branch(&target).map(|()| String::new())
            }
            14 => {
                w.reset_leaf();
                Ok(String::new())
            }
            _ => {
                let summary = text(u)?;
                let details = optional(u)?;
                w.branch_with_summary(
                    pick(u, &ids)?,
                    &BranchSummary {
                        summary: &summary,
                        details: details.as_ref(),
                        from_hook: Option::<bool>::arbitrary(u)?,
                        usage: None,
                    },
                )
            }
        };
        match result {
            Ok(id) if !id.is_empty() => {
                assert_eq!(
                    w.entry_count(),
                    entries_before + 1,
                    "an append adds one entry"
                );
                assert_eq!(
                    w.leaf_id().as_deref(),
                    Some(id.as_str()),
                    "the new entry is the leaf"
                );
                ids.push(id);
            }
            Ok(_) => assert_eq!(w.to_jsonl(), before, "a leaf move writes nothing"),
            Err(e) => {
                assert_eq!(
                    w.to_jsonl(),
                    before,
                    "a refused operation ({e}) changes nothing"
                );
                assert_eq!(w.entry_count(), entries_before);
            }
        }
    }
    check_file(&w, profile, &ids);
    Ok(())
}

fn check_file(w: &SessionWriter, profile: WriteProfile, ids: &[String]) {
    let bytes = w.to_jsonl();
    let pi: PiVersion = profile.reading();
    let report = validate(
        &bytes,
        &Options {
            pi,
            ..Options::default()
        },
    );
    // The writer answers for the envelope (types, ids, parents, times, the members it adds);
    // a payload the caller gave (a message, data, details, usage, content) may break rules of
    // its own, which the writer passes on as pi does.
    const PAYLOADS: [&str; 6] = [
        "/message",
        "/data",
        "/details",
        "/content",
        "/replacement",
        "/systemMessage",
    ];
    let in_payload = |pointer: Option<&str>| {
        pointer.is_some_and(|p| {
            PAYLOADS
                .iter()
                .any(|k| p == *k || p.strip_prefix(k).is_some_and(|rest| rest.starts_with('/')))
        })
    };
    let errors: Vec<String> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && !in_payload(d.pointer.as_deref()))
        .map(|d| format!("{} {:?} {}", d.code, d.pointer, d.message))
        .collect();
    assert!(
        errors.is_empty(),
        "{profile}: the writer wrote an entry that is not strict-valid: {errors:?}\n{}",
        String::from_utf8_lossy(&bytes)
    );
    let session = match Session::from_bytes(&bytes, pi) {
        Ok(s) => s,
        Err(e) => panic!("{profile}: the writer's file does not load: {e}"),
    };
    assert!(session.dropped.is_empty() && session.skipped.is_empty());
    assert!(!session.version.rewrite, "the writer writes version 3");
    let read: Vec<String> = session
        .entry_records()
        .map(|r| match &r.id {
            pi_session_format::session::Key::String(s) => String::from_utf8_lossy(s).into_owned(),
            other => panic!("an entry id that is not a string: {other:?}"),
        })
        .collect();
    assert_eq!(
        read, ids,
        "reading the file back gives the entries appended, in order"
    );
    for entry in session.entries() {
        if let Err(e) = entry {
            panic!("{profile}: an entry the typed model refuses: {e:?}");
        }
    }
}
