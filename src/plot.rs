//! The plot of a sweep: the broken rate against the varied parameter, with its 95% confidence
//! band, drawn with plotters on any backend, so the command line's SVG and the page's canvas
//! are one drawing.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::sweep::{Param, SweepPoint};

/// The plot's size in pixels, for the SVG the command line writes.
pub const SIZE: (u32, u32) = (720, 420);
/// Where the horizontal axis starts and ends, in pixels from the left: the margin and the
/// label area on the left, the margin on the right. A click on the picture maps to a value
/// through them.
pub const AXIS_X_PX: (u32, u32) = (MARGIN + Y_LABELS, SIZE.0 - MARGIN);
const MARGIN: u32 = 12;
const Y_LABELS: u32 = 56;

/// The top of the vertical axis: 100% and room for the legend above it.
const Y_TOP: f64 = 1.35;

const RATE: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const BAND: RGBColor = RGBColor(0xd5, 0x5e, 0x00);

/// Draws the sweep on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    param: Param,
    points: &[SweepPoint],
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let (lo, hi) = points.iter().fold((u64::MAX, 0u64), |(lo, hi), p| {
        (lo.min(p.value), hi.max(p.value))
    });
    let (lo, hi) = if points.is_empty() {
        (0, 1)
    } else if lo == hi {
        (lo.saturating_sub(1), hi + 1)
    } else {
        (lo, hi)
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 16))
        .margin(MARGIN)
        .x_label_area_size(42)
        .y_label_area_size(Y_LABELS)
        // The vertical axis runs a little past 100%, so that the legend, in the upper left,
        // sits above a curve and band that reach 100% instead of on them.
        .build_cartesian_2d(lo as f64..hi as f64, 0.0f64..Y_TOP)
        .map_err(err)?;
    let labels: Vec<(u64, String)> = points.iter().map(|p| (p.value, p.label.clone())).collect();
    let categorical = param == Param::Fencing;
    chart
        .configure_mesh()
        .x_desc(param.axis())
        .y_desc("runs with exclusion broken")
        .y_label_formatter(&|y| {
            if *y <= 1.0 + 1e-9 {
                format!("{:.0}%", y * 100.0)
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|x| {
            if categorical {
                labels
                    .iter()
                    .find(|(v, _)| (*v as f64 - x).abs() < 0.01)
                    .map(|(_, l)| l.clone())
                    .unwrap_or_default()
            } else {
                format!("{x:.0}")
            }
        })
        .x_labels(if categorical { points.len() * 2 + 1 } else { 8 })
        .draw()
        .map_err(err)?;
    // The band first, under the line: the Wilson interval of each point, joined.
    let mut band: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.value as f64, p.broken_high))
        .collect();
    band.extend(points.iter().rev().map(|p| (p.value as f64, p.broken_low)));
    chart
        .draw_series(std::iter::once(Polygon::new(band, BAND.mix(0.18).filled())))
        .map_err(err)?
        .label("95% confidence (Wilson)")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], BAND.mix(0.18).filled()));
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.value as f64, p.broken_rate)),
            RATE.stroke_width(2),
        ))
        .map_err(err)?
        .label("fraction of runs with exclusion broken")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], RATE.stroke_width(2)));
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.value as f64, p.broken_rate), 4, RATE.filled())),
        )
        .map_err(err)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

/// The plot as an SVG document.
pub fn svg(title: &str, param: Param, points: &[SweepPoint]) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, title, param, points)?;
    }
    Ok(out)
}
