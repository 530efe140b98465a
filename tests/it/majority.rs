//! Majority locks (Redlock): a client that asks several independent services at once and holds
//! the lock with a quorum of their grants while the lock is valid. Each claim of the shipped
//! scenarios `12` to `15` is checked over seeds, through the verdict and the trace a user reads;
//! the variants that a lesson would make (a restart delay, a fast clock, fencing by one
//! service's tokens, a lease-aware holder, a quorum that is not a majority) are edits of them.

use lockstep::explore::{explorable, Budgets, Explorer, Outcome, Space};
use lockstep::property::Property;
use lockstep::scenario::{Fencing, FencingChecks, Protocol, Scenario};
use lockstep::trace::{AbortReason, Event, ServiceOp, What};
use lockstep::{Exclusion, Integrity, Run, Verdict};

use crate::{check, scenario};

const SEEDS: std::ops::Range<u64> = 0..16;

fn client(run: &Run, name: &str) -> u32 {
    run.world
        .clients
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no client {name}")) as u32
}

fn service(run: &Run, name: &str) -> u32 {
    run.world
        .services
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("no service {name}")) as u32
}

fn text(run: &Run) -> String {
    lockstep::trace::render(&run.world, &run.events)
}

/// Each critical section of a majority client, as (client, start, grants), with the quorum it
/// reached just before: every belief of a majority client follows its `quorum_reached`.
fn sections(run: &Run) -> Vec<(u32, u64, usize, u32)> {
    let mut out = Vec::new();
    for (i, e) in run.events.iter().enumerate() {
        if let What::BeliefStarted { client, grants, .. } = &e.what {
            let reached = run.events[..i].iter().rev().find_map(|x| match x.what {
                What::QuorumReached {
                    client: c,
                    granted,
                    quorum,
                    ..
                } if c == *client => Some((granted, quorum)),
                _ => None,
            });
            let (granted, quorum) = reached.expect("a majority client's belief follows its quorum");
            assert_eq!(
                granted as usize,
                grants.len(),
                "the belief holds what was counted"
            );
            out.push((*client, e.at, grants.len(), quorum));
        }
    }
    out
}

fn set_pause(s: &mut Scenario, start_ms: u64) {
    s.pauses[0].start_ms = start_ms;
}

#[test]
fn two_majority_clients_of_five_services_never_overlap_without_faults() {
    let s = scenario("12");
    let (mut holds, mut missed) = (0, 0);
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}\n{}", text(&run));
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        // Tries are never queued: nobody waits for anybody, so no wait-for cycle forms.
        assert_eq!(v.wait_cycle_count, 0, "seed {seed}");
        for (_, _, grants, quorum) in sections(&run) {
            assert!(grants >= quorum as usize && quorum == 3, "seed {seed}");
            holds += 1;
        }
        missed += v.operations.quorums_missed;
        assert!(v.class_work.iter().all(|w| w.completed > 0), "seed {seed}");
    }
    assert!(holds > 100, "{holds} sections");
    // Contention costs retries: the loser of each race misses its quorum and tries again.
    assert!(missed > 50, "{missed} missed quorums");
}

#[test]
fn a_split_vote_leaves_every_client_short_of_its_quorum() {
    // Three clients racing for five services: each takes some, none takes three. The trace
    // says so with the counts, and the time shows as the resource idle while clients wait.
    let mut s = scenario("12");
    let mut third = s.clients[0].clone();
    third.name = "central".into();
    third.region = "central".into();
    s.clients.push(third);
    let mut splits = 0;
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        // A split: at one instant's race, two or more clients each missed with some grants.
        let mut last_miss: Vec<(u32, u64)> = Vec::new();
        for e in &run.events {
            if let What::QuorumMissed {
                client,
                granted,
                quorum,
            } = e.what
            {
                assert!(granted < quorum, "seed {seed}");
                if granted > 0 {
                    last_miss.push((client, e.at));
                }
            }
        }
        splits += last_miss
            .windows(2)
            .filter(|w| w[0].0 != w[1].0 && w[1].1 - w[0].1 < 50_000)
            .count();
        assert!(v.resources[0].idle_while_waiting_us > 0, "seed {seed}");
        let said = v.summary();
        assert!(said.contains("missed their quorum"), "{said}");
    }
    assert!(splits > 0, "no split vote in any seed");
}

