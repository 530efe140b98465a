//! What drives the playhead from outside the views' controls: the playback keys (and, in a
//! lesson, `n` and `p` for the next and previous place) and the timer that moves the playhead
//! while playing. The playback panel itself is `panels.rs`'s. Kept apart because the sandbox,
//! a lesson and the embed view all use them.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::timers::callback::Interval;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::route::go;
use super::Dispatch;
use crate::ui::route::Route;
use crate::ui::Action;

/// Where `n` and `p` go in the lesson shown (previous, next): written at each render, read
/// by the key listener, which outlives renders.
pub(super) type Neighbours = Rc<RefCell<(Option<Route>, Option<Route>)>>;

/// True when a key press belongs to what has focus rather than to the page's shortcuts: every
/// key in a field, Space and Enter on a button (they press it), and the scrolling keys in a
/// region that scrolls.
fn key_belongs_to_focus(event: &web_sys::KeyboardEvent) -> bool {
    let Some(el) = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return false;
    };
    match el.tag_name().to_ascii_lowercase().as_str() {
        "input" | "textarea" | "select" => true,
        "button" | "summary" => matches!(event.key().as_str(), " " | "Enter"),
        _ => el
            .closest(".table-scroll, .order ol, pre")
            .ok()
            .flatten()
            .is_some(),
    }
}

fn now_ms() -> f64 {
    gloo::utils::window()
        .performance()
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Shortcuts for playback anywhere on the page except inside a form control; in a lesson,
/// `n` and `p` go to the next and previous step (`neighbours`, read when the key is pressed).
#[hook]
pub(super) fn use_playback_keys(dispatch: Dispatch, neighbours: Option<Neighbours>) {
    use_effect_with((), move |_| {
        let listener = EventListener::new_with_options(
            &gloo::utils::document(),
            "keydown",
            EventListenerOptions::enable_prevent_default(),
            move |event| {
                let Some(event) = event.dyn_ref::<web_sys::KeyboardEvent>() else {
                    return;
                };
                if event.ctrl_key() || event.meta_key() || event.alt_key() {
                    return;
                }
                if key_belongs_to_focus(event) {
                    return;
                }
                if let Some(n) = &neighbours {
                    let target = match event.key().as_str() {
                        "n" => n.borrow().1.clone(),
                        "p" => n.borrow().0.clone(),
                        _ => None,
                    };
                    if let Some(r) = target {
                        event.prevent_default();
                        go(&r);
                        return;
                    }
                }
                playback_key(event, &dispatch);
            },
        );
        move || drop(listener)
    });
}

/// While playing, advances the playhead by the real time that passed.
#[hook]
pub(crate) fn use_ticks(dispatch: Dispatch, playing: bool) {
    use_effect_with(playing, move |playing| {
        let interval = playing.then(|| {
            let mut last = now_ms();
            Interval::new(33, move || {
                let now = now_ms();
                dispatch.dispatch(Action::Tick(now - last));
                last = now;
            })
        });
        move || drop(interval)
    });
}

/// The playback keys, shared by the sandbox and the lesson view.
fn playback_key(event: &web_sys::KeyboardEvent, dispatch: &Dispatch) {
    // Keys that scroll the page (Space, PageUp, PageDown, Home, End) drive the playhead only
    // while focus is in the run's part of the page; elsewhere they keep scrolling, so a
    // keyboard user can still move down the page.
    let in_stage = event
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.closest(".stage").ok().flatten())
        .is_some();
    let scrolls = matches!(
        event.key().as_str(),
        " " | "PageUp" | "PageDown" | "Home" | "End"
    );
    if scrolls && !in_stage {
        return;
    }
    let action = match event.key().as_str() {
        " " | "k" => Some(Action::PlayPause),
        "ArrowRight" | "l" => Some(Action::StepForward),
        "ArrowLeft" | "j" => Some(Action::StepBack),
        "Home" => Some(Action::ToStart),
        "End" => Some(Action::ToEnd),
        "]" => Some(Action::SpeedStep(1)),
        "PageDown" => Some(Action::Jump(1)),
        "PageUp" => Some(Action::Jump(-1)),
        "[" => Some(Action::SpeedStep(-1)),
        _ => None,
    };
    if let Some(action) = action {
        event.prevent_default();
        dispatch.dispatch(action);
    }
}
