//! Completion codes: a short, URL-safe string that records how a learner solved an exercise,
//! so that a facilitator can re-run it and see the check pass (a result that is verified, not
//! merely claimed).
//!
//! A code is `LS2.<payload>.<checksum>`: the version, the payload in URL-safe base64 without
//! padding, and eight hexadecimal digits of the payload's 32-bit FNV-1a hash. The payload is
//! text, one item a line: the learner's name, the lesson's id, the exercise's id, the seeds,
//! then the edits from the exercise's start to the learner's final scenario, in the words of a
//! lesson file (`fencing accounts one_source all_accesses`): one edit a control changed, never
//! the attempts on the way, so a code stays short however long the learner tried. Codes of
//! version 1 (`LS1`, no name) are still read.
//!
//! The checksum catches a mistyped or truncated code; it is not a signature, and a code is not
//! secret: anyone can make a code for any name. What makes a code trustworthy is [`verify`]: it
//! applies the edits to the exercise's start and runs the check again, so a code passes only if
//! its edits really solve the exercise. A code proves that someone found a solution, not who.
//!
//! Codes are read as people paste them: [`find_codes`] finds every code in a text, ignoring
//! whitespace and line breaks inside one (chat apps wrap long words) and anything around it
//! ("Alice: LS2…").

use super::claim;
use super::edit::Edit;
use super::{Grade, Lesson, ITEMS_MAX};
use crate::scenario::Scenario;

/// The version this module writes.
pub const VERSION: &str = "LS2";
/// The earlier version, still read: no name.
pub const VERSION_1: &str = "LS1";
/// The longest name a code carries, in characters.
pub const NAME_CHARS_MAX: usize = 40;
/// The longest code read. Longer input is refused before anything is decoded.
pub const CODE_CHARS_MAX: usize = 2048;

/// What a completion code records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The learner's name as they typed it (empty in a version 1 code).
    pub name: String,
    pub lesson: String,
    pub exercise: String,
    /// The seeds the check ran.
    pub seeds: Vec<u64>,
    /// The learner's edits from the exercise's start, in order.
    pub edits: Vec<Edit>,
}

/// Why a code was not accepted.
#[derive(Clone, Debug, PartialEq)]
pub enum CodeError {
    TooLong,
    /// Not a code of this form, or damaged.
    Malformed(String),
    /// A code of another version.
    Version(String),
    /// The checksum does not match: a character was changed or lost.
    Checksum,
    UnknownLesson(String),
    UnknownExercise(String),
    /// The exercise now checks other seeds than those the code was made with.
    Seeds {
        code: Vec<u64>,
        exercise: Vec<u64>,
    },
    /// An edit the exercise does not allow, or one that gives an invalid scenario.
    Edits(String),
    /// The edits do not pass the check.
    Fails(Grade),
}

impl std::fmt::Display for CodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodeError::TooLong => write!(f, "the code is longer than {CODE_CHARS_MAX} characters"),
            CodeError::Malformed(why) => write!(f, "this is not a completion code: {why}"),
            CodeError::Version(v) => write!(
                f,
                "the code is of version {v}; this version of the app reads {VERSION}"
            ),
            CodeError::Checksum => write!(
                f,
                "the code's checksum does not match: a character was changed or lost"
            ),
            CodeError::UnknownLesson(l) => write!(f, "there is no lesson \"{l}\""),
            CodeError::UnknownExercise(x) => write!(f, "the lesson has no exercise \"{x}\""),
            CodeError::Seeds { code, exercise } => write!(
                f,
                "the code was made with seeds {code:?}, but the exercise now checks {exercise:?}"
            ),
            CodeError::Edits(why) => write!(f, "the code's edits are not an attempt: {why}"),
            CodeError::Fails(g) => match g.failures.first() {
                Some(x) => write!(
                    f,
                    "the code's edits do not pass: with seed {}, the goal needs that {}, but {}",
                    x.seed, x.claim, x.actual
                ),
                None => write!(f, "the code's edits do not pass"),
            },
        }
    }
}

fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn unbase64url(text: &str) -> Result<Vec<u8>, String> {
    use base64::{DecodeError, Engine as _};
    // The crate refuses what a code never is (a wrong length, a stray character, padding, a
    // last character with bits no encoder sets); the facilitator reads why in words.
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|e| match e {
            DecodeError::InvalidByte(_, b'=') => "a code has no padding".into(),
            DecodeError::InvalidByte(_, b) => format!("'{}' cannot appear in a code", b as char),
            DecodeError::InvalidLength(_) => "the payload has a wrong length".into(),
            DecodeError::InvalidLastSymbol(_, _) => {
                "the payload's last character is not one a code ends with".into()
            }
            DecodeError::InvalidPadding => "a code has no padding".into(),
        })
}

