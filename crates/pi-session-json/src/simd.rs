//! The end of a JSON string found 64 bytes at a time with bit masks, and the byte tricks
//! the scanner shares with it.
//!
//! Session text is mostly string contents, and a generated or real session has a `"` or `\`
//! every dozen bytes or so, so a scanner that stops at each of them pays a branch per
//! special byte. Here a 64-byte block is classified at once into three masks (quotes,
//! backslashes, control characters; one bit per byte), escaped bytes are found from the
//! backslash mask with an addition whose carries resolve runs of backslashes (the method of
//! simdjson, Langdale and Lemire, "Parsing gigabytes of JSON per second", 2019), and the
//! closing quote is the first quote that is not escaped. Only blocks with escapes are
//! classified further, to check what follows each backslash.
//!
//! [`simple_string`] only answers for strings whose escapes are the short ones (`\"`, `\\`,
//! `\/`, `\b`, `\f`, `\n`, `\r`, `\t`) and that are terminated without a control character;
//! anything else (a `\u` escape, an error) is left to the exact byte-by-byte scanner, which
//! also produces the error messages.
//!
//! This module holds what every instruction set shares: the classes ([`Masks`],
//! [`EscapeMasks`]), the escape carry ([`escaped`]) and the block loop
//! ([`simple_string_with`]), which is generic over the classifiers and inlined into each
//! instruction set's variant so that it is compiled with that variant's instructions. The
//! classifiers are one file per instruction set:
//!
//! - [`word`]: the portable tricks on eight-byte words (SWAR), which the scanner also uses
//!   for its first look at a string;
//! - [`portable`]: classifiers made of those words, used where no vector path exists, and
//!   the reference the tests compare every other classifier with; a 32-byte check the
//!   compiler vectorises by itself;
//! - `x86` (x86-64): SSE2 (part of every x86-64 processor), AVX2 and AVX-512BW, chosen at
//!   run time;
//! - `neon` (little-endian aarch64 targets that enable NEON, as every aarch64 Linux and
//!   macOS target does): 16-byte NEON compares.
//!
//! The workspace denies `unsafe_code`: intrinsics are safe to call inside functions compiled
//! for their instruction set (Rust 2024 `#[target_feature]` functions), so the only `unsafe`
//! is the call of such a function from code compiled without it, in each instruction set's
//! dispatch, allowed there alone: after run-time detection (AVX2, AVX-512BW), or for an
//! instruction set the target always has (SSE2 on x86-64, NEON on aarch64).

#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little"
))]
mod neon;
pub(crate) mod portable;
pub(crate) mod word;
#[cfg(target_arch = "x86_64")]
mod x86;

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
pub(crate) struct Masks {
    /// `"`.
    pub quote: u64,
    /// `\`.
    pub backslash: u64,
    /// Bytes below 0x20, which a JSON string cannot hold.
    pub control: u64,
}

/// The classes that only blocks with escapes need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EscapeMasks {
    /// The bytes that may follow a backslash in a short escape: `"\/bfnrt` and `\`.
    pub short_escape: u64,
    /// `/`.
    pub slash: u64,
}

/// The bytes that follow a backslash in the escapes [`simple_string`] takes.
pub(crate) const SHORT_ESCAPES: &[u8; 8] = b"\"\\/bfnrt";

/// Bits at even positions.
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The bytes that `backslash` escapes: bit `i` is set when byte `i` follows an odd run of
/// backslashes. `carry` says whether the first byte of this block is escaped by the block
/// before, and is set for the next block.
#[inline(always)]
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

/// Finds the end of the string whose contents start at `start` (just after its opening
/// quote) in `bytes`, when the string is terminated and has only short escapes; `None` for
/// anything else, which the exact scanner then handles.
pub(crate) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
    #[cfg(target_arch = "x86_64")]
    {
        x86::simple_string(bytes, start)
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        target_endian = "little"
    ))]
    {
        neon::simple_string(bytes, start)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(
            target_arch = "aarch64",
            target_feature = "neon",
            target_endian = "little"
        )
    )))]
    {
        portable::simple_string(bytes, start)
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

    /// Every classifier compiled for this target (the portable one, and each vector one the
    /// processor can run) against the definition of the classes, on random blocks biased
    /// towards the interesting bytes and on every byte value at every position.
    #[test]
    fn every_classifier_agrees_with_the_definition() {
        let mut next = rng(42);
        let random = (0..5_000).map(|_| {
            std::array::from_fn(|_| match next() % 7 {
                0 => b'"',
                1 => b'\\',
                2 => (next() % 0x21) as u8,
                3 => SHORT_ESCAPES[(next() % 8) as usize],
                _ => next() as u8,
            })
        });
        let every_byte = (0..=255u8).flat_map(|b| {
            [b'a', 0xFF, 0x80, b'"']
                .into_iter()
                .map(move |fill| std::array::from_fn(|i| if i % 5 == 0 { b } else { fill }))
        });
        let mut checked = 0;
        for block in random.chain(every_byte) {
            let block: [u8; 64] = block;
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
            assert_eq!(portable::classify(&block), masks);
            assert_eq!(portable::escape_classes(&block), escapes);
            #[cfg(target_arch = "x86_64")]
            for level in x86::levels() {
                assert_eq!(x86::classify(level, &block), masks, "{level:?}");
                assert_eq!(x86::escape_classes(level, &block), escapes, "{level:?}");
            }
            #[cfg(all(
                target_arch = "aarch64",
                target_feature = "neon",
                target_endian = "little"
            ))]
            {
                assert_eq!(neon::classify(&block), masks, "neon");
                assert_eq!(neon::escape_classes(&block), escapes, "neon");
            }
            checked += 1;
        }
        assert_eq!(checked, 5_000 + 256 * 4);
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

    /// Every variant of [`simple_string`] compiled for this target and runnable here: the
    /// one chosen for this processor, the portable one, and each instruction set's.
    fn variants(bytes: &[u8], start: usize) -> Vec<(String, Option<SimpleString>)> {
        let mut found = vec![
            ("chosen".to_owned(), simple_string(bytes, start)),
            ("portable".to_owned(), portable::simple_string(bytes, start)),
        ];
        #[cfg(target_arch = "x86_64")]
        for level in x86::levels() {
            found.push((
                format!("{level:?}"),
                x86::simple_string_at(level, bytes, start),
            ));
        }
        #[cfg(all(
            target_arch = "aarch64",
            target_feature = "neon",
            target_endian = "little"
        ))]
        found.push(("neon".to_owned(), neon::simple_string(bytes, start)));
        found
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
            for (name, got) in variants(&text, start) {
                assert_eq!(
                    got,
                    want,
                    "{name}: {:?} from {start}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    #[test]
    fn long_strings_with_many_escapes() {
        let body = "a\\\"b\\\\c\\nd\\/e ".repeat(40);
        let text = format!("{body}\" trailing");
        for (name, got) in variants(text.as_bytes(), 0) {
            let got = got.unwrap_or_else(|| panic!("{name}"));
            assert_eq!(got.end, body.len() + 1, "{name}");
            assert!(got.escaped && got.slash, "{name}");
        }
        for (text, want) in [
            (&br#"abc\u0041""#[..], None),
            (b"abc", None),
            (b"abc\\", None),
            (
                br#"plain" x"#,
                Some(SimpleString {
                    end: 6,
                    escaped: false,
                    slash: false,
                }),
            ),
        ] {
            for (name, got) in variants(text, 0) {
                assert_eq!(got, want, "{name}: {:?}", String::from_utf8_lossy(text));
            }
        }
    }
}
