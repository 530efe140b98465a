//! Real ZooKeeper servers for `lockstep record`, a small client of ZooKeeper's binary protocol
//! (jute records over TCP), the standard lock recipe on it, and a reader of the server's
//! transaction log, which is the service's own order.
//!
//! Each server is started directly with `java` from Debian's `zookeeper` package, standalone,
//! with a minimal configuration and its data in a folder of its own. Like every lock service the
//! recorder starts, it is stopped on every way out: when its [`ZooKeeper`] is dropped, from the
//! recorder's signal handler, and by the kernel if the recorder dies any other way.
//!
//! The client makes every call with a deadline and never retries or reconnects on its own: a
//! call that does not answer in time is an outcome the caller decides about.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use lockstep::scenario::{Protocol, Scenario};
use lockstep::trace::ServiceOp;
use lockstep::world::{ProtocolConfig, World};

use super::backend::{
    Answer, Ask, Backend, Check, Entry, Grant, Logged, Places, Product, ServiceLog,
};
use super::process::{free_port, Process};

/// The program that runs each server.
pub const JAVA: &str = "java";

/// The server's classes, and a logger binding so that its warnings reach its log file.
pub const CLASSPATH: &str = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";

/// Where to look when ZooKeeper is missing.
const INSTALL: &str = "install ZooKeeper (scripts/install.sh installs Debian's zookeeper)";

/// How long a new server may take to accept a session.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's tick, in milliseconds: it checks for expired sessions once a tick, so a session
/// ends at most this late. Short, so that a session timeout is a lease of nearly its length.
pub const TICK_MS: u32 = 10;

/// The longest session timeout a server grants (a day): a service without a lease gets a
/// session that outlives any recording.
pub const MAX_SESSION_MS: u32 = 86_400_000;

/// The largest frame read from a server: the recorder's replies are a few hundred bytes, and
/// ZooKeeper's own limit on a record is a megabyte.
const FRAME_MAX: usize = 1 << 20;

/// The most entries read from one transaction log.
const LOG_ENTRIES_MAX: usize = 1_000_000;

// Operation codes (`ZooDefs.OpCode`).
const OP_CREATE: i32 = 1;
const OP_DELETE: i32 = 2;
const OP_EXISTS: i32 = 3;
const OP_GET_CHILDREN: i32 = 8;
const OP_PING: i32 = 11;
const OP_CREATE2: i32 = 15;
const OP_CREATE_SESSION: i32 = -10;
const OP_CLOSE_SESSION: i32 = -11;

// Special transaction ids of the protocol.
const XID_NOTIFICATION: i32 = -1;
const XID_PING: i32 = -2;

// Error codes (`KeeperException.Code`).
pub const NO_NODE: i32 = -101;
pub const NODE_EXISTS: i32 = -110;

/// A node's creation flags: persistent, or ephemeral and sequential (the lock recipe's).
pub const PERSISTENT: i32 = 0;
pub const EPHEMERAL_SEQUENTIAL: i32 = 3;

/// The first bytes of a transaction log ("ZKLG").
const LOG_MAGIC: i32 = 0x5a4b_4c47;

/// The installed ZooKeeper's version ("ZooKeeper 3.8.0"), or a message saying how to install it.
pub fn version() -> Result<String, String> {
    let output = Command::new(JAVA)
        .args(["-cp", CLASSPATH, "org.apache.zookeeper.Version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {JAVA} ({e}): {INSTALL}"))?;
    // "3.8.0-${mvngit.commit.id}, built on 2024-12-29 17:54 UTC": the release is what comes
    // before the build's details.
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.lines().next().unwrap_or("").trim();
    let release: String = first
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if !output.status.success() || release.is_empty() {
        return Err(format!(
            "ZooKeeper's classes are missing from {CLASSPATH}: {INSTALL}"
        ));
    }
    Ok(format!("ZooKeeper {release}"))
}

/// One running standalone ZooKeeper server, with its configuration, data and log in its own
/// folder.
pub struct ZooKeeper {
    process: Process,
    pub client: SocketAddr,
    data: PathBuf,
}

impl ZooKeeper {
    /// Starts a server named `name` under `dir`, and waits until it accepts a session. Call
    /// from the main thread: the child's request to die with its parent follows the thread
    /// that started it.
    pub fn start(name: &str, dir: &Path) -> Result<ZooKeeper, String> {
        let home = dir.join(format!("{name}.zookeeper"));
        let data = home.join("data");
        std::fs::create_dir_all(&data)
            .map_err(|e| format!("cannot create {}: {e}", data.display()))?;
        let port = free_port()?;
        let config = home.join("zoo.cfg");
        // Standalone (no servers listed), on loopback only, with no admin web server; the
        // transaction log is written but not forced to disk on every write, which only a
        // machine's crash would tell apart.
        let text = format!(
            "tickTime={TICK_MS}\n\
             dataDir={}\n\
             clientPort={port}\n\
             clientPortAddress=127.0.0.1\n\
             minSessionTimeout={}\n\
             maxSessionTimeout={MAX_SESSION_MS}\n\
             admin.enableServer=false\n\
             4lw.commands.whitelist=\n\
             forceSync=no\n\
             autopurge.purgeInterval=0\n",
            data.display(),
            2 * TICK_MS,
        );
        std::fs::write(&config, text)
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        let log = home.join("server.log");
        let mut command = Command::new(JAVA);
        command
            // A small heap and one collector thread: two servers share the machine with the
            // recorder, and a short-lived server needs little.
            .args(["-Xms16m", "-Xmx256m", "-XX:+UseSerialGC"])
            .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
            .arg(format!("-Dzookeeper.log.dir={}", home.display()))
            .args(["-cp", CLASSPATH])
            .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
            .arg(&config)
            .current_dir(&home);
        let process = Process::spawn(command, &log, INSTALL)?;
        let mut server = ZooKeeper {
            process,
            client: SocketAddr::from(([127, 0, 0, 1], port)),
            data,
        };
        server.wait_serving()?;
        Ok(server)
    }

