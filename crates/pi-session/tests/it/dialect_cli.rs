//! oh-my-pi files on the command line: the dialect detected or given, one clear message when
//! a file is read as the other dialect, omp's blob store, omp's listing entry on hostile files,
//! and the commands that refuse omp files rather than answer as pi. (What omp computes is
//! pinned by the `omp/` corpus cases; the expected outputs here are omp's too, from
//! `omp-ref.ts info FILE`.)

use crate::support::{self, write_str as write};
use std::path::Path;
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

fn scratch(test: &str) -> support::Scratch {
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
    let out = pi_session(&["context", &file, "--llm"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let message = stderr(&out);
    assert!(message.contains("not reproduced yet"), "{message}");
    // A slot file cannot be read as pi's: the message does not suggest it.
    assert!(!message.contains("--dialect pi"), "{message}");
    // omp's tree is given; a pi file is answered as before.
    let tree = pi_session(&["tree", &file], &[]);
    assert_eq!(
        String::from_utf8_lossy(&tree.stdout),
        "[{\"id\":\"a\",\"type\":\"message\",\"children\":[]}]\n"
    );
    let pi = write(&dir, "pi.jsonl", &format!("{HEADER}\n{USER}\n"));
    assert_eq!(pi_session(&["tree", &pi], &[]).status.code(), Some(0));
}

const ASSISTANT: &str = r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"stopReason":"stop","timestamp":2}}"#;

/// `pi-session info --mtime 946684800000 ARGS…`: its exit status, stdout and stderr.
fn info(args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["info", "--mtime", "946684800000"];
    all.extend(args);
    let out = pi_session(&all, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout, stderr(&out))
}

