//! Recounts from the trace alone.
//!
//! Each figure of the verdict is computed again here from the raw events, by the plainest method
//! that works on small generated runs (often quadratic), and without calling the monitor that
//! computed it. Agreement between two unrelated implementations of one definition is the evidence
//! that the monitor's faster bookkeeping is right.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use lockstep::monitor;
use lockstep::trace::{BeliefEnd, Event, GrantRef, ServiceOp, What};
use lockstep::{Exclusion, Run, Scenario};

use super::gen::{any_scenario, cycle_prone, few_clients};
use super::{config, run};

/// A critical section as the recount sees it: from a client's `BeliefStarted` to its
/// `BeliefEnded`, or to the end of the run.
#[derive(Clone, Debug)]
struct Section {
    client: u32,
    resource: u32,
    rows: u64,
    start: u64,
    end: u64,
    grants: Vec<GrantRef>,
}

/// The critical sections of a trace, in the order they started. A client that started a second
/// section before leaving its first would make "its critical section" ambiguous, so that is a
/// failure rather than something to guess about.
fn sections(events: &[Event], end: u64) -> Result<Vec<Section>, TestCaseError> {
    let mut all: Vec<Section> = Vec::new();
    // The position in `all` of each client's open section.
    let mut open: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        match &e.what {
            What::BeliefStarted {
                client,
                resource,
                rows,
                grants,
            } => {
                prop_assert!(
                    !open.contains_key(client),
                    "event {}: client {} starts a critical section inside another",
                    i,
                    client
                );
                open.insert(*client, all.len());
                all.push(Section {
                    client: *client,
                    resource: *resource,
                    rows: *rows,
                    start: e.at,
                    end,
                    grants: grants.clone(),
                });
            }
            What::LockTransferred {
                client,
                from,
                to,
                token,
            } => {
                if let Some(&k) = open.get(client) {
                    for g in &mut all[k].grants {
                        if g.service == *from {
                            g.service = *to;
                            g.token = *token;
                        }
                    }
                }
            }
            What::BeliefEnded { client, .. } => {
                if let Some(k) = open.remove(client) {
                    all[k].end = e.at;
                }
            }
            _ => {}
        }
    }
    Ok(all)
}

/// The order domains behind a section's grants: a subordinate's is its authority's.
fn roots(world: &lockstep::world::World, grants: &[GrantRef]) -> BTreeSet<u32> {
    grants
        .iter()
        .map(|g| {
            world.services[g.service as usize]
                .authority
                .unwrap_or(g.service)
        })
        .collect()
}

/// One overlap found by comparing every pair of sections.
#[derive(Clone, Debug)]
struct PairOverlap {
    a: usize,
    b: usize,
    from: u64,
    to: u64,
}

/// Every pair of sections of two different clients on common rows of one resource whose
/// intervals share a stretch of positive length.
fn pair_overlaps(sections: &[Section]) -> Vec<PairOverlap> {
    let mut out = Vec::new();
    for (a, x) in sections.iter().enumerate() {
        for (b, y) in sections.iter().enumerate().skip(a + 1) {
            if x.client == y.client || x.resource != y.resource || x.rows & y.rows == 0 {
                continue;
            }
            let from = x.start.max(y.start);
            let to = x.end.min(y.end);
            if from < to {
                out.push(PairOverlap { a, b, from, to });
            }
        }
    }
    out
}

/// An overlap reduced to what both the recount and the monitor can state: the clients (lower
/// index first), the resource, the common rows and the interval.
type OverlapKey = (u32, u32, u32, u64, u64, u64);

fn overlap_key(c: [u32; 2], resource: u32, rows: u64, from: u64, to: u64) -> OverlapKey {
    (c[0].min(c[1]), c[0].max(c[1]), resource, rows, from, to)
}

