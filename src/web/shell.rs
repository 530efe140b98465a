//! The roots each bundle mounts: the sandbox's own ([`SandboxShell`]), the embed view's
//! ([`EmbedShell`]), the lesson view's ([`LessonRoot`]) and the whole app ([`Root`]), with the
//! page's header they draw. Each decides which view the address names is its bundle's and
//! hands any other to the bundle that draws it; the views themselves are in `views.rs`.

use yew::prelude::*;

use super::display;
use super::route::{title_of, use_focus_on_view, use_route, use_title};
use super::shelf::{course_view, use_course};
use super::start::load_other_bundle;
use super::views::{embed_page, Sandbox};
use super::{course, Defs, CODEC};
use crate::ui;
use crate::ui::route::{Bundle, Route, Section};

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
pub(super) fn embed_shell() -> Html {
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

/// The lesson view's own bundle (`src/bin/course.rs`): the lessons and their places. Any other
/// view is another bundle's, so the page loads again and `index.html` picks that one.
#[function_component(LessonRoot)]
pub(super) fn lesson_root() -> Html {
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
