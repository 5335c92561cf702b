//! The repaired file made from its lines: written a line at a time ([`write_lines`]), joined
//! ([`join`]), and validated ([`validate`]) from a temporary copy when it is large, so that a
//! repair of a file of gigabytes never holds the repaired file in memory.

use super::lines::{Behind, Line};
use crate::{Options, Release, Report};
use pi_session_fs::input::Input;
use pi_session_fs::temp::Temp;
use std::io::{self, BufWriter, Write};

/// Outputs up to this size are validated joined in memory; larger ones from a temporary
/// file, mapped and let go as they are read.
const IN_MEMORY: usize = 64 << 20;

/// The input is written in pieces of this size.
const PIECE: usize = 16 << 20;

/// The lines joined, each ended by a newline.
pub(super) fn join(lines: &[Line<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(len(lines));
    for line in lines {
        out.extend_from_slice(&line.text);
        out.push(b'\n');
    }
    out
}

/// The length of the lines joined.
fn len(lines: &[Line<'_>]) -> usize {
    lines.iter().map(|l| l.text.len() + 1).sum()
}

/// Writes the lines to `out`, each ended by a newline, letting go of the input behind.
pub(super) fn write_lines(
    lines: &[Line<'_>],
    mut behind: Behind<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, out);
    for line in lines {
        out.write_all(&line.text)?;
        out.write_all(b"\n")?;
        // After the write: a span let go now does not take the line's own pages first.
        behind.passed(&line.text);
    }
    out.flush()
}

/// Writes the input to `out` in pieces, letting go of it behind (as [`write_lines`] does).
pub(super) fn write_input(
    input: &[u8],
    release: Option<Release<'_>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut behind = Behind::new(input, release);
    for piece in input.chunks(PIECE) {
        out.write_all(piece)?;
        behind.passed(piece);
    }
    Ok(())
}

/// `validate` of the lines joined: in memory when small, else from an unnamed temporary file
/// in the system's temporary directory (in memory after all when that cannot be written).
pub(super) fn validate(lines: &[Line<'_>], behind: Behind<'_>, options: &Options<'_>) -> Report {
    validate_within(lines, behind, options, IN_MEMORY)
}

/// [`validate`], joining in memory up to `in_memory` bytes.
fn validate_within(
    lines: &[Line<'_>],
    behind: Behind<'_>,
    options: &Options<'_>,
    in_memory: usize,
) -> Report {
    if len(lines) > in_memory
        && let Ok(report) = validate_spooled(lines, behind, options)
    {
        return report;
    }
    crate::validate(&join(lines), options)
}

fn validate_spooled(
    lines: &[Line<'_>],
    behind: Behind<'_>,
    options: &Options<'_>,
) -> io::Result<Report> {
    let mut temp = Temp::create(&std::env::temp_dir())?;
    write_lines(lines, behind, temp.file())?;
    let spooled = Input::of_file(temp.get().try_clone()?)?;
    crate::validate_input(&spooled, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spooled_output_validates_as_the_joined_one() {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let texts: [&[u8]; 4] = [header.as_bytes(), b"{\"type\":\"mess", b"", b"[1]"];
        let lines: Vec<Line<'_>> = texts
            .iter()
            .enumerate()
            .map(|(i, &t)| Line::new(t, i + 1))
            .collect();
        let options = Options::default();
        let joined = crate::validate(&join(&lines), &options);
        assert!(!joined.diagnostics.is_empty());
        let spooled = validate_spooled(&lines, Behind::new(b"", None), &options).unwrap();
        assert_eq!(spooled, joined);
        assert_eq!(
            validate_within(&lines, Behind::new(b"", None), &options, 0),
            joined
        );
        let mut written = Vec::new();
        write_lines(&lines, Behind::new(b"", None), &mut written).unwrap();
        assert_eq!(written, join(&lines));
    }

    #[test]
    fn an_unchanged_input_is_written_whole_and_let_go_behind() {
        let input: Vec<u8> = (0..PIECE * 2 + 12_345).map(|i| (i % 251) as u8).collect();
        let released = std::sync::Mutex::new(Vec::new());
        let release = |range: std::ops::Range<usize>| released.lock().unwrap().push(range);
        let mut written = Vec::new();
        write_input(&input, Some(Release(&release)), &mut written).unwrap();
        assert!(written == input, "the input, byte for byte");
        let mut released = released.into_inner().unwrap();
        released.sort_by_key(|r| r.start);
        // Let go of in spans as it went, and all of it by the end.
        assert!(released.len() >= 2, "{released:?}");
        let mut end = 0;
        for range in &released {
            assert!(range.start <= end, "a gap before {range:?}");
            end = end.max(range.end);
        }
        assert_eq!(end, input.len());
    }
}
