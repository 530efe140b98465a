//! Claims about a run's outcome, and conditions on a scenario: two small typed languages that a
//! lesson writes one per line.
//!
//! A [`Claim`] is judged from a verdict (`exclusion broken`, `lost_updates > 0`,
//! `log(old) consistent`, `idle_percent(orders) <= 20`), or from runs over several seeds
//! (`every seed in 0..12: no deadlock`). Its figures are the verdict's own fields, as
//! `docs/cli.md` defines them, so a claim means exactly what `lockstep run --json` prints.
//! A [`Condition`] is judged from a scenario alone (`fencing(orders) == any_source`), for
//! recognising a learner's known mistakes.

use crate::inventory::{self, Severity};
use crate::monitor::{Exclusion, Integrity, Verdict};
use crate::scenario::{Fencing, MigrationMode, Scenario};
use crate::toggles;

use super::cue::is_of;
use super::verify::run_scenario;
use super::SEEDS_MAX;

/// A claim about the outcome of a run, as written in a lesson.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    /// The claim as written.
    pub text: String,
    /// Its line in the lesson file.
    pub line: u32,
    pub quantifier: Option<Quantifier>,
    pub test: Test,
}

/// Runs of several seeds instead of the one run shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// `every seed in 0..12:`
    Every(Vec<u64>),
    /// `some seed in 0..12:`
    Some(Vec<u64>),
    /// `at least 9 of seeds 0..10:`
    AtLeast(u32, Vec<u64>),
}

/// What is tested of one verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Test {
    Exclusion(Exclusion),
    Integrity(Integrity),
    /// `deadlock` (true) or `no deadlock` (false).
    Deadlock(bool),
    /// `log(SERVICE) consistent`, or `every log consistent` (None).
    LogConsistent(Option<String>),
    /// `every class completes work`: every client class completed at least one operation.
    EveryClassWorks,
    /// `every class gets its fair share`: each class's clients completed, per client, at least
    /// a quarter of what the run's clients completed on average (and something was completed).
    /// Stricter than [`Test::EveryClassWorks`]: an answer that leaves a class one operation
    /// while the others work freely starves it all the same.
    FairShare,
    /// `METRIC OP NUMBER`.
    Compare {
        metric: Metric,
        op: Op,
        value: f64,
    },
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    const ALL: [(&'static str, Op); 6] = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];

    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }
}

/// A figure of a verdict (or of the scenario's inventory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    /// One of the verdict's counts, by its JSON name (`lost_updates`, `violation_count`, ...).
    Count(&'static str),
    /// One of the verdict's operation counts (`operations.completed`, ...).
    Operations(&'static str),
    /// `idle_ms(RESOURCE)`: the resource's `idle_while_waiting_us`, in milliseconds.
    IdleMs(String),
    /// `idle_percent(RESOURCE)`: the same as a percentage of the run's length.
    IdlePercent(String),
    /// `unavailable_ms(SERVICE, REGION)`: the service's unavailability to the region.
    UnavailableMs(String, String),
    /// `grants(SERVICE)`: the grants in the service's own log.
    Grants(String),
    /// `grants(SERVICE, FROM_MS, TO_MS)`: the grants in the service's log from one time of the
    /// run up to (not including) another, counted from the run's trace.
    GrantsBetween(String, u64, u64),
    /// `overlaps(A, B)`: overlaps between clients of A and of B (classes or instances).
    Overlaps(String, String),
    /// `completed(CLASS)`: the operations the class's clients completed.
    Completed(String),
    /// `wait_ms(CLASS)`: the mean time, in milliseconds, from one of the class's operations
    /// starting to its critical section starting.
    WaitMs(String),
    /// `cycle_services`: the most services in one wait-for cycle.
    CycleServices,
    /// `inventory_defects` or `inventory_defects(RESOURCE)`: defects of the static check.
    InventoryDefects(Option<String>),
}

/// The verdict's counts a claim can name, by their JSON field names.
const COUNTS: [&str; 13] = [
    "violation_count",
    "lost_updates",
    "interleaved_writes",
    "rejected_writes",
    "rejected_reads",
    "accepted_writes",
    "wait_cycle_count",
    "livelock_count",
    "incomparable_pairs",
    "overlapping_service_pairs",
    "max_simultaneous_holders",
    "unprotected_clients",
    "restarts",
];

const OPERATIONS: [&str; 7] = [
    "started",
    "completed",
    "gave_up",
    "abandoned",
    "rejected",
    "quorums_missed",
    "validity_spent",
];

/// The result of judging a claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimResult {
    pub holds: bool,
    /// What the run showed, in words a learner reads ("1 update was lost", "no wait-for cycle
    /// formed"), never the claim's own figures: a clause that follows "but" or "and".
    pub actual: String,
}

fn count(v: &Verdict, name: &str) -> u64 {
    match name {
        "violation_count" => v.violation_count,
        "lost_updates" => v.lost_updates,
        "interleaved_writes" => v.interleaved_writes,
        "rejected_writes" => v.rejected_writes,
        "rejected_reads" => v.rejected_reads,
        "accepted_writes" => v.accepted_writes,
        "wait_cycle_count" => v.wait_cycle_count,
        "livelock_count" => v.livelock_count,
        "incomparable_pairs" => v.incomparable_pairs,
        "overlapping_service_pairs" => v.overlapping_service_pairs.len() as u64,
        "max_simultaneous_holders" => u64::from(v.max_simultaneous_holders),
        "unprotected_clients" => v.unprotected_clients.len() as u64,
        "restarts" => v.restarts.len() as u64,
        _ => unreachable!("only names from COUNTS are parsed"),
    }
}

