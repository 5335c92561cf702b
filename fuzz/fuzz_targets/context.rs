#![no_main]
//! `pi_session_testkit::fuzzing::check_context` on a generated session (see fuzz/README.md).

use libfuzzer_sys::fuzz_target;
use pi_session_testkit::fuzzing::{SessionSpec, check_context};

fuzz_target!(|spec: SessionSpec| check_context(&spec));
