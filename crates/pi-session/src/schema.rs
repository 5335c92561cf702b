//! `pi-session schema [NAME]`: print one of the JSON Schemas of `schemas/`, or list them.
//!
//! The schemas are generated from the library's types by `cargo xtask schema` and embedded
//! in the library (`pi_session_validate::schemas`), so the binary prints exactly the committed
//! files.

use pi_session_validate::schemas::{SCHEMAS, find};
use std::process::ExitCode;

/// With a name, prints that schema; without, lists the names, one per line.
pub(crate) fn main(name: Option<&str>) -> ExitCode {
    let output = match name {
        None => SCHEMAS.iter().map(|(n, _)| format!("{n}\n")).collect(),
        Some(name) => match find(name) {
            Some(text) => text.to_string(),
            None => {
                eprintln!("pi-session: unknown schema {name:?}; `pi-session schema` lists them");
                return ExitCode::from(2);
            }
        },
    };
    match crate::write_stdout(output.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(crate::Rejected(message)) => {
            eprintln!("pi-session: {message}");
            ExitCode::FAILURE
        }
    }
}
