//! `pi-session export --format markdown|html|jsonl`: the branch's entries, escaping of
//! hostile text (the fixture `tests/fixtures/export/hostile.jsonl`), `--leaf`, pi's JSONL
//! export, output files (atomic, never replaced without `--force`, symlinks not followed),
//! and hostile inputs (a FIFO, a directory, a file that is not a session, a deep file).
//! The HTML is also checked in a real browser: `scripts/browser/check-export-html.mjs`.

use crate::adversarial::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

fn hostile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/export/hostile.jsonl")
}

fn export(args: &[&str]) -> Run {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    run(&all, T)
}

/// The entries of the file's main branch (leaf `u9`), labels aside, by id.
const MAIN_BRANCH: usize = 12;

#[test]
fn markdown_keeps_the_branch_and_turns_html_into_text() {
    let file = hostile();
    let r = export(&["--format", "markdown", s(&file)]);
    r.assert_code(0);
    let md = r.stdout_text();
    assert_eq!(md.matches("\n## ").count(), MAIN_BRANCH, "{md}");
    assert!(
        md.starts_with("# \\<script\\>window.\\_\\_pwned=2\\</script\\> named\n"),
        "{md}"
    );
    // Raw HTML of message text is text; HTML inside fences and code spans stays as written.
    assert!(
        md.contains("Hello &lt;script>window.__pwned=4&lt;/script>"),
        "{md}"
    );
    assert!(md.contains("`code <script>`"), "{md}");
    // The user's unclosed fence is closed before the next entry's separator.
    let fence = md.find("```\nunclosed fence").expect("the fence");
    let next = md[fence..].find("\n---\n").unwrap() + fence;
    assert!(
        md[fence + 3..next].contains("\n```\n"),
        "{}",
        &md[fence..next]
    );
    // The tool call's arguments and the tool output are fenced (their backticks outgrown).
    assert!(
        md.contains("**Tool call** `bash\"><script>window.__pwned=11</script>`"),
        "{md}"
    );
    assert!(
        md.contains("```json\n{\n  \"command\": \"echo '</code></pre>"),
        "{md}"
    );
    // Labels are shown on their entry, not as entries; the other branch is not there.
    assert!(
        md.contains("🏷 Label: `<img src=x onerror=\"window.__pwned=16\">`"),
        "{md}"
    );
    assert!(!md.contains("The other branch."), "{md}");
    // An unknown entry type is kept as its JSON.
    assert!(md.contains("## Entry: mystery\\<script\\>"), "{md}");
}

/// The Markdown of the hostile fixture rendered by a CommonMark renderer (pulldown-cmark, as
/// CommonMark and with its extensions): no element, attribute or link from the session
/// survives (the session name, the model and the entry type were raw HTML in headings, and
/// a `javascript:` link in a message was a link), and ordinary Markdown still renders.
#[test]
fn markdown_rendered_holds_no_markup_from_the_session() {
    use pulldown_cmark::{Options, Parser, html};
    let r = export(&["--format", "markdown", s(&hostile())]);
    r.assert_code(0);
    let md = r.stdout_text();
    let extensions = Options::all()
        - Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        - Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    for options in [Options::empty(), extensions] {
        let mut page = String::new();
        html::push_html(&mut page, Parser::new_ext(&md, options));
        for tag in page.split('<').skip(1) {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            let name = tag
                .trim_start_matches('/')
                .split_whitespace()
                .next()
                .unwrap_or("");
            assert!(
                [
                    "h1",
                    "h2",
                    "p",
                    "ul",
                    "li",
                    "hr",
                    "code",
                    "pre",
                    "strong",
                    "em",
                    "blockquote",
                    "a",
                    "table",
                    "thead",
                    "tbody",
                    "tr",
                    "th",
                    "td",
                    "del",
                ]
                .contains(&name.to_ascii_lowercase().as_str()),
                "an element from the session: <{tag}>"
            );
            assert!(
                !tag.split_whitespace()
                    .skip(1)
                    .any(|a| a.to_lowercase().starts_with("on")),
                "an event handler in <{tag}>"
            );
            assert!(!tag.to_lowercase().contains("javascript:"), "<{tag}>");
        }
        // What the session's strings and texts say still reads as text.
        for text in [
            "<h1>&lt;script&gt;window.__pwned=2&lt;/script&gt; named</h1>",
            "<h2>Entry: mystery&lt;script&gt;",
            "Assistant (anthropic/claude-&lt;b&gt;x&lt;/b&gt;)",
            "Hello &lt;script&gt;window.__pwned=4&lt;/script&gt;",
            "[click me](javascript:window.__pwned=7)",
            "![tracker](http://127.0.0.1:9/track.png)",
            "<strong>bold</strong>",
            "<a href=\"https://example.org/\">safe link</a>",
            "<code>code &lt;script&gt;</code>",
        ] {
            assert!(page.contains(text), "{text}\n{page}");
        }
    }
}

