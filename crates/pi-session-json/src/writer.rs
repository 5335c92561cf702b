//! [`JsonWriter`]: JSON text written piece by piece, exactly as `JSON.stringify` writes it.

use super::value::JsValue;
use super::write::{write_number, write_string, write_value};

/// Writes JSON text piece by piece (objects, keys, values) exactly as JavaScript's
/// `JSON.stringify` writes the value those pieces describe, without building the value.
///
/// The output is compact (no whitespace), strings are escaped like `JSON.stringify` escapes
/// them (only `"`, `\` and U+0000–U+001F, the latter as `\b`, `\f`, `\n`, `\r`, `\t` or
/// `\u00xx`; everything else is written as is), and numbers are written as ECMAScript's
/// `Number::toString` writes them (`1e+21`, `1.5e-7`, `0.30000000000000004`; infinities and
/// NaN as `null`). Commas are inserted by the writer: a value or key written after a
/// complete value at the same level gets one.
///
/// Keys are written in the order given. `JSON.stringify` writes an object's integer-like
/// keys (`"0"`, `"1"`, …) first, in ascending order, then the others in insertion order,
/// and never a key twice: give keys in that order, or write a [`JsValue`] with
/// [`JsonWriter::value`], which orders its keys.
///
/// The writer does not check that the calls nest (an `end_object` for each `begin_object`,
/// a value after each key): calls that do not nest produce invalid JSON, never a panic.
/// [`JsonWriter::newline`] ends a line of a JSON Lines file: the next value starts a new
/// line, without a comma.
///
/// ```
/// use pi_session_json::JsonWriter;
///
/// let mut w = JsonWriter::new();
/// w.begin_object();
/// w.key("type").string("message");
/// w.key("usage").begin_object();
/// w.key("cost").number(0.1 + 0.2);
/// w.key("tokens").uint(1500);
/// w.end_object();
/// w.key("content").begin_array();
/// w.string("line\n\"quoted\"").bool(true).null().number(1e21);
/// w.end_array();
/// w.end_object();
/// assert_eq!(
///     w.as_str(),
///     r#"{"type":"message","usage":{"cost":0.30000000000000004,"tokens":1500},"content":["line\n\"quoted\"",true,null,1e+21]}"#
/// );
/// ```
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct JsonWriter {
    out: Vec<u8>,
    /// Whether the last thing written is a complete value, so that the next value or key
    /// at the same level needs a comma.
    after_value: bool,
}

