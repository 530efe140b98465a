//! The hand-over between two of the page's bundles: the sandbox's own bundle leaves where it
//! is for the studio's bundle, which goes on from there with a panel unfolded. The bundles are
//! separate WebAssembly modules with separate memories, so the hand-over travels as JSON, one
//! string in one property of `window` (`web/extras.rs` reads and writes it; this type is all
//! that crosses).

use serde::Serialize;

use crate::json::Obj;

use super::share::View;
use super::{LeftOff, Saved};

/// The format's version: a hand-over of another version is ignored (both bundles come from one
/// build, so this happens only if a stale page meets a new bundle).
pub const HAND_OVER_VERSION: u32 = 1;

/// Where the sandbox left off, and the panel to unfold. Written with serde; read by hand
/// ([`HandOver::from_json`]), since a derived reader would cost the sandbox's download more.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HandOver {
    pub version: u32,
    /// The id of the panel's `<details>` element.
    pub panel: String,
    pub source: String,
    pub text: String,
    pub valid_text: String,
    pub linked: bool,
    pub speed: f64,
    pub legend: bool,
    pub playhead_us: u64,
    pub zoom: u32,
    pub own_order: bool,
    /// The compared run's toggle, as its edit line.
    pub compare: Option<String>,
    /// The scenario the controls apply to (JSON) and each control's value as an edit line.
    pub controls: Option<(String, Vec<String>)>,
}

impl HandOver {
    /// The hand-over for `panel` from where the app left off.
    pub fn new(panel: &str, l: &LeftOff) -> HandOver {
        HandOver {
            version: HAND_OVER_VERSION,
            panel: panel.to_string(),
            source: l.saved.source.clone(),
            text: l.saved.text.clone(),
            valid_text: l.valid_text.clone(),
            linked: l.linked,
            speed: l.speed,
            legend: l.legend,
            playhead_us: l.view.playhead_us,
            zoom: l.view.zoom,
            own_order: l.view.own_order,
            compare: l.view.compare.as_ref().map(ToString::to_string),
            controls: l.controls.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a hand-over; anything else (another version, a damaged value) is none.
    pub fn from_json(json: &str) -> Option<HandOver> {
        HandOver::read(json)
            .ok()
            .filter(|h| h.version == HAND_OVER_VERSION)
    }

    fn read(json: &str) -> Result<HandOver, String> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let o = Obj::of(&value, "the hand-over")?;
        o.only(&[
            "version",
            "panel",
            "source",
            "text",
            "valid_text",
            "linked",
            "speed",
            "legend",
            "playhead_us",
            "zoom",
            "own_order",
            "compare",
            "controls",
        ])?;
        let controls = match o.get("controls") {
            None => None,
            Some(v) => match crate::json::list(v)?.as_slice() {
                [scenario, edits] => Some((
                    crate::json::string(scenario)?,
                    crate::json::list_of(
                        crate::json::list(edits)?,
                        "controls",
                        crate::json::string,
                    )?,
                )),
                _ => return Err("\"controls\" is not a scenario and its edits".to_string()),
            },
        };
        Ok(HandOver {
            version: o.u32("version")?,
            panel: o.string("panel")?,
            source: o.string("source")?,
            text: o.string("text")?,
            valid_text: o.string("valid_text")?,
            linked: o.bool("linked")?,
            speed: o.f64("speed")?,
            legend: o.bool("legend")?,
            playhead_us: o.u64("playhead_us")?,
            zoom: o.u32("zoom")?,
            own_order: o.bool("own_order")?,
            compare: o.opt_string("compare")?,
            controls,
        })
    }

    /// Where the app left off, for [`super::App::resume`]; none if the comparison does not read.
    pub fn left_off(&self) -> Option<LeftOff> {
        let compare = match &self.compare {
            Some(line) => Some(line.parse().ok()?),
            None => None,
        };
        Some(LeftOff {
            saved: Saved {
                source: self.source.clone(),
                text: self.text.clone(),
                // The studio reads the text itself.
                ran: None,
            },
            valid_text: self.valid_text.clone(),
            view: View {
                playhead_us: self.playhead_us,
                zoom: self.zoom,
                own_order: self.own_order,
                compare,
            },
            linked: self.linked,
            speed: self.speed,
            legend: self.legend,
            controls: self.controls.clone(),
        })
    }
}
