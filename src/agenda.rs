//! The agenda: steps waiting to happen, ordered by (time, sequence number).
//!
//! Small keys in two tiers, with the steps themselves in a slab beside them, so reordering
//! moves 32-byte keys rather than whole steps:
//!
//! - `near`, a vector sorted latest first holding the earliest keys, at most `NEAR_MAX` of
//!   them. Most new steps are due soon, so they go a few places from its end, and the earliest
//!   step is popped from its end. A quiet run (a few dozen steps waiting) lives here entirely,
//!   and for that a sorted vector is cheaper than any heap.
//! - `far`, a binary min-heap for every key later than all of `near`'s. When network jitter
//!   keeps tens of thousands of messages in flight, most new keys land here in logarithmic
//!   time, instead of costing a linear shift of one long sorted vector.
//!
//! `near` overflowing moves its later half to `far`; `near` running dry refills it with the
//! next `NEAR_MAX / 2` keys from `far`. Each key crosses between the tiers a bounded number of
//! times for each time it is pushed or popped, so every operation costs O(log n + NEAR_MAX)
//! amortized, with n the number of waiting steps.
//!
//! Taking a step by its sequence number (an explorer's choice) is logarithmic too: the item
//! leaves its slot at once; its key is removed from `near`, or stays in `far` as a stale key
//! that is dropped when it reaches the top, or when stale keys outnumber live ones. The index
//! from sequence numbers to slots that this needs is built by the first `take`, so the
//! simulator, which only ever pops the earliest step, never pays for it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::world::Micros;

/// The most keys `near` holds. Large enough for a busy run's whole agenda (a few dozen
/// steps), small enough that shifting it is a short copy.
const NEAR_MAX: usize = 128;

/// A key: time in the high 64 bits, sequence number in the low 64, so keys are unique and
/// compare as (time, sequence).
fn key(at: Micros, seq: u64) -> u128 {
    (u128::from(at) << 64) | u128::from(seq)
}

fn split(key: u128) -> (Micros, u64) {
    ((key >> 64) as Micros, key as u64)
}

#[derive(Clone, Debug)]
struct Entry<T> {
    at: Micros,
    seq: u64,
    item: T,
}

#[derive(Clone, Debug)]
pub struct Agenda<T> {
    /// (key, slot) for the earliest keys, sorted latest first. Every key here is earlier than
    /// every key in `far`.
    near: Vec<(u128, u32)>,
    /// (key, slot) for the later keys, the earliest on top. Keys whose item was taken by
    /// sequence number stay here, stale, until they are dropped; the top is never stale.
    far: BinaryHeap<Reverse<(u128, u32)>>,
    /// Items by slot, with their times and sequence numbers (the sequence number tells a
    /// stale key from the item that reused its slot); `None` marks a free slot.
    slots: Vec<Option<Entry<T>>>,
    free: Vec<u32>,
    /// How many keys in `far` are stale.
    stale: usize,
    /// Sequence number to slot, for `take`; `None` until the first `take`.
    by_seq: Option<BTreeMap<u64, u32>>,
}

impl<T> Default for Agenda<T> {
    fn default() -> Self {
        Agenda {
            near: Vec::new(),
            far: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            stale: 0,
            by_seq: None,
        }
    }
}

