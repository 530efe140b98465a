//! Sweeps: the fraction of broken runs over a varied parameter, with intervals that say how
//! sure that fraction is.

use std::process::Command;

use lockstep::scenario::Protocol;
use lockstep::sweep::{self, wilson, Param, Sweeper};

use crate::scenario;

#[test]
fn wilson_intervals_match_known_values() {
    let close = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < 1e-4 && (a.1 - b.1).abs() < 1e-4;
    assert!(close(wilson(0, 10), (0.0, 0.2775)), "{:?}", wilson(0, 10));
    assert!(
        close(wilson(5, 10), (0.2366, 0.7634)),
        "{:?}",
        wilson(5, 10)
    );
    assert!(close(wilson(10, 10), (0.7225, 1.0)), "{:?}", wilson(10, 10));
    assert_eq!(wilson(0, 0), (0.0, 1.0), "no runs, no knowledge");
}

#[test]
fn a_staggered_migration_breaks_more_often_the_longer_the_workloads_overlap() {
    let s = scenario("08");
    let points = sweep::sweep(&s, Param::OverlapMs, &[0, 1000, 3000], 60).unwrap();
    let (first, last) = (&points[0], &points[2]);
    assert!(
        first.broken_high < last.broken_low,
        "the intervals do not overlap: {:.2}–{:.2} at 0 ms, {:.2}–{:.2} at 3000 ms",
        first.broken_low,
        first.broken_high,
        last.broken_low,
        last.broken_high
    );
    for p in &points {
        assert!(p.broken_low <= p.broken_rate && p.broken_rate <= p.broken_high);
        assert_eq!(p.broken_seeds.len() as u64, p.broken_runs.min(50));
        // Every listed seed really breaks.
        if let Some(&seed) = p.broken_seeds.first() {
            let (_, v) = crate::check(&Param::OverlapMs.apply(&s, p.value), seed);
            assert_eq!(v.exclusion, lockstep::Exclusion::Broken, "seed {seed}");
        }
    }

    // One authoritative lock: both workloads lock in the old service; nothing breaks however
    // long they overlap.
    let mut one = s.clone();
    one.clients[1].protocol = Protocol::Single {
        service: "old".into(),
    };
    let points = sweep::sweep(&one, Param::OverlapMs, &[0, 1000, 3000], 60).unwrap();
    assert!(points.iter().all(|p| p.broken_runs == 0), "{points:?}");
}

#[test]
fn one_service_holds_and_two_independent_ones_break() {
    let points = sweep::sweep(&scenario("01"), Param::Services, &[1, 2], 20).unwrap();
    assert_eq!(points[0].broken_runs, 0, "one service is one order");
    assert!(points[1].broken_runs > 10, "{:?}", points[1]);
}

#[test]
fn fencing_from_one_source_keeps_every_update() {
    let points = sweep::sweep(&scenario("05"), Param::Fencing, &[0, 2], 20).unwrap();
    assert!(points[0].mean_lost_updates > 0.0, "{:?}", points[0]);
    assert_eq!(points[1].mean_lost_updates, 0.0, "{:?}", points[1]);
    assert_eq!(points[1].label, "one_source");
}

#[test]
fn a_sweep_in_chunks_equals_a_sweep_in_one_go() {
    let s = scenario("06");
    let whole = sweep::sweep(&s, Param::PartitionMs, &[0, 500, 1500], 7).unwrap();
    let mut chunked = Sweeper::new(&s, Param::PartitionMs, &[0, 500, 1500], 7).unwrap();
    let mut steps = 0;
    while !chunked.step(2) {
        steps += 1;
        let (done, all) = chunked.progress();
        assert!(done <= all && all == 21);
    }
    assert!(steps >= 9);
    assert_eq!(chunked.points(), whole.as_slice());
}