#[test]
fn info_lists_an_omp_file_as_omp_does() {
    let dir = scratch("info");
    let file = write(
        &dir,
        "omp.jsonl",
        &format!("{}{HEADER}\n{USER}\n{ASSISTANT}\n", slot("T")),
    );
    let expected = r#"{"id":"s","cwd":"/w","title":"T","created":"2026-01-01T00:00:00.000Z","modified":"2000-01-01T00:00:00.000Z","messageCount":2,"assistantTurns":1,"size":671,"firstMessage":"hi","allMessagesText":"hi yo","status":"complete"}
"#;
    // Detected (the slot) or told.
    assert_eq!(
        info(&[&file]),
        (Some(0), expected.to_owned(), String::new())
    );
    assert_eq!(info(&["--dialect", "omp", &file]).1, expected);
    // A file without omp's signs is pi's unless told; told, it is listed as omp lists it.
    let plain = write(&dir, "plain.jsonl", &format!("{HEADER}\n{USER}\n"));
    let (code, as_pi, _) = info(&[&plain]);
    assert_eq!(code, Some(0));
    assert!(
        as_pi.contains(r#""messageCount":1,"firstMessage":"hi""#),
        "{as_pi}"
    );
    assert!(
        info(&["--dialect", "omp", &plain])
            .1
            .contains(r#""assistantTurns":0"#)
    );

    // omp leaves an empty file and a file that is only a title slot out of its list.
    let empty = write(&dir, "empty.jsonl", "");
    assert_eq!(info(&["--dialect", "omp", &empty]).1, "null\n");
    let only_slot = write(&dir, "slot.jsonl", &slot("T"));
    assert_eq!(info(&[&only_slot]).1, "null\n");

    // A first line of 1 MiB: the header is cut by the 4096-byte window and read as text (the
    // cwd up to the window's edge; the slot's title lost: the slot line's first "title" is its
    // type's value); the messages are seen only in the last window.
    let huge_header = HEADER.replace(
        r#""cwd":"/w""#,
        &format!(r#""cwd":"/{}""#, "w".repeat(1 << 20)),
    );
    let huge = write(
        &dir,
        "huge.jsonl",
        &format!("{}{huge_header}\n{USER}\n{ASSISTANT}\n", slot("Big")),
    );
    let (code, out, _) = info(&[&huge]);
    assert_eq!(code, Some(0));
    let cwd = format!("/{}", "w".repeat(3754));
    assert_eq!(
        out,
        format!(
            r#"{{"id":"s","cwd":"{cwd}","created":"2026-01-01T00:00:00.000Z","modified":"2000-01-01T00:00:00.000Z","messageCount":0,"assistantTurns":1,"size":1049246,"firstMessage":"(no messages)","allMessagesText":"","status":"complete"}}
"#
        )
    );

    // Invalid UTF-8 is decoded with replacement characters, as TextDecoder decodes it.
    let mut bad = format!("{}{HEADER}\n", slot("")).into_bytes();
    bad.extend(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\xc3 \xff\xfe ok\",\"timestamp\":1}}\n");
    bad.extend(format!("{ASSISTANT}\n").bytes());
    let bad = support::write(&dir, "bad.jsonl", &bad);
    let bad = bad.to_str().unwrap();
    assert_eq!(
        info(&[bad]).1,
        "{\"id\":\"s\",\"cwd\":\"/w\",\"created\":\"2026-01-01T00:00:00.000Z\",\"modified\":\"2000-01-01T00:00:00.000Z\",\"messageCount\":2,\"assistantTurns\":1,\"size\":679,\"firstMessage\":\"caf\u{fffd} \u{fffd}\u{fffd} ok\",\"allMessagesText\":\"caf\u{fffd} \u{fffd}\u{fffd} ok yo\",\"status\":\"complete\"}\n"
    );
}

#[test]
fn info_of_omp_files_fails_as_pi_s_does() {
    let dir = scratch("info-errors");
    // A missing file and a directory: the same message and status as pi's listing.
    let missing = dir.join("missing.jsonl");
    let missing = missing.to_str().unwrap();
    for path in [missing, dir.to_str().unwrap()] {
        let (omp_code, omp_out, omp_err) = info(&["--dialect", "omp", path]);
        let (pi_code, _, pi_err) = info(&["--dialect", "pi", path]);
        assert_eq!((omp_code, omp_out.as_str()), (Some(1), ""));
        assert_eq!((omp_code, &omp_err), (pi_code, &pi_err));
    }
    // A FIFO is read to its end, like a file: the same entry, its size the bytes read.
    let text = format!("{}{HEADER}\n{USER}\n{ASSISTANT}\n", slot("T"));
    let file = write(&dir, "file.jsonl", &text);
    let fifo = dir.join("fifo.jsonl");
    let _ = std::fs::remove_file(&fifo);
    crate::adversarial::common::mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, text))
    };
    let from_fifo = info(&[fifo.to_str().unwrap()]);
    writer.join().unwrap().unwrap();
    assert_eq!(from_fifo, info(&[&file]));
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
    // Context notes (a `custom` entry of that type), its type written plainly or with a
    // `\u` escape (the entry is only parsed when its text may name the type); another
    // custom type is no context note.
    for (custom_type, refused) in [
        ("experimental_context_notes", true),
        ("experimental_context_\\u006eotes", true),
        ("experimental_context_notez", false),
    ] {
        let notes = format!(
            r#"{{"type":"custom","id":"n","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","customType":"{custom_type}","data":{{}}}}"#
        );
        let file = write(
            &dir,
            "notes.jsonl",
            &format!("{}{HEADER}\n{USER}\n{notes}\n", slot("")),
        );
        let out = pi_session(&["context", &file], &[]);
        assert_eq!(
            out.status.code(),
            Some(if refused { 1 } else { 0 }),
            "{custom_type}"
        );
        assert_eq!(
            stderr(&out).contains("line 4: context notes"),
            refused,
            "{custom_type}: {}",
            stderr(&out)
        );
    }
}

