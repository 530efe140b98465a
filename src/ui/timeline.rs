//! The timeline as data: lanes of spans and marks on one time axis, built from a trace and its
//! verdict. The view only draws what this says; every span and mark points back to the event
//! that made it.

use crate::monitor;
use crate::trace::{rows_text, seconds, AbortReason, Event, HoldChange, ServiceOp, What};
use crate::ui::links::{self, LaneIndex, Link};
use crate::ui::notes::{self, Note};
use crate::world::{Micros, World};

/// What a lane stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    Client,
    Service,
    Resource,
    Faults,
}

/// A stretch of time in a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A client waits for its locks.
    Waiting,
    /// A client believes it holds its locks (its critical section).
    Believed,
    /// A client process is paused.
    Paused,
    /// A service holds the lock for a client.
    Held,
    /// A service is down.
    Outage,
    /// Regions are cut apart.
    Partition,
}

/// One moment in a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MarkKind {
    Request,
    Aborted,
    /// A majority client counted fewer grants than its quorum: it holds nothing and lets go.
    QuorumMissed,
    /// A majority client counted its quorum only after the lock's validity had run out: it
    /// lets go without using the lock.
    ValiditySpent,
    Queued,
    Refused,
    Released,
    Expired,
    Superseded,
    /// A service without persistence came back from its outage having forgotten every grant.
    RestartedEmpty,
    Read,
    Write,
    Rejected,
    LostUpdate,
    MessageLost,
    Migrated,
}

impl MarkKind {
    /// Every kind, in legend order.
    pub const ALL: [MarkKind; 16] = [
        MarkKind::Request,
        MarkKind::Aborted,
        MarkKind::QuorumMissed,
        MarkKind::ValiditySpent,
        MarkKind::Queued,
        MarkKind::Refused,
        MarkKind::Released,
        MarkKind::Expired,
        MarkKind::Superseded,
        MarkKind::RestartedEmpty,
        MarkKind::Read,
        MarkKind::Write,
        MarkKind::Rejected,
        MarkKind::LostUpdate,
        MarkKind::MessageLost,
        MarkKind::Migrated,
    ];

    /// A short, stable name used for styling and the legend.
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Request => "request",
            MarkKind::Aborted => "aborted",
            MarkKind::QuorumMissed => "quorum-missed",
            MarkKind::ValiditySpent => "validity-spent",
            MarkKind::Queued => "queued",
            MarkKind::Refused => "refused",
            MarkKind::Released => "released",
            MarkKind::Expired => "expired",
            MarkKind::Superseded => "superseded",
            MarkKind::RestartedEmpty => "restarted-empty",
            MarkKind::Read => "read",
            MarkKind::Write => "write",
            MarkKind::Rejected => "rejected",
            MarkKind::LostUpdate => "lost-update",
            MarkKind::MessageLost => "message-lost",
            MarkKind::Migrated => "migrated",
        }
    }

    /// What the mark means, for the legend.
    pub fn meaning(self) -> &'static str {
        match self {
            MarkKind::Request => "acquire request sent",
            MarkKind::Aborted => "attempt abandoned",
            MarkKind::QuorumMissed => {
                "quorum missed: too few grants to hold the lock (a split vote, or another holds it)"
            }
            MarkKind::ValiditySpent => {
                "validity spent: a quorum counted too late to use, so the lock is let go"
            }
            MarkKind::Queued => "request queued behind a holder",
            MarkKind::Refused => "request refused",
            MarkKind::Released => "lock released",
            MarkKind::Expired => "lease expired",
            MarkKind::Superseded => "holder superseded",
            MarkKind::RestartedEmpty => "service restarted empty: it forgot every grant it held",
            MarkKind::Read => "read accepted",
            MarkKind::Write => "write accepted",
            MarkKind::Rejected => "access rejected by fencing",
            MarkKind::LostUpdate => "write that overwrote another's update",
            MarkKind::MessageLost => "message lost",
            MarkKind::Migrated => "resource migrated",
        }
    }
}

impl SpanKind {
    pub const ALL: [SpanKind; 6] = [
        SpanKind::Waiting,
        SpanKind::Believed,
        SpanKind::Paused,
        SpanKind::Held,
        SpanKind::Outage,
        SpanKind::Partition,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SpanKind::Waiting => "waiting",
            SpanKind::Believed => "believed",
            SpanKind::Paused => "paused",
            SpanKind::Held => "held",
            SpanKind::Outage => "outage",
            SpanKind::Partition => "partition",
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            SpanKind::Waiting => "client waiting for its locks",
            SpanKind::Believed => "client believes it holds the lock (critical section)",
            SpanKind::Paused => "client paused",
            SpanKind::Held => "service grant (its own instant and token)",
            SpanKind::Outage => "service down",
            SpanKind::Partition => "regions partitioned",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub from: Micros,
    pub to: Micros,
    pub kind: SpanKind,
    /// A short label drawn on the span when there is room (a grant's instant and token).
    pub label: String,
    /// The event that started the span.
    pub event: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub at: Micros,
    pub kind: MarkKind,
    pub event: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    pub kind: LaneKind,
    pub label: String,
    pub spans: Vec<Span>,
    pub marks: Vec<Mark>,
}

/// An exclusion violation drawn across the lanes it spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub from: Micros,
    pub to: Micros,
    /// The lanes of the two clients, the services that granted them and the resource.
    pub lanes: Vec<usize>,
    /// The overlap's card: who believed they held what, granted by which service at which of
    /// its own instants, with which token, and whether the service still held it for them.
    pub text: String,
    /// The two clients, the rows, and which service granted what, for its labels.
    pub names: [String; 2],
    pub what: String,
    pub granted: String,
}

