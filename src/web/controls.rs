//! The scenario picker, the toggles and the editor. Every control is a native form element
//! with a visible label, and every change becomes one [`Action`].

use std::rc::Rc;

use gloo::timers::callback::Timeout;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::Dispatch;
use crate::lesson::Control;
use crate::scenario::{Fencing, FencingChecks, MigrationMode, ScenarioError};
use crate::ui::toggles::{self, Toggle};
use crate::ui::{self, Action};

/// A decimal number typed or slid into a control, read by the browser's own `parseFloat`.
///
/// Rust's `str::parse::<f64>` would link a 10 KB table of powers of five into every bundle, for
/// two inputs (scrub and speed) and a computed font size, all written by the browser itself.
pub(crate) fn number_of(text: &str) -> Option<f64> {
    Some(js_sys::parse_float(text.trim())).filter(|n| n.is_finite())
}

/// The value of the form control that fired an event.
pub(crate) fn value_of(e: &Event) -> String {
    let Some(target) = e.target() else {
        return String::new();
    };
    if let Some(i) = target.dyn_ref::<web_sys::HtmlInputElement>() {
        return i.value();
    }
    if let Some(s) = target.dyn_ref::<web_sys::HtmlSelectElement>() {
        return s.value();
    }
    if let Some(t) = target.dyn_ref::<web_sys::HtmlTextAreaElement>() {
        return t.value();
    }
    String::new()
}

pub(crate) fn checked_of(e: &Event) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .is_some_and(|i| i.checked())
}

/// Moves focus to an element once the page has redrawn: after a button that disappears with
/// its own click (Reset, Discard, Restore), focus goes where the user's attention goes next
/// instead of falling back to the page.
pub(crate) fn focus_after_render(id: &'static str) {
    Timeout::new(0, move || {
        if let Some(el) = gloo::utils::document()
            .get_element_by_id(id)
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    })
    .forget();
}

/// A callback that turns a change event into an action, or into nothing.
fn on_change(
    dispatch: &Dispatch,
    f: impl Fn(&Event) -> Option<Action> + 'static,
) -> Callback<Event> {
    let dispatch = dispatch.clone();
    Callback::from(move |e: Event| {
        if let Some(a) = f(&e) {
            dispatch.dispatch(a);
        }
    })
}

/// A callback for a millisecond field: only whole numbers become actions, so a half-typed
/// value never reaches the engine.
fn on_ms(dispatch: &Dispatch, f: impl Fn(u64) -> Toggle + 'static) -> Callback<Event> {
    on_change(dispatch, move |e| {
        value_of(e)
            .trim()
            .parse::<u64>()
            .ok()
            .map(|ms| Action::Toggle(f(ms)))
    })
}

#[derive(Properties, PartialEq)]
pub struct PickerProps {
    pub source: String,
    pub description: String,
    /// True when the scenario is no longer the picked one's own text.
    pub edited: bool,
    pub dispatch: Dispatch,
}

#[function_component(Picker)]
pub fn picker(p: &PickerProps) -> Html {
    // The entries come from parsing every built-in, which need happen only once.
    let entries = use_memo((), |_| ui::picker());
    let onchange = on_change(&p.dispatch, |e| Some(Action::Pick(value_of(e))));
    let reset = {
        let d = p.dispatch.clone();
        let source = p.source.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(Action::Pick(source.clone()));
            focus_after_render("scenario");
        })
    };
    html! {
        <section class="panel picker" aria-labelledby="picker-h">
            <h2 id="picker-h">{ "Scenario" }</h2>
            <label for="scenario">{ "Built-in scenario" }</label>
            <select id="scenario" {onchange}>
                { for entries.iter().map(|c| html! {
                    <option value={c.value.clone()} selected={c.value == p.source}>{ &c.label }</option>
                }) }
            </select>
            <p class="description">{ &p.description }</p>
            if p.edited {
                <p class="edited">
                    { "Changed from the built-in by your toggles or edits. " }
                    <button id="reset" type="button" onclick={reset}>{ "Reset to the built-in" }</button>
                </p>
            }
        </section>
    }
}

#[derive(Properties)]
pub struct ControlsProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
    /// The controls a lesson step offers; none means every control (the sandbox).
    #[prop_or_default]
    pub allowed: Option<Rc<Vec<Control>>>,
}

