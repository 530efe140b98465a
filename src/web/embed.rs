//! The embed view, for an iframe in someone else's page: the verdict's headline and the
//! timeline at the end of the run first (many readers never touch it), playback, only the
//! controls the embedder listed, and a link to the same state in the full app. It keeps nothing
//! in storage and sets no cookies.
//!
//! The host API ([`crate::ui::embed`]) listens for messages from the listed origins only and
//! answers to the exact origin that asked; notifications (ready, verdict changed, height) go to
//! each listed origin, and are delivered by the browser only to a host at one of them.

use std::cell::RefCell;
use std::rc::Rc;

use gloo::events::EventListener;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use super::packing::{self, Unpacked};
use super::views::app_rc;
use super::{panels, share, timeline, Controls, Playback, Timeline};
use crate::lesson::Control;
use crate::ui;
use crate::ui::embed::{self, Embed, HostMessage, VerdictSummary};
use crate::ui::share as links;

/// Below this frame width the verdict is one line, with the sentence on demand.
const NARROW_PX: u32 = 700;

/// How many packed scenarios the open-full link keeps at hand.
const PACKS_KEPT: usize = 8;

/// What the host is told when the browser cannot write a link to the state (it lacks
/// Compression Streams, which the embed's links need).
const LINK_UNAVAILABLE: &str = "this browser cannot write the link: it lacks Compression Streams";

/// Packed scenario texts kept for the open-full link and the host's `get-link`: each text once,
/// the one used last at the end, at most [`PACKS_KEPT`].
type Packs = Vec<(String, String)>;

/// Keeps `packed` as the packing of `text`, as the most recently used.
fn keep(packs: &mut Packs, text: String, packed: String) {
    packs.retain(|(t, _)| *t != text);
    if packs.len() >= PACKS_KEPT {
        packs.remove(0);
    }
    packs.push((text, packed));
}

/// The packing kept for `text`, if any.
fn known(packs: &Packs, text: &str) -> Option<String> {
    packs
        .iter()
        .find(|(t, _)| t == text)
        .map(|(_, p)| p.clone())
}

/// The address of `link` in the full app, with `packed` as its scenario's packing.
fn link_at(link: &links::Link, packed: &str) -> String {
    format!(
        "{}{}",
        share::app_url(),
        link.to_fragment_packed(&|_| packed.to_string())
    )
}

/// The address of `link` in the full app, its scenario packed by the browser unless `packs`
/// has it already (so that the host's link is the one on screen); `None` if the browser cannot.
async fn full_link(link: &links::Link, packs: &RefCell<Packs>) -> Option<String> {
    let Some(text) = link.source.packed_text() else {
        return Some(link_at(link, ""));
    };
    let kept = known(&packs.borrow(), text);
    let packed = match kept {
        Some(p) => p,
        None => {
            let p = packing::packed(text.to_string()).await?;
            keep(&mut packs.borrow_mut(), text.to_string(), p.clone());
            p
        }
    };
    Some(link_at(link, &packed))
}

#[derive(Properties, PartialEq)]
pub struct EmbedProps {
    /// The embed address's query, as the route gives it.
    pub query: AttrValue,
}

/// Sends a message to the host page, at exactly `origin` (or `"*"` for what is no secret),
/// stamped with the protocol's version and the embed's id.
fn send(origin: &str, message: &str, embed_id: Option<&str>) {
    post(origin, &embed::stamp(message, embed_id));
}

fn post(origin: &str, message: &str) {
    let window = gloo::utils::window();
    let Ok(Some(parent)) = window.parent() else {
        return;
    };
    // A page opened on its own is its own parent: there is no host to tell.
    if parent == window {
        return;
    }
    if let Ok(value) = js_sys::JSON::parse(message) {
        let _ = parent.post_message(&value, origin);
    }
}

/// Shows the embed in `theme`: fixed light or dark, or the reader's setting (`auto`, which the
/// style sheet follows as it changes).
fn set_theme(theme: embed::Theme) {
    if let Some(html) = gloo::utils::document().document_element() {
        let _ = match theme {
            embed::Theme::Auto => html.remove_attribute("data-theme"),
            fixed => html.set_attribute("data-theme", fixed.name()),
        };
    }
    // The timeline's canvas takes its colours from the style sheet: it paints again.
    if let Ok(event) = web_sys::Event::new(super::display::DISPLAY_EVENT) {
        let _ = gloo::utils::window().dispatch_event(&event);
    }
}

