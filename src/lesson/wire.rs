//! The compact form the app loads lessons in: parsed, with narration already rendered.
//!
//! Parsing Markdown (and the lesson texts themselves) would add a large share to the page's
//! first download, so the app does not parse lesson files when it starts. The shipped lessons
//! are written in this form once, natively (`static/course/`, kept equal to the lesson
//! files by a test), and fetched when a lesson view opens; a file a facilitator pastes is
//! parsed and checked off the page's thread and comes back in this form too.
//!
//! Narration travels as the safe tree of [`Block`]s, never as markup. Claims, conditions,
//! edits, controls and lanes travel as the words the lesson file used and are read again with
//! the same parsers, and scenarios as the scenario format's JSON, which every bundle reads
//! (links carry scenarios as JSON too): the lesson view then needs neither a Markdown parser, nor
//! a TOML reader, nor a second description of those types.

use serde::Serialize;

mod read;

use super::claim::{Claim, Condition};
use super::cue::{Cue, EventPattern, Highlight, LaneRef};
use super::edit::{Control, Edit};
use super::narration::{render, Block, Inline};
use super::{
    Exercise, Gate, GateMessage, Lesson, Misconception, Narration, Prediction, PredictionChoice,
    Setup, Step, StepSweep,
};
use crate::scenario::Scenario;

/// The format's version, written in every file; a file of another version is refused.
pub const VERSION: u32 = 3;

/// Reads a lesson in compact form from its JSON. The compact form is read by hand ([`read`]):
/// a derived reader for each of its types cost about 10 KB (gzip) of the lesson view's
/// download.
pub fn lesson_of(value: &serde_json::Value) -> Result<WireLesson, String> {
    read::lesson(value)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireLesson {
    pub id: String,
    pub title: String,
    pub order: u32,
    pub claims: Vec<u8>,
    pub summary: String,
    pub intro: Vec<Block>,
    pub steps: Vec<WireStep>,
    pub exercises: Vec<WireExercise>,
    /// The lesson's short texts that hold Markdown (titles, goals, hints, explanations, success
    /// and gate messages, assumptions, predictions), each with its rendering: the page shows them
    /// with their code and emphasis rather than raw backticks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rich: Vec<(String, Vec<Inline>)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireStep {
    pub id: String,
    pub title: String,
    pub line: u32,
    /// The shipped scenario it started from, for the record.
    pub file: String,
    /// The scenario the step runs, in the scenario format's JSON.
    pub scenario: serde_json::Value,
    pub controls: Vec<String>,
    pub lanes: Vec<String>,
    pub events: Vec<EventPattern>,
    pub overlaps: bool,
    pub assumptions: Vec<String>,
    pub narration: Vec<Block>,
    pub cues: Vec<WireCue>,
    pub claims: Vec<String>,
    pub gate: Option<WireGate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<WirePrediction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<WireSweep>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<WireRecording>,
}

/// A step's recording: its file name and the members of the file the page reads (the trace,
/// its digest, its seed and what it was recorded from). The page judges the trace itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireRecording {
    pub file: String,
    pub document: serde_json::Value,
}

