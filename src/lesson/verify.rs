//! Checking a lesson against the engine: every claim of every step holds in that step's run,
//! every cue's event happens, every gate is unmet at its step's start and met by its intended
//! change, and every exercise fails at its start, passes with its solution and recognises
//! each of its misconceptions. Problems are authoring errors, reported at their lines.

use crate::monitor::{self, Verdict};
use crate::scenario::{Scenario, ScenarioErrors};
use crate::sim::Run;

use super::cue::cue_marks;
use super::edit::{allowed, apply_edits, Control};
use super::{Exercise, Lesson, LessonError, Step};

/// Runs a scenario with a seed and computes its verdict.
pub fn run_scenario(s: &Scenario, seed: u64) -> Result<(Run, Verdict), ScenarioErrors> {
    let run = crate::sim::run(s, seed)?;
    let verdict = monitor::verdict(&run);
    Ok((run, verdict))
}

/// What checking a lesson found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Authoring errors, by line.
    pub errors: Vec<LessonError>,
    /// How many claims (of steps and gates) and exercise checks were judged.
    pub claims: usize,
}

/// Checks a parsed lesson against the engine.
pub fn check(lesson: &Lesson) -> Checked {
    let mut out = Checked::default();
    for step in &lesson.steps {
        check_step(step, &mut out);
    }
    for exercise in &lesson.exercises {
        check_exercise(exercise, &mut out);
    }
    out.errors.sort_by_key(|e| e.line);
    out
}

fn error(out: &mut Checked, line: u32, message: impl Into<String>) {
    out.errors.push(LessonError {
        line,
        message: message.into(),
    });
}

fn check_step(step: &Step, out: &mut Checked) {
    let s = &step.scenario;
    let (run, verdict) = match run_scenario(s, s.seed) {
        Ok(x) => x,
        Err(e) => {
            error(
                out,
                step.line,
                format!("the step's scenario does not run: {e}"),
            );
            return;
        }
    };
    for claim in &step.claims {
        out.claims += 1;
        let r = claim.check(s, &verdict);
        if !r.holds {
            error(
                out,
                claim.line,
                format!(
                    "the engine contradicts the claim \"{}\": {}",
                    claim.text, r.actual
                ),
            );
        }
    }
    let marks = cue_marks(&step.cues, &run.world, &run.events, &verdict);
    for (cue, mark) in step.cues.iter().zip(&marks) {
        if mark.is_none() {
            error(
                out,
                cue.line,
                format!(
                    "the cue's event ({}) never happens in the step's run",
                    cue.when.event
                ),
            );
        }
    }
    let Some(gate) = &step.gate else {
        return;
    };
    out.claims += gate.when.len();
    if gate.met(s, &verdict) {
        let shown: Vec<String> = gate
            .when
            .iter()
            .map(|c| c.check(s, &verdict).actual)
            .collect();
        error(
            out,
            gate.line,
            format!(
                "the gate is already met at the step's start: {}",
                shown.join("; ")
            ),
        );
    }
    for e in &gate.intended {
        if !allowed(&step.controls, e) {
            error(
                out,
                gate.line,
                format!(
                    "the intended change \"{e}\" needs the control \"{}\", which the step does \
                     not offer",
                    Control::of(e)
                ),
            );
        }
    }
    let changed = apply_edits(s, &gate.intended);
    match run_scenario(&changed, changed.seed) {
        Ok((_, v)) => {
            for c in &gate.when {
                let r = c.check(&changed, &v);
                if !r.holds {
                    error(
                        out,
                        c.line,
                        format!(
                            "the gate's intended change does not meet \"{}\": {}",
                            c.text, r.actual
                        ),
                    );
                }
            }
        }
        Err(e) => error(
            out,
            gate.line,
            format!("the gate's intended change makes the scenario invalid: {e}"),
        ),
    }
}

fn check_exercise(x: &Exercise, out: &mut Checked) {
    out.claims += x.check.len() * x.seeds.len();
    let start = x.grade(&x.scenario);
    if start.passed {
        error(
            out,
            x.line,
            format!(
                "exercise \"{}\": its start already passes the check, so there is nothing to do",
                x.id
            ),
        );
    }
    let answers = std::iter::once(("solution", &x.solution))
        .chain(x.alternatives.iter().map(|a| ("alternative solution", a)));
    for (what, edits) in answers {
        let shown: Vec<String> = edits.iter().map(|e| e.to_string()).collect();
        match x.attempt(edits) {
            Ok(solved) => {
                let g = x.grade(&solved);
                if let Some(f) = g.failures.first() {
                    error(
                        out,
                        x.line,
                        format!(
                            "exercise \"{}\": its {what} [{}] fails the check \"{}\" with seed \
                             {}: {}",
                            x.id,
                            shown.join(", "),
                            f.claim,
                            f.seed,
                            f.actual
                        ),
                    );
                }
            }
            Err(why) => error(
                out,
                x.line,
                format!("exercise \"{}\": its {what}: {why}", x.id),
            ),
        }
    }
    for (i, m) in x.misconceptions.iter().enumerate() {
        if m.matches(&x.scenario) {
            error(
                out,
                m.line,
                "the misconception already matches the exercise's start, so its hint would \
                 answer a learner who has not tried anything",
            );
        }
        let tried = match x.attempt(&m.example) {
            Ok(s) => s,
            Err(why) => {
                error(out, m.line, format!("the misconception's example: {why}"));
                continue;
            }
        };
        let g = x.grade(&tried);
        if g.passed {
            error(
                out,
                m.line,
                "the misconception's example passes the check: it is not a mistake",
            );
        } else if g.misconception != Some(i) {
            let which = match g.misconception {
                Some(j) => format!(
                    "it triggers the hint of the misconception at line {} instead",
                    x.misconceptions[j].line
                ),
                None => "its conditions do not match its own example".to_string(),
            };
            error(
                out,
                m.line,
                format!("the misconception's example does not trigger its hint: {which}"),
            );
        }
    }
}
