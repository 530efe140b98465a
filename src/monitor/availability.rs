//! Availability: how long each resource stood idle while clients waited for it, and when each
//! region could not use a service it relies on.

use crate::sorted::{SortedMap, SortedSet};

use serde::Serialize;

use crate::model::row_indices;
use crate::trace::{Event, What};
use crate::world::{Micros, ProtocolConfig, World};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unavailability {
    pub service: String,
    pub region: String,
    /// The client classes in that region that use the service.
    pub classes: Vec<String>,
    pub unavailable_us: Micros,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceReport {
    pub resource: String,
    /// Final value of every row.
    pub rows: SortedMap<String, i64>,
    /// Accepted writes (increments) per row.
    pub increments: SortedMap<String, u64>,
    /// Time during which at least one client waited to use the resource and none was using it.
    pub idle_while_waiting_us: Micros,
}

/// What each resource ends with (its rows' values and accepted writes) and how long it stood
/// idle while some client waited for it, one event at a time.
pub(super) struct ResourceTally {
    values: Vec<Vec<i64>>,
    increments: Vec<Vec<u64>>,
    waiting: Vec<u32>,
    busy: Vec<u32>,
    idle: Vec<Micros>,
    /// Since when each resource has stood idle while some client waits for it, if it does now.
    /// Idle time is added up when that ends, so events that change neither count cost nothing.
    idle_since: Vec<Option<Micros>>,
    client_waiting: Vec<bool>,
    client_busy: Vec<bool>,
}

impl ResourceTally {
    pub(super) fn new(world: &World) -> ResourceTally {
        let n = world.resources.len();
        let clients = world.clients.len();
        ResourceTally {
            values: world
                .resources
                .iter()
                .map(|r| vec![r.initial; r.rows.len()])
                .collect(),
            increments: world
                .resources
                .iter()
                .map(|r| vec![0; r.rows.len()])
                .collect(),
            waiting: vec![0; n],
            busy: vec![0; n],
            idle: vec![0; n],
            idle_since: vec![None; n],
            client_waiting: vec![false; clients],
            client_busy: vec![false; clients],
        }
    }

    /// Starts or ends a resource's idle stretch at `at` if its counts changed whether it is
    /// idle while waited for.
    fn settle(&mut self, r: usize, at: Micros) {
        let idle = self.waiting[r] > 0 && self.busy[r] == 0;
        match (self.idle_since[r], idle) {
            (None, true) => self.idle_since[r] = Some(at),
            (Some(since), false) => {
                self.idle[r] += at - since;
                self.idle_since[r] = None;
            }
            _ => {}
        }
    }

    pub(super) fn on(&mut self, world: &World, e: &Event) {
        let resource_of = |c: u32| world.clients[c as usize].resource as usize;
        match &e.what {
            What::OpStarted { client, .. } => {
                if !std::mem::replace(&mut self.client_waiting[*client as usize], true) {
                    let r = resource_of(*client);
                    self.waiting[r] += 1;
                    self.settle(r, e.at);
                }
            }
            What::BeliefStarted { client, .. } => {
                let r = resource_of(*client);
                if std::mem::replace(&mut self.client_waiting[*client as usize], false) {
                    self.waiting[r] -= 1;
                }
                if !std::mem::replace(&mut self.client_busy[*client as usize], true) {
                    self.busy[r] += 1;
                }
                self.settle(r, e.at);
            }
            What::GaveUp { client } => {
                if std::mem::replace(&mut self.client_waiting[*client as usize], false) {
                    let r = resource_of(*client);
                    self.waiting[r] -= 1;
                    self.settle(r, e.at);
                }
            }
            What::BeliefEnded { client, .. } => {
                if std::mem::replace(&mut self.client_busy[*client as usize], false) {
                    let r = resource_of(*client);
                    self.busy[r] -= 1;
                    self.settle(r, e.at);
                }
            }
            What::Write {
                resource,
                rows,
                accepted: true,
                values: written,
                ..
            } => {
                for (k, i) in row_indices(*rows).enumerate() {
                    self.values[*resource as usize][i] = written[k];
                    self.increments[*resource as usize][i] += 1;
                }
            }
            _ => {}
        }
    }

    pub(super) fn finish(mut self, world: &World, end: Micros) -> Vec<ResourceReport> {
        for r in 0..self.idle.len() {
            if let Some(since) = self.idle_since[r] {
                self.idle[r] += end.saturating_sub(since);
            }
        }
        world
            .resources
            .iter()
            .enumerate()
            .map(|(r, cfg)| ResourceReport {
                resource: cfg.name.clone(),
                rows: crate::sorted::map(
                    cfg.rows
                        .iter()
                        .enumerate()
                        .map(|(i, name)| (name.clone(), self.values[r][i])),
                ),
                increments: crate::sorted::map(
                    cfg.rows
                        .iter()
                        .enumerate()
                        .map(|(i, name)| (name.clone(), self.increments[r][i])),
                ),
                idle_while_waiting_us: self.idle[r],
            })
            .collect()
    }
}

/// Whether a region can use a service at `t`: the service is up, a majority of its replicas is
/// reachable, and for a subordinate, its authority is usable too.
fn usable(world: &World, service: u32, region: u32, t: Micros) -> bool {
    if world.outage_until(service, t).is_some() || !world.quorum_reachable(service, region, t) {
        return false;
    }
    match world.services[service as usize].authority {
        Some(a) => usable(world, a, region, t),
        None => true,
    }
}

/// The totals behind [`Verdict::unavailability`](super::Verdict::unavailability): for every
/// service and every region with a client that uses it, how long that region could not use it.
/// They are the lengths of [`unavailable_windows`] added up, so the totals and the windows a
/// timeline draws can never disagree.
pub(super) fn unavailability(world: &World, end: Micros) -> Vec<Unavailability> {
    // The windows come in the order of the loops below (by service, then region), so one pass
    // over them with a cursor adds up each pair's.
    let mut windows = unavailable_windows(world, end).into_iter().peekable();
    let mut out = Vec::new();
    for (s, svc) in world.services.iter().enumerate() {
        for (region, classes) in users(world, s as u32) {
            let mut down = 0;
            while let Some(w) = windows.next_if(|w| w.service == s as u32 && w.region == region) {
                down += w.to - w.from;
            }
            out.push(Unavailability {
                service: svc.name.clone(),
                region: world.regions[region as usize].clone(),
                classes: classes.into_iter().collect(),
                unavailable_us: down,
            });
        }
    }
    out
}

/// The regions with clients that use `service`, each with those clients' classes: whose
/// unavailability is counted.
fn users(world: &World, service: u32) -> SortedMap<u32, SortedSet<String>> {
    let mut regions: SortedMap<u32, SortedSet<String>> = SortedMap::new();
    for c in &world.clients {
        let uses = match &c.protocol {
            ProtocolConfig::Locks { services, .. } => services.contains(&service),
            ProtocolConfig::TokenChain {
                authority,
                subordinate,
            } => *authority == service || *subordinate == service,
            ProtocolConfig::NoLock => false,
        };
        if uses {
            regions
                .entry_or_default(c.region)
                .insert(world.classes[c.class as usize].clone());
        }
    }
    regions
}

/// One stretch of time in which a region could not use a service.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnavailableWindow {
    pub service: u32,
    pub region: u32,
    pub from: Micros,
    pub to: Micros,
    /// True when the service itself was down for the whole window; otherwise a majority of its
    /// replicas (or its authority) was out of the region's reach.
    pub outage: bool,
}

