//! The app in headless Chromium: the Yew views draw `lockstep::ui`'s state and turn real DOM
//! events into actions. Each test mounts the root component in its own element, acts the way a
//! user would (choosing options, clicking, typing) and reads what the page then says. The
//! expected words come from `lockstep::ui` run in the same WebAssembly module, so these tests
//! check the wiring and the drawing; `tests/it/ui.rs` checks the behaviour natively.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use gloo::storage::{LocalStorage, Storage};
use gloo_timers::future::sleep;
use lockstep::ui::{self, Action, App, STORAGE_KEY, STORAGE_SET_ASIDE_KEY};
use lockstep::web::Root;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{
    Element, Event, EventInit, HtmlElement, HtmlInputElement, HtmlSelectElement,
    HtmlTextAreaElement, InputEvent, InputEventInit,
};

wasm_bindgen_test_configure!(run_in_browser);

const STAGGERED: &str = "08-staggered-migration.toml";
const MALFORMED: &str = "duration_ms = \"oops\"";

/// One mounted app, in its own element; unmounted and removed when dropped. Every query is
/// scoped to this element, so apps of other tests cannot answer for it.
struct Page {
    root: Element,
    handle: Option<yew::AppHandle<Root>>,
}

impl Page {
    /// Mounts the app on a new element in the body, with whatever local storage holds.
    async fn mount() -> Page {
        let document = gloo::utils::document();
        let root = document.create_element("div").expect("a div");
        document
            .body()
            .expect("a body")
            .append_child(&root)
            .expect("appended");
        let handle = yew::Renderer::<Root>::with_root(root.clone()).render();
        let page = Page {
            root,
            handle: Some(handle),
        };
        page.until("the app renders its verdict", |p| {
            p.find("#verdict-headline").is_some()
        })
        .await;
        page
    }

    fn find(&self, selector: &str) -> Option<Element> {
        self.root
            .query_selector(selector)
            .expect("a valid selector")
    }

    fn get(&self, selector: &str) -> Element {
        self.find(selector)
            .unwrap_or_else(|| panic!("no {selector} on the page"))
    }

    fn text(&self, selector: &str) -> String {
        self.get(selector).text_content().unwrap_or_default()
    }

    /// Yields to the browser until the condition holds. The bound only stops a broken page
    /// from hanging the run; nothing here depends on how fast the page is.
    async fn until(&self, what: &str, condition: impl Fn(&Page) -> bool) {
        for _ in 0..1_000 {
            if condition(self) {
                return;
            }
            sleep(Duration::from_millis(10)).await;
        }
        panic!("the page never showed: {what}");
    }

    /// Chooses an option of a select, as a user would: the value changes, then `change` fires.
    fn choose(&self, selector: &str, value: &str) {
        let select: HtmlSelectElement = self.get(selector).dyn_into().expect("a select");
        select.set_value(value);
        assert_eq!(select.value(), value, "{selector} offers {value}");
        let init = EventInit::new();
        init.set_bubbles(true);
        let change = Event::new_with_event_init_dict("change", &init).expect("an event");
        select.dispatch_event(&change).expect("dispatched");
    }

    /// Replaces a text area's text, as typing does: the value changes, then `input` fires.
    fn type_into(&self, selector: &str, text: &str) {
        let area: HtmlTextAreaElement = self.get(selector).dyn_into().expect("a textarea");
        area.set_value(text);
        let init = InputEventInit::new();
        init.set_bubbles(true);
        let input = InputEvent::new_with_event_init_dict("input", &init).expect("an event");
        area.dispatch_event(&input).expect("dispatched");
    }

    fn click(&self, selector: &str) {
        self.get(selector)
            .dyn_into::<HtmlElement>()
            .expect("an HTML element")
            .click();
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.destroy();
        }
        self.root.remove();
    }
}

fn clear_storage() {
    LocalStorage::clear();
}

#[wasm_bindgen_test]
async fn start_mounts_on_app_and_the_verdict_is_a_status() {
    clear_storage();
    let document = gloo::utils::document();
    let root = document.create_element("div").expect("a div");
    root.set_id("app");
    document
        .body()
        .expect("a body")
        .append_child(&root)
        .unwrap();
    lockstep::web::start();
    // `start` keeps no handle, so this app stays mounted; its element is removed at the end
    // and every other test queries only its own element.
    let page = Page { root, handle: None };
    page.until("the app renders on #app", |p| {
        p.find("#verdict-headline").is_some()
    })
    .await;

    let verdict = page.get("#verdict");
    assert_eq!(verdict.get_attribute("role").as_deref(), Some("status"));
    let headline = page.text("#verdict-headline");
    assert!(headline.starts_with("Exclusion "), "{headline}");
    assert!(
        verdict
            .text_content()
            .unwrap_or_default()
            .contains(&headline),
        "the status region holds the headline"
    );
    // The default scenario, word for word as the engine says it.
    assert_eq!(headline, App::open(ui::DEFAULT_SOURCE).outcome.headline);
    let select: HtmlSelectElement = page.get("#scenario").dyn_into().unwrap();
    assert_eq!(select.value(), ui::DEFAULT_SOURCE);
    assert_eq!(
        select.length() as usize,
        ui::picker().len(),
        "every built-in and the blank scenario are offered"
    );
}