#[test]
fn a_holder_paused_past_its_lease_writes_beside_the_next_majority() {
    let s = scenario("13");
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Broken,
            "seed {seed}\n{}",
            text(&run)
        );
        assert!(v.lost_updates > 0, "seed {seed}");
        let east = client(&run, "east-1");
        // The east client's check passed: its quorum was valid until about a second in.
        let valid_until = run
            .events
            .iter()
            .find_map(|e| match e.what {
                What::QuorumReached {
                    client,
                    valid_until,
                    ..
                } if client == east => valid_until,
                _ => None,
            })
            .expect("east-1 held a valid majority");
        let o = &v.violations[0];
        assert_eq!(
            [o.holders[0].client.as_str(), o.holders[1].client.as_str()],
            ["east-1", "west-1"]
        );
        assert!(o.holders.iter().all(|h| h.grants.len() >= 3), "seed {seed}");
        // The overlap is the west client's valid majority beside the east client's expired one.
        assert!(o.from_us > valid_until, "seed {seed}");
        let wrote_late = run.events.iter().any(|e| {
            matches!(e.what, What::Write { client, accepted: true, .. } if client == east)
                && e.at > valid_until
        });
        assert!(wrote_late, "seed {seed}: east-1 writes after its validity");
    }
}

#[test]
fn a_lease_aware_holder_checks_again_before_it_writes_and_lets_go() {
    // The same pause, with the client checking its validity before each access: it wakes after
    // the validity ended, finds it spent before its write and abandons the operation.
    let mut s = scenario("13");
    s.clients[0].lease_aware = true;
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.operations.abandoned, 1, "seed {seed}\n{}", text(&run));
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        let east = client(&run, "east-1");
        assert!(!run
            .events
            .iter()
            .any(|e| matches!(e.what, What::Write { client, .. } if client == east)));
    }
}

#[test]
fn fencing_by_one_services_tokens_stops_the_stale_writer_and_refuses_holders_without_them() {
    // The resource checks r3's tokens on every access. No update is lost, but a majority that
    // does not include r3 cannot show one of its tokens, and its holder is refused.
    let mut s = scenario("13");
    s.resources[0].fencing = Fencing::OneSource;
    s.resources[0].fencing_source = Some("r3".into());
    s.resources[0].fencing_checks = FencingChecks::AllAccesses;
    let mut refused = 0;
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.lost_updates, 0, "seed {seed}");
        let r3 = service(&run, "r3");
        for e in &run.events {
            if let What::Read {
                accepted: false,
                token: Some(t),
                ..
            } = e.what
            {
                refused += u64::from(t.service != r3);
            }
        }
    }
    assert!(refused > 0, "some valid holder lacked r3's grant");
}

#[test]
fn a_pause_while_the_grants_are_in_flight_is_caught_by_the_validity_check() {
    let s = scenario("14");
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}\n{}", text(&run));
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        assert_eq!(v.operations.validity_spent, 1, "seed {seed}");
        let east = client(&run, "east-1");
        let pause_end = s.pauses[0].start_ms * 1000 + s.pauses[0].duration_ms * 1000;
        let spent: Vec<&Event> = run
            .events
            .iter()
            .filter(|e| matches!(e.what, What::ValiditySpent { client, .. } if client == east))
            .collect();
        // It counts its grants when it wakes: a majority, too late.
        assert_eq!(spent.len(), 1, "seed {seed}");
        assert_eq!(spent[0].at, pause_end);
        let What::ValiditySpent {
            granted,
            acquiring_us,
            ..
        } = spent[0].what
        else {
            unreachable!()
        };
        assert!(granted >= 3 && acquiring_us >= 990_000, "seed {seed}");
        // Acquiring took from its first request to the count.
        let asked = run
            .events
            .iter()
            .find(|e| matches!(e.what, What::AcquireSent { client, .. } if client == east))
            .map(|e| e.at)
            .unwrap();
        assert_eq!(acquiring_us, pause_end - asked, "seed {seed}");
        let aborted = run.events.iter().any(|e| {
            matches!(e.what, What::AttemptAborted { client, reason: AbortReason::ValiditySpent, .. } if client == east)
        });
        assert!(aborted, "seed {seed}");
        // It did not use the lock of that attempt: its first belief comes later.
        let first_belief = run
            .events
            .iter()
            .find(|e| matches!(e.what, What::BeliefStarted { client, .. } if client == east))
            .map(|e| e.at);
        assert!(first_belief.is_none_or(|t| t > pause_end), "seed {seed}");
    }
}

