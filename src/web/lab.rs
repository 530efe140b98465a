//! The lab panel: "how often does it break?" as a sweep over many seeds, run in a worker of its
//! own (`src/bin/lab.rs`, loaded only when a sweep starts), so the page never waits on the
//! engine. The worker draws the plot with plotters (as SVG: no plotting code in the page's
//! bundle) and the page shows it with the same numbers in a table beside it. A row or a point
//! lists the seeds in which exclusion broke; each opens that run. Results are kept per
//! scenario and parameters, so asking again answers at once.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use base64::Engine as _;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use yew::prelude::*;

use super::Dispatch;
use crate::plot;
use crate::sweep::{Param, SweepPoint};
use crate::ui::lab::{self, LabReply, LabRequest};
use crate::ui::{self, Action};

/// What the worker says once it can take a request.
const READY: &str = "ready";
/// How many finished sweeps the page remembers.
const CACHE_MAX: usize = 16;

/// The worker's side: works each request posted to it through [`lab::work`], posting every
/// reply as JSON.
pub fn start_worker() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            let post = |reply: LabReply| {
                let json = serde_json::to_string(&reply).unwrap_or_default();
                let _ = reply_to.post_message(&JsValue::from_str(&json));
            };
            match serde_json::from_str::<LabRequest>(&text) {
                Ok(request) => lab::work(&request, post),
                Err(e) => post(LabReply::Failed { why: e.to_string() }),
            }
        });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = scope.post_message(&JsValue::from_str(READY));
}

thread_local! {
    /// Finished sweeps by (request as JSON), oldest first.
    static CACHE: RefCell<VecDeque<(String, Rc<Swept>)>> = const { RefCell::new(VecDeque::new()) };
}

/// A finished sweep, as the panel shows it.
#[derive(Debug, PartialEq)]
pub struct Swept {
    pub param: Param,
    pub points: Vec<SweepPoint>,
    /// The plot as a `data:` URL of its SVG.
    pub plot: String,
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

/// Starts a sweep in a new worker; `progress` hears each report and `done` the result.
fn start(
    request: LabRequest,
    progress: Callback<(u64, u64)>,
    done: Callback<Result<Rc<Swept>, String>>,
) -> Result<Running, String> {
    let key = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    if let Some(hit) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| Rc::clone(v))
    }) {
        done.emit(Ok(hit));
        return Err(String::new());
    }
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let base = gloo::utils::document()
        .base_uri()
        .ok()
        .flatten()
        .unwrap_or_default();
    let url = web_sys::Url::new_with_base("./lab_loader.js", &base)
        .map(|u| u.href())
        .unwrap_or_else(|_| "./lab_loader.js".to_string());
    let worker = web_sys::Worker::new_with_options(&url, &options).map_err(|e| format!("{e:?}"))?;
    let onmessage = {
        let worker = worker.clone();
        let done = done.clone();
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data().as_string().unwrap_or_default();
            if data == READY {
                let _ = worker.post_message(&JsValue::from_str(&key));
                return;
            }
            match serde_json::from_str::<LabReply>(&data) {
                Ok(LabReply::Progress { done: d, total }) => progress.emit((d, total)),
                Ok(LabReply::Swept { param, points, svg }) => {
                    worker.terminate();
                    let plot = format!(
                        "data:image/svg+xml;base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(svg.as_bytes())
                    );
                    let swept = Rc::new(Swept {
                        param,
                        points,
                        plot,
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
                Ok(LabReply::Failed { why }) => {
                    worker.terminate();
                    done.emit(Err(why));
                }
                Err(e) => {
                    worker.terminate();
                    done.emit(Err(e.to_string()));
                }
            }
        })
    };
    let onerror = {
        let worker = worker.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            worker.terminate();
            done.emit(Err("the sweep's worker stopped with an error".into()));
        })
    };
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    // The handlers live as long as the worker, which ends when it answers or is cancelled.
    onmessage.forget();
    onerror.forget();
    Ok(Running { worker })
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

#[derive(Clone, PartialEq)]
enum State {
    Idle,
    Running { done: u64, total: u64 },
    Done(Rc<Swept>),
    Failed(String),
}

