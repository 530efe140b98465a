//! The scenario format's JSON reader, written by hand.
//!
//! Serde's derived readers are compiled anew for every type and every format they read, and
//! the JSON copy of the scenario's types was a large part of each page bundle (links, lessons
//! and saved runs all carry scenarios as JSON). This reader parses the text once into [`Json`],
//! a tree whose one reader serves every scenario, and then reads each member by name, with the
//! derived readers' words: the TOML reader stays derived, and a test holds the two to the same
//! scenarios and the same messages. A problem of names, types or values is located at the
//! member it concerns (a missing member at the object that lacks it), by finding that member
//! in the text again. Where a scenario has several problems, each reader reports its first; the
//! derived one takes the text's order and this one the format's, so they may name different
//! ones first.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{
    ClientClass, Fencing, FencingChecks, Link, Migration, MigrationMode, Network, Partition,
    PartitionMode, Pause, Protocol, Resource, RowShare, Scenario, Service, Window,
};

/// A parsed JSON value. An object keeps its members in order and refuses a member named twice,
/// as the derived readers do (a `serde_json::Value` would keep the last silently).
pub enum Json {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

/// How many of an object's names are checked for a repeat as they come.
const NAMES_CHECKED_AT_ONCE: usize = 64;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Unsigned(n))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Signed(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
        Ok(Json::Float(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::Text(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::Text(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            // A name named twice is refused where it stands, as the derived readers refuse it,
            // among the first members of an object (every object of the format has fewer).
            // Past them, the names are checked once the object is read, with one sort: an
            // object of a hundred thousand names (a megabyte of text) takes n log n steps, not
            // n squared.
            if members.len() < NAMES_CHECKED_AT_ONCE && members.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            let value = map.next_value()?;
            members.push((key, value));
        }
        if members.len() > NAMES_CHECKED_AT_ONCE {
            let names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
            let again = crate::sorted::repeated(&names);
            if let Some(i) = again.iter().position(|a| *a) {
                let key = names[i];
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
        }
        Ok(Json::Object(members))
    }
}

/// One step from a value to a value inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Member(String),
    Item(usize),
}

/// What is wrong, and where: the steps to the value at fault (to the object, for a member it
/// lacks), and which part of it serde_json would point at.
#[derive(Debug)]
pub struct Fault {
    pub path: Vec<Step>,
    pub message: String,
    pub at: At,
}

/// Where in the value at a fault's path serde_json places the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// The value, as far as serde_json read it: up to a list or object (known to be of the
    /// wrong type from its first byte, not yet read), or to the last byte of anything else.
    Value,
    /// The last byte of the value: the end of an object found to lack a member.
    End,
    /// The last byte of the member's name: a member the format does not have.
    Name,
    /// The value's first byte, which serde_json looked at and refused.
    Start,
    /// The first byte inside an empty object, where serde_json looked for a member.
    Inside,
}

type Read<T> = Result<T, Fault>;

fn fault<T>(path: &[Step], message: String) -> Read<T> {
    Err(Fault {
        path: path.to_vec(),
        message,
        at: At::Value,
    })
}

fn fault_at<T>(path: &[Step], message: String, at: At) -> Read<T> {
    Err(Fault {
        path: path.to_vec(),
        message,
        at,
    })
}

fn with(path: &[Step], step: Step) -> Vec<Step> {
    let mut out = path.to_vec();
    out.push(step);
    out
}

/// Serde's words for a value of the wrong type or range.
fn unexpected(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("boolean `{b}`"),
        Json::Unsigned(n) => format!("integer `{n}`"),
        Json::Signed(n) => format!("integer `{n}`"),
        Json::Float(x) => format!("floating point `{}`", FloatWords(*x)),
        Json::Text(s) => format!("string {s:?}"),
        Json::List(_) => "sequence".into(),
        Json::Object(_) => "map".into(),
    }
}

/// A float as serde writes it in its messages: always with a fractional part.
struct FloatWords(f64);

impl fmt::Display for FloatWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = self.0.to_string();
        if self.0.is_finite() && !s.contains(['.', 'e', 'E']) {
            s.push_str(".0");
        }
        f.write_str(&s)
    }
}