fn summary(app: &ui::App) -> VerdictSummary {
    VerdictSummary::of(
        &app.outcome.headline,
        &app.outcome.verdict,
        app.outcome.digest,
    )
}

/// The embed view. An address whose scenario is packed (`c=`, `j=`) shows nothing until the
/// browser has inflated it, a moment; any other opens at once.
#[function_component(EmbedView)]
pub fn embed_view(p: &EmbedProps) -> Html {
    let plain = links::packed_in(&p.query).is_empty();
    let done = use_state(|| plain.then(|| Rc::new(Unpacked::new())));
    {
        let done = done.clone();
        let query = p.query.to_string();
        // Once: a new address is a new view (`web::embed_page` keys it by the address).
        use_effect_with((), move |_| {
            if !plain {
                wasm_bindgen_futures::spawn_local(async move {
                    done.set(Some(Rc::new(packing::unpack_all(&query).await)));
                });
            }
        });
    }
    match &*done {
        Some(unpacked) => html! {
            <EmbedRun query={p.query.clone()} unpacked={Rc::clone(unpacked)} />
        },
        None => html! {},
    }
}

#[derive(Properties)]
struct EmbedRunProps {
    query: AttrValue,
    unpacked: Rc<Unpacked>,
}

impl PartialEq for EmbedRunProps {
    fn eq(&self, o: &Self) -> bool {
        self.query == o.query && Rc::ptr_eq(&self.unpacked, &o.unpacked)
    }
}

