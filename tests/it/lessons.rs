//! The lessons as tests: every shipped lesson parses, every claim of every step holds when the
//! engine runs that step, every gate is unmet at its step's start and met by its intended
//! change, every exercise fails at its start, passes with its solution and recognises each of
//! its misconceptions. Then the pieces the app relies on: cues that follow the playhead,
//! completion codes, narration that carries no markup from the file, and `lockstep lesson
//! check` on broken files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lockstep::lesson::code::{self, CodeError, Completion};
use lockstep::lesson::narration::{self, Block, Inline};
use lockstep::lesson::{self, apply_edits, Control, Edit, Lesson};
use lockstep::trace::{ServiceOp, What};
use lockstep::ui::toggles::{self, Memory, Toggle};

use crate::check;

fn lessons_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lessons")
}

/// Every lesson file on disk, with its text, sorted by name.
fn lesson_files() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(lessons_dir())
        .expect("the lessons directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&p).expect("readable lesson");
            (name, text)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no lessons shipped");
    out
}

fn parsed() -> Vec<(String, Lesson)> {
    lesson_files()
        .into_iter()
        .map(|(name, text)| {
            let lesson = lesson::parse(&text).unwrap_or_else(|errors| {
                let shown: Vec<String> = errors.iter().map(|e| format!("{name}:{e}")).collect();
                panic!("{}", shown.join("\n"))
            });
            (name, lesson)
        })
        .collect()
}

#[test]
fn every_lesson_file_parses_and_is_embedded() {
    let on_disk: Vec<(String, String)> = lesson_files();
    let embedded: Vec<(String, String)> = lesson::builtin::ALL
        .iter()
        .map(|b| (b.file.to_string(), b.text.to_string()))
        .collect();
    assert_eq!(
        on_disk, embedded,
        "lesson::builtin::ALL lists exactly the files in lessons/"
    );
    let lessons = parsed();
    assert_eq!(lesson::builtin::lessons().len(), lessons.len());
    let orders: BTreeSet<u32> = lessons.iter().map(|(_, l)| l.order).collect();
    let ids: BTreeSet<&str> = lessons.iter().map(|(_, l)| l.id.as_str()).collect();
    assert_eq!(orders.len(), lessons.len(), "each lesson has its own order");
    assert_eq!(ids.len(), lessons.len(), "each lesson has its own id");
}

#[test]
fn the_course_covers_every_claim_of_the_brief_in_six_to_nine_lessons() {
    let lessons = parsed();
    assert!(
        (6..=9).contains(&lessons.len()),
        "{} lessons",
        lessons.len()
    );
    let covered: BTreeSet<u8> = lessons
        .iter()
        .flat_map(|(_, l)| l.claims.iter().copied())
        .collect();
    assert_eq!(covered, (1..=11).collect::<BTreeSet<u8>>());
    let exercises: usize = lessons.iter().map(|(_, l)| l.exercises.len()).sum();
    assert!(exercises >= 3, "{exercises} exercises");
    for (name, l) in &lessons {
        assert!(
            !l.summary.is_empty(),
            "{name}: a summary for the course view"
        );
        assert!(!l.intro.is_empty(), "{name}: an introduction");
        let rich = l
            .steps
            .iter()
            .filter(|s| !s.cues.is_empty() && !s.claims.is_empty())
            .count();
        assert!(rich >= 2, "{name}: several steps with cues and claims");
        for s in &l.steps {
            assert!(!s.claims.is_empty(), "{name} {}: a step makes claims", s.id);
            assert!(!s.narration.is_empty(), "{name} {}: a step narrates", s.id);
            assert!(
                !s.assumptions.is_empty(),
                "{name} {}: a step states the assumptions its claims rest on",
                s.id
            );
        }
        for x in &l.exercises {
            assert!(!x.hints.is_empty(), "{name} {}: hints", x.id);
            assert!(!x.solution.is_empty(), "{name} {}: a solution", x.id);
            assert!(
                !x.misconceptions.is_empty(),
                "{name} {}: a misconception",
                x.id
            );
            assert!(x.seeds.len() >= 4, "{name} {}: several seeds", x.id);
        }
    }
}

#[test]
fn every_claim_of_every_step_holds_when_the_engine_runs_that_step() {
    for (name, l) in parsed() {
        for step in &l.steps {
            let s = &step.scenario;
            let (run, verdict) = check(s, s.seed);
            // A step that shows a recording is judged on the recording; that its claims hold in
            // the simulated run as well is checked apart, with the recordings.
            if step.recording.is_some() {
                continue;
            }
            for claim in &step.claims {
                let r = claim.check(s, &verdict);
                assert!(
                    r.holds,
                    "{name}:{}: \"{}\" does not hold: {}",
                    claim.line, claim.text, r.actual
                );
            }
            let marks = lesson::cue_marks(&step.cues, &run.world, &run.events, &verdict);
            for (cue, mark) in step.cues.iter().zip(&marks) {
                assert!(
                    mark.is_some(),
                    "{name}:{}: the cue's event never happens",
                    cue.line
                );
            }
        }
    }
}

#[test]
fn every_gate_is_unmet_at_its_start_and_met_by_its_intended_change() {
    let mut gates = 0;
    for (name, l) in parsed() {
        for step in &l.steps {
            let Some(gate) = &step.gate else { continue };
            gates += 1;
            let s = &step.scenario;
            let (_, start) = check(s, s.seed);
            assert!(
                !gate.met(s, &start),
                "{name}:{}: the gate is met before the learner does anything",
                gate.line
            );
            for e in &gate.intended {
                assert!(
                    step.controls.contains(&Control::of(e)),
                    "{name}:{}: the intended change \"{e}\" uses a control the step offers",
                    gate.line
                );
            }
            let changed = apply_edits(s, &gate.intended);
            let (_, after) = check(&changed, changed.seed);
            assert!(
                gate.met(&changed, &after),
                "{name}:{}: the intended change does not meet the gate",
                gate.line
            );
        }
    }
    assert!(gates >= 5, "{gates} gates");
}

#[test]
fn every_exercise_fails_at_its_start_passes_with_its_solution_and_names_its_misconceptions() {
    for (name, l) in parsed() {
        for x in &l.exercises {
            let start = x.grade(&x.scenario);
            assert!(!start.passed, "{name} {}: the start already passes", x.id);
            assert_eq!(start.misconception, None, "{name} {}: no hint yet", x.id);
            for answer in std::iter::once(&x.solution).chain(&x.alternatives) {
                let solved = x
                    .attempt(answer)
                    .expect("the solution uses allowed controls");
                let g = x.grade(&solved);
                assert!(
                    g.passed,
                    "{name} {}: {answer:?} fails: {:?}",
                    x.id, g.failures
                );
            }
            for (i, m) in x.misconceptions.iter().enumerate() {
                assert!(
                    !m.matches(&x.scenario),
                    "{name}:{}: matches the start already",
                    m.line
                );
                let tried = x.attempt(&m.example).expect("an allowed example");
                let g = x.grade(&tried);
                assert!(!g.passed, "{name}:{}: the example passes", m.line);
                assert_eq!(
                    g.misconception,
                    Some(i),
                    "{name}:{}: the example triggers its own hint",
                    m.line
                );
            }
        }
    }
}

#[test]
fn an_exercise_refuses_edits_of_controls_it_does_not_offer() {
    let lessons = parsed();
    let x = lessons
        .iter()
        .flat_map(|(_, l)| &l.exercises)
        .find(|x| x.id == "one-order-for-all")
        .expect("the deadlock exercise");
    let err = x
        .attempt(&["pause on".parse().unwrap()])
        .expect_err("the pause is not offered");
    assert!(err.contains("pause"), "{err}");
    assert_eq!(x.hint_label(1).as_deref(), Some("Hint 2 of 3"));
    assert_eq!(x.hint_label(3), None);
}

