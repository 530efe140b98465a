//! The course and the lesson view's state, pure like the rest of `ui`.
//!
//! A [`Course`] is the lessons the app loaded (the shipped ones from the compact form, and any
//! file the user opened). A [`LessonRun`] is what the lesson view adds to an [`App`]: which
//! step or exercise is shown, when each cue's event happens in the run, whether the gate is
//! met, the learner's edits, the hints revealed and the last check. The run itself, the
//! verdict and the playhead are the [`App`]'s, so the lesson view draws the same timeline and
//! verdict as the sandbox and every change still goes through [`App::reduce`].

use crate::sorted::{SortedMap, SortedSet};
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::json::Obj;

use super::toggles::Toggle;
use super::{App, Codec, Outcome};
use crate::lesson::cue::{self, Mark};
use crate::lesson::narration::Block;
use crate::lesson::wire::{Loaded, StepText};
use crate::lesson::{highlighted_events, Control, Edit, Exercise, Grade, Lesson, Step};
use crate::scenario::Scenario;
use crate::world::Micros;

/// The local storage key of the learner's progress.
pub const PROGRESS_KEY: &str = "lockstep.progress.v1";
/// The local storage key of the lesson files the user opened.
pub const OPENED_KEY: &str = "lockstep.lessons.v1";

/// Where the learner's name for completion codes is kept (the page's, and `lockstep room`'s
/// script reads it).
pub const NAME_KEY: &str = "lockstep-learner-name";
/// The most lesson files kept in local storage; opening another replaces the oldest.
pub const OPENED_MAX: usize = 8;

/// Where a lesson comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Shipped,
    /// A file the user picked, pasted or opened by a link (kept in local storage).
    Opened,
    /// A file from the folder of lessons served beside the site (`lessons/index.json`).
    Served,
}

/// One lesson with what the page shows of it.
#[derive(Clone, Debug)]
pub struct CourseLesson {
    pub lesson: Lesson,
    pub intro: Vec<Block>,
    pub steps: Vec<StepText>,
    pub exercises: Vec<Vec<Block>>,
    /// The short texts that hold Markdown, rendered.
    pub rich: Arc<SortedMap<String, Vec<crate::lesson::narration::Inline>>>,
    pub origin: Origin,
}

impl CourseLesson {
    pub fn new(loaded: Loaded, origin: Origin) -> CourseLesson {
        CourseLesson {
            lesson: loaded.lesson,
            intro: loaded.intro,
            steps: loaded.steps,
            exercises: loaded.exercises,
            rich: loaded.rich,
            origin,
        }
    }
}

/// The lessons in course order.
#[derive(Debug)]
pub struct Course {
    pub lessons: Vec<CourseLesson>,
    /// The lesson view's work that runs the engine (cues, gates, checks). The reducer reaches
    /// it only through these pointers, so a build that never makes a course (the sandbox's
    /// own bundle) links none of it.
    pub ops: &'static LessonOps,
}

/// The lesson view's heavier work, as function pointers: see [`Course::ops`].
pub struct LessonOps {
    pub open: fn(Arc<Course>, usize, Place) -> App,
    pub follow_run: fn(&mut LessonRun, &Scenario, &Outcome),
    pub check: fn(&mut LessonRun, &Scenario),
    /// Judges a committed prediction once its run has played: see [`LessonRun::reveal`].
    pub reveal: fn(&mut LessonRun, &Scenario, &Outcome),
    /// Every lesson action ([`App::reduce`] hands them here), so that the embed's and the
    /// sandbox's bundles, which never make a course, link none of the lesson reducer.
    pub reduce: fn(&App, LessonAction) -> App,
}

impl std::fmt::Debug for LessonOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LessonOps")
    }
}

static OPS: LessonOps = LessonOps {
    open: App::at_lesson,
    follow_run: LessonRun::follow_run,
    check: LessonRun::check,
    reveal: LessonRun::reveal,
    reduce: App::do_lesson_action,
};

/// Two courses are the same only if they are the same value: a course is loaded once and
/// shared, and comparing lessons field by field on every redraw would cost for nothing.
impl PartialEq for Course {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// A step or an exercise of a lesson, by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    Step(usize),
    Exercise(usize),
}

impl Course {
    /// The course of the shipped lessons and the opened ones; an opened lesson whose id is a
    /// shipped lesson's replaces it, so that a facilitator can try a changed version.
    pub fn new(shipped: Vec<Loaded>, opened: Vec<Loaded>) -> Course {
        Course::of(shipped, Vec::new(), opened)
    }

