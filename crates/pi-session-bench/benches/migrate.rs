//! Migration as `pi-session migrate` does it: `Session::load_for_migration` (the skeleton and
//! the ids) and `Migration::write` (every line migrated on its own, written in batches), into
//! a sink, on generated v1 sessions and on the real sessions that pi rewrites on open (v1 and
//! v2 files). `migrate-loaded` is the older path, kept for the context of v1 files:
//! `Session::load_with` (every value migrated in memory) then `to_jsonl()`.

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::{Changes, LoadOptions, Session};
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;
use std::io::Write;

/// Counts what is written.
struct Sink(usize);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn options(ids: &mut SequentialIds) -> LoadOptions<'_> {
    LoadOptions {
        ids,
        pi: PiVersion::V0_73,
    }
}

fn migrate_streaming(bytes: &[u8]) -> usize {
    let mut ids = SequentialIds::default();
    let migration =
        Session::load_for_migration(bytes, options(&mut ids), &|_| {}).expect("the session loads");
    let mut sink = Sink(0);
    let mut changes = Changes::new(10);
    migration
        .write(&mut sink, &mut changes, &|_| {})
        .expect("a sink does not fail");
    black_box(&changes);
    sink.0
}

fn migrate_loaded(bytes: &[u8]) -> usize {
    let mut ids = SequentialIds::default();
    let session = Session::load_with(bytes, options(&mut ids)).expect("the session loads");
    let out = session.to_jsonl();
    black_box(&out);
    out.len()
}

fn migrate(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V1);
    inputs.extend(real(|b| {
        Session::from_bytes(b, PiVersion::V0_73).is_ok_and(|s| s.version.rewrite)
    }));
    for (group, run) in [
        ("migrate", migrate_streaming as fn(&[u8]) -> usize),
        ("migrate-loaded", migrate_loaded),
    ] {
        let mut group = c.benchmark_group(group);
        for input in &inputs {
            configure(&mut group, input.bytes());
            group.bench_function(&input.name, |b| {
                b.iter(|| input.files.iter().map(|f| run(f)).sum::<usize>())
            });
        }
        group.finish();
    }
}

criterion_group!(benches, migrate);
criterion_main!(benches);
