//! The toggles a learner reaches for first, as edits of a scenario.
//!
//! A toggle never decides an outcome: it changes the scenario, and the engine runs the result.
//! The app keeps the controls' values as [`Settings`], and the scenario shown is always those
//! values applied to the scenario as opened: no earlier value of a control lingers, and turning
//! a fault off and on again restores the opened scenario's window instead of a default one.

use crate::sorted::SortedMap;

use crate::scenario::{
    Fencing, FencingChecks, Migration, MigrationMode, Partition, PartitionMode, Pause, Protocol,
    Scenario, Window,
};

/// One change a control makes to the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Toggle {
    /// Adds or removes the partition between regions.
    Partition(bool),
    PartitionStart(u64),
    PartitionLength(u64),
    /// Sets a client class's protocol to one of [`protocol_options`]' values.
    Protocol {
        class: String,
        choice: String,
    },
    /// Fencing at a resource; `checks` left out keeps the resource's current setting.
    Fencing {
        resource: String,
        mode: Fencing,
        checks: Option<FencingChecks>,
    },
    /// Makes a service independent (`None`) or subordinate to the named authority.
    Role {
        service: String,
        authority: Option<String>,
    },
    Outage {
        service: String,
        on: bool,
    },
    OutageStart {
        service: String,
        ms: u64,
    },
    OutageLength {
        service: String,
        ms: u64,
    },
    Pause(bool),
    PauseClient(String),
    PauseStart(u64),
    PauseLength(u64),
    Migration(bool),
    MigrationMode(MigrationMode),
    MigrationAt(u64),
    Seed(u64),
}

/// Faults the learner turned off, kept so that turning them on again restores them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    partitions: Vec<Partition>,
    outages: SortedMap<String, Vec<Window>>,
    pauses: Vec<Pause>,
    migrations: Vec<Migration>,
}

/// A choice in a select control: its value and the words shown for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

fn choice(value: impl Into<String>, label: impl Into<String>) -> Choice {
    Choice {
        value: value.into(),
        label: label.into(),
    }
}

/// Rounds a time to a tidy number of milliseconds for a default window.
fn tidy(ms: u64) -> u64 {
    if ms >= 100 {
        ms / 50 * 50
    } else {
        ms
    }
}

/// The value of a protocol in the protocol select.
pub fn protocol_value(p: &Protocol) -> String {
    match p {
        Protocol::Single { service } => format!("single:{service}"),
        Protocol::AllUnordered { .. } => "all_unordered".into(),
        Protocol::AllOrdered { .. } => "all_ordered".into(),
        Protocol::TokenChain { .. } => "token_chain".into(),
        Protocol::NoLock => "no_lock".into(),
        Protocol::Majority { .. } => "majority".into(),
    }
}

/// The authority and subordinate a token chain would use: an existing subordinate pair if the
/// scenario has one, otherwise the first two services.
fn chain_pair(s: &Scenario) -> Option<(String, String)> {
    if let Some(sub) = s.services.iter().find(|x| x.subordinate_to.is_some()) {
        return Some((sub.subordinate_to.clone()?, sub.name.clone()));
    }
    match s.services.as_slice() {
        [a, b, ..] => Some((a.name.clone(), b.name.clone())),
        _ => None,
    }
}

/// The services a multi-service protocol asks, in order: the class's own list if it has one,
/// otherwise every independent service.
fn all_services(s: &Scenario, current: &Protocol) -> Vec<String> {
    match current {
        Protocol::AllOrdered { services, .. }
        | Protocol::AllUnordered { services, .. }
        | Protocol::Majority { services, .. }
            if services.len() >= 2 =>
        {
            services.clone()
        }
        _ => s
            .services
            .iter()
            .filter(|x| x.subordinate_to.is_none())
            .map(|x| x.name.clone())
            .collect(),
    }
}

