//! The app's state and its one reducer, with no web dependency.
//!
//! Everything the page shows is computed here from the engine's output: the run, its verdict,
//! the timeline's lanes, the playhead's snapshot, the comparison. The browser shell
//! (`crate::web`) only draws this state and turns user input into [`Action`]s, so the whole
//! behaviour of the app can be tested natively.

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

use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;

use crate::builtin;
use crate::inventory::{self, Severity};
use crate::json::Obj;
use crate::monitor::{self, Snapshot, Verdict};
use crate::scenario::{Scenario, ScenarioError, ScenarioErrors};
use crate::trace::Event;
use crate::world::{Micros, World};
use compare::Diff;
use course::{LessonAction, LessonRun};
use timeline::{Layout, OwnOrder};
use toggles::{Settings, Toggle};

/// The picker value of the blank scenario.
pub const BLANK: &str = "blank";

/// A small valid scenario to start from: one service, one table, two clients that share it.
pub const BLANK_TOML: &str = r#"name = "Blank"
description = "One lock service, one table, two clients that share it. Edit it to build your own."
duration_ms = 2000
seed = 1
regions = ["east"]

[[services]]
name = "locks"
replicas = ["east", "east", "east"]
protects = ["table"]

[[resources]]
name = "table"
rows = ["count"]

[[clients]]
name = "worker"
count = 2
region = "east"
protocol = { kind = "single", service = "locks" }
resource = "table"
period_ms = 200
jitter_ms = 100
work_ms = 30
"#;

/// The built-in scenario the app opens with.
pub const DEFAULT_SOURCE: &str = "01-two-services.toml";

/// How an app reads and writes scenarios as text. The app calls these through the codec it was
/// opened with rather than directly, so that a bundle links only the readers its views need:
/// the TOML reader's code for the scenario's types is the largest single part of a bundle after
/// the view framework, and the sandbox's first download leaves it to a worker.
#[derive(Clone, Copy)]
pub struct Codec {
    /// Reads the editor's text, or a link's scenario written as TOML.
    pub read: fn(&str) -> Result<Scenario, ScenarioErrors>,
    /// Whether the editor's text is read outside the app: an edit then waits
    /// ([`App::reading`]) until the page's reader answers with [`Action::Read`], and `read`
    /// only says why a link written as TOML opens elsewhere.
    pub deferred: bool,
    /// Writes a scenario as the editor's text, in canonical form.
    pub write: fn(&Scenario) -> String,
    /// Reads a picker source: a built-in scenario's file name, or [`BLANK`].
    pub source: fn(&str) -> Option<Scenario>,
    /// A picker source's file as shipped, comments included, for a bundle with an editor
    /// ([`source_text`]); a bundle without one leaves the files out and writes the scenario
    /// with `write` instead.
    pub text: fn(&str) -> Option<&'static str>,
    /// Reads a link's scenario written as JSON (`j=`), and the scenario a saved state ran.
    pub json: fn(&str) -> Result<Scenario, ScenarioErrors>,
    /// A custom scenario as a link carries it.
    pub custom: fn(&Scenario) -> share::Source,
    /// The codec's name, for debugging output.
    pub name: &'static str,
}

/// The error of a codec that does not read a form in this bundle.
fn unread(message: &str) -> ScenarioErrors {
    ScenarioErrors(vec![ScenarioError {
        location: "line 1, column 1".to_string(),
        message: message.to_string(),
    }])
}

/// A shipped scenario (or the blank one) read from its JSON form, which needs no TOML reader.
fn source_from_json(source: &str) -> Option<Scenario> {
    let json = if source == BLANK {
        BLANK_JSON
    } else {
        builtin::find(source)?.json
    };
    Scenario::from_json_str(json).ok()
}

/// A custom scenario as links carry it: JSON (`j=`), the one form every bundle of the page
/// reads (the editor's TOML, `c=`, is read only where the whole app is loaded).
fn custom_as_json(s: &Scenario) -> share::Source {
    share::Source::Json {
        json: s.to_json_string(),
    }
}

impl Codec {
    /// Reads and writes everything, synchronously: the studio's bundle, the command line and
    /// the tests.
    pub const FULL: Codec = Codec {
        read: Scenario::from_toml_str,
        deferred: false,
        write: Scenario::to_toml_string,
        source: |source| source_text(source).and_then(|t| Scenario::from_toml_str(t).ok()),
        text: source_text,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "FULL",
    };

    /// The sandbox's first bundle: it writes the editor's TOML (a toggle rewrites the text)
    /// but reads it in a worker (`src/bin/reader.rs`), and reads shipped scenarios, links and
    /// saved runs as JSON. A link written as TOML (`c=`) is the studio's bundle's to open.
    pub const SANDBOX: Codec = Codec {
        read: |_| {
            Err(unread("this page opens a link whose scenario is written as TOML (c=) in the full app; reload the page to open it"))
        },
        deferred: true,
        write: Scenario::to_toml_string,
        source: source_from_json,
        text: source_text,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "SANDBOX",
    };

