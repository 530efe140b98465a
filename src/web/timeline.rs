//! The timeline, painted from [`Layout`] on a canvas: one lane per client, service and
//! resource, a fault lane, and the exclusion violations drawn across the lanes they span, with
//! focusable twins of the violations on top for keyboard and screen-reader users.
//!
//! The painting depends only on the layout, the window, the width, the diff flags and the
//! colour scheme, so moving the playhead (a separate element on its own layer) never repaints
//! it.

use std::rc::Rc;

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, Path2d};
use yew::prelude::*;

use super::Dispatch;
use crate::ui::compare::Diff;
use crate::ui::links::{Link, LinkKind};
use crate::ui::notes::NoteKind;
use crate::ui::paint::{self, Colour, Frame, LabelLines, LabelType, LaneBox, LaneLabels};
use crate::ui::timeline::{
    marking, visible_marks, visible_spans, Layout, MarkKind, SpanKind, Window,
};
use crate::ui::{Action, Pinned};
use crate::world::Micros;

/// The most overlaps in view that get a focusable element.
const OVERLAYS_MAX: usize = 100;
/// The most notes in view that get one: more tab stops than this help no one, and a crowded run
/// is read by zooming in, where every note in view has its own.
const NOTE_TWINS_MAX: usize = 40;

/// The margin right of the plot. The lane labels' column on the left is as wide as its labels
/// need ([`labels_of`]).
const MARGIN: f64 = 10.0;
const AXIS: u32 = 24;
/// The height of a lane in a timeline with many lanes.
const LANE: u32 = 38;
/// The tallest a lane grows when there are few of them.
const LANE_MAX: u32 = 56;
/// The height the lanes of a timeline with few lanes grow to fill, so that a small run is not a
/// thin strip under its verdict.
const LANES_HEIGHT_MIN: u32 = 300;
/// The strip at the top of each lane where notes put their tags, above what the lane draws.
const NOTE_BAND: u32 = 12;

/// Where the lanes of a timeline are: their height depends on how many there are.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Geo {
    lane: u32,
}

impl Geo {
    fn of(lanes: usize) -> Geo {
        let fill = LANES_HEIGHT_MIN / (lanes.max(1) as u32);
        Geo {
            lane: fill.clamp(LANE, LANE_MAX),
        }
    }

    /// The top of a lane.
    fn top(&self, lane: usize) -> f64 {
        f64::from(AXIS + self.lane * lane as u32)
    }

    /// The vertical layout of every lane.
    fn lane_box(&self) -> LaneBox {
        LaneBox {
            height: f64::from(self.lane),
            note_band: f64::from(NOTE_BAND),
        }
    }

    /// The middle of a lane's drawing, below its note strip: where marks and links sit.
    fn mid(&self, lane: usize) -> f64 {
        self.lane_box().mid(self.top(lane))
    }

    /// The lane under a height, if any.
    fn lane_at(&self, y: f64) -> usize {
        ((y - f64::from(AXIS)) / f64::from(self.lane)).max(0.0) as usize
    }
}

/// The playhead's position. It moves by a transform on its own layer, so that scrubbing
/// never repaints the timeline under it.
pub fn playhead_style(t: Micros, w: Window, frame: Frame, width: u32) -> String {
    format!("transform: translateX({:.1}px)", x_in(t, w, frame, width))
}

/// How much larger than the usual the canvas draws its text: the page's root font size over
/// 16 px (larger on a projector, in presenter mode), within what the lanes have room for.
pub fn text_scale() -> f64 {
    gloo::utils::document()
        .document_element()
        .and_then(|root| {
            gloo::utils::window()
                .get_computed_style(&root)
                .ok()
                .flatten()
        })
        .and_then(|st| st.get_property_value("font-size").ok())
        .and_then(|v| super::controls::number_of(v.trim_end_matches("px")))
        .map_or(1.0, |px| (px / 16.0).clamp(1.0, 1.4))
}

/// The canvas font of `px` pixels (at the usual size) and a weight ("600 ", or "" for normal).
fn canvas_font(px: f64, weight: &str, scale: f64) -> String {
    format!("{weight}{:.1}px system-ui, sans-serif", px * scale)
}

/// The canvas font of a lane label's type.
fn label_font(ty: LabelType, scale: f64) -> String {
    match ty {
        LabelType::Name => canvas_font(11.0, "600 ", scale),
        LabelType::Kind => canvas_font(10.0, "", scale),
    }
}

/// The label columns measured lately: the lanes' labels, the width and the type's scale they
/// were fitted for.
type LabelsKey = (Vec<String>, u32, u64);

/// How many label columns are kept: a page shows at most two timelines (a comparison's).
const LABELS_KEPT: usize = 4;

thread_local! {
    static LABELS: std::cell::RefCell<Vec<(LabelsKey, Rc<LaneLabels>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
    /// A canvas that is never shown, to measure the labels' text before the timeline paints.
    static MEASURE: Option<CanvasRenderingContext2d> = gloo::utils::document()
        .create_element("canvas")
        .ok()
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())
        .and_then(|c| c.get_context("2d").ok().flatten())
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok());
}

/// The lane labels' column of a timeline of `layout` drawn `width` wide in the page's type
/// now, as [`LaneLabels::fit`] lays it out with the canvas's own measure of the text. Kept
/// for the next call with the same labels, width and type, as the playhead and the highlights
/// ask for it on every frame.
pub fn labels_of(layout: &Layout, width: u32) -> Rc<LaneLabels> {
    let scale = text_scale();
    let same = |k: &LabelsKey| {
        k.1 == width
            && k.2 == scale.to_bits()
            && k.0.len() == layout.lanes.len()
            && k.0.iter().zip(&layout.lanes).all(|(a, b)| *a == b.label)
    };
    if let Some(hit) = LABELS.with(|c| {
        c.borrow()
            .iter()
            .find(|(k, _)| same(k))
            .map(|(_, l)| Rc::clone(l))
    }) {
        return hit;
    }
    let labels = MEASURE.with(|ctx| {
        let measure = |text: &str, ty: LabelType| match ctx {
            Some(ctx) => {
                ctx.set_font(&label_font(ty, scale));
                ctx.measure_text(text).map_or(f64::MAX, |m| m.width())
            }
            // No canvas to measure with: a wide estimate, so that nothing is cut.
            None => text.chars().count() as f64 * 9.0 * scale,
        };
        Rc::new(LaneLabels::fit(&layout.lanes, f64::from(width), &measure))
    });
    let key = (
        layout.lanes.iter().map(|l| l.label.clone()).collect(),
        width,
        scale.to_bits(),
    );
    LABELS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= LABELS_KEPT {
            c.remove(0);
        }
        c.push((key, Rc::clone(&labels)));
    });
    labels
}

