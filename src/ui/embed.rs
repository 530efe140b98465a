//! The embed view's configuration and its host API, as pure functions: what an embedding page
//! asked for (in the iframe's address), which messages from the host are accepted, and what the
//! embed answers.
//!
//! An embed address is a permalink with two more fields: `#/embed?<link fields>&controls=…&
//! origins=…`. `controls` lists the controls the reader may touch (`fencing accounts`,
//! `partition`, …; none by default); `origins` lists the exact origins (`https://docs.example.org`)
//! whose messages the embed accepts and to which it replies. Nothing else is ever trusted: a
//! message must come from a listed origin (exact match on `event.origin`), be at most
//! [`MESSAGE_BYTES_MAX`] of JSON of one of the known shapes, and a toggle must belong to a listed
//! control; anything else is ignored without an answer.
//!
//! Messages from the host (`type`, then the fields):
//!
//! | type | fields | effect |
//! |---|---|---|
//! | `lockstep:set-toggle` | `edit`: an edit line (`fencing accounts one_source`) | applies it, if its control is listed |
//! | `lockstep:set-playhead` | `ms`: a number | moves the playhead |
//! | `lockstep:play`, `lockstep:pause` | | starts or stops playback |
//! | `lockstep:get-verdict` | `id` (optional): any number, echoed | answers with `lockstep:verdict` |
//!
//! Messages to the host: `lockstep:ready` (once, with the verdict), `lockstep:verdict` (an answer,
//! with the `id` asked), `lockstep:verdict-changed` (after any change of the run), and
//! `lockstep:height` (`px`: the content's height, whenever it changes).

use serde::Serialize;

use crate::lesson::edit::{allowed, Control, Edit};
use crate::monitor::{Exclusion, Integrity, Verdict};
use crate::ui::share::{self, Link, LinkError};

/// The file of the site that sizes embeds on a host page (`static/embed-size.js`).
pub const SIZING_SCRIPT: &str = "embed-size.js";

/// The class the snippet's frame carries instead of an inline style, which a strict
/// Content-Security-Policy (`style-src` without `'unsafe-inline'`) refuses: the sizing script
/// gives frames of this class their width, border and height through the CSSOM, which such a
/// policy allows.
pub const FRAME_CLASS: &str = "lockstep-embed";

/// The version of the host API's messages: every message from the embed carries it as
/// `protocol`, and a message to the embed that names another is refused with the reason.
pub const PROTOCOL: u32 = 1;
/// The longest embed id (`id=` in the address), echoed as `embed` in every message so that a
/// page with several embeds can tell them apart.
pub const EMBED_ID_CHARS_MAX: usize = 64;

/// The largest message accepted from a host, in bytes of JSON.
pub const MESSAGE_BYTES_MAX: usize = 4096;
/// The most origins and controls an embed address may list.
pub const ORIGINS_MAX: usize = 8;
pub const CONTROLS_MAX: usize = 16;

/// The longest caption an embed address may carry, in characters.
pub const CAPTION_CHARS_MAX: usize = 200;

/// The embed's colours: the reader's setting (`auto`, the default), or fixed to match a host
/// page whose theme the reader chose there (mdBook's dark theme, say).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub fn name(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn from_name(name: &str) -> Option<Theme> {
        [Theme::Auto, Theme::Light, Theme::Dark]
            .into_iter()
            .find(|t| t.name() == name)
    }
}

/// What an embed address asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embed {
    pub link: Link,
    /// The controls the reader may touch.
    pub controls: Vec<Control>,
    /// The origins whose messages are accepted, and to which replies go.
    pub origins: Vec<String>,
    pub theme: Theme,
    /// A sentence shown under the embed's title, as text.
    pub caption: Option<String>,
    /// The embed's name on its host page (`id=`), echoed in every message.
    pub id: Option<String>,
}