/// Serde's list of what was expected: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => "there are no fields".into(),
        [one] => format!("expected `{one}`"),
        [a, b] => format!("expected `{a}` or `{b}`"),
        _ => format!(
            "expected one of {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn invalid_type<T>(path: &[Step], v: &Json, expected: &str) -> Read<T> {
    fault(
        path,
        format!("invalid type: {}, expected {expected}", unexpected(v)),
    )
}

fn unsigned(path: &[Step], v: &Json, expected: &str, max: u64) -> Read<u64> {
    match v {
        Json::Unsigned(n) if *n <= max => Ok(*n),
        Json::Unsigned(_) | Json::Signed(_) => fault(
            path,
            format!("invalid value: {}, expected {expected}", unexpected(v)),
        ),
        _ => invalid_type(path, v, expected),
    }
}

fn u64_of(path: &[Step], v: &Json) -> Read<u64> {
    unsigned(path, v, "u64", u64::MAX)
}

fn u32_of(path: &[Step], v: &Json) -> Read<u32> {
    unsigned(path, v, "u32", u64::from(u32::MAX)).map(|n| n as u32)
}

fn i64_of(path: &[Step], v: &Json) -> Read<i64> {
    match v {
        Json::Signed(n) => Ok(*n),
        Json::Unsigned(n) => i64::try_from(*n).or_else(|_| {
            fault(
                path,
                format!("invalid value: {}, expected i64", unexpected(v)),
            )
        }),
        _ => invalid_type(path, v, "i64"),
    }
}

fn bool_of(path: &[Step], v: &Json) -> Read<bool> {
    match v {
        Json::Bool(b) => Ok(*b),
        _ => invalid_type(path, v, "a boolean"),
    }
}

fn string_of(path: &[Step], v: &Json) -> Read<String> {
    match v {
        Json::Text(s) => Ok(s.clone()),
        _ => invalid_type(path, v, "a string"),
    }
}

fn list_of<T>(path: &[Step], v: &Json, read: impl Fn(&[Step], &Json) -> Read<T>) -> Read<Vec<T>> {
    match v {
        Json::List(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| read(&with(path, Step::Item(i)), item))
            .collect(),
        _ => invalid_type(path, v, "a sequence"),
    }
}

fn strings(path: &[Step], v: &Json) -> Read<Vec<String>> {
    list_of(path, v, string_of)
}

/// A word of a closed set, as serde reads a unit-only enum from a string.
fn word<T: Copy>(path: &[Step], v: &Json, words: &[(&str, T)]) -> Read<T> {
    let names: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
    word_at(path, v, &names).map(|i| words[i].1)
}

/// Which of `names` the value is, as serde reads a unit variant; not generic, so the reading
/// is compiled once for every closed set of words.
#[inline(never)]
fn word_at(path: &[Step], v: &Json, names: &[&str]) -> Read<usize> {
    match v {
        Json::Text(s) => match names.iter().position(|w| w == s) {
            Some(i) => Ok(i),
            None => fault(path, format!("unknown variant `{s}`, {}", one_of(names))),
        },
        // serde_json also reads an enum from an object of one member, named after the variant,
        // and refuses anything else at its first byte.
        Json::Object(members) if !members.is_empty() => {
            let (k, value) = &members[0];
            if names.contains(&k.as_str()) {
                let at = with(path, Step::Member(k.clone()));
                match value {
                    Json::Null if members.len() == 1 => {
                        word_at(path, &Json::Text(k.clone()), names)
                    }
                    Json::Null => fault_at(path, "expected `}`".into(), At::Start),
                    _ => invalid_type(&at, value, "unit"),
                }
            } else {
                fault_at(
                    &with(path, Step::Member(k.clone())),
                    format!("unknown variant `{k}`, {}", one_of(names)),
                    At::Name,
                )
            }
        }
        Json::Object(_) => fault_at(path, "expected value".into(), At::Inside),
        _ => fault_at(path, "expected value".into(), At::Start),
    }
}

/// An object's members, read by name: every member must be one of `fields`, each read at
/// most once; what is left unread at the end is missing or takes its default.
struct Members<'a> {
    path: &'a [Step],
    members: &'a [(String, Json)],
}