/// Where the plot of a timeline of `layout` drawn `width` wide is: right of its labels.
pub fn frame_of(layout: &Layout, width: u32) -> Frame {
    labels_of(layout, width).frame(MARGIN)
}

/// Marks of one kind closer than this many pixels are drawn once: the shapes are wider than
/// that, so the picture is the same and the page stays light.
const MARK_COLUMN_PX: f64 = 3.0;

/// The shapes and patterns every timeline and the legend refer to, defined once per page.
#[function_component(Defs)]
pub fn defs() -> Html {
    html! {
        <svg class="defs" width="0" height="0" aria-hidden="true" focusable="false">
        <defs>
            { for MarkKind::ALL.iter().map(|k| html! {
                <path id={format!("mk-{}", k.name())} d={paint::mark_path(*k)} />
            }) }
            <marker id="arrow-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                <path d="M0,0 L10,5 L0,10 Z" class="arrow-head" />
            </marker>
            { for paint::HATCHES.iter().map(|h| html! {
                <pattern id={format!("hatch-{}", h.name)} width={paint::HATCH_TILE.to_string()}
                    height={paint::HATCH_TILE.to_string()} patternUnits="userSpaceOnUse">
                    if h.background.is_some() {
                        <rect width={paint::HATCH_TILE.to_string()} height={paint::HATCH_TILE.to_string()}
                            class={format!("hatch-bg-{}", h.name)} />
                    }
                    <path d={h.path} class={format!("hatch-line-{}", h.name)} fill="none"
                        stroke-width={paint::HATCH_LINE.to_string()} />
                </pattern>
            }) }
        </defs>
        </svg>
    }
}

/// A small drawing of a mark or span kind, for the legend.
fn swatch_mark(kind: MarkKind) -> Html {
    html! {
        <svg class="swatch" width="18" height="18" viewBox="-9 -9 18 18" aria-hidden="true">
            <use href={format!("#mk-{}", kind.name())}
                class={classes!("mark", format!("mark-{}", kind.name()), paint::outlined(kind).then_some("outlined"))} />
        </svg>
    }
}

fn swatch_span(kind: SpanKind) -> Html {
    let g = Geo::of(usize::MAX);
    let (y, h) = g.lane_box().span(kind, f64::from(AXIS));
    html! {
        <svg class="swatch" width="28" height="18" viewBox={format!("0 {} 28 18", g.mid(0) - 9.0)} aria-hidden="true">
            <rect x="1" y={y.to_string()} width="26" height={h.to_string()} class={classes!("span", format!("span-{}", kind.name()))} />
        </svg>
    }
}

#[derive(Properties)]
pub struct TimelineProps {
    pub id: AttrValue,
    pub title: AttrValue,
    pub layout: Rc<Layout>,
    /// The stretch of time shown, shared by both timelines when comparing.
    pub window: Window,
    pub width: u32,
    /// Events of this run that the compared run does not have.
    pub diff: Option<Rc<Diff>>,
    /// Where the compared runs first differ.
    pub divergence: Option<Micros>,
    /// True for the compared run's timeline: its events are that run's, not the shown one's,
    /// and its side of the diff is the flipped run's.
    #[prop_or_default]
    pub flipped: bool,
    /// The event of this run whose details are shown.
    pub selected: Option<usize>,
    /// Where the selected event is drawn: its time and lane.
    #[prop_or_default]
    pub selected_at: Option<(Micros, usize)>,
    /// The overlap or note whose card is shown.
    #[prop_or_default]
    pub pinned: Option<Pinned>,
    /// Whether opening a card moves the playhead to its moment. Not while a committed
    /// prediction's run plays: the playhead there shows how far the run has got, and moved back
    /// to a note's start it would hide the note whose card was asked for.
    #[prop_or(true)]
    pub seek_on_pin: bool,
    pub dispatch: Dispatch,
}

/// Whether two optional shared values are the same allocation (props compare by identity,
/// because comparing whole runs by value would cost more than redrawing).
pub fn same_rc<T>(a: &Option<Rc<T>>, b: &Option<Rc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Rc::ptr_eq(a, b),
        _ => false,
    }
}

impl PartialEq for TimelineProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.layout, &o.layout)
            && self.id == o.id
            && self.title == o.title
            && self.window == o.window
            && self.width == o.width
            && self.divergence == o.divergence
            && self.flipped == o.flipped
            && self.selected == o.selected
            && self.selected_at == o.selected_at
            && self.pinned == o.pinned
            && self.seek_on_pin == o.seek_on_pin
            && same_rc(&self.diff, &o.diff)
    }
}

/// The height of a timeline with `lanes` lanes.
pub fn height_of(lanes: usize) -> u32 {
    AXIS + Geo::of(lanes).lane * lanes as u32 + 4
}

/// Where lane `lane` of a timeline of `lanes` lanes is drawn: its top and its height, for
/// what is laid over the drawing (a lesson's highlights).
pub fn lane_band(lanes: usize, lane: usize) -> (u32, u32) {
    let g = Geo::of(lanes);
    (g.top(lane) as u32, g.lane)
}

/// The x coordinate of a time in a window, on a timeline of the given frame and width.
pub fn x_in(t: Micros, w: Window, frame: Frame, width: u32) -> f64 {
    frame.x(t, w, f64::from(width))
}

/// The words a link says to a screen reader and in its tooltip.
fn link_words(layout: &Layout, l: &Link) -> String {
    let lane = |k: usize| {
        layout
            .lanes
            .get(k)
            .map_or(String::new(), |x| x.label.clone())
    };
    let token = layout
        .token_text(l)
        .map_or(String::new(), |t| format!(" with token {t}"));
    format!(
        "{} from {} at t={} to {} at t={}{token}",
        l.kind.name(),
        lane(l.from_lane),
        crate::trace::seconds(l.from),
        lane(l.to_lane),
        crate::trace::seconds(l.to)
    )
}

