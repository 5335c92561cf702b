//! The values of a `.env` file (`--secrets-from`), read as dotenv loaders read them: `KEY=VALUE`
//! lines, `export` before the name, `#` comments; a value in double quotes may span lines and
//! holds `\n`, `\t`, `\"` and `\\` escapes, one in single quotes is taken as written, an
//! unquoted one ends at ` #`. The names are never taken.

use crate::MIN_NAMED_LEN;

/// The values of a `KEY=VALUE` file, as [`crate::Options::named`] takes them: the names left
/// out, and values shorter than [`MIN_NAMED_LEN`] (how many is the second number). The lines
/// of a value over several lines (a PEM key) are taken too, each of 16 bytes or more.
pub fn env_values(text: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let mut values = Vec::new();
    let mut short = 0;
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
        let line = text[at..end].trim_ascii();
        at = end + 1;
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        let line = line.strip_prefix(b"export ").unwrap_or(line);
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            continue;
        };
        let rest = line[eq + 1..].trim_ascii_start();
        let value = match rest.first() {
            Some(b'"') => {
                // To the closing quote, which may be on a later line.
                // `rest` is a piece of `text`: where it starts, just after the quote.
                let start = rest.as_ptr().addr() - text.as_ptr().addr() + 1;
                let (value, next) = double_quoted(text, start);
                at = next;
                value
            }
            Some(b'\'') => {
                let inner = &rest[1..];
                inner[..inner
                    .iter()
                    .position(|&b| b == b'\'')
                    .unwrap_or(inner.len())]
                    .to_vec()
            }
            _ => {
                let comment = rest
                    .windows(2)
                    .position(|w| w[0].is_ascii_whitespace() && w[1] == b'#');
                comment
                    .map_or(rest, |c| &rest[..c])
                    .trim_ascii_end()
                    .to_vec()
            }
        };
        if value.len() < MIN_NAMED_LEN {
            short += usize::from(!value.is_empty());
            continue;
        }
        if value.contains(&b'\n') {
            for part in value.split(|&b| b == b'\n') {
                let part = part.trim_ascii();
                if part.len() >= 16 && !part.starts_with(b"-----") {
                    values.push(part.to_vec());
                }
            }
        }
        values.push(value);
    }
    (values, short)
}

/// A double-quoted value starting at `start` (just after its quote), its escapes read: the
/// value, and where the next line starts (after the line of the closing quote).
fn double_quoted(text: &[u8], start: usize) -> (Vec<u8>, usize) {
    let mut value = Vec::new();
    let mut i = start;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let next = memchr::memchr(b'\n', &text[i..]).map_or(text.len(), |n| i + n + 1);
                return (value, next);
            }
            b'\\' if i + 1 < text.len() => {
                value.push(match text[i + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
                i += 2;
                continue;
            }
            b => value.push(b),
        }
        i += 1;
    }
    (value, text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_take_values_not_names() {
        let (values, short) = env_values(
            b"# comment\nexport API_KEY=\"abc123xyz\"\nDB_PASSWORD='p4ssw0rd!'\nEMPTY=\nX=ab\nnot a pair\n",
        );
        assert_eq!(values, [b"abc123xyz".to_vec(), b"p4ssw0rd!".to_vec()]);
        assert_eq!(short, 1);
        let (values, _) = env_values(
            b"DB_PASSWORD=hunter2-Correct-Horse # production\nAPI_TOKEN=\"tok-9f8e7d6c5b4a\"  # ci only\nURL=http://x/#frag\n",
        );
        assert_eq!(
            values,
            [
                b"hunter2-Correct-Horse".to_vec(),
                b"tok-9f8e7d6c5b4a".to_vec(),
                b"http://x/#frag".to_vec()
            ]
        );
    }

    #[test]
    fn double_quoted_values_span_lines_and_hold_escapes() {
        let (values, _) = env_values(
            b"KEY=  \"-----BEGIN KEY-----\nMIIEowIBAAKCAQEAx7\nabcdefghij0123456789ABCD\n-----END KEY-----\"\nNEXT=\"a\\tb\\\"c\\nd\"\n",
        );
        assert_eq!(values[0], b"MIIEowIBAAKCAQEAx7");
        assert_eq!(values[1], b"abcdefghij0123456789ABCD");
        assert!(values[2].starts_with(b"-----BEGIN KEY-----\nMIIE"));
        assert_eq!(values[3], b"a\tb\"c\nd");
        assert_eq!(values.len(), 4);
    }
}
