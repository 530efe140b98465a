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
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockstep::monitor;
use lockstep::recording::{Recording, ServiceSource, Source};
use lockstep::scenario::{Fencing, Protocol, Scenario};
use lockstep::trace::{AbortReason, BeliefEnd, Event, GrantRef, Token, Values, What};
use lockstep::world::{Majority, Micros, ProtocolConfig, World};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "backend.rs"]
mod backend;
#[path = "etcd.rs"]
mod etcd;
#[path = "process.rs"]
mod process;
#[path = "redis.rs"]
mod redis;
#[path = "zookeeper.rs"]
mod zookeeper;

use backend::{Answer, Ask, Backend, Check, Grant, Logged, Places, Product, ServiceLog};

const USAGE_LINE: &str = "usage: lockstep record FILE [--on etcd|redis|zookeeper] [--edit EDIT]... [--seed N] [--json] [--no-trace] [--out TRACE.json]\n       lockstep record FILE... --compare [--on etcd|redis|zookeeper] [--runs N]";

/// The products a scenario can be recorded on, by the name `--on` takes. A new product is one
/// more entry here and a file of its own implementing [`Product`].
const PRODUCTS: &[&dyn Product] = &[&etcd::Etcd, &redis::Redis, &zookeeper::ZooKeeperProduct];

/// The product `--on` names, or the default for the scenario: Redis for a scenario with a
/// majority client (Redlock is Redis' recipe), etcd otherwise.
fn product_for(on: Option<&str>, scenario: &Scenario) -> Result<&'static dyn Product, String> {
    let name = match on {
        Some(name) => name,
        None if scenario
            .clients
            .iter()
            .any(|c| matches!(c.protocol, Protocol::Majority { .. })) =>
        {
            "redis"
        }
        None => "etcd",
    };
    PRODUCTS
        .iter()
        .find(|p| p.name() == name)
        .copied()
        .ok_or_else(|| {
            let names: Vec<&str> = PRODUCTS.iter().map(|p| p.name()).collect();
            format!(
                "--on: \"{name}\" is not a product the recorder starts ({})",
                names.join(", ")
            )
        })
}

/// The longest scenario recorded: runs take their real time, times the scale.
const REAL_RUN_MAX: Duration = Duration::from_secs(60);

/// The largest factor real time is stretched by, so that leases are whole seconds.
const SCALE_MAX: u64 = 4;

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
    on: Option<String>,
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
        on: None,
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
            "--on" => a.on = Some(value()?),
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
                "record --compare takes only --on and --runs (the seeds are each file's, counted up)\n{USAGE_LINE}"
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
    let product = product_for(a.on.as_deref(), &scenario)?;
    let plan = Plan::of(&scenario, &text, product).map_err(|errors| prefixed(path, errors))?;
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

/// What the recorder will do with a scenario: the product, the time scale, and what it
/// approximates.
struct Plan {
    product: &'static dyn Product,
    /// Real time runs this many times slower than the scenario's, so that every lease is a
    /// whole number of the product's units (etcd's seconds).
    scale: u64,
    /// What the recording does differently from the model, said in the output.
    notes: Vec<String>,
}

