//! Real Redis servers for `lockstep record`: one `redis-server` per lock service, without
//! persistence, and a client that speaks RESP itself over a plain TCP connection per call, with
//! explicit timeouts and no retry or reconnection of its own (a client library that re-sends
//! `SET NX` would change what is measured).
//!
//! A lock is Redlock's: `SET key value NX PX ttl` takes it when it is free (a try, never a
//! queue), and a Lua script deletes the key only while it still holds the client's value. Each
//! service's log is read from a `MONITOR` connection to its server: the server's own order of
//! commands, with its clock's timestamps. Redis logs no expiry there, so an expiry is dated
//! where the server stops honouring the key (the grant's server time plus its PX, on the
//! server's millisecond clock); the clients' replies say which `SET` granted and which release
//! deleted, and where no reply came back the state rebuilt from the log says it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lockstep::scenario::{Fencing, Protocol, Scenario};
use lockstep::trace::{RefuseReason, ServiceOp};
use lockstep::world::World;

use super::backend::{
    Answer, Ask, Backend, Check, Entry, Grant, Logged, Places, Product, ServiceLog,
};
use super::process::{free_port, Process};

/// The program started for each lock service.
pub const REDIS: &str = "redis-server";

const INSTALL: &str = "install Redis (scripts/install.sh installs Debian's redis-server)";

/// How long a new server may take to answer `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the monitor may take to report the last command once the recording ends.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The expiry given to a lock of a service without a lease: longer than any recording.
const NO_LEASE_PX_MS: u64 = 3_600_000;

/// Redlock's release: delete the key only while it holds this client's value.
const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// Redis as a product the recorder plays scenarios on.
pub struct Redis;

impl Product for Redis {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn version(&self) -> Result<String, String> {
        let output = Command::new(REDIS)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {REDIS} ({e}): {INSTALL}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=…"
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("v="))
            .map(|v| format!("Redis {v}"))
            .ok_or_else(|| format!("{REDIS} --version printed no version"))
    }

    fn check(&self, scenario: &Scenario, places: &Places, check: &mut Check) {
        for (i, s) in scenario.services.iter().enumerate() {
            if s.subordinate_to.is_some() {
                check.refuse(
                    places.service_field(scenario, i, "subordinate_to"),
                    "a subordinate service",
                    "Redis' SET takes no authority token",
                );
            }
        }
        for (i, c) in scenario.clients.iter().enumerate() {
            let feature = match &c.protocol {
                Protocol::Majority { .. } | Protocol::NoLock => continue,
                Protocol::Single { .. } => "the single protocol",
                Protocol::AllOrdered { .. } => "the all_ordered protocol",
                Protocol::AllUnordered { .. } => "the all_unordered protocol",
                Protocol::TokenChain { .. } => "the token_chain protocol",
            };
            check.refuse(
                places.client_field(scenario, i, "protocol"),
                feature,
                "Redis' SET NX is a try that never waits in a queue, so the recorder plays only the majority protocol (Redlock) on Redis; record it with --on etcd",
            );
        }
        for (i, r) in scenario.resources.iter().enumerate() {
            if r.fencing != Fencing::Off {
                check.refuse(
                    places.resource_field(scenario, i, "fencing"),
                    "fencing",
                    "Redis issues no fencing token: a lock is a key with a random value",
                );
            }
        }
        check.notes.push(
            "each service is one redis-server without persistence, whatever its replicas".into(),
        );
        check.notes.push(
            "Redis issues no token: a service's tokens are the recorder's count of the grants in its MONITOR log since it last started, from first_token".into(),
        );
        check.notes.push(
            "Redis logs no expiry: a lock's expiry is dated at its grant's server time plus its PX, when the server stops honouring the key".into(),
        );
        for s in &scenario.services {
            if s.outages.is_empty() {
                continue;
            }
            if s.forgets_on_restart {
                check.notes.push(format!(
                    "service {}'s outages kill its redis-server, which starts again empty at the outage's end{}",
                    s.name,
                    if s.restart_delay_ms > 0 {
                        format!(" ({} ms later than written)", s.restart_delay_ms)
                    } else {
                        String::new()
                    }
                ));
            } else {
                check.notes.push(format!(
                    "service {}'s outages stop its redis-server (SIGSTOP): requests wait for it instead of being lost",
                    s.name
                ));
            }
        }
        for s in &scenario.services {
            if s.clock_rate_percent != 100 {
                if let Some(l) = s.lease_ms {
                    let px = (l * 100).div_ceil(u64::from(s.clock_rate_percent.max(1)));
                    check.notes.push(format!(
                        "service {}'s clock running at {} % is not real: Redis' expiry runs on the machine's clock, so the recorder sets PX {px} ms for its {l} ms lease, which ends when such a clock would end it",
                        s.name, s.clock_rate_percent
                    ));
                }
            }
        }
    }

    fn scale(&self, _: &Scenario, _: u64) -> Option<u64> {
        // PX is in milliseconds, as the scenario's times are.
        Some(1)
    }

    fn start(&self, world: &World, scale: u64, dir: &Path) -> Result<Box<dyn Backend>, String> {
        let clock = Clock::now();
        let mut instances = Vec::new();
        for (i, _) in world.services.iter().enumerate() {
            let port = free_port()?;
            let config = write_config(dir, i, port)?;
            let process = start(&config, dir, i)?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let monitor = Monitor::start(addr, clock, Instant::now())?;
            instances.push(Instance {
                config,
                addr,
                process: Some(process),
                down: AtomicBool::new(false),
                sessions: vec![monitor],
            });
        }
        Ok(Box::new(Running {
            world: world.clone(),
            scale,
            dir: dir.to_path_buf(),
            clock,
            instances: instances.into_iter().map(Mutex::new).collect(),
            addrs: Vec::new(),
            down: Vec::new(),
            next_id: AtomicU64::new(1),
            set_replies: Mutex::new(BTreeMap::new()),
            release_replies: Mutex::new(BTreeMap::new()),
        })
        .with_addrs())
    }
}