/// Checks the exclusion figures against the pairwise recount of overlaps.
fn check_overlaps_recount(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let verdict = monitor::verdict(&run);
    let sections = sections(&run.events, run.end)?;
    let pairs = pair_overlaps(&sections);
    let count = pairs.len() as u64;
    prop_assert_eq!(verdict.violation_count, count, "overlaps counted");
    prop_assert_eq!(
        verdict.exclusion == Exclusion::Broken,
        count > 0,
        "exclusion is broken exactly when some sections overlap"
    );

    // The full scan must list exactly the overlaps the recount found, and its bands must
    // account for each of them once.
    let scan = monitor::scan_overlaps(&run.world, &run.events, run.end, usize::MAX);
    prop_assert_eq!(scan.count, count);
    prop_assert_eq!(scan.first.len() as u64, count);
    prop_assert_eq!(scan.bands.iter().map(|b| b.count).sum::<u64>(), count);
    let mut expected: Vec<OverlapKey> = pairs
        .iter()
        .map(|p| {
            let (x, y) = (&sections[p.a], &sections[p.b]);
            overlap_key(
                [x.client, y.client],
                x.resource,
                x.rows & y.rows,
                p.from,
                p.to,
            )
        })
        .collect();
    let mut scanned: Vec<OverlapKey> = scan
        .first
        .iter()
        .map(|o| overlap_key(o.clients, o.resource, o.rows, o.from, o.to))
        .collect();
    expected.sort();
    scanned.sort();
    prop_assert_eq!(
        scanned,
        expected,
        "the scan's overlaps against the recount's"
    );

    // Every violation the verdict details is one of the recounted pairs, down to when each
    // holder started to believe.
    prop_assert_eq!(
        verdict.violations.len() as u64,
        count.min(monitor::VIOLATIONS_DETAILED_MAX as u64)
    );
    let name = |c: u32| run.world.clients[c as usize].name.as_str();
    for v in &verdict.violations {
        let found = pairs.iter().any(|p| {
            let (x, y) = (&sections[p.a], &sections[p.b]);
            let matches = |h: &monitor::Holder, s: &Section| {
                h.client == name(s.client) && h.since_us == s.start
            };
            p.from == v.from_us
                && p.to == v.to_us
                && ((matches(&v.holders[0], x) && matches(&v.holders[1], y))
                    || (matches(&v.holders[0], y) && matches(&v.holders[1], x)))
        });
        prop_assert!(found, "a detailed violation no pair explains: {:?}", v);
    }

    // Incomparable pairs: both sides hold grants, and no order domain is common to both.
    let mut incomparable = 0u64;
    let mut service_pairs: BTreeSet<(u32, u32)> = BTreeSet::new();
    for p in &pairs {
        let (x, y) = (&sections[p.a], &sections[p.b]);
        let (rx, ry) = (roots(&run.world, &x.grants), roots(&run.world, &y.grants));
        if rx.is_empty() || ry.is_empty() || !rx.is_disjoint(&ry) {
            continue;
        }
        incomparable += 1;
        for g in &x.grants {
            for h in &y.grants {
                service_pairs.insert((g.service.min(h.service), g.service.max(h.service)));
            }
        }
    }
    prop_assert_eq!(
        verdict.incomparable_pairs,
        incomparable,
        "incomparable pairs"
    );
    let service = |s: u32| run.world.services[s as usize].name.clone();
    let named_pairs: Vec<[String; 2]> = service_pairs
        .into_iter()
        .map(|(a, b)| [service(a), service(b)])
        .collect();
    prop_assert_eq!(&verdict.overlapping_service_pairs, &named_pairs);
    Ok(())
}

/// Checks that both clients of every overlap believe they hold the lock, in a snapshot taken at
/// the instant the overlap begins. Beliefs still open at the end of the run are cut there in the
/// verdict, so only overlaps that begin before the end are checked.
fn check_overlaps_in_snapshots(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let sections = sections(&run.events, run.end)?;
    let mut by_instant: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
    for p in pair_overlaps(&sections) {
        if p.from < run.end {
            let clients = by_instant.entry(p.from).or_default();
            clients.insert(sections[p.a].client);
            clients.insert(sections[p.b].client);
        }
    }
    // One snapshot per instant serves every overlap that begins then.
    for (at, clients) in by_instant {
        let snap = monitor::snapshot(&run.world, &run.events, at);
        for c in clients {
            let name = &run.world.clients[c as usize].name;
            prop_assert!(
                snap.believers.iter().any(|b| &b.client == name),
                "at t={}us {} is in an overlap but not among the believers {:?}",
                at,
                name,
                snap.believers
            );
        }
    }
    Ok(())
}

