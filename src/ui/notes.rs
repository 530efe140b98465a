//! Notes on the timeline: the decisive moments of a run, each anchored where it happened, with
//! a label short enough to read at a glance and a full sentence for its card.
//!
//! The moments are the first overlap, each lost update (which write overwrote whose
//! increment), each write or read that fencing rejected (the two tokens compared), each
//! wait-for cycle across services (who waits for whom, over which services) and each window in
//! which a service could not be used from a region. All of them come from the monitors' reading
//! of the trace; a note only puts it into words at its place.

use crate::sorted::SortedMap;

use crate::monitor::{self, Analysis, Verdict};
use crate::scenario::Fencing;
use crate::trace::{rows_text, seconds, Event, Token, What};
use crate::ui::links::LaneIndex;
use crate::ui::timeline::Overlap;
use crate::world::{Micros, World};

/// What a note calls out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoteKind {
    FirstOverlap,
    LostUpdate,
    Rejection,
    Cycle,
    Unavailable,
}

impl NoteKind {
    pub const ALL: [NoteKind; 5] = [
        NoteKind::FirstOverlap,
        NoteKind::LostUpdate,
        NoteKind::Rejection,
        NoteKind::Cycle,
        NoteKind::Unavailable,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NoteKind::FirstOverlap => "first-overlap",
            NoteKind::LostUpdate => "lost-update",
            NoteKind::Rejection => "rejection",
            NoteKind::Cycle => "cycle",
            NoteKind::Unavailable => "unavailable",
        }
    }

    /// A letter drawn in the note's tag, so that the kind never depends on colour alone.
    pub fn letter(self) -> &'static str {
        match self {
            NoteKind::FirstOverlap => "1",
            NoteKind::LostUpdate => "L",
            NoteKind::Rejection => "R",
            NoteKind::Cycle => "C",
            NoteKind::Unavailable => "U",
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            NoteKind::FirstOverlap => {
                "the first overlap: two clients believe they hold the same rows"
            }
            NoteKind::LostUpdate => "a lost update: whose write overwrote whose increment",
            NoteKind::Rejection => "fencing rejected an access: the two tokens compared",
            NoteKind::Cycle => "a wait-for cycle across services (a deadlock if never broken)",
            NoteKind::Unavailable => "a service that a region cannot use",
        }
    }
}

/// One decisive moment, anchored on the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    /// Where it starts and ends; equal for a moment.
    pub from: Micros,
    pub to: Micros,
    /// Every lane it involves, ascending.
    pub lanes: Vec<usize>,
    /// The lane its label is drawn in.
    pub anchor: usize,
    /// The label on the picture.
    pub short: String,
    /// The full sentence, for its card and for screen readers.
    pub text: String,
    /// The event it is about: focusing the note selects it.
    pub event: usize,
}

impl Note {
    /// Where the note's tag stands: at the decisive event of a lost update or a rejection (the
    /// overwriting write, the refused access), at the start of anything that lasts.
    pub fn tag_at(&self) -> Micros {
        match self.kind {
            NoteKind::LostUpdate | NoteKind::Rejection => self.to,
            _ => self.from,
        }
    }
}

/// How many notes of each kind a layout keeps: the verdict details at most this many lost
/// updates and cycles too, and a run with more of them has made its point many times over.
pub const NOTES_PER_KIND_MAX: usize = 1_000;

/// Every note of a run, in time order.
///
/// Cost: one pass over the trace for rejections and one for the reads behind lost updates, plus
/// work per note; at most [`NOTES_PER_KIND_MAX`] notes of each kind.
pub fn notes(
    world: &World,
    events: &[Event],
    end: Micros,
    analysis: &Analysis,
    verdict: &Verdict,
    lanes: &LaneIndex,
    overlaps: &[Overlap],
) -> Vec<Note> {
    let mut out = Vec::new();
    if let (Some(first), Some(o)) = (overlaps.first(), analysis.overlaps.first.first()) {
        let later = o.clients[1];
        let start = events.partition_point(|e| e.at < o.from);
        let event = events[start..]
            .iter()
            .position(|e| matches!(e.what, What::BeliefStarted { client, .. } if client == later))
            .map_or(start, |k| start + k)
            .min(events.len().saturating_sub(1));
        let name = |c: u32| world.clients[c as usize].name.as_str();
        out.push(Note {
            kind: NoteKind::FirstOverlap,
            from: first.from,
            to: first.to,
            lanes: first.lanes.clone(),
            anchor: lanes.client(later),
            short: format!(
                "first overlap: {} and {} both hold",
                name(o.clients[0]),
                name(later)
            ),
            text: format!("The first overlap of the run. {}", first.text),
            event,
        });
    }
    lost_notes(world, events, analysis, lanes, &mut out);
    rejection_notes(world, events, lanes, &mut out);
    cycle_notes(world, events, end, verdict, lanes, &mut out);
    unavailable_notes(world, events, end, lanes, &mut out);
    sort_by_time(out)
}

