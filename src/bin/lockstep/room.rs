//! `lockstep room PACK_DIR`: a workshop's room, live. It serves a pack (`lockstep lesson pack`)
//! on the room's network, lets each participant's page report where they are (the step, their
//! predictions, their attempts and the feedback they got, their completion codes), and shows
//! the facilitator, and only the facilitator, a live dashboard of the room with a timer and the
//! roster as CSV.
//!
//! What the room keeps is in SQLite (`store.rs`), in a file beside the pack, so a room started
//! again on the same folder resumes with its participants, their progress and codes, and the
//! same facilitator link. The participant's side is `room/room.js`, which the room adds to the
//! site's page; a copy of the site served by anything else never loads it, so it reports
//! nothing. Everything is bounded: the body of a request, the reports in it, the length of every
//! text, the requests a participant makes a minute, the participants, the dashboards open.

#[path = "room/store.rs"]
mod store;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use lockstep::lesson::Lesson;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use tokio_stream::StreamExt as _;

use store::{CodeRow, Participant, Store};

const USAGE: &str =
    "usage:\n  lockstep room PACK_DIR [--port P] [--bind ADDR] [--participants-max N]\n      \
    Serve a pack (from `lockstep lesson pack`) to the room, with a live dashboard for the\n      \
    facilitator; --port 0 picks a free port.";

/// The port a room listens on unless told otherwise.
const PORT_DEFAULT: u16 = 8000;
/// The participants a room takes unless told otherwise, and the most it can be told to take.
const PARTICIPANTS_DEFAULT: usize = 200;
const PARTICIPANTS_LIMIT: usize = 2000;
/// The largest request body the room reads: a batch of reports, a join, a timer.
pub const BODY_BYTES_MAX: usize = 16 * 1024;
/// The most reports one request carries.
pub const REPORTS_PER_REQUEST_MAX: usize = 32;
/// A display name's length, in characters (a completion code's name has the same bound).
pub const NAME_CHARS_MAX: usize = lockstep::lesson::code::NAME_CHARS_MAX;
/// A lesson's, step's or exercise's id as reported.
const ID_CHARS_MAX: usize = 80;
/// The feedback a participant saw, as reported, in characters.
const FEEDBACK_CHARS_MAX: usize = 400;
/// A participant's requests: a bucket of this many, refilled at one a second.
const BUCKET_REQUESTS: f64 = 20.0;
const BUCKET_REFILL_PER_MS: f64 = 1.0 / 1000.0;
/// The dashboards (event streams) open at once.
const STREAMS_MAX: usize = 16;
/// The largest file of the pack the room serves.
const FILE_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// The codes one participant can hand in.
const CODES_PER_PARTICIPANT_MAX: usize = 64;
/// The longest timer, in minutes.
const TIMER_MINUTES_MAX: f64 = 24.0 * 60.0;

/// The participant's script, with the page's storage keys written in from the app's own.
static ROOM_JS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    include_str!("room/room.js")
        .replace("__PROGRESS_KEY__", lockstep::ui::course::PROGRESS_KEY)
        .replace("__NAME_KEY__", lockstep::ui::course::NAME_KEY)
});
const DASHBOARD_HTML: &str = include_str!("room/dashboard.html");
const DASHBOARD_JS: &str = include_str!("room/dashboard.js");
const DASHBOARD_CSS: &str = include_str!("room/dashboard.css");
/// What the room adds to the site's page: its participant's script.
const INJECTED: &str = "<script src=\"/room/room.js\" defer></script>";

struct Shared {
    room: Mutex<Room>,
    events: broadcast::Sender<String>,
    lessons: Arc<Vec<Lesson>>,
    pack: PathBuf,
    secret: String,
    participants_max: usize,
    streams: AtomicUsize,
}