    /// The course of the shipped lessons, the site's folder of lessons and the opened ones, a
    /// later source's lesson replacing an earlier one's with the same id: a folder can carry a
    /// changed version of a shipped lesson, and a facilitator can try a changed version of
    /// either.
    pub fn of(shipped: Vec<Loaded>, served: Vec<Loaded>, opened: Vec<Loaded>) -> Course {
        let mut lessons: Vec<CourseLesson> = shipped
            .into_iter()
            .map(|l| CourseLesson::new(l, Origin::Shipped))
            .collect();
        let later = served
            .into_iter()
            .map(|l| (l, Origin::Served))
            .chain(opened.into_iter().map(|l| (l, Origin::Opened)));
        for (l, origin) in later {
            lessons.retain(|x| x.lesson.id != l.lesson.id);
            lessons.push(CourseLesson::new(l, origin));
        }
        crate::sorted::sort_by(&mut lessons, |a, b| {
            (a.lesson.order, &a.lesson.id).cmp(&(b.lesson.order, &b.lesson.id))
        });
        Course { lessons, ops: &OPS }
    }

    /// The lessons themselves, for completion codes.
    pub fn plain(&self) -> Vec<Lesson> {
        self.lessons.iter().map(|l| l.lesson.clone()).collect()
    }

    pub fn index(&self, id: &str) -> Option<usize> {
        self.lessons.iter().position(|l| l.lesson.id == id)
    }

    /// The lesson and place a link names; no place is the lesson's first step (or its first
    /// exercise when it has no steps).
    pub fn find(&self, lesson: &str, place: Option<&str>) -> Option<(usize, Place)> {
        let i = self.index(lesson)?;
        let l = &self.lessons[i].lesson;
        let place = match place {
            None => places(l).into_iter().next()?,
            Some(id) => {
                if let Some(k) = l.steps.iter().position(|s| s.id == id) {
                    Place::Step(k)
                } else {
                    Place::Exercise(l.exercises.iter().position(|e| e.id == id)?)
                }
            }
        };
        Some((i, place))
    }
}

/// Every place of a lesson in order: the steps, then the exercises.
pub fn places(l: &Lesson) -> Vec<Place> {
    (0..l.steps.len())
        .map(Place::Step)
        .chain((0..l.exercises.len()).map(Place::Exercise))
        .collect()
}

/// The id of a place, as links name it.
pub fn place_id(l: &Lesson, p: Place) -> &str {
    match p {
        Place::Step(k) => &l.steps[k].id,
        Place::Exercise(k) => &l.exercises[k].id,
    }
}

/// Where a place is in its lesson, in words: "Step 2 of 4 (then 1 exercise)", or
/// "Exercise 1 of 2 (after 4 steps)".
pub fn place_words(l: &Lesson, p: Place) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let (steps, exercises) = (l.steps.len(), l.exercises.len());
    match p {
        Place::Step(k) if exercises > 0 => format!(
            "Step {} of {steps} (then {})",
            k + 1,
            plural(exercises, "exercise", "exercises")
        ),
        Place::Step(k) => format!("Step {} of {steps}", k + 1),
        Place::Exercise(k) if steps > 0 => format!(
            "Exercise {} of {exercises} (after {})",
            k + 1,
            plural(steps, "step", "steps")
        ),
        Place::Exercise(k) => format!("Exercise {} of {exercises}", k + 1),
    }
}

/// The place before or after `p` in the lesson.
pub fn neighbour(l: &Lesson, p: Place, forward: bool) -> Option<Place> {
    let all = places(l);
    let k = all.iter().position(|x| *x == p)?;
    if forward {
        all.get(k + 1).copied()
    } else {
        k.checked_sub(1).and_then(|k| all.get(k).copied())
    }
}

/// What the learner has done, kept between visits. Written with serde; read by hand
/// ([`Progress::read`]) with `crate::json`, as derived readers for these maps would cost the
/// lesson view's download more.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Progress {
    pub lessons: SortedMap<String, LessonProgress>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LessonProgress {
    /// Steps and exercises opened.
    pub seen: SortedSet<String>,
    /// Steps whose gate the learner's run met.
    pub gates: SortedSet<String>,
    /// For each step whose gate was met, the control values that met it (as edits), so that
    /// coming back shows the learner's own run and the way on.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub gate_edits: SortedMap<String, Vec<String>>,
    /// Steps whose prediction the learner made and saw answered, and whether it was right.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub predictions: SortedMap<String, bool>,
    /// Exercises solved, with the completion code of the solution.
    pub solved: SortedMap<String, String>,
    /// For each exercise the learner changed, its controls' values as they left them (as
    /// edits), so that a closed tab loses nothing.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub exercise_edits: SortedMap<String, Vec<String>>,
    /// For each exercise, how many hints the learner revealed.
    #[serde(default, skip_serializing_if = "SortedMap::is_empty")]
    pub hints: SortedMap<String, usize>,
}

