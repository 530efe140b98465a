//! A run recorded on real lock services (`lockstep record`), kept as a file that the command
//! line, the page and the lessons read back.
//!
//! The file is what `lockstep record --json` prints: the run's document (the verdict, its
//! summary, the trace digest and the trace) with a `recorded` member that says what the run was
//! recorded from and carries the scenario it played. Nothing can run a recording again, so the
//! trace itself is the run: reading one checks it like any import (a size bound, the scenario
//! validated, every event's clients, services, resources, rows and times inside the scenario's
//! world, the digest equal to the trace's) and the monitors judge it afresh. The verdict written
//! in the file is never trusted.

use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::trace::{self, Endpoint, Event, Recorded, ServiceOp, What};
use crate::world::{Micros, World};

/// The largest recording file read, in bytes.
pub const RECORDING_BYTES_MAX: usize = 4 << 20;
/// The most events a recording may hold: recordings are short real runs, far below this.
pub const RECORDING_EVENTS_MAX: usize = 20_000;

/// One real lock service a recording was made on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceSource {
    /// The scenario's name for the service.
    pub name: String,
    /// The product and its version, as it reported them ("etcd 3.4.23").
    pub product: String,
    /// The service's own revision when the recording ended.
    pub last_revision: u64,
    /// The service's own revision of each of its instants in the trace (the first is instant 1).
    pub instant_revisions: Vec<u64>,
}

/// What a recording was made from and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Always false: real time makes every recording different.
    pub deterministic: bool,
    /// How the recorder approximated the scenario (time scale, waits), in sentences.
    pub notes: Vec<String>,
    /// How many times slower than the scenario's the real run went.
    pub scale: u64,
    pub services: Vec<ServiceSource>,
    /// The scenario played, so that the file alone is enough to judge the trace.
    pub scenario: Scenario,
}

impl Source {
    /// The products recorded from, each once, in the order of the services: "etcd 3.4.23".
    pub fn products(&self) -> String {
        let mut products: Vec<&str> = Vec::new();
        for s in &self.services {
            if !products.contains(&s.product.as_str()) {
                products.push(&s.product);
            }
        }
        products.join(", ")
    }

    /// One sentence that labels a recording wherever it is shown.
    pub fn label(&self, seed: u64) -> String {
        let n = self.services.len();
        format!(
            "Recorded from real services: {n} {} process{} ({}), seed {seed} for the clients' schedule. Real time makes every recording different, so nothing can run it again.",
            self.products(),
            if n == 1 { "" } else { "es" },
            self.services
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

impl ServiceSource {
    /// The service in words, as the page lists it under a recording's label.
    pub fn words(&self) -> String {
        format!(
            "{}: {}, at revision {} when the recording ended",
            self.name, self.product, self.last_revision
        )
    }
}

/// A recording read back: the world of its scenario, its trace and its source.
#[derive(Clone, Debug)]
pub struct Recording {
    pub world: World,
    pub events: Vec<Event>,
    pub seed: u64,
    pub source: Source,
}

impl Recorded for Recording {
    fn world(&self) -> &World {
        &self.world
    }
    fn events(&self) -> &[Event] {
        &self.events
    }
    fn end(&self) -> Micros {
        self.world.duration
    }
    fn truncated(&self) -> bool {
        false
    }
    fn seed(&self) -> u64 {
        self.seed
    }
}

/// The members of a recording file that are read; the rest (the verdict, its summary, the
/// names) is recomputed from these.
#[derive(Deserialize)]
struct File {
    seed: u64,
    digest: String,
    recorded: Option<Source>,
    trace: Option<Vec<Event>>,
}

impl Recording {
    /// Reads a recording file and checks it; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Recording, String> {
        if text.len() > RECORDING_BYTES_MAX {
            return Err(format!(
                "the recording is {} KiB; at most {} KiB is read",
                text.len() / 1024,
                RECORDING_BYTES_MAX / 1024
            ));
        }
        let file: File = serde_json::from_str(text).map_err(|e| {
            format!(
                "line {}, column {}: not a recording: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            )
        })?;
        let source = file.recorded.ok_or(
            "not a recording: it has no \"recorded\" member (`lockstep record --json` writes one)",
        )?;
        let events = file.trace.ok_or(
            "the recording has no trace: it was written with --no-trace, which keeps only the verdict",
        )?;
        source
            .scenario
            .validate()
            .map_err(|e| format!("the recording's scenario: {e}"))?;
        let world = World::compile(&source.scenario);
        let recording = Recording {
            world,
            events,
            seed: file.seed,
            source,
        };
        recording.check()?;
        let digest = format!("{:016x}", trace::digest(&recording.events));
        if digest != file.digest {
            return Err(format!(
                "the trace's digest is {digest}, not the {} the file gives: the trace was changed after it was recorded",
                file.digest
            ));
        }
        Ok(recording)
    }

    /// Writes the file `parse` reads, with the judged run's other members as the command line
    /// prints them.
    pub fn source_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.source).expect("a recording's source serializes")
    }

    /// Checks that the recording is one the monitors can judge: its services are the
    /// scenario's, and every event names what exists in the scenario's world, in time order.
    fn check(&self) -> Result<(), String> {
        let w = &self.world;
        if self.source.services.len() != w.services.len()
            || self
                .source
                .services
                .iter()
                .zip(&w.services)
                .any(|(s, c)| s.name != c.name)
        {
            return Err(format!(
                "the recording names the services {:?}, but its scenario has {:?}",
                self.source
                    .services
                    .iter()
                    .map(|s| &s.name)
                    .collect::<Vec<_>>(),
                w.services.iter().map(|s| &s.name).collect::<Vec<_>>()
            ));
        }
        if self.events.len() > RECORDING_EVENTS_MAX {
            return Err(format!(
                "the trace has {} events; a recording holds at most {RECORDING_EVENTS_MAX}",
                self.events.len()
            ));
        }
        let mut last = 0;
        for (i, e) in self.events.iter().enumerate() {
            let at = |problem: String| format!("trace event {} (at {} µs): {problem}", i + 1, e.at);
            if e.at < last {
                return Err(at(format!(
                    "it comes before the event ahead of it ({last} µs)"
                )));
            }
            if e.at > w.duration {
                return Err(at(format!(
                    "it is after the scenario's end ({} µs)",
                    w.duration
                )));
            }
            last = e.at;
            check_event(w, &e.what).map_err(at)?;
        }
        Ok(())
    }
}

/// serde_json ends its messages with the position, which the caller puts first.
fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i])
}