/// Whether a client is in its critical section just before event `before`: the last of its
/// `BeliefStarted` and `BeliefEnded` events before that index is a start.
fn inside_before(events: &[Event], client: u32, before: usize) -> bool {
    for e in events[..before].iter().rev() {
        match &e.what {
            What::BeliefStarted { client: c, .. } if *c == client => return true,
            What::BeliefEnded { client: c, .. } if *c == client => return false,
            _ => {}
        }
    }
    false
}

/// The accepted read that opened `client`'s read-modify-write window, if that window is still
/// open just before event `before`. Walking back through the client's own events: a write or a
/// `BeliefEnded` closes any window, and the latest accepted read taken inside the critical
/// section opens one. A read taken outside it opens nothing, and an earlier window cannot
/// survive it, because the client left its section in between.
fn open_window(events: &[Event], mine: &[usize], client: u32, before: usize) -> Option<usize> {
    let upto = mine.partition_point(|i| *i < before);
    for &i in mine[..upto].iter().rev() {
        match &events[i].what {
            What::Write { .. } | What::BeliefEnded { .. } => return None,
            What::Read { accepted: true, .. } if inside_before(events, client, i) => {
                return Some(i)
            }
            _ => {}
        }
    }
    None
}

/// The client an event is about, for the events the data recount reads.
fn subject(what: &What) -> Option<u32> {
    match what {
        What::Read { client, .. }
        | What::Write { client, .. }
        | What::BeliefStarted { client, .. }
        | What::BeliefEnded { client, .. } => Some(*client),
        _ => None,
    }
}

/// Checks the access counts, the interleaved writes and the operation counts.
fn check_access_recount(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let verdict = monitor::verdict(&run);
    let events = &run.events;

    let mut accepted = 0u64;
    let mut rejected_writes = 0u64;
    let mut rejected_reads = 0u64;
    for e in events {
        match &e.what {
            What::Write { accepted: true, .. } => accepted += 1,
            What::Write {
                accepted: false, ..
            } => rejected_writes += 1,
            What::Read {
                accepted: false, ..
            } => rejected_reads += 1,
            _ => {}
        }
    }
    prop_assert_eq!(verdict.accepted_writes, accepted);
    prop_assert_eq!(verdict.rejected_writes, rejected_writes);
    prop_assert_eq!(verdict.rejected_reads, rejected_reads);

    // Each client's own reads, writes and section edges, in trace order.
    let mut mine: Vec<Vec<usize>> = vec![Vec::new(); run.world.clients.len()];
    for (i, e) in events.iter().enumerate() {
        if let Some(c) = subject(&e.what) {
            mine[c as usize].push(i);
        }
    }
    let mut interleaved = 0u64;
    for (w, e) in events.iter().enumerate() {
        let What::Write {
            client,
            resource,
            rows,
            accepted: true,
            ..
        } = &e.what
        else {
            continue;
        };
        let witness = (0..run.world.clients.len() as u32)
            .filter(|c| c != client)
            .find_map(|c| {
                open_window(events, &mine[c as usize], c, w).filter(|r| {
                    matches!(&events[*r].what,
                        What::Read { resource: rr, rows: rs, .. }
                            if rr == resource && rs & rows != 0)
                })
            });
        let Some(r) = witness else { continue };
        interleaved += 1;
        // The witness, checked directly against the raw events between the read and the
        // write: another client's accepted read of a common row, taken inside its critical
        // section, followed by neither a write nor a let-go of that client.
        let What::Read {
            client: reader,
            resource: rr,
            rows: rs,
            accepted: true,
            ..
        } = &events[r].what
        else {
            return Err(TestCaseError::fail(
                "a window opened by something not a read",
            ));
        };
        prop_assert!(r < w && reader != client && rr == resource && rs & rows != 0);
        prop_assert!(inside_before(events, *reader, r));
        let closed = events[r + 1..w].iter().any(|x| {
            matches!(&x.what,
                What::Write { client: c, .. } | What::BeliefEnded { client: c, .. }
                    if c == reader)
        });
        prop_assert!(
            !closed,
            "the window of event {} closed before write {}",
            r,
            w
        );
    }
    prop_assert_eq!(
        verdict.interleaved_writes,
        interleaved,
        "interleaved writes"
    );

    // Each class's completed operations, recounted by the names the trace's clients carry:
    // an instance is its class's name, or the class's name, a dash and a number.
    for w in &verdict.class_work {
        let mine = events
            .iter()
            .filter(|e| match &e.what {
                What::Write {
                    client,
                    accepted: true,
                    ..
                } => {
                    let name = &run.world.clients[*client as usize].name;
                    name == &w.class
                        || name
                            .strip_prefix(w.class.as_str())
                            .and_then(|r| r.strip_prefix('-'))
                            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
                }
                _ => false,
            })
            .count() as u64;
        prop_assert_eq!(w.completed, mine, "class {}", w.class);
    }
    prop_assert_eq!(
        verdict.class_work.len(),
        s.clients.len(),
        "one entry per class"
    );
    // The sections each class entered and the time it waited for them, walking the trace.
    let mut started = vec![0u64; run.world.clients.len()];
    let mut per_class: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for e in events {
        match &e.what {
            What::OpStarted { client, .. } => started[*client as usize] = e.at,
            What::BeliefStarted { client, .. } => {
                let c = &run.world.clients[*client as usize];
                let class = run.world.classes[c.class as usize].clone();
                let entry = per_class.entry(class).or_default();
                entry.0 += 1;
                entry.1 += e.at - started[*client as usize];
            }
            _ => {}
        }
    }
    for w in &verdict.class_work {
        let (sections, waited) = per_class.get(&w.class).copied().unwrap_or_default();
        prop_assert_eq!(
            (w.sections, w.waited_us),
            (sections, waited),
            "class {}",
            w.class
        );
    }
    prop_assert_eq!(
        verdict.class_work.iter().map(|w| w.completed).sum::<u64>(),
        accepted
    );

    let ops = &verdict.operations;
    let count = |f: &dyn Fn(&What) -> bool| events.iter().filter(|e| f(&e.what)).count() as u64;
    prop_assert_eq!(ops.started, count(&|w| matches!(w, What::OpStarted { .. })));
    prop_assert_eq!(ops.completed, accepted);
    prop_assert_eq!(ops.gave_up, count(&|w| matches!(w, What::GaveUp { .. })));
    prop_assert_eq!(
        ops.abandoned,
        count(&|w| matches!(
            w,
            What::BeliefEnded {
                reason: BeliefEnd::LeaseExpiredLocally,
                ..
            }
        ))
    );
    prop_assert_eq!(
        ops.rejected,
        count(&|w| matches!(
            w,
            What::BeliefEnded {
                reason: BeliefEnd::Rejected,
                ..
            }
        ))
    );

    for log in monitor::check_service_logs(&run.world, events) {
        prop_assert!(log.consistent, "{}: {:?}", log.service, log.problems);
    }
    Ok(())
}

