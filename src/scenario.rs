//! The scenario format: what a user writes (TOML in files, JSON in URLs).
//!
//! These types are the contract with users, so every field is documented, unknown fields are
//! rejected, and every size or duration has an upper bound checked by [`Scenario::validate`].
//! Durations are whole milliseconds; the engine works in microseconds internally.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Upper bounds on every size and duration a scenario may ask for. They keep any input, however
/// hostile, to a run that finishes in well under a second of a browser tab's time per thousand
/// operations, and to a trace that fits in memory.
pub mod limits {
    /// The longest simulated run: one hour.
    pub const DURATION_MS_MAX: u64 = 3_600_000;
    /// The longest single delay, window or period anywhere in a scenario.
    pub const SPAN_MS_MAX: u64 = 3_600_000;
    pub const REGIONS_MAX: usize = 8;
    pub const SERVICES_MAX: usize = 8;
    pub const REPLICAS_MAX: usize = 9;
    pub const RESOURCES_MAX: usize = 8;
    /// Rows per resource. A client's rows are kept as a bit set, and 32 keeps every set an
    /// exact number in JSON consumers that read numbers as doubles.
    pub const ROWS_MAX: usize = 32;
    pub const CLASSES_MAX: usize = 16;
    pub const CLIENTS_PER_CLASS_MAX: u32 = 64;
    pub const CLIENTS_MAX: u32 = 256;
    pub const WINDOWS_MAX: usize = 64;
    pub const MIGRATIONS_MAX: usize = 16;
    pub const RETRIES_MAX: u32 = 1_000;
    pub const NAME_LEN_MAX: usize = 40;
    /// The scenario's title and description.
    pub const TITLE_LEN_MAX: usize = 200;
    pub const DESCRIPTION_LEN_MAX: usize = 4_000;
    /// The default and the largest event budget of one run.
    pub const EVENTS_DEFAULT: u64 = 200_000;
    pub const EVENTS_MAX: u64 = 5_000_000;
    pub const FIRST_TOKEN_MAX: u64 = 1 << 40;
}

/// A complete, self-contained description of one simulated world.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short title shown to the user.
    pub name: String,
    /// What the scenario shows, in a sentence or two.
    #[serde(default)]
    pub description: String,
    /// How long to simulate, in milliseconds (at most one hour).
    pub duration_ms: u64,
    /// The seed used when none is given on the command line or in the URL.
    #[serde(default)]
    pub seed: u64,
    /// The most events the run may record before it stops early (default 200000, at most 5000000).
    #[serde(default)]
    pub max_events: Option<u64>,
    /// Region names. Replicas, clients and resources are placed in regions.
    pub regions: Vec<String>,
    /// Message latency between regions.
    #[serde(default)]
    pub network: Network,
    /// The lock services.
    pub services: Vec<Service>,
    /// The shared resources (tables of integer rows).
    pub resources: Vec<Resource>,
    /// The client classes.
    pub clients: Vec<ClientClass>,
    /// Network partitions between groups of regions.
    #[serde(default)]
    pub partitions: Vec<Partition>,
    /// Process pauses (for example garbage-collection pauses) of clients.
    #[serde(default)]
    pub pauses: Vec<Pause>,
    /// Changes of a resource's protecting service during the run.
    #[serde(default)]
    pub migrations: Vec<Migration>,
}

/// One-way message latency. Every message draws a uniform jitter in `[0, jitter_ms]` from a
/// seeded stream of its sender, so runs are reproducible.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// Latency between two endpoints in the same region (default 1 ms).
    pub local_latency_ms: u64,
    /// Latency between endpoints in different regions (default 40 ms).
    pub remote_latency_ms: u64,
    /// Largest extra delay added to each message (default 2 ms).
    pub jitter_ms: u64,
    /// Overrides for particular pairs of regions (symmetric).
    pub links: Vec<Link>,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            local_latency_ms: 1,
            remote_latency_ms: 40,
            jitter_ms: 2,
            links: Vec::new(),
        }
    }
}

/// The latency between one pair of regions.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Exactly two region names.
    pub between: Vec<String>,
    pub latency_ms: u64,
}

