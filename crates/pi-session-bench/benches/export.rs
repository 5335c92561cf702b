//! Exports: `Transcript::of` (the branch read into what a reader sees, `transcript/…`), and
//! the transcript written as Markdown (`markdown/…`) and as HTML (`html/…`) — what
//! `pi-session export --format markdown|html` does after loading.

use criterion::{Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::export::{Transcript, html, markdown};
use pi_session_format::session::Session;
use pi_session_format::tree::Leaf;
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;

/// Real sessions whose branch can be walked (no parent cycle).
fn exports(bytes: &[u8]) -> bool {
    Session::from_bytes(bytes, PiVersion::V0_73)
        .is_ok_and(|s| Transcript::of(&s, &Leaf::Current).is_ok())
}

fn export(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(exports));
    for input in &inputs {
        let sessions: Vec<Session<'_>> = input
            .files
            .iter()
            .map(|f| Session::from_bytes(f, PiVersion::V0_73).expect("loads"))
            .collect();
        let transcripts: Vec<Transcript> = sessions
            .iter()
            .map(|s| Transcript::of(s, &Leaf::Current).expect("walks"))
            .collect();

        let mut group = c.benchmark_group("transcript");
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                for session in &sessions {
                    let t = Transcript::of(session, &Leaf::Current).expect("walks");
                    black_box(t.items.len());
                }
            })
        });
        group.finish();

        type Writer = fn(&Transcript, &mut dyn std::io::Write) -> std::io::Result<()>;
        for (name, write) in [
            ("markdown", (|t, out| markdown::write(t, out)) as Writer),
            ("html", |t, out| html::write(t, out)),
        ] {
            let mut group = c.benchmark_group(name);
            configure(&mut group, input.bytes());
            group.bench_function(&input.name, |b| {
                b.iter(|| {
                    for transcript in &transcripts {
                        let mut out = Vec::new();
                        write(transcript, &mut out).expect("writes");
                        black_box(out.len());
                    }
                })
            });
            group.finish();
        }
    }
}

criterion_group!(benches, export);
criterion_main!(benches);
