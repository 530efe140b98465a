//! The course's views: the lessons in order with the learner's progress, a lesson beside its
//! live run, and the facilitator's handout with the completion codes' checker. Like the rest
//! of `web`, they draw state computed in `ui` and turn input into actions or links.

use std::rc::Rc;
use std::sync::Arc;

use yew::prelude::*;

use super::controls::{value_of, Controls};
use super::panels::{count_items, Details, Playback};
use super::timeline::{self, lane_band, x_in, Legend, Timeline};
use super::Dispatch;
use crate::lesson::roster;
use crate::lesson::LaneRef;
use crate::ui::course::{place_id, places, seeds_words, Origin, Place, Progress};
use crate::ui::route::Route;
use crate::ui::timeline::LaneKind;
use crate::ui::{self, Action, Outcome};
use crate::world::Micros;

pub use crate::ui::course::{Folder, Lessons as CourseState, OpenStatus};

pub use super::narration::narration;
use super::narration::rich;

/// What a view shows while the course loads or when it could not be read.
fn course_pending(state: &CourseState) -> Option<Html> {
    match state {
        CourseState::Ready(_) => None,
        CourseState::Failed(why) => Some(html! {
            <p id="course-error" class="errors has-errors" role="alert">
                { format!("The lessons could not be loaded: {why}. The sandbox works without them.") }
            </p>
        }),
        _ => Some(html! { <p class="loading" role="status">{ "Loading the lessons…" }</p> }),
    }
}

#[derive(Properties, PartialEq)]
pub struct CourseProps {
    pub course: CourseState,
    pub progress: Rc<Progress>,
    /// The lesson files view (opening a file), drawn under the list.
    #[prop_or_default]
    pub children: Html,
    /// What a link's file or the site's folder of lessons is doing, above the list.
    #[prop_or_default]
    pub notice: Html,
}

/// The lessons in order, each with what the learner has done of it.
#[function_component(CourseView)]
pub fn course_view(p: &CourseProps) -> Html {
    let list = match &p.course {
        CourseState::Ready(c) => html! {
            <ol id="course" class="lessons">
                { for c.lessons.iter().map(|cl| {
                    let l = &cl.lesson;
                    let percent = p.progress.percent(l);
                    let resume = p.progress.resume(l).map(|x| Route::place(&l.id, place_id(l, x)).to_hash())
                        .unwrap_or_else(|| Route::Lesson { lesson: l.id.clone(), place: None }.to_hash());
                    let started = percent > 0;
                    let summary = p.progress.summary(l);
                    let title_id = format!("lesson-{}-title", l.id);
                    html! {
                        <li class="lesson-card" data-lesson={l.id.clone()} aria-labelledby={title_id.clone()}>
                            <h3 id={title_id.clone()}>
                                <a href={Route::Lesson { lesson: l.id.clone(), place: None }.to_hash()}>{ rich(&cl.rich, &l.title) }</a>
                                if cl.origin == Origin::Opened { <span class="badge">{ " (your file)" }</span> }
                                if cl.origin == Origin::Served { <span class="badge">{ " (this site's)" }</span> }
                            </h3>
                            <p>{ rich(&cl.rich, &l.summary) }</p>
                            <p class="progress-text" id={format!("lesson-{}-progress", l.id)}>{ &summary }</p>
                            <progress max="100" value={percent.to_string()} aria-labelledby={format!("lesson-{}-progress", l.id)}></progress>
                            <a class="button" href={resume} aria-describedby={title_id}>{ if percent >= 100 { "Review" } else if started { "Continue" } else { "Start" } }</a>
                        </li>
                    }
                }) }
            </ol>
        },
        other => course_pending(other).unwrap_or_default(),
    };
    html! {
        <main class="course-page" id="main">
            <h2 id="view-title" tabindex="-1">{ "Lessons" }</h2>
            <p class="lead">{ "Each lesson walks through one part of the argument beside the live simulation. Your progress is kept in this browser." }</p>
            { p.notice.clone() }
            { list }
            { p.children.clone() }
        </main>
    }
}

#[derive(Properties)]
pub struct LessonProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
    pub width: u32,
    pub timeline_box: NodeRef,
    /// Opens the learner's current scenario in the sandbox.
    pub on_sandbox: Callback<()>,
    pub progress: Rc<Progress>,
}

impl PartialEq for LessonProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.app, &o.app)
            && self.width == o.width
            && self.timeline_box == o.timeline_box
            && self.on_sandbox == o.on_sandbox
            && Rc::ptr_eq(&self.progress, &o.progress)
    }
}