impl Progress {
    /// The progress saved in local storage; anything unreadable counts as none. A member left
    /// out (or `null`) is empty, and a member this version does not know is passed over, so
    /// that progress saved by an earlier or a later version still counts.
    pub fn read(stored: Option<&str>) -> Progress {
        stored
            .and_then(|s| Progress::from_json(s).ok())
            .unwrap_or_default()
    }

    fn from_json(text: &str) -> Result<Progress, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the progress")?;
        Ok(Progress {
            lessons: map_of(&o, "lessons", LessonProgress::read)?,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The progress with what the lesson view shows now recorded: the place seen, the gate
    /// met, the exercise solved.
    pub fn record(&self, run: &LessonRun) -> Progress {
        let mut next = self.clone();
        let l = run.lesson();
        let id = place_id(l, run.place).to_string();
        let entry = next.lessons.entry_or_default(l.id.clone());
        entry.seen.insert(id.clone());
        if run.gate == Some(true) {
            entry.gates.insert(id.clone());
            entry.gate_edits.insert(
                id.clone(),
                run.edits.iter().map(|e| e.to_string()).collect(),
            );
        }
        // A prediction counts once, as it was first judged: trying the step again later does
        // not change what the learner predicted then.
        if let Some(right) = run.judged.as_ref().and_then(|j| j.right) {
            if !entry.predictions.contains_key(&id) {
                entry.predictions.insert(id.clone(), right);
            }
        }
        if let Place::Exercise(_) = run.place {
            if run.edits.is_empty() {
                entry.exercise_edits.remove(&id);
            } else {
                entry.exercise_edits.insert(
                    id.clone(),
                    run.edits.iter().map(|e| e.to_string()).collect(),
                );
            }
            if run.hints > 0 {
                entry.hints.insert(id.clone(), run.hints);
            }
        }
        if let Some(code) = run.attempt.as_ref().and_then(|a| a.code.clone()) {
            entry.solved.insert(id, code);
        }
        next
    }

    /// How many hints the learner had revealed at an exercise.
    pub fn resume_hints(&self, l: &Lesson, p: Place) -> usize {
        self.lessons
            .get(&l.id)
            .and_then(|x| x.hints.get(place_id(l, p)))
            .copied()
            .unwrap_or(0)
    }

    /// How far the learner is in a lesson, in words: "2 of 3 steps, 1 of 1 exercise solved".
    pub fn summary(&self, l: &Lesson) -> String {
        let p = self.lessons.get(&l.id);
        let seen = l
            .steps
            .iter()
            .filter(|s| p.is_some_and(|p| p.seen.contains(&s.id)))
            .count();
        let solved = l
            .exercises
            .iter()
            .filter(|e| p.is_some_and(|p| p.solved.contains_key(&e.id)))
            .count();
        let mut out = format!("{seen} of {} steps seen", l.steps.len());
        let asked = l.steps.iter().filter(|s| s.prediction.is_some()).count();
        if asked > 0 {
            let answered: Vec<bool> = l
                .steps
                .iter()
                .filter_map(|s| p.and_then(|p| p.predictions.get(&s.id)).copied())
                .collect();
            out.push_str(&format!(
                ", {} of {asked} prediction{} made ({} right)",
                answered.len(),
                if asked == 1 { "" } else { "s" },
                answered.iter().filter(|r| **r).count()
            ));
        }
        if !l.exercises.is_empty() {
            out.push_str(&format!(
                ", {solved} of {} exercise{} solved",
                l.exercises.len(),
                if l.exercises.len() == 1 { "" } else { "s" }
            ));
        }
        out
    }

    /// The share of a lesson done, from 0 to 100: steps seen and exercises solved.
    pub fn percent(&self, l: &Lesson) -> u32 {
        let total = l.steps.len() + l.exercises.len();
        if total == 0 {
            return 0;
        }
        let p = self.lessons.get(&l.id);
        let done = l
            .steps
            .iter()
            .filter(|s| p.is_some_and(|p| p.seen.contains(&s.id)))
            .count()
            + l.exercises
                .iter()
                .filter(|e| p.is_some_and(|p| p.solved.contains_key(&e.id)))
                .count();
        (done * 100 / total) as u32
    }

    /// The control values to open a place with again: for a step, those that met its gate; for
    /// an exercise, those the learner left it with. Edits that no longer read are dropped (the
    /// place opens as it starts).
    pub fn resume_edits(&self, l: &Lesson, p: Place) -> Vec<Edit> {
        self.lessons
            .get(&l.id)
            .and_then(|x| match p {
                Place::Step(_) => x.gate_edits.get(place_id(l, p)),
                Place::Exercise(_) => x.exercise_edits.get(place_id(l, p)),
            })
            .and_then(|edits| edits.iter().map(|e| e.parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Where to continue a lesson: the first place not yet seen (steps) or solved
    /// (exercises), or the first place when all are done.
    pub fn resume(&self, l: &Lesson) -> Option<Place> {
        let p = self.lessons.get(&l.id);
        let all = places(l);
        all.iter()
            .copied()
            .find(|&x| {
                let id = place_id(l, x);
                match x {
                    Place::Step(_) => !p.is_some_and(|p| p.seen.contains(id)),
                    Place::Exercise(_) => !p.is_some_and(|p| p.solved.contains_key(id)),
                }
            })
            .or_else(|| all.first().copied())
    }
}

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
    /// now, once (the app's [`super::toggles::Settings`]), not every toggle on the way.
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
    /// the learner met before, the control values that met it (`resume`, from [`Progress`]).
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
pub fn readable_zoom(layout: &super::timeline::Layout) -> u32 {
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

/// Whether a place is a step that asks the learner to predict its run.
pub fn asks_prediction(l: &Lesson, place: Place) -> bool {
    matches!(place, Place::Step(k) if l.steps.get(k).is_some_and(|s| s.prediction.is_some()))
}

/// The file name of a place's picture beside the course's files: see [`place_pictures`].
pub fn place_picture_name(lesson: &str, place: &str) -> String {
    format!("{lesson}.{place}.run.svg")
}

/// Each place's run as the place opens it (every step and exercise of every lesson of
/// `course`), pictured as the timeline's SVG export draws it: the headline above the lanes,
/// the legend below. The page shows a place's picture, beside its narration, while the place's
/// simulator loads (`static/lesson-preview.js`), so what a reader sees first is the run the
/// simulator then shows. The pictures carry no scenario text, which the lesson's file holds.
/// A step that asks a prediction has none: its run is the answer, and the page shows none of
/// it before the learner commits (see [`LessonRun::hides_run`]).
pub fn place_pictures(course: &Arc<Course>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (index, cl) in course.lessons.iter().enumerate() {
        for place in places(&cl.lesson) {
            if let Some(svg) = place_picture(course, index, place) {
                out.push((
                    place_picture_name(&cl.lesson.id, place_id(&cl.lesson, place)),
                    svg,
                ));
            }
        }
    }
    out
}

/// One place's picture, as [`place_pictures`] draws it (none for a step that asks a
/// prediction, or a place the lesson does not have): the participants' handout shows the same
/// pictures beside its steps.
pub fn place_picture(course: &Arc<Course>, index: usize, place: Place) -> Option<String> {
    let l = &course.lessons.get(index)?.lesson;
    let exists = match place {
        Place::Step(k) => k < l.steps.len(),
        Place::Exercise(k) => k < l.exercises.len(),
    };
    if !exists || asks_prediction(l, place) {
        return None;
    }
    let app = App::at_lesson(Arc::clone(course), index, place);
    Some(super::svg::timeline_svg(
        &app.scenario.name,
        &app.outcome,
        "",
        None,
    ))
}

impl App {
    /// What a lesson leaves for the sandbox when the learner takes their scenario there: the
    /// step's shipped file as the source (the blank scenario for any other), and the run
    /// alone, whose text the sandbox writes when it restores it ([`App::restore_with`]).
    pub fn for_sandbox(&self) -> super::Saved {
        let file = self
            .lesson
            .as_ref()
            .map(|r| match (r.step(), r.exercise()) {
                (Some(s), _) => s.setup.file.clone(),
                (_, Some(e)) => e.setup.file.clone(),
                _ => String::new(),
            });
        super::Saved {
            source: file
                .filter(|f| super::is_source(f))
                .unwrap_or_else(|| super::BLANK.to_string()),
            text: self.text.clone(),
            ran: Some(self.ran()),
        }
    }
}

pub use crate::lesson::{seeds_text, seeds_words};

/// What the lesson checker answers for a file: the lesson in compact form, or every problem
/// with its line. The worker writes it with serde; the page reads it with
/// [`CheckReply::from_json`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckReply {
    /// The lesson in compact form ([`crate::lesson::wire`]), kept as the JSON it travels as:
    /// the page reads it with the compact form's reader and stores it as it came, so that its
    /// bundle needs no writer of that form.
    Opened {
        lesson: serde_json::Value,
    },
    Refused {
        errors: Vec<(u32, String)>,
    },
    /// The checker could not run (the page says this, never the checker): why, blaming no
    /// line of the file.
    Unavailable {
        why: String,
    },
}

/// Reads a lesson file the user picked or pasted, and checks it exactly as
/// `lockstep lesson check` does: every claim, gate, cue and exercise is run through the
/// engine. Only a lesson without a problem opens; otherwise every problem comes back with its
/// line. The page runs this in a worker of its own (`src/bin/checker.rs`), so that neither
/// the Markdown parser nor the checker is part of the pages' bundles.
pub fn check_lesson_file(text: &str) -> CheckReply {
    let refused = |errors: Vec<crate::lesson::LessonError>| CheckReply::Refused {
        errors: errors.into_iter().map(|e| (e.line, e.message)).collect(),
    };
    let lesson = match crate::lesson::parse(text) {
        Ok(l) => l,
        Err(errors) => return refused(errors),
    };
    let checked = crate::lesson::check(&lesson);
    if !checked.errors.is_empty() {
        return refused(checked.errors);
    }
    CheckReply::Opened {
        lesson: serde_json::to_value(crate::lesson::wire::to_wire(&lesson))
            .expect("a lesson's compact form is JSON"),
    }
}

/// [`check_lesson_file`], read into a lesson for the course.
pub fn open_lesson_file(
    text: &str,
) -> Result<(Loaded, OpenedFile), Vec<crate::lesson::LessonError>> {
    CheckReply::into_opened(check_lesson_file(text), text)
}

impl CheckReply {
    /// Reads the checker's answer, written as serde writes this type, by hand: a derived
    /// reader would be one more copy of serde_json's reading code in the lesson view's bundle.
    pub fn from_json(text: &str) -> Result<CheckReply, String> {
        use crate::json::{list, string, Obj};
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the checker's answer")?;
        // Serde writes each kind as an object of one member, named after the kind, whose
        // value holds the kind's members.
        let kind = |name: &str, members: &[&str]| -> Result<Option<Obj>, String> {
            let Some(inner) = o.get(name) else {
                return Ok(None);
            };
            o.only(&[name])?;
            let inner = Obj::of(inner, &format!("\"{name}\""))?;
            inner.only(members)?;
            Ok(Some(inner))
        };
        if let Some(opened) = kind("opened", &["lesson"])? {
            return Ok(CheckReply::Opened {
                lesson: opened.need("lesson")?.clone(),
            });
        }
        if let Some(refused) = kind("refused", &["errors"])? {
            let errors = refused.items("errors", |e| match list(e)?.as_slice() {
                [line, message] => Ok((
                    line.as_u64()
                        .and_then(|l| u32::try_from(l).ok())
                        .ok_or("a problem's line is not a line number")?,
                    string(message)?,
                )),
                _ => Err("not a line and a problem".to_string()),
            })?;
            return Ok(CheckReply::Refused { errors });
        }
        if let Some(unavailable) = kind("unavailable", &["why"])? {
            return Ok(CheckReply::Unavailable {
                why: unavailable.string("why")?,
            });
        }
        Err("the checker's answer is none it gives".into())
    }

    /// The lesson to add to the course and the file to keep, or the problems.
    pub fn into_opened(
        self,
        text: &str,
    ) -> Result<(Loaded, OpenedFile), Vec<crate::lesson::LessonError>> {
        let error = |line, message| crate::lesson::LessonError { line, message };
        match self {
            CheckReply::Refused { errors } => {
                Err(errors.into_iter().map(|(l, m)| error(l, m)).collect())
            }
            // Line 0 is no line: the view shows such a problem without one.
            CheckReply::Unavailable { why } => Err(vec![error(0, why)]),
            CheckReply::Opened { lesson } => {
                let mut file = OpenedFile {
                    id: String::new(),
                    text: text.to_string(),
                    lesson,
                    source: None,
                };
                let loaded = file.read().map_err(|e| vec![error(1, e)])?;
                file.id = loaded.lesson.id.clone();
                Ok((loaded, file))
            }
        }
    }
}

impl LessonProgress {
    fn read(v: &Value) -> Result<LessonProgress, String> {
        let o = Obj::of(v, "a lesson's progress")?;
        let set = |name: &str| o.opt_strings(name).map(crate::sorted::set);
        let edits =
            |v: &Value| crate::json::list_of(crate::json::list(v)?, "edits", crate::json::string);
        Ok(LessonProgress {
            seen: set("seen")?,
            gates: set("gates")?,
            gate_edits: map_of(&o, "gate_edits", edits)?,
            predictions: map_of(&o, "predictions", |v| {
                v.as_bool().ok_or("not true or false".to_string())
            })?,
            solved: map_of(&o, "solved", crate::json::string)?,
            exercise_edits: map_of(&o, "exercise_edits", edits)?,
            hints: map_of(&o, "hints", |v| {
                v.as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or("not a count".to_string())
            })?,
        })
    }
}

/// An object member that maps names to values, each read by `read`; left out, it is empty.
fn map_of<T>(
    o: &Obj,
    name: &str,
    read: impl Fn(&Value) -> Result<T, String>,
) -> Result<SortedMap<String, T>, String> {
    let Some(v) = o.get(name) else {
        return Ok(SortedMap::new());
    };
    let mut pairs = Vec::new();
    for (k, v) in Obj::of(v, name)?.members() {
        let value = read(v).map_err(|e| format!("\"{name}\" member \"{k}\": {e}"))?;
        pairs.push((k.clone(), value));
    }
    Ok(crate::sorted::map(pairs))
}

/// The lesson files the user opened, as kept in local storage: each file's text and the
/// lesson in compact form (so that a reload needs no parser), newest last, one per lesson id,
/// at most [`OPENED_MAX`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpenedFiles {
    pub files: Vec<OpenedFile>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpenedFile {
    pub id: String,
    pub text: String,
    /// The lesson in compact form, as JSON ([`CheckReply::Opened`]).
    pub lesson: serde_json::Value,
    /// The address the file was opened from (a `?open=` link), so that the link opens the
    /// kept copy when the network is off, and a changed file replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl OpenedFile {
    /// The lesson, read from its compact form.
    pub fn read(&self) -> Result<Loaded, String> {
        let w = crate::lesson::wire::lesson_of(&self.lesson)?;
        crate::lesson::wire::from_wire(w)
    }

    /// The lesson's title, for saying it was opened (as words: the sentence is text).
    pub fn title(&self) -> String {
        plain(
            self.lesson
                .get("title")
                .and_then(serde_json::Value::as_str)
                .unwrap_or(&self.id),
        )
    }
}

impl OpenedFiles {
    /// The files kept in local storage; anything unreadable counts as none.
    pub fn read(stored: Option<&str>) -> OpenedFiles {
        stored
            .and_then(|s| OpenedFiles::from_json(s).ok())
            .unwrap_or_default()
    }

    fn from_json(text: &str) -> Result<OpenedFiles, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the opened files")?;
        Ok(OpenedFiles {
            files: o.opt_items("files", |v| {
                let f = Obj::of(v, "an opened file")?;
                Ok(OpenedFile {
                    id: f.string("id")?,
                    text: f.string("text")?,
                    lesson: f.get("lesson").cloned().unwrap_or_default(),
                    source: f.opt_string("source")?,
                })
            })?,
        })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// With a file added: it replaces an earlier file of the same lesson, and the oldest goes
    /// when there are too many.
    pub fn with(&self, file: OpenedFile) -> OpenedFiles {
        let mut files: Vec<OpenedFile> = self
            .files
            .iter()
            .filter(|f| f.id != file.id)
            .cloned()
            .collect();
        files.push(file);
        let excess = files.len().saturating_sub(OPENED_MAX);
        files.drain(..excess);
        OpenedFiles { files }
    }

    /// The file kept from an address, if any.
    pub fn from_source(&self, url: &str) -> Option<&OpenedFile> {
        self.files
            .iter()
            .rev()
            .find(|f| f.source.as_deref() == Some(url))
    }

    pub fn without(&self, id: &str) -> OpenedFiles {
        OpenedFiles {
            files: self.files.iter().filter(|f| f.id != id).cloned().collect(),
        }
    }

    /// The texts of the files whose lesson no longer reads, because an earlier version of the
    /// page stored it: the page checks them again from their text, so nothing opened is lost.
    pub fn stale(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.read().is_err())
            .map(|f| f.text.clone())
            .collect()
    }

    /// The lessons; one that no longer reads (the app changed) is left out until it is checked
    /// again ([`OpenedFiles::stale`]).
    pub fn lessons(&self) -> Vec<Loaded> {
        self.files.iter().filter_map(|f| f.read().ok()).collect()
    }
}

/// Where the course stands: not asked for yet, on its way, loaded, or refused.
#[derive(Clone, Debug)]
pub enum Lessons {
    Idle,
    Loading,
    Ready(Arc<Course>),
    Failed(String),
}

/// A course is compared by identity (see [`Course`]'s `PartialEq`).
impl PartialEq for Lessons {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Lessons::Idle, Lessons::Idle) | (Lessons::Loading, Lessons::Loading) => true,
            (Lessons::Ready(a), Lessons::Ready(b)) => Arc::ptr_eq(a, b),
            (Lessons::Failed(a), Lessons::Failed(b)) => a == b,
            _ => false,
        }
    }
}

/// What opening a lesson file is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum OpenStatus {
    Idle,
    /// A link's file is being fetched from this address.
    Fetching(String),
    Checking,
    /// The lesson is in the course.
    Opened {
        id: String,
        title: String,
    },
    /// The file's problems, each at its line.
    Failed(Vec<crate::lesson::LessonError>),
    /// The file could not be fetched or checked at all, and why, blaming no line of it.
    Unavailable(String),
}

