//! Recordings read back (`lockstep::recording`): a file `lockstep record --json` wrote is
//! checked like any import, judged afresh by the same monitors as the command line's `judge`,
//! refused with a located reason when anything in it does not fit its scenario, never a panic,
//! and shown by the app labelled as recorded until a control simulates the scenario instead.
//!
//! The fixtures in `tests/fixtures/` were written by `lockstep record` on real etcd processes;
//! none is written by hand, so every test starts from a trace real services produced.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};

use lockstep::recording::{Recording, RECORDING_BYTES_MAX};
use lockstep::trace::{self, Event};
use lockstep::ui::toggles;
use lockstep::ui::{Action, App, Outcome, RecordingFile};

use crate::Draw;

/// The recordings committed as fixtures, each made by `lockstep record FILE --json`.
const FIXTURES: &[&str] = &["recording-01.json"];

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name)).expect("the fixture is committed")
}

fn fixture_json(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).expect("the fixture is JSON")
}

/// `lockstep judge ARGS…`, which must succeed, as text.
fn judge_cli(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("judge")
        .args(args)
        .output()
        .expect("the lockstep binary runs");
    assert!(
        out.status.success(),
        "lockstep judge {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the command line writes UTF-8")
}

fn parse(value: &Value) -> Result<Recording, String> {
    Recording::parse(&value.to_string())
}

/// The refusal of a recording, which must be one.
#[track_caller]
fn refusal(value: &Value) -> String {
    match parse(value) {
        Ok(_) => panic!("the changed recording was read"),
        Err(e) => e,
    }
}

/// The file with its digest made the trace's again, so that only the other checks can refuse
/// it.
fn redigest(value: &mut Value) {
    let events: Vec<Event> =
        lockstep::recording::events_of(&value["trace"]).expect("the changed trace still reads");
    value["digest"] = json!(format!("{:016x}", trace::digest(&events)));
}

/// The index in the trace of the first event that has the member `key`.
fn first_with(value: &Value, key: &str) -> usize {
    value["trace"]
        .as_array()
        .expect("a trace")
        .iter()
        .position(|e| e.get(key).is_some())
        .unwrap_or_else(|| panic!("the fixture has an event with {key}"))
}

#[test]
fn every_fixture_is_judged_as_the_command_line_and_the_file_judge_it() {
    for name in FIXTURES {
        let text = fixture(name);
        let file: Value = serde_json::from_str(&text).expect("JSON");
        let recording = Recording::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let source = recording.source.clone();
        assert!(
            source.products().contains("etcd"),
            "{name}: recorded from etcd: {}",
            source.products()
        );
        let seed = recording.seed;
        let outcome = Outcome::of_recording(recording);
        let ours = serde_json::to_value(&outcome.verdict).expect("a verdict serializes");
        let path = fixture_path(name);
        let path = path.to_str().expect("a UTF-8 path");
        let cli: Value =
            serde_json::from_str(&judge_cli(&[path, "--json"])).expect("judge --json is JSON");
        assert_eq!(ours, cli["verdict"], "{name}: the app and `judge --json`");
        assert_eq!(
            ours, file["verdict"],
            "{name}: the app and the file's own verdict"
        );
        assert_eq!(cli["digest"], file["digest"], "{name}: the same trace");
        // The words: the label, then the run's name line, then the headline the page shows.
        let words = judge_cli(&[path, "--no-trace"]);
        let mut lines = words.lines();
        assert_eq!(lines.next(), Some(source.label(seed).as_str()), "{name}");
        let headline = words
            .lines()
            .find(|l| l.starts_with("Exclusion "))
            .expect("a headline");
        assert_eq!(outcome.headline, headline, "{name}: the headline");
        let shown = outcome.recorded.as_deref().expect("labelled as recorded");
        assert_eq!(*shown, source, "{name}: the source shown is the file's");
    }
}

/// One way to spoil a recording, and the words its refusal must contain.
struct Spoiled {
    what: &'static str,
    change: fn(&mut Value),
    words: &'static [&'static str],
}

