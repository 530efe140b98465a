//! The facilitator's two printouts, as data: the participants' handout and the answer key.
//!
//! The handout is what a room may see before it starts: every lesson in order as an outline of
//! its steps, and each exercise with its goal, the controls it is about and its hints. It never carries an answer: no solution, no other passing answer,
//! no explanation of one and no misconception (a misconception's example is a wrong answer, and
//! its hint gives the right one away). The answer key carries all of that. Which one a sheet
//! is decides here, natively tested, so the view only draws what it is given.

use crate::lesson::edit::words as edits;
use crate::lesson::Lesson;

/// Which printout the facilitator's view shows and prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Printout {
    /// Every exercise with its answers, for the facilitator.
    #[default]
    Key,
    /// Goals, controls and hints, for the participants.
    Handout,
}

impl Printout {
    /// The sheet's title, on screen and on paper.
    pub fn title(self) -> &'static str {
        match self {
            Printout::Key => "Answer key",
            Printout::Handout => "Handout for participants",
        }
    }
}

/// One sheet: the lessons in the course's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sheet {
    pub printout: Printout,
    pub lessons: Vec<SheetLesson>,
}

/// A lesson on a sheet.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetLesson {
    pub id: String,
    pub title: String,
    pub summary: String,
    /// The steps' titles, in order: the lesson's outline, on the handout only.
    pub outline: Vec<String>,
    pub exercises: Vec<SheetExercise>,
}

/// An exercise on a sheet. Its title, goal and hints are the lesson's Markdown, which the view
/// shows rendered ([`crate::lesson::narration::shown`]); the rest is words made here.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetExercise {
    pub id: String,
    pub title: String,
    pub goal: String,
    /// The controls the exercise lets the learner change, in words ("how online locks").
    pub controls: Vec<String>,
    /// The seeds the check runs, in words.
    pub seeds: String,
    pub hints: Vec<String>,
    /// The answers, on the key only.
    pub answers: Option<Answers>,
}

/// What only the answer key shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Answers {
    /// The author's solution, its edits in the words of the controls that make them
    /// ([`crate::lesson::Edit::words`]).
    pub solution: String,
    /// Other answers that pass, in the same words.
    pub alternatives: Vec<String>,
    pub explanation: String,
    /// Each known wrong approach: its edits in words, and what the app says to it.
    pub misconceptions: Vec<(String, String)>,
}

/// The sheet of a printout for lessons in the course's order. The key lists only the lessons
/// with exercises, as the facilitator's page always has; the handout lists every lesson, so
/// the participants see the whole course.
pub fn sheet<'a>(lessons: impl IntoIterator<Item = &'a Lesson>, printout: Printout) -> Sheet {
    let lessons = lessons
        .into_iter()
        .filter(|l| printout == Printout::Handout || !l.exercises.is_empty())
        .map(|l| SheetLesson {
            id: l.id.clone(),
            title: l.title.clone(),
            summary: l.summary.clone(),
            outline: if printout == Printout::Handout {
                l.steps.iter().map(|s| s.title.clone()).collect()
            } else {
                Vec::new()
            },
            exercises: l
                .exercises
                .iter()
                .map(|e| SheetExercise {
                    id: e.id.clone(),
                    title: e.title.clone(),
                    goal: e.goal.clone(),
                    controls: e.controls.iter().map(|c| c.words()).collect(),
                    seeds: super::course::seeds_words(&e.seeds),
                    hints: e.hints.clone(),
                    answers: (printout == Printout::Key).then(|| Answers {
                        solution: edits(&e.solution, &e.scenario),
                        alternatives: e
                            .alternatives
                            .iter()
                            .map(|a| edits(a, &e.scenario))
                            .collect(),
                        explanation: e.explanation.clone(),
                        misconceptions: e
                            .misconceptions
                            .iter()
                            .map(|m| (edits(&m.example, &e.scenario), m.hint.clone()))
                            .collect(),
                    }),
                })
                .collect(),
        })
        .collect();
    Sheet { printout, lessons }
}
