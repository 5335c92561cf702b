//! A minimal JSON writer producing exactly what `JSON.stringify` prints for the values the
//! generator builds: compact, keys in call order, strings escaped like JavaScript (only `"`,
//! `\` and U+0000–U+001F; everything else raw), numbers in ECMAScript `Number::toString`
//! form (`ryu-js`). Commas are inserted automatically: a separator is needed unless the
//! previous byte opened an object or array (or is the `:` after a key).

/// One JSON line under construction.
#[derive(Debug, Default)]
pub(crate) struct Line {
    pub(crate) buf: Vec<u8>,
}

impl Line {
    fn sep(&mut self) {
        if !matches!(self.buf.last(), None | Some(b'{' | b'[' | b':')) {
            self.buf.push(b',');
        }
    }

    pub(crate) fn clear(&mut self) {
        self.buf.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// Starts an object value (after a key, as an array element, or at the top).
    pub(crate) fn obj(&mut self) {
        self.sep();
        self.buf.push(b'{');
    }

    pub(crate) fn end_obj(&mut self) {
        self.buf.push(b'}');
    }

    pub(crate) fn arr(&mut self) {
        self.sep();
        self.buf.push(b'[');
    }

    pub(crate) fn end_arr(&mut self) {
        self.buf.push(b']');
    }

    /// Writes `"name":`; the value follows.
    pub(crate) fn key(&mut self, name: &str) {
        self.sep();
        self.raw_str(name);
        self.buf.push(b':');
    }

    /// A string value (after a key or as an array element).
    pub(crate) fn str(&mut self, s: &str) {
        self.sep();
        self.raw_str(s);
    }

    pub(crate) fn uint(&mut self, n: u64) {
        self.sep();
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut n = n;
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&digits[i..]);
    }

    pub(crate) fn num(&mut self, x: f64) {
        self.sep();
        if !x.is_finite() {
            self.buf.extend_from_slice(b"null");
        } else if x == 0.0 {
            self.buf.push(b'0'); // also -0
        } else {
            let mut b = ryu_js::Buffer::new();
            self.buf.extend_from_slice(b.format_finite(x).as_bytes());
        }
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.sep();
        self.buf
            .extend_from_slice(if b { b"true" } else { b"false" });
    }

    pub(crate) fn null(&mut self) {
        self.sep();
        self.buf.extend_from_slice(b"null");
    }

    pub(crate) fn kstr(&mut self, k: &str, v: &str) {
        self.key(k);
        self.str(v);
    }

    pub(crate) fn kuint(&mut self, k: &str, v: u64) {
        self.key(k);
        self.uint(v);
    }

    pub(crate) fn knum(&mut self, k: &str, v: f64) {
        self.key(k);
        self.num(v);
    }

    pub(crate) fn kbool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.bool(v);
    }

    pub(crate) fn kobj(&mut self, k: &str) {
        self.key(k);
        self.obj();
    }

    pub(crate) fn karr(&mut self, k: &str) {
        self.key(k);
        self.arr();
    }

    fn raw_str(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let out = &mut self.buf;
        out.reserve(s.len() + 2);
        out.push(b'"');
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let short: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0x00..=0x1f => b"",
                _ => continue,
            };
            out.extend_from_slice(&bytes[start..i]);
            start = i + 1;
            if short.is_empty() {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            } else {
                out.extend_from_slice(short);
            }
        }
        out.extend_from_slice(&bytes[start..]);
        out.push(b'"');
    }
}

/// `new Date(ms).toISOString()` for years 1970–9999: `YYYY-MM-DDTHH:mm:ss.sssZ`.
pub(crate) fn iso(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_json_stringify() {
        let mut l = Line::default();
        l.obj();
        l.kstr("a", "q\"b\\n\n\t\u{1}\u{7f}é—\u{2028}/");
        l.knum("c", 0.1 + 0.2);
        l.knum("d", 1e21);
        l.kuint("e", 0);
        l.karr("f");
        l.uint(1);
        l.obj();
        l.end_obj();
        l.bool(false);
        l.null();
        l.end_arr();
        l.end_obj();
        assert_eq!(
            String::from_utf8(l.buf).unwrap(),
            "{\"a\":\"q\\\"b\\\\n\\n\\t\\u0001\u{7f}é—\u{2028}/\",\"c\":0.30000000000000004,\
             \"d\":1e+21,\"e\":0,\"f\":[1,{},false,null]}"
        );
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_780_065_672_595), "2026-05-29T14:41:12.595Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }
}
