//! The generated scenarios of the property tests: the library's generator (the fuzzer's too)
//! reading a tape of numbers that proptest draws and shrinks, and the shapes some properties
//! need (one fenced service, a token chain, a round-trip migration, clients that lock every
//! service, few clients).

use std::fmt;
use std::ops::{Range, RangeInclusive};

use proptest::collection::vec;
use proptest::prelude::*;

use lockstep::scenario::{Fencing, FencingChecks, Migration, MigrationMode, Protocol};
use lockstep::testgen::{Draw, Gen};
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

/// Numbers drawn by proptest that the shared generator reads as its random draws, one number a
/// draw (and zeros once they run out). Proptest shrinks a failing tape by bringing its numbers
/// towards zero, and the generator reads a zero as the least of a range and as "no" to a
/// chance, so a shrunk tape is a smaller, plainer world.
struct Tape {
    values: Vec<u64>,
    next: usize,
}

impl Tape {
    /// A number from `lo` to `hi`, both included.
    fn within(&mut self, lo: i128, hi: i128) -> i128 {
        let v = self.values.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        lo + i128::from(v) % (hi - lo + 1)
    }
}

impl Draw for Tape {
    fn chance(&mut self, p: f64) -> bool {
        // The top of the tape's range says yes, so that zero says no.
        let v = self.within(0, (1 << 53) - 1) as f64;
        v >= (1.0 - p) * (1u64 << 53) as f64
    }

    fn u32_range(&mut self, r: Range<u32>) -> u32 {
        self.within(r.start.into(), i128::from(r.end) - 1) as u32
    }

    fn u32_in(&mut self, r: RangeInclusive<u32>) -> u32 {
        self.within((*r.start()).into(), (*r.end()).into()) as u32
    }

    fn u64_in(&mut self, r: RangeInclusive<u64>) -> u64 {
        self.within((*r.start()).into(), (*r.end()).into()) as u64
    }

    fn i64_in(&mut self, r: RangeInclusive<i64>) -> i64 {
        self.within((*r.start()).into(), (*r.end()).into()) as i64
    }

    fn usize_range(&mut self, r: Range<usize>) -> usize {
        self.within(r.start as i128, r.end as i128 - 1) as usize
    }

    fn usize_in(&mut self, r: RangeInclusive<usize>) -> usize {
        self.within(*r.start() as i128, *r.end() as i128) as usize
    }
}

/// How many numbers a tape holds: more than a small world draws (fewer than 300 in practice).
const TAPE_LEN: usize = 512;

/// Any valid scenario the shared generator draws for small worlds, with any seed.
pub(super) fn any_scenario() -> impl Strategy<Value = Case> {
    vec(any::<u64>(), TAPE_LEN).prop_map(|values| {
        let mut tape = Tape { values, next: 0 };
        Case(
            Gen {
                rng: &mut tape,
                bad: 0.0,
                heavy: false,
                small: true,
            }
            .scenario(None),
        )
    })
}

