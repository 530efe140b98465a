//! `lockstep lesson handout FILE... --out DIR [--link-base URL] [--hints]`: the participants'
//! handout of the chosen lessons, to print: one HTML page and the pictures it shows, in a
//! folder of their own. What the handout carries is the facilitator's view's
//! ([`lockstep::ui::print::handout`]); this writes it as a page, draws the pictures of the
//! steps' runs as the course draws its own ([`lockstep::ui::course::place_picture`]) and a QR
//! code of each link. Every lesson is checked first as `lesson check` checks it, and nothing
//! is written unless all pass.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use lockstep::lesson::narration::{escape, inline_html, to_html, Inline};
use lockstep::lesson::wire;
use lockstep::ui::course::{place_picture, Course, Place};
use lockstep::ui::print::{self, Handout, HandoutExercise, HandoutStep, Pictures};

const USAGE: &str =
    "usage:\n  lockstep lesson handout FILE... --out DIR [--link-base URL] [--hints]\n      \
    Write the participants' handout of the lesson FILEs to print: DIR/handout.html and the\n      \
    pictures it shows; --link-base is the room's address, --hints adds each exercise's first hint.";

/// The page's name in the folder.
pub const PAGE: &str = "handout.html";
/// The folder of pictures beside it.
pub const PICTURES: &str = "pictures";