const SPOILED: &[Spoiled] = &[
    Spoiled {
        what: "no recorded member",
        change: |v| {
            v.as_object_mut().expect("an object").remove("recorded");
        },
        words: &["not a recording", "\"recorded\""],
    },
    Spoiled {
        what: "an invalid scenario",
        change: |v| v["recorded"]["scenario"]["duration_ms"] = json!(0),
        words: &["the recording's scenario", "duration_ms"],
    },
    Spoiled {
        what: "a service list that is not the scenario's",
        change: |v| v["recorded"]["services"][0]["name"] = json!("elsewhere"),
        words: &["names the services", "elsewhere", "its scenario has"],
    },
    Spoiled {
        what: "a service missing from the list",
        change: |v| {
            v["recorded"]["services"]
                .as_array_mut()
                .expect("services")
                .pop();
        },
        words: &["names the services", "its scenario has"],
    },
    Spoiled {
        what: "an event naming a client that does not exist",
        change: |v| {
            let i = first_with(v, "client");
            v["trace"][i]["client"] = json!(99);
        },
        words: &["trace event", "client 99 does not exist"],
    },
    Spoiled {
        what: "an event naming a service that does not exist",
        change: |v| {
            let i = first_with(v, "service");
            v["trace"][i]["service"] = json!(57);
        },
        words: &["trace event", "service 57 does not exist"],
    },
    Spoiled {
        what: "an event naming a resource that does not exist",
        change: |v| {
            let i = first_with(v, "resource");
            v["trace"][i]["resource"] = json!(12);
        },
        words: &["trace event", "resource 12 does not exist"],
    },
    Spoiled {
        what: "an event naming a partition that does not exist",
        change: |v| {
            v["trace"].as_array_mut().expect("a trace").insert(
                0,
                json!({"at": 0, "event": "partition_started", "partition": 7}),
            );
        },
        words: &["trace event 1", "partition 7 does not exist"],
    },
    Spoiled {
        what: "a row set outside the resource",
        change: |v| {
            let i = first_with(v, "rows");
            v["trace"][i]["rows"] = json!(1u64 << 40);
        },
        words: &["trace event", "row set", "is not a set of resource"],
    },
    Spoiled {
        what: "an empty row set",
        change: |v| {
            let i = first_with(v, "rows");
            v["trace"][i]["rows"] = json!(0);
        },
        words: &["trace event", "row set 0b0"],
    },
    Spoiled {
        what: "more values than rows",
        change: |v| {
            let i = first_with(v, "values");
            v["trace"][i]["values"]
                .as_array_mut()
                .expect("values")
                .extend([json!(1), json!(2)]);
        },
        words: &["trace event", "values for a row set of"],
    },
    Spoiled {
        what: "time going backwards",
        change: |v| {
            let trace = v["trace"].as_array_mut().expect("a trace");
            let i = (1..trace.len())
                .find(|&i| trace[i - 1]["at"].as_u64() > Some(0))
                .expect("an event after the start");
            let earlier = trace[i - 1]["at"].as_u64().expect("a time");
            trace[i]["at"] = json!(earlier - 1);
        },
        words: &["trace event", "comes before the event ahead of it"],
    },
    Spoiled {
        what: "time past the end",
        change: |v| {
            let last = v["trace"].as_array().expect("a trace").len() - 1;
            v["trace"][last]["at"] = json!(u64::MAX / 2);
        },
        words: &["trace event", "after the scenario's end"],
    },
    Spoiled {
        what: "a trace changed after it was recorded",
        change: |v| {
            let trace = v["trace"].as_array_mut().expect("a trace");
            let i = trace.len() / 2;
            let at = trace[i]["at"].as_u64().expect("a time");
            let next = trace
                .get(i + 1)
                .and_then(|e| e["at"].as_u64())
                .unwrap_or(at);
            // A later time that keeps the order: every other check passes, only the digest
            // can tell.
            trace[i]["at"] = json!(if next > at { at + 1 } else { at });
            if next <= at {
                trace.swap(i, i - 1);
            }
        },
        words: &["digest", "changed after it was recorded"],
    },
    Spoiled {
        what: "the wrong shape for an event",
        change: |v| v["trace"][0]["event"] = json!("teleported"),
        words: &["trace event 1", "\"teleported\" is no kind of event"],
    },
];

#[test]
fn every_way_a_recording_is_refused_says_what_and_where() {
    let file = fixture_json(FIXTURES[0]);
    assert!(parse(&file).is_ok(), "the fixture itself is read");
    for s in SPOILED {
        let mut v = file.clone();
        (s.change)(&mut v);
        let e = refusal(&v);
        for w in s.words {
            assert!(
                e.contains(w),
                "{}: {w:?} is not in the refusal: {e}",
                s.what
            );
        }
    }
}

