//! Property tests over generated scenarios.
//!
//! Scenarios are built directly as `lockstep::Scenario` values by the library's generator (the
//! fuzzer's too) from a tape of random integers, so that shrinking a failure shrinks the world
//! towards fewer, simpler parts. The seed of the run is stored in the scenario itself, and a
//! failing case prints the scenario as TOML: saving that text to a file and running
//! `lockstep run FILE` reproduces the exact run.
//!
//! The number of cases of each property is set explicitly and kept small enough for the whole
//! module to finish in seconds in a debug build.
//!
//! The generated scenarios are in `gen.rs`, the recounts of the verdict's figures in
//! `recount.rs`; the properties that need neither of those in detail are here.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use lockstep::monitor;
use lockstep::scenario::{
    Fencing, Migration, MigrationMode, Partition, PartitionMode, Pause, Protocol,
};
use lockstep::trace;
use lockstep::trace::{Event, What};
use lockstep::{Exclusion, Integrity, Run, Scenario, Verdict};

mod gen;
mod recount;

use gen::{
    any_scenario, majority_no_lease, round_trip_migration, single_service_fenced,
    single_service_no_lease, token_chain_fenced,
};

// ----- Checks ------------------------------------------------------------------------------------

/// Runs a scenario that must be valid, turning an invalid one into a test failure.
fn run(s: &Scenario) -> Result<Run, TestCaseError> {
    s.validate().map_err(|e| {
        TestCaseError::fail(format!("the generator built an invalid scenario: {e}"))
    })?;
    lockstep::run(s, s.seed)
        .map_err(|e| TestCaseError::fail(format!("a validated scenario was refused: {e}")))
}

/// For every row of every resource: its accepted increments minus how far its value rose.
fn shortfalls(
    world: &lockstep::world::World,
    verdict: &Verdict,
) -> BTreeMap<(String, String), i64> {
    let mut out = BTreeMap::new();
    for (report, cfg) in verdict.resources.iter().zip(&world.resources) {
        for (row, value) in &report.rows {
            let increments = report.increments[row] as i64;
            out.insert(
                (report.resource.clone(), row.clone()),
                increments - (value - cfg.initial),
            );
        }
    }
    out
}

