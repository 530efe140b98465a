//! Reading a lesson file: the `+++` header, the Markdown body, and the fenced TOML blocks that
//! set up steps and exercises. Every problem is reported with its line, and as many problems
//! as can be found are reported at once. Nothing is run here: scenarios are built and
//! validated, names are checked, and the engine's part is left to [`super::check`].

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};
use serde::Deserialize;
use toml::Spanned;

use crate::builtin;
use crate::scenario::Scenario;

use super::claim::{self, Claim, Condition};
use super::cue::{Cue, EventPattern, Highlight, LaneRef};
use super::edit::{self, Control, Edit, Patch};
use super::{
    Exercise, Gate, GateMessage, Lesson, LessonError, Misconception, Narration, Prediction,
    PredictionChoice, Setup, Step, StepSweep, CHOICES_MAX, DESIGN_CLAIMS, EXERCISES_MAX, ITEMS_MAX,
    LESSON_BYTES_MAX, STEPS_MAX,
};

/// The kinds of fenced blocks that a lesson reads; any other fenced block is narration.
const KINDS: [&str; 7] = [
    "step", "cues", "claims", "gate", "predict", "sweep", "exercise",
];

/// The lists of a scenario whose elements `set` names (by name or number).
const LISTS: [&str; 6] = [
    "services",
    "resources",
    "clients",
    "partitions",
    "pauses",
    "migrations",
];

/// Collects problems, each at a line.
struct Problems(Vec<LessonError>);

impl Problems {
    fn at(&mut self, line: u32, message: impl Into<String>) {
        self.0.push(LessonError {
            line,
            message: message.into(),
        });
    }
}

/// Line numbers of byte offsets in a text.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// The line (from 1) of a byte offset.
    fn of(&self, offset: usize) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

/// A fenced block of one of the lesson's kinds.
struct Fence {
    kind: &'static str,
    /// The line of the opening fence.
    line: u32,
    /// The line of the block's first content line.
    content_line: u32,
    content: String,
    /// Where the block starts and ends in the body.
    range: std::ops::Range<usize>,
}

/// The TOML of a block, or its error located in the file.
fn read_toml<T: serde::de::DeserializeOwned>(fence: &Fence, problems: &mut Problems) -> Option<T> {
    match toml::from_str::<T>(&fence.content) {
        Ok(x) => Some(x),
        Err(e) => {
            let line = e
                .span()
                .map(|s| fence.content_line + Lines::new(&fence.content).of(s.start) - 1)
                .unwrap_or(fence.line);
            problems.at(
                line,
                format!("in the {} block: {}", fence.kind, e.message().trim()),
            );
            None
        }
    }
}

