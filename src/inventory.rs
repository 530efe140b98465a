//! The inventory check: which services protect which resources, and which clients use which.
//!
//! The rule it enforces: every row of a resource has exactly one source of order. A subordinate
//! shares its authority's order, so a token chain counts once; two independent services
//! protecting the same rows are a defect, found without running anything.

use crate::sorted::{SortedMap, SortedSet};

use serde::Serialize;

use crate::scenario::{default_quorum, Fencing, MigrationMode, Protocol, Scenario};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Breaks the rule: the resource is not protected by one order.
    Defect,
    /// Not a violation by itself, but a sign the inventory is wrong or incomplete.
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub resource: String,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let label = match self.severity {
            Severity::Defect => "defect",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{label}: resource \"{}\": {}",
            self.resource, self.message
        )
    }
}

/// The root of a service's order: its authority if it is subordinate, else itself.
fn order_root<'a>(scenario: &'a Scenario, service: &'a str) -> &'a str {
    scenario
        .services
        .iter()
        .find(|s| s.name == service)
        .and_then(|s| s.subordinate_to.as_deref())
        .unwrap_or(service)
}

fn quoted(names: &SortedSet<&str>) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The services a resource's migrations move it to, each with the service whose order it
/// continues. A drain or transfer hands the lock over in order (the new service grants only
/// once the old one is free, or takes over its holder), so the new service carries the old one's
/// order on: one source of order that changes over time, not a second source. That holds only
/// when no client names the new service directly: such a client locks there before the
/// migration too, while others still lock in the old service.
fn successors<'a>(scenario: &'a Scenario, resource: &str) -> SortedMap<&'a str, &'a str> {
    let named_directly = |service: &str| {
        scenario
            .clients
            .iter()
            .filter(|c| c.resource == resource)
            .any(|c| c.protocol.services().contains(&service))
    };
    let mut migrations: Vec<_> = scenario
        .migrations
        .iter()
        .filter(|m| m.resource == resource)
        .collect();
    crate::sorted::sort_by_key(&mut migrations, |m| m.at_ms);
    let mut out: SortedMap<&str, &str> = SortedMap::new();
    for m in migrations {
        if !named_directly(&m.to) && m.to != m.from {
            // A chain of migrations continues the first service's order.
            let origin = out.get(m.from.as_str()).copied().unwrap_or(m.from.as_str());
            out.insert(m.to.as_str(), origin);
        }
    }
    out
}

/// How findings name a majority of services: by its quorum and its services, in name order,
/// so that two classes that ask the same services for the same quorum name the same one.
fn majority_name(services: &[String], quorum: Option<u32>) -> String {
    let quorum = quorum.unwrap_or_else(|| default_quorum(services.len()));
    let names: SortedSet<&str> = crate::sorted::set(services.iter().map(String::as_str));
    format!(
        "a majority ({quorum} of {}) of {}",
        services.len(),
        names.iter().copied().collect::<Vec<_>>().join(", ")
    )
}