impl Metric {
    /// The figure in a verdict, or why it cannot be told.
    pub fn value(&self, s: &Scenario, v: &Verdict) -> Result<f64, String> {
        let resource = |r: &str| {
            v.resources
                .iter()
                .find(|x| x.resource == r)
                .ok_or_else(|| format!("the run has no resource \"{r}\""))
        };
        Ok(match self {
            Metric::Count(name) => count(v, name) as f64,
            Metric::Operations(name) => {
                (match *name {
                    "started" => v.operations.started,
                    "completed" => v.operations.completed,
                    "gave_up" => v.operations.gave_up,
                    "abandoned" => v.operations.abandoned,
                    "quorums_missed" => v.operations.quorums_missed,
                    "validity_spent" => v.operations.validity_spent,
                    _ => v.operations.rejected,
                }) as f64
            }
            Metric::IdleMs(r) => resource(r)?.idle_while_waiting_us as f64 / 1000.0,
            Metric::IdlePercent(r) => {
                let idle = resource(r)?.idle_while_waiting_us as f64;
                if v.end_us == 0 {
                    0.0
                } else {
                    idle * 100.0 / v.end_us as f64
                }
            }
            Metric::UnavailableMs(service, region) => {
                v.unavailability
                    .iter()
                    .filter(|u| &u.service == service && &u.region == region)
                    .map(|u| u.unavailable_us)
                    .sum::<u64>() as f64
                    / 1000.0
            }
            Metric::Grants(service) => v
                .service_logs
                .iter()
                .find(|l| &l.service == service)
                .map_or(0, |l| l.grants) as f64,
            Metric::Overlaps(a, b) => {
                let n = v
                    .violations
                    .iter()
                    .filter(|x| {
                        let [p, q] = [&x.holders[0].client, &x.holders[1].client];
                        (is_of(p, a) && is_of(q, b)) || (is_of(p, b) && is_of(q, a))
                    })
                    .count();
                if (v.violations.len() as u64) < v.violation_count {
                    return Err(format!(
                        "cannot tell: only the first {} of {} overlaps are detailed",
                        v.violations.len(),
                        v.violation_count
                    ));
                }
                n as f64
            }
            Metric::GrantsBetween(service, from, to) => {
                // The verdict keeps no grant times, so the run (the same scenario and seed) is
                // made again and its trace counted.
                let (run, _) = run_scenario(s, v.seed).map_err(|e| e.to_string())?;
                let Some(k) = run.world.services.iter().position(|x| &x.name == service) else {
                    return Err(format!("the run has no service \"{service}\""));
                };
                let (from, to) = (from.saturating_mul(1000), to.saturating_mul(1000));
                run.events
                    .iter()
                    .filter(|e| e.at >= from && e.at < to)
                    .filter(|e| {
                        matches!(&e.what, crate::trace::What::Service {
                            service: x,
                            op: crate::trace::ServiceOp::Granted { .. },
                            ..
                        } if *x as usize == k)
                    })
                    .count() as f64
            }
            Metric::Completed(class) => v
                .class_work
                .iter()
                .find(|w| &w.class == class)
                .map(|w| w.completed)
                .ok_or_else(|| format!("the run has no client class \"{class}\""))?
                as f64,
            Metric::WaitMs(class) => {
                v.class_work
                    .iter()
                    .find(|w| &w.class == class)
                    .map(|w| w.mean_wait_us())
                    .ok_or_else(|| format!("the run has no client class \"{class}\""))?
                    as f64
                    / 1000.0
            }
            Metric::CycleServices => v
                .wait_cycles
                .iter()
                .map(|c| c.services.len())
                .max()
                .unwrap_or(0) as f64,
            Metric::InventoryDefects(r) => inventory::check(s)
                .iter()
                .filter(|f| f.severity == Severity::Defect)
                .filter(|f| r.as_ref().is_none_or(|r| &f.resource == r))
                .count() as f64,
        })
    }

    /// Why the metric names something the scenario lacks, if it does.
    fn problem(&self, s: &Scenario) -> Option<String> {
        let resource = |r: &str| {
            (!s.resources.iter().any(|x| x.name == r))
                .then(|| format!("there is no resource \"{r}\""))
        };
        let service = |x: &str| {
            (!s.services.iter().any(|y| y.name == x))
                .then(|| format!("there is no service \"{x}\""))
        };
        let client = |c: &str| {
            let known = s.clients.iter().any(|x| x.name == c)
                || s.client_instance_names().iter().any(|x| x == c);
            (!known).then(|| format!("there is no client class or instance \"{c}\""))
        };
        match self {
            Metric::IdleMs(r) | Metric::IdlePercent(r) => resource(r),
            Metric::InventoryDefects(Some(r)) => resource(r),
            Metric::Grants(x) | Metric::GrantsBetween(x, _, _) => service(x),
            Metric::UnavailableMs(x, region) => service(x).or_else(|| {
                (!s.regions.contains(region)).then(|| format!("there is no region \"{region}\""))
            }),
            Metric::Overlaps(a, b) => client(a).or_else(|| client(b)),
            Metric::Completed(c) | Metric::WaitMs(c) => (!s.clients.iter().any(|x| &x.name == c))
                .then(|| format!("there is no client class \"{c}\"")),
            _ => None,
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Metric::Count(n) => write!(f, "{n}"),
            Metric::Operations(n) => write!(f, "operations.{n}"),
            Metric::IdleMs(r) => write!(f, "idle_ms({r})"),
            Metric::IdlePercent(r) => write!(f, "idle_percent({r})"),
            Metric::UnavailableMs(s, r) => write!(f, "unavailable_ms({s}, {r})"),
            Metric::Grants(s) => write!(f, "grants({s})"),
            Metric::GrantsBetween(s, a, b) => write!(f, "grants({s}, {a}, {b})"),
            Metric::Overlaps(a, b) => write!(f, "overlaps({a}, {b})"),
            Metric::Completed(c) => write!(f, "completed({c})"),
            Metric::WaitMs(c) => write!(f, "wait_ms({c})"),
            Metric::CycleServices => write!(f, "cycle_services"),
            Metric::InventoryDefects(None) => write!(f, "inventory_defects"),
            Metric::InventoryDefects(Some(r)) => write!(f, "inventory_defects({r})"),
        }
    }
}

/// A number as a claim prints it: whole numbers without a fraction, others to two places.
fn figure(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.2}")
    }
}