/// The theme an embed address asks for, read on its own (the page sets it before the embed
/// draws anything, so the first picture already has its colours).
pub fn theme_of(query: &str) -> Theme {
    query
        .split('&')
        .find_map(|f| f.strip_prefix("theme="))
        .and_then(Theme::from_name)
        .unwrap_or_default()
}

/// Checks an origin as a browser writes `event.origin`: `http` or `https`, a host, an optional
/// port, and nothing after.
pub fn valid_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !h.contains(']') || h.ends_with(']') => (h, Some(p)),
        _ => (rest, None),
    };
    !host.is_empty()
        && origin.len() <= 200
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.[]:".contains(&b))
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

impl Embed {
    /// Reads an embed address's query (what follows `#/embed?`).
    pub fn from_query(query: &str) -> Result<Embed, LinkError> {
        Embed::from_query_with(crate::ui::Codec::EMBED, query)
    }

    /// [`Embed::from_query`], checking the listed controls against the scenario as `codec`
    /// reads it.
    pub fn from_query_with(codec: crate::ui::Codec, query: &str) -> Result<Embed, LinkError> {
        Embed::from_query_unpacked(codec, query, &share::unpack)
    }

    /// [`Embed::from_query_with`], reading a packed scenario with `unpack` (the embed view's
    /// has the browser inflate it).
    pub fn from_query_unpacked(
        codec: crate::ui::Codec,
        query: &str,
        unpack: &dyn Fn(&str) -> Result<String, LinkError>,
    ) -> Result<Embed, LinkError> {
        let mut rest = Vec::new();
        let mut controls = Vec::new();
        let mut origins = Vec::new();
        let mut theme = Theme::Auto;
        let mut caption = None;
        let mut id = None;
        for field in query.split('&') {
            if let Some(name) = field.strip_prefix("id=") {
                if !valid_id(name) {
                    return Err(LinkError(format!(
                        "the embed id \"{}\" is not 1 to {EMBED_ID_CHARS_MAX} letters, digits, - or _",
                        name.chars().take(20).collect::<String>()
                    )));
                }
                id = Some(name.to_string());
                continue;
            }
            if let Some(name) = field.strip_prefix("theme=") {
                theme = Theme::from_name(name).ok_or_else(|| {
                    LinkError(format!(
                        "the theme \"{}\" is not light, dark or auto",
                        name.chars().take(20).collect::<String>()
                    ))
                })?;
                continue;
            }
            if let Some(text) = field.strip_prefix("caption=") {
                let text = share::unescape(text)?;
                if text.chars().count() > CAPTION_CHARS_MAX {
                    return Err(LinkError(format!(
                        "the caption is longer than {CAPTION_CHARS_MAX} characters"
                    )));
                }
                caption = Some(text);
                continue;
            }
            if let Some(list) = field.strip_prefix("controls=") {
                for c in share::unescape(list)?
                    .split(',')
                    .filter(|c| !c.trim().is_empty())
                {
                    if controls.len() == CONTROLS_MAX {
                        return Err(LinkError(format!(
                            "the embed lists more than {CONTROLS_MAX} controls"
                        )));
                    }
                    controls.push(
                        c.parse::<Control>()
                            .map_err(|e| LinkError(format!("the embed's controls: {e}")))?,
                    );
                }
            } else if let Some(list) = field.strip_prefix("origins=") {
                for o in share::unescape(list)?.split(',').filter(|o| !o.is_empty()) {
                    if origins.len() == ORIGINS_MAX {
                        return Err(LinkError(format!(
                            "the embed lists more than {ORIGINS_MAX} origins"
                        )));
                    }
                    if !valid_origin(o) {
                        return Err(LinkError(format!(
                            "\"{}\" is not an origin such as https://docs.example.org",
                            o.chars().take(60).collect::<String>()
                        )));
                    }
                    origins.push(o.to_string());
                }
            } else {
                rest.push(field);
            }
        }
        let link = Link::from_query_unpacked(&rest.join("&"), unpack)?;
        // An embed never shows a run its address does not name: a scenario that is not shipped
        // or does not read is the address's error, not a default run under a note.
        let scenario = link.source.scenario_with(codec)?;
        if let Some(problem) = controls.iter().find_map(|c| c.problem(&scenario)) {
            return Err(LinkError(format!("the embed's controls: {problem}")));
        }
        Ok(Embed {
            link,
            controls,
            origins,
            theme,
            caption,
            id,
        })
    }

