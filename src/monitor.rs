//! Monitors: they read a trace and say what happened. Nothing else decides a verdict.
//!
//! Two verdicts are kept apart. *Exclusion* is about belief: did two clients believe they held
//! the lock on overlapping rows at the same time. *Integrity* is about data: was an update lost.
//! Fencing protects integrity, not belief.

// Several matches update state only when a condition holds; moving those conditions into match
// guards would hide side effects (set removals) inside patterns.
#![allow(clippy::collapsible_match)]

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::row_indices;
use crate::trace::{seconds, Event, GrantRef, HoldChange, Recorded, ServiceOp, What};
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

/// One lost update: whose increment was lost, and whose write erased it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LostUpdateDetail {
    pub resource: String,
    pub row: String,
    /// The client whose accepted write was lost, and when it landed.
    pub lost_writer: String,
    pub lost_at_us: Micros,
    /// The client whose write erased it (computed from a read taken before the lost write
    /// landed), and when that write landed.
    pub overwritten_by: String,
    pub overwritten_at_us: Micros,
}

/// A stall in which wait-for cycles formed and broke again and again while nothing completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Livelock {
    pub from_us: Micros,
    pub to_us: Micros,
    /// Wait-for cycles that formed and broke inside the stall.
    pub broken_cycles: u32,
    /// The clients that waited in it.
    pub clients: Vec<String>,
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

/// A belief interval of one client: from the moment it entered its critical section (with the
/// grants it held, or with none for a client that takes no lock) to the moment it let go.
#[derive(Clone, Debug)]
struct BeliefSpan<'a> {
    client: u32,
    resource: u32,
    rows: u64,
    start: Micros,
    end: Micros,
    /// The grants as the trace announced them, copied only if a transfer changes them.
    grants: Cow<'a, [GrantRef]>,
}

fn belief_spans(events: &[Event], until: Micros) -> Vec<BeliefSpan<'_>> {
    let mut spans = SpanCollector::default();
    for e in events {
        spans.on(e);
    }
    spans.finish(until)
}

/// Each client has at most one open span: its position in `spans`, or `CLOSED`.
const CLOSED: usize = usize::MAX;

/// The belief spans of a trace, one event at a time.
#[derive(Default)]
struct SpanCollector<'a> {
    open: Vec<usize>,
    /// Listed as they start, so they come out in order of their start already but for
    /// simultaneous starts, and the sort at the end has little to do.
    spans: Vec<BeliefSpan<'a>>,
    /// Spans whose client started another before ending them: they are not spans at all.
    abandoned: Vec<usize>,
}

impl<'a> SpanCollector<'a> {
    /// Spans still open at the end of the trace end at `until`.
    const OPEN: Micros = Micros::MAX;

    #[inline(always)]
    fn on(&mut self, e: &'a Event) {
        if matches!(
            e.what,
            What::BeliefStarted { .. } | What::LockTransferred { .. } | What::BeliefEnded { .. }
        ) {
            self.record(e);
        }
    }

    #[inline(never)]
    fn record(&mut self, e: &'a Event) {
        let SpanCollector {
            open,
            spans,
            abandoned,
        } = self;
        match &e.what {
            What::BeliefStarted {
                client,
                resource,
                rows,
                grants,
            } => {
                let c = *client as usize;
                if open.len() <= c {
                    open.resize(c + 1, CLOSED);
                }
                if open[c] != CLOSED {
                    abandoned.push(open[c]);
                }
                open[c] = spans.len();
                spans.push(BeliefSpan {
                    client: *client,
                    resource: *resource,
                    rows: *rows,
                    start: e.at,
                    end: Self::OPEN,
                    grants: Cow::Borrowed(grants),
                });
            }
            What::LockTransferred {
                client,
                from,
                to,
                token,
            } => {
                if let Some(&i) = open.get(*client as usize).filter(|i| **i != CLOSED) {
                    for g in spans[i]
                        .grants
                        .to_mut()
                        .iter_mut()
                        .filter(|g| g.service == *from)
                    {
                        g.service = *to;
                        g.token = *token;
                    }
                }
            }
            What::BeliefEnded { client, .. } => {
                if let Some(i) = open.get_mut(*client as usize).filter(|i| **i != CLOSED) {
                    spans[*i].end = e.at;
                    *i = CLOSED;
                }
            }
            _ => {}
        }
    }

    fn finish(self, until: Micros) -> Vec<BeliefSpan<'a>> {
        let SpanCollector {
            open,
            mut spans,
            mut abandoned,
        } = self;
        for i in open.into_iter().filter(|i| *i != CLOSED) {
            spans[i].end = until;
        }
        if !abandoned.is_empty() {
            abandoned.sort_unstable();
            let mut i = 0;
            spans.retain(|_| {
                i += 1;
                abandoned.binary_search(&(i - 1)).is_err()
            });
        }
        // Stable, so one client's spans that start at one instant stay in the order they ended.
        if !spans.is_sorted_by_key(|s| (s.start, s.client)) {
            spans.sort_by_key(|s| (s.start, s.client));
        }
        spans
    }
}

/// Order domains: a subordinate shares its authority's order; independent services each have
/// their own.
fn order_root(world: &World, service: u32) -> u32 {
    world.services[service as usize]
        .authority
        .unwrap_or(service)
}

/// The order domains behind a set of grants, as a bit set over service indices (at most
/// `limits::SERVICES_MAX`, so eight bits suffice).
fn root_mask(world: &World, grants: &[GrantRef]) -> u8 {
    grants
        .iter()
        .fold(0u8, |m, g| m | 1 << order_root(world, g.service))
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
        let mut lines = BTreeMap::new();
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
            service_logs,
            events: events.len() as u64,
            end_us: end,
            truncated,
            seed,
        }
    }
}

/// One overlap of two clients' critical sections on shared rows, in the trace's own indices.
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
    /// The grants each held (none for a client that takes no lock).
    pub grants: [Vec<GrantRef>; 2],
}

/// Overlaps that follow each other without a gap in time, merged: what a timeline draws when
/// there are too many overlaps to draw one by one. Every overlap belongs to exactly one band.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlapBand {
    pub from: Micros,
    pub to: Micros,
    /// How many overlaps the band merges.
    pub count: u64,
    /// The position of its first overlap in the enumeration (so `first < keep` means the scan
    /// kept it in detail).
    pub first: u64,
    /// The clients involved, as a bit set over client indices (at most 256 clients).
    pub clients: [u64; 4],
    /// The services whose grants are involved, as a bit set over service indices.
    pub services: u8,
    /// The resources involved, as a bit set over resource indices.
    pub resources: u8,
}

impl OverlapBand {
    /// The involved clients, ascending.
    pub fn client_indices(&self) -> impl Iterator<Item = u32> + '_ {
        clients_in(&self.clients)
    }
}