/// The timeline. The lanes are painted on a canvas, because a run of thousands of events
/// would otherwise be thousands of elements to create on every toggle; the pointer finds
/// events through [`Layout::hit`]. The overlaps and notes are also real elements on top, so
/// that keyboard and screen-reader users can reach each one, and the selected event's links
/// are drawn there too, so that pointing at an event never repaints the canvas; the card
/// below and the event table hold everything else as text.
#[function_component(Timeline)]
pub fn timeline(p: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let theme = use_state(|| 0u32);
    // What the last paint put where, for a click on the canvas (written by the paint, after
    // render; read only by the click).
    let painted = use_mut_ref(Vec::<PaintedNote>::new);
    let width = p.width.max(300);
    let height = height_of(p.layout.lanes.len());
    let g = Geo::of(p.layout.lanes.len());
    // The labels' column, fitted to the labels in the page's type now (read again when the
    // display changes, which renders this again).
    let scale = text_scale();
    let labels = labels_of(&p.layout, width);
    let frame = labels.frame(MARGIN);

    // Colours come from the style sheet, which follows the system's dark mode and the header's
    // theme; line widths follow presenter mode. Repaint when any of them changes. Each change
    // counts up from the last one, so that two changes in a row are two repaints (a handle's
    // value is the one of the render it came from).
    {
        let theme = theme.clone();
        let count = use_mut_ref(|| 0u32);
        use_effect_with((), move |_| {
            let bump = std::rc::Rc::new(move || {
                *count.borrow_mut() += 1;
                theme.set(*count.borrow());
            });
            let query = gloo::utils::window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten();
            let on_media = std::rc::Rc::clone(&bump);
            let listener = query.map(|q| EventListener::new(&q, "change", move |_| on_media()));
            let display = EventListener::new(
                &gloo::utils::window(),
                super::display::DISPLAY_EVENT,
                move |_| bump(),
            );
            move || drop((listener, display))
        });
    }

    {
        let canvas = canvas.clone();
        let layout = Rc::clone(&p.layout);
        let diff = p.diff.clone();
        let flipped = p.flipped;
        let labels = Rc::clone(&labels);
        let deps = (
            Rc::as_ptr(&p.layout) as usize,
            p.window,
            width,
            p.diff.as_ref().map(|d| Rc::as_ptr(d) as usize),
            p.divergence,
            *theme,
            Rc::as_ptr(&labels) as usize,
        );
        let (window, divergence) = (p.window, p.divergence);
        let painted = Rc::clone(&painted);
        use_effect_with(deps, move |_| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                *painted.borrow_mut() = paint_canvas(
                    &c,
                    &layout,
                    &labels,
                    scale,
                    window,
                    width,
                    diff.as_deref().map(|d| {
                        if flipped {
                            d.only_b.as_slice()
                        } else {
                            d.only_a.as_slice()
                        }
                    }),
                    divergence,
                );
            }
        });
    }

    // A click on a note's words, painted on the canvas beside its tag, opens its card as a
    // click on the tag does.
    let onclick = {
        let painted = Rc::clone(&painted);
        let d = p.dispatch.clone();
        let (flipped, seek) = (p.flipped, p.seek_on_pin);
        Callback::from(move |e: MouseEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            let hit = painted
                .borrow()
                .iter()
                .find(|n| n.contains(x, y))
                .map(|n| n.note);
            if let (Some(id), false) = (hit, flipped) {
                d.dispatch(Action::Pin {
                    pin: Pinned::Note(id),
                    seek,
                });
            }
        })
    };

    let onmousemove = {
        let layout = Rc::clone(&p.layout);
        let d = p.dispatch.clone();
        let window = p.window;
        let flipped = p.flipped;
        let selected = p.selected;
        Callback::from(move |e: MouseEvent| {
            let (x, y) = (f64::from(e.offset_x()), f64::from(e.offset_y()));
            if y < f64::from(AXIS) || x < frame.gutter {
                return;
            }
            let lane = g.lane_at(y);
            let plot = frame.plot(f64::from(width));
            let t = window.time_at((x - frame.gutter) / plot);
            let tolerance = (6.0 * window.span() as f64 / plot) as Micros;
            let hit = layout.hit(lane, t, tolerance);
            if hit.is_some() && hit != selected {
                d.dispatch(if flipped {
                    Action::SelectFlipped(hit)
                } else {
                    Action::Select(hit)
                });
            }
        })
    };

    let x = |t: Micros| x_in(t, p.window, frame, width);
    let prefix = if p.flipped {
        "In the flipped run: "
    } else {
        ""
    };
    // Each overlap in view can be reached with Tab (up to a bound, so that a run with
    // thousands of overlaps does not become thousands of tab stops); focusing one shows its
    // card and moves the playhead into it. Its twin covers its cell in the resource's lane,
    // the lane every overlap involves.
    let overlaps = p.layout.overlaps.iter().enumerate().filter(|(_, o)| o.to >= p.window.from && o.from <= p.window.to).take(OVERLAYS_MAX).map(|(k, o)| {
        let onfocus = {
            let d = p.dispatch.clone();
            let flipped = p.flipped;
            Callback::from(move |_: FocusEvent| if !flipped { d.dispatch(Action::Pin { pin: Pinned::Overlap(k), seek: true }) })
        };
        let lane = o.lanes.last().copied().unwrap_or(0);
        let x0 = x(o.from).max(frame.gutter);
        let w = (x(o.to).min(frame.right(f64::from(width))) - x0).max(4.0);
        let text = format!("{prefix}{}", o.text);
        let pinned = p.pinned == Some(Pinned::Overlap(k));
        html! {
            <rect class={classes!("violation", pinned.then_some("pinned"))} tabindex="0" role="img" aria-label={text} {onfocus}
                x={format!("{x0:.1}")} y={format!("{:.1}", g.top(lane))} width={format!("{w:.1}")} height={g.lane.to_string()} />
        }
    });
    // Each note in view is a tab stop too, over its tag; pointing at it or focusing it shows
    // its card.
    let notes = p.layout.notes_in(p.window).take(NOTE_TWINS_MAX).map(|(k, n)| {
        let id = p.layout.note_id(k);
        let pin = |seek: bool| {
            let d = p.dispatch.clone();
            let flipped = p.flipped;
            move || if !flipped { d.dispatch(Action::Pin { pin: Pinned::Note(id), seek }) }
        };
        let onfocus = { let f = pin(p.seek_on_pin); Callback::from(move |_: FocusEvent| f()) };
        let onmouseenter = { let f = pin(false); Callback::from(move |_: MouseEvent| f()) };
        // A click opens the card as focus does (with the playhead moved to the note where the
        // timeline seeks on a pin), since an SVG shape does not take focus from a pointer in
        // every browser.
        let onclick = { let f = pin(p.seek_on_pin); Callback::from(move |_: MouseEvent| f()) };
        let text = format!("{prefix}{}", n.text);
        let pinned = p.pinned == Some(Pinned::Note(id));
        html! {
            <rect class={classes!("note-focus", format!("note-{}", n.kind.name()), pinned.then_some("pinned"))}
                tabindex="0" role="img" aria-label={text} data-note={n.kind.name()} {onfocus} {onmouseenter} {onclick}
                x={format!("{:.1}", x(n.tag_at()) - 7.0)} y={format!("{:.1}", g.top(n.anchor))} width="14" height={NOTE_BAND.to_string()} />
        }
    });
    // The selected event's causes and effects, over the canvas, whatever the crowd.
    let selected_links = p.layout.selected_links(p.selected).into_iter().map(|l| {
        let words = link_words(&p.layout, &l);
        html! {
            <line class={classes!("link-selected", format!("link-{}", l.kind.name()))}
                x1={format!("{:.1}", x(l.from))} y1={format!("{:.1}", g.mid(l.from_lane))}
                x2={format!("{:.1}", x(l.to))} y2={format!("{:.1}", g.mid(l.to_lane))}
                marker-end="url(#arrow-head)">
                <title>{ words }</title>
            </line>
        }
    });
    let ring = p.selected_at.map(|(t, lane)| html! {
        <circle class="selected-ring" cx={format!("{:.1}", x(t))} cy={format!("{:.1}", g.mid(lane))} r="9" />
    });

    let summary = format!(
        "{}: {} lanes from t={} to t={}; {} overlapping hold(s) and {} note(s) in the whole run. Each overlap and note below can be reached with Tab; the event list has every event as text.",
        p.title,
        p.layout.lanes.len(),
        crate::trace::seconds(p.window.from),
        crate::trace::seconds(p.window.to),
        p.layout.overlap_count,
        p.layout.notes.len()
    );

    // How many arrows the canvas draws in this window, for tests and the benchmark.
    let arrows = p
        .layout
        .links_to_draw(p.window, x(p.window.to) - x(p.window.from))
        .len();
    html! {
        <div id={p.id.clone()} class="timeline" style={format!("width: {width}px; height: {height}px")}
            data-lanes={p.layout.lanes.len().to_string()} data-overlaps={p.layout.overlap_count.to_string()}
            data-notes={p.layout.notes.len().to_string()} data-links={p.layout.links.len().to_string()}
            data-arrows={arrows.to_string()}
            data-lane-labels={labels.lines.iter().map(LabelLines::text).collect::<Vec<_>>().join("\n")}>
            // The drawing takes focus so that the arrow keys, which step through the events,
            // have somewhere to be pressed; each step shows the event's card below.
            <canvas ref={canvas} role="img" tabindex="0" aria-label={summary}
                aria-describedby="event-details"
                style={format!("width: {width}px; height: {height}px")} {onmousemove} {onclick} />
            <svg class="overlay" width={width.to_string()} height={height.to_string()} aria-hidden="false">
                { for selected_links }
                { for ring }
                { for overlaps }
                { for notes }
            </svg>
        </div>
    }
}

