//! The mdBook preprocessor (`lockstep mdbook`): a docs author keeps a scenario in the book's
//! source, in a fenced block, and the book shows the live run there, with a static picture for
//! renderers that show no frames.
//!
//! ````markdown
//! ```lockstep
//! scenario = "05-fencing.toml"      # a built-in scenario ...
//! edits = ["fencing accounts one_source all_accesses"]
//! seed = 3
//! playhead_ms = 700
//! controls = ["fencing accounts"]
//! caption = "The stale write, refused."
//! ```
//! ````
//!
//! or a whole scenario in TOML, with the same options in an `[embed]` table. The block becomes
//! the embed snippet ([`lockstep::ui::embed::Embed::snippet`]) for the HTML renderer, with the
//! timeline as SVG for readers without script, and the SVG alone (with a link to the live run)
//! for any other renderer. mdBook's protocol is JSON: `[context, book]` on standard input, the
//! book on standard output; the site's address comes from `book.toml`
//! (`[preprocessor.lockstep] site = "https://example.org/lockstep/"`).
//!
//! Everything here is a function of its input: no file is read or written, so it is tested
//! without mdBook.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use lockstep::lesson::Edit;
use lockstep::scenario::Scenario;
use lockstep::ui::embed::Embed;
use lockstep::ui::{export, share};

/// The largest book read from standard input: 64 MiB.
pub const BOOK_BYTES_MAX: usize = 64 * 1024 * 1024;
/// The most `lockstep` blocks in one book: each runs a scenario.
pub const BLOCKS_MAX: usize = 200;

/// The options of a block, for a built-in (`scenario = "…"`) or in a whole scenario's
/// `[embed]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    #[serde(default)]
    edits: Vec<String>,
    seed: Option<u64>,
    playhead_ms: Option<u64>,
    #[serde(default)]
    controls: Vec<String>,
    #[serde(default)]
    origins: Vec<String>,
    caption: Option<String>,
    theme: Option<String>,
    title: Option<String>,
    /// The embed's name on the page, echoed in every message it sends (`lockstep-host.js`
    /// finds an embed by it).
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuiltinBlock {
    scenario: String,
    #[serde(flatten)]
    options: Options,
}

