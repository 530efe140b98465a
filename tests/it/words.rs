//! The words a learner reads: every text the lesson view and the facilitator's printouts show,
//! for every step and exercise of every shipped lesson, is words, never the lesson format's
//! syntax.
//!
//! The page draws what `ui` computes, so this reads the same values natively, each as the view
//! shows it: a short text of a lesson through `narration::shown` (what `web::course::rich`
//! draws), narration and cues as their rendered blocks, and the sentences `ui` builds (gate
//! readings, prediction answers, check results, solutions, printouts) as they are. The app is
//! driven through its reducer as the page drives it: a prediction made with each choice and the
//! run played to its end, a gate read at the start and after its intended change and each
//! misconception's example, an exercise checked at the start, with its solution, each other
//! answer and each misconception's example.
//!
//! What counts as syntax, anywhere in a text: a backtick (Markdown that reached the page
//! unrendered); a `snake_case` word (`lost_updates`, `token_chain`, `any_source`); a figure's
//! call (`idle_ms(ledger)`, `grants(new, 1000, 2000)`); a dotted or colon-joined name
//! (`migration.mode`, `single:old`); a comparison (`==`, `>=`); an edit's line of text as a
//! lesson writes it (`protocol online single:old`).
//!
//! Code: a lesson may show a name in code (`old`, `orders`), rendered as code, never as raw
//! backticks. A code span or block is accepted only when it is a name the run shows (a service,
//! resource, row, `resource[row]`, client class, client or region of one of the lesson's
//! scenarios) or a command the reader can type (`lockstep …`); any other code (a field of the
//! scenario format, a figure's name) is the format's syntax and is reported.

use std::sync::Arc;

use lockstep::lesson::narration::{self, Block, Inline, Rich};
use lockstep::lesson::{self, edit, wire, Edit};
use lockstep::ui::course::{places, seeds_words, Course, LessonAction, Place};
use lockstep::ui::print::{handout, key, Pictures, Printout};
use lockstep::ui::{Action, App};

/// The course as the page builds it: the shipped lessons through the compact form.
fn course() -> Arc<Course> {
    let files = wire::course_files(&lesson::builtin::lessons());
    let loaded = wire::read_course_files(&files).expect("the course file reads back");
    Arc::new(Course::new(loaded, Vec::new()))
}

/// The texts seen so far, and what is wrong with any of them.
struct Reader {
    /// The names a lesson's code may show.
    names: Vec<String>,
    /// The lines of text of the lesson's edits, which a learner must never read as such.
    edit_lines: Vec<String>,
    /// How many texts were read.
    texts: usize,
    problems: Vec<String>,
}

impl Reader {
    /// Reads one text as the page shows it: its inlines, code apart.
    fn read(&mut self, place: &str, what: &str, inlines: &[Inline]) {
        self.texts += 1;
        let mut plain = String::new();
        let mut codes = Vec::new();
        flatten(inlines, &mut plain, &mut codes);
        let mut found = syntax(&plain);
        if std::env::var_os("DUMP").is_some() {
            eprintln!("[{place}] {what}: {plain}");
        }
        for code in &codes {
            let command = code.starts_with("lockstep ");
            if !command && !self.names.iter().any(|n| n == code) {
                found.push(format!("code that is not a name the run shows: {code:?}"));
            }
            found.extend(syntax(code).into_iter().map(|f| format!("in code, {f}")));
        }
        for line in &self.edit_lines {
            if plain.contains(line.as_str()) {
                found.push(format!("an edit's line of text: {line:?}"));
            }
        }
        for f in found {
            self.problems
                .push(format!("{place}: {what}: {f}\n    in {plain:?}"));
        }
    }

    /// Reads a short text of a lesson as the page draws it (`web::course::rich`).
    fn short(&mut self, place: &str, what: &str, rich: &Rich, text: &str) {
        if !text.is_empty() {
            self.read(place, what, &narration::shown(rich, text));
        }
    }

