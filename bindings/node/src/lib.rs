//! The native half of the npm package `pi-session`: the pi session toolkit for Node, through
//! N-API (napi-rs).
//!
//! Every export calls the public API of the library crates (`pi-session-format`,
//! `pi-session-validate`, `pi-session-fs`) and hands its answer to JavaScript; the binding
//! holds no rule of the format. Answers that are JSON documents (a context, a tree, a
//! report) cross as one JSON string that `index.js` reads with `JSON.parse`: measured on a
//! 100 MB session, that is faster than building the objects through N-API (README.md).
//!
//! `index.js` is the API (argument checks, options, `JSON.parse`); `index.d.ts` its types.
//! The modules:
//!
//! - [`error`]: errors with stable codes, and panics caught before they cross into N-API;
//! - [`session`]: `open` and the `Session` answers (the front door, `pi_session_format::Session`);
//! - [`reader`]: the drop-in for pi's `loadEntriesFromFile` and `buildSessionContext`;
//! - [`redact`]: a session's secrets replaced (`pi_session_redact::Redactor`), the report of
//!   `pi-session redact --format json`;
//! - [`stats`]: tokens, cost and counts of many sessions (`pi_session_format::stats::report`);
//! - [`validate`]: the validator's report (`pi_session_validate::ValidateReport`);
//! - [`writer`]: `SessionWriter` (`pi_session_format::SessionWriter`).

use napi_derive::napi;
use pi_session_format::PiVersion;

pub mod error;
mod objects;
pub mod reader;
pub mod redact;
pub mod session;
pub mod stats;
pub mod validate;
pub mod writer;

use error::{Result, failure, guard};

/// The pi whose rules to follow: `"0.73"`, `"0.87"`, `"1.5"` or a full release (`"1.5.2"`);
/// current pi (1.5.2) when absent.
pub(crate) fn pi_version(pi: Option<&str>) -> Result<PiVersion> {
    match pi {
        None => Ok(PiVersion::default()),
        Some(text) => text.parse().map_err(|_| {
            failure(
                "ERR_INVALID_ARG_VALUE",
                format!(
                    "unknown pi version {text:?}: use \"0.73\", \"0.87\" or \"1.5\" (or the full release, \"0.73.1\", \"0.87.1\", \"1.5.2\")"
                ),
            )
        }),
    }
}

/// The pi versions whose rules the toolkit knows, as npm names their releases, oldest first.
#[napi(js_name = "piVersions")]
pub fn pi_versions() -> Vec<String> {
    PiVersion::ALL
        .iter()
        .map(|pi| pi.release().to_owned())
        .collect()
}

/// The version of the toolkit.
#[napi(js_name = "toolkitVersion")]
pub fn toolkit_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// `"debug"` or `"release"`: how the addon was built (the benchmark refuses a debug build).
#[napi(js_name = "__profile")]
pub fn profile() -> String {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
    .to_owned()
}

/// Panics, for the test that a panic surfaces as an `Error` (`ERR_PANIC`) instead of
/// aborting the process. Not part of the API.
#[napi(js_name = "__panicForTest")]
pub fn panic_for_test() -> Result<()> {
    guard(|| panic!("a panic for the test"))
}
