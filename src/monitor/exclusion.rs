//! Exclusion: the belief spans of a trace, every overlap among them, and the service log lines
//! a violation quotes. Also the order domains behind grants, which say whether two overlapping
//! holders could ever have been told apart by a token.

use crate::sorted::{SortedMap, SortedSet};
use std::borrow::Cow;

use serde::Serialize;

use crate::model::row_indices;
use crate::trace::{Event, GrantRef, ServiceOp, What};
use crate::world::{Micros, World};

use super::{clients_in, named, row_names, set_client};

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

/// A belief interval of one client: from the moment it entered its critical section (with the
/// grants it held, or with none for a client that takes no lock) to the moment it let go.
#[derive(Clone, Debug)]
pub(super) struct BeliefSpan<'a> {
    pub(super) client: u32,
    pub(super) resource: u32,
    pub(super) rows: u64,
    pub(super) start: Micros,
    pub(super) end: Micros,
    /// The grants as the trace announced them, copied only if a transfer changes them.
    pub(super) grants: Cow<'a, [GrantRef]>,
}

pub(super) fn belief_spans(events: &[Event], until: Micros) -> Vec<BeliefSpan<'_>> {
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
pub(super) struct SpanCollector<'a> {
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
    pub(super) fn on(&mut self, e: &'a Event) {
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

    pub(super) fn finish(self, until: Micros) -> Vec<BeliefSpan<'a>> {
        let SpanCollector {
            open,
            mut spans,
            mut abandoned,
        } = self;
        for i in open.into_iter().filter(|i| *i != CLOSED) {
            spans[i].end = until;
        }
        if !abandoned.is_empty() {
            crate::sorted::sort(&mut abandoned);
            let mut i = 0;
            spans.retain(|_| {
                i += 1;
                abandoned.binary_search(&(i - 1)).is_err()
            });
        }
        // Stable, so one client's spans that start at one instant stay in the order they ended.
        if !spans.is_sorted_by_key(|s| (s.start, s.client)) {
            crate::sorted::sort_by_key(&mut spans, |s| (s.start, s.client));
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
    pub service_pairs: SortedSet<(u32, u32)>,
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
pub(super) fn overlaps_of(world: &World, spans: &[BeliefSpan], keep: usize) -> OverlapScan {
    let masks: Vec<u8> = spans.iter().map(|s| root_mask(world, &s.grants)).collect();
    // Each section's services, as a bit set, computed once: most sections overlap several.
    let services_of: Vec<u8> = spans.iter().map(|s| masks_of_services(&s.grants)).collect();
    let mut scan = OverlapScan {
        count: 0,
        first: Vec::new(),
        bands: Vec::new(),
        incomparable: 0,
        service_pairs: SortedSet::new(),
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
    scan.service_pairs = crate::sorted::set(
        (0..64u32)
            .filter(|bit| pairs & (1u64 << bit) != 0)
            .map(|bit| (bit / 8, bit % 8)),
    );
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
type Lines = SortedMap<usize, String>;

/// The positions in the trace of the log lines a violation may quote: each service's entries
/// for each lock, but for queue and cancel entries. They are listed for every lock as the trace
/// is read, because which violations are detailed is known only at its end; a position per
/// service entry is a small fraction of the trace itself.
pub(super) struct LockLines {
    resources: usize,
    /// By lock (service × resources + resource).
    lines: Vec<Vec<u32>>,
}

impl LockLines {
    pub(super) fn new(world: &World) -> LockLines {
        let resources = world.resources.len();
        LockLines {
            resources,
            lines: vec![Vec::new(); world.services.len() * resources],
        }
    }

    #[inline]
    pub(super) fn on(&mut self, i: usize, e: &Event) {
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

pub(super) fn violation(
    world: &World,
    events: &[Event],
    o: &Overlap,
    quoted: &LockLines,
    lines: &mut Lines,
) -> Violation {
    let services: SortedSet<u32> = crate::sorted::set(o.grants.iter().flatten().map(|g| g.service));
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
                .entry_or_insert_with(i, || events[i].render(world))
                .clone()
        })
        .collect()
}
