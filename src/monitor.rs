//! Monitors: they read a trace and say what happened. Nothing else decides a verdict.
//!
//! Two verdicts are kept apart. *Exclusion* is about belief: did two clients believe they held
//! the lock on overlapping rows at the same time. *Integrity* is about data: was an update lost.
//! Fencing protects integrity, not belief.

// Several matches update state only when a condition holds; moving those conditions into match
// guards would hide side effects (set removals) inside patterns.
#![allow(clippy::collapsible_match)]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::row_indices;
use crate::sim::Run;
use crate::trace::{seconds, Event, GrantRef, HoldChange, ServiceOp, What};
use crate::world::{Micros, ProtocolConfig, World};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    Holds,
    Broken,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrity {
    Intact,
    Corrupted,
}

/// How many violations a verdict describes in detail; the rest are only counted, so a long run
/// with a broken protocol still gives a verdict of bounded size.
pub const VIOLATIONS_DETAILED_MAX: usize = 100;

/// A grant as a service logged it, named for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamedGrant {
    pub service: String,
    pub instant: u64,
    pub token: u64,
}

/// One client's side of an exclusion violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Holder {
    pub client: String,
    /// When this client started to believe it held the lock.
    pub since_us: Micros,
    pub grants: Vec<NamedGrant>,
}

/// Two clients believed they held the same rows at the same time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub resource: String,
    pub rows: Vec<String>,
    pub from_us: Micros,
    pub to_us: Micros,
    pub holders: [Holder; 2],
    /// What each service involved logged for this lock from the first grant to the end of the
    /// overlap: every log is consistent on its own.
    pub service_logs: Vec<ServiceExcerpt>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceExcerpt {
    pub service: String,
    pub lines: Vec<String>,
}

/// A cycle in the wait-for graph across services.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitCycle {
    pub clients: Vec<String>,
    pub services: Vec<String>,
    pub formed_us: Micros,
    /// When the cycle was broken, if it was.
    pub broken_us: Option<Micros>,
    /// What broke it: `"lease expiry"`, `"client timeout"`, `"a higher authority token"`,
    /// `"release"`, or nothing.
    pub broken_by: Option<String>,
    /// True if nothing in the scenario can ever break it: no client in it has an acquire
    /// timeout and no lock in it has a lease.
    pub unbreakable: bool,
}

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
    pub rows: BTreeMap<String, i64>,
    /// Accepted writes (increments) per row.
    pub increments: BTreeMap<String, u64>,
    /// Time during which at least one client waited to use the resource and none was using it.
    pub idle_while_waiting_us: Micros,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Operations {
    pub started: u64,
    /// Operations whose write the resource accepted.
    pub completed: u64,
    /// Operations that never got their locks.
    pub gave_up: u64,
    /// Operations a lease-aware client abandoned inside the critical section.
    pub abandoned: u64,
    /// Operations ended by a rejected access.
    pub rejected: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceLogCheck {
    pub service: String,
    pub operations: u64,
    pub grants: u64,
    /// Whether the service's own log obeys its invariants: consecutive instants, increasing
    /// tokens, and at most one holder per lock at every instant.
    pub consistent: bool,
    pub problems: Vec<String>,
}

/// Everything a run tells.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub exclusion: Exclusion,
    /// How many times two clients' beliefs overlapped.
    pub violation_count: u64,
    /// The first overlaps in detail (at most [`VIOLATIONS_DETAILED_MAX`]).
    pub violations: Vec<Violation>,
    pub integrity: Integrity,
    pub lost_updates: u64,
    /// Accepted writes that landed inside another client's read-modify-write on the same rows.
    pub interleaved_writes: u64,
    pub rejected_writes: u64,
    pub rejected_reads: u64,
    pub accepted_writes: u64,
    pub deadlock: bool,
    pub wait_cycles: Vec<WaitCycle>,
    /// Pairs of grants of the same lock by services with unrelated orders that overlapped in
    /// real time.
    pub incomparable_pairs: u64,
    /// The distinct pairs of services whose grants overlapped.
    pub overlapping_service_pairs: Vec<[String; 2]>,
    /// The most services with unrelated orders that held the same lock at one moment.
    pub max_simultaneous_holders: u32,
    pub operations: Operations,
    pub resources: Vec<ResourceReport>,
    pub unavailability: Vec<Unavailability>,
    pub service_logs: Vec<ServiceLogCheck>,
    pub events: u64,
    pub end_us: Micros,
    pub truncated: bool,
    pub seed: u64,
}

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

