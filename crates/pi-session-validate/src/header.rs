//! The header: which value pi takes for it, whether pi accepts it, and its version.
//!
//! pi takes the first JSON value of the file (pi 0.87.1: the first truthy one) and requires
//! an object with `type: "session"` and a string `id`; anything else makes pi overwrite the
//! file with a new session. The version decides the migrations and the line schema.
//!
//! oh-my-pi's files: read as oh-my-pi's, its title slot on line 1 is neither the header nor
//! an entry ([`Header::slot`]); read as pi's, a file recognisably oh-my-pi's gets one
//! diagnostic that says so ([`omp_file`]).

use super::Options;
use super::catalogue::{Code, PiEffect};
use super::entry::{Facts, LineKind};
use super::locate::locate;
use super::parsed::{self, location};
use super::report::Diagnostic;
use super::schema::LineSchema;
use pi_session_format::Dialect;
use pi_session_format::dialect::{OMP_ENTRY_TYPES, OMP_HEADER_SIGNS};
use pi_session_format::json::JsValue;
use pi_session_format::omp::TitleSlot;
use pi_session_format::omp::slot::SLOT_BYTES;
use pi_session_format::read;
use pi_session_format::session::{self, Key};
use serde_json::Value;

/// The header candidate: the first value pi parses.
#[derive(Debug, Default)]
pub(crate) struct Header {
    /// The first parsed value and where it is.
    pub first: Option<First>,
    /// The line of oh-my-pi's title slot (line 1), read as oh-my-pi's: not an entry, and
    /// not the header.
    pub slot: Option<usize>,
}

/// The first parsed value of the file.
#[derive(Debug)]
pub(crate) struct First {
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the line.
    pub offset: usize,
    /// Length of the line in bytes.
    pub len: usize,
    /// The value.
    pub value: Value,
}

impl Header {
    /// The first value when it is a header pi accepts.
    pub(crate) fn valid(&self) -> Option<&First> {
        self.first
            .as_ref()
            .filter(|f| invalid_reason(&f.value).is_none())
    }

    /// The line number of the accepted header.
    pub(crate) fn line(&self) -> Option<usize> {
        self.valid().map(|f| f.line)
    }

    /// `version` as pi's comparisons read it; `None` without an accepted header.
    pub(crate) fn version(&self) -> Option<f64> {
        let header = self.valid()?;
        let version = header.value.get("version").map(to_js);
        Some(session::version_number(version.as_ref()))
    }

    /// The schema of the file's lines: by version, version 3 when in doubt.
    pub(crate) fn schema(&self) -> LineSchema {
        match self.version() {
            Some(v) if v < 2.0 => LineSchema::V1,
            Some(v) if v < 3.0 => LineSchema::V2,
            _ => LineSchema::V3,
        }
    }

    /// The accepted header's member `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.valid()?.value.get(key)
    }
}

/// Finds the header candidate the way pi's loader does.
pub(crate) fn find(bytes: &[u8], options: &Options<'_>) -> Header {
    let current = options.pi.reads_like_0_87();
    let edges = read::Edges::of(options.pi, options.dialect);
    // oh-my-pi peels its title slot off before it parses the file.
    let slot =
        (options.dialect == Dialect::Omp && TitleSlot::of_file(bytes).is_some()).then_some(1);
    for line in read::lines_with(bytes, edges) {
        if slot == Some(line.number) {
            continue;
        }
        let Ok(parsed) = parsed::parse(&line.text) else {
            continue;
        };
        // pi 0.87.1 keeps only truthy values.
        if current && !parsed::truthy(&parsed.value) {
            continue;
        }
        return Header {
            first: Some(First {
                line: line.number,
                offset: line.offset,
                len: line.len,
                value: parsed.value,
            }),
            slot,
        };
    }
    Header { first: None, slot }
}

