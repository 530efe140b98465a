//! The parts of the lesson format that keep the course truthful, through the library as
//! `lesson check` and the page use it: predictions answered from the run, gate misconceptions,
//! sweeps computed into the compact form, and the narration's word limits.

use std::rc::Rc;
use std::sync::Arc;

use lockstep::lesson::{self, wire};
use lockstep::ui::course::{Course, LessonAction, Place, Progress};
use lockstep::ui::toggles::Toggle;
use lockstep::ui::{Action, App, Pinned};

const HEADER: &str =
    "+++\nid = \"truth\"\ntitle = \"Truth\"\norder = 50\n+++\n\nAn introduction.\n\n";

/// A step on the fencing scenario (a stale write lost at the start), then `rest`.
fn lesson(narration: &str, rest: &str) -> String {
    format!(
        "{HEADER}```step\nid = \"stall\"\ntitle = \"A stall\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\n\n[set.clients.slow]\nmax_operations = 2\n```\n\n{narration}\n\n{rest}"
    )
}

fn problems(text: &str) -> Vec<String> {
    match lesson::parse(text) {
        Err(e) => e
            .into_iter()
            .map(|e| format!("{}: {}", e.line, e.message))
            .collect(),
        Ok(l) => lesson::check(&l)
            .errors
            .into_iter()
            .map(|e| format!("{}: {}", e.line, e.message))
            .collect(),
    }
}

/// The app at the lesson's first step, as the page opens a lesson file.
fn open(text: &str) -> App {
    let parsed = lesson::parse(text).expect("the lesson reads");
    let checked = lesson::check(&parsed);
    assert!(checked.errors.is_empty(), "{:?}", checked.errors);
    let loaded = wire::from_wire(wire::to_wire(&parsed)).expect("the compact form reads back");
    let course = Arc::new(Course::new(Vec::new(), vec![loaded]));
    App::open("01-two-services.toml").reduce(Action::Lesson(LessonAction::Open {
        course,
        index: 0,
        place: Place::Step(0),
        resume: Vec::new(),
    }))
}

const PREDICT: &str = "```predict\nquestion = \"Will an update be lost?\"\nwhy = \"Nothing checks the stale write.\"\n\n[[choice]]\ntext = \"Yes\"\nclaim = \"lost_updates > 0\"\n\n[[choice]]\ntext = \"No\"\nclaim = \"lost_updates == 0\"\n```\n";

#[test]
fn a_prediction_must_have_exactly_one_right_answer_in_the_steps_run() {
    assert_eq!(
        problems(&lesson("Watch the balance.", PREDICT)),
        Vec::<String>::new()
    );
    let two_right = PREDICT.replace("lost_updates == 0", "exclusion broken");
    let found = problems(&lesson("Watch the balance.", &two_right));
    assert!(
        found
            .iter()
            .any(|p| p.contains("exactly one choice") && p.contains("2 are")),
        "{found:?}"
    );
    let none_right = PREDICT.replace("lost_updates > 0", "lost_updates > 5");
    let found = problems(&lesson("Watch the balance.", &none_right));
    assert!(found.iter().any(|p| p.contains("0 are")), "{found:?}");
}

