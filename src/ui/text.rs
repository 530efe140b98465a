//! The words the page uses for engine data: verdict counts, the playhead sentence, an event's
//! details. Each is a direct reading of a verdict, snapshot or event; none adds a judgement.

use crate::monitor::{Exclusion, Integrity, Snapshot, Verdict};
use crate::trace::{seconds, Event};
use crate::ui::compare::Diff;
use crate::world::{Micros, World};

/// One count under the verdict: a stable key (for styling and tests), its words and number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub key: &'static str,
    pub label: &'static str,
    pub value: String,
    /// True when the count is a sign of trouble (non-zero lost updates, a deadlock...).
    pub bad: bool,
    /// What the figure counts.
    pub explain: &'static str,
    /// Where this run's figure would surprise, why it is what it is.
    pub why: Option<String>,
}

/// The counts a learner checks after the headline.
pub fn counts(v: &Verdict) -> Vec<Count> {
    let idle: Micros = v.resources.iter().map(|r| r.idle_while_waiting_us).sum();
    let unavailable: Micros = v.unavailability.iter().map(|u| u.unavailable_us).sum();
    vec![
        Count {
            key: "violations",
            label: "Overlapping holds",
            value: v.violation_count.to_string(),
            bad: v.violation_count > 0,
            explain: "Pairs of clients whose believed holds on the same rows overlapped in time, each pair and stretch counted once. It counts beliefs, not damage.",
            why: overlaps_explained(v),
        },
        Count {
            key: "incomparable-pairs",
            label: "Incomparable grant pairs",
            value: v.incomparable_pairs.to_string(),
            bad: v.incomparable_pairs > 0,
            explain: "Overlaps in which the two clients held grants from services that share no order: no comparison of tokens could say which grant is newer.",
            why: None,
        },
        Count {
            key: "lost-updates",
            label: "Lost updates",
            value: v.lost_updates.to_string(),
            bad: v.lost_updates > 0,
            explain: "Increments missing from the final values: every accepted write adds one to each row it touches, so a row that ends lower than its accepted writes lost that many. Each is attributed on the timeline to the write that overwrote it.",
            why: None,
        },
        Count {
            key: "interleaved-writes",
            label: "Writes inside another's critical section",
            value: v.interleaved_writes.to_string(),
            bad: v.interleaved_writes > 0,
            explain: "Accepted writes that landed while another client believed it held the same rows. Such a write is lost only if the other client then writes a value computed from a read taken before it.",
            why: interleaved_explained(v),
        },
        Count {
            key: "rejected-writes",
            label: "Writes rejected by fencing",
            value: v.rejected_writes.to_string(),
            bad: false,
            explain: "Writes the resource refused because their token was missing, came from a service it does not count, or was lower than one it had already accepted. A rejected write changes nothing.",
            why: None,
        },
        Count {
            key: "rejected-reads",
            label: "Reads rejected by fencing",
            value: v.rejected_reads.to_string(),
            bad: false,
            explain: "Reads refused the same way, when fencing checks every access: the client cannot go on with a value it should not have read.",
            why: None,
        },
        Count {
            key: "idle-ms",
            label: "Resource idle while clients waited (ms)",
            value: format!("{}", idle / 1_000),
            bad: false,
            explain: "Time in which no one was in a critical section on the resource while some client waited for its locks.",
            why: None,
        },
        Count {
            key: "unavailable-ms",
            label: "Service unavailable to some region (ms, summed)",
            value: format!("{}", unavailable / 1_000),
            bad: false,
            explain: "For each service and each region whose clients use it, the time that region could not use it (the service was down, or a majority of its replicas was out of reach), summed over services and regions.",
            why: None,
        },
        Count {
            key: "deadlock",
            label: "Deadlock across services",
            value: if v.deadlock {
                "yes".to_string()
            } else if v.wait_cycle_count == 0 {
                "no".to_string()
            } else {
                // Every cycle is counted; the list keeps the first ones and those still standing.
                let standing = v
                    .wait_cycles
                    .iter()
                    .filter(|c| c.broken_us.is_none())
                    .count() as u64;
                let broken = v.wait_cycle_count.saturating_sub(standing);
                match (broken, standing) {
                    (b, 0) => format!("no ({b} cycle(s) broken)"),
                    (0, s) => format!("no ({s} cycle(s) standing, breakable)"),
                    (b, s) => format!("no ({b} cycle(s) broken, {s} standing, breakable)"),
                }
            },
            bad: v.deadlock,
            explain: "Yes when a wait-for cycle across services formed that nothing can break: no client in it times out and no lock in it has a lease. Cycles that a timeout or an expiry broke are counted beside it, and so are cycles still standing at the end that something could still break.",
            why: None,
        },
        Count {
            key: "integrity",
            label: "Integrity",
            value: match v.integrity {
                crate::monitor::Integrity::Intact => "intact".to_string(),
                crate::monitor::Integrity::Corrupted => "corrupted".to_string(),
            },
            bad: v.integrity == crate::monitor::Integrity::Corrupted,
            explain: "Intact when no update was lost. It is about the data, apart from exclusion, which is about beliefs.",
            why: None,
        },
    ]
}

