//! The v1→v2 and v2→v3 migrations (rules M1–M6).
//!
//! [`v1_to_v2`] and [`v2_to_v3`] take pi's array of every parsed value of the file, header first, and change it in
//! place exactly as pi's `migrateV1ToV2` / `migrateV2ToV3` do, with two deliberate
//! differences, both where pi crashes or corrupts:
//!
//! - ids come from an [`IdGenerator`] that never hands out an id twice in a file (pi's
//!   generator checks a set it never fills, so large files get duplicate ids and cycles);
//! - values that are not objects (`null`, numbers, strings, arrays) are left alone; pi's
//!   v1→v2 throws a `TypeError` on them.
//!
//! They are the reference model: files are migrated one entry at a time by
//! [`crate::session::Migration`], with the per-entry steps of this module (`v1_entry`,
//! `v2_entry`) and only the ids assigned kept for the whole file. [`lossy`] finds what
//! `JSON.parse` then `JSON.stringify` changes in a line (duplicate keys, inexact numbers).

use crate::json::{JsObject, JsValue, is_str};
use std::collections::HashSet;

pub mod lossy;

/// Makes entry ids for the v1→v2 migration.
pub trait IdGenerator {
    /// Returns a new id for which `taken` is false (`taken` tells the ids handed out so far
    /// in this file).
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String;
}

/// pi's id shape: the first 8 hex digits of a random UUID v4 (lowercase), never repeated.
#[derive(Debug, Default)]
pub struct RandomIds;

impl IdGenerator for RandomIds {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String {
        let mut attempt = 0u32;
        loop {
            let bytes = random_word().unwrap_or_else(|| {
                // Without an OS random source, fall back to a time-seeded value; uniqueness
                // is still guaranteed by the loop.
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos());
                (nanos ^ attempt.wrapping_mul(0x9E37_79B9)).to_le_bytes()
            });
            attempt = attempt.wrapping_add(1);
            let id = format!("{:08x}", u32::from_le_bytes(bytes));
            if !taken(&id) {
                return id;
            }
        }
    }
}

/// Four random bytes from the OS, drawn 4 KiB at a time (one system call per id made a
/// migration of 400,000 entries spend a tenth of its time in `getrandom`).
fn random_word() -> Option<[u8; 4]> {
    use std::cell::RefCell;
    thread_local! {
        static POOL: RefCell<(Vec<u8>, usize)> = const { RefCell::new((Vec::new(), 0)) };
    }
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let (buf, at) = &mut *pool;
        if *at + 4 > buf.len() {
            buf.resize(4096, 0);
            getrandom::fill(buf).ok()?;
            *at = 0;
        }
        let word = [buf[*at], buf[*at + 1], buf[*at + 2], buf[*at + 3]];
        *at += 4;
        Some(word)
    })
}

/// Deterministic ids `00000001`, `00000002`, … in assignment order (for tests and for
/// comparing with a reference whose random source is replaced by the same counter).
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: u32,
}

impl IdGenerator for SequentialIds {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String {
        loop {
            self.next = self.next.wrapping_add(1);
            let id = format!("{:08x}", self.next);
            if !taken(&id) {
                return id;
            }
        }
    }
}

/// What v1→v2 does to a compaction's `firstKeptEntryIndex` (see [`first_kept_index`]).
#[derive(Debug, Clone)]
pub(crate) enum FirstKept {
    /// Not a compaction with a numeric `firstKeptEntryIndex`: nothing to do.
    Untouched,
    /// `entries[index]` is missing, falsy or a header: pi sets nothing and deletes the index.
    NoTarget,
    /// The target's `id` (`None`: undefined, so `firstKeptEntryId` ends up absent).
    Target(Option<JsValue>),
}

/// The numeric `firstKeptEntryIndex` of a compaction entry, which v1→v2 resolves.
pub(crate) fn first_kept_index(entry: &JsObject) -> Option<f64> {
    if !is_str(entry.get("type"), "compaction") {
        return None;
    }
    match entry.get("firstKeptEntryIndex") {
        Some(&JsValue::Number(index)) => Some(index),
        _ => None,
    }
}

