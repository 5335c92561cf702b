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

mod branch;
pub mod html;
pub mod markdown;
mod transcript;

pub use branch::{Branch, Check};
pub use transcript::{Block, Body, Item, Transcript, TranscriptError};

use std::io;

/// What a renderer writes ([`markdown::write`], [`html::write`]): a whole [`Transcript`], or a
/// [`Branch`] made a batch at a time as it is written; made `From` either.
pub struct Page<'i> {
    /// The facts of the transcript (its items unused).
    head: &'i Transcript,
    /// How many entries the branch shows.
    entries: usize,
    items: Items<'i>,
}

/// Where the items of a [`Page`] come from.
enum Items<'i> {
    /// A whole transcript's.
    Made(&'i [Item]),
    /// A branch's, each made as it is rendered.
    Branch(&'i Branch<'i, 'i>),
}

impl<'i> From<&'i Transcript> for Page<'i> {
    fn from(transcript: &'i Transcript) -> Page<'i> {
        Page {
            head: transcript,
            entries: transcript.items.len(),
            items: Items::Made(&transcript.items),
        }
    }
}

impl<'i> From<&'i Branch<'i, 'i>> for Page<'i> {
    fn from(branch: &'i Branch<'i, 'i>) -> Page<'i> {
        Page {
            head: branch.head(),
            entries: branch.len(),
            items: Items::Branch(branch),
        }
    }
}

/// Writes the items of `items` with `write_item` in file order, [`Branch::BATCH`] at a time:
/// each batch made and rendered on every core (a branch's then checked), and written while the
/// next one is rendered. What is held at once is two batches' renderings, not the output.
fn write_items(
    items: Items<'_>,
    out: &mut dyn io::Write,
    write_item: impl Fn(&Item, &mut dyn io::Write) -> io::Result<()> + Sync,
) -> io::Result<()> {
    use rayon::prelude::*;
    let len = match items {
        Items::Made(items) => items.len(),
        Items::Branch(branch) => branch.len(),
    };
    let render = |item: &Item| {
        let mut buf = Vec::new();
        write_item(item, &mut buf)?;
        Ok(buf)
    };
    let render_batch = |start: usize| -> io::Result<Vec<Vec<u8>>> {
        match items {
            Items::Made(items) => items[start..(start + Branch::BATCH).min(len)]
                .par_iter()
                .map(render)
                .collect(),
            Items::Branch(branch) => branch.batch_of(start, |item| render(&item)),
        }
    };
    let write = |out: &mut dyn io::Write, rendered: Vec<Vec<u8>>| {
        rendered.iter().try_for_each(|buf| out.write_all(buf))
    };
    let mut done: Vec<Vec<u8>> = Vec::new();
    for start in (0..len).step_by(Branch::BATCH) {
        let mut next = Ok(Vec::new());
        // The writer stays on this thread (it need not be `Send`); the batch is rendered on
        // the pool meanwhile.
        let written = rayon::in_place_scope(|scope| {
            scope.spawn(|_| next = render_batch(start));
            write(out, std::mem::take(&mut done))
        });
        written?;
        done = next?;
    }
    write(out, done)
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
