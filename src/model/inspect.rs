//! What only drivers other than the simulator need: the enabled steps as an explorer sees them,
//! a state's description (its `Eq`, `Hash` and fingerprint), and the invariants checked after
//! every step in debug builds. They live apart from the transition function so that the
//! simulator's hot code is compiled as it was without them.

use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::{Message, Phase, SlotState, State, Step};
use crate::scenario::Fencing;
use crate::world::{Endpoint, Micros, World};

impl State {
    /// Every step that may happen next, as (time, sequence number, step), earliest first: the
    /// explorer's view, in which any of them may come next. Of the messages on one channel only
    /// the first is offered, because channels are FIFO: a driver that took a later one first
    /// would reorder messages the model promises to deliver in order. The first is the earliest
    /// by (time, sequence number), which is the one the simulator takes, so taking the earliest
    /// enabled step each time is the simulator.
    pub fn enabled(&self) -> impl Iterator<Item = (Micros, u64, &Step)> {
        let mut heads: Vec<(Micros, u64, &Step)> = Vec::with_capacity(self.agenda.len());
        let mut channels: SmallVec<[((Endpoint, Endpoint), usize); 16]> = SmallVec::new();
        for (at, seq, step) in self.agenda.iter() {
            let Some(channel) = step.channel() else {
                heads.push((at, seq, step));
                continue;
            };
            match channels.iter().find(|(c, _)| *c == channel) {
                Some((_, i)) => {
                    let head = &mut heads[*i];
                    if (at, seq) < (head.0, head.1) {
                        *head = (at, seq, step);
                    }
                }
                None => {
                    channels.push((channel, heads.len()));
                    heads.push((at, seq, step));
                }
            }
        }
        heads.sort_unstable_by_key(|(at, seq, _)| (*at, *seq));
        heads.into_iter()
    }

    /// Writes what decides the state's future behaviour, and nothing else, to a hasher: the
    /// one description that [`Hash`], [`PartialEq`] and [`State::fingerprint`] share.
    ///
    /// Left out, because no decision of the model depends on them:
    /// - sequence numbers, and the order of waiting steps except within one channel (a channel
    ///   is FIFO; anything else may come in any order);
    /// - services' instants (local sequence numbers that are only logged, here and in the
    ///   grants that carry them);
    /// - absolute time: `now`, when each step is due, when each request was sent, when each
    ///   lease ends, the channels' latest arrivals. The explorer, which treats time this way,
    ///   refuses scenarios in which time would decide something (timed windows, lease-aware
    ///   clients, stop times); see `explore`.
    pub fn describe<H: Hasher>(&self, h: &mut H) {
        for s in &self.services {
            s.next_token.hash(h);
            for lock in &s.locks {
                match &lock.holder {
                    None => h.write_u8(0),
                    Some(x) => {
                        h.write_u8(1);
                        x.client.hash(h);
                        x.attempt.hash(h);
                        x.token.hash(h);
                        x.authority_token.hash(h);
                        x.moved_from.hash(h);
                    }
                }
                h.write_u64(lock.queue.len() as u64);
                for w in &lock.queue {
                    w.client.hash(h);
                    w.attempt.hash(h);
                    w.authority_token.hash(h);
                }
                lock.highest_authority_token.hash(h);
                lock.moved_to.hash(h);
                lock.draining_from.hash(h);
            }
        }
        for c in &self.clients {
            c.phase.hash(h);
            c.ops_started.hash(h);
            c.attempt.hash(h);
            c.retries.hash(h);
            c.believing.hash(h);
            h.write_u64(c.slots.len() as u64);
            for slot in &c.slots {
                slot.service.hash(h);
                match slot.state {
                    SlotState::NotSent => h.write_u8(0),
                    SlotState::Pending => h.write_u8(1),
                    SlotState::Queued => h.write_u8(2),
                    SlotState::Held { token, .. } => {
                        h.write_u8(3);
                        token.hash(h);
                    }
                    SlotState::Skipped => h.write_u8(4),
                }
            }
            h.write_u64(c.read_values.len() as u64);
            for v in &c.read_values {
                v.hash(h);
            }
        }
        for r in &self.resources {
            h.write_u64(r.values.len() as u64);
            for (v, n) in r.values.iter().zip(&r.versions) {
                v.hash(h);
                n.hash(h);
            }
            r.highest_token.hash(h);
        }
        for routes in &self.routes {
            for r in routes {
                r.hash(h);
            }
        }
        // Messages channel by channel in the order they will be delivered; the other steps as a
        // multiset, sorted by their content.
        let mut waiting: SmallVec<[(Micros, u64, &Step); 32]> = self.agenda.iter().collect();
        waiting.sort_unstable_by(|a, b| match (a.2.channel(), b.2.channel()) {
            (Some(x), Some(y)) => x.cmp(&y).then((a.0, a.1).cmp(&(b.0, b.1))),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.2.cmp(b.2),
        });
        h.write_u64(waiting.len() as u64);
        for (_, _, step) in waiting {
            describe_step(step, h);
        }
    }