/// The palette: the table's colours as the style sheet gives them, read once per paint.
struct Palette {
    values: Vec<String>,
}

impl Palette {
    fn read(el: &web_sys::Element) -> Palette {
        let style = gloo::utils::window().get_computed_style(el).ok().flatten();
        let get = |c: &Colour| {
            style
                .as_ref()
                .and_then(|s| s.get_property_value(c.var).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| c.light.to_string())
        };
        Palette {
            values: paint::COLOURS.iter().map(get).collect(),
        }
    }

    fn of(&self, colour: Colour) -> &str {
        paint::COLOURS
            .iter()
            .position(|c| *c == colour)
            .and_then(|k| self.values.get(k))
            .map_or(colour.light, |v| v.as_str())
    }
}

/// A canvas pattern of one of the table's hatches, in the palette's colours.
fn hatch(
    ctx: &CanvasRenderingContext2d,
    h: paint::Hatch,
    pal: &Palette,
) -> Option<web_sys::CanvasPattern> {
    let tile: HtmlCanvasElement = gloo::utils::document()
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    let side = paint::HATCH_TILE;
    tile.set_width(side as u32);
    tile.set_height(side as u32);
    let t: CanvasRenderingContext2d = tile.get_context("2d").ok()??.dyn_into().ok()?;
    if let Some(bg) = h.background {
        t.set_fill_style_str(pal.of(bg));
        t.fill_rect(0.0, 0.0, side, side);
    }
    t.set_stroke_style_str(pal.of(h.colour));
    t.set_line_width(paint::HATCH_LINE);
    t.stroke_with_path(&Path2d::new_with_path_string(h.path).ok()?);
    ctx.create_pattern_with_html_canvas_element(&tile, "repeat")
        .ok()
        .flatten()
}

/// The background of lane `i`: they alternate.
fn lane_colour(i: usize) -> Colour {
    if i % 2 == 0 {
        paint::LANE_EVEN
    } else {
        paint::LANE_ODD
    }
}

