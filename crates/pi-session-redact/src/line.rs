//! One line redacted: its JSON walked without building it, each string value decoded and
//! searched, and only the strings holding a secret written again; every other byte of the
//! line is copied as it was. Ids, parents, types, timestamps and the other members that give
//! a session its structure are never touched, and numbers, keys and layout cannot change.
//!
//! A string that holds JSON (tool-call arguments, results) is searched as JSON too, so that a
//! secret behind the inner string's escapes is found. A line that is not JSON (a torn line)
//! is searched as text, and its secrets replaced where they are.

use crate::detect::{Finder, Hit};
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

/// A 1×1 grey PNG, what `--strip-images` puts in place of an image.
pub(crate) const PLACEHOLDER_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==";

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

/// A string of the line: where it is (quotes included) and what it is.
struct Str {
    range: Range<usize>,
    class: Class,
    path: String,
}

impl Redactor {
    /// Redacts one line (without its newline) into `out` when it changes (returns `true`),
    /// adding what it found to `findings`; `out` is untouched when nothing changes.
    pub(crate) fn redact_line(
        &self,
        line: &[u8],
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
    ) -> bool {
        let first = findings.len();
        let changed = match self.redact_json(line, 0, "", line_number, out, findings) {
            Ok((changed, entry_id)) => {
                for finding in &mut findings[first..] {
                    finding.entry_id.clone_from(&entry_id);
                }
                changed
            }
            Err(NotJson) => {
                findings.truncate(first);
                self.redact_text_in_place(line, line_number, out, findings)
            }
        };
        if !changed {
            out.clear();
        }
        changed
    }

    /// A line that is not JSON: its secrets replaced where they are. A placeholder holds no
    /// quote or backslash, so what JSON there is stays as it was around it.
    fn redact_text_in_place(
        &self,
        line: &[u8],
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
    ) -> bool {
        let mut hits = Vec::new();
        self.detector.find(line, true, &mut hits);
        let mut copied = 0;
        let mut changed = false;
        out.clear();
        for hit in &hits {
            let redact = self.takes(hit);
            findings.push(self.finding(hit, line_number, String::new(), redact));
            if redact {
                out.extend_from_slice(&line[copied..hit.span.start]);
                out.extend_from_slice(self.placeholder(hit, &line[hit.span.clone()]).as_bytes());
                copied = hit.span.end;
                changed = true;
            }
        }
        out.extend_from_slice(&line[copied..]);
        changed
    }

    /// Walks `text` as one JSON value, redacting its strings into `out`. Returns whether
    /// anything changed and the value's top-level `id`.
    fn redact_json(
        &self,
        text: &[u8],
        depth: usize,
        outer_path: &str,
        line_number: usize,
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
    ) -> Result<(bool, Option<String>), NotJson> {
        let strings = walk(text)?;
        let mut entry_id = None;
        let mut copied = 0;
        let mut changed = false;
        out.clear();
        let mut scratch = Vec::new();
        for s in strings {
            let raw = &text[s.range.start + 1..s.range.end - 1];
            if s.class == Class::Structural {
                if depth == 0 && s.path == "id" {
                    entry_id = Some(String::from_utf8_lossy(raw).into_owned());
                }
                continue;
            }
            let replacement: Option<Vec<u8>> = match s.class {
                Class::Signature if self.options.strip_signatures && !raw.is_empty() => {
                    findings.push(self.stripped("signature", line_number, &s.path, outer_path));
                    Some(b"\"\"".to_vec())
                }
                Class::ImageData
                    if self.options.strip_images && raw != PLACEHOLDER_PNG.as_bytes() =>
                {
                    findings.push(self.stripped("image", line_number, &s.path, outer_path));
                    Some(format!("\"{PLACEHOLDER_PNG}\"").into_bytes())
                }
                Class::ImageType if self.options.strip_images => {
                    (raw != b"image/png").then(|| b"\"image/png\"".to_vec())
                }
                Class::Text => {
                    let path = join_path(outer_path, &s.path);
                    self.redact_string(raw, depth, &path, line_number, &mut scratch, findings)
                }
                _ => None,
            };
            if let Some(replacement) = replacement {
                out.extend_from_slice(&text[copied..s.range.start]);
                out.extend_from_slice(&replacement);
                copied = s.range.end;
                changed = true;
            }
        }
        out.extend_from_slice(&text[copied..]);
        Ok((changed, entry_id))
    }

