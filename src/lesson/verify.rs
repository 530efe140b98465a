//! Checking a lesson against the engine: every claim of every step holds in that step's run,
//! every cue's event happens, every gate is unmet at its step's start and met by its intended
//! change, and every exercise fails at its start, passes with its solution and recognises
//! each of its misconceptions. Problems are authoring errors, reported at their lines.

use crate::monitor::{self, Verdict};
use crate::scenario::{Scenario, ScenarioErrors};
use crate::sim::Run;
use crate::world::Micros;

use super::cue::shown_marks;
use super::edit::{allowed, apply_edits, Control, Edit};
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
    /// What is worth an author's look but is no error: changes the learner can make that would
    /// meet a gate or pass an exercise but for the work condition, because they starve a client
    /// class (found by trying the options of the allowed controls, and refused; an author may
    /// answer them with a misconception hint), and narration over
    /// [`super::NARRATION_WORDS_NOTE`] words.
    pub notes: Vec<LessonError>,
}

/// The most combinations of control values `lesson check` tries at one gate or exercise; past
/// it, each control's values are tried one at a time.
pub const COMBINATIONS_MAX: usize = 64;

/// The values each allowed control can take, as edits (the seed is left as it is: every
/// control value is tried with the place's own seeds).
fn control_values(s: &Scenario, controls: &[Control]) -> Vec<Vec<Vec<Edit>>> {
    use crate::scenario::{Fencing, FencingChecks, MigrationMode};
    use crate::ui::toggles;
    let mut out = Vec::new();
    for c in controls {
        let values: Vec<Vec<Edit>> = match c {
            Control::Protocol(class) => toggles::protocol_options(s)
                .into_iter()
                .map(|o| {
                    vec![Edit::Protocol {
                        class: class.clone(),
                        choice: o.value,
                    }]
                })
                .collect(),
            Control::Fencing(resource) => {
                let mut v = vec![vec![Edit::Fencing {
                    resource: resource.clone(),
                    mode: Fencing::Off,
                    checks: None,
                }]];
                for mode in [Fencing::AnySource, Fencing::OneSource] {
                    for checks in [FencingChecks::Writes, FencingChecks::AllAccesses] {
                        v.push(vec![Edit::Fencing {
                            resource: resource.clone(),
                            mode,
                            checks: Some(checks),
                        }]);
                    }
                }
                v
            }
            Control::Role(service) => toggles::role_options(s, service)
                .into_iter()
                .map(|o| {
                    vec![Edit::Role {
                        service: service.clone(),
                        authority: o.value.strip_prefix("subordinate:").map(str::to_string),
                    }]
                })
                .collect(),
            Control::Outage(service) => [true, false]
                .map(|on| {
                    vec![Edit::Outage {
                        service: service.clone(),
                        on,
                    }]
                })
                .to_vec(),
            Control::Partition => [true, false].map(|on| vec![Edit::Partition(on)]).to_vec(),
            Control::Pause => [true, false].map(|on| vec![Edit::Pause(on)]).to_vec(),
            Control::Migration => {
                let mut v = vec![vec![Edit::Migration(false)]];
                for mode in [
                    MigrationMode::Naive,
                    MigrationMode::Drain,
                    MigrationMode::Transfer,
                ] {
                    v.push(vec![Edit::Migration(true), Edit::MigrationMode(mode)]);
                }
                v
            }
            Control::Seed => continue,
        };
        out.push(values);
    }
    out
}

/// Every combination of the allowed controls' values, or, when there are more than
/// [`COMBINATIONS_MAX`], each value of each control alone.
pub fn combinations(s: &Scenario, controls: &[Control]) -> Vec<Vec<Edit>> {
    let values = control_values(s, controls);
    let product = values
        .iter()
        .try_fold(1usize, |n, v| n.checked_mul(v.len().max(1)));
    if product.is_some_and(|n| n <= COMBINATIONS_MAX) {
        let mut out: Vec<Vec<Edit>> = vec![Vec::new()];
        for v in &values {
            out = out
                .iter()
                .flat_map(|prefix| {
                    v.iter().map(move |x| {
                        let mut e = prefix.clone();
                        e.extend(x.iter().cloned());
                        e
                    })
                })
                .collect();
        }
        out
    } else {
        values.into_iter().flatten().collect()
    }
}

