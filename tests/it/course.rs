//! The course in the app, natively: the router, the compact lesson form the page loads, and the
//! lesson view's state (places and their order, allowed controls, cues as a function of the
//! playhead, gates judged from the run, exercises with hints, misconceptions and completion
//! codes, progress).

use std::rc::Rc;
use std::sync::Arc;

use lockstep::lesson::{self, code, wire};
use lockstep::ui::course::{
    neighbour, place_picture_name, place_pictures, places, Course, LessonAction, Place, Progress,
};
use lockstep::ui::route::{is_id, Route, Section};
use lockstep::ui::toggles::Toggle;
use lockstep::ui::{Action, App};

/// The course as the page builds it: the shipped lessons through the compact form.
fn course() -> Arc<Course> {
    let files = wire::course_files(&lesson::builtin::lessons());
    let loaded = wire::read_course_files(&files).expect("the course file reads back");
    Arc::new(Course::new(loaded, Vec::new()))
}

/// A place as the page opens it: a step that asks a prediction still waits for the answer.
fn open_asking(course: &Arc<Course>, lesson: &str, place: &str) -> App {
    let (index, place) = course.find(lesson, Some(place)).expect("the place exists");
    App::open("01-two-services.toml").reduce(Action::Lesson(LessonAction::Open {
        course: Arc::clone(course),
        index,
        place,
        resume: Vec::new(),
    }))
}

/// A place with its run to be watched and changed: a step's prediction is skipped ("Just show
/// me") and its run played through, and the playhead is back at the start.
fn open(course: &Arc<Course>, lesson: &str, place: &str) -> App {
    let app = open_asking(course, lesson, place);
    if !app.lesson.as_ref().is_some_and(|r| r.awaiting_answer()) {
        return app;
    }
    let mut shown = app
        .reduce(Action::Lesson(LessonAction::ShowMe))
        .reduce(Action::ToEnd)
        .reduce(Action::ToStart);
    if shown.playing {
        shown = shown.reduce(Action::PlayPause);
    }
    assert!(!shown.lesson.as_ref().unwrap().hides_run());
    shown
}

fn protocol(class: &str, choice: &str) -> Action {
    Action::Toggle(Toggle::Protocol {
        class: class.into(),
        choice: choice.into(),
    })
}

#[test]
fn the_shipped_course_files_are_the_lessons_in_compact_form() {
    // The page fetches these files instead of parsing Markdown. Regenerate them after changing
    // a lesson with: UPDATE_EXPECT=1 cargo test --test it course
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static/course");
    let mut files = wire::course_files(&lesson::builtin::lessons());
    // Each step's and exercise's picture of its run, shown while its simulator loads.
    files.extend(place_pictures(&course()));
    // Each place as the page first shows it while its simulator loads, and their index.
    files.extend(lockstep::ui::preview::place_previews(&course()));
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(entry.unwrap().path()).unwrap();
        }
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let mut shipped: Vec<String> = std::fs::read_dir(&dir)
        .expect("static/course")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut written: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    written.sort();
    assert_eq!(
        shipped, written,
        "run UPDATE_EXPECT=1 cargo test --test it course"
    );
    for (name, text) in &files {
        let on_disk = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(
            on_disk == *text,
            "static/course/{name} is not the lesson's compact form: run UPDATE_EXPECT=1 cargo test --test it course"
        );
    }
    // A lesson step needs one lesson's file; the largest is a small part of the whole.
    let lessons = files.iter().filter(|(n, _)| n.ends_with(".json"));
    let largest = lessons.clone().map(|(_, t)| t.len()).max().unwrap();
    let whole: usize = lessons.map(|(_, t)| t.len()).sum();
    assert!(largest * 4 < whole, "{largest} of {whole} bytes");
}

/// While a place's simulator loads, the page shows the place's picture beside its narration
/// (its preview, `lockstep::ui::preview`): for every step and exercise of every shipped lesson it is the
/// run the place then opens with, through the page's own way in, to the headline, seed and
/// event count, and it carries no scenario text (the lesson's file has it). A step that asks a
/// prediction has no picture: the run is its answer.
#[test]
fn each_places_picture_is_the_run_the_place_opens_with() {
    let course = course();
    let pictures = place_pictures(&course);
    let (mut count, mut asked) = (0, 0);
    for cl in &course.lessons {
        let ids = cl.lesson.steps.iter().map(|s| &s.id);
        for id in ids.chain(cl.lesson.exercises.iter().map(|e| &e.id)) {
            let app = open_asking(&course, &cl.lesson.id, id);
            let name = place_picture_name(&cl.lesson.id, id);
            // A step's picture would answer its prediction before the learner commits.
            if app.lesson.as_ref().unwrap().awaiting_answer() {
                asked += 1;
                assert!(
                    pictures.iter().all(|(n, _)| *n != name),
                    "{name} pictures a run whose prediction is open"
                );
                continue;
            }
            count += 1;
            let svg = pictures
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, svg)| svg)
                .unwrap_or_else(|| panic!("no picture {name}"));
            let desc = format!(
                r#"<desc id="ls-desc">{} Seed {}, {} events.</desc>"#,
                lockstep::ui::svg::xml_escape(&app.outcome.headline),
                app.outcome.seed,
                app.outcome.events.len()
            );
            assert!(svg.contains(&desc), "{name} does not say {desc}");
            assert!(
                svg.contains(r#"<metadata id="lockstep-run"></metadata>"#),
                "{name} carries a scenario"
            );
        }
    }
    assert!(
        count > 20 && asked > 20,
        "{count} places pictured, {asked} asking"
    );
    assert_eq!(pictures.len(), count, "a picture a place, no more");
}

/// While a place's simulator loads, the page shows the place as the course's files drew it
/// (`course/LESSON.PLACE.html`, written natively): its title, where it is and the picture of its
/// run, the same picture as the course's own file. A step that asks a prediction shows its
/// question and no run, no verdict. Nothing on it is a script or a link out of the page's
/// own header and crumbs, and `previews.json` lists every place, the lesson's first place
/// first (what the lesson's own address opens).
#[test]
fn each_places_preview_is_its_words_and_picture_and_answers_no_question() {
    use lockstep::ui::preview::{place_previews, preview_name, PREVIEWS_INDEX};
    let course = course();
    let previews = place_previews(&course);
    let pictures = place_pictures(&course);
    let file = |name: &str| {
        previews
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("no preview {name}"))
    };
    let index: serde_json::Value = serde_json::from_str(file(PREVIEWS_INDEX)).unwrap();
    let mut asked = 0;
    for cl in &course.lessons {
        let l = &cl.lesson;
        let ids: Vec<&str> = places(l)
            .into_iter()
            .map(|p| lockstep::ui::course::place_id(l, p))
            .collect();
        assert_eq!(
            index["lessons"][&l.id],
            serde_json::json!(ids),
            "{}: previews.json lists its places in order",
            l.id
        );
        for place in places(l) {
            let id = lockstep::ui::course::place_id(l, place);
            let html = file(&preview_name(&l.id, id));
            let title = match place {
                Place::Step(k) => &l.steps[k].title,
                Place::Exercise(k) => &l.exercises[k].title,
            };
            let plain = lockstep::lesson::narration::plain(&cl.rich, title);
            assert!(
                html.contains(&format!(
                    "data-title=\"{}",
                    lockstep::lesson::narration::escape(&plain)
                )),
                "{id}: its tab title"
            );
            assert!(
                html.contains(&lockstep::lesson::narration::escape(
                    &lockstep::ui::course::place_words(l, place)
                )),
                "{id}: where it is"
            );
            assert!(!html.contains("<script"), "{id}: a script");
            assert_eq!(
                html.matches("<a ").count(),
                5,
                "{id}: the header's three links and the crumbs' two, no other"
            );
            match pictures
                .iter()
                .find(|(n, _)| *n == place_picture_name(&l.id, id))
            {
                Some((_, svg)) => {
                    let desc = &svg[svg.find("<desc").unwrap()..svg.find("</desc>").unwrap()];
                    assert!(
                        html.contains(desc),
                        "{id}: the picture of the course's own file"
                    );
                }
                None => {
                    asked += 1;
                    assert!(
                        !html.contains("<svg"),
                        "{id}: a picture while a prediction is open"
                    );
                    assert!(
                        !html.contains("Exclusion broken") && !html.contains("Exclusion held"),
                        "{id}: a verdict while a prediction is open"
                    );
                    assert!(html.contains("Before you play it"), "{id}: its question");
                }
            }
        }
    }
    assert!(asked > 20, "{asked} places asking");
}

