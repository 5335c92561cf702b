//! The tests of `line`: the walk, decoding, torn lines, keys, structure, and inputs that once
//! took time as their square.

use super::*;

#[test]
fn walk_classifies_strings() {
    let line = br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AAAA","mimeType":"image/jpeg"}],"timestamp":1}}"#;
    let mut got: Vec<(String, Class)> = Vec::new();
    let redactor = crate::Redactor::new(
        crate::Options::default(),
        crate::Key::from_bytes(b"0123456789abcdef").unwrap(),
    );
    walk(line, false, |_, _, class, path| {
        if class != Class::Key {
            got.push((redactor.render_path(line, path), class));
        }
    })
    .unwrap_or_else(|_| panic!("walks"));
    assert_eq!(
        got,
        [
            ("type".to_owned(), Class::Structural),
            ("id".to_owned(), Class::Structural),
            ("message.role".to_owned(), Class::Structural),
            ("message.content[0].type".to_owned(), Class::Structural),
            ("message.content[0].text".to_owned(), Class::Text),
            ("message.content[1].type".to_owned(), Class::Structural),
            ("message.content[1].data".to_owned(), Class::ImageData),
            ("message.content[1].mimeType".to_owned(), Class::ImageType),
        ]
    );
}

#[test]
fn walk_refuses_what_is_not_one_value() {
    let cases: [(&[u8], bool); 11] = [
        (b"hello", false),
        (b"{\"a\":1", false),
        (b"{\"a\":1}x", false),
        (b"[1,}", false),
        (b"{\"a\" 1}", false),
        (b"\"abc", false),
        (b"{}", true),
        (b"[]", true),
        (b"1", true),
        (b"\"s\"", true),
        (b" {\"a\":[true,false,null,-1.5e3]} ", true),
    ];
    for (text, json) in cases {
        let walked = walk(text, false, |_, _, _, _| {});
        assert_eq!(walked.is_ok(), json, "{}", String::from_utf8_lossy(text));
    }
}

#[test]
fn unescape_agrees_with_json_parse() {
    for raw in [
        r#"plain"#,
        r#"a\nb\tc\\d\/e\"f\b\f\r"#,
        r#"\u0041KIA\u00e9\u20ac"#,
        r#"pair \ud83d\ude00 end"#,
        r#"lone \ud83d end"#,
        r#"lone low \ude00 x"#,
        r#"high then high \ud83d\ud83d\ude00"#,
        r#"\u12"#,
    ] {
        let mut out = Vec::new();
        let ours = unescape(raw.as_bytes(), &mut out).map(|()| out);
        let theirs = match pi_session_json::parse(&format!("\"{raw}\"")) {
            Ok(pi_session_json::JsValue::String(s)) => Some(s.as_wtf8().to_vec()),
            _ => None,
        };
        assert_eq!(ours, theirs, "{raw}");
    }
}
fn redacted(line: &[u8]) -> (String, Vec<Finding>) {
    redacted_with(line, crate::Options::default())
}

#[test]
fn a_torn_line_is_decoded_piece_by_piece() {
    let (out, findings) = redacted(
        br#"{"type":"message","message":{"content":[{"type":"text","text":"$ cat keys\nAKIAQWERTYUI234567ZX\n\u0041KIAQWERTYUI234567ZY and \q"#,
    );
    assert!(!out.contains("QWERTYUI234567Z"), "{out}");
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        out.ends_with(r#"and \\q"#),
        "the unclosed piece stays unclosed: {out}"
    );
    let (out, _) = redacted(b"plain text ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12 \"");
    assert!(!out.contains("ghp_"), "{out}");
}

#[test]
fn a_key_that_is_a_secret_is_redacted_and_never_reported() {
    let (out, findings) = redacted(
        br#"{"type":"custom","data":{"tokens":{"ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12":"x"}}}"#,
    );
    assert!(!out.contains("ghp_"), "{out}");
    let shown = format!("{findings:?}");
    assert!(!shown.contains("ghp_"), "{shown}");
    assert_eq!(findings[0].path, "data.tokens (a key)");
}

