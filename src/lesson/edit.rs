//! The changes a lesson makes to a scenario.
//!
//! An [`Edit`] is what one of the app's controls does ([`crate::toggles::Toggle`]), written
//! as a short line of text (`fencing accounts one_source all_accesses`), so that a lesson, a
//! learner's attempt and a completion code all say the same thing the same way, and applying
//! one goes through the app's own [`toggles::apply`]. A [`Control`] names the control an edit
//! belongs to. A [`Patch`] is an author's change that no control offers (a lease, a new client
//! class), applied to the scenario's fields by name.

use toml::Value;

use crate::scenario::{Fencing, FencingChecks, Scenario};
use crate::toggles::{self, Toggle};

/// One change a control makes, in the words of a lesson file: a control's [`Toggle`], read
/// from and written as its line of text.
pub type Edit = Toggle;

fn on_off(word: &str) -> Result<bool, String> {
    match word {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, found \"{word}\"")),
    }
}

fn number(word: &str) -> Result<u64, String> {
    word.parse()
        .map_err(|_| format!("\"{word}\" is not a whole number"))
}

fn fencing_mode(word: &str) -> Result<Fencing, String> {
    toggles::fencing_from_value(word)
        .ok_or_else(|| format!("unknown fencing mode \"{word}\" (off, any_source or one_source)"))
}

fn fencing_checks(word: &str) -> Result<FencingChecks, String> {
    toggles::checks_from_value(word)
        .ok_or_else(|| format!("unknown fencing checks \"{word}\" (writes or all_accesses)"))
}

/// The forms an edit takes, for messages.
pub const EDIT_FORMS: &str = "partition on|off, partition.start MS, partition.length MS, \
protocol CLASS CHOICE, fencing RESOURCE MODE [CHECKS], role SERVICE independent|subordinate:AUTHORITY, \
outage SERVICE on|off, outage.start SERVICE MS, outage.length SERVICE MS, pause on|off, \
pause.client CLIENT, pause.start MS, pause.length MS, migration on|off, migration.mode MODE, \
migration.at MS, seed N";

impl std::str::FromStr for Edit {
    type Err = String;

    /// Reads an edit from its line of text: the control's words, then the value.
    fn from_str(text: &str) -> Result<Edit, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let arity = |n: usize| -> Result<(), String> {
            if words.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "\"{text}\": \"{}\" takes {} value(s)",
                    words[0],
                    n - 1
                ))
            }
        };
        let Some(head) = words.first() else {
            return Err("an empty edit".into());
        };
        let edit = match *head {
            "partition" => {
                arity(2)?;
                Edit::Partition(on_off(words[1])?)
            }
            "partition.start" => {
                arity(2)?;
                Edit::PartitionStart(number(words[1])?)
            }
            "partition.length" => {
                arity(2)?;
                Edit::PartitionLength(number(words[1])?)
            }
            "protocol" => {
                arity(3)?;
                Edit::Protocol {
                    class: words[1].into(),
                    choice: words[2].into(),
                }
            }
            "fencing" => {
                if words.len() != 3 && words.len() != 4 {
                    return Err(format!(
                        "\"{text}\": fencing takes a resource, a mode and optionally the checks"
                    ));
                }
                Edit::Fencing {
                    resource: words[1].into(),
                    mode: fencing_mode(words[2])?,
                    checks: words.get(3).map(|w| fencing_checks(w)).transpose()?,
                }
            }
            "role" => {
                arity(3)?;
                let authority = match words[2] {
                    "independent" => None,
                    w => match w.strip_prefix("subordinate:") {
                        Some(a) if !a.is_empty() => Some(a.to_string()),
                        _ => {
                            return Err(format!(
                                "\"{text}\": a role is independent or subordinate:AUTHORITY"
                            ))
                        }
                    },
                };
                Edit::Role {
                    service: words[1].into(),
                    authority,
                }
            }
            "outage" => {
                arity(3)?;
                Edit::Outage {
                    service: words[1].into(),
                    on: on_off(words[2])?,
                }
            }
            "outage.start" => {
                arity(3)?;
                Edit::OutageStart {
                    service: words[1].into(),
                    ms: number(words[2])?,
                }
            }
            "outage.length" => {
                arity(3)?;
                Edit::OutageLength {
                    service: words[1].into(),
                    ms: number(words[2])?,
                }
            }
            "pause" => {
                arity(2)?;
                Edit::Pause(on_off(words[1])?)
            }
            "pause.client" => {
                arity(2)?;
                Edit::PauseClient(words[1].into())
            }
            "pause.start" => {
                arity(2)?;
                Edit::PauseStart(number(words[1])?)
            }
            "pause.length" => {
                arity(2)?;
                Edit::PauseLength(number(words[1])?)
            }
            "migration" => {
                arity(2)?;
                Edit::Migration(on_off(words[1])?)
            }
            "migration.mode" => {
                arity(2)?;
                Edit::MigrationMode(toggles::migration_mode_from_value(words[1]).ok_or_else(
                    || {
                        format!(
                            "unknown migration mode \"{}\" (naive, drain or transfer)",
                            words[1]
                        )
                    },
                )?)
            }
            "migration.at" => {
                arity(2)?;
                Edit::MigrationAt(number(words[1])?)
            }
            "seed" => {
                arity(2)?;
                Edit::Seed(number(words[1])?)
            }
            other => {
                return Err(format!(
                    "unknown edit \"{other}\"; an edit is one of: {EDIT_FORMS}"
                ))
            }
        };
        Ok(edit)
    }
}

