//! Monitors: they read a trace and say what happened. Nothing else decides a verdict.
//!
//! Two verdicts are kept apart. *Exclusion* is about belief: did two clients believe they held
//! the lock on overlapping rows at the same time. *Integrity* is about data: was an update lost.
//! Fencing protects integrity, not belief.

// Several matches update state only when a condition holds; moving those conditions into match
// guards would hide side effects (set removals) inside patterns.
#![allow(clippy::collapsible_match)]

use crate::sorted::SortedMap;

use serde::Serialize;

use crate::model::row_indices;
use crate::trace::{Event, GrantRef, Recorded, ServiceOp, What};
use crate::world::{Micros, World};

mod availability;
mod deadlock;
mod exclusion;
mod integrity;
mod logs;
mod snapshot;
mod text;

pub use availability::{unavailable_windows, ResourceReport, Unavailability, UnavailableWindow};
pub use deadlock::{Livelock, WaitCycle, LIVELOCK_CYCLES_MIN};
pub use exclusion::{
    scan_overlaps, Holder, NamedGrant, Overlap, OverlapBand, OverlapScan, ServiceExcerpt, Violation,
};
pub use integrity::{lost_updates, LostIncrement, LostUpdateDetail, LostUpdates};
pub use logs::{check_service_logs, ServiceLogCheck};
pub use snapshot::{snapshot, Belief, ServiceHolder, Snapshot};
pub use text::{render_trace, trace_lines};

use availability::{unavailability, ResourceTally};
use deadlock::{CycleWatch, StallWatch};
use exclusion::{overlaps_of, violation, LockLines, SpanCollector};
use integrity::{lost_detail, DataCounter, WriteCollector};
use logs::LogCheck;

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
    /// Attempts of majority clients that got fewer grants than their quorum: split votes, or
    /// services that did not answer while the lock could still be valid.
    #[serde(skip_serializing_if = "is_zero")]
    pub quorums_missed: u64,
    /// Attempts of majority clients that got their quorum only after acquiring had taken the
    /// lock's whole validity.
    #[serde(skip_serializing_if = "is_zero")]
    pub validity_spent: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A service that came back from an outage without its state (`forgets_on_restart`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Restart {
    pub service: String,
    pub at_us: Micros,
    /// The holds it forgot, as (client, token); their clients were not told.
    pub forgotten: Vec<(String, u64)>,
    /// The requests it had queued and forgot.
    pub forgotten_waits: u64,
    /// The token it issues next: its first token again.
    pub next_token: u64,
}

/// One client class's work in a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClassWork {
    pub class: String,
    /// Operations of the class's clients whose write the resource accepted.
    pub completed: u64,
    /// Critical sections the class's clients entered (each operation's belief that it holds
    /// its locks began).
    pub sections: u64,
    /// The time from each of those operations' start to its section's start, added up: what
    /// the class paid in waiting for its locks.
    pub waited_us: u64,
}

impl ClassWork {
    /// The mean time from an operation's start to its critical section, in microseconds (0
    /// when no section began).
    pub fn mean_wait_us(&self) -> u64 {
        self.waited_us.checked_div(self.sections).unwrap_or(0)
    }
}

impl Verdict {
    /// The classes whose clients completed no operation in this run.
    pub fn starved_classes(&self) -> Vec<&str> {
        self.class_work
            .iter()
            .filter(|w| w.completed == 0)
            .map(|w| w.class.as_str())
            .collect()
    }
}

