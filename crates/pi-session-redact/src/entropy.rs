//! Shannon entropy as gitleaks measures it, and the entropy tier: long random-looking tokens
//! that no rule names, reported as candidates (redacted only when asked).
//!
//! Not candidates, because they are not secrets and sessions are full of them: hex strings
//! (git SHAs, SHA-256 digests, ids), UUIDs, tokens without both letters and digits, and runs
//! of base64 longer than any key (images, signatures).

/// Bits per character of `data`: characters counted as Unicode scalar values, divided by the
/// byte length, as gitleaks' `shannonEntropy` does (the same for ASCII).
pub(crate) fn shannon(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut ascii = [0u32; 128];
    let mut other: Vec<(char, u32)> = Vec::new();
    if data.is_ascii() {
        for &b in data {
            ascii[usize::from(b)] += 1;
        }
        return entropy_of(ascii.iter().copied(), data.len());
    }
    for c in String::from_utf8_lossy(data).chars() {
        if c.is_ascii() {
            ascii[c as usize] += 1;
        } else if let Some(slot) = other.iter_mut().find(|(o, _)| *o == c) {
            slot.1 += 1;
        } else {
            other.push((c, 1));
        }
    }
    entropy_of(
        ascii.iter().copied().chain(other.iter().map(|&(_, n)| n)),
        data.len(),
    )
}

/// Shannon entropy of counts over a length (gitleaks divides by the byte length).
fn entropy_of(counts: impl Iterator<Item = u32>, len: usize) -> f64 {
    let inv = 1.0 / len as f64;
    counts
        .filter(|&n| n > 0)
        .map(|n| {
            let p = f64::from(n) * inv;
            -p * p.log2()
        })
        .sum()
}

/// The shortest token the tier looks at.
const MIN_LEN: usize = 24;
/// The longest: beyond it a run is data (an image, a signature), not a key.
const MAX_LEN: usize = 256;
/// The entropy a candidate must exceed (random base62 of 24 characters is about 4.3).
const THRESHOLD: f64 = 4.0;

/// The spans of `text` that look like random secrets: runs of `[A-Za-z0-9_+/=.-]` of 24 to
/// 256 characters, with letters and digits, entropy above 4 bits, not hex, not a UUID.
///
/// The text is classified eight bytes at a time ([`token_bits`]) into one bit per byte, and
/// the bits where a run of [`MIN_LEN`] token bytes starts are found for 64 bytes at once
/// ([`long_run_starts`]); only where there is one are bytes looked at one by one.
pub(crate) fn candidates(text: &[u8], found: &mut Vec<std::ops::Range<usize>>) {
    if text.len() < MIN_LEN {
        return;
    }
    let mask_at = |chunk: usize| -> u64 {
        let from = chunk * 64;
        if from >= text.len() {
            return 0;
        }
        let bytes = &text[from..text.len().min(from + 64)];
        let mut mask = 0u64;
        for (k, eight) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..eight.len()].copy_from_slice(eight);
            mask |= u64::from(token_bits(u64::from_le_bytes(word))) << (8 * k);
        }
        if bytes.len() < 64 {
            mask &= (1u64 << bytes.len()) - 1;
        }
        mask
    };
    let chunks = text.len().div_ceil(64);
    // Runs that end before this byte are done.
    let mut done = 0;
    let mut current = mask_at(0);
    for chunk in 0..chunks {
        let next = mask_at(chunk + 1);
        let mut starts = long_run_starts(current, next);
        while starts != 0 {
            let at = chunk * 64 + starts.trailing_zeros() as usize;
            starts &= starts - 1;
            if at < done {
                continue;
            }
            let mut begin = at;
            while begin > done && is_token(text[begin - 1]) {
                begin -= 1;
            }
            let mut end = at + MIN_LEN;
            while end < text.len() && is_token(text[end]) {
                end += 1;
            }
            consider(text, begin, end, found);
            done = end;
        }
        current = next;
    }
}

/// The bits of `low` where a run of [`MIN_LEN`] set bits starts, `high` holding the bits after
/// them: the run AND-ed with itself shifted, doubling the length each time.
fn long_run_starts(low: u64, high: u64) -> u64 {
    let m = u128::from(low) | u128::from(high) << 64;
    let two = m & (m >> 1);
    let four = two & (two >> 2);
    let eight = four & (four >> 4);
    let sixteen = eight & (eight >> 8);
    let twenty_four = sixteen & (eight >> 16);
    const _: () = assert!(MIN_LEN == 24, "long_run_starts counts to 24");
    twenty_four as u64
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'/' | b'=' | b'.' | b'-')
}

