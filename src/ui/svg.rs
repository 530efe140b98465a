//! The timeline as a standalone SVG picture: the same layout the page paints, drawn for a
//! document that cannot run the app (a README, a slide, a printed handout).
//!
//! The picture carries its run: the scenario and seed sit in its `<metadata>` (see
//! [`crate::ui::export`]), so opening the file in the app reproduces the run. Everything drawn is
//! bounded by the picture's width, not the run's length: marks and spans thinner than a pixel
//! are merged exactly as the page merges them, and overlaps are drawn as the page's bands.

use std::fmt::Write as _;

use crate::ui::timeline::{self, LaneKind, Layout, MarkKind, SpanKind, Window};
use crate::ui::Outcome;
use crate::world::Micros;

/// The picture's width in pixels; the height follows from the lanes.
pub const WIDTH: u32 = 1200;
const LABEL_W: f64 = 150.0;
const LANE_H: f64 = 26.0;
const TOP: f64 = 74.0;
/// The most notes a picture draws (the first ones).
const NOTES_MAX: usize = 24;
/// The most characters of the headline on one line of the picture, and the line's height.
const HEADLINE_CHARS: usize = 150;
const HEADLINE_LINE: f64 = 15.0;
const RIGHT: f64 = 16.0;

/// Escapes text for XML content and attribute values.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters other than tab and newlines are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn span_colour(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Waiting => "#8a8f98",
        SpanKind::Believed => "#0072b2",
        SpanKind::Paused => "#cc79a7",
        SpanKind::Held => "#56b4e9",
        SpanKind::Outage => "#6b6b6b",
        SpanKind::Partition => "#e69f00",
    }
}

fn mark_colour(kind: MarkKind) -> &'static str {
    match kind {
        MarkKind::Read => "#009e73",
        MarkKind::Write => "#0072b2",
        MarkKind::Rejected => "#1b1b1b",
        MarkKind::LostUpdate => "#d55e00",
        MarkKind::Request | MarkKind::Queued | MarkKind::Aborted | MarkKind::MessageLost => {
            "#555555"
        }
        _ => "#5a3d8a",
    }
}

/// One mark's shape centred at (x, y). Shapes differ by kind, so colour is never the only
/// carrier.
fn mark_shape(out: &mut String, kind: MarkKind, x: f64, y: f64) {
    let c = mark_colour(kind);
    let _ = match kind {
        MarkKind::Read => writeln!(
            out,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="#fff" stroke="{c}" stroke-width="1.5"/>"##
        ),
        MarkKind::Write => writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{c}"/>"#
        ),
        MarkKind::Rejected => writeln!(
            out,
            r#"<path d="M{:.1} {:.1}l7 7m0 -7l-7 7" stroke="{c}" stroke-width="2"/>"#,
            x - 3.5,
            y - 3.5
        ),
        MarkKind::LostUpdate => writeln!(
            out,
            r#"<path d="M{x:.1} {:.1}l5 8h-10z" fill="{c}"/>"#,
            y - 5.0
        ),
        MarkKind::Request => writeln!(
            out,
            r#"<path d="M{x:.1} {:.1}v10" stroke="{c}" stroke-width="1.5"/>"#,
            y - 5.0
        ),
        _ => writeln!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="5" height="5" fill="{c}" transform="rotate(45 {x:.1} {y:.1})"/>"#,
            x - 2.5,
            y - 2.5
        ),
    };
}

/// A round step for the time axis: about eight ticks across the run.
fn tick_step(end: Micros) -> Micros {
    let rough = (end / 8).max(1);
    let mut step: Micros = 1;
    loop {
        for m in [1, 2, 5] {
            if step * m >= rough {
                return step * m;
            }
        }
        step *= 10;
    }
}

fn time_label(t: Micros) -> String {
    if t % 1_000_000 == 0 {
        format!("{} s", t / 1_000_000)
    } else if t % 1000 == 0 {
        format!("{} ms", t / 1000)
    } else {
        format!("{:.3} ms", t as f64 / 1000.0)
    }
}

