//! The trace: everything that happened in a run, in order, as data.
//!
//! Events name clients, services and resources by index into the [`World`]; the text rendering
//! (one line per event) resolves names and is what snapshot tests compare.

use std::fmt::Write as _;

use serde::Serialize;
use smallvec::SmallVec;

// Endpoints are the world's: the trace names them, the world does not need the trace.
use crate::scenario::MigrationMode;
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
    /// A majority client got fewer grants than its quorum.
    QuorumMissed,
    /// A majority client got its quorum, but acquiring took all of the lock's validity.
    ValiditySpent,
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
    /// A try found the lock taken (or waited for): a majority client's request is never queued.
    Taken,
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
    /// The service came back from an outage without its state (it forgets on restart): the
    /// holder (with its token) or a waiter (without) is forgotten. The holder is not told.
    Forgotten {
        client: u32,
        token: Option<u64>,
    },
    /// The holder of a service this lock drained from let go. Unless `more` (the lock also
    /// drains from another service whose holder has not let go yet), this service may grant.
    Drained {
        from: u32,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        more: bool,
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
            | ServiceOp::Superseded { client, token }
            | ServiceOp::Forgotten {
                client,
                token: Some(token),
            } => Some(HoldChange::Ends {
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
    /// A service that forgets on restart came back from its outage empty: every grant and
    /// queued request it had is forgotten (each in its log), and its tokens start again from
    /// its first token.
    RestartedEmpty {
        service: u32,
    },
    Migrated {
        migration: u32,
        /// Set when an earlier drain or transfer had already taken the lock away from the
        /// migration's old service: the service the lock lives in, and the migration moved
        /// nothing but where clients ask.
        #[serde(skip_serializing_if = "Option::is_none")]
        already_in: Option<u32>,
        /// Set when the migration's new service had itself handed its lock on: the service the
        /// lock moved into instead, where the new service's lock lives.
        #[serde(skip_serializing_if = "Option::is_none")]
        into: Option<u32>,
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
    /// A majority client has its quorum in time: it holds the lock until `valid_until` (no
    /// limit when its services have no lease).
    QuorumReached {
        client: u32,
        granted: u32,
        quorum: u32,
        valid_until: Option<Micros>,
    },
    /// A majority client got fewer grants than its quorum (a split vote, or services that did
    /// not answer within the lock's validity): it lets go of what it got.
    QuorumMissed {
        client: u32,
        granted: u32,
        quorum: u32,
    },
    /// A majority client got its quorum, but only after acquiring had taken the whole validity
    /// of the lock (`acquiring_us`, counted from its requests): it does not use the lock.
    ValiditySpent {
        client: u32,
        granted: u32,
        acquiring_us: Micros,
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
    let mut out = String::new();
    values_into(values, &mut out);
    out
}

fn values_into(values: &[i64], out: &mut String) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{v}");
    }
}

/// Formats microseconds as seconds with millisecond precision, e.g. `1.250s`.
pub fn seconds(t: Micros) -> String {
    format!("{}.{:03}s", t / 1_000_000, (t % 1_000_000) / 1_000)
}

fn token_into(world: &World, token: &Option<Token>, out: &mut String) {
    let _ = match token {
        None => write!(out, "no token"),
        Some(t) => write!(
            out,
            "token {}:{}",
            world.services[t.service as usize].name, t.value
        ),
    };
}

/// The names of the rows in a row set, joined with commas.
pub fn rows_text(world: &World, resource: u32, rows: u64) -> String {
    let mut out = String::new();
    rows_into(world, resource, rows, &mut out);
    out
}

fn rows_into(world: &World, resource: u32, rows: u64, out: &mut String) {
    let names = &world.resources[resource as usize].rows;
    let start = out.len();
    for (i, name) in names.iter().enumerate() {
        if rows & (1u64 << i) != 0 {
            if out.len() > start {
                out.push(',');
            }
            out.push_str(name);
        }
    }
}

impl Event {
    /// One line of text: time, subject, and what happened.
    pub fn render(&self, world: &World) -> String {
        let mut out = String::with_capacity(80);
        self.render_into(world, &mut out);
        out
    }

    /// Appends the line [`Event::render`] returns to `out`. A trace of a few hundred thousand
    /// lines is written into one buffer, without a string for each line and each part of it.
    pub fn render_into(&self, world: &World, out: &mut String) {
        // Writing into a `String` cannot fail, so the results of `write!` are ignored.
        let client = |c: &u32| world.clients[*c as usize].name.as_str();
        let service = |s: &u32| world.services[*s as usize].name.as_str();
        let resource = |r: &u32| world.resources[*r as usize].name.as_str();
        let _ = write!(
            out,
            "{:>4}.{:06} ",
            self.at / 1_000_000,
            self.at % 1_000_000
        );
        match &self.what {
            What::PartitionStarted { partition } => {
                let _ = write!(out, "net      partition {} starts", partition + 1);
            }
            What::PartitionEnded { partition } => {
                let _ = write!(out, "net      partition {} heals", partition + 1);
            }
            What::OutageStarted { service: s } => {
                let _ = write!(out, "{:<8} outage starts", service(s));
            }
            What::OutageEnded { service: s } => {
                let _ = write!(out, "{:<8} outage ends", service(s));
            }
            What::RestartedEmpty { service: s } => {
                let _ = write!(
                    out,
                    "{:<8} restarted empty: it forgot every grant, and its tokens start again at {}",
                    service(s),
                    world.services[*s as usize].first_token
                );
            }
            What::PauseStarted { client: c } => {
                let _ = write!(out, "{:<8} pause starts", client(c));
            }
            What::PauseEnded { client: c } => {
                let _ = write!(out, "{:<8} pause ends", client(c));
            }
            What::Migrated {
                migration,
                already_in,
                into,
            } => {
                let m = &world.migrations[*migration as usize];
                let mode = match m.mode {
                    MigrationMode::Naive => "naive",
                    MigrationMode::Drain => "drain",
                    MigrationMode::Transfer => "transfer",
                };
                let _ = write!(
                    out,
                    "migrate  {} from {} to {} ({mode})",
                    resource(&m.resource),
                    service(&m.from),
                    service(&m.to),
                );
                if let Some(s) = already_in {
                    let _ = write!(out, ": nothing to move, the lock is in {}", service(s));
                }
                if let Some(s) = into {
                    let _ = write!(
                        out,
                        ": {}'s lock is in {}, so it moves there",
                        service(&m.to),
                        service(s)
                    );
                }
            }
            What::OpStarted { client: c, op } => {
                let _ = write!(out, "{:<8} op {} starts, waits", client(c), op);
            }
            What::AcquireSent {
                client: c,
                service: s,
            } => {
                let _ = write!(out, "{:<8} asks {}", client(c), service(s));
            }
            What::SkippedUnreachable {
                client: c,
                service: s,
            } => {
                let _ = write!(out, "{:<8} skips unreachable {}", client(c), service(s));
            }
            What::AttemptAborted {
                client: c,
                reason,
                retry,
            } => {
                let reason = match reason {
                    AbortReason::Timeout => "timeout",
                    AbortReason::Refused => "refused",
                    AbortReason::NothingReachable => "nothing reachable",
                    AbortReason::QuorumMissed => "quorum missed",
                    AbortReason::ValiditySpent => "validity spent",
                };
                let retry = if *retry { ", will retry" } else { "" };
                let _ = write!(out, "{:<8} abandons attempt ({reason}){retry}", client(c));
            }
            What::GaveUp { client: c } => {
                let _ = write!(out, "{:<8} gives up the operation", client(c));
            }
            What::QuorumReached {
                client: c,
                granted,
                quorum,
                valid_until,
            } => {
                let _ = write!(
                    out,
                    "{:<8} has its quorum: {granted} granted, {quorum} needed",
                    client(c)
                );
                if let Some(t) = valid_until {
                    let _ = write!(out, ", valid to {}", seconds(*t));
                }
            }
            What::QuorumMissed {
                client: c,
                granted,
                quorum,
            } => {
                let _ = write!(
                    out,
                    "{:<8} misses its quorum: {granted} granted, {quorum} needed",
                    client(c)
                );
            }
            What::ValiditySpent {
                client: c,
                granted,
                acquiring_us,
            } => {
                let _ = write!(
                    out,
                    "{:<8} has {granted} grants, but acquiring took {}: the lock is no longer valid",
                    client(c),
                    seconds(*acquiring_us)
                );
            }
            What::BeliefStarted {
                client: c,
                resource: r,
                rows,
                grants,
            } => {
                let verb = if grants.is_empty() {
                    "WORKS ON"
                } else {
                    "HOLDS"
                };
                let _ = write!(out, "{:<8} {verb} {}[", client(c), resource(r));
                rows_into(world, *r, *rows, out);
                if grants.is_empty() {
                    out.push_str("] with no lock");
                } else {
                    out.push_str("] via ");
                    for (i, g) in grants.iter().enumerate() {
                        if i > 0 {
                            out.push_str(" + ");
                        }
                        let _ = write!(
                            out,
                            "{}#{} token {}",
                            service(&g.service),
                            g.instant,
                            g.token
                        );
                    }
                }
            }
            What::BeliefEnded {
                client: c,
                resource: r,
                reason,
            } => {
                let reason = match reason {
                    BeliefEnd::Released => "done",
                    BeliefEnd::Rejected => "access rejected",
                    BeliefEnd::LeaseExpiredLocally => "lease may have expired",
                };
                let _ = write!(
                    out,
                    "{:<8} lets go of {} ({reason})",
                    client(c),
                    resource(r)
                );
            }
            What::LockTransferred {
                client: c,
                from,
                to,
                token,
            } => {
                let _ = write!(
                    out,
                    "{:<8} lock moved from {} to {}, token {}",
                    client(c),
                    service(from),
                    service(to),
                    token
                );
            }
            What::StaleGrantReleased {
                client: c,
                service: s,
                token,
            } => {
                let _ = write!(
                    out,
                    "{:<8} releases stale grant {} token {}",
                    client(c),
                    service(s),
                    token
                );
            }
            What::Service {
                service: s,
                instant,
                resource: r,
                op,
            } => {
                // The service and its instant share the subject column.
                let head = out.len();
                let _ = write!(out, "{}#{}", service(s), instant);
                let width = out[head..].chars().count();
                out.extend(std::iter::repeat_n(' ', 8usize.saturating_sub(width)));
                out.push(' ');
                let r = resource(r);
                let _ = match op {
                    ServiceOp::Granted {
                        client: c,
                        token,
                        lease_until,
                    } => {
                        let _ = write!(out, "grant {r} to {} token {token}", client(c));
                        match lease_until {
                            Some(t) => write!(
                                out,
                                " lease to {}.{:03}s",
                                t / 1_000_000,
                                (t % 1_000_000) / 1_000
                            ),
                            None => Ok(()),
                        }
                    }
                    ServiceOp::Queued { client: c, behind } => {
                        let _ = write!(out, "queue {} for {r}", client(c));
                        match behind {
                            Some(h) => write!(out, " behind {}", client(h)),
                            None => Ok(()),
                        }
                    }
                    ServiceOp::Refused { client: c, reason } => {
                        let reason = match reason {
                            RefuseReason::NoAuthorityToken => "no authority token",
                            RefuseReason::StaleAuthorityToken => "stale authority token",
                            RefuseReason::Moved => "lock moved",
                            RefuseReason::Taken => "taken, a try is not queued",
                        };
                        write!(out, "refuse {r} to {} ({reason})", client(c))
                    }
                    ServiceOp::Released { client: c, token } => {
                        write!(out, "release {r} by {} token {token}", client(c))
                    }
                    ServiceOp::ReleaseIgnored { client: c, token } => write!(
                        out,
                        "ignore release of {r} by {} token {token} (not the holder)",
                        client(c)
                    ),
                    ServiceOp::Cancelled { client: c } => {
                        write!(out, "cancel {}'s request for {r}", client(c))
                    }
                    ServiceOp::Expired { client: c, token } => {
                        write!(out, "lease of {r} by {} token {token} expires", client(c))
                    }
                    ServiceOp::Superseded { client: c, token } => {
                        write!(out, "supersede {}'s hold of {r} token {token}", client(c))
                    }
                    ServiceOp::MovedOut {
                        client: c,
                        to,
                        held,
                    } => {
                        let what = if *held { "hold" } else { "wait" };
                        write!(out, "hand {} {what} of {r} to {}", client(c), service(to))
                    }
                    ServiceOp::TransferredIn {
                        client: c,
                        token,
                        from,
                    } => write!(
                        out,
                        "take over {}'s hold of {r} from {} as token {token}",
                        client(c),
                        service(from)
                    ),
                    ServiceOp::Forgotten {
                        client: c,
                        token: Some(token),
                    } => write!(out, "forget {}'s hold of {r} token {token}", client(c)),
                    ServiceOp::Forgotten {
                        client: c,
                        token: None,
                    } => write!(out, "forget {}'s wait for {r}", client(c)),
                    ServiceOp::Drained { from, more } => {
                        let then = if *more { "still draining" } else { "may grant" };
                        write!(out, "{r} drained from {}, {then}", service(from))
                    }
                };
            }
            What::Read {
                client: c,
                resource: r,
                rows,
                token,
                accepted,
                values,
            } => {
                let verb = if *accepted { "read" } else { "REJECTS read of" };
                let _ = write!(out, "{:<8} {verb} {}[", resource(r), resource(r));
                rows_into(world, *r, *rows, out);
                out.push_str("] with ");
                token_into(world, token, out);
                let _ = write!(out, " by {}", client(c));
                if *accepted {
                    out.push_str(" = ");
                    values_into(values, out);
                }
            }
            What::Write {
                client: c,
                resource: r,
                rows,
                token,
                accepted,
                values,
            } => {
                let verb = if *accepted {
                    "write"
                } else {
                    "REJECTS write to"
                };
                let _ = write!(out, "{:<8} {verb} {}[", resource(r), resource(r));
                rows_into(world, *r, *rows, out);
                let _ = write!(out, "] by {} with ", client(c));
                token_into(world, token, out);
                if *accepted {
                    out.push_str(" := ");
                    values_into(values, out);
                }
            }
            What::MessageLost { from, to, reason } => {
                out.push_str("net      message ");
                for (i, e) in [from, to].into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(" -> ");
                    }
                    let _ = match e {
                        Endpoint::Client(c) => write!(out, "{}", client(c)),
                        Endpoint::Service(s) => write!(out, "service {}", service(s)),
                        Endpoint::Resource(r) => write!(out, "resource {}", resource(r)),
                    };
                }
                out.push_str(match reason {
                    LossReason::Partition => " lost (partition)",
                    LossReason::Outage => " lost (outage)",
                });
            }
            What::ClientStopped { client: c } => {
                let _ = write!(out, "{:<8} stops", client(c));
            }
        }
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
    let mut out = String::with_capacity(events.len() * 64);
    for e in events {
        e.render_into(world, &mut out);
        out.push('\n');
    }
    out
}

/// A 64-bit FNV-1a digest of the trace's JSON form. Identical on every platform because the
/// JSON holds only fixed-width integers, booleans and names.
pub fn digest(events: &[Event]) -> u64 {
    let mut hasher = crate::hash::Fnv64::new();
    // Writing into the hasher cannot fail, and serializing these plain types cannot either.
    serde_json::to_writer(&mut hasher, events).expect("events always serialize");
    hasher.finish()
}
