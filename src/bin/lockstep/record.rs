//! `lockstep record`: a scenario played on real etcd processes, one per lock service, and the
//! real observations turned into the project's trace, which the same monitors judge.
//!
//! The clients are threads that follow the scenario's workload (the same seeded draws as the
//! simulator's), lock through etcd's lock API with etcd leases, and read and write an
//! in-process resource that applies the scenario's fencing rule to etcd's own tokens (the lock
//! key's creation revision). Each service's log is what etcd's watch reported, in etcd's
//! revision order; the recorder only decides which change of the lock's keys is a grant, a
//! queueing, a release, an expiry or a cancellation, as etcd's lock recipe defines them.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockstep::monitor;
use lockstep::recording::{Recording, ServiceSource, Source};
use lockstep::scenario::{Fencing, Protocol, Scenario};
use lockstep::trace::{AbortReason, BeliefEnd, Event, GrantRef, ServiceOp, Token, Values, What};
use lockstep::world::{Micros, ProtocolConfig, World};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "etcd.rs"]
mod etcd;
#[path = "zookeeper.rs"]
mod zookeeper;

use etcd::Etcd;

const USAGE_LINE: &str = "usage: lockstep record FILE [--edit EDIT]... [--seed N] [--json] [--no-trace] [--out TRACE.json]\n       lockstep record FILE... --compare [--runs N]";

/// The longest scenario recorded: runs take their real time, times the scale.
const REAL_RUN_MAX: Duration = Duration::from_secs(60);

/// The largest factor real time is stretched by, so that leases are whole seconds.
const SCALE_MAX: u64 = 4;

/// A lease for a service without one: longer than any recording, so it never ends a hold.
const NO_LEASE_TTL_S: u64 = 3600;

/// How long a call that should answer at once may take before the recording fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// How long after the recording's start the clients begin, so every thread is ready.
const START_MARGIN: Duration = Duration::from_millis(50);

/// The most runs `--compare` records of each file.
const RUNS_MAX: u64 = 100;

struct Args {
    files: Vec<String>,
    seed: Option<u64>,
    json: bool,
    no_trace: bool,
    out: Option<String>,
    compare: bool,
    runs: u64,
    edits: Vec<lockstep::lesson::Edit>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        files: Vec::new(),
        seed: None,
        json: false,
        no_trace: false,
        out: None,
        compare: false,
        runs: 3,
        edits: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let mut value = || {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{arg} needs a value"))
        };
        match arg {
            "-h" | "--help" => return Err(USAGE_LINE.into()),
            "--seed" => {
                let v = value()?;
                a.seed = Some(
                    v.parse()
                        .map_err(|_| format!("--seed: \"{v}\" is not a whole number"))?,
                );
            }
            "--runs" => {
                let v = value()?;
                let n: u64 = v
                    .parse()
                    .map_err(|_| format!("--runs: \"{v}\" is not a whole number"))?;
                if n == 0 || n > RUNS_MAX {
                    return Err(format!("--runs must be between 1 and {RUNS_MAX}"));
                }
                a.runs = n;
            }
            "--out" => a.out = Some(value()?),
            "--edit" => {
                let v = value()?;
                a.edits
                    .push(v.parse().map_err(|why| format!("--edit \"{v}\": {why}"))?);
            }
            "--json" => a.json = true,
            "--no-trace" => a.no_trace = true,
            "--compare" => a.compare = true,
            _ if arg.starts_with("--") => {
                return Err(format!("record does not take {arg}\n{USAGE_LINE}"))
            }
            _ => a.files.push(arg.to_string()),
        }
        i += 1;
    }
    if a.compare {
        if a.files.is_empty() {
            return Err(format!(
                "record --compare takes one FILE or more\n{USAGE_LINE}"
            ));
        }
        if a.json || a.no_trace || a.out.is_some() || a.seed.is_some() || !a.edits.is_empty() {
            return Err(format!(
                "record --compare takes only --runs (the seeds are each file's, counted up)\n{USAGE_LINE}"
            ));
        }
    } else if args.iter().any(|x| x == "--runs") {
        return Err(format!(
            "record takes --runs only with --compare\n{USAGE_LINE}"
        ));
    } else if a.files.len() != 1 {
        return Err(format!("record takes one FILE\n{USAGE_LINE}"));
    }
    Ok(a)
}

pub fn record_command(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let a = parse(args)?;
    if a.compare {
        return compare(&a, out);
    }
    let path = &a.files[0];
    let (scenario, text) = load(path)?;
    // Edits are the app's controls, applied as a lesson's `edits` apply them, so a recording
    // can play the very scenario a lesson step shows.
    let scenario = if a.edits.is_empty() {
        scenario
    } else {
        let edited = lockstep::lesson::apply_edits(&scenario, &a.edits);
        edited
            .validate()
            .map_err(|e| format!("{path}: the edited scenario is invalid: {e}"))?;
        edited
    };
    let plan = Plan::of(&scenario, &text).map_err(|errors| prefixed(path, errors))?;
    let seed = a.seed.unwrap_or(scenario.seed);
    let recording = record(&scenario, &plan, seed)?;
    let about = recording.source_json();
    if let Some(file) = &a.out {
        let mut doc = Vec::new();
        let _ = super::print_judged(
            &mut doc,
            &scenario,
            seed,
            &recording,
            true,
            false,
            Some(about.clone()),
        );
        std::fs::write(file, doc).map_err(|e| format!("{file}: {e}"))?;
    }
    if !a.json {
        let _ = writeln!(out, "{}", header(&recording, &plan));
    }
    let _ = super::print_judged(
        out,
        &scenario,
        seed,
        &recording,
        a.json,
        a.no_trace,
        Some(about),
    );
    Ok(ExitCode::SUCCESS)
}

