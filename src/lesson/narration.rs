//! Narration: Markdown from a lesson file, made safe to show.
//!
//! A lesson file may come from anyone (the app opens files a facilitator pastes), so nothing
//! in it reaches the page as markup. [`render`] turns Markdown into a small tree of blocks and
//! inlines: raw HTML is dropped, images become their text, and a link keeps its target only
//! if it is `http:`, `https:`, `mailto:`, a fragment (`#/lessons/...`) or a relative path, so
//! `javascript:` and `data:` links become plain text. [`to_html`] writes that tree as HTML with
//! every text escaped, for views that take a string. Nesting is bounded, so a hostile file
//! cannot make either function recurse deeply.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag};
use serde::{Deserialize, Serialize};

/// How deeply blocks and inlines may nest; deeper content is kept, flattened into the
/// innermost allowed level.
pub const NESTING_MAX: usize = 12;

/// Markdown narration, as written in the lesson, with its first line in the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narration {
    pub markdown: String,
    pub line: u32,
}

impl Narration {
    /// The narration as a safe tree.
    pub fn blocks(&self) -> Vec<Block> {
        render(&self.markdown)
    }

    /// The narration as escaped HTML.
    pub fn html(&self) -> String {
        to_html(&self.blocks())
    }

    pub fn is_empty(&self) -> bool {
        self.markdown.trim().is_empty()
    }
}

/// A block of narration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Block {
    Paragraph(Vec<Inline>),
    Heading {
        /// 1 to 6.
        level: u8,
        content: Vec<Inline>,
    },
    List {
        /// The first number of an ordered list; `None` for a bulleted one.
        start: Option<u64>,
        items: Vec<Vec<Block>>,
    },
    Quote(Vec<Block>),
    /// A code block: its text, shown as is.
    Code(String),
    Rule,
}

/// Text within a block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inline {
    Text(String),
    Code(String),
    Emphasis(Vec<Inline>),
    Strong(Vec<Inline>),
    /// A link with a safe target.
    Link {
        href: String,
        content: Vec<Inline>,
    },
    LineBreak,
}

