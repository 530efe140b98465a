//! The `lockstep` command as users run it: the real binary, its exit codes, its messages and its
//! JSON, checked against the library for the same scenario and seed. Every run here is a short
//! shipped scenario, so the whole module takes well under a second of CPU.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use lockstep::inventory;
use lockstep::monitor::{self, Exclusion};
use lockstep::sweep;
use lockstep::trace;
use lockstep::Scenario;
use serde_json::Value;

/// Runs the binary with `args` and waits for it.
fn lockstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("the lockstep binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("the process exited, not killed")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// Checks the exit code, showing both streams if it is wrong.
#[track_caller]
fn expect_code(o: &Output, expected: i32, what: &str) {
    assert_eq!(
        code(o),
        expected,
        "{what}: exit code\n--- stdout ---\n{}\n--- stderr ---\n{}",
        stdout(o),
        stderr(o)
    );
}

#[track_caller]
fn json(o: &Output) -> Value {
    serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", stdout(o)))
}

use crate::shipped_paths as shipped;

/// A shipped scenario's path by the start of its file name, e.g. `"05"`.
fn path(prefix: &str) -> String {
    let found: Vec<PathBuf> = shipped()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    assert_eq!(found.len(), 1, "one scenario starts with {prefix}");
    found[0].to_str().expect("a UTF-8 path").to_string()
}

fn load(path: &str) -> Scenario {
    let text = std::fs::read_to_string(path).expect("readable scenario");
    Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A scratch file in the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        Scratch::bytes(name, text.as_bytes())
    }

    fn bytes(name: &str, bytes: &[u8]) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("lockstep-cli-test-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("the temporary directory is writable");
        Scratch(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 path")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Checks one `run --json` document against the library's run of the same scenario and seed.
#[track_caller]
fn assert_matches_library(label: &str, doc: &Value, scenario: &Scenario, seed: u64) {
    let run = lockstep::run(scenario, seed).unwrap_or_else(|e| panic!("{label}: {e}"));
    let verdict = monitor::verdict(&run);
    let expected = serde_json::to_value(&verdict).expect("a verdict serializes");
    assert_eq!(
        doc["verdict"], expected,
        "{label}: the command's verdict differs from the library's"
    );
    assert_eq!(doc["scenario"], scenario.name.as_str(), "{label}");
    assert_eq!(doc["seed"], seed, "{label}");
    assert_eq!(doc["summary"], verdict.summary().as_str(), "{label}");
    assert_eq!(
        doc["digest"],
        format!("{:016x}", trace::digest(&run.events)).as_str(),
        "{label}"
    );
    let clients: Vec<&str> = run.world.clients.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        doc["names"]["clients"],
        serde_json::json!(clients),
        "{label}"
    );
    let services: Vec<&str> = run.world.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        doc["names"]["services"],
        serde_json::json!(services),
        "{label}"
    );
    assert_eq!(
        doc["names"]["regions"],
        serde_json::json!(scenario.regions),
        "{label}"
    );
}

#[test]
fn run_json_matches_the_library_for_every_shipped_scenario() {
    for file in shipped() {
        let file = file.to_str().expect("a UTF-8 path").to_string();
        let out = lockstep(&["run", &file, "--json", "--no-trace"]);
        expect_code(&out, 0, &file);
        let doc = json(&out);
        let v = &doc["verdict"];
        assert!(
            v["exclusion"] == "holds" || v["exclusion"] == "broken",
            "{file}: exclusion is {}",
            v["exclusion"]
        );
        assert!(
            v["integrity"] == "intact" || v["integrity"] == "corrupted",
            "{file}"
        );
        assert!(v["deadlock"].is_boolean(), "{file}: deadlock is a bool");
        for field in [
            "lost_updates",
            "interleaved_writes",
            "rejected_writes",
            "rejected_reads",
            "accepted_writes",
            "incomparable_pairs",
            "max_simultaneous_holders",
            "events",
            "end_us",
            "seed",
        ] {
            assert!(v[field].is_u64(), "{file}: verdict.{field} is a number");
        }
        assert!(v["truncated"].is_boolean(), "{file}");
        assert!(
            doc["trace"].is_null(),
            "{file}: --no-trace leaves the trace out"
        );
        let scenario = load(&file);
        assert_matches_library(&file, &doc, &scenario, scenario.seed);
    }
}

#[test]
fn the_seed_option_replaces_the_scenarios_seed() {
    let file = path("01");
    let scenario = load(&file);
    assert_ne!(scenario.seed, 7);
    let default = json(&lockstep(&["run", &file, "--json", "--no-trace"]));
    let out = lockstep(&["run", &file, "--seed", "7", "--json", "--no-trace"]);
    expect_code(&out, 0, "run --seed 7");
    let seeded = json(&out);
    assert_eq!(seeded["seed"], 7);
    assert_eq!(seeded["verdict"]["seed"], 7);
    assert_ne!(
        seeded["digest"], default["digest"],
        "another seed gives another trace"
    );
    assert_matches_library("--seed 7", &seeded, &scenario, 7);
    // The same seed twice gives the same run.
    let again = json(&lockstep(&[
        "run",
        &file,
        "--json",
        "--no-trace",
        "--seed",
        "7",
    ]));
    assert_eq!(again, seeded);
}

#[test]
fn run_json_includes_the_trace_unless_told_not_to() {
    let file = path("05");
    let scenario = load(&file);
    let out = lockstep(&["run", &file, "--json"]);
    expect_code(&out, 0, "run --json");
    let doc = json(&out);
    let run = lockstep::run(&scenario, scenario.seed).expect("valid");
    assert_eq!(
        doc["trace"],
        serde_json::to_value(&run.events).expect("events serialize")
    );
    let events = doc["trace"].as_array().expect("the trace is an array");
    assert_eq!(Some(events.len() as u64), doc["verdict"]["events"].as_u64());
    let mut last = 0;
    for e in events {
        let at = e["at"]
            .as_u64()
            .expect("every event has a time in microseconds");
        assert!(at >= last, "events are in time order");
        last = at;
        assert!(e["event"].is_string(), "every event has a kind: {e}");
    }
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    for kind in [
        "op_started",
        "belief_started",
        "read",
        "write",
        "service",
        "pause_started",
    ] {
        assert!(
            kinds.contains(&kind),
            "the fencing scenario has a {kind} event"
        );
    }
}

#[test]
fn text_output_leads_with_the_verdict() {
    for file in shipped() {
        let file = file.to_str().expect("a UTF-8 path").to_string();
        let scenario = load(&file);
        let out = lockstep(&["run", &file, "--no-trace"]);
        expect_code(&out, 0, &file);
        let text = stdout(&out);
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(format!("{} (seed {})", scenario.name, scenario.seed).as_str())
        );
        let verdict_line = lines.next().unwrap_or_default();
        let run = lockstep::run(&scenario, scenario.seed).expect("valid");
        let expected = match monitor::verdict(&run).exclusion {
            Exclusion::Holds => "Exclusion holds",
            Exclusion::Broken => "Exclusion broken",
        };
        assert!(
            verdict_line.starts_with(expected),
            "{file}: expected a line starting {expected:?}, got {verdict_line:?}"
        );
    }
    // Without --no-trace, the trace follows the summary after a blank line, one event a line.
    let file = path("05");
    let text = stdout(&lockstep(&["run", &file]));
    let (summary, trace) = text
        .split_once("\n\n")
        .expect("a blank line before the trace");
    assert!(summary
        .lines()
        .nth(1)
        .unwrap_or("")
        .starts_with("Exclusion "));
    assert!(trace.lines().count() > 5, "{trace}");
    assert!(trace.contains("HOLDS accounts[balance]"), "{trace}");
}

