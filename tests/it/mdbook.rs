//! The mdBook preprocessor through the command line, speaking mdBook's protocol (JSON on
//! standard input and output), so it is tested without mdBook.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use serde_json::{json, Value};

fn mdbook(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .arg("mdbook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the lockstep binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("the book is written");
    child.wait_with_output().expect("it ends")
}

/// mdBook's input: the context (renderer, book.toml) and a book of one chapter with a
/// sub-chapter, in the shape of `key` (`sections` in mdBook 0.4, `items` later).
fn input(renderer: &str, site: Option<&str>, key: &str, content: &str, sub: &str) -> String {
    let mut config = json!({"book": {"title": "Docs"}});
    if let Some(site) = site {
        config["preprocessor"] = json!({"lockstep": {"site": site}});
    }
    let chapter = |name: &str, content: &str, subs: Vec<Value>| {
        json!({"Chapter": {"name": name, "content": content, "number": [1], "sub_items": subs,
            "path": "c.md", "source_path": "c.md", "parent_names": []}})
    };
    let book = json!({
        key: [chapter("Locks", content, vec![chapter("More", sub, vec![])]), "Separator"],
    });
    json!([{"root": "/b", "config": config, "renderer": renderer, "mdbook_version": "0.4.40"}, book])
        .to_string()
}

const BLOCK: &str = "# Fencing\n\nBefore.\n\n```lockstep\nscenario = \"05-fencing.toml\"\nedits = [\"fencing accounts one_source all_accesses\"]\ncontrols = [\"fencing accounts\"]\ncaption = \"The stale write, refused.\"\n```\n\nAfter.\n";

fn chapter(book: &Value, key: &str) -> (String, String) {
    let c = &book[key][0]["Chapter"];
    (
        c["content"].as_str().unwrap().to_string(),
        c["sub_items"][0]["Chapter"]["content"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// The digest the engine gives the block's run.
fn engine_digest() -> String {
    let s = lockstep::Scenario::from_toml_str(
        lockstep::builtin::find("05-fencing.toml").unwrap().toml(),
    )
    .unwrap();
    let s = lockstep::lesson::apply_edits(
        &s,
        &["fencing accounts one_source all_accesses".parse().unwrap()],
    );
    let o = lockstep::ui::Outcome::compute(&s).unwrap();
    format!("{:016x}", lockstep::trace::digest(&o.events))
}

#[test]
fn it_supports_every_renderer() {
    for r in ["html", "markdown", "epub"] {
        assert_eq!(mdbook(&["supports", r], "").status.code(), Some(0));
    }
    assert_eq!(mdbook(&["frobnicate"], "").status.code(), Some(2));
}

#[test]
fn a_block_becomes_the_live_run_for_html_with_its_picture_for_readers_without_script() {
    for key in ["sections", "items"] {
        let sub = "A sub-chapter.\n\n```lockstep\nscenario = \"01-two-services.toml\"\n```\n";
        let out = mdbook(
            &[],
            &input(
                "html",
                Some("https://example.org/lockstep"),
                key,
                BLOCK,
                sub,
            ),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let book: Value = serde_json::from_slice(&out.stdout).expect("a book");
        assert_eq!(book[key][1], "Separator", "the rest of the book is kept");
        let (content, sub) = chapter(&book, key);
        assert!(content.starts_with("# Fencing\n\nBefore.\n\n<div class=\"lockstep-embed\">"));
        assert!(content.ends_with("\nAfter.\n"), "{content}");
        assert!(!content.contains("```lockstep"));
        assert!(content.contains(
            "src=\"https://example.org/lockstep/#/embed?v=1&amp;b=05-fencing.toml&amp;e=fencing%20accounts%20one_source%20all_accesses"
        ));
        assert!(content.contains(&format!("d={}", engine_digest())));
        assert!(content.contains("controls=fencing%20accounts"));
        assert!(content.contains("<script src=\"https://example.org/lockstep/embed-size.js\""));
        // The picture for readers without script is the run's SVG, with the run inside.
        let b64 = content
            .split("data:image/svg+xml;base64,")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("the picture");
        let svg = String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("lockstep-run"));
        assert!(sub.contains("b=01-two-services.toml"), "sub-chapters too");
    }
}

#[test]
fn other_renderers_get_the_picture_and_a_link() {
    let out = mdbook(
        &[],
        &input(
            "markdown",
            Some("https://example.org/lockstep/"),
            "sections",
            BLOCK,
            "",
        ),
    );
    assert_eq!(out.status.code(), Some(0));
    let book: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (content, _) = chapter(&book, "sections");
    assert!(!content.contains("<iframe"));
    assert!(content.contains("<img class=\"lockstep-picture\""));
    assert!(content
        .contains("[See the run live](https://example.org/lockstep/#/run?v=1&b=05-fencing.toml"));
}

#[test]
fn a_whole_scenario_block_takes_its_options_from_an_embed_table() {
    let scenario = lockstep::builtin::find("06-partition.toml").unwrap().toml();
    let content = format!(
        "```lockstep\n{scenario}\n[embed]\nseed = 3\ncontrols = [\"partition\"]\ntheme = \"dark\"\nid = \"fig-6\"\n```\n"
    )
    .replace("name = \"A partition between two regions\"", "name = \"Our regions\"");
    let out = mdbook(
        &[],
        &input("html", Some("https://e.org/"), "sections", &content, ""),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let book: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (content, _) = chapter(&book, "sections");
    // Not a built-in any more: the scenario travels as JSON, the form the embed reads.
    assert!(content.contains("&amp;j="), "{content:.300}");
    assert!(content.contains("theme=dark") && content.contains("controls=partition"));
    assert!(content.contains("&amp;id=fig-6"), "{content}");
    assert!(content.contains("title=\"Lockstep: Our regions\""));
}

#[test]
fn a_block_that_cannot_be_shown_fails_the_build_with_its_chapter_and_line() {
    for (content, site, why) in [
        (
            "x\n```lockstep\nscenario = \"99-nope.toml\"\n```\n",
            Some("https://e.org/"),
            "line 2: \"99-nope.toml\" is not a built-in scenario",
        ),
        (
            "```lockstep\nscenario = \"05-fencing.toml\"\nedits = [\"fly away\"]\n```\n",
            Some("https://e.org/"),
            "edit \"fly away\"",
        ),
        (
            "```lockstep\nscenario = \"05-fencing.toml\"\ncontrols = [\"teleport\"]\n```\n",
            Some("https://e.org/"),
            "unknown control",
        ),
        (
            "```lockstep\nscenario = \"05-fencing.toml\"\ncolour = 1\n```\n",
            Some("https://e.org/"),
            "colour",
        ),
        (
            "```lockstep\nscenario = \"05-fencing.toml\"\n",
            Some("https://e.org/"),
            "not closed",
        ),
        (
            "```lockstep\nscenario = \"05-fencing.toml\"\n```\n",
            None,
            "[preprocessor.lockstep] site",
        ),
    ] {
        let out = mdbook(&[], &input("html", site, "sections", content, ""));
        assert_eq!(out.status.code(), Some(2), "{why}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("chapter \"Locks\"") && err.contains(why),
            "{why}: {err}"
        );
    }
    let out = mdbook(&[], "not json");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not mdBook's input"));
}
