//! The timeline as a standalone SVG picture: the same layout the page paints, drawn for a
//! document that cannot run the app (a README, a slide, a printed handout).
//!
//! The picture carries its run: the scenario and seed sit in its `<metadata>` (see
//! [`crate::ui::export`]), so opening the file in the app reproduces the run. Everything drawn is
//! bounded by the picture's width, not the run's length: marks and spans thinner than a pixel
//! are merged exactly as the page merges them, and overlaps are drawn as the page's bands.

use std::fmt::Write as _;

use crate::ui::paint::{self, Frame, LaneBox};
use crate::ui::timeline::{self, LaneKind, Layout, MarkKind, SpanKind, Window};
use crate::ui::Outcome;
use crate::world::Micros;

/// The picture's width in pixels unless one is asked for; the height follows from the lanes.
pub const WIDTH: u32 = 1200;
/// The narrowest and widest picture drawn: below the narrowest the lanes' labels leave no room
/// for the run; the widest is bounded as everything else is.
pub const WIDTH_MIN: u32 = 480;
pub const WIDTH_MAX: u32 = 4000;
/// The width of a character of a note's label (10 px type), estimated a little wide so that a
/// label placed by it never runs into what it was kept clear of.
pub const LABEL_CHAR_PX: f64 = 6.0;
/// The room kept between a note's label and its tag or the marks it describes.
const LABEL_GAP: f64 = 8.0;
/// The lane labels' width and the margin on the right.
const FRAME: Frame = Frame::new(150.0, 16.0);
/// A lane: lower than the page's, with the notes' tags over its top rather than in a strip of
/// their own.
const LANE: LaneBox = LaneBox {
    height: 26.0,
    note_band: 0.0,
};
const TOP: f64 = 74.0;
/// The most notes a picture draws (the first ones).
const NOTES_MAX: usize = 24;
/// The most characters of the headline on one line of the picture (a narrower picture takes
/// fewer, so that no line runs off its edge), and the line's height.
const HEADLINE_CHARS: usize = 150;
/// The width of a character of the headline (12 px type), estimated a little wide.
const HEADLINE_CHAR_PX: f64 = 6.6;
const HEADLINE_LINE: f64 = 15.0;

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