/// A resource moved from one independent service to another and later back again, with the
/// first class locking in the service it starts in.
pub(super) fn round_trip_migration() -> impl Strategy<Value = Case> {
    (any_scenario(), 0u64..1500, 1u64..=1000, 0u8..3, 0u8..3).prop_map(
        |(Case(mut s), at_ms, gap_ms, there, back)| {
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

/// Keeps only the first `n` services, each independent, and drops what named the others: the
/// resources' shares of rows by service, and migrations.
fn keep_services(s: &mut Scenario, n: usize) {
    s.services.truncate(n);
    for service in &mut s.services {
        service.subordinate_to = None;
    }
    for r in &mut s.resources {
        r.partition.clear();
    }
    s.migrations.clear();
}

/// Every service keeps its state across its outages: the properties that rest on one order
/// (a lock held until released, tokens that only grow) assume it.
fn persistent(s: &mut Scenario) {
    for service in &mut s.services {
        service.forgets_on_restart = false;
        service.restart_delay_ms = 0;
    }
}

/// Every resource fenced with `source`'s tokens, checked on every access.
fn fence_every_access(s: &mut Scenario, source: &str) {
    for r in &mut s.resources {
        r.fencing = Fencing::OneSource;
        r.fencing_source = Some(source.to_string());
        r.fencing_checks = FencingChecks::AllAccesses;
    }
}

/// Every class locks in one independent service, the first, which also fences every resource
/// and checks every access, and keeps its state across outages. Leases, outages, partitions
/// and pauses stay as generated.
pub(super) fn single_service_fenced() -> impl Strategy<Value = Case> {
    any_scenario().prop_map(|Case(mut s)| {
        keep_services(&mut s, 1);
        persistent(&mut s);
        let only = s.services[0].name.clone();
        for c in &mut s.clients {
            c.protocol = Protocol::Single {
                service: only.clone(),
            };
        }
        fence_every_access(&mut s, &only);
        Case(s)
    })
}

/// Every class takes a token from the authority (the first service) and presents it to the
/// subordinate (the second); every resource fences with the authority's tokens on every access.
pub(super) fn token_chain_fenced() -> impl Strategy<Value = Case> {
    any_scenario().prop_map(|Case(mut s)| {
        if s.services.len() < 2 {
            let mut copy = s.services[0].clone();
            copy.name = "chain".to_string();
            copy.first_token += 500;
            s.services.push(copy);
        }
        keep_services(&mut s, 2);
        persistent(&mut s);
        let authority = s.services[0].name.clone();
        let subordinate = s.services[1].name.clone();
        s.services[1].subordinate_to = Some(authority.clone());
        for c in &mut s.clients {
            c.protocol = Protocol::TokenChain {
                authority: authority.clone(),
                subordinate: subordinate.clone(),
            };
        }
        fence_every_access(&mut s, &authority);
        Case(s)
    })
}

/// Every class locks in one independent service without leases that keeps its state across
/// outages, and no client ever pauses. Fencing, outages and partitions stay as generated.
pub(super) fn single_service_no_lease() -> impl Strategy<Value = Case> {
    any_scenario().prop_map(|Case(mut s)| {
        keep_services(&mut s, 1);
        persistent(&mut s);
        s.services[0].lease_ms = None;
        s.services[0].clock_rate_percent = 100;
        let only = s.services[0].name.clone();
        for c in &mut s.clients {
            c.protocol = Protocol::Single {
                service: only.clone(),
            };
        }
        for r in &mut s.resources {
            if r.fencing == Fencing::OneSource {
                r.fencing_source = Some(only.clone());
            }
        }
        s.pauses.clear();
        Case(s)
    })
}

/// Every class locks by a majority of all the services (at least two, made independent, kept
/// without leases and keeping their state across outages), for the quorum the generator drew
/// if it is more than half, otherwise more than half. Outages, partitions and pauses stay as
/// generated.
pub(super) fn majority_no_lease() -> impl Strategy<Value = Case> {
    any_scenario().prop_map(|Case(mut s)| {
        if s.services.len() < 2 {
            let mut copy = s.services[0].clone();
            copy.name = "second".to_string();
            copy.first_token += 500;
            s.services.push(copy);
        }
        let n = s.services.len();
        keep_services(&mut s, n);
        persistent(&mut s);
        for service in &mut s.services {
            service.lease_ms = None;
            service.clock_rate_percent = 100;
        }
        let names: Vec<String> = s.services.iter().map(|x| x.name.clone()).collect();
        for c in &mut s.clients {
            let quorum = match &c.protocol {
                Protocol::Majority {
                    quorum: Some(q), ..
                } if (*q as usize) * 2 > n && (*q as usize) <= n => Some(*q),
                _ => None,
            };
            c.protocol = Protocol::Majority {
                services: names.clone(),
                quorum,
                clock_drift_ms: 0,
            };
        }
        Case(s)
    })
}

/// Every client locks every service at once, so that waits cross services and close loops.
pub(super) fn cycle_prone() -> impl Strategy<Value = Case> {
    any_scenario().prop_map(|Case(mut s)| {
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
