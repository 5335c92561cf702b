//! `pi-session redact`: secrets replaced by placeholders in standard output, `-o OUT` and
//! `--in-place` (with `--backup`), the report (human on stderr or stdout, `--format json`)
//! that names rules and places but never a secret, exit codes, `--dry-run`, `--secret` and
//! `--secrets-from`, `--key-file` (stable placeholders), escaped secrets and secrets in JSON
//! held in strings, `--strip-signatures`, `--strip-images`, `--aggressive` and its
//! candidates, and the hostile cases: symlinks, hard links, read-only files, FIFOs, standard
//! input, directories, odd names, a full disk, v1 and v2 files (not migrated), omp files
//! (their title slot kept at its width), torn lines, a run killed in place and a file growing
//! while it is redacted.
//!
//! Long file: one command's whole contract, the hostile cases beside the ordinary ones, all
//! over the same few session builders and report checks at the top; split, those would move
//! to a module of their own for one user.

use crate::adversarial::common::*;
use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

const T: Duration = Duration::from_secs(60);

/// A GitHub personal access token (rule `github-pat`).
const GITHUB_PAT: &str = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u";
/// An AWS access key id (rule `aws-access-token`).
const AWS_KEY_ID: &str = "AKIAQWERTYUI234567ZX";
/// The password of [`DATABASE_URL`] (rule `url-password`).
const URL_PASSWORD: &str = "S3cr3tPassw0rd9";
const DATABASE_URL: &str = "postgres://app:S3cr3tPassw0rd9@db.internal:5432/app";
/// A Slack bot token (rule `slack-bot-token`).
const SLACK_TOKEN: &str = "xoxb-2048573920-1846293058-Rk4nW8pQ2sT6vY9zB3mH7jLc";
/// Every secret [`secrets_session`] holds.
const SECRETS: [&str; 4] = [GITHUB_PAT, AWS_KEY_ID, URL_PASSWORD, SLACK_TOKEN];

const SESSION_ID: &str = "0195f3a4-0000-7000-8000-000000000001";
const USAGE: &str = r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.01,"output":0.02,"cacheRead":0,"cacheWrite":0,"total":0.03}}"#;

fn header() -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{SESSION_ID}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}}"#
    )
}

/// A user message; `text` goes between the quotes as it is (already JSON-escaped).
fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("{p:?}"));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

/// An assistant message whose content array holds `blocks` (raw JSON).
fn assistant(id: &str, parent: &str, blocks: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{blocks}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{USAGE},"stopReason":"toolUse","timestamp":2}}}}"#
    )
}

fn lines(lines: &[String]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A v3 session with four secrets on lines 4 and 5 and none elsewhere.
fn secrets_session() -> String {
    lines(&[
        header(),
        r#"{"type":"model_change","id":"m0000001","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#.to_owned(),
        user("a1b2c3d4", Some("m0000001"), "hello there, deploy the app"),
        user(
            "b1b2c3d4",
            Some("a1b2c3d4"),
            &format!("my token is {GITHUB_PAT} and the key {AWS_KEY_ID}"),
        ),
        assistant(
            "c1b2c3d4",
            "b1b2c3d4",
            &format!(
                r#"{{"type":"text","text":"Connecting to {DATABASE_URL}"}},{{"type":"toolCall","id":"toolu_01","name":"bash","arguments":{{"command":"export SLACK={SLACK_TOKEN}; ./deploy.sh"}}}}"#
            ),
        ),
        user("d1b2c3d4", Some("c1b2c3d4"), "thanks, bye"),
    ])
}

/// `pi-session redact ARGS`.
fn redact(args: &[&str]) -> Run {
    let mut all = vec!["redact"];
    all.extend_from_slice(args);
    run(&all, T)
}

/// `pi-session redact ARGS` with arguments that need not be UTF-8.
fn redact_os(args: &[&OsStr]) -> Run {
    let mut command = bin();
    command.arg("redact").args(args);
    run_limited(command, None, T)
}

/// `pi-session redact ARGS < stdin`.
fn redact_stdin(args: &[&str], stdin: &[u8]) -> Run {
    let mut command = bin();
    command.arg("redact").args(args);
    run_limited(command, Some(stdin), T)
}

/// The `(rule, hash)` of every placeholder in `text`, checking each has the documented form.
fn placeholders(text: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r"\[REDACTED:([^:\]]+):([^\]]*)\]").unwrap();
    let strict = regex::Regex::new(r"^[a-z0-9-]+$").unwrap();
    re.captures_iter(text)
        .map(|c| {
            let (rule, hash) = (c[1].to_owned(), c[2].to_owned());
            assert!(strict.is_match(&rule), "rule id {rule:?} in {text}");
            assert!(
                hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
                "hash {hash:?} is not 8 hex digits"
            );
            (rule, hash)
        })
        .collect()
}

/// Asserts none of `secrets` is in `bytes`.
#[track_caller]
fn assert_no_secret(what: &str, bytes: &[u8], secrets: &[&str]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in secrets {
        assert!(!text.contains(secret), "{what} holds {secret:?}:\n{text}");
    }
}