    /// Lazy leases: the holder's expiry step is in the agenda, or another step of its lock
    /// comes before it there, so that the expiry is not missed.
    fn check_lease_timers(
        &self,
        world: &World,
        service: usize,
        lock: &super::LockState,
        timers: &super::LeaseTimers,
    ) -> Result<(), String> {
        if !timers.waiting.is_sorted() {
            return Err("its expiry steps are out of order".into());
        }
        let Some(hold) = &lock.holder else {
            return Ok(());
        };
        let Some(until) = hold.lease_until else {
            return Ok(());
        };
        match timers.holder {
            Some((token, key, true)) if token == hold.token => {
                if !timers.waiting.contains(&key) {
                    return Err("its holder's expiry step is not in the agenda".into());
                }
            }
            Some((token, key, false)) if token == hold.token => {
                if timers.waiting.first().is_none_or(|first| *first > key) {
                    return Err("its holder's expiry step waits behind no earlier step".into());
                }
            }
            _ => {
                // Only an expiry past the horizon is not kept: one due after the run, or one
                // put off to the end of an outage that lasts past the run.
                let past = |t: Micros| t > self.horizon;
                if !past(until)
                    && !world
                        .outage_until(service as u32, self.now)
                        .is_some_and(past)
                {
                    return Err("its holder's lease has no expiry step".into());
                }
            }
        }
        Ok(())
    }

    /// A 64-bit digest of [`State::describe`], the same on every platform: two states that
    /// behave alike have the same fingerprint. Explorers deduplicate states by it.
    pub fn fingerprint(&self) -> u64 {
        let mut h = StableHasher::default();
        self.describe(&mut h);
        h.finish()
    }

