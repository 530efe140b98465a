//! The editor's reader for the browser: a worker that reads the sandbox's TOML into a scenario
//! (or its located errors), so that the sandbox's first download carries no TOML reader. The
//! sandbox starts it when the first text needs reading.
//!
//! Natively there is nothing to run; `lockstep lint FILE` reads a scenario the same way.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_reader();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This is the browser's scenario reader; from a terminal, run `lockstep lint FILE`.");
    std::process::exit(2);
}
