//! ARCHITECTURE.md's invariants that the source itself can show, checked over every file of
//! `src/`: what the core, `ui` and `web` may import. A comment may name anything; code may not.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code without its comments (line comments and doc comments; the source has no
/// block comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string (an address) is code; the simple test below is enough for
            // this source, whose strings with `//` hold no word the checks look for.
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_layers_point_one_way_and_the_core_does_no_io() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    assert!(files.len() > 50, "the source was found");
    let mut broken = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = code(&std::fs::read_to_string(file).unwrap());
        let (web, bin, ui) = (
            rel.starts_with("src/web/") || rel == "src/web.rs",
            rel.starts_with("src/bin/"),
            rel.starts_with("src/ui/") || rel == "src/ui.rs",
        );
        let mut forbid = |words: &[&str], why: &str| {
            for w in words {
                if text.contains(w) {
                    broken.push(format!("{rel}: {w} ({why})"));
                }
            }
        };
        if !web && !bin {
            forbid(
                &["web_sys", "yew::", "gloo", "js_sys", "wasm_bindgen"],
                "no web crate outside src/web",
            );
            forbid(
                &[
                    "std::fs",
                    "std::net",
                    "std::process",
                    "std::env",
                    "Instant::now",
                    "SystemTime",
                ],
                "no I/O and no clock outside src/bin and src/web",
            );
            forbid(
                &["axum", "tokio", "rusqlite"],
                "the room's crates are the command line's",
            );
        }
        if !web && !bin && !ui {
            forbid(
                &["crate::ui", "crate::web"],
                "the core imports nothing of ui or web",
            );
        }
        if ui {
            forbid(&["crate::web"], "ui imports nothing of web");
        }
        // What a run's state is made of iterates the same way natively and in wasm32: no hash
        // maps in the simulated state, the world, the trace or the monitors (the explorer's
        // visited set, a set of fingerprints never iterated, is outside them).
        let simulated = ["src/model", "src/world.rs", "src/sim.rs", "src/agenda.rs"]
            .iter()
            .chain(&["src/trace.rs", "src/monitor", "src/property.rs"])
            .any(|p| rel.starts_with(p));
        if simulated {
            forbid(
                &["HashMap", "HashSet"],
                "simulated state never iterates a hash map",
            );
        }
        if rel == "src/world.rs" {
            forbid(
                &["crate::trace"],
                "the trace names the world, not the other way round",
            );
        }
        if rel.starts_with("src/monitor") {
            forbid(
                &["crate::sim", "crate::explore"],
                "the monitors judge a trace, whatever made it",
            );
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