/// Everything a run tells.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub exclusion: Exclusion,
    /// How many times two clients' beliefs overlapped.
    pub violation_count: u64,
    /// The first overlaps in detail (at most [`VIOLATIONS_DETAILED_MAX`]).
    pub violations: Vec<Violation>,
    /// Clients that entered a critical section without any lock.
    pub unprotected_clients: Vec<String>,
    pub integrity: Integrity,
    /// Increments missing from the rows' final values: for each row, its accepted writes minus
    /// its growth. Each is attributed to the write that erased it (see [`lost_updates`]).
    pub lost_updates: u64,
    /// The first lost updates, each with the write that erased it.
    pub lost_update_details: Vec<LostUpdateDetail>,
    /// Accepted writes that landed inside another client's read-modify-write on the same rows.
    pub interleaved_writes: u64,
    pub rejected_writes: u64,
    pub rejected_reads: u64,
    pub accepted_writes: u64,
    pub deadlock: bool,
    /// How many wait-for cycles formed; the first are in `wait_cycles` (with an unbroken one
    /// always kept as the last).
    pub wait_cycle_count: u64,
    pub wait_cycles: Vec<WaitCycle>,
    /// How many livelocks there were; the first are in `livelocks`.
    pub livelock_count: u64,
    /// Stretches in which clients waited, nothing completed, and wait-for cycles kept forming
    /// and breaking.
    pub livelocks: Vec<Livelock>,
    /// Overlaps (as counted in `violation_count`) in which both clients held grants and no
    /// service ordered both: their grants come from disjoint order domains, so no token
    /// comparison can say which is newer.
    pub incomparable_pairs: u64,
    /// The distinct pairs of services behind those overlaps.
    pub overlapping_service_pairs: Vec<[String; 2]>,
    /// The most clients that believed at one moment they held a common row, each through
    /// grants whose order domains none of the others shared (1 if some lock was granted and no
    /// such overlap happened, 0 if no client ever held a grant).
    pub max_simultaneous_holders: u32,
    pub operations: Operations,
    /// Each client class's completed operations (accepted writes), in the scenario's order of
    /// classes: a class with none got no work done, whatever the other figures say.
    pub class_work: Vec<ClassWork>,
    pub resources: Vec<ResourceReport>,
    pub unavailability: Vec<Unavailability>,
    /// Every restart of a service without persistence, in time order (at most
    /// [`VIOLATIONS_DETAILED_MAX`]; the scenario's limits allow few more).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<Restart>,
    pub service_logs: Vec<ServiceLogCheck>,
    pub events: u64,
    pub end_us: Micros,
    pub truncated: bool,
    pub seed: u64,
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

/// Computes the verdict of a finished run.
pub fn verdict(run: &impl Recorded) -> Verdict {
    verdict_of(
        run.world(),
        run.events(),
        run.end(),
        run.truncated(),
        run.seed(),
    )
}

/// The parts of a verdict that a timeline draws too, computed once for both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    pub overlaps: OverlapScan,
    pub lost: LostUpdates,
}

/// Scans a trace for overlaps and lost updates, keeping the first `keep` overlaps in detail
/// (at least [`VIOLATIONS_DETAILED_MAX`], which the verdict needs).
pub fn analyse(world: &World, events: &[Event], end: Micros, keep: usize) -> Analysis {
    let mut analysis = Analyser::new(world);
    for (i, e) in events.iter().enumerate() {
        analysis.on(i, e);
    }
    analysis.finish(world, end, keep)
}

/// What an analysis reads from a trace, one event at a time.
struct Analyser<'a> {
    spans: SpanCollector<'a>,
    writes: WriteCollector,
}

impl<'a> Analyser<'a> {
    fn new(world: &World) -> Analyser<'a> {
        Analyser {
            spans: SpanCollector::default(),
            writes: WriteCollector::new(world),
        }
    }

    // The one pass's body: a call per event would cost more than most monitors' work.
    #[inline(always)]
    fn on(&mut self, i: usize, e: &'a Event) {
        self.spans.on(e);
        self.writes.on(i, e);
    }

    fn finish(self, world: &World, end: Micros, keep: usize) -> Analysis {
        let keep = keep.max(VIOLATIONS_DETAILED_MAX);
        Analysis {
            overlaps: overlaps_of(world, &self.spans.finish(end), keep),
            lost: self.writes.finish(keep),
        }
    }
}

/// Analyses a trace and computes its verdict in one pass over it (see [`analyse`] and
/// [`verdict_from`]): a long trace is larger than the processor's caches, so reading it once
/// instead of twice is much of the verdict's speed.
pub fn judge(
    world: &World,
    events: &[Event],
    end: Micros,
    truncated: bool,
    seed: u64,
    keep: usize,
) -> (Analysis, Verdict) {
    let mut analyser = Analyser::new(world);
    let mut monitors = Monitors::new(world);
    for (i, e) in events.iter().enumerate() {
        analyser.on(i, e);
        monitors.on(world, i, e);
    }
    let analysis = analyser.finish(world, end, keep);
    let verdict = monitors.finish(world, events, end, truncated, seed, &analysis);
    (analysis, verdict)
}

/// Computes the verdict of a trace.
pub fn verdict_of(
    world: &World,
    events: &[Event],
    end: Micros,
    truncated: bool,
    seed: u64,
) -> Verdict {
    judge(world, events, end, truncated, seed, VIOLATIONS_DETAILED_MAX).1
}