impl<'a> Members<'a> {
    fn of(path: &'a [Step], v: &'a Json, name: &str, fields: &[&str]) -> Read<Members<'a>> {
        let members = match v {
            Json::Object(members) => members,
            // Serde's derived readers also read a struct from a list of its fields' values in
            // order, which no scenario is written as; an empty one gets their words.
            Json::List(items) if items.is_empty() => {
                return fault_at(
                    path,
                    format!(
                        "invalid length 0, expected struct {name} with {} elements",
                        fields.len()
                    ),
                    At::End,
                )
            }
            _ => return invalid_type(path, v, &format!("struct {name}")),
        };
        if let Some((k, _)) = members.iter().find(|(k, _)| !fields.contains(&k.as_str())) {
            return fault_at(
                &with(path, Step::Member(k.clone())),
                format!("unknown field `{k}`, {}", one_of(fields)),
                At::Name,
            );
        }
        Ok(Members { path, members })
    }

    fn get(&self, name: &str) -> Option<&'a Json> {
        self.members.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// A member that must be there, read by `read`.
    fn need<T>(&self, name: &str, read: impl Fn(&[Step], &Json) -> Read<T>) -> Read<T> {
        match self.get(name) {
            Some(v) => read(&with(self.path, Step::Member(name.into())), v),
            None => fault_at(self.path, format!("missing field `{name}`"), At::End),
        }
    }

    /// A member that may be left out, for its default.
    fn or<T>(&self, name: &str, default: T, read: impl Fn(&[Step], &Json) -> Read<T>) -> Read<T> {
        match self.get(name) {
            Some(v) => read(&with(self.path, Step::Member(name.into())), v),
            None => Ok(default),
        }
    }

    /// An optional member: left out or `null` is `None`.
    fn opt<T>(&self, name: &str, read: impl Fn(&[Step], &Json) -> Read<T>) -> Read<Option<T>> {
        match self.get(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => read(&with(self.path, Step::Member(name.into())), v).map(Some),
        }
    }
}

/// Reads a scenario from its parsed JSON.
pub fn scenario(path: &[Step], v: &Json) -> Read<Scenario> {
    let m = Members::of(
        path,
        v,
        "Scenario",
        &[
            "name",
            "description",
            "duration_ms",
            "seed",
            "max_events",
            "regions",
            "network",
            "services",
            "resources",
            "clients",
            "partitions",
            "pauses",
            "migrations",
        ],
    )?;
    Ok(Scenario {
        name: m.need("name", string_of)?,
        description: m.or("description", String::new(), string_of)?,
        duration_ms: m.need("duration_ms", u64_of)?,
        seed: m.or("seed", 0, u64_of)?,
        max_events: m.opt("max_events", u64_of)?,
        regions: m.need("regions", strings)?,
        network: m.or("network", Network::default(), network)?,
        services: m.need("services", |p, v| list_of(p, v, service))?,
        resources: m.need("resources", |p, v| list_of(p, v, resource))?,
        clients: m.need("clients", |p, v| list_of(p, v, client))?,
        partitions: m.or("partitions", Vec::new(), |p, v| list_of(p, v, partition))?,
        pauses: m.or("pauses", Vec::new(), |p, v| list_of(p, v, pause))?,
        migrations: m.or("migrations", Vec::new(), |p, v| list_of(p, v, migration))?,
    })
}

fn network(path: &[Step], v: &Json) -> Read<Network> {
    // Every member of a network has a default, so serde's reading of a struct from a list of
    // its values in order reads an empty list as the defaults.
    if matches!(v, Json::List(items) if items.is_empty()) {
        return Ok(Network::default());
    }
    let m = Members::of(
        path,
        v,
        "Network",
        &[
            "local_latency_ms",
            "remote_latency_ms",
            "jitter_ms",
            "links",
        ],
    )?;
    let d = Network::default();
    Ok(Network {
        local_latency_ms: m.or("local_latency_ms", d.local_latency_ms, u64_of)?,
        remote_latency_ms: m.or("remote_latency_ms", d.remote_latency_ms, u64_of)?,
        jitter_ms: m.or("jitter_ms", d.jitter_ms, u64_of)?,
        links: m.or("links", d.links, |p, v| list_of(p, v, link))?,
    })
}

fn link(path: &[Step], v: &Json) -> Read<Link> {
    let m = Members::of(path, v, "Link", &["between", "latency_ms"])?;
    Ok(Link {
        between: m.need("between", strings)?,
        latency_ms: m.need("latency_ms", u64_of)?,
    })
}

