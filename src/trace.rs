//! The trace: everything that happened in a run, in order, as data.
//!
//! Events name clients, services and resources by index into the [`World`]; the text rendering
//! (one line per event) resolves names and is what snapshot tests compare.

use serde::Serialize;
use smallvec::SmallVec;

// Endpoints are the world's: the trace names them, the world does not need the trace.
pub use crate::world::Endpoint;
use crate::world::{Micros, World};

/// Row values carried by reads and writes. Most operations touch one or two rows, which then
/// need no allocation.
pub type Values = SmallVec<[i64; 2]>;

/// A token as presented to a resource: which service issued it, and its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Token {
    pub service: u32,
    pub value: u64,
}

/// One grant a client holds when it starts to believe it has the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct GrantRef {
    pub service: u32,
    pub token: u64,
    /// The service's own instant (local sequence number) of the grant.
    pub instant: u64,
}

/// Why an acquisition attempt was abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Timeout,
    Refused,
    /// Every service was skipped as unreachable.
    NothingReachable,
}

/// Why a client stopped believing it held the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BeliefEnd {
    /// The operation finished and the client released.
    Released,
    /// The resource rejected an access (fencing).
    Rejected,
    /// A lease-aware client found its lease (possibly) expired before an access.
    LeaseExpiredLocally,
}

/// Why a service refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseReason {
    /// A subordinate received no authority token.
    NoAuthorityToken,
    /// A subordinate received an authority token lower than one it has seen.
    StaleAuthorityToken,
    /// The lock has moved to another service.
    Moved,
}

/// What a lock service did, at one of its own instants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ServiceOp {
    Granted {
        client: u32,
        token: u64,
        lease_until: Option<Micros>,
    },
    Queued {
        client: u32,
        /// The holder the client now waits behind.
        behind: Option<u32>,
    },
    Refused {
        client: u32,
        reason: RefuseReason,
    },
    Released {
        client: u32,
        token: u64,
    },
    /// A release from a client that no longer holds the lock (its lease expired, or it was
    /// superseded).
    ReleaseIgnored {
        client: u32,
        token: u64,
    },
    Cancelled {
        client: u32,
    },
    Expired {
        client: u32,
        token: u64,
    },
    /// A subordinate dropped a holder because a higher authority token arrived.
    Superseded {
        client: u32,
        token: u64,
    },
    /// The lock's holder or waiter was handed to another service by a migration.
    MovedOut {
        client: u32,
        to: u32,
        held: bool,
    },
    /// A holder arrived from another service by a transfer migration.
    TransferredIn {
        client: u32,
        token: u64,
        from: u32,
    },
    /// Draining of the old service finished; this service may grant the lock.
    Drained {
        from: u32,
    },
}

/// How a service operation changes who holds the lock, if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldChange {
    /// The client holds the lock from now on (a grant, a confirmation, or a transfer in).
    Begins { client: u32, token: u64 },
    /// The client's hold ends; `token` is `None` when the hold was handed to another service.
    Ends { client: u32, token: Option<u64> },
}

impl ServiceOp {
    /// The one place that says which operations start and end holds, for every monitor.
    pub fn hold_change(&self) -> Option<HoldChange> {
        match *self {
            ServiceOp::Granted { client, token, .. }
            | ServiceOp::TransferredIn { client, token, .. } => {
                Some(HoldChange::Begins { client, token })
            }
            ServiceOp::Released { client, token }
            | ServiceOp::Expired { client, token }
            | ServiceOp::Superseded { client, token } => Some(HoldChange::Ends {
                client,
                token: Some(token),
            }),
            ServiceOp::MovedOut {
                client, held: true, ..
            } => Some(HoldChange::Ends {
                client,
                token: None,
            }),
            _ => None,
        }
    }
}

