//! Verdicts that once disagreed with their own trace, each pinned by a scenario in
//! `tests/it/regressions/verdicts/` and a statement a reader can check on the timeline.

use lockstep::inventory::{self, Severity};
use lockstep::scenario::{ClientClass, Protocol, Scenario};
use lockstep::trace::What;
use lockstep::{Exclusion, Integrity};

use crate::{check, scenario};

fn regression(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/regressions/verdicts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn class<'a>(s: &'a mut Scenario, name: &str) -> &'a mut ClientClass {
    s.clients
        .iter_mut()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no client class {name}"))
}

#[test]
fn a_read_that_lands_after_its_client_let_go_opens_no_window() {
    let s = regression("interleaved-after-let-go.toml");
    let mut exercised = 0;
    for seed in 1..=20 {
        let (run, v) = check(&s, seed);
        let late = run
            .world
            .clients
            .iter()
            .position(|c| c.name == "late-1")
            .unwrap() as u32;
        // The case the scenario is for: late's read lands after it let go.
        let ended = run
            .events
            .iter()
            .position(|e| matches!(e.what, What::BeliefEnded { client, .. } if client == late));
        let read = run
            .events
            .iter()
            .position(|e| matches!(e.what, What::Read { client, .. } if client == late));
        if let (Some(ended), Some(read)) = (ended, read) {
            if read > ended {
                exercised += 1;
            }
        }
        assert_eq!(v.interleaved_writes, 0, "seed {seed}");
        assert_eq!(v.integrity, Integrity::Intact, "seed {seed}");
    }
    assert!(
        exercised > 0,
        "no seed had a read land after its client let go"
    );
}

#[test]
fn a_table_nobody_locks_has_no_source_of_order_and_its_runs_are_never_safe() {
    let s = regression("no-lock-only.toml");
    let findings = inventory::check(&s);
    assert!(
        findings.iter().any(|f| f.severity == Severity::Defect
            && f.resource == "hits"
            && f.message.contains("no source of order")),
        "{findings:?}"
    );
    let mut lost = 0;
    for seed in 1..=5 {
        let (_, v) = check(&s, seed);
        assert_eq!(v.exclusion, Exclusion::Broken, "seed {seed}");
        let headline = v.summary().lines().next().unwrap().to_string();
        assert!(headline.starts_with("Exclusion broken"), "{headline}");
        assert!(headline.contains("no lock at all"), "{headline}");
        assert_eq!(v.unprotected_clients, ["east-app-1", "west-app-1"]);
        lost += v.lost_updates;
    }
    assert!(lost > 0, "last writer wins loses updates");

    // One client alone cannot overlap with anyone, but the page must still not read as safe.
    let alone = {
        let mut a = s.clone();
        a.clients.retain(|c| c.name == "east-app");
        a
    };
    let (_, v) = check(&alone, 1);
    assert_eq!(v.exclusion, Exclusion::Holds);
    let headline = v.summary().lines().next().unwrap().to_string();
    assert!(
        headline.starts_with("Exclusion holds, but only by luck")
            && headline.contains("east-app-1 took no lock"),
        "{headline}"
    );
}

#[test]
fn a_lockless_client_inside_a_holders_critical_section_breaks_exclusion() {
    // Claim 5's scenario with its slow client taking no lock: its read-modify-write overlaps the
    // lock holder's.
    let mut s = scenario("05");
    class(&mut s, "slow").protocol = Protocol::NoLock;
    let (_, v) = check(&s, s.seed);
    assert_eq!(v.exclusion, Exclusion::Broken);
    let mixed = v.violations.iter().any(|o| {
        o.holders.iter().any(|h| h.grants.is_empty())
            && o.holders.iter().any(|h| !h.grants.is_empty())
    });
    assert!(mixed, "one side without a lock, one with");
    // An overlap with a lockless client is not an incomparable grant pair: it has no grant.
    assert_eq!(v.incomparable_pairs, 0);
}