#[test]
fn html_escapes_every_string_and_allows_no_script_or_network() {
    let file = hostile();
    let r = export(&["--format", "html", s(&file)]);
    r.assert_code(0);
    let html = r.stdout_text();
    assert_eq!(html.matches("<article class=\"entry").count(), MAIN_BRANCH);
    assert!(!html.contains("<script"), "a <script> element");
    assert!(
        !html.contains("<iframe")
            && !html.contains("<svg")
            && !html.contains("<meta http-equiv=\"refresh")
    );
    // No tag has an event handler attribute (the text may show one, escaped).
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        assert!(
            !tag.split_whitespace()
                .skip(1)
                .any(|a| a.to_lowercase().starts_with("on")),
            "an event handler in <{tag}>"
        );
        assert!(!tag.to_lowercase().contains("javascript:"), "<{tag}>");
    }
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:;"
    ));
    assert!(html.contains("<title>&lt;script&gt;window.__pwned=2&lt;/script&gt; named</title>"));
    // The two PNGs are shown; the text/html "image" and the one whose data breaks out are not.
    assert_eq!(html.matches("<img ").count(), 2);
    assert_eq!(
        html.matches("not a PNG, JPEG, GIF or WebP image").count(),
        2
    );
    // Thinking, tool calls and tool output are collapsible.
    for class in ["thinking", "tool-call", "tool-output"] {
        assert!(
            html.contains(&format!("<details class=\"{class}\">")),
            "{class}"
        );
    }
}

#[test]
fn leaf_picks_the_branch_and_an_unknown_leaf_is_an_error() {
    let file = hostile();
    let r = export(&["--format", "html", s(&file), "--leaf", "a3"]);
    r.assert_code(0);
    let html = r.stdout_text();
    // session_info, model_change, the prompt and the other answer.
    assert_eq!(html.matches("<article class=\"entry").count(), 4);
    assert!(html.contains("The other branch."));

    for format in ["markdown", "html", "jsonl"] {
        let r = export(&["--format", format, s(&file), "--leaf", "nope"]);
        r.assert_code(1);
        assert!(r.stderr.contains("nope"), "{format}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{format}: printed something");
    }
}

#[test]
fn jsonl_is_pi_export_of_the_branch() {
    let file = hostile();
    let r = export(&["--format", "jsonl", s(&file), "--leaf", "a3"]);
    r.assert_code(0);
    let lines: Vec<serde_json::Value> = r
        .stdout_text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The header keeps the session's id and cwd, with the export's own time.
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    assert!(lines[0]["id"].as_str().unwrap().starts_with("hostile-"));
    assert!(lines[0].get("parentSession").is_none());
    // The path, re-chained one after the other.
    let ids: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["n1", "m1", "u1", "a3"]);
    assert_eq!(lines[1]["parentId"], serde_json::Value::Null);
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"]);
    }
    // The export is a session our reader (and validator) take as it is.
    let dir = scratch("export-jsonl");
    let out = dir.join("branch.jsonl");
    export(&["--format", "jsonl", s(&file), "-o", s(&out)]).assert_code(0);
    run(&["validate", s(&out)], T).assert_code(0);

    // pi 0.73.1 has no JSONL export in its session manager; standard input is refused.
    let r = export(&["--format", "jsonl", s(&file), "--pi", "0.73"]);
    r.assert_code(1);
    assert!(r.stderr.contains("--pi 0.87 or 1.5"), "{}", r.stderr);
    let r = export(&["--format", "jsonl", "-"]);
    r.assert_code(1);
    assert!(r.stderr.contains("not standard input"), "{}", r.stderr);
}

