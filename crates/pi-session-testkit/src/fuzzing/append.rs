//! The `append` check: random batches, valid and invalid, appended with
//! [`FileAppend`] to random session files (branches, labels, tool calls, some written with
//! escapes, shared ids and parent cycles, parents that only new entries have, a torn last line), against a model of the expected file. A batch the model refuses
//! is refused at its first bad entry and the file is unchanged. A batch it accepts (tool
//! results, compactions and branch summaries among it, answering and naming entries on and
//! off their paths) gets, in the plan's check document, the validator's errors on its new
//! lines that the whole file gets after the append; and it leaves the file as it was, then a
//! newline if it ended torn, then exactly the model's lines: the given ids or fresh unique
//! ones, each parent the given one or the entry before, the given times or the clock's.

use arbitrary::{Result, Unstructured};
use pi_session_format::json::{self, JsValue};
use pi_session_format::migrate::SequentialIds as MigrationIds;
use pi_session_format::session::Session;
use pi_session_format::write::{Commit, FileAppend, ManualClock, SequentialIds};
use pi_session_format::{PiVersion, date};
use pi_session_validate::{Code, Options, Severity, validate};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Checks one input (see the module documentation).
pub fn append(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
}

/// A scratch file of this process for one input, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir =
            std::env::temp_dir().join(format!("pi-session-fuzz-append-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        Scratch(dir.join(format!("{}.jsonl", NEXT.fetch_add(1, Ordering::Relaxed))))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"fuzz","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

fn user(id: Option<&str>, parent: Option<&str>, text: &str) -> String {
    let mut out = String::from(r#"{"type":"message""#);
    if let Some(id) = id {
        out.push_str(&format!(r#","id":"{id}""#));
    }
    match parent {
        Some(p) => out.push_str(&format!(r#","parentId":"{p}""#)),
        None if id.is_some() => out.push_str(r#","parentId":null"#),
        None => {}
    }
    if id.is_some() {
        out.push_str(r#","timestamp":"2025-01-01T00:00:01.000Z""#);
    }
    out.push_str(&format!(
        r#","message":{{"role":"user","content":{},"timestamp":1}}}}"#,
        json::to_string(&JsValue::string(text))
    ));
    out
}

/// An assistant message entry that calls tool `call` (spelled with a `\u` escape when
/// `escaped`), or, without an id, one to append.
fn assistant(id: Option<&str>, parent: Option<&str>, call: &str, escaped: bool) -> String {
    let mut out = String::from(r#"{"type":"message""#);
    if let Some(id) = id {
        out.push_str(&format!(r#","id":"{id}""#));
        match parent {
            Some(p) => out.push_str(&format!(r#","parentId":"{p}""#)),
            None => out.push_str(r#","parentId":null"#),
        }
        out.push_str(r#","timestamp":"2025-01-01T00:00:01.000Z""#);
    }
    // Escaped: a `/` as `\/`, or else the `c` as `\u0063`.
    let call = match escaped {
        true if call.contains('/') => call.replace('/', "\\/"),
        true => call.replacen('c', "\\u0063", 1),
        false => call.to_owned(),
    };
    out.push_str(&format!(
        r#","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"{call}","name":"bash","arguments":{{"command":"ls"}}}}],"api":"a","provider":"p","model":"m","usage":{{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":1}}}}"#
    ));
    out
}

/// What the model expects of one entry of the batch.
enum Expect {
    /// Refused: the batch is refused here.
    Refused,
    /// Accepted: the id it gets (`None`: a fresh one), its parent (`None`: the leaf), whether
    /// its time is given.
    Accepted {
        id: Option<String>,
        parent: Option<Option<String>>,
    },
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    // The session: entries on branches, some labels, maybe a torn last line.
    let mut file = format!("{HEADER}\n");
    let mut ids: Vec<String> = Vec::new();
    let mut leaf: Option<String> = None;
    // The tool calls made in the file and in the batch.
    let mut calls: Vec<String> = Vec::new();
    for i in 0..u.int_in_range(0..=12)? {
        // Now and then an id used before: pi's index keeps the later entry, which can close a
        // parent cycle.
        let id = if !ids.is_empty() && u.ratio(1, 8)? {
            ids[u.choose_index(ids.len())?].clone()
        } else {
            format!("e{i}")
        };
        let parent = if u.ratio(1, 10)? {
            // A parent no old entry has, which a new entry given that id becomes.
            Some(format!("given{}", u.int_in_range(0..=7)?))
        } else if ids.is_empty() || u.ratio(1, 6)? {
            None
        } else if u.ratio(2, 3)? {
            leaf.clone()
        } else {
            Some(ids[u.choose_index(ids.len())?].clone())
        };
        if u.ratio(1, 3)? {
            let call = if u.ratio(1, 3)? {
                format!("c/{i}")
            } else {
                format!("c{i}")
            };
            file.push_str(&assistant(
                Some(&id),
                parent.as_deref(),
                &call,
                u.ratio(1, 4)?,
            ));
            calls.push(call);
        } else {
            file.push_str(&user(Some(&id), parent.as_deref(), "earlier"));
        }
        file.push('\n');
        ids.push(id.clone());
        leaf = Some(id);
    }
    let torn = u.ratio(1, 5)?;
    if torn {
        file.push_str(r#"{"type":"message","id":"torn"#);
    }
    let scratch = Scratch::new();
    if std::fs::write(&scratch.0, &file).is_err() {
        return Ok(());
    }
    // The batch, and what the model expects of each entry.
    let mut batch: Vec<JsValue> = Vec::new();
    let mut expect: Vec<Expect> = Vec::new();
    let mut taken: Vec<String> = ids.clone();
    for n in 0..u.int_in_range(1..=8)? {
        let existing = |u: &mut Unstructured<'_>, taken: &[String]| -> Result<Option<String>> {
            Ok(if taken.is_empty() {
                None
            } else {
                Some(taken[u.choose_index(taken.len())?].clone())
            })
        };
        let accepted = Expect::Accepted {
            id: None,
            parent: None,
        };
        let (text, e) = match u.int_in_range(0u8..=13)? {
            0..=2 => (
                user(None, None, "new"),
                Expect::Accepted {
                    id: None,
                    parent: None,
                },
            ),
            3 => {
                let id = format!("given{n}");
                let text = format!(r#"{{"type":"custom","customType":"t","id":"{id}"}}"#);
                (
                    text,
                    Expect::Accepted {
                        id: Some(id),
                        parent: None,
                    },
                )
            }
            4 => match existing(u, &taken)? {
                Some(p) => (
                    format!(r#"{{"type":"custom","customType":"t","parentId":"{p}"}}"#),
                    Expect::Accepted {
                        id: None,
                        parent: Some(Some(p)),
                    },
                ),
                None => (
                    r#"{"type":"custom","customType":"t","parentId":"ghost"}"#.to_owned(),
                    Expect::Refused,
                ),
            },
            5 => match existing(u, &taken)? {
                Some(t) => (
                    format!(r#"{{"type":"label","targetId":"{t}","label":"l"}}"#),
                    Expect::Accepted {
                        id: None,
                        parent: None,
                    },
                ),
                None => (
                    r#"{"type":"label","targetId":"ghost","label":"l"}"#.to_owned(),
                    Expect::Refused,
                ),
            },
            6 => match existing(u, &taken)? {
                Some(id) => (
                    format!(r#"{{"type":"custom","customType":"t","id":"{id}"}}"#),
                    Expect::Refused,
                ),
                None => (
                    r#"{"type":"session","version":3}"#.to_owned(),
                    Expect::Refused,
                ),
            },
            7 => ("[1,2]".to_owned(), Expect::Refused),
            8 => (r#"{"type":"message"}"#.to_owned(), Expect::Refused),
            10 => {
                let call = format!("b{n}");
                calls.push(call.clone());
                (assistant(None, None, &call, false), accepted)
            }
            11 => {
                let call = match existing(u, &calls)? {
                    Some(call) if !u.ratio(1, 5)? => call,
                    _ => "ghost".to_owned(),
                };
                (
                    format!(
                        r#"{{"type":"message","message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"out"}}],"isError":false,"timestamp":1}}}}"#
                    ),
                    accepted,
                )
            }
            12 => {
                let kept = existing(u, &taken)?.unwrap_or_else(|| "ghost".into());
                (
                    format!(
                        r#"{{"type":"compaction","summary":"s","firstKeptEntryId":"{kept}","tokensBefore":1}}"#
                    ),
                    accepted,
                )
            }
            13 => {
                let from = existing(u, &taken)?.unwrap_or_else(|| "ghost".into());
                (
                    format!(r#"{{"type":"branch_summary","fromId":"{from}","summary":"s"}}"#),
                    accepted,
                )
            }
            _ => (
                r#"{"type":"custom","customType":"t","parentId":null}"#.to_owned(),
                Expect::Accepted {
                    id: None,
                    parent: Some(None),
                },
            ),
        };
        let Ok(value) = json::parse(&text) else {
            return Ok(());
        };
        if let Expect::Accepted { id: Some(id), .. } = &e {
            taken.push(id.clone());
        }
        batch.push(value);
        let refused = matches!(e, Expect::Refused);
        expect.push(e);
        if refused {
            break;
        }
    }
    check(&scratch, &file, torn, leaf, &batch, &expect);
    Ok(())
}

fn check(
    scratch: &Scratch,
    before: &str,
    torn: bool,
    mut leaf: Option<String>,
    batch: &[JsValue],
    expect: &[Expect],
) {
    let Ok(mut target) = FileAppend::lock(&scratch.0, false) else {
        panic!("a fresh file of ours cannot be locked elsewhere");
    };
    let bytes = std::fs::read(&scratch.0).expect("our file");
    let session = Session::loader(PiVersion::V0_87)
        .ids(&mut MigrationIds::default())
        .load(&bytes)
        .expect("a v3 file with a header loads");
    let clock = ManualClock::at(1_775_030_400_000);
    let plan = target.plan_with(
        &session,
        bytes.len() as u64,
        batch,
        &mut SequentialIds::new(),
        &mut clock.clone(),
    );
    let refused_at = expect.iter().position(|e| matches!(e, Expect::Refused));
    let plan = match (plan, refused_at) {
        (Err(e), Some(at)) => {
            assert_eq!(e.index, at, "refused at another entry: {:?}", e.error);
            assert_eq!(std::fs::read(&scratch.0).unwrap(), before.as_bytes());
            return;
        }
        (Err(e), None) => panic!(
            "entry {} refused ({}) but the model accepts it",
            e.index, e.error
        ),
        (Ok(_), Some(at)) => panic!("entry {at} accepted but the model refuses it"),
        (Ok(plan), None) => plan,
    };
    // The check document: the errors and warnings on the new lines are the whole file's,
    // after the append.
    let errors_on_new_lines = |document: &[u8], before: usize| -> Vec<(String, usize)> {
        let report = validate(
            document,
            &Options {
                pi: PiVersion::V0_87,
                ..Options::default()
            },
        );
        let mut errors: Vec<(String, usize)> = report
            .diagnostics
            .iter()
            .filter(|d| d.severity >= Severity::Warning)
            // Reported once for many lines of the file (folded), not about the line's context.
            .filter(|d| {
                !matches!(
                    d.code,
                    Code::IdFormat | Code::TimestampNotIso | Code::CrlfLineEnding
                )
            })
            .filter_map(|d| {
                let line = d.location.as_ref()?.line.checked_sub(before + 1)?;
                Some((d.code.to_string(), line))
            })
            .collect();
        errors.sort();
        errors
    };
    let planned = errors_on_new_lines(plan.check_document(), plan.context_lines());
    assert_eq!(target.commit(&plan).expect("the write"), Commit::Appended);
    // The file: as it was, a fence, then exactly the model's lines.
    let after = std::fs::read_to_string(&scratch.0).expect("our file");
    let mut expected_start = before.to_owned();
    if torn {
        expected_start.push('\n');
    }
    assert!(
        after.starts_with(&expected_start),
        "the file's old bytes changed"
    );
    let whole = errors_on_new_lines(after.as_bytes(), expected_start.lines().count());
    assert_eq!(
        planned,
        whole,
        "the check document's errors on the new lines are not the whole file's:\n{}\n-- the file:\n{after}",
        String::from_utf8_lossy(plan.check_document())
    );
    let new: Vec<&str> = after[expected_start.len()..].lines().collect();
    assert_eq!(new.len(), batch.len(), "{after}");
    assert!(after.ends_with('\n'));
    let now = date::to_iso_string(1_775_030_400_000.0);
    let mut seen: Vec<String> = Vec::new();
    for ((line, e), given) in new.iter().zip(expect).zip(batch) {
        let value = json::parse(line).expect("a new line is JSON");
        let Expect::Accepted { id, parent } = e else {
            unreachable!("refused batches returned above");
        };
        let got_id = value.get("id").and_then(JsValue::as_str).map(str::to_owned);
        let got_id = got_id.expect("every new entry has an id");
        if let Some(id) = id {
            assert_eq!(&got_id, id);
        }
        assert!(!seen.contains(&got_id), "id {got_id} given twice");
        assert!(
            !before.contains(&format!("\"id\":\"{got_id}\"")),
            "id {got_id} taken"
        );
        seen.push(got_id.clone());
        let want_parent = match parent {
            Some(p) => p.clone(),
            None => leaf.clone(),
        };
        let got_parent = value
            .get("parentId")
            .and_then(JsValue::as_str)
            .map(str::to_owned);
        assert_eq!(got_parent, want_parent, "{line}");
        if given.get("timestamp").is_none() {
            assert_eq!(
                value.get("timestamp").and_then(JsValue::as_str),
                Some(now.as_str())
            );
        }
        leaf = Some(got_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool result to append, answering `call`, under `parent` (default: the leaf).
    fn tool_result(call: &str, parent: Option<&str>) -> JsValue {
        let parent = parent.map_or(String::new(), |p| format!(r#","parentId":"{p}""#));
        json::parse(&format!(
            r#"{{"type":"message"{parent},"message":{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[],"isError":false,"timestamp":1}}}}"#
        ))
        .unwrap()
    }

    /// A scratch session file of the header and `lines`, and its text.
    fn session_file(lines: &[&str]) -> (Scratch, String) {
        let scratch = Scratch::new();
        let mut file = format!("{HEADER}\n");
        for line in lines {
            file.push_str(line);
            file.push('\n');
        }
        std::fs::write(&scratch.0, &file).unwrap();
        (scratch, file)
    }

    /// A leaf whose id is a number: a new entry's default parent, named like a string one.
    #[test]
    fn a_number_leaf_is_a_parent_like_any_other() {
        let (scratch, file) = session_file(&[
            &assistant(Some("a"), None, "c1", false),
            r#"{"type":"message","id":7,"parentId":"a","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"seven","timestamp":1}}"#,
        ]);
        let result = tool_result("c1", None);
        // The model reads parents as strings: the number parent reads as none.
        let expect = [Expect::Accepted {
            id: None,
            parent: None,
        }];
        check(&scratch, &file, false, None, &[result], &expect);
    }

    /// More calls to look for than one walk takes at a time: each is still found, or not.
    #[test]
    fn many_tool_results_are_checked_at_once() {
        let (scratch, file) = session_file(&[
            &assistant(Some("a"), None, "c/0", true),
            &user(Some("u"), Some("a"), "and then"),
        ]);
        let mut batch: Vec<JsValue> = (0..70)
            .map(|n| tool_result(&format!("ghost{n}"), None))
            .collect();
        batch.push(tool_result("c/0", None));
        let expect: Vec<Expect> = batch
            .iter()
            .map(|_| Expect::Accepted {
                id: None,
                parent: None,
            })
            .collect();
        check(&scratch, &file, false, Some("u".into()), &batch, &expect);
    }

    /// An old entry whose parent names no old entry but a new one: the new lines make it its
    /// parent, so a tool result under it, or under its child, answers the new entry's call.
    #[test]
    fn an_old_entry_under_a_new_one_sees_its_calls() {
        let (scratch, file) = session_file(&[
            &user(Some("y"), Some("given0"), "under a parent to come"),
            &user(Some("x"), Some("y"), "under that"),
        ]);
        let mut call = json::parse(&assistant(None, None, "k1", false)).unwrap();
        if let JsValue::Object(entry) = &mut call {
            entry.set("id", JsValue::string("given0"));
        }
        let result = tool_result("k1", Some("x"));
        let expect = [
            Expect::Accepted {
                id: Some("given0".into()),
                parent: None,
            },
            Expect::Accepted {
                id: None,
                parent: Some(Some("x".into())),
            },
        ];
        check(
            &scratch,
            &file,
            false,
            Some("x".into()),
            &[call, result],
            &expect,
        );
    }

    #[test]
    fn batches_of_every_kind_are_checked() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let data: Vec<u8> = (0..256)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            super::append(&data);
        }
    }
}
