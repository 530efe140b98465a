//! How a lesson file that is not part of the build reaches a browser: by a link whose
//! fragment says where the file is (`#/lessons?open=URL`, or a step's link with the same
//! `?open=`), or from a folder of lessons served beside the site (`lessons/index.json`, which
//! `lockstep lesson pack` writes). Either way the page fetches the file's text and checks it
//! exactly as a picked file is checked; what is decided here is pure: which address a link
//! names, whether the site allows fetching from it, what a folder's index lists, and the words
//! for each way a fetch can fail.
//!
//! The origins a site allows are the ones its Content Security Policy lets the page connect to
//! (`connect-src` in `index.html`): one list, which the browser enforces anyway, so the page
//! only explains a refusal before the browser makes it.

/// The folder of lessons served beside the site: its index, relative to the page.
pub const FOLDER_INDEX: &str = "lessons/index.json";
/// The most lessons a folder's index may list.
pub const FOLDER_LESSONS_MAX: usize = 40;
/// The longest address `open=` may carry.
pub const URL_CHARS_MAX: usize = 2048;

/// The lesson file a lessons fragment asks to open (`open=`), percent-decoded; `None` when the
/// fragment is not under `#/lessons` or carries no `open=`.
pub fn open_param(hash: &str) -> Option<String> {
    let raw = hash.strip_prefix('#').unwrap_or(hash);
    let (path, query) = raw.split_once('?')?;
    if !(path == "/lessons" || path.starts_with("/lessons/")) {
        return None;
    }
    let value = query
        .split('&')
        .find_map(|field| field.strip_prefix("open="))?;
    let value = decode(value)?;
    let value = value.trim();
    (!value.is_empty() && value.len() <= URL_CHARS_MAX).then(|| value.to_string())
}

/// Percent-decoding; `None` for a broken escape or bytes that are not UTF-8.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether the page may fetch a lesson from `url`, an absolute address the browser resolved
/// against the page: its scheme must be http or https, and its origin the page's own or one
/// the site's policy lets the page connect to. `csp` is the policy's text, `None` when the page
/// has none (then only the page's own origin is allowed, the safe reading).
pub fn may_fetch(url: &str, page_origin: &str, csp: Option<&str>) -> Result<(), String> {
    let origin = origin_of(url)
        .ok_or_else(|| format!("\"{url}\" is not an http or https address of a lesson file"))?;
    if origin == page_origin {
        return Ok(());
    }
    if let Some(csp) = csp {
        let sources = connect_sources(csp);
        if sources.iter().any(|s| source_allows(s, &origin)) {
            return Ok(());
        }
    }
    Err(format!(
        "this site opens lessons only from its own address ({page_origin}) and the addresses its \
         operator allows, and {origin} is not one of them; its operator can allow it with \
         `lockstep lesson pack --allow-origin {origin}`, or the lesson file can be served \
         beside the site"
    ))
}

/// The origin (`scheme://host[:port]`) of an absolute http or https address, lower-cased.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // A user name and password before `@` are not part of the origin.
    let host = authority.rsplit('@').next().unwrap_or("");
    if host.is_empty() {
        return None;
    }
    let host = host.to_ascii_lowercase();
    // The default port is left out, as the browser writes an origin.
    let host = match (
        scheme.as_str(),
        host.strip_suffix(":80"),
        host.strip_suffix(":443"),
    ) {
        ("http", Some(h), _) | ("https", _, Some(h)) => h.to_string(),
        _ => host,
    };
    Some(format!("{scheme}://{host}"))
}

/// The sources of the policy's `connect-src` (or of `default-src` when it has none).
fn connect_sources(csp: &str) -> Vec<String> {
    let directive = |name: &str| {
        csp.split(';').find_map(|d| {
            let mut words = d.split_whitespace();
            (words.next()?.eq_ignore_ascii_case(name))
                .then(|| words.map(str::to_string).collect::<Vec<_>>())
        })
    };
    directive("connect-src")
        .or_else(|| directive("default-src"))
        .unwrap_or_default()
}

