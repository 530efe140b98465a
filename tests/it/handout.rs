//! `lockstep lesson handout`: the participants' handout of the lessons chosen, as a folder to
//! print (one page and the pictures it shows), read back as a reader of the printed page would:
//! the chosen lessons alone, every step's narration rendered and its run's picture, every link at
//! the room's address with its QR code, the first hint only when asked for and never an answer.

use std::path::Path;
use std::process::Output;

use lockstep::lesson::{self, narration, wire};
use lockstep::ui::course::{place_picture_name, place_pictures, Course};

use crate::{lockstep_cli as lockstep, root, stderr, stdout};

#[track_caller]
fn expect_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status\n--- stdout ---\n{}\n--- stderr ---\n{}",
        stdout(o),
        stderr(o)
    );
}

const FENCING: &str = "lessons/05-fencing.md";
const DRILL: &str = "docs/examples/ledger-drill.md";
const BASE: &str = "http://10.0.0.5:8000/";

/// A lesson as the page holds it: parsed, and through the compact form (its rendered texts).
fn lesson_of(path: &str) -> lockstep::ui::course::CourseLesson {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let parsed = lesson::parse(&text).unwrap();
    let loaded = wire::from_wire(wire::to_wire(&parsed)).unwrap();
    Course::new(vec![loaded], Vec::new()).lessons.remove(0)
}