/// Whether a link target is safe to put in an `href`: a web or mail address, a fragment, or a
/// relative path. Control characters and spaces are ignored when looking for a scheme, as
/// browsers ignore them.
pub fn safe_href(href: &str) -> bool {
    let cleaned: String = href
        .chars()
        .filter(|c| !c.is_ascii_control() && !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if cleaned.is_empty() {
        return false;
    }
    let scheme_end = cleaned.find(|c: char| [':', '/', '?', '#'].contains(&c));
    match scheme_end {
        Some(i) if cleaned.as_bytes()[i] == b':' => {
            let scheme = &cleaned[..i];
            matches!(scheme, "http" | "https" | "mailto")
        }
        // No scheme: a fragment or a path relative to the page. `//host` is another site,
        // which a lesson has no reason to hide behind a relative form.
        _ => !cleaned.starts_with("//") && !cleaned.starts_with("\\\\"),
    }
}

/// Builds the tree from parser events, one open container per level.
enum Open {
    Blocks(Vec<Block>),
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    List(Option<u64>, Vec<Vec<Block>>),
    Item(Vec<Block>, Vec<Inline>),
    Quote(Vec<Block>),
    Code(String),
    Emphasis(Vec<Inline>),
    Strong(Vec<Inline>),
    /// A link: its target if safe, and its content.
    Link(Option<String>, Vec<Inline>),
    /// Content that is kept as text only (an image's description, an unknown container).
    Plain(Vec<Inline>),
    /// Content that is dropped (an HTML block).
    Dropped,
}

/// Renders Markdown narration into a safe tree.
pub fn render(markdown: &str) -> Vec<Block> {
    let mut stack: Vec<Open> = vec![Open::Blocks(Vec::new())];
    // Containers beyond the nesting bound are not opened; their ends are skipped too.
    let mut skipped_depth = 0usize;
    for event in Parser::new_ext(markdown, Options::empty()) {
        match event {
            Event::Start(tag) => {
                if stack.len() > NESTING_MAX {
                    skipped_depth += 1;
                    continue;
                }
                let open = match tag {
                    Tag::Paragraph => Open::Paragraph(Vec::new()),
                    Tag::Heading { level, .. } => Open::Heading(heading(level), Vec::new()),
                    Tag::BlockQuote(_) => Open::Quote(Vec::new()),
                    Tag::CodeBlock(_) => Open::Code(String::new()),
                    Tag::HtmlBlock => Open::Dropped,
                    Tag::List(start) => Open::List(start, Vec::new()),
                    Tag::Item => Open::Item(Vec::new(), Vec::new()),
                    Tag::Emphasis => Open::Emphasis(Vec::new()),
                    Tag::Strong => Open::Strong(Vec::new()),
                    Tag::Link { dest_url, .. } => {
                        let href = dest_url.to_string();
                        Open::Link(safe_href(&href).then_some(href), Vec::new())
                    }
                    _ => Open::Plain(Vec::new()),
                };
                stack.push(open);
            }
            Event::End(_) => {
                if skipped_depth > 0 {
                    skipped_depth -= 1;
                    continue;
                }
                if stack.len() <= 1 {
                    continue;
                }
                let done = stack.pop().expect("more than the root is open");
                close(&mut stack, done);
            }
            Event::Text(text) => push_text(&mut stack, &text),
            Event::Code(code) => push_inline(&mut stack, Inline::Code(code.to_string())),
            Event::SoftBreak => push_text(&mut stack, " "),
            Event::HardBreak => push_inline(&mut stack, Inline::LineBreak),
            Event::Rule => push_block(&mut stack, Block::Rule),
            // Raw HTML never reaches the page, not even as text: a lesson has no use for it,
            // and escaped tags would only be noise.
            Event::Html(_) | Event::InlineHtml(_) => {}
            _ => {}
        }
    }
    while stack.len() > 1 {
        let done = stack.pop().expect("more than the root is open");
        close(&mut stack, done);
    }
    match stack.pop() {
        Some(Open::Blocks(blocks)) => blocks,
        _ => Vec::new(),
    }
}

fn heading(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Adds text to the innermost container that takes it.
fn push_text(stack: &mut [Open], text: &str) {
    if let Some(Open::Code(code)) = stack.last_mut() {
        code.push_str(text);
        return;
    }
    if let Some(Open::Dropped) = stack.last() {
        return;
    }
    push_inline_merged(stack, text);
}

fn push_inline_merged(stack: &mut [Open], text: &str) {
    if let Some(inlines) = inlines_of(stack) {
        if let Some(Inline::Text(last)) = inlines.last_mut() {
            last.push_str(text);
        } else {
            inlines.push(Inline::Text(text.to_string()));
        }
    }
}

fn push_inline(stack: &mut [Open], inline: Inline) {
    if let Some(inlines) = inlines_of(stack) {
        inlines.push(inline);
    }
}

/// The inline list of the innermost container, or `None` where inlines are dropped (code, an
/// HTML block). Text directly inside a block container (a tight list item, or content whose
/// paragraph was beyond the nesting bound) goes into a paragraph of its own.
fn inlines_of(stack: &mut [Open]) -> Option<&mut Vec<Inline>> {
    match stack.last_mut()? {
        Open::Paragraph(x)
        | Open::Heading(_, x)
        | Open::Emphasis(x)
        | Open::Strong(x)
        | Open::Link(_, x)
        | Open::Plain(x)
        | Open::Item(_, x) => Some(x),
        Open::Blocks(blocks) | Open::Quote(blocks) => {
            if !matches!(blocks.last(), Some(Block::Paragraph(_))) {
                blocks.push(Block::Paragraph(Vec::new()));
            }
            match blocks.last_mut() {
                Some(Block::Paragraph(x)) => Some(x),
                _ => None,
            }
        }
        Open::List(_, items) => {
            items.push(vec![Block::Paragraph(Vec::new())]);
            match items.last_mut().and_then(|i| i.last_mut()) {
                Some(Block::Paragraph(x)) => Some(x),
                _ => None,
            }
        }
        Open::Code(_) | Open::Dropped => None,
    }
}

fn push_block(stack: &mut [Open], block: Block) {
    match stack.last_mut() {
        Some(Open::Blocks(x)) | Some(Open::Quote(x)) => x.push(block),
        Some(Open::Item(blocks, inlines)) => {
            if !inlines.is_empty() {
                blocks.push(Block::Paragraph(std::mem::take(inlines)));
            }
            blocks.push(block);
        }
        Some(Open::List(_, items)) => items.push(vec![block]),
        // A block inside inline content (deep nesting was flattened): keep its text.
        Some(_) => {
            let text = block_text(&block);
            if !text.is_empty() {
                push_inline_merged(stack, &text);
            }
        }
        None => {}
    }
}

fn close(stack: &mut [Open], done: Open) {
    match done {
        Open::Paragraph(x) => push_block(stack, Block::Paragraph(x)),
        Open::Heading(level, content) => push_block(stack, Block::Heading { level, content }),
        Open::Quote(x) => push_block(stack, Block::Quote(x)),
        Open::Code(x) => push_block(stack, Block::Code(x)),
        Open::List(start, items) => push_block(stack, Block::List { start, items }),
        Open::Item(mut blocks, inlines) => {
            if !inlines.is_empty() {
                blocks.push(Block::Paragraph(inlines));
            }
            if let Some(Open::List(_, items)) = stack.last_mut() {
                items.push(blocks);
            } else {
                for b in blocks {
                    push_block(stack, b);
                }
            }
        }
        Open::Emphasis(x) => push_inline(stack, Inline::Emphasis(x)),
        Open::Strong(x) => push_inline(stack, Inline::Strong(x)),
        Open::Link(Some(href), content) => push_inline(stack, Inline::Link { href, content }),
        Open::Link(None, content) | Open::Plain(content) => {
            for i in content {
                match i {
                    Inline::Text(t) => push_inline_merged(stack, &t),
                    other => push_inline(stack, other),
                }
            }
        }
        Open::Blocks(x) => {
            for b in x {
                push_block(stack, b);
            }
        }
        Open::Dropped => {}
    }
}

fn inline_text(inlines: &[Inline], out: &mut String) {
    for i in inlines {
        match i {
            Inline::Text(t) | Inline::Code(t) => out.push_str(t),
            Inline::Emphasis(x) | Inline::Strong(x) | Inline::Link { content: x, .. } => {
                inline_text(x, out)
            }
            Inline::LineBreak => out.push(' '),
        }
    }
}

/// The short texts of a lesson that hold Markdown, each with its rendering
/// ([`crate::lesson::wire::WireLesson::rich`]).
pub type Rich = crate::sorted::SortedMap<String, Vec<Inline>>;

/// A short text of a lesson as the page shows it: its rendering when it holds Markdown, so
/// that code shows as code and never as raw backticks, otherwise the text itself. The lesson
/// view and the printouts draw every short text of a lesson through this, and the tests read
/// the page's words through it too. (The page parses no Markdown: the renderings come with
/// the lesson's compact form.)
pub fn shown(rich: &Rich, text: &str) -> Vec<Inline> {
    match rich.get(text) {
        Some(items) => items.clone(),
        None => vec![Inline::Text(text.to_string())],
    }
}

/// A short text of a lesson as plain words, its Markdown taken out (code as its bare text):
/// for a sentence the page builds around it (a gate's reading, a prediction's answer) and for
/// places that hold no markup (the tab's title).
pub fn plain(rich: &Rich, text: &str) -> String {
    match rich.get(text) {
        Some(items) => {
            let mut out = String::new();
            inline_text(items, &mut out);
            out
        }
        None => text.to_string(),
    }
}

/// The plain text of a block.
pub fn block_text(block: &Block) -> String {
    let mut out = String::new();
    match block {
        Block::Paragraph(x) | Block::Heading { content: x, .. } => inline_text(x, &mut out),
        Block::Code(x) => out.push_str(x),
        Block::Quote(blocks) => {
            out = blocks.iter().map(block_text).collect::<Vec<_>>().join(" ");
        }
        Block::List { items, .. } => {
            out = items
                .iter()
                .flatten()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" ");
        }
        Block::Rule => {}
    }
    out
}

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes the tree as HTML: only the tags of the tree, every text and attribute escaped.
pub fn to_html(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        block_html(b, &mut out);
    }
    out
}