/// Where the folder of lessons served beside the site stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Folder {
    /// Not asked for yet.
    Idle,
    /// Its index or files are on their way or being checked.
    Loading,
    /// Read: its lessons are in the course, and the problems of any that were not read.
    Read(Vec<String>),
}

/// The course in the page: the shipped lessons once fetched, the files the user opened (kept
/// in the browser), what opening one is doing, and the course made of both. It changes only
/// through [`Shelf::reduce`]; the page fetches, runs the checker's worker and writes local
/// storage, and reports each as an action.
#[derive(Clone, Debug)]
pub struct Shelf {
    pub lessons: Lessons,
    shipped: Rc<Vec<Loaded>>,
    /// Whether every shipped lesson is here: a lesson step's own lesson comes first, alone.
    shipped_all: bool,
    /// Why the rest of the shipped lessons did not come, after the first one had.
    pub missing: Option<String>,
    pub opened: OpenedFiles,
    pub open_status: OpenStatus,
    /// The folder of lessons served beside the site, and its lessons.
    pub folder: Folder,
    served: Rc<Vec<Loaded>>,
    /// What the learner has done.
    pub progress: Rc<Progress>,
}

/// The shipped lessons are compared by identity: they are fetched once and shared.
impl PartialEq for Shelf {
    fn eq(&self, o: &Self) -> bool {
        self.lessons == o.lessons
            && Rc::ptr_eq(&self.shipped, &o.shipped)
            && self.shipped_all == o.shipped_all
            && self.missing == o.missing
            && self.opened == o.opened
            && self.open_status == o.open_status
            && self.folder == o.folder
            && Rc::ptr_eq(&self.served, &o.served)
            && self.progress == o.progress
    }
}