/// One accepted write as one row saw it.
#[derive(Clone, Debug)]
struct RowWrite {
    /// Its index in the trace.
    event: usize,
    /// How many accepted writes the row had had when its client read it: the position (1-based,
    /// 0 for the initial value) of the write it read from.
    basis: usize,
    /// The value it wrote to the row.
    value: i64,
}

/// Each row's accepted writes, with what each read from, keyed by (resource, row).
fn row_writes(
    world: &lockstep::world::World,
    events: &[Event],
) -> BTreeMap<(u32, u32), Vec<RowWrite>> {
    let mut out: BTreeMap<(u32, u32), Vec<RowWrite>> = BTreeMap::new();
    for (r, cfg) in world.resources.iter().enumerate() {
        for row in 0..cfg.rows.len() {
            out.insert((r as u32, row as u32), Vec::new());
        }
    }
    // Accepted writes on a row before an event: a plain count over the trace so far.
    let writes_before = |resource: u32, row: u32, before: usize| {
        events[..before]
            .iter()
            .filter(|e| {
                matches!(&e.what, What::Write { resource: r, rows, accepted: true, .. }
                    if *r == resource && rows & (1u64 << row) != 0)
            })
            .count()
    };
    for (w, e) in events.iter().enumerate() {
        let What::Write {
            client,
            resource,
            rows,
            accepted: true,
            values,
            ..
        } = &e.what
        else {
            continue;
        };
        let latest_read = events[..w].iter().rposition(
            |x| matches!(&x.what, What::Read { client: c, accepted: true, .. } if c == client),
        );
        let bits = (0..64u32).filter(|k| rows & (1u64 << k) != 0);
        for (k, row) in bits.enumerate() {
            // A write without a read of its row is taken to have read the latest value.
            let basis = match latest_read.map(|i| (i, &events[i].what)) {
                Some((
                    i,
                    What::Read {
                        resource: r,
                        rows: rs,
                        ..
                    },
                )) if r == resource && rs & (1u64 << row) != 0 => writes_before(*resource, row, i),
                _ => writes_before(*resource, row, w),
            };
            out.get_mut(&(*resource, row))
                .expect("a row of the world")
                .push(RowWrite {
                    event: w,
                    basis,
                    value: values[k],
                });
        }
    }
    out
}

