//! `lockstep lesson pack ... --single-file OUT.html`: the built site and a facilitator's lessons
//! in one HTML file that runs from `file://`, double-clicked, with no server and no network: for
//! a room with no network at all, or a browser that may not keep an offline copy (a page at a
//! network address over http is not a secure context).
//!
//! The page carries every file of the site compressed in a data block, and a small script
//! (`single.js`) answers the site's own requests from it: fetches, module imports, workers,
//! pictures and the rest of a split bundle. The site's loader runs unchanged, inline. The
//! page's policy allows exactly those two scripts (by their hashes) and what they make (blob:
//! modules and workers), and no network at all.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use sha2::Digest as _;

/// The script that answers the site's requests from the file.
const CARRIER: &str = include_str!("single.js");

/// The most a single file may weigh; a site that makes a larger one is not this app's.
const SINGLE_FILE_BYTES_MAX: usize = 64 << 20;

/// Files of the built site a single file leaves out: the service worker (a page opened from a
/// file has none) and what only a host page or a page over the network uses.
fn left_out(name: &str) -> bool {
    matches!(
        name,
        "index.html"
            | "sw.js"
            | "embed-size.js"
            | "lockstep-host.js"
            | "lesson-preview.js"
            | ".trunk-lock"
    ) || name.starts_with("loader-")
        || name.starts_with("lessons/")
        || is_preview(name)
}

/// A lesson place's preview or their index (`ui::preview`): shown only while a place's
/// simulator comes over a network, which the file never waits for.
fn is_preview(name: &str) -> bool {
    name == "course/previews.json" || is_place_preview(name)
}

/// A lesson place's preview, `course/LESSON.PLACE.html`. A site with a folder of lessons shows
/// none (a lesson of the folder may replace a shipped one), so a pack, which always has one,
/// leaves them out; it keeps their index, from which the page learns that much.
pub fn is_place_preview(name: &str) -> bool {
    name.strip_prefix("course/")
        .and_then(|n| n.strip_suffix(".html"))
        .is_some_and(|n| n.split('.').count() == 2)
}

/// What was written, for the command's summary.
pub struct Written {
    pub files: usize,
    pub bytes: usize,
}

/// Writes the single file: the site in `site` (checked by the caller), with `lessons` (file
/// name and text, already checked) as its folder of lessons.
pub fn write_single_file(
    site: &Path,
    lessons: &[(String, String)],
    dest: &Path,
) -> Result<Written, String> {
    let page = read(site, "index.html")?;
    let page = String::from_utf8(page)
        .map_err(|_| format!("{}/index.html is not UTF-8", site.display()))?;

    // The site's files, and the folder of lessons the page reads beside it.
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut count = 0;
    collect(site, "", &mut files, &mut count)?;
    let index = serde_json::json!({
        "lessons": lessons.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(),
    });
    files.insert(
        "lessons/index.json".into(),
        format!("{index}\n").into_bytes(),
    );
    for (name, text) in lessons {
        files.insert(format!("lessons/{name}"), text.clone().into_bytes());
    }

    // The loader: the one module script of the built page.
    let (loader_tag, loader_name) = tag_with(&page, "<script", "loader-").ok_or_else(|| {
        format!(
            "{}/index.html has no loader script (loader-*.js): is it a build of this app?",
            site.display()
        )
    })?;
    let loader_name = attribute(loader_tag, "src")
        .map(|s| s.trim_start_matches("./").to_string())
        .unwrap_or(loader_name);
    let loader = String::from_utf8(read(site, &loader_name)?)
        .map_err(|_| format!("{}/{loader_name} is not UTF-8", site.display()))?;
    let style = String::from_utf8(read(site, "style.css")?)
        .map_err(|_| format!("{}/style.css is not UTF-8", site.display()))?;
    for (what, text, closing) in [
        ("the loader", &loader, "</script"),
        ("the style sheet", &style, "</style"),
    ] {
        if text.to_ascii_lowercase().contains(closing) {
            return Err(format!(
                "{what} contains \"{closing}\", which cannot be written inline"
            ));
        }
    }

    // The data block: JSON whose strings are base64, so nothing in it can end the element.
    let mut data = String::from("{");
    for (i, (name, bytes)) in files.iter().enumerate() {
        let packed = miniz_oxide::deflate::compress_to_vec(bytes, 9);
        if i > 0 {
            data.push(',');
        }
        data.push_str(
            &serde_json::to_string(name)
                .unwrap_or_default()
                .replace('<', "\\u003c"),
        );
        data.push(':');
        data.push('"');
        data.push_str(&base64::engine::general_purpose::STANDARD.encode(packed));
        data.push('"');
    }
    data.push('}');

    let policy = format!(
        "default-src 'none'; script-src {} {} blob: 'wasm-unsafe-eval'; style-src 'unsafe-inline'; \
         img-src data: blob:; connect-src blob: data:; worker-src blob:; object-src 'none'; \
         base-uri 'none'; form-action 'none'",
        script_hash(CARRIER),
        script_hash(&loader)
    );
    let csp_tag = tag_with(&page, "<meta", "Content-Security-Policy")
        .map(|(t, _)| t)
        .ok_or_else(|| {
            format!(
                "{}/index.html has no Content Security Policy",
                site.display()
            )
        })?;
    let style_tag = tag_with(&page, "<link", "stylesheet")
        .map(|(t, _)| t)
        .ok_or_else(|| format!("{}/index.html links no style sheet", site.display()))?;
    let scripts = format!(
        "<script type=\"application/json\" id=\"lockstep-files\">{data}</script>\
         <script>{CARRIER}</script><script type=\"module\">{loader}</script>"
    );
    let html = page
        .replacen(
            csp_tag,
            &format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">"),
            1,
        )
        .replacen(style_tag, &format!("<style>{style}</style>"), 1)
        .replacen(loader_tag, &scripts, 1);
    if html.len() > SINGLE_FILE_BYTES_MAX {
        return Err(format!(
            "the single file would weigh {} MB, more than {} MB: is --site the built site?",
            html.len() >> 20,
            SINGLE_FILE_BYTES_MAX >> 20
        ));
    }
    std::fs::write(dest, &html).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(Written {
        files: files.len(),
        bytes: html.len(),
    })
}

