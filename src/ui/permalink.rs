//! The app and its permalinks: the link of what it shows, the app opened on a link's state,
//! and the quiet note for a link whose run is not the one it recorded. The link format itself
//! is `share.rs`'s; this is where the app meets it, kept apart from the reducer, which hands
//! [`Action::OpenLink`] here.

use super::codec::builtin_of;
use super::{share, Action, App, BLANK, ZOOM_MAX};

/// What to say of a link whose run is shown as this version computes it.
///
/// A link that records no digest, or whose digest is this run's, needs no word: the run is the
/// one it describes. Otherwise the scenario is still the one its author chose, computed by this
/// version of the engine, so the page shows it and says, quietly and truly, what differs; a
/// link read in another format says which. Nothing here is a warning: the run is not wrong.
pub fn link_note(link: &share::Link, digest: u64) -> Option<String> {
    let format = (link.version != share::LINK_VERSION).then(|| {
        format!(
            "This link was written in link format {}; this page reads format {} and shows the same scenario.",
            link.version,
            share::LINK_VERSION
        )
    });
    let run = link.digest.filter(|d| *d != digest).map(|d| {
        format!(
            "The events differ from the run the link recorded (trace digest {d:016x}; this page's run of the same scenario has {digest:016x}): the link was edited, or this version of Lockstep computes the scenario differently."
        )
    });
    match (format, run) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
    }
}

impl App {
    /// The permalink of what the app shows.
    pub fn link(&self) -> share::Link {
        self.link_from(share::source_of_with(
            self.codec,
            &self.source,
            &self.scenario,
        ))
    }

    /// The permalink of what the app shows, with its scenario's source already worked out
    /// (finding a built-in's changes parses the built-in, which a view does once per run rather
    /// than at every step of the playhead).
    pub fn link_from(&self, source: share::Source) -> share::Link {
        let view = self.view();
        share::Link {
            version: share::LINK_VERSION,
            source,
            playhead_us: view.playhead_us,
            zoom: view.zoom,
            own_order: view.own_order,
            compare: view.compare,
            // A link cannot carry a recording, only its scenario, which opens simulated: the
            // recorded trace's digest would only make the link read as edited.
            digest: self
                .outcome
                .recorded
                .is_none()
                .then_some(self.outcome.digest),
        }
    }

    /// How the run is seen: the playhead, the zoom, each service's own order and the
    /// comparison.
    pub fn view(&self) -> share::View {
        share::View {
            playhead_us: self.time,
            zoom: self.zoom,
            own_order: self.own_order,
            compare: self.compare.as_ref().map(|c| c.toggle.clone()),
        }
    }

    /// The app showing a link's state. A link made by another version, or whose run now
    /// differs, still opens, with a notice that says so and what differs.
    pub(super) fn open_link(&self, link: &share::Link) -> App {
        let scenario = match link.source.scenario_with(self.codec) {
            Ok(s) => s,
            Err(e) => return self.reduce_inner(Action::LinkFailed(e.0)),
        };
        let mut next = match &link.source {
            share::Source::Builtin { file, .. } => App::open_with(self.codec, file),
            share::Source::Custom { .. } | share::Source::Json { .. } => {
                match builtin_of(self.codec, &scenario) {
                    Some(file) => App::open_with(self.codec, file),
                    None => {
                        App::from_scenario_with(self.codec, scenario.clone(), BLANK.to_string())
                    }
                }
            }
        };
        next.speed = self.speed;
        next.legend = self.legend;
        next.revision = self.revision;
        if next.scenario != scenario {
            next.text = (self.codec.write)(&scenario);
            next.set_scenario(scenario);
        }
        if !next.errors.is_empty() {
            return self.reduce_inner(Action::LinkFailed(
                "its scenario does not run here".to_string(),
            ));
        }
        next = next.with_view(&link.view());
        next.link_note = link_note(link, next.outcome.digest);
        next.linked = true;
        next
    }

    /// The app with a link's view of the run (zoom, each service's own order, the comparison
    /// and the playhead), leaving the scenario as it is.
    pub(super) fn with_view(self, view: &share::View) -> App {
        let mut next = self;
        next.zoom = view.zoom.clamp(1, ZOOM_MAX);
        next.own_order = view.own_order;
        if let Some(edit) = &view.compare {
            if edit.problem(&next.scenario).is_none() {
                next = next.reduce_inner(Action::Compare(Some(edit.toggle(&next.scenario))));
            }
        }
        next.seek(view.playhead_us.min(next.outcome.end));
        next.follow();
        next
    }
}