impl Test {
    /// Judges one verdict.
    pub fn judge(&self, s: &Scenario, v: &Verdict) -> ClaimResult {
        let result = |holds: bool, actual: String| ClaimResult { holds, actual };
        match self {
            Test::Exclusion(e) => result(
                v.exclusion == *e,
                match v.exclusion {
                    Exclusion::Holds => "exclusion held".into(),
                    Exclusion::Broken => format!(
                        "exclusion broke: {}",
                        Metric::Count("violation_count").shows(v.violation_count as f64)
                    ),
                },
            ),
            Test::Integrity(i) => result(
                v.integrity == *i,
                Metric::Count("lost_updates").shows(v.lost_updates as f64),
            ),
            Test::Deadlock(d) => result(
                v.deadlock == *d,
                if v.deadlock {
                    "a deadlock formed".into()
                } else {
                    "no deadlock formed".into()
                },
            ),
            Test::LogConsistent(service) => {
                let logs: Vec<_> = v
                    .service_logs
                    .iter()
                    .filter(|l| service.as_ref().is_none_or(|x| &l.service == x))
                    .collect();
                let bad: Vec<&str> = logs
                    .iter()
                    .filter(|l| !l.consistent)
                    .map(|l| l.service.as_str())
                    .collect();
                if logs.is_empty() {
                    result(false, "the run has no log of that service".into())
                } else if bad.is_empty() {
                    result(
                        true,
                        match service {
                            Some(x) => format!("{x}'s own log kept its invariants"),
                            None => "every service's own log kept its invariants".into(),
                        },
                    )
                } else {
                    result(
                        false,
                        format!("the own log of {} broke its invariants", bad.join(" and ")),
                    )
                }
            }
            Test::FairShare => fair_share(s, v),
            Test::EveryClassWorks => {
                let starved = v.starved_classes();
                match starved.as_slice() {
                    [] => result(true, "every class completed at least one operation".into()),
                    [one] => result(false, format!("class {one} completed nothing")),
                    many => result(
                        false,
                        format!("classes {} completed nothing", many.join(", ")),
                    ),
                }
            }
            Test::Compare { metric, op, value } => match metric.value(s, v) {
                Ok(x) => result(op.holds(x, *value), metric.shows(x)),
                Err(why) => result(false, why),
            },
        }
    }

    fn problem(&self, s: &Scenario) -> Option<String> {
        match self {
            Test::LogConsistent(Some(x)) if !s.services.iter().any(|y| &y.name == x) => {
                Some(format!("there is no service \"{x}\""))
            }
            Test::Compare { metric, .. } => metric.problem(s),
            _ => None,
        }
    }
}

impl Metric {
    /// What the figure is, in words, as the subject of "is at least 15".
    pub fn words(&self) -> String {
        match self {
            Metric::Count(n) => match *n {
                "violation_count" => "the number of overlapping holds".into(),
                "lost_updates" => "the number of lost updates".into(),
                "interleaved_writes" => {
                    "the number of writes inside another client's critical section".into()
                }
                "rejected_writes" => "the number of writes rejected by fencing".into(),
                "rejected_reads" => "the number of reads rejected by fencing".into(),
                "accepted_writes" => "the number of accepted writes".into(),
                "wait_cycle_count" => "the number of wait-for cycles".into(),
                "livelock_count" => "the number of livelocks".into(),
                "incomparable_pairs" => {
                    "the number of pairs of grants that cannot be put in one order".into()
                }
                "overlapping_service_pairs" => {
                    "the number of pairs of services whose grants overlap".into()
                }
                "max_simultaneous_holders" => {
                    "the most clients holding the same rows at once".into()
                }
                "unprotected_clients" => "the number of clients working without any lock".into(),
                "restarts" => "the number of restarts without persistence".into(),
                other => format!("the number of {}", other.replace('_', " ")),
            },
            Metric::Operations(n) => match *n {
                "gave_up" => "the number of operations given up".into(),
                "quorums_missed" => "the number of attempts that missed their quorum".into(),
                "validity_spent" => {
                    "the number of attempts whose quorum came after the lock's validity".into()
                }
                other => format!("the number of operations {other}"),
            },
            Metric::IdleMs(r) => format!("the time {r} stands idle while clients wait"),
            Metric::IdlePercent(r) => {
                format!("the share of the run {r} stands idle while clients wait")
            }
            Metric::UnavailableMs(s, region) => {
                format!("the time {s} is unavailable to {region}")
            }
            Metric::Grants(s) => format!("the number of grants by {s}"),
            Metric::GrantsBetween(s, a, b) => format!(
                "the number of grants by {s} from {} to {}",
                ms_words(*a),
                ms_words(*b)
            ),
            Metric::Overlaps(a, b) => format!("the number of overlaps between {a} and {b}"),
            Metric::Completed(c) => format!("the number of operations class {c} completes"),
            Metric::WaitMs(c) => format!("class {c}'s mean wait for its locks"),
            Metric::CycleServices => "the most services in one wait-for cycle".into(),
            Metric::InventoryDefects(None) => {
                "the number of defects the inventory check finds".into()
            }
            Metric::InventoryDefects(Some(r)) => {
                format!("the number of defects the inventory check finds at {r}")
            }
        }
    }
}