/// Everything that changes the course in the page.
#[derive(Clone, Debug)]
pub enum ShelfAction {
    /// The shipped lessons were asked for.
    Fetching,
    /// The lesson a lesson step's address names came ahead of the others, so that the step
    /// shows without waiting for the whole course.
    FetchedLesson(Box<Loaded>),
    /// They came, all of them, or why not.
    Fetched(Result<Vec<Loaded>, String>),
    /// A link's file is being fetched from this address.
    FetchingFile(String),
    /// A file went to the checker.
    Checking,
    /// A file could not be fetched or checked, and why.
    Unavailable(String),
    /// A link's file is the one kept in this browser (unchanged, or the network is off).
    Kept(String),
    /// The folder's index and files were asked for.
    FolderLoading,
    /// The folder's lessons that were read, and the problems of those that were not.
    FolderRead(Vec<Loaded>, Vec<String>),
    /// The checker's answer on a file the user opened.
    Checked(Result<Box<(Loaded, OpenedFile)>, Vec<crate::lesson::LessonError>>),
    /// A file an earlier version stored, checked again from its text: kept quietly.
    Rechecked(Box<OpenedFile>),
    /// The user took a file's lesson away.
    Removed(String),
    /// The lesson view's state, to record what the learner has seen, met and solved.
    Record(Rc<LessonRun>),
}

