//! The command-line contract: exit codes, deliberate differences from pi, atomic rewrites.

use crate::support::{self, write_str as write};
use std::process::{Command, Output};

fn pi_session(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .env("TZ", "UTC")
        .env("PI_SESSION_DETERMINISTIC_IDS", "1")
        .output()
        .expect("pi-session runs")
}

fn scratch(test: &str) -> support::Scratch {
    support::scratch("cli", test)
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

#[test]
fn usage_errors_exit_2() {
    assert_eq!(pi_session(&["context"]).status.code(), Some(2));
    assert_eq!(pi_session(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(pi_session(&["migrate", "x.jsonl"]).status.code(), Some(2));
}

/// Without `--pi`, the reading commands follow current pi (1.5.2, which reads as 0.87.1):
/// a `system` message reaches the model and a `null` line is skipped; 0.73.1 drops the one
/// and throws on the other.
#[test]
fn reading_commands_default_to_current_pi() {
    let dir = scratch("default-pi");
    let system = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"system","content":"S","timestamp":1}}"#;
    let file = write(&dir, "s.jsonl", &format!("{HEADER}\nnull\n{system}\n"));
    let stdout = |args: &[&str]| {
        let out = pi_session(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let llm = stdout(&["context", &file, "--llm"]);
    assert_eq!(llm, stdout(&["context", &file, "--llm", "--pi", "1.5"]));
    assert_eq!(llm, stdout(&["context", &file, "--llm", "--pi", "0.87"]));
    assert!(llm.contains(r#""role":"system""#), "{llm}");
    assert_eq!(stdout(&["context", &file, "--llm", "--pi", "0.73"]), "[]\n");
    let info = stdout(&["info", &file, "--mtime", "0"]);
    assert!(info.starts_with(r#"{"id":"s""#), "{info}");
    assert_eq!(
        stdout(&["info", &file, "--mtime", "0", "--pi", "0.73"]),
        "null\n"
    );
}

#[test]
fn missing_file_exits_1() {
    let out = pi_session(&["context", "/nonexistent/session.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/session.jsonl"));
}

#[test]
fn invalid_header_exits_1_and_leaves_the_file_untouched() {
    let dir = scratch("header");
    let text = "{\"type\":\"message\",\"id\":\"a\"}\n";
    let file = write(&dir, "s.jsonl", text);
    // pi 0.73.1 truncates such a file (0.87.1 and later refuse it).
    for args in [vec!["context", &file], vec!["migrate", &file, "--in-place"]] {
        let out = pi_session(&[&args[..], &["--pi", "0.73"]].concat());
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not a valid session header"), "{stderr}");
        assert!(stderr.contains("truncate"), "{stderr}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn cycle_on_the_path_exits_1_naming_the_entries() {
    let dir = scratch("cycle");
    let file = write(
        &dir,
        "s.jsonl",
        &format!(
            "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"b\"}}\n{{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"}}\n"
        ),
    );
    let out = pi_session(&["context", &file]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cycle") && stderr.contains("\"a\"") && stderr.contains("\"b\""),
        "{stderr}"
    );
}

#[test]
fn null_lines_and_null_messages_are_skipped_with_warnings() {
    let dir = scratch("null");
    let file = write(
        &dir,
        "s.jsonl",
        &format!(
            "{HEADER}\nnull\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n{{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"message\":null}}\n"
        ),
    );
    let out = pi_session(&["context", &file]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"thinkingLevel\":\"off\",\"model\":null}\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":2: warning") && stderr.contains(":4: warning"),
        "{stderr}"
    );
}

#[test]
fn leaf_option_selects_the_branch() {
    let dir = scratch("leaf");
    let file = write(
        &dir,
        "s.jsonl",
        &format!(
            "{HEADER}\n{{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{{\"role\":\"user\",\"content\":\"a\"}}}}\n{{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"message\":{{\"role\":\"user\",\"content\":\"b\"}}}}\n"
        ),
    );
    let out = pi_session(&["context", &file, "--leaf", "a", "--llm"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "[{\"role\":\"user\",\"content\":\"a\"}]\n"
    );
}

#[test]
fn migrate_in_place_is_atomic_keeps_a_backup_and_bad_lines() {
    let dir = scratch("migrate");
    let v1 = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{not json\n{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"again\"}}\n";
    let file = write(&dir, "s.jsonl", v1);
    let out = pi_session(&["migrate", &file, "--in-place", "--backup"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(":3:2: warning: not JSON"));
    assert_eq!(std::fs::read_to_string(format!("{file}.bak")).unwrap(), v1);
    let migrated = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        migrated,
        concat!(
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\",\"version\":3}\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"id\":\"00000001\",\"parentId\":null}\n",
            "{not json\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"user\",\"content\":\"again\"},\"id\":\"00000002\",\"parentId\":\"00000001\"}\n",
        )
    );
    let leftovers = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(leftovers, 2, "only the file and its backup remain");
    // Migrating again changes nothing.
    let out = pi_session(&["migrate", &file, "--in-place"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), migrated);
}

#[test]
fn stdin_is_read_with_dash() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["context", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{HEADER}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"messages\":[],\"thinkingLevel\":\"off\",\"model\":null}\n"
    );
}

#[test]
fn c8_offsetless_timestamps_use_the_tz_of_the_process_like_node() {
    let dir = scratch("tz");
    let entry = |id: &str, parent: &str, ts: &str| {
        format!(
            r#"{{"type":"custom_message","customType":"k","content":"c","display":true,"id":"{id}","parentId":{parent},"timestamp":"{ts}"}}"#
        )
    };
    let file = write(
        &dir,
        "s.jsonl",
        &[
            HEADER.to_string(),
            entry("a", "null", "2025-06-15T12:00:00"),
            entry("b", "\"a\"", "2025-03-09T02:30:00"),
            entry("c", "\"b\"", "2025-11-02T01:30:00"),
            entry("d", "\"c\"", "2025-06-15"),
        ]
        .join("\n"),
    );
    // Values printed by Node 20: TZ=America/New_York node -e 'new Date(s).getTime()'
    let out = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["context", &file])
        .env("TZ", "America/New_York")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for ms in [
        "1750003200000",
        "1741505400000",
        "1762061400000",
        "1749945600000",
    ] {
        assert!(
            text.contains(&format!("\"timestamp\":{ms}")),
            "{ms} missing in {text}"
        );
    }
}

/// `--pi 1.5` (current pi, 1.5.2) follows 0.87.1's reading rules: `cargo xtask conformance
/// same-reading 0.87 1.5` and the differential runs show 1.5.2 reads every file as 0.87.1 does.
#[test]
fn pi_1_5_reads_as_0_87() {
    let cases =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases/pi-0.87");
    let mut differs_from_0_73 = 0;
    for case in std::fs::read_dir(&cases).unwrap().flatten() {
        let file = case.path().join("session.jsonl");
        if !file.is_file() {
            continue;
        }
        let file = file.to_string_lossy().into_owned();
        for op in ["context", "tree", "info"] {
            let run = |pi: &str| pi_session(&[op, &file, "--pi", pi]);
            let (v0_87, v1_5, v1_5_2) = (run("0.87"), run("1.5"), run("1.5.2"));
            assert_eq!(v1_5.status.code(), v0_87.status.code(), "{file} {op}");
            assert_eq!(v1_5.stdout, v0_87.stdout, "{file} {op}");
            assert_eq!(v1_5_2.stdout, v0_87.stdout, "{file} {op}");
            differs_from_0_73 += usize::from(run("0.73").stdout != v0_87.stdout);
        }
    }
    assert!(
        differs_from_0_73 > 5,
        "the cases should tell 0.73 from 0.87"
    );
    let out = pi_session(&["context", "x.jsonl", "--pi", "1.4"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown version is a usage error"
    );
}