/// A step's sweep shows one plot however the lesson reached the page: the request the lesson
/// view sends the `plot` bundle carries the step's numbers whole, so that natively it draws the
/// shipped course's file byte for byte (in the page, only the labels' measured widths differ).
#[test]
fn a_steps_plot_request_draws_the_courses_file() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let file = |name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| panic!("the course has no file {name}"))
    };
    let mut plots = 0;
    for loaded in wire::read_course_files(&files).expect("the course reads back") {
        for (step, text) in loaded.lesson.steps.iter().zip(&loaded.steps) {
            let Some(sw) = &step.sweep else {
                assert_eq!(text.sweep_plot, None, "{}: a plot without a sweep", step.id);
                continue;
            };
            let name = text
                .sweep_plot
                .as_deref()
                .expect("a shipped sweep has its plot's file");
            assert_eq!(name, format!("{}.{}.svg", loaded.lesson.id, step.id));
            let shipped = file(name);
            assert!(
                shipped.starts_with("<svg") && shipped.trim_end().ends_with("</svg>"),
                "{name} is an SVG picture"
            );
            assert_eq!(text.sweep.len(), sw.values.len(), "{name}: a point a value");
            let request = wire::sweep_plot_request(sw.param, &sw.caption, &text.sweep);
            assert_eq!(
                wire::sweep_plot(&request).expect("the plot bundle draws"),
                shipped,
                "{name}"
            );
            plots += 1;
        }
    }
    assert_eq!(plots, 4, "the shipped course draws four sweeps");
    // A lesson read in the page (here from its Markdown, as the checker reads it) has no file.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/lessons/06-regions.md"
    ))
    .unwrap();
    let read = lesson::parse(&text).expect("the lesson parses");
    let wired = wire::to_wire(&read);
    assert!(wired
        .steps
        .iter()
        .filter_map(|s| s.sweep.as_ref())
        .all(|sw| sw.plot.is_none()));
}

