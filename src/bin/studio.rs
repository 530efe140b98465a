//! The studio's bundle for the browser: the whole app, with the sandbox's lab, explorer and
//! exports, the facilitator's view, and links whose scenario is TOML. `index.html` loads it for
//! those addresses, and the sandbox's bundle (`app`) loads it when the user unfolds one of those
//! panels or goes to the facilitator's view.
//!
//! Natively there is nothing to show; the command-line tool is `lockstep`.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_studio();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("The Lockstep app runs in a browser: `bash scripts/serve.sh`, then open http://127.0.0.1:8080/#/facilitator. The command-line tool is `lockstep`.");
    std::process::exit(2);
}
