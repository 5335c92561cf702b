//! `cargo xtask fuzz seed`: the seed corpus of the cargo-fuzz targets (`fuzz/corpus/<target>/`).
//!
//! - the byte targets (`parse_bytes`, `roundtrip`, `migrate`, `streaming_eq_whole`, `validate`,
//!   `tree`, `info`, `repair`, `export`, `search`, `redact`)
//!   get every `conformance/cases/<area>/<case>/session.jsonl`,
//!   `conformance/validate/<case>/session.jsonl` and `conformance/repair/<case>/input.jsonl`,
//!   named `<area>-<case>`, cut at the last
//!   line end within the target's `max_len` (`fuzz/options/<target>.options`);
//!   `streaming_eq_whole` inputs start with a chunk-size prefix (1, 7 and 64 bytes),
//!   `info` inputs with a mode byte, `search` inputs with a mode byte and a pattern line,
//!   `redact` inputs with three bytes choosing the planted secret, its place and spelling;
//! - the structured targets (`context`, `to_llm`) read their input through `arbitrary`, for
//!   which session text is poor entropy: they get 64 seeded pseudo-random inputs of 16 bytes
//!   up to `max_len`.
//!
//! Existing corpus files are kept (the corpus grows as the fuzzers run); seeds are rewritten.

use std::path::{Path, PathBuf};

const BYTE_TARGETS: &[&str] = &[
    "parse_bytes",
    "roundtrip",
    "migrate",
    "streaming_eq_whole",
    "validate",
    "tree",
    "info",
    "repair",
    "export",
    "search",
    "redact",
];
/// The patterns of the `search` seeds: some the raw-line prefilter takes, some it must not.
const SEARCH_PATTERNS: &[&str] = &[
    "e", "\"", r"\w+\s", r"^\{", "user", r"\bthe\b", "a|é", r"\\",
];
const STRUCTURED_TARGETS: &[&str] = &["context", "to_llm", "writer", "append"];

/// `cargo xtask fuzz …`.
pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        ["seed"] => seed(),
        _ => Err("usage: cargo xtask fuzz seed".into()),
    }
}

/// `max_len` from `fuzz/options/<target>.options`.
fn max_len(fuzz: &Path, target: &str) -> Result<usize, String> {
    let path = fuzz.join("options").join(format!("{target}.options"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "max_len")
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or_else(|| format!("{}: no max_len", path.display()))
}

/// Every `session.jsonl` of the corpus as `(area-case, path)`, sorted.
fn cases(root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let dir = root.join("conformance/cases");
    let list = |dir: &Path| -> Result<Vec<PathBuf>, String> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        out.sort();
        Ok(out)
    };
    let mut out = Vec::new();
    // The validator's corpus: one case per diagnostic code.
    for case in list(&root.join("conformance/validate"))? {
        let session = case.join("session.jsonl");
        if session.is_file() {
            let name = case.file_name().unwrap_or_default().to_string_lossy();
            out.push((format!("validate-{name}"), session));
        }
    }
    // The repair corpus: broken files as real deployments have them.
    for case in list(&root.join("conformance/repair"))? {
        let input = case.join("input.jsonl");
        if input.is_file() {
            let name = case.file_name().unwrap_or_default().to_string_lossy();
            out.push((format!("repair-{name}"), input));
        }
    }
    for area in list(&dir)? {
        for case in list(&area)? {
            let session = case.join("session.jsonl");
            if session.is_file() {
                let name = |p: &Path| {
                    p.file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned()
                };
                out.push((format!("{}-{}", name(&area), name(&case)), session));
            }
        }
    }
    Ok(out)
}

/// `bytes` cut at the last LF that keeps it within `max` bytes.
fn cut(bytes: &[u8], max: usize) -> &[u8] {
    if bytes.len() <= max {
        return bytes;
    }
    let end = bytes[..max]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(max, |i| i + 1);
    &bytes[..end]
}

fn seed() -> Result<(), String> {
    let root = crate::root();
    let fuzz = root.join("fuzz");
    let cases = cases(&root)?;
    let write = |path: PathBuf, bytes: &[u8]| {
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    for target in BYTE_TARGETS {
        let max = max_len(&fuzz, target)?;
        let dir = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (i, (name, path)) in cases.iter().enumerate() {
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            if *target == "streaming_eq_whole" {
                // Three chunk sizes (see fuzzing::split_chunk_sizes): 1, 7 and 64 bytes.
                let mut input = vec![3, 0, 6, 63];
                input.extend_from_slice(cut(&bytes, max - 4));
                write(dir.join(name), &input)?;
            } else if *target == "search" {
                // The mode byte and the pattern (see fuzzing::search), one of a few by case.
                let pattern = SEARCH_PATTERNS[i % SEARCH_PATTERNS.len()];
                let mut input = vec![(i % 8) as u8];
                input.extend_from_slice(pattern.as_bytes());
                input.push(b'\n');
                input.extend_from_slice(cut(&bytes, max - input.len()));
                write(dir.join(name), &input)?;
            } else if *target == "redact" {
                // The planted secret, its place and its spelling (see fuzzing::redact).
                let mut input = vec![(i * 7 % 251) as u8, (i % 14) as u8, (i % 3) as u8];
                input.extend_from_slice(cut(&bytes, max - input.len()));
                write(dir.join(name), &input)?;
            } else if *target == "info" {
                // The mode byte (see fuzzing::info): raw bytes, pieces of 7 bytes.
                let mut input = vec![3 << 1];
                input.extend_from_slice(cut(&bytes, max - 1));
                write(dir.join(name), &input)?;
            } else {
                write(dir.join(name), cut(&bytes, max))?;
            }
        }
        println!("fuzz/corpus/{target}: {} seeds", cases.len());
    }
    for (t, target) in STRUCTURED_TARGETS.iter().enumerate() {
        let max = max_len(&fuzz, target)?;
        let dir = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut state = 0x5EED_0000 + t as u64;
        let mut next = move || {
            // splitmix64
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in 0..64 {
            let len = 16 + (next() as usize) % (max - 15);
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            write(dir.join(format!("random-{i:02}")), &bytes)?;
        }
        println!("fuzz/corpus/{target}: 64 seeds");
    }
    Ok(())
}
