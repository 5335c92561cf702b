//! oino-session 1.0.0 as a reader under the conformance protocol (conformance/README.md):
//! `oino-session-reader OP [--leaf ID] --pi V [--mtime MS] < session.jsonl`.
//!
//! Glue only: every answer is computed by oino-session's own code, as its users call it.
//! - `context`: `SessionManager::open` of a copy of the input, then `build_session_context()`
//!   (with `--leaf`: the free `build_session_context(index, Some(leaf))`);
//! - `llm`: `convert_to_llm` of that context's messages;
//! - `migrate`: the copy's bytes after `SessionManager::open` (which migrates v1/v2 in place);
//! - `tree`: `SessionManager::tree()`, each node printed as `{id, type, label?, children}`;
//! - `info`: `manager::session_info` of the copy, its mtime set to `--mtime`; `null` when it
//!   lists nothing.
//!
//! Outputs are serialised with serde_json, as oino-session writes its own files; an error of
//! oino-session is a rejection (exit status 1). oino-session has one behaviour: `--pi` is
//! ignored.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use oino_session::manager::session_info;
use oino_session::time::{format_iso, system_time_ms};
use oino_session::{
    EntryId, SessionManager, SessionTreeNode, build_session_context, convert_to_llm,
};
use serde_json::{Map, Value, json};

/// A private scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("oino-reader-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Request {
    op: String,
    leaf: Option<String>,
    mtime: Option<u64>,
}

fn parse_args() -> Result<Request, String> {
    let mut args = std::env::args().skip(1);
    let op = args
        .next()
        .ok_or("usage: oino-session-reader OP [--leaf ID] --pi V [--mtime MS]")?;
    let mut request = Request {
        op,
        leaf: None,
        mtime: None,
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--leaf" => request.leaf = Some(value),
            "--mtime" => request.mtime = Some(value.parse().map_err(|_| "bad --mtime")?),
            "--pi" => {} // oino-session has one behaviour
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(request)
}

/// The tree as the corpus prints it, written without recursion (sessions can be deep).
fn tree_json(roots: &[SessionTreeNode]) -> String {
    enum Step<'a> {
        Open(&'a SessionTreeNode, bool),
        Close,
    }
    let mut out = String::from("[");
    let mut stack: Vec<Step<'_>> = roots
        .iter()
        .enumerate()
        .rev()
        .map(|(i, n)| Step::Open(n, i == 0))
        .collect();
    while let Some(step) = stack.pop() {
        match step {
            Step::Close => out.push_str("]}"),
            Step::Open(node, first) => {
                if !first {
                    out.push(',');
                }
                out.push_str(&format!(
                    "{{\"id\":{},\"type\":{}",
                    Value::from(node.entry.id.as_str()),
                    Value::from(node.entry.type_name())
                ));
                if let Some(label) = &node.label {
                    out.push_str(&format!(",\"label\":{}", Value::from(label.as_str())));
                }
                out.push_str(",\"children\":[");
                stack.push(Step::Close);
                stack.extend(
                    node.children
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, n)| Step::Open(n, i == 0)),
                );
            }
        }
    }
    out.push(']');
    out
}

fn info_json(path: &Path) -> Value {
    let Some(info) = session_info(path) else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("id".into(), json!(info.id));
    out.insert("cwd".into(), json!(info.cwd));
    if let Some(name) = info.name {
        out.insert("name".into(), json!(name));
    }
    if let Some(parent) = info.parent_session_path {
        out.insert("parentSessionPath".into(), json!(parent.to_string_lossy()));
    }
    out.insert("created".into(), json!(info.created.as_str()));
    out.insert(
        "modified".into(),
        json!(format_iso(system_time_ms(info.modified))),
    );
    out.insert("messageCount".into(), json!(info.message_count));
    out.insert("firstMessage".into(), json!(info.first_message));
    out.insert("allMessagesText".into(), json!(info.all_messages_text));
    Value::Object(out)
}

fn run(request: &Request, scratch: &Path) -> Result<Vec<u8>, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| e.to_string())?;
    let file = scratch.join("session.jsonl");
    std::fs::write(&file, &input).map_err(|e| e.to_string())?;
    let sessions = scratch.join("sessions");
    let open = || SessionManager::open(&file, &sessions, None).map_err(|e| e.to_string());
    let text = match request.op.as_str() {
        "context" | "llm" => {
            let manager = open()?;
            let context = match &request.leaf {
                Some(leaf) => build_session_context(manager.index(), Some(&EntryId::new(leaf))),
                None => manager.build_session_context(),
            };
            if request.op == "llm" {
                serde_json::to_string(&convert_to_llm(&context.messages))
            } else {
                serde_json::to_string(&context)
            }
            .map_err(|e| e.to_string())?
        }
        "migrate" => {
            open()?;
            return std::fs::read(&file).map_err(|e| e.to_string());
        }
        "tree" => tree_json(&open()?.tree()),
        "info" => {
            if let Some(ms) = request.mtime {
                let mtime = SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
                File::options()
                    .write(true)
                    .open(&file)
                    .and_then(|f| f.set_modified(mtime))
                    .map_err(|e| e.to_string())?;
            }
            info_json(&file).to_string()
        }
        other => return Err(format!("unknown operation {other}")),
    };
    Ok(format!("{text}\n").into_bytes())
}

fn main() -> ExitCode {
    let request = match parse_args() {
        Ok(request) => request,
        Err(e) => {
            eprintln!("oino-session-reader: {e}");
            return ExitCode::from(2);
        }
    };
    let result = Scratch::new()
        .map_err(|e| e.to_string())
        .and_then(|scratch| run(&request, &scratch.0));
    match result {
        Ok(bytes) => {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("oino-session-reader: {e}");
            ExitCode::FAILURE
        }
    }
}
