//! The lesson view's state: [`LessonRun`], what the lesson view adds to an [`App`] (the place
//! shown, the cues and the gate read from the run, the learner's edits, hints, checks and
//! prediction), the [`LessonAction`]s that change it, and the app opened at a place or handed
//! to the sandbox. Kept apart because the engine work in it (cues, gates, checks) is reached
//! only through [`LessonOps`](super::LessonOps), so that a bundle without lessons links none.

use std::rc::Rc;
use std::sync::Arc;

use super::{neighbour, place_id, Course, CourseLesson, Place};
use crate::lesson::cue::{self, Mark};
use crate::lesson::{highlighted_events, Control, Edit, Exercise, Grade, Lesson, Step};
use crate::scenario::Scenario;
use crate::ui::toggles::Toggle;
use crate::ui::{App, Codec, Outcome};
use crate::world::Micros;

/// A prediction judged on the run it was made on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// Whether the learner's choice was right (none: they chose to see the run instead).
    pub right: Option<bool>,
    /// What the page says: the choice, what the run showed, and why.
    pub text: String,
}

/// The result of the learner's last Check in an exercise.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    pub grade: Grade,
    /// What to tell the learner: the success message, the misconception's hint, or what the
    /// run showed instead of the goal.
    pub message: String,
    /// Set when a misconception recognised the attempt.
    pub misconception: bool,
    /// The completion code, when the check passed.
    pub code: Option<String>,
}

/// What the lesson view adds to the app's state.
#[derive(Clone, Debug)]
pub struct LessonRun {
    pub course: Arc<Course>,
    pub index: usize,
    pub place: Place,
    /// When each cue's event happens in the run shown (none: not in this run).
    pub marks: Vec<Option<Mark>>,
    /// The trace indices of the events the step highlights.
    pub highlighted: Rc<Vec<usize>>,
    /// Whether the learner's run meets the step's gate (none: the step has no gate).
    pub gate: Option<bool>,
    /// What the gate says of the run: the message for the way it was met, or which of its
    /// conditions the run does not show and what it shows instead.
    pub gate_text: String,
    /// The learner's changes since the step or exercise opened, as edits: each control's value
    /// now, once (the app's [`crate::ui::toggles::Settings`]), not every toggle on the way.
    pub edits: Vec<Edit>,
    /// How many hints are shown.
    pub hints: usize,
    /// Whether the solution is shown.
    pub solution: bool,
    pub attempt: Option<Attempt>,
    /// The choice the learner committed to for the step's prediction.
    pub predicted: Option<usize>,
    /// Set when the learner chose to see the run without predicting ("Just show me").
    pub skipped: bool,
    /// Set once the playhead reached the end of the run after the learner predicted (or chose
    /// to see it): the answer is then shown, judged from the run.
    pub revealed: bool,
    /// The prediction's choices whose claims hold of the run shown; frozen once revealed.
    pub right: Vec<usize>,
    /// What the page says of the prediction, made once, on the run the learner predicted and
    /// watched: a change the learner makes afterwards (a "your turn" step) does not judge it
    /// again.
    pub judged: Option<Judged>,
    /// The learner's name, which completion codes carry (typed once; kept from place to place).
    pub name: String,
}

impl LessonRun {
    pub fn lesson(&self) -> &Lesson {
        &self.course.lessons[self.index].lesson
    }

    pub fn texts(&self) -> &CourseLesson {
        &self.course.lessons[self.index]
    }

    pub fn step(&self) -> Option<&Step> {
        match self.place {
            Place::Step(k) => self.lesson().steps.get(k),
            Place::Exercise(_) => None,
        }
    }

    pub fn exercise(&self) -> Option<&Exercise> {
        match self.place {
            Place::Exercise(k) => self.lesson().exercises.get(k),
            Place::Step(_) => None,
        }
    }

    pub fn id(&self) -> &str {
        place_id(self.lesson(), self.place)
    }

    /// The controls the learner may use here (none: the run is only watched).
    pub fn controls(&self) -> &[Control] {
        match (self.step(), self.exercise()) {
            (Some(s), _) => &s.controls,
            (_, Some(e)) => &e.controls,
            _ => &[],
        }
    }

    /// Whether a toggle belongs to a control this step or exercise offers.
    pub fn allows(&self, t: &Toggle) -> bool {
        self.controls().contains(&Control::of(t))
    }

    /// The scenario the place starts from.
    pub fn start(&self) -> &Scenario {
        match (self.step(), self.exercise()) {
            (Some(s), _) => &s.scenario,
            (_, Some(e)) => &e.scenario,
            _ => unreachable!("a lesson run is always at a step or an exercise"),
        }
    }