/// Whether one source expression of a policy lets the page connect to `origin`. Only the forms
/// an operator writes for a lesson host are read: `*`, a scheme (`https:`), and an origin with
/// or without a `*.` subdomain wildcard; keywords such as `'self'` are handled by the caller.
fn source_allows(source: &str, origin: &str) -> bool {
    let source = source.trim_end_matches('/').to_ascii_lowercase();
    if source == "*" {
        return origin.starts_with("http");
    }
    if let Some(scheme) = source.strip_suffix(':') {
        return origin.starts_with(&format!("{scheme}://"));
    }
    if source == origin {
        return true;
    }
    if let Some((scheme, host)) = source.split_once("://*.") {
        if let Some(rest) = origin.strip_prefix(&format!("{scheme}://")) {
            return rest.ends_with(&format!(".{host}"));
        }
    }
    false
}

/// The files a folder's index lists, each a plain file name beside the index (no folder, no
/// `..`, ending in `.md`), at most [`FOLDER_LESSONS_MAX`].
pub fn read_folder_index(json: &str) -> Result<Vec<String>, String> {
    // The index is `{"lessons": [FILE, ...]}` and nothing else.
    let lessons = (|| {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let o = crate::json::Obj::of(&value, "the index")?;
        o.only(&["lessons"])?;
        o.strings("lessons")
    })()
    .map_err(|e| format!("{FOLDER_INDEX} is not a list of lesson files: {e}"))?;
    if lessons.len() > FOLDER_LESSONS_MAX {
        return Err(format!(
            "{FOLDER_INDEX} lists {} lessons; at most {FOLDER_LESSONS_MAX} are read",
            lessons.len()
        ));
    }
    for name in &lessons {
        let plain = !name.is_empty()
            && name.len() <= 100
            && name.ends_with(".md")
            && !name.starts_with('.')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !plain {
            return Err(format!(
                "{FOLDER_INDEX} lists \"{name}\", which is not the name of a lesson file beside \
                 it (letters, digits, '-', '_' and '.', ending in .md)"
            ));
        }
    }
    Ok(lessons)
}

/// Why a lesson file could not be fetched, in words that name the cause: the network being
/// off, the server's answer, or the file being too large.
pub fn fetch_failure(url: &str, failure: &Fetch) -> String {
    match failure {
        Fetch::Offline => format!(
            "the lesson at {url} could not be fetched: this browser is offline. A lesson opened \
             once stays in this browser and opens offline; this one has not been opened here yet"
        ),
        Fetch::Status(status) => format!(
            "the lesson at {url} could not be fetched: the server answered HTTP {status}{}",
            if *status == 404 {
                " (no file at that address)"
            } else {
                ""
            }
        ),
        Fetch::TooLarge(bytes) => format!(
            "the file at {url} is {bytes} bytes; a lesson file is at most {} bytes",
            crate::lesson::LESSON_BYTES_MAX
        ),
        Fetch::Refused(why) => format!(
            "the lesson at {url} could not be fetched: no answer came ({why}). The network may be \
             off or its server down; a server on another address than this site's must also let \
             this site read the file (the header Access-Control-Allow-Origin)"
        ),
    }
}

/// How a fetch of a lesson file failed, as the page observed it.
#[derive(Clone, Debug, PartialEq)]
pub enum Fetch {
    /// The browser says it has no network.
    Offline,
    /// The server answered with this status.
    Status(u16),
    /// The file is larger than a lesson may be.
    TooLarge(usize),
    /// The browser refused or could not complete the request, with its words.
    Refused(String),
}

/// Why the lesson checker could not run, in words that blame neither the lesson nor its line.
pub fn checker_failure(online: bool) -> String {
    if online {
        "the lesson checker stopped with an error before it answered; reload the page and open \
         the file again"
            .to_string()
    } else {
        "the lesson checker could not be loaded because this browser is offline; the page keeps \
         it for offline use after one visit online"
            .to_string()
    }
}
