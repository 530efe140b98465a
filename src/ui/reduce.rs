//! The one reducer: [`App::reduce`] and the work of each group of actions (the scenario and
//! its text, playback, how the run is seen, runs opened from elsewhere, a lesson's actions).
//! Kept apart from the state it acts on (`mod.rs`), so that what every action does reads in
//! one place.

use std::rc::Rc;
use std::sync::Arc;

use super::codec::builtin_of;
use super::course::LessonAction;
use super::toggles::{self, Settings, Toggle};
use super::{lab, Action, App, Outcome, Pinned, RecordingFile, BLANK, SPEEDS, ZOOM_MAX};
use crate::scenario::{Scenario, ScenarioError};
use crate::world::Micros;

impl App {
    /// Applies an action. The engine re-runs whenever the scenario changes.
    pub fn reduce(&self, action: Action) -> App {
        // Any change the user makes to the scenario ends the "opened from a link" state, so
        // from then on the app saves as usual.
        // A reader's answer changes it only when it is about the text shown; a stale one is
        // ignored, and must not end a link's state either (the link's run would be saved over
        // the user's own text).
        let changes_scenario = match &action {
            Action::Read { text, .. } => self.reading && *text == self.text,
            _ => false,
        } || matches!(
            action,
            Action::Pick(_)
                | Action::Toggle(_)
                | Action::Edit(_)
                | Action::RestoreText
                | Action::DiscardEdit
                | Action::NewSeed
                | Action::Import { .. }
                | Action::OpenRecording(_)
                | Action::Show { .. }
        );
        if self.waits_for_answer(&action) {
            return self.clone();
        }
        let mut next = self.reduce_inner(action);
        if changes_scenario {
            next.linked = false;
            next.link_note = None;
        }
        let new_run = !Rc::ptr_eq(&next.outcome, &self.outcome);
        if next.text != self.text || new_run {
            next.revision = self.revision.wrapping_add(1);
        }
        // In a lesson, the cues, the highlights and the gate are read from the run, so a new
        // run recomputes them (and a check made on the old run no longer stands).
        if new_run {
            if let Some(run) = next.lesson.take() {
                let mut run = (*run).clone();
                (run.course.ops.follow_run)(&mut run, &next.scenario, &next.outcome);
                next.lesson = Some(Rc::new(run));
            }
        }
        // A prediction is answered once the playhead reaches the run's end, and judged then,
        // on that run.
        if let Some(run) = &next.lesson {
            if run.committed() && !run.revealed && next.time >= next.outcome.end {
                let mut run = (**run).clone();
                (run.course.ops.reveal)(&mut run, &next.scenario, &next.outcome);
                next.lesson = Some(Rc::new(run));
            }
        }
        next
    }

    /// Whether an action would show part of the run, or change it, while a lesson step still
    /// waits for the learner's prediction: the question comes first, so the playhead stays at
    /// the start and the controls wait.
    fn waits_for_answer(&self, action: &Action) -> bool {
        self.lesson.as_ref().is_some_and(|r| r.awaiting_answer())
            && matches!(
                action,
                Action::StepForward
                    | Action::ToEnd
                    | Action::Seek(_)
                    | Action::Cursor(_)
                    | Action::Jump(_)
                    | Action::PlayPause
                    | Action::Tick(_)
                    | Action::Select(_)
                    | Action::Pin { .. }
                    | Action::Compare(_)
                    | Action::Toggle(_)
            )
    }

