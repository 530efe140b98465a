//! `lockstep record --on zookeeper` against real ZooKeeper servers: two independent servers both
//! grant one lock name, one server's creation zxids fence a stale writer out, and no server is
//! left running afterwards, however the recording ends. These tests need ZooKeeper installed
//! (`scripts/install.sh` installs Debian's zookeeper); they fail, rather than skip, without it.
//!
//! Each test gives the recorder a temporary folder of its own (`TMPDIR`), where every server it
//! starts keeps its configuration and data, so a process left behind is found by that folder
//! in its command line.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::reality::{assert_none_left, processes_under, text};
use crate::Scratch;

/// Fails with the way to install ZooKeeper when it is missing.
fn require_zookeeper() {
    let found = Command::new("java")
        .args([
            "-cp",
            "/usr/share/java/zookeeper.jar",
            "org.apache.zookeeper.Version",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "ZooKeeper is not installed: run scripts/install.sh (it installs Debian's zookeeper)"
    );
}

fn record_command(scratch: &Scratch, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    command
        .arg("record")
        .args(args)
        .args(["--on", "zookeeper"])
        .env("TMPDIR", scratch.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

#[track_caller]
fn judged(o: &Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "record failed\n--- stdout ---\n{}\n--- stderr ---\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", text(&o.stdout)))
}

fn record(scratch: &Scratch, args: &[&str]) -> Value {
    judged(
        &record_command(scratch, args)
            .output()
            .expect("the lockstep binary runs"),
    )
}

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
        assert!(log["grants"].as_u64().unwrap() > 0, "{log}");
    }
}

/// The folder's entries, which a recording that ended by itself or by a handled signal leaves
/// empty.
#[track_caller]
fn assert_folder_empty(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "bin" && n != "started-once")
        .collect();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
}