impl Plan {
    /// Checks that every feature the scenario uses can be played on the product's real
    /// services; each one that cannot is an error naming the feature and its line.
    fn of(
        scenario: &Scenario,
        text: &str,
        product: &'static dyn Product,
    ) -> Result<Plan, Vec<String>> {
        let places = Places { text };
        let mut check = Check::default();
        for (i, _) in scenario.partitions.iter().enumerate() {
            check.refuse(
                places.nth("[[partitions]]", i, "partitions").0,
                "a partition between regions",
                "the recorder runs every process on one machine's loopback",
            );
        }
        for (i, _) in scenario.migrations.iter().enumerate() {
            check.refuse(
                places.nth("[[migrations]]", i, "migrations").0,
                "a migration",
                &format!(
                    "{} has no way to hand a lock to another service",
                    product.name()
                ),
            );
        }
        check.notes.push(
            "the scenario's latencies are waited out by the clients, on top of loopback's".into(),
        );
        check.notes.push(
            "the resource is a table inside the recorder, which applies the scenario's fencing rule"
                .into(),
        );
        product.check(scenario, &places, &mut check);
        let scale = product.scale(scenario, SCALE_MAX).unwrap_or(1);
        let real = Duration::from_millis(scenario.duration_ms.saturating_mul(scale));
        if real > REAL_RUN_MAX {
            let (at, _) = places.line_of(&["duration_ms"], 0, "duration_ms");
            check.refuse(
                at,
                &format!("duration_ms = {}", scenario.duration_ms),
                &format!(
                    "a recording takes real time, at most {} s",
                    REAL_RUN_MAX.as_secs()
                ),
            );
        }
        if !check.errors.is_empty() {
            return Err(check.errors);
        }
        let mut notes = check.notes;
        if scale > 1 {
            notes.push(format!("real time runs {scale} times slower than the scenario's, so that leases are whole seconds; times are shown in the scenario's"));
        }
        Ok(Plan {
            product,
            scale,
            notes,
        })
    }
}

/// What the client threads share while they run.
struct Shared<'b> {
    world: Arc<World>,
    backend: &'b dyn Backend,
    t0: Instant,
    scale: u64,
    deadline: Instant,
    /// Client, resource and fault events, with their real times.
    events: Mutex<Vec<(Instant, What)>>,
    resources: Vec<Mutex<ResourceState>>,
    /// A failed call ends the recording with this message.
    failure: Mutex<Option<String>>,
}

struct ResourceState {
    values: Vec<i64>,
    highest: Option<u64>,
}

impl Shared<'_> {
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

/// One lock a client holds: the grant, and when it asked for it.
struct Hold {
    sent: Instant,
    grant: Grant,
}

/// How an attempt at the locks ended.
enum Attempt {
    Held(Vec<Hold>, Option<Instant>),
    /// Given up for this reason; the client retries after its backoff if it may.
    Aborted(AbortReason),
    /// The recording's end came first.
    Over,
}

/// What a client's calls need, shared with the threads that make its parallel requests.
#[derive(Clone)]
struct Caller<'s, 'b> {
    shared: &'s Shared<'b>,
    id: u32,
    /// The network's jitter draws (several of the client's calls may be in flight at once).
    network: Arc<Mutex<ChaCha8Rng>>,
}

/// Where a client's message goes.
#[derive(Clone, Copy)]
enum Peer {
    Service(u32),
    Resource,
}

impl Caller<'_, '_> {
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

    /// Sleeps until `until`, and on through any pause the client is in when it wakes (a real
    /// stall: nothing the client does happens while it is paused). False once the recording's
    /// end has come.
    fn sleep_until(&self, until: Instant) -> bool {
        let s = self.shared;
        let mut until = until.min(s.deadline);
        // Each turn ends a pause the client was in; a scenario has a bounded number of them.
        for _ in 0..=lockstep::scenario::limits::WINDOWS_MAX + 1 {
            let now = Instant::now();
            if now < until {
                std::thread::sleep(until - now);
            }
            // Whether the client is paused is asked of the moment it was due, not of when the
            // thread woke: a thread that wakes late must not find itself in a pause that began
            // after its step was due.
            let at = s.micros(until);
            match s.world.paused_until(self.id, at) {
                Some(end) => until = s.real(end).min(s.deadline),
                None => break,
            }
            if Instant::now() >= s.deadline {
                break;
            }
        }
        Instant::now() < s.deadline
    }

