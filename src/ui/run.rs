//! A run and what the views need of it: the engine's trace judged once ([`Outcome`]), the
//! inventory's findings beside it, the comparison with one control flipped, and how the app
//! puts a new run in place. Kept apart from the reducer, which decides when to run; this
//! decides what a run is.

use std::rc::Rc;

use super::compare::Diff;
use super::timeline::{self, Layout, OwnOrder};
use super::toggles::{self, Settings, Toggle};
use super::{text, App};
use crate::inventory::{self, Severity};
use crate::monitor::{self, Snapshot, Verdict};
use crate::scenario::{Scenario, ScenarioError};
use crate::trace::Event;
use crate::world::{Micros, World};

/// The most events the app simulates in one run.
pub const APP_EVENTS_MAX: u64 = 200_000;

/// The result of one run, with everything the views need from it.
#[derive(Debug)]
pub struct Outcome {
    pub world: World,
    pub seed: u64,
    pub events: Vec<Event>,
    pub end: Micros,
    pub verdict: Verdict,
    pub layout: Rc<Layout>,
    pub orders: Rc<Vec<OwnOrder>>,
    /// The first line of the verdict, word for word what `lockstep run` prints.
    pub headline: String,
    /// The trace digest, computed once: links and the embed's messages carry it, and they are
    /// remade as the playhead moves.
    pub digest: u64,
    /// Defects and warnings of the static inventory check, each with what this run shows of it.
    pub inventory: Vec<InventoryNote>,
    /// The scenario's own event budget when the app ran fewer events than it allows.
    pub capped_from: Option<u64>,
    /// Set when the run was recorded on real services (`lockstep record`) rather than
    /// simulated: what it was recorded from. Nothing can run it again.
    pub recorded: Option<Rc<crate::recording::Source>>,
}

/// A trace to judge, whichever driver made it.
struct Judged {
    world: World,
    seed: u64,
    events: Vec<Event>,
    end: Micros,
    truncated: bool,
}

impl Outcome {
    /// Runs a validated scenario with its own seed.
    pub fn compute(scenario: &Scenario) -> Result<Outcome, Vec<ScenarioError>> {
        scenario.validate().map_err(|e| e.0)?;
        // A page must answer within a moment whatever is typed, so the app runs at most
        // APP_EVENTS_MAX events; the run then says it stopped early, as the engine does for
        // any budget, and the page says the command line runs the rest.
        let budget = scenario.event_budget();
        let capped_from = (budget > APP_EVENTS_MAX).then_some(budget);
        let mut world = World::compile(scenario);
        world.event_budget = world.event_budget.min(APP_EVENTS_MAX);
        let run = crate::sim::run_world(world, scenario.seed);
        Ok(Outcome::of_run(scenario, run, capped_from))
    }

    /// The outcome of a run made some other way: a counterexample the explorer replayed.
    pub fn of_run(scenario: &Scenario, run: crate::sim::Run, capped_from: Option<u64>) -> Outcome {
        let crate::sim::Run {
            world,
            seed,
            events,
            end,
            truncated,
            ..
        } = run;
        Outcome::judge(
            scenario,
            Judged {
                world,
                seed,
                events,
                end,
                truncated,
            },
            capped_from,
            None,
        )
    }

    /// The outcome of a run recorded on real services: its trace judged by the same monitors,
    /// and what it was recorded from, which every view that shows it names.
    pub fn of_recording(recording: crate::recording::Recording) -> Outcome {
        let crate::recording::Recording {
            world,
            events,
            seed,
            source,
        } = recording;
        let end = world.duration;
        let scenario = source.scenario.clone();
        Outcome::judge(
            &scenario,
            Judged {
                world,
                seed,
                events,
                end,
                truncated: false,
            },
            None,
            Some(Rc::new(source)),
        )
    }

