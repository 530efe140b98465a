//! Cues and highlights: what a step points at in its run.
//!
//! A [`Cue`] is a sentence tied to an event pattern. It is visible exactly when the playhead is
//! at or past the first event that matches, so scrubbing back takes it away again: the
//! commentary is a pure function of the playhead. An [`EventPattern`] names an event by the
//! kind `lockstep run --json` gives it (`granted`, `write`, `pause_started`, ...) or by one of
//! three kinds the verdict derives (`overlap_started`, `lost_update`, `wait_cycle_formed`), and
//! narrows it by client, service and resource.

use serde::{Deserialize, Serialize};

use super::claim::Condition;
use crate::monitor::Verdict;
use crate::scenario::Scenario;
use crate::trace::{Endpoint, Event, ServiceOp, What};
use crate::world::{Micros, World};

/// The kinds of trace events a pattern can name: the `event` of the JSON trace, with a
/// service's log entries named by their `op`.
pub const TRACE_KINDS: [&str; 36] = [
    "partition_started",
    "partition_ended",
    "outage_started",
    "outage_ended",
    "restarted_empty",
    "pause_started",
    "pause_ended",
    "migrated",
    "op_started",
    "acquire_sent",
    "skipped_unreachable",
    "attempt_aborted",
    "gave_up",
    "quorum_reached",
    "quorum_missed",
    "validity_spent",
    "belief_started",
    "belief_ended",
    "lock_transferred",
    "stale_grant_released",
    "read",
    "write",
    "message_lost",
    "client_stopped",
    "granted",
    "queued",
    "refused",
    "released",
    "release_ignored",
    "cancelled",
    "expired",
    "superseded",
    "moved_out",
    "transferred_in",
    "drained",
    "forgotten",
];

/// Kinds the verdict derives from the whole trace: the start of an overlap of two beliefs,
/// a write that erased another's update, and a wait-for cycle forming.
pub const DERIVED_KINDS: [&str; 3] = ["overlap_started", "lost_update", "wait_cycle_formed"];

/// Which events a cue or highlight points at.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventPattern {
    /// The event's kind (see [`TRACE_KINDS`] and [`DERIVED_KINDS`]).
    pub event: String,
    /// A client class or instance the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// A service the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// A resource the event is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// For reads and writes: accepted (true) or rejected by fencing (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<bool>,
    /// For reads and writes: the value of the token the access carried, so that a cue about
    /// "the write with token 1" cannot point at another write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    /// Only events at or after this time of the run, in milliseconds: for a sentence about what
    /// happens once something else has (a grant after the partition began).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<u64>,
    /// The n-th matching event (from 1); the first by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u32>,
}

/// Whether a client instance belongs to `who`, a class or an instance name.
pub(crate) fn is_of(instance: &str, who: &str) -> bool {
    instance == who
        || instance
            .strip_prefix(who)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What an event is about, by index: clients, services and a resource.
#[derive(Default)]
struct About {
    clients: Vec<u32>,
    services: Vec<u32>,
    resource: Option<u32>,
    accepted: Option<bool>,
    token: Option<u64>,
}

fn kind_of(what: &What) -> &'static str {
    match what {
        What::PartitionStarted { .. } => "partition_started",
        What::PartitionEnded { .. } => "partition_ended",
        What::OutageStarted { .. } => "outage_started",
        What::OutageEnded { .. } => "outage_ended",
        What::PauseStarted { .. } => "pause_started",
        What::PauseEnded { .. } => "pause_ended",
        What::RestartedEmpty { .. } => "restarted_empty",
        What::Migrated { .. } => "migrated",
        What::OpStarted { .. } => "op_started",
        What::AcquireSent { .. } => "acquire_sent",
        What::SkippedUnreachable { .. } => "skipped_unreachable",
        What::AttemptAborted { .. } => "attempt_aborted",
        What::GaveUp { .. } => "gave_up",
        What::QuorumReached { .. } => "quorum_reached",
        What::QuorumMissed { .. } => "quorum_missed",
        What::ValiditySpent { .. } => "validity_spent",
        What::BeliefStarted { .. } => "belief_started",
        What::BeliefEnded { .. } => "belief_ended",
        What::LockTransferred { .. } => "lock_transferred",
        What::StaleGrantReleased { .. } => "stale_grant_released",
        What::Read { .. } => "read",
        What::Write { .. } => "write",
        What::MessageLost { .. } => "message_lost",
        What::ClientStopped { .. } => "client_stopped",
        What::Service { op, .. } => match op {
            ServiceOp::Granted { .. } => "granted",
            ServiceOp::Queued { .. } => "queued",
            ServiceOp::Refused { .. } => "refused",
            ServiceOp::Released { .. } => "released",
            ServiceOp::ReleaseIgnored { .. } => "release_ignored",
            ServiceOp::Cancelled { .. } => "cancelled",
            ServiceOp::Expired { .. } => "expired",
            ServiceOp::Superseded { .. } => "superseded",
            ServiceOp::MovedOut { .. } => "moved_out",
            ServiceOp::TransferredIn { .. } => "transferred_in",
            ServiceOp::Drained { .. } => "drained",
            ServiceOp::Forgotten { .. } => "forgotten",
        },
    }
}