    /// Whether the lesson may go on: a step with a gate waits until the learner's run meets it.
    pub fn can_go_on(&self) -> bool {
        self.gate != Some(false)
    }

    pub fn next(&self) -> Option<Place> {
        neighbour(self.lesson(), self.place, true)
    }

    pub fn previous(&self) -> Option<Place> {
        neighbour(self.lesson(), self.place, false)
    }

    /// The indices of the cues shown with the playhead at `t`, in the order their events
    /// happen: a function of the playhead alone, so scrubbing back takes a cue away again.
    pub fn visible_cues(&self, t: Micros) -> Vec<usize> {
        let Some(step) = self.step() else {
            return Vec::new();
        };
        cue::visible(&step.cues, &self.marks, t)
            .into_iter()
            .filter_map(|c| step.cues.iter().position(|x| std::ptr::eq(x, c)))
            .collect()
    }

    /// Recomputes what depends on the run: the cues' events, the highlights, the gate. A new
    /// run also makes the last check stale.
    pub fn follow_run(&mut self, scenario: &Scenario, outcome: &Outcome) {
        if let Some(step) = self.step() {
            let marks = cue::shown_marks(
                &step.cues,
                scenario,
                &outcome.world,
                &outcome.events,
                &outcome.verdict,
            );
            let highlighted = highlighted_events(&step.highlight, &outcome.world, &outcome.events);
            let (gate, gate_text) = match &step.gate {
                None => (None, String::new()),
                Some(g) => gate_reading(g, scenario, &outcome.verdict, &self.texts().rich),
            };
            let right = step
                .prediction
                .as_ref()
                .map(|p| p.right(scenario, &outcome.verdict))
                .unwrap_or_default();
            self.marks = marks;
            self.highlighted = Rc::new(highlighted);
            self.gate = gate;
            self.gate_text = gate_text;
            if !self.revealed {
                self.right = right;
            }
        }
        self.attempt = None;
    }

    /// Grades the learner's scenario against the exercise, over every seed of its check.
    pub fn check(&mut self, scenario: &Scenario) {
        let Some(e) = self.exercise() else {
            return;
        };
        let grade = e.grade(scenario);
        let misconception = grade.misconception.and_then(|k| e.misconceptions.get(k));
        let message = if grade.passed {
            e.success.clone()
        } else if let Some(m) = misconception {
            m.hint.clone()
        } else {
            let first = grade.failures.first();
            match first {
                Some(f) if f.claim.is_empty() => {
                    format!("Not yet: with seed {}, {}.", f.seed, f.actual)
                }
                Some(f) => {
                    let needs = e
                        .check
                        .iter()
                        .find(|c| c.text == f.claim)
                        .map_or_else(|| f.claim.clone(), |c| c.words());
                    format!(
                        "Not yet: with seed {}, the goal needs that {needs}, but {}.",
                        f.seed, f.actual
                    )
                }
                None => "Not yet.".to_string(),
            }
        };
        let code = grade.passed.then(|| self.code(scenario)).flatten();
        self.attempt = Some(Attempt {
            misconception: misconception.is_some(),
            grade,
            message,
            code,
        });
        if self.attempt.as_ref().is_some_and(|a| a.grade.passed) {
            self.solution = true;
        }
    }

    /// The completion code of the learner's scenario in the exercise shown: their name and the
    /// fewest edits from the exercise's start that give it (one a control changed), or the
    /// controls' values as they read when no shorter list gives the same scenario. None when
    /// the edits could not be read back (too many), rather than a code offered broken.
    pub fn code(&self, scenario: &Scenario) -> Option<String> {
        let e = self.exercise()?;
        let fewest = crate::ui::share::edits_from(&e.scenario, scenario)
            .filter(|edits| e.attempt(edits).is_ok_and(|s| s == *scenario));
        let edits = fewest.unwrap_or_else(|| self.edits.clone());
        (edits.len() <= crate::lesson::ITEMS_MAX)
            .then(|| e.completion_code(&self.name, &self.lesson().id, &edits))
    }

    /// Whether the step asks a prediction the learner has neither made nor skipped: until
    /// then nothing of the run is shown and the playhead stays at the start.
    pub fn awaiting_answer(&self) -> bool {
        self.step().is_some_and(|s| s.prediction.is_some()) && !self.committed()
    }

    /// A short text of the lesson as plain words, for a sentence the page builds around it.
    fn plain(&self, text: &str) -> String {
        crate::lesson::narration::plain(&self.texts().rich, text)
    }

