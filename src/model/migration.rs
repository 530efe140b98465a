//! Migrations: a lock moved from one service to another, naively, by draining or by transfer,
//! and the old service's waiters handed over.

use crate::scenario::MigrationMode;
use crate::trace::{Endpoint, ServiceOp, What};
use crate::world::MigrationConfig;

use super::{Cx, Hold, Message, Waiter};

impl Cx<'_> {
    pub(super) fn migrate(&mut self, index: u32) {
        let m = self.world.migrations[index as usize].clone();
        let r = m.resource;
        // A drain or transfer from a service the lock has already left (an earlier one took it,
        // and nothing brought it back) finds no lock there to move, and changes nothing: moving
        // the leftovers, or sending clients to the new service, would start a second line of
        // grants beside the lock's real home, or a wait for a drain that the home service, not
        // this one, will see end.
        let already_in = match m.mode {
            MigrationMode::Naive => None,
            _ => self.lock(m.from, r).moved_to.map(|next| self.home(next, r)),
        };
        // A drain or transfer into a service whose own lock has moved on goes where that lock
        // lives, unless the moves lead back here: then the lock returns to the new service,
        // whose pointer onwards is stale. Either way the pointers stay free of loops, and every
        // chain of them ends in the one service where the lock lives.
        let mut into = m.to;
        if m.mode != MigrationMode::Naive && already_in.is_none() {
            let home = self.home(m.to, r);
            if home == m.from {
                self.lock(m.to, r).moved_to = None;
            } else {
                into = home;
            }
        }
        self.emit(What::Migrated {
            migration: index,
            already_in,
            into: (into != m.to).then_some(into),
        });
        if already_in.is_some() {
            return;
        }
        for route in self.state.routes[r as usize].iter_mut() {
            if *route == m.from {
                *route = m.to;
            }
        }
        let m = MigrationConfig { to: into, ..m };
        match m.mode {
            MigrationMode::Naive => {}
            MigrationMode::Drain => {
                let old = self.lock(m.from, r);
                old.moved_to = Some(m.to);
                // The new service waits for the old one's holder, and for whatever the old one
                // was still waiting for itself, beside any wait of its own.
                let mut waits = std::mem::take(&mut old.draining_from);
                if old.holder.is_some() {
                    waits |= 1 << m.from;
                }
                // Drained back to the service that holds it: that one waits for nobody.
                self.lock(m.to, r).draining_from |= waits & !(1 << m.to);
                self.hand_over_waiters(m.from, m.to, r, false);
            }
            MigrationMode::Transfer => {
                let old = self.lock(m.from, r);
                old.moved_to = Some(m.to);
                // A lock that was still draining hands those waits on: the new service grants
                // nothing either until the holders drained from let go. (The new service never
                // waits for the old one's holder, which moves in with it: a lock waits only for
                // services whose moves end in it, and the old one's ended in itself until now.)
                let waits = std::mem::take(&mut old.draining_from);
                self.lock(m.to, r).draining_from |= waits & !(1 << m.to);
                if let Some(h) = self.lock(m.from, r).holder.take() {
                    self.log(
                        m.from,
                        r,
                        ServiceOp::MovedOut {
                            client: h.client,
                            to: m.to,
                            held: true,
                        },
                    );
                    if self.lock(m.to, r).holder.is_none() {
                        let s = &mut self.state.services[m.to as usize];
                        let token = s.issue_token();
                        let mut moved_from = h.moved_from.clone();
                        moved_from.push((m.from, h.token));
                        s.locks[r as usize].holder = Some(Hold {
                            token,
                            moved_from,
                            ..h.clone()
                        });
                        let instant = self.log(
                            m.to,
                            r,
                            ServiceOp::TransferredIn {
                                client: h.client,
                                token,
                                from: m.from,
                            },
                        );
                        if let Some(until) = h.lease_until {
                            self.state.schedule_expiry(m.to, r, token, until);
                        }
                        self.send(
                            Endpoint::Service(m.to),
                            Endpoint::Client(h.client),
                            Message::Moved {
                                from: m.from,
                                to: m.to,
                                attempt: h.attempt,
                                token: Some(token),
                                instant,
                            },
                        );
                    } else {
                        // The new service already has a holder (someone used it early): the
                        // transferred holder waits first in line, and is told where it waits.
                        self.lock(m.to, r).queue.push_front(Waiter {
                            client: h.client,
                            attempt: h.attempt,
                            authority_token: h.authority_token,
                        });
                        let behind = self.lock(m.to, r).holder.as_ref().map(|x| x.client);
                        let instant = self.log(
                            m.to,
                            r,
                            ServiceOp::Queued {
                                client: h.client,
                                behind,
                            },
                        );
                        self.send(
                            Endpoint::Service(m.to),
                            Endpoint::Client(h.client),
                            Message::Moved {
                                from: m.from,
                                to: m.to,
                                attempt: h.attempt,
                                token: None,
                                instant,
                            },
                        );
                    }
                }
                self.hand_over_waiters(m.from, m.to, r, true);
                self.grant_next(m.to, r);
            }
        }
    }

    /// The old service of a migration tells each of its waiters that the lock has moved. A
    /// drain leaves them to ask the new service; a transfer (`keep`) puts them in the new
    /// service's queue, in their order, and the new service's own log records each wait it
    /// now keeps, as it records every other: its waiters are part of its order.
    fn hand_over_waiters(&mut self, from: u32, to: u32, r: u32, keep: bool) {
        let waiters: Vec<Waiter> = self.lock(from, r).queue.drain(..).collect();
        for w in waiters {
            let instant = self.log(
                from,
                r,
                ServiceOp::MovedOut {
                    client: w.client,
                    to,
                    held: false,
                },
            );
            if keep {
                let behind = self.lock(to, r).holder.as_ref().map(|x| x.client);
                self.lock(to, r).queue.push_back(w.clone());
                self.log(
                    to,
                    r,
                    ServiceOp::Queued {
                        client: w.client,
                        behind,
                    },
                );
            }
            self.send(
                Endpoint::Service(from),
                Endpoint::Client(w.client),
                Message::Moved {
                    from,
                    to,
                    attempt: w.attempt,
                    token: None,
                    instant,
                },
            );
        }
    }
}