#[function_component(LabPanel)]
pub fn lab_panel(p: &LabProps) -> Html {
    let s = &p.app.scenario;
    let offered: Vec<Param> = Param::ALL
        .into_iter()
        .filter(|x| x.problem(s).is_none())
        .collect();
    let param = use_state(|| offered.first().copied().unwrap_or(Param::Fencing));
    let param_now = if offered.contains(&param) {
        *param
    } else {
        offered.first().copied().unwrap_or(Param::Fencing)
    };
    let values = use_state(String::new);
    let seeds = use_state(|| "50".to_string());
    let state = use_state(|| State::Idle);
    let running: Rc<RefCell<Option<Running>>> = use_mut_ref(|| None);
    let picked = use_state(|| None::<usize>);

    let values_text = if values.is_empty() {
        lab::suggested_values(param_now, s)
            .iter()
            .map(|v| param_now.label(*v))
            .collect::<Vec<_>>()
            .join(",")
    } else {
        (*values).clone()
    };
    let parsed: Result<Vec<u64>, String> = values_text
        .split(',')
        .filter(|v| !v.trim().is_empty())
        .map(|v| param_now.parse_value(v))
        .collect();
    let seed_count: Result<u64, String> = seeds
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("\"{}\" is not a whole number of seeds", seeds.trim()))
        .and_then(|n| {
            if (1..=2000).contains(&n) {
                Ok(n)
            } else {
                Err("seeds: 1 to 2000".into())
            }
        });

    let on_run = {
        let state = state.clone();
        let running = Rc::clone(&running);
        let picked = picked.clone();
        let scenario = s.to_toml_string();
        let parsed = parsed.clone();
        let seed_count = seed_count.clone();
        Callback::from(move |_: MouseEvent| {
            let (Ok(values), Ok(seeds)) = (parsed.clone(), seed_count.clone()) else {
                return;
            };
            picked.set(None);
            let request = LabRequest::Sweep {
                scenario: scenario.clone(),
                param: param_now,
                values,
                seeds,
            };
            let total = seeds * request_len(&request);
            state.set(State::Running { done: 0, total });
            let progress = {
                let state = state.clone();
                Callback::from(move |(done, total)| state.set(State::Running { done, total }))
            };
            let done = {
                let state = state.clone();
                let running = Rc::clone(&running);
                Callback::from(move |r: Result<Rc<Swept>, String>| {
                    running.borrow_mut().take();
                    state.set(match r {
                        Ok(s) => State::Done(s),
                        Err(e) => State::Failed(e),
                    });
                })
            };
            match start(request, progress, done) {
                Ok(r) => *running.borrow_mut() = Some(r),
                // A cached answer was given at once; nothing runs.
                Err(e) if e.is_empty() => {}
                Err(e) => state.set(State::Failed(e)),
            }
        })
    };
    let on_cancel = {
        let state = state.clone();
        let running = Rc::clone(&running);
        Callback::from(move |_: MouseEvent| {
            if let Some(r) = running.borrow_mut().take() {
                r.cancel();
            }
            state.set(State::Failed("Cancelled.".into()));
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

    let results = match &*state {
        State::Idle => html! {},
        State::Running { done, total } => html! {
            <div class="lab-progress">
                <label for="sweep-progress">{ format!("Running: {done} of {total} runs") }</label>
                <progress id="sweep-progress" max={total.to_string()} value={done.to_string()}></progress>
                <button id="sweep-cancel" type="button" onclick={on_cancel}>{ "Cancel" }</button>
            </div>
        },
        State::Failed(why) => html! { <p id="sweep-status" role="status">{ why }</p> },
        State::Done(swept) => {
            let on_plot = {
                let picked = picked.clone();
                let points = swept.points.clone();
                Callback::from(move |e: MouseEvent| {
                    let img: web_sys::HtmlElement = e.target_unchecked_into();
                    let scale = f64::from(plot::SIZE.0) / f64::from(img.client_width().max(1));
                    let x = f64::from(e.offset_x()) * scale;
                    let (a, b) = plot::AXIS_X_PX;
                    let fraction = (x - f64::from(a)) / f64::from(b - a);
                    picked.set(lab::nearest_point(&points, fraction));
                })
            };
            let chosen = picked.and_then(|i| swept.points.get(i).map(|p| (i, p)));
            html! {
                <div class="lab-result">
                    <p id="sweep-status" role="status">{ format!("Done: {} values.", swept.points.len()) }</p>
                    <div class="lab-figure">
                        <img id="sweep-plot" src={swept.plot.clone()} width={plot::SIZE.0.to_string()} height={plot::SIZE.1.to_string()}
                            alt={format!("Fraction of runs with exclusion broken against {}, with its 95% band; the table beside has the same numbers.", swept.param.axis())}
                            onclick={on_plot} />
                        <table id="sweep-table">
                            <caption>{ "Each point: runs, how many broke, and per run the means" }</caption>
                            <thead><tr>
                                <th scope="col">{ swept.param.name() }</th><th scope="col">{ "broken" }</th><th scope="col">{ "rate (95%)" }</th>
                                <th scope="col">{ "lost updates" }</th><th scope="col">{ "idle ms" }</th><th scope="col">{ "unavailable ms" }</th>
                            </tr></thead>
                            <tbody>
                            { for swept.points.iter().enumerate().map(|(i, pt)| {
                                let picked = picked.clone();
                                html! {
                                    <tr class={classes!(chosen.is_some_and(|(k, _)| k == i).then_some("picked"))}>
                                        <th scope="row"><button type="button" class="link" onclick={move |_| picked.set(Some(i))}>{ &pt.label }</button></th>
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
                        <div id="sweep-seeds">
                            <p>{ format!("{} = {}: exclusion broke in {} of {} runs.", swept.param.name(), pt.label, pt.broken_runs, pt.runs) }</p>
                            <ul class="seeds">
                                { for pt.broken_seeds.iter().map(|seed| html! {
                                    <li><button type="button" class="seed" onclick={open_seed(pt.value, *seed, swept.param)}>{ format!("seed {seed}") }</button></li>
                                }) }
                            </ul>
                        </div>
                    }
                    <button id="sweep-png" type="button" onclick={save_png(Rc::clone(swept))}>{ "Save the plot as PNG" }</button>
                </div>
            }
        }
    };

    let busy = matches!(*state, State::Running { .. });
    html! {
        <details id="lab" class="panel lab">
            <summary><h2>{ "How often does it break? (sweep)" }</h2></summary>
            <p class="hint">{ "Runs the scenario over many seeds at each value of one parameter, in the background, and plots how often exclusion broke, with a 95% interval." }</p>
            <div class="lab-form">
                <label for="sweep-param">{ "Vary" }</label>
                <select id="sweep-param" onchange={ let param = param.clone(); let values = values.clone(); move |e: Event| {
                    let sel: web_sys::HtmlSelectElement = e.target_unchecked_into();
                    if let Some(x) = Param::from_name(&sel.value()) { param.set(x); values.set(String::new()); }
                } }>
                    { for offered.iter().map(|x| html! { <option value={x.name()} selected={*x == param_now}>{ x.axis() }</option> }) }
                </select>
                <label for="sweep-values">{ "Values (comma-separated)" }</label>
                <input id="sweep-values" type="text" value={values_text.clone()}
                    oninput={ let values = values.clone(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); values.set(i.value()); } } />
                <label for="sweep-seeds">{ "Seeds per value" }</label>
                <input id="sweep-seeds" type="number" min="1" max="2000" value={(*seeds).clone()}
                    oninput={ let seeds = seeds.clone(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); seeds.set(i.value()); } } />
                <button id="sweep-run" type="button" disabled={busy || parsed.is_err() || seed_count.is_err() || offered.is_empty()} onclick={on_run}>{ "Run the sweep" }</button>
            </div>
            if let Err(e) = &parsed { <p class="error" role="alert">{ format!("Values: {e}") }</p> }
            if let Err(e) = &seed_count { <p class="error" role="alert">{ e.clone() }</p> }
            { results }
        </details>
    }
}

fn request_len(r: &LabRequest) -> u64 {
    match r {
        LabRequest::Sweep { values, .. } => values.len() as u64,
    }
}

/// Saves the plot as PNG: its SVG drawn on a canvas.
fn save_png(swept: Rc<Swept>) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        let swept = Rc::clone(&swept);
        wasm_bindgen_futures::spawn_local(async move {
            let svg = swept
                .plot
                .split_once(',')
                .and_then(|(_, b64)| base64::engine::general_purpose::STANDARD.decode(b64).ok())
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default();
            if let Ok(png) = super::share::png_of_svg(&svg).await {
                let _ = super::share::download(
                    &format!("sweep-{}.png", swept.param.name()),
                    "image/png",
                    &png,
                );
            }
        });
    })
}
