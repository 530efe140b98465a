//! The browser shell: Yew function components that draw [`crate::ui::App`] and turn input into
//! [`Action`]s. Nothing here decides what happened in a run; it only shows the engine's answer.

mod controls;
mod panels;
mod timeline;

use std::rc::Rc;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::storage::{LocalStorage, Storage};
use gloo::timers::callback::Interval;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::ui::{self, Action, STORAGE_KEY, STORAGE_SET_ASIDE_KEY};

pub use controls::{Controls, Editor, Picker};
pub use panels::{CompareView, EventTable, OverlapDetails, OwnOrderView, Playback, VerdictView};
pub use timeline::{Defs, Legend, Timeline};

impl Reducible for ui::App {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(ui::App::reduce(&self, action))
    }
}

/// The handle every component dispatches actions through.
pub type Dispatch = UseReducerDispatcher<ui::App>;

/// The narrowest the timeline is drawn; a narrower frame scrolls it sideways.
const TIMELINE_WIDTH_MIN: u32 = 560;

/// Mounts the app on the page's `#app` element (or the body if there is none).
pub fn start() {
    let root = gloo::utils::document().get_element_by_id("app");
    match root {
        Some(root) => {
            yew::Renderer::<Root>::with_root(root).render();
        }
        None => {
            yew::Renderer::<Root>::new().render();
        }
    }
}

/// Reads the saved state. A value that cannot be read is copied aside so that the user's text
/// is never lost, and the app opens the default scenario with a notice.
fn initial_state() -> ui::App {
    let storage = LocalStorage::raw();
    let stored = storage.get_item(STORAGE_KEY).ok().flatten();
    let app = ui::App::restore(stored.as_deref());
    if app.notice.is_some() {
        if let Some(raw) = &stored {
            let _ = storage.set_item(STORAGE_SET_ASIDE_KEY, raw);
        }
    }
    app
}

/// Stores the source and the text, so that a reload (or a crash) restores them.
fn save(saved: &ui::Saved) {
    if let Ok(json) = serde_json::to_string(saved) {
        let _ = LocalStorage::raw().set_item(STORAGE_KEY, &json);
    }
}

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

/// Makes every select on the page show the option its `selected` attribute names.
fn sync_selects() {
    let Ok(list) = gloo::utils::document().query_selector_all("select") else {
        return;
    };
    for i in 0..list.length() {
        let Some(select) = list
            .item(i)
            .and_then(|n| n.dyn_into::<web_sys::HtmlSelectElement>().ok())
        else {
            continue;
        };
        let options = select.options();
        for j in 0..options.length() {
            if let Some(option) = options
                .item(j)
                .and_then(|o| o.dyn_into::<web_sys::HtmlOptionElement>().ok())
            {
                if option.default_selected() && !option.selected() {
                    option.set_selected(true);
                }
            }
        }
    }
}

