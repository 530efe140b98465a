//! Permalinks: the state of a run in a URL fragment, and back.
//!
//! A link is data, never code: a handful of `key=value` fields after `#/run?`, each checked
//! and bounded before use. A built-in scenario travels as its file name plus the control
//! changes made to it (the same edit lines a lesson writes, such as `fencing accounts
//! one_source`); any other scenario travels in canonical form, deflated and encoded in
//! URL-safe base64, as JSON, the one form every bundle of the page reads. (Links that carry a
//! scenario as TOML, which earlier versions wrote, still open: the page loads its full bundle
//! for them.) Every link carries the format version and the digest of the trace it was made
//! from, so that opening it can tell "the same run, event for event" from "made by another
//! version, and here is what differs".
//!
//! Fields:
//!
//! | key   | value |
//! |-------|-------|
//! | `v`   | the link format version, [`LINK_VERSION`] |
//! | `b`   | a built-in scenario's file name |
//! | `e`   | one edit applied to it, in order (repeated) |
//! | `j`   | a custom scenario: base64url(deflate(canonical JSON)) |
//! | `c`   | a custom scenario as earlier versions wrote it: base64url(deflate(canonical TOML)) |
//! | `t`   | the playhead, in microseconds |
//! | `z`   | the timeline's zoom |
//! | `o`   | `1` when each service's own order is shown |
//! | `f`   | the compared run's flipped toggle, as an edit line |
//! | `d`   | the trace digest, 16 hexadecimal digits |

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::builtin;
use crate::lesson::edit::{apply_edits, Edit};
use crate::scenario::{limits, Scenario};
use crate::ui::{toggles, Codec};

/// The version of the link format. A link with another version is still read when it can be,
/// and the app says that it was made by another version.
pub const LINK_VERSION: u32 = 1;

/// The longest fragment read, in bytes: checked before anything is decoded.
pub const LINK_BYTES_MAX: usize = 256 * 1024;

/// The longest scenario text a link may expand to: the editor's own limit, so a small link
/// can never inflate into more than a scenario the page would accept typed in.
pub const LINK_SCENARIO_BYTES_MAX: usize = limits::TEXT_BYTES_MAX;

/// The most edits a built-in link may carry.
pub const LINK_EDITS_MAX: usize = 64;

/// Where a linked scenario comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A built-in scenario and the control changes made to it, in order.
    Builtin { file: String, edits: Vec<Edit> },
    /// Any other scenario, as TOML: what earlier versions wrote, read where the whole app is
    /// loaded.
    Custom { toml: String },
    /// Any other scenario, as JSON: what every view writes, and the one form all read.
    Json { json: String },
}

/// How a link's run is seen, apart from its scenario: where the playhead is, the zoom, each
/// service's own order and the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub playhead_us: u64,
    pub zoom: u32,
    pub own_order: bool,
    /// The toggle flipped for the compared run, as an edit line.
    pub compare: Option<Edit>,
}

/// Everything a permalink says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub version: u32,
    pub source: Source,
    pub playhead_us: u64,
    pub zoom: u32,
    pub own_order: bool,
    /// The toggle flipped for the compared run, as an edit line.
    pub compare: Option<Edit>,
    /// The digest of the trace the link was made from; a link written by hand may leave it
    /// out, and then the run is shown as this version computes it, without comparing.
    pub digest: Option<u64>,
}

/// Why a link could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError(pub String);

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(message: impl Into<String>) -> LinkError {
    LinkError(message.into())
}