impl ShelfAction {
    /// The action for the checker's answer on a file's text: the lesson opened (kept with the
    /// address it came from, if any), its problems, or why it could not be checked at all.
    pub fn from_reply(reply: CheckReply, text: &str, source: Option<String>) -> ShelfAction {
        match reply {
            CheckReply::Unavailable { why } => ShelfAction::Unavailable(why),
            reply => ShelfAction::Checked(reply.into_opened(text).map(|(loaded, mut file)| {
                file.source = source;
                Box::new((loaded, file))
            })),
        }
    }
}

impl Shelf {
    /// The course before anything is fetched, with the files and the progress the browser
    /// kept.
    pub fn new(opened: OpenedFiles, progress: Progress) -> Shelf {
        Shelf {
            lessons: Lessons::Idle,
            shipped: Rc::new(Vec::new()),
            shipped_all: false,
            missing: None,
            opened,
            open_status: OpenStatus::Idle,
            folder: Folder::Idle,
            served: Rc::new(Vec::new()),
            progress: Rc::new(progress),
        }
    }

    /// Whether every shipped lesson is here (or will not come).
    pub fn shipped_complete(&self) -> bool {
        self.shipped_all
    }

    /// Whether a lesson not in the course may still arrive: the course, the folder or a
    /// link's file is on its way, so a link to it waits instead of saying it is missing.
    pub fn waiting(&self) -> bool {
        matches!(self.lessons, Lessons::Idle | Lessons::Loading)
            || (matches!(self.lessons, Lessons::Ready(_)) && !self.shipped_all)
            || matches!(self.folder, Folder::Loading)
            || matches!(
                self.open_status,
                OpenStatus::Fetching(_) | OpenStatus::Checking
            )
    }