#[test]
fn a_json_scenario_file_runs_like_its_toml() {
    let file = path("06");
    let scenario = load(&file);
    let scratch = Scratch::new("06.json", &scenario.to_json_string());
    let from_json = lockstep(&["run", scratch.path(), "--json", "--no-trace"]);
    expect_code(&from_json, 0, "run FILE.json");
    let from_toml = lockstep(&["run", &file, "--json", "--no-trace"]);
    assert_eq!(json(&from_json), json(&from_toml));
}

#[test]
fn an_invalid_file_exits_2_with_a_located_message() {
    let syntax = Scratch::new(
        "unknown-field.toml",
        "name = \"x\"\nduration_ms = 1000\nregions = [\"east\"]\ncolour = \"red\"\n",
    );
    let out = lockstep(&["run", syntax.path(), "--json"]);
    expect_code(&out, 2, "unknown field");
    assert!(
        stdout(&out).is_empty(),
        "nothing on stdout: {}",
        stdout(&out)
    );
    let message = stderr(&out);
    assert!(
        message.starts_with(&format!(
            "lockstep: {}: line 4, column 1: unknown field `colour`",
            syntax.path()
        )),
        "{message}"
    );

    let invalid = Scratch::new(
        "missing-service.toml",
        r#"name = "x"
duration_ms = 0
regions = ["east"]
services = []

[[resources]]
name = "r"
rows = ["a"]

[[clients]]
name = "batch"
region = "east"
protocol = { kind = "single", service = "s3" }
resource = "r"
period_ms = 10
work_ms = 10
"#,
    );
    for command in ["run", "lint"] {
        let out = lockstep(&[command, invalid.path()]);
        expect_code(&out, 2, command);
        let p = invalid.path();
        assert_eq!(
            stderr(&out),
            format!(
                "lockstep: {p}: scenario: duration_ms is 0, it must be between 1 and 3600000\n\
                 {p}: client \"batch\": protocol names service \"s3\", which does not exist\n"
            ),
            "every problem, one a line"
        );
    }
    let out = lockstep(&["at", invalid.path(), "10"]);
    expect_code(&out, 2, "at on an invalid file");
}