impl std::fmt::Display for Edit {
    /// The edit's line of text; reading it back gives the same edit.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = |b: bool| if b { "on" } else { "off" };
        match self {
            Edit::Partition(b) => write!(f, "partition {}", on(*b)),
            Edit::PartitionStart(ms) => write!(f, "partition.start {ms}"),
            Edit::PartitionLength(ms) => write!(f, "partition.length {ms}"),
            Edit::Protocol { class, choice } => write!(f, "protocol {class} {choice}"),
            Edit::Fencing {
                resource,
                mode,
                checks,
            } => {
                write!(f, "fencing {resource} {}", toggles::fencing_value(*mode))?;
                match checks {
                    Some(c) => write!(f, " {}", toggles::checks_value(*c)),
                    None => Ok(()),
                }
            }
            Edit::Role { service, authority } => write!(
                f,
                "role {service} {}",
                toggles::role_value(authority.as_deref())
            ),
            Edit::Outage { service, on: b } => write!(f, "outage {service} {}", on(*b)),
            Edit::OutageStart { service, ms } => write!(f, "outage.start {service} {ms}"),
            Edit::OutageLength { service, ms } => write!(f, "outage.length {service} {ms}"),
            Edit::Pause(b) => write!(f, "pause {}", on(*b)),
            Edit::PauseClient(c) => write!(f, "pause.client {c}"),
            Edit::PauseStart(ms) => write!(f, "pause.start {ms}"),
            Edit::PauseLength(ms) => write!(f, "pause.length {ms}"),
            Edit::Migration(b) => write!(f, "migration {}", on(*b)),
            Edit::MigrationMode(m) => {
                write!(f, "migration.mode {}", toggles::migration_mode_value(*m))
            }
            Edit::MigrationAt(ms) => write!(f, "migration.at {ms}"),
            Edit::Seed(s) => write!(f, "seed {s}"),
        }
    }
}

impl Edit {
    /// The toggle that makes this edit in scenario `s` (fencing without checks keeps the
    /// resource's current checks).
    pub fn toggle(&self, s: &Scenario) -> Toggle {
        match self {
            Edit::Fencing {
                resource,
                mode,
                checks: None,
            } => {
                let current = s
                    .resources
                    .iter()
                    .find(|r| &r.name == resource)
                    .map(|r| r.fencing_checks)
                    .unwrap_or_default();
                Toggle::Fencing {
                    resource: resource.clone(),
                    mode: *mode,
                    checks: Some(current),
                }
            }
            other => other.clone(),
        }
    }

    /// Why this edit cannot apply to `s`, if it names something `s` does not have or offers a
    /// choice its control does not.
    pub fn problem(&self, s: &Scenario) -> Option<String> {
        let class = |c: &str| s.clients.iter().any(|x| x.name == c);
        let service = |x: &str| s.services.iter().any(|y| y.name == x);
        let resource = |r: &str| s.resources.iter().any(|y| y.name == r);
        match self {
            Edit::Protocol { class: c, choice } => {
                if !class(c) {
                    return Some(format!("there is no client class \"{c}\""));
                }
                let options = toggles::protocol_options(s);
                if !options.iter().any(|o| &o.value == choice) {
                    let values: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                    return Some(format!(
                        "\"{choice}\" is not a protocol this scenario offers ({})",
                        values.join(", ")
                    ));
                }
                None
            }
            Edit::Fencing { resource: r, .. } if !resource(r) => {
                Some(format!("there is no resource \"{r}\""))
            }
            Edit::Role {
                service: x,
                authority,
            } => {
                if !service(x) {
                    return Some(format!("there is no service \"{x}\""));
                }
                match authority {
                    Some(a) if !service(a) => Some(format!("there is no service \"{a}\"")),
                    _ => None,
                }
            }
            Edit::Outage { service: x, .. }
            | Edit::OutageStart { service: x, .. }
            | Edit::OutageLength { service: x, .. }
                if !service(x) =>
            {
                Some(format!("there is no service \"{x}\""))
            }
            Edit::PauseClient(c)
                if !s.client_instance_names().contains(c) && !class(c.as_str()) =>
            {
                Some(format!("there is no client \"{c}\""))
            }
            _ => None,
        }
    }
}

