//! The browser shell: Yew function components that draw [`crate::ui::App`] and turn input into
//! [`Action`]s. Nothing here decides what happened in a run; it only shows the engine's answer.

mod controls;
mod course;
mod embed;
mod panels;
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
use crate::ui::course::{place_id, Course, LessonAction, Progress, PROGRESS_KEY};
use crate::ui::route::{Route, Section};
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
    // The embed view keeps nothing and reads nothing: it opens its own run from its address.
    if matches!(current_route(), Route::Embed(_)) {
        return ui::App::open(ui::DEFAULT_SOURCE);
    }
    let Some(storage) = storage() else {
        return ui::App::open(ui::DEFAULT_SOURCE);
    };
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

/// The address of the shipped lessons in their compact form, next to the page.
const LESSONS_URL: &str = "lessons.json";

/// The route the address bar names now.
fn current_route() -> Route {
    Route::parse(&gloo::utils::window().location().hash().unwrap_or_default())
}

/// Goes to a route: the browser records it in its history, so Back returns here.
fn go(route: &Route) {
    let _ = gloo::utils::window().location().set_hash(&route.to_hash());
}

/// Fetches a text file next to the page.
async fn fetch_text(url: &str) -> Result<String, String> {
    let why = |e: wasm_bindgen::JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let response = wasm_bindgen_futures::JsFuture::from(gloo::utils::window().fetch_with_str(url))
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
fn set_title(words: &str) {
    gloo::utils::document().set_title(&format!("{words} · Lockstep"));
}

/// The whole page: the header with the views' navigation, and the view the address names.
#[function_component(Root)]
pub fn root() -> Html {
    let route = use_state(current_route);
    let section = route.section();
    let sandbox = use_reducer(initial_state);
    // The lesson view runs its own app, so that the sandbox keeps the learner's own scenario
    // while they follow a lesson. It starts on the small blank scenario until a lesson opens.
    let lesson = use_reducer(|| ui::App::open(ui::BLANK));
    let course = use_state(|| CourseState::Idle);
    let progress = use_state(|| Rc::new(read_progress()));
    let width = use_state(|| 960u32);
    let timeline_box = use_node_ref();
    // Where "n" and "p" go in the lesson shown: read by the key listener, which outlives
    // renders.
    let neighbours: Rc<RefCell<(Option<Route>, Option<Route>)>> = use_mut_ref(|| (None, None));

    // Follow the address bar: links, Back and Forward all change the fragment.
    {
        let route = route.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| {
                route.set(current_route());
            });
            move || drop(listener)
        });
    }

    // The lessons are fetched the first time a view needs them, never for the sandbox alone.
    {
        let course = course.clone();
        use_effect_with(section, move |section| {
            let needs = matches!(section, Section::Lessons | Section::Facilitator);
            if needs && *course == CourseState::Idle {
                course.set(CourseState::Loading);
                yew::platform::spawn_local(async move {
                    let loaded = fetch_text(LESSONS_URL)
                        .await
                        .and_then(|json| wire::read_course(&json));
                    course.set(match loaded {
                        Ok(lessons) => {
                            CourseState::Ready(Arc::new(Course::new(lessons, Vec::new())))
                        }
                        Err(e) => CourseState::Failed(e),
                    });
                });
            }
        });
    }

    // Open the lesson the address names once the course is there.
    {
        let dispatch = lesson.dispatcher();
        use_effect_with(
            ((*route).clone(), (*course).clone()),
            move |(route, course)| {
                if let (Route::Lesson { lesson, place }, CourseState::Ready(c)) = (route, course) {
                    if let Some((index, place)) = c.find(lesson, place.as_deref()) {
                        dispatch.dispatch(Action::Lesson(LessonAction::Open {
                            course: Arc::clone(c),
                            index,
                            place,
                        }));
                    }
                }
            },
        );
    }

    // Record what the learner has seen, met and solved.
    {
        let progress = progress.clone();
        let run = lesson.lesson.clone();
        let key = run.as_ref().map(|r| {
            (
                r.lesson().id.clone(),
                r.id().to_string(),
                r.gate,
                r.attempt.as_ref().and_then(|a| a.code.clone()),
            )
        });
        use_effect_with(key, move |_| {
            if let Some(run) = run {
                let next = progress.record(&run);
                if next != **progress {
                    if let Some(storage) = storage() {
                        let _ = storage.set_item(PROGRESS_KEY, &next.to_json());
                    }
                    progress.set(Rc::new(next));
                }
            }
        });
    }

    // Open a permalink's run in the sandbox whenever the address names one.
    {
        let dispatch = sandbox.dispatcher();
        use_effect_with((*route).clone(), move |route| {
            if let Route::Run(query) = route {
                match ui::share::Link::from_query(query) {
                    Ok(link) => dispatch.dispatch(Action::OpenLink(link)),
                    Err(e) => dispatch.dispatch(Action::LinkFailed(e.0)),
                }
            }
        });
    }

    // Save the sandbox's source and text whenever they change, even when the text is invalid;
    // a run opened from a link is not saved until the user changes it, so a link never
    // overwrites the user's own work.
    {
        let app = sandbox.clone();
        let embedded = section == Section::Embed;
        use_effect_with(
            (app.source.clone(), app.text.clone(), app.linked),
            move |_| {
                if app.linked || embedded {
                    return;
                }
                save(&app.saved());
            },
        );
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

    // The view's heading takes focus when the view or the step changes (not on the first
    // load), so a keyboard or screen reader user starts reading at the new content.
    {
        let place = lesson
            .lesson
            .as_ref()
            .map(|r| (r.lesson().id.clone(), r.id().to_string()));
        let first = use_mut_ref(|| true);
        use_effect_with((section, place, (*route).clone()), move |_| {
            if std::mem::take(&mut *first.borrow_mut()) {
                return;
            }
            if let Some(el) = gloo::utils::document()
                .get_element_by_id("view-title")
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = el.focus();
            }
        });
    }

    // The timeline fills its box; measure it now, whenever the window changes size, and when
    // the legend beside it comes or goes or the view changes.
    {
        let width = width.clone();
        let timeline_box = timeline_box.clone();
        let has_run = lesson.lesson.is_some();
        use_effect_with((sandbox.legend, section, has_run), move |_| {
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

    // Shortcuts for playback, anywhere on the page except inside a form control; in a lesson,
    // n and p go to the next and previous step.
    {
        let dispatch = if section == Section::Sandbox {
            sandbox.dispatcher()
        } else {
            lesson.dispatcher()
        };
        let neighbours = Rc::clone(&neighbours);
        let on_lesson = matches!(*route, Route::Lesson { .. });
        use_effect_with((section, on_lesson), move |&(section, on_lesson)| {
            let listener = (section != Section::Facilitator).then(|| {
                EventListener::new_with_options(
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
                        if on_lesson {
                            let target = match event.key().as_str() {
                                "n" => neighbours.borrow().1.clone(),
                                "p" => neighbours.borrow().0.clone(),
                                _ => None,
                            };
                            if let Some(r) = target {
                                event.prevent_default();
                                go(&r);
                                return;
                            }
                        }
                        if section == Section::Lessons && !on_lesson {
                            return;
                        }
                        playback_key(event, &dispatch);
                    },
                )
            });
            move || drop(listener)
        });
    }

    // While playing, advance the playhead by the real time that passed.
    {
        let dispatch = sandbox.dispatcher();
        use_effect_with(sandbox.playing, move |playing| {
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
    {
        let dispatch = lesson.dispatcher();
        use_effect_with(lesson.playing, move |playing| {
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

    if let Route::Embed(query) = &*route {
        return html! {
            <>
            <Defs />
            <embed::EmbedView query={AttrValue::from(query.clone())} />
            </>
        };
    }

    let view = match &*route {
        Route::Embed(_) => Html::default(),
        Route::Sandbox | Route::Run(_) => {
            set_title("Sandbox");
            sandbox_view(&sandbox, timeline_width, &timeline_box)
        }
        Route::Course => {
            set_title("Lessons");
            html! { <course::CourseView course={(*course).clone()} progress={Rc::clone(&progress)} /> }
        }
        Route::Facilitator => {
            set_title("For facilitators");
            html! { <course::FacilitatorView course={(*course).clone()} /> }
        }
        Route::NotFound(raw) => {
            set_title("Not found");
            course::not_found(raw)
        }
        Route::Lesson { lesson: id, place } => {
            let found = match &*course {
                CourseState::Ready(c) => Some(c.find(id, place.as_deref()).is_some()),
                _ => None,
            };
            let shown = lesson
                .lesson
                .as_ref()
                .filter(|r| r.lesson().id == *id && place.as_ref().is_none_or(|p| r.id() == p));
            match (found, shown) {
                (Some(false), _) => {
                    set_title("Not found");
                    course::not_found(&route.to_hash()[1..])
                }
                (_, Some(run)) => {
                    let l = run.lesson();
                    let title = match (run.step(), run.exercise()) {
                        (Some(s), _) => s.title.clone(),
                        (_, Some(e)) => e.title.clone(),
                        _ => String::new(),
                    };
                    set_title(&format!("{title} · {}", l.title));
                    *neighbours.borrow_mut() = (
                        run.previous().map(|x| Route::place(&l.id, place_id(l, x))),
                        run.can_go_on()
                            .then(|| run.next().map(|x| Route::place(&l.id, place_id(l, x))))
                            .flatten(),
                    );
                    let on_sandbox = {
                        let sandbox = sandbox.dispatcher();
                        let app = app_rc(&lesson);
                        Callback::from(move |()| {
                            open_in_sandbox(&sandbox, &app);
                            go(&Route::Sandbox);
                        })
                    };
                    html! {
                        <course::LessonView app={app_rc(&lesson)} dispatch={lesson.dispatcher()}
                            width={timeline_width} timeline_box={timeline_box.clone()}
                            on_sandbox={on_sandbox} progress={Rc::clone(&progress)} />
                    }
                }
                _ => match &*course {
                    CourseState::Failed(why) => html! {
                        <main id="main"><p id="course-error" class="errors has-errors" role="alert">
                            { format!("The lessons could not be loaded: {why}.") }</p></main>
                    },
                    _ => {
                        html! { <main id="main"><p class="loading" role="status">{ "Opening the lesson…" }</p></main> }
                    }
                },
            }
        }
    };

    html! {
        <>
        <Defs />
        <header class="top">
            <h1>{ "Lockstep" }</h1>
            <p class="tagline">{ "Two lock services, each correct, do not make one lock." }</p>
            { course::nav(section) }
        </header>
        { view }
        </>
    }
}

/// Moves the lesson's current scenario into the sandbox: the shipped file it started from
/// (so Reset goes back there), with the learner's scenario as the editor's text.
fn open_in_sandbox(sandbox: &Dispatch, app: &ui::App) {
    let file = app.lesson.as_ref().map(|r| match (r.step(), r.exercise()) {
        (Some(s), _) => s.setup.file.clone(),
        (_, Some(e)) => e.setup.file.clone(),
        _ => String::new(),
    });
    if let Some(file) = file.filter(|f| ui::source_text(f).is_some()) {
        sandbox.dispatch(Action::Pick(file));
    }
    sandbox.dispatch(Action::Edit(app.text.clone()));
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
            <share::SharePanel app={Rc::clone(&shared)} dispatch={dispatch.clone()} />
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
