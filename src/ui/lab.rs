//! The lab: sweeps run away from the page, in a worker, chunk by chunk. This module is the pure
//! part both sides share: what the page asks, what the worker answers, and how a request is
//! worked through, so the protocol is tested natively and the worker only moves messages.

use serde::{Deserialize, Serialize};

use crate::explore::{self, Budgets, Explorer, Outcome as Explored};
use crate::scenario::Scenario;
use crate::sweep::{Param, SweepPoint, Sweeper};

/// Runs between two progress reports: small enough that progress moves several times a second
/// on a busy scenario, large enough that reporting costs nothing.
pub const RUNS_PER_CHUNK: u64 = 25;
/// States expanded between two progress reports of an exploration.
pub const STATES_PER_CHUNK: usize = 5_000;

/// The page's exploration budgets: a page explores less than the command line (a million
/// states), so an answer comes within seconds; `lockstep explore` goes further.
pub fn page_budgets() -> Budgets {
    Budgets {
        states: 200_000,
        ..Budgets::default()
    }
}

/// What the page asks the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LabRequest {
    Sweep {
        /// The scenario, as TOML.
        scenario: String,
        param: Param,
        values: Vec<u64>,
        seeds: u64,
    },
    /// Every interleaving of the scenario, within [`page_budgets`].
    Explore { scenario: String },
}

/// What the worker answers: progress, then one result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LabReply {
    Progress {
        done: u64,
        total: u64,
    },
    Swept {
        param: Param,
        points: Vec<SweepPoint>,
    },
    /// How far an exploration has come.
    Exploring {
        states: u64,
        depth: u32,
    },
    /// Every property held in every state reached.
    Holds {
        states: u64,
        depth: u32,
        /// No budget cut the search short: these are all the states there are.
        complete: bool,
    },
    /// The shortest path to a violation: the steps to replay ([`replay`]).
    Counterexample {
        property: String,
        broken: String,
        steps: Vec<u64>,
        states: u64,
    },
    Failed {
        why: String,
    },
}

/// Works a request through, calling `post` with each progress report and the result.
pub fn work(request: &LabRequest, mut post: impl FnMut(LabReply)) {
    match request {
        LabRequest::Sweep {
            scenario,
            param,
            values,
            seeds,
        } => {
            let scenario = match Scenario::from_toml_str(scenario) {
                Ok(s) => s,
                Err(e) => return post(LabReply::Failed { why: e.to_string() }),
            };
            let mut sweeper = match Sweeper::new(&scenario, *param, values, *seeds) {
                Ok(s) => s,
                Err(e) => return post(LabReply::Failed { why: e.to_string() }),
            };
            loop {
                let done = sweeper.step(RUNS_PER_CHUNK);
                let (runs, total) = sweeper.progress();
                post(LabReply::Progress { done: runs, total });
                if done {
                    break;
                }
            }
            // The page draws the plot: a worker has no document, and plotters measures its
            // labels with one in a browser.
            post(LabReply::Swept {
                param: *param,
                points: sweeper.points().to_vec(),
            });
        }
        LabRequest::Explore { scenario } => {
            let scenario = match Scenario::from_toml_str(scenario) {
                Ok(s) => s,
                Err(e) => return post(LabReply::Failed { why: e.to_string() }),
            };
            let world = match explore::explorable(&scenario, &page_budgets()) {
                Ok(w) => w,
                Err(e) => return post(LabReply::Failed { why: e.to_string() }),
            };
            let mut explorer = Explorer::new(world, page_budgets());
            loop {
                let progress = explorer.step(STATES_PER_CHUNK);
                match progress.done {
                    None => post(LabReply::Exploring {
                        states: progress.states,
                        depth: progress.depth,
                    }),
                    Some(Explored::Holds(h)) => {
                        return post(LabReply::Holds {
                            states: h.states,
                            depth: h.depth,
                            complete: h.complete,
                        })
                    }
                    Some(Explored::Violated(c)) => {
                        return post(LabReply::Counterexample {
                            property: c.property.name().to_string(),
                            broken: c.property.broken().to_string(),
                            steps: c.steps.clone(),
                            states: c.states,
                        })
                    }
                }
            }
        }
    }
}

/// Replays a counterexample's steps as an ordinary run of the scenario, as the explorer saw it.
pub fn replay(
    scenario: &Scenario,
    property: &str,
    steps: &[u64],
) -> Result<crate::sim::Run, String> {
    let world = explore::explorable(scenario, &page_budgets()).map_err(|e| e.to_string())?;
    let property = crate::property::Property::ALL
        .into_iter()
        .find(|p| p.name() == property)
        .ok_or_else(|| format!("no property named \"{property}\""))?;
    let path = explore::Counterexample {
        property,
        steps: steps.to_vec(),
        states: 0,
    };
    let mut run = path.try_replay(&world)?;
    run.seed = scenario.seed;
    Ok(run)
}