impl JsonWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that appends to `buffer` (to reuse its allocation, or to write after what
    /// it holds). What `buffer` holds is taken as the end of a line: the first value gets no
    /// comma.
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::with_buffer(b"prefix: ".to_vec());
    /// w.number(-0.0);
    /// assert_eq!(w.into_bytes(), b"prefix: 0");
    /// ```
    pub fn with_buffer(buffer: Vec<u8>) -> Self {
        JsonWriter {
            out: buffer,
            after_value: false,
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.out
    }

    /// The text written so far. Every method writes UTF-8 (lone surrogates of a
    /// [`JsValue`] are written as `\udXXX` escapes), so this is all of it unless the buffer
    /// given to [`JsonWriter::with_buffer`] was not UTF-8; it is then the empty string.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.out).unwrap_or_default()
    }

    /// The bytes written, giving up the writer.
    pub fn into_bytes(self) -> Vec<u8> {
        self.out
    }

    /// The number of bytes written.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// Forgets everything written, keeping the allocation.
    pub fn clear(&mut self) {
        self.out.clear();
        self.after_value = false;
    }

    /// A comma if a complete value precedes at this level.
    #[inline]
    fn separate(&mut self) {
        if self.after_value {
            self.out.push(b',');
        }
    }

    /// Writes a complete value's bytes (after a comma if needed).
    #[inline]
    fn scalar(&mut self, bytes: &[u8]) -> &mut Self {
        self.separate();
        self.out.extend_from_slice(bytes);
        self.after_value = true;
        self
    }

    /// Starts an object (at the top, after a key, or as an array element).
    pub fn begin_object(&mut self) -> &mut Self {
        self.separate();
        self.out.push(b'{');
        self.after_value = false;
        self
    }

    /// Ends the object started last.
    pub fn end_object(&mut self) -> &mut Self {
        self.out.push(b'}');
        self.after_value = true;
        self
    }

    /// Starts an array (at the top, after a key, or as an array element).
    pub fn begin_array(&mut self) -> &mut Self {
        self.separate();
        self.out.push(b'[');
        self.after_value = false;
        self
    }

    /// Ends the array started last.
    pub fn end_array(&mut self) -> &mut Self {
        self.out.push(b']');
        self.after_value = true;
        self
    }

    /// Writes an object key and its `:`; the member's value comes next.
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.begin_object().key("a\tb").uint(1).key("").begin_array().end_array().end_object();
    /// assert_eq!(w.as_str(), r#"{"a\tb":1,"":[]}"#);
    /// ```
    pub fn key(&mut self, name: &str) -> &mut Self {
        self.separate();
        write_string(&mut self.out, name.as_bytes());
        self.out.push(b':');
        self.after_value = false;
        self
    }

    /// Writes a string value with `JSON.stringify`'s escapes.
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.string("tab\t, nul\0, é, \u{2028}, /");
    /// assert_eq!(w.as_str(), "\"tab\\t, nul\\u0000, é, \u{2028}, /\"");
    /// ```
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.separate();
        write_string(&mut self.out, s.as_bytes());
        self.after_value = true;
        self
    }

    /// Writes a number as ECMAScript's `Number::toString` does; infinities and NaN are
    /// written as `null`, and `-0` as `0`, like `JSON.stringify` does.
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.begin_array();
    /// for n in [2.0, 1e21, 1e-7, 0.000001, -0.0, f64::NAN, 123456789012345680000.0] {
    ///     w.number(n);
    /// }
    /// w.end_array();
    /// assert_eq!(w.as_str(), "[2,1e+21,1e-7,0.000001,0,null,123456789012345680000]");
    /// ```
    pub fn number(&mut self, n: f64) -> &mut Self {
        self.separate();
        write_number(&mut self.out, n);
        self.after_value = true;
        self
    }

    /// Writes an unsigned integer as `JSON.stringify` writes the number it converts to:
    /// its digits up to 2^53, where doubles stop holding every integer, and the nearest
    /// double's ECMAScript form beyond.
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.begin_array().uint(1_763_630_049_626).uint(u64::MAX).end_array();
    /// assert_eq!(w.as_str(), "[1763630049626,18446744073709552000]");
    /// ```
    pub fn uint(&mut self, n: u64) -> &mut Self {
        if n > MAX_EXACT {
            // The conversion rounds to nearest, ties to even, as JavaScript's `Number(n)`.
            return self.number(n as f64);
        }
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
        self.scalar(&digits[i..])
    }

    /// Writes a signed integer, as [`JsonWriter::uint`] does (`-0` cannot occur).
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.begin_array().int(-42).int(0).int(i64::MIN).end_array();
    /// assert_eq!(w.as_str(), "[-42,0,-9223372036854776000]");
    /// ```
    pub fn int(&mut self, n: i64) -> &mut Self {
        if n < 0 {
            let magnitude = n.unsigned_abs();
            if magnitude > MAX_EXACT {
                return self.number(n as f64);
            }
            self.separate();
            self.out.push(b'-');
            // The comma, if any, is written: the digits follow the sign directly.
            self.after_value = false;
        }
        self.uint(n.unsigned_abs())
    }

    /// Writes `true` or `false`.
    pub fn bool(&mut self, b: bool) -> &mut Self {
        self.scalar(if b { b"true" } else { b"false" })
    }

    /// Writes `null`.
    pub fn null(&mut self) -> &mut Self {
        self.scalar(b"null")
    }

    /// Writes a whole value as `JSON.stringify(value)` does (integer-like keys first, lone
    /// surrogates escaped), without recursion however deep it is.
    ///
    /// ```
    /// use pi_session_json::{JsonWriter, parse};
    ///
    /// let value = parse(r#"{"b":1,"2":[1.50, "\ud83d"],"b":3}"#).unwrap();
    /// let mut w = JsonWriter::new();
    /// w.begin_array().value(&value).uint(7).end_array();
    /// assert_eq!(w.as_str(), r#"[{"2":[1.5,"\ud83d"],"b":3},7]"#);
    /// ```
    pub fn value(&mut self, value: &JsValue) -> &mut Self {
        self.separate();
        write_value(&mut self.out, value);
        self.after_value = true;
        self
    }

    /// Ends a line of a JSON Lines file: writes `\n`, and the next value starts the next
    /// line (without a comma).
    ///
    /// ```
    /// use pi_session_json::JsonWriter;
    ///
    /// let mut w = JsonWriter::new();
    /// w.begin_object().key("id").uint(1).end_object().newline();
    /// w.begin_object().key("id").uint(2).end_object().newline();
    /// assert_eq!(w.as_str(), "{\"id\":1}\n{\"id\":2}\n");
    /// ```
    pub fn newline(&mut self) -> &mut Self {
        self.out.push(b'\n');
        self.after_value = false;
        self
    }
}

