//! Fetching: the shipped lessons, the folder of lessons beside the site, a lesson file a link
//! names (checked against the page's policy and bounded in size) and any text file next to
//! the page, each saying how it failed. Kept apart from the views, which only start a fetch
//! and draw what it reports to the shelf.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::checker;
use crate::lesson::wire;
use crate::ui;
use crate::ui::course::{OpenedFiles, Shelf, ShelfAction};

/// The address of a file of the shipped lessons (`course/NAME`), beside the page.
pub(crate) fn course_url(name: &str) -> String {
    format!("{}/{name}", wire::COURSE_DIR)
}

/// The shipped lessons: the course's index, then a lesson step's own lesson, which shows at
/// once, then the other lessons' files, all asked for together.
pub(super) async fn fetch_course(first: Option<String>, dispatch: UseReducerDispatcher<Shelf>) {
    let loaded = fetch_shipped(first, &dispatch).await;
    dispatch.dispatch(ShelfAction::Fetched(loaded));
}

async fn fetch_shipped(
    first: Option<String>,
    dispatch: &UseReducerDispatcher<Shelf>,
) -> Result<Vec<wire::Loaded>, String> {
    let index = fetch_text(&course_url("index.json")).await?;
    let ids = wire::read_index(&index)?;
    let mut files = vec![("index.json".to_string(), index)];
    // A lesson that is not a shipped one (opened, or from the folder) has no file here.
    if let Some(id) = first.filter(|id| ids.contains(id)) {
        let name = format!("{id}.json");
        let text = fetch_text(&course_url(&name)).await?;
        if let Ok(lesson) = wire::read_lesson_file(&text) {
            dispatch.dispatch(ShelfAction::FetchedLesson(Box::new(lesson)));
        }
        files.push((name, text));
    }
    // Every request starts before the first answer is awaited.
    let asked: Vec<(String, js_sys::Promise)> = ids
        .iter()
        .map(|id| format!("{id}.json"))
        .filter(|name| files.iter().all(|(n, _)| n != name))
        .map(|name| {
            let request = gloo::utils::window().fetch_with_str(&course_url(&name));
            (name, request)
        })
        .collect();
    for (name, request) in asked {
        let text = response_text(&course_url(&name), request).await?;
        files.push((name, text));
    }
    wire::read_course_files(&files)
}

/// The lessons of the folder served beside the site (`lessons/index.json` and the files it
/// lists), each checked like a picked file, and the problems of those that could not be read.
/// A site without the folder has no index, which is no problem.
pub(super) async fn read_folder() -> (Vec<wire::Loaded>, Vec<String>) {
    let index = match fetch_lesson(ui::reach::FOLDER_INDEX).await {
        Ok(json) => json,
        Err(ui::reach::Fetch::Status(404)) => return (Vec::new(), Vec::new()),
        Err(e) => {
            let why = ui::reach::fetch_failure(ui::reach::FOLDER_INDEX, &e);
            return (Vec::new(), vec![why]);
        }
    };
    let names = match ui::reach::read_folder_index(&index) {
        Ok(names) => names,
        Err(why) => return (Vec::new(), vec![why]),
    };
    let (mut lessons, mut problems) = (Vec::new(), Vec::new());
    for name in names {
        let url = format!("lessons/{name}");
        let text = match fetch_lesson(&url).await {
            Ok(text) => text,
            Err(e) => {
                problems.push(ui::reach::fetch_failure(&url, &e));
                continue;
            }
        };
        match checker::check(text.clone()).await.into_opened(&text) {
            Ok((loaded, _)) => lessons.push(loaded),
            Err(errors) => problems.push(format!(
                "{url}: {}",
                errors
                    .iter()
                    .map(|e| match e.line {
                        0 => e.message.clone(),
                        line => format!("line {line}: {}", e.message),
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    (lessons, problems)
}

/// Opens the lesson file a link names: checked against the site's allowed addresses, fetched
/// with its size bounded, and checked like a picked file, unless it is the copy this browser
/// already keeps from that address.
pub(super) async fn open_by_link(
    raw: String,
    opened: OpenedFiles,
    dispatch: UseReducerDispatcher<Shelf>,
) {
    let window = gloo::utils::window();
    let document = gloo::utils::document();
    let base = document
        .base_uri()
        .ok()
        .flatten()
        .unwrap_or_else(|| window.location().href().unwrap_or_default());
    let Ok(url) = web_sys::Url::new_with_base(&raw, &base) else {
        dispatch.dispatch(ShelfAction::Unavailable(format!(
            "\"{raw}\" is not the address of a lesson file"
        )));
        return;
    };
    let url = url.href();
    let csp = document
        .query_selector("meta[http-equiv='Content-Security-Policy']")
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"));
    let page_origin = window.location().origin().unwrap_or_default();
    if let Err(why) = ui::reach::may_fetch(&url, &page_origin, csp.as_deref()) {
        dispatch.dispatch(ShelfAction::Unavailable(why));
        return;
    }
    dispatch.dispatch(ShelfAction::FetchingFile(url.clone()));
    let kept = opened.from_source(&url);
    let text = match fetch_lesson(&url).await {
        Ok(text) => text,
        Err(e) => {
            dispatch.dispatch(match kept {
                Some(_) => ShelfAction::Kept(url),
                None => ShelfAction::Unavailable(ui::reach::fetch_failure(&url, &e)),
            });
            return;
        }
    };
    if kept.is_some_and(|f| f.text == text) {
        dispatch.dispatch(ShelfAction::Kept(url));
        return;
    }
    dispatch.dispatch(ShelfAction::Checking);
    let reply = checker::check(text.clone()).await;
    dispatch.dispatch(ShelfAction::from_reply(reply, &text, Some(url)));
}

/// Fetches a lesson file or a folder's index, no larger than a lesson may be, saying how it
/// failed: offline, the server's status, too large, or the browser's refusal.
async fn fetch_lesson(url: &str) -> Result<String, ui::reach::Fetch> {
    use ui::reach::Fetch;
    let window = gloo::utils::window();
    let refused = |e: wasm_bindgen::JsValue| {
        if !gloo::utils::window().navigator().on_line() {
            return Fetch::Offline;
        }
        let words = js_sys::Reflect::get(&e, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| e.as_string())
            .unwrap_or_else(|| "the request failed".to_string());
        Fetch::Refused(words)
    };
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(refused)?;
    let response: web_sys::Response = response.dyn_into().map_err(refused)?;
    if !response.ok() {
        return Err(Fetch::Status(response.status()));
    }
    let max = crate::lesson::LESSON_BYTES_MAX;
    let declared = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(n) = declared.filter(|&n| n > max) {
        return Err(Fetch::TooLarge(n));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(refused)?)
        .await
        .map_err(refused)?
        .as_string()
        .unwrap_or_default();
    if text.len() > max {
        return Err(Fetch::TooLarge(text.len()));
    }
    Ok(text)
}

/// Fetches a text file next to the page.
async fn fetch_text(url: &str) -> Result<String, String> {
    response_text(url, gloo::utils::window().fetch_with_str(url)).await
}

/// The text of a request already sent to `url`.
async fn response_text(url: &str, request: js_sys::Promise) -> Result<String, String> {
    let why = |e: wasm_bindgen::JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let response = wasm_bindgen_futures::JsFuture::from(request)
        .await
        .map_err(why)?;
    let response: web_sys::Response = response.dyn_into().map_err(why)?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(why)?)
        .await
        .map_err(why)?;
    text.as_string().ok_or_else(|| format!("{url} is not text"))
}