/// A counterexample replayed against the scenario it was found in, carried by
/// [`crate::ui::Action::ShowCounterexample`]. The panel that found it replays it, so the
/// explorer is linked only into the bundle that has the panel, not into every app's reducer.
#[derive(Clone, Debug)]
pub struct Replayed(pub std::sync::Arc<(Scenario, Result<crate::sim::Run, String>)>);

impl PartialEq for Replayed {
    fn eq(&self, other: &Replayed) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The action that shows a counterexample's path in `scenario` as the run.
pub fn counterexample(scenario: &Scenario, property: &str, steps: &[u64]) -> crate::ui::Action {
    crate::ui::Action::ShowCounterexample {
        property: property.to_string(),
        steps: steps.to_vec(),
        replayed: Replayed(std::sync::Arc::new((
            scenario.clone(),
            replay(scenario, property, steps),
        ))),
    }
}

/// Values worth trying for a parameter, around what the scenario has now.
pub fn suggested_values(param: Param, s: &Scenario) -> Vec<u64> {
    let lease = s
        .services
        .iter()
        .find_map(|v| v.lease_ms)
        .unwrap_or(500)
        .max(1);
    match param {
        Param::PartitionMs => {
            let d = s.partitions.first().map_or(500, |p| p.duration_ms).max(100);
            vec![0, d / 4, d / 2, d, d * 2]
        }
        Param::OverlapMs => {
            let stop = s.clients.first().and_then(|c| c.stop_ms).unwrap_or(3000);
            [0, 1, 2, 3, 4].iter().map(|k| stop * k / 4).collect()
        }
        Param::PauseMs => vec![0, lease / 2, lease, lease * 2, lease * 4],
        Param::LeaseMs => vec![100, 250, 500, 1000, 2000],
        Param::Services => vec![1, 2, 3, 4],
        Param::Fencing => vec![0, 1, 2],
    }
}

/// The point of a plot nearest to a click at `fraction` of the way along the horizontal axis.
pub fn nearest_point(points: &[SweepPoint], fraction: f64) -> Option<usize> {
    let (lo, hi) = points.iter().fold((u64::MAX, 0), |(lo, hi), p| {
        (lo.min(p.value), hi.max(p.value))
    });
    if points.is_empty() {
        return None;
    }
    let x = lo as f64 + fraction.clamp(0.0, 1.0) * (hi.saturating_sub(lo)) as f64;
    points
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| {
            (a.value as f64 - x)
                .abs()
                .total_cmp(&(b.value as f64 - x).abs())
        })
        .map(|(i, _)| i)
}

/// The most seeds a sweep may run at each value from the page.
pub const PAGE_SEEDS_MAX: u64 = 2000;

/// A finished sweep, as the panel shows it.
#[derive(Debug, PartialEq)]
pub struct Swept {
    pub param: Param,
    pub points: Vec<SweepPoint>,
    pub title: String,
}

/// What a sweep is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepState {
    Idle,
    Running { done: u64, total: u64 },
    Done(std::rc::Rc<Swept>),
    Failed(String),
}

/// The sweep panel's state: the form as the user typed it, what the sweep is doing, and the
/// point picked in its result. It changes only through [`SweepPanel::reduce`]; the page starts
/// and stops the worker and turns its replies into actions.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPanel {
    /// The parameter chosen; none (or one the scenario does not offer) means the first offered.
    pub param: Option<Param>,
    /// The values as typed; empty means the values suggested for the scenario.
    pub values: String,
    pub seeds: String,
    pub state: SweepState,
    pub picked: Option<usize>,
}

impl Default for SweepPanel {
    fn default() -> SweepPanel {
        SweepPanel {
            param: None,
            values: String::new(),
            seeds: "50".into(),
            state: SweepState::Idle,
            picked: None,
        }
    }
}

/// Everything that changes the sweep panel.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepAction {
    /// Another parameter: its values go back to the suggested ones.
    Param(Param),
    Values(String),
    Seeds(String),
    /// The request went to the worker, for `total` runs.
    Started {
        total: u64,
    },
    Progress {
        done: u64,
        total: u64,
    },
    Finished(Result<std::rc::Rc<Swept>, String>),
    Cancelled,
    /// A row of the result's table, or none.
    Pick(Option<usize>),
    /// A click on the plot at this fraction of its horizontal axis: the nearest point.
    PickAt(f64),
}

/// The sweep form read against a scenario: what it offers and whether it can run.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepForm {
    /// The parameters the scenario can vary.
    pub offered: Vec<Param>,
    pub param: Param,
    /// The values' text as the field shows it.
    pub values_text: String,
    pub values: Result<Vec<u64>, String>,
    pub seeds: Result<u64, String>,
}

impl SweepForm {
    /// Whether the form is complete, without writing the scenario out (the page asks at every
    /// render, to enable Run).
    pub fn can_run(&self) -> bool {
        !self.offered.is_empty()
            && self.values.as_ref().is_ok_and(|v| !v.is_empty())
            && self.seeds.is_ok()
    }

    /// The request to send, when the form is complete.
    pub fn request(&self, scenario: &Scenario) -> Option<LabRequest> {
        match (&self.values, &self.seeds) {
            (Ok(values), Ok(seeds)) if self.can_run() => Some(LabRequest::Sweep {
                scenario: scenario.to_toml_string(),
                param: self.param,
                values: values.clone(),
                seeds: *seeds,
            }),
            _ => None,
        }
    }
}