impl Overlap {
    /// Labels to draw beside the overlap, longest first; the painter takes the first that fits.
    /// Each is in words ("batch-1 and online-1 both hold orders[total]"). They are made when
    /// drawn, for the few overlaps with room for one, not for every overlap of a long run.
    pub fn labels(&self) -> [String; 4] {
        let [a, b] = &self.names;
        [
            format!("{a} and {b} both hold {}: {}", self.what, self.granted),
            format!("{a} and {b} both hold {}", self.what),
            format!("{a} & {b} both hold"),
            "2 hold at once".to_string(),
        ]
    }
}

/// How many overlaps a layout keeps in detail (with words and lanes of their own); the rest
/// are drawn through the bands that merge them, so the layout's size stays bounded whatever the
/// run.
pub const OVERLAPS_DETAILED_MAX: usize = 1_000;

/// Overlaps that touch in time, merged once per layout: what a paint draws when zoomed out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergedOverlaps {
    pub from: Micros,
    pub to: Micros,
    /// Every lane an overlap in it involves (its clients, the services that granted them, the
    /// resource), ascending.
    pub lanes: Vec<usize>,
    pub count: u64,
    /// The position of its first overlap in the verdict's enumeration.
    pub first: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub end: Micros,
    pub lanes: Vec<Lane>,
    /// The first overlaps in detail (at most [`OVERLAPS_DETAILED_MAX`]), in the verdict's order.
    pub overlaps: Vec<Overlap>,
    /// Every overlap, counted: the verdict's `violation_count`.
    pub overlap_count: u64,
    /// Every overlap, merged into bands of overlaps that touch in time.
    pub merged: Vec<MergedOverlaps>,
    /// Which lane stands for which client, service and resource.
    pub index: LaneIndex,
    /// The names of the services, for the tokens written beside reads and writes.
    pub services: Vec<String>,
    /// Every message as a link between lanes, in the order of the events they led to.
    pub links: Vec<Link>,
    /// Positions in `links`, ordered by the event each link started from.
    pub links_by_cause: Vec<u32>,
    /// The decisive moments, in time order.
    pub notes: Vec<Note>,
    /// For a layout cut at a moment ([`Layout::until`]), each note's position in the whole
    /// run's `notes`, which names it in [`crate::ui::Pinned::Note`] and in the reducer; empty
    /// for the whole run's layout, whose positions are their own.
    pub note_ids: Vec<usize>,
}

impl Layout {
    /// The name of the note at position `k` of this layout: its position in the whole run's.
    pub fn note_id(&self, k: usize) -> usize {
        self.note_ids.get(k).copied().unwrap_or(k)
    }

    /// The note this layout shows under the name `id` ([`Layout::note_id`]), if it shows it.
    pub fn note_named(&self, id: usize) -> Option<&Note> {
        if self.note_ids.is_empty() {
            return self.notes.get(id);
        }
        let k = self.note_ids.binary_search(&id).ok()?;
        self.notes.get(k)
    }
}

impl Layout {
    /// Builds the lanes from a trace alone (the analysis and the verdict are computed here).
    pub fn build(world: &World, events: &[Event], end: Micros) -> Layout {
        let analysis = monitor::analyse(world, events, end, OVERLAPS_DETAILED_MAX);
        Layout::build_with(world, events, end, &analysis)
    }

    /// Builds the lanes from a trace and its analysis; the verdict the notes need (its wait-for
    /// cycles) is computed here. [`Layout::build_judged`] takes one already computed.
    pub fn build_with(
        world: &World,
        events: &[Event],
        end: Micros,
        analysis: &monitor::Analysis,
    ) -> Layout {
        let verdict = monitor::verdict_from(world, events, end, false, 0, analysis);
        Layout::build_judged(world, events, end, analysis, &verdict)
    }

