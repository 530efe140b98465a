//! The facilitator's two printouts, as data: the participants' handout and the answer key.
//!
//! The handout ([`handout`]) is what a room may see before it starts, for the lessons the
//! facilitator chose: each step's title, its narration rendered, the picture of its run and
//! its link; each exercise's goal, the controls it is about, room to write, its link and, when
//! asked for, its first hint. It never carries an answer: no solution, no other passing answer,
//! no explanation of one, no misconception (a misconception's example is a wrong answer, and
//! its hint gives the right one away), no later hint (the last ones give the answer) and no
//! picture of a run whose prediction the step asks (the run is the answer). The answer key
//! ([`key`]) carries all of that. The same [`handout`] is what the facilitator's view draws
//! and what `lockstep lesson handout` writes, so the two cannot differ; what each sheet
//! carries is decided here, natively tested, and the views only draw it.
//!
//! The facilitator's choices (which sheet, which lessons, the first hint or none, the links'
//! address) are a state of their own with its reducer ([`Choice`]).

use super::course::{place_picture_name, seeds_words, CourseLesson, Origin};
use super::route::{is_id, Route};
use crate::lesson::edit::words as edits;
use crate::lesson::narration::{shown, Block, Inline};
use crate::lesson::Lesson;

/// Which printout the facilitator's view shows and prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Printout {
    /// Every exercise with its answers, for the facilitator.
    #[default]
    Key,
    /// The chosen lessons' steps and exercises, without answers, for the participants.
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

/// The answer key: the lessons in the course's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sheet {
    pub lessons: Vec<SheetLesson>,
}

/// A lesson on the answer key.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetLesson {
    pub id: String,
    pub title: String,
    pub summary: String,
    pub exercises: Vec<SheetExercise>,
}

/// An exercise on the answer key. Its title, goal and hints are the lesson's Markdown, which
/// the view shows rendered ([`crate::lesson::narration::shown`]); the rest is words made here.
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
    pub answers: Answers,
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

/// The answer key for lessons in the course's order: the lessons with exercises, each
/// exercise with its hints and every answer.
pub fn key<'a>(lessons: impl IntoIterator<Item = &'a Lesson>) -> Sheet {
    let lessons = lessons
        .into_iter()
        .filter(|l| !l.exercises.is_empty())
        .map(|l| SheetLesson {
            id: l.id.clone(),
            title: l.title.clone(),
            summary: l.summary.clone(),
            exercises: l
                .exercises
                .iter()
                .map(|e| SheetExercise {
                    id: e.id.clone(),
                    title: e.title.clone(),
                    goal: e.goal.clone(),
                    controls: e.controls.iter().map(|c| c.words()).collect(),
                    seeds: seeds_words(&e.seeds),
                    hints: e.hints.clone(),
                    answers: Answers {
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
                    },
                })
                .collect(),
        })
        .collect();
    Sheet { lessons }
}

/// What the handout tells its reader first, on paper and on screen.
pub const HANDOUT_INTRO: &str = "Open each step and exercise at its link. A step shows a run \
    to watch; an exercise asks you to change only the controls it names, then press Check, \
    which runs the engine on every seed listed and says whether the goal is met on all of them. \
    Hints come one at a time in the app. A solved exercise gives you a completion code: give it \
    to your facilitator.";

/// Which lessons' steps have their run's picture on the handout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pictures {
    /// The shipped lessons' alone: the page shows the course's files
    /// (`course/LESSON.STEP.run.svg`, [`super::course::place_pictures`]), which a lesson from
    /// the site's folder or one opened in the browser does not have.
    Shipped,
    /// Every lesson's: `lockstep lesson handout` draws each picture it names.
    Every,
}

/// The participants' handout: the chosen lessons in the course's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Handout {
    pub lessons: Vec<HandoutLesson>,
}

/// A lesson on the handout. Its texts are rendered: short texts as inlines
/// ([`crate::lesson::narration::shown`]), narration as blocks, so a view draws them as they
/// are and never shows the lesson's Markdown.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoutLesson {
    pub id: String,
    pub title: Vec<Inline>,
    pub summary: Vec<Inline>,
    /// The whole address of the lesson's first step.
    pub link: String,
    pub steps: Vec<HandoutStep>,
    pub exercises: Vec<HandoutExercise>,
}