impl Edit {
    /// The edit in the words of the control that makes it, as the page labels the control and
    /// its choice ("online: lock in old only", "tokens checked at orders: tokens from old only,
    /// on every access (reads too)"), for a learner who sees the controls and never the
    /// edit's line of text. `s` is the scenario it applies to, which names a protocol's
    /// services and a fence's source as the control does.
    pub fn words(&self, s: &Scenario) -> String {
        let on_off = |on: bool, yes: String, no: String| if on { yes } else { no };
        match self {
            Edit::Partition(on) => on_off(
                *on,
                "a partition between the regions".into(),
                "no partition between the regions".into(),
            ),
            Edit::PartitionStart(ms) => format!("the partition starts at {ms} ms"),
            Edit::PartitionLength(ms) => format!("the partition lasts {ms} ms"),
            Edit::Protocol { class, choice } => {
                let label = toggles::protocol_options(s)
                    .into_iter()
                    .find(|o| &o.value == choice)
                    .map(|o| o.label)
                    .unwrap_or_else(|| toggles::protocol_label(choice));
                format!("{class}: {}", lower_first(&label))
            }
            Edit::Fencing {
                resource,
                mode,
                checks,
            } => {
                let mode = lower_first(&toggles::fencing_label_at(s, resource, *mode));
                match checks {
                    Some(c) => format!(
                        "tokens checked at {resource}: {mode}, on {}",
                        lower_first(toggles::checks_label(*c))
                    ),
                    None => format!("tokens checked at {resource}: {mode}"),
                }
            }
            Edit::Role { service, authority } => match authority {
                Some(a) => format!("service {service}: subordinate to {a}"),
                None => format!("service {service}: independent"),
            },
            Edit::Outage { service, on } => on_off(
                *on,
                format!("an outage of service {service}"),
                format!("no outage of service {service}"),
            ),
            Edit::OutageStart { service, ms } => {
                format!("the outage of service {service} starts at {ms} ms")
            }
            Edit::OutageLength { service, ms } => {
                format!("the outage of service {service} lasts {ms} ms")
            }
            Edit::Pause(on) => on_off(
                *on,
                "a client paused (a long GC pause)".into(),
                "no client pause".into(),
            ),
            Edit::PauseClient(c) => format!("the paused client: {c}"),
            Edit::PauseStart(ms) => format!("the pause starts at {ms} ms"),
            Edit::PauseLength(ms) => format!("the pause lasts {ms} ms"),
            Edit::Migration(on) => on_off(
                *on,
                "the resource migrated to another service".into(),
                "no migration".into(),
            ),
            Edit::MigrationMode(m) => format!(
                "the migration: {}",
                lower_first(toggles::migration_mode_label(*m))
            ),
            Edit::MigrationAt(ms) => format!("the migration at {ms} ms"),
            Edit::Seed(n) => format!("seed {n}"),
        }
    }
}