fn named(world: &World, grants: &[GrantRef]) -> Vec<NamedGrant> {
    grants
        .iter()
        .map(|g| NamedGrant {
            service: world.services[g.service as usize].name.clone(),
            instant: g.instant,
            token: g.token,
        })
        .collect()
}

fn row_names(world: &World, resource: u32, rows: u64) -> Vec<String> {
    let names = &world.resources[resource as usize].rows;
    row_indices(rows).map(|i| names[i].clone()).collect()
}

/// A belief interval of one client.
#[derive(Clone, Debug)]
struct BeliefSpan {
    client: u32,
    resource: u32,
    rows: u64,
    start: Micros,
    end: Micros,
    grants: Vec<GrantRef>,
}

fn belief_spans(events: &[Event], until: Micros) -> Vec<BeliefSpan> {
    let mut open: BTreeMap<u32, BeliefSpan> = BTreeMap::new();
    let mut spans = Vec::new();
    for e in events {
        match &e.what {
            What::BeliefStarted {
                client,
                resource,
                rows,
                grants,
            } => {
                open.insert(
                    *client,
                    BeliefSpan {
                        client: *client,
                        resource: *resource,
                        rows: *rows,
                        start: e.at,
                        end: until,
                        grants: grants.clone(),
                    },
                );
            }
            What::LockTransferred {
                client,
                from,
                to,
                token,
            } => {
                if let Some(span) = open.get_mut(client) {
                    for g in span.grants.iter_mut().filter(|g| g.service == *from) {
                        g.service = *to;
                        g.token = *token;
                    }
                }
            }
            What::BeliefEnded { client, .. } => {
                if let Some(mut span) = open.remove(client) {
                    span.end = e.at;
                    spans.push(span);
                }
            }
            _ => {}
        }
    }
    spans.extend(open.into_values());
    spans.sort_by_key(|s| (s.start, s.client));
    spans
}

/// Order domains: a subordinate shares its authority's order; independent services each have
/// their own.
fn order_root(world: &World, service: u32) -> u32 {
    world.services[service as usize]
        .authority
        .unwrap_or(service)
}

/// Computes the verdict of a finished run.
pub fn verdict(run: &Run) -> Verdict {
    verdict_of(&run.world, &run.events, run.end, run.truncated, run.seed)
}

/// Computes the verdict of a trace.
pub fn verdict_of(
    world: &World,
    events: &[Event],
    end: Micros,
    truncated: bool,
    seed: u64,
) -> Verdict {
    let (violation_count, violations) = exclusion_violations(world, events, end);
    let (interleaved_writes, rejected_writes, rejected_reads, accepted_writes) =
        data_counts(events);
    let resources = resource_reports(world, events, end);
    // Lost updates, exactly: every accepted write adds one to each row it touches, so whatever
    // a row falls short of its initial value plus its increments was lost.
    let lost_updates: u64 = resources
        .iter()
        .zip(&world.resources)
        .map(|(report, config)| {
            report
                .rows
                .iter()
                .map(|(row, value)| {
                    let grown = i128::from(*value) - i128::from(config.initial);
                    (i128::from(report.increments[row]) - grown).max(0) as u64
                })
                .sum::<u64>()
        })
        .sum();
    let wait_cycles = wait_cycles(world, events);
    let (incomparable_pairs, overlapping_service_pairs, max_simultaneous_holders) =
        incomparable(world, events, end);
    Verdict {
        exclusion: if violation_count == 0 {
            Exclusion::Holds
        } else {
            Exclusion::Broken
        },
        violation_count,
        violations,
        integrity: if lost_updates == 0 {
            Integrity::Intact
        } else {
            Integrity::Corrupted
        },
        lost_updates,
        interleaved_writes,
        rejected_writes,
        rejected_reads,
        accepted_writes,
        deadlock: wait_cycles
            .iter()
            .any(|c| c.broken_us.is_none() && c.unbreakable),
        wait_cycles,
        incomparable_pairs,
        overlapping_service_pairs,
        max_simultaneous_holders,
        operations: operations(events),
        resources,
        unavailability: unavailability(world, end),
        service_logs: check_service_logs(world, events),
        events: events.len() as u64,
        end_us: end,
        truncated,
        seed,
    }
}