/// Every overlap of a run, counted exactly and kept in bounded form: the first `keep` in
/// detail, all of them merged into bands, and the figures derived from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlapScan {
    /// How many overlaps there are: the exclusion verdict's count.
    pub count: u64,
    /// The first overlaps, in the order they are counted.
    pub first: Vec<Overlap>,
    /// Bands of overlaps that touch in time, in time order.
    pub bands: Vec<OverlapBand>,
    /// Overlaps in which both clients held grants and no service ordered both: their grants
    /// come from disjoint order domains.
    pub incomparable: u64,
    /// The pairs of services (by index, lower first) behind those incomparable overlaps.
    pub service_pairs: BTreeSet<(u32, u32)>,
    /// The most clients that at one moment believed they held a common row, each through
    /// grants whose order domains no other of them shared.
    pub max_unrelated: u32,
}

/// Enumerates every overlap of two clients' critical sections on shared rows, in the order the
/// verdict counts them (by the later start), without storing more than `keep` of them.
///
/// Cost: each critical section is compared with the sections open when it starts, so the work
/// is the number of sections times the clients that can be open at once (at most 256), and the
/// memory is the sections themselves plus `keep` overlaps and the bands.
pub fn scan_overlaps(world: &World, events: &[Event], end: Micros, keep: usize) -> OverlapScan {
    overlaps_of(world, &belief_spans(events, end), keep)
}

/// The overlaps among a trace's belief spans (see [`scan_overlaps`]).
fn overlaps_of(world: &World, spans: &[BeliefSpan], keep: usize) -> OverlapScan {
    let masks: Vec<u8> = spans.iter().map(|s| root_mask(world, &s.grants)).collect();
    // Each section's services, as a bit set, computed once: most sections overlap several.
    let services_of: Vec<u8> = spans.iter().map(|s| masks_of_services(&s.grants)).collect();
    let mut scan = OverlapScan {
        count: 0,
        first: Vec::new(),
        bands: Vec::new(),
        incomparable: 0,
        service_pairs: BTreeSet::new(),
        max_unrelated: u32::from(spans.iter().any(|s| !s.grants.is_empty())),
    };
    let mut active: Vec<usize> = Vec::new();
    // The pairs of services behind incomparable overlaps, as bits `8 * lower + higher` (services
    // have indices below eight): a bit is cheaper to set than a set's entry for every overlap.
    let mut pairs = 0u64;
    // Sections whose grants share no order domain with the current one, on common rows: the
    // candidates for a larger group of mutually unrelated holders.
    let mut unrelated: Vec<usize> = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        active.retain(|a| spans[*a].end > span.start);
        unrelated.clear();
        for &a in &active {
            let other = &spans[a];
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
            let rows = other.rows & span.rows;
            let index = scan.count;
            scan.count += 1;
            let related = masks[a] & masks[i] != 0;
            if masks[a] != 0 && masks[i] != 0 && !related {
                scan.incomparable += 1;
                unrelated.push(a);
                pairs |= service_pairs(services_of[a], services_of[i]);
            }
            if scan.first.len() < keep {
                scan.first.push(Overlap {
                    resource: span.resource,
                    rows,
                    from,
                    to,
                    clients: [other.client, span.client],
                    since: [other.start, span.start],
                    grants: [other.grants.to_vec(), span.grants.to_vec()],
                });
            }
            let services = services_of[a] | services_of[i];
            let extend = scan.bands.last().is_some_and(|b| from <= b.to);
            if !extend {
                scan.bands.push(OverlapBand {
                    from,
                    to,
                    count: 0,
                    first: index,
                    clients: [0; 4],
                    services: 0,
                    resources: 0,
                });
            }
            let band = scan.bands.last_mut().expect("pushed above");
            band.to = band.to.max(to);
            band.count += 1;
            set_client(&mut band.clients, other.client, true);
            set_client(&mut band.clients, span.client, true);
            band.services |= services;
            band.resources |= 1 << span.resource;
        }
        if !unrelated.is_empty() {
            let distinct = unrelated.iter().fold(MaskSet::default(), |mut d, a| {
                d.insert(masks[*a]);
                d
            });
            let union = unrelated.iter().fold(0u8, |u, a| u | masks[*a]);
            // No group can be larger than the distinct domains on offer; skip the exact count
            // when even that could not beat the best so far.
            let bound = 1 + distinct.len().min(union.count_ones());
            if bound > scan.max_unrelated {
                let best = row_indices(span.rows)
                    .map(|row| {
                        let on_row = unrelated
                            .iter()
                            .filter(|a| spans[**a].rows & (1u64 << row) != 0)
                            .fold(MaskSet::default(), |mut d, a| {
                                d.insert(masks[*a]);
                                d
                            });
                        1 + most_disjoint(&on_row)
                    })
                    .max()
                    .unwrap_or(1);
                scan.max_unrelated = scan.max_unrelated.max(best);
            }
        }
        active.push(i);
    }
    scan.service_pairs = (0..64u32)
        .filter(|bit| pairs & (1u64 << bit) != 0)
        .map(|bit| (bit / 8, bit % 8))
        .collect();
    scan
}

/// A set of eight-bit masks, as a 256-bit set: building one per critical section is then free
/// of allocation. It iterates in ascending order, like a `BTreeSet<u8>`.
#[derive(Clone, Copy, Default)]
struct MaskSet([u64; 4]);

impl MaskSet {
    fn insert(&mut self, m: u8) {
        self.0[usize::from(m / 64)] |= 1u64 << (m % 64);
    }

    fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..4u8).flat_map(move |w| {
            let mut bits = self.0[usize::from(w)];
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                Some(w * 64 + b)
            })
        })
    }
}

/// Every pair of a service in `a` with a service in `b`, as bits `8 * lower + higher`.
fn service_pairs(a: u8, b: u8) -> u64 {
    let mut pairs = 0u64;
    let mut xs = a;
    while xs != 0 {
        let x = xs.trailing_zeros();
        xs &= xs - 1;
        let mut ys = b;
        while ys != 0 {
            let y = ys.trailing_zeros();
            ys &= ys - 1;
            pairs |= 1u64 << (x.min(y) * 8 + x.max(y));
        }
    }
    pairs
}

fn masks_of_services(grants: &[GrantRef]) -> u8 {
    grants.iter().fold(0u8, |m, g| m | 1 << g.service)
}

/// The most masks of a set that are pairwise disjoint. Masks have eight bits, so this is a
/// small dynamic programme over the 256 unions: at most 256 steps per mask.
fn most_disjoint(masks: &MaskSet) -> u32 {
    if masks.iter().all(|m| m.count_ones() == 1) {
        return masks.len();
    }
    let mut best = [u32::MAX; 256];
    best[0] = 0;
    for m in masks.iter() {
        // Downwards, so that a union built with this mask is not extended by it again.
        for u in (0..256usize).rev() {
            if best[u] != u32::MAX && u as u8 & m == 0 {
                let w = u | m as usize;
                if best[w] == u32::MAX || best[w] < best[u] + 1 {
                    best[w] = best[u] + 1;
                }
            }
        }
    }
    best.iter()
        .filter(|b| **b != u32::MAX)
        .max()
        .copied()
        .unwrap_or(0)
}

/// The rendered lines of the trace, by index, as far as they have been needed.
type Lines = BTreeMap<usize, String>;

