//! oh-my-pi's title slot: the first line of a file omp writes, a JSON object of exactly 256
//! bytes holding the session's title (`pi_session_format::omp::slot`). Its title is searched as
//! any string is, and when it held a secret the slot is written again as omp writes it
//! (`serializeTitleSlot`: the same width, the title cut to whole code points if the placeholder
//! makes it too long), so that omp still finds its slot and the lines after it where they were.

use crate::{Finding, Redactor, Report};
use pi_session_format::json::JsValue;
use pi_session_format::omp::slot::{TitleSlot, serialize};

/// The slot's line as it is written: its bytes and the length of the line it replaces.
pub(crate) struct Slot {
    pub(crate) line: Vec<u8>,
    pub(crate) len: usize,
}

/// The redacted slot of `input`, when its first line is one; its findings added to
/// `report` (line 1, path `title`), and the line counted.
pub(crate) fn redact(redactor: &Redactor, input: &[u8], report: &mut Report) -> Option<Slot> {
    let end = memchr::memchr(b'\n', input)?;
    let slot = TitleSlot::parse(&input[..end])?;
    let len = end + 1;
    let (title, findings) = redactor.redact_text(&slot.title);
    report.lines += 1;
    let found = findings.iter().any(|f| f.redacted);
    report
        .findings
        .extend(findings.into_iter().map(|f| Finding {
            path: "title".into(),
            ..f
        }));
    let line = if found {
        report.lines_changed += 1;
        let source = slot.source.map(JsValue::string);
        let updated_at = JsValue::string(slot.updated_at);
        // The title is cut to fit; `None` only when even an empty title does not (an
        // `updatedAt` of hundreds of bytes, which omp never writes): then the slot is written
        // with no `updatedAt`, which always fits, never with the secret.
        serialize(title.as_bytes(), source.as_ref(), Some(&updated_at))
            .or_else(|| serialize(b"", None, None))
            .unwrap_or_default()
    } else {
        input[..len].to_vec()
    };
    Some(Slot { line, len })
}

#[cfg(test)]
mod tests {
    use crate::{Key, Options, Redactor};
    use pi_session_format::json::JsValue;
    use pi_session_format::omp::slot::{SLOT_BYTES, TitleSlot, serialize};

    const PAT: &str = "ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u";

    #[test]
    fn a_secret_in_the_title_slot_is_redacted_at_the_slot_s_width() {
        let options = Options {
            named: vec![b"pw12345678".to_vec()],
            ..Options::default()
        };
        let redactor = Redactor::new(options, Key::from_bytes(b"0123456789abcdef").unwrap());
        let updated = JsValue::string("2026-01-01T00:00:00.000Z");
        // The second title fills the slot: its placeholder, longer than the value, is cut.
        for title in [
            format!("deploy with {PAT}"),
            format!("{}pw12345678", "é".repeat(72)),
        ] {
            let slot = serialize(
                title.as_bytes(),
                Some(&JsValue::string("user")),
                Some(&updated),
            )
            .unwrap();
            assert!(
                TitleSlot::parse(&slot[..slot.len() - 1]).unwrap().title == title,
                "fits"
            );
            let rest = b"{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/p\"}\n";
            let input = [slot.as_slice(), rest].concat();
            let mut out = Vec::new();
            let report = redactor.redact(&input, &mut out).unwrap();
            assert_eq!(report.redacted(), 1);
            assert_eq!(report.findings[0].path, "title");
            let first = &out[..out.iter().position(|&b| b == b'\n').unwrap() + 1];
            assert_eq!(first.len(), SLOT_BYTES);
            let parsed = TitleSlot::parse(&first[..first.len() - 1]).unwrap();
            assert!(
                !parsed.title.contains("ghp_") && !parsed.title.contains("pw1234"),
                "{}",
                parsed.title
            );
            assert_eq!(parsed.source.as_deref(), Some("user"));
            assert_eq!(&out[first.len()..], rest);
            assert_eq!(report.lines, 2);
        }
    }
}
