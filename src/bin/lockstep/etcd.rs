//! Real etcd processes for `lockstep record`, and the few calls of etcd's v3 HTTP/JSON gateway
//! the recorder makes (leases, locks, ranges and one watch per service).
//!
//! Each service is one single-node etcd. Locks are taken through etcd's lock API, each with a
//! lease of its own; each service's log is what etcd's watch reported, in etcd's revision
//! order, and the recorder only decides which change of the lock's keys is a grant, a
//! queueing, a release, an expiry or a cancellation, as etcd's lock recipe defines them. The
//! processes are started and stopped through [`super::process`].

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use lockstep::scenario::{Protocol, Scenario};
use lockstep::trace::ServiceOp;
use lockstep::world::{ProtocolConfig, World};
use serde_json::{json, Value};

use super::backend::{
    Answer, Ask, Backend, Check, Entry, Grant, Logged, Places, Product, ServiceLog,
};
use super::process::{free_port, Process};

/// The program started for each lock service.
pub const ETCD: &str = "etcd";

const INSTALL: &str = "install etcd (scripts/install.sh installs Debian's etcd-server)";

/// How long a new etcd may take to answer its health check.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A lease for a service without one: longer than any recording, so it never ends a hold.
const NO_LEASE_TTL_S: u64 = 3600;

/// How long a call that should answer at once may take before the recording fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// etcd as a product the recorder plays scenarios on.
pub struct Etcd;

impl Product for Etcd {
    fn name(&self) -> &'static str {
        "etcd"
    }

    fn version(&self) -> Result<String, String> {
        version()
    }

    fn check(&self, scenario: &Scenario, places: &Places, check: &mut Check) {
        for (i, s) in scenario.services.iter().enumerate() {
            if s.subordinate_to.is_some() {
                check.refuse(
                    places.service_field(scenario, i, "subordinate_to"),
                    "a subordinate service",
                    "etcd's lock API takes no authority token",
                );
            }
            if s.forgets_on_restart {
                check.refuse(
                    places.service_field(scenario, i, "forgets_on_restart"),
                    "a service that forgets on restart",
                    "an etcd member keeps its data on disk across a restart",
                );
            }
            if s.clock_rate_percent != 100 {
                check.refuse(
                    places.service_field(scenario, i, "clock_rate_percent"),
                    "a service clock that runs fast or slow",
                    "etcd's leases run on the machine's own clock",
                );
            }
        }
        for (i, c) in scenario.clients.iter().enumerate() {
            let at = || places.client_field(scenario, i, "protocol");
            match &c.protocol {
                Protocol::TokenChain { .. } => {
                    check.refuse(at(), "the token_chain protocol", "etcd's lock API takes no authority token")
                }
                Protocol::Majority { .. } => check.refuse(
                    at(),
                    "the majority protocol",
                    "etcd's lock API waits in a queue, where a majority client's request is a try that is never queued; record it with --on redis",
                ),
                Protocol::AllUnordered {
                    skip_unreachable: true,
                    ..
                }
                | Protocol::AllOrdered {
                    skip_unreachable: true,
                    ..
                } => check.refuse(
                    at(),
                    "skip_unreachable",
                    "without partitions no service is unreachable, and an outage only delays answers",
                ),
                _ => {}
            }
        }
        for (i, s) in scenario.services.iter().enumerate() {
            if let Some(l) = s.lease_ms {
                if !(1..=super::SCALE_MAX).any(|k| (l * k) % 1000 == 0 && l * k > 0) {
                    check.refuse(
                        places.service_field(scenario, i, "lease_ms"),
                        &format!("lease_ms = {l}"),
                        &format!("etcd's leases are whole seconds, and no stretch of time up to {} times makes {l} ms one", super::SCALE_MAX),
                    );
                }
            }
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
                        check.refuse(places.service(scenario, *s as usize), "one service locking two resources", "etcd's revisions are one counter per cluster, so two locks' tokens would not each increase in the service's log");
                    }
                }
            }
        }
        check
            .notes
            .push("each service is one single-node etcd, whatever its replicas".into());
        if scenario.services.iter().any(|s| s.first_token != 1) {
            check.notes.push(
                "tokens are etcd's revisions, which start at 1 (first_token is not applied)".into(),
            );
        }
        if scenario.services.iter().any(|s| !s.outages.is_empty()) {
            check.notes.push(
                "an outage stops the etcd process: requests wait for it instead of being lost"
                    .into(),
            );
        }
    }

    fn scale(&self, scenario: &Scenario, max: u64) -> Option<u64> {
        // etcd counts leases in whole seconds: stretch real time until every lease is one.
        (1..=max).find(|k| {
            scenario
                .services
                .iter()
                .filter_map(|s| s.lease_ms)
                .all(|l| (l * k) % 1000 == 0 && l * k > 0)
        })
    }

    fn start(&self, world: &World, scale: u64, dir: &Path) -> Result<Box<dyn Backend>, String> {
        let mut processes = Vec::new();
        let mut addrs = Vec::new();
        for (i, _) in world.services.iter().enumerate() {
            let (process, addr) = start(&format!("s{i}"), dir)?;
            processes.push(process);
            addrs.push(addr);
        }
        let watches: Vec<Watch> = addrs
            .iter()
            .map(|a| Watch::start(*a))
            .collect::<Result<_, _>>()?;
        Ok(Box::new(Running {
            world: world.clone(),
            scale,
            processes,
            addrs,
            watches: Mutex::new(watches),
            leases: Mutex::new(BTreeMap::new()),
            unlocks: Mutex::new(Vec::new()),
            granted: Mutex::new(BTreeMap::new()),
        }))
    }
}