/// Computes the verdict of a trace from its analysis.
pub fn verdict_from(
    world: &World,
    events: &[Event],
    end: Micros,
    truncated: bool,
    seed: u64,
    analysis: &Analysis,
) -> Verdict {
    let mut monitors = Monitors::new(world);
    for (i, e) in events.iter().enumerate() {
        monitors.on(world, i, e);
    }
    monitors.finish(world, events, end, truncated, seed, analysis)
}

/// The verdict's monitors. One pass over the trace feeds every one of them: a long trace is
/// larger than the processor's caches, so reading it once instead of once per monitor is most
/// of the verdict's speed. The same pass lists the log lines that violations quote.
struct Monitors {
    quoted: LockLines,
    data: DataCounter,
    tally: ResourceTally,
    operations: Operations,
    watch: CycleWatch,
    stalls: StallWatch,
    logs: LogCheck,
    unprotected: Vec<bool>,
    /// Accepted writes by client.
    completed: Vec<u64>,
    /// When each client's current operation started.
    op_start: Vec<Micros>,
    /// Sections begun and the time waited for them, by client.
    sections: Vec<u64>,
    waited: Vec<u64>,
    restarts: Vec<Restart>,
}

impl Monitors {
    fn new(world: &World) -> Monitors {
        Monitors {
            quoted: LockLines::new(world),
            data: DataCounter::new(world),
            tally: ResourceTally::new(world),
            operations: Operations::default(),
            watch: CycleWatch::new(world),
            stalls: StallWatch::new(),
            logs: LogCheck::new(world),
            unprotected: vec![false; world.clients.len()],
            completed: vec![0; world.clients.len()],
            op_start: vec![0; world.clients.len()],
            sections: vec![0; world.clients.len()],
            waited: vec![0; world.clients.len()],
            restarts: Vec::new(),
        }
    }

