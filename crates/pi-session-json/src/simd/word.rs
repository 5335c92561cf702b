//! Byte classes eight bytes at a time in a `u64` (SWAR), on every processor.
//!
//! Each class sets the high bit of the bytes that are in it and no other bit. The additions
//! below never carry from one byte into the next (each adds at most 0x7F to at most 0x7F),
//! so the classes are exact: the lowest set bit is the first byte of the class, which the
//! scanner relies on. [`bits`] gathers the high bits of a 64-byte block into a mask with one
//! bit per byte, like a vector `movemask`.

/// The high bit of every byte.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// The low seven bits of every byte.
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// `b` in every byte.
#[inline(always)]
const fn repeat(b: u8) -> u64 {
    0x0101_0101_0101_0101u64.wrapping_mul(b as u64)
}

/// High bit set iff the byte of `v` is not zero.
#[inline(always)]
fn non_zero(v: u64) -> u64 {
    ((v & LOW7).wrapping_add(LOW7) | v) & HIGH
}

/// High bit set iff the byte of `w` is at least 0x20 (a space).
#[inline(always)]
fn at_least_space(w: u64) -> u64 {
    ((w & LOW7).wrapping_add(repeat(0x80 - 0x20)) | w) & HIGH
}

/// High bit set iff the byte of `w` is `b`.
#[inline(always)]
pub(crate) fn equal(w: u64, b: u8) -> u64 {
    !non_zero(w ^ repeat(b)) & HIGH
}

/// High bit set iff the byte of `w` is below 0x20 (a control character, which a JSON string
/// cannot hold).
#[inline(always)]
pub(crate) fn control(w: u64) -> u64 {
    !at_least_space(w) & HIGH
}

/// High bit set iff the byte of `w` is `"`, `\` or below 0x20: the bytes a string scanner
/// must stop at.
#[inline(always)]
pub(crate) fn special(w: u64) -> u64 {
    let quote = non_zero(w ^ repeat(b'"'));
    let backslash = non_zero(w ^ repeat(b'\\'));
    !(quote & backslash & at_least_space(w)) & HIGH
}

/// The eight-byte words of a block, little-endian (byte `i` of the block is bits
/// `8 * (i % 8)..` of word `i / 8`).
#[inline(always)]
pub(crate) fn words(block: &[u8; 64]) -> [u64; 8] {
    std::array::from_fn(|i| {
        u64::from_le_bytes(block[i * 8..i * 8 + 8].try_into().unwrap_or_default())
    })
}

/// The mask of the bytes of the block whose high bit `class` sets (bit `i` for byte `i`).
#[inline(always)]
pub(crate) fn bits(block: &[u8; 64], class: impl Fn(u64) -> u64) -> u64 {
    words(block)
        .into_iter()
        .enumerate()
        .fold(0, |bits, (k, w)| {
            // The high bits of a word's bytes, gathered into bits 0..8 by a multiplication
            // whose partial products land each one on its own bit of the top byte.
            let gathered = ((class(w) & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
            bits | gathered << (8 * k)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each class of every byte value, at every position of a word, among neighbours that
    /// could make a carry cross bytes if one could.
    #[test]
    fn classes_are_exact_for_every_byte_at_every_position() {
        type Class = (&'static str, fn(u64) -> u64, fn(u8) -> bool);
        let classes: [Class; 5] = [
            ("quote", |w| equal(w, b'"'), |c| c == b'"'),
            ("backslash", |w| equal(w, b'\\'), |c| c == b'\\'),
            ("zero", |w| equal(w, 0), |c| c == 0),
            ("control", control, |c| c < 0x20),
            ("special", special, |c| c == b'"' || c == b'\\' || c < 0x20),
        ];
        for b in 0u8..=255 {
            for at in 0..8 {
                for fill in [b'a', 0xFF, 0x80, 0x7F, 0x00, 0x1F, 0x20, b'"', b'\\'] {
                    let mut word = [fill; 8];
                    word[at] = b;
                    for (name, class, is) in classes {
                        let expected = word
                            .iter()
                            .enumerate()
                            .fold(0u64, |m, (k, &c)| m | (u64::from(is(c)) << (8 * k + 7)));
                        assert_eq!(class(u64::from_le_bytes(word)), expected, "{name} {word:?}");
                    }
                }
            }
        }
        assert_eq!(special(u64::from_le_bytes(*b"abcdefgh")), 0);
        let text: [u8; 8] = "é漢字!".as_bytes()[..8].try_into().unwrap();
        assert_eq!(special(u64::from_le_bytes(text)), 0);
    }

    #[test]
    fn bits_gather_one_bit_per_byte_in_order() {
        for at in 0..64 {
            let mut block = [b'x'; 64];
            block[at] = b'"';
            assert_eq!(bits(&block, |w| equal(w, b'"')), 1 << at);
            assert_eq!(bits(&block, |w| equal(w, b'x')), !(1 << at));
        }
        let block: [u8; 64] = std::array::from_fn(|i| i as u8);
        assert_eq!(
            words(&block)[1],
            u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15])
        );
        assert_eq!(bits(&block, control), 0xFFFF_FFFF);
    }
}