    /// Applies an action to a copy of the app, without what [`App::reduce`] does around every
    /// action. The actions come in groups, each with its functions below in this order: the
    /// scenario and its text, playback, how the run is seen, and runs opened from elsewhere.
    pub(super) fn reduce_inner(&self, action: Action) -> App {
        let mut next = self.clone();
        match action {
            // The scenario and its text.
            Action::Pick(source) => return self.pick(&source),
            Action::Toggle(t) => next.toggle(t),
            Action::Edit(text) => next.edit(text),
            Action::Read { text, result } => next.read(text, result),
            Action::RestoreText => {
                if let Some(text) = next.replaced_text.take() {
                    return next.reduce_inner(Action::Edit(text));
                }
            }
            Action::DiscardEdit => {
                next.text = next.valid_text.clone();
                next.errors.clear();
                next.reading = false;
            }
            Action::NewSeed => {
                let seed = toggles::next_seed(next.scenario.seed);
                return next.reduce_inner(Action::Toggle(Toggle::Seed(seed)));
            }
            // Playback.
            Action::StepForward => next.step_forward(),
            Action::StepBack => {
                next.playing = false;
                next.set_cursor(next.cursor.saturating_sub(1));
            }
            Action::ToStart => {
                next.playing = false;
                next.set_cursor(0);
            }
            Action::ToEnd => {
                next.playing = false;
                next.set_cursor(next.outcome.events.len());
                next.time = next.outcome.end;
            }
            Action::Seek(t) => next.seek(t),
            Action::Cursor(k) => {
                next.playing = false;
                next.set_cursor(k);
            }
            Action::Jump(d) => next.jump(d),
            Action::PlayPause => {
                next.playing = !next.playing;
                if next.playing && next.time >= next.outcome.end {
                    next.seek(0);
                }
            }
            Action::Tick(real_ms) => next.tick(real_ms),
            Action::Speed(s) => {
                if s.is_finite() && s > 0.0 {
                    next.speed = s;
                }
            }
            Action::SpeedStep(d) => next.speed_step(d),
            // How the run is seen.
            // A recording has no flipped twin: the flip would be simulated, and a difference
            // between a real run and a simulated one is not the flip's.
            Action::Compare(Some(_)) if next.outcome.recorded.is_some() => {
                next.notice = Some(
                    "A recording cannot be compared with a flipped run: change a control to simulate the scenario, then compare."
                        .to_string(),
                );
            }
            Action::Compare(t) => next.compare_flip(t),
            Action::Select(e) => {
                next.selected = e.filter(|i| *i < next.outcome.events.len());
                next.selected_flipped = None;
                next.pinned = None;
            }
            Action::SelectFlipped(e) => next.select_flipped(e),
            Action::OwnOrder(on) => next.own_order = on,
            Action::Zoom(z) => {
                next.zoom = z.clamp(1, ZOOM_MAX);
                next.follow();
            }
            Action::DismissNotice => next.notice = None,
            Action::Pin { pin, seek } => next.pin(pin, seek),
            Action::Legend(on) => next.legend = on,
            // Runs opened from elsewhere.
            Action::Lesson(a) => return self.reduce_lesson(a),
            Action::OpenLink(link) => return self.open_link(&link),
            Action::LinkFailed(why) => {
                next.notice = Some(format!(
                    "This link cannot be opened: {why}. The page shows the scenario it had."
                ));
            }
            Action::Import { scenario, what } => next.import(*scenario, &what),
            Action::OpenRecording(RecordingFile(recording)) => next.open_recording(&recording),
            Action::ShowCounterexample {
                property,
                steps,
                replayed,
            } => next.show_counterexample(&property, &steps, &replayed),
            Action::Show { scenario, notice } => next.show(*scenario, notice),
        }
        next
    }

    /// [`Action::Pick`]: the picked source opened afresh, seen as the app was.
    fn pick(&self, source: &str) -> App {
        let mut opened = App::open_with(self.codec, source);
        opened.speed = self.speed;
        opened.own_order = self.own_order;
        opened.zoom = self.zoom;
        opened.legend = self.legend;
        opened.revision = self.revision;
        opened.follow();
        opened
    }