/// Why pi rejects the value as a header, if it does.
fn invalid_reason(value: &Value) -> Option<String> {
    let Value::Object(object) = value else {
        return Some(format!(
            "it is {}, not an object",
            super::schema::json_type(value)
        ));
    };
    match object.get("type") {
        Some(Value::String(t)) if t == "session" => {}
        Some(Value::String(t)) => {
            return Some(format!(
                "its `type` is {}, not \"session\"",
                pi_session_format::session::quoted(t)
            ));
        }
        None => return Some("it has no `type`".into()),
        Some(other) => {
            return Some(format!(
                "its `type` is {}, not \"session\"",
                super::schema::json_type(other)
            ));
        }
    }
    match object.get("id") {
        Some(Value::String(_)) => None,
        None => Some("it has no `id`".into()),
        Some(other) => Some(format!(
            "its `id` is {}, not a string",
            super::schema::json_type(other)
        )),
    }
}

/// The header's diagnostics: presence, validity, place and version.
pub(crate) fn check(
    bytes: &[u8],
    header: &Header,
    facts: &[Facts],
    options: &Options<'_>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(first) = &header.first else {
        let what = if bytes.is_empty() {
            "the file is empty"
        } else {
            "the file has no JSON line"
        };
        let d = Diagnostic::new(
            Code::NoHeader,
            None,
            format!("{what}: pi treats it as corrupt and overwrites it with a new, empty session"),
        );
        // pi 0.87.1 starts a new session in an empty file, but refuses any other.
        out.push(if bytes.is_empty() {
            d
        } else {
            refused_by_087(d, options, what)
        });
        return out;
    };
    let text = String::from_utf8_lossy(&bytes[first.offset..first.offset + first.len]);
    let whole = location(bytes, first.line, first.offset, &text, 0..text.len());
    if let Some(reason) = invalid_reason(&first.value) {
        let title = first.value.get("type").and_then(Value::as_str) == Some("title");
        if title && options.dialect == Dialect::Omp {
            out.push(Diagnostic::new(
                Code::OmpTitleSlotUnread,
                Some(whole),
                format!(
                    "the first line is a `title` object oh-my-pi does not take for its title slot ({}): oh-my-pi reads it as the header and refuses to resume the session (\"the session header is missing or malformed\")",
                    slot_fault(&text)
                ),
            ));
            return out;
        }
        let code = if title {
            Code::OhMyPiTitle
        } else {
            Code::InvalidHeader
        };
        let what = if title {
            "the first line is oh-my-pi's title slot (`\"type\":\"title\"`): the file is in oh-my-pi's dialect of the format, which pi does not read".to_string()
        } else {
            format!("the first JSON value is not a session header: {reason}")
        };
        let mut d = Diagnostic::new(
            code,
            Some(whole),
            format!(
                "{what}; pi discards the whole file and overwrites it with a new, empty session"
            ),
        );
        if first.value.is_null() && !options.pi.reads_like_0_87() {
            d = d.with_pi(PiEffect::Crash);
            d.message =
                "the first JSON value is `null`: pi throws a TypeError when it opens the file"
                    .into();
        }
        out.push(refused_by_087(d, options, &what));
        return out;
    }
    // Under oh-my-pi's rules the header follows the title slot, which is rewritten in place.
    if let Some(slot) = header.slot.and_then(|_| TitleSlot::of_file(bytes))
        && slot.len != SLOT_BYTES
    {
        let len = slot.len - 1;
        let text = String::from_utf8_lossy(&bytes[..len]);
        let effect = if slot.len < SLOT_BYTES {
            "cuts the start of the header, and oh-my-pi can no longer resume the file"
        } else {
            "leaves the rest of this line in front of the header"
        };
        out.push(Diagnostic::new(
            Code::OmpTitleSlotWidth,
            Some(location(bytes, 1, 0, &text, 0..text.len())),
            format!(
                "the title slot is {} bytes long with its newline, not {SLOT_BYTES}: oh-my-pi changes a title by overwriting the file's first {SLOT_BYTES} bytes, which {effect}",
                slot.len
            ),
        ));
    }
    let expected = header.slot.map_or(1, |slot| slot + 1);
    if first.line > expected {
        out.push(Diagnostic::new(
            Code::HeaderNotFirst,
            Some(whole),
            format!("the header is on line {}, not line {expected}: pi opens the file, but `pi -c` does not recognise it", first.line),
        ));
    } else if first.len > 512 {
        out.push(Diagnostic::new(
            Code::HeaderTooLong,
            Some(whole),
            format!("the header line is {} bytes long: `pi -c` reads only the first 512 bytes of a file and will not find this session", first.len),
        ));
    }
    // Entries with ids in a file without a version: written as version 2 or 3, but pi
    // will read it as version 1 and replace the ids.
    let has_ids = facts
        .iter()
        .any(|f| f.kind == LineKind::Entry && f.id != Key::Undefined);
    let at_version = locate(&text, "/version").map_or(whole, |r| {
        location(bytes, first.line, first.offset, &text, r)
    });
    out.extend(version(header, has_ids, at_version));
    out
}

