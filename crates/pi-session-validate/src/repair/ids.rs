//! Repairs of the tree: ids that two entries share get told apart, and (opt-in) entries whose
//! parent is missing, themselves or in a cycle are reattached to the entry before them.
//!
//! Two entries with one id (pi's v1 migration draws ids from a set it never fills; copies
//! between files) hide one of them from pi and can make a cycle on which pi hangs. pi writes
//! an entry after its parent, so a reference to a shared id means the latest entry with that
//! id above it in the file: the later entries get fresh ids and what refers to them follows.
//! A reference to a shared id above any entry that has it cannot be decided, and is left.

use super::{Behind, Fix, FixAction, Line, Repairs};
use crate::Code;
use pi_session_format::json::{self, JsValue, LineScanner};
use rustc_hash::{FxHashMap, FxHashSet};

/// The members of an entry that name another entry.
const REFERENCES: [&str; 4] = ["parentId", "targetId", "firstKeptEntryId", "fromId"];

/// What one line holds, for the tree, when it is an entry: its id, and the members that name
/// other entries. Ids are kept as their JSON text (`"a1b2c3d4"`, `2`): pi's `byId` is a `Map`,
/// in which the string `"2"` and the number `2` are different keys, and equal numbers the
/// same; `null`, objects and arrays name no entry.
pub(super) struct Entry {
    pub(super) id: Option<String>,
    /// `(member, the JSON text of the id it names)`, for the members of [`REFERENCES`].
    pub(super) references: Vec<(&'static str, String)>,
}

/// The JSON text of `value` when it can be an id (a string, number or boolean).
fn id_text(value: &JsValue) -> Option<String> {
    matches!(
        value,
        JsValue::String(_) | JsValue::Number(_) | JsValue::Bool(_)
    )
    .then(|| json::to_string(value))
}

impl Entry {
    pub(super) fn reference(&self, key: &str) -> Option<&str> {
        self.references
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The entry a line holds: found by the line scanner (which builds nothing); only the few
/// entry types that name entries besides their parent are parsed in full.
fn entry_of(scanner: &mut LineScanner, text: &[u8]) -> Option<Entry> {
    let raw = scanner.scan(text).ok()?;
    if !raw.object {
        return None;
    }
    // Bytes that are not UTF-8 read as U+FFFD, as pi reads them: two ids that differ only
    // in such bytes are one id to pi.
    let value = |span: Option<(usize, usize)>| -> Option<JsValue> {
        let (start, end) = span?;
        super::value_of(&text[start..end])
    };
    let entry_type = value(raw.type_).and_then(|t| t.as_str().map(str::to_owned));
    if entry_type.as_deref() == Some("session") {
        return None;
    }
    let mut references = Vec::new();
    if let Some(parent) = value(raw.parent_id).as_ref().and_then(id_text) {
        references.push(("parentId", parent));
    }
    if matches!(
        entry_type.as_deref(),
        Some("label" | "compaction" | "branch_summary")
    ) && let Some(value) = super::value_of(text)
    {
        for key in &REFERENCES[1..] {
            if let Some(target) = value.get(key).and_then(id_text) {
                references.push((key, target));
            }
        }
    }
    Some(Entry {
        id: value(raw.id).as_ref().and_then(id_text),
        references,
    })
}

pub(super) fn entries_of(lines: &[Line<'_>], mut behind: Behind<'_>) -> Vec<Option<Entry>> {
    let mut scanner = LineScanner::default();
    lines
        .iter()
        .map(|l| {
            behind.passed(&l.text);
            entry_of(&mut scanner, &l.text)
        })
        .collect()
}

/// How many entries above an entry to reattach are tried before it becomes a root.
const REATTACH_TRIES: usize = 64;

/// Whether walking up from `from` reaches `to`, or goes round a cycle (attaching `to` under
/// `from` would then loop too).
fn reaches(parent: &[Option<usize>], from: usize, to: usize) -> bool {
    let mut seen = FxHashSet::default();
    let mut at = Some(from);
    while let Some(a) = at {
        if a == to || !seen.insert(a) {
            return true;
        }
        at = parent[a];
    }
    false
}

/// `text` with its top-level member `key` set to the JSON value `to`: the value's bytes
/// replaced in place for `id` and `parentId` (found by the line scanner), anything else by
/// writing the line as `JSON.stringify` does (the same bytes elsewhere when the line was
/// written by pi).
pub(super) fn with_member(text: &[u8], key: &str, to: &str) -> Vec<u8> {
    let span = match LineScanner::default().scan(text) {
        Ok(raw) if key == "id" => raw.id,
        Ok(raw) if key == "parentId" => raw.parent_id,
        _ => None,
    };
    if let Some((start, end)) = span {
        return [&text[..start], to.as_bytes(), &text[end..]].concat();
    }
    // (A line with bytes that are not UTF-8 is written with U+FFFD in their place: what pi
    // reads, and writes at its next rewrite.)
    let Some(mut value) = super::value_of(text) else {
        return text.to_vec();
    };
    if let (Some(object), Ok(to)) = (value.as_object_mut(), json::parse(to)) {
        object.set(key, to);
    }
    json::to_string(&value).into_bytes()
}

/// A fresh 8-hex-digit id (as JSON text), not among `taken`, decided by `seed` (so that a
/// repair gives the same file every time).
fn fresh_id(seed: &str, line: usize, taken: &mut FxHashSet<String>) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in seed.bytes().chain(line.to_le_bytes()) {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    loop {
        let id = format!("\"{h:08x}\"");
        if taken.insert(id.clone()) {
            return id;
        }
        h = h.wrapping_add(0x9e37_79b9);
    }
}

/// Gives the later entries of a shared id fresh ids, and points what refers to each at the
/// latest entry above it with that id.
pub(super) fn tell_apart<'a>(mut lines: Vec<Line<'a>>, out: &mut Repairs) -> Vec<Line<'a>> {
    if !out.wants(Code::DuplicateId) {
        return lines;
    }
    let entries = entries_of(&lines, out.behind());
    let mut count: FxHashMap<&str, usize> = FxHashMap::default();
    for id in entries.iter().flatten().filter_map(|e| e.id.as_deref()) {
        *count.entry(id).or_default() += 1;
    }
    if count.values().all(|&n| n < 2) {
        return lines;
    }
    let shared: FxHashSet<String> = count
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| (*id).to_owned())
        .collect();
    let mut taken: FxHashSet<String> = count.keys().map(|id| (*id).to_owned()).collect();
    // The name the latest entry with each shared id has now.
    let mut current: FxHashMap<String, String> = FxHashMap::default();
    for (line, entry) in lines.iter_mut().zip(&entries) {
        let Some(entry) = entry else { continue };
        for &(key, ref target) in &entry.references {
            let target = target.as_str();
            if !shared.contains(target) {
                continue;
            }
            match current.get(target) {
                Some(now) if now != target => {
                    line.edit(with_member(&line.text, key, now));
                    out.fix(Fix::new(
                        Code::DuplicateId,
                        line.origin,
                        FixAction::Relinked,
                        format!("{key} {target} meant the entry with that id just above (now {now}): relinked"),
                    ));
                }
                Some(_) => {}
                None => out.unrepaired(
                    Code::DuplicateId,
                    line.origin,
                    &format!("{key} {target} names an id several entries share, none of them above this line: which one is meant cannot be told, left as it is"),
                ),
            }
        }
        let Some(id) = entry.id.as_deref().filter(|id| shared.contains(*id)) else {
            continue;
        };
        if current.contains_key(id) {
            let fresh = fresh_id(id, line.origin, &mut taken);
            line.edit(with_member(&line.text, "id", &fresh));
            out.fix(Fix::new(
                Code::DuplicateId,
                line.origin,
                FixAction::NewId,
                format!("id {id} is already an earlier entry's (pi would see only one of them): this entry is now {fresh}"),
            ));
            current.insert(id.to_owned(), fresh);
        } else {
            current.insert(id.to_owned(), id.to_owned());
        }
    }
    lines
}

/// Reattaches every entry whose parent is missing, itself, or on a cycle through it to the
/// nearest entry before it in the file that is not below it (the root when there is none).
/// Opt-in: it changes the tree.
pub(super) fn reattach<'a>(mut lines: Vec<Line<'a>>, out: &mut Repairs) -> Vec<Line<'a>> {
    let entries = entries_of(&lines, out.behind());
    // pi's byId: the last entry with each id.
    let mut by_id: FxHashMap<&str, usize> = FxHashMap::default();
    for (i, e) in entries.iter().enumerate() {
        if let Some(id) = e.as_ref().and_then(|e| e.id.as_deref()) {
            by_id.insert(id, i);
        }
    }
    let parent_of = |i: usize| -> Option<&str> { entries[i].as_ref()?.reference("parentId") };
    let mut reattached: FxHashMap<usize, (Code, &'static str)> = FxHashMap::default();
    for (i, e) in entries.iter().enumerate() {
        let Some(e) = e else { continue };
        let Some(parent) = parent_of(i) else { continue };
        if e.id.as_deref() == Some(parent) {
            reattached.insert(
                i,
                (Code::SelfParent, "is its own parent (pi loops forever)"),
            );
        } else if !by_id.contains_key(parent) {
            reattached.insert(
                i,
                (
                    Code::DanglingParent,
                    "names no entry (pi takes this entry for a root)",
                ),
            );
        }
    }
    // Cycles: walk up from every entry; a walk that comes back to an entry it passed is cut
    // at the entry of the cycle whose parent is written after it (pi writes parents first).
    let mut state = vec![0u8; entries.len()]; // 0 new, 1 on the current walk, 2 done
    for start in 0..entries.len() {
        let mut walk = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            if state[i] == 2 || reattached.contains_key(&i) {
                break;
            }
            if state[i] == 1 {
                let cycle = &walk[walk.iter().position(|&w| w == i).unwrap_or(0)..];
                let cut = cycle
                    .iter()
                    .copied()
                    .find(|&c| {
                        parent_of(c)
                            .and_then(|p| by_id.get(p))
                            .is_some_and(|&p| p >= c)
                    })
                    .unwrap_or(i);
                reattached.insert(
                    cut,
                    (Code::ParentCycle, "is on a parent cycle (pi loops forever)"),
                );
                break;
            }
            state[i] = 1;
            walk.push(i);
            at = parent_of(i).and_then(|p| by_id.get(p).copied());
        }
        for w in walk {
            state[w] = 2;
        }
    }
    // Parents as pi resolves them, updated as entries are reattached.
    let mut parent: Vec<Option<usize>> = (0..entries.len())
        .map(|i| parent_of(i).and_then(|p| by_id.get(p).copied()))
        .collect();
    // The entries above, newest last, that their id resolves to (pi's byId).
    let mut above: Vec<usize> = Vec::new();
    for (i, (line, e)) in lines.iter_mut().zip(&entries).enumerate() {
        let Some(e) = e else { continue };
        if let Some((code, why)) = reattached.get(&i) {
            if out.wants(*code) {
                // The nearest entry above that is not below this one (that would be a new
                // cycle); the root when there is none.
                let target = above
                    .iter()
                    .rev()
                    .take(REATTACH_TRIES)
                    .copied()
                    .find(|&j| !reaches(&parent, j, i));
                parent[i] = target;
                let to = target.and_then(|j| entries[j].as_ref()?.id.clone());
                let from = parent_of(i).unwrap_or_default();
                line.edit(with_member(
                    &line.text,
                    "parentId",
                    to.as_deref().unwrap_or("null"),
                ));
                out.fix(Fix::new(
                    *code,
                    line.origin,
                    FixAction::Reattached,
                    format!(
                        "parentId {from} {why}: reattached to {}",
                        to.map_or("the root (parentId null)".to_owned(), |t| format!(
                            "the entry before it, {t}"
                        ))
                    ),
                ));
            } else {
                out.unrepaired(
                    *code,
                    line.origin,
                    &format!("parentId {why}; --reattach attaches it to the entry before it"),
                );
            }
        }
        if let Some(id) = e.id.as_deref()
            && by_id.get(id) == Some(&i)
        {
            above.push(i);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_replaced_in_place() {
        let line = br#"{"type":"message", "id" : "a", "parentId":"b","x":1.50}"#;
        assert_eq!(
            with_member(line, "parentId", "\"c\""),
            br#"{"type":"message", "id" : "a", "parentId":"c","x":1.50}"#
        );
        assert_eq!(
            with_member(line, "id", "\"d\""),
            br#"{"type":"message", "id" : "d", "parentId":"b","x":1.50}"#
        );
        assert_eq!(
            with_member(br#"{"type":"label","targetId":"a"}"#, "targetId", "2"),
            br#"{"type":"label","targetId":2}"#
        );
        assert_eq!(
            with_member(br#"{"id":"a","parentId":"b"}"#, "parentId", "null"),
            br#"{"id":"a","parentId":null}"#
        );
    }

    #[test]
    fn fresh_ids_are_stable_and_unique() {
        let mut taken = FxHashSet::default();
        let a = fresh_id("x", 3, &mut taken);
        let mut again = FxHashSet::default();
        assert_eq!(a, fresh_id("x", 3, &mut again));
        let b = fresh_id("x", 3, &mut taken);
        assert_ne!(a, b);
        assert_eq!(a.len(), 10, "eight hex digits in quotes: {a}");
    }
}