/// One mark's shape centred at (x, y), as the page draws it: every kind has its own shape, so
/// colour is never the only carrier.
fn mark_shape(out: &mut String, kind: MarkKind, x: f64, y: f64) {
    let c = paint::mark_colour(kind).light;
    let _ = write!(
        out,
        r#"<path transform="translate({x:.1} {y:.1})" d="{}" "#,
        paint::mark_path(kind)
    );
    let _ = if paint::outlined(kind) {
        writeln!(
            out,
            r#"fill="none" stroke="{c}" stroke-width="{}"/>"#,
            paint::MARK_LINE
        )
    } else if let Some(cut) = paint::mark_cut(kind) {
        writeln!(
            out,
            r#"fill="{c}" stroke="{}" stroke-width="{cut}"/>"#,
            paint::BG.light
        )
    } else {
        writeln!(out, r#"fill="{c}"/>"#)
    };
}

/// The fill of a span kind: its colour, or its hatch's pattern.
fn span_fill(kind: SpanKind) -> String {
    match paint::span_hatch(kind) {
        Some(h) => format!("url(#ls-hatch-{})", h.name),
        None => paint::span_colour(kind).light.to_string(),
    }
}

/// One span's rectangle, filled and outlined as the page draws it, with `title` as its tooltip.
fn span_rect(out: &mut String, kind: SpanKind, (x, y, w, h): (f64, f64, f64, f64), title: &str) {
    let _ = write!(
        out,
        r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{}""#,
        span_fill(kind)
    );
    if let Some(edge) = paint::span_edge(kind) {
        let _ = write!(out, r#" stroke="{}" stroke-width="1""#, edge.light);
    }
    let _ = if title.is_empty() {
        writeln!(out, "/>")
    } else {
        writeln!(out, "><title>{}</title></rect>", xml_escape(title))
    };
}

/// The hatches' patterns, for the picture's `<defs>`.
fn hatch_patterns(out: &mut String) {
    let tile = paint::HATCH_TILE;
    for h in paint::HATCHES {
        let _ = write!(
            out,
            r#"<pattern id="ls-hatch-{}" width="{tile}" height="{tile}" patternUnits="userSpaceOnUse">"#,
            h.name
        );
        if let Some(bg) = h.background {
            let _ = write!(
                out,
                r#"<rect width="{tile}" height="{tile}" fill="{}"/>"#,
                bg.light
            );
        }
        let _ = write!(
            out,
            r#"<path d="{}" fill="none" stroke="{}" stroke-width="{}"/></pattern>"#,
            h.path,
            h.colour.light,
            paint::HATCH_LINE
        );
    }
}

/// The whole run's timeline as SVG, with `metadata` (already XML-safe text) inside it, and a
/// link to the live run when `link` is given.
pub fn timeline_svg(title: &str, outcome: &Outcome, metadata: &str, link: Option<&str>) -> String {
    timeline_svg_at(title, outcome, metadata, link, WIDTH)
}

/// [`timeline_svg`] drawn `width` pixels wide (clamped to [`WIDTH_MIN`]..=[`WIDTH_MAX`]): the
/// type keeps its size, so a picture drawn at the width it is shown (830 px in a README on
/// GitHub) reads as the page does, where a wider one shrunk to fit would not.
pub fn timeline_svg_at(
    title: &str,
    outcome: &Outcome,
    metadata: &str,
    link: Option<&str>,
    width: u32,
) -> String {
    let layout: &Layout = &outcome.layout;
    let end = layout.end.max(1);
    let width_px = width.clamp(WIDTH_MIN, WIDTH_MAX);
    let width = f64::from(width_px);
    let plot_w = FRAME.plot(width);
    let lanes = layout.lanes.len() as f64;
    // The headline is shown whole, wrapped onto as many lines as it needs (a long one names
    // two grants and their services), and the picture grows to make room.
    let headline = wrap(&outcome.headline, headline_chars(width_px));
    let top = TOP + (headline.len().saturating_sub(1)) as f64 * HEADLINE_LINE;
    let legend_y = top + lanes * LANE.height + 28.0;
    // The legend's marks: the usual few, and the majority protocol's own where this run has
    // them (a picture of any other run is not made longer by marks it cannot show).
    let present = |k: MarkKind| {
        layout
            .lanes
            .iter()
            .any(|l| l.marks.iter().any(|m| m.kind == k))
    };
    let marks: Vec<MarkKind> = [
        MarkKind::Request,
        MarkKind::Read,
        MarkKind::Write,
        MarkKind::Rejected,
        MarkKind::LostUpdate,
    ]
    .into_iter()
    .chain(
        [
            MarkKind::QuorumMissed,
            MarkKind::ValiditySpent,
            MarkKind::RestartedEmpty,
        ]
        .into_iter()
        .filter(|k| present(*k)),
    )
    .collect();
    let legend_words: Vec<&str> = LEGEND_SPANS
        .iter()
        .map(|k| k.meaning())
        .chain(marks.iter().map(|k| k.meaning()))
        .chain(std::iter::once(LEGEND_OVERLAP))
        .collect();
    // The picture ends below the legend's last row: no empty band under it.
    let rows = legend_rows(&legend_words, FRAME.right(width));
    let height = legend_y + (rows - 1) as f64 * LEGEND_ROW + LEGEND_BOTTOM;
    let us_per_px = end as f64 / plot_w;
    let x_of = |t: Micros| FRAME.x(t.min(end), Window::all(end), width);
    let lane_y = |i: usize| top + i as f64 * LANE.height;
    let fg = paint::FG.light;

    let mut s = String::with_capacity(64 * 1024);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{width_px}" height="{height:.0}" viewBox="0 0 {width_px} {height:.0}" role="img" aria-labelledby="ls-title ls-desc" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">"#
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
    s.push_str("<defs>");
    hatch_patterns(&mut s);
    s.push_str("</defs>\n");
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="{}"/>"#,
        paint::BG.light
    );
    let _ = writeln!(
        s,
        r#"<text x="12" y="22" font-size="15" font-weight="600" fill="{fg}">{}</text>"#,
        xml_escape(title)
    );
    let broken = outcome.verdict.exclusion == crate::monitor::Exclusion::Broken
        || outcome.verdict.integrity == crate::monitor::Integrity::Corrupted;
    let _ = write!(
        s,
        r#"<text x="12" y="42" fill="{}">"#,
        if broken { paint::BROKEN } else { paint::HOLDS }.light
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
    let step = paint::tick_step(end, plot_w);
    let mut t = 0;
    while t <= end {
        let x = x_of(t);
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{}"/><text x="{x:.1}" y="{:.1}" fill="{}" font-size="10" text-anchor="middle">{}</text>"#,
            top - 6.0,
            top + lanes * LANE.height,
            paint::GRID.light,
            top - 9.0,
            paint::MUTED.light,
            paint::tick_label(t)
        );
        t += step;
    }

    // Lanes, their spans and marks.
    for (i, lane) in layout.lanes.iter().enumerate() {
        let y = lane_y(i);
        let _ = writeln!(
            s,
            r#"<rect x="0" y="{y:.1}" width="{width_px}" height="{}" fill="{}"/>"#,
            LANE.height,
            if i % 2 == 0 {
                paint::LANE_EVEN
            } else {
                paint::LANE_ODD
            }
            .light
        );
        let weight = if lane.kind == LaneKind::Resource {
            "600"
        } else {
            "400"
        };
        let _ = writeln!(
            s,
            r#"<text x="8" y="{:.1}" fill="{fg}" font-weight="{weight}">{}</text>"#,
            y + LANE.height / 2.0 + 4.0,
            xml_escape(&clip(&lane.label, 22))
        );
        for span in timeline::visible_spans(&lane.spans, us_per_px) {
            let x0 = x_of(span.from);
            let w = (x_of(span.to) - x0).max(1.0);
            let (top, h) = LANE.span(span.kind, y);
            let title = if span.label.is_empty() {
                span.kind.meaning()
            } else {
                &span.label
            };
            span_rect(&mut s, span.kind, (x0, top, w, h), title);
        }
        for mark in timeline::visible_marks(&lane.marks, us_per_px) {
            mark_shape(&mut s, mark.kind, x_of(mark.at), LANE.mid(y));
        }
    }

    // Overlaps, as the page marks them: a hatched cell in each lane involved, joined across the
    // lanes that are not.
    let violation = paint::VIOLATION.light;
    for band in layout.bands(Window::all(end), us_per_px) {
        let x0 = x_of(band.from);
        let w = (x_of(band.to) - x0).max(2.0);
        let text = match layout.single(&band) {
            Some(o) => o.text.clone(),
            None => format!("{} overlapping holds", band.count),
        };
        let _ = writeln!(s, "<g><title>{}</title>", xml_escape(&text));
        let marking = timeline::marking(&band.lanes);
        for lane in &marking.cells {
            let _ = writeln!(
                s,
                r#"<rect x="{x0:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="url(#ls-hatch-violation)" stroke="{violation}" stroke-width="{}"/>"#,
                lane_y(*lane) + 1.0,
                LANE.height - 2.0,
                paint::VIOLATION_LINE
            );
        }
        for (upper, lower) in &marking.joins {
            let _ = writeln!(
                s,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{violation}" stroke-width="{}"/>"#,
                x0 + 1.0,
                lane_y(*upper) + LANE.height - 1.0,
                x0 + 1.0,
                lane_y(*lower) + 1.0,
                paint::JOIN_LINE
            );
        }
        let _ = writeln!(s, "</g>");
    }

    // The notes the page draws: each decisive moment's tag, with its letter, and its short
    // label where it fits (see [`place_label`]): beside the marks it describes, never over
    // them, never over another label of its lane, never past the picture's edge, shortened by
    // whole words only. The full sentence is the tag's title. At most NOTES_MAX, the first
    // ones, as a picture has no zoom.
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); layout.lanes.len()];
    let bounds = (FRAME.x(0, Window::all(end), width), FRAME.right(width));
    for n in layout.notes.iter().take(NOTES_MAX) {
        let x = x_of(n.tag_at());
        let y = lane_y(n.anchor) + 2.0;
        let _ = write!(
            s,
            r##"<g class="note" data-note="{}"><title>{}</title><rect x="{:.1}" y="{y:.1}" width="12" height="12" rx="2" fill="{}"/><text x="{x:.1}" y="{:.1}" fill="{}" font-size="9" font-weight="700" text-anchor="middle">{}</text>"##,
            n.kind.name(),
            xml_escape(&n.text),
            x - 6.0,
            paint::note_colour(n.kind).light,
            y + 9.0,
            paint::BG.light,
            n.kind.letter()
        );
        let described = (x_of(n.from).min(x) - 6.0, x_of(n.to).max(x) + 6.0);
        let lane = n.anchor.min(taken.len().saturating_sub(1));
        if let Some(taken) = taken.get_mut(lane) {
            if let Some(label) = place_label(&n.short, described, bounds, taken) {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" fill="{fg}" font-size="10">{}</text>"#,
                    label.from,
                    y + 9.0,
                    xml_escape(&label.text)
                );
                taken.push((label.from, label.to));
            }
        }
        let _ = writeln!(s, "</g>");
    }

    // The legend: every span kind and the marks above, by shape and word.
    let mut x = LEGEND_LEFT;
    let mut y = legend_y;
    let mut item = |s: &mut String, draw: &dyn Fn(&mut String, f64, f64), words: &str| {
        let w = legend_item_width(words);
        if x + w > FRAME.right(width) {
            x = LEGEND_LEFT;
            y += LEGEND_ROW;
        }
        draw(s, x, y);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" fill="{fg}" font-size="11">{}</text>"#,
            x + 16.0,
            y + 4.0,
            xml_escape(words)
        );
        x += w;
    };
    for kind in LEGEND_SPANS {
        item(
            &mut s,
            &|s, x, y| span_rect(s, kind, (x, y - 4.0, 12.0, 8.0), ""),
            kind.meaning(),
        );
    }
    for kind in marks {
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
                r#"<rect x="{x:.1}" y="{:.1}" width="12" height="10" fill="url(#ls-hatch-violation)" stroke="{violation}"/>"#,
                y - 5.0
            );
        },
        LEGEND_OVERLAP,
    );
    if let Some(link) = link {
        let _ = writeln!(
            s,
            r#"<a xlink:href="{0}" href="{0}" target="_blank"><text x="{1:.1}" y="22" text-anchor="end" fill="{2}" text-decoration="underline">Open this run in Lockstep</text></a>"#,
            xml_escape(link),
            FRAME.right(width),
            paint::FOCUS.light
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The span kinds the picture's legend shows, in order.
const LEGEND_SPANS: [SpanKind; 6] = [
    SpanKind::Waiting,
    SpanKind::Believed,
    SpanKind::Held,
    SpanKind::Paused,
    SpanKind::Outage,
    SpanKind::Partition,
];
/// The legend's last entry, the overlap's hatch.
const LEGEND_OVERLAP: &str = "exclusion broken: marked on each lane involved";
const LEGEND_LEFT: f64 = 12.0;
const LEGEND_ROW: f64 = 18.0;
/// The room under the centre of the legend's last row: its words and a margin.
const LEGEND_BOTTOM: f64 = 16.0;

/// The most characters of the headline on one line of a picture `width` pixels wide.
pub fn headline_chars(width: u32) -> usize {
    let room = f64::from(width.clamp(WIDTH_MIN, WIDTH_MAX)) - 24.0;
    ((room / HEADLINE_CHAR_PX) as usize).min(HEADLINE_CHARS)
}

/// A note's label as placed: its text, and where it starts and ends along the picture.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub text: String,
    pub from: f64,
    pub to: f64,
}

/// Where a note's label goes: right of the marks it describes (`described`, the span of its
/// tag and its events), else left of them, within `bounds` (the plot's left edge and the
/// picture's right one) and clear of the labels already `taken` in its lane. A label that fits
/// nowhere whole loses whole words from its end (with an ellipsis), never part of a name, and
/// keeps at least two: one word and an ellipsis ("fast-1…") says nothing, so a label that
/// cannot keep two is not drawn (the tag's letter stays, and its title has the sentence).
pub fn place_label(
    short: &str,
    described: (f64, f64),
    bounds: (f64, f64),
    taken: &[(f64, f64)],
) -> Option<Label> {
    let words: Vec<&str> = short.split_whitespace().collect();
    let free = |from: f64, to: f64| {
        from >= bounds.0 && to <= bounds.1 && taken.iter().all(|&(a, b)| to <= a || from >= b)
    };
    // Every loop here is bounded by the label's word count, a handful.
    for keep in (words.len().min(2)..=words.len()).rev() {
        let mut text = words[..keep].join(" ");
        if keep < words.len() {
            text.push('…');
        }
        let w = text.chars().count() as f64 * LABEL_CHAR_PX;
        let right = described.1 + LABEL_GAP;
        if free(right, right + w) {
            return Some(Label {
                text,
                from: right,
                to: right + w,
            });
        }
        let left = described.0 - LABEL_GAP - w;
        if free(left, left + w) {
            return Some(Label {
                text,
                from: left,
                to: left + w,
            });
        }
    }
    None
}

/// How wide a legend entry is drawn: its swatch and its words.
fn legend_item_width(words: &str) -> f64 {
    22.0 + words.len() as f64 * 6.2
}

/// How many rows the legend's entries take up to `right`, laid out as the picture draws them.
fn legend_rows(words: &[&str], right: f64) -> usize {
    let mut x = LEGEND_LEFT;
    let mut rows = 1;
    for w in words {
        let width = legend_item_width(w);
        if x + width > right {
            x = LEGEND_LEFT;
            rows += 1;
        }
        x += width;
    }
    rows
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

/// At most `n` characters, with an ellipsis when cut.
fn clip(text: &str, n: usize) -> String {
    let mut out: String = text.chars().take(n).collect();
    if text.chars().count() > n {
        out.push('…');
    }
    out
}
