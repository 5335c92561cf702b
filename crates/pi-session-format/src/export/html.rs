//! A [`Transcript`](super::Transcript) as one self-contained HTML page: inline style, images as `data:` URLs,
//! thinking, tool calls and tool results in `<details>` (collapsible without a script).
//!
//! Nothing from the session can run or fetch: every string is escaped; message Markdown is
//! rendered by pulldown-cmark with its raw HTML turned into text, links kept only for
//! `http`, `https` and `mailto`, and Markdown images shown as links; and the page's content
//! security policy allows no script and no network at all (`default-src 'none'`, images
//! from `data:` only), so even a renderer bug could not load or run anything.

use super::markdown::{heading, one_line};
use super::transcript::{Block, Body, Item, bash_notes, compaction_note, usage_line};
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use std::io::{self, Write};

/// The page's content security policy: no script, no network, inline style, `data:` images.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; img-src data:; \
style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// Image types shown inline; others are named only.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e;
  --line: #d1d9e0; --user: #ddf4ff; --tool: #f6f8fa; --error: #ffebe9; --note: #fff8c5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1;
  --line: #3d444d; --user: #0c2d6b; --tool: #151b23; --error: #4a1d1d; --note: #3b2e00; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem;
  color: var(--muted); }
header dd { margin: 0; overflow-wrap: anywhere; }
article { border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem; }
article.user { background: var(--user); }
article.tool-result, article.bash { background: var(--tool); }
article.error { background: var(--error); }
article.compaction, article.branch-summary { background: var(--note); }
.meta { color: var(--muted); font-size: 13px; display: flex; flex-wrap: wrap; gap: .2rem .8rem; }
.meta .role { font-weight: 600; color: var(--fg); }
.label { border: 1px solid var(--line); border-radius: 1em; padding: 0 .6em; }
pre { background: var(--tool); border: 1px solid var(--line); border-radius: 6px; padding: .5rem;
  overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
code { font: 13px/1.4 ui-monospace, monospace; }
details { margin: .5rem 0; }
summary { cursor: pointer; color: var(--muted); }
.thinking .text { color: var(--muted); font-style: italic; }
img { max-width: 100%; }
.text { overflow-wrap: anywhere; }
";

/// Writes `page` (a [`Transcript`](super::Transcript), or a [`Branch`](super::Branch) made and
/// written a batch at a time) as
/// a self-contained HTML page.
pub fn write<'i>(page: impl Into<super::Page<'i>>, out: &mut dyn Write) -> io::Result<()> {
    let page = page.into();
    let (transcript, entries) = (page.head, page.entries);
    let title = transcript
        .name
        .clone()
        .unwrap_or_else(|| format!("Session {}", transcript.session_id));
    writeln!(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>")?;
    writeln!(out, "<meta charset=\"utf-8\">")?;
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CONTENT_SECURITY_POLICY}\">"
    )?;
    writeln!(out, "<meta name=\"referrer\" content=\"no-referrer\">")?;
    writeln!(
        out,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        out,
        "<meta name=\"generator\" content=\"pi-session export\">"
    )?;
    writeln!(out, "<title>{}</title>", escape(&title))?;
    writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>\n<header>")?;
    writeln!(out, "<h1>{}</h1>\n<dl>", escape(&title))?;
    let fact = |out: &mut dyn Write, name: &str, value: &str| {
        writeln!(
            out,
            "<dt>{name}</dt><dd><code>{}</code></dd>",
            escape(value)
        )
    };
    fact(out, "Session", &transcript.session_id)?;
    fact(out, "Working directory", &transcript.cwd)?;
    fact(out, "Started", &transcript.created)?;
    let branch = match &transcript.leaf {
        Some(leaf) => format!("{entries} entries, ending at {leaf}"),
        None => "no entries".to_owned(),
    };
    fact(out, "Branch", &branch)?;
    writeln!(out, "</dl>\n</header>\n<main>")?;
    super::write_items(page.items, out, write_item)?;
    writeln!(out, "</main>\n</body>\n</html>")
}

