//! Context building: `build_context` at the current leaf on a loaded and indexed session
//! (`context/…`), and the whole library pipeline `Session::load` + `Index::build` +
//! `build_context` (`load_index_context/…`), which is what `pi-session context` does before
//! printing.

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::context::build_context;
use pi_session_format::session::Session;
use pi_session_format::tree::{Index, Leaf};
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;

const PI: PiVersion = PiVersion::V0_73;

/// Real sessions on which the context can be built (no parent cycle).
fn builds(bytes: &[u8]) -> bool {
    Session::from_bytes(bytes, PI).is_ok_and(|s| {
        let index = Index::build(&s);
        build_context(&s, &index, &Leaf::Current, PI).is_ok()
    })
}

fn context(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(builds));

    let mut group = c.benchmark_group("context");
    for input in &inputs {
        let loaded: Vec<(Session<'_>, Index)> = input
            .files
            .iter()
            .map(|f| {
                let s = Session::from_bytes(f, PI).expect("loads");
                let index = Index::build(&s);
                (s, index)
            })
            .collect();
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                for (session, index) in &loaded {
                    let ctx = build_context(session, index, &Leaf::Current, PI).expect("builds");
                    black_box(ctx.messages.len());
                }
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("load_index_context");
    for input in &inputs {
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                for f in &input.files {
                    let session = Session::from_bytes(f, PI).expect("loads");
                    let index = Index::build(&session);
                    let ctx = build_context(&session, &index, &Leaf::Current, PI).expect("builds");
                    black_box(ctx.messages.len());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, context);
criterion_main!(benches);
