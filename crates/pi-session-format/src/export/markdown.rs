//! A [`Transcript`](super::Transcript) as Markdown: a title, the session's facts, then one section per entry.
//!
//! Every string from the session that is not message text is text to a Markdown reader:
//! in a code span, or on one line with every character Markdown or HTML could read as
//! syntax escaped (`inline`). Message text stays Markdown (models write Markdown), with
//! guards so that text from the session cannot change the document around it: raw HTML is
//! turned into text (`<` becomes `&lt;` outside code), and a code fence left open is closed
//! at the end of its text. Tool arguments, tool output and summaries go in fences longer
//! than any backtick run they hold. Images are named, not embedded (the HTML export shows
//! them).
//!
//! Then each section is read back with pulldown-cmark, as CommonMark and with every
//! extension but metadata blocks (`defuse`): whatever still reads as raw HTML, an autolink,
//! a link or reference definition to a scheme other than `http`, `https` and `mailto`, an
//! image, or heading attributes is made text (`&lt;`, `&#91;`, `&#123;`), until nothing is
//! left, so no renderer following CommonMark turns the session's text into markup.

use super::transcript::{Block, Body, Item, bash_notes, compaction_note, usage_line};
use std::io::{self, Write};

/// Writes `page` (a [`Transcript`](super::Transcript), or a [`Branch`](super::Branch) made and
/// written a batch at a time) as
/// Markdown.
pub fn write<'i>(page: impl Into<super::Page<'i>>, out: &mut dyn Write) -> io::Result<()> {
    let page = page.into();
    let (transcript, entries) = (page.head, page.entries);
    let title = transcript
        .name
        .clone()
        .unwrap_or_else(|| format!("Session {}", transcript.session_id));
    writeln!(out, "# {}\n", inline(&title))?;
    writeln!(out, "- Session: {}", code_span(&transcript.session_id))?;
    writeln!(out, "- Working directory: {}", code_span(&transcript.cwd))?;
    writeln!(out, "- Started: {}", inline(&transcript.created))?;
    match &transcript.leaf {
        Some(leaf) => writeln!(
            out,
            "- Branch: {entries} entries, ending at {}",
            code_span(leaf)
        )?,
        None => writeln!(out, "- Branch: no entries")?,
    }
    writeln!(out)?;
    super::write_items(page.items, out, |item, out| {
        writeln!(out, "---\n")?;
        let mut section = Vec::new();
        write_item(item, &mut section)?;
        let section = String::from_utf8(section).map_err(io::Error::other)?;
        out.write_all(defuse(section).as_bytes())
    })
}

fn write_item(item: &Item, out: &mut dyn Write) -> io::Result<()> {
    let heading = heading(&item.body, &inline);
    write!(out, "## {heading}")?;
    if !item.timestamp.is_empty() {
        write!(out, " · {}", inline(&item.timestamp))?;
    }
    if !item.id.is_empty() {
        write!(out, " · {}", code_span(&item.id))?;
    }
    writeln!(out)?;
    if let Some(label) = &item.label {
        writeln!(out, "\n🏷 Label: {}", code_span(label))?;
    }
    writeln!(out)?;
    match &item.body {
        Body::User { blocks } | Body::Custom { blocks, .. } | Body::System { blocks } => {
            write_blocks(blocks, out)
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
                writeln!(out, "**Error ({}):**\n", inline(stop_reason))?;
                fenced(error, "", out)?;
            }
            if let Some(u) = usage {
                writeln!(
                    out,
                    "*{}*
",
                    usage_line(u)
                )?;
            }
            Ok(())
        }
        Body::ToolResult { blocks, .. } => {
            for block in blocks {
                match block {
                    Block::Text(text) => fenced(text, "", out)?,
                    other => write_blocks(std::slice::from_ref(other), out)?,
                }
            }
            Ok(())
        }
        Body::Bash {
            command,
            output,
            exit_code,
            cancelled,
            truncated,
        } => {
            fenced(command, "sh", out)?;
            fenced(output, "", out)?;
            let notes = bash_notes(*exit_code, *cancelled, *truncated);
            if !notes.is_empty() {
                writeln!(out, "*{notes}*\n")?;
            }
            Ok(())
        }
        Body::Compaction {
            summary,
            tokens_before,
        } => {
            writeln!(out, "*{}*\n", compaction_note(*tokens_before))?;
            markdown_text(summary, out)
        }
        Body::BranchSummary { summary } => markdown_text(summary, out),
        Body::ModelChange { model } => writeln!(out, "Model: {}\n", code_span(model)),
        Body::ThinkingLevel { level } => writeln!(out, "Thinking level: {}\n", code_span(level)),
        Body::SessionName { name } => writeln!(out, "Name: {}\n", code_span(name)),
        Body::Other { json, .. } => fenced(json, "json", out),
    }
}

