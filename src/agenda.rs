//! The agenda: steps waiting to happen, ordered by (time, sequence number).
//!
//! A binary heap of small keys, with the steps themselves in a slab beside it, so that sifting
//! moves 24-byte keys rather than whole steps. (A radix heap was tried and measured slower for
//! the small agendas a simulation keeps.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::world::Micros;

/// A key: time in the high 64 bits, sequence number in the low 64, so keys are unique and
/// compare as (time, sequence).
fn key(at: Micros, seq: u64) -> u128 {
    (u128::from(at) << 64) | u128::from(seq)
}

fn split(key: u128) -> (Micros, u64) {
    ((key >> 64) as Micros, key as u64)
}

#[derive(Clone, Debug)]
pub struct Agenda<T> {
    heap: BinaryHeap<Reverse<(u128, u32)>>,
    /// Items by slot; `None` marks a free slot.
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Agenda<T> {
    fn default() -> Self {
        Agenda {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Agenda<T> {
    pub fn push(&mut self, at: Micros, seq: u64, item: T) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(item);
                slot
            }
            None => {
                self.slots.push(Some(item));
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Reverse((key(at, seq), slot)));
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    fn unslot(&mut self, slot: u32) -> T {
        self.free.push(slot);
        self.slots[slot as usize]
            .take()
            .expect("every key in the agenda has its item")
    }

    /// The time of the earliest item.
    pub fn peek_at(&self) -> Option<Micros> {
        self.heap.peek().map(|Reverse((k, _))| split(*k).0)
    }

    /// Removes the earliest item, returning (time, sequence number, item).
    pub fn pop(&mut self) -> Option<(Micros, u64, T)> {
        let Reverse((k, slot)) = self.heap.pop()?;
        let (at, seq) = split(k);
        Some((at, seq, self.unslot(slot)))
    }

    /// Every item, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Micros, u64, &T)> {
        self.heap.iter().map(|Reverse((k, slot))| {
            let (at, seq) = split(*k);
            let item = self.slots[*slot as usize]
                .as_ref()
                .expect("every key in the agenda has its item");
            (at, seq, item)
        })
    }

    /// Removes the item with the given sequence number.
    pub fn take(&mut self, seq: u64) -> Option<(Micros, u64, T)> {
        let mut keys = std::mem::take(&mut self.heap).into_vec();
        let found = keys.iter().position(|Reverse((k, _))| split(*k).1 == seq);
        let taken = found.map(|i| keys.swap_remove(i));
        self.heap = keys.into();
        let Reverse((k, slot)) = taken?;
        let (at, seq) = split(k);
        Some((at, seq, self.unslot(slot)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

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
}
