//! `lockstep-fuzz-links`: feeds generated and mutated permalinks, embed addresses, host messages
//! and imported files to their decoders, and reports panics (which must be zero), the slowest
//! case, and how many inputs were accepted.
//!
//! Not part of the test run: a million cases take about a minute. Every case derives from the
//! seed and its index, so `--case I` replays one.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    native::main()
}

/// The fuzzer needs a clock, which a browser tab build of every binary does not get.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::process::ExitCode;
    use std::time::{Duration, Instant};

    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use lockstep::builtin;
    use lockstep::ui::embed::{self, Embed};
    use lockstep::ui::export;
    use lockstep::ui::share::{self, Link};

    const USAGE: &str = "\
usage:
  lockstep-fuzz-links [--cases N] [--seed S]
  lockstep-fuzz-links --case I [--seed S]

Exit status: 0 when no case panicked, 1 otherwise, 2 for usage.";

    /// Valid inputs to mutate: links to every built-in, with and without changes; a custom
    /// scenario's link; embed addresses; host messages; exported files.
    fn corpus() -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        for b in builtin::ALL {
            let s =
                lockstep::Scenario::from_toml_str(b.toml()).expect("shipped scenarios are valid");
            let link = Link {
                version: share::LINK_VERSION,
                source: share::source_of(b.file, &s),
                playhead_us: 1000,
                zoom: 2,
                own_order: true,
                compare: None,
                digest: Some(42),
            };
            out.push((0, link.to_query().into_bytes()));
            let custom = Link {
                source: share::Source::Custom {
                    toml: s.to_toml_string(),
                },
                ..link.clone()
            };
            out.push((0, custom.to_query().into_bytes()));
            let json = Link {
                source: share::Source::Json {
                    json: s.to_json_string(),
                },
                ..link.clone()
            };
            out.push((0, json.to_query().into_bytes()));
            out.push((1, json.to_query().into_bytes()));
            out.push((
                1,
                format!(
                    "{}&controls=seed,pause&origins=https%3A%2F%2Fa.example.org",
                    link.to_query()
                )
                .into_bytes(),
            ));
        }
        out.push((
            0,
            b"v=1&b=05-fencing.toml&e=fencing%20accounts%20one_source&f=partition%20on&d=0000000000000000"
                .to_vec(),
        ));
        for m in [
            r#"{"type":"lockstep:set-toggle","edit":"seed 3"}"#,
            r#"{"type":"lockstep:set-playhead","ms":120.5}"#,
            r#"{"type":"lockstep:play"}"#,
            r#"{"type":"lockstep:get-verdict","id":1}"#,
        ] {
            out.push((2, m.as_bytes().to_vec()));
        }
        let s = lockstep::Scenario::from_toml_str(builtin::ALL[4].toml()).expect("valid");
        let outcome = lockstep::ui::Outcome::compute(&s).expect("runs");
        out.push((3, export::timeline_svg(&s, &outcome, None).into_bytes()));
        out.push((3, s.to_toml_string().into_bytes()));
        // A recording from real etcd processes, imported as a file (3) and read with its
        // digest made the mutated trace's again (4), so that mutations reach the checks and the
        // monitors rather than stopping at the digest.
        out.push((3, RECORDING.as_bytes().to_vec()));
        out.push((4, RECORDING.as_bytes().to_vec()));
        out
    }

    /// The committed fixture `lockstep record` wrote.
    const RECORDING: &str = include_str!("../../tests/fixtures/recording-01.json");

    /// The recording with its digest set to its trace's, when the trace still reads.
    fn redigest(text: &str) -> String {
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(text) else {
            return text.to_string();
        };
        let Some(trace) = value.get("trace").cloned() else {
            return text.to_string();
        };
        let Ok(events) = lockstep::recording::events_of(&trace) else {
            return text.to_string();
        };
        value["digest"] =
            serde_json::Value::String(format!("{:016x}", lockstep::trace::digest(&events)));
        value.to_string()
    }

    /// One mutation of the input: flip, insert, delete, duplicate or splice bytes, or pick an
    /// interesting value.
    fn mutate(rng: &mut ChaCha8Rng, input: &mut Vec<u8>, corpus: &[(u8, Vec<u8>)]) {
        const INTERESTING: [&[u8]; 10] = [
            b"%",
            b"%FF",
            b"&",
            b"=",
            b"\0",
            b"\xff",
            b"18446744073709551616",
            b"-1",
            b"c=eJzLSM3JyVcozy/KSQEAGgQEXQ",
            b"e=",
        ];
        let n = rng.random_range(1..=4);
        for _ in 0..n {
            let len = input.len();
            match rng.random_range(0..6) {
                0 if len > 0 => {
                    let i = rng.random_range(0..len);
                    input[i] ^= 1 << rng.random_range(0..8);
                }
                1 => {
                    let i = rng.random_range(0..=len);
                    input.insert(i, rng.random());
                }
                2 if len > 0 => {
                    let i = rng.random_range(0..len);
                    let j = (i + rng.random_range(1..=16)).min(len);
                    input.drain(i..j);
                }
                3 => {
                    let i = rng.random_range(0..=len);
                    let word = INTERESTING[rng.random_range(0..INTERESTING.len())];
                    input.splice(i..i, word.iter().copied());
                }
                4 if len > 0 && len < 200_000 => {
                    let i = rng.random_range(0..len);
                    let j = (i + rng.random_range(1..=64)).min(len);
                    let piece = input[i..j].to_vec();
                    input.splice(j..j, piece);
                }
                _ => {
                    let other = &corpus[rng.random_range(0..corpus.len())].1;
                    if !other.is_empty() && len > 0 {
                        let i = rng.random_range(0..len);
                        let j = rng.random_range(0..other.len());
                        input.truncate(i);
                        input.extend_from_slice(&other[j..]);
                    }
                }
            }
        }
    }

    /// Runs one case; returns whether the decoder accepted it.
    fn case(seed: u64, index: u64, corpus: &[(u8, Vec<u8>)], embedder: &Embed) -> bool {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (kind, base) = &corpus[rng.random_range(0..corpus.len())];
        let mut input = base.clone();
        mutate(&mut rng, &mut input, corpus);
        let text = String::from_utf8_lossy(&input);
        match kind {
            0 => Link::from_query(&text)
                .map(|l| l.source.scenario().is_ok())
                .unwrap_or(false),
            1 => Embed::from_query(&text).is_ok(),
            2 => embed::accept(embedder, "https://a.example.org", &text).is_some(),
            // An imported recording is judged as the page would show it.
            3 => export::import(&input)
                .map(|i| {
                    if let Some(r) = i.recording {
                        lockstep::ui::Outcome::of_recording((*r.0).clone());
                    }
                })
                .is_ok(),
            _ => lockstep::recording::Recording::parse(&redigest(&text))
                .map(lockstep::ui::Outcome::of_recording)
                .is_ok(),
        }
    }

    pub fn main() -> ExitCode {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut cases = 1_000_000u64;
        let mut seed = 1u64;
        let mut only = None;
        let mut i = 0;
        while i < args.len() {
            let value = args.get(i + 1).and_then(|v| v.parse::<u64>().ok());
            match (args[i].as_str(), value) {
                ("--cases", Some(v)) => cases = v,
                ("--seed", Some(v)) => seed = v,
                ("--case", Some(v)) => only = Some(v),
                _ => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            }
            i += 2;
        }
        let corpus = corpus();
        let embedder = Embed::from_query(
            "v=1&b=05-fencing.toml&d=0000000000000000&controls=seed,fencing%20accounts&origins=https%3A%2F%2Fa.example.org",
        )
        .expect("the fuzzer's embed address is valid");
        // Panics are caught and counted; the default hook's message would flood the output.
        std::panic::set_hook(Box::new(|_| {}));
        let range = match only {
            Some(i) => i..i + 1,
            None => 0..cases,
        };
        let start = Instant::now();
        let (mut panics, mut accepted) = (Vec::new(), 0u64);
        let mut slowest = (Duration::ZERO, 0u64);
        for index in range.clone() {
            let t = Instant::now();
            match catch_unwind(AssertUnwindSafe(|| case(seed, index, &corpus, &embedder))) {
                Ok(true) => accepted += 1,
                Ok(false) => {}
                Err(_) => panics.push(index),
            }
            let took = t.elapsed();
            if took > slowest.0 {
                slowest = (took, index);
            }
        }
        let _ = std::panic::take_hook();
        println!(
            "{} cases in {:.1} s (seed {seed}): {} panics, {accepted} accepted, slowest case {} at {:.1} ms",
            range.end - range.start,
            start.elapsed().as_secs_f64(),
            panics.len(),
            slowest.1,
            slowest.0.as_secs_f64() * 1000.0
        );
        for p in panics.iter().take(20) {
            println!("panic: case {p} (replay with --case {p} --seed {seed})");
        }
        if panics.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }
}
