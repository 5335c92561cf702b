//! The order of omp's session list (`SessionManager.list` and `listAll`, what `omp --resume`
//! builds its picker from): the file modified last first, then the session created last, then
//! the path in descending `localeCompare` order (`collectSessionsFromFiles`), and the pinned
//! sessions (the ids in `session-pins.json`) moved to the top, each group keeping that order
//! (`sortPinnedFirst`).
//!
//! `localeCompare` is approximated by bytewise order, as for pi ([`crate::info::list`]); they
//! agree on the names omp writes (`<time>_<id>.jsonl`) and decide only between sessions whose
//! file times and creation times are both equal.

use crate::json::{self, JsValue};
use std::cmp::Ordering;
use std::collections::HashSet;

/// One listed session, as the order needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The session's file, as omp joins it (`<dir>/<name>`).
    pub path: String,
    /// The session's id (the header's).
    pub id: String,
    /// The entry's `modified`: the file's modification time (ms since the epoch).
    pub modified_ms: f64,
    /// The entry's `created`: the header's `timestamp` (ms; NaN when it is not a date).
    pub created_ms: f64,
}

/// `b - a` as omp's comparator uses it: NaN (an invalid date) and 0 both leave the decision
/// to the next key (`||`).
fn newest_first(a: f64, b: f64) -> Option<Ordering> {
    let difference = b - a;
    if difference.is_nan() || difference == 0.0 {
        None
    } else if difference > 0.0 {
        Some(Ordering::Greater)
    } else {
        Some(Ordering::Less)
    }
}

/// The indices of `items` in omp's order, `pinned` ids first.
pub fn order(items: &[Listed], pinned: &HashSet<String>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&items[a], &items[b]);
        newest_first(a.modified_ms, b.modified_ms)
            .or_else(|| newest_first(a.created_ms, b.created_ms))
            .unwrap_or_else(|| b.path.cmp(&a.path))
    });
    // Stable: each group keeps the order above.
    order.sort_by_key(|&i| !pinned.contains(&items[i].id));
    order
}

/// The pinned ids of omp's `session-pins.json` (`loadPinnedSessionIds`): the strings of its
/// JSON array; nothing when it is not a JSON array (omp warns and pins nothing).
pub fn pinned_ids(bytes: &[u8]) -> HashSet<String> {
    // `readFile(…, "utf-8")`: invalid UTF-8 replaced, a BOM kept (and JSON.parse refuses it).
    match json::parse(&String::from_utf8_lossy(bytes)) {
        Ok(JsValue::Array(items)) => items
            .0
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => HashSet::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(path: &str, id: &str, modified: f64, created: f64) -> Listed {
        Listed {
            path: path.into(),
            id: id.into(),
            modified_ms: modified,
            created_ms: created,
        }
    }

    #[test]
    fn file_time_then_creation_then_path_then_pins() {
        let items = [
            item("/d/a.jsonl", "a", 1.0, 5.0),
            item("/d/b.jsonl", "b", 1.0, f64::NAN),
            item("/d/c.jsonl", "c", 2.0, 0.0),
            item("/d/d.jsonl", "d", 1.0, 5.0),
        ];
        let none = HashSet::new();
        // c is newest; a and d tie on both times (path descending); b's invalid date lets
        // the path decide against a and d.
        assert_eq!(order(&items, &none), [2, 3, 1, 0]);
        let pinned: HashSet<String> = ["a".to_owned(), "gone".to_owned()].into();
        assert_eq!(order(&items, &pinned), [0, 2, 3, 1]);
    }

    #[test]
    fn pins_are_the_strings_of_a_json_array() {
        assert_eq!(
            pinned_ids(br#"["x", 1, null, "y"]"#),
            ["x".to_owned(), "y".to_owned()].into()
        );
        assert!(pinned_ids(b"{\"x\":1}").is_empty());
        assert!(
            pinned_ids(b"\xEF\xBB\xBF[\"x\"]").is_empty(),
            "a BOM: JSON.parse throws"
        );
        assert!(pinned_ids(b"\xff").is_empty());
        assert_eq!(pinned_ids(b"[\"a\xff\"]"), ["a\u{fffd}".to_owned()].into());
    }
}
