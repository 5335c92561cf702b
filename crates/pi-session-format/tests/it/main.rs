//! The integration tests of `pi-session-format`, one test binary (each module is one
//! concern).

mod canonical_fast_path;
mod front_door;
mod writer;