#[test]
fn incomparable_pairs_count_overlaps_that_no_single_service_ordered() {
    // Two independent services, one class on each: overlaps with unrelated orders.
    let (_, v) = check(&scenario("01"), 1);
    assert!(v.incomparable_pairs > 0);
    assert!(v.incomparable_pairs <= v.violation_count);

    // The fixed order, when every class follows it: clients meet at the first service, so
    // their grants never overlap in belief, and one client's own grants are never a pair.
    let mut ordered = scenario("03");
    let services = ordered
        .services
        .iter()
        .map(|s| s.name.clone())
        .collect::<Vec<_>>();
    for c in &mut ordered.clients {
        c.protocol = Protocol::AllOrdered {
            services: services.clone(),
            skip_unreachable: false,
        };
    }
    ordered.validate().unwrap();
    for seed in 0..8 {
        let (_, v) = check(&ordered, seed);
        assert_eq!(v.incomparable_pairs, 0, "fixed order, seed {seed}");
        assert!(v.overlapping_service_pairs.is_empty(), "seed {seed}");
    }

    // Partitioned rows: each service protects rows the other never touches.
    let mut partitioned = scenario("08");
    class(&mut partitioned, "batch").rows = vec!["count".into()];
    class(&mut partitioned, "online").rows = vec!["sum".into()];
    partitioned.resources[0].partition = vec![
        lockstep::scenario::RowShare {
            service: "old".into(),
            rows: vec!["count".into()],
        },
        lockstep::scenario::RowShare {
            service: "new".into(),
            rows: vec!["sum".into()],
        },
    ];
    partitioned.validate().unwrap();
    for seed in 0..8 {
        let (_, v) = check(&partitioned, seed);
        assert_eq!(v.incomparable_pairs, 0, "partitioned rows, seed {seed}");
        assert_eq!(v.max_simultaneous_holders, 1, "seed {seed}");
    }
}

#[test]
fn a_livelock_is_its_own_finding_and_each_cycle_names_what_broke_it() {
    let s = regression("livelock-two-services.toml");
    for seed in 1..=4 {
        let (_, v) = check(&s, seed);
        assert!(!v.deadlock, "timeouts break every cycle");
        assert_eq!(v.operations.completed, 0, "seed {seed}");
        assert_eq!(v.livelock_count, 1, "seed {seed}");
        let l = &v.livelocks[0];
        assert!(l.broken_cycles >= 2);
        assert_eq!(l.clients, ["east-app-1", "west-app-1"]);
        assert!(v.summary().contains("Livelock: from t="), "{}", v.summary());
        // Every cycle was broken by a client's own timeout: the release or cancel that removed
        // its edge was sent because the client gave up.
        for c in v.wait_cycles.iter().filter(|c| c.broken_us.is_some()) {
            assert_eq!(c.broken_by.as_deref(), Some("client timeout"), "{c:?}");
        }
    }

    // With leases instead of timeouts, the service ends the cycle: a lease expiry.
    let mut leased = scenario("02");
    for svc in &mut leased.services {
        svc.lease_ms = Some(300);
    }
    leased.validate().unwrap();
    let (_, v) = check(&leased, 1);
    assert!(!v.wait_cycles.is_empty());
    let first = &v.wait_cycles[0];
    assert_eq!(
        first.broken_by.as_deref(),
        Some("lease expiry"),
        "{first:?}"
    );

    // With neither, the cycle stands forever: a deadlock, and no livelock.
    let (_, v) = check(&scenario("02"), 1);
    assert!(v.deadlock);
    assert!(v.livelocks.is_empty());
}

#[test]
fn a_run_where_operations_complete_between_cycles_is_not_a_livelock() {
    // Claim 2 with leases: cycles form and lease expiry breaks them, but writes land between
    // them, so no stall holds two broken cycles.
    for prefix in ["01", "03", "04", "05", "06", "07", "08", "09", "10", "11"] {
        let s = scenario(prefix);
        let (_, v) = check(&s, s.seed);
        assert_eq!(v.livelock_count, 0, "scenario {prefix}");
    }
}

#[test]
fn a_sweep_counts_every_overlap_not_only_the_detailed_ones() {
    // Two independent services overlap all the time: a long run has hundreds of overlaps.
    let mut s = scenario("01");
    s.duration_ms = 100_000;
    // Fencing off, as the scenario has it: the sweep's one value leaves the run as it is.
    let param = lockstep::sweep::Param::Fencing;
    let (_, v) = check(&param.apply(&s, 0), 0);
    assert!(
        v.violation_count > v.violations.len() as u64,
        "the run must have more overlaps than the verdict details"
    );
    let points = lockstep::sweep::sweep(&s, param, &[0], 1).expect("a valid sweep");
    assert_eq!(points[0].mean_violations, v.violation_count as f64);
}