    /// The model's invariants: what must hold in every state whatever the scenario and whatever
    /// order the steps came in. A failure is a bug in the model, never a protocol violation
    /// (those are data, judged by the monitors and the properties).
    pub fn check(&self, world: &World) -> Result<(), String> {
        let clients = world.clients.len();
        let services = world.services.len();
        if self.services.len() != services
            || self.clients.len() != clients
            || self.resources.len() != world.resources.len()
        {
            return Err("the state's shape differs from its world's".into());
        }
        // Migrations merge queues, so a client may wait in one queue once per migration more.
        let queue_max = clients * (1 + world.migrations.len());
        for (s, service) in self.services.iter().enumerate() {
            let cfg = &world.services[s];
            for (r, lock) in service.locks.iter().enumerate() {
                let at = || format!("lock {r} of service {s}");
                if let Some(h) = &lock.holder {
                    if h.client as usize >= clients {
                        return Err(format!("{}: held by no client ({})", at(), h.client));
                    }
                    if h.token >= service.next_token {
                        return Err(format!("{}: holder's token {} not issued", at(), h.token));
                    }
                    if cfg.authority.is_some()
                        && h.authority_token.unwrap_or(0) > lock.highest_authority_token
                    {
                        return Err(format!(
                            "{}: holder's authority token above the highest seen",
                            at()
                        ));
                    }
                }
                if let Some(timers) = self.lease_timers.get(s * world.resources.len() + r) {
                    self.check_lease_timers(world, s, lock, timers)
                        .map_err(|problem| format!("{}: {problem}", at()))?;
                }
                if lock.queue.len() > queue_max {
                    return Err(format!("{}: {} waiters", at(), lock.queue.len()));
                }
                if lock.queue.iter().any(|w| w.client as usize >= clients) {
                    return Err(format!("{}: a waiter is no client", at()));
                }
                if lock.moved_to.is_some_and(|x| x as usize >= services)
                    || u32::from(lock.draining_from) >> services != 0
                {
                    return Err(format!("{}: points to no service", at()));
                }
                // Every chain of moves ends in the service the lock lives in: a loop would
                // leave the lock nowhere, and a freed lock's wait unended.
                // A chain through distinct services makes fewer hops than there are services,
                // so one still going after that many is a loop.
                let mut next = lock.moved_to;
                for _ in 0..services {
                    let Some(x) = next else { break };
                    next = self.services[x as usize].locks[r].moved_to;
                }
                if next.is_some() {
                    return Err(format!("{}: its moves form a loop", at()));
                }
                // A lock waits for drains only where it lives, and for holders whose locks
                // moved there.
                if lock.moved_to.is_some() && lock.draining_from != 0 {
                    return Err(format!("{}: drains, though it moved on", at()));
                }
                // A lock that moved on with its holder still in it is one its home waits for:
                // otherwise that holder's release would end no wait, and the home could grant
                // beside it.
                if let (Some(next), Some(_)) = (lock.moved_to, &lock.holder) {
                    let mut home = next;
                    for _ in 0..services {
                        match self.services[home as usize].locks[r].moved_to {
                            Some(x) => home = x,
                            None => break,
                        }
                    }
                    if self.services[home as usize].locks[r].draining_from & (1 << s) == 0 {
                        return Err(format!(
                            "{}: holds a lock that moved to service {home}, which does not wait for it",
                            at()
                        ));
                    }
                }
                let sources = lock.draining_from;
                if sources & (1 << s) != 0 {
                    return Err(format!("{}: waits for a drain from itself", at()));
                }
                for source in (0..services as u32).filter(|x| sources & (1 << x) != 0) {
                    let mut home = source;
                    for _ in 0..services {
                        match self.services[home as usize].locks[r].moved_to {
                            Some(x) => home = x,
                            None => break,
                        }
                    }
                    if home as usize != s {
                        return Err(format!(
                            "{}: drains from service {source}, whose lock lives in service {home}",
                            at()
                        ));
                    }
                }
            }
        }
        for (c, client) in self.clients.iter().enumerate() {
            let cfg = &world.clients[c];
            let at = || format!("client {c}");
            let inside = matches!(
                client.phase,
                Phase::Reading | Phase::Working | Phase::Writing
            );
            if client.believing != inside {
                return Err(format!(
                    "{}: believes {} in phase {:?}",
                    at(),
                    client.believing,
                    client.phase
                ));
            }
            if client.phase == Phase::Acquiring && client.slots.is_empty() {
                return Err(format!("{}: acquires nothing", at()));
            }
            if cfg
                .max_operations
                .is_some_and(|max| client.ops_started > max)
            {
                return Err(format!(
                    "{}: {} operations started",
                    at(),
                    client.ops_started
                ));
            }
            if client.retries > cfg.max_retries {
                return Err(format!("{}: {} retries", at(), client.retries));
            }
            for (i, slot) in client.slots.iter().enumerate() {
                let Some(service) = self.services.get(slot.service as usize) else {
                    return Err(format!("{}: slot {i} names no service", at()));
                };
                if let SlotState::Held { token, .. } = slot.state {
                    if token >= service.tokens_issued_below {
                        return Err(format!("{}: holds token {token} never issued", at()));
                    }
                }
            }
        }
        for (r, resource) in self.resources.iter().enumerate() {
            let cfg = &world.resources[r];
            let rows = cfg.rows.len();
            if resource.values.len() != rows || resource.versions.len() != rows {
                return Err(format!("resource {r}: rows differ from its world's"));
            }
            if resource.highest_token.is_some() && cfg.fencing == Fencing::Off {
                return Err(format!("resource {r}: a fencing token without fencing"));
            }
            // Each accepted write stores a value read earlier plus one, so no row can exceed its
            // initial value plus its accepted writes (it can fall short: a lost update).
            for (i, (v, n)) in resource.values.iter().zip(&resource.versions).enumerate() {
                let most = i64::try_from(*n)
                    .ok()
                    .and_then(|n| cfg.initial.checked_add(n));
                if most.is_some_and(|most| *v > most) {
                    return Err(format!("resource {r} row {i}: {v} after {n} writes"));
                }
            }
        }
        if self
            .routes
            .iter()
            .flatten()
            .any(|s| *s as usize >= services)
        {
            return Err("a route leads to no service".into());
        }
        Ok(())
    }
}

