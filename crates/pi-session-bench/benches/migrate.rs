//! Migration as `pi-session migrate --stdout` does it: `Session::load_with` (which runs
//! v1→v2→v3 on the parsed values) and `to_jsonl()` (the rewritten file), on generated v1
//! sessions and on the real sessions that pi rewrites on open (v1 and v2 files).

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::generate::FileVersion;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::{LoadOptions, Session};
use std::hint::black_box;

fn migrate_to_jsonl(bytes: &[u8]) -> usize {
    let mut ids = SequentialIds::default();
    let options = LoadOptions {
        ids: &mut ids,
        pi: PiVersion::V0_73,
    };
    let session = Session::load_with(bytes, options).expect("the session loads");
    let out = session.to_jsonl();
    black_box(&out);
    out.len()
}

fn migrate(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V1);
    inputs.extend(real(|b| Session::load(b).is_ok_and(|s| s.version.rewrite)));
    let mut group = c.benchmark_group("migrate");
    for input in &inputs {
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                input
                    .files
                    .iter()
                    .map(|f| migrate_to_jsonl(f))
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, migrate);
criterion_main!(benches);