#[test]
fn the_summary_totals_overlaps_livelocks_and_cycles_only_past_what_it_lists() {
    // A livelock of two clients: one stretch, several cycles, no overlap. The words give a
    // total only where there is more than the lines list: overlaps past the first, livelocks
    // past one, cycles past the ten listed.
    let s = regression("livelock-two-services.toml");
    let (_, v) = check(&s, 1);
    assert_eq!(v.livelock_count, 1);
    assert!(v.wait_cycles.len() >= 2);
    let words = v.summary();
    assert!(!words.contains("Livelocks:"), "{words}");
    assert!(!words.contains("Majority locks"), "{words}");

    let mut two = v.clone();
    two.livelock_count = 2;
    assert!(
        two.summary().contains("Livelocks: 2 stretch(es)"),
        "{}",
        two.summary()
    );

    let mut listed = v.clone();
    listed.wait_cycles.truncate(10);
    listed.wait_cycle_count = 10;
    assert!(
        !listed.summary().contains("more cycle"),
        "{}",
        listed.summary()
    );
    listed.wait_cycle_count = 11;
    assert!(
        listed.summary().contains("  ... and 1 more cycle(s)\n"),
        "{}",
        listed.summary()
    );

    // Two independent services: overlaps all the time.
    let (_, v) = check(&scenario("01"), 1);
    assert!(v.violation_count > 1);
    let headline = |v: &lockstep::Verdict| v.summary().lines().next().unwrap().to_string();
    assert!(
        headline(&v).ends_with(&format!("({} overlaps in all.)", v.violation_count)),
        "{}",
        headline(&v)
    );
    let mut one = v.clone();
    one.violation_count = 1;
    assert!(!headline(&one).contains("in all"), "{}", headline(&one));
}

#[test]
fn a_verdict_names_the_classes_that_completed_nothing() {
    let (_, v) = check(&regression("livelock-two-services.toml"), 1);
    assert_eq!(v.operations.completed, 0);
    assert_eq!(v.starved_classes(), ["east-app", "west-app"]);
    assert!(
        v.summary()
            .contains("Class east-app completed no operation: its clients got no work done."),
        "{}",
        v.summary()
    );
    let (_, v) = check(&scenario("03"), 1);
    assert!(v.class_work.iter().all(|w| w.completed > 0));
    assert!(v.starved_classes().is_empty());
}

#[test]
fn a_verdicts_json_has_the_majority_counts_only_where_they_happened() {
    // The counts of missed quorums and spent validity belong to majority locks: a run without
    // any leaves them out of its JSON, a run with one gives it.
    let (_, v) = check(&scenario("01"), 1);
    let json = serde_json::to_value(&v).unwrap();
    let operations = json["operations"].as_object().unwrap();
    assert!(operations.contains_key("completed"));
    assert!(!operations.contains_key("quorums_missed"), "{operations:?}");
    assert!(!operations.contains_key("validity_spent"), "{operations:?}");
    let (_, v) = check(&scenario("14"), 1);
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["operations"]["validity_spent"], 1);
    assert_eq!(
        json["operations"]["quorums_missed"],
        v.operations.quorums_missed
    );
    assert!(v.summary().contains("Majority locks: "), "{}", v.summary());
}

#[test]
fn outages_that_run_into_each_other_are_one_stretch_of_unavailability() {
    // east-locks is down from 2 s to 3.5 s and again from 3 s to 4.5 s: one window of 2.5 s
    // for its clients' region, an outage throughout, however many edges fall inside it.
    let mut s = scenario("03");
    s.services[0].outages = vec![
        lockstep::scenario::Window {
            start_ms: 2000,
            duration_ms: 1500,
        },
        lockstep::scenario::Window {
            start_ms: 3000,
            duration_ms: 1500,
        },
    ];
    s.validate().unwrap();
    let (run, v) = check(&s, 1);
    let windows = lockstep::monitor::unavailable_windows(&run.world, run.world.duration);
    let of_east: Vec<(u64, u64, bool)> = windows
        .iter()
        .filter(|w| w.service == 0)
        .map(|w| (w.from, w.to, w.outage))
        .collect();
    assert_eq!(of_east, [(2_000_000, 4_500_000, true)]);
    assert!(
        v.summary()
            .contains("Service east-locks unavailable to east (ordered) for 2.500s."),
        "{}",
        v.summary()
    );
}