fn write_item(item: &Item, out: &mut dyn Write) -> io::Result<()> {
    let class = class_of(&item.body);
    write!(out, "<article class=\"{class}\"")?;
    if !item.id.is_empty() {
        write!(out, " id=\"entry-{}\"", escape(&item.id))?;
    }
    write!(
        out,
        ">\n<div class=\"meta\"><span class=\"role\">{}</span>",
        escape(&heading(&item.body, &one_line))
    )?;
    if !item.timestamp.is_empty() {
        write!(out, "<time>{}</time>", escape(&item.timestamp))?;
    }
    if !item.id.is_empty() {
        write!(out, "<span class=\"id\">{}</span>", escape(&item.id))?;
    }
    if let Some(label) = &item.label {
        write!(out, "<span class=\"label\">{}</span>", escape(label))?;
    }
    writeln!(out, "</div>")?;
    match &item.body {
        Body::User { blocks } | Body::Custom { blocks, .. } | Body::System { blocks } => {
            write_blocks(blocks, out)?
        }
        Body::Assistant {
            blocks,
            stop_reason,
            error,
            usage,
            ..
        } => {
            write_blocks(blocks, out)?;
            if let Some(error) = error {
                writeln!(
                    out,
                    "<p><strong>Error ({}):</strong></p>\n<pre><code>{}</code></pre>",
                    escape(stop_reason),
                    escape(error)
                )?;
            }
            if let Some(u) = usage {
                writeln!(out, "<p class=\"meta\">{}</p>", usage_line(u))?;
            }
        }
        Body::ToolResult { blocks, .. } => {
            let lines: usize = blocks
                .iter()
                .map(|b| match b {
                    Block::Text(text) => text.lines().count(),
                    _ => 1,
                })
                .sum();
            let first = blocks
                .iter()
                .find_map(|b| match b {
                    Block::Text(text) => text.lines().find(|l| !l.trim().is_empty()),
                    _ => None,
                })
                .map(|l| super::transcript::preview(l, 80))
                .unwrap_or_default();
            writeln!(
                out,
                "<details class=\"tool-output\"><summary>Output, {lines} line{}: {}</summary>",
                if lines == 1 { "" } else { "s" },
                escape(&first)
            )?;
            for block in blocks {
                match block {
                    Block::Text(text) => writeln!(out, "<pre><code>{}</code></pre>", escape(text))?,
                    other => write_blocks(std::slice::from_ref(other), out)?,
                }
            }
            writeln!(out, "</details>")?;
        }
        Body::Bash {
            command,
            output,
            exit_code,
            cancelled,
            truncated,
        } => {
            writeln!(out, "<pre><code>$ {}</code></pre>", escape(command))?;
            writeln!(
                out,
                "<details class=\"tool-output\"><summary>Output</summary><pre><code>{}</code></pre></details>",
                escape(output)
            )?;
            let notes = bash_notes(*exit_code, *cancelled, *truncated);
            if !notes.is_empty() {
                writeln!(out, "<p class=\"meta\">{notes}</p>")?;
            }
        }
        Body::Compaction {
            summary,
            tokens_before,
        } => {
            writeln!(
                out,
                "<p class=\"meta\">{}</p>",
                compaction_note(*tokens_before)
            )?;
            markdown(summary, out)?;
        }
        Body::BranchSummary { summary } => markdown(summary, out)?,
        Body::ModelChange { model } => writeln!(out, "<p><code>{}</code></p>", escape(model))?,
        Body::ThinkingLevel { level } => writeln!(out, "<p><code>{}</code></p>", escape(level))?,
        Body::SessionName { name } => writeln!(out, "<p>{}</p>", escape(name))?,
        Body::Other { json, .. } => writeln!(
            out,
            "<details><summary>JSON</summary><pre><code>{}</code></pre></details>",
            escape(json)
        )?,
    }
    writeln!(out, "</article>")
}

/// The article's class (CSS, and what the browser test counts).
fn class_of(body: &Body) -> &'static str {
    match body {
        Body::User { .. } => "entry user",
        Body::Assistant { error: Some(_), .. } => "entry assistant error",
        Body::Assistant { .. } => "entry assistant",
        Body::ToolResult { is_error: true, .. } => "entry tool-result error",
        Body::ToolResult { .. } => "entry tool-result",
        Body::Bash { .. } => "entry bash",
        Body::Custom { .. } => "entry custom",
        Body::System { .. } => "entry system",
        Body::Compaction { .. } => "entry compaction",
        Body::BranchSummary { .. } => "entry branch-summary",
        Body::ModelChange { .. } | Body::ThinkingLevel { .. } | Body::SessionName { .. } => {
            "entry change"
        }
        Body::Other { .. } => "entry other",
    }
}