struct Room {
    store: Store,
    participants: Vec<Participant>,
    timer: Timer,
    /// Each participant's request bucket by id: requests left, and when it was last filled.
    buckets: BTreeMap<u32, (f64, u64)>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Timer {
    /// When the timer ends, in milliseconds since the Unix epoch; none when stopped.
    pub end_ms: Option<u64>,
    /// How long it was set for.
    pub minutes: f64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A random secret: 128 bits from the system's generator, as hex.
fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random numbers from the system: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

struct Options {
    pack: PathBuf,
    port: u16,
    bind: IpAddr,
    participants_max: usize,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut pack: Option<&str> = None;
    let mut port = PORT_DEFAULT;
    let mut bind = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
    let mut participants_max = PARTICIPANTS_DEFAULT;
    let mut i = 0;
    while i < args.len() {
        let value = |i: usize| {
            args.get(i + 1)
                .map(String::as_str)
                .ok_or_else(|| format!("{} needs a value\n{USAGE}", args[i]))
        };
        match args[i].as_str() {
            "--port" => {
                port = value(i)?
                    .parse()
                    .map_err(|_| format!("--port takes a number from 0 to 65535\n{USAGE}"))?;
                i += 1;
            }
            "--bind" => {
                bind = value(i)?.parse().map_err(|_| {
                    format!("--bind takes an IP address, as 0.0.0.0 or 127.0.0.1\n{USAGE}")
                })?;
                i += 1;
            }
            "--participants-max" => {
                participants_max = value(i)?
                    .parse()
                    .ok()
                    .filter(|n| (1..=PARTICIPANTS_LIMIT).contains(n))
                    .ok_or_else(|| {
                        format!("--participants-max takes a number from 1 to {PARTICIPANTS_LIMIT}")
                    })?;
                i += 1;
            }
            a if a.starts_with("--") => return Err(format!("unknown option {a}\n{USAGE}")),
            a if pack.is_none() => pack = Some(a),
            a => return Err(format!("more than one PACK_DIR (\"{a}\")\n{USAGE}")),
        }
        i += 1;
    }
    let pack = pack.ok_or_else(|| format!("no PACK_DIR given\n{USAGE}"))?;
    Ok(Options {
        pack: PathBuf::from(pack),
        port,
        bind,
        participants_max,
    })
}

/// The pack's folder made absolute, checked to be a built site, and its lessons (the shipped
/// ones, replaced by the pack's of the same id).
fn open_pack(path: &Path) -> Result<(PathBuf, Vec<Lesson>), String> {
    let pack = path.canonicalize().map_err(|e| {
        format!(
            "{}: {e}; name the folder `lockstep lesson pack` wrote",
            path.display()
        )
    })?;
    let missing: Vec<&str> = ["index.html", "course.js", "sw.js", "course/index.json"]
        .into_iter()
        .filter(|f| !pack.join(f).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} is not a pack (no {}): make one with `lockstep lesson pack FILE... --out DIR`",
            path.display(),
            missing.join(", ")
        ));
    }
    let mut lessons = lockstep::lesson::builtin::lessons();
    let folder = pack.join("lessons");
    let index = folder.join("index.json");
    if index.is_file() {
        let text = super::read_text(&index.to_string_lossy(), 64 * 1024)?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", index.display()))?;
        let names = value
            .get("lessons")
            .and_then(|l| l.as_array())
            .ok_or_else(|| format!("{}: no \"lessons\" list", index.display()))?;
        for name in names.iter().take(lockstep::ui::reach::FOLDER_LESSONS_MAX) {
            let Some(name) = name.as_str().filter(|n| plain_file_name(n)) else {
                return Err(format!(
                    "{}: {name} is not a plain file name",
                    index.display()
                ));
            };
            let file = folder.join(name);
            let text =
                super::read_text(&file.to_string_lossy(), lockstep::lesson::LESSON_BYTES_MAX)?;
            let lesson = lockstep::lesson::parse(&text).map_err(|errors| {
                errors
                    .iter()
                    .map(|e| format!("{}:{}: {}", file.display(), e.line, e.message))
                    .collect::<Vec<_>>()
                    .join("\n")
            })?;
            lessons.retain(|l| l.id != lesson.id);
            lessons.push(lesson);
        }
    }
    Ok((pack, lessons))
}

fn plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Where the room keeps what it knows: beside the pack, never inside it (nothing in it is
/// served).
fn store_path(pack: &Path) -> PathBuf {
    let name = pack
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "room".into());
    pack.with_file_name(format!("{name}.room.sqlite"))
}

