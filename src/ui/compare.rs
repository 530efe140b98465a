//! Two runs of the same scenario and seed, one toggle apart: which events differ.
//!
//! The simulator draws its random numbers per entity, so the two traces agree event for event
//! until the flipped toggle first makes a difference. An event counts as shared when the other
//! run has an equal event (same time, same happening); everything else is marked.

use crate::trace::Event;
use crate::world::Micros;

/// For each event of `these`, whether `others` lacks it, matching equal events one to one.
fn unmatched(these: &[Event], others: &[Event]) -> Vec<bool> {
    let mut counts = crate::sorted::SortedMap::from_pairs_merging(
        others.iter().map(|e| (e, 1usize)).collect(),
        |n, one| *n += one,
    );
    these
        .iter()
        .map(|e| match counts.get_mut(e) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// For each event of the first run: true if the second run has no such event.
    pub only_a: Vec<bool>,
    /// For each event of the second run: true if the first run has no such event.
    pub only_b: Vec<bool>,
    /// The time of the earliest event that is not shared.
    pub first_divergence: Option<Micros>,
}

impl Diff {
    /// The difference between two runs of worlds that name the same entities in the same
    /// order (one toggle apart), so that equal events mean the same thing in both.
    pub fn of(a: &[Event], b: &[Event]) -> Diff {
        let only_a = unmatched(a, b);
        let only_b = unmatched(b, a);
        let first = |flags: &[bool], events: &[Event]| {
            flags
                .iter()
                .zip(events)
                .find(|(f, _)| **f)
                .map(|(_, e)| e.at)
        };
        let first_divergence = match (first(&only_a, a), first(&only_b, b)) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        Diff {
            only_a,
            only_b,
            first_divergence,
        }
    }

    pub fn count_a(&self) -> usize {
        self.only_a.iter().filter(|f| **f).count()
    }

    pub fn count_b(&self) -> usize {
        self.only_b.iter().filter(|f| **f).count()
    }
}