/// Writes a short text's inlines as HTML, as [`to_html`] writes them inside a paragraph.
pub fn inline_html(inlines: &[Inline]) -> String {
    let mut out = String::new();
    inlines_html(inlines, &mut out);
    out
}

fn block_html(b: &Block, out: &mut String) {
    match b {
        Block::Paragraph(x) => {
            out.push_str("<p>");
            inlines_html(x, out);
            out.push_str("</p>\n");
        }
        Block::Heading { level, content } => {
            let level = (*level).clamp(1, 6);
            out.push_str(&format!("<h{level}>"));
            inlines_html(content, out);
            out.push_str(&format!("</h{level}>\n"));
        }
        Block::List { start, items } => {
            match start {
                Some(1) => out.push_str("<ol>\n"),
                Some(n) => out.push_str(&format!("<ol start=\"{n}\">\n")),
                None => out.push_str("<ul>\n"),
            }
            for item in items {
                out.push_str("<li>");
                for b in item {
                    block_html(b, out);
                }
                out.push_str("</li>\n");
            }
            out.push_str(if start.is_some() {
                "</ol>\n"
            } else {
                "</ul>\n"
            });
        }
        Block::Quote(x) => {
            out.push_str("<blockquote>\n");
            for b in x {
                block_html(b, out);
            }
            out.push_str("</blockquote>\n");
        }
        Block::Code(x) => {
            out.push_str("<pre><code>");
            out.push_str(&escape(x));
            out.push_str("</code></pre>\n");
        }
        Block::Rule => out.push_str("<hr>\n"),
    }
}

fn inlines_html(inlines: &[Inline], out: &mut String) {
    for i in inlines {
        match i {
            Inline::Text(t) => out.push_str(&escape(t)),
            Inline::Code(t) => {
                out.push_str("<code>");
                out.push_str(&escape(t));
                out.push_str("</code>");
            }
            Inline::Emphasis(x) => {
                out.push_str("<em>");
                inlines_html(x, out);
                out.push_str("</em>");
            }
            Inline::Strong(x) => {
                out.push_str("<strong>");
                inlines_html(x, out);
                out.push_str("</strong>");
            }
            Inline::Link { href, content } => {
                // The tree only holds safe targets, but a tree can be built by hand too.
                if safe_href(href) {
                    out.push_str(&format!("<a href=\"{}\">", escape(href)));
                    inlines_html(content, out);
                    out.push_str("</a>");
                } else {
                    inlines_html(content, out);
                }
            }
            Inline::LineBreak => out.push_str("<br>"),
        }
    }
}
