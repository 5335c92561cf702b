//! The x86-64 classifiers: SSE2 (part of every x86-64 processor, 16 bytes per compare), and
//! AVX2 (32 bytes) and AVX-512BW (the whole block, straight into bit masks) when the
//! processor has them, detected once, at the first call.
//!
//! Each instruction set has its own copy of the string end loop, compiled with its
//! instructions. Calling one is `unsafe` (the one place in this crate): the AVX2 and AVX-512
//! copies are called only after detection, and SSE2 is part of x86-64 (the target enabling
//! it is not enough for the compiler).

use super::{EscapeMasks, Masks, SHORT_ESCAPES, SimpleString, simple_string_with, word};
use std::arch::x86_64::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction set with a classifier, from the narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    /// SSE2: every x86-64 processor.
    Sse2,
    /// AVX2.
    Avx2,
    /// AVX-512BW.
    Avx512,
}

/// The detected [`Level`] plus one; 0 before the first detection.
static DETECTED: AtomicU8 = AtomicU8::new(0);

/// The widest instruction set of this processor that a classifier exists for.
fn detected() -> Level {
    match DETECTED.load(Ordering::Relaxed) {
        1 => Level::Sse2,
        2 => Level::Avx2,
        3 => Level::Avx512,
        _ => {
            let level = if is_x86_feature_detected!("avx512bw") {
                Level::Avx512
            } else if is_x86_feature_detected!("avx2") {
                Level::Avx2
            } else {
                Level::Sse2
            };
            DETECTED.store(level as u8 + 1, Ordering::Relaxed);
            level
        }
    }
}

/// The levels this processor can run, from the narrowest (for the tests).
#[cfg(test)]
pub(super) fn levels() -> impl Iterator<Item = Level> {
    [Level::Sse2, Level::Avx2, Level::Avx512]
        .into_iter()
        .filter(|&level| level <= detected())
}

/// [`super::simple_string`] with the widest classifier this processor has.
pub(super) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_at(Level::Avx512, bytes, start)
}

