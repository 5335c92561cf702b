//! omp's blob store: images of 1024 characters or more are written as
//! `blob:sha256:<64 lowercase hex>` references to files of a directory (`<agentDir>/blobs`,
//! found by `pi_session_fs::omp_store`), and put back when omp opens the session
//! (`resolveBlobRefsInEntries` in `session-loader.ts`, `resolveImageData` in `blob-store.ts`).
//!
//! What is put back, walking the whole entry: the `data` of an image payload (an object with a
//! string `data` that is an image block or has an `image/…` `mimeType`) under a `content` key
//! (image blocks only) or an `images` key, as base64; an `image_generation_call`'s `result`,
//! as base64; an `image_url` string, as the blob's text (a data URL). Snapcompact `frames`
//! stay references. A reference whose hash is not 64 lowercase hex characters is left alone
//! (omp rejects it so that no path escapes the store); one whose file is missing is left in
//! place too, and said ([`Resolved::missing`]), as omp logs it.

use crate::json::{JsString, JsValue};
use base64::Engine as _;
use std::path::{Path, PathBuf};

/// The prefix of a blob reference.
pub const BLOB_PREFIX: &str = "blob:sha256:";

/// A blob store: the directory whose files the references name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blobs {
    dir: PathBuf,
}

/// What [`Blobs::resolve`] did to one value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// References put back.
    pub resolved: usize,
    /// Hashes of references whose blob is not in the store (left in place).
    pub missing: Vec<String>,
}

impl Blobs {
    /// The store at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Blobs {
        Blobs { dir: dir.into() }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Puts back the blobs `value` references, as omp does when it opens a session.
    pub fn resolve(&self, value: &mut JsValue, out: &mut Resolved) {
        Blobs::resolve_in(Some(self), value, out);
    }

    /// [`Blobs::resolve`] from `store`; with none, every well-formed reference is missing.
    pub(crate) fn resolve_in(store: Option<&Blobs>, value: &mut JsValue, out: &mut Resolved) {
        // An explicit stack: entries can nest as deep as JSON allows.
        let mut stack: Vec<(&mut JsValue, Option<Key>)> = vec![(value, None)];
        while let Some((value, key)) = stack.pop() {
            if key != Some(Key::Frames)
                && is_image_position(value, key)
                && let Some(data) = value.as_object_mut().and_then(|o| o.get_mut("data"))
                && data.as_str().is_some_and(|d| d.starts_with(BLOB_PREFIX))
            {
                put_back(store, data, Form::Base64, out);
                continue;
            }
            match value {
                JsValue::Array(items) => stack.extend(items.0.iter_mut().map(|v| (v, key))),
                JsValue::Object(o) => {
                    if crate::json::is_str(o.get("type"), "image_generation_call")
                        && let Some(result) = o.get_mut("result")
                    {
                        put_back(store, result, Form::Base64, out);
                    }
                    if let Some(url) = o.get_mut("image_url") {
                        put_back(store, url, Form::Text, out);
                    }
                    stack.extend(o.iter_mut().map(|(k, v)| (v, Key::of(k))));
                }
                _ => {}
            }
        }
    }

    /// The image a `blob:sha256:<hex>` reference names, as base64 (how omp puts an image's
    /// `data` back): `None` when `reference` is not a well-formed reference (left as it is),
    /// `Some(Err(hash))` when the store lacks the blob.
    pub fn image_base64(&self, reference: &str) -> Option<Result<String, String>> {
        let mut value = JsValue::string(reference);
        let mut out = Resolved::default();
        put_back(Some(self), &mut value, Form::Base64, &mut out);
        if let Some(hash) = out.missing.pop() {
            return Some(Err(hash));
        }
        (out.resolved == 1).then(|| Ok(value.as_str().unwrap_or_default().to_owned()))
    }
}

