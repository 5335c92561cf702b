//! Repair step 4: a version 1 or 2 file migrated to version 3 as pi migrates it when it
//! opens one (PS0105, PS0108), each migrated line in place of the line it came from.

use super::{Fix, FixAction, Line, Repairs, join};
use crate::Code;
use pi_session_format::migrate::IdGenerator;
use pi_session_format::read;
use pi_session_format::session::VersionInfo;
use pi_session_format::{LoadError, PiVersion, Session};

/// Ids for a migration that are the same every time for the same file (a repair of a
/// repaired file changes nothing).
struct SeededIds(u32);

impl IdGenerator for SeededIds {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String {
        loop {
            self.0 = self.0.wrapping_mul(0x0100_0193) ^ 0x9e37_79b9;
            let id = format!("{:08x}", self.0);
            if !taken(&id) {
                return id;
            }
        }
    }
}

/// Migrates a version 1 or 2 file to version 3, as pi does when it opens one.
pub(super) fn to_v3<'a>(lines: Vec<Line<'a>>, pi: PiVersion, out: &mut Repairs) -> Vec<Line<'a>> {
    let code = Code::VersionLegacy;
    if !out.wants(code) && !out.wants(Code::VersionMissing) {
        return lines;
    }
    // A version that is not a number is rewritten by pi as it is, not migrated: nothing to do.
    if !version_of(&lines, pi).is_some_and(|v| v.is_ok_and(|v| v.migrated_v1 || v.migrated_v2)) {
        return lines;
    }
    let bytes = join(&lines);
    let seed = bytes.iter().take(4096).fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let mut ids = SeededIds(seed);
    let Ok(migration) = Session::loader(pi).ids(&mut ids).load_for_rewrite(&bytes) else {
        return lines;
    };
    let mut migrated = Vec::with_capacity(bytes.len() + bytes.len() / 8);
    let mut changes = pi_session_format::session::Changes::new(0);
    if migration
        .write(&mut migrated, &mut changes, &|_| {})
        .is_err()
    {
        return lines;
    }
    let mut migrated_lines: Vec<&[u8]> = migrated.split(|&b| b == b'\n').collect();
    if migrated.last() == Some(&b'\n') {
        migrated_lines.pop();
    }
    // The migration writes one line for each line pi reads, in order, and drops the blank
    // ones: the lines it wrote are those lines, each the migrated form of one input line.
    let read: Vec<usize> =
        read::lines_with(&bytes, read::Edges::of(pi, pi_session_format::Dialect::Pi))
            .map(|l| l.number - 1)
            .collect();
    if read.len() != migrated_lines.len() {
        out.unrepaired(
            code,
            lines.first().map_or(0, |l| l.origin),
            "a version 1 or 2 file whose migration could not be matched with its lines: left as it is (pi migrates it when it opens it)",
        );
        return lines;
    }
    out.fix(Fix::new(
        code,
        lines.first().map_or(0, |l| l.origin),
        FixAction::Migrated,
        "a version 1 or 2 file (pi migrates it and rewrites it in place when it opens it): migrated to version 3, as pi does",
    ));
    let mut migrated_lines = read.into_iter().zip(migrated_lines).peekable();
    let mut result = Vec::with_capacity(lines.len());
    for (i, mut line) in lines.into_iter().enumerate() {
        // A blank line (pi skips it; its rewrite drops it) stays as it was.
        let Some((_, text)) = migrated_lines.next_if(|&(at, _)| at == i) else {
            result.push(line);
            continue;
        };
        // A line written as it is but for the whole text's trim (a line that is not JSON
        // ending the file with a CR) stays as it was, byte for byte: pi reads both alike.
        // The whole text's trim takes blanks off the first line's start and the last line's
        // end only: a line may lose either, or both, but nothing else.
        let start = read::trim_start(&line.text);
        let end = read::trim_end(&line.text);
        let as_read = [
            0..line.text.len(),
            start..line.text.len(),
            0..end,
            start..end.max(start),
        ];
        if !as_read
            .into_iter()
            .any(|range| line.text.get(range) == Some(text))
        {
            line.edit(text.to_vec());
        }
        result.push(line);
    }
    result
}

/// The version pi reads in the file `lines` make ([`Session::read_version`] of them joined),
/// found without joining the lines of a file that pi leaves be. A line is asked about only
/// when it reads as anything on its own (pi 0.73 trims the whole text's ends, so a line alone
/// may read where it does not in the file, never the other way round), then as it reads in
/// the file: after the lines before it when it is the first such line (the trim of the text's
/// start runs over them), else after a line that is not JSON; before a line that is not JSON,
/// or, from the file's last line that is not all whitespace on, with the lines after it (the
/// trim of the text's end runs over them). `None` when no line reads.
fn version_of(lines: &[Line<'_>], pi: PiVersion) -> Option<Result<VersionInfo, LoadError>> {
    let empty =
        |read: &Result<VersionInfo, LoadError>| matches!(read, Err(LoadError::Empty { .. }));
    let last_content = lines
        .iter()
        .rposition(|l| read::trim_start(&l.text) < l.text.len());
    let mut first = true;
    for (n, line) in lines.iter().enumerate() {
        if empty(&Session::read_version(&line.text, pi)) {
            continue;
        }
        let mut in_file = if first {
            join(&lines[..n])
        } else {
            b"#\n".to_vec()
        };
        first = false;
        if last_content.is_some_and(|last| n >= last) {
            in_file.extend_from_slice(&join(&lines[n..]));
        } else {
            in_file.extend_from_slice(&line.text);
            in_file.extend_from_slice(b"\n#");
        }
        let read = Session::read_version(&in_file, pi);
        if !empty(&read) {
            return Some(read);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"x","timestamp":1}}}}"#
        )
    }

    /// The version read line by line is the version read from the joined file, whatever
    /// whitespace pi 0.73 trims at the text's ends (NBSP, a BOM, blank lines, CR) and
    /// wherever the header is.
    #[test]
    fn the_version_read_by_lines_is_the_joined_files() {
        let v3 = r#"{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let v1 = r#"{"type":"session","id":"b","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let e = entry("e1");
        let nbsp = "\u{a0}";
        let files = [
            format!("{v3}{nbsp}\n{v1}\n{e}\n"),
            format!("{v3}{nbsp}\n"),
            format!("{v3}{nbsp}\n\n {nbsp}\n"),
            format!("{v1}{nbsp}\n{nbsp}\n"),
            format!("\n{nbsp}\n{nbsp}{v1}\n{e}\n"),
            format!("\u{feff}{v1}\r\n{e}\r\n"),
            format!("not json\n{nbsp}{v3}\n{v1}\n"),
            format!("{e}\n{v1}\n"),
            format!("{nbsp}\n"),
            String::new(),
        ];
        for pi in [PiVersion::V0_73, PiVersion::V0_87] {
            for file in &files {
                let lines: Vec<Line<'_>> = file
                    .split_terminator('\n')
                    .enumerate()
                    .map(|(i, text)| Line::new(text.as_bytes(), i + 1))
                    .collect();
                let joined = Session::read_version(&join(&lines), pi);
                match version_of(&lines, pi) {
                    Some(by_lines) => assert_eq!(
                        format!("{by_lines:?}"),
                        format!("{joined:?}"),
                        "{pi:?}: {file:?}"
                    ),
                    None => assert!(
                        matches!(joined, Err(LoadError::Empty { .. })),
                        "{pi:?}: {file:?}: {joined:?}"
                    ),
                }
            }
        }
    }
}