/// Checks the lost-update total, its marks and its attribution against a recount by read-from
/// chains, and checks that the values in the trace agree with that read-from model.
fn check_lost_updates_recount(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let world = &run.world;
    let verdict = monitor::verdict(&run);
    let all = row_writes(world, &run.events);

    let mut total = 0u64;
    let mut shortfall = 0i64;
    let mut marks: BTreeMap<usize, u32> = BTreeMap::new();
    // (eraser, lost write, resource, row), the order the monitor lists them in.
    let mut attributed: Vec<(usize, usize, u32, u32)> = Vec::new();
    for ((r, row), writes) in &all {
        let initial = world.resources[*r as usize].initial;
        // The value the row ends with: its accepted writes replayed in order.
        let last = writes.last().map_or(initial, |w| w.value);
        shortfall += writes.len() as i64 - (last - initial);

        // The chain of a position: itself and, transitively, the writes it read from. The
        // length of that chain is how many increments its value should carry.
        let mut chain_len = vec![0usize; writes.len() + 1];
        for (p, w) in writes.iter().enumerate() {
            prop_assert!(w.basis <= p, "a write read from a later write: {:?}", w);
            chain_len[p + 1] = chain_len[w.basis] + 1;
            prop_assert_eq!(
                w.value,
                initial + chain_len[p + 1] as i64,
                "write at event {} on {}[{}] against its read-from chain",
                w.event,
                r,
                row
            );
        }

        let mut on_chain = vec![false; writes.len() + 1];
        let mut p = writes.len();
        while p > 0 {
            on_chain[p] = true;
            p = writes[p - 1].basis;
        }
        for x in 1..=writes.len() {
            if on_chain[x] {
                continue;
            }
            total += 1;
            let erasers: Vec<usize> = (1..=writes.len())
                .filter(|y| on_chain[*y] && writes[y - 1].basis < x && x < *y)
                .collect();
            prop_assert_eq!(erasers.len(), 1, "erasers of a lost write: {:?}", erasers);
            let by = writes[erasers[0] - 1].event;
            *marks.entry(by).or_default() += 1;
            attributed.push((by, writes[x - 1].event, *r, *row));
        }
    }
    prop_assert_eq!(verdict.lost_updates, total, "lost updates");
    prop_assert_eq!(
        total as i64,
        shortfall,
        "lost updates against the rows' shortfall"
    );

    let lost = monitor::lost_updates(world, &run.events, usize::MAX);
    prop_assert_eq!(lost.total, total);
    let marks: Vec<(usize, u32)> = marks.into_iter().collect();
    prop_assert_eq!(&lost.marks, &marks, "marks");
    attributed.sort();
    let mut details: Vec<(usize, usize, u32, u32)> = lost
        .details
        .iter()
        .map(|d| (d.by, d.lost, d.resource, d.row))
        .collect();
    details.sort();
    prop_assert_eq!(details, attributed.clone(), "attribution");

    // The verdict's details name the first of those in words.
    let who = |i: usize| match &run.events[i].what {
        What::Write { client, .. } => world.clients[*client as usize].name.clone(),
        _ => String::new(),
    };
    prop_assert_eq!(
        verdict.lost_update_details.len(),
        attributed.len().min(monitor::VIOLATIONS_DETAILED_MAX)
    );
    for (d, (by, x, r, row)) in verdict.lost_update_details.iter().zip(&attributed) {
        let cfg = &world.resources[*r as usize];
        prop_assert_eq!(&d.resource, &cfg.name);
        prop_assert_eq!(&d.row, &cfg.rows[*row as usize]);
        prop_assert_eq!(&d.lost_writer, &who(*x));
        prop_assert_eq!(d.lost_at_us, run.events[*x].at);
        prop_assert_eq!(&d.overwritten_by, &who(*by));
        prop_assert_eq!(d.overwritten_at_us, run.events[*by].at);
    }
    Ok(())
}

