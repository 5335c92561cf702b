//! `to_llm` (`convertToLlm`) on the messages of the current leaf's context. The context is
//! built once; each iteration converts a fresh copy of its messages (the copy is not timed).
//! Throughput is the session file's size, like every other benchmark here.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use pi_session_bench::{configure, generated_all, real};
use pi_session_format::PiVersion;
use pi_session_format::context::build_context;
use pi_session_format::llm::to_llm;
use pi_session_format::session::Session;
use pi_session_format::tree::{Index, Leaf};
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;

const PI: PiVersion = PiVersion::V0_73;

fn builds(bytes: &[u8]) -> bool {
    Session::from_bytes(bytes, PI).is_ok_and(|s| {
        let index = Index::build(&s);
        build_context(&s, &index, &Leaf::Current, PI).is_ok()
    })
}

fn llm(c: &mut Criterion) {
    let mut inputs = generated_all(FileVersion::V3);
    inputs.extend(real(builds));
    let mut group = c.benchmark_group("to_llm");
    for input in &inputs {
        let sessions: Vec<Session<'_>> = input
            .files
            .iter()
            .map(|f| Session::from_bytes(f, PI).expect("loads"))
            .collect();
        let contexts: Vec<_> = sessions
            .iter()
            .map(|s| {
                let index = Index::build(s);
                build_context(s, &index, &Leaf::Current, PI).expect("builds")
            })
            .collect();
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter_batched(
                || {
                    contexts
                        .iter()
                        .map(|c| c.messages.clone())
                        .collect::<Vec<_>>()
                },
                |all| {
                    for messages in all {
                        black_box(to_llm(messages, PI));
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, llm);
criterion_main!(benches);
