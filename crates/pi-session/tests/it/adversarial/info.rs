//! Adversarial cases: `info` (issue 12, the info part of item 5) — it parsed every line
//! into values and joined every message text in memory: 3–7× the file's size (1 GB: 6.3 s
//! and 2.98 GB; a 1M-entry chain: 13 s and 3.5 GB). It now streams in two passes.

use super::common::*;
use pi_session_format::PiVersion;
use pi_session_format::info::oracle;
use pi_session_format::json;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(300);

/// The most a debug build's own peak resident memory was seen to be (12-18 MiB: the binary,
/// libc, the allocator's arenas), whatever the input.
const OWN_PEAK: u64 = 18 << 20;

/// The fixed `--mtime` of these runs.
const MTIME: &str = "946684800000";

/// What the former whole-file implementation prints for `bytes`.
fn expected(bytes: &[u8], pi: PiVersion) -> Vec<u8> {
    let value = oracle::session_info(bytes, 946_684_800_000.0, pi);
    let mut out = value.map_or_else(|| b"null".to_vec(), |v| json::to_string(&v).into_bytes());
    out.push(b'\n');
    out
}

/// Item 5: a 20 MB session took about 3–7× its size in memory (60–140 MB). Streamed, the
/// peak is a few megabytes over the process's own (18-19 MiB for a debug build, 10 for a
/// release one, measured first), at most half the file.
/// (Nothing big is allocated in this process: a child's measured peak includes the test
/// process's own, see `run_limited`.)
#[test]
fn info_of_a_20mb_session_needs_far_less_memory_than_the_file() {
    let dir = scratch("info-20mb");
    let path = generated(&dir, "big.jsonl", &["--size", "20MB", "--seed", "1"]);
    let size = std::fs::metadata(&path).unwrap().len();
    // The process's own peak (a debug build's: 18-19 MiB, the binary's pages; it differs
    // from build to build), from a session of one line.
    let tiny = write(&dir, "tiny.jsonl", HEADER);
    let own = run(&["info", s(&tiny), "--mtime", MTIME], TIMEOUT).max_rss_kib * 1024;
    for flag in ["0.73", "0.87"] {
        let run = run(&["info", s(&path), "--mtime", MTIME, "--pi", flag], TIMEOUT);
        run.assert_code(0);
        assert!(run.stderr.is_empty(), "{}", run.stderr);
        assert!(run.stdout_text().starts_with("{\"id\":"));
        // The message texts are a few percent of a generated file (tool results and
        // thinking are most of it).
        assert!(
            run.stdout_len > size / 50,
            "{} bytes of output",
            run.stdout_len
        );
        // What it holds beyond its own: half the file at most (4.3 MiB when measured).
        assert!(
            run.max_rss_kib * 1024 < own + size / 2,
            "--pi {flag}: peak {} KiB for a file of {size} bytes, {} KiB its own",
            run.max_rss_kib,
            own / 1024
        );
    }
}

/// The output of the command on a generated session is the former whole-file one, with
/// both pi versions' rules.
#[test]
fn info_of_a_generated_session_equals_the_former_output() {
    let dir = scratch("info-equal");
    let path = generated(&dir, "small.jsonl", &["--size", "1MB", "--seed", "4"]);
    let bytes = std::fs::read(&path).unwrap();
    for (pi, flag) in [(PiVersion::V0_73, "0.73"), (PiVersion::V0_87, "0.87")] {
        let run = run(&["info", s(&path), "--mtime", MTIME, "--pi", flag], TIMEOUT);
        run.assert_code(0);
        assert!(
            run.stdout == expected(&bytes, pi),
            "--pi {flag}: output differs"
        );
    }
}

/// pi drops the session on an exception anywhere in the file, after lines whose texts a
/// streaming writer would already have printed: a `null` entry as the last line of a big
/// file still makes the output `null`, and nothing of the texts is written first.
#[test]
fn info_with_a_null_line_after_megabytes_of_messages_prints_only_null() {
    let dir = scratch("info-null-at-end");
    let path = generated(&dir, "big.jsonl", &["--size", "5MB", "--seed", "3"]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"null\n");
    std::fs::write(&path, &bytes).unwrap();
    // pi 0.73.1 throws on the `null` line.
    let run = run(
        &["info", s(&path), "--mtime", MTIME, "--pi", "0.73"],
        TIMEOUT,
    );
    run.assert_code(0);
    assert_eq!(run.stdout_text(), "null\n");
    // pi 0.87.1 skips falsy values; a null message throws in both.
    bytes.truncate(bytes.len() - 5);
    bytes.extend_from_slice(b"{\"type\":\"message\",\"message\":null}\n");
    std::fs::write(&path, &bytes).unwrap();
    let run = super::common::run(
        &["info", s(&path), "--mtime", MTIME, "--pi", "0.87"],
        TIMEOUT,
    );
    run.assert_code(0);
    assert_eq!(run.stdout_text(), "null\n");
}

