//! The small document [`super::Plan::check_document`] validates an append's new lines in: the
//! file's header, the few existing entries the checks of the new lines look at, then the
//! new lines.
//!
//! The validator's checks of one entry that look at others are: its `parentId`, a label's
//! `targetId` and a branch summary's `fromId` name entries; a compaction's
//! `firstKeptEntryId` is an ancestor; a tool result answers a call an assistant message
//! made on its path. So the document keeps, of the existing entries:
//! - every entry a new line names (its `parentId`, `targetId`, `firstKeptEntryId` or
//!   `fromId`, whatever their type);
//! - on the branch from each of them up to its root, the nearest assistant message that
//!   made each call a new tool result answers (all such messages, in one walk, when more
//!   than 64 calls are looked for);
//! - what those branches end in: two entries of each parent cycle on the way, and an entry
//!   whose `parentId` names no old entry but a new one.
//!
//! Each kept entry is written as it is, but for its `parentId`: its nearest kept ancestor
//! (`null` when it has none; the new entry it names, when it names one). The entries in
//! between say nothing to those checks, and which kept entry is an ancestor of which is
//! unchanged. The document so stays a few lines long however long the branch is, where a
//! skeleton of every entry on it cost a parse of the whole branch (the whole file, for a
//! session without branches).
//!
//! Finding the calls reads the text of the assistant messages on the branch, nearest first,
//! until each call is found; a message is parsed only when its text holds the call id as
//! written, or an escape through which it could be written otherwise (`\u`, or `\/` for a
//! `/`).

use crate::json::{self, JsValue, Role};
use crate::session::{Index, Key, Record, Records, Session};
use rustc_hash::{FxHashMap, FxHashSet};

/// The check document of `new_lines` appended to `session`: its bytes, and how many lines
/// come before the new ones. `named` are the records the new lines name, `calls` the call
/// ids their tool results answer that must be looked for in the file.
pub(super) fn check_document(
    session: &Session<'_>,
    named: &[usize],
    calls: &[String],
    new_ids: &FxHashSet<Key>,
    new_lines: &[u8],
) -> (Vec<u8>, usize) {
    let branches = Branches {
        records: &session.records,
        index: session.index(),
    };
    let mut kept: FxHashSet<usize> = named.iter().copied().collect();
    if calls.len() <= 64 {
        kept.extend(branches.callers(named, calls));
    } else {
        kept.extend(branches.all_callers(named, calls));
    }
    branches.anchor_ends(&mut kept, new_ids);
    let mut order: Vec<usize> = kept.iter().copied().collect();
    order.sort_unstable();
    let mut nearest = vec![UNKNOWN; session.records.len()];
    let mut out = Vec::with_capacity(new_lines.len() + order.len() * 96 + 256);
    out.extend_from_slice(session.header().text().as_bytes());
    out.push(b'\n');
    for &i in &order {
        let record = &session.records[i];
        let parent = match branches.index.parent(i) {
            Some(p) => branches.nearest_kept(p, &kept, &mut nearest).and_then(|p| {
                // The id from the skeleton; parsed only when it is an object or array.
                let kept = &session.records[p];
                super::key_value(&kept.id).or_else(|| kept.value().get("id").cloned())
            }),
            // A parent that names no old entry may name a new one: kept as it is.
            None => Some(&record.parent_id)
                .filter(|key| new_ids.contains(*key))
                .and_then(|_| record.value().get("parentId").cloned()),
        };
        let mut value = record.value().into_owned();
        if let JsValue::Object(entry) = &mut value {
            entry.set("parentId", parent.unwrap_or(JsValue::Null));
        }
        out.extend_from_slice(json::to_string(&value).as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(new_lines);
    (out, order.len() + 1)
}

/// [`Branches::nearest_kept`]'s memory for a record with no kept record above it.
const NONE: usize = usize::MAX;
/// [`Branches::nearest_kept`]'s memory for a record not yet passed.
const UNKNOWN: usize = usize::MAX - 1;
/// [`Branches::nearest_kept`]'s memory for a record its current walk passed.
const ON_WALK: usize = usize::MAX - 2;

/// The new lines as they are planned: their links and calls among themselves, for the calls
/// their tool results answer that must be looked for in the file ([`NewLines::calls`]).
#[derive(Default)]
pub(super) struct NewLines {
    /// Each new line's id: its `parentId` and the calls it made (an assistant message).
    by_id: FxHashMap<String, (Option<String>, Vec<String>)>,
    calls: Vec<String>,
    listed: FxHashSet<String>,
}

impl NewLines {
    /// How far up the new lines a tool result's call is looked for before it is looked for
    /// in the file too (which is always right, and costs more).
    const LOOK_UP: usize = 64;

    /// Adds the next new line (a completed entry).
    pub(super) fn add(&mut self, value: &JsValue) {
        let text = |v: Option<&JsValue>| match v {
            Some(JsValue::String(s)) => Some(s.to_string_lossy()),
            _ => None,
        };
        let message = value
            .get("message")
            .filter(|_| value.get("type").and_then(JsValue::as_str) == Some("message"));
        let role = message
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str);
        let parent = text(value.get("parentId"));
        if role == Some("toolResult")
            && let Some(call) = text(message.and_then(|m| m.get("toolCallId")))
            && !self.made_above(parent.as_deref(), &call)
            && self.listed.insert(call.clone())
        {
            self.calls.push(call);
        }
        let mut made = Vec::new();
        if role == Some("assistant")
            && let Some(JsValue::Array(blocks)) = message.and_then(|m| m.get("content"))
        {
            made = tool_call_ids(blocks.0.iter());
        }
        if let Some(id) = text(value.get("id")) {
            self.by_id.insert(id, (parent, made));
        }
    }

    /// Whether a new line at or above `at`, close enough, made `call`.
    fn made_above<'s>(&'s self, mut at: Option<&'s str>, call: &str) -> bool {
        for _ in 0..Self::LOOK_UP {
            let Some((parent, made)) = at.and_then(|id| self.by_id.get(id)) else {
                return false;
            };
            if made.iter().any(|m| m == call) {
                return true;
            }
            at = parent.as_deref();
        }
        false
    }

    /// The calls the new tool results answer that no new line on their path made (close
    /// enough above them): the file's branches are searched for these.
    pub(super) fn calls(&self) -> &[String] {
        &self.calls
    }
}

