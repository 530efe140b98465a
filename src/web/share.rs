//! Sharing a run: its permalink, the embed code, the files it exports and the files it imports.
//! Every format is made by [`crate::ui::export`] and [`crate::ui::share`], natively tested; this
//! module only moves bytes between them and the browser (clipboard, downloads, file picker,
//! drag and drop).

use std::rc::Rc;

use base64::Engine as _;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

use super::Dispatch;
use crate::ui::embed::Theme;
use crate::ui::export::{self, RunMeta, PNG_KEYWORD};
use crate::ui::sharing::{embed_controls, ShareAction, Sharing};
use crate::ui::{self, Action};

/// The address of the app itself, without its fragment: where links point.
pub fn app_url() -> String {
    let location = gloo::utils::window().location();
    format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_else(|_| "/".into())
    )
}

/// Offers `bytes` as a file download.
pub fn download(name: &str, mime: &str, bytes: &[u8]) -> Result<(), JsValue> {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = gloo::utils::document().create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    web_sys::Url::revoke_object_url(&url)?;
    Ok(())
}

/// Copies text to the clipboard; the returned message says whether it worked (a page without
/// clipboard permission still shows the text, selected, to copy by hand).
async fn copy(text: String) -> String {
    let clipboard = gloo::utils::window().navigator().clipboard();
    match JsFuture::from(clipboard.write_text(&text)).await {
        Ok(_) => "Copied.".into(),
        Err(_) => "The browser did not allow copying; the text is selected: press Ctrl+C.".into(),
    }
}

/// The timeline as a PNG: the exported SVG drawn on a canvas at twice its size, stamped with the
/// run so that importing the picture reproduces it.
async fn png_of(svg: &str, meta: &str) -> Result<Vec<u8>, String> {
    export::png_with_text(&png_of_svg(svg).await?, PNG_KEYWORD, meta)
}

/// An SVG picture as PNG, drawn on a canvas at twice its size.
pub async fn png_of_svg(svg: &str) -> Result<Vec<u8>, String> {
    let why = |e: JsValue| e.as_string().unwrap_or_else(|| format!("{e:?}"));
    let img = web_sys::HtmlImageElement::new().map_err(why)?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(svg.as_bytes());
    img.set_src(&format!("data:image/svg+xml;base64,{encoded}"));
    JsFuture::from(img.decode()).await.map_err(why)?;
    let (w, h) = (img.natural_width().max(1), img.natural_height().max(1));
    let canvas: web_sys::HtmlCanvasElement = gloo::utils::document()
        .create_element("canvas")
        .map_err(why)?
        .dyn_into()
        .map_err(|_| "no canvas".to_string())?;
    canvas.set_width(w * 2);
    canvas.set_height(h * 2);
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .map_err(why)?
        .ok_or("no 2d context")?
        .dyn_into()
        .map_err(|_| "no 2d context".to_string())?;
    ctx.scale(2.0, 2.0).map_err(why)?;
    ctx.draw_image_with_html_image_element(&img, 0.0, 0.0)
        .map_err(why)?;
    let url = canvas.to_data_url_with_type("image/png").map_err(why)?;
    let data = url
        .split_once(',')
        .map(|(_, d)| d)
        .ok_or("the canvas gave no PNG")?;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| e.to_string())
}

/// Reads a picked or dropped file and imports it.
async fn import_file(
    file: web_sys::File,
    dispatch: Dispatch,
    status: UseReducerDispatcher<Sharing>,
) {
    let name = file.name();
    if file.size() > export::IMPORT_BYTES_MAX as f64 {
        status.dispatch(ShareAction::ImportStatus(format!(
            "{name}: the file is larger than {} bytes; nothing was imported.",
            export::IMPORT_BYTES_MAX
        )));
        return;
    }
    let bytes = match JsFuture::from(file.array_buffer()).await {
        Ok(buffer) => js_sys::Uint8Array::new(&buffer).to_vec(),
        Err(_) => {
            status.dispatch(ShareAction::ImportStatus(format!(
                "{name}: the file could not be read."
            )));
            return;
        }
    };
    match export::import(&bytes) {
        Ok(imported) => {
            status.dispatch(ShareAction::ImportStatus(format!("Imported {name}.")));
            if let Some(recording) = imported.recording {
                dispatch.dispatch(Action::OpenRecording(recording));
                return;
            }
            dispatch.dispatch(Action::Import {
                scenario: Box::new(imported.scenario),
                what: format!("{} from {name}", imported.kind),
            });
            // A picture the page made puts the playhead back where it was.
            if let Some(t) = imported.playhead_us {
                dispatch.dispatch(Action::Seek(t));
            }
        }
        Err(e) => status.dispatch(ShareAction::ImportStatus(format!(
            "{name} was not imported, and the scenario shown is unchanged: {e}"
        ))),
    }
}

