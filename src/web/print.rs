//! The facilitator's printouts drawn: the answer key or the participants' handout, as
//! [`crate::ui::print::sheet`] decides what each carries.

use yew::prelude::*;

use super::course::rich;
use crate::lesson::narration::Rich;
use crate::ui::course::Course;
use crate::ui::print::{sheet, Printout, SheetExercise, SheetLesson};
use crate::ui::route::Route;

/// A sheet of the course: `base` is the site's address, so a printed link can be typed.
pub fn sheet_view(course: &Course, printout: Printout, base: &str) -> Html {
    let s = sheet(course.lessons.iter().map(|cl| &cl.lesson), printout);
    html! {
        <div id="sheet" class={classes!("sheet", if printout == Printout::Key { "sheet-key" } else { "sheet-handout" })}>
            <p class="sheet-title print-only">{ format!("Lockstep: {}", printout.title().to_ascii_lowercase()) }</p>
            if printout == Printout::Handout {
                <p class="sheet-intro">{ "Open each exercise by its link. Change only the controls it names, then press Check: it runs the engine on every seed listed and says whether the goal is met on all of them. Hints come one at a time in the app too. A solved exercise gives you a completion code: give it to your facilitator." }</p>
            }
            { for s.lessons.iter().map(|l| {
                let empty = crate::sorted::SortedMap::new();
                let map = course.lessons.iter().find(|cl| cl.lesson.id == l.id).map_or(&empty, |cl| &*cl.rich);
                lesson(l, map, base)
            }) }
        </div>
    }
}

fn lesson(l: &SheetLesson, map: &Rich, base: &str) -> Html {
    let link = Route::Lesson {
        lesson: l.id.clone(),
        place: None,
    }
    .to_hash();
    html! {
        <section class="handout-lesson" aria-labelledby={format!("h-{}", l.id)} data-lesson={l.id.clone()}>
            <h3 id={format!("h-{}", l.id)}>{ rich(map, &l.title) }</h3>
            if !l.outline.is_empty() {
                <p>{ rich(map, &l.summary) }</p>
                <p class="link">{ "Link: " }<a href={link.clone()}>{ format!("{base}{link}") }</a></p>
                <p><strong>{ "Steps:" }</strong></p>
                <ol class="outline">{ for l.outline.iter().map(|t| html! { <li>{ rich(map, t) }</li> }) }</ol>
            }
            { for l.exercises.iter().map(|e| exercise(l, e, map, base)) }
        </section>
    }
}

fn exercise(l: &SheetLesson, e: &SheetExercise, map: &Rich, base: &str) -> Html {
    let hash = Route::place(&l.id, &e.id).to_hash();
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
            if let Some(a) = &e.answers {
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
            }
        </article>
    }
}

#[derive(Properties, PartialEq)]
pub struct ChooserProps {
    pub printout: Printout,
    pub on_choose: Callback<Printout>,
}

/// The choice of printout and its print button, kept off the paper.
#[function_component(SheetChooser)]
pub fn sheet_chooser(p: &ChooserProps) -> Html {
    let radio = |which: Printout, id: &'static str| {
        let cb = p.on_choose.clone();
        html! {
            <label for={id}>
                <input type="radio" name="sheet" id={id} checked={p.printout == which}
                    onchange={Callback::from(move |_: Event| cb.emit(which))} />
                { which.title() }
            </label>
        }
    };
    let print = Callback::from(|_: MouseEvent| {
        let _ = gloo::utils::window().print();
    });
    html! {
        <div class="sheet-chooser no-print">
            <fieldset>
                <legend>{ "Show and print" }</legend>
                { radio(Printout::Key, "sheet-key") }
                { radio(Printout::Handout, "sheet-handout") }
            </fieldset>
            <p><button id="print" type="button" onclick={print}>
                { if p.printout == Printout::Key { "Print the answer key" } else { "Print the handout" } }
            </button></p>
        </div>
    }
}