/// The verdict's headline alone, with the figures folded under it: in a lesson the headline
/// is what the step is about, and the figures are there for whoever wants them.
#[function_component(Headline)]
pub fn headline(p: &super::panels::OutcomeProps) -> Html {
    let o: &Outcome = &p.outcome;
    let broken = o.verdict.exclusion == crate::monitor::Exclusion::Broken
        || o.verdict.integrity == crate::monitor::Integrity::Corrupted;
    // Exclusion that holds because nobody got anything done is no success: such a run is shown
    // stuck, not green.
    let stuck =
        o.verdict.wait_cycle_count > 0 || o.verdict.class_work.iter().any(|w| w.completed == 0);
    let look = if broken {
        "broken"
    } else if stuck {
        "stuck"
    } else {
        "holds"
    };
    let counts = crate::ui::text::counts(&o.verdict);
    html! {
        <section class={classes!("panel", "verdict", "headline", look)} aria-labelledby="verdict-h">
            <h2 id="verdict-h" class="visually-hidden">{ format!("Verdict for the whole run (seed {})", o.seed) }</h2>
            if let Some(source) = &o.recorded {
                { super::panels::recorded_label(source, o.seed) }
            }
            <div id="verdict" role="status">
                <p id="verdict-headline">{ &o.headline }</p>
            </div>
            <details class="figures">
                <summary>{ format!("The figures (seed {})", o.seed) }</summary>
                { count_items(&counts) }
                { super::panels::flags_key(&counts) }
            </details>
            <ul id="class-work" class="class-work">
                { for o.verdict.class_work.iter().map(|w| html! {
                    <li data-class={w.class.clone()} class={classes!((w.completed == 0).then_some("bad"))}>
                        if w.completed == 0 {
                            { format!("Class {} completed no operation.", w.class) }
                        } else {
                            { format!("Class {}: {} completed, {} ms on average to get its locks.", w.class, w.completed, w.mean_wait_us() / 1000) }
                        }
                    </li>
                }) }
            </ul>
            if o.inventory.is_empty() {
                <div id="lesson-inventory" class="inventory">
                    <p>{ "Inventory check (it reads the scenario, not the run: does every row have one source of order?): no defect; every resource has one." }</p>
                </div>
            } else {
                // Folded: its findings are long, and the run and its controls come first.
                <details id="lesson-inventory" class="inventory">
                    <summary>{ inventory_summary(&o.inventory) }</summary>
                    { for o.inventory.iter().map(|f| html! { <p>{ f.text() }</p> }) }
                </details>
            }
        </section>
    }
}

fn lane_text(l: &LaneRef) -> String {
    match l {
        LaneRef::Client(n) => format!("client {n}"),
        LaneRef::Service(n) => format!("service {n}"),
        LaneRef::Resource(n) => format!("resource {n}"),
    }
}

/// The most highlighted events marked over the timeline.
const HIGHLIGHT_MARKS_MAX: usize = 60;