/// Paints the lanes, spans, marks, differences and overlaps of a window onto the canvas.
#[allow(clippy::too_many_arguments)]
fn paint_canvas(
    canvas: &HtmlCanvasElement,
    layout: &Layout,
    labels: &LaneLabels,
    scale: f64,
    w: Window,
    width: u32,
    diff: Option<&[bool]>,
    divergence: Option<Micros>,
) -> Vec<PaintedNote> {
    let height = height_of(layout.lanes.len());
    let g = Geo::of(layout.lanes.len());
    let dpr = gloo::utils::window().device_pixel_ratio().clamp(1.0, 3.0);
    canvas.set_width((f64::from(width) * dpr) as u32);
    canvas.set_height((f64::from(height) * dpr) as u32);
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return Vec::new();
    };
    let pal = Palette::read(canvas);
    // Text on the canvas follows the page's root font size (larger on a projector): `scale`,
    // read when the labels' column was fitted.
    let frame = labels.frame(MARGIN);
    // Presenter mode (set on the root by the header) draws marks and lines thicker.
    let presenter = gloo::utils::document()
        .document_element()
        .is_some_and(|root| root.has_attribute("data-presenter"));
    let thick = if presenter {
        paint::PRESENTER_THICK
    } else {
        1.0
    };
    let font = |px: f64, weight: &str| canvas_font(px, weight, scale);
    let base = |ctx: &CanvasRenderingContext2d| {
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    };
    base(&ctx);
    let x = |t: Micros| x_in(t, w, frame, width);
    let plot = frame.plot(f64::from(width));
    let us_per_px = w.span() as f64 / plot;
    let left = frame.gutter;
    let right = frame.right(f64::from(width));

    ctx.set_fill_style_str(pal.of(paint::BG));
    ctx.fill_rect(0.0, 0.0, f64::from(width), f64::from(height));
    for (i, _) in layout.lanes.iter().enumerate() {
        let top = g.top(i);
        ctx.set_fill_style_str(pal.of(lane_colour(i)));
        ctx.fill_rect(0.0, top, f64::from(width), f64::from(g.lane));
    }

    // The axis: round times with grid lines.
    ctx.set_font(&font(11.0, ""));
    ctx.set_stroke_style_str(pal.of(paint::GRID));
    ctx.set_line_width(1.0);
    let step = paint::tick_step(w.span(), plot);
    let mut t = w.from.div_ceil(step) * step;
    while t <= w.to {
        let xt = x(t).round() + 0.5;
        ctx.begin_path();
        ctx.move_to(xt, f64::from(AXIS - 6));
        ctx.line_to(xt, f64::from(height));
        ctx.stroke();
        ctx.set_fill_style_str(pal.of(paint::MUTED));
        let label = paint::tick_label(t);
        let room = ctx.measure_text(&label).map_or(0.0, |m| m.width());
        let at = paint::tick_label_left(xt, room, f64::from(width));
        let _ = ctx.fill_text(&label, at, f64::from(AXIS - 10));
        t += step;
    }

    // Clip the plot so that spans and marks at the window's edges do not cover the labels.
    ctx.save();
    ctx.begin_path();
    ctx.rect(left - 8.0, 0.0, right - left + 16.0, f64::from(height));
    ctx.clip();

    let patterns: Vec<(&str, Option<web_sys::CanvasPattern>)> = paint::HATCHES
        .iter()
        .map(|h| (h.name, hatch(&ctx, *h, &pal)))
        .collect();
    let lane_box = g.lane_box();
    for (i, lane) in layout.lanes.iter().enumerate() {
        let top = g.top(i);
        let visible: Vec<_> = lane
            .spans
            .iter()
            .filter(|s| s.to >= w.from && s.from <= w.to)
            .cloned()
            .collect();
        for s in visible_spans(&visible, us_per_px) {
            let (y, h) = lane_box.span_thick(s.kind, top, thick);
            let x0 = x(s.from).max(left - 8.0);
            let wd = (x(s.to).min(right + 8.0) - x0).max(1.5);
            match paint::span_hatch(s.kind) {
                None => ctx.set_fill_style_str(pal.of(paint::span_colour(s.kind))),
                Some(hatch) => {
                    if let Some((_, Some(p))) = patterns.iter().find(|(n, _)| *n == hatch.name) {
                        ctx.set_fill_style_canvas_pattern(p);
                    }
                }
            }
            ctx.fill_rect(x0, y, wd, h);
            if let Some(edge) = paint::span_edge(s.kind) {
                ctx.set_stroke_style_str(pal.of(edge));
                ctx.set_line_width(1.0);
                ctx.stroke_rect(x0 + 0.5, y + 0.5, (wd - 1.0).max(0.5), h - 1.0);
            }
            let room = (wd / 6.5) as usize;
            if s.kind == SpanKind::Held && !s.label.is_empty() && room >= 6 {
                ctx.set_fill_style_str("#0b0b0b");
                ctx.set_font(&font(10.0, ""));
                let _ = ctx.fill_text(&shorten(&s.label, room), x0 + 3.0, y + h - 4.0);
                ctx.set_font(&font(11.0, ""));
            }
        }
    }

    // Marks, each kind with its own shape, thinned to what a pixel column can show.
    let shapes: Vec<(MarkKind, Option<Path2d>)> = MarkKind::ALL
        .iter()
        .map(|k| (*k, Path2d::new_with_path_string(paint::mark_path(*k)).ok()))
        .collect();
    ctx.set_line_width(paint::MARK_LINE);
    for (i, _) in layout.lanes.iter().enumerate() {
        let mid = g.mid(i);
        let marks = visible_marks(layout.marks_in(i, w), us_per_px * MARK_COLUMN_PX);
        for m in &marks {
            let Some((_, Some(path))) = shapes.iter().find(|(k, _)| *k == m.kind) else {
                continue;
            };
            let colour = pal.of(paint::mark_colour(m.kind));
            let at = dpr * thick;
            let _ = ctx.set_transform(at, 0.0, 0.0, at, x(m.at) * dpr, mid * dpr);
            if paint::outlined(m.kind) {
                ctx.set_stroke_style_str(colour);
                ctx.stroke_with_path(path);
            } else {
                ctx.set_fill_style_str(colour);
                ctx.fill_with_path_2d(path);
                if let Some(cut) = paint::mark_cut(m.kind) {
                    ctx.set_stroke_style_str(pal.of(paint::BG));
                    ctx.set_line_width(cut);
                    ctx.stroke_with_path(path);
                    ctx.set_line_width(paint::MARK_LINE);
                }
            }
        }
        base(&ctx);
        // Events the other run lacks get a dashed ring, even where thinning dropped them.
        if let Some(flags) = diff {
            let lane = &layout.lanes[i];
            let mut last = f64::NEG_INFINITY;
            let mut flagged: Vec<Micros> = lane
                .marks
                .iter()
                .filter(|m| flags.get(m.event) == Some(&true))
                .map(|m| m.at)
                .chain(
                    lane.spans
                        .iter()
                        .filter(|s| flags.get(s.event) == Some(&true))
                        .map(|s| s.from),
                )
                .filter(|t| *t >= w.from && *t <= w.to)
                .collect();
            crate::sorted::sort(&mut flagged);
            ctx.set_stroke_style_str(pal.of(paint::DIFF));
            ctx.set_line_width(2.0);
            let _ = ctx.set_line_dash(&js_sys::Array::of2(&3.0.into(), &2.0.into()));
            for t in flagged {
                let xt = x(t);
                if xt - last < 3.0 {
                    continue;
                }
                last = xt;
                ctx.begin_path();
                let _ = ctx.arc(xt, mid, 8.0, 0.0, std::f64::consts::TAU);
                ctx.stroke();
            }
            let _ = ctx.set_line_dash(&js_sys::Array::new());
        }
    }

    // Overlaps: a hatched, outlined cell in each lane involved, joined across the lanes that
    // are not, so that nothing uninvolved seems part of it.
    let band = hatch(&ctx, paint::HATCH_VIOLATION, &pal);
    let bands = layout.bands(w, us_per_px);
    // Every cell in one path and every join in another, each filled or stroked once: a crowded
    // run has thousands of cells, and one call per cell would cost more than the picture.
    let cells = Path2d::new().ok();
    let joins = Path2d::new().ok();
    for b in &bands {
        let x0 = x(b.from);
        let wd = (x(b.to) - x0).max(4.0);
        let m = marking(&b.lanes);
        if let Some(path) = &cells {
            for l in &m.cells {
                path.rect(x0, g.top(*l) + 1.0, wd, f64::from(g.lane) - 2.0);
            }
        }
        if let Some(path) = &joins {
            for (upper, lower) in &m.joins {
                path.move_to(x0 + 1.0, g.top(*upper) + f64::from(g.lane) - 1.0);
                path.line_to(x0 + 1.0, g.top(*lower) + 1.0);
            }
        }
    }
    ctx.set_stroke_style_str(pal.of(paint::VIOLATION));
    if let Some(path) = &cells {
        if let Some(p) = &band {
            ctx.set_fill_style_canvas_pattern(p);
            ctx.fill_with_path_2d(path);
        }
        ctx.set_line_width(paint::VIOLATION_LINE * thick);
        ctx.stroke_with_path(path);
    }
    if let Some(path) = &joins {
        ctx.set_line_width(paint::JOIN_LINE * thick);
        ctx.stroke_with_path(path);
    }
    // A warning sign in each band's resource cell.
    ctx.set_font(&font(11.0, "bold "));
    ctx.set_fill_style_str(pal.of(paint::VIOLATION));
    for b in &bands {
        let y0 = g.top(b.lanes.last().copied().unwrap_or(0)) + f64::from(NOTE_BAND);
        let _ = ctx.fill_text("⚠", x(b.from) + 2.0, y0 + 10.0);
    }

    paint_links(&ctx, layout, g, w, &x, &pal, &font(9.0, ""));
    let (occupied, painted) = paint_notes(
        &ctx,
        layout,
        g,
        w,
        &x,
        (left, right),
        &pal,
        &font(10.0, "bold "),
        &font(10.0, ""),
    );

    // Beside each band, in words, who held what at once: the longest label that the room
    // before the next band allows, in the note strip of the band's first lane where no note
    // stands. The first overlap has its note instead.
    ctx.set_font(&font(10.0, "bold "));
    for (k, b) in bands.iter().enumerate() {
        if b.first == 0 {
            continue;
        }
        let x0 = x(b.to).max(x(b.from) + 4.0) + 3.0;
        let lane = b.lanes.first().copied().unwrap_or(0);
        let next = bands.get(k + 1).map_or(right, |n| x(n.from));
        let free_until = occupied
            .get(lane)
            .and_then(|o| {
                o.iter()
                    .filter(|(a, _)| *a >= x0)
                    .map(|(a, _)| *a)
                    .reduce(f64::min)
            })
            .unwrap_or(right);
        let blocked = occupied
            .get(lane)
            .is_some_and(|o| o.iter().any(|(a, z)| *a <= x0 && x0 <= *z + 12.0));
        let room = next.min(right).min(free_until) - x0;
        // Measuring text is costly on a crowded run, so only where a label could fit.
        if blocked || room <= 40.0 {
            continue;
        }
        let labels = match layout.single(b) {
            Some(one) => one.labels().to_vec(),
            None => vec![
                format!("{} overlapping holds", b.count),
                format!("{} overlaps", b.count),
            ],
        };
        // One measurement per band: the shorter labels are estimated from the longest, since
        // they are the same words cut down and measuring is costly on a crowded run.
        let longest = ctx.measure_text(&labels[0]).map_or(f64::MAX, |m| m.width());
        let per_char = longest / labels[0].chars().count().max(1) as f64;
        for label in &labels {
            let label_width = per_char * label.chars().count() as f64;
            if label_width + 6.0 < room {
                let top = g.top(lane);
                ctx.set_fill_style_str(pal.of(paint::BG));
                ctx.fill_rect(x0, top + 0.5, label_width + 4.0, f64::from(NOTE_BAND) - 1.0);
                ctx.set_fill_style_str(pal.of(paint::VIOLATION));
                let _ = ctx.fill_text(label, x0 + 2.0, top + f64::from(NOTE_BAND) - 2.5);
                break;
            }
        }
    }
    ctx.set_font(&font(11.0, ""));

    if let Some(t) = divergence.filter(|t| *t >= w.from && *t <= w.to) {
        let xt = x(t);
        ctx.set_stroke_style_str(pal.of(paint::DIFF));
        ctx.set_line_width(2.0);
        let _ = ctx.set_line_dash(&js_sys::Array::of2(&6.0.into(), &3.0.into()));
        ctx.begin_path();
        ctx.move_to(xt, 0.0);
        ctx.line_to(xt, f64::from(height));
        ctx.stroke();
        let _ = ctx.set_line_dash(&js_sys::Array::new());
        ctx.set_fill_style_str(pal.of(paint::DIFF));
        let _ = ctx.fill_text("runs differ from here", xt + 3.0, f64::from(height) - 4.0);
    }
    ctx.restore();

    // Lane labels last, on their own background, so that nothing covers them: each as the
    // labels' column lays it out, whole (on two lines, a service's kind above its name, where
    // one is too long), cut only where the timeline is too narrow for the widest column.
    for (i, lines) in labels.lines.iter().enumerate().take(layout.lanes.len()) {
        let top = g.top(i);
        ctx.set_fill_style_str(pal.of(lane_colour(i)));
        ctx.fill_rect(0.0, top, left - 8.0, f64::from(g.lane));
        ctx.set_fill_style_str(pal.of(paint::FG));
        match lines {
            LabelLines::Two { kind, name } => {
                ctx.set_font(&label_font(LabelType::Kind, scale));
                let _ = ctx.fill_text(kind, paint::LABEL_INSET, g.mid(i) - 2.0);
                ctx.set_font(&label_font(LabelType::Name, scale));
                let _ = ctx.fill_text(name, paint::LABEL_INSET, g.mid(i) + 10.0);
            }
            LabelLines::One(text) => {
                ctx.set_font(&label_font(LabelType::Name, scale));
                let _ = ctx.fill_text(text, paint::LABEL_INSET, g.mid(i) + 4.0);
            }
        }
    }
    painted
}

