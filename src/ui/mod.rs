//! The app's state and its one reducer, with no web dependency.
//!
//! Everything the page shows is computed here from the engine's output: the run, its verdict,
//! the timeline's lanes, the playhead's snapshot, the comparison. The browser shell
//! (`crate::web`) only draws this state and turns user input into [`Action`]s, so the whole
//! behaviour of the app can be tested natively.
//!
//! This file holds the state itself ([`App`], [`Action`]) and the playhead. What changes it
//! and what it is made from each have a file: `reduce.rs` (the reducer), `run.rs` (a run and
//! its verdict), `codec.rs` (scenario text read and written, the picker's sources),
//! `saved.rs` (the saved state and the hand-over between bundles) and `permalink.rs` (links
//! made and opened). Their public items are re-exported here, so every path is `ui::NAME`.

pub mod compare;
pub mod course;
pub mod display;
pub mod embed;
pub mod export;
pub mod handover;
pub mod lab;
pub mod links;
pub mod notes;
pub mod paint;
pub mod preview;
pub mod print;
pub mod reach;
pub mod route;
pub mod share;
pub mod sharing;
pub mod svg;
pub mod text;
pub mod timeline;
/// The controls' vocabulary lives below `ui`, where lessons use it too.
pub use crate::toggles;

mod codec;
mod permalink;
mod reduce;
mod run;
mod saved;

pub use codec::{
    is_source, picker, source_text, Codec, Reading, BLANK, BLANK_JSON, BLANK_TOML, DEFAULT_SOURCE,
};
pub use permalink::link_note;
pub use run::{Comparison, InventoryNote, Outcome, APP_EVENTS_MAX};
pub use saved::{LeftOff, Ran, Saved, STORAGE_KEY, STORAGE_SET_ASIDE_KEY};

use std::rc::Rc;
use std::sync::Arc;

use crate::builtin;
use crate::monitor::{self, Snapshot};
use crate::scenario::{Scenario, ScenarioError};
use crate::world::Micros;
use course::{LessonAction, LessonRun};
use toggles::{Settings, Toggle};

/// The speeds playback offers, as simulated time per unit of real time.
pub const SPEEDS: [f64; 5] = [0.05, 0.1, 0.25, 0.5, 1.0];
const DEFAULT_SPEED: f64 = 0.25;

/// The deepest zoom: a window of 1/64 of the run.
pub const ZOOM_MAX: u32 = 64;

/// Everything the page shows.
#[derive(Clone, Debug)]
pub struct App {
    /// The picker's value: a built-in file name or [`BLANK`].
    pub source: String,
    /// The editor's text, valid or not.
    pub text: String,
    /// The problems with `text`; empty when it is the scenario that ran.
    pub errors: Vec<ScenarioError>,
    /// The last text that was valid: the text of the run shown, as the user wrote it.
    pub valid_text: String,
    /// Why the last toggle changed nothing, when it would have made the scenario invalid.
    pub toggle_errors: Vec<ScenarioError>,
    /// The editor's text as the user wrote it, before a toggle rewrote it in canonical form
    /// (dropping comments and layout); kept so that it can be restored.
    pub replaced_text: Option<String>,
    /// Counts every change of the scenario or the text, so that views of the controls redraw
    /// even when a change left the scenario as it was.
    pub revision: u64,
    /// The last valid scenario: the one that ran. After a toggle it is always
    /// `settings.apply(&base)`.
    pub scenario: Scenario,
    /// The scenario as opened, picked, edited or imported: what the controls' values apply to.
    pub base: Scenario,
    /// The controls' values since `base` was set (see [`Settings`]).
    pub settings: Settings,
    pub outcome: Rc<Outcome>,
    pub compare: Option<Rc<Comparison>>,
    /// How many events have happened at the playhead.
    pub cursor: usize,
    /// The playhead's time; between events while playing.
    pub time: Micros,
    pub playing: bool,
    pub speed: f64,
    /// The event whose details are shown.
    pub selected: Option<usize>,
    /// The event of the compared (flipped) run whose details are shown, if one was picked
    /// on its timeline; the two selections exclude each other.
    pub selected_flipped: Option<usize>,
    pub own_order: bool,
    /// Horizontal zoom of the timeline, 1 = fit the width.
    pub zoom: u32,
    /// The stretch of time the timeline shows; it follows the playhead when zoomed in.
    pub window: timeline::Window,
    /// A message for the user that is not about the scenario (e.g. unreadable saved state).
    pub notice: Option<String>,
    /// A quiet note about the link the run was opened from, when its run is not the one the
    /// link recorded (see [`link_note`]); any change of the scenario ends it.
    pub link_note: Option<String>,
    /// The overlap or note whose card is shown, when one has focus or the pointer.
    pub pinned: Option<Pinned>,
    /// Whether the legend is shown beside the timeline; it is, until the user hides it.
    pub legend: bool,
    /// In the lesson view: the lesson, the place and what the learner did there. The
    /// sandbox has none.
    pub lesson: Option<Rc<LessonRun>>,
    /// Set while the app shows a run opened from a link and the user has not changed it: such a
    /// state is not saved, so a link never overwrites what the user typed before.
    pub linked: bool,
    /// Set while the editor's text waits for the page's reader ([`Codec::deferred`]); the run
    /// shown is still the last valid text's.
    pub reading: bool,
    /// How this app reads and writes scenario text.
    pub codec: Codec,
}

