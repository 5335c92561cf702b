//! The aarch64 classifiers: NEON compares, 16 bytes at a time.
//!
//! This module is compiled only for little-endian aarch64 targets that enable NEON (every
//! aarch64 Linux, Android and macOS target does), so no detection is needed; calling the
//! NEON copy of the string end loop is still `unsafe` for the compiler, which wants the
//! caller compiled with NEON too. NEON has no `movemask`: [`bits`] weighs each byte of a
//! compare result by its bit and adds neighbouring bytes pairwise until each byte holds the
//! bits of eight bytes (the method of simdjson).

use super::{EscapeMasks, Masks, SHORT_ESCAPES, SimpleString, simple_string_with, word};
use std::arch::aarch64::*;

/// [`super::simple_string`] with the NEON classifiers.
pub(super) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
    #[allow(unsafe_code)]
    // SAFETY: the module is compiled only for targets that enable NEON.
    unsafe {
        simple_string_neon(bytes, start)
    }
}

/// The classes of a block (for the tests).
#[cfg(test)]
pub(super) fn classify(block: &[u8; 64]) -> Masks {
    #[allow(unsafe_code)]
    // SAFETY: the module is compiled only for targets that enable NEON.
    unsafe {
        classify_neon(block)
    }
}

/// The escape classes of a block (for the tests).
#[cfg(test)]
pub(super) fn escape_classes(block: &[u8; 64]) -> EscapeMasks {
    #[allow(unsafe_code)]
    // SAFETY: the module is compiled only for targets that enable NEON.
    unsafe {
        escape_classes_neon(block)
    }
}

#[target_feature(enable = "neon")]
fn simple_string_neon(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_with(
        bytes,
        start,
        |block| classify_neon(block),
        |block| escape_classes_neon(block),
    )
}

/// The 16-byte vectors of a block (byte `i` of a vector is byte `i` of its 16 bytes).
#[target_feature(enable = "neon")]
fn vectors(block: &[u8; 64]) -> [uint8x16_t; 4] {
    let w = word::words(block);
    std::array::from_fn(|k| vcombine_u8(vcreate_u8(w[2 * k]), vcreate_u8(w[2 * k + 1])))
}

/// The 64-bit mask of four compare results (0xFF per matching byte): each byte keeps the
/// bit of its position among eight, and three rounds of pairwise additions leave, in byte
/// `j` of the first half, the sum of bytes `8j..8j + 8` of the four vectors in order.
#[target_feature(enable = "neon")]
fn bits(results: [uint8x16_t; 4]) -> u64 {
    let weight = vcreate_u8(0x8040_2010_0804_0201);
    let weights = vcombine_u8(weight, weight);
    let [a, b, c, d] = results.map(|r| vandq_u8(r, weights));
    let ab = vpaddq_u8(a, b);
    let cd = vpaddq_u8(c, d);
    let abcd = vpaddq_u8(ab, cd);
    let sums = vpaddq_u8(abcd, abcd);
    vgetq_lane_u64::<0>(vreinterpretq_u64_u8(sums))
}

/// The classes every block needs.
#[target_feature(enable = "neon")]
fn classify_neon(block: &[u8; 64]) -> Masks {
    let v = vectors(block);
    let eq = |b: u8| bits(v.map(|v| vceqq_u8(v, vdupq_n_u8(b))));
    Masks {
        quote: eq(b'"'),
        backslash: eq(b'\\'),
        control: bits(v.map(|v| vcltq_u8(v, vdupq_n_u8(0x20)))),
    }
}

/// The classes of blocks with escapes.
#[target_feature(enable = "neon")]
fn escape_classes_neon(block: &[u8; 64]) -> EscapeMasks {
    let v = vectors(block);
    let eq = |v, b: u8| vceqq_u8(v, vdupq_n_u8(b));
    EscapeMasks {
        short_escape: bits(v.map(|v| {
            SHORT_ESCAPES
                .iter()
                .fold(vdupq_n_u8(0), |m, &b| vorrq_u8(m, eq(v, b)))
        })),
        slash: bits(v.map(|v| eq(v, b'/'))),
    }
}
