//! `lockstep record` on real Redis servers (Redlock: a majority of five independent
//! `redis-server` processes): what the model claims of majority locks, seen on real servers and
//! judged by the same monitors, and no server left running afterwards, however the recording
//! ends. These tests need Redis installed (`scripts/install.sh` installs it); they fail, rather
//! than skip, without it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::reality::{assert_none_left, judged, processes_under, record, record_command, text};
use crate::Scratch;

/// Fails with the way to install Redis when it is missing.
fn require_redis() {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "redis-server is not installed: run scripts/install.sh (it installs Debian's redis-server)"
    );
}

/// Every service's own log passes the monitors' checks (consecutive instants, increasing
/// tokens since the last restart, one holder at a time).
#[track_caller]
fn logs_consistent(v: &Value) {
    for log in v["verdict"]["service_logs"]
        .as_array()
        .expect("service logs")
    {
        assert_eq!(
            log["consistent"], true,
            "service {}'s own log is inconsistent: {}",
            log["service"], log["problems"]
        );
    }
}

fn events<'a>(v: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    v["trace"]
        .as_array()
        .expect("a trace")
        .iter()
        .filter(move |e| e["event"] == kind)
}

fn service_index(v: &Value, name: &str) -> u64 {
    v["names"]["services"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n == name)
        .unwrap() as u64
}

/// Without faults, two clients locking by a majority of five real Redis servers never both
/// hold the lock, and both get work done.
#[test]
fn a_majority_of_five_redis_servers_keeps_exclusion_without_faults() {
    require_redis();
    let scratch = Scratch::new("redis-majority");
    let v = judged(&record(
        &scratch,
        &["lessons/scenarios/12-majority.toml", "--json"],
    ));
    assert_none_left(scratch.path());
    let verdict = &v["verdict"];
    assert_eq!(verdict["exclusion"], "holds", "{}", v["summary"]);
    assert_eq!(verdict["lost_updates"], 0, "{}", v["summary"]);
    assert!(
        verdict["accepted_writes"].as_u64().unwrap() > 0,
        "{}",
        v["summary"]
    );
    logs_consistent(&v);
    // Both clients got their quorum, and both sometimes missed it (split votes).
    for client in [0, 1] {
        assert!(
            events(&v, "quorum_reached").any(|e| e["client"] == client),
            "client {client} never reached its quorum: {}",
            v["summary"]
        );
    }
    assert!(
        events(&v, "quorum_missed").next().is_some(),
        "no split vote"
    );
    let recorded = &v["recorded"];
    assert_eq!(recorded["deterministic"], false);
    let services = recorded["services"].as_array().unwrap();
    assert_eq!(services.len(), 5);
    for s in services {
        assert!(s["product"].as_str().unwrap().starts_with("Redis "), "{s}");
    }
    let notes = recorded["notes"].to_string();
    assert!(notes.contains("Redis issues no token"), "{notes}");
    assert!(notes.contains("Redis logs no expiry"), "{notes}");
}

/// A holder that pauses past its lease: the servers let the keys expire, the other client gets
/// a majority of its own, and the paused one wakes up and writes inside the other's hold.
#[test]
fn a_majority_holder_paused_past_its_lease_double_writes_on_real_redis() {
    require_redis();
    let scratch = Scratch::new("redis-pause");
    let v = judged(&record(
        &scratch,
        &["lessons/scenarios/13-majority-pause.toml", "--json"],
    ));
    assert_none_left(scratch.path());
    let verdict = &v["verdict"];
    assert_eq!(verdict["exclusion"], "broken", "{}", v["summary"]);
    assert!(
        verdict["interleaved_writes"].as_u64().unwrap_or(0) > 0
            || verdict["lost_updates"].as_u64().unwrap() > 0,
        "the paused holder's write did not land inside the other's hold: {}",
        v["summary"]
    );
    logs_consistent(&v);
    // The paused client's grants ended by expiry on the servers, not by its release.
    let expired = events(&v, "service")
        .filter(|e| e["op"]["op"] == "expired" && e["op"]["client"] == 0)
        .count();
    assert!(
        expired >= 3,
        "east-1's grants did not expire: {}",
        v["summary"]
    );
}