/// The control changes that turn a built-in scenario into `current`, if the controls can say
/// it: protocols, fencing, roles and the seed. `None` when anything else differs (an editor
/// change, a fault): then the link carries the whole scenario. The answer is checked by
/// applying the edits, so a short link always reproduces `current` exactly.
pub fn edits_from(start: &Scenario, current: &Scenario) -> Option<Vec<Edit>> {
    if start == current {
        return Some(Vec::new());
    }
    let mut edits = Vec::new();
    if start.clients.len() != current.clients.len()
        || start.resources.len() != current.resources.len()
        || start.services.len() != current.services.len()
    {
        return None;
    }
    for (a, b) in start.clients.iter().zip(&current.clients) {
        if a.protocol != b.protocol {
            edits.push(Edit::Protocol {
                class: b.name.clone(),
                choice: toggles::protocol_value(&b.protocol),
            });
        }
    }
    for (a, b) in start.resources.iter().zip(&current.resources) {
        if (a.fencing, a.fencing_checks, &a.fencing_source)
            != (b.fencing, b.fencing_checks, &b.fencing_source)
        {
            edits.push(Edit::Fencing {
                resource: b.name.clone(),
                mode: b.fencing,
                checks: Some(b.fencing_checks),
            });
        }
    }
    for (a, b) in start.services.iter().zip(&current.services) {
        if a.subordinate_to != b.subordinate_to {
            edits.push(Edit::Role {
                service: b.name.clone(),
                authority: b.subordinate_to.clone(),
            });
        }
    }
    for (a, b) in start.services.iter().zip(&current.services) {
        if a.outages != b.outages {
            let service = b.name.clone();
            match b.outages.first() {
                None => edits.push(Edit::Outage { service, on: false }),
                Some(w) => {
                    edits.push(Edit::Outage {
                        service: service.clone(),
                        on: true,
                    });
                    edits.push(Edit::OutageStart {
                        service: service.clone(),
                        ms: w.start_ms,
                    });
                    edits.push(Edit::OutageLength {
                        service,
                        ms: w.duration_ms,
                    });
                }
            }
        }
    }
    // Faults as their controls set them: off, or on with the first window's times. Anything
    // the controls cannot say (a second window, other groups) fails the final comparison, and
    // the scenario travels whole.
    if start.partitions != current.partitions {
        match current.partitions.first() {
            None => edits.push(Edit::Partition(false)),
            Some(p) => edits.extend([
                Edit::Partition(true),
                Edit::PartitionStart(p.start_ms),
                Edit::PartitionLength(p.duration_ms),
            ]),
        }
    }
    if start.pauses != current.pauses {
        match current.pauses.first() {
            None => edits.push(Edit::Pause(false)),
            Some(p) => edits.extend([
                Edit::Pause(true),
                Edit::PauseClient(p.client.clone()),
                Edit::PauseStart(p.start_ms),
                Edit::PauseLength(p.duration_ms),
            ]),
        }
    }
    if start.migrations != current.migrations {
        match current.migrations.first() {
            None => edits.push(Edit::Migration(false)),
            Some(m) => edits.extend([
                Edit::Migration(true),
                Edit::MigrationMode(m.mode),
                Edit::MigrationAt(m.at_ms),
            ]),
        }
    }
    if start.seed != current.seed {
        edits.push(Edit::Seed(current.seed));
    }
    (edits.len() <= LINK_EDITS_MAX && apply_edits(start, &edits) == *current).then_some(edits)
}

/// The source a link should carry for a scenario the user picked from `picked` (a built-in
/// file name, or anything else for a custom scenario).
pub fn source_of(picked: &str, current: &Scenario) -> Source {
    source_of_with(Codec::FULL, picked, current)
}

/// [`source_of`], reading the built-in scenario with `codec`, and writing a custom scenario in
/// the form the codec's links use.
pub fn source_of_with(codec: Codec, picked: &str, current: &Scenario) -> Source {
    if let Some(b) = builtin::find(picked) {
        if let Some(start) = (codec.source)(b.file) {
            if let Some(edits) = edits_from(&start, current) {
                return Source::Builtin {
                    file: b.file.to_string(),
                    edits,
                };
            }
        }
    }
    (codec.custom)(current)
}

impl Source {
    /// The scenario text a link packs (`c=`, `j=`); none for a shipped scenario.
    pub fn packed_text(&self) -> Option<&str> {
        match self {
            Source::Custom { toml } => Some(toml),
            Source::Json { json } => Some(json),
            Source::Builtin { .. } => None,
        }
    }

    /// The scenario a source describes, validated like anything typed into the editor.
    pub fn scenario(&self) -> Result<Scenario, LinkError> {
        self.scenario_with(Codec::FULL)
    }

