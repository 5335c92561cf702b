#![no_main]
//! `pi_session_testkit::fuzzing::check_to_llm` on generated messages (see fuzz/README.md).

use libfuzzer_sys::fuzz_target;
use pi_session_testkit::fuzzing::{LlmSpec, check_to_llm};

fuzz_target!(|spec: LlmSpec| check_to_llm(&spec));
