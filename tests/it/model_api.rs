//! The model through the interface an exhaustive explorer will use: any enabled step may come
//! next, whatever its time. Driving it that way must keep every service's log consistent and
//! must never panic.

use lockstep::model::{Choices, State, Stream};
use lockstep::monitor::check_service_logs;
use lockstep::world::World;
use rand::{RngExt, SeedableRng};

use crate::scenario;

/// Time treated abstractly: no jitter at all.
struct NoJitter;

impl Choices for NoJitter {
    fn draw(&mut self, _: Stream, _: u64) -> u64 {
        0
    }
}

#[test]
fn any_enabled_step_may_come_next() {
    for prefix in ["01", "02", "04", "05", "09"] {
        let s = scenario(prefix);
        let world = World::compile(&s);
        for seed in 0..20u64 {
            let mut picker = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut state = State::initial(&world, &mut NoJitter);
            let mut events = Vec::new();
            for _ in 0..400 {
                let enabled: Vec<u64> = state.enabled().map(|(_, seq, _)| seq).collect();
                if enabled.is_empty() {
                    break;
                }
                let seq = enabled[picker.random_range(0..enabled.len())];
                let step = state.take(seq).expect("an enabled step can be taken");
                state.apply(&world, step, &mut NoJitter, &mut events);
            }
            assert!(
                events.windows(2).all(|w| w[0].at <= w[1].at),
                "time never goes back"
            );
            for log in check_service_logs(&world, &events) {
                assert!(log.consistent, "{prefix} seed {seed}: {:?}", log.problems);
            }
        }
    }
}

#[test]
fn taking_steps_in_time_order_is_the_simulator() {
    // Taking the earliest enabled step each time, with the simulator's own random streams,
    // reproduces the simulator's trace exactly: there is one transition function, not two.
    let s = scenario("05");
    let world = World::compile(&s);
    let mut choices = lockstep::sim::SeededChoices::new(&world, 1);
    let mut state = State::initial(&world, &mut choices);
    let mut events = Vec::new();
    loop {
        let earliest = state
            .enabled()
            .map(|(at, seq, _)| (at, seq))
            .min()
            .filter(|(at, _)| *at <= world.duration);
        let Some((_, seq)) = earliest else { break };
        let step = state.take(seq).unwrap();
        state.apply(&world, step, &mut choices, &mut events);
    }
    assert_eq!(events, lockstep::run(&s, 1).unwrap().events);
}

#[test]
fn steps_past_the_end_are_dropped_without_changing_the_run() {
    // The simulator keeps no step due after the scenario's end. With latencies that reach past
    // it, most messages are such steps; the trace must still be exactly the one that taking
    // every step in time order gives, with all of them kept.
    for prefix in ["01", "05", "08"] {
        let mut s = scenario(prefix);
        s.network.remote_latency_ms = s.duration_ms / 2;
        s.network.jitter_ms = s.duration_ms / 2;
        let world = World::compile(&s);
        let mut choices = lockstep::sim::SeededChoices::new(&world, 3);
        let mut state = State::initial(&world, &mut choices);
        let mut events = Vec::new();
        while let Some(step) = state.pop_earliest().filter(|x| x.at <= world.duration) {
            state.apply(&world, step, &mut choices, &mut events);
        }
        assert!(
            state.pending() > 0,
            "{prefix}: some steps are due after the end"
        );
        assert_eq!(events, lockstep::run(&s, 3).unwrap().events, "{prefix}");
    }
}

#[test]
fn regressions_stay_fixed() {
    // Scenarios that once exposed engine bugs, each with the seed that did. Every one uses a
    // single lock service without leases, so exclusion must hold. The same directory keeps
    // inputs that validation must refuse (`invalid-*`) and costly valid scenarios for
    // benchmarks (`worst-*`); tests/it/scenario_format.rs checks those.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/regressions");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        // Subdirectories (such as `verdicts/`, whose scenarios test the monitors) have tests of
        // their own.
        if name.starts_with("invalid-") || name.starts_with("worst-") || !name.ends_with(".toml") {
            continue;
        }
        let s = lockstep::Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (_, v) = crate::check(&s, s.seed);
        assert_eq!(
            v.exclusion,
            lockstep::Exclusion::Holds,
            "{}",
            path.display()
        );
        checked += 1;
    }
    assert!(checked > 0);
}

