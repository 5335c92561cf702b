//! One line redacted: its JSON walked without building it, each string value decoded and
//! searched, and only the strings holding a secret written again; every other byte of the
//! line is copied as it was. Ids, parents, types, timestamps and the other members that give
//! a session its structure are never touched, and numbers, keys and layout cannot change.
//!
//! A string that holds JSON (tool-call arguments, results) is searched as JSON too, so that a
//! secret behind the inner string's escapes is found. A line that is not JSON (a torn line)
//! is searched as text, and its secrets replaced where they are.

use crate::detect::{Finder, Hit, Scratch};
use crate::{Finding, Redactor};
use std::ops::Range;

/// What a line's walk classifies a string as, from where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Ids, types, roles, timestamps, providers: the session's structure.
    Structural,
    /// `thinkingSignature`, `textSignature`, `thoughtSignature`: opaque provider data.
    Signature,
    /// An image's base64 data.
    ImageData,
    /// An image's media type.
    ImageType,
    /// Everything else: searched.
    Text,
    /// An object's key: searched unless it is one of pi's member names.
    Key,
}

/// Members of an entry (or the header) that are structure, not content.
const ENTRY_STRUCTURE: &[&[u8]] = &[
    b"type",
    b"id",
    b"parentId",
    b"timestamp",
    b"version",
    b"firstKeptEntryId",
    b"fromId",
    b"targetId",
    b"customType",
    b"thinkingLevel",
    b"provider",
    b"modelId",
];
/// Members of a message that are structure.
const MESSAGE_STRUCTURE: &[&[u8]] = &[
    b"role",
    b"toolCallId",
    b"toolName",
    b"api",
    b"provider",
    b"model",
    b"stopReason",
    b"responseId",
    b"timestamp",
];
/// Members of a content block that are structure.
const BLOCK_STRUCTURE: &[&[u8]] = &[b"type", b"id", b"name", b"mimeType"];
/// Opaque signatures providers return.
const SIGNATURES: &[&[u8]] = &[b"thinkingSignature", b"textSignature", b"thoughtSignature"];

/// The member names of pi's entries, messages and blocks: keys never searched (the others are,
/// a key can be a secret).
const KNOWN_KEYS: &[&[u8]] = &[
    b"arguments",
    b"cacheRead",
    b"cacheWrite",
    b"cancelled",
    b"command",
    b"content",
    b"customType",
    b"details",
    b"display",
    b"errorMessage",
    b"excludeFromContext",
    b"exitCode",
    b"firstKeptEntryId",
    b"fromHook",
    b"fullOutputPath",
    b"isError",
    b"message",
    b"mimeType",
    b"modelId",
    b"parentId",
    b"parentSession",
    b"provider",
    b"redacted",
    b"responseId",
    b"stopReason",
    b"summary",
    b"targetId",
    b"textSignature",
    b"thinking",
    b"thinkingLevel",
    b"thinkingSignature",
    b"thoughtSignature",
    b"timestamp",
    b"toolCallId",
    b"toolName",
    b"tokensBefore",
    b"totalTokens",
    b"truncated",
    b"version",
];

/// A 1×1 grey PNG, what `--strip-images` puts in place of an image.
pub(crate) const PLACEHOLDER_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==";

/// Strings shorter than this hold no secret a rule finds (the named values are longer too:
/// `MIN_NAMED_LEN`).
const MIN_SECRET: usize = crate::MIN_NAMED_LEN;

/// Strings nested in strings are searched as JSON this deep.
const NESTED_DEPTH: usize = 3;

#[derive(Debug)]
enum Seg {
    /// An object member: its key's raw bytes (between the quotes).
    Key(Range<usize>),
    Index(usize),
}

#[derive(Debug)]
enum Frame {
    Object {
        expect_key: bool,
        key: Option<Range<usize>>,
        colon: bool,
        image: bool,
    },
    Array {
        index: usize,
    },
}

