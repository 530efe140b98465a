//! Stable sorting through one compiled sort.
//!
//! The standard library's sort is generic: every element type and comparison that is sorted
//! compiles a copy of it, several kilobytes each, and the page's bundles carried over a dozen.
//! These functions sort the positions of the elements instead, with one comparison function
//! passed by reference, so that a single copy of the sort serves every caller; the elements are
//! then moved into their places. They are stable, like `slice::sort_by`: equal elements keep
//! their order, so replacing an unstable sort of fully ordered values changes nothing.

use crate::sorted::{SortedMap, SortedSet};
use std::cmp::Ordering;

/// Sorts `items` stably by `cmp`.
pub fn sort_by<T>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = {
        let items = &*items;
        sorted_positions(items.len(), &|a, b| cmp(&items[a], &items[b]))
    };
    permute(items, &order);
}

/// Sorts `items` stably by the key `key` gives each.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` into their natural order.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The positions `0..len` in the order `cmp` gives them, ties in position order. The only copy
/// of the sort itself.
#[inline(never)]
fn sorted_positions(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves each element into its place: position `i` receives the element that was at
/// `order[i]`. Each cycle of the permutation is followed once, so this takes linear time.
fn permute<T>(items: &mut [T], order: &[usize]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        let mut at = start;
        while !done[at] {
            done[at] = true;
            let from = order[at];
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

/// A set of the items ([`SortedSet`]: of equal items the first is kept).
pub fn set<T: Ord>(items: impl IntoIterator<Item = T>) -> SortedSet<T> {
    items.into_iter().collect()
}

/// A map of the pairs ([`SortedMap`]: a later value replaces an earlier one of the same key).
pub fn map<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> SortedMap<K, V> {
    pairs.into_iter().collect()
}
