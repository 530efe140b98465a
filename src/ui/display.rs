//! How the page looks in a room: its theme (light, dark, or the system's) and presenter mode
//! (large type, thicker marks, the timeline first), chosen in the header and kept in the
//! browser. The state and its one reducer are pure; the page sets `data-theme` and
//! `data-presenter` on `<html>` from it, after drawing, and the style sheet does the rest.

pub use super::embed::Theme;

/// The storage key of the display's settings.
pub const DISPLAY_KEY: &str = "lockstep.display";

/// The display's settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Display {
    pub theme: Theme,
    pub presenter: bool,
}

/// What the header's controls ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisplayAction {
    Theme(Theme),
    TogglePresenter,
}

/// Every theme, in the order the header offers them.
pub const THEMES: [Theme; 3] = [Theme::Auto, Theme::Light, Theme::Dark];

/// The theme a name is (`auto`, `light`, `dark`), if any.
pub fn theme_named(name: &str) -> Option<Theme> {
    THEMES.into_iter().find(|t| t.name() == name)
}

/// The words for a theme in the header's list.
pub fn theme_words(theme: Theme) -> &'static str {
    match theme {
        Theme::Auto => "Follow the system",
        Theme::Light => "Light",
        Theme::Dark => "Dark",
    }
}

impl Display {
    /// The settings kept in storage; anything unreadable (or nothing) is the default, the
    /// system's theme without presenter mode. The stored form is the theme's name, then
    /// `presenter` when it is on (`dark presenter`): names rather than numbers, so a setting
    /// kept by an older page still reads, and no serializer in the page for two words.
    pub fn read(stored: Option<&str>) -> Display {
        let mut words = stored.unwrap_or_default().split_whitespace();
        let theme = words.next().and_then(theme_named).unwrap_or_default();
        Display {
            theme,
            presenter: words.any(|w| w == "presenter"),
        }
    }

    /// The form kept in storage.
    pub fn write(&self) -> String {
        if self.presenter {
            format!("{} presenter", self.theme.name())
        } else {
            self.theme.name().to_string()
        }
    }

    pub fn reduce(self, action: DisplayAction) -> Display {
        match action {
            DisplayAction::Theme(theme) => Display { theme, ..self },
            DisplayAction::TogglePresenter => Display {
                presenter: !self.presenter,
                ..self
            },
        }
    }

    /// The `data-theme` the root gets: none when the system decides.
    pub fn theme_attr(&self) -> Option<&'static str> {
        (self.theme != Theme::Auto).then(|| self.theme.name())
    }
}