/// The whole run's timeline as SVG, with `metadata` (already XML-safe text) inside it, and a
/// link to the live run when `link` is given.
pub fn timeline_svg(title: &str, outcome: &Outcome, metadata: &str, link: Option<&str>) -> String {
    let layout: &Layout = &outcome.layout;
    let end = layout.end.max(1);
    let plot_w = f64::from(WIDTH) - LABEL_W - RIGHT;
    let lanes = layout.lanes.len() as f64;
    // The headline is shown whole, wrapped onto as many lines as it needs (a long one names
    // two grants and their services), and the picture grows to make room.
    let headline = wrap(&outcome.headline, HEADLINE_CHARS);
    let top = TOP + (headline.len().saturating_sub(1)) as f64 * HEADLINE_LINE;
    let legend_y = top + lanes * LANE_H + 28.0;
    let height = legend_y + 64.0;
    let us_per_px = end as f64 / plot_w;
    let x_of = |t: Micros| LABEL_W + (t.min(end) as f64 / end as f64) * plot_w;
    let lane_y = |i: usize| top + i as f64 * LANE_H;

    let mut s = String::with_capacity(64 * 1024);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" role="img" aria-labelledby="ls-title ls-desc" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<title id="ls-title">{}</title>"#, xml_escape(title));
    let _ = writeln!(
        s,
        r#"<desc id="ls-desc">{} Seed {}, {} events.</desc>"#,
        xml_escape(&outcome.headline),
        outcome.seed,
        outcome.events.len()
    );
    let _ = writeln!(s, r#"<metadata id="lockstep-run">{metadata}</metadata>"#);
    let _ = writeln!(
        s,
        r##"<defs><pattern id="ls-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#d55e00" fill-opacity="0.18"/><line x1="0" y1="0" x2="0" y2="6" stroke="#d55e00" stroke-width="2"/></pattern></defs>"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="12" y="22" font-size="15" font-weight="600" fill="#1b1b1b">{}</text>"##,
        xml_escape(title)
    );
    let broken = outcome.verdict.exclusion == crate::monitor::Exclusion::Broken
        || outcome.verdict.integrity == crate::monitor::Integrity::Corrupted;
    let _ = write!(
        s,
        r##"<text x="12" y="42" fill="{}">"##,
        if broken { "#b33c00" } else { "#006b4f" }
    );
    for (k, line) in headline.iter().enumerate() {
        let _ = write!(
            s,
            r##"<tspan x="12" dy="{}">{}</tspan>"##,
            if k == 0 { 0.0 } else { HEADLINE_LINE },
            xml_escape(line)
        );
    }
    let _ = writeln!(s, "</text>");

    // The time axis.
    let step = tick_step(end);
    let mut t = 0;
    while t <= end {
        let x = x_of(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#dde0e4"/><text x="{x:.1}" y="{:.1}" fill="#555555" font-size="10" text-anchor="middle">{}</text>"##,
            top - 6.0,
            top + lanes * LANE_H,
            top - 9.0,
            time_label(t)
        );
        t += step;
    }

    // Lanes, their spans and marks.
    for (i, lane) in layout.lanes.iter().enumerate() {
        let y = lane_y(i);
        let _ = writeln!(
            s,
            r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{LANE_H}" fill="{}"/>"##,
            if i % 2 == 0 { "#fafbfc" } else { "#f0f2f5" }
        );
        let weight = if lane.kind == LaneKind::Resource {
            "600"
        } else {
            "400"
        };
        let _ = writeln!(
            s,
            r##"<text x="8" y="{:.1}" fill="#1b1b1b" font-weight="{weight}">{}</text>"##,
            y + LANE_H / 2.0 + 4.0,
            xml_escape(&clip(&lane.label, 22))
        );
        for span in timeline::visible_spans(&lane.spans, us_per_px) {
            let x0 = x_of(span.from);
            let w = (x_of(span.to) - x0).max(1.0);
            let (top, h) = match span.kind {
                SpanKind::Waiting => (y + LANE_H / 2.0 - 1.5, 3.0),
                SpanKind::Partition | SpanKind::Outage => (y + 2.0, LANE_H - 4.0),
                _ => (y + 5.0, LANE_H - 10.0),
            };
            let opacity = if matches!(span.kind, SpanKind::Partition | SpanKind::Outage) {
                r#" fill-opacity="0.45""#
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r#"<rect x="{x0:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{}"{opacity}><title>{}</title></rect>"#,
                span_colour(span.kind),
                xml_escape(&if span.label.is_empty() {
                    span.kind.meaning().to_string()
                } else {
                    span.label.clone()
                })
            );
        }
        for mark in timeline::visible_marks(&lane.marks, us_per_px) {
            mark_shape(&mut s, mark.kind, x_of(mark.at), y + LANE_H / 2.0);
        }
    }

    // Overlaps, on the lanes involved only, joined by an outline from the first to the last.
    for band in layout.bands(Window::all(end), us_per_px) {
        let x0 = x_of(band.from);
        let w = (x_of(band.to) - x0).max(2.0);
        let text = match layout.single(&band) {
            Some(o) => o.text.clone(),
            None => format!("{} overlapping holds", band.count),
        };
        let _ = writeln!(s, "<g><title>{}</title>", xml_escape(&text));
        for lane in &band.lanes {
            let _ = writeln!(
                s,
                r##"<rect x="{x0:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="url(#ls-hatch)" stroke="#d55e00"/>"##,
                lane_y(*lane) + 1.0,
                LANE_H - 2.0
            );
        }
        if let (Some(first), Some(last)) = (band.lanes.first(), band.lanes.last()) {
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#d55e00" stroke-width="2"/>"##,
                x0 + w / 2.0,
                lane_y(*first) + LANE_H - 1.0,
                x0 + w / 2.0,
                lane_y(*last) + 1.0
            );
        }
        let _ = writeln!(s, "</g>");
    }

    // The notes the page draws: each decisive moment's tag, with its letter, and its short
    // label where it does not run into the last label of its lane; the full sentence is the
    // tag's title. At most NOTES_MAX, the first ones, as a picture has no zoom.
    let mut label_end: Vec<f64> = vec![0.0; layout.lanes.len()];
    for n in layout.notes.iter().take(NOTES_MAX) {
        let x = x_of(n.tag_at());
        let y = lane_y(n.anchor) + 2.0;
        let _ = write!(
            s,
            r##"<g class="note" data-note="{}"><title>{}</title><rect x="{:.1}" y="{y:.1}" width="12" height="12" rx="2" fill="{}"/><text x="{x:.1}" y="{:.1}" fill="#ffffff" font-size="9" font-weight="700" text-anchor="middle">{}</text>"##,
            n.kind.name(),
            xml_escape(&n.text),
            x - 6.0,
            note_colour(n.kind),
            y + 9.0,
            n.kind.letter()
        );
        let label = clip(&n.short, 40);
        let lane = n.anchor.min(label_end.len().saturating_sub(1));
        if x + 8.0 > label_end.get(lane).copied().unwrap_or(0.0) {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" fill="#1b1b1b" font-size="10">{}</text>"##,
                x + 8.0,
                y + 9.0,
                xml_escape(&label)
            );
            if let Some(end) = label_end.get_mut(lane) {
                *end = x + 8.0 + label.chars().count() as f64 * 5.6;
            }
        }
        let _ = writeln!(s, "</g>");
    }

    // The legend: every span and mark kind, by shape and word.
    let mut x = 12.0;
    let mut y = legend_y;
    let mut item = |s: &mut String, draw: &dyn Fn(&mut String, f64, f64), words: &str| {
        let w = 22.0 + words.len() as f64 * 6.2;
        if x + w > f64::from(WIDTH) - RIGHT {
            x = 12.0;
            y += 18.0;
        }
        draw(s, x, y);
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" fill="#1b1b1b" font-size="11">{}</text>"##,
            x + 16.0,
            y + 4.0,
            xml_escape(words)
        );
        x += w;
    };
    for kind in [
        SpanKind::Waiting,
        SpanKind::Believed,
        SpanKind::Held,
        SpanKind::Paused,
        SpanKind::Outage,
        SpanKind::Partition,
    ] {
        item(
            &mut s,
            &|s, x, y| {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{:.1}" width="12" height="8" fill="{}"/>"#,
                    y - 4.0,
                    span_colour(kind)
                );
            },
            kind.meaning(),
        );
    }
    for kind in [
        MarkKind::Request,
        MarkKind::Read,
        MarkKind::Write,
        MarkKind::Rejected,
        MarkKind::LostUpdate,
    ] {
        item(
            &mut s,
            &|s, x, y| mark_shape(s, kind, x + 6.0, y),
            kind.meaning(),
        );
    }
    item(
        &mut s,
        &|s, x, y| {
            let _ = writeln!(
                s,
                r##"<rect x="{x:.1}" y="{:.1}" width="12" height="10" fill="url(#ls-hatch)" stroke="#d55e00"/>"##,
                y - 5.0
            );
        },
        "exclusion broken: marked on each lane involved",
    );
    if let Some(link) = link {
        let _ = writeln!(
            s,
            r##"<a xlink:href="{0}" href="{0}" target="_blank"><text x="{1:.1}" y="22" text-anchor="end" fill="#0b5cad" text-decoration="underline">Open this run in Lockstep</text></a>"##,
            xml_escape(link),
            f64::from(WIDTH) - RIGHT
        );
    }
    s.push_str("</svg>\n");
    s
}

/// At most `n` characters, with an ellipsis when cut.
/// The colour of a note's tag, as the page's style sheet gives it in its light theme.
fn note_colour(kind: crate::ui::notes::NoteKind) -> &'static str {
    use crate::ui::notes::NoteKind;
    match kind {
        NoteKind::FirstOverlap | NoteKind::LostUpdate => "#b33c00",
        NoteKind::Rejection => "#1b1b1b",
        NoteKind::Cycle => "#5a3d8a",
        NoteKind::Unavailable => "#6b6b6b",
    }
}

/// Words in lines of at most `n` characters (a longer word gets a line of its own).
fn wrap(text: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn clip(text: &str, n: usize) -> String {
    let mut out: String = text.chars().take(n).collect();
    if text.chars().count() > n {
        out.push('…');
    }
    out
}