impl Metric {
    /// What a run shows of the figure, as a clause a learner reads: "no update was lost",
    /// "2 updates were lost", "ledger stood idle for 1500 ms while clients waited". The figure's
    /// name in a claim (`lost_updates`, `idle_ms(ledger)`) is the author's, never the learner's.
    pub fn shows(&self, x: f64) -> String {
        let n = figure(x);
        let one = x == 1.0;
        let none = x == 0.0;
        // "1 update was lost", "2 updates were lost".
        let counted = |singular: &str, plural: &str, was: &str, were: &str| {
            if one {
                format!("1 {singular} {was}")
            } else {
                format!("{n} {plural} {were}")
            }
        };
        match self {
            Metric::Count(name) => match *name {
                "violation_count" if none => {
                    "no two clients believed they held the same rows at once".into()
                }
                "violation_count" if one => {
                    "two clients believed they held the same rows at once (1 overlap)".into()
                }
                "violation_count" => {
                    format!("two clients believed they held the same rows at once ({n} overlaps)")
                }
                "lost_updates" if none => "no update was lost".into(),
                "lost_updates" => counted("update", "updates", "was lost", "were lost"),
                "interleaved_writes" if none => {
                    "no write landed inside another client's critical section".into()
                }
                "interleaved_writes" => counted(
                    "write",
                    "writes",
                    "landed inside another client's critical section",
                    "landed inside another client's critical section",
                ),
                "rejected_writes" if none => "fencing rejected no write".into(),
                "rejected_writes" => counted(
                    "write",
                    "writes",
                    "was rejected by fencing",
                    "were rejected by fencing",
                ),
                "rejected_reads" if none => "fencing rejected no read".into(),
                "rejected_reads" => counted(
                    "read",
                    "reads",
                    "was rejected by fencing",
                    "were rejected by fencing",
                ),
                "accepted_writes" if none => "no write was accepted".into(),
                "accepted_writes" => counted("write", "writes", "was accepted", "were accepted"),
                "wait_cycle_count" if none => "no wait-for cycle formed".into(),
                "wait_cycle_count" => {
                    counted("wait-for cycle", "wait-for cycles", "formed", "formed")
                }
                "livelock_count" if none => "no livelock happened".into(),
                "livelock_count" => counted("livelock", "livelocks", "happened", "happened"),
                "incomparable_pairs" if none => "every two grants could be put in one order".into(),
                "incomparable_pairs" => counted(
                    "pair of grants",
                    "pairs of grants",
                    "could not be put in one order",
                    "could not be put in one order",
                ),
                "overlapping_service_pairs" if none => "no two services' grants overlapped".into(),
                "overlapping_service_pairs" => counted(
                    "pair of services",
                    "pairs of services",
                    "granted overlapping holds",
                    "granted overlapping holds",
                ),
                "max_simultaneous_holders" if none => "no client held any rows".into(),
                "max_simultaneous_holders" if one => {
                    "at most one client held the same rows at a time".into()
                }
                "max_simultaneous_holders" => {
                    format!("as many as {n} clients held the same rows at once")
                }
                "restarts" if none => "no service restarted without its state".into(),
                "restarts" => counted(
                    "restart without persistence",
                    "restarts without persistence",
                    "happened",
                    "happened",
                ),
                "unprotected_clients" if none => "every client took a lock".into(),
                "unprotected_clients" => counted(
                    "client",
                    "clients",
                    "worked without any lock",
                    "worked without any lock",
                ),
                other => format!("{}: {n}", other.replace('_', " ")),
            },
            Metric::Operations("quorums_missed") if none => {
                "no attempt missed its quorum".to_string()
            }
            Metric::Operations("quorums_missed") => counted(
                "attempt",
                "attempts",
                "missed its quorum",
                "missed their quorum",
            ),
            Metric::Operations("validity_spent") if none => {
                "no quorum came after the lock's validity".to_string()
            }
            Metric::Operations("validity_spent") => counted(
                "attempt",
                "attempts",
                "got its quorum after the lock's validity",
                "got their quorum after the lock's validity",
            ),
            Metric::Operations(name) => {
                let done = match *name {
                    "started" => "started",
                    "completed" => "completed",
                    "gave_up" => "were given up",
                    "abandoned" => "were abandoned",
                    _ => "were rejected",
                };
                let done_one = done.replacen("were", "was", 1);
                if none {
                    format!("no operation {done_one}")
                } else {
                    counted("operation", "operations", &done_one, done)
                }
            }
            Metric::IdleMs(r) if none => format!("{r} never stood idle while clients waited"),
            Metric::IdleMs(r) => format!("{r} stood idle for {n} ms while clients waited"),
            Metric::IdlePercent(r) if none => {
                format!("{r} never stood idle while clients waited")
            }
            Metric::IdlePercent(r) => {
                format!("{r} stood idle for {n}% of the run while clients waited")
            }
            Metric::UnavailableMs(s, region) if none => {
                format!("{s} was always available to {region}")
            }
            Metric::UnavailableMs(s, region) => {
                format!("{s} was unavailable to {region} for {n} ms")
            }
            Metric::Grants(s) if none => format!("{s} granted no lock"),
            Metric::Grants(s) if one => format!("{s} granted a lock once"),
            Metric::Grants(s) => format!("{s} granted a lock {n} times"),
            Metric::GrantsBetween(s, a, b) => {
                let (a, b) = (ms_words(*a), ms_words(*b));
                match (none, one) {
                    (true, _) => format!("{s} granted no lock from {a} to {b}"),
                    (_, true) => format!("{s} granted a lock once from {a} to {b}"),
                    _ => format!("{s} granted a lock {n} times from {a} to {b}"),
                }
            }
            Metric::Overlaps(a, b) if none => {
                format!("no client of {a} held the same rows as one of {b}")
            }
            Metric::Overlaps(a, b) if one => {
                format!("a client of {a} and one of {b} held the same rows at once, once")
            }
            Metric::Overlaps(a, b) => {
                format!("clients of {a} and of {b} held the same rows at once {n} times")
            }
            Metric::Completed(c) if none => format!("class {c} completed no operation"),
            Metric::Completed(c) if one => format!("class {c} completed 1 operation"),
            Metric::Completed(c) => format!("class {c} completed {n} operations"),
            Metric::WaitMs(c) => format!("class {c} waited {n} ms on average for its locks"),
            Metric::CycleServices if none => "no wait-for cycle formed".into(),
            Metric::CycleServices if one => {
                "no wait-for cycle went through more than one service".into()
            }
            Metric::CycleServices => format!("a wait-for cycle went through {n} services"),
            Metric::InventoryDefects(at) => {
                let at = at.as_ref().map_or(String::new(), |r| format!(" at {r}"));
                match (none, one) {
                    (true, _) => format!("the inventory check finds no defect{at}"),
                    (_, true) => format!("the inventory check finds 1 defect{at}"),
                    _ => format!("the inventory check finds {n} defects{at}"),
                }
            }
        }
    }
}

impl Metric {
    /// The unit of the figure as a reader writes it after a number (" ms", "%"), or none.
    fn unit(&self) -> &'static str {
        match self {
            Metric::IdleMs(_) | Metric::UnavailableMs(..) | Metric::WaitMs(_) => " ms",
            Metric::IdlePercent(_) => "%",
            _ => "",
        }
    }
}

/// Milliseconds as a reader says them: "1.5 s", "250 ms".
fn ms_words(ms: u64) -> String {
    if ms >= 1000 && ms % 100 == 0 {
        let s = ms as f64 / 1000.0;
        format!("{s} s")
    } else {
        format!("{ms} ms")
    }
}

impl Op {
    fn words(self) -> &'static str {
        match self {
            Op::Eq => "is",
            Op::Ne => "is not",
            Op::Lt => "is under",
            Op::Le => "is at most",
            Op::Gt => "is over",
            Op::Ge => "is at least",
        }
    }
}

