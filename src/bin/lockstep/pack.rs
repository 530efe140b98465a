//! `lockstep lesson pack FILE... --out DIR`: a static folder with the built site and a
//! facilitator's lessons beside it, ready to copy to any static host or to zip for a room
//! without Internet. The lessons go into `lessons/` with the index the page reads
//! (`lessons/index.json`) and a page of links to print (`lessons/index.html`); every lesson is
//! checked first exactly as `lockstep lesson check` checks it, and nothing is written unless all
//! pass.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lockstep::lesson::{wire, Lesson};

#[path = "single.rs"]
mod single;

const USAGE: &str = "usage:\n  lockstep lesson pack FILE... --out DIR [--site DIR] [--allow-origin ORIGIN]...\n      \
    Write a static folder: the built site (default: dist, from `trunk build --release`),\n      \
    the lesson FILEs beside it and an index of their links.\n  \
    lockstep lesson pack FILE... --single-file OUT.html [--site DIR]\n      \
    Write one HTML file that carries the site and the lessons and runs from file://,\n      \
    opened with no server and no network.";

/// The most files a site may have; a folder with more is not a built site of this app.
pub(crate) const SITE_FILES_MAX: usize = 1000;

struct Packed {
    file: String,
    lesson: Lesson,
    text: String,
}