pub fn room_command(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let options = parse_args(args)?;
    let (pack, lessons) = open_pack(&options.pack)?;
    let store_file = store_path(&pack);
    let mut store = Store::open(&store_file)?;
    let secret = match store.setting("secret")? {
        Some(s) => s,
        None => {
            let s = random_hex()?;
            store.set_setting("secret", &s)?;
            s
        }
    };
    let participants = store.participants()?;
    let timer = store
        .setting("timer")?
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();

    let address = SocketAddr::new(options.bind, options.port);
    let listener = std::net::TcpListener::bind(address).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            format!(
                "port {} is in use on {}: stop what uses it, or choose another port with --port",
                options.port, options.bind
            )
        } else {
            format!("cannot listen on {address}: {e}")
        }
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {address}: {e}"))?
        .port();

    let hosts: Vec<String> = if options.bind.is_unspecified() {
        let lan = lan_addresses();
        if lan.is_empty() {
            vec!["127.0.0.1".into()]
        } else {
            lan.iter().map(ToString::to_string).collect()
        }
    } else {
        match options.bind {
            IpAddr::V6(v6) => vec![format!("[{v6}]")],
            IpAddr::V4(v4) => vec![v4.to_string()],
        }
    };
    let give_out = format!("http://{}:{port}/", hosts[0]);
    let _ = writeln!(
        out,
        "room: serving {} ({} participant(s) so far; kept in {})",
        pack.display(),
        participants.len(),
        store_file.display()
    );
    let _ = writeln!(out, "give out: {give_out}");
    for other in &hosts[1..] {
        let _ = writeln!(out, "      or: http://{other}:{port}/");
    }
    if let Ok(code) = qrcode::QrCode::new(give_out.as_bytes()) {
        let picture = code
            .render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .build();
        let _ = writeln!(out, "{picture}");
    }
    let _ = writeln!(
        out,
        "facilitator (keep it to yourself): http://{}:{port}/room/?key={secret}",
        hosts[0]
    );
    let _ = writeln!(
        out,
        "stop with Ctrl-C; started again on the same folder, the room resumes"
    );
    let _ = out.flush();

    let (events, _) = broadcast::channel(256);
    let shared = Arc::new(Shared {
        room: Mutex::new(Room {
            store,
            participants,
            timer,
            buckets: BTreeMap::new(),
        }),
        events,
        lessons: Arc::new(lessons),
        pack,
        secret,
        participants_max: options.participants_max,
        streams: AtomicUsize::new(0),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| format!("cannot listen on {address}: {e}"))?;
        // Once told to stop, the room finishes the requests under way, but a dashboard's event
        // stream never ends by itself: after a second, whatever is still open is dropped. Every
        // report was written before it was answered, so nothing is lost.
        let (told, mut heard) = tokio::sync::watch::channel(false);
        let server = axum::serve(listener, router(shared)).with_graceful_shutdown(async move {
            stopped().await;
            let _ = told.send(true);
        });
        tokio::select! {
            served = server => served.map_err(|e| format!("the server stopped: {e}")),
            _ = async {
                let _ = heard.changed().await;
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            } => Ok(()),
        }
    })?;
    let _ = writeln!(
        out,
        "room: stopped; started again on the same folder, it resumes"
    );
    Ok(ExitCode::SUCCESS)
}

/// Resolves on Ctrl-C or a termination signal.
async fn stopped() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
    tokio::select! {
        _ = interrupt => {}
        _ = terminate.recv() => {}
    }
}

