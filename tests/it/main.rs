//! The integration tests, in one crate: every module drives the engine through its public
//! interface, the way the command line and the app do.
// The integration tests drive the native command line and use native-only crates (proptest);
// the browser tests are tests/wasm.rs and tests/wasm_app.rs.
#![cfg(not(target_arch = "wasm32"))]

mod claims;
mod cli;
mod controls;
mod course;
mod determinism;
mod explore;
mod handout;
mod layers;
mod lesson_format;
mod lessons;
mod majority;
mod mdbook;
mod mechanisms;
mod model_api;
mod monitors;
mod paint;
mod properties;
mod reality;
mod recordings;
mod redis;
mod room;
mod scenario_format;
mod share;
mod site;
mod snapshots;
mod sorting;
mod split;
mod sweeps;
mod ui;
mod verdicts;
mod words;
mod workshop;
mod zookeeper;

use std::path::PathBuf;

use lockstep::{monitor, Run, Scenario, Verdict};

/// The directory of the shipped scenarios.
pub fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lessons/scenarios")
}

/// Every shipped scenario file, sorted by name.
pub fn shipped_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("the scenarios directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no scenarios shipped");
    paths
}

/// Loads a shipped scenario by the start of its file name, e.g. `"05"`.
pub fn scenario(prefix: &str) -> Scenario {
    let dir = scenarios_dir();
    let mut matches: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the scenarios directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".toml"))
        })
        .collect();
    matches.sort();
    assert_eq!(
        matches.len(),
        1,
        "exactly one scenario starts with {prefix}: {matches:?}"
    );
    let text = std::fs::read_to_string(&matches[0]).expect("readable scenario");
    Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{}: {e}", matches[0].display()))
}

/// Runs a scenario and computes its verdict.
pub fn check(scenario: &Scenario, seed: u64) -> (Run, Verdict) {
    let run = lockstep::run(scenario, seed).unwrap_or_else(|e| panic!("invalid scenario: {e}"));
    let verdict = monitor::verdict(&run);
    for log in &verdict.service_logs {
        assert!(
            log.consistent,
            "service {}'s own log must always be consistent: {:?}",
            log.service, log.problems
        );
    }
    (run, verdict)
}

/// A small random stream for data-driven tests (SplitMix64): the same start gives the same
/// draws on every machine, so a failing case can be run again by its number.
pub struct Draw(pub u64);

impl Draw {
    pub fn number(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`; 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        self.number() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// A folder under the system's temporary directory for one test, removed when dropped.
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    pub fn new(label: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("lockstep-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        Scratch(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    /// Writes a file in the folder and returns its path.
    pub fn write(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("writable");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The project's root, where the command line runs in the tests that call it.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `lockstep` command from the project's root.
pub fn lockstep_cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the lockstep binary runs")
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