#[test]
fn output_files_are_new_unless_forced_and_never_followed() {
    let dir = scratch("export-output");
    let file = hostile();
    let out = dir.join("session.html");
    export(&["--format", "html", s(&file), "-o", s(&out)]).assert_code(0);
    let first = std::fs::read(&out).unwrap();
    assert!(first.starts_with(b"<!DOCTYPE html>"));
    // A new file gets the usual mode (0o666 less the umask, 022 here), not the temporary's 0o600.
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "mode {mode:o}");

    // An existing OUT is left alone without --force.
    std::fs::write(&out, "mine").unwrap();
    let r = export(&["--format", "markdown", s(&file), "-o", s(&out)]);
    r.assert_code(1);
    assert!(r.stderr.contains("exists: pass --force"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    // --force replaces it, keeping its mode.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    export(&["--format", "markdown", s(&file), "-o", s(&out), "--force"]).assert_code(0);
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("# "));
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "mode {mode:o}");

    // A symlink at OUT: refused without --force; with it, the link is replaced and its
    // target untouched.
    let target = dir.join("target.txt");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.join("link.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    export(&["--format", "html", s(&file), "-o", s(&link)]).assert_code(1);
    export(&["--format", "html", s(&file), "-o", s(&link), "--force"]).assert_code(0);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(
        !std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // An OUT in a directory that does not exist: an error, nothing left behind.
    let r = export(&[
        "--format",
        "html",
        s(&file),
        "-o",
        s(&dir.join("no/such/dir.html")),
    ]);
    r.assert_code(1);
    assert!(r.stderr.contains("cannot write"), "{}", r.stderr);
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = scratch("export-bad-inputs");
    let r = export(&["--format", "html", s(&dir)]);
    r.assert_code(1);
    assert!(r.stderr.contains("is a directory"), "{}", r.stderr);

    let missing = dir.join("missing.jsonl");
    let r = export(&["--format", "markdown", s(&missing)]);
    r.assert_code(1);
    assert!(r.stderr.contains("missing.jsonl"), "{}", r.stderr);

    let not_session = write(&dir, "notes.jsonl", "{\"hello\":1}\n");
    let r = export(&["--format", "markdown", s(&not_session)]);
    r.assert_code(1);
    assert!(r.stderr.contains("notes.jsonl"), "{}", r.stderr);
    assert!(r.stdout.is_empty());

    // Usage errors: no file, or several; an option of --format parquet.
    export(&["--format", "html"]).assert_code(2);
    let r = export(&["--format", "markdown", s(&not_session), "--no-dedupe"]);
    r.assert_code(2);
    assert!(
        r.stderr
            .contains("--no-dedupe is an option of --format parquet"),
        "{}",
        r.stderr
    );
    let file = hostile();
    export(&["--format", "html", s(&file), s(&file)]).assert_code(2);
}

#[test]
fn a_fifo_and_odd_names_are_read() {
    let dir = scratch("export-fifo");
    let fifo = dir.join("live session \u{1F600} \n.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, std::fs::read(hostile()).unwrap()))
    };
    let r = export(&["--format", "markdown", s(&fifo)]);
    writer.join().unwrap().unwrap();
    r.assert_code(0);
    assert_eq!(r.stdout_text().matches("\n## ").count(), MAIN_BRANCH);
}

#[test]
fn deep_and_wide_values_do_not_overflow() {
    // A tool argument nested 100,000 levels deep, and a 5 MB line of text.
    let dir = scratch("export-deep");
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let long = "x".repeat(5 << 20);
    let session = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}}\n\
         {{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{long}\",\"timestamp\":1}}}}\n\
         {{\"type\":\"custom\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"customType\":\"x\",\"data\":{deep}}}\n"
    );
    let file = write(&dir, "deep.jsonl", &session);
    for format in ["markdown", "html"] {
        let r = export(&["--format", format, s(&file)]);
        assert_eq!(r.signal, None, "{format}: {}", r.stderr);
        r.assert_code(0);
        assert!(r.stdout.len() > 5 << 20, "{format}");
    }
}