#[test]
fn lenient_unescape_keeps_what_is_not_an_escape() {
    let mut out = Vec::new();
    unescape_lenient(br"a\qb\u12\n\", &mut out);
    assert_eq!(out, b"a\\qb\\u12\n\\");
}

fn redacted_with(line: &[u8], options: crate::Options) -> (String, Vec<Finding>) {
    let redactor = crate::Redactor::new(
        options,
        crate::Key::from_bytes(b"0123456789abcdef").unwrap(),
    );
    let mut out = Vec::new();
    let mut findings = Vec::new();
    let mut scratch = Scratch::default();
    if !redactor.redact_line(line, 1, &mut out, &mut findings, &mut scratch) {
        out = line.to_vec();
    }
    (String::from_utf8(out).unwrap(), findings)
}

const PAT: &str = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u";

#[test]
fn a_value_is_searched_with_its_key() {
    let (out, findings) = redacted(
        br#"{"type":"message","id":"a1","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"login","arguments":{"password":"Xk9mP2vL7qR4wZ8nT","api_key":"aB3dE6gH9jK2mN5pQ8sT1x","aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8W3kLmN2"}}]}}"#,
    );
    for secret in [
        "Xk9mP2vL7qR4wZ8nT",
        "aB3dE6gH9jK2mN5pQ8sT1x",
        "wJalrXUtnFEMI",
    ] {
        assert!(!out.contains(secret), "{secret} in {out}");
    }
    assert_eq!(findings.len(), 3, "{findings:?}");
    assert!(
        out.contains(r#""password":"[REDACTED:generic-api-key:"#),
        "{out}"
    );
}

#[test]
fn a_string_with_an_invalid_escape_is_still_searched() {
    for line in [
        format!(r#"{{"type":"message","message":{{"content":"my key {PAT} \q"}}}}"#),
        format!(r#"{{"type":"message","message":{{"content":"my key {PAT} \u12G4"}}}}"#),
    ] {
        let (out, _) = redacted(line.as_bytes());
        assert!(!out.contains(PAT), "{out}");
    }
}

#[test]
fn structure_is_only_where_pi_puts_it() {
    // A signature's name in custom data, an `id` in JSON held in a string: searched.
    let (out, _) = redacted(
        format!(r#"{{"type":"custom","customType":"x","data":{{"thinkingSignature":"{PAT}"}},"id":"e"}}"#)
            .as_bytes(),
    );
    assert!(!out.contains(PAT), "{out}");
    let options = crate::Options {
        named: vec![b"pass/w0rd-Zq9".to_vec()],
        ..crate::Options::default()
    };
    let line = br#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"{\"id\":\"pass\\/w0rd-Zq9\",\"token\":\"x\"}"}]}}"#;
    let (out, _) = redacted_with(line, options);
    assert!(!out.contains("w0rd-Zq9"), "{out}");
}

#[test]
fn glued_lines_are_searched_as_json_too() {
    let one = r#"{"type":"message","message":{"content":[{"type":"text","text":"{\"cfg\":\"aws_secret_access_key = wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYzq8W3kLmN2\"}"}]}}"#;
    let (alone, _) = redacted(one.as_bytes());
    assert!(!alone.contains("wJalrXUtnFEMI"), "{alone}");
    let (glued, _) = redacted(format!("{one}{one}").as_bytes());
    assert!(!glued.contains("wJalrXUtnFEMI"), "{glued}");
}

#[test]
fn pi_keys_are_never_rewritten() {
    let options = crate::Options {
        named: vec![b"type".to_vec(), b"text".to_vec(), b"role".to_vec()],
        ..crate::Options::default()
    };
    let line = br#"{"type":"message","id":"a1","message":{"role":"user","content":[{"type":"text","text":"the type of role"}]}}"#;
    let (out, _) = redacted_with(line, options);
    let value = pi_session_json::parse(&out).unwrap();
    assert!(
        pi_session_json::is_str(value.get("type"), "message"),
        "{out}"
    );
    assert!(out.starts_with(r#"{"type":"message","id":"a1","message":{"role":"user","content":[{"type":"text","text":"the [REDACTED:named-secret:"#), "{out}");
}

#[test]
fn a_report_never_shows_a_candidate_key_or_a_deep_path_whole() {
    let (_, findings) = redacted(
        format!(r#"{{"type":"custom","data":{{"Xq7rT2mZp9LkV4nB8wQe3YhJ6sDf":"{PAT}"}}}}"#)
            .as_bytes(),
    );
    let shown = format!("{findings:?}");
    assert!(!shown.contains("Xq7rT2mZp9LkV4nB8wQe3YhJ6sDf"), "{shown}");
    let deep = format!("{}\"{PAT}\"{}", "[".repeat(10_000), "]".repeat(10_000));
    let (_, findings) = redacted(deep.as_bytes());
    assert_eq!(findings.len(), 1);
    assert!(findings[0].path.len() < 200, "{}", findings[0].path.len());
}

#[test]
fn every_member_name_of_the_schemas_is_a_pi_key() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // a packaged crate has no schemas beside it
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".schema.json") || name.starts_with("validate-report") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let value = pi_session_json::parse(&text).unwrap();
        let mut stack = vec![&value];
        while let Some(v) = stack.pop() {
            match v {
                pi_session_json::JsValue::Object(o) => {
                    for (k, v) in o.iter() {
                        if k.to_string_lossy() == "properties"
                            && let Some(props) = v.as_object()
                        {
                            names.extend(props.iter().map(|(k, _)| k.to_string_lossy()));
                        }
                        stack.push(v);
                    }
                }
                pi_session_json::JsValue::Array(a) => stack.extend(a.0.iter()),
                _ => {}
            }
        }
    }
    assert!(names.len() > 50);
    let missing: Vec<&String> = names.iter().filter(|n| !is_pi_key(n.as_bytes())).collect();
    assert!(missing.is_empty(), "add to PI_KEYS: {missing:?}");
    assert!(
        PI_KEYS.windows(2).all(|w| w[0] < w[1]),
        "PI_KEYS sorted, for binary_search"
    );
}

#[test]
fn inputs_that_once_took_time_as_their_square_do_not() {
    // Each of these took minutes at a megabyte (a regex per keyword over the rest, an
    // allowlist over the whole one-line string per find, a placeholder search per hit).
    let key_run = format!(
        r#"{{"type":"custom","data":{{"v":"apikey={}"}}}}"#,
        "key=".repeat(60_000)
    );
    let one_line_prose = format!(
        r#"{{"type":"custom","data":{{"v":"{}"}}}}"#,
        "the api key: aB3dE6gH9jK2mN5pQ8sT1x, token = Zq8xT4mW2nR7vB5k; ".repeat(5_000)
    );
    let placeholders = format!(
        r#"{{"type":"custom","data":{{"v":"{PAT} {}"}}}}"#,
        "[REDACTED:a] abcd ".repeat(12_000)
    );
    for line in [key_run, one_line_prose, placeholders] {
        let (out, _) = redacted(line.as_bytes());
        assert!(!out.contains(PAT));
    }
}
