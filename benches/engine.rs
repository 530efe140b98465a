//! Engine throughput, printed as figures (not asserted): simulated events per second for a busy
//! scenario, and whole runs per second for the short shipped scenarios.
//!
//! Run with `cargo bench --bench engine`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use lockstep::{builtin, monitor, Scenario};

fn main() {
    let busy =
        Scenario::from_toml_str(include_str!("busy.toml")).expect("the busy scenario is valid");
    // Warm up once, then measure several runs.
    let warm = lockstep::run(&busy, 1).expect("runs");
    println!(
        "busy scenario: {} events over {} simulated seconds{}",
        warm.events.len(),
        warm.end / 1_000_000,
        if warm.truncated {
            " (event budget reached)"
        } else {
            ""
        }
    );
    let runs = 5u64;
    let mut events = 0u64;
    let mut simulate = Duration::ZERO;
    let mut judge = Duration::ZERO;
    for seed in 1..=runs {
        let start = Instant::now();
        let run = lockstep::run(&busy, seed).expect("runs");
        simulate += start.elapsed();
        events += run.events.len() as u64;
        let start = Instant::now();
        black_box(monitor::verdict(&run));
        judge += start.elapsed();
    }
    let per_second = |n: u64, d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "simulate: {:.1} million events/s ({} events in {:.3} s)",
        per_second(events, simulate) / 1e6,
        events,
        simulate.as_secs_f64()
    );
    println!(
        "simulate + verdict: {:.1} million events/s",
        per_second(events, simulate + judge) / 1e6
    );

    for b in builtin::ALL {
        let s = Scenario::from_toml_str(b.toml).expect("shipped scenarios are valid");
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            let run = lockstep::run(&s, n).expect("runs");
            black_box(monitor::verdict(&run));
            n += 1;
        }
        println!(
            "{:<30} {:>8.0} runs/s (run + verdict)",
            b.file,
            per_second(n, start.elapsed())
        );
    }
}
