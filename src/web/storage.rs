//! The page's local storage: the saved state read when the sandbox opens (and set aside when
//! it cannot be read), saved as it changes, the learner's progress, and a lesson's run left
//! for the sandbox. Kept apart because storage may be missing (a sandboxed frame has none) and
//! every use of it must go on without it.

use super::route::current_route;
use crate::ui::course::{Progress, PROGRESS_KEY};
use crate::ui::route::Route;
use crate::ui::{self, STORAGE_KEY, STORAGE_SET_ASIDE_KEY};

/// Reads the saved state. A value that cannot be read is copied aside so that the user's text
/// is never lost, and the app opens the default scenario with a notice.
pub(super) fn initial_state(codec: ui::Codec) -> ui::App {
    // The embed view keeps nothing and reads nothing: it opens its own run from its address.
    if matches!(current_route(), Route::Embed(_)) {
        return ui::App::open_with(codec, ui::DEFAULT_SOURCE);
    }
    let Some(storage) = storage() else {
        return ui::App::open_with(codec, ui::DEFAULT_SOURCE);
    };
    let stored = storage.get_item(STORAGE_KEY).ok().flatten();
    let app = ui::App::restore_with(codec, stored.as_deref());
    if app.notice.is_some() {
        if let Some(raw) = &stored {
            let _ = storage.set_item(STORAGE_SET_ASIDE_KEY, raw);
        }
    }
    app
}

/// Stores the source and the text, so that a reload (or a crash) restores them.
pub(super) fn save(saved: &ui::Saved) {
    if let (Ok(json), Some(storage)) = (serde_json::to_string(saved), storage()) {
        let _ = storage.set_item(STORAGE_KEY, &json);
    }
}

/// The page's local storage, when the browser lets the page have one: a sandboxed frame (the
/// embed view in a host's iframe) gets none, and must not fail for it.
pub(super) fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

pub(super) fn read_progress() -> Progress {
    Progress::read(
        storage()
            .and_then(|s| s.get_item(PROGRESS_KEY).ok().flatten())
            .as_deref(),
    )
}

/// Puts the lesson's current scenario in the sandbox ([`ui::App::for_sandbox`]): the shipped
/// file it started from (so Reset goes back there), with the learner's run, whose text the
/// sandbox writes. The sandbox reads it from local storage when it opens, as after a reload.
pub(super) fn open_in_sandbox(app: &ui::App) {
    save(&app.for_sandbox());
}