    /// Whether the learner predicted or chose to see the run.
    pub fn committed(&self) -> bool {
        self.predicted.is_some() || self.skipped
    }

    /// Whether the page offers to show what the run shows at once ([`LessonAction::ShowOutcome`]):
    /// once the learner has committed, until the answer is shown.
    pub fn offers_outcome(&self) -> bool {
        self.step().is_some_and(|s| s.prediction.is_some()) && self.committed() && !self.revealed
    }

    /// Whether what would answer the step's prediction is kept from the page: until the run
    /// has played to its end after the learner committed, only the run up to the playhead is
    /// shown (nothing of it before the commit), and no verdict, figure, finding, plot or
    /// feedback.
    pub fn hides_run(&self) -> bool {
        self.step().is_some_and(|s| s.prediction.is_some()) && !self.revealed
    }

    /// How far into the run the page may show it at playhead `t`: none when it shows it all.
    pub fn shown_until(&self, t: Micros) -> Option<Micros> {
        if !self.hides_run() {
            None
        } else if self.committed() {
            Some(t)
        } else {
            Some(0)
        }
    }

    /// Judges the committed prediction on the run that has just played, once: the answer
    /// stays as it was judged whatever the learner changes afterwards.
    pub fn reveal(&mut self, scenario: &Scenario, outcome: &Outcome) {
        if self.revealed || !self.committed() {
            return;
        }
        self.revealed = true;
        let Some(p) = self.step().and_then(|s| s.prediction.as_ref()) else {
            return;
        };
        let right = p.right(scenario, &outcome.verdict);
        let answer: Vec<String> = right
            .iter()
            .filter_map(|&r| p.choices.get(r).map(|c| self.plain(&c.text)))
            .collect();
        let why = if p.why.is_empty() {
            String::new()
        } else {
            format!(" {}", self.plain(&p.why))
        };
        let judged = match self
            .predicted
            .and_then(|k| p.choices.get(k).map(|c| (k, c)))
        {
            Some((k, chosen)) => {
                let shows = chosen.claim.check(scenario, &outcome.verdict).actual;
                let said = self.plain(&chosen.text);
                if right.contains(&k) {
                    Judged {
                        right: Some(true),
                        text: format!("Right: you said {said}, and the run shows {shows}.{why}"),
                    }
                } else {
                    Judged {
                        right: Some(false),
                        text: format!(
                            "Not this time: you said {said}, but the run shows {shows}{}.{why}",
                            if answer.is_empty() {
                                String::new()
                            } else {
                                format!(" (the answer: {})", answer.join(" / "))
                            }
                        ),
                    }
                }
            }
            None => Judged {
                right: None,
                text: format!(
                    "You watched without predicting. The answer: {}.{why}",
                    answer.join(" / ")
                ),
            },
        };
        self.right = right;
        self.judged = Some(judged);
    }

    /// What the page says of the learner's prediction: what they chose while the run plays,
    /// and once it has played, the judgement made then.
    pub fn prediction_text(&self) -> Option<String> {
        let p = self.step()?.prediction.as_ref()?;
        if let Some(j) = &self.judged {
            return Some(j.text.clone());
        }
        match self.predicted.and_then(|k| p.choices.get(k)) {
            Some(chosen) => Some(format!(
                "You said: {}. Watch the run play to its end, or show what happens, to see whether it does.",
                self.plain(&chosen.text)
            )),
            None if self.skipped => {
                Some("Watch the run play to its end, or show what happens: the answer follows.".to_string())
            }
            None => None,
        }
    }

    /// The label of the next hint to reveal, e.g. "Hint 2 of 4", if any is left.
    pub fn next_hint_label(&self) -> Option<String> {
        self.exercise().and_then(|e| e.hint_label(self.hints))
    }
}

/// Whether a run meets a gate, and what to say: "Done: " and the message for the way it was
/// met, or "Not yet: " and each condition the run does not show, with what it shows instead.
/// The lesson's words in it are plain (`rich`: the lesson's rendered texts), since the sentence
/// is shown as text.
fn gate_reading(
    g: &crate::lesson::Gate,
    scenario: &Scenario,
    verdict: &crate::monitor::Verdict,
    rich: &crate::lesson::narration::Rich,
) -> (Option<bool>, String) {
    let failed: Vec<String> = g
        .unmet(scenario, verdict)
        .into_iter()
        .map(|(c, actual)| format!("that {} (here, {actual})", c.words()))
        .collect();
    let plain = |text: &str| crate::lesson::narration::plain(rich, text);
    if failed.is_empty() {
        (
            Some(true),
            format!("Done: {}", plain(g.message(scenario, verdict))),
        )
    } else if let Some(m) = g.misconception(scenario).map(|k| &g.misconceptions[k]) {
        (
            Some(false),
            format!(
                "Not yet: {} (This needs {}.)",
                plain(&m.hint),
                failed.join("; and ")
            ),
        )
    } else {
        (
            Some(false),
            format!("Not yet: this needs {}.", failed.join("; and ")),
        )
    }
}

