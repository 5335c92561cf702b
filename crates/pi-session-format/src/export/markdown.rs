//! A [`Transcript`] as Markdown: a title, the session's facts, then one section per entry.
//!
//! Message text stays Markdown (models write Markdown), with two guards so that text from
//! the session cannot change the document around it: raw HTML is turned into text (`<`
//! becomes `&lt;` outside code), and a code fence left open is closed at the end of its
//! text. Tool arguments, tool output and summaries go in fences longer than any backtick
//! run they hold. Images are named, not embedded (the HTML export shows them).

use super::transcript::{Block, Body, Item, Transcript, bash_notes, compaction_note, usage_line};
use std::io::{self, Write};

/// Writes `transcript` as Markdown.
pub fn write(transcript: &Transcript, out: &mut dyn Write) -> io::Result<()> {
    let title = transcript
        .name
        .clone()
        .unwrap_or_else(|| format!("Session {}", transcript.session_id));
    writeln!(out, "# {}\n", one_line(&title))?;
    writeln!(out, "- Session: {}", code_span(&transcript.session_id))?;
    writeln!(out, "- Working directory: {}", code_span(&transcript.cwd))?;
    writeln!(out, "- Started: {}", one_line(&transcript.created))?;
    match &transcript.leaf {
        Some(leaf) => writeln!(
            out,
            "- Branch: {} entries, ending at {}",
            transcript.items.len(),
            code_span(leaf)
        )?,
        None => writeln!(out, "- Branch: no entries")?,
    }
    writeln!(out)?;
    super::write_items(&transcript.items, out, |item, out| {
        writeln!(out, "---\n")?;
        write_item(item, out)
    })
}

fn write_item(item: &Item, out: &mut dyn Write) -> io::Result<()> {
    let heading = heading(&item.body);
    write!(out, "## {heading}")?;
    if !item.timestamp.is_empty() {
        write!(out, " · {}", one_line(&item.timestamp))?;
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
                writeln!(out, "**Error ({}):**\n", one_line(stop_reason))?;
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

/// The section heading of an entry.
pub(crate) fn heading(body: &Body) -> String {
    match body {
        Body::User { .. } => "User".to_owned(),
        Body::Assistant { model, .. } => format!("Assistant ({})", one_line(model)),
        Body::ToolResult {
            tool_name,
            is_error,
            ..
        } => format!(
            "Tool result: {}{}",
            one_line(tool_name),
            if *is_error { " (error)" } else { "" }
        ),
        Body::Bash { .. } => "Shell command".to_owned(),
        Body::Custom { custom_type, .. } => format!("Extension message: {}", one_line(custom_type)),
        Body::System { .. } => "System prompt".to_owned(),
        Body::Compaction { .. } => "Compaction".to_owned(),
        Body::BranchSummary { .. } => "Branch summary".to_owned(),
        Body::ModelChange { .. } => "Model change".to_owned(),
        Body::ThinkingLevel { .. } => "Thinking level change".to_owned(),
        Body::SessionName { .. } => "Session name".to_owned(),
        Body::Other { kind, .. } => format!("Entry: {}", one_line(kind)),
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
                one_line(mime_type),
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
    (len >= 3).then_some((ch, len))
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
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
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
}
