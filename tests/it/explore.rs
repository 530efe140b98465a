//! The explorer and the properties it checks: known answers on small scenarios, agreement with
//! the monitors, and agreement with a peer model checker (Stateright) over the same transition
//! function.

use lockstep::explore::{
    explorable, Budgets, Counterexample, ExploreError, Explorer, Holds, Outcome, Space,
};
use lockstep::model::State;
use lockstep::property::Property;
use lockstep::world::World;
use lockstep::{monitor, Scenario};

use crate::{scenario, shipped_paths};

/// The simulator's own choices for a seed.
fn seeded(world: &World, seed: u64) -> lockstep::sim::SeededChoices {
    lockstep::sim::SeededChoices::new(world, seed)
}

#[test]
fn the_properties_of_states_agree_with_the_monitors_of_traces() {
    // Along simulated runs of every shipped scenario, each property is asked of every state,
    // and the verdict of the whole trace must say the same. Exclusion counts only overlaps of
    // positive length, so a state is asked about it only when time moves on from it; a lost
    // update can be carried forward again by a later write, so the monitors count the rows'
    // shortfall at the end, which is where the state is asked.
    let mut broken = [0u32; 3];
    for path in shipped_paths() {
        let s = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let world = World::compile(&s);
        for seed in 0..4u64 {
            let mut choices = seeded(&world, seed);
            let mut state = State::initial(&world, &mut choices);
            state.set_horizon(world.duration);
            let mut events = Vec::new();
            let mut excluded = true;
            let mut acyclic = true;
            while let Some(item) = state.pop_earliest() {
                if item.at > world.duration || events.len() >= world.event_budget as usize {
                    break;
                }
                if item.at > state.now {
                    excluded &= Property::Exclusion.holds(&world, &state);
                }
                state.apply(&world, item, &mut choices, &mut events);
                acyclic &= Property::NoWaitCycle.holds(&world, &state);
            }
            let run = lockstep::run(&s, seed).unwrap();
            assert_eq!(run.events, events, "{}: the same run", path.display());
            if run.end > state.now {
                excluded &= Property::Exclusion.holds(&world, &state);
            }
            let verdict = monitor::verdict(&run);
            let name = path.display();
            assert_eq!(
                Property::Exclusion.holds_in(&verdict),
                excluded,
                "{name} seed {seed}: exclusion"
            );
            assert_eq!(
                Property::NoLostUpdate.holds_in(&verdict),
                Property::NoLostUpdate.holds(&world, &state),
                "{name} seed {seed}: lost updates"
            );
            assert_eq!(
                Property::NoWaitCycle.holds_in(&verdict),
                acyclic,
                "{name} seed {seed}: wait cycles"
            );
            for (i, p) in Property::ALL.iter().enumerate() {
                broken[i] += u32::from(!p.holds_in(&verdict));
            }
        }
    }
    // The shipped scenarios break each property somewhere, so the agreement is not vacuous.
    assert!(broken.iter().all(|b| *b > 0), "{broken:?}");
}

/// The small scenarios the explorer is tested on, by file name.
fn small(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/explore")
        .join(name);
    Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every small scenario, by file name, sorted.
fn small_names() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/explore");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    names
}

fn explore(name: &str, budgets: Budgets) -> (World, Outcome) {
    let world = explorable(&small(name), &budgets).unwrap_or_else(|e| panic!("{name}: {e}"));
    let outcome = Explorer::new(world.clone(), budgets).run();
    (world, outcome)
}

fn holds(name: &str) -> Holds {
    match explore(name, Budgets::default()) {
        (_, Outcome::Holds(h)) => h,
        (_, other) => panic!("{name}: expected every property to hold, got {other:?}"),
    }
}

fn violated(name: &str) -> (World, Counterexample) {
    match explore(name, Budgets::default()) {
        (world, Outcome::Violated(c)) => (world, c),
        (_, other) => panic!("{name}: expected a counterexample, got {other:?}"),
    }
}

