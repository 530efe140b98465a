//! The mechanisms the claims rest on, each in a small scenario written for it: how a message
//! crosses a partition, what a migrated service answers, how a subordinate orders requests,
//! how a client handles late, refused and moved answers, and when a lease-aware client lets go.
//!
//! Each test states what a user would see in the trace (`lockstep run` prints the same lines)
//! or in the verdict, so that removing the mechanism makes the test fail.

use lockstep::model::State;
use lockstep::monitor;
use lockstep::world::{Micros, World};
use lockstep::{Exclusion, Run, Scenario, Verdict};

use crate::check;

/// Parses and runs a scenario with its own seed, checking every service's log on the way.
fn run(toml: &str) -> (Run, Verdict) {
    let s = Scenario::from_toml_str(toml).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    check(&s, s.seed)
}

/// The trace as (time, words): the lines `lockstep run` prints, without the padding.
fn said(run: &Run) -> Vec<(Micros, String)> {
    run.events
        .iter()
        .map(|e| (e.at, e.describe(&run.world)))
        .collect()
}

/// The trace lines that contain `needle`.
fn lines_with(run: &Run, needle: &str) -> Vec<(Micros, String)> {
    said(run)
        .into_iter()
        .filter(|(_, line)| line.contains(needle))
        .collect()
}

/// One service's own log: the lines it wrote, numbered by its own instants.
fn service_log(run: &Run, service: &str) -> Vec<String> {
    let head = format!("{service}#");
    said(run)
        .into_iter()
        .filter(|(_, line)| line.starts_with(&head))
        .map(|(_, line)| line)
        .collect()
}

fn count(run: &Run, needle: &str) -> usize {
    lines_with(run, needle).len()
}

/// When the first line containing `needle` happened.
fn first(run: &Run, needle: &str) -> Micros {
    lines_with(run, needle)
        .first()
        .unwrap_or_else(|| panic!("no line contains {needle:?}:\n{}", text(run)))
        .0
}

/// The whole trace, for failure messages.
fn text(run: &Run) -> String {
    lockstep::trace::render(&run.world, &run.events)
}

// ----- The network -------------------------------------------------------------------------