/// One overlap of two clients' beliefs on shared rows, in the trace's own indices: every
/// overlap the exclusion verdict counts, without the details it keeps for the first few.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub resource: u32,
    /// The rows both believed they held, as a bit set.
    pub rows: u64,
    pub from: Micros,
    pub to: Micros,
    /// The two clients, the earlier believer first.
    pub clients: [u32; 2],
    /// When each began to believe.
    pub since: [Micros; 2],
    /// The grants each held.
    pub grants: [Vec<GrantRef>; 2],
}

/// Every overlap of two clients' beliefs in a run, in the order the verdict counts them.
pub fn overlaps(events: &[Event], end: Micros) -> Vec<Overlap> {
    let spans = belief_spans(events, end);
    let mut out = Vec::new();
    let mut active: Vec<&BeliefSpan> = Vec::new();
    for span in &spans {
        active.retain(|a| a.end > span.start);
        for other in &active {
            if other.client == span.client
                || other.resource != span.resource
                || other.rows & span.rows == 0
            {
                continue;
            }
            let from = span.start.max(other.start);
            let to = span.end.min(other.end);
            if from >= to {
                continue;
            }
            out.push(Overlap {
                resource: span.resource,
                rows: other.rows & span.rows,
                from,
                to,
                clients: [other.client, span.client],
                since: [other.start, span.start],
                grants: [other.grants.clone(), span.grants.clone()],
            });
        }
        active.push(span);
    }
    out
}

fn exclusion_violations(world: &World, events: &[Event], end: Micros) -> (u64, Vec<Violation>) {
    let all = overlaps(events, end);
    let violations = all
        .iter()
        .take(VIOLATIONS_DETAILED_MAX)
        .map(|o| {
            let services: BTreeSet<u32> = o.grants.iter().flatten().map(|g| g.service).collect();
            let since = o.since[0].min(o.since[1]);
            Violation {
                resource: world.resources[o.resource as usize].name.clone(),
                rows: row_names(world, o.resource, o.rows),
                from_us: o.from,
                to_us: o.to,
                holders: [0, 1].map(|k| Holder {
                    client: world.clients[o.clients[k] as usize].name.clone(),
                    since_us: o.since[k],
                    grants: named(world, &o.grants[k]),
                }),
                service_logs: services
                    .iter()
                    .map(|s| ServiceExcerpt {
                        service: world.services[*s as usize].name.clone(),
                        lines: service_excerpt(world, events, *s, o.resource, since, o.to),
                    })
                    .collect(),
            }
        })
        .collect();
    (all.len() as u64, violations)
}

/// A service's log lines for one lock between two times, including the grants that led in.
fn service_excerpt(
    world: &World,
    events: &[Event],
    service: u32,
    resource: u32,
    from: Micros,
    to: Micros,
) -> Vec<String> {
    const LINES_MAX: usize = 12;
    // Start a second before the first belief so the grants that caused it are included.
    let lead_in = from.saturating_sub(1_000_000);
    // Events are in time order, so the window is found by binary search, and only the lines
    // kept are rendered.
    let first = events.partition_point(|e| e.at < lead_in);
    let last = events.partition_point(|e| e.at <= to);
    let mut kept: Vec<&Event> = events[first..last]
        .iter()
        .rev()
        .filter(|e| {
            matches!(&e.what, What::Service { service: s, resource: r, op, .. }
                if *s == service && *r == resource
                    && !matches!(op, ServiceOp::Queued { .. } | ServiceOp::Cancelled { .. }))
        })
        .take(LINES_MAX)
        .collect();
    kept.reverse();
    kept.into_iter().map(|e| e.render(world)).collect()
}

