//! Which program's format a session file is in: pi's, or oh-my-pi's (`omp`, the most used
//! fork of pi), and how to tell them apart from the file alone.
//!
//! omp's files share pi's JSONL, header and v1→v3 history, but a file omp writes starts with
//! a fixed-width title slot that is not an entry ([`crate::omp::slot`]), its header has fields
//! pi never writes, and it has entry types pi does not know. [`Dialect::detect`] looks for
//! those signs, cheapest first; `docs/dialects.md` lists every difference.

use crate::omp::slot::TitleSlot;
use std::fmt;

/// The format a session file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// pi's own format (`@earendil-works/pi-coding-agent`, and `@mariozechner`'s before it).
    #[default]
    Pi,
    /// oh-my-pi's format (`@oh-my-pi/pi-coding-agent` 18.3.4).
    Omp,
}

/// What [`Dialect::detect`] found, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// The dialect.
    pub dialect: Dialect,
    /// The sign it was recognised by, for messages ("line 1 is omp's title slot"); `None`
    /// when nothing set the file apart and the default, pi, was taken.
    pub sign: Option<String>,
}

/// The longest header line [`Dialect::detect`] parses.
const HEADER_MAX: usize = 1 << 20;

/// Header members only omp writes.
pub const OMP_HEADER_FIELDS: [&str; 5] = [
    "title",
    "titleSource",
    "additionalDirectories",
    "previousSessionFiles",
    "providerPromptCacheKey",
];

/// The header members that tell an omp file: [`OMP_HEADER_FIELDS`] but `title`, which pi files
/// are known to carry too (other tools name sessions with it; the corpus case
/// `header/unknown-header-fields-kept` is one) and which omp 18.3 keeps in its title slot.
pub const OMP_HEADER_SIGNS: [&str; 4] = [
    "titleSource",
    "additionalDirectories",
    "previousSessionFiles",
    "providerPromptCacheKey",
];

/// Entry types only omp writes.
pub const OMP_ENTRY_TYPES: [&str; 8] = [
    "model_usage",
    "service_tier_change",
    "title_change",
    "ttsr_injection",
    "session_init",
    "mode_change",
    "credential_pin",
    "reset_boundary",
];

impl Dialect {
    /// Both dialects.
    pub const ALL: [Dialect; 2] = [Dialect::Pi, Dialect::Omp];

    /// The name the command line and the outputs use: `"pi"` or `"omp"`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Pi => "pi",
            Dialect::Omp => "omp",
        }
    }

    /// The program's name for messages: `"pi"` or `"oh-my-pi (omp)"`.
    pub fn program(self) -> &'static str {
        match self {
            Dialect::Pi => "pi",
            Dialect::Omp => "oh-my-pi (omp)",
        }
    }

    /// The dialect of a session file from its first lines: omp when its first line is
    /// omp's title slot or its header carries a member only omp writes; pi otherwise. Only
    /// the lines up to the header are read, so a large mapped file is not brought into
    /// memory; a loader asked to detect the dialect ([`crate::session::Loader::detect_dialect`])
    /// also takes a file with an entry type only omp writes for omp's
    /// ([`omp_entry_type`], on the loaded skeleton).
    pub fn detect(bytes: &[u8]) -> Detection {
        if TitleSlot::of_file(bytes).is_some() {
            return Detection::omp("line 1 is omp's title slot");
        }
        // Only the start of the file (after a BOM, which omp's reading drops): a header
        // longer than this is not looked into.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let start = &bytes[..bytes.len().min(HEADER_MAX)];
        let header = start
            .split(|&b| b == b'\n')
            .find(|line| !line.trim_ascii().is_empty())
            .filter(|line| line.len() < HEADER_MAX);
        if let Some(field) = header.and_then(omp_header_field) {
            return Detection::omp(format!("the header has omp's `{field}` member"));
        }
        Detection {
            dialect: Dialect::Pi,
            sign: None,
        }
    }

    /// The dialect `given` (a command's `--dialect`), or else the one `bytes` are in
    /// ([`Dialect::detect`]).
    pub fn given_or_detected(given: Option<Dialect>, bytes: &[u8]) -> Dialect {
        given.unwrap_or_else(|| Dialect::detect(bytes).dialect)
    }

    /// A dialect as the bindings' `dialect` option names it: `"pi"` or `"omp"`, or `"auto"`
    /// for the file's own (`None`, which [`Dialect::given_or_detected`] then tells).
    pub fn choice(name: &str) -> Result<Option<Dialect>, UnknownDialect> {
        match name {
            "auto" => Ok(None),
            name => name.parse().map(Some),
        }
    }

    /// The dialect a session's store implies from its path: a path through omp's store
    /// (`.omp/` or `$XDG_DATA_HOME/omp/sessions`) is omp's; `None` otherwise.
    pub fn of_store_path(path: &std::path::Path) -> Option<Dialect> {
        let names: Vec<&std::ffi::OsStr> = path.iter().collect();
        let omp = names.iter().any(|n| *n == ".omp")
            || names
                .windows(2)
                .any(|w| w[0] == "omp" && (w[1] == "sessions" || w[1] == "agent"));
        omp.then_some(Dialect::Omp)
    }
}

impl Detection {
    /// An omp file, recognised by `sign`.
    pub fn omp(sign: impl Into<String>) -> Detection {
        Detection {
            dialect: Dialect::Omp,
            sign: Some(sign.into()),
        }
    }
}

/// The first omp-only member of a header line, if it parses as a `session` header.
fn omp_header_field(line: &[u8]) -> Option<&'static str> {
    let text = std::str::from_utf8(line).ok()?;
    let value = crate::json::parse(text.trim()).ok()?;
    if value.get("type").and_then(|t| t.as_str()) != Some("session") {
        return None;
    }
    OMP_HEADER_SIGNS
        .into_iter()
        .find(|field| value.get(field).is_some())
}