/// A block made into what the book shows, or why it cannot be.
fn render_block(body: &str, site: Option<&str>, html: bool) -> Result<String, String> {
    let table: toml::Table = body.parse().map_err(|e| format!("not TOML: {e}"))?;
    let (file, scenario, options) = if table.contains_key("scenario") {
        let b: BuiltinBlock = table
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())?;
        let builtin = lockstep::builtin::find(&b.scenario).ok_or_else(|| {
            format!(
                "\"{}\" is not a built-in scenario ({})",
                b.scenario,
                lockstep::builtin::ALL
                    .iter()
                    .map(|x| x.file)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let s = Scenario::from_toml_str(builtin.toml()).map_err(|e| e.to_string())?;
        (b.scenario, s, b.options)
    } else {
        let mut table = table;
        let options: Options = match table.remove("embed") {
            Some(v) => v
                .try_into()
                .map_err(|e: toml::de::Error| format!("[embed]: {}", e.message()))?,
            None => Options::default(),
        };
        let text = toml::to_string(&table).map_err(|e| e.to_string())?;
        let s = Scenario::from_toml_str(&text).map_err(|e| e.to_string())?;
        (String::new(), s, options)
    };
    let mut scenario = scenario;
    if let Some(seed) = options.seed {
        scenario.seed = seed;
    }
    let edits: Vec<Edit> = options
        .edits
        .iter()
        .map(|e| e.parse().map_err(|why| format!("edit \"{e}\": {why}")))
        .collect::<Result<_, String>>()?;
    let (edited, outcome, link) = share::linked_run(
        &file,
        &scenario,
        edits,
        options.playhead_ms.unwrap_or(0).saturating_mul(1000),
    )?;
    let mut query = link.to_query();
    let list = |xs: &[String]| share::escape(&xs.join(","));
    if !options.controls.is_empty() {
        query.push_str(&format!("&controls={}", list(&options.controls)));
    }
    if !options.origins.is_empty() {
        query.push_str(&format!("&origins={}", list(&options.origins)));
    }
    if let Some(theme) = &options.theme {
        query.push_str(&format!("&theme={}", share::escape(theme)));
    }
    if let Some(caption) = &options.caption {
        query.push_str(&format!("&caption={}", share::escape(caption)));
    }
    if let Some(id) = &options.id {
        query.push_str(&format!("&id={}", share::escape(id)));
    }
    let embed = Embed::from_query(&query).map_err(|e| e.0)?;
    let title = options
        .title
        .unwrap_or_else(|| format!("Lockstep: {}", edited.name));
    let live = site.map(|s| format!("{s}{}", link.to_fragment()));
    let svg = export::timeline_svg(&edited, &outcome, live.as_deref());
    let picture = format!(
        "<img class=\"lockstep-picture\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">",
        attr(&format!("{title}. {}", outcome.headline)),
        base64::engine::general_purpose::STANDARD.encode(svg.as_bytes())
    );
    if html {
        let site = site.ok_or(
            "the book does not say where the site is: set [preprocessor.lockstep] site = \
             \"https://…/\" in book.toml",
        )?;
        Ok(format!(
            "<div class=\"lockstep-embed\">\n{}<noscript>{picture}</noscript>\n</div>\n",
            embed.snippet(site, &title)
        ))
    } else {
        let mut out = format!("{picture}\n");
        if let Some(live) = live {
            out.push_str(&format!("\n[See the run live]({live})\n"));
        }
        Ok(out)
    }
}

fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A chapter's Markdown with every ```` ```lockstep ```` block made into the run, or the first
/// block that cannot be, with its line in the chapter.
pub fn render_chapter(
    content: &str,
    site: Option<&str>,
    html: bool,
    blocks: &mut usize,
) -> Result<String, String> {
    let mut out = String::with_capacity(content.len());
    let mut lines = content.split_inclusive('\n').enumerate();
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_end();
        if trimmed != "```lockstep" {
            out.push_str(line);
            continue;
        }
        *blocks += 1;
        if *blocks > BLOCKS_MAX {
            return Err(format!(
                "line {}: more than {BLOCKS_MAX} lockstep blocks",
                n + 1
            ));
        }
        let mut body = String::new();
        let mut closed = false;
        for (_, inner) in lines.by_ref() {
            if inner.trim_end() == "```" {
                closed = true;
                break;
            }
            body.push_str(inner);
        }
        if !closed {
            return Err(format!("line {}: the lockstep block is not closed", n + 1));
        }
        let made =
            render_block(&body, site, html).map_err(|why| format!("line {}: {why}", n + 1))?;
        out.push_str(&made);
    }
    Ok(out)
}

/// The preprocessor's whole run: mdBook's `[context, book]` in, the book out.
pub fn preprocess(input: &str) -> Result<String, String> {
    if input.len() > BOOK_BYTES_MAX {
        return Err(format!("the book is larger than {BOOK_BYTES_MAX} bytes"));
    }
    let value: Value =
        serde_json::from_str(input).map_err(|e| format!("not mdBook's input: {e}"))?;
    let Value::Array(mut pair) = value else {
        return Err("not mdBook's input: expected [context, book]".into());
    };
    if pair.len() != 2 {
        return Err("not mdBook's input: expected [context, book]".into());
    }
    let mut book = pair.pop().expect("two items");
    let context = pair.pop().expect("two items");
    let html = context
        .get("renderer")
        .and_then(Value::as_str)
        .is_none_or(|r| r == "html");
    let site = context
        .pointer("/config/preprocessor/lockstep/site")
        .and_then(Value::as_str)
        .map(|s| {
            if s.ends_with('/') {
                s.to_string()
            } else {
                format!("{s}/")
            }
        });
    let mut blocks = 0;
    // mdBook 0.4 calls the list `sections`, later versions `items`.
    for key in ["sections", "items"] {
        if let Some(Value::Array(items)) = book.get_mut(key) {
            for item in items {
                walk(item, site.as_deref(), html, &mut blocks)?;
            }
        }
    }
    serde_json::to_string(&book).map_err(|e| e.to_string())
}

fn walk(
    item: &mut Value,
    site: Option<&str>,
    html: bool,
    blocks: &mut usize,
) -> Result<(), String> {
    let Some(chapter) = item.get_mut("Chapter") else {
        return Ok(());
    };
    let name = chapter
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("a chapter")
        .to_string();
    if let Some(Value::String(content)) = chapter.get_mut("content") {
        *content = render_chapter(content, site, html, blocks)
            .map_err(|why| format!("chapter \"{name}\", {why}"))?;
    }
    if let Some(Value::Array(subs)) = chapter.get_mut("sub_items") {
        for sub in subs {
            walk(sub, site, html, blocks)?;
        }
    }
    Ok(())
}