    /// Waits until a session can be opened (and closes it).
    fn wait_serving(&mut self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.process.exited() {
                return Err(format!(
                    "ZooKeeper exited at start ({status}): {}",
                    self.process.log_tail()
                ));
            }
            if let Ok(session) = Session::connect(self.client, 10_000, Duration::from_millis(500)) {
                session.close(Duration::from_secs(2));
                return Ok(());
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "ZooKeeper did not accept a session within {}s: {}",
                    START_TIMEOUT.as_secs(),
                    self.process.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every transaction the server has logged so far, in its zxid order.
    pub fn transactions(&self) -> Result<Vec<Txn>, String> {
        read_logs(&self.data.join("version-2"))
    }
}

/// What went wrong with a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No answer by the call's deadline.
    TimedOut(String),
    /// The connection is gone: the server closed it (an expired session) or it failed.
    Closed(String),
    /// The server answered with an error code.
    Server(i32, String),
    /// The server's answer could not be read.
    Protocol(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::TimedOut(what) => write!(f, "timed out: {what}"),
            Error::Closed(what) => write!(f, "connection closed: {what}"),
            Error::Server(code, what) => write!(f, "{what}: ZooKeeper error {code}"),
            Error::Protocol(what) => write!(f, "unreadable reply: {what}"),
        }
    }
}

/// A jute record being written: big-endian numbers, length-prefixed strings and buffers.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn int(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn long(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bool(&mut self, v: bool) -> &mut Self {
        self.0.push(u8::from(v));
        self
    }
    fn buffer(&mut self, v: &[u8]) -> &mut Self {
        self.int(v.len() as i32);
        self.0.extend_from_slice(v);
        self
    }
    fn string(&mut self, v: &str) -> &mut Self {
        self.buffer(v.as_bytes())
    }
    /// The frame: the record's length, then the record.
    fn frame(&self) -> Vec<u8> {
        let mut f = (self.0.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(&self.0);
        f
    }
}

/// A jute record being read; every read is bounded by what is left.
struct In<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    fn new(bytes: &'a [u8]) -> In<'a> {
        In { bytes, at: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "a record ends after {} bytes, {n} more were expected at byte {}",
                    self.bytes.len(),
                    self.at
                )
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn int(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn long(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bool(&mut self) -> Result<bool, String> {
        Ok(self.take(1)?[0] != 0)
    }
    fn buffer(&mut self) -> Result<&'a [u8], String> {
        let n = self.int()?;
        if n < 0 {
            return Ok(&[]);
        }
        self.take(n as usize)
    }
    fn string(&mut self) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.buffer()?).into_owned())
    }
    fn strings(&mut self) -> Result<Vec<String>, String> {
        let n = self.int()?;
        if n < 0 {
            return Ok(Vec::new());
        }
        // Each string takes four bytes at least: a count larger than that is not a list.
        if n as usize > (self.bytes.len() - self.at) / 4 {
            return Err(format!(
                "a list of {n} strings in {} bytes",
                self.bytes.len()
            ));
        }
        (0..n).map(|_| self.string()).collect()
    }
    fn acls(&mut self) -> Result<(), String> {
        let n = self.int()?;
        if n < 0 || n as usize > self.bytes.len() {
            return Err(format!("a list of {n} ACLs"));
        }
        for _ in 0..n {
            self.int()?;
            self.string()?;
            self.string()?;
        }
        Ok(())
    }
}

/// A node's metadata (`Stat`); the recorder uses its creation zxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The zxid of the transaction that created the node: the lock recipe's fencing token.
    pub czxid: u64,
    pub mzxid: u64,
    pub ephemeral_owner: i64,
}

fn stat(r: &mut In) -> Result<Stat, String> {
    let czxid = r.long()? as u64;
    let mzxid = r.long()? as u64;
    let _ctime = r.long()?;
    let _mtime = r.long()?;
    let _version = r.int()?;
    let _cversion = r.int()?;
    let _aversion = r.int()?;
    let ephemeral_owner = r.long()?;
    let _data_length = r.int()?;
    let _children = r.int()?;
    let _pzxid = r.long()?;
    Ok(Stat {
        czxid,
        mzxid,
        ephemeral_owner,
    })
}

/// A watch that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: i32,
    pub path: String,
}

/// A reply read by the session's reader thread: (xid, zxid, error code, the rest).
type Reply = (i32, i64, i32, Vec<u8>);

/// One ZooKeeper session over one TCP connection. A thread reads every frame the server sends:
/// replies go to the caller, watch events to their own queue, ping answers nowhere. The session
/// never reconnects: when the connection goes, every later call fails.
pub struct Session {
    pub id: i64,
    /// The session timeout the server granted, in milliseconds.
    pub timeout_ms: i32,
    writer: Mutex<TcpStream>,
    replies: Mutex<Receiver<Reply>>,
    events: Mutex<Receiver<Event>>,
    xid: AtomicI32,
    closed: Arc<AtomicBool>,
    addr: SocketAddr,
}

/// Reads one frame: its length, then that many bytes.
fn read_frame(stream: &mut impl Read) -> Result<Vec<u8>, std::io::Error> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = i32::from_be_bytes(len);
    if len < 0 || len as usize > FRAME_MAX {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes"),
        ));
    }
    let mut body = vec![0u8; len as usize];
    stream.read_exact(&mut body)?;
    Ok(body)
}

fn io_error(what: &str, e: &std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            Error::TimedOut(what.to_string())
        }
        _ => Error::Closed(format!("{what}: {e}")),
    }
}