/// A lesson at a step or an exercise: the narration beside the live run.
#[function_component(LessonView)]
pub fn lesson_view(p: &LessonProps) -> Html {
    let app = &p.app;
    let d = &p.dispatch;
    let Some(run) = app.lesson.clone() else {
        return html! { <main id="main"><p class="loading" role="status">{ "Opening the lesson…" }</p></main> };
    };
    let l = run.lesson();
    let texts = run.texts();
    let all = places(l);
    let link = |x: Place| Route::place(&l.id, place_id(l, x)).to_hash();
    let title = match run.place {
        Place::Step(k) => l.steps[k].title.clone(),
        Place::Exercise(k) => l.exercises[k].title.clone(),
    };
    // While the step's prediction is open, the page shows the run only as far as the playhead
    // (nothing of it before the learner commits): see `LessonRun::hides_run`.
    let shown_until = run.shown_until(app.time);
    let hidden = shown_until.is_some();
    let awaiting = run.awaiting_answer();
    let shown_layout = match shown_until {
        Some(t) => Rc::new(app.outcome.layout.until(t)),
        None => Rc::clone(&app.outcome.layout),
    };
    let layout = &shown_layout;
    let width = p.width;
    let window = app.window;
    // Where the timeline's plot starts, right of its lane labels.
    let frame = timeline::frame_of(layout, width);
    let happened = move |at: Micros| shown_until.is_none_or(|t| at <= t);

    // What the step points at: lanes as bands and events as ticks over the timeline, and
    // each cue's moment as a tick of its own (all drawn for the eye; the words are beside).
    let (lanes, events, cue_ticks, watch) = match run.step() {
        Some(step) => {
            let h = &step.highlight;
            let lanes: Vec<(u32, u32)> = layout
                .lanes
                .iter()
                .enumerate()
                .filter(|(_, lane)| match lane.kind {
                    LaneKind::Client => h.client(&lane.label),
                    LaneKind::Service => lane
                        .label
                        .strip_prefix("service ")
                        .is_some_and(|n| h.service(n)),
                    LaneKind::Resource => h.resource(&lane.label),
                    LaneKind::Faults => false,
                })
                .map(|(k, _)| lane_band(layout.lanes.len(), k))
                .collect();
            let events: Vec<f64> = run
                .highlighted
                .iter()
                .filter_map(|&i| app.outcome.events.get(i))
                .filter(|e| (window.from..=window.to).contains(&e.at) && happened(e.at))
                .take(HIGHLIGHT_MARKS_MAX)
                .map(|e| x_in(e.at, window, frame, width))
                .collect();
            let cues: Vec<f64> = run
                .marks
                .iter()
                .flatten()
                .filter(|m| (window.from..=window.to).contains(&m.at) && happened(m.at))
                .map(|m| x_in(m.at, window, frame, width))
                .collect();
            let mut watch: Vec<String> = h.lanes.iter().map(lane_text).collect();
            // Whether there are overlaps to watch is an answer while a prediction is open.
            if h.overlaps && !hidden {
                watch.push("the overlaps".to_string());
            }
            (lanes, events, cues, watch)
        }
        None => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
    };

    let visible = run.visible_cues(app.time);
    let cue_count = run.step().map_or(0, |s| s.cues.len());
    let click = |action: Action| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(action.clone()))
    };
    let on_sandbox = {
        let cb = p.on_sandbox.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let controls = run.controls().to_vec();
    let height = timeline::height_of(layout.lanes.len());
    let selected_at = app
        .selected
        .and_then(|i| app.outcome.events.get(i))
        .map(|e| (e.at, layout.index.of(&e.what)));

    let step_part = run.step().map(|step| {
        let text = texts.steps.get(match run.place { Place::Step(k) => k, _ => 0 }).cloned().unwrap_or_default();
        html! {
            <>
            if !step.assumptions.is_empty() {
                <p class="assumptions"><strong>{ "Assuming " }</strong>{ for step.assumptions.iter().enumerate().map(|(i, a)| html! { <>{ if i > 0 { "; " } else { "" } }{ rich(&texts.rich, a) }</> }) }{ "." }</p>
            }
            <div class="narration">{ narration(&text.narration) }</div>
            if let Some(pr) = &step.prediction {
                <section id="predict" class="predict" aria-labelledby="predict-h">
                    <h3 id="predict-h">{ "Before you play it" }</h3>
                    <p>{ rich(&texts.rich, &pr.question) }</p>
                    if awaiting {
                        <div class="choices" role="group" aria-labelledby="predict-h">
                            { for pr.choices.iter().enumerate().map(|(k, c)| html! {
                                <button type="button" id={format!("predict-{k}")} onclick={click(Action::Lesson(ui::course::LessonAction::Predict(k)))}>{ rich(&texts.rich, &c.text) }</button>
                            }) }
                            <button type="button" id="show-me" class="quiet" onclick={click(Action::Lesson(ui::course::LessonAction::ShowMe))}>{ "Just show me" }</button>
                        </div>
                        <p class="hint">{ "Choose an answer to play the run. The verdict, the figures and the rest of the run appear once it has played." }</p>
                    } else {
                        <p id="predict-result" role="status" class={classes!(run.judged.as_ref().and_then(|j| j.right).map(|r| if r { "right" } else { "wrong" }))}>
                            { run.prediction_text().unwrap_or_default() }
                        </p>
                        // Committed: the answer need not wait for the run to play at its speed.
                        if run.offers_outcome() {
                            <button type="button" id="show-outcome" onclick={click(Action::Lesson(ui::course::LessonAction::ShowOutcome))}>{ "Show what happens" }</button>
                        }
                    }
                </section>
            }
            if !watch.is_empty() {
                <p class="watch">{ format!("Marked on the timeline: {}.", watch.join(", ")) }</p>
            }
            if cue_count > 0 && !awaiting {
                <section class="cues" aria-labelledby="cues-h">
                    <h3 id="cues-h">{ format!("As the run plays ({} of {cue_count})", visible.len()) }</h3>
                    <ol id="cues" aria-live="polite">
                        { for visible.iter().map(|&k| html! {
                            <li class="cue" data-cue={k.to_string()}>{ narration(text.cues.get(k).map(Vec::as_slice).unwrap_or(&[])) }</li>
                        }) }
                    </ol>
                    if visible.len() < cue_count {
                        <p class="hint">{ "Step or play forward: more appears as the playhead reaches each moment." }</p>
                    }
                </section>
            }
            if let (Some(g), false) = (&step.gate, hidden) {
                <section id="gate" class={classes!("gate", if run.gate == Some(true) { "met" } else { "waiting" })} aria-labelledby="gate-h">
                    <h3 id="gate-h">{ "Your turn" }</h3>
                    <p>{ rich(&texts.rich, &g.prompt) }</p>
                    <p id="gate-status" role="status">
                        { rich(&texts.rich, &run.gate_text) }
                    </p>
                </section>
            }
            </>
        }
    });

    let exercise_part = run.exercise().map(|e| {
        let k = match run.place { Place::Exercise(k) => k, _ => 0 };
        let intro = texts.exercises.get(k).cloned().unwrap_or_default();
        let attempt = run.attempt.clone();
        let passed = attempt.as_ref().is_some_and(|a| a.grade.passed);
        // An exercise solved on an earlier visit says so, with the code it gave.
        let solved_before = p
            .progress
            .lessons
            .get(&run.lesson().id)
            .and_then(|lp| lp.solved.get(&e.id))
            .cloned();
        html! {
            <section id="exercise" class="exercise" aria-labelledby="goal-h">
                <h3 id="goal-h">{ "Goal" }</h3>
                <p id="goal" class="goal">{ rich(&texts.rich, &e.goal) }</p>
                <div class="narration">{ narration(&intro) }</div>
                <div id="check-needs" class="check-needs">
                    <p>{ format!("Check runs the engine on {}; in every one of them:", seeds_words(&e.seeds)) }</p>
                    <ul>{ for e.check.iter().map(|c| html! { <li>{ c.words() }</li> }) }</ul>
                </div>
                <p class="learner-name">
                    <label for="learner-name">{ "Your name, for your completion code" }</label>
                    <input id="learner-name" type="text" maxlength={crate::lesson::code::NAME_CHARS_MAX.to_string()}
                        autocomplete="name" value={run.name.clone()}
                        oninput={ let dispatch = p.dispatch.clone(); move |e: InputEvent| {
                            let i: web_sys::HtmlInputElement = e.target_unchecked_into();
                            dispatch.dispatch(Action::Lesson(ui::course::LessonAction::Name(i.value())));
                        } } />
                </p>
                <div class="buttons">
                    <button id="check" type="button" onclick={click(Action::Lesson(ui::course::LessonAction::Check))}>{ "Check" }</button>
                    <button id="restart" type="button" onclick={click(Action::Lesson(ui::course::LessonAction::Restart))}>{ "Start again" }</button>
                </div>
                <div id="result" role="status">
                    if let Some(a) = &attempt {
                        if a.grade.passed {
                            <div class="success">
                                <p id="success"><strong>{ "Solved. " }</strong>{ rich(&texts.rich, &a.message) }</p>
                                if let Some(code) = &a.code {
                                    <p>
                                        <label for="completion-code">{ "Your completion code (give it to your facilitator):" }</label>
                                        <textarea id="completion-code" readonly=true rows={code_rows(code)} spellcheck="false" value={code.clone()} />
                                    </p>
                                } else {
                                    <p>{ "This attempt made too many changes to fit in a completion code; start again and make only the changes that matter." }</p>
                                }
                            </div>
                        } else {
                            <p id="try-again" class={classes!("not-yet", a.misconception.then_some("misconception"))}>{ rich(&texts.rich, &a.message) }</p>
                        }
                    } else if let Some(code) = &solved_before {
                        <div class="success" id="solved-before">
                            <p><strong>{ "Solved" }</strong>{ " on an earlier visit. Check again to make a code with your name and your changes now." }</p>
                            <p>
                                <label for="completion-code">{ "The code you got then:" }</label>
                                <textarea id="completion-code" readonly=true rows={code_rows(code)} spellcheck="false" value={code.clone()} />
                            </p>
                        </div>
                    }
                </div>
                if !e.hints.is_empty() {
                    <section class="hints" aria-labelledby="hints-h">
                        <h3 id="hints-h">{ "Hints" }</h3>
                        if run.hints > 0 {
                            <ol id="hints">
                                { for e.hints.iter().take(run.hints).enumerate().map(|(i, h)| html! {
                                    <li id={format!("hint-{}", i + 1)}><strong>{ format!("Hint {} of {}: ", i + 1, e.hints.len()) }</strong>{ rich(&texts.rich, h) }</li>
                                }) }
                            </ol>
                        }
                        if let Some(label) = run.next_hint_label() {
                            <button id="hint" type="button" onclick={click(Action::Lesson(ui::course::LessonAction::Hint))}>{ format!("Show {}", label.to_ascii_lowercase()) }</button>
                        }
                    </section>
                }
                <section class="solution" aria-labelledby="solution-h">
                    <h3 id="solution-h">{ "Solution" }</h3>
                    if run.solution {
                        <div id="solution">
                            <p>{ if passed { "Yours passed. One answer the author checked:" } else { "One answer the author checked:" } }</p>
                            <ul>{ for e.solution.iter().map(|x| html! { <li>{ x.words(&e.scenario) }</li> }) }</ul>
                            if !e.alternatives.is_empty() {
                                <p>{ "Other answers that pass:" }</p>
                                <ul>{ for e.alternatives.iter().map(|a| html! { <li>{ crate::lesson::edit::words(a, &e.scenario) }</li> }) }</ul>
                            }
                            if !e.explanation.is_empty() { <p>{ rich(&texts.rich, &e.explanation) }</p> }
                        </div>
                    } else {
                        <button id="show-solution" type="button" onclick={click(Action::Lesson(ui::course::LessonAction::ShowSolution))}>{ "Show the solution" }</button>
                    }
                </section>
            </section>
        }
    });

    // A step's sweep is drawn across the stage, where its axes are read at full size, and only
    // once the run has played: its figures answer a prediction as well as the run does.
    let sweep_part = run.step().and_then(|step| {
        let sw = step.sweep.as_ref().filter(|_| !hidden)?;
        let k = match run.place { Place::Step(k) => k, _ => 0 };
        let text = texts.steps.get(k)?;
        Some(html! {
            <StepSweep key={format!("{}/{}", l.id, step.id)} param={sw.param} points={Rc::new(text.sweep.clone())} caption={sw.caption.clone()} plot={text.sweep_plot.clone().map(AttrValue::from)} />
        })
    });

    let pos = all.iter().position(|x| *x == run.place).unwrap_or(0);
    html! {
        <main class="lesson-page" id="main">
            <section class="lesson-text" aria-labelledby="view-title">
                <p class="crumbs">
                    <a href="#/lessons">{ "Lessons" }</a>{ " › " }
                    <a href={Route::Lesson { lesson: l.id.clone(), place: None }.to_hash()}>{ rich(&texts.rich, &l.title) }</a>
                </p>
                <p class="where" id="place-of">{ ui::course::place_words(l, run.place) }</p>
                <h2 id="view-title" tabindex="-1" data-place={run.id().to_string()}>{ rich(&texts.rich, &title) }</h2>
                <div id="narration">
                    if pos == 0 && !texts.intro.is_empty() {
                        <div class="intro">{ narration(&texts.intro) }</div>
                    }
                    { for step_part }
                    { for exercise_part }
                </div>
                <nav class="step-nav" aria-label="Steps">
                    if let Some(prev) = run.previous() {
                        <a id="prev-step" class="button" href={link(prev)} rel="prev">{ "← Previous" }</a>
                    }
                    if let Some(next) = run.next() {
                        if run.can_go_on() {
                            <a id="next-step" class="button primary" href={link(next)} rel="next">{ "Next →" }</a>
                        } else {
                            <span id="next-step" class="button disabled" role="link" aria-disabled="true" aria-describedby="gate">{ "Next → (meet the goal first)" }</span>
                        }
                    } else {
                        <a id="next-step" class="button" href="#/lessons">{ "Back to the lessons" }</a>
                    }
                    <button id="open-in-sandbox" type="button" onclick={on_sandbox}>{ "Open in sandbox" }</button>
                </nav>
                <p class="hint keys">{ "Keys: n and p for the next and previous step; ← and → to step through the run." }</p>
            </section>
            <section class="stage lesson-run" aria-label="The run">
                if hidden {
                    <section id="verdict-pending" class="panel verdict headline pending" aria-labelledby="verdict-h">
                        <h2 id="verdict-h" class="visually-hidden">{ "Verdict for the whole run" }</h2>
                        <p>{ if awaiting { "The verdict appears once you have answered the question and the run has played." } else { "The verdict appears when the run has played to its end." } }</p>
                    </section>
                } else {
                    <Headline outcome={Rc::clone(&app.outcome)} />
                }
                <div class="picture-row">
                    <div class="timeline-frame">
                        <div class="timeline-box" ref={p.timeline_box.clone()}>
                            <Timeline id="timeline" title="Timeline of the run"
                                layout={Rc::clone(&shown_layout)} window={app.window} width={width}
                                diff={None::<Rc<crate::ui::compare::Diff>>} divergence={None::<u64>} selected={app.selected}
                                selected_at={selected_at} pinned={app.pinned}
                                seek_on_pin={!hidden} dispatch={d.clone()} />
                            <div class="highlights" aria-hidden="true">
                                { for lanes.iter().map(|(top, h)| html! {
                                    <div class="hl-lane" style={format!("top:{top}px;height:{h}px")}></div>
                                }) }
                                { for events.iter().map(|x| html! {
                                    <div class="hl-event" style={format!("left:{:.1}px;height:{height}px", x - 1.0)}></div>
                                }) }
                                { for cue_ticks.iter().map(|x| html! {
                                    <div class="cue-tick" style={format!("left:{:.1}px", x - 5.0)}></div>
                                }) }
                            </div>
                            <div class="playhead" aria-hidden="true"
                                style={timeline::playhead_style(app.time, app.window, frame, width)}></div>
                        </div>
                    </div>
                </div>
                { for sweep_part }
                if awaiting {
                    <p id="playback-waits" class="hint watched">{ "The run plays once you have answered the question beside it, or chosen to just see it." }</p>
                } else {
                    <Playback app={Rc::clone(app)} dispatch={d.clone()} />
                }
                if hidden {
                    if !controls.is_empty() {
                        <p id="controls-wait" class="hint watched">{ "The controls open once the run has played." }</p>
                    }
                } else if app.outcome.recorded.is_some() {
                    <p class="hint watched">{ "This run was recorded on real services, so it can be played and stepped through but not changed. Opened in the sandbox, the same scenario is simulated instead." }</p>
                } else if controls.is_empty() {
                    <p class="hint watched">{ "In this step the run is only watched: play it, step through it, or open it in the sandbox to change it." }</p>
                } else {
                    <Controls app={Rc::clone(app)} dispatch={d.clone()} allowed={Some(Rc::new(controls))} />
                }
                // Before the learner commits, no card at all; while the committed run plays, the
                // cards of the notes it has passed.
                if !hidden {
                    <Details app={Rc::clone(app)} dispatch={d.clone()} />
                } else if !awaiting {
                    { played_note_card(app.pinned, &shown_layout) }
                }
                <details class="legend-fold">
                    <summary>{ "Legend" }</summary>
                    <Legend height={height} dispatch={d.clone()} />
                </details>
            </section>
        </main>
    }
}