/// The line in the file of a spanned value of a block.
fn line_of<T>(fence: &Fence, spanned: &Spanned<T>) -> u32 {
    fence.content_line + Lines::new(&fence.content).of(spanned.span().start) - 1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderToml {
    id: String,
    title: String,
    order: u32,
    #[serde(default)]
    claims: Vec<u8>,
    #[serde(default)]
    summary: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HighlightToml {
    #[serde(default)]
    lanes: Vec<Spanned<String>>,
    #[serde(default)]
    events: Vec<Spanned<EventPattern>>,
    #[serde(default)]
    overlaps: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepToml {
    id: Spanned<String>,
    title: String,
    scenario: Spanned<String>,
    #[serde(default)]
    set: Option<Spanned<toml::Table>>,
    #[serde(default)]
    add: Option<Spanned<toml::Table>>,
    #[serde(default)]
    edits: Vec<Spanned<String>>,
    #[serde(default)]
    controls: Vec<Spanned<String>>,
    #[serde(default)]
    assumptions: Vec<String>,
    #[serde(default)]
    highlight: Option<HighlightToml>,
    /// A shipped recording the step shows instead of a simulated run.
    #[serde(default)]
    recording: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CueToml {
    text: String,
    when: EventPattern,
    #[serde(default)]
    given: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CuesToml {
    cue: Vec<Spanned<CueToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateToml {
    when: Vec<Spanned<String>>,
    intended: Vec<Spanned<String>>,
    prompt: String,
    #[serde(default)]
    passed: String,
    #[serde(default)]
    message: Vec<Spanned<GateMessageToml>>,
    #[serde(default)]
    misconception: Vec<Spanned<MisconceptionToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepToml {
    param: String,
    values: Vec<u64>,
    seeds: u64,
    caption: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictToml {
    question: String,
    choice: Vec<PredictChoiceToml>,
    #[serde(default)]
    why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictChoiceToml {
    text: String,
    claim: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GateMessageToml {
    #[serde(default)]
    when: Vec<String>,
    #[serde(default)]
    given: Vec<String>,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MisconceptionToml {
    when: Vec<String>,
    hint: String,
    example: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExerciseToml {
    id: Spanned<String>,
    title: String,
    goal: String,
    /// Read when missing, so that a lesson without one still opens; `lesson check` refuses
    /// it (see [`super::Exercise::idea`]).
    #[serde(default)]
    idea: String,
    scenario: Spanned<String>,
    #[serde(default)]
    set: Option<Spanned<toml::Table>>,
    #[serde(default)]
    add: Option<Spanned<toml::Table>>,
    #[serde(default)]
    edits: Vec<Spanned<String>>,
    controls: Vec<Spanned<String>>,
    seeds: Spanned<toml::Value>,
    check: Vec<Spanned<String>>,
    hints: Vec<String>,
    solution: Vec<Spanned<String>>,
    #[serde(default)]
    alternatives: Vec<Spanned<Vec<String>>>,
    #[serde(default)]
    explanation: String,
    #[serde(default)]
    success: String,
    #[serde(default)]
    misconception: Vec<Spanned<MisconceptionToml>>,
}

/// Reads a lesson. On success every scenario it sets up is valid and every name it uses
/// exists; what the engine says about them is checked by [`super::check`].
pub fn parse(text: &str) -> Result<Lesson, Vec<LessonError>> {
    let mut problems = Problems(Vec::new());
    if text.len() > LESSON_BYTES_MAX {
        problems.at(
            1,
            format!("the lesson is larger than {LESSON_BYTES_MAX} bytes"),
        );
        return Err(problems.0);
    }
    let Some((header, header_line, body, body_offset)) = split_header(text) else {
        problems.at(
            1,
            "a lesson starts with a header between two lines of +++ (id, title, order, claims)",
        );
        return Err(problems.0);
    };
    let file_lines = Lines::new(text);
    let header_fence = Fence {
        kind: "header",
        line: header_line - 1,
        content_line: header_line,
        content: header.to_string(),
        range: 0..0,
    };
    let header: Option<HeaderToml> = read_toml(&header_fence, &mut problems);
    if let Some(h) = &header {
        if !super::is_id(&h.id) {
            problems.at(
                header_line,
                format!(
                    "id \"{}\" must be 1 to 40 letters, digits, '-' or '_'",
                    h.id
                ),
            );
        }
        for c in &h.claims {
            if !DESIGN_CLAIMS.contains(c) {
                problems.at(
                    header_line,
                    format!("claim {c} is not one of the product brief's claims 1 to 11"),
                );
            }
        }
    }

    let fences = fences(body, body_offset, &file_lines, &mut problems);
    let mut lesson = Lesson {
        id: header.as_ref().map(|h| h.id.clone()).unwrap_or_default(),
        title: header.as_ref().map(|h| h.title.clone()).unwrap_or_default(),
        order: header.as_ref().map_or(0, |h| h.order),
        claims: header
            .as_ref()
            .map(|h| h.claims.clone())
            .unwrap_or_default(),
        summary: header.map(|h| h.summary).unwrap_or_default(),
        intro: Narration::default(),
        steps: Vec::new(),
        exercises: Vec::new(),
    };

    /// Where narration and later blocks go.
    enum Current {
        Intro,
        Step,
        Exercise,
        /// After a step or exercise that could not be read: its blocks are skipped.
        Broken,
    }
    let mut current = Current::Intro;
    let mut previous_end = 0;
    let mut ids: Vec<String> = Vec::new();
    for fence in &fences {
        let prose = &body[previous_end..fence.range.start];
        let prose_line = file_lines.of(body_offset + previous_end);
        previous_end = fence.range.end;
        let narration = match current {
            Current::Intro => Some(&mut lesson.intro),
            Current::Step => lesson.steps.last_mut().map(|s| &mut s.narration),
            Current::Exercise => lesson.exercises.last_mut().map(|e| &mut e.narration),
            Current::Broken => None,
        };
        if let Some(n) = narration {
            add_prose(n, prose, prose_line);
        }
        match fence.kind {
            "step" => {
                if lesson.steps.len() >= STEPS_MAX {
                    problems.at(fence.line, format!("more than {STEPS_MAX} steps"));
                }
                if !lesson.exercises.is_empty() {
                    problems.at(
                        fence.line,
                        "steps come before the exercises: a step after an exercise",
                    );
                }
                match step(fence, &mut ids, &mut problems) {
                    Some(s) => {
                        lesson.steps.push(s);
                        current = Current::Step;
                    }
                    None => current = Current::Broken,
                }
            }
            "exercise" => {
                if lesson.exercises.len() >= EXERCISES_MAX {
                    problems.at(fence.line, format!("more than {EXERCISES_MAX} exercises"));
                }
                match exercise(fence, &mut ids, &mut problems) {
                    Some(e) => {
                        lesson.exercises.push(e);
                        current = Current::Exercise;
                    }
                    None => current = Current::Broken,
                }
            }
            kind => match current {
                Current::Step => {
                    let step = lesson.steps.last_mut().expect("current is a step");
                    step_part(step, kind, fence, &mut problems);
                }
                Current::Broken => {}
                Current::Intro | Current::Exercise => problems.at(
                    fence.line,
                    format!("a {kind} block belongs to a step: put it after a step block"),
                ),
            },
        }
    }
    let rest = &body[previous_end..];
    let rest_line = file_lines.of(body_offset + previous_end);
    match current {
        Current::Intro => add_prose(&mut lesson.intro, rest, rest_line),
        Current::Step => {
            if let Some(s) = lesson.steps.last_mut() {
                add_prose(&mut s.narration, rest, rest_line)
            }
        }
        Current::Exercise => {
            if let Some(e) = lesson.exercises.last_mut() {
                add_prose(&mut e.narration, rest, rest_line)
            }
        }
        Current::Broken => {}
    }
    if lesson.steps.is_empty() && problems.0.is_empty() {
        problems.at(1, "a lesson has at least one step block");
    }
    if problems.0.is_empty() {
        Ok(lesson)
    } else {
        problems.0.sort_by_key(|e| e.line);
        Err(problems.0)
    }
}

/// Splits the `+++` header from the body: the header's text and first line, the body and its
/// byte offset in the file.
fn split_header(text: &str) -> Option<(&str, u32, &str, usize)> {
    let text_start = text.strip_prefix('\u{feff}').map_or(0, |_| 3);
    let rest = &text[text_start..];
    let first_end = rest.find('\n')?;
    if rest[..first_end].trim_end() != "+++" {
        return None;
    }
    let header_start = text_start + first_end + 1;
    let mut offset = header_start;
    for line in text[header_start..].split_inclusive('\n') {
        if line.trim_end() == "+++" {
            let header = &text[header_start..offset];
            let body_start = offset + line.len();
            return Some((header, 2, &text[body_start..], body_start));
        }
        offset += line.len();
    }
    None
}

/// Appends a stretch of prose to a narration, keeping the line of its first text.
fn add_prose(n: &mut Narration, prose: &str, line: u32) {
    let trimmed = prose.trim();
    if trimmed.is_empty() {
        return;
    }
    if n.markdown.is_empty() {
        let leading = prose[..prose.len() - prose.trim_start().len()]
            .matches('\n')
            .count() as u32;
        n.line = line + leading;
    } else {
        n.markdown.push_str("\n\n");
    }
    n.markdown.push_str(trimmed);
}

/// The lesson's fenced blocks, in order. A block of a lesson kind nested in a list or a
/// quote is an error: it would read as narration where the author meant a step.
fn fences(body: &str, offset: usize, lines: &Lines, problems: &mut Problems) -> Vec<Fence> {
    let mut out: Vec<Fence> = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<Fence> = None;
    for (event, range) in Parser::new_ext(body, Options::empty()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let word = info.split_whitespace().next().unwrap_or("");
                if let Some(kind) = KINDS.iter().find(|k| **k == word) {
                    let line = lines.of(offset + range.start);
                    if depth > 0 {
                        problems.at(
                            line,
                            format!(
                                "a {kind} block must start at the left margin, not inside a \
                                 list or a quote"
                            ),
                        );
                    } else {
                        open = Some(Fence {
                            kind,
                            line,
                            content_line: line + 1,
                            content: String::new(),
                            range: range.clone(),
                        });
                    }
                }
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(f) = open.take() {
                        out.push(f);
                    }
                }
            }
            Event::Text(t) => {
                if let Some(f) = open.as_mut() {
                    f.content.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// Checks an id: well formed and not used before in the lesson (steps and exercises share
/// the links' namespace).
fn claim_id(id: &Spanned<String>, line: u32, ids: &mut Vec<String>, problems: &mut Problems) {
    let text = id.get_ref();
    if !super::is_id(text) {
        problems.at(
            line,
            format!("id \"{text}\" must be 1 to 40 letters, digits, '-' or '_'"),
        );
    } else if ids.contains(text) {
        problems.at(line, format!("id \"{text}\" is used twice in this lesson"));
    }
    ids.push(text.clone());
}

/// Builds a setup's scenario: the shipped file, the patches, then the edits.
fn setup(
    fence: &Fence,
    file: &Spanned<String>,
    set: &Option<Spanned<toml::Table>>,
    add: &Option<Spanned<toml::Table>>,
    edits: &[Spanned<String>],
    problems: &mut Problems,
) -> Option<(Setup, Scenario)> {
    let Some(shipped) = builtin::find(file.get_ref()) else {
        let names: Vec<&str> = builtin::ALL.iter().map(|b| b.file).collect();
        problems.at(
            line_of(fence, file),
            format!(
                "unknown scenario \"{}\"; the shipped scenarios are {}",
                file.get_ref(),
                names.join(", ")
            ),
        );
        return None;
    };
    let mut scenario =
        Scenario::from_toml_str(shipped.toml()).expect("shipped scenarios are valid (tested)");
    let mut patches: Vec<(u32, Patch)> = Vec::new();
    if let Some(set) = set {
        let line = line_of(fence, set);
        for (key, value) in set.get_ref() {
            match (LISTS.contains(&key.as_str()) || key == "network", value) {
                (true, toml::Value::Table(elements)) if key == "network" => {
                    for (field, v) in elements {
                        patches.push((line, set_patch(&[key, field], v)));
                    }
                }
                (true, toml::Value::Table(elements)) => {
                    for (element, fields) in elements {
                        let toml::Value::Table(fields) = fields else {
                            problems.at(
                                line,
                                format!("set.{key}.{element} must be a table of the fields to set"),
                            );
                            continue;
                        };
                        for (field, v) in fields {
                            patches.push((line, set_patch(&[key, element, field], v)));
                        }
                    }
                }
                _ => patches.push((line, set_patch(&[key], value))),
            }
        }
    }
    if let Some(add) = add {
        let line = line_of(fence, add);
        for (list, value) in add.get_ref() {
            let toml::Value::Array(items) = value else {
                problems.at(
                    line,
                    format!("add.{list} must be a list of tables ([[add.{list}]])"),
                );
                continue;
            };
            for item in items {
                patches.push((
                    line,
                    Patch::Add {
                        list: list.clone(),
                        value: item.clone(),
                    },
                ));
            }
        }
    }
    let mut ok = true;
    let only: Vec<Patch> = patches.iter().map(|(_, p)| p.clone()).collect();
    match edit::apply_patches(&scenario, &only) {
        Ok(s) => scenario = s,
        Err(e) => {
            let (line, what) = match e.index {
                Some(i) => (patches[i].0, format!("{}: ", patches[i].1)),
                None => (
                    patches.first().map_or(fence.line, |(l, _)| *l),
                    "the changed scenario: ".to_string(),
                ),
            };
            problems.at(line, format!("{what}{}", e.message));
            return None;
        }
    }
    if let Err(errors) = scenario.validate() {
        let line = patches.first().map_or(line_of(fence, file), |(l, _)| *l);
        for e in errors.0 {
            problems.at(line, format!("the changed scenario is invalid: {e}"));
        }
        return None;
    }
    let mut parsed: Vec<Edit> = Vec::new();
    let mut memory = crate::toggles::Memory::default();
    for e in edits {
        let line = line_of(fence, e);
        let edit: Edit = match e.get_ref().parse() {
            Ok(x) => x,
            Err(why) => {
                problems.at(line, why);
                ok = false;
                continue;
            }
        };
        if let Some(why) = edit.problem(&scenario) {
            problems.at(line, format!("edit \"{edit}\": {why}"));
            ok = false;
            continue;
        }
        let next = crate::toggles::apply(&scenario, &edit.toggle(&scenario), &mut memory);
        if next == scenario {
            problems.at(
                line,
                format!("edit \"{edit}\" changes nothing in this scenario"),
            );
        }
        if let Err(errors) = next.validate() {
            problems.at(
                line,
                format!("edit \"{edit}\" makes the scenario invalid: {errors}"),
            );
            ok = false;
            continue;
        }
        scenario = next;
        parsed.push(edit);
    }
    if edits.len() > ITEMS_MAX {
        problems.at(fence.line, format!("more than {ITEMS_MAX} edits"));
    }
    ok.then(|| {
        (
            Setup {
                file: file.get_ref().clone(),
                patches: patches.into_iter().map(|(_, p)| p).collect(),
                edits: parsed,
            },
            scenario,
        )
    })
}

fn set_patch(path: &[&String], value: &toml::Value) -> Patch {
    Patch::Set {
        path: path.iter().map(|s| s.to_string()).collect(),
        value: value.clone(),
    }
}

/// Reads edits that must parse and name things in `s` (intended changes, solutions, examples).
fn edits_in(texts: &[(u32, &str)], s: &Scenario, what: &str, problems: &mut Problems) -> Vec<Edit> {
    let mut out = Vec::new();
    for (line, text) in texts {
        match text.parse::<Edit>() {
            Ok(e) => match e.problem(s) {
                Some(why) => problems.at(*line, format!("{what} \"{e}\": {why}")),
                None => out.push(e),
            },
            Err(why) => problems.at(*line, format!("{what}: {why}")),
        }
    }
    out
}

fn controls(
    fence: &Fence,
    list: &[Spanned<String>],
    s: &Scenario,
    problems: &mut Problems,
) -> Vec<Control> {
    let mut out = Vec::new();
    for c in list {
        let line = line_of(fence, c);
        match c.get_ref().parse::<Control>() {
            Ok(control) => match control.problem(s) {
                Some(why) => problems.at(line, format!("control \"{control}\": {why}")),
                None => out.push(control),
            },
            Err(why) => problems.at(line, why),
        }
    }
    out
}

fn step(fence: &Fence, ids: &mut Vec<String>, problems: &mut Problems) -> Option<Step> {
    let t: StepToml = read_toml(fence, problems)?;
    claim_id(&t.id, line_of(fence, &t.id), ids, problems);
    let (setup, scenario) = setup(fence, &t.scenario, &t.set, &t.add, &t.edits, problems)?;
    let controls = controls(fence, &t.controls, &scenario, problems);
    let recording = t
        .recording
        .as_ref()
        .and_then(|file| step_recording(fence, file, &scenario, &controls, problems));
    let mut highlight = Highlight::default();
    if let Some(h) = t.highlight {
        for lane in &h.lanes {
            match lane.get_ref().parse::<LaneRef>() {
                Ok(l) => highlight.lanes.push(l),
                Err(why) => problems.at(line_of(fence, lane), why),
            }
        }
        for p in &h.events {
            highlight.events.push(p.get_ref().clone());
        }
        highlight.overlaps = h.overlaps;
        if let Some(why) = highlight.problem(&scenario) {
            problems.at(fence.line, format!("highlight: {why}"));
        }
    }
    Some(Step {
        id: t.id.into_inner(),
        title: t.title,
        line: fence.line,
        setup,
        scenario,
        controls,
        highlight,
        assumptions: t.assumptions,
        narration: Narration::default(),
        cues: Vec::new(),
        claims: Vec::new(),
        gate: None,
        prediction: None,
        sweep: None,
        recording,
    })
}

/// Reads a step's `recording`: a shipped recording of the very scenario the step sets up.
fn step_recording(
    fence: &Fence,
    file: &Spanned<String>,
    scenario: &Scenario,
    controls: &[Control],
    problems: &mut Problems,
) -> Option<super::StepRecording> {
    let line = line_of(fence, file);
    let Some(text) = builtin::recording(file.get_ref()) else {
        let names: Vec<&str> = builtin::RECORDINGS.iter().map(|(f, _)| *f).collect();
        problems.at(
            line,
            format!(
                "unknown recording \"{}\"; the shipped recordings are {}",
                file.get_ref(),
                names.join(", ")
            ),
        );
        return None;
    };
    let run = match crate::recording::Recording::parse(text) {
        Ok(run) => run,
        Err(why) => {
            problems.at(line, format!("recording \"{}\": {why}", file.get_ref()));
            return None;
        }
    };
    if run.source.scenario != *scenario {
        problems.at(
            line,
            format!(
                "recording \"{}\" played another scenario than the step sets up (\"{}\"); record the step's own with `lockstep record` and its --edit options",
                file.get_ref(),
                run.source.scenario.name
            ),
        );
        return None;
    }
    if !controls.is_empty() {
        problems.at(
            line,
            "a step that shows a recording offers no controls: nothing can run a recording again",
        );
    }
    Some(super::StepRecording {
        file: file.get_ref().clone(),
        run: std::sync::Arc::new(run),
    })
}

/// Why a block cannot follow a step that shows a recording, if it cannot.
fn recorded_step_refuses(kind: &str) -> Option<&'static str> {
    match kind {
        "gate" => Some("a step that shows a recording has no gate: its run cannot change"),
        "sweep" => Some("a step that shows a recording has no sweep: a sweep is simulated"),
        _ => None,
    }
}

/// Reads a cues, claims or gate block into the step it follows.
fn step_part(step: &mut Step, kind: &str, fence: &Fence, problems: &mut Problems) {
    if step.recording.is_some() {
        if let Some(why) = recorded_step_refuses(kind) {
            problems.at(fence.line, why);
            return;
        }
    }
    match kind {
        "cues" => {
            let Some(t) = read_toml::<CuesToml>(fence, problems) else {
                return;
            };
            for c in t.cue {
                let line = line_of(fence, &c);
                let c = c.into_inner();
                if let Some(why) = c.when.problem(&step.scenario) {
                    problems.at(line, format!("cue: {why}"));
                    continue;
                }
                let mut given = Vec::new();
                for g in &c.given {
                    match Condition::parse(g) {
                        Ok(cond) => match cond.problem(&step.scenario) {
                            Some(why) => problems.at(line, format!("cue \"{g}\": {why}")),
                            None => given.push(cond),
                        },
                        Err(why) => problems.at(line, format!("cue: {why}")),
                    }
                }
                step.cues.push(Cue {
                    line,
                    text: c.text,
                    when: c.when,
                    given,
                });
            }
            if step.cues.len() > ITEMS_MAX {
                problems.at(fence.line, format!("more than {ITEMS_MAX} cues"));
            }
        }
        "claims" => {
            for (i, text) in fence.content.lines().enumerate() {
                let text = text.trim();
                if text.is_empty() || text.starts_with('#') {
                    continue;
                }
                let line = fence.content_line + i as u32;
                match Claim::parse(text, line) {
                    Ok(c) => match c.problem(&step.scenario) {
                        Some(why) => problems.at(line, format!("claim \"{text}\": {why}")),
                        None if step.recording.is_some() && c.quantifier.is_some() => problems.at(
                            line,
                            format!("claim \"{text}\": a step that shows a recording has one run, so its claims are about that run, not about seeds"),
                        ),
                        None => step.claims.push(c),
                    },
                    Err(why) => problems.at(line, why),
                }
            }
            if step.claims.len() > ITEMS_MAX {
                problems.at(fence.line, format!("more than {ITEMS_MAX} claims"));
            }
        }
        "gate" => {
            if step.gate.is_some() {
                problems.at(fence.line, "a step has at most one gate");
                return;
            }
            let Some(t) = read_toml::<GateToml>(fence, problems) else {
                return;
            };
            let mut when = Vec::new();
            for w in &t.when {
                let line = line_of(fence, w);
                match Claim::parse(w.get_ref(), line) {
                    Ok(c) => match c.problem(&step.scenario) {
                        Some(why) => problems.at(line, format!("gate: {why}")),
                        None => when.push(c),
                    },
                    Err(why) => problems.at(line, format!("gate: {why}")),
                }
            }
            if t.when.is_empty() {
                problems.at(fence.line, "a gate needs a condition (when)");
            }
            with_work(&mut when, fence.line);
            let mut messages = Vec::new();
            for m in &t.message {
                let line = line_of(fence, m);
                let inner = m.get_ref();
                let mut conditions = Vec::new();
                for w in &inner.when {
                    match Claim::parse(w, line) {
                        Ok(c) => match c.problem(&step.scenario) {
                            Some(why) => problems.at(line, format!("gate message: {why}")),
                            None => conditions.push(c),
                        },
                        Err(why) => problems.at(line, format!("gate message: {why}")),
                    }
                }
                let mut given = Vec::new();
                for g in &inner.given {
                    match Condition::parse(g) {
                        Ok(c) => match c.problem(&step.scenario) {
                            Some(why) => problems.at(line, format!("gate message: {why}")),
                            None => given.push(c),
                        },
                        Err(why) => problems.at(line, format!("gate message: {why}")),
                    }
                }
                if inner.when.is_empty() && inner.given.is_empty() {
                    problems.at(
                        line,
                        "a gate message needs a condition (when, about the run, or given, about \
                         the scenario)",
                    );
                }
                messages.push(GateMessage {
                    line,
                    when: conditions,
                    given,
                    text: inner.text.clone(),
                });
            }
            let texts: Vec<(u32, &str)> = t
                .intended
                .iter()
                .map(|e| (line_of(fence, e), e.get_ref().as_str()))
                .collect();
            let intended = edits_in(&texts, &step.scenario, "intended change", problems);
            if intended.is_empty() && texts.is_empty() {
                problems.at(fence.line, "a gate needs its intended change");
            }
            if step.controls.is_empty() {
                problems.at(
                    fence.line,
                    "a gate waits for the learner, but the step offers no controls",
                );
            }
            let misconceptions = t
                .misconception
                .iter()
                .map(|m| misconception(line_of(fence, m), m.get_ref(), &step.scenario, problems))
                .collect();
            step.gate = Some(Gate {
                line: fence.line,
                prompt: t.prompt,
                passed: t.passed,
                when,
                intended,
                messages,
                misconceptions,
            });
        }
        "sweep" => {
            if step.sweep.is_some() {
                problems.at(fence.line, "a step has at most one sweep");
                return;
            }
            let Some(t) = read_toml::<SweepToml>(fence, problems) else {
                return;
            };
            let Some(param) = crate::sweep::Param::from_name(&t.param) else {
                let names: Vec<&str> = crate::sweep::Param::ALL.iter().map(|p| p.name()).collect();
                problems.at(
                    fence.line,
                    format!(
                        "sweep: unknown param \"{}\" ({})",
                        t.param,
                        names.join(", ")
                    ),
                );
                return;
            };
            if t.seeds == 0 || t.seeds > super::SEEDS_MAX as u64 {
                problems.at(
                    fence.line,
                    format!("sweep: give 1 to {} seeds", super::SEEDS_MAX),
                );
                return;
            }
            step.sweep = Some(StepSweep {
                line: fence.line,
                param,
                values: t.values,
                seeds: t.seeds,
                caption: t.caption,
            });
        }
        "predict" => {
            if step.prediction.is_some() {
                problems.at(fence.line, "a step has at most one prediction");
                return;
            }
            let Some(t) = read_toml::<PredictToml>(fence, problems) else {
                return;
            };
            let mut choices = Vec::new();
            for c in &t.choice {
                match Claim::parse(&c.claim, fence.line) {
                    Ok(claim) => match claim.problem(&step.scenario) {
                        Some(why) => problems.at(fence.line, format!("prediction: {why}")),
                        None if step.recording.is_some() && claim.quantifier.is_some() => problems.at(
                            fence.line,
                            "prediction: a step that shows a recording has one run, so a choice's claim is about that run, not about seeds",
                        ),
                        None => choices.push(PredictionChoice {
                            text: c.text.clone(),
                            claim,
                        }),
                    },
                    Err(why) => problems.at(fence.line, format!("prediction: {why}")),
                }
            }
            if !(2..=CHOICES_MAX).contains(&t.choice.len()) {
                problems.at(
                    fence.line,
                    format!("a prediction offers 2 to {CHOICES_MAX} choices"),
                );
            }
            step.prediction = Some(Prediction {
                line: fence.line,
                question: t.question,
                choices,
                why: t.why,
            });
        }
        _ => unreachable!("steps and exercises are read elsewhere"),
    }
}

fn exercise(fence: &Fence, ids: &mut Vec<String>, problems: &mut Problems) -> Option<Exercise> {
    let t: ExerciseToml = read_toml(fence, problems)?;
    claim_id(&t.id, line_of(fence, &t.id), ids, problems);
    let (setup, scenario) = setup(fence, &t.scenario, &t.set, &t.add, &t.edits, problems)?;
    let controls = controls(fence, &t.controls, &scenario, problems);
    if controls.is_empty() && t.controls.is_empty() {
        problems.at(fence.line, "an exercise offers at least one control");
    }
    let seeds_line = line_of(fence, &t.seeds);
    let seeds = match t.seeds.into_inner() {
        toml::Value::String(x) => claim::seeds(&x),
        toml::Value::Array(items) => items
            .iter()
            .map(|v| match v {
                toml::Value::Integer(n) if *n >= 0 => Ok(n.to_string()),
                _ => Err(format!("{v} is not a seed (a whole number)")),
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|x| claim::seeds(&x.join(","))),
        other => Err(format!(
            "{other} is not a list of seeds: write \"0..8\" or [1, 2, 3]"
        )),
    }
    .unwrap_or_else(|why| {
        problems.at(seeds_line, format!("seeds: {why}"));
        Vec::new()
    });
    let mut check = Vec::new();
    for c in &t.check {
        let line = line_of(fence, c);
        match Claim::parse(c.get_ref(), line) {
            Ok(claim) if claim.quantifier.is_some() => problems.at(
                line,
                "an exercise's check runs every seed of the exercise already: write it without \
                 a quantifier",
            ),
            Ok(claim) => match claim.problem(&scenario) {
                Some(why) => problems.at(line, format!("check \"{}\": {why}", claim.text)),
                None => check.push(claim),
            },
            Err(why) => problems.at(line, why),
        }
    }
    if t.check.is_empty() {
        problems.at(fence.line, "an exercise needs a check");
    }
    with_work(&mut check, fence.line);
    if t.hints.is_empty() {
        problems.at(fence.line, "an exercise needs at least one hint");
    }
    let texts: Vec<(u32, &str)> = t
        .solution
        .iter()
        .map(|e| (line_of(fence, e), e.get_ref().as_str()))
        .collect();
    let solution = edits_in(&texts, &scenario, "solution", problems);
    if texts.is_empty() {
        problems.at(fence.line, "an exercise needs a solution");
    }
    let mut alternatives = Vec::new();
    for a in &t.alternatives {
        let line = line_of(fence, a);
        let texts: Vec<(u32, &str)> = a.get_ref().iter().map(|e| (line, e.as_str())).collect();
        alternatives.push(edits_in(
            &texts,
            &scenario,
            "alternative solution",
            problems,
        ));
    }
    let misconceptions: Vec<Misconception> = t
        .misconception
        .iter()
        .map(|m| misconception(line_of(fence, m), m.get_ref(), &scenario, problems))
        .collect();
    for (what, n) in [
        ("hints", t.hints.len()),
        ("checks", t.check.len()),
        ("misconceptions", misconceptions.len()),
        ("solution edits", t.solution.len()),
    ] {
        if n > ITEMS_MAX {
            problems.at(fence.line, format!("more than {ITEMS_MAX} {what}"));
        }
    }
    Some(Exercise {
        id: t.id.into_inner(),
        title: t.title,
        line: fence.line,
        goal: t.goal,
        idea: t.idea.trim().to_string(),
        narration: Narration::default(),
        setup,
        scenario,
        controls,
        seeds,
        check,
        hints: t.hints,
        solution,
        alternatives,
        explanation: t.explanation,
        success: t.success,
        misconceptions,
    })
}

/// Adds the work condition to a gate's or an exercise's claims, unless the author wrote it: a
/// change that starves a client class is no solution. A gate judged over several seeds
/// requires work in each of them too.
fn with_work(claims: &mut Vec<Claim>, line: u32) {
    if claims
        .iter()
        .any(|c| c.test == crate::lesson::claim::Test::EveryClassWorks)
    {
        return;
    }
    let mut seeds: Vec<u64> = claims
        .iter()
        .filter_map(|c| match &c.quantifier {
            Some(claim::Quantifier::Every(s)) | Some(claim::Quantifier::AtLeast(_, s)) => {
                Some(s.clone())
            }
            _ => None,
        })
        .flatten()
        .collect();
    seeds.sort_unstable();
    seeds.dedup();
    seeds.truncate(super::SEEDS_MAX);
    let text = if seeds.is_empty() {
        claim::WORK.to_string()
    } else {
        format!(
            "every seed in {}: {}",
            crate::lesson::seeds_text(&seeds),
            claim::WORK
        )
    };
    claims.push(Claim::parse(&text, line).expect("the work condition parses"));
}

/// Reads a misconception of an exercise or a gate: conditions on the learner's scenario, the
/// hint, and an example made of edits from `scenario`.
fn misconception(
    line: u32,
    inner: &MisconceptionToml,
    scenario: &Scenario,
    problems: &mut Problems,
) -> Misconception {
    let mut when = Vec::new();
    for c in &inner.when {
        match Condition::parse(c) {
            Ok(cond) => match cond.problem(scenario) {
                Some(why) => problems.at(line, format!("misconception \"{c}\": {why}")),
                None => when.push(cond),
            },
            Err(why) => problems.at(line, format!("misconception: {why}")),
        }
    }
    if inner.when.is_empty() {
        problems.at(line, "a misconception needs a condition (when)");
    }
    let texts: Vec<(u32, &str)> = inner.example.iter().map(|e| (line, e.as_str())).collect();
    let example = edits_in(&texts, scenario, "misconception example", problems);
    Misconception {
        line,
        when,
        hint: inner.hint.clone(),
        example,
    }
}