/// Writes a step for [`State::describe`]: like its own `Hash`, but without the instants that
/// grants carry.
fn describe_step<H: Hasher>(step: &Step, h: &mut H) {
    let message = match step {
        Step::Deliver { to, from, message } => {
            h.write_u8(0);
            from.hash(h);
            to.hash(h);
            message
        }
        Step::Forward {
            from,
            to,
            client,
            origin,
            message,
        } => {
            h.write_u8(1);
            from.hash(h);
            to.hash(h);
            client.hash(h);
            origin.hash(h);
            message
        }
        other => {
            h.write_u8(2);
            other.hash(h);
            return;
        }
    };
    match message {
        Message::Granted {
            service,
            attempt,
            token,
            instant: _,
        } => {
            h.write_u8(0xf0);
            service.hash(h);
            attempt.hash(h);
            token.hash(h);
        }
        Message::Moved {
            from,
            to,
            attempt,
            token,
            instant: _,
        } => {
            h.write_u8(0xf1);
            from.hash(h);
            to.hash(h);
            attempt.hash(h);
            token.hash(h);
        }
        other => {
            h.write_u8(0xf2);
            other.hash(h);
        }
    }
}

impl Step {
    /// The channel a message travels, as (sender, receiver); `None` for steps that are not
    /// messages. A forwarded message travels from the old service to the new one.
    pub fn channel(&self) -> Option<(Endpoint, Endpoint)> {
        match self {
            Step::Deliver { from, to, .. } => Some((*from, *to)),
            Step::Forward { from, to, .. } => {
                Some((Endpoint::Service(*from), Endpoint::Service(*to)))
            }
            _ => None,
        }
    }
}

/// States are equal when they behave alike: when [`State::describe`] writes the same words.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        let (mut a, mut b) = (Words::default(), Words::default());
        self.describe(&mut a);
        other.describe(&mut b);
        a.0 == b.0
    }
}

impl Eq for State {}

impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.describe(h);
    }
}

/// A hasher that keeps every word written to it, so two descriptions can be compared exactly.
#[derive(Default)]
struct Words(Vec<u64>);

impl Hasher for Words {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.push(bytes.len() as u64);
        self.0.extend(bytes.iter().map(|b| u64::from(*b)));
    }
    fn write_u64(&mut self, x: u64) {
        self.0.push(x);
    }
    fn write_u32(&mut self, x: u32) {
        self.0.push(u64::from(x));
    }
    fn write_u8(&mut self, x: u8) {
        self.0.push(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.0.push(x as u64);
    }
}

/// A fast hasher whose digest is the same on every platform: `usize` is written as 64 bits
/// and bytes in the order given, and nothing is keyed by the process.
#[derive(Default)]
pub struct StableHasher(u64);

impl StableHasher {
    #[inline]
    fn mix(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        // A final avalanche, so that fingerprints can key a table without further hashing.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.mix(u64::from(x));
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.mix(u64::from(x));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.mix(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.mix(x as u64);
    }
    #[inline]
    fn write_i64(&mut self, x: i64) {
        self.mix(x as u64);
    }
}
