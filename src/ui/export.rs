//! What leaves the app, and what comes back in: the timeline as SVG (and PNG, which the browser
//! draws and this module stamps), the trace as versioned JSON, the verdict as Markdown, and the
//! reading of any of these, or a scenario file, back into a scenario.
//!
//! The command line (`lockstep export`) and the page call the same functions on the same
//! [`Outcome`], so their files are equal byte for byte for the same scenario and seed.
//!
//! Every exported picture and trace carries its run as a small JSON document, [`RunMeta`]:
//! `{"format":"lockstep-run","version":1,"seed":…,"digest":"…","scenario":"<TOML>"}`. In SVG it
//! is the text of `<metadata id="lockstep-run">`; in PNG it is an `iTXt` chunk with the keyword
//! `lockstep-run`; in the trace JSON it is the top-level object itself.

use serde::{Deserialize, Serialize};

use crate::scenario::{limits, Scenario};
use crate::trace;
use crate::ui::svg::{self, xml_escape};
use crate::ui::Outcome;

/// The name of the run metadata format, in every exported file.
pub const RUN_FORMAT: &str = "lockstep-run";
/// The version of the exported formats (the metadata and the trace JSON).
pub const EXPORT_VERSION: u32 = 1;
/// The PNG chunk keyword that carries the run.
pub const PNG_KEYWORD: &str = "lockstep-run";
/// The largest file read back in: a scenario file's limit plus room for a picture around it.
pub const IMPORT_BYTES_MAX: usize = 16 * limits::TEXT_BYTES_MAX;

/// A run, as exported files carry it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    pub format: String,
    pub version: u32,
    pub seed: u64,
    /// The trace digest, 16 hexadecimal digits.
    pub digest: String,
    /// The scenario, as canonical TOML.
    pub scenario: String,
    /// Where the playhead was when the picture was made (microseconds); importing the file
    /// puts it there again. Files from before it was kept have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playhead_us: Option<u64>,
}

impl RunMeta {
    pub fn of(scenario: &Scenario, outcome: &Outcome) -> RunMeta {
        RunMeta {
            format: RUN_FORMAT.to_string(),
            version: EXPORT_VERSION,
            seed: outcome.seed,
            digest: format!("{:016x}", outcome.digest),
            scenario: scenario.to_toml_string(),
            playhead_us: None,
        }
    }

    /// The metadata of a picture made with the playhead at `t`.
    pub fn at(mut self, t: u64) -> RunMeta {
        self.playhead_us = Some(t);
        self
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("metadata always serializes")
    }
}

/// The trace as JSON: the run's metadata, the counts a reader checks first, and every event in
/// the engine's own serialized form (the form `lockstep run --json` prints, and the trace
/// digest is computed over).
pub fn trace_json(scenario: &Scenario, outcome: &Outcome) -> String {
    #[derive(Serialize)]
    struct TraceFile<'a> {
        #[serde(flatten)]
        meta: RunMeta,
        headline: &'a str,
        end_us: u64,
        truncated: bool,
        event_count: usize,
        events: &'a [trace::Event],
    }
    let file = TraceFile {
        meta: RunMeta::of(scenario, outcome),
        headline: &outcome.headline,
        end_us: outcome.end,
        truncated: outcome.verdict.truncated,
        event_count: outcome.events.len(),
        events: &outcome.events,
    };
    let mut text = serde_json::to_string_pretty(&file).expect("a trace always serializes");
    text.push('\n');
    text
}

/// The verdict as a short Markdown block for a design doc: the headline, the figures a reader
/// checks, and how to see the run again.
pub fn verdict_markdown(scenario: &Scenario, outcome: &Outcome, link: Option<&str>) -> String {
    let v = &outcome.verdict;
    let md = |t: &str| {
        t.replace('\\', "\\\\")
            .replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('*', "\\*")
            .replace('_', "\\_")
            .replace('[', "\\[")
            .replace(']', "\\]")
    };
    let mut out = String::new();
    out.push_str(&format!(
        "**{}** (seed {}, {} events)\n\n",
        md(&scenario.name),
        outcome.seed,
        outcome.events.len()
    ));
    out.push_str(&format!("> {}\n\n", md(&outcome.headline)));
    out.push_str("| figure | value |\n|---|---|\n");
    let rows: [(&str, String); 7] = [
        ("overlapping holds", v.violation_count.to_string()),
        ("lost updates", v.lost_updates.to_string()),
        ("writes rejected by fencing", v.rejected_writes.to_string()),
        (
            "writes inside another's critical section",
            v.interleaved_writes.to_string(),
        ),
        (
            "deadlock across services",
            if v.deadlock { "yes" } else { "no" }.to_string(),
        ),
        ("wait-for cycles", v.wait_cycle_count.to_string()),
        (
            "each service's own log consistent",
            if v.service_logs.iter().all(|l| l.consistent) {
                "yes"
            } else {
                "no"
            }
            .to_string(),
        ),
    ];
    for (k, val) in rows {
        out.push_str(&format!("| {k} | {val} |\n"));
    }
    out.push_str(&format!("\nTrace digest `{:016x}`.", outcome.digest));
    match link {
        Some(link) => out.push_str(&format!(" [Open this run in Lockstep]({link})\n")),
        None => out.push_str(&format!(
            " Reproduce with `lockstep run FILE --seed {}`.\n",
            outcome.seed
        )),
    }
    out
}

