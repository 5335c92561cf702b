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
    for c in String::from_utf8_lossy(data).chars() {
        if c.is_ascii() {
            ascii[c as usize] += 1;
        } else if let Some(slot) = other.iter_mut().find(|(o, _)| *o == c) {
            slot.1 += 1;
        } else {
            other.push((c, 1));
        }
    }
    let inv = 1.0 / data.len() as f64;
    ascii
        .iter()
        .copied()
        .chain(other.iter().map(|&(_, n)| n))
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
/// Runs are found without looking at most bytes: a run of [`MIN_LEN`] or more that starts at
/// or after `i` holds byte `i + MIN_LEN - 1`, so when that byte is not a token byte the
/// search moves on by [`MIN_LEN`].
pub(crate) fn candidates(text: &[u8], found: &mut Vec<std::ops::Range<usize>>) {
    let mut i = 0;
    // Invariant: no run of MIN_LEN or more starts before `i` that is not handled, and the
    // byte before `i` (if any) is not a token byte.
    while i + MIN_LEN <= text.len() {
        let probe = i + MIN_LEN - 1;
        if !TOKEN[usize::from(text[probe])] {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && TOKEN[usize::from(text[start - 1])] {
            start -= 1;
        }
        let mut end = probe + 1;
        while end < text.len() && TOKEN[usize::from(text[end])] {
            end += 1;
        }
        if end - start >= MIN_LEN {
            consider(text, start, end, found);
        }
        i = end + 1;
    }
}

/// One run of token bytes: trimmed of what ends sentences and paths, kept if it looks random.
fn consider(text: &[u8], start: usize, end: usize, found: &mut Vec<std::ops::Range<usize>>) {
    let mut end = end;
    while end > start && matches!(text[end - 1], b'.' | b'=' | b'-' | b'/') {
        end -= 1;
    }
    let mut begin = start;
    while begin < end && matches!(text[begin], b'.' | b'-' | b'/') {
        begin += 1;
    }
    let token = &text[begin..end];
    if (MIN_LEN..=MAX_LEN).contains(&token.len()) && looks_random(token) {
        found.push(begin..end);
    }
}

/// `[A-Za-z0-9_+/=.-]`.
static TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'/' | b'=' | b'.' | b'-');
        b += 1;
    }
    table
};

fn looks_random(token: &[u8]) -> bool {
    let letters = token.iter().any(u8::is_ascii_alphabetic);
    let digits = token.iter().any(u8::is_ascii_digit);
    let upper = token.iter().any(u8::is_ascii_uppercase);
    let lower = token.iter().any(u8::is_ascii_lowercase);
    if !letters || !digits {
        return false;
    }
    // Hex (hashes, SHAs, ids, UUIDs) in either case.
    if token.iter().all(|&b| b.is_ascii_hexdigit() || b == b'-') {
        return false;
    }
    // A path or a dotted name: pieces of words, not one random run.
    if token.contains(&b'/')
        && token
            .split(|&b| b == b'/')
            .filter(|p| !p.is_empty())
            .count()
            > 2
    {
        return false;
    }
    if token.contains(&b'.') && !upper {
        return false;
    }
    // Identifiers in one case with separators (`snake_case_name_2`, `kebab-name-3`).
    if !(upper && lower) && (token.contains(&b'_') || token.contains(&b'-')) {
        return false;
    }
    shannon(token) > THRESHOLD
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
        assert!(spans("a_very_long_snake_case_identifier_name_2").is_empty());
    }
}
