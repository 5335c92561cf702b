//! Quick, low-noise throughput of the line scanner and of the parallel loader on one file:
//! the best of 15 single-threaded passes of `json::scan_skeleton` over every line, and the
//! best of 10 `Session::load` calls (both cores). Handy between criterion runs when tuning.
//!
//! `cargo run --release -p pi-session-bench --example scan_throughput -- FILE`

use pi_session_format::{json, session::Session};
use std::time::Instant;

fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: scan_throughput FILE")?;
    let bytes = std::fs::read(&path)?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let scan = best_of(15, || {
        let objects = lines
            .iter()
            .filter(|line| json::scan_skeleton(line).is_ok_and(|s| s.object.is_some()))
            .count();
        std::hint::black_box(objects);
    });
    let load = best_of(10, || {
        std::hint::black_box(Session::load(&bytes).ok());
    });
    let mb = bytes.len() as f64 / 1e6;
    println!(
        "{path}: {mb:.1} MB; scan (1 thread) {:.1} ms = {:.0} MB/s; load (all threads) {:.1} ms = {:.0} MB/s",
        scan * 1e3,
        mb / scan,
        load * 1e3,
        mb / load
    );
    Ok(())
}
