//! The header's display controls: the theme (light, dark, or the system's) and presenter mode.
//! The settings are [`Display`], reduced in `ui`; this component draws the two controls and,
//! after each change, sets `data-theme` and `data-presenter` on `<html>`, keeps the settings in
//! the browser and tells the timelines to paint again (their colours and line widths are read
//! when they paint).

use yew::prelude::*;

use crate::ui::display::{theme_named, theme_words, Display, DisplayAction, DISPLAY_KEY, THEMES};

/// The event a timeline listens for on `window` to paint again with the page's new look.
pub const DISPLAY_EVENT: &str = "lockstep-display";

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

/// Puts the settings on the page: attributes on the root, storage, and a repaint.
fn apply(display: &Display) {
    if let Some(root) = gloo::utils::document().document_element() {
        let _ = match display.theme_attr() {
            Some(name) => root.set_attribute("data-theme", name),
            None => root.remove_attribute("data-theme"),
        };
        let _ = if display.presenter {
            root.set_attribute("data-presenter", "true")
        } else {
            root.remove_attribute("data-presenter")
        };
    }
    if let Some(s) = storage() {
        let _ = s.set_item(DISPLAY_KEY, &display.write());
    }
    // The views measure their timeline's room when the window resizes; larger type changes
    // that room as a resize would, so they are told the same way.
    for name in [DISPLAY_EVENT, "resize"] {
        if let Ok(event) = web_sys::Event::new(name) {
            let _ = gloo::utils::window().dispatch_event(&event);
        }
    }
}

/// The theme list and the presenter switch, in the page's header.
#[function_component(DisplayControls)]
pub fn display_controls() -> Html {
    let display = use_state(|| {
        Display::read(
            storage()
                .and_then(|s| s.get_item(DISPLAY_KEY).ok().flatten())
                .as_deref(),
        )
    });
    use_effect_with(*display, apply);
    let act = |action: DisplayAction| {
        let display = display.clone();
        move || display.set(display.reduce(action))
    };
    let onchange = {
        let display = display.clone();
        Callback::from(move |e: Event| {
            let value = super::controls::value_of(&e);
            if let Some(theme) = theme_named(&value) {
                display.set(display.reduce(DisplayAction::Theme(theme)));
            }
        })
    };
    let toggle = act(DisplayAction::TogglePresenter);
    html! {
        <div class="display-controls">
            <label for="theme">{ "Theme" }</label>
            <select id="theme" {onchange}>
                { for THEMES.iter().map(|t| html! {
                    <option value={t.name()} selected={*t == display.theme}>{ theme_words(*t) }</option>
                }) }
            </select>
            <button id="presenter" type="button" aria-pressed={if display.presenter { "true" } else { "false" }}
                onclick={Callback::from(move |_: MouseEvent| toggle())}>{ "Presenter mode" }</button>
        </div>
    }
}