#[test]
fn a_recording_too_large_or_not_json_or_without_a_trace_is_refused() {
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(RECORDING_BYTES_MAX));
    let e = Recording::parse(&big).expect_err("too large");
    assert!(e.contains("KiB") && e.contains("at most"), "{e}");

    let e = Recording::parse("{\"seed\": 1,\n  oops").expect_err("not JSON");
    assert!(e.contains("line 2") && e.contains("not a recording"), "{e}");

    // What `judge --no-trace` writes keeps the verdict and drops the trace: it cannot be judged
    // again.
    let path = fixture_path(FIXTURES[0]);
    let traceless = judge_cli(&[path.to_str().expect("UTF-8"), "--json", "--no-trace"]);
    let e = Recording::parse(&traceless).expect_err("no trace");
    assert!(e.contains("no trace") && e.contains("--no-trace"), "{e}");

    // The app's import says the same.
    let Err(e) = lockstep::ui::export::import(traceless.as_bytes()) else {
        panic!("the import refuses it too");
    };
    assert!(e.contains("no trace"), "{e}");
}

/// The sizes of the recording's world, for indices that stay in range.
struct Sizes {
    clients: u64,
    services: u64,
    resources: u64,
    rows: u64,
    end: u64,
}

/// Sets every index an event carries to another one in range (or just out of it, rarely), and
/// rows, tokens and instants to other plausible values.
fn shuffle_members(event: &mut Value, sizes: &Sizes, rng: &mut Draw) {
    let Some(object) = event.as_object_mut() else {
        return;
    };
    for (key, member) in object.iter_mut() {
        match key.as_str() {
            "client" | "behind" => *member = json!(rng.below(sizes.clients + 1)),
            "service" | "from" | "to" | "into" | "already_in" if member.is_u64() => {
                *member = json!(rng.below(sizes.services + 1))
            }
            "resource" => *member = json!(rng.below(sizes.resources + 1)),
            "rows" => *member = json!(1 + rng.below((1 << sizes.rows) - 1)),
            "instant" | "token" | "value" if member.is_u64() => *member = json!(rng.below(8)),
            "accepted" | "stale" => *member = json!(rng.below(2) == 1),
            "values" => {
                let n = rng.below(4);
                *member = Value::Array((0..n).map(|_| json!(rng.below(10))).collect());
            }
            _ if member.is_object() || member.is_array() => {
                if let Some(items) = member.as_array_mut() {
                    for item in items {
                        shuffle_members(item, sizes, rng);
                    }
                } else {
                    shuffle_members(member, sizes, rng);
                }
            }
            _ => {}
        }
    }
}

/// One mutation of the trace: delete, duplicate, swap, move in time keeping the order, change
/// an event's indices, or give it another event's kind (and members) at its own time.
fn mutate(trace: &mut Vec<Value>, sizes: &Sizes, rng: &mut Draw) {
    let n = trace.len() as u64;
    if n == 0 {
        return;
    }
    let i = rng.below(n) as usize;
    match rng.below(7) {
        0 => {
            trace.remove(i);
        }
        1 => {
            let e = trace[i].clone();
            trace.insert(i, e);
        }
        2 => {
            let j = rng.below(n) as usize;
            // Swapping keeps the times in place, so the order of time holds.
            let (ai, aj) = (trace[i]["at"].clone(), trace[j]["at"].clone());
            trace.swap(i, j);
            trace[i]["at"] = ai;
            trace[j]["at"] = aj;
        }
        3 => {
            let low = if i == 0 {
                0
            } else {
                trace[i - 1]["at"].as_u64().unwrap_or(0)
            };
            let high = trace
                .get(i + 1)
                .and_then(|e| e["at"].as_u64())
                .unwrap_or(sizes.end);
            trace[i]["at"] = json!(low + rng.below(high.saturating_sub(low) + 1));
        }
        4 | 5 => shuffle_members(&mut trace[i], sizes, rng),
        _ => {
            let j = rng.below(n) as usize;
            let at = trace[i]["at"].clone();
            trace[i] = trace[j].clone();
            trace[i]["at"] = at;
        }
    }
}

