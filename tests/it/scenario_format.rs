//! The scenario format as users meet it: the shipped files parse, validate and survive a round
//! trip through TOML and JSON; the shipped JSON Schema is the one generated from the types; the
//! documented defaults are the real ones; and every kind of mistake gets a located message, never
//! a panic.

use std::path::{Path, PathBuf};

use lockstep::scenario::{
    limits, Fencing, FencingChecks, MigrationMode, PartitionMode, Protocol, Scenario,
};

/// Every shipped scenario file, sorted by name, with its text.
fn shipped() -> Vec<(PathBuf, String)> {
    crate::shipped_paths()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable scenario");
            (p, text)
        })
        .collect()
}

fn manifest_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Parses, then checks that the scenario survives TOML -> text -> TOML and JSON -> text -> JSON
/// unchanged, and that both serializations describe the same scenario.
fn assert_round_trips(label: &str, scenario: &Scenario) {
    scenario
        .validate()
        .unwrap_or_else(|e| panic!("{label}: a parsed scenario must validate: {e}"));
    let toml = scenario.to_toml_string();
    let from_toml = Scenario::from_toml_str(&toml)
        .unwrap_or_else(|e| panic!("{label}: its own TOML does not parse: {e}\n{toml}"));
    assert_eq!(&from_toml, scenario, "{label}: TOML round trip changed it");
    assert_eq!(
        toml,
        toml::to_string(scenario).expect("serializes"),
        "{label}: the canonical text is laid out as the toml crate's serializer does it"
    );
    let json = scenario.to_json_string();
    let from_json = Scenario::from_json_str(&json)
        .unwrap_or_else(|e| panic!("{label}: its own JSON does not parse: {e}\n{json}"));
    assert_eq!(&from_json, scenario, "{label}: JSON round trip changed it");
    // Across the two forms too: what a file says and what a URL says are the same scenario.
    let across = Scenario::from_json_str(&from_toml.to_json_string()).expect("JSON of TOML");
    assert_eq!(&across, scenario, "{label}: TOML then JSON changed it");
}

/// Any text a user may put in a string (quotes, backslashes, line breaks, control characters,
/// DEL, characters beyond ASCII) survives the canonical TOML, which a toggle writes.
#[test]
fn strings_with_any_character_survive_the_canonical_text() {
    let mut s = Scenario::from_toml_str(lockstep::ui::BLANK_TOML).expect("valid");
    for text in [
        "say \"hi\"",
        "back\\slash and 'single'",
        "two\nlines\tand a tab\r",
        "bell \u{7} escape \u{1b} delete \u{7f}",
        "naïve — 漢字 🙂",
        "'''triple''' \"\"\"quotes\"\"\"",
    ] {
        s.description = text.to_string();
        let toml = s.to_toml_string();
        let back = Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
        assert_eq!(back.description, text, "{toml}");
    }
}

#[test]
fn every_shipped_scenario_parses_validates_and_round_trips() {
    for (path, text) in shipped() {
        let label = path.display().to_string();
        let scenario = Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert!(
            !scenario.name.is_empty(),
            "{label}: a shipped scenario has a name"
        );
        assert!(
            !scenario.description.is_empty(),
            "{label}: a shipped scenario says what it shows"
        );
        assert_round_trips(&label, &scenario);
    }
}

/// Sets every optional field of the format at least once, so the round trip covers all of them.
const EVERY_FIELD: &str = r#"
name = "Every field"
description = "Sets every optional field once."
duration_ms = 5000
seed = 42
max_events = 10000
regions = ["east", "west", "central"]

[network]
local_latency_ms = 2
remote_latency_ms = 30
jitter_ms = 3
links = [{ between = ["east", "central"], latency_ms = 10 }]

[[services]]
name = "authority"
replicas = ["east", "west", "central"]
lease_ms = 400
first_token = 7
protects = ["ledger"]
outages = [{ start_ms = 100, duration_ms = 50 }, { start_ms = 3000, duration_ms = 10 }]

[[services]]
name = "follower"
replicas = ["east"]
subordinate_to = "authority"
protects = ["ledger"]

[[services]]
name = "spare"
replicas = ["west", "west", "west"]
lease_ms = 300
outages = [{ start_ms = 900, duration_ms = 30 }]
forgets_on_restart = true
restart_delay_ms = 20
clock_rate_percent = 120

[[resources]]
name = "ledger"
region = "central"
rows = ["a", "b", "c"]
initial = -5
fencing = "one_source"
fencing_source = "authority"
fencing_checks = "all_accesses"
partition = [{ service = "authority", rows = ["a", "b"] }, { service = "spare", rows = ["c"] }]

[[resources]]
name = "cache"
rows = ["hits"]
fencing = "any_source"

[[clients]]
name = "chain"
count = 2
region = "east"
protocol = { kind = "token_chain", authority = "authority", subordinate = "follower" }
resource = "ledger"
rows = ["a"]
start_ms = 10
stop_ms = 4000
period_ms = 20
jitter_ms = 5
work_ms = 15
acquire_timeout_ms = 300
max_retries = 5
retry_backoff_ms = 40
lease_aware = true
lease_margin_ms = 50
max_operations = 9

[[clients]]
name = "both"
region = "west"
protocol = { kind = "all_unordered", services = ["authority", "spare"], skip_unreachable = true }
resource = "cache"
period_ms = 30
work_ms = 10
acquire_timeout_ms = 100

[[clients]]
name = "ordered"
region = "central"
protocol = { kind = "all_ordered", services = ["spare", "authority"] }
resource = "cache"
period_ms = 30
work_ms = 10

[[clients]]
name = "voters"
region = "east"
protocol = { kind = "majority", services = ["authority", "spare"], quorum = 1, clock_drift_ms = 5 }
resource = "cache"
period_ms = 30
work_ms = 10

[[clients]]
name = "reckless"
count = 3
region = "central"
protocol = { kind = "no_lock" }
resource = "cache"
period_ms = 0
work_ms = 5

[[partitions]]
start_ms = 500
duration_ms = 250
groups = [["east"], ["west", "central"]]
mode = "delay"

[[partitions]]
start_ms = 2000
duration_ms = 100
groups = [["west"], ["central"]]

[[pauses]]
client = "chain-2"
start_ms = 700
duration_ms = 900

[[pauses]]
client = "reckless"
start_ms = 100
duration_ms = 10

[[migrations]]
at_ms = 1000
resource = "cache"
from = "spare"
to = "authority"
mode = "transfer"

[[migrations]]
at_ms = 1500
resource = "cache"
from = "authority"
to = "spare"
mode = "drain"
"#;

#[test]
fn a_scenario_using_every_field_round_trips_and_runs() {
    let scenario = Scenario::from_toml_str(EVERY_FIELD).unwrap_or_else(|e| panic!("{e}"));
    assert_round_trips("EVERY_FIELD", &scenario);
    assert_eq!(
        scenario.client_instance_names(),
        [
            "chain-1",
            "chain-2",
            "both-1",
            "ordered-1",
            "voters-1",
            "reckless-1",
            "reckless-2",
            "reckless-3"
        ]
    );
    // Parsed values land where the reference says they do.
    assert_eq!(scenario.resources[0].fencing, Fencing::OneSource);
    assert_eq!(
        scenario.resources[0].fencing_checks,
        FencingChecks::AllAccesses
    );
    assert_eq!(scenario.resources[1].fencing, Fencing::AnySource);
    assert_eq!(scenario.partitions[0].mode, PartitionMode::Delay);
    assert_eq!(scenario.migrations[0].mode, MigrationMode::Transfer);
    assert_eq!(scenario.migrations[1].mode, MigrationMode::Drain);
    assert_eq!(scenario.event_budget(), 10_000);
    let spare = &scenario.services[2];
    assert!(spare.forgets_on_restart);
    assert_eq!(
        (spare.restart_delay_ms, spare.clock_rate_percent),
        (20, 120)
    );
    assert_eq!(
        scenario.clients[3].protocol,
        Protocol::Majority {
            services: vec!["authority".into(), "spare".into()],
            quorum: Some(1),
            clock_drift_ms: 5
        }
    );
    // It is a world the engine can run, not only a text that parses.
    crate::check(&scenario, 3);
}

/// The smallest scenario the format accepts.
const MINIMAL: &str = r#"
name = "minimal"
duration_ms = 100
regions = ["here"]
services = []
clients = []

[[resources]]
name = "table"
rows = ["x"]
"#;