/// The positions in the trace of the log lines a violation may quote: each service's entries
/// for each lock, but for queue and cancel entries. They are listed for every lock as the trace
/// is read, because which violations are detailed is known only at its end; a position per
/// service entry is a small fraction of the trace itself.
struct LockLines {
    resources: usize,
    /// By lock (service × resources + resource).
    lines: Vec<Vec<u32>>,
}

impl LockLines {
    fn new(world: &World) -> LockLines {
        let resources = world.resources.len();
        LockLines {
            resources,
            lines: vec![Vec::new(); world.services.len() * resources],
        }
    }

    #[inline]
    fn on(&mut self, i: usize, e: &Event) {
        if let What::Service {
            service,
            resource,
            op,
            ..
        } = &e.what
        {
            if matches!(op, ServiceOp::Queued { .. } | ServiceOp::Cancelled { .. }) {
                return;
            }
            let lock = *service as usize * self.resources + *resource as usize;
            // A trace's events are counted in `u32` (budgets are far below its range).
            self.lines[lock].push(i as u32);
        }
    }

    fn of(&self, service: u32, resource: u32) -> &[u32] {
        &self.lines[service as usize * self.resources + resource as usize]
    }
}

fn violation(
    world: &World,
    events: &[Event],
    o: &Overlap,
    quoted: &LockLines,
    lines: &mut Lines,
) -> Violation {
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
                lines: service_excerpt(
                    world,
                    events,
                    quoted.of(*s, o.resource),
                    (since, o.to),
                    lines,
                ),
            })
            .collect(),
    }
}

/// A service's log lines for one lock between two times, including the grants that led in:
/// the last of `lock_lines` (that lock's quotable lines, by position in the trace) in the window.
fn service_excerpt(
    world: &World,
    events: &[Event],
    lock_lines: &[u32],
    (from, to): (Micros, Micros),
    lines: &mut Lines,
) -> Vec<String> {
    const LINES_MAX: usize = 12;
    // Start a second before the first belief so the grants that caused it are included.
    let lead_in = from.saturating_sub(1_000_000);
    // Events are in time order, so the window is found by binary search, and only the lines
    // kept are rendered.
    let first = events.partition_point(|e| e.at < lead_in);
    let last = events.partition_point(|e| e.at <= to);
    let start = lock_lines.partition_point(|i| (*i as usize) < first);
    let stop = lock_lines.partition_point(|i| (*i as usize) < last);
    lock_lines[start.max(stop.saturating_sub(LINES_MAX))..stop]
        .iter()
        .map(|&i| {
            let i = i as usize;
            lines
                .entry(i)
                .or_insert_with(|| events[i].render(world))
                .clone()
        })
        .collect()
}

/// Counts of what the resource saw.
struct DataCounts {
    interleaved: u64,
    rejected_writes: u64,
    rejected_reads: u64,
    accepted: u64,
}

/// Counts accepted and rejected accesses, and the accepted writes that landed inside another
/// client's read-modify-write window on a common row, one event at a time.
///
/// A window opens when a client's read lands while the client is in its critical section (a
/// read that lands after its client let go opens nothing: that client will not write on it),
/// and closes when the client's write lands or the client lets go.
struct DataCounter {
    counts: DataCounts,
    inside: Vec<bool>,
    /// The open window of each client: (resource, rows).
    window: Vec<Option<(u32, u64)>>,
    /// How many open windows cover each row of each resource.
    open: Vec<Vec<u32>>,
}

impl DataCounter {
    fn new(world: &World) -> DataCounter {
        let clients = world.clients.len();
        DataCounter {
            counts: DataCounts {
                interleaved: 0,
                rejected_writes: 0,
                rejected_reads: 0,
                accepted: 0,
            },
            inside: vec![false; clients],
            window: vec![None; clients],
            open: world
                .resources
                .iter()
                .map(|r| vec![0; r.rows.len()])
                .collect(),
        }
    }

    fn close(&mut self, c: u32) {
        if let Some((r, rows)) = self.window[c as usize].take() {
            for i in row_indices(rows) {
                self.open[r as usize][i] -= 1;
            }
        }
    }

    fn on(&mut self, e: &Event) {
        match &e.what {
            What::BeliefStarted { client, .. } => self.inside[*client as usize] = true,
            What::BeliefEnded { client, .. } => {
                self.inside[*client as usize] = false;
                self.close(*client);
            }
            What::Read {
                client,
                resource,
                rows,
                accepted,
                ..
            } => {
                if !*accepted {
                    self.counts.rejected_reads += 1;
                } else if self.inside[*client as usize] {
                    self.close(*client);
                    self.window[*client as usize] = Some((*resource, *rows));
                    for i in row_indices(*rows) {
                        self.open[*resource as usize][i] += 1;
                    }
                }
            }
            What::Write {
                client,
                resource,
                rows,
                accepted,
                ..
            } => {
                self.close(*client);
                if *accepted {
                    self.counts.accepted += 1;
                    if row_indices(*rows).any(|i| self.open[*resource as usize][i] > 0) {
                        self.counts.interleaved += 1;
                    }
                } else {
                    self.counts.rejected_writes += 1;
                }
            }
            _ => {}
        }
    }
}

/// One increment that is missing from a row's final value, and the write that erased it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostIncrement {
    pub resource: u32,
    pub row: u32,
    /// The accepted write whose increment was lost (an index into the trace).
    pub lost: usize,
    /// The accepted write that overwrote it: it was computed from a read taken before the lost
    /// write landed, and nothing after it brought the increment back.
    pub by: usize,
}

/// Lost updates, attributed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LostUpdates {
    /// Increments missing from the final values: the verdict's lost updates.
    pub total: u64,
    /// Each write that erased increments for good, with how many (summed over its rows), by
    /// index into the trace, in trace order. These are the marks a timeline shows.
    pub marks: Vec<(usize, u32)>,
    /// The first lost increments, in the order of the writes that erased them.
    pub details: Vec<LostIncrement>,
}

/// Which updates were lost, and which write lost each.
///
/// Every accepted write stores what its client read plus one, so each write extends the value
/// of the write it read from (or the initial value). Following those links back from a row's
/// last write gives the writes whose increments the final value contains; every other accepted
/// write on the row was lost, and it was lost by the write on that chain that read a value from
/// before it and landed after it. So a row's lost updates are exactly its increments minus its
/// growth, and each is attributed to one write. Which write loses an update is known only once
/// the run is over: a write based on an older read erases increments for the moment, but a later
/// write based on a read taken before that erasure carries them forward again.
pub fn lost_updates(world: &World, events: &[Event], keep: usize) -> LostUpdates {
    let mut writes = WriteCollector::new(world);
    for (index, e) in events.iter().enumerate() {
        writes.on(index, e);
    }
    writes.finish(keep)
}

/// The accepted writes of a trace and what each read from, one event at a time.
struct WriteCollector {
    /// Per resource and row: each accepted write as (event index, the write it read from, as a
    /// position in this list plus one; 0 is the initial value).
    writes: Vec<Vec<Vec<(usize, u32)>>>,
    /// Per client: what its last accepted read saw, one position per row read.
    basis: Vec<Option<(u32, u64, Values32)>>,
}