/// The plot's file is a name in the course's folder, never another address.
#[test]
fn a_compact_form_names_its_plot_by_a_plain_file_name() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let regions = &files.iter().find(|(n, _)| n == "regions.json").unwrap().1;
    assert!(wire::read_lesson_file(regions).is_ok());
    for bad in [
        "../index.html",
        "https://elsewhere.example/x.svg",
        "a/b.svg",
        "plot.png",
        "javascript:alert(1)",
    ] {
        let damaged = regions.replacen("regions.short-partition.svg", bad, 1);
        let e = wire::read_lesson_file(&damaged)
            .err()
            .unwrap_or_else(|| panic!("{bad} was accepted"));
        assert!(
            e.contains("\"plot\" is not a file of the course's folder"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn the_compact_form_keeps_everything_the_app_uses() {
    let lessons = lesson::builtin::lessons();
    let c = course();
    assert_eq!(c.lessons.len(), lessons.len());
    for (a, b) in lessons.iter().zip(&c.lessons) {
        let b = &b.lesson;
        assert_eq!((&a.id, &a.title, a.order), (&b.id, &b.title, b.order));
        assert_eq!(a.steps.len(), b.steps.len());
        for (x, y) in a.steps.iter().zip(&b.steps) {
            assert_eq!(x.scenario, y.scenario, "{}/{}", a.id, x.id);
            assert_eq!(x.controls, y.controls);
            assert_eq!(x.highlight, y.highlight);
            assert_eq!(x.cues, y.cues);
            let texts = |c: &[lesson::Claim]| c.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
            assert_eq!(texts(&x.claims), texts(&y.claims));
            assert_eq!(
                x.gate.as_ref().map(|g| (texts(&g.when), &g.intended)),
                y.gate.as_ref().map(|g| (texts(&g.when), &g.intended))
            );
        }
        for (x, y) in a.exercises.iter().zip(&b.exercises) {
            assert_eq!(x.scenario, y.scenario);
            let texts = |c: &[lesson::Claim]| c.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
            assert_eq!(
                (texts(&x.check), &x.solution, &x.seeds),
                (texts(&y.check), &y.solution, &y.seeds)
            );
            assert_eq!(x.misconceptions.len(), y.misconceptions.len());
            for (m, n) in x.misconceptions.iter().zip(&y.misconceptions) {
                assert_eq!(
                    (&m.when, &m.example, &m.hint),
                    (&n.when, &n.example, &n.hint)
                );
            }
        }
    }
    let narrated = &c.lessons[0].steps[0].narration;
    assert!(
        !narrated.is_empty(),
        "the first step's narration is rendered"
    );
}

#[test]
fn a_damaged_course_file_is_refused_with_its_reason() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let damaged = |name: &str, change: &dyn Fn(&str) -> String| {
        let mut changed = files.clone();
        let file = changed.iter_mut().find(|(n, _)| n == name).expect("a file");
        file.1 = change(&file.1);
        wire::read_course_files(&changed).unwrap_err()
    };
    let e = damaged("two-orders.json", &|t| {
        t.replacen("\"exclusion broken\"", "\"exclusion shattered\"", 1)
    });
    assert!(e.contains("exclusion shattered"), "{e}");
    let version = format!("\"version\":{}", wire::VERSION);
    let e = damaged("fencing.json", &|t| {
        t.replacen(&version, "\"version\":9", 1)
    });
    assert!(e.contains("version 9"), "{e}");
    let e = damaged("index.json", &|t| t.replacen(&version, "\"version\":9", 1));
    assert!(e.contains("version 9"), "{e}");
    assert!(damaged("index.json", &|_| "{".into()).contains("EOF"));
    // The index names a file that is another lesson's, or an id that is no file's name.
    let e = damaged("fencing.json", &|_| {
        files
            .iter()
            .find(|(n, _)| n == "regions.json")
            .unwrap()
            .1
            .clone()
    });
    assert!(
        e.contains("course/fencing.json holds lesson \"regions\""),
        "{e}"
    );
    let e = damaged("index.json", &|t| t.replacen("\"fencing\"", "\"../x\"", 1));
    assert!(e.contains("\"../x\" is not a lesson's id"), "{e}");
    // An index is bounded: the page fetches every lesson it lists.
    let many: Vec<String> = (0..201).map(|i| format!("\"l{i}\"")).collect();
    let e = damaged("index.json", &|_| {
        format!(
            "{{\"version\":{},\"lessons\":[{}]}}",
            wire::VERSION,
            many.join(",")
        )
    });
    assert!(
        e.contains("lists 201 lessons; a course has at most 200"),
        "{e}"
    );
    let mut missing = files.clone();
    missing.retain(|(n, _)| n != "regions.json");
    assert!(wire::read_course_files(&missing)
        .unwrap_err()
        .contains("course/regions.json is missing"));
}

#[test]
fn routes_round_trip() {
    let routes = [
        Route::Sandbox,
        Route::Course,
        Route::Facilitator,
        Route::Lesson {
            lesson: "fencing".into(),
            place: None,
        },
        Route::place("fencing", "stale-write"),
        Route::place("two_orders-1", "a"),
    ];
    for r in routes {
        assert_eq!(Route::parse(&r.to_hash()), r, "{}", r.to_hash());
    }
    assert_eq!(
        Route::parse("#/lessons/fencing/stale-write").to_hash(),
        "#/lessons/fencing/stale-write"
    );
}

#[test]
fn fragments_people_write_name_the_same_views() {
    for empty in ["", "#", "#/", "/"] {
        assert_eq!(Route::parse(empty), Route::Sandbox, "{empty:?}");
    }
    assert_eq!(Route::parse("#/sandbox/"), Route::Sandbox);
    assert_eq!(Route::parse("#/lessons/"), Route::Course);
    assert_eq!(Route::parse("/lessons"), Route::Course);
    // A fragment that is not an address of the app (an anchor, a runner's marker) is the
    // sandbox, as it was before there were routes.
    assert_eq!(Route::parse("#wbg_style=display-none"), Route::Sandbox);
    assert_eq!(Route::parse("lessons"), Route::Sandbox);
    assert_eq!(
        Route::parse("#/lessons/fencing?from=slides"),
        Route::Lesson {
            lesson: "fencing".into(),
            place: None
        }
    );
    assert_eq!(
        Route::parse("#/facilitator").section(),
        Section::Facilitator
    );
    assert_eq!(Route::parse("#/lessons/x/y").section(), Section::Lessons);
}

#[test]
fn unknown_routes_are_not_found() {
    for bad in [
        "#/nowhere",
        "#/lessons/fencing/stale-write/extra",
        "#/lessons/fen cing",
        "#/lessons/<script>",
        "#/lessons//x",
        "#/facilitator/x",
        "#/sandbox/x",
    ] {
        assert!(matches!(Route::parse(bad), Route::NotFound(_)), "{bad}");
    }
    assert!(matches!(
        Route::parse(&format!("#/lessons/{}", "a".repeat(41))),
        Route::NotFound(_)
    ));
    assert!(matches!(
        Route::parse(&"#/".repeat(5000)),
        Route::NotFound(_)
    ));
    assert_eq!(Route::parse("#/nowhere").to_hash(), "#/nowhere");
    assert!(is_id("stale-write") && is_id("a_1") && !is_id("") && !is_id("a.b"));
}

#[test]
fn a_lesson_link_opens_its_first_step_and_places_go_in_order() {
    let c = course();
    let (i, p) = c.find("fencing", None).unwrap();
    assert_eq!(p, Place::Step(0));
    let l = &c.lessons[i].lesson;
    let all = places(l);
    assert_eq!(all.len(), l.steps.len() + l.exercises.len());
    assert_eq!(all.last(), Some(&Place::Exercise(l.exercises.len() - 1)));
    assert_eq!(neighbour(l, Place::Step(0), false), None);
    assert_eq!(neighbour(l, Place::Step(0), true), Some(Place::Step(1)));
    assert_eq!(
        neighbour(l, Place::Step(l.steps.len() - 1), true),
        Some(Place::Exercise(0))
    );
    assert_eq!(neighbour(l, *all.last().unwrap(), true), None);
    assert_eq!(
        c.find("fencing", Some("two-sources-one-table")),
        Some((i, Place::Exercise(0)))
    );
    assert_eq!(c.find("fencing", Some("nope")), None);
    assert_eq!(c.find("nope", None), None);
}

#[test]
fn a_step_runs_its_own_scenario_and_offers_only_its_controls() {
    let c = course();
    let app = open(&c, "two-orders", "two-orders");
    let run = app.lesson.clone().unwrap();
    assert_eq!(app.scenario, run.step().unwrap().scenario);
    assert!(run.allows(&Toggle::Protocol {
        class: "online".into(),
        choice: "single:old".into()
    }));
    assert!(!run.allows(&Toggle::Partition(true)));
    // A toggle of a control the step does not offer changes nothing.
    let same = app.reduce(Action::Toggle(Toggle::Seed(99)));
    assert!(Rc::ptr_eq(&same.outcome, &app.outcome));
    assert!(same.lesson.as_ref().unwrap().edits.is_empty());
    // A step with no controls is only watched.
    let watched = open(&c, "two-orders", "one-service");
    assert!(watched.lesson.as_ref().unwrap().controls().is_empty());
    let still = watched.reduce(protocol("online", "single:new"));
    assert_eq!(still.scenario, watched.scenario);
}

#[test]
fn cues_follow_the_playhead_both_ways() {
    let c = course();
    let app = open(&c, "fencing", "stale-write");
    let run = app.lesson.clone().unwrap();
    let step = run.step().unwrap();
    assert!(!step.cues.is_empty());
    assert!(run.visible_cues(0).is_empty() || run.marks.iter().flatten().any(|m| m.at == 0));
    let first = run.marks[0].expect("the first cue's event happens");
    // Just before its event the cue is hidden; at it, shown; back before it, hidden again.
    let before = app.reduce(Action::Seek(first.at - 1));
    assert!(!before
        .lesson
        .as_ref()
        .unwrap()
        .visible_cues(before.time)
        .contains(&0));
    let at = before.reduce(Action::Seek(first.at));
    assert!(at
        .lesson
        .as_ref()
        .unwrap()
        .visible_cues(at.time)
        .contains(&0));
    let back = at.reduce(Action::ToStart);
    assert!(!back
        .lesson
        .as_ref()
        .unwrap()
        .visible_cues(back.time)
        .contains(&0));
    let end = back.reduce(Action::ToEnd);
    assert_eq!(
        end.lesson.as_ref().unwrap().visible_cues(end.time).len(),
        step.cues.len(),
        "every cue of the step is shown at the end of its run"
    );
    // Cues come in the order of their events.
    let shown = end.lesson.as_ref().unwrap().visible_cues(end.time);
    let times: Vec<u64> = shown.iter().map(|&k| run.marks[k].unwrap().at).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // The step's highlights are trace events of the run shown.
    assert!(run
        .highlighted
        .iter()
        .all(|&i| i < app.outcome.events.len()));
}

#[test]
fn a_gate_is_judged_from_the_run_not_from_the_control_used() {
    let c = course();
    let app = open(&c, "two-orders", "two-orders");
    let run = app.lesson.clone().unwrap();
    assert_eq!(
        run.gate,
        Some(false),
        "the gate is not met at the step's start"
    );
    assert!(!run.can_go_on());
    let met = app.reduce(protocol("online", "single:old"));
    let r = met.lesson.clone().unwrap();
    assert_eq!(r.gate, Some(true));
    assert!(r.can_go_on());
    assert_eq!(r.edits.len(), 1);
    assert_eq!(r.edits[0].to_string(), "protocol online single:old");
    // Undoing the change closes the gate again: it follows the run, whatever was clicked.
    let undone = met.reduce(protocol("online", "single:new"));
    assert_eq!(undone.lesson.as_ref().unwrap().gate, Some(false));
    let step = r.step().unwrap();
    let gate = step.gate.as_ref().unwrap();
    assert_eq!(r.gate, Some(gate.met(&met.scenario, &met.outcome.verdict)));
    // A step without a gate never waits.
    let free = open(&c, "two-orders", "one-service");
    assert_eq!(free.lesson.as_ref().unwrap().gate, None);
    assert!(free.lesson.as_ref().unwrap().can_go_on());
}

#[test]
fn an_exercise_gives_hints_one_at_a_time_and_recognises_a_misconception() {
    let c = course();
    let app = open(&c, "fencing", "two-sources-one-table");
    let run = app.lesson.clone().unwrap();
    let e = run.exercise().unwrap().clone();
    assert_eq!(
        run.next_hint_label().as_deref(),
        Some(format!("Hint 1 of {}", e.hints.len()).as_str())
    );
    let one = app.reduce(Action::Lesson(LessonAction::Hint));
    assert_eq!(one.lesson.as_ref().unwrap().hints, 1);
    assert_eq!(
        one.lesson.as_ref().unwrap().next_hint_label().as_deref(),
        Some(format!("Hint 2 of {}", e.hints.len()).as_str())
    );
    let mut all = one.clone();
    for _ in 0..10 {
        all = all.reduce(Action::Lesson(LessonAction::Hint));
    }
    assert_eq!(all.lesson.as_ref().unwrap().hints, e.hints.len());
    assert_eq!(all.lesson.as_ref().unwrap().next_hint_label(), None);

    // The start fails, with what the run showed.
    let checked = app.reduce(Action::Lesson(LessonAction::Check));
    let a = checked.lesson.as_ref().unwrap().attempt.clone().unwrap();
    assert!(!a.grade.passed && !a.misconception && a.code.is_none());
    assert!(a.message.starts_with("Not yet"), "{}", a.message);

    // A known wrong approach gets its own hint, not a generic one.
    assert_eq!(app.scenario.resources[0].name, "inventory");
    let wrong = app
        .reduce(Action::Toggle(Toggle::Fencing {
            resource: "inventory".into(),
            mode: lockstep::scenario::Fencing::AnySource,
            checks: Some(app.scenario.resources[0].fencing_checks),
        }))
        .reduce(Action::Lesson(LessonAction::Check));
    let a = wrong.lesson.as_ref().unwrap().attempt.clone().unwrap();
    assert!(!a.grade.passed && a.misconception);
    assert_eq!(a.message, e.misconceptions[0].hint);
    // A new run makes the check stale.
    let moved = wrong.reduce(Action::Toggle(Toggle::Fencing {
        resource: "inventory".into(),
        mode: lockstep::scenario::Fencing::Off,
        checks: Some(app.scenario.resources[0].fencing_checks),
    }));
    assert!(moved.lesson.as_ref().unwrap().attempt.is_none());
}

#[test]
fn solving_an_exercise_gives_a_code_the_facilitator_verifies() {
    let c = course();
    let app = open(&c, "fencing", "two-sources-one-table");
    let e = app.lesson.as_ref().unwrap().exercise().unwrap().clone();
    let solved = app
        .reduce(Action::Toggle(fencing(
            "inventory",
            "one_source",
            "all_accesses",
        )))
        .reduce(Action::Lesson(LessonAction::Check));
    let run = solved.lesson.clone().unwrap();
    let a = run.attempt.clone().unwrap();
    assert!(a.grade.passed, "{:?}", a.grade.failures);
    assert_eq!(a.message, e.success);
    assert!(run.solution, "the solution is shown once solved");
    let code = a.code.expect("a code on success");
    assert!(code.starts_with("LS2."));
    let v = code::verify(&c.plain(), &code).expect("the code verifies");
    assert_eq!(v.completion.exercise, e.id);
    assert_eq!(v.completion.edits, run.edits);
    assert_eq!(v.completion.name, "");
    // The same code against a course whose exercise changed its seeds is refused.
    assert!(code::verify(&c.plain(), &code.replace("LS2.", "LS2.x")).is_err());

    // A name typed after solving makes the code again, with the name; it is kept as typed
    // (a space while typing) and cleaned in the code. It goes with the learner to another place.
    let named = solved.reduce(Action::Lesson(LessonAction::Name("Ada  Lovelace ".into())));
    let named_run = named.lesson.clone().unwrap();
    assert_eq!(named_run.name, "Ada  Lovelace ");
    let named_code = named_run.attempt.clone().unwrap().code.unwrap();
    assert_eq!(code::decode(&named_code).unwrap().name, "Ada Lovelace");
    assert!(code::verify(&c.plain(), &named_code).is_ok());
    let (index, place) = c.find("fencing", None).unwrap();
    let moved = named.reduce(Action::Lesson(LessonAction::Open {
        course: std::sync::Arc::clone(&c),
        index,
        place,
        resume: Vec::new(),
    }));
    assert_eq!(moved.lesson.unwrap().name, "Ada  Lovelace ");

    // Wrong turns on the way leave no trace in the code: the fewest edits that give the
    // scenario are what it carries. The run keeps one value a control, so the turns show with
    // two controls: lesson 1's exercise, where a choice the start already has, a change taken
    // back and the answer leave both controls set.
    let retire = open(&c, "two-orders", "retire-old");
    let wandering = retire
        .reduce(protocol("batch", "single:old"))
        .reduce(protocol("online", "single:old"))
        .reduce(protocol("online", "single:new"))
        .reduce(protocol("batch", "single:new"))
        .reduce(Action::Lesson(LessonAction::Check));
    assert_eq!(
        wandering.lesson.as_ref().unwrap().edits.len(),
        2,
        "the run keeps both controls' values"
    );
    let wandered = wandering
        .lesson
        .unwrap()
        .attempt
        .clone()
        .unwrap()
        .code
        .unwrap();
    let retire_old = retire.lesson.as_ref().unwrap().exercise().unwrap().clone();
    assert_eq!(
        code::decode(&wandered).unwrap().edits,
        retire_old.solution,
        "{wandered}"
    );
    assert_eq!(retire_old.solution.len(), 1);

    // Progress records the place, the solution and its code.
    let p = Progress::default().record(&run);
    let l = run.lesson();
    assert!(
        p.summary(l).contains("1 of 1 exercise solved"),
        "{}",
        p.summary(l)
    );
    assert_eq!(p.lessons[&l.id].solved[&e.id], code);
    let back = Progress::read(Some(&p.to_json()));
    assert_eq!(back, p);
    assert_eq!(Progress::read(Some("not json")), Progress::default());

    // Restarting brings back the exercise's own start.
    let again = solved.reduce(Action::Lesson(LessonAction::Restart));
    assert_eq!(again.scenario, e.scenario);
    assert!(again.lesson.as_ref().unwrap().edits.is_empty());
}

#[test]
fn progress_says_where_to_resume() {
    let c = course();
    let l = &c.lessons[0].lesson;
    let p = Progress::default();
    assert_eq!(p.resume(l), Some(Place::Step(0)));
    assert_eq!(p.percent(l), 0);
    let app = open(&c, &l.id, &l.steps[0].id);
    let p = p.record(app.lesson.as_ref().unwrap());
    assert_eq!(p.resume(l), Some(Place::Step(1)));
    assert!(p.percent(l) > 0);
    assert!(p
        .summary(l)
        .starts_with(&format!("1 of {} steps seen", l.steps.len())));
}

#[test]
fn an_opened_lesson_replaces_a_shipped_one_of_the_same_id() {
    let files = wire::course_files(&lesson::builtin::lessons());
    let shipped = wire::read_course_files(&files).unwrap();
    let mut changed = shipped[0].clone();
    changed.lesson.title = "Changed".into();
    let c = Course::new(shipped.clone(), vec![changed]);
    assert_eq!(c.lessons.len(), shipped.len());
    let i = c.index(&shipped[0].lesson.id).unwrap();
    assert_eq!(c.lessons[i].lesson.title, "Changed");
    assert_eq!(c.lessons[i].origin, lockstep::ui::course::Origin::Opened);
}

#[test]
fn a_pasted_lesson_is_checked_like_lesson_check_and_kept() {
    use lockstep::ui::course::{
        check_lesson_file, open_lesson_file, CheckReply, OpenedFiles, OPENED_MAX,
    };
    let good = lesson::builtin::ALL[4]
        .text
        .replace("id = \"fencing\"", "id = \"my-fencing\"");
    let (loaded, file) = open_lesson_file(&good).expect("a shipped lesson with a new id opens");
    assert_eq!(loaded.lesson.id, "my-fencing");
    // What the worker sends back reads the same after a trip through JSON.
    let reply = check_lesson_file(&good);
    let json = serde_json::to_string(&reply).unwrap();
    assert_eq!(CheckReply::from_json(&json).unwrap(), reply);
    // Every kind of answer reads back; anything else is refused with a reason.
    for other in [
        CheckReply::Refused {
            errors: vec![(3, "a problem".into()), (0, "about no line".into())],
        },
        CheckReply::Unavailable {
            why: "its worker stopped".into(),
        },
    ] {
        let json = serde_json::to_string(&other).unwrap();
        assert_eq!(CheckReply::from_json(&json).unwrap(), other, "{json}");
    }
    for (bad, words) in [
        ("{}", "none it gives"),
        ("[]", "is not a JSON object"),
        (r#"{"refused":{"errors":[[-1,"x"]]}}"#, "not a line number"),
        (
            r#"{"unavailable":{"why":"x","how":1}}"#,
            "unknown member \"how\"",
        ),
        ("not json", "expected ident"),
    ] {
        let e = CheckReply::from_json(bad).unwrap_err();
        assert!(e.contains(words), "{bad}: {e}");
    }
    // A claim the engine contradicts is refused with its line, as `lockstep lesson check` does.
    let broken = good.replacen("lost_updates == 1", "lost_updates == 7", 1);
    let errors = open_lesson_file(&broken).unwrap_err();
    let line = broken
        .lines()
        .position(|l| l == "lost_updates == 7")
        .map(|k| k as u32 + 1)
        .unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.line == line && e.message.contains("lost_updates")),
        "{errors:?}"
    );
    let unreadable = open_lesson_file("no header at all").unwrap_err();
    assert_eq!(unreadable[0].line, 1);
    // Kept in local storage, one per lesson, the newest last, at most OPENED_MAX.
    let mut kept = OpenedFiles::default().with(file.clone()).with(file.clone());
    assert_eq!(kept.files.len(), 1);
    for k in 0..OPENED_MAX + 2 {
        let mut other = file.clone();
        other.id = format!("x{k}");
        kept = kept.with(other);
    }
    assert_eq!(kept.files.len(), OPENED_MAX);
    assert!(
        kept.files.iter().all(|f| f.id != "my-fencing"),
        "the oldest went first"
    );
    let kept = OpenedFiles::default().with(file);
    assert_eq!(OpenedFiles::read(Some(&kept.to_json())), kept);
    let lessons = kept.lessons();
    assert_eq!(lessons.len(), 1);
    let course = Course::new(Vec::new(), lessons);
    assert!(course
        .find("my-fencing", Some("two-sources-one-table"))
        .is_some());
    assert!(kept.without("my-fencing").files.is_empty());
    assert_eq!(OpenedFiles::read(Some("not json")), OpenedFiles::default());
    assert!(kept.stale().is_empty());
    // A file an earlier version stored (its scenarios as TOML text) still reads from storage:
    // its lesson is left out until the page checks its text again, which is kept.
    let mut earlier: serde_json::Value = serde_json::from_str(&kept.to_json()).unwrap();
    earlier["files"][0]["lesson"]["steps"][0]["scenario"] = "name = \"x\"".into();
    let earlier = OpenedFiles::read(Some(&earlier.to_string()));
    assert_eq!(earlier.files.len(), 1);
    assert!(earlier.lessons().is_empty());
    assert_eq!(earlier.stale(), vec![good.clone()]);
    let err = earlier.files[0].read().unwrap_err();
    assert!(err.contains(wire::EARLIER), "{err}");
}

/// What the gate says after the learner's changes, through the app as the page drives it.
fn gate_after(lesson: &str, place: &str, toggles: &[Toggle]) -> (Option<bool>, String) {
    let c = course();
    let mut app = open(&c, lesson, place);
    for t in toggles {
        app = app.reduce(Action::Toggle(t.clone()));
    }
    let run = app.lesson.expect("a lesson");
    (run.gate, run.gate_text.clone())
}

fn fencing(resource: &str, mode: &str, checks: &str) -> Toggle {
    Toggle::Fencing {
        resource: resource.into(),
        mode: lockstep::ui::toggles::fencing_from_value(mode).expect("a mode"),
        checks: lockstep::ui::toggles::checks_from_value(checks),
    }
}

/// A change that starves a class meets no gate, and the learner is told which class.
#[test]
fn a_gate_is_not_met_by_a_change_that_starves_a_class() {
    let cases = [
        (
            "the-rule",
            "inventory",
            "reports",
            "single:replica-locks",
            "reports",
        ),
        (
            "fixed-order",
            "ordered-meets-both",
            "east-only",
            "token_chain",
            "ordered",
        ),
    ];
    for (lesson, place, class, choice, starved) in cases {
        let t = Toggle::Protocol {
            class: class.into(),
            choice: choice.into(),
        };
        let (gate, text) = gate_after(lesson, place, &[t]);
        assert_eq!(
            gate,
            Some(false),
            "{lesson}/{place} with {class} {choice}: {text}"
        );
        assert!(
            text.contains("every client class completes at least one operation")
                && text.contains(starved),
            "{lesson}/{place}: {text}"
        );
    }
}

/// A done message describes the change the run shows, not another one.
#[test]
fn a_gate_says_what_the_learners_own_change_did() {
    let cases: Vec<(&str, &str, Vec<Toggle>, &str, &str)> = vec![
        (
            "one-order",
            "stale-write",
            vec![fencing("orders", "one_source", "all_accesses")],
            "on every access",
            "",
        ),
        (
            "one-order",
            "stale-write",
            vec![fencing("orders", "one_source", "writes")],
            "Checking writes only depends on that timing",
            "on every access",
        ),
        (
            "one-order",
            "stale-write",
            vec![fencing("orders", "any_source", "all_accesses")],
            "accepting any service's tokens did no harm",
            "on every access",
        ),
        (
            "two-orders",
            "two-orders",
            vec![Toggle::Protocol {
                class: "online".into(),
                choice: "single:old".into(),
            }],
            "One service now orders every grant",
            "locks in both",
        ),
        (
            "two-orders",
            "two-orders",
            vec![Toggle::Protocol {
                class: "online".into(),
                choice: "all_unordered".into(),
            }],
            "now locks in both services",
            "One service now orders",
        ),
    ];
    for (lesson, place, toggles, says, not) in cases {
        let (gate, text) = gate_after(lesson, place, &toggles);
        assert_eq!(gate, Some(true), "{lesson}/{place} {toggles:?}: {text}");
        assert!(
            text.starts_with("Done: ") && text.contains(says),
            "{toggles:?}: {text}"
        );
        assert!(not.is_empty() || !text.contains(not), "{toggles:?}: {text}");
    }
}

/// A cue whose sentence the learner's run contradicts is not shown: after checking reads, the
/// stale write is refused, so "Accepted" and "a read is not checked" have no moment.
#[test]
fn cues_that_the_run_contradicts_are_not_shown() {
    let c = course();
    let start = open(&c, "fencing", "writes-only");
    let fixed = start.reduce(Action::Toggle(fencing(
        "accounts",
        "one_source",
        "all_accesses",
    )));
    let shown = |app: &App| -> Vec<String> {
        let run = app.lesson.as_ref().expect("a lesson");
        let step = run.step().expect("a step");
        run.visible_cues(app.outcome.end)
            .into_iter()
            .map(|k| step.cues[k].text.clone())
            .collect()
    };
    let before = shown(&start);
    assert!(before.iter().any(|t| t.contains("Accepted")), "{before:?}");
    assert!(
        before.iter().any(|t| t.contains("not checked")),
        "{before:?}"
    );
    let after = shown(&fixed);
    assert!(after.iter().all(|t| !t.contains("Accepted")), "{after:?}");
    assert!(
        after.iter().all(|t| !t.contains("not checked")),
        "{after:?}"
    );
}

#[test]
fn the_place_says_in_words_where_it_is() {
    let c = course();
    let fencing = &c.lessons[c.index("fencing").expect("a lesson")].lesson;
    assert_eq!(
        lockstep::ui::course::place_words(fencing, Place::Step(0)),
        format!(
            "Step 1 of {} (then {} exercise{})",
            fencing.steps.len(),
            fencing.exercises.len(),
            if fencing.exercises.len() == 1 {
                ""
            } else {
                "s"
            }
        )
    );
    assert_eq!(
        lockstep::ui::course::place_words(fencing, Place::Exercise(0)),
        format!(
            "Exercise 1 of {} (after {} steps)",
            fencing.exercises.len(),
            fencing.steps.len()
        )
    );
}

/// Coming back to a step whose gate the learner met shows their own run again, with the way
/// on open, instead of the step's start with Next locked.
#[test]
fn a_met_gate_is_still_met_when_the_learner_comes_back() {
    let c = course();
    let (index, place) = c.find("two-orders", Some("two-orders")).expect("a step");
    let met = open(&c, "two-orders", "two-orders").reduce(protocol("online", "single:old"));
    let run = met.lesson.as_ref().expect("a lesson");
    assert_eq!(run.gate, Some(true));
    let progress = Progress::default().record(run);
    let resume = progress.resume_edits(&c.lessons[index].lesson, place);
    assert_eq!(
        resume,
        vec![lesson::Edit::Protocol {
            class: "online".into(),
            choice: "single:old".into()
        }]
    );
    // Progress saved and read back, as after closing the tab.
    let progress = Progress::read(Some(&progress.to_json()));
    let back = App::open("01-two-services.toml")
        .reduce(Action::Zoom(8))
        .reduce(Action::Lesson(LessonAction::Open {
            course: Arc::clone(&c),
            index,
            place,
            resume: progress.resume_edits(&c.lessons[index].lesson, place),
        }));
    let run = back.lesson.as_ref().expect("a lesson");
    assert_eq!(run.gate, Some(true));
    assert!(run.can_go_on());
    assert_eq!(back.scenario, met.scenario);
    // The new place is shown whole, and the zoom control says so.
    assert_eq!(back.zoom, 1);
}

/// The course in the page as a reducer: fetched, a file opened (and refused), a lesson an
/// earlier version stored checked again, a file removed, and progress recorded from a run.
#[test]
fn the_course_in_the_page_is_a_reducer() {
    use lockstep::ui::course::{
        open_lesson_file, Lessons, OpenStatus, OpenedFiles, Shelf, ShelfAction,
    };
    let files = wire::course_files(&lesson::builtin::lessons());
    let shipped = wire::read_course_files(&files).unwrap();
    let shelf = Shelf::new(OpenedFiles::default(), Progress::default());
    assert_eq!(shelf.lessons, Lessons::Idle);
    let loading = shelf.reduce(ShelfAction::Fetching);
    assert_eq!(loading.lessons, Lessons::Loading);
    // A file checked while the lessons are on their way waits for them.
    let text = lesson::builtin::ALL[4]
        .text
        .replace("id = \"fencing\"", "id = \"my-fencing\"");
    let (loaded, file) = open_lesson_file(&text).unwrap();
    let early = loading.reduce(ShelfAction::Checked(Ok(Box::new((
        loaded.clone(),
        file.clone(),
    )))));
    assert_eq!(early.lessons, Lessons::Loading);
    assert_eq!(early.opened.files.len(), 1);
    let ready = early.reduce(ShelfAction::Fetched(Ok(shipped.clone())));
    let Lessons::Ready(course) = &ready.lessons else {
        panic!("the course is ready");
    };
    assert_eq!(
        course.lessons.len(),
        shipped.len() + 1,
        "the opened lesson is in it"
    );
    assert!(course.find("my-fencing", None).is_some());
    assert_eq!(
        ready.open_status,
        OpenStatus::Opened {
            id: "my-fencing".into(),
            title: loaded.lesson.title.clone()
        }
    );
    // Refused: the status says why and nothing else changes.
    let errors = open_lesson_file("no header at all").unwrap_err();
    let refused = ready.reduce(ShelfAction::Checked(Err(errors.clone())));
    assert_eq!(refused.open_status, OpenStatus::Failed(errors));
    assert_eq!(refused.opened, ready.opened);
    // Removed: the course is made again without it.
    let removed = ready.reduce(ShelfAction::Removed("my-fencing".into()));
    let Lessons::Ready(course) = &removed.lessons else {
        panic!("still ready");
    };
    assert_eq!(course.lessons.len(), shipped.len());
    // Checked again quietly, as for a file an earlier version stored.
    let back = removed.reduce(ShelfAction::Rechecked(Box::new(file)));
    assert_eq!(back.open_status, OpenStatus::Idle);
    assert_eq!(back.opened.files.len(), 1);
    // A failed fetch says why.
    let failed = shelf
        .reduce(ShelfAction::Fetching)
        .reduce(ShelfAction::Fetched(Err("offline".into())));
    assert_eq!(failed.lessons, Lessons::Failed("offline".into()));
    // Progress: a run seen is recorded; the same again keeps the same value.
    let app = open(&course_of(&ready), "two-orders", "one-service");
    let run = app.lesson.clone().unwrap();
    let seen = ready.reduce(ShelfAction::Record(Rc::clone(&run)));
    assert_ne!(seen.progress, ready.progress);
    let again = seen.reduce(ShelfAction::Record(run));
    assert!(
        Rc::ptr_eq(&again.progress, &seen.progress),
        "nothing new, nothing written"
    );
}

fn course_of(shelf: &lockstep::ui::course::Shelf) -> Arc<Course> {
    match &shelf.lessons {
        lockstep::ui::course::Lessons::Ready(c) => Arc::clone(c),
        _ => panic!("not ready"),
    }
}

/// Seeds are said as people count them: `0..8` in a lesson file is eight seeds, 0 to 7.
#[test]
fn seeds_are_counted_in_words() {
    use lockstep::lesson::claim::Claim;
    use lockstep::ui::course::seeds_words;
    assert_eq!(seeds_words(&(0..8).collect::<Vec<u64>>()), "8 seeds (0-7)");
    assert_eq!(seeds_words(&[3]), "seed 3");
    assert_eq!(seeds_words(&[1, 4, 9]), "3 seeds (1, 4 and 9)");
    let every = Claim::parse("every seed in 0..12: exclusion holds", 1).unwrap();
    assert!(
        every
            .words()
            .starts_with("in every one of 12 seeds (0-11), "),
        "{}",
        every.words()
    );
    let some = Claim::parse("at least 15 of seeds 0..20: exclusion holds", 1).unwrap();
    assert!(
        some.words()
            .starts_with("in at least 15 of 20 seeds (0-19), "),
        "{}",
        some.words()
    );
}

/// Goals, hints and messages that hold Markdown reach the page rendered, so it shows code as
/// code rather than raw backticks; a text without markup is left as it is.
#[test]
fn short_texts_with_markdown_reach_the_page_rendered() {
    use lockstep::lesson::narration::Inline;
    let c = course();
    let l = c.lessons.iter().find(|l| l.lesson.id == "fencing").unwrap();
    let e = &l.lesson.exercises[0];
    assert!(
        e.goal.contains('`'),
        "the goal names something in code: {}",
        e.goal
    );
    let goal = l.rich.get(&e.goal).expect("the goal is rendered");
    assert!(
        goal.iter().any(|i| matches!(i, Inline::Code(_))),
        "{goal:?}"
    );
    assert!(
        !format!("{goal:?}").contains('`'),
        "no raw backticks: {goal:?}"
    );
    for h in &e.hints {
        if h.contains('`') {
            assert!(l.rich.contains_key(h), "hint rendered: {h}");
        }
    }
    assert!(
        l.rich.keys().all(|k| k.contains(['`', '*', '_', '['])),
        "only texts with markup"
    );
}

/// An exercise's controls and revealed hints are kept as the learner leaves them, so a closed
/// tab loses nothing; starting again forgets the controls.
#[test]
fn an_exercise_left_half_done_comes_back_as_it_was() {
    let c = course();
    let app = open(&c, "fencing", "two-sources-one-table")
        .reduce(Action::Toggle(fencing("inventory", "any_source", "writes")))
        .reduce(Action::Lesson(LessonAction::Hint))
        .reduce(Action::Lesson(LessonAction::Hint));
    let run = app.lesson.clone().unwrap();
    let p = Progress::read(Some(&Progress::default().record(&run).to_json()));
    let (l, place) = (run.lesson(), run.place);
    assert_eq!(p.resume_edits(l, place), run.edits);
    assert!(!run.edits.is_empty());
    assert_eq!(p.resume_hints(l, place), 2);
    // Reopened the way the page reopens it, it shows the same scenario and hints.
    let (index, _) = c.find("fencing", Some("two-sources-one-table")).unwrap();
    let mut back = App::at_lesson(std::sync::Arc::clone(&c), index, place);
    for e in p.resume_edits(l, place) {
        back = back.reduce(Action::Toggle(e));
    }
    for _ in 0..p.resume_hints(l, place) {
        back = back.reduce(Action::Lesson(LessonAction::Hint));
    }
    assert_eq!(back.scenario, app.scenario);
    assert_eq!(back.lesson.unwrap().hints, 2);
    // Starting again forgets the controls.
    let again = app.reduce(Action::Lesson(LessonAction::Restart));
    let q = p.record(again.lesson.as_ref().unwrap());
    assert!(q.resume_edits(l, place).is_empty());
}

/// The answer key: every lesson with exercises, each exercise with its hints and every answer
/// in the words of the controls.
#[test]
fn the_key_has_every_answer() {
    use lockstep::ui::print::key;
    let c = course();
    let lessons: Vec<_> = c.lessons.iter().map(|cl| &cl.lesson).collect();
    let key = key(lessons.iter().copied());
    assert_eq!(
        key.lessons.len(),
        lessons.iter().filter(|l| !l.exercises.is_empty()).count(),
        "the key has the lessons with exercises"
    );
    for sl in &key.lessons {
        let l = lessons
            .iter()
            .find(|l| l.id == sl.id)
            .expect("a lesson of the course");
        for (e, se) in l.exercises.iter().zip(&sl.exercises) {
            assert_eq!(se.hints, e.hints);
            let a = &se.answers;
            // The solution in the words of the controls that make it, as the page shows it.
            for x in &e.solution {
                assert!(
                    a.solution.contains(&x.words(&e.scenario)),
                    "{}: the solution",
                    e.id
                );
            }
            assert_eq!(a.alternatives.len(), e.alternatives.len());
            assert_eq!(a.misconceptions.len(), e.misconceptions.len());
            assert_eq!(a.explanation, e.explanation);
        }
    }
}

/// Everything the key alone may say of a lesson: each exercise's solution and other answers in
/// words, its explanation and success message, what the app says to each wrong approach and
/// each hint after the first; and each gate's message and each prediction's explanation, which
/// say what a run shows.
pub(crate) fn answers_of(l: &lesson::Lesson) -> Vec<String> {
    let mut out = Vec::new();
    for e in &l.exercises {
        out.push(lockstep::lesson::edit::words(&e.solution, &e.scenario));
        out.extend(
            e.alternatives
                .iter()
                .map(|a| lockstep::lesson::edit::words(a, &e.scenario)),
        );
        out.extend([e.explanation.clone(), e.success.clone()]);
        out.extend(e.misconceptions.iter().map(|m| m.hint.clone()));
        out.extend(e.hints.iter().skip(1).cloned());
    }
    for s in &l.steps {
        if let Some(g) = &s.gate {
            out.push(g.passed.clone());
            out.extend(g.messages.iter().map(|m| m.text.clone()));
            out.extend(g.misconceptions.iter().map(|m| m.hint.clone()));
        }
        if let Some(p) = &s.prediction {
            out.push(p.why.clone());
        }
    }
    out.retain(|t| t.len() > 3);
    out
}

/// The words of the handout's texts, their Markdown rendered, as the page and the command line
/// show them.
fn handout_words(h: &lockstep::ui::print::Handout) -> String {
    use lockstep::lesson::narration::{block_text, Block, Inline};
    let inl = |x: &[Inline]| block_text(&Block::Paragraph(x.to_vec()));
    let mut out = String::new();
    for l in &h.lessons {
        for t in [&l.title, &l.summary] {
            out += &inl(t);
        }
        for s in &l.steps {
            out += &inl(&s.title);
            out += &s
                .narration
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" ");
            if let Some((q, choices)) = &s.question {
                out += &inl(q);
                for c in choices {
                    out += &inl(c);
                }
            }
            out += &s.task.as_deref().map(inl).unwrap_or_default();
            out += &s.link;
        }
        for e in &l.exercises {
            for t in [&e.title, &e.goal] {
                out += &inl(t);
            }
            out += &e
                .narration
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" ");
            out += &e.controls.join(", ");
            out += &e.seeds;
            out += &e.hint.as_deref().map(inl).unwrap_or_default();
            out += &e.link;
        }
        out.push('\n');
    }
    out
}