/// A step on the handout.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoutStep {
    pub id: String,
    /// Its place in the lesson, from 1.
    pub number: usize,
    pub title: Vec<Inline>,
    pub narration: Vec<Block>,
    /// The file name of the picture of the run the step opens with
    /// ([`super::course::place_picture_name`]); none for a step that asks a prediction (its
    /// run is the answer) or, with [`Pictures::Shipped`], a lesson that is not shipped.
    pub picture: Option<String>,
    /// The prediction the step asks before its run plays: the question and its choices.
    pub question: Option<(Vec<Inline>, Vec<Vec<Inline>>)>,
    /// What the step asks the reader to change ("Your turn"), never how.
    pub task: Option<Vec<Inline>>,
    /// The step's whole address.
    pub link: String,
}

/// An exercise on the handout.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoutExercise {
    pub id: String,
    pub title: Vec<Inline>,
    pub narration: Vec<Block>,
    pub goal: Vec<Inline>,
    /// The controls the exercise lets the learner change, in words.
    pub controls: Vec<String>,
    /// The seeds the check runs, in words.
    pub seeds: String,
    /// The first hint, when the facilitator asked for it; never a later one.
    pub hint: Option<Vec<Inline>>,
    /// The exercise's whole address.
    pub link: String,
}

/// The handout of the `chosen` lessons (by id) of `lessons` (in the course's order), with each
/// exercise's first hint when `first_hint`, its links at `base` (a site's address, as
/// [`link_base`] accepts it). Ids that name no lesson are left out.
pub fn handout(
    lessons: &[CourseLesson],
    chosen: &[String],
    first_hint: bool,
    base: &str,
    pictures: Pictures,
) -> Handout {
    let link =
        |lesson: &str, place: &str| format!("{base}{}", Route::place(lesson, place).to_hash());
    let lessons = lessons
        .iter()
        .filter(|cl| chosen.contains(&cl.lesson.id))
        .map(|cl| {
            let l = &cl.lesson;
            let text = |t: &str| shown(&cl.rich, t);
            let pictured = pictures == Pictures::Every || cl.origin == Origin::Shipped;
            HandoutLesson {
                id: l.id.clone(),
                title: text(&l.title),
                summary: text(&l.summary),
                link: format!(
                    "{base}{}",
                    Route::Lesson {
                        lesson: l.id.clone(),
                        place: None
                    }
                    .to_hash()
                ),
                steps: l
                    .steps
                    .iter()
                    .enumerate()
                    .map(|(k, s)| HandoutStep {
                        id: s.id.clone(),
                        number: k + 1,
                        title: text(&s.title),
                        narration: cl
                            .steps
                            .get(k)
                            .map(|t| t.narration.clone())
                            .unwrap_or_default(),
                        picture: (pictured && s.prediction.is_none())
                            .then(|| place_picture_name(&l.id, &s.id)),
                        question: s.prediction.as_ref().map(|p| {
                            (
                                text(&p.question),
                                p.choices.iter().map(|c| text(&c.text)).collect(),
                            )
                        }),
                        task: s.gate.as_ref().map(|g| text(&g.prompt)),
                        link: link(&l.id, &s.id),
                    })
                    .collect(),
                exercises: l
                    .exercises
                    .iter()
                    .enumerate()
                    .map(|(k, e)| HandoutExercise {
                        id: e.id.clone(),
                        title: text(&e.title),
                        narration: cl.exercises.get(k).cloned().unwrap_or_default(),
                        goal: text(&e.goal),
                        controls: e.controls.iter().map(|c| c.words()).collect(),
                        seeds: seeds_words(&e.seeds),
                        hint: e.hints.first().filter(|_| first_hint).map(|h| text(h)),
                        link: link(&l.id, &e.id),
                    })
                    .collect(),
            }
        })
        .collect();
    Handout { lessons }
}

/// The longest link base accepted, in characters.
pub const LINK_BASE_CHARS_MAX: usize = 512;