/// What "overlapping holds" counts, and why fencing can raise it while the data stays intact.
fn overlaps_explained(v: &Verdict) -> Option<String> {
    (v.operations.rejected > 0 && v.violation_count > 0).then(|| format!(
        "Fencing rejected {} operation(s) here; a rejected client lets go and starts again ({} operations started in all), so there are more, shorter beliefs to overlap. Fencing guards the data, not beliefs: the overlaps can rise while no update is lost.",
        v.operations.rejected, v.operations.started
    ))
}

/// What "writes inside another's critical section" counts, and why it can exceed the lost
/// updates.
fn interleaved_explained(v: &Verdict) -> Option<String> {
    (v.interleaved_writes > v.lost_updates).then(|| {
        format!(
            "{} of the {} writes inside another's critical section were not lost: the other client read after them{}.",
            v.interleaved_writes - v.lost_updates,
            v.interleaved_writes,
            if v.rejected_writes + v.rejected_reads > 0 {
                ", never wrote, or had its own access rejected by fencing"
            } else {
                " or never wrote"
            }
        )
    })
}

/// What a defect of the inventory means for this run: the rule is about the data, not about
/// one run, so a run that holds is lucky, and the page says why it was.
pub fn defect_in_this_run(
    s: &crate::scenario::Scenario,
    resource: &str,
    overlaps: u64,
    lost: u64,
    writes: u64,
) -> String {
    if overlaps > 0 || lost > 0 {
        return format!(
            "In this run the defect shows: {overlaps} overlapping hold(s) and {lost} lost update(s) on {resource}."
        );
    }
    use crate::scenario::Protocol;
    let users: Vec<&crate::scenario::ClientClass> = s
        .clients
        .iter()
        .filter(|c| c.resource == resource)
        .collect();
    let ordered =
        |c: &&crate::scenario::ClientClass| matches!(c.protocol, Protocol::AllOrdered { .. });
    let all = |c: &&crate::scenario::ClientClass| {
        matches!(
            c.protocol,
            Protocol::AllOrdered { .. } | Protocol::AllUnordered { .. }
        )
    };
    // The services a class cannot work without holding: every one it asks, unless it may skip
    // one that does not answer; none for a majority, where no one service is needed.
    let needs = |c: &crate::scenario::ClientClass| -> Vec<String> {
        match &c.protocol {
            Protocol::Single { service } => vec![service.clone()],
            Protocol::TokenChain {
                authority,
                subordinate,
            } => vec![authority.clone(), subordinate.clone()],
            Protocol::AllOrdered {
                services,
                skip_unreachable: false,
            }
            | Protocol::AllUnordered {
                services,
                skip_unreachable: false,
            } => services.clone(),
            _ => Vec::new(),
        }
    };
    // A service every client of a set of classes must hold: where they all meet.
    let meet = |classes: &[&crate::scenario::ClientClass]| -> Option<String> {
        let first = needs(classes.first()?);
        first
            .into_iter()
            .find(|s| classes.iter().all(|c| needs(c).contains(s)))
    };
    let all_rows: Vec<String> = s
        .resources
        .iter()
        .find(|r| r.name == resource)
        .map(|r| r.rows.clone())
        .unwrap_or_default();
    let writes_row =
        |c: &&crate::scenario::ClientClass, row: &String| c.rows.is_empty() || c.rows.contains(row);
    // Each row's writers meet at a service of that row (not all rows at the same one).
    let rows_meet = !users.is_empty()
        && all_rows.iter().all(|row| {
            let writers: Vec<&crate::scenario::ClientClass> = users
                .iter()
                .copied()
                .filter(|c| writes_row(c, row))
                .collect();
            writers.is_empty() || meet(&writers).is_some()
        });
    let common = meet(&users);
    let why = if writes == 0 {
        "only because nothing was written to it: no client got that far. The rule is still broken: once clients write, nothing orders them all".to_string()
    } else if !users.is_empty() && users.iter().all(ordered) {
        "every client of it locks in all its services in the same order, so any two meet at the first service. The rule is still broken: a client that locks in only one of those services would overlap with them".to_string()
    } else if let Some(service) = common {
        format!("every client that writes it must hold the lock of {service}, so any two meet there. The rule is still broken: it has more than one source of order, and a client that asked only another of them would not meet these")
    } else if rows_meet {
        "the clients that write each row all hold one service's lock for that row, so any two writers of a row meet there. The rule is still broken: that safety rests on each client's habits, not on one source of order, and a client that changed its habit would not meet the others".to_string()
    } else if !users.is_empty() && users.iter().all(all) {
        "every client of it locks in all its services, so any two meet at one of them. The rule is still broken: a client that locks in only one would overlap with them, and two that take the services in opposite orders can deadlock".to_string()
    } else {
        "no two of its clients happened to hold it at once with this seed and these timings. The rule is still broken: with another seed or a slower client, two of them can hold it at once".to_string()
    };
    format!("This run was clean on {resource}, with nothing lost: {why}.")
}

