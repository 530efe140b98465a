//! The scenario format: what a user writes (TOML in files, or JSON, the form meant for embedding
//! a scenario in a URL).
//!
//! These types are the contract with users, so every field is documented, unknown fields are
//! rejected, and every size, duration and value has bounds checked by [`Scenario::validate`] and
//! stated in the JSON Schema. Durations are whole milliseconds; the engine works in microseconds
//! internally.

mod canonical;
mod json;

use crate::sorted::{SortedMap, SortedSet};

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
    /// The slowest and fastest a service's clock may run, in percent of real time: a lease
    /// lasts at most twice `SPAN_MS_MAX` in real time.
    pub const CLOCK_RATE_PERCENT_MIN: u32 = 50;
    pub const CLOCK_RATE_PERCENT_MAX: u32 = 1_000;
    pub const NAME_LEN_MAX: usize = 40;
    /// The scenario's title and description.
    pub const TITLE_LEN_MAX: usize = 200;
    pub const DESCRIPTION_LEN_MAX: usize = 4_000;
    /// The longest scenario text read from anywhere: a file, an import or a link (1 MiB).
    pub const TEXT_BYTES_MAX: usize = 1 << 20;
    /// The default and the largest event budget of one run. The largest keeps a run, its trace
    /// and its verdict under a second and 256 MB on any valid scenario (the worst-case
    /// benchmark, `cargo bench --bench worst`, measures it): a trace event takes about 72 bytes,
    /// and the verdict's scans keep a few times that per event at worst.
    pub const EVENTS_DEFAULT: u64 = 200_000;
    pub const EVENTS_MAX: u64 = 500_000;
    /// The largest first token of a service. Each grant takes the next token, and a run has
    /// fewer grants than steps, so tokens stay far below 2^53 (see the checks below).
    pub const FIRST_TOKEN_MAX: u64 = 1 << 40;
    /// The largest magnitude of a resource's `initial` value: 10^15. Every accepted write adds
    /// one to each row it touches, and a run has fewer accepted writes than steps, so a row
    /// stays within `INITIAL_ABS_MAX` plus the step budget of zero: far inside `i64`, and below
    /// 2^53, where JSON readers that hold numbers as doubles still read every value exactly.
    pub const INITIAL_ABS_MAX: i64 = 1_000_000_000_000_000;

    /// The most steps a run may take: the simulator stops after eight steps per event of its
    /// budget. Stated here only to check the bounds above against it.
    const STEPS_MAX: u64 = EVENTS_MAX * 8;
    /// Numbers up to this are exact as doubles, so JSON readers in any language agree on them.
    const EXACT_IN_JSON: u64 = 1 << 53;

    // The bounds above are chosen so that no arithmetic of a run can overflow: these checks
    // fail the build if a change to one of them breaks that. A row's value is `initial` plus at
    // most one per step; a token is the first token plus at most one per step.
    const _: () = assert!(INITIAL_ABS_MAX as u64 + STEPS_MAX < EXACT_IN_JSON);
    const _: () = assert!(FIRST_TOKEN_MAX + STEPS_MAX < EXACT_IN_JSON);
    // Simulated times are microseconds. The latest instant the engine computes is a step no
    // later than the end of the run plus a few delays, each at most one span: a partition's
    // start and length, a latency and a jitter, for a message held back by a partition, is the
    // longest such chain. Sixteen spans leave ample room.
    const _: () = assert!((DURATION_MS_MAX + 16 * SPAN_MS_MAX) * 1_000 < EXACT_IN_JSON);
    // Counters of operations and attempts are `u32` and grow by one per step at most.
    const _: () = assert!(STEPS_MAX < u32::MAX as u64);
}

/// A complete, self-contained description of one simulated world.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short title shown to the user.
    #[schemars(length(max = limits::TITLE_LEN_MAX))]
    pub name: String,
    /// What the scenario shows, in a sentence or two.
    #[serde(default)]
    #[schemars(length(max = limits::DESCRIPTION_LEN_MAX))]
    pub description: String,
    /// How long to simulate, in milliseconds (at most one hour).
    #[schemars(range(min = 1, max = limits::DURATION_MS_MAX))]
    pub duration_ms: u64,
    /// The seed used when no other is given (`--seed` on the command line).
    #[serde(default)]
    pub seed: u64,
    /// The most events the run may record before it stops early (default 200000, at most 500000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = limits::EVENTS_MAX))]
    pub max_events: Option<u64>,
    /// Region names. Replicas, clients and resources are placed in regions.
    #[schemars(length(min = 1, max = limits::REGIONS_MAX), inner(length(min = 1, max = limits::NAME_LEN_MAX)))]
    pub regions: Vec<String>,
    /// Message latency between regions.
    #[serde(default)]
    pub network: Network,
    /// The lock services.
    #[schemars(length(max = limits::SERVICES_MAX))]
    pub services: Vec<Service>,
    /// The shared resources (tables of integer rows).
    #[schemars(length(min = 1, max = limits::RESOURCES_MAX))]
    pub resources: Vec<Resource>,
    /// The client classes.
    #[schemars(length(max = limits::CLASSES_MAX))]
    pub clients: Vec<ClientClass>,
    /// Network partitions between groups of regions.
    #[serde(default)]
    #[schemars(length(max = limits::WINDOWS_MAX))]
    pub partitions: Vec<Partition>,
    /// Process pauses (for example garbage-collection pauses) of clients.
    #[serde(default)]
    #[schemars(length(max = limits::WINDOWS_MAX))]
    pub pauses: Vec<Pause>,
    /// Changes of a resource's protecting service during the run.
    #[serde(default)]
    #[schemars(length(max = limits::MIGRATIONS_MAX))]
    pub migrations: Vec<Migration>,
}