/// The line is not JSON this walk can follow.
struct NotJson;

impl Redactor {
    /// Redacts one line (without its newline) into `out` when it changes (returns `true`),
    /// adding what it found to `findings`; `out` is untouched when nothing changes.
    pub(crate) fn redact_line(
        &self,
        line: &[u8],
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
        scratch: &mut Scratch,
    ) -> bool {
        let first = findings.len();
        let changed = match self.redact_json(line, 0, "", line_number, out, findings, scratch) {
            Ok((changed, entry_id)) => {
                for finding in &mut findings[first..] {
                    finding.entry_id.clone_from(&entry_id);
                }
                changed
            }
            Err(NotJson) => {
                findings.truncate(first);
                self.redact_text_in_place(line, line_number, out, findings, scratch)
            }
        };
        if !changed {
            out.clear();
        }
        changed
    }

    /// A line that is not JSON (torn by a crash, glued to another): each quoted piece is
    /// decoded (invalid escapes kept) and searched as a string, so that a secret after a
    /// `\n` escape is found, and written back as a JSON string (without its closing quote
    /// when it had none); the text between them is searched as it is, its secrets replaced
    /// where they are (a placeholder holds no quote or backslash).
    fn redact_text_in_place(
        &self,
        line: &[u8],
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
        scratch: &mut Scratch,
    ) -> bool {
        out.clear();
        let mut changed = false;
        let mut at = 0;
        let mut decoded = Vec::new();
        let mut built = Vec::new();
        while at < line.len() {
            let quote = memchr::memchr(b'"', &line[at..]).map_or(line.len(), |q| at + q);
            // The text before the quote, as it is.
            let gap = &line[at..quote];
            self.detector.find(gap, true, scratch);
            let mut copied = 0;
            for hit in &scratch.hits {
                let redact = self.takes(hit);
                findings.push(self.finding(hit, line_number, String::new(), redact));
                if redact {
                    out.extend_from_slice(&gap[copied..hit.span.start]);
                    out.extend_from_slice(self.placeholder(hit, &gap[hit.span.clone()]).as_bytes());
                    copied = hit.span.end;
                    changed = true;
                }
            }
            out.extend_from_slice(&gap[copied..]);
            if quote == line.len() {
                break;
            }
            // The quoted piece, to its closing quote or the end of the line.
            let (end, closed) = match string_end(line, quote + 1) {
                Some((end, _)) => (end, true),
                None => (line.len(), false),
            };
            let raw = &line[quote + 1..if closed { end - 1 } else { end }];
            unescape_lenient(raw, &mut decoded);
            self.detector.find(&decoded, true, scratch);
            built.clear();
            let mut copied = 0;
            for hit in &scratch.hits {
                let redact = self.takes(hit);
                findings.push(self.finding(hit, line_number, String::new(), redact));
                if redact {
                    built.extend_from_slice(&decoded[copied..hit.span.start]);
                    built.extend_from_slice(
                        self.placeholder(hit, &decoded[hit.span.clone()]).as_bytes(),
                    );
                    copied = hit.span.end;
                }
            }
            if copied == 0 {
                out.extend_from_slice(&line[quote..end]);
            } else {
                built.extend_from_slice(&decoded[copied..]);
                let mut quoted = Vec::with_capacity(built.len() + 2);
                pi_session_json::write_string(&mut quoted, &built);
                if !closed {
                    quoted.pop();
                }
                out.extend_from_slice(&quoted);
                changed = true;
            }
            at = end;
        }
        changed
    }