/// Where a note's tag and the words beside it were painted: a click there opens its card
/// (the tag also has a focusable twin over it; the words are only on the canvas).
#[derive(Clone, Copy)]
struct PaintedNote {
    /// Its name, [`Layout::note_id`].
    note: usize,
    from_x: f64,
    to_x: f64,
    top: f64,
}

impl PaintedNote {
    fn contains(&self, x: f64, y: f64) -> bool {
        (self.from_x..=self.to_x).contains(&x)
            && (self.top..=self.top + f64::from(NOTE_BAND)).contains(&y)
    }
}

fn dash(ctx: &CanvasRenderingContext2d, pattern: &[f64]) {
    let array = js_sys::Array::new();
    for v in pattern {
        array.push(&(*v).into());
    }
    let _ = ctx.set_line_dash(&array);
}

/// An arrow from one point to another, with its head at the end. The head's corners are the
/// direction turned back by about 155 degrees either way, by a fixed rotation rather than
/// trigonometry, which would add its own code to the download.
fn arrow(ctx: &CanvasRenderingContext2d, from: (f64, f64), to: (f64, f64)) {
    ctx.begin_path();
    ctx.move_to(from.0, from.1);
    ctx.line_to(to.0, to.1);
    ctx.stroke();
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    let (ux, uy) = (dx / len * 7.0, dy / len * 7.0);
    // cos and sin of 155 degrees.
    let (c, s) = (-0.906_307_787, 0.422_618_262);
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    ctx.begin_path();
    ctx.move_to(to.0, to.1);
    ctx.line_to(to.0 + ux * c - uy * s, to.1 + ux * s + uy * c);
    ctx.line_to(to.0 + ux * c + uy * s, to.1 - ux * s + uy * c);
    ctx.close_path();
    ctx.fill();
}

