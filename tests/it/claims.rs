//! One test per claim of the product brief. Each loads the claim's shipped scenario, asserts the
//! outcome the claim states, then flips one thing (the way a learner would toggle it) and
//! asserts the contrasting outcome.

use lockstep::inventory::{self, Severity};
use lockstep::scenario::{
    Fencing, FencingChecks, MigrationMode, Partition, PartitionMode, Pause, Protocol, Scenario,
    Window,
};
use lockstep::trace::{ServiceOp, What};
use lockstep::{Exclusion, Integrity};

use crate::{check, scenario};

const SEEDS: std::ops::Range<u64> = 0..12;

fn with(base: &Scenario, change: impl FnOnce(&mut Scenario)) -> Scenario {
    let mut s = base.clone();
    change(&mut s);
    s.validate()
        .unwrap_or_else(|e| panic!("the changed scenario is invalid: {e}"));
    s
}

fn single(service: &str) -> Protocol {
    Protocol::Single {
        service: service.into(),
    }
}

fn class<'a>(s: &'a mut Scenario, name: &str) -> &'a mut lockstep::scenario::ClientClass {
    s.clients
        .iter_mut()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no client class {name}"))
}

fn service<'a>(s: &'a mut Scenario, name: &str) -> &'a mut lockstep::scenario::Service {
    s.services
        .iter_mut()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no service {name}"))
}

