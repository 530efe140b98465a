//! Checking a lesson against the engine: every claim of every step holds in that step's run,
//! every cue's event happens, every gate is unmet at its step's start and met by its intended
//! change, and every exercise fails at its start, passes with its solution, accepts no answer
//! that deadlocks or starves a class, and recognises each of its misconceptions. Problems are
//! authoring errors, reported at their lines. An answer an exercise accepts is also run in
//! [`EXTRA_SEEDS`] seeds it does not try, and one whose safety claims fail there is warned
//! about: the exercise passes it by luck. [`check_course`] looks across lessons: no two
//! exercises accept the same answer.

use crate::monitor::{self, Verdict};
use crate::scenario::{Scenario, ScenarioErrors};
use crate::sim::Run;
use crate::world::Micros;

use super::claim::{self, Claim, Metric, Op, Test};
use super::cue::shown_marks;
use super::edit::{allowed, apply_edits, Control, Edit};
use super::{Exercise, Failure, Lesson, LessonError, Step};

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
    /// meet a gate or pass an exercise but for the conditions against starvation and deadlock
    /// (found by trying the options of the allowed controls, and refused; an author may answer
    /// them with a misconception hint), narration over [`super::NARRATION_WORDS_NOTE`] words,
    /// and narration that tells its step's prediction before the learner makes it.
    pub notes: Vec<LessonError>,
    /// What the author should fix though the lesson still works: an answer an exercise
    /// accepts in its seeds whose safety claims fail in a seed it does not try, so that the
    /// exercise passes what the course teaches is wrong ([`EXTRA_SEEDS`]).
    pub warnings: Vec<LessonError>,
}

/// How many seeds beyond its own `lesson check` runs each answer an exercise accepts with: the
/// first this many from its lowest seed up that it does not try. An answer whose safety
/// claims ([`Claim::is_safety`]) fail in one of them passed by luck, and is warned about.
pub const EXTRA_SEEDS: usize = 32;

/// The most combinations of control values `lesson check` tries at one gate or exercise; past
/// it, each control's values are tried one at a time.
pub const COMBINATIONS_MAX: usize = 64;