/// The position `entries[index]` addresses in an array of `len` values, if any: JS property
/// access addresses elements only with canonical non-negative integers (and -0).
pub(crate) fn element_index(index: f64, len: usize) -> Option<usize> {
    if index.fract() != 0.0 || index < 0.0 || index >= len as f64 {
        return None;
    }
    Some(index as usize)
}

/// v1→v2 on one entry (not a header): the fresh `id`, the previous entry's id as
/// `parentId` (existing members overwritten in place, new ones appended), then the
/// compaction's `firstKeptEntryIndex` as resolved by the caller.
pub(crate) fn v1_entry(
    entry: &mut JsObject,
    id: &str,
    parent: Option<&str>,
    first_kept: FirstKept,
) {
    entry.set("id", JsValue::string(id));
    entry.set("parentId", parent.map_or(JsValue::Null, JsValue::string));
    match first_kept {
        FirstKept::Untouched => return,
        FirstKept::NoTarget => {}
        FirstKept::Target(Some(id)) => entry.set("firstKeptEntryId", id),
        // `target.id` is undefined: the property is set to undefined, i.e. absent.
        FirstKept::Target(None) => {
            entry.remove("firstKeptEntryId");
        }
    }
    entry.remove("firstKeptEntryIndex");
}

/// v2→v3 on one entry (not a header): a `message` entry whose message has role
/// `hookMessage` gets role `custom`.
pub(crate) fn v2_entry(entry: &mut JsObject) {
    if !is_str(entry.get("type"), "message") {
        return;
    }
    if let Some(message) = entry.get_mut("message").and_then(JsValue::as_object_mut)
        && message.get("role").and_then(JsValue::as_str) == Some("hookMessage")
    {
        message.set("role", JsValue::string("custom"));
    }
}

/// `migrateV1ToV2`: headers get `version: 2`; every other object gets a fresh `id` and the
/// previous entry's id as `parentId` (a linear chain, existing values overwritten, new keys
/// appended); a compaction's numeric `firstKeptEntryIndex` (an index into `values`, header
/// at 0) becomes `firstKeptEntryId`.
///
/// This is pi's whole-array function, kept as the reference model the streaming migration
/// ([`crate::session::Migration`]) is checked against.
pub fn v1_to_v2(values: &mut [JsValue], ids: &mut dyn IdGenerator) {
    let mut taken = HashSet::new();
    let mut prev_id: Option<String> = None;
    for i in 0..values.len() {
        let Some(entry) = values[i].as_object() else {
            continue;
        };
        if is_str(entry.get("type"), "session") {
            let entry = values[i].as_object_mut().expect("checked above");
            entry.set("version", JsValue::Number(2.0));
            continue;
        }
        let index = first_kept_index(entry);
        let id = ids.next_id(&|id| taken.contains(id));
        taken.insert(id.clone());
        let first_kept = match index {
            None => FirstKept::Untouched,
            Some(index) => match element_index(index, values.len()) {
                // The entry itself: its new id.
                Some(t) if t == i => FirstKept::Target(Some(JsValue::string(id.as_str()))),
                Some(t) => {
                    let target = &values[t];
                    if !target.is_truthy() || is_str(target.get("type"), "session") {
                        FirstKept::NoTarget
                    } else {
                        FirstKept::Target(target.get("id").cloned())
                    }
                }
                None => FirstKept::NoTarget,
            },
        };
        let entry = values[i].as_object_mut().expect("checked above");
        v1_entry(entry, &id, prev_id.as_deref(), first_kept);
        prev_id = Some(id);
    }
}