/// A lock service: one linearizable serialization point, replicated across regions.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Service {
    pub name: String,
    /// The region of each replica. A request is served only if it reaches a majority of them.
    pub replicas: Vec<String>,
    /// If set, this service is subordinate to the named authority: it grants only to a request
    /// carrying that authority's token, and only if the token is the highest it has seen.
    #[serde(default)]
    pub subordinate_to: Option<String>,
    /// Lease length in milliseconds. Without it, a lock is held until released.
    #[serde(default)]
    pub lease_ms: Option<u64>,
    /// The first token this service hands out (default 1). Services of different ages have
    /// tokens in different ranges, which is what makes comparing them meaningless.
    #[serde(default = "one")]
    pub first_token: u64,
    /// The resources this service is declared to protect (the inventory).
    #[serde(default)]
    pub protects: Vec<String>,
    /// Windows during which the service is down and answers nothing.
    #[serde(default)]
    pub outages: Vec<Window>,
}

fn one() -> u64 {
    1
}

/// A time window.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub start_ms: u64,
    pub duration_ms: u64,
}

/// What a resource checks on the tokens that accesses carry.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Fencing {
    /// No check: every access is accepted.
    #[default]
    Off,
    /// Accept a token of any service if its number is at least the highest number seen.
    /// This compares numbers from unrelated sequences.
    AnySource,
    /// Accept only tokens of `fencing_source`, at least the highest seen.
    OneSource,
}

/// Which accesses the resource checks when fencing is on.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FencingChecks {
    /// Only writes are checked (and only writes raise the highest token seen).
    #[default]
    Writes,
    /// Reads and writes are checked, and both raise the highest token seen.
    AllAccesses,
}

/// A table of integer rows, each starting at `initial`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    pub name: String,
    /// The region the resource lives in (default: the first region).
    #[serde(default)]
    pub region: Option<String>,
    /// Row names (at most 64).
    pub rows: Vec<String>,
    #[serde(default)]
    pub initial: i64,
    #[serde(default)]
    pub fencing: Fencing,
    /// The one service whose tokens are accepted when `fencing = "one_source"`.
    #[serde(default)]
    pub fencing_source: Option<String>,
    #[serde(default)]
    pub fencing_checks: FencingChecks,
    /// An optional split of the rows between services: each listed service protects only its
    /// own rows. Used by the inventory check.
    #[serde(default)]
    pub partition: Vec<RowShare>,
}

/// The rows of a resource that one service protects.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RowShare {
    pub service: String,
    pub rows: Vec<String>,
}

/// How a client obtains the right to access the resource.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Protocol {
    /// Lock in one service.
    Single { service: String },
    /// Ask every listed service at once; hold when all have granted.
    AllUnordered {
        services: Vec<String>,
        /// Proceed without a service that has not answered at all by the acquire timeout
        /// (an "available" multi-region lock).
        #[serde(default)]
        skip_unreachable: bool,
    },
    /// Ask the listed services one after another, in the listed order.
    AllOrdered {
        services: Vec<String>,
        #[serde(default)]
        skip_unreachable: bool,
    },
    /// Lock in the authority, then present its token to the subordinate.
    TokenChain {
        authority: String,
        subordinate: String,
    },
    /// No lock at all: read-modify-write and let the last writer win.
    NoLock,
}

/// A class of identical clients, each doing repeated read-modify-write operations.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClientClass {
    /// Instances are named `NAME-1`, `NAME-2`, ...
    pub name: String,
    #[serde(default = "one_u32")]
    pub count: u32,
    pub region: String,
    pub protocol: Protocol,
    /// The resource this class works on.
    pub resource: String,
    /// The rows each operation reads and writes (default: all rows).
    #[serde(default)]
    pub rows: Vec<String>,
    /// When the first operation may start.
    #[serde(default)]
    pub start_ms: u64,
    /// After this time no new operation starts (default: the end of the run).
    #[serde(default)]
    pub stop_ms: Option<u64>,
    /// Think time between the end of one operation and the start of the next.
    pub period_ms: u64,
    /// Largest random extra think time, drawn per operation.
    #[serde(default)]
    pub jitter_ms: u64,
    /// Time between the read and the write of a read-modify-write (the critical section's work).
    pub work_ms: u64,
    /// How long to wait for a service before giving up (default: wait forever).
    #[serde(default)]
    pub acquire_timeout_ms: Option<u64>,
    /// How many times an operation retries after a timeout or refusal (default 3).
    #[serde(default = "three")]
    pub max_retries: u32,
    #[serde(default = "hundred")]
    pub retry_backoff_ms: u64,
    /// Check the lease before each access and abandon the operation if it may have expired.
    #[serde(default)]
    pub lease_aware: bool,
    /// Safety margin for the lease check.
    #[serde(default)]
    pub lease_margin_ms: u64,
    /// Stop after this many operations per client (default: no limit).
    #[serde(default)]
    pub max_operations: Option<u32>,
}

