//! Property tests over generated scenarios.
//!
//! Scenarios are built directly as `lockstep::Scenario` values from small random integers, so
//! that shrinking a failure shrinks the world towards fewer, simpler parts. The seed of the run is
//! stored in the scenario itself, and a failing case prints the scenario as TOML: saving that text
//! to a file and running `lockstep run FILE` reproduces the exact run.
//!
//! The number of cases of each property is set explicitly and kept small enough for the whole
//! module to finish in seconds in a debug build.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use lockstep::monitor;
use lockstep::scenario::{
    ClientClass, Fencing, FencingChecks, Migration, MigrationMode, Network, Partition,
    PartitionMode, Pause, Protocol, Resource, Service, Window,
};
use lockstep::trace;
use lockstep::trace::{BeliefEnd, Event, GrantRef, ServiceOp, What};
use lockstep::{Exclusion, Integrity, Run, Scenario, Verdict};

// ----- Generated scenarios -----------------------------------------------------------------------

/// A generated scenario. Its `Debug` form is the scenario as TOML (the seed included), so that
/// proptest's report of a minimal failing input is a file the command line can run as it is.
#[derive(Clone)]
struct Case(Scenario);

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scenario with seed {} (save as a .toml file and run `lockstep run FILE`):\n{}",
            self.0.seed,
            self.0.to_toml_string()
        )
    }
}

#[derive(Clone, Debug)]
struct RawService {
    replicas: Vec<usize>,
    lease_ms: Option<u64>,
    first_token: u64,
    outages: Vec<(u64, u64)>,
    subordinate_to: Option<usize>,
}

#[derive(Clone, Debug)]
struct RawResource {
    region: Option<usize>,
    rows: usize,
    initial: i64,
    fencing: u8,
    source: usize,
    all_accesses: bool,
}

#[derive(Clone, Debug)]
struct RawProtocol {
    kind: u8,
    services: Vec<usize>,
    skip_unreachable: bool,
}

#[derive(Clone, Debug)]
struct RawTimings {
    start_ms: u64,
    stop_ms: Option<u64>,
    period_ms: u64,
    jitter_ms: u64,
    work_ms: u64,
    acquire_timeout_ms: Option<u64>,
    max_retries: u32,
    retry_backoff_ms: u64,
    lease_aware: bool,
    lease_margin_ms: u64,
    max_operations: Option<u32>,
}

#[derive(Clone, Debug)]
struct RawClass {
    count: u32,
    region: usize,
    protocol: RawProtocol,
    resource: usize,
    rows: u8,
    timings: RawTimings,
}

#[derive(Clone, Debug)]
struct RawPartition {
    start_ms: u64,
    duration_ms: u64,
    group_of: Vec<u8>,
    delay: bool,
}

#[derive(Clone, Debug)]
struct RawPause {
    class: usize,
    instance: Option<u32>,
    start_ms: u64,
    duration_ms: u64,
}

#[derive(Clone, Debug)]
struct RawMigration {
    at_ms: u64,
    resource: usize,
    from: usize,
    to: usize,
    mode: u8,
}

#[derive(Clone, Debug)]
struct RawScenario {
    seed: u64,
    duration_ms: u64,
    max_events: Option<u64>,
    regions: usize,
    network: (u64, u64, u64),
    services: Vec<RawService>,
    resources: Vec<RawResource>,
    classes: Vec<RawClass>,
    partitions: Vec<RawPartition>,
    pauses: Vec<RawPause>,
    migrations: Vec<RawMigration>,
}

fn raw_service() -> impl Strategy<Value = RawService> {
    (
        vec(0usize..3, 1..=5),
        option::of(20u64..=1500),
        1u64..=1000,
        vec((0u64..3000, 1u64..=800), 0..=2),
        option::of(0usize..4),
    )
        .prop_map(
            |(replicas, lease_ms, first_token, outages, subordinate_to)| RawService {
                replicas,
                lease_ms,
                first_token,
                outages,
                subordinate_to,
            },
        )
}

