//! A validated scenario compiled into the indexed, immutable form the model runs on.
//!
//! Names become `u32` indices and milliseconds become microseconds, so the model never looks a
//! name up and never does arithmetic on user units.

use crate::scenario::{Fencing, FencingChecks, MigrationMode, PartitionMode, Protocol, Scenario};
use serde::Serialize;

/// A network endpoint: a client, a lock service or a resource, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", content = "index", rename_all = "snake_case")]
pub enum Endpoint {
    Client(u32),
    Service(u32),
    Resource(u32),
}

/// Simulated time in microseconds since the start of the run.
pub type Micros = u64;

/// Microseconds in a millisecond.
pub const MS: Micros = 1_000;

/// The whole world a run simulates, indexed for the model.
#[derive(Clone, Debug)]
pub struct World {
    pub scenario: Scenario,
    pub regions: Vec<String>,
    /// One-way base latency between regions, `latency[a][b]`.
    pub latency: Vec<Vec<Micros>>,
    pub jitter: Micros,
    pub services: Vec<ServiceConfig>,
    pub resources: Vec<ResourceConfig>,
    pub clients: Vec<ClientConfig>,
    pub classes: Vec<String>,
    pub partitions: Vec<PartitionConfig>,
    pub migrations: Vec<MigrationConfig>,
    pub duration: Micros,
    pub event_budget: u64,
    /// `replica_latencies[service][region]`: the latencies from a region to each of the
    /// service's replicas, ascending.
    pub replica_latencies: Vec<Vec<Vec<Micros>>>,
    /// `replica_paths[service][region]`: (latency, replica's region) for each of the service's
    /// replicas, nearest first, so a message sent during a partition needs no sort.
    pub replica_paths: Vec<Vec<Vec<(Micros, u32)>>>,
    /// The partitions as a timeline, so a message looks its path up rather than scanning
    /// every partition.
    network: NetworkTimeline,
    /// Each service's outage windows as a timeline.
    outage_timelines: Vec<Timeline>,
    /// Each client's pause windows as a timeline.
    pause_timelines: Vec<Timeline>,
}

/// Whether a service is down, or a client paused, over time: `until[i]` holds from
/// `starts[i]` until `starts[i + 1]` (and before `starts[0]`, nothing is in force). It is
/// the latest end among the windows that contain the instant, exactly as a scan of the
/// windows would answer, so a run is the same whichever answers.
///
/// Every window's start and end is a boundary, so at most 64 windows (the scenario limit)
/// make at most 128 boundaries, and a lookup is one binary search among them.
#[derive(Clone, Debug, Default)]
struct Timeline {
    starts: Vec<Micros>,
    until: Vec<Option<Micros>>,
}

impl Timeline {
    fn new(windows: &[(Micros, Micros)]) -> Timeline {
        let starts = boundaries(windows.iter().flat_map(|(s, e)| [*s, *e]));
        let until = starts
            .iter()
            .map(|t| {
                windows
                    .iter()
                    .filter(|(s, e)| s <= t && t < e)
                    .map(|(_, e)| *e)
                    .max()
            })
            .collect();
        Timeline { starts, until }
    }

    #[inline]
    fn at(&self, t: Micros) -> Option<Micros> {
        segment_in_force(&self.starts, t).and_then(|i| self.until[i])
    }
}

/// The network over time: between two consecutive partition boundaries the same partitions
/// are in force, so each segment stores whether any is, and the cut between every ordered
/// pair of regions. With at most 64 partitions there are at most 128 boundaries, and with at
/// most 8 regions a segment is 64 cuts: about 130 KB at the very most.
#[derive(Clone, Debug, Default)]
struct NetworkTimeline {
    regions: usize,
    starts: Vec<Micros>,
    any: Vec<bool>,
    /// `cuts[segment * regions * regions + a * regions + b]`.
    cuts: Vec<Cut>,
}

/// The distinct instants among `times`, ascending.
fn boundaries(times: impl Iterator<Item = Micros>) -> Vec<Micros> {
    let mut starts: Vec<Micros> = times.collect();
    crate::sorted::sort(&mut starts);
    starts.dedup();
    starts
}

