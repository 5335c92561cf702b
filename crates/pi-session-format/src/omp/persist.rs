//! What an entry becomes on its way into a line of a file omp writes:
//! `prepareEntryForPersistence` (`session-persistence.ts`), specified in
//! `conformance/reference/omp/REWRITE.md` §4.
//!
//! In order, on the entry as a whole:
//! - thinking signatures an OpenAI Responses payload of the same message already carries are
//!   dropped (`stripReplayedReasoningSignatures`);
//! - an MCP tool result whose output was spilled to an artifact loses `structuredContent`
//!   (`stripSpilledMcpStructuredContent`);
//! - then, walking every value (`truncateForPersistence`): images of 1024 characters or more
//!   in an image position, `image_generation_call` results and every `image_url` data URL go
//!   to the blob store and are written as `blob:sha256:<hex>` ([`NewBlob`]); strings longer
//!   than 500,000 UTF-16 units are cut and end with [`TRUNCATION_NOTICE`]; `jsonlEvents`
//!   members are dropped; an object that changed gets its `lineCount` recounted from its
//!   `content`. Signed and encrypted blocks and Anthropic server-tool and compaction carriers
//!   are left whole.
//!
//! The value is changed in place; the caller owns a copy. Where omp's code throws (a
//! `TypeError` on a shape it does not expect), the answer is [`PersistError::OmpThrows`]:
//! omp's rewrite then fails and leaves the file as it is.

use super::blobs::{BLOB_PREFIX, Key, is_image_position};
use crate::json::{self, JsObject, JsString, JsValue, is_str};
use sha2::{Digest, Sha256};
use std::fmt;

/// Strings longer than this many UTF-16 units are cut (`MAX_PERSIST_CHARS`).
const MAX_PERSIST_CHARS: usize = 500_000;
/// What a cut string ends with (`TRUNCATION_NOTICE`).
pub const TRUNCATION_NOTICE: &str = "\n\n[Session persistence truncated large content]";
/// Images of this many characters or more go to the blob store (`BLOB_EXTERNALIZE_THRESHOLD`).
const BLOB_EXTERNALIZE_THRESHOLD: usize = 1024;
/// Nesting deeper than this is refused rather than walked (the walk recurses, as omp's does;
/// omp itself overflows its stack somewhere deeper).
const MAX_DEPTH: usize = 2000;

/// A blob omp writes into its store when it persists an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlob {
    /// The SHA-256 of `bytes`, 64 lowercase hex digits: the blob's file name.
    pub hash: String,
    /// The blob's content: an image's decoded bytes, or a data URL's text.
    pub bytes: Vec<u8>,
    /// The extension of the side file omp links to it (`<hash>.<ext>`), for images whose
    /// `mimeType` names one.
    pub extension: Option<String>,
}

impl NewBlob {
    /// The reference written in place of the data: `blob:sha256:<hash>`.
    pub fn reference(&self) -> String {
        format!("{BLOB_PREFIX}{}", self.hash)
    }
}

/// Why an entry cannot be persisted as omp persists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PersistError {
    /// omp's code throws on this entry (its rewrite fails, the file stays as it is).
    OmpThrows(String),
    /// The entry nests deeper than this reproduction walks.
    TooDeep,
}

impl fmt::Display for PersistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PersistError::OmpThrows(why) => write!(f, "omp's code throws on it ({why})"),
            PersistError::TooDeep => write!(
                f,
                "it nests more than {MAX_DEPTH} levels deep, deeper than this reproduction walks"
            ),
        }
    }
}

/// `prepareEntryForPersistence`: changes `entry` into what omp writes for it, adding the
/// blobs it externalizes to `blobs`.
pub fn prepare_entry(entry: &mut JsValue, blobs: &mut Vec<NewBlob>) -> Result<(), PersistError> {
    strip_replayed_reasoning_signatures(entry)?;
    strip_spilled_mcp_structured_content(entry);
    truncate(entry, None, blobs, 0)?;
    Ok(())
}

/// The assistant message of a `message` entry, mutable.
fn assistant_message(entry: &mut JsValue) -> Option<&mut JsObject> {
    let entry = entry.as_object_mut()?;
    if !is_str(entry.get("type"), "message") {
        return None;
    }
    let message = entry.get_mut("message")?.as_object_mut()?;
    is_str(message.get("role"), "assistant").then_some(message)
}

