//! The random scenario generator shared by the fuzzer (`src/bin/fuzz.rs`) and the property
//! tests (`tests/it/properties/`), so that both explore the same kinds of worlds. It draws
//! through [`Draw`], which a seeded ChaCha8 stream implements for the fuzzer and a proptest
//! tape of numbers implements for the properties (so a failing case still shrinks).
//!
//! Native only: no browser bundle calls it, and it is kept out of their build altogether.

use std::ops::{Range, RangeInclusive};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::scenario::{
    limits, ClientClass, Fencing, FencingChecks, Link, Migration, MigrationMode, Network,
    Partition, PartitionMode, Pause, Protocol, Resource, RowShare, Scenario, Service, Window,
};

/// A source of random draws. Each method draws one value of one type from one range, so that a
/// seeded stream gives the same draws as the fuzzer always made from it.
pub trait Draw {
    /// True with chance `p`, between 0 and 1.
    fn chance(&mut self, p: f64) -> bool;
    fn u32_range(&mut self, r: Range<u32>) -> u32;
    fn u32_in(&mut self, r: RangeInclusive<u32>) -> u32;
    fn u64_in(&mut self, r: RangeInclusive<u64>) -> u64;
    fn i64_in(&mut self, r: RangeInclusive<i64>) -> i64;
    fn usize_range(&mut self, r: Range<usize>) -> usize;
    fn usize_in(&mut self, r: RangeInclusive<usize>) -> usize;
}

impl Draw for ChaCha8Rng {
    fn chance(&mut self, p: f64) -> bool {
        self.random_bool(p)
    }

    fn u32_range(&mut self, r: Range<u32>) -> u32 {
        self.random_range(r)
    }

    fn u32_in(&mut self, r: RangeInclusive<u32>) -> u32 {
        self.random_range(r)
    }

    fn u64_in(&mut self, r: RangeInclusive<u64>) -> u64 {
        self.random_range(r)
    }

    fn i64_in(&mut self, r: RangeInclusive<i64>) -> i64 {
        self.random_range(r)
    }

    fn usize_range(&mut self, r: Range<usize>) -> usize {
        self.random_range(r)
    }

    fn usize_in(&mut self, r: RangeInclusive<usize>) -> usize {
        self.random_range(r)
    }
}

const REGIONS: &[&str] = &[
    "east", "west", "central", "north", "south", "eu", "us", "ap", "mars",
];
const SERVICES: &[&str] = &[
    "locks",
    "old",
    "new",
    "authority",
    "sub",
    "zk",
    "etcd",
    "consul",
    "redis",
];
const RESOURCES: &[&str] = &["orders", "table", "payments", "ledger", "stock", "cart"];
const CLASSES: &[&str] = &["batch", "online", "worker", "auditor", "cron", "api"];
const ROWS: &[&str] = &["count", "sum", "a", "b", "c", "x", "y", "z"];

/// Draws the parts of a scenario. `bad` is the chance that any one value is taken at or
/// just outside a limit, or that a reference names something that does not exist: zero
/// gives scenarios that are almost all valid, a few percent gives some broken ones.
/// `heavy` draws busy worlds within the limits (long runs, many clients, short periods),
/// which only cost anything in the cases that run at the real budgets. `small` draws the
/// worlds property tests run by the hundred in a debug build: short runs, always with an
/// event budget, up to two faults of each kind, partitions that may leave a region on neither
/// side, and evener odds (protocols, subordinates, leases, think times near zero) so that a few
/// hundred cases meet every kind of world. With `bad` zero, every small world is valid.
pub struct Gen<'r, D: Draw> {
    pub rng: &'r mut D,
    pub bad: f64,
    pub heavy: bool,
    pub small: bool,
}

