//! Reading and indexing: `Session::load` (lines, JSON validation, skeletons, header, version;
//! migrations for the real v1/v2 files) and `Index::build` (`byId`, leaf, labels).

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::{LoadOptions, Session};
use pi_session_format::tree::Index;
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;

fn load_and_index(bytes: &[u8]) -> usize {
    let mut ids = SequentialIds::default();
    let options = LoadOptions {
        ids: &mut ids,
        pi: PiVersion::V0_73,
    };
    let session = Session::load_with(bytes, options).expect("the session loads");
    let index = Index::build(&session);
    black_box(&index);
    session.records.len()
}

fn read_index(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(|b| Session::from_bytes(b, PiVersion::V0_73).is_ok()));
    let mut group = c.benchmark_group("read_index");
    for input in &inputs {
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| input.files.iter().map(|f| load_and_index(f)).sum::<usize>())
        });
    }
    group.finish();
}

criterion_group!(benches, read_index);
criterion_main!(benches);
