//! The agenda: steps waiting to happen, ordered by (time, sequence number).
//!
//! A vector of small keys sorted latest first, with the steps themselves in a slab beside it.
//! Most new steps are due soon, so they are inserted near the end, and the earliest step is
//! popped from the end: for the few dozen steps a simulation keeps waiting this is cheaper than
//! a binary heap. (A binary heap and a radix heap were both measured slower here.)

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
    /// (key, slot), sorted by key, latest first.
    keys: Vec<(u128, u32)>,
    /// Items by slot; `None` marks a free slot.
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Agenda<T> {
    fn default() -> Self {
        Agenda {
            keys: Vec::new(),
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
        let k = key(at, seq);
        // Most new steps are due soon, so their place is a few keys from the end: look there
        // first, and fall back to a binary search for steps due later.
        const NEAR: usize = 8;
        let mut index = self.keys.len();
        let mut looked = 0;
        while index > 0 && looked < NEAR && self.keys[index - 1].0 < k {
            index -= 1;
            looked += 1;
        }
        if looked == NEAR && index > 0 && self.keys[index - 1].0 < k {
            index = self.keys[..index].partition_point(|(other, _)| *other > k);
        }
        self.keys.insert(index, (k, slot));
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    fn unslot(&mut self, slot: u32) -> T {
        self.free.push(slot);
        self.slots[slot as usize]
            .take()
            .expect("every key in the agenda has its item")
    }

    /// The time of the earliest item.
    pub fn peek_at(&self) -> Option<Micros> {
        self.keys.last().map(|(k, _)| split(*k).0)
    }

    /// Removes the earliest item, returning (time, sequence number, item).
    pub fn pop(&mut self) -> Option<(Micros, u64, T)> {
        let (k, slot) = self.keys.pop()?;
        let (at, seq) = split(k);
        Some((at, seq, self.unslot(slot)))
    }

    /// Every item, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Micros, u64, &T)> {
        self.keys.iter().map(|(k, slot)| {
            let (at, seq) = split(*k);
            let item = self.slots[*slot as usize]
                .as_ref()
                .expect("every key in the agenda has its item");
            (at, seq, item)
        })
    }

    /// Removes the item with the given sequence number.
    pub fn take(&mut self, seq: u64) -> Option<(Micros, u64, T)> {
        let index = self.keys.iter().position(|(k, _)| split(*k).1 == seq)?;
        let (k, slot) = self.keys.remove(index);
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
