//! Worst cases, printed as figures (not asserted): the most expensive valid scenarios by shape,
//! each through the page's path (`page`: run at `ui::APP_EVENTS_MAX` events, verdict and
//! layout, `ui::Outcome::compute`) and the command line's path (`cli`: run at the scenario's own
//! event budget and verdict, as `lockstep run --no-trace` does), with the time and the peak heap
//! memory of each against its target. The `page-sim` and `cli-sim` rows are the simulation
//! alone at the same budgets: the engine's share of each path, the rest being the verdict (and
//! on the page, the layout).
//!
//! Run with `cargo bench --bench worst`. Arguments after `--`:
//!
//! - `--quick` (or `LOCKSTEP_WORST_QUICK=1`): stop each measurement after 20 s or 1 GB
//!   instead of 300 s or 4 GB;
//! - `--print NAME`: print the case's scenario as TOML (to run it with `lockstep run`);
//! - any other word: run only the cases whose name contains it.
//!
//! Each measurement runs in a child process (this same program, with `--child`), so a case
//! that runs too long or asks for too much memory is stopped without taking the others with
//! it, and peak memory starts from a clean heap. `LOCKSTEP_WORST_TIMEOUT_S` and
//! `LOCKSTEP_WORST_MEMORY_MB` override the limits.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lockstep::{monitor, ui, Scenario};

/// The heap in use and its high-water mark, counted by the global allocator.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations that would take the heap past this fail, which aborts the child process: the
/// parent reports the case as over its memory limit rather than letting it exhaust the machine.
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);

fn grow(size: usize) -> bool {
    let now = CURRENT.fetch_add(size, Ordering::Relaxed) + size;
    if now > CAP.load(Ordering::Relaxed) {
        CURRENT.fetch_sub(size, Ordering::Relaxed);
        return false;
    }
    PEAK.fetch_max(now, Ordering::Relaxed);
    true
}

// SAFETY: every method forwards to the system allocator with the same arguments; the counters
// only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !grow(new_size - old) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                CURRENT.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            CURRENT.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The targets every case is held to, on each path.
const TIME_TARGET: Duration = Duration::from_secs(1);
const MEMORY_TARGET_MB: f64 = 256.0;

struct Case {
    name: &'static str,
    shape: &'static str,
    toml: String,
}

fn region_list(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("\"r{i}\"")).collect();
    format!("[{}]", names.join(", "))
}

fn quoted(prefix: &str, range: impl Iterator<Item = usize>) -> String {
    let names: Vec<String> = range.map(|i| format!("\"{prefix}{i}\"")).collect();
    format!("[{}]", names.join(", "))
}

/// Every list at its bound, with the protocols, faults and migrations all mixed: 8 regions,
/// 8 services of 9 replicas with 64 outages and 200 ms leases, 8 resources of 32 rows,
/// 16 classes of 16 clients, 64 partitions, 64 pauses of whole classes, 16 migrations and a
/// 500,000-event budget.
fn every_list_at_its_bound() -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "name = \"every list at its bound\"\nduration_ms = 3600000\nseed = 1\n\
         max_events = 500000\nregions = {}\n\n[network]\nlocal_latency_ms = 1\n\
         remote_latency_ms = 20\njitter_ms = 5\n",
        region_list(8)
    );
    for s in 0..8 {
        let outages: Vec<String> = (0..64)
            .map(|k| {
                format!(
                    "{{ start_ms = {}, duration_ms = 500 }}",
                    k * 50_000 + s * 1_000
                )
            })
            .collect();
        let _ = writeln!(
            t,
            "[[services]]\nname = \"s{s}\"\nreplicas = {}\nlease_ms = 200\nprotects = {}\n\
             outages = [{}]\n",
            quoted("r", (0..9).map(|i| (i + s) % 8)),
            quoted("t", 0..8),
            outages.join(", ")
        );
    }
    for r in 0..8 {
        let _ = writeln!(
            t,
            "[[resources]]\nname = \"t{r}\"\nregion = \"r{r}\"\nrows = {}\nfencing = \"any_source\"\n",
            quoted("x", 0..32)
        );
    }
    for c in 0..16 {
        let services = quoted("s", 0..8);
        let reversed = quoted("s", (0..8).rev());
        let protocol = match c % 4 {
            0 => format!("{{ kind = \"all_unordered\", services = {services} }}"),
            1 => format!("{{ kind = \"all_ordered\", services = {services} }}"),
            2 => format!("{{ kind = \"all_ordered\", services = {reversed} }}"),
            _ => format!("{{ kind = \"single\", service = \"s{}\" }}", c % 8),
        };
        let _ = writeln!(
            t,
            "[[clients]]\nname = \"c{c}\"\ncount = 16\nregion = \"r{}\"\nprotocol = {protocol}\n\
             resource = \"t{}\"\nperiod_ms = 0\nwork_ms = 1\nacquire_timeout_ms = 5\n\
             max_retries = 1000\nretry_backoff_ms = 0\nlease_aware = true\n",
            c % 8,
            c % 8
        );
    }
    for p in 0..64 {
        let groups = (0..4)
            .map(|g| quoted("r", [2 * g, 2 * g + 1].into_iter()))
            .collect::<Vec<_>>()
            .join(", ");
        let mode = if p % 2 == 0 { "delay" } else { "drop" };
        let _ = writeln!(
            t,
            "[[partitions]]\nstart_ms = {}\nduration_ms = 20000\ngroups = [{groups}]\nmode = \"{mode}\"\n",
            p * 55_000
        );
    }
    for p in 0..64 {
        let _ = writeln!(
            t,
            "[[pauses]]\nclient = \"c{}\"\nstart_ms = {}\nduration_ms = 500\n",
            p % 16,
            p * 50_000
        );
    }
    for m in 0..16 {
        let mode = ["naive", "drain", "transfer"][m % 3];
        let _ = writeln!(
            t,
            "[[migrations]]\nat_ms = {}\nresource = \"t{}\"\nfrom = \"s{}\"\nto = \"s{}\"\nmode = \"{mode}\"\n",
            (m + 1) * 100_000,
            m % 8,
            m % 8,
            (m + 1) % 8
        );
    }
    t
}

