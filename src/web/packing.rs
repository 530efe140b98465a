//! A link's packed scenario (`c=`, `j=`: deflate, then base64url) read and written by the
//! browser's own Compression Streams, so that the bundles that open links carry no compressor
//! of their own: the embed view, and the sandbox opening a permalink. `ui::share` keeps the
//! format's steps (`decode_packed`, `text_of_inflated`, `encode_packed`) and its refusals, so
//! a link is refused in the same words whichever reads it.

use crate::ui::share as links;

/// Why an address's scenario cannot be read in a browser without Compression Streams.
const LINK_UNREADABLE: &str =
    "this browser cannot read the scenario in the link: it lacks Compression Streams";

/// Why a packed scenario was not read: the address carries more than a link's one scenario
/// (as `c=` or `j=`), or an earlier one was already refused.
const NOT_READ: &str = "the link carries more than one scenario";

// The browser deflates and inflates a link's scenario (its Compression Streams, format
// "deflate-raw", the format `ui::share::pack` writes, though not byte for byte), so that the
// bundles carry no compressor of their own. Reading the inflated text stops once it
// passes `limit` bytes (resolving to null), so no more than one chunk past the bound is ever
// held, as `ui::share::unpack` refuses it; a stream that is not deflate data rejects; a browser
// without Compression Streams resolves to undefined. Both functions are async, so that every
// failure arrives as a rejection rather than an exception thrown through the module.
#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "\
const able = () => typeof CompressionStream === 'function' && typeof DecompressionStream === 'function'; \
export async function deflate_raw(bytes) { \
    if (!able()) return undefined; \
    const s = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw')); \
    return new Uint8Array(await new Response(s).arrayBuffer()); } \
export async function inflate_raw(bytes, limit) { \
    if (!able()) return undefined; \
    const r = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader(); \
    const parts = []; let n = 0; \
    for (;;) { \
        const { done, value } = await r.read(); \
        if (done) break; \
        n += value.length; \
        if (n > limit) { r.cancel(); return null; } \
        parts.push(value); } \
    const out = new Uint8Array(n); let at = 0; \
    for (const p of parts) { out.set(p, at); at += p.length; } \
    return out; }")]
extern "C" {
    fn deflate_raw(bytes: &[u8]) -> js_sys::Promise;
    fn inflate_raw(bytes: &[u8], limit: u32) -> js_sys::Promise;
}

/// A scenario's text packed for a link, in the format `ui::share::pack` writes; `None` if the
/// browser cannot deflate.
pub async fn packed(text: String) -> Option<String> {
    let promise = deflate_raw(text.as_bytes());
    let bytes = wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    if bytes.is_undefined() {
        return None;
    }
    Some(links::encode_packed(
        &js_sys::Uint8Array::new(&bytes).to_vec(),
    ))
}

/// A link's packed scenario, read as `ui::share::unpack` reads it.
async fn unpacked(packed: String) -> Result<String, links::LinkError> {
    let bytes = links::decode_packed(&packed)?;
    let limit = links::LINK_SCENARIO_BYTES_MAX as u32;
    let inflated = wasm_bindgen_futures::JsFuture::from(inflate_raw(&bytes, limit))
        .await
        .map_err(|_| links::not_deflate())?;
    if inflated.is_undefined() {
        return Err(links::LinkError(LINK_UNREADABLE.to_string()));
    }
    if inflated.is_null() {
        return Err(links::expands_too_far());
    }
    links::text_of_inflated(js_sys::Uint8Array::new(&inflated).to_vec())
}

/// Each packed scenario of an address, with its text or why it cannot be read.
pub type Unpacked = Vec<(String, Result<String, links::LinkError>)>;

/// Inflates the packed scenarios of an address (a link's query), bounded before anything is
/// inflated: an address longer than a link is refused by the link's reader without reading
/// its scenario, and at most two distinct packings (a `c=` and a `j=`) are inflated, one at a
/// time, stopping at the first that fails.
pub async fn unpack_all(query: &str) -> Unpacked {
    let mut wanted: Vec<String> = Vec::new();
    if query.len() <= links::LINK_BYTES_MAX {
        for packed in links::packed_in(query) {
            if !wanted.iter().any(|w| w == packed) {
                wanted.push(packed.to_string());
            }
        }
    }
    wanted.truncate(2);
    let mut out = Unpacked::new();
    for packed in wanted {
        let text = unpacked(packed.clone()).await;
        let failed = text.is_err();
        out.push((packed, text));
        if failed {
            break;
        }
    }
    out
}

/// A packed scenario's text as [`unpack_all`] read it, for a link's reader
/// (`Link::from_query_unpacked`).
pub fn read(unpacked: &Unpacked, packed: &str) -> Result<String, links::LinkError> {
    unpacked.iter().find(|(p, _)| p == packed).map_or_else(
        || Err(links::LinkError(NOT_READ.to_string())),
        |(_, text)| text.clone(),
    )
}
