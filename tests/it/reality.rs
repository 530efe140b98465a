//! `lockstep record` against real etcd processes: the claims the simulator makes, seen on a real
//! lock service and judged by the same monitors, and no etcd left running afterwards, however
//! the recording ends. These tests need etcd installed (`scripts/install.sh` installs it); they
//! fail, rather than skip, without it.
//!
//! Each test gives the recorder a temporary folder of its own (`TMPDIR`), where every etcd it
//! starts keeps its data, so a process left behind is found by that folder in its command line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::Scratch;

/// Fails with the way to install etcd when it is missing.
fn require_etcd() {
    let found = Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "etcd is not installed: run scripts/install.sh (it installs Debian's etcd-server)"
    );
}

pub(crate) fn record_command(scratch: &Scratch, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    command
        .arg("record")
        .args(args)
        .env("TMPDIR", scratch.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

pub(crate) fn record(scratch: &Scratch, args: &[&str]) -> Output {
    record_command(scratch, args)
        .output()
        .expect("the lockstep binary runs")
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `command` with `program` on its PATH replaced by a wrapper that starts the real one once
/// and refuses every later start (exit status 3), as a service that fails once another has
/// started would. `passes` is a shell `case` line run first, with `REAL` for the real program:
/// what it `exec`s is never refused (asking for the version, say). Checks that the first start
/// happened.
pub(crate) fn with_second_start_refused(
    scratch: &Scratch,
    program: &str,
    passes: &str,
    mut command: Command,
) -> Output {
    let real = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"));
    let bin = scratch.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join(program);
    let marker = scratch.path().join("started-once");
    let real = real.display().to_string();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             {passes}\n\
             if [ -e {marker} ]; then echo 'refusing to start' >&2; exit 3; fi\n\
             touch {marker}\n\
             exec {real} \"$@\"\n",
            passes = passes.replace("REAL", &real),
            marker = marker.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = command.env("PATH", path).output().unwrap();
    assert!(marker.exists(), "the first {program} was not started");
    o
}

#[track_caller]
pub(crate) fn judged(o: &Output) -> Value {
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

/// The processes whose command line names `dir`: the etcd processes a recording started there.
pub(crate) fn processes_under(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("/proc is readable")
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = text(&cmdline).replace('\0', " ");
        if line.contains(&needle) {
            found.push((pid, line));
        }
    }
    found
}

/// Waits (a few seconds at most) until no process names `dir`, and fails with those left.
#[track_caller]
pub(crate) fn assert_none_left(dir: &Path) {
    let start = Instant::now();
    loop {
        let left = processes_under(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "service processes were left running: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn logs_consistent(v: &Value) {
    let logs = v["verdict"]["service_logs"]
        .as_array()
        .expect("service logs");
    assert!(!logs.is_empty());
    for log in logs {
        assert_eq!(
            log["consistent"], true,
            "service {}'s own log is inconsistent: {}",
            log["service"], log["problems"]
        );
        assert!(log["grants"].as_u64().unwrap() > 0, "{log}");
    }
}

#[test]
fn two_independent_etcd_services_both_grant_orders() {
    require_etcd();
    let scratch = Scratch::new("reality-two");
    let v = judged(&record(
        &scratch,
        &["lessons/scenarios/01-two-services.toml", "--json"],
    ));
    assert_none_left(scratch.path());
    let recorded = &v["recorded"];
    assert_eq!(recorded["deterministic"], false);
    let services = recorded["services"].as_array().unwrap();
    assert_eq!(services.len(), 2);
    for (i, s) in services.iter().enumerate() {
        assert!(s["product"].as_str().unwrap().starts_with("etcd 3."), "{s}");
        // Every instant of the service's log has the etcd revision it happened at, in order.
        let revisions: Vec<u64> = s["instant_revisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_u64().unwrap())
            .collect();
        let operations = v["verdict"]["service_logs"][i]["operations"]
            .as_u64()
            .unwrap();
        assert_eq!(revisions.len() as u64, operations, "{s}");
        assert!(revisions.windows(2).all(|w| w[0] <= w[1]), "{revisions:?}");
    }
    let verdict = &v["verdict"];
    assert_eq!(verdict["exclusion"], "broken", "{}", v["summary"]);
    assert_eq!(
        verdict["overlapping_service_pairs"],
        serde_json::json!([["old", "new"]]),
        "{}",
        v["summary"]
    );
    assert!(verdict["max_simultaneous_holders"].as_u64().unwrap() >= 2);
    // Each service is correct on its own: consecutive instants, increasing tokens, one holder.
    logs_consistent(&v);
    // Both orders number their grants with their own revisions, which say nothing of each
    // other: the first grant of each is the same number.
    let first_tokens: Vec<u64> = ["old", "new"]
        .iter()
        .map(|name| {
            let s = v["names"]["services"]
                .as_array()
                .unwrap()
                .iter()
                .position(|n| n == name)
                .unwrap() as u64;
            v["trace"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| {
                    e["event"] == "service" && e["service"] == s && e["op"]["op"] == "granted"
                })
                .map(|e| e["op"]["token"].as_u64().unwrap())
                .unwrap()
        })
        .collect();
    assert_eq!(first_tokens[0], first_tokens[1], "{first_tokens:?}");
    // The text output says the run was recorded, and that it is not reproducible; --out keeps
    // the whole document, trace included.
    let saved = scratch.path().join("recording.json");
    let o = record(
        &scratch,
        &[
            "lessons/scenarios/01-two-services.toml",
            "--no-trace",
            "--seed",
            "4",
            "--out",
            saved.to_str().unwrap(),
        ],
    );
    let kept: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(kept["seed"], 4);
    assert_eq!(kept["recorded"]["deterministic"], false);
    assert!(!kept["trace"].as_array().unwrap().is_empty());
    let out = text(&o.stdout);
    assert!(
        out.starts_with("Recorded from real services: 2 etcd process(es), etcd 3."),
        "{out}"
    );
    assert!(
        out.contains("Real time makes every recording different; seed 4 drove"),
        "{out}"
    );
    assert!(out.contains("\nExclusion broken: "), "{out}");
    assert_none_left(scratch.path());
}

/// The fencing scenario with a longer stall, so that the stalled holder wakes well after etcd
/// has ended its lease (etcd looks for ended leases every half second).
fn stalled_holder(scratch: &Scratch, fencing: &str) -> PathBuf {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons/scenarios/05-fencing.toml"),
    )
    .unwrap();
    let text = shipped
        .replace("duration_ms = 3000", "duration_ms = 2000")
        .replace("duration_ms = 750", "duration_ms = 1250")
        .replace("fencing = \"off\"", fencing);
    assert_ne!(text, shipped);
    let path = scratch.path().join("stalled.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_stalled_holders_write_is_rejected_by_etcd_revisions_at_the_resource() {
    require_etcd();
    let scratch = Scratch::new("reality-fencing");
    let fenced = stalled_holder(
        &scratch,
        "fencing = \"one_source\"\nfencing_source = \"locks\"\nfencing_checks = \"all_accesses\"",
    );
    let v = judged(&record(&scratch, &[fenced.to_str().unwrap(), "--json"]));
    let verdict = &v["verdict"];
    logs_consistent(&v);
    // etcd ended the stalled holder's lease and granted the lock to the other client.
    let trace = v["trace"].as_array().unwrap();
    let expired = trace
        .iter()
        .any(|e| e["event"] == "service" && e["op"]["op"] == "expired" && e["op"]["client"] == 0);
    assert!(expired, "no expiry of slow-1's lease: {}", v["summary"]);
    assert_eq!(verdict["rejected_writes"], 1, "{}", v["summary"]);
    assert_eq!(verdict["lost_updates"], 0, "{}", v["summary"]);
    assert_eq!(verdict["integrity"], "intact", "{}", v["summary"]);
    assert_eq!(verdict["accepted_writes"], 1, "{}", v["summary"]);

    // Without fencing, the same stall loses the other client's update.
    let open = stalled_holder(&scratch, "fencing = \"off\"");
    let v = judged(&record(&scratch, &[open.to_str().unwrap(), "--json"]));
    logs_consistent(&v);
    assert_eq!(v["verdict"]["lost_updates"], 1, "{}", v["summary"]);
    assert_eq!(v["verdict"]["rejected_writes"], 0, "{}", v["summary"]);
    assert_none_left(scratch.path());
}

/// Starts a recording, waits until its etcd processes run, and sends the recorder `signal`.
fn interrupt(label: &str, signal: &str) {
    require_etcd();
    let scratch = Scratch::new(&format!("reality-{label}"));
    let mut child = record_command(&scratch, &["lessons/scenarios/01-two-services.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while processes_under(scratch.path()).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the recorder started no etcd"
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
        // A handled signal also removes the etcd data (a killed recorder cannot).
        let left: Vec<_> = std::fs::read_dir(scratch.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "left in the temporary folder: {left:?}");
    }
}

#[test]
fn no_etcd_is_left_after_ctrl_c() {
    interrupt("int", "-INT");
}

#[test]
fn no_etcd_is_left_when_the_recorder_is_killed() {
    interrupt("kill", "-KILL");
}

/// An etcd that starts once and then fails: the second service cannot start after the first
/// one already runs.
#[test]
fn no_etcd_is_left_after_a_failure_once_started() {
    require_etcd();
    let scratch = Scratch::new("reality-fail");
    let o = with_second_start_refused(
        &scratch,
        "etcd",
        r#"case "$1" in --version) exec REAL "$@";; esac"#,
        record_command(&scratch, &["lessons/scenarios/01-two-services.toml"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("etcd exited at start"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    assert_none_left(scratch.path());
}

/// What a real service cannot play is refused before anything starts, at its line.
#[test]
fn features_the_recorder_cannot_play_are_named_with_their_lines() {
    let scratch = Scratch::new("reality-subset");
    let o = record(&scratch, &["lessons/scenarios/06-partition.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("06-partition.toml: line 51: a partition between regions cannot be played on real services"),
        "{err}"
    );
    assert!(
        err.contains("line 32: skip_unreachable cannot be played"),
        "{err}"
    );
    assert!(
        err.contains("line 15: lease_ms = 300 cannot be played"),
        "{err}"
    );
    let o = record(&scratch, &["lessons/scenarios/04-subordinate.toml"]);
    let err = text(&o.stderr);
    assert!(err.contains("line 15: a subordinate service"), "{err}");
    assert!(err.contains("line 27: the token_chain protocol"), "{err}");
    let o = record(&scratch, &["lessons/scenarios/09-migration-held.toml"]);
    assert!(text(&o.stderr).contains("line 40: a migration"));
    assert!(processes_under(scratch.path()).is_empty());
}

/// The usage text and docs/cli.md show the same `record` lines.
#[test]
fn the_record_usage_is_documented() {
    let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("--help")
        .output()
        .unwrap();
    let usage = text(&o.stdout);
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let lines: Vec<&str> = usage
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("lockstep record"))
        .collect();
    assert_eq!(lines.len(), 2, "{usage}");
    // Options that belong to the other form are refused, not ignored.
    for (args, expected) in [
        (vec!["record"], "record takes one FILE"),
        (vec!["record", "a.toml", "b.toml"], "record takes one FILE"),
        (
            vec!["record", "a.toml", "--runs", "3"],
            "record takes --runs only with --compare",
        ),
        (
            vec!["record", "a.toml", "--compare", "--json"],
            "record --compare takes only --on and --runs",
        ),
        (
            vec!["record", "a.toml", "--compare", "--runs", "0"],
            "--runs must be between 1 and 100",
        ),
        (
            vec!["record", "a.toml", "--depth", "3"],
            "record does not take --depth",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.starts_with(&format!("lockstep: {expected}")),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty());
    }
    for line in lines {
        assert!(page.contains(line), "docs/cli.md lacks `{line}`");
    }
}

/// docs/reality.md's conformance tables cover every shipped scenario the recorder plays, and
/// their commands name the same files: a scenario left out must be one the recorder refuses.
#[test]
fn the_conformance_table_covers_every_playable_scenario() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/reality.md")).unwrap();
    let section = &page[page.find("## Conformance").expect("a Conformance section")..];
    let rows: Vec<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| l[..l.find('`').unwrap()].to_string())
        .collect();
    assert!(!rows.is_empty(), "the conformance table has no rows");
    // The section's commands: the etcd table's and the Redis table's, each in a block of its
    // own, up to the next section.
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let command: String = section
        .split("```sh")
        .skip(1)
        .map(|block| &block[..block.find("```").unwrap()])
        .collect();
    // A file standing where the temporary folder should be: a scenario the recorder accepts
    // fails when it creates its folder, before any etcd starts.
    let scratch = Scratch::new("reality-table");
    let not_a_folder = scratch.path().join("file");
    std::fs::write(&not_a_folder, "").unwrap();
    for path in crate::shipped_paths() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let o = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(["record", path.to_str().unwrap()])
            .env("TMPDIR", &not_a_folder)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let refused = text(&o.stderr).contains("cannot be played on real services");
        let listed = rows.contains(&file);
        assert_eq!(
            listed,
            !refused,
            "{file}: listed in the table: {listed}; refused by record: {refused}\n{}",
            text(&o.stderr)
        );
        assert_eq!(
            command.contains(&format!("lessons/scenarios/{file}")),
            listed,
            "{file}: the table's command and its rows disagree"
        );
    }
}

/// A recording's trace is read back exactly as `lockstep run --json` writes events: runs of
/// every shipped scenario and of every one-control change of it (over a few seeds, which
/// between them show every kind of event the engine makes), given a `recorded` member, read
/// back to the same events, and are judged afresh to the same verdict.
#[test]
fn every_kind_of_event_reads_back_from_a_recording() {
    use lockstep::recording::Recording;
    let mut kinds = std::collections::BTreeSet::new();
    for b in lockstep::builtin::ALL {
        let shipped = lockstep::Scenario::from_json_str(b.json).unwrap();
        let mut variants = vec![shipped.clone()];
        for (_, flip) in lockstep::ui::toggles::flips(&shipped) {
            variants.push(lockstep::ui::toggles::apply(
                &shipped,
                &flip,
                &mut Default::default(),
            ));
        }
        for scenario in variants.iter().filter(|s| s.validate().is_ok()) {
            for seed in 0..3u64 {
                let mut run = lockstep::run(scenario, seed).unwrap();
                // No shipped run has a subordinate supersede a holder; one such event, added
                // at the end, stands for it (the reader checks names and times, not plots).
                if b.file == "04-subordinate.toml" && seed == 0 {
                    run.events.push(lockstep::trace::Event {
                        at: run.end,
                        what: lockstep::trace::What::Service {
                            service: 1,
                            instant: 1_000,
                            resource: 0,
                            op: lockstep::trace::ServiceOp::Superseded {
                                client: 0,
                                token: 7,
                            },
                        },
                    });
                }
                // The members `lockstep run --json` writes that a recording is read from.
                let doc = serde_json::json!({
                    "digest": format!("{:016x}", lockstep::trace::digest(&run.events)),
                    "seed": seed,
                    "trace": run.events,
                    "recorded": {
                        "deterministic": false,
                        "notes": [],
                        "scale": 1,
                        "services": scenario.services.iter().map(|s| serde_json::json!({
                            "name": s.name, "product": "simulated", "last_revision": 0, "instant_revisions": [],
                        })).collect::<Vec<_>>(),
                        "scenario": scenario,
                    },
                });
                let read = Recording::parse(&doc.to_string())
                    .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", b.file));
                assert_eq!(read.events, run.events, "{} seed {seed}", b.file);
                assert_eq!(
                    lockstep::monitor::verdict(&read),
                    lockstep::monitor::verdict(&run),
                    "{} seed {seed}: the verdict judged afresh",
                    b.file
                );
                for e in doc["trace"].as_array().unwrap() {
                    kinds.insert(e["event"].as_str().unwrap().to_string());
                    if let Some(op) = e["op"]["op"].as_str() {
                        kinds.insert(format!("service {op}"));
                    }
                }
            }
        }
    }
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "acquire_sent",
            "attempt_aborted",
            "belief_ended",
            "belief_started",
            "client_stopped",
            "gave_up",
            "lock_transferred",
            "message_lost",
            "migrated",
            "op_started",
            "outage_ended",
            "outage_started",
            "partition_ended",
            "partition_started",
            "pause_ended",
            "pause_started",
            "quorum_missed",
            "quorum_reached",
            "read",
            "restarted_empty",
            "service",
            "service cancelled",
            "service drained",
            "service expired",
            "service forgotten",
            "service granted",
            "service moved_out",
            "service queued",
            "service refused",
            "service release_ignored",
            "service released",
            "service superseded",
            "service transferred_in",
            "skipped_unreachable",
            "stale_grant_released",
            "validity_spent",
            "write",
        ],
        "every kind of event and service operation was read back"
    );
}
