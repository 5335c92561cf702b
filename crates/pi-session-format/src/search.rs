//! Searching a session: the texts a search looks at ([`texts`]): every message's text and
//! thinking, every tool call (its name and arguments as JSON) and tool result, custom
//! messages, branch and compaction summaries — each with its line, entry id, role, and whether
//! it is on the branch pi resumes; and a regular expression ([`Pattern`], the `regex` crate)
//! matched over them ([`find`], [`any`]), skipping unparsed the lines in which the pattern
//! cannot match (the raw-line prefilter, where `regex-syntax` shows the pattern cannot match
//! across JSON's escapes). Linear in the texts: a match's snippet is read back from where it
//! starts, never counted from the start of its text.

use crate::json::{self, JsValue};
use crate::session::{Key, Session};
use crate::tree::Leaf;
use regex::{Regex, RegexBuilder};
use std::collections::BTreeMap;
use std::ops::ControlFlow;

/// Whose text it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A user message.
    User,
    /// An assistant message: its text, thinking and tool calls.
    Assistant,
    /// A tool result, or a bash execution's output.
    Tool,
    /// Anything else: custom messages, summaries.
    Other,
}

impl Role {
    /// `user`, `assistant`, `tool` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Other => "other",
        }
    }
}

/// One text to search.
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    /// The line of the entry (1-based).
    pub line: usize,
    /// The entry's id, when it is a string.
    pub id: Option<String>,
    /// Whose text it is.
    pub role: Role,
    /// What part of the entry: `text`, `thinking`, `toolCall`, `toolResult`, `command`,
    /// `output`, `summary`.
    pub field: &'static str,
    /// Whether the entry is on the branch pi resumes (the path to its leaf).
    pub on_path: bool,
    /// The text.
    pub text: String,
}

