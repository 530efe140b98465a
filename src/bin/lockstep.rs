//! The `lockstep` command: run a scenario, check an inventory, sweep a parameter, print the
//! schema. Everything here is a thin shell over the library; the verdicts come from its monitors.

use std::process::ExitCode;

use lockstep::inventory::{self, Severity};
use lockstep::monitor::{self, verdict};
use lockstep::scenario::Scenario;
use lockstep::sweep;
use lockstep::trace;

const USAGE: &str = "\
usage:
  lockstep run FILE [--seed N] [--json] [--no-trace]
      Simulate a scenario (TOML, or JSON if FILE ends in .json) and print the verdict and trace.
  lockstep at FILE MILLISECONDS [--seed N] [--json]
      Who believes they hold what at one instant of the run.
  lockstep lint FILE [--json]
      Check the inventory: each resource must have exactly one source of order.
  lockstep sweep FILE --partition-ms LIST [--seeds N] [--json]
      Rate of runs with broken exclusion as the first partition's length varies (LIST is
      comma-separated milliseconds).
  lockstep schema
      Print the JSON Schema of the scenario format.

Exit status: 0 when the command completed (whatever the verdict), 1 when `lint` finds a
defect, 2 for invalid input or usage.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("lockstep: {message}");
            ExitCode::from(2)
        }
    }
}

struct Options {
    positional: Vec<String>,
    seed: Option<u64>,
    json: bool,
    no_trace: bool,
    partition_ms: Option<Vec<u64>>,
    seeds: u64,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        positional: Vec::new(),
        seed: None,
        json: false,
        no_trace: false,
        partition_ms: None,
        seeds: 20,
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let mut value = || -> Result<&String, String> {
            i += 1;
            args.get(i).ok_or_else(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--seed" => {
                let v = value()?;
                o.seed = Some(
                    v.parse()
                        .map_err(|_| format!("--seed: \"{v}\" is not a whole number"))?,
                );
            }
            "--seeds" => {
                let v = value()?;
                let n: u64 = v
                    .parse()
                    .map_err(|_| format!("--seeds: \"{v}\" is not a whole number"))?;
                if n == 0 || n > 10_000 {
                    return Err("--seeds must be between 1 and 10000".into());
                }
                o.seeds = n;
            }
            "--partition-ms" => {
                let v = value()?;
                let list: Result<Vec<u64>, _> = v.split(',').map(|x| x.trim().parse()).collect();
                let list = list.map_err(|_| {
                    format!("--partition-ms: \"{v}\" is not a list of whole numbers")
                })?;
                if list.is_empty() || list.len() > 100 {
                    return Err("--partition-ms takes 1 to 100 values".into());
                }
                o.partition_ms = Some(list);
            }
            "--json" => o.json = true,
            "--no-trace" => o.no_trace = true,
            "-h" | "--help" => return Err(USAGE.into()),
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}\n{USAGE}"))
            }
            _ => o.positional.push(a.clone()),
        }
        i += 1;
    }
    Ok(o)
}

