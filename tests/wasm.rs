//! In headless Chromium: every shipped scenario, run by the engine compiled to WebAssembly,
//! gives exactly the trace the native build gives (the digests in `tests/golden/digests.txt`
//! are written and checked by the native tests).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const GOLDEN: &str = include_str!("golden/digests.txt");

#[wasm_bindgen_test]
fn every_shipped_scenario_has_the_native_trace_in_the_browser() {
    let mut checked = 0;
    for line in GOLDEN.lines() {
        let mut parts = line.split_whitespace();
        let (file, seed, expected) = (
            parts.next().expect("file"),
            parts.next().expect("seed").parse::<u64>().expect("seed"),
            parts.next().expect("digest"),
        );
        let built_in =
            lockstep::builtin::find(file).expect("the golden file names shipped scenarios");
        let scenario = lockstep::Scenario::from_toml_str(built_in.toml()).expect("valid");
        let run = lockstep::run(&scenario, seed).expect("runs");
        let actual = format!("{:016x}", lockstep::trace::digest(&run.events));
        assert_eq!(
            actual, expected,
            "{file} seed {seed}: the browser's trace differs from the native one"
        );
        checked += 1;
    }
    assert_eq!(checked, lockstep::builtin::ALL.len());
}

#[wasm_bindgen_test]
fn verdicts_in_the_browser_match_the_native_ones() {
    // Claim 5's scenario with its known native outcome: one lost update, exclusion broken.
    let scenario = lockstep::Scenario::from_toml_str(
        lockstep::builtin::find("05-fencing.toml").unwrap().toml(),
    )
    .unwrap();
    let run = lockstep::run(&scenario, 1).unwrap();
    let verdict = lockstep::verdict(&run);
    assert_eq!(verdict.exclusion, lockstep::Exclusion::Broken);
    assert_eq!(verdict.lost_updates, 1);
}