#[wasm_bindgen_test]
async fn picking_08_then_locking_online_in_old_makes_exclusion_hold() {
    clear_storage();
    let page = Page::mount().await;
    let broken = App::open(STAGGERED);
    let fixed = broken.reduce(Action::Toggle(ui::toggles::Toggle::Protocol {
        class: "online".into(),
        choice: "single:old".into(),
    }));

    page.choose("#scenario", STAGGERED);
    page.until("the staggered migration's verdict", |p| {
        p.text("#verdict-headline") == broken.outcome.headline
    })
    .await;
    assert!(page
        .text("#verdict-headline")
        .starts_with("Exclusion broken"));
    let lost = page.text("#verdict-counts [data-count=\"lost-updates\"] .count-value");
    assert_ne!(lost, "0", "lost updates are shown");

    page.choose("#protocol-online", "single:old");
    page.until("the verdict after locking online in old", |p| {
        p.text("#verdict-headline") == fixed.outcome.headline
    })
    .await;
    assert!(page
        .text("#verdict-headline")
        .starts_with("Exclusion holds"));
    assert_eq!(
        page.text("#verdict-counts [data-count=\"lost-updates\"] .count-value"),
        "0"
    );
    // The editor shows the scenario that ran.
    let editor: HtmlTextAreaElement = page.get("#editor").dyn_into().unwrap();
    assert_eq!(editor.value(), fixed.text);
    let protocol: HtmlSelectElement = page.get("#protocol-online").dyn_into().unwrap();
    assert_eq!(protocol.value(), "single:old");
}

#[wasm_bindgen_test]
async fn stepping_forward_moves_the_playhead_sentence() {
    clear_storage();
    let page = Page::mount().await;
    let app = App::open(ui::DEFAULT_SOURCE);
    let before = page.text("#playhead-verdict");
    assert_eq!(before.trim(), app.playhead_text());

    page.click("#step-forward");
    let after = app.reduce(Action::StepForward).playhead_text();
    page.until("the playhead after one step", |p| {
        p.text("#playhead-verdict").trim() == after
    })
    .await;
    assert_ne!(page.text("#playhead-verdict"), before);
    assert!(after.contains(&format!("(event 1 of {})", app.outcome.events.len())));

    page.click("#to-end");
    let end = app.reduce(Action::ToEnd).playhead_text();
    page.until("the playhead at the end", |p| {
        p.text("#playhead-verdict").trim() == end
    })
    .await;
    page.click("#to-start");
    page.until("the playhead back at the start", |p| {
        p.text("#playhead-verdict") == before
    })
    .await;
}

#[wasm_bindgen_test]
async fn invalid_toml_shows_errors_and_keeps_the_verdict() {
    clear_storage();
    let page = Page::mount().await;
    let headline = page.text("#verdict-headline");
    assert_eq!(page.text("#editor-errors").trim(), "", "no errors at first");

    page.type_into("#editor", MALFORMED);
    page.until("the editor's errors", |p| {
        !p.text("#editor-errors").trim().is_empty()
    })
    .await;
    let errors = page.get("#editor-errors");
    assert_eq!(errors.get_attribute("role").as_deref(), Some("alert"));
    let expected = App::open(ui::DEFAULT_SOURCE).reduce(Action::Edit(MALFORMED.into()));
    let shown = errors.text_content().unwrap_or_default();
    for e in &expected.errors {
        assert!(shown.contains(&e.location), "{shown} lacks {}", e.location);
        assert!(shown.contains(&e.message), "{shown} lacks {}", e.message);
    }
    assert_eq!(
        page.text("#verdict-headline"),
        headline,
        "the last run stays"
    );

    // Fixing the text clears the errors.
    page.type_into("#editor", ui::source_text(ui::DEFAULT_SOURCE).unwrap());
    page.until("the errors cleared", |p| {
        p.text("#editor-errors").trim().is_empty()
    })
    .await;
    assert_eq!(page.text("#verdict-headline"), headline);
}

