//! The timeline drawn as SVG from [`Layout`]: one lane per client, service and resource, a
//! fault lane, and the exclusion violations drawn across the lanes they span.
//!
//! The drawing depends only on the layout, the width and the diff flags, so moving the
//! playhead (a separate element) never redraws it.

use std::rc::Rc;

use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::Dispatch;
use crate::ui::timeline::{visible_marks, visible_spans, LaneKind, Layout, MarkKind, SpanKind};
use crate::ui::Action;
use crate::world::Micros;

/// Width of the lane labels on the left.
pub const GUTTER: u32 = 112;
const RIGHT: u32 = 10;
const AXIS: u32 = 24;
const LANE: u32 = 30;

/// The x coordinate of a time on a timeline of the given width.
pub fn x_of(t: Micros, end: Micros, width: u32) -> f64 {
    let span = width.saturating_sub(GUTTER + RIGHT).max(1) as f64;
    GUTTER as f64 + span * (t as f64 / end.max(1) as f64)
}

/// The shape of each mark, centred on the origin. Every meaning has its own shape as well as
/// its own colour, so that nothing depends on telling colours apart.
fn mark_path(kind: MarkKind) -> &'static str {
    match kind {
        MarkKind::Request => "M0,-5 L5,4 L-5,4 Z",
        MarkKind::Aborted => "M-4,-4 L4,4 M4,-4 L-4,4",
        MarkKind::Queued => "M-3.5,-3.5 H3.5 V3.5 H-3.5 Z",
        MarkKind::Refused => "M-5,0 H5 M0,-5 A5,5 0 1 1 0,5 A5,5 0 1 1 0,-5",
        MarkKind::Released => "M0,5 L5,-4 L-5,-4 Z",
        MarkKind::Expired => "M-4,-5 H4 L-4,5 H4 Z",
        MarkKind::Superseded => "M0,-5 L5,0 L0,5 L-5,0 Z",
        MarkKind::Read => "M-3.5,0 A3.5,3.5 0 1 1 3.5,0 A3.5,3.5 0 1 1 -3.5,0",
        MarkKind::Write => "M-4.5,0 A4.5,4.5 0 1 1 4.5,0 A4.5,4.5 0 1 1 -4.5,0 Z",
        MarkKind::Rejected => "M-5,-5 L5,5 M5,-5 L-5,5 M-5,-5 H5 V5 H-5 Z",
        MarkKind::LostUpdate => "M0,-7 L7,6 L-7,6 Z M0,-2 V2 M0,4 V4.5",
        MarkKind::MessageLost => "M-3,-3 L3,3 M3,-3 L-3,3",
        MarkKind::Migrated => "M-5,0 H4 M1,-4 L5,0 L1,4",
    }
}

/// Marks drawn as outlines rather than filled shapes.
fn outlined(kind: MarkKind) -> bool {
    matches!(
        kind,
        MarkKind::Aborted
            | MarkKind::Queued
            | MarkKind::Refused
            | MarkKind::Read
            | MarkKind::Rejected
            | MarkKind::MessageLost
            | MarkKind::Migrated
    )
}

/// The shapes and patterns every timeline and the legend refer to, defined once per page.
#[function_component(Defs)]
pub fn defs() -> Html {
    html! {
        <svg class="defs" width="0" height="0" aria-hidden="true" focusable="false">
        <defs>
            { for MarkKind::ALL.iter().map(|k| html! {
                <path id={format!("mk-{}", k.name())} d={mark_path(*k)} />
            }) }
            <pattern id="hatch-violation" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                <rect width="6" height="6" class="hatch-bg-violation" />
                <line x1="0" y1="0" x2="0" y2="6" class="hatch-line-violation" stroke-width="3" />
            </pattern>
            <pattern id="hatch-outage" width="6" height="6" patternUnits="userSpaceOnUse">
                <path d="M0,0 L6,6 M6,0 L0,6" class="hatch-line-outage" stroke-width="1" />
            </pattern>
            <pattern id="hatch-partition" width="8" height="8" patternUnits="userSpaceOnUse">
                <path d="M0,4 L2,2 L4,4 L6,2 L8,4" class="hatch-line-partition" fill="none" stroke-width="1.2" />
            </pattern>
            <pattern id="hatch-paused" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">
                <line x1="0" y1="0" x2="0" y2="5" class="hatch-line-paused" stroke-width="2" />
            </pattern>
        </defs>
        </svg>
    }
}

