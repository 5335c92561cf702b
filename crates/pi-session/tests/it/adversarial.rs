//! The adversarial suite: every way a hostile user, a live pi or a broken disk has made the
//! command-line tool crash, hang, blow up or lose data (issue 12), each as a test that failed
//! before its fix. Test names are the recipe: what was done to which command.
//!
//! Cases that need long runs, big files or root run only with `--ignored` (`.ci/run` does):
//! `cargo test --release -p pi-session --test it -- --ignored adversarial::`.
//!
//! One module per area, each owning its tests; [`common`] holds the shared helpers.

mod append;
pub(crate) mod common;
mod conformance;
mod export;
mod info;
mod input;
mod messages;
mod migrate_file;
mod migrate_stream;
mod repair;
mod search;
mod stats;
#[cfg(feature = "parquet")]
mod tables;
mod tree;
mod validate;
mod write_commands;
