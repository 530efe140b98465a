//! The generated scenarios of the property tests: raw numbers drawn by proptest, built into
//! valid scenarios, and the shapes some properties need (one fenced service, a token chain, a
//! round-trip migration, clients that lock every service, few clients).

use std::fmt;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

use lockstep::scenario::{
    ClientClass, Fencing, FencingChecks, Migration, MigrationMode, Network, Partition,
    PartitionMode, Pause, Protocol, Resource, Service, Window,
};
use lockstep::Scenario;

/// A generated scenario. Its `Debug` form is the scenario as TOML (the seed included), so that
/// proptest's report of a minimal failing input is a file the command line can run as it is.
#[derive(Clone)]
pub(super) struct Case(pub(super) Scenario);

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
pub(super) fn any_scenario() -> impl Strategy<Value = Case> {
    raw_scenario().prop_map(|raw| Case(build(&raw)))
}

/// A resource moved from one independent service to another and later back again, with the
/// first class locking in the service it starts in.
pub(super) fn round_trip_migration() -> impl Strategy<Value = Case> {
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
pub(super) fn single_service_fenced() -> impl Strategy<Value = Case> {
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
pub(super) fn token_chain_fenced() -> impl Strategy<Value = Case> {
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
pub(super) fn single_service_no_lease() -> impl Strategy<Value = Case> {
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

/// Every client locks every service at once, so that waits cross services and close loops.
pub(super) fn cycle_prone() -> impl Strategy<Value = Case> {
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

/// Generated scenarios with at most six clients, so that every subset of the sections open at
/// one instant can be tried.
pub(super) fn few_clients() -> impl Strategy<Value = Case> {
    any_scenario().prop_filter("at most six clients", |case| {
        case.0.clients.iter().map(|c| c.count).sum::<u32>() <= 6
    })
}
