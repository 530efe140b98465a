//! The page shows the run of the controls as they read: after any sequence of control changes,
//! in any lesson step, exercise or the sandbox, the run shown is a fresh run of the scenario
//! that the controls' current values describe. No earlier value of a control lingers.

use std::sync::Arc;

use lockstep::builtin;
use lockstep::lesson::{self, wire, Control};
use lockstep::scenario::{Fencing, FencingChecks, MigrationMode, Scenario};
use lockstep::ui::course::{places, Course, LessonAction, Place};
use lockstep::ui::toggles::{self, Toggle};
use lockstep::ui::{Action, App};

use crate::Draw;

fn course() -> Arc<Course> {
    let files = wire::course_files(&lesson::builtin::lessons());
    let loaded = wire::read_course_files(&files).expect("the course file reads back");
    Arc::new(Course::new(loaded, Vec::new()))
}

/// A place with its controls in reach: a step's prediction is skipped ("Just show me") and its
/// run played through, since the controls wait for the prediction.
fn open_place(course: &Arc<Course>, index: usize, place: Place) -> App {
    let app = App::open("01-two-services.toml").reduce(Action::Lesson(LessonAction::Open {
        course: Arc::clone(course),
        index,
        place,
        resume: Vec::new(),
    }));
    if app.lesson.as_ref().is_some_and(|r| r.awaiting_answer()) {
        app.reduce(Action::Lesson(LessonAction::ShowMe))
            .reduce(Action::ToEnd)
    } else {
        app
    }
}

fn protocol(class: &str, choice: &str) -> Action {
    Action::Toggle(Toggle::Protocol {
        class: class.into(),
        choice: choice.into(),
    })
}

fn has_subordinate(app: &App) -> bool {
    app.scenario
        .services
        .iter()
        .any(|x| x.subordinate_to.is_some())
}

/// A small deterministic generator (SplitMix64), so that a failure names its case.
/// A time within the scenario, in whole tens of milliseconds.
fn ms(d: &mut Draw, s: &Scenario) -> u64 {
    d.number() % s.duration_ms.max(1) / 10 * 10
}

/// Every control a place offers, or every control of the scenario in the sandbox.
fn every_control(s: &Scenario) -> Vec<Control> {
    let mut out = vec![
        Control::Partition,
        Control::Pause,
        Control::Migration,
        Control::Seed,
    ];
    out.extend(s.clients.iter().map(|c| Control::Protocol(c.name.clone())));
    out.extend(s.resources.iter().map(|r| Control::Fencing(r.name.clone())));
    out.extend(s.services.iter().map(|x| Control::Role(x.name.clone())));
    out.extend(s.services.iter().map(|x| Control::Outage(x.name.clone())));
    out
}

/// One random change of one of `controls`, with a value the control could take.
fn random_toggle(d: &mut Draw, base: &Scenario, controls: &[Control]) -> Option<Toggle> {
    let c = d.pick(controls).clone();
    let on = d.below(2) == 0;
    Some(match c {
        Control::Partition => match d.below(3) {
            0 => Toggle::Partition(on),
            1 => Toggle::PartitionStart(ms(d, base)),
            _ => Toggle::PartitionLength(ms(d, base) + 10),
        },
        Control::Protocol(class) => {
            let options = toggles::protocol_options(base);
            Toggle::Protocol {
                class,
                choice: d.pick(&options).value.clone(),
            }
        }
        Control::Fencing(resource) => Toggle::Fencing {
            resource,
            mode: *d.pick(&[Fencing::Off, Fencing::AnySource, Fencing::OneSource]),
            checks: Some(*d.pick(&[FencingChecks::Writes, FencingChecks::AllAccesses])),
        },
        Control::Role(service) => {
            let options = toggles::role_options(base, &service);
            Toggle::Role {
                service,
                authority: d
                    .pick(&options)
                    .value
                    .strip_prefix("subordinate:")
                    .map(str::to_string),
            }
        }
        Control::Outage(service) => match d.below(3) {
            0 => Toggle::Outage { service, on },
            1 => Toggle::OutageStart {
                service,
                ms: ms(d, base),
            },
            _ => Toggle::OutageLength {
                service,
                ms: ms(d, base) + 10,
            },
        },
        Control::Pause => match d.below(4) {
            0 => Toggle::Pause(on),
            1 => Toggle::PauseClient(d.pick(&base.client_instance_names()).clone()),
            2 => Toggle::PauseStart(ms(d, base)),
            _ => Toggle::PauseLength(ms(d, base) + 10),
        },
        Control::Migration => match d.below(3) {
            0 => Toggle::Migration(on),
            1 => Toggle::MigrationMode(*d.pick(&[
                MigrationMode::Naive,
                MigrationMode::Drain,
                MigrationMode::Transfer,
            ])),
            _ => Toggle::MigrationAt(ms(d, base)),
        },
        Control::Seed => Toggle::Seed(d.number() % 20),
    })
}