/// The segment of a timeline that contains `t`, or `None` before the first boundary.
fn segment(starts: &[Micros], t: Micros) -> Option<usize> {
    starts.partition_point(|s| *s <= t).checked_sub(1)
}

/// The segment that contains `t` if it can have a window in force: not before the first
/// boundary (the earliest start), nor from the last on (the latest end), where none is. Most
/// of a run lies outside every window, and the simulator asks for each message and timer, so
/// that answer comes from two comparisons instead of a search.
fn segment_in_force(starts: &[Micros], t: Micros) -> Option<usize> {
    match (starts.first(), starts.last()) {
        (Some(first), Some(last)) if *first <= t && t < *last => segment(starts, t),
        _ => None,
    }
}

/// Whether two regions are cut apart at `t`, by a scan of every partition: what a timeline
/// segment stores, computed once per segment when the world is compiled.
fn scan_cut(partitions: &[PartitionConfig], a: u32, b: u32, t: Micros) -> Cut {
    let mut cut = Cut::Open;
    for p in partitions {
        if p.start <= t && t < p.end {
            if let (Some(ga), Some(gb)) = (p.group_of[a as usize], p.group_of[b as usize]) {
                if ga != gb {
                    cut = match (cut, p.delay) {
                        (Cut::Dropped, _) | (_, false) => Cut::Dropped,
                        (Cut::Open, true) => Cut::DelayedUntil(p.end),
                        (Cut::DelayedUntil(e), true) => Cut::DelayedUntil(e.max(p.end)),
                    };
                }
            }
        }
    }
    cut
}

impl NetworkTimeline {
    fn new(partitions: &[PartitionConfig], regions: usize) -> NetworkTimeline {
        let starts = boundaries(partitions.iter().flat_map(|p| [p.start, p.end]));
        let any = starts
            .iter()
            .map(|t| partitions.iter().any(|p| p.start <= *t && *t < p.end))
            .collect();
        let mut cuts = Vec::with_capacity(starts.len() * regions * regions);
        for t in &starts {
            for a in 0..regions as u32 {
                for b in 0..regions as u32 {
                    cuts.push(scan_cut(partitions, a, b, *t));
                }
            }
        }
        NetworkTimeline {
            regions,
            starts,
            any,
            cuts,
        }
    }

    #[inline]
    fn at(&self, t: Micros) -> NetworkAt<'_> {
        let size = self.regions * self.regions;
        let cuts = segment_in_force(&self.starts, t)
            .filter(|i| self.any[*i])
            .map(|i| &self.cuts[i * size..(i + 1) * size]);
        NetworkAt {
            regions: self.regions,
            cuts,
        }
    }
}

/// The network at one instant, looked up once and then asked about any pair of regions.
#[derive(Clone, Copy, Debug)]
pub struct NetworkAt<'a> {
    regions: usize,
    /// The segment's cuts, or `None` when no partition is in force.
    cuts: Option<&'a [Cut]>,
}

impl NetworkAt<'_> {
    /// Whether any partition is in force.
    pub fn any_partition(&self) -> bool {
        self.cuts.is_some()
    }

    /// Whether two regions are cut apart (see [`World::cut`]).
    pub fn cut(&self, a: u32, b: u32) -> Cut {
        match self.cuts {
            None => Cut::Open,
            Some(cuts) => cuts[a as usize * self.regions + b as usize],
        }
    }
}