#[test]
fn two_independent_zookeeper_servers_both_grant_orders() {
    require_zookeeper();
    let scratch = Scratch::new("zookeeper-two");
    let v = record(
        &scratch,
        &["lessons/scenarios/01-two-services.toml", "--json"],
    );
    assert_none_left(scratch.path());
    assert_folder_empty(scratch.path());
    let services = v["recorded"]["services"].as_array().unwrap();
    assert_eq!(services.len(), 2);
    for (i, s) in services.iter().enumerate() {
        assert!(
            s["product"].as_str().unwrap().starts_with("ZooKeeper 3."),
            "{s}"
        );
        // Every instant of the service's log has the server's zxid it happened at, in order.
        let zxids: Vec<u64> = s["instant_revisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        let operations = v["verdict"]["service_logs"][i]["operations"]
            .as_u64()
            .unwrap();
        assert_eq!(zxids.len() as u64, operations, "{s}");
        assert!(zxids.windows(2).all(|w| w[0] <= w[1]), "{zxids:?}");
    }
    let verdict = &v["verdict"];
    assert_eq!(verdict["exclusion"], "broken", "{}", v["summary"]);
    assert_eq!(
        verdict["overlapping_service_pairs"],
        serde_json::json!([["old", "new"]]),
        "{}",
        v["summary"]
    );
    logs_consistent(&v);
    let notes = v["recorded"]["notes"].to_string();
    assert!(notes.contains("standalone ZooKeeper server"), "{notes}");
}

/// The fencing scenario with the resource checking every access against the highest creation
/// zxid it has seen (the control lesson 5 turns on).
#[test]
fn a_stale_writer_is_refused_by_the_lock_nodes_czxid() {
    require_zookeeper();
    let scratch = Scratch::new("zookeeper-fencing");
    let v = record(
        &scratch,
        &[
            "lessons/scenarios/05-fencing.toml",
            "--edit",
            "fencing accounts one_source all_accesses",
            "--json",
        ],
    );
    logs_consistent(&v);
    let verdict = &v["verdict"];
    let trace = v["trace"].as_array().unwrap();
    // The server ended the paused holder's session, and its node with it; the other client's
    // node then holds, with a higher creation zxid.
    let service_op = |op: &str, client: u64| {
        trace
            .iter()
            .find(|e| e["event"] == "service" && e["op"]["op"] == op && e["op"]["client"] == client)
            .unwrap_or_else(|| panic!("no {op} for client {client}: {}", v["summary"]))
    };
    let expired = service_op("expired", 0);
    let first = service_op("granted", 0)["op"]["token"].as_u64().unwrap();
    let second = service_op("granted", 1)["op"]["token"].as_u64().unwrap();
    assert!(second > first, "{first} then {second}");
    assert_eq!(expired["op"]["token"], first);
    assert_eq!(verdict["rejected_writes"], 1, "{}", v["summary"]);
    assert_eq!(verdict["lost_updates"], 0, "{}", v["summary"]);
    assert_eq!(verdict["integrity"], "intact", "{}", v["summary"]);
    assert_eq!(verdict["accepted_writes"], 1, "{}", v["summary"]);
    assert_eq!(verdict["exclusion"], "broken", "{}", v["summary"]);

    // Without fencing, the same pause loses the other client's update.
    let v = record(&scratch, &["lessons/scenarios/05-fencing.toml", "--json"]);
    logs_consistent(&v);
    assert_eq!(v["verdict"]["lost_updates"], 1, "{}", v["summary"]);
    assert_eq!(v["verdict"]["rejected_writes"], 0, "{}", v["summary"]);
    assert_none_left(scratch.path());
    assert_folder_empty(scratch.path());
}

/// Starts a recording, waits until its servers run, and sends the recorder `signal`.
fn interrupt(label: &str, signal: &str) {
    require_zookeeper();
    let scratch = Scratch::new(&format!("zookeeper-{label}"));
    let mut child = record_command(&scratch, &["lessons/scenarios/01-two-services.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while processes_under(scratch.path()).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the recorder started no ZooKeeper"
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
        // A handled signal also removes the servers' folders (a killed recorder cannot).
        assert_folder_empty(scratch.path());
    }
}

#[test]
fn no_zookeeper_is_left_after_ctrl_c() {
    interrupt("int", "-INT");
}

#[test]
fn no_zookeeper_is_left_when_the_recorder_is_killed() {
    interrupt("kill", "-KILL");
}

/// A server that starts once and then fails: the second service cannot start after the first
/// one already runs.
#[test]
fn no_zookeeper_is_left_after_a_failure_once_started() {
    require_zookeeper();
    let scratch = Scratch::new("zookeeper-fail");
    // Only the servers are refused; anything else asked of java still runs.
    let o = crate::reality::with_second_start_refused(
        &scratch,
        "java",
        r#"case "$*" in *ZooKeeperServerMain*) ;; *) exec REAL "$@";; esac"#,
        record_command(&scratch, &["lessons/scenarios/01-two-services.toml"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("ZooKeeper exited at start"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    assert_none_left(scratch.path());
    assert_folder_empty(scratch.path());
}

/// What ZooKeeper's recipe cannot play is refused before anything starts, at its line.
#[test]
fn what_zookeeper_cannot_play_is_named_with_its_line() {
    let scratch = Scratch::new("zookeeper-subset");
    let o = record_command(&scratch, &["lessons/scenarios/04-subordinate.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 15: a subordinate service cannot be played on real services (ZooKeeper's lock recipe takes no authority token)"),
        "{err}"
    );
    assert!(processes_under(scratch.path()).is_empty());
}

/// The ZooKeeper recordings shipped in `lessons/recordings/`, each made by the command
/// docs/reality.md gives: (file, the scenario it played, the edit applied to it).
const SHIPPED: &[(&str, &str, Option<&str>)] = &[
    (
        "01-two-services.zookeeper.json",
        "01-two-services.toml",
        None,
    ),
    (
        "05-fencing.zookeeper.json",
        "05-fencing.toml",
        Some("fencing accounts one_source all_accesses"),
    ),
];

/// Each shipped ZooKeeper recording reads back, says it was made on ZooKeeper and what was not
/// real, plays the shipped scenario (with its edit), and shows what the course says it shows,
/// judged again by the monitors, by the library and by `lockstep judge` alike.
#[test]
fn the_shipped_zookeeper_recordings_are_judged_again_to_their_verdicts() {
    use lockstep::recording::Recording;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/reality.md")).unwrap();
    for (file, scenario, edit) in SHIPPED {
        let path = root.join("lessons/recordings").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let recording = Recording::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for s in &recording.source.services {
            assert!(
                s.product.starts_with("ZooKeeper 3."),
                "{file}: {}",
                s.product
            );
        }
        let notes = recording.source.notes.join("\n");
        for said in [
            "latencies are waited out",
            "the resource is a table inside the recorder",
            "one standalone ZooKeeper server",
        ] {
            assert!(
                notes.contains(said),
                "{file}: the notes do not say {said:?}"
            );
        }
        let mut shipped = lockstep::Scenario::from_toml_str(
            &std::fs::read_to_string(root.join("lessons/scenarios").join(scenario)).unwrap(),
        )
        .unwrap();
        if let Some(edit) = edit {
            shipped = lockstep::lesson::apply_edits(&shipped, &[edit.parse().unwrap()]);
            assert!(
                page.contains(&format!("--edit \"{edit}\" --on zookeeper")),
                "docs/reality.md lacks the edit of {file}"
            );
        }
        assert_eq!(
            recording.source.scenario, shipped,
            "{file} plays {scenario}"
        );
        assert!(
            page.contains(&format!("--out lessons/recordings/{file}")),
            "docs/reality.md lacks the command that made {file}"
        );
        let verdict = lockstep::monitor::verdict(&recording);
        for log in &verdict.service_logs {
            assert!(log.consistent, "{file}: {:?}", log.problems);
        }
        if edit.is_some() {
            assert_eq!(verdict.rejected_writes, 1, "{file}");
            assert_eq!(verdict.lost_updates, 0, "{file}");
            assert_eq!(
                verdict.integrity,
                lockstep::monitor::Integrity::Intact,
                "{file}"
            );
        } else {
            assert_eq!(
                verdict.exclusion,
                lockstep::monitor::Exclusion::Broken,
                "{file}"
            );
            assert!(verdict.lost_updates > 0, "{file}");
        }
        let judged = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(["judge", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        let cli: Value = judged_json(&judged);
        assert_eq!(
            cli["verdict"],
            serde_json::to_value(&verdict).unwrap(),
            "{file}: `judge` and the library"
        );
    }
}

#[track_caller]
fn judged_json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}
