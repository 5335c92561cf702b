//! Integration tests of the conformance crate (one test binary).

mod writer_scripts;
