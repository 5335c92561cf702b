#![no_main]
//! `pi_session_testkit::fuzzing::redact` (see fuzz/README.md).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pi_session_testkit::fuzzing::redact(data));
