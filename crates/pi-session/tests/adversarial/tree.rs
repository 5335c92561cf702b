//! Adversarial cases: tree.

#[allow(unused_imports)]
use super::common::*;