impl<D: Draw> Gen<'_, D> {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.chance(p.clamp(0.0, 1.0))
    }

    /// How many services or classes a world typically has.
    fn several(&self) -> RangeInclusive<usize> {
        if self.small {
            1..=4
        } else {
            1..=3
        }
    }

    /// How many faults of each kind (outages of a service, partitions, pauses, migrations) a
    /// world typically has.
    fn faults(&self) -> RangeInclusive<usize> {
        if self.small {
            0..=2
        } else {
            0..=1
        }
    }

    fn upto(&mut self, n: u64) -> u64 {
        self.rng.u64_in(0..=n)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.usize_range(0..xs.len())]
    }

    /// A count: usually in `typical`, sometimes at the edges of what is allowed.
    fn size(&mut self, typical: std::ops::RangeInclusive<usize>, min: usize, max: usize) -> usize {
        if self.chance(self.bad) {
            self.pick(&[min.saturating_sub(1), min, max, max + 1])
        } else {
            self.rng.usize_in(typical)
        }
    }

    /// A duration or instant in milliseconds.
    fn ms(&mut self, typical_max: u64) -> u64 {
        if self.chance(self.bad) {
            self.pick(&[
                0,
                1,
                limits::SPAN_MS_MAX - 1,
                limits::SPAN_MS_MAX,
                limits::SPAN_MS_MAX + 1,
                u64::from(u32::MAX),
                i64::MAX as u64,
                i64::MAX as u64 + 1,
                u64::MAX,
            ])
        } else {
            self.upto(typical_max)
        }
    }

    fn bad_name(&mut self) -> String {
        match self.rng.u32_range(0..10) {
            0 => String::new(),
            1 => "a".repeat(limits::NAME_LEN_MAX),
            2 => "b".repeat(limits::NAME_LEN_MAX + 1),
            3 => "has space".to_string(),
            4 => "dé漢🙂".to_string(),
            5 => "quote\"and\\slash".to_string(),
            6 => "line\nbreak".to_string(),
            7 => "worker-1".to_string(),
            8 => "x".repeat(5_000),
            _ => "\u{0}\u{202e}".to_string(),
        }
    }

    /// The `i`th name of a kind: distinct from the others unless a bad draw duplicates one.
    fn name(&mut self, pool: &[&str], i: usize) -> String {
        if self.chance(self.bad) {
            return self.bad_name();
        }
        if i < pool.len() {
            pool[i].to_string()
        } else {
            format!("{}{}", pool[i % pool.len()], i)
        }
    }

    /// A name of something that exists, or, with a bad draw, of something that does not.
    fn reference(&mut self, names: &[String]) -> String {
        if names.is_empty() || self.chance(self.bad) {
            if self.chance(0.5) {
                "ghost".to_string()
            } else {
                self.bad_name()
            }
        } else {
            names[self.rng.usize_range(0..names.len())].clone()
        }
    }

    fn subset(&mut self, names: &[String], most: usize) -> Vec<String> {
        let n = self.rng.usize_in(0..=most.min(names.len()));
        (0..n).map(|_| self.reference(names)).collect()
    }

    /// One to `most` distinct names (none if there are none), or with a bad draw any
    /// number of any names, repeats included.
    fn some_of(&mut self, names: &[String], most: usize) -> Vec<String> {
        if self.chance(self.bad) || names.is_empty() {
            return self.subset(names, most);
        }
        let n = self.rng.usize_in(1..=most.min(names.len()));
        let first = self.rng.usize_range(0..names.len());
        (0..n)
            .map(|i| names[(first + i) % names.len()].clone())
            .collect()
    }

    fn window(&mut self, duration: u64) -> Window {
        Window {
            start_ms: self.ms(duration),
            duration_ms: self.ms(duration / 2 + 1),
        }
    }

    /// A scenario; `cap`, when given, is its event budget.
    pub fn scenario(&mut self, cap: Option<u64>) -> Scenario {
        let duration_ms = if self.chance(self.bad) {
            self.pick(&[0, 1, limits::DURATION_MS_MAX, limits::DURATION_MS_MAX + 1])
        } else {
            self.rng.u64_in(if self.small {
                500..=3_000
            } else if self.heavy {
                50..=limits::DURATION_MS_MAX
            } else {
                50..=20_000
            })
        };
        let regions: Vec<String> = (0..self.size(1..=3, 1, limits::REGIONS_MAX))
            .map(|i| self.name(REGIONS, i))
            .collect();
        let resource_names: Vec<String> = (0..self.size(1..=2, 1, limits::RESOURCES_MAX))
            .map(|i| self.name(RESOURCES, i))
            .collect();
        let service_names: Vec<String> = (0..self.size(self.several(), 0, limits::SERVICES_MAX))
            .map(|i| self.name(SERVICES, i))
            .collect();
        let class_names: Vec<String> = (0..self.size(self.several(), 0, limits::CLASSES_MAX))
            .map(|i| self.name(CLASSES, i))
            .collect();

        let network = if self.chance(0.5) {
            Network::default()
        } else {
            let links = (0..self.upto(2))
                .map(|_| Link {
                    between: (0..self.size(2..=2, 2, 2))
                        .map(|_| self.reference(&regions))
                        .collect(),
                    latency_ms: self.ms(100),
                })
                .collect();
            Network {
                local_latency_ms: self.ms(5),
                remote_latency_ms: self.ms(100),
                jitter_ms: self.ms(if self.heavy { 50 } else { 10 }),
                links,
            }
        };

        let mut services: Vec<Service> = Vec::new();
        for (i, name) in service_names.iter().enumerate() {
            let replicas = (0..self.size(1..=5, 1, limits::REPLICAS_MAX))
                .map(|_| self.reference(&regions))
                .collect();
            // Only an earlier, independent service can be an authority, which keeps most
            // chains one step long as the rules require; a bad draw may break that.
            let authorities: Vec<String> = services
                .iter()
                .filter(|s| s.subordinate_to.is_none())
                .map(|s| s.name.clone())
                .collect();
            // Small worlds have subordinates more often, for enough token chains in a few
            // hundred cases.
            let subordinate_to = (i > 0 && self.chance(if self.small { 0.5 } else { 0.25 }))
                .then(|| self.reference(&authorities));
            let lease_ms = self.chance(if self.small { 0.5 } else { 0.35 }).then(|| {
                if self.chance(self.bad) {
                    0
                } else {
                    self.rng.u64_in(1..=2_000)
                }
            });
            let first_token = if self.chance(self.bad) {
                self.pick(&[
                    0,
                    limits::FIRST_TOKEN_MAX,
                    limits::FIRST_TOKEN_MAX + 1,
                    u64::MAX,
                ])
            } else if self.chance(0.2) {
                self.rng.u64_in(1..=100_000)
            } else {
                1
            };
            let protects = self.subset(&resource_names, 2);
            let outages = (0..self.size(self.faults(), 0, limits::WINDOWS_MAX))
                .map(|_| self.window(duration_ms))
                .collect();
            // Some services restart empty (most often after a delay), and some leases run on
            // a clock that is fast or slow.
            let forgets_on_restart = self.chance(0.2);
            let restart_delay_ms = if forgets_on_restart && self.chance(0.5) {
                self.ms(1_000)
            } else if self.chance(self.bad) {
                1
            } else {
                0
            };
            let clock_rate_percent = if self.chance(self.bad) {
                self.pick(&[0, limits::CLOCK_RATE_PERCENT_MAX + 1])
            } else if lease_ms.is_some() && self.chance(0.2) {
                self.rng.u32_in(limits::CLOCK_RATE_PERCENT_MIN..=300)
            } else {
                100
            };
            services.push(Service {
                name: name.clone(),
                replicas,
                subordinate_to,
                lease_ms,
                first_token,
                protects,
                outages,
                forgets_on_restart,
                restart_delay_ms,
                clock_rate_percent,
            });
        }

        let mut resources = Vec::new();
        for name in &resource_names {
            let rows: Vec<String> = (0..self.size(1..=4, 1, limits::ROWS_MAX))
                .map(|i| self.name(ROWS, i))
                .collect();
            let fencing = self.pick(&[Fencing::Off, Fencing::AnySource, Fencing::OneSource]);
            let wants_source = fencing == Fencing::OneSource;
            let fencing_source = if wants_source != self.chance(self.bad) {
                Some(self.reference(&service_names))
            } else {
                None
            };
            let partition = if self.chance(0.15) && !service_names.is_empty() {
                let mut shares: Vec<RowShare> = Vec::new();
                for (i, row) in rows.iter().enumerate() {
                    let service = service_names[i % service_names.len()].clone();
                    match shares.iter_mut().find(|s| s.service == service) {
                        Some(s) => s.rows.push(row.clone()),
                        None => shares.push(RowShare {
                            service,
                            rows: vec![row.clone()],
                        }),
                    }
                }
                if self.chance(self.bad) {
                    shares.push(RowShare {
                        service: self.reference(&service_names),
                        rows: self.subset(&rows, 2),
                    });
                }
                shares
            } else {
                Vec::new()
            };
            resources.push(Resource {
                name: name.clone(),
                region: self.chance(0.5).then(|| self.reference(&regions)),
                rows,
                initial: if self.chance(self.bad) {
                    self.pick(&[i64::MIN, -1, i64::MAX - 1, i64::MAX])
                } else {
                    self.rng.i64_in(-100..=100)
                },
                fencing,
                fencing_source,
                fencing_checks: self.pick(&[FencingChecks::Writes, FencingChecks::AllAccesses]),
                partition,
            });
        }

        let mut clients = Vec::new();
        for name in &class_names {
            let protocol = self.protocol(&services);
            let resource = self.reference(&resource_names);
            let own_rows: Vec<String> = resources
                .iter()
                .find(|r| r.name == resource)
                .map(|r| r.rows.clone())
                .unwrap_or_default();
            // Think times shorter than the network's jitter let one operation's last message
            // and the next operation's first overtake each other, so small worlds give them
            // extra weight.
            let period_ms = if self.small && self.chance(0.25) {
                self.upto(3)
            } else {
                self.ms(if self.heavy { 20 } else { 500 })
            };
            let work_ms = self.ms(if self.heavy { 50 } else { 200 });
            clients.push(ClientClass {
                name: name.clone(),
                count: if self.chance(self.bad) {
                    self.pick(&[
                        0,
                        limits::CLIENTS_PER_CLASS_MAX,
                        limits::CLIENTS_PER_CLASS_MAX + 1,
                        limits::CLIENTS_MAX,
                        u32::MAX,
                    ])
                } else {
                    self.rng.u32_in(if self.small {
                        1..=3
                    } else if self.heavy {
                        1..=limits::CLIENTS_PER_CLASS_MAX
                    } else {
                        1..=4
                    })
                },
                region: self.reference(&regions),
                protocol,
                resource,
                rows: self.subset(&own_rows, 2),
                start_ms: self.ms(duration_ms / 4 + 1),
                stop_ms: self.chance(0.2).then(|| self.ms(duration_ms)),
                // Both zero is an error the validator names; a clean draw avoids it.
                period_ms: if period_ms == 0 && work_ms == 0 && self.bad == 0.0 {
                    1
                } else {
                    period_ms
                },
                jitter_ms: self.ms(200),
                work_ms,
                acquire_timeout_ms: self.chance(0.3).then(|| {
                    if self.chance(self.bad) {
                        0
                    } else {
                        self.rng.u64_in(1..=1_000)
                    }
                }),
                max_retries: if self.chance(self.bad) {
                    self.pick(&[0, limits::RETRIES_MAX, limits::RETRIES_MAX + 1, u32::MAX])
                } else {
                    self.rng.u32_in(0..=5)
                },
                retry_backoff_ms: self.ms(200),
                lease_aware: self.chance(if self.small { 0.5 } else { 0.3 }),
                lease_margin_ms: self.ms(50),
                max_operations: self.chance(0.2).then(|| {
                    if self.chance(self.bad) {
                        self.pick(&[0, u32::MAX])
                    } else {
                        self.rng.u32_in(1..=50)
                    }
                }),
            });
        }

        let partitions = (0..self.size(self.faults(), 0, limits::WINDOWS_MAX))
            .map(|_| {
                let mut groups: Vec<Vec<String>> = vec![Vec::new(), Vec::new()];
                // A small world may also leave a region on neither side, cut off from no one.
                let sides = groups.len() + usize::from(self.small);
                for r in &regions {
                    let g = self.rng.usize_range(0..sides);
                    if let Some(group) = groups.get_mut(g) {
                        group.push(r.clone());
                    }
                }
                if self.chance(self.bad) {
                    let extra = self.subset(&regions, 3);
                    groups.push(extra);
                }
                if self.chance(self.bad) {
                    groups.truncate(1);
                }
                Partition {
                    start_ms: self.ms(duration_ms),
                    duration_ms: self.ms(duration_ms / 2 + 1),
                    groups,
                    mode: self.pick(&[PartitionMode::Drop, PartitionMode::Delay]),
                }
            })
            .collect();

        let mut pause_targets: Vec<String> = class_names.clone();
        pause_targets.extend(class_names.iter().map(|c| format!("{c}-1")));
        let pauses = (0..self.size(self.faults(), 0, limits::WINDOWS_MAX))
            .map(|_| Pause {
                client: self.reference(&pause_targets),
                start_ms: self.ms(duration_ms),
                duration_ms: self.ms(duration_ms / 2 + 1),
            })
            .collect();

        // Migrations move a resource between two different independent services.
        let independent: Vec<String> = services
            .iter()
            .filter(|s| s.subordinate_to.is_none())
            .map(|s| s.name.clone())
            .collect();
        let migrations_max = if independent.len() >= 2 || self.bad > 0.0 {
            *self.faults().end()
        } else {
            0
        };
        let migrations = (0..self.size(0..=migrations_max, 0, limits::MIGRATIONS_MAX))
            .map(|_| {
                let (from, to) = if independent.len() >= 2 && !self.chance(self.bad) {
                    let i = self.rng.usize_range(0..independent.len());
                    let j = (i + self.rng.usize_range(1..independent.len())) % independent.len();
                    (independent[i].clone(), independent[j].clone())
                } else {
                    (
                        self.reference(&service_names),
                        self.reference(&service_names),
                    )
                };
                Migration {
                    at_ms: self.ms(duration_ms),
                    resource: self.reference(&resource_names),
                    from,
                    to,
                    mode: self.pick(&[
                        MigrationMode::Naive,
                        MigrationMode::Drain,
                        MigrationMode::Transfer,
                    ]),
                }
            })
            .collect();

        let max_events = match cap {
            Some(cap) => Some(cap),
            // Small worlds always have a budget, low enough that a run which spins in place
            // hits it in a fraction of a second, and sometimes low enough to cut a run short.
            None if self.small => Some(if self.chance(0.35) {
                self.rng.u64_in(50..=2_000)
            } else {
                self.rng.u64_in(2_000..=20_000)
            }),
            None if self.chance(0.5) => None,
            None => Some(self.pick(&[
                0,
                1,
                1_000,
                limits::EVENTS_DEFAULT,
                limits::EVENTS_MAX,
                limits::EVENTS_MAX + 1,
            ])),
        };
        Scenario {
            name: if self.chance(self.bad) {
                "T".repeat(limits::TITLE_LEN_MAX + self.pick(&[0, 1]))
            } else {
                "Generated".to_string()
            },
            description: if self.chance(self.bad) {
                "d".repeat(limits::DESCRIPTION_LEN_MAX + self.pick(&[0, 1]))
            } else {
                String::new()
            },
            duration_ms,
            seed: if self.chance(0.1) {
                self.pick(&[0, 1 << 53, i64::MAX as u64, u64::MAX])
            } else {
                self.upto(1_000_000)
            },
            max_events,
            regions,
            network,
            services,
            resources,
            clients,
            partitions,
            pauses,
            migrations,
        }
    }

    fn protocol(&mut self, services: &[Service]) -> Protocol {
        let names: Vec<String> = services.iter().map(|s| s.name.clone()).collect();
        // Small worlds give each kind of protocol the same chance: the fuzzer's odds favour
        // single locks, which leaves too few token chains and lockless clients in a few hundred
        // cases.
        let kind = if self.small {
            [0, 4, 6, 8, 9, 10][self.rng.usize_range(0..6)]
        } else {
            self.rng.u32_range(0..11)
        };
        match kind {
            0..4 => Protocol::Single {
                service: self.reference(&names),
            },
            4..6 => Protocol::AllUnordered {
                services: self.some_of(&names, 3),
                skip_unreachable: self.chance(0.5),
            },
            6..8 => Protocol::AllOrdered {
                services: self.some_of(&names, 3),
                skip_unreachable: self.chance(0.5),
            },
            8 => {
                // A chain that the rules accept, when the scenario has one to offer.
                match services.iter().find(|s| s.subordinate_to.is_some()) {
                    Some(sub) if !self.chance(self.bad) => Protocol::TokenChain {
                        authority: sub.subordinate_to.clone().unwrap_or_default(),
                        subordinate: sub.name.clone(),
                    },
                    _ if self.bad == 0.0 => Protocol::Single {
                        service: self.reference(&names),
                    },
                    _ => Protocol::TokenChain {
                        authority: self.reference(&names),
                        subordinate: self.reference(&names),
                    },
                }
            }
            9 => Protocol::NoLock,
            _ => {
                // A majority of the independent services that the rules accept: its drift
                // allowance below the shortest lease among them.
                let independent: Vec<&Service> = services
                    .iter()
                    .filter(|s| s.subordinate_to.is_none())
                    .collect();
                if independent.len() < 2 && self.bad == 0.0 {
                    return Protocol::Single {
                        service: self.reference(&names),
                    };
                }
                let chosen: Vec<String> = if self.chance(self.bad) {
                    self.some_of(&names, 3)
                } else {
                    let names: Vec<String> = independent.iter().map(|s| s.name.clone()).collect();
                    let n = self.rng.usize_in(2..=names.len().clamp(2, 5));
                    names.into_iter().take(n).collect()
                };
                let shortest = services
                    .iter()
                    .filter(|s| chosen.contains(&s.name))
                    .filter_map(|s| s.lease_ms)
                    .min();
                let clock_drift_ms = match shortest {
                    _ if self.chance(self.bad) => self.ms(2_000),
                    Some(lease) if lease > 1 => self.rng.u64_in(0..=(lease - 1).min(50)),
                    _ => 0,
                };
                let quorum = if self.chance(self.bad) {
                    Some(self.pick(&[0, chosen.len() as u32 + 1]))
                } else if self.chance(0.3) {
                    Some(self.rng.u32_in(1..=(chosen.len() as u32).max(1)))
                } else {
                    None
                };
                Protocol::Majority {
                    services: chosen,
                    quorum,
                    clock_drift_ms,
                }
            }
        }
    }
}
