//! The page's workers (the editor's reader, the lesson checker, the lab): starting one from
//! the loader Trunk writes, and the two sides of a request, the worker's and the page's. Kept
//! apart because each worker's bundle links this and nothing of the views.

use wasm_bindgen::JsCast;

/// Starts a module worker from a loader Trunk writes beside the page (`./NAME_loader.js`),
/// resolved against the document's base so the site may live under any path.
pub(crate) fn module_worker(loader: &str) -> Result<web_sys::Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let base = gloo::utils::document()
        .base_uri()
        .ok()
        .flatten()
        .unwrap_or_default();
    let url = web_sys::Url::new_with_base(loader, &base)
        .map(|u| u.href())
        .unwrap_or_else(|_| loader.to_string());
    web_sys::Worker::new_with_options(&url, &options).map_err(|e| format!("{e:?}"))
}

/// What a worker says once it can take a request.
pub(super) const WORKER_READY: &str = "ready";

/// The worker's side of a page worker: answers each request posted to it with `answer`, which
/// may post any number of replies through the function it is given, then says it is ready.
pub(crate) fn serve_worker(mut answer: impl FnMut(&str, &dyn Fn(&str)) + 'static) {
    use wasm_bindgen::closure::Closure;
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let text = e.data().as_string().unwrap_or_default();
            let post = |reply: &str| {
                let _ = reply_to.post_message(&wasm_bindgen::JsValue::from_str(reply));
            };
            answer(&text, &post);
        });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = scope.post_message(&wasm_bindgen::JsValue::from_str(WORKER_READY));
}

/// The page's side: starts a worker from `loader`, posts `request` once it is ready, and hands
/// each reply's text to `on_reply` and a crash to `on_error` (each given the worker, to end
/// it). The handlers live as long as the worker.
pub(crate) fn ask_worker(
    loader: &str,
    request: String,
    mut on_reply: impl FnMut(&web_sys::Worker, String) + 'static,
    mut on_error: impl FnMut(&web_sys::Worker) + 'static,
) -> Result<web_sys::Worker, String> {
    use wasm_bindgen::closure::Closure;
    let worker = module_worker(loader)?;
    let onmessage = {
        let worker = worker.clone();
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data().as_string().unwrap_or_default();
            if data == WORKER_READY {
                let _ = worker.post_message(&wasm_bindgen::JsValue::from_str(&request));
            } else {
                on_reply(&worker, data);
            }
        })
    };
    let onerror = {
        let worker = worker.clone();
        Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| on_error(&worker))
    };
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onmessage.forget();
    onerror.forget();
    Ok(worker)
}