/// Why a `title` first line (`text`, parsed) is not oh-my-pi's title slot: what
/// [`TitleSlot::read`] finds, or, for a line it would read, that no newline ends it (omp
/// looks for the slot only before the file's first newline).
fn slot_fault(text: &str) -> String {
    match TitleSlot::read(text.as_bytes()) {
        Err(fault) => fault.to_string(),
        Ok(_) => "no newline ends it".into(),
    }
}

/// pi 0.87.1 does not overwrite a file without a valid header: it refuses to open it.
fn refused_by_087(d: Diagnostic, options: &Options<'_>, what: &str) -> Diagnostic {
    if !options.pi.reads_like_0_87() {
        return d;
    }
    Diagnostic {
        message: format!("{what}: pi 0.87.1 refuses to open the file (\"not a valid pi session\")"),
        ..d
    }
    .with_pi(PiEffect::Unreadable)
}

fn version(header: &Header, has_ids: bool, whole: super::Location) -> Option<Diagnostic> {
    let raw = header.get("version");
    let effective = header.version()?;
    let pointer_location = || whole;
    let effect = |v: f64| {
        if v >= 3.0 {
            (PiEffect::None, "reads the file as version 3".to_string())
        } else if v < 2.0 {
            (PiEffect::Rewritten, "migrates the file from version 1 (replacing every id and parentId with a linear chain) and rewrites it".to_string())
        } else if v < 3.0 {
            (
                PiEffect::Rewritten,
                "migrates the file from version 2 and rewrites it".to_string(),
            )
        } else {
            (
                PiEffect::Rewritten,
                "compares it as NaN: it migrates nothing but still rewrites the file".to_string(),
            )
        }
    };
    let d = match raw {
        None | Some(Value::Null) if has_ids => Diagnostic::new(
            Code::VersionMissing,
            Some(pointer_location()),
            "the header has no `version` but the entries have ids: pi reads the file as version 1, replaces every entry's id and parentId with a linear chain (losing the tree) and rewrites the file",
        ),
        None | Some(Value::Null) => Diagnostic::new(
            Code::VersionLegacy,
            Some(pointer_location()),
            "version 1 (the header has no `version`): pi migrates the file from version 1 and rewrites it",
        ),
        Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v.fract() == 0.0 && v >= 1.0) => {
            let v = n.as_f64().unwrap_or(3.0);
            if v == 3.0 {
                return None;
            } else if v > 3.0 {
                Diagnostic::new(
                    Code::VersionFuture,
                    Some(pointer_location()),
                    format!(
                        "version {n} is newer than any pi: pi reads the file as version 3 without a word"
                    ),
                )
            } else {
                let (_, what) = effect(v);
                Diagnostic::new(
                    Code::VersionLegacy,
                    Some(pointer_location()),
                    format!("version {n}: pi {what}"),
                )
            }
        }
        Some(other) => {
            let (pi, what) = effect(effective);
            Diagnostic::new(
                Code::VersionNotInteger,
                Some(pointer_location()),
                format!("`version` is {other}, not an integer number from 1 to 3: pi {what}"),
            )
            .with_pi(pi)
        }
    };
    Some(d)
}