fn one_u32() -> u32 {
    1
}
fn three() -> u32 {
    3
}
fn hundred() -> u64 {
    100
}

/// A partition: regions in different groups cannot exchange messages during the window.
/// Regions not listed in any group are unaffected.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    pub start_ms: u64,
    pub duration_ms: u64,
    /// Two or more disjoint groups of region names.
    pub groups: Vec<Vec<String>>,
    /// What happens to a message across the cut (default: it is lost).
    #[serde(default)]
    pub mode: PartitionMode,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PartitionMode {
    /// Messages across the cut are lost.
    #[default]
    Drop,
    /// Messages across the cut are held back and delivered after the partition heals.
    Delay,
}

/// A pause of a client process: nothing it was about to do happens until the pause ends.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    /// A client instance (`batch-1`) or a whole class (`batch`).
    pub client: String,
    pub start_ms: u64,
    pub duration_ms: u64,
}

/// At `at_ms`, the clients of `resource` that used `from` switch to `to`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    pub at_ms: u64,
    pub resource: String,
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub mode: MigrationMode,
}

#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MigrationMode {
    /// Switch new acquisitions; existing holders and waiters of the old service carry on.
    #[default]
    Naive,
    /// The old service refuses new grants; the new one grants only once the old lock is free.
    Drain,
    /// The old service hands its holder and waiters to the new one, which issues its own token.
    Transfer,
}

/// A located, human-readable problem with a scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioError {
    /// Where the problem is, e.g. `client "batch"`, or `line 4, column 2` for syntax errors.
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.location, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// All problems found in one scenario, in the order they were found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl std::fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

impl Scenario {
    /// Parses and validates a TOML scenario.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioErrors> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| {
            let location = match e.span() {
                Some(span) => line_column(text, span.start),
                None => String::new(),
            };
            ScenarioErrors(vec![ScenarioError {
                location,
                message: e.message().trim().to_string(),
            }])
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parses and validates a JSON scenario (the form used in URLs).
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioErrors> {
        let scenario: Scenario = serde_json::from_str(text).map_err(|e| {
            // serde_json appends the position to its message; it is already the location.
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(i) => message[..i].to_string(),
                None => message,
            };
            ScenarioErrors(vec![ScenarioError {
                location: format!("line {}, column {}", e.line(), e.column()),
                message,
            }])
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a scenario always serializes to TOML")
    }

    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serializes to JSON")
    }

    /// The JSON Schema of the format, generated from these types.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(Scenario);
        serde_json::to_string_pretty(&schema).expect("a schema always serializes")
    }

    /// The names of all client instances, in the engine's order.
    pub fn client_instance_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for class in &self.clients {
            for i in 1..=class.count {
                names.push(format!("{}-{}", class.name, i));
            }
        }
        names
    }

    /// Checks every cross-reference and bound, and reports all problems found.
    pub fn validate(&self) -> Result<(), ScenarioErrors> {
        let mut v = Validator::default();
        v.check(self);
        if v.errors.is_empty() {
            Ok(())
        } else {
            Err(ScenarioErrors(v.errors))
        }
    }

    /// The effective event budget of a run.
    pub fn event_budget(&self) -> u64 {
        self.max_events.unwrap_or(limits::EVENTS_DEFAULT)
    }
}

fn line_column(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    format!("line {line}, column {column}")
}

#[derive(Default)]
struct Validator {
    errors: Vec<ScenarioError>,
}