/// A site's address as the handout's links start with it: an `http:` or `https:` address
/// with a host and no fragment (the links add theirs), `/` added after a bare host. The
/// command line's `--link-base` and the facilitator's field are read by this one function.
pub fn link_base(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "write the address the room opens the site at, as http://10.0.0.5:8000/".into(),
        );
    }
    if text.chars().count() > LINK_BASE_CHARS_MAX {
        return Err(format!(
            "the address is longer than {LINK_BASE_CHARS_MAX} characters"
        ));
    }
    let lower = text.to_ascii_lowercase();
    let Some(rest) = ["http://", "https://"]
        .iter()
        .find_map(|s| lower.starts_with(s).then(|| &text[s.len()..]))
    else {
        return Err(format!(
            "\"{text}\" is not a web address: it must start with http:// or https://"
        ));
    };
    if let Some(c) = text.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "\"{text}\" has a {} in it; an address has none",
            if c.is_whitespace() {
                "space"
            } else {
                "control character"
            }
        ));
    }
    if text.contains('#') {
        return Err(format!(
            "\"{text}\" has a # in it: give the site's address alone, the links add the rest"
        ));
    }
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("\"{text}\" names no host"));
    }
    Ok(if rest.contains(['/', '?']) {
        text.to_string()
    } else {
        format!("{text}/")
    })
}

/// The most lessons a handout can be chosen from: a course's shipped lessons, its folder's and
/// those opened in the browser.
pub const CHOSEN_MAX: usize = 64;

/// What the facilitator chose to show and print: the sheet and, for the handout, its lessons,
/// whether each exercise's first hint is on it, and the address its links start with.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub printout: Printout,
    /// The chosen lessons' ids, in the order chosen (the handout has them in the course's).
    pub lessons: Vec<String>,
    pub first_hint: bool,
    /// The links' address as typed.
    pub link_base: String,
    /// The page's own address: the link base until another is typed.
    pub page: String,
}

/// A change the facilitator makes to a [`Choice`].
#[derive(Clone, Debug, PartialEq)]
pub enum ChoiceAction {
    Show(Printout),
    /// A lesson put on the handout (`true`) or taken off it.
    Lesson(String, bool),
    FirstHint(bool),
    /// The link base typed so far.
    LinkBase(String),
}

impl Choice {
    /// The facilitator's view as it opens: the answer key, and a handout with no lesson yet,
    /// no hint and links to `page`, the page's own address.
    pub fn new(page: &str) -> Choice {
        Choice {
            printout: Printout::Key,
            lessons: Vec::new(),
            first_hint: false,
            link_base: page.to_string(),
            page: page.to_string(),
        }
    }

    pub fn reduce(&self, action: ChoiceAction) -> Choice {
        let mut next = self.clone();
        match action {
            ChoiceAction::Show(p) => next.printout = p,
            ChoiceAction::Lesson(id, on) => {
                next.lessons.retain(|l| *l != id);
                if on && is_id(&id) && next.lessons.len() < CHOSEN_MAX {
                    next.lessons.push(id);
                }
            }
            ChoiceAction::FirstHint(on) => next.first_hint = on,
            // Kept a character longer than the longest accepted, so that it is refused for
            // its length rather than cut to one that reads.
            ChoiceAction::LinkBase(text) => {
                next.link_base = text.chars().take(LINK_BASE_CHARS_MAX + 1).collect()
            }
        }
        next
    }

    /// Whether a lesson is on the handout.
    pub fn has(&self, id: &str) -> bool {
        self.lessons.iter().any(|l| l == id)
    }

    /// The address the handout's links start with: the one typed, or the page's own while the
    /// field holds it, or an address that does not read (then the handout links to the page's).
    pub fn base(&self) -> Result<String, String> {
        if self.link_base == self.page {
            return Ok(self.page.clone());
        }
        link_base(&self.link_base)
    }

    /// The handout these choices make of a course's lessons: its links at [`Choice::base`],
    /// the page's own address while the one typed does not read.
    pub fn handout(&self, lessons: &[CourseLesson]) -> Handout {
        let base = self.base().unwrap_or_else(|_| self.page.clone());
        handout(
            lessons,
            &self.lessons,
            self.first_hint,
            &base,
            Pictures::Shipped,
        )
    }
}