/// Asserts two sessions have the same lines with the same structure: every member that gives
/// a session its shape (types, ids, parents, timestamps, roles, usage, block types and ids).
#[track_caller]
fn assert_same_structure(before: &[u8], after: &[u8]) {
    let before: Vec<&[u8]> = before.split_inclusive(|&b| b == b'\n').collect();
    let after: Vec<&[u8]> = after.split_inclusive(|&b| b == b'\n').collect();
    assert_eq!(before.len(), after.len(), "the same number of lines");
    for (n, (b, a)) in before.iter().zip(&after).enumerate() {
        let (Ok(b), Ok(a)) = (
            serde_json::from_slice::<Value>(b),
            serde_json::from_slice::<Value>(a),
        ) else {
            panic!("line {}: not JSON before or after", n + 1);
        };
        for key in [
            "type",
            "version",
            "id",
            "parentId",
            "timestamp",
            "provider",
            "modelId",
        ] {
            assert_eq!(b.get(key), a.get(key), "line {}: {key}", n + 1);
        }
        let (Some(bm), Some(am)) = (b.get("message"), a.get("message")) else {
            continue;
        };
        for key in [
            "role",
            "api",
            "provider",
            "model",
            "usage",
            "stopReason",
            "timestamp",
            "toolCallId",
            "toolName",
        ] {
            assert_eq!(bm.get(key), am.get(key), "line {}: message.{key}", n + 1);
        }
        if let (Some(Value::Array(bc)), Some(Value::Array(ac))) =
            (bm.get("content"), am.get("content"))
        {
            assert_eq!(bc.len(), ac.len(), "line {}: content blocks", n + 1);
            for (bb, ab) in bc.iter().zip(ac) {
                for key in ["type", "id", "name"] {
                    assert_eq!(bb.get(key), ab.get(key), "line {}: block {key}", n + 1);
                }
            }
        }
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A key file of `len` bytes.
fn key_file(dir: &Path, name: &str, len: usize) -> PathBuf {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
    write(dir, name, bytes)
}

/// Sets a file's modification time an hour back, so that any write shows.
fn age(path: &Path) -> SystemTime {
    let old = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn one_file_goes_to_stdout_and_the_report_to_stderr() {
    let dir = scratch("redact-stdout");
    let text = secrets_session();
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_no_secret("stderr", r.stderr.as_bytes(), &SECRETS);
    // Every line without a secret is as it was; the others hold placeholders.
    let out = r.stdout_text();
    assert_eq!(out.lines().count(), text.lines().count());
    assert!(out.ends_with('\n'));
    for (n, (before, after)) in text.lines().zip(out.lines()).enumerate() {
        if SECRETS.iter().any(|secret| before.contains(secret)) {
            assert_ne!(before, after, "line {}", n + 1);
        } else {
            assert_eq!(before, after, "line {} is byte-identical", n + 1);
        }
    }
    let mut rules: Vec<String> = placeholders(&out).into_iter().map(|(r, _)| r).collect();
    rules.sort();
    assert_eq!(
        rules,
        [
            "aws-access-token",
            "github-pat",
            "slack-bot-token",
            "url-password"
        ]
    );
    // What is not secret around them stays.
    assert!(
        out.contains("postgres://app:[REDACTED:url-password:"),
        "{out}"
    );
    assert!(out.contains("@db.internal:5432/app"), "{out}");
    assert!(
        out.contains("export SLACK=[REDACTED:slack-bot-token:"),
        "{out}"
    );
    assert_same_structure(text.as_bytes(), &r.stdout);
    // The report: on stderr, by rule and by place.
    let err = &r.stderr;
    assert!(
        err.contains(&format!(
            "{}: 4 redacted (aws-access-token 1, github-pat 1, slack-bot-token 1, url-password 1)",
            s(&file)
        )),
        "{err}"
    );
    assert!(
        err.contains("line 4, entry b1b2c3d4, message.content: github-pat (redacted)"),
        "{err}"
    );
    assert!(
        err.contains("line 5, entry c1b2c3d4, message.content[0].text: url-password (redacted)"),
        "{err}"
    );
    assert!(
        err.contains(
            "line 5, entry c1b2c3d4, message.content[1].arguments.command: slack-bot-token (redacted)"
        ),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        text,
        "the input is untouched"
    );
}

#[test]
fn nothing_to_redact_changes_nothing() {
    let dir = scratch("redact-nothing");
    let text = lines(&[
        header(),
        user("a1b2c3d4", None, "hello there, please list the files"),
        assistant(
            "b1b2c3d4",
            "a1b2c3d4",
            r#"{"type":"toolCall","id":"toolu_01","name":"bash","arguments":{"command":"ls -la /home/me/project"}}"#,
        ),
    ]);
    let file = write(&dir, "clean.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(0);
    assert_eq!(r.stdout, text.as_bytes(), "byte-identical");
    assert!(
        r.stderr.contains(&format!("{}: nothing found", s(&file))),
        "{}",
        r.stderr
    );
    redact(&["--dry-run", s(&file)]).assert_code(0);
    // In place: the file is left alone, not even rewritten.
    let mtime = age(&file);
    let inode = fs::metadata(&file).unwrap().ino();
    let r = redact(&["--in-place", "--backup", s(&file)]);
    r.assert_code(0);
    assert!(
        r.stdout_text().contains("nothing found"),
        "{}",
        r.stdout_text()
    );
    let meta = fs::metadata(&file).unwrap();
    assert_eq!(meta.ino(), inode, "the same file");
    assert_eq!(meta.modified().unwrap(), mtime, "not written");
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
    assert_eq!(names(&dir), ["clean.jsonl"], "no backup, no temporary file");
}

#[test]
fn a_dry_run_reports_in_json_and_writes_nothing() {
    let dir = scratch("redact-dry-run-json");
    let named = "zorblax-Quintessence-42";
    let text = secrets_session().replace("thanks, bye", &format!("thanks, {named}"));
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&["--dry-run", "--format", "json", "--secret", named, s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_no_secret("stderr", r.stderr.as_bytes(), &SECRETS);
    assert_no_secret("stdout", &r.stdout, &[named]);
    assert_no_secret("stderr", r.stderr.as_bytes(), &[named]);
    assert_eq!(fs::read_to_string(&file).unwrap(), text, "nothing written");
    assert_eq!(names(&dir), ["s.jsonl"], "nothing created");
    let report: Value = serde_json::from_slice(&r.stdout).expect("one JSON document");
    assert_eq!(report["formatVersion"], 1);
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    let f = &files[0];
    assert_eq!(f["path"], s(&file));
    assert_eq!(f["lines"], 6);
    assert_eq!(f["linesChanged"], 3);
    assert_eq!(f["redacted"], 5);
    assert_eq!(f["candidatesLeft"], 0);
    assert_eq!(f["written"], Value::Null);
    assert_eq!(f["backup"], Value::Null);
    for rule in [
        "aws-access-token",
        "github-pat",
        "slack-bot-token",
        "url-password",
        "named-secret",
    ] {
        assert_eq!(
            f["rules"][rule],
            serde_json::json!({"redacted": 1, "candidates": 0}),
            "{rule}"
        );
    }
    let findings = f["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 5);
    for finding in findings {
        let mut keys: Vec<&str> = finding
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            ["candidate", "entryId", "line", "path", "redacted", "rule"]
        );
        assert_eq!(finding["candidate"], false);
        assert_eq!(finding["redacted"], true);
    }
    let first = &findings[0];
    assert_eq!(first["line"], 4);
    assert_eq!(first["entryId"], "b1b2c3d4");
    assert_eq!(first["path"], "message.content");
    assert_eq!(first["rule"], "github-pat");
    let last = &findings[4];
    assert_eq!(
        (&last["line"], &last["entryId"], &last["rule"]),
        (&6.into(), &"d1b2c3d4".into(), &"named-secret".into())
    );
}

#[test]
fn named_secrets_are_redacted_and_never_echoed() {
    let dir = scratch("redact-named");
    let token = "tok-9f8e7d6c5b4a";
    let password = "hunter2-Correct-Horse";
    let flag = "zorblax-the-great";
    let text = lines(&[
        header(),
        user(
            "a1b2c3d4",
            None,
            &format!(
                "the API_TOKEN is {token}, the DB_PASSWORD is {password}, I am {flag}; API_TOKEN rotates"
            ),
        ),
    ]);
    let file = write(&dir, "s.jsonl", &text);
    // No rule finds these: only the named values do.
    redact(&[s(&file)]).assert_code(0);
    let env = write(
        &dir,
        ".env",
        format!(
            "# the app's secrets\nexport API_TOKEN=\"{token}\"\nDB_PASSWORD='{password}'\nSHORT=q7\n\n"
        ),
    );
    let r = redact(&["--secrets-from", s(&env), "--secret", flag, s(&file)]);
    r.assert_code(1);
    let out = r.stdout_text();
    assert_no_secret("stdout", &r.stdout, &[token, password, flag]);
    assert_no_secret("stderr", r.stderr.as_bytes(), &[token, password, flag]);
    assert!(
        out.contains("the API_TOKEN is [REDACTED:named-secret:"),
        "names kept: {out}"
    );
    assert!(
        out.contains("the DB_PASSWORD is [REDACTED:named-secret:"),
        "{out}"
    );
    assert!(out.contains("; API_TOKEN rotates"), "{out}");
    let found = placeholders(&out);
    assert_eq!(found.len(), 3, "{out}");
    assert!(found.iter().all(|(rule, _)| rule == "named-secret"));
    assert!(
        r.stderr
            .contains("1 value(s) shorter than 4 bytes left out"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("q7"), "{}", r.stderr);
    assert!(
        r.stderr.contains("3 redacted (named-secret 3)"),
        "{}",
        r.stderr
    );
    // A value too short to name is a usage error, and is not echoed.
    let r = redact(&["--secret", "zq9", s(&file)]);
    r.assert_code(2);
    assert!(r.stderr.contains("--secret"), "{}", r.stderr);
    assert!(!r.stderr.contains("zq9"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    // A --secrets-from file that cannot be read is a usage error too.
    redact(&["--secrets-from", s(&dir.join("missing.env")), s(&file)]).assert_code(2);
}

#[test]
fn a_key_file_makes_placeholders_stable() {
    let dir = scratch("redact-key-file");
    let text = secrets_session();
    let file = write(&dir, "s.jsonl", &text);
    let other = write(
        &dir,
        "other.jsonl",
        lines(&[
            header(),
            user(
                "e1e2e3e4",
                None,
                &format!("another session, the same token: {GITHUB_PAT}"),
            ),
        ]),
    );
    let key = key_file(&dir, "key", 32);
    let first = redact(&["--key-file", s(&key), s(&file)]);
    first.assert_code(1);
    let second = redact(&["--key-file", s(&key), s(&file)]);
    second.assert_code(1);
    assert_eq!(first.stdout, second.stdout, "identical runs");
    let pat = |out: &str| {
        placeholders(out)
            .into_iter()
            .find(|(rule, _)| rule == "github-pat")
            .unwrap()
            .1
    };
    let elsewhere = redact(&["--key-file", s(&key), s(&other)]);
    elsewhere.assert_code(1);
    assert_eq!(
        pat(&first.stdout_text()),
        pat(&elsewhere.stdout_text()),
        "the same secret in another file"
    );
    // Another key, other placeholders.
    let key2 = key_file(&dir, "key2", 16);
    let r = redact(&["--key-file", s(&key2), s(&file)]);
    r.assert_code(1);
    assert_ne!(pat(&r.stdout_text()), pat(&first.stdout_text()));
    // Without a key file: a random key each run.
    let a = redact(&[s(&file)]);
    let b = redact(&[s(&file)]);
    a.assert_code(1);
    b.assert_code(1);
    assert_ne!(pat(&a.stdout_text()), pat(&b.stdout_text()));
    // Within one run the same secret gives the same placeholder in every file.
    let copy = write(&dir, "both/s.jsonl", &text);
    let copy2 = write(&dir, "both/other.jsonl", fs::read(&other).unwrap());
    redact(&["--in-place", s(&dir.join("both"))]).assert_code(1);
    assert_eq!(
        pat(&fs::read_to_string(&copy).unwrap()),
        pat(&fs::read_to_string(&copy2).unwrap())
    );
    // A key under 16 bytes, or none at all, is a usage error.
    let short = key_file(&dir, "short", 15);
    let r = redact(&["--key-file", s(&short), s(&file)]);
    r.assert_code(2);
    assert!(r.stderr.contains("at least 16 bytes"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    redact(&["--key-file", s(&dir.join("missing")), s(&file)]).assert_code(2);
}

/// Every string of a JSON value, and of JSON held in those strings, decoded.
fn all_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            out.push(text.clone());
            if let Ok(inner) = serde_json::from_str::<Value>(text)
                && (inner.is_object() || inner.is_array())
            {
                all_strings(&inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| all_strings(v, out)),
        Value::Object(members) => members.iter().for_each(|(k, v)| {
            out.push(k.clone());
            all_strings(v, out);
        }),
        _ => {}
    }
}

#[test]
fn escaped_secrets_and_secrets_in_json_strings() {
    let dir = scratch("redact-escaped");
    // `\u0041` is `A`, `\u0059` is `Y`, `\u0067\u0068\u0070` is `ghp`.
    let escaped_pat = GITHUB_PAT.replacen('Y', "\\u0059", 1);
    let escaped_aws = AWS_KEY_ID.replacen('A', "\\u0041", 1);
    let fully_escaped_prefix = GITHUB_PAT.replacen("ghp", "\\u0067\\u0068\\u0070", 1);
    // A tool call's argument holding JSON, which holds JSON in turn.
    let payload = format!(
        r#"{{\"token\":\"{GITHUB_PAT}\",\"aws\":\"\\u0041KIAQWERTYUI234567ZX\",\"nested\":\"{{\\\"k\\\":\\\"{SLACK_TOKEN}\\\"}}\"}}"#
    );
    let text = lines(&[
        header(),
        user(
            "a1b2c3d4",
            None,
            &format!("key {escaped_aws} and {escaped_pat}"),
        ),
        assistant(
            "b1b2c3d4",
            "a1b2c3d4",
            &format!(
                r#"{{"type":"toolCall","id":"toolu_01","name":"http","arguments":{{"payload":"{payload}","note":"{fully_escaped_prefix}"}}}}"#
            ),
        ),
    ]);
    // The input is what it should be: the secrets there once decoded, not in its bytes.
    let input: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut decoded = Vec::new();
    input.iter().for_each(|v| all_strings(v, &mut decoded));
    for secret in SECRETS.iter().filter(|s| **s != URL_PASSWORD) {
        assert!(decoded.iter().any(|d| d.contains(secret)), "{secret}");
    }
    assert!(!text.contains(AWS_KEY_ID));
    let file = write(&dir, "s.jsonl", &text);
    let key = key_file(&dir, "key", 32);
    let r = redact(&["--key-file", s(&key), s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_no_secret("stderr", r.stderr.as_bytes(), &SECRETS);
    let out = r.stdout_text();
    for escaped in [&escaped_pat, &escaped_aws, &fully_escaped_prefix] {
        assert!(!out.contains(escaped.as_str()), "{escaped} left: {out}");
    }
    let mut decoded = Vec::new();
    let output: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("still JSON"))
        .collect();
    output.iter().for_each(|v| all_strings(v, &mut decoded));
    for secret in SECRETS {
        assert!(
            !decoded.iter().any(|d| d.contains(secret)),
            "{secret} left in a decoded string: {decoded:#?}"
        );
    }
    // The arguments are still JSON holding JSON, with the placeholders inside.
    let arguments = &output[2]["message"]["content"][0]["arguments"];
    let payload: Value = serde_json::from_str(arguments["payload"].as_str().unwrap())
        .expect("the payload is still JSON");
    assert!(
        payload["token"]
            .as_str()
            .unwrap()
            .starts_with("[REDACTED:github-pat:")
    );
    assert!(
        payload["aws"]
            .as_str()
            .unwrap()
            .starts_with("[REDACTED:aws-access-token:")
    );
    let nested: Value = serde_json::from_str(payload["nested"].as_str().unwrap())
        .expect("the nested payload is still JSON");
    assert!(
        nested["k"]
            .as_str()
            .unwrap()
            .starts_with("[REDACTED:slack-bot-token:")
    );
    // The same secret, however it was written, gets the same placeholder.
    let pats: Vec<String> = placeholders(&decoded.join("\n"))
        .into_iter()
        .filter(|(rule, _)| rule == "github-pat")
        .map(|(_, hash)| hash)
        .collect();
    assert!(pats.len() >= 3, "{pats:?}");
    assert!(pats.iter().all(|h| *h == pats[0]), "{pats:?}");
    assert_same_structure(text.as_bytes(), &r.stdout);
    assert!(
        r.stderr
            .contains("message.content[0].arguments.payload→token: github-pat (redacted)"),
        "{}",
        r.stderr
    );
}

#[test]
fn signatures_and_images_are_stripped_only_when_asked() {
    let dir = scratch("redact-strip");
    let signature = "EqQBCkYIBBgCIkB3xVz9Q2mP7rT4kL8nW1bY6zH3cJ5dF0gS2aE7uR9tK4mX";
    let gif = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
    let text = lines(&[
        header(),
        format!(
            r#"{{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"look at this"}},{{"type":"image","data":"{gif}","mimeType":"image/gif"}}],"timestamp":1}}}}"#
        ),
        assistant(
            "b1b2c3d4",
            "a1b2c3d4",
            &format!(
                r#"{{"type":"thinking","thinking":"a small gif","thinkingSignature":"{signature}"}},{{"type":"text","text":"a 1x1 gif"}}"#
            ),
        ),
    ]);
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(0);
    assert_eq!(r.stdout, text.as_bytes(), "untouched without the flags");
    let parse = |out: &[u8]| -> Vec<Value> {
        String::from_utf8_lossy(out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // --strip-signatures: the signature emptied, the image kept.
    let r = redact(&["--strip-signatures", s(&file)]);
    r.assert_code(1);
    let out = r.stdout_text();
    assert_eq!(out.lines().nth(1), text.lines().nth(1), "the image line");
    let v = parse(&r.stdout);
    assert_eq!(v[2]["message"]["content"][0]["thinkingSignature"], "");
    assert_eq!(v[2]["message"]["content"][0]["thinking"], "a small gif");
    assert!(!out.contains(signature));
    assert!(
        r.stderr.contains(
            "line 3, entry b1b2c3d4, message.content[0].thinkingSignature: signature (redacted)"
        ),
        "{}",
        r.stderr
    );
    assert_same_structure(text.as_bytes(), &r.stdout);
    // --strip-images: a tiny PNG in place of the image, the signature kept.
    let r = redact(&["--strip-images", s(&file)]);
    r.assert_code(1);
    let out = r.stdout_text();
    assert_eq!(
        out.lines().nth(2),
        text.lines().nth(2),
        "the signature line"
    );
    let v = parse(&r.stdout);
    let image = &v[1]["message"]["content"][1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    let data = image["data"].as_str().unwrap();
    assert!(data.starts_with("iVBORw0KGgo"), "a PNG: {data}");
    assert!(data.len() < 200, "a small one: {data}");
    assert!(!out.contains(gif));
    assert_eq!(v[1]["message"]["content"][0]["text"], "look at this");
    assert!(
        r.stderr
            .contains("message.content[1].data: image (redacted)"),
        "{}",
        r.stderr
    );
    assert_same_structure(text.as_bytes(), &r.stdout);
    // Both at once; a second pass has nothing left to strip.
    let r = redact(&["--strip-images", "--strip-signatures", s(&file)]);
    r.assert_code(1);
    let stripped = write(&dir, "stripped.jsonl", &r.stdout);
    let again = redact(&["--strip-images", "--strip-signatures", s(&stripped)]);
    again.assert_code(0);
    assert_eq!(again.stdout, r.stdout);
}

#[test]
fn aggressive_redacts_high_entropy_candidates() {
    let dir = scratch("redact-aggressive");
    let token = "Xq7rT2mZp9LkV4nB8wQe3YhJ6sDf";
    let sha = "3f786850e387550fdab836ed7e6dc881de23001b";
    let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let sha256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf";
    let path = "/usr/local/lib/node_modules/typescript/lib/tsc.js";
    let long_path = "/home/me/projects/webshop/src/components/checkout/PaymentForm2Container.tsx";
    let text = lines(&[
        header(),
        user(
            "a1b2c3d4",
            None,
            &format!("commit {sha}, run {uuid}, sha256 {sha256}, see {path} and {long_path}"),
        ),
        user(
            "b1b2c3d4",
            Some("a1b2c3d4"),
            &format!("the session cookie is {token} for now"),
        ),
    ]);
    let file = write(&dir, "s.jsonl", &text);
    // Without --aggressive: reported as a candidate, left, exit 0.
    let r = redact(&[s(&file)]);
    r.assert_code(0);
    assert_eq!(r.stdout, text.as_bytes());
    assert!(
        r.stderr
            .contains("0 redacted; 1 high-entropy candidate(s) left"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("line 3, entry b1b2c3d4, message.content: high-entropy (candidate, left)"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(token), "{}", r.stderr);
    let r = redact(&["--dry-run", "--format", "json", s(&file)]);
    r.assert_code(0);
    let report: Value = serde_json::from_slice(&r.stdout).unwrap();
    let f = &report["files"][0];
    assert_eq!(f["candidatesLeft"], 1);
    assert_eq!(f["redacted"], 0);
    assert_eq!(
        f["findings"],
        serde_json::json!([{"line": 3, "entryId": "b1b2c3d4", "path": "message.content",
            "rule": "high-entropy", "candidate": true, "redacted": false}])
    );
    // With it: replaced; the hashes, ids and paths never are.
    let r = redact(&["--aggressive", s(&file)]);
    r.assert_code(1);
    let out = r.stdout_text();
    assert_no_secret("stdout", &r.stdout, &[token]);
    assert_no_secret("stderr", r.stderr.as_bytes(), &[token]);
    assert!(
        out.contains("the session cookie is [REDACTED:high-entropy:"),
        "{out}"
    );
    assert_eq!(out.lines().nth(1), text.lines().nth(1), "{out}");
    for kept in [sha, uuid, sha256, path, long_path] {
        assert!(out.contains(kept), "{kept} kept: {out}");
    }
    assert_eq!(placeholders(&out).len(), 1, "{out}");
    assert_same_structure(text.as_bytes(), &r.stdout);
}

#[test]
fn out_writes_a_new_file_and_never_over_one() {
    let dir = scratch("redact-out");
    let text = secrets_session();
    let file = write(&dir, "s.jsonl", &text);
    let key = key_file(&dir, "key", 32);
    let out = dir.join("out.jsonl");
    let r = redact(&["--key-file", s(&key), s(&file), "-o", s(&out)]);
    r.assert_code(1);
    // The report goes to stdout, the session to OUT.
    assert!(
        r.stdout_text()
            .contains(&format!("; written to {}", s(&out))),
        "{}",
        r.stdout_text()
    );
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    let written = fs::read(&out).unwrap();
    assert_no_secret("OUT", &written, &SECRETS);
    let to_stdout = redact(&["--key-file", s(&key), s(&file)]);
    assert_eq!(written, to_stdout.stdout, "OUT holds what stdout would");
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
    // An existing OUT is refused: nothing written.
    fs::write(&out, "precious\n").unwrap();
    let r = redact(&[s(&file), "-o", s(&out)]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("exists") && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious\n");
    // So is a dangling symlink, whose target is not created.
    let dangling = dir.join("dangling.jsonl");
    std::os::unix::fs::symlink(dir.join("nowhere.jsonl"), &dangling).unwrap();
    redact(&[s(&file), "-o", s(&dangling)]).assert_code(1);
    assert!(!dir.join("nowhere.jsonl").exists());
    // --force replaces it.
    let r = redact(&["--key-file", s(&key), s(&file), "-o", s(&out), "--force"]);
    r.assert_code(1);
    assert_eq!(fs::read(&out).unwrap(), written);
    // -o takes one input.
    let other = write(&dir, "t.jsonl", &text);
    let out2 = dir.join("out2.jsonl");
    let r = redact(&[s(&file), s(&other), "-o", s(&out2)]);
    r.assert_code(2);
    assert!(r.stderr.contains("exactly one input"), "{}", r.stderr);
    assert!(!out2.exists());
    // And not with --in-place or --dry-run.
    redact(&[s(&file), "-o", s(&out2), "--in-place"]).assert_code(2);
    redact(&[s(&file), "-o", s(&out2), "--dry-run"]).assert_code(2);
    assert!(!out2.exists());
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
    assert_eq!(fs::read_to_string(&other).unwrap(), text);
}

#[test]
fn in_place_with_backup_keeps_the_original_and_never_overwrites_it() {
    let dir = scratch("redact-in-place");
    let text = secrets_session();
    let file = write(&dir, "s.jsonl", &text);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    let r = redact(&["--in-place", "--backup", s(&file)]);
    r.assert_code(1);
    let backup = dir.join("s.jsonl.bak");
    assert!(
        r.stdout_text().contains(&format!(
            "written to {} (the original kept as {})",
            s(&file),
            s(&backup)
        )),
        "{}",
        r.stdout_text()
    );
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_eq!(fs::read_to_string(&backup).unwrap(), text, "byte for byte");
    let redacted = fs::read(&file).unwrap();
    assert_no_secret("the file", &redacted, &SECRETS);
    assert_same_structure(text.as_bytes(), &redacted);
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640,
        "the mode is kept"
    );
    assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak"]);
    // A new secret, and the backup is still there: refused, nothing written.
    let second = text.replace("thanks, bye", &format!("oops {SLACK_TOKEN}"));
    fs::write(&file, &second).unwrap();
    let r = redact(&["--in-place", "--backup", s(&file)]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("already exists") && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), second);
    assert_eq!(fs::read_to_string(&backup).unwrap(), text);
    assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak"]);
    // With --force: a new backup beside it, the old one untouched.
    let r = redact(&["--in-place", "--backup", "--force", s(&file)]);
    r.assert_code(1);
    assert_eq!(fs::read_to_string(&backup).unwrap(), text);
    assert_eq!(
        fs::read_to_string(dir.join("s.jsonl.bak.1")).unwrap(),
        second
    );
    assert_no_secret("the file", &fs::read(&file).unwrap(), &SECRETS);
    assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak", "s.jsonl.bak.1"]);
    // --backup needs --in-place.
    redact(&["--backup", s(&file)]).assert_code(2);
}

#[test]
fn in_place_through_a_symlink_replaces_the_target() {
    let dir = scratch("redact-symlink");
    let text = secrets_session();
    let target = write(&dir, "real/s.jsonl", &text);
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    redact(&["--in-place", s(&link)]).assert_code(1);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert_eq!(fs::read_link(&link).unwrap(), target);
    let redacted = fs::read(&target).unwrap();
    assert_no_secret("the target", &redacted, &SECRETS);
    assert_same_structure(text.as_bytes(), &redacted);
    assert_eq!(names(&dir), ["link.jsonl", "real"]);
    assert_eq!(names(&dir.join("real")), ["s.jsonl"]);
}

#[test]
fn hard_linked_and_read_only_files_are_refused_without_force() {
    let dir = scratch("redact-links");
    let text = secrets_session();
    // A hard link: replacing one name would leave the other with the secrets.
    let one = write(&dir, "one.jsonl", &text);
    let two = dir.join("two.jsonl");
    fs::hard_link(&one, &two).unwrap();
    let r = redact(&["--in-place", s(&one)]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("hard links") && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&one).unwrap(), text);
    assert_eq!(fs::read_to_string(&two).unwrap(), text);
    assert_eq!(
        fs::metadata(&one).unwrap().ino(),
        fs::metadata(&two).unwrap().ino(),
        "still one file"
    );
    redact(&["--in-place", "--force", s(&one)]).assert_code(1);
    assert_no_secret("the forced name", &fs::read(&one).unwrap(), &SECRETS);
    assert_eq!(fs::read_to_string(&two).unwrap(), text, "the other name");
    // A read-only file (refused by its mode, even for root).
    let ro = write(&dir, "ro.jsonl", &text);
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o444)).unwrap();
    let r = redact(&["--in-place", s(&ro)]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("read-only") && r.stderr.contains("nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&ro).unwrap(), text);
    redact(&["--in-place", "--force", s(&ro)]).assert_code(1);
    assert_no_secret("the forced file", &fs::read(&ro).unwrap(), &SECRETS);
    assert_eq!(
        fs::metadata(&ro).unwrap().permissions().mode() & 0o777,
        0o444,
        "the mode is kept"
    );
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(names(&dir), ["one.jsonl", "ro.jsonl", "two.jsonl"]);
}

#[test]
fn a_fifo_and_standard_input_are_read() {
    let dir = scratch("redact-fifo");
    let text = secrets_session();
    let fifo = dir.join("live session \u{1F600} \n.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        let text = text.clone();
        std::thread::spawn(move || fs::write(&fifo, text))
    };
    let r = redact(&[s(&fifo)]);
    writer.join().unwrap().unwrap();
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_same_structure(text.as_bytes(), &r.stdout);
    assert!(r.stderr.contains("4 redacted"), "{}", r.stderr);
    // In place needs a regular file: refused at once, the FIFO not opened (no writer waits).
    let r = redact(&["--in-place", s(&fifo)]);
    r.assert_code(1);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // Standard input.
    let r = redact_stdin(&["-"], text.as_bytes());
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert_same_structure(text.as_bytes(), &r.stdout);
    assert!(r.stderr.starts_with("-: 4 redacted"), "{}", r.stderr);
    let out = dir.join("from-stdin.jsonl");
    redact_stdin(&["-", "-o", s(&out)], text.as_bytes()).assert_code(1);
    assert_no_secret("OUT", &fs::read(&out).unwrap(), &SECRETS);
    let r = redact_stdin(&["--in-place", "-"], text.as_bytes());
    r.assert_code(2);
    assert!(r.stderr.contains("standard input"), "{}", r.stderr);
}

#[test]
fn a_directory_is_walked_for_sessions() {
    let dir = scratch("redact-directory");
    let text = secrets_session();
    let root = dir.join("sessions");
    let a = write(&root, "a.jsonl", &text);
    let b = write(
        &root,
        "sub/b.jsonl",
        lines(&[header(), user("e1e2e3e4", None, GITHUB_PAT)]),
    );
    let clean = write(&root, "clean.jsonl", lines(&[header()]));
    let not_a_session = write(&root, "notes.txt", format!("token {GITHUB_PAT}\n"));
    let r = redact(&["--dry-run", "--format", "json", s(&root)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    let report: Value = serde_json::from_slice(&r.stdout).unwrap();
    let files: Vec<(&str, u64)> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["redacted"].as_u64().unwrap()))
        .collect();
    assert_eq!(files, [(s(&a), 4), (s(&clean), 0), (s(&b), 1)]);
    // Several files go nowhere but in place.
    let r = redact(&[s(&root)]);
    r.assert_code(2);
    assert!(r.stderr.contains("several files"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        text,
        "the dry run wrote nothing"
    );
    let mtime = age(&clean);
    let r = redact(&["--in-place", s(&root)]);
    r.assert_code(1);
    assert_no_secret("a", &fs::read(&a).unwrap(), &SECRETS);
    assert_no_secret("b", &fs::read(&b).unwrap(), &SECRETS);
    assert_eq!(fs::metadata(&clean).unwrap().modified().unwrap(), mtime);
    assert!(
        fs::read_to_string(&not_a_session)
            .unwrap()
            .contains(GITHUB_PAT),
        "only *.jsonl files are walked"
    );
    assert_eq!(names(&root), ["a.jsonl", "clean.jsonl", "notes.txt", "sub"]);
}

#[test]
fn odd_file_names_are_escaped_in_the_report_and_work() {
    let dir = scratch("redact-odd-names");
    let text = secrets_session();
    let name = OsStr::from_bytes(b"odd name\nwith newline \xff.jsonl");
    let file = dir.join(name);
    fs::write(&file, &text).unwrap();
    let shown = format!("{}/odd name\\nwith newline \\xff.jsonl", s(&dir));
    let r = redact_os(&[OsStr::new("--dry-run"), file.as_os_str()]);
    r.assert_code(1);
    assert!(
        r.stdout_text().starts_with(&format!("{shown}: 4 redacted")),
        "{}",
        r.stdout_text()
    );
    assert_eq!(r.stdout_text().lines().count(), 5, "one line a finding");
    let r = redact_os(&[
        OsStr::new("--dry-run"),
        OsStr::new("--format"),
        OsStr::new("json"),
        file.as_os_str(),
    ]);
    let report: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["files"][0]["path"], shown);
    let r = redact_os(&[file.as_os_str()]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &SECRETS);
    assert!(r.stderr.starts_with(&format!("{shown}: ")), "{}", r.stderr);
    let r = redact_os(&[OsStr::new("--in-place"), file.as_os_str()]);
    r.assert_code(1);
    assert_no_secret("the file", &fs::read(&file).unwrap(), &SECRETS);
    // A leading dash and two spaces, relative, given after `--`.
    let dashed = write(&dir, "-dash  spaced.jsonl", &text);
    let mut command = bin();
    command
        .current_dir(&dir)
        .args(["redact", "--in-place", "--", "-dash  spaced.jsonl"]);
    let r = run_limited(command, None, T);
    r.assert_code(1);
    assert!(
        r.stdout_text()
            .starts_with("-dash  spaced.jsonl: 4 redacted"),
        "{}",
        r.stdout_text()
    );
    assert_no_secret("the file", &fs::read(&dashed).unwrap(), &SECRETS);
}

/// `pi-session redact ARGS` with files limited to `limit` bytes (`prlimit --fsize`, SIGXFSZ
/// ignored): a full disk at that size, as `write_cli` simulates one.
fn redact_with_file_size_limit(args: &[&str], limit: usize) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; exec prlimit --fsize={limit} \"$0\" redact \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_writes_nothing() {
    let dir = scratch("redact-full-disk");
    let big = "x".repeat(20_000);
    let text = lines(&[
        header(),
        user("a1b2c3d4", None, &format!("{GITHUB_PAT} {big}")),
    ]);
    let file = write(&dir, "s.jsonl", &text);
    let out = dir.join("out.jsonl");
    let r = redact_with_file_size_limit(&[s(&file), "-o", s(&out)], 4096);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!out.exists(), "no partial OUT");
    assert_eq!(names(&dir), ["s.jsonl"], "no temporary file left");
    // In place: the file is unchanged.
    let r = redact_with_file_size_limit(&["--in-place", s(&file)], 4096);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("the file is unchanged"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
    assert_eq!(names(&dir), ["s.jsonl"], "no temporary file left");
    // A full standard output (/dev/full) is an error, said.
    let r = bin()
        .args(["redact", s(&file)])
        .stdout(fs::File::options().write(true).open("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("standard output"), "{err}");
}

#[test]
fn v1_and_v2_files_are_redacted_without_migration() {
    let dir = scratch("redact-old-versions");
    let cases = root().join("conformance/cases/migrate");
    let v1 = fs::read_to_string(cases.join("v1-basic-linear-ids/session.jsonl"))
        .unwrap()
        .replace(
            "Why does `npm test` fail on CI?",
            &format!("Why does CI fail? The token is {GITHUB_PAT}"),
        );
    let v2 = fs::read_to_string(cases.join("v2-ids-and-branches-kept/session.jsonl"))
        .unwrap()
        .replace(
            "Draft the README.",
            &format!("Draft the README. Key {AWS_KEY_ID}"),
        );
    for (name, text, secret, version) in [
        ("v1.jsonl", &v1, GITHUB_PAT, None),
        ("v2.jsonl", &v2, AWS_KEY_ID, Some(2)),
    ] {
        assert!(text.contains(secret), "{name}: the secret is planted");
        let file = write(&dir, name, text);
        redact(&["--in-place", s(&file)]).assert_code(1);
        let after = fs::read_to_string(&file).unwrap();
        assert_no_secret(name, after.as_bytes(), &[secret]);
        assert_eq!(after.lines().count(), text.lines().count(), "{name}");
        assert_eq!(after.lines().next(), text.lines().next(), "{name}: header");
        let header: Value = serde_json::from_str(after.lines().next().unwrap()).unwrap();
        assert_eq!(
            header.get("version").and_then(Value::as_u64),
            version,
            "{name}"
        );
        assert_same_structure(text.as_bytes(), after.as_bytes());
        let changed = text
            .lines()
            .zip(after.lines())
            .filter(|(b, a)| b != a)
            .count();
        assert_eq!(changed, 1, "{name}: only the secret's line");
    }
    // v1 entries got no ids.
    let after = fs::read_to_string(dir.join("v1.jsonl")).unwrap();
    assert!(!after.contains("\"parentId\""), "{after}");
}

#[test]
fn an_omp_file_keeps_its_title_slot() {
    let dir = scratch("redact-omp");
    let base = fs::read_to_string(
        root().join("conformance/cases/omp/compaction-summary-fields/session.jsonl"),
    )
    .unwrap();
    assert!(base.starts_with(r#"{"type":"title""#), "an omp title slot");
    let slot_len = base.find('\n').unwrap() + 1;
    assert_eq!(slot_len, 256);
    // A secret in the title (the slot keeps its width) and one in an entry.
    let slot: Value = serde_json::from_str(&base[..slot_len - 1]).unwrap();
    let title = format!("deploy {GITHUB_PAT}");
    let mut new_slot = slot.clone();
    new_slot["title"] = Value::String(title.clone());
    new_slot["pad"] = Value::String(String::new());
    let unpadded = serde_json::to_string(&new_slot).unwrap();
    new_slot["pad"] = Value::String(" ".repeat(255 - unpadded.len()));
    let slot_line = serde_json::to_string(&new_slot).unwrap();
    assert_eq!(slot_line.len(), 255);
    let text = format!(
        "{slot_line}\n{}{}\n",
        &base[slot_len..],
        user("e9999999", Some("e0000001"), &format!("token {AWS_KEY_ID}"))
    );
    let file = write(&dir, "omp.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(1);
    let out = r.stdout_text();
    assert_no_secret("stdout", out.as_bytes(), &[GITHUB_PAT, AWS_KEY_ID]);
    let first = &out[..out.find('\n').unwrap() + 1];
    assert_eq!(first.len(), 256, "the slot keeps its width");
    let redacted: Value = serde_json::from_str(first.trim_end()).unwrap();
    assert!(
        redacted["title"]
            .as_str()
            .unwrap()
            .starts_with("deploy [REDACTED:github-pat:")
    );
    assert_eq!(redacted["updatedAt"], slot["updatedAt"]);
    // Every other line is the same but the one with the key.
    assert_eq!(
        &out[256..],
        &text[256..].replace(AWS_KEY_ID, &placeholder_of(&out, "aws-access-token"))
    );
    assert!(
        r.stderr.contains("line 1, title: github-pat (redacted)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_torn_line_is_redacted_as_text() {
    let dir = scratch("redact-torn");
    // A line cut mid-string in the middle of the file, and a last line with no newline.
    let torn = format!(
        r#"{{"type":"message","id":"t1t2t3t4","parentId":"a1b2c3d4","message":{{"role":"user","content":"my token is {GITHUB_PAT} and"#
    );
    let last = r#"{"type":"message","id":"t5","parentId":"#;
    let text = format!(
        "{}{torn}\n{}\n{last}{DATABASE_URL}",
        lines(&[header(), user("a1b2c3d4", None, "hello")]),
        user("b1b2c3d4", Some("a1b2c3d4"), "still here"),
    );
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &[GITHUB_PAT, URL_PASSWORD]);
    assert_no_secret("stderr", r.stderr.as_bytes(), &[GITHUB_PAT, URL_PASSWORD]);
    let out = r.stdout_text();
    assert!(!out.ends_with('\n'), "the last line stays unterminated");
    let (before, after): (Vec<&str>, Vec<&str>) = (text.lines().collect(), out.lines().collect());
    assert_eq!(before.len(), after.len());
    assert_eq!(before[..2], after[..2]);
    assert_eq!(before[3], after[3]);
    assert_eq!(
        after[2],
        torn.replace(GITHUB_PAT, &placeholder_of(after[2], "github-pat"))
    );
    assert!(
        after[4].starts_with(
            r#"{"type":"message","id":"t5","parentId":postgres://app:[REDACTED:url-password:"#
        ),
        "{}",
        after[4]
    );
    assert!(after[4].ends_with("]@db.internal:5432/app"), "{}", after[4]);
    assert!(
        r.stderr.contains("line 3: github-pat (redacted)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("line 5: url-password (redacted)"),
        "{}",
        r.stderr
    );
}

/// The one placeholder of `rule` in `text`.
fn placeholder_of(text: &str, rule: &str) -> String {
    let found: Vec<String> = placeholders(text)
        .into_iter()
        .filter(|(r, _)| r == rule)
        .map(|(r, h)| format!("[REDACTED:{r}:{h}]"))
        .collect();
    assert_eq!(found.len(), 1, "{text}");
    found[0].clone()
}

#[test]
fn a_secret_after_an_escape_in_a_torn_line_is_redacted() {
    let dir = scratch("redact-torn-escape");
    // Tool output cut off mid-line: `cat .env` printed lines, each after a `\n` escape.
    let torn = format!(
        r#"{{"type":"message","id":"t1t2t3t4","parentId":"a1b2c3d4","message":{{"role":"toolResult","toolCallId":"toolu_01","toolName":"bash","content":[{{"type":"text","text":"$ cat keys\n{AWS_KEY_ID}\n{SLACK_TOKEN}\tnext"#
    );
    let text = format!(
        "{}{torn}\n",
        lines(&[header(), user("a1b2c3d4", None, "hello")])
    );
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &[AWS_KEY_ID, SLACK_TOKEN]);
}

#[test]
fn a_secret_in_an_object_key_is_redacted_and_never_reported() {
    let dir = scratch("redact-key");
    let text = lines(&[
        header(),
        assistant(
            "b1b2c3d4",
            "a1b2c3d4",
            &format!(
                r#"{{"type":"toolCall","id":"toolu_01","name":"configure","arguments":{{"tokens":{{"{GITHUB_PAT}":"{SLACK_TOKEN}"}}}}}}"#
            ),
        ),
    ]);
    let file = write(&dir, "s.jsonl", &text);
    let r = redact(&[s(&file)]);
    r.assert_code(1);
    assert_no_secret("stderr", r.stderr.as_bytes(), &[GITHUB_PAT, SLACK_TOKEN]);
    assert_no_secret("stdout", &r.stdout, &[GITHUB_PAT, SLACK_TOKEN]);
}

#[test]
fn secrets_from_reads_values_with_inline_comments() {
    let dir = scratch("redact-env-comments");
    let password = "hunter2-Correct-Horse";
    let token = "tok-9f8e7d6c5b4a";
    let file = write(
        &dir,
        "s.jsonl",
        lines(&[
            header(),
            user(
                "a1b2c3d4",
                None,
                &format!("the password is {password} and the token {token}"),
            ),
        ]),
    );
    let env = write(
        &dir,
        ".env",
        format!("DB_PASSWORD={password} # production\nAPI_TOKEN=\"{token}\"  # ci only\n"),
    );
    let r = redact(&["--secrets-from", s(&env), s(&file)]);
    r.assert_code(1);
    assert_no_secret("stdout", &r.stdout, &[password, token]);
}

/// A session of `entries` user messages, each holding the GitHub token and `pad` bytes of
/// words: large enough that a run takes a while.
fn long_session(entries: usize, pad: usize) -> String {
    let words = "word ".repeat(pad / 5);
    let mut all = vec![header()];
    for i in 0..entries {
        let parent = (i > 0).then(|| format!("{:08x}", i - 1));
        all.push(user(
            &format!("{i:08x}"),
            parent.as_deref(),
            &format!("{GITHUB_PAT} {words}"),
        ));
    }
    lines(&all)
}

/// Killed (SIGKILL) at any moment of `--in-place`: the file is the original or the whole
/// redaction, never a mix, and the next run finishes the job and leaves nothing behind.
#[test]
fn a_run_killed_in_place_leaves_the_original_or_the_whole_redaction() {
    let dir = scratch("redact-killed");
    let original = long_session(4_000, 4_000);
    let key = key_file(&dir, "key", 32);
    let source = write(&dir, "source.jsonl", &original);
    let expected_path = dir.join("expected.jsonl");
    redact(&["--key-file", s(&key), s(&source), "-o", s(&expected_path)]).assert_code(1);
    let expected = fs::read(&expected_path).unwrap();
    let work = dir.join("work");
    fs::create_dir(&work).unwrap();
    let file = work.join("s.jsonl");
    let mut seen = std::collections::BTreeSet::new();
    for delay_ms in [0, 20, 80, 200, 500, 1500] {
        fs::write(&file, &original).unwrap();
        let mut child = bin()
            .args(["redact", "--in-place", "--key-file", s(&key), s(&file)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let now = fs::read(&file).unwrap();
        assert!(
            now == original.as_bytes() || now == expected,
            "killed after {delay_ms} ms: the file is neither the original nor the redaction"
        );
        seen.insert(now == expected);
        // The next run finishes (or finds nothing to do) and leaves only the file.
        redact(&["--in-place", "--key-file", s(&key), s(&file)]);
        assert_eq!(fs::read(&file).unwrap(), expected, "after {delay_ms} ms");
        assert_eq!(names(&work), ["s.jsonl"], "after {delay_ms} ms");
    }
    assert!(
        seen.contains(&false),
        "no kill came before the rename: make the file larger"
    );
}

/// A writer appending while `--in-place` runs loses nothing: its line is in the file after
/// (moved over, or the run refused and the file left as it is).
#[test]
fn lines_appended_during_an_in_place_run_are_kept() {
    let dir = scratch("redact-growing");
    let file = write(&dir, "s.jsonl", long_session(2_000, 4_000));
    let marker = user("ffffffff", Some("000007cf"), "appended while it ran");
    let mut child = bin()
        .args(["redact", "--in-place", s(&file)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    {
        use std::io::Write as _;
        let mut append = fs::OpenOptions::new().append(true).open(&file).unwrap();
        append.write_all(format!("{marker}\n").as_bytes()).unwrap();
    }
    let status = child.wait().unwrap();
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(&marker),
        "the appended line is lost (exit {status})"
    );
    assert_eq!(names(&dir), ["s.jsonl"]);
}