/// The values each allowed control can take, as edits (the seed is left as it is: every
/// control value is tried with the place's own seeds).
fn control_values(s: &Scenario, controls: &[Control]) -> Vec<Vec<Vec<Edit>>> {
    use crate::scenario::{Fencing, FencingChecks, MigrationMode};
    use crate::toggles;
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
    crate::sorted::sort_by_key(&mut out.errors, |e| e.line);
    crate::sorted::sort_by_key(&mut out.notes, |e| e.line);
    crate::sorted::sort_by_key(&mut out.warnings, |e| e.line);
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
        if let [k] = right.as_slice() {
            if let Some(said) = super::telling::tells(&step.narration.markdown, &p.choices[*k]) {
                let line = if step.narration.markdown.is_empty() {
                    p.line
                } else {
                    step.narration.line
                };
                out.notes.push(LessonError {
                    line,
                    message: format!(
                        "the step's narration gives its prediction's answer away: it says \"{said}\", \
                         before the learner chooses \"{}\"; say what to watch, not what happens",
                        p.choices[*k].text
                    ),
                });
            }
        }
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

/// Whether a claim is [`claim::NO_CYCLE`] as an exercise's check states it (no seed prefix).
fn is_no_cycle(c: &Claim) -> bool {
    c.quantifier.is_none()
        && matches!(
            &c.test,
            Test::Compare { metric: Metric::Count("wait_cycle_count"), op: Op::Eq, value }
                if *value == 0.0
        )
}

/// The checks against deadlock and starvation that every exercise states: an answer that
/// fails only these would be accepted but for them, which `lesson check` notes.
fn is_guard(c: &Claim) -> bool {
    is_no_cycle(c)
        || c.quantifier.is_none() && matches!(c.test, Test::FairShare | Test::EveryClassWorks)
}

/// An answer's runs, one a seed, judged once: the check's failures as
/// [`Exercise::grade`] gives them, and the first seed in which a wait-for cycle formed or a
/// class got less than its fair share, whatever the check says.
struct Judged {
    failures: Vec<Failure>,
    harm: Option<String>,
}

fn judge_answer(x: &Exercise, s: &Scenario) -> Judged {
    let mut failures = Vec::new();
    let mut harm = None;
    for &seed in &x.seeds {
        let Ok((_, v)) = run_scenario(s, seed) else {
            failures.push(Failure {
                seed,
                claim: String::new(),
                actual: "the scenario is invalid".into(),
            });
            break;
        };
        for c in &x.check {
            let r = c.check(s, &v);
            if !r.holds {
                failures.push(Failure {
                    seed,
                    claim: c.text.clone(),
                    actual: r.actual,
                });
            }
        }
        if harm.is_none() {
            let fair = Test::FairShare.judge(s, &v);
            harm = if v.wait_cycle_count > 0 {
                Some(format!(
                    "with seed {seed}, {} wait-for cycle(s) formed",
                    v.wait_cycle_count
                ))
            } else if !fair.holds {
                Some(format!("with seed {seed}, {}", fair.actual))
            } else {
                None
            };
        }
    }
    Judged { failures, harm }
}

/// The change an answer makes from an exercise's start, in words: each control's edits that
/// change the start, as their lines of text, sorted. Two answers are the same answer when
/// these are equal, whatever edits restated the start on the way.
fn change_words(x: &Exercise, edits: &[Edit]) -> Vec<String> {
    let mut groups: Vec<(Control, Vec<Edit>)> = Vec::new();
    for e in edits {
        let c = Control::of(e);
        match groups.iter_mut().find(|(g, _)| *g == c) {
            Some((_, v)) => v.push(e.clone()),
            None => groups.push((c, vec![e.clone()])),
        }
    }
    let mut words: Vec<String> = groups
        .into_iter()
        .filter(|(_, g)| apply_edits(&x.scenario, g) != x.scenario)
        .flat_map(|(_, g)| g.into_iter().map(|e| e.to_string()))
        .collect();
    words.sort();
    words
}

/// Every answer an exercise accepts among the values of its controls ([`combinations`]), each
/// as the change it makes from the start ([`change_words`]), in the order tried.
pub fn accepted_answers(x: &Exercise) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for edits in combinations(&x.scenario, &x.controls) {
        let Ok(tried) = x.attempt(&edits) else {
            continue;
        };
        if judge_answer(x, &tried).failures.is_empty() {
            let words = change_words(x, &edits);
            if !out.contains(&words) {
                out.push(words);
            }
        }
    }
    out
}

/// Checks a course, lessons together: no two exercises (of one lesson or of two) accept the
/// same answer among the values of their controls, or one would only repeat the other's fix.
/// Each problem is given with the index of its lesson in `lessons`, at the later exercise.
pub fn check_course(lessons: &[Lesson]) -> Vec<(usize, LessonError)> {
    let mut out = Vec::new();
    let mut seen: Vec<(&Lesson, &Exercise, Vec<Vec<String>>)> = Vec::new();
    for (i, lesson) in lessons.iter().enumerate() {
        for x in &lesson.exercises {
            let accepted = accepted_answers(x);
            for (other, y, theirs) in &seen {
                let shared: Vec<&Vec<String>> =
                    accepted.iter().filter(|a| theirs.contains(a)).collect();
                let Some(first) = shared.first() else {
                    continue;
                };
                let more = match shared.len() - 1 {
                    0 => String::new(),
                    n => format!(" (and {n} more answer(s) besides)"),
                };
                out.push((
                    i,
                    LessonError {
                        line: x.line,
                        message: format!(
                            "exercise \"{}\" accepts [{}], which exercise \"{}\" of lesson \"{}\" \
                             accepts too{more}: each exercise needs an idea, and an answer, of its own",
                            x.id,
                            first.join(", "),
                            y.id,
                            other.id
                        ),
                    },
                ));
            }
            seen.push((lesson, x, accepted));
        }
    }
    out
}

