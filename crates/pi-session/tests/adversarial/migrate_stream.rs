//! Adversarial cases: migrate_stream.

#[allow(unused_imports)]
use super::common::*;
