//! The address in the browser: the route the fragment names ([`crate::ui::route`] reads it),
//! followed as it changes, and what a change of view does to the page: the tab's title and
//! the focus on the new view's heading. Kept apart so that every root and view follows the
//! address the same way.

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::course::CourseState;
use crate::ui::route::Route;

/// The route the address bar names now.
pub(super) fn current_route() -> Route {
    Route::parse(&gloo::utils::window().location().hash().unwrap_or_default())
}

/// The route the address names, followed as links, Back and Forward change the fragment.
#[hook]
pub(super) fn use_route() -> UseStateHandle<Route> {
    let route = use_state(current_route);
    {
        let route = route.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| {
                route.set(current_route());
            });
            move || drop(listener)
        });
    }
    route
}

/// Goes to a route: the browser records it in its history, so Back returns here.
pub(super) fn go(route: &Route) {
    let _ = gloo::utils::window().location().set_hash(&route.to_hash());
}

/// The title of the browser tab for a view.
/// Sets the document's title after the view is drawn (never while it renders), when it
/// changes; `None` leaves it to a view further down.
#[hook]
pub(super) fn use_title(words: Option<String>) {
    use_effect_with(words, |words| {
        if let Some(words) = words {
            gloo::utils::document().set_title(&format!("{words} · Lockstep"));
        }
    });
}

/// The title of a view the roots draw themselves; the sandbox and a lesson's place name their
/// own.
pub(super) fn title_of(route: &Route, lessons: &CourseState) -> Option<String> {
    let words = match route {
        Route::Course => "Lessons",
        Route::Facilitator => "For facilitators",
        Route::NotFound(_) => "Not found",
        Route::Lesson { lesson, place } => match lessons {
            CourseState::Ready(c) if c.find(lesson, place.as_deref()).is_none() => "Not found",
            _ => return None,
        },
        _ => return None,
    };
    Some(words.to_string())
}

/// The view's heading takes focus when the view changes (not on the first load), so a keyboard
/// or screen reader user starts reading at the new content.
#[hook]
pub(super) fn use_focus_on_view(route: &Route) {
    let first = use_mut_ref(|| true);
    use_effect_with(route.clone(), move |_| {
        if std::mem::take(&mut *first.borrow_mut()) {
            return;
        }
        focus_view_title();
    });
}

pub(super) fn focus_view_title() {
    if let Some(el) = gloo::utils::document()
        .get_element_by_id("view-title")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
        // In presenter mode a lesson puts its timeline above its heading: the room sees the
        // page from its top, not scrolled to where the focus went.
        if gloo::utils::document()
            .document_element()
            .is_some_and(|root| root.has_attribute("data-presenter"))
        {
            gloo::utils::window().scroll_to_with_x_and_y(0.0, 0.0);
        }
    }
}
