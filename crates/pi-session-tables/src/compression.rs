//! How the part files' column chunks are compressed (`export --compression zstd|lz4|snappy|none`
//! and `--compression-level`): zstd at level 1 unless told otherwise, a level checked against
//! what the codec takes before anything is read or written ([`Compression::new`]).

use std::fmt;
use std::str::FromStr;

/// A Parquet compression codec the export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Codec {
    /// Zstandard (Parquet's `ZSTD`): the smallest files of the four; levels
    /// [`Codec::ZSTD_LEVELS`].
    #[default]
    Zstd,
    /// LZ4 without the Hadoop framing (Parquet's `LZ4_RAW`, what current readers write as
    /// "lz4"); no levels.
    Lz4,
    /// Snappy (Parquet's `SNAPPY`); no levels.
    Snappy,
    /// No compression (Parquet's `UNCOMPRESSED`).
    None,
}

impl Codec {
    /// Every codec, in the order the documentation lists them.
    pub const ALL: [Codec; 4] = [Codec::Zstd, Codec::Lz4, Codec::Snappy, Codec::None];

    /// The levels zstd takes: its fast levels −7 to −1 and its usual 1 (fastest) to 22
    /// (smallest). 0, zstd's "default" (3), is not taken: say 3.
    pub const ZSTD_LEVELS: (i32, i32) = (-7, 22);

    /// The level zstd uses when none is given: 1 (the export is CPU-bound; higher levels
    /// make the files little smaller for much more time, `docs/PERFORMANCE.md`).
    pub const ZSTD_DEFAULT_LEVEL: i32 = 1;

    /// The codec's name, as `--compression` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
            Codec::Snappy => "snappy",
            Codec::None => "none",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Codec {
    type Err = CompressionError;

    /// `zstd`, `lz4`, `snappy` or `none` (`uncompressed` too), in any case.
    fn from_str(s: &str) -> Result<Codec, CompressionError> {
        let lower = s.to_ascii_lowercase();
        Codec::ALL
            .into_iter()
            .find(|c| c.name() == lower)
            .or((lower == "uncompressed").then_some(Codec::None))
            .ok_or_else(|| CompressionError::UnknownCodec(s.to_owned()))
    }
}

/// A codec and its level: what every column chunk of the part files is compressed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compression {
    codec: Codec,
    /// zstd's level; `None` for the codecs without levels.
    level: Option<i32>,
}

impl Default for Compression {
    /// zstd at level 1 ([`Codec::ZSTD_DEFAULT_LEVEL`]).
    fn default() -> Compression {
        Compression {
            codec: Codec::Zstd,
            level: Some(Codec::ZSTD_DEFAULT_LEVEL),
        }
    }
}

/// Why a compression is refused; each says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompressionError {
    /// Not a codec the export writes.
    UnknownCodec(String),
    /// A level for a codec that has none.
    NoLevels(Codec),
    /// A level out of the codec's range.
    LevelOutOfRange(Codec, i32),
}

impl fmt::Display for CompressionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (low, high) = Codec::ZSTD_LEVELS;
        match self {
            CompressionError::UnknownCodec(name) => write!(
                f,
                "unknown compression {name:?}: choose zstd (the default), lz4, snappy or none"
            ),
            CompressionError::NoLevels(codec) => write!(
                f,
                "{codec} has no compression levels: leave the level out, or choose zstd, whose levels are {low} to {high}"
            ),
            CompressionError::LevelOutOfRange(codec, level) if level == &0 => write!(
                f,
                "{codec} level 0 is not taken: give a level from {low} to -1 or from 1 to {high} (3 is zstd's usual default, {} the export's)",
                Codec::ZSTD_DEFAULT_LEVEL
            ),
            CompressionError::LevelOutOfRange(codec, level) => write!(
                f,
                "{codec} level {level} is out of range: give a level from {low} to -1 (faster, larger) or from 1 to {high} (slower, smaller)"
            ),
        }
    }
}