    fn judge(
        scenario: &Scenario,
        run: Judged,
        capped_from: Option<u64>,
        recorded: Option<Rc<crate::recording::Source>>,
    ) -> Outcome {
        // One analysis feeds both the verdict and the picture, so they count the same things
        // and the run is scanned once.
        let analysis = monitor::analyse(
            &run.world,
            &run.events,
            run.end,
            timeline::OVERLAPS_DETAILED_MAX,
        );
        let verdict = monitor::verdict_from(
            &run.world,
            &run.events,
            run.end,
            run.truncated,
            run.seed,
            &analysis,
        );
        let layout = Layout::build_judged(&run.world, &run.events, run.end, &analysis, &verdict);
        let orders = timeline::own_orders(&run.world, &run.events);
        let headline = verdict
            .summary()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        // A defect is about the data, whatever one run shows; a run that holds despite it is
        // lucky, and the finding says so beside the verdict instead of seeming to contradict it.
        let inventory = inventory::check(scenario)
            .into_iter()
            .map(|f| match f.severity {
                Severity::Defect => {
                    let r = run
                        .world
                        .resources
                        .iter()
                        .position(|x| x.name == f.resource);
                    let overlaps = r.map_or(0, |r| {
                        analysis
                            .overlaps
                            .bands
                            .iter()
                            .filter(|b| b.resources & (1 << r) != 0)
                            .map(|b| b.count)
                            .sum()
                    });
                    let lost = r.map_or(0, |r| {
                        let initial = run.world.resources[r].initial;
                        verdict.resources.get(r).map_or(0, |report| {
                            report
                                .rows
                                .iter()
                                .map(|(row, value)| {
                                    let writes = report.increments.get(row).copied().unwrap_or(0);
                                    (initial + writes as i64 - value).max(0) as u64
                                })
                                .sum()
                        })
                    });
                    let writes = r
                        .and_then(|r| verdict.resources.get(r))
                        .map_or(0, |report| report.increments.values().sum());
                    InventoryNote {
                        defect: true,
                        this_run: Some(text::defect_in_this_run(
                            scenario,
                            &f.resource,
                            overlaps,
                            lost,
                            writes,
                        )),
                        resource: f.resource,
                        message: f.message,
                    }
                }
                _ => InventoryNote {
                    defect: false,
                    resource: f.resource,
                    message: f.message,
                    this_run: None,
                },
            })
            .collect();
        Outcome {
            seed: run.seed,
            end: run.end,
            digest: crate::trace::digest(&run.events),
            events: run.events,
            world: run.world,
            verdict,
            layout: Rc::new(layout),
            orders: Rc::new(orders),
            headline,
            inventory,
            capped_from,
            recorded,
        }
    }

    /// Who believes they hold what after the first `cursor` events, at time `at`.
    pub fn snapshot(&self, cursor: usize, at: Micros) -> Snapshot {
        let cursor = cursor.min(self.events.len());
        monitor::snapshot(&self.world, &self.events[..cursor], at)
    }

    /// The playhead time after the first `cursor` events: the time of the last of them.
    pub fn time_of(&self, cursor: usize) -> Micros {
        match cursor.min(self.events.len()) {
            0 => 0,
            k => self.events[k - 1].at,
        }
    }

    /// How many events have happened by time `t` (inclusive).
    pub fn cursor_at(&self, t: Micros) -> usize {
        self.events.partition_point(|e| e.at <= t)
    }
}

/// One finding of the inventory check, beside the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InventoryNote {
    pub defect: bool,
    pub resource: String,
    /// The check's own words.
    pub message: String,
    /// For a defect: what this run shows of it, so that a run that holds does not seem to
    /// contradict the finding.
    pub this_run: Option<String>,
}

impl InventoryNote {
    /// The finding as one text: "Defect at orders: ... In this run ...".
    pub fn text(&self) -> String {
        let head = format!(
            "{} at {}: {}.",
            if self.defect { "Defect" } else { "Warning" },
            self.resource,
            self.message
        );
        match &self.this_run {
            Some(run) => format!("{head} {run}"),
            None => head,
        }
    }
}

/// A second run with one toggle flipped.
#[derive(Debug)]
pub struct Comparison {
    pub toggle: Toggle,
    /// The words that name the flip, e.g. "fencing off at orders".
    pub label: String,
    pub result: Result<(Rc<Outcome>, Rc<Diff>), Vec<ScenarioError>>,
}

impl App {
    /// Runs a new valid scenario, keeping the playhead's time and the comparison's flip.
    /// Runs a scenario set other than by a toggle: it is a new starting point for the
    /// controls, whose values start afresh from it. An invalid one only shows its errors.
    pub(super) fn set_scenario(&mut self, scenario: Scenario) {
        if scenario.validate().is_ok() {
            self.base = scenario.clone();
            self.settings = Settings::default();
        }
        self.set_run(scenario);
    }

    /// Runs a scenario, keeping the controls' base and values as they are.
    pub(super) fn set_run(&mut self, scenario: Scenario) {
        // The text is settled either way: it ran, or it has errors to show.
        self.reading = false;
        match Outcome::compute(&scenario) {
            Ok(outcome) => {
                self.errors.clear();
                self.valid_text = self.text.clone();
                self.scenario = scenario;
                self.outcome = Rc::new(outcome);
                self.selected = None;
                self.selected_flipped = None;
                self.pinned = None;
                let t = self.time.min(self.outcome.end);
                self.seek(t);
                if let Some(c) = self.compare.take() {
                    // The flip is recomputed against the new scenario; a flip the new scenario
                    // no longer offers is dropped rather than guessed at.
                    let flips = toggles::flips(&self.scenario);
                    self.compare = flips
                        .into_iter()
                        .find(|(_, t)| *t == c.toggle)
                        .map(|(label, t)| self.comparison(t, label));
                }
            }
            Err(errors) => self.errors = errors,
        }
    }

    pub(super) fn comparison(&self, toggle: Toggle, label: String) -> Rc<Comparison> {
        let flipped = self.settings.with(toggle.clone()).apply(&self.base);
        let result = Outcome::compute(&flipped).map(|b| {
            let a = &self.outcome;
            let diff = Diff::of(&a.events, &b.events);
            (Rc::new(b), Rc::new(diff))
        });
        Rc::new(Comparison {
            toggle,
            label,
            result,
        })
    }
}
