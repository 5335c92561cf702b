//! Tests of the ledger: facts read from text and from values agree, identities, forks counted
//! once, groupings and time ranges.

use super::*;
use crate::PiVersion;

/// A version 3 session: its header (`parent`: its `parentSession`), then `entries`.
pub(crate) fn session(id: &str, created: &str, parent: Option<&str>, entries: &[&str]) -> Vec<u8> {
    let parent = parent.map_or(String::new(), |p| format!(r#","parentSession":"{p}""#));
    let mut text = format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{created}","cwd":"/w"{parent}}}"#
    );
    for e in entries {
        text.push('\n');
        text.push_str(e);
    }
    text.push('\n');
    text.into_bytes()
}

pub(crate) const USER: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
pub(crate) const REPLY: &str = r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}"#;
const LATER: &str = r#"{"type":"message","id":"b3","parentId":"a2","timestamp":"2026-01-02T00:00:03.000Z","message":{"role":"assistant","content":[],"provider":"openai","model":"gpt","responseModel":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.25}},"stopReason":"stop","timestamp":3}}"#;

fn facts(bytes: &[u8], path: &str) -> SessionFacts {
    let s = Session::from_bytes(bytes, PiVersion::V0_87).expect("loads");
    SessionFacts::of(&s, path)
}

fn two_sessions() -> Vec<SessionFacts> {
    let parent = session("p", "2026-01-01T00:00:00.000Z", None, &[USER, REPLY]);
    let fork = session(
        "f",
        "2026-01-02T00:00:00.000Z",
        Some("/s/parent.jsonl"),
        &[USER, REPLY, LATER],
    );
    // Given newest first: the order of the input does not matter.
    vec![
        facts(&fork, "/s/fork.jsonl"),
        facts(&parent, "/s/parent.jsonl"),
    ]
}

/// The facts read from the text (the line scanner, assistant messages scanned member by
/// member) give what the value-based count gives, on the shapes where they could differ.
#[test]
fn facts_from_text_agree_with_values() {
    let odd = [
        // A null block: pi throws; usage left out, tool calls too.
        r#"{"type":"message","id":"o1","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"toolCall"},null],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":1}},"timestamp":3}}"#,
        // Usage pi cannot add (a string), tool calls still counted; escaped keys; a
        // repeated key (the last wins).
        r#"{"type":"message","id":"o2","parentId":"o1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"t\u0079pe":"toolCall"},{"type":"text","type":"toolCall"}],"usage":{"input":"1","output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":1}},"timestamp":4}}"#,
        // No content, a missing count (NaN), a responseModel that is not a string.
        r#"{"type":"message","id":"o3","parentId":"o2","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","usage":{"input":2,"cacheRead":1,"cacheWrite":0,"cost":{"total":0.5}},"responseModel":7,"model":"m","timestamp":5}}"#,
        // A tool result with usage, a message that is not an object, one without message.
        r#"{"type":"message","id":"o4","parentId":"o3","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"c","content":[],"usage":{"input":3,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"timestamp":6}}"#,
        r#"{"type":"message","id":"o5","parentId":"o4","timestamp":"2026-01-01T00:00:07.000Z","message":"text"}"#,
        r#"{"type":"message","id":"o6","parentId":"o5","timestamp":"2026-01-01T00:00:08.000Z"}"#,
    ];
    let mut entries = vec![USER, REPLY, LATER];
    entries.extend(odd);
    let bytes = session("s", "2026-01-01T00:00:00.000Z", None, &entries);
    let s = Session::from_bytes(&bytes, PiVersion::V0_87).expect("loads");
    let from_values = s.stats().expect("no cycle");
    let from_text = SessionFacts::of(&s, "s").pi_stats();
    assert_eq!(from_text.tool_calls, from_values.tool_calls);
    assert_eq!(from_text.unreadable, from_values.unreadable);
    assert_eq!(from_text.total_messages, from_values.total_messages);
    assert_eq!(from_text.to_json(), from_values.to_json());
}

