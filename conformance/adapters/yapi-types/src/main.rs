//! yapi-types 0.3.1 as a reader under the conformance protocol (conformance/README.md):
//! `yapi-types-reader [--documents] OP [--leaf ID] --pi V [--mtime MS] < session.jsonl`.
//!
//! yapi-types is serde types and pi's `JSON.stringify`, nothing more: it has no session
//! loading, migration, context, tree or listing code. So the one operation it answers is
//! `migrate` for a file that needs no migration (pi leaves such a file as it is): every line
//! read with `json::parse` (pi's `JSON.parse`, past a BOM) and written back with
//! `json::to_string` (pi's `JSON.stringify`) plus `\n`:
//! - by default through its typed views, [`FileEntry`] (do they hold every field pi writes?);
//! - with `--documents`, as order-preserving [`serde_json::Value`] documents, the way the
//!   crate says it handles pi's files ("they round-trip byte for byte").
//!
//! A line it cannot read (not JSON, or, typed, not a [`FileEntry`]) rejects the file (exit
//! status 1). A v1 or v2 header (a `version` below 3 in yapi's [`SessionHeader`]), and every
//! other operation, are unsupported (exit status 3): yapi-types has no code for them.

use std::io::{Read, Write};
use std::process::ExitCode;

use serde_json::Value;
use yapi_types::json;
use yapi_types::session::{CURRENT_VERSION, FileEntry, SessionHeader};

enum Stop {
    Unsupported(String),
    Rejected(String),
}

fn migrate(input: &[u8], documents: bool) -> Result<Vec<u8>, Stop> {
    let text = std::str::from_utf8(input)
        .map_err(|e| Stop::Rejected(format!("yapi-types reads text: {e}")))?;
    let mut out = String::new();
    for (n, line) in text.split_terminator('\n').enumerate() {
        let reject = |e: serde_json::Error| Stop::Rejected(format!("line {}: {e}", n + 1));
        if n == 0
            && let Ok(header) = json::parse::<SessionHeader>(line)
            && header.version.unwrap_or(1) < CURRENT_VERSION
        {
            return Err(Stop::Unsupported(
                "migrate: a v1/v2 file; yapi-types has no migration".into(),
            ));
        }
        let written = if documents {
            json::to_string(&json::parse::<Value>(line).map_err(reject)?)
        } else {
            json::to_string(&json::parse::<FileEntry>(line).map_err(reject)?)
        };
        out.push_str(&written.map_err(reject)?);
        out.push('\n');
    }
    Ok(out.into_bytes())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let documents = args.first().is_some_and(|a| a == "--documents");
    if documents {
        args.remove(0);
    }
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        return ExitCode::from(2);
    }
    let result = match args.first().map(String::as_str) {
        Some("migrate") => migrate(&input, documents),
        Some(op) => Err(Stop::Unsupported(format!(
            "{op}: yapi-types has no code for it (serde types only)"
        ))),
        None => {
            eprintln!("usage: yapi-types-reader [--documents] OP [ARGS…] < session.jsonl");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(bytes) => {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(&bytes).and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(2),
            }
        }
        Err(Stop::Unsupported(what)) => {
            eprintln!("yapi-types-reader: unsupported: {what}");
            ExitCode::from(3)
        }
        Err(Stop::Rejected(why)) => {
            eprintln!("yapi-types-reader: {why}");
            ExitCode::FAILURE
        }
    }
}