/// A `serde_json` value as the crate's [`JsValue`] (for JavaScript's coercions).
fn to_js(value: &Value) -> JsValue {
    pi_session_format::json::parse(&value.to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------- oh-my-pi's files
//
// A file of oh-my-pi's dialect checked by pi's rules gets one diagnostic that says what the
// file is, how it was recognised ([`Dialect::detect`]: the title slot, a header member) and
// which of oh-my-pi's entry types it holds ([`OMP_ENTRY_TYPES`]), instead of one
// `unknown-entry-type` per oh-my-pi entry. A file that starts with the title slot already has
// its PS0111, which gets the count; any other gets PS0112. (Read as oh-my-pi's, the file
// gets neither: `find` skips the slot, and the entry checks know oh-my-pi's types.)

/// The entries of oh-my-pi's types: each type with its count, in the order of their first
/// entries, and the first of them.
#[derive(Debug, Default)]
struct OmpEntries<'f> {
    counts: Vec<(&'static str, usize)>,
    first: Option<&'f Facts>,
}

impl<'f> OmpEntries<'f> {
    fn of(facts: &'f [Facts]) -> Self {
        let mut found = OmpEntries::default();
        for f in facts.iter().filter(|f| f.kind == LineKind::Entry) {
            let Some(type_) = f.type_.as_deref() else {
                continue;
            };
            let Some(omp) = OMP_ENTRY_TYPES.into_iter().find(|t| *t == type_) else {
                continue;
            };
            match found.counts.iter_mut().find(|(t, _)| *t == omp) {
                Some((_, n)) => *n += 1,
                None => found.counts.push((omp, 1)),
            }
            found.first.get_or_insert(f);
        }
        found
    }

    fn total(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// `3 entries of types only oh-my-pi writes (1 `mode_change`, 2 `ttsr_injection`; the
    /// first on line 4)`.
    fn describe(&self) -> String {
        let total = self.total();
        let each: Vec<String> = self
            .counts
            .iter()
            .map(|(t, n)| format!("{n} `{t}`"))
            .collect();
        let line = self.first.map_or(0, |f| f.line);
        format!(
            "{total} {} of types only oh-my-pi writes ({}; the first on line {line})",
            if total == 1 { "entry" } else { "entries" },
            each.join(", "),
        )
    }
}

/// Amends or adds the diagnostic of a file recognisably oh-my-pi's, read by pi's rules:
/// `out` holds the header's diagnostics.
pub(crate) fn omp_file(bytes: &[u8], header: &Header, facts: &[Facts], out: &mut Vec<Diagnostic>) {
    let entries = OmpEntries::of(facts);
    let kept = "which pi keeps in the tree and ignores";
    if let Some(slot) = out.iter_mut().find(|d| d.code == Code::OhMyPiTitle) {
        if entries.total() > 0 {
            slot.message
                .push_str(&format!("; it has {}, {kept}", entries.describe()));
        }
        return;
    }
    // How the file was recognised: its first lines ([`Dialect::detect`]), or else its
    // entries.
    let detection = Dialect::detect(bytes);
    let sign = match (detection.dialect, detection.sign) {
        (Dialect::Omp, Some(sign)) => format!(" ({sign})"),
        _ if entries.total() > 0 => String::new(),
        _ => return,
    };
    let program = Dialect::Omp.program();
    let message = if entries.total() > 0 {
        format!(
            "this is an {program} session file, not pi's{sign}: it has {}, {kept}",
            entries.describe()
        )
    } else {
        format!(
            "this is an {program} session file, not pi's{sign}: pi reads it, and ignores the header members only oh-my-pi writes"
        )
    };
    out.push(at_sign(bytes, header, entries.first, message));
}

/// The diagnostic at the first oh-my-pi entry's `type`, or else at the header's first
/// oh-my-pi member, or else on the whole file.
fn at_sign(bytes: &[u8], header: &Header, first: Option<&Facts>, message: String) -> Diagnostic {
    let line = |line: usize, offset: usize, len: usize, pointer: &str| {
        let text = String::from_utf8_lossy(&bytes[offset..offset + len]);
        let range = locate(&text, pointer).unwrap_or(0..text.len());
        location(bytes, line, offset, &text, range)
    };
    if let Some(f) = first {
        return Diagnostic::new(
            Code::OhMyPiDialect,
            Some(line(f.line, f.offset, f.len, "/type")),
            message,
        )
        .at_pointer("/type")
        .for_entry(f.id_str());
    }
    let member = OMP_HEADER_SIGNS
        .into_iter()
        .find(|field| header.get(field).is_some());
    match (header.valid(), member) {
        (Some(h), Some(field)) => {
            let pointer = format!("/{field}");
            Diagnostic::new(
                Code::OhMyPiDialect,
                Some(line(h.line, h.offset, h.len, &pointer)),
                message,
            )
            .at_pointer(pointer)
        }
        _ => Diagnostic::new(Code::OhMyPiDialect, None, message),
    }
}
