//! Lessons: Markdown files that walk a learner through the argument, step by step, with every
//! statement about an outcome checked by the engine.
//!
//! A lesson file is Markdown with a TOML header between `+++` lines and fenced TOML blocks
//! (` ```step `, ` ```cues `, ` ```claims `, ` ```gate `, ` ```exercise `) that set up each step's
//! scenario and say what the run shows. `docs/lessons.md` is the format's reference.
//!
//! Everything here is pure, like the rest of the core: [`parse`] reads a text, the claims, gates
//! and exercises run the engine, and nothing does I/O or reads a clock, so the app (in wasm)
//! and the command line (`lockstep lesson check`) use the same functions.
//!
//! - [`parse`] reads a lesson and builds every scenario it sets up (no run);
//!   [`check`] runs them and reports every authoring error with its line.
//! - [`Step`]: narration, scenario, allowed [`Control`]s, [`Highlight`]s, [`Cue`]s
//!   ([`cues_at`] follows the playhead), [`Claim`]s and an optional [`Gate`].
//! - [`Exercise`]: a goal, a check over several seeds ([`Exercise::grade`]), hints, a
//!   solution and [`Misconception`]s.
//! - [`code`]: completion codes that encode a learner's edits and are verified by re-running.
//! - [`narration`]: Markdown narration as a small tree with no raw HTML, or escaped HTML.
//! - [`edit`]: the edits a step or a learner makes, the same as the app's toggles.

pub mod claim;
pub mod code;
pub mod cue;
pub mod edit;
pub mod narration;
mod parse;
pub mod roster;
mod telling;
mod verify;
pub mod wire;

use crate::monitor::Verdict;
use crate::scenario::Scenario;

pub use claim::{Claim, ClaimResult, Condition};
pub use cue::{cue_marks, cues_at, highlighted_events, Cue, EventPattern, Highlight, LaneRef};
pub use edit::{apply_edits, apply_patches, Control, Edit, Patch};
pub use narration::Narration;
pub use parse::parse;
pub use verify::{
    accepted_answers, check, check_course, extra_seeds, run_scenario, word_count, Checked,
    EXTRA_SEEDS,
};

/// The largest lesson file read: 256 KiB. A lesson is prose and a few TOML blocks; this bound
/// keeps parsing, and anything built from a pasted file, small.
pub const LESSON_BYTES_MAX: usize = 256 * 1024;
/// The most steps in one lesson.
pub const STEPS_MAX: usize = 32;
/// The most exercises in one lesson.
pub const EXERCISES_MAX: usize = 16;
/// The most seeds an exercise or a quantified claim runs.
pub const SEEDS_MAX: usize = 32;
/// The most cues, claims, edits, hints or misconceptions in one step or exercise.
pub const ITEMS_MAX: usize = 64;
/// A step's narration above this many words draws a note from `lesson check`: one idea a
/// step, the rest said by cues as the run reaches each moment.
pub const NARRATION_WORDS_NOTE: usize = 60;
/// A step's narration above this many words is an authoring error.
pub const NARRATION_WORDS_MAX: usize = 90;
/// The most choices a prediction offers.
pub const CHOICES_MAX: usize = 6;
/// The claims of the product brief that lessons can cover.
pub const DESIGN_CLAIMS: std::ops::RangeInclusive<u8> = 1..=11;

/// A problem in a lesson file, at a line (counted from 1 in the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LessonError {
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for LessonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// A parsed lesson. Every scenario in it has been built and validated.
#[derive(Clone, Debug)]
pub struct Lesson {
    /// A short name, used in links (`#/lessons/<id>/<step>`) and completion codes.
    pub id: String,
    pub title: String,
    /// Where the lesson goes in the course (lower first).
    pub order: u32,
    /// The claims of the product brief (1 to 11) that the lesson demonstrates.
    pub claims: Vec<u8>,
    /// One sentence for the course view.
    pub summary: String,
    /// The prose before the first step.
    pub intro: Narration,
    pub steps: Vec<Step>,
    pub exercises: Vec<Exercise>,
}

impl Lesson {
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    pub fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises.iter().find(|e| e.id == id)
    }
}

/// Where a scenario comes from: a shipped scenario, with changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// The shipped scenario's file name under `lessons/scenarios/`.
    pub file: String,
    /// Field changes and additions the author makes (controls need not offer them).
    pub patches: Vec<Patch>,
    /// Edits as a learner's controls would make them, applied after the patches.
    pub edits: Vec<Edit>,
}