/// A cue is a pure function of the playhead: hidden before its event, shown from it on, and
/// hidden again when the playhead goes back.
#[test]
fn cues_appear_at_their_event_and_disappear_when_scrubbing_back() {
    let lessons = parsed();
    let step = lessons[0].1.step("two-services").expect("the second step");
    let s = &step.scenario;
    let (run, verdict) = check(s, s.seed);
    let marks = lesson::cue_marks(&step.cues, &run.world, &run.events, &verdict);
    let grant = step
        .cues
        .iter()
        .position(|c| c.when.event == "granted" && c.when.service.as_deref() == Some("new"))
        .expect("a cue at new's grant");
    let at = marks[grant].expect("new grants").at;
    let event = marks[grant].unwrap().event.expect("a trace event");
    assert_eq!(run.events[event].at, at);
    let shown = |t| lesson::cues_at(&step.cues, &run.world, &run.events, &verdict, t);
    let has = |t| shown(t).iter().any(|c| std::ptr::eq(*c, &step.cues[grant]));
    assert!(!has(at - 1), "before the grant");
    assert!(has(at), "at the grant");
    assert!(has(run.end), "at the end");
    assert!(!has(at - 1), "scrubbed back");
    assert!(shown(0).is_empty(), "nothing at the start");
    assert_eq!(
        shown(run.end).len(),
        step.cues.len(),
        "everything at the end"
    );
    // The visible cues come in the order of their events.
    let order: Vec<u64> = shown(run.end)
        .iter()
        .map(|c| {
            let i = step.cues.iter().position(|x| std::ptr::eq(x, *c)).unwrap();
            marks[i].unwrap().at
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    // Highlights mark trace events by pattern.
    let step = lessons[0].1.step("incomparable").unwrap();
    let (run, _) = check(&step.scenario, step.scenario.seed);
    let marked = lesson::highlighted_events(&step.highlight, &run.world, &run.events);
    assert!(!marked.is_empty());
    assert!(marked.iter().all(|i| matches!(
        run.events[*i].what,
        What::Service {
            op: ServiceOp::Granted { .. },
            ..
        }
    )));
    assert!(step.highlight.service("new") && !step.highlight.client("batch-1"));
}

#[test]
fn edits_read_back_as_written_and_make_the_same_change_as_the_toggles() {
    let texts = [
        "partition on",
        "partition.length 250",
        "protocol online single:old",
        "fencing accounts one_source all_accesses",
        "fencing accounts any_source",
        "role new subordinate:old",
        "role new independent",
        "outage east-locks off",
        "outage.start east-locks 100",
        "pause.client slow-1",
        "migration.mode transfer",
        "migration.at 1500",
        "seed 7",
    ];
    for t in texts {
        let e: Edit = t.parse().unwrap_or_else(|why| panic!("{t}: {why}"));
        assert_eq!(e.to_string(), t);
    }
    for bad in [
        "",
        "fencing",
        "protocol online",
        "partition maybe",
        "seed x",
        "frobnicate 1",
    ] {
        assert!(bad.parse::<Edit>().is_err(), "{bad:?} is refused");
    }
    // An edit is a control's toggle in words, and goes through the app's own toggles. A
    // fencing edit without checks keeps the resource's current ones.
    let base = crate::scenario("05");
    let fencing = |checks| Toggle::Fencing {
        resource: "accounts".into(),
        mode: lockstep::scenario::Fencing::OneSource,
        checks,
    };
    let toggle = fencing(Some(lockstep::scenario::FencingChecks::AllAccesses));
    let edit: Edit = "fencing accounts one_source all_accesses".parse().unwrap();
    assert_eq!(edit, toggle);
    assert_eq!(edit.toggle(&base), toggle);
    let short: Edit = "fencing accounts one_source".parse().unwrap();
    assert_eq!(short, fencing(None));
    assert_eq!(
        short.toggle(&base),
        fencing(Some(base.resources[0].fencing_checks))
    );
    for e in [edit, short] {
        assert_eq!(
            apply_edits(&base, std::slice::from_ref(&e)),
            toggles::apply(&base, &e, &mut Memory::default())
        );
    }
    assert_eq!(Control::of(&toggle).to_string(), "fencing accounts");
}

fn solved_code() -> (Vec<Lesson>, String) {
    let lessons: Vec<Lesson> = parsed().into_iter().map(|(_, l)| l).collect();
    let l = lessons.iter().find(|l| l.id == "fencing").unwrap();
    let x = l.exercise("two-sources-one-table").unwrap();
    let code = x.completion_code("Alice Martin", &l.id, &x.solution);
    (lessons, code)
}

#[test]
fn a_completion_code_round_trips_and_is_verified_by_running_it_again() {
    let (lessons, code) = solved_code();
    assert!(code.starts_with("LS2."), "{code}");
    // A short code: the version, the payload and the checksum, and nothing else; the payload
    // is the name, the ids, the seeds and the one edit that solves the exercise, so the code
    // is as long as those make it. The bound was 120 when the answer was a 26-character edit
    // (`protocol online single:old`); now it is a 41-character one (`fencing inventory
    // one_source all_accesses`), and the code is 132 characters. Nothing asks for 120:
    // the page's box grows with the code, `find_codes` reads a code a chat app wrapped, and
    // the reader refuses only what is longer than `CODE_CHARS_MAX` (2,048). So the format is
    // kept (codes already given out still verify), and the test holds what "short" means
    // here: no overhead beyond the payload's base64, and under 160 characters, four rows of
    // the page's box at its narrowest (about 40 characters a row).
    let payload = "Alice Martin\nfencing\ntwo-sources-one-table\n0..6\nfencing inventory one_source all_accesses";
    assert_eq!(
        code.len(),
        "LS2.".len() + base64_url(payload.as_bytes()).len() + ".".len() + 8,
        "only the payload and the checksum: {code}"
    );
    assert!(code.len() < 160, "a short code: {code}");
    assert!(
        code.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
        "URL-safe: {code}"
    );
    let c = code::decode(&code).expect("decodes");
    assert_eq!(c.name, "Alice Martin");
    assert_eq!(c.lesson, "fencing");
    assert_eq!(c.exercise, "two-sources-one-table");
    assert_eq!(c.seeds, (0..6).collect::<Vec<u64>>());
    assert_eq!(code::encode(&c), code);
    let v = code::verify(&lessons, &code).expect("the solution verifies");
    assert!(v.grade.passed);
    assert_eq!(v.exercise_title, "Two sources, one table");
    // Whitespace around a pasted code is fine.
    assert!(code::verify(&lessons, &format!("  {code}\n")).is_ok());
}

/// Codes as people paste them into a chat and back: wrapped by the chat app, after a name and
/// a colon, several to a line; and codes of the first version, without a name, still read.
#[test]
fn codes_are_found_in_pasted_text_and_carry_a_name() {
    let (lessons, code) = solved_code();
    let (head, tail) = code.split_at(code.len() / 2);
    let wrapped = format!("Alice: {head}\n  {tail}");
    let bob = {
        let l = lessons.iter().find(|l| l.id == "fencing").unwrap();
        let x = l.exercise("two-sources-one-table").unwrap();
        x.completion_code("Bob\n\t Smith\u{7}", &l.id, &x.solution)
    };
    let text = format!("{wrapped}\n- Bob said {bob} (done!)\nno code here: LS2 LS2. LSD.x");
    let found = code::find_codes(&text);
    assert_eq!(found, vec![code.clone(), bob.clone()]);
    assert_eq!(
        code::decode(&found[1]).unwrap().name,
        "Bob Smith",
        "one clean line"
    );
    assert_eq!(
        code::decode(&wrapped.replace("Alice: ", "")).unwrap().name,
        "Alice Martin"
    );
    // A long name is cut, so a code stays short.
    let long = code::encode(&Completion {
        name: "x".repeat(500),
        ..code::decode(&code).unwrap()
    });
    assert!(long.len() < 200, "{long}");
    // A version 1 code (no name line) still reads and verifies.
    let c = code::decode(&code).unwrap();
    let mut payload = format!("{}\n{}\n0..6", c.lesson, c.exercise);
    for e in &c.edits {
        payload.push('\n');
        payload.push_str(&e.to_string());
    }
    // Version 1 is version 2 without the name line: one built by hand from that definition.
    let b64 = base64_url(payload.as_bytes());
    let sum = payload.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    let old = format!("LS1.{b64}.{sum:08x}");
    let read = code::decode(&old).expect("a version 1 code reads");
    assert_eq!((read.name.as_str(), &read.edits), ("", &c.edits));
    assert!(code::verify(&lessons, &old).is_ok());
    // At most CODES_MAX codes are read from one text.
    let many = format!("{code} ").repeat(code::CODES_MAX + 10);
    assert_eq!(code::find_codes(&many).len(), code::CODES_MAX);
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[test]
fn a_tampered_or_wrong_completion_code_fails() {
    let (lessons, code) = solved_code();
    // Any changed character of the payload breaks the checksum.
    let payload_start = code.find('.').unwrap() + 1;
    for i in [payload_start, payload_start + 5, code.len() - 12] {
        let mut bytes = code.clone().into_bytes();
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert!(
            code::verify(&lessons, &tampered).is_err(),
            "{tampered} verifies"
        );
    }
    let mut wrong_sum = code.clone();
    wrong_sum.replace_range(code.len() - 8.., "00000000");
    assert_eq!(code::decode(&wrong_sum), Err(CodeError::Checksum));
    assert!(matches!(
        code::decode(&code.replacen("LS2", "LS9", 1)),
        Err(CodeError::Version(_))
    ));
    assert!(matches!(
        code::decode("not a code"),
        Err(CodeError::Malformed(_))
    ));
    // A payload that is not URL-safe base64 says which character cannot be there.
    let mut stray = code.clone();
    stray.replace_range(payload_start + 2..payload_start + 3, "!");
    assert_eq!(
        code::decode(&stray),
        Err(CodeError::Malformed("'!' cannot appear in a code".into()))
    );
    // Oversized input is refused before decoding.
    let huge = format!("LS2.{}.00000000", "A".repeat(1 << 20));
    assert_eq!(code::decode(&huge), Err(CodeError::TooLong));
    // A well-formed code whose edits do not solve the exercise is not verified.
    let l = lessons.iter().find(|l| l.id == "fencing").unwrap();
    let x = l.exercise("two-sources-one-table").unwrap();
    let unsolved = x.completion_code("Bob", &l.id, &[]);
    assert!(matches!(
        code::verify(&lessons, &unsolved),
        Err(CodeError::Fails(_))
    ));
    let wrong = x.completion_code("Bob", &l.id, &x.misconceptions[0].example);
    match code::verify(&lessons, &wrong) {
        Err(CodeError::Fails(g)) => assert_eq!(g.misconception, Some(0)),
        other => panic!("{other:?}"),
    }
    // Edits of a control the exercise does not offer, or other seeds, are refused.
    let sneaky = code::encode(&Completion {
        name: "Eve".into(),
        lesson: l.id.clone(),
        exercise: x.id.clone(),
        seeds: x.seeds.clone(),
        edits: vec!["partition on".parse().unwrap()],
    });
    assert!(matches!(
        code::verify(&lessons, &sneaky),
        Err(CodeError::Edits(_))
    ));
    let lucky = code::encode(&Completion {
        name: "Eve".into(),
        lesson: l.id.clone(),
        exercise: x.id.clone(),
        seeds: vec![3],
        edits: x.solution.clone(),
    });
    assert!(matches!(
        code::verify(&lessons, &lucky),
        Err(CodeError::Seeds { .. })
    ));
}

fn all_text(blocks: &[Block]) -> String {
    blocks
        .iter()
        .map(narration::block_text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn narration_carries_no_markup_from_the_file() {
    let hostile = "Hello <script>alert(1)</script> there.\n\n\
        <script>\nalert(2)\n</script>\n\n\
        An image: <img src=x onerror=alert(3)>.\n\n\
        ![a picture](https://example.com/x.png \"title\")\n\n\
        [bad](javascript:alert(4)) [worse](JaVaScRiPt:alert(5)) \
        [entity](&#106;avascript:alert(6)) [data](data:text/html,<b>x</b>) \
        <javascript:alert(7)> [fine](https://example.com/a?b=\"c\") [step](#/lessons/x/y)\n\n\
        <div onclick=\"alert(8)\">a block of HTML</div>\n\n\
        `<b>code</b>` and **bold <em>html</em>**";
    let blocks = narration::render(hostile);
    let html = narration::to_html(&blocks);
    let lower = html.to_lowercase();
    for bad in [
        "<script", "<img", "onerror", "<div", "onclick", "<b>", "<em>html",
    ] {
        assert!(!lower.contains(bad), "{bad} in {html}");
    }
    // The only links are the safe ones; an unsafe target may show as words, never as a link.
    assert_eq!(lower.matches("<a ").count(), 2, "{html}");
    assert!(!lower.contains("href=\"javascript") && !lower.contains("href=\"data"));
    // The safe links survive, escaped.
    assert!(
        html.contains("<a href=\"https://example.com/a?b=&quot;c&quot;\">fine</a>"),
        "{html}"
    );
    assert!(
        html.contains("<a href=\"#/lessons/x/y\">step</a>"),
        "{html}"
    );
    // Unsafe links keep their words, without a target; images keep their description.
    let text = all_text(&blocks);
    for words in [
        "bad",
        "worse",
        "entity",
        "data",
        "a picture",
        "Hello",
        "there.",
    ] {
        assert!(text.contains(words), "{words} in {text:?}");
    }
    // Code shows its markup as text, escaped.
    assert!(
        html.contains("<code>&lt;b&gt;code&lt;/b&gt;</code>"),
        "{html}"
    );
    fn links(inlines: &[Inline], out: &mut Vec<String>) {
        for i in inlines {
            match i {
                Inline::Link { href, content } => {
                    out.push(href.clone());
                    links(content, out);
                }
                Inline::Emphasis(x) | Inline::Strong(x) => links(x, out),
                _ => {}
            }
        }
    }
    let mut hrefs = Vec::new();
    for b in &blocks {
        if let Block::Paragraph(x) = b {
            links(x, &mut hrefs);
        }
    }
    assert_eq!(hrefs, ["https://example.com/a?b=\"c\"", "#/lessons/x/y"]);
}

#[test]
fn narration_of_any_depth_renders_without_deep_recursion() {
    let deep = format!("{} deep\n\n{}x\n", ">".repeat(50_000), "- ".repeat(5_000));
    let blocks = narration::render(&deep);
    let html = narration::to_html(&blocks);
    assert!(html.contains("deep"));
    // Headings, lists and emphasis come through as structure.
    let html = narration::to_html(&narration::render(
        "# Title\n\n1. one\n2. *two*\n\n- a\n- b\n\n> quoted\n\n---",
    ));
    for tag in [
        "<h1>Title</h1>",
        "<ol>",
        "<em>two</em>",
        "<ul>",
        "<blockquote>",
        "<hr>",
    ] {
        assert!(html.contains(tag), "{tag} in {html}");
    }
}

/// Runs `lockstep lesson check` on files.
fn lesson_check(paths: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("lesson")
        .arg("check")
        .args(paths)
        .output()
        .expect("the lockstep binary runs")
}

const HEADER: &str =
    "+++\nid = \"broken\"\ntitle = \"Broken on purpose\"\norder = 99\n+++\n\nSome narration.\n\n";

/// A lesson with one good step, then `rest`.
fn lesson_with(rest: &str) -> String {
    format!(
        "{HEADER}```step\nid = \"one\"\ntitle = \"One\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\n```\n\nWords.\n\n```claims\nexclusion broken\n```\n\n{rest}"
    )
}

/// Writes a lesson file, runs `lesson check` on it, and returns the problem it reports at
/// `line` (notes aside), with the whole standard error and output; the check must refuse the
/// file with exit status 2.
fn refused_at(dir: &crate::Scratch, name: &str, text: &str, line: u32) -> (String, String, String) {
    let path = dir.write(name, text);
    let out = lesson_check(&[&path]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{name}: exit status 2\n{stderr}"
    );
    let expected = format!("{}:{line}: ", path.display());
    let found = stderr
        .lines()
        .filter(|l| !l.contains(": note: "))
        .find(|l| l.trim_start_matches("lockstep: ").starts_with(&expected));
    let Some(found) = found else {
        panic!("{name}: no problem at {expected}\n{stderr}\n--- the file ---\n{text}");
    };
    (found.to_string(), stderr, stdout)
}

#[test]
fn lesson_check_reports_authoring_errors_with_file_line_and_reason() {
    let dir = crate::Scratch::new("lessons-check");
    // Each case: the file's text, the line of the problem, and words of its reason.
    let cases: Vec<(&str, String, u32, &str)> = vec![
        (
            "unknown-scenario.md",
            format!("{HEADER}```step\nid = \"a\"\ntitle = \"A\"\nscenario = \"99-nothing.toml\"\n```\n"),
            12,
            "unknown scenario \"99-nothing.toml\"",
        ),
        (
            "unknown-control.md",
            format!("{HEADER}```step\nid = \"a\"\ntitle = \"A\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing nowhere\"]\n```\n\n```claims\nexclusion broken\n```\n"),
            13,
            "control \"fencing nowhere\": there is no resource \"nowhere\"",
        ),
        (
            "contradicted.md",
            lesson_with("```step\nid = \"two\"\ntitle = \"Two\"\nscenario = \"05-fencing.toml\"\n```\n\n```claims\nexclusion holds\nlost_updates == 1\n```\n"),
            29,
            "the engine contradicts the claim \"exclusion holds\"",
        ),
        (
            "gate-met.md",
            lesson_with("```gate\nwhen = [\"exclusion broken\"]\nintended = [\"fencing accounts one_source all_accesses\"]\nprompt = \"p\"\n```\n"),
            22,
            "the gate is already met at the step's start",
        ),
        (
            "gate-unmet.md",
            lesson_with("```gate\nwhen = [\"integrity intact\"]\nintended = [\"fencing accounts one_source writes\"]\nprompt = \"p\"\n```\n"),
            23,
            "the gate's intended change does not meet \"integrity intact\"",
        ),
        (
            "start-passes.md",
            lesson_with("```exercise\nid = \"x\"\ntitle = \"X\"\ngoal = \"g\"\nidea = \"i\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\nseeds = \"0..4\"\ncheck = [\"exclusion broken\", \"every class gets its fair share\", \"wait_cycle_count == 0\"]\nhints = [\"h\"]\nsolution = [\"fencing accounts one_source all_accesses\"]\n```\n"),
            30,
            "its start already passes the check in 4 seeds (0-3) (exclusion breaks; every client class",
        ),
        (
            "solution-fails.md",
            lesson_with("```exercise\nid = \"x\"\ntitle = \"X\"\ngoal = \"g\"\nidea = \"i\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\nseeds = \"0..4\"\ncheck = [\"integrity intact\", \"wait_cycle_count == 0\", \"every class gets its fair share\"]\nhints = [\"h\"]\nsolution = [\"fencing accounts one_source writes\"]\n```\n"),
            22,
            "its solution [fencing accounts one_source writes] fails the check \"integrity intact\"",
        ),
        (
            "misconception-silent.md",
            lesson_with("```exercise\nid = \"x\"\ntitle = \"X\"\ngoal = \"g\"\nidea = \"i\"\nscenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\nseeds = \"0..4\"\ncheck = [\"integrity intact\", \"wait_cycle_count == 0\", \"every class gets its fair share\"]\nhints = [\"h\"]\nsolution = [\"fencing accounts one_source all_accesses\"]\n\n[[misconception]]\nwhen = [\"fencing(accounts) == any_source\"]\nexample = [\"fencing accounts one_source writes\"]\nhint = \"h\"\n```\n"),
            34,
            "the misconception's example does not trigger its hint",
        ),
        (
            "bad-claim.md",
            lesson_with("```step\nid = \"two\"\ntitle = \"Two\"\nscenario = \"05-fencing.toml\"\n```\n\n```claims\nlost_updatez > 0\n```\n"),
            29,
            "unknown figure \"lost_updatez\"",
        ),
        (
            "bad-toml.md",
            format!("{HEADER}```step\nid = \"a\"\ntitle = \"A\"\nscenario = 05\n```\n"),
            12,
            "in the step block",
        ),
    ];
    for (name, text, line, reason) in &cases {
        let (found, stderr, stdout) = refused_at(&dir, name, text, *line);
        assert!(found.contains(reason), "{name}: {found:?} says {reason:?}");
        if *name == "start-passes.md" {
            // Only the cause: nothing that merely follows from it.
            let problems = stderr.lines().filter(|l| !l.contains(": note: ")).count();
            assert_eq!(problems, 1, "{name}: one problem\n{stderr}");
        }
        assert_eq!(
            stdout.lines().count(),
            1,
            "{name}: one line per lesson: {stdout}"
        );
    }
    // Good and broken lessons together: one line each, exit status 2.
    let good = lessons_dir().join("01-two-orders.md");
    let bad = dir.0.join("contradicted.md");
    let out = lesson_check(&[&good, &bad]);
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(stdout
        .lines()
        .next()
        .unwrap()
        .contains(": ok: lesson \"two-orders\""));
}

#[test]
fn lesson_check_passes_the_shipped_lessons_and_follows_the_command_conventions() {
    let files: Vec<PathBuf> = lesson_files()
        .iter()
        .map(|(name, _)| lessons_dir().join(name))
        .collect();
    let paths: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    let out = lesson_check(&paths);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), files.len());
    assert!(
        stdout
            .lines()
            .all(|l| l.contains(": ok: lesson ") && !l.contains("warning")),
        "{stdout}"
    );
    // No shipped exercise passes an answer by luck: none draws a warning.
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(": warning: "))
        .collect();
    assert!(warned.is_empty(), "{}", warned.join("\n"));
    for args in [
        vec!["lesson"],
        vec!["lesson", "check"],
        vec!["lesson", "run", "x.md"],
        vec!["lesson", "check", "x.md", "--json"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    let missing = lesson_check(&[Path::new("/nonexistent/lesson.md")]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/lesson.md"));
}

/// docs/lessons.md shows a complete lesson and a completion code; both must be real.
#[test]
fn the_documented_example_lesson_and_code_are_real() {
    let page =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/lessons.md"))
            .expect("docs/lessons.md exists");
    let start = page.find("````markdown\n").expect("the example") + "````markdown\n".len();
    let end = start + page[start..].find("\n````\n").expect("its end") + 1;
    let example = lesson::parse(&page[start..end]).unwrap_or_else(|e| panic!("{e:?}"));
    let checked = lesson::check(&example);
    assert!(checked.errors.is_empty(), "{:?}", checked.errors);
    assert_eq!(example.steps.len(), 1);
    assert_eq!(example.exercises.len(), 1);
    assert!(example.exercises[0]
        .narration
        .markdown
        .starts_with("Anything after"));
    let code = page
        .lines()
        .find(|l| l.starts_with("LS2."))
        .expect("a completion code");
    let lessons: Vec<Lesson> = parsed().into_iter().map(|(_, l)| l).collect();
    code::verify(&lessons, code).unwrap_or_else(|e| panic!("{code}: {e}"));
    // It is the code the app gives Alice Martin for lesson 5's exercise, as written now.
    assert_eq!(code, solved_code().1, "docs/lessons.md's completion code");
}

/// The broken lesson of docs/lessons.md gives exactly the problems the page shows.
#[test]
fn the_documented_authoring_errors_are_the_real_output() {
    let page =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/lessons.md"))
            .expect("docs/lessons.md exists");
    let second = page
        .match_indices("````markdown\n")
        .nth(1)
        .expect("the broken example")
        .0;
    let start = second + "````markdown\n".len();
    let end = start + page[start..].find("\n````\n").expect("its end") + 1;
    let dir = crate::Scratch::new("lessons-docs");
    dir.write("broken.md", &page[start..end]);
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["lesson", "check", "broken.md"])
        .current_dir(&dir.0)
        .output()
        .expect("the lockstep binary runs");
    assert_eq!(out.status.code(), Some(2));
    let real = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let documented: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("broken.md") || l.starts_with("lockstep: broken.md"))
        .collect();
    assert_eq!(documented.len(), 7, "{documented:?}");
    assert_eq!(real.lines().collect::<Vec<_>>(), documented);
}

/// A room's codes pasted at once: verified against the lessons, the same code twice and two
/// names with one answer flagged, counts per exercise, CSV that a spreadsheet reads as text;
/// and the same from the terminal with `lockstep lesson verify`, a facilitator's own lesson
/// included.
#[test]
fn a_roster_of_codes_is_verified_in_the_page_and_the_terminal() {
    use lockstep::lesson::roster;
    let (lessons, alice) = solved_code();
    let l = lessons.iter().find(|l| l.id == "fencing").unwrap();
    let x = l.exercise("two-sources-one-table").unwrap();
    let bob = x.completion_code("Bob", &l.id, &x.solution);
    let carol = x.completion_code("=Carol", &l.id, &x.misconceptions[0].example);
    let text = format!("Alice: {alice}\nBob: {bob}\nCarol: {carol}\nAlice again: {alice}\nLS2.garbage.0000000x LS2.QUJD.00000000\n");
    let rows = roster::verify(&lessons, &text, roster::PAGE_CODES_MAX);
    // A bound on the checks: codes past it are listed, not run.
    let bounded = roster::verify(&lessons, &text, 1);
    assert!(bounded[1].reason.starts_with("not checked"), "{bounded:?}");
    assert!(!bounded[1].verified);
    let summary: Vec<(&str, bool, &str)> = rows
        .iter()
        .map(|r| (r.name.as_str(), r.verified, r.reason.as_str()))
        .collect();
    assert_eq!(summary.len(), 6, "{summary:?}");
    assert_eq!(summary[0], ("Alice Martin", true, ""));
    assert_eq!(
        summary[1],
        ("Bob", true, "the same answer as Alice Martin (row 1)")
    );
    assert!(
        !summary[2].1 && summary[2].2.starts_with("the code's edits do not pass"),
        "{summary:?}"
    );
    assert!(
        summary[2].2.contains("the goal needs") && !summary[2].2.contains("=="),
        "said in words, not the check's syntax: {}",
        summary[2].2
    );
    assert_eq!(
        summary[3],
        ("Alice Martin", false, "the same code as row 1")
    );
    assert!(
        !summary[4].1 && summary[4].2.starts_with("cut short"),
        "a code cut short is a refused row: {summary:?}"
    );
    assert!(
        !summary[5].1 && summary[5].2.contains("checksum"),
        "{summary:?}"
    );
    let counts = roster::counts(&rows);
    assert_eq!((counts[0].verified, counts[0].refused), (2, 2));
    let csv = roster::csv(&rows);
    assert!(
        csv.starts_with("name,lesson,exercise,result,reason,code\n"),
        "{csv}"
    );
    assert!(
        csv.contains("\n'=Carol,fencing,"),
        "a formula is written as text: {csv}"
    );
    let table = roster::table(&rows);
    assert!(
        table.contains("fencing / two-sources-one-table: 2 verified, 2 refused"),
        "{table}"
    );

    // The terminal: a custom lesson (a shipped one under another id) and the codes on stdin.
    let dir = std::env::temp_dir().join(format!("lockstep-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let custom = dir.join("my-fencing.md");
    std::fs::write(
        &custom,
        lockstep::lesson::builtin::ALL[4]
            .text
            .replace("id = \"fencing\"", "id = \"my-fencing\""),
    )
    .unwrap();
    let mine = x.completion_code("Dana", "my-fencing", &x.solution);
    let run = |input: String, extra: &[&str]| {
        use std::io::Write as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(["lesson", "verify", "--lesson", custom.to_str().unwrap()])
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let ok = run(format!("{mine}\n{bob}\n"), &[]);
    let stdout = String::from_utf8(ok.stdout).unwrap();
    assert_eq!(ok.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("Dana")
            && stdout.contains("my-fencing / two-sources-one-table: 1 verified, 0 refused"),
        "{stdout}"
    );
    let refused = run(text.clone(), &["--csv"]);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(String::from_utf8(refused.stdout).unwrap(), csv);
    let none = run("nothing here".into(), &[]);
    assert_eq!(none.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// A room's eleven codes, one of them cut at 60 characters by a chat app and one that is not a
/// code at all: eleven rows, the two refused under the names they were pasted with and showing
/// what was pasted, and `lockstep lesson verify` exits 1.
#[test]
fn a_code_cut_short_is_a_refused_row_under_its_pasted_name() {
    use lockstep::lesson::roster;
    let (lessons, _) = solved_code();
    let l = lessons.iter().find(|l| l.id == "fencing").unwrap();
    let x = l.exercise("two-sources-one-table").unwrap();
    let mut text = String::new();
    for k in 0..10 {
        let code = x.completion_code(&format!("Person {k}"), &l.id, &x.solution);
        let code = if k == 4 { code[..60].to_string() } else { code };
        text.push_str(&format!("Person {k}: {code}\n"));
    }
    text.push_str("- Eve said LS2.bm90IGEgY29kZQ (sorry)\nno code here: LS2 LS2. LS2.ab LSD.x\n");
    let found = lockstep::lesson::code::find_pasted(&text);
    assert_eq!(found.len(), 11, "{found:?}");
    assert_eq!(found[4].pasted_name, "Person 4");
    assert!(
        !found[4].whole && found[4].code.len() == 60,
        "{:?}",
        found[4]
    );
    assert_eq!(found[10].pasted_name, "Eve said");
    let rows = roster::verify(&lessons, &text, roster::PAGE_CODES_MAX);
    assert_eq!(rows.len(), 11, "a row a code: {rows:?}");
    assert_eq!(rows.iter().filter(|r| r.verified).count(), 9);
    let cut = &rows[4];
    assert_eq!(
        (cut.name.as_str(), cut.verified, cut.code.len()),
        ("Person 4", false, 60)
    );
    assert!(cut.reason.starts_with("cut short"), "{cut:?}");
    assert_eq!(rows[10].name, "Eve said", "{:?}", rows[10]);
    let table = roster::table(&rows);
    assert!(!table.contains("(no name)"), "{table}");
    assert!(
        table.contains(&format!("({}…)", &cut.code[..24])),
        "{table}"
    );
    let counts = roster::counts(&rows);
    let refused: usize = counts.iter().map(|c| c.refused).sum();
    assert_eq!(refused, 2, "{counts:?}");
    // The terminal says the same, and fails.
    let dir = std::env::temp_dir().join(format!("lockstep-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let codes = dir.join("codes.txt");
    std::fs::write(&codes, &text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["lesson", "verify", codes.to_str().unwrap()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("9 verified, 0 refused") && said.contains("Person 4"),
        "{said}"
    );
    assert!(
        said.contains("unreadable codes: 0 verified, 2 refused"),
        "{said}"
    );
}

/// The recorded steps (on real etcd and ZooKeeper in lessons 1 and 5, on real Redis in lesson 9)
/// show shipped recordings made on the product their titles name. Their claims and cues hold in the
/// recording, judged afresh by the monitors, and the same claims hold in the simulated run of
/// the same scenario: that is what "the same" promises.
#[test]
fn the_real_service_steps_show_recordings_whose_claims_hold_there_and_in_the_simulation() {
    let mut recorded = BTreeSet::new();
    for (name, l) in parsed() {
        for step in &l.steps {
            let Some(r) = &step.recording else { continue };
            recorded.insert(format!("{}/{}", l.id, step.id));
            let title = step.title.as_str();
            let product = if title.contains("real etcd") {
                "etcd 3."
            } else if title.contains("real ZooKeeper") {
                "ZooKeeper 3."
            } else if title.contains("real Redis") {
                "Redis 7."
            } else {
                panic!("{name}: a recorded step titled {title:?} names no product")
            };
            assert!(step.controls.is_empty() && step.gate.is_none() && step.sweep.is_none());
            for s in &r.run.source.services {
                assert!(s.product.starts_with(product), "{name}: {}", s.product);
            }
            assert_eq!(
                r.run.source.scenario, step.scenario,
                "{name}: the step's own scenario"
            );
            let verdict = lockstep::monitor::verdict(&*r.run);
            let (_, simulated) = check(&step.scenario, step.scenario.seed);
            for claim in &step.claims {
                assert!(claim.quantifier.is_none(), "{name}:{}", claim.line);
                for (run, v) in [("recording", &verdict), ("simulation", &simulated)] {
                    let result = claim.check(&step.scenario, v);
                    assert!(
                        result.holds,
                        "{name}:{}: \"{}\" does not hold in the {run}: {}",
                        claim.line, claim.text, result.actual
                    );
                }
            }
            let marks = lesson::cue_marks(&step.cues, &r.run.world, &r.run.events, &verdict);
            assert!(marks.iter().all(Option::is_some), "{name}: every cue shows");
        }
    }
    assert_eq!(
        recorded.into_iter().collect::<Vec<_>>(),
        [
            "fencing/real-etcd",
            "fencing/real-zookeeper",
            "majority/real-redis-pause",
            "majority/real-redis-restart",
            "two-orders/real-etcd",
            "two-orders/real-zookeeper"
        ]
    );
}

/// A step with a recording is refused where it would promise what a recording cannot give
/// (controls, a gate, a sweep, claims over seeds), where it names an unknown recording or one
/// of another scenario, and where the recording contradicts a claim or never shows a cue.
#[test]
fn lesson_check_refuses_what_a_recorded_step_cannot_keep() {
    let dir = crate::Scratch::new("lessons-recorded");
    let step = |extra: &str| {
        format!(
            "{HEADER}```step\nid = \"real\"\ntitle = \"Real\"\nscenario = \"01-two-services.toml\"\nrecording = \"01-two-services.json\"\n{extra}```\n\nWords.\n\n"
        )
    };
    let cases: Vec<(&str, String, u32, &str)> = vec![
        (
            "controls.md",
            step("controls = [\"protocol online\"]\n"),
            13,
            "a step that shows a recording offers no controls",
        ),
        (
            "gate.md",
            step("") + "```gate\nwhen = [\"exclusion holds\"]\nintended = [\"protocol online single:old\"]\nprompt = \"p\"\n```\n",
            18,
            "has no gate",
        ),
        (
            "sweep.md",
            step("") + "```sweep\nparam = \"services\"\nvalues = [1, 2]\nseeds = 2\ncaption = \"c\"\n```\n",
            18,
            "has no sweep",
        ),
        (
            "seeds.md",
            step("") + "```claims\nevery seed in 0..4: exclusion broken\n```\n",
            19,
            "its claims are about that run, not about seeds",
        ),
        (
            "unknown.md",
            format!("{HEADER}```step\nid = \"real\"\ntitle = \"Real\"\nscenario = \"01-two-services.toml\"\nrecording = \"99-nothing.json\"\n```\n"),
            13,
            "unknown recording \"99-nothing.json\"; the shipped recordings are 01-two-services.json",
        ),
        (
            "other-scenario.md",
            format!("{HEADER}```step\nid = \"real\"\ntitle = \"Real\"\nscenario = \"01-two-services.toml\"\nedits = [\"protocol online single:old\"]\nrecording = \"01-two-services.json\"\n```\n"),
            14,
            "played another scenario than the step sets up",
        ),
        (
            "contradicted.md",
            step("") + "```claims\nexclusion holds\n```\n",
            19,
            "the recording contradicts the claim \"exclusion holds\": exclusion broke",
        ),
        (
            "cue-never.md",
            step("") + "```cues\n[[cue]]\ntext = \"t\"\nwhen = { event = \"expired\" }\n```\n",
            19,
            "never happens in the step's run (its recording)",
        ),
    ];
    for (name, text, line, reason) in &cases {
        let (found, _, _) = refused_at(&dir, name, text, *line);
        assert!(found.contains(reason), "{name}: {found:?} says {reason:?}");
    }
    // The same step with a claim the recording bears out passes.
    let good = dir.write(
        "good.md",
        &(step("") + "```claims\nexclusion broken\nevery log consistent\n```\n"),
    );
    let out = lesson_check(&[&good]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every line of `lesson check`'s standard error that is a problem (notes aside), for files
/// checked together.
fn problems_of(paths: &[&Path]) -> (Option<i32>, Vec<String>) {
    let out = lesson_check(paths);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let problems = stderr
        .lines()
        .filter(|l| !l.contains(": note: "))
        .map(|l| l.trim_start_matches("lockstep: ").to_string())
        .collect();
    (out.status.code(), problems)
}

/// The line (from 1) of the first line of `text` that contains `needle`.
fn line_with(text: &str, needle: &str) -> u32 {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} in\n{text}")) as u32
        + 1
}

/// An exercise on the fencing scenario (`slow` with a second operation to do, so that it
/// completes one when its stale write is refused): with the guarded check, the answers are
/// fencing that checks every access, from either source (there is one service).
fn fencing_exercise(id: &str, idea: &str, check: &str) -> String {
    format!(
        "```exercise\nid = \"{id}\"\ntitle = \"X\"\ngoal = \"g\"\n{idea}scenario = \"05-fencing.toml\"\ncontrols = [\"fencing accounts\"]\nseeds = \"0..4\"\ncheck = [{check}]\nhints = [\"h\"]\nsolution = [\"fencing accounts one_source all_accesses\"]\n\n[set.clients.slow]\nmax_operations = 2\n```\n\n"
    )
}

const GUARDED: &str =
    "\"integrity intact\", \"wait_cycle_count == 0\", \"every class gets its fair share\"";

/// An exercise must say what it teaches and state that an answer neither deadlocks nor
/// starves; `lesson check` refuses one that does not, and one that accepts such an answer.
#[test]
fn lesson_check_refuses_an_exercise_without_an_idea_or_the_checks_against_deadlock_and_starvation()
{
    let dir = crate::Scratch::new("lessons-guards");
    let good = lesson_with(&fencing_exercise("x", "idea = \"i\"\n", GUARDED));
    let path = dir.write("good.md", &good);
    let (status, problems) = problems_of(&[&path]);
    assert_eq!((status, &problems), (Some(0), &Vec::new()));

    let no_idea = lesson_with(&fencing_exercise("x", "", GUARDED));
    let (found, _, _) = refused_at(
        &dir,
        "no-idea.md",
        &no_idea,
        line_with(&no_idea, "```exercise"),
    );
    assert!(
        found.contains("exercise \"x\" needs an idea: idea = \"...\""),
        "{found}"
    );

    for (name, check, lacks) in [
        ("neither.md", "\"integrity intact\"", "it states neither"),
        (
            "no-cycle.md",
            "\"integrity intact\", \"every class gets its fair share\"",
            "it lacks \"wait_cycle_count == 0\"",
        ),
        (
            "no-share.md",
            "\"integrity intact\", \"wait_cycle_count == 0\"",
            "it lacks \"every class gets its fair share\"",
        ),
    ] {
        let text = lesson_with(&fencing_exercise("x", "idea = \"i\"\n", check));
        let (found, _, _) = refused_at(&dir, name, &text, line_with(&text, "check = ["));
        assert!(
            found.contains(&format!(
                "its check must include \"wait_cycle_count == 0\" and \"every class gets its fair \
                 share\" ({lacks}), and its goal must say so"
            )),
            "{name}: {found}"
        );
    }

    // Without those checks, a check that only asks for work accepts an answer in which a
    // wait-for cycle forms, broken by the clients' timeouts: the solution and every such value
    // of the controls are refused.
    let backoff =
        "acquire_timeout_ms = 150\nmax_retries = 1000\nretry_backoff_ms = 60\njitter_ms = 40\n";
    let cyclic = lesson_with(&format!(
        "```exercise\nid = \"y\"\ntitle = \"Y\"\ngoal = \"g\"\nidea = \"i\"\nscenario = \"02-both-unordered.toml\"\ncontrols = [\"protocol east-app\", \"protocol west-app\"]\nseeds = \"0..4\"\ncheck = [\"operations.completed >= 1\"]\nhints = [\"h\"]\nsolution = [\"protocol west-app all_ordered\"]\n\n[set.clients.east-app]\n{backoff}\n[set.clients.west-app]\n{backoff}```\n"
    ));
    let path = dir.write("cyclic.md", &cyclic);
    let (status, problems) = problems_of(&[&path]);
    assert_eq!(status, Some(2));
    let at = format!("{}:{}: ", path.display(), line_with(&cyclic, "```exercise"));
    for said in [
        "exercise \"y\": its solution [protocol west-app all_ordered] passes the check, but with \
         seed 0, 1 wait-for cycle(s) formed: an answer that deadlocks or starves a class is no \
         answer",
        "exercise \"y\" accepts [protocol east-app all_unordered, protocol west-app all_ordered], \
         but with seed 0, 1 wait-for cycle(s) formed",
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(&at) && p.contains(said)),
            "{said}\n{problems:#?}"
        );
    }
}

/// No two exercises accept the same answer: of two files checked together, the later
/// exercise is refused, naming the other; of one file, the same.
#[test]
fn lesson_check_refuses_two_exercises_that_accept_the_same_answer() {
    let dir = crate::Scratch::new("lessons-course");
    let first = lesson_with(&fencing_exercise("x", "idea = \"i\"\n", GUARDED));
    let second = lesson_with(&fencing_exercise("z", "idea = \"j\"\n", GUARDED))
        .replace("id = \"broken\"", "id = \"other\"");
    let a = dir.write("a.md", &first);
    let b = dir.write("b.md", &second);
    // Each alone passes.
    for p in [&a, &b] {
        assert_eq!(problems_of(&[p]), (Some(0), Vec::new()));
    }
    let (status, problems) = problems_of(&[&a, &b]);
    assert_eq!(status, Some(2));
    let line = line_with(&second, "```exercise");
    assert_eq!(
        problems,
        vec![format!(
            "{}:{line}: exercise \"z\" accepts [fencing accounts any_source all_accesses], which \
             exercise \"x\" of lesson \"broken\" accepts too (and 1 more answer(s) besides): each \
             exercise needs an idea, and an answer, of its own",
            b.display()
        )],
    );
    let out = lesson_check(&[&a, &b]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .contains(": ok: lesson \"broken\"")
            && stdout
                .lines()
                .nth(1)
                .unwrap()
                .ends_with("b.md: 1 problem(s)"),
        "{stdout}"
    );
    // Two exercises of one lesson.
    let both = format!(
        "{first}{}",
        fencing_exercise("z", "idea = \"j\"\n", GUARDED)
    );
    let c = dir.write("c.md", &both);
    let (status, problems) = problems_of(&[&c]);
    assert_eq!(status, Some(2));
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(
        problems[0].contains("exercise \"z\" accepts")
            && problems[0].contains("which exercise \"x\" of lesson \"broken\""),
        "{problems:#?}"
    );
}

/// The target of the shipped course: no two of its exercises accept the same answer, so each
/// practises an idea of its own.
#[test]
fn no_two_exercises_of_the_shipped_course_accept_the_same_answer() {
    let lessons = lesson::builtin::lessons();
    assert_eq!(
        lessons.len(),
        lesson::builtin::ALL.len(),
        "every lesson parses"
    );
    let found: Vec<String> = lesson::check_course(&lessons)
        .into_iter()
        .map(|(k, e)| format!("{}: {e}", lessons[k].id))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    for l in &lessons {
        for x in &l.exercises {
            assert!(!x.idea.is_empty(), "{}/{} states its idea", l.id, x.id);
        }
    }
}

/// `every class gets its fair share`: each class's clients complete, per client, at least a
/// quarter of what the run's clients complete on average, in whole numbers.
#[test]
fn the_fair_share_claim_weighs_each_class_by_its_clients() {
    use lockstep::lesson::claim::Test;
    let mut s = lockstep::builtin::find("02-both-unordered.toml")
        .map(|b| lockstep::scenario::Scenario::from_toml_str(b.toml()).expect("valid"))
        .expect("shipped");
    s.clients[0].count = 3; // east-app: three clients; west-app: one.
    let (_, verdict) = lesson::run_scenario(&s, 0).expect("runs");
    let claim = lesson::Claim::parse("every class gets its fair share", 1).expect("reads");
    assert_eq!(claim.test, Test::FairShare);
    assert!(claim
        .words()
        .starts_with("every client class gets a fair share of the work"));
    let judged = |east: u64, west: u64| {
        let mut v = verdict.clone();
        for w in &mut v.class_work {
            w.completed = if w.class == "east-app" { east } else { west };
        }
        claim.check(&s, &v)
    };
    // 31 operations by 4 clients: west-app's one client needs 31 / 16, so 2.
    let short = judged(30, 1);
    assert!(!short.holds);
    assert_eq!(
        short.actual,
        "class west-app completed 1 operation, where a fair share is at least 2"
    );
    assert!(judged(30, 2).holds, "32 / 16 is exactly a fair share");
    // East's three clients need three quarters of the mean: 3 × 13 / 16, so 3.
    assert_eq!(
        judged(2, 11).actual,
        "class east-app completed 2 operations, where a fair share is at least 3"
    );
    assert!(judged(3, 11).holds);
    assert_eq!(
        judged(0, 0).actual,
        "no class completed an operation, so none got a fair share"
    );
    assert!(!judged(0, 0).holds);
}

/// A step's narration is read before its prediction: narration that says the right answer
/// draws a note at its line; narration that only says what to watch does not.
#[test]
fn narration_that_gives_the_predictions_answer_away_is_noted() {
    let text = |narration: &str| {
        format!(
            "{HEADER}```step\nid = \"one\"\ntitle = \"One\"\nscenario = \"05-fencing.toml\"\n```\n\n{narration}\n\n```predict\nquestion = \"Will an update be lost?\"\n\n[[choice]]\ntext = \"Yes, one update is lost\"\nclaim = \"lost_updates > 0\"\n\n[[choice]]\ntext = \"No, both updates count\"\nclaim = \"lost_updates == 0\"\n```\n"
        )
    };
    let notes = |narration: &str| -> Vec<(u32, String)> {
        let l = lesson::parse(&text(narration)).unwrap_or_else(|e| panic!("{e:?}"));
        let checked = lesson::check(&l);
        assert!(checked.errors.is_empty(), "{:?}", checked.errors);
        checked
            .notes
            .into_iter()
            .filter(|n| n.message.contains("gives its prediction's answer away"))
            .map(|n| (n.line, n.message))
            .collect()
    };
    let line = line_with(&text("NARRATION"), "NARRATION");
    for (telling, said) in [
        (
            "`slow` stalls, then writes: an update is lost for good.",
            "update is lost",
        ),
        (
            "Watch the `accounts` lane for the **lost update**.",
            "lost update",
        ),
        ("`slow` wakes, and one update is lost.", "one update lost"),
    ] {
        assert_eq!(
            notes(telling),
            vec![(
                line,
                format!(
                    "the step's narration gives its prediction's answer away: it says \"{said}\", \
                     before the learner chooses \"Yes, one update is lost\"; say what to watch, \
                     not what happens"
                )
            )],
            "{telling}"
        );
    }
    for neutral in [
        "`slow` takes the lock and stalls. Watch the two writes on the `accounts` lane.",
        "Does any update get lost? Watch the balance.",
        "Nothing here says whether an update is lost: watch.",
    ] {
        assert_eq!(notes(neutral), Vec::new(), "{neutral}");
    }
}

/// Every event kind docs/lessons.md lists for cues and highlights is one a pattern may name,
/// and no other: the majority protocol's events and a forgotten grant included.
#[test]
fn the_event_kinds_a_pattern_may_name_are_the_ones_the_format_lists() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lessons.md"))
            .unwrap();
    let from = page
        .find("- trace events:")
        .expect("the list of trace events");
    let to = from + page[from..].find("- derived by the verdict").unwrap();
    let listed: BTreeSet<&str> = page[from..to].split('`').skip(1).step_by(2).collect();
    let known: BTreeSet<&str> = lesson::cue::TRACE_KINDS.iter().copied().collect();
    assert_eq!(listed, known);
    for kind in [
        "restarted_empty",
        "quorum_reached",
        "quorum_missed",
        "validity_spent",
        "forgotten",
    ] {
        assert!(known.contains(kind), "{kind}");
    }
}

/// The folder of lesson files whose `lesson check` output is known: each `NAME.md` beside its
/// `NAME.out`.
fn fixture_lessons_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lessons")
}

/// `lockstep lesson check NAME.md` run alone in the fixtures' folder: its standard output, then
/// its standard error, as a terminal shows them, and its exit status.
fn checked_fixture(name: &str) -> (String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["lesson", "check", name])
        .current_dir(fixture_lessons_dir())
        .output()
        .expect("the lockstep binary runs");
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (shown, out.status.code())
}

/// Every lesson of tests/fixtures/lessons, checked alone, prints exactly the output written
/// beside it, and exits with status 2 exactly when that output counts a problem: a warning
/// is printed and counted, yet the lesson passes.
#[test]
fn each_fixture_lesson_checks_to_the_output_beside_it() {
    let mut names: Vec<String> = std::fs::read_dir(fixture_lessons_dir())
        .expect("the fixtures' folder exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .to_string()
        })
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{names:?}");
    for name in &names {
        let expected_path = fixture_lessons_dir().join(name.replace(".md", ".out"));
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let (shown, status) = checked_fixture(name);
        assert_eq!(shown, expected, "{name}: the output of lesson check");
        let problems = shown
            .lines()
            .next()
            .is_some_and(|l| l.contains(" problem(s)"));
        assert_eq!(status, Some(if problems { 2 } else { 0 }), "{name}");
    }
}

/// An exercise that accepts "lock in both services, in any order" because none of its seeds
/// happens to deadlock is warned about, naming the answer, the seeds it tried and the seed that
/// breaks it; with that seed added, the warning is gone and the check refuses the answer with
/// the usual note. The shipped lessons draw no warning.
#[test]
fn an_answer_passed_by_lucky_seeds_is_warned_about_until_its_breaking_seed_is_added() {
    let any_order = "[protocol east-app all_unordered, protocol west-app all_unordered]";
    let (lucky, status) = checked_fixture("lucky-seeds.md");
    assert_eq!(status, Some(0), "a warning is no problem\n{lucky}");
    let text = std::fs::read_to_string(fixture_lessons_dir().join("lucky-seeds.md")).unwrap();
    let at = format!(
        "lucky-seeds.md:{}: warning: ",
        line_with(&text, "```exercise")
    );
    let warnings: Vec<&str> = lucky
        .lines()
        .filter(|l| l.contains(": warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{lucky}");
    let w = warnings[0];
    for said in [
        at.as_str(),
        any_order,
        "in 6 seeds (61-66)",
        "with seed 67 the check \"wait_cycle_count == 0\" fails (1 wait-for cycle formed)",
        "add seed 67 to its seeds (seeds = \"61..68\")",
    ] {
        assert!(w.contains(said), "{said:?} in {w}");
    }
    assert!(
        lucky.lines().next().unwrap().ends_with(", 1 warning(s)"),
        "{lucky}"
    );
    // docs/lessons.md shows this warning as it is printed.
    let page =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/lessons.md"))
            .unwrap();
    assert!(page.lines().any(|l| l == w), "docs/lessons.md shows {w}");
    // The library says the same.
    let parsed = lesson::parse(&text).unwrap_or_else(|e| panic!("{e:?}"));
    let checked = lesson::check(&parsed);
    assert!(checked.errors.is_empty(), "{:?}", checked.errors);
    assert_eq!(checked.warnings.len(), 1, "{:?}", checked.warnings);
    assert!(checked.warnings[0].message.contains(any_order));

    // The seed it named, added: no warning, and the answer refused in seed 67.
    let caught =
        std::fs::read_to_string(fixture_lessons_dir().join("lucky-seeds-caught.md")).unwrap();
    assert!(caught.contains("seeds = \"61..68\""));
    let (shown, status) = checked_fixture("lucky-seeds-caught.md");
    assert_eq!(status, Some(0), "{shown}");
    assert!(!shown.contains("warning"), "{shown}");
    let refused = format!(
        "exercise \"one-ledger\" would accept {any_order} but for the conditions against \
         wait-for cycles and starvation: with seed 67,"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.contains(": note: ") && l.contains(&refused)),
        "{refused}\n{shown}"
    );
}

/// The claims of a check that `lesson check` judges again in more seeds are those that say a
/// run was safe, and those seeds are the next ones the exercise does not try, however close
/// to the last seed there is.
#[test]
fn more_seeds_judge_the_claims_that_say_a_run_was_safe() {
    for (text, safety) in [
        ("exclusion holds", true),
        ("integrity intact", true),
        ("no deadlock", true),
        ("wait_cycle_count == 0", true),
        ("lost_updates <= 1", true),
        ("interleaved_writes < 1", true),
        ("livelock_count == 0", true),
        ("violation_count == 0", true),
        ("overlaps(east-app, west-app) == 0", true),
        ("exclusion broken", false),
        ("integrity corrupted", false),
        ("deadlock", false),
        ("violation_count > 0", false),
        ("lost_updates >= 1", false),
        ("rejected_writes == 0", false),
        ("grants(old) >= 1", false),
        ("every class gets its fair share", false),
        ("every class completes work", false),
        ("every seed in 0..4: exclusion holds", false),
    ] {
        let claim = lesson::Claim::parse(text, 1).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(claim.is_safety(), safety, "{text}");
    }
    assert_eq!(lesson::EXTRA_SEEDS, 32);
    let range: Vec<u64> = (0..8).collect();
    assert_eq!(lesson::extra_seeds(&range), (8..40).collect::<Vec<u64>>());
    let gaps = lesson::extra_seeds(&[12, 14, 13, 20]);
    assert_eq!(gaps[..8], [15, 16, 17, 18, 19, 21, 22, 23]);
    assert_eq!(gaps.len(), lesson::EXTRA_SEEDS);
    assert_eq!(lesson::extra_seeds(&[u64::MAX - 1]), [u64::MAX]);
}