/// The card while a committed prediction's run plays: a note the run has passed opens with its
/// words, which tell only what has happened. An event's card lists what it led to, which may lie
/// ahead of the playhead and answer the question, so it waits for the run's end. `shown` is
/// the layout the timeline draws until then: a note it no longer shows (the playhead moved
/// back) has no card.
fn played_note_card(
    pinned: Option<crate::ui::Pinned>,
    shown: &crate::ui::timeline::Layout,
) -> Html {
    let lead = match pinned {
        Some(crate::ui::Pinned::Note(id)) => shown.note_named(id).map(|n| n.text.clone()),
        _ => None,
    };
    html! {
        <section id="event-details" class="details card" aria-live="polite" aria-label="Card of the note in view">
            if let Some(lead) = lead {
                <p class="card-lead">{ lead }</p>
            } else {
                <p class="hint">{ "Click a note the run has passed, or Tab to it: its card shows here. The cards of events and overlaps open once the run has played." }</p>
            }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct FacilitatorProps {
    pub course: CourseState,
}

/// Every exercise as a handout, and the checker for completion codes.
#[function_component(FacilitatorView)]
pub fn facilitator_view(p: &FacilitatorProps) -> Html {
    let codes = use_state(String::new);
    let rows = use_state(Vec::<roster::Row>::new);
    let base = gloo::utils::window()
        .location()
        .href()
        .ok()
        .map(|h| h.split('#').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    let choice = {
        let base = base.clone();
        use_reducer(move || crate::ui::print::Choice::new(&base))
    };
    let CourseState::Ready(course) = &p.course else {
        return html! {
            <main class="facilitator-page" id="main">
                <h2 id="view-title" tabindex="-1">{ "For facilitators" }</h2>
                { course_pending(&p.course).unwrap_or_default() }
            </main>
        };
    };
    let oninput = {
        let codes = codes.clone();
        Callback::from(move |e: InputEvent| codes.set(value_of(&e.into())))
    };
    let onverify = {
        let codes = codes.clone();
        let rows = rows.clone();
        let course = Arc::clone(course);
        Callback::from(move |_: MouseEvent| {
            rows.set(roster::verify(
                &course.plain(),
                &codes,
                roster::PAGE_CODES_MAX,
            ))
        })
    };
    let oncsv = {
        let rows = rows.clone();
        Callback::from(move |_: MouseEvent| {
            let _ = super::share::download(
                "completion-codes.csv",
                "text/csv",
                roster::csv(&rows).as_bytes(),
            );
        })
    };
    let on_choose = {
        let choice = choice.dispatcher();
        Callback::from(move |action| choice.dispatch(action))
    };
    html! {
        <main class="facilitator-page" id="main">
            <h2 id="view-title" tabindex="-1" class="no-print">{ "For facilitators" }</h2>
            <p class="lead no-print">{ "Every exercise of the course with its link, goal, hints and solutions, as an answer key; or the lessons you choose as a handout for the participants, each step with its narration, its run's picture and its link, each exercise with its goal and room to write, and no answer. The print leaves out the navigation and the checker." }</p>
            <super::print::SheetChooser choice={(*choice).clone()} lessons={super::print::chooser_lessons(course)} on={on_choose} />
            <section id="codes-section" class="panel codes no-print" aria-labelledby="codes-h">
                <h3 id="codes-h">{ "Check completion codes" }</h3>
                <p>{ "Paste the room's codes as they come (\"Alice: LS2…\", several to a line, wrapped by a chat app). Each is re-run: it passes only if its changes really meet the goal on every seed. A code proves that someone found a solution, not who: the same answer under two names is flagged." }</p>
                <label for="codes">{ "Completion codes" }</label>
                <textarea id="codes" rows="6" spellcheck="false" value={(*codes).clone()} {oninput} />
                <p><button id="verify-codes" type="button" onclick={onverify}>{ "Verify" }</button>
                    if !rows.is_empty() {
                        { " " }<button id="roster-csv" type="button" onclick={oncsv}>{ "Download as CSV" }</button>
                    }
                </p>
                <div role="status">
                    if !rows.is_empty() {
                        <ul id="roster-counts">
                            { for roster::counts(&rows).iter().map(|c| html! {
                                <li>{ format!("{}: {} verified, {} refused",
                                    if c.lesson.is_empty() { "Unreadable codes".to_string() } else { format!("{} / {}", c.lesson, c.exercise) },
                                    c.verified, c.refused) }</li>
                            }) }
                        </ul>
                        <table id="roster">
                            <thead><tr>
                                <th scope="col">{ "Name" }</th><th scope="col">{ "Lesson" }</th><th scope="col">{ "Exercise" }</th>
                                <th scope="col">{ "Result" }</th><th scope="col">{ "Why" }</th>
                            </tr></thead>
                            <tbody>
                            { for rows.iter().map(|r| html! {
                                <tr class={if r.verified { "verified" } else { "refused" }} title={r.code.clone()}>
                                    <td>{ if r.name.is_empty() { "(no name)" } else { r.name.as_str() } }</td>
                                    <td>{ &r.lesson }</td><td>{ &r.exercise }</td>
                                    <td>{ if r.verified { "Verified" } else { "Refused" } }</td>
                                    <td>{ &r.reason }
                                        if !r.verified {
                                            { " " }<code class="refused-code">{ roster::shown_code(&r.code) }</code>
                                        }
                                    </td>
                                </tr>
                            }) }
                            </tbody>
                        </table>
                    }
                </div>
            </section>
            { super::print::sheet_view(course, &choice, &base) }
        </main>
    }
}

/// The view for a fragment that names nothing.
/// What opening a lesson by its link is doing (when the address asks for one), and the
/// problems of the site's folder of lessons, above the course's list.
pub fn reach_status(by_link: bool, shelf: &crate::ui::course::Shelf) -> Html {
    let (status, folder) = (&shelf.open_status, &shelf.folder);
    // The lesson a step's address named came first; the course lists the rest when they come.
    let shipped = match (&shelf.lessons, &shelf.missing) {
        (_, Some(why)) => html! {
            <p class="errors has-errors" id="course-missing">{ format!("Some lessons could not be loaded: {why}.") }</p>
        },
        (CourseState::Ready(_), None) if !shelf.shipped_complete() => {
            html! { <p class="loading">{ "Loading the other lessons…" }</p> }
        }
        _ => html! {},
    };
    let link = if by_link {
        match status {
            OpenStatus::Fetching(url) => {
                html! { <p class="loading">{ format!("Fetching the lesson at {url}…") }</p> }
            }
            OpenStatus::Checking => {
                html! { <p class="loading">{ "Checking the lesson against the engine…" }</p> }
            }
            OpenStatus::Opened { id, title } => html! {
                <p class="opened">{ "Opened: " }<a href={Route::Lesson { lesson: id.clone(), place: None }.to_hash()}>{ title }</a></p>
            },
            OpenStatus::Failed(errors) => open_problems(errors),
            OpenStatus::Unavailable(why) => html! {
                <p class="errors has-errors">{ format!("The lesson this link names was not opened: {why}.") }</p>
            },
            OpenStatus::Idle => html! {},
        }
    } else {
        html! {}
    };
    let folder = match folder {
        Folder::Read(problems) if !problems.is_empty() => html! {
            <div class="errors has-errors" id="folder-problems">
                <p>{ "Some lessons served with this site could not be read:" }</p>
                <ul>{ for problems.iter().take(20).map(|p| html! { <li>{ p }</li> }) }</ul>
            </div>
        },
        _ => html! {},
    };
    html! {
        <div id="link-status" role="status">{ shipped }{ link }{ folder }</div>
    }
}

/// A lesson file's problems, each at its line (line 0 is about no line).
fn open_problems(errors: &[crate::lesson::LessonError]) -> Html {
    html! {
        <div class="errors has-errors">
            <p>{ format!("The lesson was not opened: {} problem(s).", errors.len()) }</p>
            <ul id="lesson-file-errors">
                { for errors.iter().take(50).map(|e| match e.line {
                    0 => html! { <li>{ &e.message }</li> },
                    line => html! { <li><strong>{ format!("line {line}") }</strong>{ ": " }{ &e.message }</li> },
                }) }
            </ul>
        </div>
    }
}

/// A link to a lesson this browser's course does not have (a facilitator's lesson never
/// opened here): how to load it, and what went wrong if its link tried.
pub fn not_loaded(lesson: &str, by_link: bool, status: &OpenStatus) -> Html {
    let why = match status {
        OpenStatus::Unavailable(why) if by_link => Some(html! {
            <p class="errors has-errors" id="not-loaded-why">{ format!("Its link tried to open it, but: {why}.") }</p>
        }),
        OpenStatus::Failed(errors) if by_link => Some(open_problems(errors)),
        _ => None,
    };
    html! {
        <main class="course-page" id="main">
            <h2 id="view-title" tabindex="-1">{ "This lesson is not loaded here" }</h2>
            <p id="not-loaded">{ format!("The lesson \"{lesson}\" is not one of this site's lessons, and it has not been opened in this browser. ") }
                { "A facilitator's lesson reaches this browser in one of three ways: by the link your facilitator gave (it ends in " }<code>{ "?open=" }</code>{ " and the lesson file's address), from the folder of lessons served with the site, or by opening the lesson file on the " }<a href="#/lessons">{ "Lessons" }</a>{ " page (\"Open a lesson file\"). Once opened, it stays in this browser." }</p>
            { why.unwrap_or_default() }
        </main>
    }
}

pub fn not_found(raw: &str) -> Html {
    html! {
        <main class="course-page" id="main">
            <h2 id="view-title" tabindex="-1">{ "Nothing here" }</h2>
            <p id="not-found">{ format!("The link \"#{raw}\" names no view or lesson of this app. ") }
                <a href="#/lessons">{ "See the lessons" }</a>{ " or " }<a href="#/sandbox">{ "open the sandbox" }</a>{ "." }</p>
        </main>
    }
}

#[derive(Properties, PartialEq)]
pub struct LessonFilesProps {
    pub status: OpenStatus,
    /// The ids of the files kept in this browser.
    pub opened: Vec<String>,
    pub on_open: Callback<String>,
    pub on_remove: Callback<String>,
}

/// Opening a lesson file: picked from the disk or pasted, checked like `lockstep lesson
/// check`, and kept in this browser so a facilitator can try an exercise without a rebuild.
#[function_component(LessonFiles)]
pub fn lesson_files(p: &LessonFilesProps) -> Html {
    let text = use_state(String::new);
    let oninput = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| text.set(value_of(&e.into())))
    };
    let onopen = {
        let text = text.clone();
        let cb = p.on_open.clone();
        Callback::from(move |_: MouseEvent| cb.emit((*text).clone()))
    };
    let onfile = {
        let text = text.clone();
        let cb = p.on_open.clone();
        Callback::from(move |e: Event| {
            let file = e
                .target()
                .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok())
                .and_then(|i| i.files())
                .and_then(|f| f.get(0));
            let Some(file) = file else {
                return;
            };
            let (text, cb) = (text.clone(), cb.clone());
            yew::platform::spawn_local(async move {
                if let Ok(v) = wasm_bindgen_futures::JsFuture::from(file.text()).await {
                    let t = v.as_string().unwrap_or_default();
                    text.set(t.clone());
                    cb.emit(t);
                }
            });
        })
    };
    html! {
        <section class="panel lesson-files" aria-labelledby="files-h">
            <h3 id="files-h">{ "Open a lesson file" }</h3>
            <p>{ "Pick a lesson file or paste one (the format is in docs/lessons.md). It is checked the way " }<code>{ "lockstep lesson check" }</code>{ " checks it, every claim run through the engine, and kept in this browser." }</p>
            <p class="field">
                <label for="lesson-file">{ "Lesson file (.md)" }</label>
                <input id="lesson-file" type="file" accept=".md,.markdown,text/markdown,text/plain" onchange={onfile} />
            </p>
            <label for="lesson-text">{ "Or paste the lesson here" }</label>
            <textarea id="lesson-text" rows="8" spellcheck="false" value={(*text).clone()} {oninput} />
            <p><button id="open-lesson" type="button" onclick={onopen} disabled={p.status == OpenStatus::Checking}>{ "Check and open" }</button></p>
            <div id="lesson-file-status" role="status">
                { match &p.status {
                    OpenStatus::Idle => html! {},
                    OpenStatus::Checking => html! { <p>{ "Checking the lesson against the engine…" }</p> },
                    OpenStatus::Opened { id, title } => html! {
                        <p class="opened">{ "Opened: " }<a href={Route::Lesson { lesson: id.clone(), place: None }.to_hash()}>{ title }</a>{ ". It is in the list above." }</p>
                    },
                    OpenStatus::Failed(errors) => open_problems(errors),
                    OpenStatus::Fetching(url) => html! { <p>{ format!("Fetching the lesson at {url}…") }</p> },
                    OpenStatus::Unavailable(why) => html! { <p class="errors has-errors">{ format!("The lesson was not opened: {why}.") }</p> },
                } }
            </div>
            if !p.opened.is_empty() {
                <h4>{ "Kept in this browser" }</h4>
                <ul id="opened-files">
                    { for p.opened.iter().map(|id| {
                        let cb = p.on_remove.clone();
                        let rid = id.clone();
                        html! {
                            <li>
                                <a href={Route::Lesson { lesson: id.clone(), place: None }.to_hash()}>{ id }</a>{ " " }
                                <button type="button" class="remove" aria-label={format!("Remove lesson file {id}")}
                                    onclick={Callback::from(move |_: MouseEvent| cb.emit(rid.clone()))}>{ "Remove" }</button>
                            </li>
                        }
                    }) }
                </ul>
            }
        </section>
    }
}