fn check_exercise(x: &Exercise, out: &mut Checked) {
    out.claims += x.check.len() * x.seeds.len();
    if x.idea.is_empty() {
        error(
            out,
            x.line,
            format!(
                "exercise \"{}\" needs an idea: idea = \"...\", one sentence of what it teaches \
                 that no other exercise does",
                x.id
            ),
        );
    }
    let missing: Vec<&str> = [
        (claim::NO_CYCLE, x.check.iter().any(is_no_cycle)),
        (
            claim::FAIR_SHARE,
            x.check
                .iter()
                .any(|c| c.quantifier.is_none() && c.test == Test::FairShare),
        ),
    ]
    .into_iter()
    .filter(|(_, stated)| !stated)
    .map(|(text, _)| text)
    .collect();
    if !missing.is_empty() {
        let line = x.check.first().map_or(x.line, |c| c.line);
        let lacks = match missing.as_slice() {
            [one] => format!("it lacks \"{one}\""),
            _ => "it states neither".to_string(),
        };
        error(
            out,
            line,
            format!(
                "exercise \"{}\": its check must include \"{}\" and \"{}\" ({lacks}), and its \
                 goal must say so: an answer that deadlocks or starves a class is no answer",
                x.id,
                claim::NO_CYCLE,
                claim::FAIR_SHARE,
            ),
        );
    }
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
                crate::lesson::seeds_words(&x.seeds),
                holds.join("; ")
            ),
        );
        return;
    }
    // The answers the check accepts in the exercise's seeds, with neither a cycle nor a class
    // starved: each is then tried in more seeds, for luck.
    let mut accepted: Vec<Accepted> = Vec::new();
    let answers = std::iter::once(("solution", &x.solution))
        .chain(x.alternatives.iter().map(|a| ("alternative solution", a)));
    for (what, edits) in answers {
        let shown: Vec<String> = edits.iter().map(|e| e.to_string()).collect();
        match x.attempt(edits) {
            Ok(solved) => {
                let g = judge_answer(x, &solved);
                if g.failures.is_empty() && g.harm.is_none() {
                    accepted.push(Accepted {
                        what: Some(what),
                        edits: edits.clone(),
                        scenario: solved,
                    });
                }
                if let (true, Some(harm)) = (g.failures.is_empty(), &g.harm) {
                    error(
                        out,
                        x.line,
                        format!(
                            "exercise \"{}\": its {what} [{}] passes the check, but {harm}: an \
                             answer that deadlocks or starves a class is no answer",
                            x.id,
                            shown.join(", ")
                        ),
                    );
                }
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
    // Try what the learner can do: an answer the check accepts must neither deadlock nor
    // starve a class (impossible when the check states both, as it must, but the check
    // above may be missing them), and an answer refused only by those conditions is noted,
    // for a misconception hint.
    for edits in combinations(&x.scenario, &x.controls) {
        let Ok(tried) = x.attempt(&edits) else {
            continue;
        };
        let g = judge_answer(x, &tried);
        if g.failures.is_empty() {
            match &g.harm {
                Some(harm) => error(
                    out,
                    x.line,
                    format!(
                        "exercise \"{}\" accepts [{}], but {harm}: an answer that deadlocks or \
                         starves a class is no answer",
                        x.id,
                        edits_words(&edits)
                    ),
                ),
                None => accepted.push(Accepted {
                    what: None,
                    edits,
                    scenario: tried,
                }),
            }
            continue;
        }
        // Which guards refused it, by their claims: work and fair share are the work
        // condition, as a gate's note says; the other is the one against wait-for cycles.
        let guards: Option<Vec<bool>> = g
            .failures
            .iter()
            .map(|f| {
                x.check
                    .iter()
                    .find(|c| c.text == f.claim && is_guard(c))
                    .map(is_no_cycle)
            })
            .collect();
        if let Some(cycles) = guards {
            let which = if cycles.iter().all(|c| !c) {
                "the work condition"
            } else if cycles.iter().all(|c| *c) {
                "the condition against wait-for cycles"
            } else {
                "the conditions against wait-for cycles and starvation"
            };
            // The plainest failure to read: a class that completed nothing, if one did.
            let f = g
                .failures
                .iter()
                .find(|f| f.claim == claim::WORK)
                .unwrap_or(&g.failures[0]);
            out.notes.push(LessonError {
                line: x.line,
                message: format!(
                    "exercise \"{}\" would accept [{}] but for {which}: with seed {}, {}",
                    x.id,
                    edits_words(&edits),
                    f.seed,
                    f.actual
                ),
            });
        }
    }
    warn_lucky(x, &accepted, out);
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

/// An answer an exercise accepts in its own seeds: its solution or an alternative (`what`), or
/// a value of its controls (`None`), with the scenario it gives.
struct Accepted {
    what: Option<&'static str>,
    edits: Vec<Edit>,
    scenario: Scenario,
}

/// The seeds an exercise does not try that `lesson check` tries its answers with: the first
/// [`EXTRA_SEEDS`] from its lowest seed up.
pub fn extra_seeds(seeds: &[u64]) -> Vec<u64> {
    let from = seeds.iter().copied().min().unwrap_or(0);
    (from..=u64::MAX)
        .filter(|s| !seeds.contains(s))
        .take(EXTRA_SEEDS)
        .collect()
}

/// The first of `seeds` in which one of the check's safety claims fails for a scenario: the
/// seed, the claim as written, and what the run showed.
fn breaks_in(x: &Exercise, s: &Scenario, seeds: &[u64]) -> Option<(u64, String, String)> {
    let safety: Vec<&Claim> = x.check.iter().filter(|c| c.is_safety()).collect();
    if safety.is_empty() {
        return None;
    }
    seeds.iter().find_map(|&seed| {
        let (_, v) = run_scenario(s, seed).ok()?;
        safety.iter().find_map(|c| {
            let r = c.test.judge(s, &v);
            (!r.holds).then(|| (seed, c.text.clone(), r.actual))
        })
    })
}

/// Seeds as the `seeds` field writes them: a range when they follow one another, else a list.
fn seeds_field(seeds: &[u64]) -> String {
    let text = crate::lesson::seeds_text(seeds);
    if seeds.len() > 1 && text.contains("..") {
        format!("seeds = \"{text}\"")
    } else {
        format!("seeds = [{text}]")
    }
}

/// Warns of each answer an exercise accepts in its seeds whose safety claims fail in a seed it
/// does not try: the check passes it by luck, and a learner would be told that what the course
/// teaches is wrong is right. Each answer is named once, the solution's words first.
fn warn_lucky(x: &Exercise, accepted: &[Accepted], out: &mut Checked) {
    let extra = extra_seeds(&x.seeds);
    let mut seen: Vec<Vec<String>> = Vec::new();
    for a in accepted {
        let change = change_words(x, &a.edits);
        if seen.contains(&change) {
            continue;
        }
        seen.push(change);
        let Some((seed, claim, actual)) = breaks_in(x, &a.scenario, &extra) else {
            continue;
        };
        let tried = crate::lesson::seeds_words(&x.seeds);
        let broken = format!("with seed {seed} the check \"{claim}\" fails ({actual})");
        let message = match a.what {
            Some(what) => format!(
                "exercise \"{}\": its {what} [{}] passes the check in {tried}, but {broken}: \
                 an answer the lesson gives must be safe beyond the seeds it tries; change the \
                 answer, or the scenario",
                x.id,
                edits_words(&a.edits)
            ),
            None => {
                let mut seeds = x.seeds.clone();
                let fix = if seeds.len() < super::SEEDS_MAX {
                    seeds.push(seed);
                    seeds.sort_unstable();
                    seeds.dedup();
                    format!("add seed {seed} to its seeds ({})", seeds_field(&seeds))
                } else {
                    format!(
                        "put seed {seed} in place of one of its seeds (an exercise runs at most \
                         {})",
                        super::SEEDS_MAX
                    )
                };
                format!(
                    "exercise \"{}\" accepts [{}] in {tried}, but {broken}, so it passes by \
                     luck: {fix} and the check refuses it",
                    x.id,
                    edits_words(&a.edits)
                )
            }
        };
        out.warnings.push(LessonError {
            line: x.line,
            message,
        });
    }
}