/// [`super::simple_string`] with the classifier of `level`, or of the widest level this
/// processor has if that is narrower (so any level is safe to ask for).
pub(super) fn simple_string_at(level: Level, bytes: &[u8], start: usize) -> Option<SimpleString> {
    match level.min(detected()) {
        #[allow(unsafe_code)]
        // SAFETY: SSE2 is part of x86-64.
        Level::Sse2 => unsafe { simple_string_sse2(bytes, start) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX2: `detected` found it.
        Level::Avx2 => unsafe { simple_string_avx2(bytes, start) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX-512BW: `detected` found it.
        Level::Avx512 => unsafe { simple_string_avx512(bytes, start) },
    }
}

/// The classes of a block with the classifier of `level`, capped as in
/// [`simple_string_at`] (for the tests).
#[cfg(test)]
pub(super) fn classify(level: Level, block: &[u8; 64]) -> Masks {
    match level.min(detected()) {
        #[allow(unsafe_code)]
        // SAFETY: SSE2 is part of x86-64.
        Level::Sse2 => unsafe { classify_sse2(block) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX2: `detected` found it.
        Level::Avx2 => unsafe { classify_avx2(block) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX-512BW: `detected` found it.
        Level::Avx512 => unsafe { classify_avx512(block) },
    }
}

/// The escape classes of a block with the classifier of `level`, capped as in
/// [`simple_string_at`] (for the tests).
#[cfg(test)]
pub(super) fn escape_classes(level: Level, block: &[u8; 64]) -> EscapeMasks {
    match level.min(detected()) {
        #[allow(unsafe_code)]
        // SAFETY: SSE2 is part of x86-64.
        Level::Sse2 => unsafe { escape_classes_sse2(block) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX2: `detected` found it.
        Level::Avx2 => unsafe { escape_classes_avx2(block) },
        #[allow(unsafe_code)]
        // SAFETY: the processor has AVX-512BW: `detected` found it.
        Level::Avx512 => unsafe { escape_classes_avx512(block) },
    }
}

#[target_feature(enable = "sse2")]
fn simple_string_sse2(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_with(
        bytes,
        start,
        |block| classify_sse2(block),
        |block| escape_classes_sse2(block),
    )
}

#[target_feature(enable = "avx2")]
fn simple_string_avx2(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_with(
        bytes,
        start,
        |block| classify_avx2(block),
        |block| escape_classes_avx2(block),
    )
}

#[target_feature(enable = "avx512bw")]
fn simple_string_avx512(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_with(
        bytes,
        start,
        |block| classify_avx512(block),
        |block| escape_classes_avx512(block),
    )
}

/// The eight-byte words of a block, as the signed integers the intrinsics take.
#[inline(always)]
fn words(block: &[u8; 64]) -> [i64; 8] {
    word::words(block).map(|w| w as i64)
}

/// The 16-byte vectors of a block.
#[target_feature(enable = "sse2")]
fn vectors_128(block: &[u8; 64]) -> [__m128i; 4] {
    let w = words(block);
    std::array::from_fn(|k| _mm_set_epi64x(w[2 * k + 1], w[2 * k]))
}

/// Each compare gives 0xFF per matching byte; `movemask` packs their high bits.
#[target_feature(enable = "sse2")]
fn bits_128(vectors: [__m128i; 4]) -> u64 {
    vectors.iter().enumerate().fold(0, |bits, (k, &m)| {
        bits | u64::from(_mm_movemask_epi8(m) as u16) << (16 * k)
    })
}

/// 16 bytes at a time.
#[target_feature(enable = "sse2")]
fn classify_sse2(block: &[u8; 64]) -> Masks {
    let v = vectors_128(block);
    let eq = |b: u8| bits_128(v.map(|v| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))));
    // Below 0x20 exactly when max(byte, 0x1F) is 0x1F.
    let limit = _mm_set1_epi8(0x1F);
    Masks {
        quote: eq(b'"'),
        backslash: eq(b'\\'),
        control: bits_128(v.map(|v| _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit))),
    }
}

#[target_feature(enable = "sse2")]
fn escape_classes_sse2(block: &[u8; 64]) -> EscapeMasks {
    let v = vectors_128(block);
    let eq = |v, b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
    EscapeMasks {
        short_escape: bits_128(v.map(|v| {
            SHORT_ESCAPES
                .iter()
                .fold(_mm_setzero_si128(), |m, &b| _mm_or_si128(m, eq(v, b)))
        })),
        slash: bits_128(v.map(|v| eq(v, b'/'))),
    }
}

/// The 32-byte vectors of a block.
#[target_feature(enable = "avx2")]
fn vectors_256(block: &[u8; 64]) -> [__m256i; 2] {
    let w = words(block);
    std::array::from_fn(|k| _mm256_set_epi64x(w[4 * k + 3], w[4 * k + 2], w[4 * k + 1], w[4 * k]))
}

#[target_feature(enable = "avx2")]
fn bits_256(vectors: [__m256i; 2]) -> u64 {
    u64::from(_mm256_movemask_epi8(vectors[0]) as u32)
        | u64::from(_mm256_movemask_epi8(vectors[1]) as u32) << 32
}

/// 32 bytes at a time, as [`classify_sse2`].
#[target_feature(enable = "avx2")]
fn classify_avx2(block: &[u8; 64]) -> Masks {
    let v = vectors_256(block);
    let eq = |b: u8| bits_256(v.map(|v| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8))));
    let limit = _mm256_set1_epi8(0x1F);
    Masks {
        quote: eq(b'"'),
        backslash: eq(b'\\'),
        control: bits_256(v.map(|v| _mm256_cmpeq_epi8(_mm256_max_epu8(v, limit), limit))),
    }
}

#[target_feature(enable = "avx2")]
fn escape_classes_avx2(block: &[u8; 64]) -> EscapeMasks {
    let v = vectors_256(block);
    let eq = |v, b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
    EscapeMasks {
        short_escape: bits_256(v.map(|v| {
            SHORT_ESCAPES
                .iter()
                .fold(_mm256_setzero_si256(), |m, &b| _mm256_or_si256(m, eq(v, b)))
        })),
        slash: bits_256(v.map(|v| eq(v, b'/'))),
    }
}

/// The block as one vector.
#[target_feature(enable = "avx512bw")]
fn vector_512(block: &[u8; 64]) -> __m512i {
    let w = words(block);
    _mm512_set_epi64(w[7], w[6], w[5], w[4], w[3], w[2], w[1], w[0])
}

/// The whole block at once: AVX-512 compares give the bit masks directly.
#[target_feature(enable = "avx512bw")]
fn classify_avx512(block: &[u8; 64]) -> Masks {
    let v = vector_512(block);
    let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
    Masks {
        quote: eq(b'"'),
        backslash: eq(b'\\'),
        control: _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)),
    }
}

#[target_feature(enable = "avx512bw")]
fn escape_classes_avx512(block: &[u8; 64]) -> EscapeMasks {
    let v = vector_512(block);
    let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
    EscapeMasks {
        short_escape: SHORT_ESCAPES.iter().fold(0, |m, &b| m | eq(b)),
        slash: eq(b'/'),
    }
}
