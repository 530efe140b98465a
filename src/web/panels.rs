//! The panels around the timeline: the verdict, playback, event details, the comparison, each
//! service's own order, and the event table that is the timeline's text alternative.

use std::rc::Rc;

use yew::prelude::*;

use super::controls::{number_of, value_of};
use super::timeline::{same_rc, Timeline};
use super::Dispatch;
use crate::trace::seconds;
use crate::ui::text::{self, Count};
use crate::ui::toggles;
use crate::ui::{self, Action, Outcome, SPEEDS};
use crate::world::Micros;

#[derive(Properties)]
pub struct OutcomeProps {
    pub outcome: Rc<Outcome>,
}

impl PartialEq for OutcomeProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.outcome, &o.outcome)
    }
}

pub(crate) fn count_items(counts: &[Count]) -> Html {
    html! {
        <ul id="verdict-counts" class="counts">
            { for counts.iter().map(|c| html! {
                <li data-count={c.key} class={classes!(c.bad.then_some("bad"))}>
                    <span class="count-label">{ c.label }</span>
                    { ": " }
                    <span class="count-value">{ &c.value }</span>
                    if c.bad { <span class="flag" aria-hidden="true">{ " ⚠" }</span> }
                    if c.why.is_some() { <span class="flag" aria-hidden="true">{ " *" }</span> }
                </li>
            }) }
        </ul>
    }
}

/// What the flags beside the counts mean, said once under them when any is shown.
pub(crate) fn flags_key(counts: &[Count]) -> Html {
    let bad = counts.iter().any(|c| c.bad);
    let why = counts.iter().any(|c| c.why.is_some());
    let text = match (bad, why) {
        (false, false) => return Html::default(),
        (true, false) => "⚠ marks a figure that shows a problem.",
        (false, true) => "* marks a figure explained below.",
        (true, true) => "⚠ marks a figure that shows a problem; * marks one explained below.",
    };
    html! { <p class="hint flags-key" id="flags-key">{ text }</p> }
}

/// The verdict for the whole run, in words, with its counts; beside each surprising figure,
/// why it is what it is; and the inventory's findings with what this run shows of them.
#[function_component(VerdictView)]
pub fn verdict_view(p: &OutcomeProps) -> Html {
    let o = &p.outcome;
    let broken = o.verdict.exclusion == crate::monitor::Exclusion::Broken;
    let v = &o.verdict;
    let counts = text::counts(v);
    html! {
        <section class={classes!("panel", "verdict", if broken { "broken" } else { "holds" })} aria-labelledby="verdict-h">
            <h2 id="verdict-h">{ format!("Verdict for the whole run (seed {})", o.seed) }</h2>
            if let Some(source) = &o.recorded {
                { super::extras::recorded_label(source, o.seed) }
            }
            <div id="verdict" role="status">
                <p id="verdict-headline">{ &o.headline }</p>
                { count_items(&counts) }
                { flags_key(&counts) }
            </div>
            { for counts.iter().filter_map(|c| c.why.as_ref().map(|why| html! {
                <p class="why" data-why={c.key}>{ format!("* {}: ", c.label) }{ why }</p>
            })) }
            <details class="explain">
                <summary>{ "What each figure counts" }</summary>
                <dl>
                    { for counts.iter().map(|c| html! {
                        <>
                        <dt>{ c.label }</dt>
                        <dd>{ c.explain }</dd>
                        </>
                    }) }
                </dl>
            </details>
            { for o.inventory.iter().map(|f| html! {
                <div class="inventory">
                    <details>
                        <summary>{ format!("Inventory check, before any run: {} at {}", if f.defect { "defect" } else { "warning" }, f.resource) }</summary>
                        <p>{ format!("{}.", f.message) }</p>
                    </details>
                    if let Some(run) = &f.this_run { <p class="this-run">{ run }</p> }
                </div>
            }) }
            if let Some(budget) = o.capped_from {
                <p class="hint">{ format!("The page runs at most {} events; this scenario allows {budget}. `lockstep run` runs them all.", ui::APP_EVENTS_MAX) }</p>
            }
            if v.truncated {
                <p class="hint">{ format!("The run stopped at t={}: it reached its event budget.", seconds(v.end_us)) }</p>
            }
        </section>
    }
}

