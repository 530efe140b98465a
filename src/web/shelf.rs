//! The course in the page: [`Shelf`] (a reducer in `ui`) held by a hook that fetches the
//! lessons when a view first needs them, opens lesson files by link or by pick and keeps what
//! the learner opened and did in the browser, and the course's views the roots route to.
//! Kept apart because both the lesson view's root and the whole app's hold it.

use std::rc::Rc;
use std::sync::Arc;

use yew::prelude::*;

use super::checker;
use super::course::{self, CourseState};
use super::fetch::{fetch_course, open_by_link, read_folder};
use super::storage::{read_progress, storage};
use super::views::LessonPage;
use crate::ui;
use crate::ui::course::{OpenedFiles, Shelf, ShelfAction, OPENED_KEY, PROGRESS_KEY};
use crate::ui::route::{Route, Section};

impl Reducible for Shelf {
    type Action = ShelfAction;

    fn reduce(self: Rc<Self>, action: ShelfAction) -> Rc<Self> {
        Rc::new(Shelf::reduce(self.as_ref(), action))
    }
}

/// The course in the page ([`Shelf`], a reducer in `ui`) and the callbacks that open and
/// remove lesson files. The whole app's root and the lesson view's own bundle both hold it.
pub(super) struct CourseHandles {
    pub(super) shelf: UseReducerHandle<Shelf>,
    /// The lesson file the address asks to open (`?open=`), if any.
    pub(super) open: Option<String>,
    pub(super) on_open: Callback<String>,
    pub(super) on_remove: Callback<String>,
}

#[hook]
pub(super) fn use_course(route: &Route) -> CourseHandles {
    let section = route.section();
    let shelf = use_reducer(|| {
        let stored = |key| storage().and_then(|s| s.get_item(key).ok().flatten());
        Shelf::new(
            OpenedFiles::read(stored(OPENED_KEY).as_deref()),
            read_progress(),
        )
    });

    // The lessons are fetched the first time a view needs them, never for the sandbox alone:
    // the shipped ones, and the folder of lessons served beside the site, if there is one.
    {
        let dispatch = shelf.dispatcher();
        let idle = shelf.lessons == CourseState::Idle;
        // A lesson step's own lesson, fetched ahead of the others.
        let first = match route {
            Route::Lesson { lesson, .. } if ui::route::is_id(lesson) => Some(lesson.clone()),
            _ => None,
        };
        use_effect_with(section, move |section| {
            let needs = matches!(section, Section::Lessons | Section::Facilitator);
            if needs && idle {
                dispatch.dispatch(ShelfAction::Fetching);
                dispatch.dispatch(ShelfAction::FolderLoading);
                yew::platform::spawn_local(fetch_course(first, dispatch.clone()));
                yew::platform::spawn_local(async move {
                    let (lessons, problems) = read_folder().await;
                    dispatch.dispatch(ShelfAction::FolderRead(lessons, problems));
                });
            }
        });
    }

    // A lesson by link (`?open=URL`): fetched, checked like a picked file and kept, or the copy
    // kept from the same address when the file is unchanged or the network is off. A link to
    // the course itself then goes on to the lesson; a link to a step stays on it.
    let open = ui::reach::open_param(&gloo::utils::window().location().hash().unwrap_or_default());
    {
        let dispatch = shelf.dispatcher();
        let opened = shelf.opened.clone();
        use_effect_with(open.clone(), move |open| {
            if let Some(raw) = open.clone() {
                yew::platform::spawn_local(open_by_link(raw, opened, dispatch));
            }
        });
    }
    {
        let to_lesson = match (route, &shelf.open_status) {
            (Route::Course, crate::ui::course::OpenStatus::Opened { id, .. }) if open.is_some() => {
                Some(id.clone())
            }
            _ => None,
        };
        use_effect_with(to_lesson, |to_lesson| {
            if let Some(id) = to_lesson {
                let hash = Route::Lesson {
                    lesson: id.clone(),
                    place: None,
                }
                .to_hash();
                // The link's address is replaced, so Back does not open the file again.
                let _ = gloo::utils::window().location().replace(&hash);
            }
        });
    }

    // What the learner opened and did is kept in the browser whenever it changes.
    use_effect_with(shelf.opened.clone(), |opened| {
        if let Some(s) = storage() {
            let _ = s.set_item(OPENED_KEY, &opened.to_json());
        }
    });
    use_effect_with(Rc::clone(&shelf.progress), |progress| {
        if let Some(s) = storage() {
            let _ = s.set_item(PROGRESS_KEY, &progress.to_json());
        }
    });

    // Opening a lesson file runs the engine on every claim, in the checker's worker: the
    // status says so until it answers.
    let on_open = {
        let dispatch = shelf.dispatcher();
        Callback::from(move |text: String| {
            dispatch.dispatch(ShelfAction::Checking);
            let dispatch = dispatch.clone();
            let file_text = text.clone();
            checker::check_in_worker(text, move |reply| {
                dispatch.dispatch(ShelfAction::from_reply(reply, &file_text, None));
            });
        })
    };

    // A file an earlier version of the page stored is checked again from its text, once, so
    // that a lesson the user opened survives an update of the page.
    {
        let dispatch = shelf.dispatcher();
        let stale = shelf.opened.stale();
        use_effect_with((), move |_| {
            for text in stale {
                let dispatch = dispatch.clone();
                let file_text = text.clone();
                checker::check_in_worker(text, move |reply| {
                    if let Ok((_, file)) = reply.into_opened(&file_text) {
                        dispatch.dispatch(ShelfAction::Rechecked(Box::new(file)));
                    }
                });
            }
        });
    }

    let on_remove = {
        let dispatch = shelf.dispatcher();
        Callback::from(move |id: String| dispatch.dispatch(ShelfAction::Removed(id)))
    };
    CourseHandles {
        shelf,
        open,
        on_open,
        on_remove,
    }
}