fn load(path: &str) -> Result<Scenario, String> {
    const FILE_BYTES_MAX: u64 = 1 << 20;
    let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
    if meta.len() > FILE_BYTES_MAX {
        return Err(format!(
            "{path}: the file is larger than {FILE_BYTES_MAX} bytes"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let parsed = if path.ends_with(".json") {
        Scenario::from_json_str(&text)
    } else {
        Scenario::from_toml_str(&text)
    };
    parsed.map_err(|errors| {
        errors
            .0
            .iter()
            .map(|e| format!("{path}: {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn dispatch(args: &[String]) -> Result<ExitCode, String> {
    let mut out = String::new();
    let code = dispatch_into(args, &mut out)?;
    // A closed pipe (`lockstep run ... | head`) is the reader's choice, not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), out.as_bytes());
    Ok(code)
}

fn dispatch_into(args: &[String], out: &mut String) -> Result<ExitCode, String> {
    use std::fmt::Write as _;
    let Some(command) = args.first() else {
        return Err(USAGE.into());
    };
    if matches!(command.as_str(), "-h" | "--help" | "help") {
        writeln!(out, "{USAGE}").ok();
        return Ok(ExitCode::SUCCESS);
    }
    let o = parse_options(&args[1..])?;
    match command.as_str() {
        "run" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("run takes one FILE\n{USAGE}"));
            };
            let scenario = load(path)?;
            let seed = o.seed.unwrap_or(scenario.seed);
            let run = lockstep::run(&scenario, seed).map_err(|e| e.to_string())?;
            let v = verdict(&run);
            if o.json {
                let doc = serde_json::json!({
                    "scenario": scenario.name,
                    "seed": seed,
                    "verdict": v,
                    "summary": v.summary(),
                    "digest": format!("{:016x}", trace::digest(&run.events)),
                    "names": names(&run.world),
                    "trace": if o.no_trace { serde_json::Value::Null } else { serde_json::to_value(&run.events).expect("events serialize") },
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&doc).expect("json")).ok();
            } else {
                writeln!(out, "{} (seed {seed})", scenario.name).ok();
                write!(out, "{}", v.summary()).ok();
                if !o.no_trace {
                    writeln!(out).ok();
                    let lost = monitor::lost_updates(&run.world, &run.events, 0);
                    write!(
                        out,
                        "{}",
                        monitor::render_trace(&run.world, &run.events, &lost)
                    )
                    .ok();
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        "at" => {
            let [path, ms] = o.positional.as_slice() else {
                return Err(format!("at takes FILE and MILLISECONDS\n{USAGE}"));
            };
            let ms: u64 = ms
                .parse()
                .map_err(|_| format!("\"{ms}\" is not a whole number of milliseconds"))?;
            let scenario = load(path)?;
            let seed = o.seed.unwrap_or(scenario.seed);
            let run = lockstep::run(&scenario, seed).map_err(|e| e.to_string())?;
            let snap = monitor::snapshot(&run.world, &run.events, ms.saturating_mul(1000));
            if o.json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&snap).expect("json")
                )
                .ok();
            } else {
                writeln!(
                    out,
                    "At t={}: exclusion {}.",
                    trace::seconds(snap.at_us),
                    if snap.conflicts.is_empty() {
                        "holds"
                    } else {
                        "broken"
                    }
                )
                .ok();
                for b in &snap.believers {
                    let grants: Vec<String> = b
                        .grants
                        .iter()
                        .map(|g| format!("{}#{} token {}", g.service, g.instant, g.token))
                        .collect();
                    writeln!(
                        out,
                        "  {} believes it holds {}[{}] since t={} via {}",
                        b.client,
                        b.resource,
                        b.rows.join(","),
                        trace::seconds(b.since_us),
                        grants.join(" + ")
                    )
                    .ok();
                }
                for h in &snap.holders {
                    writeln!(
                        out,
                        "  service {} has {} held by {} (token {})",
                        h.service, h.resource, h.client, h.token
                    )
                    .ok();
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        "lint" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("lint takes one FILE\n{USAGE}"));
            };
            let scenario = load(path)?;
            let findings = inventory::check(&scenario);
            let defects = findings
                .iter()
                .filter(|f| f.severity == Severity::Defect)
                .count();
            if o.json {
                let doc = serde_json::json!({ "defects": defects, "findings": findings });
                writeln!(out, "{}", serde_json::to_string_pretty(&doc).expect("json")).ok();
            } else if findings.is_empty() {
                writeln!(
                    out,
                    "{path}: every resource has exactly one source of order."
                )
                .ok();
            } else {
                for f in &findings {
                    writeln!(out, "{path}: {f}").ok();
                }
            }
            Ok(if defects > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        "sweep" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("sweep takes one FILE\n{USAGE}"));
            };
            let Some(lengths) = &o.partition_ms else {
                return Err("sweep needs --partition-ms".into());
            };
            let scenario = load(path)?;
            let points =
                sweep::partition_length(&scenario, lengths, o.seeds).map_err(|e| e.to_string())?;
            if o.json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&points).expect("json")
                )
                .ok();
            } else {
                writeln!(out, "partition_ms  runs  broken  rate   mean_overlaps").ok();
                for p in &points {
                    writeln!(
                        out,
                        "{:>12}  {:>4}  {:>6}  {:>5.2}  {:>13.2}",
                        p.value_ms, p.runs, p.broken_runs, p.broken_rate, p.mean_violations
                    )
                    .ok();
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        "schema" => {
            writeln!(out, "{}", Scenario::json_schema()).ok();
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command \"{other}\"\n{USAGE}")),
    }
}

fn names(world: &lockstep::world::World) -> serde_json::Value {
    serde_json::json!({
        "clients": world.clients.iter().map(|c| &c.name).collect::<Vec<_>>(),
        "services": world.services.iter().map(|s| &s.name).collect::<Vec<_>>(),
        "resources": world.resources.iter().map(|r| &r.name).collect::<Vec<_>>(),
        "regions": &world.regions,
    })
}