    // The one pass's body: a call per event would cost more than most monitors' work.
    #[inline(always)]
    fn on(&mut self, world: &World, i: usize, e: &Event) {
        self.quoted.on(i, e);
        self.data.on(e);
        self.tally.on(world, e);
        self.operations.on(e);
        self.watch.on(world, e);
        self.stalls.on(world, e, &self.watch.cycles);
        self.logs.on(world, e);
        match &e.what {
            What::OpStarted { client, .. } => self.op_start[*client as usize] = e.at,
            What::BeliefStarted { client, grants, .. } => {
                let c = *client as usize;
                if grants.is_empty() {
                    self.unprotected[c] = true;
                }
                self.sections[c] += 1;
                self.waited[c] += e.at.saturating_sub(self.op_start[c]);
            }
            What::Write {
                client,
                accepted: true,
                ..
            } => self.completed[*client as usize] += 1,
            What::RestartedEmpty { service } => {
                if self.restarts.len() < VIOLATIONS_DETAILED_MAX {
                    let svc = &world.services[*service as usize];
                    self.restarts.push(Restart {
                        service: svc.name.clone(),
                        at_us: e.at,
                        forgotten: Vec::new(),
                        forgotten_waits: 0,
                        next_token: svc.first_token,
                    });
                }
            }
            What::Service {
                service,
                op: ServiceOp::Forgotten { client, token },
                ..
            } => {
                // A restart's forgotten holds and waits follow it at the same instant.
                let name = &world.services[*service as usize].name;
                if let Some(r) = self
                    .restarts
                    .last_mut()
                    .filter(|r| r.at_us == e.at && &r.service == name)
                {
                    match token {
                        Some(t) => r
                            .forgotten
                            .push((world.clients[*client as usize].name.clone(), *t)),
                        None => r.forgotten_waits += 1,
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(
        self,
        world: &World,
        events: &[Event],
        end: Micros,
        truncated: bool,
        seed: u64,
        analysis: &Analysis,
    ) -> Verdict {
        let Monitors {
            quoted,
            data,
            tally,
            operations,
            watch,
            stalls,
            logs,
            unprotected,
            completed,
            op_start: _,
            sections,
            waited,
            restarts,
        } = self;
        let mut class_work: Vec<ClassWork> = world
            .classes
            .iter()
            .map(|c| ClassWork {
                class: c.clone(),
                completed: 0,
                sections: 0,
                waited_us: 0,
            })
            .collect();
        for (i, c) in world.clients.iter().enumerate() {
            let w = &mut class_work[c.class as usize];
            w.completed += completed[i];
            w.sections += sections[i];
            w.waited_us += waited[i];
        }
        let scan = &analysis.overlaps;
        let lost = &analysis.lost;
        let detailed = &scan.first[..scan.first.len().min(VIOLATIONS_DETAILED_MAX)];
        // Overlaps that follow each other quote the same service log lines, so each line is
        // rendered once and copied after that.
        let mut lines = SortedMap::new();
        let violations = detailed
            .iter()
            .map(|o| violation(world, events, o, &quoted, &mut lines))
            .collect();
        let data = data.counts;
        let resources = tally.finish(world, end);
        let mut wait_cycles = watch.finish(world);
        let mut livelocks = stalls.finish(world, end, &wait_cycles);
        let service_logs = logs.finish(world);
        let wait_cycle_count = wait_cycles.len() as u64;
        let livelock_count = livelocks.len() as u64;
        let deadlock = wait_cycles
            .iter()
            .any(|c| c.broken_us.is_none() && c.unbreakable);
        // Keep the verdict's size bounded: the first cycles and livelocks in detail, all counted.
        // The cycles still standing at the end (at most one per resource) come last, and are always
        // kept.
        if wait_cycles.len() > VIOLATIONS_DETAILED_MAX {
            let standing = wait_cycles
                .iter()
                .rev()
                .take_while(|c| c.broken_us.is_none())
                .count();
            let last = wait_cycles.split_off(wait_cycles.len() - standing);
            // At most one cycle stands per resource, far fewer than the bound.
            wait_cycles.truncate(VIOLATIONS_DETAILED_MAX.saturating_sub(standing));
            wait_cycles.extend(last);
        }
        livelocks.truncate(VIOLATIONS_DETAILED_MAX);
        Verdict {
            exclusion: if scan.count == 0 {
                Exclusion::Holds
            } else {
                Exclusion::Broken
            },
            violation_count: scan.count,
            violations,
            unprotected_clients: world
                .clients
                .iter()
                .zip(&unprotected)
                .filter(|(_, u)| **u)
                .map(|(c, _)| c.name.clone())
                .collect(),
            integrity: if lost.total == 0 {
                Integrity::Intact
            } else {
                Integrity::Corrupted
            },
            lost_updates: lost.total,
            lost_update_details: lost
                .details
                .iter()
                .take(VIOLATIONS_DETAILED_MAX)
                .map(|d| lost_detail(world, events, d))
                .collect(),
            interleaved_writes: data.interleaved,
            rejected_writes: data.rejected_writes,
            rejected_reads: data.rejected_reads,
            accepted_writes: data.accepted,
            deadlock,
            wait_cycle_count,
            wait_cycles,
            livelock_count,
            livelocks,
            incomparable_pairs: scan.incomparable,
            overlapping_service_pairs: scan
                .service_pairs
                .iter()
                .map(|(a, b)| {
                    [
                        world.services[*a as usize].name.clone(),
                        world.services[*b as usize].name.clone(),
                    ]
                })
                .collect(),
            max_simultaneous_holders: scan.max_unrelated,
            operations,
            class_work,
            resources,
            unavailability: unavailability(world, end),
            restarts,
            service_logs,
            events: events.len() as u64,
            end_us: end,
            truncated,
            seed,
        }
    }
}

impl Operations {
    fn on(&mut self, e: &Event) {
        match &e.what {
            What::OpStarted { .. } => self.started += 1,
            What::Write { accepted: true, .. } => self.completed += 1,
            What::GaveUp { .. } => self.gave_up += 1,
            What::QuorumMissed { .. } => self.quorums_missed += 1,
            What::ValiditySpent { .. } => self.validity_spent += 1,
            What::BeliefEnded { reason, .. } => match reason {
                crate::trace::BeliefEnd::LeaseExpiredLocally => self.abandoned += 1,
                crate::trace::BeliefEnd::Rejected => self.rejected += 1,
                crate::trace::BeliefEnd::Released => {}
            },
            _ => {}
        }
    }
}

/// Clients as bit sets: at most 256 clients.
type Clients = [u64; 4];

fn set_client(s: &mut Clients, c: u32, on: bool) {
    let (w, b) = ((c / 64) as usize, 1u64 << (c % 64));
    if on {
        s[w] |= b
    } else {
        s[w] &= !b
    }
}

fn has_client(s: &Clients, c: u32) -> bool {
    s[(c / 64) as usize] & (1u64 << (c % 64)) != 0
}

/// The clients of a set, ascending.
fn clients_in(s: &Clients) -> impl Iterator<Item = u32> + '_ {
    s.iter().enumerate().flat_map(|(w, word)| {
        let mut bits = *word;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let c = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                c
            })
        })
    })
}
