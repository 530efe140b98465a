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

/// The numbers of one attribute on every element that has it, in order.
fn attr_values(svg: &str, element: &str, attr: &str) -> Vec<f64> {
    svg.split(&format!("<{element} "))
        .skip(1)
        .filter_map(|t| {
            let t = format!(" {}", t.split('>').next()?);
            t.split(&format!(" {attr}=\""))
                .nth(1)?
                .split('"')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .collect()
}

/// A picture drawn at GitHub's 830 px keeps its type at full size and its words inside it:
/// every headline line fits, every note label lies within the picture, clear of its tag and
/// the marks it describes, and is its note's words, whole, or the first of them with an
/// ellipsis; and the picture ends under its legend, with no empty band.
#[test]
fn a_picture_drawn_830_wide_keeps_every_word_inside_and_legible() {
    use lockstep::ui::svg::{headline_chars, timeline_svg_at, LABEL_CHAR_PX};
    for b in lockstep::builtin::ALL {
        let s = lockstep::Scenario::from_toml_str(b.toml()).unwrap();
        let outcome = Outcome::compute(&s).unwrap();
        let svg = timeline_svg_at(&s.name, &outcome, "", None, 830);
        assert!(svg.contains(r#"width="830""#) && svg.contains("viewBox=\"0 0 830 "));
        for line in svg.split("<tspan ").skip(1) {
            let text = line.split('>').nth(1).unwrap().split('<').next().unwrap();
            assert!(
                text.chars().count() <= headline_chars(830),
                "{}: a headline line of {} characters: {text}",
                b.file,
                text.chars().count()
            );
        }
        assert!(headline_chars(830) as f64 * 6.6 <= 830.0 - 24.0);
        // The notes' labels: the texts of size 10 inside a note's group.
        for (note, group) in outcome
            .layout
            .notes
            .iter()
            .zip(svg.split("<g class=\"note\"").skip(1))
        {
            let group = group.split("</g>").next().unwrap();
            let Some(label) = group.split(r#"font-size="10">"#).nth(1) else {
                continue;
            };
            let label = label.split('<').next().unwrap().replace("&apos;", "'");
            let x: f64 = attr_values(group, "text", "x")[1];
            let w = label.chars().count() as f64 * LABEL_CHAR_PX;
            assert!(
                x >= 0.0 && x + w <= 830.0 - 16.0,
                "{}: {label} at {x}",
                b.file
            );
            let words = label.trim_end_matches('…');
            assert!(
                label == note.short
                    || (label.ends_with('…')
                        && note.short.starts_with(words)
                        && note.short[words.len()..].starts_with(' ')),
                "{}: \"{label}\" is not whole words of \"{}\"",
                b.file,
                note.short
            );
            let tag: f64 = attr_values(group, "text", "x")[0];
            assert!(
                x >= tag + 6.0 || x + w <= tag - 6.0,
                "{}: {label} over its tag",
                b.file
            );
        }
        let height = attr_values(&svg, "svg", "height")[0];
        let lowest = attr_values(&svg, "text", "y")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(
            lowest < height && height - lowest <= 14.0,
            "{}: the last words at {lowest} in a picture {height} high",
            b.file
        );
    }
}

/// Where a note's label goes: right of what it describes, else left, else shortened by whole
/// words, never past the edges or over another label; nothing when not even a word fits.
#[test]
fn a_note_label_is_placed_clear_of_its_marks_or_shortened_by_whole_words() {
    use lockstep::ui::svg::{place_label, Label, LABEL_CHAR_PX};
    let w = |t: &str| t.chars().count() as f64 * LABEL_CHAR_PX;
    let bounds = (150.0, 814.0);
    // Room on the right.
    let l = place_label("stale write accepted", (300.0, 320.0), bounds, &[]).unwrap();
    assert_eq!(l.text, "stale write accepted");
    assert_eq!((l.from, l.to), (328.0, 328.0 + w("stale write accepted")));
    // At the right edge: on the left, clear of the marks it describes.
    let l = place_label("stale write accepted", (780.0, 800.0), bounds, &[]).unwrap();
    assert_eq!(l.to, 772.0);
    // No room on the right, a label in the way on the left: the first words that fit there,
    // with an ellipsis, two at least.
    let taken = [(560.0, 640.0)];
    let l = place_label("fast-1 overwrote slow-1", (760.0, 780.0), bounds, &taken).unwrap();
    assert_eq!(
        l,
        Label {
            text: "fast-1 overwrote…".into(),
            from: 752.0 - w("fast-1 overwrote…"),
            to: 752.0
        }
    );
    // Room for one word only: no label, rather than "fast-1…", which says nothing.
    let taken = [(600.0, 700.0)];
    assert_eq!(
        place_label("fast-1 overwrote slow-1", (760.0, 780.0), bounds, &taken),
        None
    );
    // Nowhere for even the first word: no label.
    assert_eq!(
        place_label("overwritten", (140.0, 810.0), bounds, &[]),
        None
    );
    // Never over a label already drawn in its lane.
    let l = place_label("ab", (300.0, 300.0), bounds, &[(305.0, 340.0)]).unwrap();
    assert!(l.to <= 305.0 || l.from >= 340.0, "{l:?}");
}

/// A width for text in the page's lane-label types, as the canvas would measure it in a
/// sans-serif bold at `px` pixels: a little wide for lower-case names and digits, so that a
/// label it fits would fit the page too.
fn estimate(name_px: f64, kind_px: f64) -> impl Fn(&str, paint::LabelType) -> f64 {
    move |text: &str, ty: paint::LabelType| {
        let n = text.chars().count() as f64;
        match ty {
            paint::LabelType::Name => n * 0.68 * name_px,
            paint::LabelType::Kind => n * 0.6 * kind_px,
        }
    }
}

/// The timeline's width in presenter mode on a 1366×768 screen: the run's column of a lesson.
const PRESENTER_1366: f64 = 764.0;
/// Presenter mode's type: a quarter larger than the page's 11 px names and 10 px kinds.
const PRESENTER_SCALE: f64 = 1.25;

/// Every lane label of every step and exercise of the shipped course is drawn whole in
/// presenter mode at 1366×768 ("service replica-locks", not "replica-lo…"), and the label
/// column stays a small share of the timeline.
#[test]
fn every_lane_label_of_the_course_is_drawn_whole_in_presenter_mode_at_1366() {
    use lockstep::lesson::{self, wire};
    use lockstep::ui::course::{places, Course, LessonAction};
    use lockstep::ui::{Action, App};
    use std::sync::Arc;

    let files = wire::course_files(&lesson::builtin::lessons());
    let course = Arc::new(Course::new(
        wire::read_course_files(&files).expect("the course reads back"),
        Vec::new(),
    ));
    let measure = estimate(11.0 * PRESENTER_SCALE, 10.0 * PRESENTER_SCALE);
    let (mut places_seen, mut widened, mut two_lines) = (0, 0, 0);
    for (index, cl) in course.lessons.iter().enumerate() {
        for place in places(&cl.lesson) {
            let app =
                App::open("01-two-services.toml").reduce(Action::Lesson(LessonAction::Open {
                    course: Arc::clone(&course),
                    index,
                    place,
                    resume: Vec::new(),
                }));
            let lanes = &app.outcome.layout.lanes;
            let labels = paint::LaneLabels::fit(lanes, PRESENTER_1366, &measure);
            let where_ = format!("{} {place:?}", cl.lesson.id);
            assert_eq!(labels.lines.len(), lanes.len(), "{where_}");
            for (lane, lines) in lanes.iter().zip(&labels.lines) {
                assert_eq!(lines.text(), lane.label, "{where_}: a label is cut");
                let room = labels.gutter - paint::LABEL_PAD;
                match lines {
                    paint::LabelLines::One(t) => {
                        assert!(measure(t, paint::LabelType::Name) <= room, "{where_}: {t}")
                    }
                    paint::LabelLines::Two { kind, name } => {
                        two_lines += 1;
                        assert!(
                            measure(kind, paint::LabelType::Kind) <= room
                                && measure(name, paint::LabelType::Name) <= room,
                            "{where_}: {kind} {name}"
                        );
                    }
                }
            }
            assert!(
                labels.gutter >= paint::LABELS_MIN
                    && labels.gutter <= PRESENTER_1366 * paint::LABELS_SHARE,
                "{where_}: a column {} wide",
                labels.gutter
            );
            widened += usize::from(labels.gutter > paint::LABELS_MIN);
            places_seen += 1;
        }
    }
    assert!(places_seen >= 60, "{places_seen} places");
    // The course has labels longer than the usual column holds at presenter mode's size.
    assert!(
        widened > 0 && two_lines > 0,
        "{widened} widened, {two_lines} on two lines"
    );
}

/// The column is as wide as its widest label needs, never narrower than the usual one, and a
/// service's label longer than that goes on two lines before the column widens for it.
#[test]
fn the_label_column_fits_its_widest_label() {
    use lockstep::ui::timeline::{Lane, LaneKind};
    let lane = |kind: LaneKind, label: &str| Lane {
        kind,
        label: label.to_string(),
        spans: Vec::new(),
        marks: Vec::new(),
    };
    let measure = estimate(11.0, 10.0);
    // Short labels: the usual column, every label on one line.
    let short = [
        lane(LaneKind::Client, "batch-1"),
        lane(LaneKind::Service, "service old"),
        lane(LaneKind::Resource, "orders"),
        lane(LaneKind::Faults, "faults"),
    ];
    let fitted = paint::LaneLabels::fit(&short, 900.0, &measure);
    assert_eq!(fitted.gutter, paint::LABELS_MIN);
    assert!(fitted
        .lines
        .iter()
        .all(|l| matches!(l, paint::LabelLines::One(_))));
    assert_eq!(
        fitted.frame(10.0).plot(900.0),
        900.0 - paint::LABELS_MIN - 10.0
    );

    // A long client name widens the column to fit it on its line; a service's long label goes
    // on two lines, its kind above its name, as the column is then wide enough for that.
    let long = [
        lane(LaneKind::Client, "settlement-reconciler-1"),
        lane(LaneKind::Service, "service replica-locks"),
    ];
    let fitted = paint::LaneLabels::fit(&long, 900.0, &measure);
    let need = measure("settlement-reconciler-1", paint::LabelType::Name);
    assert_eq!(fitted.gutter, need.ceil() + paint::LABEL_PAD);
    assert_eq!(
        fitted.lines[0],
        paint::LabelLines::One("settlement-reconciler-1".into())
    );
    assert_eq!(
        fitted.lines[1],
        paint::LabelLines::One("service replica-locks".into()),
        "one line, since the client's label made room for it"
    );
    let service_only = paint::LaneLabels::fit(&long[1..], 900.0, &estimate(14.0, 12.0));
    assert_eq!(
        service_only.lines[0],
        paint::LabelLines::Two {
            kind: "service".into(),
            name: "replica-locks".into()
        }
    );
    assert!(service_only.gutter < 14.0 * 0.68 * 21.0 + paint::LABEL_PAD);

    // On a narrow timeline the column takes at most its share of the width, and only then is
    // a name cut, with an ellipsis, to what fits.
    let narrow = paint::LaneLabels::fit(&long, 400.0, &measure);
    assert_eq!(narrow.gutter, 400.0 * paint::LABELS_SHARE);
    let paint::LabelLines::One(cut) = &narrow.lines[0] else {
        panic!("one line: {:?}", narrow.lines[0]);
    };
    assert!(cut.ends_with('…') && "settlement-reconciler-1".starts_with(cut.trim_end_matches('…')));
    assert!(measure(cut, paint::LabelType::Name) <= narrow.gutter - paint::LABEL_PAD);
}
