//! oh-my-pi files on the command line: the dialect detected or given, one clear message when
//! a file is read as the other dialect, omp's blob store, and the commands that refuse omp
//! files rather than answer as pi. (What omp computes is pinned by the `omp/` corpus cases.)

use crate::support::{self, write_str as write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pi_session(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi-session"));
    command
        .args(args)
        .env("TZ", "UTC")
        // Never the machine's own omp store.
        .env_remove("XDG_DATA_HOME")
        .env_remove("PI_CONFIG_DIR")
        .env_remove("OMP_PROFILE")
        .env_remove("PI_PROFILE")
        .env_remove("PI_CODING_AGENT_DIR");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("pi-session runs")
}

fn scratch(test: &str) -> PathBuf {
    support::scratch("dialect", test)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// omp's title slot: 256 bytes with the newline.
fn slot(title: &str) -> String {
    let line = format!(
        r#"{{"type":"title","v":1,"title":"{title}","updatedAt":"2026-01-01T00:00:00.000Z","pad":""#
    );
    format!("{line}{}\"}}\n", " ".repeat(255 - line.len() - 2))
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
const USER: &str = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

#[test]
fn an_omp_file_is_read_as_omp_without_being_told() {
    let dir = scratch("detected");
    assert_eq!(slot("T").len(), 256);
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{USER}\n", slot("T")),
    );
    let detected = pi_session(&["context", &file], &[]);
    assert_eq!(detected.status.code(), Some(0), "{}", stderr(&detected));
    let told = pi_session(&["context", &file, "--dialect", "omp"], &[]);
    assert_eq!(detected.stdout, told.stdout);
    let text = String::from_utf8(detected.stdout).unwrap();
    assert!(
        text.ends_with("\"models\":{},\"injectedTtsrRules\":[],\"mode\":\"none\"}\n"),
        "{text}"
    );
    // A reset boundary (an omp-only entry type) is enough too, and it shows in the context.
    let reset = r#"{"type":"reset_boundary","id":"r","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z"}"#;
    let file = write(&dir, "reset.jsonl", &format!("{HEADER}\n{USER}\n{reset}\n"));
    let out = pi_session(&["context", &file], &[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .split(r#""mode""#)
            .count(),
        2
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(r#"{"messages":[],"#));
    let as_pi = pi_session(&["context", &file, "--dialect", "pi"], &[]);
    assert!(String::from_utf8_lossy(&as_pi.stdout).contains(r#""content":"hi""#));
}

#[test]
fn a_slot_file_read_as_pi_gets_one_message_naming_omp() {
    let dir = scratch("as-pi");
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{USER}\n", slot("")),
    );
    let out = pi_session(&["context", &file, "--dialect", "pi"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("line 1: this is an oh-my-pi (omp) session file, not pi's (line 1 is omp's title slot): read it with `--dialect omp`"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    let bad = pi_session(&["context", &file, "--dialect", "oh-my-pi"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("expected `pi` or `omp`"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn commands_without_omp_rules_refuse_omp_files() {
    let dir = scratch("refuse");
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{USER}\n", slot("")),
    );
    for args in [
        vec!["info", file.as_str()],
        vec!["info", file.as_str(), "--dialect", "omp"],
        vec!["tree", file.as_str(), "--format", "text"],
        vec!["context", file.as_str(), "--llm"],
    ] {
        let out = pi_session(&args, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let message = stderr(&out);
        assert!(
            message.contains("not reproduced yet"),
            "{args:?}: {message}"
        );
        // A slot file cannot be read as pi's: the message does not suggest it.
        assert!(!message.contains("--dialect pi"), "{message}");
    }
    // omp's tree is given; a pi file is answered as before.
    let tree = pi_session(&["tree", &file], &[]);
    assert_eq!(
        String::from_utf8_lossy(&tree.stdout),
        "[{\"id\":\"a\",\"type\":\"message\",\"children\":[]}]\n"
    );
    let pi = write(&dir, "pi.jsonl", &format!("{HEADER}\n{USER}\n"));
    assert_eq!(pi_session(&["tree", &pi], &[]).status.code(), Some(0));
}

#[test]
fn an_omp_tree_that_would_never_end_is_refused() {
    let dir = scratch("tree-cycle");
    // Two entries share the id `b`; the later one's parent is `c`, whose parent is `b`:
    // the node `b` (reached from the root `a`) has `c` as child, and `c` has `b`.
    let line = |id: &str, parent: &str, n: u32| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{n}.000Z","message":{{"role":"user","content":"x","timestamp":{n}}}}}"#
        )
    };
    let file = write(
        &dir,
        "omp.jsonl",
        &format!(
            "{}{HEADER}\n{}\n{}\n{}\n{}\n",
            slot(""),
            line("a", "null", 1),
            line("b", "\"a\"", 2),
            line("c", "\"b\"", 3),
            line("b", "\"c\"", 4)
        ),
    );
    let out = pi_session(&["tree", &file], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("omp's getTree() would loop forever here"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn images_come_back_from_omp_s_blob_store_or_blobs_dir() {
    let dir = scratch("blobs");
    let hash = "ab".repeat(32);
    let image = format!(
        r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"image","data":"blob:sha256:{hash}","mimeType":"image/png"}}],"timestamp":1}}}}"#
    );
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{image}\n", slot("")),
    );
    let home = dir.join("home");
    // No store: the reference stays, and a store without the blob says it is missing.
    let out = pi_session(&["context", &file], &[("HOME", &home)]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("blob:sha256:{hash}")));
    let store = home.join(".omp/agent/blobs");
    std::fs::create_dir_all(&store).unwrap();
    let out = pi_session(&["context", &file], &[("HOME", &home)]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains(&format!(
            "3: warning: blob sha256:{hash} is not in the blob store {}",
            store.display()
        )),
        "{}",
        stderr(&out)
    );
    // omp's own store ($HOME/.omp/agent/blobs), then one given with --blobs.
    std::fs::write(store.join(&hash), b"\x89PNG").unwrap();
    let out = pi_session(&["context", &file], &[("HOME", &home)]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""data":"iVBORw==""#));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join(&hash), b"GIF8").unwrap();
    let out = pi_session(
        &["context", &file, "--blobs", other.to_str().unwrap()],
        &[("HOME", &home)],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""data":"R0lGOA==""#));
    // $XDG_DATA_HOME/omp, once it exists, is where omp keeps its data.
    let xdg = dir.join("xdg");
    std::fs::create_dir_all(xdg.join("omp/blobs")).unwrap();
    std::fs::write(xdg.join("omp/blobs").join(&hash), b"RIFF").unwrap();
    let out = pi_session(
        &["context", &file],
        &[("HOME", &home), ("XDG_DATA_HOME", &xdg)],
    );
    if cfg!(any(target_os = "linux", target_os = "macos")) {
        assert!(String::from_utf8_lossy(&out.stdout).contains(r#""data":"UklGRg==""#));
    }
}

#[test]
fn unsupported_omp_context_features_are_refused_not_guessed() {
    let dir = scratch("unsupported");
    let compaction = r#"{"type":"compaction","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","summary":"S","firstKeptEntryId":"a","tokensBefore":1,"preserveData":{"snapcompact":{"frames":[]}}}"#;
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{USER}\n{compaction}\n", slot("")),
    );
    let out = pi_session(&["context", &file], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("line 4: a snapcompact archive in a compaction's preserveData: omp's context of it is not reproduced yet"),
        "{}",
        stderr(&out)
    );
}
