//! `getTree()`: `Tree::build` + `Tree::write_json` on a loaded and indexed session
//! (`tree/…`), and the whole pipeline `Session::load` + `Index::build` + `Tree::build` +
//! `write_json` (`load_index_tree/…`), which is what `pi-session tree` does before printing.
//! Inputs: linear chains of 100,000 and 1,000,000 entries (`gen --entries N --linear`), the
//! deepest trees a session has, and the generated realistic sessions of
//! `PI_BENCH_SIZES` (default 1MB,10MB,100MB).

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all};
use pi_session_format::PiVersion;
use pi_session_format::session::Session;
use pi_session_format::tree::{Index, Tree};
use pi_session_testkit::generate::{self, FileVersion, Limit, Options};
use std::hint::black_box;

/// A linear chain of `entries` entries (seed 1), as `pi-session gen --entries N --linear`.
fn linear(entries: u64) -> (String, Vec<u8>) {
    let (bytes, _) = generate::generate_to_vec(&Options {
        seed: 1,
        version: FileVersion::V3,
        limit: Limit::Entries(entries),
        linear: true,
    });
    (format!("linear-{entries}"), bytes)
}

fn write(session: &Session<'_>, index: &Index) -> usize {
    let tree = Tree::build(session, index);
    let mut out = Vec::new();
    tree.write_json(session, index, &mut out);
    out.len()
}

fn tree(c: &mut Criterion) {
    let mut inputs = vec![linear(100_000), linear(1_000_000)];
    for realistic in generated_all(FileVersion::V3) {
        let bytes = realistic.files.into_iter().next().unwrap_or_default();
        inputs.push((realistic.name, bytes));
    }

    let mut group = c.benchmark_group("tree");
    for (name, bytes) in &inputs {
        let session = Session::from_bytes(bytes, PiVersion::V0_73).expect("loads");
        let index = Index::build(&session);
        configure(&mut group, bytes.len() as u64);
        group.bench_function(name, |b| b.iter(|| black_box(write(&session, &index))));
    }
    group.finish();

    let mut group = c.benchmark_group("load_index_tree");
    for (name, bytes) in &inputs {
        configure(&mut group, bytes.len() as u64);
        group.bench_function(name, |b| {
            b.iter(|| {
                let session = Session::from_bytes(bytes, PiVersion::V0_73).expect("loads");
                let index = Index::build(&session);
                black_box(write(&session, &index))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tree);
criterion_main!(benches);