impl PartialEq for ControlsProps {
    fn eq(&self, other: &Self) -> bool {
        // The revision, not the scenario: a toggle that gave an invalid scenario leaves the
        // scenario as it was, and the controls must still redraw to show the values in force.
        self.app.revision == other.app.revision
            && self.app.toggle_errors == other.app.toggle_errors
            && self.app.errors.is_empty() == other.app.errors.is_empty()
            && Rc::ptr_eq(&self.app.outcome, &other.app.outcome)
            && self.dispatch == other.dispatch
            && self.allowed == other.allowed
    }
}

/// A labelled choice: a select when there is something to choose, and plain text (with the
/// same id, so that tests and links find it) when there is one choice only: a menu with one
/// entry promises a choice it cannot give.
fn choice_field(
    id: &str,
    label: &str,
    choices: &[toggles::Choice],
    current: &str,
    onchange: Callback<Event>,
) -> Html {
    if let [only] = choices {
        let label_id = format!("{id}-label");
        return html! {
            <span class="field">
                <span class="label" id={label_id.clone()}>{ label }</span>
                <output id={id.to_string()} class="only-choice" aria-labelledby={label_id} data-value={only.value.clone()}>{ &only.label }</output>
            </span>
        };
    }
    html! {
        <span class="field">
            <label for={id.to_string()}>{ label }</label>
            <select id={id.to_string()} {onchange}>
                { for choices.iter().map(|o| html! {
                    <option value={o.value.clone()} selected={o.value == current}>{ &o.label }</option>
                }) }
            </select>
        </span>
    }
}

/// A labelled number field in milliseconds.
fn ms_field(id: &str, label: &str, value: u64, onchange: Callback<Event>) -> Html {
    html! {
        <span class="field">
            <label for={id.to_string()}>{ label }</label>
            <input id={id.to_string()} type="number" min="0" max={crate::scenario::limits::SPAN_MS_MAX.to_string()} step="10" inputmode="numeric"
                value={value.to_string()} {onchange} />
        </span>
    }
}