impl std::error::Error for CompressionError {}

impl Compression {
    /// `codec` at `level` (`None`: zstd's [`Codec::ZSTD_DEFAULT_LEVEL`]; the other codecs
    /// take no level).
    pub fn new(codec: Codec, level: Option<i32>) -> Result<Compression, CompressionError> {
        let level = match (codec, level) {
            (Codec::Zstd, None) => Some(Codec::ZSTD_DEFAULT_LEVEL),
            (Codec::Zstd, Some(level)) => {
                let (low, high) = Codec::ZSTD_LEVELS;
                if level == 0 || !(low..=high).contains(&level) {
                    return Err(CompressionError::LevelOutOfRange(codec, level));
                }
                Some(level)
            }
            (_, Some(_)) => return Err(CompressionError::NoLevels(codec)),
            (_, None) => None,
        };
        Ok(Compression { codec, level })
    }

    /// The codec.
    pub fn codec(self) -> Codec {
        self.codec
    }

    /// The level (zstd's), `None` for the codecs without levels.
    pub fn level(self) -> Option<i32> {
        self.level
    }

    /// The parquet crate's compression.
    pub(crate) fn parquet(self) -> parquet::basic::Compression {
        use parquet::basic::{Compression as P, ZstdLevel};
        match self.codec {
            Codec::Zstd => {
                let level = self.level.unwrap_or(Codec::ZSTD_DEFAULT_LEVEL);
                // In range: checked by `new`.
                P::ZSTD(ZstdLevel::try_new(level).unwrap_or_default())
            }
            Codec::Lz4 => P::LZ4_RAW,
            Codec::Snappy => P::SNAPPY,
            Codec::None => P::UNCOMPRESSED,
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.level {
            Some(level) => write!(f, "{} level {level}", self.codec),
            None => write!(f, "{}", self.codec),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_checked_for_the_codec() {
        assert_eq!(
            Compression::default(),
            Compression::new(Codec::Zstd, None).unwrap()
        );
        assert_eq!(
            Compression::new(Codec::Zstd, Some(22)).unwrap().level(),
            Some(22)
        );
        assert_eq!(
            Compression::new(Codec::Zstd, Some(-7)).unwrap().level(),
            Some(-7)
        );
        for bad in [0, 23, -8, i32::MIN, i32::MAX] {
            let e = Compression::new(Codec::Zstd, Some(bad)).unwrap_err();
            assert_eq!(e, CompressionError::LevelOutOfRange(Codec::Zstd, bad));
            assert!(e.to_string().contains("give a level from -7"), "{e}");
        }
        for codec in [Codec::Lz4, Codec::Snappy, Codec::None] {
            assert_eq!(Compression::new(codec, None).unwrap().level(), None);
            let e = Compression::new(codec, Some(1)).unwrap_err();
            assert!(e.to_string().contains("has no compression levels"), "{e}");
        }
    }

    #[test]
    fn codecs_by_name() {
        for codec in Codec::ALL {
            assert_eq!(codec.name().parse::<Codec>(), Ok(codec));
        }
        assert_eq!("ZSTD".parse::<Codec>(), Ok(Codec::Zstd));
        assert_eq!("uncompressed".parse::<Codec>(), Ok(Codec::None));
        let e = "gzip".parse::<Codec>().unwrap_err();
        assert!(e.to_string().contains("choose zstd"), "{e}");
    }

    #[test]
    fn parquet_codecs() {
        use parquet::basic::Compression as P;
        let of = |c, l| Compression::new(c, l).unwrap().parquet();
        assert!(matches!(of(Codec::Zstd, Some(5)), P::ZSTD(l) if l.compression_level() == 5));
        assert_eq!(of(Codec::Lz4, None), P::LZ4_RAW);
        assert_eq!(of(Codec::Snappy, None), P::SNAPPY);
        assert_eq!(of(Codec::None, None), P::UNCOMPRESSED);
    }
}