/// The participants' handout of the lessons chosen, in the course's order: each step with its
/// narration rendered, its picture (none where the step asks a prediction, whose answer the run
/// is) and its link at the base given; each exercise with its goal, controls and link, its first
/// hint only when asked for, and never an answer.
#[test]
fn the_handout_has_the_chosen_lessons_and_no_answer() {
    use lockstep::ui::print::{handout, Pictures};
    let c = course();
    let base = "http://10.0.0.5:8000/";
    let chosen = vec!["fencing".to_string(), "two-orders".to_string()];
    let h = handout(&c.lessons, &chosen, false, base, Pictures::Shipped);
    let ids: Vec<&str> = h.lessons.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(
        ids,
        ["two-orders", "fencing"],
        "the chosen, in the course's order"
    );
    let mut pictured = 0;
    for hl in &h.lessons {
        let cl = &c.lessons[c.index(&hl.id).unwrap()];
        let l = &cl.lesson;
        assert_eq!(hl.steps.len(), l.steps.len());
        assert_eq!(hl.exercises.len(), l.exercises.len());
        for (s, hs) in l.steps.iter().zip(&hl.steps) {
            assert_eq!(hs.link, format!("{base}#/lessons/{}/{}", l.id, s.id));
            assert!(!hs.narration.is_empty(), "{}: the narration", s.id);
            match &hs.picture {
                Some(name) => {
                    pictured += 1;
                    assert!(s.prediction.is_none(), "{}: a picture answers", s.id);
                    assert_eq!(*name, place_picture_name(&l.id, &s.id));
                    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("static/course")
                        .join(name);
                    assert!(file.is_file(), "{name} is one of the course's files");
                }
                None => assert!(s.prediction.is_some(), "{}: no picture", s.id),
            }
            assert_eq!(hs.question.is_some(), s.prediction.is_some());
            assert_eq!(hs.task.is_some(), s.gate.is_some());
        }
        for (e, he) in l.exercises.iter().zip(&hl.exercises) {
            assert_eq!(he.link, format!("{base}#/lessons/{}/{}", l.id, e.id));
            assert_eq!(he.controls.len(), e.controls.len());
            assert!(he.hint.is_none(), "{}: a hint nobody asked for", e.id);
        }
        let words = handout_words(&h);
        assert!(!words.contains('`'), "raw backticks on the handout");
        for secret in answers_of(l) {
            let plain = lockstep::lesson::narration::plain(&cl.rich, &secret);
            assert!(
                !words.contains(&plain),
                "{}: the handout says {plain:?}",
                l.id
            );
        }
    }
    assert!(pictured >= 4, "{pictured} pictures");
    // Asked for, the first hint and no other.
    let hinted = handout(&c.lessons, &chosen, true, base, Pictures::Shipped);
    for hl in &hinted.lessons {
        let cl = &c.lessons[c.index(&hl.id).unwrap()];
        for (e, he) in cl.lesson.exercises.iter().zip(&hl.exercises) {
            let first = lockstep::lesson::narration::shown(&cl.rich, &e.hints[0]);
            assert_eq!(he.hint.as_ref(), Some(&first), "{}: the first hint", e.id);
        }
    }
    // A lesson that is not the site's own has no picture here: the page has none of its files.
    let files = wire::course_files(&lesson::builtin::lessons());
    let mut opened = wire::read_course_files(&files).unwrap();
    opened.retain(|l| l.lesson.id == "fencing");
    let replaced = Course::new(wire::read_course_files(&files).unwrap(), opened);
    let h = handout(&replaced.lessons, &chosen, false, base, Pictures::Shipped);
    let fencing = h.lessons.iter().find(|l| l.id == "fencing").unwrap();
    assert!(fencing.steps.iter().all(|s| s.picture.is_none()));
    let every = handout(&replaced.lessons, &chosen, false, base, Pictures::Every);
    let fencing = every.lessons.iter().find(|l| l.id == "fencing").unwrap();
    assert!(fencing.steps.iter().any(|s| s.picture.is_some()));
}

