//! Sweeps: many runs of one scenario over seeds and a varied parameter, for claims that are
//! about probabilities rather than single runs ("how often does exclusion break as the
//! partition grows?").
//!
//! A sweep varies one [`Param`] over a list of values and runs seeds `0..seeds` at each. Each
//! point reports the fraction of runs in which exclusion broke with its 95% Wilson interval, and
//! the mean lost updates, idle time and unavailability, all taken from the ordinary verdict of
//! each run. The work is bounded ([`SWEEP_RUNS_MAX`] runs, each under its event budget) and can
//! be done in chunks ([`Sweeper`]), so a page can show progress and stay responsive.

use serde::{Deserialize, Serialize};

use crate::monitor::{verdict, Exclusion};
use crate::scenario::{Fencing, Protocol, Scenario, ScenarioError, ScenarioErrors};
use crate::sim::run;

/// The most runs one sweep may do, so a sweep always finishes.
pub const SWEEP_RUNS_MAX: u64 = 100_000;
/// The most values one sweep may vary over.
pub const SWEEP_VALUES_MAX: usize = 100;
/// The broken seeds each point lists (all are counted).
pub const BROKEN_SEEDS_LISTED: usize = 50;

/// What a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// The length of the scenario's first partition, in milliseconds.
    PartitionMs,
    /// How long two workloads overlap in time, in milliseconds: the second client class starts
    /// this long before the first one stops (a staggered migration).
    OverlapMs,
    /// The length of the scenario's first pause, in milliseconds, against the services' leases.
    PauseMs,
    /// Every service's lease, in milliseconds.
    LeaseMs,
    /// How many independent services the client classes spread over (1 to 4): class k locks
    /// only service k mod n, each a copy of the first service.
    Services,
    /// Fencing at every resource: 0 off, 1 tokens from any source, 2 tokens from one source,
    /// checked on every access.
    Fencing,
}

impl Param {
    pub const ALL: [Param; 6] = [
        Param::PartitionMs,
        Param::OverlapMs,
        Param::PauseMs,
        Param::LeaseMs,
        Param::Services,
        Param::Fencing,
    ];