#[test]
fn the_time_spent_acquiring_counts_from_the_first_request() {
    // Scenario 14 a fifth of a second later: the east client asks at 200 ms and pauses at
    // once, the west client starts after it. Acquiring took from its request to its count.
    let mut s = scenario("14");
    s.clients[0].start_ms = 200;
    s.clients[1].start_ms = 300;
    set_pause(&mut s, 201);
    s.validate().unwrap();
    let pause_end = (201 + s.pauses[0].duration_ms) * 1000;
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(
            v.operations.validity_spent,
            1,
            "seed {seed}\n{}",
            text(&run)
        );
        let east = client(&run, "east-1");
        let asked = run
            .events
            .iter()
            .find(|e| matches!(e.what, What::AcquireSent { client, .. } if client == east))
            .map(|e| e.at)
            .unwrap();
        assert!(asked >= 200_000, "seed {seed}: asked at {asked}");
        let spent = run
            .events
            .iter()
            .find_map(|e| match e.what {
                What::ValiditySpent {
                    client,
                    acquiring_us,
                    ..
                } if client == east => Some((e.at, acquiring_us)),
                _ => None,
            })
            .unwrap();
        assert_eq!(spent, (pause_end, pause_end - asked), "seed {seed}");
    }
}

#[test]
fn the_same_pause_once_the_lock_is_held_is_not_caught() {
    // Moved from the acquisition into the critical section, the pause breaks exclusion.
    let mut s = scenario("14");
    set_pause(&mut s, 150);
    let broken = SEEDS
        .filter(|seed| check(&s, *seed).1.exclusion == Exclusion::Broken)
        .count();
    assert_eq!(broken, SEEDS.count());
}

/// Scenario 15 with r3 down `restart_delay_ms` longer after its restart.
fn with_delay(delay_ms: u64) -> Scenario {
    let mut s = scenario("15");
    let r3 = s.services.iter_mut().find(|x| x.name == "r3").unwrap();
    r3.restart_delay_ms = delay_ms;
    s
}

#[test]
fn a_restart_without_persistence_gives_two_majorities_with_no_pause() {
    let s = scenario("15");
    assert!(s.pauses.is_empty());
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Broken,
            "seed {seed}\n{}",
            text(&run)
        );
        let o = &v.violations[0];
        // Both majorities include r3, which granted to both.
        for h in &o.holders {
            assert_eq!(h.grants.len(), 3, "seed {seed}: a bare majority");
            assert!(h.grants.iter().any(|g| g.service == "r3"), "seed {seed}");
        }
        // No lease ran out and nobody paused: r3 forgot the east client's grant.
        assert!(!run.events.iter().any(|e| matches!(
            e.what,
            What::Service {
                op: ServiceOp::Expired { .. },
                ..
            }
        ) && e.at < o.to_us));
        let r3 = service(&run, "r3");
        let restarts: Vec<u64> = run
            .events
            .iter()
            .filter(|e| e.what == What::RestartedEmpty { service: r3 })
            .map(|e| e.at)
            .collect();
        assert_eq!(restarts, [300_000], "seed {seed}");
        assert_eq!(v.restarts.len(), 1);
        assert_eq!(v.restarts[0].forgotten, [("east-1".to_string(), 200)]);
        // Its tokens went back: it issued token 200 again.
        let r3_tokens: Vec<u64> = o
            .holders
            .iter()
            .flat_map(|h| {
                h.grants
                    .iter()
                    .filter(|g| g.service == "r3")
                    .map(|g| g.token)
            })
            .collect();
        assert_eq!(r3_tokens, [200, 200], "seed {seed}");
        let headline = v.summary().lines().next().unwrap().to_string();
        assert!(
            headline.contains("Service r3 granted to both: it restarted empty at t=0.300s"),
            "{headline}"
        );
    }
}