    /// [`Source::scenario`], reading shipped scenarios and TOML with `codec`.
    pub fn scenario_with(&self, codec: Codec) -> Result<Scenario, LinkError> {
        match self {
            Source::Builtin { file, edits } => {
                if builtin::find(file).is_none() {
                    return Err(bad(format!(
                        "the link names no built-in scenario \"{file}\""
                    )));
                }
                let start = (codec.source)(file)
                    .ok_or_else(|| bad(format!("built-in scenario {file} does not read")))?;
                for edit in edits {
                    if let Some(problem) = edit.problem(&start) {
                        return Err(bad(format!("the link's change \"{edit}\": {problem}")));
                    }
                }
                Ok(apply_edits(&start, edits))
            }
            Source::Custom { toml } => (codec.read)(toml)
                .map_err(|e| bad(format!("the link's scenario is not valid: {e}"))),
            Source::Json { json } => (codec.json)(json)
                .map_err(|e| bad(format!("the link's scenario is not valid: {e}"))),
        }
    }

    /// The same source with a custom scenario as JSON, the form an embed reads.
    pub fn for_embed(self, current: &Scenario) -> Source {
        match self {
            Source::Custom { .. } => Source::Json {
                json: current.to_json_string(),
            },
            other => other,
        }
    }
}

/// Whether a link's query carries its scenario as TOML (`c=`), which only the studio's bundle
/// of the page reads (see [`Codec::SANDBOX`]).
pub fn carries_toml(query: &str) -> bool {
    query.split('&').any(|f| f.starts_with("c="))
}

/// Percent-encodes everything but unreserved characters, so a value never carries `&`, `=`
/// or `#` into the fragment.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reads a percent-encoded field (`+` is a space).
pub fn unescape(text: &str) -> Result<String, LinkError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| bad(format!("a broken %-escape at character {}", i + 1)))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| bad("a field is not UTF-8 text"))
}

/// Deflates and encodes a scenario's text for a link.
pub fn pack(text: &str) -> String {
    encode_packed(&miniz_oxide::deflate::compress_to_vec(text.as_bytes(), 9))
}

/// Decodes and inflates a packed scenario, refusing to expand past
/// [`LINK_SCENARIO_BYTES_MAX`] before the text is ever whole.
pub fn unpack(packed: &str) -> Result<String, LinkError> {
    text_of_inflated(inflate_whole(&decode_packed(packed)?)?)
}

/// Inflates one whole deflate stream, at most [`LINK_SCENARIO_BYTES_MAX`] bytes of it. Bytes
/// after the stream's end are refused as the browser's decompressor refuses them (the embed and
/// the sandbox inflate with it), so that a link reads the same in every view.
fn inflate_whole(bytes: &[u8]) -> Result<Vec<u8>, LinkError> {
    use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let mut out = vec![
        0;
        bytes
            .len()
            .saturating_mul(4)
            .clamp(64, LINK_SCENARIO_BYTES_MAX)
    ];
    let mut state = Box::<DecompressorOxide>::default();
    let (mut input, mut written) = (bytes, 0);
    // Each round doubles the output, so the rounds are at most log2 of the bound.
    loop {
        let (status, consumed, produced) = decompress(&mut state, input, &mut out, written, flags);
        written += produced;
        input = input.get(consumed..).ok_or_else(not_deflate)?;
        match status {
            TINFLStatus::Done if input.is_empty() => {
                out.truncate(written);
                return Ok(out);
            }
            TINFLStatus::HasMoreOutput if out.len() < LINK_SCENARIO_BYTES_MAX => {
                let grown = out.len().saturating_mul(2).min(LINK_SCENARIO_BYTES_MAX);
                out.resize(grown, 0);
            }
            TINFLStatus::HasMoreOutput => return Err(expands_too_far()),
            _ => return Err(not_deflate()),
        }
    }
}

// The steps of `pack` and `unpack` around the deflating itself, for the embed view and the
// sandbox's permalinks, which have the browser deflate and inflate (its CompressionStream) rather than carry a compressor: the
// same format, the same bounds and the same words for what is wrong.

/// A deflated scenario as a link writes it (base64url without padding).
pub fn encode_packed(deflated: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(deflated)
}

/// The deflated bytes of a packed scenario.
pub fn decode_packed(packed: &str) -> Result<Vec<u8>, LinkError> {
    URL_SAFE_NO_PAD
        .decode(packed.trim_end_matches('='))
        .map_err(|e| bad(format!("the scenario in the link is not base64url: {e}")))
}

