//! Each bundle's entry point (`web::start_*`, called by its `src/bin/` file's `main`), and how
//! one bundle hands the page over to another. Kept apart because code reaches a bundle only
//! from its entry point: what is started here decides what each bundle links.

use std::rc::Rc;

use yew::prelude::*;

use super::route::current_route;
use super::shell::{EmbedShell, LessonRoot, Root, SandboxShell};
use super::{checker, extras, lab, panels, reader, share, Dispatch, SHELL};
use crate::ui::{self, route::Route};

/// Mounts the sandbox's own bundle on the page's `#app` element (or the body if there is
/// none). This bundle holds the simulator and the sandbox only; when the address names a
/// lesson it loads the lesson view's bundle, and for the facilitator's view the studio's (which
/// has everything), and hands the page over to it, so the first download stays the sandbox's.
pub fn start() {
    let root = gloo::utils::document().get_element_by_id("app");
    let handle = match root {
        Some(root) => yew::Renderer::<SandboxShell>::with_root(root).render(),
        None => yew::Renderer::<SandboxShell>::new().render(),
    };
    SHELL.with(|s| *s.borrow_mut() = Some(handle));
}

/// Mounts the embed view's own bundle (`src/bin/embed.rs`) on `#app`: the run, the verdict
/// and the toggles its address lists, without the sandbox's editor and panels, so that a page
/// which embeds a run downloads as little as it can.
pub fn start_embed() {
    // The theme the address asks for is set before anything is drawn, so the first picture,
    // canvas included, already has its colours.
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    if let Some(query) = hash.split_once('?').map(|(_, q)| q) {
        let theme = crate::ui::embed::theme_of(query);
        if theme != crate::ui::embed::Theme::Auto {
            if let Some(html) = gloo::utils::document().document_element() {
                let _ = html.set_attribute("data-theme", theme.name());
            }
        }
    }
    let root = gloo::utils::document().get_element_by_id("app");
    match root {
        Some(root) => yew::Renderer::<EmbedShell>::with_root(root).render(),
        None => yew::Renderer::<EmbedShell>::new().render(),
    };
}

/// Starts the lab's worker (the `lab` bundle): sweeps, away from the page.
pub fn start_lab() {
    lab::start_worker();
}

/// Starts the lesson checker's worker (`src/bin/checker.rs`).
pub fn start_checker() {
    checker::start_worker();
}

/// Starts the editor's reader worker (`src/bin/reader.rs`).
pub fn start_reader() {
    reader::start_worker();
}

/// Mounts the lesson view's own bundle (`src/bin/course.rs`): the lessons and their places,
/// without the sandbox's editor, panels and TOML reader or the facilitator's view. It takes
/// over `#app` from the sandbox's bundle if that one is running.
pub fn start_course() {
    take_over::<LessonRoot>();
}

/// Mounts the whole app (the studio's bundle, `src/bin/studio.rs`): the sandbox with its lab,
/// explorer and exports, the facilitator's view, the lessons, and links whose scenario is TOML.
/// It takes over `#app` from the sandbox's bundle if that one is running.
pub fn start_studio() {
    extras::register(&STUDIO);
    // A hand-over is for the sandbox the user was in; if the address has moved on (to a lesson,
    // while the bundle loaded), no later visit to the sandbox should resume from it.
    if !matches!(current_route(), Route::Sandbox | Route::Run(_)) {
        extras::forget();
    }
    take_over::<Root>();
}

/// Mounts `C` in an element of its own after `#app`, then stops the sandbox's bundle if it
/// ran, so that its views and listeners go with it.
fn take_over<C: BaseComponent<Properties = ()>>() {
    let document = gloo::utils::document();
    let root = document.create_element("div").expect("a div");
    root.set_id("course-app");
    match document.get_element_by_id("app") {
        Some(app) => {
            let _ = app.after_with_node_1(&root);
        }
        None => {
            let _ = document.body().map(|b| b.append_child(&root));
        }
    }
    yew::Renderer::<C>::with_root(root).render();
    SHELL.with(|s| {
        if let Some(handle) = s.borrow_mut().take() {
            handle.destroy();
        }
    });
    if let Some(app) = document.get_element_by_id("app") {
        app.remove();
    }
}

/// The sandbox's heavier panels, which only the studio's bundle carries ([`extras`]).
/// What the studio's bundle adds to the sandbox's (see [`extras::Studio`]).
static STUDIO: extras::Studio = extras::Studio {
    panels: full_extras,
    recorded_label: panels::recorded_label,
};

fn full_extras(app: &Rc<ui::App>, dispatch: &Dispatch) -> Html {
    html! {
        <>
        <lab::LabPanel app={Rc::clone(app)} dispatch={dispatch.clone()} />
        <lab::ExplorePanel app={Rc::clone(app)} dispatch={dispatch.clone()} />
        <share::SharePanel app={Rc::clone(app)} dispatch={dispatch.clone()} />
        </>
    }
}

// Every bundle is loaded by the page's one loader (index.html's `__lockstepLoad`), which also
// brings a split bundle's rest and reads the files a single-file copy carries. A function in a
// module of its own, as the page's policy forbids eval.
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "export function load_bundle(name) { \
    return globalThis.__lockstepLoad(name); }")]
extern "C" {
    fn load_bundle(name: &str) -> js_sys::Promise;
}

/// Loads a bundle (`course` or `studio`) next to the page and starts it (its `main` calls
/// [`start_course`] or [`start_studio`]).
pub(super) async fn load_other_bundle(name: &'static str) -> Result<(), String> {
    wasm_bindgen_futures::JsFuture::from(load_bundle(name))
        .await
        .map(|_| ())
        .map_err(|e| e.as_string().unwrap_or_else(|| format!("{e:?}")))
}