fn about(world: &World, what: &What) -> About {
    let mut a = About::default();
    let endpoint = |e: &Endpoint, a: &mut About| match *e {
        Endpoint::Client(c) => a.clients.push(c),
        Endpoint::Service(s) => a.services.push(s),
        Endpoint::Resource(r) => a.resource = Some(r),
    };
    match what {
        What::PartitionStarted { .. } | What::PartitionEnded { .. } => {}
        What::OutageStarted { service }
        | What::OutageEnded { service }
        | What::RestartedEmpty { service } => a.services.push(*service),
        What::PauseStarted { client }
        | What::PauseEnded { client }
        | What::OpStarted { client, .. }
        | What::AttemptAborted { client, .. }
        | What::GaveUp { client }
        | What::QuorumReached { client, .. }
        | What::QuorumMissed { client, .. }
        | What::ValiditySpent { client, .. }
        | What::ClientStopped { client } => a.clients.push(*client),
        What::Migrated {
            migration,
            already_in,
            into,
        } => {
            let m = &world.migrations[*migration as usize];
            a.services = vec![m.from, m.to];
            a.services.extend(already_in.iter().chain(into));
            a.resource = Some(m.resource);
        }
        What::AcquireSent { client, service }
        | What::SkippedUnreachable { client, service }
        | What::StaleGrantReleased {
            client, service, ..
        } => {
            a.clients.push(*client);
            a.services.push(*service);
        }
        What::BeliefStarted {
            client,
            resource,
            grants,
            ..
        } => {
            a.clients.push(*client);
            a.resource = Some(*resource);
            a.services = grants.iter().map(|g| g.service).collect();
        }
        What::BeliefEnded {
            client, resource, ..
        } => {
            a.clients.push(*client);
            a.resource = Some(*resource);
        }
        What::LockTransferred {
            client, from, to, ..
        } => {
            a.clients.push(*client);
            a.services = vec![*from, *to];
        }
        What::Read {
            client,
            resource,
            token,
            accepted,
            ..
        }
        | What::Write {
            client,
            resource,
            token,
            accepted,
            ..
        } => {
            a.clients.push(*client);
            a.resource = Some(*resource);
            a.services.extend(token.map(|t| t.service));
            a.accepted = Some(*accepted);
            a.token = token.map(|t| t.value);
        }
        What::MessageLost { from, to, .. } => {
            endpoint(from, &mut a);
            endpoint(to, &mut a);
        }
        What::Service {
            service,
            resource,
            op,
            ..
        } => {
            a.services.push(*service);
            a.resource = Some(*resource);
            let client = match *op {
                ServiceOp::Granted { client, .. }
                | ServiceOp::Queued { client, .. }
                | ServiceOp::Refused { client, .. }
                | ServiceOp::Released { client, .. }
                | ServiceOp::ReleaseIgnored { client, .. }
                | ServiceOp::Cancelled { client }
                | ServiceOp::Expired { client, .. }
                | ServiceOp::Superseded { client, .. }
                | ServiceOp::MovedOut { client, .. }
                | ServiceOp::TransferredIn { client, .. }
                | ServiceOp::Forgotten { client, .. } => Some(client),
                ServiceOp::Drained { .. } => None,
            };
            a.clients.extend(client);
        }
    }
    a
}

impl EventPattern {
    fn wants(&self, clients: &[&str], services: &[&str], resource: Option<&str>) -> bool {
        self.client
            .as_ref()
            .is_none_or(|w| clients.iter().any(|c| is_of(c, w)))
            && self
                .service
                .as_ref()
                .is_none_or(|w| services.iter().any(|s| s == w))
            && self
                .resource
                .as_ref()
                .is_none_or(|w| resource == Some(w.as_str()))
    }

    /// Whether a trace event matches (the `nth` is not considered).
    pub fn matches(&self, world: &World, event: &Event) -> bool {
        if kind_of(&event.what) != self.event {
            return false;
        }
        if self
            .after_ms
            .is_some_and(|ms| event.at < ms.saturating_mul(1000))
        {
            return false;
        }
        let a = about(world, &event.what);
        if self.accepted.is_some() && self.accepted != a.accepted {
            return false;
        }
        if self.token.is_some() && self.token != a.token {
            return false;
        }
        let clients: Vec<&str> = a
            .clients
            .iter()
            .map(|c| world.clients[*c as usize].name.as_str())
            .collect();
        let services: Vec<&str> = a
            .services
            .iter()
            .map(|s| world.services[*s as usize].name.as_str())
            .collect();
        let resource = a
            .resource
            .map(|r| world.resources[r as usize].name.as_str());
        self.wants(&clients, &services, resource)
    }

