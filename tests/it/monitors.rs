//! The monitors on traces written by hand: each trace is a few events that a user could read
//! in `lockstep run`'s output, chosen so that one rule decides the verdict. A simulated run
//! never produces an inconsistent service log, so these are the only tests that show the
//! check finds one.

use lockstep::monitor::{self, check_service_logs, snapshot, verdict_of};
use lockstep::trace::{BeliefEnd, Event, GrantRef, ServiceOp, Values, What};
use lockstep::world::{Micros, World};
use lockstep::Scenario;

/// Two independent services `s` and `t`, three clients `x-1`, `y-1` and `z-1`, a resource `r`
/// with three rows and a resource `q` with one. Nothing here is simulated; the scenario only
/// names things.
fn world() -> World {
    let s = Scenario::from_toml_str(
        r#"
        name = "hand-made traces"
        duration_ms = 10000
        regions = ["east"]
        resources = [{ name = "r", rows = ["a", "b", "c"] }, { name = "q", rows = ["a"] }]
        services = [{ name = "s", replicas = ["east"] }, { name = "t", replicas = ["east"] }]
        [[clients]]
        name = "x"
        region = "east"
        protocol = { kind = "all_unordered", services = ["s", "t"] }
        resource = "r"
        period_ms = 100
        work_ms = 10
        [[clients]]
        name = "y"
        region = "east"
        protocol = { kind = "all_unordered", services = ["s", "t"] }
        resource = "r"
        period_ms = 100
        work_ms = 10
        [[clients]]
        name = "z"
        region = "east"
        protocol = { kind = "all_unordered", services = ["s", "t"] }
        resource = "r"
        period_ms = 100
        work_ms = 10
        "#,
    )
    .unwrap();
    World::compile(&s)
}

const S: u32 = 0;
const T: u32 = 1;
const X: u32 = 0;
const Y: u32 = 1;
const Z: u32 = 2;
const END: Micros = 10_000_000;

/// A trace under construction. Service operations get each service's next instant, as a real
/// service numbers them, unless a test says otherwise.
#[derive(Default)]
struct Trace {
    events: Vec<Event>,
    instants: [u64; 4],
}

impl Trace {
    /// Service `service` does `op` on `r` at `ms` milliseconds.
    fn op(self, ms: u64, service: u32, op: ServiceOp) -> Trace {
        let instant = self.instants[service as usize] + 1;
        self.op_at(ms, service, instant, op)
    }

    /// The same, at a given instant of the service's own clock.
    fn op_at(mut self, ms: u64, service: u32, instant: u64, op: ServiceOp) -> Trace {
        self.instants[service as usize] = instant;
        self.event(
            ms,
            What::Service {
                service,
                instant,
                resource: 0,
                op,
            },
        )
    }

    fn event(mut self, ms: u64, what: What) -> Trace {
        self.events.push(Event {
            at: ms * 1000,
            what,
        });
        self
    }

    /// A client starts to believe it holds rows of `r` (a bit set), through one grant.
    fn believes(self, ms: u64, client: u32, rows: u64, grant: (u32, u64, u64)) -> Trace {
        let (service, token, instant) = grant;
        self.event(
            ms,
            What::BeliefStarted {
                client,
                resource: 0,
                rows,
                grants: vec![GrantRef {
                    service,
                    token,
                    instant,
                }],
            },
        )
    }

    fn lets_go(self, ms: u64, client: u32) -> Trace {
        self.event(
            ms,
            What::BeliefEnded {
                client,
                resource: 0,
                reason: BeliefEnd::Released,
            },
        )
    }
}

