//! Each place of a shipped lesson (a step or an exercise) as the page first shows it while the
//! place's simulator comes over the network: written here, natively, as HTML when the course's
//! files are written (`course/LESSON.PLACE.html`), and put on the page as it is by
//! `static/lesson-preview.js`, which only decides whether to show it. The page's JavaScript
//! then renders nothing of a lesson, and nothing of the lesson format is read in two languages.
//!
//! A preview is the place's title, where it is, its narration and the picture of the run it
//! opens with ([`super::course::place_picture`]); a step that asks a prediction has no picture,
//! since its run is the answer. It offers no control: nothing on it acts on a run before the
//! simulator can answer. `course/previews.json` tells the page which places have a preview and
//! the storage keys it reads to know whether the live place would show a run of the learner's
//! own instead (then no preview is shown).

use std::sync::Arc;

use super::course::{
    place_id, place_picture, place_words, places, Course, Place, OPENED_KEY, PROGRESS_KEY,
};
use super::display::{theme_words, DISPLAY_KEY, THEMES};
use crate::lesson::narration::{escape, inline_html, plain, shown, to_html, Block, Inline};

/// The page header's tagline: the live header's (`web::header`) and the preview's.
pub const TAGLINE: &str = "Two lock services, each correct, do not make one lock.";

/// The views the page's header links to, in order: the address, the link's id and its words.
pub const VIEWS: [(&str, &str, &str); 3] = [
    ("#/lessons", "nav-lessons", "Lessons"),
    ("#/sandbox", "nav-sandbox", "Sandbox"),
    ("#/facilitator", "nav-facilitator", "Facilitator"),
];

/// The file name of a place's preview beside the course's files.
pub fn preview_name(lesson: &str, place: &str) -> String {
    format!("{lesson}.{place}.html")
}

/// The file that lists the places with a preview: see [`previews_index`].
pub const PREVIEWS_INDEX: &str = "previews.json";

/// Every place's preview of every lesson of `course`, by file name, and the index of them
/// ([`PREVIEWS_INDEX`]).
pub fn place_previews(course: &Arc<Course>) -> Vec<(String, String)> {
    let mut out = vec![(PREVIEWS_INDEX.to_string(), previews_index(course))];
    for (index, cl) in course.lessons.iter().enumerate() {
        for place in places(&cl.lesson) {
            out.push((
                preview_name(&cl.lesson.id, place_id(&cl.lesson, place)),
                place_preview(course, index, place),
            ));
        }
    }
    out
}

/// `previews.json`: each lesson's places in order (the first is what the lesson's own address
/// opens), and what the page reads of the learner's storage to know whether the live place
/// would show their own run: the keys, and the members of a lesson's progress that name the
/// places whose run is the learner's own (a step whose goal they met, an exercise they
/// changed: [`super::course::LessonProgress`]).
pub fn previews_index(course: &Arc<Course>) -> String {
    let lessons: serde_json::Map<String, serde_json::Value> = course
        .lessons
        .iter()
        .map(|cl| {
            let ids = places(&cl.lesson)
                .into_iter()
                .map(|p| serde_json::Value::from(place_id(&cl.lesson, p)))
                .collect();
            (cl.lesson.id.clone(), serde_json::Value::Array(ids))
        })
        .collect();
    let index = serde_json::json!({
        "lessons": lessons,
        "keys": { "progress": PROGRESS_KEY, "opened": OPENED_KEY, "display": DISPLAY_KEY },
        "ownRun": OWN_RUN,
    });
    format!("{index}\n")
}

/// The members of a lesson's saved progress that hold a run of the learner's own, by place.
pub const OWN_RUN: [&str; 2] = ["gate_edits", "exercise_edits"];