/// The facilitator's choices: the key first, then a handout of no lesson until some are
/// chosen, no hint until asked, links to the page's own address until another reads.
#[test]
fn the_facilitators_choices_make_the_handout() {
    use lockstep::ui::print::{link_base, Choice, ChoiceAction, Printout, CHOSEN_MAX};
    let c = course();
    let page = "https://lockstep.example.org/workshop/";
    let start = Choice::new(page);
    assert_eq!(start.printout, Printout::Key);
    assert!(start.handout(&c.lessons).lessons.is_empty());
    let chosen = start
        .reduce(ChoiceAction::Show(Printout::Handout))
        .reduce(ChoiceAction::Lesson("fencing".into(), true))
        .reduce(ChoiceAction::Lesson("regions".into(), true))
        .reduce(ChoiceAction::Lesson("regions".into(), false))
        .reduce(ChoiceAction::Lesson("no such lesson".into(), true));
    let h = chosen.handout(&c.lessons);
    assert_eq!(h.lessons.len(), 1);
    assert_eq!(h.lessons[0].id, "fencing");
    assert!(h.lessons[0].exercises.iter().all(|e| e.hint.is_none()));
    assert!(h.lessons[0].steps[0].link.starts_with(page));
    let hinted = chosen.reduce(ChoiceAction::FirstHint(true));
    assert!(hinted.handout(&c.lessons).lessons[0].exercises[0]
        .hint
        .is_some());
    // The room's address, typed; while it does not read, the page's address and the reason.
    let typing = chosen.reduce(ChoiceAction::LinkBase("http://10.0.0.5:8000".into()));
    assert_eq!(typing.base().unwrap(), "http://10.0.0.5:8000/");
    assert!(typing.handout(&c.lessons).lessons[0].steps[0]
        .link
        .starts_with("http://10.0.0.5:8000/#/lessons/fencing/"));
    let broken = typing.reduce(ChoiceAction::LinkBase("10.0.0.5:8000".into()));
    assert!(broken.base().unwrap_err().contains("http://"));
    assert!(broken.handout(&c.lessons).lessons[0].steps[0]
        .link
        .starts_with(page));
    for bad in [
        "",
        "ftp://x/",
        "http://",
        "http://a b/",
        "http://x/#/lessons",
    ] {
        assert!(link_base(bad).is_err(), "{bad:?} reads");
    }
    assert!(link_base(&format!("http://{}/", "x".repeat(600))).is_err());
    let long = chosen.reduce(ChoiceAction::LinkBase("h".repeat(100_000)));
    assert!(long.link_base.len() < 1000, "what is typed is bounded");
    // No more lessons chosen than a course can hold.
    let mut many = chosen;
    for k in 0..200 {
        many = many.reduce(ChoiceAction::Lesson(format!("l{k}"), true));
    }
    assert_eq!(many.lessons.len(), CHOSEN_MAX);
}