/// A violation or a note of the timeline whose card is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pinned {
    /// An index into `Layout::overlaps`.
    Overlap(usize),
    /// An index into `Layout::notes`.
    Note(usize),
}

/// Everything a user can do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Pick(String),
    Toggle(Toggle),
    Edit(String),
    /// What the page's reader made of a text the app waits for ([`Codec::deferred`]): the
    /// scenario, or the text's errors. An answer about any other text is stale and ignored.
    Read {
        text: String,
        result: Result<Box<Scenario>, Vec<ScenarioError>>,
    },
    /// Puts back the text a toggle rewrote (which also undoes that toggle).
    RestoreText,
    /// Drops an invalid edit: the editor shows the scenario that ran.
    DiscardEdit,
    NewSeed,
    StepForward,
    StepBack,
    ToStart,
    ToEnd,
    Seek(Micros),
    /// Moves the playhead to just after the given number of events.
    Cursor(usize),
    /// Jumps the playhead a tenth of the run forward (positive) or back (negative).
    Jump(i32),
    PlayPause,
    /// Real milliseconds have passed while playing.
    Tick(f64),
    Speed(f64),
    /// One step faster (positive) or slower (negative) through [`SPEEDS`].
    SpeedStep(i32),
    Compare(Option<Toggle>),
    Select(Option<usize>),
    /// Selects an event of the compared run.
    SelectFlipped(Option<usize>),
    OwnOrder(bool),
    Zoom(u32),
    DismissNotice,
    /// Shows the card of an overlap or a note (focus or the pointer is on it); with `seek`
    /// (keyboard focus) the playhead moves into it too.
    Pin {
        pin: Pinned,
        seek: bool,
    },
    /// Shows or hides the legend.
    Legend(bool),
    /// Opens the state a permalink describes (already decoded).
    OpenLink(share::Link),
    /// Shows why a link could not be opened; the app keeps what it shows.
    LinkFailed(String),
    /// Replaces the scenario with an imported one (already validated); `what` says what the
    /// file was, for the notice.
    Import {
        scenario: Box<Scenario>,
        what: String,
    },
    /// Shows the explorer's shortest counterexample as the run: its steps replayed (a path, not
    /// a seed), made by [`lab::counterexample`]. Any change to the scenario runs it normally
    /// again.
    ShowCounterexample {
        property: String,
        steps: Vec<u64>,
        replayed: lab::Replayed,
    },
    /// Shows a run recorded on real services (read and checked by
    /// [`crate::recording::Recording::parse`]) with its scenario in the controls. Nothing can
    /// run it again, so any change to the scenario simulates it instead, as the counterexample.
    OpenRecording(RecordingFile),
    /// Runs another scenario picked from a result (a sweep's broken seed), saying where it came
    /// from.
    Show {
        scenario: Box<Scenario>,
        notice: String,
    },
    /// What only the lesson view does: open a place, check an exercise, reveal a hint.
    Lesson(LessonAction),
}

/// A recording read back, in an action. Two actions are equal when they carry the same read.
/// Shared with `Arc`, as every action may cross to another thread.
#[derive(Clone, Debug)]
pub struct RecordingFile(pub Arc<crate::recording::Recording>);

