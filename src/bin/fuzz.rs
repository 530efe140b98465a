//! `lockstep-fuzz`: feeds generated and mutated scenarios through every entry point of the
//! library and of the app's reducer, and reports panics, unlocated errors and slow cases.
//!
//! It is not part of the test run: a million cases take minutes, not seconds. See
//! `docs/fuzzing.md` for what it covers and the figures of the last recorded run.
//!
//! Every case is derived from the run's seed and the case's index alone, so any case can be
//! replayed on its own (`--case I`) whatever the number of threads that first ran it.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    native::main()
}

/// The fuzzer needs threads, a clock and files, none of which a browser tab offers; the wasm32
/// build of every binary (`cargo build --target wasm32-unknown-unknown --bins`) gets this stub.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use lockstep::builtin;
    use lockstep::inventory;
    use lockstep::monitor;
    use lockstep::scenario::{
        limits, Fencing, FencingChecks, MigrationMode, Scenario, ScenarioError,
    };
    use lockstep::sim;
    use lockstep::sweep;
    use lockstep::testgen::Gen;
    use lockstep::trace;
    use lockstep::ui::toggles::{self, Toggle};
    use lockstep::ui::{self, Action, App, Saved};
    use lockstep::world::World;

    const USAGE: &str = "\
usage:
  lockstep-fuzz [--cases N] [--seed S] [--max-ms-per-case M] [--seconds T] [--threads K]
                [--cap-events E] [--real-every R] [--slowest K] [--out DIR]
  lockstep-fuzz --case I [--seed S] [--out DIR]
  lockstep-fuzz --replay FILE [--seed S]

  --cases N            cases to run (default 1000000)
  --seed S             the seed every case derives from (default 1)
  --max-ms-per-case M  a case slower than M ms of wall-clock time is a finding (default 1000)
  --seconds T          stop after T seconds and report what ran
  --threads K          worker threads, 1 or 2 (default: 2 if the machine has two cores)
  --cap-events E       event budget of most runs (default 500); see --real-every
  --real-every R       one case in R runs at the scenario's own budgets (default 1000)
  --slowest K          how many of the slowest cases to list and save (default 10)
  --out DIR            where findings are saved (default target)
  --case I             run case I alone, print what each stage did and save its input
  --replay FILE        run a file (TOML, or JSON if it ends in .json) through every stage