    /// Builds the lanes: one per client, one per service, one per resource, and one for
    /// faults, in that order; then the links between them and the notes on them. Overlaps,
    /// lost updates and cycles come from the same analysis and verdict the page prints, so
    /// what is drawn is what is counted.
    pub fn build_judged(
        world: &World,
        events: &[Event],
        end: Micros,
        analysis: &monitor::Analysis,
        verdict: &monitor::Verdict,
    ) -> Layout {
        let clients = world.clients.len();
        let services = world.services.len();
        let resources = world.resources.len();
        let client_lane = |c: u32| c as usize;
        let service_lane = |s: u32| clients + s as usize;
        let resource_lane = |r: u32| clients + services + r as usize;
        let faults = clients + services + resources;
        let mut lanes: Vec<Lane> = world
            .clients
            .iter()
            .map(|c| lane(LaneKind::Client, &c.name))
            .chain(
                world
                    .services
                    .iter()
                    .map(|s| lane(LaneKind::Service, &format!("service {}", s.name))),
            )
            .chain(
                world
                    .resources
                    .iter()
                    .map(|r| lane(LaneKind::Resource, &r.name)),
            )
            .chain(std::iter::once(lane(LaneKind::Faults, "faults")))
            .collect();

        // Open spans, closed when their ending event arrives.
        let mut waiting: Vec<Option<(Micros, usize)>> = vec![None; clients];
        let mut believed: Vec<Option<(Micros, usize)>> = vec![None; clients];
        let mut paused: Vec<Option<(Micros, usize)>> = vec![None; clients];
        let mut held: Vec<Vec<OpenHold>> = vec![Vec::new(); services];
        // When and why each hold ended, in trace order; made a map after the pass.
        let mut ended: Vec<HoldEnd> = Vec::new();
        let mut outages: Vec<Option<(Micros, usize)>> = vec![None; services];
        let mut partitions: Vec<Option<(Micros, usize)>> = vec![None; world.partitions.len()];
        // When each client last counted its grants and came up short or late, so that the
        // abandonment it leads to is not drawn twice.
        let mut counted: Vec<Option<Micros>> = vec![None; clients];

        for (i, e) in events.iter().enumerate() {
            let at = e.at;
            match &e.what {
                What::PartitionStarted { partition } => {
                    partitions[*partition as usize] = Some((at, i));
                }
                What::PartitionEnded { partition } => {
                    let label = partition_label(world, *partition);
                    close_into(
                        &mut lanes,
                        &[faults],
                        &mut partitions[*partition as usize],
                        SpanKind::Partition,
                        at,
                        &label,
                    );
                }
                What::OutageStarted { service } => outages[*service as usize] = Some((at, i)),
                What::OutageEnded { service } => {
                    let s = *service as usize;
                    let label = if world.services[s].forgets_on_restart {
                        format!("{} down, back empty", world.services[s].name)
                    } else {
                        format!("{} down", world.services[s].name)
                    };
                    let into = [service_lane(*service), faults];
                    close_into(
                        &mut lanes,
                        &into,
                        &mut outages[s],
                        SpanKind::Outage,
                        at,
                        &label,
                    );
                }
                What::PauseStarted { client } => paused[*client as usize] = Some((at, i)),
                What::PauseEnded { client } => {
                    let c = *client as usize;
                    let label = format!("{} paused", world.clients[c].name);
                    let into = [client_lane(*client), faults];
                    close_into(
                        &mut lanes,
                        &into,
                        &mut paused[c],
                        SpanKind::Paused,
                        at,
                        &label,
                    );
                }
                What::Migrated { .. } => mark(&mut lanes[faults], at, MarkKind::Migrated, i),
                What::OpStarted { client, .. } => {
                    waiting[*client as usize] = Some((at, i));
                }
                What::AcquireSent { client, .. } => {
                    mark(&mut lanes[client_lane(*client)], at, MarkKind::Request, i)
                }
                What::AttemptAborted { client, reason, .. } => {
                    // A missed quorum or a spent validity has its own mark at this instant,
                    // which says why; the abandonment that follows it adds nothing to draw.
                    let said = matches!(
                        reason,
                        AbortReason::QuorumMissed | AbortReason::ValiditySpent
                    ) && counted[*client as usize] == Some(at);
                    if !said {
                        mark(&mut lanes[client_lane(*client)], at, MarkKind::Aborted, i)
                    }
                }
                What::QuorumMissed { client, .. } => {
                    counted[*client as usize] = Some(at);
                    mark(
                        &mut lanes[client_lane(*client)],
                        at,
                        MarkKind::QuorumMissed,
                        i,
                    )
                }
                What::ValiditySpent { client, .. } => {
                    counted[*client as usize] = Some(at);
                    mark(
                        &mut lanes[client_lane(*client)],
                        at,
                        MarkKind::ValiditySpent,
                        i,
                    )
                }
                What::RestartedEmpty { service } => {
                    // Drawn as an outage is: in the service's lane and in the faults' lane.
                    for l in [service_lane(*service), faults] {
                        mark(&mut lanes[l], at, MarkKind::RestartedEmpty, i);
                    }
                }
                What::GaveUp { client } | What::ClientStopped { client } => {
                    let c = *client as usize;
                    close_into(&mut lanes, &[c], &mut waiting[c], SpanKind::Waiting, at, "");
                }
                What::BeliefStarted { client, .. } => {
                    let c = *client as usize;
                    close_into(&mut lanes, &[c], &mut waiting[c], SpanKind::Waiting, at, "");
                    believed[c] = Some((at, i));
                }
                What::BeliefEnded { client, .. } => {
                    let c = *client as usize;
                    close_into(
                        &mut lanes,
                        &[c],
                        &mut believed[c],
                        SpanKind::Believed,
                        at,
                        "",
                    );
                }
                What::Service {
                    service,
                    instant,
                    resource,
                    op,
                } => {
                    let s = *service as usize;
                    let l = service_lane(*service);
                    let r = *resource;
                    match op.hold_change() {
                        // A service confirms a hold to a client that asks again; that is the
                        // same hold, not a new one (as the monitors count it).
                        Some(HoldChange::Begins { client, token })
                            if !held[s].iter().any(|h| h.0 == r && h.1 == client) =>
                        {
                            let label = format!(
                                "{}, instant {}, token {}",
                                world.clients[client as usize].name, instant, token
                            );
                            held[s].push((r, client, at, i, label, token));
                        }
                        Some(HoldChange::Ends { client, .. }) => {
                            if let Some(k) = held[s].iter().position(|h| h.0 == r && h.1 == client)
                            {
                                let (_, _, from, event, label, token) = held[s].remove(k);
                                let why = match op {
                                    ServiceOp::Released { .. } => "released",
                                    ServiceOp::Expired { .. } => "its lease expired",
                                    ServiceOp::Superseded { .. } => {
                                        "superseded by a higher authority token"
                                    }
                                    ServiceOp::Forgotten { .. } => {
                                        "forgotten: the service restarted empty"
                                    }
                                    _ => "handed to another service by a migration",
                                };
                                ended.push(((*service, token), (at, why)));
                                lanes[l].spans.push(Span {
                                    from,
                                    to: at,
                                    kind: SpanKind::Held,
                                    label,
                                    event,
                                });
                            }
                        }
                        _ => {}
                    }
                    let kind = match op {
                        ServiceOp::Queued { .. } => Some(MarkKind::Queued),
                        ServiceOp::Refused { .. } => Some(MarkKind::Refused),
                        ServiceOp::Released { .. } | ServiceOp::ReleaseIgnored { .. } => {
                            Some(MarkKind::Released)
                        }
                        ServiceOp::Expired { .. } => Some(MarkKind::Expired),
                        ServiceOp::Superseded { .. } => Some(MarkKind::Superseded),
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        mark(&mut lanes[l], at, kind, i);
                    }
                }
                What::Read {
                    resource, accepted, ..
                } => {
                    let kind = if *accepted {
                        MarkKind::Read
                    } else {
                        MarkKind::Rejected
                    };
                    mark(&mut lanes[resource_lane(*resource)], at, kind, i);
                }
                What::Write {
                    resource, accepted, ..
                } => {
                    let erased = analysis
                        .lost
                        .marks
                        .binary_search_by_key(&i, |(event, _)| *event)
                        .is_ok();
                    let kind = match (*accepted, erased) {
                        (false, _) => MarkKind::Rejected,
                        (true, true) => MarkKind::LostUpdate,
                        (true, false) => MarkKind::Write,
                    };
                    mark(&mut lanes[resource_lane(*resource)], at, kind, i);
                }
                What::MessageLost { .. } => mark(&mut lanes[faults], at, MarkKind::MessageLost, i),
                What::SkippedUnreachable { .. }
                | What::LockTransferred { .. }
                | What::StaleGrantReleased { .. }
                | What::QuorumReached { .. } => {}
            }
        }

        // Whatever is still open runs to the end of the run.
        for c in 0..clients {
            close_into(
                &mut lanes,
                &[c],
                &mut waiting[c],
                SpanKind::Waiting,
                end,
                "",
            );
            close_into(
                &mut lanes,
                &[c],
                &mut believed[c],
                SpanKind::Believed,
                end,
                "",
            );
            let label = format!("{} paused", world.clients[c].name);
            close_into(
                &mut lanes,
                &[c, faults],
                &mut paused[c],
                SpanKind::Paused,
                end,
                &label,
            );
        }
        for (s, open) in held.into_iter().enumerate() {
            for (_, _, from, event, label, _) in open {
                lanes[clients + s].spans.push(Span {
                    from,
                    to: end,
                    kind: SpanKind::Held,
                    label,
                    event,
                });
            }
        }
        for (s, open) in outages.iter_mut().enumerate() {
            let label = format!("{} down", world.services[s].name);
            let into = [clients + s, faults];
            close_into(&mut lanes, &into, open, SpanKind::Outage, end, &label);
        }
        for (p, open) in partitions.iter_mut().enumerate() {
            let label = partition_label(world, p as u32);
            close_into(
                &mut lanes,
                &[faults],
                open,
                SpanKind::Partition,
                end,
                &label,
            );
        }
        for l in &mut lanes {
            crate::sorted::sort_by_key(&mut l.spans, |s| (s.from, s.to));
        }

        // A later end of the same hold replaces an earlier one, as the pass met them.
        let ended: HoldEnds = crate::sorted::SortedMap::from_pairs_merging(ended, |a, b| *a = b);

        // The overlaps the verdict counts: the first in detail, all of them in bands.
        let overlaps: Vec<Overlap> = analysis
            .overlaps
            .first
            .iter()
            .take(OVERLAPS_DETAILED_MAX)
            .map(|o| {
                let mut spanned: Vec<usize> = o
                    .clients
                    .iter()
                    .map(|c| client_lane(*c))
                    .chain(o.grants.iter().flatten().map(|g| service_lane(g.service)))
                    .chain(std::iter::once(resource_lane(o.resource)))
                    .collect();
                crate::sorted::sort(&mut spanned);
                spanned.dedup();
                let (granted, text) = overlap_words(world, o, &ended);
                let name = |k: usize| world.clients[o.clients[k] as usize].name.clone();
                Overlap {
                    from: o.from,
                    to: o.to,
                    lanes: spanned,
                    names: [name(0), name(1)],
                    what: format!(
                        "{}[{}]",
                        world.resources[o.resource as usize].name,
                        rows_text(world, o.resource, o.rows)
                    ),
                    granted,
                    text,
                }
            })
            .collect();
        let merged = analysis
            .overlaps
            .bands
            .iter()
            .map(|b| {
                let mut spanned: Vec<usize> = b
                    .client_indices()
                    .map(client_lane)
                    .chain(
                        (0..services as u32)
                            .filter(|s| b.services & (1 << s) != 0)
                            .map(service_lane),
                    )
                    .chain(
                        (0..resources as u32)
                            .filter(|r| b.resources & (1 << r) != 0)
                            .map(resource_lane),
                    )
                    .collect();
                crate::sorted::sort(&mut spanned);
                MergedOverlaps {
                    from: b.from,
                    to: b.to,
                    lanes: spanned,
                    count: b.count,
                    first: b.first,
                }
            })
            .collect();
        let index = LaneIndex::of_world(world);
        let links = links::links(world, events, &index);
        // Sorted as plain integers (cause, then position), the sort the page already has.
        let mut keys: Vec<u64> = links
            .iter()
            .enumerate()
            .map(|(k, l)| ((l.cause as u64) << 32) | k as u64)
            .collect();
        crate::sorted::sort(&mut keys);
        let links_by_cause: Vec<u32> = keys.iter().map(|k| *k as u32).collect();
        let notes = notes::notes(world, events, end, analysis, verdict, &index, &overlaps);
        Layout {
            end,
            lanes,
            overlaps,
            overlap_count: analysis.overlaps.count,
            merged,
            index,
            services: world.services.iter().map(|s| s.name.clone()).collect(),
            links,
            links_by_cause,
            notes,
            note_ids: Vec::new(),
        }
    }
}

