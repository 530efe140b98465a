//! The snapshot: who believes they hold what at one instant, and who the services say holds it.

use crate::sorted::SortedMap;

use serde::Serialize;

use crate::trace::{Event, HoldChange, What};
use crate::world::{Micros, World};

use super::exclusion::{belief_spans, BeliefSpan, NamedGrant};
use super::{named, row_names, Exclusion};

/// The same monitors at one instant: who believes they hold what, right now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub at_us: Micros,
    pub exclusion: Exclusion,
    pub believers: Vec<Belief>,
    /// Pairs of clients whose beliefs conflict now.
    pub conflicts: Vec<[String; 2]>,
    /// Each service's holder of each lock, as the service sees it.
    pub holders: Vec<ServiceHolder>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Belief {
    pub client: String,
    pub resource: String,
    pub rows: Vec<String>,
    pub since_us: Micros,
    pub grants: Vec<NamedGrant>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceHolder {
    pub service: String,
    pub resource: String,
    pub client: String,
    pub token: u64,
}

/// Who believes they hold what at time `at`, from the trace alone.
pub fn snapshot(world: &World, events: &[Event], at: Micros) -> Snapshot {
    let upto = events.partition_point(|e| e.at <= at);
    let prefix = &events[..upto];
    let spans: Vec<BeliefSpan> = belief_spans(prefix, Micros::MAX)
        .into_iter()
        .filter(|s| s.end == Micros::MAX)
        .collect();
    let mut conflicts = Vec::new();
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.resource == b.resource && a.rows & b.rows != 0 && a.client != b.client {
                conflicts.push([
                    world.clients[a.client as usize].name.clone(),
                    world.clients[b.client as usize].name.clone(),
                ]);
            }
        }
    }
    let mut holders: SortedMap<(u32, u32), (u32, u64)> = SortedMap::new();
    for e in prefix {
        if let What::Service {
            service,
            resource,
            op,
            ..
        } = &e.what
        {
            let key = (*service, *resource);
            match op.hold_change() {
                Some(HoldChange::Begins { client, token }) => {
                    holders.insert(key, (client, token));
                }
                Some(HoldChange::Ends { client, .. }) => {
                    if holders.get(&key).is_some_and(|h| h.0 == client) {
                        holders.remove(&key);
                    }
                }
                None => {}
            }
        }
    }
    Snapshot {
        at_us: at,
        exclusion: if conflicts.is_empty() {
            Exclusion::Holds
        } else {
            Exclusion::Broken
        },
        believers: spans
            .iter()
            .map(|s| Belief {
                client: world.clients[s.client as usize].name.clone(),
                resource: world.resources[s.resource as usize].name.clone(),
                rows: row_names(world, s.resource, s.rows),
                since_us: s.start,
                grants: named(world, &s.grants),
            })
            .collect(),
        conflicts,
        holders: holders
            .into_iter()
            .map(|((s, r), (c, token))| ServiceHolder {
                service: world.services[s as usize].name.clone(),
                resource: world.resources[r as usize].name.clone(),
                client: world.clients[c as usize].name.clone(),
                token,
            })
            .collect(),
    }
}
