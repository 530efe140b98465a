//! Waits and cycles: the wait-for graph rebuilt from the services' logs, the cycles that form
//! and break in it, and the stalls in which they keep doing so (livelocks).

use serde::Serialize;

use crate::trace::{Event, ServiceOp, What};
use crate::world::{Micros, ProtocolConfig, World};

use super::{clients_in, has_client, set_client, Clients};

/// A cycle in the wait-for graph across services.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WaitCycle {
    pub clients: Vec<String>,
    pub services: Vec<String>,
    pub formed_us: Micros,
    /// When the cycle was broken, if it was.
    pub broken_us: Option<Micros>,
    /// What broke it: `"lease expiry"`, `"client timeout"`, `"a higher authority token"`,
    /// `"release"`, or nothing.
    pub broken_by: Option<String>,
    /// True if nothing in the scenario can ever break it: no client in it has an acquire
    /// timeout and no lock in it has a lease.
    pub unbreakable: bool,
}

/// A stall in which wait-for cycles formed and broke again and again while nothing completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Livelock {
    pub from_us: Micros,
    pub to_us: Micros,
    /// Wait-for cycles that formed and broke inside the stall.
    pub broken_cycles: u32,
    /// The clients that waited in it.
    pub clients: Vec<String>,
}

/// The wait-for graph, rebuilt from service logs: for each lock in each service, its holder
/// and its waiters; for each client, the locks it waits for.
///
/// Locks are numbered densely (service × resources + resource): at most eight services and
/// eight resources make at most 64 locks, so a client's waits are one 64-bit set, and a lock's
/// waiters one client set. The graph is updated on every service event of a run, a few hundred
/// thousand times on a busy trace, and with sets every update is a few bit operations.
struct WaitGraph {
    resources: u32,
    /// The holder of each lock, or `NOBODY`.
    holder: Vec<u32>,
    /// The locks each client holds: a new wait can close a cycle only back to a holder.
    holds: Vec<u64>,
    /// The clients queued for each lock.
    waiters: Vec<Clients>,
    /// The locks each client waits for. Searches take edges in ascending lock order, which is
    /// ascending (service, resource), so they report the same cycle on every run.
    waits_on: Vec<u64>,
    /// When each client's wait for each lock began (client × locks + lock), valid while the
    /// client waits for it.
    wait_since: Vec<Micros>,
    locks: usize,
    /// When each lock's holder took it.
    held_since: Vec<Micros>,
    /// Search scratch: the visit mark of each client, valid when it equals `stamp`.
    seen: Vec<u32>,
    stamp: u32,
    /// Search scratch, kept between searches because a search runs for most queued clients:
    /// the clients on the path with where their untaken out-edges start in `pending`, and
    /// those edges, the latest client's last.
    path_clients: Vec<(u32, usize)>,
    pending: Vec<(u32, (u32, u32))>,
    path: Cycle,
}

const NOBODY: u32 = u32::MAX;

/// A wait-for cycle: the clients in order (each waits for the next, the last for the first),
/// and the lock (service, resource) each waits on.
type Cycle = Vec<(u32, (u32, u32))>;

/// A depth-first search's stack: each client on the path with its out-edges not yet taken.
type SearchStack = Vec<(u32, Cycle)>;

impl WaitGraph {
    pub(super) fn new(world: &World) -> WaitGraph {
        let locks = world.services.len() * world.resources.len();
        debug_assert!(locks <= 64, "the format allows at most 64 locks");
        WaitGraph {
            resources: world.resources.len() as u32,
            holder: vec![NOBODY; locks],
            holds: vec![0; world.clients.len()],
            waiters: vec![[0; 4]; locks],
            waits_on: vec![0; world.clients.len()],
            wait_since: vec![0; world.clients.len() * locks],
            locks,
            held_since: vec![0; locks],
            seen: vec![0; world.clients.len()],
            stamp: 0,
            path_clients: Vec::new(),
            pending: Vec::new(),
            path: Vec::new(),
        }
    }

