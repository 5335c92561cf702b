//! The integration tests of `pi-session-validate`, one test binary: the validator's corpus
//! and the real sessions (`validate_*`), and the JSON Schemas against the typed model
//! (`schema_*`, with their shared set-up in `schema_support`).

mod error_codes;
mod schema_agreement;
mod schema_property;
mod schema_support;
mod schema_validate_cases;
mod validate_corpus;
mod validate_dialect;
mod validate_real;
mod writer_corpus;