/// `migrate` of an omp file: omp leaves a file it need not rewrite byte for byte (a CRLF file
/// without a title slot too), and so does `migrate` (stdout: the file; `--in-place`: nothing
/// to do, the file untouched); a file omp rewrites (a migration, a malformed line) comes out
/// as omp rewrites it, printed or replaced; one omp fails to open or rewrite is refused,
/// nothing written.
#[test]
fn migrate_leaves_or_rewrites_an_omp_file_as_omp_does() {
    let dir = scratch("migrate");
    let kept = [
        format!("{}{HEADER}\n{USER}\n", slot("T")),
        format!("{}{HEADER}\r\n\r\n{USER}\r\n", slot("")),
    ];
    for (i, text) in kept.iter().enumerate() {
        let file = write(&dir, &format!("kept-{i}.jsonl"), text);
        let out = pi_session(&["migrate", "--stdout", &file], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(out.stdout, text.as_bytes());
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        let out = pi_session(&["migrate", "--in-place", &file], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("omp leaves this file as it is"),
            "{}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(&file).unwrap(), text.as_bytes());
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            modified
        );
    }
    let v2 = HEADER.replace("\"version\":3", "\"version\":2");
    let rewritten = [
        (
            format!("{}{v2}\n{USER}\n", slot("T")),
            "its version is below 3",
        ),
        (
            format!("{}{HEADER}\n{USER} x\n", slot("T")),
            "line 3 holds text",
        ),
    ];
    for (i, (text, why)) in rewritten.iter().enumerate() {
        let file = write(&dir, &format!("rewritten-{i}.jsonl"), text);
        let out = pi_session(&["migrate", "--stdout", &file], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let printed = out.stdout;
        // A fresh 256-byte slot, the header at version 3, the user line; nothing else.
        assert_eq!(printed.iter().position(|&b| b == b'\n'), Some(255));
        let lines: Vec<&[u8]> = printed[256..].split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 3, "{}", String::from_utf8_lossy(&printed));
        assert!(lines[0].starts_with(br#"{"type":"session","version":3"#));
        assert_eq!(lines[1], USER.as_bytes());
        assert_eq!(std::fs::read(&file).unwrap(), text.as_bytes());
        let out = pi_session(&["migrate", "--in-place", "--backup", &file], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
        assert_eq!(std::fs::read(&file).unwrap(), printed);
        let backup = format!("{file}.bak");
        assert_eq!(std::fs::read(&backup).unwrap(), text.as_bytes());
        std::fs::remove_file(&backup).unwrap();
        // Rewritten once, omp leaves it.
        let out = pi_session(&["migrate", "--in-place", &file], &[]);
        assert!(
            stderr(&out).contains("omp leaves this file as it is"),
            "{}",
            stderr(&out)
        );
    }
    // omp's open throws on a usage without cost: refused, nothing written.
    let no_cost = format!(
        "{}{HEADER}\n{}\n",
        slot("T"),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"usage":{"input":1}}}"#
    );
    let no_cost_file = write(&dir, "no-cost.jsonl", &no_cost);
    for mode in ["--stdout", "--in-place"] {
        let out = pi_session(&["migrate", mode, &no_cost_file], &[]);
        assert_eq!(out.status.code(), Some(1), "{mode}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr(&out).contains("line 3: omp fails to open the file: usage without a cost"),
            "{}",
            stderr(&out)
        );
        assert_eq!(std::fs::read(&no_cost_file).unwrap(), no_cost.as_bytes());
    }
    std::fs::remove_file(&no_cost_file).unwrap();
    // With a BOM, omp itself fails to rewrite it (it takes the file for changed).
    let bom = write(
        &dir,
        "bom.jsonl",
        &format!("\u{feff}{}{v2}\n{USER}\n", slot("T")),
    );
    let out = pi_session(&["migrate", "--stdout", &bom], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("SessionWriteConflictError"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&bom).unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        kept.len() + rewritten.len(),
        "no temporary file left: {names:?}"
    );
    // A pi file is migrated as pi's, as before.
    let pi = write(&dir, "pi.jsonl", &format!("{v2}\n{USER}\n"));
    let out = pi_session(&["migrate", "--stdout", &pi], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(r#"{"type":"session","version":3"#));
}

/// omp's rewrite moves large images into its blob store: `migrate` writes each blob (and its
/// `.png` side link) before the file that names it, into `--blobs DIR` or omp's own store
/// (created as omp creates it); a store it cannot write into leaves the session untouched.
#[test]
fn migrate_moves_omp_images_into_the_blob_store() {
    let dir = scratch("migrate-blobs");
    let data = "QUJD".repeat(300); // 1200 characters of base64: "ABC" × 300
    let image = format!(
        r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}],"timestamp":2}}}}"#
    );
    // A malformed line makes omp rewrite the file.
    let text = format!("{}{HEADER}\n{USER}\nnot json\n{image}\n", slot("T"));
    let file = write(&dir, "images.jsonl", &text);
    let blobs = dir.join("blobs");
    let blobs_arg = blobs.to_str().unwrap();
    let out = pi_session(&["migrate", "--stdout", "--blobs", blobs_arg, &file], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = String::from_utf8(out.stdout.clone()).unwrap();
    let start = printed.find("blob:sha256:").expect("a blob reference") + "blob:sha256:".len();
    let hash = &printed[start..start + 64];
    assert_eq!(std::fs::read(blobs.join(hash)).unwrap(), b"ABC".repeat(300));
    assert_eq!(
        std::fs::read(blobs.join(format!("{hash}.png"))).unwrap(),
        b"ABC".repeat(300)
    );
    assert!(!printed.contains("not json") && !printed.contains(&data));
    assert!(stderr(&out).contains("1 image(s) moved into the blob store"));
    // The store read back: the same bytes again, in place.
    let out = pi_session(&["migrate", "--in-place", "--blobs", blobs_arg, &file], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), printed);
    // omp's own store, under a HOME of its own, is created.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let fresh = write(&dir, "fresh.jsonl", &text);
    let out = pi_session(&["migrate", "--stdout", &fresh], &[("HOME", &home)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(home.join(".omp/agent/blobs").join(hash).is_file());
    // A store that is a file: refused, the session untouched, nothing printed.
    let not_a_dir = write(&dir, "not-a-dir", "x");
    for mode in ["--stdout", "--in-place"] {
        let out = pi_session(&["migrate", mode, "--blobs", &not_a_dir, &fresh], &[]);
        assert_eq!(out.status.code(), Some(1), "{mode}: {}", stderr(&out));
        assert!(out.stdout.is_empty());
        assert!(
            stderr(&out).contains("writing blob") && stderr(&out).contains("unchanged"),
            "{}",
            stderr(&out)
        );
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), text);
    }
}