    /// Waits out a pause the client is in now (a reply that arrives during a pause is acted on
    /// when it ends).
    fn stall(&self) -> bool {
        self.sleep_until(Instant::now())
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

    /// One lock request, its flights waited out: `Err(Over)` once the recording's end has come
    /// or a call failed (the failure is kept for the recording's error).
    fn ask(
        &self,
        cfg: &lockstep::world::ClientConfig,
        service: u32,
        sent: Instant,
        try_only: bool,
    ) -> Result<Answer, Attempt> {
        let s = self.shared;
        self.fly(Peer::Service(service), true);
        // A service that does not answer (an outage) times the attempt out from the moment it
        // was sent, whichever call is waiting.
        let give_up = match cfg.acquire_timeout {
            Some(t) => s.deadline.min(sent + Duration::from_micros(t * s.scale)),
            None => s.deadline,
        };
        let name = &s.world.resources[cfg.resource as usize].name;
        let answer = s.backend.lock(&Ask {
            client: self.id,
            service,
            resource: name,
            try_only,
            give_up,
            deadline: s.deadline,
        });
        match answer {
            Ok(answer) => {
                if Instant::now() >= s.deadline {
                    return Err(Attempt::Over);
                }
                if !matches!(answer, Answer::Unanswered) {
                    self.fly(Peer::Service(service), false);
                }
                Ok(answer)
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

    /// Lets go of one grant: the request's flight, then the product's unlock.
    fn release_one(&self, grant: &Grant) {
        let s = self.shared;
        self.fly(Peer::Service(grant.service), true);
        if let Err(e) = s.backend.unlock(self.id, grant, CALL_TIMEOUT) {
            if Instant::now() < s.deadline {
                s.fail(format!(
                    "service \"{}\": {e}",
                    s.world.services[grant.service as usize].name
                ));
            }
        }
    }
}

/// A client, played in real time by a thread of its own.
struct Client<'s, 'b, 'scope> {
    caller: Caller<'s, 'b>,
    rng: ChaCha8Rng,
    /// Where the requests of a majority client run, each on a thread of its own that may
    /// outlive the attempt (a late grant is let go of there).
    scope: &'scope std::thread::Scope<'scope, 's>,
}

/// The answers of a majority attempt that are still to be counted; closed once the attempt is
/// decided, after which a late grant is released by the thread that got it.
struct Ballot {
    open: bool,
}

impl<'s, 'b: 's, 'scope> Client<'s, 'b, 'scope> {
    fn shared(&self) -> &'s Shared<'b> {
        self.caller.shared
    }

    fn id(&self) -> u32 {
        self.caller.id
    }

    fn sleep_until(&self, until: Instant) -> bool {
        self.caller.sleep_until(until)
    }

    fn stall(&self) -> bool {
        self.caller.stall()
    }

    fn draw(&mut self, max: Micros) -> Micros {
        if max == 0 {
            0
        } else {
            self.rng.random_range(0..=max)
        }
    }

    fn run(mut self) {
        let s = self.shared();
        let cfg = s.world.clients[self.id() as usize].clone();
        let mut next = s.real(cfg.start + self.draw(cfg.jitter));
        let mut ops = 0u32;
        loop {
            if !self.sleep_until(next) {
                return;
            }
            let at = s.micros(Instant::now());
            if cfg.max_operations.is_some_and(|m| ops >= m) || at >= cfg.stop {
                s.emit(What::ClientStopped { client: self.id() });
                return;
            }
            ops += 1;
            s.emit(What::OpStarted {
                client: self.id(),
                op: ops,
            });
            let mut retries = 0;
            let holds = loop {
                match self.acquire(&cfg) {
                    Attempt::Held(holds, valid_until) => break Some((holds, valid_until)),
                    Attempt::Over => return,
                    Attempt::Aborted(reason) => {
                        let retry = retries < cfg.max_retries;
                        s.emit(What::AttemptAborted {
                            client: self.id(),
                            reason,
                            retry,
                        });
                        if !retry {
                            s.emit(What::GaveUp { client: self.id() });
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
            if let Some((holds, valid_until)) = holds {
                if !self.critical_section(&cfg, holds, valid_until) {
                    return;
                }
            }
            let think = cfg.period + self.draw(cfg.jitter);
            next = Instant::now() + Duration::from_micros(think * s.scale);
        }
    }

    /// Asks for the protocol's locks: in order, all at once, or by a majority.
    fn acquire(&mut self, cfg: &lockstep::world::ClientConfig) -> Attempt {
        let (services, ordered, majority) = match &cfg.protocol {
            ProtocolConfig::Locks {
                services,
                ordered,
                majority,
                ..
            } => (services.clone(), *ordered, *majority),
            _ => (Vec::new(), false, None),
        };
        if let Some(majority) = majority {
            return self.acquire_majority(cfg, &services, majority);
        }
        let s = self.shared();
        let caller = &self.caller;
        let mut holds: Vec<Hold> = Vec::new();
        let mut outcome = None;
        let mut take = |service: u32, answer: Result<Answer, Attempt>, sent: Instant| match answer {
            Ok(Answer::Granted(grant)) => {
                holds.push(Hold { sent, grant });
                true
            }
            Ok(Answer::Refused | Answer::Unanswered) => {
                let _ = service;
                if outcome.is_none() {
                    outcome = Some(Attempt::Aborted(AbortReason::Timeout));
                }
                false
            }
            Err(o) => {
                if !matches!(outcome, Some(Attempt::Over)) {
                    outcome = Some(o);
                }
                false
            }
        };
        if ordered {
            for &service in &services {
                let sent = Instant::now();
                s.emit(What::AcquireSent {
                    client: self.id(),
                    service,
                });
                if !take(service, caller.ask(cfg, service, sent, false), sent) {
                    break;
                }
            }
        } else {
            let sent = Instant::now();
            let answers: Vec<Result<Answer, Attempt>> = std::thread::scope(|scope| {
                let handles: Vec<_> = services
                    .iter()
                    .map(|&service| {
                        s.emit(What::AcquireSent {
                            client: caller.id,
                            service,
                        });
                        scope.spawn(move || caller.ask(cfg, service, sent, false))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(Err(Attempt::Over)))
                    .collect()
            });
            for (&service, answer) in services.iter().zip(answers) {
                take(service, answer, sent);
            }
        }
        match outcome {
            None => {
                if !self.stall() {
                    return Attempt::Over;
                }
                Attempt::Held(holds, None)
            }
            Some(o) => {
                self.release(&holds);
                o
            }
        }
    }

    /// A majority client's attempt (Redlock), counted as the model's `count_votes` counts it:
    /// every service asked at once; with a quorum of grants while the lock is still valid it
    /// holds; once too few requests are left for a quorum, or the validity ends first, it lets
    /// go of what it got. A grant that comes back after the attempt was decided is let go of
    /// at once, as a stale grant.
    fn acquire_majority(
        &mut self,
        cfg: &lockstep::world::ClientConfig,
        services: &[u32],
        majority: Majority,
    ) -> Attempt {
        let s = self.shared();
        let id = self.id();
        let sent = Instant::now();
        let valid_until = majority
            .validity
            .map(|v| sent + Duration::from_micros(v * s.scale));
        let ballot = Arc::new(Mutex::new(Ballot { open: true }));
        let (tx, rx) = mpsc::channel::<(usize, Result<Answer, Attempt>)>();
        for (i, &service) in services.iter().enumerate() {
            s.emit(What::AcquireSent {
                client: id,
                service,
            });
            let caller = self.caller.clone();
            let ballot = ballot.clone();
            let tx = tx.clone();
            let cfg = cfg.clone();
            self.scope.spawn(move || {
                let answer = caller.ask(&cfg, service, sent, true);
                let b = ballot.lock().unwrap();
                if b.open {
                    let _ = tx.send((i, answer));
                    return;
                }
                drop(b);
                // A paused client acts on a late grant when its pause ends, as on any message.
                if let Ok(Answer::Granted(grant)) = answer {
                    caller.stall();
                    caller.shared.emit(What::StaleGrantReleased {
                        client: caller.id,
                        service,
                        token: grant.token,
                    });
                    caller.release_one(&grant);
                }
            });
        }
        drop(tx);
        #[derive(PartialEq)]
        enum Vote {
            Open(Option<Instant>),
            Granted,
            No,
        }
        let timeout_of = || {
            cfg.acquire_timeout
                .map(|t| sent + Duration::from_micros(t * s.scale))
        };
        let mut votes: Vec<Vote> = services.iter().map(|_| Vote::Open(timeout_of())).collect();
        let mut grants: Vec<Option<Grant>> = services.iter().map(|_| None).collect();
        // Closes the ballot and takes what came in meanwhile: after this, a late grant is the
        // requesting thread's to let go of.
        let close = |grants: &mut Vec<Option<Grant>>| {
            let mut b = ballot.lock().unwrap();
            b.open = false;
            while let Ok((i, answer)) = rx.try_recv() {
                if let Ok(Answer::Granted(g)) = answer {
                    grants[i] = Some(g);
                }
            }
        };
        let quorum = majority.quorum;
        // Each turn counts one answer or one timeout: at most one of each per service, the
        // validity's end and the recording's.
        for _ in 0..2 * services.len() + 3 {
            let granted = votes.iter().filter(|v| **v == Vote::Granted).count() as u32;
            let open = votes.iter().filter(|v| matches!(v, Vote::Open(_))).count() as u32;
            if granted >= quorum {
                close(&mut grants);
                // Answers that arrive during a pause are counted when it ends.
                if !self.stall() {
                    return Attempt::Over;
                }
                let now = Instant::now();
                type Numbered = Vec<(usize, Grant)>;
                let (counted, late): (Numbered, Numbered) = grants
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(i, g)| g.take().map(|g| (i, g)))
                    .partition(|(i, _)| votes[*i] == Vote::Granted);
                for (_, g) in &late {
                    s.emit(What::StaleGrantReleased {
                        client: id,
                        service: g.service,
                        token: g.token,
                    });
                }
                let late: Vec<Grant> = late.into_iter().map(|(_, g)| g).collect();
                self.release_async(late);
                let counted: Vec<Grant> = counted.into_iter().map(|(_, g)| g).collect();
                if valid_until.is_some_and(|until| now >= until) {
                    s.emit(What::ValiditySpent {
                        client: id,
                        granted,
                        acquiring_us: s.micros(now).saturating_sub(s.micros(sent)),
                    });
                    self.release_async(counted);
                    return Attempt::Aborted(AbortReason::ValiditySpent);
                }
                s.emit(What::QuorumReached {
                    client: id,
                    granted,
                    quorum,
                    valid_until: valid_until.map(|u| s.micros(u)),
                });
                let holds = counted
                    .into_iter()
                    .map(|grant| Hold { sent, grant })
                    .collect();
                return Attempt::Held(holds, valid_until);
            }
            if granted + open < quorum {
                close(&mut grants);
                if !self.stall() {
                    return Attempt::Over;
                }
                s.emit(What::QuorumMissed {
                    client: id,
                    granted,
                    quorum,
                });
                self.release_async(grants.into_iter().flatten().collect());
                return Attempt::Aborted(AbortReason::QuorumMissed);
            }
            // Wait for the next answer, or the next moment something times out.
            let next = votes
                .iter()
                .filter_map(|v| match v {
                    Vote::Open(t) => *t,
                    _ => None,
                })
                .chain(valid_until)
                .chain([s.deadline])
                .min()
                .unwrap_or(s.deadline);
            let wait = next.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok((i, Ok(Answer::Granted(g)))) => {
                    votes[i] = Vote::Granted;
                    grants[i] = Some(g);
                }
                Ok((i, Ok(Answer::Refused))) => votes[i] = Vote::No,
                // No answer can come (a service that is down): the request stays open until
                // its timeout, as a lost message does in the model.
                Ok((_, Ok(Answer::Unanswered))) => {}
                Ok((_, Err(_))) => {
                    close(&mut grants);
                    self.release_async(grants.into_iter().flatten().collect());
                    return Attempt::Over;
                }
                Err(e) => {
                    // Every request has answered: nothing can come before the next timeout.
                    if e == mpsc::RecvTimeoutError::Disconnected {
                        std::thread::sleep(wait);
                    }
                    let now = Instant::now();
                    if now >= s.deadline {
                        close(&mut grants);
                        return Attempt::Over;
                    }
                    if valid_until.is_some_and(|until| now >= until) {
                        close(&mut grants);
                        if !self.stall() {
                            return Attempt::Over;
                        }
                        let granted = votes.iter().filter(|v| **v == Vote::Granted).count() as u32;
                        s.emit(What::QuorumMissed {
                            client: id,
                            granted,
                            quorum,
                        });
                        self.release_async(grants.into_iter().flatten().collect());
                        return Attempt::Aborted(AbortReason::QuorumMissed);
                    }
                    for v in &mut votes {
                        if matches!(v, Vote::Open(Some(t)) if *t <= now) {
                            *v = Vote::No;
                        }
                    }
                }
            }
        }
        // Not reached: every turn above settles an answer or a timeout, and there are no more
        // of those than turns. Should it be, the attempt is given up as the model gives up one
        // short of its quorum.
        close(&mut grants);
        let granted = votes.iter().filter(|v| **v == Vote::Granted).count() as u32;
        s.emit(What::QuorumMissed {
            client: id,
            granted,
            quorum,
        });
        self.release_async(grants.into_iter().flatten().collect());
        Attempt::Aborted(AbortReason::QuorumMissed)
    }

    /// Lets go of grants all at once without waiting for the answers, as the model's client
    /// sends its releases.
    fn release_async(&self, grants: Vec<Grant>) {
        for grant in grants {
            let caller = self.caller.clone();
            self.scope.spawn(move || caller.release_one(&grant));
        }
    }

    /// Lets go of the holds: a majority client all at once, others last taken first.
    fn release(&self, holds: &[Hold]) {
        let majority = matches!(
            self.shared().world.clients[self.id() as usize].protocol,
            ProtocolConfig::Locks {
                majority: Some(_),
                ..
            }
        );
        if majority {
            self.release_async(holds.iter().map(|h| h.grant.clone()).collect());
            return;
        }
        for h in holds.iter().rev() {
            self.caller.release_one(&h.grant);
        }
    }

    /// For a lease-aware client: when the first of its leases may end, less its margin,
    /// counted from when it asked (a safe bound on when the service granted); for a majority
    /// client, the end of its lock's validity, less the margin.
    fn lease_deadline(
        &self,
        cfg: &lockstep::world::ClientConfig,
        holds: &[Hold],
        valid_until: Option<Instant>,
    ) -> Option<Instant> {
        if !cfg.lease_aware {
            return None;
        }
        let s = self.shared();
        let margin = Duration::from_micros(cfg.lease_margin * s.scale);
        if let Some(until) = valid_until {
            return Some(until.checked_sub(margin).unwrap_or(until));
        }
        holds
            .iter()
            .filter_map(|h| {
                s.world.services[h.grant.service as usize].lease.map(|l| {
                    let l = Duration::from_micros(l.saturating_sub(cfg.lease_margin) * s.scale);
                    h.sent + l
                })
            })
            .min()
    }

    /// Read, work, write, let go. False once the recording's end has come.
    fn critical_section(
        &mut self,
        cfg: &lockstep::world::ClientConfig,
        holds: Vec<Hold>,
        valid_until: Option<Instant>,
    ) -> bool {
        let s = self.shared();
        let id = self.id();
        let resource = cfg.resource;
        s.emit(What::BeliefStarted {
            client: id,
            resource,
            rows: cfg.rows,
            // The services' instants are known once their logs are read; filled in then.
            grants: holds
                .iter()
                .map(|h| GrantRef {
                    service: h.grant.service,
                    token: h.grant.token,
                    instant: 0,
                })
                .collect(),
        });
        let token = holds.first().map(|h| Token {
            service: h.grant.service,
            value: h.grant.token,
        });
        let lease_deadline = self.lease_deadline(cfg, &holds, valid_until);
        let end = |this: &Self, reason: BeliefEnd| {
            s.emit(What::BeliefEnded {
                client: id,
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
        self.caller.fly(Peer::Resource, true);
        let (accepted, values) = s.access(id, None, token);
        self.caller.fly(Peer::Resource, false);
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
        self.caller.fly(Peer::Resource, true);
        let (accepted, _) = s.access(id, Some(&written), token);
        self.caller.fly(Peer::Resource, false);
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
    rng.set_stream(lockstep::hash::fnv1a64(label.as_bytes()));
    rng
}

/// The recording's first line: what it was recorded from, and that it cannot be repeated.
fn header(recording: &Recording, plan: &Plan) -> String {
    let mut text = format!(
        "Recorded from real services: {} {} process(es), {}. Real time makes every recording different; seed {} drove the clients' schedule.",
        recording.world.services.len(),
        plan.product.name(),
        recording.source.products(),
        recording.seed
    );
    for note in &plan.notes {
        text.push_str(&format!("\n  note: {note}"));
    }
    text
}

/// Plays the scenario on real processes of the plan's product and returns the judged-ready
/// recording. Every process is stopped before this returns, whatever happens.
fn record(scenario: &Scenario, plan: &Plan, seed: u64) -> Result<Recording, String> {
    let version = plan.product.version()?;
    let world = Arc::new(World::compile(scenario));
    let dir = process::TempDir::new("record")?;
    let backend = plan.product.start(&world, plan.scale, dir.path())?;
    let t0 = Instant::now() + START_MARGIN;
    let scale = plan.scale;
    let shared = Shared {
        world: world.clone(),
        backend: &*backend,
        t0,
        scale,
        deadline: t0 + Duration::from_micros(world.duration * scale),
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
        failure: Mutex::new(None),
    };
    // Faults happen on the scenario's schedule: outages are the product's to play.
    // (when, event, the service whose outage starts (true) or ends (false)).
    type Fault = (Micros, What, Option<(u32, bool)>);
    let mut faults: Vec<Fault> = Vec::new();
    for (s, svc) in world.services.iter().enumerate() {
        for (start, end) in &svc.outages {
            let s = s as u32;
            faults.push((*start, What::OutageStarted { service: s }, Some((s, true))));
            faults.push((*end, What::OutageEnded { service: s }, Some((s, false))));
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
            let network = Arc::new(Mutex::new(stream(
                seed,
                &format!("network/client/{}", client.name),
            )));
            scope.spawn(move || {
                Client {
                    caller: Caller {
                        shared,
                        id: c as u32,
                        network,
                    },
                    rng,
                    scope,
                }
                .run()
            });
        }
        for (at, what, outage) in faults {
            let when = shared.real(at);
            if when >= shared.deadline {
                break;
            }
            let now = Instant::now();
            if when > now {
                std::thread::sleep(when - now);
            }
            // A pause stops the whole client, heartbeats included, where a product has them.
            match what {
                What::PauseStarted { client } => shared.backend.pause(client, true),
                What::PauseEnded { client } => shared.backend.pause(client, false),
                _ => {}
            }
            shared.events.lock().unwrap().push((when, what));
            if let Some((service, starts)) = outage {
                if let Err(e) = shared.backend.outage(service, starts) {
                    shared.fail(e);
                }
            }
        }
    });
    let logs = backend.finish();
    if let Some(message) = shared.failure.lock().unwrap().take() {
        return Err(format!("the recording failed: {message}"));
    }
    let logs = logs?;
    let (events, instants) = convert(&world, &shared, &logs)?;
    drop(shared);
    drop(backend);
    drop(dir);
    let world = Arc::try_unwrap(world).unwrap_or_else(|w| (*w).clone());
    let source = Source {
        deterministic: false,
        notes: plan.notes.clone(),
        scale: plan.scale,
        services: world
            .services
            .iter()
            .zip(logs.iter().zip(instants))
            .map(|(s, (log, instant_revisions))| ServiceSource {
                name: s.name.clone(),
                product: version.clone(),
                last_revision: log.last_revision,
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

/// Dates each service's log on the scenario's timeline (its clock never running backwards),
/// joins the clients', the faults' and the resource's events, and sorts everything by time.
/// Grants are named by what each client knows them by and shown with the token the service's
/// log gives them. Also returns, for each service, the product's revision of each of its
/// instants in the trace.
fn convert(
    world: &World,
    shared: &Shared,
    logs: &[ServiceLog],
) -> Result<(Vec<Event>, Vec<Vec<u64>>), String> {
    use lockstep::trace::ServiceOp;
    let mut events: Vec<Event> = Vec::new();
    // (service, grant id) → (instant, at, token) of the grant in the service's log.
    let mut grant_at: BTreeMap<(u32, u64), (u64, Micros, u64)> = BTreeMap::new();
    let mut instants: Vec<Vec<u64>> = Vec::new();
    for (s, log) in logs.iter().enumerate() {
        let s = s as u32;
        let lease_us = world.services[s as usize].lease;
        let mut revisions = Vec::new();
        let mut last: Micros = 0;
        let mut instant = 0u64;
        for entry in &log.entries {
            // The service's own order is the product's; its clock must not run backwards.
            let at = shared.micros(entry.seen).max(last);
            last = at;
            match &entry.what {
                Logged::RestartedEmpty => events.push(Event {
                    at,
                    what: What::RestartedEmpty { service: s },
                }),
                Logged::Op { op, resource } => {
                    instant += 1;
                    revisions.push(entry.revision);
                    let mut op = *op;
                    if let ServiceOp::Granted {
                        token, lease_until, ..
                    } = &mut op
                    {
                        *lease_until = lease_us.map(|l| at + l);
                        if let Some(id) = entry.grant_id {
                            grant_at.insert((s, id), (instant, at, *token));
                        }
                    }
                    events.push(Event {
                        at,
                        what: What::Service {
                            service: s,
                            instant,
                            resource: *resource,
                            op,
                        },
                    });
                }
            }
        }
        instants.push(revisions);
    }
    let token_of = |t: &mut Option<Token>| {
        if let Some(t) = t {
            if let Some((_, _, token)) = grant_at.get(&(t.service, t.value)) {
                t.value = *token;
            }
        }
    };
    for (seen, mut what) in shared.events.lock().unwrap().drain(..) {
        let mut at = shared.micros(seen);
        match &mut what {
            What::BeliefStarted { grants, .. } => {
                for g in grants.iter_mut() {
                    let (instant, granted_at, token) = grant_at
                        .get(&(g.service, g.token))
                        .copied()
                        .ok_or_else(|| {
                            format!(
                                "the log of service \"{}\" did not show the grant the client knows as {}",
                                world.services[g.service as usize].name, g.token
                            )
                        })?;
                    g.instant = instant;
                    g.token = token;
                    // A client learns of a grant after the service makes it.
                    at = at.max(granted_at);
                }
            }
            What::Read { token, .. } | What::Write { token, .. } => token_of(token),
            What::StaleGrantReleased { service, token, .. } => {
                if let Some((_, _, t)) = grant_at.get(&(*service, *token)) {
                    *token = *t;
                }
            }
            _ => {}
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
    let mut rows = Vec::new();
    let mut versions: Vec<String> = Vec::new();
    for path in &a.files {
        let (scenario, text) = load(path)?;
        let product = product_for(a.on.as_deref(), &scenario)?;
        let plan = Plan::of(&scenario, &text, product).map_err(|e| prefixed(path, e))?;
        let version = product.version()?;
        if !versions.contains(&version) {
            versions.push(version);
        }
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
    let names: Vec<&str> = versions
        .iter()
        .map(|v| v.split_whitespace().next().unwrap_or(v))
        .collect();
    let _ = writeln!(
        out,
        "Each cell: runs recorded on real {} ({}) / runs simulated, over the same {} seed(s) of each scenario, in which the verdict says so.\n",
        names.join(" and "),
        versions.join(", "),
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