/// The largest set of sections open at some section's start that share a row and hold grants
/// from pairwise disjoint order domains, by trying every subset.
fn check_max_holders_brute_force(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let verdict = monitor::verdict(&run);
    let sections = sections(&run.events, run.end)?;
    let domains: Vec<BTreeSet<u32>> = sections
        .iter()
        .map(|x| roots(&run.world, &x.grants))
        .collect();
    let mut best = u32::from(sections.iter().any(|x| !x.grants.is_empty()));
    let starts: BTreeSet<u64> = sections.iter().map(|x| x.start).collect();
    for t in starts {
        for (r, cfg) in run.world.resources.iter().enumerate() {
            for row in 0..cfg.rows.len() {
                let members: Vec<usize> = (0..sections.len())
                    .filter(|k| {
                        let x = &sections[*k];
                        x.resource == r as u32
                            && x.rows & (1u64 << row) != 0
                            && x.start <= t
                            && t < x.end
                            && !domains[*k].is_empty()
                    })
                    .collect();
                prop_assert!(members.len() <= 6, "more sections open than clients");
                for subset in 1u32..(1 << members.len()) {
                    let chosen: Vec<usize> = (0..members.len())
                        .filter(|i| subset & (1 << i) != 0)
                        .map(|i| members[i])
                        .collect();
                    let unrelated = chosen.iter().enumerate().all(|(i, a)| {
                        chosen[i + 1..]
                            .iter()
                            .all(|b| domains[*a].is_disjoint(&domains[*b]))
                    });
                    if unrelated {
                        best = best.max(chosen.len() as u32);
                    }
                }
            }
        }
    }
    prop_assert_eq!(
        verdict.max_simultaneous_holders,
        best,
        "most unrelated holders"
    );
    Ok(())
}

/// A wait-for loop as the verdict lists it: (client, service it waits in for the next client),
/// turned to start at its least pair, so that the same loop compares equal however it was found.
type Loop = Vec<(String, String)>;

fn normalized(mut pairs: Loop) -> Loop {
    if let Some(least) = (0..pairs.len()).min_by_key(|i| pairs[*i].clone()) {
        pairs.rotate_left(least);
    }
    pairs
}

/// Every loop of waits among one resource's locks, found by brute force: a lock leads to another
/// when its holder waits for that one, held by someone else. Each loop is listed once, from its
/// least lock.
fn loops_of(
    world: &lockstep::world::World,
    resource: u32,
    holder: &BTreeMap<(u32, u32), u32>,
    waits: &BTreeSet<(u32, (u32, u32))>,
) -> BTreeSet<Loop> {
    let locks: Vec<u32> = holder
        .keys()
        .filter(|k| k.1 == resource)
        .map(|k| k.0)
        .collect();
    let next = |a: u32| -> Vec<u32> {
        let h = holder[&(a, resource)];
        locks
            .iter()
            .copied()
            .filter(|b| holder[&(*b, resource)] != h && waits.contains(&(h, (*b, resource))))
            .collect()
    };
    let mut found = BTreeSet::new();
    for &start in &locks {
        // Paths of distinct locks above `start`, back to `start`.
        let mut stack: Vec<Vec<u32>> = vec![vec![start]];
        while let Some(path) = stack.pop() {
            for b in next(*path.last().expect("never empty")) {
                if b == start {
                    let pairs = path
                        .iter()
                        .enumerate()
                        .map(|(i, lock)| {
                            let waits_in = path[(i + 1) % path.len()];
                            (
                                world.clients[holder[&(*lock, resource)] as usize]
                                    .name
                                    .clone(),
                                world.services[waits_in as usize].name.clone(),
                            )
                        })
                        .collect();
                    found.insert(normalized(pairs));
                } else if b > start && !path.contains(&b) {
                    let mut longer = path.clone();
                    longer.push(b);
                    stack.push(longer);
                }
            }
        }
    }
    found
}