#[test]
fn defaults_are_the_documented_ones() {
    let s = Scenario::from_toml_str(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.description, "");
    assert_eq!(s.seed, 0);
    assert_eq!(s.max_events, None);
    assert_eq!(s.event_budget(), limits::EVENTS_DEFAULT);
    assert_eq!(s.network.local_latency_ms, 1);
    assert_eq!(s.network.remote_latency_ms, 40);
    assert_eq!(s.network.jitter_ms, 2);
    assert!(s.network.links.is_empty());
    assert!(s.partitions.is_empty() && s.pauses.is_empty() && s.migrations.is_empty());
    let r = &s.resources[0];
    assert_eq!(r.region, None);
    assert_eq!(r.initial, 0);
    assert_eq!(r.fencing, Fencing::Off);
    assert_eq!(r.fencing_source, None);
    assert_eq!(r.fencing_checks, FencingChecks::Writes);
    assert!(r.partition.is_empty());

    // A partially written [network] table keeps the defaults of the fields it leaves out.
    let s = Scenario::from_toml_str(&MINIMAL.replace(
        "services = []",
        "services = []\nnetwork = { jitter_ms = 0 }",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            s.network.local_latency_ms,
            s.network.remote_latency_ms,
            s.network.jitter_ms
        ),
        (1, 40, 0)
    );

    let without_lists = MINIMAL.replace("services = []\nclients = []\n", "");
    let with_parts = format!(
        "{without_lists}
[[services]]
name = \"locks\"
replicas = [\"here\"]

[[clients]]
name = \"app\"
region = \"here\"
protocol = {{ kind = \"single\", service = \"locks\" }}
resource = \"table\"
period_ms = 10
work_ms = 10

[[partitions]]
start_ms = 1
duration_ms = 1
groups = [[\"here\"], []]

[[migrations]]
at_ms = 1
resource = \"table\"
from = \"locks\"
to = \"other\"

[[services]]
name = \"other\"
replicas = [\"here\"]
"
    );
    let s = Scenario::from_toml_str(&with_parts).unwrap_or_else(|e| panic!("{e}"));
    let svc = &s.services[0];
    assert_eq!(svc.subordinate_to, None);
    assert_eq!(svc.lease_ms, None);
    assert_eq!(svc.first_token, 1);
    assert!(svc.protects.is_empty() && svc.outages.is_empty());
    assert!(!svc.forgets_on_restart);
    assert_eq!((svc.restart_delay_ms, svc.clock_rate_percent), (0, 100));
    let c = &s.clients[0];
    assert_eq!(c.count, 1);
    assert!(c.rows.is_empty(), "no rows listed means all rows");
    assert_eq!(c.start_ms, 0);
    assert_eq!(c.stop_ms, None);
    assert_eq!(c.jitter_ms, 0);
    assert_eq!(c.acquire_timeout_ms, None);
    assert_eq!(c.max_retries, 3);
    assert_eq!(c.retry_backoff_ms, 100);
    assert!(!c.lease_aware);
    assert_eq!(c.lease_margin_ms, 0);
    assert_eq!(c.max_operations, None);
    assert_eq!(
        c.protocol,
        Protocol::Single {
            service: "locks".into()
        }
    );
    assert_eq!(s.partitions[0].mode, PartitionMode::Drop);
    assert_eq!(s.migrations[0].mode, MigrationMode::Naive);
    let skip = Scenario::from_toml_str(&with_parts.replace(
        "kind = \"single\", service = \"locks\"",
        "kind = \"all_ordered\", services = [\"locks\", \"other\"]",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        skip.clients[0].protocol,
        Protocol::AllOrdered {
            services: vec!["locks".into(), "other".into()],
            skip_unreachable: false
        }
    );
    let majority = Scenario::from_toml_str(&with_parts.replace(
        "kind = \"single\", service = \"locks\"",
        "kind = \"majority\", services = [\"locks\", \"other\"]",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        majority.clients[0].protocol,
        Protocol::Majority {
            services: vec!["locks".into(), "other".into()],
            quorum: None,
            clock_drift_ms: 0
        }
    );
    assert_eq!(lockstep::scenario::default_quorum(2), 2);
    assert_eq!(lockstep::scenario::default_quorum(5), 3);
}

#[test]
fn the_same_scenario_reads_the_same_from_toml_and_json() {
    let json = r#"{
        "name": "minimal",
        "duration_ms": 100,
        "regions": ["here"],
        "services": [],
        "resources": [{ "name": "table", "rows": ["x"] }],
        "clients": []
    }"#;
    let from_json = Scenario::from_json_str(json).unwrap_or_else(|e| panic!("{e}"));
    let from_toml = Scenario::from_toml_str(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(from_json, from_toml);
}

#[test]
fn the_shipped_schema_is_the_generated_one() {
    let path = manifest_path("static/scenario.schema.json");
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = format!("{}\n", Scenario::json_schema());
    assert!(
        shipped == generated,
        "{} is stale or missing; regenerate it with\n\n    \
         cargo run -q --bin lockstep -- schema > static/scenario.schema.json\n",
        path.display()
    );
    let schema: serde_json::Value = serde_json::from_str(&shipped).expect("the schema is JSON");
    assert_eq!(schema["title"], "Scenario");
    assert_eq!(
        schema["required"],
        serde_json::json!([
            "name",
            "duration_ms",
            "regions",
            "services",
            "resources",
            "clients"
        ]),
        "the required top-level fields changed: update docs/scenario-format.md"
    );
    let kinds: Vec<&str> = schema["$defs"]["Protocol"]["oneOf"]
        .as_array()
        .expect("the protocol is a tagged union")
        .iter()
        .map(|v| v["properties"]["kind"]["const"].as_str().expect("a kind"))
        .collect();
    assert_eq!(
        kinds,
        [
            "single",
            "all_unordered",
            "all_ordered",
            "token_chain",
            "no_lock",
            "majority"
        ],
        "the protocol kinds changed: update docs/scenario-format.md"
    );
}

/// The complete example of the reference page is a scenario that parses, validates and runs,
/// and its JSON form is the same scenario.
#[test]
fn the_reference_examples_are_valid() {
    let path = manifest_path("docs/scenario-format.md");
    let page = std::fs::read_to_string(&path).expect("the reference page exists");
    let blocks = |lang: &str| -> Vec<String> {
        let fence = format!("```{lang}\n");
        page.split(fence.as_str())
            .skip(1)
            .map(|rest| rest.split("```").next().unwrap_or("").to_string())
            .collect()
    };
    let complete: Vec<Scenario> = blocks("toml")
        .iter()
        .filter(|b| b.starts_with("name = "))
        .map(|b| Scenario::from_toml_str(b).unwrap_or_else(|e| panic!("{e}\n{b}")))
        .collect();
    assert!(
        !complete.is_empty(),
        "{} has no complete TOML example (a block starting with `name = `)",
        path.display()
    );
    for s in &complete {
        crate::check(s, s.seed);
    }
    // What the page says the complete example shows, with its own seed.
    let (_, v) = crate::check(&complete[0], complete[0].seed);
    assert_eq!(v.exclusion, lockstep::Exclusion::Broken, "{}", v.summary());
    assert_eq!(v.integrity, lockstep::Integrity::Intact, "{}", v.summary());
    assert!(v.rejected_writes + v.rejected_reads >= 1, "{}", v.summary());
    let west = v
        .unavailability
        .iter()
        .find(|u| u.service == "authority" && u.region == "west")
        .expect("the authority is used from the west");
    assert_eq!(west.unavailable_us, 600_000, "{}", v.summary());
    // A broken example opens with its file name as a comment; the page must show every
    // problem it really has, prefixed with that name as the command line prints it.
    for b in blocks("toml") {
        let Some(file) = b
            .strip_prefix("# ")
            .and_then(|rest| rest.lines().next())
            .filter(|f| f.ends_with(".toml"))
        else {
            continue;
        };
        let errors = Scenario::from_toml_str(&b).expect_err("a broken example is refused");
        for line in errors.to_string().lines() {
            assert!(
                page.contains(&format!("{file}: {line}")),
                "{} does not show the problem `{line}` of {file}",
                path.display()
            );
        }
    }
    for b in blocks("json") {
        if b.trim_start().starts_with("{\"name\"") {
            let s = Scenario::from_json_str(&b).unwrap_or_else(|e| panic!("{e}\n{b}"));
            assert_eq!(s, complete[0], "the JSON example is not the TOML example");
        }
    }
}

/// A valid scenario the bad inputs below are made from: every error is one small edit away.
const BASE: &str = r#"name = "base"
duration_ms = 1000
regions = ["east", "west"]

[[services]]
name = "s1"
replicas = ["east", "east", "west"]

[[services]]
name = "s2"
replicas = ["west"]

[[services]]
name = "sub"
replicas = ["east"]
subordinate_to = "s1"

[[resources]]
name = "orders"
rows = ["total", "count"]

[[clients]]
name = "batch"
count = 2
region = "east"
protocol = { kind = "single", service = "s1" }
resource = "orders"
period_ms = 10
work_ms = 10
"#;

/// BASE with one piece of text replaced (which must be there).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE has no {from:?}");
    BASE.replacen(from, to, 1)
}

/// BASE with text added at the end (inside the last client, or new tables).
fn plus(extra: &str) -> String {
    format!("{BASE}{extra}")
}

/// Why `toml` is not accepted, or `None` if it is.
fn error_of(toml: &str) -> Option<String> {
    Scenario::from_toml_str(toml).err().map(|e| e.to_string())
}

/// Checks that `toml` is refused with a message containing `expected`.
#[track_caller]
fn check_error(toml: &str, expected: &str) {
    match error_of(toml) {
        None => panic!("accepted, but expected an error containing {expected:?}:\n{toml}"),
        Some(text) => assert!(
            text.contains(expected),
            "expected an error containing\n  {expected}\nbut got\n  {text}\nfor\n{toml}"
        ),
    }
}

#[test]
fn the_base_of_the_bad_inputs_is_valid() {
    Scenario::from_toml_str(BASE).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn bad_inputs_give_located_errors() {
    let many_rows = format!(
        "rows = [{}]",
        (0..65)
            .map(|i| format!("\"r{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let no_lock_class = |name: &str, count: u32| {
        format!(
            "\n[[clients]]\nname = \"{name}\"\ncount = {count}\nregion = \"east\"\nprotocol = {{ kind = \"no_lock\" }}\nresource = \"orders\"\nperiod_ms = 10\nwork_ms = 10\n"
        )
    };
    let table: Vec<(&str, String, &str)> = vec![
        // Syntax and types: located by line and column.
        (
            "unknown top-level field",
            edit("duration_ms = 1000", "duration_ms = 1000\ncolour = \"red\""),
            "line 3, column 1: unknown field `colour`, expected one of `name`",
        ),
        (
            "unknown client field",
            plus("speed = 3\n"),
            "line 30, column 1: unknown field `speed`",
        ),
        (
            "unknown network field",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\"]\nnetwork = { bandwidth = 3 }"),
            "line 4, column 13: unknown field `bandwidth`",
        ),
        (
            "unknown outage field",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\noutages = [{ start_ms = 1, duration_ms = 4, end_ms = 5 }]"),
            "line 12, column 45: unknown field `end_ms`, expected `start_ms` or `duration_ms`",
        ),
        (
            "unknown protocol kind",
            edit("kind = \"single\"", "kind = \"quorum\""),
            "line 26, column 21: unknown variant `quorum`, expected one of `single`, `all_unordered`, `all_ordered`, `token_chain`, `no_lock`",
        ),
        (
            "protocol without its service",
            edit("kind = \"single\", service = \"s1\"", "kind = \"single\""),
            "line 26, column 12: missing field `service`",
        ),
        (
            "protocol with a field of another kind",
            edit("service = \"s1\" }", "service = \"s1\", order = 1 }"),
            "line 26, column 12: unknown field `order`, expected `service`",
        ),
        (
            "protocol without a kind",
            edit("kind = \"single\", service = \"s1\"", "service = \"s1\""),
            "line 26, column 12: missing field `kind`",
        ),
        (
            "protocol with the kind last and a field of another kind",
            edit("kind = \"single\", service = \"s1\"", "authority = \"s1\", kind = \"single\""),
            "line 26, column 12: unknown field `authority`, expected `service`",
        ),
        (
            "no lock with a service",
            edit("kind = \"single\", service = \"s1\"", "kind = \"no_lock\", service = \"s1\""),
            "line 26, column 12: unknown field `service`, there are no fields",
        ),
        (
            "token chain without its subordinate",
            edit("kind = \"single\", service = \"s1\"", "kind = \"token_chain\", authority = \"s1\""),
            "line 26, column 12: missing field `subordinate`",
        ),
        (
            "protocol service of the wrong type",
            edit("kind = \"single\", service = \"s1\"", "kind = \"single\", service = 1"),
            "line 26, column 41: invalid type: integer `1`, expected a string",
        ),
        (
            "unknown fencing mode",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nfencing = \"strict\""),
            "line 21, column 11: unknown variant `strict`, expected one of `off`, `any_source`, `one_source`",
        ),
        (
            "unknown fencing checks",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nfencing_checks = \"reads\""),
            "unknown variant `reads`, expected `writes` or `all_accesses`",
        ),
        (
            "unknown partition mode",
            plus("\n[[partitions]]\nstart_ms = 1\nduration_ms = 1\ngroups = [[\"east\"], [\"west\"]]\nmode = \"slow\"\n"),
            "line 35, column 8: unknown variant `slow`, expected `drop` or `delay`",
        ),
        (
            "unknown migration mode",
            plus("\n[[migrations]]\nat_ms = 1\nresource = \"orders\"\nfrom = \"s1\"\nto = \"s2\"\nmode = \"copy\"\n"),
            "unknown variant `copy`, expected one of `naive`, `drain`, `transfer`",
        ),
        (
            "missing required field",
            edit("name = \"base\"\n", ""),
            "line 1, column 1: missing field `name`",
        ),
        (
            "missing client field",
            edit("period_ms = 10\n", ""),
            "line 22, column 1: missing field `period_ms`",
        ),
        (
            "string for a number",
            edit("duration_ms = 1000", "duration_ms = \"1s\""),
            "line 2, column 15: invalid type: string \"1s\", expected u64",
        ),
        (
            "negative duration",
            edit("duration_ms = 1000", "duration_ms = -5"),
            "line 2, column 15: invalid value: integer `-5`, expected u64",
        ),
        (
            "number beyond 64 bits",
            edit("duration_ms = 1000", "duration_ms = 18446744073709551616"),
            "line 2, column 15: invalid type: integer `18446744073709551616`",
        ),
        (
            "link between one region",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\"]\nnetwork = { links = [{ between = [\"east\"], latency_ms = 5 }] }"),
            "network link east: a link names exactly two regions",
        ),
        (
            "TOML syntax",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\""),
            "line 5, column 1: missing comma between array elements",
        ),
        // Cross-references: located by the thing that names something missing.
        (
            "protocol naming a missing service",
            edit("service = \"s1\" }", "service = \"s3\" }"),
            "client \"batch\": protocol names service \"s3\", which does not exist",
        ),
        (
            "protocol listing a service twice",
            edit("kind = \"single\", service = \"s1\"", "kind = \"all_ordered\", services = [\"s1\", \"s2\", \"s1\"]"),
            "client \"batch\": protocol lists service \"s1\" twice",
        ),
        (
            "protocol with no services",
            edit("kind = \"single\", service = \"s1\"", "kind = \"all_unordered\", services = []"),
            "client \"batch\": protocol services: 0 given, 1 to 8 allowed",
        ),
        (
            "token chain to an independent service",
            edit("kind = \"single\", service = \"s1\"", "kind = \"token_chain\", authority = \"s1\", subordinate = \"s2\""),
            "client \"batch\": protocol token_chain: service \"s2\" is not subordinate_to \"s1\"",
        ),
        (
            "client in a missing region",
            edit("region = \"east\"\nprotocol", "region = \"north\"\nprotocol"),
            "client \"batch\": region \"north\" does not exist",
        ),
        (
            "client of a missing resource",
            edit("resource = \"orders\"", "resource = \"payments\""),
            "client \"batch\": resource \"payments\" does not exist",
        ),
        (
            "client row not in the resource",
            plus("rows = [\"sum\"]\n"),
            "client \"batch\": row \"sum\" is not a row of resource \"orders\"",
        ),
        (
            "replica in a missing region",
            edit("replicas = [\"west\"]", "replicas = [\"north\"]"),
            "service \"s2\": a replica is placed in region \"north\", which does not exist",
        ),
        (
            "authority that does not exist",
            edit("subordinate_to = \"s1\"", "subordinate_to = \"boss\""),
            "service \"sub\": subordinate_to names service \"boss\", which does not exist",
        ),
        (
            "subordinate to itself",
            edit("subordinate_to = \"s1\"", "subordinate_to = \"sub\""),
            "service \"sub\": a service cannot be subordinate to itself",
        ),
        (
            "chain of subordinates",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\nsubordinate_to = \"sub\""),
            "service \"s2\": its authority \"sub\" is itself subordinate; chains longer than one step are not modelled",
        ),
        (
            "protecting a missing resource",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\nprotects = [\"payments\"]"),
            "service \"s2\": protects resource \"payments\", which does not exist",
        ),
        (
            "resource in a missing region",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nregion = \"north\""),
            "resource \"orders\": region \"north\" does not exist",
        ),
        (
            "fencing one_source without source",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nfencing = \"one_source\""),
            "resource \"orders\": fencing = \"one_source\" needs fencing_source, the service whose tokens count",
        ),
        (
            "fencing source that does not exist",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nfencing = \"one_source\"\nfencing_source = \"s9\""),
            "resource \"orders\": fencing_source names service \"s9\", which does not exist",
        ),
        (
            "fencing source without one_source",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\nfencing = \"any_source\"\nfencing_source = \"s1\""),
            "resource \"orders\": fencing_source is only meaningful with fencing = \"one_source\"",
        ),
        (
            "row share of a missing service",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\npartition = [{ service = \"s9\", rows = [\"total\"] }]"),
            "resource \"orders\": partition names service \"s9\", which does not exist",
        ),
        (
            "row share of a missing row",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\npartition = [{ service = \"s1\", rows = [\"sum\"] }]"),
            "resource \"orders\": partition names row \"sum\", which does not exist",
        ),
        (
            "row shared twice",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\npartition = [{ service = \"s1\", rows = [\"total\"] }, { service = \"s2\", rows = [\"total\"] }]"),
            "resource \"orders\": partition gives row \"total\" to more than one service",
        ),
        (
            "link to a missing region",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\"]\nnetwork = { links = [{ between = [\"east\", \"north\"], latency_ms = 5 }] }"),
            "network link east-north: names region \"north\", which does not exist",
        ),
        // Duplicate names.
        (
            "duplicate region",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\", \"east\"]"),
            "region \"east\": there is more than one region named \"east\"",
        ),
        (
            "duplicate service",
            plus("\n[[services]]\nname = \"s2\"\nreplicas = [\"east\"]\n"),
            "service \"s2\": there is more than one service named \"s2\"",
        ),
        (
            "duplicate resource",
            plus("\n[[resources]]\nname = \"orders\"\nrows = [\"x\"]\n"),
            "resource \"orders\": there is more than one resource named \"orders\"",
        ),
        (
            "duplicate client class",
            plus(&no_lock_class("batch", 1)),
            "client class \"batch\": there is more than one client class named \"batch\"",
        ),
        (
            "duplicate row",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"total\"]"),
            "there is more than one row of resource \"orders\" named \"total\"",
        ),
        // Names.
        (
            "name too long",
            edit("name = \"s2\"", &format!("name = \"{}\"", "x".repeat(41))),
            "names must have 1 to 40 characters, not 41",
        ),
        (
            "empty name",
            edit("name = \"s2\"", "name = \"\""),
            "service \"\": names must have 1 to 40 characters, not 0",
        ),
        (
            "name with a space",
            edit("name = \"s2\"", "name = \"my lock\""),
            "service \"my lock\": name \"my lock\" may use only letters, digits, '-', '_' and '.'",
        ),
        (
            "empty row name",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"\"]"),
            "row of resource \"orders\": names must have 1 to 40 characters, not 0",
        ),
        (
            "row name with a comma",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"a,b\"]"),
            "row of resource \"orders\": name \"a,b\" may use only letters, digits, '-', '_' and '.'",
        ),
        // Bounds.
        (
            "zero duration",
            edit("duration_ms = 1000", "duration_ms = 0"),
            "scenario: duration_ms is 0, it must be between 1 and 3600000",
        ),
        (
            "duration above the limit",
            edit("duration_ms = 1000", "duration_ms = 3600001"),
            "scenario: duration_ms is 3600001, it must be between 1 and 3600000",
        ),
        (
            "zero event budget",
            edit("duration_ms = 1000", "duration_ms = 1000\nmax_events = 0"),
            "scenario: max_events is 0, it must be between 1 and 500000",
        ),
        (
            "event budget above the limit",
            edit("duration_ms = 1000", "duration_ms = 1000\nmax_events = 500001"),
            "scenario: max_events is 500001, it must be between 1 and 500000",
        ),
        (
            "no regions",
            edit("regions = [\"east\", \"west\"]", "regions = []"),
            "scenario: regions: 0 given, 1 to 8 allowed",
        ),
        (
            "too many regions",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\", \"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\"]"),
            "scenario: regions: 9 given, 1 to 8 allowed",
        ),
        (
            "too many services",
            plus(
                &(0..6)
                    .map(|i| format!("\n[[services]]\nname = \"extra{i}\"\nreplicas = [\"east\"]\n"))
                    .collect::<String>(),
            ),
            "scenario: services: 9 given, 0 to 8 allowed",
        ),
        (
            "too many client classes",
            plus(&(0..16).map(|i| no_lock_class(&format!("c{i}"), 1)).collect::<String>()),
            "scenario: client classes: 17 given, 0 to 16 allowed",
        ),
        (
            "too many client instances",
            plus(&(0..4).map(|i| no_lock_class(&format!("c{i}"), 64)).collect::<String>()),
            "scenario: 258 client instances in all, more than the limit of 256",
        ),
        (
            "no replicas",
            edit("replicas = [\"west\"]", "replicas = []"),
            "service \"s2\": replicas: 0 given, 1 to 9 allowed",
        ),
        (
            "too many replicas",
            edit("replicas = [\"west\"]", &format!("replicas = [{}]", ["\"west\""; 10].join(", "))),
            "service \"s2\": replicas: 10 given, 1 to 9 allowed",
        ),
        (
            "zero lease",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\nlease_ms = 0"),
            "service \"s2\": lease_ms must be at least 1 (leave it out for no lease)",
        ),
        (
            "lease above the limit",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\nlease_ms = 3600001"),
            "service \"s2\": lease_ms is 3600001, more than the limit of 3600000 ms",
        ),
        (
            "first token above the limit",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\nfirst_token = 1099511627777"),
            "service \"s2\": first_token must be at most 1099511627776",
        ),
        (
            "outage above the limit",
            edit("replicas = [\"west\"]", "replicas = [\"west\"]\noutages = [{ start_ms = 10, duration_ms = 4000000 }]"),
            "service \"s2\": outage duration_ms is 4000000, more than the limit of 3600000 ms",
        ),
        (
            "initial above the limit",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\ninitial = 1000000000000001"),
            "resource \"orders\": initial is 1000000000000001, it must be between -1000000000000000 and 1000000000000000",
        ),
        (
            "initial below the limit",
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\ninitial = -9223372036854775808"),
            "resource \"orders\": initial is -9223372036854775808, it must be between -1000000000000000 and 1000000000000000",
        ),
        (
            "no rows",
            edit("rows = [\"total\", \"count\"]", "rows = []"),
            "resource \"orders\": rows: 0 given, 1 to 32 allowed",
        ),
        (
            "too many rows",
            edit("rows = [\"total\", \"count\"]", &many_rows),
            "resource \"orders\": rows: 65 given, 1 to 32 allowed",
        ),
        (
            "zero clients in a class",
            edit("count = 2", "count = 0"),
            "client \"batch\": count is 0, it must be between 1 and 64",
        ),
        (
            "too many clients in a class",
            edit("count = 2", "count = 65"),
            "client \"batch\": count is 65, it must be between 1 and 64",
        ),
        (
            "work above the limit",
            edit("work_ms = 10", "work_ms = 3600001"),
            "client \"batch\": work_ms is 3600001, more than the limit of 3600000 ms",
        ),
        (
            "no time per operation",
            edit("period_ms = 10\nwork_ms = 10", "period_ms = 0\nwork_ms = 0"),
            "client \"batch\": period_ms and work_ms cannot both be 0: operations would take no time at all",
        ),
        (
            "zero acquire timeout",
            plus("acquire_timeout_ms = 0\n"),
            "client \"batch\": acquire_timeout_ms must be at least 1 (leave it out to wait forever)",
        ),
        (
            "too many retries",
            plus("max_retries = 1001\n"),
            "client \"batch\": max_retries must be at most 1000",
        ),
        (
            "network latency above the limit",
            edit("regions = [\"east\", \"west\"]", "regions = [\"east\", \"west\"]\nnetwork = { remote_latency_ms = 3600001 }"),
            "network: remote_latency_ms is 3600001, more than the limit of 3600000 ms",
        ),
        // Faults.
        (
            "partition with one group",
            plus("\n[[partitions]]\nstart_ms = 100\nduration_ms = 100\ngroups = [[\"east\", \"west\"]]\n"),
            "partition 1: a partition needs at least two groups of regions",
        ),
        (
            "partition of a missing region",
            plus("\n[[partitions]]\nstart_ms = 100\nduration_ms = 100\ngroups = [[\"east\"], [\"north\"]]\n"),
            "partition 1: region \"north\" does not exist",
        ),
        (
            "region in two groups",
            plus("\n[[partitions]]\nstart_ms = 100\nduration_ms = 100\ngroups = [[\"east\"], [\"west\", \"east\"]]\n"),
            "partition 1: region \"east\" is in more than one group",
        ),
        (
            "pause naming an unknown client",
            plus("\n[[pauses]]\nclient = \"batch-3\"\nstart_ms = 100\nduration_ms = 100\n"),
            "pause 1: client \"batch-3\" is neither a client class nor an instance (instances are named like \"batch-1\")",
        ),
        (
            "pause above the limit",
            plus("\n[[pauses]]\nclient = \"batch\"\nstart_ms = 100\nduration_ms = 3600001\n"),
            "pause 1: duration_ms is 3600001, more than the limit of 3600000 ms",
        ),
        (
            "migration to a subordinate",
            plus("\n[[migrations]]\nat_ms = 100\nresource = \"orders\"\nfrom = \"s1\"\nto = \"sub\"\n"),
            "migration 1: service \"sub\" is subordinate; migrations move resources between independent services",
        ),
        (
            "migration to the same service",
            plus("\n[[migrations]]\nat_ms = 100\nresource = \"orders\"\nfrom = \"s1\"\nto = \"s1\"\n"),
            "migration 1: from and to are the same service",
        ),
        (
            "migration of a missing resource",
            plus("\n[[migrations]]\nat_ms = 100\nresource = \"payments\"\nfrom = \"s1\"\nto = \"s2\"\n"),
            "migration 1: resource \"payments\" does not exist",
        ),
        (
            "migration to a missing service",
            plus("\n[[migrations]]\nat_ms = 100\nresource = \"orders\"\nfrom = \"s1\"\nto = \"s9\"\n"),
            "migration 1: service \"s9\" does not exist",
        ),
    ];

    let mut failures = Vec::new();
    for (what, toml, expected) in &table {
        match error_of(toml) {
            None => failures.push(format!("{what}: accepted, expected {expected:?}")),
            Some(text) if !text.contains(expected) => {
                failures.push(format!("{what}:\n  expected {expected}\n  got      {text}"))
            }
            Some(_) => {}
        }
        // A problem found by validation reads the same whichever form the scenario came in.
        if let Ok(parsed) = toml::from_str::<Scenario>(toml) {
            let via_json = Scenario::from_json_str(&serde_json::to_string(&parsed).expect("json"))
                .err()
                .map(|e| e.to_string());
            if via_json != error_of(toml) {
                failures.push(format!(
                    "{what}: JSON reports {via_json:?}, TOML reports {:?}",
                    error_of(toml)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs were not reported as expected:\n\n{}",
        failures.len(),
        table.len(),
        failures.join("\n\n")
    );
}

#[test]
fn validation_reports_every_problem_in_order_with_its_location() {
    let toml = edit("duration_ms = 1000", "duration_ms = 0").replacen(
        "service = \"s1\" }",
        "service = \"s3\" }",
        1,
    ) + "\n[[pauses]]\nclient = \"nobody\"\nstart_ms = 1\nduration_ms = 1\n";
    let errors = Scenario::from_toml_str(&toml).expect_err("three problems");
    let pairs: Vec<(&str, &str)> = errors
        .0
        .iter()
        .map(|e| (e.location.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("scenario", "duration_ms is 0, it must be between 1 and 3600000"),
            (
                "client \"batch\"",
                "protocol names service \"s3\", which does not exist"
            ),
            (
                "pause 1",
                "client \"nobody\" is neither a client class nor an instance (instances are named like \"batch-1\")"
            ),
        ]
    );
    // Displayed one per line, location first.
    assert_eq!(
        errors.to_string().lines().collect::<Vec<_>>(),
        [
            "scenario: duration_ms is 0, it must be between 1 and 3600000",
            "client \"batch\": protocol names service \"s3\", which does not exist",
            "pause 1: client \"nobody\" is neither a client class nor an instance (instances are named like \"batch-1\")",
        ]
    );
}

#[test]
fn json_errors_are_located_too() {
    let json = r#"{"name": "x", "duration_ms": 100, "regions": ["here"],
 "services": [], "resources": [{"name": "t", "rows": ["x"]}], "clients": [], "colour": 1}"#;
    let errors = Scenario::from_json_str(json).expect_err("unknown field");
    assert_eq!(errors.0.len(), 1);
    assert_eq!(errors.0[0].location, "line 2, column 85");
    assert!(
        errors.0[0].message.contains("unknown field `colour`"),
        "{errors}"
    );
    let errors = Scenario::from_json_str("{\"name\": \"x\",").expect_err("truncated");
    assert!(
        errors.0[0].location.starts_with("line 1, column"),
        "{errors}"
    );
    assert!(
        errors.0[0].message.contains("EOF while parsing"),
        "{errors}"
    );
}

#[test]
fn pauses_may_name_a_class_or_an_instance() {
    for client in ["batch", "batch-1", "batch-2"] {
        let toml = plus(&format!(
            "\n[[pauses]]\nclient = \"{client}\"\nstart_ms = 1\nduration_ms = 1\n"
        ));
        Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{client}: {e}"));
    }
    for client in ["batch-0", "batch-3", "batch1", "Batch"] {
        let toml = plus(&format!(
            "\n[[pauses]]\nclient = \"{client}\"\nstart_ms = 1\nduration_ms = 1\n"
        ));
        check_error(
            &toml,
            &format!("pause 1: client \"{client}\" is neither a client class nor an instance"),
        );
    }
}

#[test]
fn huge_inputs_are_refused_not_run() {
    let max = u64::MAX.to_string();
    let cases: Vec<(String, &str)> = vec![
        (
            edit("count = 2", "count = 10000"),
            "client \"batch\": count is 10000, it must be between 1 and 64",
        ),
        (
            edit("count = 2", "count = 100000"),
            "client \"batch\": count is 100000, it must be between 1 and 64",
        ),
        (
            edit("rows = [\"total\", \"count\"]", "rows = [\"total\", \"count\"]\ninitial = 9223372036854775807"),
            "resource \"orders\": initial is 9223372036854775807, it must be between -1000000000000000 and 1000000000000000",
        ),
        (
            edit("duration_ms = 1000", &format!("duration_ms = {max}")),
            "scenario: duration_ms is 18446744073709551615, it must be between 1 and 3600000",
        ),
        (
            edit("duration_ms = 1000", &format!("duration_ms = 1000\nmax_events = {max}")),
            "max_events is 18446744073709551615",
        ),
        (
            edit("period_ms = 10", &format!("period_ms = {max}\nstart_ms = {max}\nstop_ms = {max}")),
            "client \"batch\": start_ms is 18446744073709551615, more than the limit of 3600000 ms",
        ),
        (
            edit("replicas = [\"west\"]", &format!("replicas = [\"west\"]\nfirst_token = {max}\nlease_ms = {max}")),
            "service \"s2\": first_token must be at most 1099511627776",
        ),
        (
            edit("regions = [\"east\", \"west\"]", &format!(
                "regions = [\"east\", \"west\"]\nnetwork = {{ local_latency_ms = {max}, jitter_ms = {max} }}"
            )),
            "network: jitter_ms is 18446744073709551615",
        ),
        (
            edit(
                "rows = [\"total\", \"count\"]",
                &format!(
                    "rows = [{}]",
                    (0..100_000).map(|i| format!("\"r{i}\"")).collect::<Vec<_>>().join(",")
                ),
            ),
            "resource \"orders\": rows: 100000 given, 1 to 32 allowed",
        ),
        (
            edit(
                "regions = [\"east\", \"west\"]",
                &format!(
                    "regions = [\"east\", \"west\", {}]",
                    (0..10_000).map(|i| format!("\"r{i}\"")).collect::<Vec<_>>().join(",")
                ),
            ),
            "scenario: regions: 10002 given, 1 to 8 allowed",
        ),
        (
            edit("name = \"s2\"", &format!("name = \"{}\"", "x".repeat(100_000))),
            "names must have 1 to 40 characters, not 100000",
        ),
        (
            plus(&format!(
                "\n[[partitions]]\nstart_ms = {max}\nduration_ms = {max}\ngroups = [[\"east\"], [\"west\"]]\n\n[[pauses]]\nclient = \"batch\"\nstart_ms = {max}\nduration_ms = {max}\n\n[[migrations]]\nat_ms = {max}\nresource = \"orders\"\nfrom = \"s1\"\nto = \"s2\"\n"
            )),
            "migration 1: at_ms is 18446744073709551615, more than the limit of 3600000 ms",
        ),
    ];
    for (toml, expected) in &cases {
        let outcome = std::panic::catch_unwind(|| error_of(toml));
        match outcome {
            Err(_) => panic!("parsing panicked instead of reporting {expected:?}"),
            Ok(None) => panic!("accepted, but expected {expected:?}"),
            Ok(Some(text)) => assert!(
                text.contains(expected),
                "expected {expected:?}, got:\n{}",
                text.chars().take(2000).collect::<String>()
            ),
        }
    }
}

#[test]
fn instances_are_named_after_their_class() {
    let s = Scenario::from_toml_str(&plus(
        "\n[[clients]]\nname = \"online\"\nregion = \"west\"\nprotocol = { kind = \"no_lock\" }\nresource = \"orders\"\nperiod_ms = 5\nwork_ms = 5\n",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.client_instance_names(),
        ["batch-1", "batch-2", "online-1"]
    );
}

/// A file of tests/it/regressions, as bytes, with its path for messages.
fn regression(name: &str) -> (String, Vec<u8>) {
    let path = manifest_path("tests/it/regressions").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path.display().to_string(), bytes)
}

/// Every error of `result`, as (location, message) pairs.
fn pairs(result: Result<Scenario, lockstep::ScenarioErrors>) -> Vec<(String, String)> {
    match result {
        Ok(_) => Vec::new(),
        Err(errors) => errors
            .0
            .into_iter()
            .map(|e| (e.location, e.message))
            .collect(),
    }
}

fn pair(location: &str, message: &str) -> (String, String) {
    (location.to_string(), message.to_string())
}

#[test]
fn row_values_are_bounded_so_that_no_run_wraps() {
    // At either bound, every row ends exactly at its initial value plus its accepted writes.
    for initial in [limits::INITIAL_ABS_MAX, -limits::INITIAL_ABS_MAX] {
        let toml = edit(
            "rows = [\"total\", \"count\"]",
            &format!("rows = [\"total\", \"count\"]\ninitial = {initial}"),
        );
        let s = Scenario::from_toml_str(&toml).unwrap_or_else(|e| panic!("{initial}: {e}"));
        let (_, v) = crate::check(&s, 1);
        assert!(v.accepted_writes > 0, "{}", v.summary());
        assert_eq!(v.integrity, lockstep::Integrity::Intact, "{}", v.summary());
        for report in &v.resources {
            for (row, value) in &report.rows {
                let writes = i64::try_from(report.increments[row]).expect("few writes");
                assert_eq!(*value, initial + writes, "row {row} starting at {initial}");
            }
        }
    }
    // The value that two writes used to wrap is refused, at the resource that has it.
    let (path, bytes) = regression("invalid-initial-overflow.toml");
    assert_eq!(
        pairs(Scenario::from_toml_bytes(&bytes)),
        [pair(
            "resource \"r\"",
            "initial is 9223372036854775807, it must be between -1000000000000000 and 1000000000000000"
        )],
        "{path}"
    );
}

#[test]
fn the_schema_states_the_bounds_of_every_number() {
    let schema: serde_json::Value =
        serde_json::from_str(&Scenario::json_schema()).expect("the schema is JSON");
    // Every object of the format: the top level and each definition.
    let mut objects = vec![("Scenario".to_string(), &schema)];
    for (name, def) in schema["$defs"].as_object().expect("definitions") {
        objects.push((name.clone(), def));
        for variant in def["oneOf"].as_array().into_iter().flatten() {
            objects.push((name.clone(), variant));
        }
    }
    let mut unbounded = Vec::new();
    for (object, def) in &objects {
        for (field, property) in def["properties"].as_object().into_iter().flatten() {
            let integer = property["type"] == "integer"
                || property["type"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|x| x == "integer"));
            if integer && property.get("maximum").is_none() {
                unbounded.push(format!("{object}.{field}"));
            }
        }
    }
    unbounded.sort();
    // The seed only selects random streams, and `max_operations` is only compared with a
    // count: no arithmetic is done with either, so any value of their types is safe.
    assert_eq!(
        unbounded,
        ["ClientClass.max_operations", "Scenario.seed"],
        "every number the engine computes with must be bounded in the schema as in validation"
    );
    let property = |object: &str, field: &str| -> serde_json::Value {
        let def = if object == "Scenario" {
            &schema
        } else {
            &schema["$defs"][object]
        };
        def["properties"][field].clone()
    };
    let initial = property("Resource", "initial");
    assert_eq!(initial["minimum"], -limits::INITIAL_ABS_MAX);
    assert_eq!(initial["maximum"], limits::INITIAL_ABS_MAX);
    assert_eq!(
        property("Scenario", "duration_ms")["maximum"],
        limits::DURATION_MS_MAX
    );
    assert_eq!(
        property("Scenario", "max_events")["maximum"],
        limits::EVENTS_MAX
    );
    assert_eq!(
        property("Service", "first_token")["maximum"],
        limits::FIRST_TOKEN_MAX
    );
    assert_eq!(
        property("ClientClass", "count")["maximum"],
        limits::CLIENTS_PER_CLASS_MAX
    );
    assert_eq!(
        property("Window", "duration_ms")["maximum"],
        limits::SPAN_MS_MAX
    );
    assert_eq!(property("Resource", "rows")["maxItems"], limits::ROWS_MAX);
}

#[test]
fn an_out_of_range_count_is_reported_once() {
    // The regression: a class over its limit, and a pause naming an instance of another class.
    let (path, bytes) = regression("invalid-count-cascade.toml");
    assert_eq!(
        pairs(Scenario::from_toml_bytes(&bytes)),
        [pair(
            "client \"big\"",
            "count is 65, it must be between 1 and 64"
        )],
        "{path}"
    );
    // A pause may name any instance the class has with its count as written: the count is the
    // one problem, whatever it is, and it does not also make the total too large.
    for (count, client) in [
        (65, "batch-65"),
        (100_000, "batch-70000"),
        (0, "batch-1"),
        (0, "batch"),
    ] {
        let toml = edit("count = 2", &format!("count = {count}"))
            + &format!("\n[[pauses]]\nclient = \"{client}\"\nstart_ms = 1\nduration_ms = 1\n");
        assert_eq!(
            pairs(Scenario::from_toml_str(&toml)),
            [pair(
                "client \"batch\"",
                &format!("count is {count}, it must be between 1 and 64")
            )],
            "count {count}, a pause of {client}"
        );
    }
    // A pause of an instance beyond even that count, or misspelt, is a second, real problem.
    for client in ["batch-66", "batch-065"] {
        let toml = edit("count = 2", "count = 65")
            + &format!("\n[[pauses]]\nclient = \"{client}\"\nstart_ms = 1\nduration_ms = 1\n");
        assert_eq!(
            pairs(Scenario::from_toml_str(&toml)),
            [
                pair("client \"batch\"", "count is 65, it must be between 1 and 64"),
                pair(
                    "pause 1",
                    &format!("client \"{client}\" is neither a client class nor an instance (instances are named like \"batch-1\")")
                ),
            ]
        );
    }
}

#[test]
fn every_parse_error_has_a_line_and_a_column() {
    let deep_key_message = "recursion limit: a dotted key or table header has too many parts";
    // The regression: a dotted key too deep for toml, which toml reports without a position.
    let (path, bytes) = regression("invalid-deep-dotted-key.toml");
    assert_eq!(
        pairs(Scenario::from_toml_bytes(&bytes)),
        [pair("line 5, column 1", deep_key_message)],
        "{path}"
    );
    // The same in table headers and inline tables, after valid lines and before more.
    let deep = ["a"; 100].join(".");
    let base_lines = BASE.lines().count();
    for (toml, location) in [
        (
            format!("{BASE}\n  [{deep}]\nx = 1\n"),
            format!("line {}, column 4", base_lines + 2),
        ),
        (
            format!("{BASE}[[{deep}]]\n"),
            format!("line {}, column 3", base_lines + 1),
        ),
        (
            format!("x = {{ {deep} = 1 }}\n{BASE}"),
            "line 1, column 1".into(),
        ),
    ] {
        assert_eq!(
            pairs(Scenario::from_toml_str(&toml)),
            [pair(&location, deep_key_message)],
            "{}",
            toml.chars().take(300).collect::<String>()
        );
    }
    // Values nested too deep are located by the parsers themselves.
    let nested = format!("a = {}{}\n", "[".repeat(200), "]".repeat(200));
    let errors = pairs(Scenario::from_toml_str(&nested));
    assert!(errors[0].0.starts_with("line 1, column "), "{errors:?}");
    let errors = pairs(Scenario::from_json_str(&"[".repeat(200)));
    assert!(errors[0].0.starts_with("line 1, column "), "{errors:?}");

    // Text that is not UTF-8: the offset of the first invalid byte, and its line and column.
    let not_utf8 = "byte 10 (counting from 0) is not valid UTF-8; a scenario must be UTF-8 text";
    assert_eq!(
        pairs(Scenario::from_toml_bytes(b"name = \"ab\xffc\"\n")),
        [pair("line 1, column 11", not_utf8)]
    );
    assert_eq!(
        pairs(Scenario::from_json_bytes(b"{\"name\": \"\xe9\"}")),
        [pair(
            "line 1, column 11",
            "byte 10 (counting from 0) is not valid UTF-8; a scenario must be UTF-8 text"
        )]
    );
    // A character cut short on the third line, after a character of two bytes on the first.
    assert_eq!(
        pairs(Scenario::from_toml_bytes(
            b"# \xc3\xa9\nname = \"x\"\nx = \xc3("
        )),
        [pair(
            "line 3, column 5",
            "byte 20 (counting from 0) is not valid UTF-8; a scenario must be UTF-8 text"
        )]
    );

    // Whatever the text, every error is located: every truncation of a valid scenario, and
    // the same scenario with a stray character at every position.
    let mut texts: Vec<String> = (0..=BASE.len()).map(|n| BASE[..n].to_string()).collect();
    for n in (0..BASE.len()).step_by(3) {
        for stray in ["\"", "[", "=", "."] {
            texts.push(format!("{}{stray}{}", &BASE[..n], &BASE[n..]));
        }
    }
    for text in &texts {
        for (location, message) in pairs(Scenario::from_toml_str(text)) {
            assert!(
                !location.is_empty(),
                "`{message}` has no location, for\n{text}"
            );
        }
    }
}

#[test]
fn the_worst_case_scenarios_stay_valid() {
    // Valid scenarios of the largest cost found so far, kept for benchmarks. They must keep
    // validating; running them here would take minutes, so they are only read.
    let dir = manifest_path("tests/it/regressions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the regressions directory exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.starts_with("worst-") && n.ends_with(".toml"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    for name in &names {
        let (path, bytes) = regression(name);
        let s = Scenario::from_toml_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            String::from_utf8_lossy(&bytes).starts_with("# "),
            "{path} says what shape it exercises in its first lines"
        );
        // Each of them has as many clients as the limits allow.
        assert_eq!(
            s.client_instance_names().len(),
            limits::CLIENTS_MAX as usize,
            "{path}"
        );
    }
    // The one with every list at its bound keeps every list at its bound.
    let (path, bytes) = regression("worst-W4-everything-at-bounds.toml");
    let s = Scenario::from_toml_bytes(&bytes).expect("valid");
    assert_eq!(s.regions.len(), limits::REGIONS_MAX, "{path}");
    assert_eq!(s.services.len(), limits::SERVICES_MAX, "{path}");
    assert_eq!(s.resources.len(), limits::RESOURCES_MAX, "{path}");
    assert_eq!(s.clients.len(), limits::CLASSES_MAX, "{path}");
    assert_eq!(s.partitions.len(), limits::WINDOWS_MAX, "{path}");
    assert_eq!(s.pauses.len(), limits::WINDOWS_MAX, "{path}");
    assert_eq!(s.migrations.len(), limits::MIGRATIONS_MAX, "{path}");
    assert_eq!(s.max_events, Some(limits::EVENTS_MAX), "{path}");
    for svc in &s.services {
        assert_eq!(svc.replicas.len(), limits::REPLICAS_MAX, "{path}");
        assert_eq!(svc.outages.len(), limits::WINDOWS_MAX, "{path}");
    }
    for r in &s.resources {
        assert_eq!(r.rows.len(), limits::ROWS_MAX, "{path}");
    }
}