/// The protocols a class can switch to in this scenario.
pub fn protocol_options(s: &Scenario) -> Vec<Choice> {
    let mut out: Vec<Choice> = s
        .services
        .iter()
        .map(|x| {
            choice(
                format!("single:{}", x.name),
                format!("Lock in {} only", x.name),
            )
        })
        .collect();
    let independent = s
        .services
        .iter()
        .filter(|x| x.subordinate_to.is_none())
        .count();
    if independent >= 2 {
        out.push(choice("all_unordered", "Lock in all, any order"));
        out.push(choice("all_ordered", "Lock in all, fixed order"));
    }
    if let Some((authority, subordinate)) = chain_pair(s) {
        let already = s
            .services
            .iter()
            .any(|x| x.name == subordinate && x.subordinate_to.as_deref() == Some(&authority));
        // Choosing a chain also makes the subordinate defer to the authority, which changes
        // every class that uses it; the label says so.
        out.push(choice(
            "token_chain",
            if already {
                format!("Token from {authority}, shown to {subordinate}")
            } else {
                format!(
                    "Token from {authority}, shown to {subordinate} (makes {subordinate} subordinate to {authority})"
                )
            },
        ));
    }
    // A majority is offered where a class already locks that way, so that the control can
    // show it; its fields (quorum, drift allowance) come from that class.
    if majority_of(s).is_some() {
        out.push(choice("majority", "A majority of its services (Redlock)"));
    }
    out.push(choice("no_lock", "No lock (last writer wins)"));
    out
}

/// The first majority protocol of a scenario's classes, if one has any.
fn majority_of(s: &Scenario) -> Option<&Protocol> {
    s.clients
        .iter()
        .map(|c| &c.protocol)
        .find(|p| matches!(p, Protocol::Majority { .. }))
}

/// The words of a protocol choice without a scenario to name its services: what
/// [`protocol_options`] labels it, but a token chain's authority and subordinate unnamed.
pub fn protocol_label(choice: &str) -> String {
    if let Some(service) = choice.strip_prefix("single:") {
        return format!("Lock in {service} only");
    }
    match choice {
        "all_unordered" => "Lock in all, any order",
        "all_ordered" => "Lock in all, fixed order",
        "token_chain" => "Token from the authority, shown to its subordinate",
        "no_lock" => "No lock (last writer wins)",
        "majority" => "A majority of its services (Redlock)",
        other => other,
    }
    .to_string()
}

/// The protocols a control offers one class of a scenario opened as it is: see
/// [`Settings::protocol_choices`].
pub fn protocol_choices(s: &Scenario, class: &str) -> Vec<Choice> {
    Settings::default().protocol_choices(s, class)
}

/// The roles a control offers one service of a scenario opened as it is: see
/// [`Settings::role_choices`].
pub fn role_choices(s: &Scenario, service: &str) -> Vec<Choice> {
    Settings::default().role_choices(s, service)
}

/// The value of a role in the role select.
pub fn role_value(authority: Option<&str>) -> String {
    authority.map_or("independent".to_string(), |a| format!("subordinate:{a}"))
}

/// The roles a service can take: independent, or subordinate to another independent service.
pub fn role_options(s: &Scenario, service: &str) -> Vec<Choice> {
    let mut out = vec![choice("independent", "Independent")];
    for x in &s.services {
        if x.name != service && x.subordinate_to.is_none() {
            out.push(choice(
                format!("subordinate:{}", x.name),
                format!("Subordinate to {}", x.name),
            ));
        }
    }
    out
}

/// Whether the scenario has two independent services a migration could move between.
pub fn can_migrate(s: &Scenario) -> bool {
    s.services
        .iter()
        .filter(|x| x.subordinate_to.is_none())
        .count()
        >= 2
}