#[function_component(EmbedRun)]
fn embed_run(p: &EmbedRunProps) -> Html {
    let codec = super::codec_or(ui::Codec::EMBED);
    // The address and the run it names, opened before the first paint, so the first picture
    // (and the first message to the host) is already the linked run: many readers never press
    // anything. An address whose run cannot be shown is an error, never another run.
    let opened = {
        let unpacked = Rc::clone(&p.unpacked);
        use_memo(p.query.clone(), move |q| {
            Embed::from_query_unpacked(codec, q, &|packed| packing::read(&unpacked, packed))
                .and_then(|e| embed::open(codec, &e).map(|app| (e, app)))
        })
    };
    let parsed = Rc::new(
        (*opened)
            .as_ref()
            .map(|(e, _)| e.clone())
            .map_err(Clone::clone),
    );
    // Each scenario text the open-full link may need, packed: those the address brought, at
    // once, and any other (after a toggle) once the browser has deflated it.
    let packs = {
        let unpacked = Rc::clone(&p.unpacked);
        use_mut_ref(move || {
            unpacked
                .iter()
                .filter_map(|(packed, text)| Some((text.clone().ok()?, packed.clone())))
                .collect::<Packs>()
        })
    };
    let redraw = use_force_update();
    let app = {
        let opened = Rc::clone(&opened);
        use_reducer(move || match &*opened {
            Ok((_, app)) => app.clone(),
            // Never drawn: the view shows the reason instead.
            Err(_) => ui::App::open_with(codec, ui::DEFAULT_SOURCE),
        })
    };
    let width = use_state(|| 640u32);
    let root = use_node_ref();
    let frame = use_node_ref();
    // The latest state, for the message listener, which outlives renders.
    let latest: Rc<RefCell<Rc<ui::App>>> = use_mut_ref(|| app_rc(&app));
    *latest.borrow_mut() = app_rc(&app);

    // The host API.
    {
        let dispatch = app.dispatcher();
        let parsed = Rc::clone(&parsed);
        let latest = Rc::clone(&latest);
        let packs = Rc::clone(&packs);
        use_effect_with(p.query.clone(), move |_| {
            let listener = (*parsed).as_ref().ok().cloned().map(|cfg| {
                EventListener::new(&gloo::utils::window(), "message", move |event| {
                    let Some(event) = event.dyn_ref::<web_sys::MessageEvent>() else {
                        return;
                    };
                    let origin = event.origin();
                    let data = event.data();
                    let text = match data.as_string() {
                        Some(s) => s,
                        None => match js_sys::JSON::stringify(&data) {
                            Ok(s) => s.as_string().unwrap_or_default(),
                            Err(_) => return,
                        },
                    };
                    let id = cfg.id.as_deref();
                    let asked = embed::request_id(&text);
                    let message = match embed::read(&cfg, &origin, &text) {
                        embed::Read::Ignore => return,
                        embed::Read::Refuse(why) => {
                            send(&origin, &embed::refusal(&why, asked), id);
                            return;
                        }
                        embed::Read::Accept(m) => m,
                    };
                    let now = Rc::clone(&latest.borrow());
                    if let HostMessage::GetLink { id: asked } = message {
                        let source =
                            crate::ui::share::source_of_with(now.codec, &now.source, &now.scenario);
                        let link = now.link_from(source);
                        let id = id.map(str::to_string);
                        let packs = Rc::clone(&packs);
                        wasm_bindgen_futures::spawn_local(async move {
                            let reply = match full_link(&link, &packs).await {
                                Some(url) => embed::text_reply("link", "url", &url, asked),
                                // The error names the request it answers.
                                None => embed::refusal(LINK_UNAVAILABLE, asked),
                            };
                            send(&origin, &reply, id.as_deref());
                        });
                        return;
                    }
                    let handled = embed::handle(&now, message, asked);
                    if let Some(theme) = handled.theme {
                        set_theme(theme);
                    }
                    if let Some(action) = handled.action {
                        dispatch.dispatch(action);
                    }
                    if let Some(reply) = handled.reply {
                        send(&origin, &reply, id);
                    }
                })
            });
            move || drop(listener)
        });
    }

    // Tell the host when the verdict changes (and that the embed is ready, the first time).
    {
        let origins: Vec<String> = (*parsed)
            .as_ref()
            .map(|e| e.origins.clone())
            .unwrap_or_default();
        let embed_id = (*parsed).as_ref().ok().and_then(|e| e.id.clone());
        let app_now = app_rc(&app);
        let first = use_mut_ref(|| true);
        // A new run is a new outcome allocation, whatever its headline says.
        let shown = parsed.is_ok();
        use_effect_with(Rc::as_ptr(&app.outcome) as usize, move |_| {
            if !shown {
                return;
            }
            let kind = if std::mem::take(&mut *first.borrow_mut()) {
                "ready"
            } else {
                "verdict-changed"
            };
            let message = embed::reply(kind, Some(&summary(&app_now)), None, None);
            for o in &origins {
                send(o, &message, embed_id.as_deref());
            }
            if let Some(html) = gloo::utils::document().document_element() {
                let _ = html.set_attribute("data-embed-ready", "true");
            }
        });
    }

    // Tell the listed hosts when playback starts or stops, and where a stopped playhead is
    // (not every frame of playback).
    {
        let origins: Vec<String> = (*parsed)
            .as_ref()
            .map(|e| e.origins.clone())
            .unwrap_or_default();
        let embed_id = (*parsed).as_ref().ok().and_then(|e| e.id.clone());
        let key = (app.playing, if app.playing { 0 } else { app.time });
        // The playhead it plays from (or stopped at), not the key's 0 while it plays.
        let time = app.time;
        let first = use_mut_ref(|| true);
        use_effect_with(key, move |(playing, _)| {
            if !std::mem::take(&mut *first.borrow_mut()) {
                let message = embed::play_state_reply(*playing, time);
                for o in &origins {
                    send(o, &message, embed_id.as_deref());
                }
            }
        });
    }

    // Tell the host the content's height whenever it changes, and fit the timeline to the
    // frame's width. A height is no secret, so it goes to any host: a page sizes its frame
    // without listing its origin.
    {
        let embed_id = (*parsed).as_ref().ok().and_then(|e| e.id.clone());
        let root = root.clone();
        let frame = frame.clone();
        let width = width.clone();
        use_effect_with((), move |_| {
            let last = Rc::new(RefCell::new(0u32));
            let observed = root.cast::<web_sys::Element>();
            let callback = Closure::<dyn FnMut(JsValue)>::new(move |_entries: JsValue| {
                if let Some(el) = frame.cast::<web_sys::Element>() {
                    let w = el.client_width().max(0) as u32;
                    if w > 0 {
                        width.set(w);
                    }
                }
                if let Some(el) = root.cast::<web_sys::Element>() {
                    let h = el.scroll_height().max(0) as u32;
                    if h != *last.borrow() {
                        *last.borrow_mut() = h;
                        send(
                            "*",
                            &embed::reply("height", None, None, Some(h)),
                            embed_id.as_deref(),
                        );
                    }
                }
            });
            let observer = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()).ok();
            if let (Some(observer), Some(el)) = (&observer, observed) {
                observer.observe(&el);
            }
            move || {
                if let Some(o) = observer {
                    o.disconnect();
                }
                drop(callback);
            }
        });
    }

    // A host that speaks (a sizing script that arrived late asks `lockstep:get-height`; the
    // first message of any kind will do) hears the height at once: the embed's own height
    // messages went out before that script listened, and a frame must not stay at its first
    // size for good. Any host may ask, as any host is told.
    {
        let embed_id = embed::id_of(&p.query);
        let root = root.clone();
        use_effect_with((), move |_| {
            let heard = std::cell::Cell::new(false);
            let listener = EventListener::new(&gloo::utils::window(), "message", move |event| {
                let Some(event) = event.dyn_ref::<web_sys::MessageEvent>() else {
                    return;
                };
                let parent = gloo::utils::window().parent().ok().flatten();
                let from_host = match (event.source(), parent) {
                    (Some(source), Some(parent)) => JsValue::from(source) == JsValue::from(parent),
                    _ => false,
                };
                if !from_host {
                    return;
                }
                let data = event.data();
                let field = |name: &str| js_sys::Reflect::get(&data, &name.into()).ok();
                let asks = field("type")
                    .and_then(|t| t.as_string())
                    .is_some_and(|t| t == "lockstep:get-height");
                if !asks && heard.replace(true) {
                    return;
                }
                heard.set(true);
                let id = field("id")
                    .and_then(|v| v.as_f64())
                    .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v <= 9.0e15)
                    .map(|v| v as u64)
                    .filter(|_| asks);
                if let Some(el) = root.cast::<web_sys::Element>() {
                    let h = el.scroll_height().max(0) as u32;
                    send(
                        "*",
                        &embed::reply("height", None, id, Some(h)),
                        embed_id.as_deref(),
                    );
                }
            });
            move || drop(listener)
        });
    }

    // A broken address shows its error, and says so to the host, which would otherwise wait
    // for a ready that never comes.
    {
        let failed = (*parsed).as_ref().err().map(|e| e.0.clone());
        let query = p.query.to_string();
        use_effect_with(failed.clone(), move |_| {
            if let Some(reason) = failed {
                let message = embed::error_reply(&reason);
                let origins = embed::origins_of(&query);
                let embed_id = embed::id_of(&query);
                if origins.is_empty() {
                    send("*", &message, embed_id.as_deref());
                }
                for o in &origins {
                    send(o, &message, embed_id.as_deref());
                }
                send(
                    "*",
                    &embed::reply("height", None, None, Some(240)),
                    embed_id.as_deref(),
                );
                if let Some(html) = gloo::utils::document().document_element() {
                    let _ = html.set_attribute("data-embed-error", "true");
                }
            }
        });
    }

    // Playback.
    super::playback::use_ticks(app.dispatcher(), app.playing);

    let dispatch = app.dispatcher();
    let shared = app_rc(&app);
    let controls: Option<Rc<Vec<Control>>> = (*parsed)
        .as_ref()
        .ok()
        .filter(|e| !e.controls.is_empty())
        .map(|e| Rc::new(e.controls.clone()));
    let source = {
        let app = app_rc(&app);
        use_memo(Rc::as_ptr(&app.outcome) as usize, move |_| {
            crate::ui::share::source_of_with(app.codec, &app.source, &app.scenario)
        })
    };
    let link = app.link_from((*source).clone());
    let needs = link.source.packed_text().map(str::to_string);
    let full: Option<String> = match &needs {
        None => Some(link_at(&link, "")),
        Some(text) => known(&packs.borrow(), text).map(|packed| link_at(&link, &packed)),
    };
    {
        // A scenario not packed yet (a toggle changed it) is packed now, and the view drawn
        // again with its link; the cache keeps the last few.
        let packs = Rc::clone(&packs);
        let redraw = redraw.clone();
        let missing = needs.filter(|_| full.is_none());
        use_effect_with(missing, move |missing| {
            if let Some(text) = missing.clone() {
                wasm_bindgen_futures::spawn_local(async move {
                    if let Some(packed) = packing::packed(text.clone()).await {
                        keep(&mut packs.borrow_mut(), text, packed);
                    }
                    redraw.force_update();
                });
            }
        });
    }
    if let Err(e) = &*parsed {
        return html! {
            <main id="embed" class="embed" ref={root}>
                <h1 class="embed-title">{ "Lockstep" }</h1>
                <p id="embed-error" class="notice" role="alert">
                    { format!("This embedded run cannot be shown: {}.", e.0.trim_end_matches('.')) }
                </p>
                <p class="open-full">
                    <a id="open-full" href={format!("{}{}", share::app_url(), embed::COURSE_FRAGMENT)} target="_blank" rel="noopener">{ "Open the Lockstep course" }</a>
                </p>
            </main>
        };
    }
    let w = (*width).max(320);
    let broken = app.outcome.verdict.exclusion == crate::monitor::Exclusion::Broken
        || app.outcome.verdict.lost_updates > 0;
    html! {
        <main id="embed" class="embed" ref={root}>
            <h1 class="embed-title">{ &app.scenario.name }</h1>
            if let Some(caption) = (*parsed).as_ref().ok().and_then(|e| e.caption.clone()) {
                <p id="embed-caption" class="embed-caption">{ caption }</p>
            }
            if let Some(notice) = &app.notice {
                <p id="notice" class="notice" role="alert">{ notice }</p>
            }
            if let Some(note) = &app.link_note {
                <p id="link-note" class="hint link-note">{ note }</p>
            }
            // A narrow frame says the verdict in one line, with the whole sentence on demand.
            if w < NARROW_PX {
                <details id="embed-headline-short" class={classes!("headline", "short", if broken { "broken" } else { "holds" })}>
                    <summary>
                        <span aria-hidden="true">{ if broken { "✗ " } else { "✓ " } }</span>
                        { embed::short_headline(&app.outcome.verdict) }
                    </summary>
                    <p id="embed-headline">{ &app.outcome.headline }</p>
                </details>
            } else {
                <p id="embed-headline" class={classes!("headline", if broken { "broken" } else { "holds" })}>
                    <span aria-hidden="true">{ if broken { "✗ " } else { "✓ " } }</span>
                    { &app.outcome.headline }
                </p>
            }
            <section class="stage picture" aria-label="Timeline of the run">
                <div class="timeline-frame" ref={frame}>
                    <div class="timeline-box">
                        <Timeline id="timeline" title="Timeline of the run"
                            layout={Rc::clone(&app.outcome.layout)} window={app.window} width={w}
                            diff={None::<Rc<crate::ui::compare::Diff>>} divergence={None::<u64>} selected={app.selected}
                            selected_at={None::<(u64, usize)>} pinned={app.pinned}
                            dispatch={dispatch.clone()} />
                        <div class="playhead" aria-hidden="true"
                            style={timeline::playhead_style(app.time, app.window, timeline::frame_of(&app.outcome.layout, w), w)}></div>
                    </div>
                </div>
                <panels::Details app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
                <Playback app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
            </section>
            if let Some(allowed) = controls {
                <Controls app={Rc::clone(&shared)} dispatch={dispatch.clone()} allowed={Some(allowed)} />
            }
            <p class="open-full">
                if let Some(full) = full {
                    <a id="open-full" href={full} target="_blank" rel="noopener">{ "Open in the full app" }</a>
                }
            </p>
        </main>
    }
}
