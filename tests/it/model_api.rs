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