/// What each control reads on screen, as the toggles that set it to that value from a freshly
/// opened place: one per part of the control, read from the scenario shown.
fn as_read(shown: &Scenario, controls: &[Control]) -> Vec<Toggle> {
    let mut out = Vec::new();
    for c in controls {
        match c {
            Control::Seed => out.push(Toggle::Seed(shown.seed)),
            Control::Protocol(class) => {
                if let Some(x) = shown.clients.iter().find(|x| &x.name == class) {
                    out.push(Toggle::Protocol {
                        class: class.clone(),
                        choice: toggles::protocol_value(&x.protocol),
                    });
                }
            }
            Control::Fencing(resource) => {
                if let Some(r) = shown.resources.iter().find(|r| &r.name == resource) {
                    out.push(Toggle::Fencing {
                        resource: resource.clone(),
                        mode: r.fencing,
                        checks: Some(r.fencing_checks),
                    });
                }
            }
            Control::Role(service) => {
                if let Some(x) = shown.services.iter().find(|x| &x.name == service) {
                    out.push(Toggle::Role {
                        service: service.clone(),
                        authority: x.subordinate_to.clone(),
                    });
                }
            }
            Control::Outage(service) => {
                if let Some(x) = shown.services.iter().find(|x| &x.name == service) {
                    out.push(Toggle::Outage {
                        service: service.clone(),
                        on: !x.outages.is_empty(),
                    });
                    if let Some(w) = x.outages.first() {
                        out.push(Toggle::OutageStart {
                            service: service.clone(),
                            ms: w.start_ms,
                        });
                        out.push(Toggle::OutageLength {
                            service: service.clone(),
                            ms: w.duration_ms,
                        });
                    }
                }
            }
            Control::Partition => {
                out.push(Toggle::Partition(!shown.partitions.is_empty()));
                if let Some(p) = shown.partitions.first() {
                    out.push(Toggle::PartitionStart(p.start_ms));
                    out.push(Toggle::PartitionLength(p.duration_ms));
                }
            }
            Control::Pause => {
                out.push(Toggle::Pause(!shown.pauses.is_empty()));
                if let Some(p) = shown.pauses.first() {
                    out.push(Toggle::PauseClient(p.client.clone()));
                    out.push(Toggle::PauseStart(p.start_ms));
                    out.push(Toggle::PauseLength(p.duration_ms));
                }
            }
            Control::Migration => {
                out.push(Toggle::Migration(!shown.migrations.is_empty()));
                if let Some(m) = shown.migrations.first() {
                    out.push(Toggle::MigrationMode(m.mode));
                    out.push(Toggle::MigrationAt(m.at_ms));
                }
            }
        }
    }
    out
}

/// Plays random control changes from `fresh`, then checks that what is shown is exactly the
/// freshly opened place with each control set once, to the value it reads. Returns how many
/// changes it played, so that a caller can tell a place with nothing to change from one whose
/// changes were never tried.
fn check_sequences(what: &str, fresh: &App, controls: &[Control], cases: u64) -> usize {
    let mut changes = 0;
    if controls.is_empty() {
        return changes;
    }
    for case in 0..cases {
        let mut d = Draw(case.wrapping_mul(7919) ^ what.len() as u64);
        let mut app = fresh.clone();
        let mut played = Vec::new();
        for _ in 0..6 {
            if let Some(t) = random_toggle(&mut d, &fresh.scenario, controls) {
                played.push(t.clone());
                app = app.reduce(Action::Toggle(t));
            }
        }
        // Set each control once, to what it reads now, on the place opened afresh.
        let mut again = fresh.clone();
        for t in as_read(&app.scenario, controls) {
            again = again.reduce(Action::Toggle(t));
        }
        assert_eq!(
            app.scenario, again.scenario,
            "{what}: after {played:?}, the run shown is not the run of the controls as they read"
        );
        // And the run shown is a fresh run of that scenario, not a stale one.
        let rerun = App::from_scenario(app.scenario.clone(), "check".into());
        assert_eq!(
            app.outcome.digest, rerun.outcome.digest,
            "{what}: after {played:?}, the trace shown is not the scenario's own run"
        );
        if let Some(run) = &app.lesson {
            assert_eq!(
                run.gate,
                again.lesson.as_ref().and_then(|l| l.gate),
                "{what}: after {played:?}, the gate reads another run"
            );
            assert_eq!(
                lockstep::lesson::edit::apply_edits(run.start(), &run.edits),
                app.scenario,
                "{what}: after {played:?}, the learner's edits do not describe the run shown"
            );
        }
        changes += played.len();
    }
    changes
}

