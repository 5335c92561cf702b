//! `pi-session search`: matches in every kind of text with file, line, entry, role and branch,
//! `--role`, `-i`, `-l`, JSON Lines, colors, escaped snippets, and ripgrep's exit codes.

use crate::adversarial::common::*;
use serde_json::Value;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

const SESSION: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Why does the Checkout test fail?","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"run the checkout test"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"npm test checkout"}}],"timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"FAIL checkout \u001b[31mred\u001b[0m"}],"isError":true,"timestamp":3}}
{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"an abandoned checkout branch"}],"timestamp":4}}
"#;

fn hits(args: &[&str]) -> (Vec<Value>, Run) {
    let mut all = vec!["search", "--format", "json"];
    all.extend_from_slice(args);
    let r = run(&all, T);
    let hits = r
        .stdout_text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (hits, r)
}

#[test]
fn matches_say_where_they_are() {
    let dir = scratch("search-basic");
    let file = write(&dir, "s.jsonl", SESSION);
    let (found, r) = hits(&["checkout", s(&file)]);
    r.assert_code(0);
    let places: Vec<(u64, &str, &str, bool)> = found
        .iter()
        .map(|h| {
            (
                h["line"].as_u64().unwrap(),
                h["role"].as_str().unwrap(),
                h["field"].as_str().unwrap(),
                h["onPath"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            (3, "assistant", "thinking", false),
            (3, "assistant", "toolCall", false),
            (4, "tool", "toolResult", false),
            (5, "assistant", "text", true),
        ]
    );
    // -i finds the user's "Checkout" too; --role narrows.
    let (found, _) = hits(&["-i", "checkout", "--role", "user", s(&file)]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], "a1");
    // Control characters of the file are escaped in the snippet.
    let human = run(&["search", "FAIL", s(&file), "--color", "never"], T);
    human.assert_code(0);
    assert!(
        !human.stdout_text().contains('\u{1b}'),
        "{}",
        human.stdout_text()
    );
    assert!(
        human
            .stdout_text()
            .contains(":a3:tool: FAIL checkout \\x1b[31mred")
    );
    // --color always paints the match.
    let colored = run(&["search", "FAIL", s(&file), "--color", "always"], T);
    assert!(colored.stdout_text().contains("\u{1b}["));
}

#[test]
fn files_with_matches_and_exit_codes() {
    let dir = scratch("search-exit");
    let file = write(&dir, "s.jsonl", SESSION);
    write(&dir, "other.jsonl", SESSION.replace("checkout", "cart"));
    let l = run(&["search", "-l", "checkout", s(&dir)], T);
    l.assert_code(0);
    assert_eq!(l.stdout_text().lines().collect::<Vec<_>>(), [s(&file)]);
    run(&["search", "nothing-like-this", s(&dir)], T).assert_code(1);
    let bad = run(&["search", "(", s(&dir)], T);
    bad.assert_code(2);
    assert!(bad.stderr.contains("not a regular expression"));
    write(&dir, "broken.jsonl", "not json\n");
    let r = run(&["search", "checkout", s(&dir)], T);
    r.assert_code(2);
    assert!(r.stderr.contains("broken.jsonl"), "{}", r.stderr);
    assert!(
        r.stdout_text().contains("s.jsonl:"),
        "the other files are still searched"
    );
    // A file the pattern is not in has only its header read, which still fails it: -l too,
    // and a v2 file (migrated on loading) is loaded.
    write(
        &dir,
        "headless.jsonl",
        "{\"type\":\"message\",\"id\":\"x\"}\n",
    );
    write(
        &dir,
        "v2.jsonl",
        SESSION.replace("\"version\":3", "\"version\":2"),
    );
    let r = run(&["search", "-l", "checkout", s(&dir)], T);
    r.assert_code(2);
    assert!(r.stderr.contains("headless.jsonl"), "{}", r.stderr);
    assert!(!r.stderr.contains("other.jsonl"), "{}", r.stderr);
    let stdout = r.stdout_text();
    let mut listed: Vec<&str> = stdout.lines().collect();
    listed.sort_unstable();
    let v2 = dir.join("v2.jsonl");
    assert_eq!(listed, [s(&file), s(&v2)]);
}

/// What JSON escapes in the file (quotes, newlines, `\u` escapes) is matched as the text holds
/// it: the raw-line shortcut is only taken where it cannot miss.
#[test]
fn escaped_text_is_matched_as_it_reads() {
    let dir = scratch("search-escapes");
    let file = write(
        &dir,
        "s.jsonl",
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"say \"hi\"\nthen caf\u00e9 and back\\slash","timestamp":1}}
"#,
    );
    for pattern in [
        r#""hi""#,
        r"hi.\nthen",
        "café",
        r"back\\slash",
        "^say",
        r"\bthen",
    ] {
        let (found, r) = hits(&[pattern, s(&file)]);
        r.assert_code(0);
        assert_eq!(found.len(), 1, "{pattern}");
    }
    run(&["search", "hi then", s(&file)], T).assert_code(1);
}