impl PartialEq for RecordingFile {
    fn eq(&self, other: &RecordingFile) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl App {
    /// The app showing a picker source, reading everything ([`Codec::FULL`]).
    pub fn open(source: &str) -> App {
        App::open_with(Codec::FULL, source)
    }

    /// The app showing a picker source.
    pub fn open_with(codec: Codec, source: &str) -> App {
        let known = source == BLANK || builtin::find(source).is_some();
        let source = if known { source } else { DEFAULT_SOURCE };
        let scenario = (codec.source)(source).expect("shipped scenarios are valid");
        let mut app = App::from_scenario_with(codec, scenario, source.to_string());
        // The editor keeps the file as written, comments included.
        if let Some(text) = (codec.text)(source) {
            app.text = text.to_string();
            app.valid_text = text.to_string();
        }
        app
    }

    /// The app running a valid scenario, under a source's name. The editor's text is the
    /// scenario in canonical form.
    pub fn from_scenario(scenario: Scenario, source: String) -> App {
        App::from_scenario_with(Codec::FULL, scenario, source)
    }

    /// The app running a valid scenario under a source's name, with a codec.
    pub fn from_scenario_with(codec: Codec, scenario: Scenario, source: String) -> App {
        let text = (codec.write)(&scenario);
        let outcome = Outcome::compute(&scenario).expect("a validated scenario runs");
        let outcome_end = outcome.end;
        App {
            source,
            text: text.clone(),
            errors: Vec::new(),
            valid_text: text,
            toggle_errors: Vec::new(),
            replaced_text: None,
            revision: 0,
            base: scenario.clone(),
            scenario,
            settings: Settings::default(),
            outcome: Rc::new(outcome),
            compare: None,
            cursor: 0,
            time: 0,
            playing: false,
            speed: DEFAULT_SPEED,
            selected: None,
            selected_flipped: None,
            own_order: false,
            zoom: 1,
            window: timeline::Window::all(outcome_end),
            notice: None,
            link_note: None,
            pinned: None,
            legend: true,
            lesson: None,
            linked: false,
            reading: false,
            codec,
        }
    }

    /// True when the text is no longer the picked source's own text.
    pub fn edited(&self) -> bool {
        match (self.codec.text)(&self.source) {
            Some(text) => text != self.text,
            None => {
                (self.codec.source)(&self.source).map(|s| (self.codec.write)(&s))
                    != Some(self.text.clone())
            }
        }
    }

    fn set_cursor(&mut self, cursor: usize) {
        self.cursor = cursor.min(self.outcome.events.len());
        self.time = self.outcome.time_of(self.cursor);
        self.selected = self.cursor.checked_sub(1);
        self.selected_flipped = None;
        self.pinned = None;
        self.follow();
    }

    fn seek(&mut self, t: Micros) {
        self.time = t.min(self.outcome.end);
        self.cursor = self.outcome.cursor_at(self.time);
        self.follow();
    }

    /// Keeps the timeline's window on the playhead.
    fn follow(&mut self) {
        self.window = timeline::Window::follow(self.window, self.outcome.end, self.zoom, self.time);
    }

    /// The snapshot at the playhead.
    pub fn snapshot(&self) -> Snapshot {
        self.outcome.snapshot(self.cursor, self.time)
    }

    /// The sentence for the playhead: time, position, and who believes they hold what.
    /// How the playhead's moment stands, for its sentence's colour: exclusion broken now;
    /// holding now after it broke earlier in the run (no all-clear); or holding.
    pub fn playhead_standing(&self) -> Standing {
        if self.snapshot().exclusion == monitor::Exclusion::Broken {
            Standing::Broken
        } else if self
            .outcome
            .layout
            .merged
            .first()
            .is_some_and(|m| m.from <= self.time)
        {
            Standing::AfterBreak
        } else {
            Standing::Holds
        }
    }

    pub fn playhead_text(&self) -> String {
        text::playhead(
            &self.snapshot(),
            self.time,
            self.cursor,
            self.outcome.events.len(),
        )
    }
}

/// How the playhead's moment stands ([`App::playhead_standing`]); its name is the class the
/// page gives the playhead's sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    Broken,
    AfterBreak,
    Holds,
}

impl Standing {
    pub fn name(self) -> &'static str {
        match self {
            Standing::Broken => "broken",
            Standing::AfterBreak => "after-break",
            Standing::Holds => "holds",
        }
    }
}