#[derive(Properties, PartialEq)]
pub struct StepSweepProps {
    pub param: crate::sweep::Param,
    pub points: Rc<Vec<crate::sweep::SweepPoint>>,
    pub caption: String,
    /// The course's file with the plot, or none (a lesson read in the page).
    pub plot: Option<AttrValue>,
}

// The plot of a sweep whose compact form has none is drawn by a bundle of its own (`plot`),
// loaded by the page's one loader (index.html's `__lockstepLoad`, which starts it once however
// many plots ask) on the first such step, so that the lesson view never links the plotting
// code. A plain function in a module of its own, as the page's policy forbids eval.
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "export function plot_sweep(json) { \
    return globalThis.__lockstepLoad('plot').then((m) => m.sweep_svg(json)); }")]
extern "C" {
    fn plot_sweep(json: &str) -> js_sys::Promise;
}

/// The plot of a sweep as SVG, drawn by the `plot` bundle.
async fn drawn_by_bundle(
    param: crate::sweep::Param,
    caption: &str,
    points: &[crate::sweep::SweepPoint],
) -> Result<String, String> {
    let json = crate::lesson::wire::sweep_plot_request(param, caption, points);
    let svg = wasm_bindgen_futures::JsFuture::from(plot_sweep(&json))
        .await
        .map_err(|e| {
            use wasm_bindgen::JsCast;
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .or_else(|| e.as_string())
                .unwrap_or_else(|| "the plot bundle could not be loaded".to_string())
        })?;
    svg.as_string()
        .ok_or_else(|| "the plot bundle answered no text".to_string())
}