    /// The name the command line and the page use.
    pub fn name(self) -> &'static str {
        match self {
            Param::PartitionMs => "partition_ms",
            Param::OverlapMs => "overlap_ms",
            Param::PauseMs => "pause_ms",
            Param::LeaseMs => "lease_ms",
            Param::Services => "services",
            Param::Fencing => "fencing",
        }
    }

    pub fn from_name(name: &str) -> Option<Param> {
        Param::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The axis title of a plot, with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            Param::PartitionMs => "first partition's length (ms)",
            Param::OverlapMs => "overlap of the two workloads (ms)",
            Param::PauseMs => "first pause's length (ms)",
            Param::LeaseMs => "lease length (ms)",
            Param::Services => "independent services (count)",
            Param::Fencing => "fencing (off, any source, one source)",
        }
    }

    /// A value's label: the number, or the fencing mode's name.
    pub fn label(self, value: u64) -> String {
        match (self, value) {
            (Param::Fencing, 0) => "off".into(),
            (Param::Fencing, 1) => "any_source".into(),
            (Param::Fencing, _) => "one_source".into(),
            _ => value.to_string(),
        }
    }

    /// Reads one value as the command line gives it: a whole number, or a fencing mode's name.
    pub fn parse_value(self, text: &str) -> Result<u64, String> {
        let text = text.trim();
        if self == Param::Fencing {
            return match text {
                "off" | "0" => Ok(0),
                "any_source" | "1" => Ok(1),
                "one_source" | "2" => Ok(2),
                _ => Err(format!(
                    "\"{text}\" is not a fencing mode (off, any_source, one_source)"
                )),
            };
        }
        text.parse()
            .map_err(|_| format!("\"{text}\" is not a whole number"))
    }

    /// Why this parameter cannot vary in a scenario, if it cannot.
    pub fn problem(self, s: &Scenario) -> Option<String> {
        match self {
            Param::PartitionMs if s.partitions.is_empty() => {
                Some("a partition sweep needs at least one partition to vary".into())
            }
            Param::OverlapMs if s.clients.len() < 2 => {
                Some("an overlap sweep needs two client classes".into())
            }
            Param::OverlapMs if s.clients[0].stop_ms.is_none() => Some(
                "an overlap sweep needs the first client class to stop (stop_ms), so the second can start before it does"
                    .into(),
            ),
            Param::PauseMs if s.pauses.is_empty() => {
                Some("a pause sweep needs at least one pause to vary".into())
            }
            Param::LeaseMs | Param::Services if s.services.is_empty() => {
                Some("this sweep needs at least one service".into())
            }
            _ => None,
        }
    }

    /// The scenario with this parameter set to `value`; validation happens after.
    pub fn apply(self, s: &Scenario, value: u64) -> Scenario {
        let mut s = s.clone();
        match self {
            Param::PartitionMs => s.partitions[0].duration_ms = value,
            Param::OverlapMs => {
                let stop = s.clients[0].stop_ms.unwrap_or(0);
                s.clients[1].start_ms = stop.saturating_sub(value);
            }
            Param::PauseMs => s.pauses[0].duration_ms = value,
            Param::LeaseMs => {
                for service in &mut s.services {
                    service.lease_ms = Some(value);
                }
            }
            Param::Services => {
                let n = value.clamp(1, 4) as usize;
                let first = s.services[0].clone();
                let resources: Vec<String> = s.resources.iter().map(|r| r.name.clone()).collect();
                s.services = (0..n)
                    .map(|k| {
                        let mut svc = first.clone();
                        svc.name = if k == 0 {
                            first.name.clone()
                        } else {
                            format!("{}-{}", first.name, k + 1)
                        };
                        svc.subordinate_to = None;
                        svc.protects = resources.clone();
                        svc
                    })
                    .collect();
                let names: Vec<String> = s.services.iter().map(|v| v.name.clone()).collect();
                for (k, class) in s.clients.iter_mut().enumerate() {
                    class.protocol = Protocol::Single {
                        service: names[k % n].clone(),
                    };
                }
                for r in &mut s.resources {
                    if r.fencing_source.is_some() {
                        r.fencing_source = Some(names[0].clone());
                    }
                }
                s.migrations.clear();
            }
            Param::Fencing => {
                let source = s.services.first().map(|v| v.name.clone());
                for r in &mut s.resources {
                    r.fencing = match value {
                        0 => Fencing::Off,
                        1 => Fencing::AnySource,
                        _ => Fencing::OneSource,
                    };
                    r.fencing_checks = crate::scenario::FencingChecks::AllAccesses;
                    // A token source belongs to one-source fencing only: it is kept for that
                    // value (or the first service named), and dropped for the others, which a
                    // scenario with a source would otherwise fail to validate.
                    if r.fencing == Fencing::OneSource {
                        if r.fencing_source.is_none() {
                            r.fencing_source = source.clone();
                        }
                    } else {
                        r.fencing_source = None;
                    }
                }
            }
        }
        s
    }
}

/// The 95% Wilson score interval of `k` successes in `n` trials, as (low, high).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = k as f64 / n;
    let z2n = z * z / n;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z * (p * (1.0 - p) / n + z2n / (4.0 * n)).sqrt() / (1.0 + z2n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    pub value: u64,
    /// The value as the plot and table show it.
    pub label: String,
    pub runs: u64,
    /// Runs in which exclusion broke at least once.
    pub broken_runs: u64,
    pub broken_rate: f64,
    /// The 95% Wilson interval of the broken rate.
    pub broken_low: f64,
    pub broken_high: f64,
    /// Mean number of exclusion violations per run (every overlap, not only those detailed).
    pub mean_violations: f64,
    pub mean_lost_updates: f64,
    /// Mean milliseconds a resource stood idle while a client waited for it.
    pub mean_idle_ms: f64,
    /// Mean milliseconds of service unavailability (summed over services and regions).
    pub mean_unavailable_ms: f64,
    /// The first [`BROKEN_SEEDS_LISTED`] seeds in which exclusion broke, to open one.
    pub broken_seeds: Vec<u64>,
}

/// A sweep in progress: call [`Sweeper::step`] until it returns `true`.
#[derive(Clone, Debug)]
pub struct Sweeper {
    param: Param,
    /// Each value's scenario, validated up front, so every error is known before any run.
    scenarios: Vec<(u64, Scenario)>,
    seeds: u64,
    /// The next (value index, seed) to run.
    at: (usize, u64),
    current: Tally,
    points: Vec<SweepPoint>,
}

#[derive(Clone, Debug, Default)]
struct Tally {
    broken: u64,
    violations: u64,
    lost: u64,
    idle_us: u64,
    unavailable_us: u64,
    broken_seeds: Vec<u64>,
}

fn error(location: &str, message: String) -> ScenarioErrors {
    ScenarioErrors(vec![ScenarioError {
        location: location.into(),
        message,
    }])
}

