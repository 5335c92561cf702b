//! `cargo xtask bless cases|writers|repair|stats|list|validate`: the one way to rewrite the expected outputs of the
//! project's two corpora after a deliberate change (then review the diff).
//!
//! - `cases` — `conformance/cases/*/expected/`: computed by the pinned pi (the reference,
//!   `conformance/reference/`, needs Node), and by `pi-session` for the `divergence/` cases;
//! - `writers` — `conformance/writers/*/expected/`: the files pi's own `SessionManager` writes
//!   for each scenario's script, per profile (`crate::writers`, needs Node);
//! - `repair` — `conformance/repair/*/`: `expected.jsonl` and `plan.json` from our repair, and
//!   `context-pi-*.json` from the pinned pi reading the repaired file (`crate::repair_corpus`);
//! - `stats` — `conformance/stats/pi.json`: each pinned pi's `getSessionStats()` of every corpus
//!   session (`crate::stats_corpus`, needs Node);
//! - `list` — `conformance/list/pi.json`: each pinned pi's session list of the real corpus
//!   sessions (`crate::list_corpus`, needs Node);
//! - `validate` — `conformance/validate/*/expected.json`: the reports of our validator, written
//!   by its corpus test (`crates/pi-session-validate/tests/it/validate_corpus.rs`), which
//!   rewrites instead of comparing when `cargo xtask bless validate` runs it.

use crate::conformance;
use crate::root;
use std::process::Command;

/// The variable through which `bless validate` tells the validator's corpus test to write.
pub(crate) const VALIDATE_BLESS_VAR: &str = "PI_SESSION_BLESS";

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        ["cases", rest @ ..] => conformance::bless(&conformance::only(rest)?, true),
        ["validate"] => bless_validate(),
        ["writers"] => crate::writers::run(true),
        ["repair"] => crate::repair_corpus::run(true),
        ["stats"] => crate::stats_corpus::run(true),
        ["list"] => crate::list_corpus::run(true),
        _ => Err(format!("unknown bless command\n{}", crate::USAGE)),
    }
}

fn bless_validate() -> Result<(), String> {
    let status = Command::new(env!("CARGO"))
        .args([
            "test",
            "--quiet",
            "-p",
            "pi-session-validate",
            "--test",
            "it",
            "--",
            "validate_corpus::reports_match_their_expected_files",
            "--exact",
        ])
        .env(VALIDATE_BLESS_VAR, "1")
        .current_dir(root())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("the validator's corpus test failed while writing expected.json".into());
    }
    eprintln!("wrote conformance/validate/*/expected.json; review the diff");
    Ok(())
}
