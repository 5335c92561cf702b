//! A JSON string's escapes decoded as `JSON.parse` decodes them, into WTF-8 (a surrogate pair
//! joined, a lone surrogate kept), strictly or leniently (a torn line's invalid escapes kept as
//! written).

/// A JSON string's raw content decoded as `JSON.parse` decodes it into `out`, as WTF-8 (a
/// surrogate pair joined, a lone surrogate kept as its three bytes); `None` when an escape is
/// not valid JSON.
pub(super) fn unescape(raw: &[u8], out: &mut Vec<u8>) -> Option<()> {
    decode_escapes(raw, out, false)
}

/// [`unescape`]; `lenient`: an invalid escape is kept as written instead of failing.
fn decode_escapes(raw: &[u8], out: &mut Vec<u8>, lenient: bool) -> Option<()> {
    out.clear();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + at]);
        let start = i + at;
        i = start + 2;
        let byte = match raw.get(start + 1) {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') if raw.get(i..i + 4).and_then(hex4).is_some() => {
                let unit = raw.get(i..i + 4).and_then(hex4).unwrap_or_default();
                i += 4;
                let mut code = unit;
                if (0xD800..0xDC00).contains(&unit)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && let Some(low) = raw.get(i + 2..i + 6).and_then(hex4)
                    && (0xDC00..0xE000).contains(&low)
                {
                    code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
                push_wtf8(out, code);
                continue;
            }
            _ if lenient => {
                // Kept as written: the backslash, and what follows read on from there.
                out.push(b'\\');
                i = start + 1;
                continue;
            }
            _ => return None,
        };
        out.push(byte);
    }
    out.extend_from_slice(&raw[i.min(raw.len())..]);
    Some(())
}

/// [`unescape`] for text that may not be valid JSON (a torn line): an escape that is not
/// valid (or cut off) is kept as it is written.
pub(super) fn unescape_lenient(raw: &[u8], out: &mut Vec<u8>) {
    decode_escapes(raw, out, true);
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc << 4 | v)
    })
}

/// A code point (or a lone surrogate) in generalized UTF-8, as WTF-8 holds it.
fn push_wtf8(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => {
            out.extend_from_slice(&[0xC0 | (code >> 6) as u8, 0x80 | (code & 0x3F) as u8])
        }
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3F) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
    }
}