    /// Walks `text` as one JSON value, redacting its strings into `out`. Returns whether
    /// anything changed and the value's top-level `id`.
    #[allow(clippy::too_many_arguments)] // one call site each; a struct would only rename them
    fn redact_json(
        &self,
        text: &[u8],
        depth: usize,
        outer_path: &str,
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
        scratch: &mut Scratch,
    ) -> Result<(bool, Option<String>), NotJson> {
        let mut entry_id = None;
        let mut copied = 0;
        let mut changed = false;
        out.clear();
        let mut quoted = Vec::new();
        walk(text, |range, escaped, class, path| {
            let raw = &text[range.start + 1..range.end - 1];
            let path_text = || {
                let mut at = self.render_path(text, path);
                if class == Class::Key {
                    at.push_str(if at.is_empty() { "(a key)" } else { " (a key)" });
                }
                join_path(outer_path, &at)
            };
            let replacement: Option<Vec<u8>> = match class {
                Class::Structural => {
                    if depth == 0 && matches!(path, [Seg::Key(k)] if &text[k.clone()] == b"id") {
                        entry_id = Some(String::from_utf8_lossy(raw).into_owned());
                    }
                    None
                }
                Class::Signature if self.options.strip_signatures && !raw.is_empty() => {
                    findings.push(self.stripped("signature", line_number, path_text()));
                    Some(b"\"\"".to_vec())
                }
                Class::ImageData
                    if self.options.strip_images && raw != PLACEHOLDER_PNG.as_bytes() =>
                {
                    findings.push(self.stripped("image", line_number, path_text()));
                    Some(format!("\"{PLACEHOLDER_PNG}\"").into_bytes())
                }
                Class::ImageType if self.options.strip_images => {
                    (raw != b"image/png").then(|| b"\"image/png\"".to_vec())
                }
                Class::Text | Class::Key
                    if raw.len() >= MIN_SECRET
                        && !(class == Class::Key && KNOWN_KEYS.contains(&raw)) =>
                {
                    self.redact_string(
                        raw,
                        escaped,
                        depth,
                        &path_text,
                        line_number,
                        &mut quoted,
                        findings,
                        scratch,
                    )
                }
                _ => None,
            };
            if let Some(replacement) = replacement {
                out.extend_from_slice(&text[copied..range.start]);
                out.extend_from_slice(&replacement);
                copied = range.end;
                changed = true;
            }
        })?;
        out.extend_from_slice(&text[copied..]);
        Ok((changed, entry_id))
    }

