//! JavaScript date conversion: `new Date(x).getTime()` and `Date.parse(x)` (rule C8).
//!
//! pi turns entry timestamps into milliseconds with these two calls, and V8's rules leak into
//! the output: an ISO string with `Z` or an offset is exact; a date alone is UTC midnight; a
//! date-time without an offset is **local time** (the `TZ` of the process, like Node); anything
//! unparseable is `NaN`, which JSON writes as `null`.
//!
//! Supported string forms: the ECMAScript date-time format (with V8's leniency: any number
//! of fraction digits, `24:00`, days up to 31 rolling over into the next month) and the
//! common forms V8's legacy parser accepts (`2025-01-01 10:00:00`, lowercase `t`/`z`,
//! `+0100` offsets, `2025/1/2`, one-digit months and days). V8's other legacy heuristics
//! (`"Jan 2 2025"`, `"123"`) give `NaN` here; that difference is listed in the docs.

use crate::json::JsValue;

/// Largest magnitude of a valid time value (ECMAScript TimeClip).
const MAX_TIME: f64 = 8.64e15;

/// `new Date(value).getTime()` for a JSON value; `None` stands for `undefined`.
pub fn new_date_time(value: Option<&JsValue>) -> f64 {
    match value {
        None => f64::NAN,
        Some(JsValue::Null) => 0.0,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::Number(n)) => time_clip(*n),
        Some(JsValue::String(s)) => parse_date(&s.to_string_lossy()),
        Some(JsValue::Array(a)) => match a.0.as_slice() {
            [JsValue::String(s)] => parse_date(&s.to_string_lossy()),
            _ => f64::NAN,
        },
        Some(JsValue::Object(_)) => f64::NAN,
    }
}

/// `Date.parse(value)`: the value is converted to a string first.
pub fn date_parse(value: Option<&JsValue>) -> f64 {
    match value {
        Some(JsValue::String(s)) => parse_date(&s.to_string_lossy()),
        Some(JsValue::Array(a)) => match a.0.as_slice() {
            [JsValue::String(s)] => parse_date(&s.to_string_lossy()),
            _ => f64::NAN,
        },
        _ => f64::NAN,
    }
}

/// Converts a time value to the JSON number pi writes (`NaN` → `null`).
pub fn time_to_json(t: f64) -> JsValue {
    if t.is_nan() {
        JsValue::Null
    } else {
        JsValue::Number(t)
    }
}

/// ECMAScript TimeClip: `NaN` outside ±8.64e15 ms, otherwise truncated toward zero.
pub fn time_clip(t: f64) -> f64 {
    if !t.is_finite() || t.abs() > MAX_TIME {
        f64::NAN
    } else {
        t.trunc() + 0.0
    }
}

/// `Date.prototype.toISOString()` of a valid time value: `YYYY-MM-DDTHH:mm:ss.sssZ`, with a
/// signed six-digit year outside 0000–9999.
pub fn to_iso_string(t: f64) -> String {
    let ms = t as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let mut out = String::with_capacity(27);
    if (0..=9999).contains(&year) {
        push_digits(&mut out, year, 4);
    } else {
        out.push(if year < 0 { '-' } else { '+' });
        push_digits(&mut out, year.abs(), 6);
    }
    for (separator, value, width) in [
        ('-', month, 2),
        ('-', day, 2),
        ('T', in_day / 3_600_000, 2),
        (':', in_day / 60_000 % 60, 2),
        (':', in_day / 1000 % 60, 2),
        ('.', in_day % 1000, 3),
    ] {
        out.push(separator);
        push_digits(&mut out, value, width);
    }
    out.push('Z');
    out
}