impl SweepPanel {
    pub fn reduce(&self, action: SweepAction) -> SweepPanel {
        let mut next = self.clone();
        match action {
            SweepAction::Param(p) => {
                next.param = Some(p);
                next.values.clear();
            }
            SweepAction::Values(v) => next.values = v,
            SweepAction::Seeds(s) => next.seeds = s,
            SweepAction::Started { total } => {
                next.picked = None;
                next.state = SweepState::Running { done: 0, total };
            }
            SweepAction::Progress { done, total } => {
                // A report that arrives after the answer or a cancel changes nothing.
                if matches!(self.state, SweepState::Running { .. }) {
                    next.state = SweepState::Running { done, total };
                }
            }
            SweepAction::Finished(result) => {
                if matches!(self.state, SweepState::Running { .. }) {
                    next.state = match result {
                        Ok(swept) => SweepState::Done(swept),
                        Err(why) => SweepState::Failed(why),
                    };
                }
            }
            SweepAction::Cancelled => {
                if matches!(self.state, SweepState::Running { .. }) {
                    next.state = SweepState::Failed("Cancelled.".into());
                }
            }
            SweepAction::Pick(i) => {
                if let SweepState::Done(swept) = &self.state {
                    next.picked = i.filter(|i| *i < swept.points.len());
                }
            }
            SweepAction::PickAt(fraction) => {
                if let SweepState::Done(swept) = &self.state {
                    next.picked = nearest_point(&swept.points, fraction);
                }
            }
        }
        next
    }

    /// The form read against the scenario on screen.
    pub fn form(&self, s: &Scenario) -> SweepForm {
        let offered: Vec<Param> = Param::ALL
            .into_iter()
            .filter(|x| x.problem(s).is_none())
            .collect();
        let param = self
            .param
            .filter(|p| offered.contains(p))
            .or_else(|| offered.first().copied())
            .unwrap_or(Param::Fencing);
        let values_text = if self.values.is_empty() {
            suggested_values(param, s)
                .iter()
                .map(|v| param.label(*v))
                .collect::<Vec<_>>()
                .join(",")
        } else {
            self.values.clone()
        };
        let values = values_text
            .split(',')
            .filter(|v| !v.trim().is_empty())
            .map(|v| param.parse_value(v))
            .collect::<Result<Vec<u64>, String>>()
            .and_then(|v| {
                if v.is_empty() {
                    Err("give at least one value".into())
                } else if v.len() > crate::sweep::SWEEP_VALUES_MAX {
                    Err(format!("at most {} values", crate::sweep::SWEEP_VALUES_MAX))
                } else {
                    Ok(v)
                }
            });
        let seeds = self
            .seeds
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("\"{}\" is not a whole number of seeds", self.seeds.trim()))
            .and_then(|n| {
                if (1..=PAGE_SEEDS_MAX).contains(&n) {
                    Ok(n)
                } else {
                    Err(format!("seeds: 1 to {PAGE_SEEDS_MAX}"))
                }
            });
        SweepForm {
            offered,
            param,
            values_text,
            values,
            seeds,
        }
    }
}

/// What an exploration is doing, as the "Is it safe?" panel shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Search {
    Idle,
    Running {
        states: u64,
        depth: u32,
    },
    Holds {
        states: u64,
        depth: u32,
        complete: bool,
    },
    Broken {
        property: String,
        broken: String,
        steps: Vec<u64>,
        states: u64,
    },
    Failed(String),
}

/// Everything that changes the exploration panel.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchAction {
    /// The request went to the worker.
    Started,
    /// The worker answered (or a remembered answer was found).
    Reply(LabReply),
    Cancelled,
}

impl Search {
    pub fn reduce(&self, action: SearchAction) -> Search {
        let running = matches!(self, Search::Running { .. });
        match action {
            SearchAction::Started => Search::Running {
                states: 0,
                depth: 0,
            },
            SearchAction::Cancelled if running => Search::Failed("Cancelled.".into()),
            SearchAction::Reply(reply) if running => match reply {
                LabReply::Exploring { states, depth } => Search::Running { states, depth },
                LabReply::Holds {
                    states,
                    depth,
                    complete,
                } => Search::Holds {
                    states,
                    depth,
                    complete,
                },
                LabReply::Counterexample {
                    property,
                    broken,
                    steps,
                    states,
                } => Search::Broken {
                    property,
                    broken,
                    steps,
                    states,
                },
                LabReply::Failed { why } => Search::Failed(why),
                other => Search::Failed(format!("an unexpected answer: {other:?}")),
            },
            // A reply after a cancel, or a cancel after the answer, changes nothing.
            _ => self.clone(),
        }
    }

    /// A search that has its answer (kept, so that asking again answers at once).
    pub fn is_answer(&self) -> bool {
        matches!(self, Search::Holds { .. } | Search::Broken { .. })
    }
}