impl Session {
    /// Opens a session asking for `timeout_ms` as its timeout; the connection and the
    /// handshake each take at most `io_timeout`.
    pub fn connect(
        addr: SocketAddr,
        timeout_ms: i32,
        io_timeout: Duration,
    ) -> Result<Session, Error> {
        let io_timeout = io_timeout.max(Duration::from_millis(1));
        let what = format!("connect to {addr}");
        let mut stream =
            TcpStream::connect_timeout(&addr, io_timeout).map_err(|e| io_error(&what, &e))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(io_timeout))
            .map_err(|e| io_error(&what, &e))?;
        stream
            .set_write_timeout(Some(io_timeout))
            .map_err(|e| io_error(&what, &e))?;
        let mut request = Out::default();
        request
            .int(0) // protocol version
            .long(0) // last zxid seen
            .int(timeout_ms)
            .long(0) // a new session
            .buffer(&[0; 16]) // its password, chosen by the server
            .bool(false); // not read-only
        stream
            .write_all(&request.frame())
            .map_err(|e| io_error(&what, &e))?;
        let reply = read_frame(&mut stream).map_err(|e| io_error(&what, &e))?;
        let mut r = In::new(&reply);
        let parsed = (|| -> Result<(i32, i64), String> {
            let _protocol = r.int()?;
            let timeout = r.int()?;
            let id = r.long()?;
            r.buffer()?;
            Ok((timeout, id))
        })();
        let (granted, id) = parsed.map_err(|e| Error::Protocol(format!("{what}: {e}")))?;
        if granted <= 0 {
            return Err(Error::Closed(format!(
                "{what}: the server refused the session"
            )));
        }
        // The reader blocks for at most a second at a time, so it sees the session close.
        stream
            .set_read_timeout(Some(Duration::from_secs(1)))
            .map_err(|e| io_error(&what, &e))?;
        let mut reader = stream.try_clone().map_err(|e| io_error(&what, &e))?;
        let (reply_tx, reply_rx) = mpsc::channel();
        let (event_tx, event_rx) = mpsc::channel();
        let closed = Arc::new(AtomicBool::new(false));
        let done = closed.clone();
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let frame = match read_frame(&mut reader) {
                    Ok(frame) => frame,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) =>
                    {
                        // A timeout between frames is idleness; in the middle of one the
                        // stream is lost, and the next read fails on it.
                        continue;
                    }
                    Err(_) => break,
                };
                let mut r = In::new(&frame);
                let Ok((xid, zxid, err)) = (|| Ok::<_, String>((r.int()?, r.long()?, r.int()?)))()
                else {
                    break;
                };
                match xid {
                    XID_PING => {}
                    XID_NOTIFICATION => {
                        let event = (|| {
                            Ok::<_, String>(Event {
                                kind: r.int()?,
                                path: {
                                    r.int()?;
                                    r.string()?
                                },
                            })
                        })();
                        if let Ok(event) = event {
                            let _ = event_tx.send(event);
                        }
                    }
                    _ => {
                        if reply_tx
                            .send((xid, zxid, err, frame[r.at..].to_vec()))
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            done.store(true, Ordering::SeqCst);
        });
        Ok(Session {
            id,
            timeout_ms: granted,
            writer: Mutex::new(stream),
            replies: Mutex::new(reply_rx),
            events: Mutex::new(event_rx),
            xid: AtomicI32::new(1),
            closed,
            addr,
        })
    }

    /// Whether the connection is gone (closed by either side).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn write(&self, frame: &[u8], what: &str) -> Result<(), Error> {
        if self.is_closed() {
            return Err(Error::Closed(what.to_string()));
        }
        let mut stream = self.writer.lock().unwrap();
        stream.write_all(frame).map_err(|e| io_error(what, &e))
    }

    /// Sends a request and waits for its reply until `deadline`; returns the reply's zxid and
    /// its body. A reply to an earlier call that timed out is skipped.
    fn call(
        &self,
        op: i32,
        body: &Out,
        what: &str,
        deadline: Instant,
    ) -> Result<(u64, Vec<u8>), Error> {
        let xid = self.xid.fetch_add(1, Ordering::SeqCst);
        let mut request = Out::default();
        request.int(xid).int(op);
        request.0.extend_from_slice(&body.0);
        let replies = self.replies.lock().unwrap();
        self.write(&request.frame(), what)?;
        // At most one reply per request sent before this one, then this one.
        for _ in 0..=xid {
            let left = deadline.saturating_duration_since(Instant::now());
            match replies.recv_timeout(left) {
                Ok((x, zxid, err, rest)) if x == xid => {
                    if err != 0 {
                        return Err(Error::Server(err, what.to_string()));
                    }
                    return Ok((zxid as u64, rest));
                }
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => return Err(Error::TimedOut(what.to_string())),
                Err(RecvTimeoutError::Disconnected) => return Err(Error::Closed(what.to_string())),
            }
        }
        Err(Error::Protocol(format!("{what}: no reply with xid {xid}")))
    }

    /// Creates a node open to everyone (`world:anyone`, every permission); returns its path
    /// (with the sequence number the server appended, for a sequential node) and its `Stat`.
    pub fn create(
        &self,
        path: &str,
        flags: i32,
        deadline: Instant,
    ) -> Result<(String, Stat), Error> {
        let mut body = Out::default();
        body.string(path).buffer(&[]);
        body.int(1).int(31).string("world").string("anyone");
        body.int(flags);
        let what = format!("create {path}");
        let (_, reply) = self.call(OP_CREATE2, &body, &what, deadline)?;
        let mut r = In::new(&reply);
        let created = r.string().and_then(|p| Ok((p, stat(&mut r)?)));
        created.map_err(|e| Error::Protocol(format!("{what}: {e}")))
    }

    /// Creates a persistent node unless it is there already.
    pub fn ensure(&self, path: &str, deadline: Instant) -> Result<(), Error> {
        match self.create(path, PERSISTENT, deadline) {
            Ok(_) => Ok(()),
            Err(Error::Server(NODE_EXISTS, _)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// A node's children's names, without setting a watch.
    pub fn children(&self, path: &str, deadline: Instant) -> Result<Vec<String>, Error> {
        let mut body = Out::default();
        body.string(path).bool(false);
        let what = format!("getChildren {path}");
        let (_, reply) = self.call(OP_GET_CHILDREN, &body, &what, deadline)?;
        In::new(&reply)
            .strings()
            .map_err(|e| Error::Protocol(format!("{what}: {e}")))
    }

    /// A node's `Stat`, or `None` when there is no such node; with `watch`, the server sends
    /// one event when the node is deleted (or created, or changed).
    pub fn exists(
        &self,
        path: &str,
        watch: bool,
        deadline: Instant,
    ) -> Result<Option<Stat>, Error> {
        let mut body = Out::default();
        body.string(path).bool(watch);
        let what = format!("exists {path}");
        match self.call(OP_EXISTS, &body, &what, deadline) {
            Ok((_, reply)) => stat(&mut In::new(&reply))
                .map(Some)
                .map_err(|e| Error::Protocol(format!("{what}: {e}"))),
            Err(Error::Server(NO_NODE, _)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes a node, whatever its version; returns the zxid the server answered with.
    pub fn delete(&self, path: &str, deadline: Instant) -> Result<u64, Error> {
        let mut body = Out::default();
        body.string(path).int(-1);
        self.call(OP_DELETE, &body, &format!("delete {path}"), deadline)
            .map(|(zxid, _)| zxid)
    }

    /// Tells the server the client is alive; the answer is not waited for.
    pub fn ping(&self) -> Result<(), Error> {
        let mut request = Out::default();
        request.int(XID_PING).int(OP_PING);
        self.write(&request.frame(), "ping")
    }

    /// The next watch event, waiting until `deadline` at most.
    pub fn next_event(&self, deadline: Instant) -> Result<Option<Event>, Error> {
        let events = self.events.lock().unwrap();
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(event) => Ok(Some(event)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Error::Closed(format!("watch on {}", self.addr)))
            }
        }
    }

    /// Ends the session (the server deletes its ephemeral nodes), waiting `timeout` at most for
    /// the answer, and closes the connection.
    pub fn close(&self, timeout: Duration) {
        let _ = self.call(
            OP_CLOSE_SESSION,
            &Out::default(),
            "closeSession",
            Instant::now() + timeout,
        );
        self.shut();
    }

    /// Closes the connection without ending the session: the server ends it once its timeout
    /// passes with no word from the client.
    pub fn shut(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Ok(stream) = self.writer.lock() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shut();
    }
}

/// Pings a session every third of its timeout while `alive` says the client runs (a paused
/// client's process is stopped, heartbeats included), until the session closes or `until`.
pub fn heartbeat(
    session: Arc<Session>,
    until: Instant,
    alive: impl Fn() -> bool + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let every = Duration::from_millis((session.timeout_ms / 3).max(1) as u64);
    std::thread::spawn(move || {
        // Bounded by `until` and by the session's end, in steps of at most 20 ms so that a
        // closed session stops it soon.
        let step = every.min(Duration::from_millis(20));
        let mut next = Instant::now() + every;
        while !session.is_closed() && Instant::now() < until {
            std::thread::sleep(step);
            if Instant::now() >= next {
                if alive() {
                    let _ = session.ping();
                }
                next = Instant::now() + every;
            }
        }
    })
}

/// The lock recipe's parent node of a lock's nodes.
pub fn lock_dir(name: &str) -> String {
    format!("/lock/{name}")
}

/// A lock node's sequence number: the ten digits the server appended to its name.
pub fn sequence(node: &str) -> Option<u64> {
    let name = node.rsplit('/').next()?;
    let digits = name.get(name.len().checked_sub(10)?..)?;
    digits.parse().ok()
}

/// A lock held: its node and the node's creation zxid, the fencing token.
#[derive(Clone, Debug)]
pub struct Locked {
    pub node: String,
    pub czxid: u64,
}

/// How waiting for a lock ended.
pub enum Waited {
    Held(Locked),
    /// The deadline came first; the node (if it was created) is still there.
    TimedOut(Option<String>),
}

/// The standard lock recipe: create an ephemeral sequential node under the lock's folder; the
/// node with the lowest sequence number holds the lock; any other waits for the node just
/// before its own to go, then looks again. Waits until `deadline` at most; every call is bounded
/// by it.
pub fn lock(session: &Session, name: &str, deadline: Instant) -> Result<Waited, Error> {
    let dir = lock_dir(name);
    let timed_out = |e: &Error| matches!(e, Error::TimedOut(_));
    let (node, stat) = match session.create(&format!("{dir}/lock-"), EPHEMERAL_SEQUENTIAL, deadline)
    {
        Ok(created) => created,
        Err(e) if timed_out(&e) => return Ok(Waited::TimedOut(None)),
        Err(e) => return Err(e),
    };
    let mine = sequence(&node).ok_or_else(|| Error::Protocol(format!("created {node}")))?;
    // Each round either finds the lock held or waits for one deletion; there are at most as
    // many nodes ahead as clients, so a bound far above that only stops a server gone wrong.
    for _ in 0..10_000 {
        let children = match session.children(&dir, deadline) {
            Ok(c) => c,
            Err(e) if timed_out(&e) => return Ok(Waited::TimedOut(Some(node))),
            Err(e) => return Err(e),
        };
        let ahead = children
            .iter()
            .filter_map(|c| sequence(c).map(|s| (s, c)))
            .filter(|(s, _)| *s < mine)
            .max_by_key(|(s, _)| *s);
        let Some((_, before)) = ahead else {
            return Ok(Waited::Held(Locked {
                node,
                czxid: stat.czxid,
            }));
        };
        let before = format!("{dir}/{before}");
        match session.exists(&before, true, deadline) {
            Ok(None) => continue,
            Ok(Some(_)) => {}
            Err(e) if timed_out(&e) => return Ok(Waited::TimedOut(Some(node))),
            Err(e) => return Err(e),
        }
        // Any event means something changed: look again.
        match session.next_event(deadline)? {
            Some(_) => continue,
            None => return Ok(Waited::TimedOut(Some(node))),
        }
    }
    Err(Error::Protocol(format!(
        "{node}: the lock changed hands more than 10000 times while waiting"
    )))
}

/// One transaction of a server's log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// The session that asked for it (the expired session, for a session the server ended).
    pub session: i64,
    pub zxid: u64,
    /// The server's clock when it ordered the transaction, in milliseconds since the epoch.
    pub time_ms: i64,
    pub op: TxnOp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnOp {
    Create {
        path: String,
        ephemeral: bool,
    },
    Delete {
        path: String,
    },
    CreateSession,
    /// A session ended, by its client or by expiry: the server deleted its ephemeral nodes.
    CloseSession,
    /// Anything else (a failed request is logged as an error transaction).
    Other(i32),
}

/// Reads every transaction log file of a data folder (`log.<first zxid in hex>`), in order.
fn read_logs(dir: &Path) -> Result<Vec<Txn>, String> {
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(first) = name
                .strip_prefix("log.")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
            {
                files.push((first, entry.path()));
            }
        }
    }
    files.sort();
    let mut txns = Vec::new();
    for (_, path) in files {
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        txns.extend(parse_log(&bytes).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    txns.sort_by_key(|t| t.zxid);
    Ok(txns)
}

/// A transaction log: a header (magic, version, database id), then entries, each a checksum,
/// the length of the transaction's bytes, the bytes and an end-of-record byte. The file is
/// preallocated with zeros: a zero length ends it.
pub fn parse_log(bytes: &[u8]) -> Result<Vec<Txn>, String> {
    let mut r = In::new(bytes);
    let magic = r.int()?;
    if magic != LOG_MAGIC {
        return Err(format!(
            "not a ZooKeeper transaction log (magic {magic:#x})"
        ));
    }
    let _version = r.int()?;
    let _db = r.long()?;
    let mut txns = Vec::new();
    for _ in 0..LOG_ENTRIES_MAX {
        if bytes.len() - r.at < 12 {
            break;
        }
        let _crc = r.long()?;
        let len = r.int()?;
        if len <= 0 {
            break;
        }
        let Ok(entry) = r.take(len as usize) else {
            // The last entry being written when the log was read.
            break;
        };
        if r.take(1).ok() != Some(&[0x42][..]) {
            break;
        }
        let mut e = In::new(entry);
        let session = e.long()?;
        let _cxid = e.int()?;
        let zxid = e.long()? as u64;
        let time_ms = e.long()?;
        let kind = e.int()?;
        let op = match kind {
            OP_CREATE | OP_CREATE2 => {
                let path = e.string()?;
                e.buffer()?;
                e.acls()?;
                TxnOp::Create {
                    path,
                    ephemeral: e.bool()?,
                }
            }
            OP_DELETE => TxnOp::Delete { path: e.string()? },
            OP_CREATE_SESSION => TxnOp::CreateSession,
            OP_CLOSE_SESSION => TxnOp::CloseSession,
            other => TxnOp::Other(other),
        };
        txns.push(Txn {
            session,
            zxid,
            time_ms,
            op,
        });
    }
    Ok(txns)
}

/// How long a call that should answer at once may take before the recording fails.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// ZooKeeper as a product the recorder plays scenarios on.
pub struct ZooKeeperProduct;

impl Product for ZooKeeperProduct {
    fn name(&self) -> &'static str {
        "zookeeper"
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
                    "ZooKeeper's lock recipe takes no authority token",
                );
            }
            if s.forgets_on_restart {
                check.refuse(
                    places.service_field(scenario, i, "forgets_on_restart"),
                    "a service that forgets on restart",
                    "a ZooKeeper server keeps its transaction log on disk across a restart",
                );
            }
            if s.clock_rate_percent != 100 {
                check.refuse(
                    places.service_field(scenario, i, "clock_rate_percent"),
                    "a service clock that runs fast or slow",
                    "ZooKeeper's session timeouts run on the machine's own clock",
                );
            }
        }
        for (i, c) in scenario.clients.iter().enumerate() {
            let at = || places.client_field(scenario, i, "protocol");
            match &c.protocol {
                Protocol::TokenChain { .. } => check.refuse(
                    at(),
                    "the token_chain protocol",
                    "ZooKeeper's lock recipe takes no authority token",
                ),
                Protocol::Majority { .. } => check.refuse(
                    at(),
                    "the majority protocol",
                    "ZooKeeper's lock recipe waits in a queue, where a majority client's request is a try that is never queued; record it with --on redis",
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
                if l < u64::from(2 * TICK_MS) || l > u64::from(MAX_SESSION_MS) {
                    check.refuse(
                        places.service_field(scenario, i, "lease_ms"),
                        &format!("lease_ms = {l}"),
                        &format!(
                            "a lease is a ZooKeeper session timeout, which the recorder's servers grant between {} ms and {MAX_SESSION_MS} ms",
                            2 * TICK_MS
                        ),
                    );
                }
            }
        }
        // A service's tokens must increase over its whole log; two locks of one server
        // interleave their nodes' creation zxids.
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
                        check.refuse(places.service(scenario, *s as usize), "one service locking two resources", "a ZooKeeper server's zxids are one counter, so two locks' tokens would not each increase in the service's log");
                    }
                }
            }
        }
        check
            .notes
            .push("each service is one standalone ZooKeeper server, whatever its replicas".into());
        if scenario.services.iter().any(|s| s.lease_ms.is_some()) {
            check.notes.push(
                "a lease is the ZooKeeper session's timeout: the server ends a session, and deletes its lock node, when it has heard nothing from the client for that long; a client pings it while it runs, so a lock is lost only by a client that stops (a pause), not by one that holds it long".into(),
            );
        }
        if scenario.services.iter().any(|s| s.first_token != 1) {
            check.notes.push(
                "tokens are the lock nodes' creation zxids, the server's own transaction numbers (first_token is not applied)".into(),
            );
        }
        if scenario.services.iter().any(|s| !s.outages.is_empty()) {
            check.notes.push(
                "an outage stops the ZooKeeper process: requests wait for it instead of being lost, and a session whose timeout passed meanwhile may end when it continues".into(),
            );
        }
    }

    fn scale(&self, _scenario: &Scenario, _max: u64) -> Option<u64> {
        // Session timeouts are milliseconds: no stretch is needed.
        Some(1)
    }

    fn start(&self, world: &World, scale: u64, dir: &Path) -> Result<Box<dyn Backend>, String> {
        let mut servers = Vec::new();
        for (i, _) in world.services.iter().enumerate() {
            servers.push(ZooKeeper::start(&format!("s{i}"), dir)?);
        }
        // The lock recipe's folders exist before any client asks, so that every client's
        // first call is its own node's creation.
        for server in &servers {
            let deadline = Instant::now() + CALL_TIMEOUT;
            let admin =
                Session::connect(server.client, 10_000, CALL_TIMEOUT).map_err(|e| e.to_string())?;
            admin.ensure("/lock", deadline).map_err(|e| e.to_string())?;
            for r in &world.resources {
                admin
                    .ensure(&lock_dir(&r.name), deadline)
                    .map_err(|e| e.to_string())?;
            }
            admin.close(CALL_TIMEOUT);
        }
        Ok(Box::new(Running {
            world: world.clone(),
            scale,
            servers,
            clock: (SystemTime::now(), Instant::now()),
            sessions: Mutex::new(BTreeMap::new()),
            paused: (0..world.clients.len())
                .map(|_| Arc::new(AtomicBool::new(false)))
                .collect(),
        }))
    }
}