Exit status: 0 when no case panicked and every error was located, 1 otherwise, 2 for usage.";

    /// How many inputs of each kind of finding are kept and saved.
    const KEPT_MAX: usize = 20;
    /// The largest input, as for the command line.
    const INPUT_BYTES_MAX: usize = 1 << 20;
    /// How much of a finding's input is printed.
    const PRINTED_CHARS_MAX: usize = 600;

    struct Options {
        cases: u64,
        seed: u64,
        max_ms_per_case: u64,
        seconds: Option<u64>,
        threads: usize,
        cap_events: u64,
        real_every: u64,
        slowest: usize,
        out: PathBuf,
        case: Option<u64>,
        replay: Option<PathBuf>,
    }

    fn parse_options(args: &[String]) -> Result<Options, String> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut o = Options {
            cases: 1_000_000,
            seed: 1,
            max_ms_per_case: 1_000,
            seconds: None,
            threads: cores.min(2),
            cap_events: 500,
            real_every: 1_000,
            slowest: 10,
            out: PathBuf::from("target"),
            case: None,
            replay: None,
        };
        let mut i = 0;
        while i < args.len() {
            let flag = args[i].as_str();
            let value = args
                .get(i + 1)
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
            let number = |v: &String| -> Result<u64, String> {
                v.replace('_', "")
                    .parse()
                    .map_err(|_| format!("{flag}: \"{v}\" is not a whole number"))
            };
            match flag {
                "--cases" => o.cases = number(value?)?,
                "--seed" => o.seed = number(value?)?,
                "--max-ms-per-case" => o.max_ms_per_case = number(value?)?,
                "--seconds" => o.seconds = Some(number(value?)?),
                "--threads" => o.threads = number(value?)?.clamp(1, 2) as usize,
                "--cap-events" => o.cap_events = number(value?)?.max(1),
                "--real-every" => o.real_every = number(value?)?.max(1),
                "--slowest" => o.slowest = number(value?)?.min(100) as usize,
                "--out" => o.out = PathBuf::from(value?),
                "--case" => o.case = Some(number(value?)?),
                "--replay" => o.replay = Some(PathBuf::from(value?)),
                "-h" | "--help" => return Err(USAGE.to_string()),
                _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
            }
            i += 2;
        }
        Ok(o)
    }

    pub fn main() -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let options = match parse_options(&args) {
            Ok(o) => o,
            Err(message) => {
                eprintln!("lockstep-fuzz: {message}");
                return ExitCode::from(2);
            }
        };
        install_panic_hook();
        let corpus = Corpus::new();
        if let Some(path) = &options.replay {
            return replay_file(&options, &corpus, path);
        }
        if let Some(index) = options.case {
            return replay_case(&options, &corpus, index);
        }
        campaign(&options, &corpus)
    }

    // ----- Panics -------------------------------------------------------------------------------

    thread_local! {
        /// The stage the current case is in, so that a panic says where it happened.
        static STAGE: Cell<&'static str> = const { Cell::new("") };
        /// The message and location of the last panic on this thread.
        static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
        /// The actions the app was given in the current case. They are kept outside the
        /// case's result so that a panic in the middle of them still reports them.
        static ACTIONS: RefCell<Vec<Action>> = const { RefCell::new(Vec::new()) };
    }

    fn stage(name: &'static str) {
        STAGE.with(|s| s.set(name));
    }

    fn record(action: &Action) {
        ACTIONS.with(|a| a.borrow_mut().push(action.clone()));
    }

    fn take_actions() -> Vec<Action> {
        ACTIONS.with(|a| std::mem::take(&mut *a.borrow_mut()))
    }

    /// Replaces the default hook, which would print every caught panic's message to stderr, with
    /// one that keeps the message for the report.
    fn install_panic_hook() {
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a panic without a message)".to_string());
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let stage = STAGE.with(Cell::get);
            LAST_PANIC.with(|p| {
                *p.borrow_mut() = Some(format!("[{stage}] {message} at {location}"));
            });
        }));
    }

    // ----- The inputs ---------------------------------------------------------------------------

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Format {
        Toml,
        Json,
    }

    impl Format {
        fn extension(self) -> &'static str {
            match self {
                Format::Toml => "toml",
                Format::Json => "json",
            }
        }
    }

    /// The shipped scenarios (the files of `lessons/scenarios/`, embedded by `builtin`) and the
    /// app's blank scenario, in TOML and in pretty JSON, as the seeds of mutation.
    struct Corpus {
        files: Vec<(&'static str, String, String)>,
    }

    impl Corpus {
        fn new() -> Corpus {
            let files = builtin::ALL
                .iter()
                .map(|b| (b.file, b.toml()))
                .chain(std::iter::once(("blank", ui::BLANK_TOML)))
                .map(|(file, toml)| {
                    let scenario =
                        Scenario::from_toml_str(toml).expect("shipped scenarios are valid");
                    let json = serde_json::to_string_pretty(&scenario)
                        .expect("a scenario serializes to JSON");
                    (file, toml.to_string(), json)
                })
                .collect();
            Corpus { files }
        }
    }

    /// One generated input and how it was made.
    struct Case {
        index: u64,
        text: String,
        format: Format,
        /// How the input was made, in a few words, for the report.
        origin: String,
        /// True when the runs use the scenario's own event budgets rather than the cap.
        real_budget: bool,
        /// True when a mutation produced bytes that are not UTF-8; they are read the way a
        /// browser's decoder reads them, with U+FFFD in place of each bad sequence.
        lossy: bool,
    }

    fn case_rng(seed: u64, index: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(index);
        rng
    }

    fn make_case(rng: &mut ChaCha8Rng, index: u64, corpus: &Corpus, o: &Options) -> Case {
        let real_budget = index % o.real_every == o.real_every - 1;
        let cap = (!real_budget).then_some(o.cap_events);
        let roll = rng.random_range(0..100u32);
        let (mut bytes, mut format, origin) = match roll {
            0..30 => {
                let (text, format) = generated(rng, cap);
                (text.into_bytes(), format, "generated".to_string())
            }
            30..50 => {
                let (text, format) = generated(rng, cap);
                let mut bytes = text.into_bytes();
                let ops = mutate(rng, &mut bytes, format, corpus);
                (bytes, format, format!("generated, then {ops}"))
            }
            50..88 => {
                let (file, toml, json) = &corpus.files[rng.random_range(0..corpus.files.len())];
                let format = if rng.random_bool(0.2) {
                    Format::Json
                } else {
                    Format::Toml
                };
                let mut bytes = match format {
                    Format::Toml => toml.clone().into_bytes(),
                    Format::Json => json.clone().into_bytes(),
                };
                let ops = mutate(rng, &mut bytes, format, corpus);
                (bytes, format, format!("{file}, then {ops}"))
            }
            _ => {
                let (bytes, format, what) = hostile(rng, corpus);
                (bytes, format, what)
            }
        };
        // The command line refuses files over 1 MiB, and a mutation that repeats a deeply
        // nested block can pass that; what is beyond it only makes the parser's cases slow.
        bytes.truncate(INPUT_BYTES_MAX);
        if let Some(cap) = cap {
            cap_text(&mut bytes, format, cap);
        }
        let (text, lossy) = match String::from_utf8(bytes) {
            Ok(t) => (t, false),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
        };
        // A text that is plainly JSON is read as JSON whatever it was made from, the way the
        // command line would if the file were named .json.
        if format == Format::Toml && text.trim_start().starts_with('{') && rng.random_bool(0.5) {
            format = Format::Json;
        }
        Case {
            index,
            text,
            format,
            origin,
            real_budget,
            lossy,
        }
    }

    /// Gives the scenario an event budget of `cap`, unless it already names one, so that the
    /// app (which runs the text it is given) stays as quick as the capped runs.
    fn cap_text(bytes: &mut Vec<u8>, format: Format, cap: u64) {
        if bytes.windows(10).any(|w| w == b"max_events") {
            return;
        }
        match format {
            Format::Toml => {
                let line = format!("max_events = {cap}\n");
                bytes.splice(0..0, line.into_bytes());
            }
            Format::Json => {
                if let Some(i) = bytes.iter().position(|b| !b.is_ascii_whitespace()) {
                    if bytes[i] == b'{' {
                        let field = format!("\"max_events\": {cap}, ");
                        bytes.splice(i + 1..i + 1, field.into_bytes());
                    }
                }
            }
        }
    }

    // ----- Structure-aware generation -----------------------------------------------------------

    // The generator is the library's `testgen`, shared with the property tests so that both
    // explore the same kinds of worlds; it draws from the case's stream exactly as it did here.

    /// A generated scenario as text: TOML mostly, JSON sometimes, and always JSON when TOML
    /// cannot hold a number (TOML integers stop at `i64::MAX`).
    fn generated(rng: &mut ChaCha8Rng, cap: Option<u64>) -> (String, Format) {
        let bad = match rng.random_range(0..10u32) {
            0..5 => 0.0,
            5..8 => 0.02,
            _ => 0.15,
        };
        let heavy = rng.random_bool(0.1);
        let scenario = Gen {
            rng,
            bad,
            heavy,
            small: false,
        }
        .scenario(cap);
        let json = rng.random_bool(0.25);
        if !json {
            if let Ok(text) = toml::to_string(&scenario) {
                return (text, Format::Toml);
            }
        }
        let text = if rng.random_bool(0.5) {
            serde_json::to_string_pretty(&scenario)
        } else {
            serde_json::to_string(&scenario)
        };
        (text.expect("a scenario serializes to JSON"), Format::Json)
    }

    // ----- Mutation -----------------------------------------------------------------------------

    const BOUNDARY_NUMBERS: &[&str] = &[
        "0",
        "-1",
        "1",
        "2",
        "-0",
        "64",
        "65",
        "256",
        "257",
        "1000",
        "1001",
        "3600000",
        "3600001",
        "5000000",
        "5000001",
        "1099511627776",
        "1099511627777",
        "4294967295",
        "4294967296",
        "9007199254740993",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999999999",
        "1e308",
        "1e309",
        "-1e-320",
        "0.5",
        "1.0",
        "nan",
        "inf",
        "-inf",
        "0x7f",
        "0o17",
        "0b101",
        "1_000",
        "00",
        "+1",
        "true",
        "\"12\"",
        "[]",
        "{}",
        "1979-05-27T07:32:00Z",
    ];

    const WEIRD_TEXT: &[&str] = &[
        "\u{feff}", "é", "漢字", "🙂", "\u{0}", "\u{202e}", "\r", "\r\n", "\t", "\u{2028}", "\\",
        "\\u0000", "\\uD800", "\"\"\"", "'''", "#", "=", ".", ",", "[", "]", "[[", "]]", "{", "}",
        ":", "\"",
    ];

    const INVALID_UTF8: &[&[u8]] = &[
        b"\xff",
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xc0\x80",
        b"\xf4\x90\x80\x80",
        b"\x80",
    ];

    const KEYS: &[&str] = &[
        "name",
        "duration_ms",
        "seed",
        "max_events",
        "regions",
        "services",
        "resources",
        "clients",
        "partitions",
        "pauses",
        "migrations",
        "replicas",
        "lease_ms",
        "first_token",
        "subordinate_to",
        "protects",
        "outages",
        "rows",
        "initial",
        "fencing",
        "fencing_source",
        "count",
        "protocol",
        "kind",
        "period_ms",
        "work_ms",
        "groups",
        "mode",
        "bogus",
        "Name",
        "period-ms",
    ];

    fn depth(rng: &mut ChaCha8Rng) -> usize {
        *[
            2usize, 10, 64, 100, 127, 128, 129, 200, 500, 1_000, 5_000, 20_000,
        ]
        .get(rng.random_range(0..12))
        .unwrap_or(&10)
    }

    /// Text nested `d` levels deep, in a form the format's parser has to recurse into.
    fn deep(rng: &mut ChaCha8Rng, format: Format) -> String {
        let d = depth(rng);
        match (format, rng.random_range(0..4u32)) {
            (Format::Toml, 0) => format!("deep = {}1{}\n", "[".repeat(d), "]".repeat(d)),
            (Format::Toml, 1) => format!("deep = {}1{}\n", "{ a = ".repeat(d), " }".repeat(d)),
            (Format::Toml, 2) => format!("{}a = 1\n", "a.".repeat(d)),
            (Format::Toml, _) => format!("[{}a]\n", "a.".repeat(d)),
            (Format::Json, 0) => format!("\"deep\": {}1{},", "[".repeat(d), "]".repeat(d)),
            (Format::Json, 1) => format!("\"deep\": {}1{},", "{\"a\": ".repeat(d), "}".repeat(d)),
            (Format::Json, 2) => format!("{}1{}", "[".repeat(d), "]".repeat(d)),
            (Format::Json, _) => format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d)),
        }
    }

    /// Byte offsets of line starts.
    fn line_starts(bytes: &[u8]) -> Vec<usize> {
        std::iter::once(0)
            .chain(
                bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .filter(|i| *i <= bytes.len())
            .collect()
    }

    /// The byte range of line `i`, newline included.
    fn line_range(starts: &[usize], len: usize, i: usize) -> std::ops::Range<usize> {
        starts[i]..starts.get(i + 1).copied().unwrap_or(len)
    }

    /// Ranges of runs of digits (with a leading minus sign) in the text.
    fn number_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() {
                let start = if i > 0 && bytes[i - 1] == b'-' {
                    i - 1
                } else {
                    i
                };
                let mut end = i;
                while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'_') {
                    end += 1;
                }
                out.push(start..end);
                i = end;
            } else {
                i += 1;
            }
        }
        out
    }

    /// Applies one to four mutations and names them.
    fn mutate(
        rng: &mut ChaCha8Rng,
        bytes: &mut Vec<u8>,
        format: Format,
        corpus: &Corpus,
    ) -> String {
        let n = rng.random_range(1..=4);
        let mut names = Vec::new();
        for _ in 0..n {
            names.push(mutate_once(rng, bytes, format, corpus));
        }
        names.join(", ")
    }

    fn mutate_once(
        rng: &mut ChaCha8Rng,
        bytes: &mut Vec<u8>,
        format: Format,
        corpus: &Corpus,
    ) -> &'static str {
        let len = bytes.len();
        let at = |rng: &mut ChaCha8Rng| rng.random_range(0..=len);
        let starts = line_starts(bytes);
        let lines = starts.len();
        match rng.random_range(0..20u32) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                bytes[i] ^= 1 << rng.random_range(0..8);
                "flip a bit"
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                bytes[i] = *b"\"[]{}=.,#\\\n0 -'"
                    .get(rng.random_range(0..15))
                    .unwrap_or(&b'x');
                "replace a byte"
            }
            2 if len > 0 => {
                let i = rng.random_range(0..len);
                bytes.remove(i);
                "delete a byte"
            }
            3 if lines > 1 => {
                let r = line_range(&starts, len, rng.random_range(0..lines));
                bytes.drain(r);
                "delete a line"
            }
            4 if lines > 1 => {
                let r = line_range(&starts, len, rng.random_range(0..lines));
                let line = bytes[r.clone()].to_vec();
                let copies = if rng.random_bool(0.9) {
                    1
                } else {
                    rng.random_range(2..200)
                };
                for _ in 0..copies {
                    bytes.splice(r.start..r.start, line.iter().copied());
                }
                "duplicate a line"
            }
            5 if lines > 2 => {
                let a = rng.random_range(0..lines);
                let b = rng.random_range(0..lines);
                let (a, b) = (a.min(b), a.max(b));
                if a != b {
                    let ra = line_range(&starts, len, a);
                    let rb = line_range(&starts, len, b);
                    let la = bytes[ra.clone()].to_vec();
                    let lb = bytes[rb.clone()].to_vec();
                    bytes.splice(rb, la);
                    bytes.splice(ra, lb);
                }
                "swap two lines"
            }
            6..9 => {
                let numbers = number_ranges(bytes);
                if numbers.is_empty() {
                    return "no number to change";
                }
                let r = numbers[rng.random_range(0..numbers.len())].clone();
                let v = BOUNDARY_NUMBERS[rng.random_range(0..BOUNDARY_NUMBERS.len())];
                bytes.splice(r, v.bytes());
                "change a number"
            }
            9 => {
                let quotes: Vec<usize> = (0..len).filter(|i| bytes[*i] == b'"').collect();
                if quotes.len() < 2 {
                    return "no string to change";
                }
                let q = rng.random_range(0..quotes.len() - 1);
                let r = quotes[q] + 1..quotes[q + 1];
                let v = match rng.random_range(0..6u32) {
                    0 => String::new(),
                    1 => "n".repeat(limits::NAME_LEN_MAX + 1),
                    2 => "z".repeat(rng.random_range(100..20_000)),
                    3 => "dé漢🙂".to_string(),
                    4 => "\\u0000\\t\\\"".to_string(),
                    _ => KEYS[rng.random_range(0..KEYS.len())].to_string(),
                };
                bytes.splice(r, v.into_bytes());
                "change a string"
            }
            10 => {
                let text = deep(rng, format);
                let pos = match format {
                    // A TOML fragment goes at the start of a line; a JSON one after a brace.
                    Format::Toml => starts[rng.random_range(0..lines)],
                    Format::Json => bytes.iter().position(|b| *b == b'{').map_or(0, |i| i + 1),
                };
                bytes.splice(pos..pos, text.into_bytes());
                "nest deeply"
            }
            11 => {
                let cut = at(rng);
                bytes.truncate(cut);
                "truncate"
            }
            12 => {
                let pos = at(rng);
                let s = INVALID_UTF8[rng.random_range(0..INVALID_UTF8.len())];
                bytes.splice(pos..pos, s.iter().copied());
                "insert invalid UTF-8"
            }
            13 => {
                let pos = at(rng);
                let s = WEIRD_TEXT[rng.random_range(0..WEIRD_TEXT.len())];
                bytes.splice(pos..pos, s.bytes());
                "insert odd text"
            }
            14 => {
                // A chunk of another shipped scenario, spliced in at a line start.
                let (_, toml, json) = &corpus.files[rng.random_range(0..corpus.files.len())];
                let other = match format {
                    Format::Toml => toml.as_bytes(),
                    Format::Json => json.as_bytes(),
                };
                let a = rng.random_range(0..other.len());
                let b = (a + rng.random_range(1..400)).min(other.len());
                let pos = starts[rng.random_range(0..lines)];
                bytes.splice(pos..pos, other[a..b].iter().copied());
                "splice another scenario"
            }
            15 => {
                // Repeats a table, e.g. a `[[clients]]` block, pushing counts past their limits
                // and duplicating names.
                let headers: Vec<usize> = (0..lines)
                    .filter(|i| bytes[starts[*i]..].starts_with(b"[["))
                    .collect();
                if headers.is_empty() {
                    return "no table to repeat";
                }
                let h = headers[rng.random_range(0..headers.len())];
                let end = headers.iter().find(|x| **x > h).map_or(len, |x| starts[*x]);
                let block = bytes[starts[h]..end].to_vec();
                let copies = rng.random_range(1..=40);
                for _ in 0..copies {
                    bytes.splice(end..end, block.iter().copied());
                }
                "repeat a table"
            }
            16 => {
                let key = KEYS[rng.random_range(0..KEYS.len())];
                let value = BOUNDARY_NUMBERS[rng.random_range(0..BOUNDARY_NUMBERS.len())];
                let (text, pos) = match format {
                    Format::Toml => (
                        format!("{key} = {value}\n"),
                        starts[rng.random_range(0..lines)],
                    ),
                    Format::Json => (
                        format!("\"{key}\": {value}, "),
                        bytes.iter().position(|b| *b == b'{').map_or(0, |i| i + 1),
                    ),
                };
                bytes.splice(pos..pos, text.into_bytes());
                "insert a key"
            }
            17 => {
                let count = rng.random_range(1..=16);
                for _ in 0..count {
                    let pos = rng.random_range(0..=bytes.len());
                    let b = rng.random::<u8>();
                    bytes.insert(pos, b);
                }
                "insert random bytes"
            }
            18 => {
                let crlf: Vec<u8> = bytes
                    .iter()
                    .flat_map(|b| {
                        if *b == b'\n' {
                            vec![b'\r', b'\n']
                        } else {
                            vec![*b]
                        }
                    })
                    .collect();
                *bytes = crlf;
                "use CRLF line ends"
            }
            _ => {
                // A long line: thousands of entries in one array.
                let n = rng.random_range(100..5_000);
                let items = vec!["\"east\""; n].join(", ");
                let text = match format {
                    Format::Toml => format!("regions = [{items}]\n"),
                    Format::Json => format!("\"regions\": [{items}], "),
                };
                let pos = match format {
                    Format::Toml => starts[rng.random_range(0..lines)],
                    Format::Json => bytes.iter().position(|b| *b == b'{').map_or(0, |i| i + 1),
                };
                bytes.splice(pos..pos, text.into_bytes());
                "insert a long array"
            }
        }
    }

    /// Inputs made to break a parser rather than a scenario.
    fn hostile(rng: &mut ChaCha8Rng, corpus: &Corpus) -> (Vec<u8>, Format, String) {
        let format = if rng.random_bool(0.5) {
            Format::Toml
        } else {
            Format::Json
        };
        let (bytes, what) = match rng.random_range(0..8u32) {
            0 => (Vec::new(), "empty"),
            1 => (deep(rng, format).into_bytes(), "deep nesting alone"),
            2 => {
                let n = rng.random_range(1..2_000);
                let bytes = (0..n).map(|_| rng.random::<u8>()).collect();
                (bytes, "random bytes")
            }
            3 => {
                let n = rng.random_range(1..200);
                let bytes = (0..n)
                    .map(|_| {
                        *b"[]{}=\".,#\n \\tx0'"
                            .get(rng.random_range(0..16))
                            .unwrap_or(&b'x')
                    })
                    .collect();
                (bytes, "random syntax")
            }
            4 => {
                let mut bytes = corpus.files[0].1.clone().into_bytes();
                let text = deep(rng, Format::Toml);
                bytes.extend(text.into_bytes());
                (bytes, "a shipped scenario with deep nesting at the end")
            }
            5 => {
                let d = depth(rng) * 4;
                (
                    format!("{} = 1\n", "k.".repeat(d) + "k").into_bytes(),
                    "a huge dotted key",
                )
            }
            6 => (
                format!(
                    "name = \"{}\"\n",
                    "\\u00e9".repeat(rng.random_range(1..10_000))
                )
                .into_bytes(),
                "a long escaped string",
            ),
            _ => (b"\xef\xbb\xbf".to_vec(), "a byte order mark alone"),
        };
        (bytes, format, what.to_string())
    }

    // ----- One case through every entry point ---------------------------------------------------

    #[derive(Default)]
    struct Outcome {
        parsed: bool,
        validated: bool,
        ran: bool,
        truncated: bool,
        events: u64,
        app_actions: u64,
        errors_seen: u64,
        /// Errors that say neither where in the text nor which element of the scenario.
        unlocated: Vec<(String, ScenarioError)>,
        /// Problems that are not panics: a failed round trip, an inconsistent service log.
        problems: Vec<String>,
        /// Wall-clock time of each stage.
        stages: Vec<(&'static str, Duration)>,
        /// The errors of the first parse, for a replay.
        first_errors: Vec<ScenarioError>,
    }

    impl Outcome {
        fn timed<T>(&mut self, name: &'static str, f: impl FnOnce(&mut Outcome) -> T) -> T {
            stage(name);
            let start = Instant::now();
            let value = f(self);
            let took = start.elapsed();
            match self.stages.iter_mut().find(|(n, _)| *n == name) {
                Some((_, d)) => *d += took,
                None => self.stages.push((name, took)),
            }
            value
        }

        /// Checks that every error says where it is: a syntax error by line and column, a
        /// validation error by the element it is about.
        fn check_errors(&mut self, context: &str, errors: &[ScenarioError], syntax: bool) {
            for e in errors {
                self.errors_seen += 1;
                let located = if syntax {
                    has_line_column(&e.location)
                } else {
                    !e.location.trim().is_empty()
                };
                if !located {
                    self.unlocated.push((context.to_string(), e.clone()));
                }
            }
        }

        fn slowest_stage(&self) -> (&'static str, Duration) {
            self.stages
                .iter()
                .copied()
                .max_by_key(|(_, d)| *d)
                .unwrap_or(("none", Duration::ZERO))
        }
    }

    /// True when a location reads "line L, column C" with L at least 1. serde_json says
    /// column 0 for a position just after a line break, so C may be 0.
    fn has_line_column(location: &str) -> bool {
        let Some(rest) = location.strip_prefix("line ") else {
            return false;
        };
        let Some((line, column)) = rest.split_once(", column ") else {
            return false;
        };
        line.parse::<u64>().is_ok_and(|n| n >= 1) && column.parse::<u64>().is_ok()
    }

    fn parse_with(text: &str, format: Format) -> Result<Scenario, Vec<ScenarioError>> {
        match format {
            Format::Toml => Scenario::from_toml_str(text),
            Format::Json => Scenario::from_json_str(text),
        }
        .map_err(|e| e.0)
    }

    /// True when the text is well-formed for the format and has the scenario's shape, whatever
    /// validation says: what tells a syntax error from a validation error.
    fn syntax_ok(text: &str, format: Format) -> bool {
        match format {
            Format::Toml => toml::from_str::<Scenario>(text).is_ok(),
            Format::Json => serde_json::from_str::<Scenario>(text).is_ok(),
        }
    }

    /// Parses and checks the errors of one text in one format.
    fn parse_stage(
        out: &mut Outcome,
        text: &str,
        format: Format,
        context: &str,
    ) -> Option<Scenario> {
        match parse_with(text, format) {
            Ok(s) => Some(s),
            Err(errors) => {
                let syntax = !syntax_ok(text, format);
                out.check_errors(context, &errors, syntax);
                if out.first_errors.is_empty() {
                    out.first_errors = errors;
                }
                None
            }
        }
    }

    struct Budgets {
        /// The event budget of runs, or `None` for the scenario's own.
        cap: Option<u64>,
    }

    fn run_case(
        case: &Case,
        rng: &mut ChaCha8Rng,
        apps: &[App],
        corpus: &Corpus,
        budgets: &Budgets,
    ) -> Outcome {
        let mut out = Outcome::default();
        take_actions();
        let format = case.format;
        let scenario = out.timed("parse", |o| {
            let parsed = parse_stage(o, &case.text, format, "parse");
            // The other parser gets the same text now and then: it must refuse it with a
            // located error, not fall over.
            if rng.random_bool(0.125) {
                let other = match format {
                    Format::Toml => Format::Json,
                    Format::Json => Format::Toml,
                };
                parse_stage(o, &case.text, other, "parse as the other format");
            }
            parsed
        });
        if let Some(s) = &scenario {
            out.parsed = true;
            out.validated = true;
            out.timed("round trip", |o| round_trip(o, s));
            out.timed("lint", |_| {
                for f in inventory::check(s) {
                    let _ = f.to_string();
                }
            });
            let seed = if rng.random_bool(0.7) {
                s.seed
            } else {
                rng.random::<u64>()
            };
            let mut world = out.timed("compile", |_| World::compile(s));
            if let Some(cap) = budgets.cap {
                world.event_budget = world.event_budget.min(cap);
            }
            let run = out.timed("run", |_| sim::run_world(world, seed));
            out.ran = true;
            out.truncated = run.truncated;
            out.events = run.events.len() as u64;
            let verdict = out.timed("verdict", |_| monitor::verdict(&run));
            out.timed("render", |_| {
                // What the command line prints: the verdict in words and as JSON, the trace
                // and its digest.
                let _ = verdict.summary();
                let _ = serde_json::to_string(&verdict);
                let lost = monitor::lost_updates(&run.world, &run.events, 0);
                let _ = monitor::render_trace(&run.world, &run.events, &lost);
                let _ = trace::digest(&run.events);
            });
            // The overlaps and lost updates the timeline draws, the verdict's own analysis.
            out.timed("overlaps", |_| {
                monitor::analyse(
                    &run.world,
                    &run.events,
                    run.end,
                    lockstep::ui::timeline::OVERLAPS_DETAILED_MAX,
                )
            });
            out.timed("verdict", |o| {
                if verdict.events != run.events.len() as u64 {
                    o.problems.push(format!(
                        "the verdict counts {} events of a trace of {}",
                        verdict.events,
                        run.events.len()
                    ));
                }
                for log in verdict.service_logs.iter().filter(|l| !l.consistent) {
                    o.problems.push(format!(
                        "service \"{}\" has an inconsistent log: {}",
                        log.service,
                        log.problems.join("; ")
                    ));
                }
            });
            out.timed("snapshot", |_| {
                let mut instants =
                    vec![0, run.end / 2, run.end, run.end.saturating_add(1), u64::MAX];
                if !run.events.is_empty() {
                    instants.push(run.events[rng.random_range(0..run.events.len())].at);
                }
                for at in instants {
                    let _ = serde_json::to_string(&monitor::snapshot(&run.world, &run.events, at));
                }
            });
            // A sweep is many runs; a few cases try one, at the cap, so it stays cheap.
            if rng.random_bool(0.005) && !s.partitions.is_empty() {
                out.timed("sweep", |_| {
                    let mut capped = s.clone();
                    capped.max_events = Some(
                        budgets
                            .cap
                            .unwrap_or(limits::EVENTS_DEFAULT)
                            .min(capped.event_budget()),
                    );
                    let _ = sweep::partition_length(&capped, &[0, 100, u64::MAX], 2);
                });
            }
        } else if syntax_ok(&case.text, format) {
            out.parsed = true;
        }
        out.timed("app", |o| app_stage(o, case, rng, apps, corpus));
        out
    }

    /// A valid scenario must come back the same from its TOML and its JSON.
    fn round_trip(out: &mut Outcome, s: &Scenario) {
        let toml = s.to_toml_string();
        match Scenario::from_toml_str(&toml) {
            Ok(back) if back == *s => {}
            Ok(_) => out
                .problems
                .push("TOML round trip changed the scenario".to_string()),
            Err(e) => out.problems.push(format!("TOML round trip refused: {e}")),
        }
        let json = s.to_json_string();
        match Scenario::from_json_str(&json) {
            Ok(back) if back == *s => {}
            Ok(_) => out
                .problems
                .push("JSON round trip changed the scenario".to_string()),
            Err(e) => out.problems.push(format!("JSON round trip refused: {e}")),
        }
    }

    /// Builds an app, gives it the case's text as an edit, then a random sequence of actions.
    fn app_stage(
        out: &mut Outcome,
        case: &Case,
        rng: &mut ChaCha8Rng,
        apps: &[App],
        corpus: &Corpus,
    ) {
        let mut app = apps[rng.random_range(0..apps.len())].clone();
        // Now and then the app starts from saved state, as a returning visitor's would.
        if rng.random_bool(0.02) {
            let stored = match rng.random_range(0..3u32) {
                0 => serde_json::to_string(&Saved {
                    source: "05-fencing.toml".to_string(),
                    text: case.text.clone(),
                    ran: None,
                })
                .unwrap_or_default(),
                1 => case.text.clone(),
                _ => "{\"source\": 1}".to_string(),
            };
            let restored = App::restore(Some(&stored));
            check_app(out, &app, &restored, "restore");
            app = restored;
        }
        let first = Action::Edit(case.text.clone());
        record(&first);
        let before = app.clone();
        app = app.reduce(first);
        check_app(out, &before, &app, "edit");
        out.app_actions += 1;
        // Re-running actions (edits, toggles, picks, comparisons) cost a run each; a few per
        // case keep a million cases within minutes, and the navigation between them is cheap.
        let mut reruns = 0;
        for _ in 0..rng.random_range(1..=8) {
            let mut action = random_action(rng, &app, case, corpus);
            if reruns >= 3 && reruns_scenario(&action) {
                action = Action::StepForward;
            }
            if reruns_scenario(&action) {
                reruns += 1;
            }
            record(&action);
            let next = app.reduce(action);
            out.app_actions += 1;
            check_app(out, &app, &next, "app action");
            app = next;
        }
        out.timed("views", |_| views(&app, rng));
    }

    /// What the page's views ask of the app's state: the words, the timeline's marks, spans
    /// and bands at a few widths (a hidden canvas is 0 pixels wide, which makes the scale
    /// infinite, or not a number for an empty run), pointer hits, and the comparison's words.
    fn views(app: &App, rng: &mut ChaCha8Rng) {
        let _ = app.playhead_text();
        let _ = app.snapshot();
        let _ = app.saved();
        let _ = app.edited();
        let outcome = &app.outcome;
        let _ = ui::text::counts(&outcome.verdict);
        let n = outcome.events.len();
        for index in [0, n / 2, n.saturating_sub(1), n, usize::MAX] {
            let _ = ui::text::event_details(&outcome.world, &outcome.events, index);
        }
        let layout = &outcome.layout;
        let w = app.window;
        let end = outcome.end;
        for width in [0.0, 1.0, 800.0, 3_000.0] {
            let us_per_px = w.span() as f64 / width;
            let _ = layout.bands(w, us_per_px);
            for lane in layout.lanes.iter().take(8) {
                let _ = ui::timeline::visible_marks(&lane.marks, us_per_px);
                let _ = ui::timeline::visible_spans(&lane.spans, us_per_px);
            }
        }
        for lane in 0..layout.lanes.len().min(8) + 1 {
            let _ = layout.marks_in(lane, w);
            let t = big_u64(rng, end);
            let tolerance = big_u64(rng, end / 100);
            let _ = layout.hit(lane, t, tolerance);
        }
        for f in [f64::NAN, f64::INFINITY, -1.0, 0.0, 0.5, 1.0, 2.0] {
            let _ = w.time_at(f);
        }
        let _ = w.fraction(big_u64(rng, end));
        if let Some(Ok((b, diff))) = app.compare.as_ref().map(|c| &c.result) {
            let _ = ui::text::compare_summary(&outcome.verdict, &b.verdict, diff);
        }
    }

    fn reruns_scenario(action: &Action) -> bool {
        matches!(
            action,
            Action::Pick(_)
                | Action::Toggle(_)
                | Action::Edit(_)
                | Action::RestoreText
                | Action::NewSeed
                | Action::Compare(Some(_))
        )
    }

    /// Checks the errors an action left in the app. Errors an action only carried over from
    /// the state before it were checked when they appeared, and are not counted again.
    fn check_app(out: &mut Outcome, before: &App, app: &App, context: &str) {
        if !app.errors.is_empty() && (app.errors != before.errors || app.text != before.text) {
            let syntax = !syntax_ok(&app.text, Format::Toml);
            out.check_errors(context, &app.errors, syntax);
        }
        if app.toggle_errors != before.toggle_errors {
            out.check_errors(context, &app.toggle_errors, false);
        }
        let compared = |a: &App| a.compare.as_ref().map(std::rc::Rc::as_ptr);
        if compared(app) != compared(before) {
            if let Some(Err(errors)) = app.compare.as_ref().map(|c| &c.result) {
                out.check_errors("comparison", errors, false);
            }
        }
    }

    fn big_u64(rng: &mut ChaCha8Rng, end: u64) -> u64 {
        match rng.random_range(0..6u32) {
            0 => 0,
            1 => u64::MAX,
            2 => end,
            3 => end.saturating_add(1),
            _ => rng.random_range(0..=end.max(1)),
        }
    }

    fn random_action(rng: &mut ChaCha8Rng, app: &App, case: &Case, corpus: &Corpus) -> Action {
        let end = app.outcome.end;
        let events = app.outcome.events.len();
        match rng.random_range(0..100u32) {
            0..6 => Action::Edit(match rng.random_range(0..4u32) {
                0 => case.text.clone(),
                1 => {
                    let mut bytes = case.text.clone().into_bytes();
                    mutate_once(rng, &mut bytes, Format::Toml, corpus);
                    String::from_utf8_lossy(&bytes).into_owned()
                }
                2 => corpus.files[rng.random_range(0..corpus.files.len())]
                    .1
                    .clone(),
                _ => String::new(),
            }),
            6..20 => Action::Toggle(random_toggle(rng, app)),
            20..22 => Action::RestoreText,
            22..24 => Action::DiscardEdit,
            24..26 => Action::NewSeed,
            26..34 => Action::StepForward,
            34..38 => Action::StepBack,
            38..40 => Action::ToStart,
            40..42 => Action::ToEnd,
            42..48 => Action::Seek(big_u64(rng, end)),
            48..52 => Action::Cursor(match rng.random_range(0..4u32) {
                0 => usize::MAX,
                1 => events,
                _ => rng.random_range(0..=events),
            }),
            52..55 => Action::Jump(
                *[i32::MIN, -11, -1, 0, 1, 11, i32::MAX]
                    .get(rng.random_range(0..7))
                    .unwrap_or(&1),
            ),
            55..59 => Action::PlayPause,
            59..66 => Action::Tick(odd_f64(rng)),
            66..69 => Action::Speed(odd_f64(rng)),
            69..71 => Action::SpeedStep(
                *[i32::MIN, -1, 1, i32::MAX]
                    .get(rng.random_range(0..4))
                    .unwrap_or(&1),
            ),
            71..77 => Action::Compare(if rng.random_bool(0.2) {
                None
            } else {
                Some(random_toggle(rng, app))
            }),
            77..82 => Action::Select(random_index(rng, events)),
            82..85 => {
                let n = app
                    .compare
                    .as_ref()
                    .and_then(|c| c.result.as_ref().ok())
                    .map_or(0, |(b, _)| b.events.len());
                Action::SelectFlipped(random_index(rng, n))
            }
            85..88 => Action::OwnOrder(rng.random_bool(0.5)),
            88..93 => Action::Zoom(
                *[0, 1, 2, 7, 64, 65, u32::MAX]
                    .get(rng.random_range(0..7))
                    .unwrap_or(&1),
            ),
            93..98 => Action::DismissNotice,
            _ => Action::Pick(match rng.random_range(0..4u32) {
                0 => ui::BLANK.to_string(),
                1 => "no-such-file.toml".to_string(),
                _ => builtin::ALL[rng.random_range(0..builtin::ALL.len())]
                    .file
                    .to_string(),
            }),
        }
    }

    fn random_index(rng: &mut ChaCha8Rng, n: usize) -> Option<usize> {
        match rng.random_range(0..4u32) {
            0 => None,
            1 => Some(usize::MAX),
            2 => Some(n),
            _ => Some(rng.random_range(0..n.max(1))),
        }
    }

    fn odd_f64(rng: &mut ChaCha8Rng) -> f64 {
        match rng.random_range(0..10u32) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -1.0,
            4 => 0.0,
            5 => f64::MAX,
            6 => f64::MIN_POSITIVE,
            _ => rng.random_range(0.0..100.0),
        }
    }

    /// A toggle: usually one the app offers for its scenario, sometimes one built from odd
    /// values and names, which the app must refuse with a located reason.
    fn random_toggle(rng: &mut ChaCha8Rng, app: &App) -> Toggle {
        let s = &app.scenario;
        if rng.random_bool(0.6) {
            let flips = toggles::flips(s);
            if !flips.is_empty() {
                return flips[rng.random_range(0..flips.len())].1.clone();
            }
        }
        let class = s
            .clients
            .first()
            .map_or_else(|| "ghost".to_string(), |c| c.name.clone());
        let service = s
            .services
            .get(rng.random_range(0..s.services.len().max(1)))
            .map_or_else(|| "ghost".to_string(), |x| x.name.clone());
        let resource = s
            .resources
            .first()
            .map_or_else(|| "ghost".to_string(), |r| r.name.clone());
        let ms = |rng: &mut ChaCha8Rng| {
            *[
                0,
                1,
                100,
                limits::SPAN_MS_MAX,
                limits::SPAN_MS_MAX + 1,
                u64::MAX,
            ]
            .get(rng.random_range(0..6))
            .unwrap_or(&1)
        };
        match rng.random_range(0..19u32) {
            0 => Toggle::Partition(rng.random_bool(0.5)),
            1 => Toggle::PartitionStart(ms(rng)),
            2 => Toggle::PartitionLength(ms(rng)),
            3 => {
                let options = toggles::protocol_options(s);
                let choice = if options.is_empty() || rng.random_bool(0.3) {
                    "no such protocol".to_string()
                } else {
                    options[rng.random_range(0..options.len())].value.clone()
                };
                Toggle::Protocol { class, choice }
            }
            4 => Toggle::Fencing {
                resource,
                mode: [Fencing::Off, Fencing::AnySource, Fencing::OneSource]
                    [rng.random_range(0..3)],
                checks: [
                    None,
                    Some(FencingChecks::Writes),
                    Some(FencingChecks::AllAccesses),
                ][rng.random_range(0..3)],
            },
            5 => Toggle::Role {
                authority: match rng.random_range(0..3u32) {
                    0 => None,
                    1 => Some(service.clone()),
                    _ => s.services.first().map(|x| x.name.clone()),
                },
                service,
            },
            6 => Toggle::Outage {
                service,
                on: rng.random_bool(0.5),
            },
            7 => Toggle::OutageStart {
                service,
                ms: ms(rng),
            },
            8 => Toggle::OutageLength {
                service,
                ms: ms(rng),
            },
            9 => Toggle::Pause(rng.random_bool(0.5)),
            10 => Toggle::PauseClient(if rng.random_bool(0.5) {
                class
            } else {
                format!("{class}-1")
            }),
            11 => Toggle::PauseStart(ms(rng)),
            12 => Toggle::PauseLength(ms(rng)),
            13 => Toggle::Migration(rng.random_bool(0.5)),
            14 => Toggle::MigrationMode(
                [
                    MigrationMode::Naive,
                    MigrationMode::Drain,
                    MigrationMode::Transfer,
                ][rng.random_range(0..3)],
            ),
            15 => Toggle::MigrationAt(ms(rng)),
            16 => Toggle::Seed(
                *[0, 1 << 53, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX]
                    .get(rng.random_range(0..5))
                    .unwrap_or(&0),
            ),
            _ => Toggle::Seed(rng.random_range(0..1_000_000)),
        }
    }

    // ----- The campaign -------------------------------------------------------------------------

    /// A case kept for the report.
    struct Kept {
        index: u64,
        text: String,
        format: Format,
        origin: String,
        what: String,
        actions: Vec<Action>,
    }

    struct Slow {
        took: Duration,
        index: u64,
        stage: &'static str,
        stage_took: Duration,
        text: String,
        format: Format,
        origin: String,
    }

    #[derive(Default)]
    struct Tally {
        cases: u64,
        toml: u64,
        json: u64,
        lossy: u64,
        generated: u64,
        parsed: u64,
        validated: u64,
        ran: u64,
        real_budget_runs: u64,
        truncated: u64,
        events: u64,
        app_actions: u64,
        errors_seen: u64,
        panics: u64,
        unlocated: u64,
        problems: u64,
        over_threshold: u64,
        kept_panics: Vec<Kept>,
        kept_unlocated: Vec<Kept>,
        kept_problems: Vec<Kept>,
        kept_over: Vec<Kept>,
        /// Distinct panic messages (with their place) and how often each was seen.
        panic_kinds: BTreeMap<String, (u64, u64)>,
        unlocated_kinds: BTreeMap<String, (u64, u64)>,
        problem_kinds: BTreeMap<String, (u64, u64)>,
        slowest: Vec<Slow>,
        /// Total wall-clock time per stage.
        stage_time: BTreeMap<&'static str, Duration>,
    }

    fn count_kind(kinds: &mut BTreeMap<String, (u64, u64)>, kind: String, index: u64) {
        let e = kinds.entry(kind).or_insert((0, index));
        e.0 += 1;
        e.1 = e.1.min(index);
    }

    fn keep(list: &mut Vec<Kept>, case: &Case, what: String, actions: &[Action]) {
        if list.len() < KEPT_MAX {
            list.push(Kept {
                index: case.index,
                text: case.text.clone(),
                format: case.format,
                origin: case.origin.clone(),
                what,
                actions: actions.to_vec(),
            });
        }
    }

    impl Tally {
        fn add_slow(&mut self, slow: Slow, keep: usize) {
            if self.slowest.len() < keep || self.slowest.last().is_some_and(|s| s.took < slow.took)
            {
                self.slowest.push(slow);
                self.slowest
                    .sort_by(|a, b| b.took.cmp(&a.took).then(a.index.cmp(&b.index)));
                self.slowest.truncate(keep);
            }
        }

        fn merge(&mut self, other: Tally, keep_slowest: usize) {
            self.cases += other.cases;
            self.toml += other.toml;
            self.json += other.json;
            self.lossy += other.lossy;
            self.generated += other.generated;
            self.parsed += other.parsed;
            self.validated += other.validated;
            self.ran += other.ran;
            self.real_budget_runs += other.real_budget_runs;
            self.truncated += other.truncated;
            self.events += other.events;
            self.app_actions += other.app_actions;
            self.errors_seen += other.errors_seen;
            self.panics += other.panics;
            self.unlocated += other.unlocated;
            self.problems += other.problems;
            self.over_threshold += other.over_threshold;
            for (mine, theirs) in [
                (&mut self.kept_panics, other.kept_panics),
                (&mut self.kept_unlocated, other.kept_unlocated),
                (&mut self.kept_problems, other.kept_problems),
                (&mut self.kept_over, other.kept_over),
            ] {
                mine.extend(theirs);
                mine.sort_by_key(|k| k.index);
                mine.truncate(KEPT_MAX);
            }
            for (mine, theirs) in [
                (&mut self.panic_kinds, other.panic_kinds),
                (&mut self.unlocated_kinds, other.unlocated_kinds),
                (&mut self.problem_kinds, other.problem_kinds),
            ] {
                for (k, (n, first)) in theirs {
                    let e = mine.entry(k).or_insert((0, first));
                    e.0 += n;
                    e.1 = e.1.min(first);
                }
            }
            for s in other.slowest {
                self.add_slow(s, keep_slowest);
            }
            for (k, d) in other.stage_time {
                *self.stage_time.entry(k).or_default() += d;
            }
        }
    }

    /// The apps a case's actions start from: one per picker entry, opened once per worker,
    /// because opening runs a whole scenario and cloning an app is cheap. With a cap, each
    /// app's scenario gets that event budget, so that toggling it re-runs as quickly as the
    /// capped runs of the case itself.
    fn opened_apps(cap: Option<u64>) -> Vec<App> {
        ui::picker()
            .iter()
            .map(|c| {
                let app = App::open(&c.value);
                match cap {
                    Some(cap) => {
                        let mut bytes = app.text.clone().into_bytes();
                        cap_text(&mut bytes, Format::Toml, cap);
                        let text = String::from_utf8(bytes).expect("a shipped scenario is UTF-8");
                        app.reduce(Action::Edit(text))
                    }
                    None => app,
                }
            })
            .collect()
    }

    fn one_case(o: &Options, corpus: &Corpus, apps: &[Vec<App>; 2], index: u64, tally: &mut Tally) {
        let mut rng = case_rng(o.seed, index);
        stage("generate");
        let case = make_case(&mut rng, index, corpus, o);
        let budgets = Budgets {
            cap: (!case.real_budget).then_some(o.cap_events),
        };
        let apps = &apps[usize::from(case.real_budget)];
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| {
            run_case(&case, &mut rng, apps, corpus, &budgets)
        }));
        let took = start.elapsed();
        let actions = take_actions();
        tally.cases += 1;
        match case.format {
            Format::Toml => tally.toml += 1,
            Format::Json => tally.json += 1,
        }
        tally.lossy += u64::from(case.lossy);
        tally.generated += u64::from(case.origin.starts_with("generated"));
        let (slowest_stage, stage_took) = match result {
            Ok(out) => {
                tally.parsed += u64::from(out.parsed);
                tally.validated += u64::from(out.validated);
                tally.ran += u64::from(out.ran);
                tally.real_budget_runs += u64::from(out.ran && case.real_budget);
                tally.truncated += u64::from(out.truncated);
                tally.events += out.events;
                tally.app_actions += out.app_actions;
                tally.errors_seen += out.errors_seen;
                for (name, d) in &out.stages {
                    *tally.stage_time.entry(name).or_default() += *d;
                }
                if !out.unlocated.is_empty() {
                    tally.unlocated += out.unlocated.len() as u64;
                    for (context, e) in &out.unlocated {
                        count_kind(
                            &mut tally.unlocated_kinds,
                            format!("{context}: \"{}\" at \"{}\"", e.message, e.location),
                            index,
                        );
                    }
                    let (context, e) = &out.unlocated[0];
                    keep(
                        &mut tally.kept_unlocated,
                        &case,
                        format!("{context}: {e}"),
                        &actions,
                    );
                }
                if !out.problems.is_empty() {
                    tally.problems += out.problems.len() as u64;
                    for p in &out.problems {
                        count_kind(&mut tally.problem_kinds, p.clone(), index);
                    }
                    keep(
                        &mut tally.kept_problems,
                        &case,
                        out.problems.join("\n"),
                        &actions,
                    );
                }
                out.slowest_stage()
            }
            Err(_) => {
                let message = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| "(no message)".to_string());
                tally.panics += 1;
                count_kind(&mut tally.panic_kinds, message.clone(), index);
                keep(&mut tally.kept_panics, &case, message, &actions);
                (STAGE.with(Cell::get), took)
            }
        };
        if took.as_millis() > u128::from(o.max_ms_per_case) {
            tally.over_threshold += 1;
            keep(
                &mut tally.kept_over,
                &case,
                format!(
                    "{} ms, {} ms of it in {slowest_stage}",
                    took.as_millis(),
                    stage_took.as_millis()
                ),
                &[],
            );
        }
        tally.add_slow(
            Slow {
                took,
                index,
                stage: slowest_stage,
                stage_took,
                text: String::new(),
                format: case.format,
                origin: String::new(),
            },
            o.slowest,
        );
        // The text is copied only for a case that made the list.
        if let Some(s) = tally.slowest.iter_mut().find(|s| s.index == index) {
            s.text = case.text;
            s.origin = case.origin;
        }
    }

    fn campaign(o: &Options, corpus: &Corpus) -> ExitCode {
        let threads = o.threads.max(1) as u64;
        println!(
            "lockstep-fuzz: seed {}, {} cases on {} thread(s); runs capped at {} events, one case in {} at the real budgets; a case over {} ms is a finding",
            o.seed, o.cases, threads, o.cap_events, o.real_every, o.max_ms_per_case
        );
        // Inputs saved by an earlier run would read as findings of this one.
        for dir in ["fuzz-failures", "fuzz-slow"] {
            let _ = std::fs::remove_dir_all(o.out.join(dir));
        }
        let started = Instant::now();
        let deadline = o.seconds.map(|s| started + Duration::from_secs(s));
        let done = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let tallies: Vec<Tally> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|w| {
                    let (done, stop) = (&done, &stop);
                    std::thread::Builder::new()
                        .name(format!("fuzz-{w}"))
                        // The same stack as the main thread, so that a parser's recursion
                        // limits are tested against the stack they were chosen for.
                        .stack_size(8 << 20)
                        .spawn_scoped(scope, move || {
                            let apps = [opened_apps(Some(o.cap_events)), opened_apps(None)];
                            let mut tally = Tally::default();
                            let mut index = w;
                            while index < o.cases && !stop.load(Ordering::Relaxed) {
                                one_case(o, corpus, &apps, index, &mut tally);
                                done.fetch_add(1, Ordering::Relaxed);
                                index += threads;
                            }
                            tally
                        })
                        .expect("a worker thread starts")
                })
                .collect();
            let mut last = Instant::now();
            while !workers.iter().all(|w| w.is_finished()) {
                std::thread::sleep(Duration::from_millis(200));
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    stop.store(true, Ordering::Relaxed);
                }
                if last.elapsed() >= Duration::from_secs(15) {
                    last = Instant::now();
                    let n = done.load(Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64();
                    eprintln!(
                        "  {n} cases in {secs:.0} s ({:.0} a second)",
                        n as f64 / secs.max(1e-9)
                    );
                }
            }
            workers
                .into_iter()
                .map(|w| w.join().expect("a worker catches every panic of a case"))
                .collect()
        });
        let mut tally = Tally::default();
        for t in tallies {
            tally.merge(t, o.slowest);
        }
        report(o, &tally, started.elapsed())
    }

    fn percent(n: u64, of: u64) -> String {
        format!("{:.1}%", 100.0 * n as f64 / of.max(1) as f64)
    }

    fn excerpt(text: &str) -> String {
        let mut s: String = text.chars().take(PRINTED_CHARS_MAX).collect();
        if s.len() < text.len() {
            let _ = write!(s, "\n... ({} bytes in all)", text.len());
        }
        s
    }

    fn save(path: &Path, text: &str) -> String {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        match std::fs::write(path, text) {
            Ok(()) => path.display().to_string(),
            Err(e) => format!("{} (not saved: {e})", path.display()),
        }
    }

    /// Saves kept inputs under `dir`, each with a note beside it saying what it showed and how
    /// to replay it.
    fn save_kept(o: &Options, dir: &Path, prefix: &str, kept: &[Kept]) -> Vec<String> {
        kept.iter()
            .map(|k| {
                let name = format!("{prefix}-case-{}.{}", k.index, k.format.extension());
                let path = save(&dir.join(&name), &k.text);
                let mut note = format!(
                    "{}\n\ncase {} of seed {} ({}); replay with\n  cargo run --release --bin lockstep-fuzz -- --seed {} --case {}\n",
                    k.what, k.index, o.seed, k.origin, o.seed, k.index
                );
                if !k.actions.is_empty() {
                    let _ = writeln!(note, "\napp actions after opening:");
                    for a in &k.actions {
                        let _ = writeln!(note, "  {}", action_text(a));
                    }
                }
                save(&dir.join(format!("{name}.txt")), &note);
                path
            })
            .collect()
    }

    /// An action in a line, with an edit's text shortened.
    fn action_text(a: &Action) -> String {
        match a {
            Action::Edit(text) if text.len() > 80 => {
                let head: String = text.chars().take(60).collect();
                format!("Edit({head:?}... {} bytes)", text.len())
            }
            other => format!("{other:?}"),
        }
    }

    fn print_kinds(title: &str, kinds: &BTreeMap<String, (u64, u64)>) {
        if kinds.is_empty() {
            return;
        }
        println!("{title}:");
        let mut sorted: Vec<_> = kinds.iter().collect();
        sorted.sort_by_key(|k| std::cmp::Reverse(k.1 .0));
        for (kind, (n, first)) in sorted.iter().take(20) {
            let kind: String = kind.chars().take(300).collect();
            println!("  {n} x (first: case {first}) {kind}");
        }
    }

    fn report(o: &Options, t: &Tally, elapsed: Duration) -> ExitCode {
        let secs = elapsed.as_secs_f64();
        println!();
        println!(
            "cases run           {} in {secs:.1} s ({:.0} a second){}",
            t.cases,
            t.cases as f64 / secs.max(1e-9),
            if t.cases < o.cases {
                ", stopped early"
            } else {
                ""
            }
        );
        println!(
            "inputs              {} TOML, {} JSON; {} structure-generated; {} with invalid UTF-8 read lossily",
            t.toml, t.json, t.generated, t.lossy
        );
        println!(
            "parsed              {} ({})",
            t.parsed,
            percent(t.parsed, t.cases)
        );
        println!(
            "validated           {} ({})",
            t.validated,
            percent(t.validated, t.cases)
        );
        println!(
            "ran                 {} ({} at the real budgets, {} stopped by their budget), {} events",
            t.ran, t.real_budget_runs, t.truncated, t.events
        );
        println!("app actions         {}", t.app_actions);
        println!("errors checked      {}", t.errors_seen);
        println!("panics              {}", t.panics);
        println!("unlocated errors    {}", t.unlocated);
        println!("other problems      {}", t.problems);
        println!("over {} ms         {}", o.max_ms_per_case, t.over_threshold);
        let total: Duration = t.stage_time.values().sum();
        let mut stages: Vec<_> = t.stage_time.iter().collect();
        stages.sort_by(|a, b| b.1.cmp(a.1));
        let shares: Vec<String> = stages
            .iter()
            .map(|(k, d)| {
                format!(
                    "{k} {:.0}%",
                    100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-9)
                )
            })
            .collect();
        println!("time by stage       {}", shares.join(", "));

        print_kinds("panics by message", &t.panic_kinds);
        print_kinds("unlocated errors by message", &t.unlocated_kinds);
        print_kinds("other problems", &t.problem_kinds);

        let failures = o.out.join("fuzz-failures");
        for (title, prefix, kept) in [
            ("panic", "panic", &t.kept_panics),
            ("unlocated error", "unlocated", &t.kept_unlocated),
            ("problem", "problem", &t.kept_problems),
        ] {
            if kept.is_empty() {
                continue;
            }
            let paths = save_kept(o, &failures, prefix, kept);
            for (k, path) in kept.iter().zip(&paths).take(3) {
                println!(
                    "\n{title} in case {} ({}): {}\nsaved to {path}\n{}",
                    k.index,
                    k.origin,
                    k.what,
                    excerpt(&k.text)
                );
            }
        }
        if !t.kept_over.is_empty() {
            let paths = save_kept(o, &o.out.join("fuzz-slow"), "slow", &t.kept_over);
            println!(
                "\ncases over {} ms, saved to {}",
                o.max_ms_per_case,
                o.out.join("fuzz-slow").display()
            );
            for (k, path) in t.kept_over.iter().zip(&paths) {
                println!("  case {}: {} ({}) {path}", k.index, k.what, k.origin);
            }
        }
        println!("\nslowest cases (wall-clock):");
        for (i, s) in t.slowest.iter().enumerate() {
            let path = if i == 0 {
                let p = o.out.join(format!("fuzz-slowest.{}", s.format.extension()));
                format!("  {}", save(&p, &s.text))
            } else {
                String::new()
            };
            println!(
                "  {:>8.1} ms  case {:<8} {} {:.1} ms  ({}){path}",
                s.took.as_secs_f64() * 1e3,
                s.index,
                s.stage,
                s.stage_took.as_secs_f64() * 1e3,
                s.origin
            );
        }
        if t.panics == 0 && t.unlocated == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }

    // ----- Replays ------------------------------------------------------------------------------

    fn describe(out: &Outcome, actions: &[Action], took: Duration) {
        println!(
            "parsed {}, validated {}, ran {} ({} events{}), {} app actions",
            out.parsed,
            out.validated,
            out.ran,
            out.events,
            if out.truncated {
                ", stopped by the budget"
            } else {
                ""
            },
            out.app_actions
        );
        let stages: Vec<String> = out
            .stages
            .iter()
            .map(|(n, d)| format!("{n} {:.2} ms", d.as_secs_f64() * 1e3))
            .collect();
        println!(
            "{:.2} ms in all: {}",
            took.as_secs_f64() * 1e3,
            stages.join(", ")
        );
        for e in out.first_errors.iter().take(5) {
            println!("error: {e}");
        }
        for (context, e) in &out.unlocated {
            println!("unlocated error ({context}): {e:?}");
        }
        for p in &out.problems {
            println!("problem: {p}");
        }
        print_actions(actions);
    }

    fn print_actions(actions: &[Action]) {
        println!("app actions:");
        for a in actions {
            println!("  {}", action_text(a));
        }
    }

    fn run_verbose(
        case: &Case,
        rng: &mut ChaCha8Rng,
        corpus: &Corpus,
        budgets: &Budgets,
    ) -> ExitCode {
        let apps = opened_apps(budgets.cap);
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| {
            run_case(case, rng, &apps, corpus, budgets)
        }));
        let took = start.elapsed();
        let actions = take_actions();
        match result {
            Ok(out) => {
                describe(&out, &actions, took);
                if out.unlocated.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }
            Err(_) => {
                let message = LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_default();
                println!("panic after {:.2} ms: {message}", took.as_secs_f64() * 1e3);
                print_actions(&actions);
                ExitCode::from(1)
            }
        }
    }

    fn replay_case(o: &Options, corpus: &Corpus, index: u64) -> ExitCode {
        let mut rng = case_rng(o.seed, index);
        let case = make_case(&mut rng, index, corpus, o);
        let path = o
            .out
            .join(format!("fuzz-case-{index}.{}", case.format.extension()));
        println!(
            "case {index} of seed {}: {} ({:?}, {} bytes{}), saved to {}",
            o.seed,
            case.origin,
            case.format,
            case.text.len(),
            if case.real_budget {
                ", real budgets"
            } else {
                ""
            },
            save(&path, &case.text)
        );
        let budgets = Budgets {
            cap: (!case.real_budget).then_some(o.cap_events),
        };
        run_verbose(&case, &mut rng, corpus, &budgets)
    }

    fn replay_file(o: &Options, corpus: &Corpus, path: &Path) -> ExitCode {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("lockstep-fuzz: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        let lossy = std::str::from_utf8(&bytes).is_err();
        let format = if path.extension().is_some_and(|e| e == "json") {
            Format::Json
        } else {
            Format::Toml
        };
        let case = Case {
            index: 0,
            text: String::from_utf8_lossy(&bytes).into_owned(),
            format,
            origin: path.display().to_string(),
            real_budget: true,
            lossy,
        };
        let mut rng = case_rng(o.seed, 0);
        run_verbose(&case, &mut rng, corpus, &Budgets { cap: None })
    }
}
