//! The facilitator's printouts drawn: the answer key ([`crate::ui::print::key`]) or the
//! participants' handout ([`crate::ui::print::handout`], the one `lockstep lesson handout`
//! writes too), and the choices that make them ([`crate::ui::print::Choice`]).

use std::rc::Rc;

use yew::prelude::*;

use super::controls::{checked_of, value_of};
use super::narration::{inlines, narration, rich};
use crate::lesson::narration::Rich;
use crate::ui::course::{Course, Origin};
use crate::ui::print::{
    key, Choice, ChoiceAction, HandoutExercise, HandoutStep, Printout, SheetExercise, SheetLesson,
    HANDOUT_INTRO,
};
use crate::ui::route::Route;

impl Reducible for Choice {
    type Action = ChoiceAction;

    fn reduce(self: Rc<Self>, action: ChoiceAction) -> Rc<Self> {
        Rc::new(Choice::reduce(&self, action))
    }
}

/// The sheet the facilitator chose, of the course: `base` is the site's address, so a printed
/// link of the key can be typed.
pub fn sheet_view(course: &Course, choice: &Choice, base: &str) -> Html {
    match choice.printout {
        Printout::Key => key_view(course, base),
        Printout::Handout => handout_view(course, choice),
    }
}

fn title(printout: Printout) -> Html {
    html! {
        <p class="sheet-title print-only">{ format!("Lockstep: {}", printout.title().to_ascii_lowercase()) }</p>
    }
}

fn key_view(course: &Course, base: &str) -> Html {
    let s = key(course.lessons.iter().map(|cl| &cl.lesson));
    html! {
        <div id="sheet" class="sheet sheet-key">
            { title(Printout::Key) }
            { for s.lessons.iter().map(|l| {
                let empty = crate::sorted::SortedMap::new();
                let map = course.lessons.iter().find(|cl| cl.lesson.id == l.id).map_or(&empty, |cl| &*cl.rich);
                key_lesson(l, map, base)
            }) }
        </div>
    }
}

fn key_lesson(l: &SheetLesson, map: &Rich, base: &str) -> Html {
    html! {
        <section class="handout-lesson" aria-labelledby={format!("h-{}", l.id)} data-lesson={l.id.clone()}>
            <h3 id={format!("h-{}", l.id)}>{ rich(map, &l.title) }</h3>
            { for l.exercises.iter().map(|e| key_exercise(l, e, map, base)) }
        </section>
    }
}

fn key_exercise(l: &SheetLesson, e: &SheetExercise, map: &Rich, base: &str) -> Html {
    let hash = Route::place(&l.id, &e.id).to_hash();
    let a = &e.answers;
    html! {
        <article class="handout-exercise" data-exercise={e.id.clone()}>
            <h4>{ rich(map, &e.title) }</h4>
            <p class="link">{ "Link: " }<a href={hash.clone()}>{ format!("{base}{hash}") }</a></p>
            <p><strong>{ "Goal: " }</strong>{ rich(map, &e.goal) }</p>
            <p><strong>{ "Controls: " }</strong>{ e.controls.join(", ") }{ format!("; checked on {}.", e.seeds) }</p>
            if !e.hints.is_empty() {
                <p><strong>{ "Hints, in order:" }</strong></p>
                <ol class="hints">{ for e.hints.iter().map(|h| html! { <li>{ rich(map, h) }</li> }) }</ol>
            }
            <div class="answers">
                <p class="solution"><strong>{ "Solution: " }</strong><span class="edits">{ &a.solution }</span></p>
                { for a.alternatives.iter().map(|x| html! {
                    <p class="also"><strong>{ "Also passes: " }</strong><span class="edits">{ x }</span></p>
                }) }
                if !a.explanation.is_empty() { <p>{ rich(map, &a.explanation) }</p> }
                if !a.misconceptions.is_empty() {
                    <p><strong>{ "Wrong approaches the app recognises:" }</strong></p>
                    <ul class="misconceptions">{ for a.misconceptions.iter().map(|(example, hint)| html! {
                        <li><span class="edits">{ example }</span>{ ": " }<span class="said">{ rich(map, hint) }</span></li>
                    }) }</ul>
                }
            </div>
        </article>
    }
}

/// Room to write, on paper.
fn write_here() -> Html {
    html! { <div class="write" role="presentation"></div> }
}

fn link(link: &str) -> Html {
    html! { <p class="link">{ "Link: " }<a href={link.to_string()}>{ link }</a></p> }
}

fn handout_view(course: &Course, choice: &Choice) -> Html {
    let h = choice.handout(&course.lessons);
    html! {
        <div id="sheet" class="sheet sheet-handout">
            { title(Printout::Handout) }
            if h.lessons.is_empty() {
                <p id="handout-empty" class="no-print">{ "Choose the lessons of the handout above." }</p>
            } else {
                <p class="sheet-intro">{ HANDOUT_INTRO }</p>
            }
            { for h.lessons.iter().map(|l| html! {
                <section class="handout-lesson" aria-labelledby={format!("h-{}", l.id)} data-lesson={l.id.clone()}>
                    <h3 id={format!("h-{}", l.id)}>{ inlines(&l.title) }</h3>
                    <p>{ inlines(&l.summary) }</p>
                    { for l.steps.iter().map(step) }
                    { for l.exercises.iter().map(exercise) }
                </section>
            }) }
        </div>
    }
}