fn lane(kind: LaneKind, label: &str) -> Lane {
    Lane {
        kind,
        label: label.to_string(),
        spans: Vec::new(),
        marks: Vec::new(),
    }
}

/// A hold a service has granted and not yet ended: (resource, client, since, event, label,
/// token).
type OpenHold = (u32, u32, Micros, usize, String, u64);

/// When and why each hold ended at its service, by (service, token): what an overlap's card
/// needs to say that a service had already taken back a lock its client still believed in.
type HoldEnds = crate::sorted::SortedMap<(u32, u64), (Micros, &'static str)>;
/// One entry of [`HoldEnds`].
type HoldEnd = ((u32, u64), (Micros, &'static str));

/// Closes an open span into each of the given lanes (a pause or an outage shows both in its
/// own lane and in the fault lane).
fn close_into(
    lanes: &mut [Lane],
    into: &[usize],
    open: &mut Option<(Micros, usize)>,
    kind: SpanKind,
    to: Micros,
    label: &str,
) {
    if let Some((from, event)) = open.take() {
        for l in into {
            lanes[*l].spans.push(Span {
                from,
                to,
                kind,
                label: label.to_string(),
                event,
            });
        }
    }
}

fn mark(lane: &mut Lane, at: Micros, kind: MarkKind, event: usize) {
    lane.marks.push(Mark { at, kind, event });
}

fn partition_label(world: &World, partition: u32) -> String {
    let p = &world.partitions[partition as usize];
    let groups = p.group_of.iter().flatten().max().map_or(0, |g| g + 1);
    let names: Vec<String> = (0..groups)
        .map(|g| {
            p.group_of
                .iter()
                .enumerate()
                .filter(|(_, x)| **x == Some(g))
                .map(|(r, _)| world.regions[r].as_str())
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    format!("partition {}", names.join(" | "))
}

/// The marks worth drawing at a zoom level: within each pixel column, one mark of each kind
/// (the first). This bounds what the view draws by the width of the lane, not the length of
/// the run, without hiding any kind of mark from a column where it occurs.
pub fn visible_marks(marks: &[Mark], us_per_px: f64) -> Vec<Mark> {
    let mut out: Vec<Mark> = Vec::with_capacity(marks.len().min(4096));
    let mut last: [Option<i64>; MarkKind::ALL.len()] = [None; MarkKind::ALL.len()];
    let scale = if us_per_px > 0.0 { us_per_px } else { 1.0 };
    for m in marks {
        let column = (m.at as f64 / scale) as i64;
        let slot = &mut last[m.kind as usize];
        if *slot != Some(column) {
            *slot = Some(column);
            out.push(*m);
        }
    }
    out
}

/// The spans worth drawing at a zoom level: spans narrower than a pixel that start in the
/// same pixel column as the previous drawn span of their kind are merged into it.
pub fn visible_spans(spans: &[Span], us_per_px: f64) -> Vec<Span> {
    let scale = if us_per_px > 0.0 { us_per_px } else { 1.0 };
    let mut out: Vec<Span> = Vec::with_capacity(spans.len().min(4096));
    for s in spans {
        if let Some(prev) = out.iter_mut().rev().take(4).find(|p| p.kind == s.kind) {
            let narrow = ((s.to - s.from) as f64) < scale;
            let same_column = (s.from as f64 / scale) as i64 <= (prev.to as f64 / scale) as i64;
            if narrow && same_column {
                prev.to = prev.to.max(s.to);
                continue;
            }
        }
        out.push(s.clone());
    }
    out
}

/// One entry of a service's own order: its instant and what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderEntry {
    pub instant: u64,
    pub text: String,
    pub event: usize,
    pub grant: bool,
}

/// A service's own sequence of operations, numbered by its own instants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnOrder {
    pub service: String,
    pub entries: Vec<OrderEntry>,
}

/// Each service's own order, in the service's instants, with nothing relating one service's
/// sequence to another's.
pub fn own_orders(world: &World, events: &[Event]) -> Vec<OwnOrder> {
    let mut out: Vec<OwnOrder> = world
        .services
        .iter()
        .map(|s| OwnOrder {
            service: s.name.clone(),
            entries: Vec::new(),
        })
        .collect();
    for (i, e) in events.iter().enumerate() {
        if let What::Service {
            service,
            instant,
            op,
            ..
        } = &e.what
        {
            let name = |c: &u32| world.clients[*c as usize].name.as_str();
            let text = match op {
                ServiceOp::Granted { client, token, .. } => {
                    format!("granted {} token {}", name(client), token)
                }
                ServiceOp::Queued { client, .. } => format!("queued {}", name(client)),
                ServiceOp::Refused { client, .. } => format!("refused {}", name(client)),
                ServiceOp::Released { client, token } => {
                    format!("released {} token {}", name(client), token)
                }
                ServiceOp::ReleaseIgnored { client, .. } => {
                    format!("ignored a stale release from {}", name(client))
                }
                ServiceOp::Cancelled { client } => format!("cancelled {}", name(client)),
                ServiceOp::Expired { client, token } => {
                    format!("lease of {} expired (token {})", name(client), token)
                }
                ServiceOp::Superseded { client, token } => {
                    format!("superseded {} (token {})", name(client), token)
                }
                ServiceOp::MovedOut { client, to, .. } => format!(
                    "handed {} to {}",
                    name(client),
                    world.services[*to as usize].name
                ),
                ServiceOp::TransferredIn { client, token, .. } => {
                    format!("took over {} with token {}", name(client), token)
                }
                ServiceOp::Forgotten {
                    client,
                    token: Some(token),
                } => format!("forgot {} (token {})", name(client), token),
                ServiceOp::Forgotten {
                    client,
                    token: None,
                } => format!("forgot {}'s wait", name(client)),
                ServiceOp::Drained { from, .. } => {
                    format!("{} drained", world.services[*from as usize].name)
                }
            };
            out[*service as usize].entries.push(OrderEntry {
                instant: *instant,
                text,
                event: i,
                grant: matches!(
                    op,
                    ServiceOp::Granted { .. } | ServiceOp::TransferredIn { .. }
                ),
            });
        }
    }
    out
}

/// The stretch of time a timeline shows. At zoom 1 it is the whole run; zoomed in, it is a
/// window that pages along to keep the playhead in view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: Micros,
    pub to: Micros,
}

impl Window {
    /// The whole run.
    pub fn all(end: Micros) -> Window {
        Window {
            from: 0,
            to: end.max(1),
        }
    }

    /// The window at a zoom level that keeps `playhead` in view, moving `previous` as little
    /// as it can: it stays put while the playhead is inside its middle 80%, and otherwise
    /// re-centres on the playhead. Staying put is what lets scrubbing skip redrawing.
    pub fn follow(previous: Window, end: Micros, zoom: u32, playhead: Micros) -> Window {
        let end = end.max(1);
        let span = (end / u64::from(zoom.max(1))).max(1);
        if span >= end {
            return Window::all(end);
        }
        let margin = span / 10;
        let fits = previous.to - previous.from == span
            && previous.to <= end
            && playhead >= previous.from + margin
            && playhead <= previous.to - margin;
        if fits {
            return previous;
        }
        let from = playhead.saturating_sub(span / 2).min(end - span);
        Window {
            from,
            to: from + span,
        }
    }

    pub fn span(&self) -> Micros {
        (self.to - self.from).max(1)
    }

    /// Where time `t` falls, as a fraction of the window (outside 0..=1 when outside it).
    pub fn fraction(&self, t: Micros) -> f64 {
        (t as f64 - self.from as f64) / self.span() as f64
    }

    /// The time at a fraction of the window.
    pub fn time_at(&self, fraction: f64) -> Micros {
        let t = self.from as f64 + fraction * self.span() as f64;
        t.max(0.0) as Micros
    }
}

impl Layout {
    /// The event under a point: the nearest mark in the lane within `tolerance`, otherwise
    /// the latest span of the lane that covers `t`. This is how the pointer finds an event on
    /// the drawn timeline.
    pub fn hit(&self, lane: usize, t: Micros, tolerance: Micros) -> Option<usize> {
        let lane = self.lanes.get(lane)?;
        let lo = t.saturating_sub(tolerance);
        let hi = t.saturating_add(tolerance);
        let start = lane.marks.partition_point(|m| m.at < lo);
        let mark = lane.marks[start..]
            .iter()
            .take_while(|m| m.at <= hi)
            .min_by_key(|m| m.at.abs_diff(t))
            .map(|m| m.event);
        mark.or_else(|| {
            lane.spans
                .iter()
                .filter(|s| s.from <= t && t <= s.to)
                .max_by_key(|s| s.from)
                .map(|s| s.event)
        })
    }

    /// The marks of a lane inside a window, for drawing.
    pub fn marks_in(&self, lane: usize, w: Window) -> &[Mark] {
        let Some(lane) = self.lanes.get(lane) else {
            return &[];
        };
        let a = lane.marks.partition_point(|m| m.at < w.from);
        let b = lane.marks.partition_point(|m| m.at <= w.to);
        &lane.marks[a..b]
    }
}

/// Overlaps as drawn: bands of overlaps closer than a pixel merge into one over the union of
/// their lanes, so that a run with millions of overlaps paints a few hundred bands at most.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    pub from: Micros,
    pub to: Micros,
    /// Every lane any merged overlap spans, ascending.
    pub lanes: Vec<usize>,
    /// How many overlaps the band merges.
    pub count: u64,
    /// The position of its first overlap in the verdict's enumeration: an index into
    /// `Layout::overlaps` when it is below `Layout::overlaps.len()`.
    pub first: u64,
}

impl Layout {
    /// The bands to draw in a window at a scale. The merged bands are disjoint and in time
    /// order, so the ones in view are found by binary search: the work is the bands in view.
    pub fn bands(&self, w: Window, us_per_px: f64) -> Vec<Band> {
        let start = self.merged.partition_point(|m| m.to < w.from);
        let gap = us_per_px.max(0.0) as Micros;
        let mut out: Vec<Band> = Vec::new();
        for m in self.merged[start..].iter().take_while(|m| m.from <= w.to) {
            match out.last_mut() {
                Some(b) if m.from <= b.to.saturating_add(gap) => {
                    b.to = b.to.max(m.to);
                    b.lanes.extend(&m.lanes);
                    crate::sorted::sort(&mut b.lanes);
                    b.lanes.dedup();
                    b.count += m.count;
                }
                _ => out.push(Band {
                    from: m.from,
                    to: m.to,
                    lanes: m.lanes.clone(),
                    count: m.count,
                    first: m.first,
                }),
            }
        }
        out
    }

    /// The overlap a band stands for, when it is a single overlap kept in detail.
    pub fn single(&self, band: &Band) -> Option<&Overlap> {
        (band.count == 1)
            .then(|| self.overlaps.get(band.first as usize))
            .flatten()
    }
}

/// How a violation is marked across the lanes: a hatched cell in each involved lane, and a
/// join between involved lanes that other lanes separate. The lanes in between get nothing but
/// the thin join that crosses them, so a violation never seems to involve a client or service
/// that played no part in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marking {
    /// The lanes that get a hatched, outlined cell: exactly the involved ones, ascending.
    pub cells: Vec<usize>,
    /// Pairs of involved lanes (upper, lower) with uninvolved lanes between them, joined by a
    /// line that crosses those lanes.
    pub joins: Vec<(usize, usize)>,
}