    /// The lesson view's codec: no editor, so no text to read or write; the learner's scenario
    /// goes to the sandbox as its run, whose text the sandbox writes ([`App::restore_with`]).
    /// Shipped scenarios and links are read as JSON. The lesson view's bundle then links no
    /// TOML reader or writer.
    pub const LESSON: Codec = Codec {
        read: |_| {
            Err(unread(
                "the lesson view reads no scenario text; open it in the sandbox to edit it",
            ))
        },
        deferred: false,
        write: |_| String::new(),
        source: source_from_json,
        text: |_| None,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "LESSON",
    };

    /// The embed view's codec: no editor, so no text to read or write; shipped scenarios are
    /// read from their JSON form, and links carry custom scenarios as JSON.
    pub const EMBED: Codec = Codec {
        read: |_| {
            Err(unread("the embed view reads a scenario in its address only as JSON (j=); this one is TOML (c=), which the full app reads"))
        },
        deferred: false,
        write: |_| String::new(),
        source: source_from_json,
        text: |_| None,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "EMBED",
    };
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Codec::{}", self.name)
    }
}

/// [`BLANK_TOML`] as JSON, for [`Codec::EMBED`]; a test checks that both read the same.
pub const BLANK_JSON: &str = r#"{"name":"Blank","description":"One lock service, one table, two clients that share it. Edit it to build your own.","duration_ms":2000,"seed":1,"regions":["east"],"services":[{"name":"locks","replicas":["east","east","east"],"protects":["table"]}],"resources":[{"name":"table","rows":["count"]}],"clients":[{"name":"worker","count":2,"region":"east","protocol":{"kind":"single","service":"locks"},"resource":"table","period_ms":200,"jitter_ms":100,"work_ms":30}]}"#;

/// The speeds playback offers, as simulated time per unit of real time.
pub const SPEEDS: [f64; 5] = [0.05, 0.1, 0.25, 0.5, 1.0];
const DEFAULT_SPEED: f64 = 0.25;

/// The most events the app simulates in one run.
pub const APP_EVENTS_MAX: u64 = 200_000;

/// The deepest zoom: a window of 1/64 of the run.
pub const ZOOM_MAX: u32 = 64;

/// The local storage key of the saved state.
pub const STORAGE_KEY: &str = "lockstep.state.v1";
/// Where a saved state that cannot be read is set aside.
pub const STORAGE_SET_ASIDE_KEY: &str = "lockstep.state.v1.set-aside";

/// The result of one run, with everything the views need from it.
#[derive(Debug)]
pub struct Outcome {
    pub world: World,
    pub seed: u64,
    pub events: Vec<Event>,
    pub end: Micros,
    pub verdict: Verdict,
    pub layout: Rc<Layout>,
    pub orders: Rc<Vec<OwnOrder>>,
    /// The first line of the verdict, word for word what `lockstep run` prints.
    pub headline: String,
    /// The trace digest, computed once: links and the embed's messages carry it, and they are
    /// remade as the playhead moves.
    pub digest: u64,
    /// Defects and warnings of the static inventory check, each with what this run shows of it.
    pub inventory: Vec<InventoryNote>,
    /// The scenario's own event budget when the app ran fewer events than it allows.
    pub capped_from: Option<u64>,
    /// Set when the run was recorded on real services (`lockstep record`) rather than
    /// simulated: what it was recorded from. Nothing can run it again.
    pub recorded: Option<Rc<crate::recording::Source>>,
}

/// A trace to judge, whichever driver made it.
struct Judged {
    world: World,
    seed: u64,
    events: Vec<Event>,
    end: Micros,
    truncated: bool,
}

impl Outcome {
    /// Runs a validated scenario with its own seed.
    pub fn compute(scenario: &Scenario) -> Result<Outcome, Vec<ScenarioError>> {
        scenario.validate().map_err(|e| e.0)?;
        // A page must answer within a moment whatever is typed, so the app runs at most
        // APP_EVENTS_MAX events; the run then says it stopped early, as the engine does for
        // any budget, and the page says the command line runs the rest.
        let budget = scenario.event_budget();
        let capped_from = (budget > APP_EVENTS_MAX).then_some(budget);
        let mut world = World::compile(scenario);
        world.event_budget = world.event_budget.min(APP_EVENTS_MAX);
        let run = crate::sim::run_world(world, scenario.seed);
        Ok(Outcome::of_run(scenario, run, capped_from))
    }

    /// The outcome of a run made some other way: a counterexample the explorer replayed.
    pub fn of_run(scenario: &Scenario, run: crate::sim::Run, capped_from: Option<u64>) -> Outcome {
        let crate::sim::Run {
            world,
            seed,
            events,
            end,
            truncated,
            ..
        } = run;
        Outcome::judge(
            scenario,
            Judged {
                world,
                seed,
                events,
                end,
                truncated,
            },
            capped_from,
            None,
        )
    }

    /// The outcome of a run recorded on real services: its trace judged by the same monitors,
    /// and what it was recorded from, which every view that shows it names.
    pub fn of_recording(recording: crate::recording::Recording) -> Outcome {
        let crate::recording::Recording {
            world,
            events,
            seed,
            source,
        } = recording;
        let end = world.duration;
        let scenario = source.scenario.clone();
        Outcome::judge(
            &scenario,
            Judged {
                world,
                seed,
                events,
                end,
                truncated: false,
            },
            None,
            Some(Rc::new(source)),
        )
    }