/// 2^53: every unsigned integer up to it is a double, written with all its digits.
const MAX_EXACT: u64 = 1 << 53;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, to_string};

    /// Writes `text`'s value (a JSON text) through the writer's piece methods, walking the
    /// parsed value: the pieces must give what `JSON.stringify` gives for the whole value.
    fn write_pieces(w: &mut JsonWriter, value: &JsValue) {
        match value {
            JsValue::Null => {
                w.null();
            }
            JsValue::Bool(b) => {
                w.bool(*b);
            }
            JsValue::Number(n) => {
                w.number(*n);
            }
            JsValue::String(s) => match s.as_str() {
                Some(s) => {
                    w.string(s);
                }
                None => {
                    w.value(value);
                }
            },
            JsValue::Array(items) => {
                w.begin_array();
                for item in items.0.iter() {
                    write_pieces(w, item);
                }
                w.end_array();
            }
            JsValue::Object(object) => {
                w.begin_object();
                for (key, value) in object.iter() {
                    w.key(key.as_str().unwrap_or_default());
                    write_pieces(w, value);
                }
                w.end_object();
            }
        }
    }

    #[test]
    fn pieces_write_what_json_stringify_writes() {
        for text in [
            "null",
            "[]",
            "{}",
            "[[],{},[{}],{\"a\":[]}]",
            r#"{"a":"q\"b\\n\n\t\u0001\u007f\u00e9\u2014\u2028/","c":0.30000000000000004}"#,
            r#"{"d":1e21,"e":0,"f":[1,{},false,null,true,-0,1.5e-7,-1e400]}"#,
            r#"{"2":{"1":[["x"]],"z":{}},"a":{"b":{"c":[1,[2,[3,{"d":"\ud83d\ude00"}]]]}}}"#,
            r#"[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1763630049626}]"#,
            r#"[12345678901234567890, 0.1, 100, 1e-6, 1e-7, 5e-324, 1.7976931348623157e308]"#,
        ] {
            let value = parse(text).unwrap();
            let mut w = JsonWriter::new();
            write_pieces(&mut w, &value);
            assert_eq!(w.as_str(), to_string(&value), "{text}");
            let mut whole = JsonWriter::new();
            whole.value(&value);
            assert_eq!(whole.as_bytes(), w.as_bytes(), "{text}");
        }
    }

    /// The session generator's pinned line (the writer began as its private line writer).
    #[test]
    fn generator_line_is_unchanged() {
        let mut l = JsonWriter::new();
        l.begin_object();
        l.key("a").string("q\"b\\n\n\t\u{1}\u{7f}é—\u{2028}/");
        l.key("c").number(0.1 + 0.2);
        l.key("d").number(1e21);
        l.key("e").uint(0);
        l.key("f").begin_array();
        l.uint(1);
        l.begin_object();
        l.end_object();
        l.bool(false);
        l.null();
        l.end_array();
        l.end_object();
        assert_eq!(
            String::from_utf8(l.into_bytes()).unwrap(),
            "{\"a\":\"q\\\"b\\\\n\\n\\t\\u0001\u{7f}é—\u{2028}/\",\"c\":0.30000000000000004,\
             \"d\":1e+21,\"e\":0,\"f\":[1,{},false,null]}"
        );
    }

    #[test]
    fn commas_go_between_values_at_every_level() {
        let mut w = JsonWriter::new();
        w.begin_array();
        w.begin_array().end_array();
        w.begin_object().end_object();
        w.begin_object()
            .key("a")
            .null()
            .key("b")
            .begin_array()
            .uint(1)
            .uint(2);
        w.end_array().end_object();
        w.string("").bool(false).int(-3);
        w.end_array();
        assert_eq!(w.as_str(), r#"[[],{},{"a":null,"b":[1,2]},"",false,-3]"#);
        assert_eq!(w.len(), w.as_bytes().len());
        assert!(!w.is_empty());
        w.clear();
        assert!(w.is_empty());
        w.uint(5);
        assert_eq!(w.as_str(), "5", "clear forgets the value before");
    }

    #[test]
    fn integers_are_written_like_the_numbers_they_convert_to() {
        let mut next = 0x9E37_79B9_7F4A_7C15u64;
        let check = |n: u64| {
            let (mut a, mut b) = (JsonWriter::new(), JsonWriter::new());
            a.uint(n);
            b.number(n as f64);
            assert_eq!(a.as_str(), b.as_str(), "{n}");
            assert_eq!(a.as_str().parse::<f64>().ok(), Some(n as f64), "{n}");
            if n <= MAX_EXACT {
                assert_eq!(a.as_str(), n.to_string());
            }
            if let Ok(signed) = i64::try_from(n) {
                let (mut a, mut b) = (JsonWriter::new(), JsonWriter::new());
                a.int(-signed);
                b.number(-signed as f64);
                assert_eq!(a.as_str(), b.as_str(), "-{n}");
            }
        };
        for n in [
            0,
            1,
            9,
            10,
            MAX_EXACT - 1,
            MAX_EXACT,
            MAX_EXACT + 1,
            MAX_EXACT + 3,
            u64::MAX,
        ] {
            check(n);
        }
        for _ in 0..100_000 {
            next ^= next << 13;
            next ^= next >> 7;
            next ^= next << 17;
            check(next >> (next % 64));
        }
        let mut w = JsonWriter::new();
        w.begin_array()
            .int(i64::MIN)
            .int(i64::MAX)
            .int(-1)
            .end_array();
        assert_eq!(w.as_str(), "[-9223372036854776000,9223372036854776000,-1]");
    }

    #[test]
    fn strings_and_keys_escape_like_json_stringify() {
        let all: String = (0u8..0x80).map(char::from).collect();
        let mut w = JsonWriter::new();
        w.begin_object().key(&all).string(&all).end_object();
        let mut object = crate::JsObject::new();
        object.set(all.as_str(), JsValue::string(all.as_str()));
        assert_eq!(w.as_str(), to_string(&JsValue::Object(object)));
        assert!(w.as_str().starts_with(r#"{"\u0000\u0001"#));
    }

    #[test]
    fn lone_surrogates_in_values_are_escaped() {
        let value = parse(r#"["\udc00x"]"#).unwrap();
        let mut w = JsonWriter::new();
        w.value(&value);
        assert_eq!(w.as_str(), r#"["\udc00x"]"#);
        // The pieces' `string` cannot hold one (`&str`), but a `JsString` value can.
        let JsValue::Array(items) = &value else {
            panic!("an array")
        };
        assert!(matches!(&items.0[0], JsValue::String(s) if s.as_str().is_none()));
    }

    #[test]
    fn lines_and_buffers() {
        let mut w = JsonWriter::with_buffer(Vec::with_capacity(64));
        w.begin_object().key("a").uint(1).end_object().newline();
        w.uint(2).newline();
        w.begin_array().end_array();
        assert_eq!(w.as_str(), "{\"a\":1}\n2\n[]");
        let mut w = JsonWriter::with_buffer(vec![0xFF]);
        w.null();
        assert_eq!(w.as_str(), "", "not UTF-8");
        assert_eq!(w.clone().into_bytes(), b"\xFFnull");
    }

    #[test]
    fn misnested_calls_write_invalid_json_but_do_not_panic() {
        let mut w = JsonWriter::new();
        w.end_object().end_array().key("k").key("k").end_object();
        w.uint(1).newline().newline().end_array();
        assert_eq!(w.as_str(), "}],\"k\":\"k\":},1\n\n]");
    }
}