#[test]
fn a_prediction_is_answered_once_the_run_has_played_and_counts_in_the_progress() {
    let app = open(&lesson("Watch the balance.", PREDICT));
    let run = app.lesson.as_ref().expect("a lesson");
    assert_eq!(run.right, vec![0], "the run loses an update");
    assert_eq!(run.prediction_text(), None);
    // A wrong guess: the run plays from the start, and the answer waits for its end.
    let guessed = app.reduce(Action::Lesson(LessonAction::Predict(1)));
    assert!(guessed.playing && guessed.time == 0);
    let run = guessed.lesson.as_ref().expect("a lesson");
    assert!(!run.revealed && run.hides_run());
    let waiting = run.prediction_text().expect("a text");
    assert!(waiting.starts_with("You said: No."), "{waiting}");
    let played = guessed.reduce(Action::ToEnd);
    let run = played.lesson.as_ref().expect("a lesson");
    assert!(run.revealed && !run.hides_run());
    let answer = run.prediction_text().expect("a text");
    assert!(
        answer.starts_with("Not this time: you said No, but the run shows ")
            && answer.contains("(the answer: Yes)")
            && answer.ends_with("Nothing checks the stale write."),
        "{answer}"
    );
    let progress = Progress::default().record(run);
    assert_eq!(
        progress.lessons["truth"].predictions.get("stall"),
        Some(&false)
    );
    assert!(progress
        .summary(run.lesson())
        .contains("1 of 1 prediction made (0 right)"));
    // A choice that is not offered changes nothing.
    let stray = app.reduce(Action::Lesson(LessonAction::Predict(9)));
    assert_eq!(stray.lesson.as_ref().expect("a lesson").predicted, None);
}

#[test]
fn nothing_of_the_run_shows_before_the_learner_commits() {
    let app = open(&lesson("Watch the balance.", PREDICT));
    let run = app.lesson.as_ref().expect("a lesson");
    assert!(run.awaiting_answer() && run.hides_run());
    assert_eq!(run.shown_until(app.time), Some(0));
    let whole = &app.outcome.layout;
    assert!(
        !whole.notes.is_empty(),
        "the run has decisive moments to hide"
    );
    let shown = whole.until(0);
    assert!(shown.notes.is_empty() && shown.overlaps.is_empty());
    assert!(shown
        .lanes
        .iter()
        .all(|l| l.marks.iter().all(|m| m.at == 0)));
    assert_eq!(shown.lanes.len(), whole.lanes.len(), "the lanes stay");
    // The playhead, the controls, the selection and the comparison wait for the answer.
    let fencing = Toggle::Fencing {
        resource: "accounts".into(),
        mode: lockstep::scenario::Fencing::OneSource,
        checks: Some(app.scenario.resources[0].fencing_checks),
    };
    for action in [
        Action::ToEnd,
        Action::Seek(app.outcome.end),
        Action::StepForward,
        Action::PlayPause,
        Action::Cursor(3),
        Action::Toggle(fencing.clone()),
    ] {
        let next = app.reduce(action.clone());
        assert!(
            next.time == 0 && !next.playing && next.cursor == app.cursor,
            "{action:?} moved the playhead before the prediction"
        );
        assert!(
            Rc::ptr_eq(&next.outcome, &app.outcome),
            "{action:?} changed the run"
        );
    }
    // While it plays after the commit, the run shows as far as the playhead.
    let playing = app
        .reduce(Action::Lesson(LessonAction::Predict(0)))
        .reduce(Action::Seek(app.outcome.end / 2));
    let run = playing.lesson.as_ref().expect("a lesson");
    assert_eq!(run.shown_until(playing.time), Some(playing.time));
    let half = whole.until(playing.time);
    assert!(half
        .notes
        .iter()
        .all(|n| n.to <= playing.time && n.from <= playing.time));
    assert!(half.links.iter().all(|l| l.to <= playing.time));
    assert!(half
        .lanes
        .iter()
        .flat_map(|l| &l.spans)
        .all(|s| s.to <= playing.time));
}