/// Wait-for cycles recounted from the services' log lines alone: the waits and holds they
/// record are replayed, every loop among each resource's locks is listed after each line, and
/// each loop's life (from the line that closed it to the line that opened it) is one cycle.
///
/// Every cycle the verdict details must be one of those lives, with the same times. Where no
/// resource ever had two loops at once (always so with at most two services on a resource), the
/// verdict's count and list must be exactly those lives, in the order they ended.
fn check_wait_cycles_recount(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let world = &run.world;
    let verdict = monitor::verdict(&run);
    let mut holder: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut waits: BTreeSet<(u32, (u32, u32))> = BTreeSet::new();
    let mut standing: Vec<BTreeMap<Loop, u64>> = vec![BTreeMap::new(); world.resources.len()];
    // (loop, formed, broken, resource), in the order the lives ended.
    let mut lives: Vec<(Loop, u64, Option<u64>, u32)> = Vec::new();
    let mut side_by_side = false;
    for e in &run.events {
        let What::Service {
            service,
            resource,
            op,
            ..
        } = &e.what
        else {
            continue;
        };
        let key = (*service, *resource);
        let let_go = |holder: &mut BTreeMap<(u32, u32), u32>, client: u32| {
            if holder.get(&key) == Some(&client) {
                holder.remove(&key);
            }
        };
        match *op {
            ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                holder.insert(key, client);
                waits.remove(&(client, key));
            }
            ServiceOp::Queued { client, .. } => {
                waits.insert((client, key));
            }
            ServiceOp::Released { client, .. }
            | ServiceOp::Expired { client, .. }
            | ServiceOp::Superseded { client, .. }
            | ServiceOp::MovedOut {
                client, held: true, ..
            }
            | ServiceOp::Forgotten {
                client,
                token: Some(_),
            } => let_go(&mut holder, client),
            ServiceOp::Cancelled { client }
            | ServiceOp::Refused { client, .. }
            | ServiceOp::MovedOut {
                client,
                held: false,
                ..
            }
            | ServiceOp::Forgotten {
                client,
                token: None,
            } => {
                waits.remove(&(client, key));
            }
            ServiceOp::ReleaseIgnored { .. } | ServiceOp::Drained { .. } => {}
        }
        let now = loops_of(world, *resource, &holder, &waits);
        side_by_side |= now.len() > 1;
        let before = std::mem::take(&mut standing[*resource as usize]);
        for (l, formed) in before {
            if now.contains(&l) {
                standing[*resource as usize].insert(l, formed);
            } else {
                lives.push((l, formed, Some(e.at), *resource));
            }
        }
        for l in now {
            standing[*resource as usize].entry(l).or_insert(e.at);
        }
    }
    let mut left: Vec<(Loop, u64, Option<u64>, u32)> = standing
        .into_iter()
        .enumerate()
        .flat_map(|(r, m)| m.into_iter().map(move |(l, f)| (l, f, None, r as u32)))
        .collect();
    left.sort_by_key(|(_, formed, _, r)| (*formed, *r));
    lives.extend(left);

    let reported: Vec<(Loop, u64, Option<u64>)> = verdict
        .wait_cycles
        .iter()
        .map(|c| {
            let pairs = c
                .clients
                .iter()
                .cloned()
                .zip(c.services.iter().cloned())
                .collect();
            (normalized(pairs), c.formed_us, c.broken_us)
        })
        .collect();
    let all: BTreeSet<(Loop, u64, Option<u64>)> = lives
        .iter()
        .map(|(l, f, b, _)| (l.clone(), *f, *b))
        .collect();
    for cycle in &reported {
        prop_assert!(
            all.contains(cycle),
            "the verdict's cycle {cycle:?} is not a loop of the services' logs with those times; \
             the loops were {lives:?}"
        );
    }
    if !side_by_side {
        prop_assert_eq!(verdict.wait_cycle_count, lives.len() as u64);
        if lives.len() <= 100 {
            let expected: Vec<(Loop, u64, Option<u64>)> =
                lives.into_iter().map(|(l, f, b, _)| (l, f, b)).collect();
            prop_assert_eq!(reported, expected);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(64))]

    /// The overlap count, the scan's overlaps and bands, the detailed violations, and the
    /// incomparable pairs with their services all agree with a comparison of every pair of
    /// critical sections.
    #[test]
    fn overlaps_recount_from_the_trace(case in any_scenario()) {
        check_overlaps_recount(&case.0)?;
    }

    /// Both clients of every overlap are believers in a snapshot at the overlap's start.
    #[test]
    fn overlapping_clients_are_believers_in_snapshots(case in any_scenario()) {
        check_overlaps_in_snapshots(&case.0)?;
    }

    /// Accepted and rejected accesses, interleaved writes (each with the window it landed in)
    /// and operations agree with plain counts over the trace, and every service log is
    /// consistent.
    #[test]
    fn accesses_and_operations_recount_from_the_trace(case in any_scenario()) {
        check_access_recount(&case.0)?;
    }

    /// Lost updates, their marks and their attribution agree with a recount by read-from
    /// chains, and every written value is its chain's length above the initial value.
    #[test]
    fn lost_updates_recount_from_read_from_chains(case in any_scenario()) {
        check_lost_updates_recount(&case.0)?;
    }

    /// The most unrelated simultaneous holders agree with a brute-force search.
    #[test]
    fn max_simultaneous_holders_recount_by_brute_force(case in few_clients()) {
        check_max_holders_brute_force(&case.0)?;
    }

    /// Wait-for cycles agree with every loop of waits replayed from the services' logs.
    #[test]
    fn wait_cycles_recount_from_the_service_logs(case in any_scenario()) {
        check_wait_cycles_recount(&case.0)?;
    }

    /// The same, where every client locks every service at once and loops are common.
    #[test]
    fn wait_cycles_recount_where_every_client_locks_every_service(case in cycle_prone()) {
        check_wait_cycles_recount(&case.0)?;
    }
}