/// Why a packed scenario is refused when it would inflate past the bound.
pub fn expands_too_far() -> LinkError {
    bad(format!(
        "the scenario in the link expands past {LINK_SCENARIO_BYTES_MAX} bytes"
    ))
}

/// Why a packed scenario is refused when its bytes are not a whole deflate stream.
pub fn not_deflate() -> LinkError {
    bad("the scenario in the link is not deflate data")
}

/// The scenario's text, once inflated.
pub fn text_of_inflated(bytes: Vec<u8>) -> Result<String, LinkError> {
    String::from_utf8(bytes).map_err(|_| bad("the scenario in the link is not UTF-8 text"))
}

/// The packed scenarios a link's query carries (its `c=` and `j=` values), in order.
pub fn packed_in(query: &str) -> Vec<&str> {
    query
        .split('&')
        .filter_map(|f| f.strip_prefix("c=").or_else(|| f.strip_prefix("j=")))
        .collect()
}

impl Link {
    /// How the link's run is seen.
    pub fn view(&self) -> View {
        View {
            playhead_us: self.playhead_us,
            zoom: self.zoom,
            own_order: self.own_order,
            compare: self.compare.clone(),
        }
    }

    /// The fragment's query, without the leading `#/run?`.
    pub fn to_query(&self) -> String {
        self.to_query_packed(&pack)
    }

    /// [`Link::to_query`], packing a scenario's text with `pack`.
    pub fn to_query_packed(&self, pack: &dyn Fn(&str) -> String) -> String {
        let mut fields: Vec<String> = vec![format!("v={}", self.version)];
        match &self.source {
            Source::Builtin { file, edits } => {
                fields.push(format!("b={}", escape(file)));
                fields.extend(
                    edits
                        .iter()
                        .map(|e| format!("e={}", escape(&e.to_string()))),
                );
            }
            Source::Custom { toml } => fields.push(format!("c={}", pack(toml))),
            Source::Json { json } => fields.push(format!("j={}", pack(json))),
        }
        if self.playhead_us > 0 {
            fields.push(format!("t={}", self.playhead_us));
        }
        if self.zoom > 1 {
            fields.push(format!("z={}", self.zoom));
        }
        if self.own_order {
            fields.push("o=1".to_string());
        }
        if let Some(f) = &self.compare {
            fields.push(format!("f={}", escape(&f.to_string())));
        }
        if let Some(d) = self.digest {
            fields.push(format!("d={d:016x}"));
        }
        fields.join("&")
    }

    /// The whole fragment, `#/run?…`.
    pub fn to_fragment(&self) -> String {
        format!("#/run?{}", self.to_query())
    }

    /// [`Link::to_fragment`], packing a scenario's text with `pack`.
    pub fn to_fragment_packed(&self, pack: &dyn Fn(&str) -> String) -> String {
        format!("#/run?{}", self.to_query_packed(pack))
    }

    /// Reads a link's query (what follows `#/run?`). Unknown keys are refused rather than
    /// ignored, so a link from a newer format says so instead of opening something else.
    pub fn from_query(query: &str) -> Result<Link, LinkError> {
        Link::from_query_unpacked(query, &unpack)
    }

