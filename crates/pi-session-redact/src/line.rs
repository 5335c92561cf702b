//! One line redacted: its JSON walked without building it, each string value decoded and
//! searched, and only the strings holding a secret written again; every other byte of the
//! line is copied as it was. Ids, parents, types, timestamps and the other members that give
//! a session its structure are never touched, and numbers, keys and layout cannot change.
//!
//! A string that holds JSON (tool-call arguments, results) is searched as JSON too, so that a
//! secret behind the inner string's escapes is found. A line that is not JSON (a torn line)
//! is searched as text, and its secrets replaced where they are.

mod decode;

use crate::detect::{Finder, Hit, Scratch};
use crate::{Finding, Redactor};
use decode::{unescape, unescape_lenient};
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

/// Every member name of pi's format (the properties of `schemas/`, a test of the testkit
/// checks it): keys never searched or rewritten (the others are: a key can be a secret), and
/// keys that give a value no context.
const PI_KEYS: &[&[u8]] = &[
    b"api",
    b"arguments",
    b"branchedFrom",
    b"cacheRead",
    b"cacheWrite",
    b"cacheWrite1h",
    b"cancelled",
    b"code",
    b"command",
    b"constrainedSampling",
    b"content",
    b"cost",
    b"customType",
    b"cwd",
    b"data",
    b"deferred",
    b"description",
    b"details",
    b"diagnostics",
    b"display",
    b"endTurn",
    b"error",
    b"errorMessage",
    b"excludeFromContext",
    b"exitCode",
    b"expiresAt",
    b"firstKeptEntryId",
    b"firstKeptEntryIndex",
    b"fromHook",
    b"fromId",
    b"fullOutputPath",
    b"id",
    b"input",
    b"isError",
    b"kind",
    b"label",
    b"message",
    b"messages",
    b"mimeType",
    b"model",
    b"modelId",
    b"name",
    b"namespace",
    b"note",
    b"output",
    b"parameters",
    b"parentId",
    b"parentSession",
    b"partialJson",
    b"pollAfterMs",
    b"provider",
    b"providerThinkingLevel",
    b"rawStopReason",
    b"reasoning",
    b"redacted",
    b"replace",
    b"replacement",
    b"responseId",
    b"responseModel",
    b"role",
    b"sections",
    b"stack",
    b"stopReason",
    b"summary",
    b"systemMessage",
    b"targetId",
    b"text",
    b"textSignature",
    b"thinking",
    b"thinkingLevel",
    b"thinkingSignature",
    b"thoughtSignature",
    b"timestamp",
    b"tokensBefore",
    b"toolCallId",
    b"toolName",
    b"toolsAdded",
    b"toolsRemoved",
    b"total",
    b"totalTokens",
    b"truncated",
    b"type",
    b"usage",
    b"version",
];

/// Whether `key` is one of [`PI_KEYS`]: asked for every key and every value's key, so the
/// names are bucketed by length and first byte once (a binary search over all of them cost a
/// tenth of a redaction).
fn is_pi_key(key: &[u8]) -> bool {
    static BUCKETS: std::sync::OnceLock<Vec<Vec<&'static [u8]>>> = std::sync::OnceLock::new();
    let buckets = BUCKETS.get_or_init(|| {
        let mut buckets = vec![Vec::new(); 32 * 64];
        for &name in PI_KEYS {
            buckets[bucket_of(name)].push(name);
        }
        buckets
    });
    key.len() < 32 && buckets[bucket_of(key)].contains(&key)
}

/// The bucket of a name: its length (under 32) and its first byte's low six bits.
fn bucket_of(name: &[u8]) -> usize {
    (name.len() % 32) * 64 + usize::from(name.first().map_or(0, |b| b & 63))
}