/// The sentence beside the playhead: when it is, how far through the run, and who believes
/// they hold what at that moment.
pub fn playhead(s: &Snapshot, time: Micros, cursor: usize, total: usize) -> String {
    let head = format!("At t={} (event {} of {}): ", seconds(time), cursor, total);
    let body = match s.exclusion {
        Exclusion::Broken => {
            let pairs: Vec<String> = s
                .conflicts
                .iter()
                .map(|[a, b]| format!("{a} and {b}"))
                .collect();
            let rows = s
                .believers
                .iter()
                .find(|b| s.conflicts.iter().any(|c| c[0] == b.client))
                .map(|b| format!(" {}[{}]", b.resource, b.rows.join(",")))
                .unwrap_or_default();
            format!(
                "Exclusion broken: {} both believe they hold{} now.",
                pairs.join("; "),
                rows
            )
        }
        Exclusion::Holds => {
            if s.believers.is_empty() {
                "Exclusion holds: nobody believes they hold a lock.".to_string()
            } else {
                let who: Vec<String> = s
                    .believers
                    .iter()
                    .map(|b| format!("{} holds {}[{}]", b.client, b.resource, b.rows.join(",")))
                    .collect();
                format!("Exclusion holds: {}.", who.join("; "))
            }
        }
    };
    head + &body
}

/// The details of one event: its time and what happened.
pub fn event_details(world: &World, events: &[Event], index: usize) -> Option<String> {
    let e = events.get(index)?;
    Some(format!(
        "Event {} at t={}: {}",
        index + 1,
        seconds(e.at),
        e.describe(world)
    ))
}

