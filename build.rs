//! Writes each shipped scenario as JSON next to its TOML, so that a browser bundle without an
//! editor (the embed view's) can open the shipped scenarios without linking a TOML reader. The
//! conversion is generic (TOML values to JSON values); a test checks that both forms read as
//! the same scenario.

use std::fs;
use std::path::Path;

fn main() {
    let dir = Path::new("lessons/scenarios");
    println!("cargo:rerun-if-changed={}", dir.display());
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("scenarios");
    fs::create_dir_all(&out).expect("OUT_DIR is writable");
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("lessons/scenarios exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("a shipped scenario is readable");
        let value: toml::Value =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()));
        let json = serde_json::to_string(&value).expect("TOML values are JSON values");
        let name = path.file_name().expect("a file").to_string_lossy();
        fs::write(out.join(format!("{name}.json")), json).expect("OUT_DIR is writable");
    }
}