/// The section heading of an entry, the session's strings in it written by `text`.
pub(crate) fn heading(body: &Body, text: &dyn Fn(&str) -> String) -> String {
    match body {
        Body::User { .. } => "User".to_owned(),
        Body::Assistant { model, .. } => format!("Assistant ({})", text(model)),
        Body::ToolResult {
            tool_name,
            is_error,
            ..
        } => format!(
            "Tool result: {}{}",
            text(tool_name),
            if *is_error { " (error)" } else { "" }
        ),
        Body::Bash { .. } => "Shell command".to_owned(),
        Body::Custom { custom_type, .. } => format!("Extension message: {}", text(custom_type)),
        Body::System { .. } => "System prompt".to_owned(),
        Body::Compaction { .. } => "Compaction".to_owned(),
        Body::BranchSummary { .. } => "Branch summary".to_owned(),
        Body::ModelChange { .. } => "Model change".to_owned(),
        Body::ThinkingLevel { .. } => "Thinking level change".to_owned(),
        Body::SessionName { .. } => "Session name".to_owned(),
        Body::Other { kind, .. } => format!("Entry: {}", text(kind)),
    }
}

fn write_blocks(blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    for block in blocks {
        match block {
            Block::Text(text) => markdown_text(text, out)?,
            Block::Thinking { text, redacted } => {
                if *redacted {
                    writeln!(out, "> *Thinking (redacted)*\n")?;
                } else {
                    writeln!(out, "> *Thinking*")?;
                    writeln!(out, ">")?;
                    for line in text.lines() {
                        writeln!(out, "> {}", escape_html_outside_code(line))?;
                    }
                    writeln!(out)?;
                }
            }
            Block::Image { mime_type, data } => writeln!(
                out,
                "*[image: {}, {} bytes of base64]*\n",
                inline(mime_type),
                data.len()
            )?,
            Block::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                writeln!(
                    out,
                    "**Tool call** {} ({})\n",
                    code_span(name),
                    code_span(id)
                )?;
                fenced(arguments, "json", out)?;
            }
            Block::Other(json) => fenced(json, "json", out)?,
        }
    }
    Ok(())
}

/// Message text as Markdown, raw HTML made text, an open fence closed.
fn markdown_text(text: &str, out: &mut dyn Write) -> io::Result<()> {
    let mut fence: Option<(u8, usize)> = None;
    for line in text.lines() {
        let opener = fence_of(line);
        match (fence, opener) {
            (None, Some(f)) => {
                fence = Some(f);
                writeln!(out, "{line}")?;
            }
            (Some((ch, len)), Some((c, l))) if c == ch && l >= len && is_closing(line) => {
                fence = None;
                writeln!(out, "{line}")?;
            }
            (Some(_), _) => writeln!(out, "{line}")?,
            (None, None) => writeln!(out, "{}", escape_html_outside_code(line))?,
        }
    }
    if let Some((ch, len)) = fence {
        writeln!(out, "{}", (ch as char).to_string().repeat(len))?;
    }
    writeln!(out)
}

/// A code fence line (up to three spaces, then three or more backticks or tildes): the
/// character and the run's length.
fn fence_of(line: &str) -> Option<(u8, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line.as_bytes()[indent..];
    let ch = *rest.first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.iter().take_while(|&&b| b == ch).count();
    // A backtick fence's info string holds no backtick (CommonMark 4.5).
    let info_ok = ch != b'`' || !rest[len..].contains(&b'`');
    (len >= 3 && info_ok).then_some((ch, len))
}

/// A fence line with nothing after the run: it closes an open fence.
fn is_closing(line: &str) -> bool {
    let t = line.trim();
    t.bytes().all(|b| b == t.as_bytes()[0])
}

/// `<` and `&` as entities, except inside code spans (`` `…` ``).
fn escape_html_outside_code(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            if let Some(end) = closing_run(bytes, i + run, run) {
                out.push_str(&line[i..end + run]);
                i = end + run;
                continue;
            }
            out.push_str(&line[i..i + run]);
            i += run;
            continue;
        }
        let next = bytes[i..]
            .iter()
            .position(|&b| matches!(b, b'`' | b'<' | b'&'))
            .map_or(bytes.len(), |p| i + p);
        out.push_str(&line[i..next]);
        i = next;
        if i < bytes.len() {
            match bytes[i] {
                b'<' => {
                    out.push_str("&lt;");
                    i += 1;
                }
                b'&' => {
                    out.push_str("&amp;");
                    i += 1;
                }
                _ => {}
            }
        }
    }
    out
}

