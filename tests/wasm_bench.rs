//! The engine benchmark (`benches/engine.rs`) in headless Chromium: simulated events per second
//! on the busy scenario, with and without the verdict, printed in the native benchmark's words
//! so `scripts/bench-engine-web.sh` can set the two side by side. A benchmark, not a test: it
//! asserts nothing, and `scripts/test.sh` does not run it. Run it in release:
//!
//! ```sh
//! cargo test --release --target wasm32-unknown-unknown --test wasm_bench -- --nocapture
//! ```
#![cfg(target_arch = "wasm32")]

use std::hint::black_box;

use lockstep::{monitor, Scenario};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Milliseconds from the page's monotonic clock, with sub-millisecond resolution.
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .expect("a page has a performance clock")
        .now()
}

#[wasm_bindgen_test]
fn engine_throughput_in_the_browser() {
    let busy = Scenario::from_toml_str(include_str!("../benches/busy.toml"))
        .expect("the busy scenario is valid");
    // Warm up once, then time each run on its own, as the native benchmark does.
    let warm = lockstep::run(&busy, 1).expect("runs");
    black_box(monitor::verdict(&warm));
    console_log!(
        "busy scenario: {} events over {} simulated seconds",
        warm.events.len(),
        warm.end / 1_000_000
    );
    let runs = 9u64;
    let mut simulate_rates = Vec::new();
    let mut total_rates = Vec::new();
    for seed in 1..=runs {
        let start = now_ms();
        let run = lockstep::run(&busy, seed).expect("runs");
        let simulated = now_ms() - start;
        black_box(monitor::verdict(&run));
        let total = now_ms() - start;
        let events = run.events.len() as f64;
        simulate_rates.push(events / (simulated / 1e3));
        total_rates.push(events / (total / 1e3));
    }
    let report = |label: &str, rates: &mut Vec<f64>| {
        rates.sort_by(f64::total_cmp);
        console_log!(
            "{label}: median {:.1} million events/s, best {:.1} (over {runs} runs)",
            rates[rates.len() / 2] / 1e6,
            rates[rates.len() - 1] / 1e6
        );
    };
    report("simulate", &mut simulate_rates);
    report("simulate + verdict", &mut total_rates);
}
