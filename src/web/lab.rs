//! The lab panel: "how often does it break?" as a sweep over many seeds, run in a worker of its
//! own (`src/bin/lab.rs`, loaded only when a sweep starts), so the page never waits on the
//! engine. The page draws the plot on a canvas with plotters (the same drawing as the command
//! line's SVG, `crate::plot`), with the same numbers in a table beside it. A row or a point
//! lists the seeds in which exclusion broke; each opens that run. Results are kept per
//! scenario and parameters, so asking again answers at once. The same worker explores every
//! interleaving for the "Is it safe?" panel.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use plotters::prelude::IntoDrawingArea;
use yew::prelude::*;

use super::Dispatch;
use crate::plot;
use crate::sweep::Param;
use crate::ui::lab::{
    self, LabReply, LabRequest, Search, SearchAction, SweepAction, SweepPanel, SweepState, Swept,
};
use crate::ui::{self, Action};

/// How many finished sweeps the page remembers.
const CACHE_MAX: usize = 16;

/// The worker's side: works each request posted to it through [`lab::work`], posting every
/// reply as JSON.
pub fn start_worker() {
    super::worker::serve_worker(|text, post| {
        let post = |reply: LabReply| post(&serde_json::to_string(&reply).unwrap_or_default());
        match serde_json::from_str::<LabRequest>(text) {
            Ok(request) => lab::work(&request, post),
            Err(e) => post(LabReply::Failed { why: e.to_string() }),
        }
    });
}

thread_local! {
    /// Finished sweeps by (request as JSON), oldest first.
    static CACHE: RefCell<VecDeque<(String, Rc<Swept>)>> = const { RefCell::new(VecDeque::new()) };
    /// Finished explorations' answers by (request as JSON), oldest first.
    static SEARCHES: RefCell<VecDeque<(String, LabReply)>> = const { RefCell::new(VecDeque::new()) };
}

/// Draws a sweep on the panel's canvas.
fn draw(canvas: &web_sys::HtmlCanvasElement, swept: &Swept) -> Result<(), String> {
    let backend = plotters_canvas::CanvasBackend::with_canvas_object(canvas.clone())
        .ok_or("the canvas cannot be drawn on")?;
    plot::draw(
        &backend.into_drawing_area(),
        &swept.title,
        swept.param,
        &swept.points,
    )
}

/// A running sweep: its worker, ended by [`Running::cancel`] or when it answers.
pub struct Running {
    worker: web_sys::Worker,
}

impl Running {
    pub fn cancel(&self) {
        self.worker.terminate();
    }
}

/// Starts a worker for one request; `on_reply` hears every reply. The worker ends with its
/// last reply (a result or a failure), or when [`Running::cancel`] is called.
fn spawn(request: String, on_reply: Callback<LabReply>) -> Result<Running, String> {
    let on_error = on_reply.clone();
    let worker = super::worker::ask_worker(
        "./lab_loader.js",
        request,
        move |worker, data| {
            let reply = serde_json::from_str::<LabReply>(&data)
                .unwrap_or_else(|e| LabReply::Failed { why: e.to_string() });
            if !matches!(
                reply,
                LabReply::Progress { .. } | LabReply::Exploring { .. }
            ) {
                worker.terminate();
            }
            on_reply.emit(reply);
        },
        move |worker| {
            worker.terminate();
            on_error.emit(LabReply::Failed {
                why: "the lab's worker stopped with an error".into(),
            });
        },
    )?;
    Ok(Running { worker })
}

/// Starts a sweep in a new worker (or answers from the cache); `progress` hears each report
/// and `done` the result. `Ok(None)` means the cache answered.
fn start(
    request: LabRequest,
    title: String,
    progress: Callback<(u64, u64)>,
    done: Callback<Result<Rc<Swept>, String>>,
) -> Result<Option<Running>, String> {
    let key = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    if let Some(hit) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| Rc::clone(v))
    }) {
        done.emit(Ok(hit));
        return Ok(None);
    }
    let on_reply = {
        let key = key.clone();
        Callback::from(move |reply: LabReply| match reply {
            LabReply::Progress { done: d, total } => progress.emit((d, total)),
            LabReply::Swept { param, points } => {
                let swept = Rc::new(Swept {
                    param,
                    points,
                    title: title.clone(),
                });
                CACHE.with(|c| {
                    let mut c = c.borrow_mut();
                    if c.len() == CACHE_MAX {
                        c.pop_front();
                    }
                    c.push_back((key.clone(), Rc::clone(&swept)));
                });
                done.emit(Ok(swept));
            }
            LabReply::Failed { why } => done.emit(Err(why)),
            other => done.emit(Err(format!("an unexpected answer: {other:?}"))),
        })
    };
    spawn(key, on_reply).map(Some)
}