/// One step of a lesson: a scenario to run, what to say about it and what it shows.
#[derive(Clone, Debug)]
pub struct Step {
    pub id: String,
    pub title: String,
    /// The line of the step's block.
    pub line: u32,
    pub setup: Setup,
    /// The scenario the step runs: the setup applied, validated.
    pub scenario: Scenario,
    /// The controls the learner may touch in this step (none: the run is only watched).
    pub controls: Vec<Control>,
    pub highlight: Highlight,
    /// The conditions under which the step's claims hold ("every client follows the order").
    pub assumptions: Vec<String>,
    pub narration: Narration,
    pub cues: Vec<Cue>,
    pub claims: Vec<Claim>,
    pub gate: Option<Gate>,
    /// A question the learner may answer before the run plays.
    pub prediction: Option<Prediction>,
    /// A sweep drawn beside the step: how often exclusion breaks as one parameter varies.
    pub sweep: Option<StepSweep>,
    /// A run recorded on real services, shown instead of a simulated one: its claims and cues
    /// are checked against the recording. Such a step offers no controls, no gate, no sweep and
    /// no claim over seeds, since nothing can run a recording again.
    pub recording: Option<StepRecording>,
}

/// A step's recording: the shipped file (under `lessons/recordings/`) and the run read from it.
#[derive(Clone, Debug)]
pub struct StepRecording {
    pub file: String,
    pub run: std::sync::Arc<crate::recording::Recording>,
}

/// A sweep a step draws, as `lockstep sweep` runs it: the step's scenario with one parameter
/// set to each value, over seeds `0..seeds`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSweep {
    pub line: u32,
    pub param: crate::sweep::Param,
    pub values: Vec<u64>,
    pub seeds: u64,
    /// What the figure shows, in a sentence.
    pub caption: String,
}

impl StepSweep {
    /// Runs the sweep over the step's scenario.
    pub fn run(
        &self,
        scenario: &Scenario,
    ) -> Result<Vec<crate::sweep::SweepPoint>, crate::scenario::ScenarioErrors> {
        crate::sweep::sweep(scenario, self.param, &self.values, self.seeds)
    }
}

/// A question about a step's run, asked before it plays: each choice is a claim, and the run
/// decides which is right ("Will both clients be inside at once?").
#[derive(Clone, Debug)]
pub struct Prediction {
    pub line: u32,
    pub question: String,
    pub choices: Vec<PredictionChoice>,
    /// Said after the answer is revealed, right or wrong.
    pub why: String,
}

#[derive(Clone, Debug)]
pub struct PredictionChoice {
    /// The choice as the learner reads it.
    pub text: String,
    /// What the run shows if this choice is right.
    pub claim: Claim,
}

impl Prediction {
    /// The choices whose claims hold of a run: exactly one, in a lesson that checks.
    pub fn right(&self, scenario: &Scenario, verdict: &Verdict) -> Vec<usize> {
        self.choices
            .iter()
            .enumerate()
            .filter(|(_, c)| c.claim.check(scenario, verdict).holds)
            .map(|(k, _)| k)
            .collect()
    }
}

/// A condition the learner's own run must meet before the lesson goes on.
#[derive(Clone, Debug)]
pub struct Gate {
    pub line: u32,
    /// What the learner is asked to do.
    pub prompt: String,
    /// What is said once the condition holds.
    pub passed: String,
    /// The conditions, all judged from the learner's run (never from which control was used).
    /// Every gate includes [`claim::WORK`]: a change that starves a class meets no gate.
    pub when: Vec<Claim>,
    /// A change that meets it, from the step's scenario: checked by `lesson check`.
    pub intended: Vec<Edit>,
    /// Messages for particular ways of meeting the gate, each said instead of `passed` when
    /// its own conditions hold of the learner's run too; the first that holds is said.
    pub messages: Vec<GateMessage>,
    /// Known wrong approaches, answered with a hint while the gate is not met.
    pub misconceptions: Vec<Misconception>,
}

/// A message said when a gate is met in one particular way, as the run shows it.
#[derive(Clone, Debug)]
pub struct GateMessage {
    pub line: u32,
    /// Claims about the learner's run, all of which must hold.
    pub when: Vec<Claim>,
    /// Conditions on the learner's scenario, all of which must hold too.
    pub given: Vec<Condition>,
    pub text: String,
}