/// Why a message was not delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossReason {
    /// A partition cut the path, or the service's majority was out of reach.
    Partition,
    /// The service was down when the message arrived.
    Outage,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum What {
    PartitionStarted {
        partition: u32,
    },
    PartitionEnded {
        partition: u32,
    },
    OutageStarted {
        service: u32,
    },
    OutageEnded {
        service: u32,
    },
    PauseStarted {
        client: u32,
    },
    PauseEnded {
        client: u32,
    },
    Migrated {
        migration: u32,
        /// Set when an earlier drain or transfer had already taken the lock away from the
        /// migration's old service: the service the lock lives in, and the migration moved
        /// nothing but where clients ask.
        #[serde(skip_serializing_if = "Option::is_none")]
        already_in: Option<u32>,
    },
    /// A client begins an operation and starts to wait for its locks.
    OpStarted {
        client: u32,
        op: u32,
    },
    AcquireSent {
        client: u32,
        service: u32,
    },
    /// A service did not answer by the timeout and the protocol proceeds without it.
    SkippedUnreachable {
        client: u32,
        service: u32,
    },
    AttemptAborted {
        client: u32,
        reason: AbortReason,
        retry: bool,
    },
    /// The operation ended without entering the critical section.
    GaveUp {
        client: u32,
    },
    BeliefStarted {
        client: u32,
        resource: u32,
        rows: u64,
        grants: Vec<GrantRef>,
    },
    BeliefEnded {
        client: u32,
        resource: u32,
        reason: BeliefEnd,
    },
    /// A client learned that its held lock now lives in another service.
    LockTransferred {
        client: u32,
        from: u32,
        to: u32,
        token: u64,
    },
    /// A grant arrived for an attempt the client had already abandoned; it releases it.
    StaleGrantReleased {
        client: u32,
        service: u32,
        token: u64,
    },
    Service {
        service: u32,
        instant: u64,
        resource: u32,
        op: ServiceOp,
    },
    Read {
        client: u32,
        resource: u32,
        rows: u64,
        token: Option<Token>,
        accepted: bool,
        /// The values read, one per row in the row set, in row order (none if refused).
        values: Values,
    },
    Write {
        client: u32,
        resource: u32,
        rows: u64,
        token: Option<Token>,
        accepted: bool,
        /// The values written, one per row in the row set, in row order.
        values: Values,
    },
    MessageLost {
        from: Endpoint,
        to: Endpoint,
        reason: LossReason,
    },
    /// A client finished its last operation, or reached its stop time.
    ClientStopped {
        client: u32,
    },
}

/// One event of a run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Event {
    /// Simulated time in microseconds.
    pub at: Micros,
    #[serde(flatten)]
    pub what: What,
}

/// A recorded run: a trace and the world it happened in. The monitors judge anything that has
/// these, whichever driver produced it (the simulator, or a counterexample the explorer replays),
/// so they depend on the trace and the compiled world alone.
pub trait Recorded {
    fn world(&self) -> &World;
    fn events(&self) -> &[Event];
    /// The simulated time the record covers.
    fn end(&self) -> Micros;
    /// True if the record stops short of its scenario's duration because a budget ran out.
    fn truncated(&self) -> bool;
    /// The seed of a random run (zero for a run no seed chose).
    fn seed(&self) -> u64;
}

/// A row set's values in row order, as a trace line shows them: `5` or `5,7`.
pub fn values_text(values: &[i64]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Formats microseconds as seconds with millisecond precision, e.g. `1.250s`.
pub fn seconds(t: Micros) -> String {
    format!("{}.{:03}s", t / 1_000_000, (t % 1_000_000) / 1_000)
}

/// Formats microseconds as seconds with microsecond precision, for trace lines.
fn stamp(t: Micros) -> String {
    format!("{:>4}.{:06}", t / 1_000_000, t % 1_000_000)
}

fn token_text(world: &World, token: &Option<Token>) -> String {
    match token {
        None => "no token".to_string(),
        Some(t) => format!(
            "token {}:{}",
            world.services[t.service as usize].name, t.value
        ),
    }
}

/// The names of the rows in a row set, joined with commas.
pub fn rows_text(world: &World, resource: u32, rows: u64) -> String {
    let names = &world.resources[resource as usize].rows;
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if rows & (1u64 << i) != 0 {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str(name);
        }
    }
    out
}