fn raw_resource() -> impl Strategy<Value = RawResource> {
    (
        option::of(0usize..3),
        1usize..=4,
        -5i64..=5,
        0u8..3,
        0usize..4,
        any::<bool>(),
    )
        .prop_map(
            |(region, rows, initial, fencing, source, all_accesses)| RawResource {
                region,
                rows,
                initial,
                fencing,
                source,
                all_accesses,
            },
        )
}

fn raw_timings() -> impl Strategy<Value = RawTimings> {
    (
        (
            0u64..=500,
            option::of(0u64..=3000),
            // Think times shorter than the network's jitter let one operation's last message
            // and the next operation's first overtake each other, so they get extra weight.
            prop_oneof![1 => 0u64..=3, 3 => 0u64..=300],
            0u64..=50,
            0u64..=300,
            option::of(1u64..=400),
        ),
        (
            0u32..=4,
            0u64..=150,
            any::<bool>(),
            0u64..=50,
            option::of(1u32..=8),
        ),
    )
        .prop_map(
            |(
                (start_ms, stop_ms, period_ms, jitter_ms, work_ms, acquire_timeout_ms),
                (max_retries, retry_backoff_ms, lease_aware, lease_margin_ms, max_operations),
            )| RawTimings {
                start_ms,
                stop_ms,
                period_ms,
                jitter_ms,
                work_ms,
                acquire_timeout_ms,
                max_retries,
                retry_backoff_ms,
                lease_aware,
                lease_margin_ms,
                max_operations,
            },
        )
}

fn raw_class() -> impl Strategy<Value = RawClass> {
    (
        1u32..=3,
        0usize..3,
        (0u8..5, vec(0usize..4, 1..=3), any::<bool>()),
        0usize..2,
        any::<u8>(),
        raw_timings(),
    )
        .prop_map(
            |(count, region, (kind, services, skip_unreachable), resource, rows, timings)| {
                RawClass {
                    count,
                    region,
                    protocol: RawProtocol {
                        kind,
                        services,
                        skip_unreachable,
                    },
                    resource,
                    rows,
                    timings,
                }
            },
        )
}

fn raw_partition() -> impl Strategy<Value = RawPartition> {
    (0u64..3000, 1u64..=1500, vec(0u8..3, 3), any::<bool>()).prop_map(
        |(start_ms, duration_ms, group_of, delay)| RawPartition {
            start_ms,
            duration_ms,
            group_of,
            delay,
        },
    )
}

fn raw_pause() -> impl Strategy<Value = RawPause> {
    (0usize..4, option::of(0u32..3), 0u64..3000, 1u64..=1500).prop_map(
        |(class, instance, start_ms, duration_ms)| RawPause {
            class,
            instance,
            start_ms,
            duration_ms,
        },
    )
}

fn raw_migration() -> impl Strategy<Value = RawMigration> {
    (0u64..3000, 0usize..2, 0usize..4, 0usize..4, 0u8..3).prop_map(
        |(at_ms, resource, from, to, mode)| RawMigration {
            at_ms,
            resource,
            from,
            to,
            mode,
        },
    )
}

fn raw_scenario() -> impl Strategy<Value = RawScenario> {
    (
        (
            any::<u64>(),
            500u64..=3000,
            // The budget is always set, and kept low enough that a run which spins in place
            // hits it in a fraction of a second.
            prop_oneof![4 => 2000u64..=20_000, 1 => 50u64..=2000].prop_map(Some),
            1usize..=3,
            (0u64..=3, 5u64..=60, 0u64..=5),
        ),
        (
            vec(raw_service(), 1..=4),
            vec(raw_resource(), 1..=2),
            vec(raw_class(), 1..=4),
            vec(raw_partition(), 0..=2),
            vec(raw_pause(), 0..=2),
            vec(raw_migration(), 0..=2),
        ),
    )
        .prop_map(
            |(
                (seed, duration_ms, max_events, regions, network),
                (services, resources, classes, partitions, pauses, migrations),
            )| RawScenario {
                seed,
                duration_ms,
                max_events,
                regions,
                network,
                services,
                resources,
                classes,
                partitions,
                pauses,
                migrations,
            },
        )
}