/// The stretches in which a region could not use a service: for every service and every region
/// with a client that uses it, in time order per service and region. This is the one definition
/// of unavailability: the verdict's totals
/// ([`Verdict::unavailability`](super::Verdict::unavailability)) are these windows' lengths.
///
/// Cost: the moments are the partitions' and outages' edges (bounded by the scenario's limits),
/// tested once per service and region.
pub fn unavailable_windows(world: &World, end: Micros) -> Vec<UnavailableWindow> {
    // Every moment at which availability can change.
    let mut marks: SortedSet<Micros> = SortedSet::new();
    marks.insert(0);
    marks.insert(end);
    for p in &world.partitions {
        marks.insert(p.start.min(end));
        marks.insert(p.end.min(end));
    }
    for s in &world.services {
        for (a, b) in &s.outages {
            marks.insert((*a).min(end));
            marks.insert((*b).min(end));
        }
    }
    let marks: Vec<Micros> = marks.into_iter().collect();
    let mut out: Vec<UnavailableWindow> = Vec::new();
    for s in 0..world.services.len() as u32 {
        for region in users(world, s).into_keys() {
            let mut open: Option<UnavailableWindow> = None;
            for w in marks.windows(2) {
                if w[1] <= w[0] {
                    continue;
                }
                if usable(world, s, region, w[0]) {
                    out.extend(open.take());
                    continue;
                }
                let outage = world.outage_until(s, w[0]).is_some();
                match &mut open {
                    Some(o) if o.to == w[0] => {
                        o.to = w[1];
                        o.outage &= outage;
                    }
                    _ => {
                        out.extend(open.take());
                        open = Some(UnavailableWindow {
                            service: s,
                            region,
                            from: w[0],
                            to: w[1],
                            outage,
                        });
                    }
                }
            }
            out.extend(open);
        }
    }
    out
}