#[derive(Clone, Debug)]
pub struct ServiceConfig {
    pub name: String,
    pub replicas: Vec<u32>,
    /// How many replicas a request must reach.
    pub majority: usize,
    pub authority: Option<u32>,
    /// How long a lease lasts in real time: `lease_ms` as the service's own clock measures it,
    /// so shorter than stated when that clock runs fast.
    pub lease: Option<Micros>,
    /// The lease as stated (`lease_ms`): what clients count on.
    pub stated_lease: Option<Micros>,
    pub first_token: u64,
    /// Outage windows as `[start, end)`. For a service that forgets on restart, each ends
    /// `restart_delay` later than written: the service stays down until then.
    pub outages: Vec<(Micros, Micros)>,
    /// Whether the service comes back from an outage empty (no persistence).
    pub forgets_on_restart: bool,
    /// How much longer than written each outage of a forgetful service keeps it down.
    pub restart_delay: Micros,
    pub protects: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct ResourceConfig {
    pub name: String,
    pub region: u32,
    pub rows: Vec<String>,
    pub initial: i64,
    pub fencing: Fencing,
    pub fencing_source: Option<u32>,
    pub check_reads: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolConfig {
    /// Services to lock, in order. `ordered` acquires one after another; otherwise all at once.
    /// With `majority`, the requests are tries and a quorum of grants is enough.
    Locks {
        services: Vec<u32>,
        ordered: bool,
        skip_unreachable: bool,
        majority: Option<Majority>,
    },
    /// Lock in the authority, then present its token to the subordinate.
    TokenChain {
        authority: u32,
        subordinate: u32,
    },
    NoLock,
}

/// What a majority client counts on (the `majority` protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Majority {
    /// How many grants make the lock.
    pub quorum: u32,
    /// How long the lock stays valid from the moment the client sent its requests: the
    /// shortest stated lease of its services less the drift allowance; `None` when none of
    /// them has a lease, and the lock is valid until released.
    pub validity: Option<Micros>,
    /// Whether the client reads its clock to check that validity once it has its quorum. The
    /// explorer, which treats time abstractly, turns this off: the validity's own timer, which
    /// may then come at any moment, stands for every way acquiring can take too long.
    pub clock_checked: bool,
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub name: String,
    pub class: u32,
    pub region: u32,
    pub protocol: ProtocolConfig,
    pub resource: u32,
    /// The rows touched by each operation, as a bit set over the resource's rows.
    pub rows: u64,
    pub start: Micros,
    pub stop: Micros,
    pub period: Micros,
    pub jitter: Micros,
    pub work: Micros,
    pub acquire_timeout: Option<Micros>,
    pub max_retries: u32,
    pub retry_backoff: Micros,
    pub lease_aware: bool,
    pub lease_margin: Micros,
    pub max_operations: Option<u32>,
    /// Pause windows as `[start, end)`, sorted.
    pub pauses: Vec<(Micros, Micros)>,
}

#[derive(Clone, Debug)]
pub struct PartitionConfig {
    pub start: Micros,
    pub end: Micros,
    /// The group of each region, or `None` for a region the partition does not affect.
    pub group_of: Vec<Option<u32>>,
    pub delay: bool,
}

#[derive(Clone, Debug)]
pub struct MigrationConfig {
    pub at: Micros,
    pub resource: u32,
    pub from: u32,
    pub to: u32,
    pub mode: MigrationMode,
}

fn index_of(names: &[String], name: &str) -> u32 {
    names
        .iter()
        .position(|n| n == name)
        .expect("validated scenarios only name things that exist") as u32
}

fn ms(value: u64) -> Micros {
    value.saturating_mul(MS)
}

/// How much longer than written each outage keeps a service down: its restart delay if it
/// forgets on restart, otherwise nothing.
fn restart_delay(s: &crate::scenario::Service) -> Micros {
    if s.forgets_on_restart {
        ms(s.restart_delay_ms)
    } else {
        0
    }
}

impl World {
    /// Compiles a scenario that has passed [`Scenario::validate`].
    pub fn compile(scenario: &Scenario) -> World {
        let regions = scenario.regions.clone();
        let n = regions.len();
        let mut latency = vec![vec![ms(scenario.network.remote_latency_ms); n]; n];
        for (i, row) in latency.iter_mut().enumerate() {
            row[i] = ms(scenario.network.local_latency_ms);
        }
        for link in &scenario.network.links {
            let a = index_of(&regions, &link.between[0]) as usize;
            let b = index_of(&regions, &link.between[1]) as usize;
            latency[a][b] = ms(link.latency_ms);
            latency[b][a] = ms(link.latency_ms);
        }
        let service_names: Vec<String> = scenario.services.iter().map(|s| s.name.clone()).collect();
        let resource_names: Vec<String> =
            scenario.resources.iter().map(|r| r.name.clone()).collect();
        let services: Vec<ServiceConfig> = scenario
            .services
            .iter()
            .map(|s| ServiceConfig {
                name: s.name.clone(),
                replicas: s.replicas.iter().map(|r| index_of(&regions, r)).collect(),
                majority: s.replicas.len() / 2 + 1,
                authority: s
                    .subordinate_to
                    .as_ref()
                    .map(|a| index_of(&service_names, a)),
                // At 150 % a lease of 900 ms lasts 600 ms; never less than a microsecond.
                lease: s
                    .lease_ms
                    .map(|l| (ms(l) * 100 / u64::from(s.clock_rate_percent.max(1))).max(1)),
                stated_lease: s.lease_ms.map(ms),
                first_token: s.first_token,
                outages: s
                    .outages
                    .iter()
                    .map(|w| {
                        let end = ms(w.start_ms) + ms(w.duration_ms);
                        (ms(w.start_ms), end + restart_delay(s))
                    })
                    .collect(),
                forgets_on_restart: s.forgets_on_restart,
                restart_delay: restart_delay(s),
                protects: s
                    .protects
                    .iter()
                    .map(|r| index_of(&resource_names, r))
                    .collect(),
            })
            .collect();
        let resources = scenario
            .resources
            .iter()
            .map(|r| ResourceConfig {
                name: r.name.clone(),
                region: r
                    .region
                    .as_ref()
                    .map(|x| index_of(&regions, x))
                    .unwrap_or(0),
                rows: r.rows.clone(),
                initial: r.initial,
                fencing: r.fencing,
                fencing_source: r
                    .fencing_source
                    .as_ref()
                    .map(|x| index_of(&service_names, x)),
                check_reads: r.fencing_checks == FencingChecks::AllAccesses,
            })
            .collect::<Vec<_>>();
        let duration = ms(scenario.duration_ms);
        let mut clients = Vec::new();
        let mut classes = Vec::new();
        for (class_index, class) in scenario.clients.iter().enumerate() {
            classes.push(class.name.clone());
            let resource = index_of(&resource_names, &class.resource);
            let resource_rows = &scenario.resources[resource as usize].rows;
            let rows = if class.rows.is_empty() {
                (1u64 << resource_rows.len()) - 1
            } else {
                class
                    .rows
                    .iter()
                    .map(|r| 1u64 << index_of(resource_rows, r))
                    .fold(0, |a, b| a | b)
            };
            let svc = |name: &String| index_of(&service_names, name);
            let protocol = match &class.protocol {
                Protocol::Single { service } => ProtocolConfig::Locks {
                    services: vec![svc(service)],
                    ordered: true,
                    skip_unreachable: false,
                    majority: None,
                },
                Protocol::AllUnordered {
                    services,
                    skip_unreachable,
                } => ProtocolConfig::Locks {
                    services: services.iter().map(svc).collect(),
                    ordered: false,
                    skip_unreachable: *skip_unreachable,
                    majority: None,
                },
                Protocol::AllOrdered {
                    services,
                    skip_unreachable,
                } => ProtocolConfig::Locks {
                    services: services.iter().map(svc).collect(),
                    ordered: true,
                    skip_unreachable: *skip_unreachable,
                    majority: None,
                },
                Protocol::Majority {
                    services,
                    quorum,
                    clock_drift_ms,
                } => {
                    let services: Vec<u32> = services.iter().map(svc).collect();
                    let shortest = services
                        .iter()
                        .filter_map(|s| scenario.services[*s as usize].lease_ms)
                        .min();
                    ProtocolConfig::Locks {
                        majority: Some(Majority {
                            quorum: quorum
                                .unwrap_or_else(|| crate::scenario::default_quorum(services.len())),
                            validity: shortest.map(|l| ms(l).saturating_sub(ms(*clock_drift_ms))),
                            clock_checked: true,
                        }),
                        services,
                        ordered: false,
                        skip_unreachable: false,
                    }
                }
                Protocol::TokenChain {
                    authority,
                    subordinate,
                } => ProtocolConfig::TokenChain {
                    authority: svc(authority),
                    subordinate: svc(subordinate),
                },
                Protocol::NoLock => ProtocolConfig::NoLock,
            };
            for i in 1..=class.count {
                let name = format!("{}-{}", class.name, i);
                let mut pauses: Vec<(Micros, Micros)> = scenario
                    .pauses
                    .iter()
                    .filter(|p| p.client == name || p.client == class.name)
                    .map(|p| (ms(p.start_ms), ms(p.start_ms) + ms(p.duration_ms)))
                    .collect();
                crate::sorted::sort(&mut pauses);
                clients.push(ClientConfig {
                    name,
                    class: class_index as u32,
                    region: index_of(&regions, &class.region),
                    protocol: protocol.clone(),
                    resource,
                    rows,
                    start: ms(class.start_ms),
                    stop: class.stop_ms.map(ms).unwrap_or(duration),
                    period: ms(class.period_ms),
                    jitter: ms(class.jitter_ms),
                    work: ms(class.work_ms),
                    acquire_timeout: class.acquire_timeout_ms.map(ms),
                    max_retries: class.max_retries,
                    retry_backoff: ms(class.retry_backoff_ms),
                    lease_aware: class.lease_aware,
                    lease_margin: ms(class.lease_margin_ms),
                    max_operations: class.max_operations,
                    pauses,
                });
            }
        }
        let partitions: Vec<PartitionConfig> = scenario
            .partitions
            .iter()
            .map(|p| {
                let mut group_of = vec![None; n];
                for (g, group) in p.groups.iter().enumerate() {
                    for r in group {
                        group_of[index_of(&regions, r) as usize] = Some(g as u32);
                    }
                }
                PartitionConfig {
                    start: ms(p.start_ms),
                    end: ms(p.start_ms) + ms(p.duration_ms),
                    group_of,
                    delay: p.mode == PartitionMode::Delay,
                }
            })
            .collect();
        let migrations = scenario
            .migrations
            .iter()
            .map(|m| MigrationConfig {
                at: ms(m.at_ms),
                resource: index_of(&resource_names, &m.resource),
                from: index_of(&service_names, &m.from),
                to: index_of(&service_names, &m.to),
                mode: m.mode,
            })
            .collect();
        let replica_latencies = services
            .iter()
            .map(|s: &ServiceConfig| {
                (0..n)
                    .map(|region| {
                        let mut l: Vec<Micros> = s
                            .replicas
                            .iter()
                            .map(|r| latency[region][*r as usize])
                            .collect();
                        crate::sorted::sort(&mut l);
                        l
                    })
                    .collect()
            })
            .collect();
        let replica_paths = services
            .iter()
            .map(|s: &ServiceConfig| {
                (0..n)
                    .map(|region| {
                        let mut paths: Vec<(Micros, u32)> = s
                            .replicas
                            .iter()
                            .map(|r| (latency[region][*r as usize], *r))
                            .collect();
                        crate::sorted::sort_by_key(&mut paths, |p| p.0);
                        paths
                    })
                    .collect()
            })
            .collect();
        let network = NetworkTimeline::new(&partitions, n);
        let outage_timelines = services.iter().map(|s| Timeline::new(&s.outages)).collect();
        let pause_timelines = clients.iter().map(|c| Timeline::new(&c.pauses)).collect();
        World {
            replica_latencies,
            replica_paths,
            network,
            outage_timelines,
            pause_timelines,
            scenario: scenario.clone(),
            regions,
            latency,
            jitter: ms(scenario.network.jitter_ms),
            services,
            resources,
            clients,
            classes,
            partitions,
            migrations,
            duration,
            event_budget: scenario.event_budget(),
        }
    }