#[test]
fn a_missing_file_exits_2() {
    let missing = std::env::temp_dir().join("lockstep-cli-test-no-such-file.toml");
    let missing = missing.to_str().expect("a UTF-8 path");
    for args in [
        vec!["run", missing],
        vec!["lint", missing],
        vec!["at", missing, "5"],
        vec!["sweep", missing, "--partition-ms", "5"],
    ] {
        let out = lockstep(&args);
        expect_code(&out, 2, &args.join(" "));
        assert!(
            stderr(&out).starts_with(&format!("lockstep: {missing}: ")),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let file = path("01");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", &file, "--frobnicate"],
            "unknown option --frobnicate",
        ),
        (vec![], "usage:"),
        (vec!["fly"], "unknown command \"fly\""),
        (vec!["run"], "run takes one FILE"),
        (vec!["run", &file, &file], "run takes one FILE"),
        (
            vec!["run", &file, "--seed", "x"],
            "--seed: \"x\" is not a whole number",
        ),
        (vec!["run", &file, "--seed"], "--seed needs a value"),
        (vec!["at", &file], "at takes FILE and MILLISECONDS"),
        (
            vec!["at", &file, "soon"],
            "\"soon\" is not a whole number of milliseconds",
        ),
        (vec!["lint"], "lint takes one FILE"),
        (
            vec!["sweep", &file],
            "sweep needs --param NAME --values LIST",
        ),
        (
            vec!["sweep", &file, "--partition-ms", "10"],
            "scenario: a partition sweep needs at least one partition to vary",
        ),
        (
            vec!["sweep", &file, "--partition-ms", "1,x"],
            "--partition-ms: \"1,x\" is not a list of whole numbers",
        ),
        (
            vec!["sweep", &file, "--partition-ms", "10", "--seeds", "0"],
            "--seeds must be between 1 and 10000",
        ),
    ];
    for (args, expected) in cases {
        let out = lockstep(&args);
        expect_code(&out, 2, &format!("lockstep {}", args.join(" ")));
        assert!(
            stderr(&out).contains(expected),
            "lockstep {}: expected {expected:?} in\n{}",
            args.join(" "),
            stderr(&out)
        );
        assert!(
            stdout(&out).is_empty(),
            "usage errors print nothing on stdout"
        );
    }
}

#[test]
fn lint_exits_1_on_a_defect_and_0_on_a_clean_inventory() {
    let two = path("01");
    let out = lockstep(&["lint", &two]);
    expect_code(&out, 1, "lint 01");
    assert!(
        stdout(&out).starts_with(&format!("{two}: defect: resource \"orders\": rows \"total\" are protected by 2 independent lock services")),
        "{}",
        stdout(&out)
    );

    let clean = path("04");
    let out = lockstep(&["lint", &clean]);
    expect_code(&out, 0, "lint 04");
    assert_eq!(
        stdout(&out),
        format!("{clean}: every resource has exactly one source of order.\n")
    );

    let inventory_file = path("11");
    let out = lockstep(&["lint", &inventory_file, "--json"]);
    expect_code(&out, 1, "lint 11 --json");
    let doc = json(&out);
    let findings = inventory::check(&load(&inventory_file));
    let defects = findings
        .iter()
        .filter(|f| f.severity == inventory::Severity::Defect)
        .count();
    assert!(defects > 0);
    assert_eq!(doc["defects"], defects);
    assert_eq!(
        doc["findings"],
        serde_json::to_value(&findings).expect("findings serialize")
    );

    let out = lockstep(&["lint", &clean, "--json"]);
    expect_code(&out, 0, "lint 04 --json");
    assert_eq!(
        json(&out),
        serde_json::json!({ "defects": 0, "findings": [] })
    );
}

#[test]
fn schema_prints_the_json_schema() {
    let out = lockstep(&["schema"]);
    expect_code(&out, 0, "schema");
    let doc = json(&out);
    assert_eq!(doc["title"], "Scenario");
    assert_eq!(stdout(&out), format!("{}\n", Scenario::json_schema()));
}

