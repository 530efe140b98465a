//! The agenda: steps waiting to happen, ordered by (time, sequence number).
//!
//! Small keys in two tiers, with the steps themselves in a slab beside them, so reordering
//! moves 24-byte keys rather than whole steps:
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
//! next `NEAR_MAX / 2` keys from `far`. A key crosses between the tiers at most a bounded number
//! of times for each push and pop, so every operation costs O(log n + NEAR_MAX) amortized, with
//! n the number of waiting steps.
//!
//! Taking a step by its sequence number (an explorer's choice) is logarithmic too: the item
//! leaves its slot at once; its key is removed from `near`, or stays in `far`, stale, until it
//! reaches the top or stale keys outnumber live ones. A stale key's slot stays empty and is not
//! reused until the key is dropped, so an empty slot is how a stale key is recognised. The index
//! from sequence numbers that `take` needs is built by its first call, so the simulator, which
//! only ever pops the earliest step, never pays for it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::world::Micros;

/// The most keys `near` holds. Large enough for a busy run's whole agenda (a few dozen
/// steps), small enough that shifting it is a short copy.
const NEAR_MAX: usize = 128;

/// A key: unique, and ordered by time, then sequence number. (Two `u64`s rather than one
/// `u128`: with the slot beside it an entry is 24 bytes instead of 32, which makes the shifts
/// in `near` shorter.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    at: Micros,
    seq: u64,
}

impl Key {
    /// The key as one number, time in the high half: comparing that is a single wide
    /// comparison without branches, where comparing field by field branches on the time.
    fn wide(self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.seq)
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.wide().cmp(&other.wide())
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }

    fn lt(&self, other: &Self) -> bool {
        self.wide() < other.wide()
    }

    fn gt(&self, other: &Self) -> bool {
        self.wide() > other.wide()
    }
}

#[derive(Clone, Debug)]
pub struct Agenda<T> {
    /// (key, slot) for the earliest keys, sorted latest first. Every key here is earlier than
    /// every key in `far`.
    near: Vec<(Key, u32)>,
    /// (key, slot) for the later keys, the earliest on top. Keys whose item was taken by
    /// sequence number stay here, stale, until they are dropped; the top is never stale.
    far: BinaryHeap<Reverse<(Key, u32)>>,
    /// Items by slot. `None` marks a free slot, or the slot of a stale key.
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    /// How many keys in `far` are stale.
    stale: usize,
    /// Sequence number to (time, slot), for `take`; `None` until the first `take`.
    by_seq: Option<BTreeMap<u64, (Micros, u32)>>,
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
        let slot = match self.free.pop() {
            Some(slot) => {
                // A free slot is empty: nothing in it needs dropping.
                std::mem::forget(self.slots[slot as usize].replace(item));
                slot
            }
            None => {
                self.slots.push(Some(item));
                (self.slots.len() - 1) as u32
            }
        };
        if self.by_seq.is_some() {
            self.index(seq, Some((at, slot)));
        }
        let k = Key { at, seq };
        match self.far.peek() {
            Some(Reverse((first_far, _))) if *first_far < k => self.push_far(k, slot),
            _ => self.push_near(k, slot),
        }
    }

    /// Records or forgets where a sequence number's item is, once `take` has been used.
    #[cold]
    #[inline(never)]
    fn index(&mut self, seq: u64, place: Option<(Micros, u32)>) {
        if let Some(index) = &mut self.by_seq {
            match place {
                Some(place) => index.insert(seq, place),
                None => index.remove(&seq),
            };
        }
    }

    // The rare paths stay out of line, so the common ones inline into the simulator's loop.
    #[inline(never)]
    fn push_far(&mut self, k: Key, slot: u32) {
        self.far.push(Reverse((k, slot)));
    }

    #[inline]
    fn push_near(&mut self, k: Key, slot: u32) {
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
            if self.stale > 0 && self.slots[slot as usize].is_none() {
                self.stale -= 1;
                self.free.push(slot);
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

    #[inline]
    fn unslot(&mut self, slot: u32) -> T {
        self.slots[slot as usize]
            .take()
            .expect("every live key in the agenda has its item")
    }

    /// Drops stale keys from the top of `far`, freeing their slots, so its top is always a
    /// live item.
    fn drop_stale_top(&mut self) {
        while self.stale > 0 {
            match self.far.peek() {
                Some(Reverse((_, slot))) if self.slots[*slot as usize].is_none() => {
                    self.free.push(*slot);
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
            Some((k, _)) => Some(k.at),
            None => self.far.peek().map(|Reverse((k, _))| k.at),
        }
    }

    /// Removes the earliest item, returning (time, sequence number, item).
    #[inline]
    pub fn pop(&mut self) -> Option<(Micros, u64, T)> {
        if self.near.is_empty() {
            self.refill();
        }
        let (k, slot) = self.near.pop()?;
        let item = self.unslot(slot);
        self.free.push(slot);
        if self.by_seq.is_some() {
            self.index(k.seq, None);
        }
        Some((k.at, k.seq, item))
    }

    /// Every key with a live item: in `near`, then in `far`.
    fn keys(&self) -> impl Iterator<Item = (Key, u32)> + '_ {
        self.near
            .iter()
            .copied()
            .chain(self.far.iter().map(|Reverse(entry)| *entry))
            .filter(|(_, slot)| self.slots[*slot as usize].is_some())
    }

    /// Every item, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Micros, u64, &T)> {
        self.keys().map(|(k, slot)| {
            let item = self.slots[slot as usize]
                .as_ref()
                .expect("only live keys are listed");
            (k.at, k.seq, item)
        })
    }

    /// Removes the item with the given sequence number.
    pub fn take(&mut self, seq: u64) -> Option<(Micros, u64, T)> {
        // An explorer's agenda is short and lives in `near`: a scan finds the item there without
        // building the index, which would cost more than the scan for every state explored.
        if self.by_seq.is_none() {
            if let Some(place) = self.near.iter().position(|(k, _)| k.seq == seq) {
                let (k, slot) = self.near.remove(place);
                let item = self.unslot(slot);
                self.free.push(slot);
                return Some((k.at, k.seq, item));
            }
        }
        if self.by_seq.is_none() {
            let index = self.keys().map(|(k, slot)| (k.seq, (k.at, slot))).collect();
            self.by_seq = Some(index);
        }
        let index = self.by_seq.as_mut().expect("built above");
        let (at, slot) = index.remove(&seq)?;
        let item = self.unslot(slot);
        let k = Key { at, seq };
        let place = self.near.partition_point(|(other, _)| *other > k);
        if self.near.get(place).is_some_and(|(other, _)| *other == k) {
            self.near.remove(place);
            self.free.push(slot);
        } else {
            // The key stays in `far`, stale, and keeps its slot empty until it is dropped.
            self.stale += 1;
            self.drop_stale_top();
            if self.stale > 64 && self.stale > self.len() {
                let (slots, free) = (&self.slots, &mut self.free);
                self.far.retain(|Reverse((_, slot))| {
                    let live = slots[*slot as usize].is_some();
                    if !live {
                        free.push(*slot);
                    }
                    live
                });
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
