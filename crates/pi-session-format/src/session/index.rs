//! The session's index (pi's `_buildIndex`): `byId`, the leaf, the labels, the session name,
//! and the walks from an entry to its root that detect parent cycles (rules L1–L4). Built on
//! first use by [`Session::index`]; the tree view and the context work on it.

use super::{Key, Session};
use crate::json::JsValue;
use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashSet};
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::OnceLock;

/// `byId`, the leaf and the labels of a loaded session.
#[derive(Debug)]
pub struct Index {
    /// `byId`: entry id → record index, the last entry with an id winning (rule L2); see
    /// [`Index::get`].
    pub(crate) by_id: ById,
    /// For each record, the record its `parentId` names through `byId`, or [`NO_PARENT`]
    /// when that is falsy or names no entry: the links the path walk follows, found for
    /// every record on every core.
    pub(crate) parents: Vec<usize>,
    /// The leaf id after loading: the id of the last entry, `null` without entries (L4).
    pub leaf: Key,
    /// Label target → label (L3), built on first use by [`Index::labels`]: building it
    /// parses every label entry, which `buildSessionContext` never needs.
    labels: OnceLock<HashMap<Key, Label>>,
}

/// The current label of an entry.
#[derive(Debug, Clone)]
pub struct Label {
    /// The label value, stored as is (any truthy JSON value).
    pub label: JsValue,
    /// The `targetId` value.
    pub target: JsValue,
    /// `timestamp` of the label entry that set it (0.73.1 `labelTimestampsById`).
    pub timestamp: Option<JsValue>,
    /// Position in `labelsById`'s `Map` order.
    order: u64,
}

/// Which leaf to build from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leaf {
    /// The leaf pi has after opening the file (the last entry's id).
    Current,
    /// An explicit id, as `buildSessionContext(entries, id, byId)`.
    Id(String),
    /// Any value as pi's `leafId` argument: `null` is no entry (an empty context), a falsy
    /// value the last entry, another looked up by `Map` key (a number finds an entry whose
    /// `id` is that number; an object or array finds nothing, so the last entry).
    Key(Key),
}

/// A parent cycle on a path: pi loops forever on it; we stop and report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleError {
    /// The entries of the cycle as `(line, id)`, in walking order from the leaf side.
    pub cycle: Vec<(usize, String)>,
}

impl CycleError {
    /// A stable name for the error, the same in every binding: the validator's diagnostic
    /// code, `PS0214` for an entry that is its own parent, `PS0213` for a longer cycle.
    pub fn code(&self) -> &'static str {
        if self.cycle.len() == 1 {
            "PS0214"
        } else {
            "PS0213"
        }
    }
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A cycle can be as long as the file: name its first and last entries only.
        const SHOWN: usize = 4;
        let entry = |(line, id): &(usize, String)| format!("{id} (line {line})");
        let n = self.cycle.len();
        let ids = if n <= 2 * SHOWN {
            self.cycle.iter().map(entry).collect::<Vec<_>>().join(" → ")
        } else {
            let head: Vec<String> = self.cycle[..SHOWN].iter().map(entry).collect();
            let tail: Vec<String> = self.cycle[n - SHOWN..].iter().map(entry).collect();
            format!(
                "{} → …({} more entries)… → {}",
                head.join(" → "),
                n - 2 * SHOWN,
                tail.join(" → ")
            )
        };
        write!(
            f,
            "parent cycle on the path: {ids} (pi would loop forever here)"
        )
    }
}

impl std::error::Error for CycleError {}

impl Index {
    /// Builds the index of `session` (`_buildIndex`).
    pub fn build(session: &Session<'_>) -> Index {
        let by_id = ById::build(session);
        let records = &session.records;
        let parents = (0..records.len())
            .into_par_iter()
            .with_min_len(4096)
            .map(|i| {
                let parent = &records[i].parent_id;
                parent
                    .is_truthy()
                    .then(|| by_id.get(session, parent))
                    .flatten()
                    .unwrap_or(NO_PARENT)
            })
            .collect();
        Index {
            by_id,
            parents,
            leaf: session
                .entries
                .last()
                .map_or(Key::Null, |&i| session.records[i].id.clone()),
            labels: OnceLock::new(),
        }
    }

    /// The record the `parentId` of record `record` leads to through `byId` (the link the
    /// path walk follows); `None` for a root, a parent that names no entry, or an index out
    /// of range.
    pub fn parent(&self, record: usize) -> Option<usize> {
        self.parents
            .get(record)
            .copied()
            .filter(|&p| p != NO_PARENT)
    }

