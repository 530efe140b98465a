//! Lock services: each service's instants and log, acquire and release, grants and their
//! announcement, a lock's queue served when it is freed, and lease expiry.

use crate::trace::{Endpoint, RefuseReason, ServiceOp, What};
use crate::world::Micros;

use super::{Cx, Hold, LockState, Message, Step, Waiter};

impl Cx<'_> {
    fn tick(&mut self, service: u32) -> u64 {
        let s = &mut self.state.services[service as usize];
        s.instant += 1;
        s.instant
    }

    pub(super) fn log(&mut self, service: u32, resource: u32, op: ServiceOp) -> u64 {
        let instant = self.tick(service);
        self.emit(What::Service {
            service,
            instant,
            resource,
            op,
        });
        instant
    }

    pub(super) fn lock(&mut self, service: u32, resource: u32) -> &mut LockState {
        &mut self.state.services[service as usize].locks[resource as usize]
    }

    pub(super) fn service_message(
        &mut self,
        service: u32,
        client: u32,
        message: Message,
        origin: Option<u32>,
    ) {
        let resource_of = |m: &Message| match m {
            Message::Acquire { resource, .. }
            | Message::Release { resource, .. }
            | Message::Cancel { resource, .. } => *resource,
            _ => unreachable!("services receive only acquire, release and cancel"),
        };
        let resource = resource_of(&message);
        let lock = self.lock(service, resource);
        if let (None, 1.., Message::Release { .. }) = (lock.moved_to, lock.draining_from, &message)
        {
            // A lock that drains grants nothing. A release from a client that holds the lock
            // where it drains from is for that hold (a transfer took it there before the lock
            // was drained back): it is passed there, and since the client holds it there, it
            // is not passed on again.
            let sources = lock.draining_from;
            let holder_here = lock.holder.as_ref().is_some_and(|h| h.client == client);
            let there = (0..self.world.services.len() as u32).find(|s| {
                sources & (1 << s) != 0
                    && self
                        .lock(*s, resource)
                        .holder
                        .as_ref()
                        .is_some_and(|h| h.client == client)
            });
            if let (false, Some(from)) = (holder_here, there) {
                self.state.schedule(
                    self.state.now,
                    Step::Forward {
                        from: service,
                        to: from,
                        client,
                        origin: origin.unwrap_or(service),
                        message,
                    },
                );
                return;
            }
        }
        if let Some(to) = self.lock(service, resource).moved_to {
            match message {
                Message::Acquire { attempt, .. } => {
                    let instant = self.log(
                        service,
                        resource,
                        ServiceOp::Refused {
                            client,
                            reason: RefuseReason::Moved,
                        },
                    );
                    self.send(
                        Endpoint::Service(service),
                        Endpoint::Client(client),
                        Message::Moved {
                            from: service,
                            to,
                            attempt,
                            token: None,
                            instant,
                        },
                    );
                    return;
                }
                Message::Release { .. } | Message::Cancel { .. } => {
                    // The old service forwards what concerns a lock it handed over, so a holder
                    // that missed the news still frees the lock in its new home.
                    let holder_here = self
                        .lock(service, resource)
                        .holder
                        .as_ref()
                        .is_some_and(|h| h.client == client);
                    if !holder_here {
                        self.state.schedule(
                            self.state.now,
                            Step::Forward {
                                from: service,
                                to,
                                client,
                                origin: origin.unwrap_or(service),
                                message,
                            },
                        );
                        return;
                    }
                }
                _ => {}
            }
        }
        match message {
            Message::Acquire {
                resource,
                attempt,
                authority_token,
                try_only,
            } => {
                if try_only {
                    self.try_acquire(service, client, resource, attempt);
                } else {
                    self.acquire(service, client, resource, attempt, authority_token);
                }
            }
            Message::Release {
                resource,
                token,
                attempt,
            } => {
                // A release passed on after a transfer names the token the hold had in the
                // service the client sent it to, which this service replaced with one of its own.
                // So does one sent here before transfers took the hold away and back again.
                let sent_to = origin.unwrap_or(service);
                let named = |h: &Hold| h.token == token || h.moved_from.contains(&(sent_to, token));
                let held = self
                    .lock(service, resource)
                    .holder
                    .as_ref()
                    .filter(|h| h.client == client && h.attempt == attempt && named(h))
                    .map(|h| h.token);
                if let Some(token) = held {
                    self.lock(service, resource).holder = None;
                    self.log(service, resource, ServiceOp::Released { client, token });
                    self.lock_freed(service, resource);
                } else {
                    self.log(
                        service,
                        resource,
                        ServiceOp::ReleaseIgnored { client, token },
                    );
                }
            }
            Message::Cancel { resource, attempt } => {
                let lock = self.lock(service, resource);
                let position = lock
                    .queue
                    .iter()
                    .position(|w| w.client == client && w.attempt == attempt);
                // A client waits at most once per lock, so removing the one match is enough.
                let removed = position.and_then(|i| lock.queue.remove(i)).is_some();
                let holder = lock
                    .holder
                    .as_ref()
                    .is_some_and(|h| h.client == client && h.attempt == attempt);
                if holder {
                    // The grant crossed the cancel on the wire: the cancel releases it.
                    let token = lock.holder.take().map(|h| h.token).unwrap_or(0);
                    self.log(service, resource, ServiceOp::Released { client, token });
                    self.lock_freed(service, resource);
                } else if removed {
                    self.log(service, resource, ServiceOp::Cancelled { client });
                }
            }
            _ => unreachable!("checked above"),
        }
    }

    fn acquire(
        &mut self,
        service: u32,
        client: u32,
        resource: u32,
        attempt: u32,
        authority_token: Option<u64>,
    ) {
        let subordinate = self.world.services[service as usize].authority.is_some();
        if subordinate {
            let highest = self.lock(service, resource).highest_authority_token;
            let reason = match authority_token {
                None => Some(RefuseReason::NoAuthorityToken),
                Some(t) if t < highest => Some(RefuseReason::StaleAuthorityToken),
                Some(_) => None,
            };
            if let Some(reason) = reason {
                let _ = self.log(service, resource, ServiceOp::Refused { client, reason });
                self.send(
                    Endpoint::Service(service),
                    Endpoint::Client(client),
                    Message::Refused {
                        service,
                        attempt,
                        reason,
                    },
                );
                return;
            }
            let t = authority_token.expect("checked above");
            self.lock(service, resource).highest_authority_token = t;
            // The authority's order decides: a holder with an older authority token is
            // superseded at once. It is not told; it may go on believing it holds the lock.
            let superseded = self
                .lock(service, resource)
                .holder
                .clone()
                .filter(|h| h.authority_token.unwrap_or(0) < t && h.client != client);
            if let Some(h) = superseded {
                self.lock(service, resource).holder = None;
                self.log(
                    service,
                    resource,
                    ServiceOp::Superseded {
                        client: h.client,
                        token: h.token,
                    },
                );
                // The lock is free now: serve the queue first, as a release would. Its waiters
                // came with lower numbers or equal ones; the lower are refused as stale, and an
                // equal one is granted ahead of this request, which then waits behind it (or,
                // if that waiter was this client's own earlier request, is confirmed below).
                self.grant_next(service, resource);
            }
        }
        let lock = self.lock(service, resource);
        if let Some(h) = &mut lock.holder {
            if h.client == client {
                // A retry by the holder (its earlier answer was lost or late): confirm the grant.
                // The client learns this service's token now, so a release of a token the hold
                // had elsewhere can only be of a grant it found stale, and must not end this one.
                h.attempt = attempt;
                h.authority_token = authority_token;
                h.moved_from.clear();
                let (token, lease_until) = (h.token, h.lease_until);
                self.announce_grant(service, resource, client, attempt, token, lease_until);
                return;
            }
        }
        let lock = self.lock(service, resource);
        if lock.queue.iter().any(|w| w.client == client) {
            lock.queue.retain(|w| w.client != client);
        }
        if lock.holder.is_none() && lock.queue.is_empty() && lock.draining_from == 0 {
            self.grant(service, resource, client, attempt, authority_token);
        } else {
            lock.queue.push_back(Waiter {
                client,
                attempt,
                authority_token,
            });
            let behind = lock.holder.as_ref().map(|h| h.client);
            self.log(service, resource, ServiceOp::Queued { client, behind });
            self.send(
                Endpoint::Service(service),
                Endpoint::Client(client),
                Message::Queued { service, attempt },
            );
        }
    }

    /// A try (Redis' `SET NX`): granted at once if the lock is free, nobody waits for it and no
    /// drain holds it back; refused otherwise, even to the lock's own holder (whose earlier
    /// attempt it is: a new attempt is a new value, and `SET NX` finds the key taken). Only
    /// independent services are asked this way (validation sees to it).
    fn try_acquire(&mut self, service: u32, client: u32, resource: u32, attempt: u32) {
        let lock = self.lock(service, resource);
        if lock.holder.is_none() && lock.queue.is_empty() && lock.draining_from == 0 {
            self.grant(service, resource, client, attempt, None);
            return;
        }
        let reason = RefuseReason::Taken;
        self.log(service, resource, ServiceOp::Refused { client, reason });
        self.send(
            Endpoint::Service(service),
            Endpoint::Client(client),
            Message::Refused {
                service,
                attempt,
                reason,
            },
        );
    }

    fn grant(
        &mut self,
        service: u32,
        resource: u32,
        client: u32,
        attempt: u32,
        authority_token: Option<u64>,
    ) {
        let now = self.state.now;
        let lease = self.world.services[service as usize].lease;
        let s = &mut self.state.services[service as usize];
        let token = s.issue_token();
        let lease_until = lease.map(|l| now + l);
        s.locks[resource as usize].holder = Some(Hold {
            client,
            attempt,
            token,
            lease_until,
            authority_token,
            moved_from: Vec::new(),
        });
        if let Some(until) = lease_until {
            self.state.schedule_expiry(service, resource, token, until);
        }
        self.announce_grant(service, resource, client, attempt, token, lease_until);
    }

    /// Logs a grant at the service's next instant and tells the client.
    fn announce_grant(
        &mut self,
        service: u32,
        resource: u32,
        client: u32,
        attempt: u32,
        token: u64,
        lease_until: Option<Micros>,
    ) {
        let instant = self.log(
            service,
            resource,
            ServiceOp::Granted {
                client,
                token,
                lease_until,
            },
        );
        self.send(
            Endpoint::Service(service),
            Endpoint::Client(client),
            Message::Granted {
                service,
                attempt,
                token,
                instant,
            },
        );
    }

    /// The lock has no holder now: finish a drain that waited for it, or grant the next waiter.
    fn lock_freed(&mut self, service: u32, resource: u32) {
        if let Some(next) = self.lock(service, resource).moved_to {
            // The lock may have moved on since: the service that waits for this one is at the
            // end of the pointers.
            let to = self.home(next, resource);
            let home = self.lock(to, resource);
            if home.draining_from & (1 << service) != 0 {
                home.draining_from &= !(1 << service);
                let more = home.draining_from != 0;
                self.log(
                    to,
                    resource,
                    ServiceOp::Drained {
                        from: service,
                        more,
                    },
                );
                self.grant_next(to, resource);
            }
            return;
        }
        self.grant_next(service, resource);
    }

    /// The service a lock lives in, following the moves from `service` on. The pointers never
    /// form a loop (see `migrate` in `migration.rs`), so that is at most one step a service.
    pub(super) fn home(&mut self, mut service: u32, resource: u32) -> u32 {
        for _ in 0..self.world.services.len() {
            match self.lock(service, resource).moved_to {
                Some(next) => service = next,
                None => break,
            }
        }
        service
    }

    pub(super) fn grant_next(&mut self, service: u32, resource: u32) {
        let subordinate = self.world.services[service as usize].authority.is_some();
        loop {
            let lock = self.lock(service, resource);
            if lock.holder.is_some() || lock.draining_from != 0 {
                return;
            }
            let Some(w) = lock.queue.pop_front() else {
                return;
            };
            let highest = lock.highest_authority_token;
            if subordinate && w.authority_token.unwrap_or(0) < highest {
                let reason = RefuseReason::StaleAuthorityToken;
                self.log(
                    service,
                    resource,
                    ServiceOp::Refused {
                        client: w.client,
                        reason,
                    },
                );
                self.send(
                    Endpoint::Service(service),
                    Endpoint::Client(w.client),
                    Message::Refused {
                        service,
                        attempt: w.attempt,
                        reason,
                    },
                );
                continue;
            }
            self.grant(service, resource, w.client, w.attempt, w.authority_token);
            return;
        }
    }

    /// A service that forgets on restart is back from an outage with none of its state: each
    /// lock's holder and waiters are forgotten (each logged, none told), a subordinate forgets
    /// the highest authority token it saw, and tokens start again from the first. A lock that
    /// moved on and kept a holder here stops holding up its new home's drain. Where locks have
    /// moved (migrations) is the operator's configuration and is kept.
    #[cold]
    pub(super) fn restart_empty(&mut self, service: u32) {
        self.emit(What::RestartedEmpty { service });
        for resource in 0..self.world.resources.len() as u32 {
            let lock = self.lock(service, resource);
            let holder = lock.holder.take();
            let waiters = std::mem::take(&mut lock.queue);
            lock.highest_authority_token = 0;
            if let Some(h) = &holder {
                let (client, token) = (h.client, Some(h.token));
                self.log(service, resource, ServiceOp::Forgotten { client, token });
            }
            for w in waiters {
                let (client, token) = (w.client, None);
                self.log(service, resource, ServiceOp::Forgotten { client, token });
            }
            if holder.is_some() {
                self.lock_freed(service, resource);
            }
        }
        let first = self.world.services[service as usize].first_token;
        self.state.services[service as usize].next_token = first;
        self.state.forget_expiries(service);
    }

    pub(super) fn lease_expiry(&mut self, service: u32, resource: u32, token: u64) {
        let lock = self.lock(service, resource);
        let expired = lock
            .holder
            .as_ref()
            .filter(|h| h.token == token)
            .map(|h| h.client);
        if let Some(client) = expired {
            lock.holder = None;
            self.log(service, resource, ServiceOp::Expired { client, token });
            self.lock_freed(service, resource);
        }
    }
}