/// `repair` mends by pi's rules: an omp file (detected, or `--dialect omp`) is refused with
/// what to do instead, nothing written, even with `--in-place`; `--dialect pi` repairs it as
/// a pi file.
#[test]
fn repair_refuses_an_omp_file_and_says_what_to_use() {
    let dir = scratch("repair");
    let v2 = HEADER.replace("\"version\":3", "\"version\":2");
    let text = format!("{}{v2}\n{USER}\n", slot("T"));
    let file = write(&dir, "omp.jsonl", &text);
    for args in [
        vec!["repair", file.as_str()],
        vec!["repair", "--in-place", file.as_str()],
        vec!["repair", "--dialect", "omp", "--in-place", file.as_str()],
    ] {
        let out = pi_session(&args, &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let message = stderr(&out);
        assert!(
            message.contains("an oh-my-pi (omp) session")
                && message.contains("nothing written")
                && message.contains("migrate --dialect omp"),
            "{message}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    // Told it is pi's: pi's repairs (the title line is not a header pi can use).
    let out = pi_session(&["repair", "--dialect", "pi", &file], &[]);
    assert!(
        !stderr(&out).contains("oh-my-pi (omp) session"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// `tree --format text` of an omp file draws omp's tree (`getTree()`): its roots (an entry
/// that is its own parent, one whose parent names no entry) and its children by timestamp,
/// as the JSON gives them.
#[test]
fn tree_text_draws_omp_s_tree() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/cases/omp/tree-children-by-timestamp-and-labels/session.jsonl");
    let file = file.to_str().unwrap();
    let out = pi_session(&["tree", "--format", "text", file], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "r user: root\n\
         ├─ early user: early child [checkpoint]\n\
         │  l1 label: checkpoint on early  ◀ leaf\n\
         └─ late user: late child\n\
         self user: own parent\n\
         orphan user: unknown parent\n"
    );
    // The JSON, in the same order.
    let json = pi_session(&["tree", file], &[]);
    let order: Vec<&str> = [
        "\"r\"",
        "\"early\"",
        "\"l1\"",
        "\"late\"",
        "\"self\"",
        "\"orphan\"",
    ]
    .to_vec();
    let text = String::from_utf8_lossy(&json.stdout).into_owned();
    let places: Vec<usize> = order.iter().map(|id| text.find(id).unwrap()).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "{text}");
}

/// `validate --dialect omp` says what omp does: its notes and its verdict line name omp, and
/// a value followed by more text on its line is omp's PS0013, not pi's "not JSON".
#[test]
fn validate_of_an_omp_file_speaks_of_omp() {
    let dir = scratch("validate-omp");
    let text = format!("{}{HEADER}\n{USER} {{\"x\":1}}\n", slot("T"));
    let file = write(&dir, "omp.jsonl", &text);
    let out = pi_session(&["validate", "--dialect", "omp", &file], &[]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("error[PS0013]"), "{shown}");
    assert!(!shown.contains("PS0001"), "{shown}");
    assert!(
        shown.contains("= omp: ") && !shown.contains("= pi: "),
        "{shown}"
    );
    assert!(shown.contains("— omp would drop line 3"), "{shown}");
    // Read as pi's, the same line is not JSON, and pi is named.
    let out = pi_session(&["validate", "--dialect", "pi", &file], &[]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("= pi: ") && !shown.contains("= omp: "),
        "{shown}"
    );
}