#[test]
fn every_step_and_exercise_shows_the_run_of_its_controls_as_they_read() {
    let course = course();
    let (mut with_controls, mut changes) = (0, 0);
    for (index, l) in course.lessons.iter().enumerate() {
        for place in places(&l.lesson) {
            let fresh = open_place(&course, index, place);
            let run = fresh.lesson.as_ref().expect("a lesson place");
            let what = format!("{}/{}", l.lesson.id, run.id());
            let controls = run.controls().to_vec();
            let played = check_sequences(&what, &fresh, &controls, 6);
            if !controls.is_empty() {
                with_controls += 1;
                assert!(played > 0, "{what}: no change of its controls was tried");
            }
            changes += played;
        }
    }
    // Most places offer controls; every one of them had changes played.
    assert!(
        with_controls > 15 && changes > 500,
        "{with_controls} places, {changes} changes"
    );
}

#[test]
fn the_sandbox_shows_the_run_of_its_controls_as_they_read() {
    for b in builtin::ALL {
        let fresh = App::open(b.file);
        let controls = every_control(&fresh.scenario);
        assert!(
            check_sequences(b.file, &fresh, &controls, 6) > 0,
            "{}: no change was tried",
            b.file
        );
    }
}

/// The case the course was found with: in "The order binds only those who follow it", a token
/// chain chosen and then taken back left `west-locks` subordinate, so "No lock" passed the gate
/// there and only there.
#[test]
fn a_protocol_taken_back_takes_its_subordinate_role_with_it() {
    let course = course();
    let (index, place) = course
        .find("fixed-order", Some("ordered-meets-both"))
        .expect("the step exists");
    let fresh = open_place(&course, index, place);
    let chain = fresh.reduce(protocol("east-only", "token_chain"));
    assert!(has_subordinate(&chain));
    let no_lock = protocol("east-only", "no_lock");
    let after = chain.reduce(no_lock.clone());
    let alone = fresh.reduce(no_lock);
    assert!(after
        .scenario
        .services
        .iter()
        .all(|x| x.subordinate_to.is_none()));
    assert_eq!(after.scenario, alone.scenario);
    assert_eq!(after.outcome.digest, alone.outcome.digest);
    assert_eq!(after.lesson.unwrap().gate, alone.lesson.unwrap().gate);
}

/// Choosing a token chain for one class once hid "Lock in all…" from the menus until a reload:
/// the options were read from the scenario the chain had changed.
#[test]
fn a_token_chain_does_not_take_lock_in_all_off_the_menu() {
    let course = course();
    let (index, place) = course
        .find("fixed-order", Some("ordered-meets-both"))
        .expect("the step exists");
    let app = open_place(&course, index, place).reduce(protocol("east-only", "token_chain"));
    let offered: Vec<String> = app
        .settings
        .protocol_choices(&app.base, "east-only")
        .into_iter()
        .map(|c| c.value)
        .collect();
    assert!(
        offered.iter().any(|v| v == "all_ordered") && offered.iter().any(|v| v == "all_unordered"),
        "offered: {offered:?}"
    );
}

/// The page's small bundle hands the sandbox over to the full one when a heavier panel is
/// unfolded; the controls' values go with it, so a control changed after the hand-over still
/// undoes what its earlier value did.
#[test]
fn the_controls_values_survive_the_hand_over_between_bundles() {
    let start = App::open("03-fixed-order.toml");
    let chain = start.reduce(protocol("ordered", "token_chain"));
    assert!(has_subordinate(&chain));
    let resumed = App::resume(&chain.left_off());
    assert_eq!(resumed.scenario, chain.scenario);
    assert_eq!(resumed.settings, chain.settings);
    let no_lock = protocol("ordered", "no_lock");
    assert_eq!(
        resumed.reduce(no_lock.clone()).scenario,
        start.reduce(no_lock).scenario,
        "the chain's subordinate role goes with it after the hand-over too"
    );
    // A hand-over whose controls no longer describe the text is ignored: the text rules.
    let mut stale = chain.left_off();
    if let Some((_, lines)) = &mut stale.controls {
        lines.clear();
        lines.push("seed 99".into());
    }
    let resumed = App::resume(&stale);
    assert_eq!(resumed.scenario, chain.scenario);
    assert!(resumed.settings.is_empty());
}