/// What a recorded run was recorded from, right above its headline: a real run must never
/// read as a simulated one, and the versions and revisions say which services made it.
pub fn recorded_label(source: &crate::recording::Source, seed: u64) -> Html {
    html! {
        <div id="recorded-label" class="recorded-label">
            <p class="recorded-sentence">{ source.label(seed) }</p>
            <ul class="recorded-services">
                { for source.services.iter().map(|s| html! {
                    <li>{ s.words() }</li>
                }) }
            </ul>
            if !source.notes.is_empty() {
                <details class="recorded-notes">
                    <summary>{ "How the recorder played the scenario" }</summary>
                    <ul>{ for source.notes.iter().map(|n| html! { <li>{ n }</li> }) }</ul>
                </details>
            }
        </div>
    }
}

/// Each overlap in detail, with each service's own log at the time.
#[function_component(OverlapDetails)]
pub fn overlap_details(p: &OutcomeProps) -> Html {
    let v = &p.outcome.verdict;
    if v.violations.is_empty() {
        return html! {};
    }
    html! {
        <details class="panel violations">
            <summary>{ format!("Overlaps in detail ({} of {}), with each service's own log", v.violations.len().min(10), v.violation_count) }</summary>
            <ol>
                { for p.outcome.layout.overlaps.iter().zip(&v.violations).take(10).map(|(o, x)| html! {
                    <li>
                        <p>{ &o.text }</p>
                        { for x.service_logs.iter().map(|l| html! {
                            <div class="log">
                                <p>{ format!("Service {}'s own log at the time:", l.service) }</p>
                                <pre tabindex="0">{ l.lines.join("\n") }</pre>
                            </div>
                        }) }
                    </li>
                }) }
            </ol>
        </details>
    }
}

#[derive(Properties)]
pub struct AppProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
}

impl PartialEq for AppProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.app.outcome, &o.app.outcome)
            && self.app.cursor == o.app.cursor
            && self.app.time == o.app.time
            && self.app.playing == o.app.playing
            && self.app.speed == o.app.speed
            && self.app.own_order == o.app.own_order
            && self.app.zoom == o.app.zoom
            && self.app.selected == o.app.selected
            && same_rc(&self.app.compare, &o.app.compare)
    }
}