    /// The embed address's query.
    pub fn to_query(&self) -> String {
        let mut q = self.link.to_query();
        if !self.controls.is_empty() {
            let list: Vec<String> = self.controls.iter().map(|c| c.to_string()).collect();
            q.push_str(&format!("&controls={}", share::escape(&list.join(","))));
        }
        if !self.origins.is_empty() {
            q.push_str(&format!(
                "&origins={}",
                share::escape(&self.origins.join(","))
            ));
        }
        if self.theme != Theme::Auto {
            q.push_str(&format!("&theme={}", self.theme.name()));
        }
        if let Some(c) = &self.caption {
            q.push_str(&format!("&caption={}", share::escape(c)));
        }
        if let Some(id) = &self.id {
            q.push_str(&format!("&id={id}"));
        }
        q
    }

    /// The iframe snippet for a host page: a title, lazy loading, and a sandbox that allows
    /// scripts, the frame's own origin, and opening the full app in a new tab, nothing else
    /// (no forms, no top navigation, no downloads). The frame keeps this site's origin so that
    /// its script, wasm and stylesheet are same-origin requests that any plain static server
    /// answers (with an opaque origin they are cross-origin, and a server without
    /// `Access-Control-Allow-Origin` leaves a blank box), and so that its messages carry an
    /// origin a host can check. That is safe because the frame runs only this site's code, on
    /// this site's origin, never the host's: the host's origin stays out of its reach, and a
    /// scenario in the address is data, validated and shown as text. The short script sizes
    /// the frame from the embed's height messages, checking that they come from this frame;
    /// it is a file of the site's ([`SIZING_SCRIPT`]), not inline, so that docs portals whose
    /// policy forbids inline script can use the snippet as it is. For the same reason the frame
    /// has no inline style, only [`FRAME_CLASS`], which the script styles.
    pub fn snippet(&self, app_url: &str, title: &str) -> String {
        let src = format!("{app_url}#/embed?{}", self.to_query());
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('"', "&quot;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        format!(
            "<iframe src=\"{}\" title=\"{}\" loading=\"lazy\" \
             sandbox=\"allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox\" \
             class=\"{FRAME_CLASS}\"></iframe>\n\
             <script src=\"{}\" async></script>\n",
            esc(&src),
            esc(title),
            esc(&format!("{app_url}{SIZING_SCRIPT}"))
        )
    }

    /// Whether a message from `origin` may be read at all.
    pub fn trusts(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o == origin)
    }
}

/// The app an embed shows: the run its address names, at the address's playhead (`t=`) or at
/// the run's end (many readers never press anything); or why that run cannot be shown. There is
/// no fallback: an embed that cannot show its run shows the reason and no run.
pub fn open(codec: crate::ui::Codec, embed: &Embed) -> Result<crate::ui::App, LinkError> {
    let app = crate::ui::App::open_with(codec, crate::ui::DEFAULT_SOURCE)
        .reduce(crate::ui::Action::OpenLink(embed.link.clone()));
    if !app.linked {
        return Err(LinkError(
            app.notice
                .as_deref()
                .and_then(|n| n.strip_prefix("This link cannot be opened: "))
                .and_then(|n| n.split(". The page shows").next())
                .unwrap_or("its scenario does not run here")
                .to_string(),
        ));
    }
    Ok(if embed.link.playhead_us > 0 {
        app
    } else {
        app.reduce(crate::ui::Action::ToEnd)
    })
}

/// Where a frame that cannot show its run sends the reader: the course, in a tab of its own.
pub const COURSE_FRAGMENT: &str = "#/lessons";