    fn lock(&self, key: (u32, u32)) -> usize {
        (key.0 * self.resources + key.1) as usize
    }

    fn key(&self, lock: usize) -> (u32, u32) {
        (lock as u32 / self.resources, lock as u32 % self.resources)
    }

    fn holder_of(&self, key: (u32, u32)) -> Option<u32> {
        Some(self.holder[self.lock(key)]).filter(|h| *h != NOBODY)
    }

    fn stop_waiting(&mut self, key: (u32, u32), client: u32) {
        let lock = self.lock(key);
        set_client(&mut self.waiters[lock], client, false);
        self.waits_on[client as usize] &= !(1u64 << lock);
    }

    /// Whether a client waits for a lock.
    fn waits_for(&self, client: u32, key: (u32, u32)) -> bool {
        self.waits_on[client as usize] & (1u64 << self.lock(key)) != 0
    }

    fn let_go(&mut self, key: (u32, u32), client: u32) {
        let lock = self.lock(key);
        if self.holder[lock] == client {
            self.set_holder(lock, NOBODY);
        }
    }

    fn set_holder(&mut self, lock: usize, client: u32) {
        let old = self.holder[lock];
        if old != NOBODY {
            self.holds[old as usize] &= !(1u64 << lock);
        }
        if client != NOBODY {
            self.holds[client as usize] |= 1u64 << lock;
        }
        self.holder[lock] = client;
    }

    /// Whether a client holds any lock: only then can a path of waits end at it.
    fn holds_any(&self, client: u32) -> bool {
        self.holds[client as usize] != 0
    }