/// Messages as arrows between lanes: every one when there are few in view, none when there
/// are many (the selected event's are drawn over the canvas instead). A write's arrow carries
/// its token.
fn paint_links(
    ctx: &CanvasRenderingContext2d,
    layout: &Layout,
    g: Geo,
    w: Window,
    x: &dyn Fn(Micros) -> f64,
    pal: &Palette,
    font: &str,
) {
    let links = layout.links_to_draw(w, x(w.to) - x(w.from));
    if links.is_empty() {
        return;
    }
    ctx.set_line_width(1.3);
    ctx.set_font(font);
    for l in links {
        let (colour, pattern) = paint::link_style(l.kind);
        ctx.set_stroke_style_str(pal.of(colour));
        ctx.set_fill_style_str(pal.of(colour));
        dash(ctx, pattern);
        let from = (x(l.from), g.mid(l.from_lane));
        let to = (x(l.to), g.mid(l.to_lane));
        // Shorten the arrow so that its head does not cover the mark it points at.
        let len = ((to.0 - from.0) * (to.0 - from.0) + (to.1 - from.1) * (to.1 - from.1)).sqrt();
        if len < 8.0 {
            continue;
        }
        let k = (len - 6.0) / len;
        let end = (from.0 + (to.0 - from.0) * k, from.1 + (to.1 - from.1) * k);
        arrow(ctx, from, end);
    }
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    // Tokens of writes, under the write's mark, where the previous token leaves room.
    let mut last_end = f64::NEG_INFINITY;
    for l in links.iter().filter(|l| l.kind == LinkKind::Write) {
        if let Some(t) = layout.token_text(l) {
            let wd = ctx.measure_text(&t).map_or(0.0, |m| m.width());
            let xt = x(l.to) - wd / 2.0;
            if xt < last_end + 4.0 {
                continue;
            }
            last_end = xt + wd;
            let yt = g.mid(l.to_lane) + 12.0;
            ctx.set_fill_style_str(pal.of(paint::BG));
            ctx.fill_rect(xt - 1.0, yt - 8.0, wd + 2.0, 10.0);
            ctx.set_fill_style_str(pal.of(paint::WRITE));
            let _ = ctx.fill_text(&t, xt, yt);
        }
    }
}