/// The marking of a violation that involves `lanes` (ascending, as overlaps and bands keep them).
pub fn marking(lanes: &[usize]) -> Marking {
    Marking {
        cells: lanes.to_vec(),
        joins: lanes
            .windows(2)
            .filter(|w| w[1] > w[0] + 1)
            .map(|w| (w[0], w[1]))
            .collect(),
    }
}

/// The words of one overlap: which service granted what, in brief for its labels, and the
/// card's full text.
///
/// The card always says, for each client, what it believed it held, which service granted it at
/// which of its own instants and with which token, and whether that service had already taken
/// the lock back (a lease that expired under a paused holder); then why no one noticed.
fn overlap_words(world: &World, o: &monitor::Overlap, ended: &HoldEnds) -> (String, String) {
    let name = |k: usize| world.clients[o.clients[k] as usize].name.as_str();
    let service = |s: u32| world.services[s as usize].name.as_str();
    let what = format!(
        "{}[{}]",
        world.resources[o.resource as usize].name,
        rows_text(world, o.resource, o.rows)
    );
    let holder = |k: usize| -> String {
        if o.grants[k].is_empty() {
            return format!(
                "{} worked on {what} with no lock (an unprotected critical section) from {}.",
                name(k),
                seconds(o.since[k])
            );
        }
        let grants: Vec<String> = o.grants[k]
            .iter()
            .map(|g| {
                format!(
                    "{} granted it at its own instant {}, with token {}",
                    service(g.service),
                    g.instant,
                    g.token
                )
            })
            .collect();
        let mut out = format!(
            "{} believed it held {what} from {}: {}.",
            name(k),
            seconds(o.since[k]),
            grants.join(", and ")
        );
        for g in &o.grants[k] {
            if let Some((at, why)) = ended.get(&(g.service, g.token)) {
                if *at < o.to {
                    out.push_str(&format!(
                        " {} had taken that lock back at {} ({why}), but {} still believed it held it.",
                        service(g.service),
                        seconds(*at),
                        name(k)
                    ));
                }
            }
        }
        out
    };
    let services = |k: usize| -> Vec<u32> { o.grants[k].iter().map(|g| g.service).collect() };
    let (a, b) = (services(0), services(1));
    let shared = a.iter().any(|s| b.contains(s));
    let why = if a.is_empty() || b.is_empty() {
        let unlocked = if a.is_empty() { name(0) } else { name(1) };
        format!("{unlocked} took no lock, so no service could order it against the other.")
    } else if shared {
        "The same service granted both: its log is consistent, yet both clients believed at once."
            .to_string()
    } else {
        let names = |v: &[u32]| {
            v.iter()
                .map(|s| service(*s))
                .collect::<Vec<_>>()
                .join(" and ")
        };
        format!(
            "Each service's own log is consistent, but the instants and tokens of {} and those of {} are separate counts: neither service knew of the other's grant.",
            names(&a),
            names(&b)
        )
    };
    let text = format!(
        "Exclusion broken from {} to {}: both believed they held {what} at once. {} {} {why}",
        seconds(o.from),
        seconds(o.to),
        holder(0),
        holder(1)
    );
    let granted = if a.is_empty() || b.is_empty() {
        let unlocked = if a.is_empty() { name(0) } else { name(1) };
        format!("{unlocked} took no lock")
    } else if shared {
        format!("{} granted both", service(a[0]))
    } else {
        format!("{} granted one, {} the other", service(a[0]), service(b[0]))
    };
    (granted, text)
}

