//! pi's `labelsById` and `labelTimestampsById`: the current label of each entry, in `Map`
//! order (a label set again keeps its place; one cleared and set again moves to the end),
//! which `createBranchedSession` re-adds labels in.

use crate::json::JsValue;
use crate::session::Key;
use std::collections::HashMap;

/// One entry's label.
#[derive(Debug, Clone)]
struct Slot {
    key: Key,
    /// The `targetId` value.
    target: JsValue,
    label: JsValue,
    /// The label entry's `timestamp` (`None`: absent).
    timestamp: Option<JsValue>,
}

/// The labels in `Map` order: a vector of slots (cleared ones are `None`) and where each
/// key's slot is.
#[derive(Debug, Default, Clone)]
pub(super) struct Labels {
    slots: Vec<Option<Slot>>,
    by_key: HashMap<Key, usize>,
}

impl Labels {
    /// `labelsById.set(target, label)` with its timestamp.
    pub(super) fn set(
        &mut self,
        key: Key,
        target: JsValue,
        label: JsValue,
        timestamp: Option<JsValue>,
    ) {
        let slot = Slot {
            key: key.clone(),
            target,
            label,
            timestamp,
        };
        match self.by_key.get(&key) {
            Some(&i) => self.slots[i] = Some(slot),
            None => {
                self.by_key.insert(key, self.slots.len());
                self.slots.push(Some(slot));
            }
        }
    }

    /// `labelsById.delete(target)`.
    pub(super) fn delete(&mut self, key: &Key) {
        if let Some(i) = self.by_key.remove(key) {
            self.slots[i] = None;
        }
    }

    /// The labels in `Map` order: `(key, target, label, timestamp)`.
    pub(super) fn in_order(&self) -> Vec<(&Key, &JsValue, &JsValue, &Option<JsValue>)> {
        self.slots
            .iter()
            .flatten()
            .map(|s| (&s.key, &s.target, &s.label, &s.timestamp))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        Key::of(Some(&JsValue::string(s)), 0)
    }

    fn order(labels: &Labels) -> Vec<String> {
        labels
            .in_order()
            .into_iter()
            .map(|(_, t, l, _)| format!("{}={}", t.as_str().unwrap(), l.as_str().unwrap()))
            .collect()
    }

    #[test]
    fn map_order() {
        let mut labels = Labels::default();
        for (t, l) in [("a", "1"), ("b", "2"), ("a", "3")] {
            labels.set(key(t), JsValue::string(t), JsValue::string(l), None);
        }
        assert_eq!(order(&labels), ["a=3", "b=2"]);
        labels.delete(&key("a"));
        labels.set(key("a"), JsValue::string("a"), JsValue::string("4"), None);
        assert_eq!(order(&labels), ["b=2", "a=4"]);
    }
}
