//! `pi-session new`, `append` and `fork`: what they write, and the hostile cases — bad input
//! (nothing written, the input line named), FIFOs, symlinks, hard links, a held lock, a full
//! disk, a torn last line, huge and deep input, odd names.

use crate::support::scratch;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn pi_session(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_owned();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A new session in `dir`; returns its path.
fn new_session(dir: &Path) -> PathBuf {
    let out = pi_session(
        &[
            "new",
            "--cwd",
            "/home/me/project",
            "--session-dir",
            dir.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end())
}

const USER: &str = r#"{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}"#;
const ASSISTANT: &str = r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#;

fn strict_valid(path: &Path) {
    let out = pi_session(&["validate", "--strict", path.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
}

#[test]
fn new_append_fork_write_strict_valid_sessions() {
    let dir = scratch("write_cli", "basic");
    let file = new_session(&dir);
    assert!(
        file.is_absolute() && file.starts_with(&dir),
        "{}",
        file.display()
    );
    let header = std::fs::read_to_string(&file).unwrap();
    assert!(
        header.starts_with(r#"{"type":"session","version":3,"id":""#),
        "{header}"
    );
    assert!(header.contains(r#""cwd":"/home/me/project"}"#), "{header}");
    let out = pi_session(
        &["append", file.to_str().unwrap()],
        &format!(
            "{USER}\n\n{ASSISTANT}\n{{\"type\":\"session_info\",\"name\":\"  my\\nsession \"}}\n"
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].contains(r#""parentId":null"#), "{text}");
    // Entries are written as given (only id, parentId and timestamp are filled in).
    assert!(lines[3].ends_with(r#""name":"  my\nsession "}"#), "{text}");
    strict_valid(&file);
    let leaf = lines[2]
        .split(r#""id":""#)
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let before = std::fs::read(&file).unwrap();
    let forked = dir.join("fork of it.jsonl");
    let out = pi_session(
        &[
            "fork",
            file.to_str().unwrap(),
            "--leaf",
            leaf,
            "-o",
            forked.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let fork_text = std::fs::read_to_string(&forked).unwrap();
    assert_eq!(
        fork_text.lines().count(),
        3,
        "the branch up to the leaf: {fork_text}"
    );
    assert!(
        fork_text
            .lines()
            .next()
            .unwrap()
            .contains(&format!(r#""parentSession":"{}""#, file.display()))
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "fork only reads FILE"
    );
    strict_valid(&forked);
    // Without -o: pi's file name next to FILE.
    let out = pi_session(&["fork", file.to_str().unwrap(), "--leaf", leaf], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let named = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
    assert_eq!(named.parent(), file.parent());
    strict_valid(&named);
}

#[test]
fn bad_input_names_its_line_and_writes_nothing() {
    let dir = scratch("write_cli", "bad-input");
    let file = new_session(&dir);
    let path = file.to_str().unwrap();
    let before = std::fs::read(&file).unwrap();
    let cases: [(&str, &str); 6] = [
        ("{\"type\":\"mess\n", "<stdin>:1:14:"),
        (
            &format!("{USER}\n{{\"type\":\"message\",\"message\":{{\"role\":\"user\"}}}}\n"),
            "<stdin>:2: PS0203",
        ),
        (
            &format!("{USER}\n[1,2]\n"),
            "<stdin>:2: cannot append this entry: an entry is a JSON object",
        ),
        (
            "{\"type\":\"label\",\"targetId\":\"nope\",\"label\":\"x\"}\n",
            "<stdin>:1: Entry nope not found",
        ),
        (
            &format!("{USER}\n{{\"type\":\"session\",\"version\":3}}\n"),
            "a session header cannot be appended",
        ),
        (
            "{\"type\":\"message\",\"parentId\":\"ghost\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}\n",
            "Entry ghost not found",
        ),
    ];
    for (input, expected) in cases {
        let out = pi_session(&["append", path], input);
        assert_eq!(out.status.code(), Some(1), "{input}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{input}: {err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), before, "{input}");
    }
    // An id given twice (once in the file, once again).
    let out = pi_session(
        &["append", path],
        &format!(
            "{}\n",
            USER.replace(
                "{\"type\":\"message\",",
                "{\"type\":\"message\",\"id\":\"fixed\","
            )
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = pi_session(
        &["append", path],
        &format!(
            "{}\n",
            USER.replace(
                "{\"type\":\"message\",",
                "{\"type\":\"message\",\"id\":\"fixed\","
            )
        ),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the id \"fixed\" is taken"),
        "{}",
        stderr(&out)
    );
    // Usage and missing files.
    let out = pi_session(
        &["append", dir.join("missing.jsonl").to_str().unwrap()],
        USER,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("missing.jsonl"), "{}", stderr(&out));
    let out = pi_session(
        &[
            "new",
            "--cwd",
            "/w",
            "--session-dir",
            dir.to_str().unwrap(),
            "--id",
            "bad id",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("session id"), "{}", stderr(&out));
    let out = pi_session(&["new", "--cwd", "/w", "--pi", "0.99"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn fifos_symlinks_and_hard_links() {
    let dir = scratch("write_cli", "links");
    let file = new_session(&dir);
    // A FIFO is refused at once (no reader waits on it).
    let fifo = dir.join("fifo.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = Command::new("timeout")
        .args([
            "10",
            env!("CARGO_BIN_EXE_pi-session"),
            "append",
            fifo.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(124), "hung on a FIFO");
    let out = Command::new("timeout")
        .args([
            "10",
            env!("CARGO_BIN_EXE_pi-session"),
            "append",
            fifo.to_str().unwrap(),
        ])
        .stdin(std::fs::File::open(write_tmp(&dir, "in.ndjson", USER)).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    // A symlink: the target is appended to, the link stays a link.
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let out = pi_session(&["append", link.to_str().unwrap()], USER);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
    // A hard link: one file, both names see the entry.
    let hard = dir.join("hard.jsonl");
    std::fs::hard_link(&file, &hard).unwrap();
    let out = pi_session(&["append", hard.to_str().unwrap()], ASSISTANT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(&hard).unwrap());
    // fork -o refuses an existing name, even a dangling link.
    let dangling = dir.join("dangling.jsonl");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    for existing in [&hard, &dangling] {
        let out = pi_session(
            &[
                "fork",
                file.to_str().unwrap(),
                "--leaf",
                "x",
                "-o",
                existing.to_str().unwrap(),
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains("exists"), "{}", stderr(&out));
    }
    assert!(!dir.join("nowhere").exists());
}

fn write_tmp(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `pi-session append PATH < INPUT` with files limited to `limit` bytes (`prlimit --fsize`,
/// SIGXFSZ ignored): a full disk at that size.
fn append_with_file_size_limit(path: &str, input: &Path, limit: usize) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; exec prlimit --fsize={limit} \"$0\" append \"$1\" < \"$2\""
        ))
        .arg(env!("CARGO_BIN_EXE_pi-session"))
        .arg(path)
        .arg(input)
        .output()
        .unwrap()
}

#[test]
fn a_held_lock_a_full_disk_and_a_torn_line() {
    let dir = scratch("write_cli", "lock-disk-torn");
    let file = new_session(&dir);
    let path = file.to_str().unwrap();
    // Another writer holds the lock (flock(1) takes the same advisory lock).
    // `-o`: only flock(1) itself holds the lock, so killing it releases the lock.
    let mut holder = Command::new("flock")
        .args(["-o", path, "sleep", "30"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let before = std::fs::read(&file).unwrap();
    let out = pi_session(&["append", path], USER);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("another pi-session is writing this session"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // A full disk (a file size limit just above the file): no partial line stays.
    let input = write_tmp(
        &dir,
        "big.ndjson",
        &ASSISTANT.replace("hello", &"x".repeat(4000)),
    );
    let limit = before.len() + 100;
    let out = append_with_file_size_limit(path, &input, limit);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The journal of the lines is written first, and is what meets the limit here.
    assert!(
        stderr(&out).contains("cannot save the lines to append (the journal)")
            && stderr(&out).contains("nothing was written"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // With room for the journal but not for the lines: the partial write is cut off.
    let padding = ASSISTANT.replace("hello", &"p".repeat(20_000));
    assert!(pi_session(&["append", path], &padding).status.success());
    let before = std::fs::read(&file).unwrap();
    let limit = before.len() + 100;
    let out = append_with_file_size_limit(path, &input, limit);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot append to the file")
            && stderr(&out).contains("nothing was written"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the partial line was cut off"
    );
    let journals = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".pi-session-append")
        })
        .count();
    assert_eq!(journals, 0, "the journal went with the append");
    // A torn last line (a writer killed mid-line) is ended before the next entry.
    let mut torn = before.clone();
    torn.extend_from_slice(br#"{"type":"message","id":"half"#);
    std::fs::write(&file, &torn).unwrap();
    let out = pi_session(&["append", path], USER);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[3].starts_with(r#"{"type":"message","id":""#) && lines[3].ends_with('}'),
        "{text}"
    );
}

#[test]
fn huge_and_deep_input_and_odd_names() {
    let dir = scratch("write_cli", "huge");
    let odd = dir.join("sessions with spaces/ünïcödé -dash");
    let out = pi_session(
        &[
            "new",
            "--cwd",
            "/home/me/ü dir",
            "--session-dir",
            odd.to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let file = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim_end());
    assert!(file.starts_with(&odd));
    // 20,000 entries in one call.
    let mut input = String::new();
    for i in 0..20_000 {
        input.push_str(&USER.replace("\"hi\"", &format!("\"message {i}\"")));
        input.push('\n');
    }
    let out = pi_session(&["append", file.to_str().unwrap()], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().lines().count(),
        20_001
    );
    // A custom entry nested 100,000 deep: no crash; refused as the validator cannot vouch
    // for it (PS0010), and nothing written. 100 deep is fine.
    let before = std::fs::read(&file).unwrap();
    let nested = |depth: usize| {
        format!(
            "{{\"type\":\"custom\",\"customType\":\"deep\",\"data\":{}{}}}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let out = pi_session(&["append", file.to_str().unwrap()], &nested(100_000));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("<stdin>:1: PS0010"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    let out = pi_session(&["append", file.to_str().unwrap()], &nested(100));
    assert!(out.status.success(), "{}", stderr(&out));
}