    /// Whether two regions are cut apart at `t`, and if so, when the last cut between them
    /// heals and whether every cut between them delays rather than drops.
    pub fn cut(&self, a: u32, b: u32, t: Micros) -> Cut {
        self.network_at(t).cut(a, b)
    }

    /// The network at `t`: one binary search among the partitions' boundaries, after which
    /// every pair of regions is a lookup.
    #[inline]
    pub fn network_at(&self, t: Micros) -> NetworkAt<'_> {
        self.network.at(t)
    }

    /// How many network endpoints there are: clients, then services, then resources.
    pub fn endpoints(&self) -> usize {
        self.clients.len() + self.services.len() + self.resources.len()
    }

    /// A dense index of an endpoint, in `0..endpoints()`.
    pub fn endpoint_index(&self, endpoint: Endpoint) -> usize {
        match endpoint {
            Endpoint::Client(c) => c as usize,
            Endpoint::Service(s) => self.clients.len() + s as usize,
            Endpoint::Resource(r) => self.clients.len() + self.services.len() + r as usize,
        }
    }

    /// Whether any partition is in force at `t`.
    pub fn any_partition_at(&self, t: Micros) -> bool {
        self.network_at(t).any_partition()
    }

    /// Whether a service is in an outage at `t`, and if so until when (the latest end among
    /// the outage windows in force).
    #[inline]
    pub fn outage_until(&self, service: u32, t: Micros) -> Option<Micros> {
        self.outage_timelines[service as usize].at(t)
    }

