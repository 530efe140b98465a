//! The services' own logs, each checked on its own: consecutive instants, increasing tokens
//! (since the service last restarted empty), one holder per lock.

use serde::Serialize;

use crate::trace::{Event, ServiceOp, What};
use crate::world::World;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServiceLogCheck {
    pub service: String,
    pub operations: u64,
    pub grants: u64,
    /// Whether the service's own log obeys its invariants: consecutive instants, increasing
    /// tokens, and at most one holder per lock at every instant.
    pub consistent: bool,
    pub problems: Vec<String>,
}

/// Checks each service's own log: its instants count up by one, its new tokens increase, and
/// it never has two holders of one lock.
pub fn check_service_logs(world: &World, events: &[Event]) -> Vec<ServiceLogCheck> {
    let mut check = LogCheck::new(world);
    for e in events {
        check.on(world, e);
    }
    check.finish(world)
}

/// The state of [`check_service_logs`] between events.
pub(super) struct LogCheck {
    last_instant: Vec<u64>,
    last_token: Vec<Option<u64>>,
    /// The holder and token of each lock (service × resources + resource).
    holders: Vec<Option<(u32, u64)>>,
    resources: u32,
    problems: Vec<Vec<String>>,
    operations: Vec<u64>,
    grants: Vec<u64>,
}

impl LogCheck {
    pub(super) fn new(world: &World) -> LogCheck {
        let n = world.services.len();
        LogCheck {
            last_instant: vec![0; n],
            last_token: vec![None; n],
            holders: vec![None; n * world.resources.len()],
            resources: world.resources.len() as u32,
            problems: vec![Vec::new(); n],
            operations: vec![0; n],
            grants: vec![0; n],
        }
    }

    #[inline(always)]
    pub(super) fn on(&mut self, world: &World, e: &Event) {
        let What::Service {
            service,
            instant,
            resource,
            op,
        } = &e.what
        else {
            if let What::RestartedEmpty { service } = e.what {
                // Its tokens start again: they increase from here on.
                self.last_token[service as usize] = None;
            }
            return;
        };
        let s = *service as usize;
        let problems = &mut self.problems[s];
        self.operations[s] += 1;
        if *instant != self.last_instant[s] + 1 {
            problems.push(format!(
                "instant {} follows instant {}",
                instant, self.last_instant[s]
            ));
        }
        self.last_instant[s] = *instant;
        let holder = &mut self.holders[(*service * self.resources + *resource) as usize];
        match *op {
            ServiceOp::Granted { client, token, .. }
            | ServiceOp::TransferredIn { client, token, .. } => {
                match holder {
                    Some((h, t)) if *h == client && *t == token => return,
                    Some((h, _)) => problems.push(format!(
                        "instant {instant}: granted to {} while {} holds it",
                        world.clients[client as usize].name, world.clients[*h as usize].name
                    )),
                    None => {}
                }
                if self.last_token[s].is_some_and(|t| token <= t) {
                    problems.push(format!(
                        "instant {instant}: token {token} does not increase"
                    ));
                }
                self.last_token[s] = Some(token);
                self.grants[s] += 1;
                *holder = Some((client, token));
            }
            ServiceOp::Released { client, token }
            | ServiceOp::Expired { client, token }
            | ServiceOp::Superseded { client, token }
            | ServiceOp::Forgotten {
                client,
                token: Some(token),
            } => {
                if *holder == Some((client, token)) {
                    *holder = None;
                } else {
                    problems.push(format!(
                        "instant {instant}: {} ended a hold it did not have",
                        world.clients[client as usize].name
                    ));
                }
            }
            ServiceOp::MovedOut {
                client, held: true, ..
            } => {
                if holder.is_some_and(|(h, _)| h == client) {
                    *holder = None;
                }
            }
            _ => {}
        }
    }

    pub(super) fn finish(mut self, world: &World) -> Vec<ServiceLogCheck> {
        world
            .services
            .iter()
            .enumerate()
            .map(|(s, svc)| ServiceLogCheck {
                service: svc.name.clone(),
                operations: self.operations[s],
                grants: self.grants[s],
                consistent: self.problems[s].is_empty(),
                problems: std::mem::take(&mut self.problems[s]),
            })
            .collect()
    }
}