/// Notes: a bracket over what lasts (a lost update from the lost write to the one that
/// overwrote it, a cycle and an unavailable window on every lane they involve), a tag with the
/// kind's letter, and the short label where the next tag in the lane leaves room.
#[allow(clippy::too_many_arguments)]
fn paint_notes(
    ctx: &CanvasRenderingContext2d,
    layout: &Layout,
    g: Geo,
    w: Window,
    x: &dyn Fn(Micros) -> f64,
    (left, right): (f64, f64),
    pal: &Palette,
    bold: &str,
    plain: &str,
) -> (Vec<Vec<(f64, f64)>>, Vec<PaintedNote>) {
    let mut occupied: Vec<Vec<(f64, f64)>> = vec![Vec::new(); layout.lanes.len()];
    let mut painted: Vec<PaintedNote> = Vec::new();
    let mut tags: Vec<(usize, f64, usize)> = Vec::new();
    // One path of brackets per kind, stroked once: a run can have hundreds of lost updates.
    let brackets: Vec<Option<Path2d>> = NoteKind::ALL.iter().map(|_| Path2d::new().ok()).collect();
    for (k, n) in layout.notes_in(w) {
        let bracketed: &[usize] = match n.kind {
            NoteKind::LostUpdate => std::slice::from_ref(&n.anchor),
            NoteKind::Cycle | NoteKind::Unavailable => &n.lanes,
            NoteKind::FirstOverlap | NoteKind::Rejection => &[],
        };
        if let Some(Some(path)) = brackets.get(n.kind as usize) {
            for lane in bracketed {
                let y = g.top(*lane) + f64::from(NOTE_BAND) - 1.0;
                let (x0, x1) = (x(n.from).max(left), x(n.to).min(right));
                path.move_to(x0, y - 3.0);
                path.line_to(x0, y);
                path.line_to(x1.max(x0 + 2.0), y);
                path.line_to(x1.max(x0 + 2.0), y - 3.0);
            }
        }
        let xt = x(n.tag_at());
        if xt >= left - 7.0 && xt <= right + 7.0 {
            tags.push((k, xt, n.anchor));
        }
    }
    ctx.set_line_width(2.0);
    for (kind, path) in NoteKind::ALL.iter().zip(&brackets) {
        if let Some(path) = path {
            ctx.set_stroke_style_str(pal.of(paint::note_colour(*kind)));
            ctx.stroke_with_path(path);
        }
    }
    // In lane order, then from left to right, as plain integers (the sort the page already has).
    let mut keys: Vec<u64> = tags
        .iter()
        .enumerate()
        .map(|(k, t)| {
            ((t.2 as u64) << 40) | (((t.1 + 8.0).max(0.0) as u64).min(0xff_ffff) << 16) | k as u64
        })
        .collect();
    crate::sorted::sort(&mut keys);
    // A tag closer than its width to the previous one in its lane is not drawn: it would only
    // cover it. Each note still has its focusable twin and its line in the event table.
    let mut last: Option<(usize, f64)> = None;
    let tags: Vec<(usize, f64, usize)> = keys
        .iter()
        .map(|k| tags[(k & 0xffff) as usize])
        .filter(|t| {
            let crowded = last.is_some_and(|(lane, x)| lane == t.2 && t.1 - x < 14.0);
            if !crowded {
                last = Some((t.2, t.1));
            }
            !crowded
        })
        .collect();
    for (i, (k, xt, lane)) in tags.iter().enumerate() {
        let n = &layout.notes[*k];
        let top = g.top(*lane);
        let colour = pal.of(paint::note_colour(n.kind));
        ctx.set_fill_style_str(colour);
        ctx.fill_rect(xt - 7.0, top + 0.5, 14.0, f64::from(NOTE_BAND) - 1.0);
        if let Some(o) = occupied.get_mut(*lane) {
            o.push((xt - 7.0, xt + 7.0));
        }
        painted.push(PaintedNote {
            note: layout.note_id(*k),
            from_x: xt - 7.0,
            to_x: xt + 7.0,
            top,
        });
        ctx.set_fill_style_str(pal.of(paint::BG));
        ctx.set_font(bold);
        let _ = ctx.fill_text(n.kind.letter(), xt - 3.0, top + f64::from(NOTE_BAND) - 2.5);
        let next = tags
            .get(i + 1)
            .filter(|t| t.2 == *lane)
            .map_or(right, |t| t.1 - 8.0);
        let room = next - (xt + 9.0);
        if room > 30.0 {
            ctx.set_font(plain);
            let label = &n.short;
            let wd = ctx.measure_text(label).map_or(f64::MAX, |m| m.width());
            let text = if wd <= room {
                Some(label.clone())
            } else {
                // Cut to what fits, at a word.
                let mut cut = String::new();
                for word in label.split(' ') {
                    let candidate = if cut.is_empty() {
                        word.to_string()
                    } else {
                        format!("{cut} {word}")
                    };
                    let cw = ctx
                        .measure_text(&format!("{candidate}…"))
                        .map_or(f64::MAX, |m| m.width());
                    if cw > room {
                        break;
                    }
                    cut = candidate;
                }
                (!cut.is_empty()).then(|| format!("{cut}…"))
            };
            if let Some(text) = text {
                let wd = ctx.measure_text(&text).map_or(0.0, |m| m.width());
                ctx.set_fill_style_str(pal.of(paint::BG));
                ctx.fill_rect(xt + 8.0, top + 0.5, wd + 4.0, f64::from(NOTE_BAND) - 1.0);
                ctx.set_fill_style_str(colour);
                let _ = ctx.fill_text(&text, xt + 10.0, top + f64::from(NOTE_BAND) - 2.5);
                if let Some(o) = occupied.get_mut(*lane) {
                    o.push((xt + 8.0, xt + 12.0 + wd));
                }
                if let Some(last) = painted.last_mut() {
                    last.to_x = xt + 12.0 + wd;
                }
            }
        }
    }
    (occupied, painted)
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

#[derive(Properties, PartialEq)]
pub struct LegendProps {
    /// The height of the timeline beside it: the legend scrolls within it.
    pub height: u32,
    pub dispatch: Dispatch,
}

/// A small drawing of a link kind, for the legend: its dash and its head.
fn swatch_link(kind: LinkKind) -> Html {
    let (colour, pattern) = paint::link_style(kind);
    let dash = pattern
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    html! {
        <svg class="swatch" width="28" height="18" viewBox="0 0 28 18" aria-hidden="true">
            <line x1="2" y1="14" x2="22" y2="4" stroke-width="1.6" stroke-dasharray={dash}
                style={format!("stroke: var({})", colour.var)} marker-end="url(#arrow-head)" />
        </svg>
    }
}

/// A note's tag, for the legend.
fn swatch_note(kind: NoteKind) -> Html {
    html! {
        <svg class="swatch" width="18" height="18" viewBox="0 0 18 18" aria-hidden="true">
            <rect x="2" y="3" width="14" height="12" style={format!("fill: var({})", paint::note_colour(kind).var)} />
            <text x="9" y="13" text-anchor="middle" class="note-letter">{ kind.letter() }</text>
        </svg>
    }
}

/// What every colour, shape, arrow and tag means, beside the timeline until it is hidden.
#[function_component(Legend)]
pub fn legend(p: &LegendProps) -> Html {
    let hide = {
        let d = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(Action::Legend(false));
            super::controls::focus_after_render("show-legend");
        })
    };
    html! {
        <aside id="legend" class="legend" aria-labelledby="legend-h"
            style={format!("max-height: {}px", p.height.max(240))}>
            <div class="legend-head">
                <h2 id="legend-h">{ "Legend" }</h2>
                <button id="hide-legend" type="button" onclick={hide}>{ "Hide" }</button>
            </div>
            <div class="legend-body" tabindex="0" role="region" aria-label="Legend, scrollable">
                <h3>{ "Lanes" }</h3>
                <ul>
                    { for SpanKind::ALL.iter().map(|k| html! { <li>{ swatch_span(*k) }{ k.meaning() }</li> }) }
                    <li><svg class="swatch" width="28" height="18" aria-hidden="true"><rect x="1" y="1" width="26" height="16" class="violation-band" /></svg>{ "exclusion broken: marked in each lane involved, joined across the others" }</li>
                </ul>
                <h3>{ "Messages" }</h3>
                <ul>
                    { for LinkKind::ALL.iter().map(|k| html! { <li>{ swatch_link(*k) }{ k.meaning() }</li> }) }
                </ul>
                <h3>{ "Notes (Tab reaches each)" }</h3>
                <ul>
                    { for NoteKind::ALL.iter().map(|k| html! { <li>{ swatch_note(*k) }{ k.meaning() }</li> }) }
                </ul>
                <h3>{ "Marks" }</h3>
                <ul>
                    { for MarkKind::ALL.iter().map(|k| html! { <li>{ swatch_mark(*k) }{ k.meaning() }</li> }) }
                    <li><svg class="swatch" width="18" height="18" viewBox="-9 -9 18 18" aria-hidden="true"><circle r="7" class="diff-ring" /></svg>{ "in compare mode: an event the other run does not have" }</li>
                </ul>
            </div>
        </aside>
    }
}