/// The longest latency and jitter the format allows, between two regions, with 256 clients
/// that time out after 1 ms and retry at once: messages pile up in flight for the whole hour.
fn extreme_latency_and_jitter() -> String {
    let mut t = String::from(
        "name = \"extreme latency and jitter\"\nduration_ms = 3600000\nseed = 1\n\
         max_events = 500000\nregions = [\"near\", \"far\"]\n\n[network]\n\
         local_latency_ms = 0\nremote_latency_ms = 3600000\njitter_ms = 3600000\n\n",
    );
    for s in 0..8 {
        let _ = writeln!(
            t,
            "[[services]]\nname = \"s{s}\"\nreplicas = [\"far\", \"near\", \"far\"]\n"
        );
    }
    t.push_str("[[resources]]\nname = \"t0\"\nrows = [\"x\"]\n\n");
    for c in 0..4 {
        let _ = writeln!(
            t,
            "[[clients]]\nname = \"c{c}\"\ncount = 64\nregion = \"near\"\n\
             protocol = {{ kind = \"all_unordered\", services = {} }}\nresource = \"t0\"\n\
             period_ms = 0\nwork_ms = 1\nacquire_timeout_ms = 1\nmax_retries = 1000\n\
             retry_backoff_ms = 0\n",
            quoted("s", 0..8)
        );
    }
    t
}

/// 1 ms leases under a second of work, 256 clients on one service: every client believes it
/// holds the lock at once, for the whole budget.
fn short_leases_long_work() -> String {
    let mut t = String::from(
        "name = \"1 ms leases under long work\"\nduration_ms = 3600000\nseed = 1\n\
         max_events = 500000\nregions = [\"r0\"]\n\n[network]\nlocal_latency_ms = 0\n\
         remote_latency_ms = 0\njitter_ms = 0\n\n[[services]]\nname = \"s0\"\n\
         replicas = [\"r0\"]\nlease_ms = 1\nprotects = [\"t0\"]\n\n\
         [[resources]]\nname = \"t0\"\nrows = [\"x\"]\n\n",
    );
    for c in 0..4 {
        let _ = writeln!(
            t,
            "[[clients]]\nname = \"c{c}\"\ncount = 64\nregion = \"r0\"\n\
             protocol = {{ kind = \"single\", service = \"s0\" }}\nresource = \"t0\"\n\
             period_ms = 0\nwork_ms = 1000\n"
        );
    }
    t
}