fn edits_words(edits: &[Edit]) -> String {
    edits
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(", ")
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
    crate::sort::sort_by_key(&mut out.errors, |e| e.line);
    crate::sort::sort_by_key(&mut out.notes, |e| e.line);
    out
}

fn error(out: &mut Checked, line: u32, message: impl Into<String>) {
    out.errors.push(LessonError {
        line,
        message: message.into(),
    });
}

/// The words of a narration, as a reader counts them: runs of letters or digits.
pub fn word_count(markdown: &str) -> usize {
    markdown
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

fn check_step(step: &Step, out: &mut Checked) {
    let s = &step.scenario;
    let words = word_count(&step.narration.markdown);
    if words > super::NARRATION_WORDS_MAX {
        error(
            out,
            step.line,
            format!(
                "the step's narration has {words} words, more than {}: one idea a step, and what \
                 happens at a moment of the run goes into a cue",
                super::NARRATION_WORDS_MAX
            ),
        );
    } else if words > super::NARRATION_WORDS_NOTE {
        out.notes.push(LessonError {
            line: step.line,
            message: format!(
                "the step's narration has {words} words; aim for at most {}, moving what happens \
                 at a moment of the run into a cue",
                super::NARRATION_WORDS_NOTE
            ),
        });
    }
    // A step that shows a recording is checked against the recording: the run the page shows.
    let simulated;
    let (world, events, verdict) = match &step.recording {
        Some(r) => (&r.run.world, &r.run.events, monitor::verdict(&*r.run)),
        None => {
            let verdict;
            (simulated, verdict) = match run_scenario(s, s.seed) {
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
            (&simulated.world, &simulated.events, verdict)
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
                    "the {} contradicts the claim \"{}\": {}",
                    if step.recording.is_some() {
                        "recording"
                    } else {
                        "engine"
                    },
                    claim.text,
                    r.actual
                ),
            );
        }
    }
    let marks = shown_marks(&step.cues, s, world, events, &verdict);
    for (cue, mark) in step.cues.iter().zip(&marks) {
        if mark.is_none() {
            error(
                out,
                cue.line,
                if cue.given.iter().all(|g| g.holds(s)) {
                    format!(
                        "the cue's event ({}) never happens in the step's run{}",
                        cue.when.event,
                        if step.recording.is_some() {
                            " (its recording)"
                        } else {
                            ""
                        }
                    )
                } else {
                    "the cue's conditions (given) do not hold of the step's scenario, so it \
                     never shows there"
                        .to_string()
                },
            );
        }
    }
    // The cues read as a story in the order they are written; in the step's own run they
    // must appear in that order too, or the page shows them reading backwards.
    let mut last: Option<(Micros, usize, &super::Cue)> = None;
    for (cue, mark) in step.cues.iter().zip(&marks) {
        let Some(m) = mark else { continue };
        let at = (m.at, m.event.unwrap_or(usize::MAX));
        if let Some((t, i, before)) = last {
            if at < (t, i) {
                error(
                    out,
                    cue.line,
                    format!(
                        "the cue's event happens at {} ms, before the event of the cue at line {} \
                         ({} ms): list the cues in the order their events happen",
                        m.at / 1000,
                        before.line,
                        t / 1000
                    ),
                );
            }
        }
        last = Some((at.0, at.1, cue));
    }
    if let Some(sw) = &step.sweep {
        if let Err(e) = sw.run(s) {
            error(out, sw.line, format!("the sweep does not run: {e}"));
        }
    }
    if let Some(p) = &step.prediction {
        out.claims += p.choices.len();
        let right = p.right(s, &verdict);
        if right.len() != 1 {
            let which: Vec<&str> = right.iter().map(|&k| p.choices[k].text.as_str()).collect();
            error(
                out,
                p.line,
                format!(
                    "exactly one choice of a prediction must be right in the step's run, but {} \
                     are{}",
                    right.len(),
                    if which.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", which.join("; "))
                    }
                ),
            );
        }
    }
    let Some(gate) = &step.gate else {
        return;
    };
    for (i, m) in gate.misconceptions.iter().enumerate() {
        if m.matches(s) {
            error(
                out,
                m.line,
                "the misconception already matches the step's start, so its hint would answer a \
                 learner who has not tried anything",
            );
        }
        if let Some(e) = m.example.iter().find(|e| !allowed(&step.controls, e)) {
            error(
                out,
                m.line,
                format!(
                    "the misconception's example \"{e}\" needs the control \"{}\", which the \
                     step does not offer",
                    Control::of(e)
                ),
            );
            continue;
        }
        let tried = apply_edits(s, &m.example);
        let Ok((_, v)) = run_scenario(&tried, tried.seed) else {
            error(
                out,
                m.line,
                "the misconception's example makes the scenario invalid",
            );
            continue;
        };
        if gate.met(&tried, &v) {
            error(
                out,
                m.line,
                "the misconception's example meets the gate: it is not a mistake",
            );
        } else if gate.misconception(&tried) != Some(i) {
            error(
                out,
                m.line,
                "the misconception's example does not trigger its own hint",
            );
        }
    }
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
    // Try what the learner can do: every message must be said for some change, and every
    // change the gate would accept but for the work condition is listed.
    let mut said = vec![false; gate.messages.len()];
    for edits in combinations(s, &step.controls) {
        let tried = apply_edits(s, &edits);
        let Ok((_, v)) = run_scenario(&tried, tried.seed) else {
            continue;
        };
        let (work, rest): (Vec<_>, Vec<_>) = gate
            .when
            .iter()
            .partition(|c| c.test == super::claim::Test::EveryClassWorks);
        if !rest.iter().all(|c| c.check(&tried, &v).holds) {
            continue;
        }
        match work.iter().map(|c| c.check(&tried, &v)).find(|r| !r.holds) {
            Some(r) => out.notes.push(LessonError {
                line: gate.line,
                message: format!(
                    "the gate would accept [{}] but for the work condition: {}",
                    edits_words(&edits),
                    r.actual
                ),
            }),
            None => {
                if let Some(k) = gate.message_index(&tried, &v) {
                    said[k] = true;
                }
            }
        }
    }
    for (m, said) in gate.messages.iter().zip(said) {
        if !said {
            error(
                out,
                m.line,
                "no change the step's controls allow meets the gate with this message's \
                 conditions, so it is never said",
            );
        }
    }
}

