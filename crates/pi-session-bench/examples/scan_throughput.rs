//! Quick, low-noise timings of the phases of `pi-session context` on one file, each the best
//! of several in-process runs: the line scanner alone (one thread, `json::scan_skeleton` on
//! every line), loading (`Session::load`, all threads), `Index::build`, the leaf's path, and
//! `build_context`. Handy between criterion runs when tuning; the file is read once, so no
//! phase includes reading it.
//!
//! `cargo run --release -p pi-session-bench --example scan_throughput -- FILE`

use pi_session_format::PiVersion;
use pi_session_format::context::build_context;
use pi_session_format::tree::{Index, Leaf};
use pi_session_format::{json, session::Session};
use std::io::Write;
use std::time::Instant;

/// The best wall time of `runs` calls of `f`, in milliseconds.
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
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
    let mb = bytes.len() as f64 / 1e6;
    let scan = best_of(15, || {
        let objects = lines
            .iter()
            .filter(|line| json::scan_skeleton(line).is_ok_and(|s| s.object.is_some()))
            .count();
        std::hint::black_box(objects);
    });
    let load = best_of(10, || {
        std::hint::black_box(Session::from_bytes(&bytes, PiVersion::V0_73).ok());
    });
    // Written, not printed: a closed pipe (`| head`) is an error returned, not a panic.
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{path}: {mb:.1} MB; scan (1 thread) {scan:.1} ms = {:.0} MB/s; load (all threads) {load:.1} ms = {:.0} MB/s",
        mb / scan * 1e3,
        mb / load * 1e3
    )?;
    let session = Session::from_bytes(&bytes, PiVersion::V0_73)?;
    let index = Index::build(&session);
    let leaf = index.leaf_record(&session, &Leaf::Current).unwrap_or(0);
    let path_len = index.path(&session, leaf).map_or(0, |p| p.len());
    writeln!(
        out,
        "index {:.2} ms ({} entries), path {:.2} ms ({path_len} entries), context {:.2} ms",
        best_of(10, || {
            std::hint::black_box(Index::build(&session));
        }),
        session.entries.len(),
        best_of(10, || {
            std::hint::black_box(index.path(&session, leaf).ok());
        }),
        best_of(10, || {
            std::hint::black_box(
                build_context(&session, &index, &Leaf::Current, PiVersion::V0_73).ok(),
            );
        }),
    )?;
    Ok(())
}