impl Test {
    /// What the test requires, in words.
    pub fn words(&self) -> String {
        match self {
            Test::Exclusion(Exclusion::Holds) => {
                "exclusion holds: no two clients believe they hold the same rows at once".into()
            }
            Test::Exclusion(Exclusion::Broken) => "exclusion breaks".into(),
            Test::Integrity(Integrity::Intact) => "no update is lost".into(),
            Test::Integrity(Integrity::Corrupted) => "an update is lost".into(),
            Test::Deadlock(true) => "a deadlock forms".into(),
            Test::Deadlock(false) => "no deadlock forms".into(),
            Test::LogConsistent(None) => "every service's own log keeps its invariants".into(),
            Test::LogConsistent(Some(s)) => format!("{s}'s own log keeps its invariants"),
            Test::FairShare => FAIR_SHARE_WORDS.into(),
            Test::EveryClassWorks => "every client class completes at least one operation".into(),
            Test::Compare { metric, op, value } => {
                format!(
                    "{} {} {}{}",
                    metric.words(),
                    op.words(),
                    figure(*value),
                    metric.unit()
                )
            }
        }
    }
}

/// The verdict's counts of harm, which a safe run has none of: overlapping holds, lost
/// updates, writes inside another's critical section, wait-for cycles and livelocks.
const HARMS: [&str; 5] = [
    "violation_count",
    "lost_updates",
    "interleaved_writes",
    "wait_cycle_count",
    "livelock_count",
];

impl Claim {
    /// Whether the claim, judged on one run, says that the run was safe: exclusion holds, no
    /// update is lost, no deadlock forms, or a bound on a count of harm (overlaps, lost
    /// updates, interleaved writes, wait-for cycles, livelocks) that a run with none meets.
    /// What the course teaches is wrong breaks such a claim in some seed; an answer that
    /// passes it only in the seeds tried was lucky. A quantified claim runs seeds of its own,
    /// so it is none.
    pub fn is_safety(&self) -> bool {
        if self.quantifier.is_some() {
            return false;
        }
        match &self.test {
            Test::Exclusion(Exclusion::Holds)
            | Test::Integrity(Integrity::Intact)
            | Test::Deadlock(false) => true,
            Test::Compare {
                metric: Metric::Count(name),
                op,
                value,
            } => HARMS.contains(name) && op.holds(0.0, *value),
            Test::Compare {
                metric: Metric::Overlaps(..),
                op,
                value,
            } => op.holds(0.0, *value),
            _ => false,
        }
    }
}

impl Claim {
    /// What the claim requires, in words ("in every one of 12 seeds (0-11), no deadlock forms").
    pub fn words(&self) -> String {
        let test = self.test.words();
        let seeds = |s: &[u64]| crate::lesson::seeds_words(s);
        match &self.quantifier {
            None => test,
            Some(Quantifier::Every(s)) => format!("in every one of {}, {test}", seeds(s)),
            Some(Quantifier::Some(s)) => format!("in at least one of {}, {test}", seeds(s)),
            Some(Quantifier::AtLeast(n, s)) => {
                format!("in at least {n} of {}, {test}", seeds(s))
            }
        }
    }

    /// Judges the claim: an unquantified claim from the verdict of the run shown, a quantified
    /// one by running the scenario with each of its seeds.
    pub fn check(&self, s: &Scenario, v: &Verdict) -> ClaimResult {
        let Some(q) = &self.quantifier else {
            return self.test.judge(s, v);
        };
        let seeds = match q {
            Quantifier::Every(x) | Quantifier::Some(x) | Quantifier::AtLeast(_, x) => x,
        };
        let mut held = Vec::new();
        let mut failed = Vec::new();
        // What the first seed that failed showed, so that a failure says why, not only where.
        let mut first_failure = None;
        for &seed in seeds {
            let ok = match run_scenario(s, seed) {
                Ok((_, v)) => {
                    let r = self.test.judge(s, &v);
                    if !r.holds && first_failure.is_none() {
                        first_failure = Some(format!("with seed {seed}, {}", r.actual));
                    }
                    r.holds
                }
                Err(_) => false,
            };
            if ok {
                held.push(seed)
            } else {
                failed.push(seed)
            }
        }
        // "in 9 of the 32 seeds, exclusion breaks, but not with seeds 3 and 7": what held is
        // said in the test's own words, never as the claim's syntax.
        let (n, test) = (seeds.len(), self.test.words());
        let actual = match (held.is_empty(), failed.is_empty()) {
            (_, true) if n == 1 => format!("with its one seed, {test}"),
            (_, true) => format!("in all {n} seeds, {test}"),
            (true, _) if n == 1 => "with its one seed, that is not so".to_string(),
            (true, _) => format!("in none of the {n} seeds, {test}"),
            _ if failed.len() <= 6 => format!(
                "in {} of the {n} seeds, {test}, but not with {}",
                held.len(),
                crate::lesson::seeds_words(&failed)
            ),
            _ => format!(
                "in {} of the {n} seeds, {test}, but not in the other {}",
                held.len(),
                failed.len()
            ),
        };
        let actual = match (&first_failure, q) {
            (Some(why), Quantifier::Every(_) | Quantifier::AtLeast(..)) => {
                format!("{actual}; {why}")
            }
            _ => actual,
        };
        let holds = match q {
            Quantifier::Every(_) => failed.is_empty(),
            Quantifier::Some(_) => !held.is_empty(),
            Quantifier::AtLeast(n, _) => held.len() >= *n as usize,
        };
        ClaimResult { holds, actual }
    }

    /// Why the claim names something the scenario lacks, if it does.
    pub fn problem(&self, s: &Scenario) -> Option<String> {
        self.test.problem(s)
    }

    /// Reads a claim from its line.
    pub fn parse(text: &str, line: u32) -> Result<Claim, String> {
        let text = text.trim();
        let (quantifier, rest) = quantifier(text)?;
        Ok(Claim {
            text: text.to_string(),
            line,
            quantifier,
            test: test(rest.trim())?,
        })
    }
}

