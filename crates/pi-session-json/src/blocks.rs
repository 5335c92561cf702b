//! The end of a JSON string found 64 bytes at a time with bit masks.
//!
//! Session text is mostly string contents, and a generated or real session has a `"` or `\`
//! every dozen bytes or so, so a scanner that stops at each of them pays a branch per
//! special byte. Here a 64-byte block is classified at once into three masks (quotes,
//! backslashes, control characters: SSE2, AVX2 or AVX-512 compares on x86-64, chosen at run
//! time; eight-byte words elsewhere), escaped bytes are found from the backslash mask with
//! an addition whose carries resolve runs of backslashes (the method of simdjson, Langdale
//! and Lemire, "Parsing gigabytes of JSON per second", 2019), and the closing quote is the
//! first quote that is not escaped. Only blocks with escapes are classified further, to
//! check what follows each backslash.
//!
//! [`simple_string`] only answers for strings whose escapes are the short ones (`\"`, `\\`,
//! `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) and that are terminated without a control character;
//! anything else (a `\u` escape, an error) is left to the exact byte-by-byte scanner, which
//! also produces the error messages.

/// What [`simple_string`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SimpleString {
    /// The offset just after the closing quote.
    pub end: usize,
    /// Whether the string has any escape.
    pub escaped: bool,
    /// Whether it has a `\/` escape (which `JSON.stringify` never writes).
    pub slash: bool,
}

/// The classes of the bytes of a block that every block needs, one bit per byte (bit `i`
/// for byte `i`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// Bytes below 0x20, which a JSON string cannot hold.
    control: u64,
}

/// The classes that only blocks with escapes need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct EscapeMasks {
    /// The bytes that may follow a backslash in a short escape: `"\/bfnrt` and `\`.
    short_escape: u64,
    /// `/`.
    slash: u64,
}

/// Bits at even positions.
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The bytes that `backslash` escapes: bit `i` is set when byte `i` follows an odd run of
/// backslashes. `carry` says whether the first byte of this block is escaped by the block
/// before, and is set for the next block.
fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    // A backslash escaped by the previous block starts no escape.
    let backslash = backslash & !*carry;
    let follows_backslash = (backslash << 1) | *carry;
    // Adding each run's first bit to the run carries past its end; the carry lands on the
    // bit after the run, and whether the run started on an even or odd bit and had an odd
    // length decides the parity of that bit.
    let odd_starts = backslash & !EVEN_BITS & !follows_backslash;
    let (sums, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    let invert = sums << 1;
    (EVEN_BITS ^ invert) & follows_backslash
}

/// The bytes that follow a backslash in the escapes [`simple_string`] takes.
const SHORT_ESCAPES: &[u8; 8] = b"\"\\/bfnrt";

/// Finds the end of the string whose contents start at `start` (just after its opening
/// quote) in `bytes`, when the string is terminated and has only short escapes; `None` for
/// anything else, which the exact scanner then handles.
pub(crate) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
    #[cfg(target_arch = "x86_64")]
    {
        x86::simple_string(bytes, start)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        simple_string_with(bytes, start, classify_words, escape_classes_words)
    }
}

/// [`simple_string`] with given block classifiers (inlined into each instruction-set
/// variant, so that the classifiers are compiled with that variant's instructions).
#[inline(always)]
fn simple_string_with(
    bytes: &[u8],
    start: usize,
    classify: impl Fn(&[u8; 64]) -> Masks,
    escape_classes: impl Fn(&[u8; 64]) -> EscapeMasks,
) -> Option<SimpleString> {
    let mut at = start;
    let mut carry = 0;
    let (mut any_escape, mut slash) = (0, 0);
    loop {
        let rest = bytes.get(at..)?;
        let mut tail = [b' '; 64];
        let (block, len): (&[u8; 64], usize) = match rest.first_chunk::<64>() {
            Some(block) => (block, 64),
            None => {
                // The last bytes, padded with spaces (no class of their own); a string
                // that does not end before the padding is unterminated.
                tail[..rest.len()].copy_from_slice(rest);
                (&tail, rest.len())
            }
        };
        let masks = classify(block);
        let escaped = escaped(masks.backslash, &mut carry);
        let stop = (masks.quote & !escaped) | masks.control;
        // The bits before the first stop (all of them when there is none).
        let before = stop.wrapping_sub(1) & !stop;
        let targets = escaped & before;
        if targets != 0 {
            let classes = escape_classes(block);
            if targets & !classes.short_escape != 0 {
                return None;
            }
            any_escape |= targets;
            slash |= targets & classes.slash;
        }
        if stop != 0 {
            let first = stop.trailing_zeros();
            if masks.control >> first & 1 != 0 || first as usize >= len {
                return None;
            }
            return Some(SimpleString {
                end: at + first as usize + 1,
                escaped: any_escape != 0,
                slash: slash != 0,
            });
        }
        if len < 64 {
            return None;
        }
        at += 64;
    }
}