/// A lock node as the log is read: whose it is.
struct Node {
    client: u32,
    session: i64,
    czxid: u64,
}

/// One session a client opened for one lock request.
struct Opened {
    client: u32,
    session: Arc<Session>,
    /// When the client asked for its node and when the server answered.
    created: Option<(Instant, Instant)>,
    /// When the client asked to delete its node and when the server answered.
    deleted: Option<(Instant, Instant)>,
    /// When the client ended the session itself (not the server, for want of pings).
    closed: Option<(Instant, Instant)>,
}

/// The servers of one recording, and what the recorder needs to read their logs.
struct Running {
    world: World,
    scale: u64,
    servers: Vec<ZooKeeper>,
    /// The wall clock and the monotonic clock read at one moment: the servers log wall-clock
    /// milliseconds, the recorder keeps monotonic instants.
    clock: (SystemTime, Instant),
    /// (service, session id) → the session and who opened it.
    sessions: Mutex<BTreeMap<(u32, i64), Opened>>,
    /// Whether each client is paused now: a paused client sends no heartbeat.
    paused: Vec<Arc<AtomicBool>>,
}

impl Running {
    fn session_timeout_ms(&self, service: u32) -> i32 {
        self.world.services[service as usize]
            .lease
            .map(|l| (l * self.scale / 1000).max(1))
            .unwrap_or(u64::from(MAX_SESSION_MS))
            .min(u64::from(MAX_SESSION_MS)) as i32
    }