/// Reads a list of seeds: `0..12` (the twelve seeds 0 to 11) or `1, 4, 9`.
pub fn seeds(text: &str) -> Result<Vec<u64>, String> {
    let text = text.trim();
    let list: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let a: u64 = a
            .trim()
            .parse()
            .map_err(|_| format!("\"{text}\" is not a range of seeds like 0..12"))?;
        let b: u64 = b
            .trim()
            .parse()
            .map_err(|_| format!("\"{text}\" is not a range of seeds like 0..12"))?;
        if b <= a {
            return Err(format!("the range of seeds \"{text}\" is empty"));
        }
        if b - a > SEEDS_MAX as u64 {
            return Err(format!("\"{text}\" is more than {SEEDS_MAX} seeds"));
        }
        (a..b).collect()
    } else {
        text.split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .map_err(|_| format!("\"{}\" is not a seed (a whole number)", x.trim()))
            })
            .collect::<Result<_, _>>()?
    };
    if list.is_empty() || list.len() > SEEDS_MAX {
        return Err(format!("give 1 to {SEEDS_MAX} seeds"));
    }
    Ok(list)
}

fn quantifier(text: &str) -> Result<(Option<Quantifier>, &str), String> {
    let Some((head, rest)) = text.split_once(':') else {
        return Ok((None, text));
    };
    let head = head.trim();
    let q = if let Some(range) = head.strip_prefix("every seed in ") {
        Quantifier::Every(seeds(range)?)
    } else if let Some(range) = head.strip_prefix("some seed in ") {
        Quantifier::Some(seeds(range)?)
    } else if let Some(rest) = head.strip_prefix("at least ") {
        let (n, range) = rest
            .split_once(" of seeds ")
            .ok_or_else(|| format!("\"{head}\": write \"at least N of seeds A..B\""))?;
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("\"{n}\" is not a whole number"))?;
        let seeds = seeds(range)?;
        if n as usize > seeds.len() {
            return Err(format!(
                "at least {n} of {} seeds can never hold",
                seeds.len()
            ));
        }
        Quantifier::AtLeast(n, seeds)
    } else {
        return Err(format!(
            "unknown quantifier \"{head}\": write \"every seed in A..B:\", \"some seed in A..B:\" \
             or \"at least N of seeds A..B:\""
        ));
    };
    Ok((Some(q), rest))
}

/// The claims a lesson can make, for messages.
pub const CLAIM_FORMS: &str = "exclusion holds|broken, integrity intact|corrupted, deadlock, \
no deadlock, log(SERVICE) consistent, every log consistent, every class completes work, every \
class gets its fair share, or METRIC OP NUMBER";

/// The claim every gate and exercise check includes: a solution that starves a client class is
/// no solution.
pub const WORK: &str = "every class completes work";

/// The claim every exercise's check must state: an answer that starves a class, or leaves it
/// a trickle while the others work, is no answer.
pub const FAIR_SHARE: &str = "every class gets its fair share";

/// The claim every exercise's check must state beside [`FAIR_SHARE`]: an answer in which a
/// wait-for cycle forms is no answer, even one that a timeout or a lease later breaks.
pub const NO_CYCLE: &str = "wait_cycle_count == 0";

/// What [`FAIR_SHARE`] requires, in words.
const FAIR_SHARE_WORDS: &str = "every client class gets a fair share of the work: at least a \
quarter of the operations per client that the run's clients complete on average";

/// Splits `name(a, b)` into the name and its arguments.
fn call(text: &str) -> (&str, Vec<String>) {
    match text.split_once('(') {
        Some((name, args)) => {
            let args = args.trim_end().trim_end_matches(')');
            (
                name.trim(),
                args.split(',')
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty())
                    .collect(),
            )
        }
        None => (text.trim(), Vec::new()),
    }
}

fn test(text: &str) -> Result<Test, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["exclusion", "holds"] => return Ok(Test::Exclusion(Exclusion::Holds)),
        ["exclusion", "broken"] => return Ok(Test::Exclusion(Exclusion::Broken)),
        ["integrity", "intact"] => return Ok(Test::Integrity(Integrity::Intact)),
        ["integrity", "corrupted"] => return Ok(Test::Integrity(Integrity::Corrupted)),
        ["deadlock"] => return Ok(Test::Deadlock(true)),
        ["no", "deadlock"] => return Ok(Test::Deadlock(false)),
        ["every", "log", "consistent"] => return Ok(Test::LogConsistent(None)),
        ["every", "class", "completes", "work"] => return Ok(Test::EveryClassWorks),
        ["every", "class", "gets", "its", "fair", "share"] => return Ok(Test::FairShare),
        [log, "consistent"] if log.starts_with("log(") => {
            let (_, args) = call(log);
            return match args.as_slice() {
                [service] => Ok(Test::LogConsistent(Some(service.clone()))),
                _ => Err("log(SERVICE) names one service".into()),
            };
        }
        _ => {}
    }
    let Some((at, symbol, op)) = Op::ALL
        .iter()
        .filter_map(|(sym, op)| text.find(sym).map(|i| (i, *sym, *op)))
        .min_by_key(|(i, sym, _)| (*i, std::cmp::Reverse(sym.len())))
    else {
        return Err(format!(
            "\"{text}\" is not a claim; a claim is one of: {CLAIM_FORMS}"
        ));
    };
    let value = decimal(text[at + symbol.len()..].trim())
        .ok_or_else(|| format!("\"{}\" is not a number", text[at + symbol.len()..].trim()))?;
    let (name, args) = call(&text[..at]);
    let one = |what: &str| -> Result<String, String> {
        match args.as_slice() {
            [a] => Ok(a.clone()),
            _ => Err(format!("{name}({what}) takes one {what}")),
        }
    };
    let metric = match name {
        n if COUNTS.contains(&n) && args.is_empty() => Metric::Count(
            COUNTS
                .iter()
                .find(|c| **c == n)
                .expect("checked by contains"),
        ),
        n if n.starts_with("operations.") && args.is_empty() => {
            let field = &n["operations.".len()..];
            Metric::Operations(
                OPERATIONS
                    .iter()
                    .find(|c| **c == field)
                    .ok_or_else(|| format!("unknown operations count \"{field}\""))?,
            )
        }
        "idle_ms" => Metric::IdleMs(one("RESOURCE")?),
        "idle_percent" => Metric::IdlePercent(one("RESOURCE")?),
        "grants" => match args.as_slice() {
            [s] => Metric::Grants(s.clone()),
            [s, a, b] => {
                let ms = |x: &str| {
                    x.parse::<u64>()
                        .map_err(|_| format!("\"{x}\" is not a whole number of milliseconds"))
                };
                let (a, b) = (ms(a)?, ms(b)?);
                if b <= a {
                    return Err(format!("grants({s}, {a}, {b}): the window is empty"));
                }
                Metric::GrantsBetween(s.clone(), a, b)
            }
            _ => return Err("grants(SERVICE) or grants(SERVICE, FROM_MS, TO_MS)".into()),
        },
        "unavailable_ms" => match args.as_slice() {
            [s, r] => Metric::UnavailableMs(s.clone(), r.clone()),
            _ => return Err("unavailable_ms(SERVICE, REGION) takes two names".into()),
        },
        "overlaps" => match args.as_slice() {
            [a, b] => Metric::Overlaps(a.clone(), b.clone()),
            _ => return Err("overlaps(A, B) takes two client classes or instances".into()),
        },
        "cycle_services" if args.is_empty() => Metric::CycleServices,
        "completed" => Metric::Completed(one("CLASS")?),
        "wait_ms" => Metric::WaitMs(one("CLASS")?),
        "inventory_defects" => match args.as_slice() {
            [] => Metric::InventoryDefects(None),
            [r] => Metric::InventoryDefects(Some(r.clone())),
            _ => return Err("inventory_defects takes at most one resource".into()),
        },
        _ => {
            return Err(format!(
                "unknown figure \"{name}\"; the figures are {}, operations.{}, idle_ms(R), \
                 idle_percent(R), unavailable_ms(S, REGION), grants(S), grants(S, FROM_MS, TO_MS), overlaps(A, B), \
                 completed(CLASS), wait_ms(CLASS), cycle_services and inventory_defects",
                COUNTS.join(", "),
                OPERATIONS.join("|")
            ))
        }
    };
    Ok(Test::Compare { metric, op, value })
}