#[test]
fn a_message_held_back_by_a_delay_partition_arrives_after_the_heal_plus_its_latency() {
    // The client asks at 200 ms, while a delay partition (100 ms to 1000 ms) separates it from
    // the service's only replica, 30 ms away. The request waits for the heal, then travels: it
    // arrives between 1030 ms and 1030 ms plus the 2 ms of jitter.
    let (run, _) = run(r#"
        name = "delayed request"
        duration_ms = 3000
        regions = ["near", "far"]
        network = { remote_latency_ms = 30, jitter_ms = 2 }
        services = [{ name = "locks", replicas = ["far"] }]
        resources = [{ name = "t", region = "near", rows = ["n"] }]
        partitions = [{ start_ms = 100, duration_ms = 900, groups = [["near"], ["far"]], mode = "delay" }]
        [[clients]]
        name = "c"
        region = "near"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        start_ms = 200
        period_ms = 100
        work_ms = 10
        max_operations = 1
    "#);
    let granted = first(&run, "grant t to c-1");
    assert!(
        (1_030_000..=1_032_000).contains(&granted),
        "granted at {granted} us:\n{}",
        text(&run)
    );
    // This seed draws some jitter, so the arrival is strictly after heal plus latency.
    assert!(granted > 1_030_000);
    assert_eq!(count(&run, "lost"), 0);
}

#[test]
fn a_request_needs_a_majority_and_waits_for_the_replicas_that_heal_first() {
    // Three replicas in x, y and z; the client is in c and asks at 200 ms. Replica z is 1 ms
    // away and never cut off; x (900 ms away) and y are behind partitions from 100 ms. Two
    // replicas make a majority, so the request arrives when the second replica has it: z, and
    // whichever of x and y has it first once its partition heals. A dropped path never counts.
    struct Case {
        x_mode: &'static str,
        x_heals_ms: u64,
        y_heals_ms: u64,
        y_latency_ms: u64,
        arrives_ms: u64,
    }
    let cases = [
        // x: 1000 + 900 = 1900; y: 1800 + 200 = 2000.
        Case {
            x_mode: "delay",
            x_heals_ms: 1000,
            y_heals_ms: 1800,
            y_latency_ms: 200,
            arrives_ms: 1900,
        },
        // x: 1000 + 900 = 1900; y: 1500 + 100 = 1600.
        Case {
            x_mode: "delay",
            x_heals_ms: 1000,
            y_heals_ms: 1500,
            y_latency_ms: 100,
            arrives_ms: 1600,
        },
        // x is dropped; y: 1000 + 200 = 1200.
        Case {
            x_mode: "drop",
            x_heals_ms: 2100,
            y_heals_ms: 1000,
            y_latency_ms: 200,
            arrives_ms: 1200,
        },
    ];
    for case in cases {
        let toml = format!(
            r#"
            name = "majority behind partitions"
            duration_ms = 3000
            regions = ["c", "x", "y", "z"]
            network = {{ jitter_ms = 0, links = [{{ between = ["c", "x"], latency_ms = 900 }}, {{ between = ["c", "y"], latency_ms = {} }}, {{ between = ["c", "z"], latency_ms = 1 }}] }}
            services = [{{ name = "locks", replicas = ["x", "y", "z"] }}]
            resources = [{{ name = "t", region = "c", rows = ["n"] }}]
            partitions = [
                {{ start_ms = 100, duration_ms = {}, groups = [["c"], ["x"]], mode = "{}" }},
                {{ start_ms = 100, duration_ms = {}, groups = [["c"], ["y"]], mode = "delay" }},
            ]
            [[clients]]
            name = "c"
            region = "c"
            protocol = {{ kind = "single", service = "locks" }}
            resource = "t"
            start_ms = 200
            period_ms = 100
            work_ms = 10
            max_operations = 1
            "#,
            case.y_latency_ms,
            case.x_heals_ms - 100,
            case.x_mode,
            case.y_heals_ms - 100
        );
        let (run, _) = run(&toml);
        assert_eq!(
            first(&run, "grant t to c-1"),
            case.arrives_ms * 1000,
            "x {} until {} ms, y until {} ms:\n{}",
            case.x_mode,
            case.x_heals_ms,
            case.y_heals_ms,
            text(&run)
        );
        assert_eq!(count(&run, "c-1 -> service locks lost"), 0);
    }
}

#[test]
fn a_request_arrives_when_the_majority_th_replica_has_it_whatever_order_the_paths_heal_in() {
    // The client in c asks at 200 ms, while every path to the service's replicas is held back
    // by a delay partition from 100 ms. Replica k is 10 * (k + 1) ms away, and its path heals
    // at the time the case gives. Each replica has the request at its heal plus its latency,
    // and the request arrives when a majority has it: at the majority-th earliest of those
    // times, however the heals are ordered against the latencies (the nearest replica healing
    // last, the farthest first, or anything between).
    let cases: [&[u64]; 10] = [
        &[1000, 1500, 2000],
        &[1000, 2000, 1500],
        &[1500, 1000, 2000],
        &[1500, 2000, 1000],
        &[2000, 1000, 1500],
        &[2000, 1500, 1000],
        &[3000, 2500, 2000, 1500, 1000],
        &[3000, 1000, 2500, 1500, 2000],
        &[1000, 3000, 2000, 2500, 1500],
        &[2000, 2500, 3000, 1000, 1500],
    ];
    for heals in cases {
        let regions: Vec<String> = (0..heals.len()).map(|k| format!("r{k}")).collect();
        let quoted = |names: &[String]| {
            names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let links = regions
            .iter()
            .enumerate()
            .map(|(k, r)| {
                format!(
                    "{{ between = [\"c\", \"{r}\"], latency_ms = {} }}",
                    10 * (k + 1)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let partitions = regions
            .iter()
            .zip(heals)
            .map(|(r, heal)| {
                format!(
                    "{{ start_ms = 100, duration_ms = {}, groups = [[\"c\"], [\"{r}\"]], mode = \"delay\" }}",
                    heal - 100
                )
            })
            .collect::<Vec<_>>()
            .join(",\n");
        let toml = format!(
            r#"
            name = "majority behind paths that heal in turn"
            duration_ms = 5000
            regions = ["c", {regions}]
            network = {{ jitter_ms = 0, links = [{links}] }}
            services = [{{ name = "locks", replicas = [{regions}] }}]
            resources = [{{ name = "t", region = "c", rows = ["n"] }}]
            partitions = [{partitions}]
            [[clients]]
            name = "c"
            region = "c"
            protocol = {{ kind = "single", service = "locks" }}
            resource = "t"
            start_ms = 200
            period_ms = 100
            work_ms = 10
            max_operations = 1
            "#,
            regions = quoted(&regions),
        );
        let mut has: Vec<u64> = heals
            .iter()
            .enumerate()
            .map(|(k, heal)| heal + 10 * (k as u64 + 1))
            .collect();
        has.sort();
        let majority = heals.len() / 2 + 1;
        let (run, _) = run(&toml);
        assert_eq!(
            first(&run, "grant t to c-1"),
            has[majority - 1] * 1000,
            "heals {heals:?}:\n{}",
            text(&run)
        );
    }
}

// ----- The simulator -----------------------------------------------------------------------

#[test]
fn a_run_that_uses_exactly_its_event_budget_is_complete() {
    // A run is cut short only if something was still due within its duration when the event
    // budget ran out.
    let toml = r#"
        name = "one operation"
        duration_ms = 1000
        regions = ["east"]
        services = [{ name = "locks", replicas = ["east"] }]
        resources = [{ name = "t", rows = ["n"] }]
        [[clients]]
        name = "c"
        region = "east"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 10
        work_ms = 10
        max_operations = 1
    "#;
    let mut s = Scenario::from_toml_str(toml).unwrap();
    let full = lockstep::run(&s, 0).unwrap();
    assert!(!full.truncated);
    let n = full.events.len() as u64;
    s.max_events = Some(n);
    let exact = lockstep::run(&s, 0).unwrap();
    assert!(!exact.truncated, "nothing was left to happen");
    assert_eq!(exact.end, 1_000_000);
    s.max_events = Some(n - 1);
    let short = lockstep::run(&s, 0).unwrap();
    assert!(short.truncated);
    assert_eq!(short.end, short.events.last().unwrap().at);
}

#[test]
fn pending_counts_every_enabled_step() {
    let s = crate::scenario("09");
    let world = World::compile(&s);
    let mut choices = lockstep::sim::SeededChoices::new(&world, 1);
    let mut state = State::initial(&world, &mut choices);
    let mut events = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..20 {
        assert_eq!(state.pending(), state.enabled().count());
        seen.push(state.pending());
        let Some(step) = state.pop_earliest() else {
            break;
        };
        state.apply(&world, step, &mut choices, &mut events);
    }
    // Two client arrivals and a migration to begin with; then messages come and go.
    assert_eq!(seen[0], 3);
    assert!(seen.iter().any(|n| *n != 3), "{seen:?}");
}

// ----- A subordinate -------------------------------------------------------------------------

/// The authority's lock moves at 100 ms to `spare`, whose numbers start where the authority's
/// did: both hand out 5 first. `x` holds the subordinate with the authority's 5 for a second;
/// `y` asks at 200 ms and gets the spare's 5. `spare_line` and `y_line` add a setting to the
/// spare and to `y`; `more` adds clients.
fn renumbered(name: &str, spare_line: &str, y_line: &str, more: &str) -> String {
    format!(
        r#"
        name = "{name}"
        duration_ms = 3000
        regions = ["east"]
        resources = [{{ name = "orders", rows = ["total"] }}]
        migrations = [{{ at_ms = 100, resource = "orders", from = "authority", to = "spare" }}]
        [[services]]
        name = "authority"
        replicas = ["east"]
        first_token = 5
        [[services]]
        name = "spare"
        replicas = ["east"]
        first_token = 5
        {spare_line}
        [[services]]
        name = "sub"
        replicas = ["east"]
        subordinate_to = "authority"
        first_token = 900
        [[clients]]
        name = "x"
        region = "east"
        protocol = {{ kind = "token_chain", authority = "authority", subordinate = "sub" }}
        resource = "orders"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "y"
        region = "east"
        start_ms = 200
        protocol = {{ kind = "token_chain", authority = "authority", subordinate = "sub" }}
        resource = "orders"
        period_ms = 100
        work_ms = 10
        max_operations = 1
        {y_line}
        {more}
        "#
    )
}

#[test]
fn a_subordinate_orders_requests_by_the_authority_number_alone() {
    // The subordinate compares numbers, nothing else. After the authority's lock moves to
    // another service whose numbers start where the old one's did, y presents the same number
    // x holds the subordinate with. An equal number is not stale and does not supersede: y
    // waits in line and is granted when x releases.
    let (run, v) = run(&renumbered("the same number twice", "", "", ""));
    assert_eq!(
        service_log(&run, "sub"),
        [
            "sub#1 grant orders to x-1 token 900",
            "sub#2 queue y-1 for orders behind x-1",
            "sub#3 release orders by x-1 token 900",
            "sub#4 grant orders to y-1 token 901",
            "sub#5 release orders by y-1 token 901",
        ],
        "{}",
        text(&run)
    );
    assert_eq!(v.exclusion, Exclusion::Holds);
    assert_eq!(v.operations.completed, 2);
}

#[test]
fn a_request_that_supersedes_the_holder_serves_the_queue_at_once() {
    // As above, y waits at the subordinate behind x with an equal number. Then the spare's
    // lease on y runs out and z gets the next number, 6: z supersedes x. The lock has no holder
    // now, so the subordinate must serve its queue then and there: y's 5 has become stale and
    // is refused, and z is granted. Left waiting behind y instead, z and y would wait for ever,
    // for a holder that is gone.
    let z = r#"
        [[clients]]
        name = "z"
        region = "east"
        start_ms = 300
        protocol = { kind = "token_chain", authority = "authority", subordinate = "sub" }
        resource = "orders"
        period_ms = 100
        work_ms = 10
        max_operations = 1
    "#;
    let (run, v) = run(&renumbered(
        "a superseded holder and a queue",
        "lease_ms = 300",
        "max_retries = 0",
        z,
    ));
    let log = service_log(&run, "sub");
    assert_eq!(
        log[..5],
        [
            "sub#1 grant orders to x-1 token 900",
            "sub#2 queue y-1 for orders behind x-1",
            "sub#3 supersede x-1's hold of orders token 900",
            "sub#4 refuse orders to y-1 (stale authority token)",
            "sub#5 grant orders to z-1 token 901",
        ],
        "{}",
        text(&run)
    );
    assert_eq!(
        first(&run, "sub#5 grant orders to z-1"),
        first(&run, "sub#3 supersede x-1's hold"),
        "z is granted as it supersedes x"
    );
    // y gives up; z works and finishes. x was not told it lost the lock and goes on believing
    // it holds it, so z's critical section lies inside x's: the table, unfenced, sees both.
    assert_eq!(count(&run, "y-1 gives up"), 1, "{}", text(&run));
    assert_eq!(count(&run, "z-1 HOLDS"), 1, "{}", text(&run));
    assert_eq!(v.operations.completed, 2, "{:?}", v.operations);
    assert_eq!(v.exclusion, Exclusion::Broken);
}

// ----- Migrations ----------------------------------------------------------------------------

/// The lock of `profile` moves from `old` to `new` at 400 ms, while `writer` holds it in `old`
/// for a second. `waiter` queues in `old` at 100 ms; `late` asks `old` at 399 ms, so its
/// request reaches `old` just after the move.
fn migration(mode: &str) -> String {
    format!(
        r#"
        name = "a lock moved while held"
        duration_ms = 3000
        regions = ["east"]
        resources = [{{ name = "profile", rows = ["version"] }}]
        migrations = [{{ at_ms = 400, resource = "profile", from = "old", to = "new", mode = "{mode}" }}]
        [[services]]
        name = "old"
        replicas = ["east", "east", "east"]
        [[services]]
        name = "new"
        replicas = ["east", "east", "east"]
        first_token = 100
        [[clients]]
        name = "writer"
        region = "east"
        protocol = {{ kind = "single", service = "old" }}
        resource = "profile"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "east"
        start_ms = 100
        protocol = {{ kind = "single", service = "old" }}
        resource = "profile"
        period_ms = 100
        work_ms = 100
        max_operations = 1
        [[clients]]
        name = "late"
        region = "east"
        start_ms = 399
        protocol = {{ kind = "single", service = "old" }}
        resource = "profile"
        period_ms = 100
        work_ms = 100
        max_operations = 1
        "#
    )
}

#[test]
fn a_drained_service_redirects_requests_and_the_new_one_waits_for_the_old_holder() {
    let (run, v) = run(&migration("drain"));
    // The old service hands its waiter over and refuses the request that arrives after the
    // move; both clients then ask the new service.
    assert_eq!(count(&run, "hand waiter-1 wait of profile to new"), 1);
    assert_eq!(count(&run, "refuse profile to late-1 (lock moved)"), 1);
    for client in ["waiter-1", "late-1"] {
        let asked = first(&run, &format!("{client} asks new"));
        assert!(asked >= 400_000, "{client} asks new at {asked} us");
        let queued = lines_with(&run, &format!("queue {client} for profile"))
            .into_iter()
            .find(|(_, line)| line.starts_with("new#"))
            .unwrap_or_else(|| panic!("{client} waits in new:\n{}", text(&run)))
            .0;
        assert!(queued > asked, "{client} waits in new after asking it");
    }
    // The new service grants only once the old holder has released: the drain ends then.
    let released = first(&run, "release profile by writer-1");
    assert_eq!(first(&run, "profile drained from old, may grant"), released);
    assert_eq!(first(&run, "grant profile to waiter-1 token 100"), released);
    assert!(first(&run, "grant profile to late-1 token 101") > released);
    assert_eq!(
        service_log(&run, "old").len(),
        5,
        "old: grant, queue, hand over, refuse, release:\n{}",
        text(&run)
    );
    assert_eq!(v.exclusion, Exclusion::Holds);
    assert_eq!(v.operations.completed, 3);
}

#[test]
fn a_transfer_moves_the_holder_with_a_new_token_and_the_waiters_keep_their_place() {
    let (run, v) = run(&migration("transfer"));
    assert_eq!(
        count(
            &run,
            "new#1 take over writer-1's hold of profile from old as token 100"
        ),
        1
    );
    assert_eq!(
        count(&run, "writer-1 lock moved from old to new, token 100"),
        1
    );
    // The writer presents the new token from then on, and releases in the new service.
    assert_eq!(
        count(
            &run,
            "write profile[version] by writer-1 with token new:100"
        ),
        1
    );
    assert_eq!(count(&run, "release profile by writer-1 token 100"), 1);
    // The waiter was moved into the new service's queue: it does not ask again, the new
    // service's own log records the wait it took over, and the waiter is the first to be
    // granted there once the writer has released.
    assert_eq!(count(&run, "waiter-1 asks"), 1);
    let queued: Vec<(Micros, String)> =
        lines_with(&run, "queue waiter-1 for profile behind writer-1");
    assert_eq!(
        queued.len(),
        2,
        "asked in old, taken over by new:\n{}",
        text(&run)
    );
    assert!(queued[0].1.starts_with("old#"), "{queued:?}");
    assert!(queued[1].1.starts_with("new#"), "{queued:?}");
    assert_eq!(queued[1].0, 400_000, "taken over at the move");
    assert_eq!(
        first(&run, "grant profile to waiter-1 token 101"),
        first(&run, "release profile by writer-1 token 100")
    );
    assert_eq!(v.exclusion, Exclusion::Holds);
    assert_eq!(v.operations.completed, 3);

    // Who believes what, between the move and the writer's release: the writer holds through
    // the new service, with the new token, and only the new service has a holder.
    let at = 500_000;
    let snap = monitor::snapshot(&run.world, &run.events, at);
    assert_eq!(snap.believers.len(), 1);
    let belief = &snap.believers[0];
    assert_eq!(belief.client, "writer-1");
    let grants: Vec<(&str, u64)> = belief
        .grants
        .iter()
        .map(|g| (g.service.as_str(), g.token))
        .collect();
    assert_eq!(grants, [("new", 100)]);
    let holders: Vec<(&str, &str, u64)> = snap
        .holders
        .iter()
        .map(|h| (h.service.as_str(), h.client.as_str(), h.token))
        .collect();
    assert_eq!(holders, [("new", "writer-1", 100)]);
}

#[test]
fn a_transferred_holder_that_finds_the_new_lock_taken_waits_and_withdraws() {
    // `early` uses the new service before the move, so the writer's hold cannot be taken over:
    // it goes to the front of the new service's queue and holds nothing. It carries on with its
    // operation, with no token left to present, and withdraws from the queue at the end. With
    // a second move (the new service drained into a third), the writer still does not ask
    // again in the middle of its operation.
    let base = r#"
        name = "moved into a queue"
        duration_ms = 3000
        regions = ["east"]
        resources = [{ name = "profile", rows = ["version"] }]
        [[services]]
        name = "old"
        replicas = ["east"]
        [[services]]
        name = "new"
        replicas = ["east"]
        first_token = 100
        [[services]]
        name = "third"
        replicas = ["east"]
        first_token = 500
        [[clients]]
        name = "writer"
        region = "east"
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "early"
        region = "east"
        protocol = { kind = "single", service = "new" }
        resource = "profile"
        start_ms = 100
        period_ms = 100
        work_ms = 1500
        max_operations = 1
        [[migrations]]
        at_ms = 400
        resource = "profile"
        from = "old"
        to = "new"
        mode = "transfer"
    "#;
    let again = "[[migrations]]\nat_ms = 600\nresource = \"profile\"\nfrom = \"new\"\nto = \"third\"\nmode = \"drain\"\n";
    for (extra, withdrawn_by) in [("", "new#"), (again, "")] {
        let (run, _) = run(&format!("{base}\n{extra}"));
        assert_eq!(
            count(&run, "new#2 queue writer-1 for profile behind early-1"),
            1,
            "{}",
            text(&run)
        );
        assert_eq!(
            count(&run, "write profile[version] by writer-1 with no token"),
            1
        );
        assert_eq!(count(&run, "writer-1 asks"), 1, "{}", text(&run));
        assert_eq!(count(&run, "releases stale grant"), 0);
        assert!(
            service_log(&run, "new")
                .iter()
                .all(|l| !l.contains("grant profile to writer-1")),
            "{}",
            text(&run)
        );
        if !withdrawn_by.is_empty() {
            let cancel = lines_with(&run, "cancel writer-1's request for profile");
            assert_eq!(cancel.len(), 1, "{}", text(&run));
            assert!(cancel[0].1.starts_with(withdrawn_by));
        }
    }
}

#[test]
fn a_cancel_that_reaches_the_old_service_after_a_transfer_is_passed_on() {
    // The waiter is 40 ms from the old service. It gives up at 420 ms, before the news of the
    // move (sent at 400 ms) reaches it, so its cancel goes to the old service, which passes it
    // on: the new service removes it from its queue, and never grants to a client that stopped
    // asking.
    let (run, _) = run(r#"
        name = "a cancel after a transfer"
        duration_ms = 3000
        regions = ["east", "west"]
        resources = [{ name = "profile", region = "east", rows = ["version"] }]
        migrations = [{ at_ms = 400, resource = "profile", from = "old", to = "new", mode = "transfer" }]
        [[services]]
        name = "old"
        replicas = ["east"]
        [[services]]
        name = "new"
        replicas = ["east"]
        first_token = 100
        [[clients]]
        name = "writer"
        region = "east"
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "west"
        start_ms = 100
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 100
        acquire_timeout_ms = 320
        max_retries = 0
        max_operations = 1
    "#);
    let cancel = lines_with(&run, "cancel waiter-1's request for profile");
    assert_eq!(cancel.len(), 1, "{}", text(&run));
    assert!(cancel[0].1.starts_with("new#"), "{cancel:?}");
    assert_eq!(count(&run, "grant profile to waiter-1"), 0);
    assert_eq!(count(&run, "releases stale grant"), 0);
}

/// Three services in the east, old, new (tokens from 100) and third (from 500), and
/// `migrations` of `profile` among them. The writer, 40 ms away in the west, takes old's lock,
/// works 180 ms and lets go at about 420 ms; the waiter queues in old at 100 ms.
fn release_late(name: &str, migrations: &str) -> String {
    format!(
        r#"
        name = "{name}"
        duration_ms = 3000
        regions = ["east", "west"]
        network = {{ remote_latency_ms = 40 }}
        resources = [{{ name = "profile", region = "east", rows = ["version"] }}]
        [[services]]
        name = "old"
        replicas = ["east"]
        [[services]]
        name = "new"
        replicas = ["east"]
        first_token = 100
        [[services]]
        name = "third"
        replicas = ["east"]
        first_token = 500
        [[clients]]
        name = "writer"
        region = "west"
        protocol = {{ kind = "single", service = "old" }}
        resource = "profile"
        period_ms = 100
        work_ms = 180
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "east"
        start_ms = 100
        protocol = {{ kind = "single", service = "old" }}
        resource = "profile"
        period_ms = 100
        work_ms = 100
        max_operations = 1
        {migrations}
        "#
    )
}

/// Migrations of `profile`, as (at_ms, from, to, mode), as TOML tables.
fn moves(list: &[(u64, &str, &str, &str)]) -> String {
    list.iter()
        .map(|(at, from, to, mode)| {
            format!(
                "[[migrations]]\nat_ms = {at}\nresource = \"profile\"\nfrom = \"{from}\"\nto = \"{to}\"\nmode = \"{mode}\"\n"
            )
        })
        .collect()
}

#[test]
fn a_release_that_reaches_the_old_service_after_a_transfer_frees_the_lock_in_the_new_one() {
    // The writer is 40 ms from the old service and releases at about 420 ms: after the move
    // (400 ms), before the news of it reaches the writer (440 ms). Its release names the old
    // service's token; the old service passes it on, and the new service, which took the hold
    // over under a token of its own, must free the lock all the same. Otherwise nobody holds
    // the lock and nobody can take it: the waiter, moved into the new service's queue, would
    // wait for ever. In the second case the lock moves on again, to a third service, at 410 ms:
    // the release is passed on twice, and the third service frees the hold. In the third it
    // moves back to the old service, which frees the hold it got back under a new token.
    let base = release_late(
        "a release after a transfer",
        &moves(&[(400, "old", "new", "transfer")]),
    );
    let onward = |to: &str| moves(&[(410, "new", to, "transfer")]);
    for (extra, home, token, next) in [
        (String::new(), "new#", 100, 101),
        (onward("third"), "third#", 500, 501),
        (onward("old"), "old#", 2, 3),
    ] {
        let (run, v) = run(&format!("{base}\n{extra}"));
        let sent = first(&run, "writer-1 lets go");
        assert!(
            (410_000..440_000).contains(&sent),
            "the release leaves between the moves and the news of them, at {sent} us:\n{}",
            text(&run)
        );
        assert_eq!(count(&run, "ignore release"), 0, "{}", text(&run));
        let released = lines_with(&run, &format!("release profile by writer-1 token {token}"));
        assert_eq!(released.len(), 1, "{}", text(&run));
        assert!(released[0].1.starts_with(home), "{released:?}");
        assert_eq!(
            first(&run, &format!("grant profile to waiter-1 token {next}")),
            released[0].0,
            "the waiter is granted as the forwarded release frees the lock"
        );
        assert_eq!(v.operations.completed, 2);
        assert_eq!(v.exclusion, Exclusion::Holds);
    }
}

#[test]
fn a_read_of_several_rows_shows_every_row_read() {
    // Two operations on rows a and c of a three-row table starting at 7: the second reads what
    // the first wrote, row by row, and the trace shows every value read, not just the first.
    let (run, _) = run(r#"
        name = "two rows"
        duration_ms = 1000
        regions = ["east"]
        services = [{ name = "locks", replicas = ["east"] }]
        resources = [{ name = "t", rows = ["a", "b", "c"], initial = 7 }]
        [[clients]]
        name = "c"
        region = "east"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        rows = ["a", "c"]
        period_ms = 100
        work_ms = 10
        max_operations = 2
    "#);
    let reads: Vec<String> = lines_with(&run, "read t[a,c]")
        .into_iter()
        .map(|(_, line)| line)
        .collect();
    assert_eq!(reads.len(), 2, "{}", text(&run));
    assert!(reads[0].ends_with("by c-1 = 7,7"), "{reads:?}");
    assert!(reads[1].ends_with("by c-1 = 8,8"), "{reads:?}");
    assert_eq!(
        count(&run, "write t[a,c] by c-1 with token locks:1 := 8,8"),
        1,
        "{}",
        text(&run)
    );
}

#[test]
fn a_stale_release_of_the_old_token_after_a_transfer_leaves_the_new_hold_alone() {
    // The writer in the west asks the old service in the east (40 ms away), which grants at
    // about 40 ms; the grant travels back for 40 ms more. At 45 ms the hold is transferred to
    // the new service, next to the writer, whose news arrives first: the writer asks the new
    // service and is confirmed with the new token. The old grant arrives late, for a service
    // the writer no longer uses, and the writer releases it as stale. The old service passes
    // that release on, but the new service must keep the hold the writer is working under:
    // otherwise `other` is granted the lock while the writer still works.
    let (run, v) = run(r#"
        name = "a stale release after a transfer"
        duration_ms = 2000
        regions = ["east", "west"]
        network = { remote_latency_ms = 40 }
        resources = [{ name = "profile", region = "west", rows = ["version"] }]
        migrations = [{ at_ms = 45, resource = "profile", from = "old", to = "new", mode = "transfer" }]
        [[services]]
        name = "old"
        replicas = ["east"]
        [[services]]
        name = "new"
        replicas = ["west"]
        first_token = 100
        [[clients]]
        name = "writer"
        region = "west"
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 500
        max_operations = 1
        [[clients]]
        name = "other"
        region = "west"
        start_ms = 100
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 10
        max_operations = 1
    "#);
    assert_eq!(
        count(&run, "writer-1 releases stale grant"),
        1,
        "{}",
        text(&run)
    );
    let let_go = first(&run, "writer-1 lets go");
    let granted = first(&run, "grant profile to other-1");
    assert!(
        granted > let_go,
        "other is granted at {granted} us, before the writer lets go at {let_go} us:\n{}",
        text(&run)
    );
    assert_eq!(v.exclusion, Exclusion::Holds, "{}", text(&run));
    assert_eq!(v.operations.completed, 2);
}

#[test]
fn a_drain_back_to_where_a_transfer_took_the_lock_frees_it_when_the_holder_lets_go() {
    // The hold moves from old to new by a transfer at 400 ms, and the lock is drained back to
    // old at 405 ms: old waits for new's holder, the writer, who lets go at about 420 ms, before
    // the news of either move reaches it, with old's token, to old. Old must pass that release
    // to the service it drains from, which frees the hold and ends the drain; otherwise old
    // would drain for ever and the waiter would never be served. In the second case the lock
    // drains on from old to a third service at 410 ms: the release goes from old to third and
    // from third to new, where the hold is.
    let base = release_late(
        "a drain back after a transfer",
        &moves(&[
            (400, "old", "new", "transfer"),
            (405, "new", "old", "drain"),
        ]),
    );
    let onward = moves(&[(410, "old", "third", "drain")]);
    for extra in [String::new(), onward] {
        let (run, v) = run(&format!("{base}\n{extra}"));
        let released = lines_with(&run, "release profile by writer-1 token 100");
        assert_eq!(released.len(), 1, "{}", text(&run));
        assert!(released[0].1.starts_with("new#"), "{released:?}");
        assert_eq!(
            first(&run, "profile drained from new"),
            released[0].0,
            "{}",
            text(&run)
        );
        assert!(first(&run, "grant profile to waiter-1") >= released[0].0);
        assert_eq!(v.operations.completed, 2, "{}", text(&run));
        assert_eq!(v.exclusion, Exclusion::Holds);
    }
}

#[test]
fn a_lock_moved_on_while_it_drains_still_waits_for_the_old_holder() {
    // The lock drains from old to new at 400 ms while the writer holds it in old for a second,
    // then moves on from new to third by a transfer at 500 ms. Third inherits the wait: it must
    // grant nothing until the writer lets go of old's lock, or the waiter would hold the lock
    // in third while the writer still holds it in old.
    let (run, v) = run(r#"
        name = "a drain moved on"
        duration_ms = 3000
        regions = ["east"]
        resources = [{ name = "profile", rows = ["version"] }]
        [[services]]
        name = "old"
        replicas = ["east"]
        [[services]]
        name = "new"
        replicas = ["east"]
        first_token = 100
        [[services]]
        name = "third"
        replicas = ["east"]
        first_token = 500
        [[clients]]
        name = "writer"
        region = "east"
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "east"
        start_ms = 100
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 100
        max_operations = 1
        [[migrations]]
        at_ms = 400
        resource = "profile"
        from = "old"
        to = "new"
        mode = "drain"
        [[migrations]]
        at_ms = 500
        resource = "profile"
        from = "new"
        to = "third"
        mode = "transfer"
    "#);
    let released = first(&run, "release profile by writer-1");
    let granted = first(&run, "grant profile to waiter-1");
    assert!(
        granted >= released,
        "the waiter is granted at {granted} us, before the writer lets go at {released} us:\n{}",
        text(&run)
    );
    assert_eq!(
        first(&run, "profile drained from old"),
        released,
        "{}",
        text(&run)
    );
    assert_eq!(v.exclusion, Exclusion::Holds, "{}", text(&run));
    assert_eq!(v.operations.completed, 2);
}

// ----- A client's requests and answers -------------------------------------------------------

#[test]
fn a_cancel_removes_only_the_client_that_sent_it() {
    // Two clients wait behind a long holder, both on their first attempt. The second gives up;
    // the first keeps its place and is granted next.
    let (run, _) = run(r#"
        name = "one of two waiters gives up"
        duration_ms = 3000
        regions = ["east"]
        services = [{ name = "locks", replicas = ["east"] }]
        resources = [{ name = "t", rows = ["n"] }]
        [[clients]]
        name = "holder"
        region = "east"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "patient"
        region = "east"
        start_ms = 100
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 10
        max_operations = 1
        [[clients]]
        name = "hasty"
        region = "east"
        start_ms = 200
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 10
        acquire_timeout_ms = 100
        max_retries = 0
        max_operations = 1
    "#);
    assert_eq!(count(&run, "cancel hasty-1's request for t"), 1);
    assert_eq!(
        first(&run, "grant t to patient-1"),
        first(&run, "release t by holder-1")
    );
    assert_eq!(count(&run, "grant t to hasty-1"), 0);
    assert_eq!(count(&run, "releases stale grant"), 0);
}

#[test]
fn a_client_that_asks_again_while_still_queued_waits_once() {
    // The remote client's cancel is lost to a partition, so the service still has it queued
    // when its retry arrives: the retry replaces the old place in line instead of adding a
    // second one, and the service keeps everyone else's place. When the remote client then
    // gives up, nothing of it is left in the queue.
    let base = r#"
        name = "a lost cancel"
        duration_ms = 3000
        regions = ["east", "west"]
        services = [{ name = "locks", replicas = ["east"] }]
        resources = [{ name = "t", region = "east", rows = ["n"] }]
        partitions = [{ start_ms = 350, duration_ms = 150, groups = [["west"], ["east"]] }]
        [[clients]]
        name = "holder"
        region = "east"
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 2000
        max_operations = 1
        [[clients]]
        name = "remote"
        region = "west"
        start_ms = 100
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 10
        acquire_timeout_ms = 300
        retry_backoff_ms = 200
        max_retries = 1
        max_operations = 1
    "#;
    let patient = r#"
        [[clients]]
        name = "patient"
        region = "east"
        start_ms = 150
        protocol = { kind = "single", service = "locks" }
        resource = "t"
        period_ms = 100
        work_ms = 10
        max_operations = 1
    "#;
    for extra in ["", patient] {
        let (run, _) = run(&format!("{base}{extra}"));
        assert_eq!(count(&run, "message remote-1 -> service locks lost"), 1);
        assert_eq!(count(&run, "queue remote-1 for t"), 2);
        assert_eq!(count(&run, "cancel remote-1's request for t"), 1);
        assert_eq!(count(&run, "grant t to remote-1"), 0, "{}", text(&run));
        assert_eq!(count(&run, "releases stale grant"), 0);
        if !extra.is_empty() {
            assert_eq!(
                first(&run, "grant t to patient-1"),
                first(&run, "release t by holder-1")
            );
        }
    }
}

#[test]
fn a_grant_for_an_abandoned_attempt_is_released() {
    // The service is 100 ms away and the client waits only 150 ms, so each grant arrives after
    // its attempt was abandoned, while the retry is already waiting: the client releases it.
    // In the second case the client also locks a near service whose token at that moment has
    // the same number as the late grant; that does not make the late grant its own.
    for protocol in [
        r#"{ kind = "single", service = "a" }"#,
        r#"{ kind = "all_unordered", services = ["a", "b"] }"#,
    ] {
        let (run, _) = run(&format!(
            r#"
            name = "late grants"
            duration_ms = 2000
            regions = ["near", "far"]
            network = {{ remote_latency_ms = 100, jitter_ms = 0 }}
            resources = [{{ name = "t", region = "near", rows = ["n"] }}]
            services = [{{ name = "a", replicas = ["far"] }}, {{ name = "b", replicas = ["near"], first_token = 0 }}]
            [[clients]]
            name = "c"
            region = "near"
            protocol = {protocol}
            resource = "t"
            period_ms = 1000
            work_ms = 10
            acquire_timeout_ms = 150
            retry_backoff_ms = 10
            max_retries = 1
            max_operations = 1
            "#
        ));
        let released: Vec<(Micros, String)> = lines_with(&run, "releases stale grant");
        assert_eq!(
            released,
            [
                (200_000, "c-1 releases stale grant a token 1".to_string()),
                (360_000, "c-1 releases stale grant a token 2".to_string()),
            ],
            "{protocol}:\n{}",
            text(&run)
        );
        assert_eq!(count(&run, "HOLDS"), 0);
    }
}

#[test]
fn refusals_and_timeouts_end_an_attempt_and_retries_are_counted() {
    // A `single` client pointed at a subordinate carries no authority token and is refused
    // every time. Each operation makes one attempt and two retries, then gives up. When the
    // subordinate is far and the client's timeout short, every attempt times out before its
    // refusal arrives, and a refusal that arrives late ends nothing: not the backoff it
    // arrives in (backoff 100 ms), nor the next attempt (backoff 10 ms).
    struct Case {
        sub_region: &'static str,
        timeout: &'static str,
        backoff_ms: u64,
        reason: &'static str,
    }
    let cases = [
        Case {
            sub_region: "near",
            timeout: "",
            backoff_ms: 10,
            reason: "refused",
        },
        Case {
            sub_region: "far",
            timeout: "acquire_timeout_ms = 150",
            backoff_ms: 100,
            reason: "timeout",
        },
        Case {
            sub_region: "far",
            timeout: "acquire_timeout_ms = 150",
            backoff_ms: 10,
            reason: "timeout",
        },
    ];
    for case in cases {
        let (run, v) = run(&format!(
            r#"
            name = "refused"
            duration_ms = 2000
            regions = ["near", "far"]
            network = {{ remote_latency_ms = 100, jitter_ms = 0 }}
            resources = [{{ name = "t", region = "near", rows = ["n"] }}]
            services = [{{ name = "authority", replicas = ["near"] }}, {{ name = "sub", replicas = ["{}"], subordinate_to = "authority" }}]
            [[clients]]
            name = "c"
            region = "near"
            protocol = {{ kind = "single", service = "sub" }}
            resource = "t"
            period_ms = 500
            work_ms = 10
            {}
            retry_backoff_ms = {}
            max_retries = 2
            max_operations = 2
            "#,
            case.sub_region, case.timeout, case.backoff_ms
        ));
        let aborts: Vec<String> = lines_with(&run, "abandons attempt")
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        let retry = format!("c-1 abandons attempt ({}), will retry", case.reason);
        let last = format!("c-1 abandons attempt ({})", case.reason);
        let one_op = [retry.clone(), retry, last];
        assert_eq!(
            aborts,
            [one_op.clone(), one_op].concat(),
            "{} {}:\n{}",
            case.sub_region,
            case.timeout,
            text(&run)
        );
        assert_eq!(count(&run, "refuse t to c-1 (no authority token)"), 6);
        assert_eq!(count(&run, "gives up the operation"), 2);
        assert_eq!(v.operations.started, 2);
        assert_eq!(v.operations.gave_up, 2);
        // The resource idles while the client tries, and not after it gave up.
        let mut tried = 0;
        let mut since = 0;
        for (at, line) in said(&run) {
            if line.contains("starts, waits") {
                since = at;
            } else if line.contains("gives up") {
                tried += at - since;
            }
        }
        assert_eq!(v.resources[0].idle_while_waiting_us, tried);
    }
}

#[test]
fn a_request_answered_queued_is_not_skipped_as_unreachable() {
    // The client asks both services at once and may skip one it cannot reach. Service a is cut
    // off, service b answers "queued" (its lock is held). At the timeout a is skipped and the
    // queued request times out as usual.
    let (run, _) = run(r#"
        name = "skip only the silent"
        duration_ms = 1500
        regions = ["east", "west"]
        resources = [{ name = "t", region = "east", rows = ["n"] }]
        services = [{ name = "a", replicas = ["west"] }, { name = "b", replicas = ["east"] }]
        partitions = [{ start_ms = 100, duration_ms = 1000, groups = [["west"], ["east"]] }]
        [[clients]]
        name = "holder"
        region = "east"
        protocol = { kind = "single", service = "b" }
        resource = "t"
        period_ms = 100
        work_ms = 1000
        max_operations = 1
        [[clients]]
        name = "c"
        region = "east"
        start_ms = 200
        protocol = { kind = "all_unordered", services = ["a", "b"], skip_unreachable = true }
        resource = "t"
        period_ms = 1000
        work_ms = 10
        acquire_timeout_ms = 200
        max_retries = 0
        max_operations = 1
    "#);
    let after: Vec<String> = said(&run)
        .into_iter()
        .filter(|(at, l)| *at == 400_000 && l.starts_with("c-1"))
        .map(|(_, l)| l)
        .collect();
    assert_eq!(
        after,
        [
            "c-1 skips unreachable a",
            "c-1 abandons attempt (timeout)",
            "c-1 gives up the operation"
        ],
        "{}",
        text(&run)
    );
}

#[test]
fn a_client_that_lists_both_services_of_a_migration_asks_the_new_one_once() {
    let (run, _) = run(r#"
        name = "two listed, one after the move"
        duration_ms = 700
        regions = ["east"]
        resources = [{ name = "t", rows = ["n"] }]
        services = [{ name = "a", replicas = ["east"] }, { name = "b", replicas = ["east"], first_token = 100 }]
        migrations = [{ at_ms = 300, resource = "t", from = "a", to = "b" }]
        [[clients]]
        name = "c"
        region = "east"
        protocol = { kind = "all_ordered", services = ["a", "b"] }
        resource = "t"
        period_ms = 100
        work_ms = 10
    "#);
    // Before the move each operation asks a, then b; after it, b alone, once.
    let mut asks: Vec<Vec<String>> = Vec::new();
    for (_, line) in said(&run) {
        if line.contains("starts, waits") {
            asks.push(Vec::new());
        } else if let Some(service) = line.strip_prefix("c-1 asks ") {
            asks.last_mut().unwrap().push(service.to_string());
        }
    }
    let moved = asks.iter().position(|a| a == &["b"]).expect("asks b alone");
    assert!(moved > 0, "{asks:?}");
    assert!(asks[..moved].iter().all(|a| a == &["a", "b"]), "{asks:?}");
    assert!(asks[moved..].iter().all(|a| a == &["b"]), "{asks:?}");
}

// ----- Lease-aware clients --------------------------------------------------------------------

#[test]
fn a_lease_aware_client_lets_go_at_its_own_deadline_and_sends_nothing_after() {
    // One lease-aware client, no jitter. The service and the resource are near (1 ms) or far
    // (100 ms). The client's deadline is the moment it sent its request plus the lease, less
    // the margin; where that falls in the operation decides what the resource sees.
    struct Case {
        what: &'static str,
        service: &'static str,
        resource: &'static str,
        lease: u64,
        margin: u64,
        work: u64,
        period: u64,
        max_operations: &'static str,
        duration: u64,
        // Reads and writes the resource accepted (writes: none means "as many as completed"),
        // operations completed, and abandoned.
        reads: Option<usize>,
        writes: Option<usize>,
        completed: Option<u64>,
        abandoned: Option<u64>,
    }
    let cases = [
        Case {
            what: "a lease far longer than an operation: none is abandoned, even when an \
                   earlier operation's deadline passes during a later one",
            service: "near",
            resource: "near",
            lease: 1000,
            margin: 0,
            work: 50,
            period: 10,
            max_operations: "",
            duration: 1500,
            reads: None,
            writes: None,
            completed: None,
            abandoned: Some(0),
        },
        Case {
            what: "the grant arrives after the deadline: let go at once, not even a read",
            service: "far",
            resource: "near",
            lease: 100,
            margin: 60,
            work: 10,
            period: 1000,
            max_operations: "max_operations = 3",
            duration: 3000,
            reads: Some(0),
            writes: Some(0),
            completed: Some(0),
            abandoned: Some(3),
        },
        Case {
            what: "the deadline passes while the read is on its way: the reply is ignored",
            service: "near",
            resource: "far",
            lease: 100,
            margin: 0,
            work: 10,
            period: 1000,
            max_operations: "max_operations = 3",
            duration: 3000,
            reads: Some(3),
            writes: Some(0),
            completed: Some(0),
            abandoned: Some(3),
        },
        Case {
            what: "the deadline passes during the work: the write is never sent",
            service: "near",
            resource: "near",
            lease: 100,
            margin: 0,
            work: 300,
            period: 1000,
            max_operations: "max_operations = 3",
            duration: 3000,
            reads: Some(3),
            writes: Some(0),
            completed: Some(0),
            abandoned: Some(3),
        },
        Case {
            what: "the deadline passes while the write is on its way: it lands, but the \
                   operation counts as abandoned and its late answer changes nothing",
            service: "near",
            resource: "far",
            lease: 300,
            margin: 0,
            work: 10,
            period: 0,
            max_operations: "max_operations = 1",
            duration: 3000,
            reads: Some(1),
            writes: Some(1),
            completed: Some(1),
            abandoned: Some(1),
        },
    ];
    for case in cases {
        let (run, v) = run(&format!(
            r#"
            name = "lease-aware"
            duration_ms = {}
            regions = ["near", "far"]
            network = {{ remote_latency_ms = 100, jitter_ms = 0 }}
            services = [{{ name = "locks", replicas = ["{}"], lease_ms = {} }}]
            resources = [{{ name = "t", region = "{}", rows = ["n"] }}]
            [[clients]]
            name = "c"
            region = "near"
            protocol = {{ kind = "single", service = "locks" }}
            resource = "t"
            period_ms = {}
            work_ms = {}
            lease_aware = true
            lease_margin_ms = {}
            {}
            "#,
            case.duration,
            case.service,
            case.lease,
            case.resource,
            case.period,
            case.work,
            case.margin,
            case.max_operations
        ));
        let why = format!("{}:\n{}", case.what, text(&run));
        if let Some(reads) = case.reads {
            assert_eq!(count(&run, "t read t[n]"), reads, "{why}");
        }
        let writes = count(&run, "t write t[n]");
        match case.writes {
            Some(n) => assert_eq!(writes, n, "{why}"),
            None => {
                assert!(writes > 10, "{why}");
                assert_eq!(v.operations.completed, writes as u64, "{why}");
            }
        }
        if let Some(completed) = case.completed {
            assert_eq!(v.operations.completed, completed, "{why}");
        }
        if let Some(abandoned) = case.abandoned {
            assert_eq!(v.operations.abandoned, abandoned, "{why}");
            assert_eq!(
                count(&run, "(lease may have expired)") as u64,
                abandoned,
                "{why}"
            );
        }
        // Every belief ends by the client's own deadline (the lease, less the margin, after
        // the request was sent), or at once if the grant came later than that.
        let (mut sent, mut held) = (0, 0);
        for (at, line) in said(&run) {
            if line == "c-1 asks locks" {
                sent = at;
            } else if line.starts_with("c-1 HOLDS") {
                held = at;
            } else if line.starts_with("c-1 lets go") {
                let deadline = sent + (case.lease - case.margin) * 1000;
                assert!(at <= deadline.max(held), "{why}");
            }
        }
        assert!(count(&run, "c-1 stops") <= 1, "{why}");
    }
}

#[test]
fn a_migration_from_a_service_the_lock_already_left_moves_nothing() {
    // The lock of `profile` leaves old for new at 200 ms, while the writer holds it in old
    // until about 420 ms. A second drain or transfer from old afterwards finds no lock in old
    // to move: the trace says so and where the lock lives, and the lock stays where it is. It
    // must neither leave new waiting for a drain nobody will end (the waiter would wait for
    // ever) nor start a second line of grants beside new's.
    for (second, then) in [
        ((300, "old", "third", "drain"), None),
        ((300, "old", "third", "transfer"), None),
        (
            (300, "old", "third", "transfer"),
            Some((350, "new", "old", "drain")),
        ),
    ] {
        let mut list = vec![(200, "old", "new", "drain"), second];
        list.extend(then);
        let (run, v) = run(&release_late("a second move from old", &moves(&list)));
        let story = text(&run);
        assert_eq!(
            count(&run, "nothing to move, the lock is in new"),
            1,
            "{list:?}\n{story}"
        );
        assert_eq!(
            count(&run, "third#"),
            0,
            "third never had the lock:\n{story}"
        );
        // In the JSON trace, only the migration that moved nothing names where the lock is.
        let migrations: Vec<String> = run
            .events
            .iter()
            .filter(|e| matches!(e.what, lockstep::trace::What::Migrated { .. }))
            .map(|e| serde_json::to_string(e).expect("events serialize"))
            .collect();
        assert!(!migrations[0].contains("already_in"), "{migrations:?}");
        assert!(
            migrations[1].contains(r#""already_in":1"#),
            "{migrations:?}"
        );
        assert_eq!(v.operations.completed, 2, "{list:?}\n{story}");
        assert_eq!(v.exclusion, Exclusion::Holds, "{list:?}\n{story}");
    }
    // Nor does it send clients anywhere: after a naive move back to old (whose lock forwards to
    // new), a late client that asks old must end up in new's queue, not in a fresh lock in third
    // while the writer still holds the lock.
    let late = r#"
        [[clients]]
        name = "late"
        region = "east"
        start_ms = 350
        protocol = { kind = "single", service = "old" }
        resource = "profile"
        period_ms = 100
        work_ms = 100
        max_operations = 1
    "#;
    let list = [
        (200, "old", "new", "drain"),
        (250, "new", "old", "naive"),
        (300, "old", "third", "drain"),
    ];
    let (run, v) = run(&release_late(
        "a second move from old",
        &format!("{}{late}", moves(&list)),
    ));
    let story = text(&run);
    assert_eq!(
        count(&run, "nothing to move, the lock is in new"),
        1,
        "{story}"
    );
    assert_eq!(
        count(&run, "third#"),
        0,
        "third never had the lock:\n{story}"
    );
    assert_eq!(
        count(&run, "grant profile to late-1 token 101"),
        1,
        "{story}"
    );
    assert_eq!(v.operations.completed, 3, "{story}");
    assert_eq!(v.exclusion, Exclusion::Holds, "{story}");
    // A naive migration moves no lock, wherever the lock lives: it only sends clients on, as
    // it says, so the late client is granted by third, beside the writer.
    let list = [
        (200, "old", "new", "drain"),
        (250, "new", "old", "naive"),
        (300, "old", "third", "naive"),
    ];
    let (naive, v) = self::run(&release_late(
        "a naive move from old",
        &format!("{}{late}", moves(&list)),
    ));
    let story = text(&naive);
    assert_eq!(count(&naive, "nothing to move"), 0, "{story}");
    assert_eq!(
        count(&naive, "third#1 grant profile to late-1"),
        1,
        "{story}"
    );
    assert_eq!(v.exclusion, Exclusion::Broken, "{story}");
}

#[test]
fn a_migration_into_a_service_whose_lock_moved_on_goes_where_that_lock_lives() {
    // The lock of `profile` drains from old to new at 200 ms, while the writer holds it in old.
    // At 300 ms a drain or transfer moves third's lock into old. Old's lock lives in new now, so
    // that is where third's lock goes; old must not become a home again beside new, which would
    // grant nothing new waits for, and leave the waiter waiting for a drain that never ends.
    for mode in ["drain", "transfer"] {
        let list = [(200, "old", "new", "drain"), (300, "third", "old", mode)];
        let (run, v) = run(&release_late("a move into old", &moves(&list)));
        let story = text(&run);
        assert_eq!(
            count(&run, "old's lock is in new, so it moves there"),
            1,
            "{mode}\n{story}"
        );
        let json = serde_json::to_string(&run.events).expect("events serialize");
        assert_eq!(json.matches(r#""into":1"#).count(), 1, "{json}");
        assert_eq!(
            first(&run, "grant profile to waiter-1 token 100"),
            first(&run, "profile drained from old, may grant"),
            "{mode}\n{story}"
        );
        assert_eq!(v.operations.completed, 2, "{mode}\n{story}");
        assert_eq!(v.exclusion, Exclusion::Holds, "{mode}\n{story}");
    }
}

#[test]
fn trace_lines_show_names_as_written() {
    // Names may hold capitals, and a name may look like a word the line uses: the line shows
    // each as written, never lowercased or rewritten.
    let (run, _) = run(r#"
        name = "names as written"
        duration_ms = 1000
        regions = ["east"]
        resources = [{ name = "Orders", rows = ["A"] }]
        migrations = [{ at_ms = 500, resource = "Orders", from = "East-Locks", to = "West-Locks" }]
        [[services]]
        name = "East-Locks"
        replicas = ["east"]
        [[services]]
        name = "West-Locks"
        replicas = ["east"]
        [[clients]]
        name = "Holder"
        region = "east"
        protocol = { kind = "single", service = "East-Locks" }
        resource = "Orders"
        period_ms = 100
        work_ms = 400
        max_operations = 1
        [[clients]]
        name = "Timeout"
        region = "east"
        start_ms = 10
        protocol = { kind = "single", service = "East-Locks" }
        resource = "Orders"
        period_ms = 100
        work_ms = 10
        acquire_timeout_ms = 50
        max_operations = 1
    "#);
    let story = text(&run);
    assert_eq!(
        count(&run, "migrate Orders from East-Locks to West-Locks (naive)"),
        1,
        "{story}"
    );
    assert!(
        count(&run, "Timeout-1 abandons attempt (timeout)") >= 1,
        "{story}"
    );
    assert_eq!(
        count(&run, "East-Locks#1 grant Orders to Holder-1 token 1"),
        1,
        "{story}"
    );
}

#[test]
fn a_lock_drained_into_twice_waits_for_both_holders() {
    // The writer holds old's lock until about 420 ms, `other` holds third's from 20 ms to about
    // 330 ms. Both drain into new (at 200 and 300 ms), directly or, in the second case, through
    // old, whose lock already lives in new. New must wait for both holders: granting when the
    // first lets go would put the waiter beside the writer.
    let other = r#"
        [[clients]]
        name = "other"
        region = "east"
        start_ms = 20
        protocol = { kind = "single", service = "third" }
        resource = "profile"
        period_ms = 100
        work_ms = 300
        max_operations = 1
    "#;
    for second in ["new", "old"] {
        let list = [
            (200, "old", "new", "drain"),
            (300, "third", second, "drain"),
        ];
        let (run, v) = run(&release_late(
            "two drains into one service",
            &format!("{}{other}", moves(&list)),
        ));
        let story = text(&run);
        let first_drained = first(&run, "profile drained from third, still draining");
        let writer_released = first(&run, "release profile by writer-1 token 1");
        assert!(first_drained < writer_released, "{story}");
        assert_eq!(
            first(&run, "profile drained from old, may grant"),
            writer_released,
            "{second}\n{story}"
        );
        assert_eq!(
            first(&run, "grant profile to waiter-1 token 100"),
            writer_released,
            "{second}\n{story}"
        );
        // The writer and `other` overlap, in two independent services before any migration:
        // that one is the scenario's own; none involves the waiter.
        assert!(
            v.violations
                .iter()
                .all(|o| o.holders.iter().all(|h| h.client != "waiter-1")),
            "{second}\n{story}"
        );
        assert_eq!(v.operations.completed, 3, "{second}\n{story}");
    }
}

#[test]
fn a_release_reaching_a_draining_lock_goes_where_its_client_holds_it() {
    // x holds the lock in p and in b (it locks both, p first). At 480 ms a transfer takes x's
    // hold from b to c, and at 490 ms a drain brings the lock back to b: b now waits for c's
    // holder. At 500 ms another transfer brings y's hold from a into b. x lets go at about 506
    // ms, before the news of the first move reaches it (40 ms away), so its release goes to b,
    // which drains and holds y's lock. That release is for the hold in c: b must pass it to c,
    // the one service the drain waits for where x holds the lock (not p, where x holds it too,
    // nor a, and not keep it because b has a holder of its own). Otherwise c is never freed,
    // and b waits for ever.
    let (run, v) = run(r#"
        name = "a release reaching a draining lock"
        duration_ms = 3000
        regions = ["east", "west"]
        network = { remote_latency_ms = 40 }
        resources = [{ name = "profile", region = "east", rows = ["version"] }]
        migrations = [
          { at_ms = 480, resource = "profile", from = "b", to = "c", mode = "transfer" },
          { at_ms = 490, resource = "profile", from = "c", to = "b", mode = "drain" },
          { at_ms = 500, resource = "profile", from = "a", to = "b", mode = "transfer" },
        ]
        [[services]]
        name = "p"
        replicas = ["east"]
        first_token = 900
        [[services]]
        name = "a"
        replicas = ["east"]
        [[services]]
        name = "b"
        replicas = ["east"]
        first_token = 100
        [[services]]
        name = "c"
        replicas = ["east"]
        first_token = 500
        [[clients]]
        name = "x"
        region = "west"
        protocol = { kind = "all_ordered", services = ["p", "b"] }
        resource = "profile"
        period_ms = 100
        work_ms = 180
        max_operations = 1
        [[clients]]
        name = "y"
        region = "east"
        protocol = { kind = "single", service = "a" }
        resource = "profile"
        period_ms = 100
        work_ms = 900
        max_operations = 1
        [[clients]]
        name = "waiter"
        region = "east"
        start_ms = 510
        protocol = { kind = "single", service = "b" }
        resource = "profile"
        period_ms = 100
        work_ms = 50
        max_operations = 1
    "#);
    let story = text(&run);
    let reached = first(&run, "release profile by x-1 token 500");
    assert_eq!(
        first(&run, "profile drained from c, may grant"),
        reached,
        "{story}"
    );
    assert!(reached < first(&run, "release profile by y-1"), "{story}");
    // x's release in p frees p's lock as well.
    assert_eq!(
        count(&run, "release profile by x-1 token 900"),
        1,
        "{story}"
    );
    // b's own holder, moved in from a, keeps the lock until it lets go; then the waiter.
    assert_eq!(
        first(&run, "grant profile to waiter-1 token 102"),
        first(&run, "release profile by y-1 token 101"),
        "{story}"
    );
    // x and y overlap in independent services before any move: the scenario's own overlap.
    // None involves the waiter.
    assert!(
        v.violations
            .iter()
            .all(|o| o.holders.iter().all(|h| h.client != "waiter-1")),
        "{story}"
    );
    assert_eq!(v.operations.completed, 3, "{story}");
}

#[test]
fn a_lock_drained_away_and_back_grants_when_its_holder_lets_go() {
    // The holder takes b's lock at once and keeps it for about 400 ms. At 200 ms a drain moves
    // the lock to a, which waits for b's holder; at 250 ms a drain or a transfer brings it back
    // to b, where the holder still is. b must wait for nobody: the waiter, queued at b, gets
    // the lock when the holder lets go. (b is listed second, so its wait is not the first bit
    // of a set that might be mistaken for nothing.)
    for mode in ["drain", "transfer"] {
        let (run, v) = run(&format!(
            r#"
            name = "drained away and back"
            duration_ms = 3000
            regions = ["east"]
            resources = [{{ name = "profile", region = "east", rows = ["version"] }}]
            services = [
              {{ name = "a", replicas = ["east"] }},
              {{ name = "b", replicas = ["east"], first_token = 100 }},
            ]
            migrations = [
              {{ at_ms = 200, resource = "profile", from = "b", to = "a", mode = "drain" }},
              {{ at_ms = 250, resource = "profile", from = "a", to = "b", mode = "{mode}" }},
            ]
            [[clients]]
            name = "holder"
            region = "east"
            protocol = {{ kind = "single", service = "b" }}
            resource = "profile"
            period_ms = 100
            work_ms = 400
            max_operations = 1
            [[clients]]
            name = "waiter"
            region = "east"
            start_ms = 300
            protocol = {{ kind = "single", service = "b" }}
            resource = "profile"
            period_ms = 100
            work_ms = 50
            max_operations = 1
            "#
        ));
        let story = text(&run);
        assert_eq!(
            first(&run, "grant profile to waiter-1 token 101"),
            first(&run, "release profile by holder-1 token 100"),
            "{mode}\n{story}"
        );
        assert!(v.violations.is_empty(), "{mode}\n{story}");
        assert_eq!(v.operations.completed, 2, "{mode}\n{story}");
    }
}