impl Reducible for SweepPanel {
    type Action = SweepAction;

    fn reduce(self: Rc<Self>, action: SweepAction) -> Rc<Self> {
        Rc::new(SweepPanel::reduce(self.as_ref(), action))
    }
}

impl Reducible for Search {
    type Action = SearchAction;

    fn reduce(self: Rc<Self>, action: SearchAction) -> Rc<Self> {
        Rc::new(Search::reduce(self.as_ref(), action))
    }
}

#[derive(Properties)]
pub struct LabProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
}

impl PartialEq for LabProps {
    fn eq(&self, o: &Self) -> bool {
        self.app.scenario == o.app.scenario && self.dispatch == o.dispatch
    }
}

#[function_component(LabPanel)]
pub fn lab_panel(p: &LabProps) -> Html {
    let s = &p.app.scenario;
    let panel = use_reducer(SweepPanel::default);
    let form = panel.form(s);
    let running: Rc<RefCell<Option<Running>>> = use_mut_ref(|| None);
    let canvas = use_node_ref();
    // Draw the plot whenever a result is shown.
    {
        let canvas = canvas.clone();
        let shown = match &panel.state {
            SweepState::Done(s) => Some(Rc::clone(s)),
            _ => None,
        };
        use_effect_with(shown.as_ref().map(|s| Rc::as_ptr(s) as usize), move |_| {
            if let (Some(swept), Some(el)) = (shown, canvas.cast::<web_sys::HtmlCanvasElement>()) {
                if let Err(e) = draw(&el, &swept) {
                    gloo::console::error!(format!("the plot could not be drawn: {e}"));
                }
                let _ = el.set_attribute("data-drawn", "true");
            }
        });
    }

    let on_run = {
        let dispatch = panel.dispatcher();
        let running = Rc::clone(&running);
        let (form_now, scenario) = (form.clone(), s.clone());
        let title = format!(
            "{}: {} seeds per point",
            s.name,
            form.seeds.clone().unwrap_or_default()
        );
        Callback::from(move |_: MouseEvent| {
            let Some(request) = form_now.request(&scenario) else {
                return;
            };
            let total = match &request {
                LabRequest::Sweep { values, seeds, .. } => seeds * values.len() as u64,
                LabRequest::Explore { .. } => 1,
            };
            dispatch.dispatch(SweepAction::Started { total });
            let progress = {
                let dispatch = dispatch.clone();
                Callback::from(move |(done, total)| {
                    dispatch.dispatch(SweepAction::Progress { done, total })
                })
            };
            let done = {
                let dispatch = dispatch.clone();
                let running = Rc::clone(&running);
                Callback::from(move |r: Result<Rc<Swept>, String>| {
                    running.borrow_mut().take();
                    // When the answer came, for the browser tests: the worker ran until then.
                    mark_answer();
                    dispatch.dispatch(SweepAction::Finished(r));
                })
            };
            match start(request, title.clone(), progress, done) {
                Ok(r) => *running.borrow_mut() = r,
                Err(e) => dispatch.dispatch(SweepAction::Finished(Err(e))),
            }
        })
    };
    let on_cancel = {
        let dispatch = panel.dispatcher();
        let running = Rc::clone(&running);
        Callback::from(move |_: MouseEvent| {
            if let Some(r) = running.borrow_mut().take() {
                r.cancel();
            }
            dispatch.dispatch(SweepAction::Cancelled);
        })
    };

    let open_seed = |value: u64, seed: u64, param: Param| {
        let dispatch = p.dispatch.clone();
        let base = p.app.scenario.clone();
        Callback::from(move |_: MouseEvent| {
            let mut scenario = param.apply(&base, value);
            scenario.seed = seed;
            dispatch.dispatch(Action::Show {
                scenario: Box::new(scenario),
                notice: format!(
                    "This is seed {seed} of the sweep, with {} = {}: a run in which exclusion broke.",
                    param.name(),
                    param.label(value)
                ),
            });
        })
    };

    let results = match &panel.state {
        SweepState::Idle => html! {},
        SweepState::Running { done, total } => html! {
            <div class="lab-progress">
                <label for="sweep-progress">{ format!("Running: {done} of {total} runs") }</label>
                <progress id="sweep-progress" max={total.to_string()} value={done.to_string()}></progress>
                <button id="sweep-cancel" type="button" onclick={on_cancel}>{ "Cancel" }</button>
            </div>
        },
        SweepState::Failed(why) => html! { <p id="sweep-status" role="status">{ why }</p> },
        SweepState::Done(swept) => {
            let on_plot = {
                let dispatch = panel.dispatcher();
                Callback::from(move |e: MouseEvent| {
                    let img: web_sys::HtmlElement = e.target_unchecked_into();
                    let scale = f64::from(plot::SIZE.0) / f64::from(img.client_width().max(1));
                    let x = f64::from(e.offset_x()) * scale;
                    let (a, b) = plot::AXIS_X_PX;
                    let fraction = (x - f64::from(a)) / f64::from(b - a);
                    dispatch.dispatch(SweepAction::PickAt(fraction));
                })
            };
            let chosen = panel
                .picked
                .and_then(|i| swept.points.get(i).map(|p| (i, p)));
            html! {
                <div class="lab-result">
                    <p id="sweep-status" role="status">{ format!("Done: {} values.", swept.points.len()) }</p>
                    <div class="lab-figure">
                        <canvas id="sweep-plot" ref={canvas.clone()} width={plot::SIZE.0.to_string()} height={plot::SIZE.1.to_string()}
                            role="img"
                            aria-label={format!("Fraction of runs with exclusion broken against {}, with its 95% band; the table beside has the same numbers.", swept.param.axis())}
                            onclick={on_plot}></canvas>
                        <table id="sweep-table">
                            <caption>{ "Each point: runs, how many broke, and per run the means" }</caption>
                            <thead><tr>
                                <th scope="col">{ swept.param.name() }</th><th scope="col">{ "broken" }</th><th scope="col">{ "rate (95%)" }</th>
                                <th scope="col">{ "lost updates" }</th><th scope="col">{ "idle ms" }</th><th scope="col">{ "unavailable ms" }</th>
                            </tr></thead>
                            <tbody>
                            { for swept.points.iter().enumerate().map(|(i, pt)| {
                                let dispatch = panel.dispatcher();
                                html! {
                                    <tr class={classes!(chosen.is_some_and(|(k, _)| k == i).then_some("picked"))}>
                                        <th scope="row"><button type="button" class="link" onclick={move |_| dispatch.dispatch(SweepAction::Pick(Some(i)))}>{ &pt.label }</button></th>
                                        <td>{ format!("{}/{}", pt.broken_runs, pt.runs) }</td>
                                        <td>{ format!("{:.2} ({:.2}–{:.2})", pt.broken_rate, pt.broken_low, pt.broken_high) }</td>
                                        <td>{ format!("{:.2}", pt.mean_lost_updates) }</td>
                                        <td>{ format!("{:.0}", pt.mean_idle_ms) }</td>
                                        <td>{ format!("{:.0}", pt.mean_unavailable_ms) }</td>
                                    </tr>
                                }
                            }) }
                            </tbody>
                        </table>
                    </div>
                    if let Some((_, pt)) = chosen {
                        <div id="sweep-broken">
                            <p>{ format!("{} = {}: exclusion broke in {} of {} runs.", swept.param.name(), pt.label, pt.broken_runs, pt.runs) }</p>
                            <ul class="seeds">
                                { for pt.broken_seeds.iter().map(|seed| html! {
                                    <li><button type="button" class="seed" onclick={open_seed(pt.value, *seed, swept.param)}>{ format!("seed {seed}") }</button></li>
                                }) }
                            </ul>
                        </div>
                    }
                    <button id="sweep-png" type="button" onclick={save_png(canvas.clone(), swept.param)}>{ "Save the plot as PNG" }</button>
                </div>
            }
        }
    };

    let busy = matches!(panel.state, SweepState::Running { .. });
    let param_now = form.param;
    html! {
        <details id="lab" class="panel lab">
            <summary><h2>{ super::extras::Extra::Lab.title() }</h2></summary>
            <p class="hint">{ "Runs the scenario over many seeds at each value of one parameter, in the background, and plots how often exclusion broke, with a 95% interval." }</p>
            <div class="lab-form">
                <label for="sweep-param">{ "Vary" }</label>
                <select id="sweep-param" onchange={ let dispatch = panel.dispatcher(); move |e: Event| {
                    let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
                    if let Some(x) = Param::from_name(&sel.value()) { dispatch.dispatch(SweepAction::Param(x)); }
                } }>
                    { for form.offered.iter().map(|x| html! { <option value={x.name()} selected={*x == param_now}>{ x.axis() }</option> }) }
                </select>
                <label for="sweep-values">{ "Values (comma-separated)" }</label>
                <input id="sweep-values" type="text" value={form.values_text.clone()}
                    oninput={ let dispatch = panel.dispatcher(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); dispatch.dispatch(SweepAction::Values(i.value())); } } />
                <label for="sweep-seeds">{ "Seeds per value" }</label>
                <input id="sweep-seeds" type="number" min="1" max={lab::PAGE_SEEDS_MAX.to_string()} value={panel.seeds.clone()}
                    oninput={ let dispatch = panel.dispatcher(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); dispatch.dispatch(SweepAction::Seeds(i.value())); } } />
                <button id="sweep-run" type="button" disabled={busy || !form.can_run()} onclick={on_run}>{ "Run the sweep" }</button>
            </div>
            if let Err(e) = &form.values { <p class="error" role="alert">{ format!("Values: {e}") }</p> }
            if let Err(e) = &form.seeds { <p class="error" role="alert">{ e.clone() }</p> }
            { results }
        </details>
    }
}

