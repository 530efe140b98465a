//! What a room keeps, in SQLite: its settings (the facilitator's secret, the timer), each
//! participant with their progress, the codes they handed in, and a log of every report
//! received. Every change is written before it is answered, so a room stopped at any moment
//! resumes with everything it had acknowledged.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// The reports logged for one participant; later ones still count, but are not logged.
const LOGGED_REPORTS_MAX: u64 = 5000;

pub struct Store {
    connection: Connection,
}

/// One participant as the room knows them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Participant {
    pub id: u32,
    pub name: String,
    /// Their bearer token; it never leaves the room except in the answer to their join.
    #[serde(skip)]
    pub token: String,
    pub joined_ms: u64,
    /// Where they are: the lesson and the step or exercise (empty for the course's list or a
    /// lesson's introduction).
    pub lesson: String,
    pub place: String,
    /// Since when they are there.
    pub place_since_ms: u64,
    pub last_seen_ms: u64,
    /// The last report received (see `room.rs`'s `Report::seq`).
    pub last_seq: u64,
    pub predictions_made: u32,
    pub predictions_right: u32,
    /// For each "lesson/place" tried: the attempts, whether the last passed, its feedback.
    pub attempts: BTreeMap<String, Attempts>,
    /// For each "lesson/place": the hints shown.
    pub hints: BTreeMap<String, u32>,
    #[serde(skip)]
    pub codes: Vec<CodeRow>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Attempts {
    pub count: u32,
    pub passed: bool,
    pub feedback: String,
    /// A "your turn" step's gate rather than an exercise's check.
    pub gate: bool,
}

/// A code handed in, checked as `lockstep lesson verify` checks it.
#[derive(Clone, Debug, Serialize)]
pub struct CodeRow {
    pub code: String,
    pub lesson: String,
    pub exercise: String,
    pub verified: bool,
    pub reason: String,
    pub at_ms: u64,
}

/// A participant's row as the dashboard shows it: no token.
#[derive(Serialize)]
pub struct Row<'a> {
    id: u32,
    name: &'a str,
    joined_ms: u64,
    lesson: &'a str,
    place: &'a str,
    since_ms: u64,
    last_seen_ms: u64,
    /// The attempts at the current place, and whether the last one passed.
    attempts: u32,
    passed: bool,
    feedback: &'a str,
    attempts_total: u32,
    predictions_made: u32,
    predictions_right: u32,
    hints: u32,
    codes: &'a [CodeRow],
}

/// The text a count is kept under.
fn key(lesson: &str, place: &str) -> String {
    format!("{lesson}/{place}")
}

/// The most places a participant's counts keep; a participant cannot make the room's memory
/// grow without bound by reporting made-up places.
const PLACES_MAX: usize = 400;

impl Participant {
    pub fn new(id: u32, name: String, token: String, now_ms: u64) -> Participant {
        Participant {
            id,
            name,
            token,
            joined_ms: now_ms,
            lesson: String::new(),
            place: String::new(),
            place_since_ms: now_ms,
            last_seen_ms: now_ms,
            last_seq: 0,
            predictions_made: 0,
            predictions_right: 0,
            attempts: BTreeMap::new(),
            hints: BTreeMap::new(),
            codes: Vec::new(),
        }
    }

    pub fn at_place(&mut self, lesson: &str, place: &str, now_ms: u64) {
        if self.lesson != lesson || self.place != place {
            self.lesson = lesson.to_string();
            self.place = place.to_string();
            self.place_since_ms = now_ms;
        }
    }

    pub fn predicted(&mut self, right: bool) {
        self.predictions_made += 1;
        if right {
            self.predictions_right += 1;
        }
    }

    pub fn attempted(
        &mut self,
        lesson: &str,
        place: &str,
        passed: bool,
        feedback: &str,
        gate: bool,
    ) {
        let k = key(lesson, place);
        if !self.attempts.contains_key(&k) && self.attempts.len() >= PLACES_MAX {
            return;
        }
        let a = self.attempts.entry(k).or_default();
        // A gate is reported each time its reading changes; an exercise at each Check.
        a.count += 1;
        a.passed = passed;
        a.feedback = feedback.to_string();
        a.gate = gate;
    }

    pub fn hinted(&mut self, lesson: &str, place: &str, count: u32) {
        let k = key(lesson, place);
        if !self.hints.contains_key(&k) && self.hints.len() >= PLACES_MAX {
            return;
        }
        self.hints.insert(k, count);
    }

