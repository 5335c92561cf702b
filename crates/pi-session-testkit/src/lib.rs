//! Test support for the pi-session-format crates: the session generator behind
//! `pi-session gen` and the benchmarks ([`generate`]), and the fuzzing models and invariant
//! checks behind the cargo-fuzz targets of `fuzz/` and the smoke tests ([`fuzzing`]).

pub mod fuzzing;
pub mod generate;
pub mod planted;