/// Every scenario of the regressions directory that a test above replays, with its path.
fn regression(name: &str) -> lockstep::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/regressions")
        .join(name);
    lockstep::Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn only_the_head_of_each_channel_is_enabled() {
    // Two clients without think time send a release and, at once, their next acquire on the
    // same channel. Driving the model by any enabled step must never offer the acquire while
    // the release is still waiting: that reordering was a bug once (the regression scenario
    // pins it for the simulator), and an explorer taking steps out of time order could bring
    // it back.
    let s = regression("release-overtaken.toml");
    let world = World::compile(&s);
    let mut queued_behind = 0;
    for seed in 0..30u64 {
        let mut picker = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut state = State::initial(&world, &mut NoJitter);
        let mut events = Vec::new();
        for _ in 0..300 {
            let enabled: Vec<(u64, u64, lockstep::model::Step)> = state
                .enabled()
                .map(|(at, seq, step)| (at, seq, step.clone()))
                .collect();
            if enabled.is_empty() {
                break;
            }
            let all: Vec<(u64, u64, lockstep::model::Step)> = {
                // Every waiting step, through the simulator's own door: pop them all from a copy.
                let mut copy = state.clone();
                std::iter::from_fn(|| copy.pop_earliest().map(|x| (x.at, x.seq, x.step))).collect()
            };
            for (at, seq, step) in &enabled {
                if let Some(channel) = step.channel() {
                    let first = all
                        .iter()
                        .filter(|(_, _, s)| s.channel() == Some(channel))
                        .map(|(a, q, _)| (*a, *q))
                        .min()
                        .unwrap();
                    assert_eq!((*at, *seq), first, "only a channel's first message");
                }
            }
            let waiting_messages = all.iter().filter(|(_, _, s)| s.channel().is_some()).count();
            let offered_messages = enabled
                .iter()
                .filter(|(_, _, s)| s.channel().is_some())
                .count();
            if offered_messages < waiting_messages {
                queued_behind += 1;
            }
            let seq = enabled[picker.random_range(0..enabled.len())].1;
            let step = state.take(seq).unwrap();
            state.apply(&world, step, &mut NoJitter, &mut events);
        }
        for log in check_service_logs(&world, &events) {
            assert!(log.consistent, "seed {seed}: {:?}", log.problems);
        }
    }
    assert!(
        queued_behind > 0,
        "some message waited behind another on its channel"
    );
}

#[test]
fn states_reached_by_commuting_steps_are_equal_and_share_a_fingerprint() {
    // Two clients on two independent services: starting the first client's operation and then
    // the second's, or the other way round, reaches the same state, though the sequence numbers
    // and the times differ. Unlike states differ.
    let s = scenario("01");
    let world = World::compile(&s);
    let initial = State::initial(&world, &mut NoJitter);
    let firsts: Vec<u64> = initial.enabled().map(|(_, seq, _)| seq).collect();
    assert!(firsts.len() >= 2);
    let two = |a: u64, b: u64| {
        let mut state = initial.clone();
        let mut events = Vec::new();
        let step = state.take(a).unwrap();
        state.apply(&world, step, &mut NoJitter, &mut events);
        let step = state.take(b).unwrap();
        state.apply(&world, step, &mut NoJitter, &mut events);
        state
    };
    let ab = two(firsts[0], firsts[1]);
    let ba = two(firsts[1], firsts[0]);
    assert_eq!(ab, ba);
    assert_eq!(ab.fingerprint(), ba.fingerprint());
    assert_ne!(ab, initial);
    assert_ne!(ab.fingerprint(), initial.fingerprint());
    // A state equals its clone, and the fingerprint is a pure function of the description.
    assert_eq!(initial.clone(), initial);
    assert_eq!(initial.clone().fingerprint(), initial.fingerprint());
}

#[test]
fn a_forwarded_message_travels_its_own_channel_from_the_old_service_to_the_new() {
    // Only the first message of a channel may be taken next, so a channel is what keeps two
    // messages between the same endpoints in order. A message is on the channel from its
    // sender to its receiver; a release or cancel forwarded after a migration on the one from
    // the service it reached to the one the lock moved to (not on the client's own channel to
    // the new service); a timer, a lease expiry or a fault on none.
    use lockstep::model::{Message, Step, Timer};
    use lockstep::trace::Endpoint;
    let release = Message::Release {
        resource: 0,
        token: 1,
        attempt: 1,
    };
    let cases = [
        (
            Step::Deliver {
                from: Endpoint::Client(3),
                to: Endpoint::Service(1),
                message: release.clone(),
            },
            Some((Endpoint::Client(3), Endpoint::Service(1))),
        ),
        (
            Step::Deliver {
                from: Endpoint::Service(1),
                to: Endpoint::Client(3),
                message: Message::Queued {
                    service: 1,
                    attempt: 1,
                },
            },
            Some((Endpoint::Service(1), Endpoint::Client(3))),
        ),
        (
            Step::Forward {
                from: 0,
                to: 2,
                client: 3,
                origin: 0,
                message: release,
            },
            Some((Endpoint::Service(0), Endpoint::Service(2))),
        ),
        (
            Step::ClientTimer {
                client: 3,
                timer: Timer::Arrive,
            },
            None,
        ),
        (
            Step::LeaseExpiry {
                service: 0,
                resource: 0,
                token: 1,
            },
            None,
        ),
    ];
    for (step, channel) in cases {
        assert_eq!(step.channel(), channel, "{step:?}");
    }
}