/// The invariants every run of every valid scenario must satisfy.
fn check_invariants(s: &Scenario) -> Result<(), TestCaseError> {
    let run = run(s)?;
    let verdict = monitor::verdict(&run);

    for log in &verdict.service_logs {
        prop_assert!(
            log.consistent,
            "service {}'s own log is inconsistent: {:?}",
            log.service,
            log.problems
        );
    }

    for pair in run.events.windows(2) {
        prop_assert!(
            pair[0].at <= pair[1].at,
            "time goes backwards: {:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
    if let Some(last) = run.events.last() {
        prop_assert!(
            last.at <= run.end,
            "an event at {} lies after the end of the run at {}",
            last.at,
            run.end
        );
    }

    let budget = s.event_budget();
    prop_assert!(
        run.events.len() as u64 <= budget,
        "{} events recorded, over the budget of {budget}",
        run.events.len()
    );
    prop_assert_eq!(verdict.events, run.events.len() as u64);
    // A row's value only ever becomes a value read from it plus one, so it never falls below its
    // initial value and rises by at most one per accepted increment. Every shortfall is an
    // overwritten increment, and the monitor counts each one at least once.
    let shortfalls = shortfalls(&run.world, &verdict);
    for ((resource, row), shortfall) in &shortfalls {
        let increments = verdict
            .resources
            .iter()
            .find(|r| &r.resource == resource)
            .map(|r| r.increments[row] as i64)
            .unwrap_or(0);
        prop_assert!(
            (0..=increments).contains(shortfall),
            "{resource}[{row}]: {increments} increments but the value rose by {}",
            increments - shortfall
        );
    }
    let total: i64 = shortfalls.values().sum();
    prop_assert!(
        verdict.lost_updates as i64 >= total,
        "{} lost updates reported, but rows fell short of their increments by {total}",
        verdict.lost_updates
    );
    prop_assert_eq!(
        verdict.integrity == Integrity::Intact,
        verdict.lost_updates == 0
    );

    // The monitor rebuilds the resource from the trace alone; unless the trace was cut short, it
    // must agree with the model's own final state.
    if !run.truncated {
        for (report, state) in verdict.resources.iter().zip(&run.state.resources) {
            let cfg = run
                .world
                .resources
                .iter()
                .find(|r| r.name == report.resource)
                .expect("a report per resource");
            for (k, row) in cfg.rows.iter().enumerate() {
                prop_assert_eq!(report.rows[row], state.values[k]);
                prop_assert_eq!(report.increments[row], state.versions[k]);
            }
        }
    }

    prop_assert_eq!(
        verdict.exclusion == Exclusion::Holds,
        verdict.violations.is_empty()
    );
    for v in &verdict.violations {
        prop_assert!(v.from_us < v.to_us, "an empty violation: {:?}", v);
    }
    Ok(())
}

// ----- Properties --------------------------------------------------------------------------------

/// The configuration of a property with `cases` cases. Setting `PROPTEST_CASES` in the
/// environment replaces that number, for a deeper search than the default test run affords.
fn config(cases: u32) -> ProptestConfig {
    let defaults = ProptestConfig::default();
    ProptestConfig {
        cases: match std::env::var_os("PROPTEST_CASES") {
            Some(_) => defaults.cases,
            None => cases,
        },
        // Failures are reported as TOML in the test output; no regression files are written
        // next to the sources.
        failure_persistence: None,
        ..defaults
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// Every generated scenario is valid, runs without panicking, and its trace and verdict obey
    /// the invariants of the model.
    #[test]
    fn every_run_obeys_the_invariants(case in any_scenario()) {
        check_invariants(&case.0)?;
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The lost-update count is exactly how far the rows fell short of their accepted
    /// increments: an increment is lost once, when the value it wrote is overwritten by a write
    /// that did not see it, however many later writes also missed it.
    #[test]
    fn lost_updates_equal_the_shortfall_of_the_rows(case in any_scenario()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        let total: i64 = shortfalls(&run.world, &verdict).values().sum();
        prop_assert_eq!(
            verdict.lost_updates as i64,
            total,
            "lost updates reported vs. increments minus growth of the rows"
        );
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The driver's step budget is only a guard against a model that loops without recording
    /// anything, so a run cut short must have been cut by the event budget, exactly at it; a run
    /// that says it reached its budget with fewer events has spun in place.
    #[test]
    fn a_run_cut_short_used_up_its_event_budget(
        case in prop_oneof![any_scenario(), round_trip_migration()],
    ) {
        let run = run(&case.0)?;
        if run.truncated {
            prop_assert_eq!(
                run.events.len() as u64,
                case.0.event_budget(),
                "the run stopped early without using up its event budget"
            );
        }
    }
}

proptest! {
    #![proptest_config(config(384))]

    /// One independent service, whose tokens the resource checks on every access, keeps the
    /// data intact whatever leases, pauses, partitions and outages do to the clients' beliefs.
    #[test]
    fn one_fenced_service_keeps_integrity(case in single_service_fenced()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        prop_assert_eq!(
            verdict.lost_updates,
            0,
            "integrity broken under one fenced service: {}",
            verdict.summary()
        );
        prop_assert_eq!(verdict.integrity, Integrity::Intact);
    }

    /// A subordinate chain imports the authority's order; fencing with the authority's tokens on
    /// every access keeps the data intact.
    #[test]
    fn a_fenced_token_chain_keeps_integrity(case in token_chain_fenced()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        prop_assert_eq!(
            verdict.lost_updates,
            0,
            "integrity broken under a fenced token chain: {}",
            verdict.summary()
        );
    }

    /// Without leases and without pauses, one service's lock is held until its holder releases
    /// it, so no two clients ever believe they hold it at once.
    #[test]
    fn one_service_without_leases_excludes(case in single_service_no_lease()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        prop_assert!(
            verdict.violations.is_empty(),
            "exclusion broken by one service without leases: {}",
            verdict.summary()
        );
    }

    /// Majority clients of services without leases that keep their state: any two quorums of
    /// more than half share a service, which grants only one of them until it is released, so
    /// no two clients ever believe they hold the lock at once, whatever pauses, partitions and
    /// outages do; and since a try is never queued, nobody waits for anybody.
    #[test]
    fn a_majority_without_leases_or_forgetful_restarts_excludes(case in majority_no_lease()) {
        let run = run(&case.0)?;
        let verdict = monitor::verdict(&run);
        prop_assert!(
            verdict.violations.is_empty(),
            "exclusion broken by a majority without leases: {}",
            verdict.summary()
        );
        prop_assert_eq!(verdict.wait_cycle_count, 0);
    }
}

proptest! {
    #![proptest_config(config(96))]

    /// The same scenario and seed give the same trace.
    #[test]
    fn runs_are_deterministic(case in any_scenario()) {
        let first = run(&case.0)?;
        let second = run(&case.0)?;
        prop_assert_eq!(
            trace::digest(&first.events),
            trace::digest(&second.events)
        );
        prop_assert!(first.events == second.events, "equal digests of different traces");
        prop_assert_eq!(first.end, second.end);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The snapshot at an instant agrees with the verdict's violations. A violation covers
    /// `[from_us, to_us)`, and a snapshot at `t` reads every event at `t`, so a belief that
    /// starts at `t` is held then and one that ends at `t` is not: the same half-open interval.
    /// A belief still open when the run ends is cut at the end in the verdict but stays open in a
    /// snapshot, so the two agree exactly at every instant before the end, and only those are
    /// checked. The conflicting pairs of clients must match too.
    #[test]
    fn snapshots_agree_with_violations(
        case in any_scenario(),
        fractions in vec(0u64..1000, 8),
    ) {
        let run = run(&case.0)?;
        // Every overlap, not only the ones the verdict details.
        let all = monitor::scan_overlaps(&run.world, &run.events, run.end, usize::MAX).first;
        let name = |c: u32| run.world.clients[c as usize].name.clone();
        let mut instants: Vec<u64> = fractions.iter().map(|f| run.end * f / 1000).collect();
        // The edges of each violation are where an off-by-one would hide.
        for v in all.iter().take(8) {
            instants.extend([v.from.saturating_sub(1), v.from, v.to.saturating_sub(1), v.to]);
        }
        for t in instants.into_iter().filter(|t| *t < run.end) {
            let snap = monitor::snapshot(&run.world, &run.events, t);
            let mut expected: Vec<[String; 2]> = all
                .iter()
                .filter(|v| v.from <= t && t < v.to)
                .map(|v| sorted_pair(&name(v.clients[0]), &name(v.clients[1])))
                .collect();
            let mut found: Vec<[String; 2]> =
                snap.conflicts.iter().map(|c| sorted_pair(&c[0], &c[1])).collect();
            expected.sort();
            found.sort();
            prop_assert_eq!(
                snap.exclusion == Exclusion::Broken,
                !expected.is_empty(),
                "at t={}us the snapshot says {:?}",
                t,
                snap.exclusion
            );
            prop_assert_eq!(found, expected, "conflicting pairs at t={}us", t);
        }
    }
}

/// Breaks a valid scenario in one of several ways the validator must catch.
fn corrupt(s: &mut Scenario, how: u8) {
    match how {
        0 => s.duration_ms = 0,
        1 => s.duration_ms = lockstep::scenario::limits::DURATION_MS_MAX + 1,
        2 => s.clients[0].region = "nowhere".to_string(),
        3 => {
            s.clients[0].protocol = Protocol::Single {
                service: "missing".to_string(),
            }
        }
        4 => s.clients[0].count = 0,
        5 => s.resources[0].rows.clear(),
        6 => {
            s.clients[0].protocol = Protocol::TokenChain {
                authority: s.services[0].name.clone(),
                subordinate: s.services[0].name.clone(),
            }
        }
        7 => s.pauses.push(Pause {
            client: "ghost".to_string(),
            start_ms: 0,
            duration_ms: 1,
        }),
        8 => s.migrations.push(Migration {
            at_ms: 0,
            resource: s.resources[0].name.clone(),
            from: s.services[0].name.clone(),
            to: s.services[0].name.clone(),
            mode: MigrationMode::Naive,
        }),
        9 => {
            let copy = s.services[0].clone();
            s.services.push(copy);
        }
        10 => s.services[0].lease_ms = Some(0),
        11 => s.clients[0].acquire_timeout_ms = Some(0),
        12 => s.partitions.push(Partition {
            start_ms: 0,
            duration_ms: 1,
            groups: vec![s.regions.clone()],
            mode: PartitionMode::Drop,
        }),
        _ => {
            s.resources[0].fencing = Fencing::OneSource;
            s.resources[0].fencing_source = None;
        }
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// A failing case is reported as TOML, so the TOML (and the JSON of a permalink) must read
    /// back as the very scenario that failed.
    #[test]
    fn scenarios_read_back_from_toml_and_json(case in any_scenario()) {
        let toml = case.0.to_toml_string();
        let from_toml = Scenario::from_toml_str(&toml)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        prop_assert_eq!(&from_toml, &case.0);
        // The canonical text is laid out as the `toml` crate's own serializer does it.
        prop_assert_eq!(&toml, &toml::to_string(&case.0).expect("serializes"));
        let json = case.0.to_json_string();
        let from_json = Scenario::from_json_str(&json)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{json}")))?;
        prop_assert_eq!(&from_json, &case.0);
    }

    /// A broken scenario is refused with located errors, by the validator and by `run`, and
    /// nothing panics on the way.
    #[test]
    fn invalid_scenarios_are_refused(case in any_scenario(), how in 0u8..14) {
        let mut s = case.0;
        corrupt(&mut s, how);
        let errors = match s.validate() {
            Ok(()) => return Err(TestCaseError::fail(format!(
                "corruption {how} was accepted:\n{}",
                s.to_toml_string()
            ))),
            Err(errors) => errors,
        };
        prop_assert!(!errors.0.is_empty());
        for e in &errors.0 {
            prop_assert!(!e.location.is_empty() && !e.message.is_empty(), "{:?}", e);
        }
        prop_assert!(lockstep::run(&s, s.seed).is_err());
    }
}

fn sorted_pair(a: &str, b: &str) -> [String; 2] {
    if a <= b {
        [a.to_string(), b.to_string()]
    } else {
        [b.to_string(), a.to_string()]
    }
}

/// A read-modify-write with a stale read loses one update: A reads 5, B and C each add one, D
/// reads 7, A writes 6 (erasing both for the moment), and D writes 8, which carries B's and C's
/// increments forward again. Only A's increment is missing from the final 8, and it is D's
/// write, based on a read taken before A's write landed, that erased it for good.
#[test]
fn a_late_write_erases_the_stale_update_it_did_not_see() {
    let s = Scenario::from_toml_str(
        r#"
name = "stale read"
duration_ms = 1000
regions = ["east"]

[[services]]
name = "s"
replicas = ["east"]

[[resources]]
name = "t"
rows = ["x"]
initial = 5

# Four identical clients, w-1 to w-4, play A, B, C and D; only the trace below matters.
[[clients]]
name = "w"
count = 4
region = "east"
protocol = { kind = "no_lock" }
resource = "t"
period_ms = 100
work_ms = 10
"#,
    )
    .expect("a valid scenario");
    let world = lockstep::world::World::compile(&s);
    assert_eq!(world.clients.len(), 4);
    let (a, b, c, d) = (0, 1, 2, 3);
    let read = |at: u64, client: u32, value: i64| Event {
        at,
        what: What::Read {
            client,
            resource: 0,
            rows: 1,
            token: None,
            accepted: true,
            values: [value].into_iter().collect(),
        },
    };
    let write = |at: u64, client: u32, value: i64| Event {
        at,
        what: What::Write {
            client,
            resource: 0,
            rows: 1,
            token: None,
            accepted: true,
            values: [value].into_iter().collect(),
        },
    };
    let events = vec![
        read(10, a, 5),
        read(20, b, 5),
        write(30, b, 6),
        read(40, c, 6),
        write(50, c, 7),
        read(60, d, 7),
        write(70, a, 6),
        write(80, d, 8),
    ];
    let (a_write, d_write) = (6, 7);

    let verdict = monitor::verdict_of(&world, &events, 1_000_000, false, 0);
    assert_eq!(verdict.lost_updates, 1, "{}", verdict.summary());
    assert_eq!(verdict.lost_update_details.len(), 1);
    let detail = &verdict.lost_update_details[0];
    assert_eq!(detail.lost_writer, world.clients[a as usize].name);
    assert_eq!(detail.lost_at_us, 70);
    assert_eq!(detail.overwritten_by, world.clients[d as usize].name);
    assert_eq!(detail.overwritten_at_us, 80);

    let lost = monitor::lost_updates(&world, &events, usize::MAX);
    assert_eq!(lost.total, 1);
    assert_eq!(
        lost.details,
        vec![monitor::LostIncrement {
            resource: 0,
            row: 0,
            lost: a_write,
            by: d_write,
        }]
    );
    // The mark is on D's write alone: A's write erased B's and C's increments only until D's
    // write brought them back.
    assert_eq!(lost.marks, vec![(d_write, 1)]);
    assert!(lost.marks.iter().all(|(event, _)| *event != a_write));
}

/// The trace of a scenario taken step by step, earliest first, with every lease expiry kept in
/// the agenda from the moment its lease begins: the simulator as it would be without lazy
/// leases.
fn eager_trace(s: &Scenario) -> Vec<Event> {
    let world = lockstep::world::World::compile(s);
    let mut choices = lockstep::sim::SeededChoices::new(&world, s.seed);
    let mut state = lockstep::model::State::initial(&world, &mut choices);
    state.set_horizon(world.duration);
    let budget = world.event_budget as usize;
    let mut events = Vec::new();
    while events.len() < budget {
        let Some(item) = state.pop_earliest() else {
            break;
        };
        if item.at > world.duration {
            break;
        }
        state.apply(&world, item, &mut choices, &mut events);
    }
    events.truncate(budget);
    events
}

proptest! {
    #![proptest_config(config(256))]

    /// The simulator keeps lease expiries lazily (only one that could still do something waits
    /// in its agenda); that must change nothing in the trace, including expiries put off by an
    /// outage and leases carried over by a transfer.
    #[test]
    fn lazy_lease_expiries_change_nothing(
        case in prop_oneof![any_scenario(), round_trip_migration()],
    ) {
        let lazy = run(&case.0)?;
        let eager = eager_trace(&case.0);
        prop_assert_eq!(lazy.events.len(), eager.len(), "event counts");
        if let Some(i) = lazy.events.iter().zip(&eager).position(|(a, b)| a != b) {
            prop_assert!(
                false,
                "first difference at event {}: lazy {:?}, eager {:?}",
                i,
                lazy.events[i],
                eager[i]
            );
        }
    }
}

/// Lazy lease expiries on a lock that has two expiry steps waiting at once: a transfer brings in
/// a hold whose lease (from a service with short leases) ends before the stale expiry of the
/// lock's own earlier hold. The next holder's expiry then waits outside the agenda, and goes in
/// behind the stale one. Every step is checked by the model's invariants, and the trace must be
/// the one with every expiry kept.
#[test]
fn lazy_expiries_behind_a_transferred_shorter_lease_change_nothing() {
    let s = Scenario::from_toml_str(
        r#"
        name = "a short lease transferred in"
        duration_ms = 2000
        regions = ["east"]
        resources = [{ name = "r", region = "east", rows = ["x"] }]
        services = [
          { name = "a", replicas = ["east"], lease_ms = 100 },
          { name = "b", replicas = ["east"], lease_ms = 1000, first_token = 100 },
        ]
        migrations = [{ at_ms = 250, resource = "r", from = "a", to = "b", mode = "transfer" }]
        [[clients]]
        name = "early"
        region = "east"
        protocol = { kind = "single", service = "b" }
        resource = "r"
        period_ms = 100
        work_ms = 1
        max_operations = 1
        [[clients]]
        name = "mover"
        region = "east"
        start_ms = 200
        protocol = { kind = "single", service = "a" }
        resource = "r"
        period_ms = 100
        work_ms = 80
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "east"
        start_ms = 260
        protocol = { kind = "single", service = "b" }
        resource = "r"
        period_ms = 100
        work_ms = 50
        max_operations = 1
        "#,
    )
    .unwrap();
    let run = lockstep::run(&s, s.seed).unwrap();
    let story = trace::render(&run.world, &run.events);
    // The waiter is granted in b while the transferred lease (about 300 ms) is still to run out,
    // and b's first lease (about 1000 ms) after that.
    let grant = run
        .events
        .iter()
        .find(|e| e.describe(&run.world).contains("grant r to waiter-1"))
        .unwrap_or_else(|| panic!("the waiter is never granted:\n{story}"));
    assert!(
        (250_000..300_000).contains(&grant.at),
        "the waiter is granted at {} µs:\n{story}",
        grant.at
    );
    assert!(story.contains("transfer"), "{story}");
    assert_eq!(run.events, eager_trace(&s), "{story}");
}

/// A lease that runs out exactly when the run ends still expires in it, kept lazily or not: the
/// simulator takes steps due at its end.
#[test]
fn a_lease_that_ends_with_the_run_expires_in_it() {
    let s = Scenario::from_toml_str(
        r#"
        name = "a lease to the end"
        duration_ms = 1001
        regions = ["east"]
        network = { local_latency_ms = 1, jitter_ms = 0 }
        resources = [{ name = "r", region = "east", rows = ["x"] }]
        services = [{ name = "s", replicas = ["east"], lease_ms = 1000 }]
        [[clients]]
        name = "holder"
        region = "east"
        protocol = { kind = "single", service = "s" }
        resource = "r"
        period_ms = 100
        work_ms = 5000
        max_operations = 1
        "#,
    )
    .unwrap();
    let run = lockstep::run(&s, s.seed).unwrap();
    let story = trace::render(&run.world, &run.events);
    let last = run.events.last().expect("the run records events");
    assert_eq!(last.at, run.end, "{story}");
    assert!(
        last.describe(&run.world).contains("expire"),
        "the last event is not the expiry:\n{story}"
    );
    assert_eq!(run.events, eager_trace(&s), "{story}");
}