/// While a committed prediction's run plays, the timeline shows the notes that have ended by
/// the playhead, fewer and so numbered differently from the whole run's. Each is named as the
/// whole run names it, which the reducer pins by: the note opened is the note in the card.
#[test]
fn a_note_opened_while_the_run_plays_is_the_same_note_in_its_card() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let course = Arc::new(Course::new(
        wire::read_course_files(&files).expect("the course reads back"),
        Vec::new(),
    ));
    let (mut steps, mut renamed) = (0, 0);
    for (index, l) in course.lessons.iter().enumerate() {
        for (k, step) in l.lesson.steps.iter().enumerate() {
            if step.prediction.is_none() {
                continue;
            }
            steps += 1;
            let app = App::open("01-two-services.toml")
                .reduce(Action::Lesson(LessonAction::Open {
                    course: Arc::clone(&course),
                    index,
                    place: Place::Step(k),
                    resume: Vec::new(),
                }))
                .reduce(Action::Lesson(LessonAction::Predict(0)));
            let whole = Rc::clone(&app.outcome.layout);
            for t in (0..=whole.end).step_by((whole.end / 40).max(1) as usize) {
                let cut = whole.until(t);
                for (k, n) in cut.notes.iter().enumerate() {
                    let id = cut.note_id(k);
                    renamed += usize::from(id != k);
                    assert_eq!(&whole.notes[id], n, "{}: note {k} at {t}", l.lesson.id);
                    assert_eq!(cut.note_named(id), Some(n));
                    let pinned = app.reduce(Action::Pin {
                        pin: Pinned::Note(id),
                        seek: false,
                    });
                    assert_eq!(pinned.pinned, Some(Pinned::Note(id)));
                    assert_eq!(pinned.selected, Some(n.event), "the pinned note's event");
                    assert_eq!(pinned.time, app.time, "opened without moving the playhead");
                }
                // A note that has not ended by the cut is not shown under its name.
                for (id, n) in whole.notes.iter().enumerate() {
                    if n.to > t {
                        assert_eq!(cut.note_named(id), None, "note {id} at {t}");
                    }
                }
            }
        }
    }
    assert!(steps >= 20, "{steps} steps ask a prediction");
    assert!(
        renamed > 0,
        "some cut numbers its notes differently from the whole run"
    );
}

#[test]
fn a_prediction_stays_judged_on_the_run_it_was_made_on() {
    let app = open(&lesson("Watch the balance.", PREDICT));
    let played = app
        .reduce(Action::Lesson(LessonAction::Predict(0)))
        .reduce(Action::ToEnd);
    let run = played.lesson.as_ref().expect("a lesson");
    let judged = run.prediction_text().expect("a text");
    assert!(judged.starts_with("Right: you said Yes"), "{judged}");
    // The learner's own change afterwards loses no update, and the prediction stays right.
    let fenced = played.reduce(Action::Toggle(Toggle::Fencing {
        resource: "accounts".into(),
        mode: lockstep::scenario::Fencing::OneSource,
        checks: Some(lockstep::scenario::FencingChecks::AllAccesses),
    }));
    assert!(!Rc::ptr_eq(&fenced.outcome, &played.outcome), "a new run");
    assert_eq!(fenced.outcome.verdict.lost_updates, 0);
    let run = fenced.lesson.as_ref().expect("a lesson");
    assert_eq!(run.prediction_text().as_deref(), Some(judged.as_str()));
    assert_eq!(run.judged.as_ref().and_then(|j| j.right), Some(true));
    // Another choice cannot be made once one is taken.
    let again = fenced.reduce(Action::Lesson(LessonAction::Predict(1)));
    assert_eq!(again.lesson.as_ref().expect("a lesson").predicted, Some(0));
    // Counted once, as first judged.
    let progress = Progress::default().record(run);
    assert_eq!(
        progress.lessons["truth"].predictions.get("stall"),
        Some(&true)
    );
}

#[test]
fn just_show_me_plays_the_run_and_counts_no_prediction() {
    let app = open(&lesson("Watch the balance.", PREDICT));
    let shown = app.reduce(Action::Lesson(LessonAction::ShowMe));
    assert!(shown.playing && shown.time == 0);
    let run = shown.lesson.as_ref().expect("a lesson");
    assert!(!run.awaiting_answer() && run.hides_run());
    let played = shown.reduce(Action::ToEnd);
    let run = played.lesson.as_ref().expect("a lesson");
    assert!(!run.hides_run());
    let text = run.prediction_text().expect("a text");
    assert!(text.contains("The answer: Yes."), "{text}");
    let progress = Progress::default().record(run);
    assert!(progress.lessons["truth"].predictions.is_empty());
    assert!(progress
        .summary(run.lesson())
        .contains("0 of 1 prediction made (0 right)"));
}

