//! The verdict's words, and the trace as text with the writes that lost updates marked.

use crate::trace::{seconds, Event};
use crate::world::World;

use super::deadlock::WaitCycle;
use super::exclusion::Holder;
use super::integrity::LostUpdates;
use super::{Integrity, Verdict};

impl Verdict {
    /// The verdict in words a learner understands. The first line begins "Exclusion holds" or
    /// "Exclusion broken".
    pub fn summary(&self) -> String {
        let mut out = String::new();
        match self.violations.first() {
            None if self.unprotected_clients.is_empty() => out.push_str(
                "Exclusion holds: no two clients believed they held the same rows at once.",
            ),
            None => out.push_str(&format!(
                "Exclusion holds, but only by luck: no two critical sections overlapped, yet {} took no lock.",
                self.unprotected_clients.join(", ")
            )),
            Some(v) => {
                let grants = |h: &Holder| {
                    if h.grants.is_empty() {
                        return "no lock at all".to_string();
                    }
                    h.grants
                        .iter()
                        .map(|g| {
                            format!(
                                "service {} granted at its instant {} (token {})",
                                g.service, g.instant, g.token
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" and ")
                };
                // A client without a lock holds nothing; it only works on the rows.
                let verb = if v.holders.iter().all(|h| !h.grants.is_empty()) {
                    "held"
                } else {
                    "worked on"
                };
                out.push_str(&format!(
                    "Exclusion broken: {} and {} both {verb} {}[{}] from t={} to t={}; for {}, {}; for {}, {}.",
                    v.holders[0].client,
                    v.holders[1].client,
                    v.resource,
                    v.rows.join(","),
                    seconds(v.from_us),
                    seconds(v.to_us),
                    v.holders[0].client,
                    grants(&v.holders[0]),
                    v.holders[1].client,
                    grants(&v.holders[1]),
                ));
                // A service that granted to both after forgetting the first grant is why two
                // majorities could meet there.
                let since = v.holders[0].since_us.min(v.holders[1].since_us);
                for r in &self.restarts {
                    let both = v
                        .holders
                        .iter()
                        .all(|h| h.grants.iter().any(|g| g.service == r.service));
                    let between = since <= r.at_us && r.at_us <= v.to_us;
                    if let (true, true, Some((client, token))) = (both, between, r.forgotten.first())
                    {
                        out.push_str(&format!(
                            " Service {} granted to both: it restarted empty at t={} and forgot {}'s grant (token {}).",
                            r.service,
                            seconds(r.at_us),
                            client,
                            token
                        ));
                    }
                }
                if self.violation_count > 1 {
                    out.push_str(&format!(" ({} overlaps in all.)", self.violation_count));
                }
            }
        }
        out.push('\n');
        out.push_str(&format!(
            "Integrity {}: {} lost update(s), {} write(s) inside another's critical section, {} write(s) and {} read(s) rejected by fencing, {} accepted write(s).\n",
            match self.integrity {
                Integrity::Intact => "intact",
                Integrity::Corrupted => "corrupted",
            },
            self.lost_updates,
            self.interleaved_writes,
            self.rejected_writes,
            self.rejected_reads,
            self.accepted_writes
        ));
        if let Some(d) = self.lost_update_details.first() {
            out.push_str(&format!(
                "  first lost update: {}'s write to {}[{}] at t={} was overwritten by {}'s write at t={}, computed from a read taken before it.\n",
                d.lost_writer,
                d.resource,
                d.row,
                seconds(d.lost_at_us),
                d.overwritten_by,
                seconds(d.overwritten_at_us)
            ));
        }
        if self.deadlock {
            out.push_str("Deadlock: a wait-for cycle across services that nothing times out.\n");
        } else if !self.wait_cycles.is_empty() {
            let standing = self
                .wait_cycles
                .last()
                .is_some_and(|c| c.broken_us.is_none());
            if standing {
                out.push_str(&format!(
                    "No deadlock, but {} wait-for cycle(s) formed; the last still stood when the run ended, though a timeout or lease can break it.\n",
                    self.wait_cycle_count
                ));
            } else {
                out.push_str(&format!(
                    "No deadlock, but {} wait-for cycle(s) formed and were broken.\n",
                    self.wait_cycle_count
                ));
            }
        } else {
            out.push_str("No deadlock.\n");
        }
        if self.livelock_count > 1 {
            out.push_str(&format!(
                "Livelocks: {} stretch(es) in which clients waited and nothing completed while wait-for cycles kept forming and breaking.\n",
                self.livelock_count
            ));
        }
        for l in self.livelocks.iter().take(3) {
            out.push_str(&format!(
                "Livelock: from t={} to t={}, {} wait-for cycles formed and broke while {} waited and no operation completed.\n",
                seconds(l.from_us),
                seconds(l.to_us),
                l.broken_cycles,
                l.clients.join(", ")
            ));
        }
        const CYCLES_LISTED: usize = 10;
        let cycle_line = |c: &WaitCycle| {
            format!(
                "  cycle {} over {} from t={}{}\n",
                c.clients.join(" -> "),
                c.services.join(","),
                seconds(c.formed_us),
                match (&c.broken_us, &c.broken_by) {
                    (Some(t), Some(by)) => format!(", broken at t={} by {}", seconds(*t), by),
                    _ => ", never broken".to_string(),
                }
            )
        };
        for c in self.wait_cycles.iter().take(CYCLES_LISTED) {
            out.push_str(&cycle_line(c));
        }
        if self.wait_cycle_count as usize > CYCLES_LISTED {
            out.push_str(&format!(
                "  ... and {} more cycle(s)\n",
                self.wait_cycle_count as usize - CYCLES_LISTED
            ));
            // A cycle that never broke is the one that matters most: always name it. The
            // standing ones come last, at most one per resource.
            for c in self.wait_cycles.iter().skip(CYCLES_LISTED) {
                if c.broken_us.is_none() {
                    out.push_str(&cycle_line(c));
                }
            }
        }
        for r in &self.restarts {
            let forgot = if r.forgotten.is_empty() {
                "no grant".to_string()
            } else {
                r.forgotten
                    .iter()
                    .map(|(c, t)| format!("{c}'s grant (token {t})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let waits = match r.forgotten_waits {
                0 => String::new(),
                n => format!(" and {n} queued request(s)"),
            };
            out.push_str(&format!(
                "Service {} restarted empty at t={}: it forgot {forgot}{waits}, and its tokens started again at {}.\n",
                r.service,
                seconds(r.at_us),
                r.next_token
            ));
        }
        let o = &self.operations;
        if o.quorums_missed > 0 || o.validity_spent > 0 {
            out.push_str(&format!(
                "Majority locks: {} attempt(s) missed their quorum (split votes, or services that did not answer in time); {} got their quorum only after the lock's validity was spent.\n",
                o.quorums_missed, o.validity_spent
            ));
        }
        out.push_str(&format!(
            "Incomparable grant pairs: {} (services overlapping: {}; at most {} at once).\n",
            self.incomparable_pairs,
            if self.overlapping_service_pairs.is_empty() {
                "none".to_string()
            } else {
                self.overlapping_service_pairs
                    .iter()
                    .map(|p| format!("{}+{}", p[0], p[1]))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            self.max_simultaneous_holders
        ));
        for r in &self.resources {
            out.push_str(&format!(
                "Resource {}: idle {} while clients waited; rows {}.\n",
                r.resource,
                seconds(r.idle_while_waiting_us),
                r.rows
                    .iter()
                    .map(|(k, v)| format!("{k}={v} ({} writes)", r.increments[k]))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for u in &self.unavailability {
            if u.unavailable_us > 0 {
                out.push_str(&format!(
                    "Service {} unavailable to {} ({}) for {}.\n",
                    u.service,
                    u.region,
                    u.classes.join(", "),
                    seconds(u.unavailable_us)
                ));
            }
        }
        let o = &self.operations;
        out.push_str(&format!(
            "Operations: {} started, {} completed, {} gave up, {} abandoned, {} rejected.\n",
            o.started, o.completed, o.gave_up, o.abandoned, o.rejected
        ));
        // Each class's work and what it paid in waiting for its locks; a class that got
        // nothing done is said so plainly, whatever the totals above.
        for w in &self.class_work {
            if w.completed == 0 {
                out.push_str(&format!(
                    "Class {} completed no operation: its clients got no work done.\n",
                    w.class
                ));
            } else {
                out.push_str(&format!(
                    "Class {}: {} completed; {} on average from an operation's start to holding its locks.\n",
                    w.class,
                    w.completed,
                    seconds(w.mean_wait_us())
                ));
            }
        }
        for l in &self.service_logs {
            if !l.consistent {
                out.push_str(&format!(
                    "Service {}'s log is INCONSISTENT: {}\n",
                    l.service,
                    l.problems.join("; ")
                ));
            }
        }
        if self.truncated {
            out.push_str(&format!(
                "The run stopped early at t={}: it reached its event budget.\n",
                seconds(self.end_us)
            ));
        }
        out
    }
}

/// The trace as text, one line per event, with each write that erased updates for good marked
/// as the verdict counts it: `LOST n update(s)` where n is how many increments it erased (see
/// [`lost_updates`](super::lost_updates)). Lines are made one at a time, so a long trace can be streamed.
pub fn trace_lines<'a>(
    world: &'a World,
    events: &'a [Event],
    lost: &'a LostUpdates,
) -> impl Iterator<Item = String> + 'a {
    let mut marks = lost.marks.iter().peekable();
    events.iter().enumerate().map(move |(i, e)| {
        let mut line = e.render(world);
        if let Some((_, n)) = marks.next_if(|(event, _)| *event == i) {
            line.push_str(&format!(", LOST {n} update(s)"));
        }
        line
    })
}

/// The whole trace as text, as [`trace_lines`] makes it, each line ending in a newline.
pub fn render_trace(world: &World, events: &[Event], lost: &LostUpdates) -> String {
    let mut out = String::new();
    for line in trace_lines(world, events, lost) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