/// A condition on a scenario, for recognising a learner's known mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// The condition as written.
    pub text: String,
    subject: Subject,
    op: Op,
    value: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Subject {
    Fencing(String),
    Checks(String),
    FencingSource(String),
    /// A class's protocol, or any class's (`protocol(any)`).
    Protocol(Option<String>),
    Role(String),
    Outage(String),
    Partition,
    Pause,
    Migration,
    MigrationMode,
    /// The time of the first migration, in milliseconds (compared as a number).
    MigrationAt,
    /// The length of the first partition, in milliseconds (compared as a number).
    PartitionLength,
}

/// The conditions on a scenario, for messages.
pub const CONDITION_FORMS: &str = "fencing(R), checks(R), fencing_source(R), protocol(CLASS), \
protocol(any), role(S), outage(S), partition, pause, migration, migration_mode, each == or != a \
value, and migration_at or partition_length compared with a number of milliseconds";

impl Condition {
    /// Reads a condition: `SUBJECT == VALUE` or `SUBJECT != VALUE`.
    pub fn parse(text: &str) -> Result<Condition, String> {
        let text = text.trim();
        let Some((at, symbol, op)) = Op::ALL
            .iter()
            .filter_map(|(sym, op)| text.find(sym).map(|i| (i, *sym, *op)))
            .min_by_key(|(i, sym, _)| (*i, std::cmp::Reverse(sym.len())))
        else {
            return Err(format!(
                "\"{text}\" is not a condition; a condition is one of: {CONDITION_FORMS}"
            ));
        };
        let (left, right) = (&text[..at], &text[at + symbol.len()..]);
        let (name, args) = call(left);
        let one = || -> Result<String, String> {
            match args.as_slice() {
                [a] => Ok(a.clone()),
                _ => Err(format!("{name}(...) takes one name")),
            }
        };
        let subject = match name {
            "fencing" => Subject::Fencing(one()?),
            "checks" => Subject::Checks(one()?),
            "fencing_source" => Subject::FencingSource(one()?),
            "protocol" => {
                let c = one()?;
                Subject::Protocol((c != "any").then_some(c))
            }
            "role" => Subject::Role(one()?),
            "outage" => Subject::Outage(one()?),
            "partition" if args.is_empty() => Subject::Partition,
            "pause" if args.is_empty() => Subject::Pause,
            "migration" if args.is_empty() => Subject::Migration,
            "migration_mode" if args.is_empty() => Subject::MigrationMode,
            "migration_at" if args.is_empty() => Subject::MigrationAt,
            "partition_length" if args.is_empty() => Subject::PartitionLength,
            _ => {
                return Err(format!(
                    "unknown subject \"{}\"; a condition is one of: {CONDITION_FORMS}",
                    left.trim()
                ))
            }
        };
        let value = right.trim().to_string();
        let numeric = matches!(subject, Subject::MigrationAt | Subject::PartitionLength);
        if numeric && decimal(&value).is_none() {
            return Err(format!("\"{value}\" is not a number of milliseconds"));
        }
        if !numeric && !matches!(op, Op::Eq | Op::Ne) {
            return Err(format!("{} is compared with == or != only", left.trim()));
        }
        let allowed: &[&str] = match subject {
            Subject::Fencing(_) => &["off", "any_source", "one_source"],
            Subject::Checks(_) => &["writes", "all_accesses"],
            Subject::Outage(_) | Subject::Partition | Subject::Pause | Subject::Migration => {
                &["on", "off"]
            }
            Subject::MigrationMode => &["naive", "drain", "transfer", "none"],
            _ => &[],
        };
        if !allowed.is_empty() && !allowed.contains(&value.as_str()) {
            return Err(format!(
                "\"{value}\" is not a value of {}: {}",
                left.trim(),
                allowed.join(", ")
            ));
        }
        Ok(Condition {
            text: text.to_string(),
            subject,
            op,
            value,
        })
    }

