//! The lab for the browser: a worker that runs sweeps (many seeds at each value of one
//! parameter) and draws their plot, so the page stays responsive. The sandbox starts it only
//! when a sweep starts.
//!
//! Natively there is nothing to run; `lockstep sweep FILE --param NAME --values LIST` is the
//! same sweep.

#[cfg(target_arch = "wasm32")]
fn main() {
    lockstep::web::start_lab();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This is the browser's sweep worker; from a terminal, run `lockstep sweep FILE --param NAME --values LIST`.");
    std::process::exit(2);
}
