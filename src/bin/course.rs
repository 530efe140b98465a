//! The lesson view's bundle for the browser: the lessons and their steps and exercises, with
//! the run, the verdict and the controls a step offers, and nothing of the sandbox's editor
//! and panels. `index.html` loads it for `#/lessons` addresses, and the sandbox's bundle
//! (`app`) loads it when the user goes to the lessons.
//!
//! Natively there is nothing to show; the command-line tool is `lockstep`.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_course();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("The Lockstep course runs in a browser: `bash scripts/serve.sh`, then open http://127.0.0.1:8080/#/lessons. The command-line tool is `lockstep`.");
    std::process::exit(2);
}
