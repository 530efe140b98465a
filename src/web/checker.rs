//! The lesson checker's worker, and the page's side of it. Checking a lesson file parses
//! Markdown and runs every claim through the engine: that code lives in its own bundle
//! (`src/bin/checker.rs`), started in a worker only when the user opens a file, so the pages'
//! bundles carry no Markdown parser and the page stays responsive while the engine runs.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::ui::course::{check_lesson_file, CheckReply};

/// What the worker says once it can take a file.
const READY: &str = "ready";

/// The worker's side: answers each file posted to it with a [`CheckReply`] as JSON.
pub fn start_worker() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            let reply = check_lesson_file(&text);
            let json = serde_json::to_string(&reply).unwrap_or_default();
            let _ = reply_to.post_message(&JsValue::from_str(&json));
        });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = scope.post_message(&JsValue::from_str(READY));
}

/// The page's side: checks a file in a new worker and calls `done` with the answer. The
/// worker ends once it has answered.
pub fn check_in_worker(text: String, done: impl FnOnce(CheckReply) + 'static) {
    let failed = |why: String| CheckReply::Refused {
        errors: vec![(1, format!("the lesson checker could not run: {why}"))],
    };
    let worker = match super::module_worker("./checker_loader.js") {
        Ok(w) => w,
        Err(e) => {
            done(failed(e));
            return;
        }
    };
    // The callback is called once, by whichever of the answer and an error comes first.
    let done = std::rc::Rc::new(std::cell::RefCell::new(Some(done)));
    let finish = {
        let done = std::rc::Rc::clone(&done);
        let worker = worker.clone();
        move |reply: CheckReply| {
            worker.terminate();
            if let Some(f) = done.borrow_mut().take() {
                f(reply);
            }
        }
    };
    let onmessage = {
        let worker = worker.clone();
        let finish = finish.clone();
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data().as_string().unwrap_or_default();
            if data == READY {
                let _ = worker.post_message(&JsValue::from_str(&text));
                return;
            }
            finish(serde_json::from_str(&data).unwrap_or_else(|e| failed(e.to_string())));
        })
    };
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
        finish(failed("the worker stopped with an error".to_string()));
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    // The worker lives until it answers; its handlers must live as long.
    onmessage.forget();
    onerror.forget();
}