#[test]
fn at_shows_who_believes_what_at_one_instant() {
    let file = path("05");
    let scenario = load(&file);
    let run = lockstep::run(&scenario, scenario.seed).expect("valid");
    let snapshot = monitor::snapshot(&run.world, &run.events, 600_000);

    let out = lockstep(&["at", &file, "600", "--json"]);
    expect_code(&out, 0, "at --json");
    assert_eq!(
        json(&out),
        serde_json::to_value(&snapshot).expect("a snapshot serializes")
    );
    assert_eq!(json(&out)["at_us"], 600_000);

    let out = lockstep(&["at", &file, "600"]);
    expect_code(&out, 0, "at");
    let text = stdout(&out);
    let first = text.lines().next().unwrap_or_default();
    let state = if snapshot.conflicts.is_empty() {
        "holds"
    } else {
        "broken"
    };
    assert_eq!(first, format!("At t=0.600s: exclusion {state}."));
    for b in &snapshot.believers {
        assert!(
            text.contains(&format!("  {} believes it holds", b.client)),
            "{text}"
        );
    }

    // A different seed is a different run, and `at` follows it.
    let out = lockstep(&["at", &file, "600", "--seed", "9", "--json"]);
    expect_code(&out, 0, "at --seed");
    let run9 = lockstep::run(&scenario, 9).expect("valid");
    assert_eq!(
        json(&out),
        serde_json::to_value(monitor::snapshot(&run9.world, &run9.events, 600_000))
            .expect("a snapshot serializes")
    );
}

#[test]
fn sweep_prints_a_table_and_json() {
    let file = path("06");
    let out = lockstep(&["sweep", &file, "--partition-ms", "0,1500", "--seeds", "2"]);
    expect_code(&out, 0, "sweep");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "a header and one line per value:\n{text}");
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "partition_ms",
            "runs",
            "broken",
            "rate",
            "interval_95",
            "mean_overlaps",
            "mean_lost",
            "mean_idle_ms"
        ]
    );
    for (line, value) in lines[1..].iter().zip(["0", "1500"]) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), 8, "{line}");
        assert_eq!(cells[0], value);
        assert_eq!(cells[1], "2", "runs");
    }

    let out = lockstep(&[
        "sweep",
        &file,
        "--partition-ms",
        "0,1500",
        "--seeds",
        "2",
        "--json",
    ]);
    expect_code(&out, 0, "sweep --json");
    let expected = sweep::partition_length(&load(&file), &[0, 1500], 2).expect("a valid sweep");
    assert_eq!(
        json(&out),
        serde_json::to_value(&expected).expect("points serialize")
    );
}

/// Waits for a spawned `lockstep` at most `limit`, then kills it and fails: a command that
/// reads without end must not hang the test suite.
fn finishes_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    while child
        .try_wait()
        .expect("the child can be waited for")
        .is_none()
    {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child
        .wait_with_output()
        .expect("the output of a finished child")
}

fn spawn(args: &[&str], stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lockstep binary starts")
}

#[cfg(unix)]
#[test]
fn endless_input_is_refused_promptly() {
    let limit = Duration::from_secs(30);
    // /dev/zero reports a size of 0 and never ends.
    let out = finishes_within(
        spawn(&["run", "/dev/zero"], Stdio::null()),
        limit,
        "run /dev/zero",
    );
    expect_code(&out, 2, "run /dev/zero");
    assert_eq!(
        stderr(&out),
        "lockstep: /dev/zero: the file is larger than 1048576 bytes\n"
    );
    assert!(stdout(&out).is_empty());

    // A pipe that never ends: a thread writes valid TOML comments until the reader goes away.
    let mut child = spawn(&["lint", "/dev/stdin"], Stdio::piped());
    let mut pipe = child.stdin.take().expect("a pipe to the child");
    let writer = std::thread::spawn(move || {
        let lines = "# more\n".repeat(1024);
        while pipe.write_all(lines.as_bytes()).is_ok() {}
    });
    let out = finishes_within(child, limit, "lint /dev/stdin fed without end");
    writer
        .join()
        .expect("the writer stops when the pipe closes");
    expect_code(&out, 2, "lint /dev/stdin");
    assert_eq!(
        stderr(&out),
        "lockstep: /dev/stdin: the file is larger than 1048576 bytes\n"
    );
}