/// A step that shows a recording opens on the recording, judged afresh (not on a simulated
/// run), labelled with what it was recorded from; its cues are placed on the recorded events,
/// and nothing the learner does there replaces it with a simulation.
#[test]
fn a_recorded_step_shows_its_recording_and_nothing_replaces_it() {
    let course = course();
    let app = open(&course, "two-orders", "real-etcd");
    let source = app
        .outcome
        .recorded
        .as_ref()
        .expect("the run is the recording");
    assert!(
        source.products().starts_with("etcd 3."),
        "{}",
        source.products()
    );
    let shipped = lockstep::builtin::recording("01-two-services.json").unwrap();
    let recording = lockstep::recording::Recording::parse(shipped).unwrap();
    assert_eq!(app.outcome.events, recording.events);
    let verdict = lockstep::monitor::verdict(&recording);
    assert_eq!(app.outcome.verdict, verdict);
    assert!(app.outcome.headline.starts_with("Exclusion broken"));
    let run = app.lesson.as_ref().unwrap();
    assert!(run.marks.iter().all(Option::is_some), "every cue is placed");
    // The step offers no controls, so a toggle, a new seed or a comparison changes nothing.
    for action in [
        protocol("online", "single:old"),
        Action::NewSeed,
        Action::Compare(Some(Toggle::Seed(3))),
    ] {
        let after = app.reduce(action.clone());
        assert!(
            after.outcome.recorded.is_some() && after.outcome.events == recording.events,
            "{action:?} replaced the recording"
        );
    }
    // Starting the step again opens the recording again.
    let again = app.reduce(Action::Lesson(LessonAction::Restart));
    assert!(again.outcome.recorded.is_some());
    // The simulated steps around it stay simulated.
    assert!(open(&course, "two-orders", "incomparable")
        .outcome
        .recorded
        .is_none());
}

