//! Inputs and settings shared by the benchmarks in `benches/`.
//!
//! - Generated sessions (`pi_session_testkit::generate`, seed 1 unless `PI_BENCH_SEED` is set)
//!   of the sizes in `PI_BENCH_SIZES` (default `1MB,10MB,100MB`), written once to
//!   `target/bench-data/` under a name that includes the generator's revision, then read
//!   from there.
//! - The real sessions of `conformance/cases/real/`: the large ones one by one, the small
//!   ones together as one input (`real/small-N-files`). `PI_BENCH_REAL=0` leaves them out.
//!
//! Throughput is always the size of the session file(s), so every benchmark reports MB of
//! session per second and the numbers compare across operations.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, SamplingMode, Throughput};
use pi_session_testkit::generate::{self, FileVersion, Limit, Options};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where generated inputs are cached: `$CARGO_TARGET_DIR/bench-data` or `target/bench-data`.
pub fn data_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("bench-data")
}

/// The sizes to benchmark (`PI_BENCH_SIZES`, default `1MB,10MB,100MB`).
pub fn sizes() -> Vec<u64> {
    let spec = std::env::var("PI_BENCH_SIZES").unwrap_or_else(|_| "1MB,10MB,100MB".into());
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| generate::parse_size(s).unwrap_or_else(|e| panic!("PI_BENCH_SIZES: {e}")))
        .collect()
}

fn seed() -> u64 {
    std::env::var("PI_BENCH_SEED").map_or(1, |s| s.parse().expect("PI_BENCH_SEED: a number"))
}

/// One benchmark input.
pub struct Input {
    /// `gen-v3/100MB`, `real/badlogic-pi-mono-large-session`, `real/small-15-files`.
    pub name: String,
    /// The session files' contents (one for generated inputs).
    pub files: Vec<Vec<u8>>,
}

impl Input {
    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.len() as u64).sum()
    }
}

/// A generated session of `size` bytes, from the cache or generated into it.
pub fn generated(version: FileVersion, size: u64) -> Input {
    let options = Options {
        seed: seed(),
        version,
        limit: Limit::Bytes(size),
        linear: false,
    };
    let dir = data_dir();
    let path = dir.join(generate::file_name(&options));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(_) => {
            std::fs::create_dir_all(&dir).expect("create target/bench-data");
            let (bytes, _) = generate::generate_to_vec(&options);
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, &bytes).expect("write bench data");
            std::fs::rename(&tmp, &path).expect("rename bench data");
            bytes
        }
    };
    Input {
        name: format!("gen-v{}/{}", version.number(), generate::size_label(size)),
        files: vec![bytes],
    }
}

/// Generated sessions of every size in [`sizes`].
pub fn generated_all(version: FileVersion) -> Vec<Input> {
    sizes().into_iter().map(|s| generated(version, s)).collect()
}

/// Files at least this large are benchmarked one by one.
const LARGE: u64 = 100_000;

/// The real sessions of `conformance/cases/real/` that `keep` accepts: large files one by
/// one, the others as one input. Empty when `PI_BENCH_REAL=0`.
pub fn real(keep: impl Fn(&[u8]) -> bool) -> Vec<Input> {
    if std::env::var("PI_BENCH_REAL").is_ok_and(|v| v == "0") {
        return Vec::new();
    }
    let dir = root().join("conformance/cases/real");
    let mut cases: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| {
                    let bytes = std::fs::read(e.path().join("session.jsonl")).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), bytes))
                })
                .filter(|(_, b)| keep(b))
                .collect()
        })
        .unwrap_or_default();
    cases.sort();
    let mut inputs = Vec::new();
    let mut small = Vec::new();
    for (name, bytes) in cases {
        if bytes.len() as u64 >= LARGE {
            inputs.push(Input {
                name: format!("real/{name}"),
                files: vec![bytes],
            });
        } else {
            small.push(bytes);
        }
    }
    if !small.is_empty() {
        inputs.push(Input {
            name: format!("real/small-{}-files", small.len()),
            files: small,
        });
    }
    inputs
}

/// Criterion settings for an input of `bytes`: throughput in bytes, 10 samples, and a
/// measurement time that lets 100 MB inputs finish in seconds rather than minutes.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>, bytes: u64) {
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    let (secs, mode) = match bytes {
        0..=2_000_000 => (2, SamplingMode::Auto),
        2_000_001..=20_000_000 => (5, SamplingMode::Flat),
        _ => (15, SamplingMode::Flat),
    };
    group.measurement_time(Duration::from_secs(secs));
    group.sampling_mode(mode);
}