/// One-way message latency. Every message draws a uniform jitter in `[0, jitter_ms]` from a
/// seeded stream of its sender, so runs are reproducible.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// Latency between two endpoints in the same region (default 1 ms).
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub local_latency_ms: u64,
    /// Latency between endpoints in different regions (default 40 ms).
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub remote_latency_ms: u64,
    /// Largest extra delay added to each message (default 2 ms).
    #[schemars(range(max = limits::SPAN_MS_MAX))]
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
    #[schemars(length(equal = 2))]
    pub between: Vec<String>,
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub latency_ms: u64,
}

/// A lock service: one linearizable serialization point, replicated across regions.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Service {
    #[schemars(length(min = 1, max = limits::NAME_LEN_MAX))]
    pub name: String,
    /// The region of each replica. A request is served only if it reaches a majority of them.
    #[schemars(length(min = 1, max = limits::REPLICAS_MAX))]
    pub replicas: Vec<String>,
    /// If set, this service is subordinate to the named authority: it grants only to a request
    /// carrying that authority's token, and only if the token is the highest it has seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subordinate_to: Option<String>,
    /// Lease length in milliseconds. Without it, a lock is held until released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = limits::SPAN_MS_MAX))]
    pub lease_ms: Option<u64>,
    /// The first token this service hands out (default 1). Services of different ages have
    /// tokens in different ranges, which is what makes comparing them meaningless.
    #[serde(default = "one")]
    #[schemars(range(max = limits::FIRST_TOKEN_MAX))]
    pub first_token: u64,
    /// The resources this service is declared to protect (the inventory).
    #[serde(default)]
    pub protects: Vec<String>,
    /// Windows during which the service is down and answers nothing.
    #[serde(default)]
    #[schemars(length(max = limits::WINDOWS_MAX))]
    pub outages: Vec<Window>,
    /// The service keeps nothing across an outage (no persistence): when it comes back, every
    /// grant it held and every request it had queued are forgotten, and its tokens start
    /// again from `first_token`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forgets_on_restart: bool,
    /// With `forgets_on_restart`: how much longer than each outage the service stays down
    /// before it serves again (default 0). Redis' advice for instances without persistence: a
    /// little more than the longest lease, so that every grant it forgot has run out.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub restart_delay_ms: u64,
    /// How fast the service's clock runs, in percent of real time (default 100). A clock at
    /// 150 ends every lease after two thirds of `lease_ms` in real time; clients are not told.
    #[serde(
        default = "hundred_percent",
        skip_serializing_if = "is_hundred_percent"
    )]
    #[schemars(range(min = limits::CLOCK_RATE_PERCENT_MIN, max = limits::CLOCK_RATE_PERCENT_MAX))]
    pub clock_rate_percent: u32,
}