/// Where a run of exactly `run` backticks starts at or after `from`.
fn closing_run(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let len = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            if len == run {
                return Some(i);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    None
}

/// `text` in a fence longer than any backtick run it holds.
fn fenced(text: &str, info: &str, out: &mut dyn Write) -> io::Result<()> {
    let longest = longest_run(text, b'`');
    let fence = "`".repeat(longest.max(2) + 1);
    writeln!(out, "{fence}{info}")?;
    write!(out, "{text}")?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "{fence}\n")
}

/// `text` as an inline code span, on one line.
fn code_span(text: &str) -> String {
    let text = one_line(text);
    let ticks = "`".repeat(longest_run(&text, b'`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.is_empty() {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

fn longest_run(text: &str, ch: u8) -> usize {
    text.as_bytes()
        .split(|&b| b != ch)
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0)
}

/// Line breaks as spaces, for headings and list items.
pub(crate) fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// A string of the session as Markdown text on one line: every ASCII character that
/// Markdown or HTML could read as syntax (HTML, entities, links, emphasis, code, headings'
/// closing `#`s and attributes, tables) escaped with a backslash.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in one_line(text).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '#' | '~' | '|' | '{' | '}'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// How many times [`defuse`] reads a section again before it escapes every `<`, `[` and `{`.
const DEFUSE_ROUNDS: usize = 8;

/// `section` with whatever CommonMark (or pulldown-cmark with its extensions) would read as
/// raw HTML, an unsafe link, an image or heading attributes made text (see the module docs).
/// Each round makes at least one such `<`, `[` or `{` an entity; after [`DEFUSE_ROUNDS`], all
/// of them are.
fn defuse(mut section: String) -> String {
    for _ in 0..DEFUSE_ROUNDS {
        let mut spots = Vec::new();
        let extensions = pulldown_cmark::Options::all()
            - pulldown_cmark::Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
            - pulldown_cmark::Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
        for options in [pulldown_cmark::Options::empty(), extensions] {
            unsafe_spots(&section, options, &mut spots);
        }
        if spots.is_empty() {
            return section;
        }
        if spots.contains(&NO_SPOT) {
            break;
        }
        spots.sort_unstable();
        spots.dedup();
        section = entities(&section, |i| spots.binary_search(&i).is_ok());
    }
    entities(&section, |_| true)
}

/// What [`unsafe_spots`] adds for markup it finds without the character that makes it (not
/// expected): [`defuse`] then escapes every `<`, `[` and `{`.
const NO_SPOT: usize = usize::MAX;

/// `text` with the `<`, `[` and `{` at the byte offsets `at` accepts written as entities.
fn entities(text: &str, at: impl Fn(usize) -> bool) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        match c {
            '<' if at(i) => out.push_str("&lt;"),
            '[' if at(i) => out.push_str("&#91;"),
            '{' if at(i) => out.push_str("&#123;"),
            c => out.push(c),
        }
    }
    out
}

