//! The share panel's state (the studio's): what the embed snippet is made with, the controls
//! an embed of the scenario can offer, and what the last action said. Apart from the link
//! format (`share`) and the embed's address (`embed`), which it uses and which use neither it
//! nor each other's panel.

use crate::scenario::Scenario;
use crate::ui::share::Link;

/// The share panel's state: what the embed snippet is made with, and what the last action
/// said. It changes only through [`Sharing::reduce`]; the page does the copying, the
/// downloads and the reading of files, and reports each as an action.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sharing {
    /// The controls the embed offers its reader, in the order they were ticked.
    pub controls: Vec<crate::lesson::edit::Control>,
    /// The host origins as typed.
    pub origins: String,
    /// The embed's colours: the reader's setting, or fixed to match the host page.
    pub theme: crate::ui::embed::Theme,
    /// The sentence under the embed's title, as typed (none when blank).
    pub caption: String,
    /// The embed's name on its host page, as typed (none when blank).
    pub id: String,
    /// What the last copy or export said.
    pub status: String,
    /// What the last import said.
    pub import_status: String,
}

/// Everything that changes the share panel.
#[derive(Clone, Debug, PartialEq)]
pub enum ShareAction {
    /// Ticks a control off if it was on, on if it was off.
    FlipControl(crate::lesson::edit::Control),
    Origins(String),
    Theme(crate::ui::embed::Theme),
    Caption(String),
    Id(String),
    Status(String),
    ImportStatus(String),
}

impl Sharing {
    pub fn reduce(&self, action: ShareAction) -> Sharing {
        let mut next = self.clone();
        match action {
            ShareAction::FlipControl(c) => match next.controls.iter().position(|x| *x == c) {
                Some(i) => {
                    next.controls.remove(i);
                }
                None => next.controls.push(c),
            },
            ShareAction::Origins(o) => next.origins = o,
            ShareAction::Theme(t) => next.theme = t,
            ShareAction::Caption(c) => next.caption = c,
            ShareAction::Id(i) => next.id = i,
            ShareAction::Status(s) => next.status = s,
            ShareAction::ImportStatus(s) => next.import_status = s,
        }
        next
    }

    /// The origins typed, each without a trailing slash: the valid ones, and the first that is
    /// not an origin (which the panel names and leaves out).
    pub fn origins(&self) -> (Vec<String>, Option<String>) {
        let typed: Vec<String> = self
            .origins
            .split([',', ' ', '\n'])
            .map(|o| o.trim().trim_end_matches('/').to_string())
            .filter(|o| !o.is_empty())
            .collect();
        let bad = typed
            .iter()
            .find(|o| !crate::ui::embed::valid_origin(o))
            .cloned();
        let good = typed
            .into_iter()
            .filter(|o| crate::ui::embed::valid_origin(o))
            .collect();
        (good, bad)
    }

    /// The embed for the run at `link`: its scenario as JSON (the embed view reads no TOML),
    /// with the controls ticked and the valid origins.
    pub fn embed(&self, link: &Link, scenario: &Scenario) -> crate::ui::embed::Embed {
        let mut for_embed = link.clone();
        for_embed.source = for_embed.source.for_embed(scenario);
        crate::ui::embed::Embed {
            link: for_embed,
            controls: self.controls.clone(),
            origins: self.origins().0,
            theme: self.theme,
            caption: self.caption(),
            id: self.embed_id().ok().flatten(),
        }
    }

    /// The caption typed, trimmed, at most [`crate::ui::embed::CAPTION_CHARS_MAX`] characters;
    /// none when blank.
    pub fn caption(&self) -> Option<String> {
        let text = self.caption.trim();
        (!text.is_empty()).then(|| {
            text.chars()
                .take(crate::ui::embed::CAPTION_CHARS_MAX)
                .collect()
        })
    }

    /// The embed id typed: none when blank, or the text that cannot be one (which the panel
    /// names and leaves out).
    pub fn embed_id(&self) -> Result<Option<String>, String> {
        let id = self.id.trim();
        if id.is_empty() {
            Ok(None)
        } else if crate::ui::embed::valid_id(id) {
            Ok(Some(id.to_string()))
        } else {
            Err(id.to_string())
        }
    }
}

/// The controls an embed of this scenario can offer its reader.
pub fn embed_controls(s: &Scenario) -> Vec<crate::lesson::edit::Control> {
    use crate::lesson::edit::Control;
    let mut all: Vec<Control> = Vec::new();
    all.extend(s.resources.iter().map(|r| Control::Fencing(r.name.clone())));
    all.extend(s.clients.iter().map(|c| Control::Protocol(c.name.clone())));
    all.extend(s.services.iter().map(|v| Control::Role(v.name.clone())));
    all.extend([
        Control::Partition,
        Control::Pause,
        Control::Migration,
        Control::Seed,
    ]);
    all.retain(|c| c.problem(s).is_none());
    all
}
