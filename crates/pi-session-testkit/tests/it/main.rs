//! The integration tests of `pi-session-testkit`, one test binary: the fuzzing checks on
//! stable over the corpus and seeded random inputs (`fuzz_smoke`), and every input the
//! fuzzers ever found (`fuzz_regressions`).

mod fuzz_regressions;
mod fuzz_smoke;
mod planted;