/// The x86-64 classifiers: SSE2 (part of every x86-64 processor), and AVX2 and AVX-512BW
/// when the processor has them (detected once, at the first call).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{EscapeMasks, Masks, SHORT_ESCAPES, SimpleString, simple_string_with};
    use std::arch::x86_64::*;
    use std::sync::atomic::{AtomicU8, Ordering};

    const UNKNOWN: u8 = 0;
    const SSE2: u8 = 1;
    pub(super) const AVX2: u8 = 2;
    pub(super) const AVX512: u8 = 3;

    /// The widest instruction set of this processor that a classifier exists for.
    static LEVEL: AtomicU8 = AtomicU8::new(UNKNOWN);

    pub(super) fn level() -> u8 {
        match LEVEL.load(Ordering::Relaxed) {
            UNKNOWN => {
                let level = if is_x86_feature_detected!("avx512bw") {
                    AVX512
                } else if is_x86_feature_detected!("avx2") {
                    AVX2
                } else {
                    SSE2
                };
                LEVEL.store(level, Ordering::Relaxed);
                level
            }
            level => level,
        }
    }

    pub(super) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
        #[allow(unsafe_code)]
        // SAFETY: each variant runs only on a processor that has its instructions: SSE2 is
        // part of x86-64, AVX2 and AVX-512BW were detected by `level`.
        unsafe {
            match level() {
                AVX512 => simple_string_avx512(bytes, start),
                AVX2 => simple_string_avx2(bytes, start),
                _ => simple_string_sse2(bytes, start),
            }
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
        std::array::from_fn(|i| {
            i64::from_le_bytes(block[i * 8..i * 8 + 8].try_into().unwrap_or_default())
        })
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
    pub(super) fn classify_sse2(block: &[u8; 64]) -> Masks {
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
    pub(super) fn escape_classes_sse2(block: &[u8; 64]) -> EscapeMasks {
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
        std::array::from_fn(|k| {
            _mm256_set_epi64x(w[4 * k + 3], w[4 * k + 2], w[4 * k + 1], w[4 * k])
        })
    }

    #[target_feature(enable = "avx2")]
    fn bits_256(vectors: [__m256i; 2]) -> u64 {
        u64::from(_mm256_movemask_epi8(vectors[0]) as u32)
            | u64::from(_mm256_movemask_epi8(vectors[1]) as u32) << 32
    }

    /// 32 bytes at a time, as [`classify_sse2`].
    #[target_feature(enable = "avx2")]
    pub(super) fn classify_avx2(block: &[u8; 64]) -> Masks {
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
    pub(super) fn escape_classes_avx2(block: &[u8; 64]) -> EscapeMasks {
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
    pub(super) fn classify_avx512(block: &[u8; 64]) -> Masks {
        let v = vector_512(block);
        let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
        Masks {
            quote: eq(b'"'),
            backslash: eq(b'\\'),
            control: _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)),
        }
    }

    #[target_feature(enable = "avx512bw")]
    pub(super) fn escape_classes_avx512(block: &[u8; 64]) -> EscapeMasks {
        let v = vector_512(block);
        let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
        EscapeMasks {
            short_escape: SHORT_ESCAPES.iter().fold(0, |m, &b| m | eq(b)),
            slash: eq(b'/'),
        }
    }
}

/// The portable classifiers, eight bytes at a time: each class gives the high bit of its
/// bytes, and a multiplication gathers the eight high bits of a word into one byte.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod words {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

    fn repeat(b: u8) -> u64 {
        0x0101_0101_0101_0101u64 * u64::from(b)
    }

    /// The mask of the bytes of the block for which `high` sets the high bit.
    pub(super) fn bits(block: &[u8; 64], high: impl Fn(u64) -> u64) -> u64 {
        block
            .chunks_exact(8)
            .enumerate()
            .fold(0, |bits, (k, chunk)| {
                let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
                // The high bits of a word's bytes, gathered into bits 0..8.
                let gathered = ((high(w) & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
                bits | gathered << (8 * k)
            })
    }

    /// High bit set iff the byte is `b` (exact: no carry crosses a byte).
    pub(super) fn equal(w: u64, b: u8) -> u64 {
        let v = w ^ repeat(b);
        !(((v & LOW7) + LOW7) | v)
    }

    /// High bit set iff the byte is below 0x20.
    pub(super) fn control(w: u64) -> u64 {
        !((((w & LOW7) + repeat(0x80 - 0x20)) | w) & HIGH)
    }
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_words(block: &[u8; 64]) -> Masks {
    Masks {
        quote: words::bits(block, |w| words::equal(w, b'"')),
        backslash: words::bits(block, |w| words::equal(w, b'\\')),
        control: words::bits(block, words::control),
    }
}

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn escape_classes_words(block: &[u8; 64]) -> EscapeMasks {
    EscapeMasks {
        short_escape: words::bits(block, |w| {
            SHORT_ESCAPES.iter().fold(0, |m, &b| m | words::equal(w, b))
        }),
        slash: words::bits(block, |w| words::equal(w, b'/')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte-by-byte model of `escaped` over a sequence of blocks.
    fn escaped_model(backslashes: &[u64]) -> Vec<u64> {
        let mut odd = false;
        let mut out = Vec::new();
        for &b in backslashes {
            let mut m = 0;
            for i in 0..64 {
                if odd {
                    m |= 1 << i;
                    odd = false;
                } else if b >> i & 1 == 1 {
                    odd = true;
                }
            }
            out.push(m);
        }
        out
    }

    /// A small deterministic generator (xorshift) for the random tests.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn escaped_bytes_follow_odd_runs_of_backslashes() {
        let mut next = rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..20_000 {
            // Dense and sparse backslash patterns, and runs across block boundaries.
            let blocks: Vec<u64> = (0..4)
                .map(|_| match round % 4 {
                    0 => next(),
                    1 => next() | next(),
                    2 => next() & next(),
                    _ => !0 << (next() % 64),
                })
                .collect();
            let mut carry = 0;
            let got: Vec<u64> = blocks.iter().map(|&b| escaped(b, &mut carry)).collect();
            assert_eq!(got, escaped_model(&blocks), "{blocks:x?}");
        }
    }

    #[test]
    fn every_classifier_agrees_with_the_definition() {
        let mut next = rng(42);
        for _ in 0..5_000 {
            let mut block = [0u8; 64];
            for b in &mut block {
                // Bias towards the interesting bytes.
                *b = match next() % 7 {
                    0 => b'"',
                    1 => b'\\',
                    2 => (next() % 0x21) as u8,
                    3 => SHORT_ESCAPES[(next() % 8) as usize],
                    _ => next() as u8,
                };
            }
            let bits = |class: &dyn Fn(u8) -> bool| {
                (0..64).fold(0u64, |m, i| m | u64::from(class(block[i])) << i)
            };
            let masks = Masks {
                quote: bits(&|b| b == b'"'),
                backslash: bits(&|b| b == b'\\'),
                control: bits(&|b| b < 0x20),
            };
            let escapes = EscapeMasks {
                short_escape: bits(&|b| SHORT_ESCAPES.contains(&b)),
                slash: bits(&|b| b == b'/'),
            };
            assert_eq!(classify_words(&block), masks);
            assert_eq!(escape_classes_words(&block), escapes);
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            // SAFETY: each classifier runs only where the processor has its instructions.
            unsafe {
                assert_eq!(x86::classify_sse2(&block), masks);
                assert_eq!(x86::escape_classes_sse2(&block), escapes);
                if x86::level() >= x86::AVX2 {
                    assert_eq!(x86::classify_avx2(&block), masks);
                    assert_eq!(x86::escape_classes_avx2(&block), escapes);
                }
                if x86::level() >= x86::AVX512 {
                    assert_eq!(x86::classify_avx512(&block), masks);
                    assert_eq!(x86::escape_classes_avx512(&block), escapes);
                }
            }
        }
    }

    /// The model: the end of a simple string, byte by byte.
    fn simple_model(bytes: &[u8], start: usize) -> Option<SimpleString> {
        let (mut i, mut escaped, mut slash) = (start, false, false);
        loop {
            match *bytes.get(i)? {
                b'"' => {
                    return Some(SimpleString {
                        end: i + 1,
                        escaped,
                        slash,
                    });
                }
                b'\\' => {
                    escaped = true;
                    match *bytes.get(i + 1)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'/' => slash = true,
                        _ => return None,
                    }
                    i += 2;
                }
                0..0x20 => return None,
                _ => i += 1,
            }
        }
    }

    #[test]
    fn simple_strings_end_where_the_byte_model_says() {
        let alphabet = b"\"\\\\\\/bnu\x01 aaaaaaaaaa\xC3\xA9";
        let mut next = rng(7);
        for round in 0..50_000 {
            let len = (next() % 200) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let start = if round % 3 == 0 || len == 0 {
                0
            } else {
                (next() as usize) % len
            };
            let want = simple_model(&text, start);
            let context = || format!("{:?} from {start}", String::from_utf8_lossy(&text));
            assert_eq!(simple_string(&text, start), want, "{}", context());
            // The portable classifiers, which other processors use, on the same loop.
            assert_eq!(
                simple_string_with(&text, start, classify_words, escape_classes_words),
                want,
                "portable: {}",
                context()
            );
        }
    }

    #[test]
    fn long_strings_with_many_escapes() {
        let body = "a\\\"b\\\\c\\nd\\/e ".repeat(40);
        let text = format!("{body}\" trailing");
        let got = simple_string(text.as_bytes(), 0).unwrap();
        assert_eq!(got.end, body.len() + 1);
        assert!(got.escaped && got.slash);
        assert_eq!(simple_string(br#"abc\u0041""#, 0), None);
        assert_eq!(simple_string(b"abc", 0), None);
        assert_eq!(simple_string(b"abc\\", 0), None);
        assert_eq!(
            simple_string(br#"plain" x"#, 0),
            Some(SimpleString {
                end: 6,
                escaped: false,
                slash: false
            })
        );
    }
}