/// `migrateV2ToV3`: headers get `version: 3`; `message` entries whose message has role
/// `hookMessage` get role `custom`.
pub fn v2_to_v3(values: &mut [JsValue]) {
    for value in values.iter_mut() {
        let Some(entry) = value.as_object_mut() else {
            continue;
        };
        if is_str(entry.get("type"), "session") {
            entry.set("version", JsValue::Number(3.0));
            continue;
        }
        v2_entry(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{parse, to_string};

    fn values(lines: &[&str]) -> Vec<JsValue> {
        lines.iter().map(|l| parse(l).unwrap()).collect()
    }

    fn texts(values: &[JsValue]) -> Vec<String> {
        values.iter().map(to_string).collect()
    }

    #[test]
    fn m1_to_m4_linear_chain_with_appended_keys() {
        let mut v = values(&[
            r#"{"type":"session","id":"s","timestamp":"t"}"#,
            r#"{"type":"message","timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"old","parentId":"x","timestamp":"t"}"#,
        ]);
        v1_to_v2(&mut v, &mut SequentialIds::default());
        assert_eq!(
            texts(&v),
            [
                r#"{"type":"session","id":"s","timestamp":"t","version":2}"#,
                r#"{"type":"message","timestamp":"t","message":{"role":"user"},"id":"00000001","parentId":null}"#,
                r#"{"type":"message","id":"00000002","parentId":"00000001","timestamp":"t"}"#,
            ]
        );
    }

    #[test]
    fn m5_first_kept_entry_index_counts_the_header() {
        let mut v = values(&[
            r#"{"type":"session","id":"s"}"#,
            r#"{"type":"message"}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":1}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":4}"#,
            r#"{"type":"message"}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":0}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":"1"}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":1.5}"#,
            r#"{"type":"compaction","firstKeptEntryIndex":8}"#,
        ]);
        v1_to_v2(&mut v, &mut SequentialIds::default());
        let t = texts(&v);
        assert_eq!(
            t[2],
            r#"{"type":"compaction","id":"00000002","parentId":"00000001","firstKeptEntryId":"00000001"}"#
        );
        // forward reference: the target has no id yet
        assert_eq!(
            t[3],
            r#"{"type":"compaction","id":"00000003","parentId":"00000002"}"#
        );
        assert_eq!(
            t[5],
            r#"{"type":"compaction","id":"00000005","parentId":"00000004"}"#
        );
        assert_eq!(
            t[6],
            r#"{"type":"compaction","firstKeptEntryIndex":"1","id":"00000006","parentId":"00000005"}"#
        );
        assert_eq!(
            t[7],
            r#"{"type":"compaction","id":"00000007","parentId":"00000006"}"#
        );
        // self reference
        assert_eq!(
            t[8],
            r#"{"type":"compaction","id":"00000008","parentId":"00000007","firstKeptEntryId":"00000008"}"#
        );
    }

    #[test]
    fn m6_non_objects_are_left_alone() {
        let mut v = values(&[
            r#"{"type":"session","id":"s"}"#,
            "42",
            "null",
            r#"{"type":"x"}"#,
        ]);
        v1_to_v2(&mut v, &mut SequentialIds::default());
        assert_eq!(
            texts(&v)[1..],
            [
                "42",
                "null",
                r#"{"type":"x","id":"00000001","parentId":null}"#
            ]
        );
    }

    #[test]
    fn v2_to_v3_renames_hook_messages_only_in_message_entries() {
        let mut v = values(&[
            r#"{"type":"session","version":2,"id":"s"}"#,
            r#"{"type":"message","message":{"role":"hookMessage","content":"x"}}"#,
            r#"{"type":"custom_message","message":{"role":"hookMessage"}}"#,
            r#"{"type":"message","message":null}"#,
        ]);
        v2_to_v3(&mut v);
        assert_eq!(
            texts(&v),
            [
                r#"{"type":"session","version":3,"id":"s"}"#,
                r#"{"type":"message","message":{"role":"custom","content":"x"}}"#,
                r#"{"type":"custom_message","message":{"role":"hookMessage"}}"#,
                r#"{"type":"message","message":null}"#,
            ]
        );
    }

    #[test]
    fn generated_ids_are_unique() {
        let mut v: Vec<JsValue> = std::iter::once(r#"{"type":"session","id":"s"}"#)
            .chain(std::iter::repeat_n(r#"{"type":"message"}"#, 70_000))
            .map(|l| parse(l).unwrap())
            .collect();
        v1_to_v2(&mut v, &mut RandomIds);
        let ids: HashSet<_> = v[1..]
            .iter()
            .map(|e| e.get("id").and_then(JsValue::as_str).unwrap().to_owned())
            .collect();
        assert_eq!(ids.len(), 70_000);
    }
}