/// The machine's IPv4 addresses other than loopback: where the room can reach it.
fn lan_addresses() -> Vec<Ipv4Addr> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that freeifaddrs releases; every node
    // is read only while the list lives, and an address is read as sockaddr_in only when its
    // family says AF_INET.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut node = list;
        while !node.is_null() && found.len() < 16 {
            let address = (*node).ifa_addr;
            if !address.is_null() && i32::from((*address).sa_family) == libc::AF_INET {
                let v4 = &*(address as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
                if !ip.is_loopback() && !found.contains(&ip) {
                    found.push(ip);
                }
            }
            node = (*node).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/room/api/hello", get(hello))
        .route("/room/api/join", post(join))
        .route("/room/api/report", post(report))
        .route("/room/api/me", get(me))
        .route("/room/api/state", get(state))
        .route("/room/api/events", get(events))
        .route("/room/api/timer", post(timer))
        .route("/room/roster.csv", get(roster))
        .route("/room/", get(dashboard))
        .route(
            "/room/room.js",
            get(|| async { asset("text/javascript", ROOM_JS.as_str()) }),
        )
        .route(
            "/room/dashboard.js",
            get(|| async { asset("text/javascript", DASHBOARD_JS) }),
        )
        .route(
            "/room/dashboard.css",
            get(|| async { asset("text/css", DASHBOARD_CSS) }),
        )
        .route(
            "/room/{*rest}",
            get(|| async { refuse(StatusCode::NOT_FOUND, "no such page of the room") }),
        )
        .fallback(get(static_file))
        .layer(DefaultBodyLimit::max(BODY_BYTES_MAX))
        .with_state(shared)
}

/// A refusal, with its reason as plain text.
fn refuse(status: StatusCode, reason: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        format!("{reason}\n"),
    )
        .into_response()
}

fn json_response(value: &impl Serialize) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        serde_json::to_string(value).unwrap_or_else(|_| "null".into()),
    )
        .into_response()
}

fn asset(kind: &'static str, text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        text,
    )
        .into_response()
}

/// Answers only in a room: a copy of the site served by anything else has no such address, so
/// its page finds no room and reports nothing.
async fn hello() -> Response {
    json_response(&serde_json::json!({ "room": 1 }))
}

#[derive(Deserialize)]
struct KeyQuery {
    key: Option<String>,
}

/// Whether a request carries the facilitator's secret, in its query (`?key=`, which the
/// dashboard's link and its event stream use) or its `X-Room-Key` header.
fn facilitator(shared: &Shared, query: &KeyQuery, headers: &HeaderMap) -> Result<(), Response> {
    let given = query
        .key
        .as_deref()
        .or_else(|| headers.get("x-room-key").and_then(|v| v.to_str().ok()));
    match given {
        Some(k) if same(k.as_bytes(), shared.secret.as_bytes()) => Ok(()),
        Some(_) => Err(refuse(
            StatusCode::FORBIDDEN,
            "the facilitator's key is wrong: use the link the room printed when it started",
        )),
        None => Err(refuse(
            StatusCode::FORBIDDEN,
            "only the facilitator reads this: use the link with the key the room printed",
        )),
    }
}

/// Compares two secrets in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The participant a request's bearer token names, with the request counted against their
/// bucket.
fn participant(room: &mut Room, headers: &HeaderMap) -> Result<usize, Response> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| {
            refuse(
                StatusCode::UNAUTHORIZED,
                "no participant token: join the room first",
            )
        })?;
    let at = room
        .participants
        .iter()
        .position(|p| same(p.token.as_bytes(), token.as_bytes()))
        .ok_or_else(|| {
            refuse(
                StatusCode::UNAUTHORIZED,
                "this participant token is not the room's: join again",
            )
        })?;
    let id = room.participants[at].id;
    let now = now_ms();
    let bucket = room.buckets.entry(id).or_insert((BUCKET_REQUESTS, now));
    let refilled = (bucket.0 + (now.saturating_sub(bucket.1)) as f64 * BUCKET_REFILL_PER_MS)
        .min(BUCKET_REQUESTS);
    if refilled < 1.0 {
        return Err(refuse(
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests from this participant: wait a second and send again",
        ));
    }
    *bucket = (refilled - 1.0, now);
    Ok(at)
}

fn parse_body<T: for<'de> Deserialize<'de>>(body: &Bytes) -> Result<T, Response> {
    serde_json::from_slice(body).map_err(|e| {
        refuse(
            StatusCode::BAD_REQUEST,
            &format!("the request is not the JSON the room expects: {e}"),
        )
    })
}