/// Progress kept in local storage reads back whole, every kind of member; what an earlier or a
/// later version wrote still counts; anything damaged counts as no progress, never a panic.
#[test]
fn kept_progress_reads_back_whole_and_damaged_progress_counts_as_none() {
    use lockstep::ui::course::LessonProgress;
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    let map = |items: &[(&str, usize)]| items.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mut p = Progress::default();
    p.lessons.insert(
        "fencing".into(),
        LessonProgress {
            seen: set(&["writes-only", "two-sources-one-table"]),
            gates: set(&["writes-only"]),
            gate_edits: [(
                "writes-only".to_string(),
                vec!["fencing accounts one_source".to_string()],
            )]
            .into(),
            predictions: [
                ("writes-only".to_string(), true),
                ("other".to_string(), false),
            ]
            .into(),
            solved: [("two-sources-one-table".to_string(), "LS1-ABC".to_string())].into(),
            exercise_edits: [("two-sources-one-table".to_string(), vec![])].into(),
            hints: map(&[("two-sources-one-table", 2)]),
        },
    );
    p.lessons
        .insert("regions".into(), LessonProgress::default());
    assert_eq!(Progress::read(Some(&p.to_json())), p);
    // An earlier version wrote fewer members; a later one may write more.
    let earlier = r#"{"lessons":{"fencing":{"seen":["a"],"gates":[],"solved":{}}}}"#;
    assert_eq!(
        Progress::read(Some(earlier)).lessons["fencing"].seen,
        set(&["a"])
    );
    let later = r#"{"lessons":{"fencing":{"seen":["a"],"badges":3}},"theme":"dark"}"#;
    assert_eq!(
        Progress::read(Some(later)).lessons["fencing"].seen,
        set(&["a"])
    );
    for damaged in [
        "not json",
        "[]",
        r#"{"lessons":[]}"#,
        r#"{"lessons":{"fencing":{"seen":"a"}}}"#,
        r#"{"lessons":{"fencing":{"hints":{"x":-1}}}}"#,
        r#"{"lessons":{"fencing":{"predictions":{"x":"yes"}}}}"#,
        r#"{"lessons":{"fencing":{"gate_edits":{"x":[1]}}}}"#,
    ] {
        assert_eq!(
            Progress::read(Some(damaged)),
            Progress::default(),
            "{damaged}"
        );
    }
}