/// A tool call's arguments are shown as JavaScript reads them (pi, and the model it sends them
/// to): integer keys first, the last of a repeated key, numbers as doubles; the preview is
/// the first string among them in that order. Too deep, they go on one line.
#[test]
fn arguments_read_as_javascript_reads_them() {
    let dir = scratch("export-arguments");
    let deep = format!("{}1{}", "[".repeat(40), "]".repeat(40));
    let session = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}}\n\
         {{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"assistant\",\"content\":[\
         {{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"bash\",\"arguments\":{{\"z\":1.0,\"command\":\"ls -la\",\"n\":9007199254740993,\"2\":0,\"z\":2.50,\"a\":\"sorted first\"}}}},\
         {{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"deep\",\"arguments\":{{\"d\":{deep}}}}}],\
         \"api\":\"a\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}},\"stopReason\":\"toolUse\",\"timestamp\":1}}}}\n"
    );
    let file = write(&dir, "args.jsonl", &session);
    let r = export(&["--format", "markdown", s(&file)]);
    r.assert_code(0);
    let out = r.stdout_text();
    let shown = "{\n  \"2\": 0,\n  \"z\": 2.5,\n  \"command\": \"ls -la\",\n  \"n\": 9007199254740992,\n  \"a\": \"sorted first\"\n}";
    assert!(out.contains(shown), "{out}");
    assert!(out.contains(&format!("{{\"d\":{deep}}}")), "{out}");
    // The HTML's summary line previews the first string argument, in that order.
    let r = export(&["--format", "html", s(&file)]);
    r.assert_code(0);
    let html = r.stdout_text();
    assert!(
        html.contains("<summary>Tool call: <code>bash</code> ls -la</summary>"),
        "{html}"
    );
}

/// Every real session of the corpus exports to Markdown and HTML with one section per entry
/// of its branch (counted from pi's JSONL export of the same branch, labels aside).
#[test]
fn real_sessions_export_every_entry_of_their_branch() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases/real");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().path().join("session.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} real sessions", files.len());
    for file in &files {
        let jsonl = export(&["--format", "jsonl", s(file)]);
        jsonl.assert_code(0);
        let entries = jsonl
            .stdout_text()
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("{\"type\":\"label\""))
            .count();
        let md = export(&["--format", "markdown", s(file)]);
        md.assert_code(0);
        // Our section headings end with the entry's time and id (message text may hold
        // headings and rules of its own).
        let sections = md
            .stdout_text()
            .lines()
            .filter(|l| l.starts_with("## ") && l.contains(" · ") && l.ends_with('`'))
            .count();
        assert_eq!(sections, entries, "{}", file.display());
        let html = export(&["--format", "html", s(file)]);
        html.assert_code(0);
        assert_eq!(
            html.stdout_text().matches("<article class=\"entry").count(),
            entries,
            "{}",
            file.display()
        );
    }
}

