//! What the app keeps between visits and hands to another copy of itself: the saved state in
//! local storage (its keys, [`Saved`], [`Ran`]), the app restored from it, and [`LeftOff`],
//! with which the sandbox's first bundle hands the page over to the full one. Kept apart
//! because what is written here outlives the version of the page that wrote it: every later
//! version must read it back.

use serde::Serialize;

use super::toggles::{Settings, Toggle};
use super::{share, Action, App, Codec, DEFAULT_SOURCE};
use crate::json::Obj;

/// The local storage key of the saved state.
pub const STORAGE_KEY: &str = "lockstep.state.v1";
/// Where a saved state that cannot be read is set aside.
pub const STORAGE_SET_ASIDE_KEY: &str = "lockstep.state.v1.set-aside";

/// Where a copy of the app left off, for another copy to go on from ([`App::resume`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOff {
    pub saved: Saved,
    /// The last valid text, whose run is shown while the text has errors.
    pub valid_text: String,
    /// The view: playhead, zoom, each service's own order and the comparison (the scenario is
    /// the text's).
    pub view: share::View,
    pub linked: bool,
    pub speed: f64,
    pub legend: bool,
    /// The controls' values and the scenario they apply to (as JSON), when controls were
    /// changed since the scenario was opened: the copy that goes on keeps them, so that a
    /// control changed after the hand-over still undoes what its earlier value did.
    pub controls: Option<(String, Vec<String>)>,
}

/// What the app saves between visits. Written with serde; read by hand ([`Saved::from_json`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Saved {
    pub source: String,
    pub text: String,
    /// The scenario that ran, so that a page whose text is read in a worker shows the same run
    /// at once; older saved states have none and are read from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran: Option<Ran>,
}

/// The run a saved state showed: its scenario as JSON and, when the text had errors, the last
/// valid text (whose scenario it is).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ran {
    pub json: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_text: Option<String>,
}

// The page's bundles read these with `crate::json` over one parsed value rather than with
// derived readers, which are compiled anew for each type and cost the sandbox's download more.
// Each refuses a member it does not know where the derived reader did (not inside an error),
// reads `null` as a member left out, and keeps the last of a member named twice (they read a
// `serde_json::Value`).

impl Saved {
    /// What local storage held, or why it cannot be read.
    pub fn from_json(text: &str) -> Result<Saved, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the saved state")?;
        o.only(&["source", "text", "ran"])?;
        Ok(Saved {
            source: o.string("source")?,
            text: o.string("text")?,
            ran: o.get("ran").map(Ran::read).transpose()?,
        })
    }
}

impl Ran {
    fn read(v: &serde_json::Value) -> Result<Ran, String> {
        let o = Obj::of(v, "\"ran\"")?;
        o.only(&["json", "valid_text"])?;
        Ok(Ran {
            json: o.string("json")?,
            valid_text: o.opt_string("valid_text")?,
        })
    }
}

impl App {
    /// The app as the user left it, from what local storage held. A value that cannot be read
    /// is reported in the notice and the default scenario opens instead; the caller sets the
    /// value aside so that nothing the user wrote is lost.
    pub fn restore(stored: Option<&str>) -> App {
        App::restore_with(Codec::FULL, stored)
    }

