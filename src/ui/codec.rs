//! How the app reads and writes scenarios as text, and where its scenarios come from.
//!
//! Each bundle of the page opens its apps with a [`Codec`] that links only the readers its
//! views need, so what a bundle can read is decided here rather than in the reducer. The
//! picker's sources (the shipped scenarios and the blank one) are read through a codec, and
//! the editor's reader worker answers with a [`Reading`] that a codec turns into an action,
//! so both live beside it.

use serde::Serialize;

use super::{share, toggles, Action};
use crate::builtin;
use crate::json::Obj;
use crate::scenario::{Scenario, ScenarioError, ScenarioErrors};

/// The picker value of the blank scenario.
pub const BLANK: &str = "blank";

/// A small valid scenario to start from: one service, one table, two clients that share it.
pub const BLANK_TOML: &str = r#"name = "Blank"
description = "One lock service, one table, two clients that share it. Edit it to build your own."
duration_ms = 2000
seed = 1
regions = ["east"]

[[services]]
name = "locks"
replicas = ["east", "east", "east"]
protects = ["table"]

[[resources]]
name = "table"
rows = ["count"]

[[clients]]
name = "worker"
count = 2
region = "east"
protocol = { kind = "single", service = "locks" }
resource = "table"
period_ms = 200
jitter_ms = 100
work_ms = 30
"#;

/// The built-in scenario the app opens with.
pub const DEFAULT_SOURCE: &str = "01-two-services.toml";

/// How an app reads and writes scenarios as text. The app calls these through the codec it was
/// opened with rather than directly, so that a bundle links only the readers its views need:
/// the TOML reader's code for the scenario's types is the largest single part of a bundle after
/// the view framework, and the sandbox's first download leaves it to a worker.
#[derive(Clone, Copy)]
pub struct Codec {
    /// Reads the editor's text, or a link's scenario written as TOML.
    pub read: fn(&str) -> Result<Scenario, ScenarioErrors>,
    /// Whether the editor's text is read outside the app: an edit then waits
    /// ([`App::reading`](super::App::reading)) until the page's reader answers with
    /// [`Action::Read`], and `read` only says why a link written as TOML opens elsewhere.
    pub deferred: bool,
    /// Writes a scenario as the editor's text, in canonical form.
    pub write: fn(&Scenario) -> String,
    /// Reads a picker source: a built-in scenario's file name, or [`BLANK`].
    pub source: fn(&str) -> Option<Scenario>,
    /// A picker source's file as shipped, comments included, for a bundle with an editor
    /// ([`source_text`]); a bundle without one leaves the files out and writes the scenario
    /// with `write` instead.
    pub text: fn(&str) -> Option<&'static str>,
    /// Reads a link's scenario written as JSON (`j=`), and the scenario a saved state ran.
    pub json: fn(&str) -> Result<Scenario, ScenarioErrors>,
    /// A custom scenario as a link carries it.
    pub custom: fn(&Scenario) -> share::Source,
    /// The codec's name, for debugging output.
    pub name: &'static str,
}

/// The error of a codec that does not read a form in this bundle.
fn unread(message: &str) -> ScenarioErrors {
    ScenarioErrors(vec![ScenarioError {
        location: "line 1, column 1".to_string(),
        message: message.to_string(),
    }])
}

/// A shipped scenario (or the blank one) read from its JSON form, which needs no TOML reader.
fn source_from_json(source: &str) -> Option<Scenario> {
    let json = if source == BLANK {
        BLANK_JSON
    } else {
        builtin::find(source)?.json
    };
    Scenario::from_json_str(json).ok()
}

/// A custom scenario as links carry it: JSON (`j=`), the one form every bundle of the page
/// reads (the editor's TOML, `c=`, is read only where the whole app is loaded).
fn custom_as_json(s: &Scenario) -> share::Source {
    share::Source::Json {
        json: s.to_json_string(),
    }
}

impl Codec {
    /// Reads and writes everything, synchronously: the studio's bundle, the command line and
    /// the tests.
    pub const FULL: Codec = Codec {
        read: Scenario::from_toml_str,
        deferred: false,
        write: Scenario::to_toml_string,
        source: |source| source_text(source).and_then(|t| Scenario::from_toml_str(t).ok()),
        text: source_text,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "FULL",
    };

    /// The sandbox's first bundle: it writes the editor's TOML (a toggle rewrites the text)
    /// but reads it in a worker (`src/bin/reader.rs`), and reads shipped scenarios, links and
    /// saved runs as JSON. A link written as TOML (`c=`) is the studio's bundle's to open.
    pub const SANDBOX: Codec = Codec {
        read: |_| {
            Err(unread("this page opens a link whose scenario is written as TOML (c=) in the full app; reload the page to open it"))
        },
        deferred: true,
        write: Scenario::to_toml_string,
        source: source_from_json,
        text: source_text,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "SANDBOX",
    };