impl Event {
    /// One line of text: time, subject, and what happened.
    pub fn render(&self, world: &World) -> String {
        let client = |c: &u32| world.clients[*c as usize].name.as_str();
        let service = |s: &u32| world.services[*s as usize].name.as_str();
        let resource = |r: &u32| world.resources[*r as usize].name.as_str();
        let endpoint = |e: &Endpoint| match e {
            Endpoint::Client(c) => client(c).to_string(),
            Endpoint::Service(s) => format!("service {}", service(s)),
            Endpoint::Resource(r) => format!("resource {}", resource(r)),
        };
        let text = match &self.what {
            What::PartitionStarted { partition } => {
                format!("net      partition {} starts", partition + 1)
            }
            What::PartitionEnded { partition } => {
                format!("net      partition {} heals", partition + 1)
            }
            What::OutageStarted { service: s } => format!("{:<8} outage starts", service(s)),
            What::OutageEnded { service: s } => format!("{:<8} outage ends", service(s)),
            What::PauseStarted { client: c } => format!("{:<8} pause starts", client(c)),
            What::PauseEnded { client: c } => format!("{:<8} pause ends", client(c)),
            What::Migrated {
                migration,
                already_in,
            } => {
                let m = &world.migrations[*migration as usize];
                let line = format!(
                    "migrate  {} from {} to {} ({:?})",
                    resource(&m.resource),
                    service(&m.from),
                    service(&m.to),
                    m.mode
                )
                .to_lowercase();
                match already_in {
                    Some(s) => format!("{line}: nothing to move, the lock is in {}", service(s)),
                    None => line,
                }
            }
            What::OpStarted { client: c, op } => {
                format!("{:<8} op {} starts, waits", client(c), op)
            }
            What::AcquireSent {
                client: c,
                service: s,
            } => {
                format!("{:<8} asks {}", client(c), service(s))
            }
            What::SkippedUnreachable {
                client: c,
                service: s,
            } => {
                format!("{:<8} skips unreachable {}", client(c), service(s))
            }
            What::AttemptAborted {
                client: c,
                reason,
                retry,
            } => format!(
                "{:<8} abandons attempt ({:?}){}",
                client(c),
                reason,
                if *retry { ", will retry" } else { "" }
            )
            .replace("Timeout", "timeout")
            .replace("Refused", "refused")
            .replace("NothingReachable", "nothing reachable"),
            What::GaveUp { client: c } => format!("{:<8} gives up the operation", client(c)),
            What::BeliefStarted {
                client: c,
                resource: r,
                rows,
                grants,
            } => {
                let grants: Vec<String> = grants
                    .iter()
                    .map(|g| format!("{}#{} token {}", service(&g.service), g.instant, g.token))
                    .collect();
                if grants.is_empty() {
                    format!(
                        "{:<8} WORKS ON {}[{}] with no lock",
                        client(c),
                        resource(r),
                        rows_text(world, *r, *rows)
                    )
                } else {
                    format!(
                        "{:<8} HOLDS {}[{}] via {}",
                        client(c),
                        resource(r),
                        rows_text(world, *r, *rows),
                        grants.join(" + ")
                    )
                }
            }
            What::BeliefEnded {
                client: c,
                resource: r,
                reason,
            } => format!(
                "{:<8} lets go of {} ({})",
                client(c),
                resource(r),
                match reason {
                    BeliefEnd::Released => "done",
                    BeliefEnd::Rejected => "access rejected",
                    BeliefEnd::LeaseExpiredLocally => "lease may have expired",
                }
            ),
            What::LockTransferred {
                client: c,
                from,
                to,
                token,
            } => format!(
                "{:<8} lock moved from {} to {}, token {}",
                client(c),
                service(from),
                service(to),
                token
            ),
            What::StaleGrantReleased {
                client: c,
                service: s,
                token,
            } => format!(
                "{:<8} releases stale grant {} token {}",
                client(c),
                service(s),
                token
            ),
            What::Service {
                service: s,
                instant,
                resource: r,
                op,
            } => {
                let head = format!("{}#{}", service(s), instant);
                let body = match op {
                    ServiceOp::Granted {
                        client: c,
                        token,
                        lease_until,
                    } => format!(
                        "grant {} to {} token {}{}",
                        resource(r),
                        client(c),
                        token,
                        match lease_until {
                            Some(t) => format!(" lease to {}", seconds(*t)),
                            None => String::new(),
                        }
                    ),
                    ServiceOp::Queued { client: c, behind } => format!(
                        "queue {} for {}{}",
                        client(c),
                        resource(r),
                        match behind {
                            Some(h) => format!(" behind {}", client(h)),
                            None => String::new(),
                        }
                    ),
                    ServiceOp::Refused { client: c, reason } => format!(
                        "refuse {} to {} ({})",
                        resource(r),
                        client(c),
                        match reason {
                            RefuseReason::NoAuthorityToken => "no authority token",
                            RefuseReason::StaleAuthorityToken => "stale authority token",
                            RefuseReason::Moved => "lock moved",
                        }
                    ),
                    ServiceOp::Released { client: c, token } => {
                        format!("release {} by {} token {}", resource(r), client(c), token)
                    }
                    ServiceOp::ReleaseIgnored { client: c, token } => format!(
                        "ignore release of {} by {} token {} (not the holder)",
                        resource(r),
                        client(c),
                        token
                    ),
                    ServiceOp::Cancelled { client: c } => {
                        format!("cancel {}'s request for {}", client(c), resource(r))
                    }
                    ServiceOp::Expired { client: c, token } => {
                        format!(
                            "lease of {} by {} token {} expires",
                            resource(r),
                            client(c),
                            token
                        )
                    }
                    ServiceOp::Superseded { client: c, token } => format!(
                        "supersede {}'s hold of {} token {}",
                        client(c),
                        resource(r),
                        token
                    ),
                    ServiceOp::MovedOut {
                        client: c,
                        to,
                        held,
                    } => format!(
                        "hand {} {} of {} to {}",
                        client(c),
                        if *held { "hold" } else { "wait" },
                        resource(r),
                        service(to)
                    ),
                    ServiceOp::TransferredIn {
                        client: c,
                        token,
                        from,
                    } => format!(
                        "take over {}'s hold of {} from {} as token {}",
                        client(c),
                        resource(r),
                        service(from),
                        token
                    ),
                    ServiceOp::Drained { from } => {
                        format!("{} drained from {}, may grant", resource(r), service(from))
                    }
                };
                format!("{head:<8} {body}")
            }
            What::Read {
                client: c,
                resource: r,
                rows,
                token,
                accepted,
                values,
            } => format!(
                "{:<8} {} {}[{}] with {}{}",
                resource(r),
                if *accepted { "read" } else { "REJECTS read of" },
                resource(r),
                rows_text(world, *r, *rows),
                token_text(world, token),
                if *accepted {
                    format!(" by {} = {}", client(c), values_text(values))
                } else {
                    format!(" by {}", client(c))
                }
            ),
            What::Write {
                client: c,
                resource: r,
                rows,
                token,
                accepted,
                values,
            } => format!(
                "{:<8} {} {}[{}] by {} with {}{}",
                resource(r),
                if *accepted {
                    "write"
                } else {
                    "REJECTS write to"
                },
                resource(r),
                rows_text(world, *r, *rows),
                client(c),
                token_text(world, token),
                if *accepted {
                    format!(" := {}", values_text(values))
                } else {
                    String::new()
                }
            ),
            What::MessageLost { from, to, reason } => format!(
                "net      message {} -> {} lost ({})",
                endpoint(from),
                endpoint(to),
                match reason {
                    LossReason::Partition => "partition",
                    LossReason::Outage => "outage",
                }
            ),
            What::ClientStopped { client: c } => format!("{:<8} stops", client(c)),
        };
        format!("{} {}", stamp(self.at), text)
    }

    /// What happened, in words, without the time stamp and the column padding of a trace
    /// line: for event details and tables that show the time on their own.
    pub fn describe(&self, world: &World) -> String {
        let line = self.render(world);
        let what = line.trim_start().split_once(' ').map_or("", |(_, w)| w);
        what.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Renders a whole trace, one event per line.
pub fn render(world: &World, events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        out.push_str(&e.render(world));
        out.push('\n');
    }
    out
}

/// A 64-bit FNV-1a digest of the trace's JSON form. Identical on every platform because the
/// JSON holds only fixed-width integers, booleans and names.
pub fn digest(events: &[Event]) -> u64 {
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    // Writing into the hasher cannot fail, and serializing these plain types cannot either.
    serde_json::to_writer(&mut hasher, events).expect("events always serialize");
    hasher.0
}

struct Fnv(u64);

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for b in buf {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