/// Play, pause, step, scrub and speed, with the verdict at the playhead.
#[function_component(Playback)]
pub fn playback(p: &AppProps) -> Html {
    let a = &p.app;
    let d = &p.dispatch;
    let click = |action: Action| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(action.clone()))
    };
    let onscrub = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| {
            let e: Event = e.into();
            if let Some(ms) = number_of(&value_of(&e)) {
                d.dispatch(Action::Seek((ms.max(0.0) * 1_000.0) as Micros));
            }
        })
    };
    let onspeed = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = number_of(&value_of(&e)) {
                d.dispatch(Action::Speed(s));
            }
        })
    };
    let onzoom = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            if let Ok(z) = value_of(&e).parse::<u32>() {
                d.dispatch(Action::Zoom(z));
            }
        })
    };
    // Rounded up, so that the slider's far end reaches the last event of a run cut short
    // between two whole milliseconds.
    let end_ms = a.outcome.end.div_ceil(1_000);
    let sentence = a.playhead_text();
    let standing = a.playhead_standing();
    html! {
        <section class="panel playback" aria-labelledby="playback-h">
            <h2 id="playback-h" class="visually-hidden">{ "Playback" }</h2>
            <div class="buttons">
                <button id="to-start" type="button" onclick={click(Action::ToStart)} title="Home">{ "|◀ Start" }</button>
                <button id="step-back" type="button" onclick={click(Action::StepBack)} title="Left arrow">{ "◀ Step back" }</button>
                <button id="play" type="button" onclick={click(Action::PlayPause)} title="Space" aria-pressed={a.playing.to_string()}>
                    { if a.playing { "Pause" } else { "Play" } }
                </button>
                <button id="step-forward" type="button" onclick={click(Action::StepForward)} title="Right arrow">{ "Step forward ▶" }</button>
                <button id="to-end" type="button" onclick={click(Action::ToEnd)} title="End">{ "End ▶|" }</button>
            </div>
            <div class="scrub">
                <label for="scrub">{ format!("Playhead (ms, 0–{end_ms})") }</label>
                <input id="scrub" type="range" min="0" max={end_ms.to_string()} step="1"
                    value={(a.time / 1_000).to_string()} oninput={onscrub}
                    aria-valuetext={format!("t={}", seconds(a.time))} />
            </div>
            <div class="row">
                <span class="field">
                    <label for="speed">{ "Speed" }</label>
                    <select id="speed" onchange={onspeed}>
                        { for SPEEDS.iter().map(|s| html! {
                            <option value={s.to_string()} selected={(*s - a.speed).abs() < 1e-9}>{ format!("{s}× real time") }</option>
                        }) }
                    </select>
                </span>
                <span class="field">
                    <label for="zoom">{ "Zoom" }</label>
                    <select id="zoom" onchange={onzoom}>
                        { for [1u32, 2, 4, 8, 16, 32].into_iter().map(|z| html! {
                            <option value={z.to_string()} selected={z == a.zoom}>{ format!("{z}×") }</option>
                        }) }
                    </select>
                </span>
            </div>
            <p class="shortcuts">{ "Keys: ← → step · [ ] speed; with focus in this part of the page (the timeline, say): Space play/pause · PageUp/PageDown a tenth of the run · Home/End" }</p>
            <p id="playhead-verdict" class={classes!("playhead-verdict", standing.name())}
                aria-live={if a.playing { "off" } else { "polite" }}>
                { sentence }
            </p>
            // Said beside the snapshot's sentence, which stays word for word the engine's.
            if standing == ui::Standing::AfterBreak {
                <p id="playhead-earlier" class="hint">{ "Exclusion broke earlier in this run." }</p>
            }
        </section>
    }
}

#[derive(Properties)]
pub struct DetailsProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
}

impl PartialEq for DetailsProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.app.outcome, &o.app.outcome)
            && self.app.selected == o.app.selected
            && self.app.selected_flipped == o.app.selected_flipped
            && self.app.pinned == o.app.pinned
            && same_rc(&self.app.compare, &o.app.compare)
    }
}

/// The card of what is pointed at, in focus or stepped to: an overlap or a note in full, and
/// the event in plain words, with what caused it and what it led to, each a button that goes
/// there.
#[function_component(Details)]
pub fn details(p: &DetailsProps) -> Html {
    let a = &p.app;
    let o = &a.outcome;
    let flipped = a
        .selected_flipped
        .zip(a.compare.as_ref())
        .and_then(|(i, c)| {
            let (b, _) = c.result.as_ref().ok()?;
            let text = text::event_details(&b.world, &b.events, i)?;
            Some(format!("Flipped run ({}): {text}", c.label))
        });
    let lead = match a.pinned {
        Some(ui::Pinned::Overlap(k)) => o.layout.overlaps.get(k).map(|x| x.text.clone()),
        Some(ui::Pinned::Note(k)) => o.layout.notes.get(k).map(|n| n.text.clone()),
        None => None,
    };
    let card = if flipped.is_some() {
        None
    } else {
        a.selected
            .and_then(|i| text::card(&o.world, &o.events, &o.layout, i))
    };
    let go = |k: usize, words: &str, class: &'static str| {
        let d = p.dispatch.clone();
        html! {
            <li>
                <button type="button" class={classes!("go", class)} onclick={move |_: MouseEvent| d.dispatch(Action::Cursor(k + 1))}>
                    { words.to_string() }
                </button>
            </li>
        }
    };
    let notes_shown: Vec<&String> = card
        .as_ref()
        .map(|c| {
            c.notes
                .iter()
                .filter(|n| Some(*n) != lead.as_ref())
                .collect()
        })
        .unwrap_or_default();
    html! {
        <section id="event-details" class="details card" aria-live="polite" aria-label="Card of the event or note in view">
            if let Some(lead) = &lead { <p class="card-lead">{ lead }</p> }
            if let Some(f) = &flipped { <p>{ f }</p> }
            if let Some(c) = &card {
                <p class="card-event"><strong>{ &c.heading }</strong>{ ": " }{ &c.words }{ "." }</p>
                { for notes_shown.iter().map(|n| html! { <p class="card-note">{ *n }</p> }) }
                if !c.because.is_empty() {
                    <div class="card-links">
                        <span class="card-label">{ "Because:" }</span>
                        <ul>{ for c.because.iter().map(|(w, k)| go(*k, w, "cause")) }</ul>
                    </div>
                }
                if !c.led_to.is_empty() {
                    <div class="card-links">
                        <span class="card-label">{ "Led to:" }</span>
                        <ul>{ for c.led_to.iter().map(|(w, k)| go(*k, w, "effect")) }</ul>
                    </div>
                }
            }
            if lead.is_none() && card.is_none() && flipped.is_none() {
                <p class="hint">{ "Point at the timeline, step with the arrow keys, or Tab to a note or an overlap: its card shows here, in words, with what caused it." }</p>
            }
        </section>
    }
}

