//! The `lockstep` command: run a scenario, check an inventory, sweep a parameter, print the
//! schema, check lesson files. Everything here is a thin shell over the library; the verdicts come from its monitors.

use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use lockstep::inventory::{self, Severity};
use lockstep::monitor;
use lockstep::scenario::Scenario;
use lockstep::sweep;
use lockstep::trace::{self, Event};
use lockstep::world::World;
use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};

// Drawing needs the system's fonts: the command line has them natively only.
#[cfg(not(target_arch = "wasm32"))]
#[path = "lockstep/png.rs"]
mod png;
// The mdBook preprocessor: pure text in and out; no browser bundle reaches it.
#[path = "lockstep/mdbook.rs"]
mod mdbook;
// Writing a folder is the native command line's alone.
#[cfg(not(target_arch = "wasm32"))]
#[path = "lockstep/pack.rs"]
mod pack;
// The handout draws QR codes with the room's native-only crate.
#[cfg(not(target_arch = "wasm32"))]
#[path = "lockstep/handout.rs"]
mod handout;
// Recording runs of real lock services starts processes: the native command line's alone.
#[cfg(not(target_arch = "wasm32"))]
#[path = "lockstep/record.rs"]
mod record;
// The room's server: native only.
#[cfg(not(target_arch = "wasm32"))]
#[path = "lockstep/room.rs"]
mod room;
#[cfg(target_arch = "wasm32")]
mod room {
    pub fn room_command(
        _: &[String],
        _: &mut dyn std::io::Write,
    ) -> Result<std::process::ExitCode, String> {
        Err("room needs the native command line".into())
    }
}
#[cfg(target_arch = "wasm32")]
mod record {
    pub fn record_command(
        _: &[String],
        _: &mut dyn std::io::Write,
    ) -> Result<std::process::ExitCode, String> {
        Err("record needs the native command line".into())
    }
}
#[cfg(target_arch = "wasm32")]
mod pack {
    pub fn lesson_pack(
        _: &[String],
        _: &mut dyn std::io::Write,
    ) -> Result<std::process::ExitCode, String> {
        Err("lesson pack needs the native command line".into())
    }
}
#[cfg(target_arch = "wasm32")]
mod handout {
    pub fn lesson_handout(
        _: &[String],
        _: &mut dyn std::io::Write,
    ) -> Result<std::process::ExitCode, String> {
        Err("lesson handout needs the native command line".into())
    }
}
#[cfg(target_arch = "wasm32")]
mod png {
    pub const SCALE: f32 = 2.0;
    pub const SCALE_MIN: f32 = 1.0;
    pub const SCALE_MAX: f32 = 4.0;
    pub fn png_of_svg(_: &str, _: &str, _: &str, _: f32) -> Result<Vec<u8>, String> {
        Err("PNG export needs the native command line".into())
    }
}

/// The environment variable `export` reads the site's address from when `--link-base` is not
/// given.
const LINK_BASE_VAR: &str = "LOCKSTEP_LINK_BASE";