fn data_counts(events: &[Event]) -> (u64, u64, u64, u64) {
    let mut interleaved = 0u64;
    let mut rejected_writes = 0u64;
    let mut rejected_reads = 0u64;
    let mut accepted = 0u64;
    // Open read-modify-write windows: client -> (resource, rows).
    let mut windows: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    for e in events {
        match &e.what {
            What::Read {
                client,
                resource,
                rows,
                accepted: true,
                ..
            } => {
                windows.insert(*client, (*resource, *rows));
            }
            What::Read {
                accepted: false, ..
            } => rejected_reads += 1,
            What::Write {
                client,
                resource,
                rows,
                accepted: ok,
                ..
            } => {
                windows.remove(client);
                if *ok {
                    accepted += 1;
                    if windows
                        .values()
                        .any(|(r, w)| r == resource && w & rows != 0)
                    {
                        interleaved += 1;
                    }
                } else {
                    rejected_writes += 1;
                }
            }
            What::BeliefEnded { client, .. } => {
                windows.remove(client);
            }
            _ => {}
        }
    }
    (interleaved, rejected_writes, rejected_reads, accepted)
}

fn operations(events: &[Event]) -> Operations {
    let mut ops = Operations::default();
    for e in events {
        match &e.what {
            What::OpStarted { .. } => ops.started += 1,
            What::Write { accepted: true, .. } => ops.completed += 1,
            What::GaveUp { .. } => ops.gave_up += 1,
            What::BeliefEnded { reason, .. } => match reason {
                crate::trace::BeliefEnd::LeaseExpiredLocally => ops.abandoned += 1,
                crate::trace::BeliefEnd::Rejected => ops.rejected += 1,
                crate::trace::BeliefEnd::Released => {}
            },
            _ => {}
        }
    }
    ops
}

/// The wait-for graph, rebuilt from service logs: for each lock in each service, its holder
/// and its waiters.
#[derive(Default)]
struct WaitGraph {
    holder: BTreeMap<(u32, u32), u32>,
    waiters: BTreeMap<(u32, u32), BTreeSet<u32>>,
}

impl WaitGraph {
    /// Whether the client waits in any queue: a holder that waits nowhere cannot close a cycle.
    fn waits(&self, client: u32) -> bool {
        self.waiters.values().any(|w| w.contains(&client))
    }
}

impl WaitGraph {
    fn apply(&mut self, service: u32, resource: u32, op: &ServiceOp) {
        let key = (service, resource);
        match *op {
            ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                self.holder.insert(key, client);
                if let Some(w) = self.waiters.get_mut(&key) {
                    w.remove(&client);
                }
            }
            ServiceOp::Queued { client, .. } => {
                self.waiters.entry(key).or_default().insert(client);
            }
            ServiceOp::Released { client, .. }
            | ServiceOp::Expired { client, .. }
            | ServiceOp::Superseded { client, .. } => {
                if self.holder.get(&key) == Some(&client) {
                    self.holder.remove(&key);
                }
            }
            ServiceOp::Cancelled { client } | ServiceOp::Refused { client, .. } => {
                if let Some(w) = self.waiters.get_mut(&key) {
                    w.remove(&client);
                }
            }
            ServiceOp::MovedOut { client, held, .. } => {
                if held {
                    if self.holder.get(&key) == Some(&client) {
                        self.holder.remove(&key);
                    }
                } else if let Some(w) = self.waiters.get_mut(&key) {
                    w.remove(&client);
                }
            }
            ServiceOp::ReleaseIgnored { .. } | ServiceOp::Drained { .. } => {}
        }
    }

    /// The edges `waiter -> holder` with the service that carries each.
    fn edges(&self) -> BTreeMap<u32, Vec<(u32, u32)>> {
        let mut edges: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
        for (key, waiters) in &self.waiters {
            if let Some(h) = self.holder.get(key) {
                for w in waiters {
                    if w != h {
                        edges.entry(*w).or_default().push((*h, key.0));
                    }
                }
            }
        }
        edges
    }

    /// A cycle through the graph, as (clients, services), if there is one.
    fn find_cycle(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        let edges = self.edges();
        for start in edges.keys() {
            // Depth-first search bounded by the number of clients in the graph.
            let mut path: Vec<(u32, u32)> = Vec::new();
            let mut visited = BTreeSet::new();
            if let Some(found) = dfs(&edges, *start, *start, &mut path, &mut visited) {
                return Some(found);
            }
        }
        None
    }
}