    fn apply(&mut self, service: u32, resource: u32, op: &ServiceOp, now: Micros) {
        let key = (service, resource);
        let lock = self.lock(key);
        match *op {
            ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                // A grant confirmed to its holder again does not start a new hold.
                if self.holder[lock] != client {
                    self.set_holder(lock, client);
                    self.held_since[lock] = now;
                }
                self.stop_waiting(key, client);
            }
            ServiceOp::Queued { client, .. } => {
                set_client(&mut self.waiters[lock], client, true);
                let on = &mut self.waits_on[client as usize];
                // A wait that is queued again keeps the time it began.
                if *on & (1u64 << lock) == 0 {
                    *on |= 1u64 << lock;
                    self.wait_since[client as usize * self.locks + lock] = now;
                }
            }
            ServiceOp::Released { client, .. }
            | ServiceOp::Expired { client, .. }
            | ServiceOp::Superseded { client, .. } => self.let_go(key, client),
            ServiceOp::Cancelled { client } | ServiceOp::Refused { client, .. } => {
                self.stop_waiting(key, client);
            }
            ServiceOp::Forgotten {
                client,
                token: Some(_),
            } => self.let_go(key, client),
            ServiceOp::Forgotten {
                client,
                token: None,
            } => self.stop_waiting(key, client),
            ServiceOp::MovedOut { client, held, .. } => {
                if held {
                    self.let_go(key, client);
                } else {
                    self.stop_waiting(key, client);
                }
            }
            ServiceOp::ReleaseIgnored { .. } | ServiceOp::Drained { .. } => {}
        }
    }

    /// The clients a client waits for, with the lock that carries each edge.
    fn edges(&self, client: u32) -> impl Iterator<Item = (u32, (u32, u32))> + '_ {
        let mut locks = self.waits_on[client as usize];
        std::iter::from_fn(move || {
            while locks != 0 {
                let lock = locks.trailing_zeros() as usize;
                locks &= locks - 1;
                let h = self.holder[lock];
                if h != NOBODY && h != client {
                    return Some((h, self.key(lock)));
                }
            }
            None
        })
    }

    /// When a standing cycle closed: when the last of its waits began, or the last of the holds
    /// it waits on was taken, whichever came later.
    fn formed(&self, cycle: &Cycle) -> Micros {
        cycle
            .iter()
            .map(|(c, key)| {
                let lock = self.lock(*key);
                let wait = if self.waits_for(*c, *key) {
                    self.wait_since[*c as usize * self.locks + lock]
                } else {
                    0
                };
                wait.max(self.held_since[lock])
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether every edge of a cycle is still there.
    fn has(&self, cycle: &Cycle) -> bool {
        cycle.iter().enumerate().all(|(k, (c, key))| {
            let next = cycle[(k + 1) % cycle.len()].0;
            self.waits_for(*c, *key) && self.holder_of(*key) == Some(next)
        })
    }

    /// Starts a new search: every client unvisited, in constant time.
    fn new_search(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
    }

    /// A path of waits from `from` to the first client `target` accepts, as (client, lock it
    /// waits on) steps, found by a depth-first search that visits each client once: linear in
    /// the graph's size.
    fn path_to(&mut self, from: u32, target: impl Fn(u32) -> bool) -> Option<Cycle> {
        // Most holders wait for nothing: then there is no path, and nothing to set up.
        if self.waits_on[from as usize] == 0 {
            return None;
        }
        self.new_search();
        // Each client on the path owns the tail of `pending` above its start: its out-edges not
        // yet taken, taken last first. `path` holds the edge from each client to the next.
        let mut clients = std::mem::take(&mut self.path_clients);
        let mut pending = std::mem::take(&mut self.pending);
        let mut path = std::mem::take(&mut self.path);
        clients.clear();
        pending.clear();
        path.clear();
        clients.push((from, 0));
        pending.extend(self.edges(from));
        self.seen[from as usize] = self.stamp;
        let mut found = None;
        while let Some(&(at, start)) = clients.last() {
            if pending.len() > start {
                let (next, key) = pending.pop().expect("longer than its start");
                if target(next) {
                    path.push((at, key));
                    found = Some(path.clone());
                    break;
                }
                if self.seen[next as usize] != self.stamp {
                    self.seen[next as usize] = self.stamp;
                    path.push((at, key));
                    clients.push((next, pending.len()));
                    pending.extend(self.edges(next));
                }
            } else {
                clients.pop();
                path.pop();
            }
        }
        self.path_clients = clients;
        self.pending = pending;
        self.path = path;
        found
    }

    /// A cycle through new edges `waiter -> holder` (one per waiter), if the holder already
    /// waits, through others, for one of the waiters: one search, whatever the waiters.
    fn cycle_through(&mut self, lock_key: (u32, u32), holder: u32) -> Option<Cycle> {
        let lock = self.lock(lock_key);
        let waiters = self.waiters[lock];
        if self.waits_on[holder as usize] == 0 {
            return None;
        }
        // A path of waits can only end at a client that holds a lock.
        if !clients_in(&waiters).any(|c| c != holder && self.holds_any(c)) {
            return None;
        }
        let path = self.path_to(holder, |c| has_client(&waiters, c) && c != holder);
        path.map(|path| self.close(path, lock_key))
    }

    /// The cycle a path of waits makes when the client it reaches waits on `lock_key`, whose
    /// holder the path starts from.
    fn close(&self, path: Cycle, lock_key: (u32, u32)) -> Cycle {
        let (last, last_key) = *path.last().expect("a found path has an edge");
        let reached = self
            .holder_of(last_key)
            .filter(|h| *h != last)
            .expect("an edge leads to the holder of its lock");
        let mut cycle = vec![(reached, lock_key)];
        cycle.extend(path);
        cycle
    }

    /// Any cycle among one resource's locks, by one depth-first search over every client that
    /// waits for one of them: a client still on the search's stack that is reached again closes
    /// a cycle. (A client waits for and holds locks of its own resource only, so the waits of
    /// different resources never meet.)
    fn any_cycle(&self, resource: u32) -> Option<Cycle> {
        let n = self.waits_on.len();
        // 0: not visited, 1: on the stack, 2: finished.
        let mut color = vec![0u8; n];
        for root in 0..n as u32 {
            let waits = self.waits_on[root as usize];
            // The first lock a client waits for tells its resource.
            if color[root as usize] != 0
                || waits == 0
                || self.key(waits.trailing_zeros() as usize).1 != resource
            {
                continue;
            }
            color[root as usize] = 1;
            let mut stack: SearchStack = vec![(root, self.edges(root).collect())];
            let mut path: Cycle = Vec::new();
            while let Some((at, pending)) = stack.last_mut() {
                let at = *at;
                match pending.pop() {
                    Some((next, key)) => match color[next as usize] {
                        0 => {
                            color[next as usize] = 1;
                            path.push((at, key));
                            stack.push((next, self.edges(next).collect()));
                        }
                        1 => {
                            path.push((at, key));
                            let start = stack
                                .iter()
                                .position(|s| s.0 == next)
                                .expect("a client on the stack is in it");
                            return Some(path.split_off(start));
                        }
                        _ => {}
                    },
                    None => {
                        color[at as usize] = 2;
                        stack.pop();
                        path.pop();
                    }
                }
            }
        }
        None
    }
}

/// What broke a cycle, named from the operation that removed its edge.
fn broke_by(op: &ServiceOp, aborts: &[Option<&'static str>]) -> &'static str {
    match op {
        ServiceOp::Expired { .. } => "lease expiry",
        ServiceOp::Superseded { .. } => "a higher authority token",
        ServiceOp::Released { client, .. } => aborts[*client as usize].unwrap_or("release"),
        ServiceOp::Cancelled { client } => aborts[*client as usize].unwrap_or("client timeout"),
        ServiceOp::Refused { .. } => "refusal",
        ServiceOp::Forgotten { .. } => "a restart without persistence",
        ServiceOp::MovedOut { .. }
        | ServiceOp::TransferredIn { .. }
        | ServiceOp::Drained { .. } => "migration",
        ServiceOp::Granted { .. } | ServiceOp::Queued { .. } | ServiceOp::ReleaseIgnored { .. } => {
            "release"
        }
    }
}

/// Wait-for cycles across services, each with when it formed, when and by what it broke.
///
/// A client waits for and holds locks of its own resource only, so each resource's waits form
/// a graph of their own, and one loop per resource is followed at a time, from the moment it
/// closes to the moment it opens. With two services on a resource that is every loop: two
/// locks make one loop at most. With three or more, loops can stand side by side: when the one
/// followed opens, another still standing is followed from when it closed, but a loop that
/// closes and opens while another is followed is not seen.
///
/// Cost per service event: a new edge is checked with one search from its holder (linear in the
/// graph, which has at most one edge per client and lock); a standing cycle is re-checked edge
/// by edge; a full search of the resource's waits runs only after a cycle breaks.
pub(super) struct CycleWatch {
    graph: WaitGraph,
    pub(super) cycles: Vec<WaitCycle>,
    /// The loop followed on each resource, and when it closed.
    current: Vec<Option<(Cycle, Micros)>>,
    /// Why each client last let go of its locks: its own timeout, a refusal elsewhere, giving
    /// up on an unreachable service, or the end of its operation. A release or cancel that
    /// breaks a cycle is named after the cause, not the message that carried it.
    aborts: Vec<Option<&'static str>>,
}

impl CycleWatch {
    pub(super) fn new(world: &World) -> CycleWatch {
        CycleWatch {
            graph: WaitGraph::new(world),
            cycles: Vec::new(),
            current: vec![None; world.resources.len()],
            aborts: vec![None; world.clients.len()],
        }
    }

    pub(super) fn on(&mut self, world: &World, e: &Event) {
        let (service, resource, op) = match &e.what {
            What::BeliefEnded { client, reason, .. } => {
                self.aborts[*client as usize] = Some(match reason {
                    crate::trace::BeliefEnd::Released => "release",
                    crate::trace::BeliefEnd::Rejected => "release after a rejected access",
                    crate::trace::BeliefEnd::LeaseExpiredLocally => {
                        "release by a client whose lease ran out"
                    }
                });
                return;
            }
            What::AttemptAborted { client, reason, .. } => {
                self.aborts[*client as usize] = Some(match reason {
                    crate::trace::AbortReason::Timeout => "client timeout",
                    crate::trace::AbortReason::Refused => "refusal",
                    crate::trace::AbortReason::NothingReachable => "client gave up",
                    crate::trace::AbortReason::QuorumMissed => "a missed quorum",
                    crate::trace::AbortReason::ValiditySpent => "a spent validity",
                });
                return;
            }
            What::SkippedUnreachable { client, .. } => {
                self.aborts[*client as usize] = Some("client timeout");
                return;
            }
            What::Service {
                service,
                resource,
                op,
                ..
            } => (*service, *resource, op),
            _ => return,
        };
        let key = (service, resource);
        let graph = &mut self.graph;
        graph.apply(service, resource, op, e.at);
        let current = &mut self.current[resource as usize];
        match current {
            None => {
                // A new cycle needs a new edge, and it passes through that edge.
                let found = match *op {
                    ServiceOp::Queued { client, .. } => match graph.holder_of(key) {
                        // A cycle through the new wait leads from the holder back to the
                        // client, so the holder waits and the client holds.
                        Some(h) if graph.waits_on[h as usize] == 0 || !graph.holds_any(client) => {
                            None
                        }
                        Some(h) => graph
                            .path_to(h, |c| c == client && c != h)
                            .map(|path| graph.close(path, key)),
                        None => None,
                    },
                    ServiceOp::Granted { client, .. } | ServiceOp::TransferredIn { client, .. } => {
                        graph.cycle_through(key, client)
                    }
                    _ => None,
                };
                if let Some(cycle) = found {
                    *current = Some((cycle, e.at));
                }
            }
            Some((cycle, formed)) => {
                if !graph.has(cycle) {
                    self.cycles.push(make_cycle(
                        world,
                        cycle,
                        *formed,
                        Some((e.at, broke_by(op, &self.aborts))),
                    ));
                    // Another loop may still stand: it is followed from when it closed.
                    *current = graph.any_cycle(resource).map(|c| {
                        let formed = graph.formed(&c);
                        (c, formed)
                    });
                }
            }
        }
    }

    pub(super) fn finish(mut self, world: &World) -> Vec<WaitCycle> {
        // The cycles still standing come last, in the order they closed.
        let mut standing: Vec<(Cycle, Micros)> = self.current.into_iter().flatten().collect();
        crate::sorted::sort_by_key(&mut standing, |(_, formed)| *formed);
        for (cycle, formed) in standing {
            self.cycles.push(make_cycle(world, &cycle, formed, None));
        }
        self.cycles
    }
}

fn make_cycle(
    world: &World,
    cycle: &Cycle,
    formed: Micros,
    broken: Option<(Micros, &str)>,
) -> WaitCycle {
    let unbreakable = cycle.iter().all(|(c, (s, _))| {
        world.clients[*c as usize].acquire_timeout.is_none()
            && world.services[*s as usize].lease.is_none()
    });
    WaitCycle {
        clients: cycle
            .iter()
            .map(|(c, _)| world.clients[*c as usize].name.clone())
            .collect(),
        services: cycle
            .iter()
            .map(|(_, (s, _))| world.services[*s as usize].name.clone())
            .collect(),
        formed_us: formed,
        broken_us: broken.map(|b| b.0),
        broken_by: broken.map(|b| b.1.to_string()),
        unbreakable,
    }
}

/// The least number of wait-for cycles that must form and break inside a stall for it to be
/// reported as a livelock: one broken cycle is a hiccup, repeated ones are churn.
pub const LIVELOCK_CYCLES_MIN: u32 = 2;

/// Stalls in which wait-for cycles formed and broke at least [`LIVELOCK_CYCLES_MIN`] times.
///
/// A stall runs from the first moment a client waits for a lock after the last completed
/// operation (an accepted write) to the next completed operation, or to the end of the run.
/// The cycles counted are those that formed and broke inside it.
pub(super) struct StallWatch {
    waiting: Clients,
    stall: Option<(Micros, Clients)>,
    /// The next cycle to count: cycles are listed in the order they broke (an unbroken one
    /// last), and stalls come in time order, so one pass over both counts each stall's cycles.
    next_cycle: usize,
    /// Stalls that ended at the current instant: they are counted once time moves on, so that
    /// a cycle breaking later at the same instant still counts, as it does for a whole trace.
    ended: Vec<(Micros, Micros, Clients)>,
    out: Vec<Livelock>,
}

impl StallWatch {
    pub(super) fn new() -> StallWatch {
        StallWatch {
            waiting: [0; 4],
            stall: None,
            next_cycle: 0,
            ended: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Ends a stall at `to`, counting the cycles that formed and broke inside it. Every cycle
    /// broken by then is already in `cycles`, because cycles break at events.
    fn close(
        &mut self,
        world: &World,
        from: Micros,
        to: Micros,
        who: Clients,
        cycles: &[WaitCycle],
    ) {
        let mut broken = 0u32;
        while let Some(c) = cycles.get(self.next_cycle) {
            match c.broken_us {
                Some(b) if b <= to => {
                    if c.formed_us >= from {
                        broken += 1;
                    }
                    self.next_cycle += 1;
                }
                _ => break,
            }
        }
        if broken >= LIVELOCK_CYCLES_MIN {
            self.out.push(Livelock {
                from_us: from,
                to_us: to,
                broken_cycles: broken,
                clients: clients_in(&who)
                    .map(|c| world.clients[c as usize].name.clone())
                    .collect(),
            });
        }
    }

    fn flush(&mut self, world: &World, cycles: &[WaitCycle]) {
        // The list is taken and given back, so that it keeps its room: a stall can end at any
        // accepted write, and a new list for each would cost more than the rest of this watch.
        let mut ended = std::mem::take(&mut self.ended);
        for (from, to, who) in ended.drain(..) {
            self.close(world, from, to, who, cycles);
        }
        self.ended = ended;
    }

    pub(super) fn on(&mut self, world: &World, e: &Event, cycles: &[WaitCycle]) {
        if self.ended.last().is_some_and(|(_, to, _)| *to < e.at) {
            self.flush(world, cycles);
        }
        match &e.what {
            What::OpStarted { client, .. }
                if world.clients[*client as usize].protocol != ProtocolConfig::NoLock =>
            {
                set_client(&mut self.waiting, *client, true);
                let (_, who) = self.stall.get_or_insert((e.at, [0; 4]));
                set_client(who, *client, true);
            }
            What::BeliefStarted { client, .. } | What::GaveUp { client } => {
                set_client(&mut self.waiting, *client, false);
            }
            What::Write { accepted: true, .. } => {
                if let Some((from, who)) = self.stall.take() {
                    self.ended.push((from, e.at, who));
                }
                if self.waiting != [0; 4] {
                    self.stall = Some((e.at, self.waiting));
                }
            }
            _ => {}
        }
    }

    pub(super) fn finish(
        mut self,
        world: &World,
        end: Micros,
        cycles: &[WaitCycle],
    ) -> Vec<Livelock> {
        self.flush(world, cycles);
        if let Some((from, who)) = self.stall.take() {
            self.close(world, from, end, who, cycles);
        }
        self.out
    }
}
