//! Lockstep: a deterministic simulator of lock services, clients and a shared resource.
//!
//! The core is pure: it does no I/O, reads no clock and keeps no global state, so the same
//! scenario and seed give the same trace natively and in WebAssembly.
//!
//! - [`scenario`]: the user-facing format and its validation.
//! - [`world`]: a validated scenario compiled into indexed form.
//! - [`model`]: the state, its enabled steps and the one transition function.
//! - [`sim`]: the timed random driver.
//! - [`explore`]: the exhaustive driver, breadth first over interleavings of a small scenario.
//! - [`trace`]: the events of a run and their text rendering.
//! - [`monitor`]: verdicts computed from a trace.
//! - [`property`]: the safety properties, as predicates over a state and read from a verdict.
//! - [`builtin`]: the shipped scenarios, embedded.
//! - [`inventory`]: the static check that each resource has exactly one source of order.
//! - [`ui`]: the app's state and reducer, pure like the rest of the core.
//! - `web` (wasm32 only): the Yew components that draw [`ui`]'s state in a browser.

mod agenda;
pub mod builtin;
pub mod explore;
pub mod hash;
pub mod inventory;
mod json;
pub mod lesson;
pub mod model;
pub mod monitor;
pub mod plot;
pub mod property;
pub mod recording;
pub mod scenario;
pub mod sim;
pub mod sorted;
pub mod sweep;
// The controls' vocabulary: what each of the app's controls changes in a scenario. Lessons
// (their edits) and the app (its controls) both speak it, so it sits below both.
pub mod toggles;
// The random scenario generator of the fuzzer and the property tests: native only, and no part
// of the library's documented interface.
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub mod testgen;
pub mod trace;
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod web;
pub mod world;

pub use monitor::{verdict, Exclusion, Integrity, Verdict};
pub use scenario::{Scenario, ScenarioError, ScenarioErrors};
pub use sim::{run, Run};
