//! The compact form's reader, member by member over a parsed JSON value ([`crate::json`]).
//!
//! Every member the writer may write is read here and any other is refused, as the derived
//! readers of serde's `deny_unknown_fields` would; an error names the member and the item it
//! is in. JSON nests at most 128 deep (serde_json's limit), which bounds the recursion of
//! narration's blocks.

use serde_json::Value;

use super::{
    WireCue, WireExercise, WireGate, WireGateMessage, WireLesson, WireMisconception,
    WirePrediction, WireRecording, WireStep, WireSweep,
};
use crate::json::{list, list_of, string, Obj};
use crate::lesson::cue::EventPattern;
use crate::lesson::narration::{Block, Inline};
use crate::sweep::SweepPoint;

/// The most lessons a course's index may list: the page fetches each one.
pub const COURSE_LESSONS_MAX: usize = 200;

/// The course's index: its lessons' ids, each a plain id (it names a file beside the page).
pub fn index(v: &Value) -> Result<Vec<String>, String> {
    let o = Obj::of(v, "the lessons' index")?;
    o.only(&["version", "lessons"])?;
    let listed = o.list("lessons")?.len();
    if listed > COURSE_LESSONS_MAX {
        return Err(format!(
            "the index lists {listed} lessons; a course has at most {COURSE_LESSONS_MAX}"
        ));
    }
    o.items("lessons", |id| {
        let id = string(id)?;
        if crate::lesson::is_id(&id) {
            Ok(id)
        } else {
            Err(format!("\"{id}\" is not a lesson's id"))
        }
    })
}

/// A lesson's file of the course.
pub fn lesson_file(v: &Value) -> Result<WireLesson, String> {
    let o = Obj::of(v, "a lesson's file")?;
    o.only(&["version", "lesson"])?;
    lesson(o.need("lesson")?)
}

pub fn lesson(v: &Value) -> Result<WireLesson, String> {
    let o = Obj::of(v, "a lesson")?;
    o.only(&[
        "id",
        "title",
        "order",
        "claims",
        "summary",
        "intro",
        "steps",
        "exercises",
        "rich",
    ])?;
    let id = o.string("id")?;
    let read = || {
        Ok(WireLesson {
            title: o.string("title")?,
            order: o.u32("order")?,
            claims: o.items("claims", |c| {
                c.as_u64()
                    .and_then(|c| u8::try_from(c).ok())
                    .ok_or_else(|| "not a claim's number".to_string())
            })?,
            summary: o.string("summary")?,
            intro: o.items("intro", block)?,
            steps: o.items("steps", step)?,
            exercises: o.items("exercises", exercise)?,
            rich: o.opt_items("rich", |r| match list(r)?.as_slice() {
                [text, inline] => Ok((
                    string(text)?,
                    list_of(list(inline)?, "rendered", self::inline)?,
                )),
                _ => Err("not a text and its rendering".to_string()),
            })?,
            id: id.clone(),
        })
    };
    read().map_err(|e: String| format!("lesson \"{id}\": {e}"))
}

fn step(v: &Value) -> Result<WireStep, String> {
    let o = Obj::of(v, "a step")?;
    o.only(&[
        "id",
        "title",
        "line",
        "file",
        "scenario",
        "controls",
        "lanes",
        "events",
        "overlaps",
        "assumptions",
        "narration",
        "cues",
        "claims",
        "gate",
        "prediction",
        "sweep",
        "recording",
    ])?;
    Ok(WireStep {
        id: o.string("id")?,
        title: o.string("title")?,
        line: o.u32("line")?,
        file: o.string("file")?,
        scenario: o.need("scenario")?.clone(),
        controls: o.strings("controls")?,
        lanes: o.strings("lanes")?,
        events: o.items("events", event_pattern)?,
        overlaps: o.bool("overlaps")?,
        assumptions: o.strings("assumptions")?,
        narration: o.items("narration", block)?,
        cues: o.items("cues", cue)?,
        claims: o.strings("claims")?,
        gate: o.get("gate").map(gate).transpose()?,
        prediction: o.get("prediction").map(prediction).transpose()?,
        sweep: o.get("sweep").map(sweep).transpose()?,
        recording: o.get("recording").map(recording).transpose()?,
    })
}

