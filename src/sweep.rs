//! Sweeps: many runs of one scenario over seeds and a varied parameter, for claims that are
//! about probabilities rather than single runs.

use serde::Serialize;

use crate::monitor::{verdict, Exclusion};
use crate::scenario::{Scenario, ScenarioErrors};
use crate::sim::run;

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    pub value_ms: u64,
    pub runs: u64,
    /// Runs in which exclusion broke at least once.
    pub broken_runs: u64,
    pub broken_rate: f64,
    /// Mean number of exclusion violations per run.
    pub mean_violations: f64,
    pub mean_lost_updates: f64,
}

/// The most runs one sweep may do, so a sweep always finishes.
pub const SWEEP_RUNS_MAX: u64 = 100_000;

/// Varies the length of the scenario's first partition over `lengths_ms`, running seeds
/// `0..seeds` for each, and reports how often exclusion broke.
pub fn partition_length(
    scenario: &Scenario,
    lengths_ms: &[u64],
    seeds: u64,
) -> Result<Vec<SweepPoint>, ScenarioErrors> {
    if scenario.partitions.is_empty() {
        return Err(ScenarioErrors(vec![crate::scenario::ScenarioError {
            location: "scenario".into(),
            message: "a partition sweep needs at least one partition to vary".into(),
        }]));
    }
    sweep(scenario, lengths_ms, seeds, |s, v| {
        s.partitions[0].duration_ms = v
    })
}

/// Runs `scenario` changed by `set` for every value and seed.
pub fn sweep(
    scenario: &Scenario,
    values_ms: &[u64],
    seeds: u64,
    set: impl Fn(&mut Scenario, u64),
) -> Result<Vec<SweepPoint>, ScenarioErrors> {
    let total = seeds.saturating_mul(values_ms.len() as u64);
    if total > SWEEP_RUNS_MAX {
        return Err(ScenarioErrors(vec![crate::scenario::ScenarioError {
            location: "sweep".into(),
            message: format!("{total} runs requested, more than the limit of {SWEEP_RUNS_MAX}"),
        }]));
    }
    let mut points = Vec::new();
    for &value in values_ms {
        let mut s = scenario.clone();
        set(&mut s, value);
        s.validate()?;
        let mut broken = 0u64;
        let mut violations = 0u64;
        let mut lost = 0u64;
        for seed in 0..seeds {
            let r = run(&s, seed)?;
            let v = verdict(&r);
            if v.exclusion == Exclusion::Broken {
                broken += 1;
            }
            // Every overlap, not only the ones the verdict details.
            violations += v.violation_count;
            lost += v.lost_updates;
        }
        let n = seeds.max(1) as f64;
        points.push(SweepPoint {
            value_ms: value,
            runs: seeds,
            broken_runs: broken,
            broken_rate: broken as f64 / n,
            mean_violations: violations as f64 / n,
            mean_lost_updates: lost as f64 / n,
        });
    }
    Ok(points)
}