/// A protocol's fields may come in any order in JSON, `kind` last included; a field given
/// twice is refused, as TOML refuses it.
#[test]
fn a_protocol_reads_the_same_whatever_the_order_of_its_json_fields() {
    let s = Scenario::from_toml_str(lockstep::ui::BLANK_TOML).expect("valid");
    let json = s.to_json_string();
    let shipped = r#""protocol":{"kind":"single","service":"locks"}"#;
    assert!(json.contains(shipped), "{json}");
    let reordered = json.replace(shipped, r#""protocol":{"service":"locks","kind":"single"}"#);
    assert_eq!(Scenario::from_json_str(&reordered).expect("reads"), s);
    let twice = json.replace(
        shipped,
        r#""protocol":{"kind":"single","service":"locks","service":"other"}"#,
    );
    let errors = Scenario::from_json_str(&twice).unwrap_err();
    assert!(
        errors.to_string().contains("duplicate field `service`"),
        "{errors}"
    );
    // Any number of unknown fields: the first is the one named, wherever the kind comes.
    let many: String = (0..5000).map(|i| format!(r#""x{i}":{i},"#)).collect();
    let unknown = json.replace(
        shipped,
        &format!(r#""protocol":{{"service":"locks",{many}"kind":"single"}}"#),
    );
    let errors = Scenario::from_json_str(&unknown).unwrap_err();
    assert!(
        errors
            .to_string()
            .contains("unknown field `x0`, expected `service`"),
        "{errors}"
    );
}

#[test]
fn a_text_over_a_mebibyte_is_refused_where_it_passes_the_limit() {
    // A valid scenario followed by a comment that takes it past 1 MiB: refused in both formats
    // at the line and column of its 1,048,577th byte, before any parsing, wherever the text
    // comes from (an edit, a file, an import or a link all read it with these functions).
    let limit = lockstep::scenario::limits::TEXT_BYTES_MAX;
    let toml = format!("{MINIMAL}\n# {}\n", "x".repeat(limit));
    let errors = Scenario::from_toml_str(&toml).expect_err("too long").0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    let lines = MINIMAL.matches('\n').count() + 2;
    let column = limit - (MINIMAL.len() + 1) + 1;
    assert_eq!(errors[0].location, format!("line {lines}, column {column}"));
    assert!(
        errors[0]
            .message
            .starts_with(&format!("the text is {} bytes;", toml.len())),
        "{errors:?}"
    );
    let json = format!("{{}}{}", " ".repeat(limit - 1));
    let errors = Scenario::from_json_str(&json).expect_err("too long").0;
    assert_eq!(errors[0].location, format!("line 1, column {}", limit + 1));
    // Exactly at the limit, the text is read (and here refused for what it says, not its size).
    let at_limit = format!("{{}}{}", " ".repeat(limit - 2));
    let errors = Scenario::from_json_str(&at_limit).expect_err("no fields").0;
    assert!(!errors[0].message.starts_with("the text is"), "{errors:?}");
}

/// The JSON reader is written by hand (the page's bundles would otherwise carry serde's derived
/// reader for JSON as well as the one for TOML). Over every shipped scenario, generated ones and
/// thousands of one-change mutations of them (a member removed, an unknown one added, a value of
/// another type, range or word, a member named twice), it reads what serde's derived reader
/// reads, refuses what it refuses with the same words, and places the problem where serde_json
/// would.
#[test]
fn the_json_reader_reads_as_the_derived_reader_does() {
    use rand::SeedableRng;
    use serde_json::{json, Value};

    /// Every place in a value: the steps to it.
    fn places(v: &Value, at: &mut Vec<Vec<Value>>, here: Vec<Value>) {
        at.push(here.clone());
        match v {
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                let mut next = here.clone();
                next.push(json!(k));
                places(x, at, next);
            }),
            Value::Array(items) => items.iter().enumerate().for_each(|(i, x)| {
                let mut next = here.clone();
                next.push(json!(i));
                places(x, at, next);
            }),
            _ => {}
        }
    }
    fn get<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
        path.iter().fold(v, |v, step| match step {
            Value::String(k) => &mut v[k.as_str()],
            _ => &mut v[step.as_u64().unwrap() as usize],
        })
    }
    let derived = |text: &str| -> Result<Scenario, String> {
        let s: Scenario = serde_json::from_str(text).map_err(|e| {
            let m = e.to_string();
            let m = m
                .rfind(" at line ")
                .map_or(m.clone(), |i| m[..i].to_string());
            format!(
                "line {}, column {}: {m}",
                e.line().max(1),
                e.column().max(1)
            )
        })?;
        s.validate().map_err(|e| e.to_string())?;
        Ok(s)
    };
    let by_hand = |text: &str| Scenario::from_json_str(text).map_err(|e| e.to_string());

    let mut bases: Vec<Value> = lockstep::builtin::ALL
        .iter()
        .map(|b| serde_json::from_str(b.json).unwrap())
        .collect();
    for seed in 0..60u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let scenario = lockstep::testgen::Gen {
            rng: &mut rng,
            bad: if seed % 3 == 0 { 0.1 } else { 0.0 },
            heavy: false,
            small: seed % 2 == 0,
        }
        .scenario(None);
        bases.push(serde_json::to_value(&scenario).unwrap());
    }
    let replacements = [
        json!(null),
        json!(true),
        json!(-5),
        json!(5_000_000_000u64),
        json!(1.5),
        json!("1s"),
        json!("any_source"),
        json!("single"),
        json!([]),
        json!(["east"]),
        json!({}),
        json!({"kind": "no_lock"}),
    ];
    let (mut compared, mut refused) = (0, 0);
    for (b, base) in bases.iter().enumerate() {
        let text = base.to_string();
        assert_eq!(by_hand(&text), derived(&text), "base {b}");
        let mut at = Vec::new();
        places(base, &mut at, Vec::new());
        let mut rng = crate::Draw(1000 + b as u64);
        for _ in 0..400 {
            let path = &at[rng.below(at.len() as u64) as usize];
            let mut positional = false;
            let mut v = base.clone();
            let text = match rng.below(4) {
                0 if !path.is_empty() => {
                    let (last, parent) = path.split_last().unwrap();
                    match (get(&mut v, parent), last) {
                        (Value::Object(m), Value::String(k)) => drop(m.remove(k.as_str())),
                        (Value::Array(items), i) => {
                            drop(items.remove(i.as_u64().unwrap() as usize))
                        }
                        _ => {}
                    }
                    v.to_string()
                }
                1 => {
                    if let Value::Object(m) = get(&mut v, path) {
                        m.insert("colour".into(), json!(1));
                    }
                    v.to_string()
                }
                2 => {
                    // A member named twice: JSON's text can say it, a parsed value cannot.
                    let text = v.to_string();
                    match text.find("\"name\":") {
                        Some(i) => format!("{}\"name\":\"twice\",{}", &text[..i], &text[i..]),
                        None => text,
                    }
                }
                _ => {
                    let new = &replacements[rng.below(replacements.len() as u64) as usize];
                    let place = get(&mut v, path);
                    // A list where the format has an object: serde's derived reader reads it as
                    // the object's values in order, which no scenario is written as and the
                    // hand-written reader refuses. Both refuse it here, in other words.
                    positional = place.is_object() && new.as_array().is_some_and(|l| !l.is_empty());
                    *place = new.clone();
                    v.to_string()
                }
            };
            let (hand, want) = (by_hand(&text), derived(&text));
            if positional && want.is_err() {
                assert!(hand.is_err(), "base {b}, {path:?}: {text}");
                continue;
            }
            assert_eq!(hand, want, "base {b}, {path:?}: {text}");
            compared += 1;
            refused += usize::from(want.is_err());
        }
    }
    // An object of very many names (here 60,000 in half a megabyte) is read in n log n steps:
    // a name named twice is found among them, and otherwise the first unknown one is named.
    let many: String = (0..60_000).map(|i| format!(r#""k{i}":0,"#)).collect();
    let text = format!(r#"{{{many}"k7":1}}"#);
    assert!(by_hand(&text).unwrap_err().contains("duplicate field `k7`"));
    let text = format!(r#"{{{many}"name":"x"}}"#);
    assert!(by_hand(&text).unwrap_err().contains("unknown field `k0`"));
    // The mutations meet both outcomes often.
    assert!(
        refused > compared / 4 && refused < compared * 9 / 10,
        "{refused} of {compared}"
    );
}

/// A scenario's lists are checked for repeated names before their lengths are known to be
/// within the limits. A list far longer than any limit allows (here 100,000 regions in under a
/// mebibyte, the last named twice) is refused for its length and not searched for repeats
/// (which a set of names, a sorted vector, would take the square of its length to do); a
/// repeat in a list of any allowed length is still named. So is a member named twice in an
/// object of 90,000 members, found with one sort.
#[test]
fn very_many_names_are_refused_for_their_number_without_a_square_search() {
    let regions: Vec<String> = (0..100_000).rev().map(|i| format!("\"r{i}\"")).collect();
    let text = format!(
        r#"{{"name":"x","duration_ms":1000,"regions":[{},"r7"],"services":[],"resources":[],"clients":[]}}"#,
        regions.join(",")
    );
    assert!(text.len() < lockstep::scenario::limits::TEXT_BYTES_MAX);
    let errors = Scenario::from_json_str(&text)
        .expect_err("too many regions")
        .to_string();
    assert!(errors.contains("regions"), "{errors}");
    assert!(!errors.contains("more than one region"), "{errors}");
    let twice = r#"{"name":"x","duration_ms":1000,"regions":["a","b","a"],"services":[],"resources":[],"clients":[]}"#;
    let errors = Scenario::from_json_str(twice)
        .expect_err("a repeat")
        .to_string();
    assert!(
        errors.contains("more than one region named \"a\""),
        "{errors}"
    );
    let members: String = (0..90_000).rev().map(|i| format!(r#""k{i}":0,"#)).collect();
    let errors = Scenario::from_json_str(&format!(r#"{{{members}"k89999":1}}"#)).unwrap_err();
    assert!(
        errors.to_string().contains("duplicate field `k89999`"),
        "{errors}"
    );
}

/// Every name a scenario refers to (a region, service, resource or row) is looked up in an
/// index of its list made with one sort, so a text far past the limits whose every entry refers
/// to a long list is checked in n log n steps: here 40,000 regions named again in a partition's
/// groups, and 40,000 rows named again in a resource's partition. Each is refused for its
/// length, and a reference to a name the list lacks is still found.
#[test]
fn references_in_a_text_far_past_the_limits_are_looked_up_in_an_index() {
    let names: Vec<String> = (0..40_000).map(|i| format!("\"s{i}\"")).collect();
    let names = names.join(",");
    let cases = [
        (
            format!(
                r#"{{"name":"x","duration_ms":1000,"regions":[{names}],"partitions":[{{"start_ms":0,"duration_ms":10,"groups":[[{names}],[{names},"nowhere"]]}}],"services":[],"resources":[],"clients":[]}}"#
            ),
            [
                "regions: 40000 given, 1 to 8 allowed",
                "region \"nowhere\" does not exist",
            ],
        ),
        (
            format!(
                r#"{{"name":"x","duration_ms":1000,"regions":["a"],"services":[{{"name":"s","replicas":["a"],"protects":["r"]}}],"resources":[{{"name":"r","rows":[{names}],"partition":[{{"service":"s","rows":[{names},"nope"]}}]}}],"clients":[]}}"#
            ),
            [
                "rows: 40000 given, 1 to 32 allowed",
                "partition names row \"nope\", which does not exist",
            ],
        ),
    ];
    for (text, wanted) in cases {
        let errors = Scenario::from_json_str(&text).unwrap_err().to_string();
        for w in wanted {
            assert!(errors.contains(w), "{w}: {errors}");
        }
    }
}