    /// The course of the shipped lessons and the opened files.
    fn course(&self) -> Arc<Course> {
        Arc::new(Course::of(
            self.shipped.as_ref().clone(),
            self.served.as_ref().clone(),
            self.opened.lessons(),
        ))
    }

    /// The course made again after the opened files changed, once the shipped ones are here.
    fn with_course(mut self) -> Shelf {
        if matches!(self.lessons, Lessons::Ready(_)) {
            self.lessons = Lessons::Ready(self.course());
        }
        self
    }

    pub fn reduce(&self, action: ShelfAction) -> Shelf {
        let mut next = self.clone();
        match action {
            ShelfAction::Fetching => {
                if matches!(self.lessons, Lessons::Idle) {
                    next.lessons = Lessons::Loading;
                }
            }
            ShelfAction::FetchedLesson(lesson) => {
                if !self.shipped_all {
                    next.shipped = Rc::new(vec![*lesson]);
                    next.lessons = Lessons::Ready(next.course());
                }
            }
            ShelfAction::Fetched(Ok(shipped)) => {
                next.shipped = Rc::new(shipped);
                next.shipped_all = true;
                next.lessons = Lessons::Ready(next.course());
            }
            // With a lesson already shown, it stays; the course says what is missing.
            ShelfAction::Fetched(Err(why)) => {
                next.shipped_all = true;
                if matches!(self.lessons, Lessons::Ready(_)) {
                    next.missing = Some(why);
                } else {
                    next.lessons = Lessons::Failed(why);
                }
            }
            ShelfAction::Checking => next.open_status = OpenStatus::Checking,
            ShelfAction::FetchingFile(url) => next.open_status = OpenStatus::Fetching(url),
            ShelfAction::Unavailable(why) => next.open_status = OpenStatus::Unavailable(why),
            ShelfAction::Kept(url) => {
                next.open_status = match self.opened.from_source(&url) {
                    Some(f) => OpenStatus::Opened {
                        id: f.id.clone(),
                        title: f.title(),
                    },
                    None => OpenStatus::Idle,
                }
            }
            ShelfAction::FolderLoading => next.folder = Folder::Loading,
            ShelfAction::FolderRead(lessons, problems) => {
                next.served = Rc::new(lessons);
                next.folder = Folder::Read(problems);
                return next.with_course();
            }
            ShelfAction::Checked(Ok(checked)) => {
                let (loaded, file) = *checked;
                next.open_status = OpenStatus::Opened {
                    id: loaded.lesson.id.clone(),
                    title: crate::lesson::narration::plain(&loaded.rich, &loaded.lesson.title),
                };
                next.opened = next.opened.with(file);
                return next.with_course();
            }
            ShelfAction::Checked(Err(errors)) => next.open_status = OpenStatus::Failed(errors),
            ShelfAction::Rechecked(file) => {
                next.opened = next.opened.with(*file);
                return next.with_course();
            }
            ShelfAction::Removed(id) => {
                next.opened = next.opened.without(&id);
                next.open_status = OpenStatus::Idle;
                return next.with_course();
            }
            ShelfAction::Record(run) => {
                let recorded = self.progress.record(&run);
                // The same progress keeps its identity, so nothing redraws or is written.
                if recorded != *self.progress {
                    next.progress = Rc::new(recorded);
                }
            }
        }
        next
    }
}

/// A short Markdown text as plain words where its rendering is not at hand (an opened file's
/// title, read before the file is): code spans and emphasis lose their marks.
fn plain(markdown: &str) -> String {
    markdown
        .chars()
        .filter(|c| !matches!(c, '`' | '*'))
        .collect::<String>()
}