    /// The times of the derived events of this pattern's kind that match, in order.
    fn derived(&self, verdict: &Verdict) -> Vec<Micros> {
        let mut times: Vec<Micros> = match self.event.as_str() {
            "overlap_started" => verdict
                .violations
                .iter()
                .filter(|v| {
                    let clients = [v.holders[0].client.as_str(), v.holders[1].client.as_str()];
                    let services: Vec<&str> = v
                        .holders
                        .iter()
                        .flat_map(|h| h.grants.iter().map(|g| g.service.as_str()))
                        .collect();
                    self.wants(&clients, &services, Some(&v.resource))
                })
                .map(|v| v.from_us)
                .collect(),
            "lost_update" => verdict
                .lost_update_details
                .iter()
                .filter(|d| {
                    let clients = [d.lost_writer.as_str(), d.overwritten_by.as_str()];
                    self.wants(&clients, &[], Some(&d.resource))
                })
                .map(|d| d.overwritten_at_us)
                .collect(),
            "wait_cycle_formed" => verdict
                .wait_cycles
                .iter()
                .filter(|c| {
                    let clients: Vec<&str> = c.clients.iter().map(String::as_str).collect();
                    let services: Vec<&str> = c.services.iter().map(String::as_str).collect();
                    self.wants(&clients, &services, None)
                })
                .map(|c| c.formed_us)
                .collect(),
            _ => Vec::new(),
        };
        if let Some(ms) = self.after_ms {
            times.retain(|&t| t >= ms.saturating_mul(1000));
        }
        crate::sorted::sort(&mut times);
        times
    }

    /// Why the pattern cannot match anything in `s`, if it names an unknown kind or name.
    pub fn problem(&self, s: &Scenario) -> Option<String> {
        if !TRACE_KINDS.contains(&self.event.as_str())
            && !DERIVED_KINDS.contains(&self.event.as_str())
        {
            return Some(format!(
                "unknown event kind \"{}\"; the kinds are {} and {}",
                self.event,
                TRACE_KINDS.join(", "),
                DERIVED_KINDS.join(", ")
            ));
        }
        if self.nth == Some(0) {
            return Some("nth counts from 1".into());
        }
        if let Some(c) = &self.client {
            let known = s.clients.iter().any(|x| &x.name == c)
                || s.client_instance_names().iter().any(|x| x == c);
            if !known {
                return Some(format!("there is no client class or instance \"{c}\""));
            }
        }
        if let Some(x) = &self.service {
            if !s.services.iter().any(|y| &y.name == x) {
                return Some(format!("there is no service \"{x}\""));
            }
        }
        if let Some(r) = &self.resource {
            if !s.resources.iter().any(|y| &y.name == r) {
                return Some(format!("there is no resource \"{r}\""));
            }
        }
        None
    }
}

/// A sentence that appears when the playhead reaches an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cue {
    pub line: u32,
    /// The sentence (Markdown, rendered like narration).
    pub text: String,
    pub when: EventPattern,
    /// Conditions on the scenario the sentence depends on (`checks(accounts) == writes`): in
    /// a run of a scenario where one fails, the cue is not shown, since the run would
    /// contradict it.
    pub given: Vec<Condition>,
}

/// Where a cue's event is: its time, and its index in the trace (none for derived kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub at: Micros,
    pub event: Option<usize>,
}

/// The event each cue waits for in a run: the pattern's n-th match, or none if it never
/// happens. Costs one pass over the trace per cue.
pub fn cue_marks(
    cues: &[Cue],
    world: &World,
    events: &[Event],
    verdict: &Verdict,
) -> Vec<Option<Mark>> {
    cues.iter()
        .map(|c| first_mark(&c.when, world, events, verdict))
        .collect()
}

fn first_mark(
    p: &EventPattern,
    world: &World,
    events: &[Event],
    verdict: &Verdict,
) -> Option<Mark> {
    let n = p.nth.unwrap_or(1).max(1) as usize;
    if DERIVED_KINDS.contains(&p.event.as_str()) {
        return p
            .derived(verdict)
            .get(n - 1)
            .map(|&at| Mark { at, event: None });
    }
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| p.matches(world, e))
        .nth(n - 1)
        .map(|(i, e)| Mark {
            at: e.at,
            event: Some(i),
        })
}