fn prefixed(path: &str, errors: Vec<String>) -> String {
    errors
        .iter()
        .map(|e| format!("{path}: {e}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The scenario, validated as `run` validates it, and its text (to locate what the recorder
/// cannot play).
fn load(path: &str) -> Result<(Scenario, String), String> {
    let scenario = super::load(path)?;
    // A pipe gives its text only once: without it, locations name the entity instead.
    let text = std::fs::read_to_string(path).unwrap_or_default();
    Ok((scenario, text))
}

/// The line of a scenario's text where `needle` first appears at or after the line `after`,
/// as a location (`line 12`); or `fallback` when the text does not have it (a JSON file
/// written on one line has no better answer than the entity's name).
fn line_of(text: &str, needles: &[&str], after: usize, fallback: &str) -> (String, usize) {
    for (i, line) in text.lines().enumerate().skip(after) {
        let code = line.split('#').next().unwrap_or("");
        if needles.iter().all(|n| code.contains(n)) {
            return (format!("line {}", i + 1), i + 1);
        }
    }
    (fallback.to_string(), after)
}

/// What the recorder will do with a scenario: the time scale, and what it approximates.
struct Plan {
    /// Real time runs this many times slower than the scenario's, so that every lease is a
    /// whole number of seconds (etcd's unit).
    scale: u64,
    /// What the recording does differently from the model, said in the output.
    notes: Vec<String>,
}

impl Plan {
    /// Checks that every feature the scenario uses can be played on real services; each one
    /// that cannot is an error naming the feature and its line.
    fn of(scenario: &Scenario, text: &str) -> Result<Plan, Vec<String>> {
        let mut errors = Vec::new();
        let mut refuse = |location: String, feature: &str, why: &str| {
            errors.push(format!(
                "{location}: {feature} cannot be played on real services ({why})"
            ));
        };
        for (i, _) in scenario.partitions.iter().enumerate() {
            let (at, _) = nth_header(text, "[[partitions]]", i, "partitions");
            refuse(
                at,
                "a partition between regions",
                "the recorder runs every process on one machine's loopback",
            );
        }
        for (i, _) in scenario.migrations.iter().enumerate() {
            let (at, _) = nth_header(text, "[[migrations]]", i, "migrations");
            refuse(
                at,
                "a migration",
                "etcd has no way to hand a lock to another cluster",
            );
        }
        for (i, s) in scenario.services.iter().enumerate() {
            let (at, line) =
                nth_header(text, "[[services]]", i, &format!("service \"{}\"", s.name));
            if s.subordinate_to.is_some() {
                let (at, _) = line_of(text, &["subordinate_to"], line.saturating_sub(1), &at);
                refuse(
                    at,
                    "a subordinate service",
                    "etcd's lock API takes no authority token",
                );
            }
            if s.forgets_on_restart {
                let (at, _) = line_of(text, &["forgets_on_restart"], line.saturating_sub(1), &at);
                refuse(
                    at,
                    "a service that forgets on restart",
                    "an etcd member keeps its data on disk across a restart",
                );
            }
            if s.clock_rate_percent != 100 {
                let (at, _) = line_of(text, &["clock_rate_percent"], line.saturating_sub(1), &at);
                refuse(
                    at,
                    "a service clock that runs fast or slow",
                    "etcd's leases run on the machine's own clock",
                );
            }
        }
        for (i, c) in scenario.clients.iter().enumerate() {
            let (at, line) = nth_header(text, "[[clients]]", i, &format!("client \"{}\"", c.name));
            let (pat, _) = line_of(text, &["protocol"], line.saturating_sub(1), &at);
            match &c.protocol {
                Protocol::TokenChain { .. } => {
                    refuse(pat, "the token_chain protocol", "etcd's lock API takes no authority token")
                }
                Protocol::Majority { .. } => refuse(
                    pat,
                    "the majority protocol",
                    "etcd's lock API waits in a queue, where a majority client's request is a try that is never queued",
                ),
                Protocol::AllUnordered {
                    skip_unreachable: true,
                    ..
                }
                | Protocol::AllOrdered {
                    skip_unreachable: true,
                    ..
                } => refuse(
                    pat,
                    "skip_unreachable",
                    "without partitions no service is unreachable, and an outage only delays answers",
                ),
                _ => {}
            }
        }
        // etcd counts leases in whole seconds: stretch real time until every lease is one.
        let leases: Vec<(usize, &str, u64)> = scenario
            .services
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.lease_ms.map(|l| (i, s.name.as_str(), l)))
            .collect();
        let scale = (1..=SCALE_MAX).find(|k| {
            leases
                .iter()
                .all(|(_, _, l)| (l * k) % 1000 == 0 && l * k > 0)
        });
        let scale = match scale {
            Some(k) => k,
            None => {
                for (i, name, l) in &leases {
                    if !(1..=SCALE_MAX).any(|k| (l * k) % 1000 == 0 && l * k > 0) {
                        let (at, line) =
                            nth_header(text, "[[services]]", *i, &format!("service \"{name}\""));
                        let (at, _) = line_of(text, &["lease_ms"], line.saturating_sub(1), &at);
                        refuse(at, &format!("lease_ms = {l}"), &format!("etcd's leases are whole seconds, and no stretch of time up to {SCALE_MAX} times makes {l} ms one"));
                    }
                }
                1
            }
        };
        let real = Duration::from_millis(scenario.duration_ms.saturating_mul(scale));
        if real > REAL_RUN_MAX {
            let (at, _) = line_of(text, &["duration_ms"], 0, "duration_ms");
            refuse(
                at,
                &format!("duration_ms = {}", scenario.duration_ms),
                &format!(
                    "a recording takes real time, at most {} s",
                    REAL_RUN_MAX.as_secs()
                ),
            );
        }
        // A service's tokens must increase over its whole log; two locks of one service
        // interleave their keys' revisions.
        let world = World::compile(scenario);
        let mut locks: BTreeMap<u32, u32> = BTreeMap::new();
        let mut reported = Vec::new();
        for c in &world.clients {
            if let ProtocolConfig::Locks { services, .. } = &c.protocol {
                for s in services {
                    let other = locks
                        .insert(*s, c.resource)
                        .is_some_and(|r| r != c.resource);
                    if other && !reported.contains(s) {
                        reported.push(*s);
                        let name = &world.services[*s as usize].name;
                        let (at, _) = nth_header(
                            text,
                            "[[services]]",
                            *s as usize,
                            &format!("service \"{name}\""),
                        );
                        refuse(at, "one service locking two resources", "etcd's revisions are one counter per cluster, so two locks' tokens would not each increase in the service's log");
                    }
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut notes = vec![
            "the scenario's latencies are waited out by the clients, on top of loopback's"
                .to_string(),
            "each service is one single-node etcd, whatever its replicas".to_string(),
        ];
        if scenario.services.iter().any(|s| s.first_token != 1) {
            notes.push(
                "tokens are etcd's revisions, which start at 1 (first_token is not applied)".into(),
            );
        }
        if scenario.services.iter().any(|s| !s.outages.is_empty()) {
            notes.push(
                "an outage stops the etcd process: requests wait for it instead of being lost"
                    .into(),
            );
        }
        if scale > 1 {
            notes.push(format!("real time runs {scale} times slower than the scenario's, so that leases are whole seconds; times are shown in the scenario's"));
        }
        Ok(Plan { scale, notes })
    }
}

/// Where the `n`th entity of a list of tables (`[[services]]`) starts: its header's line, or
/// `fallback` (its name) when the text does not lay it out so.
fn nth_header(text: &str, header: &str, n: usize, fallback: &str) -> (String, usize) {
    let mut after = 0;
    let mut found = (fallback.to_string(), 0);
    for _ in 0..=n {
        found = line_of(text, &[header], after, fallback);
        after = found.1;
    }
    found
}

/// What the client threads share while they run.
struct Shared {
    world: Arc<World>,
    t0: Instant,
    scale: u64,
    deadline: Instant,
    addrs: Vec<SocketAddr>,
    /// Client, resource and fault events, with their real times.
    events: Mutex<Vec<(Instant, What)>>,
    resources: Vec<Mutex<ResourceState>>,
    /// (service, lease) → client: whose lock key a watched key is.
    leases: Mutex<BTreeMap<(u32, u64), u32>>,
    /// Unlock calls: (service, key, revision answered, whether it deleted the key, when).
    unlocks: Mutex<Vec<Unlock>>,
    /// Grants as clients received them: (service, token) → when.
    granted: Mutex<BTreeMap<(u32, u64), Instant>>,
    /// A failed call ends the recording with this message.
    failure: Mutex<Option<String>>,
}

struct Unlock {
    service: u32,
    key: Vec<u8>,
    revision: u64,
    deleted: bool,
    when: Instant,
}

struct ResourceState {
    values: Vec<i64>,
    highest: Option<u64>,
}

impl Shared {
    /// Real time as the scenario's microseconds.
    fn micros(&self, t: Instant) -> Micros {
        (t.saturating_duration_since(self.t0).as_micros() as u64) / self.scale
    }

    fn real(&self, at: Micros) -> Instant {
        self.t0 + Duration::from_micros(at.saturating_mul(self.scale))
    }

    fn emit(&self, what: What) {
        let now = Instant::now();
        self.events.lock().unwrap().push((now, what));
    }

    fn fail(&self, message: String) {
        let mut f = self.failure.lock().unwrap();
        if f.is_none() {
            *f = Some(message);
        }
    }

    /// An access to the resource, judged by the scenario's fencing rule on etcd's tokens;
    /// returns whether it was accepted and the values read.
    fn access(&self, client: u32, write: Option<&Values>, token: Option<Token>) -> (bool, Values) {
        let c = &self.world.clients[client as usize];
        let r = c.resource;
        let cfg = &self.world.resources[r as usize];
        let mut st = self.resources[r as usize].lock().unwrap();
        let checked = write.is_some() || cfg.check_reads;
        let accepted = !checked || {
            let value = match (cfg.fencing, token) {
                (Fencing::Off, _) => Some(None),
                (_, None) => None,
                (Fencing::AnySource, Some(t)) => Some(Some(t.value)),
                (Fencing::OneSource, Some(t)) => {
                    (Some(t.service) == cfg.fencing_source).then_some(Some(t.value))
                }
            };
            match value {
                None => false,
                Some(None) => true,
                Some(Some(v)) if st.highest.is_some_and(|h| v < h) => false,
                Some(Some(v)) => {
                    st.highest = Some(v);
                    true
                }
            }
        };
        let rows = c.rows;
        let indices: Vec<usize> = (0..64).filter(|i| rows & (1 << i) != 0).collect();
        let what = match write {
            Some(values) => {
                if accepted {
                    for (k, i) in indices.iter().enumerate() {
                        st.values[*i] = values[k];
                    }
                }
                What::Write {
                    client,
                    resource: r,
                    rows,
                    token,
                    accepted,
                    values: values.clone(),
                }
            }
            None => {
                let values: Values = if accepted {
                    indices.iter().map(|i| st.values[*i]).collect()
                } else {
                    Values::new()
                };
                What::Read {
                    client,
                    resource: r,
                    rows,
                    token,
                    accepted,
                    values,
                }
            }
        };
        let values = match &what {
            What::Read { values, .. } => values.clone(),
            _ => Values::new(),
        };
        // The event is written while the resource is held, so accesses keep their real order.
        self.emit(what);
        (accepted, values)
    }
}

/// One lock a client holds or asks for.
struct Hold {
    service: u32,
    lease: u64,
    sent: Instant,
    key: Vec<u8>,
    token: u64,
}

/// How an attempt at the locks ended.
enum Attempt {
    Held(Vec<Hold>),
    TimedOut,
    /// The recording's end came first.
    Over,
}

/// A client, played in real time by a thread of its own.
struct Client<'a> {
    shared: &'a Shared,
    id: u32,
    rng: ChaCha8Rng,
    /// The network's jitter draws (several of the client's lock calls may be in flight at once).
    network: Mutex<ChaCha8Rng>,
}

/// Where a client's message goes.
#[derive(Clone, Copy)]
enum Peer {
    Service(u32),
    Resource,
}

impl Client<'_> {
    fn cfg(&self) -> &lockstep::world::ClientConfig {
        &self.shared.world.clients[self.id as usize]
    }

    /// Sleeps until `until`, and on through any pause the client is in when it wakes (a real
    /// stall: nothing the client does happens while it is paused). False once the recording's
    /// end has come.
    fn sleep_until(&self, until: Instant) -> bool {
        let mut until = until.min(self.shared.deadline);
        loop {
            let now = Instant::now();
            if now < until {
                std::thread::sleep(until - now);
            }
            let at = self.shared.micros(Instant::now());
            match self.shared.world.paused_until(self.id, at) {
                Some(end) => until = self.shared.real(end).min(self.shared.deadline),
                None => break,
            }
            if Instant::now() >= self.shared.deadline {
                break;
            }
        }
        Instant::now() < self.shared.deadline
    }

    /// Waits out a pause the client is in now (a reply that arrives during a pause is acted on
    /// when it ends).
    fn stall(&self) -> bool {
        self.sleep_until(Instant::now())
    }

    /// The scenario's one-way latency of a message between this client and `peer`, with a
    /// jitter draw, as real time: a request reaches a service once a majority of its
    /// replicas has it, a reply comes from the nearest one, as in the model.
    fn flight(&self, peer: Peer, request: bool) -> Duration {
        let s = self.shared;
        let w = &s.world;
        let region = w.clients[self.id as usize].region as usize;
        let base = match peer {
            Peer::Service(sv) => {
                let paths = &w.replica_latencies[sv as usize][region];
                let needed = if request {
                    w.services[sv as usize].majority
                } else {
                    1
                };
                paths.get(needed - 1).copied().unwrap_or(0)
            }
            Peer::Resource => {
                let r = w.clients[self.id as usize].resource as usize;
                w.latency[region][w.resources[r].region as usize]
            }
        };
        let jitter = if w.jitter == 0 {
            0
        } else {
            self.network.lock().unwrap().random_range(0..=w.jitter)
        };
        Duration::from_micros((base + jitter) * s.scale)
    }

    /// A message's flight: the client waits it out (never past the recording's end).
    fn fly(&self, peer: Peer, request: bool) {
        let d = self.flight(peer, request);
        let until = (Instant::now() + d).min(self.shared.deadline);
        let now = Instant::now();
        if until > now {
            std::thread::sleep(until - now);
        }
    }

    fn draw(&mut self, max: Micros) -> Micros {
        if max == 0 {
            0
        } else {
            self.rng.random_range(0..=max)
        }
    }

    fn run(mut self) {
        let cfg = self.cfg().clone();
        let s = self.shared;
        let mut next = s.real(cfg.start + self.draw(cfg.jitter));
        let mut ops = 0u32;
        loop {
            if !self.sleep_until(next) {
                return;
            }
            let at = s.micros(Instant::now());
            if cfg.max_operations.is_some_and(|m| ops >= m) || at >= cfg.stop {
                s.emit(What::ClientStopped { client: self.id });
                return;
            }
            ops += 1;
            s.emit(What::OpStarted {
                client: self.id,
                op: ops,
            });
            let mut retries = 0;
            let holds = loop {
                match self.acquire(&cfg) {
                    Attempt::Held(holds) => break Some(holds),
                    Attempt::Over => return,
                    Attempt::TimedOut => {
                        let retry = retries < cfg.max_retries;
                        s.emit(What::AttemptAborted {
                            client: self.id,
                            reason: AbortReason::Timeout,
                            retry,
                        });
                        if !retry {
                            s.emit(What::GaveUp { client: self.id });
                            break None;
                        }
                        retries += 1;
                        let backoff = Duration::from_micros(cfg.retry_backoff * s.scale);
                        if !self.sleep_until(Instant::now() + backoff) {
                            return;
                        }
                    }
                }
            };
            if let Some(holds) = holds {
                if !self.critical_section(&cfg, holds) {
                    return;
                }
            }
            let think = cfg.period + self.draw(cfg.jitter);
            next = Instant::now() + Duration::from_micros(think * s.scale);
        }
    }

    /// Asks for the protocol's locks: in order, or all at once.
    fn acquire(&mut self, cfg: &lockstep::world::ClientConfig) -> Attempt {
        let services = match &cfg.protocol {
            ProtocolConfig::Locks { services, .. } => services.clone(),
            _ => Vec::new(),
        };
        let ordered = matches!(cfg.protocol, ProtocolConfig::Locks { ordered: true, .. });
        let mut holds: Vec<Hold> = Vec::new();
        let outcome = if ordered {
            let mut outcome = None;
            for s in &services {
                match self.lock_one(cfg, *s) {
                    Ok(hold) => holds.push(hold),
                    Err(o) => {
                        outcome = Some(o);
                        break;
                    }
                }
            }
            outcome
        } else {
            let results: Vec<Result<Hold, Attempt>> = std::thread::scope(|scope| {
                let this = &*self;
                let handles: Vec<_> = services
                    .iter()
                    .map(|s| scope.spawn(move || this.lock_one(cfg, *s)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(Err(Attempt::Over)))
                    .collect()
            });
            let mut outcome = None;
            for r in results {
                match r {
                    Ok(hold) => holds.push(hold),
                    Err(Attempt::Over) => outcome = Some(Attempt::Over),
                    Err(o) => {
                        if outcome.is_none() {
                            outcome = Some(o)
                        }
                    }
                }
            }
            outcome
        };
        match outcome {
            None => {
                if !self.stall() {
                    return Attempt::Over;
                }
                Attempt::Held(holds)
            }
            Some(o) => {
                self.release(&holds);
                o
            }
        }
    }

    /// Takes a lease and waits for one service's lock, at most the acquire timeout.
    fn lock_one(&self, cfg: &lockstep::world::ClientConfig, service: u32) -> Result<Hold, Attempt> {
        let s = self.shared;
        let addr = s.addrs[service as usize];
        let lease_s = s.world.services[service as usize]
            .lease
            .map(|l| l * s.scale / 1_000_000)
            .unwrap_or(NO_LEASE_TTL_S);
        let sent = Instant::now();
        s.emit(What::AcquireSent {
            client: self.id,
            service,
        });
        self.fly(Peer::Service(service), true);
        // The lease is part of the request: a service that does not answer (an outage) times
        // the attempt out from the moment it was sent, whichever call is waiting.
        let give_up = match cfg.acquire_timeout {
            Some(t) => s.deadline.min(sent + Duration::from_micros(t * s.scale)),
            None => s.deadline,
        };
        let left = || give_up.saturating_duration_since(Instant::now());
        let lease = match etcd::lease_grant(addr, lease_s, left()) {
            Ok(id) => id,
            Err(e) if etcd::timed_out(&e) => {
                return Err(if Instant::now() >= s.deadline {
                    Attempt::Over
                } else {
                    Attempt::TimedOut
                });
            }
            Err(e) => {
                s.fail(format!(
                    "service \"{}\": {e}",
                    s.world.services[service as usize].name
                ));
                return Err(Attempt::Over);
            }
        };
        s.leases.lock().unwrap().insert((service, lease), self.id);
        let limit = left();
        let name = &s.world.resources[cfg.resource as usize].name;
        match etcd::lock(addr, name, lease, limit) {
            Ok(Some(locked)) => {
                s.granted
                    .lock()
                    .unwrap()
                    .insert((service, locked.token), Instant::now());
                // etcd's lease ran while the client waited; the model's starts at the grant.
                if s.world.services[service as usize].lease.is_some() {
                    let _ = etcd::lease_keepalive(addr, lease, CALL_TIMEOUT);
                }
                self.fly(Peer::Service(service), false);
                Ok(Hold {
                    service,
                    lease,
                    sent,
                    key: locked.key,
                    token: locked.token,
                })
            }
            Ok(None) => {
                // Revoking the lease removes the waiter's key at once, whatever etcd does with
                // the abandoned call. Like the model's cancel, the client does not wait for it
                // (a stopped service answers only when it is continued).
                std::thread::spawn(move || etcd::lease_revoke(addr, lease, CALL_TIMEOUT));
                if Instant::now() >= s.deadline {
                    Err(Attempt::Over)
                } else {
                    Err(Attempt::TimedOut)
                }
            }
            Err(e) => {
                if Instant::now() < s.deadline {
                    s.fail(format!(
                        "service \"{}\": {e}",
                        s.world.services[service as usize].name
                    ));
                }
                Err(Attempt::Over)
            }
        }
    }

    /// Lets go of the holds, last taken first.
    fn release(&self, holds: &[Hold]) {
        let s = self.shared;
        for h in holds.iter().rev() {
            let addr = s.addrs[h.service as usize];
            self.fly(Peer::Service(h.service), true);
            match etcd::unlock(addr, &h.key, CALL_TIMEOUT) {
                Ok((revision, deleted)) => s.unlocks.lock().unwrap().push(Unlock {
                    service: h.service,
                    key: h.key.clone(),
                    revision,
                    deleted,
                    when: Instant::now(),
                }),
                Err(e) => {
                    if Instant::now() < s.deadline {
                        s.fail(format!(
                            "service \"{}\": {e}",
                            s.world.services[h.service as usize].name
                        ));
                    }
                }
            }
            let _ = etcd::lease_revoke(addr, h.lease, CALL_TIMEOUT);
        }
    }

    /// For a lease-aware client: when the first of its leases may end, less its margin,
    /// counted from when it asked (a safe bound on when the service granted).
    fn lease_deadline(
        &self,
        cfg: &lockstep::world::ClientConfig,
        holds: &[Hold],
    ) -> Option<Instant> {
        if !cfg.lease_aware {
            return None;
        }
        let s = self.shared;
        holds
            .iter()
            .filter_map(|h| {
                s.world.services[h.service as usize].lease.map(|l| {
                    let l = Duration::from_micros(l.saturating_sub(cfg.lease_margin) * s.scale);
                    h.sent + l
                })
            })
            .min()
    }

    /// Read, work, write, let go. False once the recording's end has come.
    fn critical_section(&mut self, cfg: &lockstep::world::ClientConfig, holds: Vec<Hold>) -> bool {
        let s = self.shared;
        let resource = cfg.resource;
        s.emit(What::BeliefStarted {
            client: self.id,
            resource,
            rows: cfg.rows,
            // The services' instants are known once their logs are read; filled in then.
            grants: holds
                .iter()
                .map(|h| GrantRef {
                    service: h.service,
                    token: h.token,
                    instant: 0,
                })
                .collect(),
        });
        let token = holds.first().map(|h| Token {
            service: h.service,
            value: h.token,
        });
        let lease_deadline = self.lease_deadline(cfg, &holds);
        let end = |this: &Self, reason: BeliefEnd| {
            s.emit(What::BeliefEnded {
                client: this.id,
                resource,
                reason,
            });
            this.release(&holds);
        };
        let expired = |d: Option<Instant>| d.is_some_and(|d| Instant::now() >= d);
        if expired(lease_deadline) {
            end(self, BeliefEnd::LeaseExpiredLocally);
            return true;
        }
        self.fly(Peer::Resource, true);
        let (accepted, values) = s.access(self.id, None, token);
        self.fly(Peer::Resource, false);
        if !accepted {
            end(self, BeliefEnd::Rejected);
            return true;
        }
        let work_end = Instant::now() + Duration::from_micros(cfg.work * s.scale);
        let wake = lease_deadline.map_or(work_end, |d| d.min(work_end));
        if !self.sleep_until(wake) {
            return false;
        }
        if expired(lease_deadline) {
            end(self, BeliefEnd::LeaseExpiredLocally);
            return true;
        }
        let written: Values = values.iter().map(|v| v.wrapping_add(1)).collect();
        self.fly(Peer::Resource, true);
        let (accepted, _) = s.access(self.id, Some(&written), token);
        self.fly(Peer::Resource, false);
        end(
            self,
            if accepted {
                BeliefEnd::Released
            } else {
                BeliefEnd::Rejected
            },
        );
        true
    }
}

/// The random stream the simulator draws from under this label for this seed.
fn stream(seed: u64, label: &str) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stream = label.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    rng.set_stream(stream);
    rng
}

/// The recording's first line: what it was recorded from, and that it cannot be repeated.
fn header(recording: &Recording, plan: &Plan) -> String {
    let mut text = format!(
        "Recorded from real services: {} etcd process(es), {}. Real time makes every recording different; seed {} drove the clients' schedule.",
        recording.world.services.len(),
        recording.source.products(),
        recording.seed
    );
    for note in &plan.notes {
        text.push_str(&format!("\n  note: {note}"));
    }
    text
}

/// Plays the scenario on real etcd processes and returns the judged-ready recording. Every
/// process is stopped before this returns, whatever happens.
fn record(scenario: &Scenario, plan: &Plan, seed: u64) -> Result<Recording, String> {
    let version = etcd::version()?;
    let world = Arc::new(World::compile(scenario));
    let dir = etcd::TempDir::new("record")?;
    let mut services: Vec<Etcd> = Vec::new();
    for (i, _) in world.services.iter().enumerate() {
        services.push(Etcd::start(&format!("s{i}"), dir.path())?);
    }
    let addrs: Vec<SocketAddr> = services.iter().map(|e| e.client).collect();
    let watches: Vec<etcd::Watch> = addrs
        .iter()
        .map(|a| etcd::Watch::start(*a))
        .collect::<Result<_, _>>()?;
    let t0 = Instant::now() + START_MARGIN;
    let scale = plan.scale;
    let shared = Shared {
        world: world.clone(),
        t0,
        scale,
        deadline: t0 + Duration::from_micros(world.duration * scale),
        addrs: addrs.clone(),
        events: Mutex::new(Vec::new()),
        resources: world
            .resources
            .iter()
            .map(|r| {
                Mutex::new(ResourceState {
                    values: vec![r.initial; r.rows.len()],
                    highest: None,
                })
            })
            .collect(),
        leases: Mutex::new(BTreeMap::new()),
        unlocks: Mutex::new(Vec::new()),
        granted: Mutex::new(BTreeMap::new()),
        failure: Mutex::new(None),
    };
    // Faults happen on the scenario's schedule: outages stop and resume the real process.
    // (when, event, the process to stop (true) or continue (false)).
    type Fault = (Micros, What, Option<(u32, bool)>);
    let mut faults: Vec<Fault> = Vec::new();
    for (s, svc) in world.services.iter().enumerate() {
        for (start, end) in &svc.outages {
            let s = s as u32;
            faults.push((
                *start,
                What::OutageStarted { service: s },
                Some((services[s as usize].pid(), true)),
            ));
            faults.push((
                *end,
                What::OutageEnded { service: s },
                Some((services[s as usize].pid(), false)),
            ));
        }
    }
    for (c, client) in world.clients.iter().enumerate() {
        for (start, end) in &client.pauses {
            let c = c as u32;
            faults.push((*start, What::PauseStarted { client: c }, None));
            faults.push((*end, What::PauseEnded { client: c }, None));
        }
    }
    faults.sort_by_key(|f| f.0);
    std::thread::scope(|scope| {
        let shared = &shared;
        for (c, client) in world.clients.iter().enumerate() {
            let rng = stream(seed, &format!("workload/{}", client.name));
            let network = Mutex::new(stream(seed, &format!("network/client/{}", client.name)));
            scope.spawn(move || {
                Client {
                    shared,
                    id: c as u32,
                    rng,
                    network,
                }
                .run()
            });
        }
        for (at, what, signal) in faults {
            let when = shared.real(at);
            if when >= shared.deadline {
                break;
            }
            let now = Instant::now();
            if when > now {
                std::thread::sleep(when - now);
            }
            if let Some((pid, stop)) = signal {
                etcd::signal(pid, stop);
            }
            shared.events.lock().unwrap().push((when, what));
        }
    });
    for e in &mut services {
        etcd::signal(e.pid(), false);
    }
    if let Some(message) = shared.failure.lock().unwrap().take() {
        return Err(format!("the recording failed: {message}"));
    }
    let mut revisions = Vec::new();
    let mut logs = Vec::new();
    for (addr, watch) in addrs.iter().zip(watches) {
        let revision = etcd::revision(*addr)?;
        revisions.push(revision);
        logs.push(watch.finish(revision));
    }
    drop(services);
    drop(dir);
    let (events, instants) = convert(&world, &shared, logs)?;
    let world = Arc::try_unwrap(world).unwrap_or_else(|w| (*w).clone());
    let source = Source {
        deterministic: false,
        notes: plan.notes.clone(),
        scale: plan.scale,
        services: world
            .services
            .iter()
            .zip(revisions.iter().zip(instants))
            .map(|(s, (&last_revision, instant_revisions))| ServiceSource {
                name: s.name.clone(),
                product: version.clone(),
                last_revision,
                instant_revisions,
            })
            .collect(),
        scenario: scenario.clone(),
    };
    Ok(Recording {
        world,
        events,
        seed,
        source,
    })
}

/// Turns each service's watched changes into its log (in etcd's revision order), joins the
/// clients' and the resource's events, and sorts everything by time.
/// Also returns, for each service, the etcd revision of each of its instants in the trace.
fn convert(
    world: &World,
    shared: &Shared,
    logs: Vec<Vec<etcd::Change>>,
) -> Result<(Vec<Event>, Vec<Vec<u64>>), String> {
    let leases = shared.leases.lock().unwrap();
    let unlocks = shared.unlocks.lock().unwrap();
    let granted = shared.granted.lock().unwrap();
    let mut events: Vec<Event> = Vec::new();
    // (service, token) → (instant, at) of the grant in the service's log.
    let mut grant_at: BTreeMap<(u32, u64), (u64, Micros)> = BTreeMap::new();
    let mut instants: Vec<Vec<u64>> = Vec::new();
    for (s, changes) in logs.iter().enumerate() {
        let s = s as u32;
        let lease_us = world.services[s as usize].lease;
        // Ops in the service's order: (revision, real time, op, resource).
        let mut ops: Vec<(u64, Instant, ServiceOp, u32)> = Vec::new();
        // Each lock's keys by creation revision: the first is the holder (etcd's recipe).
        let mut keys: BTreeMap<u32, BTreeMap<u64, (Vec<u8>, u32)>> = BTreeMap::new();
        let mut matched_unlocks: Vec<bool> = vec![false; unlocks.len()];
        for ch in changes {
            let Some(slash) = ch.key.iter().rposition(|b| *b == b'/') else {
                continue;
            };
            let name = String::from_utf8_lossy(&ch.key[..slash]).into_owned();
            let Some(resource) = world.resources.iter().position(|r| r.name == name) else {
                continue;
            };
            let resource = resource as u32;
            let lock = keys.entry(resource).or_default();
            let holder = |lock: &BTreeMap<u64, (Vec<u8>, u32)>| {
                lock.iter().next().map(|(t, (_, c))| (*t, *c))
            };
            if !ch.delete {
                let lease = u64::from_str_radix(&String::from_utf8_lossy(&ch.key[slash + 1..]), 16)
                    .unwrap_or(ch.lease);
                let Some(&client) = leases.get(&(s, lease)) else {
                    continue;
                };
                let op = match holder(lock) {
                    None => ServiceOp::Granted {
                        client,
                        token: ch.create_revision,
                        lease_until: None,
                    },
                    Some((_, h)) => ServiceOp::Queued {
                        client,
                        behind: Some(h),
                    },
                };
                let seen = granted
                    .get(&(s, ch.create_revision))
                    .map_or(ch.seen, |g| (*g).min(ch.seen));
                ops.push((
                    ch.revision,
                    if matches!(op, ServiceOp::Granted { .. }) {
                        seen
                    } else {
                        ch.seen
                    },
                    op,
                    resource,
                ));
                lock.insert(ch.create_revision, (ch.key.clone(), client));
            } else {
                let Some((&token, (_, client))) = lock.iter().find(|(_, (k, _))| *k == ch.key)
                else {
                    continue;
                };
                let client = *client;
                let was_holder = holder(lock).map(|(t, _)| t) == Some(token);
                lock.remove(&token);
                if was_holder {
                    let unlock = unlocks.iter().position(|u| {
                        u.deleted && u.service == s && u.key == ch.key && u.revision == ch.revision
                    });
                    let (op, seen) = match unlock {
                        Some(u) => {
                            matched_unlocks[u] = true;
                            (
                                ServiceOp::Released { client, token },
                                unlocks[u].when.min(ch.seen),
                            )
                        }
                        None => (ServiceOp::Expired { client, token }, ch.seen),
                    };
                    ops.push((ch.revision, seen, op, resource));
                    if let Some((next, c)) = holder(lock) {
                        let seen = granted
                            .get(&(s, next))
                            .map_or(ch.seen, |g| (*g).min(ch.seen));
                        ops.push((
                            ch.revision,
                            seen,
                            ServiceOp::Granted {
                                client: c,
                                token: next,
                                lease_until: None,
                            },
                            resource,
                        ));
                    }
                } else {
                    ops.push((
                        ch.revision,
                        ch.seen,
                        ServiceOp::Cancelled { client },
                        resource,
                    ));
                }
            }
        }
        // An unlock of a key etcd had already deleted (its lease ended) changed nothing: the
        // service ignored a release from a client that no longer held the lock.
        for (u, unlock) in unlocks.iter().enumerate() {
            let Unlock {
                service: us,
                key,
                revision,
                when,
                ..
            } = unlock;
            if *us != s || matched_unlocks[u] {
                continue;
            }
            let Some(slash) = key.iter().rposition(|b| *b == b'/') else {
                continue;
            };
            let name = String::from_utf8_lossy(&key[..slash]).into_owned();
            let Some(resource) = world.resources.iter().position(|r| r.name == name) else {
                continue;
            };
            let create = changes
                .iter()
                .find(|c| !c.delete && c.key == *key)
                .map(|c| (c.create_revision, c.lease));
            let Some((token, lease)) = create else {
                continue;
            };
            let Some(&client) = leases.get(&(s, lease)) else {
                continue;
            };
            ops.push((
                *revision,
                *when,
                ServiceOp::ReleaseIgnored { client, token },
                resource as u32,
            ));
        }
        ops.sort_by_key(|o| o.0);
        instants.push(ops.iter().map(|o| o.0).collect::<Vec<u64>>());
        let mut last: Micros = 0;
        for (i, (_, seen, mut op, resource)) in ops.into_iter().enumerate() {
            // The service's own order is etcd's revisions; its clock must not run backwards.
            let at = shared.micros(seen).max(last);
            last = at;
            let instant = i as u64 + 1;
            if let ServiceOp::Granted {
                token, lease_until, ..
            } = &mut op
            {
                *lease_until = lease_us.map(|l| at + l);
                grant_at.insert((s, *token), (instant, at));
            }
            events.push(Event {
                at,
                what: What::Service {
                    service: s,
                    instant,
                    resource,
                    op,
                },
            });
        }
    }
    for (seen, mut what) in shared.events.lock().unwrap().drain(..) {
        let mut at = shared.micros(seen);
        if let What::BeliefStarted { grants, .. } = &mut what {
            for g in grants.iter_mut() {
                let (instant, granted_at) = grant_at
                    .get(&(g.service, g.token))
                    .copied()
                    .ok_or_else(|| {
                        format!(
                            "the watch of service \"{}\" did not report the grant of token {}",
                            world.services[g.service as usize].name, g.token
                        )
                    })?;
                g.instant = instant;
                // A client learns of a grant after the service makes it.
                at = at.max(granted_at);
            }
        }
        events.push(Event { at, what });
    }
    // The recording covers the scenario's duration; what the clients did while stopping is
    // not part of it.
    events.retain(|e| e.at <= world.duration);
    events.sort_by_key(|e| e.at);
    for (s, revisions) in instants.iter_mut().enumerate() {
        let kept = events
            .iter()
            .filter(|e| matches!(e.what, What::Service { service, .. } if service as usize == s))
            .count();
        revisions.truncate(kept);
    }
    Ok((events, instants))
}

/// `--compare`: for each file, N recordings and N simulations over the same seeds, and how
/// often each verdict class came out in each.
fn compare(a: &Args, out: &mut dyn Write) -> Result<ExitCode, String> {
    let version = etcd::version()?;
    let mut rows = Vec::new();
    for path in &a.files {
        let (scenario, text) = load(path)?;
        let plan = Plan::of(&scenario, &text).map_err(|e| prefixed(path, e))?;
        let mut real = Classes::default();
        let mut model = Classes::default();
        for k in 0..a.runs {
            let seed = scenario.seed + k;
            let recording = record(&scenario, &plan, seed).map_err(|e| format!("{path}: {e}"))?;
            real.add(&monitor::verdict(&recording));
            // Runs take real time: say how far along the comparison is.
            eprintln!("recorded {path} with seed {seed} ({} of {})", k + 1, a.runs);
            let run = lockstep::run(&scenario, seed).map_err(|e| e.to_string())?;
            model.add(&monitor::verdict(&run));
        }
        let file = std::path::Path::new(path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.clone());
        rows.push((file, real, model));
    }
    let _ = writeln!(
        out,
        "Each cell: runs recorded on real etcd ({version}) / runs simulated, over the same {} seed(s) of each scenario, in which the verdict says so.\n",
        a.runs
    );
    let _ = writeln!(
        out,
        "| scenario | exclusion broken | lost updates | deadlock | rejected accesses |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (file, real, model) in &rows {
        let cell = |r: u64, m: u64| {
            let mark = if (r == 0) != (m == 0) { " ≠" } else { "" };
            format!("{r} / {m}{mark}")
        };
        let _ = writeln!(
            out,
            "| `{file}` | {} | {} | {} | {} |",
            cell(real.broken, model.broken),
            cell(real.lost, model.lost),
            cell(real.deadlock, model.deadlock),
            cell(real.rejected, model.rejected),
        );
    }
    let _ = writeln!(
        out,
        "\n≠ marks a class that one side showed and the other never did."
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Default)]
struct Classes {
    broken: u64,
    lost: u64,
    deadlock: u64,
    rejected: u64,
}

impl Classes {
    fn add(&mut self, v: &monitor::Verdict) {
        self.broken += u64::from(v.exclusion == monitor::Exclusion::Broken);
        self.lost += u64::from(v.lost_updates > 0);
        self.deadlock += u64::from(v.deadlock);
        self.rejected += u64::from(v.rejected_writes + v.rejected_reads > 0);
    }
}
