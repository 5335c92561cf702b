//! `pi-session validate`: inputs (files, directories, stdin, pi's session directory), verdicts,
//! exit codes and the four output formats.

use crate::support::{self, write_str as write};
use pi_session_validate::Code;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi-session"));
    command
        .arg("validate")
        .args(args)
        .env("TZ", "UTC")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("PI_CODING_AGENT_DIR");
    command
}

fn validate(args: &[&str]) -> Output {
    command(args).output().expect("pi-session runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scratch(test: &str) -> support::Scratch {
    support::scratch("validate", test)
}

fn header(version: u32) -> String {
    format!(
        r#"{{"type":"session","version":{version},"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}}"#
    )
}

fn entry(id: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"user","content":"hi","timestamp":1}}}}"#
    )
}

/// A correct version-3 session.
fn good() -> String {
    format!(
        "{}\n{}\n{}\n",
        header(3),
        entry("a1b2c3d4", None),
        entry("b1b2c3d4", Some("a1b2c3d4"))
    )
}

/// A session with a line pi drops (invalid JSON) on line 3, after a multi-byte string.
fn broken() -> String {
    format!(
        "{}\n{}\n{{\"type\":\"message\", \"id\": \"éé\" oops}}\n",
        header(3),
        entry("a1b2c3d4", None)
    )
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).expect("JSON on stdout")
}