/// Checks a validated scenario's inventory. Findings are sorted, defects first.
pub fn check<'a>(scenario: &'a Scenario) -> Vec<Finding> {
    let mut findings = Vec::new();
    for res in &scenario.resources {
        let successor = successors(scenario, &res.name);
        // The order a service stands for on this resource: a migration's target continues the
        // order of the service it replaces.
        let root = |scenario: &'a Scenario, service: &'a str| -> &'a str {
            order_root(scenario, successor.get(service).copied().unwrap_or(service))
        };
        let mut push = |severity, message: String| {
            findings.push(Finding {
                severity,
                resource: res.name.clone(),
                message,
            })
        };
        // Which rows each service is restricted to by a declared partition.
        let shares: SortedMap<&str, SortedSet<&str>> =
            crate::sorted::map(res.partition.iter().map(|s| {
                (
                    s.service.as_str(),
                    crate::sorted::set(s.rows.iter().map(String::as_str)),
                )
            }));
        let all_rows: SortedSet<&str> = crate::sorted::set(res.rows.iter().map(String::as_str));
        // For every row: the order roots that protect it, and who brings each in. A majority of
        // services is one protector, named after its services and quorum.
        let mut protectors: SortedMap<&str, SortedMap<String, SortedSet<String>>> =
            SortedMap::new();
        let declared: Vec<&str> = scenario
            .services
            .iter()
            .filter(|s| s.protects.contains(&res.name))
            .map(|s| s.name.as_str())
            .collect();
        // A service that is one of a majority that locks this resource declares its part of
        // that majority, not an order of its own.
        let majority_of: SortedMap<&str, String> = crate::sorted::map(
            scenario
                .clients
                .iter()
                .filter(|c| c.resource == res.name)
                .filter_map(|c| match &c.protocol {
                    Protocol::Majority {
                        services, quorum, ..
                    } => Some((services, majority_name(services, *quorum))),
                    _ => None,
                })
                .flat_map(|(services, name)| {
                    services.iter().map(move |s| (s.as_str(), name.clone()))
                }),
        );
        for service in &declared {
            let rows = shares
                .get(service)
                .cloned()
                .unwrap_or_else(|| all_rows.clone());
            let protector = match majority_of.get(service) {
                Some(majority) => majority.clone(),
                None => root(scenario, service).to_string(),
            };
            for row in rows {
                protectors
                    .entry_or_default(row)
                    .entry_or_default(protector.clone())
                    .insert(format!("the inventory of \"{service}\""));
            }
        }
        let mut used: SortedSet<&str> = SortedSet::new();
        let mut lockless: Vec<&str> = Vec::new();
        // Each majority that locks this resource (its name as a protector, its services and
        // quorum), with the classes that use it.
        let mut majorities: SortedMap<String, (Vec<&str>, u32, SortedSet<&str>)> = SortedMap::new();
        for class in scenario.clients.iter().filter(|c| c.resource == res.name) {
            let services: Vec<&str> = class.protocol.services();
            if services.is_empty() {
                lockless.push(&class.name);
            }
            let rows: SortedSet<&str> = if class.rows.is_empty() {
                all_rows.clone()
            } else {
                crate::sorted::set(class.rows.iter().map(String::as_str))
            };
            for service in &services {
                used.insert(service);
                if let Some(own) = shares.get(service) {
                    let outside: SortedSet<&str> =
                        crate::sorted::set(rows.difference(own).copied());
                    if !outside.is_empty() {
                        push(
                            Severity::Defect,
                            format!(
                                "client \"{}\" locks in \"{service}\" but touches rows {} that the partition gives to another service",
                                class.name,
                                quoted(&outside)
                            ),
                        );
                    }
                }
                let protected = scenario
                    .services
                    .iter()
                    .any(|s| s.name == *service && s.protects.contains(&res.name));
                let is_subordinate = scenario
                    .services
                    .iter()
                    .any(|s| s.name == *service && s.subordinate_to.is_some());
                if !protected && !is_subordinate {
                    push(
                        Severity::Warning,
                        format!(
                            "client \"{}\" locks in \"{service}\", which does not list it in `protects`",
                            class.name
                        ),
                    );
                }
                if let Protocol::Majority { .. } = &class.protocol {
                    continue;
                }
                for row in &rows {
                    protectors
                        .entry_or_default(row)
                        .entry_or_default(root(scenario, service).to_string())
                        .insert(format!("client \"{}\"", class.name));
                }
            }
            if let Protocol::Majority {
                services: listed,
                quorum,
                ..
            } = &class.protocol
            {
                let name = majority_name(listed, *quorum);
                let quorum = quorum.unwrap_or_else(|| default_quorum(listed.len()));
                let names: SortedSet<&str> = crate::sorted::set(listed.iter().map(String::as_str));
                for row in &rows {
                    protectors
                        .entry_or_default(row)
                        .entry_or_default(name.clone())
                        .insert(format!("client \"{}\"", class.name));
                }
                majorities
                    .entry_or_insert_with(name, || {
                        (names.into_iter().collect(), quorum, SortedSet::new())
                    })
                    .2
                    .insert(class.name.as_str());
            }
            if let Protocol::Single { service } = &class.protocol {
                if scenario
                    .services
                    .iter()
                    .any(|s| s.name == *service && s.subordinate_to.is_some())
                {
                    push(
                        Severity::Warning,
                        format!(
                            "client \"{}\" asks subordinate \"{service}\" without the authority's token; it will be refused",
                            class.name
                        ),
                    );
                }
            }
        }
        // Group rows that share the same conflicting protectors into one finding.
        let mut conflicts: SortedMap<Vec<(&str, Vec<String>)>, Vec<&str>> = SortedMap::new();
        for (row, roots) in &protectors {
            if roots.len() > 1 {
                let key = roots
                    .iter()
                    .map(|(r, who)| (r.as_str(), who.iter().cloned().collect()))
                    .collect();
                conflicts.entry_or_default(key).push(row);
            }
        }
        for (roots, rows) in conflicts {
            let names: SortedSet<&str> = crate::sorted::set(roots.iter().map(|(r, _)| *r));
            let who = roots
                .iter()
                .map(|(r, w)| format!("\"{r}\" by {}", w.join(", ")))
                .collect::<Vec<_>>()
                .join("; ");
            let rows: SortedSet<&str> = crate::sorted::set(rows);
            push(
                Severity::Defect,
                format!(
                    "rows {} are protected by {} independent lock services ({}): {who}. Each service orders only its own grants and the orders are unrelated, so no one order covers every grant on these rows",
                    quoted(&rows),
                    names.len(),
                    quoted(&names)
                ),
            );
        }
        if !lockless.is_empty() && protectors.is_empty() {
            let names: SortedSet<&str> = crate::sorted::set(lockless.iter().copied());
            push(
                Severity::Defect,
                format!(
                    "it is written only by client(s) {} that take no lock, and no service protects it: it has no source of order at all, so any two of their read-modify-writes can overlap and lose an update",
                    quoted(&names)
                ),
            );
        }
        if !lockless.is_empty() && !protectors.is_empty() {
            let names: SortedSet<&str> = crate::sorted::set(lockless);
            push(
                Severity::Defect,
                format!(
                    "client(s) {} write without any lock while others lock it",
                    quoted(&names)
                ),
            );
        }
        // A migration's target is used by every client of the service it replaces.
        for (to, from) in &successor {
            if used.contains(from) {
                used.insert(to);
            }
        }
        for service in &declared {
            if !used.contains(service) && scenario.clients.iter().any(|c| c.resource == res.name) {
                push(
                    Severity::Warning,
                    format!("\"{service}\" is declared to protect it but no client uses it"),
                );
            }
        }
        for (name, (services, quorum, classes)) in &majorities {
            let n = services.len() as u32;
            let classes = crate::sorted::set(classes.iter().copied());
            if *quorum * 2 <= n {
                push(
                    Severity::Defect,
                    format!(
                        "client(s) {} lock it with {name}: {quorum} of {n} is not more than half, so two clients can each hold a quorum of services that share none, at the same time and with no fault at all",
                        quoted(&classes)
                    ),
                );
            } else {
                push(
                    Severity::Warning,
                    format!(
                        "client(s) {} lock it with {name}, each an independent service. Any two majorities share a service, so this is one lock only while no lease runs out under a holder that is still working (a pause, a slow message, a service clock that runs fast), no service restarts without the grants it held (unless it first stays down for as long as a lease), and every client asks the same services for the same quorum. Even then it has no one order: each service issues its own tokens, so a resource can fence with one service's tokens only, which a holder without that service's grant cannot show",
                        quoted(&classes)
                    ),
                );
            }
        }
        let roots: SortedSet<&str> = crate::sorted::set(
            protectors
                .values()
                .flat_map(|r| r.keys().map(String::as_str)),
        );
        // The services whose tokens clients can show: every order root, and each service of
        // a majority.
        let mut showable = roots.clone();
        for (services, _, _) in majorities.values() {
            for service in services {
                showable.insert(root(scenario, service));
            }
        }
        match (res.fencing, res.fencing_source.as_deref()) {
            (Fencing::AnySource, _) if roots.len() > 1 => push(
                Severity::Warning,
                format!(
                    "fencing accepts tokens from any source, but its tokens come from {} unrelated sequences ({}); comparing them means nothing",
                    roots.len(),
                    quoted(&roots)
                ),
            ),
            (Fencing::OneSource, Some(source)) if !roots.is_empty() && !showable.contains(root(scenario, source)) => push(
                Severity::Warning,
                format!("fencing accepts only tokens of \"{source}\", which no client of it locks in"),
            ),
            _ => {}
        }
        for m in scenario
            .migrations
            .iter()
            .filter(|m| m.resource == res.name)
        {
            if m.mode == MigrationMode::Naive {
                push(
                    Severity::Defect,
                    format!(
                        "the naive migration from \"{}\" to \"{}\" at {} ms gives it two sources of order for a while: from {} ms until every holder of the old lock lets go, \"{}\" grants while those holders still write, and nothing orders the two; drain or transfer instead",
                        m.from, m.to, m.at_ms, m.at_ms, m.to
                    ),
                );
            }
        }
    }
    crate::sorted::sort_by(&mut findings, |a, b| {
        (a.severity, &a.resource).cmp(&(b.severity, &b.resource))
    });
    findings
}