    /// One string's raw JSON content (between its quotes): the new string, quoted, when it
    /// held a secret to redact.
    #[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
    fn redact_string(
        &self,
        raw: &[u8],
        escaped: bool,
        depth: usize,
        path: &dyn Fn() -> String,
        line_number: usize,
        built: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
        scratch: &mut Scratch,
    ) -> Option<Vec<u8>> {
        let decoded: std::borrow::Cow<'_, [u8]> = if escaped {
            let mut decoded = Vec::with_capacity(raw.len());
            unescape(raw, &mut decoded)?;
            decoded.into()
        } else {
            raw.into()
        };
        // JSON inside the string: its strings decoded and searched too.
        let mut nested = None;
        if depth < NESTED_DEPTH && holds_json(&decoded) && memchr::memchr(b'\\', &decoded).is_some()
        {
            let mut inner = Vec::new();
            let outer = path();
            if let Ok((true, _)) = self.redact_json(
                &decoded,
                depth + 1,
                &outer,
                line_number,
                &mut inner,
                findings,
                scratch,
            ) {
                nested = Some(inner);
            }
        }
        let mut changed = nested.is_some();
        let text: &[u8] = nested.as_deref().unwrap_or(&decoded);
        self.detector.find(text, true, scratch);
        built.clear();
        let mut copied = 0;
        for hit in &scratch.hits {
            let redact = self.takes(hit);
            findings.push(self.finding(hit, line_number, path(), redact));
            if redact {
                built.extend_from_slice(&text[copied..hit.span.start]);
                built.extend_from_slice(self.placeholder(hit, &text[hit.span.clone()]).as_bytes());
                copied = hit.span.end;
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        built.extend_from_slice(&text[copied..]);
        let mut quoted = Vec::with_capacity(built.len() + 2);
        pi_session_json::write_string(&mut quoted, built);
        Some(quoted)
    }

    /// Whether a hit is replaced (a candidate only with `--aggressive`).
    fn takes(&self, hit: &Hit) -> bool {
        hit.finder != Finder::Entropy || self.options.aggressive
    }

    fn placeholder(&self, hit: &Hit, secret: &[u8]) -> String {
        self.key.placeholder(self.rule_id(hit.finder), secret)
    }

    pub(crate) fn rule_id(&self, finder: Finder) -> &str {
        match finder {
            Finder::Rule(index) => &self.detector.rules().rules[index].id,
            Finder::Named => "named-secret",
            Finder::Entropy => "high-entropy",
        }
    }

    fn finding(&self, hit: &Hit, line: usize, path: String, redacted: bool) -> Finding {
        Finding {
            line,
            entry_id: None,
            path,
            rule: self.rule_id(hit.finder).to_owned(),
            candidate: hit.finder == Finder::Entropy,
            redacted,
        }
    }

    /// `message.content[2].text`; a key that holds a secret shown with its placeholder (a
    /// report never shows a secret).
    fn render_path(&self, text: &[u8], path: &[Seg]) -> String {
        let mut out = String::new();
        for seg in path {
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let key = &text[k.clone()];
                    if key.len() < MIN_SECRET || KNOWN_KEYS.contains(&key) {
                        out.push_str(&String::from_utf8_lossy(key));
                    } else {
                        let mut decoded = Vec::new();
                        unescape_lenient(key, &mut decoded);
                        let (safe, _) = self.redact_text(&String::from_utf8_lossy(&decoded));
                        out.push_str(&safe);
                    }
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn stripped(&self, what: &str, line: usize, path: String) -> Finding {
        Finding {
            line,
            entry_id: None,
            path,
            rule: what.to_owned(),
            candidate: false,
            redacted: true,
        }
    }
}

fn join_path(outer: &str, inner: &str) -> String {
    match (outer.is_empty(), inner.is_empty()) {
        (true, _) => inner.to_owned(),
        (false, true) => outer.to_owned(),
        (false, false) => format!("{outer}→{inner}"),
    }
}

/// Whether a string's text is (probably) JSON worth walking.
fn holds_json(text: &[u8]) -> bool {
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    matches!(first, Some(b'{' | b'['))
}

/// A JSON string's raw content decoded as `JSON.parse` decodes it into `out`, as WTF-8 (a
/// surrogate pair joined, a lone surrogate kept as its three bytes); `None` when an escape is
/// not valid JSON.
fn unescape(raw: &[u8], out: &mut Vec<u8>) -> Option<()> {
    decode_escapes(raw, out, false)
}

/// [`unescape`]; `lenient`: an invalid escape is kept as written instead of failing.
fn decode_escapes(raw: &[u8], out: &mut Vec<u8>, lenient: bool) -> Option<()> {
    out.clear();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + at]);
        let start = i + at;
        i = start + 2;
        let byte = match raw.get(start + 1) {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') if raw.get(i..i + 4).and_then(hex4).is_some() => {
                let unit = raw.get(i..i + 4).and_then(hex4).unwrap_or_default();
                i += 4;
                let mut code = unit;
                if (0xD800..0xDC00).contains(&unit)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && let Some(low) = raw.get(i + 2..i + 6).and_then(hex4)
                    && (0xDC00..0xE000).contains(&low)
                {
                    code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
                push_wtf8(out, code);
                continue;
            }
            _ if lenient => {
                // Kept as written: the backslash, and what follows read on from there.
                out.push(b'\\');
                i = start + 1;
                continue;
            }
            _ => return None,
        };
        out.push(byte);
    }
    out.extend_from_slice(&raw[i.min(raw.len())..]);
    Some(())
}