/// A world for hand-made traces: resources r and q, the given services (one replica each), and
/// clients by name, each locking every service unordered unless its protocol is given.
fn hand_world(services: &[&str], clients: &[(&str, Option<&str>)]) -> World {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut toml = format!(
        "name = \"hand-made\"\nduration_ms = 10000\nregions = [\"east\"]\n\
         resources = [{{ name = \"r\", rows = [\"a\"] }}, {{ name = \"q\", rows = [\"a\"] }}]\n\
         services = [{}]\n",
        services
            .iter()
            .map(|n| format!("{{ name = \"{n}\", replicas = [\"east\"] }}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let unordered = format!(
        "{{ kind = \"all_unordered\", services = [{}] }}",
        list(services)
    );
    for (name, protocol) in clients {
        toml += &format!(
            "[[clients]]\nname = \"{name}\"\nregion = \"east\"\nprotocol = {}\n\
             resource = \"r\"\nperiod_ms = 100\nwork_ms = 10\n",
            protocol.unwrap_or(&unordered)
        );
    }
    let s = Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    World::compile(&s)
}

/// Moves every event of a trace that names a resource to `resource`: the builder writes the
/// first one.
fn on_resource(mut events: Vec<Event>, resource: u32) -> Vec<Event> {
    for e in &mut events {
        match &mut e.what {
            What::Service { resource: r, .. }
            | What::BeliefStarted { resource: r, .. }
            | What::BeliefEnded { resource: r, .. } => *r = resource,
            _ => {}
        }
    }
    events
}

/// A violation's quoted service lines, each without its time and its service's instant.
fn quoted(o: &lockstep::monitor::Violation) -> Vec<(&str, Vec<String>)> {
    o.service_logs
        .iter()
        .map(|l| {
            let lines = l
                .lines
                .iter()
                .map(|line| {
                    line.split_whitespace()
                        .skip(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            (l.service.as_str(), lines)
        })
        .collect()
}

fn granted(client: u32, token: u64) -> ServiceOp {
    ServiceOp::Granted {
        client,
        token,
        lease_until: None,
    }
}

fn released(client: u32, token: u64) -> ServiceOp {
    ServiceOp::Released { client, token }
}

fn queued(client: u32, behind: u32) -> ServiceOp {
    ServiceOp::Queued {
        client,
        behind: Some(behind),
    }
}

#[test]
fn each_service_log_is_checked_for_gaps_tokens_and_holders() {
    struct Case {
        what: &'static str,
        trace: Trace,
        problems: &'static [&'static str],
    }
    let cases = [
        Case {
            what: "grants, a confirmation, an expiry and a hand-over, in order",
            trace: Trace::default()
                .op(1, S, granted(X, 1))
                .op(2, S, released(X, 1))
                .op(3, S, granted(Y, 2))
                .op(4, S, granted(Y, 2))
                .op(
                    5,
                    S,
                    ServiceOp::Expired {
                        client: Y,
                        token: 2,
                    },
                )
                .op(6, S, granted(X, 3))
                .op(
                    7,
                    S,
                    ServiceOp::MovedOut {
                        client: X,
                        to: T,
                        held: true,
                    },
                )
                .op(8, S, granted(Z, 4)),
            problems: &[],
        },
        Case {
            what: "an instant skipped",
            trace: Trace::default()
                .op_at(1, S, 1, granted(X, 1))
                .op_at(2, S, 3, released(X, 1)),
            problems: &["instant 3 follows instant 1"],
        },
        Case {
            what: "a token given twice",
            trace: Trace::default()
                .op(1, S, granted(X, 5))
                .op(2, S, released(X, 5))
                .op(3, S, granted(Y, 5)),
            problems: &["instant 3: token 5 does not increase"],
        },
        Case {
            what: "a second holder",
            trace: Trace::default()
                .op(1, S, granted(X, 1))
                .op(2, S, granted(Y, 2)),
            problems: &["instant 2: granted to y-1 while x-1 holds it"],
        },
        Case {
            what: "a second holder with the first holder's token",
            trace: Trace::default()
                .op(1, S, granted(X, 1))
                .op(2, S, granted(Y, 1)),
            problems: &[
                "instant 2: granted to y-1 while x-1 holds it",
                "instant 2: token 1 does not increase",
            ],
        },
        Case {
            what: "the holder granted again with a new token, without a release",
            trace: Trace::default()
                .op(1, S, granted(X, 1))
                .op(2, S, granted(X, 2)),
            problems: &["instant 2: granted to x-1 while x-1 holds it"],
        },
        Case {
            what: "a release by a client that does not hold the lock",
            trace: Trace::default()
                .op(1, S, granted(X, 1))
                .op(2, S, released(Y, 1)),
            problems: &["instant 2: y-1 ended a hold it did not have"],
        },
        Case {
            what: "an expiry of a token that is not the holder's",
            trace: Trace::default().op(1, S, granted(X, 1)).op(
                2,
                S,
                ServiceOp::Expired {
                    client: X,
                    token: 2,
                },
            ),
            problems: &["instant 2: x-1 ended a hold it did not have"],
        },
    ];
    let world = world();
    for case in cases {
        let logs = check_service_logs(&world, &case.trace.events);
        let names: Vec<&str> = logs.iter().map(|l| l.service.as_str()).collect();
        assert_eq!(names, ["s", "t"], "one check per service");
        let s = &logs[0];
        assert_eq!(s.problems, case.problems, "{}", case.what);
        assert_eq!(s.consistent, case.problems.is_empty(), "{}", case.what);
        assert_eq!(
            s.operations,
            case.trace.events.len() as u64,
            "{}",
            case.what
        );
        // The other service logged nothing, and nothing is wrong with that.
        assert!(logs[1].consistent && logs[1].operations == 0);
        // The verdict says so in words.
        let v = verdict_of(&world, &case.trace.events, END, false, 0);
        let inconsistent = v.summary().contains("Service s's log is INCONSISTENT");
        assert_eq!(inconsistent, !case.problems.is_empty(), "{}", case.what);
    }
}

#[test]
fn a_confirmation_of_a_grant_is_not_a_second_grant() {
    let trace = Trace::default()
        .op(1, S, granted(X, 1))
        .op(2, S, granted(X, 1))
        .op(3, S, released(X, 1));
    let logs = check_service_logs(&world(), &trace.events);
    assert_eq!((logs[0].operations, logs[0].grants), (3, 1));
    assert!(logs[0].consistent);
}

#[test]
fn two_services_each_consistent_on_its_own_can_both_grant() {
    // The point of claim 1: neither log is wrong, yet two clients hold the lock.
    let trace = Trace::default()
        .op(1, S, granted(X, 1))
        .believes(1, X, 0b001, (S, 1, 1))
        .op(2, T, granted(Y, 1))
        .believes(2, Y, 0b001, (T, 1, 1))
        .op(3, S, released(X, 1))
        .lets_go(3, X)
        .op(4, T, released(Y, 1))
        .lets_go(4, Y);
    let logs = check_service_logs(&world(), &trace.events);
    assert!(logs.iter().all(|l| l.consistent && l.grants == 1));
    let v = verdict_of(&world(), &trace.events, END, false, 0);
    assert_eq!(v.incomparable_pairs, 1);
    assert_eq!(v.overlapping_service_pairs, [["s", "t"]]);
}

#[test]
fn the_snapshot_shows_who_holds_and_who_believes_at_an_instant() {
    let trace = Trace::default()
        .op(10, S, granted(X, 1))
        .believes(11, X, 0b011, (S, 1, 1))
        .lets_go(19, X)
        .op(20, S, released(X, 1))
        .op(30, T, granted(Y, 7))
        .believes(31, Y, 0b110, (T, 7, 1))
        .op(32, S, granted(Z, 2))
        .believes(33, Z, 0b100, (S, 2, 3));
    let world = world();
    struct Case {
        at_ms: u64,
        holders: &'static [(&'static str, &'static str, u64)],
        believers: &'static [&'static str],
        conflicts: &'static [[&'static str; 2]],
    }
    let cases = [
        Case {
            at_ms: 5,
            holders: &[],
            believers: &[],
            conflicts: &[],
        },
        Case {
            at_ms: 15,
            holders: &[("s", "x-1", 1)],
            believers: &["x-1"],
            conflicts: &[],
        },
        // Released: no holder is left behind.
        Case {
            at_ms: 25,
            holders: &[],
            believers: &[],
            conflicts: &[],
        },
        Case {
            at_ms: 40,
            holders: &[("s", "z-1", 2), ("t", "y-1", 7)],
            believers: &["y-1", "z-1"],
            conflicts: &[["y-1", "z-1"]],
        },
    ];
    for case in cases {
        let snap = snapshot(&world, &trace.events, case.at_ms * 1000);
        let holders: Vec<(&str, &str, u64)> = snap
            .holders
            .iter()
            .map(|h| (h.service.as_str(), h.client.as_str(), h.token))
            .collect();
        assert_eq!(holders, case.holders, "at {} ms", case.at_ms);
        let believers: Vec<&str> = snap.believers.iter().map(|b| b.client.as_str()).collect();
        assert_eq!(believers, case.believers, "at {} ms", case.at_ms);
        assert_eq!(snap.conflicts, case.conflicts, "at {} ms", case.at_ms);
        let broken = !case.conflicts.is_empty();
        assert_eq!(
            snap.exclusion == lockstep::Exclusion::Broken,
            broken,
            "at {} ms",
            case.at_ms
        );
    }
}

#[test]
fn overlaps_are_incomparable_only_when_no_service_ordered_both() {
    struct Case {
        what: &'static str,
        trace: Trace,
        pairs: u64,
        most: u32,
    }
    let cases = [
        Case {
            what: "overlapping beliefs through two services",
            trace: Trace::default()
                .op(0, S, granted(X, 1))
                .believes(1, X, 0b001, (S, 1, 1))
                .op(10, T, granted(Y, 1))
                .believes(11, Y, 0b001, (T, 1, 1))
                .lets_go(20, X)
                .lets_go(30, Y),
            pairs: 1,
            most: 2,
        },
        Case {
            what: "one ends as the other begins",
            trace: Trace::default()
                .op(0, S, granted(X, 1))
                .believes(1, X, 0b001, (S, 1, 1))
                .lets_go(10, X)
                .op(10, T, granted(Y, 1))
                .believes(10, Y, 0b001, (T, 1, 1))
                .lets_go(20, Y),
            pairs: 0,
            most: 1,
        },
        Case {
            what: "one service, one order: a lease expired under its holder",
            trace: Trace::default()
                .op(0, S, granted(X, 1))
                .believes(1, X, 0b001, (S, 1, 1))
                .op(
                    10,
                    S,
                    ServiceOp::Expired {
                        client: X,
                        token: 1,
                    },
                )
                .op(11, S, granted(Y, 2))
                .believes(12, Y, 0b001, (S, 2, 3))
                .lets_go(20, X)
                .lets_go(30, Y),
            pairs: 0,
            most: 1,
        },
        Case {
            what: "grants overlap in the services' logs, but nobody believed at once",
            trace: Trace::default()
                .op(0, S, granted(X, 1))
                .op(10, T, granted(Y, 1))
                .op(20, S, released(X, 1))
                .op(30, T, released(Y, 1)),
            pairs: 0,
            most: 0,
        },
        Case {
            what: "beliefs on rows the other never touches",
            trace: Trace::default()
                .op(0, S, granted(X, 1))
                .believes(1, X, 0b001, (S, 1, 1))
                .op(10, T, granted(Y, 1))
                .believes(11, Y, 0b010, (T, 1, 1))
                .lets_go(20, X)
                .lets_go(30, Y),
            pairs: 0,
            most: 1,
        },
    ];
    let world = world();
    for case in cases {
        let v = verdict_of(&world, &case.trace.events, END, false, 0);
        assert_eq!(v.incomparable_pairs, case.pairs, "{}", case.what);
        assert_eq!(v.max_simultaneous_holders, case.most, "{}", case.what);
    }
}

#[test]
fn a_wait_cycle_is_reported_once_with_what_broke_it() {
    // x holds s and waits at t; y holds t and waits at s: a cycle from 3 ms. z then queues at
    // s too, which changes nothing about the cycle. At 10 ms one operation breaks it, or
    // nothing does; this world has no timeouts and no leases, so an unbroken cycle is a
    // deadlock.
    let cycle = || {
        Trace::default()
            .op(0, S, granted(X, 1))
            .op(1, T, granted(Y, 1))
            .op(2, S, queued(Y, X))
            .op(3, T, queued(X, Y))
            .op(4, S, queued(Z, X))
    };
    let cases = [
        (None, None),
        (
            Some((T, ServiceOp::Cancelled { client: X })),
            Some("client timeout"),
        ),
        (
            Some((
                S,
                ServiceOp::Expired {
                    client: X,
                    token: 1,
                },
            )),
            Some("lease expiry"),
        ),
        (
            Some((
                S,
                ServiceOp::Superseded {
                    client: X,
                    token: 1,
                },
            )),
            Some("a higher authority token"),
        ),
        (Some((S, released(X, 1))), Some("release")),
        (
            Some((
                S,
                ServiceOp::MovedOut {
                    client: X,
                    to: T,
                    held: true,
                },
            )),
            Some("migration"),
        ),
        (
            Some((
                T,
                ServiceOp::MovedOut {
                    client: X,
                    to: S,
                    held: false,
                },
            )),
            Some("migration"),
        ),
    ];
    let world = world();
    for (breaker, by) in cases {
        let trace = match breaker {
            Some((service, op)) => cycle().op(10, service, op),
            None => cycle(),
        };
        let v = verdict_of(&world, &trace.events, END, false, 0);
        assert_eq!(v.wait_cycles.len(), 1, "{by:?}: {:?}", v.wait_cycles);
        let c = &v.wait_cycles[0];
        let mut clients = c.clients.clone();
        clients.sort();
        assert_eq!(clients, ["x-1", "y-1"], "{by:?}");
        assert_eq!(c.formed_us, 3000, "{by:?}");
        assert_eq!(c.broken_by.as_deref(), by);
        assert_eq!(c.broken_us, by.map(|_| 10_000), "{by:?}");
        assert!(c.unbreakable);
        assert_eq!(v.deadlock, by.is_none(), "{by:?}");
    }
}

#[test]
fn a_cycle_closed_by_a_grant_is_found_whoever_else_stopped_waiting() {
    // y holds t and waits for s; z waits for both. When x lets go of s, s goes to z, which
    // still waits for t: z and y now wait for each other. The grant that closes the cycle also
    // ends z's own wait for s, which must leave y's wait for s in place. In the second case z
    // cancels a wait for s and queues again first: a cancel, likewise, ends only the wait it
    // names.
    let closing = |t: Trace| {
        t.op(4, T, queued(Z, Y))
            .op(5, S, released(X, 1))
            .op(5, S, granted(Z, 2))
    };
    let base = || {
        Trace::default()
            .op(0, S, granted(X, 1))
            .op(1, T, granted(Y, 1))
            .op(2, S, queued(Y, X))
    };
    let cases = [
        ("grant", closing(base().op(3, S, queued(Z, X)))),
        (
            "cancel, then grant",
            closing(
                base()
                    .op(3, S, queued(Z, X))
                    .op(3, S, ServiceOp::Cancelled { client: Z })
                    .op(3, S, queued(Z, X)),
            ),
        ),
    ];
    let world = world();
    for (case, trace) in cases {
        let v = verdict_of(&world, &trace.events, END, false, 0);
        assert_eq!(v.wait_cycles.len(), 1, "{case}: {:?}", v.wait_cycles);
        let c = &v.wait_cycles[0];
        let mut clients = c.clients.clone();
        clients.sort();
        assert_eq!(clients, ["y-1", "z-1"], "{case}");
        assert_eq!(c.formed_us, 5000, "{case}");
        assert_eq!(c.broken_us, None, "{case}");
    }
    // The same grant with y waiting for nothing closes no cycle: z waits for y, and w, which
    // waits for s, waits for z but nobody waits for w.
    let four = hand_world(
        &["s", "t"],
        &[("c", None), ("d", None), ("e", None), ("w", None)],
    );
    const W: u32 = 3;
    let open = Trace::default()
        .op(0, S, granted(X, 1))
        .op(1, T, granted(Y, 1))
        .op(2, S, queued(W, X))
        .op(3, S, queued(Z, X))
        .op(4, T, queued(Z, Y))
        .op(5, S, released(X, 1))
        .op(5, S, granted(Z, 2));
    let v = verdict_of(&four, &open.events, END, false, 0);
    assert!(v.wait_cycles.is_empty(), "{:?}", v.wait_cycles);
    // Nor does a wait for a holder that waits for a client who waits for nobody: z for x, x
    // for y, and y for nothing.
    let chain = Trace::default()
        .op(0, S, granted(X, 1))
        .op(1, T, granted(Y, 1))
        .op(2, T, queued(X, Y))
        .op(3, S, queued(Z, X));
    let v = verdict_of(&world, &chain.events, END, false, 0);
    assert!(v.wait_cycles.is_empty(), "{:?}", v.wait_cycles);
}

#[test]
fn a_grant_closes_no_cycle_when_its_waiters_are_out_of_reach() {
    // z is granted s while it waits for t, held by x, who waits for nothing; w, still queued
    // for s, holds u. A path of waits from z can only end at a holder, and w is one, so the
    // search for a cycle runs; it must not stop at x, whom nobody's wait for s leads back to.
    let world = hand_world(
        &["s", "t", "u"],
        &[("x", None), ("y", None), ("z", None), ("w", None)],
    );
    const U: u32 = 2;
    const W: u32 = 3;
    let trace = Trace::default()
        .op(0, T, granted(X, 1))
        .op(1, U, granted(W, 1))
        .op(2, S, granted(Y, 1))
        .op(3, S, queued(W, Y))
        .op(4, T, queued(Z, X))
        .op(5, S, released(Y, 1))
        .op(5, S, granted(Z, 2))
        .op(6, T, released(X, 1));
    let v = verdict_of(&world, &trace.events, END, false, 0);
    assert!(v.wait_cycles.is_empty(), "{:?}", v.wait_cycles);
}

#[test]
fn a_cycle_closed_by_a_grant_is_found_among_more_than_64_clients() {
    // Clients are kept in sets of 64-bit words; here the two in the cycle are in the second
    // word. The first client holds s; the 65th holds t and waits for s; the 66th waits for t.
    // When the first lets go of s, s goes to the 66th, and the last two wait for each other.
    let world = World::compile(
        &Scenario::from_toml_str(
            "name = \"many\"\nduration_ms = 10000\nregions = [\"east\"]\n\
             resources = [{ name = \"r\", rows = [\"a\"] }]\n\
             services = [{ name = \"s\", replicas = [\"east\"] }, \
             { name = \"t\", replicas = [\"east\"] }]\n\
             [[clients]]\nname = \"a\"\ncount = 64\nregion = \"east\"\n\
             protocol = { kind = \"all_unordered\", services = [\"s\", \"t\"] }\n\
             resource = \"r\"\nperiod_ms = 100\nwork_ms = 10\n\
             [[clients]]\nname = \"b\"\ncount = 2\nregion = \"east\"\n\
             protocol = { kind = \"all_unordered\", services = [\"s\", \"t\"] }\n\
             resource = \"r\"\nperiod_ms = 100\nwork_ms = 10\n",
        )
        .expect("a valid scenario"),
    );
    const Y64: u32 = 64;
    const Z65: u32 = 65;
    let trace = Trace::default()
        .op(0, S, granted(X, 1))
        .op(1, T, granted(Y64, 1))
        .op(2, S, queued(Y64, X))
        .op(3, T, queued(Z65, Y64))
        .op(4, S, released(X, 1))
        .op(4, S, granted(Z65, 2));
    let v = verdict_of(&world, &trace.events, END, false, 0);
    assert_eq!(v.wait_cycles.len(), 1, "{:?}", v.wait_cycles);
    let mut clients = v.wait_cycles[0].clients.clone();
    clients.sort();
    assert_eq!(clients, ["b-1", "b-2"]);
}

#[test]
fn a_wait_cycle_through_three_clients_is_found_when_its_last_wait_begins() {
    // Three services, each held by one client; each client then queues for the next one's
    // lock: x for t (held by y), y for u (held by z), and, closing the loop, z for s (held by
    // x). Finding it means following waits two steps from x, through y, to z.
    let world = hand_world(&["s", "t", "u"], &[("x", None), ("y", None), ("z", None)]);
    const U: u32 = 2;
    let trace = Trace::default()
        .op(0, S, granted(X, 1))
        .op(1, T, granted(Y, 1))
        .op(2, U, granted(Z, 1))
        .op(3, T, queued(X, Y))
        .op(4, U, queued(Y, Z))
        .op(5, S, queued(Z, X));
    let v = verdict_of(&world, &trace.events, END, false, 0);
    assert_eq!(v.wait_cycles.len(), 1, "{:?}", v.wait_cycles);
    let c = &v.wait_cycles[0];
    let mut clients = c.clients.clone();
    clients.sort();
    assert_eq!(clients, ["x-1", "y-1", "z-1"]);
    assert_eq!(c.formed_us, 5000);
    assert_eq!(c.broken_us, None);
}

#[test]
fn a_cycle_that_stands_when_another_breaks_is_followed_on_its_own_resource() {
    // Three standing cycles: a-1 and b-1 on q (through s and t), then c-1 and d-1 on r
    // (through s and t), then e-1 and f-1 on r (through u and v). When c-1 gives up its wait,
    // the first cycle on r breaks; the second still stands and must be followed from when it
    // closed. The one on q, though its clients come first, is q's alone.
    let names = ["a", "b", "c", "d", "e", "f"];
    let world = hand_world(&["s", "t", "u", "v"], &names.map(|n| (n, None)));
    const U: u32 = 2;
    const V: u32 = 3;
    let on_q = Trace::default()
        .op(0, S, granted(0, 1))
        .op(1, T, granted(1, 1))
        .op(2, T, queued(0, 1))
        .op(3, S, queued(1, 0));
    let mut events = on_resource(on_q.events, 1);
    let on_r = Trace {
        events: Vec::new(),
        instants: [2, 2, 0, 0],
    }
    .op(4, S, granted(2, 2))
    .op(5, T, granted(3, 2))
    .op(6, T, queued(2, 3))
    .op(7, S, queued(3, 2))
    .op(8, U, granted(4, 1))
    .op(9, V, granted(5, 1))
    .op(10, V, queued(4, 5))
    .op(11, U, queued(5, 4))
    .op(20, T, ServiceOp::Cancelled { client: 2 });
    events.extend(on_r.events);
    let v = verdict_of(&world, &events, END, false, 0);
    let cycles: Vec<(Vec<String>, u64, Option<u64>)> = v
        .wait_cycles
        .iter()
        .map(|c| {
            let mut clients = c.clients.clone();
            clients.sort();
            (clients, c.formed_us, c.broken_us)
        })
        .collect();
    let pair = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    assert_eq!(
        cycles,
        [
            (pair("c-1", "d-1"), 7_000, Some(20_000)),
            (pair("a-1", "b-1"), 3_000, None),
            (pair("e-1", "f-1"), 11_000, None),
        ]
    );
}

#[test]
fn a_wait_queued_again_keeps_the_time_it_began() {
    // Two cycles on r: c-1 and d-1 through s and t, e-1 and f-1 through u and v. e-1 is queued
    // at v a second time before the first cycle breaks; the second cycle, followed from then
    // on, still closed when f-1's wait began, not when e-1's wait was queued again.
    let names = ["c", "d", "e", "f"];
    let world = hand_world(&["s", "t", "u", "v"], &names.map(|n| (n, None)));
    const U: u32 = 2;
    const V: u32 = 3;
    let trace = Trace::default()
        .op(4, S, granted(0, 1))
        .op(5, T, granted(1, 1))
        .op(6, T, queued(0, 1))
        .op(7, S, queued(1, 0))
        .op(8, U, granted(2, 1))
        .op(9, V, granted(3, 1))
        .op(10, V, queued(2, 3))
        .op(11, U, queued(3, 2))
        .op(15, V, queued(2, 3))
        .op(20, T, ServiceOp::Cancelled { client: 0 });
    let v = verdict_of(&world, &trace.events, END, false, 0);
    let cycles: Vec<(u64, Option<u64>)> = v
        .wait_cycles
        .iter()
        .map(|c| (c.formed_us, c.broken_us))
        .collect();
    assert_eq!(cycles, [(7_000, Some(20_000)), (11_000, None)]);
}

#[test]
fn a_cycle_broken_by_a_holders_release_is_named_after_why_it_let_go() {
    // x holds s and is queued at t, which it went on without (as a client that skips an
    // unreachable service does); y holds t and waits for s. The cycle that the services' logs
    // show breaks when x releases s, and is named after why x's critical section ended.
    let cases = [
        (BeliefEnd::Released, "release"),
        (BeliefEnd::Rejected, "release after a rejected access"),
        (
            BeliefEnd::LeaseExpiredLocally,
            "release by a client whose lease ran out",
        ),
    ];
    let world = world();
    for (reason, named) in cases {
        let trace = Trace::default()
            .op(0, S, granted(X, 1))
            .op(1, T, granted(Y, 1))
            .op(2, T, queued(X, Y))
            .op(3, S, queued(Y, X))
            .believes(4, X, 0b001, (S, 1, 1))
            .event(
                5,
                What::BeliefEnded {
                    client: X,
                    resource: 0,
                    reason,
                },
            )
            .op(5, S, released(X, 1));
        let v = verdict_of(&world, &trace.events, END, false, 0);
        assert_eq!(v.wait_cycles.len(), 1, "{named}: {:?}", v.wait_cycles);
        let c = &v.wait_cycles[0];
        assert_eq!(c.broken_us, Some(5_000), "{named}");
        assert_eq!(c.broken_by.as_deref(), Some(named));
    }
}

#[test]
fn a_stall_counts_only_the_cycles_broken_inside_it() {
    // Stall one: x and y start at 0 ms and wait. On r, x and y close a cycle at 2 ms that
    // x's cancel breaks at 3 ms; y then holds both locks and its write lands at 6 ms, ending
    // the stall. On q, x and z close a cycle at 5 ms. If it breaks at 7 ms, after the stall,
    // each stall holds one broken cycle: no livelock. If it breaks at 6 ms, after the write
    // but at the same instant, it counts in the stall: two broken cycles, a livelock.
    for (q_breaks, livelocks) in [(7, 0), (6, 1)] {
        let on_r = Trace::default()
            .event(0, What::OpStarted { client: X, op: 1 })
            .event(0, What::OpStarted { client: Y, op: 1 })
            .op(1, S, granted(X, 1))
            .op(1, T, granted(Y, 1))
            .op(2, T, queued(X, Y))
            .op(2, S, queued(Y, X))
            .op(3, T, ServiceOp::Cancelled { client: X })
            .op(4, S, released(X, 1))
            .op(4, S, granted(Y, 2))
            .believes(5, Y, 0b001, (S, 2, 3))
            .event(
                6,
                What::Write {
                    client: Y,
                    resource: 0,
                    rows: 0b001,
                    token: None,
                    accepted: true,
                    values: Values::from_slice(&[1]),
                },
            );
        let on_q = on_resource(
            Trace::default()
                .op(5, S, granted(X, 1))
                .op(5, T, granted(Z, 1))
                .op(5, T, queued(X, Z))
                .op(5, S, queued(Z, X))
                .op(q_breaks, T, ServiceOp::Cancelled { client: X })
                .events,
            1,
        );
        let mut events = on_r.events;
        events.extend(on_q);
        // A stable sort: at 6 ms the write comes first.
        events.sort_by_key(|e| e.at);
        let world = world();
        let v = verdict_of(&world, &events, END, false, 0);
        let broken: Vec<(u64, Option<u64>)> = v
            .wait_cycles
            .iter()
            .map(|c| (c.formed_us, c.broken_us))
            .collect();
        assert_eq!(
            broken,
            [(2_000, Some(3_000)), (5_000, Some(q_breaks * 1000))]
        );
        assert_eq!(v.livelock_count, livelocks, "{q_breaks}: {:?}", v.livelocks);
        if livelocks == 1 {
            let l = &v.livelocks[0];
            assert_eq!((l.from_us, l.to_us, l.broken_cycles), (0, 6_000, 2));
            // z, whose operation the trace does not show, is not among those who waited.
            assert_eq!(l.clients, ["x-1", "y-1"]);
        }
    }
}

#[test]
fn a_stall_after_a_write_starts_at_it_with_the_clients_that_still_wait() {
    // Stall one (0 to 6 ms): x and y wait, close one cycle, and y's write ends it. x still
    // waits, so stall two starts at that write, with x alone: y, whose critical section began,
    // waits no longer, and n, which takes no lock, never waits. z joins at 8 ms; x and z then
    // close and break two cycles, one on r and one on q: a livelock from 6 ms.
    let world = hand_world(
        &["s", "t"],
        &[
            ("x", None),
            ("y", None),
            ("z", None),
            ("n", Some("{ kind = \"no_lock\" }")),
        ],
    );
    const N: u32 = 3;
    let on_r = Trace::default()
        .event(0, What::OpStarted { client: X, op: 1 })
        .event(0, What::OpStarted { client: Y, op: 1 })
        .op(1, S, granted(X, 1))
        .op(1, T, granted(Y, 1))
        .op(2, T, queued(X, Y))
        .op(2, S, queued(Y, X))
        .op(3, T, ServiceOp::Cancelled { client: X })
        .op(4, S, released(X, 1))
        .op(4, S, granted(Y, 2))
        .believes(5, Y, 0b001, (S, 2, 3))
        .event(
            6,
            What::Write {
                client: Y,
                resource: 0,
                rows: 0b001,
                token: None,
                accepted: true,
                values: Values::from_slice(&[1]),
            },
        )
        .op(7, S, released(Y, 2))
        .op(7, T, released(Y, 1))
        .event(7, What::OpStarted { client: N, op: 1 })
        .event(8, What::OpStarted { client: Z, op: 1 })
        .op(9, S, granted(X, 3))
        .op(9, T, granted(Z, 2))
        .op(10, T, queued(X, Z))
        .op(10, S, queued(Z, X))
        .op(11, T, ServiceOp::Cancelled { client: X });
    let on_q = on_resource(
        Trace::default()
            .op(12, S, granted(X, 1))
            .op(12, T, granted(Z, 1))
            .op(13, T, queued(X, Z))
            .op(13, S, queued(Z, X))
            .op(14, T, ServiceOp::Cancelled { client: X })
            .events,
        1,
    );
    let mut events = on_r.events;
    events.extend(on_q);
    events.sort_by_key(|e| e.at);
    let v = verdict_of(&world, &events, END, false, 0);
    let broken: Vec<(u64, Option<u64>)> = v
        .wait_cycles
        .iter()
        .map(|c| (c.formed_us, c.broken_us))
        .collect();
    assert_eq!(
        broken,
        [
            (2_000, Some(3_000)),
            (10_000, Some(11_000)),
            (13_000, Some(14_000))
        ]
    );
    assert_eq!(v.livelock_count, 1, "{:?}", v.livelocks);
    let l = &v.livelocks[0];
    assert_eq!((l.from_us, l.to_us, l.broken_cycles), (6_000, END, 2));
    assert_eq!(l.clients, ["x-1", "z-1"]);
}

#[test]
fn an_overlap_names_only_the_rows_both_believed_they_held() {
    // x believes it holds rows a and b, y rows b and c: they conflict on b alone, from when y
    // began to when x let go.
    let trace = Trace::default()
        .op(9, S, granted(X, 1))
        .believes(10, X, 0b011, (S, 1, 1))
        .op(19, T, granted(Y, 1))
        .believes(20, Y, 0b110, (T, 1, 1))
        .lets_go(30, X)
        .lets_go(40, Y);
    let world = world();
    let v = verdict_of(&world, &trace.events, END, false, 0);
    assert_eq!(v.violation_count, 1);
    let o = &v.violations[0];
    assert_eq!(o.rows, ["b"]);
    assert_eq!((o.from_us, o.to_us), (20_000, 30_000));
    let overlaps = monitor::scan_overlaps(&world, &trace.events, END, usize::MAX).first;
    assert_eq!(overlaps.len(), 1);
    assert_eq!(overlaps[0].rows, 0b010);
}

#[test]
fn a_violation_quotes_each_service_from_a_second_before_the_first_belief() {
    // x begins to believe at 3001 ms, so s's excerpt starts at 2001 ms: the release at exactly
    // that moment is in it, the grant at 0 ms is not.
    let trace = Trace::default()
        .op(0, S, granted(X, 1))
        .op(2001, S, released(X, 1))
        .op(3000, S, granted(X, 2))
        .believes(3001, X, 0b001, (S, 2, 3))
        .op(3002, T, granted(Y, 1))
        .believes(3003, Y, 0b001, (T, 1, 1));
    let world = world();
    let v = verdict_of(&world, &trace.events, 4_000_000, false, 0);
    let logs = quoted(&v.violations[0]);
    assert_eq!(
        logs,
        [
            (
                "s",
                vec![
                    "release r by x-1 token 1".to_string(),
                    "grant r to x-1 token 2".to_string()
                ]
            ),
            ("t", vec!["grant r to y-1 token 1".to_string()]),
        ]
    );
}

#[test]
fn a_violation_quotes_each_service_up_to_the_end_of_the_overlap() {
    // x and y overlap from 3 ms until x lets go at 10 ms; z and y from 12 ms until y lets go
    // at 20 ms. Each release is logged at the very instant its client lets go (a service next
    // to its client), so each overlap quotes the release that ends it. z's grant at 11 ms,
    // after the first overlap, is quoted by the second alone. The same trace on the world's
    // second resource quotes the same lines, each service its own.
    for (resource, name) in [(0, "r"), (1, "q")] {
        let mut trace = Trace::default()
            .op(0, S, granted(X, 1))
            .believes(1, X, 0b001, (S, 1, 1))
            .op(2, T, granted(Y, 1))
            .believes(3, Y, 0b001, (T, 1, 1))
            .lets_go(10, X)
            .op(10, S, released(X, 1))
            .op(11, S, granted(Z, 2))
            .believes(12, Z, 0b001, (S, 2, 3))
            .lets_go(20, Y)
            .op(20, T, released(Y, 1))
            .lets_go(25, Z);
        trace.events = on_resource(trace.events, resource);
        let world = world();
        let v = verdict_of(&world, &trace.events, END, false, 0);
        // Each violation as its window and each service's quoted lines.
        let windows: Vec<_> = v
            .violations
            .iter()
            .map(|o| ((o.from_us, o.to_us), quoted(o)))
            .collect();
        let grant_x = format!("grant {name} to x-1 token 1");
        let release_x = format!("release {name} by x-1 token 1");
        let grant_y = format!("grant {name} to y-1 token 1");
        let release_y = format!("release {name} by y-1 token 1");
        let grant_z = format!("grant {name} to z-1 token 2");
        assert_eq!(
            windows,
            [
                (
                    (3_000, 10_000),
                    vec![
                        ("s", vec![grant_x.clone(), release_x.clone()]),
                        ("t", vec![grant_y.clone()]),
                    ]
                ),
                (
                    (12_000, 20_000),
                    vec![
                        ("s", vec![grant_x, release_x, grant_z]),
                        ("t", vec![grant_y, release_y]),
                    ]
                ),
            ],
            "{name}"
        );
    }
}

#[test]
fn the_resource_idles_while_a_client_waits_and_nobody_uses_it() {
    // locked-1's request is lost to an outage, so it waits for the whole run. free-1 takes no
    // lock: it uses the resource from the start of its operation until its write lands, and
    // not after. The resource idles from that write to the end.
    let s = Scenario::from_toml_str(
        r#"
        name = "idle while one waits"
        duration_ms = 1000
        regions = ["east"]
        resources = [{ name = "t", rows = ["n"] }]
        [[services]]
        name = "locks"
        replicas = ["east"]
        outages = [{ start_ms = 0, duration_ms = 1000 }]
        [[clients]]
        name = "locked"
        region = "east"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 10
        max_operations = 1
        [[clients]]
        name = "free"
        region = "east"
        protocol = { kind = "no_lock" }
        resource = "t"
        period_ms = 100
        work_ms = 100
        max_operations = 1
        "#,
    )
    .unwrap();
    let (run, v) = crate::check(&s, 0);
    // free-1 takes no lock: it uses the resource from the start of its operation until its
    // write is done and acknowledged, which ends its unprotected critical section.
    let done = run
        .events
        .iter()
        .find(|e| matches!(e.what, What::BeliefEnded { .. }))
        .expect("free-1 finishes")
        .at;
    assert_eq!(v.resources[0].idle_while_waiting_us, 1_000_000 - done);
}

#[test]
fn a_write_is_interleaved_only_inside_another_clients_read_modify_write_on_the_same_rows() {
    // x, inside its critical section since 5 ms, reads row a of r at 10 ms and would write at
    // 40 ms. Another client's accepted write between the two lands inside x's read-modify-write
    // only if it touches row a of r, and only while x's operation lasts.
    let read = |t: Trace| {
        t.op(4, S, granted(X, 1))
            .believes(5, X, 0b001, (S, 1, 1))
            .event(
                10,
                What::Read {
                    client: X,
                    resource: 0,
                    rows: 0b001,
                    token: None,
                    accepted: true,
                    values: [0].into_iter().collect(),
                },
            )
    };
    let write = |t: Trace, ms: u64, client: u32, resource: u32, rows: u64| {
        t.event(
            ms,
            What::Write {
                client,
                resource,
                rows,
                token: None,
                accepted: true,
                values: Values::from_slice(&[1]),
            },
        )
    };
    struct Case {
        what: &'static str,
        trace: Trace,
        interleaved: u64,
    }
    let cases = [
        Case {
            what: "y writes row a of r while x works",
            trace: write(read(Trace::default()), 20, Y, 0, 0b001),
            interleaved: 1,
        },
        Case {
            what: "y writes row b of r",
            trace: write(read(Trace::default()), 20, Y, 0, 0b010),
            interleaved: 0,
        },
        Case {
            what: "y writes row a of q",
            trace: write(read(Trace::default()), 20, Y, 1, 0b001),
            interleaved: 0,
        },
        Case {
            what: "y writes row a of r after x's operation ended without a write",
            trace: write(read(Trace::default()).lets_go(15, X), 20, Y, 0, 0b001),
            interleaved: 0,
        },
        Case {
            what: "x's read lands after x let go, then y writes row a of r",
            trace: write(
                Trace::default()
                    .op(4, S, granted(X, 1))
                    .believes(5, X, 0b001, (S, 1, 1))
                    .lets_go(8, X)
                    .event(
                        10,
                        What::Read {
                            client: X,
                            resource: 0,
                            rows: 0b001,
                            token: None,
                            accepted: true,
                            values: [0].into_iter().collect(),
                        },
                    ),
                20,
                Y,
                0,
                0b001,
            ),
            interleaved: 0,
        },
        Case {
            what: "y writes row a of r after x's own write",
            trace: write(
                write(read(Trace::default()), 15, X, 0, 0b001),
                20,
                Y,
                0,
                0b001,
            ),
            interleaved: 0,
        },
    ];
    let world = world();
    for case in cases {
        let v = verdict_of(&world, &case.trace.events, END, false, 0);
        assert_eq!(v.interleaved_writes, case.interleaved, "{}", case.what);
    }
}

#[test]
fn holds_that_touch_do_not_overlap_and_holds_that_share_an_instant_do() {
    // A critical section lasts from the instant it begins up to, not including, the instant it
    // ends. x holds row a of r from 1 ms to 10 ms; y holds it from its start to 20 ms. When y
    // begins at 10 ms, exactly as x lets go, no instant has both: no violation, whichever of the
    // two lines the trace lists first, and the snapshot at 10 ms shows y alone. One microsecond
    // earlier, both hold it for that microsecond. A section that ends at the instant it begins
    // (y from 5 ms to 5 ms) holds nothing at any instant, so it overlaps nobody.
    struct Case {
        what: &'static str,
        y_from_us: Micros,
        y_to_us: Micros,
        y_listed_first: bool,
        overlap: Option<(Micros, Micros)>,
    }
    let cases = [
        Case {
            what: "y begins and ends at 5 ms, while x holds",
            y_from_us: 5_000,
            y_to_us: 5_000,
            y_listed_first: false,
            overlap: None,
        },
        Case {
            what: "y begins as x ends, x's end listed first",
            y_from_us: 10_000,
            y_to_us: 20_000,
            y_listed_first: false,
            overlap: None,
        },
        Case {
            what: "y begins as x ends, y's start listed first",
            y_from_us: 10_000,
            y_to_us: 20_000,
            y_listed_first: true,
            overlap: None,
        },
        Case {
            what: "y begins a microsecond before x ends",
            y_from_us: 9_999,
            y_to_us: 20_000,
            y_listed_first: false,
            overlap: Some((9_999, 10_000)),
        },
        Case {
            what: "both begin at once",
            y_from_us: 1_000,
            y_to_us: 20_000,
            y_listed_first: false,
            overlap: Some((1_000, 10_000)),
        },
    ];
    let world = world();
    let at = |us: Micros, what: What| Event { at: us, what };
    let grant = |service: u32| GrantRef {
        service,
        token: 1,
        instant: 1,
    };
    for case in cases {
        let x_starts = at(
            1_000,
            What::BeliefStarted {
                client: X,
                resource: 0,
                rows: 0b001,
                grants: vec![grant(S)],
            },
        );
        let x_ends = at(
            10_000,
            What::BeliefEnded {
                client: X,
                resource: 0,
                reason: BeliefEnd::Released,
            },
        );
        let y_starts = at(
            case.y_from_us,
            What::BeliefStarted {
                client: Y,
                resource: 0,
                rows: 0b001,
                grants: vec![grant(T)],
            },
        );
        let y_ends = at(
            case.y_to_us,
            What::BeliefEnded {
                client: Y,
                resource: 0,
                reason: BeliefEnd::Released,
            },
        );
        let mut events = vec![x_starts, x_ends, y_starts, y_ends];
        if case.y_listed_first {
            events.swap(1, 2);
        }
        // A stable sort keeps the order chosen for events at one instant.
        events.sort_by_key(|e| e.at);
        let v = verdict_of(&world, &events, END, false, 0);
        let found: Vec<(Micros, Micros)> =
            v.violations.iter().map(|o| (o.from_us, o.to_us)).collect();
        assert_eq!(found, Vec::from_iter(case.overlap), "{}", case.what);
        assert_eq!(v.violation_count, found.len() as u64, "{}", case.what);
        let broken = case.overlap.is_some();
        assert_eq!(
            v.exclusion,
            if broken {
                monitor::Exclusion::Broken
            } else {
                monitor::Exclusion::Holds
            },
            "{}",
            case.what
        );
        assert_eq!(v.incomparable_pairs, u64::from(broken), "{}", case.what);
        assert_eq!(v.max_simultaneous_holders, 1 + u32::from(broken));
        // The instant x lets go, x no longer believes; y does from the instant it begins.
        let now = snapshot(&world, &events, 10_000);
        let believers: Vec<&str> = now.believers.iter().map(|b| b.client.as_str()).collect();
        let y_holds_then = case.y_to_us > 10_000;
        assert_eq!(
            believers,
            &["y-1"][..usize::from(y_holds_then)],
            "{}",
            case.what
        );
        assert!(now.conflicts.is_empty(), "{}", case.what);
        let before = snapshot(&world, &events, 9_999);
        assert_eq!(
            before.conflicts.len(),
            usize::from(broken),
            "{}: {:?}",
            case.what,
            before.conflicts
        );
    }
}

#[test]
fn the_most_unrelated_holders_are_counted_by_order_domains_no_two_of_them_share() {
    // Four independent services s, t, u and v. Each case lists who holds row a of r, through
    // which services, in the order their critical sections begin; all of them still hold it
    // when the last begins. The figure is the largest group of holders no two of whom hold a
    // grant of one service: a holder through s and t shares a service with one through s, and
    // with one through t, but those two and one through u make three.
    struct Case {
        what: &'static str,
        holders: &'static [&'static [u32]],
        most: u32,
    }
    const U: u32 = 2;
    const V: u32 = 3;
    let cases = [
        Case {
            what: "s and t, then s, then t, then u",
            holders: &[&[S, T], &[S], &[T], &[U]],
            most: 3,
        },
        Case {
            what: "s and t, then u: the two services count once",
            holders: &[&[S, T], &[U]],
            most: 2,
        },
        Case {
            what: "s, t and u each alone",
            holders: &[&[S], &[T], &[U]],
            most: 3,
        },
        Case {
            what: "s and t, t and u, then s, then v",
            holders: &[&[S, T], &[T, U], &[S], &[V]],
            most: 3,
        },
        Case {
            what: "s and u, t, then s and t, then v",
            holders: &[&[S, U], &[T], &[S, T], &[V]],
            most: 3,
        },
        Case {
            what: "s, then s and t, then t and u, then v: only one of s's holders counts",
            holders: &[&[S], &[S, T], &[T, U], &[S], &[V]],
            most: 3,
        },
        Case {
            what: "all through one service",
            holders: &[&[S], &[S], &[S]],
            most: 1,
        },
    ];
    let names: Vec<String> = (0..5).map(|k| format!("c{k}")).collect();
    let clients: Vec<(&str, Option<&str>)> = names.iter().map(|n| (n.as_str(), None)).collect();
    let world = hand_world(&["s", "t", "u", "v"], &clients);
    for case in cases {
        let mut events: Vec<Event> = Vec::new();
        for (k, services) in case.holders.iter().enumerate() {
            events.push(Event {
                at: 1_000 * (k as u64 + 1),
                what: What::BeliefStarted {
                    client: k as u32,
                    resource: 0,
                    rows: 0b1,
                    grants: services
                        .iter()
                        .map(|s| GrantRef {
                            service: *s,
                            token: 1 + k as u64,
                            instant: 1 + k as u64,
                        })
                        .collect(),
                },
            });
        }
        let v = verdict_of(&world, &events, END, false, 0);
        assert_eq!(v.max_simultaneous_holders, case.most, "{}", case.what);
    }
}