#[test]
fn sweeps_that_cannot_run_say_why() {
    let cases = [
        (Param::PartitionMs, "01", "needs at least one partition"),
        (Param::PauseMs, "01", "needs at least one pause"),
        (
            Param::OverlapMs,
            "05",
            "needs the first client class to stop",
        ),
    ];
    for (param, file, why) in cases {
        let err = Sweeper::new(&scenario(file), param, &[1], 1).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
    let err = Sweeper::new(&scenario("06"), Param::PartitionMs, &[1; 101], 1).unwrap_err();
    assert!(err.to_string().contains("1 to 100 values"), "{err}");
    let err = Sweeper::new(&scenario("06"), Param::PartitionMs, &[1, 2], 60_000).unwrap_err();
    assert!(err.to_string().contains("more than the limit"), "{err}");
    let err = Sweeper::new(&scenario("06"), Param::PartitionMs, &[u64::MAX], 1).unwrap_err();
    assert!(err.to_string().contains("partition_ms = "), "{err}");
}

#[test]
fn the_command_line_sweeps_any_parameter_and_plots_it() {
    let file = crate::scenarios_dir().join("08-staggered-migration.toml");
    let file = file.to_str().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "sweep",
        file,
        "--param",
        "overlap_ms",
        "--values",
        "0,2000",
        "--seeds",
        "5",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = sweep::sweep(&scenario("08"), Param::OverlapMs, &[0, 2000], 5).unwrap();
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, serde_json::to_value(&expected).unwrap());

    let svg = run(&[
        "sweep",
        file,
        "--param",
        "overlap_ms",
        "--values",
        "0,2000",
        "--seeds",
        "5",
        "--svg",
    ]);
    let svg = String::from_utf8(svg.stdout).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for words in [
        "overlap of the two workloads (ms)",
        "95% confidence (Wilson)",
        "runs with exclusion broken",
    ] {
        assert!(svg.contains(words), "the plot names {words:?}");
    }

    for (args, why) in [
        (
            vec!["sweep", file, "--param", "colour", "--values", "1"],
            "is not one of",
        ),
        (
            vec!["sweep", file, "--param", "fencing", "--values", "maybe"],
            "not a fencing mode",
        ),
        (
            vec!["sweep", file, "--param", "overlap_ms"],
            "--param with --values",
        ),
        (vec!["sweep", file], "needs --param"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

mod lab {
    use lockstep::sweep::Param;
    use lockstep::ui::lab::{nearest_point, suggested_values, work, LabReply, LabRequest};

    #[test]
    fn the_worker_reports_progress_then_the_points_and_their_plot() {
        let s = crate::scenario("08");
        let request = LabRequest::Sweep {
            scenario: s.to_toml_string(),
            param: Param::OverlapMs,
            values: suggested_values(Param::OverlapMs, &s),
            seeds: 12,
        };
        // The request crosses to the worker as JSON and back.
        let request: LabRequest =
            serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
        let mut replies = Vec::new();
        work(&request, |r| replies.push(r));
        let progress: Vec<(u64, u64)> = replies
            .iter()
            .filter_map(|r| match r {
                LabReply::Progress { done, total } => Some((*done, *total)),
                _ => None,
            })
            .collect();
        assert!(progress.len() >= 2, "{progress:?}");
        assert!(progress.windows(2).all(|w| w[0].0 < w[1].0), "{progress:?}");
        assert_eq!(progress.last(), Some(&(60, 60)));
        let Some(LabReply::Swept { points, .. }) = replies.last() else {
            panic!("the last reply is the result: {:?}", replies.last());
        };
        let direct =
            lockstep::sweep::sweep(&s, Param::OverlapMs, &[0, 1500, 3000, 4500, 6000], 12).unwrap();
        assert_eq!(points, &direct, "the worker's points are the library's");
    }

    #[test]
    fn a_bad_request_fails_with_its_reason() {
        let mut replies = Vec::new();
        work(
            &LabRequest::Sweep {
                scenario: crate::scenario("01").to_toml_string(),
                param: Param::PartitionMs,
                values: vec![0, 100],
                seeds: 3,
            },
            |r| replies.push(r),
        );
        assert!(
            matches!(&replies[..], [LabReply::Failed { why }] if why.contains("needs at least one partition")),
            "{replies:?}"
        );
    }

    #[test]
    fn a_click_picks_the_nearest_point() {
        let points =
            lockstep::sweep::sweep(&crate::scenario("05"), Param::Fencing, &[0, 1, 2], 2).unwrap();
        assert_eq!(nearest_point(&points, 0.0), Some(0));
        assert_eq!(nearest_point(&points, 0.45), Some(1));
        assert_eq!(nearest_point(&points, 2.0), Some(2));
        assert_eq!(nearest_point(&[], 0.5), None);
    }
}

mod explore_in_the_page {
    use lockstep::ui::lab::{work, LabReply, LabRequest};
    use lockstep::ui::{Action, App};
    use lockstep::Exclusion;

    fn explore(file: &str) -> Vec<LabReply> {
        let mut replies = Vec::new();
        let scenario = crate::scenario(file).to_toml_string();
        work(&LabRequest::Explore { scenario }, |r| replies.push(r));
        replies
    }

    #[test]
    fn two_services_break_in_six_steps_and_the_path_opens_as_the_run() {
        let replies = explore("01");
        let Some(LabReply::Counterexample {
            property, steps, ..
        }) = replies.last()
        else {
            panic!("{replies:?}");
        };
        assert_eq!(property, "exclusion");
        assert_eq!(steps.len(), 6, "the same shortest path as lockstep explore");
        let app = App::open("01-two-services.toml");
        let app = app.reduce(lockstep::ui::lab::counterexample(
            &app.scenario,
            property,
            steps,
        ));
        assert_eq!(
            app.outcome.verdict.exclusion,
            Exclusion::Broken,
            "the replay shows the overlap"
        );
        assert!(app.notice.as_deref().unwrap().contains("6 steps"));
        assert_eq!(
            app.cursor,
            app.outcome.events.len(),
            "it opens at its end, on the violation"
        );
        // A path for another scenario is refused, not replayed.
        let fencing = App::open("05-fencing.toml");
        let other = fencing.reduce(lockstep::ui::lab::counterexample(
            &fencing.scenario,
            "exclusion",
            &[999_999],
        ));
        assert!(other.notice.unwrap().contains("cannot be shown"));
        // A path found before the scenario changed is not replayed on the new one.
        let found = lockstep::ui::lab::counterexample(&app.scenario, property, steps);
        let changed = app.reduce(Action::NewSeed).reduce(found);
        assert!(changed
            .notice
            .unwrap()
            .contains("the scenario changed since it was found"));
    }

    #[test]
    fn a_subordinate_chain_holds_and_a_timed_scenario_says_why_it_cannot_be_explored() {
        let mut replies = Vec::new();
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/it/explore/subordinate-chain.toml"),
        )
        .unwrap();
        work(&LabRequest::Explore { scenario: text }, |r| replies.push(r));
        assert!(
            matches!(replies.last(), Some(LabReply::Holds { states, .. }) if *states > 10),
            "{:?}",
            replies.last()
        );
        let timed = explore("06");
        assert!(
            matches!(&timed[..], [LabReply::Failed { why }] if why.contains("cannot explore")),
            "{timed:?}"
        );
    }
}

/// A number attribute of an SVG element's text.
fn attr(element: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let at = element.find(&key).expect("the attribute") + key.len();
    element[at..]
        .split('"')
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number")
}

/// A curve that reaches 100% is not hidden under the legend: the legend's box ends above the
/// highest point.
#[test]
fn the_legend_sits_above_a_curve_at_one_hundred_percent() {
    let points = sweep::sweep(&scenario("06"), Param::PartitionMs, &[1000, 1500], 4).unwrap();
    assert!(points.iter().all(|p| p.broken_rate == 1.0), "{points:?}");
    let svg = lockstep::plot::svg("A sweep at 100%", Param::PartitionMs, &points).unwrap();
    let top_point = svg
        .lines()
        .filter(|l| l.starts_with("<circle"))
        .map(|l| attr(l, "cy") - attr(l, "r"))
        .fold(f64::INFINITY, f64::min);
    let legend = svg
        .lines()
        .find(|l| l.starts_with("<rect") && l.contains("opacity=\"0.9\""))
        .expect("the legend's box");
    let legend_bottom = attr(legend, "y") + attr(legend, "height");
    assert!(
        legend_bottom < top_point,
        "the legend ends at y={legend_bottom}, the curve's top is at y={top_point}"
    );
}

/// A fencing sweep runs from a scenario that already fences with one source: the other values
/// drop the source instead of leaving a scenario that does not validate.
#[test]
fn a_fencing_sweep_runs_from_one_source_fencing() {
    let mut s = scenario("05");
    s.resources[0].fencing = lockstep::scenario::Fencing::OneSource;
    s.resources[0].fencing_source = Some(s.services[0].name.clone());
    s.validate().expect("a valid start");
    let points = sweep::sweep(&s, Param::Fencing, &[0, 1, 2], 2).expect("every value runs");
    assert_eq!(points.len(), 3);
}

/// The sweep panel as the page drives it: the form read against the scenario, a run from
/// request to answer, a click on the plot, and the replies that come too late.
#[test]
fn the_sweep_panel_is_a_reducer() {
    use lockstep::ui::lab::{LabRequest, SweepAction, SweepPanel, SweepState, Swept};
    use std::rc::Rc;
    let s = scenario("06");
    let panel = SweepPanel::default();
    let form = panel.form(&s);
    assert!(
        form.offered.contains(&Param::PartitionMs),
        "{:?}",
        form.offered
    );
    assert_eq!(form.param, form.offered[0], "the first offered is chosen");
    assert!(!form.values_text.is_empty(), "values are suggested");
    let Some(LabRequest::Sweep { seeds, values, .. }) = form.request(&s) else {
        panic!("the suggested form can run");
    };
    assert_eq!(seeds, 50);

    // A parameter chosen brings its own suggestions back; bad input says why and cannot run.
    let p = panel
        .reduce(SweepAction::Values("1,2".into()))
        .reduce(SweepAction::Param(Param::PartitionMs));
    assert!(p.values.is_empty());
    let bad = p.reduce(SweepAction::Seeds("0".into()));
    assert_eq!(bad.form(&s).seeds, Err("seeds: 1 to 2000".into()));
    assert!(bad.form(&s).request(&s).is_none());
    assert!(!bad.form(&s).can_run() && form.can_run());
    let empty = p.reduce(SweepAction::Values(" , ".into()));
    assert!(empty.form(&s).values.is_err());
    // A parameter the scenario does not offer falls back to the first it offers.
    let lone = scenario("01");
    let odd = panel.reduce(SweepAction::Param(Param::PartitionMs));
    if Param::PartitionMs.problem(&lone).is_some() {
        assert_ne!(odd.form(&lone).param, Param::PartitionMs);
    }

    // Started, progress, an answer; a click near the second value picks it.
    let total = seeds * values.len() as u64;
    let running = p.reduce(SweepAction::Started { total });
    assert_eq!(running.state, SweepState::Running { done: 0, total });
    let running = running.reduce(SweepAction::Progress { done: 10, total });
    let points = sweep::sweep(&s, Param::PartitionMs, &[0, 500, 1000], 4).unwrap();
    let swept = Rc::new(Swept {
        param: Param::PartitionMs,
        points,
        title: "t".into(),
    });
    let done = running.reduce(SweepAction::Finished(Ok(Rc::clone(&swept))));
    assert_eq!(done.state, SweepState::Done(Rc::clone(&swept)));
    assert_eq!(done.reduce(SweepAction::PickAt(0.45)).picked, Some(1));
    assert_eq!(done.reduce(SweepAction::Pick(Some(9))).picked, None);
    // Late replies and a late cancel change nothing; a cancel while running says so.
    assert_eq!(done.reduce(SweepAction::Progress { done: 1, total }), done);
    assert_eq!(done.reduce(SweepAction::Cancelled), done);
    let cancelled = running.reduce(SweepAction::Cancelled);
    assert_eq!(cancelled.state, SweepState::Failed("Cancelled.".into()));
    assert_eq!(
        cancelled.reduce(SweepAction::Finished(Ok(swept))).state,
        cancelled.state
    );
}

/// The exploration panel as a reducer over the worker's replies.
#[test]
fn the_search_panel_is_a_reducer() {
    use lockstep::ui::lab::{LabReply, Search, SearchAction};
    let running = Search::Idle.reduce(SearchAction::Started);
    assert_eq!(
        running,
        Search::Running {
            states: 0,
            depth: 0
        }
    );
    let progress = running.reduce(SearchAction::Reply(LabReply::Exploring {
        states: 10,
        depth: 3,
    }));
    assert_eq!(
        progress,
        Search::Running {
            states: 10,
            depth: 3
        }
    );
    let answer = progress.reduce(SearchAction::Reply(LabReply::Counterexample {
        property: "exclusion".into(),
        broken: "two hold".into(),
        steps: vec![1, 2],
        states: 12,
    }));
    assert!(answer.is_answer());
    assert!(matches!(&answer, Search::Broken { steps, .. } if steps == &[1, 2]));
    assert_eq!(answer.reduce(SearchAction::Cancelled), answer);
    let cancelled = progress.reduce(SearchAction::Cancelled);
    assert_eq!(cancelled, Search::Failed("Cancelled.".into()));
    let late = cancelled.reduce(SearchAction::Reply(LabReply::Holds {
        states: 1,
        depth: 1,
        complete: true,
    }));
    assert_eq!(late, cancelled, "an answer after a cancel is not shown");
    let odd = running.reduce(SearchAction::Reply(LabReply::Progress {
        done: 1,
        total: 2,
    }));
    assert!(matches!(odd, Search::Failed(why) if why.starts_with("an unexpected answer")));
}
