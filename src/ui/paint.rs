//! How the timeline looks, for every painter of it: the page's canvas (`crate::web::timeline`)
//! and the exported SVG picture ([`crate::ui::svg`]).
//!
//! One table of colours, each named after the style sheet's custom property that carries it on
//! the page (so that the page's themes can change it) with its value in the light theme (what
//! the picture uses, and the page when the style sheet lacks it); the shape of every mark as
//! path data, which an SVG `d` attribute and a canvas `Path2d` both read; the hatches of areas;
//! where a span sits in its lane; and the ticks of the time axis. Only pixel sizes that differ
//! between a picture and the page, such as a lane's height, are left to the painters.

use crate::ui::links::LinkKind;
use crate::ui::notes::NoteKind;
use crate::ui::timeline::{MarkKind, SpanKind, Window};
use crate::world::Micros;

/// One colour of the timeline: the style sheet's custom property and its light-theme value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Colour {
    /// The custom property, e.g. `--waiting`.
    pub var: &'static str,
    /// Its value in the light theme.
    pub light: &'static str,
}

macro_rules! colours {
    ($($(#[$doc:meta])* $name:ident = $var:literal, $light:literal;)*) => {
        $($(#[$doc])* pub const $name: Colour = Colour { var: $var, light: $light };)*
        /// Every colour of the table.
        pub const COLOURS: &[Colour] = &[$($name),*];
    };
}

colours! {
    /// The background.
    BG = "--bg", "#ffffff";
    /// Text, and marks of a client's own moves.
    FG = "--fg", "#1b1b1b";
    /// The axis' labels.
    MUTED = "--muted", "#555555";
    LANE_EVEN = "--lane-even", "#fafbfc";
    LANE_ODD = "--lane-odd", "#f0f2f5";
    /// The axis' grid lines.
    GRID = "--grid", "#dde0e4";
    /// A verdict that holds.
    HOLDS = "--holds", "#006b4f";
    /// A broken verdict, aborted work, cycles.
    BROKEN = "--broken", "#b33c00";
    /// Links a picture carries.
    FOCUS = "--focus", "#0b5cad";
    WAITING = "--waiting", "#8a8f98";
    BELIEVED = "--believed", "#0072b2";
    HELD = "--held", "#56b4e9";
    PAUSED = "--paused", "#cc79a7";
    OUTAGE = "--outage", "#6b6b6b";
    PARTITION = "--partition", "#e69f00";
    VIOLATION = "--violation", "#d55e00";
    /// Under the violation's hatch.
    VIOLATION_BG = "--violation-bg", "rgba(213, 94, 0, 0.18)";
    READ = "--read", "#009e73";
    WRITE = "--write", "#0072b2";
    REJECTED = "--rejected", "#1b1b1b";
    LOST = "--lost", "#d55e00";
    /// What a lock service does on its own: queues, refusals, releases.
    SERVICE_MARK = "--service-mark", "#5a3d8a";
    /// Where compared runs differ.
    DIFF = "--diff", "#cc79a7";
}

/// The colour of a span kind (hatched kinds draw their hatch and outline in it).
pub fn span_colour(kind: SpanKind) -> Colour {
    match kind {
        SpanKind::Waiting => WAITING,
        SpanKind::Believed => BELIEVED,
        SpanKind::Held => HELD,
        SpanKind::Paused => PAUSED,
        SpanKind::Outage => OUTAGE,
        SpanKind::Partition => PARTITION,
    }
}

/// The outline a span kind gets, if any.
pub fn span_edge(kind: SpanKind) -> Option<Colour> {
    match kind {
        SpanKind::Waiting | SpanKind::Believed => None,
        SpanKind::Held => Some(BELIEVED),
        SpanKind::Paused | SpanKind::Outage | SpanKind::Partition => Some(span_colour(kind)),
    }
}

/// The colour of each mark kind.
pub fn mark_colour(kind: MarkKind) -> Colour {
    match kind {
        MarkKind::Request => WAITING,
        MarkKind::Aborted | MarkKind::QuorumMissed | MarkKind::ValiditySpent => BROKEN,
        MarkKind::RestartedEmpty => OUTAGE,
        MarkKind::Read => READ,
        MarkKind::Write => WRITE,
        MarkKind::Rejected => REJECTED,
        MarkKind::LostUpdate => LOST,
        MarkKind::Expired => PAUSED,
        MarkKind::MessageLost => PARTITION,
        MarkKind::Migrated => FG,
        MarkKind::Queued | MarkKind::Refused | MarkKind::Released | MarkKind::Superseded => {
            SERVICE_MARK
        }
    }
}

/// The colour of each kind of note; its letter tells them apart without colour.
pub fn note_colour(kind: NoteKind) -> Colour {
    match kind {
        NoteKind::FirstOverlap => VIOLATION,
        NoteKind::LostUpdate => LOST,
        NoteKind::Rejection => REJECTED,
        NoteKind::Cycle => BROKEN,
        NoteKind::Unavailable => OUTAGE,
    }
}

/// The colour and the dash pattern of each kind of link: the pattern tells them apart without
/// colour.
pub fn link_style(kind: LinkKind) -> (Colour, &'static [f64]) {
    match kind {
        LinkKind::Request => (WAITING, &[5.0, 3.0]),
        LinkKind::Grant => (BELIEVED, &[]),
        LinkKind::Read => (READ, &[1.5, 2.5]),
        LinkKind::Write => (WRITE, &[]),
        LinkKind::Release => (SERVICE_MARK, &[8.0, 3.0, 2.0, 3.0]),
    }
}

/// The shape of each mark, centred on the origin, as path data. Every meaning has its own
/// shape, so that nothing depends on telling colours apart.
pub fn mark_path(kind: MarkKind) -> &'static str {
    match kind {
        MarkKind::Request => "M0,-5 L5,4 L-5,4 Z",
        MarkKind::Aborted => "M-4,-4 L4,4 M4,-4 L-4,4",
        // A vote split in two: two halves that do not meet.
        MarkKind::QuorumMissed => "M-5,-5 H-1.2 V5 H-5 Z M1.2,-5 H5 V5 H1.2 Z",
        // A clock face: the time ran out before the lock could be used.
        MarkKind::ValiditySpent => "M-5,0 A5,5 0 1 1 5,0 A5,5 0 1 1 -5,0 M0,0 V-3.5 M0,0 H3",
        MarkKind::Queued => "M-3.5,-3.5 H3.5 V3.5 H-3.5 Z",
        MarkKind::Refused => "M-5,0 H5 M0,-5 A5,5 0 1 1 0,5 A5,5 0 1 1 0,-5",
        MarkKind::Released => "M0,5 L5,-4 L-5,-4 Z",
        MarkKind::Expired => "M-4,-5 H4 L-4,5 H4 Z",
        MarkKind::Superseded => "M0,-5 L5,0 L0,5 L-5,0 Z",
        // A restart arrow round an empty middle.
        MarkKind::RestartedEmpty => "M3.5,-3.5 A5,5 0 1 0 5,0 M3.5,-3.5 V-0.3 M3.5,-3.5 H0.3",
        MarkKind::Read => "M-3.5,0 A3.5,3.5 0 1 1 3.5,0 A3.5,3.5 0 1 1 -3.5,0",
        MarkKind::Write => "M-4.5,0 A4.5,4.5 0 1 1 4.5,0 A4.5,4.5 0 1 1 -4.5,0 Z",
        MarkKind::Rejected => "M-5,-5 L5,5 M5,-5 L-5,5 M-5,-5 H5 V5 H-5 Z",
        MarkKind::LostUpdate => "M0,-7 L7,6 L-7,6 Z M0,-2 V2 M0,4 V4.5",
        MarkKind::MessageLost => "M-3,-3 L3,3 M3,-3 L-3,3",
        MarkKind::Migrated => "M-5,0 H4 M1,-4 L5,0 L1,4",
    }
}

/// Marks drawn as outlines rather than filled shapes.
pub fn outlined(kind: MarkKind) -> bool {
    matches!(
        kind,
        MarkKind::Aborted
            | MarkKind::QuorumMissed
            | MarkKind::ValiditySpent
            | MarkKind::RestartedEmpty
            | MarkKind::Queued
            | MarkKind::Refused
            | MarkKind::Read
            | MarkKind::Rejected
            | MarkKind::MessageLost
            | MarkKind::Migrated
    )
}

/// The width of a mark's outline.
pub const MARK_LINE: f64 = 1.6;
/// How much larger presenter mode draws marks, their outlines, the overlaps' outlines and the
/// spans' bars and blocks, for a room that reads the timeline from its back row.
pub const PRESENTER_THICK: f64 = 1.5;
/// A filled mark whose inner lines are cut out of it, by stroking its path in the background's
/// colour this wide (the lost update's exclamation mark).
pub fn mark_cut(kind: MarkKind) -> Option<f64> {
    (kind == MarkKind::LostUpdate).then_some(1.0)
}

/// A repeating hatch for an area: one square tile of lines in a colour, over a background or
/// none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hatch {
    /// Its name, in the page's pattern ids and classes (`hatch-<name>`).
    pub name: &'static str,
    /// The lines of one tile, as path data.
    pub path: &'static str,
    pub colour: Colour,
    pub background: Option<Colour>,
}

/// The side of a hatch's tile, and the width of its lines.
pub const HATCH_TILE: f64 = 8.0;
pub const HATCH_LINE: f64 = 1.5;

pub const HATCH_VIOLATION: Hatch = Hatch {
    name: "violation",
    path: "M0,0 L8,8 M-2,6 L2,10 M6,-2 L10,2",
    colour: VIOLATION,
    background: Some(VIOLATION_BG),
};
pub const HATCH_OUTAGE: Hatch = Hatch {
    name: "outage",
    path: "M0,0 L8,8 M8,0 L0,8",
    colour: OUTAGE,
    background: None,
};
pub const HATCH_PARTITION: Hatch = Hatch {
    name: "partition",
    path: "M0,5 L2,3 L4,5 L6,3 L8,5",
    colour: PARTITION,
    background: None,
};
pub const HATCH_PAUSED: Hatch = Hatch {
    name: "paused",
    path: "M0,8 L8,0 M-2,2 L2,-2 M6,10 L10,6",
    colour: PAUSED,
    background: None,
};
/// The outline of a violation's cell in each lane it involves, and of the joins across the lanes
/// it does not.
pub const VIOLATION_LINE: f64 = 2.5;
pub const JOIN_LINE: f64 = 2.0;

/// Every hatch.
pub const HATCHES: [Hatch; 4] = [HATCH_VIOLATION, HATCH_OUTAGE, HATCH_PARTITION, HATCH_PAUSED];

/// The hatch that fills a span kind, for the kinds drawn as hatched backgrounds.
pub fn span_hatch(kind: SpanKind) -> Option<Hatch> {
    match kind {
        SpanKind::Waiting | SpanKind::Believed | SpanKind::Held => None,
        SpanKind::Paused => Some(HATCH_PAUSED),
        SpanKind::Outage => Some(HATCH_OUTAGE),
        SpanKind::Partition => Some(HATCH_PARTITION),
    }
}

/// Where a timeline's plot is across its width: the lane labels on the left, a margin on the
/// right, and between them the plot, where a window's times map to x.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The width of the lane labels.
    pub gutter: f64,
    /// The margin right of the plot.
    pub margin: f64,
}

impl Frame {
    /// A frame with lane labels `gutter` wide and a right margin `margin` wide.
    pub const fn new(gutter: f64, margin: f64) -> Frame {
        Frame { gutter, margin }
    }

    /// The plot's width in a timeline `width` wide.
    pub fn plot(&self, width: f64) -> f64 {
        (width - self.gutter - self.margin).max(1.0)
    }

    /// The plot's right edge.
    pub fn right(&self, width: f64) -> f64 {
        width - self.margin
    }

    /// The x coordinate of time `t` in window `w`, on a timeline `width` wide.
    pub fn x(&self, t: Micros, w: Window, width: f64) -> f64 {
        self.gutter + self.plot(width) * w.fraction(t)
    }
}

/// The narrowest the page's column of lane labels is: wide enough for the labels of most runs
/// at the page's usual type, so that their plot starts where it always did.
pub const LABELS_MIN: f64 = 112.0;
/// The widest share of a timeline's width the label column may take: the plot keeps the rest.
pub const LABELS_SHARE: f64 = 0.3;
/// Where a label's text starts, from the timeline's left edge.
pub const LABEL_INSET: f64 = 6.0;
/// The room a label column keeps besides its text: the inset on its left, and on its right a
/// gap before the plot (whose spans and marks may reach 8 pixels into the column).
pub const LABEL_PAD: f64 = 14.0;

/// The type a lane's label is drawn in: its name (bold), or on a line of its own above the name,
/// its kind ("service"), smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelType {
    Name,
    Kind,
}