fn now_ms() -> f64 {
    gloo::utils::window()
        .performance()
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The whole page.
#[function_component(Root)]
pub fn root() -> Html {
    let app = use_reducer(initial_state);
    let dispatch = app.dispatcher();
    let width = use_state(|| 960u32);
    let timeline_box = use_node_ref();

    // Save the source and the text whenever they change, even when the text is invalid.
    {
        let app = app.clone();
        use_effect_with((app.source.clone(), app.text.clone()), move |_| {
            save(&app.saved());
        });
    }

    // A select shows what the user last picked, not what its `selected` attribute says, once
    // the user has touched it; after every render the attribute (the state in force) wins.
    use_effect(sync_selects);

    // Tell tests and benchmarks that the page can be used.
    use_effect_with((), |_| {
        if let Some(html) = gloo::utils::document().document_element() {
            let _ = html.set_attribute("data-ready", "true");
        }
    });

    // The timeline fills its box; measure it now, whenever the window changes size, and when
    // the legend beside it comes or goes.
    {
        let width = width.clone();
        let timeline_box = timeline_box.clone();
        use_effect_with(app.legend, move |_| {
            let measure = move || {
                if let Some(el) = timeline_box.cast::<web_sys::Element>() {
                    let w = el.client_width().max(0) as u32;
                    if w > 0 {
                        width.set(w);
                    }
                }
            };
            measure();
            let listener = EventListener::new(&gloo::utils::window(), "resize", move |_| measure());
            move || drop(listener)
        });
    }

    // Shortcuts for playback, anywhere on the page except inside a form control.
    {
        let dispatch = dispatch.clone();
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
                    // Keys that scroll the page (Space, PageUp, PageDown, Home, End) drive the
                    // playhead only while focus is in the run's part of the page; elsewhere
                    // they keep scrolling, so a keyboard user can still move down the page.
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
                },
            );
            move || drop(listener)
        });
    }

    // While playing, advance the playhead by the real time that passed.
    {
        let dispatch = dispatch.clone();
        use_effect_with(app.playing, move |playing| {
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

    // Below this width the timeline keeps its size and scrolls sideways inside its frame, so
    // that lanes and labels stay readable on a phone.
    let timeline_width = (*width).max(TIMELINE_WIDTH_MIN);
    let layout = &app.outcome.layout;
    let selected_at = app
        .selected
        .and_then(|i| app.outcome.events.get(i))
        .map(|e| (e.at, layout.index.of(&e.what)));
    let height = timeline::height_of(layout.lanes.len());
    let shared = app_rc(&app);
    let diff = app
        .compare
        .as_ref()
        .and_then(|c| c.result.as_ref().ok())
        .map(|(_, d)| Rc::clone(d));

    html! {
        <>
        <Defs />
        <header class="top">
            <h1>{ "Lockstep" }</h1>
            <p class="tagline">{ "Two lock services, each correct, do not make one lock. Toggle the world and watch exclusion hold or break." }</p>
        </header>
        if let Some(notice) = &app.notice {
            <div id="notice" class="notice" role="alert">
                <p>{ notice }</p>
                <button type="button" onclick={ let d = dispatch.clone(); move |_| d.dispatch(Action::DismissNotice) }>{ "Dismiss" }</button>
            </div>
        }
        <main class="layout">
            <Picker source={app.source.clone()} description={app.scenario.description.clone()} edited={app.edited()} dispatch={dispatch.clone()} />
            <VerdictView outcome={Rc::clone(&app.outcome)} />
            // The picture comes first and widest: the timeline with its legend beside it, the
            // card of what is pointed at, and playback right under them.
            <section class="stage picture" aria-label="Timeline of the run">
                <div class={classes!("picture-row", app.legend.then_some("with-legend"))}>
                    <div class="timeline-frame">
                        if !app.legend {
                            <button id="show-legend" class="show-legend" type="button"
                                onclick={ let d = dispatch.clone(); move |_| { d.dispatch(Action::Legend(true)); controls::focus_after_render("hide-legend"); } }>
                                { "Show legend" }
                            </button>
                        }
                        <div class="timeline-box" ref={timeline_box}>
                            <Timeline id="timeline" title="Timeline of the run"
                                layout={Rc::clone(&app.outcome.layout)} window={app.window} width={timeline_width}
                                diff={diff} divergence={None::<u64>} selected={app.selected}
                                selected_at={selected_at} pinned={app.pinned}
                                dispatch={dispatch.clone()} />
                            <div class="playhead" aria-hidden="true"
                                style={timeline::playhead_style(app.time, app.window, timeline_width)}></div>
                        </div>
                    </div>
                    if app.legend {
                        <Legend height={height} dispatch={dispatch.clone()} />
                    }
                </div>
                <panels::Details app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
                <Playback app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
                <CompareView app={Rc::clone(&shared)} width={timeline_width} dispatch={dispatch.clone()} />
            </section>
            <section class="stage run" aria-label="The run in detail">
                <OverlapDetails outcome={Rc::clone(&app.outcome)} />
                <OwnOrderView app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
                <EventTable app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
            </section>
            <Controls app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
            <Editor source={app.source.clone()} text={app.text.clone()} errors={app.errors.clone()} can_restore={app.replaced_text.is_some()} heavy={app.outcome.events.len() > 20_000} dispatch={dispatch.clone()} />
        </main>
        </>
    }
}

/// The current state as a shared value for props: cloning the handle's state is cheap because
/// the heavy parts (the run, the layout) are behind `Rc`s.
fn app_rc(app: &UseReducerHandle<ui::App>) -> Rc<ui::App> {
    Rc::new((**app).clone())
}
