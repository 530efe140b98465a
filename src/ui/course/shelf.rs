//! The course in the page and its reducer: [`Shelf`] (the lessons loaded, the files opened,
//! the folder beside the site and the learner's progress), changed only by the
//! [`ShelfAction`]s the page reports as it fetches, checks and stores. Kept apart from the
//! lesson view's state, which is an `App`'s: the shelf outlives every lesson shown.

use std::rc::Rc;
use std::sync::Arc;

use super::{CheckReply, Course, LessonRun, OpenedFile, OpenedFiles, Progress};
use crate::lesson::wire::Loaded;

/// Where the course stands: not asked for yet, on its way, loaded, or refused.
#[derive(Clone, Debug)]
pub enum Lessons {
    Idle,
    Loading,
    Ready(Arc<Course>),
    Failed(String),
}

/// A course is compared by identity (see [`Course`]'s `PartialEq`).
impl PartialEq for Lessons {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Lessons::Idle, Lessons::Idle) | (Lessons::Loading, Lessons::Loading) => true,
            (Lessons::Ready(a), Lessons::Ready(b)) => Arc::ptr_eq(a, b),
            (Lessons::Failed(a), Lessons::Failed(b)) => a == b,
            _ => false,
        }
    }
}

/// What opening a lesson file is doing.
#[derive(Clone, Debug, PartialEq)]
pub enum OpenStatus {
    Idle,
    /// A link's file is being fetched from this address.
    Fetching(String),
    Checking,
    /// The lesson is in the course.
    Opened {
        id: String,
        title: String,
    },
    /// The file's problems, each at its line.
    Failed(Vec<crate::lesson::LessonError>),
    /// The file could not be fetched or checked at all, and why, blaming no line of it.
    Unavailable(String),
}

/// Where the folder of lessons served beside the site stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Folder {
    /// Not asked for yet.
    Idle,
    /// Its index or files are on their way or being checked.
    Loading,
    /// Read: its lessons are in the course, and the problems of any that were not read.
    Read(Vec<String>),
}

/// The course in the page: the shipped lessons once fetched, the files the user opened (kept
/// in the browser), what opening one is doing, and the course made of both. It changes only
/// through [`Shelf::reduce`]; the page fetches, runs the checker's worker and writes local
/// storage, and reports each as an action.
#[derive(Clone, Debug)]
pub struct Shelf {
    pub lessons: Lessons,
    shipped: Rc<Vec<Loaded>>,
    /// Whether every shipped lesson is here: a lesson step's own lesson comes first, alone.
    shipped_all: bool,
    /// Why the rest of the shipped lessons did not come, after the first one had.
    pub missing: Option<String>,
    pub opened: OpenedFiles,
    pub open_status: OpenStatus,
    /// The folder of lessons served beside the site, and its lessons.
    pub folder: Folder,
    served: Rc<Vec<Loaded>>,
    /// What the learner has done.
    pub progress: Rc<Progress>,
}

/// The shipped lessons are compared by identity: they are fetched once and shared.
impl PartialEq for Shelf {
    fn eq(&self, o: &Self) -> bool {
        self.lessons == o.lessons
            && Rc::ptr_eq(&self.shipped, &o.shipped)
            && self.shipped_all == o.shipped_all
            && self.missing == o.missing
            && self.opened == o.opened
            && self.open_status == o.open_status
            && self.folder == o.folder
            && Rc::ptr_eq(&self.served, &o.served)
            && self.progress == o.progress
    }
}

/// Everything that changes the course in the page.
#[derive(Clone, Debug)]
pub enum ShelfAction {
    /// The shipped lessons were asked for.
    Fetching,
    /// The lesson a lesson step's address names came ahead of the others, so that the step
    /// shows without waiting for the whole course.
    FetchedLesson(Box<Loaded>),
    /// They came, all of them, or why not.
    Fetched(Result<Vec<Loaded>, String>),
    /// A link's file is being fetched from this address.
    FetchingFile(String),
    /// A file went to the checker.
    Checking,
    /// A file could not be fetched or checked, and why.
    Unavailable(String),
    /// A link's file is the one kept in this browser (unchanged, or the network is off).
    Kept(String),
    /// The folder's index and files were asked for.
    FolderLoading,
    /// The folder's lessons that were read, and the problems of those that were not.
    FolderRead(Vec<Loaded>, Vec<String>),
    /// The checker's answer on a file the user opened.
    Checked(Result<Box<(Loaded, OpenedFile)>, Vec<crate::lesson::LessonError>>),
    /// A file an earlier version stored, checked again from its text: kept quietly.
    Rechecked(Box<OpenedFile>),
    /// The user took a file's lesson away.
    Removed(String),
    /// The lesson view's state, to record what the learner has seen, met and solved.
    Record(Rc<LessonRun>),
}