/// The timeline as SVG, carrying its run.
pub fn timeline_svg(scenario: &Scenario, outcome: &Outcome, link: Option<&str>) -> String {
    timeline_svg_with(scenario, outcome, &RunMeta::of(scenario, outcome), link)
}

/// [`timeline_svg`] carrying the given metadata (the page's, with its playhead).
pub fn timeline_svg_with(
    scenario: &Scenario,
    outcome: &Outcome,
    meta: &RunMeta,
    link: Option<&str>,
) -> String {
    svg::timeline_svg(&scenario.name, outcome, &xml_escape(&meta.to_json()), link)
}

/// [`timeline_svg`] drawn `width` pixels wide (see [`svg::timeline_svg_at`]).
pub fn timeline_svg_at(
    scenario: &Scenario,
    outcome: &Outcome,
    link: Option<&str>,
    width: u32,
) -> String {
    let meta = RunMeta::of(scenario, outcome);
    svg::timeline_svg_at(
        &scenario.name,
        outcome,
        &xml_escape(&meta.to_json()),
        link,
        width,
    )
}

/// CRC-32 (IEEE), as PNG chunks use it.
fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for part in parts {
        for &b in *part {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
    }
    !crc
}

const PNG_SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// A PNG chunk: its type and its data.
type Chunk<'a> = ([u8; 4], &'a [u8]);

/// The chunks of a PNG file, or why it is not one.
fn png_chunks(png: &[u8]) -> Result<Vec<Chunk<'_>>, String> {
    if png.len() < 8 || &png[..8] != PNG_SIGNATURE {
        return Err("not a PNG file".into());
    }
    let mut chunks = Vec::new();
    let mut at = 8;
    while at < png.len() {
        let header = png
            .get(at..at + 8)
            .ok_or_else(|| format!("a chunk header is cut off at byte {at}"))?;
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let kind = [header[4], header[5], header[6], header[7]];
        let data = png
            .get(at + 8..at + 8 + len)
            .ok_or_else(|| format!("a chunk is cut off at byte {at}"))?;
        let crc = png
            .get(at + 8 + len..at + 12 + len)
            .ok_or_else(|| format!("a chunk's checksum is cut off at byte {at}"))?;
        if u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]) != crc32(&[&kind, data]) {
            return Err(format!("the chunk at byte {at} fails its checksum"));
        }
        chunks.push((kind, data));
        at += 12 + len;
        if &kind == b"IEND" {
            break;
        }
    }
    Ok(chunks)
}

/// A PNG with an uncompressed `iTXt` chunk (`keyword`, UTF-8 `text`) inserted after its header,
/// replacing any chunk with the same keyword.
pub fn png_with_text(png: &[u8], keyword: &str, text: &str) -> Result<Vec<u8>, String> {
    let chunks = png_chunks(png)?;
    let mut out = PNG_SIGNATURE.to_vec();
    let mut data = Vec::with_capacity(keyword.len() + 5 + text.len());
    data.extend_from_slice(keyword.as_bytes());
    // Null separator, no compression, method 0, empty language tag, empty translated keyword.
    data.extend_from_slice(&[0, 0, 0, 0, 0]);
    data.extend_from_slice(text.as_bytes());
    let mut put = |kind: &[u8; 4], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32(&[kind, data]).to_be_bytes());
    };
    for (i, (kind, chunk)) in chunks.iter().enumerate() {
        if &kind[..] == b"iTXt" && itxt(chunk).is_some_and(|(k, _)| k == keyword) {
            continue;
        }
        put(kind, chunk);
        if i == 0 {
            put(b"iTXt", &data);
        }
    }
    Ok(out)
}

/// An uncompressed `iTXt` chunk's keyword and text.
fn itxt(data: &[u8]) -> Option<(&str, &str)> {
    let nul = data.iter().position(|b| *b == 0)?;
    let keyword = std::str::from_utf8(&data[..nul]).ok()?;
    let rest = data.get(nul + 1..)?;
    let (&compressed, rest) = rest.split_first()?;
    if compressed != 0 {
        return None;
    }
    let rest = rest.get(1..)?;
    let lang_end = rest.iter().position(|b| *b == 0)?;
    let rest = &rest[lang_end + 1..];
    let translated_end = rest.iter().position(|b| *b == 0)?;
    let text = std::str::from_utf8(&rest[translated_end + 1..]).ok()?;
    Some((keyword, text))
}

