//! Adversarial cases: conformance.

#[allow(unused_imports)]
use super::common::*;
