//! The browser shell: Yew function components that draw [`crate::ui::App`] and turn input into
//! [`Action`]s. Nothing here decides what happened in a run; it only shows the engine's answer.

mod checker;
mod controls;
mod course;
mod display;
mod embed;
mod extras;
mod lab;
mod narration;
mod packing;
mod panels;
mod print;
mod reader;
mod share;
mod timeline;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::timers::callback::Interval;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::lesson::wire;
use crate::ui::course::{
    place_id, Course, LessonAction, OpenedFiles, Progress, Shelf, ShelfAction, OPENED_KEY,
    PROGRESS_KEY,
};
use crate::ui::route::{Bundle, Route, Section};
use crate::ui::{self, Action, STORAGE_KEY, STORAGE_SET_ASIDE_KEY};
use course::CourseState;

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

/// Where `n` and `p` go in the lesson shown (previous, next): written at each render, read
/// by the key listener, which outlives renders.
type Neighbours = Rc<RefCell<(Option<Route>, Option<Route>)>>;

/// The narrowest the timeline is drawn; a narrower frame scrolls it sideways.
const TIMELINE_WIDTH_MIN: u32 = 560;

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

/// The codec the bundle set, or the view's own. A view names its own default, so that a
/// bundle links only the readers its views use.
fn codec_or(own: ui::Codec) -> ui::Codec {
    CODEC.with(std::cell::Cell::get).unwrap_or(own)
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

thread_local! {
    /// How the apps read scenarios, when the bundle says: the studio's (the whole app) reads
    /// everything ([`ui::Codec::FULL`]). Otherwise the sandbox reads its editor's TOML in a worker and
    /// leaves links whose scenario is TOML to the studio's bundle ([`ui::Codec::SANDBOX`]),
    /// and the embed view reads only JSON.
    static CODEC: std::cell::Cell<Option<ui::Codec>> = const { std::cell::Cell::new(None) };

    /// The sandbox's bundle, while it owns the page.
    static SHELL: RefCell<Option<yew::AppHandle<SandboxShell>>> = const { RefCell::new(None) };
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
async fn load_other_bundle(name: &'static str) -> Result<(), String> {
    wasm_bindgen_futures::JsFuture::from(load_bundle(name))
        .await
        .map(|_| ())
        .map_err(|e| e.as_string().unwrap_or_else(|| format!("{e:?}")))
}

/// The sandbox's own bundle: the sandbox, and a hand-over to the lesson view's or the studio's
/// bundle for any other view.
#[function_component(SandboxShell)]
pub fn sandbox_shell() -> Html {
    let route = use_route();
    let failed = use_state(|| None::<String>);
    // The sandbox and a permalink's run are this bundle's (the embed view reloads the page for
    // its own); any other view is handed to the bundle the page would open it with
    // (`Route::bundle`, from `site.json`).
    let wants = match &*route {
        Route::Embed(_) => None,
        other => Some(other.bundle())
            .filter(|b| *b != Bundle::App)
            .map(Bundle::name),
    };
    let wants_course = wants.is_some();
    {
        let failed = failed.clone();
        use_effect_with(wants, move |wants| {
            if let Some(name) = *wants {
                yew::platform::spawn_local(async move {
                    if let Err(e) = load_other_bundle(name).await {
                        failed.set(Some(e));
                    }
                });
            }
        });
    }
    use_effect_with((), |_| mark_ready());
    if matches!(*route, Route::Embed(_)) {
        return reload();
    }
    // What the other bundle is being loaded for: a link's run, the lessons, or the
    // facilitator's view.
    let (loading, failed_what) = match &*route {
        Route::Run(_) => (
            "Loading the full app, which opens this link…",
            "The full app, which opens this link, could not be loaded",
        ),
        Route::Facilitator => (
            "Loading the facilitator's view…",
            "The facilitator's view could not be loaded",
        ),
        _ => ("Loading the lessons…", "The lessons could not be loaded"),
    };
    html! {
        <>
        <Defs />
        { header(route.section()) }
        if wants_course {
            <main id="main">
                if let Some(why) = &*failed {
                    <p id="course-error" class="errors has-errors" role="alert">
                        { format!("{failed_what} ({why}). The sandbox works without it: ") }
                        <a href="#/sandbox">{ "open the sandbox" }</a>{ "." }
                    </p>
                } else {
                    <p class="loading" role="status">{ loading }</p>
                }
            </main>
        } else {
            <Sandbox route={(*route).clone()} />
        }
        </>
    }
}

/// The embed view's bundle: the embed view for the address's query. Any other address is
/// another bundle's, so the page loads again and `index.html` picks that one.
#[function_component(EmbedShell)]
fn embed_shell() -> Html {
    let route = use_route();
    use_effect_with((), |_| mark_ready());
    match &*route {
        Route::Embed(query) if !ui::share::carries_toml(query) => embed_page(query),
        // An address that reads as no view at all (too long, or misspelt) says so here rather
        // than loading the page again, which would pick this bundle again.
        Route::NotFound(_) => html! {
            <main id="main" class="embed">
                <p class="errors has-errors" role="alert">{ "This address names no view of Lockstep." }</p>
            </main>
        },
        _ => reload(),
    }
}

/// Loads the page again, for an address whose view another bundle draws: `index.html` then
/// picks that bundle. The embed view is an iframe's page, opened fresh, so the sandbox meets
/// its address only when someone types it.
fn reload() -> Html {
    let _ = gloo::utils::window().location().reload();
    html! { <p class="loading" role="status">{ "Loading…" }</p> }
}

/// The embed view for an iframe: the run alone, without the page's header. A new address
/// (a host that changes the frame's hash) is a new view, keyed by it, so nothing of the last
/// address's run or scenario lingers.
fn embed_page(query: &str) -> Html {
    html! {
        <>
        <Defs />
        <embed::EmbedView key={query.to_string()} query={AttrValue::from(query.to_string())} />
        </>
    }
}

/// The page's header: the name, the line that says what it is about, and the views.
fn header(section: Section) -> Html {
    html! {
        <header class="top">
            <h1>{ "Lockstep" }</h1>
            <p class="tagline">{ ui::preview::TAGLINE }</p>
            <nav class="views" aria-label="Views">
                <ul>
                    { for [Section::Lessons, Section::Sandbox, Section::Facilitator]
                        .into_iter()
                        .zip(ui::preview::VIEWS)
                        .map(|(s, (href, id, label))| nav_item(section, s, href, id, label)) }
                </ul>
            </nav>
            <display::DisplayControls />
        </header>
    }
}

fn nav_item(
    current: Section,
    s: Section,
    href: &'static str,
    id: &'static str,
    label: &'static str,
) -> Html {
    html! {
        <li><a id={id} href={href} aria-current={(current == s).then_some("page")}>{ label }</a></li>
    }
}

/// Tells tests and benchmarks that the page can be used.
fn mark_ready() {
    if let Some(html) = gloo::utils::document().document_element() {
        let _ = html.set_attribute("data-ready", "true");
    }
}

/// Reads the saved state. A value that cannot be read is copied aside so that the user's text
/// is never lost, and the app opens the default scenario with a notice.
fn initial_state(codec: ui::Codec) -> ui::App {
    // The embed view keeps nothing and reads nothing: it opens its own run from its address.
    if matches!(current_route(), Route::Embed(_)) {
        return ui::App::open_with(codec, ui::DEFAULT_SOURCE);
    }
    let Some(storage) = storage() else {
        return ui::App::open_with(codec, ui::DEFAULT_SOURCE);
    };
    let stored = storage.get_item(STORAGE_KEY).ok().flatten();
    let app = ui::App::restore_with(codec, stored.as_deref());
    if app.notice.is_some() {
        if let Some(raw) = &stored {
            let _ = storage.set_item(STORAGE_SET_ASIDE_KEY, raw);
        }
    }
    app
}

/// Stores the source and the text, so that a reload (or a crash) restores them.
fn save(saved: &ui::Saved) {
    if let (Ok(json), Some(storage)) = (serde_json::to_string(saved), storage()) {
        let _ = storage.set_item(STORAGE_KEY, &json);
    }
}

/// The page's local storage, when the browser lets the page have one: a sandboxed frame (the
/// embed view in a host's iframe) gets none, and must not fail for it.
fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
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

/// The address of a file of the shipped lessons (`course/NAME`), beside the page.
pub(crate) fn course_url(name: &str) -> String {
    format!("{}/{name}", wire::COURSE_DIR)
}

/// The shipped lessons: the course's index, then a lesson step's own lesson, which shows at
/// once, then the other lessons' files, all asked for together.
async fn fetch_course(first: Option<String>, dispatch: UseReducerDispatcher<Shelf>) {
    let loaded = fetch_shipped(first, &dispatch).await;
    dispatch.dispatch(ShelfAction::Fetched(loaded));
}

async fn fetch_shipped(
    first: Option<String>,
    dispatch: &UseReducerDispatcher<Shelf>,
) -> Result<Vec<wire::Loaded>, String> {
    let index = fetch_text(&course_url("index.json")).await?;
    let ids = wire::read_index(&index)?;
    let mut files = vec![("index.json".to_string(), index)];
    // A lesson that is not a shipped one (opened, or from the folder) has no file here.
    if let Some(id) = first.filter(|id| ids.contains(id)) {
        let name = format!("{id}.json");
        let text = fetch_text(&course_url(&name)).await?;
        if let Ok(lesson) = wire::read_lesson_file(&text) {
            dispatch.dispatch(ShelfAction::FetchedLesson(Box::new(lesson)));
        }
        files.push((name, text));
    }
    // Every request starts before the first answer is awaited.
    let asked: Vec<(String, js_sys::Promise)> = ids
        .iter()
        .map(|id| format!("{id}.json"))
        .filter(|name| files.iter().all(|(n, _)| n != name))
        .map(|name| {
            let request = gloo::utils::window().fetch_with_str(&course_url(&name));
            (name, request)
        })
        .collect();
    for (name, request) in asked {
        let text = response_text(&course_url(&name), request).await?;
        files.push((name, text));
    }
    wire::read_course_files(&files)
}

use crate::ui::course::NAME_KEY;

/// The route the address bar names now.
fn current_route() -> Route {
    Route::parse(&gloo::utils::window().location().hash().unwrap_or_default())
}

/// The route the address names, followed as links, Back and Forward change the fragment.
#[hook]
fn use_route() -> UseStateHandle<Route> {
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
fn go(route: &Route) {
    let _ = gloo::utils::window().location().set_hash(&route.to_hash());
}

/// The lessons of the folder served beside the site (`lessons/index.json` and the files it
/// lists), each checked like a picked file, and the problems of those that could not be read.
/// A site without the folder has no index, which is no problem.
async fn read_folder() -> (Vec<wire::Loaded>, Vec<String>) {
    let index = match fetch_lesson(ui::reach::FOLDER_INDEX).await {
        Ok(json) => json,
        Err(ui::reach::Fetch::Status(404)) => return (Vec::new(), Vec::new()),
        Err(e) => {
            let why = ui::reach::fetch_failure(ui::reach::FOLDER_INDEX, &e);
            return (Vec::new(), vec![why]);
        }
    };
    let names = match ui::reach::read_folder_index(&index) {
        Ok(names) => names,
        Err(why) => return (Vec::new(), vec![why]),
    };
    let (mut lessons, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        let url = format!("lessons/{name}");
        let text = match fetch_lesson(&url).await {
            Ok(text) => text,
            Err(e) => {
                problems.push(ui::reach::fetch_failure(&url, &e));
                continue;
            }
        };
        match checker::check(text.clone()).await.into_opened(&text) {
            Ok((loaded, _)) => lessons.push(loaded),
            Err(errors) => problems.push(format!(
                "{url}: {}",
                errors
                    .iter()
                    .map(|e| match e.line {
                        0 => e.message.clone(),
                        line => format!("line {line}: {}", e.message),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    (lessons, problems)
}

/// Opens the lesson file a link names: checked against the site's allowed addresses, fetched
/// with its size bounded, and checked like a picked file, unless it is the copy this browser
/// already keeps from that address.
async fn open_by_link(raw: String, opened: OpenedFiles, dispatch: UseReducerDispatcher<Shelf>) {
    let window = gloo::utils::window();
    let document = gloo::utils::document();
    let base = document
        .base_uri()
        .ok()
        .flatten()
        .unwrap_or_else(|| window.location().href().unwrap_or_default());
    let Ok(url) = web_sys::Url::new_with_base(&raw, &base) else {
        dispatch.dispatch(ShelfAction::Unavailable(format!(
            "\"{raw}\" is not the address of a lesson file"
        )));
        return;
    };
    let url = url.href();
    let csp = document
        .query_selector("meta[http-equiv='Content-Security-Policy']")
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"));
    let page_origin = window.location().origin().unwrap_or_default();
    if let Err(why) = ui::reach::may_fetch(&url, &page_origin, csp.as_deref()) {
        dispatch.dispatch(ShelfAction::Unavailable(why));
        return;
    }
    dispatch.dispatch(ShelfAction::FetchingFile(url.clone()));
    let kept = opened.from_source(&url);
    let text = match fetch_lesson(&url).await {
        Ok(text) => text,
        Err(e) => {
            dispatch.dispatch(match kept {
                Some(_) => ShelfAction::Kept(url),
                None => ShelfAction::Unavailable(ui::reach::fetch_failure(&url, &e)),
            });
            return;
        }
    };
    if kept.is_some_and(|f| f.text == text) {
        dispatch.dispatch(ShelfAction::Kept(url));
        return;
    }
    dispatch.dispatch(ShelfAction::Checking);
    let reply = checker::check(text.clone()).await;
    dispatch.dispatch(ShelfAction::from_reply(reply, &text, Some(url)));
}

/// Fetches a lesson file or a folder's index, no larger than a lesson may be, saying how it
/// failed: offline, the server's status, too large, or the browser's refusal.
async fn fetch_lesson(url: &str) -> Result<String, ui::reach::Fetch> {
    use ui::reach::Fetch;
    let window = gloo::utils::window();
    let refused = |e: wasm_bindgen::JsValue| {
        if !gloo::utils::window().navigator().on_line() {
            return Fetch::Offline;
        }
        let words = js_sys::Reflect::get(&e, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| e.as_string())
            .unwrap_or_else(|| "the request failed".to_string());
        Fetch::Refused(words)
    };
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(refused)?;
    let response: web_sys::Response = response.dyn_into().map_err(refused)?;
    if !response.ok() {
        return Err(Fetch::Status(response.status()));
    }
    let max = crate::lesson::LESSON_BYTES_MAX;
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(n) = declared.filter(|&n| n > max) {
        return Err(Fetch::TooLarge(n));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(refused)?)
        .await
        .map_err(refused)?
        .as_string()
        .unwrap_or_default();
    if text.len() > max {
        return Err(Fetch::TooLarge(text.len()));
    }
    Ok(text)
}

/// Fetches a text file next to the page.
async fn fetch_text(url: &str) -> Result<String, String> {
    response_text(url, gloo::utils::window().fetch_with_str(url)).await
}

/// The text of a request already sent to `url`.
async fn response_text(url: &str, request: js_sys::Promise) -> Result<String, String> {
    let why = |e: wasm_bindgen::JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let response = wasm_bindgen_futures::JsFuture::from(request)
        .await
        .map_err(why)?;
    let response: web_sys::Response = response.dyn_into().map_err(why)?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(why)?)
        .await
        .map_err(why)?;
    text.as_string().ok_or_else(|| format!("{url} is not text"))
}

fn read_progress() -> Progress {
    Progress::read(
        storage()
            .and_then(|s| s.get_item(PROGRESS_KEY).ok().flatten())
            .as_deref(),
    )
}

/// The title of the browser tab for a view.
/// Sets the document's title after the view is drawn (never while it renders), when it
/// changes; `None` leaves it to a view further down.
#[hook]
fn use_title(words: Option<String>) {
    use_effect_with(words, |words| {
        if let Some(words) = words {
            gloo::utils::document().set_title(&format!("{words} · Lockstep"));
        }
    });
}

/// The title of a view the roots draw themselves; the sandbox and a lesson's place name their
/// own.
fn title_of(route: &Route, lessons: &CourseState) -> Option<String> {
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

/// The sandbox: the simulator with every control, as the page was before lessons existed.
/// It keeps its own state (saved in local storage), so it comes back as the user left it.
#[derive(Properties, PartialEq)]
pub struct SandboxProps {
    /// The sandbox's route: the sandbox itself, or a permalink's run to open in it.
    pub route: Route,
}

#[function_component(Sandbox)]
pub fn sandbox(p: &SandboxProps) -> Html {
    use_title(Some("Sandbox".into()));
    // When the sandbox's bundle handed the page over to open one of its heavier panels, the
    // run goes on where it stopped, and the address's link (already open there) is not
    // opened again.
    let handed = use_memo((), |_| extras::take());
    let app = use_reducer({
        let handed = Rc::clone(&handed);
        move || {
            let codec = codec_or(ui::Codec::SANDBOX);
            match &*handed {
                Some(h) => ui::App::resume_with(codec, &h.left),
                None => initial_state(codec),
            }
        }
    });
    let dispatch = app.dispatcher();
    let width = use_state(|| 960u32);
    let timeline_box = use_node_ref();
    {
        let extra = handed.as_ref().as_ref().map(|h| h.extra);
        use_effect_with((), move |_| {
            if let Some(extra) = extra {
                extras::unfold(extra);
            }
        });
    }

    // Open a permalink's run in the sandbox whenever the address names one. A link whose
    // scenario is packed is inflated by the browser first (`packing`), a moment; only the
    // latest address is opened, whatever order the inflations end in.
    {
        let dispatch = dispatch.clone();
        let skip = use_mut_ref(|| handed.is_some());
        let latest = use_mut_ref(|| 0u64);
        use_effect_with(p.route.clone(), move |route| {
            if std::mem::take(&mut *skip.borrow_mut()) {
                return;
            }
            *latest.borrow_mut() += 1;
            let Route::Run(query) = route else { return };
            let open = move |link: Result<ui::share::Link, ui::share::LinkError>| match link {
                Ok(link) => dispatch.dispatch(Action::OpenLink(link)),
                Err(e) => dispatch.dispatch(Action::LinkFailed(e.0)),
            };
            if ui::share::packed_in(query).is_empty() {
                let none = packing::Unpacked::new();
                open(ui::share::Link::from_query_unpacked(query, &|p| {
                    packing::read(&none, p)
                }));
                return;
            }
            let (query, this) = (query.clone(), *latest.borrow());
            yew::platform::spawn_local(async move {
                let unpacked = packing::unpack_all(&query).await;
                if *latest.borrow() == this {
                    open(ui::share::Link::from_query_unpacked(&query, &|p| {
                        packing::read(&unpacked, p)
                    }));
                }
            });
        });
    }

    // A text the bundle does not read itself goes to the editor's reader, whose answer comes
    // back as an action.
    {
        let dispatch = dispatch.clone();
        let codec = app.codec;
        use_effect_with((app.reading, app.text.clone()), move |(reading, text)| {
            if *reading {
                reader::read(text.clone(), dispatch, codec);
            }
        });
    }

    // Save the source and the text whenever they change, even when the text is invalid, and
    // the run with them; a run opened from a link is not saved until the user changes it, so
    // a link never overwrites the user's own work.
    {
        let app = app.clone();
        use_effect_with(
            (
                app.source.clone(),
                app.text.clone(),
                app.valid_text.clone(),
                app.linked,
            ),
            move |_| {
                if !app.linked {
                    save(&app.saved());
                }
            },
        );
    }

    // A select shows what the user last picked, not what its `selected` attribute says, once
    // the user has touched it; after every render the attribute (the state in force) wins.
    use_effect(sync_selects);
    use_effect_with((), |_| {});
    use_measured_width(&width, &timeline_box, app.legend);
    use_playback_keys(dispatch.clone(), None);
    use_ticks(dispatch.clone(), app.playing);

    // Below this width the timeline keeps its size and scrolls sideways inside its frame, so
    // that lanes and labels stay readable on a phone.
    let timeline_width = (*width).max(TIMELINE_WIDTH_MIN);
    sandbox_view(&app, timeline_width, &timeline_box)
}

/// Measures the timeline's box now, whenever the window changes size, and when `key`
/// changes (the legend beside it, the view).
#[hook]
fn use_measured_width<K: PartialEq + Clone + 'static>(
    width: &UseStateHandle<u32>,
    timeline_box: &NodeRef,
    key: K,
) {
    let width = width.clone();
    let timeline_box = timeline_box.clone();
    use_effect_with(key, move |_| {
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

/// Shortcuts for playback anywhere on the page except inside a form control; in a lesson,
/// `n` and `p` go to the next and previous step (`neighbours`, read when the key is pressed).
#[hook]
fn use_playback_keys(dispatch: Dispatch, neighbours: Option<Neighbours>) {
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

/// Starts a module worker from a loader Trunk writes beside the page (`./NAME_loader.js`),
/// resolved against the document's base so the site may live under any path.
pub(crate) fn module_worker(loader: &str) -> Result<web_sys::Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let base = gloo::utils::document()
        .base_uri()
        .ok()
        .flatten()
        .unwrap_or_default();
    let url = web_sys::Url::new_with_base(loader, &base)
        .map(|u| u.href())
        .unwrap_or_else(|_| loader.to_string());
    web_sys::Worker::new_with_options(&url, &options).map_err(|e| format!("{e:?}"))
}

/// What a worker says once it can take a request.
const WORKER_READY: &str = "ready";

/// The worker's side of a page worker: answers each request posted to it with `answer`, which
/// may post any number of replies through the function it is given, then says it is ready.
pub(crate) fn serve_worker(mut answer: impl FnMut(&str, &dyn Fn(&str)) + 'static) {
    use wasm_bindgen::closure::Closure;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            let post = |reply: &str| {
                let _ = reply_to.post_message(&wasm_bindgen::JsValue::from_str(reply));
            };
            answer(&text, &post);
        });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = scope.post_message(&wasm_bindgen::JsValue::from_str(WORKER_READY));
}

/// The page's side: starts a worker from `loader`, posts `request` once it is ready, and hands
/// each reply's text to `on_reply` and a crash to `on_error` (each given the worker, to end
/// it). The handlers live as long as the worker.
pub(crate) fn ask_worker(
    loader: &str,
    request: String,
    mut on_reply: impl FnMut(&web_sys::Worker, String) + 'static,
    mut on_error: impl FnMut(&web_sys::Worker) + 'static,
) -> Result<web_sys::Worker, String> {
    use wasm_bindgen::closure::Closure;
    let worker = module_worker(loader)?;
    let onmessage = {
        let worker = worker.clone();
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data().as_string().unwrap_or_default();
            if data == WORKER_READY {
                let _ = worker.post_message(&wasm_bindgen::JsValue::from_str(&request));
            } else {
                on_reply(&worker, data);
            }
        })
    };
    let onerror = {
        let worker = worker.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| on_error(&worker))
    };
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onmessage.forget();
    onerror.forget();
    Ok(worker)
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

impl Reducible for Shelf {
    type Action = ShelfAction;

    fn reduce(self: Rc<Self>, action: ShelfAction) -> Rc<Self> {
        Rc::new(Shelf::reduce(self.as_ref(), action))
    }
}

/// The course in the page ([`Shelf`], a reducer in `ui`) and the callbacks that open and
/// remove lesson files. The whole app's root and the lesson view's own bundle both hold it.
struct CourseHandles {
    shelf: UseReducerHandle<Shelf>,
    /// The lesson file the address asks to open (`?open=`), if any.
    open: Option<String>,
    on_open: Callback<String>,
    on_remove: Callback<String>,
}

#[hook]
fn use_course(route: &Route) -> CourseHandles {
    let section = route.section();
    let shelf = use_reducer(|| {
        let stored = |key| storage().and_then(|s| s.get_item(key).ok().flatten());
        Shelf::new(
            OpenedFiles::read(stored(OPENED_KEY).as_deref()),
            read_progress(),
        )
    });

    // The lessons are fetched the first time a view needs them, never for the sandbox alone:
    // the shipped ones, and the folder of lessons served beside the site, if there is one.
    {
        let dispatch = shelf.dispatcher();
        let idle = shelf.lessons == CourseState::Idle;
        // A lesson step's own lesson, fetched ahead of the others.
        let first = match route {
            Route::Lesson { lesson, .. } if ui::route::is_id(lesson) => Some(lesson.clone()),
            _ => None,
        };
        use_effect_with(section, move |section| {
            let needs = matches!(section, Section::Lessons | Section::Facilitator);
            if needs && idle {
                dispatch.dispatch(ShelfAction::Fetching);
                dispatch.dispatch(ShelfAction::FolderLoading);
                yew::platform::spawn_local(fetch_course(first, dispatch.clone()));
                yew::platform::spawn_local(async move {
                    let (lessons, problems) = read_folder().await;
                    dispatch.dispatch(ShelfAction::FolderRead(lessons, problems));
                });
            }
        });
    }

    // A lesson by link (`?open=URL`): fetched, checked like a picked file and kept, or the copy
    // kept from the same address when the file is unchanged or the network is off. A link to
    // the course itself then goes on to the lesson; a link to a step stays on it.
    let open = ui::reach::open_param(&gloo::utils::window().location().hash().unwrap_or_default());
    {
        let dispatch = shelf.dispatcher();
        let opened = shelf.opened.clone();
        use_effect_with(open.clone(), move |open| {
            if let Some(raw) = open.clone() {
                yew::platform::spawn_local(open_by_link(raw, opened, dispatch));
            }
        });
    }
    {
        let to_lesson = match (route, &shelf.open_status) {
            (Route::Course, crate::ui::course::OpenStatus::Opened { id, .. }) if open.is_some() => {
                Some(id.clone())
            }
            _ => None,
        };
        use_effect_with(to_lesson, |to_lesson| {
            if let Some(id) = to_lesson {
                let hash = Route::Lesson {
                    lesson: id.clone(),
                    place: None,
                }
                .to_hash();
                // The link's address is replaced, so Back does not open the file again.
                let _ = gloo::utils::window().location().replace(&hash);
            }
        });
    }

    // What the learner opened and did is kept in the browser whenever it changes.
    use_effect_with(shelf.opened.clone(), |opened| {
        if let Some(s) = storage() {
            let _ = s.set_item(OPENED_KEY, &opened.to_json());
        }
    });
    use_effect_with(Rc::clone(&shelf.progress), |progress| {
        if let Some(s) = storage() {
            let _ = s.set_item(PROGRESS_KEY, &progress.to_json());
        }
    });

    // Opening a lesson file runs the engine on every claim, in the checker's worker: the
    // status says so until it answers.
    let on_open = {
        let dispatch = shelf.dispatcher();
        Callback::from(move |text: String| {
            dispatch.dispatch(ShelfAction::Checking);
            let dispatch = dispatch.clone();
            let file_text = text.clone();
            checker::check_in_worker(text, move |reply| {
                dispatch.dispatch(ShelfAction::from_reply(reply, &file_text, None));
            });
        })
    };

    // A file an earlier version of the page stored is checked again from its text, once, so
    // that a lesson the user opened survives an update of the page.
    {
        let dispatch = shelf.dispatcher();
        let stale = shelf.opened.stale();
        use_effect_with((), move |_| {
            for text in stale {
                let dispatch = dispatch.clone();
                let file_text = text.clone();
                checker::check_in_worker(text, move |reply| {
                    if let Ok((_, file)) = reply.into_opened(&file_text) {
                        dispatch.dispatch(ShelfAction::Rechecked(Box::new(file)));
                    }
                });
            }
        });
    }

    let on_remove = {
        let dispatch = shelf.dispatcher();
        Callback::from(move |id: String| dispatch.dispatch(ShelfAction::Removed(id)))
    };
    CourseHandles {
        shelf,
        open,
        on_open,
        on_remove,
    }
}

/// The view's heading takes focus when the view changes (not on the first load), so a keyboard
/// or screen reader user starts reading at the new content.
#[hook]
fn use_focus_on_view(route: &Route) {
    let first = use_mut_ref(|| true);
    use_effect_with(route.clone(), move |_| {
        if std::mem::take(&mut *first.borrow_mut()) {
            return;
        }
        focus_view_title();
    });
}

/// The course's views: the lessons, a lesson's place, the facilitator's view and an address
/// that names nothing. `None` for a view that is not the course's.
fn course_view(route: &Route, c: &CourseHandles) -> Option<Html> {
    Some(match route {
        Route::Course => {
            let shelf = &c.shelf;
            let opened: Vec<String> = shelf.opened.files.iter().map(|f| f.id.clone()).collect();
            html! {
                <course::CourseView course={shelf.lessons.clone()} progress={Rc::clone(&shelf.progress)}
                    notice={course::reach_status(c.open.is_some(), shelf)}>
                    <course::LessonFiles status={shelf.open_status.clone()} opened={opened}
                        on_open={c.on_open.clone()} on_remove={c.on_remove.clone()} />
                </course::CourseView>
            }
        }
        Route::NotFound(raw) => course::not_found(raw),
        Route::Lesson { lesson, place } => match &c.shelf.lessons {
            CourseState::Ready(course) => match course.find(lesson, place.as_deref()) {
                Some((index, place)) => html! {
                    <LessonPage course={Arc::clone(course)} index={index} place={place}
                        progress={Rc::clone(&c.shelf.progress)} shelf={c.shelf.dispatcher()} />
                },
                // A lesson this browser has, at a place it does not have: a wrong link.
                None if course.index(lesson).is_some() => course::not_found(&route.to_hash()[1..]),
                None if c.shelf.waiting() => html! {
                    <main id="main"><p class="loading" role="status">{ "Loading the lesson…" }</p></main>
                },
                None if c.shelf.missing.is_some() => {
                    course_error(c.shelf.missing.as_deref().unwrap_or_default())
                }
                None => course::not_loaded(lesson, c.open.is_some(), &c.shelf.open_status),
            },
            CourseState::Failed(why) => course_error(why),
            _ => {
                html! { <main id="main"><p class="loading" role="status">{ "Loading the lessons…" }</p></main> }
            }
        },
        _ => return None,
    })
}

/// Why the lessons are not shown: they could not be loaded.
fn course_error(why: &str) -> Html {
    html! {
        <main id="main"><p id="course-error" class="errors has-errors" role="alert">
            { format!("The lessons could not be loaded: {why}.") }</p></main>
    }
}

/// The lesson view's own bundle (`src/bin/course.rs`): the lessons and their places. Any other
/// view is another bundle's, so the page loads again and `index.html` picks that one.
#[function_component(LessonRoot)]
fn lesson_root() -> Html {
    let route = use_route();
    let section = route.section();
    let handles = use_course(&route);
    use_effect_with((), |_| mark_ready());
    use_focus_on_view(&route);
    use_title(title_of(&route, &handles.shelf.lessons));
    match course_view(&route, &handles) {
        Some(view) => html! {
            <>
            <Defs />
            { header(section) }
            { view }
            </>
        },
        None => reload(),
    }
}

/// The whole app (the studio's bundle): the header with the views' navigation, and the view
/// the address names: the sandbox with every panel, the facilitator's view, the lessons, and
/// links whose scenario is TOML.
#[function_component(Root)]
pub fn root() -> Html {
    // The whole app reads every scenario form itself, wherever it is mounted.
    CODEC.with(|c| c.set(Some(ui::Codec::FULL)));
    let route = use_route();
    let section = route.section();
    let handles = use_course(&route);
    use_effect_with((), |_| mark_ready());
    use_focus_on_view(&route);
    use_title(title_of(&route, &handles.shelf.lessons));

    // An embed address whose scenario is TOML is this bundle's to draw (the embed's own bundle
    // reads only JSON); any other embed address is the embed bundle's.
    if let Route::Embed(query) = &*route {
        return if ui::share::carries_toml(query) {
            embed_page(query)
        } else {
            reload()
        };
    }
    let view = match &*route {
        Route::Sandbox | Route::Run(_) => html! { <Sandbox route={(*route).clone()} /> },
        Route::Facilitator => {
            html! { <course::FacilitatorView course={handles.shelf.lessons.clone()} /> }
        }
        other => course_view(other, &handles).unwrap_or_default(),
    };

    html! {
        <>
        <Defs />
        { header(section) }
        { view }
        </>
    }
}

fn focus_view_title() {
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

#[derive(Properties, PartialEq)]
struct LessonPageProps {
    course: Arc<Course>,
    index: usize,
    place: ui::course::Place,
    progress: Rc<Progress>,
    /// Where what the learner does is recorded.
    shelf: UseReducerDispatcher<Shelf>,
}

/// A lesson at a place, with its own run: opening another place of the lesson (a link, Back)
/// reopens it on that place's scenario.
#[function_component(LessonPage)]
fn lesson_page(p: &LessonPageProps) -> Html {
    let lesson = use_reducer({
        let (course, index, place) = (Arc::clone(&p.course), p.index, p.place);
        let progress = Rc::clone(&p.progress);
        move || {
            let resume = course
                .lessons
                .get(index)
                .map(|l| progress.resume_edits(&l.lesson, place))
                .unwrap_or_default();
            let mut app = ui::App::at_lesson(course.clone(), index, place);
            for e in resume {
                app = app.reduce(Action::Toggle(e));
            }
            // The hints the learner had revealed come back too.
            let hints = course
                .lessons
                .get(index)
                .map_or(0, |l| progress.resume_hints(&l.lesson, place));
            for _ in 0..hints {
                app = app.reduce(Action::Lesson(LessonAction::Hint));
            }
            // The name typed once, for every completion code from now on.
            let name = storage()
                .and_then(|s| s.get_item(NAME_KEY).ok().flatten())
                .unwrap_or_default();
            app.reduce(Action::Lesson(LessonAction::Name(name)))
        }
    });
    // The name is kept in the browser whenever the learner changes it.
    {
        let name = lesson.lesson.as_ref().map(|r| r.name.clone());
        use_effect_with(name, |name| {
            if let (Some(name), Some(s)) = (name, storage()) {
                let _ = s.set_item(NAME_KEY, name);
            }
        });
    }
    let width = use_state(|| 960u32);
    let timeline_box = use_node_ref();
    let neighbours: Neighbours = use_mut_ref(|| (None, None));

    // A new place of the lesson (the component stays while the address moves between steps).
    {
        let dispatch = lesson.dispatcher();
        let shown = lesson.lesson.as_ref().map(|r| (r.index, r.place));
        let progress = Rc::clone(&p.progress);
        use_effect_with(
            (Arc::clone(&p.course), p.index, p.place),
            move |(course, index, place)| {
                if shown != Some((*index, *place)) {
                    let resume = course
                        .lessons
                        .get(*index)
                        .map(|l| progress.resume_edits(&l.lesson, *place))
                        .unwrap_or_default();
                    let hints = course
                        .lessons
                        .get(*index)
                        .map_or(0, |l| progress.resume_hints(&l.lesson, *place));
                    dispatch.dispatch(Action::Lesson(LessonAction::Open {
                        course: Arc::clone(course),
                        index: *index,
                        place: *place,
                        resume,
                    }));
                    for _ in 0..hints {
                        dispatch.dispatch(Action::Lesson(LessonAction::Hint));
                    }
                }
            },
        );
    }

    // Record what the learner has seen, met and solved.
    {
        let shelf = p.shelf.clone();
        let run = lesson.lesson.clone();
        let key = run.as_ref().map(|r| {
            (
                r.lesson().id.clone(),
                r.id().to_string(),
                r.gate,
                r.attempt.as_ref().and_then(|a| a.code.clone()),
                // An exercise's controls and hints are kept as they change.
                r.edits.clone(),
                r.hints,
                // A prediction is counted once it has been judged.
                r.judged.is_some(),
            )
        });
        use_effect_with(key, move |_| {
            if let Some(run) = run {
                shelf.dispatch(ShelfAction::Record(run));
            }
        });
    }

    // A new step moves focus to its title, like a new view.
    {
        let place = (p.index, p.place);
        let first = use_mut_ref(|| true);
        use_effect_with(place, move |_| {
            if std::mem::take(&mut *first.borrow_mut()) {
                return;
            }
            focus_view_title();
        });
    }

    use_effect(sync_selects);
    use_measured_width(&width, &timeline_box, ());
    use_playback_keys(lesson.dispatcher(), Some(Rc::clone(&neighbours)));
    use_ticks(lesson.dispatcher(), lesson.playing);
    use_title(lesson.lesson.as_ref().map(|run| {
        let place = match (run.step(), run.exercise()) {
            (Some(s), _) => s.title.as_str(),
            (_, Some(e)) => e.title.as_str(),
            _ => "",
        };
        // A tab's title holds no markup: the titles' code shows as its bare words.
        let plain = |t: &str| crate::lesson::narration::plain(&run.texts().rich, t);
        format!("{} · {}", plain(place), plain(&run.lesson().title))
    }));

    let Some(run) = lesson.lesson.clone() else {
        return html! {};
    };
    let l = run.lesson();
    *neighbours.borrow_mut() = (
        run.previous().map(|x| Route::place(&l.id, place_id(l, x))),
        run.can_go_on()
            .then(|| run.next().map(|x| Route::place(&l.id, place_id(l, x))))
            .flatten(),
    );
    let on_sandbox = {
        let app = app_rc(&lesson);
        Callback::from(move |()| {
            open_in_sandbox(&app);
            go(&Route::Sandbox);
        })
    };
    html! {
        <course::LessonView app={app_rc(&lesson)} dispatch={lesson.dispatcher()}
            width={(*width).max(TIMELINE_WIDTH_MIN)} timeline_box={timeline_box.clone()}
            on_sandbox={on_sandbox} progress={Rc::clone(&p.progress)} />
    }
}

/// Puts the lesson's current scenario in the sandbox ([`ui::App::for_sandbox`]): the shipped
/// file it started from (so Reset goes back there), with the learner's run, whose text the
/// sandbox writes. The sandbox reads it from local storage when it opens, as after a reload.
fn open_in_sandbox(app: &ui::App) {
    save(&app.for_sandbox());
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

/// The sandbox: every control, the whole verdict, the run in detail and the editor.
fn sandbox_view(
    app: &UseReducerHandle<ui::App>,
    timeline_width: u32,
    timeline_box: &NodeRef,
) -> Html {
    let dispatch = app.dispatcher();
    let layout = &app.outcome.layout;
    let selected_at = app
        .selected
        .and_then(|i| app.outcome.events.get(i))
        .map(|e| (e.at, layout.index.of(&e.what)));
    let height = timeline::height_of(layout.lanes.len());
    let shared = app_rc(app);
    let diff = app
        .compare
        .as_ref()
        .and_then(|c| c.result.as_ref().ok())
        .map(|(_, d)| Rc::clone(d));

    html! {
        <>
        if let Some(notice) = &app.notice {
            <div id="notice" class="notice" role="alert">
                <p>{ notice }</p>
                <button type="button" onclick={ let d = dispatch.clone(); move |_| d.dispatch(Action::DismissNotice) }>{ "Dismiss" }</button>
            </div>
        }
        <main class="layout" id="main">
            if let Some(note) = &app.link_note {
                <p id="link-note" class="hint link-note">{ note }</p>
            }
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
                        <div class="timeline-box" ref={timeline_box.clone()}>
                            <Timeline id="timeline" title="Timeline of the run"
                                layout={Rc::clone(&app.outcome.layout)} window={app.window} width={timeline_width}
                                diff={diff} divergence={None::<u64>} selected={app.selected}
                                selected_at={selected_at} pinned={app.pinned}
                                dispatch={dispatch.clone()} />
                            <div class="playhead" aria-hidden="true"
                                style={timeline::playhead_style(app.time, app.window, timeline::frame_of(&app.outcome.layout, timeline_width), timeline_width)}></div>
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
            { extras::extras(&shared, &dispatch) }
            <Editor source={app.source.clone()} text={app.text.clone()} errors={app.errors.clone()} can_restore={app.replaced_text.is_some()} heavy={app.outcome.events.len() > 20_000} reading={app.reading} dispatch={dispatch.clone()} />
        </main>
        </>
    }
}

/// The current state as a shared value for props: cloning the handle's state is cheap because
/// the heavy parts (the run, the layout) are behind `Rc`s.
fn app_rc(app: &UseReducerHandle<ui::App>) -> Rc<ui::App> {
    Rc::new((**app).clone())
}
