//! The fuzz targets on stable: every check of `pi_session_testkit::fuzzing` (the functions the
//! cargo-fuzz targets in `fuzz/` call) over the conformance corpus, which is also the fuzzers'
//! seed corpus, and over a few thousand seeded random inputs: mutated corpus files, generated
//! sessions and raw bytes for the structured targets.
//!
//! A failing input is written to `target/fuzz-smoke/<target>/<name>`; replay it with
//! `cargo +nightly fuzz run <target> <file>` from `fuzz/`, and once fixed, keep it in
//! `fuzz/regressions/<target>/` (see `fuzz/README.md`).

use arbitrary::{Arbitrary, Unstructured};
use pi_session_testkit::fuzzing::{self, SessionSpec};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `conformance/cases/<area>/<case>/session.jsonl`, with its explicit leaf if any.
fn cases() -> Vec<(String, Vec<u8>, Option<String>)> {
    let mut out = Vec::new();
    let cases = root().join("conformance/cases");
    let mut areas: Vec<_> = std::fs::read_dir(&cases)
        .expect("conformance/cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    areas.sort();
    for area in areas {
        let mut dirs: Vec<_> = std::fs::read_dir(&area)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for dir in dirs {
            let Ok(bytes) = std::fs::read(dir.join("session.jsonl")) else {
                continue;
            };
            let leaf = std::fs::read_to_string(dir.join("case.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("leaf")?.as_str().map(str::to_owned));
            let name = format!(
                "{}-{}",
                area.file_name().unwrap_or_default().to_string_lossy(),
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            out.push((name, bytes, leaf));
        }
    }
    assert!(out.len() > 100, "the conformance corpus is missing");
    out
}

/// splitmix64: a tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.below(max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"null",
    b"0",
    b"-0",
    b"1e400",
    b"\xef\xbb\xbf",
    b"\xc2\xa0",
    b"\xe2\x80\xa8",
    b"\xff",
    b"\xe2\x82",
    b"\"type\":\"session\"",
    b"\"version\":1",
    b"\"version\":2",
    b"\"id\":",
    b"\"parentId\":",
    b"\"type\":\"compaction\"",
    b"\"firstKeptEntryIndex\":1",
    b"\"message\":",
    b"\"role\":\"hookMessage\"",
];

/// A corpus file with one to four random edits: byte flips, token insertions, deletions,
/// duplicated or dropped lines, truncation.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(data.len() + 1);
        match rng.below(6) {
            0 if !data.is_empty() => {
                let i = at.min(data.len() - 1);
                data[i] ^= 1 << rng.below(8);
            }
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                data.splice(at..at, token.iter().copied());
            }
            2 => {
                let end = (at + rng.below(64)).min(data.len());
                data.drain(at..end);
            }
            3 => {
                let start = data[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let end = data[at..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(data.len(), |i| at + i);
                let line = data[start..end].to_vec();
                data.splice(end..end, std::iter::once(b'\n').chain(line));
            }
            4 => data.truncate(at),
            _ => {
                let noise = rng.bytes(8);
                data.splice(at..at, noise);
            }
        }
    }
    data
}

/// A generated session file from random bytes.
fn generated(rng: &mut Rng) -> Vec<u8> {
    let bytes = rng.bytes(2048);
    SessionSpec::arbitrary_take_rest(Unstructured::new(&bytes))
        .map(|s| s.to_jsonl().into_bytes())
        .unwrap_or_default()
}

/// Runs `check` on `input`; on a panic, saves the input and fails with its path.
fn run(target: &str, name: &str, input: &[u8], check: impl Fn(&[u8])) {
    if catch_unwind(AssertUnwindSafe(|| check(input))).is_err() {
        let dir = root().join("target/fuzz-smoke").join(target);
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(name);
        let _ = std::fs::write(&path, input);
        panic!(
            "{target}: the check failed on {name} (input saved to {})",
            path.display()
        );
    }
}

/// The byte targets: every corpus file, then mutated files, generated sessions and noise.
/// `max_len` bounds the corpus files given (truncated at a line end), as `-max_len` does.
fn bytes_target(target: &str, seed: u64, count: usize, max_len: usize, check: impl Fn(&[u8])) {
    let cases = cases();
    for (name, bytes, _) in &cases {
        let end = if bytes.len() > max_len {
            bytes[..max_len]
                .iter()
                .rposition(|&b| b == b'\n')
                .unwrap_or(max_len)
        } else {
            bytes.len()
        };
        run(target, name, &bytes[..end], &check);
    }
    let small: Vec<&[u8]> = cases
        .iter()
        .map(|(_, b, _)| b.as_slice())
        .filter(|b| b.len() <= 16 * 1024)
        .collect();
    let mut rng = Rng(seed);
    for i in 0..count {
        let input = match i % 4 {
            0 | 1 => {
                let seed = small[rng.below(small.len())];
                mutate(&mut rng, seed)
            }
            2 => generated(&mut rng),
            _ => rng.bytes(512),
        };
        run(target, &format!("random-{seed}-{i}"), &input, &check);
    }
}

#[test]
fn parse_bytes() {
    bytes_target("parse_bytes", 1, 2000, usize::MAX, fuzzing::parse_bytes);
}

#[test]
fn roundtrip() {
    bytes_target("roundtrip", 2, 2000, 256 * 1024, fuzzing::roundtrip);
}

#[test]
fn streaming_eq_whole() {
    let mut rng = Rng(3);
    bytes_target("streaming_eq_whole", 3, 2000, 64 * 1024, |data| {
        // A chunk-size prefix (see fuzzing::split_chunk_sizes) chosen from the input's length.
        let n = data.len() % 8;
        let mut input = vec![n as u8];
        input.extend((0..n).map(|i| (data.len() >> i) as u8));
        input.extend_from_slice(data);
        fuzzing::streaming_eq_whole(&input);
    });
    for i in 0..500 {
        let input = rng.bytes(300);
        run(
            "streaming_eq_whole",
            &format!("raw-{i}"),
            &input,
            fuzzing::streaming_eq_whole,
        );
    }
}

#[test]
fn migrate() {
    bytes_target("migrate", 4, 2000, 256 * 1024, fuzzing::migrate);
}

#[test]
fn context() {
    for (name, bytes, leaf) in cases() {
        let leaves: Vec<String> = leaf.into_iter().collect();
        run("context", &name, &bytes, |b| {
            fuzzing::check_session_context(b, &leaves)
        });
    }
    let mut rng = Rng(5);
    for i in 0..2500 {
        let input = rng.bytes(4096);
        run(
            "context",
            &format!("random-5-{i}"),
            &input,
            fuzzing::context,
        );
    }
}

#[test]
fn to_llm() {
    let mut rng = Rng(6);
    for i in 0..3000 {
        let input = rng.bytes(2048);
        run("to_llm", &format!("random-6-{i}"), &input, fuzzing::to_llm);
    }
}

#[test]
fn tree() {
    bytes_target("tree", 8, 2000, 16384, fuzzing::tree);
}

#[test]
fn export() {
    // Corpus files (with their hostile fixture), mutated files and noise as raw bytes.
    bytes_target("export", 11, 1500, 64 * 1024, fuzzing::export);
    let hostile = root().join("crates/pi-session/tests/fixtures/export/hostile.jsonl");
    let bytes = std::fs::read(hostile).expect("the export fixture");
    run("export", "hostile-fixture", &bytes, fuzzing::export);
}

#[test]
fn search() {
    // Corpus files, mutated files and noise as sessions, each searched (mode and pattern
    // chosen by its length) for patterns the raw-line prefilter takes and those it must not,
    // and patterns most files do not hold raw (their search reads only the header).
    const PATTERNS: [&str; 12] = [
        "e",
        "\"",
        r"\w+\s",
        r"^\{",
        "USER",
        r"\bthe\b",
        "a|é",
        r"\\",
        "zz9qq",
        "(?i)weathers",
        "ull",
        "1.5",
    ];
    bytes_target("search", 12, 1500, 64 * 1024, |data| {
        let mut input = vec![(data.len() % 8) as u8];
        input.extend_from_slice(PATTERNS[data.len() % PATTERNS.len()].as_bytes());
        input.push(b'\n');
        input.extend_from_slice(data);
        fuzzing::search(&input);
    });
}

#[test]
fn info() {
    // Corpus files, mutated files and noise as raw bytes (checked with pieces of 1, 7 and
    // 1 MiB bytes, chosen by length), then generated sessions through the target's own
    // entry point.
    let pieces = [1, 7, 1 << 20];
    bytes_target("info", 9, 1500, 64 * 1024, |data| {
        let piece = if data.len() > 4096 {
            1 << 20
        } else {
            pieces[data.len() % 3]
        };
        fuzzing::check_info(data, piece);
    });
    let mut rng = Rng(10);
    for i in 0..500 {
        let mut input = rng.bytes(2048);
        input.insert(0, (i as u8) | 1);
        run("info", &format!("generated-10-{i}"), &input, fuzzing::info);
    }
}

#[test]
fn validate() {
    // The validator's own corpus first: every diagnostic code at least once.
    let dir = root().join("conformance/validate");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("conformance/validate")
        .flatten()
        .map(|e| e.path().join("session.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    cases.sort();
    for path in cases {
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let bytes = std::fs::read(&path).unwrap();
        run(
            "validate",
            &format!("validate-{name}"),
            &bytes,
            fuzzing::validate,
        );
    }
    bytes_target("validate", 7, 2000, usize::MAX, fuzzing::validate);
}

#[test]
fn repair() {
    // The repair corpus first (glued, torn, repeated, shared ids, cycles), then the
    // validator's corpus (every diagnostic code), then random bytes.
    let mut repair_cases: Vec<_> = std::fs::read_dir(root().join("conformance/repair"))
        .expect("conformance/repair")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.jsonl").is_file())
        .collect();
    repair_cases.sort();
    for case in repair_cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(case.join("input.jsonl")).unwrap();
        run("repair", &format!("repair-{name}"), &bytes, fuzzing::repair);
    }
    let dir = root().join("conformance/validate");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("conformance/validate")
        .flatten()
        .map(|e| e.path().join("session.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    cases.sort();
    for path in cases {
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let bytes = std::fs::read(&path).unwrap();
        run(
            "repair",
            &format!("validate-{name}"),
            &bytes,
            fuzzing::repair,
        );
    }
    for (i, input) in hostile_to_repair().iter().enumerate() {
        run("repair", &format!("hostile-{i}"), input, fuzzing::repair);
    }
    // Torn appends glued to the next line, in corpus files (v1, v2 and v3), some with CRLF
    // line ends, some mutated further.
    let corpus = self::cases();
    let small: Vec<&[u8]> = corpus
        .iter()
        .map(|(_, b, _)| b.as_slice())
        .filter(|b| b.len() <= 16 * 1024 && b.contains(&b'\n'))
        .collect();
    let mut rng = Rng(12);
    for i in 0..200 {
        let mut input = small[rng.below(small.len())].to_vec();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(input.len());
            if let Some(newline) = input[at..].iter().position(|&b| b == b'\n') {
                input.drain(at..at + newline + 1);
            }
        }
        if rng.below(4) == 0 {
            input = input
                .split(|&b| b == b'\n')
                .collect::<Vec<_>>()
                .join(&b"\r\n"[..]);
        }
        if rng.below(2) == 0 {
            input = mutate(&mut rng, &input);
        }
        run("repair", &format!("torn-12-{i}"), &input, fuzzing::repair);
    }
    bytes_target("repair", 11, 100, usize::MAX, fuzzing::repair);
}

/// Files that made repair lose bytes or entries (issue 25).
fn hostile_to_repair() -> Vec<Vec<u8>> {
    const V1: &str = r#"{"type":"session","id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/w"}"#;
    const V2: &str = r#"{"type":"session","version":2,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/w"}"#;
    const V3: &str = r#"{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/w"}"#;
    let v1_entry = |text: &str| {
        format!(
            r#"{{"type":"message","timestamp":"2026-01-01T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    let entry = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T10:00:01.000Z","message":{{"role":"user","content":"x","timestamp":1}}}}"#
        )
    };
    let orphan = r#"{"type":"message","timestamp":"2026-01-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"gone","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":2}}"#;
    let (e1, e2, e3) = (
        entry("aaaaaaa1", "null"),
        entry("aaaaaaa2", r#""aaaaaaa1""#),
        entry("aaaaaaa3", r#""aaaaaaa2""#),
    );
    let texts = [
        // A v1 file whose last line, not JSON, ends with CRLF: the CR was lost.
        format!("{V1}\n{}\n{{\"type\":\"mess\r\n", v1_entry("a")),
        // Rejects of a v1 file held the migrated line.
        format!("{V1}\n{}\n{orphan}\n{}\n", v1_entry("a"), v1_entry("b")),
        format!("{V2}\n{e1}\n{{\"type\": \"leaf\"}}\n"),
        // A blank line in a v1 file.
        format!("{V1}\n{}\n \t\n{}\n", v1_entry("a"), v1_entry("b")),
        // Short fragments glued before a complete entry.
        format!("{V3}\n{e1}\n{{\"ty{e2}\n{e3}\n"),
        format!("{V3}\n{e1}\n{{{e2}\n{e3}\n"),
        format!("{V3}\n{e1}\n{{\"type\"{e2}\n{e3}\n"),
        format!("{V3}\n{e1}\n{{\"ty\n{e2}\n{e3}\n"),
        // Glued entries in a CRLF file: the CR between them.
        format!("{V3}\r\n{e1}\r\n{e2}{e3}\r\n"),
        format!("{V3}\r\n{e1}\r\n{{\"ty{e2}\r{e3}\r\n"),
    ];
    let mut inputs: Vec<Vec<u8>> = texts.into_iter().map(String::into_bytes).collect();
    // Glued lines with a byte that is not UTF-8.
    let mut glued = format!("{V3}\n{e1}\n").into_bytes();
    glued.extend_from_slice(&e2.as_bytes()[..40]);
    glued.push(0xFF);
    let mut with_ff = e2.replace("\"x\"", "\"x#\"").into_bytes();
    if let Some(at) = with_ff.iter().position(|&b| b == b'#') {
        with_ff[at] = 0xFF;
    }
    glued.extend_from_slice(&with_ff);
    glued.extend_from_slice(format!("\n{e3}\n").as_bytes());
    inputs.push(glued);
    inputs
}

#[test]
fn writer() {
    // Operation sequences from random bytes of every length up to 4 KiB.
    let mut rng = Rng(10);
    for i in 0..1500 {
        let len = rng.below(4096);
        let input = rng.bytes(len);
        run("writer", &format!("random-10-{i}"), &input, fuzzing::writer);
    }
}

#[test]
fn redact() {
    // Corpus files, mutated files and noise after a planted secret chosen, placed and spelled
    // by the input's length.
    bytes_target("redact", 13, 600, 64 * 1024, |data| {
        let n = data.len();
        let mut input = vec![(n % 251) as u8, (n / 3 % 14) as u8, (n / 7 % 3) as u8];
        input.extend_from_slice(data);
        fuzzing::redact(&input);
    });
}
