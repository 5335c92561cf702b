//! `cargo xtask …`: project chores that are code, not shell scripts.
//!
//! - `cargo xtask bless cases [--only GLOB]…` — write the expected outputs of the corpus
//!   with the pinned reference (`conformance/reference/`), and with `pi-session` for the
//!   `divergence/` cases; `cargo xtask bless validate` — write the validator corpus's
//!   `expected.json` reports (the one bless mechanism for both corpora, `bless.rs`);
//! - `cargo xtask conformance check-reference` — recompute them with the reference and fail on
//!   any difference;
//! - `cargo xtask conformance fuzz-reference --seed S --count N [--save]` — random sessions,
//!   reference against `pi-session`; `--save` turns each mismatch into a new case;
//! - `cargo xtask bless writers` / `cargo xtask conformance check-writers` — the writer corpus
//!   (`conformance/writers/`): the files pi's own `SessionManager` writes for each scenario;
//! - `cargo xtask bless stats` / `cargo xtask conformance check-stats` — pi's own usage numbers
//!   (`getSessionStats`) for every corpus session, per pinned pi (`conformance/stats/pi.json`);
//! - `cargo xtask bless list` / `cargo xtask conformance check-list` — each pinned pi's session
//!   list of the real corpus sessions (`conformance/list/pi.json`);
//! - `cargo xtask conformance check-export` — `pi-session export --format jsonl` against pi's
//!   own JSONL export (0.87.1, 1.5.2), live, for every corpus session;
//! - `cargo xtask bless repair` / `cargo xtask conformance check-repair` — the repair corpus
//!   (`conformance/repair/`): what repair makes of each broken file, and pi's context of it;
//! - `cargo xtask conformance check-redact` — redacted sessions (the corpus's, and a planted
//!   secret for every rule in every place) read by every pinned pi as their originals are;
//! - `cargo xtask conformance same-reading 0.87 1.5` — every corpus operation run by two pi
//!   versions: fails unless they agree (the evidence behind `--pi 1.5` = 0.87.1's rules);
//! - `cargo xtask conformance validate-reference [--check]` — what pi does with each case of
//!   `conformance/validate/` (`pi.json`: drops, rewrites, throws, hangs), the evidence behind the
//!   validator's pi-loadable verdict;
//! - `cargo xtask fuzz seed` — the fuzzers' seed corpus (`fuzz/corpus/`) from `conformance/`.
//! - `cargo xtask bench compare|check-gen|writer|search|stats|tables` — the reference vs
//!   `pi-session` on generated sessions: timing table (`docs/PERFORMANCE.md`), identical
//!   reading of generated files, the writer against pi's `SessionManager`, `search -l` against
//!   ripgrep, `stats` (full, cached, `--since today`) against `@ccusage/pi`, and the Parquet
//!   export against DuckDB.
//! - `cargo xtask schema [--check]` — write `schemas/` from the types, or check it is current.
//! - `cargo xtask diagnostics [--check]` — write `docs/diagnostics.md` from the catalogue of
//!   diagnostic codes and `conformance/validate/`, or check it is current.
//! - `cargo xtask public-api [--check]` — write `api/<crate>.txt`, the public API of each
//!   published library crate (rustdoc JSON, nightly), or check it is current.
//! - `cargo xtask tidy` — the project's habits (module docs, module-file style, long files,
//!   ARCHITECTURE.md and `.ci/run`'s header up to date); also a test of `cargo test`.

mod bench;
mod bench_search;
mod bench_stats;
mod bench_tables;
mod bench_writer;
mod bless;
mod conformance;
mod corpus;
mod diagnostics;
mod export_corpus;
mod fuzz;
mod implementations;
mod list_corpus;
mod public_api;
mod redact_check;
mod reference;
mod repair_corpus;
mod schema;
mod stats_corpus;
mod tidy;
mod validate_reference;
mod writers;

use std::path::PathBuf;
use std::process::ExitCode;

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// `cargo metadata --no-deps` of the workspace at `root`, parsed (offline: the lockfile's
/// packages are enough); the error says what cargo said.
pub fn cargo_metadata(root: &std::path::Path) -> Result<serde_json::Value, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata: {e}"))
}

/// The conformance corpus's cases (`conformance/cases`).
pub fn cases_dir() -> PathBuf {
    root().join("conformance/cases")
}

const USAGE: &str = "usage:
  cargo xtask bless cases [--only GLOB]...
  cargo xtask bless validate
  cargo xtask bless writers
  cargo xtask bless repair
  cargo xtask bless stats
  cargo xtask bless list
  cargo xtask conformance check-reference [--only GLOB]...
  cargo xtask conformance fuzz-reference --seed S --count N [--pi 0.73|0.87] [--save]
  cargo xtask conformance validate-reference [--check]
  cargo xtask conformance same-reading PI_A PI_B
  cargo xtask conformance check-writers
  cargo xtask conformance check-repair
  cargo xtask conformance check-stats
  cargo xtask conformance check-list
  cargo xtask conformance check-export
  cargo xtask conformance check-redact
  cargo xtask fuzz seed
  cargo xtask bench compare [--sizes 1MB,10MB,100MB] [--runs 5] [--linear N] [--out FILE]
  cargo xtask bench check-gen [--size 1MB] [--seeds 1-5] [--versions 1,2,3]
  cargo xtask bench writer [--messages 100000] [--size 100MB] [--runs 5]
  cargo xtask bench search [--files 10000] [--size 1GB] [--patterns P,P] [--runs 5]
  cargo xtask bench stats [--files 10000] [--size 1GB] [--seed 1] [--runs 5] [--out FILE]
  cargo xtask bench tables [--files 10000] [--size 1GB] [--seed 1] [--runs 3] [--out FILE]
  cargo xtask schema [--check]
  cargo xtask corpus [--check]
  cargo xtask diagnostics [--check]
  cargo xtask implementations [--check]
  cargo xtask public-api [--check]
  cargo xtask tidy";

fn main() -> ExitCode {
    if let Some(rustdoc) = std::env::var_os(public_api::RUSTDOC_VAR) {
        return public_api::rustdoc_unstable(&rustdoc);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["bless", rest @ ..] => bless::main(rest),
        ["conformance", "validate-reference", rest @ ..] => validate_reference::main(rest),
        ["conformance", rest @ ..] => conformance::main(rest),
        ["schema", rest @ ..] => schema::main(rest),
        ["corpus", rest @ ..] => corpus::main(rest),
        ["diagnostics", rest @ ..] => diagnostics::main(rest),
        ["implementations", rest @ ..] => implementations::main(rest),
        ["public-api", rest @ ..] => public_api::main(rest),
        ["bench", rest @ ..] => bench::main(rest),
        ["fuzz", rest @ ..] => fuzz::main(rest),
        ["tidy", rest @ ..] => tidy::main(rest),
        _ => Err(format!("unknown command\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
