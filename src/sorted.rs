//! Maps and sets kept as vectors sorted by key.
//!
//! The standard library's `BTreeMap` and `BTreeSet` compile their node code (search, insertion,
//! removal with rebalancing, iteration, dropping, cloning) once per key and value type, a few
//! kilobytes each, and the page's bundles used some twenty such types: 17 KB of the embed's
//! gzip. The maps and sets here mostly hold a handful of names, rows or services, so a sorted
//! vector serves as well, and its code per type is a binary search and a vector's insertion.
//! They iterate, compare, hash and serialize as the standard ones do (in key order, a map as a
//! JSON object), so a value's text and digest do not depend on which is used.
//!
//! Inserting one entry moves the later ones: a map that grows with a run's length is built
//! from all its pairs at once ([`SortedMap::from_pairs_merging`], one sort), and one that is
//! also emptied as the run goes (the agenda's index of leases) keeps a `BTreeMap`.
//!
//! Stable sorting through one compiled sort.
//!
//! The standard library's sort is generic: every element type and comparison that is sorted
//! compiles a copy of it, several kilobytes each, and the page's bundles carried over a dozen.
//! These functions sort the positions of the elements instead, with one comparison function
//! passed by reference, so that a single copy of the sort serves every caller; the elements are
//! then moved into their places. They are stable, like `slice::sort_by`: equal elements keep
//! their order, so replacing an unstable sort of fully ordered values changes nothing.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// The entries of a [`SortedMap`] in key order. A function pointer rather than a closure, so
/// that the type can be named and holds nothing to drop.
pub type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
/// The keys of a [`SortedMap`] in order.
pub type Keys<'a, K, V> = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> &'a K>;
/// The values of a [`SortedMap`] in their keys' order.
pub type Values<'a, K, V> = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> &'a V>;

/// A map whose entries are kept sorted by key, without repeated keys.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `key` is, or where it would go.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        match self.find(key) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// The map of `pairs`, which may come in any order and repeat keys: the values of one key
    /// are merged in the order they came, the later into the earlier. Sorting once takes
    /// O(n log n), where inserting one by one would move the later entries each time; this is
    /// the constructor for a map that grows with a run's length.
    pub fn from_pairs_merging(mut pairs: Vec<(K, V)>, mut merge: impl FnMut(&mut V, V)) -> Self {
        crate::sorted::sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        let mut entries: Vec<(K, V)> = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            match entries.last_mut() {
                Some(last) if last.0 == k => merge(&mut last.1, v),
                _ => entries.push((k, v)),
            }
        }
        SortedMap { entries }
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        match self.find(key) {
            Ok(i) => Some(self.entries.remove(i).1),
            Err(_) => None,
        }
    }

    /// The value of `key`, inserted as `make` gives it if the map has none.
    pub fn entry_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// The value of `key`, inserted as the default if the map has none.
    pub fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        self.entry_or_insert_with(key, V::default)
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> Keys<'_, K, V> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> Values<'_, K, V> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.entries.into_iter().map(|(k, _)| k)
    }
}

/// Built by inserting the pairs in order: a later value replaces an earlier one of the same
/// key, as with `collect` into a `BTreeMap`. Each insertion costs at most the map's length, so
/// this is for maps that stay small however many pairs come; a map as long as its input is
/// built with [`SortedMap::from_pairs_merging`].
impl<K: Ord, V> FromIterator<(K, V)> for SortedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut out = SortedMap::new();
        for (k, v) in pairs {
            out.insert(k, v);
        }
        out
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SortedMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<K, V> IntoIterator for SortedMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a SortedMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: Ord + Borrow<Q>, V, Q: Ord + ?Sized> std::ops::Index<&Q> for SortedMap<K, V> {
    type Output = V;
    /// The value of `key`; panics if the map has none, as indexing a `BTreeMap` does.
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("the key is in the map")
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SortedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: Serialize, V: Serialize> Serialize for SortedMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A set whose items are kept sorted, without repeats.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SortedSet<T> {
    items: Vec<T>,
}

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        SortedSet { items: Vec::new() }
    }
}

impl<T: Ord> SortedSet<T> {
    pub fn new() -> Self {
        Self::default()
    }