fn write_blocks(blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    for block in blocks {
        match block {
            Block::Text(text) => markdown(text, out)?,
            Block::Thinking { text, redacted } => {
                if *redacted {
                    writeln!(out, "<p class=\"meta\">Thinking (redacted)</p>")?;
                } else {
                    writeln!(
                        out,
                        "<details class=\"thinking\"><summary>Thinking</summary>"
                    )?;
                    markdown(text, out)?;
                    writeln!(out, "</details>")?;
                }
            }
            Block::Image { mime_type, data } => {
                if is_image(mime_type, data) {
                    writeln!(
                        out,
                        "<p><img alt=\"image\" src=\"data:{mime_type};base64,{data}\"></p>"
                    )?;
                } else {
                    writeln!(
                        out,
                        "<p class=\"meta\">[image: {}, not shown: not a PNG, JPEG, GIF or WebP image]</p>",
                        escape(mime_type)
                    )?;
                }
            }
            Block::ToolCall {
                id,
                name,
                arguments,
                preview,
            } => writeln!(
                out,
                "<details class=\"tool-call\"><summary>Tool call: <code>{}</code> {}</summary>\n<p class=\"meta\">{}</p><pre><code>{}</code></pre></details>",
                escape(name),
                escape(preview),
                escape(id),
                escape(arguments)
            )?,
            Block::Other(json) => writeln!(
                out,
                "<details><summary>Block</summary><pre><code>{}</code></pre></details>",
                escape(json)
            )?,
        }
    }
    Ok(())
}

/// Message Markdown as HTML: raw HTML as text, links only to safe schemes, images as links.
fn markdown(text: &str, out: &mut dyn Write) -> io::Result<()> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM;
    let mut in_unsafe_link = 0usize;
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Some(Event::Text(html)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            if super::safe_url(&dest_url) {
                Some(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }))
            } else {
                in_unsafe_link += 1;
                None
            }
        }
        Event::End(TagEnd::Link) if in_unsafe_link > 0 => {
            in_unsafe_link -= 1;
            None
        }
        Event::Start(Tag::Image { dest_url, .. }) => {
            Some(Event::Text(CowStr::from(format!("[image: {dest_url}: "))))
        }
        Event::End(TagEnd::Image) => Some(Event::Text(CowStr::Borrowed("]"))),
        other => Some(other),
    });
    let mut html = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut html, events);
    writeln!(out, "<div class=\"text\">{html}</div>")
}

/// Whether `data` is base64 of an image of type `mime_type` that browsers show: the type is
/// one of [`IMAGE_TYPES`], the text is base64 (nothing that could leave the attribute), and
/// the bytes start with that format's signature.
fn is_image(mime_type: &str, data: &str) -> bool {
    use base64::Engine;
    let base64 = data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if !IMAGE_TYPES.contains(&mime_type) || !base64 || data.len() < 16 {
        return false;
    }
    let Ok(head) = base64::engine::general_purpose::STANDARD.decode(&data[..16]) else {
        return false;
    };
    match mime_type {
        "image/png" => head.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => head.starts_with(&[0xff, 0xd8, 0xff]),
        "image/gif" => head.starts_with(b"GIF8"),
        "image/webp" => head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP"),
        _ => false,
    }
}

/// Text for HTML content and attribute values (`&`, `<`, `>`, `"`, `'`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(text: &str) -> String {
        let mut out = Vec::new();
        markdown(text, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn raw_html_is_text() {
        let html = rendered("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn only_safe_links_stay_links() {
        let html = rendered(
            "[a](javascript:alert(1)) [b]( JAVASCRIPT:x) [c](https://x.org) [d](#e) [f](data:text/html,x)",
        );
        assert!(!html.to_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("<a href=\"https://x.org\">c</a>"), "{html}");
        assert!(html.contains("<a href=\"#e\">d</a>"), "{html}");
        assert!(html.contains("<p>a b <a"), "{html}");
    }

    #[test]
    fn markdown_images_are_not_fetched() {
        let html = rendered("![cat](https://example.org/cat.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("[image: https://example.org/cat.png: cat]"),
            "{html}"
        );
    }

    #[test]
    fn only_real_images_are_shown() {
        const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
        assert!(is_image("image/png", PNG));
        assert!(
            !is_image("image/jpeg", PNG),
            "the signature decides, not the name"
        );
        assert!(!is_image("text/html", PNG));
        assert!(!is_image("image/png", "base64data"));
        assert!(!is_image("image/png", &format!("{PNG}\" onerror=\"x")));
        assert!(!is_image(
            "image/svg+xml",
            "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="
        ));
    }

    #[test]
    fn escape_covers_attributes() {
        assert_eq!(
            escape(r#"<a href="x" title='y'>&"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;"
        );
    }
}