    /// `byId.get(id)`: the record of the last entry with this id.
    pub fn get(&self, session: &Session<'_>, id: &Key) -> Option<usize> {
        self.by_id.get(session, id)
    }

    /// Label target → label, in file order, falsy labels clearing (L3), built on first
    /// use. `session` must be the session the index was built from.
    pub fn labels(&self, session: &Session<'_>) -> &HashMap<Key, Label> {
        self.labels.get_or_init(|| build_labels(session))
    }

    /// The labels in `labelsById` order (first set, not cleared since).
    pub fn labels_in_order(&self, session: &Session<'_>) -> Vec<&Label> {
        let mut labels: Vec<&Label> = self.labels(session).values().collect();
        labels.sort_by_key(|l| l.order);
        labels
    }

    /// The record the context starts from (rule C2): `None` means an empty context
    /// (the leaf id is `null`, or there are no entries).
    pub fn leaf_record(&self, session: &Session<'_>, leaf: &Leaf) -> Option<usize> {
        let key = match leaf {
            Leaf::Current => self.leaf.clone(),
            Leaf::Id(id) => Key::string(id),
            Leaf::Key(key) => key.clone(),
        };
        if key == Key::Null {
            return None;
        }
        if key.is_truthy()
            && let Some(i) = self.get(session, &key)
        {
            return Some(i);
        }
        session.entries.last().copied()
    }

    /// The path from the root to `leaf` (rule C3): follows truthy `parentId`s through
    /// `byId`, stopping at a missing parent. A repeated entry is a cycle.
    pub fn path(&self, session: &Session<'_>, leaf: usize) -> Result<Vec<usize>, CycleError> {
        let mut path = vec![leaf];
        // One flag per record: a walk that comes back to a record is a cycle.
        let mut seen = vec![false; session.records.len()];
        seen[leaf] = true;
        let mut current = leaf;
        loop {
            let next = self.parents[current];
            if next == NO_PARENT {
                break;
            }
            if std::mem::replace(&mut seen[next], true) {
                let start = path.iter().position(|&i| i == next).unwrap_or(0);
                let cycle = path[start..]
                    .iter()
                    .map(|&i| (session.records[i].line, session.records[i].id.display()))
                    .collect();
                return Err(CycleError { cycle });
            }
            path.push(next);
            current = next;
        }
        path.reverse();
        Ok(path)
    }

    /// `getChildren(parentId)`: entries in `byId` whose `parentId` is `parent`, in the
    /// order their ids were first inserted.
    pub fn children(&self, session: &Session<'_>, parent: &Key) -> Vec<usize> {
        let mut seen = FxHashSet::default();
        session
            .entries
            .iter()
            .filter_map(|&i| {
                let key = &session.records[i].id;
                if !seen.insert(key.clone()) {
                    return None;
                }
                let winner = self.get(session, key)?;
                (session.records[winner].parent_id == *parent).then_some(winner)
            })
            .collect()
    }
}

