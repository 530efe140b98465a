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
use crate::trace::{Endpoint, Event, RefuseReason, Token, Values, What};
use crate::world::{Micros, World};

// One transition's work is split by actor: each file adds its part of `Cx`'s methods.
mod client;
mod migration;
mod network;
mod resource;
mod service;

mod inspect;
pub use inspect::StableHasher;

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
    /// A majority client's lock would no longer be valid: an attempt still acquiring gives up.
    Validity {
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
        /// A try (Redis' `SET NX`): granted only if the lock is free and nobody waits for it,
        /// refused otherwise, never queued.
        try_only: bool,
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
    /// One more than the highest token the service ever issued: after a restart without
    /// persistence `next_token` starts again from the first token, and clients may still hold
    /// tokens from before it.
    pub tokens_issued_below: u64,
    /// One lock per resource.
    pub locks: Vec<LockState>,
}

impl ServiceState {
    /// Takes the next token: every grant and every hold a transfer brings in has one.
    fn issue_token(&mut self) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        self.tokens_issued_below = self.tokens_issued_below.max(self.next_token);
        token
    }
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
                    tokens_issued_below: s.first_token,
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

    /// Takes every lease expiry step of a service out of the agenda: the service forgot the
    /// holds they were for, and its tokens start again, so a new hold may carry the token an
    /// old step names. The agenda is scanned once for each restart without persistence, which
    /// the scenario's limits make rare (at most 64 outages a service).
    fn forget_expiries(&mut self, service: u32) {
        let steps: Vec<u64> = self
            .agenda
            .iter()
            .filter(|(_, _, step)| {
                matches!(step, Step::LeaseExpiry { service: s, .. } if *s == service)
            })
            .map(|(_, seq, _)| seq)
            .collect();
        for seq in steps {
            self.agenda.take(seq);
        }
        if !self.lease_timers.is_empty() {
            let resources = self.resources.len();
            let at = service as usize * resources;
            for timers in &mut self.lease_timers[at..at + resources] {
                *timers = LeaseTimers::default();
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

/// The context of one transition. `step` dispatches it to the actor it concerns, each in its
/// own file: the network (`network.rs`), the lock services (`service.rs`), migrations
/// (`migration.rs`), the clients (`client.rs`) and the resource (`resource.rs`). They are
/// `impl Cx` blocks of one type, so a step still inlines through them as before.
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
                    if self.world.services[s as usize].forgets_on_restart {
                        self.restart_empty(s);
                    }
                }
            }
            Fault::PauseStart(c) => self.emit(What::PauseStarted { client: c }),
            Fault::PauseEnd(c) => self.emit(What::PauseEnded { client: c }),
            Fault::Migrate(m) => self.migrate(m),
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
