//! A roster: every completion code pasted from a room, verified against the lessons, with
//! duplicates flagged and counts per exercise. The facilitator's view and `lockstep lesson
//! verify` both use it, so the page and the terminal say the same of the same codes.

use super::code::{self, CodeError};
use super::Lesson;

/// One code of the roster and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The code as found (whitespace inside removed).
    pub code: String,
    /// The name the code carries or, for a code that carries none (unreadable, or of version
    /// 1), the name it was pasted under ("Alice: LS2…"); empty when there is neither.
    pub name: String,
    pub lesson: String,
    pub exercise: String,
    pub verified: bool,
    /// Why the code was refused, or what is odd about a verified one (a duplicate).
    pub reason: String,
}

/// The counts of one exercise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub lesson: String,
    pub exercise: String,
    pub verified: usize,
    pub refused: usize,
}

/// The most codes the page checks at once: each runs its exercise's check over every seed, on
/// the page's thread (about a second for a hundred); the command line checks up to
/// [`code::CODES_MAX`].
pub const PAGE_CODES_MAX: usize = 100;

/// Verifies every code in `text` (see [`code::find_pasted`]; a code cut short is a refused
/// row) against `lessons`, running at most
/// `max` checks; later codes are listed as not checked. A code seen before is refused as a
/// duplicate of its first row; two names with the very same answer to one exercise are both
/// kept and flagged, as the facilitator may want to ask.
pub fn verify(lessons: &[Lesson], text: &str, max: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut checked = 0;
    for pasted in code::find_pasted(text) {
        let found = pasted.code;
        let first = rows.iter().position(|r| r.code == found);
        let decoded = code::decode(&found);
        let (name, lesson, exercise) = match &decoded {
            Ok(c) => (c.name.clone(), c.lesson.clone(), c.exercise.clone()),
            Err(_) => Default::default(),
        };
        let mut row = Row {
            code: found.clone(),
            // A code that carries no name (unreadable, or of version 1) is shown under the
            // name it was pasted with.
            name: if name.is_empty() {
                pasted.pasted_name
            } else {
                name
            },
            lesson,
            exercise,
            verified: false,
            reason: String::new(),
        };
        if let Some(k) = first {
            row.reason = format!("the same code as row {}", k + 1);
            rows.push(row);
            continue;
        }
        if !pasted.whole {
            row.reason = "cut short: the code ends before its checksum's eight digits; ask for \
                          the whole code"
                .into();
            rows.push(row);
            continue;
        }
        if checked == max {
            row.reason = format!(
                "not checked: at most {max} codes are checked at once (lockstep lesson verify checks more)"
            );
            rows.push(row);
            continue;
        }
        checked += 1;
        match code::verify(lessons, &found) {
            Ok(v) => {
                row.verified = true;
                // The same edits for the same exercise under another name.
                let twin = rows.iter().position(|r| {
                    r.verified
                        && r.lesson == row.lesson
                        && r.exercise == row.exercise
                        && r.name != row.name
                        && code::decode(&r.code)
                            .is_ok_and(|c| c.edits == v.completion.edits && !c.edits.is_empty())
                });
                if let Some(k) = twin {
                    row.reason = format!(
                        "the same answer as {} (row {})",
                        shown_name(&rows[k].name),
                        k + 1
                    );
                }
            }
            Err(e) => row.reason = reason(&e),
        }
        rows.push(row);
    }
    rows
}

fn shown_name(name: &str) -> &str {
    if name.is_empty() {
        "(no name)"
    } else {
        name
    }
}

/// A code as a refused row shows it, so the facilitator can tell which was pasted: its first
/// characters, and an ellipsis for the rest.
pub fn shown_code(code: &str) -> String {
    const SHOWN_CHARS: usize = 24;
    if code.chars().count() <= SHOWN_CHARS {
        code.to_string()
    } else {
        let head: String = code.chars().take(SHOWN_CHARS).collect();
        format!("{head}…")
    }
}

/// A refusal in words.
fn reason(e: &CodeError) -> String {
    e.to_string()
}

/// Verified and refused codes per exercise, in the order exercises first appear.
pub fn counts(rows: &[Row]) -> Vec<Count> {
    let mut out: Vec<Count> = Vec::new();
    for r in rows {
        let at = match out
            .iter()
            .position(|c| c.lesson == r.lesson && c.exercise == r.exercise)
        {
            Some(k) => k,
            None => {
                out.push(Count {
                    lesson: r.lesson.clone(),
                    exercise: r.exercise.clone(),
                    verified: 0,
                    refused: 0,
                });
                out.len() - 1
            }
        };
        if r.verified {
            out[at].verified += 1;
        } else {
            out[at].refused += 1;
        }
    }
    out
}

/// A field of CSV (RFC 4180): quoted when it holds a comma, a quote or a line break. A field
/// that a spreadsheet would read as a formula is prefixed with a quote mark.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The roster as CSV: a header, then `name,lesson,exercise,result,reason,code` a row.
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from("name,lesson,exercise,result,reason,code\n");
    for r in rows {
        let fields = [
            r.name.as_str(),
            r.lesson.as_str(),
            r.exercise.as_str(),
            if r.verified { "verified" } else { "refused" },
            r.reason.as_str(),
            r.code.as_str(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// The roster as a plain-text table, then a line per exercise with its counts.
pub fn table(rows: &[Row]) -> String {
    let head = ["name", "lesson", "exercise", "result", "reason"];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                shown_name(&r.name).to_string(),
                r.lesson.clone(),
                r.exercise.clone(),
                if r.verified { "verified" } else { "refused" }.to_string(),
                if r.verified {
                    r.reason.clone()
                } else {
                    format!("{} ({})", r.reason, shown_code(&r.code))
                },
            ]
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..4).map(width).collect();
    let line = |c: [&str; 5]| {
        let mut s = String::new();
        for (i, w) in widths.iter().enumerate() {
            s.push_str(c[i]);
            s.push_str(&" ".repeat(w - c[i].chars().count() + 2));
        }
        s.push_str(c[4]);
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(head);
    for c in &cells {
        out.push_str(&line([&c[0], &c[1], &c[2], &c[3], &c[4]]));
    }
    for c in counts(rows) {
        let what = if c.lesson.is_empty() {
            "unreadable codes".to_string()
        } else {
            format!("{} / {}", c.lesson, c.exercise)
        };
        out.push_str(&format!(
            "{what}: {} verified, {} refused\n",
            c.verified, c.refused
        ));
    }
    out
}
