//! The app's addresses: one small router over the URL's fragment (`#/lessons/fencing/stall`).
//!
//! Every view has its own address, so a tutorial or a slide can link straight to a step, and
//! the browser's history (back and forward) walks through the views the learner saw. The
//! router is pure: [`Route::parse`] reads a fragment and [`Route::to_hash`] writes one, and
//! the two round-trip, so it is tested natively. The browser shell only listens for
//! `hashchange` and sets `location.hash`.
//!
//! A later route (a permalink to a run, an embed) is one more variant, one more arm in
//! [`Route::parse`] and one in [`Route::to_hash`]; a fragment may carry a query after `?`,
//! which [`Route::parse`] hands to the route's arm as key and value pairs.

/// The longest fragment read; longer ones are not a route of this app. A permalink to a custom
/// scenario carries it compressed, so this is the link's own bound and a little more.
pub const HASH_CHARS_MAX: usize = crate::ui::share::LINK_BYTES_MAX + 1024;

/// A view of the app and what it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// The simulator with every control: the page as it was before lessons existed. It is
    /// also what an empty fragment (`""`, `#`, `#/`) opens, so old links keep working.
    Sandbox,
    /// The lessons in order, each with the learner's progress.
    Course,
    /// A lesson at a step or an exercise (`None`: its first step).
    Lesson {
        lesson: String,
        place: Option<String>,
    },
    /// Every exercise with its link, goal, hints and solution, and the completion codes'
    /// checker.
    Facilitator,
    /// A run, from a permalink: the sandbox opened on the linked state. The query is kept as
    /// written and read by [`crate::ui::share::Link::from_query`].
    Run(String),
    /// The embed view for an iframe, read by [`crate::ui::embed::Embed::from_query`].
    Embed(String),
    /// A fragment that names no view; the page says so and links to the course.
    NotFound(String),
}

/// Whether a path segment can be a lesson's, step's or exercise's id: the lesson format's rule.
pub use crate::lesson::is_id;

impl Route {
    /// The route a fragment names, with or without its leading `#`. A trailing `/` is
    /// ignored; a fragment that does not start with `/` is not an address of this app and
    /// opens the sandbox; a `/…` that names no view is [`Route::NotFound`].
    pub fn parse(hash: &str) -> Route {
        let raw = hash.strip_prefix('#').unwrap_or(hash);
        if hash.len() > HASH_CHARS_MAX {
            // A link that is too long is still a link: its reader refuses it at once, saying
            // how long it is and how long a link may be. Anything else that long names no view.
            return match raw.split_once('?') {
                Some(("/run", query)) => Route::Run(query.to_string()),
                Some(("/embed", query)) => Route::Embed(query.to_string()),
                _ => Route::NotFound(String::new()),
            };
        }
        // Only a fragment that starts with `/` is an address of this app; any other (an
        // anchor, a test runner's own marker) leaves the page on the sandbox, as before there
        // were routes.
        if !raw.is_empty() && !raw.starts_with('/') {
            return Route::Sandbox;
        }
        // The query is split off here so that routes which take one can read it; on the
        // others it is ignored rather than refused.
        let (path, query) = raw.split_once('?').unwrap_or((raw, ""));
        let path = path.strip_prefix('/').unwrap_or(path);
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments: Vec<&str> = if path.is_empty() {
            Vec::new()
        } else {
            path.split('/').collect()
        };
        match segments.as_slice() {
            [] | ["sandbox"] => Route::Sandbox,
            ["lessons"] => Route::Course,
            ["lessons", lesson] if is_id(lesson) => Route::Lesson {
                lesson: lesson.to_string(),
                place: None,
            },
            ["lessons", lesson, place] if is_id(lesson) && is_id(place) => Route::Lesson {
                lesson: lesson.to_string(),
                place: Some(place.to_string()),
            },
            ["facilitator"] => Route::Facilitator,
            ["run"] => Route::Run(query.to_string()),
            ["embed"] => Route::Embed(query.to_string()),
            _ => Route::NotFound(raw.to_string()),
        }
    }

    /// The fragment of this route, with its `#`. A route parsed from a fragment writes the
    /// same fragment back, up to a trailing `/` and the empty fragment, which write as
    /// `#/sandbox`.
    pub fn to_hash(&self) -> String {
        match self {
            Route::Sandbox => "#/sandbox".to_string(),
            Route::Course => "#/lessons".to_string(),
            Route::Lesson {
                lesson,
                place: None,
            } => format!("#/lessons/{lesson}"),
            Route::Lesson {
                lesson,
                place: Some(place),
            } => format!("#/lessons/{lesson}/{place}"),
            Route::Facilitator => "#/facilitator".to_string(),
            Route::Run(query) => format!("#/run?{query}"),
            Route::Embed(query) => format!("#/embed?{query}"),
            Route::NotFound(raw) => format!("#{raw}"),
        }
    }

    /// The link to a step or an exercise of a lesson.
    pub fn place(lesson: &str, place: &str) -> Route {
        Route::Lesson {
            lesson: lesson.to_string(),
            place: Some(place.to_string()),
        }
    }

    /// The bundle that draws this route when the page opens at it (`site.json`'s router, which
    /// the page's own router is made from; `tests/it/site.rs` holds the two equal). A run or
    /// an embed whose scenario is written as TOML is the studio's, the one bundle that reads
    /// TOML links.
    pub fn bundle(&self) -> Bundle {
        match self {
            Route::Sandbox => Bundle::App,
            Route::Run(query) if crate::ui::share::carries_toml(query) => Bundle::Studio,
            Route::Run(_) => Bundle::App,
            Route::Embed(query) if crate::ui::share::carries_toml(query) => Bundle::Studio,
            Route::Embed(_) => Bundle::Embed,
            Route::Course | Route::Lesson { .. } | Route::NotFound(_) => Bundle::Course,
            Route::Facilitator => Bundle::Studio,
        }
    }

    /// Which of the page's sections the route belongs to, for the navigation's
    /// `aria-current`.
    pub fn section(&self) -> Section {
        match self {
            Route::Sandbox | Route::Run(_) => Section::Sandbox,
            Route::Embed(_) => Section::Embed,
            Route::Course | Route::Lesson { .. } | Route::NotFound(_) => Section::Lessons,
            Route::Facilitator => Section::Facilitator,
        }
    }
}

/// The page's bundles that draw a view (`site.json`'s `bundles`; the others are workers or
/// the sweep plot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bundle {
    /// The sandbox and a permalink's run.
    App,
    /// The embed view alone.
    Embed,
    /// The lessons alone.
    Course,
    /// The whole app.
    Studio,
}

impl Bundle {
    /// The bundle's name: its entry point's, and its files' (`NAME.js`, `NAME_bg.wasm`).
    pub fn name(self) -> &'static str {
        match self {
            Bundle::App => "app",
            Bundle::Embed => "embed",
            Bundle::Course => "course",
            Bundle::Studio => "studio",
        }
    }
}

/// The sections the navigation offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Lessons,
    Sandbox,
    Facilitator,
    /// The embed view: no navigation, no storage.
    Embed,
}
