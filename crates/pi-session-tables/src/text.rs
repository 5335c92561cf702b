//! What the tables take from an entry's line: its timestamp, the few members of the entry
//! types that have columns, and a message's text, thinking and tool calls. Read in one pass
//! with a [`Cursor`]: the rest of the line is skipped, not built, and texts without escapes
//! are borrowed from the line, not copied.

use pi_session_format::json::{self, Cursor, JsValue, ParseError, Span};
use std::borrow::Cow;

/// A text borrowed from the line, or unescaped.
pub type Text<'a> = Option<Cow<'a, str>>;

/// The members of an entry line the tables keep.
#[derive(Debug, Default)]
pub struct Line<'a> {
    /// `timestamp`, any value (the tables read it as pi's `Date` does).
    pub timestamp: Option<JsValue>,
    /// Where the raw `timestamp` value is in the line.
    pub timestamp_span: Option<Span>,
    /// Where the raw `id` value is in the line.
    pub id_span: Option<Span>,
    /// `message`, when it is an object.
    pub message: Option<Message<'a>>,
    /// `summary` (compactions, branch summaries).
    pub summary: Text<'a>,
    /// `firstKeptEntryId` (compactions).
    pub first_kept_entry_id: Text<'a>,
    /// `tokensBefore` (compactions).
    pub tokens_before: Option<f64>,
    /// `fromId` (branch summaries).
    pub from_id: Text<'a>,
    /// `kind` (`usage` entries).
    pub kind: Text<'a>,
    /// `purpose` (omp's `model_usage` entries: what the call was for, as pi's `kind`).
    pub purpose: Text<'a>,
    /// `provider` (`usage` entries).
    pub provider: Text<'a>,
    /// `model` (`usage` entries).
    pub model: Text<'a>,
}

/// The members of a `message` the tables keep.
#[derive(Debug, Default)]
pub struct Message<'a> {
    /// `role`, when a string.
    pub role: Text<'a>,
    /// `content` when a string, else its `text` blocks joined by a newline.
    pub content_text: Text<'a>,
    /// The `thinking` blocks joined by a newline.
    pub thinking: Text<'a>,
    /// The `toolCall` blocks.
    pub calls: Vec<Call<'a>>,
    /// `toolCallId`.
    pub tool_call_id: Text<'a>,
    /// `toolName`.
    pub tool_name: Text<'a>,
    /// `isError`, when a boolean.
    pub is_error: Option<bool>,
    /// `stopReason`.
    pub stop_reason: Text<'a>,
    /// `errorMessage`.
    pub error_message: Text<'a>,
    /// `timestamp`, when a number.
    pub timestamp: Option<f64>,
    /// `command` (bash executions).
    pub command: Text<'a>,
    /// `output` (bash executions).
    pub output: Text<'a>,
    /// `summary` (summary messages).
    pub summary: Text<'a>,
}

/// One `toolCall` block.
#[derive(Debug, Clone, Default)]
pub struct Call<'a> {
    /// `id`, when a string.
    pub id: Text<'a>,
    /// `name`, when a string.
    pub name: Text<'a>,
    /// `arguments` as JSON text (`JSON.stringify` form).
    pub arguments: Text<'a>,
}

impl<'a> Message<'a> {
    /// The text of the message (the `messages.text` column): a bash execution's command and
    /// output, a summary message's summary, else the content's text.
    pub fn text(&self) -> Text<'a> {
        match self.role.as_deref() {
            Some("bashExecution") => {
                let mut text = None;
                for part in [&self.command, &self.output].into_iter().flatten() {
                    join(&mut text, part.clone());
                }
                text
            }
            Some("branchSummary" | "compactionSummary") => self.summary.clone(),
            _ => self.content_text.clone(),
        }
    }
}

/// Appends `text` to `into`, after a newline when there is something already.
fn join<'a>(into: &mut Text<'a>, text: Cow<'a, str>) {
    match into {
        Some(s) => {
            let s = s.to_mut();
            s.push('\n');
            s.push_str(&text);
        }
        None => *into = Some(text),
    }
}

/// Reads the members the tables keep from the entry line `text` (a JSON object).
pub fn line(text: &str) -> Result<Line<'_>, ParseError> {
    let mut line = Line::default();
    let mut c = Cursor::new(text);
    c.object(|c, key| {
        match key {
            b"timestamp" => {
                let start = c.position();
                line.timestamp = Some(c.value()?);
                line.timestamp_span = Some((start, c.position()));
            }
            b"id" => {
                let start = c.position();
                c.skip()?;
                line.id_span = Some((start, c.position()));
            }
            b"message" => line.message = message(c)?,
            b"summary" => line.summary = c.string()?,
            b"firstKeptEntryId" => line.first_kept_entry_id = c.exact_string()?,
            b"tokensBefore" => line.tokens_before = c.number()?,
            b"fromId" => line.from_id = c.exact_string()?,
            b"kind" => line.kind = c.exact_string()?,
            b"purpose" => line.purpose = c.exact_string()?,
            b"provider" => line.provider = c.exact_string()?,
            b"model" => line.model = c.exact_string()?,
            _ => {}
        }
        Ok(())
    })?;
    c.end()?;
    Ok(line)
}