#[wasm_bindgen_test]
async fn the_own_order_checkbox_shows_each_services_order() {
    clear_storage();
    let page = Page::mount().await;
    assert!(page.find("#own-order-view").is_none(), "hidden at first");
    page.click("#own-order");
    page.until("the own-order view", |p| {
        p.find("#own-order-view").is_some()
    })
    .await;
    let checkbox: HtmlInputElement = page.get("#own-order").dyn_into().unwrap();
    assert!(checkbox.checked());
    let app = App::open(ui::DEFAULT_SOURCE);
    let view = page.get("#own-order-view");
    let lists = view.query_selector_all("section.order").unwrap();
    assert_eq!(lists.length() as usize, app.outcome.orders.len());
    let text = view.text_content().unwrap_or_default();
    for order in app.outcome.orders.iter() {
        assert!(
            text.contains(&format!("service {}", order.service)),
            "{text}"
        );
        let first = &order.entries[0];
        assert!(
            text.contains(&format!("instant {}: {}", first.instant, first.text)),
            "{text}"
        );
    }

    page.click("#own-order");
    page.until("the own-order view hidden", |p| {
        p.find("#own-order-view").is_none()
    })
    .await;
}

#[wasm_bindgen_test]
async fn an_edited_text_survives_a_reload_even_when_invalid() {
    clear_storage();
    {
        let page = Page::mount().await;
        page.choose("#scenario", STAGGERED);
        page.until("the staggered migration", |p| {
            p.text("#verdict-headline").starts_with("Exclusion broken")
        })
        .await;
        page.type_into("#editor", MALFORMED);
        page.until("the errors", |p| {
            !p.text("#editor-errors").trim().is_empty()
        })
        .await;
    }
    let saved = LocalStorage::raw()
        .get_item(STORAGE_KEY)
        .unwrap()
        .expect("the state was saved");
    let saved = ui::Saved::from_json(&saved).expect("readable");
    assert_eq!(saved.source, STAGGERED);
    assert_eq!(saved.text, MALFORMED);

    // A new visit: the same source, the text as typed, its errors, the source's run.
    let page = Page::mount().await;
    let editor: HtmlTextAreaElement = page.get("#editor").dyn_into().unwrap();
    assert_eq!(editor.value(), MALFORMED);
    assert!(!page.text("#editor-errors").trim().is_empty());
    assert_eq!(
        page.text("#verdict-headline"),
        App::open(STAGGERED).outcome.headline
    );
    let select: HtmlSelectElement = page.get("#scenario").dyn_into().unwrap();
    assert_eq!(select.value(), STAGGERED);
}

#[wasm_bindgen_test]
async fn an_unreadable_saved_state_is_set_aside_with_a_notice() {
    clear_storage();
    LocalStorage::raw()
        .set_item(STORAGE_KEY, "{not json")
        .expect("stored");
    let page = Page::mount().await;
    let notice = page.get("#notice");
    assert_eq!(notice.get_attribute("role").as_deref(), Some("alert"));
    let words = notice.text_content().unwrap_or_default();
    assert!(words.contains("set aside"), "{words}");
    assert_eq!(
        LocalStorage::raw()
            .get_item(STORAGE_SET_ASIDE_KEY)
            .unwrap()
            .as_deref(),
        Some("{not json"),
        "the unreadable value is kept"
    );
    assert_eq!(
        page.text("#verdict-headline"),
        App::open(ui::DEFAULT_SOURCE).outcome.headline
    );
    page.click("#notice button");
    page.until("the notice dismissed", |p| p.find("#notice").is_none())
        .await;
}

#[wasm_bindgen_test]
async fn toggles_wait_while_the_text_has_an_error_and_discarding_brings_them_back() {
    clear_storage();
    let page = Page::mount().await;
    page.choose("#scenario", STAGGERED);
    page.until("08 is shown", |p| {
        p.text("#verdict-headline").starts_with("Exclusion broken")
    })
    .await;
    let disabled = |p: &Page| {
        p.get("#protocol-online")
            .closest("fieldset[disabled]")
            .ok()
            .flatten()
            .is_some()
    };
    assert!(!disabled(&page));
    assert!(page.find("#reset").is_none(), "not edited yet");
    page.type_into("#editor", MALFORMED);
    page.until("the toggles are disabled", disabled).await;
    assert!(page.find("#discard-edit").is_some());
    page.click("#discard-edit");
    page.until("the toggles work again", |p| !disabled(p)).await;
    assert_eq!(page.text("#editor-errors"), "");
    // A toggle marks the scenario as changed, and "Reset" brings back the built-in.
    page.choose("#protocol-online", "single:old");
    page.until("the fix is shown", |p| {
        p.text("#verdict-headline").starts_with("Exclusion holds")
    })
    .await;
    page.until("the reset button appears", |p| p.find("#reset").is_some())
        .await;
    page.click("#reset");
    page.until("the built-in is back", |p| {
        p.text("#verdict-headline").starts_with("Exclusion broken") && p.find("#reset").is_none()
    })
    .await;
}