/// The session name (`getSessionName`): the latest `session_info` entry in file order wins;
/// its `name`, trimmed, or `None` when that is empty or missing.
pub fn session_name(session: &Session<'_>) -> Option<String> {
    let last = session
        .entry_records()
        .filter(|r| r.entry_type() == Some("session_info"))
        .last()?;
    let value = last.value();
    let name = value.get("name")?.as_str()?;
    let bytes = name.as_bytes();
    let start = crate::read::trim_start(bytes);
    let end = start + crate::read::trim_end(&bytes[start..]);
    let trimmed = &name[start..end];
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

/// The labels of `session` (the label part of `_buildIndex`).
fn build_labels(session: &Session<'_>) -> HashMap<Key, Label> {
    let mut labels: HashMap<Key, Label> = HashMap::new();
    for &i in &session.entries {
        let r = &session.records[i];
        if r.entry_type() == Some("label") {
            let value = r.value();
            let target = Key::of(value.get("targetId"), u64::MAX);
            match value.get("label") {
                Some(label) if label.is_truthy() => {
                    // A `Map` keeps the position of a key that is set again.
                    let order = labels.get(&target).map_or(i as u64, |l| l.order);
                    let label = Label {
                        label: label.clone(),
                        target: value.get("targetId").cloned().unwrap_or_default(),
                        timestamp: value.get("timestamp").cloned(),
                        order,
                    };
                    labels.insert(target, label);
                }
                _ => {
                    labels.remove(&target);
                }
            }
        }
    }
    labels
}

/// [`Index::parents`] for a record without a parent entry.
pub(crate) const NO_PARENT: usize = usize::MAX;

/// `byId` as a table of record indices (a word a slot, so that a session's table stays in
/// the processor's caches), keyed by the records' ids. The ids are hashed on every core
/// before the table is filled in file order, so a later entry replaces an earlier one with
/// the same id, as `Map.set` does.
#[derive(Debug, Default)]
pub(crate) struct ById {
    table: HashTable<usize>,
}

impl ById {
    fn hash(key: &Key) -> u64 {
        FxBuildHasher.hash_one(key)
    }

    fn build(session: &Session<'_>) -> ById {
        let records = &session.records;
        let hashes: Vec<u64> = session
            .entries
            .par_iter()
            .with_min_len(4096)
            .map(|&i| Self::hash(&records[i].id))
            .collect();
        let mut table: HashTable<usize> = HashTable::with_capacity(session.entries.len());
        for (&i, &hash) in session.entries.iter().zip(&hashes) {
            let id = &records[i].id;
            match table.entry(
                hash,
                |&j| records[j].id == *id,
                |&j| Self::hash(&records[j].id),
            ) {
                Entry::Occupied(mut slot) => *slot.get_mut() = i,
                Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
        ById { table }
    }

    /// The number of distinct ids.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    fn get(&self, session: &Session<'_>, id: &Key) -> Option<usize> {
        let records = &session.records;
        self.table
            .find(Self::hash(id), |&j| records[j].id == *id)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::SequentialIds;
    use crate::session::LoadOptions;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn with(lines: &[&str], f: impl FnOnce(&Session<'_>, &Index)) {
        let text = std::iter::once(HEADER)
            .chain(lines.iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        let s = Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: crate::PiVersion::V0_73,
                dialect: crate::Dialect::Pi,
            },
        )
        .unwrap();
        let index = Index::build(&s);
        f(&s, &index);
    }

    fn ids(s: &Session<'_>, records: &[usize]) -> Vec<String> {
        records.iter().map(|&i| s.records[i].id.display()).collect()
    }

    #[test]
    fn l2_duplicate_ids_last_wins_and_leaf_is_last_entry() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"message","id":"a","parentId":null,"x":2}"#,
            ],
            |s, index| {
                assert_eq!(index.get(s, &Key::string("a")), Some(3));
                assert_eq!(index.leaf, Key::string("a"));
                let leaf = index.leaf_record(s, &Leaf::Current).unwrap();
                assert_eq!(leaf, 3);
            },
        );
    }

    #[test]
    fn c2_unknown_leaf_falls_back_to_last_entry_and_null_leaf_is_empty() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":null}"#,
            ],
            |s, index| {
                assert_eq!(index.leaf_record(s, &Leaf::Current), None);
                assert_eq!(index.leaf_record(s, &Leaf::Id("nope".into())), Some(2));
                assert_eq!(index.leaf_record(s, &Leaf::Id("a".into())), Some(1));
            },
        );
    }

    #[test]
    fn c3_path_stops_at_orphans_and_detects_cycles() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":"missing"}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"message","id":"c","parentId":"d"}"#,
                r#"{"type":"message","id":"d","parentId":"c"}"#,
                r#"{"type":"message","id":"e","parentId":"e"}"#,
            ],
            |s, index| {
                assert_eq!(ids(s, &index.path(s, 2).unwrap()), ["\"a\"", "\"b\""]);
                let err = index.path(s, 4).unwrap_err();
                assert_eq!(err.cycle.len(), 2);
                assert!(index.path(s, 5).is_err());
            },
        );
    }

    #[test]
    fn l3_labels_are_global_and_falsy_clears() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"label","id":"l1","parentId":"a","targetId":"a","label":"one"}"#,
                r#"{"type":"label","id":"l2","parentId":"l1","targetId":"a","label":"two"}"#,
                r#"{"type":"label","id":"l3","parentId":"l2","targetId":"x","label":42}"#,
                r#"{"type":"label","id":"l4","parentId":"l3","targetId":"x","label":""}"#,
            ],
            |s, index| {
                let labels = index.labels(s);
                assert_eq!(labels[&Key::string("a")].label.as_str(), Some("two"));
                assert!(!labels.contains_key(&Key::string("x")));
            },
        );
    }

    #[test]
    fn session_name_latest_wins_trimmed_and_empty_clears() {
        with(
            &[r#"{"type":"session_info","id":"a","parentId":null,"name":"  x  "}"#],
            |s, _| {
                assert_eq!(session_name(s).as_deref(), Some("x"));
            },
        );
        with(
            &[
                r#"{"type":"session_info","id":"a","parentId":null,"name":"x"}"#,
                r#"{"type":"session_info","id":"b","parentId":"a","name":" "}"#,
            ],
            |s, _| assert_eq!(session_name(s), None),
        );
    }
}
