//! The scenarios that ship with the project, embedded so that every build (the command line,
//! the browser, the tests) has the same files.

/// A shipped scenario: its file name under `lessons/scenarios/`, its TOML text, and the same
/// in JSON (written by `build.rs`), for a bundle that reads no TOML.
pub struct BuiltIn {
    pub file: &'static str,
    pub toml: &'static str,
    pub json: &'static str,
}

macro_rules! built_in {
    ($($file:literal),* $(,)?) => {
        &[$(BuiltIn {
            file: $file,
            toml: include_str!(concat!("../lessons/scenarios/", $file)),
            json: include_str!(concat!(env!("OUT_DIR"), "/scenarios/", $file, ".json")),
        }),*]
    };
}

/// Every shipped scenario, in file-name order (one per claim of the product brief).
pub const ALL: &[BuiltIn] = built_in![
    "01-two-services.toml",
    "02-both-unordered.toml",
    "03-fixed-order.toml",
    "04-subordinate.toml",
    "05-fencing.toml",
    "06-partition.toml",
    "07-three-services.toml",
    "08-staggered-migration.toml",
    "09-migration-held.toml",
    "10-region-local.toml",
    "11-inventory.toml",
];

/// A shipped scenario by file name.
pub fn find(file: &str) -> Option<&'static BuiltIn> {
    ALL.iter().find(|b| b.file == file)
}
