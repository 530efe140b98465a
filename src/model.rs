//! The model: one state, the steps enabled in it, and one transition function.
//!
//! Everything that can happen is a [`Step`] waiting in the state's agenda: a message in flight,
//! a client's timer, a lease expiry, or a fault (partition, outage, pause, migration). Faults
//! are steps like any other. A driver chooses which enabled step happens next: the simulator
//! takes the earliest by simulated time; an explorer may take any. The only other input is a
//! [`Choices`] source for jitter, which the driver supplies, so the model itself holds no
//! random generator, reads no clock and does no I/O.
//!
//! A protocol violation is data in the trace. A broken internal invariant is a bug and panics.

use std::collections::VecDeque;
use std::hash::Hash;

use smallvec::SmallVec;

use crate::agenda::Agenda;

mod inspect;
pub use inspect::StableHasher;

use crate::scenario::{Fencing, MigrationMode};
use crate::trace::{
    AbortReason, BeliefEnd, Endpoint, Event, GrantRef, LossReason, RefuseReason, ServiceOp, Token,
    Values, What,
};
use crate::world::{Cut, Micros, MigrationConfig, ProtocolConfig, World};

/// Where a driver's random numbers are drawn for. Each sender and each client's workload has its
/// own stream, so a change in one part of a scenario does not reshuffle the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Network jitter of messages sent by an endpoint.
    Network(Endpoint),
    /// Think-time jitter of a client.
    Workload(u32),
}

/// The source of the model's nondeterministic quantities.
pub trait Choices {
    /// A number in `0..=max`.
    fn draw(&mut self, stream: Stream, max: u64) -> u64;
}

/// A step that can happen.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    Deliver {
        to: Endpoint,
        from: Endpoint,
        message: Message,
    },
    /// A client's release or cancel that reached a service its lock has moved away from, on its
    /// way to the new service. It travels its own channel (old service to new), so it is not
    /// held behind the client's own messages to the new service.
    Forward {
        from: u32,
        to: u32,
        client: u32,
        /// The service the client sent the message to, whose token a release names: the first
        /// of a chain of services the lock moved through.
        origin: u32,
        message: Message,
    },
    ClientTimer {
        client: u32,
        timer: Timer,
    },
    LeaseExpiry {
        service: u32,
        resource: u32,
        token: u64,
    },
    Fault(Fault),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// Start the next operation.
    Arrive,
    AcquireTimeout {
        attempt: u32,
        slot: u32,
    },
    Retry {
        attempt: u32,
    },
    WorkDone {
        attempt: u32,
    },
    /// A lease-aware client's own estimate of when its lease may end.
    LeaseDeadline {
        attempt: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    PartitionStart(u32),
    PartitionEnd(u32),
    OutageStart(u32),
    OutageEnd(u32),
    PauseStart(u32),
    PauseEnd(u32),
    Migrate(u32),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Message {
    Acquire {
        resource: u32,
        attempt: u32,
        authority_token: Option<u64>,
    },
    /// Releases the hold granted to this attempt. The attempt matters: a stale grant's release
    /// must not end a later attempt's hold that the service confirmed with the same token.
    Release {
        resource: u32,
        token: u64,
        attempt: u32,
    },
    Cancel {
        resource: u32,
        attempt: u32,
    },
    Granted {
        service: u32,
        attempt: u32,
        token: u64,
        instant: u64,
    },
    Queued {
        service: u32,
        attempt: u32,
    },
    Refused {
        service: u32,
        attempt: u32,
        reason: RefuseReason,
    },
    /// The client's request or hold now lives in another service.
    Moved {
        from: u32,
        to: u32,
        attempt: u32,
        token: Option<u64>,
        instant: u64,
    },
    Read {
        attempt: u32,
        rows: u64,
        token: Option<Token>,
    },
    Write {
        attempt: u32,
        rows: u64,
        values: Values,
        token: Option<Token>,
    },
    ReadReply {
        attempt: u32,
        accepted: bool,
        values: Values,
    },
    WriteReply {
        attempt: u32,
        accepted: bool,
    },
}

/// A step scheduled at a time. The sequence number makes the order of simultaneous steps
/// deterministic (first scheduled, first taken).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    pub at: Micros,
    pub seq: u64,
    pub step: Step,
}