/// An oh-my-pi session is exported in its dialect, its images put back from the blob store
/// (`--blobs`, else omp's own) as omp puts them back; a blob the store lacks is said and its
/// reference stays. pi's JSONL export of it is refused rather than written by pi's rules.
#[test]
fn an_omp_session_is_exported_with_its_images() {
    let case = root().join("conformance/cases/omp/image-blob-restored");
    let file = case.join("session.jsonl");
    let blobs = case.join("blobs");
    let hash = std::fs::read_dir(&blobs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    // Without the blob, the reference stays (the page shows no image) and is said.
    let empty = scratch("export-omp-no-blobs");
    let without = export(&["--format", "html", "--blobs", s(&empty), s(&file)]);
    without.assert_code(0);
    assert!(without.stderr.contains(&hash), "{}", without.stderr);
    assert!(!without.stdout_text().contains("<img"));
    // A store whose blob is a PNG image (the case's blob is noise, which the page names only).
    let store = scratch("export-omp-png-store");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0; 48]);
    std::fs::write(store.join(&hash), &png).unwrap();
    let r = export(&["--format", "html", "--blobs", s(&store), s(&file)]);
    r.assert_code(0);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert!(
        r.stdout_text()
            .contains(r#"<img alt="image" src="data:image/png;base64,"#),
        "the image is embedded"
    );
    let r = export(&["--format", "markdown", "--blobs", s(&blobs), s(&file)]);
    r.assert_code(0);
    // The reference is 76 characters; the image's base64 is not.
    assert!(r.stdout_text().contains("*[image: image/png, "));
    assert!(!r.stdout_text().contains("76 bytes of base64"));
    let r = export(&["--format", "jsonl", s(&file)]);
    r.assert_code(1);
    assert!(r.stderr.contains("oh-my-pi"), "{}", r.stderr);
}

/// A session with secrets in a prompt, a tool call's argument, its result and a label.
pub(crate) fn session_with_secrets(dir: &Path) -> (PathBuf, [&'static str; 3]) {
    const PAT: &str = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u";
    const PASSWORD: &str = "S3cr3tPassw0rd9";
    const NAMED: &str = "correct-horse-battery-staple";
    let lines = [
        r#"{"type":"session","version":3,"id":"0f8fad5b-d9cb-469f-a165-70867728950e","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
        format!(r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"deploy with {PAT} and {NAMED}","timestamp":1}}}}"#),
        format!(r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"bash","arguments":{{"command":"psql postgres://app:{PASSWORD}@db/app"}}}}],"api":"x","provider":"p","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":2}}}}"#),
        format!(r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{{"type":"text","text":"GITHUB_TOKEN={PAT}"}}],"isError":false,"timestamp":3}}}}"#),
        format!(r#"{{"type":"label","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","targetId":"a1","label":"used {PAT}"}}"#),
    ];
    let path = dir.join("secrets.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (path, [PAT, PASSWORD, NAMED])
}

#[test]
fn redact_passes_every_text_format_through_redaction() {
    let dir = scratch("export-redact");
    let (session, secrets) = session_with_secrets(&dir);
    let session = session.to_str().unwrap();
    for format in ["markdown", "html", "jsonl"] {
        let plain = export(&[session, "--format", format]);
        plain.assert_code(0);
        let plain = String::from_utf8_lossy(&plain.stdout).into_owned();
        assert!(
            plain.contains(secrets[0]),
            "{format}: the fixture holds the secret"
        );
        let redacted = export(&[
            session, "--format", format, "--redact", "--secret", secrets[2],
        ]);
        redacted.assert_code(0);
        let out = String::from_utf8_lossy(&redacted.stdout);
        for secret in secrets {
            assert!(!out.contains(secret), "{format}: {secret} survives");
            assert!(
                !redacted.stderr.contains(secret),
                "{format}: {secret} on stderr"
            );
        }
        assert!(out.contains("[REDACTED:github-pat:"), "{format}");
    }
    // The JSONL export is still a session: the same entries, in order.
    let jsonl = export(&[session, "--format", "jsonl", "--redact"]);
    let ids: Vec<String> = String::from_utf8_lossy(&jsonl.stdout)
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    assert_eq!(ids, ["\"a1\"", "\"a2\"", "\"a3\"", "\"a4\""]);
    // The redaction options go with --redact only.
    export(&[session, "--format", "markdown", "--aggressive"]).assert_code(2);
    export(&[
        session, "--format", "markdown", "--redact", "--secret", "ab",
    ])
    .assert_code(2);
}