const USAGE: &str = "\
usage:
  lockstep run FILE [--seed N] [--json] [--no-trace]
      Simulate a scenario (TOML, or JSON if FILE ends in .json) and print the verdict and trace.
  lockstep at FILE MILLISECONDS [--seed N] [--json]
      Who believes they hold what at one instant of the run.
  lockstep lint FILE [--json]
      Check the inventory: each resource must have exactly one source of order.
  lockstep names FILE [--json]
      The scenario's regions, services, client classes, clients and resources, and every
      edit its controls can make, as a lesson's `edits` and `solution` write them.
  lockstep sweep FILE --param NAME --values LIST [--seeds N] [--json | --svg]
      How often exclusion breaks as one parameter varies, with 95% intervals: NAME is
      partition_ms, overlap_ms, pause_ms, lease_ms, services or fencing; LIST is
      comma-separated (fencing: off,any_source,one_source). --partition-ms LIST is short
      for --param partition_ms --values LIST. --svg prints the plot.
  lockstep export FILE --format svg|png|json|md [--seed N] [--link-base URL]
                  [--width W] [--scale S]
      The run as the app exports it: the timeline as SVG or PNG, the trace as JSON or the
      verdict as Markdown; with --link-base (or LOCKSTEP_LINK_BASE), a link to the live run.
      --width draws the picture W pixels wide (480 to 4000; 1200 by default; 830 for a
      README on GitHub), its type at full size; --scale draws a PNG at S times that (1 to 4;
      2 by default).
  lockstep export FILE --format embed --link-base URL [--edit EDIT]... [--seed N]
                  [--playhead MS] [--controls LIST] [--origins LIST] [--caption TEXT]
                  [--theme light|dark|auto] [--id NAME] [--title TEXT]
      The embed snippet the share panel makes, for the site served at URL; --id names the
      embed in every message it sends its host page.
  lockstep mdbook [supports RENDERER]
      mdBook's preprocessor: each ```lockstep block of a book becomes its live run.
  lockstep explore FILE [--depth N] [--states N] [--faults N] [--operations N] [--json]
      Every interleaving of a small scenario, breadth first: either every property holds for
      all the states reached, or the shortest counterexample as a trace with its verdict.
  lockstep record FILE [--on etcd|redis|zookeeper] [--edit EDIT]... [--seed N] [--json] [--no-trace] [--out TRACE.json]
      Play the scenario on real lock services (one etcd, redis-server or ZooKeeper process
      per lock service, started and stopped here; --on chooses, by default Redis for a
      scenario with a majority client and etcd otherwise) and judge the recorded trace as
      `run` judges a simulated one. Real time makes each recording different; the seed drives the clients'
      schedule. Each --edit changes the scenario as the app's controls do (`lockstep names
      FILE` lists them); --out also writes the JSON document, which `judge`, the site's
      import and lessons read back.
  lockstep record FILE... --compare [--on etcd|redis|zookeeper] [--runs N]
      Record N runs of each FILE (default 3) and count each verdict class beside the
      simulation's over the same seeds, as a Markdown table.
  lockstep judge RECORDING.json [--json] [--no-trace]
      Read a recording that `record --json` wrote, check it, and judge its trace afresh
      (the verdict written in the file is not trusted), printed as `record` prints it.
  lockstep schema
      Print the JSON Schema of the scenario format.
  lockstep lesson check FILE...
      Check lesson files: every step's claims, gates and exercises against the engine.
  lockstep lesson verify [--lesson FILE]... [--csv] [CODES_FILE|-]
      Verify completion codes against the shipped lessons and each --lesson FILE: a table
      (or CSV) of name, lesson, exercise, verified or refused and why, with counts.
  lockstep lesson pack FILE... --out DIR [--site DIR] [--allow-origin ORIGIN]...
      A static folder for a workshop: the built site (default dist), the checked lesson
      FILEs beside it, their index and a page of their links; --allow-origin lets the
      site open lessons by link from another address.
  lockstep lesson pack FILE... --single-file OUT.html [--site DIR]
      One HTML file that carries the site and the checked lesson FILEs and runs from
      file://, opened with no server and no network.
  lockstep lesson handout FILE... --out DIR [--link-base URL] [--hints]
      The participants' handout of the lesson FILEs, to print: DIR/handout.html with each
      step's narration and picture and each exercise's goal, controls and room to write,
      each linked at URL (the room's address) with a QR code; --hints adds each exercise's
      first hint. Never a solution.
  lockstep room PACK_DIR [--port P] [--bind ADDR] [--participants-max N]
      Serve a pack to the room (by default on every address, port 8000): prints the address
      to give out, its QR code and the facilitator's link to a live dashboard of who is
      where, who looks stuck and the codes handed in. What the room learns is kept in
      PACK_DIR.room.sqlite beside the folder; started again, the room resumes.

Each command takes only the options shown for it.
Exit status: 0 when the command completed (whatever the verdict), 1 when `lint` finds a
defect, `explore` a counterexample or `lesson verify` a refused code, 2 for invalid input
or usage (and for a scenario the explorer cannot explore).";

/// The largest scenario file the command reads: 1 MiB.
const FILE_BYTES_MAX: u64 = lockstep::scenario::limits::TEXT_BYTES_MAX as u64;

fn main() -> ExitCode {
    let args: Result<Vec<String>, String> = std::env::args_os()
        .skip(1)
        .enumerate()
        .map(|(i, a)| {
            a.into_string()
                .map_err(|_| format!("argument {} is not valid UTF-8\n{USAGE}", i + 1))
        })
        .collect();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let outcome = args.and_then(|args| dispatch(&args, &mut out));
    // A closed pipe (`lockstep run ... | head`) is the reader's choice, not an error: output
    // that cannot be written is dropped, and the exit status is the command's.
    let _ = out.flush();
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("lockstep: {message}");
            ExitCode::from(2)
        }
    }
}

/// The options of each command. An option that the command does not take is a usage error,
/// not something silently ignored: `lint --seed 3` would suggest that the seed matters.
fn options_of(command: &str) -> &'static [&'static str] {
    match command {
        "run" => &["--seed", "--json", "--no-trace"],
        "at" => &["--seed", "--json"],
        "lint" => &["--json"],
        "names" => &["--json"],
        "sweep" => &[
            "--param",
            "--values",
            "--partition-ms",
            "--seeds",
            "--json",
            "--svg",
        ],
        "export" => &[
            "--seed",
            "--format",
            "--link-base",
            "--edit",
            "--playhead",
            "--controls",
            "--origins",
            "--caption",
            "--theme",
            "--title",
            "--id",
            "--width",
            "--scale",
        ],
        _ => &[],
    }
}

struct Options {
    positional: Vec<String>,
    seed: Option<u64>,
    json: bool,
    no_trace: bool,
    partition_ms: Option<Vec<u64>>,
    seeds: u64,
    format: Option<String>,
    link_base: Option<String>,
    param: Option<String>,
    values: Option<String>,
    svg: bool,
    /// `export --format embed`: the embed address's parts.
    edits: Vec<String>,
    playhead_ms: Option<u64>,
    /// `export --format svg|png --width W`: the picture's width in pixels.
    width: Option<u32>,
    /// `export --format png --scale S`: pixels per pixel of the picture.
    scale: Option<f32>,
    embed_fields: Vec<String>,
    title: Option<String>,
}

fn parse_options(command: &str, args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        positional: Vec::new(),
        seed: None,
        json: false,
        no_trace: false,
        partition_ms: None,
        seeds: 20,
        format: None,
        link_base: None,
        param: None,
        values: None,
        svg: false,
        edits: Vec::new(),
        playhead_ms: None,
        width: None,
        scale: None,
        embed_fields: Vec::new(),
        title: None,
    };
    let allowed = options_of(command);
    let every = ["run", "at", "lint", "sweep", "export"]
        .map(options_of)
        .concat();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" {
            return Err(USAGE.into());
        }
        if a.starts_with("--") && !allowed.contains(&a.as_str()) {
            return Err(if every.contains(&a.as_str()) {
                format!("{command} does not take {a}\n{USAGE}")
            } else {
                format!("unknown option {a}\n{USAGE}")
            });
        }
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
            "--format" => {
                let v = value()?;
                if !["svg", "png", "json", "md", "embed"].contains(&v.as_str()) {
                    return Err(format!(
                        "--format: \"{v}\" is not svg, png, json, md or embed"
                    ));
                }
                o.format = Some(v.clone());
            }
            "--link-base" => o.link_base = Some(value()?.clone()),
            "--edit" => o.edits.push(value()?.clone()),
            "--playhead" => {
                let v = value()?;
                o.playhead_ms = Some(v.parse().map_err(|_| {
                    format!("--playhead: \"{v}\" is not a whole number of milliseconds")
                })?);
            }
            "--controls" | "--origins" | "--caption" | "--theme" | "--id" => {
                let field = &a[2..];
                let v = value()?;
                o.embed_fields
                    .push(format!("{field}={}", lockstep::ui::share::escape(v)));
            }
            "--title" => o.title = Some(value()?.clone()),
            "--width" => {
                let v = value()?;
                let (min, max) = (lockstep::ui::svg::WIDTH_MIN, lockstep::ui::svg::WIDTH_MAX);
                o.width = Some(
                    v.parse()
                        .ok()
                        .filter(|w| (min..=max).contains(w))
                        .ok_or_else(|| {
                            format!("--width: \"{v}\" is not a width from {min} to {max} pixels")
                        })?,
                );
            }
            "--scale" => {
                let v = value()?;
                let (min, max) = (png::SCALE_MIN, png::SCALE_MAX);
                o.scale = Some(
                    v.parse()
                        .ok()
                        .filter(|s: &f32| (min..=max).contains(s))
                        .ok_or_else(|| {
                            format!("--scale: \"{v}\" is not a scale from {min} to {max}")
                        })?,
                );
            }
            "--param" => o.param = Some(value()?.clone()),
            "--values" => o.values = Some(value()?.clone()),
            "--svg" => o.svg = true,
            "--json" => o.json = true,
            "--no-trace" => o.no_trace = true,
            _ => o.positional.push(a.clone()),
        }
        i += 1;
    }
    Ok(o)
}

/// Reads and validates a scenario file. The size the file system reports is not trusted:
/// `/dev/zero`, a pipe or a file that grows while it is read report less than they hold. So at
/// most one byte more than the limit is read, which tells a file at the limit from a larger one
/// whatever its kind, and keeps the memory this takes bounded.
fn load(path: &str) -> Result<Scenario, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(FILE_BYTES_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() as u64 > FILE_BYTES_MAX {
        return Err(format!(
            "{path}: the file is larger than {FILE_BYTES_MAX} bytes"
        ));
    }
    let parsed = if path.ends_with(".json") {
        Scenario::from_json_bytes(&bytes)
    } else {
        Scenario::from_toml_bytes(&bytes)
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

/// Runs one command. Every problem with the input is found before anything is written, so a
/// command that fails prints nothing on standard output. Write errors are ignored (see `main`).
fn dispatch(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let Some(command) = args.first() else {
        return Err(USAGE.into());
    };
    if matches!(command.as_str(), "-h" | "--help" | "help") {
        if args.len() > 1 {
            return Err(format!("{command} takes no arguments\n{USAGE}"));
        }
        let _ = writeln!(out, "{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    if command == "explore" {
        return explore_command(&args[1..], out);
    }
    if command == "mdbook" {
        return mdbook_command(&args[1..], out);
    }
    if command == "lesson" && args.get(1).is_some_and(|a| a == "verify") {
        return lesson_verify(&args[2..], out);
    }
    if command == "lesson" && args.get(1).is_some_and(|a| a == "pack") {
        return pack::lesson_pack(&args[2..], out);
    }
    if command == "lesson" && args.get(1).is_some_and(|a| a == "handout") {
        return handout::lesson_handout(&args[2..], out);
    }
    if command == "room" {
        return room::room_command(&args[1..], out);
    }
    if command == "record" {
        return record::record_command(&args[1..], out);
    }
    if command == "judge" {
        return judge_command(&args[1..], out);
    }
    if !matches!(
        command.as_str(),
        "run" | "at" | "lint" | "names" | "sweep" | "export" | "schema" | "lesson"
    ) {
        return Err(format!("unknown command \"{command}\"\n{USAGE}"));
    }
    let mut o = parse_options(command, &args[1..])?;
    // A docs build that always exports for one site names it once, in the environment.
    if command == "export" && o.link_base.is_none() {
        o.link_base = std::env::var(LINK_BASE_VAR)
            .ok()
            .filter(|base| !base.trim().is_empty());
    }
    match command.as_str() {
        "run" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("run takes one FILE\n{USAGE}"));
            };
            let scenario = load(path)?;
            let seed = o.seed.unwrap_or(scenario.seed);
            let run = lockstep::run(&scenario, seed).map_err(|e| e.to_string())?;
            let _ = print_run(out, &scenario, seed, &run, &o);
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
            let _ = print_snapshot(out, &snap, o.json);
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
            let _ = print_findings(out, path, &findings, defects, o.json);
            Ok(if defects > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        "names" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("names takes one FILE\n{USAGE}"));
            };
            let scenario = load(path)?;
            let _ = print_names(out, &scenario, o.json);
            Ok(ExitCode::SUCCESS)
        }
        "sweep" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("sweep takes one FILE\n{USAGE}"));
            };
            let (param, values) = sweep_values(&o)?;
            if o.json && o.svg {
                return Err("sweep takes --json or --svg, not both".into());
            }
            let scenario = load(path)?;
            let points =
                sweep::sweep(&scenario, param, &values, o.seeds).map_err(|e| e.to_string())?;
            if o.svg {
                let title = format!("{}: {} seeds per point", scenario.name, o.seeds);
                let _ = write!(out, "{}", lockstep::plot::svg(&title, param, &points)?);
            } else {
                let _ = print_sweep(out, param, &points, o.json);
            }
            Ok(ExitCode::SUCCESS)
        }
        "export" => {
            let [path] = o.positional.as_slice() else {
                return Err(format!("export takes one FILE\n{USAGE}"));
            };
            let Some(format) = &o.format else {
                return Err("export needs --format svg, png, json, md or embed".into());
            };
            let mut scenario = load(path)?;
            if let Some(seed) = o.seed {
                scenario.seed = seed;
            }
            if format == "embed" {
                let _ = write!(out, "{}", embed_snippet(path, &scenario, &o)?);
                return Ok(ExitCode::SUCCESS);
            }
            if !o.edits.is_empty() || o.playhead_ms.is_some() || !o.embed_fields.is_empty() {
                return Err(
                    "--edit, --playhead, --controls, --origins, --caption, --theme, --id and \
                     --title go with --format embed"
                        .into(),
                );
            }
            if o.width.is_some() && !matches!(format.as_str(), "svg" | "png") {
                return Err("--width goes with --format svg or png".into());
            }
            if o.scale.is_some() && format != "png" {
                return Err("--scale goes with --format png".into());
            }
            let _ = out.write_all(&export(path, &scenario, format, &o)?);
            Ok(ExitCode::SUCCESS)
        }
        "schema" => {
            if !o.positional.is_empty() {
                return Err(format!("schema takes no arguments\n{USAGE}"));
            }
            let _ = writeln!(out, "{}", Scenario::json_schema());
            Ok(ExitCode::SUCCESS)
        }
        "lesson" => lesson_check(&o.positional, out),
        _ => unreachable!("the command was checked above"),
    }
}

/// The parameter and values of a sweep: `--param NAME --values LIST`, or the older
/// `--partition-ms LIST`.
fn sweep_values(o: &Options) -> Result<(sweep::Param, Vec<u64>), String> {
    let names = sweep::Param::ALL.map(|p| p.name()).join(", ");
    match (&o.param, &o.values, &o.partition_ms) {
        (None, None, Some(lengths)) => Ok((sweep::Param::PartitionMs, lengths.clone())),
        (Some(name), Some(list), None) => {
            let param = sweep::Param::from_name(name)
                .ok_or_else(|| format!("--param: \"{name}\" is not one of {names}"))?;
            let values = list
                .split(',')
                .map(|v| param.parse_value(v).map_err(|e| format!("--values: {e}")))
                .collect::<Result<Vec<u64>, String>>()?;
            if values.is_empty() || values.len() > sweep::SWEEP_VALUES_MAX {
                return Err(format!(
                    "--values takes 1 to {} values",
                    sweep::SWEEP_VALUES_MAX
                ));
            }
            Ok((param, values))
        }
        (None, None, None) => Err(format!(
            "sweep needs --param NAME --values LIST (NAME is one of {names})"
        )),
        _ => Err("sweep takes --param with --values, or --partition-ms alone".into()),
    }
}

/// `lockstep export`: the files the app exports, computed the same way (the app's run, at its
/// event cap), so a docs build regenerates exactly what a reader would download.
fn export(path: &str, scenario: &Scenario, format: &str, o: &Options) -> Result<Vec<u8>, String> {
    let link_base = o.link_base.as_deref();
    let width = o.width.unwrap_or(lockstep::ui::svg::WIDTH);
    use lockstep::ui::{export, share, Outcome};
    let outcome = Outcome::compute(scenario).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{path}: {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    // A file named like a built-in scenario, with the same content up to its controls, gets
    // the built-in's short link.
    let file = std::path::Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let link = link_base.map(|base| {
        let link = share::Link {
            version: share::LINK_VERSION,
            source: share::source_of(file, scenario),
            playhead_us: 0,
            zoom: 1,
            own_order: false,
            compare: None,
            digest: Some(lockstep::trace::digest(&outcome.events)),
        };
        format!("{base}{}", link.to_fragment())
    });
    Ok(match format {
        "svg" => export::timeline_svg_at(scenario, &outcome, link.as_deref(), width).into_bytes(),
        "png" => png::png_of_svg(
            &export::timeline_svg_at(scenario, &outcome, link.as_deref(), width),
            export::PNG_KEYWORD,
            &export::RunMeta::of(scenario, &outcome).to_json(),
            o.scale.unwrap_or(png::SCALE),
        )?,
        "json" => export::trace_json(scenario, &outcome).into_bytes(),
        _ => export::verdict_markdown(scenario, &outcome, link.as_deref()).into_bytes(),
    })
}

/// `lockstep mdbook`: mdBook's preprocessor protocol. `supports RENDERER` answers yes for
/// every renderer (HTML gets the live embed, the others its picture); without arguments the
/// book is read from standard input and written, with every `lockstep` block made into its
/// run, to standard output.
fn mdbook_command(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    match args {
        [supports, _renderer] if supports == "supports" => return Ok(ExitCode::SUCCESS),
        [] => {}
        _ => {
            return Err(format!(
                "mdbook takes no arguments, or supports RENDERER\n{USAGE}"
            ))
        }
    }
    let limit = mdbook::BOOK_BYTES_MAX;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("standard input: {e}"))?;
    if bytes.len() > limit {
        return Err(format!("the book is larger than {limit} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|_| "the book is not UTF-8".to_string())?;
    let book = mdbook::preprocess(&text)?;
    let _ = write!(out, "{book}");
    Ok(ExitCode::SUCCESS)
}

/// `lockstep export FILE --format embed`: the snippet the share panel makes, for a docs build
/// to generate. The address is read back through the embed's own reader, so a control, an
/// origin or a theme it would refuse is refused here, with the same words.
fn embed_snippet(path: &str, scenario: &Scenario, o: &Options) -> Result<String, String> {
    use lockstep::ui::{embed::Embed, share};
    let site = o.link_base.as_deref().ok_or(
        "--format embed needs --link-base URL (or LOCKSTEP_LINK_BASE): the address the \
             site is served at",
    )?;
    let edits: Vec<lockstep::lesson::Edit> = o
        .edits
        .iter()
        .map(|e| e.parse().map_err(|why| format!("--edit \"{e}\": {why}")))
        .collect::<Result<_, String>>()?;
    let file = std::path::Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    let (edited, _, link) = share::linked_run(
        file,
        scenario,
        edits,
        o.playhead_ms.unwrap_or(0).saturating_mul(1000),
    )
    .map_err(|e| format!("{path}: {e}"))?;
    let mut query = link.to_query();
    for f in &o.embed_fields {
        query.push('&');
        query.push_str(f);
    }
    let embed = Embed::from_query(&query).map_err(|e| format!("--format embed: {}", e.0))?;
    let title = o
        .title
        .clone()
        .unwrap_or_else(|| format!("Lockstep: {}", edited.name));
    Ok(embed.snippet(site, &title))
}

/// `lockstep lesson check FILE...`: parses each lesson and checks it against the engine, then
/// the lessons together as one course (no two exercises accept the same answer). One line per
/// lesson on standard output, with its warnings counted; each authoring error as
/// `FILE:LINE: reason` on standard error, after the notes and warnings; exit status 2 if there
/// was any error.
fn lesson_check(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let usage = "lesson takes the subcommand check and one or more lesson FILEs\n\
                 usage:\n  lockstep lesson check FILE...\n      \
                 Check lesson files: every claim, gate and exercise against the engine."
        .to_string();
    let Some((check, paths)) = args.split_first() else {
        return Err(usage);
    };
    if check != "check" || paths.is_empty() {
        return Err(usage);
    }
    /// One file's outcome: not read, or its errors, its warnings and, if it parsed, the lesson
    /// and how many claims held.
    enum Read {
        Unread(String),
        Parsed(
            Vec<lockstep::lesson::LessonError>,
            usize,
            Option<(usize, usize)>,
        ),
    }
    let mut read: Vec<Read> = Vec::new();
    let mut lessons: Vec<lockstep::lesson::Lesson> = Vec::new();
    for path in paths {
        let limit = lockstep::lesson::LESSON_BYTES_MAX;
        let mut bytes = Vec::new();
        let opened = std::fs::File::open(path)
            .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes));
        let text = match opened {
            Err(e) => Err(format!("{path}: {e}")),
            Ok(_) if bytes.len() > limit => {
                Err(format!("{path}: the file is larger than {limit} bytes"))
            }
            Ok(_) => String::from_utf8(bytes).map_err(|e| {
                format!(
                    "{path}: byte {} is not valid UTF-8; a lesson must be UTF-8 text",
                    e.utf8_error().valid_up_to()
                )
            }),
        };
        read.push(match text.as_deref().map(lockstep::lesson::parse) {
            Err(e) => Read::Unread(e.clone()),
            Ok(Err(errors)) => Read::Parsed(errors, 0, None),
            Ok(Ok(lesson)) => {
                let checked = lockstep::lesson::check(&lesson);
                // Not problems: what the work condition refuses, for an author who may want a
                // hint for it. Standard output keeps one line per lesson.
                for s in &checked.notes {
                    eprintln!("{path}:{}: note: {}", s.line, s.message);
                }
                // Not problems either, since the lesson works, but worth fixing: an answer an
                // exercise passes by luck. Counted on the lesson's line.
                for s in &checked.warnings {
                    eprintln!("{path}:{}: warning: {}", s.line, s.message);
                }
                lessons.push(lesson);
                Read::Parsed(
                    checked.errors,
                    checked.warnings.len(),
                    Some((lessons.len() - 1, checked.claims)),
                )
            }
        });
    }
    // The lessons together: an exercise that accepts another's answer is a problem of the
    // later one's file.
    for (k, e) in lockstep::lesson::check_course(&lessons) {
        let file = read.iter_mut().find_map(|r| match r {
            Read::Parsed(errors, _, Some((i, _))) if *i == k => Some(errors),
            _ => None,
        });
        if let Some(errors) = file {
            errors.push(e);
            errors.sort_by_key(|e| e.line);
        }
    }
    let mut problems: Vec<String> = Vec::new();
    for (path, r) in paths.iter().zip(read) {
        let errors = match r {
            Read::Unread(e) => {
                let _ = writeln!(out, "{path}: not read");
                problems.push(e);
                continue;
            }
            Read::Parsed(errors, warnings, parsed) => {
                let warned = match warnings {
                    0 => String::new(),
                    n => format!(", {n} warning(s)"),
                };
                if let (true, Some((i, claims))) = (errors.is_empty(), parsed) {
                    let lesson = &lessons[i];
                    let _ = writeln!(
                        out,
                        "{path}: ok: lesson \"{}\", {} step(s), {} exercise(s), {} claim(s) \
                         hold{warned}",
                        lesson.id,
                        lesson.steps.len(),
                        lesson.exercises.len(),
                        claims
                    );
                } else {
                    let _ = writeln!(out, "{path}: {} problem(s){warned}", errors.len());
                }
                errors
            }
        };
        problems.extend(
            errors
                .iter()
                .map(|e| format!("{path}:{}: {}", e.line, e.message)),
        );
    }
    if problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        let _ = out.flush();
        Err(problems.join("\n"))
    }
}

/// The most bytes of codes read from a file or standard input.
const CODES_BYTES_MAX: usize = 1 << 20;

/// Reads a text file, bounded, as UTF-8; `-` is standard input.
fn read_text(path: &str, limit: usize) -> Result<String, String> {
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin()
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes))
    };
    let shown = if path == "-" { "standard input" } else { path };
    read.map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() > limit {
        return Err(format!("{shown}: larger than {limit} bytes"));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{shown}: byte {} is not valid UTF-8",
            e.utf8_error().valid_up_to()
        )
    })
}

/// `lockstep lesson verify [--lesson FILE]... [--csv] [CODES_FILE|-]`: every completion code
/// in the text verified against the shipped lessons and the given ones, as a table (or CSV)
/// with counts per exercise. Exit status 0 when every code is verified, 1 when one is refused.
fn lesson_verify(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let usage =
        "usage:\n  lockstep lesson verify [--lesson FILE]... [--csv] [CODES_FILE|-]\n      \
                 Verify completion codes (from the file, or standard input) against the shipped \
                 lessons and each --lesson FILE.";
    let mut files: Vec<&str> = Vec::new();
    let mut csv = false;
    let mut source: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--lesson" => {
                i += 1;
                files.push(
                    args.get(i)
                        .ok_or_else(|| format!("--lesson needs a FILE\n{usage}"))?,
                );
            }
            "--csv" => csv = true,
            a if a.starts_with("--") => return Err(format!("unknown option {a}\n{usage}")),
            a if source.is_none() => source = Some(a),
            a => return Err(format!("more than one CODES_FILE (\"{a}\")\n{usage}")),
        }
        i += 1;
    }
    let mut lessons = lockstep::lesson::builtin::lessons();
    for path in files {
        let text = read_text(path, lockstep::lesson::LESSON_BYTES_MAX)?;
        let lesson = lockstep::lesson::parse(&text).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("{path}:{}: {}", e.line, e.message))
                .collect::<Vec<_>>()
                .join("\n")
        })?;
        // A facilitator's lesson replaces a shipped one of the same id.
        lessons.retain(|l| l.id != lesson.id);
        lessons.push(lesson);
    }
    let source = source.unwrap_or("-");
    let text = read_text(source, CODES_BYTES_MAX)?;
    let rows = lockstep::lesson::roster::verify(&lessons, &text, lockstep::lesson::code::CODES_MAX);
    if rows.is_empty() {
        let shown = if source == "-" {
            "standard input"
        } else {
            source
        };
        return Err(format!(
            "{shown}: no completion code found (a code starts with LS2.)"
        ));
    }
    if csv {
        let _ = write!(out, "{}", lockstep::lesson::roster::csv(&rows));
    } else {
        let _ = write!(out, "{}", lockstep::lesson::roster::table(&rows));
    }
    Ok(if rows.iter().all(|r| r.verified) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The document `run --json` prints. Its fields are declared in alphabetical order, and every
/// object inside it goes through `serde_json::Value`, so that all keys are printed sorted, as
/// the documentation says.
#[derive(Serialize)]
struct RunDocument<'a> {
    digest: String,
    names: serde_json::Value,
    /// Set by `record`: the real services the trace was recorded from.
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<serde_json::Value>,
    scenario: &'a str,
    seed: u64,
    summary: String,
    trace: Option<TraceDocument<'a>>,
    verdict: serde_json::Value,
}

/// The trace of `run --json`, written one event at a time: a run may have millions of events,
/// and building the whole document in memory first would take gigabytes.
struct TraceDocument<'a>(&'a [Event]);

impl Serialize for TraceDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for event in self.0 {
            let value = serde_json::to_value(event).map_err(S::Error::custom)?;
            seq.serialize_element(&value)?;
        }
        seq.end()
    }
}

/// `lockstep judge RECORDING.json [--json] [--no-trace]`: a recording read back, checked and
/// judged again by the monitors.
fn judge_command(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    const USAGE: &str = "usage: lockstep judge RECORDING.json [--json] [--no-trace]";
    let (mut json, mut no_trace, mut files) = (false, false, Vec::new());
    for a in args {
        match a.as_str() {
            "--json" => json = true,
            "--no-trace" => no_trace = true,
            s if s.starts_with("--") => return Err(format!("judge does not take {s}\n{USAGE}")),
            s => files.push(s),
        }
    }
    let [path] = files.as_slice() else {
        return Err(format!("judge takes one RECORDING.json\n{USAGE}"));
    };
    let text = read_text(path, lockstep::recording::RECORDING_BYTES_MAX)?;
    let recording =
        lockstep::recording::Recording::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    if !json {
        let _ = writeln!(out, "{}", recording.source.label(recording.seed));
    }
    let _ = print_judged(
        out,
        &recording.source.scenario,
        recording.seed,
        &recording,
        json,
        no_trace,
        Some(recording.source_json()),
    );
    Ok(ExitCode::SUCCESS)
}

fn print_run(
    out: &mut dyn Write,
    scenario: &Scenario,
    seed: u64,
    run: &lockstep::Run,
    o: &Options,
) -> io::Result<()> {
    print_judged(out, scenario, seed, run, o.json, o.no_trace, None)
}

/// Judges any recorded run (simulated, or recorded from real services by `record`) and prints
/// it as `run` does.
fn print_judged(
    out: &mut dyn Write,
    scenario: &Scenario,
    seed: u64,
    run: &impl trace::Recorded,
    json: bool,
    no_trace: bool,
    recorded: Option<serde_json::Value>,
) -> io::Result<()> {
    // One analysis gives the verdict and the trace's lost-update marks.
    let analysis = monitor::analyse(run.world(), run.events(), run.end(), 0);
    let v = monitor::verdict_from(
        run.world(),
        run.events(),
        run.end(),
        run.truncated(),
        run.seed(),
        &analysis,
    );
    if json {
        let doc = RunDocument {
            digest: format!("{:016x}", trace::digest(run.events())),
            names: names(run.world()),
            recorded,
            scenario: &scenario.name,
            seed,
            summary: v.summary(),
            trace: (!no_trace).then_some(TraceDocument(run.events())),
            verdict: serde_json::to_value(&v).expect("a verdict serializes"),
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    } else {
        writeln!(out, "{} (seed {seed})", scenario.name)?;
        write!(out, "{}", v.summary())?;
        if !no_trace {
            writeln!(out)?;
            for line in monitor::trace_lines(run.world(), run.events(), &analysis.lost) {
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }
}

fn print_snapshot(out: &mut dyn Write, snap: &monitor::Snapshot, json: bool) -> io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, snap)?;
        return writeln!(out);
    }
    writeln!(
        out,
        "At t={}: exclusion {}.",
        trace::seconds(snap.at_us),
        if snap.conflicts.is_empty() {
            "holds"
        } else {
            "broken"
        }
    )?;
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
        )?;
    }
    for h in &snap.holders {
        writeln!(
            out,
            "  service {} has {} held by {} (token {})",
            h.service, h.resource, h.client, h.token
        )?;
    }
    Ok(())
}

fn print_findings(
    out: &mut dyn Write,
    path: &str,
    findings: &[inventory::Finding],
    defects: usize,
    json: bool,
) -> io::Result<()> {
    if json {
        let doc = serde_json::json!({ "defects": defects, "findings": findings });
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        return writeln!(out);
    }
    if findings.is_empty() {
        return writeln!(
            out,
            "{path}: every resource has exactly one source of order."
        );
    }
    for f in findings {
        writeln!(out, "{path}: {f}")?;
    }
    Ok(())
}

fn print_sweep(
    out: &mut dyn Write,
    param: sweep::Param,
    points: &[sweep::SweepPoint],
    json: bool,
) -> io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, points)?;
        return writeln!(out);
    }
    writeln!(
        out,
        "{:>12}  {:>5}  {:>6}  {:>5}  {:>13}  {:>13}  {:>9}  {:>14}",
        param.name(),
        "runs",
        "broken",
        "rate",
        "interval_95",
        "mean_overlaps",
        "mean_lost",
        "mean_idle_ms"
    )?;
    for p in points {
        writeln!(
            out,
            "{:>12}  {:>5}  {:>6}  {:>5.2}  {:>13}  {:>13.2}  {:>9.2}  {:>14.1}",
            p.label,
            p.runs,
            p.broken_runs,
            p.broken_rate,
            format!("{:.2}–{:.2}", p.broken_low, p.broken_high),
            p.mean_violations,
            p.mean_lost_updates,
            p.mean_idle_ms
        )?;
    }
    Ok(())
}

/// `lockstep names`: what a lesson author may name in a scenario (regions, services, client
/// classes with their clients, resources) and every edit the app's controls can make to it,
/// written as a lesson's `edits` take them.
fn print_names(out: &mut dyn Write, scenario: &Scenario, json: bool) -> io::Result<()> {
    let world = World::compile(scenario);
    let region = |i: &u32| world.regions[*i as usize].clone();
    let services: Vec<(String, Vec<String>)> = world
        .services
        .iter()
        .map(|s| {
            let mut regions: Vec<String> = s.replicas.iter().map(region).collect();
            regions.dedup();
            (s.name.clone(), regions)
        })
        .collect();
    let classes: Vec<(String, Vec<String>)> = world
        .classes
        .iter()
        .enumerate()
        .map(|(k, class)| {
            let clients = world
                .clients
                .iter()
                .filter(|c| c.class as usize == k)
                .map(|c| c.name.clone())
                .collect();
            (class.clone(), clients)
        })
        .collect();
    let resources: Vec<&String> = world.resources.iter().map(|r| &r.name).collect();
    let edits: Vec<(String, String)> = lockstep::ui::toggles::flips(scenario)
        .into_iter()
        .map(|(label, toggle)| (toggle.to_string(), label))
        .collect();
    if json {
        let doc = serde_json::json!({
            "regions": &world.regions,
            "services": services.iter().map(|(n, r)| serde_json::json!({"name": n, "regions": r})).collect::<Vec<_>>(),
            "classes": classes.iter().map(|(n, c)| serde_json::json!({"name": n, "clients": c})).collect::<Vec<_>>(),
            "resources": resources,
            "edits": edits.iter().map(|(e, l)| serde_json::json!({"edit": e, "label": l})).collect::<Vec<_>>(),
        });
        return writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    writeln!(out, "regions: {}", world.regions.join(", "))?;
    writeln!(out, "services:")?;
    for (name, regions) in &services {
        writeln!(out, "  {name} (replicas in {})", regions.join(", "))?;
    }
    writeln!(out, "client classes:")?;
    for (name, clients) in &classes {
        writeln!(out, "  {name}: {}", clients.join(", "))?;
    }
    writeln!(
        out,
        "resources: {}",
        resources
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    writeln!(
        out,
        "edits the controls can make (one change each, from this scenario):"
    )?;
    let width = edits.iter().map(|(e, _)| e.len()).max().unwrap_or(0);
    for (edit, label) in &edits {
        writeln!(out, "  {edit:<width$}  {label}")?;
    }
    Ok(())
}

fn names(world: &World) -> serde_json::Value {
    serde_json::json!({
        "clients": world.clients.iter().map(|c| &c.name).collect::<Vec<_>>(),
        "services": world.services.iter().map(|s| &s.name).collect::<Vec<_>>(),
        "resources": world.resources.iter().map(|r| &r.name).collect::<Vec<_>>(),
        "regions": &world.regions,
    })
}

/// `lockstep explore`: its own options (the budgets), parsed here so the command stays apart
/// from the others'.
fn explore_command(args: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    use lockstep::explore::{explorable, Budgets, Explorer, Outcome};
    let mut budgets = Budgets::default();
    let mut json = false;
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let mut number = |max: u64| -> Result<u64, String> {
            i += 1;
            let v = args.get(i).ok_or_else(|| format!("{a} needs a value"))?;
            let n: u64 = v
                .parse()
                .map_err(|_| format!("{a}: \"{v}\" is not a whole number"))?;
            if n > max {
                return Err(format!("{a} is at most {max}"));
            }
            Ok(n)
        };
        match a {
            "-h" | "--help" => return Err(USAGE.into()),
            "--depth" => budgets.depth = number(100_000)? as u32,
            "--states" => budgets.states = number(100_000_000)?.max(1),
            "--faults" => budgets.faults = number(1_000)? as u32,
            "--operations" => budgets.operations = number(1_000)? as u32,
            "--json" => json = true,
            _ if a.starts_with("--") => {
                return Err(format!("explore does not take {a}\n{USAGE}"));
            }
            _ => positional.push(a.to_string()),
        }
        i += 1;
    }
    let [path] = positional.as_slice() else {
        return Err(format!("explore takes one FILE\n{USAGE}"));
    };
    let scenario = load(path)?;
    let world = explorable(&scenario, &budgets).map_err(|e| format!("{path}: {e}"))?;
    let outcome = Explorer::new(world.clone(), budgets).run();
    let _ = print_exploration(out, &scenario, &world, &budgets, &outcome, json);
    Ok(match outcome {
        Outcome::Holds(_) => ExitCode::SUCCESS,
        Outcome::Violated(_) => ExitCode::from(1),
    })
}

fn print_exploration(
    out: &mut dyn Write,
    scenario: &Scenario,
    world: &World,
    budgets: &lockstep::explore::Budgets,
    outcome: &lockstep::explore::Outcome,
    json: bool,
) -> io::Result<()> {
    use lockstep::explore::Outcome;
    let budget_json = serde_json::json!({
        "depth": budgets.depth,
        "states": budgets.states,
        "faults": budgets.faults,
        "operations": budgets.operations,
    });
    match outcome {
        Outcome::Holds(h) => {
            let text = format!(
                "Every property holds for all {} states up to depth {}{}.",
                h.states,
                h.depth,
                if h.complete {
                    " (the whole state space)"
                } else {
                    " (a budget cut the search short: deeper states were not explored)"
                }
            );
            if json {
                let doc = serde_json::json!({
                    "scenario": &scenario.name,
                    "budgets": budget_json,
                    "holds": true,
                    "states": h.states,
                    "depth": h.depth,
                    "complete": h.complete,
                    "summary": text,
                });
                serde_json::to_writer_pretty(&mut *out, &doc)?;
                writeln!(out)
            } else {
                writeln!(out, "{}", scenario.name)?;
                writeln!(out, "{text}")
            }
        }
        Outcome::Violated(c) => {
            let run = c.replay(world);
            let verdict = monitor::verdict(&run);
            let headline = format!(
                "Counterexample to {}, in {} steps (the fewest possible; {} states searched): {}.",
                c.property.name(),
                c.len(),
                c.states,
                c.property.broken()
            );
            if json {
                let doc = serde_json::json!({
                    "scenario": &scenario.name,
                    "budgets": budget_json,
                    "holds": false,
                    "property": c.property,
                    "steps": c.len(),
                    "states": c.states,
                    "summary": headline,
                    "names": names(&run.world),
                    "digest": format!("{:016x}", trace::digest(&run.events)),
                    "trace": &run.events,
                    "verdict": serde_json::to_value(&verdict).expect("a verdict serializes"),
                });
                serde_json::to_writer_pretty(&mut *out, &doc)?;
                writeln!(out)
            } else {
                writeln!(out, "{}", scenario.name)?;
                writeln!(out, "{headline}")?;
                writeln!(out)?;
                write!(out, "{}", verdict.summary())?;
                writeln!(out)?;
                write!(out, "{}", trace::render(&run.world, &run.events))
            }
        }
    }
}
