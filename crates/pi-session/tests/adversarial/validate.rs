//! Adversarial cases: validate.

#[allow(unused_imports)]
use super::common::*;