/// The page's text as a reader sees it: its tags taken out and its entities read.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut tag: Option<String> = None;
    for c in html.chars() {
        match (&mut tag, c) {
            (None, '<') => tag = Some(String::new()),
            (Some(t), '>') => {
                // Text goes on across an inline element; a block's ends part words.
                let name = t.trim_start_matches('/');
                let name = name.split([' ', '/']).next().unwrap_or_default();
                if !["code", "em", "strong", "a", "span"].contains(&name) {
                    out.push(' ');
                }
                tag = None;
            }
            (Some(t), c) => t.push(c),
            (None, c) => out.push(c),
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every value of an attribute in the page's body, in order.
fn attributes(html: &str, name: &str) -> Vec<String> {
    let body = &html[html.find("<body>").expect("a body")..];
    let needle = format!(" {name}=\"");
    body.match_indices(&needle)
        .map(|(at, _)| {
            let rest = &body[at + needle.len()..];
            rest[..rest.find('"').unwrap()].replace("&amp;", "&")
        })
        .collect()
}

/// A text of a lesson as the handout shows it: its Markdown rendered, in plain words.
fn words(cl: &lockstep::ui::course::CourseLesson, text: &str) -> String {
    narration::plain(&cl.rich, text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_handout_holds_the_chosen_lessons_their_pictures_and_links_and_no_answer() {
    let scratch = crate::Scratch::new("handout-ok");
    let out = scratch.0.join("paper");
    let o = lockstep(&[
        "lesson",
        "handout",
        FENCING,
        DRILL,
        "--out",
        out.to_str().unwrap(),
        "--link-base",
        "http://10.0.0.5:8000",
    ]);
    expect_code(&o, 0);
    let said = stdout(&o);
    assert!(said.contains("handout of 2 lesson(s)"), "{said}");
    let html = std::fs::read_to_string(out.join("handout.html")).expect("the page");
    let text = text_of(&html);

    // The lessons chosen, and no other.
    assert_eq!(
        attributes(&html, "data-lesson"),
        ["fencing", "ledger-drill"],
        "the chosen lessons, in the course's order"
    );
    assert!(!text.contains("Two orders"), "a lesson nobody chose");

    // Markdown is rendered: code as code, never raw backticks.
    assert!(!html.contains('`'), "raw backticks in the page");
    assert!(html.contains("<code>slow</code>"), "code is shown as code");

    let lessons = [lesson_of(FENCING), lesson_of(DRILL)];
    let mut steps = 0;
    let mut expected_pictures = Vec::new();
    for cl in &lessons {
        let l = &cl.lesson;
        for s in &l.steps {
            steps += 1;
            assert!(
                text.contains(&words(cl, &s.title)),
                "{}: the step's title",
                s.id
            );
            let narration = cl.steps[l.steps.iter().position(|x| x.id == s.id).unwrap()]
                .narration
                .iter()
                .map(narration::block_text)
                .collect::<Vec<_>>()
                .join(" ");
            let first_words: Vec<&str> = narration.split_whitespace().take(8).collect();
            assert!(
                text.contains(&first_words.join(" ")),
                "{}: the narration, rendered: {first_words:?}",
                s.id
            );
            let link = format!("{BASE}#/lessons/{}/{}", l.id, s.id);
            assert!(
                attributes(&html, "href").contains(&link),
                "{}: its link {link}",
                s.id
            );
            if s.prediction.is_none() {
                expected_pictures.push(place_picture_name(&l.id, &s.id));
            }
        }
        for e in &l.exercises {
            assert!(text.contains(&words(cl, &e.goal)), "{}: the goal", e.id);
            for c in &e.controls {
                assert!(text.contains(&c.words()), "{}: the control {c}", e.id);
            }
            let link = format!("{BASE}#/lessons/{}/{}", l.id, e.id);
            assert!(
                attributes(&html, "href").contains(&link),
                "{}: its link",
                e.id
            );
            // No hint unless asked for.
            for h in &e.hints {
                assert!(!text.contains(&words(cl, h)), "{}: a hint: {h}", e.id);
            }
        }
        // Nothing only the key may say.
        for secret in crate::course::answers_of(l) {
            let secret = words(cl, &secret);
            assert!(
                !text.contains(&secret),
                "{}: the handout says {secret:?}",
                l.id
            );
        }
    }
    assert!(!text.contains("Solution"), "a solution on the handout");
    assert!(!text.contains("First hint"), "a hint nobody asked for");

    // Every link is at the room's address, and each has its QR code, which encodes it.
    let links = attributes(&html, "href");
    let exercises: usize = lessons.iter().map(|cl| cl.lesson.exercises.len()).sum();
    assert_eq!(links.len(), steps + exercises, "a link a step and exercise");
    for link in &links {
        assert!(link.starts_with(&format!("{BASE}#/lessons/")), "{link}");
        let label = format!("aria-label=\"QR code of {link}\"");
        let at = html
            .find(&label)
            .unwrap_or_else(|| panic!("no QR code of {link}"));
        let svg = &html[html[..at].rfind("<svg").unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let drawn = qrcode::QrCode::new(link.as_bytes())
            .unwrap()
            .render::<qrcode::render::svg::Color>()
            .min_dimensions(96, 96)
            .build();
        let path = |s: &str| {
            let d = &s[s.find(" d=\"").unwrap() + 4..];
            d[..d.find('"').unwrap()].to_string()
        };
        assert_eq!(path(svg), path(&drawn), "the QR code of {link}");
    }

    // The pictures: each step's run as the course draws it, beside the page, each shown.
    let mut shown = attributes(&html, "src");
    shown.sort();
    expected_pictures.sort();
    let expected: Vec<String> = expected_pictures
        .iter()
        .map(|n| format!("pictures/{n}"))
        .collect();
    assert_eq!(
        shown, expected,
        "every step's picture but where it asks a prediction"
    );
    assert_eq!(files_in(&out.join("pictures")), expected_pictures);
    assert_eq!(
        files_in(&out),
        ["handout.html", "pictures"],
        "the folder holds its own"
    );
    let course = std::sync::Arc::new(Course::new(
        lessons
            .iter()
            .map(|cl| {
                let text = std::fs::read_to_string(root().join(if cl.lesson.id == "fencing" {
                    FENCING
                } else {
                    DRILL
                }))
                .unwrap();
                wire::from_wire(wire::to_wire(&lesson::parse(&text).unwrap())).unwrap()
            })
            .collect(),
        Vec::new(),
    ));
    let drawn = place_pictures(&course);
    for name in &expected_pictures {
        let file = std::fs::read_to_string(out.join("pictures").join(name)).unwrap();
        let (_, svg) = drawn.iter().find(|(n, _)| n == name).unwrap();
        assert_eq!(&file, svg, "{name} is the course's picture of the step");
        assert!(file.starts_with("<svg"), "{name} is a picture");
    }
    // A shipped lesson's pictures are the very files the site shows.
    for name in expected_pictures
        .iter()
        .filter(|n| n.starts_with("fencing."))
    {
        assert_eq!(
            std::fs::read(out.join("pictures").join(name)).unwrap(),
            std::fs::read(root().join("static/course").join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn hints_add_each_exercises_first_hint_and_no_other() {
    let scratch = crate::Scratch::new("handout-hints");
    let out = scratch.0.join("paper");
    let o = lockstep(&[
        "lesson",
        "handout",
        FENCING,
        "--hints",
        "--out",
        out.to_str().unwrap(),
        "--link-base",
        BASE,
    ]);
    expect_code(&o, 0);
    let text = text_of(&std::fs::read_to_string(out.join("handout.html")).unwrap());
    let cl = lesson_of(FENCING);
    let e = &cl.lesson.exercises[0];
    assert!(e.hints.len() >= 2, "the exercise has later hints");
    assert!(
        text.contains(&format!("First hint: {}", words(&cl, &e.hints[0]))),
        "the first hint"
    );
    for h in &e.hints[1..] {
        assert!(!text.contains(&words(&cl, h)), "a later hint: {h}");
    }
    for secret in crate::course::answers_of(&cl.lesson) {
        assert!(!text.contains(&words(&cl, &secret)), "{secret:?}");
    }
}

#[test]
fn without_a_link_base_the_links_are_paths_without_qr_codes() {
    let scratch = crate::Scratch::new("handout-paths");
    let out = scratch.0.join("paper");
    let o = lockstep(&["lesson", "handout", DRILL, "--out", out.to_str().unwrap()]);
    expect_code(&o, 0);
    assert!(stdout(&o).contains("--link-base"), "{}", stdout(&o));
    let html = std::fs::read_to_string(out.join("handout.html")).unwrap();
    assert!(attributes(&html, "href").is_empty(), "no link to nowhere");
    assert!(!html.contains("QR code"), "no QR code of a path");
    assert!(html.contains("<code>#/lessons/ledger-drill/the-standoff</code>"));
}

#[test]
fn bad_input_is_refused_with_its_place_and_nothing_is_written() {
    let scratch = crate::Scratch::new("handout-refused");
    let out = scratch.0.join("paper");
    let dest = out.to_str().unwrap();
    let broken = scratch.write(
        "broken.md",
        &std::fs::read_to_string(root().join(DRILL))
            .unwrap()
            .replace(
                "scenario = \"02-both-unordered.toml\"",
                "scenario = \"nope.toml\"",
            ),
    );
    let broken = broken.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![FENCING, "lessons/no-such-lesson.md", "--out", dest],
            "lessons/no-such-lesson.md: ".into(),
        ),
        (vec![broken, "--out", dest], format!("{broken}:")),
        (
            vec![FENCING, "--out", dest, "--link-base", "10.0.0.5:8000"],
            "--link-base: \"10.0.0.5:8000\" is not a web address".into(),
        ),
        (vec![FENCING, DRILL, FENCING, "--out", dest], "also".into()),
        (vec![FENCING], "--out DIR is required".into()),
        (vec!["--out", dest], "no lesson FILE given".into()),
        (
            vec![FENCING, "--out", dest, "--solutions"],
            "unknown option --solutions".into(),
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["lesson", "handout"];
        all.extend(&args);
        let o = lockstep(&all);
        expect_code(&o, 2);
        let err = stderr(&o);
        assert!(err.starts_with("lockstep: "), "{args:?}: {err}");
        assert!(err.contains(&expected), "{args:?}: {expected:?} in\n{err}");
        assert!(!out.exists(), "{args:?}: something was written");
    }
    // The broken lesson's error is at its line.
    let o = lockstep(&["lesson", "handout", broken, "--out", dest]);
    let line = stderr(&o)
        .lines()
        .find(|l| l.contains("nope.toml"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.starts_with(&format!("{broken}:"))
            && line[broken.len() + 1..].starts_with(|c: char| c.is_ascii_digit()),
        "located: {line}"
    );
    // A folder that holds something is never written into.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = lockstep(&["lesson", "handout", FENCING, "--out", dest]);
    expect_code(&o, 2);
    assert!(stderr(&o).contains("is not empty"), "{}", stderr(&o));
    assert_eq!(files_in(&out), ["notes.txt"]);
}