fn dfs(
    edges: &BTreeMap<u32, Vec<(u32, u32)>>,
    start: u32,
    at: u32,
    path: &mut Vec<(u32, u32)>,
    visited: &mut BTreeSet<u32>,
) -> Option<(Vec<u32>, Vec<u32>)> {
    if !visited.insert(at) {
        return None;
    }
    for (next, service) in edges.get(&at).into_iter().flatten() {
        path.push((at, *service));
        if *next == start {
            let clients = path.iter().map(|p| p.0).collect();
            let services = path.iter().map(|p| p.1).collect();
            return Some((clients, services));
        }
        if let Some(found) = dfs(edges, start, *next, path, visited) {
            return Some(found);
        }
        path.pop();
    }
    None
}

fn wait_cycles(world: &World, events: &[Event]) -> Vec<WaitCycle> {
    let mut graph = WaitGraph::default();
    let mut cycles = Vec::new();
    let mut current: Option<(Vec<u32>, Vec<u32>, Micros)> = None;
    for e in events {
        let What::Service {
            service,
            resource,
            op,
            ..
        } = &e.what
        else {
            continue;
        };
        graph.apply(*service, *resource, op);
        match &current {
            None => {
                // New cycles need a new edge (a client queued, or a waited-on lock changed hands)
                // that points at a holder which itself waits somewhere.
                let new_edge = matches!(
                    op,
                    ServiceOp::Queued { .. }
                        | ServiceOp::Granted { .. }
                        | ServiceOp::TransferredIn { .. }
                );
                let holder = graph.holder.get(&(*service, *resource)).copied();
                if new_edge && holder.is_some_and(|h| graph.waits(h)) {
                    if let Some((clients, services)) = graph.find_cycle() {
                        current = Some((clients, services, e.at));
                    }
                }
            }
            Some((clients, services, formed)) => {
                let still = graph.find_cycle().is_some_and(|(c, _)| {
                    let a: BTreeSet<_> = c.iter().collect();
                    let b: BTreeSet<_> = clients.iter().collect();
                    a == b
                });
                if !still {
                    let broken_by = match op {
                        ServiceOp::Expired { .. } => "lease expiry",
                        ServiceOp::Cancelled { .. } => "client timeout",
                        ServiceOp::Superseded { .. } => "a higher authority token",
                        _ => "release",
                    };
                    cycles.push(make_cycle(
                        world,
                        clients,
                        services,
                        *formed,
                        Some((e.at, broken_by)),
                    ));
                    current = None;
                    if let Some((clients, services)) = graph.find_cycle() {
                        current = Some((clients, services, e.at));
                    }
                }
            }
        }
    }
    if let Some((clients, services, formed)) = current {
        cycles.push(make_cycle(world, &clients, &services, formed, None));
    }
    cycles
}

fn make_cycle(
    world: &World,
    clients: &[u32],
    services: &[u32],
    formed: Micros,
    broken: Option<(Micros, &str)>,
) -> WaitCycle {
    let unbreakable = clients
        .iter()
        .all(|c| world.clients[*c as usize].acquire_timeout.is_none())
        && services
            .iter()
            .all(|s| world.services[*s as usize].lease.is_none());
    WaitCycle {
        clients: clients
            .iter()
            .map(|c| world.clients[*c as usize].name.clone())
            .collect(),
        services: services
            .iter()
            .map(|s| world.services[*s as usize].name.clone())
            .collect(),
        formed_us: formed,
        broken_us: broken.map(|b| b.0),
        broken_by: broken.map(|b| b.1.to_string()),
        unbreakable,
    }
}

/// A service-side hold interval.
#[derive(Clone, Copy)]
struct HoldSpan {
    resource: u32,
    service: u32,
    client: u32,
    start: Micros,
    end: Micros,
}

/// Service-side hold intervals, by start time.
fn hold_spans(events: &[Event], end: Micros) -> Vec<HoldSpan> {
    let mut open: BTreeMap<(u32, u32), (u32, Micros)> = BTreeMap::new();
    let mut spans = Vec::new();
    for e in events {
        let What::Service {
            service,
            resource,
            op,
            ..
        } = &e.what
        else {
            continue;
        };
        let key = (*resource, *service);
        match op.hold_change() {
            Some(HoldChange::Begins { client, .. }) => {
                // A confirmation of the same hold changes nothing.
                if open.get(&key).is_none_or(|(holder, _)| *holder != client) {
                    open.insert(key, (client, e.at));
                }
            }
            Some(HoldChange::Ends { client, .. }) => {
                if open.get(&key).is_some_and(|(h, _)| *h == client) {
                    let (_, start) = open.remove(&key).expect("checked");
                    spans.push(HoldSpan {
                        resource: *resource,
                        service: *service,
                        client,
                        start,
                        end: e.at,
                    });
                }
            }
            None => {}
        }
    }
    for ((resource, service), (client, start)) in open {
        spans.push(HoldSpan {
            resource,
            service,
            client,
            start,
            end,
        });
    }
    spans.sort_by_key(|s| (s.start, s.resource, s.service));
    spans
}