impl WriteCollector {
    fn new(world: &World) -> WriteCollector {
        WriteCollector {
            writes: world
                .resources
                .iter()
                .map(|r| vec![Vec::new(); r.rows.len()])
                .collect(),
            basis: vec![None; world.clients.len()],
        }
    }

    #[inline]
    fn on(&mut self, index: usize, e: &Event) {
        let WriteCollector { writes, basis } = self;
        match &e.what {
            What::Read {
                client,
                resource,
                rows,
                accepted: true,
                ..
            } => {
                let seen = row_indices(*rows)
                    .map(|i| writes[*resource as usize][i].len() as u32)
                    .collect();
                basis[*client as usize] = Some((*resource, *rows, seen));
            }
            What::Write {
                client,
                resource,
                rows,
                accepted: true,
                ..
            } => {
                let read = basis[*client as usize].as_ref();
                for (k, i) in row_indices(*rows).enumerate() {
                    let row = &mut writes[*resource as usize][i];
                    // A write always follows its client's read of the same rows; if a trace
                    // lacked it, the write is taken to have read the latest value (no loss).
                    let from = match read {
                        Some((r, rs, seen)) if r == resource && rs == rows => seen[k],
                        _ => row.len() as u32,
                    };
                    row.push((index, from));
                }
            }
            _ => {}
        }
    }

    fn finish(self, keep: usize) -> LostUpdates {
        let writes = self.writes;
        let mut lost = LostUpdates::default();
        let mut marks: BTreeMap<usize, u32> = BTreeMap::new();
        // The `keep` earliest lost increments by (eraser, lost write): a bounded max-heap whose top
        // is the latest kept, replaced whenever an earlier one turns up.
        let mut kept: std::collections::BinaryHeap<(usize, usize, u32, u32)> =
            std::collections::BinaryHeap::new();
        for (r, rows) in writes.iter().enumerate() {
            for (i, row) in rows.iter().enumerate() {
                // Walk the chain back from the last write: position p (1-based) read from `from`.
                let mut p = row.len();
                while p > 0 {
                    let (event, from) = row[p - 1];
                    let from = from as usize;
                    let erased = p - 1 - from;
                    if erased > 0 {
                        lost.total += erased as u64;
                        *marks.entry(event).or_default() += erased as u32;
                        for q in (from + 1)..p {
                            let entry = (event, row[q - 1].0, r as u32, i as u32);
                            if kept.len() < keep {
                                kept.push(entry);
                            } else if kept.peek().is_some_and(|top| entry < *top) {
                                kept.pop();
                                kept.push(entry);
                            } else {
                                // Positions only fall along the walk, so nothing earlier follows
                                // on this row from this eraser.
                                break;
                            }
                        }
                    }
                    p = from;
                }
            }
        }
        lost.details = kept
            .into_sorted_vec()
            .into_iter()
            .map(|(by, lost, resource, row)| LostIncrement {
                resource,
                row,
                lost,
                by,
            })
            .collect();
        lost.marks = marks.into_iter().collect();
        lost
    }
}

/// Positions read, one per row of a read (most reads cover one or two rows).
type Values32 = smallvec::SmallVec<[u32; 2]>;

fn lost_detail(world: &World, events: &[Event], d: &LostIncrement) -> LostUpdateDetail {
    let who = |i: usize| match &events[i].what {
        What::Write { client, .. } => world.clients[*client as usize].name.clone(),
        _ => unreachable!("lost updates point at writes"),
    };
    LostUpdateDetail {
        resource: world.resources[d.resource as usize].name.clone(),
        row: world.resources[d.resource as usize].rows[d.row as usize].clone(),
        lost_writer: who(d.lost),
        lost_at_us: events[d.lost].at,
        overwritten_by: who(d.by),
        overwritten_at_us: events[d.by].at,
    }
}

impl Operations {
    fn on(&mut self, e: &Event) {
        match &e.what {
            What::OpStarted { .. } => self.started += 1,
            What::Write { accepted: true, .. } => self.completed += 1,
            What::GaveUp { .. } => self.gave_up += 1,
            What::BeliefEnded { reason, .. } => match reason {
                crate::trace::BeliefEnd::LeaseExpiredLocally => self.abandoned += 1,
                crate::trace::BeliefEnd::Rejected => self.rejected += 1,
                crate::trace::BeliefEnd::Released => {}
            },
            _ => {}
        }
    }
}

/// The wait-for graph, rebuilt from service logs: for each lock in each service, its holder
/// and its waiters; for each client, the locks it waits for.
///
/// Locks are numbered densely (service × resources + resource): at most eight services and
/// eight resources make at most 64 locks, so a client's waits are one 64-bit set, and a lock's
/// waiters one client set. The graph is updated on every service event of a run, a few hundred
/// thousand times on a busy trace, and with sets every update is a few bit operations.
struct WaitGraph {
    resources: u32,
    /// The holder of each lock, or `NOBODY`.
    holder: Vec<u32>,
    /// The locks each client holds: a new wait can close a cycle only back to a holder.
    holds: Vec<u64>,
    /// The clients queued for each lock.
    waiters: Vec<Clients>,
    /// The locks each client waits for. Searches take edges in ascending lock order, which is
    /// ascending (service, resource), so they report the same cycle on every run.
    waits_on: Vec<u64>,
    /// When each client's wait for each lock began (client × locks + lock), valid while the
    /// client waits for it.
    wait_since: Vec<Micros>,
    locks: usize,
    /// When each lock's holder took it.
    held_since: Vec<Micros>,
    /// Search scratch: the visit mark of each client, valid when it equals `stamp`.
    seen: Vec<u32>,
    stamp: u32,
    /// Search scratch, kept between searches because a search runs for most queued clients:
    /// the clients on the path with where their untaken out-edges start in `pending`, and
    /// those edges, the latest client's last.
    path_clients: Vec<(u32, usize)>,
    pending: Vec<(u32, (u32, u32))>,
    path: Cycle,
}

const NOBODY: u32 = u32::MAX;

/// A wait-for cycle: the clients in order (each waits for the next, the last for the first),
/// and the lock (service, resource) each waits on.
type Cycle = Vec<(u32, (u32, u32))>;

/// A depth-first search's stack: each client on the path with its out-edges not yet taken.
type SearchStack = Vec<(u32, Cycle)>;

impl WaitGraph {
    fn new(world: &World) -> WaitGraph {
        let locks = world.services.len() * world.resources.len();
        debug_assert!(locks <= 64, "the format allows at most 64 locks");
        WaitGraph {
            resources: world.resources.len() as u32,
            holder: vec![NOBODY; locks],
            holds: vec![0; world.clients.len()],
            waiters: vec![[0; 4]; locks],
            waits_on: vec![0; world.clients.len()],
            wait_since: vec![0; world.clients.len() * locks],
            locks,
            held_since: vec![0; locks],
            seen: vec![0; world.clients.len()],
            stamp: 0,
            path_clients: Vec::new(),
            pending: Vec::new(),
            path: Vec::new(),
        }
    }