    fn judge(
        scenario: &Scenario,
        run: Judged,
        capped_from: Option<u64>,
        recorded: Option<Rc<crate::recording::Source>>,
    ) -> Outcome {
        // One analysis feeds both the verdict and the picture, so they count the same things
        // and the run is scanned once.
        let analysis = monitor::analyse(
            &run.world,
            &run.events,
            run.end,
            timeline::OVERLAPS_DETAILED_MAX,
        );
        let verdict = monitor::verdict_from(
            &run.world,
            &run.events,
            run.end,
            run.truncated,
            run.seed,
            &analysis,
        );
        let layout = Layout::build_judged(&run.world, &run.events, run.end, &analysis, &verdict);
        let orders = timeline::own_orders(&run.world, &run.events);
        let headline = verdict
            .summary()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        // A defect is about the data, whatever one run shows; a run that holds despite it is
        // lucky, and the finding says so beside the verdict instead of seeming to contradict it.
        let inventory = inventory::check(scenario)
            .into_iter()
            .map(|f| match f.severity {
                Severity::Defect => {
                    let r = run
                        .world
                        .resources
                        .iter()
                        .position(|x| x.name == f.resource);
                    let overlaps = r.map_or(0, |r| {
                        analysis
                            .overlaps
                            .bands
                            .iter()
                            .filter(|b| b.resources & (1 << r) != 0)
                            .map(|b| b.count)
                            .sum()
                    });
                    let lost = r.map_or(0, |r| {
                        let initial = run.world.resources[r].initial;
                        verdict.resources.get(r).map_or(0, |report| {
                            report
                                .rows
                                .iter()
                                .map(|(row, value)| {
                                    let writes = report.increments.get(row).copied().unwrap_or(0);
                                    (initial + writes as i64 - value).max(0) as u64
                                })
                                .sum()
                        })
                    });
                    let writes = r
                        .and_then(|r| verdict.resources.get(r))
                        .map_or(0, |report| report.increments.values().sum());
                    InventoryNote {
                        defect: true,
                        this_run: Some(text::defect_in_this_run(
                            scenario,
                            &f.resource,
                            overlaps,
                            lost,
                            writes,
                        )),
                        resource: f.resource,
                        message: f.message,
                    }
                }
                _ => InventoryNote {
                    defect: false,
                    resource: f.resource,
                    message: f.message,
                    this_run: None,
                },
            })
            .collect();
        Outcome {
            seed: run.seed,
            end: run.end,
            digest: crate::trace::digest(&run.events),
            events: run.events,
            world: run.world,
            verdict,
            layout: Rc::new(layout),
            orders: Rc::new(orders),
            headline,
            inventory,
            capped_from,
            recorded,
        }
    }

    /// Who believes they hold what after the first `cursor` events, at time `at`.
    pub fn snapshot(&self, cursor: usize, at: Micros) -> Snapshot {
        let cursor = cursor.min(self.events.len());
        monitor::snapshot(&self.world, &self.events[..cursor], at)
    }

    /// The playhead time after the first `cursor` events: the time of the last of them.
    pub fn time_of(&self, cursor: usize) -> Micros {
        match cursor.min(self.events.len()) {
            0 => 0,
            k => self.events[k - 1].at,
        }
    }

    /// How many events have happened by time `t` (inclusive).
    pub fn cursor_at(&self, t: Micros) -> usize {
        self.events.partition_point(|e| e.at <= t)
    }
}

/// One finding of the inventory check, beside the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InventoryNote {
    pub defect: bool,
    pub resource: String,
    /// The check's own words.
    pub message: String,
    /// For a defect: what this run shows of it, so that a run that holds does not seem to
    /// contradict the finding.
    pub this_run: Option<String>,
}

impl InventoryNote {
    /// The finding as one text: "Defect at orders: ... In this run ...".
    pub fn text(&self) -> String {
        let head = format!(
            "{} at {}: {}.",
            if self.defect { "Defect" } else { "Warning" },
            self.resource,
            self.message
        );
        match &self.this_run {
            Some(run) => format!("{head} {run}"),
            None => head,
        }
    }
}

/// A second run with one toggle flipped.
#[derive(Debug)]
pub struct Comparison {
    pub toggle: Toggle,
    /// The words that name the flip, e.g. "fencing off at orders".
    pub label: String,
    pub result: Result<(Rc<Outcome>, Rc<Diff>), Vec<ScenarioError>>,
}

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

/// The built-in scenario a scenario is, up to what its controls change, if any.
fn builtin_of(codec: Codec, scenario: &Scenario) -> Option<&'static str> {
    builtin::ALL.iter().map(|b| b.file).find(|file| {
        (codec.source)(file).is_some_and(|start| share::edits_from(&start, scenario).is_some())
    })
}

