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
        pi_session_format::json::write_number(&mut self.buf, x);
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
        pi_session_format::json::write_string(&mut self.buf, s.as_bytes());
    }
}

/// `new Date(ms).toISOString()` for years 1970–9999: `YYYY-MM-DDTHH:mm:ss.sssZ`.
pub(crate) fn iso(ms: i64) -> String {
    pi_session_format::date::to_iso_string(ms as f64)
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