/// An assistant message read from its text, in one pass, gives the fact its parsed
/// value gives, on every combination of the shapes where the two could differ.
#[test]
fn an_assistant_read_from_text_is_the_parsed_message() {
    let contents = [
        None,
        Some(r#""text""#),
        Some("[]"),
        Some(r#"[{"type":"toolCall"},{"type":"text","text":"a\"b"}]"#),
        Some(r#"[ {"type" : "toolCall" } , null ]"#),
        Some(r#"[{"t\u0079pe":"toolCall"},{"type":"text","type":"toolCall"},7,"x",[null]]"#),
        Some(r#"[{"type":"toolC\u0061ll"},{"type":{"a":1}},{"type":"toolCall","type":"text"}]"#),
    ];
    let usages = [
        None,
        Some("null"),
        Some(r#"{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}}"#),
        Some(r#"{"input":"1","output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":1}}"#),
        Some(r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}}"#),
    ];
    let names = [
        "",
        r#","provider":"p","model":"m""#,
        r#","provider":7,"model":"m","responseModel":null"#,
        r#","model":"m","responseModel":"r\u00e9","timestamp":12"#,
        r#","model":"m","responseModel":["r"],"timestamp":"x""#,
    ];
    let mut checked = 0;
    for content in contents {
        for usage in usages {
            for names in names {
                let mut body = String::from(r#"{"role":"assistant""#);
                if let Some(c) = content {
                    body += &format!(r#","content":{c}"#);
                }
                if let Some(u) = usage {
                    body += &format!(r#","usage":{u}"#);
                }
                body += names;
                // A repeated content: the last one counts.
                if content == Some("[]") {
                    body += r#","content":[{"type":"toolCall"},{"type":"toolCall"}]"#;
                }
                body += "}";
                let mut from_text = Fact::new(Kind::Message(Role::Other), None, f64::NAN);
                assert!(from_text.assistant(&body), "{body}");
                let mut from_value = Fact::new(Kind::Message(Role::Other), None, f64::NAN);
                from_value.message(&json::parse(&body).expect("valid"), Dialect::Pi);
                assert_eq!(
                    format!("{from_text:?}"),
                    format!("{from_value:?}"),
                    "{body}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 175);
    for broken in [
        r#"{"role":"assistant","content":[}"#,
        r#"{"role":"assistant"} x"#,
    ] {
        let mut fact = Fact::new(Kind::Message(Role::Other), None, f64::NAN);
        assert!(!fact.assistant(broken), "{broken}");
    }
}

#[test]
fn a_usage_spelled_with_escapes_is_found() {
    assert!(names_usage(r#"{"role":"toolResult","usage":{}}"#));
    assert!(names_usage(r#"{"role":"toolResult","\u0075sage":{}}"#));
    assert!(!names_usage(
        r#"{"role":"toolResult","content":"\u0075sage"}"#
    ));
    assert!(!names_usage(r#"{"role":"toolResult","content":"plain"}"#));
}

/// The identity of any record is the key the facts give the records that count, so
/// that other readers (the Parquet tables) own entries exactly as the report does.
#[test]
fn record_identity_is_the_fact_key() {
    let other = r#"{"type":"model_change","id":"m1","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","provider":"p","modelId":"m"}"#;
    let escaped = r#"{"type":"message","id":"\u0061\u0031","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
    let bytes = session(
        "s",
        "2026-01-01T00:00:00.000Z",
        None,
        &[USER, REPLY, other, escaped],
    );
    let s = Session::from_bytes(&bytes, PiVersion::V0_87).expect("loads");
    let mut scanner = LineScanner::default();
    let mut keys = Vec::new();
    for record in s.entry_records() {
        let key = record_identity(record, &mut scanner);
        if let Some(fact) = fact_of_record(record, Dialect::Pi, &mut scanner) {
            assert_eq!(key, fact.key, "line {}", record.line);
        }
        keys.push(key);
    }
    assert!(keys.iter().all(Option::is_some));
    assert_ne!(keys[2], keys[0]);
}

/// An entry whose id or timestamp is spelled with escapes, or whose number is spelled
/// otherwise, is the same entry as a copy that writes them as `JSON.stringify` does (what
/// pi's fork writes): one identity, read from the line or from the value.
#[test]
fn spelling_does_not_change_an_identity() {
    let plain = r#"{"type":"message","id":"b7d20e4a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
    let spelled = [
        plain.replace(r#""b7d20e4a""#, r#""b7d2\u0030e4a""#),
        plain.replace(r#"01.000Z""#, r#"01\u002e000Z""#),
        plain.replace(r#""id":"b7d20e4a""#, r#""id" : "b7d20e4a" "#),
    ];
    let numbered = plain.replace(r#""id":"b7d20e4a""#, r#""id":1.50"#);
    let number = plain.replace(r#""id":"b7d20e4a""#, r#""id":1.5"#);
    let key_of = |line: &str| {
        let bytes = session("s", "2026-01-01T00:00:00.000Z", None, &[line]);
        let s = Session::from_bytes(&bytes, PiVersion::V0_87).expect("loads");
        let record = s.entry_records().next().expect("an entry");
        let mut scanner = LineScanner::default();
        let key = record_identity(record, &mut scanner);
        let fact = fact_of_record(record, Dialect::Pi, &mut scanner).expect("a message counts");
        assert_eq!(key, fact.key, "{line}");
        let by_value = fact_of_value(
            Kind::Message(Role::User),
            "message",
            &record.value(),
            Dialect::Pi,
        );
        assert_eq!(key, by_value.key, "{line}");
        key
    };
    let key = key_of(plain);
    assert!(key.is_some());
    for line in &spelled {
        assert_eq!(key_of(line), key, "{line}");
    }
    assert_eq!(key_of(&numbered), key_of(&number));
    assert_ne!(key_of(&number), key);
}

#[test]
fn a_fork_counts_only_what_it_added() {
    let r = report(two_sessions(), &Options::default());
    let names: Vec<_> = r.groups.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["/s/parent.jsonl", "/s/fork.jsonl"]);
    let (parent, fork) = (&r.groups[0].1, &r.groups[1].1);
    assert_eq!((parent.messages, parent.message_usage.cost), (2, 0.5));
    assert_eq!((fork.messages, fork.message_usage.cost), (1, 0.25));
    assert_eq!((r.copies.messages, r.copies.message_usage.cost), (2, 0.5));
    assert_eq!(r.total.usage().cost, 0.75);
    assert_eq!((r.total.sessions, r.forked_sessions), (2, 1));
}

#[test]
fn no_dedupe_adds_every_copy() {
    let options = Options {
        no_dedupe: true,
        ..Options::default()
    };
    let r = report(two_sessions(), &options);
    assert_eq!(r.total.usage().cost, 1.25);
    assert_eq!(r.copies, Report::default().copies);
}

#[test]
fn groups_by_model_day_and_range() {
    let by_model = report(
        two_sessions(),
        &Options {
            by: GroupBy::Model,
            ..Options::default()
        },
    );
    let names: Vec<_> = by_model.groups.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["-", "anthropic/claude", "openai/gpt-5"]);
    let by_day = report(
        two_sessions(),
        &Options {
            by: GroupBy::Day,
            since_ms: Some(date::parse_date("2026-01-02")),
            ..Options::default()
        },
    );
    assert_eq!(by_day.groups.len(), 1);
    assert_eq!(by_day.groups[0].0, "2026-01-02");
    assert_eq!(by_day.total.assistant_messages, 1);
}

/// With a range, a session with nothing in it is left out: no group of its own, not in
/// `total.sessions` nor among the forked ones (as `@ccusage/pi` lists sessions); without one,
/// every session is listed, those with nothing too.
#[test]
fn a_range_leaves_out_the_sessions_with_nothing_in_it() {
    let header_only = session("h", "2026-01-03T00:00:00.000Z", None, &[]);
    let mut sessions = two_sessions();
    sessions.push(facts(&header_only, "/s/empty.jsonl"));
    let names = |r: &Report| -> Vec<String> { r.groups.iter().map(|(n, _)| n.clone()).collect() };
    let all = report(sessions.clone(), &Options::default());
    assert_eq!(
        names(&all),
        ["/s/parent.jsonl", "/s/fork.jsonl", "/s/empty.jsonl"]
    );
    assert_eq!((all.total.sessions, all.forked_sessions), (3, 1));
    // Only the fork wrote on 2026-01-02.
    let since = Options {
        since_ms: Some(date::parse_date("2026-01-02")),
        ..Options::default()
    };
    let r = report(sessions.clone(), &since);
    assert_eq!(names(&r), ["/s/fork.jsonl"]);
    assert_eq!((r.total.sessions, r.forked_sessions), (1, 1));
    assert_eq!(r.groups[0].1.sessions, 1);
    assert_eq!(r.total.assistant_messages, 1);
    // Before 2026-01-02: the parent, and the fork whose copies fall in the range (it is
    // listed, with nothing of its own, as without a range).
    let until = Options {
        until_ms: Some(date::parse_date("2026-01-02")),
        ..Options::default()
    };
    let r = report(sessions.clone(), &until);
    assert_eq!(names(&r), ["/s/parent.jsonl", "/s/fork.jsonl"]);
    assert_eq!((r.total.sessions, r.forked_sessions), (2, 1));
    assert_eq!(r.groups[1].1.messages, 0);
    assert_eq!(r.copies.sessions, 1);
    // By project the count is the same; a range with nothing in it counts no session.
    let by_project = report(
        sessions.clone(),
        &Options {
            by: GroupBy::Project,
            ..since.clone()
        },
    );
    assert_eq!(by_project.total.sessions, 1);
    assert_eq!(by_project.groups[0].1.sessions, 1);
    let nothing = report(
        sessions,
        &Options {
            since_ms: Some(date::parse_date("2030-01-01")),
            ..Options::default()
        },
    );
    assert!(nothing.groups.is_empty());
    assert_eq!((nothing.total.sessions, nothing.forked_sessions), (0, 0));
}

#[test]
fn names_are_made_and_shared_once() {
    let mut names = Names::default();
    let a = names.of_bytes(b"anthropic").unwrap();
    assert!(Arc::ptr_eq(&a, &names.of_bytes(b"anthropic").unwrap()));
    assert_eq!(&*names.of_bytes(b"openai").unwrap(), "openai");
    assert_eq!(names.of_bytes(b"\xff"), None, "not UTF-8: not a name");
    // A name made elsewhere becomes the one kept.
    let mut other: Option<Arc<str>> = Some(Arc::from("anthropic"));
    names.share(&mut other);
    assert!(Arc::ptr_eq(&a, other.as_ref().unwrap()));
    let mut none = None;
    names.share(&mut none);
    assert_eq!(none, None);
    // Past the names kept, each is made again, and is still itself.
    for i in 0..Names::KEPT * 2 {
        let name = format!("model-{i}");
        assert_eq!(&*names.of_bytes(name.as_bytes()).unwrap(), name);
        let mut made = Some(Arc::from(name.as_str()));
        names.share(&mut made);
        assert_eq!(made.as_deref(), Some(name.as_str()));
    }
    assert_eq!(names.0.len(), Names::KEPT);
    assert!(Arc::ptr_eq(&a, &names.of_bytes(b"anthropic").unwrap()));
}

#[test]
fn a_session_s_facts_share_their_names() {
    let text = session(
        "s",
        "2025-01-01T00:00:00.000Z",
        None,
        &[
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
        ],
    );
    let session = Session::loader(PiVersion::V0_87).load(&text).unwrap();
    let facts = SessionFacts::of(&session, "s.jsonl").facts;
    assert_eq!(facts.len(), 2);
    for pick in [|f: &Fact| f.provider.clone(), |f: &Fact| f.model.clone()] {
        let (first, second) = (pick(&facts[0]).unwrap(), pick(&facts[1]).unwrap());
        assert!(Arc::ptr_eq(&first, &second), "{first} made twice");
    }
}

/// A ledger resumed from its checkpoint after any session, given the rest, reports to the
/// last bit what one pass over all of them reports: for every grouping, with and without the
/// dedupe, with and without a range.
#[test]
fn a_ledger_resumed_from_a_checkpoint_reports_what_one_pass_does() {
    // Costs whose sum depends on the order they are added in.
    let costly = |id: &str, parent: &str, day: &str, model: &str, cost: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-{day}T00:00:00.000Z","message":{{"role":"assistant","content":[],"provider":"p","model":"{model}","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"total":{cost}}}}},"stopReason":"stop","timestamp":1}}}}"#
        )
    };
    let mut sessions = two_sessions();
    sessions.push(facts(
        &session("h", "2026-01-03T00:00:00.000Z", None, &[]),
        "/s/empty.jsonl",
    ));
    for (n, cost) in ["0.1", "1e16", "0.2", "0.3"].iter().enumerate() {
        let a = costly(&format!("x{n}"), "a2", "02", "m", cost);
        let b = costly(&format!("y{n}"), &format!("x{n}"), "04", "n", "0.7");
        sessions.push(facts(
            &session(
                &format!("s{n}"),
                &format!("2026-01-0{}T00:00:00.000Z", n + 4),
                None,
                &[USER, &a, &b],
            ),
            &format!("/s/{n}.jsonl"),
        ));
    }
    let mut sorted = sessions.clone();
    sorted.sort_by(|a, b| session_order((a.created_ms, &a.path), (b.created_ms, &b.path)));
    let ranges = [
        (None, None),
        (Some(date::parse_date("2026-01-02")), None),
        (None, Some(date::parse_date("2026-01-04"))),
    ];
    for by in GroupBy::ALL {
        for no_dedupe in [false, true] {
            for (since_ms, until_ms) in ranges {
                let options = Options {
                    by,
                    since_ms,
                    until_ms,
                    no_dedupe,
                };
                let whole = format!("{:?}", report(sessions.clone(), &options));
                for k in 0..=sorted.len() {
                    let mut first = Ledger::new(&options, 0);
                    for s in &sorted[..k] {
                        first.add(s);
                    }
                    let checkpoint = first.checkpoint();
                    assert_eq!(checkpoint.sessions, k as u64);
                    assert!(checkpoint.seen.is_sorted());
                    let mut rest = Ledger::resume(&options, checkpoint, 0);
                    for s in &sorted[k..] {
                        rest.add(s);
                    }
                    assert_eq!(rest.sessions(), sorted.len() as u64);
                    assert_eq!(
                        format!("{:?}", rest.finish()),
                        whole,
                        "{by:?} no_dedupe {no_dedupe} {since_ms:?}..{until_ms:?}, resumed after {k}"
                    );
                }
            }
        }
    }
}