fn service(path: &[Step], v: &Json) -> Read<Service> {
    let m = Members::of(
        path,
        v,
        "Service",
        &[
            "name",
            "replicas",
            "subordinate_to",
            "lease_ms",
            "first_token",
            "protects",
            "outages",
            "forgets_on_restart",
            "restart_delay_ms",
            "clock_rate_percent",
        ],
    )?;
    Ok(Service {
        name: m.need("name", string_of)?,
        replicas: m.need("replicas", strings)?,
        subordinate_to: m.opt("subordinate_to", string_of)?,
        lease_ms: m.opt("lease_ms", u64_of)?,
        first_token: m.or("first_token", 1, u64_of)?,
        protects: m.or("protects", Vec::new(), strings)?,
        outages: m.or("outages", Vec::new(), |p, v| list_of(p, v, window))?,
        forgets_on_restart: m.or("forgets_on_restart", false, bool_of)?,
        restart_delay_ms: m.or("restart_delay_ms", 0, u64_of)?,
        clock_rate_percent: m.or("clock_rate_percent", 100, u32_of)?,
    })
}

fn window(path: &[Step], v: &Json) -> Read<Window> {
    let m = Members::of(path, v, "Window", &["start_ms", "duration_ms"])?;
    Ok(Window {
        start_ms: m.need("start_ms", u64_of)?,
        duration_ms: m.need("duration_ms", u64_of)?,
    })
}

fn resource(path: &[Step], v: &Json) -> Read<Resource> {
    let m = Members::of(
        path,
        v,
        "Resource",
        &[
            "name",
            "region",
            "rows",
            "initial",
            "fencing",
            "fencing_source",
            "fencing_checks",
            "partition",
        ],
    )?;
    Ok(Resource {
        name: m.need("name", string_of)?,
        region: m.opt("region", string_of)?,
        rows: m.need("rows", strings)?,
        initial: m.or("initial", 0, i64_of)?,
        fencing: m.or("fencing", Fencing::default(), |p, v| {
            word(
                p,
                v,
                &[
                    ("off", Fencing::Off),
                    ("any_source", Fencing::AnySource),
                    ("one_source", Fencing::OneSource),
                ],
            )
        })?,
        fencing_source: m.opt("fencing_source", string_of)?,
        fencing_checks: m.or("fencing_checks", FencingChecks::default(), |p, v| {
            word(
                p,
                v,
                &[
                    ("writes", FencingChecks::Writes),
                    ("all_accesses", FencingChecks::AllAccesses),
                ],
            )
        })?,
        partition: m.or("partition", Vec::new(), |p, v| list_of(p, v, row_share))?,
    })
}

fn row_share(path: &[Step], v: &Json) -> Read<RowShare> {
    let m = Members::of(path, v, "RowShare", &["service", "rows"])?;
    Ok(RowShare {
        service: m.need("service", string_of)?,
        rows: m.need("rows", strings)?,
    })
}