/// The seeds as a code carries them: a range when they are consecutive, else a list with no
/// spaces (a code is one word).
fn seeds_in_code(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[1] == w[0] + 1);
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if consecutive && seeds.len() > 1 => format!("{a}..{}", b + 1),
        _ => seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// A name as a code carries it: one line, without control characters, at most
/// [`NAME_CHARS_MAX`] characters.
pub fn clean_name(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(NAME_CHARS_MAX)
        .collect()
}

/// Writes a completion code.
pub fn encode(c: &Completion) -> String {
    let mut payload = format!(
        "{}\n{}\n{}\n{}",
        clean_name(&c.name),
        c.lesson,
        c.exercise,
        seeds_in_code(&c.seeds)
    );
    for e in &c.edits {
        payload.push('\n');
        payload.push_str(&e.to_string());
    }
    format!(
        "{VERSION}.{}.{:08x}",
        base64url(payload.as_bytes()),
        crate::hash::fnv1a32(payload.as_bytes())
    )
}

/// Reads a completion code. Input longer than [`CODE_CHARS_MAX`] is refused before decoding;
/// whitespace inside the code (a line broken by a chat app) is ignored.
pub fn decode(code: &str) -> Result<Completion, CodeError> {
    if code.len() > CODE_CHARS_MAX {
        return Err(CodeError::TooLong);
    }
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let parts: Vec<&str> = code.split('.').collect();
    let [version, payload, checksum] = parts.as_slice() else {
        return Err(CodeError::Malformed(
            "a code has three parts separated by dots".into(),
        ));
    };
    if *version != VERSION && *version != VERSION_1 {
        return Err(if version.starts_with("LS") {
            CodeError::Version(version.to_string())
        } else {
            CodeError::Malformed(format!("a code starts with {VERSION}"))
        });
    }
    let bytes = unbase64url(payload).map_err(CodeError::Malformed)?;
    let sum = u32::from_str_radix(checksum, 16)
        .ok()
        .filter(|_| checksum.len() == 8)
        .ok_or(CodeError::Checksum)?;
    if sum != crate::hash::fnv1a32(&bytes) {
        return Err(CodeError::Checksum);
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| CodeError::Malformed("the payload is not text".into()))?;
    let mut lines = text.split('\n');
    let name = if *version == VERSION {
        lines
            .next()
            .ok_or_else(|| CodeError::Malformed("the payload is incomplete".into()))?
    } else {
        ""
    };
    let (Some(lesson), Some(exercise), Some(seeds)) = (lines.next(), lines.next(), lines.next())
    else {
        return Err(CodeError::Malformed("the payload is incomplete".into()));
    };
    let seeds = claim::seeds(seeds).map_err(CodeError::Malformed)?;
    let edits: Vec<Edit> = lines
        .map(|l| l.parse::<Edit>())
        .collect::<Result<_, _>>()
        .map_err(CodeError::Malformed)?;
    if edits.len() > ITEMS_MAX {
        return Err(CodeError::Malformed(format!("more than {ITEMS_MAX} edits")));
    }
    Ok(Completion {
        name: clean_name(name),
        lesson: lesson.to_string(),
        exercise: exercise.to_string(),
        seeds,
        edits,
    })
}

/// The most codes read from one text.
pub const CODES_MAX: usize = 500;

/// The characters from `from` on that `wanted` accepts, at most `max` of them, skipping any
/// whitespace between them (a line a chat app broke); and where the run ended.
fn take_across_space(
    chars: &[char],
    from: usize,
    max: usize,
    wanted: impl Fn(char) -> bool,
) -> (String, usize) {
    let mut taken = String::new();
    let mut k = from;
    while k < chars.len() && taken.len() < max && (wanted(chars[k]) || chars[k].is_whitespace()) {
        if !chars[k].is_whitespace() {
            taken.push(chars[k]);
        }
        k += 1;
    }
    (taken, k)
}

/// A code found in pasted text, with what was written before it on its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pasted {
    /// The code as written (whitespace inside removed); a code cut short is kept as it is, so
    /// that it can be refused rather than lost.
    pub code: String,
    /// What stands before the code on its line, as a chat app writes a sender ("Alice:",
    /// "- Bob said"), as a name: see [`clean_name`]. Empty when nothing does.
    pub pasted_name: String,
    /// Whether the code has all its parts: the version, the payload, the checksum's eight
    /// digits. One that has not cannot be read.
    pub whole: bool,
}

/// The fewest characters of payload that make a code cut short still a code (`LS2.abcd`):
/// fewer is a word that starts the same.
const CUT_PAYLOAD_CHARS_MIN: usize = 4;

