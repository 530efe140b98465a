//! The one table of how the timeline looks (`lockstep::ui::paint`), which the page's canvas and
//! the exported SVG both draw with: every kind has its entry, the entries are told apart where
//! the design means them to be, and the table agrees with the page's style sheet.

use std::collections::BTreeSet;

use lockstep::ui::export;
use lockstep::ui::links::LinkKind;
use lockstep::ui::notes::NoteKind;
use lockstep::ui::paint::{self, Colour};
use lockstep::ui::timeline::{MarkKind, SpanKind};
use lockstep::ui::Outcome;

use crate::scenario;

fn in_table(c: Colour) -> bool {
    paint::COLOURS.contains(&c)
}

/// The custom properties of the style sheet's first `:root` block (its light theme).
fn style_sheet_light() -> Vec<(String, String)> {
    let css = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/static/style.css"))
        .expect("the style sheet");
    let start = css.find(":root {").expect("a :root block");
    let end = start + css[start..].find('}').expect("its end");
    css[start..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix("--"))
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| {
            (
                format!("--{}", name.trim()),
                value.trim().trim_end_matches(';').trim().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_colour_table_matches_the_style_sheet() {
    let vars: BTreeSet<&str> = paint::COLOURS.iter().map(|c| c.var).collect();
    assert_eq!(vars.len(), paint::COLOURS.len(), "one entry a variable");
    let sheet = style_sheet_light();
    for c in paint::COLOURS {
        let value = sheet
            .iter()
            .find(|(name, _)| name == c.var)
            .map(|(_, v)| v.as_str());
        assert_eq!(value, Some(c.light), "{} in static/style.css", c.var);
    }
}

#[test]
fn every_span_kind_has_its_own_colour() {
    let colours: BTreeSet<&str> = SpanKind::ALL
        .iter()
        .map(|k| paint::span_colour(*k))
        .inspect(|c| assert!(in_table(*c), "{c:?}"))
        .map(|c| c.light)
        .collect();
    assert_eq!(colours.len(), SpanKind::ALL.len(), "{colours:?}");
    for k in SpanKind::ALL {
        if let Some(h) = paint::span_hatch(k) {
            assert_eq!(h.colour, paint::span_colour(k), "{k:?}'s hatch");
            assert_eq!(paint::span_edge(k), Some(h.colour), "{k:?}'s outline");
        }
    }
}

/// Each note kind has its own entry (its own variable, which a theme may set apart); its letter
/// tells it apart without colour, so two kinds may share a value in a theme.
#[test]
fn every_note_kind_has_its_own_colour_entry() {
    let vars: BTreeSet<&str> = NoteKind::ALL
        .iter()
        .map(|k| paint::note_colour(*k))
        .inspect(|c| assert!(in_table(*c), "{c:?}"))
        .map(|c| c.var)
        .collect();
    assert_eq!(vars.len(), NoteKind::ALL.len(), "{vars:?}");
    let letters: BTreeSet<&str> = NoteKind::ALL.iter().map(|k| k.letter()).collect();
    assert_eq!(letters.len(), NoteKind::ALL.len());
}

/// Every mark kind has a colour from the table and a shape of its own: the shape, not the
/// colour, tells the lock service's own marks apart.
#[test]
fn every_mark_kind_has_a_colour_and_its_own_shape() {
    let mut shapes = BTreeSet::new();
    let mut looks = BTreeSet::new();
    for k in MarkKind::ALL {
        let c = paint::mark_colour(k);
        assert!(in_table(c), "{k:?}: {c:?}");
        let path = paint::mark_path(k);
        assert!(path.starts_with('M') && path.len() > 4, "{k:?}: {path}");
        assert!(shapes.insert(path), "{k:?} shares its shape");
        assert!(looks.insert((c.var, path)), "{k:?} looks like another");
    }
    for k in LinkKind::ALL {
        assert!(in_table(paint::link_style(k).0), "{k:?}");
    }
    let dashes: BTreeSet<String> = LinkKind::ALL
        .iter()
        .map(|k| format!("{:?}", paint::link_style(*k).1))
        .collect();
    assert!(dashes.len() >= 4, "links are told apart by their dashes");
}

/// The exported picture draws with the table: the marks' shapes, the hatches and the colours.
#[test]
fn the_exported_svg_draws_with_the_table() {
    let s = scenario("05");
    let outcome = Outcome::compute(&s).unwrap();
    let svg = export::timeline_svg(&s, &outcome, None);
    for k in [MarkKind::Write, MarkKind::LostUpdate] {
        assert!(
            svg.contains(&format!(
                "d=\"{}\" fill=\"{}\"",
                paint::mark_path(k),
                paint::mark_colour(k).light
            )),
            "{k:?}"
        );
    }
    for h in paint::HATCHES {
        assert!(svg.contains(&format!("id=\"ls-hatch-{}\"", h.name)));
        assert!(svg.contains(h.path));
    }
    assert!(svg.contains("fill=\"url(#ls-hatch-paused)\""), "the pause");
    assert!(svg.contains(&format!(
        "fill=\"{}\"",
        paint::note_colour(NoteKind::LostUpdate).light
    )));
}

#[test]
fn ticks_are_round_and_labelled_in_seconds() {
    assert_eq!(paint::tick_step(3_000_000, 1034.0), 500_000);
    assert_eq!(paint::tick_step(3_000_000, 330.0), 1_000_000);
    assert_eq!(paint::tick_label(2_000_000), "2s");
    assert_eq!(paint::tick_label(500_000), "0.5s");
    assert_eq!(paint::tick_label(250_000), "0.25s");
    assert_eq!(paint::tick_label(1_000), "0.001s");
}

/// The last tick's label, at the canvas's right edge, is drawn left of its tick rather than
/// cut ("10s", not "1"); every other label sits right of its tick.
#[test]
fn a_tick_label_at_the_right_edge_is_not_cut() {
    use lockstep::ui::paint::tick_label_left;
    let (width, label) = (960.0, 18.0);
    assert_eq!(tick_label_left(400.5, label, width), 402.5);
    let last = tick_label_left(959.5, label, width);
    assert!(last + label <= width, "the whole label fits: {last}");
    assert!(last < 959.5, "left of its tick");
    assert_eq!(
        tick_label_left(5.0, 30.0, 20.0),
        0.0,
        "never left of the canvas"
    );
}

/// Presenter mode's thicker bars and blocks stay centred where the plain ones are, and never
/// leave their lane's room below the note strip; at 1 they are the plain ones.
#[test]
fn thicker_spans_stay_in_their_lane() {
    for height in [38.0, 56.0] {
        let b = paint::LaneBox {
            height,
            note_band: 12.0,
        };
        for kind in [
            SpanKind::Waiting,
            SpanKind::Believed,
            SpanKind::Held,
            SpanKind::Paused,
        ] {
            let top = 100.0;
            assert_eq!(b.span_thick(kind, top, 1.0), b.span(kind, top));
            let (y0, h0) = b.span(kind, top);
            let (y, h) = b.span_thick(kind, top, paint::PRESENTER_THICK);
            assert!(h >= h0, "{kind:?} in a {height} px lane: {h} < {h0}");
            assert!(
                (y + h / 2.0 - (y0 + h0 / 2.0)).abs() < 1e-9,
                "{kind:?} stays centred"
            );
            assert!(
                y >= top && y + h <= top + height,
                "{kind:?} leaves its {height} px lane: {y}..{}",
                y + h
            );
        }
        let (_, plain) = b.span(SpanKind::Held, 0.0);
        let (_, thick) = b.span_thick(SpanKind::Held, 0.0, paint::PRESENTER_THICK);
        if height >= 56.0 {
            assert!(thick > plain, "a tall lane has room for a thicker block");
        }
    }
}

/// A picture of a majority run names the marks of that protocol in its legend, drawn with the
/// table, and grows to hold them; a picture of a run without them does not list them.
#[test]
fn the_exported_svg_legend_names_the_majority_marks_its_run_has() {
    let legend = |svg: &str, k: MarkKind| svg.contains(&format!(">{}</text>", k.meaning()));
    let s = scenario("15");
    let svg = export::timeline_svg(&s, &Outcome::compute(&s).unwrap(), None);
    for k in [MarkKind::QuorumMissed, MarkKind::RestartedEmpty] {
        assert!(legend(&svg, k), "{k:?}");
        assert!(svg.contains(&format!("d=\"{}\" fill=\"none\"", paint::mark_path(k))));
    }
    assert!(
        !legend(&svg, MarkKind::ValiditySpent),
        "15 spends no validity"
    );
    // Every text of the picture lies inside it.
    let height: f64 = svg
        .split("height=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let lowest = svg
        .split("<text ")
        .skip(1)
        .filter_map(|t| {
            t.split(" y=\"")
                .nth(1)?
                .split('"')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .fold(0.0, f64::max);
    assert!(lowest < height, "{lowest} in a picture {height} high");
    let s = scenario("05");
    let svg = export::timeline_svg(&s, &Outcome::compute(&s).unwrap(), None);
    for k in [
        MarkKind::QuorumMissed,
        MarkKind::ValiditySpent,
        MarkKind::RestartedEmpty,
    ] {
        assert!(!legend(&svg, k), "{k:?}");
    }
}