fn check_exercise(x: &Exercise, out: &mut Checked) {
    out.claims += x.check.len() * x.seeds.len();
    let start = x.grade(&x.scenario);
    if start.passed {
        // The cause, where the author will change it (the check's first line), naming what
        // already holds; the other checks of this exercise would only follow from it.
        let line = x.check.first().map_or(x.line, |c| c.line);
        let holds: Vec<String> = x.check.iter().map(|c| c.words()).collect();
        error(
            out,
            line,
            format!(
                "exercise \"{}\": its start already passes the check in {} ({}), so there is \
                 nothing to do: change the check or the start's edits",
                x.id,
                crate::ui::course::seeds_words(&x.seeds),
                holds.join("; ")
            ),
        );
        return;
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
    for edits in combinations(&x.scenario, &x.controls) {
        let Ok(tried) = x.attempt(&edits) else {
            continue;
        };
        let g = x.grade(&tried);
        let only_work = !g.failures.is_empty()
            && g.failures.iter().all(|f| {
                x.check
                    .iter()
                    .any(|c| c.text == f.claim && c.test == super::claim::Test::EveryClassWorks)
            });
        if only_work {
            let f = &g.failures[0];
            out.notes.push(LessonError {
                line: x.line,
                message: format!(
                    "exercise \"{}\" would accept [{}] but for the work condition: with seed {}, \
                     {}",
                    x.id,
                    edits_words(&edits),
                    f.seed,
                    f.actual
                ),
            });
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
