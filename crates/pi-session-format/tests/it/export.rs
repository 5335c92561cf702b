//! Pages written a batch at a time (`export::Branch`) from real files: the
//! same bytes as the whole transcript's page over many batches, and nothing made from a file
//! that shrank while it was written.

use crate::scratch;
use pi_session_format::export::{Branch, Page, Transcript, html, markdown};
use pi_session_format::{Leaf, PiVersion, Session};
use pi_session_fs::input::Input;

/// A session of `entries` user messages in one branch, a label, and an assistant answer with a
/// tool call, each line about `filler` bytes: over 4 MiB, it is mapped rather than read.
fn session_text(entries: usize, filler: usize) -> String {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    text.push('\n');
    let filler = "x".repeat(filler);
    let mut parent = "null".to_owned();
    for n in 0..entries {
        let id = format!("e{n}");
        text.push_str(&format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{n} {filler}","timestamp":1}}}}"#
        ));
        text.push('\n');
        parent = format!("\"{id}\"");
    }
    text.push_str(&format!(
        r#"{{"type":"label","id":"l","parentId":{parent},"timestamp":"2026-01-01T00:00:02.000Z","targetId":"e1","label":"second"}}"#
    ));
    text.push('\n');
    text.push_str(concat!(
        r#"{"type":"message","id":"a","parentId":"l","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"**done**"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/w/a.rs"}}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
        "\n"
    ));
    text
}

type Render = fn(Page<'_>, &mut dyn std::io::Write) -> std::io::Result<()>;

const RENDERERS: [(&str, Render); 2] = [
    ("markdown", |page, out| markdown::write(page, out)),
    ("html", |page, out| html::write(page, out)),
];

/// Over three batches of a mapped file read in pieces, each page is the whole transcript's,
/// byte for byte, and says how many entries the branch shows (its entries but the label).
#[test]
fn a_page_written_by_batches_is_the_whole_transcripts() {
    let dir = scratch("batches");
    let path = dir.join("s.jsonl");
    let entries = 2 * Branch::BATCH + 7;
    std::fs::write(&path, session_text(entries, 600)).unwrap();
    let input = Input::open(&path).unwrap();
    let whole = Session::from_bytes(input.bytes(), PiVersion::V0_87).unwrap();
    let transcript = Transcript::of(&whole, &Leaf::Current).unwrap();
    assert_eq!(transcript.items.len(), entries + 1);
    let session = Session::loader(PiVersion::V0_87)
        .reading(&input)
        .load(input.bytes())
        .unwrap();
    let branch = Branch::of(&session, &Leaf::Current).unwrap();
    assert_eq!(branch.len(), entries + 1);
    let batches: Vec<usize> = branch.batches().map(|b| b.unwrap().len()).collect();
    assert_eq!(batches, [Branch::BATCH, Branch::BATCH, 8]);
    for (name, render) in RENDERERS {
        let (mut page, mut by_batch) = (Vec::new(), Vec::new());
        render((&transcript).into(), &mut page).unwrap();
        render((&branch).into(), &mut by_batch).unwrap();
        assert!(page == by_batch, "{name}: the pages differ");
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains(&format!("{} entries", entries + 1)), "{name}");
        assert!(page.contains("second"), "{name}: the label is shown");
    }
}

/// A file truncated after it was loaded: the next batch reads its lines again, the check
/// finds the file shorter, and the page stops there with the check's error.
#[test]
fn a_page_of_a_file_truncated_after_loading_stops_at_the_check() {
    let dir = scratch("truncated");
    let path = dir.join("s.jsonl");
    let text = session_text(2 * Branch::BATCH, 600);
    std::fs::write(&path, &text).unwrap();
    let input = Input::open(&path).unwrap();
    let session = Session::loader(PiVersion::V0_87)
        .reading(&input)
        .load(input.bytes())
        .unwrap();
    let unchanged = || input.verify();
    let branch = Branch::of(&session, &Leaf::Current)
        .unwrap()
        .checking(&unchanged);
    crate::truncate(&path, text.len() as u64 / 2);
    for (name, render) in RENDERERS {
        let mut out = Vec::new();
        let refused = render((&branch).into(), &mut out).unwrap_err();
        assert!(refused.to_string().contains("shrank"), "{name}: {refused}");
        // The page's head may be out; no entry is.
        let out = String::from_utf8_lossy(&out);
        assert!(!out.contains(" xxx"), "{name}: an entry was written");
    }
}
