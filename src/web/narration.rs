//! A lesson's narration and short texts drawn as elements: the safe tree the lesson's Markdown
//! was read into, never markup. The course's views and the printed sheets both draw with it.

use yew::prelude::*;

use crate::lesson::narration::{Block, Inline};

/// Narration as elements: the safe tree from the lesson, never markup. Headings start at
/// level 3, under the page's and the view's own.
pub fn narration(blocks: &[Block]) -> Html {
    html! { <>{ for blocks.iter().map(block) }</> }
}

fn block(b: &Block) -> Html {
    match b {
        Block::Paragraph(content) => html! { <p>{ inlines(content) }</p> },
        Block::Heading { level, content } => {
            let tag = match level.saturating_add(2).min(6) {
                3 => "h3",
                4 => "h4",
                5 => "h5",
                _ => "h6",
            };
            html! { <@{tag}>{ inlines(content) }</@> }
        }
        Block::List {
            start: Some(n),
            items,
        } => html! {
            <ol start={n.to_string()}>{ for items.iter().map(|i| html! { <li>{ narration(i) }</li> }) }</ol>
        },
        Block::List { start: None, items } => html! {
            <ul>{ for items.iter().map(|i| html! { <li>{ narration(i) }</li> }) }</ul>
        },
        Block::Quote(inner) => html! { <blockquote>{ narration(inner) }</blockquote> },
        Block::Code(text) => html! { <pre tabindex="0"><code>{ text }</code></pre> },
        Block::Rule => html! { <hr /> },
    }
}

/// A short text of a lesson with its Markdown shown (code, emphasis, links), when the lessons
/// file rendered it ([`crate::lesson::wire::WireLesson::rich`]); otherwise the text itself:
/// [`crate::lesson::narration::shown`], whose words the native tests read.
pub fn rich(map: &crate::lesson::narration::Rich, text: &str) -> Html {
    inlines(&crate::lesson::narration::shown(map, text))
}

pub fn inlines(items: &[Inline]) -> Html {
    html! { <>{ for items.iter().map(inline) }</> }
}

fn inline(i: &Inline) -> Html {
    match i {
        Inline::Text(t) => html! { { t } },
        Inline::Code(t) => html! { <code>{ t }</code> },
        Inline::Emphasis(c) => html! { <em>{ inlines(c) }</em> },
        Inline::Strong(c) => html! { <strong>{ inlines(c) }</strong> },
        Inline::Link { href, content } => {
            // A link that leaves the app opens with no access back to this page.
            let external = href.starts_with("http:") || href.starts_with("https:");
            html! {
                <a href={href.clone()} rel={external.then_some("noopener noreferrer")}>{ inlines(content) }</a>
            }
        }
        Inline::LineBreak => html! { <br /> },
    }
}
