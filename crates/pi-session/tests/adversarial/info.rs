//! Adversarial cases: info.

#[allow(unused_imports)]
use super::common::*;