#[test]
fn a_file_of_exactly_the_size_limit_is_read_and_one_byte_more_is_not() {
    const LIMIT: usize = 1 << 20;
    let mut text = std::fs::read_to_string(path("01")).expect("readable scenario");
    assert!(text.ends_with('\n'));
    // Pad with one long comment line to exactly the limit.
    text.push('#');
    text.push_str(&"x".repeat(LIMIT - text.len() - 1));
    text.push('\n');
    assert_eq!(text.len(), LIMIT);
    let at_limit = Scratch::new("at-limit.toml", &text);
    let out = lockstep(&["lint", at_limit.path()]);
    expect_code(
        &out,
        1,
        "lint of a file of exactly 1 MiB: the scenario's defect",
    );

    text.push('\n');
    let over = Scratch::new("over-limit.toml", &text);
    let out = lockstep(&["lint", over.path()]);
    expect_code(&out, 2, "lint of a file one byte over 1 MiB");
    assert_eq!(
        stderr(&out),
        format!(
            "lockstep: {}: the file is larger than 1048576 bytes\n",
            over.path()
        )
    );
}

#[test]
fn every_command_refuses_arguments_it_does_not_take() {
    let file = path("01");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["schema", "x"], "schema takes no arguments"),
        (vec!["schema", "--json"], "schema does not take --json"),
        (
            vec!["schema", "--frobnicate"],
            "unknown option --frobnicate",
        ),
        (vec!["help", "run"], "help takes no arguments"),
        (vec!["--help", "run"], "--help takes no arguments"),
        (
            vec!["lint", &file, "--seed", "3"],
            "lint does not take --seed",
        ),
        (
            vec!["lint", &file, "--no-trace"],
            "lint does not take --no-trace",
        ),
        (vec!["lint", &file, &file], "lint takes one FILE"),
        (
            vec!["at", &file, "5", "--no-trace"],
            "at does not take --no-trace",
        ),
        (
            vec!["at", &file, "5", "6"],
            "at takes FILE and MILLISECONDS",
        ),
        (
            vec!["run", &file, "--partition-ms", "5"],
            "run does not take --partition-ms",
        ),
        (
            vec!["run", &file, "--seeds", "5"],
            "run does not take --seeds",
        ),
        (
            vec!["sweep", &file, "extra", "--partition-ms", "5"],
            "sweep takes one FILE",
        ),
        (
            vec!["sweep", &file, "--partition-ms", "5", "--seed", "1"],
            "sweep does not take --seed",
        ),
    ];
    for (args, expected) in cases {
        let out = lockstep(&args);
        let what = format!("lockstep {}", args.join(" "));
        expect_code(&out, 2, &what);
        assert!(
            stderr(&out).starts_with(&format!("lockstep: {expected}\nusage:\n")),
            "{what}: expected {expected:?} and the usage text, got\n{}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{what}: nothing on stdout");
    }
}

#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt as _;
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("run")
        .arg(std::ffi::OsStr::from_bytes(b"scenario-\xff.toml"))
        .output()
        .expect("the lockstep binary runs");
    expect_code(&out, 2, "a file name that is not UTF-8");
    assert!(
        stderr(&out).starts_with("lockstep: argument 2 is not valid UTF-8\nusage:\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn parse_errors_are_located_whatever_their_cause() {
    // A file that is not UTF-8: the offset of the first bad byte, on its line and column.
    let bytes = Scratch::bytes("latin1.toml", b"name = \"x\"\nregions = [\"\xe9t\xe9\"]\n");
    let out = lockstep(&["run", bytes.path()]);
    expect_code(&out, 2, "a file that is not UTF-8");
    assert_eq!(
        stderr(&out),
        format!(
            "lockstep: {}: line 2, column 13: byte 23 (counting from 0) is not valid UTF-8; a scenario must be UTF-8 text\n",
            bytes.path()
        )
    );
    // A dotted key too deep for the TOML parser, which gives it no position of its own.
    let deep = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/regressions/invalid-deep-dotted-key.toml");
    let deep = deep.to_str().expect("a UTF-8 path");
    let out = lockstep(&["lint", deep]);
    expect_code(&out, 2, "a dotted key too deep");
    assert_eq!(
        stderr(&out),
        format!("lockstep: {deep}: line 5, column 1: recursion limit: a dotted key or table header has too many parts\n")
    );
}

/// A fenced block of a Markdown page: its info string, and the byte range of its body (from
/// the start of its first line to the start of the closing fence).
struct Block {
    lang: String,
    body: std::ops::Range<usize>,
}

fn fenced_blocks(page: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, usize)> = None;
    let mut at = 0;
    for line in page.split_inclusive('\n') {
        if let Some(info) = line.strip_prefix("```") {
            match open.take() {
                None => open = Some((info.trim().to_string(), at + line.len())),
                Some((lang, start)) => blocks.push(Block {
                    lang,
                    body: start..at,
                }),
            }
        }
        at += line.len();
    }
    assert!(open.is_none(), "a fenced block is not closed");
    blocks
}