/// Adds to `spots` the offsets of the `<`, `[` and `{` that make `text`, read with
/// `options`, hold raw HTML, an autolink, a link (or reference definition) to an unsafe
/// scheme, an image or heading attributes.
fn unsafe_spots(text: &str, options: pulldown_cmark::Options, spots: &mut Vec<usize>) {
    use pulldown_cmark::{Event, LinkType, Parser, Tag};
    let first = |range: std::ops::Range<usize>, c: u8| {
        text.as_bytes()
            .get(range.clone())
            .and_then(|b| b.iter().position(|&b| b == c))
            .map(|p| range.start + p)
    };
    let mut parser = Parser::new_ext(text, options).into_offset_iter();
    for (event, range) in parser.by_ref() {
        match event {
            Event::Html(_) | Event::InlineHtml(_) => {
                let bytes = text.as_bytes().get(range.clone()).unwrap_or_default();
                spots.extend(
                    bytes
                        .iter()
                        .enumerate()
                        .filter(|&(_, &b)| b == b'<')
                        .map(|(p, _)| range.start + p),
                );
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if !super::safe_url(&dest_url) => {
                let opener = match link_type {
                    LinkType::Autolink | LinkType::Email => b'<',
                    _ => b'[',
                };
                spots.push(first(range, opener).unwrap_or(NO_SPOT));
            }
            Event::Start(Tag::Image { .. }) => spots.push(first(range, b'[').unwrap_or(NO_SPOT)),
            Event::Start(Tag::Heading {
                id, classes, attrs, ..
            }) if id.is_some() || !classes.is_empty() || !attrs.is_empty() => {
                let heading = text.as_bytes().get(range.clone()).unwrap_or_default();
                spots.push(
                    heading
                        .iter()
                        .rposition(|&b| b == b'{')
                        .map_or(NO_SPOT, |p| range.start + p),
                );
            }
            _ => {}
        }
    }
    for (_, def) in parser.reference_definitions().iter() {
        if !super::safe_url(&def.dest) {
            spots.push(first(def.span.clone(), b'[').unwrap_or(NO_SPOT));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_outside_code_becomes_text() {
        assert_eq!(
            escape_html_outside_code("a <b> `<c>` & ``x`<y`` <"),
            "a &lt;b> `<c>` &amp; ``x`<y`` &lt;"
        );
        assert_eq!(escape_html_outside_code("`unclosed <x"), "`unclosed &lt;x");
    }

    #[test]
    fn an_open_fence_is_closed_and_fenced_text_kept() {
        let mut out = Vec::new();
        markdown_text(
            "before <i>\n````rust\nlet a = \"<b>\";\n```\nstill code",
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "before &lt;i>\n````rust\nlet a = \"<b>\";\n```\nstill code\n````\n\n"
        );
    }

    #[test]
    fn fences_and_code_spans_outgrow_their_content() {
        let mut out = Vec::new();
        fenced("a ```` b", "", &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "`````\na ```` b\n`````\n\n"
        );
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("two\nlines"), "`two lines`");
    }

    /// Session strings outside message text are text: nothing in them is syntax.
    #[test]
    fn inline_strings_are_text() {
        assert_eq!(
            inline("<b onclick=x>[a](javascript:y) `c` *d* #\n{.e}"),
            "\\<b onclick=x\\>\\[a\\](javascript:y) \\`c\\` \\*d\\* \\# \\{.e\\}"
        );
    }

    /// What still reads as markup once the line guards are done is made text, and ordinary
    /// Markdown is left alone.
    #[test]
    fn defuse_leaves_no_markup() {
        for (md, expected) in [
            (
                "[a](javascript:alert(1))\n",
                "&#91;a](javascript:alert(1))\n",
            ),
            ("[a](java\\script:x)\n", "&#91;a](java\\script:x)\n"),
            ("[a](javascript\\:x)\n", "&#91;a](javascript\\:x)\n"),
            ("[b[a](javascript:x)\n", "&#91;b&#91;a](javascript:x)\n"),
            (
                "[x]\n\n[x]: javascript:alert(1)\n",
                "&#91;x]\n\n&#91;x]: javascript:alert(1)\n",
            ),
            // A definition another section could use.
            (
                "[y]: javascript:alert(1)\n",
                "&#91;y]: javascript:alert(1)\n",
            ),
            ("<javascript:alert(1)>\n", "&lt;javascript:alert(1)>\n"),
            ("<b>hi</b>\n", "&lt;b>hi&lt;/b>\n"),
            ("![t](http://x/y.png)\n", "!&#91;t](http://x/y.png)\n"),
            (
                "# hi {onclick=alert(1)}\n",
                "# hi &#123;onclick=alert(1)}\n",
            ),
            ("hi {onclick=x}\n==\n", "hi &#123;onclick=x}\n==\n"),
            ("a ` b\nc ` <i>x</i> `\n", "a ` b\nc ` &lt;i>x&lt;/i> `\n"),
            ("\\`<i>`\n", "\\`&lt;i>`\n"),
            (
                "[ok](https://e.org) **b** `<c>`\n\n```\n<d>\n```\n",
                "[ok](https://e.org) **b** `<c>`\n\n```\n<d>\n```\n",
            ),
        ] {
            assert_eq!(defuse(md.to_owned()), expected, "{md}");
        }
        // Whatever the rounds leave is escaped whole.
        let nested = format!("{}a](javascript:x)\n", "[".repeat(DEFUSE_ROUNDS + 2));
        let out = defuse(nested);
        assert!(!out.contains('['), "{out}");
    }

    /// A backtick fence's info string holds no backtick: such a line is text, not a fence
    /// to close at the end.
    #[test]
    fn a_backtick_info_string_with_a_backtick_opens_no_fence() {
        assert_eq!(fence_of("```a`b"), None);
        assert_eq!(fence_of("~~~a`b"), Some((b'~', 3)));
        let mut out = Vec::new();
        markdown_text("```a`b\n<i>", &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "```a`b\n&lt;i>\n\n");
    }
}
