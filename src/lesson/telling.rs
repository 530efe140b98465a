//! Narration that tells a prediction's answer: a step's narration is read before the learner
//! predicts, so narration that states what the run will show ("both clients overlap", "no
//! update is lost") turns the prediction into reading back. `lesson check` notes it.
//!
//! A heuristic over words, kept narrow so that it does not fire on ordinary narration:
//!
//! - the narration and the right choice are read as words: lowercase, Markdown marks, code
//!   ticks, quotes and apostrophes dropped, a link's address left out, and sentence ends
//!   (`.`, `!`, `?`, `:`, `;`) kept as breaks no phrase crosses;
//! - a question does not tell ("do they overlap?"), nor a phrase after a question word in its
//!   sentence ("watch whether they overlap"), nor one within three words after a negation
//!   ("they never overlap" says the opposite, which the other outcome's phrases catch);
//! - it tells if it says the right choice's own words: the choice without its answer word
//!   ("Yes," or "No,") and without short function words, when at least two words remain,
//!   appearing in one sentence in that order with nothing but function words between;
//! - or if it says the right claim's outcome in words: a phrase from a list kept by the
//!   claim's test and direction (`exclusion broken`: "overlap", "both hold", "exclusion
//!   breaks"; `lost_updates == 0`: "no update is lost"; `deadlock`: "deadlock", "cycle forms";
//!   `idle_ms(R) > N`: "sits idle"; `inventory_defects > 0`: "defect"; ...);

use crate::monitor::{Exclusion, Integrity};

use super::claim::{Metric, Op, Test};
use super::PredictionChoice;

/// A sentence's end in the words: no phrase matches across it.
const BREAK: &str = "|";
/// A question's end: nothing in a question tells.
const QUESTION: &str = "?";

fn is_break(w: &str) -> bool {
    w == BREAK || w == QUESTION
}

/// Words that carry no outcome: left out of a choice's words and skipped between them.
const FUNCTION_WORDS: [&str; 40] = [
    "a", "an", "the", "it", "its", "is", "are", "was", "were", "be", "been", "to", "of", "in",
    "on", "at", "as", "and", "or", "by", "for", "with", "this", "that", "these", "those", "they",
    "them", "their", "then", "so", "do", "does", "will", "would", "can", "yes", "again", "still",
    "now",
];

/// Words that turn a phrase into its opposite.
const NEGATIONS: [&str; 17] = [
    "no", "not", "never", "neither", "nor", "without", "cannot", "cant", "doesnt", "dont", "wont",
    "isnt", "arent", "didnt", "nobody", "nothing", "none",
];

/// Words that make the rest of their sentence a question: "watch whether the lanes overlap".
const ASKING: [&str; 2] = ["whether", "if"];

/// How far back a negation still reaches a phrase.
const NEGATION_REACH: usize = 3;

/// The narration as words: lowercase, Markdown and punctuation dropped, sentence ends as
/// [`BREAK`]s.
fn words(markdown: &str) -> Vec<String> {
    // A link's address is not narration: `[text](address)` reads as its text.
    let mut text = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        text.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        rest = rest.find(')').map_or("", |end| &rest[end + 1..]);
    }
    text.push_str(rest);
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        let w = word.trim_matches('-');
        if w.chars().any(char::is_alphanumeric) {
            out.push(w.to_string());
        }
        word.clear();
    };
    for ch in text.chars() {
        match ch {
            c if c.is_alphanumeric() || c == '-' || c == '_' => {
                word.extend(c.to_lowercase());
            }
            '\'' | '\u{2019}' => {}
            '.' | '!' | '?' | ':' | ';' => {
                flush(&mut word, &mut out);
                let end = if ch == '?' { QUESTION } else { BREAK };
                match out.last_mut() {
                    // "Really?!": a question however it ends.
                    Some(w) if is_break(w) && end == QUESTION => *w = QUESTION.to_string(),
                    Some(w) if is_break(w) => {}
                    Some(_) => out.push(end.to_string()),
                    None => {}
                }
            }
            _ => flush(&mut word, &mut out),
        }
    }
    flush(&mut word, &mut out);
    out
}

fn is_function(w: &str) -> bool {
    FUNCTION_WORDS.contains(&w)
}

/// Whether the words at `at` do not state what they say: a negation comes within
/// [`NEGATION_REACH`] words before them in their sentence, a question word anywhere before
/// them in it, or the sentence is a question.
fn negated(words: &[String], at: usize) -> bool {
    let before = words[..at].iter().rev().take_while(|w| !is_break(w));
    let question = words[at..].iter().find(|w| is_break(w)).map(String::as_str) == Some(QUESTION);
    question
        || before
            .clone()
            .take(NEGATION_REACH)
            .any(|w| NEGATIONS.contains(&w.as_str()))
        || before.clone().any(|w| ASKING.contains(&w.as_str()))
}

/// Where `phrase` starts in `words`, word for word, not negated.
fn says(words: &[String], phrase: &[&str]) -> bool {
    !phrase.is_empty()
        && words
            .windows(phrase.len())
            .enumerate()
            .any(|(at, w)| w.iter().zip(phrase).all(|(a, b)| a == b) && !negated(words, at))
}