#[test]
fn ordered_acquisition_has_no_two_client_deadlock() {
    let h = holds("ordered-both.toml");
    assert!(h.complete, "the whole space is reached: {h:?}");
    assert!(h.states > 100, "{h:?}");
}

#[test]
fn the_order_binds_only_those_who_follow_it() {
    // Add a class on each service alone to the ordered clients, and exclusion breaks.
    let (_, c) = violated("ordered-and-singles.toml");
    assert_eq!(c.property, Property::Exclusion);
    assert_eq!(
        c.len(),
        6,
        "each single client: start, its acquire, its grant"
    );
}

#[test]
fn the_subordinate_chain_without_leases_holds_in_every_state() {
    let h = holds("subordinate-chain.toml");
    assert!(h.complete, "{h:?}");
}

#[test]
fn one_service_holds_in_every_state() {
    let h = holds("one-service.toml");
    assert!(h.complete, "{h:?}");
}

#[test]
fn two_independent_services_give_the_shortest_counterexample() {
    // The shortest way to two beliefs: each client starts its operation, its acquire reaches
    // its service, and the grant comes back. Six steps, and no fewer.
    let (world, c) = violated("two-services.toml");
    assert_eq!(c.property, Property::Exclusion);
    assert_eq!(c.len(), 6);
    // A depth budget one short of it finds nothing, and says the search was cut.
    let budgets = Budgets {
        depth: 5,
        ..Budgets::default()
    };
    match Explorer::new(world, budgets).run() {
        Outcome::Holds(h) => {
            assert!(!h.complete);
            assert_eq!(h.depth, 5);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unordered_locking_in_both_services_deadlocks() {
    let (_, c) = violated("unordered-both.toml");
    assert_eq!(c.property, Property::NoWaitCycle);
    assert_eq!(c.len(), 6, "two starts, two grants, two queued acquires");
}

#[test]
fn leases_break_the_cycle_and_exclusion_instead() {
    // Without a fault, no lease expires and the cycle of unordered locking still forms.
    let no_faults = Budgets {
        faults: 0,
        ..Budgets::default()
    };
    match explore("unordered-leases.toml", no_faults).1 {
        Outcome::Violated(c) => assert_eq!(c.property, Property::NoWaitCycle),
        other => panic!("{other:?}"),
    }
    // Asked about exclusion alone, the search finds the other half of the lesson: the leases
    // of a holder that still believes expire in both services, and the other client gets in.
    // One expiry is not enough, since the holder still holds the other service.
    let faults = |faults| Budgets {
        faults,
        ..Budgets::default()
    };
    let world = explorable(&small("unordered-leases.toml"), &faults(2)).unwrap();
    let only_exclusion = |budgets| {
        Explorer::over(Space::new(world.clone(), budgets).checking(&[Property::Exclusion])).run()
    };
    assert!(matches!(only_exclusion(faults(1)), Outcome::Holds(h) if h.complete));
    let space = Space::new(world.clone(), faults(2)).checking(&[Property::Exclusion]);
    let Outcome::Violated(c) = Explorer::over(space).run() else {
        panic!("exclusion breaks once a lease can expire");
    };
    assert_eq!(c.property, Property::Exclusion);
    let run = c.replay(&world);
    let expired = run.events.iter().any(|e| {
        matches!(
            e.what,
            lockstep::trace::What::Service {
                op: lockstep::trace::ServiceOp::Expired { .. },
                ..
            }
        )
    });
    assert!(expired, "a lease expired on the way");
    assert_eq!(
        monitor::verdict(&run).exclusion,
        lockstep::Exclusion::Broken
    );
}

#[test]
fn three_services_overlap() {
    let (_, c) = violated("three-services.toml");
    assert_eq!(c.property, Property::Exclusion);
    assert_eq!(c.len(), 6);
}

#[test]
fn every_counterexample_replays_to_a_trace_whose_verdict_shows_it() {
    let mut found = 0;
    for name in small_names() {
        let (world, outcome) = explore(&name, Budgets::default());
        let Outcome::Violated(c) = outcome else {
            continue;
        };
        found += 1;
        let run = c.replay(&world);
        let verdict = monitor::verdict(&run);
        assert!(
            !c.property.holds_in(&verdict),
            "{name}: the verdict of the replayed trace shows {}:\n{}",
            c.property.name(),
            verdict.summary()
        );
        // The final state of the replay is the violating one.
        assert!(!c.property.holds(&world, &run.state), "{name}");
        // The trace is an ordinary one: time never goes back, and every service's own log is
        // consistent.
        assert!(run.events.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(verdict.service_logs.iter().all(|l| l.consistent), "{name}");
    }
    assert!(found >= 4);
}

#[test]
fn the_search_works_in_chunks_and_reports_progress() {
    let world = explorable(&small("ordered-both.toml"), &Budgets::default()).unwrap();
    let whole = Explorer::new(world.clone(), Budgets::default()).run();
    let mut explorer = Explorer::new(world, Budgets::default());
    let mut last = 0;
    let mut chunks = 0;
    let outcome = loop {
        let p = explorer.step(10);
        assert!(p.states >= last, "progress never goes back");
        last = p.states;
        chunks += 1;
        if let Some(done) = p.done {
            break done;
        }
    };
    assert!(chunks > 10);
    assert_eq!(outcome, whole);
    // A state budget stops the search early, and says so.
    let budgets = Budgets {
        states: 50,
        ..Budgets::default()
    };
    let world = explorable(&small("ordered-both.toml"), &budgets).unwrap();
    match Explorer::new(world, budgets).run() {
        Outcome::Holds(h) => assert_eq!((h.states, h.complete), (50, false)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn scenarios_that_read_a_clock_are_refused_with_reasons() {
    // The shipped fixed-order scenario has an outage and the partition one drops messages: the
    // explorer names what it cannot explore instead of answering wrongly. The others are
    // explorable (pauses, jitter and times are covered by the interleavings; a majority
    // client's validity and a restart without persistence are steps that may come at any
    // moment).
    for path in shipped_paths() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let s = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let refused = matches!(
            explorable(&s, &Budgets::default()),
            Err(ExploreError::Timed(ref reasons)) if !reasons.is_empty()
        );
        let timed = name.starts_with("03") || name.starts_with("06");
        assert_eq!(refused, timed, "{name}");
    }
    let mut s = scenario("01");
    s.clients[0].lease_aware = true;
    let Err(ExploreError::Timed(reasons)) = explorable(&s, &Budgets::default()) else {
        panic!("a lease-aware client reads its clock");
    };
    assert!(reasons[0].contains("lease-aware"), "{reasons:?}");
}

mod peer;

/// Every scenario the explorer is tested on: the small ones, and each shipped one it can
/// explore that is small (two or three clients and at most three services; the inventory
/// scenario has eight clients, the majority ones five services).
fn explorable_scenarios() -> Vec<(String, Scenario)> {
    let mut all: Vec<(String, Scenario)> = small_names()
        .into_iter()
        .map(|n| (n.clone(), small(&n)))
        .collect();
    for path in shipped_paths() {
        let s = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let world = explorable(&s, &Budgets::default());
        if world.is_ok_and(|w| w.clients.len() <= 3 && w.services.len() <= 3) {
            all.push((path.file_name().unwrap().to_string_lossy().into_owned(), s));
        }
    }
    all
}

#[test]
fn stateright_and_the_explorer_agree_on_every_small_scenario() {
    // The same space searched by both. Where every property holds, both reach the same number
    // of unique states. Where one fails, Stateright finds the same property violated, finds no
    // violation of anything in the states fewer steps away than the explorer's counterexample,
    // and finds this one among the states that many steps away: the counterexample is a
    // shortest one by both searches. One operation per client keeps the shipped scenarios
    // small; each is also searched with no property asked, so that both cover its whole space.
    let budgets = Budgets::default();
    let mut compared = 0;
    for (name, s) in explorable_scenarios() {
        let world = explorable(&s, &budgets).unwrap();
        for properties in [&Property::ALL[..], &[]] {
            let space = Space::new(world.clone(), budgets).checking(properties);
            let ours = Explorer::over(space.clone()).run();
            match ours {
                Outcome::Holds(h) => {
                    let theirs = peer::check(space, None);
                    assert!(h.complete, "{name}: {h:?}");
                    assert!(
                        theirs.violations.is_empty(),
                        "{name}: {:?}",
                        theirs.violations
                    );
                    assert_eq!(h.states as usize, theirs.states, "{name}: unique states");
                }
                Outcome::Violated(c) => {
                    let theirs = peer::check(space.clone(), None);
                    assert!(
                        theirs
                            .violations
                            .iter()
                            .any(|(p, len)| *p == c.property && *len >= c.len()),
                        "{name}: Stateright finds {} violated too: {:?}",
                        c.property.name(),
                        theirs.violations
                    );
                    let shorter = peer::check(space.clone(), Some(c.len() - 1));
                    assert!(
                        shorter.violations.is_empty(),
                        "{name}: {:?}",
                        shorter.violations
                    );
                    let as_long = peer::check(space, Some(c.len()));
                    assert!(
                        as_long.violations.iter().any(|(p, _)| *p == c.property),
                        "{name}: {:?}",
                        as_long.violations
                    );
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 2 * 15, "{compared}");
}

/// Runs the command line from the repository's root.
fn lockstep(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the command line runs")
}

#[test]
fn the_command_line_answers_and_its_exit_status_says_which() {
    // Every property holds: exit 0, and the sentence with the figures.
    let out = lockstep(&["explore", "tests/it/explore/ordered-both.toml"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let h = holds("ordered-both.toml");
    assert!(
        text.contains(&format!(
            "holds for all {} states up to depth {} (the whole state space)",
            h.states, h.depth
        )),
        "{text}"
    );
    // A counterexample: exit 1, the property, the verdict and the trace of the replayed run.
    let out = lockstep(&["explore", "tests/it/explore/two-services.toml"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("Counterexample to exclusion, in 6 steps"),
        "{text}"
    );
    assert!(text.contains("Exclusion broken"), "{text}");
    assert!(text.contains("HOLDS table[n] via b#1"), "{text}");
    // The budgets are options; a depth too short for the counterexample finds none.
    let out = lockstep(&[
        "explore",
        "tests/it/explore/two-services.toml",
        "--depth",
        "5",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("up to depth 5 (a budget cut"), "{text}");
    // A scenario that reads a clock, an unknown option and a missing file: exit 2, nothing on
    // standard output, and the reason on standard error.
    for args in [
        &["explore", "lessons/scenarios/06-partition.toml"][..],
        &[
            "explore",
            "tests/it/explore/two-services.toml",
            "--seed",
            "1",
        ],
        &[
            "explore",
            "tests/it/explore/two-services.toml",
            "--depth",
            "x",
        ],
        &["explore", "no-such-file.toml"],
        &["explore"],
    ] {
        let out = lockstep(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn the_command_line_json_carries_the_counterexample_as_a_trace() {
    let out = lockstep(&["explore", "tests/it/explore/unordered-both.toml", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["holds"], false);
    assert_eq!(doc["property"], "no_wait_cycle");
    assert_eq!(doc["steps"], 6);
    assert_eq!(doc["verdict"]["deadlock"], true);
    // The trace is the replay's, event for event.
    let (world, c) = violated("unordered-both.toml");
    let run = c.replay(&world);
    assert_eq!(doc["trace"], serde_json::to_value(&run.events).unwrap());
    assert_eq!(
        doc["digest"],
        format!("{:016x}", lockstep::trace::digest(&run.events))
    );
    let out = lockstep(&["explore", "tests/it/explore/one-service.toml", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["holds"], true);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["states"], holds("one-service.toml").states);
}