/// A display name as typed, trimmed, or why it is refused.
pub fn clean_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    if name.is_empty() {
        return Err("the name is empty: type the name the room knows you by".into());
    }
    if name.chars().count() > NAME_CHARS_MAX {
        return Err(format!(
            "the name is longer than {NAME_CHARS_MAX} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("the name holds a control character".into());
    }
    Ok(name.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinBody {
    name: String,
}

async fn join(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body: JoinBody = match parse_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let name = match clean_name(&body.name) {
        Ok(n) => n,
        Err(reason) => return refuse(StatusCode::BAD_REQUEST, &reason),
    };
    let token = match random_hex() {
        Ok(t) => t,
        Err(reason) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, &reason),
    };
    let mut room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    if room
        .participants
        .iter()
        .any(|p| p.name.to_lowercase() == name.to_lowercase())
    {
        return refuse(
            StatusCode::CONFLICT,
            "someone in the room already has this name: add an initial or a number",
        );
    }
    if room.participants.len() >= shared.participants_max {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "the room is full: it takes at most {} participants",
                shared.participants_max
            ),
        );
    }
    let now = now_ms();
    let id = room.participants.iter().map(|p| p.id).max().unwrap_or(0) + 1;
    let p = Participant::new(id, name, token.clone(), now);
    if let Err(reason) = room.store.save_participant(&p) {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, &reason);
    }
    let event = event_json("participant", &p.row());
    room.participants.push(p);
    drop(room);
    let _ = shared.events.send(event);
    json_response(&serde_json::json!({ "id": id, "token": token }))
}

/// One report of a participant's page: see `room/room.js`, which sends them.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Report {
    /// The page's own count of its reports: one already received is passed over, so that a
    /// batch sent again after a lost answer counts once.
    seq: u64,
    kind: String,
    #[serde(default)]
    lesson: String,
    #[serde(default)]
    place: String,
    #[serde(default)]
    right: Option<bool>,
    #[serde(default)]
    passed: Option<bool>,
    #[serde(default)]
    feedback: String,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    code: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportBody {
    reports: Vec<Report>,
}