    /// Reads a sentence the page shows as plain text.
    fn text(&mut self, place: &str, what: &str, text: &str) {
        if !text.is_empty() {
            self.read(place, what, &[Inline::Text(text.to_string())]);
        }
    }

    /// Reads rendered narration, a paragraph (or list item, heading, code block) at a time.
    fn blocks(&mut self, place: &str, what: &str, blocks: &[Block]) {
        for b in blocks {
            match b {
                Block::Paragraph(x) | Block::Heading { content: x, .. } => {
                    self.read(place, what, x)
                }
                Block::List { items, .. } => {
                    for item in items {
                        self.blocks(place, what, item);
                    }
                }
                Block::Quote(inner) => self.blocks(place, what, inner),
                Block::Code(text) => self.read(place, what, &[Inline::Code(text.trim().into())]),
                Block::Rule => {}
            }
        }
    }
}

/// A text's words outside code, and its code spans.
fn flatten(inlines: &[Inline], plain: &mut String, codes: &mut Vec<String>) {
    for i in inlines {
        match i {
            Inline::Text(t) => plain.push_str(t),
            Inline::Code(t) => {
                plain.push_str(t);
                codes.push(t.clone());
            }
            Inline::Emphasis(x) | Inline::Strong(x) | Inline::Link { content: x, .. } => {
                flatten(x, plain, codes)
            }
            Inline::LineBreak => plain.push(' '),
        }
    }
}

/// The lesson format's syntax found in a text, each in words.
fn syntax(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    if text.contains('`') {
        found.push("a raw backtick".to_string());
    }
    for op in ["==", "!=", ">=", "<="] {
        if text.contains(op) {
            found.push(format!("the comparison {op:?}"));
        }
    }
    let bytes = text.as_bytes();
    let word_char = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if !word_char(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word_char(bytes[i]) {
            i += 1;
        }
        let word = &text[start..i];
        let next = bytes.get(i).copied();
        let after = bytes.get(i + 1).copied();
        let letters = word.bytes().filter(u8::is_ascii_alphabetic).count();
        if word.contains('_') && letters > 0 {
            found.push(format!("the identifier {word:?}"));
        }
        let lower = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase());
        // A figure's name before its arguments; not a formula's one-letter `n(n-1)`.
        if next == Some(b'(') && letters > 1 && word.bytes().all(|b| !b.is_ascii_uppercase()) {
            let close = text[i..].find(')').map(|k| &text[start..i + k + 1]);
            found.push(format!("the call {:?}", close.unwrap_or(word)));
        }
        // `migration.mode`, `operations.completed`; not "e.g." nor a number's decimals.
        if next == Some(b'.') && lower(after) && word.len() > 1 && letters == word.len() {
            let rest: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest.len() > 1 {
                found.push(format!("the dotted name \"{word}.{rest}\""));
            }
        }
        // `single:old`, `subordinate:old`: a colon with no space after it, between words.
        if next == Some(b':') && letters > 0 && after.is_some_and(|b| b.is_ascii_alphabetic()) {
            let rest: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            found.push(format!("the joined name \"{word}:{rest}\""));
        }
    }
    found
}