/// A small drawing of a mark or span kind, for the legend.
fn swatch_mark(kind: MarkKind) -> Html {
    html! {
        <svg class="swatch" width="18" height="18" viewBox="-9 -9 18 18" aria-hidden="true">
            <use href={format!("#mk-{}", kind.name())}
                class={classes!("mark", format!("mark-{}", kind.name()), outlined(kind).then_some("outlined"))} />
        </svg>
    }
}

fn swatch_span(kind: SpanKind) -> Html {
    let (y, h) = span_geometry(kind, 0);
    html! {
        <svg class="swatch" width="28" height="18" viewBox={format!("0 {} 28 18", LANE as f64 / 2.0 - 9.0)} aria-hidden="true">
            <rect x="1" y={y.to_string()} width="26" height={h.to_string()} class={classes!("span", format!("span-{}", kind.name()))} />
        </svg>
    }
}

/// The vertical place of a span kind inside a lane starting at `top`.
fn span_geometry(kind: SpanKind, top: u32) -> (f64, f64) {
    let top = top as f64;
    let lane = LANE as f64;
    match kind {
        SpanKind::Waiting => (top + lane / 2.0 - 2.0, 4.0),
        SpanKind::Believed | SpanKind::Held => (top + 7.0, lane - 14.0),
        SpanKind::Paused | SpanKind::Outage | SpanKind::Partition => (top + 2.0, lane - 4.0),
    }
}

/// Evenly spaced, round times for the axis, about every 110 pixels.
fn ticks(end: Micros, width: u32) -> Vec<Micros> {
    let usable = width.saturating_sub(GUTTER + RIGHT).max(1) as f64;
    let per_px = end.max(1) as f64 / usable;
    let want = per_px * 110.0;
    let mut step: Micros = 1_000;
    for s in [
        1_000u64,
        2_000,
        5_000,
        10_000,
        20_000,
        50_000,
        100_000,
        200_000,
        250_000,
        500_000,
        1_000_000,
        2_000_000,
        5_000_000,
        10_000_000,
        30_000_000,
        60_000_000,
        300_000_000,
        600_000_000,
    ] {
        step = s;
        if s as f64 >= want {
            break;
        }
    }
    (0..=end / step).map(|i| i * step).collect()
}

fn tick_label(t: Micros) -> String {
    if t % 1_000_000 == 0 {
        format!("{}s", t / 1_000_000)
    } else if t % 100_000 == 0 {
        format!("{:.1}s", t as f64 / 1e6)
    } else {
        format!("{:.2}s", t as f64 / 1e6)
    }
}

#[derive(Properties)]
pub struct TimelineProps {
    pub id: AttrValue,
    pub title: AttrValue,
    pub layout: Rc<Layout>,
    /// The end of the shared time axis (the longer of the runs when comparing).
    pub end: Micros,
    pub width: u32,
    /// Events of this run that the compared run does not have.
    pub diff: Option<Rc<Vec<bool>>>,
    /// Where the compared runs first differ.
    pub divergence: Option<Micros>,
    pub dispatch: Dispatch,
}

impl PartialEq for TimelineProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.layout, &o.layout)
            && self.id == o.id
            && self.end == o.end
            && self.width == o.width
            && self.divergence == o.divergence
            && match (&self.diff, &o.diff) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b,
                _ => false,
            }
    }
}

/// Reads the event index a hovered or focused element carries in `data-e`.
fn event_of(target: Option<web_sys::EventTarget>) -> Option<usize> {
    let el = target?.dyn_into::<web_sys::Element>().ok()?;
    let holder = el.closest("[data-e]").ok()??;
    holder.get_attribute("data-e")?.parse().ok()
}