/// What the lesson view can do beyond the sandbox's actions.
#[derive(Clone, Debug, PartialEq)]
pub enum LessonAction {
    /// Opens a lesson at a place, with the place's own scenario and, for a step whose gate
    /// the learner met before, the control values that met it (`resume`, from
    /// [`Progress`](super::Progress)).
    Open {
        course: Arc<Course>,
        index: usize,
        place: Place,
        resume: Vec<Edit>,
    },
    /// Grades the learner's run against the exercise.
    Check,
    /// Reveals one more hint.
    Hint,
    /// Shows the solution.
    ShowSolution,
    /// Starts the step or exercise again from its own scenario.
    Restart,
    /// Commits to a choice of the step's prediction; the run plays from the start.
    Predict(usize),
    /// Plays the run without a prediction ("Just show me"); it is not counted as one.
    ShowMe,
    /// Once the learner has committed (a prediction, or "Just show me"), shows what the run
    /// shows at once ("Show what happens"): the playhead goes to the run's end, as if it had
    /// played, and the prediction is answered there. Before the commit it does nothing.
    ShowOutcome,
    /// The learner's name, for completion codes: a code already made is made again with it.
    Name(String),
}

impl App {
    /// The app at a place of a lesson: the place's scenario run with its own seed.
    pub fn at_lesson(course: Arc<Course>, index: usize, place: Place) -> App {
        let mut run = LessonRun {
            course,
            index,
            place,
            marks: Vec::new(),
            highlighted: Rc::new(Vec::new()),
            gate: None,
            gate_text: String::new(),
            edits: Vec::new(),
            predicted: None,
            skipped: false,
            revealed: false,
            judged: None,
            name: String::new(),
            right: Vec::new(),
            hints: 0,
            solution: false,
            attempt: None,
        };
        let scenario = run.start().clone();
        // A lesson has no editor: it reads no scenario text, whatever bundle shows it.
        let mut app = App::from_scenario_with(
            Codec::LESSON,
            scenario,
            format!("lesson:{}", run.lesson().id),
        );
        // A step that shows a recording shows its trace, judged afresh, in place of the
        // simulated run; the step offers no control, so nothing replaces it while it is open.
        if let Some(r) = run.step().and_then(|s| s.recording.as_ref()) {
            app.outcome = Rc::new(Outcome::of_recording((*r.run).clone()));
        }
        run.follow_run(&app.scenario, &app.outcome);
        app.zoom = readable_zoom(&app.outcome.layout);
        app.follow();
        app.lesson = Some(Rc::new(run));
        app
    }
}

/// At most this many spans of one lane in view when a place opens: more, at the page's width,
/// run together into one bar.
pub const READABLE_SPANS: usize = 24;

/// The zoom a place opens at: the least of the zoom control's values at which the busiest
/// lane shows at most [`READABLE_SPANS`] spans in a window of its share of the run (spans
/// spread out over a run; the window starts at the playhead).
pub fn readable_zoom(layout: &crate::ui::timeline::Layout) -> u32 {
    let busiest = layout
        .lanes
        .iter()
        .map(|l| l.spans.len())
        .max()
        .unwrap_or(0);
    [1u32, 2, 4, 8, 16, 32]
        .into_iter()
        .find(|z| busiest <= READABLE_SPANS * *z as usize)
        .unwrap_or(32)
}

impl App {
    /// What a lesson leaves for the sandbox when the learner takes their scenario there: the
    /// step's shipped file as the source (the blank scenario for any other), and the run
    /// alone, whose text the sandbox writes when it restores it ([`App::restore_with`]).
    pub fn for_sandbox(&self) -> crate::ui::Saved {
        let file = self
            .lesson
            .as_ref()
            .map(|r| match (r.step(), r.exercise()) {
                (Some(s), _) => s.setup.file.clone(),
                (_, Some(e)) => e.setup.file.clone(),
                _ => String::new(),
            });
        crate::ui::Saved {
            source: file
                .filter(|f| crate::ui::is_source(f))
                .unwrap_or_else(|| crate::ui::BLANK.to_string()),
            text: self.text.clone(),
            ran: Some(self.ran()),
        }
    }
}