/// Whether `words` holds the content words `wanted` in order, in one sentence, with only
/// function words between them, not negated.
fn says_content(words: &[String], wanted: &[String]) -> bool {
    let Some(first) = wanted.first() else {
        return false;
    };
    (0..words.len()).any(|at| {
        if &words[at] != first || negated(words, at) {
            return false;
        }
        let mut k = 1;
        for w in &words[at + 1..] {
            if k == wanted.len() {
                break;
            }
            if *w == wanted[k] {
                k += 1;
            } else if is_break(w) || !is_function(w) {
                return false;
            }
        }
        k == wanted.len()
    })
}

/// A choice's own words: without its answer word ("Yes," "No:") and function words.
fn choice_words(text: &str) -> Vec<String> {
    let trimmed = text.trim_start();
    let lower = trimmed.to_lowercase();
    let body = ["yes,", "no,", "yes:", "no:", "yes.", "no."]
        .iter()
        .find(|a| lower.starts_with(*a))
        .map_or(trimmed, |a| &trimmed[a.len()..]);
    words(body)
        .into_iter()
        .filter(|w| !is_break(w) && !is_function(w))
        .collect()
}

const HOLDS: &[&str] = &[
    "exclusion holds",
    "exclusion held",
    "exclusion is kept",
    "keeps exclusion",
    "never overlap",
    "never overlaps",
    "no overlap",
    "no overlaps",
    "never both",
    "keeps them apart",
    "keeps everyone apart",
    "one at a time",
    "one holder at a time",
    "take turns",
    "takes turns",
];
const BROKEN: &[&str] = &[
    "exclusion breaks",
    "exclusion broke",
    "exclusion is broken",
    "exclusion broken",
    "breaks exclusion",
    "both hold",
    "both believe",
    "both clients believe",
    "overlap",
    "overlaps",
    "overlapped",
    "overlapping",
    "collide",
    "collides",
    "collided",
];
const INTACT: &[&str] = &[
    "no update is lost",
    "no update was lost",
    "no updates are lost",
    "no lost update",
    "no lost updates",
    "nothing is lost",
    "integrity intact",
    "integrity holds",
    "integrity is intact",
];
const CORRUPTED: &[&str] = &[
    "update is lost",
    "update was lost",
    "updates are lost",
    "updates were lost",
    "lost update",
    "lost updates",
    "loses an update",
    "lost an update",
    "increment is lost",
    "increment is gone",
    "increment was lost",
    "gone for good",
    "lost for good",
    "integrity corrupted",
    "integrity is corrupted",
];
const DEADLOCK: &[&str] = &[
    "deadlock",
    "deadlocks",
    "deadlocked",
    "cycle forms",
    "cycle formed",
    "waits forever",
    "wait forever",
    "stuck forever",
];
const NO_DEADLOCK: &[&str] = &[
    "no deadlock",
    "no cycle",
    "no wait-for cycle",
    "cycle breaks",
    "breaks the cycle",
    "cycle is broken",
    "deadlock-free",
];
const WORK: &[&str] = &[
    "work gets done",
    "gets work done",
    "take turns",
    "takes turns",
    "keeps working",
    "keep working",
];
const NO_WORK: &[&str] = &[
    "nothing gets done",
    "gets nothing done",
    "never gets to work",
    "no work",
    "no write",
];
const IDLE: &[&str] = &[
    "sits idle",
    "stands idle",
    "stays idle",
    "idle through",
    "stops working",
    "work stops",
    "nobody touches",
    "stops it",
];
const BUSY: &[&str] = &[
    "keeps working",
    "keep working",
    "never idle",
    "stays busy",
    "work continues",
];
const DEFECT: &[&str] = &["defect", "defects"];
const NO_DEFECT: &[&str] = &["no defect", "no defects", "finds nothing"];
const LIVELOCK: &[&str] = &["livelock", "livelocks", "round after round", "every round"];
const REJECTED: &[&str] = &["refused", "rejected", "refuses", "rejects"];

/// Whether a comparison says "none" (`== 0`, `< 1`), "some" (`> 0`, `>= 1`, `!= 0`), or
/// neither.
fn none_or_some(op: Op, value: f64) -> Option<bool> {
    match op {
        Op::Eq | Op::Le if value == 0.0 => Some(false),
        Op::Lt if value <= 1.0 => Some(false),
        Op::Gt if value >= 0.0 => Some(true),
        Op::Ge if value >= 1.0 => Some(true),
        Op::Ne if value == 0.0 => Some(true),
        _ => None,
    }
}