#[function_component(Timeline)]
pub fn timeline(p: &TimelineProps) -> Html {
    let layout = &p.layout;
    let width = p.width.max(300);
    let height = AXIS + LANE * layout.lanes.len() as u32 + 4;
    let x = |t: Micros| x_of(t, p.end, width);
    let us_per_px = p.end.max(1) as f64 / width.saturating_sub(GUTTER + RIGHT).max(1) as f64;

    // One listener for the whole drawing: hovering or focusing anything that names an event
    // shows that event's details.
    let onmouseover = {
        let d = p.dispatch.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some(i) = event_of(e.target()) {
                d.dispatch(Action::Select(Some(i)));
            }
        })
    };
    let onfocusin = {
        let d = p.dispatch.clone();
        Callback::from(move |e: FocusEvent| {
            if let Some(i) = event_of(e.target()) {
                d.dispatch(Action::Select(Some(i)));
            }
        })
    };

    let flagged = |event: usize| p.diff.as_ref().is_some_and(|d| d.get(event) == Some(&true));

    let axis = html! {
        <g class="axis">
            { for ticks(p.end, width).into_iter().map(|t| {
                let xt = x(t);
                html! {
                    <g>
                        <line x1={xt.to_string()} x2={xt.to_string()} y1={(AXIS - 6).to_string()} y2={height.to_string()} class="gridline" />
                        <text x={(xt + 2.0).to_string()} y={(AXIS - 10).to_string()} class="tick">{ tick_label(t) }</text>
                    </g>
                }
            }) }
        </g>
    };

    let lanes = layout.lanes.iter().enumerate().map(|(i, lane)| {
        let top = AXIS + LANE * i as u32;
        let mid = top as f64 + LANE as f64 / 2.0;
        let kind = match lane.kind {
            LaneKind::Client => "client",
            LaneKind::Service => "service",
            LaneKind::Resource => "resource",
            LaneKind::Faults => "faults",
        };
        let spans = visible_spans(&lane.spans, us_per_px);
        let marks = visible_marks(&lane.marks, us_per_px);
        // A changed event in a busy column must still be seen, so flagged marks are drawn
        // even where the thinning above dropped them.
        let rings: Vec<(Micros, usize)> = match &p.diff {
            Some(_) => {
                let mut out: Vec<(Micros, usize)> = lane
                    .marks
                    .iter()
                    .filter(|m| flagged(m.event))
                    .map(|m| (m.at, m.event))
                    .chain(lane.spans.iter().filter(|s| flagged(s.event)).map(|s| (s.from, s.event)))
                    .collect();
                out.sort_unstable();
                out.dedup_by_key(|(at, _)| (*at as f64 / us_per_px / 3.0) as i64);
                out
            }
            None => Vec::new(),
        };
        html! {
            <g class={classes!("lane", format!("lane-{kind}"))} data-lane={lane.label.clone()}>
                <rect x="0" y={top.to_string()} width={width.to_string()} height={LANE.to_string()} class={if i % 2 == 0 { "lane-bg even" } else { "lane-bg odd" }} />
                <text x="6" y={(mid + 4.0).to_string()} class="lane-label">
                    <title>{ &lane.label }</title>
                    { shorten(&lane.label, 16) }
                </text>
                { for spans.iter().map(|s| {
                    let (y, h) = span_geometry(s.kind, top);
                    let x0 = x(s.from);
                    let w = (x(s.to) - x0).max(1.5);
                    let room = (w / 6.5) as usize;
                    html! {
                        <g data-e={s.event.to_string()}>
                            <rect x={format!("{x0:.1}")} y={y.to_string()} width={format!("{w:.1}")} height={h.to_string()}
                                class={classes!("span", format!("span-{}", s.kind.name()))} />
                            if !s.label.is_empty() && room >= 6 && matches!(s.kind, SpanKind::Held) {
                                <text x={format!("{:.1}", x0 + 3.0)} y={(y + h - 4.0).to_string()} class="span-label">{ shorten(&s.label, room) }</text>
                            }
                        </g>
                    }
                }) }
                { for marks.iter().map(|m| html! {
                    <use href={format!("#mk-{}", m.kind.name())} x={format!("{:.1}", x(m.at))} y={mid.to_string()}
                        data-e={m.event.to_string()}
                        class={classes!("mark", format!("mark-{}", m.kind.name()), outlined(m.kind).then_some("outlined"))} />
                }) }
                { for rings.iter().map(|(at, e)| html! {
                    <circle cx={format!("{:.1}", x(*at))} cy={mid.to_string()} r="8" class="diff-ring" data-e={e.to_string()} />
                }) }
            </g>
        }
    });

    let overlaps = layout.overlaps.iter().map(|o| {
        let first = o.lanes.first().copied().unwrap_or(0) as u32;
        let last = o.lanes.last().copied().unwrap_or(0) as u32;
        let y0 = AXIS + LANE * first;
        let h = LANE * (last - first + 1);
        let x0 = x(o.from);
        let w = (x(o.to) - x0).max(4.0);
        let text = format!(
            "Exclusion broken from t={} to t={}: {}",
            crate::trace::seconds(o.from),
            crate::trace::seconds(o.to),
            o.text
        );
        html! {
            <g class="violation" tabindex="0" role="img" aria-label={text.clone()}>
                <title>{ text }</title>
                <rect x={format!("{x0:.1}")} y={y0.to_string()} width={format!("{w:.1}")} height={h.to_string()} class="violation-band" />
                { for o.lanes.iter().map(|l| {
                    let y = AXIS + LANE * *l as u32;
                    html! { <rect x={format!("{x0:.1}")} y={(y + 1).to_string()} width={format!("{w:.1}")} height={(LANE - 2).to_string()} class="violation-lane" /> }
                }) }
                <text x={format!("{:.1}", x0 + 2.0)} y={(y0 + 10).to_string()} class="violation-label">{ "⚠" }</text>
            </g>
        }
    });

    let divergence = p.divergence.map(|t| {
        let xt = x(t);
        html! {
            <g class="divergence">
                <line x1={format!("{xt:.1}")} x2={format!("{xt:.1}")} y1="0" y2={height.to_string()} />
                <text x={format!("{:.1}", xt + 3.0)} y="10" class="tick">{ "runs differ from here" }</text>
            </g>
        }
    });

    let summary = format!(
        "{}: {} lanes over {}; {} overlapping hold(s) drawn. The event list below has the same content as text.",
        p.title,
        layout.lanes.len(),
        crate::trace::seconds(layout.end),
        layout.overlaps.len()
    );

    html! {
        <svg id={p.id.clone()} class="timeline" width={width.to_string()} height={height.to_string()}
            viewBox={format!("0 0 {width} {height}")} role="group" aria-label={summary}
            {onmouseover} {onfocusin}>
            { axis }
            { for lanes }
            { for divergence }
            { for overlaps }
        </svg>
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// What every colour and shape means.
#[function_component(Legend)]
pub fn legend() -> Html {
    html! {
        <details class="panel legend">
            <summary>{ "Legend: what each shape means" }</summary>
            <ul>
                { for SpanKind::ALL.iter().map(|k| html! { <li>{ swatch_span(*k) }{ k.meaning() }</li> }) }
                { for MarkKind::ALL.iter().map(|k| html! { <li>{ swatch_mark(*k) }{ k.meaning() }</li> }) }
                <li><svg class="swatch" width="28" height="18" aria-hidden="true"><rect x="1" y="1" width="26" height="16" class="violation-band" /></svg>{ "exclusion broken: two clients believe they hold the same rows" }</li>
                <li><svg class="swatch" width="18" height="18" viewBox="-9 -9 18 18" aria-hidden="true"><circle r="7" class="diff-ring" /></svg>{ "in compare mode: an event the other run does not have" }</li>
            </ul>
        </details>
    }
}
