//! Our side of `cargo xtask bench writer`: `SessionWriter` doing what
//! `conformance/reference/bench-write.mjs` has pi's `SessionManager` do, timed inside the
//! process, printed as `{"seconds": S}`.
//!
//! ```text
//! writer_bench append N DIR         create a session in DIR, 2 messages (the file is written), then N more; timed: the N
//! writer_bench append-batch N DIR   the same, the N in batches of 1000 (`SessionWriter::batch`: one write each)
//! writer_bench open FILE      SessionWriter::open(FILE) and one appended message; timed: both
//! writer_bench serialize N          floor: the message entry (built once) serialized N times, nothing else
//! writer_bench write N DIR          floor: one line of the serialized entry written N times, one `write` each (O_APPEND)
//! ```
//!
//! The two floors say what any writer pays per entry at least: building the line's JSON, and
//! (per entry) a `write` system call.

use pi_session_format::json;
use pi_session_format::write::{SessionWriter, WriterConfig};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

fn messages() -> [json::JsValue; 2] {
    let answer = "The build fails because the linker cannot find `libssl`; install it and retry. "
        .repeat(12);
    let user = r#"{"role":"user","content":"Why does the build fail?","timestamp":1775030400000}"#;
    let assistant = format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"{answer}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet","usage":{{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,"cost":{{"input":0.0036,"output":0.0045,"cacheRead":0,"cacheWrite":0,"total":0.0081}}}},"stopReason":"stop","timestamp":1775030401000}}"#
    );
    [
        json::parse(user).unwrap_or_default(),
        json::parse(&assistant).unwrap_or_default(),
    ]
}

/// A message entry as pi builds it: `{type, id, parentId, timestamp, message}`.
fn entry(message: &json::JsValue) -> json::JsValue {
    let text = format!(
        r#"{{"type":"message","id":"a1b2c3d4","parentId":"0f1e2d3c","timestamp":"2026-04-01T08:00:00.000Z","message":{}}}"#,
        json::to_string(message)
    );
    json::parse(&text).unwrap_or_default()
}

fn run(args: &[String]) -> Result<f64, String> {
    let [user, assistant] = messages();
    match args {
        [mode, n, dir] if mode == "append" => {
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let mut w =
                SessionWriter::create("/work", Some(Path::new(dir)), WriterConfig::default())
                    .map_err(|e| e.to_string())?;
            w.append_message_value(&user).map_err(|e| e.to_string())?;
            w.append_message_value(&assistant)
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            for i in 0..n {
                let m = if i % 2 == 0 { &user } else { &assistant };
                w.append_message_value(m).map_err(|e| e.to_string())?;
            }
            Ok(start.elapsed().as_secs_f64())
        }
        [mode, n, dir] if mode == "append-batch" => {
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let mut w =
                SessionWriter::create("/work", Some(Path::new(dir)), WriterConfig::default())
                    .map_err(|e| e.to_string())?;
            w.append_message_value(&user).map_err(|e| e.to_string())?;
            w.append_message_value(&assistant)
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            let mut i = 0;
            while i < n {
                let end = (i + 1000).min(n);
                w.batch(|w| {
                    for j in i..end {
                        let m = if j % 2 == 0 { &user } else { &assistant };
                        w.append_message_value(m)?;
                    }
                    Ok(())
                })
                .map_err(|e| e.to_string())?;
                i = end;
            }
            Ok(start.elapsed().as_secs_f64())
        }
        [mode, file] if mode == "open" => {
            let start = Instant::now();
            let mut w = SessionWriter::open(Path::new(file), WriterConfig::default())
                .map_err(|e| e.to_string())?;
            w.append_message_value(&user).map_err(|e| e.to_string())?;
            Ok(start.elapsed().as_secs_f64())
        }
        [mode, n] if mode == "serialize" => {
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let entries = [entry(&user), entry(&assistant)];
            let start = Instant::now();
            let mut bytes = 0usize;
            for i in 0..n {
                bytes += std::hint::black_box(json::to_string(&entries[(i % 2) as usize])).len();
            }
            let seconds = start.elapsed().as_secs_f64();
            std::hint::black_box(bytes);
            Ok(seconds)
        }
        [mode, n, dir] if mode == "write" => {
            use std::io::Write;
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let lines = [entry(&user), entry(&assistant)].map(|e| json::to_string(&e) + "\n");
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(Path::new(dir).join("floor.jsonl"))
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            for i in 0..n {
                file.write_all(lines[(i % 2) as usize].as_bytes())
                    .map_err(|e| e.to_string())?;
            }
            Ok(start.elapsed().as_secs_f64())
        }
        _ => Err(
            "usage: writer_bench append|append-batch|write N DIR | open FILE | serialize N".into(),
        ),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(seconds) => {
            println!("{{\"seconds\":{seconds}}}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("writer_bench: {e}");
            ExitCode::FAILURE
        }
    }
}