/// What flipping one toggle changed, line by line: each verdict figure as "x → y" or "x in
/// both", then how many events differ and from when.
pub fn compare_summary(a: &Verdict, b: &Verdict, diff: &Diff) -> Vec<String> {
    let change = |name: &str, x: String, y: String| {
        if x == y {
            format!("{name}: {x} in both")
        } else {
            format!("{name}: {x} → {y}")
        }
    };
    let exclusion = |v: &Verdict| {
        if v.violation_count > 0 {
            format!("broken ({} overlap(s))", v.violation_count)
        } else {
            "holds".to_string()
        }
    };
    let overlaps = |v: &Verdict| {
        v.violations
            .iter()
            .map(|x| {
                (
                    x.from_us,
                    x.to_us,
                    x.holders[0].client.clone(),
                    x.holders[1].client.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut exclusion_line = change("Exclusion", exclusion(a), exclusion(b));
    if a.violation_count == b.violation_count && a.violation_count > 0 && overlaps(a) != overlaps(b)
    {
        exclusion_line = format!(
            "Exclusion: broken ({} overlap(s)) in both, but not the same overlaps",
            a.violation_count
        );
    }
    let integrity = |v: &Verdict| match v.integrity {
        Integrity::Intact => "intact".to_string(),
        Integrity::Corrupted => "corrupted".to_string(),
    };
    let idle = |v: &Verdict| {
        let us: u64 = v.resources.iter().map(|r| r.idle_while_waiting_us).sum();
        format!("{} ms", us / 1_000)
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    // Fencing changes how often clients believe (a rejected client lets go and starts again),
    // so it can move the overlap count while it guards the data; say so where the figure moves.
    if a.violation_count != b.violation_count && a.operations.rejected != b.operations.rejected {
        exclusion_line.push_str(&format!(
            ". Overlaps count beliefs, not damage: fencing rejected {} operation(s) here and {} in the flipped run, and each rejected client lets go and starts again ({} and {} operations started), so the number of beliefs that can overlap changes. Fencing guards the data, not beliefs",
            a.operations.rejected, b.operations.rejected, a.operations.started, b.operations.started
        ));
    }
    vec![
        exclusion_line,
        change("Integrity", integrity(a), integrity(b)),
        change("Lost updates", a.lost_updates.to_string(), b.lost_updates.to_string()),
        change(
            "Writes inside another's critical section",
            a.interleaved_writes.to_string(),
            b.interleaved_writes.to_string(),
        ),
        change("Rejected writes", a.rejected_writes.to_string(), b.rejected_writes.to_string()),
        change("Rejected reads", a.rejected_reads.to_string(), b.rejected_reads.to_string()),
        change("Idle while clients waited", idle(a), idle(b)),
        change("Deadlock", yes_no(a.deadlock), yes_no(b.deadlock)),
        match diff.first_divergence {
            Some(t) => format!(
                "{} event(s) only in this run, {} only in the flipped run; the runs first differ at t={}.",
                diff.count_a(),
                diff.count_b(),
                seconds(t)
            ),
            None => "The two traces are identical.".to_string(),
        },
    ]
}

/// An event named in plain words: who did what, to whom, with which token.
pub fn event_words(world: &World, events: &[Event], index: usize) -> Option<String> {
    use crate::trace::{rows_text, ServiceOp, What};
    let e = events.get(index)?;
    let client = |c: &u32| world.clients[*c as usize].name.as_str();
    let service = |s: &u32| world.services[*s as usize].name.as_str();
    let resource = |r: &u32| world.resources[*r as usize].name.as_str();
    let token = |t: &Option<crate::trace::Token>| match t {
        Some(t) => format!("token {}:{}", service(&t.service), t.value),
        None => "no token".to_string(),
    };
    let words = match &e.what {
        What::OpStarted { client: c, op } => {
            format!(
                "{} starts operation {op} and waits for its locks",
                client(c)
            )
        }
        What::AcquireSent {
            client: c,
            service: s,
        } => format!(
            "{} asks {} for the lock on {}",
            client(c),
            service(s),
            resource(&world.clients[*c as usize].resource)
        ),
        What::BeliefStarted {
            client: c,
            resource: r,
            rows,
            grants,
        } => {
            let what = format!("{}[{}]", resource(r), rows_text(world, *r, *rows));
            if grants.is_empty() {
                format!(
                    "{} starts working on {what} with no lock: an unprotected critical section",
                    client(c)
                )
            } else {
                let by: Vec<String> = grants
                    .iter()
                    .map(|g| {
                        format!(
                            "{} (its instant {}, token {})",
                            service(&g.service),
                            g.instant,
                            g.token
                        )
                    })
                    .collect();
                format!(
                    "{} believes it holds {what}, granted by {}",
                    client(c),
                    by.join(" and ")
                )
            }
        }
        What::Service {
            service: s,
            instant,
            resource: r,
            op,
        } => {
            let at = format!("at its instant {instant}");
            match op {
                ServiceOp::Granted {
                    client: c,
                    token,
                    lease_until,
                } => format!(
                    "{} grants {} to {} {at}, with token {token}{}",
                    service(s),
                    resource(r),
                    client(c),
                    lease_until.map_or(String::new(), |t| format!(
                        ", on a lease until {}",
                        seconds(t)
                    ))
                ),
                ServiceOp::Queued { client: c, behind } => format!(
                    "{} queues {} for {} {at}{}",
                    service(s),
                    client(c),
                    resource(r),
                    behind.map_or(String::new(), |h| format!(", behind {}", client(&h)))
                ),
                ServiceOp::Released { client: c, token } => format!(
                    "{} logs {}'s release of {} (token {token}) {at}: the lock is free",
                    service(s),
                    client(c),
                    resource(r)
                ),
                ServiceOp::Forgotten {
                    client: c,
                    token: Some(t),
                } => format!(
                    "{} forgets, {at}, that it granted {} to {} (token {t}): it restarted empty and may grant the same lock again",
                    service(s),
                    resource(r),
                    client(c)
                ),
                ServiceOp::Forgotten {
                    client: c,
                    token: None,
                } => format!(
                    "{} forgets, {at}, that {} was waiting for {}: it restarted empty",
                    service(s),
                    client(c),
                    resource(r)
                ),
                ServiceOp::Expired { client: c, token } => format!(
                    "{}'s lease on {} (token {token}) expires at {} {at}: the service takes the lock back, whatever {} believes",
                    client(c),
                    resource(r),
                    service(s),
                    client(c)
                ),
                _ => e.describe(world),
            }
        }
        What::QuorumMissed {
            client: c,
            granted,
            quorum,
        } => format!(
            "{} counts {granted} grant(s), short of the {quorum} it needs: quorum missed, so it does not hold the lock and lets go of what it got. {}",
            client(c),
            quorum_race(world, events, index, *c, *quorum)
        ),
        What::ValiditySpent {
            client: c,
            granted,
            acquiring_us,
        } => format!(
            "{} counts {granted} grants, enough for its quorum, but acquiring took {}: the lock's validity (the lease, less the time spent acquiring and the allowance for clock drift) is spent, so it lets go without touching {}",
            client(c),
            seconds(*acquiring_us),
            resource(&world.clients[*c as usize].resource)
        ),
        What::RestartedEmpty { service: s } => {
            let forgot: Vec<String> = events[index + 1..]
                .iter()
                .take_while(|x| x.at == e.at)
                .filter_map(|x| match &x.what {
                    What::Service {
                        service,
                        op:
                            ServiceOp::Forgotten {
                                client: c,
                                token: Some(t),
                            },
                        ..
                    } if service == s => Some(format!("{}'s (token {t})", client(c))),
                    _ => None,
                })
                .collect();
            let held = if forgot.is_empty() {
                "it held no grant to forget".to_string()
            } else {
                format!("it has forgotten every grant it held: {}", forgot.join(", "))
            };
            format!(
                "{} comes back from its outage empty, with nothing kept on disk: {held}, and its tokens start again at {}. A client that counted on a forgotten grant still believes it holds the lock",
                service(s),
                world.services[*s as usize].first_token
            )
        }
        What::Read {
            client: c,
            resource: r,
            rows,
            token: t,
            accepted,
            values,
        } => {
            if *accepted {
                format!(
                    "{} reads {}[{}] for {} ({}): {} {}",
                    resource(r),
                    resource(r),
                    rows_text(world, *r, *rows),
                    client(c),
                    token(t),
                    if values.len() == 1 {
                        "the value is"
                    } else {
                        "the values are"
                    },
                    crate::trace::values_text(values)
                )
            } else {
                format!(
                    "{} rejects {}'s read of {}[{}] ({})",
                    resource(r),
                    client(c),
                    resource(r),
                    rows_text(world, *r, *rows),
                    token(t)
                )
            }
        }
        What::Write {
            client: c,
            resource: r,
            rows,
            token: t,
            accepted,
            values,
        } => {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            if *accepted {
                format!(
                    "{}'s write reaches {}[{}] carrying {}, and is accepted: the value becomes {}",
                    client(c),
                    resource(r),
                    rows_text(world, *r, *rows),
                    token(t),
                    values.join(",")
                )
            } else {
                format!(
                    "{} rejects {}'s write to {}[{}] carrying {}",
                    resource(r),
                    client(c),
                    resource(r),
                    rows_text(world, *r, *rows),
                    token(t)
                )
            }
        }
        _ => e.describe(world),
    };
    Some(words)
}

/// Who else had grants for the lock when a majority client missed its quorum, in words: a
/// client that holds the lock by its own quorum, one whose grants make a quorum it has not
/// counted yet, other clients whose grants split the vote so that nobody has a quorum, or
/// services that had not granted to anyone. Read from the trace up to the miss.
fn quorum_race(world: &World, events: &[Event], index: usize, client: u32, quorum: u32) -> String {
    let quorum = quorum as usize;
    use crate::trace::{HoldChange, What};
    let resource = world.clients[client as usize].resource;
    // Each service's holders of the resource, and each client's open belief, at the miss.
    let mut holds: Vec<Vec<u32>> = vec![Vec::new(); world.services.len()];
    let mut believes: Vec<bool> = vec![false; world.clients.len()];
    for e in &events[..index] {
        match &e.what {
            What::Service {
                service,
                resource: r,
                op,
                ..
            } if *r == resource => match op.hold_change() {
                Some(HoldChange::Begins { client: c, .. }) => {
                    let h = &mut holds[*service as usize];
                    if !h.contains(&c) {
                        h.push(c);
                    }
                }
                Some(HoldChange::Ends { client: c, .. }) => {
                    holds[*service as usize].retain(|x| *x != c)
                }
                None => {}
            },
            What::BeliefStarted {
                client: c,
                resource: r,
                ..
            } if *r == resource => believes[*c as usize] = true,
            What::BeliefEnded {
                client: c,
                resource: r,
                ..
            } if *r == resource => believes[*c as usize] = false,
            _ => {}
        }
    }
    let name = |c: usize| world.clients[c].name.as_str();
    if let Some(h) = (0..believes.len()).find(|c| believes[*c] && *c != client as usize) {
        return format!("{} holds the lock by its own quorum.", name(h));
    }
    // How many services hold a grant for each other client.
    let mut others: Vec<(usize, usize)> = Vec::new();
    for c in holds.iter().flatten().filter(|c| **c != client) {
        match others.iter_mut().find(|(x, _)| *x == *c as usize) {
            Some((_, n)) => *n += 1,
            None => others.push((*c as usize, 1)),
        }
    }
    crate::sorted::sort_by_key(&mut others, |(c, _)| *c);
    if let Some((c, n)) = others.iter().find(|(_, n)| *n >= quorum) {
        return format!(
            "{n} service(s) had granted to {} instead, enough for its quorum, which it has not counted yet.",
            name(*c)
        );
    }
    if others.is_empty() {
        return "The other services had granted to nobody by then: they did not answer in time."
            .to_string();
    }
    let who: Vec<String> = others
        .iter()
        .map(|(c, n)| format!("{n} to {}", name(*c)))
        .collect();
    format!(
        "The other grants went {}: no client has a quorum, a split vote, and the resource waits until someone tries again.",
        who.join(" and ")
    )
}

/// An event's card: what happened in plain words, the notes about it, what caused it and what
/// it led to, each cause and effect with the event to go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    pub event: usize,
    /// "Event 12 at t=0.416s".
    pub heading: String,
    pub words: String,
    /// The full sentences of the notes anchored on this event.
    pub notes: Vec<String>,
    /// Why it happened, in words, with the event that caused it.
    pub because: Vec<(String, usize)>,
    /// What it led to, in words, with the event.
    pub led_to: Vec<(String, usize)>,
}

/// Why an event happened, in words, with the event that caused it: the text twin of the arrows
/// that end at it (the event table shows these).
pub fn because(
    world: &World,
    events: &[Event],
    layout: &crate::ui::timeline::Layout,
    index: usize,
) -> Vec<(String, usize)> {
    use crate::trace::{HoldChange, ServiceOp, What};
    use crate::ui::links::LinkKind;
    let Some(e) = events.get(index) else {
        return Vec::new();
    };
    let client = |c: u32| world.clients[c as usize].name.as_str();
    let service = |s: u32| world.services[s as usize].name.as_str();
    let at = |k: usize| seconds(events[k].at);
    let mut because: Vec<(String, usize)> = layout
        .causes(index)
        .iter()
        .map(|l| {
            let cause = &events[l.cause].what;
            let words = match (l.kind, cause, &e.what) {
                (LinkKind::Request, What::AcquireSent { client: c, service: s }, What::Service { op, .. }) => {
                    let verb = match op {
                        ServiceOp::Granted { .. } => "granted",
                        ServiceOp::Queued { .. } => "queued",
                        _ => "answered",
                    };
                    format!(
                        "{verb} because {}'s request (sent at {}) reached {} at {}",
                        client(*c),
                        at(l.cause),
                        service(*s),
                        seconds(e.at)
                    )
                }
                (LinkKind::Grant, What::Service { service: s, instant, op, .. }, _) => {
                    let token = match op {
                        ServiceOp::Granted { token, .. } | ServiceOp::TransferredIn { token, .. } => *token,
                        _ => 0,
                    };
                    format!(
                        "because {}'s grant (its instant {instant}, token {token}, made at {}) reached the client",
                        service(*s),
                        at(l.cause)
                    )
                }
                (LinkKind::Read, What::BeliefStarted { client: c, .. }, _) => format!(
                    "sent when {} entered its critical section at {}",
                    client(*c),
                    at(l.cause)
                ),
                (LinkKind::Write, What::Read { client: c, values, .. }, _) => format!(
                    "computed from the {} {} that {} read at {}",
                    if values.len() == 1 { "value" } else { "values" },
                    crate::trace::values_text(values),
                    client(*c),
                    at(l.cause)
                ),
                (LinkKind::Write, What::BeliefStarted { client: c, .. }, _) => format!(
                    "written in the critical section {} entered at {}",
                    client(*c),
                    at(l.cause)
                ),
                (LinkKind::Release, _, _) => format!(
                    "because the client let go at {}",
                    at(l.cause)
                ),
                _ => format!("caused by event {} at {}", l.cause + 1, at(l.cause)),
            };
            (words, l.cause)
        })
        .collect();
    // A grant from the queue has no request arriving: it happened because the previous hold
    // ended at the same service, in the same moment.
    if let What::Service {
        service: s,
        op: ServiceOp::Granted { client: c, .. },
        ..
    } = &e.what
    {
        if because.is_empty() {
            let ended = events[..index]
                .iter()
                .enumerate()
                .rev()
                .take_while(|(_, x)| x.at == e.at)
                .find(|(_, x)| {
                    matches!(&x.what, What::Service { service, op, .. }
                        if service == s && matches!(op.hold_change(), Some(HoldChange::Ends { .. })))
                });
            if let Some((k, x)) = ended {
                let holder = match &x.what {
                    What::Service { op, .. } => match op.hold_change() {
                        Some(HoldChange::Ends { client, .. }) => client,
                        _ => *c,
                    },
                    _ => *c,
                };
                because.push((
                    format!(
                        "granted from the queue because {}'s hold ended at {} at {}",
                        client(holder),
                        service(*s),
                        at(k)
                    ),
                    k,
                ));
            }
        }
    }
    // A grant forgotten has no message behind it: the service's restart, in the same moment,
    // emptied it.
    if let What::Service {
        service: s,
        op: ServiceOp::Forgotten { .. },
        ..
    } = &e.what
    {
        let restart = events[..index]
            .iter()
            .enumerate()
            .rev()
            .take_while(|(_, x)| x.at == e.at)
            .find(|(_, x)| matches!(&x.what, What::RestartedEmpty { service } if service == s));
        if let Some((k, _)) = restart {
            because.push((
                format!(
                    "forgotten because {} restarted empty at {}",
                    service(*s),
                    at(k)
                ),
                k,
            ));
        }
    }
    because
}

/// The card of one event of a run.
pub fn card(
    world: &World,
    events: &[Event],
    layout: &crate::ui::timeline::Layout,
    index: usize,
) -> Option<Card> {
    let e = events.get(index)?;
    let at = |k: usize| seconds(events[k].at);
    let because = because(world, events, layout, index);
    let mut led_to: Vec<(String, usize)> = layout
        .effects(index)
        .map(|l| {
            let words = event_words(world, events, l.effect).unwrap_or_default();
            (format!("{} at {}", words, at(l.effect)), l.effect)
        })
        .collect();
    // A restart that forgot its grants led to each forgetting, in the same moment (the twin of
    // the forgetting's cause).
    if let crate::trace::What::RestartedEmpty { service: s } = &e.what {
        for (k, x) in events.iter().enumerate().skip(index + 1) {
            if x.at != e.at {
                break;
            }
            if matches!(&x.what, crate::trace::What::Service { service, op: crate::trace::ServiceOp::Forgotten { .. }, .. } if service == s)
            {
                let words = event_words(world, events, k).unwrap_or_default();
                led_to.push((format!("{} at {}", words, at(k)), k));
            }
        }
    }
    let notes = layout
        .notes
        .iter()
        .filter(|n| n.event == index)
        .map(|n| n.text.clone())
        .collect();
    Some(Card {
        event: index,
        heading: format!("Event {} at t={}", index + 1, seconds(e.at)),
        words: event_words(world, events, index)?,
        notes,
        because,
        led_to,
    })
}