/// "Show what happens": once the learner has committed, the answer is on the page at once,
/// without the run playing at its speed; before the commit it shows nothing and moves nothing.
#[test]
fn show_what_happens_answers_a_committed_prediction_at_once_and_never_before() {
    let app = open(&lesson("Watch the balance.", PREDICT));
    assert!(!app.lesson.as_ref().unwrap().offers_outcome());
    let early = app.reduce(Action::Lesson(LessonAction::ShowOutcome));
    let run = early.lesson.as_ref().expect("a lesson");
    assert!(
        early.time == 0 && early.cursor == app.cursor && !early.playing,
        "the playhead moved before the prediction"
    );
    assert!(run.awaiting_answer() && run.hides_run() && run.judged.is_none());
    assert_eq!(run.prediction_text(), None);

    // Committed, the run starts to play from the start; the page offers the answer now.
    let guessed = app.reduce(Action::Lesson(LessonAction::Predict(1)));
    let run = guessed.lesson.as_ref().expect("a lesson");
    assert!(run.offers_outcome() && run.hides_run());
    let playing = guessed.reduce(Action::Tick(16.0));
    assert!(playing.playing && playing.time < playing.outcome.end);
    let shown = playing.reduce(Action::Lesson(LessonAction::ShowOutcome));
    assert_eq!(shown.time, shown.outcome.end, "the playhead is at the end");
    assert_eq!(shown.cursor, shown.outcome.events.len());
    assert!(!shown.playing, "nothing is left to play");
    assert!(Rc::ptr_eq(&shown.outcome, &app.outcome), "the same run");
    let run = shown.lesson.as_ref().expect("a lesson");
    assert!(run.revealed && !run.hides_run() && !run.offers_outcome());
    assert_eq!(run.shown_until(shown.time), None, "the whole run is drawn");
    let answer = run.prediction_text().expect("a text");
    assert!(
        answer.starts_with("Not this time: you said No") && answer.contains("(the answer: Yes)"),
        "{answer}"
    );
    // Judged as the run played to its end would be, and counted the same.
    let played = guessed.reduce(Action::ToEnd);
    assert_eq!(
        played.lesson.as_ref().unwrap().judged,
        run.judged,
        "the same judgement as the end of playback"
    );
    assert_eq!(
        Progress::default().record(run).lessons["truth"]
            .predictions
            .get("stall"),
        Some(&false)
    );
    // Once answered, it does nothing more: the judgement stays.
    let again = shown
        .reduce(Action::ToStart)
        .reduce(Action::Lesson(LessonAction::ShowOutcome));
    assert_eq!(again.time, 0, "no longer offered, it moves nothing");
    assert_eq!(again.lesson.as_ref().unwrap().judged, run.judged);

    // After "Just show me" too: the answer, with no prediction counted.
    let skipped = app
        .reduce(Action::Lesson(LessonAction::ShowMe))
        .reduce(Action::Lesson(LessonAction::ShowOutcome));
    assert_eq!(skipped.time, skipped.outcome.end);
    let run = skipped.lesson.as_ref().expect("a lesson");
    assert!(run.revealed);
    assert!(run
        .prediction_text()
        .is_some_and(|t| t.contains("The answer: Yes.")));
    assert!(Progress::default().record(run).lessons["truth"]
        .predictions
        .is_empty());
}

/// A place without a prediction (an exercise, a step that asks none) is never offered it, and
/// the action leaves it as it was.
#[test]
fn show_what_happens_is_only_for_a_prediction() {
    let app = open(&lesson("Watch the balance.", ""));
    let run = app.lesson.as_ref().expect("a lesson");
    assert!(!run.hides_run() && !run.offers_outcome());
    let next = app.reduce(Action::Lesson(LessonAction::ShowOutcome));
    assert_eq!(
        (next.time, next.cursor, next.playing),
        (app.time, app.cursor, app.playing)
    );
}