/// The `id`s of the `toolCall` blocks among `blocks`, as the validator reads them.
fn tool_call_ids<'v>(blocks: impl Iterator<Item = &'v JsValue>) -> Vec<String> {
    blocks
        .filter(|b| b.get("type").and_then(JsValue::as_str) == Some("toolCall"))
        .filter_map(|b| match b.get("id") {
            Some(JsValue::String(id)) => Some(id.to_string_lossy()),
            _ => None,
        })
        .collect()
}

/// The session's records with pi's index of them: the parent links.
struct Branches<'s, 'a> {
    records: &'s Records<'a>,
    index: &'s Index,
}

impl Branches<'_, '_> {
    /// On the branch from each of `starts` up to its root, the nearest assistant message that
    /// made each of `calls` (at most 64). A walk stops where an earlier one passed looking
    /// for no fewer calls, so each record is passed at most once per call it can still be
    /// the answer to; this also ends a walk that runs into a parent cycle.
    fn callers(&self, starts: &[usize], calls: &[String]) -> Vec<usize> {
        debug_assert!(calls.len() <= 64);
        let all = if calls.len() == 64 {
            u64::MAX
        } else {
            (1u64 << calls.len()) - 1
        };
        // For each record passed: the calls the walk that passed it was still looking for.
        let mut passed: FxHashMap<usize, u64> = FxHashMap::default();
        let mut found = Vec::new();
        for &start in starts {
            let mut missing = all;
            let mut at = Some(start);
            while let Some(i) = at
                && missing != 0
            {
                match passed.get(&i) {
                    Some(&before) if missing & !before == 0 => break,
                    _ => {}
                }
                passed.insert(i, missing);
                let made = calls_made(&self.records[i], calls, missing);
                if made != 0 {
                    found.push(i);
                    missing &= !made;
                }
                at = self.index.parent(i);
            }
        }
        found
    }

    /// Every assistant message on the branches from `starts` up to their roots that made one
    /// of `calls` (more than [`Branches::callers`] takes): one walk over the branches, each
    /// assistant message parsed once, so that many calls (say, thousands of tool results
    /// answering calls no message made) cost one pass, not one per call.
    fn all_callers(&self, starts: &[usize], calls: &[String]) -> Vec<usize> {
        let wanted: FxHashSet<&str> = calls.iter().map(String::as_str).collect();
        let mut passed = FxHashSet::default();
        let mut found = Vec::new();
        for &start in starts {
            let mut at = Some(start);
            while let Some(i) = at
                && passed.insert(i)
            {
                let record = &self.records[i];
                if might_be_assistant(record) {
                    let made = record.with_text(|text| message_calls(record, text));
                    if made.iter().any(|call| wanted.contains(call.as_str())) {
                        found.push(i);
                    }
                }
                at = self.index.parent(i);
            }
        }
        found
    }

