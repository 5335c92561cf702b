//! The front door ([`Session::from_bytes`], [`Session::open`] and the one-call answers) gives,
//! on every case of the conformance corpus, byte for byte what pi computed; opening files
//! fails with the path and the reason; typed entries lose nothing.

use pi_session_conformance::corpus::{Expected, INFO_MTIME_MS, Op, load_cases};
use pi_session_format::context::write_messages;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::omp::Blobs;
use pi_session_format::types::Entry;
use pi_session_format::{Dialect, Leaf, LoadError, OpenError, PiVersion, Session};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases")
}

/// What the front door answers for `op`, as the CLI writes it (with its newline), or `None`
/// when `op` fails. An omp session answers as omp (`blobs`: the case's blob store).
fn answer(session: &Session<'_>, op: Op, leaf: &Leaf, blobs: Option<&Blobs>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if session.dialect == Dialect::Omp {
        match op {
            Op::Context => session
                .omp_context(leaf.clone(), blobs)
                .ok()?
                .write_json(&mut out)
                .ok()?,
            Op::Tree => session.write_omp_tree(&mut out).ok()?,
            Op::Info => session.write_info(&mut out).ok()?,
            Op::Llm | Op::Migrate => return None,
        }
        out.push(b'\n');
        return Some(out);
    }
    match op {
        Op::Context => session
            .context(leaf.clone())
            .ok()?
            .write_json(&mut out)
            .ok()?,
        Op::Llm => write_messages(&session.to_llm(leaf.clone()).ok()?, &mut out).ok()?,
        Op::Tree => out = session.tree_json(),
        Op::Info => session.write_info(&mut out).ok()?,
        Op::Migrate => return None,
    }
    out.push(b'\n');
    Some(out)
}