    fn find<Q: Ord + ?Sized>(&self, item: &Q) -> Result<usize, usize>
    where
        T: Borrow<Q>,
    {
        self.items.binary_search_by(|x| x.borrow().cmp(item))
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn contains<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.find(item).is_ok()
    }

    /// Adds `item`; false if the set had it already (and then keeps the one it had).
    pub fn insert(&mut self, item: T) -> bool {
        match self.find(&item) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, item);
                true
            }
        }
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        match self.find(item) {
            Ok(i) => {
                self.items.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The items of this set that `other` lacks, in order.
    pub fn difference<'a>(&'a self, other: &'a SortedSet<T>) -> impl Iterator<Item = &'a T> {
        self.items.iter().filter(move |x| !other.contains(*x))
    }
}

/// Built by inserting the items in order: of equal items the first is kept, as with `collect`
/// into a `BTreeSet`. As for a map, this is for sets that stay small (the services among a
/// run's overlaps, say); whether a long list repeats an item is [`repeated`]'s to say.
impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut out = SortedSet::new();
        for item in items {
            out.insert(item);
        }
        out
    }
}

/// For each item, whether an equal one came before it: what inserting them one by one into a
/// set would refuse, found with one sort where a sorted vector would move its entries for each
/// insertion. A scenario's lists are checked this way before their lengths are known to be
/// within the limits.
pub fn repeated<T: Ord>(items: &[T]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Stable: equal items keep the order they came in, so the first of each is not marked.
    crate::sorted::sort_by(&mut order, |a, b| items[*a].cmp(&items[*b]));
    let mut out = vec![false; items.len()];
    for pair in order.windows(2) {
        if items[pair[0]] == items[pair[1]] {
            out[pair[1]] = true;
        }
    }
    out
}

impl<T: Ord, const N: usize> From<[T; N]> for SortedSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

impl<T> IntoIterator for SortedSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T: fmt::Debug> fmt::Debug for SortedSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.items.iter()).finish()
    }
}

impl<T: Serialize> Serialize for SortedSet<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.items.len()))?;
        for x in &self.items {
            seq.serialize_element(x)?;
        }
        seq.end()
    }
}

// Stable sorting through one compiled sort (see the module's documentation).

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Every sequence of insertions and removals leaves the same entries, in the same order, as
    /// the standard library's map and set, and both serialize to the same JSON.
    #[test]
    fn sorted_collections_agree_with_the_standard_ones() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for _ in 0..200 {
            let (mut a, mut b) = (SortedMap::new(), BTreeMap::new());
            let (mut c, mut d) = (SortedSet::new(), BTreeSet::new());
            for _ in 0..40 {
                let (k, v, op) = (next() % 16, next(), next() % 4);
                if op == 0 {
                    assert_eq!(a.remove(&k), b.remove(&k));
                    assert_eq!(c.remove(&k), d.remove(&k));
                } else {
                    assert_eq!(a.insert(k, v), b.insert(k, v));
                    assert_eq!(c.insert(k), d.insert(k));
                    *a.entry_or_default(k + 1) += 1;
                    *b.entry(k + 1).or_default() += 1;
                }
            }
            assert!(a.iter().eq(b.iter()));
            let pairs: Vec<(u32, u32)> = (0..30).map(|_| (next() % 8, next() % 5)).collect();
            let mut sums = BTreeMap::new();
            for &(k, v) in &pairs {
                *sums.entry(k).or_insert(0) += v;
            }
            let merged = SortedMap::from_pairs_merging(pairs.clone(), |a, b| *a += b);
            assert!(merged.iter().eq(sums.iter()));
            let last: BTreeMap<u32, u32> = pairs.iter().copied().collect();
            let replaced = SortedMap::from_pairs_merging(pairs, |a, b| *a = b);
            assert!(replaced.iter().eq(last.iter()));
            assert!(c.iter().eq(d.iter()));
            let items: Vec<u32> = (0..30).map(|_| next() % 12).collect();
            let mut seen = BTreeSet::new();
            let refused: Vec<bool> = items.iter().map(|x| !seen.insert(*x)).collect();
            assert_eq!(repeated(&items), refused);
            assert!(items
                .iter()
                .copied()
                .collect::<SortedSet<u32>>()
                .iter()
                .eq(seen.iter()));
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap()
            );
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                serde_json::to_string(&d).unwrap()
            );
        }
    }
}