/// [`cue_marks`] for the cues whose conditions hold of the scenario that ran: a cue whose
/// sentence the scenario contradicts has no mark, and is never shown.
pub fn shown_marks(
    cues: &[Cue],
    scenario: &Scenario,
    world: &World,
    events: &[Event],
    verdict: &Verdict,
) -> Vec<Option<Mark>> {
    cues.iter()
        .map(|c| {
            c.given
                .iter()
                .all(|g| g.holds(scenario))
                .then(|| first_mark(&c.when, world, events, verdict))
                .flatten()
        })
        .collect()
}

/// The cues visible with the playhead at `playhead`: those whose event happened at or before
/// it, in the order they appear.
pub fn cues_at<'c>(
    cues: &'c [Cue],
    world: &World,
    events: &[Event],
    verdict: &Verdict,
    playhead: Micros,
) -> Vec<&'c Cue> {
    visible(cues, &cue_marks(cues, world, events, verdict), playhead)
}

/// The same from marks computed once per run ([`cue_marks`]), for a playhead that moves.
pub fn visible<'c>(cues: &'c [Cue], marks: &[Option<Mark>], playhead: Micros) -> Vec<&'c Cue> {
    let mut shown: Vec<(Micros, usize)> = marks
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.filter(|m| m.at <= playhead).map(|m| (m.at, i)))
        .collect();
    crate::sorted::sort(&mut shown);
    shown.into_iter().map(|(_, i)| &cues[i]).collect()
}

/// A lane to draw attention to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneRef {
    /// A client class (all its instances) or one instance.
    Client(String),
    Service(String),
    Resource(String),
}

impl std::str::FromStr for LaneRef {
    type Err = String;

    fn from_str(text: &str) -> Result<LaneRef, String> {
        match text.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["client", name] => Ok(LaneRef::Client(name.to_string())),
            ["service", name] => Ok(LaneRef::Service(name.to_string())),
            ["resource", name] => Ok(LaneRef::Resource(name.to_string())),
            _ => Err(format!(
                "\"{text}\" is not a lane: write \"client NAME\", \"service NAME\" or \"resource NAME\""
            )),
        }
    }
}

impl LaneRef {
    fn problem(&self, s: &Scenario) -> Option<String> {
        match self {
            LaneRef::Client(c)
                if !s.clients.iter().any(|x| &x.name == c)
                    && !s.client_instance_names().contains(c) =>
            {
                Some(format!("there is no client class or instance \"{c}\""))
            }
            LaneRef::Service(x) if !s.services.iter().any(|y| &y.name == x) => {
                Some(format!("there is no service \"{x}\""))
            }
            LaneRef::Resource(r) if !s.resources.iter().any(|y| &y.name == r) => {
                Some(format!("there is no resource \"{r}\""))
            }
            _ => None,
        }
    }
}

/// What a step asks the timeline to emphasise.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Highlight {
    pub lanes: Vec<LaneRef>,
    /// Events to mark (every match, or only the n-th when the pattern says so).
    pub events: Vec<EventPattern>,
    /// Whether to emphasise the overlaps of believed holds.
    pub overlaps: bool,
}

impl Highlight {
    /// Whether the lane of a client instance is highlighted.
    pub fn client(&self, instance: &str) -> bool {
        self.lanes
            .iter()
            .any(|l| matches!(l, LaneRef::Client(c) if is_of(instance, c)))
    }

    /// Whether a service's lane is highlighted.
    pub fn service(&self, name: &str) -> bool {
        self.lanes
            .iter()
            .any(|l| matches!(l, LaneRef::Service(x) if x == name))
    }

    /// Whether a resource's lane is highlighted.
    pub fn resource(&self, name: &str) -> bool {
        self.lanes
            .iter()
            .any(|l| matches!(l, LaneRef::Resource(x) if x == name))
    }

    pub(crate) fn problem(&self, s: &Scenario) -> Option<String> {
        self.lanes.iter().find_map(|l| l.problem(s)).or_else(|| {
            self.events.iter().find_map(|p| {
                if DERIVED_KINDS.contains(&p.event.as_str()) {
                    Some(format!(
                        "highlights mark trace events; \"{}\" is derived by the verdict (use \
                         overlaps = true for overlaps)",
                        p.event
                    ))
                } else {
                    p.problem(s)
                }
            })
        })
    }
}

/// The indices of the trace events a highlight marks, in order.
pub fn highlighted_events(h: &Highlight, world: &World, events: &[Event]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for p in &h.events {
        let matches = events
            .iter()
            .enumerate()
            .filter(|(_, e)| p.matches(world, e))
            .map(|(i, _)| i);
        match p.nth {
            Some(n) => out.extend(matches.skip(n.max(1) as usize - 1).take(1)),
            None => out.extend(matches),
        }
    }
    crate::sorted::sort(&mut out);
    out.dedup();
    out
}
