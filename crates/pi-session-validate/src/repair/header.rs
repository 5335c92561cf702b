//! A missing header rebuilt from where the file is: pi names a session
//! `<timestamp with : and . as ->_<session id>.jsonl` and keeps it in `--<cwd, / \ : as ->--/`
//! (pi#8939: a file recreated mid-run without its header, which pi would overwrite).

use super::{Fix, FixAction, Line, Repairs};
use crate::Code;
use pi_session_format::json::JsonWriter;
use std::path::Path;

/// What a header needs, read from the file's name and its directory.
#[derive(Debug, PartialEq)]
pub(super) struct FromPath {
    pub id: String,
    pub timestamp: String,
    /// The working directory, when the directory is named as pi names it; `-` read as `/`
    /// (a guess: pi writes `/`, `\`, `:` and `-` all as `-`).
    pub cwd: Option<String>,
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `2026-01-01T04-30-13-644Z` → `2026-01-01T04:30:13.644Z`.
fn timestamp_of(stamp: &str) -> Option<String> {
    let b = stamp.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape = b.len() == 24
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b'-'
        && digits(14..16)
        && b[16] == b'-'
        && digits(17..19)
        && b[19] == b'-'
        && digits(20..23)
        && b[23] == b'Z';
    shape.then(|| {
        format!(
            "{}T{}:{}:{}.{}Z",
            &stamp[..10],
            &stamp[11..13],
            &stamp[14..16],
            &stamp[17..19],
            &stamp[20..23]
        )
    })
}

/// Reads the session id, time and working directory from a path pi would have written.
pub(super) fn from_path(path: &Path) -> Option<FromPath> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    let (stamp, id) = stem.split_once('_')?;
    if !is_uuid(id) {
        return None;
    }
    let timestamp = timestamp_of(stamp)?;
    let cwd = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .and_then(|d| d.strip_prefix("--")?.strip_suffix("--"))
        .map(|encoded| format!("/{}", encoded.replace('-', "/")));
    Some(FromPath {
        id: id.to_ascii_lowercase(),
        timestamp,
        cwd,
    })
}

/// Whether `text` is a header line (an object whose `type` is `"session"`).
fn is_header(text: &[u8]) -> bool {
    super::shape_of(text).is_some_and(|s| s.is_header())
}

/// Whether the first line that parses is an entry with an `id` (a version 2 or 3 file); a
/// version 1 file has none.
fn entries_have_ids(lines: &[Line<'_>]) -> bool {
    lines
        .iter()
        .filter_map(|l| super::shape_of(&l.text))
        .find(|s| s.object)
        .is_some_and(|s| s.id.is_some())
}

/// Puts a header first when the first line that parses is not one and the path says what it
/// was; `cwd` overrides the guess from the directory name.
pub(super) fn rebuild<'a>(
    mut lines: Vec<Line<'a>>,
    path: Option<&Path>,
    cwd: Option<&str>,
    out: &mut Repairs,
) -> Vec<Line<'a>> {
    let first = lines.iter().find(|l| super::shape_of(&l.text).is_some());
    let Some(first) = first else {
        return lines;
    };
    if is_header(&first.text) || !out.wants(Code::NoHeader) {
        return lines;
    }
    let origin = first.origin;
    let Some(found) = path.and_then(from_path) else {
        out.unrepaired(
            Code::NoHeader,
            origin,
            "the file has no header, and its name is not pi's `<time>_<session id>.jsonl`, so there is nothing to rebuild it from; add the header line by hand",
        );
        return lines;
    };
    let Some(cwd) = cwd.map(str::to_owned).or(found.cwd.clone()) else {
        out.unrepaired(
            Code::NoHeader,
            origin,
            "the file has no header, and its directory is not pi's `--<cwd>--`: pass --cwd DIR to rebuild it",
        );
        return lines;
    };
    let version3 = entries_have_ids(&lines);
    let mut w = JsonWriter::new();
    w.begin_object();
    w.key("type").string("session");
    if version3 {
        w.key("version").uint(3);
    }
    w.key("id").string(&found.id);
    w.key("timestamp").string(&found.timestamp);
    w.key("cwd").string(&cwd);
    w.end_object();
    let guessed = if found.cwd.as_deref() == Some(cwd.as_str()) {
        " (read from the directory name, every `-` as `/`: pass --cwd DIR if that is wrong)"
    } else {
        ""
    };
    out.fix(Fix::new(
        Code::NoHeader,
        origin,
        FixAction::RebuiltHeader,
        format!(
            "no header (pi would overwrite this file with a new session): rebuilt from the file's name and directory: session {}, started {}, cwd {cwd:?}{guessed}, {}",
            found.id,
            found.timestamp,
            if version3 {
                "version 3 (the entries have ids)"
            } else {
                "version 1 (the entries have no ids)"
            }
        ),
    ));
    lines.insert(0, Line::new(w.into_bytes(), 0));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pi_path_gives_the_header() {
        let path = Path::new(
            "/home/u/.pi/agent/sessions/--home-u-project--/2026-01-01T04-30-13-644Z_0195f3a4-0000-7000-8000-000000045903.jsonl",
        );
        assert_eq!(
            from_path(path),
            Some(FromPath {
                id: "0195f3a4-0000-7000-8000-000000045903".into(),
                timestamp: "2026-01-01T04:30:13.644Z".into(),
                cwd: Some("/home/u/project".into()),
            })
        );
        assert_eq!(
            from_path(Path::new(
                "/tmp/2026-01-01T04-30-13-644Z_0195f3a4-0000-7000-8000-000000045903.jsonl"
            ))
            .and_then(|f| f.cwd),
            None
        );
        assert!(from_path(Path::new("/tmp/session.jsonl")).is_none());
        assert!(from_path(Path::new("/tmp/2026-01-01T04-30-13-644Z_not-a-uuid.jsonl")).is_none());
        assert!(
            from_path(Path::new(
                "/tmp/2026-01-01_0195f3a4-0000-7000-8000-000000045903.jsonl"
            ))
            .is_none()
        );
    }
}