#[test]
fn claim_01_two_services_both_grant_and_each_log_is_consistent() {
    let base = scenario("01");
    let (_, v) = check(&base, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    let first = &v.violations[0];
    let services: Vec<&str> = first
        .holders
        .iter()
        .flat_map(|h| h.grants.iter().map(|g| g.service.as_str()))
        .collect();
    assert_eq!(
        services,
        ["old", "new"],
        "one holder per service: {first:?}"
    );
    // Each service's own log is consistent (checked by `check`) and says the lock was held.
    assert_eq!(first.service_logs.len(), 2);
    for log in &first.service_logs {
        assert!(
            log.lines.iter().any(|l| l.contains("grant orders")),
            "{} logged its grant: {:?}",
            log.service,
            log.lines
        );
    }
    assert!(v.incomparable_pairs > 0);
    assert_eq!(v.overlapping_service_pairs, [["old", "new"]]);

    // Contrast: every client in one service.
    let one = with(&base, |s| class(s, "online").protocol = single("old"));
    for seed in SEEDS {
        let (_, v) = check(&one, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        assert_eq!(v.incomparable_pairs, 0, "seed {seed}");
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
    }
}

#[test]
fn claim_02_unordered_locking_in_both_deadlocks_and_leases_trade_it_for_broken_exclusion() {
    let base = scenario("02");
    for seed in SEEDS {
        let (_, v) = check(&base, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Holds,
            "seed {seed}: exclusion, while it lasts"
        );
        assert!(
            v.deadlock,
            "seed {seed}: opposite acquisition orders deadlock"
        );
        let cycle = v.wait_cycles.last().expect("a wait-for cycle");
        assert!(cycle.unbreakable && cycle.broken_us.is_none());
        assert_eq!(cycle.services.len(), 2, "the cycle spans both services");
    }

    // Contrast: leases break the cycle, and exclusion breaks instead.
    let leased = with(&base, |s| {
        for svc in &mut s.services {
            svc.lease_ms = Some(300);
        }
    });
    let (_, v) = check(&leased, base.seed);
    assert!(!v.deadlock);
    assert!(v
        .wait_cycles
        .iter()
        .any(|c| c.broken_by.as_deref() == Some("lease expiry")));
    assert!(
        v.wait_cycles.iter().all(|c| !c.unbreakable),
        "a lease can break every cycle: {:?}",
        v.wait_cycles
    );
    assert_eq!(v.exclusion, Exclusion::Broken);

    // Contrast: without leases, a client timeout breaks each cycle too: the client gives up
    // waiting and lets go of what it holds. Here both time out together, so the cycle forms
    // again at every retry, and each time it is broken.
    let impatient = with(&base, |s| {
        for c in &mut s.clients {
            c.acquire_timeout_ms = Some(300);
        }
    });
    let (_, v) = check(&impatient, base.seed);
    assert!(!v.deadlock);
    let (last, earlier) = v.wait_cycles.split_last().expect("cycles form");
    assert!(!earlier.is_empty() && earlier.iter().all(|c| c.broken_us.is_some()));
    assert!(
        !last.unbreakable,
        "a timeout can break it, even if the run ends first"
    );
}

#[test]
fn claim_03_fixed_order_avoids_cycles_but_needs_both_services_and_binds_only_followers() {
    let base = scenario("03");
    let no_outage = with(&base, |s| service(s, "east-locks").outages.clear());
    let (_, calm) = check(&no_outage, base.seed);
    let calm_idle = calm.resources[0].idle_while_waiting_us;
    for seed in SEEDS {
        let (_, v) = check(&base, seed);
        assert!(
            v.wait_cycles.is_empty(),
            "seed {seed}: no cycle with one order"
        );
        assert!(!v.deadlock);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
    }
    // An outage of either service idles the resource for about the outage's length.
    let outage = 1_500_000;
    for down in ["east-locks", "west-locks"] {
        let s = with(&no_outage, |s| {
            service(s, down).outages = vec![Window {
                start_ms: 2000,
                duration_ms: 1500,
            }]
        });
        let (_, v) = check(&s, base.seed);
        let idle = v.resources[0].idle_while_waiting_us;
        assert!(
            idle >= calm_idle + outage * 9 / 10,
            "{down} down: idle {idle} us, calm {calm_idle} us"
        );
    }
    // With one service, the other's outage does not matter.
    let one = with(&no_outage, |s| {
        class(s, "ordered").protocol = single("east-locks");
        service(s, "west-locks").outages = vec![Window {
            start_ms: 2000,
            duration_ms: 1500,
        }];
    });
    let (_, v) = check(&one, base.seed);
    assert!(v.resources[0].idle_while_waiting_us < calm_idle + outage / 10);

    // The order binds only those who follow it.
    let add = |s: &mut Scenario, name: &str, svc: &str| {
        let mut c = s.clients[0].clone();
        c.name = name.into();
        c.count = 1;
        c.protocol = single(svc);
        s.clients.push(c);
    };
    let split = with(&no_outage, |s| {
        add(s, "east-only", "east-locks");
        add(s, "west-only", "west-locks");
    });
    let (_, v) = check(&split, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    assert!(v.violations.iter().all(|x| {
        let mut who: Vec<&str> = x.holders.iter().map(|h| h.client.as_str()).collect();
        who.sort();
        who == ["east-only-1", "west-only-1"]
    }));
    let meet = with(&no_outage, |s| add(s, "west-only", "west-locks"));
    for seed in SEEDS {
        let (_, v) = check(&meet, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Holds,
            "seed {seed}: they meet at west-locks"
        );
    }
}

#[test]
fn claim_04_a_subordinate_imports_the_authoritys_order() {
    let base = scenario("04");
    for seed in SEEDS {
        let (run, v) = check(&base, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        assert_eq!(
            v.incomparable_pairs, 0,
            "one order: nothing is incomparable"
        );
        assert_authority_order(&run);
    }
    // Leases let beliefs overlap, as with any single service: pause worker-1 just after it
    // first enters its critical section, for longer than the lease.
    let leased = with(&base, |s| service(s, "authority").lease_ms = Some(300));
    let (run, _) = check(&leased, base.seed);
    let entered = run
        .events
        .iter()
        .find(|e| matches!(e.what, What::BeliefStarted { client: 0, .. }))
        .expect("worker-1 enters its critical section")
        .at;
    let leased = with(&leased, |s| {
        s.pauses.push(Pause {
            client: "worker-1".into(),
            start_ms: entered / 1000 + 1,
            duration_ms: 800,
        })
    });
    let (run, v) = check(&leased, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    assert!(
        v.lost_updates > 0,
        "without fencing the stale write loses an update"
    );
    // The newer token supersedes the paused holder at the subordinate, which does not tell it.
    let superseded = after(&run, 0, "subordinate#")
        .into_iter()
        .filter(|l| l.contains("supersede worker-1's hold"))
        .count();
    assert!(superseded > 0, "worker-1 is superseded");
    assert_authority_order(&run);
    // The authority's token checked at the resource keeps the data safe.
    let fenced = with(&leased, |s| {
        let r = &mut s.resources[0];
        r.fencing = Fencing::OneSource;
        r.fencing_source = Some("authority".into());
        r.fencing_checks = FencingChecks::AllAccesses;
    });
    let (_, v) = check(&fenced, base.seed);
    assert_eq!(
        v.exclusion,
        Exclusion::Broken,
        "fencing protects data, not belief"
    );
    assert_eq!(v.integrity, Integrity::Intact);
    assert!(v.rejected_writes + v.rejected_reads > 0);

    // The order is enforced, not assumed: the subordinate refuses a token older than one it
    // has seen. Pause worker-1 just after the authority grants it the lock, before the grant
    // reaches it, for longer than the lease. By the time it presents that token, others have
    // presented newer ones.
    let leased = with(&base, |s| service(s, "authority").lease_ms = Some(300));
    let (run, _) = check(&leased, base.seed);
    let authority = run
        .world
        .services
        .iter()
        .position(|s| s.name == "authority")
        .unwrap() as u32;
    // worker-1 is client 0, the first instance of the only class.
    let (granted_at, token) = run
        .events
        .iter()
        .find_map(|e| match e.what {
            What::Service {
                service,
                op: ServiceOp::Granted {
                    client: 0, token, ..
                },
                ..
            } if service == authority => Some((e.at, token)),
            _ => None,
        })
        .expect("the authority grants worker-1");
    let start_ms = granted_at / 1000 + 1;
    let late = with(&leased, |s| {
        s.pauses.push(Pause {
            client: "worker-1".into(),
            start_ms,
            duration_ms: 800,
        })
    });
    let (run, _) = check(&late, base.seed);
    let woke = (start_ms + 800) * 1000;
    let answer = after(&run, woke, "subordinate#")
        .into_iter()
        .find(|l| l.contains("worker-1"))
        .expect("the subordinate answers worker-1");
    assert!(
        answer.ends_with("refuse orders to worker-1 (stale authority token)"),
        "refused at once, neither queued nor granted: {answer}"
    );
    // Refused, worker-1 gives back what it holds: its release of the authority's grant (ignored,
    // as the lease has expired).
    let next = after(&run, woke, "authority#")
        .into_iter()
        .find(|l| l.contains("worker-1"))
        .expect("the authority hears from worker-1");
    let released = format!("release orders by worker-1 token {token}");
    let ignored = format!("ignore release of orders by worker-1 token {token} (not the holder)");
    assert!(
        next.ends_with(&released) || next.ends_with(&ignored),
        "worker-1 releases the authority's token first: {next}"
    );
    assert_authority_order(&run);

    // An outage of the authority stops the subordinate granting.
    let down = with(&base, |s| {
        service(s, "authority").outages = vec![Window {
            start_ms: 1000,
            duration_ms: 1000,
        }]
    });
    let (run, v) = check(&down, base.seed);
    let sub = run
        .world
        .services
        .iter()
        .position(|s| s.name == "subordinate")
        .unwrap() as u32;
    let granted_during = run.events.iter().any(|e| {
        e.at >= 1_000_000
            && e.at < 2_000_000
            && matches!(e.what, What::Service { service, op: ServiceOp::Granted { .. }, .. } if service == sub)
    });
    assert!(
        !granted_during,
        "the subordinate grants nothing while its authority is down"
    );
    let unavailable = v
        .unavailability
        .iter()
        .find(|u| u.service == "subordinate")
        .expect("the subordinate's availability is reported");
    assert_eq!(unavailable.unavailable_us, 1_000_000);
}

/// The lines starting with `head` from time `at` on.
fn after(run: &lockstep::Run, at: u64, head: &str) -> Vec<String> {
    run.events
        .iter()
        .filter(|e| e.at >= at)
        .map(|e| e.describe(&run.world))
        .filter(|l| l.starts_with(head))
        .collect()
}

/// The subordinate grants in the authority's order: ranked by the subordinate's own tokens,
/// the authority tokens the holders presented only go up.
fn assert_authority_order(run: &lockstep::Run) {
    let authority = run
        .world
        .services
        .iter()
        .position(|s| s.name == "authority")
        .unwrap() as u32;
    let mut pairs: Vec<(u64, u64)> = run
        .events
        .iter()
        .filter_map(|e| match &e.what {
            What::BeliefStarted { grants, .. } => {
                let a = grants.iter().find(|g| g.service == authority)?;
                let s = grants.iter().find(|g| g.service != authority)?;
                Some((s.token, a.token))
            }
            _ => None,
        })
        .collect();
    assert!(!pairs.is_empty());
    pairs.sort();
    assert!(
        pairs.windows(2).all(|w| w[0].1 < w[1].1),
        "the subordinate's order is the authority's: {pairs:?}"
    );
}

#[test]
fn claim_05_fencing_from_one_source_checked_on_every_access_stops_the_stale_writer() {
    let base = scenario("05");
    let fence = |checks| {
        with(&base, |s| {
            let r = &mut s.resources[0];
            r.fencing = Fencing::OneSource;
            r.fencing_source = Some("locks".into());
            r.fencing_checks = checks;
        })
    };
    // No fencing: the paused client's stale write is accepted and an update is lost.
    let (_, off) = check(&base, base.seed);
    assert_eq!(off.exclusion, Exclusion::Broken);
    assert_eq!(off.lost_updates, 1);
    assert_eq!(off.rejected_writes, 0);
    // One source, every access checked: the stale write is rejected.
    let (_, all) = check(&fence(FencingChecks::AllAccesses), base.seed);
    assert_eq!(
        all.exclusion,
        Exclusion::Broken,
        "both still believe they hold the lock"
    );
    assert_eq!(all.lost_updates, 0);
    assert_eq!(all.rejected_writes, 1);
    assert_eq!(
        all.operations.rejected, 1,
        "the stale writer's operation ends rejected"
    );
    // One source, writes only: the stale write lands before the newer holder's token has
    // reached the resource, and the newer holder's write then overwrites it.
    let (_, writes) = check(&fence(FencingChecks::Writes), base.seed);
    assert_eq!(writes.lost_updates, 1);
    assert_eq!(writes.rejected_writes, 0);

    // Two independent sources: numbers from unrelated sequences are compared, and it fails
    // both ways in one run.
    let two = with(&scenario("01"), |s| {
        s.resources[0].fencing = Fencing::AnySource;
        service(s, "new").first_token = 1;
    });
    let (_, v) = check(&two, 1);
    assert!(v.lost_updates > 0, "updates are lost");
    assert!(v.rejected_writes > 0, "valid holders are rejected");
}

#[test]
fn claim_06_partitions_make_double_grants_likely_and_one_group_stays_safe() {
    let base = scenario("06");
    let calm = with(&base, |s| s.partitions.clear());
    for seed in SEEDS {
        let (_, v) = check(&calm, seed);
        assert_eq!(
            v.exclusion,
            Exclusion::Holds,
            "seed {seed}: both sides reachable"
        );
    }
    let (_, v) = check(&base, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);

    // A probability, so a sweep: the rate of broken runs rises with the partition's length.
    let points = lockstep::sweep::partition_length(&base, &[0, 300, 1000, 2500], 20).unwrap();
    let rates: Vec<f64> = points.iter().map(|p| p.broken_rate).collect();
    assert_eq!(rates[0], 0.0, "{rates:?}");
    assert!(rates.windows(2).all(|w| w[0] <= w[1]), "{rates:?}");
    assert!(rates[3] >= 0.9, "{rates:?}");

    // One consensus group spanning the regions: the minority side cannot acquire, exclusion
    // holds, and every acquire pays a cross-region round.
    let group = with(&base, |s| {
        s.services.truncate(1);
        s.services[0].name = "global".into();
        s.services[0].replicas = vec!["east".into(), "west".into(), "central".into()];
        // Assumption: no lease expires under a holder that still acts. Lease-aware clients
        // stop believing, and stop writing, a margin before their lease may end.
        for c in &mut s.clients {
            c.protocol = single("global");
            c.lease_aware = true;
            c.lease_margin_ms = 60;
        }
        s.partitions = vec![Partition {
            start_ms: 1000,
            duration_ms: 1500,
            groups: vec![vec!["west".into()], vec!["east".into(), "central".into()]],
            mode: PartitionMode::Drop,
        }];
    });
    for seed in SEEDS {
        let (run, v) = check(&group, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        let west = v
            .unavailability
            .iter()
            .find(|u| u.region == "west")
            .unwrap();
        let east = v
            .unavailability
            .iter()
            .find(|u| u.region == "east")
            .unwrap();
        assert_eq!((west.unavailable_us, east.unavailable_us), (1_500_000, 0));
        // Every acquisition takes at least one cross-region latency: a majority of the
        // replicas is never in one region.
        let remote = group.network.remote_latency_ms * 1000;
        let mut asked: std::collections::BTreeMap<u32, u64> = Default::default();
        for e in &run.events {
            match &e.what {
                What::AcquireSent { client, .. } => {
                    asked.insert(*client, e.at);
                }
                What::BeliefStarted { client, .. } => {
                    assert!(e.at - asked[client] >= remote, "seed {seed}: {e:?}")
                }
                _ => {}
            }
        }
    }
}

#[test]
fn claim_07_incomparable_pairs_grow_as_n_choose_2() {
    let base = scenario("07");
    let (_, v) = check(&base, base.seed);
    assert_eq!(v.overlapping_service_pairs.len(), 3);
    assert_eq!(v.max_simultaneous_holders, 3, "all three at once");
    for n in 1..=4usize {
        let s = with(&base, |s| {
            let template_service = s.services[0].clone();
            let template_client = s.clients[0].clone();
            s.services = (0..n)
                .map(|i| {
                    let mut x = template_service.clone();
                    x.name = format!("s{i}");
                    x.first_token = 1 + 1000 * i as u64;
                    x
                })
                .collect();
            s.clients = (0..n)
                .map(|i| {
                    let mut c = template_client.clone();
                    c.name = format!("c{i}");
                    c.protocol = single(&format!("s{i}"));
                    c
                })
                .collect();
        });
        let (_, v) = check(&s, 1);
        assert_eq!(
            v.overlapping_service_pairs.len(),
            n * (n - 1) / 2,
            "n = {n}"
        );
        assert_eq!(v.max_simultaneous_holders as usize, n, "n = {n}");
    }
}

#[test]
fn claim_08_staggered_migration_corrupts_in_proportion_to_overlap_and_three_fixes_work() {
    let base = scenario("08");
    let (_, v) = check(&base, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    assert!(v.lost_updates > 0);
    assert!(v.service_logs.iter().all(|l| l.consistent && l.grants > 0));

    // More overlap between the two workloads, more corruption (summed over seeds).
    let lost_with_batch_until = |stop_ms: u64| -> u64 {
        let s = with(&base, |s| class(s, "batch").stop_ms = Some(stop_ms));
        (0..20).map(|seed| check(&s, seed).1.lost_updates).sum()
    };
    let none = lost_with_batch_until(3500);
    let some = lost_with_batch_until(6000);
    let most = lost_with_batch_until(10000);
    assert_eq!(none, 0, "no overlap, no corruption");
    assert!(0 < some && some < most, "{none} < {some} < {most}");

    let fixed = |s: &Scenario| {
        for seed in SEEDS {
            let (_, v) = check(s, seed);
            assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
            assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
        }
    };
    // Fix 1: move one class to the other service.
    fixed(&with(&base, |s| {
        class(s, "online").protocol = single("old")
    }));
    // Fix 2: one authoritative lock that both classes use through a token chain.
    fixed(&with(&base, |s| {
        service(s, "new").subordinate_to = Some("old".into());
        for c in &mut s.clients {
            c.protocol = Protocol::TokenChain {
                authority: "old".into(),
                subordinate: "new".into(),
            };
        }
    }));
    // Fix 3: partition the rows, so the classes never write the same ones.
    let partitioned = with(&base, |s| {
        class(s, "batch").rows = vec!["count".into()];
        class(s, "online").rows = vec!["sum".into()];
        s.resources[0].partition = vec![
            lockstep::scenario::RowShare {
                service: "old".into(),
                rows: vec!["count".into()],
            },
            lockstep::scenario::RowShare {
                service: "new".into(),
                rows: vec!["sum".into()],
            },
        ];
    });
    fixed(&partitioned);
    assert!(inventory::check(&partitioned)
        .iter()
        .all(|f| f.severity != Severity::Defect));
}

#[test]
fn claim_09_a_lock_held_across_a_migration_leaves_writes_unguarded_unless_drained_or_transferred() {
    let base = scenario("09");
    let (_, naive) = check(&base, base.seed);
    assert_eq!(naive.exclusion, Exclusion::Broken);
    assert_eq!(naive.lost_updates, 1);
    for mode in [MigrationMode::Drain, MigrationMode::Transfer] {
        let s = with(&base, |s| s.migrations[0].mode = mode);
        for seed in SEEDS {
            let (run, v) = check(&s, seed);
            assert_eq!(v.exclusion, Exclusion::Holds, "{mode:?} seed {seed}");
            assert_eq!(v.integrity, Integrity::Intact, "{mode:?} seed {seed}");
            assert_eq!(v.operations.completed, 2);
            let moved = run
                .events
                .iter()
                .any(|e| matches!(e.what, What::LockTransferred { .. }));
            assert_eq!(moved, mode == MigrationMode::Transfer);
        }
    }
}

#[test]
fn claim_10_region_local_locks_with_last_writer_wins_lose_updates() {
    let base = scenario("10");
    let (_, v) = check(&base, base.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    assert!(v.lost_updates > 0);
    let row = &v.resources[0];
    assert!(
        row.rows["likes"] < row.increments["likes"] as i64,
        "the counter ends lower than the number of increments"
    );
    // No lock at all is the same story.
    let none = with(&base, |s| {
        for c in &mut s.clients {
            c.protocol = Protocol::NoLock;
        }
    });
    assert!(check(&none, base.seed).1.lost_updates > 0);
    // One lock service spanning both regions is mutual exclusion.
    let spanning = with(&base, |s| {
        s.services.truncate(1);
        s.services[0].replicas = vec!["east".into(), "west".into(), "east".into()];
        for c in &mut s.clients {
            c.protocol = single("east-locks");
        }
    });
    for seed in SEEDS {
        let (_, v) = check(&spanning, seed);
        assert_eq!(v.exclusion, Exclusion::Holds, "seed {seed}");
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
    }
}

#[test]
fn claim_11_the_inventory_finds_resources_with_two_sources_of_order() {
    let defects = |prefix: &str| -> Vec<String> {
        inventory::check(&scenario(prefix))
            .into_iter()
            .filter(|f| f.severity == Severity::Defect)
            .map(|f| f.resource)
            .collect()
    };
    // Exactly the table two independent services protect; the token chain counts once.
    assert_eq!(defects("11"), ["orders"]);
    for prefix in ["01", "02", "03", "06", "07", "08", "10"] {
        assert!(
            !defects(prefix).is_empty(),
            "scenario {prefix} has a defect"
        );
    }
    for prefix in ["04", "05"] {
        assert!(defects(prefix).is_empty(), "scenario {prefix} is clean");
    }
    // A naive migration is a second source of order for a while; a drain or a transfer hands
    // the one source over, so the new service is neither unused nor a second source.
    let naive = inventory::check(&scenario("09"));
    assert!(
        naive
            .iter()
            .any(|f| f.severity == Severity::Defect && f.message.contains("naive migration")),
        "{naive:?}"
    );
    for mode in [MigrationMode::Drain, MigrationMode::Transfer] {
        let s = with(&scenario("09"), |s| s.migrations[0].mode = mode);
        let findings = inventory::check(&s);
        assert!(findings.is_empty(), "{mode:?}: {findings:?}");
    }
    // And the defect is real: the run of the inventory scenario breaks exclusion on orders
    // only.
    let (_, v) = check(&scenario("11"), 1);
    assert!(v.violations.iter().all(|x| x.resource == "orders"));
    assert!(!v.violations.is_empty());
}
