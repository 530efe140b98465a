//! The lesson checker for the browser: a worker that parses a lesson file the user opened
//! and runs it through the engine, as `lockstep lesson check` does. The lesson view's and
//! the studio's bundles start it only when a file is opened.
//!
//! Natively there is nothing to run; `lockstep lesson check FILE` is the same check.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_checker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "This is the browser's lesson checker; from a terminal, run `lockstep lesson check FILE`."
    );
    std::process::exit(2);
}