/// The text a PNG carries under `keyword`, if any.
pub fn png_text(png: &[u8], keyword: &str) -> Result<Option<String>, String> {
    Ok(png_chunks(png)?
        .into_iter()
        .filter(|(kind, _)| kind == b"iTXt")
        .find_map(|(_, data)| {
            itxt(data)
                .filter(|(k, _)| *k == keyword)
                .map(|(_, t)| t.to_string())
        }))
}

/// What an imported file turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub scenario: Scenario,
    /// The digest the file recorded for its run, when it was an export.
    pub digest: Option<String>,
    /// The playhead the file recorded, when it was a picture made by the page.
    pub playhead_us: Option<u64>,
    /// What kind of file it was, for the user: "scenario (TOML)", "timeline (SVG)", ….
    pub kind: &'static str,
    /// The run itself, when the file was a recording from real services: it is shown as it
    /// is, since nothing can run it again.
    pub recording: Option<super::RecordingFile>,
}

fn xml_unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn from_meta(json: &str, kind: &'static str) -> Result<Imported, String> {
    let meta: RunMeta =
        serde_json::from_str(json).map_err(|e| format!("its run metadata cannot be read: {e}"))?;
    if meta.format != RUN_FORMAT {
        return Err(format!(
            "its metadata is \"{}\", not {RUN_FORMAT}",
            meta.format
        ));
    }
    let mut scenario = Scenario::from_toml_str(&meta.scenario)
        .map_err(|e| format!("the scenario inside it is not valid: {e}"))?;
    scenario.seed = meta.seed;
    Ok(Imported {
        scenario,
        digest: Some(meta.digest),
        playhead_us: meta.playhead_us,
        kind,
        recording: None,
    })
}

/// Reads a file the user imports: a scenario (TOML or JSON), an exported trace (JSON), an
/// exported timeline (SVG) or picture (PNG). Errors say what the file was taken for and where
/// it went wrong; a scenario's own errors keep their line and column.
pub fn import(bytes: &[u8]) -> Result<Imported, String> {
    if bytes.len() > IMPORT_BYTES_MAX {
        return Err(format!(
            "the file is {} bytes; files are read up to {IMPORT_BYTES_MAX}",
            bytes.len()
        ));
    }
    if bytes.starts_with(PNG_SIGNATURE) {
        let text = png_text(bytes, PNG_KEYWORD)?
            .ok_or("this PNG carries no Lockstep run (it was not exported by Lockstep)")?;
        return from_meta(&text, "picture (PNG)");
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "byte {} is not valid UTF-8; a scenario must be UTF-8 text",
            e.valid_up_to()
        )
    })?;
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('<') {
        let open = "<metadata id=\"lockstep-run\">";
        let start = text
            .find(open)
            .ok_or("this SVG carries no Lockstep run (it was not exported by Lockstep)")?
            + open.len();
        let end = text[start..]
            .find("</metadata>")
            .ok_or("the SVG's run metadata is not closed")?;
        return from_meta(&xml_unescape(&text[start..start + end]), "timeline (SVG)");
    }
    if trimmed.starts_with('{') {
        // An exported trace is a JSON object with the run's metadata at the top.
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
            // A recording (`lockstep record --json`) is the run's document with a "recorded"
            // member: its trace is the run.
            if value.get("recorded").is_some() {
                let recording = crate::recording::Recording::parse(trimmed)?;
                return Ok(Imported {
                    scenario: recording.source.scenario.clone(),
                    digest: None,
                    playhead_us: None,
                    kind: "recording from real services (JSON)",
                    recording: Some(super::RecordingFile(std::sync::Arc::new(recording))),
                });
            }
            if value.get("format").and_then(|f| f.as_str()) == Some(RUN_FORMAT) {
                let meta = RunMeta::deserialize(&value)
                    .map_err(|e| format!("its run metadata cannot be read: {e}"))?;
                return from_meta(
                    &serde_json::to_string(&meta).unwrap_or_default(),
                    "trace (JSON)",
                );
            }
        }
        return Scenario::from_json_str(trimmed)
            .map(|scenario| Imported {
                scenario,
                digest: None,
                playhead_us: None,
                kind: "scenario (JSON)",
                recording: None,
            })
            .map_err(|e| e.to_string());
    }
    Scenario::from_toml_str(text)
        .map(|scenario| Imported {
            scenario,
            digest: None,
            playhead_us: None,
            kind: "scenario (TOML)",
            recording: None,
        })
        .map_err(|e| e.to_string())
}