/// Applies a toggle to a scenario. Turning a fault off stores it in `memory`.
pub fn apply(s: &Scenario, toggle: &Toggle, memory: &mut Memory) -> Scenario {
    let mut s = s.clone();
    let third = tidy(s.duration_ms / 3);
    let quarter = tidy(s.duration_ms / 4).max(1);
    match toggle {
        Toggle::Partition(on) => {
            if *on {
                if s.partitions.is_empty() && s.regions.len() >= 2 {
                    s.partitions = std::mem::take(&mut memory.partitions);
                    if s.partitions.is_empty() {
                        s.partitions.push(Partition {
                            start_ms: quarter,
                            duration_ms: quarter,
                            groups: vec![vec![s.regions[0].clone()], s.regions[1..].to_vec()],
                            mode: PartitionMode::default(),
                        });
                    }
                }
            } else if !s.partitions.is_empty() {
                memory.partitions = std::mem::take(&mut s.partitions);
            }
        }
        Toggle::PartitionStart(ms) => {
            if let Some(p) = s.partitions.first_mut() {
                p.start_ms = *ms;
            }
        }
        Toggle::PartitionLength(ms) => {
            if let Some(p) = s.partitions.first_mut() {
                p.duration_ms = *ms;
            }
        }
        Toggle::Protocol { class, choice } => {
            let pair = chain_pair(&s);
            let Some(i) = s.clients.iter().position(|c| &c.name == class) else {
                return s;
            };
            let current = s.clients[i].protocol.clone();
            let skip = match &current {
                Protocol::AllOrdered {
                    skip_unreachable, ..
                }
                | Protocol::AllUnordered {
                    skip_unreachable, ..
                } => *skip_unreachable,
                _ => false,
            };
            let new = if let Some(service) = choice.strip_prefix("single:") {
                Protocol::Single {
                    service: service.to_string(),
                }
            } else {
                match choice.as_str() {
                    "all_unordered" => Protocol::AllUnordered {
                        services: all_services(&s, &current),
                        skip_unreachable: skip,
                    },
                    "all_ordered" => Protocol::AllOrdered {
                        services: all_services(&s, &current),
                        skip_unreachable: skip,
                    },
                    "token_chain" => {
                        let Some((authority, subordinate)) = pair else {
                            return s;
                        };
                        // A chain needs the subordinate to defer to the authority; choosing the
                        // protocol sets that role, as the learner would have to anyway.
                        if let Some(sub) = s.services.iter_mut().find(|x| x.name == subordinate) {
                            sub.subordinate_to = Some(authority.clone());
                        }
                        Protocol::TokenChain {
                            authority,
                            subordinate,
                        }
                    }
                    "no_lock" => Protocol::NoLock,
                    "majority" => match (&current, majority_of(&s)) {
                        (Protocol::Majority { .. }, _) => current.clone(),
                        (
                            _,
                            Some(Protocol::Majority {
                                services,
                                quorum,
                                clock_drift_ms,
                            }),
                        ) => Protocol::Majority {
                            services: services.clone(),
                            quorum: *quorum,
                            clock_drift_ms: *clock_drift_ms,
                        },
                        _ => return s,
                    },
                    _ => return s,
                }
            };
            s.clients[i].protocol = new;
        }
        Toggle::Fencing {
            resource,
            mode,
            checks,
        } => {
            let source = fencing_source_default(&s, resource);
            if let Some(r) = s.resources.iter_mut().find(|r| &r.name == resource) {
                r.fencing = *mode;
                r.fencing_checks = checks.unwrap_or(r.fencing_checks);
                r.fencing_source = match mode {
                    Fencing::OneSource => r.fencing_source.clone().or(source),
                    _ => None,
                };
            }
        }
        Toggle::Role { service, authority } => {
            if let Some(x) = s.services.iter_mut().find(|x| &x.name == service) {
                x.subordinate_to = authority.clone();
            }
        }
        Toggle::Outage { service, on } => {
            let duration = s.duration_ms;
            if let Some(x) = s.services.iter_mut().find(|x| &x.name == service) {
                if *on {
                    if x.outages.is_empty() {
                        x.outages = memory.outages.remove(service).unwrap_or_else(|| {
                            vec![Window {
                                start_ms: third,
                                duration_ms: tidy(duration / 5).max(1),
                            }]
                        });
                    }
                } else if !x.outages.is_empty() {
                    memory
                        .outages
                        .insert(service.clone(), std::mem::take(&mut x.outages));
                }
            }
        }
        Toggle::OutageStart { service, ms } => {
            if let Some(w) = outage_mut(&mut s, service) {
                w.start_ms = *ms;
            }
        }
        Toggle::OutageLength { service, ms } => {
            if let Some(w) = outage_mut(&mut s, service) {
                w.duration_ms = *ms;
            }
        }
        Toggle::Pause(on) => {
            if *on {
                if s.pauses.is_empty() {
                    s.pauses = std::mem::take(&mut memory.pauses);
                    if s.pauses.is_empty() {
                        let first = s.client_instance_names().into_iter().next();
                        s.pauses.extend(first.map(|client| Pause {
                            client,
                            start_ms: third,
                            duration_ms: quarter,
                        }));
                    }
                }
            } else if !s.pauses.is_empty() {
                memory.pauses = std::mem::take(&mut s.pauses);
            }
        }
        Toggle::PauseClient(client) => {
            if let Some(p) = s.pauses.first_mut() {
                p.client = client.clone();
            }
        }
        Toggle::PauseStart(ms) => {
            if let Some(p) = s.pauses.first_mut() {
                p.start_ms = *ms;
            }
        }
        Toggle::PauseLength(ms) => {
            if let Some(p) = s.pauses.first_mut() {
                p.duration_ms = *ms;
            }
        }
        Toggle::Migration(on) => {
            if *on {
                if s.migrations.is_empty() {
                    s.migrations = std::mem::take(&mut memory.migrations);
                    if s.migrations.is_empty() {
                        s.migrations.extend(default_migration(&s));
                    }
                }
            } else if !s.migrations.is_empty() {
                memory.migrations = std::mem::take(&mut s.migrations);
            }
        }
        Toggle::MigrationMode(mode) => {
            if let Some(m) = s.migrations.first_mut() {
                m.mode = *mode;
            }
        }
        Toggle::MigrationAt(ms) => {
            if let Some(m) = s.migrations.first_mut() {
                m.at_ms = *ms;
            }
        }
        Toggle::Seed(seed) => s.seed = *seed,
    }
    s
}