/// "Open in sandbox" takes the learner's scenario as its run alone (the lesson view writes no
/// scenario text): the sandbox's bundle and the whole app each open it with that run and their
/// own text of it, with the step's shipped file as the source (so Reset goes back there).
#[test]
fn a_learners_scenario_opens_in_the_sandbox_as_it_was() {
    use lockstep::ui::Codec;
    let c = course();
    let start = open(&c, "fencing", "two-sources-one-table");
    let app = start.reduce(Action::Toggle(fencing("inventory", "any_source", "writes")));
    assert_ne!(
        app.scenario, start.scenario,
        "the learner changed the exercise's scenario"
    );
    let handed = app.for_sandbox();
    assert_eq!(handed.text, "", "the lesson view writes no text");
    assert!(lockstep::ui::is_source(&handed.source), "{}", handed.source);
    let stored = serde_json::to_string(&handed).unwrap();
    for codec in [Codec::SANDBOX, Codec::FULL] {
        let back = App::restore_with(codec, Some(&stored));
        assert!(!back.reading, "{codec:?}: nothing waits for a reader");
        assert_eq!(back.scenario, app.scenario, "{codec:?}");
        assert_eq!(back.outcome.digest, app.outcome.digest, "{codec:?}");
        assert_eq!(back.text, app.scenario.to_toml_string(), "{codec:?}");
        assert!(back.errors.is_empty() && back.notice.is_none(), "{codec:?}");
    }
    // An editor the user emptied keeps its empty text and waits for the reader's errors.
    let emptied = App::open("05-fencing.toml").reduce(Action::Edit(String::new()));
    let back = App::restore_with(
        Codec::SANDBOX,
        Some(&serde_json::to_string(&emptied.saved()).unwrap()),
    );
    assert_eq!(back.text, "");
}

/// A place opens at a zoom where its lanes can be read: the busiest lane's spans in the window
/// first shown are few enough to be told apart (a long run of short holds is not one bar), and
/// a short run is shown whole.
#[test]
fn every_place_opens_at_a_zoom_where_its_lanes_are_readable() {
    let course = course();
    let (mut places, mut zoomed) = (0, 0);
    for cl in &course.lessons {
        let ids = cl.lesson.steps.iter().map(|s| &s.id);
        for id in ids.chain(cl.lesson.exercises.iter().map(|e| &e.id)) {
            places += 1;
            let app = open(&course, &cl.lesson.id, id);
            let w = app.window;
            let in_view = app
                .outcome
                .layout
                .lanes
                .iter()
                .map(|l| {
                    l.spans
                        .iter()
                        .filter(|s| s.to >= w.from && s.from <= w.to)
                        .count()
                })
                .max()
                .unwrap_or(0);
            assert!(
                in_view <= 2 * lockstep::ui::course::READABLE_SPANS,
                "{}/{id} opens at {}x with {in_view} spans in one lane",
                cl.lesson.id,
                app.zoom
            );
            if app.zoom > 1 {
                zoomed += 1;
            } else {
                assert_eq!(
                    (w.from, w.to),
                    (0, app.outcome.end),
                    "{}/{id} whole",
                    cl.lesson.id
                );
            }
        }
    }
    assert!(
        places > 50 && zoomed > 0,
        "{places} places, {zoomed} zoomed in"
    );
}
