//! `Array.prototype.sort` with a numeric comparator, as V8 runs it on the children of a
//! `getTree()` node (section 11 of the spec).
//!
//! Below 64 elements V8's TimSort is one run: `CountAndMakeRun`, then binary insertion; that
//! is reproduced step for step, so the order is V8's even when the comparator returns `NaN`
//! (invalid timestamps). Longer arrays use a stable merge sort, which agrees with V8 whenever
//! the comparator is consistent (see `docs/divergences.md`, known gaps). Neither ever panics,
//! whatever the comparator returns.

/// Sorts `items` as V8's `Array.prototype.sort(compare)` does (see the module docs).
pub fn v8_sort<T: Copy>(items: &mut [T], compare: impl Fn(&T, &T) -> f64) {
    let n = items.len();
    if n < 2 {
        return;
    }
    if n >= 64 {
        merge_sort(items, &compare);
        return;
    }
    // CountAndMakeRun
    let descending = compare(&items[1], &items[0]) < 0.0;
    let mut run = 2;
    while run < n {
        let order = compare(&items[run], &items[run - 1]);
        // A NaN order ends a descending run and continues an ascending one.
        if descending != (order < 0.0) {
            break;
        }
        run += 1;
    }
    if descending {
        items[..run].reverse();
    }
    // BinaryInsertionSort
    for start in run..n {
        let pivot = items[start];
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + (right - left) / 2;
            if compare(&pivot, &items[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        items.copy_within(left..start, left + 1);
        items[left] = pivot;
    }
}

/// A stable bottom-up merge sort taking an element of the right half first only when it
/// compares below (`< 0`) the left one: any comparator result, `NaN` included, is a valid
/// answer, so this cannot panic or loop (unlike `slice::sort_by`, which may panic on a
/// comparator that is not a total order).
fn merge_sort<T: Copy>(items: &mut [T], compare: &impl Fn(&T, &T) -> f64) {
    let n = items.len();
    let mut buffer: Vec<T> = items.to_vec();
    let mut width = 1;
    // `from` holds the runs of `width`; they are merged into `to`, then the roles swap.
    let mut in_items = true;
    while width < n {
        {
            let (from, to): (&[T], &mut [T]) = if in_items {
                (&*items, &mut buffer[..])
            } else {
                (&buffer[..], &mut *items)
            };
            let mut start = 0;
            while start < n {
                let mid = (start + width).min(n);
                let end = (start + 2 * width).min(n);
                let (mut i, mut j) = (start, mid);
                for slot in &mut to[start..end] {
                    let take_right = j < end && (i >= mid || compare(&from[j], &from[i]) < 0.0);
                    if take_right {
                        *slot = from[j];
                        j += 1;
                    } else {
                        *slot = from[i];
                        i += 1;
                    }
                }
                start = end;
            }
        }
        in_items = !in_items;
        width *= 2;
    }
    if !in_items {
        items.copy_from_slice(&buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8_sort_keeps_nan_quirk() {
        // children c3(03s), bad(NaN), c1(01s) stay in that order in V8
        let mut items = [3.0, f64::NAN, 1.0];
        v8_sort(&mut items, |a, b| a - b);
        assert_eq!(items[0], 3.0);
        assert!(items[1].is_nan());
        assert_eq!(items[2], 1.0);
        let mut items = [3.0, 1.0, 2.0, 1.0];
        v8_sort(&mut items, |a, b| a - b);
        assert_eq!(items, [1.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn long_arrays_sort_stably_and_survive_nan_comparators() {
        // (time, position): equal times keep their order.
        let mut items: Vec<(f64, usize)> =
            (0..1000).map(|i| (((i * 7919) % 13) as f64, i)).collect();
        v8_sort(&mut items, |a, b| a.0 - b.0);
        assert!(
            items
                .windows(2)
                .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1))
        );
        // Every third time invalid: some order, the same elements, no panic.
        let mut items: Vec<(f64, usize)> = (0..1000)
            .map(|i| {
                (
                    if i % 3 == 0 {
                        f64::NAN
                    } else {
                        (1000 - i) as f64
                    },
                    i,
                )
            })
            .collect();
        v8_sort(&mut items, |a, b| a.0 - b.0);
        let mut seen: Vec<usize> = items.iter().map(|x| x.1).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }
}