/// The first record whose entry type only omp writes: its line and type. Works on a loaded
/// session's skeleton (nothing is parsed or read again).
pub fn omp_entry_type<'s>(
    records: impl IntoIterator<Item = &'s crate::session::Record<'s>>,
) -> Option<(usize, &'static str)> {
    records.into_iter().find_map(|record| {
        let type_ = record.entry_type()?;
        let omp = OMP_ENTRY_TYPES.into_iter().find(|t| *t == type_)?;
        Some((record.line, omp))
    })
}

impl fmt::Display for Dialect {
    /// The name (`pi`, `omp`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dialect name that is neither `pi` nor `omp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown dialect `{}` (expected `pi` or `omp`)", self.0)
    }
}

impl std::error::Error for UnknownDialect {}

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    /// `"pi"` or `"omp"`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn slot() -> String {
        let line =
            r#"{"type":"title","v":1,"title":"Fix","updatedAt":"2026-01-01T00:00:00.000Z","pad":""#;
        format!("{line}{}\"}}", " ".repeat(255 - line.len() - 2))
    }

    #[test]
    fn choice_takes_auto_for_the_files_own() {
        assert_eq!(Dialect::choice("auto"), Ok(None));
        assert_eq!(Dialect::choice("omp"), Ok(Some(Dialect::Omp)));
        assert_eq!(Dialect::choice("pi"), Ok(Some(Dialect::Pi)));
        assert_eq!(
            Dialect::choice("Omp"),
            Err(UnknownDialect("Omp".to_owned()))
        );
        let omp_slot = format!("{}\n{HEADER}\n", slot());
        assert_eq!(
            Dialect::given_or_detected(None, omp_slot.as_bytes()),
            Dialect::Omp
        );
        assert_eq!(
            Dialect::given_or_detected(Some(Dialect::Pi), omp_slot.as_bytes()),
            Dialect::Pi
        );
    }

    #[test]
    fn a_title_slot_an_omp_header_member_or_an_omp_entry_type_make_a_file_omp() {
        let file = format!("{}\n{HEADER}\n", slot());
        assert_eq!(slot().len() + 1, 256);
        let d = Dialect::detect(file.as_bytes());
        assert_eq!(d.dialect, Dialect::Omp);
        assert_eq!(d.sign.as_deref(), Some("line 1 is omp's title slot"));

        let header = HEADER.replace(r#""cwd":"/""#, r#""cwd":"/","titleSource":"auto""#);
        let d = Dialect::detect(format!("\n{header}\n").as_bytes());
        assert_eq!(
            d.sign.as_deref(),
            Some("the header has omp's `titleSource` member")
        );
        // A BOM before either (an editor's) is dropped, as omp's reading drops it.
        let bom = |text: &str| format!("\u{feff}{text}");
        assert_eq!(Dialect::detect(bom(&file).as_bytes()).dialect, Dialect::Omp);
        assert_eq!(
            Dialect::detect(bom(&format!("{header}\n")).as_bytes()).dialect,
            Dialect::Omp
        );
        // A `title` alone is no sign: pi files carry it too.
        let header = HEADER.replace(r#""cwd":"/""#, r#""cwd":"/","title":"x""#);
        assert_eq!(Dialect::detect(header.as_bytes()).dialect, Dialect::Pi);
    }

    #[test]
    fn a_loader_that_detects_takes_an_omp_entry_type_for_omp() {
        let entry = r#"{"type":"reset_boundary","id":"a","parentId":null,"timestamp":"t"}"#;
        let file = format!("{HEADER}\n{entry}\n");
        let load = |detect: bool| {
            let loader = crate::Session::loader(crate::PiVersion::V1_5);
            let loader = if detect {
                loader.detect_dialect()
            } else {
                loader
            };
            loader.load(file.as_bytes()).expect("loads").dialect
        };
        assert_eq!(load(true), Dialect::Omp);
        assert_eq!(load(false), Dialect::Pi, "pi's unless asked to detect");
        let session = crate::Session::from_bytes(file.as_bytes(), crate::PiVersion::V1_5).unwrap();
        assert_eq!(
            omp_entry_type(session.entry_records()),
            Some((2, "reset_boundary"))
        );
    }

    #[test]
    fn a_pi_file_and_omp_words_inside_strings_stay_pi() {
        let quoted = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"{\"type\":\"mode_change\"}","timestamp":1}}"#;
        let raw = "{\"type\":\"custom\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"t\",\"customType\":\"x\",\"data\":{\"type\":\"mode_change\"}}";
        for file in [
            format!("{HEADER}\n"),
            format!("{HEADER}\n{quoted}\n{raw}\n"),
            String::new(),
        ] {
            let d = Dialect::detect(file.as_bytes());
            assert_eq!((d.dialect, d.sign), (Dialect::Pi, None), "{file}");
        }
    }

    #[test]
    fn omp_stores_are_recognised_by_path() {
        use std::path::Path;
        for omp in [
            "/home/u/.omp/agent/sessions/-work/a.jsonl",
            "/home/u/.local/share/omp/sessions/-work/a.jsonl",
        ] {
            assert_eq!(Dialect::of_store_path(Path::new(omp)), Some(Dialect::Omp));
        }
        assert_eq!(
            Dialect::of_store_path(Path::new("/home/u/.pi/agent/sessions/--w--/a.jsonl")),
            None
        );
    }

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.name().parse::<Dialect>(), Ok(d));
            assert_eq!(d.to_string(), d.name());
        }
        assert!("oh-my-pi".parse::<Dialect>().is_err());
    }
}