    /// [`Action::Toggle`]: a control's value applied to the scenario as opened.
    fn toggle(&mut self, t: Toggle) {
        // A lesson step offers only some controls; the view shows no others, and a
        // toggle of another control (a stray key, a stale form) changes nothing.
        if self.lesson.as_ref().is_some_and(|l| !l.allows(&t)) {
            return;
        }
        // Toggles act on the scenario that ran. While the text has errors they would
        // overwrite the user's unfinished edit, so they wait until it is fixed or
        // discarded (the page disables them and says why). An edit still being read is
        // replaced like any other text, and can be restored.
        if !self.errors.is_empty() {
            return;
        }
        // The scenario is the controls' values applied afresh to the scenario as
        // opened, so no earlier value of any control lingers in it.
        let settings = self.settings.with(t.clone());
        let scenario = settings.apply(&self.base);
        // A toggle that would break a rule (a number out of range, a chain without its
        // subordinate) changes nothing: its errors are shown beside the toggles, and
        // the text and the run stay as they were.
        if let Err(e) = scenario.validate() {
            self.toggle_errors = e.0;
            return;
        }
        self.toggle_errors.clear();
        let canonical = (self.codec.write)(&self.scenario);
        if self.text != canonical {
            self.replaced_text = Some(std::mem::take(&mut self.text));
        }
        self.text = (self.codec.write)(&scenario);
        self.reading = false;
        self.settings = settings;
        self.set_run(scenario);
        if let Some(run) = self.lesson.take() {
            let mut run = (*run).clone();
            run.edits = self.settings.toggles();
            self.lesson = Some(Rc::new(run));
        }
    }

    /// [`Action::Edit`]: the editor's text, run when it reads.
    fn edit(&mut self, text: String) {
        self.text = text;
        self.replaced_text = None;
        self.toggle_errors.clear();
        self.reading = false;
        if self.codec.deferred {
            // The last valid text is the scenario that runs; any other waits for the
            // reader, and the run stays as it is until then.
            if self.text == self.valid_text {
                self.errors.clear();
            } else {
                self.reading = true;
            }
        } else {
            match (self.codec.read)(&self.text) {
                Ok(scenario) => self.set_scenario(scenario),
                Err(e) => self.errors = e.0,
            }
        }
    }

    /// [`Action::Read`]: the reader's answer, if it is about the text that waits for it.
    fn read(&mut self, text: String, result: Result<Box<Scenario>, Vec<ScenarioError>>) {
        if self.reading && text == self.text {
            self.reading = false;
            match result {
                Ok(scenario) => self.set_scenario(*scenario),
                Err(e) => self.errors = e,
            }
        }
    }

    /// [`Action::StepForward`].
    fn step_forward(&mut self) {
        self.playing = false;
        // Past the last event there is nothing to step to; stepping must never move
        // the playhead back to the last event's time.
        if self.cursor < self.outcome.events.len() {
            self.set_cursor(self.cursor + 1);
        }
    }

    /// [`Action::Jump`]: a tenth of the run forward or back.
    fn jump(&mut self, d: i32) {
        let tenth = (self.outcome.end / 10).max(1) as i128;
        let t = (self.time as i128 + tenth * i128::from(d)).max(0);
        self.seek(t.min(i128::from(u64::MAX)) as Micros);
    }

    /// [`Action::Tick`]: the playhead moved on by the real time that passed, while playing.
    fn tick(&mut self, real_ms: f64) {
        if self.playing {
            let advance = (real_ms.max(0.0) * 1_000.0 * self.speed) as Micros;
            let t = self.time.saturating_add(advance.max(1));
            if t >= self.outcome.end {
                self.playing = false;
            }
            self.seek(t);
        }
    }

    /// [`Action::SpeedStep`]: one step through [`SPEEDS`].
    fn speed_step(&mut self, d: i32) {
        let i = SPEEDS
            .iter()
            .position(|s| *s >= self.speed)
            .unwrap_or(SPEEDS.len() - 1) as i32;
        self.speed = SPEEDS[i.saturating_add(d).clamp(0, SPEEDS.len() as i32 - 1) as usize];
    }

    /// [`Action::Compare`] of a simulated run: the flipped run beside it, or none.
    fn compare_flip(&mut self, t: Option<Toggle>) {
        self.compare = t.map(|t| {
            // A fencing change without checks means the current ones, as the
            // controls' flips always say.
            let t = t.toggle(&self.scenario);
            let label = toggles::flips(&self.scenario)
                .into_iter()
                .find(|(_, x)| *x == t)
                .map(|(l, _)| l)
                .unwrap_or_else(|| t.to_string());
            self.comparison(t, label)
        });
        self.selected_flipped = None;
    }