fn codes(file: &Value) -> Vec<String> {
    file["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn exit_codes() {
    let dir = scratch("exit");
    let good = write(&dir, "good.jsonl", &good());
    let broken = write(&dir, "broken.jsonl", &broken());
    assert_eq!(validate(&[&good]).status.code(), Some(0));
    assert_eq!(validate(&[&broken]).status.code(), Some(1));
    assert_eq!(validate(&[&good, &broken]).status.code(), Some(1));
    // Usage errors.
    assert_eq!(
        validate(&["--format", "yaml", &good]).status.code(),
        Some(2)
    );
    assert_eq!(
        validate(&["--strict", "--schema-only", &good])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(validate(&["--pi", "0.5", &good]).status.code(), Some(2));
    // A file that cannot be read is reported, and fails the run.
    let missing = dir.join("missing.jsonl");
    let out = validate(&[&good, missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("1 unreadable"), "{text}");
    // The error on stderr; stdout holds the diagnostics asked for.
    assert!(!text.contains("cannot read"), "{text}");
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    for quiet in [vec!["--quiet"], vec!["--format", "github"]] {
        let mut args = quiet.clone();
        args.push(missing.to_str().unwrap());
        let out = validate(&args);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("cannot read"),
            "{quiet:?}: {}",
            stderr(&out)
        );
    }
    let out = validate(&["--format", "json", missing.to_str().unwrap()]);
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["files"][0]["valid"], false);
    assert!(report["files"][0]["readError"].is_string());
    assert!(report["files"][0].get("verdict").is_none());
}

#[test]
fn strict_and_pi_loadable_verdicts() {
    let dir = scratch("verdicts");
    // Version 2: follows the format, but pi migrates and rewrites it.
    let v2 = write(
        &dir,
        "v2.jsonl",
        &format!("{}\n{}\n", header(2), entry("a1b2c3d4", None)),
    );
    let out = validate(&[&v2]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("strict: yes, pi-loadable: no — pi would rewrite the file"),
        "{}",
        stdout(&out)
    );
    assert_eq!(validate(&["--strict", &v2]).status.code(), Some(0));

    // An id pi would not generate: a warning, valid under both verdicts.
    let odd_id = write(
        &dir,
        "odd.jsonl",
        &format!("{}\n{}\n", header(3), entry("Not-Hex", None)),
    );
    for args in [vec![odd_id.as_str()], vec!["--strict", &odd_id]] {
        let out = validate(&args);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
        assert!(stdout(&out).contains("warning[PS0208]"), "{}", stdout(&out));
    }

    // An invalid line: neither verdict.
    let broken = write(&dir, "broken.jsonl", &broken());
    let out = validate(&["--strict", &broken]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("strict: no, pi-loadable: no — pi would drop line 3"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn schema_only_checks_only_the_schemas() {
    let dir = scratch("schema-only");
    // A dangling parent is a tree error, not a schema violation.
    let dangling = write(
        &dir,
        "dangling.jsonl",
        &format!("{}\n{}\n", header(3), entry("a1b2c3d4", Some("ffffffff"))),
    );
    assert_eq!(validate(&["--strict", &dangling]).status.code(), Some(1));
    let out = validate(&["--schema-only", "--format", "json", &dangling]);
    assert_eq!(out.status.code(), Some(0));
    let report = json(&out);
    assert_eq!(report["verdict"], "schema-only");
    assert!(codes(&report["files"][0]).is_empty());
    // A message without its `message` field violates the schema.
    let missing = write(
        &dir,
        "missing.jsonl",
        &format!(
            "{}\n{{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\"}}\n",
            header(3)
        ),
    );
    assert_eq!(
        validate(&["--schema-only", &missing]).status.code(),
        Some(1)
    );
}

#[test]
fn directories_are_walked_for_jsonl_files_in_order() {
    let dir = scratch("walk");
    write(&dir, "sessions/--b--/2.jsonl", &good());
    write(&dir, "sessions/--b--/1.jsonl", &broken());
    write(&dir, "sessions/--a--/3.jsonl", &good());
    write(&dir, "sessions/--a--/notes.txt", "not a session");
    write(&dir, "sessions/--a--/x.jsonl.bak", "not a session");
    let sessions = dir.join("sessions");
    let out = validate(&["--format", "json", sessions.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let paths: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = Path::new(f["path"].as_str().unwrap());
            let rel = path.strip_prefix(&sessions).unwrap();
            rel.to_str().unwrap().replace('\\', "/")
        })
        .collect();
    assert_eq!(paths, ["--a--/3.jsonl", "--b--/1.jsonl", "--b--/2.jsonl"]);
    let valid: Vec<bool> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["valid"].as_bool().unwrap())
        .collect();
    assert_eq!(valid, [true, false, true]);
    assert_eq!(report["summary"]["files"], 3);
    assert_eq!(report["summary"]["invalid"], 1);
    // The layout checks run on the real paths: `--a--` is not the directory of cwd "/".
    assert!(codes(&report["files"][0]).contains(&"PS0303".to_string()));

    // Many files (checked in parallel) come out in sorted order, each with its verdict line.
    let many = dir.join("many");
    for i in (0..40).rev() {
        write(&many, &format!("{i:02}.jsonl"), &good());
    }
    let out = validate(&[many.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let order: Vec<usize> = (0..40)
        .map(|i| text.find(&format!("{i:02}.jsonl: strict: yes")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(
        text.ends_with("40 files: 40 valid, 0 invalid (pi-loadable); 0 errors, 0 warnings\n"),
        "{text}"
    );
}

#[test]
fn standard_input() {
    let mut child = command(&["--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(broken().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert_eq!(report["files"][0]["path"], "-");
    // No path, so no layout checks.
    assert_eq!(codes(&report["files"][0]), ["PS0001"]);
}

#[test]
fn the_default_directory_is_pis() {
    let dir = scratch("default");
    let agent = dir.join("agent");
    let out = command(&[])
        .env("PI_CODING_AGENT_DIR", &agent)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("does not exist"), "{err}");
    assert!(
        err.contains(agent.join("sessions").to_str().unwrap()),
        "{err}"
    );

    write(&agent, "sessions/--x--/a.jsonl", &good());
    let out = command(&["--quiet"])
        .env("PI_CODING_AGENT_DIR", &agent)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("1 file: 1 valid"),
        "{}",
        stderr(&out)
    );

    // `~` is the home directory; without PI_CODING_AGENT_DIR, ~/.pi/agent.
    let out = command(&["--quiet"])
        .env("HOME", &dir)
        .env("PI_CODING_AGENT_DIR", "~/agent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = command(&[]).env("HOME", &dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(".pi/agent/sessions"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn quiet_prints_one_line_per_problem() {
    let dir = scratch("quiet");
    // In pi's session tree, so that the file's name is checked too.
    let broken = write(&dir, "sessions/--x--/broken.jsonl", &broken());
    let out = validate(&["--quiet", &broken]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&format!("{broken}:3:31: PS0001 error: not valid JSON: expected ',' or '}}' in object, found 'o'; pi drops this line").as_str()),
        "{text}"
    );
    // File-level problems have no line and column.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{broken}: PS0302 info: "))),
        "{text}"
    );
    assert_eq!(lines.len(), 3, "{text}"); // PS0302, PS0303, PS0001
    assert!(stderr(&out).contains("1 file: 0 valid, 1 invalid"));
}

#[test]
fn human_snippets_put_the_caret_under_the_column() {
    let dir = scratch("caret");
    let broken = write(&dir, "broken.jsonl", &broken());
    let out = validate(&["--color", "never", &broken]);
    let text = stdout(&out);
    assert!(text.contains("error[PS0001]: not valid JSON"), "{text}");
    assert!(text.contains(&format!("--> {broken}:3:31")), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let source = lines
        .iter()
        .position(|l| l.starts_with("3 | "))
        .expect("the line is shown");
    let caret = lines[source + 1];
    // Columns as characters: `é` is one character (two bytes).
    let byte = lines[source].find("oops").unwrap();
    let oops = lines[source][..byte].chars().count();
    assert_eq!(caret.chars().position(|c| c == '^'), Some(oops), "{text}");
    assert!(text.contains("= help: write exactly one JSON value per line"));
    assert!(text.contains("= pi: drops this line when loading"));
}

#[test]
fn long_lines_show_a_window_with_the_real_column() {
    let dir = scratch("window");
    let text = "x".repeat(5000);
    let file = write(
        &dir,
        "long.jsonl",
        &format!(
            "{}\n{{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":1}}}}!\n",
            header(3)
        ),
    );
    let out = validate(&["--color", "never", &file]);
    let shown = stdout(&out);
    // The `!` after the line's JSON value.
    let line = std::fs::read_to_string(&file).unwrap();
    let line = line.lines().nth(1).unwrap();
    let column = line.chars().count();
    assert!(line.ends_with('!'));
    assert!(shown.contains(&format!("--> {file}:2:{column}")), "{shown}");
    let source = shown.lines().find(|l| l.starts_with("2 | ")).unwrap();
    assert!(source.chars().count() < 300, "{source}");
    assert!(source.contains('…') && source.ends_with('!'), "{source}");
}

#[test]
fn json_output_follows_its_schema_and_is_stable() {
    let dir = scratch("json");
    let good = write(&dir, "good.jsonl", &good());
    let broken = write(&dir, "broken.jsonl", &broken());
    let v2 = write(&dir, "v2.jsonl", &format!("{}\n", header(2)));
    let missing = dir.join("missing.jsonl");
    let args = [
        "--format",
        "json",
        "--pi",
        "0.87",
        &good,
        &broken,
        &v2,
        missing.to_str().unwrap(),
    ];
    let out = validate(&args);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let schema: Value = serde_json::from_str(
        pi_session_validate::schemas::find("validate-report").expect("the schema is embedded"),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(report["formatVersion"], 1);
    assert_eq!(report["tool"]["name"], "pi-session");
    assert_eq!(report["pi"], "0.87.1");
    // pi 1.5.2 reads as 0.87.1 does: the same report, but for the version it names.
    let mut as_15 = args;
    as_15[3] = "1.5";
    let report_15 = json(&validate(&as_15));
    assert_eq!(report_15["pi"], "1.5.2");
    assert_eq!(report_15["files"], report["files"]);
    assert_eq!(report["verdict"], "pi-loadable");
    assert_eq!(report["summary"]["files"], 4);
    assert_eq!(report["summary"]["unreadable"], 1);
    assert_eq!(report["files"][1]["path"], broken.as_str());
    let d = &report["files"][1]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "PS0001")
        .unwrap()
        .clone();
    assert_eq!(d["location"]["line"], 3);
    assert_eq!(d["location"]["column"], 31);
    assert_eq!(d["pi"], "dropped");
    // The same input gives the same bytes, and a different schema instance rejects junk.
    assert_eq!(validate(&args).stdout, out.stdout);
    assert!(!validator.is_valid(&serde_json::json!({"formatVersion": 2})));
    // Nothing but JSON on stdout; the summary is on stderr.
    assert!(stderr(&out).contains("4 files: 1 valid, 3 invalid"));
}

/// Without `--pi`, the report is current pi's.
#[test]
fn the_report_is_current_pi_s_by_default() {
    let dir = scratch("default-pi");
    let good = write(&dir, "good.jsonl", &good());
    let report = json(&validate(&["--format", "json", &good]));
    assert_eq!(report["pi"], "1.5.2");
    let report = json(&validate(&["--format", "json", "--pi", "0.73", &good]));
    assert_eq!(report["pi"], "0.73.1");
}

#[test]
fn sarif_has_the_catalogue_and_located_results() {
    let dir = scratch("sarif");
    let broken = write(&dir, "sessions/--x--/broken.jsonl", &broken());
    let out = validate(&["--format", "sarif", &broken]);
    assert_eq!(out.status.code(), Some(1));
    let log = json(&out);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(
        log["$schema"],
        "https://json.schemastore.org/sarif-2.1.0.json"
    );
    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "pi-session");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), Code::ALL.len());
    let rule = &rules[0];
    assert_eq!(rule["id"], "PS0001");
    assert_eq!(rule["shortDescription"]["text"], Code::ALL[0].info().title);
    assert_eq!(rule["help"]["text"], Code::ALL[0].info().help);
    assert_eq!(rule["defaultConfiguration"]["level"], "error");
    assert!(rule["fullDescription"]["text"].as_str().unwrap().len() > 20);
    assert_eq!(run["columnKind"], "unicodeCodePoints");

    let results = run["results"].as_array().unwrap();
    let invalid = results.iter().find(|r| r["ruleId"] == "PS0001").unwrap();
    assert_eq!(invalid["level"], "error");
    assert_eq!(invalid["ruleIndex"], 0);
    let location = &invalid["locations"][0]["physicalLocation"];
    let uri = location["artifactLocation"]["uri"].as_str().unwrap();
    assert!(
        uri.ends_with("broken.jsonl") && !uri.contains('\\'),
        "{uri}"
    );
    let region = &location["region"];
    assert_eq!(region["startLine"], 3);
    assert_eq!(region["startColumn"], 31);
    assert_eq!(region["endColumn"], 32);
    let offset = self::broken().find("oops").unwrap();
    assert_eq!(region["byteOffset"], offset);
    assert_eq!(region["byteLength"], 1);
    // A problem of the whole file has no region; a note for an info.
    let layout = results.iter().find(|r| r["ruleId"] == "PS0302").unwrap();
    assert_eq!(layout["level"], "note");
    assert!(
        layout["locations"][0]["physicalLocation"]
            .get("region")
            .is_none()
    );
}