#[test]
fn fencing_with_a_restarted_services_tokens_lets_its_repeated_token_through() {
    // The resource checks r3's tokens on every access. r3 forgot its grant and issued token 200
    // again: both holders show r3:200, and the later write, computed from a stale read, is
    // accepted. Checked with r1's tokens instead (r1 keeps its state), no update is lost, but
    // the west client, whose majority lacks r1, is refused although it holds a valid majority.
    for (source, lost) in [("r3", true), ("r1", false)] {
        let mut s = scenario("15");
        s.resources[0].fencing = Fencing::OneSource;
        s.resources[0].fencing_source = Some(source.into());
        s.resources[0].fencing_checks = FencingChecks::AllAccesses;
        for seed in SEEDS {
            let (run, v) = check(&s, seed);
            assert_eq!(
                v.lost_updates > 0,
                lost,
                "{source}, seed {seed}\n{}",
                text(&run)
            );
            let r3 = service(&run, "r3");
            let shown: Vec<(u32, u64)> = run
                .events
                .iter()
                .filter_map(|e| match e.what {
                    What::Write {
                        client,
                        accepted: true,
                        token: Some(t),
                        ..
                    } if t.service == r3 => Some((client, t.value)),
                    _ => None,
                })
                .collect();
            if lost {
                let east = client(&run, "east-1");
                let west = client(&run, "west-1");
                assert_eq!(shown, [(east, 200), (west, 200)], "seed {seed}");
            } else {
                assert!(v.rejected_reads + v.rejected_writes > 0, "seed {seed}");
            }
        }
    }
}

#[test]
fn a_restart_delay_of_a_lease_keeps_the_majorities_apart() {
    for (delay_ms, holds) in [(0, false), (200, false), (1000, true), (1500, true)] {
        let s = with_delay(delay_ms);
        for seed in SEEDS {
            let (run, v) = check(&s, seed);
            assert_eq!(
                v.exclusion == Exclusion::Holds,
                holds,
                "delay {delay_ms} ms, seed {seed}\n{}",
                text(&run)
            );
            // The remedy costs availability: r3 is down for the outage and the delay.
            let down: u64 = v
                .unavailability
                .iter()
                .filter(|u| u.service == "r3" && u.region == "east")
                .map(|u| u.unavailable_us)
                .sum();
            assert_eq!(down, (100 + delay_ms) * 1000, "delay {delay_ms} ms");
        }
    }
}