/// 48 lines of 460 kB whose strings all have escapes, ended by lone CRs: for pi 0.87.1 one
/// line per CR, every text written (escapes resolved), memory following the longest line,
/// not the file; for 0.73.1 one unparseable line, so `null`.
#[test]
fn info_of_long_escaped_lines_ended_by_lone_crs_streams_them() {
    let dir = scratch("info-long-cr-lines");
    let path = dir.join("cr.jsonl");
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        file.write_all(HEADER.replace('\n', "\r").as_bytes())
            .unwrap();
        let line = format!(
            "{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\r",
            "x\\u0041".repeat(1 << 16)
        );
        for _ in 0..48 {
            file.write_all(line.as_bytes()).unwrap();
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let run = run(
        &["info", s(&path), "--mtime", MTIME, "--pi", "0.87"],
        TIMEOUT,
    );
    run.assert_code(0);
    let out = run.stdout_text();
    assert!(out.contains("\"messageCount\":48,"), "{}", &out[..200]);
    // `firstMessage` and the 48 texts of `allMessagesText`, each 65,536 times "xA".
    assert_eq!(out.matches("xA").count(), 49 << 16);
    assert!(out.ends_with("xA\"}\n"));
    // The output (6 MB of text pi's info holds) is in memory, twice (the text gathered, then
    // its JSON), the 22 MB file is not: the peak stays under the process's own (at most
    // OWN_PEAK), twice the output and a few lines, which holding the file would pass. (The
    // file's size as the bound was flaky: the debug binary's own peak is 12-18 MiB. Its own
    // peak cannot be measured on a small file either: `VmHWM` is sampled every 2 ms, and a
    // process that ends sooner reads as 0.)
    let bound = OWN_PEAK + 2 * out.len() as u64 + (4 << 20);
    assert!(
        run.max_rss_kib * 1024 < bound && bound < OWN_PEAK / 2 + size + out.len() as u64,
        "peak {} KiB (bound {} KiB) for {size} bytes and {} of output",
        run.max_rss_kib,
        bound / 1024,
        out.len()
    );
    let run = super::common::run(
        &["info", s(&path), "--mtime", MTIME, "--pi", "0.73"],
        TIMEOUT,
    );
    run.assert_code(0);
    assert_eq!(run.stdout_text(), "null\n");
}

/// Item 5: `info` of a 1M-entry linear chain took 13 s and 3.5 GB. Target: 2 s with a
/// release build (docs/PERFORMANCE.md); a debug build gets more room.
#[test]
#[ignore = "long: generates a 1M-entry session"]
fn info_linear_chain_of_1m_entries_is_fast_and_small() {
    let dir = scratch("info-linear-1m");
    let path = generated(&dir, "chain.jsonl", &["--entries", "1000000", "--linear"]);
    let size = std::fs::metadata(&path).unwrap().len();
    let run = run(&["info", s(&path), "--mtime", MTIME], TIMEOUT);
    run.assert_code(0);
    assert!(run.stdout_text().starts_with("{\"id\":"));
    // A guard against blow-ups (13 s before); the 2 s target is measured with the
    // benchmarks (docs/PERFORMANCE.md).
    let limit = if cfg!(debug_assertions) { 30 } else { 4 };
    assert!(
        run.elapsed < Duration::from_secs(limit),
        "took {:?} (limit {limit} s)",
        run.elapsed
    );
    assert!(
        run.max_rss_kib * 1024 < (size / 4).max(256 << 20),
        "peak {} KiB for a file of {size} bytes",
        run.max_rss_kib
    );
}

/// Item 5: `info` of a 1 GB session took 6.3 s and 2.98 GB. Target: under 1 s and 256 MB
/// with a release build (docs/PERFORMANCE.md); a debug build gets more time.
#[test]
#[ignore = "long: generates a 1 GB session"]
fn info_of_a_1gb_session_runs_in_a_second_and_256mb() {
    let dir = scratch("info-1gb");
    let path = generated(&dir, "big.jsonl", &["--size", "1GB", "--seed", "1"]);
    // Once to bring the file into the page cache, as for the other measurements.
    run(&["info", s(&path)], TIMEOUT).assert_code(0);
    let run = run(&["info", s(&path), "--mtime", MTIME], TIMEOUT);
    run.assert_code(0);
    assert!(run.stdout_text().starts_with("{\"id\":"));
    // Its `allMessagesText` alone is about 60 MB.
    assert!(run.stdout_len > 50_000_000, "{} bytes", run.stdout_len);
    // A guard against blow-ups (it took 6.3 s before), loose enough for a busy 2-core CI
    // machine; the 1 s target is measured with the benchmarks (docs/PERFORMANCE.md).
    let limit = if cfg!(debug_assertions) { 30 } else { 4 };
    assert!(
        run.elapsed < Duration::from_secs(limit),
        "took {:?} (limit {limit} s)",
        run.elapsed
    );
    assert!(run.max_rss_kib < 256 << 10, "peak {} KiB", run.max_rss_kib);
}
