//! The scenarios that ship with the project, embedded so that every build (the command line,
//! the browser, the tests) has the same files.

/// A shipped scenario: its file name under `lessons/scenarios/` and its JSON form (written by
/// `build.rs`). Its TOML text, comments included, is [`BuiltIn::toml`]: kept in a table of its
/// own, so that a bundle without an editor, which never asks for it, links none of the files.
pub struct BuiltIn {
    pub file: &'static str,
    pub json: &'static str,
}

impl BuiltIn {
    /// The file as shipped.
    pub fn toml(&self) -> &'static str {
        TEXTS
            .iter()
            .find(|(file, _)| *file == self.file)
            .map(|(_, text)| *text)
            .expect("every shipped scenario has its text")
    }
}

macro_rules! built_in {
    ($($file:literal),* $(,)?) => {
        /// Every shipped scenario, in file-name order (one per claim of the product brief).
        pub const ALL: &[BuiltIn] = &[$(BuiltIn {
            file: $file,
            json: include_str!(concat!(env!("OUT_DIR"), "/scenarios/", $file, ".json")),
        }),*];

        /// The shipped files' texts, by file name.
        static TEXTS: &[(&str, &str)] = &[$(
            ($file, include_str!(concat!("../lessons/scenarios/", $file))),
        )*];
    };
}

built_in![
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
    "12-majority.toml",
    "13-majority-pause.toml",
    "14-majority-pause-acquiring.toml",
    "15-majority-restart.toml",
    "16-majority-find-the-fault.toml",
];

/// A shipped scenario by file name.
pub fn find(file: &str) -> Option<&'static BuiltIn> {
    ALL.iter().find(|b| b.file == file)
}

/// The recordings lessons show, made on real services by `lockstep record … --out` and shipped as
/// written: (file name under `lessons/recordings/`, text). Only the code that reads lesson
/// files (the command line, the lesson checker) links them; the page gets each in its lesson.
pub static RECORDINGS: &[(&str, &str)] = &[
    (
        "01-two-services.json",
        include_str!("../lessons/recordings/01-two-services.json"),
    ),
    (
        "05-fencing-every-access.json",
        include_str!("../lessons/recordings/05-fencing-every-access.json"),
    ),
    (
        "01-two-services.zookeeper.json",
        include_str!("../lessons/recordings/01-two-services.zookeeper.json"),
    ),
    (
        "05-fencing.zookeeper.json",
        include_str!("../lessons/recordings/05-fencing.zookeeper.json"),
    ),
    (
        "13-majority-pause.redis.json",
        include_str!("../lessons/recordings/13-majority-pause.redis.json"),
    ),
    (
        "15-majority-restart.redis.json",
        include_str!("../lessons/recordings/15-majority-restart.redis.json"),
    ),
];

/// A shipped recording's text by file name.
pub fn recording(file: &str) -> Option<&'static str> {
    RECORDINGS
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
}