#[test]
fn thousands_of_mutated_recordings_are_refused_or_judged_never_a_panic() {
    const CASES: u64 = 2000;
    let file = fixture_json(FIXTURES[0]);
    let reference = parse(&file).expect("the fixture is read");
    let w = &reference.world;
    let sizes = Sizes {
        clients: w.clients.len() as u64,
        services: w.services.len() as u64,
        resources: w.resources.len() as u64,
        rows: w
            .resources
            .iter()
            .map(|r| r.rows.len() as u64)
            .min()
            .unwrap_or(1)
            .clamp(1, 16),
        end: w.duration,
    };
    let base: Vec<Value> = file["trace"].as_array().expect("a trace").clone();
    let (mut judged, mut refused) = (0u32, 0u32);
    for case in 0..CASES {
        let mut rng = Draw(case);
        let mut trace = base.clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut trace, &sizes, &mut rng);
        }
        let mut v = file.clone();
        v["trace"] = Value::Array(trace);
        // A change of kind may leave members that kind does not have, which the file's shape
        // refuses; the digest is only made the trace's when the trace still reads.
        if lockstep::recording::events_of(&v["trace"]).is_ok() {
            redigest(&mut v);
        }
        let text = v.to_string();
        let outcome = std::panic::catch_unwind(|| {
            Recording::parse(&text).map(|r| {
                let o = Outcome::of_recording(r);
                o.verdict.violation_count
            })
        });
        match outcome {
            Ok(Ok(_)) => judged += 1,
            Ok(Err(e)) => {
                assert!(!e.is_empty(), "case {case}: a refusal says why");
                refused += 1;
            }
            Err(_) => panic!("case {case} panicked; its trace: {}", v["trace"]),
        }
    }
    // Most mutations keep a trace the checks accept, so the monitors see odd traces, not only
    // refusals.
    assert!(
        judged > CASES as u32 / 4,
        "only {judged} of {CASES} mutated recordings were judged ({refused} refused)"
    );
}

#[test]
fn the_app_shows_a_recording_labelled_until_a_control_simulates_it() {
    let text = fixture(FIXTURES[0]);
    let recording = Recording::parse(&text).expect("the fixture is read");
    let expected = Outcome::of_recording(recording.clone());
    let app = App::open("05-fencing.toml");
    let app = app.reduce(Action::OpenRecording(RecordingFile(Arc::new(
        recording.clone(),
    ))));
    assert_eq!(app.outcome.verdict, expected.verdict);
    assert_eq!(app.outcome.headline, expected.headline);
    assert_eq!(
        app.outcome.recorded.as_deref(),
        Some(&recording.source),
        "the outcome says what it was recorded from"
    );
    assert_eq!(app.scenario, recording.source.scenario);
    assert_eq!(app.base, recording.source.scenario);
    assert_eq!(
        app.outcome.events, recording.events,
        "the trace is the file's"
    );
    assert_eq!(
        app.link().digest,
        None,
        "a link carries the scenario, not the recording, so no recorded digest"
    );

    // No flipped twin for a recording: the comparison is refused with the reason.
    let flips = toggles::flips(&app.scenario);
    let (_, flip) = flips.first().expect("the scenario has controls").clone();
    let refused = app.reduce(Action::Compare(Some(flip.clone())));
    assert!(refused.compare.is_none(), "no comparison while recorded");
    assert!(
        refused
            .notice
            .as_deref()
            .is_some_and(|n| n.contains("cannot be compared")),
        "the notice says why: {:?}",
        refused.notice
    );
    assert!(refused.outcome.recorded.is_some(), "still the recording");

    // Any control simulates the scenario as the controls read.
    let toggled = refused.reduce(Action::Toggle(flip.clone()));
    assert!(toggled.outcome.recorded.is_none(), "a simulation now");
    assert_eq!(toggled.scenario, toggled.settings.apply(&toggled.base));
    assert_eq!(toggled.base, recording.source.scenario, "the base stays");
    let simulated = Outcome::compute(&toggled.scenario).expect("the toggled scenario runs");
    assert_eq!(toggled.outcome.verdict, simulated.verdict);
    assert_eq!(toggled.outcome.headline, simulated.headline);
    assert_eq!(toggled.link().digest, Some(simulated.digest));
    // And once simulated, the comparison is offered again.
    let compared = toggled.reduce(Action::Compare(Some(flip)));
    assert!(compared.compare.is_some(), "a simulated run compares");
}