/// Turns raw numbers into a valid scenario. Every index is taken modulo the number of things it
/// can name, and every choice the validator would reject is replaced by a nearby valid one, so
/// all generated scenarios are valid.
fn build(raw: &RawScenario) -> Scenario {
    let regions: Vec<String> = (0..raw.regions).map(|i| format!("r{i}")).collect();
    let region = |i: usize| regions[i % regions.len()].clone();

    let mut services: Vec<Service> = Vec::new();
    for (i, s) in raw.services.iter().enumerate() {
        // A subordinate must defer to an earlier service that is itself independent, which keeps
        // chains one step long, as the validator requires.
        let subordinate_to = match s.subordinate_to {
            Some(j) if i > 0 => {
                let a: &Service = &services[j % i];
                a.subordinate_to.is_none().then(|| a.name.clone())
            }
            _ => None,
        };
        services.push(Service {
            name: format!("s{i}"),
            replicas: s.replicas.iter().map(|r| region(*r)).collect(),
            subordinate_to,
            lease_ms: s.lease_ms,
            first_token: s.first_token,
            protects: Vec::new(),
            outages: s
                .outages
                .iter()
                .map(|(start_ms, duration_ms)| Window {
                    start_ms: *start_ms,
                    duration_ms: *duration_ms,
                })
                .collect(),
        });
    }
    let service_name = |i: usize| services[i % services.len()].name.clone();

    let resources: Vec<Resource> = raw
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (fencing, fencing_source) = match r.fencing {
                0 => (Fencing::Off, None),
                1 => (Fencing::AnySource, None),
                _ => (Fencing::OneSource, Some(service_name(r.source))),
            };
            Resource {
                name: format!("t{i}"),
                region: r.region.map(region),
                rows: (0..r.rows).map(|k| format!("row{k}")).collect(),
                initial: r.initial,
                fencing,
                fencing_source,
                fencing_checks: if r.all_accesses {
                    FencingChecks::AllAccesses
                } else {
                    FencingChecks::Writes
                },
                partition: Vec::new(),
            }
        })
        .collect();

    let subordinates: Vec<&Service> = services
        .iter()
        .filter(|s| s.subordinate_to.is_some())
        .collect();
    let clients: Vec<ClientClass> = raw
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let p = &c.protocol;
            let mut listed: Vec<String> = Vec::new();
            for s in &p.services {
                let name = service_name(*s);
                if !listed.contains(&name) {
                    listed.push(name);
                }
            }
            let protocol = match p.kind {
                1 => Protocol::AllUnordered {
                    services: listed,
                    skip_unreachable: p.skip_unreachable,
                },
                2 => Protocol::AllOrdered {
                    services: listed,
                    skip_unreachable: p.skip_unreachable,
                },
                // A token chain needs a real subordinate; without one the class locks singly.
                3 if !subordinates.is_empty() => {
                    let sub = subordinates[p.services[0] % subordinates.len()];
                    Protocol::TokenChain {
                        authority: sub.subordinate_to.clone().expect("a subordinate"),
                        subordinate: sub.name.clone(),
                    }
                }
                4 => Protocol::NoLock,
                _ => Protocol::Single {
                    service: listed[0].clone(),
                },
            };
            let resource = &resources[c.resource % resources.len()];
            let rows: Vec<String> = resource
                .rows
                .iter()
                .enumerate()
                .filter(|(k, _)| c.rows & (1 << k) != 0)
                .map(|(_, name)| name.clone())
                .collect();
            let t = &c.timings;
            ClientClass {
                name: format!("c{i}"),
                count: c.count,
                region: region(c.region),
                protocol,
                resource: resource.name.clone(),
                rows,
                start_ms: t.start_ms,
                stop_ms: t.stop_ms,
                period_ms: t.period_ms,
                jitter_ms: t.jitter_ms,
                // Operations must take some time; the validator rejects a class whose think
                // time and work are both zero.
                work_ms: if t.period_ms == 0 && t.work_ms == 0 {
                    1
                } else {
                    t.work_ms
                },
                acquire_timeout_ms: t.acquire_timeout_ms,
                max_retries: t.max_retries,
                retry_backoff_ms: t.retry_backoff_ms,
                lease_aware: t.lease_aware,
                lease_margin_ms: t.lease_margin_ms,
                max_operations: t.max_operations,
            }
        })
        .collect();

    // A partition needs two regions to cut apart; with one region there are none.
    let partitions: Vec<Partition> = if regions.len() < 2 {
        Vec::new()
    } else {
        raw.partitions
            .iter()
            .map(|p| {
                let mut groups = vec![Vec::new(), Vec::new()];
                for (r, name) in regions.iter().enumerate() {
                    let g = p.group_of[r] as usize;
                    if g < 2 {
                        groups[g].push(name.clone());
                    }
                }
                Partition {
                    start_ms: p.start_ms,
                    duration_ms: p.duration_ms,
                    groups,
                    mode: if p.delay {
                        PartitionMode::Delay
                    } else {
                        PartitionMode::Drop
                    },
                }
            })
            .collect()
    };

    let pauses: Vec<Pause> = raw
        .pauses
        .iter()
        .map(|p| {
            let class = &clients[p.class % clients.len()];
            Pause {
                client: match p.instance {
                    Some(k) => format!("{}-{}", class.name, k % class.count + 1),
                    None => class.name.clone(),
                },
                start_ms: p.start_ms,
                duration_ms: p.duration_ms,
            }
        })
        .collect();

    // Migrations move a resource between two different independent services.
    let independent: Vec<&Service> = services
        .iter()
        .filter(|s| s.subordinate_to.is_none())
        .collect();
    let migrations: Vec<Migration> = if independent.len() < 2 {
        Vec::new()
    } else {
        raw.migrations
            .iter()
            .map(|m| {
                let n = independent.len();
                let from = m.from % n;
                let to = if m.to % n == from {
                    (from + 1) % n
                } else {
                    m.to % n
                };
                Migration {
                    at_ms: m.at_ms,
                    resource: resources[m.resource % resources.len()].name.clone(),
                    from: independent[from].name.clone(),
                    to: independent[to].name.clone(),
                    mode: match m.mode {
                        0 => MigrationMode::Naive,
                        1 => MigrationMode::Drain,
                        _ => MigrationMode::Transfer,
                    },
                }
            })
            .collect()
    };

    let (local, remote, jitter) = raw.network;
    Scenario {
        name: "generated".to_string(),
        description: String::new(),
        duration_ms: raw.duration_ms,
        seed: raw.seed,
        max_events: raw.max_events,
        regions: regions.clone(),
        network: Network {
            local_latency_ms: local,
            remote_latency_ms: remote,
            jitter_ms: jitter,
            links: Vec::new(),
        },
        services,
        resources,
        clients,
        partitions,
        pauses,
        migrations,
    }
}