/// At most this many links in view are all drawn, and at most one per this many pixels of the
/// plot; beyond that only the selected event's causes and effects are, because a thicket of
/// arrows hides more than it shows.
pub const LINKS_ALL_MAX: usize = 120;
pub const LINK_SPACING_PX: f64 = 10.0;

impl Layout {
    /// The links that led to an event (its causes).
    pub fn causes(&self, event: usize) -> &[Link] {
        let a = self.links.partition_point(|l| l.effect < event);
        let b = self.links.partition_point(|l| l.effect <= event);
        &self.links[a..b]
    }

    /// The links that started from an event (what it led to).
    pub fn effects(&self, event: usize) -> impl Iterator<Item = &Link> + '_ {
        let by = &self.links_by_cause;
        let a = by.partition_point(|k| self.links[*k as usize].cause < event);
        let b = by.partition_point(|k| self.links[*k as usize].cause <= event);
        by[a..b].iter().map(|k| &self.links[*k as usize])
    }

    /// The links that end inside a window, in order. Links are kept in the order of the events
    /// they lead to, so these are found by binary search.
    fn links_ending_in(&self, w: Window) -> &[Link] {
        let a = self.links.partition_point(|l| l.to < w.from);
        let b = self.links.partition_point(|l| l.to <= w.to);
        &self.links[a..b]
    }

    /// The links the canvas draws in a window `plot_px` pixels wide: all of them when they are
    /// few (at most [`LINKS_ALL_MAX`], and one per [`LINK_SPACING_PX`]), otherwise none (the
    /// selected event's are drawn on top of the canvas, see [`Layout::selected_links`]).
    pub fn links_to_draw(&self, w: Window, plot_px: f64) -> &[Link] {
        let ending = self.links_ending_in(w);
        let room = (plot_px / LINK_SPACING_PX).max(0.0) as usize;
        if ending.len() <= LINKS_ALL_MAX.min(room) {
            ending
        } else {
            &[]
        }
    }

    /// The selected event's causes and effects: the links drawn on top of the canvas whatever
    /// the crowd.
    pub fn selected_links(&self, event: Option<usize>) -> Vec<Link> {
        let Some(event) = event else {
            return Vec::new();
        };
        self.causes(event)
            .iter()
            .chain(self.effects(event))
            .copied()
            .collect()
    }

    /// The layout of the run as far as it has happened at `t`: what a learner may see while a
    /// prediction about the run is still open. Spans that go on past `t` end at `t`; marks,
    /// links, overlaps and notes after it are left out, and so is a note that lasts past `t`
    /// (its words tell how long it lasted). The lanes and the run's length stay, so the
    /// picture does not move when the rest arrives.
    pub fn until(&self, t: Micros) -> Layout {
        let lanes = self
            .lanes
            .iter()
            .map(|l| Lane {
                kind: l.kind,
                label: l.label.clone(),
                spans: l
                    .spans
                    .iter()
                    .filter(|s| s.from <= t)
                    .map(|s| Span {
                        to: s.to.min(t),
                        ..s.clone()
                    })
                    .collect(),
                marks: l.marks.iter().filter(|m| m.at <= t).copied().collect(),
            })
            .collect();
        let overlaps: Vec<Overlap> = self
            .overlaps
            .iter()
            .filter(|o| o.from <= t)
            .map(|o| Overlap {
                to: o.to.min(t),
                ..o.clone()
            })
            .collect();
        let merged: Vec<MergedOverlaps> = self
            .merged
            .iter()
            .filter(|m| m.from <= t)
            .map(|m| MergedOverlaps {
                to: m.to.min(t),
                ..m.clone()
            })
            .collect();
        // Every overlap is in detail unless the run has more than the layout details; then the
        // bands begun by `t` are counted whole, the nearest figure the layout still has.
        let overlap_count = if self.overlap_count as usize == self.overlaps.len() {
            overlaps.len() as u64
        } else {
            merged.iter().map(|m| m.count).sum()
        };
        let links: Vec<Link> = self.links.iter().filter(|l| l.to <= t).copied().collect();
        let mut keys: Vec<u64> = links
            .iter()
            .enumerate()
            .map(|(k, l)| ((l.cause as u64) << 32) | k as u64)
            .collect();
        crate::sorted::sort(&mut keys);
        Layout {
            end: self.end,
            lanes,
            overlaps,
            overlap_count,
            merged,
            index: self.index,
            services: self.services.clone(),
            links,
            links_by_cause: keys.iter().map(|k| *k as u32).collect(),
            notes: self.notes.iter().filter(|n| n.to <= t).cloned().collect(),
            // Ascending, as `note_named` searches them.
            note_ids: (0..self.notes.len())
                .filter(|k| self.notes[*k].to <= t)
                .map(|k| self.note_id(k))
                .collect(),
        }
    }

    /// The notes that touch a window, in time order.
    pub fn notes_in(&self, w: Window) -> impl Iterator<Item = (usize, &Note)> + '_ {
        self.notes
            .iter()
            .enumerate()
            .filter(move |(_, n)| n.to >= w.from && n.from <= w.to)
    }

    /// The token text of a read or write link: `old:1`.
    pub fn token_text(&self, link: &Link) -> Option<String> {
        link.token.map(|t| {
            format!(
                "{}:{}",
                self.services
                    .get(t.service as usize)
                    .map_or("?", String::as_str),
                t.value
            )
        })
    }
}