fn push_blocks(content: Option<&JsValue>, role: Role, out: &mut Vec<(Role, &'static str, String)>) {
    match content {
        Some(JsValue::String(s)) => out.push((role, "text", s.to_string_lossy())),
        Some(JsValue::Array(blocks)) => {
            for b in &blocks.0 {
                match b.get("type").and_then(JsValue::as_str) {
                    Some("text") => {
                        if let Some(t) = b.get("text").and_then(JsValue::as_str) {
                            out.push((role, "text", t.to_owned()));
                        }
                    }
                    Some("thinking") => {
                        if let Some(t) = b.get("thinking").and_then(JsValue::as_str) {
                            out.push((role, "thinking", t.to_owned()));
                        }
                    }
                    Some("toolCall") => {
                        let name = b.get("name").and_then(JsValue::as_str).unwrap_or_default();
                        out.push((role, "toolCall", tool_call_text(name, b.get("arguments"))));
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The texts of one entry's value.
fn entry_texts(value: &JsValue) -> Vec<(Role, &'static str, String)> {
    let mut out = Vec::new();
    let string = |key: &str| value.get(key).and_then(JsValue::as_str).map(str::to_owned);
    match value.get("type").and_then(JsValue::as_str) {
        Some("message") => {
            let Some(m) = value.get("message") else {
                return out;
            };
            let text = |key: &str| m.get(key).and_then(JsValue::as_str).map(str::to_owned);
            match m.get("role").and_then(JsValue::as_str) {
                Some("user") => push_blocks(m.get("content"), Role::User, &mut out),
                Some("assistant") => push_blocks(m.get("content"), Role::Assistant, &mut out),
                Some("toolResult") => {
                    let mut blocks = Vec::new();
                    push_blocks(m.get("content"), Role::Tool, &mut blocks);
                    out.extend(blocks.into_iter().map(|(r, _, t)| (r, "toolResult", t)));
                }
                Some("bashExecution") => {
                    out.extend(text("command").map(|t| (Role::Tool, "command", t)));
                    out.extend(text("output").map(|t| (Role::Tool, "output", t)));
                }
                Some("branchSummary" | "compactionSummary") => {
                    out.extend(text("summary").map(|t| (Role::Other, "summary", t)));
                }
                _ => push_blocks(m.get("content"), Role::Other, &mut out),
            }
        }
        Some("custom_message") => push_blocks(value.get("content"), Role::Other, &mut out),
        Some("compaction" | "branch_summary") => {
            out.extend(string("summary").map(|t| (Role::Other, "summary", t)));
        }
        _ => {}
    }
    out
}

/// The text a search looks at for a tool call: its name, a space, its arguments as
/// `JSON.stringify` writes them (nothing when there are none).
fn tool_call_text(name: &str, arguments: Option<&JsValue>) -> String {
    let args = arguments.map(json::to_string).unwrap_or_default();
    format!("{name} {args}")
}

/// The texts a search makes up for the tool calls of an entry line (`name arguments`, the
/// arguments written again), read without parsing the rest of the line: every `toolCall`
/// block of its `message.content` or `content`, possibly more (a caller uses them to decide
/// whether to parse the line, so more is only slower). `None` when the line is not read this
/// way (not an object, or its values are not as expected): parse it to know.
pub fn tool_call_texts(line: &str) -> Option<Vec<String>> {
    let mut texts = Vec::new();
    let mut cursor = json::Cursor::new(line);
    let read = cursor.object(|c, key| match key {
        b"message" => {
            c.object(|c, key| match key {
                b"content" => blocks(c, &mut texts),
                _ => Ok(()),
            })?;
            Ok(())
        }
        b"content" => blocks(c, &mut texts),
        _ => Ok(()),
    });
    matches!(read, Ok(true)).then_some(texts)
}

/// The texts ([`tool_call_text`]) of the `toolCall` blocks of the array at `c` (anything
/// else skipped).
fn blocks(c: &mut json::Cursor<'_>, texts: &mut Vec<String>) -> Result<(), json::ParseError> {
    c.array(|c| {
        let (mut is_call, mut name, mut arguments) = (false, None, None);
        c.object(|c, key| {
            match key {
                b"type" => is_call |= c.exact_string()?.as_deref() == Some("toolCall"),
                b"name" => name = c.exact_string()?,
                b"arguments" => arguments = Some(c.value()?),
                _ => {}
            }
            Ok(())
        })?;
        if is_call {
            texts.push(tool_call_text(
                name.as_deref().unwrap_or_default(),
                arguments.as_ref(),
            ));
        }
        Ok(())
    })?;
    Ok(())
}

/// Every text of `session` a search looks at, in file order (see the [module](self) docs).
pub fn texts(session: &Session<'_>) -> Vec<Text> {
    texts_where(session, &|_| true)
}

/// [`texts`] of the entries whose line `keep` accepts (given the line's JSON text, as read):
/// a caller whose pattern cannot match across JSON's escapes can skip, unparsed, the lines in
/// which the pattern does not even occur raw.
pub fn texts_where(session: &Session<'_>, keep: &dyn Fn(&str) -> bool) -> Vec<Text> {
    let mut out = Vec::new();
    let _ = visit(session, keep, &mut |text| {
        out.push(text);
        ControlFlow::Continue(())
    });
    out
}

/// Hands `f` the texts of the entries whose line `keep` accepts, in file order, until it
/// breaks.
fn visit(
    session: &Session<'_>,
    keep: &dyn Fn(&str) -> bool,
    f: &mut dyn FnMut(Text) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let index = session.index();
    let mut on_path = vec![false; session.records.len()];
    if let Some(leaf) = index.leaf_record(session, &Leaf::Current)
        && let Ok(path) = index.path(session, leaf)
    {
        for i in path {
            if let Some(slot) = on_path.get_mut(i) {
                *slot = true;
            }
        }
    }
    for (i, record) in session.records.iter().enumerate() {
        if !matches!(
            record.entry_type(),
            Some("message" | "custom_message" | "compaction" | "branch_summary")
        ) {
            continue;
        }
        if !record.is_rewritten() && !keep(record.text()) {
            continue;
        }
        let id = match &record.id {
            Key::String(s) => Some(String::from_utf8_lossy(s).into_owned()),
            _ => None,
        };
        for (role, field, text) in entry_texts(&record.value()) {
            f(Text {
                line: record.line,
                id: id.clone(),
                role,
                field,
                on_path: on_path.get(i).copied().unwrap_or(false),
                text,
            })?;
        }
    }
    ControlFlow::Continue(())
}

/// A regular expression to search sessions with (Rust's `regex` syntax), and whether the
/// lines in which it does not occur raw can be skipped unparsed.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    raw_prefilter: bool,
    /// Literals one of which every match holds, none of which JSON's formatting of a tool
    /// call's arguments can make up (see [`call_safe_literals`]); `None` when the pattern has
    /// no such set.
    call_literals: Option<Literals>,
}

/// A pattern that is not a regular expression (or one too big to compile).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(String);

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

impl Pattern {
    /// Compiles `pattern`, without regard to case when `ignore_case`.
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Pattern, PatternError> {
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .build()
            .map_err(|e| PatternError(e.to_string()))?;
        Ok(Pattern {
            regex,
            raw_prefilter: raw_prefilter_is_sound(pattern, ignore_case),
            call_literals: call_safe_literals(pattern, ignore_case),
        })
    }

    /// Whether a session read from `bytes` may hold a match, decided on the raw bytes alone,
    /// as a grep would, without loading anything. False only when the bytes hold no `\u` or
    /// `\/` escape (nothing reads otherwise than it is written) and either
    ///
    /// - none of the literals every match starts with occurs in them: the literals hold no
    ///   character JSON escapes, no tool call's made-up text can hide one
    ///   (`call_safe_literals`), and a literal that is not U+FFFD is not made up by reading
    ///   bytes that are not UTF-8 (anchors and word boundaries do not matter: a match holds
    ///   its literal wherever it is);
    /// - or the raw-line prefilter is sound, the bytes are UTF-8, the pattern matches nowhere
    ///   in them and no tool call is there (a tool call's searched text is made up, see
    ///   [`tool_call_texts`]).
    ///
    /// A v1/v2 file is migrated on loading, which can change its texts: [`in_bytes`] asks this
    /// only of files that stay as they are.
    pub fn may_occur_in(&self, bytes: &[u8]) -> bool {
        use memchr::memmem;
        // A `\u` or `\/` escape: the text reads otherwise than it is written.
        let escapes = || crate::json::optional_escapes(bytes).any();
        if let Some(literals) = &self.call_literals
            && (!literals.fffd || std::str::from_utf8(bytes).is_ok())
        {
            return literals.any.is_match(bytes) || escapes();
        }
        if !self.raw_prefilter {
            return true;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            return true;
        };
        self.regex.is_match(text) || escapes() || memmem::find(bytes, b"\"toolCall\"").is_some()
    }

    /// Whether a line in which the pattern does not occur raw is skipped unparsed (see
    /// `raw_prefilter_is_sound`).
    pub fn uses_raw_prefilter(&self) -> bool {
        self.raw_prefilter
    }

    /// Whether the entry line `line` may hold a match once decoded: false only when the
    /// prefilter is sound and neither the line nor its tool calls' made-up texts match.
    fn may_match(&self, line: &str) -> bool {
        !self.raw_prefilter
            || must_decode(line)
            || self.regex.is_match(line)
            || (line.contains("\"toolCall\"")
                && tool_call_texts(line).is_none_or(|t| t.iter().any(|t| self.regex.is_match(t))))
    }
}

/// Whether a line in which `pattern` does not occur raw cannot hold a match once decoded: no
/// look-around (`^`, `$`, `\b` see the JSON around and inside escapes differently) and nothing
/// that matches a character JSON escapes (`"`, `\`, control characters). The lines that
/// [`must_decode`] names are always decoded.
fn raw_prefilter_is_sound(pattern: &str, ignore_case: bool) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .build()
        .parse(pattern)
    else {
        return false;
    };
    let escaped = |c: u32| c < 0x20 || c == u32::from('"') || c == u32::from('\\');
    // Whether the range `start..=end` holds a character JSON escapes.
    let covers = |start: u32, end: u32| {
        start < 0x20
            || [u32::from('"'), u32::from('\\')]
                .iter()
                .any(|&c| start <= c && c <= end)
    };
    let mut stack = vec![&hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Look(_) => return false,
            HirKind::Class(Class::Unicode(class)) => {
                if class
                    .ranges()
                    .iter()
                    .any(|r| covers(u32::from(r.start()), u32::from(r.end())))
                {
                    return false;
                }
            }
            HirKind::Class(Class::Bytes(class)) => {
                if class
                    .ranges()
                    .iter()
                    .any(|r| covers(u32::from(r.start()), u32::from(r.end())))
                {
                    return false;
                }
            }
            HirKind::Literal(lit) => {
                if lit.0.iter().any(|&b| escaped(u32::from(b))) {
                    return false;
                }
            }
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs.iter()),
            HirKind::Empty => {}
        }
    }
    true
}

/// The literals one of which every match of a pattern starts with ([`call_safe_literals`]),
/// found in raw bytes.
#[derive(Debug, Clone)]
struct Literals {
    /// Any of the literals, as one expression over bytes.
    any: regex::bytes::Regex,
    /// Whether a literal holds U+FFFD, which bytes that are not UTF-8 read as.
    fffd: bool,
}

/// The literals one of which every match of `pattern` starts with, when none of them holds a
/// character JSON escapes (`"`, `\`, control characters: such a literal is written
/// otherwise than it reads) and none can be made up by the way a tool call's searched text is
/// written (`name arguments`, the
/// arguments as `JSON.stringify` writes them): such a literal holds no space (between the
/// name and the arguments) and none of JSON's punctuation (`{}[]:,`), so it lies within one
/// token of that text; it is not made of number characters alone (`1.50` is written `1.5`,
/// `1e2` `100`) nor a part of `null` (what `JSON.stringify` writes for a number too large
/// for a double), so that token is a string, `true` or `false`, written in the line as it
/// is searched. A match in a tool call's text therefore holds a literal that occurs in the
/// raw line. `None` when the pattern has no finite set of such literals.
fn call_safe_literals(pattern: &str, ignore_case: bool) -> Option<Literals> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .build()
        .parse(pattern)
        .ok()?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let literals = seq.literals()?;
    let number = |c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-');
    // Literals that are the case variants of one (a pattern without regard to case has a
    // hundred for a word) are looked for as that one without regard to case (a superset),
    // which lets the regex crate choose a fast prefilter.
    let mut by_folded: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut fffd = false;
    for literal in literals {
        let text = std::str::from_utf8(literal.as_bytes()).ok()?;
        let safe = !text.is_empty()
            && !text.contains(|c: char| c < ' ' || matches!(c, '"' | '\\'))
            && !text.contains([' ', '{', '}', '[', ']', ':', ','])
            && !text.chars().all(number)
            && !"null".contains(text);
        if !safe {
            return None;
        }
        fffd |= text.contains('\u{FFFD}');
        by_folded.entry(text.to_lowercase()).or_default().push(text);
    }
    let (mut exact, mut folded) = (Vec::new(), Vec::new());
    for (lower, variants) in &by_folded {
        // Folded only when that finds each variant: the regex crate's simple case folding
        // does not take every lower-case form back (`İ` lower-cases to `i̇`, which `(?i)`
        // does not match `İ` with).
        let finds_each = || {
            Regex::new(&format!("^(?i:{})$", regex::escape(lower)))
                .is_ok_and(|folded| variants.iter().all(|v| folded.is_match(v)))
        };
        match variants.as_slice() {
            [one] => exact.push(regex::escape(one)),
            _ if finds_each() => folded.push(regex::escape(lower)),
            _ => exact.extend(variants.iter().map(|v| regex::escape(v))),
        }
    }
    let mut parts = Vec::with_capacity(3);
    if !exact.is_empty() {
        parts.push(format!("(?:{})", exact.join("|")));
    }
    if !folded.is_empty() {
        parts.push(format!("(?i:{})", folded.join("|")));
    }
    if parts.is_empty() {
        return None;
    }
    let any = regex::bytes::Regex::new(&parts.join("|")).ok()?;
    Some(Literals { any, fffd })
}

/// Whether a line's texts can read otherwise than its raw text even for a pattern the raw
/// prefilter suits: a `\u` escape (any character) or a `\/` (a slash, which `JSON.stringify`
/// never escapes). A tool call's searched text is made up too (`name arguments`, the
/// arguments written again: other spacing, numbers and key order than the line's): those
/// are read on their own ([`tool_call_texts`]) when the line does not match raw.
fn must_decode(line: &str) -> bool {
    crate::json::optional_escapes(line.as_bytes()).any()
}

/// The characters of context a [`Match`] shows on each side.
pub const CONTEXT_CHARS: usize = 40;

/// One match of a [`Pattern`] in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The line of the entry (1-based).
    pub line: usize,
    /// The entry's id, when it is a string.
    pub id: Option<String>,
    /// Whose text it is.
    pub role: Role,
    /// What part of the entry (see [`Text::field`]).
    pub field: &'static str,
    /// Whether the entry is on the branch pi resumes.
    pub on_path: bool,
    /// Up to [`CONTEXT_CHARS`] characters of the text before the match, as the text holds
    /// them.
    pub before: String,
    /// The matched text.
    pub matched: String,
    /// Up to [`CONTEXT_CHARS`] characters of the text after the match.
    pub after: String,
}

impl Match {
    /// The match `m` of a pattern in the text `t`, with its snippet.
    fn of(t: &Text, m: regex::Match<'_>) -> Match {
        Match {
            line: t.line,
            id: t.id.clone(),
            role: t.role,
            field: t.field,
            on_path: t.on_path,
            before: last_chars(&t.text[..m.start()], CONTEXT_CHARS).to_owned(),
            matched: m.as_str().to_owned(),
            after: first_chars(&t.text[m.end()..], CONTEXT_CHARS).to_owned(),
        }
    }
}

/// The last `n` characters of `s`, read back from its end.
fn last_chars(s: &str, n: usize) -> &str {
    let start = s
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    if n == 0 { "" } else { &s[start..] }
}

/// The first `n` characters of `s`.
fn first_chars(s: &str, n: usize) -> &str {
    let end = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// Every match of `pattern` in the texts of `session` ([`texts`]) of role `role` (any role
/// when `None`), in file order and, within a text, in order; lines that cannot hold a match
/// are not parsed. Time is linear in the texts read and the matches.
pub fn find(session: &Session<'_>, pattern: &Pattern, role: Option<Role>) -> Vec<Match> {
    let mut found = Vec::new();
    let _ = visit(session, &|line| pattern.may_match(line), &mut |t| {
        if role.is_none_or(|r| r == t.role) {
            found.extend(pattern.regex.find_iter(&t.text).map(|m| Match::of(&t, m)));
        }
        ControlFlow::Continue(())
    });
    found
}

/// Whether [`find`] would find anything: stops at the first match.
pub fn any(session: &Session<'_>, pattern: &Pattern, role: Option<Role>) -> bool {
    first(session, pattern, role).is_some()
}

/// How much of a file's matches [`in_bytes`] finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// Every match ([`find`]).
    All,
    /// The first match only, or none (whether there is one, as [`any`] says).
    First,
}

/// The matches of `pattern` in the session `loader` reads from `bytes`, of role `role` (any
/// role when `None`), or the error loading it gives. The session is loaded only when the raw
/// bytes may hold a match ([`Pattern::may_occur_in`]) or loading would migrate or read them
/// as omp's; otherwise only its header is read, which decides whether loading succeeds, so
/// a search of many files in which the pattern is rare reads most of them as fast as a grep.
/// The result is what [`find`] (or, with [`Wanted::First`], the first of it) gives on the
/// loaded session.
pub fn in_bytes<'a>(
    loader: crate::session::Loader<'a, '_>,
    bytes: &'a [u8],
    pattern: &Pattern,
    role: Option<Role>,
    wanted: Wanted,
) -> Result<Vec<Match>, crate::session::LoadError> {
    if !pattern.may_occur_in(bytes)
        && let Some(version) = loader.header_of_pi_file(bytes)
        && !version.rewrite
    {
        return Ok(Vec::new());
    }
    let session = loader.load(bytes)?;
    Ok(match wanted {
        Wanted::All => find(&session, pattern, role),
        Wanted::First => first(&session, pattern, role).into_iter().collect(),
    })
}