/// A state of `world` made by hand from its initial state: `change` breaks (or keeps) one
/// invariant. Returns what [`State::check`] says of it.
fn checked(world: &World, change: impl FnOnce(&mut State)) -> Result<(), String> {
    let mut state = State::initial(world, &mut NoJitter);
    change(&mut state);
    state.check(world)
}

#[test]
fn the_invariant_check_refuses_a_state_the_model_can_never_reach() {
    // `State::check` is what the properties run after every step: a model bug shows up there
    // first. Each state below breaks one invariant by hand (or stays just inside it), and the
    // check must name the broken one. Scenario 04: an authority, a subordinate, one resource.
    use lockstep::model::{Hold, Waiter};
    let world = World::compile(&scenario("04"));
    let clients = world.clients.len();
    assert!(world.migrations.is_empty());
    let sub = world
        .services
        .iter()
        .position(|s| s.authority.is_some())
        .expect("a subordinate");
    let expect_err = |what: &str, result: Result<(), String>, words: &str| {
        let problem = result.expect_err(what);
        assert!(problem.contains(words), "{what}: {problem}");
    };
    assert_eq!(checked(&world, |_| {}), Ok(()), "the initial state");

    // The state's shape against its world's: each list on its own.
    expect_err(
        "a client missing",
        checked(&world, |st| {
            st.clients.pop();
        }),
        "shape",
    );
    expect_err(
        "a version without its row",
        checked(&world, |st| st.resources[0].versions.push(0)),
        "rows differ",
    );

    // A queue holds each client at most once per migration more: here once.
    let waiters = |n: usize| {
        move |st: &mut State| {
            st.services[0].locks[0].queue = (0..n)
                .map(|c| Waiter {
                    client: (c % clients) as u32,
                    attempt: 1,
                    authority_token: None,
                })
                .collect();
        }
    };
    assert_eq!(
        checked(&world, waiters(clients)),
        Ok(()),
        "every client waits"
    );
    expect_err(
        "a waiter more than clients",
        checked(&world, waiters(clients + 1)),
        "waiters",
    );

    // A subordinate's holder presents an authority token it has seen, never a higher one.
    let holder = |authority_token: u64| {
        move |st: &mut State| {
            let service = &mut st.services[sub];
            let token = service.next_token;
            service.next_token += 1;
            let lock = &mut service.locks[0];
            lock.highest_authority_token = 7;
            lock.holder = Some(Hold {
                client: 0,
                attempt: 1,
                token,
                lease_until: None,
                authority_token: Some(authority_token),
                moved_from: Vec::new(),
            });
        }
    };
    assert_eq!(checked(&world, holder(7)), Ok(()), "the highest token seen");
    expect_err(
        "an authority token above the highest seen",
        checked(&world, holder(8)),
        "authority token above",
    );

    // Moves: a chain that ends is fine, one that comes back is a loop.
    assert_eq!(
        checked(&world, |st| st.services[0].locks[0].moved_to = Some(1)),
        Ok(()),
        "a lock moved from 0 to 1"
    );
    expect_err(
        "moves in a loop",
        checked(&world, |st| {
            st.services[0].locks[0].moved_to = Some(1);
            st.services[1].locks[0].moved_to = Some(0);
        }),
        "loop",
    );

    // A lock drains only from services whose lock moved to it, never from itself.
    expect_err(
        "service 1 waiting for a drain from itself",
        checked(&world, |st| st.services[1].locks[0].draining_from = 1 << 1),
        "drain from itself",
    );
    expect_err(
        "service 0 waiting for a drain from service 1, whose lock never moved",
        checked(&world, |st| st.services[0].locks[0].draining_from = 1 << 1),
        "drains from service 1",
    );
    assert_eq!(
        checked(&world, |st| {
            st.services[1].locks[0].moved_to = Some(0);
            st.services[0].locks[0].draining_from = 1 << 1;
        }),
        Ok(()),
        "service 0 waiting for the drain of the lock that moved to it from service 1"
    );
}