/// Records on `<html data-lab-answer>` the page's clock when the worker's answer arrived.
fn mark_answer() {
    let now = gloo::utils::window().performance().map_or(0.0, |p| p.now());
    if let Some(html) = gloo::utils::document().document_element() {
        let _ = html.set_attribute("data-lab-answer", &format!("{now:.1}"));
    }
}

/// Saves the plot as PNG, from its canvas.
fn save_png(canvas: NodeRef, param: Param) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        let Some(el) = canvas.cast::<web_sys::HtmlCanvasElement>() else {
            return;
        };
        let bytes = el
            .to_data_url_with_type("image/png")
            .ok()
            .and_then(|url| url.split_once(',').map(|(_, b)| b.to_string()))
            .and_then(|b| {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.decode(b).ok()
            });
        if let Some(png) = bytes {
            let _ =
                super::share::download(&format!("sweep-{}.png", param.name()), "image/png", &png);
        }
    })
}

/// "Is it safe?": every interleaving of the scenario, in the lab's worker, with progress and
/// Cancel; a counterexample opens on the timeline. From a run that broke, the same search
/// answers "the shortest way this breaks" and opens it at once.
#[function_component(ExplorePanel)]
pub fn explore_panel(p: &LabProps) -> Html {
    let search = use_reducer(|| Search::Idle);
    let running: Rc<RefCell<Option<Running>>> = use_mut_ref(|| None);
    let broken_now = p.app.outcome.verdict.exclusion == crate::monitor::Exclusion::Broken;

    let start = |open: bool| {
        let dispatch_search = search.dispatcher();
        let running = Rc::clone(&running);
        let scenario = p.app.scenario.to_toml_string();
        // A path found is replayed against the scenario it was searched in.
        let current = p.app.scenario.clone();
        let dispatch = p.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            let request = serde_json::to_string(&LabRequest::Explore {
                scenario: scenario.clone(),
            })
            .unwrap_or_default();
            // The same scenario explored before answers at once.
            let known = SEARCHES.with(|c| {
                c.borrow()
                    .iter()
                    .find(|(k, _)| *k == request)
                    .map(|(_, v)| v.clone())
            });
            dispatch_search.dispatch(SearchAction::Started);
            if let Some(answer) = known {
                if let (
                    true,
                    LabReply::Counterexample {
                        property, steps, ..
                    },
                ) = (open, &answer)
                {
                    dispatch.dispatch(crate::ui::lab::counterexample(&current, property, steps));
                }
                mark_answer();
                dispatch_search.dispatch(SearchAction::Reply(answer));
                return;
            }
            let on_reply = {
                let scenario = current.clone();
                let dispatch_search = dispatch_search.clone();
                let running = Rc::clone(&running);
                let dispatch = dispatch.clone();
                let key = request.clone();
                Callback::from(move |reply: LabReply| {
                    let last = !matches!(reply, LabReply::Exploring { .. });
                    if last {
                        mark_answer();
                        running.borrow_mut().take();
                    }
                    if let (
                        true,
                        LabReply::Counterexample {
                            property, steps, ..
                        },
                    ) = (open, &reply)
                    {
                        dispatch
                            .dispatch(crate::ui::lab::counterexample(&scenario, property, steps));
                    }
                    if matches!(
                        reply,
                        LabReply::Holds { .. } | LabReply::Counterexample { .. }
                    ) {
                        SEARCHES.with(|c| {
                            let mut c = c.borrow_mut();
                            if c.len() == CACHE_MAX {
                                c.pop_front();
                            }
                            c.push_back((key.clone(), reply.clone()));
                        });
                    }
                    dispatch_search.dispatch(SearchAction::Reply(reply));
                })
            };
            match spawn(request, on_reply) {
                Ok(r) => *running.borrow_mut() = Some(r),
                Err(why) => dispatch_search.dispatch(SearchAction::Reply(LabReply::Failed { why })),
            }
        })
    };
    let on_cancel = {
        let dispatch = search.dispatcher();
        let running = Rc::clone(&running);
        Callback::from(move |_: MouseEvent| {
            if let Some(r) = running.borrow_mut().take() {
                r.cancel();
            }
            dispatch.dispatch(SearchAction::Cancelled);
        })
    };
    let budgets = lab::page_budgets();
    let body = match &*search {
        Search::Idle => html! {},
        Search::Running { states, depth } => html! {
            <div class="lab-progress">
                <label for="explore-progress">{ format!("Exploring: {states} states, depth {depth}") }</label>
                <progress id="explore-progress" max={budgets.states.to_string()} value={states.to_string()}></progress>
                <button id="explore-cancel" type="button" onclick={on_cancel}>{ "Cancel" }</button>
            </div>
        },
        Search::Holds {
            states,
            depth,
            complete,
        } => html! {
            <p id="explore-status" role="status" class="holds">{
                if *complete {
                    format!("Safe: exclusion, no lost update and no wait cycle hold in all {states} states there are (the deepest {depth} steps from the start).")
                } else {
                    format!("No violation in {states} states up to depth {depth}; the search stopped at its budget, so deeper paths were not checked (lockstep explore goes further).")
                }
            }</p>
        },
        Search::Broken {
            property,
            broken,
            steps,
            states,
        } => {
            let dispatch = p.dispatch.clone();
            let (property, steps) = (property.clone(), steps.clone());
            let current = p.app.scenario.clone();
            let n = steps.len();
            html! {
                <div>
                    <p id="explore-status" role="status" class="broken">{
                        format!("Not safe: {property} breaks in {n} steps, the fewest possible ({states} states searched): {broken}.")
                    }</p>
                    <button id="explore-open" type="button" onclick={move |_| dispatch.dispatch(crate::ui::lab::counterexample(&current, &property, &steps))}>
                        { "Show it on the timeline" }
                    </button>
                </div>
            }
        }
        Search::Failed(why) => {
            html! { <p id="explore-status" role="status" class="explore-failed">{ why }</p> }
        }
    };
    let busy = matches!(*search, Search::Running { .. });
    html! {
        <details id="explore" class="panel lab">
            <summary><h2>{ super::extras::Extra::Explore.title() }</h2></summary>
            <p class="hint">{ format!(
                "Explores every order in which this scenario's steps could happen, up to {} states, with time abstract: any step may come next, so a lease may expire at any moment. It answers for all orders, or gives the shortest one that breaks; it cannot say how likely that is (a sweep can).",
                budgets.states
            ) }</p>
            <div class="buttons">
                <button id="explore-run" type="button" disabled={busy} onclick={start(false)}>{ "Explore every interleaving" }</button>
                if broken_now {
                    <button id="explore-shortest" type="button" disabled={busy} onclick={start(true)}>{ "Find the shortest way this breaks" }</button>
                }
            </div>
            { body }
        </details>
    }
}
