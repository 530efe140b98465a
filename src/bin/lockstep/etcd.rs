//! Real etcd processes for `lockstep record`, and the few calls of etcd's v3 HTTP/JSON gateway
//! the recorder makes (leases, locks, ranges and one watch per service).
//!
//! Every process started here is stopped on every way out: when its [`Etcd`] is dropped (a
//! normal end, an error, a panic that unwinds), from a signal handler on Ctrl-C, `SIGTERM` or
//! `SIGHUP`, and by the kernel if this process dies any other way (the child asks for
//! `SIGKILL` when its parent goes).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// The program started for each lock service.
pub const ETCD: &str = "etcd";

/// How long a new etcd may take to answer its health check.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// One slot per process that may be running, read by the signal handler. A handler may only
/// do async-signal-safe work, so the process ids live in atomics, not behind a lock.
const SLOTS: usize = 16;
static RUNNING: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// The temporary folder of the recording under way, for the signal handler to remove (a C
/// string leaked while the folder exists, or null).
static FOLDER: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(signal: libc::c_int) {
    for slot in &RUNNING {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            // SIGKILL, not SIGTERM: a process the recorder stopped (an outage) would not act on
            // SIGTERM until it is continued.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    // The etcd data (tens of megabytes each, mostly a preallocated log) is removed by `rm`:
    // only fork, exec and wait are safe to call here, not the standard library's file system.
    let folder = FOLDER.load(Ordering::SeqCst);
    if !folder.is_null() {
        unsafe {
            let rm = c"/bin/rm".as_ptr();
            let argv = [rm, c"-rf".as_ptr(), folder, std::ptr::null()];
            let pid = libc::fork();
            if pid == 0 {
                libc::execv(rm, argv.as_ptr());
                libc::_exit(127);
            }
            if pid > 0 {
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
    }
    unsafe { libc::_exit(128 + signal) };
}

/// Installs the handler that stops every started etcd when the recorder is interrupted.
fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        unsafe { libc::signal(signal, handler) };
    }
}

/// Puts a started process in a free slot, for the signal handler to kill; returns the slot.
/// Every lock service the recorder starts goes through here, whatever its product.
pub fn track(pid: u32) -> Result<usize, String> {
    install_signal_handlers();
    let slot = RUNNING
        .iter()
        .position(|s| {
            s.compare_exchange(0, pid as i32, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
        .ok_or("too many lock service processes at once")?;
    Ok(slot)
}

/// Frees a slot once its process is killed and reaped.
pub fn untrack(slot: usize) {
    RUNNING[slot].store(0, Ordering::SeqCst);
}

/// A folder under the system's temporary folder, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("lockstep-{label}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        if let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) {
            let old = FOLDER.swap(c.into_raw(), Ordering::SeqCst);
            if !old.is_null() {
                drop(unsafe { std::ffi::CString::from_raw(old) });
            }
        }
        Ok(TempDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let old = FOLDER.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !old.is_null() {
            drop(unsafe { std::ffi::CString::from_raw(old) });
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A free loopback port: bound once to port 0 and let go, so etcd can bind it next.
fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// The version line of the installed etcd (`etcd Version: 3.4.23`), or a message saying how to
/// install it.
pub fn version() -> Result<String, String> {
    let output = Command::new(ETCD)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!("cannot run {ETCD} ({e}): install etcd (scripts/install.sh installs Debian's etcd-server)")
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("etcd Version:"))
        .map(|v| format!("etcd {}", v.trim()))
        .ok_or_else(|| format!("{ETCD} --version printed no version"))
}

/// One running single-node etcd, with its data in its own folder.
pub struct Etcd {
    child: Child,
    slot: usize,
    pub client: SocketAddr,
    log: PathBuf,
}

impl Etcd {
    /// Starts an etcd named `name` with its data under `dir`, and waits until it answers.
    /// Call from the main thread: the child's request to die with its parent follows the
    /// thread that started it.
    pub fn start(name: &str, dir: &Path) -> Result<Etcd, String> {
        install_signal_handlers();
        let slot = RUNNING
            .iter()
            .position(|s| s.load(Ordering::SeqCst) == 0)
            .ok_or("too many etcd processes at once")?;
        let client_port = free_port()?;
        let peer_port = free_port()?;
        let client_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let data = dir.join(format!("{name}.etcd"));
        let log = dir.join(format!("{name}.log"));
        let log_file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
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
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        // The kernel kills the child if the recorder dies in a way no handler sees (SIGKILL).
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| {
            format!("cannot start {ETCD} ({e}): install etcd (scripts/install.sh installs Debian's etcd-server)")
        })?;
        RUNNING[slot].store(child.id() as i32, Ordering::SeqCst);
        let mut etcd = Etcd {
            child,
            slot,
            client: SocketAddr::from(([127, 0, 0, 1], client_port)),
            log,
        };
        etcd.wait_healthy()?;
        Ok(etcd)
    }

    fn wait_healthy(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "etcd exited at start ({status}): {}",
                    self.log_tail()
                ));
            }
            let healthy = get(self.client, "/health", Duration::from_millis(500))
                .is_ok_and(|v| v["health"] == "true");
            if healthy {
                return Ok(());
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "etcd did not become healthy within {}s: {}",
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(3)..].join(" / ")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Stops a process where it stands (an outage: it answers nothing until continued), or
/// continues it.
pub fn signal(pid: u32, stop: bool) {
    let signal = if stop { libc::SIGSTOP } else { libc::SIGCONT };
    unsafe { libc::kill(pid as i32, signal) };
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        RUNNING[self.slot].store(0, Ordering::SeqCst);
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