/// [`unescape`] for text that may not be valid JSON (a torn line): an escape that is not
/// valid (or cut off) is kept as it is written.
fn unescape_lenient(raw: &[u8], out: &mut Vec<u8>) {
    decode_escapes(raw, out, true);
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc << 4 | v)
    })
}

/// A code point (or a lone surrogate) in generalized UTF-8, as WTF-8 holds it.
fn push_wtf8(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => {
            out.extend_from_slice(&[0xC0 | (code >> 6) as u8, 0x80 | (code & 0x3F) as u8])
        }
        0x800..=0xFFFF => out.extend_from_slice(&[
            0xE0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xF0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3F) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
    }
}

/// Visits the strings of one JSON value, in order, each classified with its path; `NotJson`
/// (after visiting the strings before the fault) when the text is not a single JSON value (the walk checks structure and literals, not every detail of numbers).
fn walk(
    text: &[u8],
    mut visit: impl FnMut(Range<usize>, bool, Class, &[Seg]),
) -> Result<(), NotJson> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<Seg> = Vec::new();
    let mut i = 0;
    let mut done = false;
    while i < text.len() {
        let b = text[i];
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            i += 1;
            continue;
        }
        if done {
            return Err(NotJson);
        }
        match b {
            b'{' | b'[' => {
                enter_value(&mut stack, &mut path)?;
                stack.push(if b == b'{' {
                    Frame::Object {
                        expect_key: true,
                        key: None,
                        colon: false,
                        image: false,
                    }
                } else {
                    Frame::Array { index: 0 }
                });
                i += 1;
            }
            b'}' | b']' => {
                match (stack.pop(), b) {
                    (Some(Frame::Object { .. }), b'}') | (Some(Frame::Array { .. }), b']') => {}
                    _ => return Err(NotJson),
                }
                leave_value(&mut stack, &mut path);
                done = stack.is_empty();
                i += 1;
            }
            b',' => {
                match stack.last_mut() {
                    Some(Frame::Object {
                        expect_key, key, ..
                    }) if key.is_none() => {
                        *expect_key = true;
                    }
                    Some(Frame::Array { index }) => *index += 1,
                    _ => return Err(NotJson),
                }
                i += 1;
            }
            b':' => {
                match stack.last_mut() {
                    Some(Frame::Object {
                        expect_key: false,
                        key: Some(_),
                        colon: colon @ false,
                        ..
                    }) => *colon = true,
                    _ => return Err(NotJson),
                }
                i += 1;
            }
            b'"' => {
                let (end, escaped) = string_end(text, i + 1).ok_or(NotJson)?;
                let range = i..end;
                if let Some(Frame::Object {
                    expect_key: expect_key @ true,
                    key,
                    ..
                }) = stack.last_mut()
                {
                    *expect_key = false;
                    *key = Some(i + 1..end - 1);
                    visit(range, escaped, Class::Key, &path);
                } else {
                    enter_value(&mut stack, &mut path)?;
                    let class = classify(text, &path, &stack);
                    if class == Class::Structural
                        && matches!(path.last(), Some(Seg::Key(k)) if &text[k.clone()] == b"type")
                        && &text[i + 1..end - 1] == b"image"
                        && let Some(Frame::Object { image, .. }) = stack.last_mut()
                    {
                        *image = true;
                    }
                    visit(range, escaped, class, &path);
                    leave_value(&mut stack, &mut path);
                    done = stack.is_empty();
                }
                i = end;
            }
            _ => {
                let start = i;
                while i < text.len()
                    && matches!(text[i], b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'+' | b'-' | b'.')
                {
                    i += 1;
                }
                let token = &text[start..i];
                let literal = matches!(token, b"true" | b"false" | b"null");
                let number = !token.is_empty()
                    && token
                        .iter()
                        .all(|c| matches!(c, b'0'..=b'9' | b'e' | b'E' | b'+' | b'-' | b'.'));
                if !literal && !number {
                    return Err(NotJson);
                }
                enter_value(&mut stack, &mut path)?;
                leave_value(&mut stack, &mut path);
                done = stack.is_empty();
            }
        }
    }
    if !done || !stack.is_empty() {
        return Err(NotJson);
    }
    Ok(())
}