fn valid_id(s: &str) -> bool {
    s.len() <= ID_CHARS_MAX
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why a report is refused, if it is.
fn check_report(r: &Report) -> Result<(), String> {
    if !valid_id(&r.lesson) || !valid_id(&r.place) {
        return Err(format!(
            "a lesson or place is an id of at most {ID_CHARS_MAX} letters, digits, '-', '_' or '.'"
        ));
    }
    if r.feedback.chars().count() > FEEDBACK_CHARS_MAX {
        return Err(format!(
            "the feedback is longer than {FEEDBACK_CHARS_MAX} characters"
        ));
    }
    match r.kind.as_str() {
        "place" => Ok(()),
        "prediction" if r.right.is_some() => Ok(()),
        "prediction" => Err("a prediction says whether it was right".into()),
        "attempt" | "gate" if r.passed.is_some() => Ok(()),
        "attempt" | "gate" => Err(format!("an {} says whether it passed", r.kind)),
        "hint" if r.count.is_some_and(|c| c <= 100) => Ok(()),
        "hint" => Err("a hint report gives the count of hints shown (at most 100)".into()),
        "code" if !r.code.is_empty() && r.code.len() <= lockstep::lesson::code::CODE_CHARS_MAX => {
            Ok(())
        }
        "code" => Err(format!(
            "a code report carries a code of 1 to {} characters",
            lockstep::lesson::code::CODE_CHARS_MAX
        )),
        other => Err(format!(
            "unknown kind \"{}\" (place, prediction, attempt, gate, hint or code)",
            other.chars().take(40).collect::<String>()
        )),
    }
}

/// A code checked as `lockstep lesson verify` checks it, under the name it was handed in by.
pub fn verify_code(lessons: &[Lesson], code: &str, name: &str, at_ms: u64) -> CodeRow {
    let rows = lockstep::lesson::roster::verify(lessons, code, 1);
    match rows.into_iter().next() {
        Some(row) => {
            let mut reason = row.reason;
            if !row.name.is_empty() && row.name != name {
                let made = format!("made under the name \"{}\"", row.name);
                reason = if reason.is_empty() {
                    made
                } else {
                    format!("{reason}; {made}")
                };
            }
            CodeRow {
                code: row.code,
                lesson: row.lesson,
                exercise: row.exercise,
                verified: row.verified,
                reason,
                at_ms,
            }
        }
        None => CodeRow {
            code: code.chars().take(200).collect(),
            lesson: String::new(),
            exercise: String::new(),
            verified: false,
            reason: "not a completion code (a code starts with LS2.; was it cut short?)".into(),
            at_ms,
        },
    }
}

async fn report(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let (at, last_seq) = {
        let mut room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
        match participant(&mut room, &headers) {
            Ok(at) => (at, room.participants[at].last_seq),
            Err(r) => return r,
        }
    };
    let body: ReportBody = match parse_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    if body.reports.len() > REPORTS_PER_REQUEST_MAX {
        return refuse(
            StatusCode::BAD_REQUEST,
            &format!("at most {REPORTS_PER_REQUEST_MAX} reports a request"),
        );
    }
    let mut previous = last_seq;
    for (k, r) in body.reports.iter().enumerate() {
        if let Err(reason) = check_report(r) {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("report {}: {reason}", k + 1),
            );
        }
        if r.seq <= previous && r.seq > last_seq {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("report {}: the reports' seq must increase", k + 1),
            );
        }
        previous = previous.max(r.seq);
    }
    let fresh: Vec<&Report> = body.reports.iter().filter(|r| r.seq > last_seq).collect();
    // Codes are checked by the engine, off the server's thread and outside the room's lock.
    let name = {
        let room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
        room.participants
            .get(at)
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let codes: Vec<String> = fresh
        .iter()
        .filter(|r| r.kind == "code")
        .map(|r| r.code.clone())
        .collect();
    let checked: Vec<CodeRow> = if codes.is_empty() {
        Vec::new()
    } else {
        let lessons = shared.lessons.clone();
        let now = now_ms();
        tokio::task::spawn_blocking(move || {
            codes
                .iter()
                .map(|c| verify_code(&lessons, c, &name, now))
                .collect()
        })
        .await
        .unwrap_or_default()
    };
    let mut checked = checked.into_iter();
    let now = now_ms();
    let mut room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    let Room {
        store,
        participants,
        ..
    } = &mut *room;
    let Some(p) = participants.get_mut(at) else {
        return refuse(StatusCode::GONE, "this participant left the room");
    };
    // Another request of the same participant may have been taken meanwhile.
    let mut logged = Vec::new();
    let taken = p.last_seq;
    for r in fresh.into_iter().filter(|r| r.seq > taken) {
        match r.kind.as_str() {
            "place" => p.at_place(&r.lesson, &r.place, now),
            "prediction" => p.predicted(r.right == Some(true)),
            "attempt" | "gate" => p.attempted(
                &r.lesson,
                &r.place,
                r.passed == Some(true),
                &r.feedback,
                r.kind == "gate",
            ),
            "hint" => p.hinted(&r.lesson, &r.place, r.count.unwrap_or(0)),
            "code" => {
                if let Some(row) = checked.next() {
                    if p.codes.len() < CODES_PER_PARTICIPANT_MAX
                        && !p.codes.iter().any(|c| c.code == row.code)
                    {
                        p.codes.push(row);
                    }
                }
            }
            _ => {}
        }
        p.last_seq = r.seq;
        logged.push((
            r.seq,
            r.kind.clone(),
            serde_json::to_string(&ReportLog::of(r)).unwrap_or_default(),
        ));
    }
    p.last_seen_ms = now;
    if let Err(reason) = store.save_report(p, &logged, now) {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, &reason);
    }
    let event = event_json("participant", &p.row());
    let received = p.last_seq;
    drop(room);
    let _ = shared.events.send(event);
    json_response(&serde_json::json!({ "received": received }))
}

/// A report as the room's log keeps it.
#[derive(Serialize)]
struct ReportLog<'a> {
    lesson: &'a str,
    place: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    right: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    passed: Option<bool>,
    #[serde(skip_serializing_if = "str::is_empty")]
    feedback: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u32>,
    #[serde(skip_serializing_if = "str::is_empty")]
    code: &'a str,
}