/// A scratch directory in which the documented commands run as a reader would run them from
/// the project's root: the shipped scenarios under `lessons/scenarios/`, and every file that the
/// documentation shows in full (a TOML block whose first line is `# NAME.toml`).
struct DocsDir(PathBuf);

impl DocsDir {
    fn new(pages: &[&str]) -> DocsDir {
        let dir = std::env::temp_dir().join(format!("lockstep-docs-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let lessons = dir.join("lessons/scenarios");
        std::fs::create_dir_all(&lessons).expect("the temporary directory is writable");
        for file in shipped() {
            let name = file.file_name().expect("a file name");
            std::fs::copy(&file, lessons.join(name)).expect("the scenarios can be copied");
        }
        for page in pages {
            for block in fenced_blocks(page) {
                let body = &page[block.body];
                let name = body
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("# "))
                    .filter(|n| n.ends_with(".toml") && !n.contains('/'));
                if let (true, Some(name)) = (block.lang == "toml", name) {
                    std::fs::write(dir.join(name), body).expect("writable");
                }
            }
        }
        DocsDir(dir)
    }

    /// Runs a documented command line (`lockstep ARGS...`, arguments separated by spaces) and
    /// returns what a terminal would show: standard output, then standard error.
    fn run(&self, command: &str) -> String {
        let args: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(
            args[0], "lockstep",
            "a documented command runs lockstep: {command}"
        );
        assert!(
            !command.contains(['"', '\'', '|', '>', '<', '$']),
            "documented commands are plain words, without quoting or redirection: {command}"
        );
        let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .args(&args[1..])
            .current_dir(&self.0)
            .output()
            .expect("the lockstep binary runs");
        assert!(out.status.code().is_some(), "{command}: killed");
        stdout(&out) + &stderr(&out)
    }
}

impl Drop for DocsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The documented form of a JSON output: the actual document, with only those elements of
/// each array of objects that the example shows. Objects always have all their keys, and
/// arrays of numbers or strings, and arrays the example shows empty, are kept whole. The
/// example is right exactly when this gives it back unchanged.
///
/// Each element of an example array is looked for among the actual elements after the one the
/// previous element matched: first an element that gives it back exactly, else the element of
/// the same shape that agrees with it on the most values (so that regenerating an outdated
/// example keeps showing the same events, with their new values).
fn abridge(example: &Value, actual: &Value) -> Value {
    match (example, actual) {
        (Value::Object(e), Value::Object(a)) => Value::Object(
            a.iter()
                .map(|(k, av)| {
                    let v = e.get(k).map_or_else(|| av.clone(), |ev| abridge(ev, av));
                    (k.clone(), v)
                })
                .collect(),
        ),
        (Value::Array(e), Value::Array(a))
            if !e.is_empty() && a.iter().any(|x| x.is_object() || x.is_array()) =>
        {
            let mut shown = Vec::new();
            let mut next = 0;
            for ev in e {
                let rest = next..a.len();
                let exact = rest.clone().find(|&j| abridge(ev, &a[j]) == *ev);
                let closest = || {
                    rest.clone()
                        .filter(|&j| same_shape(ev, &a[j]))
                        .max_by_key(|&j| (agreement(ev, &a[j]), std::cmp::Reverse(j)))
                };
                if let Some(j) = exact.or_else(closest) {
                    shown.push(abridge(ev, &a[j]));
                    next = j + 1;
                }
            }
            Value::Array(shown)
        }
        _ => actual.clone(),
    }
}

fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().eq(y.keys()),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// How many values two documents have in common, place by place.
fn agreement(a: &Value, b: &Value) -> usize {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .filter_map(|(k, v)| y.get(k).map(|w| agreement(v, w)))
            .sum(),
        (Value::Array(x), Value::Array(y)) => x.iter().zip(y).map(|(v, w)| agreement(v, w)).sum(),
        _ => usize::from(a == b),
    }
}

/// JSON as the documentation shows it: a value on one line when it fits in 96 columns, else
/// one member per line, indented by two spaces.
fn documented_json(v: &Value, column: usize, indent: usize) -> String {
    fn one_line(v: &Value) -> String {
        match v {
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(one_line).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Object(members) => {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), one_line(v)))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }
            scalar => scalar.to_string(),
        }
    }
    let line = one_line(v);
    if column + line.len() <= 96 || !(v.is_array() || v.is_object()) {
        return line;
    }
    let inner = " ".repeat(indent + 2);
    let members: Vec<String> = match v {
        Value::Array(items) => items
            .iter()
            .map(|x| format!("{inner}{}", documented_json(x, indent + 2, indent + 2)))
            .collect(),
        Value::Object(members) => members
            .iter()
            .map(|(k, x)| {
                let key = format!("{inner}{}: ", Value::from(k.as_str()));
                let value = documented_json(x, key.len(), indent + 2);
                key + &value
            })
            .collect(),
        _ => unreachable!("scalars fit on their line"),
    };
    let (open, close) = if v.is_array() { ("[", "]") } else { ("{", "}") };
    format!(
        "{open}\n{}\n{}{close}",
        members.join(",\n"),
        " ".repeat(indent)
    )
}