fn one() -> u64 {
    1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn hundred_percent() -> u32 {
    100
}

fn is_hundred_percent(n: &u32) -> bool {
    *n == 100
}

/// A time window.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Window {
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub start_ms: u64,
    #[schemars(range(max = limits::SPAN_MS_MAX))]
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
    #[schemars(length(min = 1, max = limits::NAME_LEN_MAX))]
    pub name: String,
    /// The region the resource lives in (default: the first region).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// Row names (at most 32).
    #[schemars(length(min = 1, max = limits::ROWS_MAX), inner(length(min = 1, max = limits::NAME_LEN_MAX)))]
    pub rows: Vec<String>,
    /// The starting value of every row, at most 10^15 either side of zero.
    #[serde(default)]
    #[schemars(range(min = -limits::INITIAL_ABS_MAX, max = limits::INITIAL_ABS_MAX))]
    pub initial: i64,
    #[serde(default)]
    pub fencing: Fencing,
    /// The one service whose tokens are accepted when `fencing = "one_source"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

// Read by hand (below), written by the derived code.
/// How a client obtains the right to access the resource.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Protocol {
    /// Lock in one service.
    Single { service: String },
    /// Ask every listed service at once; hold when all have granted.
    AllUnordered {
        #[schemars(length(min = 1, max = limits::SERVICES_MAX))]
        services: Vec<String>,
        /// Proceed without a service that has not answered at all by the acquire timeout
        /// (an "available" multi-region lock).
        #[serde(default)]
        skip_unreachable: bool,
    },
    /// Ask the listed services one after another, in the listed order.
    AllOrdered {
        #[schemars(length(min = 1, max = limits::SERVICES_MAX))]
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
    /// Ask every listed service at once, each only if its lock is free (a try, like Redis'
    /// `SET NX`), and hold when at least `quorum` granted while the lock is still valid: the
    /// Redlock algorithm.
    Majority {
        #[schemars(length(min = 2, max = limits::SERVICES_MAX))]
        services: Vec<String>,
        /// How many grants make the lock (default: more than half of `services`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1, max = limits::SERVICES_MAX))]
        quorum: Option<u32>,
        /// The allowance for clock drift taken off the lock's validity (default 0).
        #[serde(default)]
        #[schemars(range(max = limits::SPAN_MS_MAX))]
        clock_drift_ms: u64,
    },
}

impl Protocol {
    /// The services a protocol asks, in its order: the listed ones, or the authority and then
    /// the subordinate of a chain.
    pub fn services(&self) -> Vec<&str> {
        match self {
            Protocol::Single { service } => vec![service.as_str()],
            Protocol::AllUnordered { services, .. }
            | Protocol::AllOrdered { services, .. }
            | Protocol::Majority { services, .. } => services.iter().map(String::as_str).collect(),
            Protocol::TokenChain {
                authority,
                subordinate,
            } => vec![authority.as_str(), subordinate.as_str()],
            Protocol::NoLock => Vec::new(),
        }
    }
}

/// The quorum a majority of `services` services needs by default: more than half of them.
pub fn default_quorum(services: usize) -> u32 {
    (services / 2 + 1) as u32
}

/// A protocol's `kind`, read where it is written, so that an unknown kind is located at its
/// value.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ProtocolKind {
    Single,
    AllUnordered,
    AllOrdered,
    TokenChain,
    NoLock,
    Majority,
}

impl ProtocolKind {
    /// The fields a protocol of this kind takes besides `kind`.
    fn fields(self) -> &'static [&'static str] {
        match self {
            ProtocolKind::Single => &["service"],
            ProtocolKind::AllUnordered | ProtocolKind::AllOrdered => {
                &["services", "skip_unreachable"]
            }
            ProtocolKind::TokenChain => &["authority", "subordinate"],
            ProtocolKind::NoLock => &[],
            ProtocolKind::Majority => &["services", "quorum", "clock_drift_ms"],
        }
    }
}

// Written by hand rather than derived: the derived reader of a table tagged by `kind` buffers
// the whole table in a generic form first, and that code, compiled once for each reader of the
// format, was among the largest parts of the browser's bundles. This reads the fields as they
// come and then checks them against the kind, with the derived reader's messages.
impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ProtocolVisitor)
    }
}

struct ProtocolVisitor;