/// Any valid scenario the generator can build, with any seed.
fn any_scenario() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| Case(build(&raw)))
}

/// A resource moved from one independent service to another and later back again, with the
/// first class locking in the service it starts in.
fn round_trip_migration() -> impl Strategy<Value = Case> {
    (raw_scenario(), 0u64..1500, 1u64..=1000, 0u8..3, 0u8..3).prop_map(
        |(raw, at_ms, gap_ms, there, back)| {
            let mut s = build(&raw);
            let mut independent: Vec<String> = s
                .services
                .iter()
                .filter(|x| x.subordinate_to.is_none())
                .map(|x| x.name.clone())
                .collect();
            for extra in ["m0", "m1"] {
                if independent.len() < 2 {
                    let mut copy = s.services[0].clone();
                    copy.name = extra.to_string();
                    copy.subordinate_to = None;
                    s.services.push(copy);
                    independent.push(extra.to_string());
                }
            }
            let (a, b) = (independent[0].clone(), independent[1].clone());
            let mode = |m: u8| match m {
                0 => MigrationMode::Naive,
                1 => MigrationMode::Drain,
                _ => MigrationMode::Transfer,
            };
            s.clients[0].protocol = Protocol::Single { service: a.clone() };
            let resource = s.clients[0].resource.clone();
            s.migrations = vec![
                Migration {
                    at_ms,
                    resource: resource.clone(),
                    from: a.clone(),
                    to: b.clone(),
                    mode: mode(there),
                },
                Migration {
                    at_ms: at_ms + gap_ms,
                    resource,
                    from: b,
                    to: a,
                    mode: mode(back),
                },
            ];
            Case(s)
        },
    )
}