/// One place's preview: the page's header as the live view draws it (so that nothing moves when
/// the live view takes over), the place's text and its run's picture.
pub fn place_preview(course: &Arc<Course>, index: usize, place: Place) -> String {
    let cl = &course.lessons[index];
    let l = &cl.lesson;
    let rich = &cl.rich;
    let text = |t: &str| inline_html(&unlinked(&shown(rich, t)));
    let (title, k) = match place {
        Place::Step(k) => (&l.steps[k].title, k),
        Place::Exercise(k) => (&l.exercises[k].title, k),
    };
    let mut html = format!(
        "<div id=\"preview\" class=\"preview\" data-title=\"{} \u{b7} {} \u{b7} Lockstep\">\n",
        escape(&plain(rich, title)),
        escape(&plain(rich, &l.title)),
    );
    html.push_str(&header());
    html.push_str("<main class=\"lesson-page\">\n<section class=\"lesson-text\">\n");
    html.push_str(&format!(
        "<p class=\"crumbs\"><a href=\"#/lessons\">Lessons</a> \u{203a} <a href=\"#/lessons/{}\">{}</a></p>\n",
        escape(&l.id),
        text(&l.title)
    ));
    html.push_str(&format!(
        "<p class=\"where\">{}</p>\n<h2>{}</h2>\n<div class=\"preview-narration\">\n",
        escape(&place_words(l, place)),
        text(title)
    ));
    let first = k == 0 && (matches!(place, Place::Step(_)) || l.steps.is_empty());
    if first && !cl.intro.is_empty() {
        html.push_str(&format!(
            "<div class=\"intro\">{}</div>\n",
            narration_html(&cl.intro)
        ));
    }
    match place {
        Place::Exercise(k) => {
            // The goal and its narration; the checks, hints and the learner's name come live.
            html.push_str(&format!(
                "<section class=\"exercise\"><h3>Goal</h3><p class=\"goal\">{}</p><div class=\"narration\">{}</div></section>\n",
                text(&l.exercises[k].goal),
                narration_html(&cl.exercises[k])
            ));
        }
        Place::Step(k) => {
            let step = &l.steps[k];
            if !step.assumptions.is_empty() {
                let said: Vec<String> = step.assumptions.iter().map(|a| text(a)).collect();
                html.push_str(&format!(
                    "<p class=\"assumptions\"><strong>Assuming </strong>{}.</p>\n",
                    said.join("; ")
                ));
            }
            html.push_str(&format!(
                "<div class=\"narration\">{}</div>\n",
                narration_html(&cl.steps[k].narration)
            ));
            if let Some(p) = &step.prediction {
                html.push_str(&format!(
                    "<section class=\"predict\"><h3>Before you play it</h3><p>{}</p></section>\n",
                    text(&p.question)
                ));
            }
        }
    }
    html.push_str(
        "</div>\n</section>\n<section class=\"stage lesson-run\" aria-label=\"The run\">\n",
    );
    match place_picture(course, index, place) {
        Some(svg) => {
            html.push_str(&as_preview_picture(&svg));
            html.push_str("<p class=\"hint\">The run as the course drew it. Its controls, playback and details come with the simulator.</p>\n");
        }
        // A step that asks a prediction: its run is the answer, shown once the learner commits.
        None => html.push_str(
            "<p class=\"hint watched\">The run plays once you have answered the question beside it.</p>\n",
        ),
    }
    html.push_str("</section>\n</main>\n</div>\n");
    html
}

/// The page's header as `web::header` draws it on a lesson's page. The theme list and the
/// presenter switch take their room, unseen and out of reach, until the live header brings
/// them.
fn header() -> String {
    let mut html = format!(
        "<header class=\"top\"><h1>Lockstep</h1><p class=\"tagline\">{}</p>\n<nav class=\"views\" aria-label=\"Views\"><ul>",
        escape(TAGLINE)
    );
    for (href, _, label) in VIEWS {
        let current = if label == "Lessons" {
            " aria-current=\"page\""
        } else {
            ""
        };
        html.push_str(&format!("<li><a href=\"{href}\"{current}>{label}</a></li>"));
    }
    html.push_str("</ul></nav>\n<div class=\"display-controls\" aria-hidden=\"true\" inert><label>Theme</label><select>");
    for t in THEMES {
        html.push_str(&format!("<option>{}</option>", escape(theme_words(t))));
    }
    html.push_str("</select><button>Presenter mode</button></div></header>\n");
    html
}

/// The run's picture, sized by the page: its opening tag without the export's width and height
/// (which are for a file opened alone), each written as one ` name="value"` by `super::svg`.
fn as_preview_picture(svg: &str) -> String {
    let svg = &svg[svg.find("<svg").unwrap_or(0)..];
    let (open, rest) = svg.split_at(svg.find('>').unwrap_or(svg.len()));
    let kept: Vec<&str> = open
        .split(' ')
        .filter(|a| !a.starts_with("width=\"") && !a.starts_with("height=\""))
        .collect();
    let open = kept
        .join(" ")
        .replacen("<svg", "<svg class=\"preview-picture\"", 1);
    format!("{open}{rest}\n")
}

/// The preview has nothing to follow inside a text: a link is shown as its words.
fn unlinked(inlines: &[Inline]) -> Vec<Inline> {
    inlines
        .iter()
        .flat_map(|i| match i {
            Inline::Link { content, .. } => unlinked(content),
            Inline::Emphasis(x) => vec![Inline::Emphasis(unlinked(x))],
            Inline::Strong(x) => vec![Inline::Strong(unlinked(x))],
            other => vec![other.clone()],
        })
        .collect()
}

/// A narration as the preview shows it: its links as their words, and its headings two levels
/// down, under the place's own title, as the live view draws them.
fn narration_html(blocks: &[Block]) -> String {
    // Focusable, so that a long line of code can be scrolled from the keyboard.
    // With no line break between blocks, so that its words read as the live view's (a `>` in
    // the text is escaped: every one here ends a tag).
    to_html(&unlinked_blocks(blocks))
        .replace("<pre>", "<pre tabindex=\"0\">")
        .replace(">\n", ">")
}

fn unlinked_blocks(blocks: &[Block]) -> Vec<Block> {
    blocks
        .iter()
        .map(|b| match b {
            Block::Paragraph(x) => Block::Paragraph(unlinked(x)),
            Block::Heading { level, content } => Block::Heading {
                level: level.saturating_add(2).min(6),
                content: unlinked(content),
            },
            Block::List { start, items } => Block::List {
                start: *start,
                items: items.iter().map(|item| unlinked_blocks(item)).collect(),
            },
            Block::Quote(x) => Block::Quote(unlinked_blocks(x)),
            other => other.clone(),
        })
        .collect()
}