fn outage_mut<'a>(s: &'a mut Scenario, service: &str) -> Option<&'a mut Window> {
    s.services
        .iter_mut()
        .find(|x| x.name == service)
        .and_then(|x| x.outages.first_mut())
}

/// The service whose tokens a one-source fence should trust: an authority if there is one,
/// otherwise the first service that protects the resource, otherwise the first service.
fn fencing_source_default(s: &Scenario, resource: &str) -> Option<String> {
    s.services
        .iter()
        .find_map(|x| x.subordinate_to.clone())
        .or_else(|| {
            s.services
                .iter()
                .find(|x| x.protects.iter().any(|r| r == resource))
                .map(|x| x.name.clone())
        })
        .or_else(|| s.services.first().map(|x| x.name.clone()))
}

/// A migration of the first resource from the service its clients use to another independent
/// service, halfway through the run.
fn default_migration(s: &Scenario) -> Option<Migration> {
    let resource = s.resources.first()?.name.clone();
    let independent: Vec<&str> = s
        .services
        .iter()
        .filter(|x| x.subordinate_to.is_none())
        .map(|x| x.name.as_str())
        .collect();
    let used = s.clients.iter().find_map(|c| match &c.protocol {
        Protocol::Single { service } if c.resource == resource => Some(service.as_str()),
        _ => None,
    });
    let from = used
        .filter(|u| independent.contains(u))
        .or(independent.first().copied())?;
    let to = independent.iter().find(|x| **x != from)?;
    Some(Migration {
        at_ms: tidy(s.duration_ms / 2),
        resource,
        from: from.to_string(),
        to: to.to_string(),
        mode: MigrationMode::default(),
    })
}

/// The label of a fencing mode, as the select shows it.
pub fn fencing_label(mode: Fencing) -> &'static str {
    match mode {
        Fencing::Off => "Off",
        Fencing::AnySource => "Tokens from any service",
        Fencing::OneSource => "Tokens from one service",
    }
}

/// Parses a fencing select value.
pub fn fencing_from_value(value: &str) -> Option<Fencing> {
    match value {
        "off" => Some(Fencing::Off),
        "any_source" => Some(Fencing::AnySource),
        "one_source" => Some(Fencing::OneSource),
        _ => None,
    }
}

/// The value of a fencing mode in its select.
pub fn fencing_value(mode: Fencing) -> &'static str {
    match mode {
        Fencing::Off => "off",
        Fencing::AnySource => "any_source",
        Fencing::OneSource => "one_source",
    }
}

/// The label of what a fence checks, as its select shows it.
pub fn checks_label(checks: FencingChecks) -> &'static str {
    match checks {
        FencingChecks::Writes => "Writes only",
        FencingChecks::AllAccesses => "Every access (reads too)",
    }
}

pub fn checks_value(checks: FencingChecks) -> &'static str {
    match checks {
        FencingChecks::Writes => "writes",
        FencingChecks::AllAccesses => "all_accesses",
    }
}

pub fn checks_from_value(value: &str) -> Option<FencingChecks> {
    match value {
        "writes" => Some(FencingChecks::Writes),
        "all_accesses" => Some(FencingChecks::AllAccesses),
        _ => None,
    }
}

/// The label of a migration mode, as its select shows it.
pub fn migration_mode_label(mode: MigrationMode) -> &'static str {
    match mode {
        MigrationMode::Naive => "Naively (switch new requests)",
        MigrationMode::Drain => "Drain old holders first",
        MigrationMode::Transfer => "Transfer the lock state",
    }
}