/// A protocol, with the words of its hand-written serde reader (`ProtocolVisitor`): which
/// members it may have depends on its `kind`.
fn protocol(path: &[Step], v: &Json) -> Read<Protocol> {
    const KINDS: [&str; 6] = [
        "single",
        "all_unordered",
        "all_ordered",
        "token_chain",
        "no_lock",
        "majority",
    ];
    let Json::Object(members) = v else {
        return invalid_type(path, v, "a protocol table with a `kind`");
    };
    let kind = match members.iter().find(|(k, _)| k == "kind") {
        None => None,
        Some((_, k)) => Some(word(
            &with(path, Step::Member("kind".into())),
            k,
            &[
                (KINDS[0], 0),
                (KINDS[1], 1),
                (KINDS[2], 2),
                (KINDS[3], 3),
                (KINDS[4], 4),
                (KINDS[5], 5),
            ],
        )?),
    };
    let fields: &[&str] = match kind {
        Some(0) => &["service"],
        Some(1 | 2) => &["services", "skip_unreachable"],
        Some(3) => &["authority", "subordinate"],
        Some(5) => &["services", "quorum", "clock_drift_ms"],
        _ => &[],
    };
    // The serde reader reads every known member's value as it comes, so a value of the wrong
    // type is its first error, before an unknown member or a missing kind.
    for (k, value) in members {
        let at = with(path, Step::Member(k.clone()));
        match k.as_str() {
            "service" | "authority" | "subordinate" => {
                string_of(&at, value)?;
            }
            "services" => {
                strings(&at, value)?;
            }
            "skip_unreachable" => {
                bool_of(&at, value)?;
            }
            "quorum" => {
                u32_of(&at, value)?;
            }
            "clock_drift_ms" => {
                u64_of(&at, value)?;
            }
            _ => {}
        }
    }
    let Some(kind) = kind else {
        return fault_at(path, "missing field `kind`".into(), At::End);
    };
    if let Some((k, _)) = members
        .iter()
        .find(|(k, _)| k != "kind" && !fields.contains(&k.as_str()))
    {
        // The serde reader knows this only once it has read the whole table.
        return fault_at(
            path,
            format!("unknown field `{k}`, {}", one_of(fields)),
            At::End,
        );
    }
    let m = Members {
        path,
        members: members.as_slice(),
    };
    Ok(match kind {
        0 => Protocol::Single {
            service: m.need("service", string_of)?,
        },
        1 => Protocol::AllUnordered {
            services: m.need("services", strings)?,
            skip_unreachable: m.or("skip_unreachable", false, bool_of)?,
        },
        2 => Protocol::AllOrdered {
            services: m.need("services", strings)?,
            skip_unreachable: m.or("skip_unreachable", false, bool_of)?,
        },
        3 => Protocol::TokenChain {
            authority: m.need("authority", string_of)?,
            subordinate: m.need("subordinate", string_of)?,
        },
        5 => Protocol::Majority {
            services: m.need("services", strings)?,
            quorum: m.opt("quorum", u32_of)?,
            clock_drift_ms: m.or("clock_drift_ms", 0, u64_of)?,
        },
        _ => Protocol::NoLock,
    })
}

fn client(path: &[Step], v: &Json) -> Read<ClientClass> {
    let m = Members::of(
        path,
        v,
        "ClientClass",
        &[
            "name",
            "count",
            "region",
            "protocol",
            "resource",
            "rows",
            "start_ms",
            "stop_ms",
            "period_ms",
            "jitter_ms",
            "work_ms",
            "acquire_timeout_ms",
            "max_retries",
            "retry_backoff_ms",
            "lease_aware",
            "lease_margin_ms",
            "max_operations",
        ],
    )?;
    Ok(ClientClass {
        name: m.need("name", string_of)?,
        count: m.or("count", 1, u32_of)?,
        region: m.need("region", string_of)?,
        protocol: m.need("protocol", protocol)?,
        resource: m.need("resource", string_of)?,
        rows: m.or("rows", Vec::new(), strings)?,
        start_ms: m.or("start_ms", 0, u64_of)?,
        stop_ms: m.opt("stop_ms", u64_of)?,
        period_ms: m.need("period_ms", u64_of)?,
        jitter_ms: m.or("jitter_ms", 0, u64_of)?,
        work_ms: m.need("work_ms", u64_of)?,
        acquire_timeout_ms: m.opt("acquire_timeout_ms", u64_of)?,
        max_retries: m.or("max_retries", 3, u32_of)?,
        retry_backoff_ms: m.or("retry_backoff_ms", 100, u64_of)?,
        lease_aware: m.or("lease_aware", false, bool_of)?,
        lease_margin_ms: m.or("lease_margin_ms", 0, u64_of)?,
        max_operations: m.opt("max_operations", u32_of)?,
    })
}

fn partition(path: &[Step], v: &Json) -> Read<Partition> {
    let m = Members::of(
        path,
        v,
        "Partition",
        &["start_ms", "duration_ms", "groups", "mode"],
    )?;
    Ok(Partition {
        start_ms: m.need("start_ms", u64_of)?,
        duration_ms: m.need("duration_ms", u64_of)?,
        groups: m.need("groups", |p, v| list_of(p, v, strings))?,
        mode: m.or("mode", PartitionMode::default(), |p, v| {
            word(
                p,
                v,
                &[
                    ("drop", PartitionMode::Drop),
                    ("delay", PartitionMode::Delay),
                ],
            )
        })?,
    })
}