impl<T> Agenda<T> {
    /// Schedules `item` at `at`. Sequence numbers must be unique among waiting items; items
    /// due at the same time come out in the order of their sequence numbers.
    pub fn push(&mut self, at: Micros, seq: u64, item: T) {
        let entry = Some(Entry { at, seq, item });
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = entry;
                slot
            }
            None => {
                self.slots.push(entry);
                (self.slots.len() - 1) as u32
            }
        };
        if let Some(index) = &mut self.by_seq {
            index.insert(seq, slot);
        }
        let k = key(at, seq);
        match self.far.peek() {
            Some(Reverse((first_far, _))) if *first_far < k => {
                self.far.push(Reverse((k, slot)));
            }
            _ => self.push_near(k, slot),
        }
    }

    fn push_near(&mut self, k: u128, slot: u32) {
        // Most new steps are due soon, so their place is a few keys from the end: look there
        // first, and fall back to a binary search for steps due later.
        const LOOK: usize = 8;
        let near = &mut self.near;
        let mut index = near.len();
        let mut looked = 0;
        while index > 0 && looked < LOOK && near[index - 1].0 < k {
            index -= 1;
            looked += 1;
        }
        if looked == LOOK && index > 0 && near[index - 1].0 < k {
            index = near[..index].partition_point(|(other, _)| *other > k);
        }
        near.insert(index, (k, slot));
        if near.len() > NEAR_MAX {
            // The later half goes to `far`, all at once so `near` is shifted once per
            // NEAR_MAX / 2 overflows rather than at each.
            self.far.extend(
                near.drain(..NEAR_MAX / 2)
                    .map(|(k, slot)| Reverse((k, slot))),
            );
        }
    }

    /// Moves the next keys from `far` to `near`, which is empty.
    fn refill(&mut self) {
        debug_assert!(self.near.is_empty());
        while self.near.len() < NEAR_MAX / 2 {
            let Some(Reverse((k, slot))) = self.far.pop() else {
                break;
            };
            if self.stale > 0 && !Self::live(&self.slots, k, slot) {
                self.stale -= 1;
                continue;
            }
            self.near.push((k, slot));
        }
        self.near.reverse();
        self.drop_stale_top();
    }

    /// How many items are waiting.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.near.len() + self.far.len() - self.stale
    }

    /// Whether a key still stands for the item in its slot.
    fn live(slots: &[Option<Entry<T>>], key: u128, slot: u32) -> bool {
        slots[slot as usize]
            .as_ref()
            .is_some_and(|e| e.seq == split(key).1)
    }

    fn unslot(&mut self, slot: u32) -> Entry<T> {
        self.free.push(slot);
        let entry = self.slots[slot as usize]
            .take()
            .expect("every live key in the agenda has its item");
        if let Some(index) = &mut self.by_seq {
            index.remove(&entry.seq);
        }
        entry
    }

    /// Drops stale keys from the top of `far`, so its top is always a live item.
    fn drop_stale_top(&mut self) {
        while self.stale > 0 {
            match self.far.peek() {
                Some(Reverse((k, slot))) if !Self::live(&self.slots, *k, *slot) => {
                    self.far.pop();
                    self.stale -= 1;
                }
                _ => break,
            }
        }
    }

    /// The time of the earliest item.
    pub fn peek_at(&self) -> Option<Micros> {
        match self.near.last() {
            Some((k, _)) => Some(split(*k).0),
            None => self.far.peek().map(|Reverse((k, _))| split(*k).0),
        }
    }

    /// Removes the earliest item, returning (time, sequence number, item).
    pub fn pop(&mut self) -> Option<(Micros, u64, T)> {
        if self.near.is_empty() {
            self.refill();
        }
        let (_, slot) = self.near.pop()?;
        let Entry { at, seq, item } = self.unslot(slot);
        Some((at, seq, item))
    }

    /// Every item, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Micros, u64, &T)> {
        self.slots.iter().flatten().map(|e| (e.at, e.seq, &e.item))
    }

    /// Removes the item with the given sequence number.
    pub fn take(&mut self, seq: u64) -> Option<(Micros, u64, T)> {
        let slots = &self.slots;
        let index = self.by_seq.get_or_insert_with(|| {
            slots
                .iter()
                .enumerate()
                .filter_map(|(slot, entry)| entry.as_ref().map(|e| (e.seq, slot as u32)))
                .collect()
        });
        let slot = *index.get(&seq)?;
        let Entry { at, item, .. } = self.unslot(slot);
        let k = key(at, seq);
        let place = self.near.partition_point(|(other, _)| *other > k);
        if self.near.get(place).is_some_and(|(other, _)| *other == k) {
            self.near.remove(place);
        } else {
            // The key stays in `far`, stale; the slot may be reused at once, because a stale
            // key is recognised by its sequence number.
            self.stale += 1;
            self.drop_stale_top();
            if self.stale > 64 && self.stale > self.len() {
                let slots = &self.slots;
                self.far
                    .retain(|Reverse((k, slot))| Self::live(slots, *k, *slot));
                self.stale = 0;
            }
        }
        Some((at, seq, item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeSet;

    #[test]
    fn pops_in_the_same_order_as_a_sorted_list() {
        // Pushes interleaved with pops, never earlier than the last pop, as in a simulation.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut agenda = Agenda::default();
        let mut reference: Vec<(Micros, u64)> = Vec::new();
        let mut now = 0;
        let mut seq = 0;
        for _ in 0..20_000 {
            if rng.random_range(0..3) > 0 || reference.is_empty() {
                seq += 1;
                let at = now + rng.random_range(0..1_000);
                agenda.push(at, seq, seq);
                reference.push((at, seq));
            } else {
                reference.sort();
                let expected = reference.remove(0);
                let (at, s, item) = agenda.pop().unwrap();
                assert_eq!((at, s), expected);
                assert_eq!(item, s);
                now = at;
            }
            assert_eq!(agenda.len(), reference.len());
        }
    }

    #[test]
    fn equal_times_come_out_first_scheduled_first() {
        let mut agenda = Agenda::default();
        for seq in 1..=100u64 {
            // Two times, interleaved, so the heap's layout does not follow the pushes.
            agenda.push(10 + seq % 2, seq, ());
        }
        let order: Vec<(Micros, u64)> =
            std::iter::from_fn(|| agenda.pop().map(|(at, seq, _)| (at, seq))).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert_eq!(agenda.len(), 0);
        assert_eq!(agenda.peek_at(), None);
    }

    #[test]
    fn a_large_agenda_agrees_with_an_ordered_set_under_pops_and_takes() {
        // Tens of thousands of steps waiting at once, as heavy jitter makes them, with pops of
        // the earliest and takes of arbitrary sequence numbers mixed in.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut agenda = Agenda::default();
        let mut reference: BTreeSet<(Micros, u64)> = BTreeSet::new();
        let mut time_of: BTreeMap<u64, Micros> = BTreeMap::new();
        let mut now = 0;
        let mut seq = 0;
        for round in 0..100_000u32 {
            let grow = round < 50_000;
            let roll = rng.random_range(0..10);
            if reference.is_empty() || (grow && roll < 7) || (!grow && roll < 3) {
                seq += 1;
                let at = now + rng.random_range(0..50_000);
                agenda.push(at, seq, seq * 3);
                reference.insert((at, seq));
                time_of.insert(seq, at);
            } else if roll < 8 {
                let expected = reference.pop_first().unwrap();
                time_of.remove(&expected.1);
                let (at, s, item) = agenda.pop().unwrap();
                assert_eq!((at, s), expected);
                assert_eq!(item, s * 3);
                now = at;
            } else {
                // A step anywhere in the agenda, or one that was already taken.
                let wanted = rng.random_range(1..=seq);
                let found = time_of.remove(&wanted).map(|at| (at, wanted));
                let taken = agenda.take(wanted).map(|(at, s, item)| {
                    assert_eq!(item, s * 3);
                    (at, s)
                });
                assert_eq!(taken, found);
                if let Some(entry) = found {
                    reference.remove(&entry);
                }
            }
            assert_eq!(agenda.len(), reference.len());
            assert_eq!(agenda.peek_at(), reference.first().map(|(at, _)| *at));
            if round == 50_000 {
                assert!(agenda.len() > 20_000, "the agenda grew large");
                let mut all: Vec<(Micros, u64)> = agenda.iter().map(|(at, s, _)| (at, s)).collect();
                all.sort();
                assert!(all.iter().copied().eq(reference.iter().copied()));
            }
        }
    }
}
