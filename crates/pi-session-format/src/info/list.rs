//! The order of pi's session list (`SessionManager.list` for one directory, `listAll` for
//! every project directory): newest `modified` first, ties in the order the files were
//! found — pi 0.73.1 takes `readdir`'s order (libuv sorts names bytewise), pi 0.87.1 and
//! later sort one directory's names in descending `localeCompare` order and, across
//! directories, by file modification time, newest first, then name.
//!
//! `localeCompare` is approximated by bytewise order, which agrees for the names pi writes
//! (`<time>_<uuid>.jsonl`: digits, lowercase hex, `-`, `_` in the same places).

use crate::PiVersion;
use std::cmp::Ordering;

/// One listed session, as the order needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The project directory's name (for [`sort`] across directories).
    pub dir: String,
    /// The file's name.
    pub name: String,
    /// The listing entry's `modified` (ms since the epoch).
    pub modified_ms: f64,
    /// The file's modification time (ms since the epoch; NaN when unknown).
    pub mtime_ms: f64,
}

fn newest_first(a: f64, b: f64) -> Ordering {
    // `b - a` in JavaScript: NaN compares as equal (the sort keeps the order).
    b.partial_cmp(&a).unwrap_or(Ordering::Equal)
}

/// Puts `items` in pi's order; `across` for `listAll` (several directories).
pub fn sort(items: &mut [Listed], pi: PiVersion, across: bool) {
    let order = order(items, pi, across);
    let sorted: Vec<Listed> = order.iter().map(|&i| items[i].clone()).collect();
    items.clone_from_slice(&sorted);
}

/// The indices of `items` in pi's order ([`sort`] without moving them).
pub fn order(items: &[Listed], pi: PiVersion, across: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    let key = |i: &usize| &items[*i];
    match (pi.reads_like_0_87(), across) {
        (false, _) => order.sort_by(|a, b| {
            let (a, b) = (key(a), key(b));
            (&a.dir, &a.name).cmp(&(&b.dir, &b.name))
        }),
        (true, true) => order.sort_by(|a, b| {
            let (a, b) = (key(a), key(b));
            let mtime = |m: f64| if m.is_nan() { f64::NEG_INFINITY } else { m };
            newest_first(mtime(a.mtime_ms), mtime(b.mtime_ms)).then_with(|| b.name.cmp(&a.name))
        }),
        (true, false) => order.sort_by(|a, b| key(b).name.cmp(&key(a).name)),
    }
    // Stable: ties keep the order above.
    order.sort_by(|a, b| newest_first(key(a).modified_ms, key(b).modified_ms));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(dir: &str, name: &str, modified: f64, mtime: f64) -> Listed {
        Listed {
            dir: dir.into(),
            name: name.into(),
            modified_ms: modified,
            mtime_ms: mtime,
        }
    }

    fn names(items: &[Listed]) -> Vec<&str> {
        items.iter().map(|i| i.name.as_str()).collect()
    }

    #[test]
    fn newest_first_then_the_order_found() {
        let mut items = vec![
            item("d", "a.jsonl", 1.0, 5.0),
            item("d", "c.jsonl", 2.0, 1.0),
            item("d", "b.jsonl", 1.0, 9.0),
        ];
        sort(&mut items, PiVersion::V0_73, false);
        assert_eq!(names(&items), ["c.jsonl", "a.jsonl", "b.jsonl"]);
        sort(&mut items, PiVersion::V0_87, false);
        assert_eq!(names(&items), ["c.jsonl", "b.jsonl", "a.jsonl"]);
        sort(&mut items, PiVersion::V0_87, true);
        assert_eq!(
            names(&items),
            ["c.jsonl", "b.jsonl", "a.jsonl"],
            "mtime 9 before 5"
        );
    }
}