impl<'de> serde::de::Visitor<'de> for ProtocolVisitor {
    type Value = Protocol;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a protocol table with a `kind`")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Protocol, A::Error> {
        use serde::de::Error;
        let mut kind: Option<ProtocolKind> = None;
        let mut service: Option<String> = None;
        let mut services: Option<Vec<String>> = None;
        let mut skip_unreachable: Option<bool> = None;
        let mut authority: Option<String> = None;
        let mut subordinate: Option<String> = None;
        let mut quorum: Option<u32> = None;
        let mut clock_drift_ms: Option<u64> = None;
        // Which fields a table may have depends on its kind, which may come after them, so the
        // keys are kept to check at the end: the eight names (each at most once) and the first
        // other key, which is an error whatever the kind. Later other keys cannot be the first
        // error, so they are passed over unkept, and a table of any size costs linear time.
        let mut keys: Vec<String> = Vec::new();
        let mut other = false;
        while let Some(key) = map.next_key::<String>()? {
            let known = matches!(
                key.as_str(),
                "kind"
                    | "service"
                    | "services"
                    | "skip_unreachable"
                    | "authority"
                    | "subordinate"
                    | "quorum"
                    | "clock_drift_ms"
            );
            if known && keys.contains(&key) {
                return Err(A::Error::custom(format_args!("duplicate field `{key}`")));
            }
            match key.as_str() {
                "kind" => kind = Some(map.next_value()?),
                "service" => service = Some(map.next_value()?),
                "services" => services = Some(map.next_value()?),
                "skip_unreachable" => skip_unreachable = Some(map.next_value()?),
                "authority" => authority = Some(map.next_value()?),
                "subordinate" => subordinate = Some(map.next_value()?),
                "quorum" => quorum = Some(map.next_value()?),
                "clock_drift_ms" => clock_drift_ms = Some(map.next_value()?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if known || !other {
                other |= !known;
                keys.push(key);
            }
        }
        let kind = kind.ok_or_else(|| A::Error::missing_field("kind"))?;
        let fields = kind.fields();
        if let Some(key) = keys
            .iter()
            .find(|k| *k != "kind" && !fields.contains(&k.as_str()))
        {
            return Err(A::Error::unknown_field(key, fields));
        }
        let need =
            |v: Option<String>, name: &'static str| v.ok_or_else(|| A::Error::missing_field(name));
        let listed = |v: Option<Vec<String>>| v.ok_or_else(|| A::Error::missing_field("services"));
        let skip_unreachable = skip_unreachable.unwrap_or(false);
        Ok(match kind {
            ProtocolKind::Single => Protocol::Single {
                service: need(service, "service")?,
            },
            ProtocolKind::AllUnordered => Protocol::AllUnordered {
                services: listed(services)?,
                skip_unreachable,
            },
            ProtocolKind::AllOrdered => Protocol::AllOrdered {
                services: listed(services)?,
                skip_unreachable,
            },
            ProtocolKind::TokenChain => Protocol::TokenChain {
                authority: need(authority, "authority")?,
                subordinate: need(subordinate, "subordinate")?,
            },
            ProtocolKind::NoLock => Protocol::NoLock,
            ProtocolKind::Majority => Protocol::Majority {
                services: listed(services)?,
                quorum,
                clock_drift_ms: clock_drift_ms.unwrap_or(0),
            },
        })
    }
}

/// A class of identical clients, each doing repeated read-modify-write operations.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClientClass {
    /// Instances are named `NAME-1`, `NAME-2`, ...
    #[schemars(length(min = 1, max = limits::NAME_LEN_MAX))]
    pub name: String,
    #[serde(default = "one_u32")]
    #[schemars(range(min = 1, max = limits::CLIENTS_PER_CLASS_MAX))]
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
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub start_ms: u64,
    /// After this time no new operation starts (default: the end of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub stop_ms: Option<u64>,
    /// Think time between the end of one operation and the start of the next.
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub period_ms: u64,
    /// Largest random extra think time, drawn per operation.
    #[serde(default)]
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub jitter_ms: u64,
    /// Time between the read and the write of a read-modify-write (the critical section's work).
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub work_ms: u64,
    /// How long to wait for a service before giving up (default: wait forever).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = limits::SPAN_MS_MAX))]
    pub acquire_timeout_ms: Option<u64>,
    /// How many times an operation retries after a timeout or refusal (default 3).
    #[serde(default = "three")]
    #[schemars(range(max = limits::RETRIES_MAX))]
    pub max_retries: u32,
    #[serde(default = "hundred")]
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub retry_backoff_ms: u64,
    /// Check the lease before each access and abandon the operation if it may have expired.
    #[serde(default)]
    pub lease_aware: bool,
    /// Safety margin for the lease check.
    #[serde(default)]
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub lease_margin_ms: u64,
    /// Stop after this many operations per client (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub start_ms: u64,
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub duration_ms: u64,
    /// Two or more disjoint groups of region names.
    #[schemars(length(min = 2))]
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
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub start_ms: u64,
    #[schemars(range(max = limits::SPAN_MS_MAX))]
    pub duration_ms: u64,
}

