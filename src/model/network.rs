//! The network: when a message sent now arrives (or that it is lost), FIFO channels, and the
//! delivery of a client's message to a service that may be down or may have handed the lock on.

use crate::trace::{Endpoint, LossReason, What};
use crate::world::{Cut, Micros};
use smallvec::SmallVec;

use super::{Cx, Message, Step, Stream};

impl Cx<'_> {
    // Asked twice for most messages; a call would cost more than the lookup.
    #[inline]
    fn region(&self, endpoint: Endpoint) -> u32 {
        match endpoint {
            Endpoint::Client(c) => self.world.clients[c as usize].region,
            Endpoint::Resource(r) => self.world.resources[r as usize].region,
            Endpoint::Service(s) => self.world.services[s as usize].replicas[0],
        }
    }

    /// When a message sent now from `from` to `to` arrives, or `None` if it is lost.
    ///
    /// A request to a service travels to a majority of its replicas: it arrives when the
    /// majority-th nearest reachable replica has it, and is lost if no majority is reachable.
    /// A reply from a service comes from its nearest reachable replica.
    fn arrival(&mut self, from: Endpoint, to: Endpoint) -> Option<Micros> {
        let now = self.state.now;
        let world = self.world;
        let (base, cut) = match (from, to) {
            (_, Endpoint::Service(s)) | (Endpoint::Service(s), _) => {
                let other = if matches!(to, Endpoint::Service(_)) {
                    self.region(from)
                } else {
                    self.region(to)
                };
                let svc = &world.services[s as usize];
                let to_service = matches!(to, Endpoint::Service(_));
                let needed = if to_service { svc.majority } else { 1 };
                // One binary search finds the network's state now; each replica's path is then
                // a lookup, so a message costs the same however many partitions there are.
                let net = world.network_at(now);
                if !net.any_partition() {
                    // The common case needs no search: the latencies are precomputed.
                    let paths = &world.replica_latencies[s as usize][other as usize];
                    let jitter = self.choices.draw(Stream::Network(from), world.jitter);
                    return Some(now + paths[needed - 1] + jitter);
                }
                // The replicas nearest first: the needed-th nearest open one decides.
                let paths = &world.replica_paths[s as usize][other as usize];
                let nth_open = paths
                    .iter()
                    .filter(|(_, r)| net.cut(other, *r) == Cut::Open)
                    .nth(needed - 1);
                if let Some((latency, _)) = nth_open {
                    (*latency, Cut::Open)
                } else {
                    // Too few replicas are reachable now. If every blocked path only delays,
                    // the message gets through once the last of the needed paths heals.
                    let mut heal: SmallVec<[(Micros, Micros); 9]> = SmallVec::new();
                    let mut dropped = false;
                    for (latency, r) in paths {
                        match net.cut(other, *r) {
                            Cut::Open => heal.push((now, *latency)),
                            Cut::DelayedUntil(end) => heal.push((end, *latency)),
                            Cut::Dropped => dropped = true,
                        }
                    }
                    if dropped && heal.len() < needed {
                        (0, Cut::Dropped)
                    } else {
                        // Only the sum matters (the arrival is the heal time plus the
                        // latency), so ties may fall either way. An insertion sort of these
                        // few paths, one per replica, links no sort of their own.
                        for i in 1..heal.len() {
                            let mut j = i;
                            while j > 0 && heal[j - 1].0 + heal[j - 1].1 > heal[j].0 + heal[j].1 {
                                heal.swap(j - 1, j);
                                j -= 1;
                            }
                        }
                        let (end, latency) = heal[needed - 1];
                        (latency, Cut::DelayedUntil(end))
                    }
                }
            }
            _ => {
                let a = self.region(from);
                let b = self.region(to);
                (world.latency[a as usize][b as usize], world.cut(a, b, now))
            }
        };
        let jitter = self.choices.draw(Stream::Network(from), world.jitter);
        match cut {
            Cut::Open => Some(now + base + jitter),
            Cut::DelayedUntil(end) => Some(end + base + jitter),
            Cut::Dropped => None,
        }
    }

    pub(super) fn send(&mut self, from: Endpoint, to: Endpoint, message: Message) {
        match self.arrival(from, to) {
            Some(at) => {
                let channel = self.world.endpoint_index(from) * self.world.endpoints()
                    + self.world.endpoint_index(to);
                let last = &mut self.state.channels[channel];
                let at = at.max(*last);
                *last = at;
                self.state.schedule(at, Step::Deliver { to, from, message })
            }
            None => self.emit(What::MessageLost {
                from,
                to,
                reason: LossReason::Partition,
            }),
        }
    }

    /// A forwarded message arrives like the client's own, sent to the new service. Forwarding
    /// is rare (only after a migration), so it stays out of the common path.
    #[cold]
    #[inline(never)]
    pub(super) fn forward(&mut self, to: u32, client: u32, origin: u32, message: Message) {
        self.deliver_to_service(to, client, message, Some(origin));
    }

    /// A client's message reaches a service, unless the service is down. `origin` is `None` for
    /// a message the client sent to this service, and for one passed on by a service the lock
    /// moved away from, the service the client sent it to.
    pub(super) fn deliver_to_service(
        &mut self,
        service: u32,
        client: u32,
        message: Message,
        origin: Option<u32>,
    ) {
        if self.world.outage_until(service, self.state.now).is_some() {
            self.emit(What::MessageLost {
                from: Endpoint::Client(client),
                to: Endpoint::Service(service),
                reason: LossReason::Outage,
            });
            return;
        }
        self.service_message(service, client, message, origin);
    }
}
