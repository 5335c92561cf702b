//! The integration tests of the `pi-session` command, one test binary: the command-line
//! contract (`cli`), the `validate` command (`validate_cli`), the Parquet tables (`tables_cli`, and `tables_duckdb` through DuckDB's Python package) and the adversarial suite
//! (`adversarial`, whose long cases are `#[ignore]`d: `cargo test --release -p pi-session
//! --test it -- --ignored adversarial::`). The conformance corpus runs in its own binary
//! (`tests/conformance.rs`, its own harness).

mod adversarial;
mod cli;
mod conformance_cli;
mod dialect_cli;
mod export_cli;
mod ls_cli;
mod redact_cli;
mod repair_cli;
mod search_cli;
mod stats_cache_cli;
mod stats_cli;
mod support;
#[cfg(feature = "parquet")]
mod tables_cli;
#[cfg(feature = "parquet")]
mod tables_duckdb;
mod validate_cli;
mod write_cli;
mod writer_cli;
