//! A conversation to read or share: the branch from the root to a leaf as a [`Transcript`],
//! written as Markdown ([`markdown`]) or as one self-contained HTML page ([`html`]).
//!
//! The transcript holds what a reader needs of each entry on the path (pi's `getBranch`):
//! prompts, answers with their thinking and tool calls, tool results, shell commands,
//! summaries, model and thinking-level changes, labels; entries the typed model cannot read,
//! and extension state, are kept as their JSON. The JSONL export (pi's `/export FILE.jsonl`)
//! is the writer's ([`crate::SessionWriter::export_branch`]).
//!
//! Everything that came from the session is text to the renderers: the Markdown escapes
//! every string (or puts it in a code span) and keeps message text as Markdown but turns raw
//! HTML, links to unsafe schemes and images into text, and the HTML page escapes every
//! string and forbids scripts and network access with its content security policy.

pub mod html;
pub mod markdown;
mod transcript;

pub use transcript::{Block, Body, Item, Transcript, TranscriptError};

/// Writes `items` with `write_item` in file order, rendering them in batches on every core.
fn write_items(
    items: &[Item],
    out: &mut dyn std::io::Write,
    write_item: impl Fn(&Item, &mut dyn std::io::Write) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    // Batches bound what is held at once (a batch of rendered items, not the whole output).
    for batch in items.chunks(4096) {
        let rendered: Vec<Vec<u8>> = batch
            .par_iter()
            .map(|item| {
                let mut buf = Vec::new();
                write_item(item, &mut buf).map(|()| buf)
            })
            .collect::<std::io::Result<_>>()?;
        for buf in rendered {
            out.write_all(&buf)?;
        }
    }
    Ok(())
}

/// Whether a link may stay a link: `http:`, `https:`, `mailto:`, or no scheme (a fragment
/// or a relative path).
pub(crate) fn safe_url(url: &str) -> bool {
    let url = url.trim_start_matches(|c: char| c.is_ascii_whitespace() || c.is_control());
    match url.find([':', '/', '?', '#']) {
        Some(at) if url.as_bytes()[at] == b':' => {
            let scheme = url[..at].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}