#[derive(Properties)]
pub struct CompareProps {
    pub app: Rc<ui::App>,
    pub width: u32,
    pub dispatch: Dispatch,
}

impl PartialEq for CompareProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.app.outcome, &o.app.outcome)
            && self.app.window == o.app.window
            && self.app.time == o.app.time
            && self.app.selected_flipped == o.app.selected_flipped
            && self.width == o.width
            && same_rc(&self.app.compare, &o.app.compare)
    }
}

/// The same scenario and seed with one toggle flipped, on the same time axis.
#[function_component(CompareView)]
pub fn compare_view(p: &CompareProps) -> Html {
    let a = &p.app;
    // Listing the flips runs validation for each; do it once per scenario, not on every
    // frame of playback.
    let flips = {
        let scenario = a.scenario.clone();
        use_memo(a.revision, move |_| toggles::flips(&scenario))
    };
    let current = a
        .compare
        .as_ref()
        .and_then(|c| flips.iter().position(|(_, t)| *t == c.toggle));
    let onchange = {
        let d = p.dispatch.clone();
        let flips = Rc::clone(&flips);
        Callback::from(move |e: Event| {
            let v = value_of(&e);
            let t = v
                .parse::<usize>()
                .ok()
                .and_then(|i| flips.get(i))
                .map(|(_, t)| t.clone());
            d.dispatch(Action::Compare(t));
        })
    };
    let body = a.compare.as_ref().map(|c| match &c.result {
        Err(errors) => html! {
            <div class="errors has-errors" role="alert">
                <p>{ format!("The flipped scenario ({}) is not valid:", c.label) }</p>
                <ul>{ for errors.iter().map(|e| html! { <li>{ format!("{}: {}", e.location, e.message) }</li> }) }</ul>
            </div>
        },
        Ok((b, diff)) => {
            let broken = b.verdict.exclusion == crate::monitor::Exclusion::Broken;
            let summary = text::compare_summary(&a.outcome.verdict, &b.verdict, diff);
            html! {
                <>
                <ul id="compare-summary" class="compare-summary">
                    { for summary.into_iter().map(|s| html! { <li>{ s }</li> }) }
                </ul>
                <p id="compare-verdict" class={classes!("compare-verdict", if broken { "broken" } else { "holds" })}>
                    { &b.headline }
                </p>
                <div class="timeline-box">
                    <Timeline id="timeline-b" title={format!("Timeline of the run {}", c.label)}
                        layout={Rc::clone(&b.layout)} window={a.window} width={p.width}
                        diff={Some(Rc::clone(diff))} divergence={diff.first_divergence}
                        flipped=true selected={a.selected_flipped} dispatch={p.dispatch.clone()} />
                    <div class="playhead" aria-hidden="true"
                        style={super::timeline::playhead_style(a.time, a.window, super::timeline::frame_of(&b.layout, p.width), p.width)}></div>
                </div>
                <details id="events-b" class="events">
                    <summary>{ format!("Event list of the flipped run ({} events)", b.events.len()) }</summary>
                    { event_rows("event-table-b", "Events of the flipped run in order", b, b.cursor_at(a.time), Some(diff.only_b.as_slice())) }
                </details>
                </>
            }
        }
    });
    // A recording cannot be run again, so there is no flipped twin to set beside it; the
    // control stays in place, disabled, with the reason under it.
    let recorded = a.outcome.recorded.is_some();
    html! {
        <section class="panel compare" aria-labelledby="compare-h">
            <h2 id="compare-h">{ "Compare" }</h2>
            <span class="field">
                <label for="compare">{ "Run again, same seed, with one toggle flipped" }</label>
                <select id="compare" {onchange} disabled={recorded} aria-describedby={recorded.then_some("compare-unavailable")}>
                    <option value="" selected={current.is_none()}>{ "Off" }</option>
                    { for flips.iter().enumerate().map(|(i, (label, _))| html! {
                        <option value={i.to_string()} selected={current == Some(i)}>{ label }</option>
                    }) }
                </select>
            </span>
            if recorded {
                <p id="compare-unavailable" class="hint">{ "A recording from real services cannot be run again, so it has no flipped twin to compare with. Change any control to simulate the scenario, then compare." }</p>
            }
            { for body }
        </section>
    }
}