#[function_component(Controls)]
pub fn controls(p: &ControlsProps) -> Html {
    let s = &p.app.scenario;
    let d = &p.dispatch;
    // In a lesson only the step's controls are drawn: a control that is not offered is not
    // shown disabled, it is simply not there, so the step's question stays in view.
    let allow = |c: Control| p.allowed.as_ref().is_none_or(|a| a.contains(&c));

    let seed = allow(Control::Seed).then(|| html! {
        <fieldset>
            <legend>{ "Seed" }</legend>
            <span class="field">
                <label for="seed">{ "Seed" }</label>
                <input id="seed" type="number" min="0" step="1" value={s.seed.to_string()}
                    onchange={on_change(d, |e| value_of(e).trim().parse::<u64>().ok().map(|v| Action::Toggle(Toggle::Seed(v))))} />
            </span>
            <button id="new-seed" type="button" onclick={ let d = d.clone(); move |_| d.dispatch(Action::NewSeed) }>{ "New seed" }</button>
        </fieldset>
    });

    let protocols = s.clients.iter().any(|c| allow(Control::Protocol(c.name.clone()))).then(|| html! {
        <fieldset>
            <legend>{ "How each client class locks" }</legend>
            { for s.clients.iter().filter(|c| allow(Control::Protocol(c.name.clone()))).map(|c| {
                let id = format!("protocol-{}", c.name);
                let current = toggles::protocol_value(&c.protocol);
                let class = c.name.clone();
                let options = p.app.settings.protocol_choices(&p.app.base, &c.name);
                // Under a migration, what the class really does, from the engine's routes.
                let really = toggles::effective_route(s, &c.name, &current);
                html! {
                    <div class="group">
                        { choice_field(&id, &format!("{} ({}×)", c.name, c.count), &options, &current,
                            on_change(d, move |e| Some(Action::Toggle(Toggle::Protocol { class: class.clone(), choice: value_of(e) })))) }
                        if let Some(really) = really {
                            <p class="hint really" id={format!("{id}-really")}>{ format!("What {} really does: locks in {really}.", c.name) }</p>
                        }
                    </div>
                }
            }) }
        </fieldset>
    });

    let fencing = s.resources.iter().any(|r| allow(Control::Fencing(r.name.clone()))).then(|| html! {
        <fieldset>
            <legend>{ "Fencing at the resource" }</legend>
            { for s.resources.iter().filter(|r| allow(Control::Fencing(r.name.clone()))).map(|r| {
                let id = format!("fencing-{}", r.name);
                let checks_id = format!("fencing-checks-{}", r.name);
                let (name, checks) = (r.name.clone(), r.fencing_checks);
                let on_mode = on_change(d, move |e| toggles::fencing_from_value(&value_of(e)).map(|mode| Action::Toggle(Toggle::Fencing { resource: name.clone(), mode, checks: Some(checks) })));
                let (name, mode) = (r.name.clone(), r.fencing);
                let on_checks = on_change(d, move |e| toggles::checks_from_value(&value_of(e)).map(|checks| Action::Toggle(Toggle::Fencing { resource: name.clone(), mode, checks: Some(checks) })));
                html! {
                    <div class="group">
                        <span class="field">
                            <label for={id.clone()}>{ format!("Tokens checked at {}", r.name) }</label>
                            <select id={id} onchange={on_mode}>
                                { for [Fencing::Off, Fencing::AnySource, Fencing::OneSource].into_iter().map(|m| html! {
                                    <option value={toggles::fencing_value(m)} selected={m == r.fencing}>{ toggles::fencing_label_at(s, &r.name, m) }</option>
                                }) }
                            </select>
                        </span>
                        <span class="field">
                            <label for={checks_id.clone()}>{ "Checked on" }</label>
                            <select id={checks_id} onchange={on_checks} disabled={r.fencing == Fencing::Off}>
                                <option value="writes" selected={r.fencing_checks == FencingChecks::Writes}>{ toggles::checks_label(FencingChecks::Writes) }</option>
                                <option value="all_accesses" selected={r.fencing_checks == FencingChecks::AllAccesses}>{ toggles::checks_label(FencingChecks::AllAccesses) }</option>
                            </select>
                        </span>
                        if let Some(src) = &r.fencing_source {
                            <p class="hint">{ format!("Only tokens from service {src} count.") }</p>
                        }
                    </div>
                }
            }) }
        </fieldset>
    });

    let roles = (s.services.len() >= 2 && s.services.iter().any(|x| allow(Control::Role(x.name.clone())))).then(|| html! {
        <fieldset>
            <legend>{ "Role of each service" }</legend>
            { for s.services.iter().filter(|x| allow(Control::Role(x.name.clone()))).map(|x| {
                let id = format!("role-{}", x.name);
                let current = toggles::role_value(x.subordinate_to.as_deref());
                let service = x.name.clone();
                choice_field(&id, &format!("Service {}", x.name), &p.app.settings.role_choices(&p.app.base, &x.name), &current,
                    on_change(d, move |e| {
                        let v = value_of(e);
                        let authority = v.strip_prefix("subordinate:").map(str::to_string);
                        Some(Action::Toggle(Toggle::Role { service: service.clone(), authority }))
                    }))
            }) }
        </fieldset>
    });

    let partition = s.partitions.first();
    let two_regions = s.regions.len() >= 2;
    let any_fault = allow(Control::Partition)
        || allow(Control::Pause)
        || s.services
            .iter()
            .any(|x| allow(Control::Outage(x.name.clone())));
    let faults = any_fault.then(|| html! {
        <fieldset>
            <legend>{ "Faults" }</legend>
            if allow(Control::Partition) {
            <div class="group">
                <span class="check">
                    <input id="partition" type="checkbox" checked={partition.is_some()} disabled={!two_regions}
                        onchange={on_change(d, |e| Some(Action::Toggle(Toggle::Partition(checked_of(e)))))} />
                    <label for="partition">{ "Partition between regions" }</label>
                </span>
                if !two_regions {
                    <p class="hint">{ "This scenario has one region; add a region in the editor to cut it in two." }</p>
                }
                if let Some(p) = partition {
                    { ms_field("partition-start", "starts at (ms)", p.start_ms, on_ms(d, Toggle::PartitionStart)) }
                    { ms_field("partition-length", "lasts (ms)", p.duration_ms, on_ms(d, Toggle::PartitionLength)) }
                }
            </div>
            }
            { for s.services.iter().filter(|x| allow(Control::Outage(x.name.clone()))).map(|x| {
                let id = format!("outage-{}", x.name);
                let service = x.name.clone();
                let window = x.outages.first();
                html! {
                    <div class="group">
                        <span class="check">
                            <input id={id.clone()} type="checkbox" checked={window.is_some()}
                                onchange={on_change(d, move |e| Some(Action::Toggle(Toggle::Outage { service: service.clone(), on: checked_of(e) })))} />
                            <label for={id.clone()}>{ format!("Outage of service {}", x.name) }</label>
                        </span>
                        if let Some(w) = window {
                            { ms_field(&format!("{id}-start"), "starts at (ms)", w.start_ms, { let service = x.name.clone(); on_ms(d, move |ms| Toggle::OutageStart { service: service.clone(), ms }) }) }
                            { ms_field(&format!("{id}-length"), "lasts (ms)", w.duration_ms, { let service = x.name.clone(); on_ms(d, move |ms| Toggle::OutageLength { service: service.clone(), ms }) }) }
                        }
                    </div>
                }
            }) }
            if allow(Control::Pause) {
            <div class="group">
                <span class="check">
                    <input id="pause" type="checkbox" checked={!s.pauses.is_empty()}
                        onchange={on_change(d, |e| Some(Action::Toggle(Toggle::Pause(checked_of(e)))))} />
                    <label for="pause">{ "Pause a client (a long GC pause)" }</label>
                </span>
                if let Some(p) = s.pauses.first() {
                    <span class="field">
                        <label for="pause-client">{ "client" }</label>
                        <select id="pause-client" onchange={on_change(d, |e| Some(Action::Toggle(Toggle::PauseClient(value_of(e)))))}>
                            { for s.clients.iter().map(|c| c.name.clone()).chain(s.client_instance_names()).map(|n| html! {
                                <option value={n.clone()} selected={n == p.client}>{ n }</option>
                            }) }
                        </select>
                    </span>
                    { ms_field("pause-start", "starts at (ms)", p.start_ms, on_ms(d, Toggle::PauseStart)) }
                    { ms_field("pause-length", "lasts (ms)", p.duration_ms, on_ms(d, Toggle::PauseLength)) }
                }
            </div>
            }
        </fieldset>
    });

    // A migration is planned work, not a fault: it has its own heading.
    let migration = allow(Control::Migration).then(|| html! {
        <fieldset>
            <legend>{ "Migration" }</legend>
            <div class="group">
                <span class="check">
                    <input id="migration" type="checkbox" checked={!s.migrations.is_empty()} disabled={!toggles::can_migrate(s) && s.migrations.is_empty()}
                        onchange={on_change(d, |e| Some(Action::Toggle(Toggle::Migration(checked_of(e)))))} />
                    <label for="migration">{ "Migrate the resource to another service" }</label>
                </span>
                if let Some(m) = s.migrations.first() {
                    <p class="hint">{ format!("{} moves from {} to {}.", m.resource, m.from, m.to) }</p>
                    <span class="field">
                        <label for="migration-mode">{ "how" }</label>
                        <select id="migration-mode" onchange={on_change(d, |e| toggles::migration_mode_from_value(&value_of(e)).map(|m| Action::Toggle(Toggle::MigrationMode(m))))}>
                            <option value="naive" selected={toggles::migration_mode_value(m.mode) == "naive"}>{ toggles::migration_mode_label(MigrationMode::Naive) }</option>
                            <option value="drain" selected={toggles::migration_mode_value(m.mode) == "drain"}>{ toggles::migration_mode_label(MigrationMode::Drain) }</option>
                            <option value="transfer" selected={toggles::migration_mode_value(m.mode) == "transfer"}>{ toggles::migration_mode_label(MigrationMode::Transfer) }</option>
                        </select>
                    </span>
                    { ms_field("migration-at", "at (ms)", m.at_ms, on_ms(d, Toggle::MigrationAt)) }
                }
            </div>
        </fieldset>
    });

    let blocked = !p.app.errors.is_empty();
    let discard = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(Action::DiscardEdit);
            focus_after_render("editor");
        })
    };
    let o = &p.app.outcome;
    let broken = o.verdict.violation_count > 0;
    html! {
        <section class="panel controls" aria-labelledby="controls-h">
            <h2 id="controls-h">{ "Toggles" }</h2>
            // On a narrow screen the verdict is far above; this line echoes it beside the
            // toggles so that a change is seen where it is made.
            <p class={classes!("echo", if broken { "broken" } else { "holds" })}>
                { format!("Now: exclusion {}; {} lost update(s), {} rejected write(s).",
                    if broken { "broken" } else { "holds" }, o.verdict.lost_updates, o.verdict.rejected_writes) }
            </p>
            if !p.app.toggle_errors.is_empty() {
                <div id="toggle-errors" class="errors has-errors" role="alert">
                    <p>{ "That change was not made: it would break a rule of the scenario." }</p>
                    <ul>
                        { for p.app.toggle_errors.iter().take(5).map(|e| html! { <li><strong>{ &e.location }</strong>{ ": " }{ &e.message }</li> }) }
                    </ul>
                </div>
            }
            if blocked {
                <div class="errors has-errors">
                    <p>{ "The scenario's text has an error (see the editor below), so the toggles wait until it is fixed or discarded: changing one now would overwrite your edit." }</p>
                    <button id="discard-edit" type="button" onclick={discard}>{ "Discard the edit" }</button>
                </div>
            }
            <fieldset class="plain" disabled={blocked}>
                <legend class="visually-hidden">{ "Toggles" }</legend>
                { for protocols }
                { for fencing }
                { for roles }
                { for faults }
                { for migration }
                { for seed }
            </fieldset>
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct EditorProps {
    /// The picker source the text belongs to, saved with it.
    pub source: String,
    pub text: String,
    pub errors: Vec<ScenarioError>,
    /// True when a toggle rewrote text the user had written, which can be put back.
    pub can_restore: bool,
    /// True when the current run is large enough that re-running on every keystroke would lag.
    pub heavy: bool,
    /// True while the text waits for the page's reader (the sandbox's first bundle reads TOML
    /// in a worker).
    #[prop_or_default]
    pub reading: bool,
    pub dispatch: Dispatch,
}

/// The whole scenario as TOML. Every keystroke is validated; an invalid text shows the
/// engine's located errors and leaves the last good run on screen.
#[function_component(Editor)]
pub fn editor(p: &EditorProps) -> Html {
    let pending = use_mut_ref(|| None::<Timeout>);
    // When the text changes from elsewhere (a toggle, a pick), an edit still waiting for a
    // pause in the typing is older than it, so it is dropped rather than applied on top.
    {
        let pending = pending.clone();
        use_effect_with(p.text.clone(), move |_| {
            pending.borrow_mut().take();
        });
    }
    let oninput = {
        let d = p.dispatch.clone();
        let heavy = p.heavy;
        let source = p.source.clone();
        Callback::from(move |e: InputEvent| {
            let e: Event = e.into();
            let text = value_of(&e);
            // The text is stored before the engine runs it, so even a run that brought the tab
            // down would leave what the user typed in storage for the next visit.
            super::storage::save(&crate::ui::Saved {
                source: source.clone(),
                text: text.clone(),
                ran: None,
            });
            // A small run re-runs on every keystroke; a heavy one waits for a pause in the
            // typing, so that typing stays responsive.
            if heavy {
                let d = d.clone();
                *pending.borrow_mut() =
                    Some(Timeout::new(300, move || d.dispatch(Action::Edit(text))));
            } else {
                pending.borrow_mut().take();
                d.dispatch(Action::Edit(text));
            }
        })
    };
    html! {
        <section class="panel editor" aria-labelledby="editor-h">
            <h2 id="editor-h">{ "Everything else" }</h2>
            <label for="editor">{ "Scenario (TOML): counts, timings, rows, leases" }</label>
            <textarea id="editor" spellcheck="false" rows="16" aria-describedby="editor-errors editor-help"
                aria-busy={p.reading.then_some("true")} value={p.text.clone()} {oninput} />
            // Shown only when reading takes long enough to notice (the first text waits for the
            // reader to load); the stylesheet delays it, so fast answers never flash it.
            if p.reading {
                <p id="editor-reading" class="hint reading">{ "Reading the text…" }</p>
            }
            if p.can_restore {
                <p class="hint">
                    { "A toggle rewrote your text in canonical form, without its comments and layout. " }
                    <button id="restore-text" type="button" onclick={ let d = p.dispatch.clone(); move |_| { d.dispatch(Action::RestoreText); focus_after_render("editor"); } }>
                        { "Restore my text (undoes the toggle)" }
                    </button>
                </p>
            }
            <p id="editor-help" class="hint">{ "Checked as you type. While the text has an error, the last valid run stays on screen. The format is documented in docs/scenario-format.md." }</p>
            <div id="editor-errors" role="alert" class={classes!("errors", (!p.errors.is_empty()).then_some("has-errors"))}>
                if !p.errors.is_empty() {
                    <p>{ format!("{} problem(s); showing the last valid run:", p.errors.len()) }</p>
                    <ul>
                        { for p.errors.iter().take(20).map(|e| html! { <li><strong>{ &e.location }</strong>{ ": " }{ &e.message }</li> }) }
                    </ul>
                }
            </div>
        </section>
    }
}
