//! The sandbox's heavier panels (the sweep, the explorer, sharing and exports) live only in the
//! studio's bundle, so that the page's first download stays small. The sandbox's own bundle
//! shows them folded; opening one hands the page over to the studio's bundle, which opens the
//! same run at the same place with that panel unfolded.
//!
//! The two bundles are separate WebAssembly modules with separate memories, so the hand-over
//! ([`ui::handover::HandOver`]) travels as JSON through one property of `window`, and is taken
//! (removed) by the bundle that receives it.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use super::Dispatch;
use crate::ui;

/// A panel that only the studio's bundle draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    Lab,
    Explore,
    Share,
}

impl Extra {
    pub const ALL: [Extra; 3] = [Extra::Lab, Extra::Explore, Extra::Share];

    /// The id of the panel's `<details>` element, the same in both bundles.
    pub fn id(self) -> &'static str {
        match self {
            Extra::Lab => "lab",
            Extra::Explore => "explore",
            Extra::Share => "share",
        }
    }

    /// The panel's heading, the same in both bundles.
    pub fn title(self) -> &'static str {
        match self {
            Extra::Lab => "How often does it break? (sweep)",
            Extra::Explore => "Is it safe? (every interleaving)",
            Extra::Share => "Share, embed, export",
        }
    }

    fn class(self) -> &'static str {
        match self {
            Extra::Lab | Extra::Explore => "panel lab",
            Extra::Share => "panel share",
        }
    }

    fn from_id(id: &str) -> Option<Extra> {
        Extra::ALL.into_iter().find(|e| e.id() == id)
    }
}

/// What only the studio's bundle draws, set by it alone so that the sandbox's bundle never
/// links it in: the real panels, and the label of a run recorded on real services (only the
/// studio's share panel imports recordings).
pub struct Studio {
    pub panels: fn(&Rc<ui::App>, &Dispatch) -> Html,
    pub recorded_label: fn(&crate::recording::Source, u64) -> Html,
}

thread_local! {
    static STUDIO: Cell<Option<&'static Studio>> = const { Cell::new(None) };
}

/// Called by the studio's bundle when it starts.
pub fn register(studio: &'static Studio) {
    STUDIO.with(|d| d.set(Some(studio)));
}

/// The label of a recorded run, in the bundle that can show one.
pub fn recorded_label(source: &crate::recording::Source, seed: u64) -> Html {
    STUDIO
        .with(Cell::get)
        .map_or_else(Html::default, |s| (s.recorded_label)(source, seed))
}

/// The panels: the real ones in the studio's bundle, folded stand-ins in the sandbox's.
pub fn extras(app: &Rc<ui::App>, dispatch: &Dispatch) -> Html {
    match STUDIO.with(Cell::get) {
        Some(studio) => (studio.panels)(app, dispatch),
        None => Extra::ALL
            .into_iter()
            .map(|extra| html! { <Folded extra={extra} app={Rc::clone(app)} /> })
            .collect(),
    }
}

/// The property of `window` that carries the hand-over.
const KEY: &str = "lockstepHandOver";

/// What the studio's bundle needs to go on where the sandbox's bundle stopped.
pub struct HandOver {
    pub extra: Extra,
    pub left: ui::LeftOff,
}

/// Leaves the hand-over for the studio's bundle: written when a panel is unfolded, and again
/// after every change while that bundle loads, so that nothing done meanwhile is lost.
fn write(extra: Extra, app: &ui::App) {
    let json = ui::handover::HandOver::new(extra.id(), &app.left_off()).to_json();
    let _ = js_sys::Reflect::set(
        &gloo::utils::window(),
        &JsValue::from_str(KEY),
        &JsValue::from_str(&json),
    );
}

/// Drops a hand-over that no bundle will take (the studio's failed to load), so that no later
/// sandbox resumes from it.
pub fn forget() {
    let _ = js_sys::Reflect::delete_property(&gloo::utils::window(), &JsValue::from_str(KEY));
}

/// Takes the hand-over, if the sandbox's bundle left one; a second call finds none.
pub fn take() -> Option<HandOver> {
    let value = js_sys::Reflect::get(&gloo::utils::window(), &JsValue::from_str(KEY)).ok()?;
    forget();
    let h = ui::handover::HandOver::from_json(&value.as_string()?)?;
    Some(HandOver {
        extra: Extra::from_id(&h.panel)?,
        left: h.left_off()?,
    })
}

/// Unfolds the panel the hand-over asked for and gives its heading the focus, as the user's
/// click or key press on the folded one would have.
pub fn unfold(extra: Extra) {
    let document = gloo::utils::document();
    if let Some(details) = document.get_element_by_id(extra.id()) {
        let _ = details.set_attribute("open", "");
        if let Some(summary) = details
            .query_selector("summary")
            .ok()
            .flatten()
            .and_then(|s| s.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = summary.focus();
        }
    }
}

#[derive(Properties)]
struct FoldedProps {
    extra: Extra,
    app: Rc<ui::App>,
}

// The stand-in draws nothing of the run, but its hand-over must carry the latest state.
impl PartialEq for FoldedProps {
    fn eq(&self, o: &Self) -> bool {
        self.extra == o.extra && Rc::ptr_eq(&self.app, &o.app)
    }
}

#[derive(Clone, PartialEq)]
enum Fold {
    Folded,
    Loading,
    Failed(String),
}

/// A panel of the studio's bundle as the sandbox's bundle shows it: its heading; unfolding it
/// loads the studio's bundle, which takes the page over with the same run.
#[function_component(Folded)]
fn folded(p: &FoldedProps) -> Html {
    let state = use_state(|| Fold::Folded);
    // Whatever the user does while the studio's bundle loads goes with the page: after each
    // render, never during one.
    {
        let loading = matches!(*state, Fold::Loading);
        let (extra, app) = (p.extra, Rc::clone(&p.app));
        // The app is a new value after every change: its address tells one from the next.
        let changed = Rc::as_ptr(&p.app) as usize;
        use_effect_with((loading, changed), move |_| {
            if loading {
                write(extra, &app);
            }
        });
    }
    let ontoggle = {
        let state = state.clone();
        let app = Rc::clone(&p.app);
        let extra = p.extra;
        Callback::from(move |e: Event| {
            let open = e
                .target_dyn_into::<web_sys::HtmlDetailsElement>()
                .is_some_and(|d| d.open());
            if !open || matches!(*state, Fold::Loading) {
                return;
            }
            state.set(Fold::Loading);
            write(extra, &app);
            let state = state.clone();
            yew::platform::spawn_local(async move {
                if let Err(why) = super::start::load_other_bundle("studio").await {
                    forget();
                    state.set(Fold::Failed(why));
                }
            });
        })
    };
    html! {
        <details id={p.extra.id()} class={p.extra.class()} {ontoggle}>
            <summary><h2>{ p.extra.title() }</h2></summary>
            { match &*state {
                Fold::Folded | Fold::Loading => html! { <p class="loading" role="status">{ "Loading…" }</p> },
                Fold::Failed(why) => html! {
                    <p class="errors has-errors" role="alert">{ format!("This panel could not be loaded ({why}). The rest of the sandbox works without it.") }</p>
                },
            } }
        </details>
    }
}
