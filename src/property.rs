//! Properties: named predicates over one state of the model, and the same names read from a
//! verdict.
//!
//! An explorer asks them of every state it reaches; the monitors answer them for a whole trace.
//! Each property is defined here once, with both readings, so a counterexample the explorer
//! finds in a state is the violation the verdict of its replayed trace reports.

use serde::Serialize;

use crate::model::{row_indices, State};
use crate::monitor::{Exclusion, Verdict};
use crate::world::World;

/// A safety property of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// No two clients believe at once that they hold common rows of one resource.
    Exclusion,
    /// No row of a resource is short of its initial value plus its accepted writes.
    NoLostUpdate,
    /// No client waits, through the services' queues, on itself.
    NoWaitCycle,
}

impl Property {
    /// Every property, in the order an explorer checks them.
    pub const ALL: [Property; 3] = [
        Property::Exclusion,
        Property::NoLostUpdate,
        Property::NoWaitCycle,
    ];

    /// The property's name, as the command line prints it.
    pub fn name(self) -> &'static str {
        match self {
            Property::Exclusion => "exclusion",
            Property::NoLostUpdate => "no lost update",
            Property::NoWaitCycle => "no wait cycle",
        }
    }

    /// What a violation means, in a sentence.
    pub fn broken(self) -> &'static str {
        match self {
            Property::Exclusion => {
                "two clients believe at the same time that they hold common rows"
            }
            Property::NoLostUpdate => "a row has lost an update",
            Property::NoWaitCycle => "clients wait for each other in a cycle across the services",
        }
    }

    /// Whether the property holds in a state.
    pub fn holds(self, world: &World, state: &State) -> bool {
        match self {
            Property::Exclusion => overlapping_believers(world, state).is_none(),
            Property::NoLostUpdate => lost_update(world, state).is_none(),
            Property::NoWaitCycle => wait_cycle(world, state).is_none(),
        }
    }

    /// Whether the property held throughout a trace, as the monitors judged it.
    pub fn holds_in(self, verdict: &Verdict) -> bool {
        match self {
            Property::Exclusion => verdict.exclusion == Exclusion::Holds,
            Property::NoLostUpdate => verdict.lost_updates == 0,
            Property::NoWaitCycle => verdict.wait_cycle_count == 0,
        }
    }
}

/// Two clients that believe now that they hold common rows of one resource, lower index first.
pub fn overlapping_believers(world: &World, state: &State) -> Option<[u32; 2]> {
    let believers = state
        .clients
        .iter()
        .enumerate()
        .filter(|(_, c)| c.believing);
    for (a, _) in believers.clone() {
        let x = &world.clients[a];
        for (b, _) in believers.clone().filter(|(b, _)| *b > a) {
            let y = &world.clients[b];
            if x.resource == y.resource && x.rows & y.rows != 0 {
                return Some([a as u32, b as u32]);
            }
        }
    }
    None
}

/// A row that has lost updates, as (resource, row, how many).
pub fn lost_update(world: &World, state: &State) -> Option<(u32, u32, u64)> {
    for (r, resource) in state.resources.iter().enumerate() {
        let initial = world.resources[r].initial;
        for i in row_indices(u64::MAX).take(resource.values.len()) {
            // The same wrapping arithmetic as the writes, so a huge initial value cannot
            // overflow here either.
            let expected = initial.wrapping_add(resource.versions[i] as i64);
            let lost = expected.wrapping_sub(resource.values[i]);
            if lost > 0 {
                return Some((r as u32, i as u32, lost as u64));
            }
        }
    }
    None
}

/// A cycle of clients each waiting in a service's queue behind the next one's hold, or `None`.
/// The graph is the services' own: a waiter waits for the holder of the lock it is queued on.
pub fn wait_cycle(world: &World, state: &State) -> Option<Vec<u32>> {
    let n = world.clients.len();
    // Out-edges per client, as a small list: a client waits on at most one lock per service.
    let mut waits: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut any = false;
    for service in &state.services {
        for lock in &service.locks {
            let Some(holder) = &lock.holder else { continue };
            for w in &lock.queue {
                if w.client != holder.client && !waits[w.client as usize].contains(&holder.client) {
                    waits[w.client as usize].push(holder.client);
                    any = true;
                }
            }
        }
    }
    if !any {
        return None;
    }
    // Depth-first search with colours: 0 unvisited, 1 on the path, 2 done.
    let mut colour = vec![0u8; n];
    let mut path: Vec<u32> = Vec::new();
    fn visit(
        c: u32,
        waits: &[Vec<u32>],
        colour: &mut [u8],
        path: &mut Vec<u32>,
    ) -> Option<Vec<u32>> {
        colour[c as usize] = 1;
        path.push(c);
        for &next in &waits[c as usize] {
            match colour[next as usize] {
                1 => {
                    let from = path.iter().position(|x| *x == next).expect("on the path");
                    return Some(path[from..].to_vec());
                }
                0 => {
                    if let Some(cycle) = visit(next, waits, colour, path) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        colour[c as usize] = 2;
        None
    }
    (0..n as u32).find_map(|c| {
        if colour[c as usize] == 0 {
            visit(c, &waits, &mut colour, &mut path)
        } else {
            None
        }
    })
}