/// Paths deeper than this are shown by their first and last steps (a report stays small).
const PATH_SHOWN: usize = 12;

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
        let mut built = Vec::new();
        while at < line.len() {
            let quote = memchr::memchr(b'"', &line[at..]).map_or(line.len(), |q| at + q);
            // The text before the quote, as it is.
            let gap = &line[at..quote];
            self.detector.find(gap, true, scratch);
            changed |= self.replace_hits(
                gap,
                scratch.hits.iter().cloned(),
                |hit| {
                    let redact = self.takes(hit);
                    findings.push(self.finding(hit, line_number, String::new(), redact));
                    redact
                },
                out,
            );
            if quote == line.len() {
                break;
            }
            // The quoted piece, to its closing quote or the end of the line: searched as a
            // string is (JSON held in it too), written back without a closing quote when it
            // had none.
            let (end, closed) = match string_end(line, quote + 1) {
                Some((end, _)) => (end, true),
                None => (line.len(), false),
            };
            let raw = &line[quote + 1..if closed { end - 1 } else { end }];
            let escaped = memchr::memchr(b'\\', raw).is_some();
            let redacted = (raw.len() >= MIN_SECRET)
                .then(|| {
                    self.redact_string(
                        raw,
                        escaped,
                        None,
                        0,
                        &String::new,
                        line_number,
                        &mut built,
                        findings,
                        scratch,
                    )
                })
                .flatten();
            match redacted {
                Some(mut quoted) => {
                    if !closed {
                        quoted.pop();
                    }
                    out.extend_from_slice(&quoted);
                    changed = true;
                }
                None => out.extend_from_slice(&line[quote..end]),
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
        let first = findings.len();
        let mut copied = 0;
        let mut changed = false;
        out.clear();
        let mut quoted = Vec::new();
        walk(text, depth > 0, |range, escaped, class, path| {
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
                        entry_id = Some(raw);
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
                    if raw.len() >= MIN_SECRET && !(class == Class::Key && is_pi_key(raw)) =>
                {
                    // A value under a key of its own (`"password": "…"`) is searched with its
                    // key before it, as `KEY=value`: rules that want a name find it.
                    let context = match (class, path.last()) {
                        (Class::Text, Some(Seg::Key(k))) if !is_pi_key(&text[k.clone()]) => {
                            Some(&text[k.clone()])
                        }
                        _ => None,
                    };
                    self.redact_string(
                        raw,
                        escaped,
                        context,
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
        // Shown only when something was found, and then as a report may show it.
        let entry_id = entry_id
            .filter(|_| findings.len() > first)
            .map(|id| self.shown(id));
        Ok((changed, entry_id))
    }

    /// One string's raw JSON content (between its quotes): the new string, quoted, when it
    /// held a secret to redact.
    /// One string's raw JSON content (between its quotes): the new string, quoted, when it
    /// held a secret to redact. `context`: the raw key the string is the value of, searched
    /// before it as `KEY=` (its finds in the key alone dropped). A string whose escapes are
    /// not valid JSON is decoded leniently (pi drops its line; its secret must still go).
    #[allow(clippy::too_many_arguments)] // one call site; a struct would only rename them
    pub(crate) fn redact_string(
        &self,
        raw: &[u8],
        escaped: bool,
        context: Option<&[u8]>,
        depth: usize,
        path: &dyn Fn() -> String,
        line_number: usize,
        built: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
        scratch: &mut Scratch,
    ) -> Option<Vec<u8>> {
        let decoded: std::borrow::Cow<'_, [u8]> = if escaped {
            let mut decoded = Vec::with_capacity(raw.len());
            if unescape(raw, &mut decoded).is_none() {
                unescape_lenient(raw, &mut decoded);
            }
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
        let value: &[u8] = nested.as_deref().unwrap_or(&decoded);
        // With a key: `KEY=value`, searched as one text, spans moved back into the value.
        let mut with_key = Vec::new();
        let offset = match context {
            Some(key) => {
                unescape_lenient(key, &mut with_key);
                with_key.push(b'=');
                let offset = with_key.len();
                with_key.extend_from_slice(value);
                offset
            }
            None => 0,
        };
        let text: &[u8] = if context.is_some() { &with_key } else { value };
        self.detector.find(text, true, scratch);
        built.clear();
        // Finds in the key alone dropped, the others moved back into the value.
        let in_value = scratch
            .hits
            .iter()
            .filter(|hit| hit.span.end > offset)
            .map(|hit| Hit {
                span: hit.span.start.max(offset) - offset..hit.span.end - offset,
                finder: hit.finder,
            });
        changed |= self.replace_hits(
            value,
            in_value,
            |hit| {
                let redact = self.takes(hit);
                findings.push(self.finding(hit, line_number, path(), redact));
                redact
            },
            built,
        );
        if !changed {
            return None;
        }
        let mut quoted = Vec::with_capacity(built.len() + 2);
        pi_session_json::write_string(&mut quoted, built);
        Some(quoted)
    }

    /// Whether a hit is replaced (a candidate only with `--aggressive`).
    pub(crate) fn takes(&self, hit: &Hit) -> bool {
        hit.finder != Finder::Entropy || self.options.aggressive
    }

    fn placeholder(&self, hit: &Hit, secret: &[u8]) -> String {
        self.key.placeholder(self.rule_id(hit.finder), secret)
    }

    /// `text` written to `out` with the `hits` (in order, not overlapping) that `take`
    /// accepts replaced by their placeholders; `take` sees every hit (to report it). Whether
    /// any was replaced.
    pub(crate) fn replace_hits(
        &self,
        text: &[u8],
        hits: impl IntoIterator<Item = Hit>,
        mut take: impl FnMut(&Hit) -> bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let (mut copied, mut replaced) = (0, false);
        for hit in hits {
            if take(&hit) {
                out.extend_from_slice(&text[copied..hit.span.start]);
                out.extend_from_slice(self.placeholder(&hit, &text[hit.span.clone()]).as_bytes());
                copied = hit.span.end;
                replaced = true;
            }
        }
        out.extend_from_slice(&text[copied..]);
        replaced
    }

    pub(crate) fn rule_id(&self, finder: Finder) -> &str {
        match finder {
            Finder::Rule(index) => &self.detector.rules().rules[index].id,
            Finder::Named => "named-secret",
            Finder::Entropy => "high-entropy",
        }
    }

    pub(crate) fn finding(&self, hit: &Hit, line: usize, path: String, redacted: bool) -> Finding {
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
        // A deep path is shown by its ends: a report stays small however deep the line.
        let skipped = path.len().saturating_sub(2 * PATH_SHOWN);
        for (n, seg) in path.iter().enumerate() {
            if skipped > 0 && n == PATH_SHOWN {
                out.push_str(&format!("…({skipped} more)…"));
            }
            if skipped > 0 && (PATH_SHOWN..PATH_SHOWN + skipped).contains(&n) {
                continue;
            }
            match seg {
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    let key = &text[k.clone()];
                    if key.len() < MIN_SECRET || is_pi_key(key) {
                        out.push_str(&String::from_utf8_lossy(key));
                    } else {
                        let mut decoded = Vec::new();
                        unescape_lenient(key, &mut decoded);
                        out.push_str(&self.shown(&decoded));
                    }
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// `text` as a report may show it: everything any finder finds in it (candidates too)
    /// replaced by its placeholder.
    pub(crate) fn shown(&self, text: &[u8]) -> String {
        let mut scratch = Scratch::default();
        self.detector.find(text, true, &mut scratch);
        let mut out = Vec::with_capacity(text.len());
        self.replace_hits(text, scratch.hits, |_| true, &mut out);
        String::from_utf8_lossy(&out).into_owned()
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

/// Visits the strings of one JSON value, in order, each classified with its path; `NotJson`
/// (after visiting the strings before the fault) when the text is not a single JSON value (the walk checks structure and literals, not every detail of numbers).
fn walk(
    text: &[u8],
    nested: bool,
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
                    let class = if nested {
                        Class::Text
                    } else {
                        classify(text, &path, &stack)
                    };
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
    let in_content = match path {
        [Seg::Key(m), Seg::Key(c), Seg::Index(_), _] => {
            &text[m.clone()] == b"message" && &text[c.clone()] == b"content"
        }
        _ => false,
    };
    if in_content && key_is(text, last, SIGNATURES) {
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
mod tests;