#[test]
fn github_commands_are_escaped() {
    let dir = scratch("github");
    // A path with `,` and `:`, and an entry type with `%` in the message; in pi's session tree
    // for a file-level notice.
    let file = write(
        &dir,
        "sessions/--x--/a,b:c.jsonl",
        &format!(
            "{}\n{{\"type\":\"50%\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\"}}\n",
            header(3)
        ),
    );
    let out = validate(&["--format", "github", &file]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let escaped_path = file.replace(':', "%3A").replace(',', "%2C");
    let warning = text
        .lines()
        .find(|l| l.starts_with("::warning "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning.starts_with(&format!(
            "::warning file={escaped_path},line=2,col=9,endColumn=14,title=PS0201::"
        )),
        "{warning}"
    );
    assert!(warning.contains("`50%25`"), "{warning}");
    assert!(warning.contains("%0Ahelp: "), "{warning}");
    assert!(text.lines().any(|l| l.starts_with("::notice ")), "{text}");
    assert!(
        text.lines()
            .all(|l| l.starts_with("::warning ") || l.starts_with("::notice ")),
        "{text}"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = scratch("color");
    let broken = write(&dir, "broken.jsonl", &broken());
    let no_escape = |out: &Output| !out.stdout.contains(&0x1b);
    assert!(no_escape(&validate(&["--color", "never", &broken])));
    // auto: stdout is not a terminal here.
    assert!(no_escape(&validate(&[&broken])));
    let with_no_color = command(&["--color", "auto", &broken])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(no_escape(&with_no_color));
    assert!(!no_escape(&validate(&["--color", "always", &broken])));
    // Machine formats never have colour.
    assert!(no_escape(&validate(&[
        "--color", "always", "--format", "github", &broken
    ])));
}

/// Standard output of `validate ARGS` (a pipe) with the variables of `env` set.
fn piped_with(args: &[&str], env: &[(&str, &str)]) -> Vec<u8> {
    command(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
        .stdout
}

/// `text` without its SGR escapes (`ESC [ … m`).
fn without_escapes(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == 0x1b && text.get(i + 1) == Some(&b'[') {
            let end = text[i..].iter().position(|&b| b == b'm').unwrap();
            i += end + 1;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn colour_follows_the_environment_as_anstream_reads_it() {
    let dir = scratch("color-env");
    let broken = write(&dir, "broken.jsonl", &broken());
    let has_escape = |out: &[u8]| out.contains(&0x1b);
    let plain = piped_with(&["--color", "never", &broken], &[]);
    let styled = piped_with(&["--color", "always", &broken], &[]);
    assert!(!has_escape(&plain) && has_escape(&styled));
    // Colour changes nothing but the escapes.
    assert_eq!(without_escapes(&styled), plain);

    // NO_COLOR: none. CLICOLOR_FORCE: colour even on a pipe, but NO_COLOR beats it.
    assert_eq!(piped_with(&[&broken], &[("NO_COLOR", "1")]), plain);
    assert_eq!(piped_with(&[&broken], &[("CLICOLOR_FORCE", "1")]), styled);
    assert_eq!(
        piped_with(&["--color", "auto", &broken], &[("CLICOLOR_FORCE", "1")]),
        styled
    );
    assert_eq!(
        piped_with(&[&broken], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        plain
    );
    // An empty NO_COLOR counts as unset.
    assert_eq!(
        piped_with(&[&broken], &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")]),
        styled
    );
    // CLICOLOR=1 asks for colour on a terminal only.
    assert_eq!(piped_with(&[&broken], &[("CLICOLOR", "1")]), plain);
    // Machine formats and --quiet never have colour, whatever the environment says.
    for args in [
        ["--format", "github"],
        ["--format", "json"],
        ["--quiet", "-q"],
    ] {
        let out = piped_with(&[args[0], args[1], &broken], &[("CLICOLOR_FORCE", "1")]);
        assert!(!has_escape(&out), "{args:?}");
    }
}

#[test]
fn the_color_flag_beats_the_environment() {
    let dir = scratch("color-flag");
    let broken = write(&dir, "broken.jsonl", &broken());
    let plain = piped_with(&["--color", "never", &broken], &[]);
    let styled = piped_with(&["--color", "always", &broken], &[]);
    assert_ne!(plain, styled);
    assert_eq!(
        piped_with(&["--color", "never", &broken], &[("CLICOLOR_FORCE", "1")]),
        plain
    );
    assert_eq!(
        piped_with(&["--color", "always", &broken], &[("NO_COLOR", "1")]),
        styled
    );
    assert_eq!(
        piped_with(&["--color", "always", &broken], &[("CLICOLOR", "0")]),
        styled
    );
}

/// Runs `validate ARGS` with its standard output on a new pseudo-terminal and returns what
/// it wrote there.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn on_a_terminal(args: &[&str], env: &[(&str, &str)], unset: &[&str]) -> Vec<u8> {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors, which are owned from here on; the name, termios
    // and window size pointers may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and nothing else owns them.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = command(args);
    cmd.envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave));
    for name in unset {
        cmd.env_remove(name);
    }
    let mut child = cmd.spawn().expect("pi-session runs");
    // The child holds the only other end now: reading stops (EIO) once it exits.
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    child.wait().unwrap();
    out
}

#[test]
#[cfg(target_os = "linux")]
fn auto_colours_a_terminal_unless_the_environment_says_no() {
    let dir = scratch("color-tty");
    let broken = write(&dir, "broken.jsonl", &broken());
    let has_escape = |out: &[u8]| out.contains(&0x1b);
    let term = [("TERM", "xterm-256color")];
    let tty = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = term.to_vec();
        all.extend_from_slice(env);
        on_a_terminal(args, &all, &["CI"])
    };
    let out = tty(&[&broken], &[]);
    // The output really went through the terminal.
    assert!(
        String::from_utf8_lossy(&out).contains("pi-loadable"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    assert!(has_escape(&out));
    assert!(has_escape(&tty(&[&broken], &[("CLICOLOR", "1")])));
    assert!(!has_escape(&tty(&[&broken], &[("NO_COLOR", "1")])));
    assert!(!has_escape(&tty(&[&broken], &[("CLICOLOR", "0")])));
    assert!(!has_escape(&tty(&[&broken], &[("TERM", "dumb")])));
    assert!(!has_escape(&tty(&["--color", "never", &broken], &[])));
    // CLICOLOR_FORCE beats CLICOLOR=0 and a dumb terminal.
    assert!(has_escape(&tty(
        &[&broken],
        &[("CLICOLOR", "0"), ("CLICOLOR_FORCE", "1")]
    )));
    assert!(has_escape(&tty(
        &[&broken],
        &[("TERM", "dumb"), ("CLICOLOR_FORCE", "1")]
    )));
}

#[test]
fn the_size_limit_can_be_lowered_for_tests() {
    let dir = scratch("size");
    let good = write(&dir, "good.jsonl", &good());
    let out = validate(&["--pi-max-text-units", "100", "--quiet", &good]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("PS0301 error"), "{}", stdout(&out));
    // Documented in --help as testing-only, not in -h.
    let long = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["validate", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&long.stdout).contains("Testing only"));
    let short = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["validate", "-h"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&short.stdout).contains("pi-max-text-units"));
}

/// An oh-my-pi file as omp writes it (title slot, `mode_change`, `ttsr_injection`).
fn omp_case() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/cases/omp/mode-change-and-ttsr-rules/session.jsonl")
        .to_str()
        .unwrap()
        .to_string()
}

/// An oh-my-pi file without the slot: only its entry types tell.
fn omp_without_slot() -> String {
    format!(
        "{}{}\n{}\n",
        good(),
        r#"{"type":"mode_change","id":"c1b2c3d4","parentId":"b1b2c3d4","timestamp":"2025-01-01T00:00:00.000Z","mode":"plan"}"#,
        r#"{"type":"reset_boundary","id":"d1b2c3d4","parentId":"c1b2c3d4","timestamp":"2025-01-01T00:00:00.000Z"}"#,
    )
}

/// Issue 29: an omp file read as pi's gets one diagnostic that names the dialect, not one
/// PS0201 per omp entry; `--dialect omp` reads it by omp's rules; a pi file is unchanged.
#[test]
fn an_omp_file_gets_one_diagnostic_and_dialect_omp_reads_it_as_omp() {
    let dir = scratch("dialect");
    let slotless = write(&dir, "slotless.jsonl", &omp_without_slot());
    let good = write(&dir, "good.jsonl", &good());
    let omp = omp_case();
    let report = |args: &[&str]| json(&validate(&[&["--format", "json"], args].concat()));

    // Read as pi's (the default): one omp diagnostic, no PS0201.
    let as_pi = report(&[&omp, &slotless, &good]);
    assert!(
        as_pi.get("dialect").is_none(),
        "pi's, the default, is not said"
    );
    let files = as_pi["files"].as_array().unwrap();
    assert_eq!(codes(&files[0]), ["PS0111"]);
    let message = files[0]["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "it has 3 entries of types only oh-my-pi writes (1 `mode_change`, 2 `ttsr_injection`"
        ),
        "{message}"
    );
    assert_eq!(codes(&files[1]), ["PS0112"]);
    let d = &files[1]["diagnostics"][0];
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .starts_with("this is an oh-my-pi (omp) session file"),
        "{d}"
    );
    assert_eq!(
        (&d["location"]["line"], &d["pointer"]),
        (&4.into(), &"/type".into())
    );
    // pi keeps omp's entries and ignores them: the file stays pi-loadable; with the slot pi
    // does not read the file at all.
    assert_eq!(files[1]["valid"], true);
    assert_eq!(files[0]["valid"], false);
    assert!(codes(&files[2]).is_empty());

    // The human report says how to check it by omp's rules, once.
    let human = stdout(&validate(&["--color", "never", &omp]));
    assert_eq!(human.matches("--dialect omp").count(), 1, "{human}");
    assert!(!human.contains("PS0201"), "{human}");

    // Read as omp's: no PS0111, no PS0112, no PS0201; the pi file is as before.
    let out = validate(&[
        "--format",
        "json",
        "--dialect",
        "omp",
        &omp,
        &slotless,
        &good,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let as_omp = json(&out);
    assert_eq!(as_omp["dialect"], "omp");
    let schema: Value = serde_json::from_str(
        pi_session_validate::schemas::find("validate-report").expect("the schema is embedded"),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    assert!(validator.is_valid(&as_omp) && validator.is_valid(&as_pi));
    for (file, pi_file) in as_omp["files"].as_array().unwrap().iter().zip(files) {
        let found = codes(file);
        assert!(
            !found
                .iter()
                .any(|c| ["PS0111", "PS0112", "PS0201"].contains(&c.as_str())),
            "{file}"
        );
        assert_eq!(file["valid"], true, "{file}");
        if file["path"] == good.as_str() {
            assert_eq!(file, pi_file);
        }
    }
    // An unknown name is a usage error.
    assert_eq!(
        validate(&["--dialect", "oh-my-pi", &good]).status.code(),
        Some(2)
    );
}

/// `--dialect omp` looks up `blob:sha256:` image references in the store given with `--blobs`,
/// or else in oh-my-pi's own (found by its environment, here `PI_CODING_AGENT_DIR`); without
/// either, references are not checked.
#[test]
fn omp_blob_references_are_looked_up_in_the_store() {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/validate/omp-blob-missing");
    let file = case.join("session.jsonl");
    let file = file.to_str().unwrap();
    let codes = |out: &Output| -> Vec<String> {
        let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        report["files"][0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_owned())
            .collect()
    };
    let blobs = case.join("blobs");
    let out = validate(&[
        "--dialect",
        "omp",
        "--format",
        "json",
        "--blobs",
        blobs.to_str().unwrap(),
        file,
    ]);
    assert_eq!(codes(&out), ["PS0229"], "{}", stderr(&out));
    // A store that has the blob.
    let store = scratch("omp-blob-store");
    let hash = "ab".repeat(32);
    std::fs::write(store.join(&hash), b"png").unwrap();
    let out = validate(&[
        "--dialect",
        "omp",
        "--format",
        "json",
        "--blobs",
        store.to_str().unwrap(),
        file,
    ]);
    assert!(codes(&out).is_empty(), "{}", stdout(&out));
    // oh-my-pi's own store, where its environment puts it.
    let agent = scratch("omp-agent-dir");
    std::fs::create_dir_all(agent.join("blobs")).unwrap();
    let out = command(&["--dialect", "omp", "--format", "json", file])
        .env("PI_CODING_AGENT_DIR", &agent)
        .output()
        .unwrap();
    assert_eq!(codes(&out), ["PS0229"], "{}", stderr(&out));
    // Read as pi's, the references are not looked up.
    let out = validate(&["--format", "json", "--blobs", store.to_str().unwrap(), file]);
    assert!(!codes(&out).contains(&"PS0229".to_owned()));
}