/// How one lane's label is drawn in the label column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelLines {
    /// On one line, in the name's type.
    One(String),
    /// On two: the lane's kind above its name ("service" above "east-locks").
    Two { kind: String, name: String },
}

impl LabelLines {
    /// The words drawn, the lines joined by a space: the lane's whole label, unless the
    /// timeline is too narrow for it (then a line ends in "…").
    pub fn text(&self) -> String {
        match self {
            LabelLines::One(t) => t.clone(),
            LabelLines::Two { kind, name } => format!("{kind} {name}"),
        }
    }
}

/// The column of lane labels on a timeline's left: as wide as its widest label needs, between
/// [`LABELS_MIN`] and [`LABELS_SHARE`] of the timeline's width, and how each label is drawn in
/// it. A label is drawn whole on one line where that fits; a service's label that does not goes
/// on two lines, its kind above its name; only a name too wide for the widest column allowed is
/// cut, with an ellipsis. Text is measured by the painter (`measure`: a text's width in pixels in
/// a type), so the column follows the type the page draws in (larger in presenter mode).
#[derive(Clone, Debug, PartialEq)]
pub struct LaneLabels {
    /// The column's width: where the plot starts.
    pub gutter: f64,
    /// Each lane's label as drawn, in lane order.
    pub lines: Vec<LabelLines>,
}

