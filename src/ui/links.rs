//! Messages as links between lanes: each request, grant, read, write and release, joined from
//! the event that sent it to the event it led to, so that a learner can follow *why* a grant
//! happened and which write carried which token.
//!
//! Every link is read from the trace; none is guessed. The trace records when a request was
//! sent (`AcquireSent`) and when the service acted on it, when a grant was made and when the
//! client acted on it, when a client entered its critical section (which is when it sends its
//! read) and when the read arrived. It does not record when a write was sent, so a write's link
//! joins the client to the resource at the moment the write landed: it says who wrote, with
//! which token, not how long the write was in flight.

use std::collections::VecDeque;

use crate::trace::{Endpoint, Event, ServiceOp, Token, What};
use crate::world::{Micros, ProtocolConfig, World};

/// What a link carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkKind {
    /// A client's acquire request, from its sending to the service's answer (grant, queue or
    /// refusal) on arrival.
    Request,
    /// A service's grant, from the grant to what the client did because of it (believe it holds
    /// the lock, ask the next service, or release a grant it no longer wanted).
    Grant,
    /// A client's read, sent as it enters its critical section, to its arrival at the resource.
    Read,
    /// A client's write as it lands at the resource, with the token it carried.
    Write,
    /// A client's release (or cancellation), from its letting go to the service's log.
    Release,
}

impl LinkKind {
    pub const ALL: [LinkKind; 5] = [
        LinkKind::Request,
        LinkKind::Grant,
        LinkKind::Read,
        LinkKind::Write,
        LinkKind::Release,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Request => "request",
            LinkKind::Grant => "grant",
            LinkKind::Read => "read",
            LinkKind::Write => "write",
            LinkKind::Release => "release",
        }
    }

    /// What the link means, for the legend.
    pub fn meaning(self) -> &'static str {
        match self {
            LinkKind::Request => "request: client asks a service (arrow to its answer)",
            LinkKind::Grant => "grant: the service's grant, to what the client did with it",
            LinkKind::Read => "read: sent on entering the critical section, with its token",
            LinkKind::Write => "write: who wrote, with which token, as it landed",
            LinkKind::Release => "release: the client lets go, to the service's log",
        }
    }
}

/// One message drawn between two lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    /// The event behind the message: the request sent, the grant made, the entry into the
    /// critical section, the read a write was computed from, the letting go.
    pub cause: usize,
    /// The event the message led to.
    pub effect: usize,
    pub from_lane: usize,
    pub from: Micros,
    pub to_lane: usize,
    pub to: Micros,
    /// The token a read or write carried.
    pub token: Option<Token>,
}

/// Which lane stands for what: clients first, then services, resources and the fault lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneIndex {
    pub clients: usize,
    pub services: usize,
    pub resources: usize,
}

impl LaneIndex {
    pub fn of_world(world: &World) -> LaneIndex {
        LaneIndex {
            clients: world.clients.len(),
            services: world.services.len(),
            resources: world.resources.len(),
        }
    }

    pub fn client(&self, c: u32) -> usize {
        c as usize
    }

    pub fn service(&self, s: u32) -> usize {
        self.clients + s as usize
    }

    pub fn resource(&self, r: u32) -> usize {
        self.clients + self.services + r as usize
    }

    pub fn faults(&self) -> usize {
        self.clients + self.services + self.resources
    }

    /// The lane an event is drawn in.
    pub fn of(&self, what: &What) -> usize {
        match what {
            What::OpStarted { client, .. }
            | What::AcquireSent { client, .. }
            | What::SkippedUnreachable { client, .. }
            | What::AttemptAborted { client, .. }
            | What::GaveUp { client }
            | What::QuorumReached { client, .. }
            | What::QuorumMissed { client, .. }
            | What::ValiditySpent { client, .. }
            | What::BeliefStarted { client, .. }
            | What::BeliefEnded { client, .. }
            | What::LockTransferred { client, .. }
            | What::StaleGrantReleased { client, .. }
            | What::ClientStopped { client } => self.client(*client),
            // A restart that forgot every grant is the service's own doing, drawn in its lane
            // beside the grants it forgot.
            What::Service { service, .. } | What::RestartedEmpty { service } => {
                self.service(*service)
            }
            What::Read { resource, .. } | What::Write { resource, .. } => self.resource(*resource),
            What::PartitionStarted { .. }
            | What::PartitionEnded { .. }
            | What::OutageStarted { .. }
            | What::OutageEnded { .. }
            | What::PauseStarted { .. }
            | What::PauseEnded { .. }
            | What::Migrated { .. }
            | What::MessageLost { .. } => self.faults(),
        }
    }
}

/// A grant on its way to its client: (event, service, token, whether the attempt it answers
/// was abandoned).
type InFlightGrant = (usize, u32, u64, bool);

