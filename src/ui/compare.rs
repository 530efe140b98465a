//! Two runs of the same scenario and seed, one toggle apart: which events differ.
//!
//! The simulator draws its random numbers per entity, so the two traces agree event for event
//! until the flipped toggle first makes a difference. An event counts as shared when the other
//! run has an event at the same time that reads the same; everything else is marked.

use std::collections::BTreeMap;

use crate::trace::Event;
use crate::world::{Micros, World};

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
    pub fn of(world_a: &World, a: &[Event], world_b: &World, b: &[Event]) -> Diff {
        let lines_a: Vec<(Micros, String)> = a.iter().map(|e| (e.at, e.render(world_a))).collect();
        let lines_b: Vec<(Micros, String)> = b.iter().map(|e| (e.at, e.render(world_b))).collect();
        let mut counts: BTreeMap<&(Micros, String), i64> = BTreeMap::new();
        for l in &lines_b {
            *counts.entry(l).or_default() += 1;
        }
        let only_a: Vec<bool> = lines_a
            .iter()
            .map(|l| match counts.get_mut(l) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect();
        let mut counts: BTreeMap<&(Micros, String), i64> = BTreeMap::new();
        for l in &lines_a {
            *counts.entry(l).or_default() += 1;
        }
        let only_b: Vec<bool> = lines_b
            .iter()
            .map(|l| match counts.get_mut(l) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect();
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
