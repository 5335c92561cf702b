//! Validation: `validate` on generated sessions of every size and on the real sessions of the
//! corpus (`validate/…`), and on a directory-like batch of 1,000 small sessions validated in
//! parallel, file by file, the way `pi-session validate DIR` does (`validate_many/…`).

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_testkit::generate::FileVersion;
use pi_session_validate::{Options, validate};
use rayon::prelude::*;
use std::hint::black_box;

fn validate_files(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(|_| true));
    // The rules the baselines of PERFORMANCE.md were measured with.
    let options = Options {
        pi: PiVersion::V0_73,
        ..Options::default()
    };
    let mut group = c.benchmark_group("validate");
    for input in &inputs {
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                for f in &input.files {
                    black_box(validate(f, &options).diagnostics.len());
                }
            })
        });
    }
    group.finish();
}

fn validate_many(c: &mut Criterion) {
    // 1,000 sessions of about 20 kB: a busy user's session directory.
    let one = generated(FileVersion::V3, 20_000);
    let files: Vec<&[u8]> = (0..1000).map(|_| one.files[0].as_slice()).collect();
    let total: u64 = files.iter().map(|f| f.len() as u64).sum();
    // The rules the baselines of PERFORMANCE.md were measured with.
    let options = Options {
        pi: PiVersion::V0_73,
        ..Options::default()
    };
    let mut group = c.benchmark_group("validate_many");
    configure(&mut group, total);
    group.bench_function("1000x20kB/parallel", |b| {
        b.iter(|| {
            let errors: usize = files
                .par_iter()
                .map(|f| validate(f, &options).stats.errors)
                .sum();
            black_box(errors)
        })
    });
    group.bench_function("1000x20kB/sequential", |b| {
        b.iter(|| {
            let errors: usize = files
                .iter()
                .map(|f| validate(f, &options).stats.errors)
                .sum();
            black_box(errors)
        })
    });
    group.finish();
}

criterion_group!(benches, validate_files, validate_many);
criterion_main!(benches);
