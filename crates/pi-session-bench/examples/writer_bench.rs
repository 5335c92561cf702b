//! Our side of `cargo xtask bench writer`: `SessionWriter` doing what
//! `conformance/reference/bench-write.mjs` has pi's `SessionManager` do, timed inside the
//! process, printed as `{"seconds": S}`.
//!
//! ```text
//! writer_bench append N DIR         create a session in DIR, 2 messages (the file is written), then N more; timed: the N
//! writer_bench append-batch N DIR   the same, the N in batches of 1000 (`SessionWriter::batch`: one write each)
//! writer_bench open FILE      SessionWriter::open(FILE) and one appended message; timed: both
//! ```

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

fn run(args: &[String]) -> Result<f64, String> {
    let [user, assistant] = messages();
    match args {
        [mode, n, dir] if mode == "append" => {
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let mut w =
                SessionWriter::create("/work", Some(Path::new(dir)), WriterConfig::default())
                    .map_err(|e| e.to_string())?;
            w.append_message_value(user.clone())
                .map_err(|e| e.to_string())?;
            w.append_message_value(assistant.clone())
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            for i in 0..n {
                let m = if i % 2 == 0 { &user } else { &assistant };
                w.append_message_value(m.clone())
                    .map_err(|e| e.to_string())?;
            }
            Ok(start.elapsed().as_secs_f64())
        }
        [mode, n, dir] if mode == "append-batch" => {
            let n: u64 = n.parse().map_err(|_| format!("{n:?} is not a count"))?;
            let mut w =
                SessionWriter::create("/work", Some(Path::new(dir)), WriterConfig::default())
                    .map_err(|e| e.to_string())?;
            w.append_message_value(user.clone())
                .map_err(|e| e.to_string())?;
            w.append_message_value(assistant.clone())
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            let mut i = 0;
            while i < n {
                let end = (i + 1000).min(n);
                w.batch(|w| {
                    for j in i..end {
                        let m = if j % 2 == 0 { &user } else { &assistant };
                        w.append_message_value(m.clone())?;
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
            w.append_message_value(user).map_err(|e| e.to_string())?;
            Ok(start.elapsed().as_secs_f64())
        }
        _ => Err("usage: writer_bench append|append-batch N DIR | open FILE".into()),
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
