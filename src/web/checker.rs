//! The lesson checker's worker, and the page's side of it. Checking a lesson file parses
//! Markdown and runs every claim through the engine: that code lives in its own bundle
//! (`src/bin/checker.rs`), started in a worker only when the user opens a file, so the pages'
//! bundles carry no Markdown parser and the page stays responsive while the engine runs.

use crate::ui::course::{check_lesson_file, CheckReply};

/// The worker's side: answers each file posted to it with a [`CheckReply`] as JSON.
pub fn start_worker() {
    super::worker::serve_worker(|text, post| {
        post(&serde_json::to_string(&check_lesson_file(text)).unwrap_or_default());
    });
}

/// The page's side: checks a file in a new worker and calls `done` with the answer. The
/// worker ends once it has answered.
pub fn check_in_worker(text: String, done: impl FnOnce(CheckReply) + 'static) {
    // A checker that cannot run says nothing about the lesson: the reply names the cause (the
    // network being off, most often) and no line of the file.
    let online = || gloo::utils::window().navigator().on_line();
    let failed = move |why: String| CheckReply::Unavailable {
        why: if online() {
            format!("{} ({why})", crate::ui::reach::checker_failure(true))
        } else {
            crate::ui::reach::checker_failure(false)
        },
    };
    // The callback is called once, by whichever of the answer and an error comes first.
    let done = std::rc::Rc::new(std::cell::RefCell::new(Some(done)));
    let finish = {
        let done = std::rc::Rc::clone(&done);
        move |worker: Option<&web_sys::Worker>, reply: CheckReply| {
            if let Some(w) = worker {
                w.terminate();
            }
            if let Some(f) = done.borrow_mut().take() {
                f(reply);
            }
        }
    };
    let on_reply = {
        let finish = finish.clone();
        move |worker: &web_sys::Worker, data: String| {
            finish(
                Some(worker),
                CheckReply::from_json(&data).unwrap_or_else(failed),
            );
        }
    };
    let on_error = {
        let finish = finish.clone();
        move |worker: &web_sys::Worker| {
            finish(Some(worker), failed("its worker stopped".to_string()));
        }
    };
    if let Err(e) = super::worker::ask_worker("./checker_loader.js", text, on_reply, on_error) {
        finish(None, failed(e));
    }
}

/// [`check_in_worker`] as a future, for a page that checks several files in turn.
pub async fn check(text: String) -> CheckReply {
    let slot = std::rc::Rc::new(std::cell::RefCell::new(None));
    let mut text = Some(text);
    let promise = {
        let slot = std::rc::Rc::clone(&slot);
        js_sys::Promise::new(&mut move |resolve, _| {
            let slot = std::rc::Rc::clone(&slot);
            if let Some(text) = text.take() {
                check_in_worker(text, move |reply| {
                    *slot.borrow_mut() = Some(reply);
                    let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
                });
            }
        })
    };
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    let reply = slot.borrow_mut().take();
    reply.unwrap_or(CheckReply::Unavailable {
        why: crate::ui::reach::checker_failure(true),
    })
}