/// Replaces a reference string with its blob from `store`, in `form`.
fn put_back(store: Option<&Blobs>, value: &mut JsValue, form: Form, out: &mut Resolved) {
    let Some(hash) = value.as_str().and_then(|s| s.strip_prefix(BLOB_PREFIX)) else {
        return;
    };
    if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return;
    }
    match store.map(|s| std::fs::read(s.dir.join(hash))) {
        Some(Ok(bytes)) => {
            let text = match form {
                Form::Base64 => base64::engine::general_purpose::STANDARD.encode(&bytes),
                Form::Text => String::from_utf8_lossy(&bytes).into_owned(),
            };
            *value = JsValue::string(text.as_str());
            out.resolved += 1;
        }
        Some(Err(_)) | None => out.missing.push(hash.to_owned()),
    }
}

/// How a blob goes back into the value.
#[derive(Clone, Copy)]
enum Form {
    /// Base64 of its bytes (images).
    Base64,
    /// Its bytes as UTF-8 text (data URLs).
    Text,
}

/// The member keys the walk tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Content,
    Images,
    Frames,
    Other,
}

impl Key {
    fn of(key: &JsString) -> Option<Key> {
        Some(Key::of_bytes(key.as_wtf8()))
    }

    /// The key named `key`.
    pub(crate) fn of_bytes(key: &[u8]) -> Key {
        match key {
            b"content" => Key::Content,
            b"images" => Key::Images,
            b"frames" => Key::Frames,
            _ => Key::Other,
        }
    }
}

/// `isExternalizableImagePosition`: an image payload under `content` (image blocks) or
/// `images` (or `frames`, which the caller leaves out).
pub(crate) fn is_image_position(value: &JsValue, key: Option<Key>) -> bool {
    let Some(o) = value.as_object() else {
        return false;
    };
    if !matches!(o.get("data"), Some(JsValue::String(_))) {
        return false;
    }
    let image_block = crate::json::is_str(o.get("type"), "image");
    let image_mime = o
        .get("mimeType")
        .and_then(JsValue::as_str)
        .is_some_and(|m| m.to_lowercase().starts_with("image/"));
    if !image_block && !image_mime {
        return false;
    }
    match key {
        Some(Key::Content) => image_block,
        Some(Key::Images | Key::Frames) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    #[test]
    fn images_under_content_and_images_come_back_frames_stay() {
        let dir = std::env::temp_dir().join(format!("omp-blobs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let hash = "a".repeat(64);
        std::fs::write(dir.join(&hash), b"\x89PNG").unwrap();
        let url = "b".repeat(64);
        std::fs::write(dir.join(&url), b"data:image/png;base64,AAAA").unwrap();
        let missing = "c".repeat(64);
        let text = format!(
            r#"{{"message":{{"content":[{{"type":"image","data":"blob:sha256:{hash}","mimeType":"image/png"}},{{"type":"text","data":"blob:sha256:{hash}"}}],"images":[{{"data":"blob:sha256:{missing}","mimeType":"IMAGE/png"}}]}},"preserveData":{{"snapcompact":{{"frames":[{{"data":"blob:sha256:{hash}","mimeType":"image/png"}}]}}}},"x":{{"image_url":"blob:sha256:{url}"}},"y":{{"type":"image","data":"blob:sha256:../../etc/passwd"}}}}"#
        );
        let mut value = parse(&text).unwrap();
        let mut out = Resolved::default();
        Blobs::new(&dir).resolve(&mut value, &mut out);
        let after = to_string(&value);
        assert_eq!(out.resolved, 2, "{after}");
        assert_eq!(out.missing, vec![missing.clone()]);
        assert!(
            after.contains(r#"{"type":"image","data":"iVBORw==","mimeType":"image/png"}"#),
            "{after}"
        );
        // A text block's `data`, a frame and a malformed hash stay references.
        assert_eq!(
            after.matches(&format!("blob:sha256:{hash}")).count(),
            2,
            "{after}"
        );
        assert!(after.contains("blob:sha256:../../etc/passwd"));
        assert!(
            after.contains(r#""image_url":"data:image/png;base64,AAAA""#),
            "{after}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