/// Every class locks in one independent service, `s0`, which also fences every resource and
/// checks every access. Leases, outages, partitions and pauses stay as generated.
fn single_service_fenced() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| {
        let mut s = build(&raw);
        s.services.truncate(1);
        s.services[0].subordinate_to = None;
        for c in &mut s.clients {
            c.protocol = Protocol::Single {
                service: "s0".to_string(),
            };
        }
        for r in &mut s.resources {
            r.fencing = Fencing::OneSource;
            r.fencing_source = Some("s0".to_string());
            r.fencing_checks = FencingChecks::AllAccesses;
        }
        s.migrations.clear();
        Case(s)
    })
}

/// Every class takes a token from the authority `s0` and presents it to the subordinate `s1`;
/// every resource fences with the authority's tokens on every access.
fn token_chain_fenced() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| {
        let mut s = build(&raw);
        if s.services.len() < 2 {
            let mut copy = s.services[0].clone();
            copy.first_token += 500;
            s.services.push(copy);
        }
        s.services.truncate(2);
        s.services[0].subordinate_to = None;
        s.services[1].name = "s1".to_string();
        s.services[1].subordinate_to = Some("s0".to_string());
        for c in &mut s.clients {
            c.protocol = Protocol::TokenChain {
                authority: "s0".to_string(),
                subordinate: "s1".to_string(),
            };
        }
        for r in &mut s.resources {
            r.fencing = Fencing::OneSource;
            r.fencing_source = Some("s0".to_string());
            r.fencing_checks = FencingChecks::AllAccesses;
        }
        s.migrations.clear();
        Case(s)
    })
}

/// Every class locks in one independent service without leases, and no client ever pauses.
/// Fencing, outages and partitions stay as generated.
fn single_service_no_lease() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| {
        let mut s = build(&raw);
        s.services.truncate(1);
        s.services[0].subordinate_to = None;
        s.services[0].lease_ms = None;
        for c in &mut s.clients {
            c.protocol = Protocol::Single {
                service: "s0".to_string(),
            };
        }
        for r in &mut s.resources {
            if r.fencing == Fencing::OneSource {
                r.fencing_source = Some("s0".to_string());
            }
        }
        s.pauses.clear();
        s.migrations.clear();
        Case(s)
    })
}

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

// ----- Recounts from the trace alone -------------------------------------------------------------
//
// Each figure of the verdict is computed again here from the raw events, by the plainest method
// that works on small generated runs (often quadratic), and without calling the monitor that
// computed it. Agreement between two unrelated implementations of one definition is the evidence
// that the monitor's faster bookkeeping is right.

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

/// Every client locks every service at once, so that waits cross services and close loops.
fn cycle_prone() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| {
        let mut s = build(&raw);
        for service in &mut s.services {
            service.subordinate_to = None;
        }
        let all: Vec<String> = s.services.iter().map(|x| x.name.clone()).collect();
        for (i, c) in s.clients.iter_mut().enumerate() {
            let mut services = all.clone();
            services.rotate_left(i % all.len());
            c.protocol = Protocol::AllUnordered {
                services,
                skip_unreachable: false,
            };
        }
        Case(s)
    })
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
            } => let_go(&mut holder, client),
            ServiceOp::Cancelled { client }
            | ServiceOp::Refused { client, .. }
            | ServiceOp::MovedOut {
                client,
                held: false,
                ..
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

/// Generated scenarios with at most six clients, so that every subset of the sections open at
/// one instant can be tried.
fn few_clients() -> impl Strategy<Value = Case> {
    any_scenario().prop_filter("at most six clients", |case| {
        case.0.clients.iter().map(|c| c.count).sum::<u32>() <= 6
    })
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