/// A step's sweep with its points, computed when the compact form is written, so that the
/// page draws it without running it (the points are the engine's, and the shipped file is
/// checked to be what the engine computes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireSweep {
    pub line: u32,
    pub param: String,
    pub values: Vec<u64>,
    pub seeds: u64,
    pub caption: String,
    pub points: Vec<crate::sweep::SweepPoint>,
    /// The file beside this lesson's, in the course's folder, that holds the plot as SVG
    /// ([`crate::plot::svg`], drawn when the shipped course is written): the lesson view shows
    /// it as an image and links no plotting code. A lesson read in the page has none (its
    /// checker, a worker, cannot draw: plotters measures text in the page's document), and
    /// the lesson view has the plot drawn by a bundle of its own, loaded for that step alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plot: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WirePrediction {
    pub line: u32,
    pub question: String,
    /// Each choice's words and its claim.
    pub choices: Vec<(String, String)>,
    pub why: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireCue {
    pub line: u32,
    /// The cue's Markdown as written (kept so that the lesson round-trips).
    pub text: String,
    /// The same, rendered.
    pub blocks: Vec<Block>,
    pub when: EventPattern,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireGate {
    pub line: u32,
    pub prompt: String,
    pub passed: String,
    pub when: Vec<String>,
    pub intended: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<WireGateMessage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misconceptions: Vec<WireMisconception>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireGateMessage {
    pub line: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<String>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireExercise {
    pub id: String,
    pub title: String,
    pub line: u32,
    pub goal: String,
    pub narration: Vec<Block>,
    pub file: String,
    pub scenario: serde_json::Value,
    pub controls: Vec<String>,
    pub seeds: Vec<u64>,
    pub check: Vec<String>,
    pub hints: Vec<String>,
    pub solution: Vec<String>,
    pub alternatives: Vec<Vec<String>>,
    pub explanation: String,
    pub success: String,
    pub misconceptions: Vec<WireMisconception>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireMisconception {
    pub line: u32,
    pub when: Vec<String>,
    pub hint: String,
    pub example: Vec<String>,
}

/// A lesson as the app holds it: the lesson, with its narration rendered beside it (the
/// [`Narration`]s inside `lesson` are empty: the app never parses Markdown).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub lesson: Lesson,
    pub intro: Vec<Block>,
    /// Per step: its narration and each cue's text.
    pub steps: Vec<StepText>,
    /// Per exercise: its introduction.
    pub exercises: Vec<Vec<Block>>,
    /// The short texts that hold Markdown, rendered ([`WireLesson::rich`]).
    pub rich: std::sync::Arc<crate::sorted::SortedMap<String, Vec<Inline>>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepText {
    pub narration: Vec<Block>,
    pub cues: Vec<Vec<Block>>,
    /// The points of the step's sweep, as the engine computed them.
    pub sweep: Vec<crate::sweep::SweepPoint>,
    /// The course's file that holds the plot of the step's sweep, when there is one.
    pub sweep_plot: Option<String>,
}

/// What the lesson view asks the `plot` bundle to draw: a sweep in its compact form, without
/// its plot.
pub fn sweep_plot_request(
    param: crate::sweep::Param,
    caption: &str,
    points: &[crate::sweep::SweepPoint],
) -> String {
    let request = WireSweep {
        line: 0,
        param: param.name().to_string(),
        values: points.iter().map(|p| p.value).collect(),
        seeds: 0,
        caption: caption.to_string(),
        points: points.to_vec(),
        plot: None,
    };
    serde_json::to_string(&request).unwrap_or_default()
}

/// The plot a [`sweep_plot_request`] asks for, as SVG: what the `plot` bundle answers. The
/// drawing is the course's plot file's, though its labels are placed by the page's measure of
/// the text (natively, plotters estimates it).
pub fn sweep_plot(request: &str) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(request).map_err(|e| e.to_string())?;
    let sweep = read::sweep(&value)?;
    let param = crate::sweep::Param::from_name(&sweep.param)
        .ok_or_else(|| format!("unknown sweep param \"{}\"", sweep.param))?;
    crate::plot::svg(&sweep.caption, param, &sweep.points)
}

fn lane_text(l: &LaneRef) -> String {
    match l {
        LaneRef::Client(n) => format!("client {n}"),
        LaneRef::Service(n) => format!("service {n}"),
        LaneRef::Resource(n) => format!("resource {n}"),
    }
}

fn words<T: ToString>(items: &[T]) -> Vec<String> {
    items.iter().map(T::to_string).collect()
}

/// A parsed lesson in the compact form. This renders every narration, so it is for the native
/// side and for the worker that reads pasted files; the page itself only reads the result.
pub fn to_wire(l: &Lesson) -> WireLesson {
    WireLesson {
        id: l.id.clone(),
        title: l.title.clone(),
        order: l.order,
        claims: l.claims.clone(),
        summary: l.summary.clone(),
        intro: l.intro.blocks(),
        steps: l
            .steps
            .iter()
            .map(|s| WireStep {
                id: s.id.clone(),
                title: s.title.clone(),
                line: s.line,
                file: s.setup.file.clone(),
                scenario: json_of(&s.scenario),
                controls: words(&s.controls),
                lanes: s.highlight.lanes.iter().map(lane_text).collect(),
                events: s.highlight.events.clone(),
                overlaps: s.highlight.overlaps,
                assumptions: s.assumptions.clone(),
                narration: s.narration.blocks(),
                cues: s
                    .cues
                    .iter()
                    .map(|c| WireCue {
                        line: c.line,
                        text: c.text.clone(),
                        blocks: render(&c.text),
                        when: c.when.clone(),
                        given: c.given.iter().map(|g| g.text.clone()).collect(),
                    })
                    .collect(),
                claims: s.claims.iter().map(|c| c.text.clone()).collect(),
                sweep: s.sweep.as_ref().map(|sw| WireSweep {
                    line: sw.line,
                    param: sw.param.name().to_string(),
                    values: sw.values.clone(),
                    seeds: sw.seeds,
                    caption: sw.caption.clone(),
                    points: sw.run(&s.scenario).unwrap_or_default(),
                    plot: None,
                }),
                recording: s.recording.as_ref().map(|r| WireRecording {
                    file: r.file.clone(),
                    document: serde_json::json!({
                        "digest": format!("{:016x}", crate::trace::digest(&r.run.events)),
                        "recorded": r.run.source_json(),
                        "seed": r.run.seed,
                        "trace": r.run.events,
                    }),
                }),
                prediction: s.prediction.as_ref().map(|p| WirePrediction {
                    line: p.line,
                    question: p.question.clone(),
                    choices: p
                        .choices
                        .iter()
                        .map(|c| (c.text.clone(), c.claim.text.clone()))
                        .collect(),
                    why: p.why.clone(),
                }),
                gate: s.gate.as_ref().map(|g| WireGate {
                    line: g.line,
                    prompt: g.prompt.clone(),
                    passed: g.passed.clone(),
                    when: g.when.iter().map(|c| c.text.clone()).collect(),
                    intended: words(&g.intended),
                    messages: g
                        .messages
                        .iter()
                        .map(|m| WireGateMessage {
                            line: m.line,
                            when: m.when.iter().map(|c| c.text.clone()).collect(),
                            given: m.given.iter().map(|c| c.text.clone()).collect(),
                            text: m.text.clone(),
                        })
                        .collect(),
                    misconceptions: g.misconceptions.iter().map(wire_misconception).collect(),
                }),
            })
            .collect(),
        exercises: l
            .exercises
            .iter()
            .map(|e| WireExercise {
                id: e.id.clone(),
                title: e.title.clone(),
                line: e.line,
                goal: e.goal.clone(),
                narration: e.narration.blocks(),
                file: e.setup.file.clone(),
                scenario: json_of(&e.scenario),
                controls: words(&e.controls),
                seeds: e.seeds.clone(),
                check: e.check.iter().map(|c| c.text.clone()).collect(),
                hints: e.hints.clone(),
                solution: words(&e.solution),
                alternatives: e.alternatives.iter().map(|a| words(a)).collect(),
                explanation: e.explanation.clone(),
                success: e.success.clone(),
                misconceptions: e.misconceptions.iter().map(wire_misconception).collect(),
            })
            .collect(),
        rich: rich_texts(l),
    }
}

/// Every short text of a lesson that the page shows, rendered, where the rendering is more
/// than the text itself (it holds code, emphasis or a link).
fn rich_texts(l: &Lesson) -> Vec<(String, Vec<Inline>)> {
    // Titles too: "Make `new` defer to `old`" shows its names as code, never as backticks.
    let mut texts: Vec<&str> = vec![l.title.as_str(), l.summary.as_str()];
    for s in &l.steps {
        texts.push(s.title.as_str());
        texts.extend(s.assumptions.iter().map(String::as_str));
        if let Some(g) = &s.gate {
            texts.extend([g.prompt.as_str(), g.passed.as_str()]);
            texts.extend(g.messages.iter().map(|m| m.text.as_str()));
            texts.extend(g.misconceptions.iter().map(|m| m.hint.as_str()));
        }
        if let Some(p) = &s.prediction {
            texts.extend([p.question.as_str(), p.why.as_str()]);
            texts.extend(p.choices.iter().map(|c| c.text.as_str()));
        }
    }
    for e in &l.exercises {
        texts.extend([
            e.title.as_str(),
            e.goal.as_str(),
            e.explanation.as_str(),
            e.success.as_str(),
        ]);
        texts.extend(e.hints.iter().map(String::as_str));
        texts.extend(e.misconceptions.iter().map(|m| m.hint.as_str()));
    }
    let mut out: Vec<(String, Vec<Inline>)> = Vec::new();
    for t in texts {
        if t.is_empty() || out.iter().any(|(k, _)| k == t) {
            continue;
        }
        let inline: Vec<Inline> = render(t)
            .into_iter()
            .flat_map(|b| match b {
                Block::Paragraph(items) => items,
                _ => Vec::new(),
            })
            .collect();
        if inline != [Inline::Text(t.to_string())] && !inline.is_empty() {
            out.push((t.to_string(), inline));
        }
    }
    out
}

/// The folder the shipped lessons are served from, beside the page (`static/course/`).
pub const COURSE_DIR: &str = "course";

/// The shipped lessons as the files the page fetches: `index.json`, the lessons' ids in course
/// order, and a file a lesson (`ID.json`), each compact JSON on one line (pretty JSON's
/// indentation cost a fifth more after compression). A lesson step fetches its own lesson's
/// file first and shows it; the others follow. All of them together would be several times
/// what one step needs.
pub fn course_files(lessons: &[Lesson]) -> Vec<(String, String)> {
    let ids: Vec<&str> = lessons.iter().map(|l| l.id.as_str()).collect();
    let mut files = vec![(
        "index.json".to_string(),
        format!(
            "{{\"version\":{VERSION},\"lessons\":{}}}\n",
            serde_json::to_string(&ids).expect("ids serialize")
        ),
    )];
    for l in lessons {
        let mut wire = to_wire(l);
        // Each sweep's plot goes in a file of its own, which the lesson view shows as an image:
        // the lesson's file stays small, and a plot is fetched only with its step.
        for step in &mut wire.steps {
            let Some(sw) = &mut step.sweep else { continue };
            let param = crate::sweep::Param::from_name(&sw.param).expect("a sweep names its param");
            let svg =
                crate::plot::svg(&sw.caption, param, &sw.points).expect("plots draw natively");
            let file = format!("{}.{}.svg", l.id, step.id);
            files.push((file.clone(), svg));
            sw.plot = Some(file);
        }
        let lesson = serde_json::to_string(&wire).expect("lessons serialize");
        files.push((
            format!("{}.json", l.id),
            format!("{{\"version\":{VERSION},\"lesson\":{lesson}}}\n"),
        ));
    }
    files
}

fn parse_all<T>(
    items: &[String],
    what: &str,
    f: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    items
        .iter()
        .map(|t| f(t).map_err(|e| format!("{what} \"{t}\": {e}")))
        .collect()
}

fn json_of(scenario: &Scenario) -> serde_json::Value {
    serde_json::to_value(scenario).unwrap_or_default()
}

/// The scenario, validated like any other. A string is what version 1 wrote (TOML): this
/// version reads it as an earlier version's, which the page checks again from the file's text.
fn scenario(value: &serde_json::Value) -> Result<Scenario, String> {
    match value {
        serde_json::Value::Object(_) => {
            Scenario::from_json_str(&value.to_string()).map_err(|e| e.to_string())
        }
        _ => Err(EARLIER.into()),
    }
}

/// Why a lesson written by an earlier version does not read.
pub const EARLIER: &str = "written by an earlier version of this page";

fn setup(file: &str) -> Setup {
    Setup {
        file: file.to_string(),
        patches: Vec::new(),
        edits: Vec::new(),
    }
}

fn empty(line: u32) -> Narration {
    Narration {
        markdown: String::new(),
        line,
    }
}

/// Reads a lesson in the compact form back: every claim, edit, control and scenario is
/// parsed again, so a damaged file is refused with the reason rather than half read. The
/// compact form is consumed: its texts and narration move into the lesson rather than being
/// copied (a copy of every narration type was code the lesson view carried for nothing).
pub fn from_wire(w: WireLesson) -> Result<Loaded, String> {
    let mut steps = Vec::new();
    let mut texts = Vec::new();
    for s in w.steps {
        let id = s.id;
        let fail = |e: String| format!("step \"{id}\": {e}");
        let gate = match s.gate {
            None => None,
            Some(g) => {
                let when =
                    parse_all(&g.when, "claim", |t| Claim::parse(t, g.line)).map_err(fail)?;
                let intended = parse_all(&g.intended, "edit", str::parse::<Edit>).map_err(fail)?;
                let mut messages = Vec::new();
                for m in g.messages {
                    messages.push(GateMessage {
                        line: m.line,
                        when: parse_all(&m.when, "claim", |t| Claim::parse(t, m.line))
                            .map_err(fail)?,
                        given: parse_all(&m.given, "condition", Condition::parse).map_err(fail)?,
                        text: m.text,
                    });
                }
                Some(Gate {
                    line: g.line,
                    prompt: g.prompt,
                    passed: g.passed,
                    when,
                    intended,
                    messages,
                    misconceptions: misconceptions(&g.misconceptions).map_err(fail)?,
                })
            }
        };
        // The rest is read in the order the fields were always read, so that a damaged file
        // is refused for the same first fault.
        let scenario = scenario(&s.scenario).map_err(fail)?;
        let controls = parse_all(&s.controls, "control", str::parse::<Control>).map_err(fail)?;
        let lanes = parse_all(&s.lanes, "lane", str::parse::<LaneRef>).map_err(fail)?;
        let mut cues = Vec::new();
        let mut cue_texts = Vec::new();
        for c in s.cues {
            cues.push(Cue {
                line: c.line,
                text: c.text,
                when: c.when,
                given: parse_all(&c.given, "condition", Condition::parse).map_err(fail)?,
            });
            cue_texts.push(c.blocks);
        }
        let claims = parse_all(&s.claims, "claim", |t| Claim::parse(t, s.line)).map_err(fail)?;
        let recording = match s.recording {
            None => None,
            Some(r) => Some(super::StepRecording {
                run: std::sync::Arc::new(
                    crate::recording::Recording::parse(&r.document.to_string())
                        .map_err(|e| fail(format!("recording \"{}\": {e}", r.file)))?,
                ),
                file: r.file,
            }),
        };
        let (sweep, points, plot) = match s.sweep {
            None => (None, Vec::new(), None),
            Some(sw) => (
                Some(StepSweep {
                    line: sw.line,
                    param: crate::sweep::Param::from_name(&sw.param)
                        .ok_or_else(|| fail(format!("unknown sweep param \"{}\"", sw.param)))?,
                    values: sw.values,
                    seeds: sw.seeds,
                    caption: sw.caption,
                }),
                sw.points,
                sw.plot,
            ),
        };
        let prediction = match s.prediction {
            None => None,
            Some(p) => {
                let mut choices = Vec::new();
                for (text, claim) in p.choices {
                    let claim = Claim::parse(&claim, p.line)
                        .map_err(|e| fail(format!("claim \"{claim}\": {e}")))?;
                    choices.push(PredictionChoice { text, claim });
                }
                Some(Prediction {
                    line: p.line,
                    question: p.question,
                    choices,
                    why: p.why,
                })
            }
        };
        steps.push(Step {
            title: s.title,
            line: s.line,
            setup: setup(&s.file),
            scenario,
            controls,
            highlight: Highlight {
                lanes,
                events: s.events,
                overlaps: s.overlaps,
            },
            assumptions: s.assumptions,
            narration: empty(s.line),
            cues,
            claims,
            gate,
            recording,
            sweep,
            prediction,
            id,
        });
        texts.push(StepText {
            narration: s.narration,
            cues: cue_texts,
            sweep: points,
            sweep_plot: plot,
        });
    }
    let mut exercises = Vec::new();
    let mut exercise_texts = Vec::new();
    for e in w.exercises {
        let id = e.id;
        let fail = |x: String| format!("exercise \"{id}\": {x}");
        let edits = |items: &[String]| parse_all(items, "edit", str::parse::<Edit>).map_err(fail);
        let misconceptions = misconceptions(&e.misconceptions).map_err(fail)?;
        let scenario = scenario(&e.scenario).map_err(fail)?;
        let controls = parse_all(&e.controls, "control", str::parse::<Control>).map_err(fail)?;
        let check = parse_all(&e.check, "claim", |t| Claim::parse(t, e.line)).map_err(fail)?;
        let solution = edits(&e.solution)?;
        let mut alternatives = Vec::new();
        for a in &e.alternatives {
            alternatives.push(edits(a)?);
        }
        exercises.push(Exercise {
            title: e.title,
            line: e.line,
            goal: e.goal,
            // An author's note for `lesson check`: the page never shows it, so the compact
            // form leaves it out.
            idea: String::new(),
            narration: empty(e.line),
            setup: setup(&e.file),
            scenario,
            controls,
            seeds: e.seeds,
            check,
            hints: e.hints,
            solution,
            alternatives,
            explanation: e.explanation,
            success: e.success,
            misconceptions,
            id,
        });
        exercise_texts.push(e.narration);
    }
    Ok(Loaded {
        lesson: Lesson {
            id: w.id,
            title: w.title,
            order: w.order,
            claims: w.claims,
            summary: w.summary,
            intro: empty(1),
            steps,
            exercises,
        },
        intro: w.intro,
        steps: texts,
        exercises: exercise_texts,
        // One sort, not an insertion per text: a lesson opened by link may hold very many.
        rich: std::sync::Arc::new(crate::sorted::SortedMap::from_pairs_merging(
            w.rich,
            |a, b| *a = b,
        )),
    })
}

/// A file of the shipped course, parsed, with its version checked.
fn course_file(json: &str) -> Result<serde_json::Value, String> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => Ok(value),
        Some(v) => Err(format!(
            "the lessons are of version {v}, this page reads version {VERSION}"
        )),
        None => Err("the lessons' file has no version".into()),
    }
}

/// Reads the course's `index.json`: the ids of its lessons, in course order.
pub fn read_index(json: &str) -> Result<Vec<String>, String> {
    read::index(&course_file(json)?)
}

/// Reads one lesson's file of the shipped course.
pub fn read_lesson_file(json: &str) -> Result<Loaded, String> {
    let w = read::lesson_file(&course_file(json)?)?;
    let id = w.id.clone();
    from_wire(w).map_err(|e| format!("lesson \"{id}\": {e}"))
}

/// Reads the shipped course from its files, by name ([`course_files`]): the index, then each
/// lesson it lists, which must be the lesson of that id.
pub fn read_course_files(files: &[(String, String)]) -> Result<Vec<Loaded>, String> {
    let text = |name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
            .ok_or_else(|| format!("{COURSE_DIR}/{name} is missing"))
    };
    read_index(text("index.json")?)?
        .iter()
        .map(|id| {
            let l = read_lesson_file(text(&format!("{id}.json"))?)?;
            if l.lesson.id != *id {
                return Err(format!(
                    "{COURSE_DIR}/{id}.json holds lesson \"{}\"",
                    l.lesson.id
                ));
            }
            Ok(l)
        })
        .collect()
}

fn wire_misconception(m: &Misconception) -> WireMisconception {
    WireMisconception {
        line: m.line,
        when: m.when.iter().map(|c| c.text.clone()).collect(),
        hint: m.hint.clone(),
        example: words(&m.example),
    }
}

fn misconceptions(items: &[WireMisconception]) -> Result<Vec<Misconception>, String> {
    let mut out = Vec::new();
    for m in items {
        out.push(Misconception {
            line: m.line,
            when: parse_all(&m.when, "condition", Condition::parse)?,
            hint: m.hint.clone(),
            example: parse_all(&m.example, "edit", str::parse::<Edit>)?,
        });
    }
    Ok(out)
}