fn incomparable(world: &World, events: &[Event], end: Micros) -> (u64, Vec<[String; 2]>, u32) {
    let spans = hold_spans(events, end);
    let mut pairs = 0u64;
    let mut service_pairs: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut most = if spans.is_empty() { 0 } else { 1 };
    let mut active: Vec<HoldSpan> = Vec::new();
    for span in &spans {
        active.retain(|a| a.end > span.start);
        let mut roots = BTreeSet::new();
        roots.insert(order_root(world, span.service));
        for a in &active {
            // Two grants to one client are one client's plan, not a conflict; grants within
            // one order domain are ordered by it.
            if a.resource != span.resource
                || a.client == span.client
                || order_root(world, a.service) == order_root(world, span.service)
            {
                continue;
            }
            pairs += 1;
            service_pairs.insert((a.service.min(span.service), a.service.max(span.service)));
            roots.insert(order_root(world, a.service));
        }
        most = most.max(roots.len() as u32);
        active.push(*span);
    }
    let names = service_pairs
        .into_iter()
        .map(|(a, b)| {
            [
                world.services[a as usize].name.clone(),
                world.services[b as usize].name.clone(),
            ]
        })
        .collect();
    (pairs, names, most)
}

fn resource_reports(world: &World, events: &[Event], end: Micros) -> Vec<ResourceReport> {
    let n = world.resources.len();
    let mut values: Vec<Vec<i64>> = world
        .resources
        .iter()
        .map(|r| vec![r.initial; r.rows.len()])
        .collect();
    let mut increments: Vec<Vec<u64>> = world
        .resources
        .iter()
        .map(|r| vec![0; r.rows.len()])
        .collect();
    let mut waiting = vec![0u32; n];
    let mut busy = vec![0u32; n];
    let mut idle = vec![0 as Micros; n];
    let mut last = 0;
    let mut client_waiting: BTreeSet<u32> = BTreeSet::new();
    let mut client_busy: BTreeSet<u32> = BTreeSet::new();
    let resource_of = |c: u32| world.clients[c as usize].resource as usize;
    for e in events {
        for r in 0..n {
            if waiting[r] > 0 && busy[r] == 0 {
                idle[r] += e.at - last;
            }
        }
        last = e.at;
        match &e.what {
            What::OpStarted { client, .. } => {
                let locking = world.clients[*client as usize].protocol != ProtocolConfig::NoLock;
                if locking && client_waiting.insert(*client) {
                    waiting[resource_of(*client)] += 1;
                }
                if !locking && client_busy.insert(*client) {
                    busy[resource_of(*client)] += 1;
                }
            }
            What::BeliefStarted { client, .. } => {
                if client_waiting.remove(client) {
                    waiting[resource_of(*client)] -= 1;
                }
                if client_busy.insert(*client) {
                    busy[resource_of(*client)] += 1;
                }
            }
            What::GaveUp { client } => {
                if client_waiting.remove(client) {
                    waiting[resource_of(*client)] -= 1;
                }
            }
            What::BeliefEnded { client, .. } => {
                if client_busy.remove(client) {
                    busy[resource_of(*client)] -= 1;
                }
            }
            What::Write {
                client,
                resource,
                rows,
                accepted,
                values: written,
                ..
            } => {
                if *accepted {
                    for (k, i) in row_indices(*rows).enumerate() {
                        values[*resource as usize][i] = written[k];
                        increments[*resource as usize][i] += 1;
                    }
                }
                let no_lock = world.clients[*client as usize].protocol == ProtocolConfig::NoLock;
                if no_lock && client_busy.remove(client) {
                    busy[resource_of(*client)] -= 1;
                }
            }
            _ => {}
        }
    }
    for r in 0..n {
        if waiting[r] > 0 && busy[r] == 0 && end > last {
            idle[r] += end - last;
        }
    }

    world
        .resources
        .iter()
        .enumerate()
        .map(|(r, cfg)| ResourceReport {
            resource: cfg.name.clone(),
            rows: cfg
                .rows
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), values[r][i]))
                .collect(),
            increments: cfg
                .rows
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), increments[r][i]))
                .collect(),
            idle_while_waiting_us: idle[r],
        })
        .collect()
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