pub fn migration_mode_value(mode: MigrationMode) -> &'static str {
    match mode {
        MigrationMode::Naive => "naive",
        MigrationMode::Drain => "drain",
        MigrationMode::Transfer => "transfer",
    }
}

pub fn migration_mode_from_value(value: &str) -> Option<MigrationMode> {
    match value {
        "naive" => Some(MigrationMode::Naive),
        "drain" => Some(MigrationMode::Drain),
        "transfer" => Some(MigrationMode::Transfer),
        _ => None,
    }
}

/// The flips a compare run can make: each is one toggle away from the scenario as it is, with
/// the words that name it.
pub fn flips(s: &Scenario) -> Vec<(String, Toggle)> {
    // A flip that can only produce an invalid scenario (breaking a token chain, say) would
    // compare against nothing, so it is not offered.
    candidate_flips(s)
        .into_iter()
        .filter(|(_, t)| apply(s, t, &mut Memory::default()).validate().is_ok())
        .collect()
}

fn candidate_flips(s: &Scenario) -> Vec<(String, Toggle)> {
    let mut out = Vec::new();
    if s.regions.len() >= 2 {
        let on = s.partitions.is_empty();
        out.push((
            if on {
                "with a partition".to_string()
            } else {
                "without the partition".to_string()
            },
            Toggle::Partition(on),
        ));
    }
    for r in &s.resources {
        let (mode, checks, words) = match r.fencing {
            Fencing::OneSource if r.fencing_checks == FencingChecks::AllAccesses => {
                (Fencing::Off, r.fencing_checks, "fencing off".to_string())
            }
            Fencing::OneSource => (
                Fencing::OneSource,
                FencingChecks::AllAccesses,
                "fencing every access".to_string(),
            ),
            _ => (
                Fencing::OneSource,
                FencingChecks::AllAccesses,
                "one-source fencing on every access".to_string(),
            ),
        };
        out.push((
            format!("{words} at {}", r.name),
            Toggle::Fencing {
                resource: r.name.clone(),
                mode,
                checks: Some(checks),
            },
        ));
    }
    let options = protocol_options(s);
    for c in &s.clients {
        let current = protocol_value(&c.protocol);
        for o in options.iter().filter(|o| o.value != current) {
            out.push((
                format!("{}: {}", c.name, o.label.to_ascii_lowercase()),
                Toggle::Protocol {
                    class: c.name.clone(),
                    choice: o.value.clone(),
                },
            ));
        }
    }
    for x in &s.services {
        if x.subordinate_to.is_some() {
            out.push((
                format!("{} independent", x.name),
                Toggle::Role {
                    service: x.name.clone(),
                    authority: None,
                },
            ));
        }
        let on = x.outages.is_empty();
        out.push((
            if on {
                format!("an outage of {}", x.name)
            } else {
                format!("no outage of {}", x.name)
            },
            Toggle::Outage {
                service: x.name.clone(),
                on,
            },
        ));
    }
    if !s.clients.is_empty() {
        let on = s.pauses.is_empty();
        out.push((
            if on {
                "with a client pause".to_string()
            } else {
                "without the pause".to_string()
            },
            Toggle::Pause(on),
        ));
    }
    if let Some(m) = s.migrations.first() {
        for mode in [
            MigrationMode::Naive,
            MigrationMode::Drain,
            MigrationMode::Transfer,
        ] {
            if mode != m.mode {
                out.push((
                    format!("{} migration", migration_mode_value(mode)),
                    Toggle::MigrationMode(mode),
                ));
            }
        }
        out.push((
            "without the migration".to_string(),
            Toggle::Migration(false),
        ));
    } else if can_migrate(s) {
        out.push(("with a migration".to_string(), Toggle::Migration(true)));
    }
    out.push((
        format!("seed {}", next_seed(s.seed)),
        Toggle::Seed(next_seed(s.seed)),
    ));
    out
}

/// A new seed that looks unrelated to the old one but is reproducible (SplitMix64), kept
/// below 2^53 so that it survives a round trip through a JavaScript number.
pub fn next_seed(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % 1_000_000
}