/// Each resource's idle time while waited for, counted the plain way: walk the trace and, each
/// time the clock moves, add the step to every resource that some client waits for (from its
/// operation's start to its critical section or giving up) and no client works on.
fn idle_recount(run: &Run) -> Vec<u64> {
    let world = &run.world;
    let n = world.resources.len();
    let (mut waiting, mut busy) = (vec![0u32; n], vec![0u32; n]);
    let mut client_waiting = vec![false; world.clients.len()];
    let mut client_busy = vec![false; world.clients.len()];
    let mut idle = vec![0u64; n];
    let mut last = 0;
    let mut advance = |to: u64, waiting: &[u32], busy: &[u32], last: &mut u64| {
        for r in 0..n {
            if waiting[r] > 0 && busy[r] == 0 {
                idle[r] += to.saturating_sub(*last);
            }
        }
        *last = (*last).max(to);
    };
    for e in &run.events {
        advance(e.at, &waiting, &busy, &mut last);
        let resource_of = |c: u32| world.clients[c as usize].resource as usize;
        match &e.what {
            What::OpStarted { client, .. } if !client_waiting[*client as usize] => {
                client_waiting[*client as usize] = true;
                waiting[resource_of(*client)] += 1;
            }
            What::BeliefStarted { client, .. } => {
                if std::mem::take(&mut client_waiting[*client as usize]) {
                    waiting[resource_of(*client)] -= 1;
                }
                if !std::mem::replace(&mut client_busy[*client as usize], true) {
                    busy[resource_of(*client)] += 1;
                }
            }
            What::GaveUp { client } if client_waiting[*client as usize] => {
                client_waiting[*client as usize] = false;
                waiting[resource_of(*client)] -= 1;
            }
            What::BeliefEnded { client, .. } if client_busy[*client as usize] => {
                client_busy[*client as usize] = false;
                busy[resource_of(*client)] -= 1;
            }
            _ => {}
        }
    }
    advance(run.end, &waiting, &busy, &mut last);
    idle
}

proptest! {
    #![proptest_config(config(256))]

    /// The verdict adds up a resource's idle time only when a stretch of it ends; the figure is
    /// the one a reader gets by walking the trace and counting every step of the clock.
    #[test]
    fn idle_time_recounts_from_the_trace(case in any_scenario()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        let reported: Vec<u64> =
            verdict.resources.iter().map(|r| r.idle_while_waiting_us).collect();
        prop_assert_eq!(reported, idle_recount(&run), "idle time reported vs. recounted");
    }
}