/// Every name a lesson's scenarios show: what a code span may hold.
fn names(l: &lesson::Lesson) -> Vec<String> {
    let scenarios = l
        .steps
        .iter()
        .map(|s| &s.scenario)
        .chain(l.exercises.iter().map(|e| &e.scenario));
    let mut out = Vec::new();
    for s in scenarios {
        out.extend(s.services.iter().map(|x| x.name.clone()));
        out.extend(s.clients.iter().map(|x| x.name.clone()));
        out.extend(s.client_instance_names());
        out.extend(s.regions.iter().cloned());
        for r in &s.resources {
            out.push(r.name.clone());
            for row in &r.rows {
                out.push(row.clone());
                out.push(format!("{}[{row}]", r.name));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Opens a place of a lesson as the page does.
fn open(course: &Arc<Course>, index: usize, place: Place) -> App {
    App::open("01-two-services.toml").reduce(Action::Lesson(LessonAction::Open {
        course: Arc::clone(course),
        index,
        place,
        resume: Vec::new(),
    }))
}

/// The app after the learner made some edits with the controls.
fn with_edits(app: &App, edits: &[Edit]) -> App {
    edits.iter().fold(app.clone(), |app, e| {
        let toggle = e.toggle(&app.scenario);
        app.reduce(Action::Toggle(toggle))
    })
}

fn lesson_run(app: &App) -> &lockstep::ui::course::LessonRun {
    app.lesson.as_deref().expect("a lesson is open")
}

/// What the page says of an exercise's check after the learner's edits: drawn as the lesson's
/// text when it is one (its success or a misconception's hint), else as the sentence.
fn check_message(app: &App, edits: &[Edit]) -> String {
    let checked = with_edits(app, edits).reduce(Action::Lesson(LessonAction::Check));
    lesson_run(&checked)
        .attempt
        .as_ref()
        .expect("a check was made")
        .message
        .clone()
}

#[test]
fn every_text_a_learner_reads_is_words_not_the_lesson_formats_syntax() {
    let course = course();
    let mut places_read = 0;
    let mut reader = Reader {
        names: Vec::new(),
        edit_lines: Vec::new(),
        texts: 0,
        problems: Vec::new(),
    };
    for (index, cl) in course.lessons.iter().enumerate() {
        let l = &cl.lesson;
        let rich = &cl.rich;
        reader.names = names(l);
        let mut edits: Vec<&Edit> = Vec::new();
        for s in &l.steps {
            edits.extend(&s.setup.edits);
            if let Some(g) = &s.gate {
                edits.extend(&g.intended);
                edits.extend(g.misconceptions.iter().flat_map(|m| &m.example));
            }
        }
        for e in &l.exercises {
            edits.extend(&e.solution);
            edits.extend(e.alternatives.iter().flatten());
            edits.extend(e.misconceptions.iter().flat_map(|m| &m.example));
        }
        // An edit of three words or more ("outage old on") is never prose; "seed 3" may be.
        reader.edit_lines = edits
            .iter()
            .map(|e| e.to_string())
            .filter(|t| t.split_whitespace().count() >= 3)
            .collect();

        // The course's list of lessons.
        reader.short(&l.id, "the lesson's title", rich, &l.title);
        reader.short(&l.id, "the lesson's summary", rich, &l.summary);
        reader.blocks(&l.id, "the lesson's introduction", &cl.intro);

        for place in places(l) {
            places_read += 1;
            let app = open(&course, index, place);
            let run = lesson_run(&app);
            let at = format!("{}/{}", l.id, run.id());
            let at = at.as_str();
            let title = match place {
                Place::Step(k) => &l.steps[k].title,
                Place::Exercise(k) => &l.exercises[k].title,
            };
            reader.short(at, "the title", rich, title);
            reader.text(
                at,
                "the tab's title",
                &format!(
                    "{} · {}",
                    narration::plain(rich, title),
                    narration::plain(rich, &l.title)
                ),
            );
            reader.text(
                at,
                "where the place is",
                &lockstep::ui::course::place_words(l, place),
            );
            match place {
                Place::Step(k) => {
                    let step = &l.steps[k];
                    let text = &cl.steps[k];
                    for a in &step.assumptions {
                        reader.short(at, "an assumption", rich, a);
                    }
                    reader.blocks(at, "the narration", &text.narration);
                    for cue in &text.cues {
                        reader.blocks(at, "a cue", cue);
                    }
                    if let Some(sw) = &step.sweep {
                        reader.text(at, "the sweep's caption", &sw.caption);
                    }
                    if let Some(p) = &step.prediction {
                        reader.short(at, "the prediction's question", rich, &p.question);
                        for (k, c) in p.choices.iter().enumerate() {
                            reader.short(at, "a prediction's choice", rich, &c.text);
                            let said = app.reduce(Action::Lesson(LessonAction::Predict(k)));
                            let waiting = lesson_run(&said).prediction_text();
                            reader.text(
                                at,
                                "the prediction while the run plays",
                                &waiting.unwrap_or_default(),
                            );
                            let played = said.reduce(Action::ToEnd);
                            let answer = lesson_run(&played).prediction_text();
                            assert!(answer.is_some(), "{at}: choice {k} is answered");
                            reader.text(at, "the prediction's answer", &answer.unwrap());
                        }
                        let shown = app
                            .reduce(Action::Lesson(LessonAction::ShowMe))
                            .reduce(Action::ToEnd);
                        let answer = lesson_run(&shown).prediction_text();
                        reader.text(
                            at,
                            "the answer shown without a prediction",
                            &answer.unwrap_or_default(),
                        );
                    }
                    if let Some(g) = &step.gate {
                        reader.short(at, "the gate's prompt", rich, &g.prompt);
                        reader.short(at, "the gate's message", rich, &g.passed);
                        for m in &g.messages {
                            reader.short(at, "a gate's message", rich, &m.text);
                        }
                        // The reading is drawn as `rich(&texts.rich, &run.gate_text)`.
                        reader.short(at, "the gate at the start", rich, &run.gate_text);
                        // The controls wait for the prediction: the learner has seen the run.
                        let app = if step.prediction.is_some() {
                            app.reduce(Action::Lesson(LessonAction::ShowMe))
                                .reduce(Action::ToEnd)
                        } else {
                            app.clone()
                        };
                        let changed = with_edits(&app, &g.intended);
                        let met = lesson_run(&changed);
                        assert_eq!(met.gate, Some(true), "{at}: the intended change meets it");
                        reader.short(at, "the gate after its change", rich, &met.gate_text);
                        for m in &g.misconceptions {
                            let wrong = with_edits(&app, &m.example);
                            let text = &lesson_run(&wrong).gate_text;
                            reader.short(at, "the gate after a known mistake", rich, text);
                        }
                    }
                }
                Place::Exercise(k) => {
                    let e = &l.exercises[k];
                    reader.short(at, "the goal", rich, &e.goal);
                    reader.blocks(at, "the narration", &cl.exercises[k]);
                    reader.text(
                        at,
                        "what Check runs",
                        &format!(
                            "Check runs the engine on {}; in every one of them:",
                            seeds_words(&e.seeds)
                        ),
                    );
                    for c in &e.check {
                        reader.text(at, "what the check needs", &c.words());
                    }
                    for (i, h) in e.hints.iter().enumerate() {
                        reader.text(at, "a hint's label", &e.hint_label(i).unwrap_or_default());
                        reader.short(at, "a hint", rich, h);
                    }
                    // The result is drawn as `rich(&texts.rich, &attempt.message)`.
                    let start = check_message(&app, &[]);
                    reader.short(at, "the check at the start", rich, &start);
                    let solved = check_message(&app, &e.solution);
                    reader.short(at, "the check of the solution", rich, &solved);
                    for a in &e.alternatives {
                        let also = check_message(&app, a);
                        reader.short(at, "the check of another answer", rich, &also);
                    }
                    for m in &e.misconceptions {
                        let wrong = check_message(&app, &m.example);
                        reader.short(at, "the check of a known mistake", rich, &wrong);
                    }
                    // The solution, as the view lists it.
                    for x in &e.solution {
                        reader.text(at, "the solution", &x.words(&e.scenario));
                    }
                    for a in &e.alternatives {
                        reader.text(at, "another answer", &edit::words(a, &e.scenario));
                    }
                    reader.short(at, "the explanation", rich, &e.explanation);
                    reader.short(at, "the success message", rich, &e.success);
                }
            }
        }
    }

    // The facilitator's printouts, as `web::print` draws them: the key, and the handout of
    // every lesson with its first hints (what `lockstep lesson handout` writes too).
    for sl in &key(course.lessons.iter().map(|cl| &cl.lesson)).lessons {
        let cl = course
            .lessons
            .iter()
            .find(|cl| cl.lesson.id == sl.id)
            .expect("a lesson of the course");
        let (rich, reader) = (&cl.rich, &mut reader);
        reader.names = names(&cl.lesson);
        let at = format!("{} of {}", Printout::Key.title(), sl.id);
        let at = at.as_str();
        reader.short(at, "the title", rich, &sl.title);
        reader.short(at, "the summary", rich, &sl.summary);
        for e in &sl.exercises {
            reader.short(at, "an exercise's title", rich, &e.title);
            reader.short(at, "a goal", rich, &e.goal);
            reader.text(at, "the controls", &e.controls.join(", "));
            reader.text(at, "the seeds", &e.seeds);
            for h in &e.hints {
                reader.short(at, "a hint", rich, h);
            }
            let a = &e.answers;
            reader.text(at, "the solution", &a.solution);
            for x in &a.alternatives {
                reader.text(at, "another answer", x);
            }
            reader.short(at, "the explanation", rich, &a.explanation);
            for (example, hint) in &a.misconceptions {
                reader.text(at, "a known mistake", example);
                reader.short(at, "what the app says to it", rich, hint);
            }
        }
    }
    let all: Vec<String> = course
        .lessons
        .iter()
        .map(|cl| cl.lesson.id.clone())
        .collect();
    let sheet = handout(&course.lessons, &all, true, "", Pictures::Every);
    assert_eq!(sheet.lessons.len(), course.lessons.len());
    for hl in &sheet.lessons {
        let cl = &course.lessons[course.index(&hl.id).expect("a lesson of the course")];
        reader.names = names(&cl.lesson);
        let at = format!("{} of {}", Printout::Handout.title(), hl.id);
        let at = at.as_str();
        reader.read(at, "the title", &hl.title);
        reader.read(at, "the summary", &hl.summary);
        for s in &hl.steps {
            reader.read(at, "a step's title", &s.title);
            reader.blocks(at, "a step's narration", &s.narration);
            if let Some((q, choices)) = &s.question {
                reader.read(at, "a prediction", q);
                for c in choices {
                    reader.read(at, "a prediction's choice", c);
                }
            }
            if let Some(t) = &s.task {
                reader.read(at, "what the step asks", t);
            }
        }
        for e in &hl.exercises {
            reader.read(at, "an exercise's title", &e.title);
            reader.blocks(at, "an exercise's narration", &e.narration);
            reader.read(at, "a goal", &e.goal);
            reader.text(at, "the controls", &e.controls.join(", "));
            reader.text(at, "the seeds", &e.seeds);
            if let Some(h) = &e.hint {
                reader.read(at, "the first hint", h);
            }
        }
    }

    // Data-driven: it must have read the whole course, not nothing.
    assert!(places_read > 60, "only {places_read} places read");
    assert!(
        reader.texts > places_read * 5,
        "only {} texts read",
        reader.texts
    );
    assert!(
        reader.problems.is_empty(),
        "{} of {} texts in {places_read} places show the lesson format's syntax:\n{}",
        reader.problems.len(),
        reader.texts,
        reader.problems.join("\n")
    );
}

/// The detector itself: it finds each kind of syntax the page used to show, and passes words.
#[test]
fn the_syntax_detector_knows_syntax_from_words() {
    for raw in [
        "the run shows lost_updates = 0",
        "wait_cycle_count",
        "idle_ms(ledger) < 500",
        "grants(subordinate, 1000, 2000)",
        "max_simultaneous_holders",
        "protocol online single:old",
        "migration.mode drain",
        "fencing orders any_source",
        "Make `new` defer to `old`",
        "x == 1",
    ] {
        assert!(!syntax(raw).is_empty(), "{raw:?} is syntax");
    }
    for words in [
        "no update was lost; 2 updates were lost",
        "ledger stood idle for 1500 ms while clients waited (e.g. in seed 3)",
        "online: lock in old only; service new: subordinate to old",
        "Not yet: with seed 3, the goal needs that exclusion holds: no two clients believe \
         they hold the same rows at once, but exclusion broke.",
        "It held with 0.5 of 12.25 seeds, 3 of 4 (25%).",
    ] {
        assert!(syntax(words).is_empty(), "{words:?}: {:?}", syntax(words));
    }
}