    /// [`App::restore`] with a codec. The run the state saved is shown as it was when the
    /// codec reads it; only a text with errors then waits for a reader, for its errors.
    pub fn restore_with(codec: Codec, stored: Option<&str>) -> App {
        let Some(stored) = stored else {
            return App::open_with(codec, DEFAULT_SOURCE);
        };
        match Saved::from_json(stored) {
            Ok(mut saved) => {
                // A view without an editor (a lesson) hands its run over with no text, as it
                // writes none: the text is then this codec's writing of that run. An empty
                // text the user left has a run of another text, so it is not mistaken for one.
                if saved.text.is_empty() {
                    let handed = saved.ran.as_ref().filter(|r| r.valid_text.is_none());
                    if let Some(s) = handed.and_then(|r| (codec.json)(&r.json).ok()) {
                        saved.text = (codec.write)(&s);
                    }
                }
                let mut app = App::open_with(codec, &saved.source);
                if saved.text == app.text {
                    return app;
                }
                // A codec that reads the text reads it rather than trust a copy of its run.
                let ran = saved.ran.as_ref().filter(|_| codec.deferred).and_then(|r| {
                    let scenario = (codec.json)(&r.json).ok()?;
                    scenario.validate().ok()?;
                    Some((scenario, r.valid_text.as_deref().unwrap_or(&saved.text)))
                });
                if let Some((scenario, valid_text)) = ran {
                    if scenario != app.scenario {
                        app.set_scenario(scenario);
                    }
                    app.text = valid_text.to_string();
                    app.valid_text = valid_text.to_string();
                }
                if saved.text != app.text {
                    app = app.reduce(Action::Edit(saved.text));
                }
                app
            }
            Err(e) => {
                let mut app = App::open_with(codec, DEFAULT_SOURCE);
                app.notice = Some(format!(
                    "Your saved scenario could not be read ({e}), so it was set aside under \"{STORAGE_SET_ASIDE_KEY}\" in this browser's local storage and the first scenario was opened."
                ));
                app
            }
        }
    }

    /// What to save: the picker source and the editor text, even if the text is invalid, and
    /// the scenario that ran (but nothing for a picked scenario left as shipped).
    pub fn saved(&self) -> Saved {
        Saved {
            source: self.source.clone(),
            text: self.text.clone(),
            ran: self.edited().then(|| self.ran()),
        }
    }

    /// The run shown, as a saved state keeps it.
    pub fn ran(&self) -> Ran {
        Ran {
            json: self.scenario.to_json_string(),
            valid_text: (self.valid_text != self.text).then(|| self.valid_text.clone()),
        }
    }

    /// What another copy of the app needs to go on where this one is ([`App::resume`]).
    pub fn left_off(&self) -> LeftOff {
        LeftOff {
            saved: self.saved(),
            valid_text: self.valid_text.clone(),
            view: self.view(),
            linked: self.linked,
            speed: self.speed,
            legend: self.legend,
            controls: (!self.settings.is_empty()).then(|| {
                (
                    self.base.to_json_string(),
                    self.settings
                        .toggles()
                        .iter()
                        .map(|t| t.to_string())
                        .collect(),
                )
            }),
        }
    }

    /// The app as another copy of it left off: the same source, text and last valid text (so
    /// the same run, errors and Reset), seen the way its view says, saved or not as that copy
    /// was. This is how the page's small first bundle hands the page over to the full one.
    pub fn resume(l: &LeftOff) -> App {
        App::resume_with(Codec::FULL, l)
    }

    /// [`App::resume`] with a codec.
    pub fn resume_with(codec: Codec, l: &LeftOff) -> App {
        let mut app = App::open_with(codec, &l.saved.source);
        // The last valid text, then the text: a text with errors leaves the run of the last
        // valid one, as it did in the copy that handed over.
        for text in [&l.valid_text, &l.saved.text] {
            if *text != app.text {
                app = app.reduce(Action::Edit(text.clone()));
            }
        }
        // The controls' values, if they still describe the run: otherwise the text rules.
        if let Some((json, lines)) = &l.controls {
            let base = (app.codec.json)(json).ok();
            let toggles: Option<Vec<Toggle>> = lines.iter().map(|x| x.parse().ok()).collect();
            if let (Some(base), Some(toggles)) = (base, toggles) {
                let settings = Settings::of(&toggles);
                if settings.apply(&base) == app.scenario {
                    app.base = base;
                    app.settings = settings;
                }
            }
        }
        let mut app = app.with_view(&l.view);
        app.linked = l.linked;
        app.speed = l.speed;
        app.legend = l.legend;
        app
    }
}