pub fn lesson_handout(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let mut files: Vec<&str> = Vec::new();
    let mut dest: Option<&str> = None;
    let mut base: Option<String> = None;
    let mut hints = false;
    let mut i = 0;
    while i < args.len() {
        let value = |i: usize| {
            args.get(i + 1)
                .map(String::as_str)
                .ok_or_else(|| format!("{} needs a value\n{USAGE}", args[i]))
        };
        match args[i].as_str() {
            "--out" => {
                dest = Some(value(i)?);
                i += 1;
            }
            "--link-base" => {
                base = Some(print::link_base(value(i)?).map_err(|e| format!("--link-base: {e}"))?);
                i += 1;
            }
            "--hints" => hints = true,
            a if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            a => files.push(a),
        }
        i += 1;
    }
    let dest = dest.ok_or_else(|| format!("--out DIR is required\n{USAGE}"))?;
    if files.is_empty() {
        return Err(format!("no lesson FILE given\n{USAGE}"));
    }
    if files.len() > print::CHOSEN_MAX {
        return Err(format!(
            "{} lesson files; a handout holds at most {}",
            files.len(),
            print::CHOSEN_MAX
        ));
    }

    // Every lesson is read and checked before anything is written.
    let mut lessons: Vec<(&str, lockstep::lesson::Lesson)> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for path in &files {
        let text = match super::read_text(path, lockstep::lesson::LESSON_BYTES_MAX) {
            Ok(t) => t,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let lesson = match lockstep::lesson::parse(&text) {
            Ok(l) => l,
            Err(errors) => {
                problems.extend(
                    errors
                        .iter()
                        .map(|e| format!("{path}:{}: {}", e.line, e.message)),
                );
                continue;
            }
        };
        problems.extend(
            lockstep::lesson::check(&lesson)
                .errors
                .iter()
                .map(|e| format!("{path}:{}: {}", e.line, e.message)),
        );
        if let Some((other, _)) = lessons.iter().find(|(_, l)| l.id == lesson.id) {
            problems.push(format!(
                "{path}: the lesson id \"{}\" is also {other}'s; each lesson of a handout needs its own id",
                lesson.id
            ));
        }
        lessons.push((path, lesson));
    }
    if !problems.is_empty() {
        return Err(format!(
            "nothing was written: {} problem(s)\n{}",
            problems.len(),
            problems.join("\n")
        ));
    }

    let dest = PathBuf::from(dest);
    if dest.exists() {
        let empty = std::fs::read_dir(&dest)
            .map_err(|e| format!("{}: {e}", dest.display()))?
            .next()
            .is_none();
        if !empty {
            return Err(format!(
                "{} exists and is not empty; name a new folder, so that nothing is overwritten",
                dest.display()
            ));
        }
    }

    // The lessons as the page holds them, through the compact form: the same rendered texts.
    let ids: Vec<String> = lessons.iter().map(|(_, l)| l.id.clone()).collect();
    let loaded = lessons
        .iter()
        .map(|(path, l)| wire::from_wire(wire::to_wire(l)).map_err(|e| format!("{path}: {e}")))
        .collect::<Result<Vec<_>, String>>()?;
    let course = Arc::new(Course::of(Vec::new(), loaded, Vec::new()));
    let sheet = print::handout(
        &course.lessons,
        &ids,
        hints,
        base.as_deref().unwrap_or_default(),
        Pictures::Every,
    );

    let folder = dest.join(PICTURES);
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let mut pictures = 0;
    for l in &sheet.lessons {
        let index = course.index(&l.id).unwrap_or_default();
        for s in &l.steps {
            let Some(name) = &s.picture else { continue };
            let svg = place_picture(&course, index, Place::Step(s.number - 1))
                .ok_or_else(|| format!("lesson \"{}\": no picture of step \"{}\"", l.id, s.id))?;
            write(&folder.join(name), &svg)?;
            pictures += 1;
        }
    }
    let page = dest.join(PAGE);
    write(&page, &page_html(&sheet, base.is_some()))?;

    let steps: usize = sheet.lessons.iter().map(|l| l.steps.len()).sum();
    let exercises: usize = sheet.lessons.iter().map(|l| l.exercises.len()).sum();
    let _ = writeln!(
        out,
        "wrote the handout of {} lesson(s), {steps} step(s) with {pictures} picture(s) and \
         {exercises} exercise(s){}, to {}",
        sheet.lessons.len(),
        if hints { " with their first hints" } else { "" },
        page.display()
    );
    if base.is_none() {
        let _ = writeln!(
            out,
            "no --link-base: each link is the site's path alone, without a QR code; give the \
             room's address with --link-base URL"
        );
    }
    let _ = writeln!(out, "open it in a browser and print it");
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A link as the handout prints it: the address and its QR code, or the path alone when no
/// site's address was given.
fn link_html(link: &str, whole: bool) -> String {
    if !whole {
        return format!(
            "<p class=\"link\">Path on the site: <code>{}</code></p>\n",
            escape(link)
        );
    }
    let qr = qrcode::QrCode::new(link.as_bytes())
        .map(|code| {
            code.render::<qrcode::render::svg::Color>()
                .min_dimensions(96, 96)
                .quiet_zone(true)
                .build()
        })
        .ok()
        .and_then(|svg| {
            let start = svg.find("<svg ")?;
            Some(svg[start..].replacen(
                "<svg ",
                &format!(
                    "<svg class=\"qr\" role=\"img\" aria-label=\"QR code of {}\" ",
                    escape(link)
                ),
                1,
            ))
        })
        .unwrap_or_default();
    format!(
        "<div class=\"link\">{qr}<p><a href=\"{0}\">{0}</a></p></div>\n",
        escape(link)
    )
}

fn plain(inlines: &[Inline]) -> String {
    let mut out = String::new();
    for i in inlines {
        match i {
            Inline::Text(t) | Inline::Code(t) => out.push_str(t),
            Inline::Emphasis(x) | Inline::Strong(x) | Inline::Link { content: x, .. } => {
                out.push_str(&plain(x))
            }
            Inline::LineBreak => out.push(' '),
        }
    }
    out
}

fn step_html(s: &HandoutStep, whole: bool, body: &mut String) {
    let _ = write!(
        body,
        "<article class=\"step\" data-step=\"{}\">\n<h3>Step {}: {}</h3>\n{}",
        escape(&s.id),
        s.number,
        inline_html(&s.title),
        link_html(&s.link, whole)
    );
    let _ = write!(
        body,
        "<div class=\"narration\">\n{}</div>\n",
        to_html(&s.narration)
    );
    if let Some(name) = &s.picture {
        let _ = writeln!(
            body,
            "<figure><img src=\"{PICTURES}/{}\" alt=\"The run of the step “{}” as it opens: its \
             lanes, its events and its verdict.\"></figure>",
            escape(name),
            escape(&plain(&s.title))
        );
    }
    if let Some((question, choices)) = &s.question {
        let _ = write!(
            body,
            "<div class=\"question\">\n<p><strong>Before it runs:</strong> {}</p>\n<ul class=\"choices\">\n",
            inline_html(question)
        );
        for c in choices {
            let _ = writeln!(body, "<li>{}</li>", inline_html(c));
        }
        let _ = writeln!(
            body,
            "</ul>\n<div class=\"write\" aria-label=\"Room to write\"></div>\n</div>"
        );
    }
    if let Some(task) = &s.task {
        let _ = writeln!(
            body,
            "<div class=\"task\">\n<p><strong>Your turn:</strong> {}</p>\n\
             <div class=\"write\" aria-label=\"Room to write\"></div>\n</div>",
            inline_html(task)
        );
    }
    body.push_str("</article>\n");
}

fn exercise_html(e: &HandoutExercise, whole: bool, body: &mut String) {
    let _ = write!(
        body,
        "<article class=\"exercise\" data-exercise=\"{}\">\n<h3>Exercise: {}</h3>\n{}",
        escape(&e.id),
        inline_html(&e.title),
        link_html(&e.link, whole)
    );
    let _ = write!(
        body,
        "<div class=\"narration\">\n{}</div>\n",
        to_html(&e.narration)
    );
    let _ = writeln!(
        body,
        "<p class=\"goal\"><strong>Goal:</strong> {}</p>\n\
         <p class=\"controls\"><strong>Controls:</strong> {}; checked on {}.</p>",
        inline_html(&e.goal),
        escape(&e.controls.join(", ")),
        escape(&e.seeds)
    );
    if let Some(h) = &e.hint {
        let _ = writeln!(
            body,
            "<p class=\"hint\"><strong>First hint:</strong> {}</p>",
            inline_html(h)
        );
    }
    let _ = writeln!(
        body,
        "<div class=\"write\" aria-label=\"Room to write\"></div>\n</article>"
    );
}

/// The handout as one page, its pictures beside it in [`PICTURES`]; `whole` when its links are
/// whole addresses (with their QR codes).
fn page_html(sheet: &Handout, whole: bool) -> String {
    let mut body = String::new();
    for l in &sheet.lessons {
        let _ = write!(
            body,
            "<section class=\"lesson\" data-lesson=\"{}\">\n<h2>{}</h2>\n<p class=\"summary\">{}</p>\n",
            escape(&l.id),
            inline_html(&l.title),
            inline_html(&l.summary)
        );
        for s in &l.steps {
            step_html(s, whole, &mut body);
        }
        for e in &l.exercises {
            exercise_html(e, whole, &mut body);
        }
        body.push_str("</section>\n");
    }
    let titles: Vec<String> = sheet.lessons.iter().map(|l| plain(&l.title)).collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Lockstep: {title}</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<h1>Lockstep: {heading}</h1>\n<p class=\"intro\">{intro}</p>\n{body}</body>\n</html>\n",
        title = escape(&titles.join(", ")),
        heading = print::Printout::Handout.title().to_ascii_lowercase(),
        intro = escape(print::HANDOUT_INTRO),
    )
}

/// The page's style: dark on white, sized for paper, no step or exercise split across pages.
const STYLE: &str = "\
body{font:11pt/1.45 system-ui,sans-serif;max-width:48rem;margin:1.5rem auto;padding:0 1rem;color:#000;background:#fff}\
h1{font-size:1.4rem}h2{font-size:1.25rem;margin:1.6rem 0 0.3rem;border-bottom:2px solid #000}\
h3{font-size:1.05rem;margin:0.2rem 0}h1,h2,h3{break-after:avoid;page-break-after:avoid}\
article{border-top:1px solid #777;padding:0.5rem 0 0.7rem;break-inside:avoid;page-break-inside:avoid}\
.link{display:flex;gap:0.8rem;align-items:center;margin:0.2rem 0}.link p{margin:0;word-break:break-all}\
.qr{width:24mm;height:24mm;flex:none}a{color:inherit}\
figure{margin:0.4rem 0}img{max-width:100%;height:auto;border:1px solid #ccc}\
code{font:0.92em ui-monospace,monospace;background:#eee;padding:0 0.2em}\
.write{border:1px solid #777;border-radius:4px;min-height:7em;margin:0.4rem 0}\
.question .write,.task .write{min-height:4em}.choices{margin:0.2rem 0}\
@page{margin:15mm 14mm}";