/// The first entry of a service's order to show: the list is long, so it shows the entries
/// around the playhead.
fn shown_from(entries: &[crate::ui::timeline::OrderEntry], cursor: usize) -> usize {
    const SHOWN: usize = 300;
    let at = entries.partition_point(|e| e.event < cursor);
    at.saturating_sub(SHOWN / 2)
        .min(entries.len().saturating_sub(SHOWN))
}

/// Each service's own order: its instants, one list per service, with nothing between them.
#[function_component(OwnOrderView)]
pub fn own_order_view(p: &AppProps) -> Html {
    let a = &p.app;
    let onchange = {
        let d = p.dispatch.clone();
        Callback::from(move |e: Event| {
            let on = e
                .target_dyn_into::<web_sys::HtmlInputElement>()
                .is_some_and(|i| i.checked());
            d.dispatch(Action::OwnOrder(on));
        })
    };
    const SHOWN: usize = 300;
    html! {
        <section class="panel own-order" aria-labelledby="own-order-h">
            <h2 id="own-order-h">{ "Each service's own order" }</h2>
            <span class="check">
                <input id="own-order" type="checkbox" checked={a.own_order} {onchange} />
                <label for="own-order">{ "Show each service's own order beside real time" }</label>
            </span>
            if a.own_order {
                <div id="own-order-view">
                    <p class="hint">{ "Each service numbers its own operations with its own instants. The lists share no clock and no counter: nothing says whether one service's instant 5 came before or after another's instant 5. Entries up to the playhead are highlighted." }</p>
                    <div class="orders">
                        { for a.outcome.orders.iter().map(|o| html! {
                            <section class="order" aria-label={format!("Service {}'s own order", o.service)}>
                                <h3>{ format!("service {}", o.service) }</h3>
                                // The list scrolls, so it takes focus: keyboard users can scroll it too.
                                <ol tabindex="0" aria-label={format!("Operations of service {} by its own instant", o.service)}>
                                    { for o.entries.iter().skip(shown_from(&o.entries, a.cursor)).take(SHOWN).map(|e| html! {
                                        <li value={e.instant.to_string()} data-e={e.event.to_string()}
                                            class={classes!(e.grant.then_some("grant"), (e.event < a.cursor).then_some("past"))}>
                                            { format!("instant {}: {}", e.instant, e.text) }
                                        </li>
                                    }) }
                                </ol>
                                if o.entries.len() > SHOWN {
                                    <p class="hint">{ {
                                        let from = shown_from(&o.entries, a.cursor);
                                        format!("Entries {}–{} of {}, around the playhead.", from + 1, (from + SHOWN).min(o.entries.len()), o.entries.len())
                                    } }</p>
                                }
                            </section>
                        }) }
                    </div>
                </div>
            }
        </section>
    }
}