/// A standing wait cycle: two classes lock four services in opposite orders and never give
/// up, while two more classes churn on four other services with 1 ms timeouts.
fn wait_cycle_with_churn() -> String {
    let mut t = String::from(
        "name = \"standing wait cycle with churn\"\nduration_ms = 3600000\nseed = 1\n\
         max_events = 500000\nregions = [\"r0\"]\n\n[network]\nlocal_latency_ms = 0\n\
         remote_latency_ms = 0\njitter_ms = 1\n\n",
    );
    for s in 0..8 {
        let _ = writeln!(t, "[[services]]\nname = \"s{s}\"\nreplicas = [\"r0\"]\n");
    }
    t.push_str("[[resources]]\nname = \"t0\"\nrows = [\"x\"]\n\n");
    t.push_str("[[resources]]\nname = \"t1\"\nrows = [\"y\"]\n\n");
    let classes = [
        ("a", quoted("s", 0..4), "all_ordered", "t0", ""),
        ("b", quoted("s", (0..4).rev()), "all_ordered", "t0", ""),
        (
            "c",
            quoted("s", 4..8),
            "all_unordered",
            "t1",
            "acquire_timeout_ms = 1\nmax_retries = 1000\nretry_backoff_ms = 0\n",
        ),
        (
            "d",
            quoted("s", (4..8).rev()),
            "all_unordered",
            "t1",
            "acquire_timeout_ms = 1\nmax_retries = 1000\nretry_backoff_ms = 0\n",
        ),
    ];
    for (name, services, kind, resource, extra) in classes {
        let _ = writeln!(
            t,
            "[[clients]]\nname = \"{name}\"\ncount = 64\nregion = \"r0\"\n\
             protocol = {{ kind = \"{kind}\", services = {services} }}\nresource = \"{resource}\"\n\
             period_ms = 0\nwork_ms = 1\n{extra}"
        );
    }
    t
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "bounds",
            shape: "every list at its bound, largest event budget",
            toml: every_list_at_its_bound(),
        },
        Case {
            name: "latency-jitter",
            shape: "1 h latency and jitter, 256 clients retrying",
            toml: extreme_latency_and_jitter(),
        },
        Case {
            name: "short-leases",
            shape: "1 ms leases, 1 s work, 256 clients",
            toml: short_leases_long_work(),
        },
        Case {
            name: "wait-cycle",
            shape: "standing wait cycle with churn",
            toml: wait_cycle_with_churn(),
        },
        Case {
            name: "W2b",
            shape: "worst/W2b-all-believe.toml",
            toml: include_str!("worst/W2b-all-believe.toml").to_string(),
        },
        Case {
            name: "W3",
            shape: "worst/W3-deadlock-churn.toml",
            toml: include_str!("worst/W3-deadlock-churn.toml").to_string(),
        },
        Case {
            name: "W4",
            shape: "worst/W4-everything-at-bounds.toml",
            toml: include_str!("worst/W4-everything-at-bounds.toml").to_string(),
        },
        Case {
            name: "W5c",
            shape: "worst/W5c-jitter-50ms.toml",
            toml: include_str!("worst/W5c-jitter-50ms.toml").to_string(),
        },
    ]
}

fn scenario(case: &Case) -> Scenario {
    let s = Scenario::from_toml_str(&case.toml)
        .unwrap_or_else(|e| panic!("case {} does not parse: {e}", case.name));
    s.validate()
        .unwrap_or_else(|e| panic!("case {} is not valid: {e}", case.name));
    s
}

/// The processor time this process has used, in seconds, where the system tells it
/// (`/proc/self/stat`, in the kernel's 100 ticks a second): on a shared machine it is a
/// steadier figure than the time on the clock.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may contain spaces:
    // user time and system time are the 12th and 13th of them.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}

/// Runs one measurement in this process and prints
/// `RESULT wall-seconds cpu-seconds peak-bytes events` (cpu-seconds is -1 where unknown).
fn child(name: &str, path: &str, cap_mb: usize) {
    let case = cases()
        .into_iter()
        .find(|c| c.name == name)
        .expect("the parent names a case");
    let s = scenario(&case);
    CAP.store(cap_mb << 20, Ordering::Relaxed);
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let events = match path {
        "page-sim" | "cli-sim" => {
            let mut world = lockstep::world::World::compile(&s);
            if path == "page-sim" {
                world.event_budget = world.event_budget.min(ui::APP_EVENTS_MAX);
            }
            let run = lockstep::sim::run_world(world, s.seed);
            std::hint::black_box(&run);
            run.events.len()
        }
        "page" => {
            let outcome = ui::Outcome::compute(&s).expect("valid");
            std::hint::black_box(&outcome);
            outcome.events.len()
        }
        _ => {
            let run = lockstep::run(&s, s.seed).expect("valid");
            let v = monitor::verdict(&run);
            std::hint::black_box(v.summary());
            run.events.len()
        }
    };
    let elapsed = start.elapsed();
    let cpu = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => -1.0,
    };
    let peak = PEAK.load(Ordering::Relaxed) - base;
    println!("RESULT {} {cpu} {peak} {events}", elapsed.as_secs_f64());
}