fn recording(v: &Value) -> Result<WireRecording, String> {
    let o = Obj::of(v, "a recording")?;
    o.only(&["file", "document"])?;
    Ok(WireRecording {
        file: o.string("file")?,
        document: o.need("document")?.clone(),
    })
}

/// A plot's file, which the lesson view names in an address beside the lesson's own file: a
/// plain name in the course's folder.
fn plot_file(name: String) -> Result<String, String> {
    let plain = name.ends_with(".svg")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    if plain {
        Ok(name)
    } else {
        Err(format!(
            "\"plot\" is not a file of the course's folder: {name:?}"
        ))
    }
}

pub(super) fn sweep(v: &Value) -> Result<WireSweep, String> {
    let o = Obj::of(v, "a sweep")?;
    o.only(&[
        "line", "param", "values", "seeds", "caption", "points", "plot",
    ])?;
    Ok(WireSweep {
        line: o.u32("line")?,
        param: o.string("param")?,
        values: o.u64s("values")?,
        seeds: o.u64("seeds")?,
        caption: o.string("caption")?,
        points: o.items("points", sweep_point)?,
        plot: o.opt_string("plot")?.map(plot_file).transpose()?,
    })
}

fn sweep_point(v: &Value) -> Result<SweepPoint, String> {
    let o = Obj::of(v, "a point")?;
    o.only(&[
        "value",
        "label",
        "runs",
        "broken_runs",
        "broken_rate",
        "broken_low",
        "broken_high",
        "mean_violations",
        "mean_lost_updates",
        "mean_idle_ms",
        "mean_unavailable_ms",
        "broken_seeds",
    ])?;
    Ok(SweepPoint {
        value: o.u64("value")?,
        label: o.string("label")?,
        runs: o.u64("runs")?,
        broken_runs: o.u64("broken_runs")?,
        broken_rate: o.f64("broken_rate")?,
        broken_low: o.f64("broken_low")?,
        broken_high: o.f64("broken_high")?,
        mean_violations: o.f64("mean_violations")?,
        mean_lost_updates: o.f64("mean_lost_updates")?,
        mean_idle_ms: o.f64("mean_idle_ms")?,
        mean_unavailable_ms: o.f64("mean_unavailable_ms")?,
        broken_seeds: o.u64s("broken_seeds")?,
    })
}

fn prediction(v: &Value) -> Result<WirePrediction, String> {
    let o = Obj::of(v, "a prediction")?;
    o.only(&["line", "question", "choices", "why"])?;
    Ok(WirePrediction {
        line: o.u32("line")?,
        question: o.string("question")?,
        choices: o.items("choices", |c| match list(c)?.as_slice() {
            [text, claim] => Ok((string(text)?, string(claim)?)),
            _ => Err("not a choice's words and its claim".to_string()),
        })?,
        why: o.string("why")?,
    })
}

fn cue(v: &Value) -> Result<WireCue, String> {
    let o = Obj::of(v, "a cue")?;
    o.only(&["line", "text", "blocks", "when", "given"])?;
    Ok(WireCue {
        line: o.u32("line")?,
        text: o.string("text")?,
        blocks: o.items("blocks", block)?,
        when: event_pattern(o.need("when")?).map_err(|e| format!("\"when\": {e}"))?,
        given: o.opt_strings("given")?,
    })
}

fn gate(v: &Value) -> Result<WireGate, String> {
    let o = Obj::of(v, "a gate")?;
    o.only(&[
        "line",
        "prompt",
        "passed",
        "when",
        "intended",
        "messages",
        "misconceptions",
    ])?;
    Ok(WireGate {
        line: o.u32("line")?,
        prompt: o.string("prompt")?,
        passed: o.string("passed")?,
        when: o.strings("when")?,
        intended: o.strings("intended")?,
        messages: o.opt_items("messages", gate_message)?,
        misconceptions: o.opt_items("misconceptions", misconception)?,
    })
}

fn gate_message(v: &Value) -> Result<WireGateMessage, String> {
    let o = Obj::of(v, "a message")?;
    o.only(&["line", "when", "given", "text"])?;
    Ok(WireGateMessage {
        line: o.u32("line")?,
        when: o.opt_strings("when")?,
        given: o.opt_strings("given")?,
        text: o.string("text")?,
    })
}