    /// The current values of the subject in a scenario (several for `protocol(any)`).
    fn values(&self, s: &Scenario) -> Vec<String> {
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        let resource = |r: &str| s.resources.iter().find(|x| x.name == r);
        match &self.subject {
            Subject::Fencing(r) => resource(r)
                .map(|x| toggles::fencing_value(x.fencing).to_string())
                .into_iter()
                .collect(),
            Subject::Checks(r) => resource(r)
                .map(|x| toggles::checks_value(x.fencing_checks).to_string())
                .into_iter()
                .collect(),
            Subject::FencingSource(r) => resource(r)
                .map(|x| match (x.fencing, &x.fencing_source) {
                    (Fencing::OneSource, Some(source)) => source.clone(),
                    _ => "none".to_string(),
                })
                .into_iter()
                .collect(),
            Subject::Protocol(class) => s
                .clients
                .iter()
                .filter(|c| class.as_ref().is_none_or(|x| &c.name == x))
                .map(|c| toggles::protocol_value(&c.protocol))
                .collect(),
            Subject::Role(x) => s
                .services
                .iter()
                .filter(|y| &y.name == x)
                .map(|y| toggles::role_value(y.subordinate_to.as_deref()))
                .collect(),
            Subject::Outage(x) => s
                .services
                .iter()
                .filter(|y| &y.name == x)
                .map(|y| on(!y.outages.is_empty()))
                .collect(),
            Subject::Partition => vec![on(!s.partitions.is_empty())],
            Subject::Pause => vec![on(!s.pauses.is_empty())],
            Subject::Migration => vec![on(!s.migrations.is_empty())],
            Subject::MigrationMode => vec![match s.migrations.first().map(|m| m.mode) {
                Some(MigrationMode::Naive) => "naive".to_string(),
                Some(MigrationMode::Drain) => "drain".to_string(),
                Some(MigrationMode::Transfer) => "transfer".to_string(),
                None => "none".to_string(),
            }],
            Subject::MigrationAt => s
                .migrations
                .first()
                .map(|m| m.at_ms.to_string())
                .into_iter()
                .collect(),
            Subject::PartitionLength => s
                .partitions
                .first()
                .map(|p| p.duration_ms.to_string())
                .into_iter()
                .collect(),
        }
    }

    /// Whether the condition holds of a scenario. `protocol(any) == X` holds when some class
    /// uses X; `protocol(any) != X` when some class does not. `migration_at` and
    /// `partition_length` compare numbers, and do not hold without a migration or a partition.
    pub fn holds(&self, s: &Scenario) -> bool {
        let values = self.values(s);
        if matches!(
            self.subject,
            Subject::MigrationAt | Subject::PartitionLength
        ) {
            let wanted = decimal(&self.value).unwrap_or(f64::NAN);
            return values
                .iter()
                .filter_map(|v| decimal(v))
                .any(|v| self.op.holds(v, wanted));
        }
        values
            .iter()
            .any(|v| (v == &self.value) == (self.op == Op::Eq))
    }

    /// Why the condition names something the scenario lacks, if it does.
    pub fn problem(&self, s: &Scenario) -> Option<String> {
        let service = |x: &str| s.services.iter().any(|y| y.name == x);
        let missing = match &self.subject {
            Subject::Fencing(r) | Subject::Checks(r) | Subject::FencingSource(r) => {
                (!s.resources.iter().any(|x| &x.name == r))
                    .then(|| format!("there is no resource \"{r}\""))
            }
            Subject::Protocol(Some(c)) => (!s.clients.iter().any(|x| &x.name == c))
                .then(|| format!("there is no client class \"{c}\"")),
            Subject::Role(x) | Subject::Outage(x) => {
                (!service(x)).then(|| format!("there is no service \"{x}\""))
            }
            _ => None,
        };
        missing.or_else(|| match &self.subject {
            Subject::Protocol(_) => {
                let options = toggles::protocol_options(s);
                (!options.iter().any(|o| o.value == self.value)).then(|| {
                    format!(
                        "\"{}\" is not a protocol of this scenario ({})",
                        self.value,
                        options
                            .iter()
                            .map(|o| o.value.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            }
            Subject::FencingSource(_) if self.value != "none" && !service(&self.value) => {
                Some(format!("there is no service \"{}\"", self.value))
            }
            Subject::Role(_) => {
                let ok = self.value == "independent"
                    || self.value.strip_prefix("subordinate:").is_some_and(service);
                (!ok).then(|| {
                    format!(
                        "\"{}\" is not a role (independent or subordinate:SERVICE)",
                        self.value
                    )
                })
            }
            _ => None,
        })
    }
}

/// A number as a claim or a condition writes it: digits, with an optional sign and an optional
/// decimal part (`400`, `-1`, `12.5`). No exponent, infinity or NaN: no figure or time is one.
///
/// Hand-written because `str::parse::<f64>` links a 10 KB table into the course's bundle, and
/// these numbers need none of its range. A whole number up to 2^53 reads exactly; a decimal part
/// of a few digits, as figures and times are written, reads to within a rounding; hundreds of
/// digits read as no number.
fn decimal(text: &str) -> Option<f64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let mut value = 0.0;
    for b in whole.bytes() {
        value = value * 10.0 + f64::from(b - b'0');
    }
    let (mut part, mut scale) = (0.0, 1.0);
    for b in fraction.bytes() {
        part = part * 10.0 + f64::from(b - b'0');
        scale *= 10.0;
    }
    let value = value + part / scale;
    value
        .is_finite()
        .then_some(if negative { -value } else { value })
}

/// Judges [`Test::FairShare`] from the verdict's work by class and the scenario's class sizes.
/// A class of `n` clients gets its fair share when it completed at least `n / 4` of the
/// operations per client that the run's clients completed on average, that is
/// `completed * 4 * clients >= total * n`, in whole numbers, so no rounding decides; a run in
/// which nobody completed anything gives nobody a fair share.
fn fair_share(s: &Scenario, v: &Verdict) -> ClaimResult {
    let size = |class: &str| {
        s.clients
            .iter()
            .find(|c| c.name == class)
            .map_or(1, |c| u64::from(c.count.max(1)))
    };
    let total: u64 = v.class_work.iter().map(|w| w.completed).sum();
    let clients: u64 = v.class_work.iter().map(|w| size(&w.class)).sum();
    if total == 0 {
        return ClaimResult {
            holds: false,
            actual: "no class completed an operation, so none got a fair share".into(),
        };
    }
    let operations = |n: u64| match n {
        0 => "nothing".to_string(),
        1 => "1 operation".to_string(),
        n => format!("{n} operations"),
    };
    let short: Vec<String> = v
        .class_work
        .iter()
        .filter_map(|w| {
            let n = size(&w.class);
            let need = total * n;
            let per = 4 * clients;
            (w.completed * per < need).then(|| {
                format!(
                    "class {} completed {}, where a fair share is at least {}",
                    w.class,
                    operations(w.completed),
                    need.div_ceil(per)
                )
            })
        })
        .collect();
    ClaimResult {
        holds: short.is_empty(),
        actual: if short.is_empty() {
            "every class completed at least its fair share of the operations".into()
        } else {
            short.join("; ")
        },
    }
}