impl LaneLabels {
    /// The label column of `lanes` on a timeline `width` wide.
    pub fn fit(
        lanes: &[crate::ui::timeline::Lane],
        width: f64,
        measure: &dyn Fn(&str, LabelType) -> f64,
    ) -> LaneLabels {
        // A service's label splits into its kind and its name; no other label does (a client's
        // or a resource's name is one word to the reader, whatever it holds).
        let split = |lane: &crate::ui::timeline::Lane| -> Option<(String, String)> {
            match lane.kind {
                crate::ui::timeline::LaneKind::Service => lane
                    .label
                    .split_once(' ')
                    .map(|(k, n)| (k.to_string(), n.to_string())),
                _ => None,
            }
        };
        let one: Vec<f64> = lanes
            .iter()
            .map(|l| measure(&l.label, LabelType::Name))
            .collect();
        let two: Vec<Option<f64>> = lanes
            .iter()
            .map(|l| {
                split(l)
                    .map(|(k, n)| measure(&k, LabelType::Kind).max(measure(&n, LabelType::Name)))
            })
            .collect();
        let need = one
            .iter()
            .zip(&two)
            .map(|(o, t)| t.map_or(*o, |t| t.min(*o)))
            .fold(0.0, f64::max);
        let widest = (width * LABELS_SHARE).max(LABELS_MIN);
        let gutter = (need.ceil() + LABEL_PAD).clamp(LABELS_MIN, widest);
        let room = gutter - LABEL_PAD;
        let lines = lanes
            .iter()
            .zip(one.iter().zip(&two))
            .map(|(lane, (o, t))| {
                if *o <= room {
                    return LabelLines::One(lane.label.clone());
                }
                match (split(lane), t) {
                    (Some((kind, name)), Some(_)) => LabelLines::Two {
                        kind: fitted(&kind, room, LabelType::Kind, measure),
                        name: fitted(&name, room, LabelType::Name, measure),
                    },
                    _ => LabelLines::One(fitted(&lane.label, room, LabelType::Name, measure)),
                }
            })
            .collect();
        LaneLabels { gutter, lines }
    }