impl Sweeper {
    /// Checks the sweep and every value's scenario; runs nothing yet.
    pub fn new(
        scenario: &Scenario,
        param: Param,
        values: &[u64],
        seeds: u64,
    ) -> Result<Sweeper, ScenarioErrors> {
        if values.is_empty() || values.len() > SWEEP_VALUES_MAX {
            return Err(error(
                "sweep",
                format!("a sweep takes 1 to {SWEEP_VALUES_MAX} values"),
            ));
        }
        if seeds == 0 {
            return Err(error("sweep", "a sweep needs at least one seed".into()));
        }
        let total = seeds.saturating_mul(values.len() as u64);
        if total > SWEEP_RUNS_MAX {
            return Err(error(
                "sweep",
                format!("{total} runs requested, more than the limit of {SWEEP_RUNS_MAX}"),
            ));
        }
        if let Some(problem) = param.problem(scenario) {
            return Err(error("scenario", problem));
        }
        let mut scenarios = Vec::with_capacity(values.len());
        for &value in values {
            let s = param.apply(scenario, value);
            s.validate().map_err(|e| {
                ScenarioErrors(
                    e.0.into_iter()
                        .map(|mut err| {
                            err.message = format!(
                                "with {} = {}: {}",
                                param.name(),
                                param.label(value),
                                err.message
                            );
                            err
                        })
                        .collect(),
                )
            })?;
            scenarios.push((value, s));
        }
        Ok(Sweeper {
            param,
            scenarios,
            seeds,
            at: (0, 0),
            current: Tally::default(),
            points: Vec::new(),
        })
    }

    /// Runs done so far, and in all.
    pub fn progress(&self) -> (u64, u64) {
        (
            self.at.0 as u64 * self.seeds + self.at.1,
            self.scenarios.len() as u64 * self.seeds,
        )
    }

    /// The points finished so far.
    pub fn points(&self) -> &[SweepPoint] {
        &self.points
    }

    pub fn done(&self) -> bool {
        self.at.0 >= self.scenarios.len()
    }

    /// Does up to `runs` more runs; returns whether the sweep is done.
    pub fn step(&mut self, runs: u64) -> bool {
        for _ in 0..runs {
            if self.done() {
                break;
            }
            let (value, s) = &self.scenarios[self.at.0];
            let seed = self.at.1;
            let r = run(s, seed).expect("validated when the sweep was made");
            let v = verdict(&r);
            let t = &mut self.current;
            if v.exclusion == Exclusion::Broken {
                t.broken += 1;
                if t.broken_seeds.len() < BROKEN_SEEDS_LISTED {
                    t.broken_seeds.push(seed);
                }
            }
            t.violations += v.violation_count;
            t.lost += v.lost_updates;
            t.idle_us += v
                .resources
                .iter()
                .map(|r| r.idle_while_waiting_us)
                .sum::<u64>();
            t.unavailable_us += v
                .unavailability
                .iter()
                .map(|u| u.unavailable_us)
                .sum::<u64>();
            self.at.1 += 1;
            if self.at.1 == self.seeds {
                let t = std::mem::take(&mut self.current);
                let n = self.seeds as f64;
                let (low, high) = wilson(t.broken, self.seeds);
                self.points.push(SweepPoint {
                    value: *value,
                    label: self.param.label(*value),
                    runs: self.seeds,
                    broken_runs: t.broken,
                    broken_rate: t.broken as f64 / n,
                    broken_low: low,
                    broken_high: high,
                    mean_violations: t.violations as f64 / n,
                    mean_lost_updates: t.lost as f64 / n,
                    mean_idle_ms: t.idle_us as f64 / 1000.0 / n,
                    mean_unavailable_ms: t.unavailable_us as f64 / 1000.0 / n,
                    broken_seeds: t.broken_seeds,
                });
                self.at = (self.at.0 + 1, 0);
            }
        }
        self.done()
    }

    pub fn param(&self) -> Param {
        self.param
    }
}

/// Runs a whole sweep.
pub fn sweep(
    scenario: &Scenario,
    param: Param,
    values: &[u64],
    seeds: u64,
) -> Result<Vec<SweepPoint>, ScenarioErrors> {
    let mut s = Sweeper::new(scenario, param, values, seeds)?;
    while !s.step(1024) {}
    Ok(s.points)
}

/// Varies the length of the scenario's first partition over `lengths_ms`, running seeds
/// `0..seeds` for each, and reports how often exclusion broke.
pub fn partition_length(
    scenario: &Scenario,
    lengths_ms: &[u64],
    seeds: u64,
) -> Result<Vec<SweepPoint>, ScenarioErrors> {
    sweep(scenario, Param::PartitionMs, lengths_ms, seeds)
}