    /// The lesson view's codec: no editor, so no text to read or write; the learner's scenario
    /// goes to the sandbox as its run, whose text the sandbox writes
    /// ([`App::restore_with`](super::App::restore_with)). Shipped scenarios and links are read
    /// as JSON. The lesson view's bundle then links no TOML reader or writer.
    pub const LESSON: Codec = Codec {
        read: |_| {
            Err(unread(
                "the lesson view reads no scenario text; open it in the sandbox to edit it",
            ))
        },
        deferred: false,
        write: |_| String::new(),
        source: source_from_json,
        text: |_| None,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "LESSON",
    };

    /// The embed view's codec: no editor, so no text to read or write; shipped scenarios are
    /// read from their JSON form, and links carry custom scenarios as JSON.
    pub const EMBED: Codec = Codec {
        read: |_| {
            Err(unread("the embed view reads a scenario in its address only as JSON (j=); this one is TOML (c=), which the full app reads"))
        },
        deferred: false,
        write: |_| String::new(),
        source: source_from_json,
        text: |_| None,
        json: Scenario::from_json_str,
        custom: custom_as_json,
        name: "EMBED",
    };
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Codec::{}", self.name)
    }
}

/// [`BLANK_TOML`] as JSON, for [`Codec::EMBED`]; a test checks that both read the same.
pub const BLANK_JSON: &str = r#"{"name":"Blank","description":"One lock service, one table, two clients that share it. Edit it to build your own.","duration_ms":2000,"seed":1,"regions":["east"],"services":[{"name":"locks","replicas":["east","east","east"],"protects":["table"]}],"resources":[{"name":"table","rows":["count"]}],"clients":[{"name":"worker","count":2,"region":"east","protocol":{"kind":"single","service":"locks"},"resource":"table","period_ms":200,"jitter_ms":100,"work_ms":30}]}"#;

/// The built-in scenario a scenario is, up to what its controls change, if any.
pub(super) fn builtin_of(codec: Codec, scenario: &Scenario) -> Option<&'static str> {
    builtin::ALL.iter().map(|b| b.file).find(|file| {
        (codec.source)(file).is_some_and(|start| share::edits_from(&start, scenario).is_some())
    })
}

/// What the page's reader (a worker with the TOML reader, `src/bin/reader.rs`) answers about
/// one text: the scenario as JSON, or the text's located errors. The text comes back with it,
/// so the app can tell an answer about what it shows from a stale one. Written with serde; read
/// by hand ([`Reading::from_json`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reading {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ScenarioError>,
}

impl Reading {
    /// A reader's answer as it posts it, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<Reading, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the reader's answer")?;
        o.only(&["text", "json", "errors"])?;
        Ok(Reading {
            text: o.string("text")?,
            json: o.opt_string("json")?,
            errors: o.opt_items("errors", |v| {
                let e = Obj::of(v, "an error")?;
                Ok(ScenarioError {
                    location: e.string("location")?,
                    message: e.string("message")?,
                })
            })?,
        })
    }

    /// Reads a text as the editor's, in full: what the reader does.
    pub fn of(text: String) -> Reading {
        match Scenario::from_toml_str(&text) {
            Ok(s) => Reading {
                json: Some(s.to_json_string()),
                errors: Vec::new(),
                text,
            },
            Err(e) => Reading {
                json: None,
                errors: e.0,
                text,
            },
        }
    }

    /// The answer that a reader could not give, e.g. because it failed to load.
    pub fn failed(text: String, why: &str) -> Reading {
        Reading {
            text,
            json: None,
            errors: vec![ScenarioError {
                location: "the editor".to_string(),
                message: format!("the text could not be read ({why}); it is saved in this browser, and reloading the page reads it again"),
            }],
        }
    }

    /// The action that gives this answer to an app reading with `codec`.
    pub fn into_action(self, codec: Codec) -> Action {
        let result = match self.json {
            _ if !self.errors.is_empty() => Err(self.errors),
            Some(json) => (codec.json)(&json).map(Box::new).map_err(|e| e.0),
            None => Err(Reading::failed(String::new(), "the reader gave no answer").errors),
        };
        Action::Read {
            text: self.text,
            result,
        }
    }
}

/// Whether the picker offers this source. It does not touch the files' texts, so a bundle that
/// asks links none of them.
pub fn is_source(source: &str) -> bool {
    source == BLANK || builtin::find(source).is_some()
}

/// The text of a picker source: a built-in scenario's TOML, or the blank scenario.
pub fn source_text(source: &str) -> Option<&'static str> {
    if source == BLANK {
        Some(BLANK_TOML)
    } else {
        builtin::find(source).map(|b| b.toml())
    }
}

/// The picker's entries: every built-in scenario by name, then the blank one.
pub fn picker() -> Vec<toggles::Choice> {
    builtin::ALL
        .iter()
        .map(|b| toggles::Choice {
            value: b.file.to_string(),
            label: Scenario::from_json_str(b.json)
                .map(|s| s.name)
                .unwrap_or_else(|_| b.file.to_string()),
        })
        .chain(std::iter::once(toggles::Choice {
            value: BLANK.to_string(),
            label: "Blank scenario".to_string(),
        }))
        .collect()
}
