//! The listing entry (`buildSessionInfo`): `info::write_session_info` into a sink that counts
//! bytes, as `pi-session info` streams it (two passes over the file, the texts written as
//! they are found). Inputs: generated realistic sessions (`PI_BENCH_SIZES`), linear chains
//! of 100,000 and 1,000,000 entries (`gen --entries N --linear`), and the real sessions.
//! `info_oracle/…` is the former whole-file implementation (`info::oracle`) on the smaller
//! inputs, for comparison.

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::info::{oracle, write_session_info};
use pi_session_testkit::generate::{self, FileVersion, Limit, Options};
use std::hint::black_box;
use std::io::Write;

const PI: PiVersion = PiVersion::V0_73;
const MTIME: f64 = 946_684_800_000.0;

/// A writer that only counts.
#[derive(Default)]
struct Count(usize);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A linear chain of `entries` entries (seed 1), as `pi-session gen --entries N --linear`.
fn linear(entries: u64) -> (String, Vec<Vec<u8>>) {
    let (bytes, _) = generate::generate_to_vec(&Options {
        seed: 1,
        version: FileVersion::V3,
        limit: Limit::Entries(entries),
        linear: true,
    });
    (format!("linear-{entries}"), vec![bytes])
}

fn info(c: &mut Criterion) {
    let mut inputs: Vec<(String, Vec<Vec<u8>>)> = generated_all(FileVersion::V3)
        .into_iter()
        .chain(real(|_| true))
        .map(|i| (i.name, i.files))
        .collect();
    inputs.push(linear(100_000));
    inputs.push(linear(1_000_000));

    let mut group = c.benchmark_group("info");
    for (name, files) in &inputs {
        configure(&mut group, files.iter().map(|f| f.len() as u64).sum());
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut out = Count::default();
                for f in files {
                    write_session_info(f, None, MTIME, PI, &mut out).expect("writes");
                }
                black_box(out.0)
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("info_oracle");
    for (name, files) in &inputs {
        let bytes: u64 = files.iter().map(|f| f.len() as u64).sum();
        if bytes > 20_000_000 {
            continue;
        }
        configure(&mut group, bytes);
        group.bench_function(name, |b| {
            b.iter(|| {
                for f in files {
                    black_box(oracle::session_info(f, MTIME, PI));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, info);
criterion_main!(benches);