#[test]
fn with_lazy_expiries_a_lease_without_its_expiry_step_is_refused() {
    // The simulator keeps lease expiries lazily; the invariant check then also checks that
    // every lease that can still run out in the run has its expiry step. Scenario 05 leases
    // its locks for 500 ms.
    let world = World::compile(&scenario("05"));
    let horizon = world.duration;
    let leased = |until: u64| {
        let world = &world;
        move |st: &mut State| {
            st.set_horizon(horizon);
            st.set_lazy_leases(world);
            let service = &mut st.services[0];
            let token = service.next_token;
            service.next_token += 1;
            service.locks[0].holder = Some(lockstep::model::Hold {
                client: 0,
                attempt: 1,
                token,
                lease_until: Some(until),
                authority_token: None,
                moved_from: Vec::new(),
            });
        }
    };
    let problem = checked(&world, leased(horizon)).expect_err("a lease ending at the horizon");
    assert!(problem.contains("no expiry step"), "{problem}");
    assert_eq!(
        checked(&world, leased(horizon + 1)),
        Ok(()),
        "a lease ending after the run needs no step"
    );

    // A real run's holder has its step; the same hold under another token does not.
    let mut choices = lockstep::sim::SeededChoices::new(&world, 1);
    let mut state = State::initial(&world, &mut choices);
    state.set_horizon(horizon);
    state.set_lazy_leases(&world);
    let mut events = Vec::new();
    let (s, r) = loop {
        let step = state.pop_earliest().expect("some lease is granted");
        state.apply(&world, step, &mut choices, &mut events);
        state.check(&world).expect("a state the simulator reached");
        let held = state.services.iter().enumerate().find_map(|(s, service)| {
            let r = service
                .locks
                .iter()
                .position(|l| l.holder.as_ref().is_some_and(|h| h.lease_until.is_some()))?;
            Some((s, r))
        });
        if let Some(found) = held {
            break found;
        }
    };
    let hold = state.services[s].locks[r].holder.as_mut().unwrap();
    hold.token -= 1;
    let problem = state
        .check(&world)
        .expect_err("a hold its expiry was not scheduled for");
    assert!(problem.contains("no expiry step"), "{problem}");
}

#[test]
fn states_that_differ_in_any_number_are_unequal_and_fingerprinted_apart() {
    // Equality and fingerprints read every field that decides what a state does next: a
    // row's value, a count of writes, the next token, a client's count of operations and its
    // phase, the services a lock waits to drain from.
    let world = World::compile(&scenario("05"));
    let initial = State::initial(&world, &mut NoJitter);
    let differs = |what: &str, change: fn(&mut State)| {
        let mut other = initial.clone();
        change(&mut other);
        assert_ne!(other, initial, "{what}");
        assert_ne!(other.fingerprint(), initial.fingerprint(), "{what}");
    };
    differs("a row's value", |st| st.resources[0].values[0] += 1);
    differs("a row's writes", |st| st.resources[0].versions[0] += 1);
    differs("a service's next token", |st| {
        st.services[0].next_token += 1
    });
    differs("a client's operations", |st| st.clients[0].ops_started += 1);
    differs("a client's phase", |st| {
        st.clients[0].phase = lockstep::model::Phase::Stopped
    });
    differs("a lock's drains", |st| {
        st.services[0].locks[0].draining_from = 1 << 1
    });
}

#[test]
fn the_stable_hasher_gives_the_same_digest_on_every_platform() {
    // Fingerprints key the explorer's table of states seen, and are meant to be the same on
    // every machine and in the browser: the hasher's digests are pinned here. They also use
    // all 64 bits, and tell apart inputs that differ in any byte.
    use lockstep::model::StableHasher;
    use std::hash::Hasher;
    let digest = |f: &dyn Fn(&mut StableHasher)| {
        let mut h = StableHasher::default();
        f(&mut h);
        h.finish()
    };
    assert_eq!(
        digest(&|h| h.write_u64(1)),
        0x37e8_d294_6949_7cd2,
        "the number 1"
    );
    assert_eq!(
        digest(&|h| h.write(b"lockstep")),
        0x74bc_ba87_2cde_8398,
        "eight bytes"
    );
    assert_eq!(
        digest(&|h| h.write(b"abc")),
        0xe1af_d14f_fc85_5b42,
        "three bytes"
    );
    assert_ne!(digest(&|h| h.write(b"abc")), digest(&|h| h.write(b"abd")));
    assert_ne!(digest(&|h| h.write_u64(1)), digest(&|h| h.write_u64(2)));
    let high = (0..64u64)
        .filter(|x| digest(&|h| h.write_u64(*x)) >> 32 != 0)
        .count();
    assert!(high > 48, "{high} of 64 digests use their high half");
}

#[test]
fn a_row_set_iterator_knows_how_many_rows_are_left() {
    let mut rows = lockstep::model::row_indices(0b1011);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows.size_hint(), (3, Some(3)));
    assert_eq!(rows.next(), Some(0));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows.collect::<Vec<_>>(), [1, 3]);
    assert_eq!(lockstep::model::row_indices(0).len(), 0);
}