fn exercise(v: &Value) -> Result<WireExercise, String> {
    let o = Obj::of(v, "an exercise")?;
    o.only(&[
        "id",
        "title",
        "line",
        "goal",
        "narration",
        "file",
        "scenario",
        "controls",
        "seeds",
        "check",
        "hints",
        "solution",
        "alternatives",
        "explanation",
        "success",
        "misconceptions",
    ])?;
    Ok(WireExercise {
        id: o.string("id")?,
        title: o.string("title")?,
        line: o.u32("line")?,
        goal: o.string("goal")?,
        narration: o.items("narration", block)?,
        file: o.string("file")?,
        scenario: o.need("scenario")?.clone(),
        controls: o.strings("controls")?,
        seeds: o.u64s("seeds")?,
        check: o.strings("check")?,
        hints: o.strings("hints")?,
        solution: o.strings("solution")?,
        alternatives: o.items("alternatives", |a| list_of(list(a)?, "alternative", string))?,
        explanation: o.string("explanation")?,
        success: o.string("success")?,
        misconceptions: o.items("misconceptions", misconception)?,
    })
}

fn misconception(v: &Value) -> Result<WireMisconception, String> {
    let o = Obj::of(v, "a misconception")?;
    o.only(&["line", "when", "hint", "example"])?;
    Ok(WireMisconception {
        line: o.u32("line")?,
        when: o.strings("when")?,
        hint: o.string("hint")?,
        example: o.strings("example")?,
    })
}

fn event_pattern(v: &Value) -> Result<EventPattern, String> {
    let o = Obj::of(v, "an event pattern")?;
    o.only(&[
        "event", "client", "service", "resource", "accepted", "token", "after_ms", "nth",
    ])?;
    Ok(EventPattern {
        event: o.string("event")?,
        client: o.opt_string("client")?,
        service: o.opt_string("service")?,
        resource: o.opt_string("resource")?,
        accepted: o.opt_bool("accepted")?,
        token: o.opt_u64("token")?,
        after_ms: o.opt_u64("after_ms")?,
        nth: o.opt_u32("nth")?,
    })
}

/// An enum as serde writes it by default: a unit variant as its name, any other as an object
/// of one member named after the variant.
fn variant(v: &Value) -> Result<(&str, Option<&Value>), String> {
    match v {
        Value::String(name) => Ok((name, None)),
        Value::Object(m) if m.len() == 1 => {
            let (name, inner) = m.iter().next().expect("one member");
            Ok((name, Some(inner)))
        }
        _ => Err("not one of its kinds".into()),
    }
}

fn blocks(v: &Value) -> Result<Vec<Block>, String> {
    list_of(list(v)?, "blocks", block)
}

fn inlines(v: &Value) -> Result<Vec<Inline>, String> {
    list_of(list(v)?, "text", inline)
}

fn block(v: &Value) -> Result<Block, String> {
    Ok(match variant(v)? {
        ("rule", None) => Block::Rule,
        ("paragraph", Some(x)) => Block::Paragraph(inlines(x)?),
        ("quote", Some(x)) => Block::Quote(blocks(x)?),
        ("code", Some(x)) => Block::Code(string(x)?),
        ("heading", Some(x)) => {
            let o = Obj::of(x, "a heading")?;
            o.only(&["level", "content"])?;
            Block::Heading {
                level: u8::try_from(o.u32("level")?)
                    .map_err(|_| "a heading's level is too large")?,
                content: o.items("content", inline)?,
            }
        }
        ("list", Some(x)) => {
            let o = Obj::of(x, "a list")?;
            o.only(&["start", "items"])?;
            Block::List {
                start: o.opt_u64("start")?,
                items: o.items("items", blocks)?,
            }
        }
        (kind, _) => return Err(format!("\"{kind}\" is not a kind of block")),
    })
}

fn inline(v: &Value) -> Result<Inline, String> {
    Ok(match variant(v)? {
        ("line_break", None) => Inline::LineBreak,
        ("text", Some(x)) => Inline::Text(string(x)?),
        ("code", Some(x)) => Inline::Code(string(x)?),
        ("emphasis", Some(x)) => Inline::Emphasis(inlines(x)?),
        ("strong", Some(x)) => Inline::Strong(inlines(x)?),
        ("link", Some(x)) => {
            let o = Obj::of(x, "a link")?;
            o.only(&["href", "content"])?;
            Inline::Link {
                href: o.string("href")?,
                content: o.items("content", inline)?,
            }
        }
        (kind, _) => return Err(format!("\"{kind}\" is not a kind of text")),
    })
}
