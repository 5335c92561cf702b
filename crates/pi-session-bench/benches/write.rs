//! The writer: appending messages to a session file with `SessionWriter` (`append/…`: one
//! `O_APPEND` write per entry, no re-read of the file; throughput in entries), and opening a
//! generated session for appending (`open_for_append/…`: read, index, lock; throughput in
//! bytes). `cargo xtask bench writer` compares both with pi's `SessionManager`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pi_session_bench::{configure, data_dir, generated_all};
use pi_session_format::json;
use pi_session_format::write::{SessionWriter, WriterConfig};
use pi_session_testkit::generate::FileVersion;
use std::hint::black_box;

/// A realistic pair of messages (a prompt and a ~1 KB answer), as JSON values.
fn messages() -> [json::JsValue; 2] {
    let answer = "The build fails because the linker cannot find `libssl`; install it and retry. "
        .repeat(12);
    [
        json::parse(r#"{"role":"user","content":"Why does the build fail?","timestamp":1775030400000}"#)
            .expect("a message"),
        json::parse(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{answer}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet","usage":{{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,"cost":{{"input":0.0036,"output":0.0045,"cacheRead":0,"cacheWrite":0,"total":0.0081}}}},"stopReason":"stop","timestamp":1775030401000}}"#
        ))
        .expect("a message"),
    ]
}

fn append(c: &mut Criterion) {
    let dir = data_dir().join("write-bench");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let [user, assistant] = messages();
    let mut group = c.benchmark_group("append");
    const N: u64 = 1000;
    group.throughput(Throughput::Elements(N));
    group.sample_size(20);
    group.bench_function("1000-messages", |b| {
        b.iter_batched(
            || {
                let mut w = SessionWriter::create("/work", Some(&dir), WriterConfig::default())
                    .expect("create");
                w.append_message_value(&user).expect("append");
                w.append_message_value(&assistant).expect("append");
                w
            },
            |mut w| {
                for i in 0..N {
                    let m = if i % 2 == 0 { &user } else { &assistant };
                    black_box(w.append_message_value(m).expect("append"));
                }
                w
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn open_for_append(c: &mut Criterion) {
    let dir = data_dir().join("write-bench-open");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let mut group = c.benchmark_group("open_for_append");
    for input in generated_all(FileVersion::V3) {
        let path = dir.join(input.name.replace('/', "-"));
        std::fs::write(&path, &input.files[0]).expect("write");
        configure(&mut group, input.bytes());
        group.bench_function(&input.name, |b| {
            b.iter(|| {
                black_box(SessionWriter::open(&path, WriterConfig::default()).expect("open"))
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, append, open_for_append);
criterion_main!(benches);