/// A value starts: its place pushed on the path.
fn enter_value(stack: &mut [Frame], path: &mut Vec<Seg>) -> Result<(), NotJson> {
    match stack.last_mut() {
        None => Ok(()),
        Some(Frame::Object {
            expect_key: false,
            key,
            colon: true,
            ..
        }) => {
            let key = key.clone().ok_or(NotJson)?;
            path.push(Seg::Key(key));
            Ok(())
        }
        Some(Frame::Array { index }) => {
            path.push(Seg::Index(*index));
            Ok(())
        }
        Some(Frame::Object { .. }) => Err(NotJson),
    }
}

/// A value ended: its place popped, its member done.
fn leave_value(stack: &mut [Frame], path: &mut Vec<Seg>) {
    match stack.last_mut() {
        None => {}
        Some(Frame::Object { key, colon, .. }) => {
            *key = None;
            *colon = false;
            path.pop();
        }
        Some(Frame::Array { .. }) => {
            path.pop();
        }
    }
}

/// The index just after the closing quote of the string whose content starts at `from`, and
/// whether the string has an escape.
fn string_end(text: &[u8], mut from: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', &text[from..])?;
        if text[at] == b'"' {
            return Some((at + 1, escaped));
        }
        escaped = true;
        from = at + 2;
        if from > text.len() {
            return None;
        }
    }
}

fn key_is(text: &[u8], seg: Option<&Seg>, names: &[&[u8]]) -> bool {
    matches!(seg, Some(Seg::Key(k)) if names.contains(&&text[k.clone()]))
}