struct Measured {
    seconds: f64,
    cpu: Option<f64>,
    peak_mb: f64,
    events: usize,
}

/// Runs one measurement in a child process, within the time and memory limits.
fn measure(name: &str, path: &str, timeout: Duration, cap_mb: usize) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["--child", name, path, &cap_mb.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if start.elapsed() > timeout => {
                // Only this child, which this program started, is stopped.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("stopped after {} s", timeout.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(line) = text.lines().find(|l| l.starts_with("RESULT ")) else {
        return Err(if output.status.success() {
            "no result".into()
        } else {
            format!("stopped over {cap_mb} MB")
        });
    };
    let mut words = line.split_whitespace().skip(1);
    let mut next = || words.next().unwrap_or("0").to_string();
    let seconds: f64 = next().parse().unwrap_or(0.0);
    let cpu: f64 = next().parse().unwrap_or(-1.0);
    let peak: f64 = next().parse().unwrap_or(0.0);
    let events: usize = next().parse().unwrap_or(0);
    Ok(Measured {
        seconds,
        cpu: (cpu >= 0.0).then_some(cpu),
        peak_mb: peak / (1u64 << 20) as f64,
        events,
    })
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let cap: usize = args[3].parse().expect("a number of megabytes");
        child(&args[1], &args[2], cap);
        return;
    }
    if args.first().map(String::as_str) == Some("--print") {
        let name = args.get(1).map(String::as_str).unwrap_or_default();
        match cases().into_iter().find(|c| c.name == name) {
            Some(case) => print!("{}", case.toml),
            None => eprintln!("no case named \"{name}\""),
        }
        return;
    }
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("LOCKSTEP_WORST_QUICK").is_ok_and(|v| v != "0" && !v.is_empty());
    // Cargo passes `--bench` to every benchmark; it and the flags are not case filters.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let timeout = Duration::from_secs(env_number("LOCKSTEP_WORST_TIMEOUT_S").unwrap_or(if quick {
        20
    } else {
        300
    }));
    let cap_mb =
        env_number("LOCKSTEP_WORST_MEMORY_MB").unwrap_or(if quick { 1024 } else { 4096 }) as usize;

    println!(
        "Worst cases: page = run at {} events + verdict + layout (ui::Outcome::compute); \
         cli = run at the scenario's budget + verdict (lockstep run --no-trace).",
        ui::APP_EVENTS_MAX
    );
    println!(
        "Targets: under {} s and under {MEMORY_TARGET_MB:.0} MB of peak heap each; time is \
         processor time where the system tells it (steadier on a shared machine), the clock's \
         time beside it. Limits: {} s on the clock, {cap_mb} MB.\n",
        TIME_TARGET.as_secs(),
        timeout.as_secs()
    );
    println!(
        "{:<15} {:<8} {:>9} {:>10} {:>10} {:>10}  {:<6} shape",
        "case", "path", "events", "time", "clock", "peak", "target"
    );
    for case in cases() {
        if !filters.is_empty() && !filters.iter().any(|f| case.name.contains(f.as_str())) {
            continue;
        }
        // Validate in the parent too, so a broken case is reported before any child runs.
        let s = scenario(&case);
        let budget = s.event_budget();
        for path in ["page-sim", "page", "cli-sim", "cli"] {
            let row = match measure(case.name, path, timeout, cap_mb) {
                Ok(m) => {
                    let time = m.cpu.unwrap_or(m.seconds);
                    let ok = time < TIME_TARGET.as_secs_f64() && m.peak_mb < MEMORY_TARGET_MB;
                    format!(
                        "{:>9} {:>8.2} s {:>8.2} s {:>7.1} MB  {:<6}",
                        m.events,
                        time,
                        m.seconds,
                        m.peak_mb,
                        if ok { "met" } else { "MISSED" }
                    )
                }
                Err(why) => format!("{:>9} {:>33}  {:<6}", "-", why, "MISSED"),
            };
            let shape = match path {
                "page-sim" => case.shape.to_string(),
                "page" => "  simulation, verdict and layout".to_string(),
                "cli-sim" => format!("  the scenario's budget: {budget} events"),
                _ => "  simulation and verdict".to_string(),
            };
            println!("{:<15} {:<8} {row} {shape}", case.name, path);
        }
    }
}