/// What to say of a link whose run is shown as this version computes it.
///
/// A link that records no digest, or whose digest is this run's, needs no word: the run is the
/// one it describes. Otherwise the scenario is still the one its author chose, computed by this
/// version of the engine, so the page shows it and says, quietly and truly, what differs; a
/// link read in another format says which. Nothing here is a warning: the run is not wrong.
pub fn link_note(link: &share::Link, digest: u64) -> Option<String> {
    let format = (link.version != share::LINK_VERSION).then(|| {
        format!(
            "This link was written in link format {}; this page reads format {} and shows the same scenario.",
            link.version,
            share::LINK_VERSION
        )
    });
    let run = link.digest.filter(|d| *d != digest).map(|d| {
        format!(
            "The events differ from the run the link recorded (trace digest {d:016x}; this page's run of the same scenario has {digest:016x}): the link was edited, or this version of Lockstep computes the scenario differently."
        )
    });
    match (format, run) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
    }
}

/// Where a copy of the app left off, for another copy to go on from ([`App::resume`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOff {
    pub saved: Saved,
    /// The last valid text, whose run is shown while the text has errors.
    pub valid_text: String,
    /// The view: playhead, zoom, each service's own order and the comparison (the scenario is
    /// the text's).
    pub view: share::View,
    pub linked: bool,
    pub speed: f64,
    pub legend: bool,
    /// The controls' values and the scenario they apply to (as JSON), when controls were
    /// changed since the scenario was opened: the copy that goes on keeps them, so that a
    /// control changed after the hand-over still undoes what its earlier value did.
    pub controls: Option<(String, Vec<String>)>,
}

/// What the app saves between visits. Written with serde; read by hand ([`Saved::from_json`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Saved {
    pub source: String,
    pub text: String,
    /// The scenario that ran, so that a page whose text is read in a worker shows the same run
    /// at once; older saved states have none and are read from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<Ran>,
}

/// The run a saved state showed: its scenario as JSON and, when the text had errors, the last
/// valid text (whose scenario it is).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ran {
    pub json: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_text: Option<String>,
}

/// What the page's reader (a worker with the TOML reader, `src/bin/reader.rs`) answers about
/// one text: the scenario as JSON, or the text's located errors. The text comes back with it,
/// so the app can tell an answer about what it shows from a stale one. Written with serde; read
/// by hand ([`Reading::from_json`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reading {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ScenarioError>,
}

// The page's bundles read these with `crate::json` over one parsed value rather than with
// derived readers, which are compiled anew for each type and cost the sandbox's download more.
// Each refuses a member it does not know where the derived reader did (not inside an error),
// reads `null` as a member left out, and keeps the last of a member named twice (they read a
// `serde_json::Value`).

impl Saved {
    /// What local storage held, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<Saved, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the saved state")?;
        o.only(&["source", "text", "ran"])?;
        Ok(Saved {
            source: o.string("source")?,
            text: o.string("text")?,
            ran: o.get("ran").map(Ran::read).transpose()?,
        })
    }
}

impl Ran {
    fn read(v: &serde_json::Value) -> Result<Ran, String> {
        let o = Obj::of(v, "\"ran\"")?;
        o.only(&["json", "valid_text"])?;
        Ok(Ran {
            json: o.string("json")?,
            valid_text: o.opt_string("valid_text")?,
        })
    }
}

impl Reading {
    /// A reader's answer as it posts it, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<Reading, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the reader's answer")?;
        o.only(&["text", "json", "errors"])?;
        Ok(Reading {
            text: o.string("text")?,
            json: o.opt_string("json")?,
            errors: o.opt_items("errors", |v| {
                let e = Obj::of(v, "an error")?;
                Ok(ScenarioError {
                    location: e.string("location")?,
                    message: e.string("message")?,
                })
            })?,
        })
    }

    /// Reads a text as the editor's, in full: what the reader does.
    pub fn of(text: String) -> Reading {
        match Scenario::from_toml_str(&text) {
            Ok(s) => Reading {
                json: Some(s.to_json_string()),
                errors: Vec::new(),
                text,
            },
            Err(e) => Reading {
                json: None,
                errors: e.0,
                text,
            },
        }
    }

    /// The answer that a reader could not give, e.g. because it failed to load.
    pub fn failed(text: String, why: &str) -> Reading {
        Reading {
            text,
            json: None,
            errors: vec![ScenarioError {
                location: "the editor".to_string(),
                message: format!("the text could not be read ({why}); it is saved in this browser, and reloading the page reads it again"),
            }],
        }
    }

    /// The action that gives this answer to an app reading with `codec`.
    pub fn into_action(self, codec: Codec) -> Action {
        let result = match self.json {
            _ if !self.errors.is_empty() => Err(self.errors),
            Some(json) => (codec.json)(&json).map(Box::new).map_err(|e| e.0),
            None => Err(Reading::failed(String::new(), "the reader gave no answer").errors),
        };
        Action::Read {
            text: self.text,
            result,
        }
    }
}

/// Whether the picker offers this source. It does not touch the files' texts, so a bundle that
/// asks links none of them.
pub fn is_source(source: &str) -> bool {
    source == BLANK || builtin::find(source).is_some()
}

/// The text of a picker source: a built-in scenario's TOML, or the blank scenario.
pub fn source_text(source: &str) -> Option<&'static str> {
    if source == BLANK {
        Some(BLANK_TOML)
    } else {
        builtin::find(source).map(|b| b.toml())
    }
}

