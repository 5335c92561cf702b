//! Showing names and text that come from outside (file names, values read from a session)
//! safely in messages and reports: nothing a file holds may drive the terminal (an ESC
//! byte), break a one-line-per-problem format (a newline in a name), flood the output (a
//! 10 MB id), or be shown ambiguously (a name that is not UTF-8).
//!
//! - [`path`]: a file name, escaped losslessly — two different names never look the same;
//! - [`text`]: a value for a message, control characters escaped and cut to a length with a
//!   count of what was left out;
//! - [`uri`]: a path as a percent-encoded URI reference of its raw bytes (SARIF).

use std::path::Path;

/// `p` as text that names it exactly: valid UTF-8 is shown as it is, except that `\` is
/// doubled, control and bidirectional-formatting characters are escaped (`\n`, `\t`,
/// `\x1b`, `\u{202e}`), and bytes that are not UTF-8 are shown as `\xff`. A plain name
/// (`sessions/a.jsonl`) is unchanged.
pub fn path(p: &Path) -> String {
    let bytes = raw(p);
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        // The runs of characters shown as they are, copied whole (a plain name is one run).
        let mut run = 0;
        for (i, c) in valid.char_indices() {
            if c == '\\' || hidden(c) {
                out.push_str(&valid[run..i]);
                match c {
                    '\\' => out.push_str("\\\\"),
                    c => push_char(&mut out, c),
                }
                run = i + c.len_utf8();
            }
        }
        out.push_str(&valid[run..]);
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// `s` for a message: control and bidirectional-formatting characters escaped, and cut
/// after about `max` bytes with a count of the bytes left out (`…(+123 bytes)`).
pub fn text(s: &str, max: usize) -> String {
    if s.len() <= max && !s.chars().any(hidden) {
        // Nothing to escape or cut (most names in a report): as it is.
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len().min(max) + 16);
    for (i, c) in s.char_indices() {
        if out.len() >= max {
            out.push_str(&format!("…(+{} bytes)", s.len() - i));
            break;
        }
        push_char(&mut out, c);
    }
    out
}

/// The raw bytes of a path as a relative URI reference: `/` separators, relative to the
/// current directory when it is under it, every byte outside the unreserved characters
/// percent-encoded (so a name that is not UTF-8 keeps its bytes: `%FF`, not `%EF%BF%BD`).
pub fn uri(p: &Path) -> String {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf));
    let p = relative.as_deref().unwrap_or(p);
    let bytes = raw(p);
    let bytes = bytes.strip_prefix(b"./").unwrap_or(&bytes);
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else if b == b'\\' && cfg!(windows) {
            out.push('/');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `c` must be escaped: it would move the cursor, start a terminal sequence, or
/// reorder the text around it.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_char(out: &mut String, c: char) {
    if !hidden(c) {
        out.push(c);
        return;
    }
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

#[cfg(unix)]
fn raw(p: &Path) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(p.as_os_str().as_bytes())
}

#[cfg(not(unix))]
fn raw(p: &Path) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Owned(p.to_string_lossy().into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_unchanged() {
        assert_eq!(
            path(Path::new("sessions/--a--/x y é.jsonl")),
            "sessions/--a--/x y é.jsonl"
        );
    }

    #[cfg(unix)]
    #[test]
    fn hostile_names_are_escaped_losslessly() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let name = |b: &[u8]| path(Path::new(OsStr::from_bytes(b)));
        assert_eq!(name(b"bad\xffname"), "bad\\xffname");
        assert_eq!(name(b"a\nb"), "a\\nb");
        assert_eq!(name(b"a\x1b[31m"), "a\\x1b[31m");
        // A literal backslash cannot be mistaken for an escape.
        assert_eq!(name(b"bad\\xffname"), "bad\\\\xffname");
        assert_ne!(name(b"bad\\xffname"), name(b"bad\xffname"));
        assert_eq!(name("x\u{202e}y".as_bytes()), "x\\u{202e}y");
    }

    #[test]
    fn text_is_escaped_and_cut_with_a_count() {
        assert_eq!(text("us\u{1b}[31mer", 100), "us\\x1b[31mer");
        assert_eq!(text("a\r\nb", 100), "a\\r\\nb");
        let long = "x".repeat(10_000);
        assert_eq!(text(&long, 10), format!("{}…(+9990 bytes)", "x".repeat(10)));
        assert_eq!(text("short", 10), "short");
        assert_eq!(text("0123456789", 10), "0123456789");
        assert_eq!(text("0123456789a", 10), "0123456789…(+1 bytes)");
        assert_eq!(text("\u{85}", 10), "\\u{85}", "a C1 control");
    }

    #[cfg(unix)]
    #[test]
    fn uris_keep_raw_bytes() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let u = |b: &[u8]| uri(Path::new(OsStr::from_bytes(b)));
        assert_eq!(u(b"bad\xffname.jsonl"), "bad%FFname.jsonl");
        assert_eq!(u(b"a b/c%.jsonl"), "a%20b/c%25.jsonl");
        assert_eq!(u(b"./x.jsonl"), "x.jsonl");
        let inside = std::env::current_dir().unwrap().join("s.jsonl");
        assert_eq!(uri(&inside), "s.jsonl");
    }
}