/// The message at the cursor, when it is an object.
fn message<'a>(c: &mut Cursor<'a>) -> Result<Option<Message<'a>>, ParseError> {
    let mut m = Message::default();
    let is_object = c.object(|c, key| {
        match key {
            b"role" => m.role = c.exact_string()?,
            b"content" => {
                // The last `content` is the one JSON.parse keeps.
                m.content_text = None;
                m.thinking = None;
                m.calls.clear();
                content(c, &mut m)?;
            }
            b"toolCallId" => m.tool_call_id = c.exact_string()?,
            b"toolName" => m.tool_name = c.exact_string()?,
            b"isError" => m.is_error = c.boolean()?,
            b"stopReason" => m.stop_reason = c.exact_string()?,
            b"errorMessage" => m.error_message = c.string()?,
            b"timestamp" => m.timestamp = c.number()?,
            b"command" => m.command = c.string()?,
            b"output" => m.output = c.string()?,
            b"summary" => m.summary = c.string()?,
            _ => {}
        }
        Ok(())
    })?;
    // Bash executions and summary messages have no blocks of their own (what their content
    // holds is not theirs to show).
    if matches!(
        m.role.as_deref(),
        Some("bashExecution" | "branchSummary" | "compactionSummary")
    ) {
        m.thinking = None;
        m.calls.clear();
    }
    Ok(is_object.then_some(m))
}

/// A message's `content`: a string, or an array of blocks.
fn content<'a>(c: &mut Cursor<'a>, m: &mut Message<'a>) -> Result<(), ParseError> {
    if c.at_string() {
        m.content_text = c.string()?;
        return Ok(());
    }
    c.array(|c| {
        let mut block = Block::default();
        c.object(|c, key| {
            match key {
                b"type" => block.kind = c.exact_string()?,
                b"text" => block.text = c.string()?,
                b"thinking" => block.thinking = c.string()?,
                b"id" => block.id = c.exact_string()?,
                b"name" => block.name = c.exact_string()?,
                b"arguments" => {
                    let raw = c.raw()?;
                    block.arguments = Some(if json::is_canonical(raw.as_bytes()) {
                        Cow::Borrowed(raw)
                    } else {
                        Cow::Owned(json::to_string(&json::parse(raw)?))
                    });
                }
                _ => {}
            }
            Ok(())
        })?;
        match block.kind.as_deref() {
            Some("text") => {
                if let Some(t) = block.text {
                    join(&mut m.content_text, t);
                }
            }
            Some("thinking") => {
                if let Some(t) = block.thinking {
                    join(&mut m.thinking, t);
                }
            }
            Some("toolCall") => m.calls.push(Call {
                id: block.id,
                name: block.name,
                arguments: block.arguments,
            }),
            _ => {}
        }
        Ok(())
    })?;
    Ok(())
}

/// The members of a content block.
#[derive(Default)]
struct Block<'a> {
    kind: Text<'a>,
    text: Text<'a>,
    thinking: Text<'a>,
    id: Text<'a>,
    name: Text<'a>,
    arguments: Text<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_joined_and_calls_kept() {
        let l = line(
            r#"{"type":"message","timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"a"},{"type":"text","text":"b\n"},{"type":"toolCall","id":"c","name":"ls","arguments":{"p" : "."}}],"timestamp":5}}"#,
        )
        .unwrap();
        let m = l.message.unwrap();
        assert_eq!(m.text().as_deref(), Some("a\nb\n"));
        assert_eq!(m.thinking.as_deref(), Some("hmm"));
        assert_eq!(m.calls[0].arguments.as_deref(), Some(r#"{"p":"."}"#));
        assert_eq!(m.timestamp, Some(5.0));
        assert!(matches!(l.timestamp, Some(JsValue::String(_))));
        let bash =
            line(r#"{"message":{"command":"ls","output":"x","role":"bashExecution"}}"#).unwrap();
        assert_eq!(bash.message.unwrap().text().as_deref(), Some("ls\nx"));
    }

    #[test]
    fn the_last_of_repeated_members_counts_and_odd_values_are_skipped() {
        let l = line(
            r#"{"message":{"role":"user","content":"first","content":[{"type":"text","text":1},{"type":"text","text":"second"}],"isError":"no"}}"#,
        )
        .unwrap();
        let m = l.message.unwrap();
        assert_eq!(m.text().as_deref(), Some("second"));
        assert_eq!(m.is_error, None);
        let l = line(r#"{"message":"text"}"#).unwrap();
        assert!(l.message.is_none());
        // Ids and names holding a lone surrogate are left out (two such ids would read the
        // same); texts read it as replacement characters.
        let l = line(
            r#"{"message":{"role":"assistant","content":[{"type":"toolCall","id":"\ud800","name":"n"},{"type":"text","text":"t\udc00"}]}}"#,
        )
        .unwrap();
        let m = l.message.unwrap();
        assert_eq!(m.calls[0].id, None);
        assert_eq!(m.text().as_deref(), Some("t\u{FFFD}\u{FFFD}\u{FFFD}"));
        // A bash execution's content blocks are not its own.
        let bash = line(r#"{"message":{"role":"bashExecution","command":"ls","content":[{"type":"thinking","thinking":"x"},{"type":"toolCall","id":"c"}]}}"#).unwrap();
        let m = bash.message.unwrap();
        assert!(m.calls.is_empty() && m.thinking.is_none());
        assert!(line(r#"{"message":{"content":[}}"#).is_err());
    }
}