const GATE: &str = "```gate\nwhen = [\"integrity intact\"]\nintended = [\"fencing accounts one_source all_accesses\"]\nprompt = \"Refuse the stale write.\"\npassed = \"The stale write was refused.\"\n\n[[misconception]]\nwhen = [\"checks(accounts) == writes\", \"fencing(accounts) != off\"]\nexample = [\"fencing accounts one_source writes\"]\nhint = \"Reads are not checked, so the table has not seen the newer token yet.\"\n```\n";

#[test]
fn a_gate_misconception_is_checked_and_answers_the_learner() {
    assert_eq!(
        problems(&lesson("Watch the balance.", GATE)),
        Vec::<String>::new()
    );
    // An example that meets the gate is no mistake.
    let wrong = GATE.replace(
        "example = [\"fencing accounts one_source writes\"]",
        "example = [\"fencing accounts one_source all_accesses\"]",
    );
    let found = problems(&lesson("Watch the balance.", &wrong));
    assert!(
        found.iter().any(|p| p.contains("meets the gate")),
        "{found:?}"
    );
    // In the page: the learner's mistake gets the hint, with what the gate still needs.
    let app = open(&lesson("Watch the balance.", GATE)).reduce(Action::Toggle(Toggle::Fencing {
        resource: "accounts".into(),
        mode: lockstep::scenario::Fencing::OneSource,
        checks: Some(lockstep::scenario::FencingChecks::Writes),
    }));
    let run = app.lesson.as_ref().expect("a lesson");
    assert_eq!(run.gate, Some(false));
    assert!(
        run.gate_text.starts_with("Not yet: Reads are not checked")
            && run.gate_text.contains("no update is lost"),
        "{}",
        run.gate_text
    );
}

#[test]
fn a_steps_sweep_is_computed_into_the_compact_form() {
    let sweep = "```sweep\nparam = \"pause_ms\"\nvalues = [0, 750]\nseeds = 3\ncaption = \"How often exclusion broke, by the stall's length.\"\n```\n";
    let text = lesson("Watch the balance.", sweep);
    assert_eq!(problems(&text), Vec::<String>::new());
    let parsed = lesson::parse(&text).expect("reads");
    let w = wire::to_wire(&parsed);
    let points = &w.steps[0].sweep.as_ref().expect("a sweep").points;
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p.runs == 3));
    // The points are the engine's: the same as a sweep run directly.
    let direct = parsed.steps[0]
        .sweep
        .as_ref()
        .expect("a sweep")
        .run(&parsed.steps[0].scenario)
        .expect("runs");
    assert_eq!(points, &direct);
    let loaded = wire::from_wire(w.clone()).expect("reads back");
    assert_eq!(&loaded.steps[0].sweep, points);
    let unknown = sweep.replace("pause_ms", "weather");
    let found = problems(&lesson("Watch the balance.", &unknown));
    assert!(
        found
            .iter()
            .any(|p| p.contains("unknown param \"weather\"")),
        "{found:?}"
    );
}

#[test]
fn narration_over_sixty_words_is_noted_and_over_ninety_refused() {
    let words = |n: usize| vec!["word"; n].join(" ");
    let noted = lesson::parse(&lesson(&words(61), "")).expect("reads");
    let checked = lesson::check(&noted);
    assert!(checked.errors.is_empty(), "{:?}", checked.errors);
    assert!(
        checked.notes.iter().any(|n| n.message.contains("61 words")),
        "{:?}",
        checked.notes
    );
    let fine = lesson::check(&lesson::parse(&lesson(&words(60), "")).expect("reads"));
    assert!(fine.notes.iter().all(|n| !n.message.contains("words")));
    let found = problems(&lesson(&words(91), ""));
    assert!(
        found.iter().any(|p| p.contains("91 words, more than 90")),
        "{found:?}"
    );
    // Punctuation alone is not a word.
    assert_eq!(lesson::word_count("a — b, c."), 3);
}

