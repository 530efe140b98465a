//! The seam between the recorder and the products it plays scenarios on. A product says what of
//! a scenario it cannot play and what it plays differently, starts one process per lock
//! service, answers each client's lock and unlock calls, plays outages, and at the end gives
//! each service's own log in the product's own order. Everything else (the clients' schedule,
//! latencies, pauses, the majority protocol's counting, the resource, dating and judging the
//! trace) is the recorder's, the same for every product.

use std::path::Path;
use std::time::{Duration, Instant};

use lockstep::scenario::Scenario;
use lockstep::trace::ServiceOp;
use lockstep::world::World;

/// A product the recorder can start lock services of.
pub trait Product: Sync {
    /// The word `--on` takes and the output prints (`etcd`).
    fn name(&self) -> &'static str;
    /// The product and version installed (`etcd 3.4.23`), or how to install it.
    fn version(&self) -> Result<String, String>;
    /// Refuses, each at its place, what of the scenario the product cannot play, and says what
    /// it plays differently from the model. Features no product plays (partitions,
    /// migrations, a recording too long) are refused by the recorder.
    fn check(&self, scenario: &Scenario, places: &Places, check: &mut Check);
    /// How many times slower than the scenario's real time must run for the product's units
    /// (etcd's leases are whole seconds); `None` when no factor up to `max` will do, and then
    /// the product has refused the lease in `check`.
    fn scale(&self, scenario: &Scenario, max: u64) -> Option<u64>;
    /// Starts one process per service of `world` under `dir` (real leases are `scale` times
    /// the world's), and returns once each answers.
    fn start(&self, world: &World, scale: u64, dir: &Path) -> Result<Box<dyn Backend>, String>;
}

/// Running services of one product, called from many client threads at once.
pub trait Backend: Sync {
    /// Asks `ask.service` for the lock; waits at most until `ask.give_up`.
    fn lock(&self, ask: &Ask) -> Result<Answer, String>;
    /// Lets go of a grant this backend answered.
    fn unlock(&self, client: u32, grant: &Grant, timeout: Duration) -> Result<(), String>;
    /// The outage of `service` starts (`true`) or ends, on the scenario's schedule.
    fn outage(&self, service: u32, starts: bool) -> Result<(), String>;
    /// A pause of `client` starts (`true`) or ends, on the scenario's schedule. A product whose
    /// clients keep their locks alive with heartbeats (ZooKeeper's sessions) stops them for the
    /// pause, as a stalled process would.
    fn pause(&self, _client: u32, _starts: bool) {}
    /// Stops listening and gives each service's own log, in service order. The processes are
    /// stopped when the backend is dropped.
    fn finish(&self) -> Result<Vec<ServiceLog>, String>;
}

/// One lock request.
pub struct Ask<'a> {
    pub client: u32,
    pub service: u32,
    /// The resource's name: the lock's name in the product.
    pub resource: &'a str,
    /// A try (the majority protocol): granted when free, refused otherwise, never queued.
    pub try_only: bool,
    pub give_up: Instant,
    /// The recording's end: a call still waiting then is not a failure.
    pub deadline: Instant,
}

/// How a lock request was answered.
pub enum Answer {
    Granted(Grant),
    /// The lock was taken (a try).
    Refused,
    /// No answer by the time the client gave up, or none can come (the service is down).
    Unanswered,
}

/// A grant as the client keeps it to let go of it and to name it.
#[derive(Clone, Debug)]
pub struct Grant {
    pub service: u32,
    /// What the client calls this grant: the product's fencing token when the product gives
    /// one at the grant (etcd), otherwise an id of the request that the service's log maps to
    /// the token it shows (see [`Entry::grant_id`]).
    pub token: u64,
    /// What the product needs to let go (etcd: the lock key; Redis: the value set).
    pub key: Vec<u8>,
    /// etcd's lease, ZooKeeper's session; 0 where the product has none.
    pub lease: u64,
}

/// One service's own log: what it did, in its own order.
pub struct ServiceLog {
    pub entries: Vec<Entry>,
    /// The service's own revision (etcd's revision, the position in Redis' `MONITOR` log)
    /// when the recording ended.
    pub last_revision: u64,
}

pub struct Entry {
    /// When it happened, as near as the recorder can tell.
    pub seen: Instant,
    /// The service's own revision of it.
    pub revision: u64,
    pub what: Logged,
    /// For a grant, the [`Grant::token`] its client knows it by.
    pub grant_id: Option<u64>,
}

pub enum Logged {
    Op {
        op: ServiceOp,
        resource: u32,
    },
    /// The service came back from an outage empty (the ops that follow forget its holds).
    RestartedEmpty,
}

/// Refusals and notes gathered by [`Product::check`].
#[derive(Default)]
pub struct Check {
    pub errors: Vec<String>,
    pub notes: Vec<String>,
}

impl Check {
    pub fn refuse(&mut self, location: String, feature: &str, why: &str) {
        self.errors.push(format!(
            "{location}: {feature} cannot be played on real services ({why})"
        ));
    }
}

/// Places in a scenario's text, to locate a refusal (`line 12`); a scenario without its text
/// (a pipe, a one-line JSON file) is located by the entity's name instead.
pub struct Places<'a> {
    pub text: &'a str,
}

impl Places<'_> {
    /// The line where every needle first appears at or after the line `after`, as a location,
    /// and its number; or `fallback` when the text does not have it.
    pub fn line_of(&self, needles: &[&str], after: usize, fallback: &str) -> (String, usize) {
        for (i, line) in self.text.lines().enumerate().skip(after) {
            let code = line.split('#').next().unwrap_or("");
            if needles.iter().all(|n| code.contains(n)) {
                return (format!("line {}", i + 1), i + 1);
            }
        }
        (fallback.to_string(), after)
    }

    /// Where the `n`th entity of a list of tables (`[[services]]`) starts.
    pub fn nth(&self, header: &str, n: usize, fallback: &str) -> (String, usize) {
        let mut after = 0;
        let mut found = (fallback.to_string(), 0);
        for _ in 0..=n {
            found = self.line_of(&[header], after, fallback);
            after = found.1;
        }
        found
    }

    /// A field of the `n`th service (`lease_ms`), or the service itself.
    pub fn service_field(&self, scenario: &Scenario, n: usize, field: &str) -> String {
        let name = format!("service \"{}\"", scenario.services[n].name);
        let (at, line) = self.nth("[[services]]", n, &name);
        self.line_of(&[field], line.saturating_sub(1), &at).0
    }

    /// The `n`th service's header.
    pub fn service(&self, scenario: &Scenario, n: usize) -> String {
        let name = format!("service \"{}\"", scenario.services[n].name);
        self.nth("[[services]]", n, &name).0
    }

    /// A field of the `n`th client class (`protocol`).
    pub fn client_field(&self, scenario: &Scenario, n: usize, field: &str) -> String {
        let name = format!("client \"{}\"", scenario.clients[n].name);
        let (at, line) = self.nth("[[clients]]", n, &name);
        self.line_of(&[field], line.saturating_sub(1), &at).0
    }

    /// A field of the `n`th resource (`fencing`).
    pub fn resource_field(&self, scenario: &Scenario, n: usize, field: &str) -> String {
        let name = format!("resource \"{}\"", scenario.resources[n].name);
        let (at, line) = self.nth("[[resources]]", n, &name);
        self.line_of(&[field], line.saturating_sub(1), &at).0
    }
}
