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
    // Each run is timed on its own; the median and the best are reported, because a shared
    // machine makes single timings noisy.
    let runs = 9u64;
    let mut simulate_rates = Vec::new();
    let mut total_rates = Vec::new();
    for seed in 1..=runs {
        let start = Instant::now();
        let run = lockstep::run(&busy, seed).expect("runs");
        let simulated = start.elapsed();
        black_box(monitor::verdict(&run));
        let total = start.elapsed();
        let events = run.events.len() as f64;
        simulate_rates.push(events / simulated.as_secs_f64());
        total_rates.push(events / total.as_secs_f64());
    }
    let report = |label: &str, rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        println!(
            "{label}: median {:.1} million events/s, best {:.1} (over {runs} runs)",
            rates[rates.len() / 2] / 1e6,
            rates[rates.len() - 1] / 1e6
        );
    };
    report("simulate", &mut simulate_rates);
    report("simulate + verdict", &mut total_rates);

    for b in builtin::ALL {
        let s = Scenario::from_toml_str(b.toml()).expect("shipped scenarios are valid");
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
            n as f64 / start.elapsed().as_secs_f64()
        );
    }
}