fn step(s: &HandoutStep) -> Html {
    html! {
        <article class="handout-step" data-step={s.id.clone()}>
            <h4>{ format!("Step {}: ", s.number) }{ inlines(&s.title) }</h4>
            { link(&s.link) }
            <div class="narration">{ narration(&s.narration) }</div>
            if let Some(name) = &s.picture {
                <figure class="step-picture">
                    <img src={super::fetch::course_url(name)} alt="The step's run as it opens: its lanes, its events and its verdict." />
                </figure>
            }
            if let Some((question, choices)) = &s.question {
                <div class="question">
                    <p><strong>{ "Before it runs: " }</strong>{ inlines(question) }</p>
                    <ul class="choices">{ for choices.iter().map(|c| html! { <li>{ inlines(c) }</li> }) }</ul>
                    { write_here() }
                </div>
            }
            if let Some(task) = &s.task {
                <div class="task">
                    <p><strong>{ "Your turn: " }</strong>{ inlines(task) }</p>
                    { write_here() }
                </div>
            }
        </article>
    }
}

fn exercise(e: &HandoutExercise) -> Html {
    html! {
        <article class="handout-exercise" data-exercise={e.id.clone()}>
            <h4>{ "Exercise: " }{ inlines(&e.title) }</h4>
            { link(&e.link) }
            <div class="narration">{ narration(&e.narration) }</div>
            <p class="goal"><strong>{ "Goal: " }</strong>{ inlines(&e.goal) }</p>
            <p><strong>{ "Controls: " }</strong>{ e.controls.join(", ") }{ format!("; checked on {}.", e.seeds) }</p>
            if let Some(h) = &e.hint {
                <p class="hint"><strong>{ "First hint: " }</strong>{ inlines(h) }</p>
            }
            { write_here() }
        </article>
    }
}

#[derive(Properties, PartialEq)]
pub struct ChooserProps {
    pub choice: Choice,
    /// The course's lessons: id, title, and whether the page has their runs' pictures.
    pub lessons: Vec<(String, Html, bool)>,
    pub on: Callback<ChoiceAction>,
}

/// The choice of printout, the handout's lessons, hint and links, and the print button, kept
/// off the paper.
#[function_component(SheetChooser)]
pub fn sheet_chooser(p: &ChooserProps) -> Html {
    let radio = |which: Printout, id: &'static str| {
        let cb = p.on.clone();
        html! {
            <label for={id}>
                <input type="radio" name="sheet" id={id} checked={p.choice.printout == which}
                    onchange={Callback::from(move |_: Event| cb.emit(ChoiceAction::Show(which)))} />
                { which.title() }
            </label>
        }
    };
    let print = Callback::from(|_: MouseEvent| {
        let _ = gloo::utils::window().print();
    });
    let handout = p.choice.printout == Printout::Handout;
    let onhint =
        p.on.reform(|e: Event| ChoiceAction::FirstHint(checked_of(&e)));
    let onbase =
        p.on.reform(|e: InputEvent| ChoiceAction::LinkBase(value_of(&e.into())));
    let error = p.choice.base().err();
    html! {
        <div class="sheet-chooser no-print">
            <fieldset>
                <legend>{ "Show and print" }</legend>
                { radio(Printout::Key, "sheet-key") }
                { radio(Printout::Handout, "sheet-handout") }
            </fieldset>
            if handout {
                <fieldset id="handout-lessons">
                    <legend>{ "Lessons on the handout" }</legend>
                    { for p.lessons.iter().map(|(id, title, pictured)| {
                        let input = format!("handout-lesson-{id}");
                        let (cb, lesson) = (p.on.clone(), id.clone());
                        html! {
                            <label for={input.clone()}>
                                <input type="checkbox" id={input} checked={p.choice.has(id)}
                                    onchange={Callback::from(move |e: Event| cb.emit(ChoiceAction::Lesson(lesson.clone(), checked_of(&e))))} />
                                { title.clone() }
                                if !pictured {
                                    <span class="muted">{ " (not part of this site's build: no pictures of its runs here; " }<code>{ "lockstep lesson handout" }</code>{ " draws them)" }</span>
                                }
                            </label>
                        }
                    }) }
                </fieldset>
                <p><label for="handout-hint">
                    <input type="checkbox" id="handout-hint" checked={p.choice.first_hint} onchange={onhint} />
                    { "Each exercise's first hint (never a later one: the last hints give the answer)" }
                </label></p>
                <p class="field">
                    <label for="handout-link-base">{ "Links to (the room's address)" }</label>
                    <input type="url" id="handout-link-base" spellcheck="false" value={p.choice.link_base.clone()}
                        aria-invalid={error.is_some().then_some("true")}
                        aria-describedby={error.is_some().then_some("handout-link-error")} oninput={onbase} />
                </p>
                if let Some(why) = error {
                    <p id="handout-link-error" class="errors has-errors" role="alert">
                        { format!("The links use this page's address until this one reads: {why}.") }
                    </p>
                }
            }
            <p><button id="print" type="button" onclick={print}>
                { if handout { "Print the handout" } else { "Print the answer key" } }
            </button></p>
        </div>
    }
}

/// The course's lessons as the chooser lists them.
pub fn chooser_lessons(course: &Course) -> Vec<(String, Html, bool)> {
    course
        .lessons
        .iter()
        .map(|cl| {
            (
                cl.lesson.id.clone(),
                rich(&cl.rich, &cl.lesson.title),
                cl.origin == Origin::Shipped,
            )
        })
        .collect()
}