/// What the string at `path` is.
fn classify(text: &[u8], path: &[Seg], stack: &[Frame]) -> Class {
    let last = path.last();
    if key_is(text, last, SIGNATURES) {
        return Class::Signature;
    }
    let in_image = matches!(stack.last(), Some(Frame::Object { image: true, .. }));
    if in_image && key_is(text, last, &[b"data"]) {
        return Class::ImageData;
    }
    if in_image && key_is(text, last, &[b"mimeType"]) {
        return Class::ImageType;
    }
    let structural = match path {
        [_] => key_is(text, last, ENTRY_STRUCTURE),
        [Seg::Key(m), _] if &text[m.clone()] == b"message" => key_is(text, last, MESSAGE_STRUCTURE),
        [Seg::Key(m), Seg::Key(c), Seg::Index(_), _]
            if &text[m.clone()] == b"message" && &text[c.clone()] == b"content" =>
        {
            key_is(text, last, BLOCK_STRUCTURE)
        }
        // A custom message's own content, and an entry's content blocks.
        [Seg::Key(c), Seg::Index(_), _] if &text[c.clone()] == b"content" => {
            key_is(text, last, BLOCK_STRUCTURE)
        }
        _ => false,
    };
    if structural {
        Class::Structural
    } else {
        Class::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_classifies_strings() {
        let line = br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AAAA","mimeType":"image/jpeg"}],"timestamp":1}}"#;
        let mut got: Vec<(String, Class)> = Vec::new();
        let redactor = crate::Redactor::new(
            crate::Options::default(),
            crate::Key::from_bytes(b"0123456789abcdef").unwrap(),
        );
        walk(line, |_, _, class, path| {
            if class != Class::Key {
                got.push((redactor.render_path(line, path), class));
            }
        })
        .unwrap_or_else(|_| panic!("walks"));
        assert_eq!(
            got,
            [
                ("type".to_owned(), Class::Structural),
                ("id".to_owned(), Class::Structural),
                ("message.role".to_owned(), Class::Structural),
                ("message.content[0].type".to_owned(), Class::Structural),
                ("message.content[0].text".to_owned(), Class::Text),
                ("message.content[1].type".to_owned(), Class::Structural),
                ("message.content[1].data".to_owned(), Class::ImageData),
                ("message.content[1].mimeType".to_owned(), Class::ImageType),
            ]
        );
    }

    #[test]
    fn walk_refuses_what_is_not_one_value() {
        for bad in [
            &b"hello"[..],
            b"{\"a\":1",
            b"{\"a\":1}x",
            b"[1,}",
            b"{\"a\" 1}",
            b"\"abc",
        ] {
            assert!(
                walk(bad, |_, _, _, _| {}).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        for good in [
            &b"{}"[..],
            b"[]",
            b"1",
            b"\"s\"",
            b" {\"a\":[true,false,null,-1.5e3]} ",
        ] {
            assert!(
                walk(good, |_, _, _, _| {}).is_ok(),
                "{}",
                String::from_utf8_lossy(good)
            );
        }
    }

    #[test]
    fn unescape_agrees_with_json_parse() {
        for raw in [
            r#"plain"#,
            r#"a\nb\tc\\d\/e\"f\b\f\r"#,
            r#"\u0041KIA\u00e9\u20ac"#,
            r#"pair \ud83d\ude00 end"#,
            r#"lone \ud83d end"#,
            r#"lone low \ude00 x"#,
            r#"high then high \ud83d\ud83d\ude00"#,
            r#"\u12"#,
        ] {
            let mut out = Vec::new();
            let ours = unescape(raw.as_bytes(), &mut out).map(|()| out);
            let theirs = match pi_session_json::parse(&format!("\"{raw}\"")) {
                Ok(pi_session_json::JsValue::String(s)) => Some(s.as_wtf8().to_vec()),
                _ => None,
            };
            assert_eq!(ours, theirs, "{raw}");
        }
    }
    fn redacted(line: &[u8]) -> (String, Vec<Finding>) {
        let redactor = crate::Redactor::new(
            crate::Options::default(),
            crate::Key::from_bytes(b"0123456789abcdef").unwrap(),
        );
        let mut out = Vec::new();
        let mut findings = Vec::new();
        let mut scratch = Scratch::default();
        if !redactor.redact_line(line, 1, &mut out, &mut findings, &mut scratch) {
            out = line.to_vec();
        }
        (String::from_utf8(out).unwrap(), findings)
    }

    #[test]
    fn a_torn_line_is_decoded_piece_by_piece() {
        let (out, findings) = redacted(
            br#"{"type":"message","message":{"content":[{"type":"text","text":"$ cat keys\nAKIAQWERTYUI234567ZX\n\u0041KIAQWERTYUI234567ZY and \q"#,
        );
        assert!(!out.contains("QWERTYUI234567Z"), "{out}");
        assert_eq!(findings.len(), 2, "{findings:?}");
        assert!(
            out.ends_with(r#"and \\q"#),
            "the unclosed piece stays unclosed: {out}"
        );
        let (out, _) = redacted(b"plain text ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12 \"");
        assert!(!out.contains("ghp_"), "{out}");
    }

    #[test]
    fn a_key_that_is_a_secret_is_redacted_and_never_reported() {
        let (out, findings) = redacted(
            br#"{"type":"custom","data":{"tokens":{"ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12":"x"}}}"#,
        );
        assert!(!out.contains("ghp_"), "{out}");
        let shown = format!("{findings:?}");
        assert!(!shown.contains("ghp_"), "{shown}");
        assert_eq!(findings[0].path, "data.tokens (a key)");
    }

    #[test]
    fn lenient_unescape_keeps_what_is_not_an_escape() {
        let mut out = Vec::new();
        unescape_lenient(br"a\qb\u12\n\", &mut out);
        assert_eq!(out, b"a\\qb\\u12\n\\");
    }
}
