//! Sizes as people write them (`500MB`, `8GiB`, a number of bytes) and as they read them
//! (`4 GiB (4294967296 bytes)`): the caps and limits of the commands, and `gen --size`.

/// Parses a size: `100MB`, `1GB`, `512KB` (powers of 1000), `64MiB`, `1GiB`, `4KiB` (powers of
/// 1024), or a plain number of bytes (`B` suffix optional). Case-insensitive; a decimal
/// point is allowed (`1.5MB`).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let error = |kind| SizeError {
        input: s.to_owned(),
        kind,
    };
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let unit = unit.trim();
    let multiplier: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(error(SizeErrorKind::UnknownUnit)),
    };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(error(SizeErrorKind::NoNumber));
    }
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| error(SizeErrorKind::BadNumber))?
    };
    let mut bytes = int
        .checked_mul(multiplier)
        .ok_or_else(|| error(SizeErrorKind::TooLarge))?;
    let mut scale = multiplier;
    for digit in frac.bytes() {
        if !digit.is_ascii_digit() {
            return Err(error(SizeErrorKind::BadNumber));
        }
        scale /= 10;
        bytes = bytes
            .checked_add(u64::from(digit - b'0') * scale)
            .ok_or_else(|| error(SizeErrorKind::TooLarge))?;
    }
    Ok(bytes)
}

/// A size [`parse_size`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError {
    /// The text given.
    pub input: String,
    /// What is wrong with it.
    pub kind: SizeErrorKind,
}

/// What is wrong with a size ([`SizeError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeErrorKind {
    /// A unit other than B, KB, MB, GB, KiB, MiB, GiB.
    UnknownUnit,
    /// A unit without a number.
    NoNumber,
    /// Something in the number that is not a digit or one decimal point.
    BadNumber,
    /// More than `u64::MAX` bytes.
    TooLarge,
}

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.input;
        match self.kind {
            SizeErrorKind::UnknownUnit => write!(
                f,
                "unknown size unit in {s:?} (use B, KB, MB, GB, KiB, MiB, GiB)"
            ),
            SizeErrorKind::NoNumber => write!(f, "no number in size {s:?}"),
            SizeErrorKind::BadNumber => write!(f, "bad size {s:?}"),
            SizeErrorKind::TooLarge => write!(f, "size {s:?} is too large"),
        }
    }
}

impl std::error::Error for SizeError {}

/// A cap as people read it: `4 GiB (4294967296 bytes)`.
pub fn describe(bytes: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match units.iter().find(|(_, m)| bytes >= *m) {
        Some((unit, m)) => {
            let whole = bytes / m;
            let tenths = (bytes % m) * 10 / m;
            let number = if tenths == 0 {
                format!("{whole}")
            } else {
                format!("{whole}.{tenths}")
            };
            format!("{number} {unit} ({bytes} bytes)")
        }
        None => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("1gb"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("10 KB"), Ok(10_000));
        let kind = |s: &str| parse_size(s).unwrap_err().kind;
        assert_eq!(kind("10XB"), SizeErrorKind::UnknownUnit);
        assert_eq!(kind("MB"), SizeErrorKind::NoNumber);
        assert_eq!(kind("1.2.3MB"), SizeErrorKind::BadNumber);
        assert_eq!(kind("99999999999999999999"), SizeErrorKind::BadNumber);
        assert_eq!(kind("18446744073709551GB"), SizeErrorKind::TooLarge);
        // The fraction cannot overflow either (it used to panic in debug builds).
        assert_eq!(kind("18446744073709551.999KB"), SizeErrorKind::TooLarge);
        assert_eq!(
            parse_size("10XB").unwrap_err().to_string(),
            "unknown size unit in \"10XB\" (use B, KB, MB, GB, KiB, MiB, GiB)"
        );
        assert_eq!(describe(4 << 30), "4 GiB (4294967296 bytes)");
        assert_eq!(describe(1_500_000), "1.4 MiB (1500000 bytes)");
        assert_eq!(describe(10), "10 bytes");
    }
}