impl ShelfAction {
    /// The action for the checker's answer on a file's text: the lesson opened (kept with the
    /// address it came from, if any), its problems, or why it could not be checked at all.
    pub fn from_reply(reply: CheckReply, text: &str, source: Option<String>) -> ShelfAction {
        match reply {
            CheckReply::Unavailable { why } => ShelfAction::Unavailable(why),
            reply => ShelfAction::Checked(reply.into_opened(text).map(|(loaded, mut file)| {
                file.source = source;
                Box::new((loaded, file))
            })),
        }
    }
}

impl Shelf {
    /// The course before anything is fetched, with the files and the progress the browser
    /// kept.
    pub fn new(opened: OpenedFiles, progress: Progress) -> Shelf {
        Shelf {
            lessons: Lessons::Idle,
            shipped: Rc::new(Vec::new()),
            shipped_all: false,
            missing: None,
            opened,
            open_status: OpenStatus::Idle,
            folder: Folder::Idle,
            served: Rc::new(Vec::new()),
            progress: Rc::new(progress),
        }
    }

    /// Whether every shipped lesson is here (or will not come).
    pub fn shipped_complete(&self) -> bool {
        self.shipped_all
    }

    /// Whether a lesson not in the course may still arrive: the course, the folder or a
    /// link's file is on its way, so a link to it waits instead of saying it is missing.
    pub fn waiting(&self) -> bool {
        matches!(self.lessons, Lessons::Idle | Lessons::Loading)
            || (matches!(self.lessons, Lessons::Ready(_)) && !self.shipped_all)
            || matches!(self.folder, Folder::Loading)
            || matches!(
                self.open_status,
                OpenStatus::Fetching(_) | OpenStatus::Checking
            )
    }

    /// The course of the shipped lessons and the opened files.
    fn course(&self) -> Arc<Course> {
        Arc::new(Course::of(
            self.shipped.as_ref().clone(),
            self.served.as_ref().clone(),
            self.opened.lessons(),
        ))
    }

    /// The course made again after the opened files changed, once the shipped ones are here.
    fn with_course(mut self) -> Shelf {
        if matches!(self.lessons, Lessons::Ready(_)) {
            self.lessons = Lessons::Ready(self.course());
        }
        self
    }

    pub fn reduce(&self, action: ShelfAction) -> Shelf {
        let mut next = self.clone();
        match action {
            ShelfAction::Fetching => {
                if matches!(self.lessons, Lessons::Idle) {
                    next.lessons = Lessons::Loading;
                }
            }
            ShelfAction::FetchedLesson(lesson) => {
                if !self.shipped_all {
                    next.shipped = Rc::new(vec![*lesson]);
                    next.lessons = Lessons::Ready(next.course());
                }
            }
            ShelfAction::Fetched(Ok(shipped)) => {
                next.shipped = Rc::new(shipped);
                next.shipped_all = true;
                next.lessons = Lessons::Ready(next.course());
            }
            // With a lesson already shown, it stays; the course says what is missing.
            ShelfAction::Fetched(Err(why)) => {
                next.shipped_all = true;
                if matches!(self.lessons, Lessons::Ready(_)) {
                    next.missing = Some(why);
                } else {
                    next.lessons = Lessons::Failed(why);
                }
            }
            ShelfAction::Checking => next.open_status = OpenStatus::Checking,
            ShelfAction::FetchingFile(url) => next.open_status = OpenStatus::Fetching(url),
            ShelfAction::Unavailable(why) => next.open_status = OpenStatus::Unavailable(why),
            ShelfAction::Kept(url) => {
                next.open_status = match self.opened.from_source(&url) {
                    Some(f) => OpenStatus::Opened {
                        id: f.id.clone(),
                        title: f.title(),
                    },
                    None => OpenStatus::Idle,
                }
            }
            ShelfAction::FolderLoading => next.folder = Folder::Loading,
            ShelfAction::FolderRead(lessons, problems) => {
                next.served = Rc::new(lessons);
                next.folder = Folder::Read(problems);
                return next.with_course();
            }
            ShelfAction::Checked(Ok(checked)) => {
                let (loaded, file) = *checked;
                next.open_status = OpenStatus::Opened {
                    id: loaded.lesson.id.clone(),
                    title: crate::lesson::narration::plain(&loaded.rich, &loaded.lesson.title),
                };
                next.opened = next.opened.with(file);
                return next.with_course();
            }
            ShelfAction::Checked(Err(errors)) => next.open_status = OpenStatus::Failed(errors),
            ShelfAction::Rechecked(file) => {
                next.opened = next.opened.with(*file);
                return next.with_course();
            }
            ShelfAction::Removed(id) => {
                next.opened = next.opened.without(&id);
                next.open_status = OpenStatus::Idle;
                return next.with_course();
            }
            ShelfAction::Record(run) => {
                let recorded = self.progress.record(&run);
                // The same progress keeps its identity, so nothing redraws or is written.
                if recorded != *self.progress {
                    next.progress = Rc::new(recorded);
                }
            }
        }
        next
    }
}
