//! Exploration throughput, printed as figures (not asserted): unique states per second of the
//! explorer and of Stateright's breadth-first checker, one thread each, on the same state
//! spaces (the same `Space`, so the same transition function, enabled steps and properties),
//! and the time the explorer takes to check a million states.
//!
//! Rates are per second of processor time where the system tells it (`/proc/self/stat`), which
//! other work on a shared machine disturbs less than the clock; the million states are timed by
//! both.
//!
//! Run with `cargo bench --bench explore`; add `-- --quick` to skip the million states.

// Stateright, the peer checker, is a native dependency: on wasm32 (where clippy lints what ships)
// this benchmark is an empty program.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main();
}

#[cfg(not(target_arch = "wasm32"))]
#[path = "../tests/it/explore/peer.rs"]
mod peer;

#[cfg(not(target_arch = "wasm32"))]
mod native {

    use std::time::Instant;

    use lockstep::explore::{explorable, Budgets, Explorer, Outcome, Space};
    use lockstep::property::Property;
    use lockstep::Scenario;

    use super::peer;

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

    /// The processor time this process has used, in seconds, where the system tells it (in the
    /// kernel's 100 ticks a second).
    fn cpu_seconds() -> Option<f64> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The fields after the command name, which is in parentheses and may contain spaces:
        // user time and system time are the 12th and 13th of them.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
        Some((ticks(11)? + ticks(12)?) / 100.0)
    }

    /// Times `work` by processor time where known, else by the clock.
    fn timed<T>(work: impl FnOnce() -> T) -> (f64, T) {
        let (cpu, wall) = (cpu_seconds(), Instant::now());
        let out = work();
        let seconds = match (cpu, cpu_seconds()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => wall.elapsed().as_secs_f64(),
        };
        (seconds, out)
    }

    fn space(file: &str, budgets: Budgets, properties: &[Property]) -> Space {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let scenario = Scenario::from_toml_str(&std::fs::read_to_string(&path).expect("readable"))
            .expect("a valid scenario");
        let world = explorable(&scenario, &budgets).expect("explorable");
        Space::new(world, budgets).checking(properties)
    }

    pub fn main() {
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
                let (seconds, outcome) = timed(|| Explorer::over(space.clone()).run());
                ours = ours.min(seconds);
                let Outcome::Holds(h) = outcome else {
                    panic!("{}: the properties asked hold", case.file);
                };
                assert!(h.complete);
                states = h.states as usize;
            }
            let mut theirs = f64::MAX;
            for _ in 0..3 {
                let (seconds, answer) = timed(|| peer::check(space.clone(), None));
                theirs = theirs.min(seconds);
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
        let cpu = cpu_seconds();
        let start = Instant::now();
        let outcome = Explorer::over(space).run();
        let elapsed = start.elapsed().as_secs_f64();
        let processor = cpu
            .zip(cpu_seconds())
            .map(|(a, b)| format!(", {:.2} s of processor time", b - a))
            .unwrap_or_default();
        let Outcome::Holds(h) = outcome else {
            panic!("no wait cycle on single locks");
        };
        println!(
            "a million states: {} states to depth {} in {elapsed:.2} s on the clock{processor} \
         ({:.0} states/s on the clock)",
            h.states,
            h.depth,
            h.states as f64 / elapsed
        );
    }
}