/// Whether `name` can be an embed's id: 1 to [`EMBED_ID_CHARS_MAX`] letters, digits, `-` or `_`.
pub fn valid_id(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= EMBED_ID_CHARS_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The embed id an address names, read on its own, so that an address broken elsewhere still
/// names itself in its error.
pub fn id_of(query: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|f| f.strip_prefix("id="))
        .find(|n| valid_id(n))
        .map(str::to_string)
}

/// The valid origins an embed address lists, read on their own: an address that is broken
/// elsewhere can still tell its host why.
pub fn origins_of(query: &str) -> Vec<String> {
    query
        .split('&')
        .filter_map(|f| f.strip_prefix("origins="))
        .filter_map(|list| share::unescape(list).ok())
        .flat_map(|list| {
            list.split(',')
                .filter(|o| valid_origin(o))
                .take(ORIGINS_MAX)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .take(ORIGINS_MAX)
        .collect()
}

/// What a broken embed address tells its host: `lockstep:error` with the reason, the same
/// words the frame shows. It carries no run, so it goes to the listed origins, or to any host
/// when the address lists none that can be read.
pub fn error_reply(reason: &str) -> String {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), "lockstep:error".into());
    m.insert("error".into(), reason.into());
    serde_json::Value::Object(m).to_string()
}

/// A message from the host, once accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostMessage {
    SetToggle(Edit),
    SetPlayhead {
        us: u64,
    },
    Play,
    Pause,
    GetVerdict {
        id: Option<u64>,
    },
    GetState {
        id: Option<u64>,
    },
    GetLink {
        id: Option<u64>,
    },
    /// `lockstep:get-height`: a sizing script that arrived after the embed's last height asks
    /// for it. Any host may ask (a height is no secret), so the view answers it apart from the
    /// host API, to `"*"`; from a listed origin it is simply accepted.
    GetHeight {
        id: Option<u64>,
    },
    /// `lockstep:set-theme`: the host page switched its theme (light, dark, or auto: the
    /// reader's setting, followed as it changes).
    SetTheme(Theme),
}

/// A host's message as it is written, before its edit and numbers are checked.
enum Wire {
    SetToggle { edit: String },
    SetPlayhead { ms: f64 },
    Play,
    Pause,
    GetVerdict { id: Option<u64> },
    GetState { id: Option<u64> },
    GetLink { id: Option<u64> },
    GetHeight { id: Option<u64> },
    SetTheme { theme: String },
}

/// Reads a message's `type` and its members by hand: a derived reader of an enum tagged by a
/// member buffers the message in a generic form first, and cost the embed's bundle about 4 KB.
fn wire(value: &serde_json::Value) -> Result<Wire, String> {
    let o = crate::json::Obj::of(value, "the message")?;
    let id = || o.opt_u64("id");
    let (wire, members): (Wire, &[&str]) = match o.str("type")? {
        "lockstep:set-toggle" => (
            Wire::SetToggle {
                edit: o.string("edit")?,
            },
            &["type", "edit", "id"],
        ),
        "lockstep:set-playhead" => (
            Wire::SetPlayhead { ms: o.f64("ms")? },
            &["type", "ms", "id"],
        ),
        "lockstep:set-theme" => (
            Wire::SetTheme {
                theme: o.string("theme")?,
            },
            &["type", "theme", "id"],
        ),
        "lockstep:play" => (Wire::Play, &["type", "id"]),
        "lockstep:pause" => (Wire::Pause, &["type", "id"]),
        "lockstep:get-verdict" => (Wire::GetVerdict { id: id()? }, &["type", "id"]),
        "lockstep:get-state" => (Wire::GetState { id: id()? }, &["type", "id"]),
        "lockstep:get-link" => (Wire::GetLink { id: id()? }, &["type", "id"]),
        "lockstep:get-height" => (Wire::GetHeight { id: id()? }, &["type", "id"]),
        other => return Err(format!("\"{other}\" is not a type of message it reads")),
    };
    o.only(members)?;
    Ok(wire)
}