/// `value` (not negative) in decimal, zero-padded to `width` digits (more when it needs them).
fn push_digits(out: &mut String, value: i64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut n = value.unsigned_abs();
    let mut len = 0;
    while n > 0 || len == 0 {
        digits[19 - len] = b'0' + (n % 10) as u8;
        n /= 10;
        len += 1;
    }
    for _ in len..width {
        out.push('0');
    }
    out.extend(digits[20 - len..].iter().map(|&d| char::from(d)));
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Parses a date string as V8 does for the supported forms; `NaN` otherwise.
pub fn parse_date(s: &str) -> f64 {
    match parse_fields(s) {
        Some(fields) => fields.to_time(),
        None => f64::NAN,
    }
}

/// Whether V8 reads `s` as a date-time in the machine's local time zone (a date-time without
/// `Z` or an offset), so that its value depends on `TZ`.
pub fn is_local_time(s: &str) -> bool {
    parse_fields(s).is_some_and(|f| f.zone == Zone::Local)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Zone {
    /// Milliseconds east of UTC.
    Offset(i64),
    /// The process's local time zone.
    Local,
}

#[derive(Debug)]
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    millis: i64,
    zone: Zone,
}

impl Fields {
    fn to_time(&self) -> f64 {
        let days = days_from_civil(self.year, self.month, 1) + self.day - 1;
        let ms = ((days * 24 + self.hour) * 60 + self.minute) * 60_000
            + self.second * 1000
            + self.millis;
        let utc = match self.zone {
            Zone::Offset(offset) => ms - offset,
            Zone::Local => ms - local_offset_ms(ms),
        };
        time_clip(utc as f64)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1–12).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Offset of the local time zone at the local wall-clock time `local_ms`, resolving gaps and
/// folds as ECMAScript does (the offset before the transition).
fn local_offset_ms(local_ms: i64) -> i64 {
    use jiff::{civil, tz::TimeZone};
    let tz = TimeZone::system();
    let secs = local_ms.div_euclid(1000);
    let Ok(ts) = jiff::Timestamp::from_second(secs) else {
        return 0;
    };
    let civil: civil::DateTime = ts.to_zoned(TimeZone::UTC).datetime();
    match tz.to_ambiguous_timestamp(civil).compatible() {
        Ok(resolved) => (secs - resolved.as_second()) * 1000,
        Err(_) => 0,
    }
}

/// A cursor over ASCII text.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Reads between `min` and `max` digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<i64> {
        let start = self.i;
        let mut n: i64 = 0;
        while self.i - start < max {
            match self.peek() {
                Some(d @ b'0'..=b'9') => {
                    n = n * 10 + i64::from(d - b'0');
                    self.i += 1;
                }
                _ => break,
            }
        }
        (self.i - start >= min).then_some(n)
    }

    /// One or more fraction digits after a `.`, truncated to milliseconds.
    fn fraction_millis(&mut self) -> Option<i64> {
        let start = self.i;
        let mut millis = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            if self.i - start < 3 {
                millis = millis * 10 + i64::from(d - b'0');
            }
            self.i += 1;
        }
        let n = self.i - start;
        if n == 0 {
            return None;
        }
        Some(millis * 10_i64.pow(3u32.saturating_sub(n as u32)))
    }

    fn at_end(&self) -> bool {
        self.i == self.s.len()
    }
}

fn parse_fields(s: &str) -> Option<Fields> {
    parse_iso(s).or_else(|| parse_legacy(s))
}

/// The ECMAScript date-time string format, with V8's leniencies.
fn parse_iso(s: &str) -> Option<Fields> {
    let mut c = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    let year = match c.peek()? {
        b'+' | b'-' => {
            let negative = c.peek() == Some(b'-');
            c.i += 1;
            let y = c.digits(6, 6)?;
            if negative && y == 0 {
                return None;
            }
            if negative { -y } else { y }
        }
        _ => c.digits(4, 4)?,
    };
    let (mut month, mut day) = (1, 1);
    if c.eat(b'-') {
        month = c.digits(2, 2)?;
        if c.eat(b'-') {
            day = c.digits(2, 2)?;
        }
    }
    let mut fields = Fields {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        millis: 0,
        zone: Zone::Offset(0),
    };
    if c.eat(b'T') {
        parse_time(&mut c, &mut fields)?;
        fields.zone = if c.eat(b'Z') {
            Zone::Offset(0)
        } else if let Some(sign) = c.peek().filter(|b| matches!(b, b'+' | b'-')) {
            c.i += 1;
            let h = c.digits(2, 2)?;
            if !c.eat(b':') {
                return None;
            }
            let m = c.digits(2, 2)?;
            offset(sign, h, m)?
        } else {
            Zone::Local
        };
    }
    (c.at_end() && valid(&fields)).then_some(fields)
}

fn offset(sign: u8, h: i64, m: i64) -> Option<Zone> {
    if h > 23 || m > 59 {
        return None;
    }
    let ms = (h * 60 + m) * 60_000;
    Some(Zone::Offset(if sign == b'-' { -ms } else { ms }))
}

/// `HH:mm[:ss[.fff…]]`.
fn parse_time(c: &mut Cursor<'_>, f: &mut Fields) -> Option<()> {
    f.hour = c.digits(2, 2)?;
    if !c.eat(b':') {
        return None;
    }
    f.minute = c.digits(2, 2)?;
    if c.eat(b':') {
        f.second = c.digits(2, 2)?;
        if c.eat(b'.') {
            f.millis = c.fraction_millis()?;
        }
    }
    Some(())
}

fn valid(f: &Fields) -> bool {
    let midnight_24 = f.hour == 24 && f.minute == 0 && f.second == 0 && f.millis == 0;
    (1..=12).contains(&f.month)
        && (1..=31).contains(&f.day)
        && (f.hour < 24 || midnight_24)
        && f.minute < 60
        && f.second < 60
}