/// The 15th scenario's service r3, with a restart delay of at least the lease: it stays down
/// until every grant it forgot has expired.
fn delayed_restart(scratch: &Scratch) -> std::path::PathBuf {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons/scenarios/15-majority-restart.toml"),
    )
    .unwrap();
    let text = shipped.replace(
        "forgets_on_restart = true",
        "forgets_on_restart = true\nrestart_delay_ms = 1000",
    );
    assert_ne!(text, shipped);
    let path = scratch.path().join("delayed.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// r3 is killed while it holds east-1's grant in a bare majority, and comes back empty: west-1
/// gets r3, r4 and r5, a second majority with no pause. Kept down for a lease, it cannot.
#[test]
fn a_forgetful_restart_under_a_bare_quorum_double_grants_on_real_redis() {
    require_redis();
    let scratch = Scratch::new("redis-restart");
    // The race is set up by real timing: east-1 reaches r1, r2 and r3 first because they are
    // near it. On a machine loaded enough to start east-1's thread 20 ms late, west-1 takes r3
    // first and there is no bare quorum through r3 to break; such a run is recorded again, at
    // most three times in all.
    let mut tries = Vec::new();
    let v = loop {
        let v = judged(&record(
            &scratch,
            &["lessons/scenarios/15-majority-restart.toml", "--json"],
        ));
        assert_none_left(scratch.path());
        let r3 = service_index(&v, "r3");
        let set_up = events(&v, "belief_started").any(|e| {
            e["client"] == 0
                && e["grants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|g| g["service"] == r3)
        });
        if set_up {
            break v;
        }
        tries.push(v["summary"].to_string());
        assert!(
            tries.len() < 3,
            "east-1 never held a bare quorum through r3 in three recordings: {tries:?}"
        );
    };
    assert_eq!(v["verdict"]["exclusion"], "broken", "{}", v["summary"]);
    logs_consistent(&v);
    let r3 = service_index(&v, "r3");
    assert!(
        events(&v, "restarted_empty").any(|e| e["service"] == r3),
        "r3 did not restart empty"
    );
    assert!(
        events(&v, "service")
            .any(|e| e["service"] == r3 && e["op"]["op"] == "forgotten" && e["op"]["client"] == 0),
        "r3 did not forget east-1's grant"
    );
    // Both clients' beliefs count a grant of r3: the service the two majorities share.
    for client in [0, 1] {
        assert!(
            events(&v, "belief_started").any(|e| e["client"] == client
                && e["grants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|g| g["service"] == r3)),
            "client {client} held no grant of r3: {}",
            v["summary"]
        );
    }

    let delayed = delayed_restart(&scratch);
    let v = judged(&record(&scratch, &[delayed.to_str().unwrap(), "--json"]));
    assert_none_left(scratch.path());
    assert_eq!(v["verdict"]["exclusion"], "holds", "{}", v["summary"]);
    logs_consistent(&v);
}

/// The text output names the product and what was not real; `judge` reads the file back.
#[test]
fn a_redis_recording_is_labelled_and_judged_again_from_its_file() {
    require_redis();
    let scratch = Scratch::new("redis-file");
    let saved = scratch.path().join("recording.json");
    let o = record(
        &scratch,
        &[
            "lessons/scenarios/13-majority-pause.toml",
            "--on",
            "redis",
            "--no-trace",
            "--out",
            saved.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("Recorded from real services: 5 redis process(es), Redis "),
        "{out}"
    );
    assert!(out.contains("\nExclusion broken: "), "{out}");
    let judge = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["judge", saved.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(judge.status.code(), Some(0), "{}", text(&judge.stderr));
    let judged = text(&judge.stdout);
    assert!(
        judged.starts_with("Recorded from real services: 5 Redis "),
        "{judged}"
    );
    assert!(judged.contains("\nExclusion broken: "), "{judged}");
    assert_none_left(scratch.path());
}

/// Starts a Redis recording, waits until its five servers run, and sends the recorder
/// `signal`.
fn interrupt(label: &str, signal: &str) {
    require_redis();
    let scratch = Scratch::new(&format!("redis-{label}"));
    let mut child = record_command(&scratch, &["lessons/scenarios/12-majority.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while processes_under(scratch.path()).len() < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the recorder started no redis-server"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status}");
    assert_none_left(scratch.path());
    if signal != "-KILL" {
        // A handled signal also removes the servers' folder (a killed recorder cannot).
        let left: Vec<_> = std::fs::read_dir(scratch.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "left in the temporary folder: {left:?}");
    }
}

#[test]
fn no_redis_is_left_after_ctrl_c() {
    interrupt("int", "-INT");
}

#[test]
fn no_redis_is_left_when_the_recorder_is_killed() {
    interrupt("kill", "-KILL");
}

/// A redis-server that starts once and then fails: the second service cannot start after the
/// first one already runs. Nothing is left, and the folder is gone.
#[test]
fn no_redis_is_left_after_a_failure_once_started() {
    require_redis();
    let scratch = Scratch::new("redis-fail");
    let o = crate::reality::with_second_start_refused(
        &scratch,
        "redis-server",
        r#"case "$1" in --version) exec REAL "$@";; esac"#,
        record_command(&scratch, &["lessons/scenarios/12-majority.toml"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("redis-server exited at start"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    assert_none_left(scratch.path());
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("lockstep-"))
        .collect();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
}

/// What Redis cannot play is refused before anything starts, at its line; the product is
/// chosen by the scenario unless `--on` says otherwise.
#[test]
fn what_redis_cannot_play_is_refused_at_its_line() {
    let scratch = Scratch::new("redis-subset");
    let o = record(
        &scratch,
        &["lessons/scenarios/01-two-services.toml", "--on", "redis"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 25: the single protocol cannot be played on real services (Redis' SET NX is a try"),
        "{err}"
    );
    let o = record(
        &scratch,
        &[
            "lessons/scenarios/05-fencing.toml",
            "--on",
            "redis",
            "--edit",
            "fencing accounts one_source all_accesses",
        ],
    );
    let err = text(&o.stderr);
    assert!(err.contains("Redis issues no fencing token"), "{err}");
    let o = record(
        &scratch,
        &["lessons/scenarios/12-majority.toml", "--on", "etcd"],
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("line 54: the majority protocol cannot be played on real services"),
        "{err}"
    );
    let o = record(
        &scratch,
        &["lessons/scenarios/12-majority.toml", "--on", "nothing"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(
            "--on: \"nothing\" is not a product the recorder starts (etcd, redis, zookeeper)"
        ),
        "{}",
        text(&o.stderr)
    );
    assert!(processes_under(scratch.path()).is_empty());
}

/// The Redis recordings shipped in `lessons/recordings/`, each made by
/// `lockstep record lessons/scenarios/NAME.toml --out lessons/recordings/NAME.redis.json`
/// (docs/reality.md), and the verdict each shows, judged afresh from the file.
const SHIPPED: &[(&str, &str, &str)] = &[
    ("12-majority.redis.json", "12-majority.toml", "holds"),
    (
        "13-majority-pause.redis.json",
        "13-majority-pause.toml",
        "broken",
    ),
    (
        "15-majority-restart.redis.json",
        "15-majority-restart.toml",
        "broken",
    ),
];

/// Each shipped Redis recording reads back, says it was made on Redis, plays the shipped
/// scenario, and shows what the docs say it shows: judged again by the monitors, not read from
/// the file.
#[test]
fn the_shipped_redis_recordings_are_judged_again_to_their_verdicts() {
    use lockstep::recording::Recording;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/reality.md")).unwrap();
    for (file, scenario, exclusion) in SHIPPED {
        let text = std::fs::read_to_string(root.join("lessons/recordings").join(file)).unwrap();
        let recording = Recording::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for s in &recording.source.services {
            assert!(s.product.starts_with("Redis "), "{file}: {}", s.product);
        }
        let notes = recording.source.notes.join("\n");
        for said in [
            "latencies are waited out",
            "the resource is a table inside the recorder",
            "Redis issues no token",
        ] {
            assert!(
                notes.contains(said),
                "{file}: the notes do not say {said:?}"
            );
        }
        let shipped = lockstep::Scenario::from_toml_str(
            &std::fs::read_to_string(root.join("lessons/scenarios").join(scenario)).unwrap(),
        )
        .unwrap();
        assert_eq!(
            recording.source.scenario, shipped,
            "{file} plays {scenario}"
        );
        let verdict = lockstep::monitor::verdict(&recording);
        let expected = match *exclusion {
            "holds" => lockstep::monitor::Exclusion::Holds,
            _ => lockstep::monitor::Exclusion::Broken,
        };
        assert_eq!(verdict.exclusion, expected, "{file}");
        assert!(
            verdict.service_logs.iter().all(|l| l.consistent),
            "{file}: a service's own log is inconsistent"
        );
        assert!(
            page.contains(&format!("--out lessons/recordings/{file}")),
            "docs/reality.md does not give the command that made {file}"
        );
    }
}