#[derive(Properties)]
pub struct TableProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
}

impl PartialEq for TableProps {
    fn eq(&self, o: &Self) -> bool {
        self.dispatch == o.dispatch
            && Rc::ptr_eq(&self.app.outcome, &o.app.outcome)
            && self.app.cursor == o.app.cursor
            && same_rc(&self.app.compare, &o.app.compare)
    }
}

/// The timeline as a table: the events around the playhead, one row each.
#[function_component(EventTable)]
pub fn event_table(p: &TableProps) -> Html {
    let a = &p.app;
    let o = &a.outcome;
    let n = o.events.len();
    let (start, stop) = table_window(a.cursor, n);
    let diff = a
        .compare
        .as_ref()
        .and_then(|c| c.result.as_ref().ok())
        .map(|(_, d)| Rc::clone(d));
    html! {
        <details id="events" class="panel events">
            <summary>{ format!("Event list ({n} events; a text alternative to the timeline)") }</summary>
            <p class="hint">{ format!("Showing events {}–{} of {n}, around the playhead. Paging moves the playhead with it.", start + 1, stop) }</p>
            <div class="buttons">
                <button id="events-earlier" type="button" disabled={start == 0}
                    onclick={ let d = p.dispatch.clone(); let k = a.cursor.saturating_sub(TABLE_ROWS); move |_| d.dispatch(Action::Cursor(k)) }>
                    { format!("◀ {TABLE_ROWS} earlier") }
                </button>
                <button id="events-later" type="button" disabled={stop >= n}
                    onclick={ let d = p.dispatch.clone(); let k = (a.cursor + TABLE_ROWS).min(n); move |_| d.dispatch(Action::Cursor(k)) }>
                    { format!("{TABLE_ROWS} later ▶") }
                </button>
            </div>
            { event_rows("event-table", "Events of the run in order", o, a.cursor, diff.as_ref().map(|d| d.only_a.as_slice())) }
        </details>
    }
}

/// How many events a table shows at once.
const TABLE_ROWS: usize = 100;

/// The rows a table shows: `TABLE_ROWS` events around the playhead.
fn table_window(cursor: usize, n: usize) -> (usize, usize) {
    let start = cursor
        .saturating_sub(TABLE_ROWS / 2)
        .min(n.saturating_sub(TABLE_ROWS));
    (start, (start + TABLE_ROWS).min(n))
}

/// A run's events around the playhead as a table, with a column marking the events the other
/// run of a comparison does not have.
fn event_rows(id: &str, caption: &str, o: &Outcome, cursor: usize, only: Option<&[bool]>) -> Html {
    let (start, stop) = table_window(cursor, o.events.len());
    html! {
        <div class="table-scroll" tabindex="0" role="region" aria-label={format!("{caption}, scrollable")}>
            <table id={id.to_string()}>
                <caption class="visually-hidden">{ caption }</caption>
                <thead><tr><th scope="col">{ "#" }</th><th scope="col">{ "Time" }</th><th scope="col">{ "What happened" }</th><th scope="col">{ "Because" }</th>
                    if only.is_some() { <th scope="col">{ "Compared" }</th> }</tr></thead>
                <tbody>
                    { for (start..stop).map(|i| {
                        let e = &o.events[i];
                        let current = i + 1 == cursor;
                        html! {
                            <tr class={classes!(current.then_some("current"), (i >= cursor).then_some("future"))}
                                aria-current={current.then_some("step")}>
                                <td>{ i + 1 }</td>
                                <td>{ seconds(e.at) }</td>
                                <td>{ e.describe(&o.world) }</td>
                                // The text twin of the arrows and notes that end at this event.
                                <td>{ text::because(&o.world, &o.events, &o.layout, i).into_iter().map(|(w, _)| w).collect::<Vec<_>>().join("; ") }</td>
                                if let Some(flags) = only {
                                    <td>{ if flags.get(i) == Some(&true) { "only in this run" } else { "" } }</td>
                                }
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}