impl<'a> ReportLog<'a> {
    fn of(r: &'a Report) -> ReportLog<'a> {
        ReportLog {
            lesson: &r.lesson,
            place: &r.place,
            right: r.right,
            passed: r.passed,
            feedback: &r.feedback,
            count: r.count,
            code: &r.code,
        }
    }
}

/// A participant's own row, and nobody else's.
async fn me(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let mut room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    match participant(&mut room, &headers) {
        Ok(at) => json_response(&room.participants[at].row()),
        Err(r) => r,
    }
}

fn snapshot(shared: &Shared) -> serde_json::Value {
    let room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    serde_json::json!({
        "now_ms": now_ms(),
        "timer": room.timer,
        "participants": room.participants.iter().map(Participant::row).collect::<Vec<_>>(),
        "participants_max": shared.participants_max,
    })
}

fn event_json(kind: &str, data: &impl Serialize) -> String {
    serde_json::json!({ "kind": kind, "now_ms": now_ms(), "data": data }).to_string()
}

async fn state(
    State(shared): State<Arc<Shared>>,
    query: Query<KeyQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = facilitator(&shared, &query, &headers) {
        return r;
    }
    json_response(&snapshot(&shared))
}

/// Counts an open event stream, and uncounts it when the stream is dropped.
struct StreamSlot(Arc<Shared>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The dashboard's live feed: the whole room first, then each change as it happens.
async fn events(
    State(shared): State<Arc<Shared>>,
    query: Query<KeyQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = facilitator(&shared, &query, &headers) {
        return r;
    }
    if shared.streams.fetch_add(1, Ordering::SeqCst) >= STREAMS_MAX {
        shared.streams.fetch_sub(1, Ordering::SeqCst);
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("at most {STREAMS_MAX} dashboards are open at once: close one"),
        );
    }
    let slot = StreamSlot(shared.clone());
    let first = event_json("snapshot", &snapshot(&shared));
    let receiver = shared.events.subscribe();
    let later = tokio_stream::wrappers::BroadcastStream::new(receiver).map(move |item| {
        let _held = &slot;
        let text = match item {
            Ok(text) => text,
            // A dashboard that fell behind gets the whole room again.
            Err(_) => event_json("snapshot", &snapshot(&slot.0)),
        };
        Ok::<Event, std::convert::Infallible>(Event::default().data(text))
    });
    let stream = tokio_stream::once(Ok(Event::default().data(first))).chain(later);
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TimerBody {
    /// Minutes to count down from; none or 0 stops the timer.
    minutes: Option<f64>,
}

async fn timer(
    State(shared): State<Arc<Shared>>,
    query: Query<KeyQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(r) = facilitator(&shared, &query, &headers) {
        return r;
    }
    let body: TimerBody = match parse_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let minutes = body.minutes.unwrap_or(0.0);
    if !minutes.is_finite() || !(0.0..=TIMER_MINUTES_MAX).contains(&minutes) {
        return refuse(
            StatusCode::BAD_REQUEST,
            &format!("a timer runs from 0 to {TIMER_MINUTES_MAX} minutes"),
        );
    }
    let timer = Timer {
        end_ms: (minutes > 0.0).then(|| now_ms() + (minutes * 60_000.0) as u64),
        minutes,
    };
    let mut room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    room.timer = timer;
    let saved = serde_json::to_string(&timer).unwrap_or_default();
    if let Err(reason) = room.store.set_setting("timer", &saved) {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, &reason);
    }
    drop(room);
    let _ = shared.events.send(event_json("timer", &timer));
    json_response(&timer)
}

/// The room's roster: `lockstep lesson verify --csv`'s columns, a row per code handed in, then
/// a row for each participant who handed in none.
pub fn roster_csv(participants: &[Participant]) -> String {
    let mut rows = Vec::new();
    for p in participants {
        if p.codes.is_empty() {
            rows.push(lockstep::lesson::roster::Row {
                code: String::new(),
                name: p.name.clone(),
                lesson: p.lesson.clone(),
                exercise: String::new(),
                verified: false,
                reason: "no code yet".into(),
            });
        }
        for c in &p.codes {
            rows.push(lockstep::lesson::roster::Row {
                code: c.code.clone(),
                name: p.name.clone(),
                lesson: c.lesson.clone(),
                exercise: c.exercise.clone(),
                verified: c.verified,
                reason: c.reason.clone(),
            });
        }
    }
    lockstep::lesson::roster::csv(&rows)
}

async fn roster(
    State(shared): State<Arc<Shared>>,
    query: Query<KeyQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = facilitator(&shared, &query, &headers) {
        return r;
    }
    let room = shared.room.lock().unwrap_or_else(|e| e.into_inner());
    let text = roster_csv(&room.participants);
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"roster.csv\"",
            ),
        ],
        text,
    )
        .into_response()
}