#[test]
fn a_wait_cycle_is_found_through_any_two_locks_whichever_wait_or_grant_closes_it() {
    // Three services, two resources: for every resource and every ordered pair of services
    // (a, b), x holds a and y holds b, which z held before it (a lock that changed hands).
    // The cycle closes in one of three ways: y's wait for a, x's wait for b, or x already
    // waiting for b while z still holds it, and b going to y as z lets go (z never waits).
    // Each way, exactly one cycle of x and y through a and b, formed at 5 ms; x's cancel
    // breaks it at 6 ms.
    let world = hand_world(&["s", "t", "u"], &[("x", None), ("y", None), ("z", None)]);
    let names = ["s", "t", "u"];
    for resource in 0..2u32 {
        for a in 0..3u32 {
            for b in (0..3u32).filter(|b| *b != a) {
                for closing in ["y waits", "x waits", "b granted"] {
                    let trace = Trace::default()
                        .op(1, a, granted(X, 1))
                        .op(1, b, granted(Z, 1));
                    let trace = match closing {
                        "y waits" => trace
                            .op(2, b, released(Z, 1))
                            .op(2, b, granted(Y, 2))
                            .op(3, b, queued(X, Y))
                            .op(5, a, queued(Y, X)),
                        "x waits" => trace
                            .op(2, b, released(Z, 1))
                            .op(2, b, granted(Y, 2))
                            .op(3, a, queued(Y, X))
                            .op(5, b, queued(X, Y)),
                        _ => trace
                            .op(2, b, queued(X, Z))
                            .op(3, a, queued(Y, X))
                            .op(5, b, released(Z, 1))
                            .op(5, b, granted(Y, 2)),
                    };
                    let trace = trace.op(6, b, ServiceOp::Cancelled { client: X });
                    let events = on_resource(trace.events, resource);
                    let v = verdict_of(&world, &events, END, false, 0);
                    let what = format!(
                        "resource {resource}, x holds {}, y holds {}, closed as {closing}",
                        names[a as usize], names[b as usize]
                    );
                    assert_eq!(v.wait_cycles.len(), 1, "{what}: {:?}", v.wait_cycles);
                    let c = &v.wait_cycles[0];
                    let mut clients = c.clients.clone();
                    clients.sort();
                    assert_eq!(clients, ["x-1", "y-1"], "{what}");
                    let mut services = c.services.clone();
                    services.sort();
                    let mut expected = [names[a as usize], names[b as usize]];
                    expected.sort();
                    assert_eq!(services, expected, "{what}");
                    assert_eq!(
                        (c.formed_us, c.broken_us, c.broken_by.as_deref()),
                        (5_000, Some(6_000), Some("client timeout")),
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn holds_that_begin_at_one_instant_are_named_in_the_scenarios_order_of_clients() {
    // x and y begin to hold row a of r at the same instant, through independent services. The
    // violation names x first, as the scenario lists the clients, whichever of the two lines
    // the trace lists first: the verdict's words do not depend on how simultaneous events
    // happen to be listed (a recording of real services lists them as they were read).
    let world = world();
    for y_first in [false, true] {
        let mut trace = Trace::default();
        let mut starts = [(X, S), (Y, T)];
        if y_first {
            starts.reverse();
        }
        for (client, service) in starts {
            trace = trace.believes(1, client, 0b001, (service, 1, 1));
        }
        let trace = trace.lets_go(5, X).lets_go(6, Y);
        let v = verdict_of(&world, &trace.events, END, false, 0);
        assert_eq!(v.violation_count, 1, "y first: {y_first}");
        let names: Vec<&str> = v.violations[0]
            .holders
            .iter()
            .map(|h| h.client.as_str())
            .collect();
        assert_eq!(names, ["x-1", "y-1"], "y first: {y_first}");
        assert_eq!(
            (v.violations[0].from_us, v.violations[0].to_us),
            (1_000, 5_000)
        );
    }
}

#[test]
fn a_belief_begun_again_before_it_ended_counts_from_its_second_start() {
    // x starts to believe at 2 ms and starts again at 10 ms without ending the first belief:
    // the first is no critical section at all, so z's at 5 ms overlaps nobody. y's, before
    // both, neither. x's second belief is one, and w's at 20 ms overlaps it.
    let trace = Trace::default()
        .believes(0, Y, 0b001, (S, 1, 1))
        .lets_go(1, Y)
        .believes(2, X, 0b001, (S, 2, 2))
        .believes(5, Z, 0b001, (T, 1, 1))
        .lets_go(6, Z)
        .believes(10, X, 0b001, (S, 3, 3));
    let world = world();
    let v = verdict_of(&world, &trace.events, END, false, 0);
    assert_eq!(v.violation_count, 0, "{:?}", v.violations);
    assert_eq!(v.exclusion, lockstep::Exclusion::Holds);
    let later = trace.believes(20, Z, 0b001, (T, 2, 2));
    let v = verdict_of(&world, &later.events, END, false, 0);
    assert_eq!(v.violation_count, 1, "{:?}", v.violations);
    let o = &v.violations[0];
    assert_eq!((o.from_us, o.to_us), (20_000, END));
    let mut clients: Vec<&str> = o.holders.iter().map(|h| h.client.as_str()).collect();
    clients.sort();
    assert_eq!(clients, ["x-1", "z-1"]);
}

#[test]
fn an_overlap_band_names_every_service_and_resource_behind_it() {
    // x holds q's row through s, y through t: the band of their overlap involves both
    // services and resource q alone. A band names each service once.
    let world = world();
    let trace = Trace::default()
        .believes(1, X, 0b1, (S, 1, 1))
        .believes(2, Y, 0b1, (T, 1, 1))
        .lets_go(3, X)
        .lets_go(4, Y);
    let events = on_resource(trace.events, 1);
    let scan = monitor::scan_overlaps(&world, &events, END, 10);
    assert_eq!(scan.count, 1);
    assert_eq!(scan.bands.len(), 1);
    let band = &scan.bands[0];
    assert_eq!((band.from, band.to), (2_000, 3_000));
    assert_eq!(band.services, 0b11, "s and t");
    assert_eq!(band.resources, 0b10, "q alone");
    assert_eq!(band.client_indices().collect::<Vec<_>>(), [X, Y]);

    // Both through s (x's lease ran out there and s granted y): the band involves s alone.
    let trace = Trace::default()
        .believes(1, X, 0b1, (S, 1, 1))
        .believes(2, Y, 0b1, (S, 2, 2))
        .lets_go(3, X)
        .lets_go(4, Y);
    let scan = monitor::scan_overlaps(&world, &trace.events, END, 10);
    assert_eq!(scan.bands.len(), 1);
    assert_eq!(scan.bands[0].services, 0b01, "s alone");
    assert_eq!(scan.bands[0].resources, 0b01, "r alone");
}

#[test]
fn the_most_unrelated_holders_are_found_however_their_grants_combine_and_on_any_row() {
    // Five independent services s, t, u, v and w. The holders through s, t, s and u, t and v,
    // u and v are all on row a when one through w begins: the largest group of them no two
    // of whom share a service is s, t, and u and v, with w four. Found by the sets of
    // services in ascending order, s and t come first and the pair that beats them (u and v)
    // last.
    let names: Vec<String> = (0..6).map(|k| format!("c{k}")).collect();
    let clients: Vec<(&str, Option<&str>)> = names.iter().map(|n| (n.as_str(), None)).collect();
    let five = hand_world(&["s", "t", "u", "v", "w"], &clients);
    let holders: [&[u32]; 6] = [&[0], &[1], &[0, 2], &[1, 3], &[2, 3], &[4]];
    let events: Vec<Event> = holders
        .iter()
        .enumerate()
        .map(|(k, services)| Event {
            at: 1_000 * (k as u64 + 1),
            what: What::BeliefStarted {
                client: k as u32,
                resource: 0,
                rows: 0b1,
                grants: services
                    .iter()
                    .map(|s| GrantRef {
                        service: *s,
                        token: 1 + k as u64,
                        instant: 1 + k as u64,
                    })
                    .collect(),
            },
        })
        .collect();
    let v = verdict_of(&five, &events, END, false, 0);
    assert_eq!(v.max_simultaneous_holders, 4);

    // Two holders through s and t on row b (not the first row) of r.
    let trace = Trace::default()
        .believes(1, X, 0b010, (S, 1, 1))
        .believes(2, Y, 0b010, (T, 1, 1));
    let v = verdict_of(&world(), &trace.events, END, false, 0);
    assert_eq!(v.violation_count, 1);
    assert_eq!(v.max_simultaneous_holders, 2);
}

#[test]
fn a_verdict_with_more_cycles_than_it_details_keeps_the_first_and_the_one_still_standing() {
    // 105 wait cycles between x and y, one after the other; each but the last is broken by
    // x's timeout. The verdict counts them all, details the first 99 and the one still
    // standing at the end, and calls it a deadlock.
    let rounds = 105u64;
    let mut trace = Trace::default();
    for k in 0..rounds {
        let ms = 100 * k;
        trace = trace
            .op(ms, S, granted(X, k + 1))
            .op(ms + 1, T, granted(Y, k + 1))
            .op(ms + 2, S, queued(Y, X))
            .op(ms + 3, T, queued(X, Y));
        if k + 1 < rounds {
            trace = trace
                .op(ms + 4, T, ServiceOp::Cancelled { client: X })
                .op(ms + 5, S, ServiceOp::Cancelled { client: Y })
                .op(ms + 6, S, released(X, k + 1))
                .op(ms + 7, T, released(Y, k + 1));
        }
    }
    let v = verdict_of(&world(), &trace.events, END, false, 0);
    let max = monitor::VIOLATIONS_DETAILED_MAX;
    assert_eq!(v.wait_cycle_count, rounds);
    assert_eq!(v.wait_cycles.len(), max);
    let formed: Vec<u64> = v.wait_cycles.iter().map(|c| c.formed_us).collect();
    let expected: Vec<u64> = (0..max as u64 - 1)
        .chain([rounds - 1])
        .map(|k| (100 * k + 3) * 1000)
        .collect();
    assert_eq!(formed, expected);
    assert!(v.wait_cycles[..max - 1]
        .iter()
        .all(|c| c.broken_us.is_some()));
    assert_eq!(v.wait_cycles[max - 1].broken_us, None);
    assert!(v.deadlock);
}

#[test]
fn a_write_is_judged_against_the_read_of_its_own_rows() {
    // z reads row b of r and writes it; x then reads row a and writes row b. x's write did
    // not read row b, so it is taken to have read z's write: nothing is lost. Had x read row
    // b before z's write, z's increment would be.
    let read = |t: Trace, ms: u64, client: u32, rows: u64| {
        t.event(
            ms,
            What::Read {
                client,
                resource: 0,
                rows,
                token: None,
                accepted: true,
                values: Values::from_slice(&[0]),
            },
        )
    };
    let write = |t: Trace, ms: u64, client: u32, rows: u64| {
        t.event(
            ms,
            What::Write {
                client,
                resource: 0,
                rows,
                token: None,
                accepted: true,
                values: Values::from_slice(&[1]),
            },
        )
    };
    let world = world();
    let other_rows = write(
        read(
            write(read(Trace::default(), 1, Z, 0b010), 2, Z, 0b010),
            3,
            X,
            0b001,
        ),
        4,
        X,
        0b010,
    );
    let lost = monitor::lost_updates(&world, &other_rows.events, 10);
    assert_eq!(lost.total, 0, "{lost:?}");
    let same_rows = write(
        write(
            read(read(Trace::default(), 1, Z, 0b010), 1, X, 0b010),
            2,
            Z,
            0b010,
        ),
        4,
        X,
        0b010,
    );
    let lost = monitor::lost_updates(&world, &same_rows.events, 10);
    assert_eq!(lost.total, 1, "{lost:?}");
}

#[test]
fn the_lost_updates_detailed_are_the_earliest_erased() {
    // Two rows each lose an increment: row b's eraser comes first in the trace, row a's
    // later. Kept to one detail, the detail is row b's.
    let read = |t: Trace, ms: u64, client: u32, rows: u64| {
        t.event(
            ms,
            What::Read {
                client,
                resource: 0,
                rows,
                token: None,
                accepted: true,
                values: Values::from_slice(&[0]),
            },
        )
    };
    let write = |t: Trace, ms: u64, client: u32, rows: u64| {
        t.event(
            ms,
            What::Write {
                client,
                resource: 0,
                rows,
                token: None,
                accepted: true,
                values: Values::from_slice(&[1]),
            },
        )
    };
    let lose = |t: Trace, ms: u64, rows: u64| {
        // x and y both read, then both write: y's write erases x's.
        write(
            write(read(read(t, ms, X, rows), ms, Y, rows), ms + 1, X, rows),
            ms + 2,
            Y,
            rows,
        )
    };
    let trace = lose(lose(Trace::default(), 10, 0b010), 20, 0b001);
    let world = world();
    let all = monitor::lost_updates(&world, &trace.events, 10);
    assert_eq!(all.total, 2);
    assert_eq!(all.details.len(), 2);
    let first = monitor::lost_updates(&world, &trace.events, 1);
    assert_eq!(first.total, 2);
    assert_eq!(first.details.len(), 1);
    assert_eq!(first.details[0].row, 1, "{:?}", first.details);
    assert_eq!(first.details[0], all.details[0]);
    // The earliest eraser is y's write of row b, the fourth event; it erased x's, the third.
    assert_eq!((first.details[0].lost, first.details[0].by), (2, 3));
}