    /// A server's logged time as an instant of the recorder's clock.
    fn instant_of(&self, time_ms: i64) -> Instant {
        let (wall, mono) = self.clock;
        let wall_ms = wall
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let delta = time_ms - wall_ms;
        if delta >= 0 {
            mono + Duration::from_millis(delta as u64)
        } else {
            mono.checked_sub(Duration::from_millis((-delta) as u64))
                .unwrap_or(mono)
        }
    }
}

/// A moment the server logged, kept within the call that caused it: the server did it after the
/// client asked and before the client heard back (its clock counts whole milliseconds).
fn within(at: Instant, call: Option<(Instant, Instant)>) -> Instant {
    match call {
        Some((sent, answered)) => at.max(sent).min(answered),
        None => at,
    }
}

impl Backend for Running {
    /// Opens a session whose timeout is the lease, and waits in the lock recipe's queue, at most
    /// until `give_up`.
    fn lock(&self, ask: &Ask) -> Result<Answer, String> {
        if ask.try_only {
            return Err("ZooKeeper's lock recipe has no try".into());
        }
        let service = ask.service;
        let addr = self.servers[service as usize].client;
        let left = ask.give_up.saturating_duration_since(Instant::now());
        let session = match Session::connect(addr, self.session_timeout_ms(service), left) {
            Ok(s) => Arc::new(s),
            Err(Error::TimedOut(_)) => return Ok(Answer::Unanswered),
            Err(_) if Instant::now() >= ask.deadline => return Ok(Answer::Unanswered),
            Err(e) => return Err(e.to_string()),
        };
        let paused = self.paused[ask.client as usize].clone();
        heartbeat(session.clone(), ask.deadline + CALL_TIMEOUT, move || {
            !paused.load(Ordering::SeqCst)
        });
        let key = (service, session.id);
        self.sessions.lock().unwrap().insert(
            key,
            Opened {
                client: ask.client,
                session: session.clone(),
                created: None,
                deleted: None,
                closed: None,
            },
        );
        let sent = Instant::now();
        let waited = lock(&session, ask.resource, ask.give_up);
        let answered = Instant::now();
        let node = match &waited {
            Ok(Waited::Held(l)) => Some(l.node.clone()),
            Ok(Waited::TimedOut(node)) => node.clone(),
            Err(_) => None,
        };
        if node.is_some() {
            // The creation is the recipe's first call: it was answered before the wait ended.
            if let Some(o) = self.sessions.lock().unwrap().get_mut(&key) {
                o.created = Some((sent, answered));
            }
        }
        match waited {
            Ok(Waited::Held(locked)) => Ok(Answer::Granted(Grant {
                service,
                token: locked.czxid,
                key: locked.node.into_bytes(),
                lease: session.id as u64,
            })),
            Ok(Waited::TimedOut(_)) => {
                // Ending the session deletes the waiting node (a cancellation in the log).
                // Like the model's cancel, the client does not wait for it: a stopped server
                // answers only when it is continued.
                self.close_later(key);
                Ok(Answer::Unanswered)
            }
            // The session ended while the client waited (it was paused past its timeout): the
            // server deleted its node, and the request is over unanswered.
            Err(Error::Closed(_)) => Ok(Answer::Unanswered),
            Err(_) if Instant::now() >= ask.deadline => Ok(Answer::Unanswered),
            Err(e) => Err(format!("lock {}: {e}", ask.resource)),
        }
    }