    /// One string's raw JSON content (between its quotes): the new string, quoted, when it
    /// held a secret to redact.
    fn redact_string(
        &self,
        raw: &[u8],
        depth: usize,
        path: &str,
        line_number: usize,
        scratch: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
    ) -> Option<Vec<u8>> {
        let decoded: std::borrow::Cow<'_, [u8]> = if memchr::memchr(b'\\', raw).is_none() {
            raw.into()
        } else {
            decode(raw)?.into()
        };
        let mut text = decoded.clone();
        let mut changed = false;
        // JSON inside the string: its strings decoded and searched too.
        if depth < NESTED_DEPTH && holds_json(&text) && memchr::memchr(b'\\', &text).is_some() {
            let mut inner = Vec::new();
            if let Ok((true, _)) =
                self.redact_json(&text, depth + 1, path, line_number, &mut inner, findings)
            {
                text = inner.into();
                changed = true;
            }
        }
        let mut hits = Vec::new();
        self.detector.find(&text, true, &mut hits);
        scratch.clear();
        let mut copied = 0;
        for hit in &hits {
            let redact = self.takes(hit);
            findings.push(self.finding(hit, line_number, path.to_owned(), redact));
            if redact {
                scratch.extend_from_slice(&text[copied..hit.span.start]);
                scratch
                    .extend_from_slice(self.placeholder(hit, &text[hit.span.clone()]).as_bytes());
                copied = hit.span.end;
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        scratch.extend_from_slice(&text[copied..]);
        let mut quoted = Vec::with_capacity(scratch.len() + 2);
        pi_session_json::write_string(&mut quoted, scratch);
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

    fn stripped(&self, what: &str, line: usize, path: &str, outer: &str) -> Finding {
        Finding {
            line,
            entry_id: None,
            path: join_path(outer, path),
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

/// A JSON string's raw content decoded as `JSON.parse` decodes it, to WTF-8 (a lone
/// surrogate kept); `None` when it is not a valid string.
fn decode(raw: &[u8]) -> Option<Vec<u8>> {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    let text = std::str::from_utf8(&quoted).ok()?;
    match pi_session_json::parse(text).ok()? {
        pi_session_json::JsValue::String(s) => Some(s.as_wtf8().to_vec()),
        _ => None,
    }
}

/// The strings of one JSON value, in order, each classified; `NotJson` when the text is not a
/// single JSON value (the walk checks structure and literals, not every detail of numbers).
fn walk(text: &[u8]) -> Result<Vec<Str>, NotJson> {
    let mut strings = Vec::new();
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
                let end = string_end(text, i + 1).ok_or(NotJson)?;
                let range = i..end;
                if let Some(Frame::Object {
                    expect_key: expect_key @ true,
                    key,
                    ..
                }) = stack.last_mut()
                {
                    *expect_key = false;
                    *key = Some(i + 1..end - 1);
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
                    strings.push(Str {
                        range,
                        class,
                        path: render_path(text, &path),
                    });
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
    Ok(strings)
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

/// The index just after the closing quote of the string whose content starts at `from`.
fn string_end(text: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', &text[from..])?;
        if text[at] == b'"' {
            return Some(at + 1);
        }
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

/// `message.content[2].text`.
fn render_path(text: &[u8], path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&String::from_utf8_lossy(&text[k.clone()]));
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_classifies_strings() {
        let line = br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AAAA","mimeType":"image/jpeg"}],"timestamp":1}}"#;
        let strings = walk(line).unwrap_or_else(|_| panic!("walks"));
        let got: Vec<(String, Class)> = strings.into_iter().map(|s| (s.path, s.class)).collect();
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
            assert!(walk(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        for good in [
            &b"{}"[..],
            b"[]",
            b"1",
            b"\"s\"",
            b" {\"a\":[true,false,null,-1.5e3]} ",
        ] {
            assert!(walk(good).is_ok(), "{}", String::from_utf8_lossy(good));
        }
    }
}
