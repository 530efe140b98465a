//! The words the page uses for engine data: verdict counts, the playhead sentence, an event's
//! details. Each is a direct reading of a verdict, snapshot or event; none adds a judgement.

use crate::monitor::{Exclusion, Integrity, Snapshot, Verdict};
use crate::trace::{seconds, Event};
use crate::ui::compare::Diff;
use crate::world::{Micros, World};

/// One count under the verdict: a stable key (for styling and tests), its words and number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub key: &'static str,
    pub label: &'static str,
    pub value: String,
    /// True when the count is a sign of trouble (non-zero lost updates, a deadlock...).
    pub bad: bool,
}

/// The counts a learner checks after the headline.
pub fn counts(v: &Verdict) -> Vec<Count> {
    let idle: Micros = v.resources.iter().map(|r| r.idle_while_waiting_us).sum();
    let unavailable: Micros = v.unavailability.iter().map(|u| u.unavailable_us).sum();
    vec![
        Count {
            key: "violations",
            label: "Overlapping holds",
            value: v.violation_count.to_string(),
            bad: v.violation_count > 0,
        },
        Count {
            key: "lost-updates",
            label: "Lost updates",
            value: v.lost_updates.to_string(),
            bad: v.lost_updates > 0,
        },
        Count {
            key: "interleaved-writes",
            label: "Writes inside another's critical section",
            value: v.interleaved_writes.to_string(),
            bad: v.interleaved_writes > 0,
        },
        Count {
            key: "rejected-writes",
            label: "Writes rejected by fencing",
            value: v.rejected_writes.to_string(),
            bad: false,
        },
        Count {
            key: "rejected-reads",
            label: "Reads rejected by fencing",
            value: v.rejected_reads.to_string(),
            bad: false,
        },
        Count {
            key: "idle-ms",
            label: "Resource idle while clients waited (ms)",
            value: format!("{}", idle / 1_000),
            bad: false,
        },
        Count {
            key: "unavailable-ms",
            label: "Service unavailable to some region (ms, summed)",
            value: format!("{}", unavailable / 1_000),
            bad: false,
        },
        Count {
            key: "deadlock",
            label: "Deadlock across services",
            value: if v.deadlock {
                "yes".to_string()
            } else if v.wait_cycles.is_empty() {
                "no".to_string()
            } else {
                format!("no ({} cycle(s) broken)", v.wait_cycles.len())
            },
            bad: v.deadlock,
        },
        Count {
            key: "integrity",
            label: "Integrity",
            value: match v.integrity {
                crate::monitor::Integrity::Intact => "intact".to_string(),
                crate::monitor::Integrity::Corrupted => "corrupted".to_string(),
            },
            bad: v.integrity == crate::monitor::Integrity::Corrupted,
        },
    ]
}

/// The sentence beside the playhead: when it is, how far through the run, and who believes
/// they hold what at that moment.
pub fn playhead(s: &Snapshot, time: Micros, cursor: usize, total: usize) -> String {
    let head = format!("At t={} (event {} of {}): ", seconds(time), cursor, total);
    let body = match s.exclusion {
        Exclusion::Broken => {
            let pairs: Vec<String> = s
                .conflicts
                .iter()
                .map(|[a, b]| format!("{a} and {b}"))
                .collect();
            let rows = s
                .believers
                .iter()
                .find(|b| s.conflicts.iter().any(|c| c[0] == b.client))
                .map(|b| format!(" {}[{}]", b.resource, b.rows.join(",")))
                .unwrap_or_default();
            format!(
                "Exclusion broken: {} both believe they hold{} now.",
                pairs.join("; "),
                rows
            )
        }
        Exclusion::Holds => {
            if s.believers.is_empty() {
                "Exclusion holds: nobody believes they hold a lock.".to_string()
            } else {
                let who: Vec<String> = s
                    .believers
                    .iter()
                    .map(|b| format!("{} holds {}[{}]", b.client, b.resource, b.rows.join(",")))
                    .collect();
                format!("Exclusion holds: {}.", who.join("; "))
            }
        }
    };
    head + &body
}

/// The details of one event: its time and what happened.
pub fn event_details(world: &World, events: &[Event], index: usize) -> Option<String> {
    let e = events.get(index)?;
    Some(format!(
        "Event {} at t={}: {}",
        index + 1,
        seconds(e.at),
        e.describe(world)
    ))
}

/// What flipping one toggle changed, line by line: each verdict figure as "x → y" or "x in
/// both", then how many events differ and from when.
pub fn compare_summary(a: &Verdict, b: &Verdict, diff: &Diff) -> Vec<String> {
    let change = |name: &str, x: String, y: String| {
        if x == y {
            format!("{name}: {x} in both")
        } else {
            format!("{name}: {x} → {y}")
        }
    };
    let exclusion = |v: &Verdict| {
        if v.violation_count > 0 {
            format!("broken ({} overlap(s))", v.violation_count)
        } else {
            "holds".to_string()
        }
    };
    let overlaps = |v: &Verdict| {
        v.violations
            .iter()
            .map(|x| {
                (
                    x.from_us,
                    x.to_us,
                    x.holders[0].client.clone(),
                    x.holders[1].client.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut exclusion_line = change("Exclusion", exclusion(a), exclusion(b));
    if a.violation_count == b.violation_count && a.violation_count > 0 && overlaps(a) != overlaps(b)
    {
        exclusion_line = format!(
            "Exclusion: broken ({} overlap(s)) in both, but not the same overlaps",
            a.violation_count
        );
    }
    let integrity = |v: &Verdict| match v.integrity {
        Integrity::Intact => "intact".to_string(),
        Integrity::Corrupted => "corrupted".to_string(),
    };
    let idle = |v: &Verdict| {
        let us: u64 = v.resources.iter().map(|r| r.idle_while_waiting_us).sum();
        format!("{} ms", us / 1_000)
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    vec![
        exclusion_line,
        change("Integrity", integrity(a), integrity(b)),
        change("Lost updates", a.lost_updates.to_string(), b.lost_updates.to_string()),
        change(
            "Writes inside another's critical section",
            a.interleaved_writes.to_string(),
            b.interleaved_writes.to_string(),
        ),
        change("Rejected writes", a.rejected_writes.to_string(), b.rejected_writes.to_string()),
        change("Rejected reads", a.rejected_reads.to_string(), b.rejected_reads.to_string()),
        change("Idle while clients waited", idle(a), idle(b)),
        change("Deadlock", yes_no(a.deadlock), yes_no(b.deadlock)),
        match diff.first_divergence {
            Some(t) => format!(
                "{} event(s) only in this run, {} only in the flipped run; the runs first differ at t={}.",
                diff.count_a(),
                diff.count_b(),
                seconds(t)
            ),
            None => "The two traces are identical.".to_string(),
        },
    ]
}