/// A list of edits in words, each made in `s` as the controls would ([`Edit::words`]).
pub fn words(edits: &[Edit], s: &Scenario) -> String {
    edits
        .iter()
        .map(|e| e.words(s))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A control's label with its first letter small, to follow a colon mid-sentence.
fn lower_first(label: &str) -> String {
    let mut chars = label.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Applies edits as the controls would: each control ends at the last value the edits give
/// it, and those values are applied afresh to `start` ([`toggles::Settings`]), so the result
/// depends on the controls' final values only, not on the order or the values before.
pub fn apply_edits(start: &Scenario, edits: &[Edit]) -> Scenario {
    toggles::Settings::of(edits).apply(start)
}

/// A control of the app, which a step or an exercise lets the learner touch.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Control {
    Partition,
    /// The protocol of a client class.
    Protocol(String),
    /// Fencing (mode and checks) at a resource.
    Fencing(String),
    /// A service's role: independent or subordinate.
    Role(String),
    /// A service's outage (on or off, start, length).
    Outage(String),
    /// The client pause (on or off, client, start, length).
    Pause,
    /// The migration (on or off, mode, time).
    Migration,
    Seed,
}

impl Control {
    /// The control that makes an edit.
    pub fn of(e: &Edit) -> Control {
        match e {
            Edit::Partition(_) | Edit::PartitionStart(_) | Edit::PartitionLength(_) => {
                Control::Partition
            }
            Edit::Protocol { class, .. } => Control::Protocol(class.clone()),
            Edit::Fencing { resource, .. } => Control::Fencing(resource.clone()),
            Edit::Role { service, .. } => Control::Role(service.clone()),
            Edit::Outage { service, .. }
            | Edit::OutageStart { service, .. }
            | Edit::OutageLength { service, .. } => Control::Outage(service.clone()),
            Edit::Pause(_) | Edit::PauseClient(_) | Edit::PauseStart(_) | Edit::PauseLength(_) => {
                Control::Pause
            }
            Edit::Migration(_) | Edit::MigrationMode(_) | Edit::MigrationAt(_) => {
                Control::Migration
            }
            Edit::Seed(_) => Control::Seed,
        }
    }

    /// Why this control does not exist in `s`, if it does not.
    pub fn problem(&self, s: &Scenario) -> Option<String> {
        match self {
            Control::Protocol(c) if !s.clients.iter().any(|x| &x.name == c) => {
                Some(format!("there is no client class \"{c}\""))
            }
            Control::Fencing(r) if !s.resources.iter().any(|x| &x.name == r) => {
                Some(format!("there is no resource \"{r}\""))
            }
            Control::Role(x) | Control::Outage(x) if !s.services.iter().any(|y| &y.name == x) => {
                Some(format!("there is no service \"{x}\""))
            }
            Control::Partition if s.regions.len() < 2 => {
                Some("a partition needs at least two regions".into())
            }
            Control::Migration if s.migrations.is_empty() && !toggles::can_migrate(s) => {
                Some("a migration needs two independent services".into())
            }
            Control::Pause if s.clients.is_empty() => Some("there is no client to pause".into()),
            _ => None,
        }
    }
}

impl std::str::FromStr for Control {
    type Err = String;

    fn from_str(text: &str) -> Result<Control, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let named = |kind: &str| -> Result<String, String> {
            match words.as_slice() {
                [_, name] => Ok(name.to_string()),
                _ => Err(format!("the {kind} control names one {}", {
                    match kind {
                        "protocol" => "client class",
                        "fencing" => "resource",
                        _ => "service",
                    }
                })),
            }
        };
        let alone = |c: Control| -> Result<Control, String> {
            if words.len() == 1 {
                Ok(c)
            } else {
                Err(format!("the {} control takes no name", words[0]))
            }
        };
        match words.first().copied() {
            Some("partition") => alone(Control::Partition),
            Some("pause") => alone(Control::Pause),
            Some("migration") => alone(Control::Migration),
            Some("seed") => alone(Control::Seed),
            Some("protocol") => Ok(Control::Protocol(named("protocol")?)),
            Some("fencing") => Ok(Control::Fencing(named("fencing")?)),
            Some("role") => Ok(Control::Role(named("role")?)),
            Some("outage") => Ok(Control::Outage(named("outage")?)),
            Some(other) => Err(format!(
                "unknown control \"{other}\"; the controls are partition, protocol CLASS, \
                 fencing RESOURCE, role SERVICE, outage SERVICE, pause, migration and seed"
            )),
            None => Err("an empty control".into()),
        }
    }
}

impl Control {
    /// The control in words, as a handout names it: "how online locks", "the role of new".
    pub fn words(&self) -> String {
        match self {
            Control::Partition => "the partition between the regions".into(),
            Control::Protocol(c) => format!("how {c} locks"),
            Control::Fencing(r) => format!("the tokens checked at {r}"),
            Control::Role(x) => format!("the role of service {x}"),
            Control::Outage(x) => format!("the outage of service {x}"),
            Control::Pause => "the client pause".into(),
            Control::Migration => "the migration".into(),
            Control::Seed => "the seed".into(),
        }
    }
}

