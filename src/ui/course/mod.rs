//! The course and the lesson view's state, pure like the rest of `ui`.
//!
//! A [`Course`] is the lessons the app loaded (the shipped ones from the compact form, and any
//! file the user opened). A [`LessonRun`] is what the lesson view adds to an [`App`]: which
//! step or exercise is shown, when each cue's event happens in the run, whether the gate is
//! met, the learner's edits, the hints revealed and the last check. The run itself, the
//! verdict and the playhead are the [`App`]'s, so the lesson view draws the same timeline and
//! verdict as the sandbox and every change still goes through [`App::reduce`].
//!
//! This file holds the course itself: its lessons, their places, and the pictures of the
//! places' runs. The rest has a file each: `run.rs` (the lesson view's state and its actions),
//! `progress.rs` (what the learner has done, kept in the browser), `files.rs` (lesson files
//! checked, opened and kept) and `shelf.rs` (the course in the page and its reducer). Their
//! public items are re-exported here, so every path is `ui::course::NAME`.

mod files;
mod progress;
mod run;
mod shelf;

pub use files::{
    check_lesson_file, open_lesson_file, CheckReply, OpenedFile, OpenedFiles, OPENED_KEY,
    OPENED_MAX,
};
pub use progress::{LessonProgress, Progress, NAME_KEY, PROGRESS_KEY};
pub use run::{readable_zoom, Attempt, Judged, LessonAction, LessonRun, READABLE_SPANS};
pub use shelf::{Folder, Lessons, OpenStatus, Shelf, ShelfAction};

use crate::sorted::SortedMap;
use std::sync::Arc;

use super::{App, Outcome};
use crate::lesson::narration::Block;
use crate::lesson::wire::{Loaded, StepText};
use crate::lesson::Lesson;
use crate::scenario::Scenario;

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
/// the legend below. The place's preview ([`crate::ui::preview`]) shows it beside the
/// narration while the place's simulator loads, so what a reader sees first is the run the
/// simulator then shows; the handout shows it beside each step. The pictures carry no scenario text, which the lesson's file holds.
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

pub use crate::lesson::{seeds_text, seeds_words};
