//! Clients: their workloads' timers, attempts at their locks (in order, unordered or as a token
//! chain), the critical section, leases kept in view, and the replies they receive.

use crate::scenario::Fencing;
use crate::trace::{AbortReason, BeliefEnd, Endpoint, GrantRef, Token, Values, What};
use crate::world::{Majority, Micros, ProtocolConfig};

use super::{Cx, Message, Phase, Slot, SlotState, Step, Stream, Timer};

impl Cx<'_> {
    pub(super) fn client_timer(&mut self, client: u32, timer: Timer) {
        let c = client as usize;
        match timer {
            Timer::Arrive => {
                if self.state.clients[c].phase != Phase::Idle {
                    return;
                }
                let cfg = &self.world.clients[c];
                let done = cfg
                    .max_operations
                    .is_some_and(|max| self.state.clients[c].ops_started >= max);
                if done || self.state.now >= cfg.stop {
                    self.state.clients[c].phase = Phase::Stopped;
                    self.emit(What::ClientStopped { client });
                    return;
                }
                let st = &mut self.state.clients[c];
                st.ops_started += 1;
                st.retries = 0;
                let op = st.ops_started;
                self.emit(What::OpStarted { client, op });
                self.begin_attempt(client);
            }
            Timer::Retry { attempt } => {
                let st = &self.state.clients[c];
                if st.phase == Phase::Backoff && st.attempt == attempt {
                    self.begin_attempt(client);
                }
            }
            Timer::AcquireTimeout { attempt, slot } => {
                let st = &self.state.clients[c];
                if st.phase != Phase::Acquiring || st.attempt != attempt {
                    return;
                }
                let i = slot as usize;
                let Some(slot) = st.slots.get(i).copied() else {
                    return;
                };
                let service = slot.service;
                let skip = match &self.world.clients[c].protocol {
                    ProtocolConfig::Locks {
                        skip_unreachable, ..
                    } => *skip_unreachable,
                    _ => false,
                };
                if let Some(majority) = self.majority(client) {
                    // A service that has not answered in time is one grant fewer.
                    if slot.state == SlotState::Pending {
                        self.state.clients[c].slots[i].state = SlotState::Skipped;
                        self.send_cancel(client, service, attempt);
                        self.count_votes(client, majority);
                    }
                    return;
                }
                match slot.state {
                    SlotState::Pending if skip => {
                        self.state.clients[c].slots[i].state = SlotState::Skipped;
                        self.emit(What::SkippedUnreachable { client, service });
                        // The request may still arrive; a cancel makes sure it grants nothing.
                        self.send_cancel(client, service, attempt);
                        self.advance(client);
                    }
                    SlotState::Pending | SlotState::Queued => {
                        self.abort_attempt(client, AbortReason::Timeout)
                    }
                    _ => {}
                }
            }
            Timer::LeaseDeadline { attempt } => {
                let st = &self.state.clients[c];
                if st.attempt == attempt && st.believing {
                    // It stops believing it holds the lock, even with a write in flight: past
                    // this moment the service may already have granted to someone else.
                    self.end_operation(client, BeliefEnd::LeaseExpiredLocally);
                }
            }
            Timer::Validity { attempt } => {
                let st = &self.state.clients[c];
                if st.phase != Phase::Acquiring || st.attempt != attempt {
                    return;
                }
                // Still short of a quorum when the lock could no longer be valid: whatever
                // comes back now comes too late.
                let granted = self.granted(client);
                let quorum = self.majority(client).map_or(0, |m| m.quorum);
                self.emit(What::QuorumMissed {
                    client,
                    granted,
                    quorum,
                });
                self.abort_attempt(client, AbortReason::QuorumMissed);
            }
            Timer::WorkDone { attempt } => {
                let st = &self.state.clients[c];
                if st.phase != Phase::Working || st.attempt != attempt {
                    return;
                }
                if !self.lease_check(client) {
                    return;
                }
                let st = &mut self.state.clients[c];
                st.phase = Phase::Writing;
                let values: Values = st.read_values.iter().map(|v| v.wrapping_add(1)).collect();
                let cfg = &self.world.clients[c];
                let token = self.access_token(client);
                self.send(
                    Endpoint::Client(client),
                    Endpoint::Resource(cfg.resource),
                    Message::Write {
                        attempt,
                        rows: cfg.rows,
                        values,
                        token,
                    },
                );
            }
        }
    }

    /// Builds the slots of a new attempt from the protocol and the current routes, and sends
    /// the first requests.
    fn begin_attempt(&mut self, client: u32) {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        let routes = &self.state.routes[cfg.resource as usize];
        let st = &mut self.state.clients[c];
        st.attempt += 1;
        st.slots.clear();
        let (listed, subordinate): (&[u32], Option<u32>) = match &cfg.protocol {
            ProtocolConfig::Locks { services, .. } => (services, None),
            ProtocolConfig::TokenChain {
                authority,
                subordinate,
            } => (std::slice::from_ref(authority), Some(*subordinate)),
            ProtocolConfig::NoLock => (&[], None),
        };
        // After a migration two listed services may route to one; lock it once. Subordinates
        // are never migrated, so they are not routed.
        let mut seen = 0u64;
        let routed = listed.iter().map(|s| routes[*s as usize]);
        for service in routed.chain(subordinate) {
            if seen & (1 << service) == 0 {
                seen |= 1 << service;
                st.slots.push(Slot {
                    service,
                    state: SlotState::NotSent,
                    sent_at: 0,
                });
            }
        }
        let count = st.slots.len();
        if count == 0 {
            self.enter_critical_section(client);
            return;
        }
        st.phase = Phase::Acquiring;
        let parallel = matches!(cfg.protocol, ProtocolConfig::Locks { ordered: false, .. });
        if let Some(validity) = self.majority(client).and_then(|m| m.validity) {
            let attempt = self.state.clients[c].attempt;
            self.state.schedule(
                self.state.now + validity,
                Step::ClientTimer {
                    client,
                    timer: Timer::Validity { attempt },
                },
            );
        }
        if parallel {
            for i in 0..count {
                self.send_acquire(client, i);
            }
        } else {
            self.send_acquire(client, 0);
        }
    }

    fn send_acquire(&mut self, client: u32, slot: usize) {
        let c = client as usize;
        let now = self.state.now;
        let cfg = &self.world.clients[c];
        let st = &mut self.state.clients[c];
        st.slots[slot].state = SlotState::Pending;
        st.slots[slot].sent_at = now;
        let service = st.slots[slot].service;
        let attempt = st.attempt;
        // A subordinate is asked with the authority's token, which the first slot holds.
        let authority_token = match (&cfg.protocol, slot) {
            (ProtocolConfig::TokenChain { .. }, 1) => match st.slots[0].state {
                SlotState::Held { token, .. } => Some(token),
                _ => None,
            },
            _ => None,
        };
        let try_only = matches!(
            cfg.protocol,
            ProtocolConfig::Locks {
                majority: Some(_),
                ..
            }
        );
        self.emit(What::AcquireSent { client, service });
        self.send(
            Endpoint::Client(client),
            Endpoint::Service(service),
            Message::Acquire {
                resource: cfg.resource,
                attempt,
                authority_token,
                try_only,
            },
        );
        if let Some(timeout) = cfg.acquire_timeout {
            self.state.schedule(
                now + timeout,
                Step::ClientTimer {
                    client,
                    timer: Timer::AcquireTimeout {
                        attempt,
                        slot: slot as u32,
                    },
                },
            );
        }
    }

    fn send_cancel(&mut self, client: u32, service: u32, attempt: u32) {
        let resource = self.world.clients[client as usize].resource;
        self.send(
            Endpoint::Client(client),
            Endpoint::Service(service),
            Message::Cancel { resource, attempt },
        );
    }

    fn send_release(&mut self, client: u32, service: u32, token: u64, attempt: u32) {
        let resource = self.world.clients[client as usize].resource;
        self.send(
            Endpoint::Client(client),
            Endpoint::Service(service),
            Message::Release {
                resource,
                token,
                attempt,
            },
        );
    }

    /// The majority a client counts, if its protocol is `majority`.
    fn majority(&self, client: u32) -> Option<Majority> {
        match &self.world.clients[client as usize].protocol {
            ProtocolConfig::Locks { majority, .. } => *majority,
            _ => None,
        }
    }

    /// How many of the current attempt's services have granted.
    fn granted(&self, client: u32) -> u32 {
        self.state.clients[client as usize]
            .slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Held { .. }))
            .count() as u32
    }

    /// When the current attempt sent its first request: the moment a majority client counts
    /// its lock's validity from.
    fn attempt_sent_at(&self, client: u32) -> Micros {
        let slots = &self.state.clients[client as usize].slots;
        slots
            .iter()
            .map(|s| s.sent_at)
            .min()
            .unwrap_or(self.state.now)
    }

    /// A majority client after an answer: with its quorum of grants, it holds the lock if the
    /// lock is still valid; once too few requests are left unanswered for a quorum, it lets go
    /// of what it got and cancels the rest. Otherwise it waits.
    fn count_votes(&mut self, client: u32, majority: Majority) {
        let c = client as usize;
        let granted = self.granted(client);
        let open = self.state.clients[c]
            .slots
            .iter()
            .filter(|s| {
                matches!(
                    s.state,
                    SlotState::NotSent | SlotState::Pending | SlotState::Queued
                )
            })
            .count() as u32;
        let quorum = majority.quorum;
        if granted >= quorum {
            let sent_at = self.attempt_sent_at(client);
            let valid_until = majority.validity.map(|v| sent_at + v);
            let now = self.state.now;
            if majority.clock_checked && valid_until.is_some_and(|until| now >= until) {
                self.emit(What::ValiditySpent {
                    client,
                    granted,
                    acquiring_us: now - sent_at,
                });
                self.abort_attempt(client, AbortReason::ValiditySpent);
                return;
            }
            // The requests still unanswered are no longer needed: a grant that comes back for
            // one is released at once (as a stale grant), a refusal is ignored.
            for slot in &mut self.state.clients[c].slots {
                if matches!(slot.state, SlotState::Pending | SlotState::Queued) {
                    slot.state = SlotState::Skipped;
                }
            }
            self.emit(What::QuorumReached {
                client,
                granted,
                quorum,
                valid_until,
            });
            self.enter_critical_section(client);
        } else if granted + open < quorum {
            self.emit(What::QuorumMissed {
                client,
                granted,
                quorum,
            });
            self.abort_attempt(client, AbortReason::QuorumMissed);
        }
    }

    /// After a slot is held or skipped: ask the next service, or enter the critical section.
    fn advance(&mut self, client: u32) {
        let c = client as usize;
        if let Some(majority) = self.majority(client) {
            self.count_votes(client, majority);
            return;
        }
        let st = &self.state.clients[c];
        if let Some(next) = st.slots.iter().position(|s| s.state == SlotState::NotSent) {
            let waiting = st
                .slots
                .iter()
                .any(|s| matches!(s.state, SlotState::Pending | SlotState::Queued));
            if !waiting {
                self.send_acquire(client, next);
            }
            return;
        }
        let done = st
            .slots
            .iter()
            .all(|s| matches!(s.state, SlotState::Held { .. } | SlotState::Skipped));
        if !done {
            return;
        }
        if st.slots.iter().all(|s| s.state == SlotState::Skipped) {
            self.abort_attempt(client, AbortReason::NothingReachable);
            return;
        }
        self.enter_critical_section(client);
    }

    fn enter_critical_section(&mut self, client: u32) {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        let st = &mut self.state.clients[c];
        st.phase = Phase::Reading;
        // Every client, with or without a lock, announces its critical section: a client that
        // takes no lock is in an unprotected one from here to the end of its write, and the
        // monitors judge it like any other (with no grant behind it).
        st.believing = true;
        if st.slots.is_empty() {
            self.emit(What::BeliefStarted {
                client,
                resource: cfg.resource,
                rows: cfg.rows,
                grants: Vec::new(),
            });
        } else {
            let grants = st
                .slots
                .iter()
                .filter_map(|s| match s.state {
                    SlotState::Held { token, instant } => Some(GrantRef {
                        service: s.service,
                        token,
                        instant,
                    }),
                    _ => None,
                })
                .collect();
            self.emit(What::BeliefStarted {
                client,
                resource: cfg.resource,
                rows: cfg.rows,
                grants,
            });
            if !self.lease_check(client) {
                return;
            }
            if let Some(deadline) = self.lease_deadline(client) {
                let attempt = self.state.clients[c].attempt;
                self.state.schedule(
                    deadline,
                    Step::ClientTimer {
                        client,
                        timer: Timer::LeaseDeadline { attempt },
                    },
                );
            }
        }
        let token = self.access_token(client);
        let attempt = self.state.clients[c].attempt;
        self.send(
            Endpoint::Client(client),
            Endpoint::Resource(cfg.resource),
            Message::Read {
                attempt,
                rows: cfg.rows,
                token,
            },
        );
    }

    /// The token a client presents to the resource: the authority's for a token chain,
    /// otherwise that of the first service it holds. A majority client holds several services'
    /// tokens and none of them orders the lock; it presents the one the resource checks if it
    /// holds it (`one_source` fencing), otherwise that of the first service it holds.
    fn access_token(&self, client: u32) -> Option<Token> {
        let c = client as usize;
        let slots = &self.state.clients[c].slots;
        if self.majority(client).is_some() {
            let resource = &self.world.resources[self.world.clients[c].resource as usize];
            if let (Fencing::OneSource, Some(source)) = (resource.fencing, resource.fencing_source)
            {
                let checked = slots.iter().find_map(|s| match s.state {
                    SlotState::Held { token, .. } if s.service == source => Some(Token {
                        service: s.service,
                        value: token,
                    }),
                    _ => None,
                });
                if checked.is_some() {
                    return checked;
                }
            }
        }
        slots.iter().find_map(|s| match s.state {
            SlotState::Held { token, .. } => Some(Token {
                service: s.service,
                value: token,
            }),
            _ => None,
        })
    }

    /// For a lease-aware client: whether every lease it holds still has `lease_margin` left,
    /// counted from when it sent each request (a safe lower bound on the service's grant time).
    /// If not, the client abandons the operation and returns false.
    fn lease_check(&mut self, client: u32) -> bool {
        let expired = self
            .lease_deadline(client)
            .is_some_and(|deadline| self.state.now >= deadline);
        if expired {
            self.end_operation(client, BeliefEnd::LeaseExpiredLocally);
            return false;
        }
        true
    }

    /// For a lease-aware client holding leases: the moment, less its safety margin, at which
    /// the first of its leases may expire, counted from when it sent each request (a safe lower
    /// bound on the service's grant time).
    ///
    /// A majority client's deadline is the end of its lock's validity, less the margin.
    fn lease_deadline(&self, client: u32) -> Option<Micros> {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        if !cfg.lease_aware {
            return None;
        }
        if let Some(majority) = self.majority(client) {
            return majority
                .validity
                .map(|v| (self.attempt_sent_at(client) + v).saturating_sub(cfg.lease_margin));
        }
        self.state.clients[c]
            .slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Held { .. }))
            .filter_map(|s| {
                self.world.services[s.service as usize]
                    .stated_lease
                    .map(|l| (s.sent_at + l).saturating_sub(cfg.lease_margin))
            })
            .min()
    }

    fn abort_attempt(&mut self, client: u32, reason: AbortReason) {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        let attempt = self.state.clients[c].attempt;
        self.let_go(client);
        let st = &mut self.state.clients[c];
        let retry = st.retries < cfg.max_retries;
        self.emit(What::AttemptAborted {
            client,
            reason,
            retry,
        });
        let st = &mut self.state.clients[c];
        if retry {
            st.retries += 1;
            st.phase = Phase::Backoff;
            let at = self.state.now + cfg.retry_backoff;
            self.state.schedule(
                at,
                Step::ClientTimer {
                    client,
                    timer: Timer::Retry { attempt },
                },
            );
        } else {
            self.emit(What::GaveUp { client });
            self.finish(client);
        }
    }

    /// Releases held slots (last acquired first), cancels outstanding requests, and empties
    /// the slots (keeping their allocation for the next attempt).
    fn let_go(&mut self, client: u32) {
        let c = client as usize;
        let attempt = self.state.clients[c].attempt;
        for i in (0..self.state.clients[c].slots.len()).rev() {
            let s = self.state.clients[c].slots[i];
            match s.state {
                SlotState::Held { token, .. } => {
                    self.send_release(client, s.service, token, attempt)
                }
                SlotState::Pending | SlotState::Queued => {
                    self.send_cancel(client, s.service, attempt)
                }
                SlotState::NotSent | SlotState::Skipped => {}
            }
        }
        self.state.clients[c].slots.clear();
    }

    /// Ends the current operation from inside the critical section.
    fn end_operation(&mut self, client: u32, reason: BeliefEnd) {
        let c = client as usize;
        let resource = self.world.clients[c].resource;
        let st = &mut self.state.clients[c];
        if st.believing {
            st.believing = false;
            self.emit(What::BeliefEnded {
                client,
                resource,
                reason,
            });
        }
        self.let_go(client);
        self.finish(client);
    }

    fn finish(&mut self, client: u32) {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        self.state.clients[c].phase = Phase::Idle;
        let jitter = self.choices.draw(Stream::Workload(client), cfg.jitter);
        let at = self.state.now + cfg.period + jitter;
        self.state.schedule(
            at,
            Step::ClientTimer {
                client,
                timer: Timer::Arrive,
            },
        );
    }

    pub(super) fn client_message(&mut self, client: u32, message: Message) {
        let c = client as usize;
        match message {
            Message::Granted {
                service,
                attempt,
                token,
                instant,
            } => {
                let st = &mut self.state.clients[c];
                let slot = st.slots.iter().position(|s| {
                    s.service == service
                        && matches!(s.state, SlotState::Pending | SlotState::Queued)
                });
                match slot {
                    Some(i) if st.attempt == attempt && st.phase == Phase::Acquiring => {
                        st.slots[i].state = SlotState::Held { token, instant };
                        self.advance(client);
                    }
                    _ => {
                        let held_already = st.slots.iter().any(|s| {
                            s.service == service
                                && matches!(s.state, SlotState::Held { token: t, .. } if t == token)
                        });
                        if !held_already {
                            self.emit(What::StaleGrantReleased {
                                client,
                                service,
                                token,
                            });
                            self.send_release(client, service, token, attempt);
                        }
                    }
                }
            }
            Message::Queued { service, attempt } => {
                let st = &mut self.state.clients[c];
                if st.attempt == attempt {
                    if let Some(s) = st
                        .slots
                        .iter_mut()
                        .find(|s| s.service == service && s.state == SlotState::Pending)
                    {
                        s.state = SlotState::Queued;
                    }
                }
            }
            Message::Refused {
                service, attempt, ..
            } => {
                let st = &self.state.clients[c];
                let ours = st.attempt == attempt
                    && st.phase == Phase::Acquiring
                    && st.slots.iter().any(|s| s.service == service);
                if ours {
                    if let Some(majority) = self.majority(client) {
                        // A refusal is one grant fewer; the others may still make a quorum.
                        if let Some(s) = self.state.clients[c]
                            .slots
                            .iter_mut()
                            .find(|s| s.service == service && s.state == SlotState::Pending)
                        {
                            s.state = SlotState::Skipped;
                            self.count_votes(client, majority);
                        }
                        return;
                    }
                    if let Some(s) = self.state.clients[c]
                        .slots
                        .iter_mut()
                        .find(|s| s.service == service)
                    {
                        s.state = SlotState::Skipped;
                    }
                    self.abort_attempt(client, AbortReason::Refused);
                }
            }
            Message::Moved {
                from,
                to,
                attempt,
                token,
                instant,
            } => {
                let waiting_there = self.lock_is_waiting(to, client);
                let st = &mut self.state.clients[c];
                if st.attempt != attempt {
                    return;
                }
                let Some(i) = st.slots.iter().position(|s| s.service == from) else {
                    return;
                };
                match (st.slots[i].state, token) {
                    (SlotState::Held { .. }, Some(token)) => {
                        st.slots[i].service = to;
                        st.slots[i].state = SlotState::Held { token, instant };
                        self.emit(What::LockTransferred {
                            client,
                            from,
                            to,
                            token,
                        });
                    }
                    (SlotState::Held { .. }, None) => {
                        // Transferred into a queue: the hold is gone until the new service grants.
                        st.slots[i].service = to;
                        st.slots[i].state = SlotState::Queued;
                    }
                    (SlotState::Pending | SlotState::Queued, _) if st.phase == Phase::Acquiring => {
                        st.slots[i].service = to;
                        if token.is_none() && waiting_there {
                            st.slots[i].state = SlotState::Queued;
                        } else {
                            // Refused by the old service: ask the new one.
                            self.send_acquire(client, i);
                        }
                    }
                    _ => {}
                }
            }
            Message::ReadReply {
                attempt,
                accepted,
                values,
            } => {
                let st = &mut self.state.clients[c];
                if st.attempt != attempt || st.phase != Phase::Reading {
                    return;
                }
                if !accepted {
                    self.end_operation(client, BeliefEnd::Rejected);
                    return;
                }
                st.read_values = values;
                st.phase = Phase::Working;
                let at = self.state.now + self.world.clients[c].work;
                self.state.schedule(
                    at,
                    Step::ClientTimer {
                        client,
                        timer: Timer::WorkDone { attempt },
                    },
                );
            }
            Message::WriteReply { attempt, accepted } => {
                let st = &self.state.clients[c];
                if st.attempt != attempt || st.phase != Phase::Writing {
                    return;
                }
                let reason = if accepted {
                    BeliefEnd::Released
                } else {
                    BeliefEnd::Rejected
                };
                self.end_operation(client, reason);
            }
            Message::Acquire { .. }
            | Message::Release { .. }
            | Message::Cancel { .. }
            | Message::Read { .. }
            | Message::Write { .. } => unreachable!("clients receive only replies"),
        }
    }

    fn lock_is_waiting(&self, service: u32, client: u32) -> bool {
        let resource = self.world.clients[client as usize].resource;
        self.state.services[service as usize].locks[resource as usize]
            .queue
            .iter()
            .any(|w| w.client == client)
    }
}