    pub fn row(&self) -> Row<'_> {
        let here = self.attempts.get(&key(&self.lesson, &self.place));
        Row {
            id: self.id,
            name: &self.name,
            joined_ms: self.joined_ms,
            lesson: &self.lesson,
            place: &self.place,
            since_ms: self.place_since_ms,
            last_seen_ms: self.last_seen_ms,
            attempts: here.map_or(0, |a| a.count),
            passed: here.is_some_and(|a| a.passed),
            feedback: here.map_or("", |a| a.feedback.as_str()),
            attempts_total: self.attempts.values().map(|a| a.count).sum(),
            predictions_made: self.predictions_made,
            predictions_right: self.predictions_right,
            hints: self.hints.values().sum(),
            codes: &self.codes,
        }
    }
}

fn failed(e: rusqlite::Error) -> String {
    format!("the room's store: {e}")
}

impl Store {
    /// Opens (or creates) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, String> {
        let connection = Connection::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 CREATE TABLE IF NOT EXISTS settings (
                     name TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS participants (
                     id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token TEXT NOT NULL UNIQUE,
                     state TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS codes (
                     participant INTEGER NOT NULL, code TEXT NOT NULL, lesson TEXT NOT NULL,
                     exercise TEXT NOT NULL, verified INTEGER NOT NULL, reason TEXT NOT NULL,
                     at_ms INTEGER NOT NULL, PRIMARY KEY (participant, code));
                 CREATE TABLE IF NOT EXISTS reports (
                     participant INTEGER NOT NULL, seq INTEGER NOT NULL, at_ms INTEGER NOT NULL,
                     kind TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (participant, seq));",
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Store { connection })
    }

    pub fn setting(&self, name: &str) -> Result<Option<String>, String> {
        self.connection
            .query_row(
                "SELECT value FROM settings WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()
            .map_err(failed)
    }

    pub fn set_setting(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.connection
            .execute(
                "INSERT INTO settings (name, value) VALUES (?1, ?2)
                 ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                params![name, value],
            )
            .map(|_| ())
            .map_err(failed)
    }

    /// Every participant, in the order they joined, with their codes.
    pub fn participants(&self) -> Result<Vec<Participant>, String> {
        let mut statement = self
            .connection
            .prepare("SELECT id, token, state FROM participants ORDER BY id")
            .map_err(failed)?;
        let rows = statement
            .query_map([], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(failed)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, token, state) = row.map_err(failed)?;
            let mut p: Participant = serde_json::from_str(&state)
                .map_err(|e| format!("the room's store: participant {id}: {e}"))?;
            p.id = id;
            p.token = token;
            out.push(p);
        }
        let mut codes = self
            .connection
            .prepare(
                "SELECT participant, code, lesson, exercise, verified, reason, at_ms FROM codes
                 ORDER BY at_ms, rowid",
            )
            .map_err(failed)?;
        let rows = codes
            .query_map([], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    CodeRow {
                        code: r.get(1)?,
                        lesson: r.get(2)?,
                        exercise: r.get(3)?,
                        verified: r.get(4)?,
                        reason: r.get(5)?,
                        at_ms: r.get(6)?,
                    },
                ))
            })
            .map_err(failed)?;
        for row in rows {
            let (id, code) = row.map_err(failed)?;
            if let Some(p) = out.iter_mut().find(|p| p.id == id) {
                p.codes.push(code);
            }
        }
        Ok(out)
    }

    pub fn save_participant(&mut self, p: &Participant) -> Result<(), String> {
        let state = serde_json::to_string(p).map_err(|e| e.to_string())?;
        self.connection
            .execute(
                "INSERT INTO participants (id, name, token, state) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET state = excluded.state",
                params![p.id, p.name, p.token, state],
            )
            .map(|_| ())
            .map_err(failed)
    }

    /// A participant's new state, their codes and the reports that changed it, in one
    /// transaction.
    pub fn save_report(
        &mut self,
        p: &Participant,
        reports: &[(u64, String, String)],
        now_ms: u64,
    ) -> Result<(), String> {
        let state = serde_json::to_string(p).map_err(|e| e.to_string())?;
        let t = self.connection.transaction().map_err(failed)?;
        t.execute(
            "UPDATE participants SET state = ?2 WHERE id = ?1",
            params![p.id, state],
        )
        .map_err(failed)?;
        for c in &p.codes {
            t.execute(
                "INSERT OR IGNORE INTO codes (participant, code, lesson, exercise, verified, reason, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![p.id, c.code, c.lesson, c.exercise, c.verified, c.reason, c.at_ms],
            )
            .map_err(failed)?;
        }
        for (seq, kind, body) in reports {
            if *seq > LOGGED_REPORTS_MAX {
                break;
            }
            t.execute(
                "INSERT OR IGNORE INTO reports (participant, seq, at_ms, kind, body)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![p.id, seq, now_ms, kind, body],
            )
            .map_err(failed)?;
        }
        t.commit().map_err(failed)
    }
}