#[test]
fn every_corpus_case_answers_what_pi_computed() {
    let cases = load_cases(&corpus()).expect("the corpus loads");
    let mtime = UNIX_EPOCH + Duration::from_millis(INFO_MTIME_MS as u64);
    let mut checked = 0;
    // A case of 0.87.1 is one of current pi too (1.5.2 reads every file as 0.87.1 does).
    let runs = cases.iter().flat_map(|case| {
        let pi: PiVersion = case.pi().parse().expect("the case names a pi");
        let pis: &[PiVersion] = match pi {
            PiVersion::V0_87 => &[PiVersion::V0_87, PiVersion::V1_5],
            PiVersion::V0_73 => &[PiVersion::V0_73],
            _ => &[PiVersion::V1_5],
        };
        pis.iter().map(move |&pi| (case, pi))
    });
    for (case, pi) in runs {
        let leaf = case.meta.leaf.clone().map_or(Leaf::Current, Leaf::Id);
        let bytes = std::fs::read(case.session_path()).expect("the session file reads");
        // The corpus's v1 files were migrated by a pi whose ids count up from 00000001.
        let dialect: Dialect = case.dialect().parse().expect("the case names a dialect");
        let blobs = case.blobs_dir().map(Blobs::new);
        let loaded = Session::loader(pi)
            .dialect(dialect)
            .ids(&mut SequentialIds::default())
            .load(&bytes)
            .map(|s| s.with_mtime(mtime));
        for op in case.ops() {
            if op == Op::Migrate {
                continue;
            }
            let expected = case.expected(op).expect("the expected output reads");
            let actual = loaded
                .as_ref()
                .ok()
                .and_then(|s| answer(s, op, &leaf, blobs.as_ref()));
            match (expected, actual) {
                (Some(Expected::Output(want)), Some(got)) => assert!(
                    want == got,
                    "{} {op} ({pi:?}): the front door differs from pi:\n  pi:   {}\n  ours: {}",
                    case.id,
                    String::from_utf8_lossy(&want),
                    String::from_utf8_lossy(&got)
                ),
                // `info` reads files pi cannot open (no header check beyond `type`): the
                // front door only answers for sessions that load.
                (Some(Expected::Output(_)), None) if op == Op::Info && loaded.is_err() => {}
                (Some(Expected::Output(_)), None) => {
                    panic!("{} {op}: pi answers, the front door fails", case.id)
                }
                (Some(Expected::Error(_)), Some(_)) => {
                    panic!("{} {op}: pi fails, the front door answers", case.id)
                }
                (Some(Expected::Error(_)), None) | (None, _) => {}
            }
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} answers checked");
}

const FILE: &[u8] = br#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}
{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","targetId":"a","label":"start","future":[1,2]}
{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","api":"x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":3}}
{"type":"brand_new","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","x":{"y":null}}
"#;

#[test]
fn the_index_is_built_once_and_shared_by_every_answer() {
    let session = Session::from_bytes(FILE, PiVersion::V0_73).unwrap();
    let first: *const _ = session.index();
    session.context(Leaf::Current).unwrap();
    session.tree();
    assert!(std::ptr::eq(first, session.index()));
    assert_eq!(session.pi, PiVersion::V0_73);
}

#[test]
fn typed_entries_keep_every_field_and_unknown_types() {
    let session = Session::from_bytes(FILE, PiVersion::V0_73).unwrap();
    let entries: Vec<_> = session.entries().collect::<Result<_, _>>().unwrap();
    assert_eq!(entries.len(), 4);
    assert!(matches!(entries[0].entry, Entry::Message(_)));
    assert!(matches!(entries[1].entry, Entry::Label(_)));
    assert!(matches!(entries[3].entry, Entry::Unknown(_)));
    for typed in &entries {
        // Serialized again, every entry is the value of its line (key order aside).
        let again = serde_json::to_value(&typed.entry).unwrap();
        let line: serde_json::Value = serde_json::from_str(typed.record.text()).unwrap();
        assert_eq!(again, line, "line {}", typed.record.line);
    }
    assert_eq!(entries[1].record.line, 3);
}

#[test]
fn typed_entries_of_a_v1_file_are_the_migrated_entries() {
    let v1 = br#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"k","content":"x","display":true,"timestamp":1}}
{"type":"thinking_level_change","timestamp":"2025-01-01T00:00:02.000Z","thinkingLevel":"high"}
"#;
    let session = Session::from_bytes(v1, PiVersion::V0_73).unwrap();
    let entries: Vec<_> = session.entries().collect::<Result<_, _>>().unwrap();
    let (Entry::Message(first), Entry::ThinkingLevelChange(second)) =
        (&entries[0].entry, &entries[1].entry)
    else {
        panic!("a message and a thinking level change: {entries:?}");
    };
    // v1→v2 gave them ids and linked them; v2→v3 renamed the role.
    assert_eq!(second.parent_id.as_deref(), Some(first.id.as_str()));
    assert_eq!(
        serde_json::to_value(&first.message).unwrap()["role"],
        "custom"
    );
}

#[test]
fn an_entry_that_does_not_fit_the_model_is_an_error_with_its_place() {
    let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","targetId":7}
"#;
    let session = Session::from_bytes(file, PiVersion::V0_73).unwrap();
    let error = session.entries().next().unwrap().unwrap_err();
    assert_eq!((error.line, error.column), (2, 1));
    assert!(error.message.contains("expected a string"), "{error}");
    assert!(
        error.to_string().starts_with("line 2, column 1: "),
        "{error}"
    );
    // Deeper than serde_json reads (128 levels): serde says where it stopped.
    let deep = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/\"}}\n{{\"type\":\"custom\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"customType\":\"k\",\"data\":{}1{}}}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    let session = Session::from_bytes(deep.as_bytes(), PiVersion::V0_73).unwrap();
    let error = session.entries().next().unwrap().unwrap_err();
    assert_eq!(error.line, 2);
    assert!(error.column > 100, "{error}");
}

#[test]
fn typed_entries_read_what_javascript_strings_hold() {
    // A lone surrogate has no Rust `String`: U+FFFD in the typed value, the exact text in the
    // record. Duplicate keys: the last one, as JSON.parse.
    let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"custom","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","customType":"x\ud800y"}
{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","targetId":"z","targetId":"a"}
"#;
    let session = Session::from_bytes(file, PiVersion::V0_73).unwrap();
    let entries: Vec<_> = session.entries().collect::<Result<_, _>>().unwrap();
    let Entry::Custom(custom) = &entries[0].entry else {
        panic!("a custom entry");
    };
    assert_eq!(custom.custom_type, "x\u{fffd}y");
    assert!(entries[0].record.text().contains(r"x\ud800y"));
    let Entry::Label(label) = &entries[1].entry else {
        panic!("a label entry");
    };
    assert_eq!(label.target_id, "a");
}

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        TempDir(crate::scratch(name))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn set_mtime(path: &Path, mtime: std::time::SystemTime) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(mtime).unwrap();
}

#[test]
fn open_reads_the_file_and_its_modification_time() {
    let dir = TempDir::new("open");
    let path = dir.0.join("odd name \u{2713}.jsonl");
    std::fs::write(&path, FILE).unwrap();
    let mtime = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
    set_mtime(&path, mtime);
    let file = Session::open(&path, PiVersion::V0_87).unwrap();
    assert_eq!(file.bytes(), FILE);
    let session = file.session();
    assert_eq!(session.pi, PiVersion::V0_87);
    let from_bytes = Session::from_bytes(FILE, PiVersion::V0_87)
        .unwrap()
        .with_mtime(mtime);
    let info = |s: &Session<'_>| {
        let mut out = Vec::new();
        s.write_info(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    assert_eq!(info(session), info(&from_bytes));
    assert!(session.info().is_some());
    // Without any timestamp in the file, `modified` is the file's modification time.
    let bare = dir.0.join("bare.jsonl");
    std::fs::write(
        &bare,
        b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n",
    )
    .unwrap();
    set_mtime(&bare, mtime);
    let bare = Session::open(&bare, PiVersion::V0_73).unwrap();
    let listing = bare.session().info().unwrap();
    let modified = listing.get("modified").and_then(|m| m.as_str());
    assert_eq!(modified, Some("2023-11-14T22:13:20.123Z"));
    // Through a symlink, the target is read.
    #[cfg(unix)]
    {
        let link = dir.0.join("link.jsonl");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            Session::open(&link, PiVersion::V0_73).unwrap().bytes(),
            FILE
        );
    }
}

#[test]
fn open_fails_with_the_path_and_the_reason() {
    let dir = TempDir::new("fail");
    let missing = dir.0.join("missing.jsonl");
    let error = Session::open(&missing, PiVersion::V0_73).unwrap_err();
    assert!(matches!(error, OpenError::Io { .. }));
    assert!(
        error
            .to_string()
            .starts_with(&missing.display().to_string())
    );

    let error = Session::open(&dir.0, PiVersion::V0_73).unwrap_err();
    assert!(error.to_string().contains("a directory"), "{error}");

    let bad = dir.0.join("bad.jsonl");
    std::fs::write(&bad, b"not json\n{\"type\":\"message\"}\n").unwrap();
    let error = Session::open(&bad, PiVersion::V0_73).unwrap_err();
    let OpenError::Load { source, .. } = &error else {
        panic!("a load error: {error}");
    };
    assert!(matches!(source, LoadError::InvalidHeader { line: 2, .. }));
    assert_eq!(
        error.to_string(),
        format!(
            "{}: line 2: not a valid session header: `type` is \"message\", expected \"session\" (pi would truncate the file to a new, empty session)",
            bad.display()
        )
    );
    // The file is left as it was.
    assert_eq!(
        std::fs::read(&bad).unwrap(),
        b"not json\n{\"type\":\"message\"}\n"
    );
}

/// A FIFO is read as a stream: `open` waits for its writer, as reading one should, and takes
/// everything written before the writer closes it (its size, 0, is only a hint).
#[cfg(unix)]
#[test]
fn open_reads_a_fifo_to_its_end() {
    let dir = TempDir::new("fifo");
    let fifo = dir.0.join("session.fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut out = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            for chunk in FILE.chunks(7) {
                std::io::Write::write_all(&mut out, chunk).unwrap();
            }
        })
    };
    let file = Session::open(&fifo, PiVersion::V0_73).unwrap();
    writer.join().unwrap();
    assert_eq!(file.bytes(), FILE);
    assert_eq!(file.session().entries.len(), 4);
}

