//! Exploration throughput, printed as figures (not asserted): unique states per second of the
//! explorer and of Stateright's breadth-first checker, one thread each, on the same state
//! spaces (the same `Space`, so the same transition function, enabled steps and properties),
//! and the time the explorer takes to check a million states.
//!
//! Run with `cargo bench --bench explore`; add `-- --quick` to skip the million states.

use std::time::Instant;

use lockstep::explore::{explorable, Budgets, Explorer, Outcome, Space};
use lockstep::property::Property;
use lockstep::Scenario;

#[path = "../tests/it/explore/peer.rs"]
mod peer;

/// A state space to measure: a scenario, the operations per client, and the properties asked
/// (those that hold in the whole space, so both searches cover all of it).
struct Case {
    file: &'static str,
    operations: u32,
    faults: u32,
    properties: &'static [Property],
}

const CASES: &[Case] = &[
    Case {
        file: "tests/it/explore/subordinate-chain.toml",
        operations: 3,
        faults: 1,
        properties: &Property::ALL,
    },
    Case {
        file: "tests/it/explore/ordered-and-singles.toml",
        operations: 2,
        faults: 1,
        properties: &[Property::NoWaitCycle],
    },
    Case {
        file: "tests/it/explore/unordered-leases.toml",
        operations: 2,
        faults: 2,
        properties: &[],
    },
    Case {
        file: "tests/it/explore/three-services.toml",
        operations: 2,
        faults: 1,
        properties: &[Property::NoWaitCycle],
    },
    Case {
        file: "lessons/scenarios/04-subordinate.toml",
        operations: 2,
        faults: 1,
        properties: &[],
    },
];

fn space(file: &str, budgets: Budgets, properties: &[Property]) -> Space {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let scenario = Scenario::from_toml_str(&std::fs::read_to_string(&path).expect("readable"))
        .expect("a valid scenario");
    let world = explorable(&scenario, &budgets).expect("explorable");
    Space::new(world, budgets).checking(properties)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!(
        "{:<44} {:>9} {:>14} {:>14} {:>7}",
        "state space", "states", "explorer st/s", "Stateright", "ratio"
    );
    for case in CASES {
        let budgets = Budgets {
            operations: case.operations,
            faults: case.faults,
            ..Budgets::default()
        };
        let space = space(case.file, budgets, case.properties);
        // The best of three runs each, because a shared machine makes single timings noisy.
        let mut ours = f64::MAX;
        let mut states = 0;
        for _ in 0..3 {
            let start = Instant::now();
            let outcome = Explorer::over(space.clone()).run();
            ours = ours.min(start.elapsed().as_secs_f64());
            let Outcome::Holds(h) = outcome else {
                panic!("{}: the properties asked hold", case.file);
            };
            assert!(h.complete);
            states = h.states as usize;
        }
        let mut theirs = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let answer = peer::check(space.clone(), None);
            theirs = theirs.min(start.elapsed().as_secs_f64());
            assert_eq!(
                answer.states, states,
                "{}: the same unique states",
                case.file
            );
            assert!(answer.violations.is_empty());
        }
        let label = format!(
            "{} ({} op, {} fault)",
            case.file.rsplit('/').next().unwrap_or(case.file),
            case.operations,
            case.faults
        );
        println!(
            "{label:<44} {states:>9} {:>14.0} {:>14.0} {:>6.2}x",
            states as f64 / ours,
            states as f64 / theirs,
            theirs / ours
        );
    }
    if quick {
        return;
    }
    // A million states: three clients on three services, three operations each, stopped by
    // the state budget (the whole space is larger), each state checked for a wait cycle.
    let budgets = Budgets {
        operations: 3,
        states: 1_000_000,
        ..Budgets::default()
    };
    let space = space(
        "tests/it/explore/three-services.toml",
        budgets,
        &[Property::NoWaitCycle],
    );
    let start = Instant::now();
    let outcome = Explorer::over(space).run();
    let elapsed = start.elapsed().as_secs_f64();
    let Outcome::Holds(h) = outcome else {
        panic!("no wait cycle on single locks");
    };
    println!(
        "a million states: {} states to depth {} in {elapsed:.2} s ({:.0} states/s)",
        h.states,
        h.depth,
        h.states as f64 / elapsed
    );
}