/// Every example of docs/cli.md is the real output of the command it shows, run from the
/// project's root. A `text` block that starts with `$ lockstep` is a terminal session: each
/// `$ ` line is a command, and the lines up to the next one are exactly what it prints
/// (standard output, then standard error). When the last command of a session shows no output
/// and a `json` block follows, that block is its output, abridged: see [`abridge`].
///
/// The outputs change whenever the engine, a monitor or the verdict's wording does. After such
/// an intended change, rewrite the examples from the real outputs and review the diff:
///
/// ```sh
/// UPDATE_DOCS=1 cargo test --test it documented_examples
/// git diff docs/cli.md
/// ```
#[test]
fn the_documented_examples_are_the_real_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("docs/cli.md");
    let page = std::fs::read_to_string(&path).expect("docs/cli.md exists");
    let format_page =
        std::fs::read_to_string(root.join("docs/scenario-format.md")).expect("the format page");
    let dir = DocsDir::new(&[&page, &format_page]);
    let blocks = fenced_blocks(&page);
    let mut fixes: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut outputs_checked = vec![false; blocks.len()];
    let mut sessions = 0;
    for (i, block) in blocks.iter().enumerate() {
        let body = &page[block.body.clone()];
        if block.lang != "text" || !body.starts_with("$ lockstep ") {
            continue;
        }
        sessions += 1;
        let mut real = String::new();
        let mut last_output = String::new();
        let mut last_command = "";
        for line in body.lines().filter(|l| l.starts_with("$ ")) {
            last_command = &line[2..];
            last_output = dir.run(last_command);
            real.push_str(line);
            real.push('\n');
            real.push_str(&last_output);
        }
        let json_next = blocks.get(i + 1).filter(|b| b.lang == "json");
        let shows_json = body.ends_with(&format!("$ {last_command}\n")) && json_next.is_some();
        if shows_json {
            // The session shows the command; the JSON block after it shows its output.
            real.truncate(real.len() - last_output.len());
            let json_block = json_next.expect("checked above");
            outputs_checked[i + 1] = true;
            let text = &page[json_block.body.clone()];
            let actual: Value = serde_json::from_str(&last_output)
                .unwrap_or_else(|e| panic!("{last_command}: not JSON: {e}\n{last_output}"));
            let example: Value = serde_json::from_str(text).unwrap_or_else(|e| {
                panic!(
                    "{}: the example of `{last_command}` is not JSON: {e}",
                    path.display()
                )
            });
            let documented = abridge(&example, &actual);
            if documented != example {
                problems.push(format!(
                    "`{last_command}`: the JSON example differs from the output"
                ));
                fixes.push((
                    json_block.body.clone(),
                    documented_json(&documented, 0, 0) + "\n",
                ));
            }
        }
        if real != body {
            let diff = body
                .lines()
                .zip(real.lines())
                .find(|(a, b)| a != b)
                .map_or_else(
                    || "the outputs differ in length".to_string(),
                    |(a, b)| format!("documented: {a}\n  real:       {b}"),
                );
            problems.push(format!("a session differs from the real output:\n  {diff}"));
            fixes.push((block.body.clone(), real));
        }
    }
    assert!(sessions >= 8, "docs/cli.md has {sessions} sessions");
    for (block, checked) in blocks.iter().zip(&outputs_checked) {
        if block.lang == "json" && !checked {
            problems.push(format!(
                "a JSON example follows no command: `{}`",
                page[block.body.clone()].lines().next().unwrap_or("")
            ));
        }
    }
    if std::env::var_os("UPDATE_DOCS").is_some() && !fixes.is_empty() {
        let mut updated = page.clone();
        fixes.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
        for (range, text) in fixes {
            updated.replace_range(range, &text);
        }
        std::fs::write(&path, updated).expect("docs/cli.md is writable");
        return;
    }
    assert!(
        problems.is_empty(),
        "{} does not show what the commands print:\n\n{}\n\nIf the change is intended, rewrite \
         the examples with\n\n    UPDATE_DOCS=1 cargo test --test it documented_examples\n\n\
         and review the diff.",
        path.display(),
        problems.join("\n\n")
    );
}