/// The app's hand-over of a lesson file (opened, checked, in compact form) keeps its parts.
#[test]
fn predictions_and_gate_misconceptions_survive_the_compact_form() {
    let text = lesson("Watch the balance.", &format!("{PREDICT}\n{GATE}"));
    let parsed = lesson::parse(&text).expect("reads");
    let back = wire::from_wire(wire::to_wire(&parsed)).expect("reads back");
    let (a, b) = (&parsed.steps[0], &back.lesson.steps[0]);
    let (pa, pb) = (
        a.prediction.as_ref().unwrap(),
        b.prediction.as_ref().unwrap(),
    );
    assert_eq!(pa.question, pb.question);
    assert_eq!(pa.choices.len(), pb.choices.len());
    for (x, y) in pa.choices.iter().zip(&pb.choices) {
        assert_eq!((&x.text, &x.claim), (&y.text, &y.claim));
    }
    let (ga, gb) = (a.gate.as_ref().unwrap(), b.gate.as_ref().unwrap());
    assert_eq!(ga.misconceptions.len(), gb.misconceptions.len());
    assert_eq!(ga.misconceptions[0].hint, gb.misconceptions[0].hint);
}

/// Narration with every kind of block and of text the renderer makes.
const EVERY_KIND: &str = "## A heading\n\nA paragraph with `code`, *emphasis*, **strength** and a [link](https://example.org/),  \nthen a break.\n\n1. first\n2. second\n\n- a bullet\n\n> quoted\n\n```\nshown as is\n```\n\n---\n";

/// The kinds of block and text in some narration, by serde's names for them.
fn kinds(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                kinds(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| kinds(v, out)),
        serde_json::Value::String(s) => {
            out.insert(s.clone());
        }
        _ => {}
    }
}