/// What the embed makes of a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// Not from a listed origin: ignored without a word, so a page that is not the embedder
    /// learns nothing.
    Ignore,
    /// From a listed origin but not acceptable: the reason, which goes back to that origin as
    /// `lockstep:error`.
    Refuse(String),
    Accept(HostMessage),
}

/// Reads a message from the host: see [`Read`].
pub fn read(embed: &Embed, origin: &str, data: &str) -> Read {
    if !embed.trusts(origin) {
        return Read::Ignore;
    }
    if data.len() > MESSAGE_BYTES_MAX {
        return Read::Refuse(format!(
            "the message is {} bytes of JSON; at most {MESSAGE_BYTES_MAX} are read",
            data.len()
        ));
    }
    let mut value: serde_json::Value = match serde_json::from_str(data) {
        Ok(v) => v,
        Err(e) => return Read::Refuse(format!("the message is not JSON: {e}")),
    };
    if let Some(map) = value.as_object_mut() {
        if let Some(p) = map.remove("protocol") {
            if p.as_u64() != Some(u64::from(PROTOCOL)) {
                return Read::Refuse(format!(
                    "the message speaks protocol {p}; this embed speaks {PROTOCOL}"
                ));
            }
        }
    }
    // Every request may carry an id, which its answer (or its error) echoes.
    if let Err(e) = crate::json::Obj::of(&value, "the message").and_then(|o| o.opt_u64("id")) {
        return Read::Refuse(format!("the message is not one the embed reads: {e}"));
    }
    let wire = match wire(&value) {
        Ok(w) => w,
        Err(e) => return Read::Refuse(format!("the message is not one the embed reads: {e}")),
    };
    Read::Accept(match wire {
        Wire::SetToggle { edit } => {
            let edit: Edit = match edit.parse() {
                Ok(e) => e,
                Err(e) => return Read::Refuse(format!("the edit \"{edit}\": {e}")),
            };
            if !allowed(&embed.controls, &edit) {
                return Read::Refuse(format!(
                    "the edit \"{edit}\" uses the control \"{}\", which this embed does not offer",
                    Control::of(&edit)
                ));
            }
            HostMessage::SetToggle(edit)
        }
        Wire::SetPlayhead { ms } => {
            if !(ms.is_finite() && ms >= 0.0) {
                return Read::Refuse(format!("the playhead {ms} is not a time in milliseconds"));
            }
            HostMessage::SetPlayhead {
                us: (ms.min(1e12) * 1000.0) as u64,
            }
        }
        Wire::Play => HostMessage::Play,
        Wire::Pause => HostMessage::Pause,
        Wire::GetVerdict { id } => HostMessage::GetVerdict { id },
        Wire::GetState { id } => HostMessage::GetState { id },
        Wire::GetLink { id } => HostMessage::GetLink { id },
        Wire::GetHeight { id } => HostMessage::GetHeight { id },
        Wire::SetTheme { theme } => match Theme::from_name(&theme) {
            Some(t) => HostMessage::SetTheme(t),
            None => {
                return Read::Refuse(format!(
                    "the theme \"{}\" is not light, dark or auto",
                    theme.chars().take(20).collect::<String>()
                ))
            }
        },
    })
}

