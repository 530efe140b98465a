//! The lesson checker's worker, and the page's side of it. Checking a lesson file parses
//! Markdown and runs every claim through the engine: that code lives in its own bundle
//! (`src/bin/checker.rs`), started in a worker only when the user opens a file, so the pages'
//! bundles carry no Markdown parser and the page stays responsive while the engine runs.

use crate::ui::course::{check_lesson_file, CheckReply};

/// The worker's side: answers each file posted to it with a [`CheckReply`] as JSON.
pub fn start_worker() {
    super::serve_worker(|text, post| {
        post(&serde_json::to_string(&check_lesson_file(text)).unwrap_or_default());
    });
}

/// The page's side: checks a file in a new worker and calls `done` with the answer. The
/// worker ends once it has answered.
pub fn check_in_worker(text: String, done: impl FnOnce(CheckReply) + 'static) {
    let failed = |why: String| CheckReply::Refused {
        errors: vec![(1, format!("the lesson checker could not run: {why}"))],
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
                serde_json::from_str(&data).unwrap_or_else(|e| failed(e.to_string())),
            );
        }
    };
    let on_error = {
        let finish = finish.clone();
        move |worker: &web_sys::Worker| {
            finish(
                Some(worker),
                failed("the worker stopped with an error".to_string()),
            );
        }
    };
    if let Err(e) = super::ask_worker("./checker_loader.js", text, on_reply, on_error) {
        finish(None, failed(e));
    }
}
