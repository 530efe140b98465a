//! Same scenario and seed, same trace: here natively, and against the digests in
//! `tests/golden/digests.txt`, which the browser test (`tests/wasm.rs`) checks too.

use lockstep::scenario::{Fencing, FencingChecks};
use lockstep::trace::{digest, What};

use crate::{check, scenario};

const GOLDEN: &str = "tests/golden/digests.txt";

/// Every shipped scenario with its own seed, and the digest of its trace.
fn digests() -> Vec<(String, u64, String)> {
    crate::shipped_paths()
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let s =
                lockstep::Scenario::from_toml_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let run = lockstep::run(&s, s.seed).unwrap();
            (name, s.seed, format!("{:016x}", digest(&run.events)))
        })
        .collect()
}

#[test]
fn shipped_scenarios_match_their_golden_digests() {
    let actual: String = digests()
        .iter()
        .map(|(name, seed, d)| format!("{name} {seed} {d}\n"))
        .collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        expected, actual,
        "a trace changed; if the change is intended, run `UPDATE_GOLDEN=1 cargo test --test it determinism` and review the diff"
    );
}

#[test]
fn the_same_seed_gives_the_same_trace_and_verdict() {
    for prefix in ["01", "05", "06", "08"] {
        let s = scenario(prefix);
        let (a, va) = check(&s, 7);
        let (b, vb) = check(&s, 7);
        assert_eq!(a.events, b.events, "scenario {prefix}");
        assert_eq!(va, vb, "scenario {prefix}");
        assert_eq!(digest(&a.events), digest(&b.events));
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let s = scenario("08");
    let digests: std::collections::BTreeSet<u64> = (0..8)
        .map(|seed| digest(&check(&s, seed).0.events))
        .collect();
    assert_eq!(digests.len(), 8, "eight seeds, eight different runs");
}

#[test]
fn turning_fencing_on_does_not_reshuffle_the_network() {
    // Fencing draws no random numbers, so the two runs agree event for event until the
    // resource first rejects an access.
    let off = scenario("05");
    let mut on = off.clone();
    on.resources[0].fencing = Fencing::OneSource;
    on.resources[0].fencing_source = Some("locks".into());
    on.resources[0].fencing_checks = FencingChecks::AllAccesses;
    let (a, _) = check(&off, 3);
    let (b, _) = check(&on, 3);
    let first_difference = a
        .events
        .iter()
        .zip(&b.events)
        .position(|(x, y)| {
            // Tokens are shown on accesses either way; only acceptance may differ.
            x != y
        })
        .expect("fencing changes the run");
    assert!(
        matches!(
            b.events[first_difference].what,
            What::Read {
                accepted: false,
                ..
            } | What::Write {
                accepted: false,
                ..
            }
        ),
        "the first difference is the rejection: {:?}",
        b.events[first_difference]
    );
}

#[test]
fn the_embedded_scenarios_are_the_shipped_files() {
    let on_disk: Vec<String> = crate::shipped_paths()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let embedded: Vec<&str> = lockstep::builtin::ALL.iter().map(|b| b.file).collect();
    assert_eq!(
        on_disk, embedded,
        "src/builtin.rs lists every shipped scenario"
    );
}

#[test]
fn adding_a_client_does_not_reshuffle_the_others() {
    // Random streams are chosen by name: a new class at the end leaves the draws of existing
    // clients alone, so a client that never meets the newcomer behaves exactly as before.
    let base = scenario("05");
    let mut more = base.clone();
    let mut extra = base.clients[0].clone();
    extra.name = "elsewhere".into();
    extra.resource = "accounts".into();
    extra.start_ms = 2_900;
    more.clients.push(extra);
    let (a, _) = check(&base, 4);
    let (b, _) = check(&more, 4);
    let before: Vec<_> = a.events.iter().filter(|e| e.at < 2_900_000).collect();
    let after: Vec<_> = b.events.iter().filter(|e| e.at < 2_900_000).collect();
    assert_eq!(before, after);
}