    /// [`Link::from_query`], reading a packed scenario (`c=`, `j=`) with `unpack`.
    pub fn from_query_unpacked(
        query: &str,
        unpack: &dyn Fn(&str) -> Result<String, LinkError>,
    ) -> Result<Link, LinkError> {
        if query.len() > LINK_BYTES_MAX {
            return Err(bad(format!(
                "the link is {} bytes long; links are read up to {LINK_BYTES_MAX}",
                query.len()
            )));
        }
        let mut version = None;
        let mut file = None;
        let mut edits = Vec::new();
        let mut custom = None;
        let mut json = None;
        let mut link = Link {
            version: 0,
            source: Source::Custom {
                toml: String::new(),
            },
            playhead_us: 0,
            zoom: 1,
            own_order: false,
            compare: None,
            digest: None,
        };
        let mut digest = None;
        for field in query.split('&').filter(|f| !f.is_empty()) {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| bad(format!("the field \"{}\" has no value", clip(field))))?;
            let number = |what: &str| -> Result<u64, LinkError> {
                value
                    .parse()
                    .map_err(|_| bad(format!("{what} \"{}\" is not a number", clip(value))))
            };
            match key {
                "v" => version = Some(number("the version")? as u32),
                "b" => file = Some(unescape(value)?),
                "e" => {
                    if edits.len() == LINK_EDITS_MAX {
                        return Err(bad(format!(
                            "the link has more than {LINK_EDITS_MAX} changes"
                        )));
                    }
                    let line = unescape(value)?;
                    edits.push(
                        line.parse::<Edit>()
                            .map_err(|e| bad(format!("the change \"{}\": {e}", clip(&line))))?,
                    );
                }
                "c" => custom = Some(unpack(value)?),
                "j" => json = Some(unpack(value)?),
                "t" => {
                    link.playhead_us = value.parse().map_err(|_| {
                        bad(format!(
                            "the playhead \"{}\" is not a whole number of microseconds",
                            clip(value)
                        ))
                    })?
                }
                "z" => link.zoom = number("the zoom")?.clamp(1, 64) as u32,
                "o" => link.own_order = value == "1",
                "f" => {
                    let line = unescape(value)?;
                    link.compare = Some(
                        line.parse::<Edit>()
                            .map_err(|e| bad(format!("the compared change: {e}")))?,
                    );
                }
                "d" => {
                    // A digest is written with all its 16 digits: a shorter one is a
                    // truncated copy, not a different run.
                    if value.len() != 16 {
                        return Err(bad(format!(
                            "the digest \"{}\" is not 16 hexadecimal digits",
                            clip(value)
                        )));
                    }
                    digest = Some(u64::from_str_radix(value, 16).map_err(|_| {
                        bad(format!("the digest \"{}\" is not hexadecimal", clip(value)))
                    })?)
                }
                other => {
                    return Err(bad(format!(
                        "the link has an unknown field \"{}\"",
                        clip(other)
                    )))
                }
            }
        }
        // A link written by hand may leave out the version (it is this one) and the digest.
        link.version = version.unwrap_or(LINK_VERSION);
        link.digest = digest;
        link.source = match (file, custom, json) {
            (Some(file), None, None) => Source::Builtin { file, edits },
            (None, Some(toml), None) if edits.is_empty() => Source::Custom { toml },
            (None, None, Some(json)) if edits.is_empty() => Source::Json { json },
            (None, None, None) => return Err(bad("the link names no scenario (b=, c= or j=)")),
            _ => return Err(bad("the link has more than one scenario")),
        };
        Ok(link)
    }

    /// Reads a whole fragment (`#/run?…`, with or without the `#`).
    pub fn from_fragment(fragment: &str) -> Result<Link, LinkError> {
        let f = fragment.strip_prefix('#').unwrap_or(fragment);
        let query = f
            .strip_prefix("/run?")
            .ok_or_else(|| bad("the link does not start with #/run?"))?;
        Link::from_query(query)
    }
}

/// At most 40 characters of untrusted text, for an error message.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// The run a scenario file shows with `edits` made with the controls, and the link to it: a
/// shipped scenario travels as its name, its own differences and the edits; any other as JSON,
/// the form every view reads. What the command line's embed snippet and the mdBook
/// preprocessor both make.
pub fn linked_run(
    file: &str,
    scenario: &Scenario,
    edits: Vec<Edit>,
    playhead_us: u64,
) -> Result<(Scenario, crate::ui::Outcome, Link), String> {
    if let Some(why) = edits.iter().find_map(|e| e.problem(scenario)) {
        return Err(why);
    }
    let edited = apply_edits(scenario, &edits);
    edited
        .validate()
        .map_err(|e| format!("the edits make the scenario invalid: {e}"))?;
    let outcome = crate::ui::Outcome::compute(&edited).map_err(|errors| {
        errors
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let source = match source_of(file, scenario) {
        Source::Builtin {
            file,
            edits: mut own,
        } => {
            own.extend(edits);
            Source::Builtin { file, edits: own }
        }
        other => other.for_embed(&edited),
    };
    let link = Link {
        version: LINK_VERSION,
        source,
        playhead_us,
        zoom: 1,
        own_order: false,
        compare: None,
        digest: Some(crate::trace::digest(&outcome.events)),
    };
    Ok((edited, outcome, link))
}