/// Every message of a run as a link, in the order of the events they led to.
///
/// Cost: one pass over the trace. Memory: a queue of requests in flight per client and
/// service, the grants in flight per client (a few each), and one link per message.
pub fn links(world: &World, events: &[Event], lanes: &LaneIndex) -> Vec<Link> {
    let services = world.services.len();
    let slot = |c: u32, s: u32| c as usize * services + s as usize;
    let mut requests: Vec<VecDeque<usize>> = vec![VecDeque::new(); world.clients.len() * services];
    // A client queued at a service is granted later by a release, not by a request arriving.
    let mut queued: Vec<bool> = vec![false; world.clients.len() * services];
    let mut grants: Vec<Vec<InFlightGrant>> = vec![Vec::new(); world.clients.len()];
    let mut belief: Vec<Option<usize>> = vec![None; world.clients.len()];
    let mut read: Vec<Option<usize>> = vec![None; world.clients.len()];
    let mut let_go: Vec<Option<usize>> = vec![None; world.clients.len()];
    let sequential = |c: u32| {
        matches!(
            world.clients[c as usize].protocol,
            ProtocolConfig::Locks { ordered: true, .. } | ProtocolConfig::TokenChain { .. }
        )
    };
    let mut out: Vec<Link> = Vec::new();
    let link = |kind: LinkKind, cause: usize, effect: usize, token: Option<Token>| Link {
        kind,
        cause,
        effect,
        from_lane: lanes.of(&events[cause].what),
        from: events[cause].at,
        to_lane: lanes.of(&events[effect].what),
        to: events[effect].at,
        token,
    };
    for (i, e) in events.iter().enumerate() {
        match &e.what {
            What::AcquireSent { client, service } => {
                // In a protocol that asks one service after another, the next request is sent
                // the moment the previous grant arrives: that grant led to this request.
                if sequential(*client) {
                    let g = &mut grants[*client as usize];
                    if let Some(k) = g.iter().rposition(|x| !x.3 && x.1 != *service) {
                        let (cause, ..) = g.remove(k);
                        out.push(link(LinkKind::Grant, cause, i, None));
                    }
                }
                requests[slot(*client, *service)].push_back(i);
            }
            What::AttemptAborted { client, .. } => {
                for g in &mut grants[*client as usize] {
                    g.3 = true;
                }
                let_go[*client as usize] = Some(i);
            }
            What::GaveUp { client } => let_go[*client as usize] = Some(i),
            What::BeliefStarted {
                client,
                grants: held,
                ..
            } => {
                let g = &mut grants[*client as usize];
                for h in held {
                    if let Some(k) = g
                        .iter()
                        .position(|x| !x.3 && x.1 == h.service && x.2 == h.token)
                    {
                        let (cause, ..) = g.remove(k);
                        out.push(link(LinkKind::Grant, cause, i, None));
                    }
                }
                belief[*client as usize] = Some(i);
                read[*client as usize] = None;
            }
            What::BeliefEnded { client, .. } => let_go[*client as usize] = Some(i),
            What::StaleGrantReleased {
                client,
                service,
                token,
            } => {
                let g = &mut grants[*client as usize];
                if let Some(k) = g.iter().position(|x| x.1 == *service && x.2 == *token) {
                    let (cause, ..) = g.remove(k);
                    out.push(link(LinkKind::Grant, cause, i, None));
                }
                let_go[*client as usize] = Some(i);
            }
            What::LockTransferred {
                client, to, token, ..
            } => {
                let g = &mut grants[*client as usize];
                if let Some(k) = g.iter().position(|x| x.1 == *to && x.2 == *token) {
                    let (cause, ..) = g.remove(k);
                    out.push(link(LinkKind::Grant, cause, i, None));
                }
            }
            What::Service { service, op, .. } => match *op {
                ServiceOp::Granted { client, token, .. } => {
                    let k = slot(client, *service);
                    if queued[k] {
                        queued[k] = false;
                    } else if let Some(cause) = requests[k].pop_front() {
                        out.push(link(LinkKind::Request, cause, i, None));
                    }
                    grants[client as usize].push((i, *service, token, false));
                }
                ServiceOp::Queued { client, .. } => {
                    let k = slot(client, *service);
                    if let Some(cause) = requests[k].pop_front() {
                        out.push(link(LinkKind::Request, cause, i, None));
                    }
                    queued[k] = true;
                }
                ServiceOp::Refused { client, .. } => {
                    let k = slot(client, *service);
                    if let Some(cause) = requests[k].pop_front() {
                        out.push(link(LinkKind::Request, cause, i, None));
                    }
                }
                ServiceOp::TransferredIn { client, token, .. } => {
                    grants[client as usize].push((i, *service, token, false));
                }
                ServiceOp::Cancelled { client } => {
                    queued[slot(client, *service)] = false;
                    if let Some(cause) = let_go[client as usize] {
                        out.push(link(LinkKind::Release, cause, i, None));
                    }
                }
                ServiceOp::MovedOut { client, .. } => queued[slot(client, *service)] = false,
                ServiceOp::Released { client, .. } | ServiceOp::ReleaseIgnored { client, .. } => {
                    if let Some(cause) = let_go[client as usize] {
                        out.push(link(LinkKind::Release, cause, i, None));
                    }
                }
                ServiceOp::Expired { .. }
                | ServiceOp::Superseded { .. }
                | ServiceOp::Forgotten { .. }
                | ServiceOp::Drained { .. } => {}
            },
            What::Read { client, token, .. } => {
                if let Some(cause) = belief[*client as usize] {
                    out.push(link(LinkKind::Read, cause, i, *token));
                }
                read[*client as usize] = Some(i);
            }
            What::Write { client, token, .. } => {
                // The write's value was computed from the client's read; the trace does not say
                // when the write left the client, so its link stands at the moment it landed.
                if let Some(cause) = read[*client as usize].or(belief[*client as usize]) {
                    let mut l = link(LinkKind::Write, cause, i, *token);
                    l.from_lane = lanes.client(*client);
                    l.from = e.at;
                    out.push(l);
                }
            }
            What::MessageLost { from, to, .. } => match (from, to) {
                (Endpoint::Client(c), Endpoint::Service(s)) => {
                    let k = slot(*c, *s);
                    if requests[k].front().is_some_and(|r| events[*r].at <= e.at) {
                        requests[k].pop_front();
                    }
                }
                (Endpoint::Service(s), Endpoint::Client(c)) => {
                    let g = &mut grants[*c as usize];
                    if let Some(k) = g.iter().position(|x| x.1 == *s) {
                        g.remove(k);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    out
}