/// Milliseconds as seconds in words, without trailing zeros: `0.4 s`, `1.25 s`.
pub fn seconds_words(ms: u64) -> String {
    let whole = ms / 1_000;
    let frac = ms % 1_000;
    if frac == 0 {
        format!("{whole} s")
    } else {
        let digits = format!("{frac:03}");
        format!("{whole}.{} s", digits.trim_end_matches('0'))
    }
}

/// The services a class asks with a protocol choice, before any migration moves them: the
/// listed services in order (a token chain: its authority, then its subordinate).
fn listed_services(s: &Scenario, class: &str, choice: &str) -> Vec<String> {
    let Some(c) = s.clients.iter().find(|c| c.name == class) else {
        return Vec::new();
    };
    if let Some(service) = choice.strip_prefix("single:") {
        return vec![service.to_string()];
    }
    match choice {
        "all_unordered" | "all_ordered" => all_services(s, &c.protocol),
        "token_chain" => chain_pair(s).map_or(Vec::new(), |(a, b)| vec![a, b]),
        _ => Vec::new(),
    }
}

/// What a class that makes a protocol choice will really do under the scenario's migrations:
/// where it locks, stage by stage, in words ("old until 0.4 s, then new"). `None` when no
/// migration changes where it locks while it runs, so the choice's own label is the truth.
///
/// This follows the engine's routing (`State::routes`): a client keeps naming the service it
/// was configured with, and each migration of its resource sends requests for `from` to `to`
/// from then on, for every client alike. A subordinate is never migrated, so a token chain's
/// subordinate keeps its place. Services that route to one are locked once.
pub fn effective_route(s: &Scenario, class: &str, choice: &str) -> Option<String> {
    let c = s.clients.iter().find(|c| c.name == class)?;
    let listed = listed_services(s, class, choice);
    let (stages, moved_before) = route_stages(s, class, choice)?;
    let words = |v: &[String]| v.join(" and ");
    if stages.len() == 1 {
        let first = &stages[0].1;
        if *first == listed {
            return None;
        }
        let moves: Vec<String> = moved_before
            .iter()
            .map(|m| format!("from {} to {} at {}", m.from, m.to, seconds_words(m.at_ms)))
            .collect();
        return Some(format!(
            "{} (the resource moved {}, before {} starts)",
            words(first),
            moves.join(", "),
            c.name
        ));
    }
    let mut out = String::new();
    for (k, (_, services)) in stages.iter().enumerate() {
        if k > 0 {
            out.push_str(", then ");
        }
        out.push_str(&words(services));
        if let Some((next, _)) = stages.get(k + 1) {
            out.push_str(&format!(" until {}", seconds_words(*next)));
        }
    }
    Some(out)
}

/// From a time (in ms) on, the services a class asks, in order.
pub type Stage = (u64, Vec<String>);

/// Where a class that makes a protocol choice locks, stage by stage: from each time (in ms) on,
/// the services it asks, in order; and the migrations that happened before it starts. `None`
/// for a class that does not exist or a choice that locks nowhere.
pub fn route_stages<'a>(
    s: &'a Scenario,
    class: &str,
    choice: &str,
) -> Option<(Vec<Stage>, Vec<&'a Migration>)> {
    let c = s.clients.iter().find(|c| c.name == class)?;
    let listed = listed_services(s, class, choice);
    if listed.is_empty() {
        return None;
    }
    let chain = choice == "token_chain";
    let routed_len = if chain { 1 } else { listed.len() };
    let start = c.start_ms;
    let stop = c.stop_ms.unwrap_or(s.duration_ms).min(s.duration_ms);
    // The route of every service for this resource, starting as itself.
    let mut routes: Vec<(String, String)> = s
        .services
        .iter()
        .map(|x| (x.name.clone(), x.name.clone()))
        .collect();
    let asked = |routes: &[(String, String)]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (k, name) in listed.iter().enumerate() {
            let to = if k < routed_len {
                routes
                    .iter()
                    .find(|(from, _)| from == name)
                    .map_or(name.clone(), |(_, to)| to.clone())
            } else {
                name.clone()
            };
            if !out.contains(&to) {
                out.push(to);
            }
        }
        out
    };
    // The engine applies migrations at their times, in the order the scenario lists those
    // that share a time (there are at most 16, and a time fits in 48 bits).
    let mut order: Vec<u64> = s
        .migrations
        .iter()
        .enumerate()
        .filter(|(_, m)| m.resource == c.resource)
        .map(|(k, m)| (m.at_ms << 8) | k as u64)
        .collect();
    crate::sorted::sort(&mut order);
    let migrations: Vec<&Migration> = order
        .iter()
        .map(|k| &s.migrations[(k & 0xff) as usize])
        .collect();
    let mut stages: Vec<(u64, Vec<String>)> = Vec::new();
    let mut moved_before: Vec<&Migration> = Vec::new();
    for m in &migrations {
        if m.at_ms > start {
            break;
        }
        for r in routes.iter_mut() {
            if r.1 == m.from {
                r.1 = m.to.clone();
            }
        }
        moved_before.push(m);
    }
    stages.push((start, asked(&routes)));
    for m in migrations
        .iter()
        .filter(|m| m.at_ms > start && m.at_ms < stop)
    {
        for r in routes.iter_mut() {
            if r.1 == m.from {
                r.1 = m.to.clone();
            }
        }
        let now = asked(&routes);
        if stages.last().is_some_and(|(_, last)| *last != now) {
            stages.push((m.at_ms, now));
        }
    }
    Some((stages, moved_before))
}

