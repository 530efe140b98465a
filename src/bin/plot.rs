//! The sweep plot for the browser, loaded on its own: the lesson view shows a shipped step's
//! sweep as the course's plot file its compact form names, and a lesson read in the page (whose checker, a worker,
//! cannot measure text to draw) has its plot drawn here, on the page's thread, so that the
//! lesson view's own bundle never links the plotting code. `web/course.rs` loads it with the
//! first such step and calls [`sweep_svg`].
//!
//! Natively there is nothing to draw here; `lockstep sweep FILE ... --svg` draws the same plot.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::wasm_bindgen;

/// The plot of a sweep as SVG, from the request `lockstep::lesson::wire::sweep_plot_request`
/// writes; an error is thrown as its text.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
pub fn sweep_svg(request: &str) -> Result<String, String> {
    lockstep::lesson::wire::sweep_plot(request)
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This is the browser's sweep plot; from a terminal, run `lockstep sweep FILE --param NAME --values LIST --svg`.");
    std::process::exit(2);
}