/// The first match [`find`] would give.
fn first(session: &Session<'_>, pattern: &Pattern, role: Option<Role>) -> Option<Match> {
    let mut found = None;
    let _ = visit(session, &|line| pattern.may_match(line), &mut |t| {
        if role.is_none_or(|r| r == t.role)
            && let Some(m) = pattern.regex.find(&t.text)
        {
            found = Some(Match::of(&t, m));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PiVersion;

    /// The made-up texts of tool calls read from the line are those the parsed entry gives.
    #[test]
    fn tool_call_texts_are_the_entry_texts() {
        let lines = [
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c","name":"bash","arguments":{"command": "ls", "n": 1.50, "2": 0}},{"type":"toolCall","name":"x"}]}}"#,
            r#"{"type":"custom_message","content":[{"type":"toolCall","name":"n","arguments":[1, 2]}]}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"toolCall","name":"t","arguments":"s"}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":"toolCall"}}"#,
        ];
        for line in lines {
            let from_value: Vec<String> = entry_texts(&json::parse(line).unwrap())
                .into_iter()
                .filter(|(_, field, text)| {
                    *field == "toolCall" || (*field == "toolResult" && text.starts_with("t "))
                })
                .map(|(_, _, text)| text)
                .collect();
            assert_eq!(tool_call_texts(line), Some(from_value), "{line}");
        }
        assert_eq!(tool_call_texts("[1]"), None);
        assert_eq!(tool_call_texts(r#"{"content":[}"#), None);
    }

    #[test]
    fn every_kind_of_text_with_its_place() {
        let file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"find the bug","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Looking"},{"type":"toolCall","id":"c","name":"grep","arguments":{"q":"bug"}}],"timestamp":2}}
{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"grep","content":[{"type":"text","text":"bug.rs:1"}],"isError":false,"timestamp":3}}
"#;
        let s = Session::from_bytes(file, PiVersion::V0_73).expect("loads");
        let t = texts(&s);
        let got: Vec<(usize, &str, &str, bool, &str)> = t
            .iter()
            .map(|t| (t.line, t.role.as_str(), t.field, t.on_path, t.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (2, "user", "text", true, "find the bug"),
                (3, "assistant", "thinking", false, "hmm"),
                (3, "assistant", "text", false, "Looking"),
                (3, "assistant", "toolCall", false, r#"grep {"q":"bug"}"#),
                (4, "tool", "toolResult", true, "bug.rs:1"),
            ]
        );
    }

    fn session_with_user_text(text: &str) -> Vec<u8> {
        let mut file = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"#.to_vec();
        json::write_string(&mut file, text.as_bytes());
        file.extend_from_slice(b",\"timestamp\":1}}\n");
        file
    }

    /// Many matches in one text, among characters of every width: each snippet is the 40
    /// characters before and after the match, as counting from the start of the text gives.
    #[test]
    fn snippets_of_many_matches_in_one_text() {
        let text: String = (0..500)
            .map(|i| format!("é{i}🦀 x{}\n", "ab".repeat(i % 30)))
            .collect();
        let file = session_with_user_text(&text);
        let s = Session::from_bytes(&file, PiVersion::V0_73).expect("loads");
        for (pattern, ignore_case) in [("x", false), ("X(ab)*", true), ("🦀|é", false), ("", false)]
        {
            let p = Pattern::new(pattern, ignore_case).expect("a pattern");
            let found = find(&s, &p, None);
            let regex = RegexBuilder::new(pattern)
                .case_insensitive(ignore_case)
                .build()
                .expect("a pattern");
            let expected: Vec<(String, String, String)> = regex
                .find_iter(&text)
                .map(|m| {
                    let head = &text[..m.start()];
                    let n = head.chars().count();
                    (
                        head.chars().skip(n.saturating_sub(40)).collect(),
                        m.as_str().to_owned(),
                        text[m.end()..].chars().take(40).collect(),
                    )
                })
                .collect();
            assert!(expected.len() >= 500, "{pattern}");
            let got: Vec<(String, String, String)> = found
                .into_iter()
                .map(|m| (m.before, m.matched, m.after))
                .collect();
            assert_eq!(got, expected, "{pattern}");
            assert!(any(&s, &p, None), "{pattern}");
            assert!(!any(&s, &p, Some(Role::Tool)), "{pattern}");
        }
        assert!(!any(
            &s,
            &Pattern::new("zz", false).expect("a pattern"),
            None
        ));
        assert_eq!(last_chars("abc", 0), "");
        assert_eq!(last_chars("aé🦀", 2), "é🦀");
        assert_eq!(last_chars("aé🦀", 9), "aé🦀");
        assert_eq!(first_chars("aé🦀", 2), "aé");
    }

    /// The file-level shortcut: what rules a file out, and each thing that keeps it in.
    #[test]
    fn what_the_raw_bytes_rule_out() {
        let file = |text: &str| session_with_user_text(text);
        let call = |arguments: &str| {
            let mut f = file("hello");
            f.extend_from_slice(br#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"edit","arguments":"#);
            f.extend_from_slice(arguments.as_bytes());
            f.extend_from_slice(b"}],\"timestamp\":2}}\n");
            f
        };
        let may = |pattern: &str, bytes: &[u8]| {
            Pattern::new(pattern, false)
                .expect("a pattern")
                .may_occur_in(bytes)
        };
        assert!(!may("zz9qq", &file("hello")));
        assert!(may("hello", &file("hello")));
        // Escapes that read otherwise, bytes that are not UTF-8.
        assert!(may("zz9qq", &file("ansi \u{1b}[31m")));
        assert!(may("zz9qq", br#"{"type":"session"} "\u0041""#));
        assert!(may("zz9qq", br#"{"type":"session"} "a\/b""#));
        // Bytes that are not UTF-8 read as U+FFFD: only a pattern that can match it cares.
        assert!(!may("zz9qq", b"{\"type\":\"session\"} \xff"));
        assert!(may("\u{FFFD}", b"{\"type\":\"session\"} \xff"));
        assert!(may("x?\u{FFFD}", b"{\"type\":\"session\"} \xff"));
        assert!(may("[\u{FFFD}-\u{FFFF}]", b"{\"type\":\"session\"} \xff"));
        // A pattern the raw-line prefilter does not suit, with or without literals.
        assert!(!may("^zz9qq", &file("hello")));
        assert!(may("^hello", &file("hello")));
        assert!(may("zz9qq\"", &file("hello")));
        assert!(may("^.", &file("hello")));
        assert!(may("o\nw", &file("hello\nworld")));
        // Tool calls: safe literals are looked for raw; others keep the file in.
        assert!(!may("zz9qq", &call(r#"{"a":1}"#)));
        assert!(may("1.5", &call(r#"{"n":1.50}"#)));
        assert!(may("ull", &call(r#"{"n":1e999}"#)));
        assert!(may("edit ", &call(r#"{}"#)));
        assert!(may("edit", &call(r#"{}"#)));
        assert!(!may("weather", &call(r#"{"n":1.50}"#)));
        // A letter whose lower case the regex crate does not fold back.
        let turkish = file("İzmir");
        assert!(
            !Pattern::new("zmirx", true)
                .expect("a pattern")
                .may_occur_in(&turkish)
        );
        assert!(
            Pattern::new("İzmir", true)
                .expect("a pattern")
                .may_occur_in(&turkish)
        );
        assert!(may("İ|i̇", &turkish));
        assert!(may("weather.*x", &call(r#"{"q":"weather"}"#)));
        for (pattern, expression) in [
            ("zz9qq", Some(r"(?:zz9qq)")),
            ("foo|bar", Some(r"(?:bar|foo)")),
            ("(?i)ab", Some(r"(?i:ab)")),
            ("x(?i:ab)|yz", Some(r"(?:yz)|(?i:xab)")),
            ("a\\.b", Some(r"(?:a\.b)")),
            ("1.5", None),
            ("ul+", None),
            ("a b", None),
            ("x:", None),
            (".*", None),
            ("", None),
            ("e-1", None),
            ("nulls", Some(r"(?:nulls)")),
            ("^zz9qq", Some(r"(?:zz9qq)")),
            ("(?i)İx", Some(r"(?:İX|İx)")),
            ("İ|i̇", Some(r"(?:İ|i̇)")),
            (r"\bthe\b", Some(r"(?:the)")),
            ("a\"b", None),
            (r"a\\b", None),
            (r"a\nb", None),
            (r"a\tb", None),
        ] {
            let got = call_safe_literals(pattern, false);
            let got = got.as_ref().map(|l| l.any.as_str());
            assert_eq!(got, expression, "{pattern}");
        }
    }

    #[test]
    fn a_pattern_that_is_not_a_regular_expression() {
        let e = Pattern::new("(", false).expect_err("refused");
        assert!(e.to_string().contains("unclosed group"), "{e}");
        assert!(
            Pattern::new("abc", false)
                .expect("a pattern")
                .uses_raw_prefilter()
        );
        assert!(
            !Pattern::new("^abc", false)
                .expect("a pattern")
                .uses_raw_prefilter()
        );
    }
}