pub fn lesson_pack(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let mut files: Vec<&str> = Vec::new();
    let mut dest: Option<&str> = None;
    let mut single: Option<&str> = None;
    let mut site = "dist";
    let mut origins: Vec<String> = Vec::new();
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
            "--single-file" => {
                single = Some(value(i)?);
                i += 1;
            }
            "--site" => {
                site = value(i)?;
                i += 1;
            }
            "--allow-origin" => {
                let raw = value(i)?.trim_end_matches('/');
                match lockstep::ui::reach::origin_of(raw) {
                    Some(o) if o == raw.to_ascii_lowercase() => origins.push(o),
                    _ => {
                        return Err(format!(
                            "--allow-origin \"{raw}\" is not an origin: write the scheme and host \
                             (and port) only, as https://lessons.example.org"
                        ))
                    }
                }
                i += 1;
            }
            a if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            a => files.push(a),
        }
        i += 1;
    }
    if dest.is_none() && single.is_none() {
        return Err(format!(
            "--out DIR or --single-file OUT.html is required\n{USAGE}"
        ));
    }
    if single.is_some() && !origins.is_empty() {
        return Err(
            "--allow-origin has no use in a single file, which fetches nothing from the network"
                .to_string(),
        );
    }
    if files.is_empty() {
        return Err(format!("no lesson FILE given\n{USAGE}"));
    }
    if files.len() > lockstep::ui::reach::FOLDER_LESSONS_MAX {
        return Err(format!(
            "{} lesson files; a pack holds at most {}",
            files.len(),
            lockstep::ui::reach::FOLDER_LESSONS_MAX
        ));
    }

    // Every lesson is checked before anything is written.
    let mut packed: Vec<Packed> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for path in &files {
        let text = super::read_text(path, lockstep::lesson::LESSON_BYTES_MAX)?;
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
        let checked = lockstep::lesson::check(&lesson);
        // A warning does not stop the pack (the lesson works), but it is worth the author's
        // look before the room sees the lesson.
        for w in &checked.warnings {
            eprintln!("{path}:{}: warning: {}", w.line, w.message);
        }
        problems.extend(
            checked
                .errors
                .iter()
                .map(|e| format!("{path}:{}: {}", e.line, e.message)),
        );
        if let Some(other) = packed.iter().find(|p| p.lesson.id == lesson.id) {
            problems.push(format!(
                "{path}: the lesson id \"{}\" is also {}'s; each lesson of a pack needs its own id",
                lesson.id, other.file
            ));
        }
        packed.push(Packed {
            file: format!("{}.md", lesson.id),
            lesson,
            text,
        });
    }
    if !problems.is_empty() {
        return Err(format!(
            "nothing was written: {} problem(s)\n{}",
            problems.len(),
            problems.join("\n")
        ));
    }

    let site = Path::new(site);
    check_site(site)?;
    if let Some(file) = single {
        let path = PathBuf::from(file);
        if path.exists() {
            return Err(format!(
                "{} exists; name a new file, so that nothing is overwritten",
                path.display()
            ));
        }
        let lessons: Vec<(String, String)> = packed
            .iter()
            .map(|p| (p.file.clone(), p.text.clone()))
            .collect();
        let written = single::write_single_file(site, &lessons, &path)?;
        let _ = writeln!(
            out,
            "packed {} lesson(s) with the site ({} files) into {} ({:.1} MB)",
            packed.len(),
            written.files,
            path.display(),
            written.bytes as f64 / 1_048_576.0
        );
        summary(&packed, out);
        let _ = writeln!(
            out,
            "open it in a browser (double-click it, or file://{}#/lessons): it needs no server and \
             no network",
            std::fs::canonicalize(&path)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| file.to_string())
        );
    }
    let Some(dest) = dest else {
        return Ok(ExitCode::SUCCESS);
    };
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
    let mut count = 0;
    copy_dir(site, &dest, "", &mut count)?;
    if !origins.is_empty() {
        allow_origins(&dest, &origins)?;
    }

    let folder = dest.join("lessons");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    for p in &packed {
        write(&folder.join(&p.file), &p.text)?;
    }
    let index = serde_json::json!({
        "lessons": packed.iter().map(|p| p.file.clone()).collect::<Vec<_>>(),
    });
    write(
        &folder.join("index.json"),
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&index).unwrap_or_default()
        ),
    )?;
    write(&folder.join("index.html"), &links_page(&packed))?;

    let _ = writeln!(
        out,
        "packed {} lesson(s) with the site ({count} files) into {}",
        packed.len(),
        dest.display()
    );
    summary(&packed, out);
    let _ = writeln!(
        out,
        "serve it with any static server (python3 -m http.server -d {0}), or zip it; \
         {0}/lessons/index.html lists every link to print",
        dest.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// One line a lesson: its file, title, size and link.
fn summary(packed: &[Packed], out: &mut dyn Write) {
    for p in packed {
        let _ = writeln!(
            out,
            "  {}: \"{}\", {} step(s), {} exercise(s): #/lessons/{}",
            p.file,
            p.lesson.title,
            p.lesson.steps.len(),
            p.lesson.exercises.len(),
            p.lesson.id
        );
    }
}

/// A built site has the page, its loader's bundles, the lessons and the offline copy.
fn check_site(site: &Path) -> Result<(), String> {
    let missing: Vec<&str> = [
        "index.html",
        "app.js",
        "course.js",
        "course/index.json",
        "sw.js",
    ]
    .into_iter()
    .filter(|f| !site.join(f).is_file())
    .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} is not a built site of this app (no {}): build it with `trunk build --release` \
             (scripts/serve.sh does), or name one with --site DIR",
            site.display(),
            missing.join(", ")
        ));
    }
    same_version(site)
}

/// The site was built from the same version as this command: its course is, file for file,
/// the one this command would write. A site from another checkout reads lessons with another
/// checker, so a lesson this command accepted could be refused in the room (or the other way
/// round); the course's files change with the lesson format and the shipped lessons, and the
/// site keeps them whatever host serves it.
fn same_version(site: &Path) -> Result<(), String> {
    let ours = wire::course_files(&lockstep::lesson::builtin::lessons());
    for (name, text) in ours.iter().filter(|(n, _)| n.ends_with(".json")) {
        let path = site.join(wire::COURSE_DIR).join(name);
        let theirs = std::fs::read_to_string(&path).unwrap_or_default();
        if theirs != *text {
            let why = match (course_version(&theirs), course_version(text)) {
                (Some(t), Some(o)) if t != o => {
                    format!("its lessons are in format {t}, this command's in format {o}")
                }
                _ => format!("its {}/{name} is not this version's", wire::COURSE_DIR),
            };
            return Err(format!(
                "{} was built from another version of Lockstep than this `lockstep` ({why}): \
                 build the site from the same checkout as the command (`trunk build --release`), \
                 or run the `lockstep` built from the site's checkout",
                site.display()
            ));
        }
    }
    Ok(())
}