#[test]
fn a_fast_clock_on_one_service_ends_its_lease_under_a_bare_majority() {
    // Scenario 15 without its outage: the east client holds r1, r2 and r3 for 800 ms of work,
    // inside its validity (a 1000 ms lease less 10 ms). A clock on r3 that runs fast enough
    // ends r3's lease before the work is done, and the west client takes r3, r4 and r5.
    for (rate, holds) in [(100, true), (110, true), (150, false), (200, false)] {
        let mut s = scenario("15");
        let r3 = s.services.iter_mut().find(|x| x.name == "r3").unwrap();
        r3.outages.clear();
        r3.forgets_on_restart = false;
        r3.clock_rate_percent = rate;
        for seed in SEEDS {
            let (run, v) = check(&s, seed);
            assert_eq!(
                v.exclusion == Exclusion::Holds,
                holds,
                "rate {rate} %, seed {seed}\n{}",
                text(&run)
            );
            // The service logs the lease's real end: 1000 ms by its clock.
            let r3 = service(&run, "r3");
            for e in &run.events {
                if let What::Service {
                    service,
                    op:
                        ServiceOp::Granted {
                            lease_until: Some(until),
                            ..
                        },
                    ..
                } = e.what
                {
                    if service == r3 {
                        assert_eq!(
                            until - e.at,
                            1_000_000 * 100 / u64::from(rate),
                            "rate {rate}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_quorum_of_half_the_services_lets_two_clients_hold_at_once_without_faults() {
    // Two of five is not a majority: the east and west clients each take the services near
    // them, and both hold.
    let mut s = scenario("12");
    for c in &mut s.clients {
        if let Protocol::Majority { quorum, .. } = &mut c.protocol {
            *quorum = Some(2);
        }
    }
    let broken = SEEDS
        .filter(|seed| {
            let (_, v) = check(&s, *seed);
            v.exclusion == Exclusion::Broken
        })
        .count();
    assert!(broken > 0);
    let findings = lockstep::inventory::check(&s);
    assert!(
        findings
            .iter()
            .any(|f| f.severity == lockstep::inventory::Severity::Defect
                && f.message.contains("2 of 5 is not more than half")),
        "{findings:?}"
    );
    // A strict majority is one lock under stated assumptions: a warning that names them.
    let findings = lockstep::inventory::check(&scenario("12"));
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(f.severity, lockstep::inventory::Severity::Warning);
    for assumption in [
        "no lease runs out under a holder",
        "no service restarts without the grants it held",
        "the same services for the same quorum",
        "each service issues its own tokens",
    ] {
        assert!(f.message.contains(assumption), "{}", f.message);
    }
}

/// A small majority scenario for the explorer: `tests/it/explore/` (which the explorer's own
/// tests also compare with Stateright) or `tests/it/majority/`.
fn small(dir: &str, name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it")
        .join(dir)
        .join(name);
    Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Explores a scenario for exclusion alone, with `faults` faults a path.
fn explore(s: &Scenario, faults: u32) -> (lockstep::world::World, Outcome) {
    let budgets = Budgets {
        faults,
        ..Budgets::default()
    };
    let world = explorable(s, &budgets).unwrap_or_else(|e| panic!("{e}"));
    let space = Space::new(world.clone(), budgets).checking(&[Property::Exclusion]);
    (world, Explorer::over(space).run())
}

#[test]
fn the_explorer_proves_a_majority_without_lease_expiry_or_restart_excludes() {
    // Two of three, no leases: in every interleaving, any two majorities share a service,
    // which grants only one of them. Every property holds, over the whole space.
    let s = small("explore", "majority.toml");
    let world = explorable(&s, &Budgets::default()).unwrap();
    let Outcome::Holds(h) = Explorer::new(world, Budgets::default()).run() else {
        panic!("a majority without faults excludes");
    };
    assert!(h.complete, "{h:?}");
    assert_eq!(h.states, 38_210, "the state space changed: {h:?}");
}

#[test]
fn the_explorer_finds_a_second_majority_once_a_lease_expires_under_a_holder() {
    // Leases make the space far larger (each grant's expiry step waits to be taken, or not),
    // so only the search for the counterexample is made here. One expiry is enough: the holder
    // has two of three, the third was never needed, and the expired one makes a majority with
    // it for the other client.
    let s = small("majority", "majority-leases.toml");
    let (world, outcome) = explore(&s, 1);
    let Outcome::Violated(c) = outcome else {
        panic!("an expiry under a holder lets another majority in");
    };
    assert_eq!(c.property, Property::Exclusion);
    // Each client starts and sends its three tries (the tries travel in parallel), two grants
    // reach the first, one lease expires, two grants reach the second.
    assert_eq!(c.len(), 11);
    let run = c.replay(&world);
    let expired = run
        .events
        .iter()
        .filter(|e| {
            matches!(
                e.what,
                What::Service {
                    op: ServiceOp::Expired { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(expired, 1);
    let v = lockstep::monitor::verdict(&run);
    assert_eq!(v.exclusion, Exclusion::Broken);
    // The two majorities share the service whose lease expired: its own order says which
    // came later, and a resource that fenced with its tokens would tell them apart.
    let o = &v.violations[0];
    let shared: Vec<&str> = o.holders[0]
        .grants
        .iter()
        .filter(|g| o.holders[1].grants.iter().any(|x| x.service == g.service))
        .map(|g| g.service.as_str())
        .collect();
    assert_eq!(shared.len(), 1, "{o:?}");
}

#[test]
fn the_explorer_finds_two_bare_majorities_after_a_restart_without_persistence() {
    // No leases at all: one restart of service b, which forgets the first client's grant, is
    // the one fault it takes.
    let s = small("majority", "majority-restart.toml");
    assert!(matches!(explore(&s, 0).1, Outcome::Holds(h) if h.complete));
    let (world, outcome) = explore(&s, 1);
    let Outcome::Violated(c) = outcome else {
        panic!("a forgetful restart lets a second bare majority in");
    };
    assert_eq!(c.property, Property::Exclusion);
    assert_eq!(c.len(), 11);
    let run = c.replay(&world);
    let v = lockstep::monitor::verdict(&run);
    assert_eq!(v.exclusion, Exclusion::Broken);
    assert_eq!(v.restarts.len(), 1);
    let o = &v.violations[0];
    for h in &o.holders {
        assert_eq!(h.grants.len(), 2, "a bare majority");
        assert!(h.grants.iter().any(|g| g.service == "b"));
    }
    assert!(v.service_logs.iter().all(|l| l.consistent));
    // Its restart is explored, its downtime is not: the explorer says nothing is refused.
    assert!(explorable(&s, &Budgets::default()).is_ok());
}

/// The verdict of one run, for the validation table below.
fn errors_of(s: &Scenario) -> Vec<String> {
    match s.validate() {
        Ok(()) => Vec::new(),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn bad_majorities_and_service_options_are_refused_where_they_are() {
    type Edit = fn(&mut Scenario);
    let cases: [(Edit, &str); 8] = [
        (
            |s| {
                s.clients[0].protocol = Protocol::Majority {
                    services: vec!["r1".into()],
                    quorum: None,
                    clock_drift_ms: 0,
                }
            },
            "client \"east\": protocol services: 1 given, 2 to 8 allowed",
        ),
        (
            |s| {
                s.clients[0].protocol = Protocol::Majority {
                    services: vec!["r1".into(), "r1".into()],
                    quorum: None,
                    clock_drift_ms: 0,
                }
            },
            "client \"east\": protocol lists service \"r1\" twice",
        ),
        (
            |s| {
                s.clients[0].protocol = Protocol::Majority {
                    services: vec!["r1".into(), "r9".into()],
                    quorum: None,
                    clock_drift_ms: 0,
                }
            },
            "client \"east\": protocol names service \"r9\", which does not exist",
        ),
        (
            |s| {
                s.clients[0].protocol = Protocol::Majority {
                    services: vec!["r1".into(), "r2".into()],
                    quorum: Some(3),
                    clock_drift_ms: 0,
                }
            },
            "client \"east\": protocol quorum is 3, it must be between 1 and the 2 services listed",
        ),
        (
            |s| {
                s.clients[0].protocol = Protocol::Majority {
                    services: vec!["r1".into(), "r2".into()],
                    quorum: None,
                    clock_drift_ms: 1000,
                }
            },
            "client \"east\": protocol clock_drift_ms is 1000, not less than the shortest lease of the listed services (1000 ms): the lock would never be valid",
        ),
        (
            |s| {
                s.services[1].subordinate_to = Some("r1".into());
            },
            "client \"east\": protocol majority: service \"r2\" is subordinate",
        ),
        (
            |s| s.services[0].restart_delay_ms = 10,
            "service \"r1\": restart_delay_ms applies only to a service that forgets_on_restart",
        ),
        (
            |s| {
                s.services[0].lease_ms = None;
                s.services[0].clock_rate_percent = 150;
            },
            "service \"r1\": clock_rate_percent changes only when leases end, and this service has no lease_ms",
        ),
    ];
    for (edit, expected) in cases {
        let mut s = scenario("12");
        edit(&mut s);
        let errors = errors_of(&s);
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{expected}\n{errors:?}"
        );
    }
    let mut s = scenario("12");
    s.services[0].clock_rate_percent = 1001;
    assert!(
        errors_of(&s)
            .iter()
            .any(|e| e
                == "service \"r1\": clock_rate_percent is 1001, it must be between 50 and 1000")
    );
    // In the text, the same problem is located at its line, with the derived reader's words.
    let toml = scenario("12").to_toml_string().replacen(
        "clock_drift_ms = 10",
        "clock_drift_ms = \"ten\"",
        1,
    );
    let e = Scenario::from_toml_str(&toml).unwrap_err().to_string();
    assert!(
        e.starts_with("line ") && e.contains("invalid type: string \"ten\""),
        "{e}"
    );
}

#[test]
fn every_figure_of_a_majority_verdict_is_one_a_user_can_count_in_the_trace() {
    // The counts the verdict adds for majority clients are the trace's events, one each.
    for prefix in ["12", "13", "14", "15"] {
        let s = scenario(prefix);
        for seed in 0..4 {
            let (run, v): (Run, Verdict) = check(&s, seed);
            let count =
                |f: fn(&What) -> bool| run.events.iter().filter(|e| f(&e.what)).count() as u64;
            assert_eq!(
                v.operations.quorums_missed,
                count(|w| matches!(w, What::QuorumMissed { .. })),
                "{prefix} seed {seed}"
            );
            assert_eq!(
                v.operations.validity_spent,
                count(|w| matches!(w, What::ValiditySpent { .. })),
                "{prefix} seed {seed}"
            );
            assert_eq!(
                v.restarts.len() as u64,
                count(|w| matches!(w, What::RestartedEmpty { .. })),
                "{prefix} seed {seed}"
            );
        }
    }
}

#[test]
fn a_lesson_can_claim_the_majority_figures_and_reads_them_in_words() {
    use lockstep::lesson::claim::Claim;
    let cases = [
        (
            "12",
            "operations.quorums_missed > 0",
            true,
            "missed their quorum",
        ),
        (
            "12",
            "restarts == 0",
            true,
            "no service restarted without its state",
        ),
        (
            "14",
            "operations.validity_spent == 1",
            true,
            "1 attempt got its quorum after the lock's validity",
        ),
        (
            "15",
            "restarts == 1",
            true,
            "1 restart without persistence happened",
        ),
        (
            "15",
            "operations.validity_spent > 0",
            false,
            "no quorum came after the lock's validity",
        ),
    ];
    for (prefix, text, holds, words) in cases {
        let s = scenario(prefix);
        let (_, v) = check(&s, s.seed);
        let claim = Claim::parse(text, 1).unwrap_or_else(|e| panic!("{text}: {e}"));
        let result = claim.check(&s, &v);
        assert_eq!(result.holds, holds, "{prefix}: {text}: {}", result.actual);
        assert!(
            result.actual.contains(words),
            "{prefix}: {text}: {}",
            result.actual
        );
    }
}

#[test]
fn one_consensus_group_with_fencing_refuses_the_paused_holders_write() {
    // The pause of scenario 13, with one lock service across three regions whose tokens the
    // counter checks (as lesson 9's last step sets it up): both still believe at once, but the stale write is refused and nothing is
    // lost; the paused client's second operation goes through.
    let mut s = scenario("13");
    s.services = vec![lockstep::scenario::Service {
        name: "group".into(),
        replicas: vec!["east".into(), "central".into(), "west".into()],
        lease_ms: Some(1000),
        protects: vec!["counter".into()],
        ..s.services[0].clone()
    }];
    s.resources[0].fencing = Fencing::OneSource;
    s.resources[0].fencing_source = Some("group".into());
    s.resources[0].fencing_checks = FencingChecks::AllAccesses;
    for c in &mut s.clients {
        c.protocol = Protocol::Single {
            service: "group".into(),
        };
    }
    s.clients[0].max_operations = Some(2);
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Broken,
            "seed {seed}\n{}",
            text(&run)
        );
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        assert_eq!(v.rejected_writes, 1, "seed {seed}");
        assert!(v.class_work.iter().all(|w| w.completed > 0), "seed {seed}");
        let east = client(&run, "east-1");
        let refused = run.events.iter().any(|e| {
            matches!(e.what, What::Write { client, accepted: false, token: Some(t), .. } if client == east && t.value == 1)
        });
        assert!(
            refused,
            "seed {seed}: east-1's write with token 1 is refused"
        );
    }
}

/// Scenario 16 with the restart of r3 (or r1) at `start_ms`.
fn restart_at(service: &str, start_ms: u64) -> Scenario {
    let mut s = scenario("16");
    let x = s.services.iter_mut().find(|x| x.name == service).unwrap();
    x.outages = vec![lockstep::scenario::Window {
        start_ms,
        duration_ms: 100,
    }];
    s
}

#[test]
fn a_forgetful_restart_breaks_exclusion_only_under_a_hold() {
    // Scenario 16 restarts r3 when nobody holds it: exclusion holds. Moved under the east
    // client's bare majority, the same restart gives two majorities; a restart of r1, which
    // keeps its grants, changes nothing; a pause of the holder past its leases breaks it too.
    let quiet = scenario("16");
    let under = restart_at("r3", 200);
    let mut persistent = restart_at("r1", 200);
    persistent
        .services
        .iter_mut()
        .find(|x| x.name == "r3")
        .unwrap()
        .outages = quiet
        .services
        .iter()
        .find(|x| x.name == "r3")
        .unwrap()
        .outages
        .clone();
    let mut paused = scenario("16");
    paused.pauses.push(lockstep::scenario::Pause {
        client: "east-1".into(),
        start_ms: 100,
        duration_ms: 1500,
    });
    for seed in 0..8 {
        let (_, v) = check(&quiet, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        assert_eq!(v.restarts.len(), 1, "seed {seed}");
        assert_eq!(
            check(&under, seed).1.exclusion,
            Exclusion::Broken,
            "seed {seed}"
        );
        assert_eq!(
            check(&persistent, seed).1.exclusion,
            Exclusion::Holds,
            "seed {seed}"
        );
        assert_eq!(
            check(&paused, seed).1.exclusion,
            Exclusion::Broken,
            "seed {seed}"
        );
    }
}

#[test]
fn a_lease_aware_majority_holder_lets_go_when_its_validity_runs_out() {
    // The east client works for 3 s, three times its 1 s lease: checking its validity, it
    // stops believing it holds the lock before the lease ends (the validity counts from its
    // first request, less the clock drift allowed), not at once and not after.
    let mut s = scenario("12");
    s.clients[0].lease_aware = true;
    s.clients[0].work_ms = 3000;
    s.validate().unwrap();
    for seed in SEEDS {
        let (run, v) = check(&s, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        let east = client(&run, "east-1");
        let began = run
            .events
            .iter()
            .position(|e| matches!(e.what, What::BeliefStarted { client, .. } if client == east))
            .unwrap_or_else(|| panic!("seed {seed}: east holds once\n{}", text(&run)));
        let asked = run.events[..began]
            .iter()
            .rev()
            .find(|e| matches!(e.what, What::AcquireSent { client, .. } if client == east))
            .unwrap()
            .at;
        let ended = run.events[began..]
            .iter()
            .find(|e| matches!(e.what, What::BeliefEnded { client, .. } if client == east))
            .unwrap();
        assert!(
            matches!(
                ended.what,
                What::BeliefEnded {
                    reason: lockstep::trace::BeliefEnd::LeaseExpiredLocally,
                    ..
                }
            ),
            "seed {seed}: {:?}",
            ended.what
        );
        assert!(
            ended.at > asked + 900_000 && ended.at <= asked + 1_000_000,
            "seed {seed}: asked at {asked}, let go at {}",
            ended.at
        );
    }
}

#[test]
fn a_restart_is_named_as_the_cause_of_an_overlap_only_inside_it() {
    // r3 restarted empty between the two holds' beginnings and granted to both: the headline
    // says so. The same restart moved before the first hold began or after the overlap ended
    // would explain nothing, and the headline leaves it out.
    let s = scenario("15");
    let (_, v) = check(&s, 0);
    let o = &v.violations[0];
    let since = o.holders[0].since_us.min(o.holders[1].since_us);
    let headline = |v: &Verdict| v.summary().lines().next().unwrap().to_string();
    assert!(
        headline(&v).contains("Service r3 granted to both"),
        "{}",
        headline(&v)
    );
    for at in [since - 1, o.to_us + 1] {
        let mut moved = v.clone();
        moved.restarts[0].at_us = at;
        assert!(
            !headline(&moved).contains("granted to both"),
            "at {at}: {}",
            headline(&moved)
        );
    }
    for at in [since, o.to_us] {
        let mut moved = v.clone();
        moved.restarts[0].at_us = at;
        assert!(
            headline(&moved).contains("granted to both"),
            "at {at}: {}",
            headline(&moved)
        );
    }
}