/// `export --format embed` prints the share panel's snippet for a run made with the given
/// edits: the embed's reader reads its address back, and its digest is that run's.
#[test]
fn export_prints_the_embed_snippet_of_the_edited_run() {
    use lockstep::ui::embed::Embed;
    let file = "lessons/scenarios/05-fencing.toml";
    let out = lockstep(&[
        "export",
        file,
        "--format",
        "embed",
        "--link-base",
        "https://example.org/lockstep/",
        "--edit",
        "fencing accounts one_source all_accesses",
        "--controls",
        "fencing accounts",
        "--origins",
        "https://docs.example.org",
        "--caption",
        "Fencing, live",
        "--playhead",
        "700",
        "--id",
        "fig-2",
    ]);
    expect_code(&out, 0, "export --format embed");
    let snippet = stdout(&out);
    assert!(snippet.contains("class=\"lockstep-embed\"") && !snippet.contains("style="));
    let src = snippet
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the frame's address")
        .replace("&amp;", "&");
    let query = src
        .strip_prefix("https://example.org/lockstep/#/embed?")
        .expect("the site's embed view");
    let embed = Embed::from_query(query).expect("the embed reads its address");
    assert_eq!(embed.caption.as_deref(), Some("Fencing, live"));
    assert_eq!(embed.origins, vec!["https://docs.example.org".to_string()]);
    assert_eq!(embed.link.playhead_us, 700_000);
    assert_eq!(embed.id.as_deref(), Some("fig-2"));
    let scenario = lockstep::Scenario::from_toml_str(
        &std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap(),
    )
    .unwrap();
    let edited = lockstep::lesson::apply_edits(
        &scenario,
        &["fencing accounts one_source all_accesses".parse().unwrap()],
    );
    let outcome = lockstep::ui::Outcome::compute(&edited).unwrap();
    assert_eq!(
        embed.link.digest,
        Some(lockstep::trace::digest(&outcome.events))
    );
    assert!(snippet.contains("<script src=\"https://example.org/lockstep/embed-size.js\" async>"));
    // What the embed would refuse is refused here, in its words.
    for (args, why) in [
        (vec!["--controls", "teleport"], "unknown control"),
        (vec!["--edit", "fly away"], "--edit"),
        (vec!["--theme", "purple"], "not light, dark or auto"),
    ] {
        let mut all = vec![
            "export",
            file,
            "--format",
            "embed",
            "--link-base",
            "https://e.org/",
        ];
        all.extend(args);
        let out = lockstep(&all);
        expect_code(&out, 2, why);
        assert!(stderr(&out).contains(why), "{}", stderr(&out));
    }
    let out = lockstep(&["export", file, "--format", "embed"]);
    expect_code(&out, 2, "no site");
    assert!(stderr(&out).contains("--link-base"));
}

/// An embed id that is not one is refused in the embed's own words.
#[test]
fn export_refuses_an_embed_id_the_embed_would_refuse() {
    let out = lockstep(&[
        "export",
        "lessons/scenarios/05-fencing.toml",
        "--format",
        "embed",
        "--link-base",
        "https://example.org/lockstep/",
        "--id",
        "fig 2",
    ]);
    expect_code(&out, 2, "export --format embed --id with a space");
    assert!(stderr(&out).contains("embed id"), "{}", stderr(&out));
}

/// `--width` draws the picture at the width it is shown, `--scale` a PNG at that many pixels a
/// pixel; a width or scale out of bounds, or with a format that has none, is refused.
#[test]
fn export_draws_a_picture_at_the_width_asked() {
    let file = "lessons/scenarios/05-fencing.toml";
    let out = lockstep(&["export", file, "--format", "svg", "--width", "830"]);
    expect_code(&out, 0, "export --width 830");
    let svg = stdout(&out);
    assert!(
        svg.contains(r#"width="830""#) && svg.contains("viewBox=\"0 0 830 "),
        "{svg:.300}"
    );
    let out = lockstep(&[
        "export", file, "--format", "png", "--width", "830", "--scale", "1",
    ]);
    expect_code(&out, 0, "export --format png --width 830 --scale 1");
    let png = out.stdout;
    let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
    assert_eq!(w, 830, "one pixel a pixel");
    for (args, says) in [
        (&["--format", "svg", "--width", "100"][..], "--width"),
        (&["--format", "svg", "--width", "wide"][..], "--width"),
        (&["--format", "json", "--width", "830"][..], "svg or png"),
        (&["--format", "svg", "--scale", "2"][..], "--format png"),
        (&["--format", "png", "--scale", "9"][..], "--scale"),
    ] {
        let mut all = vec!["export", file];
        all.extend_from_slice(args);
        let out = lockstep(&all);
        expect_code(&out, 2, &all.join(" "));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}