/// The file name stem for exports: the scenario's name in lower case, words joined by `-`.
fn stem(app: &ui::App) -> String {
    let words: Vec<String> = app
        .scenario
        .name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
        .map(|w| w.to_ascii_lowercase())
        .collect();
    format!(
        "{}-seed-{}",
        if words.is_empty() {
            "lockstep".into()
        } else {
            words.join("-")
        },
        app.scenario.seed
    )
}

#[derive(Properties)]
pub struct ShareProps {
    pub app: Rc<ui::App>,
    pub dispatch: Dispatch,
}

impl Reducible for Sharing {
    type Action = ShareAction;

    fn reduce(self: Rc<Self>, action: ShareAction) -> Rc<Self> {
        Rc::new(Sharing::reduce(self.as_ref(), action))
    }
}

impl PartialEq for ShareProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.app.outcome, &other.app.outcome)
            && self.app.time == other.app.time
            && self.app.zoom == other.app.zoom
            && self.app.own_order == other.app.own_order
            && self.app.compare.as_ref().map(|c| c.toggle.clone())
                == other.app.compare.as_ref().map(|c| c.toggle.clone())
            && self.dispatch == other.dispatch
    }
}

/// The share panel: link, embed code, export and import.
#[function_component(SharePanel)]
pub fn share_panel(p: &ShareProps) -> Html {
    let panel = use_reducer(Sharing::default);
    let app = &p.app;
    // The scenario's source (a built-in and its changes, or the whole scenario compressed) is
    // worked out once per run; only the playhead and view change the link as it plays.
    let source = {
        let app = Rc::clone(app);
        use_memo(
            (app.source.clone(), Rc::as_ptr(&app.outcome) as usize),
            move |_| crate::ui::share::source_of_with(app.codec, &app.source, &app.scenario),
        )
    };
    let current = app.link_from((*source).clone());
    let link = format!("{}{}", app_url(), current.to_fragment());

    let bad_origin = panel.origins().1;
    let embed = panel.embed(&current, &app.scenario);
    let snippet = embed.snippet(&app_url(), &format!("Lockstep: {}", app.scenario.name));

    let copy_into = |id: &'static str, text: String| {
        let status = panel.dispatcher();
        Callback::from(move |_: MouseEvent| {
            if let Some(el) = gloo::utils::document()
                .get_element_by_id(id)
                .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
            {
                el.select();
            }
            let status = status.clone();
            let text = text.clone();
            wasm_bindgen_futures::spawn_local(async move {
                status.dispatch(ShareAction::Status(copy(text).await));
            });
        })
    };

    let export_button = |id: &'static str, label: &'static str, kind: &'static str| {
        let app = Rc::clone(app);
        let status = panel.dispatcher();
        let onclick = Callback::from(move |_: MouseEvent| {
            let name = stem(&app);
            let scenario = app.scenario.clone();
            let outcome = Rc::clone(&app.outcome);
            let time = app.time;
            let link = format!("{}{}", app_url(), app.link().to_fragment());
            let status = status.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let done = match kind {
                    "svg" => {
                        let meta = RunMeta::of(&scenario, &outcome).at(time);
                        let svg =
                            export::timeline_svg_with(&scenario, &outcome, &meta, Some(&link));
                        download(&format!("{name}.svg"), "image/svg+xml", svg.as_bytes())
                            .map_err(|e| format!("{e:?}"))
                    }
                    "png" => {
                        let svg = export::timeline_svg(&scenario, &outcome, None);
                        let meta =
                            serde_json::to_string(&RunMeta::of(&scenario, &outcome).at(time))
                                .unwrap_or_default();
                        match png_of(&svg, &meta).await {
                            Ok(png) => download(&format!("{name}.png"), "image/png", &png)
                                .map_err(|e| format!("{e:?}")),
                            Err(e) => Err(e),
                        }
                    }
                    "json" => download(
                        &format!("{name}.trace.json"),
                        "application/json",
                        export::trace_json(&scenario, &outcome).as_bytes(),
                    )
                    .map_err(|e| format!("{e:?}")),
                    _ => download(
                        &format!("{name}.md"),
                        "text/markdown",
                        export::verdict_markdown(&scenario, &outcome, Some(&link)).as_bytes(),
                    )
                    .map_err(|e| format!("{e:?}")),
                };
                status.dispatch(ShareAction::Status(match done {
                    Ok(()) => format!("Saved {label}."),
                    Err(e) => format!("{label} could not be saved: {e}"),
                }));
            });
        });
        html! { <button {id} type="button" {onclick}>{ label }</button> }
    };

    let on_file = {
        let dispatch = p.dispatch.clone();
        let import_status = panel.dispatcher();
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                wasm_bindgen_futures::spawn_local(import_file(
                    file,
                    dispatch.clone(),
                    import_status.clone(),
                ));
            }
            input.set_value("");
        })
    };
    let on_drop = {
        let dispatch = p.dispatch.clone();
        let import_status = panel.dispatcher();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if let Some(file) = e
                .data_transfer()
                .and_then(|d| d.files())
                .and_then(|f| f.get(0))
            {
                wasm_bindgen_futures::spawn_local(import_file(
                    file,
                    dispatch.clone(),
                    import_status.clone(),
                ));
            }
        })
    };

    html! {
        <details id="share" class="panel share">
            <summary><h2>{ super::extras::Extra::Share.title() }</h2></summary>
            <section aria-labelledby="share-link-title">
                <h3 id="share-link-title">{ "Link to this run" }</h3>
                <p class="hint">{ "The whole state is in the link (scenario, seed, playhead, zoom, comparison); nothing is sent to a server." }</p>
                <textarea id="share-link" class="link" readonly=true rows="2" aria-label="Link to this run" value={link.clone()} />
                <button id="copy-link" type="button" onclick={copy_into("share-link", link)}>{ "Copy link" }</button>
            </section>
            <section aria-labelledby="share-embed-title">
                <h3 id="share-embed-title">{ "Embed in another page" }</h3>
                <fieldset>
                    <legend>{ "Controls the reader may use" }</legend>
                    { for embed_controls(&app.scenario).into_iter().map(|c| {
                        let id = format!("embed-control-{}", c.to_string().replace(' ', "-"));
                        let on = panel.controls.contains(&c);
                        let dispatch = panel.dispatcher();
                        let label = c.to_string();
                        let onchange = Callback::from(move |_: Event| dispatch.dispatch(ShareAction::FlipControl(c.clone())));
                        html! { <label class="check" for={id.clone()}><input type="checkbox" id={id} checked={on} {onchange} />{ label }</label> }
                    }) }
                </fieldset>
                <label for="embed-origins">{ "Origins of the pages that may control it (host API), e.g. https://docs.example.org" }</label>
                <input id="embed-origins" type="text" value={panel.origins.clone()}
                    oninput={ let dispatch = panel.dispatcher(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); dispatch.dispatch(ShareAction::Origins(i.value())); } } />
                if let Some(bad) = bad_origin {
                    <p class="error" role="alert">{ format!("\"{bad}\" is not an origin (scheme, host and port, nothing after); it is left out.") }</p>
                }
                <label for="embed-theme">{ "Colours" }</label>
                <select id="embed-theme"
                    onchange={ let dispatch = panel.dispatcher(); move |e: Event| { let s: web_sys::HtmlSelectElement = e.target_unchecked_into(); if let Some(t) = Theme::from_name(&s.value()) { dispatch.dispatch(ShareAction::Theme(t)); } } }>
                    { for [(Theme::Auto, "The reader's setting (auto)"), (Theme::Light, "Light"), (Theme::Dark, "Dark")].into_iter().map(|(t, label)| html! {
                        <option value={t.name()} selected={panel.theme == t}>{ label }</option>
                    }) }
                </select>
                <label for="embed-caption">{ "Caption, shown under the title" }</label>
                <input id="embed-caption" type="text" maxlength="200" value={panel.caption.clone()}
                    oninput={ let dispatch = panel.dispatcher(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); dispatch.dispatch(ShareAction::Caption(i.value())); } } />
                <label for="embed-id">{ "Name on the page (id), echoed in its messages, e.g. fig-2" }</label>
                <input id="embed-id" type="text" maxlength="64" value={panel.id.clone()}
                    oninput={ let dispatch = panel.dispatcher(); move |e: InputEvent| { let i: web_sys::HtmlInputElement = e.target_unchecked_into(); dispatch.dispatch(ShareAction::Id(i.value())); } } />
                if let Err(bad) = panel.embed_id() {
                    <p class="error" role="alert">{ format!("\"{bad}\" is not an id (letters, digits, - and _, at most 64); it is left out.") }</p>
                }
                <textarea id="embed-code" readonly=true rows="5" aria-label="Embed code" value={snippet.clone()} />
                <button id="copy-embed" type="button" onclick={copy_into("embed-code", snippet)}>{ "Copy embed code" }</button>
            </section>
            <section aria-labelledby="share-export-title">
                <h3 id="share-export-title">{ "Export" }</h3>
                <p class="hint">{ "Pictures carry their run: opening one here reproduces it." }</p>
                <div class="buttons">
                    { export_button("export-svg", "Timeline (SVG)", "svg") }
                    { export_button("export-png", "Timeline (PNG)", "png") }
                    { export_button("export-json", "Trace (JSON)", "json") }
                    { export_button("export-md", "Verdict (Markdown)", "md") }
                </div>
            </section>
            <section aria-labelledby="share-import-title" class="drop" ondrop={on_drop}
                ondragover={Callback::from(|e: DragEvent| e.prevent_default())}>
                <h3 id="share-import-title">{ "Import" }</h3>
                <label for="import-file">{ "A scenario (TOML or JSON), a trace, a recording from real services (what `lockstep record --json` writes), or an exported picture (SVG or PNG); or drop it here." }</label>
                <input id="import-file" type="file" accept=".toml,.json,.svg,.png,application/json,image/svg+xml,image/png" onchange={on_file} />
                <p id="import-status" role="status">{ panel.import_status.clone() }</p>
            </section>
            <p id="share-status" role="status" class="hint">{ panel.status.clone() }</p>
        </details>
    }
}