/// The current grant of a lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub client: u32,
    pub attempt: u32,
    pub token: u64,
    pub lease_until: Option<Micros>,
    pub authority_token: Option<u64>,
    /// For a hold that transfers moved here: the (service, token) it had in each service before,
    /// earliest first, until the client confirms the hold here. A release the client sent to
    /// one of those services before it heard of the move names that token, and frees this hold.
    pub moved_from: Vec<(u32, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiter {
    pub client: u32,
    pub attempt: u32,
    pub authority_token: Option<u64>,
}

/// One lock (named after its resource) inside one service.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockState {
    pub holder: Option<Hold>,
    /// An acquire replaces the client's earlier entry, so the queue holds about one entry per
    /// waiting client: its length is bounded by the clients (`limits::CLIENTS_MAX`, 256) and
    /// the few migrations that merge queues, never by the length of the run. The scans of it
    /// by client (a retried acquire, a cancel, a moved client) cost at most that.
    pub queue: VecDeque<Waiter>,
    /// For a subordinate: the highest authority token seen for this lock.
    pub highest_authority_token: u64,
    /// Set by a drain or transfer migration: this lock now lives in another service.
    pub moved_to: Option<u32>,
    /// Set by a drain migration on the new service until the old one has no holder: a set
    /// of services (bit `s` for service `s`; at most `limits::SERVICES_MAX`, 8), since two
    /// drains into one service may each wait for a holder of their own.
    pub draining_from: u8,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceState {
    /// The service's own clock: one tick per operation it serializes.
    pub instant: u64,
    pub next_token: u64,
    /// One lock per resource.
    pub locks: Vec<LockState>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Idle,
    Acquiring,
    Backoff,
    Reading,
    Working,
    Writing,
    Stopped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    NotSent,
    /// Sent, no answer yet.
    Pending,
    /// The service answered that the client is queued.
    Queued,
    Held {
        token: u64,
        instant: u64,
    },
    Skipped,
}

/// One service a client must lock for the current attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub service: u32,
    pub state: SlotState,
    pub sent_at: Micros,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientState {
    pub phase: Phase,
    pub ops_started: u32,
    pub attempt: u32,
    pub retries: u32,
    pub slots: Vec<Slot>,
    pub believing: bool,
    pub read_values: Values,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceState {
    pub values: Vec<i64>,
    /// Accepted writes per row.
    pub versions: Vec<u64>,
    /// The highest token number accepted so far (fencing).
    pub highest_token: Option<u64>,
}

/// The complete state of a run at one instant.
#[derive(Clone, Debug)]
pub struct State {
    pub now: Micros,
    pub services: Vec<ServiceState>,
    pub clients: Vec<ClientState>,
    pub resources: Vec<ResourceState>,
    /// `routes[resource][service]`: the service a client that used `service` for `resource`
    /// uses now (migrations change it).
    pub routes: Vec<Vec<u32>>,
    /// The latest arrival time on each channel between two endpoints. Channels are FIFO (as
    /// over one connection): a message never overtakes an earlier one between the same pair,
    /// so a release cannot be overtaken by the same client's next acquire.
    /// Indexed by `sender * endpoints + receiver` (see [`World::endpoint_index`]).
    channels: Vec<Micros>,
    agenda: Agenda<Step>,
    seq: u64,
    /// Steps due after this are not kept (see [`State::set_horizon`]).
    horizon: Micros,
    /// By lock (`service * resources + resource`): the lease expiry steps kept lazily, or
    /// empty when every expiry is scheduled as its lease begins (see
    /// [`State::set_lazy_leases`]).
    lease_timers: Vec<LeaseTimers>,
}

/// One lock's lease expiry steps, when they are kept lazily.
///
/// A lease almost never runs out: its holder lets go first, and the expiry step then does
/// nothing when its time comes. Scheduling one for every grant fills the agenda with such
/// steps (in a busy run, about two in five of those waiting, and one step in fourteen taken). Kept
/// lazily, a lock has an expiry step waiting only where one could matter: a new lease's step
/// waits outside the agenda while an earlier step of the same lock is there, and goes in when
/// that one is taken, if its lease still holds. It goes in with the sequence number it took
/// when its lease began, so the steps that do something come out in exactly the order they
/// would have had, and the trace is the same.
#[derive(Clone, Debug, Default)]
struct LeaseTimers {
    /// The (time, sequence number) of each of this lock's expiry steps in the agenda, earliest
    /// first: those are taken in this order.
    waiting: SmallVec<[(Micros, u64); 2]>,
    /// The holder's expiry: its token, the (time, sequence number) of its step, and whether
    /// the step is in the agenda. `None` if no hold with a lease began, or its expiry falls
    /// past the horizon.
    holder: Option<(u64, (Micros, u64), bool)>,
}

impl State {
    /// The initial state: workloads and every fault of the scenario scheduled.
    pub fn initial(world: &World, choices: &mut dyn Choices) -> State {
        let mut state = State {
            now: 0,
            services: world
                .services
                .iter()
                .map(|s| ServiceState {
                    instant: 0,
                    next_token: s.first_token,
                    locks: vec![LockState::default(); world.resources.len()],
                })
                .collect(),
            clients: world
                .clients
                .iter()
                .map(|_| ClientState {
                    phase: Phase::Idle,
                    ops_started: 0,
                    attempt: 0,
                    retries: 0,
                    slots: Vec::new(),
                    believing: false,
                    read_values: Values::new(),
                })
                .collect(),
            resources: world
                .resources
                .iter()
                .map(|r| ResourceState {
                    values: vec![r.initial; r.rows.len()],
                    versions: vec![0; r.rows.len()],
                    highest_token: None,
                })
                .collect(),
            routes: world
                .resources
                .iter()
                .map(|_| (0..world.services.len() as u32).collect())
                .collect(),
            channels: vec![0; world.endpoints() * world.endpoints()],
            agenda: Agenda::default(),
            seq: 0,
            horizon: Micros::MAX,
            lease_timers: Vec::new(),
        };
        for (i, p) in world.partitions.iter().enumerate() {
            state.schedule(p.start, Step::Fault(Fault::PartitionStart(i as u32)));
            state.schedule(p.end, Step::Fault(Fault::PartitionEnd(i as u32)));
        }
        for (s, svc) in world.services.iter().enumerate() {
            for (start, end) in &svc.outages {
                state.schedule(*start, Step::Fault(Fault::OutageStart(s as u32)));
                state.schedule(*end, Step::Fault(Fault::OutageEnd(s as u32)));
            }
        }
        for (c, client) in world.clients.iter().enumerate() {
            for (start, end) in &client.pauses {
                state.schedule(*start, Step::Fault(Fault::PauseStart(c as u32)));
                state.schedule(*end, Step::Fault(Fault::PauseEnd(c as u32)));
            }
        }
        for (i, m) in world.migrations.iter().enumerate() {
            state.schedule(m.at, Step::Fault(Fault::Migrate(i as u32)));
        }
        for (c, client) in world.clients.iter().enumerate() {
            let jitter = choices.draw(Stream::Workload(c as u32), client.jitter);
            state.schedule(
                client.start + jitter,
                Step::ClientTimer {
                    client: c as u32,
                    timer: Timer::Arrive,
                },
            );
        }
        state
    }

    fn schedule(&mut self, at: Micros, step: Step) {
        // A step past the horizon still takes its sequence number, so the steps that are kept
        // are numbered, and ordered, exactly as without a horizon.
        self.seq += 1;
        if at <= self.horizon {
            self.agenda.push(at, self.seq, step);
        }
    }

    /// From now on, drops every step scheduled after `horizon` instead of keeping it. The
    /// simulator stops at the scenario's duration, so it would never take such a step, and
    /// keeping them costs memory for nothing when latencies reach past the end: with an hour
    /// of latency, every message a run sends would stay in the agenda. A driver that may take
    /// any step (an explorer) leaves the horizon unset.
    pub fn set_horizon(&mut self, horizon: Micros) {
        self.horizon = horizon;
    }

    /// From now on, keeps lease expiry steps lazily (see [`LeaseTimers`]): only a driver that
    /// always takes the earliest step (the simulator) may ask for this, because the expiry
    /// steps that are left out are ones that would have done nothing when taken in time order.
    /// An explorer, which may take a stale expiry at any moment, keeps every one.
    pub fn set_lazy_leases(&mut self, world: &World) {
        self.lease_timers =
            vec![LeaseTimers::default(); world.services.len() * world.resources.len()];
    }

    /// Schedules the expiry of a lease that begins now, for a lock's holder with `token`.
    fn schedule_expiry(&mut self, service: u32, resource: u32, token: u64, at: Micros) {
        let step = Step::LeaseExpiry {
            service,
            resource,
            token,
        };
        if self.lease_timers.is_empty() {
            self.schedule(at, step);
            return;
        }
        // The sequence number is taken as `schedule` takes it, whether or not the step goes in
        // now.
        self.seq += 1;
        let key = (at, self.seq);
        let timers =
            &mut self.lease_timers[service as usize * self.resources.len() + resource as usize];
        if at > self.horizon {
            timers.holder = None;
            return;
        }
        let now = timers.waiting.first().is_none_or(|first| key < *first);
        if now {
            timers.waiting.insert(0, key);
            self.agenda.push(at, key.1, step);
        }
        timers.holder = Some((token, key, now));
    }

    /// Takes note that a lock's earliest expiry step was taken (lazy leases only), and puts
    /// the step of the lock's current holder in the agenda if it waits outside. (Another step
    /// of the lock may still come before it; that costs a step that does nothing, and happens
    /// only when a transfer brought in a lease shorter than the lock's own.) `holder` is the
    /// token of the lock's holder.
    fn expiry_taken(&mut self, service: u32, resource: u32, holder: Option<u64>) {
        let timers =
            &mut self.lease_timers[service as usize * self.resources.len() + resource as usize];
        timers.waiting.remove(0);
        if let Some((token, key, false)) = timers.holder {
            if holder != Some(token) {
                // That hold ended before its lease could: its expiry would have done nothing.
                timers.holder = None;
            } else {
                let at = timers.waiting.partition_point(|other| *other < key);
                timers.waiting.insert(at, key);
                timers.holder = Some((token, key, true));
                self.agenda.push(
                    key.0,
                    key.1,
                    Step::LeaseExpiry {
                        service,
                        resource,
                        token,
                    },
                );
            }
        }
    }

    /// The time of the earliest scheduled step, if any (the simulator's choice).
    pub fn next_due(&self) -> Option<Micros> {
        self.agenda.peek_at()
    }

    /// Removes and returns the earliest scheduled step.
    #[inline]
    pub fn pop_earliest(&mut self) -> Option<Scheduled> {
        let (at, seq, step) = self.agenda.pop()?;
        Some(Scheduled { at, seq, step })
    }

    /// Removes and returns the enabled step with the given sequence number.
    pub fn take(&mut self, seq: u64) -> Option<Scheduled> {
        let (at, seq, step) = self.agenda.take(seq)?;
        Some(Scheduled { at, seq, step })
    }

    /// How many steps are waiting.
    pub fn pending(&self) -> usize {
        self.agenda.len()
    }

    /// Applies one step taken from the agenda, appending what happened to `out`.
    /// Time never goes backwards: a step scheduled in the past (an explorer's choice) happens now.
    pub fn apply(
        &mut self,
        world: &World,
        item: Scheduled,
        choices: &mut dyn Choices,
        out: &mut Vec<Event>,
    ) {
        self.now = self.now.max(item.at);
        let mut cx = Cx {
            world,
            state: self,
            choices,
            out,
        };
        cx.step(item.step);
        // Every test and every debug build checks the invariants after each step; a release
        // build, which the simulator's speed depends on, does not.
        #[cfg(debug_assertions)]
        if let Err(problem) = self.check(world) {
            panic!("a model invariant broke at {}: {problem}", self.now);
        }
    }
}

/// The context of one transition.
struct Cx<'a> {
    world: &'a World,
    state: &'a mut State,
    choices: &'a mut dyn Choices,
    out: &'a mut Vec<Event>,
}

impl Cx<'_> {
    fn emit(&mut self, what: What) {
        self.out.push(Event {
            at: self.state.now,
            what,
        });
    }

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
                        // latency), so ties may fall either way.
                        heal.sort_unstable_by_key(|(end, latency)| end + latency);
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

    fn send(&mut self, from: Endpoint, to: Endpoint, message: Message) {
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

    fn step(&mut self, step: Step) {
        match step {
            Step::Fault(fault) => self.fault(fault),
            Step::Forward {
                to,
                client,
                origin,
                message,
                ..
            } => self.forward(to, client, origin, message),
            Step::LeaseExpiry {
                service,
                resource,
                token,
            } => {
                let lazy = !self.state.lease_timers.is_empty();
                let holder = self
                    .lock(service, resource)
                    .holder
                    .as_ref()
                    .map(|h| h.token);
                if lazy {
                    self.state.expiry_taken(service, resource, holder);
                }
                if let Some(end) = self.world.outage_until(service, self.state.now) {
                    // A service that is down orders nothing; it expires the lease when it is back.
                    // (Kept lazily, an expiry that can no longer do anything is dropped here.)
                    if !lazy || holder == Some(token) {
                        self.state.schedule_expiry(service, resource, token, end);
                    }
                    return;
                }
                self.lease_expiry(service, resource, token);
            }
            Step::ClientTimer { client, timer } => {
                if let Some(end) = self.world.paused_until(client, self.state.now) {
                    self.state
                        .schedule(end, Step::ClientTimer { client, timer });
                    return;
                }
                self.client_timer(client, timer);
            }
            Step::Deliver { to, from, message } => match to {
                Endpoint::Service(s) => {
                    let Endpoint::Client(c) = from else {
                        unreachable!("only clients send to services")
                    };
                    self.deliver_to_service(s, c, message, None);
                }
                Endpoint::Client(c) => {
                    if let Some(end) = self.world.paused_until(c, self.state.now) {
                        self.state
                            .schedule(end, Step::Deliver { to, from, message });
                        return;
                    }
                    self.client_message(c, message);
                }
                Endpoint::Resource(r) => {
                    let Endpoint::Client(c) = from else {
                        unreachable!("only clients send to resources")
                    };
                    self.resource_message(r, c, message);
                }
            },
        }
    }

    /// A forwarded message arrives like the client's own, sent to the new service. Forwarding
    /// is rare (only after a migration), so it stays out of the common path.
    #[cold]
    #[inline(never)]
    fn forward(&mut self, to: u32, client: u32, origin: u32, message: Message) {
        self.deliver_to_service(to, client, message, Some(origin));
    }

    /// A client's message reaches a service, unless the service is down. `origin` is `None` for
    /// a message the client sent to this service, and for one passed on by a service the lock
    /// moved away from, the service the client sent it to.
    fn deliver_to_service(
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

    // Faults happen a few dozen times a run at most: kept out of line, they leave the steps
    // that happen all the time small enough to inline into the simulator's loop.
    #[cold]
    #[inline(never)]
    fn fault(&mut self, fault: Fault) {
        match fault {
            Fault::PartitionStart(p) => self.emit(What::PartitionStarted { partition: p }),
            Fault::PartitionEnd(p) => self.emit(What::PartitionEnded { partition: p }),
            Fault::OutageStart(s) => self.emit(What::OutageStarted { service: s }),
            Fault::OutageEnd(s) => {
                // Overlapping outage windows: the service is back only when none is active.
                if self.world.outage_until(s, self.state.now).is_none() {
                    self.emit(What::OutageEnded { service: s });
                }
            }
            Fault::PauseStart(c) => self.emit(What::PauseStarted { client: c }),
            Fault::PauseEnd(c) => self.emit(What::PauseEnded { client: c }),
            Fault::Migrate(m) => self.migrate(m),
        }
    }

    // ----- Lock services -------------------------------------------------------------------

    fn tick(&mut self, service: u32) -> u64 {
        let s = &mut self.state.services[service as usize];
        s.instant += 1;
        s.instant
    }

    fn log(&mut self, service: u32, resource: u32, op: ServiceOp) -> u64 {
        let instant = self.tick(service);
        self.emit(What::Service {
            service,
            instant,
            resource,
            op,
        });
        instant
    }

    fn lock(&mut self, service: u32, resource: u32) -> &mut LockState {
        &mut self.state.services[service as usize].locks[resource as usize]
    }

    fn service_message(
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
            } => self.acquire(service, client, resource, attempt, authority_token),
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
        let token = s.next_token;
        s.next_token += 1;
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
    /// form a loop (see `migrate`), so that is at most one step a service.
    fn home(&mut self, mut service: u32, resource: u32) -> u32 {
        for _ in 0..self.world.services.len() {
            match self.lock(service, resource).moved_to {
                Some(next) => service = next,
                None => break,
            }
        }
        service
    }

    fn grant_next(&mut self, service: u32, resource: u32) {
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

    fn lease_expiry(&mut self, service: u32, resource: u32, token: u64) {
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

    fn migrate(&mut self, index: u32) {
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
                        let token = s.next_token;
                        s.next_token += 1;
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

    // ----- Clients ---------------------------------------------------------------------------

    fn client_timer(&mut self, client: u32, timer: Timer) {
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
        self.emit(What::AcquireSent { client, service });
        self.send(
            Endpoint::Client(client),
            Endpoint::Service(service),
            Message::Acquire {
                resource: cfg.resource,
                attempt,
                authority_token,
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

    /// After a slot is held or skipped: ask the next service, or enter the critical section.
    fn advance(&mut self, client: u32) {
        let c = client as usize;
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
    /// otherwise that of the first service it holds.
    fn access_token(&self, client: u32) -> Option<Token> {
        self.state.clients[client as usize]
            .slots
            .iter()
            .find_map(|s| match s.state {
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
    fn lease_deadline(&self, client: u32) -> Option<Micros> {
        let c = client as usize;
        let cfg = &self.world.clients[c];
        if !cfg.lease_aware {
            return None;
        }
        self.state.clients[c]
            .slots
            .iter()
            .filter(|s| matches!(s.state, SlotState::Held { .. }))
            .filter_map(|s| {
                self.world.services[s.service as usize]
                    .lease
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

    fn client_message(&mut self, client: u32, message: Message) {
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

    // ----- The resource ----------------------------------------------------------------------

    /// Whether the resource accepts an access with this token, raising its highest token if so.
    fn fence(&mut self, resource: u32, token: Option<Token>) -> bool {
        let cfg = &self.world.resources[resource as usize];
        let st = &mut self.state.resources[resource as usize];
        let value = match (cfg.fencing, token) {
            (Fencing::Off, _) => return true,
            (_, None) => return false,
            (Fencing::AnySource, Some(t)) => t.value,
            (Fencing::OneSource, Some(t)) => {
                if Some(t.service) != cfg.fencing_source {
                    return false;
                }
                t.value
            }
        };
        if st.highest_token.is_some_and(|h| value < h) {
            return false;
        }
        st.highest_token = Some(value);
        true
    }

    fn resource_message(&mut self, resource: u32, client: u32, message: Message) {
        let r = resource as usize;
        match message {
            Message::Read {
                attempt,
                rows,
                token,
            } => {
                let check = self.world.resources[r].check_reads;
                let accepted = !check || self.fence(resource, token);
                let st = &self.state.resources[r];
                let values: Values = if accepted {
                    row_indices(rows).map(|i| st.values[i]).collect()
                } else {
                    Values::new()
                };
                self.emit(What::Read {
                    client,
                    resource,
                    rows,
                    token,
                    accepted,
                    values: values.clone(),
                });
                self.send(
                    Endpoint::Resource(resource),
                    Endpoint::Client(client),
                    Message::ReadReply {
                        attempt,
                        accepted,
                        values,
                    },
                );
            }
            Message::Write {
                attempt,
                rows,
                values,
                token,
            } => {
                let accepted = self.fence(resource, token);
                if accepted {
                    let st = &mut self.state.resources[r];
                    for (k, i) in row_indices(rows).enumerate() {
                        st.values[i] = values[k];
                        st.versions[i] += 1;
                    }
                }
                // Which updates this write loses is known only later (a later write based on an
                // older read can carry them forward again), so the trace records the write alone
                // and `monitor::lost_updates` attributes losses from the whole trace.
                self.emit(What::Write {
                    client,
                    resource,
                    rows,
                    token,
                    accepted,
                    values,
                });
                self.send(
                    Endpoint::Resource(resource),
                    Endpoint::Client(client),
                    Message::WriteReply { attempt, accepted },
                );
            }
            _ => unreachable!("resources receive only reads and writes"),
        }
    }
}

/// The indices of the rows in a row set, in ascending order.
pub fn row_indices(rows: u64) -> RowIndices {
    RowIndices(rows)
}

/// The iterator of [`row_indices`]. It clears the lowest set bit at each step, so it costs one
/// step per row in the set rather than one per possible row: row sets are read on every access
/// and by several monitors for each event that touches the resource.
#[derive(Clone, Copy, Debug)]
pub struct RowIndices(u64);

impl Iterator for RowIndices {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for RowIndices {}