/// The format version a course file starts with (`{"version":N,…`).
fn course_version(file: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(file).ok()?;
    v.get("version")?.as_u64()
}

/// Copies the built site at `from` (its files named from the site's root after `rel`), less
/// the places' previews, which a site with a folder of lessons never shows.
fn copy_dir(from: &Path, to: &Path, rel: &str, count: &mut usize) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let target = to.join(entry.file_name());
        let name = format!("{rel}{}", entry.file_name().to_string_lossy());
        if kind.is_dir() {
            copy_dir(&path, &target, &format!("{name}/"), count)?;
        } else if kind.is_file() && !single::is_place_preview(&name) {
            *count += 1;
            if *count > SITE_FILES_MAX {
                return Err(format!(
                    "the site has more than {SITE_FILES_MAX} files; is --site the built site?"
                ));
            }
            std::fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Adds origins to the page's `connect-src`, the one list of addresses the page may fetch a
/// lesson from (see `lockstep::ui::reach`), and gives the offline copy a new version, because
/// the page it caches changed.
fn allow_origins(dest: &Path, origins: &[String]) -> Result<(), String> {
    let page = dest.join("index.html");
    let html = std::fs::read_to_string(&page).map_err(|e| format!("{}: {e}", page.display()))?;
    let directive = "connect-src 'self'";
    if !html.contains(directive) {
        return Err(format!(
            "{}: its Content Security Policy has no \"{directive}\" to add origins to",
            page.display()
        ));
    }
    let html = html.replacen(directive, &format!("{directive} {}", origins.join(" ")), 1);
    write(&page, &html)?;
    let sw = dest.join("sw.js");
    let script = std::fs::read_to_string(&sw).map_err(|e| format!("{}: {e}", sw.display()))?;
    let version = format!("{:016x}", lockstep::hash::fnv1a64(html.as_bytes()));
    let script = script
        .lines()
        .map(|l| {
            if l.starts_with("const VERSION = ") {
                format!("const VERSION = '{version}';")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    write(&sw, &format!("{script}\n"))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The printable page of links: each lesson, its steps and its exercises, relative to the
/// site, so it works wherever the folder is served.
fn links_page(packed: &[Packed]) -> String {
    let mut body = String::new();
    for p in packed {
        let l = &p.lesson;
        let _ = write!(
            body,
            "<section>\n<h2><a href=\"../#/lessons/{id}\">{title}</a></h2>\n<p>{summary}</p>\n<ol>\n",
            id = l.id,
            title = escape(&l.title),
            summary = escape(&l.summary)
        );
        for s in &l.steps {
            let _ = writeln!(
                body,
                "<li><a href=\"../#/lessons/{}/{}\">{}</a></li>",
                l.id,
                s.id,
                escape(&s.title)
            );
        }
        for e in &l.exercises {
            let _ = writeln!(
                body,
                "<li>Exercise: <a href=\"../#/lessons/{}/{}\">{}</a></li>",
                l.id,
                e.id,
                escape(&e.title)
            );
        }
        let _ = write!(
            body,
            "</ol>\n<p class=\"file\">Lesson file: <a href=\"{0}\">{0}</a></p>\n</section>\n",
            p.file
        );
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Lessons of this workshop</title>\n<link rel=\"icon\" href=\"data:,\">\n\
         <style>body{{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#111;background:#fff}}\
         h2{{break-after:avoid}}section{{break-inside:avoid}}.file{{color:#444}}</style>\n\
         </head>\n<body>\n<h1>Lessons of this workshop</h1>\n\
         <p>Each link opens the lesson in this site; a lesson opened once stays in the browser and \
         opens offline too. <a href=\"../#/lessons\">All lessons</a>.</p>\n{body}</body>\n</html>\n"
    )
}