/// Checks that every index an event carries names something in the world.
fn check_event(w: &World, what: &What) -> Result<(), String> {
    let client = |c: u32| index(c, w.clients.len(), "client");
    let service = |s: u32| index(s, w.services.len(), "service");
    let resource = |r: u32| index(r, w.resources.len(), "resource");
    let rows = |r: u32, rows: u64| {
        resource(r)?;
        let n = w.resources[r as usize].rows.len();
        if rows == 0 || (n < 64 && rows >> n != 0) {
            return Err(format!(
                "row set {rows:#b} is not a set of resource {}'s {n} rows",
                w.resources[r as usize].name
            ));
        }
        Ok(())
    };
    let token = |t: &Option<trace::Token>| t.map_or(Ok(()), |t| service(t.service));
    let endpoint = |e: &Endpoint| match *e {
        Endpoint::Client(c) => client(c),
        Endpoint::Service(s) => service(s),
        Endpoint::Resource(r) => resource(r),
    };
    match what {
        What::PartitionStarted { partition } | What::PartitionEnded { partition } => {
            index(*partition, w.partitions.len(), "partition")
        }
        What::OutageStarted { service: s } | What::OutageEnded { service: s } => service(*s),
        What::PauseStarted { client: c }
        | What::PauseEnded { client: c }
        | What::OpStarted { client: c, .. }
        | What::AttemptAborted { client: c, .. }
        | What::GaveUp { client: c }
        | What::ClientStopped { client: c } => client(*c),
        What::Migrated {
            migration,
            already_in,
            into,
        } => {
            index(*migration, w.migrations.len(), "migration")?;
            already_in.map_or(Ok(()), service)?;
            into.map_or(Ok(()), service)
        }
        What::AcquireSent {
            client: c,
            service: s,
        }
        | What::SkippedUnreachable {
            client: c,
            service: s,
        }
        | What::StaleGrantReleased {
            client: c,
            service: s,
            ..
        } => {
            client(*c)?;
            service(*s)
        }
        What::BeliefStarted {
            client: c,
            resource: r,
            rows: set,
            grants,
        } => {
            client(*c)?;
            rows(*r, *set)?;
            if grants.len() > w.services.len() {
                return Err(format!(
                    "a belief with {} grants, from {} services",
                    grants.len(),
                    w.services.len()
                ));
            }
            grants.iter().try_for_each(|g| service(g.service))
        }
        What::BeliefEnded {
            client: c,
            resource: r,
            ..
        } => {
            client(*c)?;
            resource(*r)
        }
        What::LockTransferred {
            client: c,
            from,
            to,
            ..
        } => {
            client(*c)?;
            service(*from)?;
            service(*to)
        }
        What::Service {
            service: s,
            resource: r,
            op,
            ..
        } => {
            service(*s)?;
            resource(*r)?;
            match op {
                ServiceOp::Granted { client: c, .. }
                | ServiceOp::Refused { client: c, .. }
                | ServiceOp::Released { client: c, .. }
                | ServiceOp::ReleaseIgnored { client: c, .. }
                | ServiceOp::Cancelled { client: c }
                | ServiceOp::Expired { client: c, .. }
                | ServiceOp::Superseded { client: c, .. } => client(*c),
                ServiceOp::Queued { client: c, behind } => {
                    client(*c)?;
                    behind.map_or(Ok(()), client)
                }
                ServiceOp::MovedOut { client: c, to, .. } => {
                    client(*c)?;
                    service(*to)
                }
                ServiceOp::TransferredIn {
                    client: c, from, ..
                } => {
                    client(*c)?;
                    service(*from)
                }
                ServiceOp::Drained { from, .. } => service(*from),
            }
        }
        What::Read {
            client: c,
            resource: r,
            rows: set,
            token: t,
            values,
            accepted,
        }
        | What::Write {
            client: c,
            resource: r,
            rows: set,
            token: t,
            values,
            accepted,
        } => {
            client(*c)?;
            rows(*r, *set)?;
            token(t)?;
            let n = set.count_ones() as usize;
            let refused_read = matches!(what, What::Read { .. }) && !accepted && values.is_empty();
            if values.len() != n && !refused_read {
                return Err(format!("{} values for a row set of {n} rows", values.len()));
            }
            Ok(())
        }
        What::MessageLost { from, to, .. } => {
            endpoint(from)?;
            endpoint(to)
        }
    }
}

fn index(i: u32, len: usize, what: &str) -> Result<(), String> {
    if (i as usize) < len {
        Ok(())
    } else {
        Err(format!(
            "{what} {i} does not exist: the scenario has {len} {what}s"
        ))
    }
}