    fn lock(&self, key: (u32, u32)) -> usize {
        (key.0 * self.resources + key.1) as usize
    }

    fn key(&self, lock: usize) -> (u32, u32) {
        (lock as u32 / self.resources, lock as u32 % self.resources)
    }

    fn holder_of(&self, key: (u32, u32)) -> Option<u32> {
        Some(self.holder[self.lock(key)]).filter(|h| *h != NOBODY)
    }

    fn stop_waiting(&mut self, key: (u32, u32), client: u32) {
        let lock = self.lock(key);
        set_client(&mut self.waiters[lock], client, false);
        self.waits_on[client as usize] &= !(1u64 << lock);
    }

    /// Whether a client waits for a lock.
    fn waits_for(&self, client: u32, key: (u32, u32)) -> bool {
        self.waits_on[client as usize] & (1u64 << self.lock(key)) != 0
    }

    fn let_go(&mut self, key: (u32, u32), client: u32) {
        let lock = self.lock(key);
        if self.holder[lock] == client {
            self.set_holder(lock, NOBODY);
        }
    }

    fn set_holder(&mut self, lock: usize, client: u32) {
        let old = self.holder[lock];
        if old != NOBODY {
            self.holds[old as usize] &= !(1u64 << lock);
        }
        if client != NOBODY {
            self.holds[client as usize] |= 1u64 << lock;
        }
        self.holder[lock] = client;
    }

    /// Whether a client holds any lock: only then can a path of waits end at it.
    fn holds_any(&self, client: u32) -> bool {
        self.holds[client as usize] != 0
    }