impl Validator {
    fn error(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ScenarioError {
            location: location.into(),
            message: message.into(),
        });
    }

    fn name(&mut self, location: &str, name: &str) {
        if name.is_empty() || name.len() > limits::NAME_LEN_MAX {
            self.error(
                location,
                format!(
                    "names must have 1 to {} characters, not {}",
                    limits::NAME_LEN_MAX,
                    name.len()
                ),
            );
        } else if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            self.error(
                location,
                format!("name \"{name}\" may use only letters, digits, '-', '_' and '.'"),
            );
        }
    }

    fn span(&mut self, location: &str, field: &str, value: u64) {
        if value > limits::SPAN_MS_MAX {
            self.error(
                location,
                format!(
                    "{field} is {value}, more than the limit of {} ms",
                    limits::SPAN_MS_MAX
                ),
            );
        }
    }

    fn unique<'a>(&mut self, kind: &str, names: impl Iterator<Item = &'a str>) {
        let mut seen = BTreeSet::new();
        for name in names {
            if !seen.insert(name) {
                self.error(
                    format!("{kind} \"{name}\""),
                    format!("there is more than one {kind} named \"{name}\""),
                );
            }
        }
    }

    fn count(&mut self, location: &str, what: &str, n: usize, min: usize, max: usize) {
        if n < min || n > max {
            self.error(
                location,
                format!("{what}: {n} given, {min} to {max} allowed"),
            );
        }
    }

    fn check(&mut self, s: &Scenario) {
        let top = "scenario";
        if s.name.len() > limits::TITLE_LEN_MAX {
            self.error(
                top,
                format!("name has more than {} characters", limits::TITLE_LEN_MAX),
            );
        }
        if s.description.len() > limits::DESCRIPTION_LEN_MAX {
            self.error(
                top,
                format!(
                    "description has more than {} characters",
                    limits::DESCRIPTION_LEN_MAX
                ),
            );
        }
        if s.duration_ms == 0 || s.duration_ms > limits::DURATION_MS_MAX {
            self.error(
                top,
                format!(
                    "duration_ms is {}, it must be between 1 and {}",
                    s.duration_ms,
                    limits::DURATION_MS_MAX
                ),
            );
        }
        if let Some(max) = s.max_events {
            if max == 0 || max > limits::EVENTS_MAX {
                self.error(
                    top,
                    format!(
                        "max_events is {max}, it must be between 1 and {}",
                        limits::EVENTS_MAX
                    ),
                );
            }
        }
        self.count(top, "regions", s.regions.len(), 1, limits::REGIONS_MAX);
        self.count(top, "services", s.services.len(), 0, limits::SERVICES_MAX);
        self.count(
            top,
            "resources",
            s.resources.len(),
            1,
            limits::RESOURCES_MAX,
        );
        self.count(
            top,
            "client classes",
            s.clients.len(),
            0,
            limits::CLASSES_MAX,
        );
        self.count(
            top,
            "partitions",
            s.partitions.len(),
            0,
            limits::WINDOWS_MAX,
        );
        self.count(top, "pauses", s.pauses.len(), 0, limits::WINDOWS_MAX);
        self.count(
            top,
            "migrations",
            s.migrations.len(),
            0,
            limits::MIGRATIONS_MAX,
        );

        for r in &s.regions {
            self.name(&format!("region \"{r}\""), r);
        }
        self.unique("region", s.regions.iter().map(String::as_str));
        self.unique("service", s.services.iter().map(|x| x.name.as_str()));
        self.unique("resource", s.resources.iter().map(|x| x.name.as_str()));
        self.unique("client class", s.clients.iter().map(|x| x.name.as_str()));

        let region = |name: &str| s.regions.iter().any(|r| r == name);
        let service = |name: &str| s.services.iter().find(|x| x.name == name);
        let resource = |name: &str| s.resources.iter().find(|x| x.name == name);

        let n = &s.network;
        self.span("network", "local_latency_ms", n.local_latency_ms);
        self.span("network", "remote_latency_ms", n.remote_latency_ms);
        self.span("network", "jitter_ms", n.jitter_ms);
        for link in &n.links {
            let loc = format!("network link {}", link.between.join("-"));
            if link.between.len() != 2 {
                self.error(&loc, "a link names exactly two regions");
            }
            for r in &link.between {
                if !region(r) {
                    self.error(&loc, format!("names region \"{r}\", which does not exist"));
                }
            }
            self.span(&loc, "latency_ms", link.latency_ms);
        }

        for svc in &s.services {
            let loc = format!("service \"{}\"", svc.name);
            self.name(&loc, &svc.name);
            self.count(
                &loc,
                "replicas",
                svc.replicas.len(),
                1,
                limits::REPLICAS_MAX,
            );
            for r in &svc.replicas {
                if !region(r) {
                    self.error(
                        &loc,
                        format!("a replica is placed in region \"{r}\", which does not exist"),
                    );
                }
            }
            if let Some(lease) = svc.lease_ms {
                if lease == 0 {
                    self.error(
                        &loc,
                        "lease_ms must be at least 1 (leave it out for no lease)",
                    );
                }
                self.span(&loc, "lease_ms", lease);
            }
            if svc.first_token > limits::FIRST_TOKEN_MAX {
                self.error(
                    &loc,
                    format!("first_token must be at most {}", limits::FIRST_TOKEN_MAX),
                );
            }
            if let Some(authority) = &svc.subordinate_to {
                match service(authority) {
                    None => self.error(
                        &loc,
                        format!("subordinate_to names service \"{authority}\", which does not exist"),
                    ),
                    Some(a) if a.name == svc.name => {
                        self.error(&loc, "a service cannot be subordinate to itself")
                    }
                    Some(a) if a.subordinate_to.is_some() => self.error(
                        &loc,
                        format!(
                            "its authority \"{authority}\" is itself subordinate; chains longer than one step are not modelled"
                        ),
                    ),
                    Some(_) => {}
                }
            }
            for p in &svc.protects {
                if resource(p).is_none() {
                    self.error(
                        &loc,
                        format!("protects resource \"{p}\", which does not exist"),
                    );
                }
            }
            self.count(&loc, "outages", svc.outages.len(), 0, limits::WINDOWS_MAX);
            for w in &svc.outages {
                self.span(&loc, "outage start_ms", w.start_ms);
                self.span(&loc, "outage duration_ms", w.duration_ms);
            }
        }

        for res in &s.resources {
            let loc = format!("resource \"{}\"", res.name);
            self.name(&loc, &res.name);
            if let Some(r) = &res.region {
                if !region(r) {
                    self.error(&loc, format!("region \"{r}\" does not exist"));
                }
            }
            self.count(&loc, "rows", res.rows.len(), 1, limits::ROWS_MAX);
            self.unique(
                &format!("row of resource \"{}\"", res.name),
                res.rows.iter().map(String::as_str),
            );
            match (res.fencing, &res.fencing_source) {
                (Fencing::OneSource, None) => self.error(
                    &loc,
                    "fencing = \"one_source\" needs fencing_source, the service whose tokens count",
                ),
                (Fencing::OneSource, Some(src)) if service(src).is_none() => self.error(
                    &loc,
                    format!("fencing_source names service \"{src}\", which does not exist"),
                ),
                (Fencing::Off | Fencing::AnySource, Some(_)) => self.error(
                    &loc,
                    "fencing_source is only meaningful with fencing = \"one_source\"",
                ),
                _ => {}
            }
            let mut owned = BTreeSet::new();
            for share in &res.partition {
                if service(&share.service).is_none() {
                    self.error(
                        &loc,
                        format!(
                            "partition names service \"{}\", which does not exist",
                            share.service
                        ),
                    );
                }
                for row in &share.rows {
                    if !res.rows.contains(row) {
                        self.error(
                            &loc,
                            format!("partition names row \"{row}\", which does not exist"),
                        );
                    } else if !owned.insert(row.as_str()) {
                        self.error(
                            &loc,
                            format!("partition gives row \"{row}\" to more than one service"),
                        );
                    }
                }
            }
        }

        let mut instances: u32 = 0;
        for class in &s.clients {
            let loc = format!("client \"{}\"", class.name);
            self.name(&loc, &class.name);
            if class.count == 0 || class.count > limits::CLIENTS_PER_CLASS_MAX {
                self.error(
                    &loc,
                    format!(
                        "count is {}, it must be between 1 and {}",
                        class.count,
                        limits::CLIENTS_PER_CLASS_MAX
                    ),
                );
            }
            instances = instances.saturating_add(class.count);
            if !region(&class.region) {
                self.error(&loc, format!("region \"{}\" does not exist", class.region));
            }
            match resource(&class.resource) {
                None => self.error(
                    &loc,
                    format!("resource \"{}\" does not exist", class.resource),
                ),
                Some(res) => {
                    for row in &class.rows {
                        if !res.rows.contains(row) {
                            self.error(
                                &loc,
                                format!("row \"{row}\" is not a row of resource \"{}\"", res.name),
                            );
                        }
                    }
                }
            }
            let mut services_named: Vec<&str> = Vec::new();
            match &class.protocol {
                Protocol::Single { service } => services_named.push(service),
                Protocol::AllUnordered { services, .. } | Protocol::AllOrdered { services, .. } => {
                    self.count(
                        &loc,
                        "protocol services",
                        services.len(),
                        1,
                        limits::SERVICES_MAX,
                    );
                    let mut seen = BTreeSet::new();
                    for x in services {
                        if !seen.insert(x.as_str()) {
                            self.error(&loc, format!("protocol lists service \"{x}\" twice"));
                        }
                        services_named.push(x);
                    }
                }
                Protocol::TokenChain {
                    authority,
                    subordinate,
                } => {
                    services_named.push(authority);
                    services_named.push(subordinate);
                    if let (Some(_), Some(sub)) = (service(authority), service(subordinate)) {
                        if sub.subordinate_to.as_deref() != Some(authority.as_str()) {
                            self.error(
                                &loc,
                                format!(
                                    "protocol token_chain: service \"{subordinate}\" is not subordinate_to \"{authority}\""
                                ),
                            );
                        }
                    }
                }
                Protocol::NoLock => {}
            }
            for x in services_named {
                if service(x).is_none() {
                    self.error(
                        &loc,
                        format!("protocol names service \"{x}\", which does not exist"),
                    );
                }
            }
            self.span(&loc, "start_ms", class.start_ms);
            if let Some(stop) = class.stop_ms {
                self.span(&loc, "stop_ms", stop);
            }
            self.span(&loc, "period_ms", class.period_ms);
            self.span(&loc, "jitter_ms", class.jitter_ms);
            self.span(&loc, "work_ms", class.work_ms);
            self.span(&loc, "retry_backoff_ms", class.retry_backoff_ms);
            self.span(&loc, "lease_margin_ms", class.lease_margin_ms);
            if let Some(t) = class.acquire_timeout_ms {
                if t == 0 {
                    self.error(
                        &loc,
                        "acquire_timeout_ms must be at least 1 (leave it out to wait forever)",
                    );
                }
                self.span(&loc, "acquire_timeout_ms", t);
            }
            if class.max_retries > limits::RETRIES_MAX {
                self.error(
                    &loc,
                    format!("max_retries must be at most {}", limits::RETRIES_MAX),
                );
            }
            if class.period_ms == 0 && class.work_ms == 0 {
                self.error(
                    &loc,
                    "period_ms and work_ms cannot both be 0: operations would take no time at all",
                );
            }
        }
        if instances > limits::CLIENTS_MAX {
            self.error(
                top,
                format!(
                    "{instances} client instances in all, more than the limit of {}",
                    limits::CLIENTS_MAX
                ),
            );
        }

        for (i, p) in s.partitions.iter().enumerate() {
            let loc = format!("partition {}", i + 1);
            self.span(&loc, "start_ms", p.start_ms);
            self.span(&loc, "duration_ms", p.duration_ms);
            if p.groups.len() < 2 {
                self.error(&loc, "a partition needs at least two groups of regions");
            }
            let mut seen = BTreeSet::new();
            for g in &p.groups {
                for r in g {
                    if !region(r) {
                        self.error(&loc, format!("region \"{r}\" does not exist"));
                    } else if !seen.insert(r.as_str()) {
                        self.error(&loc, format!("region \"{r}\" is in more than one group"));
                    }
                }
            }
        }

        // Instance names are only built once the counts are known to be bounded.
        let names = if instances <= limits::CLIENTS_MAX
            && s.clients
                .iter()
                .all(|c| c.count <= limits::CLIENTS_PER_CLASS_MAX)
        {
            s.client_instance_names()
        } else {
            Vec::new()
        };
        for (i, p) in s.pauses.iter().enumerate() {
            let loc = format!("pause {}", i + 1);
            let instance = names.contains(&p.client);
            let class = s.clients.iter().any(|c| c.name == p.client);
            if instance && class {
                self.error(
                    &loc,
                    format!(
                        "\"{}\" names both a client class and an instance of another class; rename one",
                        p.client
                    ),
                );
            }
            if !instance && !class {
                self.error(
                    &loc,
                    format!(
                        "client \"{}\" is neither a client class nor an instance (instances are named like \"{}\")",
                        p.client,
                        names.first().map(String::as_str).unwrap_or("batch-1")
                    ),
                );
            }
            self.span(&loc, "start_ms", p.start_ms);
            self.span(&loc, "duration_ms", p.duration_ms);
        }

        for (i, m) in s.migrations.iter().enumerate() {
            let loc = format!("migration {}", i + 1);
            self.span(&loc, "at_ms", m.at_ms);
            if resource(&m.resource).is_none() {
                self.error(&loc, format!("resource \"{}\" does not exist", m.resource));
            }
            for x in [&m.from, &m.to] {
                match service(x) {
                    None => self.error(&loc, format!("service \"{x}\" does not exist")),
                    Some(svc) if svc.subordinate_to.is_some() => self.error(
                        &loc,
                        format!("service \"{x}\" is subordinate; migrations move resources between independent services"),
                    ),
                    Some(_) => {}
                }
            }
            if m.from == m.to {
                self.error(&loc, "from and to are the same service");
            }
        }
    }
}