    /// [`Action::SelectFlipped`]: an event of the compared run, if it has one there.
    fn select_flipped(&mut self, e: Option<usize>) {
        let n = self
            .compare
            .as_ref()
            .and_then(|c| c.result.as_ref().ok())
            .map_or(0, |(b, _)| b.events.len());
        self.selected_flipped = e.filter(|i| *i < n);
        self.selected = None;
    }

    /// [`Action::Pin`]: an overlap's or a note's card shown, the playhead moved into it on
    /// `seek`.
    fn pin(&mut self, pin: Pinned, seek: bool) {
        let layout = Rc::clone(&self.outcome.layout);
        let target = match pin {
            Pinned::Overlap(k) => layout
                .overlaps
                .get(k)
                .map(|o| (o.from + (o.to - o.from) / 2, None)),
            Pinned::Note(k) => layout.notes.get(k).map(|n| (n.tag_at(), Some(n.event))),
        };
        if let Some((t, event)) = target {
            if seek {
                self.seek(t);
            }
            self.selected = event.or(self.selected);
            self.selected_flipped = None;
            self.pinned = Some(pin);
        }
    }

    /// [`Action::Import`]: an imported scenario, run in place of the one shown.
    fn import(&mut self, scenario: Scenario, what: &str) {
        self.text = (self.codec.write)(&scenario);
        self.replaced_text = None;
        self.toggle_errors.clear();
        // A run that is a built-in with its controls changed keeps the built-in's name,
        // so the picker says where it came from and Reset goes back there.
        self.source = builtin_of(self.codec, &scenario)
            .unwrap_or(BLANK)
            .to_string();
        self.set_scenario(scenario);
        self.notice = Some(format!("Imported a {what}."));
    }

    /// [`Action::OpenRecording`]: a recorded run shown with its scenario in the controls.
    fn open_recording(&mut self, recording: &crate::recording::Recording) {
        let scenario = recording.source.scenario.clone();
        self.text = (self.codec.write)(&scenario);
        self.replaced_text = None;
        self.toggle_errors.clear();
        self.errors.clear();
        self.reading = false;
        self.valid_text = self.text.clone();
        self.source = builtin_of(self.codec, &scenario)
            .unwrap_or(BLANK)
            .to_string();
        self.base = scenario.clone();
        self.settings = Settings::default();
        self.scenario = scenario;
        self.outcome = Rc::new(Outcome::of_recording(recording.clone()));
        self.compare = None;
        self.selected = None;
        self.selected_flipped = None;
        self.pinned = None;
        self.set_cursor(0);
        self.time = 0;
        self.follow();
        self.notice = Some(
            "Opened a recording from real services. Its controls show the scenario it played; changing any of them simulates that scenario instead."
                .to_string(),
        );
    }

    /// [`Action::ShowCounterexample`]: the explorer's replayed path shown as the run, if it
    /// is still this scenario's.
    fn show_counterexample(&mut self, property: &str, steps: &[u64], replayed: &lab::Replayed) {
        let run = if replayed.0 .0 != self.scenario {
            Err("the scenario changed since it was found".to_string())
        } else {
            replayed.0 .1.clone()
        };
        match run {
            Ok(run) => {
                self.outcome = Rc::new(Outcome::of_run(&self.scenario, run, None));
                self.compare = None;
                self.selected = None;
                self.selected_flipped = None;
                self.pinned = None;
                self.set_cursor(self.outcome.events.len());
                self.time = self.outcome.end;
                self.follow();
                self.notice = Some(format!(
                    "The shortest way this scenario breaks {property}: {} steps found by exploring every interleaving (time is abstract here: any enabled step may come next). Any change runs the scenario normally again.",
                    steps.len()
                ));
            }
            Err(why) => {
                self.notice = Some(format!("The counterexample cannot be shown: {why}."));
            }
        }
    }

