//! `lockstep room`: the room's server started as the facilitator starts it, on a free loopback
//! port, and spoken to over HTTP as a participant's page and the dashboard speak to it. Each
//! test's room is stopped when the test ends, whatever happened. The browser's side is tested
//! end to end in `tests/e2e/specs/room.mjs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder that looks like a pack to the room: the files it checks for, a page with a head,
/// a bundle and the example lesson of docs/workshop.md in `lessons/`. Removed on drop.
struct Pack {
    dir: PathBuf,
}

impl Pack {
    fn new() -> Pack {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lockstep-room-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let pack = dir.join("workshop");
        std::fs::create_dir_all(pack.join("course")).unwrap();
        std::fs::create_dir_all(pack.join("lessons")).unwrap();
        std::fs::write(
            pack.join("index.html"),
            "<!doctype html><html><head><title>t</title></head><body></body></html>",
        )
        .unwrap();
        std::fs::write(pack.join("course.js"), "export default 1;").unwrap();
        std::fs::write(pack.join("sw.js"), "// the offline copy").unwrap();
        std::fs::write(pack.join("course/index.json"), "{}").unwrap();
        std::fs::write(pack.join("app_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
        std::fs::write(pack.join(".hidden"), "not for the room").unwrap();
        std::fs::copy(
            root().join("docs/examples/ledger-drill.md"),
            pack.join("lessons/ledger-drill.md"),
        )
        .unwrap();
        std::fs::write(
            pack.join("lessons/index.json"),
            r#"{"lessons":["ledger-drill.md"]}"#,
        )
        .unwrap();
        Pack { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.join("workshop")
    }
}

impl Drop for Pack {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A running `lockstep room`, killed and waited for on drop: nothing is left running.
struct Room {
    child: Child,
    port: u16,
    key: String,
    printed: String,
}

impl Room {
    fn start(pack: &Path, extra: &[&str]) -> Room {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
            .arg("room")
            .arg(pack)
            .args(["--port", "0", "--bind", "127.0.0.1"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("lockstep runs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut printed = String::new();
        let mut port = 0;
        let mut key = String::new();
        for line in lines.by_ref() {
            let line = line.expect("the room prints text");
            printed.push_str(&line);
            printed.push('\n');
            if let Some(rest) = line.strip_prefix("give out: http://127.0.0.1:") {
                port = rest.trim_end_matches('/').parse().expect("a port");
            }
            if let Some(at) = line.find("/room/?key=") {
                key = line[at + "/room/?key=".len()..].trim().to_string();
                break;
            }
        }
        // The rest of what it prints is read (and dropped) so that it never blocks on a pipe.
        std::thread::spawn(move || for _ in lines {});
        assert!(port > 0 && !key.is_empty(), "the room printed: {printed}");
        Room {
            child,
            port,
            key,
            printed,
        }
    }

    fn get(&self, path: &str) -> (u16, String) {
        http(self.port, "GET", path, &[], "")
    }

    fn facilitator(&self, path: &str) -> (u16, String) {
        let sep = if path.contains('?') { '&' } else { '?' };
        self.get(&format!("{path}{sep}key={}", self.key))
    }

    fn state(&self) -> Value {
        let (status, body) = self.facilitator("/room/api/state");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn join(&self, name: &str) -> String {
        let (status, body) = http(
            self.port,
            "POST",
            "/room/api/join",
            &[],
            &json!({ "name": name }).to_string(),
        );
        assert_eq!(status, 200, "{name} joins: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["token"].as_str().unwrap().to_string()
    }

    fn report(&self, token: &str, reports: Value) -> (u16, String) {
        http(
            self.port,
            "POST",
            "/room/api/report",
            &[("authorization", &format!("Bearer {token}"))],
            &json!({ "reports": reports }).to_string(),
        )
    }

    /// Stops the room as Ctrl-C does, and says how it ended.
    fn stop(mut self) -> std::process::ExitStatus {
        // SAFETY: a plain signal to the child this test started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the room stops on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to the room on loopback, and its status and body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if !body.is_empty() {
        request.push_str("content-type: application/json\r\n");
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    raw(port, request.as_bytes())
}

fn raw(port: u16, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the room listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The room may answer and close before it has read a body it refuses.
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    // Bodies the room sends with a length are whole; a chunked one is unwrapped.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(body)
    } else {
        body.to_string()
    };
    let _ = head;
    (status, body)
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn head_of(port: u16, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    text.split_once("\r\n\r\n")
        .map(|(h, _)| h.to_ascii_lowercase())
        .unwrap_or_default()
}

/// A completion code for the drill's exercise, solved, under `name`.
fn solved_code(name: &str) -> String {
    let text = std::fs::read_to_string(root().join("docs/examples/ledger-drill.md")).unwrap();
    let lesson = lockstep::lesson::parse(&text).expect("the drill parses");
    let exercise = lesson.exercise("one-order").expect("the drill's exercise");
    exercise.completion_code(name, &lesson.id, &exercise.solution)
}

fn participant<'a>(state: &'a Value, name: &str) -> &'a Value {
    state["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {state}"))
}

#[test]
fn the_room_prints_the_address_its_qr_code_and_the_facilitator_link() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    assert!(room
        .printed
        .contains(&format!("give out: http://127.0.0.1:{}/", room.port)));
    // The QR code is drawn with half blocks.
    assert!(
        room.printed.contains('▀') || room.printed.contains('▄'),
        "{}",
        room.printed
    );
    assert!(room.key.len() >= 32, "a secret of 128 bits: {}", room.key);
    // Files of the pack, with their types; the page carries the room's script.
    assert!(head_of(room.port, "/app_bg.wasm").contains("content-type: application/wasm"));
    let (status, page) = room.get("/");
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"<script src="/room/room.js" defer></script></head>"#),
        "{page}"
    );
    let (status, script) = room.get("/room/room.js");
    assert_eq!(status, 200);
    assert!(script.contains("/room/api/report"));
    let (status, hello) = room.get("/room/api/hello");
    assert_eq!((status, hello.as_str()), (200, r#"{"room":1}"#));
    // Stopped as with Ctrl-C, it says so and exits cleanly.
    assert!(room.stop().success());
}

#[test]
fn a_participant_joins_and_reports_and_the_facilitator_sees_it_with_codes_verified() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    let ann = room.join("Ann");
    let code = solved_code("Ann");
    let (status, body) = room.report(
        &ann,
        json!([
            { "seq": 1, "kind": "place", "lesson": "ledger-drill", "place": "the-standoff" },
            { "seq": 2, "kind": "prediction", "lesson": "ledger-drill", "place": "the-standoff", "right": true },
            { "seq": 3, "kind": "gate", "lesson": "ledger-drill", "place": "the-standoff", "passed": false, "feedback": "Still deadlocked" },
            { "seq": 4, "kind": "place", "lesson": "ledger-drill", "place": "one-order" },
            { "seq": 5, "kind": "attempt", "lesson": "ledger-drill", "place": "one-order", "passed": false, "feedback": "Not yet: an update was lost" },
            { "seq": 6, "kind": "attempt", "lesson": "ledger-drill", "place": "one-order", "passed": true, "feedback": "Solved." },
            { "seq": 7, "kind": "hint", "lesson": "ledger-drill", "place": "one-order", "count": 1 },
            { "seq": 8, "kind": "code", "code": code },
            { "seq": 9, "kind": "code", "code": code[..60].to_string() },
        ]),
    );
    assert_eq!((status, body.as_str()), (200, r#"{"received":9}"#));
    // The same batch sent again (its answer lost) counts once.
    let (status, _) = room.report(
        &ann,
        json!([{ "seq": 6, "kind": "attempt", "lesson": "ledger-drill", "place": "one-order", "passed": true }]),
    );
    assert_eq!(status, 200);
    let state = room.state();
    let p = participant(&state, "Ann");
    assert_eq!(p["lesson"], "ledger-drill");
    assert_eq!(p["place"], "one-order");
    assert_eq!(p["attempts"], 2);
    assert_eq!(p["attempts_total"], 3);
    assert_eq!(p["passed"], true);
    assert_eq!(p["predictions_made"], 1);
    assert_eq!(p["predictions_right"], 1);
    assert_eq!(p["hints"], 1);
    assert!(
        p.get("token").is_none(),
        "no token reaches the dashboard: {p}"
    );
    let codes = p["codes"].as_array().unwrap();
    assert_eq!(codes.len(), 2, "{p}");
    assert_eq!(codes[0]["verified"], true, "{p}");
    assert_eq!(codes[0]["exercise"], "one-order");
    // A code cut short is a refused row under the name it was handed in by.
    assert_eq!(codes[1]["verified"], false, "{p}");
    let (status, csv) = room.facilitator("/room/roster.csv");
    assert_eq!(status, 200);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("name,lesson,exercise,result,reason,code")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("Ann,ledger-drill,one-order,verified,,LS2."),
        "{csv}"
    );
    assert!(lines.next().unwrap().starts_with("Ann,"), "{csv}");
    // The participant reads their own row.
    let (status, me) = http(
        room.port,
        "GET",
        "/room/api/me",
        &[("authorization", &format!("Bearer {ann}"))],
        "",
    );
    assert_eq!(status, 200);
    assert!(me.contains(r#""name":"Ann""#), "{me}");
}

#[test]
fn only_the_facilitator_reads_the_dashboard_the_stream_and_the_roster() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    let ann = room.join("Ann");
    let bob = room.join("Bob");
    let bearer = format!("Bearer {bob}");
    for path in [
        "/room/",
        "/room/api/state",
        "/room/api/events",
        "/room/roster.csv",
    ] {
        let (status, body) = room.get(path);
        assert_eq!(status, 403, "{path} without the key: {body}");
        assert!(body.contains("only the facilitator"), "{path}: {body}");
        let (status, body) = room.get(&format!("{path}?key=0123456789abcdef0123456789abcdef"));
        assert_eq!(status, 403, "{path} with a wrong key: {body}");
        assert!(body.contains("key is wrong"), "{body}");
        let (status, body) = http(room.port, "GET", path, &[("authorization", &bearer)], "");
        assert_eq!(status, 403, "{path} with a participant's token: {body}");
        assert!(!body.contains("Ann"));
    }
    let (status, _) = http(
        room.port,
        "POST",
        "/room/api/timer",
        &[],
        r#"{"minutes":5}"#,
    );
    assert_eq!(status, 403, "the timer is the facilitator's");
    // A participant reads only their own row.
    let (status, me) = http(
        room.port,
        "GET",
        "/room/api/me",
        &[("authorization", &bearer)],
        "",
    );
    assert_eq!(status, 200);
    assert!(
        me.contains("Bob") && !me.contains("Ann") && !me.contains(&ann),
        "{me}"
    );
    // With the key, all of it.
    let (status, page) = room.facilitator("/room/");
    assert_eq!(status, 200);
    assert!(page.contains("/room/dashboard.js"));
    assert!(head_of(room.port, &format!("/room/?key={}", room.key))
        .contains("content-security-policy: default-src 'self'; script-src 'self'"));
    assert_eq!(room.state()["participants"].as_array().unwrap().len(), 2);
    let (status, timer) = http(
        room.port,
        "POST",
        &format!("/room/api/timer?key={}", room.key),
        &[],
        r#"{"minutes":5}"#,
    );
    assert_eq!(status, 200, "{timer}");
    assert!(room.state()["timer"]["end_ms"].is_u64());
}

#[test]
fn bad_requests_are_refused_with_a_reason() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &["--participants-max", "3"]);
    let post = |path: &str, body: &str| http(room.port, "POST", path, &[], body);
    let refused = |(status, body): (u16, String), expected: u16, words: &str| {
        assert_eq!(status, expected, "{body}");
        assert!(body.contains(words), "expected \"{words}\" in: {body}");
    };
    refused(post("/room/api/join", "{name"), 400, "not the JSON");
    refused(
        post("/room/api/join", r#"{"nom":"x"}"#),
        400,
        "unknown field",
    );
    refused(post("/room/api/join", r#"{"name":"   "}"#), 400, "empty");
    refused(
        post(
            "/room/api/join",
            &json!({ "name": "x".repeat(41) }).to_string(),
        ),
        400,
        "longer than 40",
    );
    refused(
        post("/room/api/join", r#"{"name":"a\u0007b"}"#),
        400,
        "control character",
    );
    let big = json!({ "name": "x".repeat(20_000) }).to_string();
    let (status, _) = post("/room/api/join", &big);
    assert_eq!(status, 413, "a body over 16 KiB");
    let ann = room.join("Ann");
    refused(
        post("/room/api/join", r#"{"name":"ann"}"#),
        409,
        "already has this name",
    );
    room.join("Bob");
    room.join("Cy");
    refused(
        post("/room/api/join", r#"{"name":"Dee"}"#),
        503,
        "at most 3 participants",
    );
    // Reports: no token, a wrong one, a malformed one, too many, unknown kinds, bad ids.
    refused(
        post("/room/api/report", r#"{"reports":[]}"#),
        401,
        "join the room first",
    );
    refused(
        room.report("ffffffffffffffffffffffffffffffff", json!([])),
        401,
        "not the room's",
    );
    refused(
        room.report(&ann, json!([{ "seq": 1, "kind": "dance" }])),
        400,
        "unknown kind",
    );
    refused(
        room.report(
            &ann,
            json!([{ "seq": 1, "kind": "place", "lesson": "../x" }]),
        ),
        400,
        "report 1: a lesson or place is an id",
    );
    refused(
        room.report(
            &ann,
            json!([{ "seq": 1, "kind": "attempt", "lesson": "a", "place": "b" }]),
        ),
        400,
        "says whether it passed",
    );
    refused(
        room.report(
            &ann,
            json!([{ "seq": 1, "kind": "place", "feedback": "x".repeat(401) }]),
        ),
        400,
        "longer than 400",
    );
    let many: Vec<Value> = (1..=33)
        .map(|k| json!({ "seq": k, "kind": "place" }))
        .collect();
    refused(room.report(&ann, json!(many)), 400, "at most 32 reports");
    refused(
        room.report(
            &ann,
            json!([{ "seq": 2, "kind": "place" }, { "seq": 1, "kind": "place" }]),
        ),
        400,
        "must increase",
    );
    // Static files: nothing outside the pack, nothing hidden, no store.
    for path in [
        "/../workshop.room.sqlite",
        "/%2e%2e/workshop.room.sqlite",
        "/lessons/..%2f..%2fworkshop.room.sqlite",
        "/.hidden",
        "/a%5c..%5cb",
        "/%zz",
    ] {
        let (status, body) = room.get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.starts_with("refused: "), "{path}: {body}");
    }
    let (status, _) = room.get("/no-such-file.js");
    assert_eq!(status, 404);
    // A link inside the pack to the store beside it leads nowhere.
    std::os::unix::fs::symlink(
        pack.dir.join("workshop.room.sqlite"),
        pack.path().join("store"),
    )
    .unwrap();
    let (status, body) = room.get("/store");
    assert_eq!(status, 404, "{body}");
    // A request that is not HTTP at all is refused too, and the room goes on.
    let (status, _) = raw(room.port, b"\x16\x03\x01\x02\0garbage\r\n\r\n");
    assert_ne!(status, 200);
    // A participant's requests are limited: a burst past the bucket is refused, not served.
    let mut statuses = Vec::new();
    for k in 1..=30 {
        statuses.push(room.report(&ann, json!([{ "seq": k, "kind": "place" }])).0);
    }
    assert!(statuses.contains(&429), "{statuses:?}");
    let (status, body) = room.get("/room/api/hello");
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"room":1}"#),
        "still serving"
    );
}

#[test]
fn names_stay_text_in_the_roster_and_the_dashboard() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    room.join("=HYPERLINK(\"http://x\",\"y\")");
    room.join("<img src=x onerror=alert(1)>");
    let (_, csv) = room.facilitator("/room/roster.csv");
    assert!(
        csv.contains("\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""),
        "a formula is not a formula: {csv}"
    );
    // The dashboard's page holds no participant's text: its script sets each as text.
    let (_, page) = room.facilitator("/room/");
    assert!(!page.contains("onerror"));
    let (_, script) = room.get("/room/dashboard.js");
    assert!(!script.contains("innerHTML") && script.contains("textContent"));
    let (_, script) = room.get("/room/room.js");
    assert!(!script.contains("innerHTML"));
    let state = room.state();
    participant(&state, "<img src=x onerror=alert(1)>");
}

/// Reads server-sent events until one's data contains `words`.
fn read_event(lines: &mut impl BufRead, words: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let n = lines.read_line(&mut line).expect("the stream goes on");
        assert!(n > 0, "the stream ended before \"{words}\"");
        if line.starts_with("data:") && line.contains(words) {
            return line;
        }
    }
}

#[test]
fn the_event_stream_delivers_each_change_as_it_happens() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    let mut stream = TcpStream::connect(("127.0.0.1", room.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET /room/api/events?key={} HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n",
        room.key
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    read_event(&mut reader, r#""kind":"snapshot""#);
    let ann = room.join("Ann");
    read_event(&mut reader, r#""name":"Ann""#);
    room.report(
        &ann,
        json!([{ "seq": 1, "kind": "place", "lesson": "ledger-drill", "place": "one-order" }]),
    );
    let event = read_event(&mut reader, r#""place":"one-order""#);
    assert!(event.contains(r#""kind":"participant""#), "{event}");
    http(
        room.port,
        "POST",
        &format!("/room/api/timer?key={}", room.key),
        &[],
        r#"{"minutes":1.5}"#,
    );
    read_event(&mut reader, r#""kind":"timer""#);
    // A dashboard left open does not keep the room from stopping.
    assert!(room.stop().success());
    drop(stream);
}

#[test]
fn a_room_started_again_on_the_same_folder_resumes_with_nothing_lost() {
    let pack = Pack::new();
    let room = Room::start(&pack.path(), &[]);
    let key = room.key.clone();
    let ann = room.join("Ann");
    let code = solved_code("Ann");
    room.report(
        &ann,
        json!([
            { "seq": 1, "kind": "place", "lesson": "ledger-drill", "place": "one-order" },
            { "seq": 2, "kind": "attempt", "lesson": "ledger-drill", "place": "one-order", "passed": true, "feedback": "Solved." },
            { "seq": 3, "kind": "code", "code": code },
        ]),
    );
    http(
        room.port,
        "POST",
        &format!("/room/api/timer?key={key}"),
        &[],
        r#"{"minutes":30}"#,
    );
    let before = room.state();
    let (_, roster_before) = room.facilitator("/room/roster.csv");
    // Killed outright, not stopped: what it acknowledged was already kept.
    drop(room);
    let store = pack.dir.join("workshop.room.sqlite");
    assert!(store.is_file(), "the store is beside the pack");
    assert!(!pack.path().join("workshop.room.sqlite").exists());
    let room = Room::start(&pack.path(), &[]);
    assert_eq!(room.key, key, "the facilitator's link stays valid");
    assert!(
        room.printed.contains("1 participant(s) so far"),
        "{}",
        room.printed
    );
    let after = room.state();
    assert_eq!(after["participants"], before["participants"]);
    assert_eq!(after["timer"], before["timer"]);
    let (_, roster_after) = room.facilitator("/room/roster.csv");
    assert_eq!(roster_after, roster_before);
    // The participant's token still works, and their reports go on where they left off.
    let (status, body) = room.report(
        &ann,
        json!([
            { "seq": 3, "kind": "code", "code": code },
            { "seq": 4, "kind": "place", "lesson": "ledger-drill", "place": "the-standoff" },
        ]),
    );
    assert_eq!((status, body.as_str()), (200, r#"{"received":4}"#));
    let p = participant(&room.state(), "Ann").clone();
    assert_eq!(p["place"], "the-standoff");
    assert_eq!(p["codes"].as_array().unwrap().len(), 1, "{p}");
    // A name already in the room is still taken.
    let (status, _) = http(
        room.port,
        "POST",
        "/room/api/join",
        &[],
        r#"{"name":"Ann"}"#,
    );
    assert_eq!(status, 409);
}

#[test]
fn a_folder_that_is_not_a_pack_and_a_port_in_use_are_refused_plainly() {
    let pack = Pack::new();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["room", &pack.dir.to_string_lossy(), "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("is not a pack (no index.html") && said.contains("lockstep lesson pack"),
        "{said}"
    );
    let room = Room::start(&pack.path(), &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["room", &pack.path().to_string_lossy()])
        .args(["--port", &room.port.to_string(), "--bind", "127.0.0.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("port {} is in use", room.port)),
        "{said}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["room", &pack.path().to_string_lossy(), "--bind", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bind takes an IP address"));
}