impl Gate {
    /// The gate's conditions the learner's run does not meet, each with what the run showed
    /// instead: the one judgement of a gate, which `lesson check` ([`Gate::met`]) and the page
    /// (`ui::course`, what it says of the run) both read.
    pub fn unmet<'a>(&'a self, scenario: &Scenario, verdict: &Verdict) -> Vec<(&'a Claim, String)> {
        self.when
            .iter()
            .filter_map(|c| {
                let r = c.check(scenario, verdict);
                (!r.holds).then_some((c, r.actual))
            })
            .collect()
    }

    /// Whether the learner's run meets the gate: no condition is unmet.
    pub fn met(&self, scenario: &Scenario, verdict: &Verdict) -> bool {
        self.unmet(scenario, verdict).is_empty()
    }

    /// What to say of a run that meets the gate: the first message whose conditions the run
    /// shows, or the gate's own `passed`.
    pub fn message(&self, scenario: &Scenario, verdict: &Verdict) -> &str {
        self.message_index(scenario, verdict)
            .map_or(self.passed.as_str(), |k| self.messages[k].text.as_str())
    }

    /// The first misconception the learner's scenario matches.
    pub fn misconception(&self, scenario: &Scenario) -> Option<usize> {
        self.misconceptions.iter().position(|m| m.matches(scenario))
    }

    /// The index of the message [`Gate::message`] says, if it is not `passed`.
    pub fn message_index(&self, scenario: &Scenario, verdict: &Verdict) -> Option<usize> {
        self.messages.iter().position(|m| {
            m.given.iter().all(|c| c.holds(scenario))
                && m.when.iter().all(|c| c.check(scenario, verdict).holds)
        })
    }
}

/// An exercise: a goal, the controls to reach it with, and a check the engine evaluates.
#[derive(Clone, Debug)]
pub struct Exercise {
    pub id: String,
    pub title: String,
    pub line: u32,
    /// The goal, as stated to the learner.
    pub goal: String,
    /// What the exercise teaches, in one sentence for authors (never shown to the learner):
    /// `lesson check` requires one, and refuses two exercises of a course that accept the same
    /// answer, so each exercise practises an idea of its own rather than repeating another's
    /// fix.
    pub idea: String,
    pub narration: Narration,
    pub setup: Setup,
    /// The starting scenario.
    pub scenario: Scenario,
    pub controls: Vec<Control>,
    /// Every check must hold for every one of these seeds.
    pub seeds: Vec<u64>,
    pub check: Vec<Claim>,
    /// Revealed one at a time.
    pub hints: Vec<String>,
    /// One correct answer, shown after solving or on request. Any answer that passes is right.
    pub solution: Vec<Edit>,
    /// Other correct answers the explanation mentions, each checked to pass as well.
    pub alternatives: Vec<Vec<Edit>>,
    /// Why the solution works.
    pub explanation: String,
    /// Said when the check passes.
    pub success: String,
    pub misconceptions: Vec<Misconception>,
}

/// A known wrong approach to an exercise, recognised from the learner's scenario.
#[derive(Clone, Debug)]
pub struct Misconception {
    pub line: u32,
    /// All must hold of the learner's scenario.
    pub when: Vec<Condition>,
    /// The answer to this mistake.
    pub hint: String,
    /// Edits from the start that make this mistake: checked to trigger this hint.
    pub example: Vec<Edit>,
}

impl Misconception {
    pub fn matches(&self, scenario: &Scenario) -> bool {
        self.when.iter().all(|c| c.holds(scenario))
    }
}

/// A check that failed for one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub seed: u64,
    /// The claim as written.
    pub claim: String,
    /// What the run showed instead.
    pub actual: String,
}

/// The result of checking a learner's scenario against an exercise.
#[derive(Clone, Debug, PartialEq)]
pub struct Grade {
    pub passed: bool,
    /// Every check that failed, by seed (empty when passed).
    pub failures: Vec<Failure>,
    /// The index of the first misconception the scenario matches, when it did not pass.
    pub misconception: Option<usize>,
}