fn pause(path: &[Step], v: &Json) -> Read<Pause> {
    let m = Members::of(path, v, "Pause", &["client", "start_ms", "duration_ms"])?;
    Ok(Pause {
        client: m.need("client", string_of)?,
        start_ms: m.need("start_ms", u64_of)?,
        duration_ms: m.need("duration_ms", u64_of)?,
    })
}

fn migration(path: &[Step], v: &Json) -> Read<Migration> {
    let m = Members::of(
        path,
        v,
        "Migration",
        &["at_ms", "resource", "from", "to", "mode"],
    )?;
    Ok(Migration {
        at_ms: m.need("at_ms", u64_of)?,
        resource: m.need("resource", string_of)?,
        from: m.need("from", string_of)?,
        to: m.need("to", string_of)?,
        mode: m.or("mode", MigrationMode::default(), |p, v| {
            word(
                p,
                v,
                &[
                    ("naive", MigrationMode::Naive),
                    ("drain", MigrationMode::Drain),
                    ("transfer", MigrationMode::Transfer),
                ],
            )
        })?,
    })
}

/// The byte offset where serde_json would place a fault in `text` (valid JSON). The text has
/// been parsed already, so the scan only walks it.
pub fn locate(text: &str, fault: &Fault) -> usize {
    let b = text.as_bytes();
    let (start, name_end) = find(text, &fault.path);
    match fault.at {
        At::Start => return start,
        At::Inside => return skip_space(b, start + 1),
        _ => {}
    }
    let end = match (fault.at, name_end) {
        (At::Name, Some(end)) => end,
        // A list or object of the wrong type is known from its first byte, which serde_json
        // has peeked at but not read: it points at the byte before.
        (At::Value, _) if matches!(b.get(start), Some(b'[' | b'{')) => start,
        _ => skip_value(b, start),
    };
    end.saturating_sub(1)
}

/// The offset of the value at `path`, and the end of its member's name when the last step is
/// a member.
fn find(text: &str, path: &[Step]) -> (usize, Option<usize>) {
    let b = text.as_bytes();
    let mut at = skip_space(b, 0);
    let mut name_end = None;
    for step in path {
        name_end = None;
        match (step, b.get(at)) {
            (Step::Member(key), Some(b'{')) => {
                at = skip_space(b, at + 1);
                loop {
                    if b.get(at) != Some(&b'"') {
                        return (at, None);
                    }
                    let end = skip_string(b, at);
                    let found =
                        serde_json::from_str::<String>(&text[at..end]).is_ok_and(|k| k == *key);
                    at = skip_space(b, end);
                    at = skip_space(b, at + 1); // the colon
                    if found {
                        name_end = Some(end);
                        break;
                    }
                    at = skip_space(b, skip_value(b, at));
                    if b.get(at) == Some(&b',') {
                        at = skip_space(b, at + 1);
                    }
                }
            }
            (Step::Item(n), Some(b'[')) => {
                at = skip_space(b, at + 1);
                for _ in 0..*n {
                    at = skip_space(b, skip_value(b, at));
                    if b.get(at) == Some(&b',') {
                        at = skip_space(b, at + 1);
                    }
                }
            }
            _ => return (at, None),
        }
    }
    (at, name_end)
}

fn skip_space(b: &[u8], mut at: usize) -> usize {
    while at < b.len() && matches!(b[at], b' ' | b'\t' | b'\n' | b'\r') {
        at += 1;
    }
    at
}

/// The offset just past the string that starts at `at`.
fn skip_string(b: &[u8], mut at: usize) -> usize {
    at += 1;
    while at < b.len() {
        match b[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    at
}

/// The offset just past the value that starts at `at`. Nesting is counted, not recursed into,
/// so a deeply nested value costs no stack.
fn skip_value(b: &[u8], mut at: usize) -> usize {
    let mut depth = 0usize;
    while at < b.len() {
        match b[at] {
            b'"' => {
                at = skip_string(b, at);
                if depth == 0 {
                    return at;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth == 0 {
                    return at;
                }
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            b',' if depth == 0 => return at,
            c if depth == 0 && matches!(c, b' ' | b'\t' | b'\n' | b'\r') => return at,
            _ => {}
        }
        at += 1;
    }
    at
}