/// The non-empty `encrypted_content` and `id` of a reasoning item (WTF-8).
struct ReasoningItem<'a> {
    encrypted: Option<&'a [u8]>,
    id: Option<&'a [u8]>,
}

/// `readReasoningItem`: the non-empty `encrypted_content` and `id` of a `type: "reasoning"`
/// object.
fn reasoning_item(item: &JsValue) -> Option<ReasoningItem<'_>> {
    let o = item.as_object()?;
    if !is_str(o.get("type"), "reasoning") {
        return None;
    }
    let non_empty = |key| match o.get(key) {
        Some(JsValue::String(s)) if !s.is_empty() => Some(s.as_wtf8()),
        _ => None,
    };
    Some(ReasoningItem {
        encrypted: non_empty("encrypted_content"),
        id: non_empty("id"),
    })
}

/// A block's `thinkingSignature` when the block is a thinking block and that is a non-empty
/// string.
fn thinking_signature(block: &JsValue) -> Option<&JsString> {
    let o = block.as_object()?;
    if !is_str(o.get("type"), "thinking") {
        return None;
    }
    match o.get("thinkingSignature") {
        Some(JsValue::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// `stripReplayedReasoningSignatures`.
fn strip_replayed_reasoning_signatures(entry: &mut JsValue) -> Result<(), PersistError> {
    let Some(message) = assistant_message(entry) else {
        return Ok(());
    };
    let Some(payload) = message.get("providerPayload") else {
        return Ok(());
    };
    if !is_str(payload.get("type"), "openaiResponsesHistory") {
        return Ok(());
    }
    let Some(JsValue::Array(items)) = payload.get("items") else {
        return Ok(());
    };
    let (mut encrypted, mut ids) = (Vec::new(), Vec::new());
    for item in items.0.iter().filter_map(reasoning_item) {
        encrypted.extend(item.encrypted.map(<[u8]>::to_vec));
        ids.extend(item.id.map(<[u8]>::to_vec));
    }
    let Some(JsValue::Array(content)) = message.get("content") else {
        return Err(PersistError::OmpThrows(
            "an assistant message with an OpenAI Responses payload and no content array".into(),
        ));
    };
    if content.0.iter().any(|b| matches!(b, JsValue::Null)) {
        return Err(PersistError::OmpThrows(
            "a null content block in an assistant message".into(),
        ));
    }
    if !content.0.iter().any(|b| thinking_signature(b).is_some())
        || (encrypted.is_empty() && ids.is_empty())
    {
        return Ok(());
    }
    let covered = |signature: &JsString| {
        let Ok(parsed) = json::parse(&signature.to_string_lossy()) else {
            return false;
        };
        match reasoning_item(&parsed) {
            Some(ReasoningItem {
                encrypted: Some(e), ..
            }) => encrypted.iter().any(|x| x == e),
            Some(ReasoningItem { id: Some(id), .. }) => ids.iter().any(|x| x == id),
            _ => false,
        }
    };
    let strip: Vec<bool> = content
        .0
        .iter()
        .map(|b| thinking_signature(b).is_some_and(covered))
        .collect();
    if let Some(JsValue::Array(content)) = message.get_mut("content") {
        for (block, strip) in content.0.iter_mut().zip(strip) {
            if strip && let Some(block) = block.as_object_mut() {
                block.remove("thinkingSignature");
            }
        }
    }
    Ok(())
}

/// `stripSpilledMcpStructuredContent`.
fn strip_spilled_mcp_structured_content(entry: &mut JsValue) {
    let Some(entry) = entry.as_object_mut() else {
        return;
    };
    if !is_str(entry.get("type"), "message") {
        return;
    }
    let Some(message) = entry.get_mut("message").and_then(JsValue::as_object_mut) else {
        return;
    };
    if !is_str(message.get("role"), "toolResult") {
        return;
    }
    let Some(details) = message.get_mut("details").and_then(JsValue::as_object_mut) else {
        return;
    };
    let string = |v: Option<&JsValue>| matches!(v, Some(JsValue::String(_)));
    let spilled = string(details.get("serverName"))
        && string(details.get("mcpToolName"))
        && details.get("structuredContent").is_some()
        && matches!(
            details
                .get("meta")
                .and_then(|m| m.get("truncation"))
                .and_then(|t| t.get("artifactId")),
            Some(JsValue::String(id)) if !id.is_empty()
        );
    if spilled {
        details.remove("structuredContent");
    }
}

/// Whether the member of `o` at `key` is a non-empty string.
fn non_empty_string(o: &JsObject, key: &str) -> bool {
    matches!(o.get(key), Some(JsValue::String(s)) if !s.is_empty())
}

/// The nodes `truncateForPersistence` returns as they are, without descending: a valid
/// Anthropic server-tool history block, an Anthropic compaction carrier, and signed or
/// encrypted blocks.
fn is_atomic(o: &JsObject, key: Option<&[u8]>) -> bool {
    let type_ = o.get("type");
    if is_str(type_, "anthropicServerTool")
        && let Some(JsValue::Object(block)) = o.get("block")
        && let Some(JsValue::String(block_type)) = block.get("type")
        && is_anthropic_server_tool_history_block(block_type.as_wtf8(), block)
    {
        return true;
    }
    if is_str(type_, "anthropicCompaction")
        || (key == Some(b"anthropicCompaction")
            && matches!(o.get("content"), Some(JsValue::String(_))))
    {
        return true;
    }
    (is_str(type_, "thinking") && non_empty_string(o, "thinkingSignature"))
        || (is_str(type_, "text") && non_empty_string(o, "textSignature"))
        || (is_str(type_, "toolCall") && non_empty_string(o, "thoughtSignature"))
        || (is_str(type_, "redactedThinking") && non_empty_string(o, "data"))
        || (is_str(type_, "reasoning") && non_empty_string(o, "encrypted_content"))
}

/// pi-ai's `isAnthropicServerToolHistoryBlock` (`providers/anthropic-wire.ts`).
fn is_anthropic_server_tool_history_block(type_: &[u8], block: &JsObject) -> bool {
    match type_ {
        b"server_tool_use" => {
            let name = block.get("name");
            (is_str(name, "web_search")
                || is_str(name, "tool_search_tool_regex")
                || is_str(name, "tool_search_tool_bm25"))
                && non_empty_string(block, "id")
        }
        b"web_search_tool_result" | b"tool_search_tool_result" => {
            non_empty_string(block, "tool_use_id") && block.get("content").is_some()
        }
        _ => false,
    }
}

/// `truncateForPersistence` of `value`, which sits under `key` (array elements under their
/// array's key): whether it changed.
fn truncate(
    value: &mut JsValue,
    key: Option<&[u8]>,
    blobs: &mut Vec<NewBlob>,
    depth: usize,
) -> Result<bool, PersistError> {
    if depth > MAX_DEPTH {
        return Err(PersistError::TooDeep);
    }
    match value {
        JsValue::String(s) => {
            let text = s.as_wtf8();
            if key == Some(b"image_url")
                && text.starts_with(b"data:image/")
                && memchr::memmem::find(text, b";base64,").is_some()
            {
                let blob = new_blob(wtf8_to_utf8(text), None);
                *value = JsValue::string(blob.reference());
                blobs.push(blob);
                return Ok(true);
            }
            if utf16_len(text) <= MAX_PERSIST_CHARS
                || matches!(
                    key,
                    Some(b"thinkingSignature" | b"thoughtSignature" | b"textSignature")
                )
            {
                return Ok(false);
            }
            let kept = utf16_prefix(
                text,
                MAX_PERSIST_CHARS - utf16_len(TRUNCATION_NOTICE.as_bytes()),
            );
            *s = JsString::concat(&[kept, TRUNCATION_NOTICE.as_bytes()]);
            Ok(true)
        }
        JsValue::Array(items) => {
            let mut changed = false;
            for item in &mut items.0 {
                changed |= truncate(item, key, blobs, depth + 1)?;
            }
            Ok(changed)
        }
        JsValue::Object(_) => truncate_object(value, key, blobs, depth),
        JsValue::Null | JsValue::Bool(_) | JsValue::Number(_) => Ok(false),
    }
}

/// [`truncate`] of an object.
fn truncate_object(
    value: &mut JsValue,
    key: Option<&[u8]>,
    blobs: &mut Vec<NewBlob>,
    depth: usize,
) -> Result<bool, PersistError> {
    let externalized = is_image_position(value, key.map(Key::of_bytes));
    let JsValue::Object(o) = value else {
        return Ok(false);
    };
    if is_str(o.get("type"), "image_generation_call")
        && let Some(JsValue::String(result)) = o.get("result")
        && !result.as_wtf8().starts_with(BLOB_PREFIX.as_bytes())
        && utf16_len(result.as_wtf8()) >= BLOB_EXTERNALIZE_THRESHOLD
    {
        let blob = new_blob(node_base64(result.as_wtf8()), None);
        o.set("result", JsValue::string(blob.reference()));
        blobs.push(blob);
        return Ok(true);
    }
    if externalized
        && let Some(JsValue::String(data)) = o.get("data")
        && !data.as_wtf8().starts_with(BLOB_PREFIX.as_bytes())
        && utf16_len(data.as_wtf8()) >= BLOB_EXTERNALIZE_THRESHOLD
    {
        let extension = image_extension(o.get("mimeType"))?;
        let blob = new_blob(node_base64(data.as_wtf8()), extension);
        o.set("data", JsValue::string(blob.reference()));
        blobs.push(blob);
        return Ok(true);
    }
    if is_atomic(o, key) {
        return Ok(false);
    }
    let mut changed = o.remove("jsonlEvents").is_some();
    for (child_key, child) in o.iter_mut() {
        changed |= truncate(child, Some(child_key.as_wtf8()), blobs, depth + 1)?;
    }
    if changed
        && let Some(JsValue::String(content)) = o.get("content")
        && let Some(JsValue::Number(_)) = o.get("lineCount")
    {
        let lines = memchr::memchr_iter(b'\n', content.as_wtf8()).count() + 1;
        o.set("lineCount", JsValue::Number(lines as f64));
    }
    Ok(changed)
}

/// The blob of `bytes`, named by their SHA-256.
fn new_blob(bytes: Vec<u8>, extension: Option<String>) -> NewBlob {
    let digest = Sha256::digest(&bytes);
    let hash = digest.iter().fold(String::with_capacity(64), |mut s, b| {
        s.push_str(&format!("{b:02x}"));
        s
    });
    NewBlob {
        hash,
        bytes,
        extension,
    }
}

/// The length of a WTF-8 string in UTF-16 code units (JavaScript's `length`).
fn utf16_len(wtf8: &[u8]) -> usize {
    wtf8.iter()
        .map(|&b| match b {
            0x80..=0xBF => 0,
            0xF0..=0xFF => 2,
            _ => 1,
        })
        .sum()
}

/// `truncateString(value, units)`: the longest prefix of at most `units` UTF-16 units that
/// does not end in a high surrogate (a pair cut in two loses its high half).
fn utf16_prefix(wtf8: &[u8], units: usize) -> &[u8] {
    let (mut at, mut taken) = (0, 0);
    while at < wtf8.len() {
        let (len, width) = match wtf8[at] {
            0x00..=0x7F => (1, 1),
            0xC0..=0xDF => (2, 1),
            0xE0..=0xEF => (3, 1),
            _ => (4, 2),
        };
        if taken + width > units {
            break;
        }
        taken += width;
        at += len;
    }
    let kept = &wtf8[..at];
    // A lone high surrogate (U+D800–U+DBFF, WTF-8 `ED A0..AF xx`) at the end goes too.
    match kept {
        [.., 0xED, 0xA0..=0xAF, _] => &kept[..kept.len() - 3],
        _ => kept,
    }
}

/// `Buffer.from(wtf8, "utf8")`: each lone surrogate becomes U+FFFD.
fn wtf8_to_utf8(wtf8: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(wtf8.len());
    let mut i = 0;
    while i < wtf8.len() {
        if wtf8[i] == 0xED && wtf8.get(i + 1).is_some_and(|b| *b >= 0xA0) {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            out.push(wtf8[i]);
            i += 1;
        }
    }
    out
}

/// `Buffer.from(text, "base64")` as Node and Bun decode it: both alphabets (`+/` and `-_`),
/// every other character skipped, decoding stops at the first `=`, a last group of two or
/// three characters gives one or two bytes, a last single character nothing.
fn node_base64(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let (mut bits, mut n) = (0u32, 0);
    for &c in text {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        bits = bits << 6 | u32::from(v);
        n += 1;
        if n == 4 {
            out.extend_from_slice(&bits.to_be_bytes()[1..]);
            (bits, n) = (0, 0);
        }
    }
    match n {
        2 => out.push((bits >> 4) as u8),
        3 => out.extend_from_slice(&((bits >> 2) as u16).to_be_bytes()),
        _ => {}
    }
    out
}

/// `blobExtensionForImageMimeType` then `normalizeBlobExtension` (pi-tui's
/// `prompt/image-format.ts`): the side file's extension for an image's `mimeType`.
fn image_extension(mime: Option<&JsValue>) -> Result<Option<String>, PersistError> {
    let mime = match mime {
        None => return Ok(None),
        Some(m) if !m.is_truthy() => return Ok(None),
        Some(JsValue::String(m)) => m.to_string_lossy().to_lowercase(),
        Some(_) => {
            return Err(PersistError::OmpThrows(
                "an image's mimeType is not a string (mimeType.toLowerCase is not a function)"
                    .into(),
            ));
        }
    };
    let known = match mime.as_str() {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        "image/svg+xml" => Some("svg"),
        // Looked up in a plain object: these names find Object.prototype's members, which
        // are not strings.
        "constructor" | "__proto__" => {
            return Err(PersistError::OmpThrows(format!(
                "an image's mimeType {mime:?} names a member of Object.prototype"
            )));
        }
        _ => None,
    };
    if let Some(known) = known {
        return Ok(Some(known.to_owned()));
    }
    let Some(subtype) = mime.strip_prefix("image/") else {
        return Ok(None);
    };
    let subtype = subtype.split(';').next().unwrap_or("");
    let subtype = subtype.split('+').next().unwrap_or("");
    let subtype = subtype.strip_prefix('.').unwrap_or(subtype);
    let valid = (1..=32).contains(&subtype.len())
        && subtype.starts_with(|c: char| c.is_ascii_alphanumeric())
        && subtype
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    Ok(valid.then(|| subtype.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    fn persisted(text: &str) -> (String, Vec<NewBlob>) {
        let mut value = parse(text).unwrap();
        let mut blobs = Vec::new();
        prepare_entry(&mut value, &mut blobs).unwrap();
        (to_string(&value), blobs)
    }

    #[test]
    fn node_decodes_base64_leniently() {
        for (text, bytes) in [
            ("QUJD=RA==", &b"ABC"[..]),
            ("QU*JD", b"ABC"),
            ("QUJDR", b"ABC"),
            ("QR==", b"A"),
            ("QUI", b"AB"),
            ("-_-_", b"\xfb\xff\xbf"),
            ("Q U\nJ\u{e9}D", b"ABC"),
        ] {
            assert_eq!(node_base64(text.as_bytes()), bytes, "{text}");
        }
    }

    #[test]
    fn extensions_follow_pi_tui() {
        let ext = |m: &str| image_extension(Some(&JsValue::string(m))).unwrap();
        assert_eq!(ext("IMAGE/PNG").as_deref(), Some("png"));
        assert_eq!(ext("image/jpg").as_deref(), Some("jpg"));
        assert_eq!(ext("image/weird+xml;q=1").as_deref(), Some("weird"));
        assert_eq!(ext("image/.x").as_deref(), Some("x"));
        assert_eq!(ext("image/-x"), None);
        assert_eq!(ext(&format!("image/{}", "a".repeat(33))), None);
        assert_eq!(ext("text/plain"), None);
        assert_eq!(image_extension(Some(&JsValue::Null)), Ok(None));
        assert!(image_extension(Some(&JsValue::Number(1.0))).is_err());
        assert!(image_extension(Some(&JsValue::string("constructor"))).is_err());
    }

    #[test]
    fn long_strings_are_cut_in_utf16_units_and_line_counts_recounted() {
        // 499,952 units of `a`, then an emoji that straddles the limit: its high half is cut.
        let text = format!("{}\u{1F600}{}", "a".repeat(499_952), "b".repeat(100));
        let entry = format!(
            r#"{{"type":"custom","data":{{"content":"{text}","lineCount":7,"jsonlEvents":[1]}},"details":{{"content":"x\ny","lineCount":99,"jsonlEvents":[1]}}}}"#
        );
        let (out, blobs) = persisted(&entry);
        assert!(blobs.is_empty());
        let value = parse(&out).unwrap();
        let content = value.get("data").unwrap().get("content").unwrap();
        let content = content.as_str().unwrap();
        assert_eq!(utf16_len(content.as_bytes()), 499_952 + 47);
        assert!(content.ends_with(&format!("a{TRUNCATION_NOTICE}")));
        // Three newlines: the notice's two, and one more line.
        assert_eq!(
            to_string(value.get("data").unwrap().get("lineCount").unwrap()),
            "3"
        );
        // An object that changed only by losing `jsonlEvents` is recounted too.
        assert_eq!(
            to_string(value.get("details").unwrap()),
            r#"{"content":"x\ny","lineCount":2}"#
        );
        // Signatures and signed blocks stay whole.
        let long = "s".repeat(500_001);
        let (out, _) = persisted(&format!(
            r#"{{"a":{{"thinkingSignature":"{long}"}},"b":{{"type":"thinking","thinking":"{long}","thinkingSignature":"x"}}}}"#
        ));
        assert_eq!(out.matches(&long).count(), 2);
    }

    #[test]
    fn images_in_image_positions_go_to_the_blob_store() {
        let data = "QUJD".repeat(256); // 1024 characters: "ABC" × 256
        let entry = format!(
            r#"{{"type":"message","message":{{"role":"user","content":[{{"type":"image","data":"{data}","mimeType":"image/png"}},{{"type":"image","data":"QUJD"}}],"z":{{"type":"image","data":"{data}"}}}},"x":{{"image_url":"data:image/png;base64,AAAA"}},"y":{{"image_url":"data:image/png,AAAA"}}}}"#
        );
        let (out, blobs) = persisted(&entry);
        assert_eq!(blobs.len(), 2, "{out}");
        assert_eq!(blobs[0].bytes, b"ABC".repeat(256));
        assert_eq!(blobs[0].extension.as_deref(), Some("png"));
        assert_eq!(blobs[1].bytes, b"data:image/png;base64,AAAA");
        assert_eq!(blobs[1].extension, None);
        // sha256("data:image/png;base64,AAAA"), as omp names it (REWRITE.md §4.4).
        assert!(blobs[1].hash.starts_with("bde6da"), "{}", blobs[1].hash);
        assert!(out.contains(&format!(r#""data":"{}""#, blobs[0].reference())));
        // Short images, images out of position and data URLs without base64 stay.
        assert!(out.contains(r#"{"type":"image","data":"QUJD"}"#));
        assert!(out.contains(&format!(r#""z":{{"type":"image","data":"{data}"}}"#)));
        assert!(out.contains(r#""image_url":"data:image/png,AAAA""#));
    }

    #[test]
    fn replayed_reasoning_signatures_and_spilled_mcp_output_are_dropped() {
        let sig = r#"{\"type\":\"reasoning\",\"id\":\"r1\",\"encrypted_content\":\"E\"}"#;
        let other = r#"{\"type\":\"reasoning\",\"id\":\"r2\"}"#;
        let entry = format!(
            r#"{{"type":"message","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","thinkingSignature":"{sig}"}},{{"type":"thinking","thinking":"u","thinkingSignature":"{other}"}}],"providerPayload":{{"type":"openaiResponsesHistory","items":[{{"type":"reasoning","encrypted_content":"E"}}]}}}}}}"#
        );
        let (out, _) = persisted(&entry);
        assert!(
            out.contains(r#"{"type":"thinking","thinking":"t"}"#),
            "{out}"
        );
        assert!(
            out.contains(r#""thinking":"u","thinkingSignature""#),
            "{out}"
        );
        let mcp = r#"{"type":"message","message":{"role":"toolResult","details":{"serverName":"s","mcpToolName":"t","structuredContent":{"a":1},"meta":{"truncation":{"artifactId":"A"}},"z":1}}}"#;
        let (out, _) = persisted(mcp);
        assert_eq!(
            out,
            r#"{"type":"message","message":{"role":"toolResult","details":{"serverName":"s","mcpToolName":"t","meta":{"truncation":{"artifactId":"A"}},"z":1}}}"#
        );
        let no_content = r#"{"type":"message","message":{"role":"assistant","content":"x","providerPayload":{"type":"openaiResponsesHistory","items":[]}}}"#;
        let mut value = parse(no_content).unwrap();
        assert!(matches!(
            prepare_entry(&mut value, &mut Vec::new()),
            Err(PersistError::OmpThrows(_))
        ));
    }

    #[test]
    fn cut_prefixes_never_end_in_a_high_surrogate() {
        assert_eq!(utf16_prefix("ab\u{1F600}".as_bytes(), 3), b"ab");
        assert_eq!(
            utf16_prefix("ab\u{1F600}".as_bytes(), 4),
            "ab\u{1F600}".as_bytes()
        );
        // A lone high surrogate (WTF-8) at the cut goes too.
        assert_eq!(utf16_prefix(b"a\xED\xA0\x80b", 2), b"a");
        assert_eq!(wtf8_to_utf8(b"a\xED\xA0\x80b"), "a\u{FFFD}b".as_bytes());
    }
}
