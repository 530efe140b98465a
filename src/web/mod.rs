//! The browser shell: Yew function components that draw [`crate::ui::App`] and turn input into
//! [`Action`]s. Nothing here decides what happened in a run; it only shows the engine's answer.
//!
//! This file holds what every part shares: the app as a Yew reducer, the handle views dispatch
//! through, and the state a bundle keeps while it runs. Each bundle's entry point is in
//! `start.rs`, the roots each mounts in `shell.rs`, the sandbox's and a lesson's views in
//! `views.rs`, the playback keys and timer in `playback.rs`, the course in the page in
//! `shelf.rs`, the address in `route.rs`, local storage in `storage.rs`, fetching in
//! `fetch.rs` and the page's workers in `worker.rs`. The public items are re-exported here.

mod checker;
mod controls;
mod course;
mod display;
mod embed;
mod extras;
mod fetch;
mod lab;
mod narration;
mod packing;
mod panels;
mod playback;
mod print;
mod reader;
mod route;
mod share;
mod shelf;
mod shell;
mod start;
mod storage;
mod timeline;
mod views;
mod worker;

use std::cell::RefCell;
use std::rc::Rc;

use yew::prelude::*;

use crate::ui::{self, Action};

pub use controls::{Controls, Editor, Picker};
pub use panels::{CompareView, EventTable, OverlapDetails, OwnOrderView, Playback, VerdictView};
pub use shell::{Root, SandboxShell};
pub use start::{
    start, start_checker, start_course, start_embed, start_lab, start_reader, start_studio,
};
pub use timeline::{Defs, Legend, Timeline};
pub use views::{Sandbox, SandboxProps};

impl Reducible for ui::App {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(ui::App::reduce(&self, action))
    }
}

/// The handle every component dispatches actions through.
pub type Dispatch = UseReducerDispatcher<ui::App>;

/// The codec the bundle set, or the view's own. A view names its own default, so that a
/// bundle links only the readers its views use.
fn codec_or(own: ui::Codec) -> ui::Codec {
    CODEC.with(std::cell::Cell::get).unwrap_or(own)
}

thread_local! {
    /// How the apps read scenarios, when the bundle says: the studio's (the whole app) reads
    /// everything ([`ui::Codec::FULL`]). Otherwise the sandbox reads its editor's TOML in a worker and
    /// leaves links whose scenario is TOML to the studio's bundle ([`ui::Codec::SANDBOX`]),
    /// and the embed view reads only JSON.
    static CODEC: std::cell::Cell<Option<ui::Codec>> = const { std::cell::Cell::new(None) };

    /// The sandbox's bundle, while it owns the page.
    static SHELL: RefCell<Option<yew::AppHandle<SandboxShell>>> = const { RefCell::new(None) };
}