    fn apply(&mut self, service: u32, resource: u32, op: &ServiceOp, now: Micros) {
        let key = (service, resource);
        let lock = self.lock(key);
        match *op {
            ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                // A grant confirmed to its holder again does not start a new hold.
                if self.holder[lock] != client {
                    self.set_holder(lock, client);
                    self.held_since[lock] = now;
                }
                self.stop_waiting(key, client);
            }
            ServiceOp::Queued { client, .. } => {
                set_client(&mut self.waiters[lock], client, true);
                let on = &mut self.waits_on[client as usize];
                // A wait that is queued again keeps the time it began.
                if *on & (1u64 << lock) == 0 {
                    *on |= 1u64 << lock;
                    self.wait_since[client as usize * self.locks + lock] = now;
                }
            }
            ServiceOp::Released { client, .. }
            | ServiceOp::Expired { client, .. }
            | ServiceOp::Superseded { client, .. } => self.let_go(key, client),
            ServiceOp::Cancelled { client } | ServiceOp::Refused { client, .. } => {
                self.stop_waiting(key, client);
            }
            ServiceOp::MovedOut { client, held, .. } => {
                if held {
                    self.let_go(key, client);
                } else {
                    self.stop_waiting(key, client);
                }
            }
            ServiceOp::ReleaseIgnored { .. } | ServiceOp::Drained { .. } => {}
        }
    }

    /// The clients a client waits for, with the lock that carries each edge.
    fn edges(&self, client: u32) -> impl Iterator<Item = (u32, (u32, u32))> + '_ {
        let mut locks = self.waits_on[client as usize];
        std::iter::from_fn(move || {
            while locks != 0 {
                let lock = locks.trailing_zeros() as usize;
                locks &= locks - 1;
                let h = self.holder[lock];
                if h != NOBODY && h != client {
                    return Some((h, self.key(lock)));
                }
            }
            None
        })
    }

    /// When a standing cycle closed: when the last of its waits began, or the last of the holds
    /// it waits on was taken, whichever came later.
    fn formed(&self, cycle: &Cycle) -> Micros {
        cycle
            .iter()
            .map(|(c, key)| {
                let lock = self.lock(*key);
                let wait = if self.waits_for(*c, *key) {
                    self.wait_since[*c as usize * self.locks + lock]
                } else {
                    0
                };
                wait.max(self.held_since[lock])
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether every edge of a cycle is still there.
    fn has(&self, cycle: &Cycle) -> bool {
        cycle.iter().enumerate().all(|(k, (c, key))| {
            let next = cycle[(k + 1) % cycle.len()].0;
            self.waits_for(*c, *key) && self.holder_of(*key) == Some(next)
        })
    }

    /// Starts a new search: every client unvisited, in constant time.
    fn new_search(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
    }

    /// A path of waits from `from` to the first client `target` accepts, as (client, lock it
    /// waits on) steps, found by a depth-first search that visits each client once: linear in
    /// the graph's size.
    fn path_to(&mut self, from: u32, target: impl Fn(u32) -> bool) -> Option<Cycle> {
        // Most holders wait for nothing: then there is no path, and nothing to set up.
        if self.waits_on[from as usize] == 0 {
            return None;
        }
        self.new_search();
        // Each client on the path owns the tail of `pending` above its start: its out-edges not
        // yet taken, taken last first. `path` holds the edge from each client to the next.
        let mut clients = std::mem::take(&mut self.path_clients);
        let mut pending = std::mem::take(&mut self.pending);
        let mut path = std::mem::take(&mut self.path);
        clients.clear();
        pending.clear();
        path.clear();
        clients.push((from, 0));
        pending.extend(self.edges(from));
        self.seen[from as usize] = self.stamp;
        let mut found = None;
        while let Some(&(at, start)) = clients.last() {
            if pending.len() > start {
                let (next, key) = pending.pop().expect("longer than its start");
                if target(next) {
                    path.push((at, key));
                    found = Some(path.clone());
                    break;
                }
                if self.seen[next as usize] != self.stamp {
                    self.seen[next as usize] = self.stamp;
                    path.push((at, key));
                    clients.push((next, pending.len()));
                    pending.extend(self.edges(next));
                }
            } else {
                clients.pop();
                path.pop();
            }
        }
        self.path_clients = clients;
        self.pending = pending;
        self.path = path;
        found
    }

    /// A cycle through new edges `waiter -> holder` (one per waiter), if the holder already
    /// waits, through others, for one of the waiters: one search, whatever the waiters.
    fn cycle_through(&mut self, lock_key: (u32, u32), holder: u32) -> Option<Cycle> {
        let lock = self.lock(lock_key);
        let waiters = self.waiters[lock];
        if self.waits_on[holder as usize] == 0 {
            return None;
        }
        // A path of waits can only end at a client that holds a lock.
        if !clients_in(&waiters).any(|c| c != holder && self.holds_any(c)) {
            return None;
        }
        let path = self.path_to(holder, |c| has_client(&waiters, c) && c != holder);
        path.map(|path| self.close(path, lock_key))
    }

    /// The cycle a path of waits makes when the client it reaches waits on `lock_key`, whose
    /// holder the path starts from.
    fn close(&self, path: Cycle, lock_key: (u32, u32)) -> Cycle {
        let (last, last_key) = *path.last().expect("a found path has an edge");
        let reached = self
            .holder_of(last_key)
            .filter(|h| *h != last)
            .expect("an edge leads to the holder of its lock");
        let mut cycle = vec![(reached, lock_key)];
        cycle.extend(path);
        cycle
    }

    /// Any cycle among one resource's locks, by one depth-first search over every client that
    /// waits for one of them: a client still on the search's stack that is reached again closes
    /// a cycle. (A client waits for and holds locks of its own resource only, so the waits of
    /// different resources never meet.)
    fn any_cycle(&self, resource: u32) -> Option<Cycle> {
        let n = self.waits_on.len();
        // 0: not visited, 1: on the stack, 2: finished.
        let mut color = vec![0u8; n];
        for root in 0..n as u32 {
            let waits = self.waits_on[root as usize];
            // The first lock a client waits for tells its resource.
            if color[root as usize] != 0
                || waits == 0
                || self.key(waits.trailing_zeros() as usize).1 != resource
            {
                continue;
            }
            color[root as usize] = 1;
            let mut stack: SearchStack = vec![(root, self.edges(root).collect())];
            let mut path: Cycle = Vec::new();
            while let Some((at, pending)) = stack.last_mut() {
                let at = *at;
                match pending.pop() {
                    Some((next, key)) => match color[next as usize] {
                        0 => {
                            color[next as usize] = 1;
                            path.push((at, key));
                            stack.push((next, self.edges(next).collect()));
                        }
                        1 => {
                            path.push((at, key));
                            let start = stack
                                .iter()
                                .position(|s| s.0 == next)
                                .expect("a client on the stack is in it");
                            return Some(path.split_off(start));
                        }
                        _ => {}
                    },
                    None => {
                        color[at as usize] = 2;
                        stack.pop();
                        path.pop();
                    }
                }
            }
        }
        None
    }
}

/// What broke a cycle, named from the operation that removed its edge.
fn broke_by(op: &ServiceOp, aborts: &[Option<&'static str>]) -> &'static str {
    match op {
        ServiceOp::Expired { .. } => "lease expiry",
        ServiceOp::Superseded { .. } => "a higher authority token",
        ServiceOp::Released { client, .. } => aborts[*client as usize].unwrap_or("release"),
        ServiceOp::Cancelled { client } => aborts[*client as usize].unwrap_or("client timeout"),
        ServiceOp::Refused { .. } => "refusal",
        ServiceOp::MovedOut { .. }
        | ServiceOp::TransferredIn { .. }
        | ServiceOp::Drained { .. } => "migration",
        ServiceOp::Granted { .. } | ServiceOp::Queued { .. } | ServiceOp::ReleaseIgnored { .. } => {
            "release"
        }
    }
}

/// Wait-for cycles across services, each with when it formed, when and by what it broke.
///
/// A client waits for and holds locks of its own resource only, so each resource's waits form
/// a graph of their own, and one loop per resource is followed at a time, from the moment it
/// closes to the moment it opens. With two services on a resource that is every loop: two
/// locks make one loop at most. With three or more, loops can stand side by side: when the one
/// followed opens, another still standing is followed from when it closed, but a loop that
/// closes and opens while another is followed is not seen.
///
/// Cost per service event: a new edge is checked with one search from its holder (linear in the
/// graph, which has at most one edge per client and lock); a standing cycle is re-checked edge
/// by edge; a full search of the resource's waits runs only after a cycle breaks.
struct CycleWatch {
    graph: WaitGraph,
    cycles: Vec<WaitCycle>,
    /// The loop followed on each resource, and when it closed.
    current: Vec<Option<(Cycle, Micros)>>,
    /// Why each client last let go of its locks: its own timeout, a refusal elsewhere, giving
    /// up on an unreachable service, or the end of its operation. A release or cancel that
    /// breaks a cycle is named after the cause, not the message that carried it.
    aborts: Vec<Option<&'static str>>,
}

impl CycleWatch {
    fn new(world: &World) -> CycleWatch {
        CycleWatch {
            graph: WaitGraph::new(world),
            cycles: Vec::new(),
            current: vec![None; world.resources.len()],
            aborts: vec![None; world.clients.len()],
        }
    }

    fn on(&mut self, world: &World, e: &Event) {
        let (service, resource, op) = match &e.what {
            What::BeliefEnded { client, reason, .. } => {
                self.aborts[*client as usize] = Some(match reason {
                    crate::trace::BeliefEnd::Released => "release",
                    crate::trace::BeliefEnd::Rejected => "release after a rejected access",
                    crate::trace::BeliefEnd::LeaseExpiredLocally => {
                        "release by a client whose lease ran out"
                    }
                });
                return;
            }
            What::AttemptAborted { client, reason, .. } => {
                self.aborts[*client as usize] = Some(match reason {
                    crate::trace::AbortReason::Timeout => "client timeout",
                    crate::trace::AbortReason::Refused => "refusal",
                    crate::trace::AbortReason::NothingReachable => "client gave up",
                });
                return;
            }
            What::SkippedUnreachable { client, .. } => {
                self.aborts[*client as usize] = Some("client timeout");
                return;
            }
            What::Service {
                service,
                resource,
                op,
                ..
            } => (*service, *resource, op),
            _ => return,
        };
        let key = (service, resource);
        let graph = &mut self.graph;
        graph.apply(service, resource, op, e.at);
        let current = &mut self.current[resource as usize];
        match current {
            None => {
                // A new cycle needs a new edge, and it passes through that edge.
                let found = match *op {
                    ServiceOp::Queued { client, .. } => match graph.holder_of(key) {
                        // A cycle through the new wait leads from the holder back to the
                        // client, so the holder waits and the client holds.
                        Some(h) if graph.waits_on[h as usize] == 0 || !graph.holds_any(client) => {
                            None
                        }
                        Some(h) => graph
                            .path_to(h, |c| c == client && c != h)
                            .map(|path| graph.close(path, key)),
                        None => None,
                    },
                    ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                        graph.cycle_through(key, client)
                    }
                    _ => None,
                };
                if let Some(cycle) = found {
                    *current = Some((cycle, e.at));
                }
            }
            Some((cycle, formed)) => {
                if !graph.has(cycle) {
                    self.cycles.push(make_cycle(
                        world,
                        cycle,
                        *formed,
                        Some((e.at, broke_by(op, &self.aborts))),
                    ));
                    // Another loop may still stand: it is followed from when it closed.
                    *current = graph.any_cycle(resource).map(|c| {
                        let formed = graph.formed(&c);
                        (c, formed)
                    });
                }
            }
        }
    }

    fn finish(mut self, world: &World) -> Vec<WaitCycle> {
        // The cycles still standing come last, in the order they closed.
        let mut standing: Vec<(Cycle, Micros)> = self.current.into_iter().flatten().collect();
        standing.sort_by_key(|(_, formed)| *formed);
        for (cycle, formed) in standing {
            self.cycles.push(make_cycle(world, &cycle, formed, None));
        }
        self.cycles
    }
}

fn make_cycle(
    world: &World,
    cycle: &Cycle,
    formed: Micros,
    broken: Option<(Micros, &str)>,
) -> WaitCycle {
    let unbreakable = cycle.iter().all(|(c, (s, _))| {
        world.clients[*c as usize].acquire_timeout.is_none()
            && world.services[*s as usize].lease.is_none()
    });
    WaitCycle {
        clients: cycle
            .iter()
            .map(|(c, _)| world.clients[*c as usize].name.clone())
            .collect(),
        services: cycle
            .iter()
            .map(|(_, (s, _))| world.services[*s as usize].name.clone())
            .collect(),
        formed_us: formed,
        broken_us: broken.map(|b| b.0),
        broken_by: broken.map(|b| b.1.to_string()),
        unbreakable,
    }
}

/// The least number of wait-for cycles that must form and break inside a stall for it to be
/// reported as a livelock: one broken cycle is a hiccup, repeated ones are churn.
pub const LIVELOCK_CYCLES_MIN: u32 = 2;

/// Stalls in which wait-for cycles formed and broke at least [`LIVELOCK_CYCLES_MIN`] times.
///
/// A stall runs from the first moment a client waits for a lock after the last completed
/// operation (an accepted write) to the next completed operation, or to the end of the run.
/// The cycles counted are those that formed and broke inside it.
struct StallWatch {
    waiting: Clients,
    stall: Option<(Micros, Clients)>,
    /// The next cycle to count: cycles are listed in the order they broke (an unbroken one
    /// last), and stalls come in time order, so one pass over both counts each stall's cycles.
    next_cycle: usize,
    /// Stalls that ended at the current instant: they are counted once time moves on, so that
    /// a cycle breaking later at the same instant still counts, as it does for a whole trace.
    ended: Vec<(Micros, Micros, Clients)>,
    out: Vec<Livelock>,
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

impl StallWatch {
    fn new() -> StallWatch {
        StallWatch {
            waiting: [0; 4],
            stall: None,
            next_cycle: 0,
            ended: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Ends a stall at `to`, counting the cycles that formed and broke inside it. Every cycle
    /// broken by then is already in `cycles`, because cycles break at events.
    fn close(
        &mut self,
        world: &World,
        from: Micros,
        to: Micros,
        who: Clients,
        cycles: &[WaitCycle],
    ) {
        let mut broken = 0u32;
        while let Some(c) = cycles.get(self.next_cycle) {
            match c.broken_us {
                Some(b) if b <= to => {
                    if c.formed_us >= from {
                        broken += 1;
                    }
                    self.next_cycle += 1;
                }
                _ => break,
            }
        }
        if broken >= LIVELOCK_CYCLES_MIN {
            self.out.push(Livelock {
                from_us: from,
                to_us: to,
                broken_cycles: broken,
                clients: clients_in(&who)
                    .map(|c| world.clients[c as usize].name.clone())
                    .collect(),
            });
        }
    }

    fn flush(&mut self, world: &World, cycles: &[WaitCycle]) {
        // The list is taken and given back, so that it keeps its room: a stall can end at any
        // accepted write, and a new list for each would cost more than the rest of this watch.
        let mut ended = std::mem::take(&mut self.ended);
        for (from, to, who) in ended.drain(..) {
            self.close(world, from, to, who, cycles);
        }
        self.ended = ended;
    }

    fn on(&mut self, world: &World, e: &Event, cycles: &[WaitCycle]) {
        if self.ended.last().is_some_and(|(_, to, _)| *to < e.at) {
            self.flush(world, cycles);
        }
        match &e.what {
            What::OpStarted { client, .. }
                if world.clients[*client as usize].protocol != ProtocolConfig::NoLock =>
            {
                set_client(&mut self.waiting, *client, true);
                let (_, who) = self.stall.get_or_insert((e.at, [0; 4]));
                set_client(who, *client, true);
            }
            What::BeliefStarted { client, .. } | What::GaveUp { client } => {
                set_client(&mut self.waiting, *client, false);
            }
            What::Write { accepted: true, .. } => {
                if let Some((from, who)) = self.stall.take() {
                    self.ended.push((from, e.at, who));
                }
                if self.waiting != [0; 4] {
                    self.stall = Some((e.at, self.waiting));
                }
            }
            _ => {}
        }
    }

    fn finish(mut self, world: &World, end: Micros, cycles: &[WaitCycle]) -> Vec<Livelock> {
        self.flush(world, cycles);
        if let Some((from, who)) = self.stall.take() {
            self.close(world, from, end, who, cycles);
        }
        self.out
    }
}

/// What each resource ends with (its rows' values and accepted writes) and how long it stood
/// idle while some client waited for it, one event at a time.
struct ResourceTally {
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
    fn new(world: &World) -> ResourceTally {
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

    fn on(&mut self, world: &World, e: &Event) {
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

    fn finish(mut self, world: &World, end: Micros) -> Vec<ResourceReport> {
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
                rows: cfg
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, name)| (name.clone(), self.values[r][i]))
                    .collect(),
                increments: cfg
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, name)| (name.clone(), self.increments[r][i]))
                    .collect(),
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
    let mut check = LogCheck::new(world);
    for e in events {
        check.on(world, e);
    }
    check.finish(world)
}

/// The state of [`check_service_logs`] between events.
struct LogCheck {
    last_instant: Vec<u64>,
    last_token: Vec<Option<u64>>,
    /// The holder and token of each lock (service × resources + resource).
    holders: Vec<Option<(u32, u64)>>,
    resources: u32,
    problems: Vec<Vec<String>>,
    operations: Vec<u64>,
    grants: Vec<u64>,
}

impl LogCheck {
    fn new(world: &World) -> LogCheck {
        let n = world.services.len();
        LogCheck {
            last_instant: vec![0; n],
            last_token: vec![None; n],
            holders: vec![None; n * world.resources.len()],
            resources: world.resources.len() as u32,
            problems: vec![Vec::new(); n],
            operations: vec![0; n],
            grants: vec![0; n],
        }
    }

    #[inline(always)]
    fn on(&mut self, world: &World, e: &Event) {
        let What::Service {
            service,
            instant,
            resource,
            op,
        } = &e.what
        else {
            return;
        };
        let s = *service as usize;
        let problems = &mut self.problems[s];
        self.operations[s] += 1;
        if *instant != self.last_instant[s] + 1 {
            problems.push(format!(
                "instant {} follows instant {}",
                instant, self.last_instant[s]
            ));
        }
        self.last_instant[s] = *instant;
        let holder = &mut self.holders[(*service * self.resources + *resource) as usize];
        match *op {
            ServiceOp::Granted { client, token, .. }
            | ServiceOp::TransferredIn { client, token, .. } => {
                match holder {
                    Some((h, t)) if *h == client && *t == token => return,
                    Some((h, _)) => problems.push(format!(
                        "instant {instant}: granted to {} while {} holds it",
                        world.clients[client as usize].name, world.clients[*h as usize].name
                    )),
                    None => {}
                }
                if self.last_token[s].is_some_and(|t| token <= t) {
                    problems.push(format!(
                        "instant {instant}: token {token} does not increase"
                    ));
                }
                self.last_token[s] = Some(token);
                self.grants[s] += 1;
                *holder = Some((client, token));
            }
            ServiceOp::Released { client, token }
            | ServiceOp::Expired { client, token }
            | ServiceOp::Superseded { client, token } => {
                if *holder == Some((client, token)) {
                    *holder = None;
                } else {
                    problems.push(format!(
                        "instant {instant}: {} ended a hold it did not have",
                        world.clients[client as usize].name
                    ));
                }
            }
            ServiceOp::MovedOut {
                client, held: true, ..
            } => {
                if holder.is_some_and(|(h, _)| h == client) {
                    *holder = None;
                }
            }
            _ => {}
        }
    }

    fn finish(mut self, world: &World) -> Vec<ServiceLogCheck> {
        world
            .services
            .iter()
            .enumerate()
            .map(|(s, svc)| ServiceLogCheck {
                service: svc.name.clone(),
                operations: self.operations[s],
                grants: self.grants[s],
                consistent: self.problems[s].is_empty(),
                problems: std::mem::take(&mut self.problems[s]),
            })
            .collect()
    }
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
            None if self.unprotected_clients.is_empty() => out.push_str(
                "Exclusion holds: no two clients believed they held the same rows at once.",
            ),
            None => out.push_str(&format!(
                "Exclusion holds, but only by luck: no two critical sections overlapped, yet {} took no lock.",
                self.unprotected_clients.join(", ")
            )),
            Some(v) => {
                let grants = |h: &Holder| {
                    if h.grants.is_empty() {
                        return "no lock at all".to_string();
                    }
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
                // A client without a lock holds nothing; it only works on the rows.
                let verb = if v.holders.iter().all(|h| !h.grants.is_empty()) {
                    "held"
                } else {
                    "worked on"
                };
                out.push_str(&format!(
                    "Exclusion broken: {} and {} both {verb} {}[{}] from t={} to t={}; for {}, {}; for {}, {}.",
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
        if let Some(d) = self.lost_update_details.first() {
            out.push_str(&format!(
                "  first lost update: {}'s write to {}[{}] at t={} was overwritten by {}'s write at t={}, computed from a read taken before it.\n",
                d.lost_writer,
                d.resource,
                d.row,
                seconds(d.lost_at_us),
                d.overwritten_by,
                seconds(d.overwritten_at_us)
            ));
        }
        if self.deadlock {
            out.push_str("Deadlock: a wait-for cycle across services that nothing times out.\n");
        } else if !self.wait_cycles.is_empty() {
            let standing = self
                .wait_cycles
                .last()
                .is_some_and(|c| c.broken_us.is_none());
            if standing {
                out.push_str(&format!(
                    "No deadlock, but {} wait-for cycle(s) formed; the last still stood when the run ended, though a timeout or lease can break it.\n",
                    self.wait_cycle_count
                ));
            } else {
                out.push_str(&format!(
                    "No deadlock, but {} wait-for cycle(s) formed and were broken.\n",
                    self.wait_cycle_count
                ));
            }
        } else {
            out.push_str("No deadlock.\n");
        }
        if self.livelock_count > 1 {
            out.push_str(&format!(
                "Livelocks: {} stretch(es) in which clients waited and nothing completed while wait-for cycles kept forming and breaking.\n",
                self.livelock_count
            ));
        }
        for l in self.livelocks.iter().take(3) {
            out.push_str(&format!(
                "Livelock: from t={} to t={}, {} wait-for cycles formed and broke while {} waited and no operation completed.\n",
                seconds(l.from_us),
                seconds(l.to_us),
                l.broken_cycles,
                l.clients.join(", ")
            ));
        }
        const CYCLES_LISTED: usize = 10;
        let cycle_line = |c: &WaitCycle| {
            format!(
                "  cycle {} over {} from t={}{}\n",
                c.clients.join(" -> "),
                c.services.join(","),
                seconds(c.formed_us),
                match (&c.broken_us, &c.broken_by) {
                    (Some(t), Some(by)) => format!(", broken at t={} by {}", seconds(*t), by),
                    _ => ", never broken".to_string(),
                }
            )
        };
        for c in self.wait_cycles.iter().take(CYCLES_LISTED) {
            out.push_str(&cycle_line(c));
        }
        if self.wait_cycle_count as usize > CYCLES_LISTED {
            out.push_str(&format!(
                "  ... and {} more cycle(s)\n",
                self.wait_cycle_count as usize - CYCLES_LISTED
            ));
            // A cycle that never broke is the one that matters most: always name it. The
            // standing ones come last, at most one per resource.
            for c in self.wait_cycles.iter().skip(CYCLES_LISTED) {
                if c.broken_us.is_none() {
                    out.push_str(&cycle_line(c));
                }
            }
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
        // Each class's work and what it paid in waiting for its locks; a class that got
        // nothing done is said so plainly, whatever the totals above.
        for w in &self.class_work {
            if w.completed == 0 {
                out.push_str(&format!(
                    "Class {} completed no operation: its clients got no work done.\n",
                    w.class
                ));
            } else {
                out.push_str(&format!(
                    "Class {}: {} completed; {} on average from an operation's start to holding its locks.\n",
                    w.class,
                    w.completed,
                    seconds(w.mean_wait_us())
                ));
            }
        }
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

/// The trace as text, one line per event, with each write that erased updates for good marked
/// as the verdict counts it: `LOST n update(s)` where n is how many increments it erased (see
/// [`lost_updates`]). Lines are made one at a time, so a long trace can be streamed.
pub fn trace_lines<'a>(
    world: &'a World,
    events: &'a [Event],
    lost: &'a LostUpdates,
) -> impl Iterator<Item = String> + 'a {
    let mut marks = lost.marks.iter().peekable();
    events.iter().enumerate().map(move |(i, e)| {
        let mut line = e.render(world);
        if let Some((_, n)) = marks.next_if(|(event, _)| *event == i) {
            line.push_str(&format!(", LOST {n} update(s)"));
        }
        line
    })
}

/// The whole trace as text, as [`trace_lines`] makes it, each line ending in a newline.
pub fn render_trace(world: &World, events: &[Event], lost: &LostUpdates) -> String {
    let mut out = String::new();
    for line in trace_lines(world, events, lost) {
        out.push_str(&line);
        out.push('\n');
    }
    out
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

/// The windows behind [`Verdict::unavailability`]: for every service and every region with a
/// client that uses it, the stretches in which that region could not use it, in time order per
/// service and region. The same moments and the same test of usability as the verdict's totals,
/// so the windows of a service and region add up to its `unavailable_us`.
///
/// Cost: the moments are the partitions' and outages' edges (bounded by the scenario's limits),
/// tested once per service and region.
pub fn unavailable_windows(world: &World, end: Micros) -> Vec<UnavailableWindow> {
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
    let mut out: Vec<UnavailableWindow> = Vec::new();
    for s in 0..world.services.len() as u32 {
        let mut regions: BTreeSet<u32> = BTreeSet::new();
        for c in &world.clients {
            let uses = match &c.protocol {
                ProtocolConfig::Locks { services, .. } => services.contains(&s),
                ProtocolConfig::TokenChain {
                    authority,
                    subordinate,
                } => *authority == s || *subordinate == s,
                ProtocolConfig::NoLock => false,
            };
            if uses {
                regions.insert(c.region);
            }
        }
        for region in regions {
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