/// The configuration file of service `i`: loopback only, no persistence (no snapshots, no
/// append-only file), its files in the recording's folder, and the command line left as
/// started so that the folder names the process.
fn write_config(dir: &Path, i: usize, port: u16) -> Result<PathBuf, String> {
    let path = dir.join(format!("s{i}.conf"));
    let text = format!(
        "port {port}\nbind 127.0.0.1\nsave \"\"\nappendonly no\ndir \"{}\"\ndbfilename s{i}.rdb\nset-proc-title no\nloglevel warning\n",
        dir.display()
    );
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Starts one redis-server from its configuration and waits until it answers `PING`. Call
/// from the main thread (see [`Process::spawn`]).
fn start(config: &Path, dir: &Path, i: usize) -> Result<Process, String> {
    let log = dir.join(format!("s{i}.log"));
    let mut command = Command::new(REDIS);
    command
        .arg(config)
        // Said on the command line as well, where `ps` shows it: nothing is kept on disk.
        .args(["--save", "", "--appendonly", "no"]);
    let mut process = Process::spawn(command, &log, INSTALL)?;
    let port = std::fs::read_to_string(config)
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("port ").and_then(|p| p.trim().parse().ok()))
        })
        .ok_or("the configuration names no port")?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    loop {
        if let Some(status) = process.exited() {
            return Err(format!(
                "redis-server exited at start ({status}): {}",
                process.log_tail()
            ));
        }
        let answered = call(addr, &[b"PING"], Duration::from_millis(500))
            .is_ok_and(|r| r == Reply::Simple("PONG".into()));
        if answered {
            return Ok(process);
        }
        if start.elapsed() > START_TIMEOUT {
            return Err(format!(
                "redis-server did not answer within {}s: {}",
                START_TIMEOUT.as_secs(),
                process.log_tail()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The machine's wall clock (which Redis stamps `MONITOR` lines with) against the recorder's
/// monotonic one, read once: both run on the same machine.
#[derive(Clone, Copy)]
struct Clock {
    instant: Instant,
    unix_us: u64,
}

impl Clock {
    fn now() -> Clock {
        let instant = Instant::now();
        let unix_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0);
        Clock { instant, unix_us }
    }

    /// A server timestamp as the recorder's time.
    fn instant(&self, unix_us: u64) -> Instant {
        if unix_us >= self.unix_us {
            self.instant + Duration::from_micros(unix_us - self.unix_us)
        } else {
            self.instant
                .checked_sub(Duration::from_micros(self.unix_us - unix_us))
                .unwrap_or(self.instant)
        }
    }
}

/// One service's server, as many times as it was started.
struct Instance {
    config: PathBuf,
    addr: SocketAddr,
    process: Option<Process>,
    down: AtomicBool,
    /// One `MONITOR` session per start of the server.
    sessions: Vec<Monitor>,
}

struct Running {
    world: World,
    scale: u64,
    dir: PathBuf,
    clock: Clock,
    instances: Vec<Mutex<Instance>>,
    /// Each service's address and whether it is down, read by client threads without waiting
    /// for the instance's lock (held while a server restarts).
    addrs: Vec<SocketAddr>,
    down: Vec<Arc<AtomicBool>>,
    /// Each request's id (in the value it sets), unique over the recording.
    next_id: AtomicU64,
    /// (service, request id) → whether the `SET` granted, as its reply said.
    set_replies: Mutex<BTreeMap<(u32, u64), bool>>,
    /// (service, request id) → whether the release deleted the key, as its reply said.
    release_replies: Mutex<BTreeMap<(u32, u64), bool>>,
}

impl Running {
    fn with_addrs(mut self: Box<Self>) -> Box<Self> {
        self.addrs = self
            .instances
            .iter()
            .map(|i| i.lock().unwrap().addr)
            .collect();
        self.down = self
            .instances
            .iter()
            .map(|_| Arc::new(AtomicBool::new(false)))
            .collect();
        self
    }

    fn is_down(&self, service: u32) -> bool {
        self.down[service as usize].load(Ordering::SeqCst)
    }

    /// The PX a service's locks get: its lease (already shortened by a fast clock), in real
    /// milliseconds, rounded up.
    fn px_ms(&self, service: u32) -> u64 {
        self.world.services[service as usize]
            .lease
            .map(|l| (l * self.scale).div_ceil(1000).max(1))
            .unwrap_or(NO_LEASE_PX_MS)
    }
}

/// The value a request sets: whose it is and the request's id.
fn value_of(client: u32, id: u64) -> String {
    format!("c{client}.{id}")
}

fn parse_value(value: &str) -> Option<(u32, u64)> {
    let (c, id) = value.strip_prefix('c')?.split_once('.')?;
    Some((c.parse().ok()?, id.parse().ok()?))
}

impl Backend for Running {
    fn lock(&self, ask: &Ask) -> Result<Answer, String> {
        if !ask.try_only {
            return Err("Redis' SET NX cannot wait in a queue".into());
        }
        if self.is_down(ask.service) {
            return Ok(Answer::Unanswered);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let value = value_of(ask.client, id);
        let px = self.px_ms(ask.service).to_string();
        let left = ask.give_up.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Answer::Unanswered);
        }
        let reply = call(
            self.addrs[ask.service as usize],
            &[
                b"SET",
                ask.resource.as_bytes(),
                value.as_bytes(),
                b"NX",
                b"PX",
                px.as_bytes(),
            ],
            left,
        );
        match reply {
            Ok(Reply::Simple(ok)) if ok == "OK" => {
                self.set_replies
                    .lock()
                    .unwrap()
                    .insert((ask.service, id), true);
                Ok(Answer::Granted(Grant {
                    service: ask.service,
                    token: id,
                    key: value.into_bytes(),
                    lease: 0,
                }))
            }
            Ok(Reply::Nil) => {
                self.set_replies
                    .lock()
                    .unwrap()
                    .insert((ask.service, id), false);
                Ok(Answer::Refused)
            }
            Ok(other) => Err(format!("SET answered {other:?}")),
            Err(e) if e.timed_out || self.is_down(ask.service) => Ok(Answer::Unanswered),
            Err(e) => Err(e.message),
        }
    }

    fn unlock(&self, client: u32, grant: &Grant, timeout: Duration) -> Result<(), String> {
        if self.is_down(grant.service) {
            // Lost, as a message to a service that is down is in the model.
            return Ok(());
        }
        let resource = self.world.clients[client as usize].resource as usize;
        let key = self.world.resources[resource].name.as_bytes();
        let reply = call(
            self.addrs[grant.service as usize],
            &[b"EVAL", RELEASE.as_bytes(), b"1", key, &grant.key],
            timeout,
        );
        match reply {
            Ok(Reply::Integer(n)) => {
                self.release_replies
                    .lock()
                    .unwrap()
                    .insert((grant.service, grant.token), n > 0);
                Ok(())
            }
            Ok(other) => Err(format!("the release script answered {other:?}")),
            // A stopped server answers later, or never before the end: the log says what it
            // did with the release.
            Err(e) if e.timed_out || self.is_down(grant.service) => Ok(()),
            Err(e) => Err(e.message),
        }
    }

    fn outage(&self, service: u32, starts: bool) -> Result<(), String> {
        let forgets = self.world.services[service as usize].forgets_on_restart;
        let mut instance = self.instances[service as usize].lock().unwrap();
        if !forgets {
            if let Some(p) = &instance.process {
                p.pause(starts);
            }
            return Ok(());
        }
        if starts {
            // Killed outright: whatever it held is gone with the process.
            self.down[service as usize].store(true, Ordering::SeqCst);
            instance.process = None;
            if let Some(m) = instance.sessions.last_mut() {
                m.killed = Some(Instant::now());
            }
            return Ok(());
        }
        let i = service as usize;
        let process = start(&instance.config, &self.dir, i)?;
        let restarted = Instant::now();
        let monitor = Monitor::start(instance.addr, self.clock, restarted)?;
        instance.process = Some(process);
        instance.sessions.push(monitor);
        instance.down.store(false, Ordering::SeqCst);
        self.down[i].store(false, Ordering::SeqCst);
        Ok(())
    }

    fn finish(&self) -> Result<Vec<ServiceLog>, String> {
        let mut logs = Vec::new();
        for (s, instance) in self.instances.iter().enumerate() {
            let mut instance = instance.lock().unwrap();
            if let Some(p) = &instance.process {
                p.pause(false);
            }
            let addr = instance.addr;
            // A last command the monitor must report: everything before it has been read.
            let alive = instance.process.is_some();
            let mut sessions = std::mem::take(&mut instance.sessions);
            if alive {
                let marker = format!("lockstep-end-{s}");
                let _ = call(addr, &[b"ECHO", marker.as_bytes()], DRAIN_TIMEOUT);
                if let Some(last) = sessions.last() {
                    last.wait_for(&marker, DRAIN_TIMEOUT);
                }
            }
            let lines: Vec<(Option<Instant>, Option<Instant>, Vec<Line>)> = sessions
                .iter_mut()
                .map(|m| (Some(m.started), m.killed, m.finish()))
                .collect();
            logs.push(self.log_of(s as u32, lines));
        }
        Ok(logs)
    }
}

impl Running {
    /// Rebuilds one service's log from its monitor sessions, in the server's order.
    fn log_of(
        &self,
        s: u32,
        sessions: Vec<(Option<Instant>, Option<Instant>, Vec<Line>)>,
    ) -> ServiceLog {
        let svc = &self.world.services[s as usize];
        let set_replies = self.set_replies.lock().unwrap();
        let release_replies = self.release_replies.lock().unwrap();
        let mut entries: Vec<Entry> = Vec::new();
        let mut revision = 0u64;
        // The lock of each resource: (value, client, token, request id, expiry on the server's
        // millisecond clock).
        let mut held: BTreeMap<u32, (String, u32, u64, u64, u64)> = BTreeMap::new();
        let mut token_of: BTreeMap<u64, u64> = BTreeMap::new();
        let mut next_token = svc.first_token;
        let clock = self.clock;
        let mut last_revision = 0;
        // Locks whose expiry has passed by `now_ms` expired then: the server stops honouring
        // a key once its clock has passed the key's expiry.
        let expire = |held: &mut BTreeMap<u32, (String, u32, u64, u64, u64)>,
                      entries: &mut Vec<Entry>,
                      now_ms: u64,
                      revision: u64| {
            let gone: Vec<u32> = held
                .iter()
                .filter(|(_, h)| now_ms > h.4)
                .map(|(r, _)| *r)
                .collect();
            for r in gone {
                if let Some((_, client, token, _, until)) = held.remove(&r) {
                    entries.push(Entry {
                        seen: clock.instant(until * 1000),
                        revision,
                        what: Logged::Op {
                            op: ServiceOp::Expired { client, token },
                            resource: r,
                        },
                        grant_id: None,
                    });
                }
            }
        };
        let unix_ms = |t: Instant| {
            (clock.unix_us + t.saturating_duration_since(clock.instant).as_micros() as u64) / 1000
        };
        for (k, (started, killed, lines)) in sessions.into_iter().enumerate() {
            if k > 0 {
                let restarted = started.unwrap_or(clock.instant);
                // What had expired before the server was killed expired then; the rest is
                // forgotten when it comes back empty.
                let dead = killed.map_or(restarted, |t| t.min(restarted));
                expire(&mut held, &mut entries, unix_ms(dead), revision);
                entries.push(Entry {
                    seen: restarted,
                    revision,
                    what: Logged::RestartedEmpty,
                    grant_id: None,
                });
                for (r, (_, client, token, _, _)) in std::mem::take(&mut held) {
                    entries.push(Entry {
                        seen: restarted,
                        revision,
                        what: Logged::Op {
                            op: ServiceOp::Forgotten {
                                client,
                                token: Some(token),
                            },
                            resource: r,
                        },
                        grant_id: None,
                    });
                }
                next_token = svc.first_token;
            }
            for line in lines {
                revision += 1;
                last_revision = revision;
                let now_ms = line.unix_us / 1000;
                expire(&mut held, &mut entries, now_ms, revision);
                let seen = clock.instant(line.unix_us);
                let args: Vec<&str> = line.args.iter().map(String::as_str).collect();
                let command = args.first().map(|c| c.to_ascii_uppercase());
                match (command.as_deref(), args.as_slice()) {
                    (Some("SET"), [_, key, value, ..]) => {
                        let Some(resource) = self.resource(key) else {
                            continue;
                        };
                        let Some((client, id)) = parse_value(value) else {
                            continue;
                        };
                        let px = args
                            .iter()
                            .position(|a| a.eq_ignore_ascii_case("PX"))
                            .and_then(|i| args.get(i + 1))
                            .and_then(|p| p.parse::<u64>().ok())
                            .unwrap_or(NO_LEASE_PX_MS);
                        let granted = set_replies
                            .get(&(s, id))
                            .copied()
                            .unwrap_or(!held.contains_key(&resource));
                        let op = if granted {
                            let token = next_token;
                            next_token += 1;
                            token_of.insert(id, token);
                            held.insert(
                                resource,
                                (value.to_string(), client, token, id, now_ms + px),
                            );
                            ServiceOp::Granted {
                                client,
                                token,
                                lease_until: None,
                            }
                        } else {
                            ServiceOp::Refused {
                                client,
                                reason: RefuseReason::Taken,
                            }
                        };
                        entries.push(Entry {
                            seen,
                            revision,
                            grant_id: granted.then_some(id),
                            what: Logged::Op { op, resource },
                        });
                    }
                    (Some("EVAL"), [_, _, _, key, value, ..]) => {
                        let Some(resource) = self.resource(key) else {
                            continue;
                        };
                        let Some((client, id)) = parse_value(value) else {
                            continue;
                        };
                        let holds = held.get(&resource).is_some_and(|h| h.0 == *value);
                        let deleted = release_replies.get(&(s, id)).copied().unwrap_or(holds);
                        let token = token_of.get(&id).copied().unwrap_or(0);
                        let op = if deleted {
                            held.remove(&resource);
                            ServiceOp::Released { client, token }
                        } else {
                            ServiceOp::ReleaseIgnored { client, token }
                        };
                        entries.push(Entry {
                            seen,
                            revision,
                            grant_id: None,
                            what: Logged::Op { op, resource },
                        });
                    }
                    _ => {}
                }
            }
        }
        // Locks still held at the end expire on schedule (the trace ends at the scenario's
        // end, so later ones fall away).
        expire(&mut held, &mut entries, u64::MAX, revision);
        ServiceLog {
            entries,
            last_revision,
        }
    }

    fn resource(&self, key: &str) -> Option<u32> {
        self.world
            .resources
            .iter()
            .position(|r| r.name == key)
            .map(|r| r as u32)
    }
}

/// One command as a `MONITOR` line reported it.
struct Line {
    unix_us: u64,
    args: Vec<String>,
}

/// A `MONITOR` connection to one start of a server, read by a thread of its own.
struct Monitor {
    stream: TcpStream,
    started: Instant,
    killed: Option<Instant>,
    lines: Arc<Mutex<Vec<Line>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Monitor {
    fn start(addr: SocketAddr, clock: Clock, started: Instant) -> Result<Monitor, String> {
        let _ = clock;
        let mut stream = connect(addr, Duration::from_secs(5)).map_err(|e| e.message)?;
        stream
            .write_all(&encode(&[b"MONITOR"]))
            .map_err(|e| format!("MONITOR: {e}"))?;
        let reader = stream.try_clone().map_err(|e| format!("MONITOR: {e}"))?;
        let _ = reader.set_read_timeout(Some(Duration::from_secs(5)));
        let mut reader = BufReader::new(reader);
        let mut first = String::new();
        reader
            .read_line(&mut first)
            .map_err(|e| format!("MONITOR: {e}"))?;
        if first.trim_end() != "+OK" {
            return Err(format!("MONITOR answered {:?}", first.trim_end()));
        }
        // From here the thread reads until the connection ends; no timeout, since a quiet
        // server is not a failure.
        let _ = reader.get_ref().set_read_timeout(None);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let thread = std::thread::spawn(move || read_monitor(reader, &sink));
        Ok(Monitor {
            stream,
            started,
            killed: None,
            lines,
            thread: Some(thread),
        })
    }

    /// Waits (at most `timeout`) until the monitor has reported `ECHO marker`.
    fn wait_for(&self, marker: &str, timeout: Duration) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            let seen = self.lines.lock().unwrap().iter().rev().any(|l| {
                l.args.len() == 2 && l.args[0].eq_ignore_ascii_case("ECHO") && l.args[1] == marker
            });
            if seen {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn finish(&mut self) -> Vec<Line> {
        let _ = self.stream.shutdown(Shutdown::Both);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn read_monitor(mut reader: BufReader<TcpStream>, sink: &Mutex<Vec<Line>>) {
    let mut line = Vec::new();
    // Bounded by the connection: the recorder shuts it down at the end, and a killed server
    // closes it.
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(parsed) = parse_monitor_line(text.trim_end()) {
            sink.lock().unwrap().push(parsed);
        }
    }
}

/// Reads `+1339518083.107412 [0 127.0.0.1:60866] "SET" "k" "v"`: the server's timestamp
/// (seconds and microseconds) and the command's arguments, each quoted as Redis quotes them.
fn parse_monitor_line(text: &str) -> Option<Line> {
    let text = text.strip_prefix('+')?;
    let (stamp, rest) = text.split_once(' ')?;
    let (secs, micros) = stamp.split_once('.')?;
    let unix_us = secs.parse::<u64>().ok()? * 1_000_000 + micros.parse::<u64>().ok()?;
    let rest = &rest[rest.find("] ")? + 2..];
    let mut args = Vec::new();
    let mut chars = rest.chars().peekable();
    // Each argument is one quoted string; the loop ends with the text.
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut arg = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => arg.push('\n'),
                    Some('r') => arg.push('\r'),
                    Some('t') => arg.push('\t'),
                    Some('x') => {
                        let hex: String = chars.by_ref().take(2).collect();
                        if let Ok(b) = u8::from_str_radix(&hex, 16) {
                            arg.push(b as char);
                        }
                    }
                    Some(other) => arg.push(other),
                    None => break,
                },
                c => arg.push(c),
            }
        }
        args.push(arg);
    }
    Some(Line { unix_us, args })
}

/// A call's failure, with a timeout told apart (no answer is an outcome, not a failure).
struct CallError {
    timed_out: bool,
    message: String,
}

fn io_error(what: &str, e: &std::io::Error) -> CallError {
    CallError {
        timed_out: matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        message: format!("{what}: {e}"),
    }
}

#[derive(Debug, PartialEq)]
enum Reply {
    Simple(String),
    Integer(i64),
    Bulk(Vec<u8>),
    Nil,
}

fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, CallError> {
    let stream = TcpStream::connect_timeout(&addr, timeout.max(Duration::from_millis(1)))
        .map_err(|e| io_error(&format!("connect to {addr}"), &e))?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// A command as a RESP array of bulk strings.
fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// One command on a connection of its own, the whole call bounded by `timeout`: sent once,
/// never retried.
fn call(addr: SocketAddr, args: &[&[u8]], timeout: Duration) -> Result<Reply, CallError> {
    let timeout = timeout.max(Duration::from_millis(1));
    let mut stream = connect(addr, timeout)?;
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let name = String::from_utf8_lossy(args.first().copied().unwrap_or(b"")).into_owned();
    stream
        .write_all(&encode(args))
        .map_err(|e| io_error(&name, &e))?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| io_error(&name, &e))?;
    let line = line.trim_end();
    let fail = |m: String| CallError {
        timed_out: false,
        message: m,
    };
    match line.split_at_checked(1) {
        Some(("+", s)) => Ok(Reply::Simple(s.to_string())),
        Some(("-", s)) => Err(fail(format!("{name}: Redis answered an error: {s}"))),
        Some((":", n)) => n
            .parse()
            .map(Reply::Integer)
            .map_err(|_| fail(format!("{name}: bad integer reply {line:?}"))),
        Some(("$", n)) => {
            let n: i64 = n
                .parse()
                .map_err(|_| fail(format!("{name}: bad bulk reply {line:?}")))?;
            if n < 0 {
                return Ok(Reply::Nil);
            }
            let mut bytes = vec![0; n as usize + 2];
            reader
                .read_exact(&mut bytes)
                .map_err(|e| io_error(&name, &e))?;
            bytes.truncate(n as usize);
            Ok(Reply::Bulk(bytes))
        }
        _ if line.is_empty() => Err(fail(format!("{name}: the connection closed"))),
        _ => Err(fail(format!("{name}: unexpected reply {line:?}"))),
    }
}