/// The label of a fencing mode at one resource: "Tokens from one service" names the service.
pub fn fencing_label_at(s: &Scenario, resource: &str, mode: Fencing) -> String {
    match mode {
        Fencing::OneSource => {
            let source = s
                .resources
                .iter()
                .find(|r| r.name == resource)
                .and_then(|r| r.fencing_source.clone())
                .or_else(|| fencing_source_default(s, resource));
            match source {
                Some(src) => format!("Tokens from {src} only"),
                None => fencing_label(mode).to_string(),
            }
        }
        _ => fencing_label(mode).to_string(),
    }
}

/// Which part of a control a toggle sets. A later toggle of the same slot replaces an earlier
/// one, so the value of every slot is the control's value as it reads now.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    Seed,
    Partition,
    PartitionStart,
    PartitionLength,
    Protocol(String),
    Fencing(String),
    Role(String),
    Outage(String),
    OutageStart(String),
    OutageLength(String),
    Pause,
    PauseClient,
    PauseStart,
    PauseLength,
    Migration,
    MigrationMode,
    MigrationAt,
}

fn slot(t: &Toggle) -> Slot {
    match t {
        Toggle::Partition(_) => Slot::Partition,
        Toggle::PartitionStart(_) => Slot::PartitionStart,
        Toggle::PartitionLength(_) => Slot::PartitionLength,
        Toggle::Protocol { class, .. } => Slot::Protocol(class.clone()),
        Toggle::Fencing { resource, .. } => Slot::Fencing(resource.clone()),
        Toggle::Role { service, .. } => Slot::Role(service.clone()),
        Toggle::Outage { service, .. } => Slot::Outage(service.clone()),
        Toggle::OutageStart { service, .. } => Slot::OutageStart(service.clone()),
        Toggle::OutageLength { service, .. } => Slot::OutageLength(service.clone()),
        Toggle::Pause(_) => Slot::Pause,
        Toggle::PauseClient(_) => Slot::PauseClient,
        Toggle::PauseStart(_) => Slot::PauseStart,
        Toggle::PauseLength(_) => Slot::PauseLength,
        Toggle::Migration(_) => Slot::Migration,
        Toggle::MigrationMode(_) => Slot::MigrationMode,
        Toggle::MigrationAt(_) => Slot::MigrationAt,
        Toggle::Seed(_) => Slot::Seed,
    }
}

/// The values the controls were set to since the scenario was opened: for each part of each
/// control, its last value only.
///
/// The scenario shown is always [`Settings::apply`] of the scenario as opened, so it is a
/// function of what the controls read now and of nothing else: a protocol whose choice made a
/// service subordinate stops doing so when another protocol is chosen, a fault turned off and
/// on again is the opened scenario's own window, and the order in which controls were touched
/// does not matter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    slots: SortedMap<Slot, Toggle>,
}

