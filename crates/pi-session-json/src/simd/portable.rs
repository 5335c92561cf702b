//! The portable classifiers, eight bytes at a time with [`super::word`]: the string end
//! loop's classifiers on processors without a vector path here, and the reference the tests
//! compare every vector classifier with. Also [`any_special`], a 32-byte check written so
//! that the compiler turns it into vector compares on its own.

// On x86-64 and NEON targets only the tests run the block classifiers.
#![cfg_attr(
    any(
        target_arch = "x86_64",
        all(
            target_arch = "aarch64",
            target_feature = "neon",
            target_endian = "little"
        )
    ),
    allow(dead_code)
)]

use super::{EscapeMasks, Masks, SHORT_ESCAPES, SimpleString, simple_string_with, word};

/// [`super::simple_string`] with the portable classifiers.
pub(crate) fn simple_string(bytes: &[u8], start: usize) -> Option<SimpleString> {
    simple_string_with(bytes, start, classify, escape_classes)
}

/// The classes every block needs.
pub(crate) fn classify(block: &[u8; 64]) -> Masks {
    Masks {
        quote: word::bits(block, |w| word::equal(w, b'"')),
        backslash: word::bits(block, |w| word::equal(w, b'\\')),
        control: word::bits(block, word::control),
    }
}

/// The classes of blocks with escapes.
pub(crate) fn escape_classes(block: &[u8; 64]) -> EscapeMasks {
    EscapeMasks {
        short_escape: word::bits(block, |w| {
            SHORT_ESCAPES.iter().fold(0, |m, &b| m | word::equal(w, b))
        }),
        slash: word::bits(block, |w| word::equal(w, b'/')),
    }
}

/// Whether any byte of the block is `"`, `\` or below 0x20 (exact). Written as a branch-free
/// fold over a fixed-size array so that it compiles to vector compares on every target.
#[inline]
pub(crate) fn any_special(block: &[u8; 32]) -> bool {
    let mut any = false;
    for &b in block {
        any |= (b == b'"') | (b == b'\\') | (b < 0x20);
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_special_sees_every_special_byte_at_every_position() {
        for b in 0u8..=255 {
            let special = b == b'"' || b == b'\\' || b < 0x20;
            assert_eq!(any_special(&[b; 32]), special, "{b:#x}");
            for at in [0, 7, 8, 31] {
                let mut block = [b'a'; 32];
                block[at] = b;
                assert_eq!(any_special(&block), special, "{b:#x} at {at}");
            }
        }
    }
}
