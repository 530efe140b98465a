//! What the learner has done, kept in the browser between visits: [`Progress`], each lesson's
//! [`LessonProgress`], the storage keys of both and of the learner's name, and the hand-written
//! reader. Kept apart because it is a stored format that every later version of the page must
//! read back; the rest of the course only records into it.

use crate::sorted::{SortedMap, SortedSet};

use serde::Serialize;
use serde_json::Value;

use super::{place_id, places, LessonRun, Place};
use crate::json::Obj;
use crate::lesson::{Edit, Lesson};

/// The local storage key of the learner's progress.
pub const PROGRESS_KEY: &str = "lockstep.progress.v1";

/// Where the learner's name for completion codes is kept (the page's, and `lockstep room`'s
/// script reads it).
pub const NAME_KEY: &str = "lockstep-learner-name";

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