/// The compact form is read by a hand-written reader; whatever the writer writes, for every
/// shipped lesson, the facilitator's example and lessons with every optional part and every kind
/// of narration, reads back as exactly what was written.
#[test]
fn the_compact_form_reads_back_exactly_what_was_written() {
    let mut lessons = lesson::builtin::lessons();
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples/ledger-drill.md"),
    )
    .expect("the example lesson");
    lessons.push(lesson::parse(&example).expect("the example reads"));
    let sweep = "```sweep\nparam = \"pause_ms\"\nvalues = [0, 400]\nseeds = 3\ncaption = \"Longer pauses\"\n```\n";
    for rest in [format!("{PREDICT}\n{GATE}"), sweep.to_string()] {
        lessons.push(lesson::parse(&lesson(EVERY_KIND, &rest)).expect("reads"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for l in &lessons {
        let w = wire::to_wire(l);
        let json = serde_json::to_string(&w).expect("writes");
        kinds(&serde_json::from_str(&json).unwrap(), &mut seen);
        let back = wire::lesson_of(&serde_json::from_str(&json).unwrap())
            .unwrap_or_else(|e| panic!("lesson {} does not read back: {e}", l.id));
        // Written again, it is the same JSON: every member was read, and into its place. (The
        // JSON itself rounds the sweeps' fractions in their last digit, whoever reads them.)
        let read: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            read,
            "lesson {}",
            l.id
        );
    }
    // What the lessons above hold, so that the reader is tested on each part it reads.
    for part in [
        "heading",
        "paragraph",
        "list",
        "quote",
        "code",
        "rule",
        "text",
        "emphasis",
        "strong",
        "link",
        "line_break",
        "gate",
        "prediction",
        "sweep",
        "recording",
        "messages",
        "misconceptions",
        "given",
        "rich",
        "alternatives",
        "after_ms",
        "nth",
        "accepted",
    ] {
        assert!(seen.contains(part), "no lesson above has {part:?}");
    }
    // The whole course too.
    let files = wire::course_files(&lesson::builtin::lessons());
    assert_eq!(
        wire::read_course_files(&files).expect("reads").len(),
        lesson::builtin::lessons().len()
    );
}

/// A damaged compact form is refused with the member, the item and the lesson it is in.
#[test]
fn a_damaged_compact_form_names_what_is_wrong_and_where() {
    let course = wire::course_files(&lesson::builtin::lessons())
        .into_iter()
        .find(|(name, _)| name == "two-orders.json")
        .expect("the first lesson's file")
        .1;
    let cases = [
        (
            course.replacen("\"overlaps\":", "\"weather\":1,\"overlaps\":", 1),
            vec![
                "lesson \"two-orders\"",
                "\"steps\" item 1",
                "unknown member \"weather\"",
            ],
        ),
        (
            {
                let at = course.find("\"line\":").expect("a line") + "\"line\":".len();
                let digits = course[at..].find(|c: char| !c.is_ascii_digit()).unwrap();
                format!("{}\"ten\"{}", &course[..at], &course[at + digits..])
            },
            vec!["\"line\" is not a whole number"],
        ),
        (
            course.replacen("{\"paragraph\":", "{\"sonnet\":", 1),
            vec!["\"sonnet\" is not a kind of block"],
        ),
        (
            course.replacen("{\"text\":", "{\"shout\":", 1),
            vec!["\"shout\" is not a kind of text"],
        ),
        (
            course.replacen("\"title\":", "\"headline\":", 1),
            vec!["unknown member \"headline\""],
        ),
        (
            format!("{{\"version\":{},\"lesson\":7}}", wire::VERSION),
            vec!["a lesson is not a JSON object"],
        ),
        (
            course.replacen("\"lesson\":{", "\"lessons\":{", 1),
            vec!["unknown member \"lessons\""],
        ),
    ];
    for (bad, words) in cases {
        assert_ne!(bad, course, "the damage applies");
        let e = wire::read_lesson_file(&bad).expect_err("refused");
        for w in words {
            assert!(e.contains(w), "{e:?} does not say {w:?}");
        }
    }
}

#[test]
fn conditions_and_claims_read_numbers_as_written_and_refuse_what_is_not_one() {
    use lockstep::lesson::claim::Condition;
    use lockstep::scenario::Scenario;
    // The migration in 09 happens at 400 ms; the partition in 06 lasts 1500 ms.
    let migration = crate::scenario("09");
    let partition = crate::scenario("06");
    let cases: &[(&Scenario, &str, bool)] = &[
        (&migration, "migration_at == 400", true),
        (&migration, "migration_at != 400", false),
        (&migration, "migration_at > 399.5", true),
        (&migration, "migration_at < 400.5", true),
        (&migration, "migration_at > 400.0", false),
        (&migration, "migration_at >= +400", true),
        (&migration, "migration_at > -1", true),
        (&migration, "migration_at <= 0399.999", false),
        (&migration, "migration_at < .5", false),
        (&partition, "partition_length == 1500", true),
        (&partition, "partition_length < 1500.", false),
        (&partition, "partition_length > 1499.9999999", true),
    ];
    for (s, text, holds) in cases {
        let c = Condition::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.holds(s), *holds, "{text}");
    }
    for value in [
        "1e3", "inf", "NaN", "0x10", "4 00", ".", "-", "+", "", "1.2.3", "١٢",
    ] {
        let text = format!("migration_at > {value}");
        let err = Condition::parse(&text).expect_err(&text);
        assert!(
            err.contains("is not a number of milliseconds"),
            "{text}: {err}"
        );
        // A claim's figure is compared with a number read the same way.
        let claim = format!("lost_updates > {value}");
        let err = lockstep::lesson::claim::Claim::parse(&claim, 1).expect_err(&claim);
        assert!(err.contains("is not a number"), "{claim}: {err}");
    }
    for claim in [
        "lost_updates >= 0",
        "idle_percent(x) < 12.5",
        "lost_updates > -0.5",
    ] {
        lockstep::lesson::claim::Claim::parse(claim, 1).unwrap_or_else(|e| panic!("{claim}: {e}"));
    }
}