/// The forms of V8's legacy parser seen in hand-written session files:
/// `YYYY-M-D` or `YYYY/M/D`, then optionally ` `/`T`/`t` and `H:mm[:ss[.fff]]`, then
/// optionally `Z`, `z`, `UTC`, `GMT` or `±HHmm` / `±HH:mm`. Without a zone it is local time.
fn parse_legacy(s: &str) -> Option<Fields> {
    let mut c = Cursor {
        s: s.as_bytes(),
        i: 0,
    };
    let year = c.digits(4, 4)?;
    let sep = c.peek().filter(|b| matches!(b, b'-' | b'/'))?;
    c.i += 1;
    let month = c.digits(1, 2)?;
    if !c.eat(sep) {
        return None;
    }
    let day = c.digits(1, 2)?;
    let mut f = Fields {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        millis: 0,
        zone: Zone::Local,
    };
    if matches!(c.peek(), Some(b' ' | b'T' | b't')) {
        c.i += 1;
        f.hour = c.digits(1, 2)?;
        if !c.eat(b':') {
            return None;
        }
        f.minute = c.digits(2, 2)?;
        if c.eat(b':') {
            f.second = c.digits(2, 2)?;
            if c.eat(b'.') {
                f.millis = c.fraction_millis()?;
            }
        }
        while c.eat(b' ') {}
        let rest = &s[c.i..];
        if let Some(zone) = ["Z", "z", "UTC", "GMT"].iter().find(|z| rest == **z) {
            c.i += zone.len();
            f.zone = Zone::Offset(0);
        } else if let Some(sign) = c.peek().filter(|b| matches!(b, b'+' | b'-')) {
            c.i += 1;
            let h = c.digits(2, 2)?;
            c.eat(b':');
            let m = c.digits(2, 2)?;
            f.zone = offset(sign, h, m)?;
        }
    }
    (c.at_end() && valid(&f) && f.hour < 24).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> f64 {
        parse_date(s)
    }

    #[test]
    fn c8_iso_with_zone_is_exact() {
        assert_eq!(utc("2025-01-01T00:00:00.000Z"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01-01T00:00:00.123456Z"), 1_735_689_600_123.0);
        assert_eq!(utc("2025-01-01T00:00:00.1Z"), 1_735_689_600_100.0);
        assert_eq!(utc("2025-01-01T00:00Z"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01-01T01:00:00+01:00"), 1_735_689_600_000.0);
        assert_eq!(utc("+002025-01-01T00:00:00Z"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01-01T24:00:00Z"), 1_735_776_000_000.0);
        assert_eq!(utc("-271821-04-20T00:00:00Z"), -8.64e15);
    }

    #[test]
    fn c8_date_only_is_utc_midnight_and_days_roll_over() {
        assert_eq!(utc("2025"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-02-30"), 1_740_873_600_000.0);
    }

    #[test]
    fn c8_invalid_strings_are_nan() {
        for s in [
            "",
            "2025-01-01T00Z",
            "-000000-01-01T00:00:00Z",
            "2025-01-01T00:00:00+01",
            " 2025-01-01T00:00:00Z",
            "2025-01-01T00:00:00Z ",
            "2025-01-01T00:00:60Z",
            "2025-13-01",
            "2025-01-32",
            "2025-01-01T24:00:01Z",
            "2025-01-01T00:00:00.Z",
            "1e3",
            "+275760-09-13T00:00:00.001Z",
        ] {
            assert!(utc(s).is_nan(), "{s:?}");
        }
    }

    #[test]
    fn c8_legacy_forms_with_zone() {
        assert_eq!(utc("2025-01-01 00:00:00Z"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01-01t00:00:00z"), 1_735_689_600_000.0);
        assert_eq!(utc("2025-01-01T00:00:00+0100"), 1_735_686_000_000.0);
    }

    #[test]
    fn iso_strings_round_trip() {
        for s in [
            "2025-01-01T00:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "2024-02-29T12:34:56.789Z",
            "0000-01-01T00:00:00.000Z",
        ] {
            assert_eq!(to_iso_string(parse_date(s)), s);
        }
        assert_eq!(to_iso_string(-8.64e15), "-271821-04-20T00:00:00.000Z");
        assert_eq!(to_iso_string(8.64e15), "+275760-09-13T00:00:00.000Z");
        // As Node 20 prints them.
        assert_eq!(to_iso_string(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            to_iso_string(-62_198_755_200_000.0),
            "-000001-01-01T00:00:00.000Z"
        );
        assert_eq!(
            to_iso_string(253_402_300_800_000.0),
            "+010000-01-01T00:00:00.000Z"
        );
        assert_eq!(
            to_iso_string(1_775_030_401_234.0),
            "2026-04-01T08:00:01.234Z"
        );
    }

    #[test]
    fn c8_non_strings() {
        assert_eq!(new_date_time(Some(&JsValue::Null)), 0.0);
        assert_eq!(new_date_time(Some(&JsValue::Bool(true))), 1.0);
        assert_eq!(new_date_time(Some(&JsValue::Number(-5.7))), -5.0);
        assert!(new_date_time(Some(&JsValue::Number(8.64e15 + 1.0))).is_nan());
        assert!(new_date_time(None).is_nan());
        assert!(date_parse(Some(&JsValue::Null)).is_nan());
    }
}