    /// Deletes the lock node, then ends the session. A session the server already ended (its
    /// client was paused past its timeout) has no node left to delete: the release never
    /// reaches the service.
    fn unlock(&self, _client: u32, grant: &Grant, timeout: Duration) -> Result<(), String> {
        let key = (grant.service, grant.lease as i64);
        let Some(session) = self
            .sessions
            .lock()
            .unwrap()
            .get(&key)
            .map(|o| o.session.clone())
        else {
            return Ok(());
        };
        let node = String::from_utf8_lossy(&grant.key).into_owned();
        let sent = Instant::now();
        let deleted = session.delete(&node, sent + timeout);
        let answered = Instant::now();
        let closing = Instant::now();
        session.close(timeout);
        let closed = Instant::now();
        if let Some(o) = self.sessions.lock().unwrap().get_mut(&key) {
            if deleted.is_ok() {
                o.deleted = Some((sent, answered));
            }
            o.closed = Some((closing, closed));
        }
        match deleted {
            Ok(_) | Err(Error::Closed(_)) | Err(Error::Server(NO_NODE, _)) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn outage(&self, service: u32, starts: bool) -> Result<(), String> {
        self.servers[service as usize].process.pause(starts);
        Ok(())
    }

    fn pause(&self, client: u32, starts: bool) {
        if let Some(p) = self.paused.get(client as usize) {
            p.store(starts, Ordering::SeqCst);
        }
    }

    fn finish(&self) -> Result<Vec<ServiceLog>, String> {
        let mut logs = Vec::new();
        for (s, server) in self.servers.iter().enumerate() {
            server.process.pause(false);
            // A server answers a request only once every transaction before it is in its log
            // file: one last request makes sure the log holds the whole recording.
            let session =
                Session::connect(server.client, 10_000, CALL_TIMEOUT).map_err(|e| e.to_string())?;
            session
                .children("/lock", Instant::now() + CALL_TIMEOUT)
                .map_err(|e| e.to_string())?;
            session.close(CALL_TIMEOUT);
            let txns = server.transactions()?;
            let last_revision = txns.last().map_or(0, |t| t.zxid);
            logs.push(ServiceLog {
                entries: self.log_of(s as u32, &txns),
                last_revision,
            });
        }
        Ok(logs)
    }
}

impl Running {
    /// Ends a session from a thread of its own, and notes that the client ended it.
    fn close_later(&self, key: (u32, i64)) {
        let Some(session) = self
            .sessions
            .lock()
            .unwrap()
            .get(&key)
            .map(|o| o.session.clone())
        else {
            return;
        };
        let closing = Instant::now();
        if let Some(o) = self.sessions.lock().unwrap().get_mut(&key) {
            // The server may take until an outage ends to act on it; the log's own time says
            // when it did.
            o.closed = Some((closing, closing + Duration::from_secs(3600)));
        }
        std::thread::spawn(move || session.close(CALL_TIMEOUT));
    }

    /// One server's transactions read as the lock recipe defines a lock: under each lock's
    /// folder, the node with the lowest sequence number holds it. A node created while the
    /// folder is empty is a grant, otherwise a client queued behind the holder; the holder's
    /// node deleted by its client is a release, deleted because its session ended is a release
    /// when the client ended the session and an expiry when the server did, and the next node
    /// then holds; a waiting node deleted is a cancellation. The order is the server's zxids.
    fn log_of(&self, s: u32, txns: &[Txn]) -> Vec<Entry> {
        let sessions = self.sessions.lock().unwrap();
        // Each lock's nodes by sequence number.
        let mut locks: BTreeMap<u32, BTreeMap<u64, Node>> = BTreeMap::new();
        let mut entries = Vec::new();
        let resource_of = |path: &str| -> Option<u32> {
            let (dir, _) = path.rsplit_once('/')?;
            self.world
                .resources
                .iter()
                .position(|r| lock_dir(&r.name) == dir)
                .map(|r| r as u32)
        };
        let push = |entries: &mut Vec<Entry>, zxid: u64, seen: Instant, op: ServiceOp, r| {
            entries.push(Entry {
                seen,
                revision: zxid,
                grant_id: match op {
                    ServiceOp::Granted { token, .. } => Some(token),
                    _ => None,
                },
                what: Logged::Op { op, resource: r },
            })
        };
        for t in txns {
            let at = self.instant_of(t.time_ms);
            let opened = sessions.get(&(s, t.session));
            match &t.op {
                TxnOp::Create {
                    path,
                    ephemeral: true,
                } => {
                    let (Some(r), Some(seq), Some(o)) = (resource_of(path), sequence(path), opened)
                    else {
                        continue;
                    };
                    let lock = locks.entry(r).or_default();
                    let op = match lock.values().next() {
                        None => ServiceOp::Granted {
                            client: o.client,
                            token: t.zxid,
                            lease_until: None,
                        },
                        Some(holder) => ServiceOp::Queued {
                            client: o.client,
                            behind: Some(holder.client),
                        },
                    };
                    push(&mut entries, t.zxid, within(at, o.created), op, r);
                    lock.insert(
                        seq,
                        Node {
                            client: o.client,
                            session: t.session,
                            czxid: t.zxid,
                        },
                    );
                }
                TxnOp::Delete { path } => {
                    let (Some(r), Some(seq)) = (resource_of(path), sequence(path)) else {
                        continue;
                    };
                    let lock = locks.entry(r).or_default();
                    let held = lock.keys().next() == Some(&seq);
                    let Some(Node { client, czxid, .. }) = lock.remove(&seq) else {
                        continue;
                    };
                    let seen = within(at, opened.and_then(|o| o.deleted));
                    let op = if held {
                        ServiceOp::Released {
                            client,
                            token: czxid,
                        }
                    } else {
                        ServiceOp::Cancelled { client }
                    };
                    push(&mut entries, t.zxid, seen, op, r);
                    if held {
                        if let Some(next) = lock.values().next() {
                            let op = ServiceOp::Granted {
                                client: next.client,
                                token: next.czxid,
                                lease_until: None,
                            };
                            push(&mut entries, t.zxid, seen, op, r);
                        }
                    }
                }
                TxnOp::CloseSession => {
                    // The client's own close, when the server ended the session no earlier
                    // than the client asked (its clock counts whole milliseconds); a session
                    // that ended before (for want of pings) was not the client's doing, and the
                    // client's later close found nothing to end.
                    let by_client = opened
                        .and_then(|o| o.closed)
                        .filter(|(sent, _)| at + Duration::from_millis(1) >= *sent);
                    let seen = match by_client {
                        Some(call) => within(at, Some(call)),
                        None => at,
                    };
                    for (r, lock) in locks.iter_mut() {
                        let gone: Vec<u64> = lock
                            .iter()
                            .filter(|(_, n)| n.session == t.session)
                            .map(|(seq, _)| *seq)
                            .collect();
                        for seq in gone {
                            let held = lock.keys().next() == Some(&seq);
                            let Some(Node { client, czxid, .. }) = lock.remove(&seq) else {
                                continue;
                            };
                            let op = match (held, by_client.is_some()) {
                                (false, _) => ServiceOp::Cancelled { client },
                                (true, true) => ServiceOp::Released {
                                    client,
                                    token: czxid,
                                },
                                (true, false) => ServiceOp::Expired {
                                    client,
                                    token: czxid,
                                },
                            };
                            push(&mut entries, t.zxid, seen, op, *r);
                            if held {
                                if let Some(next) = lock.values().next() {
                                    let op = ServiceOp::Granted {
                                        client: next.client,
                                        token: next.czxid,
                                        lease_until: None,
                                    };
                                    push(&mut entries, t.zxid, seen, op, *r);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deadline() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn records_are_read_as_written() {
        let mut o = Out::default();
        o.int(-7).long(1 << 40).bool(true).string("/lock/a");
        let mut r = In::new(&o.0);
        assert_eq!(r.int().unwrap(), -7);
        assert_eq!(r.long().unwrap(), 1 << 40);
        assert!(r.bool().unwrap());
        assert_eq!(r.string().unwrap(), "/lock/a");
        assert!(r.int().unwrap_err().contains("ends after"));
        assert_eq!(sequence("/lock/a/lock-0000000012"), Some(12));
        assert_eq!(sequence("x"), None);
        assert!(parse_log(b"ZKLX\0\0\0\x02").unwrap_err().contains("magic"));
    }

    /// A real server: the recipe grants one session, queues the next, hands over on delete
    /// and on a session that ends for want of pings; the log has it all in zxid order.
    #[test]
    fn the_lock_recipe_on_a_real_server() {
        let dir = super::super::process::TempDir::new("zk-unit").unwrap();
        let server = ZooKeeper::start("s0", dir.path()).unwrap();
        let admin = Session::connect(server.client, 10_000, Duration::from_secs(2)).unwrap();
        admin.ensure("/lock", deadline()).unwrap();
        admin.ensure("/lock/orders", deadline()).unwrap();
        admin.ensure("/lock/orders", deadline()).unwrap();
        let a = Arc::new(Session::connect(server.client, 300, Duration::from_secs(2)).unwrap());
        assert_eq!(a.timeout_ms, 300);
        let b = Session::connect(server.client, 10_000, Duration::from_secs(2)).unwrap();
        let Waited::Held(first) = lock(&a, "orders", deadline()).unwrap() else {
            panic!("the first node does not hold the lock");
        };
        // The second waits, and times out while the first holds (heartbeats keep it).
        let beat = heartbeat(a.clone(), Instant::now() + Duration::from_secs(10), || true);
        let Waited::TimedOut(Some(waiting)) =
            lock(&b, "orders", Instant::now() + Duration::from_millis(600)).unwrap()
        else {
            panic!("the second node holds the lock while the first does");
        };
        b.delete(&waiting, deadline()).unwrap();
        assert!(matches!(
            b.delete(&waiting, deadline()),
            Err(Error::Server(NO_NODE, _))
        ));
        // Released: the next gets it with a higher creation zxid.
        a.delete(&first.node, deadline()).unwrap();
        let Waited::Held(second) = lock(&b, "orders", deadline()).unwrap() else {
            panic!("no grant after the release");
        };
        assert!(second.czxid > first.czxid);
        // A session that stops pinging ends, and its node with it.
        let c = Session::connect(server.client, 200, Duration::from_secs(2)).unwrap();
        let Waited::TimedOut(Some(queued)) =
            lock(&c, "orders", Instant::now() + Duration::from_millis(50)).unwrap()
        else {
            panic!("c holds while b does");
        };
        let start = Instant::now();
        while admin.exists(&queued, false, deadline()).unwrap().is_some() {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "c's session never ended"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(c
            .next_event(Instant::now() + Duration::from_secs(2))
            .is_err());
        a.close(Duration::from_secs(2));
        beat.join().unwrap();
        b.close(Duration::from_secs(2));
        assert!(admin
            .children("/lock/orders", deadline())
            .unwrap()
            .is_empty());
        let txns = server.transactions().unwrap();
        assert!(txns.windows(2).all(|w| w[0].zxid < w[1].zxid));
        let creates: Vec<&Txn> = txns
            .iter()
            .filter(|t| {
                matches!(
                    &t.op,
                    TxnOp::Create {
                        ephemeral: true,
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(creates.len(), 4, "{txns:?}");
        assert_eq!(creates[0].zxid, first.czxid);
        assert_eq!(creates[0].session, a.id);
        assert!(txns
            .iter()
            .any(|t| t.op == TxnOp::CloseSession && t.session == c.id));
        assert!(txns.iter().any(|t| t.op
            == TxnOp::Delete {
                path: first.node.clone()
            }));
        admin.close(Duration::from_secs(2));
    }
}