/// A session of `entries` messages in one chain (a v1 file without ids when `v1`).
fn chain(entries: usize, v1: bool) -> Vec<u8> {
    let version = if v1 { "" } else { r#""version":3,"# };
    let mut out = format!(
        "{{\"type\":\"session\",{version}\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}}\n"
    );
    for i in 0..entries {
        let ids = if v1 {
            String::new()
        } else {
            let parent = i
                .checked_sub(1)
                .map_or("null".to_owned(), |p| format!("\"{p:08x}\""));
            format!("\"id\":\"{i:08x}\",\"parentId\":{parent},")
        };
        out.push_str(&format!(
            "{{\"type\":\"message\",{ids}\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"message {i} {}\",\"timestamp\":1}}}}\n",
            "x".repeat(150)
        ));
    }
    out.into_bytes()
}

/// Every way in loads the same session: bytes read whole, their pages released as they are
/// scanned, read through a function, a file opened from its path (over 4 MiB: mapped), and a
/// v1 file loaded for rewriting writes what loading it migrates, and owned bytes load with the
/// ids asked for.
#[test]
fn every_way_in_through_the_loader_loads_the_same_session() {
    let bytes = chain(30_000, false);
    assert!(bytes.len() > 4 << 20, "large enough to be mapped");
    let context = |s: &Session<'_>| {
        let mut out = Vec::new();
        s.context(Leaf::Current)
            .unwrap()
            .write_json(&mut out)
            .unwrap();
        out
    };
    let whole = context(&Session::from_bytes(&bytes, PiVersion::V0_87).unwrap());

    let released = std::sync::atomic::AtomicUsize::new(0);
    let release = |range: std::ops::Range<usize>| {
        released.fetch_add(range.len(), std::sync::atomic::Ordering::Relaxed);
    };
    let session = Session::loader(PiVersion::V0_87)
        .releasing(&release)
        .load(&bytes)
        .unwrap();
    assert_eq!(context(&session), whole);
    assert_eq!(
        released.into_inner(),
        bytes.len(),
        "every byte released once"
    );

    let reads = std::sync::atomic::AtomicUsize::new(0);
    let read_at = |buf: &mut [u8], at: usize| {
        reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        buf.copy_from_slice(&bytes[at..at + buf.len()]);
        true
    };
    let session = Session::loader(PiVersion::V0_87)
        .reading(&read_at)
        .load(&bytes)
        .unwrap();
    assert_eq!(context(&session), whole);
    assert!(reads.load(std::sync::atomic::Ordering::Relaxed) > 1);

    let dir = TempDir::new("loader");
    let path = dir.0.join("large.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let opened = Session::loader(PiVersion::V0_87).open(&path).unwrap();
    assert_eq!(opened.bytes(), &bytes[..]);
    assert_eq!(context(opened.session()), whole);

    // A v1 file: the rewrite writes what the load migrated, with the same ids.
    let v1 = chain(100, true);
    let loaded = Session::loader(PiVersion::V0_73)
        .ids(&mut SequentialIds::default())
        .load(&v1)
        .unwrap();
    let migration = Session::loader(PiVersion::V0_73)
        .ids(&mut SequentialIds::default())
        .load_for_rewrite(&v1)
        .unwrap();
    assert!(migration.changed());
    let mut written = Vec::new();
    let mut changes = pi_session_format::session::Changes::new(0);
    migration
        .write(&mut written, &mut changes, &|_| {})
        .unwrap();
    assert_eq!(written, loaded.to_jsonl());
    assert!(
        String::from_utf8(written)
            .unwrap()
            .contains("\"id\":\"00000001\"")
    );

    // Owned bytes with chosen ids: the same session as loading the borrowed bytes.
    let owned = Session::loader(PiVersion::V0_73)
        .ids(&mut SequentialIds::default())
        .load_owned(v1.clone())
        .unwrap();
    assert_eq!(owned.bytes(), &v1[..]);
    assert_eq!(owned.session().to_jsonl(), loaded.to_jsonl());
    let random = Session::loader(PiVersion::V0_73)
        .load_owned(v1.clone())
        .unwrap();
    assert_ne!(random.session().to_jsonl(), loaded.to_jsonl());
}