/// A sweep a lesson step shows, computed by the engine when the lesson was read: its plot
/// (the command line's `sweep --svg`, as an image) and its numbers in a table.
#[function_component(StepSweep)]
pub fn step_sweep(p: &StepSweepProps) -> Html {
    // The image's address: the course's file, at once, or the plot the `plot` bundle draws. The
    // view is keyed by its lesson and step, so a plot drawn late never lands on another step.
    let drawn = use_state(|| None::<Result<AttrValue, String>>);
    {
        let drawn = drawn.clone();
        let (param, points, caption) = (p.param, Rc::clone(&p.points), p.caption.clone());
        use_effect_with(p.plot.is_none(), move |wanted| {
            if *wanted {
                yew::platform::spawn_local(async move {
                    let svg = drawn_by_bundle(param, &caption, &points).await;
                    drawn.set(Some(svg.map(|svg| {
                        format!("data:image/svg+xml,{}", js_sys::encode_uri_component(&svg)).into()
                    })));
                });
            }
        });
    }
    let shown = match &p.plot {
        Some(file) => Some(Ok(AttrValue::from(super::fetch::course_url(file)))),
        None => (*drawn).clone(),
    };
    let alt = format!(
        "Fraction of runs with exclusion broken against {}, with its 95% band; the table below has the same numbers.",
        p.param.axis()
    );
    let (w, h) = crate::plot::SIZE;
    html! {
        <figure id="step-sweep" class="step-sweep">
            { match &shown {
                Some(Ok(src)) => html! {
                    <img id="step-sweep-plot" width={w.to_string()} height={h.to_string()} {alt} src={src.clone()} />
                },
                Some(Err(why)) => html! {
                    <p class="errors has-errors" role="alert">{ format!("The plot could not be drawn ({why}); the table below has its numbers.") }</p>
                },
                None => html! { <p class="loading" role="status">{ "Drawing the plot…" }</p> },
            } }
            <figcaption>{ &p.caption }</figcaption>
            <table id="step-sweep-table">
                <thead><tr>
                    <th scope="col">{ p.param.axis() }</th><th scope="col">{ "runs with exclusion broken" }</th><th scope="col">{ "rate (95% interval)" }</th>
                </tr></thead>
                <tbody>
                { for p.points.iter().map(|pt| html! {
                    <tr>
                        <th scope="row">{ &pt.label }</th>
                        <td>{ format!("{} of {}", pt.broken_runs, pt.runs) }</td>
                        <td>{ format!("{:.2} ({:.2}–{:.2})", pt.broken_rate, pt.broken_low, pt.broken_high) }</td>
                    </tr>
                }) }
                </tbody>
            </table>
        </figure>
    }
}

/// Rows enough for a completion code to show whole in its box at the narrowest column (about
/// forty characters a row), so that it is seen and copied entire.
fn code_rows(code: &str) -> String {
    (code.len() / 40 + 1).clamp(2, 12).to_string()
}

/// The inventory check's findings counted, for the line a lesson shows folded over them.
fn inventory_summary(findings: &[crate::ui::InventoryNote]) -> String {
    let defects = findings.iter().filter(|f| f.defect).count();
    let warnings = findings.len() - defects;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "Inventory check (it reads the scenario, not the run: does every row have one source of order?): {}",
        match (defects, warnings) {
            (d, 0) => count(d, "defect"),
            (0, w) => count(w, "warning"),
            (d, w) => format!("{} and {}", count(d, "defect"), count(w, "warning")),
        }
    )
}