fn unavailability(world: &World, end: Micros) -> Vec<Unavailability> {
    // Every moment at which availability can change.
    let mut marks: BTreeSet<Micros> = BTreeSet::new();
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
    let mut out = Vec::new();
    for (s, svc) in world.services.iter().enumerate() {
        // Regions with clients that use this service, and those classes.
        let mut regions: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
        for c in &world.clients {
            let uses = match &c.protocol {
                ProtocolConfig::Locks { services, .. } => services.contains(&(s as u32)),
                ProtocolConfig::TokenChain {
                    authority,
                    subordinate,
                } => *authority == s as u32 || *subordinate == s as u32,
                ProtocolConfig::NoLock => false,
            };
            if uses {
                regions
                    .entry(c.region)
                    .or_default()
                    .insert(world.classes[c.class as usize].clone());
            }
        }
        for (region, classes) in regions {
            let mut down = 0;
            for w in marks.windows(2) {
                if w[1] > w[0] && !usable(world, s as u32, region, w[0]) {
                    down += w[1] - w[0];
                }
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

/// Checks each service's own log: its instants count up by one, its new tokens increase, and
/// it never has two holders of one lock.
pub fn check_service_logs(world: &World, events: &[Event]) -> Vec<ServiceLogCheck> {
    let n = world.services.len();
    let mut last_instant = vec![0u64; n];
    let mut last_token: Vec<Option<u64>> = vec![None; n];
    let mut holders: BTreeMap<(u32, u32), (u32, u64)> = BTreeMap::new();
    let mut problems: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut operations = vec![0u64; n];
    let mut grants = vec![0u64; n];
    for e in events {
        let What::Service {
            service,
            instant,
            resource,
            op,
        } = &e.what
        else {
            continue;
        };
        let s = *service as usize;
        operations[s] += 1;
        if *instant != last_instant[s] + 1 {
            problems[s].push(format!(
                "instant {} follows instant {}",
                instant, last_instant[s]
            ));
        }
        last_instant[s] = *instant;
        let key = (*service, *resource);
        match *op {
            ServiceOp::Granted { client, token, .. }
            | ServiceOp::TransferredIn { client, token, .. } => {
                match holders.get(&key) {
                    Some((h, t)) if *h == client && *t == token => continue,
                    Some((h, _)) => problems[s].push(format!(
                        "instant {instant}: granted to {} while {} holds it",
                        world.clients[client as usize].name, world.clients[*h as usize].name
                    )),
                    None => {}
                }
                if last_token[s].is_some_and(|t| token <= t) {
                    problems[s].push(format!(
                        "instant {instant}: token {token} does not increase"
                    ));
                }
                last_token[s] = Some(token);
                grants[s] += 1;
                holders.insert(key, (client, token));
            }
            ServiceOp::Released { client, token }
            | ServiceOp::Expired { client, token }
            | ServiceOp::Superseded { client, token } => {
                if holders.get(&key) == Some(&(client, token)) {
                    holders.remove(&key);
                } else {
                    problems[s].push(format!(
                        "instant {instant}: {} ended a hold it did not have",
                        world.clients[client as usize].name
                    ));
                }
            }
            ServiceOp::MovedOut {
                client, held: true, ..
            } => {
                if holders.get(&key).is_some_and(|(h, _)| *h == client) {
                    holders.remove(&key);
                }
            }
            _ => {}
        }
    }
    world
        .services
        .iter()
        .enumerate()
        .map(|(s, svc)| ServiceLogCheck {
            service: svc.name.clone(),
            operations: operations[s],
            grants: grants[s],
            consistent: problems[s].is_empty(),
            problems: std::mem::take(&mut problems[s]),
        })
        .collect()
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
    let mut holders: BTreeMap<(u32, u32), (u32, u64)> = BTreeMap::new();
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

impl Verdict {
    /// The verdict in words a learner understands. The first line begins "Exclusion holds" or
    /// "Exclusion broken".
    pub fn summary(&self) -> String {
        let mut out = String::new();
        match self.violations.first() {
            None => out.push_str(
                "Exclusion holds: no two clients believed they held the same rows at once.",
            ),
            Some(v) => {
                let grants = |h: &Holder| {
                    h.grants
                        .iter()
                        .map(|g| {
                            format!(
                                "service {} granted at its instant {} (token {})",
                                g.service, g.instant, g.token
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" and ")
                };
                out.push_str(&format!(
                    "Exclusion broken: {} and {} both held {}[{}] from t={} to t={}; for {}, {}; for {}, {}.",
                    v.holders[0].client,
                    v.holders[1].client,
                    v.resource,
                    v.rows.join(","),
                    seconds(v.from_us),
                    seconds(v.to_us),
                    v.holders[0].client,
                    grants(&v.holders[0]),
                    v.holders[1].client,
                    grants(&v.holders[1]),
                ));
                if self.violation_count > 1 {
                    out.push_str(&format!(" ({} overlaps in all.)", self.violation_count));
                }
            }
        }
        out.push('\n');
        out.push_str(&format!(
            "Integrity {}: {} lost update(s), {} write(s) inside another's critical section, {} write(s) and {} read(s) rejected by fencing, {} accepted write(s).\n",
            match self.integrity {
                Integrity::Intact => "intact",
                Integrity::Corrupted => "corrupted",
            },
            self.lost_updates,
            self.interleaved_writes,
            self.rejected_writes,
            self.rejected_reads,
            self.accepted_writes
        ));
        if self.deadlock {
            out.push_str("Deadlock: a wait-for cycle across services that nothing times out.\n");
        } else if !self.wait_cycles.is_empty() {
            out.push_str(&format!(
                "No deadlock, but {} wait-for cycle(s) formed and were broken.\n",
                self.wait_cycles.len()
            ));
        } else {
            out.push_str("No deadlock.\n");
        }
        for c in &self.wait_cycles {
            out.push_str(&format!(
                "  cycle {} over {} from t={}{}\n",
                c.clients.join(" -> "),
                c.services.join(","),
                seconds(c.formed_us),
                match (&c.broken_us, &c.broken_by) {
                    (Some(t), Some(by)) => format!(", broken at t={} by {}", seconds(*t), by),
                    _ => ", never broken".to_string(),
                }
            ));
        }
        out.push_str(&format!(
            "Incomparable grant pairs: {} (services overlapping: {}; at most {} at once).\n",
            self.incomparable_pairs,
            if self.overlapping_service_pairs.is_empty() {
                "none".to_string()
            } else {
                self.overlapping_service_pairs
                    .iter()
                    .map(|p| format!("{}+{}", p[0], p[1]))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            self.max_simultaneous_holders
        ));
        for r in &self.resources {
            out.push_str(&format!(
                "Resource {}: idle {} while clients waited; rows {}.\n",
                r.resource,
                seconds(r.idle_while_waiting_us),
                r.rows
                    .iter()
                    .map(|(k, v)| format!("{k}={v} ({} writes)", r.increments[k]))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for u in &self.unavailability {
            if u.unavailable_us > 0 {
                out.push_str(&format!(
                    "Service {} unavailable to {} ({}) for {}.\n",
                    u.service,
                    u.region,
                    u.classes.join(", "),
                    seconds(u.unavailable_us)
                ));
            }
        }
        let o = &self.operations;
        out.push_str(&format!(
            "Operations: {} started, {} completed, {} gave up, {} abandoned, {} rejected.\n",
            o.started, o.completed, o.gave_up, o.abandoned, o.rejected
        ));
        for l in &self.service_logs {
            if !l.consistent {
                out.push_str(&format!(
                    "Service {}'s log is INCONSISTENT: {}\n",
                    l.service,
                    l.problems.join("; ")
                ));
            }
        }
        if self.truncated {
            out.push_str(&format!(
                "The run stopped early at t={}: it reached its event budget.\n",
                seconds(self.end_us)
            ));
        }
        out
    }
}