    /// Whether a client is paused at `t`, and if so until when (the latest end among the
    /// pause windows in force).
    #[inline]
    pub fn paused_until(&self, client: u32, t: Micros) -> Option<Micros> {
        self.pause_timelines[client as usize].at(t)
    }

    /// Whether a majority of `service`'s replicas can be reached from `region` at `t`.
    pub fn quorum_reachable(&self, service: u32, region: u32, t: Micros) -> bool {
        let svc = &self.services[service as usize];
        let net = self.network_at(t);
        let reachable = svc
            .replicas
            .iter()
            .filter(|r| net.cut(region, **r) == Cut::Open)
            .count();
        reachable >= svc.majority
    }
}

/// The state of the path between two regions at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    Open,
    DelayedUntil(Micros),
    Dropped,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};

    /// The instants where an answer may change, and their neighbours.
    fn probes(windows: &[(Micros, Micros)]) -> Vec<Micros> {
        let mut out = vec![0, Micros::MAX];
        for (s, e) in windows {
            for t in [*s, *e] {
                out.extend([t.saturating_sub(1), t, t + 1]);
            }
        }
        out
    }

    #[test]
    fn the_network_timeline_answers_as_a_scan_of_every_partition() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..200 {
            let regions = rng.random_range(1..=8usize);
            let partitions: Vec<PartitionConfig> = (0..rng.random_range(0..=64))
                .map(|_| {
                    let start = rng.random_range(0..50) * 1_000;
                    PartitionConfig {
                        start,
                        end: start + rng.random_range(0..20) * 1_000,
                        group_of: (0..regions)
                            .map(|_| rng.random_range(0..4u32).checked_sub(1))
                            .collect(),
                        delay: rng.random_range(0..2) == 0,
                    }
                })
                .collect();
            let timeline = NetworkTimeline::new(&partitions, regions);
            assert!(timeline.starts.len() <= 2 * partitions.len());
            let windows: Vec<(Micros, Micros)> =
                partitions.iter().map(|p| (p.start, p.end)).collect();
            for t in probes(&windows) {
                let any = partitions.iter().any(|p| p.start <= t && t < p.end);
                let world_at = timeline.at(t);
                assert_eq!(world_at.any_partition(), any);
                for a in 0..regions as u32 {
                    for b in 0..regions as u32 {
                        assert_eq!(world_at.cut(a, b), scan_cut(&partitions, a, b, t));
                    }
                }
            }
        }
    }

    #[test]
    fn a_window_timeline_answers_the_latest_end_in_force() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..500 {
            let windows: Vec<(Micros, Micros)> = (0..rng.random_range(0..=64))
                .map(|_| {
                    let start = rng.random_range(0..100) * 1_000;
                    (start, start + rng.random_range(0..30) * 1_000)
                })
                .collect();
            let timeline = Timeline::new(&windows);
            for t in probes(&windows) {
                let scan = windows
                    .iter()
                    .filter(|(s, e)| *s <= t && t < *e)
                    .map(|(_, e)| *e)
                    .max();
                assert_eq!(timeline.at(t), scan, "at {t} in {windows:?}");
            }
        }
    }
}