/// Texts that read otherwise than their line: a slash written `\/`, and a tool call's text
/// (its name, a space, its arguments as `JSON.stringify` writes them), whatever the line's
/// spacing, numbers and key order.
#[test]
fn made_up_and_slashed_texts_are_matched_as_they_read() {
    let dir = scratch("search-made-up");
    let file = write(
        &dir,
        "s.jsonl",
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"open src\/main.rs","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{"command": "ls", "n": 1.50, "2": 0}}],"timestamp":2}}
"#,
    );
    for (pattern, line) in [
        ("src/main", 2),
        (r"bash \{", 3),
        (r"1\.5\}", 3),
        (r#"\{"2":0,"command""#, 3),
    ] {
        let (found, r) = hits(&[pattern, s(&file)]);
        r.assert_code(0);
        assert_eq!(found.len(), 1, "{pattern}");
        assert_eq!(found[0]["line"], line, "{pattern}");
    }
}

/// A FIFO is read as a stream; an odd file name is shown escaped.
#[test]
fn a_fifo_and_an_odd_name() {
    let dir = scratch("search-hostile");
    let fifo = dir.join("live.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, SESSION).unwrap())
    };
    let r = run(&["search", "Checkout", s(&fifo)], T);
    writer.join().unwrap();
    r.assert_code(0);
    let odd = dir.join("odd\nname.jsonl");
    std::fs::write(&odd, SESSION).unwrap();
    let r = run(
        &["search", "-l", "Checkout", s(&odd), "--color", "never"],
        T,
    );
    r.assert_code(0);
    assert_eq!(
        r.stdout_text(),
        format!("{}\n", s(&dir.join("odd\\nname.jsonl")))
    );
}

/// Many matches in one text, among characters of one to four bytes: each snippet is the 40
/// characters before and after its match, as counting from the start of the text gives.
#[test]
fn many_matches_in_one_text_keep_their_snippets() {
    let dir = scratch("search-many");
    let text: String = (0..400)
        .map(|i| format!("é{i}🦀 ab{} x ", "·".repeat(i % 50)))
        .collect();
    let file = write(
        &dir,
        "s.jsonl",
        format!(
            "{}{}\n",
            SESSION.lines().next().unwrap(),
            format_args!(
                "\n{{\"type\":\"message\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":{},\"timestamp\":1}}}}",
                serde_json::to_string(&text).unwrap()
            )
        ),
    );
    for pattern in ["x", "ab·*", "🦀|é"] {
        let (found, r) = hits(&[pattern, s(&file)]);
        r.assert_code(0);
        let regex = regex::Regex::new(pattern).unwrap();
        let expected: Vec<(String, String, String)> = regex
            .find_iter(&text)
            .map(|m| {
                let head = &text[..m.start()];
                let n = head.chars().count();
                (
                    head.chars().skip(n.saturating_sub(40)).collect(),
                    m.as_str().to_owned(),
                    text[m.end()..].chars().take(40).collect(),
                )
            })
            .collect();
        assert!(expected.len() >= 400, "{pattern}");
        let got: Vec<(String, String, String)> = found
            .iter()
            .map(|h| {
                let s = |k: &str| h[k].as_str().unwrap().to_owned();
                (s("before"), s("match"), s("after"))
            })
            .collect();
        assert_eq!(got, expected, "{pattern}");
    }
}

/// An oh-my-pi file is searched in its dialect: its title slot (line 1) is not taken for a
/// broken header, and lines keep their numbers in the file.
#[test]
fn an_omp_file_is_searched_in_its_dialect() {
    let file = root().join("conformance/cases/omp/title-slot-is-not-an-entry/session.jsonl");
    let (found, r) = hits(&["login bug", s(&file)]);
    r.assert_code(0);
    assert_eq!(found.len(), 1, "{}", r.stderr);
    assert_eq!(found[0]["line"], 3, "the slot is line 1, the header line 2");
    assert_eq!(found[0]["role"], "user");
    // Read as pi's, the file is not a session: said, exit 2.
    let (found, r) = hits(&["--dialect", "pi", "login bug", s(&file)]);
    assert!(found.is_empty());
    assert!(r.stderr.contains("oh-my-pi"), "{}", r.stderr);
}