/// A CSP source for an inline script: its text's SHA-256, in base64.
fn script_hash(text: &str) -> String {
    let digest = sha2::Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The first tag opening with `open` whose text contains `needle`, and the word after the
/// needle up to a quote, space or `>`.
fn tag_with<'a>(page: &'a str, open: &str, needle: &str) -> Option<(&'a str, String)> {
    let mut from = 0;
    while let Some(start) = page[from..].find(open).map(|i| i + from) {
        let end = page[start..].find('>').map(|i| i + start + 1)?;
        let mut tag = &page[start..end];
        if let Some(at) = tag.find(needle) {
            let word: String = tag[at..]
                .chars()
                .take_while(|c| !matches!(c, '"' | '\'' | ' ' | '>'))
                .collect();
            // A script's element ends with its closing tag.
            if open == "<script" && page[end..].starts_with("</script>") {
                tag = &page[start..end + "</script>".len()];
            }
            return Some((tag, word));
        }
        from = end;
    }
    None
}

/// The value of an attribute in a tag, quoted or not.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}="))? + name.len() + 2;
    let rest = &tag[at..];
    let value = match rest.chars().next()? {
        q @ ('"' | '\'') => rest[1..].split(q).next()?,
        _ => rest.split([' ', '>']).next()?,
    };
    Some(value.to_string())
}

fn read(site: &Path, name: &str) -> Result<Vec<u8>, String> {
    let path = site.join(name);
    std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
}

fn collect(
    root: &Path,
    sub: &str,
    files: &mut BTreeMap<String, Vec<u8>>,
    count: &mut usize,
) -> Result<(), String> {
    let dir = root.join(sub);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if sub.is_empty() {
            name
        } else {
            format!("{sub}/{name}")
        };
        let kind = entry.file_type().map_err(|e| format!("{rel}: {e}"))?;
        if kind.is_dir() {
            collect(root, &rel, files, count)?;
        } else if kind.is_file() && !left_out(&rel) {
            *count += 1;
            if *count > super::SITE_FILES_MAX {
                return Err(format!(
                    "the site has more than {} files; is --site the built site?",
                    super::SITE_FILES_MAX
                ));
            }
            let bytes = read(root, &rel)?;
            files.insert(rel, bytes);
        }
    }
    Ok(())
}
