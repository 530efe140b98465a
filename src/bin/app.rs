//! The browser app: Trunk builds this binary for wasm32 and loads it from `index.html`.
//!
//! Natively there is nothing to show, so the binary only says where the app lives; the
//! command-line tool is `lockstep`.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("The Lockstep app runs in a browser: `bash scripts/serve.sh`, then open http://127.0.0.1:8080. The command-line tool is `lockstep`.");
    std::process::exit(2);
}