/// The version line of the installed etcd (`etcd Version: 3.4.23`), or a message saying how to
/// install it.
pub fn version() -> Result<String, String> {
    let output = Command::new(ETCD)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {ETCD} ({e}): {INSTALL}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("etcd Version:"))
        .map(|v| format!("etcd {}", v.trim()))
        .ok_or_else(|| format!("{ETCD} --version printed no version"))
}

/// Starts a single-node etcd named `name` with its data under `dir`, and waits until it
/// answers. Call from the main thread (see [`Process::spawn`]).
fn start(name: &str, dir: &Path) -> Result<(Process, SocketAddr), String> {
    let client_port = free_port()?;
    let peer_port = free_port()?;
    let client_url = format!("http://127.0.0.1:{client_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let data = dir.join(format!("{name}.etcd"));
    let log = dir.join(format!("{name}.log"));
    let mut command = Command::new(ETCD);
    command
        .arg("--name")
        .arg(name)
        .arg("--data-dir")
        .arg(&data)
        .args(["--listen-client-urls", &client_url])
        .args(["--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url])
        .args(["--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("{name}={peer_url}")])
        // Short ticks make etcd's shortest lease one second (the default is two) and its
        // single-node election quick.
        .args(["--heartbeat-interval", "10", "--election-timeout", "50"])
        .args(["--log-level", "warn"]);
    let mut process = Process::spawn(command, &log, INSTALL)?;
    let client = SocketAddr::from(([127, 0, 0, 1], client_port));
    let start = Instant::now();
    loop {
        if let Some(status) = process.exited() {
            return Err(format!(
                "etcd exited at start ({status}): {}",
                process.log_tail()
            ));
        }
        let healthy =
            get(client, "/health", Duration::from_millis(500)).is_ok_and(|v| v["health"] == "true");
        if healthy {
            return Ok((process, client));
        }
        if start.elapsed() > START_TIMEOUT {
            return Err(format!(
                "etcd did not become healthy within {}s: {}",
                START_TIMEOUT.as_secs(),
                process.log_tail()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The etcd processes of one recording, and what the recorder needs to read their logs.
struct Running {
    world: World,
    scale: u64,
    processes: Vec<Process>,
    addrs: Vec<SocketAddr>,
    watches: Mutex<Vec<Watch>>,
    /// (service, lease) → client: whose lock key a watched key is.
    leases: Mutex<BTreeMap<(u32, u64), u32>>,
    /// Unlock calls: (service, key, revision answered, whether it deleted the key, when).
    unlocks: Mutex<Vec<Unlock>>,
    /// Grants as clients received them: (service, token) → when.
    granted: Mutex<BTreeMap<(u32, u64), Instant>>,
}

struct Unlock {
    service: u32,
    key: Vec<u8>,
    revision: u64,
    deleted: bool,
    when: Instant,
}

impl Backend for Running {
    /// Takes a lease and waits for one service's lock, at most until `give_up`.
    fn lock(&self, ask: &Ask) -> Result<Answer, String> {
        let service = ask.service;
        let addr = self.addrs[service as usize];
        let lease_s = self.world.services[service as usize]
            .lease
            .map(|l| l * self.scale / 1_000_000)
            .unwrap_or(NO_LEASE_TTL_S);
        let left = || ask.give_up.saturating_duration_since(Instant::now());
        let lease = match lease_grant(addr, lease_s, left()) {
            Ok(id) => id,
            Err(e) if timed_out(&e) => return Ok(Answer::Unanswered),
            Err(e) => return Err(e),
        };
        self.leases
            .lock()
            .unwrap()
            .insert((service, lease), ask.client);
        match lock(addr, ask.resource, lease, left()) {
            Ok(Some(locked)) => {
                self.granted
                    .lock()
                    .unwrap()
                    .insert((service, locked.token), Instant::now());
                // etcd's lease ran while the client waited; the model's starts at the grant.
                if self.world.services[service as usize].lease.is_some() {
                    let _ = lease_keepalive(addr, lease, CALL_TIMEOUT);
                }
                Ok(Answer::Granted(Grant {
                    service,
                    token: locked.token,
                    key: locked.key,
                    lease,
                }))
            }
            Ok(None) => {
                // Revoking the lease removes the waiter's key at once, whatever etcd does with
                // the abandoned call. Like the model's cancel, the client does not wait for it
                // (a stopped service answers only when it is continued).
                std::thread::spawn(move || lease_revoke(addr, lease, CALL_TIMEOUT));
                Ok(Answer::Unanswered)
            }
            Err(e) if Instant::now() >= ask.deadline => {
                let _ = e;
                Ok(Answer::Unanswered)
            }
            Err(e) => Err(e),
        }
    }

    fn unlock(&self, _client: u32, grant: &Grant, timeout: Duration) -> Result<(), String> {
        let addr = self.addrs[grant.service as usize];
        let result = unlock(addr, &grant.key, timeout).map(|(revision, deleted)| {
            self.unlocks.lock().unwrap().push(Unlock {
                service: grant.service,
                key: grant.key.clone(),
                revision,
                deleted,
                when: Instant::now(),
            })
        });
        let _ = lease_revoke(addr, grant.lease, timeout);
        result
    }

    fn outage(&self, service: u32, starts: bool) -> Result<(), String> {
        self.processes[service as usize].pause(starts);
        Ok(())
    }

    fn finish(&self) -> Result<Vec<ServiceLog>, String> {
        for p in &self.processes {
            p.pause(false);
        }
        let mut logs = Vec::new();
        let watches = std::mem::take(&mut *self.watches.lock().unwrap());
        for (addr, watch) in self.addrs.iter().zip(watches) {
            let revision = revision(*addr)?;
            let changes = watch.finish(revision);
            logs.push((changes, revision));
        }
        Ok(logs
            .into_iter()
            .enumerate()
            .map(|(s, (changes, last_revision))| ServiceLog {
                entries: self.log_of(s as u32, &changes),
                last_revision,
            })
            .collect())
    }
}

impl Running {
    /// Turns one service's watched changes into its log, in etcd's revision order.
    fn log_of(&self, s: u32, changes: &[Change]) -> Vec<Entry> {
        let world = &self.world;
        let leases = self.leases.lock().unwrap();
        let unlocks = self.unlocks.lock().unwrap();
        let granted = self.granted.lock().unwrap();
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
        ops.into_iter()
            .map(|(revision, seen, op, resource)| Entry {
                seen,
                revision,
                grant_id: match op {
                    ServiceOp::Granted { token, .. } => Some(token),
                    _ => None,
                },
                what: Logged::Op { op, resource },
            })
            .collect()
    }
}

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn unb64(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

/// etcd's gateway writes 64-bit numbers as strings, and leaves out fields at zero.
pub fn num(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// An I/O error on a call, with a timeout said as such (a lock call that times out is an
/// outcome, not a failure).
fn io_error(path: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("{TIMED_OUT} {path}")
        }
        _ => format!("{path}: {e}"),
    }
}

const TIMED_OUT: &str = "timed out:";

/// Whether a call's error was its timeout.
pub fn timed_out(error: &str) -> bool {
    error.starts_with(TIMED_OUT)
}

fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, String> {
    let stream = TcpStream::connect_timeout(&addr, timeout.max(Duration::from_millis(1)))
        .map_err(|e| io_error(&format!("connect to {addr}"), &e))?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

fn send(
    stream: &mut TcpStream,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> Result<(), String> {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| io_error(path, &e))
}

/// Reads a response's status line and headers; returns the status and whether the body is
/// chunked.
fn read_head(reader: &mut impl BufRead, path: &str) -> Result<(u16, bool, Option<usize>), String> {
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| io_error(path, &e))?;
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{path}: no HTTP status in {line:?}"))?;
    let mut chunked = false;
    let mut length = None;
    loop {
        line.clear();
        reader
            .read_line(&mut line)
            .map_err(|e| io_error(path, &e))?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().ok();
        }
    }
    Ok((status, chunked, length))
}

/// The next chunk of a chunked body, or `None` at its end.
fn read_chunk(reader: &mut impl BufRead, path: &str) -> Result<Option<Vec<u8>>, String> {
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| io_error(path, &e))?;
    if line.is_empty() {
        return Ok(None);
    }
    let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
        .map_err(|_| format!("{path}: bad chunk size {line:?}"))?;
    if size == 0 {
        return Ok(None);
    }
    let mut chunk = vec![0; size + 2];
    reader
        .read_exact(&mut chunk)
        .map_err(|e| io_error(path, &e))?;
    chunk.truncate(size);
    Ok(Some(chunk))
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
    timeout: Duration,
) -> Result<Value, String> {
    let mut stream = connect(addr, timeout)?;
    let _ = stream.set_read_timeout(Some(timeout.max(Duration::from_millis(1))));
    send(&mut stream, addr, method, path, body)?;
    let mut reader = BufReader::new(stream);
    let (status, chunked, length) = read_head(&mut reader, path)?;
    let mut bytes = Vec::new();
    if chunked {
        while let Some(chunk) = read_chunk(&mut reader, path)? {
            bytes.extend_from_slice(&chunk);
        }
    } else if let Some(n) = length {
        bytes.resize(n, 0);
        reader
            .read_exact(&mut bytes)
            .map_err(|e| io_error(path, &e))?;
    } else {
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, &e))?;
    }
    let text = String::from_utf8_lossy(&bytes);
    if status != 200 {
        return Err(format!("{path}: HTTP {status}: {}", text.trim()));
    }
    // A streaming call (keepalive) wraps its one reply in `result`.
    let first = text.lines().next().unwrap_or("");
    let value: Value =
        serde_json::from_str(first).map_err(|e| format!("{path}: {e} in {first:?}"))?;
    Ok(match value.get("result") {
        Some(inner) => inner.clone(),
        None => value,
    })
}

fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Value, String> {
    request(addr, "GET", path, "", timeout)
}

pub fn post(
    addr: SocketAddr,
    path: &str,
    body: &Value,
    timeout: Duration,
) -> Result<Value, String> {
    request(addr, "POST", path, &body.to_string(), timeout)
}

/// Grants a lease of `ttl_s` seconds; returns its id.
pub fn lease_grant(addr: SocketAddr, ttl_s: u64, timeout: Duration) -> Result<u64, String> {
    let reply = post(addr, "/v3/lease/grant", &json!({ "TTL": ttl_s }), timeout)?;
    if let Some(e) = reply.get("error") {
        return Err(format!("lease grant: {e}"));
    }
    Ok(num(&reply["ID"]))
}

/// Renews a lease to its full length once.
pub fn lease_keepalive(addr: SocketAddr, id: u64, timeout: Duration) -> Result<(), String> {
    post(
        addr,
        "/v3/lease/keepalive",
        &json!({ "ID": id.to_string() }),
        timeout,
    )
    .map(|_| ())
}

pub fn lease_revoke(addr: SocketAddr, id: u64, timeout: Duration) -> Result<(), String> {
    post(
        addr,
        "/v3/lease/revoke",
        &json!({ "ID": id.to_string() }),
        timeout,
    )
    .map(|_| ())
}

/// The outcome of a lock call.
pub struct Locked {
    pub key: Vec<u8>,
    /// The lock key's creation revision: etcd's fencing token for this hold.
    pub token: u64,
}

/// Waits (at most `timeout`) for the lock `name` with the lease `lease`, then reads the lock
/// key's creation revision. `None` on a timeout: closing the call makes etcd delete the
/// waiter's key.
pub fn lock(
    addr: SocketAddr,
    name: &str,
    lease: u64,
    timeout: Duration,
) -> Result<Option<Locked>, String> {
    let body = json!({ "name": b64(name.as_bytes()), "lease": lease.to_string() });
    let reply = match post(addr, "/v3/lock/lock", &body, timeout) {
        Ok(reply) => reply,
        Err(e) if e.starts_with(TIMED_OUT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let key = unb64(reply["key"].as_str().unwrap_or(""));
    if key.is_empty() {
        return Err(format!("lock: no key in {reply}"));
    }
    let range = post(
        addr,
        "/v3/kv/range",
        &json!({ "key": b64(&key) }),
        Duration::from_secs(5),
    )?;
    let token = range["kvs"]
        .get(0)
        .map(|kv| num(&kv["create_revision"]))
        .unwrap_or(0);
    Ok(Some(Locked { key, token }))
}

/// Lets go of a lock by deleting its key, which is all etcd's unlock call does; the delete's
/// reply also says whether the key was still there (a key whose lease ended is gone).
/// Returns the revision etcd answered with and whether this call deleted the key.
pub fn unlock(addr: SocketAddr, key: &[u8], timeout: Duration) -> Result<(u64, bool), String> {
    let reply = post(
        addr,
        "/v3/kv/deleterange",
        &json!({ "key": b64(key) }),
        timeout,
    )?;
    Ok((
        num(&reply["header"]["revision"]),
        num(&reply["deleted"]) > 0,
    ))
}

/// The service's current revision.
pub fn revision(addr: SocketAddr) -> Result<u64, String> {
    let reply = post(
        addr,
        "/v3/kv/range",
        &json!({ "key": b64(b"\0"), "count_only": true }),
        Duration::from_secs(5),
    )?;
    Ok(num(&reply["header"]["revision"]))
}

/// One change to a key, as etcd's watch reported it.
#[derive(Clone, Debug)]
pub struct Change {
    pub seen: Instant,
    pub delete: bool,
    pub key: Vec<u8>,
    pub revision: u64,
    pub create_revision: u64,
    pub lease: u64,
}

/// A watch on every key of one etcd, from its first revision, read by a thread of its own.
pub struct Watch {
    stream: TcpStream,
    thread: Option<std::thread::JoinHandle<Vec<Change>>>,
    latest: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Watch {
    pub fn start(addr: SocketAddr) -> Result<Watch, String> {
        let mut stream = connect(addr, Duration::from_secs(5))?;
        let body = json!({ "create_request": {
            "key": b64(b"\0"), "range_end": b64(b"\0"), "start_revision": "1" } });
        send(&mut stream, addr, "POST", "/v3/watch", &body.to_string())?;
        let reader = stream.try_clone().map_err(|e| format!("watch: {e}"))?;
        let latest = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = latest.clone();
        let thread = std::thread::spawn(move || read_watch(reader, &seen));
        Ok(Watch {
            stream,
            thread: Some(thread),
            latest,
        })
    }

    /// Waits until the watch has reported `revision` (or a few seconds pass), then ends it and
    /// returns every change it saw.
    pub fn finish(mut self, revision: u64) -> Vec<Change> {
        let start = Instant::now();
        while self.latest.load(Ordering::SeqCst) < revision
            && start.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.stream.shutdown(Shutdown::Both);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn read_watch(stream: TcpStream, latest: &std::sync::atomic::AtomicU64) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut reader = BufReader::new(stream);
    let Ok((200, chunked, _)) = read_head(&mut reader, "/v3/watch") else {
        return changes;
    };
    // The gateway writes one JSON reply per line; chunks need not follow lines.
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let next = if chunked {
            read_chunk(&mut reader, "/v3/watch").ok().flatten()
        } else {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(line),
            }
        };
        let Some(bytes) = next else {
            return changes;
        };
        let seen = Instant::now();
        pending.extend_from_slice(&bytes);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Ok(value) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let result = &value["result"];
            for e in result["events"].as_array().into_iter().flatten() {
                let kv = &e["kv"];
                let change = Change {
                    seen,
                    delete: e["type"] == "DELETE",
                    key: unb64(kv["key"].as_str().unwrap_or("")),
                    revision: num(&kv["mod_revision"]),
                    create_revision: num(&kv["create_revision"]),
                    lease: num(&kv["lease"]),
                };
                latest.fetch_max(change.revision, Ordering::SeqCst);
                changes.push(change);
            }
        }
    }
}