    /// Keeps what the branches of the kept records end in, so that collapsing them keeps
    /// where they end: two records of every parent cycle a kept record is in or leads into
    /// (the one record of an entry that is its own parent), since an entry in or under a
    /// cycle is never reached from a root and a cycle collapsed into an entry that is its
    /// own parent would be a root; and the record whose `parentId` names no old entry but
    /// a new one (`new_ids`), which the new lines make its parent.
    fn anchor_ends(&self, kept: &mut FxHashSet<usize>, new_ids: &FxHashSet<Key>) {
        const ON_WALK: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![0u8; self.records.len()];
        let starts: Vec<usize> = kept.iter().copied().collect();
        for start in starts {
            let mut walk = Vec::new();
            let mut at = Some(start);
            while let Some(i) = at {
                match state[i] {
                    ON_WALK => {
                        kept.insert(i);
                        kept.extend(self.index.parent(i));
                        break;
                    }
                    DONE => break,
                    _ => {
                        state[i] = ON_WALK;
                        walk.push(i);
                        at = self.index.parent(i);
                        if at.is_none() && new_ids.contains(&self.records[i].parent_id) {
                            kept.insert(i);
                        }
                    }
                }
            }
            for i in walk {
                state[i] = DONE;
            }
        }
    }

    /// The nearest of `kept` at or above `at` (`None` past a root, or in a parent cycle
    /// without one), remembered in `nearest` for every record the walk passes.
    fn nearest_kept(
        &self,
        at: usize,
        kept: &FxHashSet<usize>,
        nearest: &mut [usize],
    ) -> Option<usize> {
        let mut passed = Vec::new();
        let mut next = Some(at);
        let answer = loop {
            let Some(i) = next else { break NONE };
            if kept.contains(&i) {
                break i;
            }
            match nearest[i] {
                UNKNOWN => {}
                // Passed by this walk already: a cycle.
                ON_WALK => break NONE,
                known => break known,
            }
            nearest[i] = ON_WALK;
            passed.push(i);
            next = self.index.parent(i);
        };
        for i in passed {
            nearest[i] = answer;
        }
        (answer != NONE).then_some(answer)
    }
}

/// Whether `record` may be an assistant message (its role is spelled otherwise, or not known
/// from the skeleton, for the others).
fn might_be_assistant(record: &Record<'_>) -> bool {
    let role = record.message.as_ref().map(|m| m.role);
    record.entry_type() == Some("message")
        && matches!(role, None | Some(Role::Assistant | Role::Other))
}

/// The calls the assistant message of `record` (whose line is `text`) made, as the validator
/// reads them; none for any other entry.
fn message_calls(record: &Record<'_>, text: &str) -> Vec<String> {
    let value = if record.is_rewritten() {
        record.value().into_owned()
    } else {
        json::parse(text).unwrap_or_default()
    };
    let Some(message) = value.get("message") else {
        return Vec::new();
    };
    if message.get("role").and_then(JsValue::as_str) != Some("assistant") {
        return Vec::new();
    }
    match message.get("content") {
        Some(JsValue::Array(blocks)) => tool_call_ids(blocks.0.iter()),
        _ => Vec::new(),
    }
}

/// Which of `calls` (a bit each, those set in `wanted`) the assistant message of `record`
/// made: its text is parsed only when it could hold one of them, and not kept. A call can
/// be written otherwise than as it is only through a `\u` escape (any character), or `\/`
/// (a `/`); a call holding a character JSON always escapes is looked for by parsing.
fn calls_made(record: &Record<'_>, calls: &[String], wanted: u64) -> u64 {
    if !might_be_assistant(record) {
        return 0;
    }
    record.with_text(|text| {
        let bytes = text.as_bytes();
        let escapes = crate::json::optional_escapes(bytes);
        let may_hold = |call: &str| {
            let written_as_is = !call.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
            !written_as_is
                || escapes.may_hide(call)
                || memchr::memmem::find(bytes, call.as_bytes()).is_some()
        };
        let candidates = bits(calls, wanted)
            .filter(|&(_, call)| may_hold(call))
            .fold(0u64, |m, (bit, _)| m | bit);
        if candidates == 0 {
            return 0;
        }
        let made = message_calls(record, text);
        bits(calls, candidates)
            .filter(|(_, call)| made.iter().any(|m| m == call))
            .fold(0u64, |m, (bit, _)| m | bit)
    })
}

/// The calls whose bits are set in `set`, with their bits.
fn bits(calls: &[String], set: u64) -> impl Iterator<Item = (u64, &str)> {
    calls
        .iter()
        .enumerate()
        .map(|(n, call)| (1u64 << n, call.as_str()))
        .filter(move |(bit, _)| set & bit != 0)
}