/// The `id` a host's message carries, if it is a whole number: echoed in the answer, and in the
/// error when the message is refused, so a host that sends several requests at once can tell
/// which answer is whose.
pub fn request_id(data: &str) -> Option<u64> {
    if data.len() > MESSAGE_BYTES_MAX {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(data)
        .ok()?
        .get("id")?
        .as_u64()
}

/// `lockstep:error` in answer to a request: the reason, and the request's id when it had one.
pub fn refusal(reason: &str, id: Option<u64>) -> String {
    text_reply("error", "error", reason, id)
}

/// What an accepted message does to the embed: the action for its app, the theme to show, and
/// the answer to its host, if any. Worked out on the app as it is, so an answer is about the
/// app after the change (the playhead used, the new verdict) and a change the run refuses is
/// an error for the host, never a notice in the frame.
#[derive(Debug, Default)]
pub struct Handled {
    pub action: Option<crate::ui::Action>,
    pub theme: Option<Theme>,
    pub reply: Option<String>,
}

/// Handles an accepted message ([`read`]) with the request's `id` ([`request_id`]). A change
/// (a toggle, the playhead, play, pause, the theme) is answered when it carries an id, with
/// `lockstep:state` (`lockstep:theme` for the theme); a playhead is always answered, since the
/// one used may not be the one asked (a time past the run's end is its end). `get-link` needs
/// the browser to pack the scenario and `get-height` the page's layout: the view answers them.
pub fn handle(app: &crate::ui::App, message: HostMessage, id: Option<u64>) -> Handled {
    use crate::ui::Action;
    let change = |action: Action, always: bool| {
        let next = app.reduce(action.clone());
        Handled {
            reply: (always || id.is_some()).then(|| state_reply(&next, id)),
            action: Some(action),
            theme: None,
        }
    };
    match message {
        HostMessage::SetToggle(edit) => {
            let toggle = edit.toggle(&app.scenario);
            let next = app.reduce(Action::Toggle(toggle.clone()));
            if !next.toggle_errors.is_empty() {
                let why = crate::scenario::ScenarioErrors(next.toggle_errors).to_string();
                return Handled {
                    reply: Some(refusal(
                        &format!("the edit \"{edit}\" is refused: {}", why.trim_end()),
                        id,
                    )),
                    ..Handled::default()
                };
            }
            Handled {
                reply: id.map(|_| state_reply(&next, id)),
                action: Some(Action::Toggle(toggle)),
                theme: None,
            }
        }
        HostMessage::SetPlayhead { us } => change(Action::Seek(us), true),
        HostMessage::Play if !app.playing => change(Action::PlayPause, false),
        HostMessage::Pause if app.playing => change(Action::PlayPause, false),
        HostMessage::Play | HostMessage::Pause => Handled {
            reply: id.map(|_| state_reply(app, id)),
            ..Handled::default()
        },
        HostMessage::SetTheme(theme) => Handled {
            theme: Some(theme),
            reply: id.map(|_| text_reply("theme", "theme", theme.name(), id)),
            action: None,
        },
        HostMessage::GetVerdict { id } => Handled {
            reply: Some(reply(
                "verdict",
                Some(&VerdictSummary::of(
                    &app.outcome.headline,
                    &app.outcome.verdict,
                    app.outcome.digest,
                )),
                id,
                None,
            )),
            ..Handled::default()
        },
        HostMessage::GetState { id } => Handled {
            reply: Some(state_reply(app, id)),
            ..Handled::default()
        },
        HostMessage::GetLink { .. } | HostMessage::GetHeight { .. } => Handled::default(),
    }
}

/// Adds what every message from the embed carries: the protocol's version, and the embed's
/// id when its address names one.
pub fn stamp(message: &str, embed_id: Option<&str>) -> String {
    let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str(message) else {
        return message.to_string();
    };
    m.insert("protocol".into(), PROTOCOL.into());
    if let Some(id) = embed_id {
        m.insert("embed".into(), id.into());
    }
    serde_json::Value::Object(m).to_string()
}

/// Reads a message from the host: the message, or `None` for anything [`read`] does not
/// accept (ignored or refused).
pub fn accept(embed: &Embed, origin: &str, data: &str) -> Option<HostMessage> {
    match read(embed, origin, data) {
        Read::Accept(m) => Some(m),
        Read::Ignore | Read::Refuse(_) => None,
    }
}

/// The verdict as the host API reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerdictSummary {
    pub headline: String,
    pub exclusion: &'static str,
    pub integrity: &'static str,
    pub overlaps: u64,
    pub lost_updates: u64,
    pub rejected_writes: u64,
    pub deadlock: bool,
    pub events: u64,
    pub digest: String,
}