/// Every code in a pasted text, in order, as written (whitespace inside removed): a code
/// starts with `LS` and its version's digits and a dot, goes on through the payload's
/// characters to the second dot, and ends with the eight digits of its checksum. Whitespace and
/// line breaks inside a code are skipped, so a code a chat app wrapped is read whole; anything
/// around codes ("Alice:", bullets, quotes) is ignored. At most [`CODES_MAX`] are read.
///
/// A code cut short (no second dot, or fewer than eight digits after it) is found too, as far as
/// its line goes, and marked not [`Pasted::whole`]: a roster refuses it rather than losing it.
pub fn find_pasted(text: &str) -> Vec<Pasted> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    // Where the text of the line before the next code starts: after a line break or a code.
    let mut line_from = 0;
    let b64 = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    while at + 3 < chars.len() && out.len() < CODES_MAX {
        if chars[at] == '\n' {
            line_from = at + 1;
        }
        let starts = chars[at] == 'L'
            && chars[at + 1] == 'S'
            && chars[at + 2].is_ascii_digit()
            && (at == 0 || !b64(chars[at - 1]));
        if !starts {
            at += 1;
            continue;
        }
        let mut k = at + 2;
        let mut code: String = "LS".into();
        while k < chars.len() && chars[k].is_ascii_digit() {
            code.push(chars[k]);
            k += 1;
        }
        if chars.get(k) != Some(&'.') {
            at += 1;
            continue;
        }
        code.push('.');
        k += 1;
        let pasted_name = clean_name(
            chars[line_from..at]
                .iter()
                .collect::<String>()
                .trim_start_matches(|c: char| {
                    c.is_whitespace() || matches!(c, '-' | '*' | '>' | '•')
                })
                .trim_end_matches(|c: char| {
                    c.is_whitespace() || matches!(c, ':' | '-' | '—' | '"' | '\'' | '(' | '[')
                }),
        );
        // The payload, across any whitespace, up to its closing dot.
        let (payload, next) = take_across_space(&chars, k, usize::MAX, b64);
        let mut whole = !payload.is_empty() && chars.get(next) == Some(&'.');
        let mut end = next;
        if whole {
            // Exactly eight hexadecimal digits, across any whitespace.
            let (sum, after) = take_across_space(&chars, next + 1, 8, |c| c.is_ascii_hexdigit());
            whole = sum.len() == 8;
            if whole {
                code.push_str(&payload);
                code.push('.');
                code.push_str(&sum);
                end = after;
            }
        }
        if !whole {
            // Cut short: the code as far as it goes on its line, without crossing a space.
            let mut cut = code.clone();
            let mut j = k;
            while j < chars.len()
                && (b64(chars[j]) || chars[j] == '.')
                && cut.len() < CODE_CHARS_MAX
            {
                cut.push(chars[j]);
                j += 1;
            }
            let payload_chars = chars[k..j].iter().take_while(|c| b64(**c)).count();
            if payload_chars < CUT_PAYLOAD_CHARS_MIN {
                at += 1;
                continue;
            }
            code = cut;
            end = j;
        }
        out.push(Pasted {
            code,
            pasted_name,
            whole,
        });
        at = end;
        line_from = end;
    }
    out
}

/// The whole codes in a pasted text: [`find_pasted`]'s, without those cut short.
pub fn find_codes(text: &str) -> Vec<String> {
    find_pasted(text)
        .into_iter()
        .filter(|p| p.whole)
        .map(|p| p.code)
        .collect()
}

/// A code that was verified: the edits pass the exercise's check again.
#[derive(Clone, Debug)]
pub struct Verified {
    pub completion: Completion,
    pub lesson_title: String,
    pub exercise_title: String,
    /// The learner's scenario, rebuilt from the code.
    pub scenario: Scenario,
    pub grade: Grade,
}

/// Decodes a code, rebuilds the learner's scenario from the exercise's start and runs the
/// check again with every seed. Only a code whose edits pass is verified.
pub fn verify(lessons: &[Lesson], code: &str) -> Result<Verified, CodeError> {
    let c = decode(code)?;
    let lesson = lessons
        .iter()
        .find(|l| l.id == c.lesson)
        .ok_or_else(|| CodeError::UnknownLesson(c.lesson.clone()))?;
    let exercise = lesson
        .exercise(&c.exercise)
        .ok_or_else(|| CodeError::UnknownExercise(c.exercise.clone()))?;
    if c.seeds != exercise.seeds {
        return Err(CodeError::Seeds {
            code: c.seeds.clone(),
            exercise: exercise.seeds.clone(),
        });
    }
    let scenario = exercise.attempt(&c.edits).map_err(CodeError::Edits)?;
    let mut grade = exercise.grade(&scenario);
    if !grade.passed {
        // Said in words, as the page says it: "every class completes at least one operation",
        // not the check's syntax.
        for f in &mut grade.failures {
            if let Some(c) = exercise.check.iter().find(|c| c.text == f.claim) {
                f.claim = c.words();
            }
        }
        return Err(CodeError::Fails(grade));
    }
    Ok(Verified {
        lesson_title: lesson.title.clone(),
        exercise_title: exercise.title.clone(),
        completion: c,
        scenario,
        grade,
    })
}