/// Notes in time order, then by kind, then as made. The keys are plain integers sorted with
/// the sort the page already has, which keeps the downloaded code small: a run is at most an
/// hour (under 2^32 microseconds) and a layout keeps at most [`NOTES_PER_KIND_MAX`] notes of
/// each of the five kinds (under 2^13).
fn sort_by_time(notes: Vec<Note>) -> Vec<Note> {
    let mut keys: Vec<u64> = notes
        .iter()
        .enumerate()
        .map(|(k, n)| (n.from.min(u64::from(u32::MAX)) << 16) | ((n.kind as u64) << 13) | k as u64)
        .collect();
    crate::sorted::sort(&mut keys);
    let mut slots: Vec<Option<Note>> = notes.into_iter().map(Some).collect();
    keys.iter()
        .filter_map(|key| slots[(key & 0x1fff) as usize].take())
        .collect()
}

fn lost_notes(
    world: &World,
    events: &[Event],
    analysis: &Analysis,
    lanes: &LaneIndex,
    out: &mut Vec<Note>,
) {
    let details = &analysis.lost.details[..analysis.lost.details.len().min(NOTES_PER_KIND_MAX)];
    // The read each overwriting write was computed from: the client's last accepted read before
    // it, found in one pass.
    let mut wanted: SortedMap<usize, Option<usize>> =
        crate::sorted::map(details.iter().map(|d| (d.by, None)));
    let mut last_read: Vec<Option<usize>> = vec![None; world.clients.len()];
    if let Some(last) = wanted.keys().next_back().copied() {
        for (i, e) in events.iter().enumerate().take(last + 1) {
            match &e.what {
                What::Read {
                    client,
                    accepted: true,
                    ..
                } => last_read[*client as usize] = Some(i),
                What::Write { client, .. } => {
                    if let Some(slot) = wanted.get_mut(&i) {
                        *slot = last_read[*client as usize];
                    }
                }
                _ => {}
            }
        }
    }
    for d in details {
        let (What::Write { client: lost, .. }, What::Write { client: by, .. }) =
            (&events[d.lost].what, &events[d.by].what)
        else {
            continue;
        };
        let name = |c: u32| world.clients[c as usize].name.as_str();
        let row = &world.resources[d.resource as usize].rows[d.row as usize];
        let resource = &world.resources[d.resource as usize].name;
        let basis = match wanted.get(&d.by).copied().flatten() {
            Some(r) => format!(
                "{} computed its value from a read at {}, taken before {}'s write landed",
                name(*by),
                seconds(events[r].at),
                name(*lost)
            ),
            None => format!(
                "{} computed its value before {}'s write landed",
                name(*by),
                name(*lost)
            ),
        };
        let mut involved = vec![
            lanes.resource(d.resource),
            lanes.client(*lost),
            lanes.client(*by),
        ];
        crate::sorted::sort(&mut involved);
        involved.dedup();
        out.push(Note {
            kind: NoteKind::LostUpdate,
            from: events[d.lost].at,
            to: events[d.by].at,
            lanes: involved,
            anchor: lanes.resource(d.resource),
            short: format!("{}'s write overwrote {}'s increment", name(*by), name(*lost)),
            text: format!(
                "Lost update: {}'s write to {resource}[{row}] at {} overwrote {}'s increment (its write at {}). {basis}, so {row} ends one lower than the writes it accepted.",
                name(*by),
                seconds(events[d.by].at),
                name(*lost),
                seconds(events[d.lost].at),
            ),
            event: d.by,
        });
    }
}

fn token_words(world: &World, t: &Token) -> String {
    format!(
        "{}'s token {}",
        world.services[t.service as usize].name, t.value
    )
}