impl Exercise {
    /// The learner's scenario: the start with the learner's edits applied in order. An edit
    /// of a control the exercise does not offer is refused.
    pub fn attempt(&self, edits: &[Edit]) -> Result<Scenario, String> {
        for e in edits {
            if !edit::allowed(&self.controls, e) {
                return Err(format!(
                    "\"{e}\" uses the control \"{}\", which this exercise does not offer",
                    Control::of(e)
                ));
            }
        }
        let s = apply_edits(&self.scenario, edits);
        s.validate().map_err(|e| e.to_string())?;
        Ok(s)
    }

    /// Runs the check for every seed of the exercise. A scenario that passes passes, whatever
    /// the edits that produced it; a scenario that fails gets the first matching
    /// misconception's hint.
    pub fn grade(&self, scenario: &Scenario) -> Grade {
        let mut failures = Vec::new();
        for &seed in &self.seeds {
            let Ok((_, verdict)) = run_scenario(scenario, seed) else {
                failures.push(Failure {
                    seed,
                    claim: String::new(),
                    actual: "the scenario is invalid".into(),
                });
                break;
            };
            for c in &self.check {
                let r = c.check(scenario, &verdict);
                if !r.holds {
                    failures.push(Failure {
                        seed,
                        claim: c.text.clone(),
                        actual: r.actual,
                    });
                }
            }
        }
        let passed = failures.is_empty();
        Grade {
            passed,
            failures,
            misconception: if passed {
                None
            } else {
                self.misconception(scenario)
            },
        }
    }

    /// The first misconception the scenario matches.
    pub fn misconception(&self, scenario: &Scenario) -> Option<usize> {
        self.misconceptions.iter().position(|m| m.matches(scenario))
    }

    /// The completion code of a learner's edits, with their name: what the facilitator
    /// verifies with [`code::verify`].
    pub fn completion_code(&self, name: &str, lesson: &str, edits: &[Edit]) -> String {
        code::encode(&code::Completion {
            name: name.to_string(),
            lesson: lesson.to_string(),
            exercise: self.id.clone(),
            seeds: self.seeds.clone(),
            edits: edits.to_vec(),
        })
    }

    /// The words of hint `n` (from 0) with its counter, e.g. "Hint 2 of 4".
    pub fn hint_label(&self, n: usize) -> Option<String> {
        (n < self.hints.len()).then(|| format!("Hint {} of {}", n + 1, self.hints.len()))
    }
}

/// The lessons that ship with the project, embedded like the shipped scenarios.
pub mod builtin {
    /// A shipped lesson: its file name under `lessons/` and its text.
    pub struct BuiltInLesson {
        pub file: &'static str,
        pub text: &'static str,
    }

    macro_rules! lessons {
        ($($file:literal),* $(,)?) => {
            &[$(BuiltInLesson { file: $file, text: include_str!(concat!("../lessons/", $file)) }),*]
        };
    }

    /// Every shipped lesson, in course order.
    pub const ALL: &[BuiltInLesson] = lessons![
        "01-two-orders.md",
        "02-lock-in-both.md",
        "03-fixed-order.md",
        "04-one-order.md",
        "05-fencing.md",
        "06-regions.md",
        "07-migrations.md",
        "08-the-rule.md",
        "09-majority.md",
    ];

    /// Parses every shipped lesson. They are checked by the tests, so this cannot fail in a
    /// build that passed them; a lesson that does not parse is left out.
    pub fn lessons() -> Vec<super::Lesson> {
        let mut out: Vec<super::Lesson> = ALL
            .iter()
            .filter_map(|l| super::parse(l.text).ok())
            .collect();
        crate::sorted::sort_by_key(&mut out, |l| l.order);
        out
    }
}

/// Seeds in words: a run of consecutive seeds as `0..6`, others listed.
pub fn seeds_text(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if consecutive && seeds.len() > 1 => format!("{a}..{}", b + 1),
        _ => seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Seeds as a reader counts them: "8 seeds (0-7)", "seed 3", "3 seeds (1, 4 and 9)". The
/// lesson format's `0..8` excludes its end, which reads as nine seeds to most people.
pub fn seeds_words(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match seeds {
        [] => "no seed".to_string(),
        [one] => format!("seed {one}"),
        [a, .., b] if consecutive => format!("{} seeds ({a}-{b})", seeds.len()),
        [rest @ .., last] => format!(
            "{} seeds ({} and {last})",
            seeds.len(),
            rest.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Whether a text can be a lesson's, step's or exercise's id, as links carry it: 1 to 40
/// letters, digits, `-` or `_`.
pub fn is_id(s: &str) -> bool {
    (1..=40).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
