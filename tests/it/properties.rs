//! Property tests over generated scenarios.
//!
//! Scenarios are built directly as `lockstep::Scenario` values from small random integers, so
//! that shrinking a failure shrinks the world towards fewer, simpler parts. The seed of the run is
//! stored in the scenario itself, and a failing case prints the scenario as TOML: saving that text
//! to a file and running `lockstep run FILE` reproduces the exact run.
//!
//! The number of cases of each property is set explicitly and kept small enough for the whole
//! module to finish in seconds in a debug build.

use std::collections::BTreeMap;
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