/// At `at_ms`, the clients of `resource` that used `from` switch to `to`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    #[schemars(range(max = limits::SPAN_MS_MAX))]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
        within_limit(text)?;
        let scenario: Scenario = toml::from_str(text).map_err(|e| {
            let message = e.message().trim();
            let location = match e.span() {
                Some(span) => line_column(text, span.start),
                None => locate_unspanned_toml_error(text, message),
            };
            // toml's own words for a dotted key with too many parts say nothing of keys.
            let message = if message == "recursion limit" {
                "recursion limit: a dotted key or table header has too many parts".to_string()
            } else {
                message.to_string()
            };
            ScenarioErrors(vec![ScenarioError { location, message }])
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parses and validates a TOML scenario from raw bytes, as read from a file: text that is
    /// not UTF-8 is refused with the position of its first invalid byte.
    pub fn from_toml_bytes(bytes: &[u8]) -> Result<Scenario, ScenarioErrors> {
        Scenario::from_toml_str(utf8(bytes)?)
    }

    /// Parses and validates a JSON scenario, the form meant for embedding a scenario in a URL.
    /// The text is parsed once, with serde_json's located syntax errors, and read by hand
    /// ([`json`]).
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioErrors> {
        within_limit(text)?;
        let parsed: json::Json = serde_json::from_str(text).map_err(|e| {
            // serde_json appends the position to its message; it is already the location.
            let message = e.to_string();
            let message = match message.rfind(" at line ") {
                Some(i) => message[..i].to_string(),
                None => message,
            };
            ScenarioErrors(vec![ScenarioError {
                location: format!("line {}, column {}", e.line().max(1), e.column().max(1)),
                message,
            }])
        })?;
        let scenario = json::scenario(&[], &parsed).map_err(|fault| {
            ScenarioErrors(vec![ScenarioError {
                location: line_column(text, json::locate(text, &fault)),
                message: fault.message,
            }])
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parses and validates a JSON scenario from raw bytes, as read from a file: text that is
    /// not UTF-8 is refused with the position of its first invalid byte.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Scenario, ScenarioErrors> {
        Scenario::from_json_str(utf8(bytes)?)
    }

    /// The scenario in canonical TOML: fields in the order of the format's types, comments and
    /// layout gone.
    pub fn to_toml_string(&self) -> String {
        canonical::toml_from_json(&self.to_json_string())
            .expect("a scenario's JSON is a table of TOML values")
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

    /// Whether `name` is the name of a client instance, `CLASS-N` with `N` from 1 to the class's
    /// count. The names are not built: a count may be far out of range when this is asked.
    /// Validation uses the count as written, so that a count out of range is reported once, by
    /// its own error, and not again by every pause that names one of its instances; a count of
    /// 0 counts as 1 for the same reason.
    fn names_an_instance(&self, name: &str) -> bool {
        self.clients.iter().any(|class| {
            let Some(number) = name
                .strip_prefix(class.name.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
            else {
                return false;
            };
            // Only the spelling the engine gives an instance counts: "batch-01" is not one.
            match number.parse::<u32>() {
                Ok(n) => n.to_string() == number && n >= 1 && n <= class.count.max(1),
                Err(_) => false,
            }
        })
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

/// The text of a scenario read as bytes, or the located error of its first byte that is not
/// UTF-8. The byte is given by its offset, since an editor may show it as anything; its line
/// and column (counted in bytes, like every column) are those of the valid text before it.
fn utf8(bytes: &[u8]) -> Result<&str, ScenarioErrors> {
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let before = String::from_utf8_lossy(&bytes[..offset]);
        ScenarioErrors(vec![ScenarioError {
            location: line_column(&before, offset),
            message: format!(
                "byte {offset} (counting from 0) is not valid UTF-8; a scenario must be UTF-8 text"
            ),
        }])
    })
}

/// Locates a TOML error that the parser reported without a position. The one such error is a
/// dotted key or table header with too many parts, which toml refuses before it keeps track of
/// where keys are. A key never spans lines, and the text before a line break is read the same
/// whatever follows it, so the shortest run of whole lines whose parse reports the same problem
/// ends with the line that has it. A binary search finds that line in a few dozen parses of a
/// text the caller has already bounded. An error that no prefix reproduces concerns the
/// document as a whole, and is placed at its start, like a missing top-level field.
fn locate_unspanned_toml_error(text: &str, message: &str) -> String {
    let reports = |prefix: &str| {
        toml::de::DeTable::parse_recoverable(prefix)
            .1
            .iter()
            .any(|e| e.span().is_none() && e.message().trim() == message)
    };
    // The ends of the lines: the text up to `ends[i]` holds lines 1 to i + 1.
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(text.len()))
        .collect();
    if !reports(text) {
        return line_column(text, 0);
    }
    let (mut lo, mut hi) = (0, ends.len() - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reports(&text[..ends[mid]]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let start = if lo == 0 { 0 } else { ends[lo - 1] };
    let line = &text[start..ends[lo]];
    // The key or header starts at the line's first character that is not blank or a bracket.
    let column = line
        .find(|c: char| !matches!(c, ' ' | '\t' | '['))
        .unwrap_or(0);
    line_column(text, start + column)
}

/// Refuses a text longer than any scenario may be, wherever it comes from (an edit, a file, an
/// import, a link), at the place where it passes the limit: parsing megabytes of text that
/// cannot be a scenario would only keep the reader busy.
fn within_limit(text: &str) -> Result<(), ScenarioErrors> {
    if text.len() <= limits::TEXT_BYTES_MAX {
        return Ok(());
    }
    Err(ScenarioErrors(vec![ScenarioError {
        location: line_column(text, limits::TEXT_BYTES_MAX),
        message: format!(
            "the text is {} bytes; a scenario has at most {} (1 MiB)",
            text.len(),
            limits::TEXT_BYTES_MAX
        ),
    }]))
}

fn line_column(text: &str, offset: usize) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    format!("line {line}, column {column}")
}

/// Each name's first position in its list, sorted for lookup, made with one sort.
fn names_index<'a>(names: impl Iterator<Item = &'a str>) -> SortedMap<&'a str, usize> {
    SortedMap::from_pairs_merging(names.enumerate().map(|(i, n)| (n, i)).collect(), |_, _| {})
}

/// The longest list that is checked for repeated names. A set of names is a sorted vector
/// (`crate::sorted`), whose insertions cost its length each; a longer list is refused for its
/// length anyway (every limit is far below this), so its repeats go unsaid rather than taking
/// the square of its length.
const REPEATS_CHECKED_MAX: usize = 1024;

/// Where problems of the scenario as a whole are reported.
const TOP: &str = "scenario";

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

    fn unique<'a>(&mut self, kind: &str, names: impl ExactSizeIterator<Item = &'a str>) {
        if names.len() > REPEATS_CHECKED_MAX {
            return;
        }
        let mut seen = SortedSet::new();
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

    /// Checks a whole scenario, one section of the format after another, so that problems are
    /// reported in the order of the format.
    fn check(&mut self, s: &Scenario) {
        self.scenario_fields(s);
        self.names(s);
        let names = Names::new(s);
        self.network(&s.network, &names);
        self.services(s, &names);
        self.resources(s, &names);
        self.clients(s, &names);
        self.partitions(s, &names);
        self.pauses(s);
        self.migrations(s, &names);
    }

    /// The scenario's own fields (title, description, duration, event budget) and the number
    /// of entries in each of its lists.
    fn scenario_fields(&mut self, s: &Scenario) {
        let top = TOP;
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
    }

    /// The spelling of region names, and that no two regions, services, resources or client
    /// classes share a name.
    fn names(&mut self, s: &Scenario) {
        for r in &s.regions {
            self.name(&format!("region \"{r}\""), r);
        }
        self.unique("region", s.regions.iter().map(String::as_str));
        self.unique("service", s.services.iter().map(|x| x.name.as_str()));
        self.unique("resource", s.resources.iter().map(|x| x.name.as_str()));
        self.unique("client class", s.clients.iter().map(|x| x.name.as_str()));
    }

    /// The network's latencies, and that each link joins two regions that exist.
    fn network(&mut self, n: &Network, names: &Names) {
        self.span("network", "local_latency_ms", n.local_latency_ms);
        self.span("network", "remote_latency_ms", n.remote_latency_ms);
        self.span("network", "jitter_ms", n.jitter_ms);
        for link in &n.links {
            let loc = format!("network link {}", link.between.join("-"));
            if link.between.len() != 2 {
                self.error(&loc, "a link names exactly two regions");
            }
            for r in &link.between {
                if !names.region(r) {
                    self.error(&loc, format!("names region \"{r}\", which does not exist"));
                }
            }
            self.span(&loc, "latency_ms", link.latency_ms);
        }
    }

    /// Each service: its name, replicas, lease, first token, authority, the resources it
    /// protects, its outages and restarts, and its clock rate.
    fn services(&mut self, s: &Scenario, names: &Names) {
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
                if !names.region(r) {
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
                match names.service(authority) {
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
                if names.resource(p).is_none() {
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
            self.span(&loc, "restart_delay_ms", svc.restart_delay_ms);
            if svc.restart_delay_ms > 0 && !svc.forgets_on_restart {
                self.error(
                    &loc,
                    "restart_delay_ms applies only to a service that forgets_on_restart",
                );
            }
            let rate = svc.clock_rate_percent;
            if !(limits::CLOCK_RATE_PERCENT_MIN..=limits::CLOCK_RATE_PERCENT_MAX).contains(&rate) {
                self.error(
                    &loc,
                    format!(
                        "clock_rate_percent is {rate}, it must be between {} and {}",
                        limits::CLOCK_RATE_PERCENT_MIN,
                        limits::CLOCK_RATE_PERCENT_MAX
                    ),
                );
            } else if rate != 100 && svc.lease_ms.is_none() {
                self.error(
                    &loc,
                    "clock_rate_percent changes only when leases end, and this service has no lease_ms",
                );
            }
        }
    }

    /// Each resource: its name, region, rows and initial value, then its fencing and the split
    /// of its rows between services.
    fn resources(&mut self, s: &Scenario, names: &Names) {
        for (at, res) in s.resources.iter().enumerate() {
            let loc = format!("resource \"{}\"", res.name);
            self.name(&loc, &res.name);
            if let Some(r) = &res.region {
                if !names.region(r) {
                    self.error(&loc, format!("region \"{r}\" does not exist"));
                }
            }
            self.count(&loc, "rows", res.rows.len(), 1, limits::ROWS_MAX);
            if !(-limits::INITIAL_ABS_MAX..=limits::INITIAL_ABS_MAX).contains(&res.initial) {
                self.error(
                    &loc,
                    format!(
                        "initial is {}, it must be between -{max} and {max}",
                        res.initial,
                        max = limits::INITIAL_ABS_MAX
                    ),
                );
            }
            // Row names appear in trace lines, joined by commas inside brackets, so they follow
            // the rule for names: an empty row or one with a comma would make a line ambiguous.
            for row in &res.rows {
                self.name(&format!("row of resource \"{}\"", res.name), row);
            }
            self.unique(
                &format!("row of resource \"{}\"", res.name),
                res.rows.iter().map(String::as_str),
            );
            self.fencing(&loc, res, names);
            self.row_shares(&loc, at, res, names);
        }
    }

    /// A resource's fencing: a fencing source exactly when fencing is "one_source", and one
    /// that exists.
    fn fencing(&mut self, loc: &str, res: &Resource, names: &Names) {
        match (res.fencing, &res.fencing_source) {
            (Fencing::OneSource, None) => self.error(
                loc,
                "fencing = \"one_source\" needs fencing_source, the service whose tokens count",
            ),
            (Fencing::OneSource, Some(src)) if names.service(src).is_none() => self.error(
                loc,
                format!("fencing_source names service \"{src}\", which does not exist"),
            ),
            (Fencing::Off | Fencing::AnySource, Some(_)) => self.error(
                loc,
                "fencing_source is only meaningful with fencing = \"one_source\"",
            ),
            _ => {}
        }
    }

    /// The split of the rows of resource number `at` between services: services and rows that
    /// exist, and no row given to two services.
    fn row_shares(&mut self, loc: &str, at: usize, res: &Resource, names: &Names) {
        let mut owned = SortedSet::new();
        let given: usize = res.partition.iter().map(|share| share.rows.len()).sum();
        for share in &res.partition {
            if names.service(&share.service).is_none() {
                self.error(
                    loc,
                    format!(
                        "partition names service \"{}\", which does not exist",
                        share.service
                    ),
                );
            }
            for row in &share.rows {
                if !names.has_row(at, row) {
                    self.error(
                        loc,
                        format!("partition names row \"{row}\", which does not exist"),
                    );
                } else if given <= REPEATS_CHECKED_MAX && !owned.insert(row.as_str()) {
                    self.error(
                        loc,
                        format!("partition gives row \"{row}\" to more than one service"),
                    );
                }
            }
        }
    }

    /// Each client class, then the number of client instances in all.
    fn clients(&mut self, s: &Scenario, names: &Names) {
        let mut instances: u32 = 0;
        for class in &s.clients {
            self.client(class, names);
            // A class over its own limit is reported in `client`, once: counted at that limit
            // here, it does not also push the total over the limit for all classes.
            instances = instances.saturating_add(class.count.min(limits::CLIENTS_PER_CLASS_MAX));
        }
        if instances > limits::CLIENTS_MAX {
            self.error(
                TOP,
                format!(
                    "{instances} client instances in all, more than the limit of {}",
                    limits::CLIENTS_MAX
                ),
            );
        }
    }

    /// One client class: its name, count, region, resource and rows, protocol, timings and
    /// retries.
    fn client(&mut self, class: &ClientClass, names: &Names) {
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
        if !names.region(&class.region) {
            self.error(&loc, format!("region \"{}\" does not exist", class.region));
        }
        match names.resource_at(&class.resource) {
            None => self.error(
                &loc,
                format!("resource \"{}\" does not exist", class.resource),
            ),
            Some(at) => {
                let res = &names.scenario.resources[at];
                for row in &class.rows {
                    if !names.has_row(at, row) {
                        self.error(
                            &loc,
                            format!("row \"{row}\" is not a row of resource \"{}\"", res.name),
                        );
                    }
                }
            }
        }
        self.protocol(&loc, &class.protocol, names);
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

    /// A client class's protocol: the number of services it lists and no repeats, the rules
    /// of its kind (a majority's quorum and clock drift, a token chain's subordinate), and
    /// that every service it names exists.
    fn protocol(&mut self, loc: &str, protocol: &Protocol, names: &Names) {
        let mut services_named: Vec<&str> = Vec::new();
        match protocol {
            Protocol::Single { service } => services_named.push(service),
            Protocol::AllUnordered { services, .. } | Protocol::AllOrdered { services, .. } => {
                self.count(
                    loc,
                    "protocol services",
                    services.len(),
                    1,
                    limits::SERVICES_MAX,
                );
                let mut seen = SortedSet::new();
                let check = services.len() <= REPEATS_CHECKED_MAX;
                for x in services {
                    if check && !seen.insert(x.as_str()) {
                        self.error(loc, format!("protocol lists service \"{x}\" twice"));
                    }
                    services_named.push(x);
                }
            }
            Protocol::Majority {
                services,
                quorum,
                clock_drift_ms,
            } => {
                self.count(
                    loc,
                    "protocol services",
                    services.len(),
                    2,
                    limits::SERVICES_MAX,
                );
                let mut seen = SortedSet::new();
                let check = services.len() <= REPEATS_CHECKED_MAX;
                for x in services {
                    if check && !seen.insert(x.as_str()) {
                        self.error(loc, format!("protocol lists service \"{x}\" twice"));
                    }
                    if names
                        .service(x)
                        .is_some_and(|svc| svc.subordinate_to.is_some())
                    {
                        self.error(
                            loc,
                            format!(
                                "protocol majority: service \"{x}\" is subordinate and refuses every request without its authority's token; a majority asks independent services"
                            ),
                        );
                    }
                    services_named.push(x);
                }
                if let Some(q) = quorum {
                    if *q == 0 || *q as usize > services.len() {
                        self.error(
                            loc,
                            format!(
                                "protocol quorum is {q}, it must be between 1 and the {} services listed",
                                services.len()
                            ),
                        );
                    }
                }
                self.span(loc, "protocol clock_drift_ms", *clock_drift_ms);
                let shortest = services
                    .iter()
                    .filter_map(|x| names.service(x).and_then(|svc| svc.lease_ms))
                    .min();
                if let Some(lease) = shortest {
                    if *clock_drift_ms >= lease {
                        self.error(
                            loc,
                            format!(
                                "protocol clock_drift_ms is {clock_drift_ms}, not less than the shortest lease of the listed services ({lease} ms): the lock would never be valid"
                            ),
                        );
                    }
                }
            }
            Protocol::TokenChain {
                authority,
                subordinate,
            } => {
                services_named.push(authority);
                services_named.push(subordinate);
                if let (Some(_), Some(sub)) = (names.service(authority), names.service(subordinate))
                {
                    if sub.subordinate_to.as_deref() != Some(authority.as_str()) {
                        self.error(
                            loc,
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
            if names.service(x).is_none() {
                self.error(
                    loc,
                    format!("protocol names service \"{x}\", which does not exist"),
                );
            }
        }
    }

    /// Each network partition: its window, at least two groups, and regions that exist and
    /// are in one group only.
    fn partitions(&mut self, s: &Scenario, names: &Names) {
        for (i, p) in s.partitions.iter().enumerate() {
            let loc = format!("partition {}", i + 1);
            self.span(&loc, "start_ms", p.start_ms);
            self.span(&loc, "duration_ms", p.duration_ms);
            if p.groups.len() < 2 {
                self.error(&loc, "a partition needs at least two groups of regions");
            }
            let mut seen = SortedSet::new();
            let check = p.groups.iter().map(Vec::len).sum::<usize>() <= REPEATS_CHECKED_MAX;
            for g in &p.groups {
                for r in g {
                    if !names.region(r) {
                        self.error(&loc, format!("region \"{r}\" does not exist"));
                    } else if check && !seen.insert(r.as_str()) {
                        self.error(&loc, format!("region \"{r}\" is in more than one group"));
                    }
                }
            }
        }
    }

    /// Each client pause: that it names exactly one of a client class or an instance, and its
    /// window.
    fn pauses(&mut self, s: &Scenario) {
        for (i, p) in s.pauses.iter().enumerate() {
            let loc = format!("pause {}", i + 1);
            let instance = s.names_an_instance(&p.client);
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
                        "client \"{}\" is neither a client class nor an instance (instances are named like \"{}-1\")",
                        p.client,
                        s.clients.first().map_or("batch", |c| c.name.as_str())
                    ),
                );
            }
            self.span(&loc, "start_ms", p.start_ms);
            self.span(&loc, "duration_ms", p.duration_ms);
        }
    }

    /// Each migration: its time, a resource that exists, and two different independent
    /// services that exist.
    fn migrations(&mut self, s: &Scenario, names: &Names) {
        for (i, m) in s.migrations.iter().enumerate() {
            let loc = format!("migration {}", i + 1);
            self.span(&loc, "at_ms", m.at_ms);
            if names.resource(&m.resource).is_none() {
                self.error(&loc, format!("resource \"{}\" does not exist", m.resource));
            }
            for x in [&m.from, &m.to] {
                match names.service(x) {
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

/// The names a scenario's references may name, each list indexed by name.
struct Names<'a> {
    scenario: &'a Scenario,
    regions: SortedMap<&'a str, usize>,
    services: SortedMap<&'a str, usize>,
    resources: SortedMap<&'a str, usize>,
    /// The rows of each resource, in the order of the resources.
    rows_of: Vec<SortedMap<&'a str, usize>>,
}

impl<'a> Names<'a> {
    fn new(s: &'a Scenario) -> Self {
        // Every reference is looked up in an index of the names it may name, made with one
        // sort: a text far past the limits (a megabyte of names, each referring to others) is
        // checked in n log n steps where a scan per reference took the square.
        Names {
            scenario: s,
            regions: names_index(s.regions.iter().map(String::as_str)),
            services: names_index(s.services.iter().map(|x| x.name.as_str())),
            resources: names_index(s.resources.iter().map(|x| x.name.as_str())),
            rows_of: s
                .resources
                .iter()
                .map(|r| names_index(r.rows.iter().map(String::as_str)))
                .collect(),
        }
    }

    fn region(&self, name: &str) -> bool {
        self.regions.contains_key(name)
    }

    fn service(&self, name: &str) -> Option<&'a Service> {
        self.services.get(name).map(|&i| &self.scenario.services[i])
    }

    fn resource_at(&self, name: &str) -> Option<usize> {
        self.resources.get(name).copied()
    }

    fn resource(&self, name: &str) -> Option<&'a Resource> {
        self.resource_at(name).map(|i| &self.scenario.resources[i])
    }

    /// Whether resource number `at` has a row named `row`.
    fn has_row(&self, at: usize, row: &str) -> bool {
        self.rows_of[at].contains_key(row)
    }
}