/// One bit per byte of `word` (little-endian: bit `k` for byte `k`): whether it is a token
/// byte `[A-Za-z0-9_+/=.-]`, for eight bytes at once (SWAR: every byte compared in its own
/// lane, no carry crossing lanes because each lane's top bit is cleared first).
fn token_bits(word: u64) -> u8 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let ascii = !word & HIGH;
    let t = word & LOW7;
    // The top bit of each lane set where the lane's value is at least `lo` (lanes ≤ 0x7f).
    let at_least = |lo: u8| (t + (0x80 - u64::from(lo)) * ONES) & HIGH;
    let range = |lo: u8, hi: u8| at_least(lo) & !at_least(hi + 1);
    let equal = |c: u8| {
        let v = t ^ (u64::from(c) * ONES);
        !(((v & LOW7) + LOW7) | v) & HIGH
    };
    let token = range(b'0', b'9')
        | range(b'A', b'Z')
        | range(b'a', b'z')
        | equal(b'_')
        | equal(b'+')
        | equal(b'/')
        | equal(b'=')
        | equal(b'.')
        | equal(b'-');
    let bits = (token & ascii) >> 7;
    // Gather the eight lane bits into one byte.
    ((bits.wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u8
}

/// One run of token bytes: trimmed of what ends sentences and paths, kept if it looks random.
fn consider(text: &[u8], start: usize, end: usize, found: &mut Vec<std::ops::Range<usize>>) {
    let mut end = end;
    while end > start && matches!(text[end - 1], b'.' | b'=' | b'-' | b'/') {
        end -= 1;
    }
    let mut begin = start;
    while begin < end && matches!(text[begin], b'.' | b'-' | b'/' | b'~') {
        begin += 1;
    }
    // A rooted path (`/home/…/Form2.tsx`, `./src/…`) of two steps or more is a path
    // whatever its pieces.
    if begin > start && text[begin - 1] == b'/' && text[begin..end].contains(&b'/') {
        return;
    }
    let token = &text[begin..end];
    if (MIN_LEN..=MAX_LEN).contains(&token.len()) && looks_random(token) {
        found.push(begin..end);
    }
}

fn looks_random(token: &[u8]) -> bool {
    // One pass: which kinds of byte the token has.
    const UPPER: u8 = 1;
    const LOWER: u8 = 2;
    const DIGIT: u8 = 4;
    const NOT_HEX: u8 = 8;
    const DOT: u8 = 16;
    const SEPARATOR: u8 = 32;
    let mut kinds = 0u8;
    let mut slashes = 0usize;
    for &b in token {
        kinds |= match b {
            b'A'..=b'F' => UPPER,
            b'G'..=b'Z' => UPPER | NOT_HEX,
            b'a'..=b'f' => LOWER,
            b'g'..=b'z' => LOWER | NOT_HEX,
            b'0'..=b'9' => DIGIT,
            b'.' => DOT | NOT_HEX,
            b'_' => SEPARATOR | NOT_HEX,
            b'-' => SEPARATOR,
            b'/' => {
                slashes += 1;
                NOT_HEX
            }
            _ => NOT_HEX,
        };
    }
    let has = |k: u8| kinds & k != 0;
    let mixed_case = has(UPPER) && has(LOWER);
    // Letters and digits, not hex (hashes, SHAs, ids, UUIDs), not a path (pieces of words),
    // not a lower-case dotted name, not an identifier in one case with separators
    // (`snake_case_name_2`).
    if !(has(UPPER) || has(LOWER)) || !has(DIGIT) || !has(NOT_HEX) {
        return false;
    }
    if slashes >= 2 && looks_like_path(token) {
        return false;
    }
    if has(DOT) && !has(UPPER) {
        return false;
    }
    if !mixed_case && has(SEPARATOR) {
        return false;
    }
    // Ids providers give tool calls, requests and responses, which sessions quote.
    if ID_PREFIXES.iter().any(|p| token.starts_with(p)) || holds_uuid(token) {
        return false;
    }
    shannon(token) > THRESHOLD
}

/// A path (`/usr/lib/x`, `./a/b`, `src/core/main.rs`), not base64 that happens to hold two
/// `/`: rooted, or none of its pieces mixes capitals and digits (`K7MDENG` in an AWS secret
/// key does).
fn looks_like_path(token: &[u8]) -> bool {
    if matches!(token.first(), Some(b'/' | b'.' | b'~')) {
        return true;
    }
    // A piece of base64 has capitals and digits and no `.`; a file name has an extension.
    token.split(|&b| b == b'/').all(|piece| {
        piece.contains(&b'.')
            || !(piece.iter().any(u8::is_ascii_uppercase) && piece.iter().any(u8::is_ascii_digit))
    })
}

/// Prefixes of the ids model providers give tool calls, requests, messages and responses.
const ID_PREFIXES: &[&[u8]] = &[
    b"toolu_",
    b"srvtoolu_",
    b"req_",
    b"msg_",
    b"call_",
    b"resp_",
    b"rs_",
    b"fc_",
    b"chatcmpl-",
    b"run_",
    b"thread_",
    b"asst_",
    b"file-",
    b"file_",
    b"batch_",
    b"ws_",
    b"tool_",
];

/// Whether `token` holds a UUID (`8-4-4-4-12` hex digits): a file or session name.
fn holds_uuid(token: &[u8]) -> bool {
    const SHAPE: [usize; 5] = [8, 4, 4, 4, 12];
    token.windows(36).any(|w| {
        let mut at = 0;
        SHAPE.iter().enumerate().all(|(i, &n)| {
            let group = w[at..at + n].iter().all(u8::is_ascii_hexdigit);
            at += n;
            let dash = i == SHAPE.len() - 1 || w[at] == b'-';
            at += 1;
            group && dash
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<&str> {
        let mut found = Vec::new();
        candidates(text.as_bytes(), &mut found);
        found.into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn entropy_matches_gitleaks() {
        assert_eq!(shannon(b""), 0.0);
        assert_eq!(shannon(b"aaaa"), 0.0);
        assert!((shannon(b"ab") - 1.0).abs() < 1e-12);
        assert!((shannon(b"abcd") - 2.0).abs() < 1e-12);
    }

    #[test]
    fn random_tokens_are_candidates_and_hashes_are_not() {
        assert_eq!(
            spans("token Xq7rT2mZp9LkV4nB8wQe3YhJ6sDf here"),
            ["Xq7rT2mZp9LkV4nB8wQe3YhJ6sDf"]
        );
        assert!(spans("commit 3f786850e387550fdab836ed7e6dc881de23001b").is_empty());
        assert!(spans("id 0f8fad5b-d9cb-469f-a165-70867728950e").is_empty());
        assert!(
            spans("sha256 e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf")
                .is_empty()
        );
        assert!(spans("/usr/local/lib/node_modules/typescript/lib/tsc.js").is_empty());
        assert!(spans("packages/coding-agent/src/core/model-resolver.ts").is_empty());
        // Base64 with slashes is not a path.
        assert_eq!(
            spans("key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8W3kLmN2 end"),
            ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8W3kLmN2"]
        );
        assert!(spans("a_very_long_snake_case_identifier_name_2").is_empty());
        assert!(
            spans("see toolu_019tYDrbzifrra2KYzmYqWvk and req_011CVvAQm5gLufA1cDeHobKh").is_empty()
        );
        assert!(
            spans("pi-session-2025-12-08T23-22-21-320Z_0db2eb3b-5ed8-4b70-88c6-a3f7104eb251.html")
                .is_empty()
        );
    }

    #[test]
    fn runs_are_found_at_every_position() {
        let token = "Xq7rT2mZp9LkV4nB8wQe3YhJ";
        assert_eq!(token.len(), MIN_LEN);
        for pad in 0..30 {
            for tail in 0..3 {
                let text = format!("{}{token}{}", " ".repeat(pad), " ".repeat(tail));
                assert_eq!(spans(&text), [token], "{pad} {tail}");
                let glued = format!("{}{token}", "ab ".repeat(pad));
                assert_eq!(spans(&glued), [token], "glued {pad}");
            }
        }
        assert!(spans(&token[1..]).is_empty(), "one short");
    }

    #[test]
    fn token_bits_classify_every_byte() {
        for b in 0..=255u8 {
            let expected = b.is_ascii_alphanumeric() || b"_+/=.-".contains(&b);
            for lane in 0..8 {
                let mut word = [b'!'; 8];
                word[lane] = b;
                // Neighbours of every kind must not change the lane's answer.
                word[(lane + 1) % 8] = b.wrapping_add(1);
                let bits = token_bits(u64::from_le_bytes(word));
                assert_eq!(
                    bits >> lane & 1 == 1,
                    expected,
                    "byte {b:#x} in lane {lane}"
                );
            }
        }
    }
}
