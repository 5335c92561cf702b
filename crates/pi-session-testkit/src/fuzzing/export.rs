//! The `export` target: any bytes that load export to Markdown and HTML without a panic, and
//! the HTML holds no markup from the session: every tag is one the exporter writes, without
//! an event handler, links only to `http`, `https` and `mailto` (or without a scheme), and
//! sources only `data:image/` URLs. The same holds of the Markdown rendered by pulldown-cmark,
//! as CommonMark and with its extensions (but metadata blocks), with no image at all.
//!
//! And a page written a batch at a time from a session that keeps no line's text
//! (a [`Branch`] of a session loaded through a buffer, as the CLI writes
//! one) is the page of the whole transcript, byte for byte.

use pi_session_format::PiVersion;
use pi_session_format::export::{Branch, Transcript, html, markdown};
use pi_session_format::migrate::SequentialIds;
use pi_session_format::session::Session;
use pi_session_format::tree::Leaf;

/// The tags the HTML export writes: its own, and pulldown-cmark's for Markdown.
const TAGS: &[&str] = &[
    "!DOCTYPE",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "dl",
    "dt",
    "dd",
    "main",
    "article",
    "div",
    "span",
    "time",
    "p",
    "pre",
    "code",
    "details",
    "summary",
    "img",
    "strong",
    "em",
    "del",
    "a",
    "ul",
    "ol",
    "li",
    "blockquote",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "input",
    "sup",
    "sub",
    "section",
];

/// Checks the invariants of the module docs on `data`, read with each pi's rules, at the
/// current leaf and at the entry named by the last line's `id` when there is one.
pub fn export(data: &[u8]) {
    for pi in [PiVersion::V0_73, PiVersion::V0_87] {
        // Sequential ids: the two loads give a v1 file's entries the same ones.
        let mut ids = SequentialIds::default();
        let Ok(session) = Session::loader(pi).ids(&mut ids).load(data) else {
            continue;
        };
        let Ok(transcript) = Transcript::of(&session, &Leaf::Current) else {
            continue;
        };
        let mut md = Vec::new();
        markdown::write(&transcript, &mut md).expect("writing to a vector");
        let md = String::from_utf8(md).expect("the Markdown is not UTF-8");
        check_markdown(&md);
        let mut page = Vec::new();
        html::write(&transcript, &mut page).expect("writing to a vector");
        let page = String::from_utf8(page).expect("the HTML is not UTF-8");
        check_markup(&page);
        let (md_by_batch, page_by_batch) = written_by_batch(data, pi);
        assert!(md_by_batch == md, "the Markdown written by batch differs");
        assert!(page_by_batch == page, "the HTML written by batch differs");
    }
}

/// The Markdown and HTML pages of the current leaf's branch written a batch at a time from
/// `data` loaded through a buffer (its lines read again when asked for).
fn written_by_batch(data: &[u8], pi: PiVersion) -> (String, String) {
    let read_at = |buf: &mut [u8], at: usize| {
        buf.copy_from_slice(&data[at..at + buf.len()]);
        true
    };
    let mut ids = SequentialIds::default();
    let session = Session::loader(pi)
        .ids(&mut ids)
        .reading(&read_at)
        .load(data)
        .expect("it loads borrowed");
    let branch = Branch::of(&session, &Leaf::Current).expect("it has a transcript");
    let (mut md, mut page) = (Vec::new(), Vec::new());
    markdown::write(&branch, &mut md).expect("writing to a vector");
    html::write(&branch, &mut page).expect("writing to a vector");
    let text = |bytes| String::from_utf8(bytes).expect("the export is not UTF-8");
    (text(md), text(page))
}

/// The Markdown rendered as CommonMark and with pulldown-cmark's extensions (but metadata
/// blocks, which only a document's start has) holds no markup from the session and no image.
fn check_markdown(md: &str) {
    use pulldown_cmark::{Options, Parser, html};
    let extensions = Options::all()
        - Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        - Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    for options in [Options::empty(), extensions] {
        let mut page = String::new();
        html::push_html(&mut page, Parser::new_ext(md, options));
        check_markup(&page);
        assert!(!page.contains("<img"), "an image in the rendered Markdown");
    }
}

/// Every `<` of `page` opens or closes a tag of [`TAGS`] whose attributes are safe.
fn check_markup(page: &str) {
    for piece in page.split('<').skip(1) {
        let tag = &piece[..piece.find('>').unwrap_or_else(|| {
            panic!(
                "a `<` that opens no tag: {:?}",
                &piece[..piece.len().min(80)]
            )
        })];
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        assert!(
            TAGS.iter().any(|t| t.eq_ignore_ascii_case(name)),
            "a tag the exporter does not write: <{tag}>"
        );
        for (attribute, value) in attributes(tag) {
            let attribute = attribute.to_ascii_lowercase();
            assert!(
                !attribute.starts_with("on"),
                "an event handler attribute in <{tag}>"
            );
            let value = value.trim_start().to_ascii_lowercase();
            match attribute.as_str() {
                "href" => {
                    let scheme = value
                        .find([':', '/', '?', '#'])
                        .filter(|&i| value.as_bytes()[i] == b':');
                    assert!(
                        scheme.is_none_or(|i| matches!(&value[..i], "http" | "https" | "mailto")),
                        "a link with an unsafe scheme: <{tag}>"
                    );
                }
                "src" => assert!(
                    value.starts_with("data:image/"),
                    "a source that is not a data: image: <{tag}>"
                ),
                _ => {}
            }
        }
    }
}

/// The attributes of a tag's text, with their values (quotes removed).
fn attributes(tag: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    let mut rest = tag.split_once(char::is_whitespace).map_or("", |(_, r)| r);
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        rest = &rest[start..];
        let end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = &rest[..end];
        rest = &rest[end..];
        let mut value = "";
        if let Some(after) = rest.strip_prefix('=') {
            (value, rest) = match after.strip_prefix('"') {
                Some(quoted) => quoted.split_once('"').unwrap_or((quoted, "")),
                None => after.split_once(char::is_whitespace).unwrap_or((after, "")),
            };
        }
        found.push((name, value));
    }
    found
}
