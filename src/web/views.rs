//! The views the roots draw: the sandbox ([`Sandbox`], with every control, panel and the
//! editor), a lesson at a place ([`LessonPage`], whose drawing is `course.rs`'s) and the
//! embed page. Kept apart from the roots, which only choose a view for the address.

use std::rc::Rc;
use std::sync::Arc;

use gloo::events::EventListener;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::playback::{use_playback_keys, use_ticks, Neighbours};
use super::route::{focus_view_title, go, use_title};
use super::storage::{initial_state, open_in_sandbox, save, storage};
use super::{
    codec_or, controls, course, embed, extras, packing, panels, reader, timeline, CompareView,
    Controls, Defs, Editor, EventTable, Legend, OverlapDetails, OwnOrderView, Picker, Playback,
    Timeline, VerdictView,
};
use crate::ui::course::{place_id, Course, LessonAction, Progress, Shelf, ShelfAction, NAME_KEY};
use crate::ui::route::Route;
use crate::ui::{self, Action};

/// The narrowest the timeline is drawn; a narrower frame scrolls it sideways.
const TIMELINE_WIDTH_MIN: u32 = 560;

/// The embed view for an iframe: the run alone, without the page's header. A new address
/// (a host that changes the frame's hash) is a new view, keyed by it, so nothing of the last
/// address's run or scenario lingers.
pub(super) fn embed_page(query: &str) -> Html {
    html! {
        <>
        <Defs />
        <embed::EmbedView key={query.to_string()} query={AttrValue::from(query.to_string())} />
        </>
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

#[derive(Properties, PartialEq)]
pub(super) struct LessonPageProps {
    pub(super) course: Arc<Course>,
    pub(super) index: usize,
    pub(super) place: ui::course::Place,
    pub(super) progress: Rc<Progress>,
    /// Where what the learner does is recorded.
    pub(super) shelf: UseReducerDispatcher<Shelf>,
}

/// A lesson at a place, with its own run: opening another place of the lesson (a link, Back)
/// reopens it on that place's scenario.
#[function_component(LessonPage)]
pub(super) fn lesson_page(p: &LessonPageProps) -> Html {
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
pub(super) fn app_rc(app: &UseReducerHandle<ui::App>) -> Rc<ui::App> {
    Rc::new((**app).clone())
}