    /// The frame of a timeline whose plot starts right of this column and keeps `margin` on its
    /// right.
    pub fn frame(&self, margin: f64) -> Frame {
        Frame::new(self.gutter, margin)
    }
}

/// `text` whole if it is at most `room` wide in type `ty`, else its longest start that fits
/// with an ellipsis (at least its first character).
fn fitted(
    text: &str,
    room: f64,
    ty: LabelType,
    measure: &dyn Fn(&str, LabelType) -> f64,
) -> String {
    if measure(text, ty) <= room {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let cut = |n: usize| -> String {
        let mut s: String = chars[..n].iter().collect();
        s.push('…');
        s
    };
    // Bounded by the text's length, a name of at most a few dozen characters.
    (1..chars.len())
        .rev()
        .map(cut)
        .find(|t| measure(t, ty) <= room)
        .unwrap_or_else(|| cut(1.min(chars.len())))
}

/// The vertical layout of a lane: its height, and the strip at its top where notes put their
/// tags, above what the lane draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneBox {
    pub height: f64,
    pub note_band: f64,
}

/// The height of a waiting span's bar, of a believed or held span's block, and the margin of a
/// hatched background to its lane's edges.
const WAITING_H: f64 = 4.0;
const BLOCK_H: f64 = 18.0;
const BACKGROUND_MARGIN: f64 = 2.0;

