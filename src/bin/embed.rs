//! The embed view's bundle for the browser: a run in someone else's page, in an iframe.
//! `index.html` loads it for `#/embed?…` addresses; it has no editor, lab or lessons, so a page
//! that embeds a run downloads less than the sandbox.
//!
//! Natively there is nothing to show; `lockstep export FILE --format svg` draws the same
//! picture for places that cannot show an iframe.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_embed();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("The Lockstep embed view runs in a browser, in an iframe: see docs/embedding.md. The command-line tool is `lockstep`.");
    std::process::exit(2);
}