/// The picker's entries: every built-in scenario by name, then the blank one.
pub fn picker() -> Vec<toggles::Choice> {
    builtin::ALL
        .iter()
        .map(|b| toggles::Choice {
            value: b.file.to_string(),
            label: Scenario::from_json_str(b.json)
                .map(|s| s.name)
                .unwrap_or_else(|_| b.file.to_string()),
        })
        .chain(std::iter::once(toggles::Choice {
            value: BLANK.to_string(),
            label: "Blank scenario".to_string(),
        }))
        .collect()
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

    /// The app as the user left it, from what local storage held. A value that cannot be read
    /// is reported in the notice and the default scenario opens instead; the caller sets the
    /// value aside so that nothing the user wrote is lost.
    pub fn restore(stored: Option<&str>) -> App {
        App::restore_with(Codec::FULL, stored)
    }

    /// [`App::restore`] with a codec. The run the state saved is shown as it was when the
    /// codec reads it; only a text with errors then waits for a reader, for its errors.
    pub fn restore_with(codec: Codec, stored: Option<&str>) -> App {
        let Some(stored) = stored else {
            return App::open_with(codec, DEFAULT_SOURCE);
        };
        match Saved::from_json(stored) {
            Ok(mut saved) => {
                // A view without an editor (a lesson) hands its run over with no text, as it
                // writes none: the text is then this codec's writing of that run. An empty
                // text the user left has a run of another text, so it is not mistaken for one.
                if saved.text.is_empty() {
                    let handed = saved.ran.as_ref().filter(|r| r.valid_text.is_none());
                    if let Some(s) = handed.and_then(|r| (codec.json)(&r.json).ok()) {
                        saved.text = (codec.write)(&s);
                    }
                }
                let mut app = App::open_with(codec, &saved.source);
                if saved.text == app.text {
                    return app;
                }
                // A codec that reads the text reads it rather than trust a copy of its run.
                let ran = saved.ran.as_ref().filter(|_| codec.deferred).and_then(|r| {
                    let scenario = (codec.json)(&r.json).ok()?;
                    scenario.validate().ok()?;
                    Some((scenario, r.valid_text.as_deref().unwrap_or(&saved.text)))
                });
                if let Some((scenario, valid_text)) = ran {
                    if scenario != app.scenario {
                        app.set_scenario(scenario);
                    }
                    app.text = valid_text.to_string();
                    app.valid_text = valid_text.to_string();
                }
                if saved.text != app.text {
                    app = app.reduce(Action::Edit(saved.text));
                }
                app
            }
            Err(e) => {
                let mut app = App::open_with(codec, DEFAULT_SOURCE);
                app.notice = Some(format!(
                    "Your saved scenario could not be read ({e}), so it was set aside under \"{STORAGE_SET_ASIDE_KEY}\" in this browser's local storage and the first scenario was opened."
                ));
                app
            }
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

    /// What to save: the picker source and the editor text, even if the text is invalid, and
    /// the scenario that ran (but nothing for a picked scenario left as shipped).
    pub fn saved(&self) -> Saved {
        Saved {
            source: self.source.clone(),
            text: self.text.clone(),
            ran: self.edited().then(|| self.ran()),
        }
    }

    /// The run shown, as a saved state keeps it.
    pub fn ran(&self) -> Ran {
        Ran {
            json: self.scenario.to_json_string(),
            valid_text: (self.valid_text != self.text).then(|| self.valid_text.clone()),
        }
    }

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

    fn reduce_inner(&self, action: Action) -> App {
        let mut next = self.clone();
        match action {
            Action::Pick(source) => {
                let mut opened = App::open_with(self.codec, &source);
                opened.speed = self.speed;
                opened.own_order = self.own_order;
                opened.zoom = self.zoom;
                opened.legend = self.legend;
                opened.revision = self.revision;
                opened.follow();
                return opened;
            }
            Action::Toggle(t) => {
                // A lesson step offers only some controls; the view shows no others, and a
                // toggle of another control (a stray key, a stale form) changes nothing.
                if next.lesson.as_ref().is_some_and(|l| !l.allows(&t)) {
                    return next;
                }
                // Toggles act on the scenario that ran. While the text has errors they would
                // overwrite the user's unfinished edit, so they wait until it is fixed or
                // discarded (the page disables them and says why). An edit still being read is
                // replaced like any other text, and can be restored.
                if !next.errors.is_empty() {
                    return next;
                }
                // The scenario is the controls' values applied afresh to the scenario as
                // opened, so no earlier value of any control lingers in it.
                let settings = next.settings.with(t.clone());
                let scenario = settings.apply(&next.base);
                // A toggle that would break a rule (a number out of range, a chain without its
                // subordinate) changes nothing: its errors are shown beside the toggles, and
                // the text and the run stay as they were.
                if let Err(e) = scenario.validate() {
                    next.toggle_errors = e.0;
                    return next;
                }
                next.toggle_errors.clear();
                let canonical = (next.codec.write)(&next.scenario);
                if next.text != canonical {
                    next.replaced_text = Some(std::mem::take(&mut next.text));
                }
                next.text = (next.codec.write)(&scenario);
                next.reading = false;
                next.settings = settings;
                next.set_run(scenario);
                if let Some(run) = next.lesson.take() {
                    let mut run = (*run).clone();
                    run.edits = next.settings.toggles();
                    next.lesson = Some(Rc::new(run));
                }
            }
            Action::Edit(text) => {
                next.text = text;
                next.replaced_text = None;
                next.toggle_errors.clear();
                next.reading = false;
                if next.codec.deferred {
                    // The last valid text is the scenario that runs; any other waits for the
                    // reader, and the run stays as it is until then.
                    if next.text == next.valid_text {
                        next.errors.clear();
                    } else {
                        next.reading = true;
                    }
                } else {
                    match (next.codec.read)(&next.text) {
                        Ok(scenario) => next.set_scenario(scenario),
                        Err(e) => next.errors = e.0,
                    }
                }
            }
            Action::Read { text, result } => {
                if next.reading && text == next.text {
                    next.reading = false;
                    match result {
                        Ok(scenario) => next.set_scenario(*scenario),
                        Err(e) => next.errors = e,
                    }
                }
            }
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
            Action::StepForward => {
                next.playing = false;
                // Past the last event there is nothing to step to; stepping must never move
                // the playhead back to the last event's time.
                if next.cursor < next.outcome.events.len() {
                    next.set_cursor(next.cursor + 1);
                }
            }
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
            Action::Jump(d) => {
                let tenth = (next.outcome.end / 10).max(1) as i128;
                let t = (next.time as i128 + tenth * i128::from(d)).max(0);
                next.seek(t.min(i128::from(u64::MAX)) as Micros);
            }
            Action::PlayPause => {
                next.playing = !next.playing;
                if next.playing && next.time >= next.outcome.end {
                    next.seek(0);
                }
            }
            Action::Tick(real_ms) => {
                if next.playing {
                    let advance = (real_ms.max(0.0) * 1_000.0 * next.speed) as Micros;
                    let t = next.time.saturating_add(advance.max(1));
                    if t >= next.outcome.end {
                        next.playing = false;
                    }
                    next.seek(t);
                }
            }
            Action::Speed(s) => {
                if s.is_finite() && s > 0.0 {
                    next.speed = s;
                }
            }
            Action::SpeedStep(d) => {
                let i = SPEEDS
                    .iter()
                    .position(|s| *s >= next.speed)
                    .unwrap_or(SPEEDS.len() - 1) as i32;
                next.speed = SPEEDS[i.saturating_add(d).clamp(0, SPEEDS.len() as i32 - 1) as usize];
            }
            // A recording has no flipped twin: the flip would be simulated, and a difference
            // between a real run and a simulated one is not the flip's.
            Action::Compare(Some(_)) if next.outcome.recorded.is_some() => {
                next.notice = Some(
                    "A recording cannot be compared with a flipped run: change a control to simulate the scenario, then compare."
                        .to_string(),
                );
            }
            Action::Compare(t) => {
                next.compare = t.map(|t| {
                    // A fencing change without checks means the current ones, as the
                    // controls' flips always say.
                    let t = t.toggle(&next.scenario);
                    let label = toggles::flips(&next.scenario)
                        .into_iter()
                        .find(|(_, x)| *x == t)
                        .map(|(l, _)| l)
                        .unwrap_or_else(|| t.to_string());
                    next.comparison(t, label)
                });
                next.selected_flipped = None;
            }
            Action::Select(e) => {
                next.selected = e.filter(|i| *i < next.outcome.events.len());
                next.selected_flipped = None;
                next.pinned = None;
            }
            Action::SelectFlipped(e) => {
                let n = next
                    .compare
                    .as_ref()
                    .and_then(|c| c.result.as_ref().ok())
                    .map_or(0, |(b, _)| b.events.len());
                next.selected_flipped = e.filter(|i| *i < n);
                next.selected = None;
            }
            Action::OwnOrder(on) => next.own_order = on,
            Action::Zoom(z) => {
                next.zoom = z.clamp(1, ZOOM_MAX);
                next.follow();
            }
            Action::DismissNotice => next.notice = None,
            Action::Pin { pin, seek } => {
                let layout = Rc::clone(&next.outcome.layout);
                let target = match pin {
                    Pinned::Overlap(k) => layout
                        .overlaps
                        .get(k)
                        .map(|o| (o.from + (o.to - o.from) / 2, None)),
                    Pinned::Note(k) => layout.notes.get(k).map(|n| (n.tag_at(), Some(n.event))),
                };
                if let Some((t, event)) = target {
                    if seek {
                        next.seek(t);
                    }
                    next.selected = event.or(next.selected);
                    next.selected_flipped = None;
                    next.pinned = Some(pin);
                }
            }
            Action::Legend(on) => next.legend = on,
            Action::Lesson(a) => return self.reduce_lesson(a),
            Action::OpenLink(link) => return self.open_link(&link),
            Action::LinkFailed(why) => {
                next.notice = Some(format!(
                    "This link cannot be opened: {why}. The page shows the scenario it had."
                ));
            }
            Action::Import { scenario, what } => {
                next.text = (next.codec.write)(&scenario);
                next.replaced_text = None;
                next.toggle_errors.clear();
                // A run that is a built-in with its controls changed keeps the built-in's name,
                // so the picker says where it came from and Reset goes back there.
                next.source = builtin_of(next.codec, &scenario)
                    .unwrap_or(BLANK)
                    .to_string();
                next.set_scenario(*scenario);
                next.notice = Some(format!("Imported a {what}."));
            }
            Action::OpenRecording(RecordingFile(recording)) => {
                let scenario = recording.source.scenario.clone();
                next.text = (next.codec.write)(&scenario);
                next.replaced_text = None;
                next.toggle_errors.clear();
                next.errors.clear();
                next.reading = false;
                next.valid_text = next.text.clone();
                next.source = builtin_of(next.codec, &scenario)
                    .unwrap_or(BLANK)
                    .to_string();
                next.base = scenario.clone();
                next.settings = Settings::default();
                next.scenario = scenario;
                next.outcome = Rc::new(Outcome::of_recording((*recording).clone()));
                next.compare = None;
                next.selected = None;
                next.selected_flipped = None;
                next.pinned = None;
                next.set_cursor(0);
                next.time = 0;
                next.follow();
                next.notice = Some(
                    "Opened a recording from real services. Its controls show the scenario it played; changing any of them simulates that scenario instead."
                        .to_string(),
                );
            }
            Action::ShowCounterexample {
                property,
                steps,
                replayed,
            } => {
                let run = if replayed.0 .0 != next.scenario {
                    Err("the scenario changed since it was found".to_string())
                } else {
                    replayed.0 .1.clone()
                };
                match run {
                    Ok(run) => {
                        next.outcome = Rc::new(Outcome::of_run(&next.scenario, run, None));
                        next.compare = None;
                        next.selected = None;
                        next.selected_flipped = None;
                        next.pinned = None;
                        next.set_cursor(next.outcome.events.len());
                        next.time = next.outcome.end;
                        next.follow();
                        next.notice = Some(format!(
                            "The shortest way this scenario breaks {property}: {} steps found by exploring every interleaving (time is abstract here: any enabled step may come next). Any change runs the scenario normally again.",
                            steps.len()
                        ));
                    }
                    Err(why) => {
                        next.notice = Some(format!("The counterexample cannot be shown: {why}."));
                    }
                }
            }
            Action::Show { scenario, notice } => {
                next.text = (next.codec.write)(&scenario);
                next.replaced_text = None;
                next.toggle_errors.clear();
                next.set_scenario(*scenario);
                next.set_cursor(0);
                next.notice = Some(notice);
            }
        }
        next
    }

    /// The permalink of what the app shows.
    pub fn link(&self) -> share::Link {
        self.link_from(share::source_of_with(
            self.codec,
            &self.source,
            &self.scenario,
        ))
    }

    /// The permalink of what the app shows, with its scenario's source already worked out
    /// (finding a built-in's changes parses the built-in, which a view does once per run rather
    /// than at every step of the playhead).
    pub fn link_from(&self, source: share::Source) -> share::Link {
        let view = self.view();
        share::Link {
            version: share::LINK_VERSION,
            source,
            playhead_us: view.playhead_us,
            zoom: view.zoom,
            own_order: view.own_order,
            compare: view.compare,
            // A link cannot carry a recording, only its scenario, which opens simulated: the
            // recorded trace's digest would only make the link read as edited.
            digest: self
                .outcome
                .recorded
                .is_none()
                .then_some(self.outcome.digest),
        }
    }

    /// How the run is seen: the playhead, the zoom, each service's own order and the
    /// comparison.
    pub fn view(&self) -> share::View {
        share::View {
            playhead_us: self.time,
            zoom: self.zoom,
            own_order: self.own_order,
            compare: self.compare.as_ref().map(|c| c.toggle.clone()),
        }
    }

    /// The app showing a link's state. A link made by another version, or whose run now
    /// differs, still opens, with a notice that says so and what differs.
    fn open_link(&self, link: &share::Link) -> App {
        let scenario = match link.source.scenario_with(self.codec) {
            Ok(s) => s,
            Err(e) => return self.reduce_inner(Action::LinkFailed(e.0)),
        };
        let mut next = match &link.source {
            share::Source::Builtin { file, .. } => App::open_with(self.codec, file),
            share::Source::Custom { .. } | share::Source::Json { .. } => {
                match builtin_of(self.codec, &scenario) {
                    Some(file) => App::open_with(self.codec, file),
                    None => {
                        App::from_scenario_with(self.codec, scenario.clone(), BLANK.to_string())
                    }
                }
            }
        };
        next.speed = self.speed;
        next.legend = self.legend;
        next.revision = self.revision;
        if next.scenario != scenario {
            next.text = (self.codec.write)(&scenario);
            next.set_scenario(scenario);
        }
        if !next.errors.is_empty() {
            return self.reduce_inner(Action::LinkFailed(
                "its scenario does not run here".to_string(),
            ));
        }
        next = next.with_view(&link.view());
        next.link_note = link_note(link, next.outcome.digest);
        next.linked = true;
        next
    }

    /// The app with a link's view of the run (zoom, each service's own order, the comparison
    /// and the playhead), leaving the scenario as it is.
    fn with_view(self, view: &share::View) -> App {
        let mut next = self;
        next.zoom = view.zoom.clamp(1, ZOOM_MAX);
        next.own_order = view.own_order;
        if let Some(edit) = &view.compare {
            if edit.problem(&next.scenario).is_none() {
                next = next.reduce_inner(Action::Compare(Some(edit.toggle(&next.scenario))));
            }
        }
        next.seek(view.playhead_us.min(next.outcome.end));
        next.follow();
        next
    }

    /// What another copy of the app needs to go on where this one is ([`App::resume`]).
    pub fn left_off(&self) -> LeftOff {
        LeftOff {
            saved: self.saved(),
            valid_text: self.valid_text.clone(),
            view: self.view(),
            linked: self.linked,
            speed: self.speed,
            legend: self.legend,
            controls: (!self.settings.is_empty()).then(|| {
                (
                    self.base.to_json_string(),
                    self.settings
                        .toggles()
                        .iter()
                        .map(|t| t.to_string())
                        .collect(),
                )
            }),
        }
    }

    /// The app as another copy of it left off: the same source, text and last valid text (so
    /// the same run, errors and Reset), seen the way its view says, saved or not as that copy
    /// was. This is how the page's small first bundle hands the page over to the full one.
    pub fn resume(l: &LeftOff) -> App {
        App::resume_with(Codec::FULL, l)
    }

    /// [`App::resume`] with a codec.
    pub fn resume_with(codec: Codec, l: &LeftOff) -> App {
        let mut app = App::open_with(codec, &l.saved.source);
        // The last valid text, then the text: a text with errors leaves the run of the last
        // valid one, as it did in the copy that handed over.
        for text in [&l.valid_text, &l.saved.text] {
            if *text != app.text {
                app = app.reduce(Action::Edit(text.clone()));
            }
        }
        // The controls' values, if they still describe the run: otherwise the text rules.
        if let Some((json, lines)) = &l.controls {
            let base = (app.codec.json)(json).ok();
            let toggles: Option<Vec<Toggle>> = lines.iter().map(|x| x.parse().ok()).collect();
            if let (Some(base), Some(toggles)) = (base, toggles) {
                let settings = Settings::of(&toggles);
                if settings.apply(&base) == app.scenario {
                    app.base = base;
                    app.settings = settings;
                }
            }
        }
        let mut app = app.with_view(&l.view);
        app.linked = l.linked;
        app.speed = l.speed;
        app.legend = l.legend;
        app
    }

    /// A lesson's action, done by the course's own code ([`course::LessonOps::reduce`]), so
    /// that a bundle without lessons links none of it.
    fn reduce_lesson(&self, action: LessonAction) -> App {
        let ops = match (&action, &self.lesson) {
            (LessonAction::Open { course, .. }, _) => course.ops,
            (_, Some(run)) => run.course.ops,
            (_, None) => return self.clone(),
        };
        (ops.reduce)(self, action)
    }

    /// [`App::reduce_lesson`]'s work: see [`course::LessonOps::reduce`].
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

    /// Runs a new valid scenario, keeping the playhead's time and the comparison's flip.
    /// Runs a scenario set other than by a toggle: it is a new starting point for the
    /// controls, whose values start afresh from it. An invalid one only shows its errors.
    fn set_scenario(&mut self, scenario: Scenario) {
        if scenario.validate().is_ok() {
            self.base = scenario.clone();
            self.settings = Settings::default();
        }
        self.set_run(scenario);
    }

    /// Runs a scenario, keeping the controls' base and values as they are.
    fn set_run(&mut self, scenario: Scenario) {
        // The text is settled either way: it ran, or it has errors to show.
        self.reading = false;
        match Outcome::compute(&scenario) {
            Ok(outcome) => {
                self.errors.clear();
                self.valid_text = self.text.clone();
                self.scenario = scenario;
                self.outcome = Rc::new(outcome);
                self.selected = None;
                self.selected_flipped = None;
                self.pinned = None;
                let t = self.time.min(self.outcome.end);
                self.seek(t);
                if let Some(c) = self.compare.take() {
                    // The flip is recomputed against the new scenario; a flip the new scenario
                    // no longer offers is dropped rather than guessed at.
                    let flips = toggles::flips(&self.scenario);
                    self.compare = flips
                        .into_iter()
                        .find(|(_, t)| *t == c.toggle)
                        .map(|(label, t)| self.comparison(t, label));
                }
            }
            Err(errors) => self.errors = errors,
        }
    }

    fn comparison(&self, toggle: Toggle, label: String) -> Rc<Comparison> {
        let flipped = self.settings.with(toggle.clone()).apply(&self.base);
        let result = Outcome::compute(&flipped).map(|b| {
            let a = &self.outcome;
            let diff = Diff::of(&a.events, &b.events);
            (Rc::new(b), Rc::new(diff))
        });
        Rc::new(Comparison {
            toggle,
            label,
            result,
        })
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