/// The course's views: the lessons, a lesson's place, the facilitator's view and an address
/// that names nothing. `None` for a view that is not the course's.
pub(super) fn course_view(route: &Route, c: &CourseHandles) -> Option<Html> {
    Some(match route {
        Route::Course => {
            let shelf = &c.shelf;
            let opened: Vec<String> = shelf.opened.files.iter().map(|f| f.id.clone()).collect();
            html! {
                <course::CourseView course={shelf.lessons.clone()} progress={Rc::clone(&shelf.progress)}
                    notice={course::reach_status(c.open.is_some(), shelf)}>
                    <course::LessonFiles status={shelf.open_status.clone()} opened={opened}
                        on_open={c.on_open.clone()} on_remove={c.on_remove.clone()} />
                </course::CourseView>
            }
        }
        Route::NotFound(raw) => course::not_found(raw),
        Route::Lesson { lesson, place } => match &c.shelf.lessons {
            CourseState::Ready(course) => match course.find(lesson, place.as_deref()) {
                Some((index, place)) => html! {
                    <LessonPage course={Arc::clone(course)} index={index} place={place}
                        progress={Rc::clone(&c.shelf.progress)} shelf={c.shelf.dispatcher()} />
                },
                // A lesson this browser has, at a place it does not have: a wrong link.
                None if course.index(lesson).is_some() => course::not_found(&route.to_hash()[1..]),
                None if c.shelf.waiting() => html! {
                    <main id="main"><p class="loading" role="status">{ "Loading the lesson…" }</p></main>
                },
                None if c.shelf.missing.is_some() => {
                    course_error(c.shelf.missing.as_deref().unwrap_or_default())
                }
                None => course::not_loaded(lesson, c.open.is_some(), &c.shelf.open_status),
            },
            CourseState::Failed(why) => course_error(why),
            _ => {
                html! { <main id="main"><p class="loading" role="status">{ "Loading the lessons…" }</p></main> }
            }
        },
        _ => return None,
    })
}

/// Why the lessons are not shown: they could not be loaded.
fn course_error(why: &str) -> Html {
    html! {
        <main id="main"><p id="course-error" class="errors has-errors" role="alert">
            { format!("The lessons could not be loaded: {why}.") }</p></main>
    }
}
