//! The words the page uses for engine data: verdict counts, the playhead sentence, an event's
//! details. Each is a direct reading of a verdict, snapshot or event; none adds a judgement.

use crate::monitor::{Exclusion, Snapshot, Verdict};
use crate::trace::{seconds, Event};
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

/// The details of one event: its time and its line of the trace.
pub fn event_details(world: &World, events: &[Event], index: usize) -> Option<String> {
    let e = events.get(index)?;
    let line = e.render(world);
    // The rendered line starts with its own time stamp and pads columns; the details say the
    // time once and need no columns.
    let what = line.trim_start().split_once(' ').map_or("", |(_, w)| w);
    let words: Vec<&str> = what.split_whitespace().collect();
    Some(format!(
        "Event {} at t={}: {}",
        index + 1,
        seconds(e.at),
        words.join(" ")
    ))
}