async fn dashboard(
    State(shared): State<Arc<Shared>>,
    query: Query<KeyQuery>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = facilitator(&shared, &query, &headers) {
        return r;
    }
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
                 frame-ancestors 'none'",
            ),
        ],
        DASHBOARD_HTML,
    )
        .into_response()
}

/// The content type of a file of the pack, by its extension.
pub fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match extension.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        "md" => "text/markdown; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The path of a file of the pack an address names, or why it names none: `..`, a hidden
/// name, a backslash or an undecodable escape are refused.
pub fn pack_path(address: &str) -> Result<String, &'static str> {
    let raw = address.split(['?', '#']).next().unwrap_or("");
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or("an address with a broken %-escape")?;
            decoded.push(hex);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(decoded).map_err(|_| "an address that is not UTF-8")?;
    if path.contains(['\\', '\0']) {
        return Err("an address with a backslash or a NUL");
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" => {}
            "." | ".." => return Err("an address that climbs out of the pack"),
            p if p.starts_with('.') => return Err("a hidden file"),
            p => parts.push(p),
        }
    }
    let mut joined = parts.join("/");
    if joined.is_empty() || path.ends_with('/') {
        if !joined.is_empty() {
            joined.push('/');
        }
        joined.push_str("index.html");
    }
    Ok(joined)
}

async fn static_file(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = match pack_path(request.uri().path()) {
        Ok(p) => p,
        Err(reason) => return refuse(StatusCode::BAD_REQUEST, &format!("refused: {reason}")),
    };
    let file = shared.pack.join(&path);
    // A link inside the pack may point anywhere; only what is really inside is served.
    let real = match file.canonicalize() {
        Ok(r) if r.starts_with(&shared.pack) && r.is_file() => r,
        _ => return refuse(StatusCode::NOT_FOUND, "no such file in the pack"),
    };
    match tokio::fs::metadata(&real).await {
        Ok(m) if m.len() <= FILE_BYTES_MAX => {}
        Ok(_) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "a file too large for the room to serve",
            )
        }
        Err(_) => return refuse(StatusCode::NOT_FOUND, "no such file in the pack"),
    }
    let mut bytes = match tokio::fs::read(&real).await {
        Ok(b) => b,
        Err(_) => return refuse(StatusCode::NOT_FOUND, "no such file in the pack"),
    };
    if path == "index.html" {
        bytes = inject(&bytes);
    }
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(&path)),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The site's page with the room's script added before the end of its head.
fn inject(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    match text.find("</head>") {
        Some(at) => format!("{}{INJECTED}{}", &text[..at], &text[at..]).into_bytes(),
        None => format!("{text}{INJECTED}").into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_pack() {
        assert_eq!(pack_path("/").as_deref(), Ok("index.html"));
        assert_eq!(pack_path("/lessons/").as_deref(), Ok("lessons/index.html"));
        assert_eq!(pack_path("/app_bg.wasm").as_deref(), Ok("app_bg.wasm"));
        assert!(pack_path("/../etc/passwd").is_err());
        assert!(pack_path("/%2e%2e/x").is_err());
        assert!(pack_path("/a/..%2f..%2fb").is_err());
        assert!(pack_path("/.room.sqlite").is_err());
        assert!(pack_path("/a%5cb").is_err());
        assert!(pack_path("/%zz").is_err());
        assert_eq!(content_type("x/app_bg.wasm"), "application/wasm");
    }
}