/// The phrases that state a claim's outcome in words.
fn outcome_phrases(test: &Test) -> &'static [&'static str] {
    match test {
        Test::Exclusion(Exclusion::Holds) => HOLDS,
        Test::Exclusion(Exclusion::Broken) => BROKEN,
        Test::Integrity(Integrity::Intact) => INTACT,
        Test::Integrity(Integrity::Corrupted) => CORRUPTED,
        Test::Deadlock(true) => DEADLOCK,
        Test::Deadlock(false) => NO_DEADLOCK,
        Test::Compare { metric, op, value } => {
            let some = none_or_some(*op, *value);
            let pick = |none: &'static [&'static str], yes: &'static [&'static str]| match some {
                Some(false) => none,
                Some(true) => yes,
                None => &[][..],
            };
            match metric {
                Metric::Count("violation_count") | Metric::Overlaps(..) => pick(HOLDS, BROKEN),
                Metric::Count("max_simultaneous_holders") => match (op, *value) {
                    (Op::Gt, v) if v >= 1.0 => BROKEN,
                    (Op::Ge, v) if v >= 2.0 => BROKEN,
                    (Op::Eq | Op::Le, v) if v <= 1.0 => HOLDS,
                    (Op::Lt, v) if v <= 2.0 => HOLDS,
                    _ => &[],
                },
                Metric::Count("lost_updates") => pick(INTACT, CORRUPTED),
                Metric::Count("wait_cycle_count") => pick(NO_DEADLOCK, DEADLOCK),
                Metric::Count("livelock_count") => pick(&[], LIVELOCK),
                Metric::Count("rejected_writes" | "rejected_reads") => pick(&[], REJECTED),
                Metric::Count("accepted_writes") | Metric::Operations("completed") => {
                    pick(NO_WORK, WORK)
                }
                Metric::InventoryDefects(_) => pick(NO_DEFECT, DEFECT),
                Metric::IdleMs(_) | Metric::IdlePercent(_) => match op {
                    Op::Gt | Op::Ge => IDLE,
                    Op::Lt | Op::Le => BUSY,
                    _ => &[],
                },
                _ => &[],
            }
        }
        _ => &[],
    }
}

/// What in a narration tells the choice (the right one of its step's prediction), if
/// anything: the words it says, as the narration has them.
pub fn tells(narration: &str, choice: &PredictionChoice) -> Option<String> {
    let said = words(narration);
    let own = choice_words(&choice.text);
    if own.len() >= 2 && says_content(&said, &own) {
        return Some(own.join(" "));
    }
    outcome_phrases(&choice.claim.test)
        .iter()
        .map(|p| p.split(' ').collect::<Vec<_>>())
        .find(|p| says(&said, p))
        .map(|p| p.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::Claim;

    fn choice(text: &str, claim: &str) -> PredictionChoice {
        PredictionChoice {
            text: text.into(),
            claim: Claim::parse(claim, 1).expect("a claim"),
        }
    }

    #[test]
    fn narration_that_states_the_outcome_tells() {
        let broken = choice("Yes, both at once", "exclusion broken");
        assert_eq!(
            tells("Watch the `old` lane: both clients overlap.", &broken),
            Some("overlap".into())
        );
        assert_eq!(
            tells("From here, **both hold** the lock.", &broken),
            Some("both hold".into())
        );
        let intact = choice("No, every update lands", "lost_updates == 0");
        assert_eq!(
            tells("With fencing on, no update is lost.", &intact),
            Some("no update is lost".into())
        );
        let deadlock = choice("Neither client ever gets to work", "deadlock");
        assert_eq!(
            tells("Each holds one lock: the textbook deadlock.", &deadlock),
            Some("deadlock".into())
        );
        let idle = choice("It sits idle through the outage", "idle_ms(ledger) > 1500");
        assert_eq!(
            tells("While `east-locks` is down, the ledger sits idle.", &idle),
            Some("sits idle".into())
        );
    }

    #[test]
    fn narration_that_repeats_the_right_choice_tells() {
        let c = choice("No, it keeps the order", "exclusion holds");
        assert_eq!(
            tells("The subordinate keeps the order of the authority.", &c),
            Some("keeps order".into())
        );
        // A choice of one content word is too common a word to tell.
        let never = choice("No, never", "exclusion holds");
        assert_eq!(tells("It never asks twice.", &never), None);
    }

    #[test]
    fn neutral_narration_does_not_tell() {
        let broken = choice("Yes, both at once", "exclusion broken");
        for neutral in [
            "Watch the `old` lane and the `new` lane.",
            "Watch whether the two lanes overlap.",
            "Each client asks both services at once.",
            "Do the two grants ever overlap?",
            "The clients never overlap [in the docs](https://example.com/overlap).",
        ] {
            assert_eq!(tells(neutral, &broken), None, "{neutral}");
        }
        let holds = choice("No, never", "exclusion holds");
        assert_eq!(
            tells(
                "Two services grant the same lock. Watch the overlap bands.",
                &holds
            ),
            None
        );
        let corrupted = choice("Yes, an increment is gone", "lost_updates > 0");
        assert_eq!(
            tells("Watch the balance: an update is lost.", &corrupted),
            Some("update is lost".into())
        );
        assert_eq!(
            tells("Watch the balance: is an update lost?", &corrupted),
            None
        );
        assert_eq!(
            tells("Count the writes. Does the balance add up?", &corrupted),
            None
        );
        // A phrase does not cross a sentence's end.
        let idle = choice("It sits idle through the outage", "idle_ms(ledger) > 1500");
        assert_eq!(tells("It sits. Idle hands wait.", &idle), None);
    }
}
