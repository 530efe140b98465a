//! The editor's reader: a worker (`src/bin/reader.rs`) that reads the sandbox's TOML, and the
//! page's side of it. The TOML reader's code for the scenario's types is a large part of a
//! bundle, so the sandbox's first download leaves it out ([`crate::ui::Codec::SANDBOX`]) and
//! starts this worker when the first text needs reading: an edit, or a saved text with errors.
//! One worker serves the page from then on; it answers every text with a
//! [`crate::ui::Reading`], and the app ignores answers about texts it no longer shows.

use std::cell::RefCell;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::worker::WORKER_READY;
use super::Dispatch;
use crate::ui::{Codec, Reading};

/// The worker's side: answers each text posted to it with a [`Reading`] as JSON.
pub fn start_worker() {
    super::worker::serve_worker(|text, post| {
        post(&serde_json::to_string(&Reading::of(text.to_string())).unwrap_or_default());
    });
}

/// The page's reader, once started.
struct Reader {
    worker: web_sys::Worker,
    /// Whether the worker has said it is ready; until then only the latest text waits.
    ready: bool,
    /// The latest text asked about, and whether it was posted yet: if the worker stops, the
    /// app is told about this one (it ignores answers about any other).
    latest: Option<(String, bool)>,
    /// Where answers go: the sandbox showing now, and how it reads the scenario's JSON.
    to: Option<(Dispatch, Codec)>,
    /// Set when the worker could not start or stopped: every text is then answered with why.
    broken: Option<String>,
}

thread_local! {
    static READER: RefCell<Option<Reader>> = const { RefCell::new(None) };
}

/// Reads `text` in the worker, starting it the first time, and dispatches the answer as an
/// [`crate::ui::Action::Read`] to `dispatch`.
pub fn read(text: String, dispatch: Dispatch, codec: Codec) {
    let started = READER.with(|r| r.borrow().is_some());
    if !started {
        if let Err(why) = start() {
            dispatch.dispatch(Reading::failed(text, &why).into_action(codec));
            return;
        }
    }
    let broken = READER.with(|r| {
        let mut r = r.borrow_mut();
        let reader = r.as_mut().expect("started above");
        reader.to = Some((dispatch.clone(), codec));
        if let Some(why) = &reader.broken {
            return Some(why.clone());
        }
        if reader.ready {
            let _ = reader.worker.post_message(&JsValue::from_str(&text));
        }
        reader.latest = Some((text.clone(), reader.ready));
        None
    });
    if let Some(why) = broken {
        dispatch.dispatch(Reading::failed(text, &why).into_action(codec));
    }
}

fn start() -> Result<(), String> {
    let worker = super::worker::module_worker("./reader_loader.js")?;
    let onmessage = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(|e: web_sys::MessageEvent| {
        let data = e.data().as_string().unwrap_or_default();
        if data == WORKER_READY {
            READER.with(|r| {
                if let Some(reader) = r.borrow_mut().as_mut() {
                    reader.ready = true;
                    if let Some((text, sent)) = &mut reader.latest {
                        if !*sent {
                            let _ = reader.worker.post_message(&JsValue::from_str(text));
                            *sent = true;
                        }
                    }
                }
            });
            return;
        }
        let (to, latest) = READER.with(|r| {
            let r = r.borrow();
            let r = r.as_ref();
            (
                r.and_then(|r| r.to.clone()),
                r.and_then(|r| r.latest.as_ref().map(|(t, _)| t.clone())),
            )
        });
        if let Some((dispatch, codec)) = to {
            // An answer that does not read (a reader from another build, say) is about the
            // latest text, so the editor says why rather than wait for it forever.
            let reading = Reading::from_json(&data).unwrap_or_else(|e| {
                Reading::failed(
                    latest.unwrap_or_default(),
                    &format!("the reader's answer could not be read: {e}"),
                )
            });
            dispatch.dispatch(reading.into_action(codec));
        }
    });
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(|_: web_sys::Event| {
        // A worker that failed to load or crashed answers nothing more: the latest text and
        // every later one get the reason instead, so the editor never waits forever.
        let why = "the editor's reader could not be loaded or stopped with an error".to_string();
        let pending = READER.with(|r| {
            let mut r = r.borrow_mut();
            let reader = r.as_mut()?;
            reader.broken = Some(why.clone());
            reader.worker.terminate();
            let (text, _) = reader.latest.take()?;
            Some((text, reader.to.clone()?))
        });
        if let Some((text, (dispatch, codec))) = pending {
            dispatch.dispatch(Reading::failed(text, &why).into_action(codec));
        }
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onmessage.forget();
    onerror.forget();
    READER.with(|r| {
        *r.borrow_mut() = Some(Reader {
            worker,
            ready: false,
            latest: None,
            to: None,
            broken: None,
        })
    });
    Ok(())
}
