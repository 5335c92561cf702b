//! Redaction: `Redactor::redact` on generated sessions of every size and on the real sessions
//! of the corpus (`redact/…`, nothing to replace: the cost of looking), and on the planted
//! corpus, a secret for every rule in every place (`redact_planted/…`, every string replaced).
//! The whole process, `pi-session redact --dry-run` on 1 GB, is in docs/PERFORMANCE.md
//! ("Redaction").

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_redact::{Key, Options, Redactor};
use pi_session_testkit::generate::FileVersion;
use pi_session_testkit::planted::{self, Place, Spelling};
use std::hint::black_box;

fn redactor() -> Redactor {
    Redactor::new(
        Options::default(),
        Key::from_bytes(b"the benchmark's key").expect("a long key"),
    )
}

fn redact_files(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(|_| true));
    let redactor = redactor();
    let mut group = c.benchmark_group("redact");
    for input in &inputs {
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                for f in &input.files {
                    let report = redactor.redact(f, &mut std::io::sink());
                    black_box(report.map(|r| r.lines_changed).unwrap_or_default());
                }
            })
        });
    }
    group.finish();
}

fn redact_planted(c: &mut Criterion) {
    let (secrets, _) = planted::secrets(1);
    let redactor = redactor();
    let mut group = c.benchmark_group("redact_planted");
    for place in [Place::UserText, Place::ToolResult, Place::NestedArgument] {
        let session = planted::session(&secrets, place, Spelling::Split, "/p");
        configure(&mut group, session.len() as u64);
        group.bench_function(format!("{place:?}"), |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(session.len() * 2);
                black_box(redactor.redact(&session, &mut out).map(|r| r.redacted()))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, redact_files, redact_planted);
criterion_main!(benches);