    /// [`Action::Show`]: another scenario run from the start, with where it came from.
    fn show(&mut self, scenario: Scenario, notice: String) {
        self.text = (self.codec.write)(&scenario);
        self.replaced_text = None;
        self.toggle_errors.clear();
        self.set_scenario(scenario);
        self.set_cursor(0);
        self.notice = Some(notice);
    }

    /// A lesson's action, done by the course's own code
    /// ([`course::LessonOps::reduce`](super::course::LessonOps::reduce)), so that a bundle
    /// without lessons links none of it.
    fn reduce_lesson(&self, action: LessonAction) -> App {
        let ops = match (&action, &self.lesson) {
            (LessonAction::Open { course, .. }, _) => course.ops,
            (_, Some(run)) => run.course.ops,
            (_, None) => return self.clone(),
        };
        (ops.reduce)(self, action)
    }

    /// [`App::reduce_lesson`]'s work: see
    /// [`course::LessonOps::reduce`](super::course::LessonOps::reduce).
    pub(crate) fn do_lesson_action(&self, action: LessonAction) -> App {
        let mut next = self.clone();
        if let LessonAction::Open {
            course,
            index,
            place,
            resume,
        } = action
        {
            let mut opened = (course.ops.open)(Arc::clone(&course), index, place);
            // The new place is shown at its own zoom (the whole run), so the zoom control
            // must read 1 too; speed and the legend are the learner's preferences.
            opened.speed = self.speed;
            opened.legend = self.legend;
            opened.revision = self.revision.wrapping_add(1);
            // Values that met the gate before are set again, through the same controls (a
            // value the step no longer offers changes nothing).
            for e in resume {
                opened = opened.reduce(Action::Toggle(e));
            }
            // The learner's name goes with them from place to place.
            if let (Some(was), Some(run)) = (&self.lesson, opened.lesson.as_mut()) {
                Rc::make_mut(run).name = was.name.clone();
            }
            return opened;
        }
        let Some(run) = next.lesson.take() else {
            return next;
        };
        let mut run = (*run).clone();
        match action {
            LessonAction::Open { .. } => {}
            LessonAction::Check => (run.course.ops.check)(&mut run, &next.scenario),
            LessonAction::Hint => {
                let n = run.exercise().map_or(0, |e| e.hints.len());
                run.hints = (run.hints + 1).min(n);
            }
            LessonAction::ShowSolution => run.solution = true,
            LessonAction::Predict(k) => {
                let choices = run
                    .step()
                    .and_then(|s| s.prediction.as_ref())
                    .map_or(0, |p| p.choices.len());
                // A prediction is made once: the choices are gone once one is taken.
                if k < choices && !run.committed() {
                    run.predicted = Some(k);
                    // The answer is the run: it plays from the start.
                    next.seek(0);
                    next.playing = true;
                }
            }
            LessonAction::ShowMe => {
                if run.awaiting_answer() {
                    run.skipped = true;
                    next.seek(0);
                    next.playing = true;
                }
            }
            LessonAction::ShowOutcome => {
                // Only an answer already committed to is shown: the playhead goes to the end,
                // as End would take it, and `reduce` judges the prediction there.
                if run.offers_outcome() {
                    next = next.reduce_inner(Action::ToEnd);
                }
            }
            LessonAction::Name(name) => {
                // Kept as typed (a space typed between two names must stay while typing);
                // the code cleans it when it is made.
                run.name = name
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(crate::lesson::code::NAME_CHARS_MAX)
                    .collect();
                let code = run.code(&next.scenario);
                if let Some(a) = run.attempt.as_mut().filter(|a| a.code.is_some()) {
                    a.code = code;
                }
            }
            LessonAction::Restart => {
                let course = Arc::clone(&run.course);
                return self.reduce_lesson(LessonAction::Open {
                    course,
                    index: run.index,
                    place: run.place,
                    resume: Vec::new(),
                });
            }
        }
        next.lesson = Some(Rc::new(run));
        next
    }
}