impl Settings {
    /// The settings of these toggles, each replacing any earlier toggle of its slot.
    pub fn of<'a>(toggles: impl IntoIterator<Item = &'a Toggle>) -> Settings {
        let mut out = Settings::default();
        for t in toggles {
            out.slots.insert(slot(t), t.clone());
        }
        out
    }

    /// These settings with one more value set.
    pub fn with(&self, t: Toggle) -> Settings {
        let mut out = self.clone();
        out.slots.insert(slot(&t), t);
        out
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every value set, one per slot, in the order [`Settings::apply`] applies them.
    pub fn toggles(&self) -> Vec<Toggle> {
        self.slots.values().cloned().collect()
    }

    /// The scenario these settings describe, from the scenario as opened.
    ///
    /// Explicit roles come first, so that a protocol's choices see the roles the role controls
    /// show. Every protocol is then computed from that same scenario, never from another
    /// class's new protocol, so the classes' order does not matter; a token chain's subordinate
    /// role comes with it. Explicit roles are applied once more at the end: a role control says
    /// what it says, and a chain it breaks makes the scenario invalid rather than being
    /// overruled. The other controls follow in a fixed order (a fault's on or off before its
    /// times).
    pub fn apply(&self, base: &Scenario) -> Scenario {
        let roles: Vec<&Toggle> = self
            .slots
            .iter()
            .filter(|(k, _)| matches!(k, Slot::Role(_)))
            .map(|(_, t)| t)
            .collect();
        let mut context = base.clone();
        for t in &roles {
            context = apply(&context, t, &mut Memory::default());
        }
        let mut s = context.clone();
        for (k, t) in &self.slots {
            let Slot::Protocol(class) = k else { continue };
            let one = apply(&context, t, &mut Memory::default());
            if let (Some(from), Some(to)) = (
                one.clients.iter().find(|c| &c.name == class),
                s.clients.iter_mut().find(|c| &c.name == class),
            ) {
                to.protocol = from.protocol.clone();
            }
            for (was, now) in context.services.iter().zip(&one.services) {
                if was.subordinate_to != now.subordinate_to {
                    if let Some(x) = s.services.iter_mut().find(|x| x.name == now.name) {
                        x.subordinate_to = now.subordinate_to.clone();
                    }
                }
            }
        }
        for t in &roles {
            s = apply(&s, t, &mut Memory::default());
        }
        for (k, t) in &self.slots {
            if !matches!(k, Slot::Role(_) | Slot::Protocol(_)) {
                s = apply(&s, t, &mut Memory::default());
            }
        }
        s
    }

    /// The protocols a class's control offers under these settings: every option of the
    /// scenario as opened whose choice gives a valid scenario, and the class's current one.
    /// Options come from the opened scenario, not the one shown, so a choice never vanishes
    /// because of what another choice did to the services.
    pub fn protocol_choices(&self, base: &Scenario, class: &str) -> Vec<Choice> {
        let shown = self.apply(base);
        let current = shown
            .clients
            .iter()
            .find(|c| c.name == class)
            .map(|c| protocol_value(&c.protocol));
        let mut options = protocol_options(&self.apply_roles(base));
        if let Some(cur) = &current {
            if !options.iter().any(|o| &o.value == cur) {
                options.extend(
                    protocol_options(&shown)
                        .into_iter()
                        .filter(|o| &o.value == cur),
                );
            }
        }
        options
            .into_iter()
            .filter(|o| {
                Some(&o.value) == current.as_ref() || {
                    let t = Toggle::Protocol {
                        class: class.to_string(),
                        choice: o.value.clone(),
                    };
                    self.with(t).apply(base).validate().is_ok()
                }
            })
            .map(|mut o| {
                if let Some(really) = effective_route(&shown, class, &o.value) {
                    o.label = format!("{}: really {really}", o.label);
                }
                o
            })
            .collect()
    }

    /// The roles a service's control offers under these settings: those that give a valid
    /// scenario, and the service's current one.
    pub fn role_choices(&self, base: &Scenario, service: &str) -> Vec<Choice> {
        let shown = self.apply(base);
        let current = shown
            .services
            .iter()
            .find(|x| x.name == service)
            .map(|x| role_value(x.subordinate_to.as_deref()));
        role_options(&shown, service)
            .into_iter()
            .filter(|o| {
                Some(&o.value) == current.as_ref() || {
                    let t = Toggle::Role {
                        service: service.to_string(),
                        authority: o.value.strip_prefix("subordinate:").map(str::to_string),
                    };
                    self.with(t).apply(base).validate().is_ok()
                }
            })
            .collect()
    }

    fn apply_roles(&self, base: &Scenario) -> Scenario {
        let mut s = base.clone();
        for (k, t) in &self.slots {
            if matches!(k, Slot::Role(_)) {
                s = apply(&s, t, &mut Memory::default());
            }
        }
        s
    }
}