impl LaneBox {
    /// The middle of the drawing of a lane starting at `top`, below its note strip: where marks
    /// and links sit.
    pub fn mid(&self, top: f64) -> f64 {
        top + self.note_band + (self.height - self.note_band) / 2.0
    }

    /// The top and height of a span kind in a lane starting at `top`: centred below the note
    /// strip, except for the hatched backgrounds of pauses, outages and partitions, which fill
    /// the lane.
    pub fn span(&self, kind: SpanKind, top: f64) -> (f64, f64) {
        self.span_thick(kind, top, 1.0)
    }

    /// [`LaneBox::span`] with bars and blocks `thick` times as tall (presenter mode), never
    /// taller than the lane's room below its note strip.
    pub fn span_thick(&self, kind: SpanKind, top: f64, thick: f64) -> (f64, f64) {
        let mid = self.mid(top);
        let room = (self.height - self.note_band - 2.0).max(BLOCK_H);
        let waiting = (WAITING_H * thick).min(room);
        let block = (BLOCK_H * thick).min(room);
        match kind {
            SpanKind::Waiting => (mid - waiting / 2.0, waiting),
            SpanKind::Believed | SpanKind::Held => (mid - block / 2.0, block),
            SpanKind::Paused | SpanKind::Outage | SpanKind::Partition => (
                top + BACKGROUND_MARGIN,
                self.height - 2.0 * BACKGROUND_MARGIN,
            ),
        }
    }
}

/// About how many pixels apart the axis' ticks are.
pub const TICK_PX: f64 = 110.0;

/// A round step for the axis of a window `span` long drawn `plot_px` wide: ticks about every
/// [`TICK_PX`] pixels.
pub fn tick_step(span: Micros, plot_px: f64) -> Micros {
    let want = span.max(1) as f64 / plot_px.max(1.0) * TICK_PX;
    const STEPS: [Micros; 18] = [
        1_000,
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
    ];
    STEPS
        .into_iter()
        .find(|s| *s as f64 >= want)
        .unwrap_or(600_000_000)
}

/// Where a tick's label starts on the canvas: just right of its tick, or just left of it when
/// it would otherwise run past the canvas's right edge (the tick at the window's end), so a
/// label is never cut ("10s", not "1").
pub fn tick_label_left(tick_x: f64, label_width: f64, canvas_width: f64) -> f64 {
    if tick_x + 2.0 + label_width > canvas_width - 1.0 {
        (tick_x - 2.0 - label_width).max(0.0)
    } else {
        tick_x + 2.0
    }
}

/// A tick's label, in seconds with as many decimals as the time needs (to the millisecond).
pub fn tick_label(t: Micros) -> String {
    if t % 1_000_000 == 0 {
        format!("{}s", t / 1_000_000)
    } else if t % 100_000 == 0 {
        format!("{:.1}s", t as f64 / 1e6)
    } else if t % 10_000 == 0 {
        format!("{:.2}s", t as f64 / 1e6)
    } else {
        format!("{:.3}s", t as f64 / 1e6)
    }
}
