//! A validated scenario compiled into the indexed, immutable form the model runs on.
//!
//! Names become `u32` indices and milliseconds become microseconds, so the model never looks a
//! name up and never does arithmetic on user units.

use crate::scenario::{Fencing, FencingChecks, MigrationMode, PartitionMode, Protocol, Scenario};
use crate::trace::Endpoint;

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
}

#[derive(Clone, Debug)]
pub struct ServiceConfig {
    pub name: String,
    pub replicas: Vec<u32>,
    /// How many replicas a request must reach.
    pub majority: usize,
    pub authority: Option<u32>,
    pub lease: Option<Micros>,
    pub first_token: u64,
    /// Outage windows as `[start, end)`.
    pub outages: Vec<(Micros, Micros)>,
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
    Locks {
        services: Vec<u32>,
        ordered: bool,
        skip_unreachable: bool,
    },
    /// Lock in the authority, then present its token to the subordinate.
    TokenChain {
        authority: u32,
        subordinate: u32,
    },
    NoLock,
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
                lease: s.lease_ms.map(ms),
                first_token: s.first_token,
                outages: s
                    .outages
                    .iter()
                    .map(|w| (ms(w.start_ms), ms(w.start_ms) + ms(w.duration_ms)))
                    .collect(),
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
                },
                Protocol::AllUnordered {
                    services,
                    skip_unreachable,
                } => ProtocolConfig::Locks {
                    services: services.iter().map(svc).collect(),
                    ordered: false,
                    skip_unreachable: *skip_unreachable,
                },
                Protocol::AllOrdered {
                    services,
                    skip_unreachable,
                } => ProtocolConfig::Locks {
                    services: services.iter().map(svc).collect(),
                    ordered: true,
                    skip_unreachable: *skip_unreachable,
                },
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
                pauses.sort();
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
        let partitions = scenario
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
                        l.sort_unstable();
                        l
                    })
                    .collect()
            })
            .collect();
        World {
            replica_latencies,
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
        let mut cut = Cut::Open;
        for p in &self.partitions {
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
        self.partitions.iter().any(|p| p.start <= t && t < p.end)
    }

    /// Whether a service is in an outage at `t`, and if so until when.
    pub fn outage_until(&self, service: u32, t: Micros) -> Option<Micros> {
        self.services[service as usize]
            .outages
            .iter()
            .filter(|(s, e)| *s <= t && t < *e)
            .map(|(_, e)| *e)
            .max()
    }

    /// Whether a client is paused at `t`, and if so until when.
    pub fn paused_until(&self, client: u32, t: Micros) -> Option<Micros> {
        self.clients[client as usize]
            .pauses
            .iter()
            .filter(|(s, e)| *s <= t && t < *e)
            .map(|(_, e)| *e)
            .max()
    }

    /// Whether a majority of `service`'s replicas can be reached from `region` at `t`.
    pub fn quorum_reachable(&self, service: u32, region: u32, t: Micros) -> bool {
        let svc = &self.services[service as usize];
        let reachable = svc
            .replicas
            .iter()
            .filter(|r| self.cut(region, **r, t) == Cut::Open)
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