fn rejection_notes(world: &World, events: &[Event], lanes: &LaneIndex, out: &mut Vec<Note>) {
    // The highest token each resource has accepted so far, and the token that set it: the
    // resource compares each new token with it, as the model's fence does.
    let mut highest: Vec<Option<Token>> = vec![None; world.resources.len()];
    let mut count = 0;
    for (i, e) in events.iter().enumerate() {
        let (client, resource, token, accepted, access, checked) = match &e.what {
            What::Read {
                client,
                resource,
                token,
                accepted,
                ..
            } => (
                *client,
                *resource,
                token,
                *accepted,
                "read",
                world.resources[*resource as usize].check_reads,
            ),
            What::Write {
                client,
                resource,
                token,
                accepted,
                ..
            } => (*client, *resource, token, *accepted, "write", true),
            _ => continue,
        };
        let cfg = &world.resources[resource as usize];
        if !checked || cfg.fencing == Fencing::Off {
            continue;
        }
        if accepted {
            if token.is_some() {
                highest[resource as usize] = *token;
            }
            continue;
        }
        if count >= NOTES_PER_KIND_MAX {
            continue;
        }
        count += 1;
        let name = world.clients[client as usize].name.as_str();
        let service = |s: u32| world.services[s as usize].name.as_str();
        let (short, why) = match (token, highest[resource as usize]) {
            (None, _) => (
                format!("{access} rejected: no token"),
                format!(
                    "it carried no token, and {} checks every {access} for one",
                    cfg.name
                ),
            ),
            (Some(t), _)
                if cfg.fencing == Fencing::OneSource && Some(t.service) != cfg.fencing_source =>
            {
                let source = cfg.fencing_source.map_or("one service", service);
                (
                    format!(
                        "{access} rejected: {}'s token, only {source}'s count",
                        service(t.service)
                    ),
                    format!(
                        "it carried {}, but {} counts only tokens from {source}",
                        token_words(world, t),
                        cfg.name
                    ),
                )
            }
            (Some(t), Some(h)) => {
                let across = if h.service != t.service {
                    format!(
                        " The two numbers come from different services ({} and {}): comparing them says nothing about which grant came later.",
                        service(t.service),
                        service(h.service)
                    )
                } else {
                    String::new()
                };
                (
                    format!("{access} rejected: token {} < {}", t.value, h.value),
                    format!(
                        "it carried {}, lower than {} that {} had already accepted.{across}",
                        token_words(world, t),
                        token_words(world, &h),
                        cfg.name
                    ),
                )
            }
            (Some(t), None) => (
                format!("{access} rejected: token {}", t.value),
                format!("it carried {}", token_words(world, t)),
            ),
        };
        let rows = match &e.what {
            What::Read { rows, .. } | What::Write { rows, .. } => rows_text(world, resource, *rows),
            _ => String::new(),
        };
        let mut involved = vec![lanes.client(client), lanes.resource(resource)];
        crate::sorted::sort(&mut involved);
        out.push(Note {
            kind: NoteKind::Rejection,
            from: e.at,
            to: e.at,
            lanes: involved,
            anchor: lanes.resource(resource),
            short,
            text: format!(
                "Fencing: {} rejected {name}'s {access} of {}[{rows}] at {}: {why} The {access} changed nothing.",
                cfg.name,
                cfg.name,
                seconds(e.at),
            ),
            event: i,
        });
    }
}

