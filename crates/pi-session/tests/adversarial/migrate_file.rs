//! Adversarial cases: migrate_file.

#[allow(unused_imports)]
use super::common::*;