impl VerdictSummary {
    pub fn of(headline: &str, v: &Verdict, digest: u64) -> VerdictSummary {
        VerdictSummary {
            headline: headline.to_string(),
            exclusion: match v.exclusion {
                Exclusion::Holds => "holds",
                Exclusion::Broken => "broken",
            },
            integrity: match v.integrity {
                Integrity::Intact => "intact",
                Integrity::Corrupted => "corrupted",
            },
            overlaps: v.violation_count,
            lost_updates: v.lost_updates,
            rejected_writes: v.rejected_writes,
            deadlock: v.deadlock,
            events: v.events,
            digest: format!("{digest:016x}"),
        }
    }
}

/// A message to the host, as JSON.
pub fn reply(
    kind: &str,
    verdict: Option<&VerdictSummary>,
    id: Option<u64>,
    px: Option<u32>,
) -> String {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), format!("lockstep:{kind}").into());
    if let Some(v) = verdict {
        m.insert(
            "verdict".into(),
            serde_json::to_value(v).expect("a summary serializes"),
        );
    }
    if let Some(id) = id {
        m.insert("id".into(), id.into());
    }
    if let Some(px) = px {
        m.insert("px".into(), px.into());
    }
    serde_json::Value::Object(m).to_string()
}

/// The embed's state as `lockstep:state` reports it: the playhead, whether it plays, the
/// controls' values (as edit lines) and the verdict.
pub fn state_reply(app: &crate::ui::App, id: Option<u64>) -> String {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), "lockstep:state".into());
    m.insert("playhead_ms".into(), (app.time as f64 / 1000.0).into());
    m.insert("playing".into(), app.playing.into());
    let edits: Vec<serde_json::Value> = app
        .settings
        .toggles()
        .iter()
        .map(|t| t.to_string().into())
        .collect();
    m.insert("edits".into(), edits.into());
    let summary = VerdictSummary::of(
        &app.outcome.headline,
        &app.outcome.verdict,
        app.outcome.digest,
    );
    m.insert(
        "verdict".into(),
        serde_json::to_value(&summary).expect("a summary serializes"),
    );
    if let Some(id) = id {
        m.insert("id".into(), id.into());
    }
    serde_json::Value::Object(m).to_string()
}

/// A message with one string field: `lockstep:link` (`url`), `lockstep:play-state`'s words.
pub fn text_reply(kind: &str, field: &str, value: &str, id: Option<u64>) -> String {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), format!("lockstep:{kind}").into());
    m.insert(field.into(), value.into());
    if let Some(id) = id {
        m.insert("id".into(), id.into());
    }
    serde_json::Value::Object(m).to_string()
}

/// `lockstep:play-state`: whether the run plays and where the playhead is.
pub fn play_state_reply(playing: bool, playhead_us: u64) -> String {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), "lockstep:play-state".into());
    m.insert("playing".into(), playing.into());
    m.insert("playhead_ms".into(), (playhead_us as f64 / 1000.0).into());
    serde_json::Value::Object(m).to_string()
}

/// The verdict in one short line, for a narrow frame: whether exclusion held, and the figures
/// a reader checks first ("Exclusion broken: 6 overlaps, 5 lost updates").
pub fn short_headline(v: &Verdict) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if v.violation_count > 0 {
        parts.push(plural(v.violation_count, "overlap", "overlaps"));
    }
    if v.lost_updates > 0 {
        parts.push(plural(v.lost_updates, "lost update", "lost updates"));
    }
    if v.rejected_writes > 0 {
        parts.push(plural(v.rejected_writes, "write refused", "writes refused"));
    }
    if v.deadlock {
        parts.push("deadlock".to_string());
    }
    let head = match v.exclusion {
        Exclusion::Holds => "Exclusion holds",
        Exclusion::Broken => "Exclusion broken",
    };
    if parts.is_empty() {
        head.to_string()
    } else {
        format!("{head}: {}", parts.join(", "))
    }
}