fn cycle_notes(
    world: &World,
    events: &[Event],
    end: Micros,
    verdict: &Verdict,
    lanes: &LaneIndex,
    out: &mut Vec<Note>,
) {
    let client = |n: &str| world.clients.iter().position(|c| c.name == n);
    let service = |n: &str| world.services.iter().position(|s| s.name == n);
    for c in verdict.wait_cycles.iter().take(NOTES_PER_KIND_MAX) {
        let n = c.clients.len();
        if n == 0 {
            continue;
        }
        let mut involved: Vec<usize> = c
            .clients
            .iter()
            .filter_map(|x| client(x).map(|k| lanes.client(k as u32)))
            .chain(
                c.services
                    .iter()
                    .filter_map(|x| service(x).map(|k| lanes.service(k as u32))),
            )
            .collect();
        crate::sorted::sort(&mut involved);
        involved.dedup();
        // In the monitor's cycle, client k waits for service k, whose holder is client k + 1.
        let waits: Vec<String> = (0..n)
            .map(|k| {
                format!(
                    "{} waits for {}, held by {}",
                    c.clients[k],
                    c.services.get(k).map_or("?", String::as_str),
                    c.clients[(k + 1) % n]
                )
            })
            .collect();
        let ring = if n == 2 {
            format!("{} and {} wait for each other", c.clients[0], c.clients[1])
        } else {
            let mut r = c.clients.join(" → ");
            r.push_str(&format!(" → {}", c.clients[0]));
            r
        };
        let (short, fate) = match (c.broken_us, &c.broken_by) {
            (Some(t), by) => (
                format!("wait cycle {ring}, broken by {}", by.as_deref().unwrap_or("a release")),
                format!(
                    "It was broken at {} by {}, {} after it formed.",
                    seconds(t),
                    by.as_deref().unwrap_or("a release"),
                    seconds(t - c.formed_us)
                ),
            ),
            (None, _) if c.unbreakable => (
                format!("deadlock: {ring}"),
                "Nothing ever breaks it: no client in it gives up waiting and no lock in it has a lease, and no timeout spans both services.".to_string(),
            ),
            (None, _) => (
                format!("wait cycle: {ring}"),
                "It still stood when the run ended.".to_string(),
            ),
        };
        let start = events.partition_point(|e| e.at < c.formed_us);
        let event = events[start..]
            .iter()
            .position(|e| e.at == c.formed_us && matches!(e.what, What::Service { .. }))
            .map_or(start, |k| start + k)
            .min(events.len().saturating_sub(1));
        out.push(Note {
            kind: NoteKind::Cycle,
            from: c.formed_us,
            to: c.broken_us.unwrap_or(end),
            anchor: involved.first().copied().unwrap_or(0),
            lanes: involved,
            short,
            text: format!(
                "A wait-for cycle across {} formed at {}: {}. {fate}",
                c.services.join(" and "),
                seconds(c.formed_us),
                waits.join("; ")
            ),
            event,
        });
    }
}

fn unavailable_notes(
    world: &World,
    events: &[Event],
    end: Micros,
    lanes: &LaneIndex,
    out: &mut Vec<Note>,
) {
    for w in monitor::unavailable_windows(world, end)
        .into_iter()
        .take(NOTES_PER_KIND_MAX)
    {
        let svc = &world.services[w.service as usize];
        let region = &world.regions[w.region as usize];
        let one_region = world.regions.len() <= 1;
        let users: Vec<usize> = world
            .clients
            .iter()
            .enumerate()
            .filter(|(_, c)| c.region == w.region && uses(c, w.service))
            .map(|(k, _)| k)
            .collect();
        let mut classes: Vec<&str> = users
            .iter()
            .map(|k| world.classes[world.clients[*k].class as usize].as_str())
            .collect();
        classes.dedup();
        let reason = if w.outage {
            "it was down (an outage)".to_string()
        } else if let Some(a) = svc.authority.filter(|a| {
            world.outage_until(*a, w.from).is_some()
                || !world.quorum_reachable(*a, w.region, w.from)
        }) {
            format!(
                "its authority {} could not be used, and it grants only with the authority's token",
                world.services[a as usize].name
            )
        } else {
            "a majority of its replicas was out of their reach (a partition)".to_string()
        };
        let mut involved: Vec<usize> = users
            .iter()
            .map(|k| lanes.client(*k as u32))
            .chain(std::iter::once(lanes.service(w.service)))
            .collect();
        crate::sorted::sort(&mut involved);
        let event = events
            .partition_point(|e| e.at < w.from)
            .min(events.len().saturating_sub(1));
        out.push(Note {
            kind: NoteKind::Unavailable,
            from: w.from,
            to: w.to,
            lanes: involved,
            anchor: lanes.service(w.service),
            // A scenario of one region has no regions to speak of: the note names none.
            short: if one_region {
                format!("{} unavailable", svc.name)
            } else {
                format!("{} unavailable to {region}", svc.name)
            },
            text: format!(
                "From {} to {}, {} ({}) could not use {}: {reason}. Their requests to it went unanswered.",
                seconds(w.from),
                seconds(w.to),
                if one_region {
                    "its clients".to_string()
                } else {
                    format!("clients in {region}")
                },
                classes.join(", "),
                svc.name
            ),
            event,
        });
    }
}

fn uses(c: &crate::world::ClientConfig, service: u32) -> bool {
    match &c.protocol {
        crate::world::ProtocolConfig::Locks { services, .. } => services.contains(&service),
        crate::world::ProtocolConfig::TokenChain {
            authority,
            subordinate,
        } => *authority == service || *subordinate == service,
        crate::world::ProtocolConfig::NoLock => false,
    }
}