impl std::fmt::Display for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Control::Partition => write!(f, "partition"),
            Control::Protocol(c) => write!(f, "protocol {c}"),
            Control::Fencing(r) => write!(f, "fencing {r}"),
            Control::Role(s) => write!(f, "role {s}"),
            Control::Outage(s) => write!(f, "outage {s}"),
            Control::Pause => write!(f, "pause"),
            Control::Migration => write!(f, "migration"),
            Control::Seed => write!(f, "seed"),
        }
    }
}

/// Whether an edit is made with one of the controls.
pub fn allowed(controls: &[Control], e: &Edit) -> bool {
    controls.contains(&Control::of(e))
}

/// An author's change to a scenario's fields, beyond what controls offer.
#[derive(Clone, Debug, PartialEq)]
pub enum Patch {
    /// Sets one field: `path` is the field's place, e.g. `["clients", "batch", "stop_ms"]`
    /// (elements of `services`, `resources` and `clients` by name, of `partitions`, `pauses`
    /// and `migrations` by number from 1).
    Set { path: Vec<String>, value: Value },
    /// Appends an element to a list of the scenario (`clients`, `services`, ...).
    Add { list: String, value: Value },
}

/// Why patches could not be applied: the patch at `index`, or the result (`None`), which does
/// not fit the scenario format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchError {
    pub index: Option<usize>,
    pub message: String,
}

/// Applies patches in order to the scenario's TOML form, then reads the result back (without
/// validating it: an intermediate change may leave it invalid until a later one). Going
/// through the TOML text reuses the reader the app already has for the editor, so patches
/// add little to the browser build.
pub fn apply_patches(s: &Scenario, patches: &[Patch]) -> Result<Scenario, PatchError> {
    if patches.is_empty() {
        return Ok(s.clone());
    }
    let whole = |message: String| PatchError {
        index: None,
        message,
    };
    let mut doc: toml::Table =
        toml::from_str(&s.to_toml_string()).map_err(|e| whole(e.message().to_string()))?;
    for (index, p) in patches.iter().enumerate() {
        let fail = |message: String| PatchError {
            index: Some(index),
            message,
        };
        match p {
            Patch::Set { path, value } => {
                let target = locate(&mut doc, path).map_err(fail)?;
                *target = value.clone();
            }
            Patch::Add { list, value } => {
                let items = doc
                    .entry(list.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(items) = items else {
                    return Err(fail(format!("\"{list}\" is not a list of the scenario")));
                };
                items.push(value.clone());
            }
        }
    }
    let text = toml::to_string(&doc).map_err(|e| whole(e.to_string()))?;
    toml::from_str::<Scenario>(&text).map_err(|e| whole(e.message().trim().to_string()))
}

impl std::fmt::Display for Patch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Patch::Set { path, value } => write!(f, "set {} = {value}", path.join(".")),
            Patch::Add { list, value } => write!(f, "add to {list}: {value}"),
        }
    }
}

/// The field at `path` in a scenario's TOML form: lists of named things are indexed by name,
/// other lists by number from 1. The last field may be absent (an optional field left
/// unset): it is created, and the scenario reader says if it is not a field at all.
fn locate<'a>(doc: &'a mut toml::Table, path: &[String]) -> Result<&'a mut Value, String> {
    let Some((first, rest)) = path.split_first() else {
        return Err("an empty path".into());
    };
    if rest.is_empty() {
        return Ok(doc.entry(first.clone()).or_insert(Value::Boolean(false)));
    }
    let Some(mut here) = doc.get_mut(first.as_str()) else {
        return Err(format!("the scenario has no \"{first}\""));
    };
    let mut walked: Vec<&str> = vec![first];
    for (i, key) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let at = format!("\"{}\"", walked.join("."));
        here = match here {
            Value::Table(map) => {
                if !map.contains_key(key.as_str()) && !last {
                    return Err(format!("{at} has no field \"{key}\""));
                }
                map.entry(key.clone()).or_insert(Value::Boolean(false))
            }
            Value::Array(items) => {
                let by_name = items
                    .iter()
                    .position(|x| x.get("name").and_then(Value::as_str) == Some(key.as_str()));
                let i = match by_name {
                    Some(i) => i,
                    None => match key.parse::<usize>() {
                        Ok(n) if n >= 1 && n <= items.len() => n - 1,
                        _ => return Err(format!("{at} has no element \"{key}\"")),
                    },
                };
                &mut items[i]
            }
            _ => return Err(format!("{at} is a value, not a table or a list")),
        };
        walked.push(key);
    }
    Ok(here)
}
